"""Pod groups with TopologyAwareWorkloadScheduling against the differential oracle (class ``gangs-tas``).

``recorded_gangs/gangs-tas.jsonl.gz`` holds scenarios on which the oracle (upstream v1.37.2 with
``--feature-gates GenericWorkload=true,TopologyAwareWorkloadScheduling=true``) and fastsched agreed
when recorded (``fastsched differential --class gangs-tas --record DIR``, seed 777700); they run
through fastsched again without Go. The live tests (skipped without ``go``) compare fresh scenarios.

What upstream leaves to Go's map order is compared as a set: the generator's placements (Go map
order over the domains; the oracle evaluates them in fastsched's order, an order upstream can take,
see ``runPlacements`` in oracle/main.go), and TopologyPlacementGenerator's error over the scheduled
pods (the pod and the two domains it names: any order of them is accepted).
"""
from __future__ import annotations

import copy
import re
from pathlib import Path

import pytest

from fastsched.testing import oracle
from fastsched.testing.oracle_groups import (GANG_TAS_CLASS, ORACLE_TAS_GATES, RACK_LABEL,
                                             compare_groups, generate_gangs, run_fastsched_groups)
from fastsched.testing.oracle_scenarios import CLASSES

from .test_gangs import assert_recorded_agree, assert_live_scenarios_agree, assert_live_summary, live_oracle

RECORDED = Path(__file__).parent / "recorded_gangs" / f"{GANG_TAS_CLASS}.jsonl.gz"
RECORDS = oracle.read_recorded(RECORDED)


def _reasons(g) -> str:
    return " ".join((g.get("status") or {}).get("reasons") or [])


# -- without the oracle ---------------------------------------------------------------------------------
def test_tas_class_is_not_a_default_class_and_the_plain_generator_is_unchanged():
    assert GANG_TAS_CLASS not in CLASSES
    plain = generate_gangs(5)
    assert "tas" not in plain and not any(o["spec"].get("schedulingConstraints") for o in plain["objects"]
                                          if o["kind"] == "PodGroup")


def test_generator_makes_topology_constraints_zones_and_racks():
    scs = [generate_gangs(seed, tas=True) for seed in range(40)]
    assert all(sc["tas"] and sc["id"].startswith("gangs-tas-") for sc in scs)
    keys = [o["spec"]["schedulingConstraints"]["topology"][0]["key"] for sc in scs for o in sc["objects"]
            if o["kind"] == "PodGroup" and o["spec"].get("schedulingConstraints")]
    assert {"topology.kubernetes.io/zone", RACK_LABEL, "example.com/none"} <= set(keys)
    labels = [n["metadata"]["labels"] for sc in scs for n in sc["nodes"]]
    assert any(RACK_LABEL in lab for lab in labels) and any(RACK_LABEL not in lab for lab in labels)


def test_recorded_set_covers_the_placement_algorithm():
    assert len(RECORDS) >= 50
    groups = [g for r in RECORDS for g in r["groups"]]
    assert sum(len((g.get("placements") or {}).get("1", ())) > 1 for g in groups) >= 20  # several placements
    assert sum(bool(g.get("placement_best")) for g in groups) >= 10  # scored by PlacementScore
    assert any(len(v) > 1 for g in groups for v in (g.get("placement_best") or {}).values())  # a tie, replayed
    assert any(re.search(r"0/[2-9] placements are available, first placement status: ", _reasons(g)) for g in groups)
    assert any("no feasible placements found" in _reasons(g) for g in groups)
    assert any("cannot determine domain for already scheduled pods" in _reasons(g) for g in groups)
    assert any("2" in (g.get("placements") or {}) for g in groups)  # PodGroupPostFilter's rerun, with placements
    assert any(g.get("victims") for g in groups)


def test_fastsched_agrees_with_recorded_oracle():
    assert_recorded_agree(RECORDS, "TAS gang")


def test_comparison_finds_a_different_placement():
    rec = next(r for r in RECORDS if any(g.get("placement") for g in r["groups"]))
    mine = run_fastsched_groups(rec["scenario"])
    theirs = copy.deepcopy(rec["groups"])
    g = next(g for g in theirs if g.get("placement"))
    g["placement"] = {run: name + "-other" for run, name in g["placement"].items()}
    diffs = compare_groups(mine["groups"], theirs)
    assert diffs and diffs[0]["field"] == "placement"


def test_domain_errors_in_another_order_are_accepted_and_others_are_not():
    rec = next(r for r in RECORDS if any("more than 1 domain found" in _reasons(g) for g in r["groups"]))
    mine = run_fastsched_groups(rec["scenario"])
    theirs = copy.deepcopy(rec["groups"])
    g = next(g for g in theirs if "more than 1 domain found" in _reasons(g))
    text = next(r for r in g["status"]["reasons"] if "more than 1 domain found" in r)
    a, b = text.rsplit(": ", 1)[1].split(", ")
    swapped = text.replace(f"{a}, {b}", f"{b}, {a}")

    def rewrite(obj, old, new):
        if isinstance(obj, str):
            return obj.replace(old, new)
        if isinstance(obj, list):
            return [rewrite(x, old, new) for x in obj]
        if isinstance(obj, dict):
            return {k: rewrite(v, old, new) for k, v in obj.items()}
        return obj

    assert compare_groups(mine["groups"], [rewrite(x, text, swapped) if x is g else x for x in theirs]) == []
    bogus = text.replace(f"{a}, {b}", f"{a}, zone-nowhere")
    assert compare_groups(mine["groups"], [rewrite(x, text, bogus) if x is g else x for x in theirs])


# -- live -----------------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def tas_oracle():
    yield from live_oracle(ORACLE_TAS_GATES)


def test_live_tas_scenarios_agree(tas_oracle):
    assert_live_scenarios_agree(tas_oracle, range(940_000, 940_030), tas=True)


def test_live_tas_differential_summary(tas_oracle):
    assert_live_summary(tas_oracle, 950_000, tas=True)
