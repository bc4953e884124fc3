"""Pod groups with PodGroupPreemptionPolicy against the differential oracle (class ``gangs-policy``).

``recorded_gangs/gangs-policy.jsonl.gz`` holds scenarios on which the oracle (upstream v1.37.2 with
``--feature-gates GenericWorkload=true,PodGroupPreemptionPolicy=true``) and fastsched agreed when
recorded (``fastsched differential --class gangs-policy --record DIR``, seed 777800); they run
through fastsched again without Go. The live tests (skipped without ``go``) compare fresh scenarios.

With the gate, a group's members must have the PodGroup's ``preemptionPolicy`` (validatePodGroup's
"... as the pod group's preemption policy" error otherwise), and workload-aware preemption takes
the PodGroup's policy (a ``Never`` group is "not eligible").
"""
from __future__ import annotations

import copy
from pathlib import Path

import pytest

from fastsched.testing import oracle
from fastsched.testing.oracle_groups import (GANG_POLICY_CLASS, ORACLE_POLICY_GATES,
                                             compare_groups, generate_gangs, run_fastsched_groups)
from fastsched.testing.oracle_scenarios import CLASSES

from .test_gangs import assert_recorded_agree, assert_live_scenarios_agree, assert_live_summary, live_oracle

RECORDED = Path(__file__).parent / "recorded_gangs" / f"{GANG_POLICY_CLASS}.jsonl.gz"
RECORDS = oracle.read_recorded(RECORDED)
GROUP_POLICY_ERROR = "all pods in a single pod group should have the same preemption policy as the pod group's"


def _texts(g) -> str:
    return " ".join([*((g.get("status") or {}).get("reasons") or []), *(g.get("messages") or {}).values()])


# -- without the oracle ---------------------------------------------------------------------------------
def test_policy_class_is_not_a_default_class_and_the_plain_generator_is_unchanged():
    assert GANG_POLICY_CLASS not in CLASSES
    for seed in range(30):  # the gangs class draws the same scenarios as before the policy variant
        plain = generate_gangs(seed)
        assert "preemption_policy" not in plain
        assert not any("preemptionPolicy" in o["spec"] for o in plain["objects"] if o["kind"] == "PodGroup")


def test_generator_writes_policies_as_admission_does():
    scs = [generate_gangs(seed, policy=True) for seed in range(60)]
    assert all(sc["preemption_policy"] and sc["id"].startswith("gangs-policy-") for sc in scs)
    groups = [o for sc in scs for o in sc["objects"]
              if o["kind"] == "PodGroup" and o["metadata"]["name"].startswith("pg-")]
    policies = [o["spec"].get("preemptionPolicy") for o in groups]
    assert {"Never", "PreemptLowerPriority", None} <= set(policies)
    for o in groups:  # a Never group names a Never class (Priority admission refuses it otherwise)
        if o["spec"].get("preemptionPolicy") == "Never":
            assert o["spec"]["priorityClassName"].endswith("-never")
    # every scenario is taken by fastsched with the gate on (admission included)
    for sc in scs[:10]:
        run_fastsched_groups(sc)


def test_recorded_set_covers_the_gate():
    assert len(RECORDS) >= 50
    groups = [g for r in RECORDS for g in r["groups"]]
    assert sum(GROUP_POLICY_ERROR in _texts(g) for g in groups) >= 10
    assert any("pod group preemption: not eligible due to preemptionPolicy=Never." in _texts(g) for g in groups)
    assert any(g.get("victims") for g in groups)
    assert sum(bool(g.get("bound")) for g in groups) >= 30


def test_fastsched_agrees_with_recorded_oracle():
    assert_recorded_agree(RECORDS, "policy gang")


def test_the_gate_off_answers_differently():
    """The recorded scenarios run with the gate off on fastsched's side no longer agree: the gate is
    what the recorded answers test (the validation rule and its message differ)."""
    differing = 0
    for rec in RECORDS:
        sc = {k: v for k, v in copy.deepcopy(rec["scenario"]).items() if k != "preemption_policy"}
        for o in sc["objects"]:  # (the API server drops the field with the gate off)
            if o["kind"] == "PodGroup":
                o["spec"].pop("preemptionPolicy", None)
        mine = run_fastsched_groups(sc)
        differing += bool(compare_groups(mine["groups"], rec["groups"]))
    assert differing >= 10


# -- live -----------------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def policy_oracle():
    yield from live_oracle(ORACLE_POLICY_GATES)


def test_live_policy_scenarios_agree(policy_oracle):
    assert_live_scenarios_agree(policy_oracle, range(960_000, 960_030), policy=True)


def test_live_policy_differential_summary(policy_oracle):
    assert_live_summary(policy_oracle, 970_000, policy=True)
