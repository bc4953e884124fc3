"""The per-shape plans PreFilter and PreScore keep across cycles (:mod:`..shape_plan`) against a
fresh computation, on seeded random clusters changed between cycles: pods added and removed (with
label signatures and affinity signatures the table has not seen), nodes added, namespaces
relabelled or added (namespaceSelectors pick other namespaces, existing pods' terms read other
namespace labels), the table's subscriptions evicted or dropped. Each cycle, pods of a few shapes
arrive, each built afresh (its own spec objects, equal terms: the plan of the shape is found by
value), and the kept plugin's states must equal those of the walking path (upstream's algorithm)
and of a new plugin instance (no kept plan)."""
from __future__ import annotations

import random

import pytest

from fastsched.config.args import InterPodAffinityArgs
from fastsched.framework.cycle_state import CycleState
from fastsched.plugins.interpodaffinity.filtering import PRE_FILTER_STATE_KEY
from fastsched.plugins.interpodaffinity.plugin import NAME
from fastsched.plugins.interpodaffinity.scoring import PRE_SCORE_STATE_KEY
from fastsched.plugins import in_tree_registry
from fastsched.runtime.framework import new_framework
from fastsched.snapshot import build_snapshot
from fastsched.testing import single_plugin_profile

from .generators import NAMESPACES, random_affinity_cluster, random_change, random_incoming_pod


def _plugin(args, namespaces, snap):
    fw = new_framework(in_tree_registry(), single_plugin_profile(NAME, args=args), namespaces=namespaces)
    fw.set_snapshot_shared_lister(snap)
    return fw.plugins_map[NAME]


def _states(pl, incoming, nodes):
    sf, ss = CycleState(), CycleState()
    _, fs = pl.pre_filter(sf, incoming, nodes)
    ps = pl.pre_score(ss, incoming, nodes)
    pre_filter = fs.code() if fs is not None else sf.read(PRE_FILTER_STATE_KEY)
    pre_score = (ps.code(), ps.reasons()) if ps is not None else ss.read(PRE_SCORE_STATE_KEY).topology_score
    return pre_filter, pre_score


def _same(a, b) -> None:
    (fa, sa), (fb, sb) = a, b
    if hasattr(fa, "affinity_counts"):
        assert hasattr(fb, "affinity_counts"), (fa, fb)
        assert fa.existing_anti_affinity_counts == fb.existing_anti_affinity_counts
        assert fa.affinity_counts == fb.affinity_counts
        assert fa.anti_affinity_counts == fb.anti_affinity_counts
        assert fa.pod_matches_own_affinity == fb.pod_matches_own_affinity
        assert [(t.namespaces, t.selector, t.topology_key) for t in fa.affinity_terms] == \
            [(t.namespaces, t.selector, t.topology_key) for t in fb.affinity_terms]
        assert [(t.namespaces, t.selector, t.topology_key) for t in fa.anti_affinity_terms] == \
            [(t.namespaces, t.selector, t.topology_key) for t in fb.anti_affinity_terms]
    else:
        assert fa == fb
    assert sa == sb


@pytest.mark.parametrize("seed", range(8))
def test_kept_plans_match_a_fresh_computation(seed):
    rng = random.Random(1000 + seed)
    nodes, pods = random_affinity_cluster(seed, n_nodes=30, n_pods=90)
    snap = build_snapshot(nodes, pods)
    table = snap.table
    if seed % 2:
        table.MAX_SUBSCRIPTIONS = 6  # a small registry: the plans' subscriptions get evicted
    namespaces = dict(NAMESPACES)
    args = InterPodAffinityArgs(hard_pod_affinity_weight=seed % 3,
                                ignore_preferred_terms_of_existing_pods=seed % 4 == 3)
    kept = _plugin(args, namespaces, snap)
    shapes = [1000 * seed + k for k in range(5)]  # a shape: the seed its pod is drawn with
    on_table = {p.uid: p for p in pods if p.node_name in table.row_of}
    ids = {"pod": len(pods), "node": len(nodes)}
    planned = 0
    for step in range(30):
        for i, shape in enumerate(rng.sample(shapes, 3) * 2):  # each shape twice in a row, then others
            incoming = random_incoming_pod(random.Random(shape), 0)  # new objects, equal terms
            batch = snap.batch()
            got = _states(kept, incoming, batch)
            _same(got, _states(kept, incoming, list(batch)))  # the walking path (upstream's algorithm)
            _same(got, _states(_plugin(args, namespaces, snap), incoming, batch))  # no kept plan
            planned += kept._last_plan is not None
        random_change(rng, snap, on_table, namespaces, ids, step)
    assert planned > 0


def _one_cycle(pl, incoming, nodes, state=None, pre_filter=True):
    """PreFilter (unless not ``pre_filter``) then PreScore with one CycleState, as a cycle runs
    them: PreScore takes the plan PreFilter resolved in that state for that pod."""
    state = CycleState() if state is None else state
    if pre_filter:
        _, fs_status = pl.pre_filter(state, incoming, nodes)
        pre_filter_out = fs_status.code() if fs_status is not None else state.read(PRE_FILTER_STATE_KEY)
    else:
        pre_filter_out = None
    ps = pl.pre_score(state, incoming, nodes)
    pre_score = (ps.code(), ps.reasons()) if ps is not None else state.read(PRE_SCORE_STATE_KEY).topology_score
    return pre_filter_out, pre_score


@pytest.mark.parametrize("seed", range(8))
def test_pre_score_after_pre_filter_in_one_cycle_matches_a_fresh_computation(seed):
    """PreScore reuses its cycle's planned PreFilter (same CycleState and pod) only there: across
    random changes, a pod's PreScore in one cycle, in a later cycle without PreFilter (the column
    form skips it) and with another pod in the same state all equal a new plugin's."""
    rng = random.Random(2000 + seed)
    nodes, pods = random_affinity_cluster(seed, n_nodes=30, n_pods=90)
    snap = build_snapshot(nodes, pods)
    table = snap.table
    if seed % 2:
        table.MAX_SUBSCRIPTIONS = 6
    namespaces = dict(NAMESPACES)
    args = InterPodAffinityArgs(hard_pod_affinity_weight=1 + seed % 2,
                                ignore_preferred_terms_of_existing_pods=False)
    kept = _plugin(args, namespaces, snap)
    shapes = [3000 * seed + k for k in range(4)]
    on_table = {p.uid: p for p in pods if p.node_name in table.row_of}
    ids = {"pod": len(pods), "node": len(nodes)}
    reused = 0
    previous = None  # (pod, its cycle's state) of the last step
    for step in range(30):
        for shape in rng.sample(shapes, 2):
            incoming = random_incoming_pod(random.Random(shape), 0)
            batch = snap.batch()
            state = CycleState()
            got = _one_cycle(kept, incoming, batch, state)
            reused += kept._cycle_plan is not None and kept._cycle_plan[0] is state
            _same(got, _states(_plugin(args, namespaces, snap), incoming, batch))
            other = random_incoming_pod(random.Random(shape + 1), 0)  # another pod, the same state
            assert _one_cycle(kept, other, batch, state, pre_filter=False)[1] == \
                _states(_plugin(args, namespaces, snap), other, batch)[1]
            previous = (incoming, state)
        random_change(rng, snap, on_table, namespaces, ids, step)
        if previous is not None:  # the last pod again in a new cycle whose PreFilter was skipped
            pod, _ = previous
            batch = snap.batch()
            assert _one_cycle(kept, pod, batch, CycleState(), pre_filter=False)[1] == \
                _states(_plugin(args, namespaces, snap), pod, batch)[1]
    assert reused > 0
