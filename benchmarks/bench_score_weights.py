"""RunScorePlugins' weight + range-check step: the batched Cython kernel against a per-node loop.

Run: python -m pytest benchmarks/bench_score_weights.py --benchmark-only

What is timed: one call on a score matrix built before timing (the kernel holds no cache);
extra_info records the median CPU ms of the process per call (``time.process_time``) over
repeated calls.
"""
import statistics
import time

import numpy as np
import pytest

from fastsched.framework import Parallelizer
from fastsched.runtime import weight_and_check

PLUGINS = 8  # the default profile's Score plugins


def cpu_ms(fn, *args, calls=7):
    """Median CPU ms of ``calls`` calls of ``fn(*args)``."""
    times = []
    for _ in range(calls):
        c = time.process_time()
        fn(*args)
        times.append(time.process_time() - c)
    return round(statistics.median(times) * 1e3, 4)


def make(n_nodes, seed=0):
    rng = np.random.default_rng(seed)
    scores = rng.integers(0, 101, size=(PLUGINS, n_nodes), dtype=np.int64)
    weights = np.array([3, 2, 1, 1, 2, 2, 1, 1], dtype=np.int64)
    return scores, weights, [f"P{i}" for i in range(PLUGINS)]


def per_node_python(scores, weights):
    """Upstream's loop shape in Python: one node at a time, plugins inside."""
    s = scores.tolist()
    w = weights.tolist()
    totals = []
    for i in range(scores.shape[1]):
        t = 0
        for p in range(len(w)):
            v = s[p][i]
            if v < 0 or v > 100:
                raise ValueError(v)
            t += v * w[p]
        totals.append(t)
    return totals


@pytest.mark.parametrize("n_nodes", [5_000, 100_000, 1_000_000])
def test_kernel(benchmark, n_nodes):
    scores, weights, names = make(n_nodes)
    par = Parallelizer(16)
    benchmark.extra_info["nodes"] = n_nodes
    _, totals = benchmark(weight_and_check, scores, weights, names, par)
    assert totals.tolist() == (weights @ scores).tolist()
    benchmark.extra_info["cpu_ms_median"] = cpu_ms(weight_and_check, scores, weights, names, par, calls=21)


@pytest.mark.parametrize("n_nodes", [5_000, 100_000])
def test_per_node_python(benchmark, n_nodes):
    scores, weights, _ = make(n_nodes)
    benchmark.extra_info["nodes"] = n_nodes
    totals = benchmark(per_node_python, scores, weights)
    assert totals == (weights @ scores).tolist()
    benchmark.extra_info["cpu_ms_median"] = cpu_ms(per_node_python, scores, weights, calls=5)
