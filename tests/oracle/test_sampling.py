"""Class ``sampling``: clusters where upstream samples, against upstream's recorded answers.

``tests/oracle/recorded_named/sampling.jsonl.gz`` holds 16 scenarios of the named-only class
``sampling``, the first from seed 24015950 on with at most 220 nodes (24015950, 24015953,
24015966, 24015968, 24015975, 24015978, 24015980, 24015981, 24015992, 24015993, 24015997, 24016005,
24016011, 24016013, 24016014, 24016025; small clusters keep the file small), on which
kube-scheduler v1.37.2 and fastsched agreed (the class draws 100-600 nodes),
``percentageOfNodesToScore`` in the configuration (unset, 0 = adaptive, 1-100) and in some
profiles, ``parallelism: 1``, incoming pods in sequence (the start index carries across cycles),
infeasible nodes the search walks past, pods that fit nowhere (a FitError over every node), and
preemptors attempted again while nominated (evaluateNominatedNode: the nominated node first, the
full sampled search when it is rejected). Beyond the plain classes' fields, each attempt compares
``evaluated_nodes`` and ``next_start`` (:data:`fastsched.testing.oracle.SAMPLING_FIELDS`). The
oracle's retelling is ``sampling`` in ``oracle/main.go``. Each replays through fastsched without Go;
the tests below plant fastsched's bugs of this area and see the recorded set catch them.
"""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from fastsched.scheduler import schedule_one
from fastsched.scheduler.schedule_one import ScheduleOneMixin
from fastsched.testing import oracle
from fastsched.testing.oracle_scenarios import CLASSES, NAMED_CLASSES, generate

RECORDS = oracle.read_recorded(Path(__file__).parent / "recorded_named" / "sampling.jsonl.gz")


def _differences(rec: dict) -> list:
    sc = rec["scenario"]
    return oracle.compare(oracle.run_fastsched(sc, sc["replay"])["attempts"], rec["attempts"])


def _retries(rec: dict) -> list[tuple[dict, str]]:
    """The attempts of pods attempted again while nominated, with the node they were nominated to."""
    out, nominated = [], {}
    for at in rec["attempts"]:
        if nominated.get(at["pod"]):
            out.append((at, nominated[at["pod"]]))
        nominated[at["pod"]] = at.get("nominated_node", "")
    return out


def _rejected_nominated(rec: dict) -> bool:
    return any(nnn in at.get("filter", {}) for at, nnn in _retries(rec))


def test_fastsched_agrees_with_the_recorded_oracle_where_upstream_samples():
    assert "sampling" in NAMED_CLASSES and "sampling" not in CLASSES  # only when named
    assert all(r["scenario"]["sampling"] and r["scenario"]["config"]["parallelism"] == 1
               and 100 <= len(r["scenario"]["nodes"]) <= 600 for r in RECORDS)
    # the set reaches what it is for: percentages of every kind, searches cut short by the sampled
    # count, a start index that moves, FitErrors over every node, retries of nominated pods
    # (bound on their node, and their node rejected)
    pcts = {r["scenario"]["config"].get("percentageOfNodesToScore") for r in RECORDS}
    assert None in pcts and 0 in pcts and len(pcts) > 4
    assert any("percentageOfNodesToScore" in r["scenario"]["config"]["profiles"][0] for r in RECORDS)
    attempts = [(a, len(r["scenario"]["nodes"])) for r in RECORDS for a in r["attempts"]]
    assert sum(1 for a, n in attempts if a.get("feasible") and a.get("evaluated_nodes", 0) < n) > 50
    assert len({a.get("next_start", 0) for a, _ in attempts}) > 20
    assert sum(1 for a, n in attempts if a.get("fit_error") and a.get("evaluated_nodes") == n) > 20
    assert any("plugins" in r["scenario"]["config"]["profiles"][0] for r in RECORDS)  # no Score plugin
    retries = [x for r in RECORDS for x in _retries(r)]
    assert sum(at.get("selected") == nnn for at, nnn in retries) > 5
    assert sum(1 for r in RECORDS if _rejected_nominated(r)) >= 2
    failures = [f"{r['scenario']['id']}: {json.dumps(d[:2])[:600]}" for r in RECORDS if (d := _differences(r))]
    assert not failures, f"{len(failures)} of {len(RECORDS)} scenarios differ:\n" + "\n".join(failures[:10])


def test_the_sampling_fields_are_compared():
    """A recorded answer with another start index or evaluated count is a difference; a zero the
    recorded (compacted) answer dropped equals fastsched's 0."""
    rec = next(r for r in RECORDS if any(a.get("next_start") for a in r["attempts"]))
    mine = oracle.run_fastsched(rec["scenario"], rec["scenario"]["replay"])["attempts"]
    assert not oracle.compare(mine, rec["attempts"])
    i = next(i for i, a in enumerate(rec["attempts"]) if a.get("next_start"))
    for field in oracle.SAMPLING_FIELDS:
        changed = json.loads(json.dumps(rec["attempts"]))
        changed[i][field] = changed[i].get(field, 0) + 1
        assert [d["field"] for d in oracle.compare(mine, changed)] == [field]
    # (the recorded answers drop zeros: some start index is 0, which agrees with fastsched's 0)
    assert any("next_start" not in a for r in RECORDS for a in r["attempts"])


def test_a_search_past_the_sampled_count_is_caught(monkeypatch):
    """numFeasibleNodesToFind ignored (every node examined): the feasible nodes, the evaluated
    count and the start index differ wherever a search found more than numFeasibleNodesToFind
    (at least 100) feasible nodes: 5 of the 16 small clusters."""
    monkeypatch.setattr(schedule_one, "num_feasible_nodes_to_find", lambda pct, n: n)
    assert sum(bool(_differences(r)) for r in RECORDS) >= 4


def test_a_start_index_not_carried_across_cycles_is_caught(monkeypatch):
    """Each search from the snapshot's first node (nextStartNodeIndex not kept): caught."""
    search = ScheduleOneMixin._find_nodes_that_pass_filters

    def from_zero(self, *args, **kw):
        self.next_start_node_index = 0
        return search(self, *args, **kw)

    monkeypatch.setattr(ScheduleOneMixin, "_find_nodes_that_pass_filters", from_zero)
    assert sum(bool(_differences(r)) for r in RECORDS) > len(RECORDS) // 2


def test_a_retry_judges_its_nominated_node_first(monkeypatch):
    """evaluateNominatedNode: a retried pod whose nominated node fits is placed there with one node
    evaluated (no search, the start index unmoved); searching all nodes instead is caught."""
    recs = [r for r in RECORDS if any(at.get("selected") == nnn for at, nnn in _retries(r))]
    assert recs and all(at.get("evaluated_nodes") == 1 for r in recs for at, nnn in _retries(r)
                        if at.get("selected") == nnn)
    original = ScheduleOneMixin._find_nodes_that_fit_pod

    def no_nominated_first(self, fw, state, pod, *args, **kw):
        saved, pod.nominated_node_name = pod.nominated_node_name, ""
        try:
            return original(self, fw, state, pod, *args, **kw)
        finally:
            pod.nominated_node_name = saved

    monkeypatch.setattr(ScheduleOneMixin, "_find_nodes_that_fit_pod", no_nominated_first)
    assert all(_differences(r) for r in recs)


@pytest.mark.parametrize("index", [0, -1])
def test_the_generator_is_the_recorded_one(index):
    rec = RECORDS[index]
    want = {k: v for k, v in rec["scenario"].items() if k not in ("replay", "replay_nominated")}
    assert generate("sampling", rec["scenario"]["seed"]) == want
