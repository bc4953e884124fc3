"""``CountSubscription.coded_counts`` (PodTopologySpread's per-domain counts over the rows a pod's
inclusion policies keep, kept up to date across cycles) against a recount from scratch, on seeded
random clusters after random pod adds (one and many at once), removals and node changes."""
from __future__ import annotations

import random

import numpy as np
import pytest

from fastsched.api.labels import LabelSelector
from fastsched.plugins.interpodaffinity.tests.generators import (APPS, EXISTING_POD_NAMESPACES, HOSTNAME, ZONE,
                                                                 random_affinity_cluster, random_existing_pod,
                                                                 random_selector)
from fastsched.snapshot import build_snapshot
from fastsched.testing import random_node

KEYS = (HOSTNAME, ZONE, "disktype")


def _groupings(table, rng: random.Random) -> list[tuple[np.ndarray, int]]:
    """(codes by row, number of codes) per key: every row, or a random subset of the rows."""
    out = []
    for key in KEYS:
        column = table.label_codes.get(key)
        n_values = len(table.label_values.get(key, ()))
        for keep in ((1.0,) if key == ZONE else (0.6,)):
            codes = np.full(table.capacity, -1, dtype=np.int64)
            if column is not None:
                for row in table.row_of.values():
                    if column[row] >= 0 and rng.random() < keep:
                        codes[row] = column[row]
            out.append((codes, n_values))
    return out


def _check(table, selectors, groupings) -> None:
    for namespace, selector in selectors:
        def matches(ns, labels, namespace=namespace, selector=selector):
            return ns == namespace and selector.matches(labels)
        sub = table.matching_counts(("coded-test", namespace, selector), matches)
        scratch = table.count_matching_pods(matches)  # (C,) from the signatures, not the subscription
        for codes, n_codes in groupings:
            expected = np.zeros(n_codes, dtype=np.int64)
            ok = codes >= 0
            np.add.at(expected, codes[ok], scratch[ok])
            assert np.array_equal(sub.coded_counts(table, codes, n_codes), expected)


@pytest.mark.parametrize("seed", range(6))
def test_coded_counts_match_a_recount(seed):
    rng = random.Random(seed)
    nodes, pods = random_affinity_cluster(seed, n_nodes=40, n_pods=120)
    snap = build_snapshot(nodes, pods)
    table = snap.table
    selectors = [(rng.choice(EXISTING_POD_NAMESPACES), LabelSelector.from_dict(sel) if sel is not None
                  else LabelSelector.from_match_labels({"app": APPS[1]}))
                 for sel in (random_selector(rng) for _ in range(3))]
    selectors.append(("default", LabelSelector.from_match_labels({"app": APPS[0]})))
    on_table = {p.uid: p for p in pods if p.node_name in table.row_of}
    next_pod, next_node = len(pods), len(nodes)
    version = table.node_version
    groupings = _groupings(table, rng)  # within MAX_CODED_VIEWS: kept up to date between queries
    _check(table, selectors, groupings)
    for step in range(60):
        op = rng.random()
        names = list(table.row_of)
        if op < 0.4 and names:  # one pod
            p = random_existing_pod(rng, next_pod, rng.choice(names))
            next_pod += 1
            snap.add_pod(p)
            on_table[p.uid] = p
        elif op < 0.5 and names:  # many pods at once
            batch = [random_existing_pod(rng, next_pod + i, rng.choice(names)) for i in range(rng.randint(1, 12))]
            next_pod += len(batch)
            snap.add_pods(batch)
            on_table.update((p.uid, p) for p in batch)
        elif op < 0.8 and on_table:  # a pod goes
            snap.remove_pod(on_table.pop(rng.choice(sorted(on_table))))
        elif op < 0.87:  # a new node
            snap.add_node(random_node(rng, next_node))
            next_node += 1
        elif op < 0.94 and names:  # a node's labels change
            table.update_node(random_node(rng, 0).replace(name=rng.choice(names)))
        elif names:  # a node goes, with its pods
            name = rng.choice(names)
            snap.remove_node(name)
            on_table = {u: p for u, p in on_table.items() if p.node_name != name}
        if table.node_version != version:  # the nodes changed: the caller groups the rows afresh
            version = table.node_version
            groupings = _groupings(table, rng)
        _check(table, selectors, groupings)
        if step % 10 == 9:  # more groupings than views: the oldest views are evicted and rebuilt
            _check(table, selectors, _groupings(table, rng) + _groupings(table, rng))


