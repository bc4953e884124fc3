"""The in-tree GangScheduling's PlacementFeasible answers made once after the last member
(``defer_gang_feasibility``) end every group cycle as the call after every member does.

``podGroupSchedulingDefaultAlgorithm`` asks PlacementFeasible after each member; GangScheduling
answers from ``minCount`` and the two counts alone, and a Wait (below ``minCount``, still in
reach) neither stops the loop nor leaves anything but the last answer as the result's status.
The deferral skips those Wait answers and makes the last one after the loop; an Unschedulable
(``minCount`` out of reach) or Success answer is still made by the call, at the member where
it comes. The comparison runs the seeded random gang clusters of ``test_podgroup_compiled_cycle``
(with and without TopologyAwareWorkloadScheduling) both ways and compares every pod's outcome and
message and every PodGroup's conditions, and every group algorithm's result (its status code and
message, and each member's).
"""
from __future__ import annotations

import pytest

from fastsched import Scheduler, load_config
from fastsched.clock import VirtualClock
from fastsched.scheduler import schedule_one_podgroup as pg_cycle

from .test_podgroup_compiled_cycle import SEEDS, TAS_SEEDS, _gates, run_scenario, scenario


def run(sc: dict, defer: bool) -> tuple:
    gates = _gates(sc.get("tas", False))
    s = Scheduler(load_config(None, feature_gates=gates), seed=sc["seed"], clock=VirtualClock(start=1e9),
                  feature_gates=gates)
    s.defer_gang_feasibility = defer
    algorithms: list = []
    default_algorithm = s._pod_group_default_algorithm

    def observed(fw, placement_state, pg_info, reverts):
        result = default_algorithm(fw, placement_state, pg_info, reverts)
        algorithms.append((pg_info.name, result.status.code(), result.status.message(), result.any_scheduled,
                           [(r.pinfo.pod.name, r.node_name, None if r.status is None else r.status.message())
                            for r in result.pod_results]))
        return result

    s._pod_group_default_algorithm = observed
    pods, conditions = run_scenario(s, sc)
    return pods, conditions, algorithms


@pytest.mark.parametrize("seed", [*SEEDS[::4], *TAS_SEEDS[::6]])
def test_deferred_feasibility_ends_as_the_call_per_member(seed, monkeypatch):
    sc = scenario(seed, tas=seed in TAS_SEEDS)
    deferred = run(sc, defer=True)
    reference = run(sc, defer=False)
    assert deferred == reference


def test_the_comparison_defers_and_meets_unschedulable_groups(monkeypatch):
    """The scenarios defer Wait answers (gangs of more than one member) and also have groups whose
    ``minCount`` went out of reach midway (the call's Unschedulable with its counts)."""
    deferrals = [0]
    pure = pg_cycle._pure_gang_min_count

    def counted(plugins, pg_info):
        out = pure(plugins, pg_info)
        deferrals[0] += out is not None and out > 1
        return out

    monkeypatch.setattr(pg_cycle, "_pure_gang_min_count", counted)
    out_of_reach = 0
    for seed in SEEDS[::4]:
        _, _, algorithms = run(scenario(seed), defer=True)
        out_of_reach += sum(1 for a in algorithms if "cannot be satisfied" in a[2] and any(m[2] for m in a[4]))
    assert deferrals[0] > 5 and out_of_reach >= 1, (deferrals[0], out_of_reach)
