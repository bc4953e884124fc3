"""Pod groups with DRANodeAllocatableResources against the differential oracle (class ``gangs-nar``).

``gangs-claims``' scenarios (DRAWorkloadResourceClaims on) whose GPUs take cpu or memory from their
node (``nodeAllocatableResources``), on both sides with the gate on. The oracle's pod group cycle
assumes a member as upstream's ``assume`` does (``schedule_one.go``: the member's node-allocatable
claim statuses copied into the assumed pod before the snapshot counts it), and its bound members
keep them; before that fix the oracle and fastsched differed on a third of these scenarios.

``recorded_gangs/gangs-nar.jsonl.gz`` holds scenarios on which the oracle (upstream v1.37.2 with
``--feature-gates GenericWorkload=true,DRAWorkloadResourceClaims=true,DRANodeAllocatableResources=true``)
and fastsched agreed when recorded (``fastsched differential --class gangs-nar --record DIR``, seed
31750501); they run through fastsched again without Go.
"""
from __future__ import annotations

import copy
from pathlib import Path

import pytest

from fastsched.testing import oracle, oracle_groups
from fastsched.testing.oracle_groups import (GANG_NAR_CLASS, ORACLE_NAR_GATES, compare_answer,
                                             generate_gangs, run_fastsched_groups)
from fastsched.testing.oracle_scenarios import CLASSES

from .test_gangs import assert_recorded_agree, assert_live_summary, live_oracle

RECORDED = Path(__file__).parent / "recorded_gangs" / f"{GANG_NAR_CLASS}.jsonl.gz"
RECORDS = oracle.read_recorded(RECORDED)


def test_nar_class_is_named_only_and_its_gates():
    assert GANG_NAR_CLASS not in CLASSES
    assert ORACLE_NAR_GATES.split(",") == ["GenericWorkload=true", "DRAWorkloadResourceClaims=true",
                                           "DRANodeAllocatableResources=true"]
    gates = oracle_groups.workload_gates(claims=True, nar=True)
    assert gates.enabled("DRANodeAllocatableResources") and gates.enabled("DRAWorkloadResourceClaims")
    assert not oracle_groups.workload_gates(claims=True).enabled("DRANodeAllocatableResources")


def test_generator_gives_gpus_node_allocatable_resources():
    scs = [generate_gangs(seed, nar=True) for seed in range(40)]
    assert all(sc["node_allocatable"] and sc["workload_claims"] and sc["id"].startswith("gangs-nar-") for sc in scs)
    assert scs[0] == generate_gangs(0, nar=True)
    devices = [d for sc in scs for o in sc["objects"] if o["kind"] == "ResourceSlice" for d in o["spec"]["devices"]]
    nar = [d["nodeAllocatableResources"] for d in devices if "nodeAllocatableResources" in d]
    assert len(nar) > len(devices) // 2
    assert any("cpu" in n and "mapping" in n["cpu"] for n in nar) and any("memory" in n for n in nar)
    assert any("overhead" in n.get("cpu", {}) for n in nar)
    members = [m for sc in scs for m in sc["incoming"] if m["spec"].get("resourceClaims")]
    assert any(len(m["spec"]["containers"]) == 2 for m in members) and any("resources" in m["spec"] for m in members)
    assert not any("node_allocatable" in generate_gangs(seed, claims=True) for seed in range(5))


def test_recorded_set_covers_the_gate():
    assert len(RECORDS) >= 50
    statuses = [a for r in RECORDS for a in r["attempts"] if a.get("node_allocatable")]
    assert len(statuses) >= 15  # bound members whose claims take from their node
    assert any(len(a["node_allocatable"]) == 2 for a in statuses)
    assert sum(1 for r in RECORDS for g in r["groups"] if g.get("bound")) >= 30


def test_fastsched_agrees_with_recorded_oracle():
    assert_recorded_agree(RECORDS, "gangs-nar")


def test_the_gate_off_answers_differently():
    """The recorded scenarios with the gate off on fastsched's side (the API server drops the
    devices' nodeAllocatableResources) no longer agree."""
    differing = 0
    for rec in RECORDS[:30]:
        sc = {k: v for k, v in copy.deepcopy(rec["scenario"]).items() if k != "node_allocatable"}
        mine = run_fastsched_groups(sc)
        differing += bool(compare_answer(mine, rec["selected"], rec["groups"], rec.get("attempts")))
    assert differing >= 5


# -- live -----------------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def nar_oracle():
    yield from live_oracle(ORACLE_NAR_GATES)


def test_live_nar_differential_summary(nar_oracle):
    assert_live_summary(nar_oracle, 995_000, nar=True)
