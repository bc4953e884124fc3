"""The table's count subscriptions (kept up to date as pods and nodes come and go) against counts
computed from scratch, on seeded random clusters after random pod adds/removes and node
adds/updates/removals: the per-row arrays, the per-domain views, InterPodAffinity's PreFilter and
PreScore states and PodTopologySpread's per-row selector counts."""
from __future__ import annotations

import random

import numpy as np
import pytest

from fastsched.api.labels import LabelSelector
from fastsched.config.args import InterPodAffinityArgs
from fastsched.plugins.interpodaffinity import filtering, scoring
from fastsched.plugins.interpodaffinity.plugin import new as new_plugin
from fastsched.plugins.interpodaffinity.terms import (preferred_affinity_terms, preferred_anti_affinity_terms,
                                                      required_affinity_terms, required_anti_affinity_terms)
from fastsched.plugins.podtopologyspread.common import table_match_counts
from fastsched.snapshot import build_snapshot
from fastsched.testing import random_node

from .generators import (APPS, EXISTING_POD_NAMESPACES, HOSTNAME, NAMESPACES, ZONE, random_affinity_cluster,
                         random_existing_pod, random_incoming_pod, random_labels, random_selector)

KEYS = (HOSTNAME, ZONE, "topology.kubernetes.io/region", "disktype")


def _scratch_counts(table, matches) -> np.ndarray:
    return table.count_matching_pods(matches)


def _check(table, rng: random.Random, incoming: list, selectors: list) -> None:
    live = np.fromiter(table.row_of.values(), dtype=np.int64, count=len(table))
    subset = live[np.array([rng.random() < 0.6 for _ in range(len(live))], dtype=bool)] if len(live) else live
    for rows in (live, subset):
        mask = filtering.row_mask(table, rows)
        for pod in incoming:
            aff, anti = required_affinity_terms(pod), required_anti_affinity_terms(pod)
            ns = NAMESPACES.get(pod.namespace)
            ns_labels = ns.labels if ns is not None else None
            assert filtering.incoming_incremental(aff, anti, table, rows) == \
                filtering.incoming_on_table(aff, anti, table, mask)
            assert filtering.existing_anti_affinity_incremental(pod, ns_labels, table, rows) == \
                filtering.existing_anti_affinity_on_table(pod, ns_labels, table, mask)
            pref, pref_anti = preferred_affinity_terms(pod), preferred_anti_affinity_terms(pod)
            for hard in (0, 1):
                assert scoring.scores_incremental(pod, ns_labels, pref, pref_anti, hard, table, rows) == \
                    scoring.scores_on_table(pod, ns_labels, pref, pref_anti, hard, table, mask)
    for namespace, selector in selectors:
        def matches(ns, labels, namespace=namespace, selector=selector):
            return ns == namespace and selector.matches(labels)
        sub = table.matching_counts(("test", namespace, selector), matches)
        scratch = _scratch_counts(table, matches)
        assert np.array_equal(sub.rows, scratch)
        for key in KEYS:
            column = table.label_codes.get(key)
            n_values = len(table.label_values.get(key, ()))
            expected = np.zeros(n_values, dtype=np.int64)
            if column is not None:
                ok = column >= 0
                np.add.at(expected, column[ok], scratch[ok])
            got = sub.domain_counts(table, key)
            assert np.array_equal(got[:n_values], expected) and not got[n_values:].any()
        # PodTopologySpread's per-row counts: terminating pods excluded
        expected = scratch.copy()
        for row in np.flatnonzero(table.terminating_pods).tolist():
            for pi in table.pods[row]:
                p = pi.pod
                if p.deletion_timestamp is not None and p.namespace == namespace and selector.matches(p.labels):
                    expected[row] -= 1
        if not selector.is_empty() and not selector.selects_nothing():
            assert np.array_equal(table_match_counts(table, selector, namespace), expected)


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("max_subs", [3, 256])
def test_incremental_counts_match_scratch(seed, max_subs):
    rng = random.Random(seed)
    nodes, pods = random_affinity_cluster(seed, n_nodes=40, n_pods=120)
    snap = build_snapshot(nodes, pods)
    table = snap.table
    table.MAX_SUBSCRIPTIONS = max_subs  # a small registry exercises eviction and re-subscription
    incoming = [random_incoming_pod(rng, i) for i in range(4)]
    selectors = []
    for _ in range(4):
        sel = random_selector(rng)
        selectors.append((rng.choice(EXISTING_POD_NAMESPACES),
                          LabelSelector.from_dict(sel) if sel is not None else LabelSelector.from_match_labels({})))
    selectors.append(("default", LabelSelector.from_match_labels({"app": APPS[0]})))
    on_table = {p.uid: p for p in pods if p.node_name in table.row_of}
    next_pod, next_node = len(pods), len(nodes)
    _check(table, rng, incoming, selectors)
    guard_plugins = [new_plugin(InterPodAffinityArgs(hard_pod_affinity_weight=w)) for w in (0, 1)]
    forms_by_guard: dict = {}
    for step in range(40):
        held = _held_states(table, incoming)
        op = rng.random()
        names = list(table.row_of)
        if op < 0.1 and on_table:  # a pod's labels change (the cache removes it and adds it back)
            old = on_table.pop(rng.choice(sorted(on_table)))
            snap.remove_pod(old)
            new = old.replace(labels=random_labels(rng))
            snap.add_pod(new)
            on_table[new.uid] = new
        elif op < 0.35 and names:  # one pod
            p = random_existing_pod(rng, next_pod, rng.choice(names))
            next_pod += 1
            snap.add_pod(p)
            on_table[p.uid] = p
        elif op < 0.45 and names:  # many pods at once
            batch = [random_existing_pod(rng, next_pod + i, rng.choice(names)) for i in range(rng.randint(1, 12))]
            next_pod += len(batch)
            snap.add_pods(batch)
            on_table.update((p.uid, p) for p in batch)
        elif op < 0.7 and on_table:  # remove a pod
            uid = rng.choice(sorted(on_table))
            snap.remove_pod(on_table.pop(uid))
        elif op < 0.8:  # a new node
            snap.add_node(random_node(rng, next_node))
            next_node += 1
        elif op < 0.9 and names:  # a node's labels change
            name = rng.choice(names)
            fresh = random_node(rng, 0)
            table.update_node(fresh.replace(name=name))
        elif names:  # a node goes, with its pods
            name = rng.choice(names)
            snap.remove_node(name)
            on_table = {u: p for u, p in on_table.items() if p.node_name != name}
        _assert_unmoved(table, held)
        _check_guard(table, incoming, guard_plugins, forms_by_guard)
        if step % 4 == 0:
            incoming.append(random_incoming_pod(rng, 100 + step))
            incoming.pop(0)
        _check(table, rng, incoming, selectors)