@pytest.mark.parametrize("seed", range(4))
def test_critical_paths_of_many_domains(seed):
    """The critical paths of more domains than the Python loop takes (the compiled pass) are the
    two smallest (count, first appearance) domains, as upstream's update over the domains in
    order keeps them: ties are frequent (counts drawn from a few values)."""
    from fastsched.plugins.podtopologyspread.filtering import _SMALL_DOMAINS, _critical_paths
    rng = random.Random(seed)
    for _ in range(50):
        n = rng.randint(_SMALL_DOMAINS + 1, 80)
        counts = np.array([rng.randint(0, 3) for _ in range(n)], dtype=np.int64)
        codes = np.array(rng.sample(range(200), n), dtype=np.int64)
        values = [f"v{i}" for i in range(200)]
        first, second = sorted(range(n), key=lambda i: (counts[i], i))[:2]
        assert _critical_paths(values, codes, counts).as_tuple() == \
            ((values[codes[first]], int(counts[first])), (values[codes[second]], int(counts[second])))
        # PreFilter's one pass: the counts gathered by code from the counts by label code, and the
        # same two positions (by_code: the codes' counts scattered over 200 label codes)
        from fastsched._kernels import _table
        by_code = np.zeros(200, dtype=np.int64)
        by_code[codes] = counts
        out = np.full(n + rng.randint(0, 3), -9, dtype=np.int64)
        assert _table.gather_two_smallest(by_code, codes, out) == (first, second)
        assert out[:n].tolist() == counts.tolist()
        assert _table.two_smallest(counts[::-1]) == _table.two_smallest(counts[::-1].copy())  # strided
    from fastsched._kernels import _table
    assert _table.gather_two_smallest(np.zeros(3, dtype=np.int64), np.zeros(0, dtype=np.int64),
                                      np.zeros(0, dtype=np.int64)) == (-1, -1)
    assert _table.gather_two_smallest(np.array([4, 2], dtype=np.int64), np.array([0], dtype=np.int64),
                                      np.zeros(1, dtype=np.int64)) == (0, -1)
    for bad in (3, -1):
        with pytest.raises(IndexError, match="outside the 3 counts"):
            _table.gather_two_smallest(np.zeros(3, dtype=np.int64), np.array([0, bad], dtype=np.int64),
                                       np.zeros(2, dtype=np.int64))


def _normalized_by_numpy(scores: np.ndarray) -> np.ndarray:
    low, high = int(scores.min()), max(0, int(scores.max()))
    if high == 0:
        return np.full(len(scores), 100, dtype=np.int64)
    return 100 * (high + low - scores) // high


@pytest.mark.parametrize("seed", range(4))
def test_normalize_kernel_matches_numpy(seed):
    """NormalizeScore's compiled pass (no ignored node) gives NumPy's answer, floor division
    included, on random scores: negative, all zero, all equal, one node."""
    from fastsched._kernels import _table
    rng = random.Random(seed)
    for _ in range(200):
        n = rng.randint(1, 40)
        low = rng.choice((-50, 0, 0, 3))
        scores = np.array([rng.randint(low, low + rng.choice((0, 1, 7, 300))) for _ in range(n)], dtype=np.int64)
        expected = _normalized_by_numpy(scores)
        _table.normalize_reverse(scores, 100)
        assert scores.tolist() == expected.tolist()


def test_domains_present_kernel_matches_numpy():
    """``_interpodaffinity.domains_present`` (PreScore's registered domains) against the NumPy
    scatter it replaced, on random code columns and row subsets: codes out of range ignored, every
    code seen early (the pass stops) and rows repeating."""
    from fastsched._kernels import _interpodaffinity as ipa
    rng = random.Random(7)
    for _ in range(300):
        n_codes = rng.randint(0, 7)
        capacity = rng.randint(1, 40)
        code_by_row = np.array([rng.randint(-2, n_codes + 1) for _ in range(capacity)], dtype=np.int64)
        rows = np.array([rng.randrange(capacity) for _ in range(rng.randint(0, 60))], dtype=np.int64)
        codes = code_by_row[rows]
        codes = codes[(codes >= 0) & (codes < n_codes)]
        registered = np.zeros(n_codes, dtype=np.uint8)
        registered[codes] = 1
        present, k = ipa.domains_present(code_by_row, rows, n_codes)
        assert present.dtype == np.uint8 and present.tolist() == registered.tolist()
        assert k == int(registered.sum())
        # stop_at: the distinct in-range codes of a superset of the rows (PreScore's filtered
        # nodes within all nodes) changes no answer; a smaller one stops after that many codes
        superset = np.unique(np.concatenate([rows, np.array([rng.randrange(capacity) for _ in range(5)],
                                                            dtype=np.int64)]))
        held = code_by_row[superset]
        held = int(np.unique(held[(held >= 0) & (held < n_codes)]).size)
        present, k = ipa.domains_present(code_by_row, rows, n_codes, held)
        assert present.tolist() == registered.tolist() and k == int(registered.sum())
        if k:
            stop = rng.randint(1, k)
            present, k2 = ipa.domains_present(code_by_row, rows, n_codes, stop)
            seen = [int(c) for c in code_by_row[rows] if 0 <= c < n_codes]
            first = list(dict.fromkeys(seen))[:stop]  # the first codes met, in row order
            assert k2 == stop and np.flatnonzero(present).tolist() == sorted(first)
    for bad in (3, -1):
        with pytest.raises(IndexError, match="outside a column"):
            ipa.domains_present(np.zeros(3, dtype=np.int64), np.array([bad], dtype=np.int64), 2)
    with pytest.raises(ValueError, match="int64"):
        ipa.domains_present(np.zeros(3, dtype=np.int32), np.array([0], dtype=np.int64), 2)


