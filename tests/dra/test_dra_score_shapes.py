"""NodeResourcesFit's DRA-backed scoring (a configured scoring resource a DeviceClass maps, on nodes
whose allocatable has none of it) over a batch -- device totals shared per node shape across nodes
and cycles (``DRAScoreState._by_shape``, the manager's ``shape_totals``) and the kernel over the
nodes' own columns (``ResourceAllocationScorer._score_dra_columns``) -- against the per-node path:
``ResourceAllocationScorer.score`` node by node with a state that walks every node's devices
(nothing shared).

Seeded random clusters from ``test_shape_batch`` (nodes cloned from a few device templates, nodes of
their own, tainted, consumable and partitionable devices, two-slice pools, held devices, nodes whose
device plugin serves the resource), pods of varying cpu bound on the nodes, pods requesting the
mapped resources or not; between cycles devices are reserved and freed (kept shape keys and totals
must follow), a slice is replaced and a DeviceClass's selector changes (kept totals must go), for
the three scoring strategies.
"""
from __future__ import annotations

import random
from types import SimpleNamespace

import pytest

from fastsched.api import Pod
from fastsched.api.resource import parse_device_class, parse_resource_slice
from fastsched.config.args import (DynamicResourcesArgs, NodeResourcesFitArgs, RequestedToCapacityRatioParam,
                                   ResourceSpec, ScoringStrategy, UtilizationShapePoint)
from fastsched.framework.cycle_state import CycleState
from fastsched.plugins.dynamicresources import DynamicResources
from fastsched.plugins.noderesources import fit as fit_module
from fastsched.plugins.noderesources.dra_extended import DRAScoreState, dra_score_state
from fastsched.snapshot import build_snapshot
from fastsched.testing import make_pod

from .test_shape_batch import DRIVER, ERN, ERN2, UNMAPPED, _pod, shaped_extended_cluster
from .test_vectorized import ListeningStore

STRATEGIES = ("LeastAllocated", "MostAllocated", "RequestedToCapacityRatio")


def _fit(strategy: str, handle) -> fit_module.Fit:
    resources = [ResourceSpec("cpu", 1), ResourceSpec("memory", 1), ResourceSpec(ERN, 3), ResourceSpec(ERN2, 2),
                 ResourceSpec(UNMAPPED, 1)]
    ratio = None
    if strategy == "RequestedToCapacityRatio":
        ratio = RequestedToCapacityRatioParam([UtilizationShapePoint(0, 0), UtilizationShapePoint(100, 10)])
    args = NodeResourcesFitArgs(scoring_strategy=ScoringStrategy(strategy, resources, ratio))
    return fit_module.new(args, handle)


def _per_node_state(handle, names) -> DRAScoreState | None:
    """The per-node reference: every node's devices walked, nothing shared."""
    state = dra_score_state(handle, names)
    if state is not None:
        state._shared = None
    return state


def _cpu_pods(rng: random.Random, nodes) -> list[Pod]:
    pods = []
    for i, node in enumerate(nodes):
        for j in range(rng.randint(0, 2)):
            pods.append(make_pod(f"busy-{i}-{j}", node_name=node.name,
                                 requests={"cpu": f"{rng.choice([100, 500, 1500])}m", "memory": "1Gi"}))
    return pods