def _check_guard(table, incoming: list, plugins: list, forms_by_guard: dict) -> None:
    """The compiled cycle keeps a pod's plan while its spec and ``column_guard`` stay: the form
    must be a function of the two. Each long-lived plugin (hard weight 0 and 1, its parsed
    signatures kept across steps) answers as a fresh plugin, and an equal guard gives an equal
    form for a pod (pods without terms too: their form depends on the table alone)."""
    probes = [*incoming, *(p.replace(affinity=None) for p in incoming)]
    for kept in plugins:
        fresh = new_plugin(kept.args)
        for i, pod in enumerate(probes):
            guard, form = kept.column_guard(pod, table), kept.column_form(pod, table)
            assert (guard, form) == (fresh.column_guard(pod, table), fresh.column_form(pod, table))
            assert forms_by_guard.setdefault((id(kept), pod.uid, i, guard), form) == form


def _held_states(table, incoming: list) -> list:
    """PreFilter's counts for each incoming pod over every row, with copies of their arrays: a
    state lives through its cycle (Filter, PostFilter) and must not follow later pod changes."""
    live = np.fromiter(table.row_of.values(), dtype=np.int64, count=len(table))
    held: list = []
    for pod in incoming:
        ns = NAMESPACES.get(pod.namespace)
        counts = [filtering.existing_anti_affinity_incremental(pod, ns.labels if ns is not None else None,
                                                               table, live),
                  *filtering.incoming_incremental(required_affinity_terms(pod), required_anti_affinity_terms(pod),
                                                  table, live)]
        held.extend((c, {k: a.copy() for k, a in c.arrays(table).items()}) for c in counts)
    return held


