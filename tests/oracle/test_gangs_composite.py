"""CompositePodGroup trees against the differential oracle (class ``gangs-composite``).

``recorded_gangs/gangs-composite.jsonl.gz`` holds scenarios on which the oracle (upstream v1.37.2
with ``--feature-gates GenericWorkload=true,TopologyAwareWorkloadScheduling=true,CompositePodGroup=true``)
and fastsched agreed when recorded (``fastsched differential --class gangs-composite --record DIR``,
seed 777900); they run through fastsched again without Go. The live tests (skipped without ``go``)
compare fresh scenarios.

A root CompositePodGroup's tree is one entity: its leaves' members follow each other in
``incoming`` and get one group cycle (``compositeAttempt`` in oracle/composite.go); the answer is
the root's status, every member's outcome and each leaf's ``PodGroupInitiallyScheduled``
condition (``conditions``). What upstream leaves to Go's map order is fastsched's on both sides
(replays keyed by root, run and evaluation count) or compared as a set (TopologyPlacementGenerator's
error over the scheduled pods of any group of the tree).
"""
from __future__ import annotations

import copy
from pathlib import Path

import pytest

from fastsched.testing import oracle
from fastsched.testing.oracle_groups import (GANG_COMPOSITE_CLASS, GANG_COMPOSITE_POLICY_CLASS,
                                             ORACLE_COMPOSITE_GATES, _composite_roots, check_recorded,
                                             compare_groups, generate_gangs, run_fastsched_groups)
from fastsched.testing.oracle_scenarios import CLASSES

from .test_gangs import assert_recorded_agree, assert_live_scenarios_agree, assert_live_summary, live_oracle

RECORDED = Path(__file__).parent / "recorded_gangs" / f"{GANG_COMPOSITE_CLASS}.jsonl.gz"
RECORDS = oracle.read_recorded(RECORDED)
#: the policy variant (PodGroupPreemptionPolicy on too), recorded with seed 778000 (60 scenarios)
POLICY_RECORDS = oracle.read_recorded(RECORDED.parent / f"{GANG_COMPOSITE_POLICY_CLASS}.jsonl.gz")
POLICY_ERROR = "all pods in a single pod group should have the same preemption policy as the pod group's"


def _texts(g) -> str:
    return " ".join([*((g.get("status") or {}).get("reasons") or []), *(g.get("messages") or {}).values()])


# -- without the oracle ---------------------------------------------------------------------------------
def test_composite_class_is_not_a_default_class_and_the_other_generators_are_unchanged():
    assert GANG_COMPOSITE_CLASS not in CLASSES
    for seed in range(20):
        for sc in (generate_gangs(seed), generate_gangs(seed, tas=True)):
            assert "composite" not in sc
            assert not any(o["kind"] == "CompositePodGroup" or "parentCompositePodGroupName" in o["spec"]
                           for o in sc["objects"] if "spec" in o)


def test_generator_makes_trees_whose_members_are_consecutive():
    scs = [generate_gangs(seed, composite=True) for seed in range(60)]
    assert all(sc["composite"] and sc["tas"] and sc["id"].startswith("gangs-composite-") for sc in scs)
    nested = missing = 0
    for sc in scs:
        cpgs = {o["metadata"]["name"]: o for o in sc["objects"] if o["kind"] == "CompositePodGroup"}
        nested += any(o["spec"].get("parentCompositePodGroupName") for o in cpgs.values())
        missing += any(o["kind"] == "PodGroup" and o["spec"].get("parentCompositePodGroupName") not in (None, *cpgs)
                       for o in sc["objects"])
        roots = _composite_roots(sc["objects"])
        # a tree's members follow each other: each root's run of members is one
        runs = [roots.get(f"default/{p['spec']['schedulingGroup']['podGroupName']}")
                for p in sc["incoming"] if p["spec"].get("schedulingGroup")]
        seen = [r for i, r in enumerate(runs) if r is not None and (i == 0 or runs[i - 1] != r)]
        assert len(seen) == len(set(seen)), (sc["id"], runs)
        for o in cpgs.values():  # every level names its workload (validation wants it with a parent)
            assert o["spec"]["workloadRef"]["templateName"] == o["metadata"]["name"]
    assert nested >= 10 and missing >= 2
    policies = [o["spec"]["schedulingPolicy"] for sc in scs for o in sc["objects"] if o["kind"] == "CompositePodGroup"]
    assert any("gang" in p for p in policies) and any("basic" in p for p in policies)
    # the three running shapes (disruptionMode all on the root, a middle CompositePodGroup, a leaf)
    all_on = {o["kind"] + ("-mid" if o["metadata"]["name"].endswith("-mid") else "")
              for sc in scs for o in sc["objects"] if o["metadata"]["name"].startswith("run-")
              and "all" in (o["spec"].get("disruptionMode") or {})}
    assert all_on == {"CompositePodGroup", "CompositePodGroup-mid", "PodGroup"}
    for sc in scs[:2]:  # taken by fastsched with the gates on (validation included)
        run_fastsched_groups(sc)


