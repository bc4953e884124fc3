"""The scheduler end to end: upstream scheduler_perf's SchedulingBasic shape.

1,000 pods scheduled onto 5,000 nodes already running 5,000 pods, default profile, with upstream's
adaptive percentageOfNodesToScore and with 100. Reports pods/s in extra_info.
Run: python -m pytest benchmarks/bench_scheduler.py --benchmark-only
"""
import gc
import statistics
import time

import pytest

from fastsched import load_config
from fastsched.scheduler import Scheduler
from fastsched.sim.workloads import WORKLOADS

UPSTREAM_FLOOR = WORKLOADS["SchedulingBasic"].upstream_floor_pods_per_second


def prepared(percentage):
    inst = WORKLOADS["SchedulingBasic"].build(nodes=5000, init_pods=5000, measured_pods=1000, prebind=True)
    cfg = load_config({"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
                       "percentageOfNodesToScore": percentage})
    s = Scheduler(cfg, seed=0)
    s.add(inst.namespaces)
    s.add_nodes(inst.nodes)
    s.add_pods(inst.init_pods)
    s.add_pods(inst.measured_pods)
    gc.collect()  # the setup's garbage is not the measured phase's to collect
    return (s,), {}


def schedule(s):
    t = time.perf_counter()
    results = s.run()
    elapsed = time.perf_counter() - t
    assert sum(r.scheduled for r in results) == len(results)
    return len(results) / elapsed


@pytest.mark.parametrize("percentage", [0, 100])
def test_scheduling_basic_5000_nodes(benchmark, percentage):
    rates: list[float] = []
    benchmark.pedantic(lambda s: rates.append(schedule(s)), setup=lambda: prepared(percentage), rounds=5,
                       iterations=1)
    benchmark.extra_info.update(pods_per_second_best=round(max(rates)),
                                pods_per_second_median=round(statistics.median(rates)),
                                upstream_floor=UPSTREAM_FLOOR, percentage_of_nodes_to_score=percentage)
