"""Gang scheduling (GenericWorkload): upstream's v1.37.2 ``podgroup/gangscheduling`` performance
workloads through fastsched's scheduler_perf runner, and a larger variant of its
``5000Nodes_9Gangs_9000Pods_1000PerGroup``: 5,000 nodes, 10 gangs of 5,000 pods (50,000 pods).

The variant is built here from the vendored test case (its ops and templates unchanged, the
parameters ``initNodes: 5000, initPodGroups: 10, podsPerGroup: 5000``); the vendored file is not
touched. The runner's clock advances by the process's CPU time (``cpu_time=True``: the machine is
shared, wall time measures the neighbours), so the figure is pods per CPU second of fastsched's
work, pod creation included (upstream creates them from the test's client, concurrently).

    python -m pytest benchmarks/bench_gangscheduling.py --benchmark-only
"""
from __future__ import annotations

from pathlib import Path

import pytest
from common import perf_run

from fastsched.perf import load_perf_config
from fastsched.perf.config import Workload

CONFIG = (Path(__file__).resolve().parent.parent / "tests/perf/data/upstream-v1.37.2/podgroup/gangscheduling"
          / "performance-config.yaml")

#: the variant of 5000Nodes_9Gangs_9000Pods_1000PerGroup (not in the vendored file)
VARIANT = Workload("5000Nodes_10Gangs_50000Pods_5000PerGroup",
                   params={"initNodes": 5000, "initPodGroups": 10, "podsPerGroup": 5000}, labels=["performance"])


def _workloads() -> list[Workload]:
    tc = load_perf_config(CONFIG).test_case("GangScheduling")
    return [w for w in tc.workloads if "performance" in w.labels] + [VARIANT]


WORKLOADS = _workloads()


@pytest.mark.parametrize("workload", WORKLOADS, ids=[w.name for w in WORKLOADS])
def test_gang_scheduling(benchmark, workload):
    config = load_perf_config(CONFIG)
    r, cpu = benchmark.pedantic(perf_run, args=(config, "GangScheduling", workload),
                                kwargs={"topic": "gangscheduling", "cpu_time": True}, rounds=1, iterations=1)
    assert r.status == "passed", (r.status, r.reason)
    assert r.pods_scheduled == workload.params["initPodGroups"] * workload.params["podsPerGroup"]
    benchmark.extra_info.update(measured_pods_per_second=round(r.measured or 0.0, 1),
                                no_throughput_sample=r.no_throughput_sample,
                                phase_pods_per_second=[p.pods_per_second for p in r.phases],
                                cpu_s=round(cpu, 2), pods_created=r.pods_created, pods_scheduled=r.pods_scheduled)
