"""The vectorized dry run with the volume plugins in the profile, against the per-node path.

Seeded random storage clusters (``storage_check_scenario``: bound, WaitForFirstConsumer and
Immediate claims, RWOP claims, PVs with zonal and per-node affinity, CSINodes with attach limits,
inline EBS/GCE volumes), the running pods given priorities and start times, preemptors that need
victims. VolumeBinding and VolumeZone are node-only; NodeVolumeLimits is node-only for a pod no
CSINode limit applies to (``filter_pod_dependence_of``), so the dry run stays vectorized for those
pods and takes the per-node path for the others (and for pods VolumeRestrictions does not skip:
its AddPod/RemovePod). Either way: the same candidates, victims, statuses and errors as the
per-node path, and ``filter_with_nominated_pods`` gives every node upstream's status.
"""
from __future__ import annotations

import functools
import random
from typing import Any, cast

import pytest

from fastsched.api.storage import CSINode
from fastsched.framework import CycleState
from fastsched.framework.objects import ObjectStore
from fastsched.plugins.defaultpreemption import vectorized
from fastsched.runtime.nominated import filter_with_nominated_pods, pod_filters
from fastsched.snapshot import build_snapshot
from fastsched.testing import make_pod, storage_check_scenario

from .support import FakeClient, Setup
from .test_vectorized import (ADDITIVE, _Counter, candidates_of, pre_filters, random_nominated, status_tuple,
                              statuses_of)

VOLUMES = ["VolumeRestrictions", "NodeVolumeLimits", "VolumeBinding", "VolumeZone"]
FILTERS = ADDITIVE + VOLUMES
PRE_FILTERS = pre_filters(ADDITIVE) + ["VolumeRestrictions", "NodeVolumeLimits", "VolumeBinding", "VolumeZone"]
SEEDS = range(6)


class StorageClient(FakeClient):
    """The preemption fakes plus the storage objects the volume plugins read."""

    def __init__(self, pods, pdbs, objects):
        super().__init__(pods, pdbs)
        self.store = ObjectStore(objects)

    def get_object(self, kind, name, namespace="default"):
        return self.store.get_object(kind, name, namespace)

    def list_objects(self, kind, namespace=None):
        return self.store.list_objects(kind, namespace)


@functools.lru_cache(maxsize=None)
def scenario(seed: int, csi_nodes: bool):
    """``csi_nodes``: keep the scenario's CSINodes (with attach limits); without them no limit
    applies anywhere and NodeVolumeLimits is node-only for every pod."""
    sc = storage_check_scenario(seed, nodes=16, claims=40, pvs=30)
    rng = random.Random(9100 + seed)
    objects = [o for o in sc.objects if csi_nodes or not isinstance(o, CSINode)]
    # priorities and start times for the running pods (their claims stay in use); fillers so that
    # the preemptors need victims (nodes have 8 CPUs)
    running = [p.replace(priority=rng.choice((0, 10, 100)),
                         start_time=float(rng.randint(0, 3)) if rng.random() < 0.6 else None) for p in sc.running]
    for i, node in enumerate(sc.nodes):
        for j in range(rng.randint(1, 4)):
            running.append(make_pod(f"filler-{i}-{j}", uid=f"filler-{i}-{j}", node_name=node.name,
                                    cpu=rng.choice(("1", "2", "3")), memory="256Mi",
                                    priority=rng.choice((0, 10, 100, 2000)), labels={"app": "web"}))
    preemptors = []
    for i, p in enumerate(sc.incoming[:12]):
        volumes = [dict(v) for v in p.manifest["spec"].get("volumes", ())]
        preemptors.append(make_pod(f"preemptor-{i}", namespace=p.namespace, uid=f"preemptor-{i}",
                                   cpu=rng.choice(("4", "6", "7")), memory="1Gi", priority=rng.choice((50, 1000)),
                                   volumes=volumes))
    snapshot = build_snapshot(sc.nodes, running)
    return sc.nodes, running, snapshot, objects, random_nominated(rng, sc.nodes, 6), preemptors


def cycle_state(s: Setup) -> CycleState | None:
    """The failed cycle's state after PreFilter, or None when PreFilter rejects the pod (an
    unbound Immediate claim, a missing claim: no PostFilter runs for it)."""
    state = CycleState()
    _, status, _ = s.fw.run_pre_filter_plugins(state, s.pod, s.snapshot.batch())
    return state if status is None or status.is_success() else None


