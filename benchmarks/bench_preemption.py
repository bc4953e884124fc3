"""PreemptionBasic end to end (upstream scheduler_perf ``misc/performance-config.yaml``).

4 low-priority 900m pods per node (prebound), then 3000m priority-10 pods that each must preempt
3 of them (at most FASTSCHED_BENCH_MAX_PODS of them, default 1,000, as bench_workloads.py). Reports
pods/s of the measured pods (process CPU time and wall time) and the victims in extra_info; every
measured pod must be scheduled (asserted).

What is timed: ``Scheduler.run()`` over measured pods already added, as ``common.py`` states
(CPU time of the process; set-up outside the timing).

    python -m pytest benchmarks/bench_preemption.py --benchmark-only
    python benchmarks/bench_preemption.py [--nodes 500 5000] [--rounds 3] [--path both]

Run as a script, it interleaves the vectorized dry run and the per-node reference path
(``DefaultPreemption.vectorized = False``) round by round, so both share the machine's state, and
checks that they place every pod on the same node. The scheduling cycle's Filter with nominated pods
runs vectorized on both paths (the runtime's ``fastsched.runtime.nominated``), and preemption is
asynchronous (SchedulerAsyncPreemption, on by default in v1.34; the victims go at the virtual time
the preemption was decided, as the API delay is 0).
"""
from __future__ import annotations

import argparse
import gc
import os
import statistics
import time

import pytest

from fastsched.plugins.defaultpreemption import NAME
from fastsched.scheduler import Scheduler
from fastsched.sim.workloads import WORKLOADS

WORKLOAD = WORKLOADS["PreemptionBasic"]


#: measured pods at most (as bench_workloads.py): 1,000 preemptors at 5,000 nodes
MAX_PODS = int(os.environ.get("FASTSCHED_BENCH_MAX_PODS", "1000"))


def prepared(nodes: int, vectorized: bool = True):
    """A Scheduler holding PreemptionBasic at ``nodes`` nodes (upstream's proportions, measured pods
    capped at MAX_PODS), not yet run."""
    scale = nodes / WORKLOAD.default_nodes
    measured = max(1, min(MAX_PODS, round(WORKLOAD.default_measured_pods * scale)))
    inst = WORKLOAD.build(nodes=nodes, init_pods=round(WORKLOAD.default_init_pods * scale),
                          measured_pods=measured, prebind=True)
    s = Scheduler(inst.config, seed=0)
    s.add(inst.namespaces)
    s.add(inst.priority_classes)
    s.add_nodes(inst.nodes)
    s.add_pods(inst.init_pods)
    s.add_pods(inst.measured_pods)
    for fw in s.profiles.values():
        plugin = fw.plugin(NAME)
        if plugin is not None:
            plugin.vectorized = vectorized
    gc.collect()  # the setup's garbage is not the measured phase's to collect
    return s, len(inst.measured_pods)


def schedule(s, n: int) -> dict:
    """Run ``s``; pods/s of the measured pods by process CPU time and by wall time, and placements."""
    victims = s.metrics.preemption_victims
    c0, w0 = time.process_time(), time.perf_counter()
    results = s.run()
    cpu, wall = time.process_time() - c0, time.perf_counter() - w0
    measured = results[-n:]
    return {"cpu_pods_per_second": n / cpu, "wall_pods_per_second": n / wall,
            "measured": n, "scheduled": sum(r.scheduled for r in measured),
            "preemption_victims": s.metrics.preemption_victims - victims,
            "placements": [(r.pod.name, r.node_name) for r in measured]}


@pytest.mark.parametrize("nodes", [500, 5000])
def test_preemption_basic(benchmark, nodes):
    out = benchmark.pedantic(schedule, setup=lambda: (prepared(nodes), {}), rounds=1, iterations=1)
    assert out["scheduled"] == out["measured"] and out["preemption_victims"] > 0, {
        k: v for k, v in out.items() if k != "placements"}
    benchmark.extra_info.update(nodes=nodes, cpu_pods_per_second=round(out["cpu_pods_per_second"]),
                                wall_pods_per_second=round(out["wall_pods_per_second"]),
                                measured=out["measured"], scheduled=out["scheduled"],
                                preemption_victims=out["preemption_victims"],
                                upstream_floor=WORKLOAD.upstream_floor_pods_per_second)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--nodes", type=int, nargs="+", default=[500, 5000])
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--path", choices=("both", "vectorized", "per-node"), default="both")
    a = ap.parse_args()
    paths = {"both": (True, False), "vectorized": (True,), "per-node": (False,)}[a.path]
    for nodes in a.nodes:
        rates: dict[bool, list[float]] = {v: [] for v in paths}
        placements: dict[bool, list] = {}
        for _ in range(a.rounds):
            for v in paths:  # interleaved: each round runs every path once
                s, n = prepared(nodes, v)
                out = schedule(s, n)
                rates[v].append(out["cpu_pods_per_second"])
                placements.setdefault(v, out["placements"])
                assert out["placements"] == placements[v], "a path is not deterministic"
                assert out["scheduled"] == n, f"{out['scheduled']}/{n} measured pods scheduled"
                print(f"nodes={nodes} {'vectorized' if v else 'per-node'}: "
                      f"{out['cpu_pods_per_second']:.0f} pods/s (process CPU), "
                      f"{out['wall_pods_per_second']:.0f} wall, scheduled {out['scheduled']}/{n}", flush=True)
                del s
        for v in paths:
            print(f"nodes={nodes} {'vectorized' if v else 'per-node'}: median "
                  f"{statistics.median(rates[v]):.0f}, best {max(rates[v]):.0f} pods/s (process CPU)")
        if len(paths) == 2:
            same = placements[True] == placements[False]
            print(f"nodes={nodes}: same placements on both paths: {same}")
            assert same


if __name__ == "__main__":
    main()