def test_recorded_set_covers_the_composite_cycle():
    assert len(RECORDS) >= 50
    groups = [g for r in RECORDS for g in r["groups"]]
    trees = [g for g in groups if g.get("conditions")]
    assert len(trees) >= 40 and sum(len(g["conditions"]) > 2 for g in trees) >= 10
    assert sum(bool(g.get("bound")) for g in trees) >= 20
    assert any("placements are available" in _texts(g) for g in trees)
    assert any("composite pod group evaluation failed due to child error" in _texts(g) for g in trees)
    assert any("pod group preemption" in _texts(g) for g in trees)
    assert any("all pods in a single pod group should have the same priority" in _texts(g) for g in trees)
    assert any(g.get("gated") and "tree to meet quorum" in g["gated"]["reasons"][0] for g in groups)
    assert any(g.get("victims") for g in trees)
    assert any(len(r["scenario"].get("placement_pick") or {}) for r in RECORDS)  # scored placements


def test_fastsched_agrees_with_recorded_oracle():
    assert_recorded_agree(RECORDS, "composite")


def test_comparison_finds_a_different_leaf_condition():
    rec = next(r for r in RECORDS if any(len(g.get("conditions") or {}) > 1 for g in r["groups"]))
    mine = run_fastsched_groups(rec["scenario"])
    theirs = copy.deepcopy(rec["groups"])
    g = next(g for g in theirs if len(g.get("conditions") or {}) > 1)
    leaf = sorted(g["conditions"])[-1]
    g["conditions"][leaf] = ["False", "SchedulerError", "another"]
    diffs = compare_groups(mine["groups"], theirs)
    assert diffs and diffs[0]["field"] == "conditions"


def test_a_leaf_whose_parent_is_missing_waits_without_a_cycle():
    """Its root is not in the queue's forest, so ``PriorityQueue.Add`` keeps its members among the
    incomplete pods: neither PreEnqueue's gating nor a cycle, on either side."""
    seen = 0
    for rec in RECORDS:
        if seen >= 3:
            break
        objs = rec["scenario"]["objects"]
        cpgs = {o["metadata"]["name"] for o in objs if o["kind"] == "CompositePodGroup"}
        missing = {f"default/{o['metadata']['name']}" for o in objs if o["kind"] == "PodGroup"
                   and o["spec"].get("parentCompositePodGroupName") not in (None, *cpgs)}
        if not missing:
            continue
        mine = {g["group"]: g for g in run_fastsched_groups(rec["scenario"])["groups"]}
        for g in rec["groups"]:
            if g["group"] in missing:
                seen += 1
                assert not g.get("gated") and not g.get("status") and not g["bound"]
                assert "gated" not in mine[g["group"]] and "status" not in mine[g["group"]], mine[g["group"]]
    assert seen >= 3


def test_the_gate_off_refuses_the_scenarios():
    """Without CompositePodGroup the kind is refused when the scenario is loaded (the API server's
    storage has no compositepodgroups): the gate is what the recorded answers test."""
    sc = copy.deepcopy(RECORDS[0]["scenario"])
    sc.pop("composite")
    with pytest.raises(Exception, match="CompositePodGroup"):
        run_fastsched_groups(sc)


def test_policy_variant_writes_root_policies_as_admission_does():
    scs = [generate_gangs(seed, composite=True, policy=True) for seed in range(40)]
    assert all(sc["preemption_policy"] and sc["id"].startswith("gangs-composite-policy-") for sc in scs)
    roots = [o for sc in scs for o in sc["objects"] if o["kind"] == "CompositePodGroup"
             and o["metadata"]["name"].startswith("cpg-") and not o["spec"].get("parentCompositePodGroupName")]
    assert {"Never", "PreemptLowerPriority", None} <= {o["spec"].get("preemptionPolicy") for o in roots}
    for o in roots:  # a Never root names a Never class (Priority admission refuses it otherwise)
        if o["spec"].get("preemptionPolicy") == "Never":
            assert o["spec"]["priorityClassName"].endswith("-never")


def test_policy_recorded_set_agrees_and_covers_the_gate():
    assert len(POLICY_RECORDS) >= 50
    groups = [g for r in POLICY_RECORDS for g in r["groups"]]
    assert any(POLICY_ERROR in _texts(g) for g in groups)
    assert any("not eligible due to preemptionPolicy=Never" in _texts(g) for g in groups)
    failures = [f"{r['scenario']['id']}: {str(d)[:300]}" for r in POLICY_RECORDS if (d := check_recorded(r))]
    assert not failures, "\n".join(failures[:10])


# -- live -----------------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def composite_oracle():
    yield from live_oracle(ORACLE_COMPOSITE_GATES)


def test_live_composite_scenarios_agree(composite_oracle):
    assert_live_scenarios_agree(composite_oracle, range(980_000, 980_020), composite=True)


def test_live_composite_differential_summary(composite_oracle):
    assert_live_summary(composite_oracle, 990_000, composite=True)


@pytest.fixture(scope="module")
def composite_policy_oracle():
    yield from live_oracle(ORACLE_COMPOSITE_GATES + ",PodGroupPreemptionPolicy=true")


def test_live_composite_policy_differential_summary(composite_policy_oracle):
    assert_live_summary(composite_policy_oracle, 995_000, composite=True, policy=True)
