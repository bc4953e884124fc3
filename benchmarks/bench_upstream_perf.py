"""Upstream's scheduler_perf ``performance`` workloads of ``misc/``, ``affinity/`` and
``topology_spreading/`` at upstream's sizes, beside upstream's thresholds (``volumes/`` and
``dra/`` are bench_volumes.py's and bench_dra.py's).

One workload per test case and size: the variants that differ only by a feature gate
(``..._QueueingHintsEnabled``, ``..._AsyncAPICallsEnabled``, ``..._NodeDeclaredFeaturesDisabled``,
...) are left out, as fastsched runs v1.34's defaults for gates it does not model and for gates set
to their defaults, so those variants repeat the same run. Init pods are prebound round-robin
(``prebind_init=True``, a faster set-up; the measured pods are scheduled).

What is timed: this file runs upstream's own test cases through fastsched's scheduler_perf runner,
so its figure is upstream's metric, not ``common.py``'s: SchedulingThroughput ``Average`` of the
measured phase (or, for a phase shorter than two 1 s samples, its overall pods/s, as ``fastsched
perf`` shows it with a ``*``), on the runner's clock that advances by the wall time fastsched spends
working (README, "Run upstream's scheduler_perf configs"). The CPU seconds of the process over the
whole run (set-up included) are recorded beside it (``common.perf_run``): the machine's other
processes do not inflate them.

    python -m pytest benchmarks/bench_upstream_perf.py --benchmark-only
"""
from __future__ import annotations

from pathlib import Path

import pytest
from common import perf_run

from fastsched.perf import load_perf_config

UPSTREAM = Path(__file__).resolve().parent.parent / "tests/perf/data/upstream"
TOPICS = ("misc", "affinity", "topology_spreading")


def _cases() -> list[tuple[str, str, str]]:
    out = []
    for topic in TOPICS:
        config = load_perf_config(UPSTREAM / topic / "performance-config.yaml")
        for tc in config.test_cases:
            for w in tc.workloads:
                if "performance" in (w.labels or []) and not w.name.endswith(("Enabled", "Disabled")):
                    out.append((topic, tc.name, w.name))
    return out


CASES = _cases()


@pytest.mark.parametrize("topic,name,workload", CASES, ids=[f"{t}/{n}/{w}" for t, n, w in CASES])
def test_upstream_workload(benchmark, topic, name, workload):
    config = load_perf_config(UPSTREAM / topic / "performance-config.yaml")

    r, cpu = benchmark.pedantic(perf_run, args=(config, name, workload),
                                kwargs={"topic": topic, "prebind_init": True}, rounds=1, iterations=1)
    assert r.status == "passed", (r.status, r.reason)
    threshold = (r.measured / r.ratio) if r.ratio else None
    benchmark.extra_info.update(measured_pods_per_second=round(r.measured or 0.0, 1),
                                no_throughput_sample=r.no_throughput_sample,  # a short phase: no metric
                                phase_pods_per_second=[p.pods_per_second for p in r.phases],
                                threshold=threshold, ratio=r.ratio and round(r.ratio, 1), cpu_s=round(cpu, 2),
                                pods_created=r.pods_created, pods_scheduled=r.pods_scheduled,
                                preemption_victims=r.preemption_victims)