def setup_for(seed: int, csi_nodes: bool, p, *, vectorized_path: bool) -> Setup:
    nodes, running, snapshot, objects, nominated, preemptors = scenario(seed, csi_nodes)
    s = Setup(nodes, running, p, filters=FILTERS, pre_filters=PRE_FILTERS, seed=seed, snapshot=snapshot,
              nominated=nominated, client=False)
    s.client = StorageClient([*preemptors, *running], [], objects)
    # the preemption fakes implement what DefaultPreemption and the volume plugins call, not the
    # whole Client protocol
    s.fw.client = cast(Any, s.client)
    s.plugin.vectorized = vectorized_path
    return s


@pytest.mark.parametrize("csi_nodes", [True, False], ids=["csinode-limits", "no-csinode"])
def test_dry_run_with_volumes_matches_per_node(monkeypatch, csi_nodes):
    counter = _Counter(monkeypatch)
    compared = with_victims = vectorized_pods = 0
    for seed in SEEDS:
        *_, preemptors = scenario(seed, csi_nodes)
        for p in preemptors:
            ref = setup_for(seed, csi_nodes, p, vectorized_path=False)
            vec = setup_for(seed, csi_nodes, p, vectorized_path=True)
            state = cycle_state(ref)
            if state is None:
                continue
            nodes = list(ref.snapshot.batch())
            n = len(nodes)
            runs_before = counter.runs
            for offset, k in ((0, n), (seed % n, 3), (n - 1, 1)):
                want = ref.plugin.evaluator.dry_run_preemption_per_node(state.clone(), p, nodes, [], offset, k)
                got = vec.plugin.evaluator.dry_run_preemption(state.clone(), p, nodes, [], offset, k)
                assert candidates_of(got[0]) == candidates_of(want[0]), (seed, p.name, offset, k)
                assert statuses_of(got[1]) == statuses_of(want[1]), (seed, p.name, offset, k)
                assert got[2] == want[2], (seed, p.name, offset, k)
                compared += 1
                with_victims += bool(want[0])
            # the plan's answer, asked of the runtime too: vectorized exactly when the filters allow
            plan = vectorized.filters_plan(vec.fw, state, vec.snapshot.table, p)
            assert (pod_filters(vec.fw, state, p, vec.snapshot.table) is not None) == (plan is not None)
            assert (counter.runs > runs_before) == (plan is not None), (seed, p.name)
            vectorized_pods += plan is not None
    assert with_victims >= compared // 3, (with_victims, compared)
    # with the scenario's limits NodeVolumeLimits keeps every pod with volumes per node; without
    # CSINodes only VolumeRestrictions (RWOP claims, inline disks) does
    assert vectorized_pods >= (0 if csi_nodes else len(SEEDS) * 3), vectorized_pods


@pytest.mark.parametrize("csi_nodes", [True, False], ids=["csinode-limits", "no-csinode"])
def test_post_filter_with_volumes_matches_per_node(csi_nodes):
    preempted = 0
    for seed in SEEDS[:4]:
        *_, preemptors = scenario(seed, csi_nodes)
        for p in preemptors:
            results = []
            for path in (False, True):
                s = setup_for(seed, csi_nodes, p, vectorized_path=path)
                state = cycle_state(s)
                if state is None:
                    break
                statuses = s.filter_statuses(state)
                if s.feasible:
                    break
                result, status = s.plugin.post_filter(state, p, statuses)
                results.append((result.nominating_info.nominated_node_name if result is not None else None,
                                status_tuple(status), list(s.client.preempted), s.fw.rng.getstate()))
            if len(results) == 2:
                assert results[1] == results[0], (seed, p.name)
                preempted += bool(results[0][2])
    assert preempted >= 3, preempted


@pytest.mark.parametrize("csi_nodes", [True, False], ids=["csinode-limits", "no-csinode"])
def test_filter_with_nominated_pods_and_volumes_matches_per_node(csi_nodes):
    vectorized_pods = 0
    for seed in SEEDS[:4]:
        *_, preemptors = scenario(seed, csi_nodes)
        for p in preemptors:
            s = setup_for(seed, csi_nodes, p, vectorized_path=True)
            state = cycle_state(s)
            if state is None:
                continue
            batch = s.snapshot.batch()
            got = filter_with_nominated_pods(s.fw, state, p, batch)
            if got is None:
                continue
            vectorized_pods += 1
            for i, view in enumerate(batch):
                want = s.fw.run_filter_plugins_with_nominated_pods(state, p, view)
                assert status_tuple(got.status(i)) == status_tuple(want), (seed, p.name, view.name)
    assert vectorized_pods >= (0 if csi_nodes else 8), vectorized_pods
