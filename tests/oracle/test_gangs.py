"""Pod groups (GenericWorkload) against the differential oracle: fastsched.testing.oracle_groups.

``recorded_gangs/gangs.jsonl.gz`` holds gang scenarios on which the oracle (upstream v1.37.2 with
``--feature-gates GenericWorkload=true``) and fastsched agreed when recorded (``fastsched differential
--class gangs --record DIR``); they run through fastsched again without Go. The live tests (skipped
without ``go``) build the oracle and compare fresh scenarios. The recorded set lives apart from
``recorded/`` (test_recorded.py wants exactly the default classes there).
"""
from __future__ import annotations

import collections
import copy
import json
import shutil
from pathlib import Path

import pytest

from fastsched.testing import oracle, oracle_groups
from fastsched.testing.oracle_groups import (GANG_CLASS, ORACLE_GATES, check_groups, check_recorded, compare_answer,
                                             compare_groups, generate_gangs, run_fastsched_groups)
from fastsched.testing.oracle_scenarios import CLASSES

RECORDED = Path(__file__).parent / "recorded_gangs" / f"{GANG_CLASS}.jsonl.gz"
ORACLE_DIR = Path(__file__).resolve().parents[2] / "oracle"
RECORDS = oracle.read_recorded(RECORDED)


def _outcomes(groups) -> collections.Counter:
    c: collections.Counter = collections.Counter()
    for g in groups:
        c["gated" if g.get("gated") else (g.get("status") or {}).get("code", "none")] += 1
    return c


# -- without the oracle ---------------------------------------------------------------------------------
def test_gang_class_is_not_a_default_class():
    """A default differential run (every class in CLASSES) stays as it was with the gate off."""
    assert GANG_CLASS not in CLASSES


def test_generator_is_deterministic_and_makes_pod_groups():
    assert generate_gangs(5) == generate_gangs(5)
    sc = generate_gangs(5)
    assert sc["config"] == oracle_groups.GANG_CONFIG
    pgs = [o for o in sc["objects"] if o["kind"] == "PodGroup"]
    members = [p for p in sc["incoming"] if p["spec"].get("schedulingGroup")]
    assert pgs and members
    running = {p["spec"]["schedulingGroup"]["podGroupName"] for p in sc["pods"] if p["spec"].get("schedulingGroup")}
    assert {p["spec"]["schedulingGroup"]["podGroupName"] for p in members} | running >= {
        pg["metadata"]["name"] for pg in pgs}


def test_generator_makes_preemption_cases():
    """Over a few seeds: running groups of a low priority (disruptionMode all among them), groups
    and plain pods of the highest priority, PDBs, and every pod going at once when preempted."""
    scs = [generate_gangs(seed) for seed in range(40)]
    pgs = [o for sc in scs for o in sc["objects"] if o["kind"] == "PodGroup"]
    assert any("all" in (pg["spec"].get("disruptionMode") or {}) for pg in pgs)
    assert any(p["metadata"]["name"].startswith("run-pg-") for sc in scs for p in sc["pods"])
    assert any(pg["spec"].get("priority") == 20 for pg in pgs)
    assert any(not p["spec"].get("schedulingGroup") and p["spec"].get("priority") == 20
               for sc in scs for p in sc["incoming"])
    assert any(o["kind"] == "PodDisruptionBudget" for sc in scs for o in sc["objects"])
    assert all(p["spec"]["terminationGracePeriodSeconds"] == 0 for sc in scs for p in sc["pods"] + sc["incoming"])
    # members' claims: one each, one the group shares, or both (the shared one first or last)
    shapes = {tuple("shared" if e["resourceClaimName"].endswith("-shared") else "own"
                    for e in p["spec"]["resourceClaims"])
              for sc in scs for p in sc["incoming"] if p["spec"].get("resourceClaims")}
    assert shapes == {("own",), ("shared",), ("shared", "own"), ("own", "shared")}
    for sc in scs:
        users: dict[str, set] = {}
        for p in sc["incoming"]:
            for e in p["spec"].get("resourceClaims") or ():
                users.setdefault(e["resourceClaimName"], set()).add(p["spec"]["schedulingGroup"]["podGroupName"])
        assert all(len(groups) == 1 for groups in users.values())  # shared within a group only
    assert all(p["spec"].get("schedulingGroup") for sc in scs for p in sc["incoming"] if p["spec"].get("resourceClaims"))


