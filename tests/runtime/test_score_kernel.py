"""The batched weight/range-check kernel against a one-node-at-a-time reference."""
import numpy as np
import pytest

from fastsched.framework import Parallelizer
from fastsched.runtime import ScoreRangeError, weight_and_check


def reference(scores, weights, names):
    """Upstream's loop: nodes in order, plugins in order; the first bad score raises."""
    n_plugins, n_nodes = scores.shape
    weighted = np.zeros_like(scores)
    totals = np.zeros(n_nodes, dtype=np.int64)
    for i in range(n_nodes):
        for p in range(n_plugins):
            s = int(scores[p, i])
            if s < 0 or s > 100:
                raise ScoreRangeError(names[p], s, i)
            weighted[p, i] = s * int(weights[p])
            totals[i] += weighted[p, i]
    return weighted, totals


@pytest.mark.parametrize("seed", range(20))
@pytest.mark.parametrize("parallelism,threads", [(16, 2), (16, 1), (1, 1), (3, 2)])
def test_matches_reference_on_random_matrices(seed, parallelism, threads):
    rng = np.random.default_rng(seed)
    n_plugins = int(rng.integers(1, 10))
    n_nodes = int(rng.integers(1, 3000))
    scores = rng.integers(0, 101, size=(n_plugins, n_nodes), dtype=np.int64)
    weights = rng.integers(1, 6, size=n_plugins, dtype=np.int64)
    names = [f"P{i}" for i in range(n_plugins)]
    if seed % 2:  # plant out-of-range scores at random places
        for _ in range(int(rng.integers(1, 4))):
            p, i = int(rng.integers(n_plugins)), int(rng.integers(n_nodes))
            scores[p, i] = int(rng.choice([-5, -1, 101, 1000]))
    par = Parallelizer(parallelism, max_threads=threads)
    try:
        want = reference(scores, weights, names)
    except ScoreRangeError as e:
        with pytest.raises(ScoreRangeError) as got:
            weight_and_check(scores, weights, names, par, min_parallel_elements=0)
        assert (got.value.plugin, got.value.score, got.value.node_index) == (e.plugin, e.score, e.node_index)
        assert str(got.value) == str(e)
        return
    weighted, totals = weight_and_check(scores, weights, names, par, min_parallel_elements=0)
    np.testing.assert_array_equal(weighted, want[0])
    np.testing.assert_array_equal(totals, want[1])


def test_first_error_is_by_node_then_plugin():
    scores = np.full((3, 500), 50, dtype=np.int64)
    scores[2, 100] = 101  # node 100, plugin 2
    scores[1, 300] = -1
    scores[0, 101] = 200
    with pytest.raises(ScoreRangeError) as e:
        weight_and_check(scores, np.ones(3, dtype=np.int64), ["A", "B", "C"], Parallelizer(16, max_threads=2),
                         min_parallel_elements=0)
    assert e.value.node_index == 100 and e.value.plugin == "C" and e.value.score == 101
    assert str(e.value) == 'plugin "C" returns an invalid score 101, it should in the range of [0, 100] after normalizing'


def test_small_matrices_take_the_sequential_path_with_the_same_answer():
    rng = np.random.default_rng(1)
    scores = rng.integers(0, 101, size=(4, 1000), dtype=np.int64)
    scores[3, 500] = 200
    scores[0, 700] = -3
    par = Parallelizer(16, max_threads=2)
    for min_parallel in (0, 10**9):
        with pytest.raises(ScoreRangeError) as e:
            weight_and_check(scores, np.ones(4, dtype=np.int64), list("ABCD"), par, min_parallel_elements=min_parallel)
        assert (e.value.node_index, e.value.plugin) == (500, "D")


def test_bounds_are_inclusive_and_empty_inputs():
    scores = np.array([[0, 100]], dtype=np.int64)
    w, t = weight_and_check(scores, np.array([7]), ["A"], Parallelizer())
    assert w.tolist() == [[0, 700]] and t.tolist() == [0, 700]
    w, t = weight_and_check(np.zeros((0, 4), dtype=np.int64), np.zeros(0, dtype=np.int64), [], Parallelizer())
    assert t.tolist() == [0, 0, 0, 0]
    with pytest.raises(ValueError, match="weights has shape"):
        weight_and_check(scores, np.array([1, 2]), ["A"], Parallelizer())