def _scores_by_upstream_loop(parts, rows) -> list[int]:
    """Upstream Score's loop, one node at a time in Python floats (float64), Go's rounding: a
    domain no filtered node registered is not in the map (count 0)."""
    from fastsched.plugins.podtopologyspread.common import go_round
    out = []
    for row in rows.tolist():
        score = 0.0
        for codes, counts, present, weight, base in parts:
            code = int(codes[row])
            if code < 0:
                continue
            if present is None:
                count = int(counts[row])
            else:
                count = int(counts[code]) if present[code] else 0
            score += float(count) * weight + base
        out.append(go_round(score))
    return out


def test_spread_scores_kernel_matches_upstreams_loop():
    """``_interpodaffinity.spread_scores`` (Score's compiled pass) against upstream's per-node loop
    on random label columns, per-domain counts with registered domains and per-row counts: parts
    in order, rows without a key adding nothing, unregistered domains counting 0, sums landing on
    .5 (half away from zero) and big weights; a code past the counts is an error."""
    from fastsched._kernels import _interpodaffinity as ipa
    from fastsched.plugins.podtopologyspread.common import go_log
    rng = random.Random(11)
    for _ in range(300):
        capacity = rng.randint(1, 30)
        parts = []
        for _ in range(rng.randint(1, 3)):
            n_values = rng.randint(1, 5)
            codes = np.array([rng.randint(-1, n_values - 1) for _ in range(capacity)], dtype=np.int32)
            base = float(rng.randint(0, 4))
            weight = rng.choice((0.5, 0.25, go_log(float(rng.randint(2, 5000))), 1e6 / 3))
            if rng.random() < 0.5:  # a hostname constraint: per-row counts
                counts = np.array([rng.randint(0, 9) for _ in range(capacity)], dtype=np.int64)
                parts.append((codes, counts, None, weight, base))
            else:  # per domain code, with the virtual "" domain last
                counts = np.array([rng.randint(0, 12) for _ in range(n_values + 1)], dtype=np.int64)
                present = np.array([rng.random() < 0.8 for _ in range(n_values + 1)], dtype=np.uint8)
                parts.append((codes, counts, present, weight, base))
        rows = np.array([rng.randrange(capacity) for _ in range(rng.randint(0, 40))], dtype=np.int64)
        out = np.full(len(rows), -7, dtype=np.int64)
        ipa.spread_scores(parts, rows, out)
        assert out.tolist() == _scores_by_upstream_loop(parts, rows)
    # more parts than the kernel's small buffer (8), and no part (every score 0)
    capacity = 12
    parts = [(np.array([rng.randint(-1, 2) for _ in range(capacity)], dtype=np.int32),
              np.array([rng.randint(0, 5) for _ in range(3)], dtype=np.int64), np.ones(3, dtype=np.uint8),
              rng.choice((0.5, 0.25, 1.5)), float(rng.randint(0, 3))) for _ in range(11)]
    rows = np.arange(capacity, dtype=np.int64)
    out = np.full(capacity, -7, dtype=np.int64)
    ipa.spread_scores(parts, rows, out)
    assert out.tolist() == _scores_by_upstream_loop(parts, rows)
    ipa.spread_scores([], rows, out)
    assert out.tolist() == [0] * capacity
    # rounding at the edges: halves away from zero, just below a half, negative sums, big sums
    codes = np.zeros(1, dtype=np.int32)
    for weight, count, base in ((1.0, 0, 0.49999999999999994), (1.0, 0, 2.5), (1.0, 0, -2.5), (1.0, 0, -2.4999999999999996),
                                (0.5, 5, 0.0), (0.5, -5, 0.0), (1.0, 0, 2.0 ** 53 + 2), (1.0, 0, -(2.0 ** 60)),
                                (0.1, 7, 0.3)):
        parts = [(codes, np.array([count], dtype=np.int64), np.ones(1, dtype=np.uint8), weight, base)]
        ipa.spread_scores(parts, np.zeros(1, dtype=np.int64), out)
        assert out[0] == _scores_by_upstream_loop(parts, np.zeros(1, dtype=np.int64))[0], (weight, count, base)
    with pytest.raises(IndexError, match="outside a column"):
        ipa.spread_scores([(codes, np.zeros(1, dtype=np.int64), None, 1.0, 0.0)], np.array([1], dtype=np.int64), out)
    for bad in (1, -1):  # (one part by code: the per-code table's path; then the general one)
        with pytest.raises(IndexError, match="outside a column"):
            ipa.spread_scores([(codes, np.zeros(1, dtype=np.int64), np.ones(1, dtype=np.uint8), 1.0, 0.0)],
                              np.array([0, bad], dtype=np.int64), out)
        with pytest.raises(IndexError, match="outside a column"):
            ipa.spread_scores([(codes, np.zeros(1, dtype=np.int64), None, 1.0, 0.0)], np.array([bad], dtype=np.int64), out)
    codes = np.array([0, 3], dtype=np.int32)
    with pytest.raises(ValueError, match="past the 2 domain counts"):
        ipa.spread_scores([(codes, np.zeros(2, dtype=np.int64), np.ones(3, dtype=np.uint8), 1.0, 0.0)],
                          np.array([0, 1], dtype=np.int64), np.zeros(2, dtype=np.int64))



