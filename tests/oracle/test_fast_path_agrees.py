"""The differential oracle compares the real kube-scheduler with fastsched's *plugin-call* path: a
recorded attempt (``record="all"``, what ``run_fastsched`` uses) calls every plugin, so that each
verdict can be compared. Unrecorded runs take the fast paths instead: the fused compiled cycle, the
vectorized plugins, the idle Reserve/PreBind plugins skipped. This ties them to what the oracle
checked: on the oracle's own seeded scenarios of every class, a whole run (every incoming pod,
retries and preemption included) ends the same with and without records, pod by pod: status,
node, message and nominated node. The recorded side runs without the compiled Filter diagnosis
(``use_compiled_diagnosis``, which serves recorded attempts too): it is the plugin-call path the
fast paths are held to (the differential oracle checks the diagnosis against upstream itself)."""
from __future__ import annotations

import pytest

from fastsched import Scheduler, load_config
from fastsched.clock import VirtualClock
from fastsched.testing.oracle_scenarios import CLASSES, generate

SEEDS = range(20)


def _outcomes(scenario: dict, record: str | None) -> tuple[list, int, int]:
    s = Scheduler(load_config(scenario["config"]), seed=int(scenario.get("seed", 0)), record=record,
                  clock=VirtualClock(start=1e9))
    s.use_compiled_diagnosis = record is None
    idle = [0]
    for name in ("_idle_binding_cycle", "_collapsed_binding_cycle"):  # (the compiled binding path's)
        # an instance attribute: self.* finds it
        setattr(s, name, _counting(getattr(s, name), idle))
    placed = s._commit_placed  # the compiled binding path's pods bound from their placement

    def commit_placed(*args):
        done = placed(*args)
        idle[0] += done is not None
        return done
    s._commit_placed = commit_placed
    s.add(list(scenario.get("objects", ())))
    s.add(list(scenario["nodes"]))
    if scenario.get("pods"):
        s.add(list(scenario["pods"]))
    s.add(list(scenario["incoming"]))
    results = s.run(until=1e9 + 600)
    fused = sum(fw.compiled_cycle.fused_cycles for fw in s.profiles.values() if fw.compiled_cycle is not None)
    return [(r.pod.key, r.status, r.node_name, r.message, r.nominated_node_name) for r in results], fused, idle[0]


def _counting(cycle, idle: list):
    def counting(*args):
        idle[0] += 1
        return cycle(*args)
    return counting


@pytest.mark.parametrize("cls", sorted(CLASSES))
def test_unrecorded_runs_end_as_recorded_ones(cls):
    fused_total = idle_total = 0
    for seed in SEEDS:
        scenario = generate(cls, seed)
        recorded, fused_recorded, idle_recorded = _outcomes(scenario, "all")
        fast, fused, idle = _outcomes(scenario, None)
        # a recorded attempt never takes the fused cycle nor the idle binding path
        assert fused_recorded == 0 and idle_recorded == 0
        assert fast == recorded, f"{cls} seed {seed}"
        fused_total += fused
        idle_total += idle
    assert fused_total > 0, f"no {cls} scenario took the fused cycle: the test compares nothing"
    # every class has pods with nothing to do at Reserve, Permit and PreBind: the idle binding path
    # must have served some of them, or the comparison says nothing about it
    assert idle_total > 0, f"no {cls} scenario took the idle binding path"
