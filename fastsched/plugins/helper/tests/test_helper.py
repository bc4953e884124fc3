"""The shared plugin helpers: DefaultNormalizeScore and the vectorized node-selector evaluation,
checked against upstream's rules and against fastsched.api.labels' per-node matching."""
from __future__ import annotations

import random

import numpy as np
import pytest

from fastsched.api import (NodeSelector, NodeSelectorRequirement, NodeSelectorTerm, PreferredSchedulingTerm,
                           preferred_node_affinity_score, required_node_affinity_matches)
from fastsched.framework import NodeScore
from fastsched.plugins.helper import (default_normalize_score, label_int_values, match_labels_mask,
                                      node_selector_mask, node_selector_term_mask, preferred_terms_score,
                                      required_node_affinity_mask)
from fastsched.snapshot import build_snapshot
from fastsched.testing import make_node, random_pod, random_snapshot

from .support import random_selector, random_term


# ------------------------------------------------------------------------------------------------
# default_normalize_score
# ------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("raw, reverse, want", [
    ([0, 0, 0], False, [0, 0, 0]),
    ([0, 0, 0], True, [100, 100, 100]),
    ([], True, []),
    ([1, 2, 3], False, [33, 66, 100]),
    ([1, 2, 3], True, [67, 34, 0]),
    ([2, 11, 7], False, [18, 100, 63]),  # node_affinity_test: weights 2, 11, 4+3
    ([5, 0, 10], True, [50, 100, 0]),
    ([-3, 0, 7], False, [-42, 0, 100]),  # negative scores truncate toward zero, as Go does
])
def test_default_normalize_score_list_and_array(raw, reverse, want):
    scores = [NodeScore(f"n{i}", s) for i, s in enumerate(raw)]
    assert default_normalize_score(100, reverse, scores) is None
    assert [s.score for s in scores] == want
    array = np.array(raw, dtype=np.int64)
    assert default_normalize_score(100, reverse, array) is None
    assert array.tolist() == want


def test_default_normalize_score_non_contiguous_and_int32_arrays():
    matrix = np.array([[1, 9], [2, 9], [4, 9]], dtype=np.int64)
    column = matrix[:, 0]  # strided view
    default_normalize_score(100, False, column)
    assert matrix[:, 0].tolist() == [25, 50, 100]
    small = np.array([3, 6], dtype=np.int32)
    default_normalize_score(10, True, small)
    assert small.tolist() == [5, 0]


# ------------------------------------------------------------------------------------------------
# node selectors: targeted cases
# ------------------------------------------------------------------------------------------------
def _req(key, op, *values):
    return NodeSelectorRequirement(key, op, values)


def _term(expressions=(), fields=()):
    return NodeSelectorTerm(expressions, fields)


@pytest.fixture
def small_snapshot():
    nodes = [
        make_node("a", labels={"tier": "3", "disk": "ssd", "k": "007"}),
        make_node("b", labels={"tier": "high", "disk": "hdd", "k": "+5"}),
        make_node("c", labels={"tier": "-2", "k": "99999999999999999999"}),
        make_node("d", labels={"disk": ""}),
    ]
    return build_snapshot(nodes)


def _per_node(snapshot, predicate):
    return [predicate(view.node()) for view in snapshot.batch()]


@pytest.mark.parametrize("term", [
    _term([_req("tier", "Gt", "2")]),
    _term([_req("tier", "Lt", "0")]),
    _term([_req("k", "Gt", "6")]),          # "007" parses as 7, "+5" as 5, the huge value not at all
    _term([_req("k", "Lt", "+10")]),
    _term([_req("tier", "Gt", "x")]),       # parse error: matches nothing
    _term([_req("tier", "Gt", "1", "2")]),  # parse error: two values
    _term([_req("disk", "In", "ssd", "nvme")]),
    _term([_req("disk", "In", "")]),        # "" is a valid label value
    _term([_req("disk", "NotIn", "ssd")]),  # NotIn holds where the label is absent
    _term([_req("disk", "Exists")]),
    _term([_req("disk", "DoesNotExist")]),
    _term([_req("missing", "NotIn", "x")]),
    _term([_req("missing", "In", "x")]),
    _term([_req("disk", "Exists", "x")]),   # parse error: Exists with values
    _term([_req("disk", "Bogus", "x")]),    # parse error: unknown operator
    _term([_req("bad key!", "Exists")]),     # parse error: invalid key
    _term([], [_req("metadata.name", "In", "b")]),
    _term([], [_req("metadata.name", "NotIn", "b")]),
    _term([], [_req("metadata.name", "In", "zzz")]),
    _term([], [_req("metadata.name", "In", "a", "b")]),  # parse error: two values
    _term([], [_req("metadata.uid", "NotIn", "b")]),     # other fields read as ""
    _term([], [_req("metadata.uid", "In", "")]),
    _term([_req("disk", "Exists")], [_req("metadata.name", "In", "a")]),
    _term(),                                  # empty term matches nothing
])
def test_term_mask_matches_per_node(small_snapshot, term):
    want = _per_node(small_snapshot, term.matches)
    assert node_selector_term_mask(term, small_snapshot.batch()).tolist() == want