def _cleared_by_numpy(checks, rows, mask, first):
    """``_table.clear_failing``'s mask, a check at a time over the whole window (its definition)."""
    out = mask.copy()
    if first:
        out[rows] = 1
    for counts, column, absent_ok, lo, hi in checks:
        for r in rows.tolist():
            if not out[r]:
                continue
            d = int(column[r])
            if d < 0:
                if not absent_ok:
                    out[r] = 0
                continue
            c = int(counts[d]) if d < len(counts) else 0
            if c < lo or c > hi:
                out[r] = 0
    return out


def test_clear_failing_kernel_matches_a_pass_per_check():
    """``_table.clear_failing`` (the compiled cycle's window Filter of PodTopologySpread and
    InterPodAffinity) against a pass per check: random columns with absent labels, counts shorter
    than the codes, strided rows and counts, repeated rows, set (first) or ANDed into a random mask,
    more checks than its small buffer; out-of-range rows (negative too) and dtypes refused."""
    from fastsched._kernels import _table
    rng = random.Random(5)
    for _ in range(300):
        capacity = rng.randint(1, 30)
        checks = []
        for _ in range(rng.choice((0, 1, 1, 2, 3, 6))):
            v = rng.randint(1, 6)
            column = np.array([rng.randint(-1, v) for _ in range(capacity)], dtype=np.int32)
            counts = np.array([rng.randint(-2, 9) for _ in range(2 * v)], dtype=np.int64)
            counts = counts[::2] if rng.random() < 0.5 else counts[:rng.randint(0, v)]  # strided, or short
            lo = rng.choice((-(1 << 63), 0, 2))
            checks.append((counts, column, rng.random() < 0.5, lo, lo + rng.randint(0, 6)))
        rows = np.array([rng.randrange(capacity) for _ in range(rng.randint(0, 2 * capacity))], dtype=np.int64)
        if rng.random() < 0.3:
            rows = np.repeat(rows, 2)[::2]  # a strided view
        mask = np.array([rng.random() < 0.7 for _ in range(capacity)], dtype=np.uint8)
        first = rng.random() < 0.5
        expected = _cleared_by_numpy(checks, rows, mask, first)
        _table.clear_failing(checks, rows, mask, first)
        assert mask.tolist() == expected.tolist()
    column = np.zeros(2, dtype=np.int32)
    for bad in (2, -1):
        with pytest.raises(IndexError, match="outside the mask"):
            _table.clear_failing([], np.array([bad], dtype=np.int64), np.zeros(2, dtype=np.uint8), True)
    with pytest.raises(IndexError, match="outside a label column"):
        _table.clear_failing([(np.zeros(1, dtype=np.int64), column, False, 0, 0)], np.array([2], dtype=np.int64),
                             np.zeros(3, dtype=np.uint8), True)
    with pytest.raises(ValueError, match="int32"):
        _table.clear_failing([(np.zeros(1, dtype=np.int64), column.astype(np.int64), False, 0, 0)],
                             np.array([0], dtype=np.int64), np.zeros(2, dtype=np.uint8), True)
    with pytest.raises(ValueError, match="read-only"):
        ro = np.zeros(2, dtype=np.uint8)
        ro.setflags(write=False)
        _table.clear_failing([], np.array([0], dtype=np.int64), ro, True)