def test_fastsched_side_on_a_small_scenario():
    """Two members of a gang of 2 fit (bound, condition True); a gang of 3 whose members need more
    than the cluster has fails as a whole (no member bound; PlacementFeasible's reason, then
    workload-aware preemption's: the running gang has the same priority)."""
    sc = generate_gangs(0)
    node = copy.deepcopy(sc["nodes"][0])
    node["status"]["allocatable"]["cpu"] = node["status"]["capacity"]["cpu"] = "2"
    pg = lambda name, n: {"apiVersion": "scheduling.k8s.io/v1beta1", "kind": "PodGroup",  # noqa: E731
                          "metadata": {"name": name, "namespace": "default"},
                          "spec": {"schedulingPolicy": {"gang": {"minCount": n}}}}

    def pod(name, group, cpu):
        return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "default"},
                "spec": {"schedulingGroup": {"podGroupName": group},
                         "containers": [{"name": "c", "image": "x", "resources": {"requests": {"cpu": cpu}}}]}}

    sc = {**sc, "nodes": [node], "pods": [], "objects": [pg("a", 2), pg("b", 3)],
          "incoming": [pod("a-0", "a", "500m"), pod("a-1", "a", "500m"), pod("b-0", "b", "500m"),
                       pod("b-1", "b", "500m"), pod("b-2", "b", "500m")]}
    mine = run_fastsched_groups(sc)
    a, b = mine["groups"]
    assert a["bound"] == {"default/a-0": node["metadata"]["name"], "default/a-1": node["metadata"]["name"]}
    assert a["status"]["code"] == "Success" and a["condition"][:2] == ["True", "Scheduled"]
    assert b["bound"] == {} and b["status"]["code"] == "Unschedulable"
    pf = "pod group preemption: No preemption victims found for incoming preemptor"
    assert b["status"]["reasons"] == ["minCount (3) cannot be satisfied: 2 scheduled, 0 remaining", pf]
    assert b["condition"] == ["False", "Unschedulable", f"minCount (3) cannot be satisfied: 2 scheduled, 0 remaining, {pf}"]
    assert b["messages"]["default/b-0"] == ("pod group is unschedulable, minCount (3) cannot be satisfied: "
                                            f"2 scheduled, 0 remaining, {pf}")
    assert "victims" not in b and "nominated" not in b
    assert b["messages"]["default/b-2"].startswith("0/1 nodes are available: 1 Insufficient cpu.")


def test_comparison_finds_a_difference():
    rec = next(r for r in RECORDS if any(g.get("bound") for g in r["groups"]))
    mine = run_fastsched_groups(rec["scenario"])
    assert compare_answer(mine, rec["selected"], rec["groups"], rec["attempts"]) == []
    changed = copy.deepcopy(rec["groups"])
    g = next(g for g in changed if g.get("bound"))
    g["bound"] = {}
    (d,) = compare_groups(mine["groups"], changed)
    assert d["field"] == "bound" and d["oracle"] == {} and d["fastsched"]
    attempts = copy.deepcopy(rec["attempts"])
    at = next(a for a in attempts if a.get("total"))
    at["total"] = {n: t + 1 for n, t in at["total"].items()}
    (d,) = compare_answer(mine, rec["selected"], rec["groups"], attempts)
    assert (d["pod"], d["field"]) == (at["pod"], "total")
    selected = dict(rec["selected"], **{next(iter(rec["selected"])): "elsewhere"})
    (d,) = compare_answer(mine, selected, rec["groups"])
    assert d["field"] == "selected" and d["oracle"] == "elsewhere"


