"""Upstream's scheduler_perf DRA workloads (``dra/performance-config.yaml``) at upstream's sizes,
beside upstream's thresholds, plus the allocator and CEL alone.

Run: python benchmarks/bench_dra.py [--rounds 3] [--workload NAME/WORKLOAD ...] [--micro]

Method: :func:`fastsched.perf.run_workload` on the vendored config
(``tests/perf/data/upstream/dra``), one process; the init pods are scheduled as upstream does
(no prebinding: their claims must be allocated). Reported per workload: upstream's
SchedulingThroughput average (``measured``, what the threshold is checked against; for a measured
phase shorter than two 1 s samples its overall pods/s, as ``fastsched perf`` shows it), the CPU
seconds of the whole run (``time.process_time``, the process's CPU time: the machine is shared) and the median of
``--rounds`` runs. ``--micro`` times one Allocate call on a node with 10 devices and a CEL
selector evaluation.

What is timed: this file runs upstream's own test cases through fastsched's scheduler_perf runner,
so its figure is upstream's metric, not ``common.py``'s: SchedulingThroughput of the measured
phase, on the runner's clock that advances by the wall time fastsched spends working (README, "Run
upstream's scheduler_perf configs"); the CPU seconds of the process over the whole run (set-up
included) are reported beside it (``common.perf_run``): the machine's other processes do not
inflate them. ``python -m pytest benchmarks/bench_dra.py --benchmark-only`` runs
each workload once and records these in extra_info.
"""
from __future__ import annotations

import argparse
import statistics
import time
import warnings
from pathlib import Path

import pytest
from common import perf_run

from fastsched.perf import load_perf_config

CONFIG = Path(__file__).resolve().parent.parent / "tests/perf/data/upstream/dra/performance-config.yaml"
WORKLOADS = [
    ("SchedulingWithResourceClaimTemplate", "5000pods_500nodes"),
    ("SchedulingWithResourceClaimTemplate", "5000pods_500nodes_QueueingHintsEnabled"),
    ("SteadyStateClusterResourceClaimTemplate", "empty_500nodes"),
    ("SteadyStateClusterResourceClaimTemplate", "empty_500nodes_QueueingHintsEnabled"),
    ("SteadyStateClusterResourceClaimTemplate", "half_500nodes"),
    ("SteadyStateClusterResourceClaimTemplate", "half_500nodes_QueueingHintsEnabled"),
    ("SteadyStateClusterResourceClaimTemplate", "full_500nodes"),
    ("SteadyStateClusterResourceClaimTemplate", "full_500nodes_QueueingHintsEnabled"),
    ("SchedulingWithResourceClaim", "5000pods_500nodes"),
]


def run(name: str, workload: str, rounds: int) -> dict:
    config = load_perf_config(CONFIG)
    measured, cpu = [], []
    threshold = None
    status = ""
    for _ in range(rounds):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the DRA gates are v1.34's defaults
            r, run_cpu = perf_run(config, name, workload, topic="dra")
        cpu.append(run_cpu)
        status = r.status
        measured.append(r.measured or 0.0)
        threshold = r.ratio and (r.measured / r.ratio)
    m = statistics.median(measured)
    return {"workload": f"{name}/{workload}", "status": status, "measured": m, "cpu_s": statistics.median(cpu),
            "threshold": threshold, "ratio": (m / threshold) if threshold else None, "runs": measured}


def micro() -> dict:
    """One Allocate call and one CEL evaluation, in µs of wall time (median of 2,000 calls each;
    each call is too short for the CPU clocks)."""
    from fastsched.dra.allocator import Allocator, Features
    from fastsched.api.cel import compile_expression, device_input
    from fastsched.dra.perf_ops import resource_slice
    from fastsched.api.resource import parse_device_class, parse_resource_claim, parse_resource_slice
    from fastsched.testing import make_node

    slice_ = parse_resource_slice(resource_slice("test-driver.cdi.k8s.io", "n", 10))
    cls = parse_device_class({"metadata": {"name": "c"}, "spec": {"selectors": [
        {"cel": {"expression": 'device.driver == "test-driver.cdi.k8s.io"'}}]}})
    claim = parse_resource_claim({"metadata": {"name": "x"}, "spec": {"devices": {"requests": [
        {"name": "r", "exactly": {"deviceClassName": "c"}}]}}})
    node = make_node("n")
    allocator = Allocator(Features(), set(), {"c": cls}.get, [slice_])
    times = []
    for _ in range(2000):
        t = time.perf_counter()
        allocator.allocate(node, [claim])
        times.append(time.perf_counter() - t)
    allocate = statistics.median(times) * 1e6
    print(f"Allocate (1 claim, 1 device of 10, cached selector): {allocate:.1f} µs")
    expr = compile_expression('device.attributes["test-driver.cdi.k8s.io"].model == "A100"')
    inp = device_input("test-driver.cdi.k8s.io", slice_.devices[0])
    times = []
    for _ in range(2000):
        t = time.perf_counter()
        expr.matches(inp)
        times.append(time.perf_counter() - t)
    cel = statistics.median(times) * 1e6
    print(f"CEL evaluation (uncached): {cel:.1f} µs")
    return {"allocate_us": allocate, "cel_evaluation_us": cel}


@pytest.mark.parametrize("name,workload", WORKLOADS, ids=[f"{n}/{w}" for n, w in WORKLOADS])
def test_dra_workload(benchmark, name, workload):
    row = benchmark.pedantic(run, args=(name, workload, 1), rounds=1, iterations=1)
    assert row["status"] == "passed", row
    benchmark.extra_info.update(measured_pods_per_second=round(row["measured"]), cpu_s=round(row["cpu_s"], 2),
                                threshold=row["threshold"], ratio=row["ratio"] and round(row["ratio"], 1))


def test_allocator_and_cel(benchmark):
    out = benchmark.pedantic(micro, rounds=1, iterations=1)
    benchmark.extra_info.update({k: round(v, 2) for k, v in out.items()})


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--workload", action="append", help="NAME/WORKLOAD (repeatable)")
    ap.add_argument("--micro", action="store_true", help="also time Allocate and CEL alone")
    args = ap.parse_args()
    if args.micro:
        micro()
    chosen = [tuple(w.split("/", 1)) for w in args.workload] if args.workload else WORKLOADS
    print(f"{'workload':70} {'status':8} {'measured':>9} {'cpu s':>7} {'threshold':>9} {'ratio':>7}  runs")
    for name, workload in chosen:
        row = run(name, workload, args.rounds)
        thr = f"{row['threshold']:.0f}" if row["threshold"] else "-"
        ratio = f"{row['ratio']:.1f}x" if row["ratio"] else "-"
        runs = ", ".join(f"{v:.0f}" for v in row["runs"])
        print(f"{row['workload']:70} {row['status']:8} {row['measured']:9.0f} {row['cpu_s']:7.1f} {thr:>9} "
              f"{ratio:>7}  {runs}", flush=True)


if __name__ == "__main__":
    main()
