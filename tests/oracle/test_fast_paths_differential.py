"""The differential's fast-path comparison (``fastsched differential --fast-paths``), without Go.

Recorded scenarios (the oracle agreed with fastsched's recorded run on them) run through
:func:`fastsched.testing.oracle.check_fast_paths` / :func:`~fastsched.testing.oracle_groups.check_fast_paths_groups`:
a plain Scheduler with the fast paths on must give every pod and pod group the recorded run's
outcome, and the fast paths must really have served (the spies' counts). A mutant planted in the
compiled cycle only (its tie draw) must be reported.
"""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from fastsched.runtime import compiled_cycle
from fastsched.scheduler import schedule_one
from fastsched.testing import oracle, oracle_groups
from fastsched.testing.oracle_fast import FastPathStats, compare_outcomes

HERE = Path(__file__).parent
#: scenarios per class (the suite's time: each runs twice, recorded and fast)
PER_CLASS = 2
PLAIN = {cls: oracle.read_recorded(HERE / "recorded" / f"{cls}.jsonl.gz")[:PER_CLASS] for cls in sorted(oracle.CLASSES)}
GANGS = {path.name.removesuffix(".jsonl.gz"): oracle.read_recorded(path)[:PER_CLASS]
         for path in sorted((HERE / "recorded_gangs").glob("*.jsonl.gz"))}


def _fail(sc: dict, diffs: list[dict]) -> str:
    d = diffs[0]
    return f"{sc['id']}: {d.get('pod') or d.get('group')} {d['field']}: fast {d['fastsched']!r} recorded {d['oracle']!r}"


def test_plain_classes_fast_paths_agree_and_serve():
    stats = FastPathStats()
    failures = [_fail(rec["scenario"], d) for recs in PLAIN.values() for rec in recs
                if (d := oracle.check_fast_paths(rec["scenario"], None, None, stats))]
    assert not failures, "\n".join(failures)
    # the fast run is not the recorded run again: the compiled cycle and commits served most of it
    assert stats.cycles > 100 and stats.compiled > stats.cycles // 2, stats
    assert stats.committed > stats.bound // 2, stats


def test_gang_classes_fast_paths_agree_and_serve():
    assert len(GANGS) >= 7, sorted(GANGS)
    stats = FastPathStats()
    failures = [_fail(rec["scenario"], d) for recs in GANGS.values() for rec in recs
                if (d := oracle_groups.check_fast_paths_groups(rec["scenario"], None, stats))]
    assert not failures, "\n".join(failures)
    assert stats.compiled > stats.cycles // 2 and stats.bound > 0, stats
    # (the gang runs, place_run, serve none of these older scenarios: their members' labels
    # differ, so their spec objects are not shared; GANG_RUNS below has Job-shaped groups)
    assert stats.permit_runs > 0 and stats.commit_run_pods > 0, stats


def test_a_tie_flipped_in_the_compiled_cycle_only_is_reported(monkeypatch):
    """The mutant: the compiled cycle's tie draws made in Python (no capsule: the kernel leaves
    ties to ``seeded_tie``), which takes the draw and then the next tie; the plugin-call path's
    ``_select_host`` (the recorded run's) is untouched: schedule_one imported its ``seeded_tie``
    before the patch (imported after it, both paths would flip alike and nothing would differ)."""
    def flipped(totals, n, best, ties, rng):
        k = (int(rng.integers(ties)) + 1) % ties
        return int(compiled_cycle.np.flatnonzero(totals[:n] == best)[k])

    monkeypatch.setattr(compiled_cycle, "seeded_tie", flipped)
    monkeypatch.setattr(compiled_cycle.CompiledCycle, "_capsule_for",
                        lambda self, rng: setattr(self, "_capsule_rng", None) or None)
    # the plugin-call path's _select_host keeps its own name (imported before the patch)
    assert schedule_one.seeded_tie is not flipped
    recs = PLAIN["resources"] + PLAIN["spread"]
    found = [d for rec in recs if (d := oracle.check_fast_paths(rec["scenario"]))]
    assert found and all(d[0]["field"].startswith("fast-path:") for d in found), found


@pytest.mark.parametrize("fast, recorded, field", [
    ({"pod": "d/a", "status": "Scheduled", "node": "n1"}, {"pod": "d/a", "status": "Scheduled", "node": "n2"},
     "fast-path:node"),
    ({"pod": "d/a", "status": "Unschedulable", "message": "x"}, {"pod": "d/a", "status": "Unschedulable",
                                                                 "message": "y"}, "fast-path:message"),
    ({"group": "d/g", "condition": ["True", "Scheduled", ""]}, {"group": "d/g", "condition": None},
     "fast-path:condition"),
    ({"pod": "d/a"}, {"pod": "d/b"}, "fast-path:outcomes"),
])
def test_compare_outcomes_names_the_field(fast, recorded, field):
    assert compare_outcomes([fast], [recorded])[0]["field"] == field
    assert compare_outcomes([recorded], [recorded]) == []


def test_gangs_claims_61840035_shared_claim_postfilter_message():
    """``fastsched differential --fast-paths --class gangs-claims --seed 61840035`` (shrunk): the
    member pg-1-0's failure message. The compiled cycle's windows asked DynamicResources about a
    node NodeResourcesFit rejected first, which recorded the group's shared claim unavailable, so
    PodGroupPostFilter deallocated it where upstream (and the plugin calls) unreserve it; such a
    cycle now takes the plugin-call path (``filter_records_node_state``)."""
    sc = json.loads((HERE / "fast_paths" / "gangs-claims-61840035.json").read_text())
    assert oracle_groups.check_fast_paths_groups(sc) == []


#: recorded gang scenarios whose Job-shaped groups (members of one spec) the gang runs serve:
#: ``fastsched differential --class gangs --class gangs-policy --fast-paths --scenarios 25 --seed
#: 20118000 --record DIR``, the scenarios where ``place_run`` placed members; gangs-policy-20118017's
#: pg-2 preempts the gang pg-0 (its members placed by a run) and running groups, 20118020's pg-3 a pod
GANG_RUNS = oracle.read_recorded(HERE / "fast_paths" / "gang-runs.jsonl.gz")


def test_gang_runs_agree_with_the_oracle_and_the_recorded_run():
    """The oracle's recorded answers hold for the recorded run, and the fast run (the gang runs,
    the Permit run, ``commit_run``) gives every pod and group the recorded run's outcome; the runs
    really served: the members' spec objects are shared once queued, the namespace too (JSON
    gives each pod its own string)."""
    assert len(GANG_RUNS) == 5
    failures = [f"{rec['scenario']['id']}: {str(d)[:300]}" for rec in GANG_RUNS
                if (d := oracle_groups.check_recorded(rec))]
    assert not failures, "\n".join(failures)
    assert any(g.get("victims") and any(v.startswith("default/pg-") for v in g["victims"])
               for rec in GANG_RUNS for g in rec["groups"])  # a gang preempting a gang
    stats = FastPathStats()
    failures = [_fail(rec["scenario"], d) for rec in GANG_RUNS
                if (d := oracle_groups.check_fast_paths_groups(rec["scenario"], None, stats))]
    assert not failures, "\n".join(failures)
    assert stats.run_members >= 10 and stats.commit_run_pods >= 8 and stats.permit_runs >= 4, stats
