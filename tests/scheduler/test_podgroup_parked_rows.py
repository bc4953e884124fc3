"""A successful group's members parked in the node table between the algorithm and submit
(``Cache.park_assumed``) end exactly as when they are forgotten and written again.

The group cycle assumes its members for the algorithm, reverts them (in reverse member order) and
assumes them again, one by one in member order, at submit. With ``park_group_assumptions`` the
revert of a successful group leaves the members' rows in the table and submit's assumes take them
up; any failure's handling or binding cycle in submit drops what is left first. The comparison
runs the seeded random gang clusters of ``test_podgroup_compiled_cycle`` both ways and compares,
after every group cycle, the whole node table (each row's pod records in order, their names, the
requested column, the free-record stack) and at the end every pod's outcome and every PodGroup's
conditions; a second set injects Permit rejections of chosen members in submit, so that parked
rows are dropped midway.
"""
from __future__ import annotations

import random

import pytest

from fastsched import Scheduler, load_config
from fastsched.clock import VirtualClock
from fastsched.framework.status import Code, Status

from .test_podgroup_compiled_cycle import SEEDS, _gates, run_scenario, scenario


def _table_digest(s: Scheduler) -> tuple:
    """The node table as the group cycles leave it: rows' records in order (with pod names), the
    (N, R) int64 requested column, and the free records the next adds will take."""
    table = s.cache.snapshot.table
    rows = tuple((name, tuple((rec, table.pod_names[rec]) for rec in table.pod_records(row)),
                  tuple(table.requested[row].tolist()))
                 for name, row in sorted(table.row_of.items()))
    return rows, tuple(table._freed_records), table._next_record


def run(sc: dict, park: bool, reject: frozenset = frozenset()) -> tuple:
    """``reject``: members (pod names) whose Permit in submit answers Unschedulable."""
    gates = _gates(sc.get("tas", False))
    s = Scheduler(load_config(None, feature_gates=gates), seed=sc["seed"], clock=VirtualClock(start=1e9),
                  feature_gates=gates)
    s.park_group_assumptions = park
    digests: list = []
    kept: list[int] = []
    cycle = s._pod_group_cycle

    def observed(fw, group_state, pg_info, started):
        cycle(fw, group_state, pg_info, started)
        assert not s.cache._parked  # nothing outlives the cycle
        digests.append(_table_digest(s))

    s._pod_group_cycle = observed
    park_assumed = s.cache.park_assumed

    def counted(pod):
        kept.append(1)
        park_assumed(pod)

    s.cache.park_assumed = counted
    if reject:
        # (the rejection replaces the Permit runner, which a gang's Permit run does not call)
        s.use_gang_permit_run = False
        for fw in s.profiles.values():
            permit = fw.run_permit_plugins

            def rejecting(state, pod, node_name, permit=permit):
                if pod.name in reject:
                    return Status(Code.UNSCHEDULABLE, "injected rejection").with_plugin("Injected")
                return permit(state, pod, node_name)

            fw.run_permit_plugins = rejecting
    pods, conditions = run_scenario(s, sc)
    return pods, conditions, digests, _table_digest(s), len(kept)


def _rejected(sc: dict) -> frozenset:
    """A few members of each gang, past its first (so that some are taken up before the drop)."""
    rng = random.Random(sc["seed"] + 7)
    names = [p["metadata"]["name"] for p in sc["incoming"] if p["spec"].get("schedulingGroup")]
    return frozenset(n for n in names if not n.endswith("-0") and rng.random() < 0.15)


@pytest.mark.parametrize("seed", SEEDS)
def test_parked_rows_end_as_forget_and_assume(seed):
    sc = scenario(seed)
    reference = run(sc, park=False)
    parked = run(sc, park=True)
    assert reference[4] == 0
    assert parked[:4] == reference[:4]


@pytest.mark.parametrize("seed", SEEDS[::2])
def test_parked_rows_dropped_at_a_rejection_in_submit(seed):
    sc = scenario(seed)
    reject = _rejected(sc)
    reference = run(sc, park=False, reject=reject)
    parked = run(sc, park=True, reject=reject)
    assert parked[:4] == reference[:4]


def test_the_comparison_parks_and_drops():
    """The scenarios park members (successful gangs) and the injected rejections hit members
    while later ones were still parked."""
    parked = rejected = 0
    for seed in SEEDS[::2]:
        sc = scenario(seed)
        reject = _rejected(sc)
        pods, _, _, _, n = run(sc, park=True, reject=reject)
        parked += n
        rejected += sum(1 for p in pods if "injected rejection" in (p[3] or ""))
    assert parked > 100 and rejected > 5, (parked, rejected)
