"""Upstream's scheduler_perf volume workloads (``volumes/performance-config.yaml`` of v1.37.2,
vendored unchanged) at upstream's sizes, beside upstream's thresholds.

Run: python benchmarks/bench_volumes.py [--workload NAME/WORKLOAD ...]

Method: ``common.upstream_perf_row`` (the scheduler_perf runner on the process-CPU clock, as
``fastsched perf --cpu-time``), ``prebind_init=True`` (the init pods, each with its own bound
claim, are added bound; the measured pods are scheduled). Reported per workload: upstream's
SchedulingThroughput Average by upstream's collector rules (none when the measured phase kept no
sample), the measured phase's own pods/s (fastsched's figure) and the CPU seconds of the whole run.

    python -m pytest benchmarks/bench_volumes.py --benchmark-only
"""
from __future__ import annotations

import argparse

import pytest
from common import upstream_perf_row

WORKLOADS = [
    ("SchedulingInTreePVs", "5000Nodes_2000Pods"),
    ("SchedulingMigratedInTreePVs", "5000Nodes_5000Pods"),
    ("SchedulingCSIPVs", "5000Nodes_5000Pods"),
    ("SchedulingInTreePVs", "5000Nodes"),
    ("PreemptionPVs", "1000Nodes"),
    ("SchedulingSecrets", "5000Nodes_10000Pods"),
]


@pytest.mark.parametrize("name,workload", WORKLOADS, ids=[f"{n}/{w}" for n, w in WORKLOADS])
def test_volume_workload(benchmark, name, workload):
    row = benchmark.pedantic(upstream_perf_row, args=("volumes", name, workload), kwargs={"prebind_init": True},
                             rounds=1, iterations=1)
    assert row["status"] == "passed", (row["status"], row["reason"])
    benchmark.extra_info.update(row)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--workload", action="append", help="NAME/WORKLOAD (repeatable)")
    args = ap.parse_args()
    chosen = [tuple(w.split("/", 1)) for w in args.workload] if args.workload else WORKLOADS
    print(f"{'workload':52} {'status':8} {'metric':>9} {'phase/s':>9} {'cpu s':>7} {'threshold':>9} {'ratio':>6}")
    for name, workload in chosen:
        row = upstream_perf_row("volumes", name, workload, prebind_init=True)
        metric = "no sample" if row["measured_pods_per_second"] is None else f"{row['measured_pods_per_second']:.0f}"
        thr = f"{row['threshold']:.0f}" if row["threshold"] else "-"
        ratio = f"{row['ratio']:.1f}x" if row["ratio"] else "-"
        print(f"{name + '/' + workload:52} {row['status']:8} {metric:>9} {row['phase_pods_per_second'] or 0:9.0f} "
              f"{row['cpu_s']:7.1f} {thr:>9} {ratio:>6}", flush=True)


if __name__ == "__main__":
    main()