def _assert_unmoved(table, held: list) -> None:
    for counts, arrays in held:
        now = counts.arrays(table) if counts._table is table else counts._arrays
        assert now.keys() == arrays.keys() and all(np.array_equal(now[k], a) for k, a in arrays.items())


def test_subscriptions_stay_bounded():
    nodes, pods = random_affinity_cluster(1, n_nodes=20, n_pods=40)
    table = build_snapshot(nodes, pods).table
    table.MAX_SUBSCRIPTIONS = 5
    for i in range(50):
        table.matching_counts(("k", i), lambda ns, labels, i=i: labels.get("app") == APPS[i % len(APPS)])
    assert len(table._subs) <= 5
    registered = {id(s) for subs in table._sig_subs.values() for s in subs}
    assert registered <= {id(s) for s in table._subs.values()}


def test_class_counts_survive_dropped_and_forgotten_subscriptions():
    """The per-class subscriptions of existing pods' terms (Filter's required anti-affinity, the
    scores' terms) start over, without counting a pod twice, when the table drops its
    subscriptions or the class cache forgets its state."""
    rng = random.Random(11)
    nodes, pods = random_affinity_cluster(11, n_nodes=30, n_pods=90)
    snap = build_snapshot(nodes, pods)
    table = snap.table
    live = np.fromiter(table.row_of.values(), dtype=np.int64, count=len(table))
    mask = filtering.row_mask(table, live)
    incoming = [random_incoming_pod(rng, i) for i in range(6)]

    def check():
        for pod in incoming:
            ns = NAMESPACES.get(pod.namespace)
            ns_labels = ns.labels if ns is not None else None
            assert filtering.existing_anti_affinity_incremental(pod, ns_labels, table, live) == \
                filtering.existing_anti_affinity_on_table(pod, ns_labels, table, mask)
            pref, pref_anti = preferred_affinity_terms(pod), preferred_anti_affinity_terms(pod)
            for hard in (0, 1):
                assert scoring.scores_incremental(pod, ns_labels, pref, pref_anti, hard, table, live) == \
                    scoring.scores_on_table(pod, ns_labels, pref, pref_anti, hard, table, mask)

    check()
    for i in range(20):  # pods come, with new anti-affinity signatures among them
        snap.add_pod(random_existing_pod(rng, 1000 + i, rng.choice(sorted(table.row_of))))
    check()
    table.drop_subscriptions()
    check()
    filtering._CLASS_COUNTS.clear()  # the class states are forgotten; the table keeps their subscriptions
    filtering._LAST_CLASS.clear()    # (as class_counts clears both)
    check()
    check()


@pytest.mark.parametrize("seed", range(8))
def test_column_guard_follows_signatures_that_can_score(seed):
    """:func:`_check_guard` on tables that start with no pod whose terms can score (pods without
    affinity), then gain pods with random terms (the first signature that scores turns the
    forms of pods without preferred terms from a static PreScore Skip to a per-cycle PreScore)
    and lose pods again."""
    rng = random.Random(seed)
    nodes, pods = random_affinity_cluster(seed, n_nodes=20, n_pods=30)
    pods = [p.replace(affinity=None) for p in pods]
    snap = build_snapshot(nodes, pods)
    table = snap.table
    incoming = [random_incoming_pod(rng, i) for i in range(6)]
    plugins = [new_plugin(InterPodAffinityArgs(hard_pod_affinity_weight=w)) for w in (0, 1)]
    forms_by_guard: dict = {}
    on_table = {p.uid: p for p in pods if p.node_name in table.row_of}
    names = list(table.row_of)
    _check_guard(table, incoming, plugins, forms_by_guard)
    for step in range(30):
        op = rng.random()
        if op < 0.2:
            p = random_existing_pod(rng, 1000 + step, rng.choice(names))
        elif op < 0.6:
            p = random_existing_pod(rng, 1000 + step, rng.choice(names)).replace(affinity=None)
        else:
            p = None
            if on_table:
                snap.remove_pod(on_table.pop(rng.choice(sorted(on_table))))
        if p is not None:
            snap.add_pod(p)
            on_table[p.uid] = p
        _check_guard(table, incoming, plugins, forms_by_guard)


