"""Upstream's scheduler_perf ``performance`` workloads of ``misc/``, ``affinity/`` and
``topology_spreading/`` at upstream's sizes (v1.37.2's configs, vendored unchanged), beside
upstream's thresholds (``volumes/`` and ``dra/`` are bench_volumes.py's and bench_dra.py's).

One workload per test case and size: the variants that differ only by a feature gate
(``..._QueueingHintsEnabled``, ``..._AsyncAPICallsEnabled``, ``..._NodeDeclaredFeaturesDisabled``,
...) are left out. Init pods are prebound round-robin (``prebind_init=True``, a faster set-up;
the measured pods are scheduled).

What is timed: upstream's own test cases through fastsched's scheduler_perf runner on the
process-CPU clock (``common.upstream_perf_row``, as ``fastsched perf --cpu-time``): upstream's
SchedulingThroughput Average by upstream's collector rules, none when the measured phase kept no
sample (a phase shorter than about two CPU seconds: upstream reports no value then), and the
measured phase's own pods/s beside it as fastsched's figure; the CPU seconds of the whole run.
With ``FASTSCHED_BENCH_RESCALE=10`` (here and in bench_volumes.py, bench_dra.py) a case whose
phase kept fewer than 3 samples is run again with ten times its measured pods (``fastsched perf
--rescale-no-sample 10 --min-samples 3``) and that run's metric is recorded beside it.

    python -m pytest benchmarks/bench_upstream_perf.py --benchmark-only
"""
from __future__ import annotations

import pytest
from common import UPSTREAM_CONFIGS, upstream_perf_row

from fastsched.perf import load_perf_config

TOPICS = ("misc", "affinity", "topology_spreading")


def _cases() -> list[tuple[str, str, str]]:
    out = []
    for topic in TOPICS:
        config = load_perf_config(UPSTREAM_CONFIGS / topic / "performance-config.yaml")
        for tc in config.test_cases:
            for w in tc.workloads:
                if "performance" in (w.labels or []) and not w.name.endswith(("Enabled", "Disabled")):
                    out.append((topic, tc.name, w.name))
    return out


CASES = _cases()


@pytest.mark.parametrize("topic,name,workload", CASES, ids=[f"{t}/{n}/{w}" for t, n, w in CASES])
def test_upstream_workload(benchmark, topic, name, workload):
    row = benchmark.pedantic(upstream_perf_row, args=(topic, name, workload), kwargs={"prebind_init": True},
                             rounds=1, iterations=1)
    assert row["status"] == "passed", (row["status"], row["reason"])
    benchmark.extra_info.update(row)