def test_recorded_set_covers_the_outcomes():
    assert len(RECORDS) >= 50
    c = _outcomes(g for r in RECORDS for g in r["groups"])
    assert c["Success"] > 20 and c["Unschedulable"] > 5 and c["Error"] > 5 and c["gated"] > 5, c
    assert sum(bool(v) for r in RECORDS for v in r["selected"].values()) > 100
    assert sum(not v for r in RECORDS for v in r["selected"].values()) > 10
    attempts = [a for r in RECORDS for a in r["attempts"]]  # the members' attempts, field by field
    assert sum(bool(a.get("scores")) for a in attempts) > 100
    assert sum(bool(a.get("fit_error")) for a in attempts) > 10
    groups = [g for r in RECORDS for g in r["groups"]]  # workload-aware preemption, its victims and nominations
    assert sum(bool(g.get("victims")) for g in groups) >= 5 and sum(bool(g.get("nominated")) for g in groups) >= 5
    assert sum(bool(r["scenario"].get("replay_rerun")) for r in RECORDS) >= 5
    assert sum(bool(a.get("claim_allocations")) for a in attempts) >= 10  # members' claims, allocated at PreBind


def test_fastsched_agrees_with_recorded_oracle():
    failures = []
    for rec in RECORDS:
        diffs = check_recorded(rec)
        if diffs:
            failures.append(f"{rec['scenario']['id']}: {json.dumps(diffs)[:600]}")
    assert not failures, f"{len(failures)} of {len(RECORDS)} gang scenarios differ:\n" + "\n".join(failures[:10])


# -- live -----------------------------------------------------------------------------------------------
def _waiting_preemptor_scenario() -> dict:
    """Issue 30's difference (gangs-policy seed 58231123) in its smallest form: a preemptor evicts
    the pod on node-1 and waits nominated there; the next batch is a gang gated by PreEnqueue (no
    cycle); then a basic group's member of higher priority than the preemptor (its nomination does
    not count in this member's Filter) fits node-0 exactly or the emptied node-1."""
    def node(name):
        return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name}},
                "status": {"allocatable": {"cpu": "2", "memory": "8Gi", "pods": "110"},
                           "capacity": {"cpu": "2", "memory": "8Gi", "pods": "110"}}}

    def pod(name, cpu, prio=None, group=None, on=None):
        spec: dict = {"containers": [{"name": "c", "image": "x", "resources": {"requests": {"cpu": cpu}}}],
                      "terminationGracePeriodSeconds": 0}
        if prio is not None:
            spec.update(priority=prio, priorityClassName=f"prio-{prio}")
        if group:
            spec["schedulingGroup"] = {"podGroupName": group}
        m = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "default", "uid": f"uid-{name}"},
             "spec": spec}
        if on:
            spec["nodeName"] = on
            m["status"] = {"phase": "Running", "startTime": "2026-01-01T00:00:01Z"}
        return m

    def group(name, spec):
        return {"apiVersion": "scheduling.k8s.io/v1beta1", "kind": "PodGroup",
                "metadata": {"name": name, "namespace": "default"}, "spec": spec}

    classes = [{"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": f"prio-{v}"},
                "value": v} for v in (0, 20, 30, 100)]
    base = generate_gangs(0)
    return {"id": "gangs-waiting-preemptor", "class": GANG_CLASS, "seed": 0, "config": base["config"],
            "nodes": [node("node-0"), node("node-1")],
            "pods": [pod("victim", "2", 0, on="node-1"), pod("other", "1500m", 100, on="node-0")],
            "objects": [*classes, group("gated", {"schedulingPolicy": {"gang": {"minCount": 2}}}),
                        group("g", {"schedulingPolicy": {"basic": {}}, "priorityClassName": "prio-30", "priority": 30})],
            "incoming": [pod("preemptor", "1800m", 20), pod("gated-0", "100m", group="gated"),
                         pod("g-0", "500m", 30, group="g")]}