@pytest.mark.parametrize("seed", range(4))
def test_weighted_domain_sums_kernel_matches_numpy(seed):
    """PreScore's one-pass per-key map (``_interpodaffinity.weighted_domain_sums``) against the
    NumPy sums DomainSums.add_all takes: weighted sums, and "some contribution landed" from the
    unweighted sum even where the weights cancel (an entry upstream keeps at score 0), with count
    arrays shorter than the key's values (values only grow)."""
    from fastsched._kernels import _interpodaffinity as _ipa
    rng = np.random.default_rng(seed)
    for _ in range(50):
        n_values = int(rng.integers(0, 12))
        m = int(rng.integers(1, 5))
        counts = [rng.integers(0, 3, size=int(rng.integers(0, n_values + 1))).astype(np.int64) for _ in range(m)]
        weights = [int(w) for w in rng.choice([-3, -1, 1, 2, 100], size=m)]
        if m >= 2 and rng.random() < 0.5:  # two subscriptions of the same pods whose weights cancel
            counts[1], weights[1] = counts[0], -weights[0]
        want_sums = np.zeros(n_values, dtype=np.int64)
        landed = np.zeros(n_values, dtype=np.int64)
        for c, w in zip(counts, weights):
            want_sums[:len(c)] += c * w
            landed[:len(c)] += c
        sums, present, any_present = _ipa.weighted_domain_sums(counts, weights, n_values)
        assert sums.dtype == np.int64 and present.dtype == bool
        np.testing.assert_array_equal(sums, want_sums)
        np.testing.assert_array_equal(present, landed > 0)
        assert any_present == bool((landed > 0).any())


@pytest.mark.parametrize("seed", range(4))
def test_class_counts_of_consecutive_pods_with_their_own_label_dicts(seed):
    """``class_counts`` compares the last class it looked up (``_LAST_CLASS``) by contents: pods
    parsed one manifest each (equal labels, distinct dicts) in runs of one class, a pod whose labels
    differ from the last one's in one value, in one key more, or only in its namespace or namespace
    labels: the counts and scores stay the per-signature (on-table) ones."""
    rng = random.Random(seed)
    nodes, pods = random_affinity_cluster(seed + 40, n_nodes=30, n_pods=90)
    snap = build_snapshot(nodes, pods)
    table = snap.table
    live = np.fromiter(table.row_of.values(), dtype=np.int64, count=len(table))
    mask = filtering.row_mask(table, live)
    base = [random_incoming_pod(rng, i) for i in range(5)]
    # labels the existing pods carry (their terms select such labels), each on two consecutive
    # pods with dicts of their own, then the next pod's: consecutive classes that score differently
    label_sets = [dict(p.labels) for p in pods[:12]] + [dict(p.labels) for p in base]
    sequence = []
    for i, labels in enumerate(label_sets):
        pod = base[i % len(base)]
        sequence += [pod.replace(labels=dict(labels)), pod.replace(labels=dict(labels))]
        key = next(iter(labels), "app")
        sequence.append(pod.replace(labels={**labels, key: labels.get(key, "") + "x"}))  # one value differs
        sequence.append(pod.replace(labels={**labels, "extra": "1"}))                    # one key more
        sequence.append(pod.replace(labels=dict(labels), namespace=pods[i].namespace))   # namespace only
    namespace_labels = [None, dict(NAMESPACES["prod"].labels), dict(NAMESPACES["dev"].labels)]

    def check(pod, ns_labels):
        assert filtering.existing_anti_affinity_incremental(pod, ns_labels, table, live) == \
            filtering.existing_anti_affinity_on_table(pod, ns_labels, table, mask)
        pref, pref_anti = preferred_affinity_terms(pod), preferred_anti_affinity_terms(pod)
        assert scoring.scores_incremental(pod, ns_labels, pref, pref_anti, 1, table, live) == \
            scoring.scores_on_table(pod, ns_labels, pref, pref_anti, 1, table, mask)

    for ns_labels in namespace_labels:
        for pod in sequence:
            check(pod, ns_labels)
    for pod in sequence[:10]:
        for ns_labels in namespace_labels:  # consecutive pods of one class but their namespace labels
            check(pod, ns_labels)