@pytest.mark.parametrize("seed", range(40))
def test_shape_shared_dra_scores_agree_with_per_node_scores(seed):
    rng = random.Random(31000 + seed)
    strategy = STRATEGIES[seed % len(STRATEGIES)]
    nodes, objects = shaped_extended_cluster(rng)
    store = ListeningStore(objects)
    handle = SimpleNamespace(client=store)
    dra = DynamicResources(DynamicResourcesArgs(), handle)
    fit = _fit(strategy, handle)
    snapshot = build_snapshot(nodes, _cpu_pods(rng, nodes))
    batch = snapshot.batch()
    names = fit.scorer.resource_names
    reserved: list[tuple] = []
    shared_hits = 0
    for k in range(12):
        pod = _pod(rng, store, seed, k)
        state = CycleState()
        assert fit.pre_score(state, pod, list(batch)) is None
        got, status = fit.score_vectorized(state, pod, batch)
        assert status is None
        reference = _per_node_state(handle, names)
        requests = fit.scorer.pod_request_list(pod)
        want = [fit.scorer.score(info, requests, reference)[0] for info in batch]
        assert got.tolist() == want, (seed, k, strategy)
        # the per-node Score (the plugin path) reads the same shared totals
        assert [fit.score(state, pod, info)[0] for info in batch] == want
        shared_hits += len(dra.manager.shape_totals)
        # devices become held (an allocation in flight) and free between cycles: kept shape
        # keys and the totals kept by shape must follow
        pre_state = CycleState()
        _, pre = dra.pre_filter(pre_state, pod, list(batch))
        if pre is None:
            passing = [info.node().name for info in batch if dra.filter(pre_state, pod, info) is None]
            chosen = rng.choice(passing) if passing else None
            if chosen is not None and dra.reserve(pre_state, pod, chosen) is None:
                reserved.append((pre_state, pod, chosen))
        if reserved and rng.random() < 0.3:
            dra.unreserve(*reserved.pop(rng.randrange(len(reserved))))
        if k == 5:  # a slice replaced: the kept shapes and totals are dropped
            old = next((o for o in store.list_objects("ResourceSlice")), None)
            if old is not None:
                spec = {"driver": DRIVER, "nodeName": old.node_name,
                        "pool": {"name": old.pool_name, "generation": old.pool_generation,
                                 "resourceSliceCount": old.resource_slice_count},
                        "devices": [{"name": d.name} for d in old.devices][:1]}
                store.update_object(parse_resource_slice({"metadata": {"name": old.name}, "spec": spec}))
        if k == 8:  # another class takes the resource name (the first name wins a tie of creation
            # times) and selects other devices: totals kept for the old one must not be read
            store.add_object(parse_device_class({"metadata": {"name": "a-vf"}, "spec": {
                "extendedResourceName": ERN2,
                "selectors": [{"cel": {"expression": f'device.attributes["{DRIVER}"].model == "a100"'}}]}}))
    if seed == 0:
        assert shared_hits > 0


def test_nodes_of_one_shape_share_one_walk():
    """Nodes cloned from one template with the same devices held are walked once (a count of the
    walks, so sharing that silently fell back to the per-node walk fails here)."""
    rng = random.Random(5)
    for _ in range(50):
        nodes, objects = shaped_extended_cluster(rng)
        if len(nodes) >= 12:
            break
    store = ListeningStore(objects)
    handle = SimpleNamespace(client=store)
    DynamicResources(DynamicResourcesArgs(), handle)
    fit = _fit("LeastAllocated", handle)
    batch = build_snapshot(nodes).batch()
    pod = Pod.from_manifest({"metadata": {"name": "p", "namespace": "default", "uid": "p"}, "spec": {"containers": [
        {"name": "c", "image": "x", "resources": {"requests": {ERN: "1"}}}]}}, validate=False)
    walks = []
    original = DRAScoreState._compute

    def counting(self, node, resource):
        walks.append(node.name)
        return original(self, node, resource)

    DRAScoreState._compute = counting
    try:
        state = CycleState()
        fit.pre_score(state, pod, list(batch))
        fit.score_vectorized(state, pod, batch)
        first = len(walks)
        state = CycleState()
        fit.pre_score(state, pod, list(batch))
        fit.score_vectorized(state, pod, batch)
    finally:
        DRAScoreState._compute = original
    manager = fit.handle.client._fastsched_dra_manager
    shaped = {manager.shape_key(n)[0] for n in nodes if manager.shape_key(n) is not None
              and not n.allocatable.get(ERN)}
    unshaped = sum(1 for n in nodes if manager.shape_key(n) is None and not n.allocatable.get(ERN))
    assert first == len(shaped) + unshaped
    assert len(walks) == first + unshaped  # the second cycle walks only the nodes without a shape
