"""Upstream's scheduler_perf DRA workloads (``dra/performance-config.yaml`` of v1.37.2, vendored
unchanged) at upstream's sizes, beside upstream's thresholds, plus the allocator and CEL alone.

Run: python benchmarks/bench_dra.py [--workload NAME/WORKLOAD ...] [--micro]

Method: ``common.upstream_perf_row`` (the scheduler_perf runner on the process-CPU clock, as
``fastsched perf --cpu-time``); the init pods are scheduled as upstream does (no prebinding: their
claims must be allocated). Reported per workload: upstream's SchedulingThroughput Average by
upstream's collector rules (none when the measured phase kept no sample), the measured phase's own
pods/s (fastsched's figure) and the CPU seconds of the whole run. ``--micro`` times one Allocate
call on a node with 10 devices and a CEL selector evaluation. (PublishResourceSlices, which
schedules no pod, is left out.)

    python -m pytest benchmarks/bench_dra.py --benchmark-only
"""
from __future__ import annotations

import argparse
import statistics
import time

import pytest
from common import upstream_perf_row

WORKLOADS = [
    ("SchedulingWithResourceClaimTemplate", "5000pods_500nodes"),
    ("SchedulingWithResourceClaimTemplate", "empty_500nodes"),
    ("SchedulingWithResourceClaimTemplate", "half_500nodes"),
    ("SchedulingWithResourceClaimTemplate", "full_500nodes"),
    ("SchedulingWithResourceClaimTemplate", "selector_empty_500nodes"),
    ("SchedulingWithResourceClaimTemplate", "match_empty_500nodes"),
]


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
    row = benchmark.pedantic(upstream_perf_row, args=("dra", name, workload), rounds=1, iterations=1)
    assert row["status"] == "passed", (row["status"], row["reason"])
    benchmark.extra_info.update(row)


def test_allocator_and_cel(benchmark):
    out = benchmark.pedantic(micro, rounds=1, iterations=1)
    benchmark.extra_info.update({k: round(v, 2) for k, v in out.items()})


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--workload", action="append", help="NAME/WORKLOAD (repeatable)")
    ap.add_argument("--micro", action="store_true", help="also time Allocate and CEL alone")
    args = ap.parse_args()
    if args.micro:
        micro()
    chosen = [tuple(w.split("/", 1)) for w in args.workload] if args.workload else WORKLOADS
    print(f"{'workload':60} {'status':8} {'metric':>9} {'phase/s':>9} {'cpu s':>7} {'threshold':>9} {'ratio':>7}")
    for name, workload in chosen:
        row = upstream_perf_row("dra", name, workload)
        metric = "no sample" if row["measured_pods_per_second"] is None else f"{row['measured_pods_per_second']:.0f}"
        thr = f"{row['threshold']:.0f}" if row["threshold"] else "-"
        ratio = f"{row['ratio']:.1f}x" if row["ratio"] else "-"
        print(f"{name + '/' + workload:60} {row['status']:8} {metric:>9} {row['phase_pods_per_second'] or 0:9.0f} "
              f"{row['cpu_s']:7.1f} {thr:>9} {ratio:>7}", flush=True)


if __name__ == "__main__":
    main()
