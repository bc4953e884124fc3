"""Upstream scheduler_perf workloads end to end: pods/s of the measured pods.

Each workload is built at upstream's pod proportions for the node count (init pods prebound
round-robin, as a fast stand-in for upstream's scheduling of them), then the measured pods are
scheduled by a fresh Scheduler with the default configuration. Churn (Unschedulable,
PreemptionAsync) is driven during the measured phase. Every measured pod must be scheduled
(asserted); extra_info records pods/s (process CPU and wall), churn pods, preemption victims and
upstream's floor.

What is timed: ``Scheduler.run()`` over measured pods already added, as ``common.py`` states
(CPU time of the process; set-up outside the timing); each cell is the best of ``ROUNDS`` rounds,
each on a freshly prepared cluster. Two kinds of measured pods at 5,000 nodes:
``shared`` (stamped from one template, sharing spec objects) and ``parsed`` (each parsed from its
own manifest); 500 nodes only ``shared``.

    python -m pytest benchmarks/bench_workloads.py --benchmark-only
    FASTSCHED_BENCH_MAX_PODS=500 python -m pytest benchmarks/bench_workloads.py --benchmark-only
    FASTSCHED_BENCH_LARGE=1 ...   # adds SchedulingBasic at 50,000 and 1,000,000 nodes

The measured pod count is capped by FASTSCHED_BENCH_MAX_PODS (default 1,000) to keep runs short.
"""
import os

import pytest
from common import prepared, run_measured

from fastsched.sim.workloads import WORKLOADS

NAMES = [name for name in WORKLOADS if name not in ("SchedulingDaemonset", "PreemptionBasic")]  # see bench_preemption
CASES = ([(name, 500, "shared") for name in NAMES] + [(name, 5000, "shared") for name in NAMES]
         + [(name, 5000, "parsed") for name in NAMES])
if os.environ.get("FASTSCHED_BENCH_LARGE"):
    CASES += [("SchedulingBasic", 50_000, "shared"), ("SchedulingBasic", 1_000_000, "shared")]


#: rounds a cell takes, each on a freshly prepared cluster; the cell's figure is the best of them
#: (issue 29's "best of 3"): one round of 1,000 pods is ~0.1 s of CPU, which this shared VM's load
#: moves by +-30% (affin19 measured parsed and shared pods 0.3-0.9% apart by callgrind, where one
#: round each had shown 9,834 against 13,419 pods/s)
ROUNDS = 3


@pytest.mark.parametrize("name,nodes,pods", CASES, ids=[f"{n}-{k}-{p}" for n, k, p in CASES])
def test_workload(benchmark, name, nodes, pods):
    outs: list[dict] = []

    def measured(p):
        outs.append(run_measured(p))

    benchmark.pedantic(measured, setup=lambda: ((prepared(name, nodes, parsed=pods == "parsed"),), {}),
                       rounds=ROUNDS, iterations=1)
    for out in outs:  # every round, not only the best
        assert out["scheduled"] == out["measured"], out
        if WORKLOADS[name].churn is not None:
            assert out["churn_pods"] > 0, out
        if name == "PreemptionAsync":
            assert out["preemption_victims"] > 0, out  # the churn's high-priority pods preempt
    out = max(outs, key=lambda o: o["cpu_pods_per_second"])
    benchmark.extra_info.update(nodes=nodes, pods=pods, measured=out["measured"], scheduled=out["scheduled"],
                                cpu_pods_per_second=round(out["cpu_pods_per_second"]),
                                wall_pods_per_second=round(out["wall_pods_per_second"]),
                                churn_pods=out["churn_pods"], preemption_victims=out["preemption_victims"],
                                upstream_floor=WORKLOADS[name].upstream_floor_pods_per_second,
                                rounds=len(outs),
                                cpu_pods_per_second_rounds=[round(o["cpu_pods_per_second"]) for o in outs])
