"""DynamicResources' Score and NormalizeScore (v1.37.2 ``dynamicresources.go``: ``Score``,
``computeScore``, ``NormalizeScore``), after upstream's ``dynamicresources_test.go`` cases
``single-claim-prioritized-list-scoring``, ``multiple-claims-prioritized-list-scoring`` and
``multiple-requests-prioritized-list-scoring``; the batch Score against the per-node one."""
from __future__ import annotations

import random
from types import SimpleNamespace

import numpy as np
import pytest

from fastsched.api.resource import parse_device_class, parse_resource_claim, parse_resource_slice
from fastsched.config.args import DynamicResourcesArgs
from fastsched.dra.allocator import Features
from fastsched.framework.cycle_state import CycleState
from fastsched.framework.objects import ObjectStore
from fastsched.framework.types import NodeScore
from fastsched.plugins.dynamicresources import DynamicResources
from fastsched.snapshot import build_snapshot
from fastsched.testing import make_node

from .test_dynamic_resources import CLASS, DRIVER, pod, ref

NODE1, NODE2, NODE3 = "worker", "worker-2", "worker-3"


def device_class():
    return parse_device_class({"metadata": {"name": CLASS}, "spec": {}})


def sub(name: str, count: int = 1, selector: str | None = None) -> dict:
    out: dict = {"name": name, "deviceClassName": CLASS, "count": count}
    if selector:
        out["selectors"] = [{"cel": {"expression": selector}}]
    return out


def prioritized_claim(name: str, *requests: list[dict], allocation: dict | None = None) -> object:
    """``st.MakeResourceClaim().RequestWithPrioritizedList(...)``: requests req-1, req-2, ..."""
    manifest: dict = {"metadata": {"name": name, "namespace": "default", "uid": f"uid-{name}",
                                   "ownerReferences": [{"apiVersion": "v1", "kind": "Pod", "name": "my-pod",
                                                        "uid": "1234", "controller": True}]},
                      "spec": {"devices": {"requests": [{"name": f"req-{i + 1}", "firstAvailable": subs}
                                                        for i, subs in enumerate(requests)]}}}
    if allocation is not None:
        manifest["status"] = {"allocation": allocation}
    return parse_resource_claim(manifest)


def node_slice(node: str, *devices: dict) -> object:
    return parse_resource_slice({"metadata": {"name": f"{node}-slice"}, "spec": {
        "driver": DRIVER, "nodeName": node, "pool": {"name": node, "generation": 1, "resourceSliceCount": 1},
        "devices": list(devices)}})


def dev(name: str, **attrs: bool) -> dict:
    d: dict = {"name": name}
    if attrs:
        d["attributes"] = {k: {"bool": v} for k, v in attrs.items()}
    return d


def run(objects, the_pod, nodes, features=None):
    store = ObjectStore(objects)
    plugin = DynamicResources(DynamicResourcesArgs(), SimpleNamespace(client=store), features=features)
    snapshot = build_snapshot([make_node(n) for n in nodes])
    batch = snapshot.batch()
    state = CycleState()
    plugin.pre_filter(state, the_pod, list(batch))
    filtered = {info.node().name: plugin.filter(state, the_pod, info) for info in batch}
    feasible = [info for info in batch if filtered[info.node().name] is None]
    scores = {}
    for info in feasible:
        score, status = plugin.score(state, the_pod, info)
        assert status is None
        scores[info.node().name] = score
    node_scores = [NodeScore(n, s) for n, s in scores.items()]
    assert plugin.normalize_score(state, the_pod, node_scores) is None
    return plugin, state, filtered, scores, {ns.name: ns.score for ns in node_scores}


def test_single_claim_prioritized_list_scoring():
    objects = [device_class(),
               prioritized_claim("my-pod-my-resource", [sub("subreq-1", selector=f'device.attributes["{DRIVER}"].attr'),
                                                        sub("subreq-2")]),
               node_slice(NODE1, dev("instance-1", attr=True)), node_slice(NODE2, dev("instance-1", attr=False))]
    _, _, _, raw, normalized = run(objects, pod(ref()), (NODE1, NODE2))
    assert raw == {NODE1: 8, NODE2: 7}
    assert normalized == {NODE1: 100, NODE2: 87}


def test_multiple_claims_prioritized_list_scoring():
    objects = [device_class(), prioritized_claim("my-pod-my-resource", [sub("subreq-1")]),
               prioritized_claim("my-pod-my-resource-2", [sub("subreq-1", 4), sub("subreq-2", 3), sub("subreq-3", 2),
                                                          sub("subreq-4", 1)]),
               node_slice(NODE1, *(dev(f"instance-{i}") for i in range(1, 5))),
               node_slice(NODE2, dev("instance-1"), dev("instance-2")), node_slice(NODE3, dev("instance-1"))]
    the_pod = pod(ref(), ref("my-resource-2", "my-pod-my-resource-2"))
    _, _, filtered, raw, normalized = run(objects, the_pod, (NODE1, NODE2, NODE3))
    assert filtered[NODE3].reasons() == ["cannot allocate all claims"]
    assert raw == {NODE1: 15, NODE2: 13}
    assert normalized == {NODE1: 100, NODE2: 86}


