"""Upstream scheduler_perf workloads end to end: pods/s of the measured pods.

Each workload is built at upstream's pod proportions for the node count (init pods prebound, as a
fast stand-in for upstream's scheduling of them), then the measured pods are scheduled by a fresh
Scheduler with the default configuration; extra_info records pods/s beside upstream's floor.

    python -m pytest benchmarks/bench_workloads.py --benchmark-only            # 500 and 5,000 nodes
    FASTSCHED_BENCH_MAX_PODS=500 python -m pytest benchmarks/bench_workloads.py --benchmark-only
    FASTSCHED_BENCH_LARGE=1 ...   # adds SchedulingBasic at 50,000 and 1,000,000 nodes

The measured pod count is capped by FASTSCHED_BENCH_MAX_PODS (default 1,000) to keep runs short.
"""
import gc
import os
import time

import pytest

from fastsched.scheduler import Scheduler
from fastsched.sim.workloads import WORKLOADS

MAX_PODS = int(os.environ.get("FASTSCHED_BENCH_MAX_PODS", "1000"))
CASES = [(name, n) for name in WORKLOADS if name not in ("SchedulingDaemonset",) for n in (500, 5000)]
if os.environ.get("FASTSCHED_BENCH_LARGE"):
    CASES += [("SchedulingBasic", 50_000), ("SchedulingBasic", 1_000_000)]


def prepared(name, nodes, measured=None):
    """A Scheduler holding workload ``name`` at ``nodes`` nodes (init pods prebound) and its measured
    pods (``measured``, or upstream's proportion capped at MAX_PODS), not yet run."""
    w = WORKLOADS[name]
    if measured is None:
        scale = nodes / w.default_nodes
        measured = max(1, min(MAX_PODS, round(w.default_measured_pods * scale)))
    inst = w.build(nodes=nodes, measured_pods=measured, prebind=True)
    s = Scheduler(inst.config, seed=0)
    s.add(inst.namespaces)
    s.add(inst.priority_classes)
    s.add_nodes(inst.nodes)
    s.add_pods(inst.init_pods)
    s.add_pods(inst.measured_pods)
    gc.collect()  # the setup's garbage is not the measured phase's to collect
    return (s, len(inst.measured_pods)), {}


def schedule(s, n):
    t = time.perf_counter()
    results = s.run()
    elapsed = time.perf_counter() - t
    scheduled = sum(r.scheduled for r in results[-n:])
    return n / elapsed, scheduled


@pytest.mark.parametrize("name,nodes", CASES, ids=[f"{n}-{k}" for n, k in CASES])
def test_workload(benchmark, name, nodes):
    out = benchmark.pedantic(schedule, setup=lambda: prepared(name, nodes), rounds=1, iterations=1)
    pods_per_second, scheduled = out
    w = WORKLOADS[name]
    benchmark.extra_info.update(nodes=nodes, pods_per_second=round(pods_per_second), scheduled=scheduled,
                                upstream_floor=w.upstream_floor_pods_per_second)