def test_targeted_term_results(small_snapshot):
    batch = small_snapshot.batch()
    names = batch.names

    def matched(term):
        return sorted(n for n, m in zip(names, node_selector_term_mask(term, batch)) if m)

    assert matched(_term([_req("tier", "Gt", "2")])) == ["a"]
    assert matched(_term([_req("k", "Gt", "6")])) == ["a"]
    assert matched(_term([_req("k", "Lt", "10")])) == ["a", "b"]
    # "+10" and "-1" parse as integers but are not valid label values: a parse error, no match
    assert matched(_term([_req("k", "Lt", "+10")])) == []
    assert matched(_term([_req("tier", "Lt", "-1")])) == []
    assert matched(_term([_req("disk", "NotIn", "ssd")])) == ["b", "c", "d"]
    assert matched(_term([_req("tier", "Gt", "x")])) == []
    assert matched(_term([], [_req("metadata.uid", "NotIn", "b")])) == ["a", "b", "c", "d"]


def test_selector_ors_terms_and_empty_selector_matches_nothing(small_snapshot):
    batch = small_snapshot.batch()
    selector = NodeSelector([_term([_req("tier", "Gt", "x")]), _term([_req("disk", "In", "hdd")]),
                             _term([], [_req("metadata.name", "In", "c")])])
    assert node_selector_mask(selector, batch).tolist() == _per_node(small_snapshot, selector.matches)
    assert sorted(n for n, m in zip(batch.names, node_selector_mask(selector, batch)) if m) == ["b", "c"]
    assert not node_selector_mask(NodeSelector([]), batch).any()


def test_match_labels_mask(small_snapshot):
    batch = small_snapshot.batch()
    assert match_labels_mask(None, batch).all()
    assert match_labels_mask({}, batch).all()
    assert match_labels_mask({"disk": "ssd"}, batch).tolist() == [n == "a" for n in batch.names]
    assert match_labels_mask({"disk": ""}, batch).tolist() == [n == "d" for n in batch.names]
    assert not match_labels_mask({"disk": "ssd", "tier": "high"}, batch).any()
    assert not match_labels_mask({"nope": "x"}, batch).any()


def test_int_values_cache_follows_new_label_values():
    snapshot = build_snapshot([make_node("a", labels={"tier": "1"}), make_node("b", labels={"tier": "x"})])
    numbers, valid = label_int_values(snapshot.table, "tier")
    assert numbers.tolist() == [1, 0, 0] and valid.tolist() == [True, False, False]
    term = _term([_req("tier", "Gt", "4")])
    assert not node_selector_term_mask(term, snapshot.batch()).any()
    snapshot.add_node(make_node("c", labels={"tier": "9"}))
    snapshot.update_node(make_node("a", labels={"tier": "12"}))
    assert node_selector_term_mask(term, snapshot.batch()).tolist() == _per_node(snapshot, term.matches)
    assert sum(node_selector_term_mask(term, snapshot.batch())) == 2
    numbers, valid = label_int_values(snapshot.table, "tier")
    assert numbers.tolist()[:-1] == [1, 0, 9, 12] and valid.tolist() == [True, False, True, True, False]


def test_unnamed_node_skips_match_fields():
    snapshot = build_snapshot([make_node("x"), make_node("y")])
    node = make_node("x").replace(name="")
    snapshot.add_node(node)
    term = _term([_req("kubernetes.io/hostname", "Exists")], [_req("metadata.name", "In", "x")])
    assert node_selector_term_mask(term, snapshot.batch()).tolist() == _per_node(snapshot, term.matches)


# ------------------------------------------------------------------------------------------------
# node selectors: randomized equivalence with fastsched.api.labels
# ------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("seed", range(10))
def test_random_selectors_match_per_node(seed):
    rng = random.Random(1000 + seed)
    snapshot = random_snapshot(seed, 200, 0)
    batch = snapshot.batch()
    nodes = [view.node() for view in batch]
    matched_some = 0
    for _ in range(40):
        selector = random_selector(rng)
        want = [selector.matches(node) for node in nodes]
        got = node_selector_mask(selector, batch)
        assert got.tolist() == want, selector
        matched_some += 0 < sum(want) < len(want)
        terms = [PreferredSchedulingTerm(rng.choice((0, 1, 7, 100)), random_term(rng)) for _ in range(3)]
        want_scores = [preferred_node_affinity_score(terms, node) for node in nodes]
        assert preferred_terms_score(terms, batch).tolist() == want_scores
    for i in range(40):
        pod = random_pod(rng, i)
        want = [required_node_affinity_matches(pod, node) for node in nodes]
        assert required_node_affinity_mask(pod, batch).tolist() == want
    assert matched_some >= 3  # the selectors really split the nodes


def test_sub_batch_order_is_kept():
    snapshot = random_snapshot(3, 120, 0)
    batch = snapshot.batch()
    sub = batch.select(np.arange(len(batch))[::-3])
    selector = NodeSelector([_term([_req("tier", "Gt", "2")]), _term([_req("gpu", "Exists")])])
    assert node_selector_mask(selector, sub).tolist() == [selector.matches(v.node()) for v in sub]
