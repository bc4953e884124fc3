"""``go_sort_slice`` against Go's own ``sort.Slice`` (pdqsort, not stable beyond 12 elements).

``gosort_vectors.json``: 48 lists of 13-72 int keys (random with few distinct values, mostly
decreasing, increasing with ties, random) and the permutation Go 1.26's ``sort.Slice`` leaves them
in, from this program (``go run .``):

    r := rand.New(rand.NewSource(20261129))
    for t := 0; t < 48; t++ {
        n := 13 + r.Intn(60); kr := 1 + r.Intn(5); keys := make([]int, n)
        for i := range keys {
            switch t % 4 {
            case 0: keys[i] = r.Intn(kr)
            case 1: keys[i] = (n - i) / (1 + r.Intn(3))
            case 2: keys[i] = i / 4; if r.Intn(10) == 0 { keys[i] = r.Intn(n) }
            default: keys[i] = r.Intn(n)
            }
        }
        idx := []int{0, 1, ..., n-1}
        sort.Slice(idx, func(i, j int) bool { return keys[idx[i]] < keys[idx[j]] })
        // emit {"keys": keys, "order": idx}
    }

45 of the 48 differ from a stable sort's order, so a stable stand-in fails here.
"""
from __future__ import annotations

import json
import pathlib
import random

import pytest

from fastsched.util.gosort import go_sort_slice

VECTORS = json.loads((pathlib.Path(__file__).parent / "gosort_vectors.json").read_text())


@pytest.mark.parametrize("i", range(len(VECTORS)))
def test_go_sort_slice_matches_go(i):
    keys, want = VECTORS[i]["keys"], VECTORS[i]["order"]
    idx = list(range(len(keys)))
    go_sort_slice(idx, lambda a, b: keys[a] < keys[b])
    assert idx == want


def test_stable_sort_differs_from_go():
    """The vectors do tell the two apart (the reason for the port)."""
    differ = sum(sorted(range(len(v["keys"])), key=v["keys"].__getitem__) != v["order"] for v in VECTORS)
    assert differ == 45


@pytest.mark.parametrize("seed", range(20))
def test_go_sort_slice_sorts(seed):
    """Whatever the tie order, the result is sorted and a permutation (sizes up to 300: the
    ninther, partial insertion sort's shifting and breakPatterns)."""
    rng = random.Random(seed)
    n = rng.randrange(0, 300)
    keys = [rng.randrange(max(1, n // rng.choice((1, 3, 50)))) for _ in range(n)]
    if seed % 3 == 0:
        keys.sort(reverse=seed % 2 == 0)
    idx = list(range(n))
    go_sort_slice(idx, lambda a, b: keys[a] < keys[b])
    assert sorted(idx) == list(range(n))
    assert all(keys[idx[k]] <= keys[idx[k + 1]] for k in range(n - 1))


def test_up_to_twelve_is_insertion_sort():
    """``maxInsertion``: up to 12 elements Go's order is the stable one."""
    rng = random.Random(7)
    for _ in range(200):
        keys = [rng.randrange(3) for _ in range(rng.randrange(13))]
        idx = list(range(len(keys)))
        go_sort_slice(idx, lambda a, b: keys[a] < keys[b])
        assert idx == sorted(range(len(keys)), key=keys.__getitem__)
