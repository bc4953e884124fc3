"""The scheduler end to end: upstream scheduler_perf's SchedulingBasic shape, five rounds.

1,000 pods scheduled onto 5,000 nodes already running 5,000 pods, default profile, with upstream's
adaptive percentageOfNodesToScore and with 100; measured pods stamped from one template
(``shared``) or parsed one manifest each (``parsed``). Every pod must be scheduled (asserted).
extra_info records pods/s (process CPU), best and median of the rounds.

What is timed: ``Scheduler.run()`` over measured pods already added, as ``common.py`` states
(CPU time of the process; set-up outside the timing).

    python -m pytest benchmarks/bench_scheduler.py --benchmark-only
"""
import statistics

import pytest
from common import prepared, run_measured

from fastsched import load_config
from fastsched.sim.workloads import WORKLOADS

UPSTREAM_FLOOR = WORKLOADS["SchedulingBasic"].upstream_floor_pods_per_second


def config(percentage):
    return load_config({"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
                        "percentageOfNodesToScore": percentage})


@pytest.mark.parametrize("pods", ["shared", "parsed"])
@pytest.mark.parametrize("percentage", [0, 100])
def test_scheduling_basic_5000_nodes(benchmark, percentage, pods):
    runs: list[dict] = []

    def setup():
        return (prepared("SchedulingBasic", 5000, 1000, init_pods=5000, config=config(percentage),
                         parsed=pods == "parsed"),), {}

    benchmark.pedantic(lambda p: runs.append(run_measured(p)), setup=setup, rounds=5, iterations=1)
    assert all(r["scheduled"] == r["measured"] == 1000 for r in runs), runs
    rates = [r["cpu_pods_per_second"] for r in runs]
    benchmark.extra_info.update(pods=pods, cpu_pods_per_second_best=round(max(rates)),
                                cpu_pods_per_second_median=round(statistics.median(rates)),
                                upstream_floor=UPSTREAM_FLOOR, percentage_of_nodes_to_score=percentage)