@pytest.mark.parametrize("seed", range(4))
def test_score_kernels_match_numpy(seed):
    """Score's per-key gather (``add_scores_at``) and NormalizeScore (``normalize``) against NumPy
    and upstream's float64 formula, on random label columns (absent labels, codes past the scores'
    end) and scores, with the arrays the kernels refuse (wrong dtype, not contiguous, read-only
    output, a row outside the column) refused before anything is written."""
    from fastsched._kernels import _interpodaffinity as _ipa
    rng = np.random.default_rng(seed)
    for _ in range(50):
        n_values, cap = int(rng.integers(0, 8)), int(rng.integers(1, 40))
        column = rng.integers(-1, n_values + 2, size=cap).astype(np.int32)
        scores = rng.integers(-50, 50, size=n_values).astype(np.int64)
        rows = rng.integers(0, cap, size=int(rng.integers(0, 30))).astype(np.int64)
        out = rng.integers(-5, 5, size=len(rows)).astype(np.int64)
        codes = column[rows].astype(np.int64)
        ok = (codes >= 0) & (codes < n_values)
        want = out.copy()
        want[ok] += scores[codes[ok]]
        _ipa.add_scores_at(scores, column, rows, out)
        np.testing.assert_array_equal(out, want)
        lo, hi = (int(out.min()), int(out.max())) if len(out) else (0, 0)
        expect = [int(100.0 * (float(s - lo) / float(hi - lo))) if hi > lo else 0 for s in out.tolist()]
        _ipa.normalize(out)
        assert out.tolist() == expect
    column, scores = np.zeros(4, dtype=np.int32), np.ones(1, dtype=np.int64)
    rows, out = np.arange(3, dtype=np.int64), np.zeros(3, dtype=np.int64)
    read_only = np.zeros(3, dtype=np.int64)
    read_only.setflags(write=False)
    for args in ((scores.astype(np.int32), column, rows, out), (scores, column.astype(np.int64), rows, out),
                 (scores, column, np.arange(6, dtype=np.int64)[::2], out), (scores, column, rows, read_only),
                 (scores, column, np.array([1, 4], dtype=np.int64), out), (scores, column, rows, out[:2]),
                 (list(scores), column, rows, out)):
        with pytest.raises((ValueError, TypeError, IndexError)):
            _ipa.add_scores_at(*args)
        assert not out.any()
    for bad in (read_only, np.zeros(3, dtype=np.int32), np.zeros(6, dtype=np.int64)[::2], np.zeros((2, 2), np.int64)):
        with pytest.raises(ValueError):
            _ipa.normalize(bad)
    strided = np.array([5, 0, 1, 0, 3, 0], dtype=np.int64)[::2]  # what the kernel refuses, NumPy normalizes
    scoring.normalize_array(strided)
    assert strided.tolist() == [100, 0, 50]


def test_subscription_keys_find_one_subscription():
    """The plugin's hashed subscription keys: equal parts find the table's one subscription (a
    term's key is rebuilt after ``_TERM_KEYS`` is cleared), different parts another, and a plain
    tuple of the same parts is a different key."""
    nodes, pods = random_affinity_cluster(3, n_nodes=10, n_pods=30)
    table = build_snapshot(nodes, pods).table
    rng = random.Random(3)
    terms = [t for i in range(8) for t in required_affinity_terms(random_incoming_pod(rng, i))]
    assert terms
    for t in terms:
        sub = filtering.term_counts(table, t)
        assert filtering.term_counts(table, t) is sub
        filtering._TERM_KEYS.clear()
        assert filtering.term_counts(table, t) is sub and table.has_subscription(sub)
        key = filtering.SubscriptionKey(("ipa-term", filtering.term_match_key(t)))
        assert key == sub.key and hash(key) == hash(sub.key) and key != key.parts
        assert table.matching_counts(key.parts, filtering.term_matcher(t)) is not sub
    import copy
    import pickle
    key = filtering.SubscriptionKey(("ipa-term", filtering.term_match_key(terms[0])))
    for other in (pickle.loads(pickle.dumps(key)), copy.deepcopy(key)):
        assert other == key and hash(other) == hash(key) and other is not key
