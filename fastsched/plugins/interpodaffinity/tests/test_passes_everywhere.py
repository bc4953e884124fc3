"""``InterPodAffinity.filter_passes_everywhere`` (the compiled cycle skips the plugin's window Filter
when it answers True) against the Filter itself: True only when ``filter_vectorized`` passes every
row of the table. On seeded random clusters changed between cycles (nodes and pods added and
removed, labels changed), and on a constructed one-zone cluster (SchedulingPodAffinity's shape)
where a node without the zone label, a node of a new zone and a required anti-affinity term each
turn the answer to False."""
from __future__ import annotations

import random

import numpy as np
import pytest

from fastsched.api import Node, Pod
from fastsched.config.args import InterPodAffinityArgs
from fastsched.framework.cycle_state import CycleState
from fastsched.plugins.interpodaffinity.filtering import PRE_FILTER_STATE_KEY
from fastsched.snapshot import build_snapshot

from .generators import NAMESPACES, ZONE, random_affinity_cluster, random_change, random_incoming_pod
from .test_shape_plans import _plugin


def _answers(pl, pod, snap):
    """(filter_passes_everywhere, whether filter_vectorized passes every row), None without a state."""
    state = CycleState()
    batch = snap.batch()
    _, status = pl.pre_filter(state, pod, batch)
    if status is not None:
        return None
    assert state.read(PRE_FILTER_STATE_KEY) is not None
    verdicts = pl.filter_vectorized(state, pod, batch)
    return pl.filter_passes_everywhere(state, pod, snap.table), bool(np.all(np.asarray(verdicts.codes) == 0))


@pytest.mark.parametrize("seed", range(8))
def test_passes_everywhere_only_where_every_row_passes(seed):
    rng = random.Random(5000 + seed)
    nodes, pods = random_affinity_cluster(seed, n_nodes=20, n_pods=40)
    snap = build_snapshot(nodes, pods)
    namespaces = dict(NAMESPACES)
    pl = _plugin(InterPodAffinityArgs(), namespaces, snap)
    on_table = {p.uid: p for p in pods if p.node_name in snap.table.row_of}
    ids = {"pod": len(pods), "node": len(nodes)}
    everywhere = 0
    for step in range(40):
        for k in range(4):
            got = _answers(pl, random_incoming_pod(random.Random(100 * seed + k), 0), snap)
            if got is not None and got[0]:
                assert got[1], (seed, step, k)
                everywhere += 1
        random_change(rng, snap, on_table, namespaces, ids, step)


def _node(name, zone=None):
    return Node(name=name, labels={"kubernetes.io/hostname": name, **({ZONE: zone} if zone else {})})


def _blue(name, node_name="", anti=False):
    term = {"labelSelector": {"matchLabels": {"color": "blue"}}, "topologyKey": ZONE}
    affinity = ({"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [term]}} if anti
                else {"podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [term]}})
    return Pod.from_manifest({"metadata": {"name": name, "namespace": "default", "uid": name,
                                           "labels": {"color": "blue"}},
                              "spec": {"nodeName": node_name, "affinity": affinity,
                                       "containers": [{"name": "c", "image": "pause"}]}})


@pytest.mark.parametrize("seed", range(10))
def test_passes_everywhere_on_random_few_zone_clusters(seed):
    """Few zones, most nodes labelled, blue pods with zone affinity coming and going (some with
    anti-affinity, some nodes without the zone label): True answers happen and each is right."""
    rng = random.Random(9000 + seed)
    zones = [f"zone{z}" for z in range(rng.randint(1, 3))]
    snap = build_snapshot([_node(f"n{i}", rng.choice(zones)) for i in range(8)])
    pl = _plugin(InterPodAffinityArgs(), dict(NAMESPACES), snap)
    placed: list = []
    answers = {True: 0, False: 0}
    for step in range(60):
        op = rng.random()
        names = sorted(snap.table.row_of)
        if op < 0.45 or not placed:
            p = _blue(f"p{step}", rng.choice(names), anti=rng.random() < 0.08)
            snap.add_pod(p)
            placed.append(p)
        elif op < 0.7:
            snap.remove_pod(placed.pop(rng.randrange(len(placed))))
        elif op < 0.8:
            snap.add_node(_node(f"m{step}", None if rng.random() < 0.4 else rng.choice(zones)))
        elif op < 0.9 and len(names) > 2:
            gone = rng.choice(names)
            placed = [p for p in placed if p.node_name != gone]
            snap.remove_node(gone)
        got = _answers(pl, _blue(f"in{step}"), snap)
        if got is not None:
            if got[0]:
                assert got[1], (seed, step)
            answers[got[0]] += 1
    assert answers[True] and answers[False], answers


def test_one_zone_cluster_passes_until_a_row_would_fail():
    snap = build_snapshot([_node(f"n{i}", "zone1") for i in range(6)], [_blue("p0", "n0")])
    pl = _plugin(InterPodAffinityArgs(), dict(NAMESPACES), snap)
    assert _answers(pl, _blue("in1"), snap) == (True, True)
    snap.add_node(_node("bare"))                    # no zone label: that row fails the affinity
    assert _answers(pl, _blue("in2"), snap) == (False, False)
    snap.remove_node("bare")
    assert _answers(pl, _blue("in3"), snap) == (True, True)
    anti = _blue("a0", "n1", anti=True)            # an existing pod's anti-affinity to blue pods
    snap.add_pod(anti)
    assert _answers(pl, _blue("in4"), snap) == (False, False)
    snap.remove_pod(anti)
    assert _answers(pl, _blue("in5"), snap) == (True, True)
    snap.add_node(_node("z2", "zone2"))             # a zone without a blue pod: that row fails
    assert _answers(pl, _blue("in6"), snap) == (False, False)
