"""Upstream's scheduler_perf volume workloads (``volumes/performance-config.yaml``) at upstream's
sizes, beside upstream's thresholds.

Run: python benchmarks/bench_volumes.py [--rounds 3] [--workload NAME/WORKLOAD ...]

Method: :func:`fastsched.perf.run_workload` on the vendored config
(``tests/perf/data/upstream/volumes``), one process, ``prebind_init=True`` (the init pods, each
with its bound PV and claim, are bound round-robin instead of scheduled: a faster set-up; the
measured pods are scheduled). Reported per workload: upstream's SchedulingThroughput average
(``measured``, what the threshold is checked against), the measured phase's pods per wall-clock
second, and the CPU seconds of the whole run (``time.process_time``, the process's CPU time: the machine is shared); the
median of ``--rounds`` runs.

What is timed: this file runs upstream's own test cases through fastsched's scheduler_perf runner,
so its figure is upstream's metric, not ``common.py``'s: SchedulingThroughput of the measured
phase, on the runner's clock that advances by the wall time fastsched spends working (README, "Run
upstream's scheduler_perf configs"); the CPU seconds of the process over the whole run (set-up
included) are reported beside it (``common.perf_run``): the machine's other processes do not
inflate them. ``python -m pytest benchmarks/bench_volumes.py --benchmark-only`` runs
each workload once and records these in extra_info.
"""
from __future__ import annotations

import argparse
import statistics
from pathlib import Path

import pytest
from common import perf_run

from fastsched.perf import load_perf_config

CONFIG = Path(__file__).resolve().parent.parent / "tests/perf/data/upstream/volumes/performance-config.yaml"
WORKLOADS = [
    ("SchedulingInTreePVs", "5000Nodes_2000Pods"),
    ("SchedulingMigratedInTreePVs", "5000Nodes_5000Pods"),
    ("SchedulingCSIPVs", "5000Nodes_5000Pods"),
    ("SchedulingInTreePVs", "5000Nodes"),
    ("PreemptionPVs", "1000Nodes"),
    ("SchedulingSecrets", "5000Nodes_10000Pods"),
]


def run(name: str, workload: str, rounds: int) -> dict:
    config = load_perf_config(CONFIG)
    measured, phase, cpu = [], [], []
    threshold = None
    status = ""
    for _ in range(rounds):
        r, run_cpu = perf_run(config, name, workload, topic="volumes", prebind_init=True)
        cpu.append(run_cpu)
        status = r.status
        measured.append(r.measured or 0.0)
        phase.append(max((p.pods_per_second or 0.0) for p in r.phases) if r.phases else 0.0)
        threshold = r.ratio and (r.measured / r.ratio)
    m = statistics.median(measured)
    return {"workload": f"{name}/{workload}", "status": status, "measured": m, "phase_pods_s": statistics.median(phase),
            "cpu_s": statistics.median(cpu), "threshold": threshold,
            "ratio": (m / threshold) if threshold else None}


@pytest.mark.parametrize("name,workload", WORKLOADS, ids=[f"{n}/{w}" for n, w in WORKLOADS])
def test_volume_workload(benchmark, name, workload):
    row = benchmark.pedantic(run, args=(name, workload, 1), rounds=1, iterations=1)
    assert row["status"] == "passed", row
    benchmark.extra_info.update(measured_pods_per_second=round(row["measured"]),
                                phase_pods_per_second=round(row["phase_pods_s"]), cpu_s=round(row["cpu_s"], 2),
                                threshold=row["threshold"], ratio=row["ratio"] and round(row["ratio"], 1))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--workload", action="append", help="NAME/WORKLOAD (repeatable)")
    args = ap.parse_args()
    chosen = [tuple(w.split("/", 1)) for w in args.workload] if args.workload else WORKLOADS
    print(f"{'workload':52} {'status':8} {'measured':>9} {'phase/s':>9} {'cpu s':>7} {'threshold':>9} {'ratio':>6}")
    for name, workload in chosen:
        row = run(name, workload, args.rounds)
        thr = f"{row['threshold']:.0f}" if row["threshold"] else "-"
        ratio = f"{row['ratio']:.1f}x" if row["ratio"] else "-"
        print(f"{row['workload']:52} {row['status']:8} {row['measured']:9.0f} {row['phase_pods_s']:9.0f} "
              f"{row['cpu_s']:7.1f} {thr:>9} {ratio:>6}", flush=True)


if __name__ == "__main__":
    main()
