"""``InterPodAffinity.normalized_score_zero_everywhere`` (the compiled cycle then calls neither its
Score nor its NormalizeScore) against the two calls: True only when the normalized column is 0 on
every row. Random few-zone clusters (blue pods with required zone affinity, weighted as
hardPodAffinityWeight, and preferred zone affinity; nodes added without the zone label, nodes of
new zones, nodes removed) and the subclass rule of the compiled cycle's wiring."""
from __future__ import annotations

import random

import numpy as np
import pytest

from fastsched.api import Node, Pod
from fastsched.config.args import InterPodAffinityArgs
from fastsched.framework.cycle_state import CycleState
from fastsched.plugins.interpodaffinity.plugin import InterPodAffinity
from fastsched.runtime.compiled_cycle import _own_normalize
from fastsched.snapshot import build_snapshot

from .generators import NAMESPACES, ZONE
from .test_shape_plans import _plugin


def _node(name, zone=None):
    return Node(name=name, labels={"kubernetes.io/hostname": name, **({ZONE: zone} if zone else {})})


def _pod(name, node_name="", preferred=False):
    term = {"labelSelector": {"matchLabels": {"color": "blue"}}, "topologyKey": ZONE}
    affinity = ({"podAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
        {"podAffinityTerm": term, "weight": 3}]}} if preferred
        else {"podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [term]}})
    return Pod.from_manifest({"metadata": {"name": name, "namespace": "default", "uid": name,
                                           "labels": {"color": "blue"}},
                              "spec": {"nodeName": node_name, "affinity": affinity,
                                       "containers": [{"name": "c", "image": "pause"}]}})


def _answers(pl, pod, snap):
    """(normalized_score_zero_everywhere, whether Score + NormalizeScore give 0 on every row),
    None when PreScore answers Skip."""
    state = CycleState()
    batch = snap.batch()
    if pl.pre_score(state, pod, batch) is not None:
        return None
    scores, status = pl.score_vectorized(state, pod, batch)
    assert status is None
    scores = np.ascontiguousarray(scores, dtype=np.int64)
    assert pl.normalize_score_vectorized(state, pod, scores, batch) is None
    return pl.normalized_score_zero_everywhere(state, pod), bool(np.all(scores == 0))


@pytest.mark.parametrize("seed", range(12))
def test_zero_everywhere_only_where_the_normalized_column_is_zero(seed):
    rng = random.Random(11000 + seed)
    zones = [f"zone{z}" for z in range(rng.randint(1, 3) if seed % 2 else 1)]
    snap = build_snapshot([_node(f"n{i}", rng.choice(zones)) for i in range(8)])
    pl = _plugin(InterPodAffinityArgs(hard_pod_affinity_weight=1 + seed % 3), dict(NAMESPACES), snap)
    placed: list = []
    answers = {True: 0, False: 0}
    for step in range(60):
        op = rng.random()
        names = sorted(snap.table.row_of)
        if op < 0.45 or not placed:
            p = _pod(f"p{step}", rng.choice(names), preferred=rng.random() < 0.3)
            snap.add_pod(p)
            placed.append(p)
        elif op < 0.7:
            snap.remove_pod(placed.pop(rng.randrange(len(placed))))
        elif op < 0.8:
            snap.add_node(_node(f"m{step}", None if rng.random() < 0.4 else rng.choice(zones + ["zonex"])))
        elif op < 0.9 and len(names) > 2:
            gone = rng.choice(names)
            placed = [p for p in placed if p.node_name != gone]
            snap.remove_node(gone)
        got = _answers(pl, _pod(f"in{step}", preferred=rng.random() < 0.5), snap)
        if got is not None:
            if got[0]:
                assert got[1], (seed, step)
            answers[got[0]] += 1
    assert answers[False], answers
    assert answers[True] or len(zones) > 1, answers  # one zone: the same score until a node lacks it


def test_the_compiled_cycle_asks_only_the_plugin_s_own_normalize_score():
    snap = build_snapshot([_node("n0", "zone1")])
    pl = _plugin(InterPodAffinityArgs(), dict(NAMESPACES), snap)
    assert _own_normalize(pl, pl.score_extensions(), pl.normalize_score_vectorized)

    class Renormalized(InterPodAffinity):
        def normalize_score_vectorized(self, state, pod, scores, nodes):
            scores[...] = 7
            return None

    other = Renormalized(pl.args, None)
    assert not _own_normalize(other, other.score_extensions(), other.normalize_score_vectorized)
    assert not _own_normalize(pl, object(), pl.normalize_score_vectorized)