def test_multiple_requests_prioritized_list_scoring():
    subs = [sub("subreq-1", 2), sub("subreq-2", 1)]
    objects = [device_class(), prioritized_claim("my-pod-my-resource", subs, subs),
               node_slice(NODE1, *(dev(f"instance-{i}") for i in range(1, 5))),
               node_slice(NODE2, *(dev(f"instance-{i}") for i in range(1, 4))),
               node_slice(NODE3, dev("instance-1"), dev("instance-2"))]
    _, _, _, raw, normalized = run(objects, pod(ref()), (NODE1, NODE2, NODE3))
    assert raw == {NODE1: 16, NODE2: 15, NODE3: 14}
    assert normalized == {NODE1: 100, NODE2: 93, NODE3: 87}


def test_no_prioritized_list_feature_scores_zero():
    """Score answers 0 when DRAPrioritizedList is off (upstream's first check)."""
    objects = [device_class(), prioritized_claim("my-pod-my-resource", [sub("subreq-1")]),
               node_slice(NODE1, dev("instance-1"))]
    plugin, state, _, raw, _ = run(objects, pod(ref()), (NODE1,))
    assert raw == {NODE1: 8}
    plugin.features = Features(prioritized_list=False)
    batch = build_snapshot([make_node(NODE1)]).batch()
    assert plugin.score(state, pod(ref()), list(batch)[0]) == (0, None)
    assert plugin.score_vectorized(state, pod(ref()), batch)[0].tolist() == [0]


def test_allocated_claims_alone_score_zero():
    """Every claim allocated: no allocator, so no per-node allocations: 0 (as upstream)."""
    allocation = {"devices": {"results": [{"request": "req-1/subreq-1", "driver": DRIVER, "pool": NODE1,
                                           "device": "instance-1"}]}}
    objects = [device_class(), prioritized_claim("my-pod-my-resource", [sub("subreq-1")], allocation=allocation),
               node_slice(NODE1, dev("instance-1"))]
    _, _, _, raw, _ = run(objects, pod(ref()), (NODE1,))
    assert raw == {NODE1: 0}


def test_pod_without_claims_scores_zero_everywhere():
    from fastsched.api import Pod

    plain = Pod.from_manifest({"metadata": {"name": "p", "namespace": "default", "uid": "u"},
                               "spec": {"containers": [{"name": "c", "image": "x"}]}}, validate=False)
    store = ObjectStore([])
    plugin = DynamicResources(DynamicResourcesArgs(), SimpleNamespace(client=store))
    batch = build_snapshot([make_node(n) for n in (NODE1, NODE2)]).batch()
    state = CycleState()
    plugin.pre_filter(state, plain, list(batch))
    scores, status = plugin.score_vectorized(state, plain, batch)
    assert status is None and scores.tolist() == [0, 0]
    assert [plugin.score(state, plain, info)[0] for info in batch] == [0, 0]


@pytest.mark.parametrize("seed", range(30))
def test_batch_score_equals_per_node(seed):
    """Seeded random clusters: prioritized-list claims over nodes with 0-5 devices, some with an
    attribute a subrequest selects; score_vectorized + normalize_score_vectorized against Score
    + NormalizeScore node by node."""
    rng = random.Random(seed)
    nodes = [f"node-{i}" for i in range(rng.randint(1, 8))]
    objects = [device_class()]
    for n in nodes:
        objects.append(node_slice(n, *(dev(f"d{j}", fast=rng.random() < 0.5) for j in range(rng.randint(0, 5)))))
    refs = []
    for c in range(rng.randint(1, 2)):
        requests = []
        for _ in range(rng.randint(1, 2)):
            subs = [sub(f"s{k}", rng.randint(1, 3), 'device.attributes["%s"].fast' % DRIVER if rng.random() < 0.5 else None)
                    for k in range(rng.randint(1, 4))]
            requests.append(subs)
        objects.append(prioritized_claim(f"claim-{c}", *requests))
        refs.append(ref(f"r{c}", f"claim-{c}"))
    the_pod = pod(*refs)
    plugin, state, filtered, raw, normalized = run(objects, the_pod, nodes)
    feasible = [n for n in nodes if filtered[n] is None]
    batch = build_snapshot([make_node(n) for n in feasible]).batch()
    scores, status = plugin.score_vectorized(state, the_pod, batch)
    assert status is None
    assert dict(zip(feasible, scores.tolist())) == raw
    plugin.normalize_score_vectorized(state, the_pod, scores, batch)
    assert dict(zip(feasible, scores.tolist())) == normalized
    assert isinstance(scores, np.ndarray)


@pytest.mark.parametrize("raw", [[0, 0, 0], [], [0, 3, 6], [1], [0, -2, 0], [7, 7]])
def test_normalize_score_vectorized_is_the_default_normalization(raw):
    """All-zero scores (the usual: no prioritized-list request) stay zero without the kernel;
    any other scores are the default normalization's, in place, as the per-node path's."""
    plugin = DynamicResources(DynamicResourcesArgs(), SimpleNamespace(client=ObjectStore()))
    scores = np.array(raw, dtype=np.int64)
    assert plugin.normalize_score_vectorized(CycleState(), pod(), scores, None) is None
    per_node = [NodeScore(f"n{i}", v) for i, v in enumerate(raw)]
    assert plugin.normalize_score(CycleState(), pod(), per_node) is None
    assert scores.tolist() == [s.score for s in per_node]
    with pytest.raises(ValueError):
        plugin.normalize_score_vectorized(CycleState(), pod(), np.zeros((2, 2), dtype=np.int64), None)