def test_a_waiting_preemptor_is_not_attempted_in_a_gated_batch():
    """The gated batch has no cycle, and the preemptor waiting nominated is not attempted in its
    place (SchedulerPopFromBackoffQ would pop it: activeQ is empty), as the oracle attempts each
    batch once: g-0 sees node-1 emptied (the oracle's node-1), not the preemptor bound there
    (node-0, the difference issue 30 reported)."""
    mine = run_fastsched_groups(_waiting_preemptor_scenario())
    gated, g = mine["groups"]
    assert gated["gated"].endswith("waiting for minCount pods from a gang to appear in scheduling queue")
    assert g["bound"] == {"default/g-0": "node-1"} and g["status"]["code"] == "Success"
    # the reason: the preemptor made one attempt (preemption) and still waits, unbound, nominated
    assert mine["replay_nominated"] == ["node-1", "", ""]
    assert mine["selected"]["default/preemptor"] == ""
    assert mine["attempts"]["default/preemptor"]["victims"] == ["default/victim"]


def live_oracle(feature_gates: str):
    """A module fixture's live oracle with ``feature_gates`` (skipped without Go, or when it does
    not build: the recorded sets check the same without it)."""
    if shutil.which("go") is None:
        pytest.skip("the oracle needs Go (`go` not on PATH); the recorded set checks the same without it")
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(oracle, "ORACLE_DIR", ORACLE_DIR)
        try:
            binary = oracle.build_oracle()
        except RuntimeError as exc:
            pytest.skip(f"the oracle did not build: {str(exc)[:500]}")
        with oracle.Oracle(binary, feature_gates=feature_gates) as o:
            yield o


def assert_recorded_agree(records: list, what: str) -> None:
    """Each recorded scenario of ``records`` replays to the oracle's answer (``check_recorded``)."""
    failures = []
    for rec in records:
        diffs = check_recorded(rec)
        if diffs:
            failures.append(f"{rec['scenario']['id']}: {str(diffs)[:300]}")
    assert not failures, f"{len(failures)} of {len(records)} {what} scenarios differ:\n" + "\n".join(failures[:10])


def assert_live_scenarios_agree(live: oracle.Oracle, seeds: range, **kind: bool) -> None:
    """Each scenario ``generate_gangs(seed, **kind)`` of ``seeds`` agrees with the live oracle
    (xfail when its kube-scheduler release is not the one fastsched follows)."""
    skew = oracle.version_skew(live.version)
    if skew is not None:
        pytest.xfail(skew)
    for seed in seeds:
        sc = generate_gangs(seed, **kind)
        diffs, _, _ = check_groups(sc, live)
        assert not diffs, f"{sc['id']}: {str(diffs)[:2000]}"


def assert_live_summary(live: oracle.Oracle, seed: int, **kind: bool) -> None:
    """``differential_groups`` over 10 scenarios from ``seed`` (the class ``kind`` names) against
    the live oracle: 10 scenarios, no difference, attempts compared."""
    skew = oracle.version_skew(live.version)
    if skew is not None:
        pytest.xfail(skew)
    s = oracle_groups.differential_groups(10, seed, oracle=live, **kind)
    assert (s.scenarios, s.differences) == (10, 0) and s.pods > 0


@pytest.fixture(scope="module")
def gang_oracle():
    yield from live_oracle(ORACLE_GATES)


def test_live_gang_scenarios_agree(gang_oracle):
    skew = oracle.version_skew(gang_oracle.version)
    if skew is not None:
        pytest.xfail(skew)
    seen: collections.Counter = collections.Counter()
    for seed in range(920_000, 920_040):
        sc = generate_gangs(seed)
        diffs, mine, theirs = check_groups(sc, gang_oracle)
        assert not diffs, f"{sc['id']}: {json.dumps(diffs)[:2000]}"
        seen += _outcomes(theirs.get("groups") or ())
    assert seen["Success"] and seen["Unschedulable"] + seen["Error"] + seen["gated"], seen


def test_live_waiting_preemptor_agrees(gang_oracle):
    """The oracle's answer on _waiting_preemptor_scenario is the one the test above asserts."""
    skew = oracle.version_skew(gang_oracle.version)
    if skew is not None:
        pytest.xfail(skew)
    diffs, _, theirs = check_groups(_waiting_preemptor_scenario(), gang_oracle)
    assert not diffs, json.dumps(diffs)[:2000]
    assert theirs["groups"][1]["bound"] == {"default/g-0": "node-1"}


def test_live_gang_differential_summary(gang_oracle):
    assert_live_summary(gang_oracle, 930_000)
