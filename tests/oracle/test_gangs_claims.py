"""Pod groups with DRAWorkloadResourceClaims against the differential oracle (class ``gangs-claims``).

``recorded_gangs/gangs-claims.jsonl.gz`` holds scenarios on which the oracle (upstream v1.37.2 with
``--feature-gates GenericWorkload=true,DRAWorkloadResourceClaims=true``) and fastsched agreed when
recorded (``fastsched differential --class gangs-claims --record DIR``, seed 777900); they run
through fastsched again without Go. The live tests (skipped without ``go``) compare fresh scenarios.

With the gate, the claim a group's members share is named by their PodGroup's
``spec.resourceClaims``: PreBind reserves it for the group (so no member's attempt reports it as
its own allocation), and PodGroupPostFilter deallocates it (unavailable on the nodes, reserved for
the group alone) or unreserves the group from it.
"""
from __future__ import annotations

import copy
from pathlib import Path

import pytest

from fastsched.testing import oracle
from fastsched.testing.oracle_groups import (GANG_CLAIMS_CLASS, ORACLE_CLAIMS_GATES,
                                             compare_groups, generate_gangs, run_fastsched_groups)
from fastsched.testing.oracle_scenarios import CLASSES

from .test_gangs import assert_recorded_agree, assert_live_scenarios_agree, assert_live_summary, live_oracle

RECORDED = Path(__file__).parent / "recorded_gangs" / f"{GANG_CLAIMS_CLASS}.jsonl.gz"
RECORDS = oracle.read_recorded(RECORDED)
GROUP_DEALLOCATED = "deallocation of PodGroup ResourceClaim completed"
GROUP_UNRESERVED = "ResourceClaim unreserved for PodGroup"


def _texts(g) -> str:
    return " ".join([*((g.get("status") or {}).get("reasons") or []), *(g.get("messages") or {}).values()])


# -- without the oracle ---------------------------------------------------------------------------------
def test_claims_class_is_not_a_default_class_and_the_plain_generator_is_unchanged():
    assert GANG_CLAIMS_CLASS not in CLASSES
    for seed in range(30):  # the gangs class draws the same scenarios as before the claims variant
        plain = generate_gangs(seed)
        assert "workload_claims" not in plain
        assert not any("resourceClaims" in o["spec"] for o in plain["objects"] if o["kind"] == "PodGroup")


def test_generator_names_shared_claims_in_pod_groups():
    scs = [generate_gangs(seed, claims=True) for seed in range(80)]
    assert all(sc["workload_claims"] and sc["id"].startswith("gangs-claims-") for sc in scs)
    entries = [e for sc in scs for o in sc["objects"] if o["kind"] == "PodGroup"
               for e in o["spec"].get("resourceClaims") or ()]
    assert {e["name"] for e in entries} == {"shared-gpu", "other-gpu"}
    for sc in scs:  # a claim allocated before is reserved for its PodGroup, whose uid it names
        uids = {o["metadata"]["name"]: o["metadata"]["uid"] for o in sc["objects"] if o["kind"] == "PodGroup"}
        for o in sc["objects"]:
            if o["kind"] == "ResourceClaim" and o.get("status"):
                (r,) = o["status"]["reservedFor"]
                assert (r["resource"], r["uid"]) == ("podgroups", uids[r["name"]])
    assert sum(1 for sc in scs for o in sc["objects"] if o["kind"] == "ResourceClaim" and o.get("status")) >= 10
    for sc in scs[:10]:  # every scenario is taken by fastsched with the gate on
        run_fastsched_groups(sc)


def test_recorded_set_covers_the_gate():
    assert len(RECORDS) >= 50
    groups = [g for r in RECORDS for g in r["groups"]]
    assert sum(GROUP_DEALLOCATED in _texts(g) for g in groups) >= 3
    assert sum(GROUP_UNRESERVED in _texts(g) for g in groups) >= 3
    assert sum(bool(g.get("bound")) for g in groups) >= 30


def test_fastsched_agrees_with_recorded_oracle():
    assert_recorded_agree(RECORDS, "claims gang")


def test_the_gate_off_answers_differently():
    """The recorded scenarios with the gate off on fastsched's side (the API server drops the
    PodGroups' resourceClaims) no longer agree: shared claims are reserved for the pods, the group
    claim paths of PodGroupPostFilter are not taken."""
    differing = 0
    for rec in RECORDS:
        sc = {k: v for k, v in copy.deepcopy(rec["scenario"]).items() if k != "workload_claims"}
        for o in sc["objects"]:
            if o["kind"] == "PodGroup":
                o["spec"].pop("resourceClaims", None)
        mine = run_fastsched_groups(sc)
        differing += bool(compare_groups(mine["groups"], rec["groups"]))
    assert differing >= 5


# -- live -----------------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def claims_oracle():
    yield from live_oracle(ORACLE_CLAIMS_GATES)


def test_live_claims_scenarios_agree(claims_oracle):
    assert_live_scenarios_agree(claims_oracle, range(980_000, 980_030), claims=True)


def test_live_claims_differential_summary(claims_oracle):
    assert_live_summary(claims_oracle, 990_000, claims=True)
