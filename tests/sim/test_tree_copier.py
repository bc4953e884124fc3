"""``fastsched.sim.storage.tree_copier`` (the scheduler_perf volume pair's manifest copies): equal
to a deep copy, in new containers at every call, the same key order, and the pickle path for
trees that are not plain literals."""
from __future__ import annotations

import copy
import datetime
import functools
import math
import random

import pytest

from fastsched.sim.storage import tree_copier

_LEAVES = ["", "a'b\"c", "\\n\u00e9\U0001f600", 0, -7, 2 ** 70, 1.5, -0.0, 1e-300, True, False, None]


def _tree(rng: random.Random, depth: int = 0):
    r = rng.random()
    if depth < 4 and r < 0.35:
        return {rng.choice(["a", "b", "spec", "x y", "1", "é"]) + str(rng.randrange(5)): _tree(rng, depth + 1)
                for _ in range(rng.randint(0, 4))}
    if depth < 4 and r < 0.55:
        return [_tree(rng, depth + 1) for _ in range(rng.randint(0, 3))]
    return rng.choice(_LEAVES)


def _ids(tree, out):
    """The ids of every container in ``tree``."""
    if isinstance(tree, (dict, list)):
        out.add(id(tree))
        for v in (tree.values() if isinstance(tree, dict) else tree):
            _ids(v, out)
    return out


def _same(a, b) -> bool:
    """Equal, with the same types and dict key order all the way down (-0.0 keeps its sign)."""
    if type(a) is not type(b):
        return False
    if type(a) is dict:
        return list(a) == list(b) and all(_same(a[k], b[k]) for k in a)
    if type(a) is list:
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    if type(a) is float:
        return a == b and math.copysign(1, a) == math.copysign(1, b)
    return a == b


@pytest.mark.parametrize("seed", range(5))
def test_plain_trees_copy_as_a_deep_copy_in_new_containers(seed):
    rng = random.Random(seed)
    for _ in range(200):
        tree = {"apiVersion": "v1", "spec": _tree(rng), "metadata": _tree(rng)}
        copier = tree_copier(tree)
        assert not isinstance(copier, functools.partial)   # compiled from the literal
        first, second = copier(), copier()
        want = copy.deepcopy(tree)
        assert _same(first, want) and _same(second, want)
        # no container shared with the template or between two copies
        assert not (_ids(first, set()) & _ids(tree, set())) and not (_ids(first, set()) & _ids(second, set()))


@pytest.mark.parametrize("leaf", [datetime.date(2024, 1, 2), math.inf, math.nan, (1, 2), b"x", {"a"}])
def test_trees_with_other_leaves_are_pickled(leaf):
    tree = {"spec": {"list": [1, leaf]}}
    copier = tree_copier(tree)
    assert isinstance(copier, functools.partial)
    got = copier()
    assert got is not tree and got["spec"] is not tree["spec"]
    if leaf == leaf:   # (nan is not equal to itself)
        assert got == tree


class Tagged(str):
    """A str subclass (a loader's tagged scalar): its repr would load as a plain str."""


def test_a_str_subclass_is_not_a_literal():
    tree = {"a": Tagged("x")}
    assert isinstance(tree_copier(tree), functools.partial)
    assert type(tree_copier(tree)()["a"]) is Tagged
