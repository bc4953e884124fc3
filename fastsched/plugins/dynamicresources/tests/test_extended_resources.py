"""Extended resources backed by DRA (DRAExtendedResource, GA at v1.37.2).

After upstream's ``extendeddynamicresources_test.go`` (``Test_createRequestsAndMappings_*``), the
``extended-resource-*`` cases of ``dynamicresources_test.go`` (``TestPlugin``), the extended
resource cache's ordering rules (``extendedresourcecache``) and NodeResourcesFit's
``shouldDelegateResourceToDRA`` (``fit_test.go``); and the per-node and batch Filter paths of both
plugins compared on seeded random clusters.
"""
from __future__ import annotations

import random
from types import SimpleNamespace

import numpy as np
import pytest

from fastsched.api import Pod
from fastsched.api.resource import DeviceClass, parse_device_class, parse_resource_claim, parse_resource_slice
from fastsched.config.args import DynamicResourcesArgs, NodeResourcesFitArgs
from fastsched.dra.extended_resources import (DEVICE_CLASS_PREFIX, EXTENDED_RESOURCE_CLAIM_ANNOTATION,
                                              ExtendedResourceCache, create_requests_and_mappings)
from fastsched.framework.cycle_state import CycleState
from fastsched.framework.objects import ObjectStore
from fastsched.framework.status import Code
from fastsched.plugins.dynamicresources import DynamicResources
from fastsched.plugins.noderesources import fit as fit_module
from fastsched.snapshot import build_snapshot
from fastsched.testing import make_node

UUA = Code.UNSCHEDULABLE_AND_UNRESOLVABLE
ERN = "example.com/gpu"  # upstream's extendedResourceName
POD_UID = "1234"
DRIVER = "some-driver"


# -- createRequestsAndMappings ---------------------------------------------------------------------
def _container(name: str, requests: dict, sidecar: bool = False) -> dict:
    c: dict = {"name": name, "image": "x", "resources": {"requests": {k: str(v) for k, v in requests.items()}}}
    if sidecar:
        c["restartPolicy"] = "Always"
    return c


def _pod(containers: list[dict], init: list[dict] | tuple = (), name: str = "my-pod", uid: str = POD_UID) -> Pod:
    spec: dict = {"containers": containers}
    if init:
        spec["initContainers"] = list(init)
    return Pod.from_manifest({"metadata": {"name": name, "namespace": "default", "uid": uid}, "spec": spec},
                             validate=False)


def _resolver(mapping: dict[str, str]) -> ExtendedResourceCache:
    cache = ExtendedResourceCache()
    for resource, cls in mapping.items():
        cache._by_resource[resource] = DeviceClass(name=cls)
    return cache


POD1 = _pod([_container("con0", {ERN: 1, ERN + "1": 2})])
POD2 = _pod([_container("con0", {ERN: 1}), _container("con1", {ERN + "1": 2})])
POD_INIT = _pod([_container("con0", {ERN: 1})], [_container("init-con0", {ERN + "init": 2})])
POD_INIT2 = _pod([_container("con0", {ERN: 1})],
                 [_container("init-con0", {ERN + "init": 1}), _container("init-con1", {ERN + "init": 2})])
POD_INIT3 = _pod([_container("con0", {ERN: 1})],
                 [_container("init-con0", {ERN + "init": 1}), _container("sidecar-con1", {ERN + "init": 1}, True),
                  _container("init-con2", {ERN + "init": 2})])
RES = {ERN: 1}
RES2 = {ERN: 1, ERN + "1": 2}
RES_INIT = {ERN: 1, ERN + "init": 2}
DEV_MAP = {ERN: "class"}
DEV_MAP2 = {ERN: "class", ERN + "1": "class1"}
DEV_MAP_INIT = {ERN: "class", ERN + "init": "classInit"}


@pytest.mark.parametrize("name,pod,extended,mapping,want", [
    ("nil", POD1, {}, {}, []),
    ("one resource match", POD1, RES, DEV_MAP, [("container-0-request-0", "class", 1)]),
    ("one resource match, one resource not match", POD1, RES2, DEV_MAP, [("container-0-request-0", "class", 1)]),
    ("two resources match", POD1, RES2, DEV_MAP2,
     [("container-0-request-0", "class", 1), ("container-0-request-1", "class1", 2)]),
    ("two containers match", POD2, RES2, DEV_MAP2,
     [("container-0-request-0", "class", 1), ("container-1-request-0", "class1", 2)]),
    ("one init container, one regular container", POD_INIT, RES_INIT, DEV_MAP_INIT,
     [("container-0-request-0", "classInit", 2), ("container-1-request-0", "class", 1)]),
    ("two init containers, one regular container", POD_INIT2, RES_INIT, DEV_MAP_INIT,
     [("container-1-request-0", "classInit", 2), ("container-2-request-0", "class", 1)]),
    ("three init containers, one sidecar, one regular container", POD_INIT3, RES_INIT, DEV_MAP_INIT,
     [("container-1-request-0", "classInit", 1), ("container-2-request-0", "classInit", 2),
      ("container-3-request-0", "class", 1)]),
])
def test_create_requests(name, pod, extended, mapping, want):
    requests, _ = create_requests_and_mappings(pod, extended, _resolver(mapping))
    assert [(r.name, r.exactly.device_class_name, r.exactly.count) for r in requests] == want
    assert all(r.exactly.allocation_mode == "ExactCount" for r in requests)


def _sorted_mappings(mappings):
    return sorted(((m["requestName"], m["containerName"], m["resourceName"]) for m in mappings))


@pytest.mark.parametrize("name,pod,extended,mapping,want", [
    ("one container, two requests", POD1, RES2, DEV_MAP2,
     [("container-0-request-0", "con0", ERN), ("container-0-request-1", "con0", ERN + "1")]),
    ("two containers, two requests", POD2, RES2, DEV_MAP2,
     [("container-0-request-0", "con0", ERN), ("container-1-request-0", "con1", ERN + "1")]),
    ("one init container, one regular container, one request", POD_INIT, RES_INIT, DEV_MAP_INIT,
     [("container-0-request-0", "init-con0", ERN + "init"), ("container-1-request-0", "con0", ERN)]),
    # the short-lived init containers share the largest one's request
    ("three containers (two are init container), two requests", POD_INIT2, RES_INIT, DEV_MAP_INIT,
     [("container-1-request-0", "init-con0", ERN + "init"), ("container-1-request-0", "init-con1", ERN + "init"),
      ("container-2-request-0", "con0", ERN)]),
    # an init container before a sidecar reuses the sidecar's devices
    ("four containers (two are init container, one sidecar), three requests", POD_INIT3, RES_INIT, DEV_MAP_INIT,
     [("container-1-request-0", "init-con0", ERN + "init"), ("container-1-request-0", "sidecar-con1", ERN + "init"),
      ("container-2-request-0", "init-con2", ERN + "init"), ("container-3-request-0", "con0", ERN)]),
])
def test_create_mappings(name, pod, extended, mapping, want):
    _, mappings = create_requests_and_mappings(pod, extended, _resolver(mapping))
    assert _sorted_mappings(mappings) == want


# -- the extended resource cache -------------------------------------------------------------------
def _class(name: str, ern: str = "", created: str | None = None) -> DeviceClass:
    meta: dict = {"name": name}
    if created:
        meta["creationTimestamp"] = created
    return parse_device_class({"metadata": meta, "spec": {"extendedResourceName": ern} if ern else {}})


def test_cache_explicit_and_implicit_names():
    cache = ExtendedResourceCache([_class("gpu", ERN), _class("fpga")])
    assert cache.get_device_class(ERN).name == "gpu"
    assert cache.get_device_class(DEVICE_CLASS_PREFIX + "gpu").name == "gpu"
    assert cache.get_device_class(DEVICE_CLASS_PREFIX + "fpga").name == "fpga"
    assert cache.get_device_class("example.com/fpga") is None


def test_cache_newer_class_takes_an_explicit_name():
    """Upstream prefers the newer class (a migration from one class to another)."""
    old, young = _class("a", ERN, "2024-01-01T00:00:00Z"), _class("b", ERN, "2024-01-02T00:00:00Z")
    cache = ExtendedResourceCache([young, old])
    assert cache.get_device_class(ERN).name == "b"
    # upstream returns early: the older class's implicit name is not mapped either
    assert cache.get_device_class(DEVICE_CLASS_PREFIX + "a") is None
    cache = ExtendedResourceCache([old, young])
    assert cache.get_device_class(ERN).name == "b"
    assert cache.get_device_class(DEVICE_CLASS_PREFIX + "a").name == "a"


def test_cache_same_creation_time_lower_name_wins():
    cache = ExtendedResourceCache([_class("b", ERN), _class("a", ERN)])
    assert cache.get_device_class(ERN).name == "a"


def test_cache_update_and_delete():
    gpu = _class("gpu", ERN)
    cache = ExtendedResourceCache([gpu])
    renamed = _class("gpu", "example.com/other")
    cache.on_update(gpu, renamed)
    assert cache.get_device_class(ERN) is None
    assert cache.get_device_class("example.com/other").name == "gpu"
    cache.on_delete(renamed)
    assert not cache


# -- DynamicResources (upstream TestPlugin, extended-resource-* cases) -------------------------------
def device_class(name: str = "my-resource-class", ern: str | None = ERN) -> object:
    spec: dict = {}
    if ern:
        spec["extendedResourceName"] = ern
    return parse_device_class({"metadata": {"name": name}, "spec": spec})


def worker_slice(node: str = "worker", devices: int = 1) -> object:
    return parse_resource_slice({"metadata": {"name": f"{node}-slice"}, "spec": {
        "driver": DRIVER, "nodeName": node, "pool": {"name": node, "generation": 1, "resourceSliceCount": 1},
        "devices": [{"name": f"instance-{i}"} for i in range(devices)]}})


def ext_pod(requests: dict, containers: int = 1) -> Pod:
    return _pod([_container(f"con{i}", requests) for i in range(containers)])


def prior_claim(node: str = "worker") -> object:
    """A claim a prior cycle created for the pod (upstream extendedResourceClaim)."""
    return parse_resource_claim({"metadata": {
        "name": "my-pod-extended-resources-abcde", "namespace": "default", "uid": "uid-ext",
        "annotations": {EXTENDED_RESOURCE_CLAIM_ANNOTATION: "true"},
        "ownerReferences": [{"apiVersion": "v1", "kind": "Pod", "name": "my-pod", "uid": POD_UID, "controller": True}]},
        "spec": {"devices": {"requests": [{"name": "container-0-request-0", "exactly": {
            "deviceClassName": "my-resource-class", "allocationMode": "ExactCount", "count": 1}}]}},
        "status": {"allocation": {"devices": {"results": [{"request": "container-0-request-0", "driver": DRIVER,
                                                           "pool": node, "device": "instance-0"}]}}}})


def setup(objects, nodes=None):
    store = ObjectStore(objects)
    plugin = DynamicResources(DynamicResourcesArgs(), SimpleNamespace(client=store))
    snapshot = build_snapshot(nodes if nodes is not None else [make_node("worker")])
    return plugin, store, snapshot.batch()


def cycle(plugin, p, batch):
    state = CycleState()
    _, pre = plugin.pre_filter(state, p, list(batch))
    filters = {}
    if pre is None:
        filters = {info.node().name: plugin.filter(state, p, info) for info in batch}
    return state, pre, filters


def reasons(status):
    return None if status is None else (status.code(), status.reasons())


def ext_claims(store):
    return [c for c in store.list_objects("ResourceClaim")
            if c.annotations.get(EXTENDED_RESOURCE_CLAIM_ANNOTATION) == "true"]


def test_extended_resource_name_with_node_resource():
    """The node's device plugin offers the resource: nothing for DRA, no claim created."""
    plugin, store, batch = setup([device_class()], [make_node("worker", extra={ERN: "1"})])
    p = ext_pod({ERN: 1})
    state, pre, filters = cycle(plugin, p, batch)
    assert pre is None and filters == {"worker": None}
    assert plugin.reserve(state, p, "worker") is None
    assert plugin.pre_bind_pre_flight(state, p, "worker") is None
    assert plugin.pre_bind(state, p, "worker") is None
    assert ext_claims(store) == []


def test_extended_resource_one_device_plugin_one_dra():
    ern2 = "example.com/gpu2"
    plugin, store, batch = setup([device_class(), device_class("class-2", ern2), worker_slice()],
                                 [make_node("worker", extra={ERN: "1"})])
    p = ext_pod({ERN: 1, ern2: 1})
    state, pre, filters = cycle(plugin, p, batch)
    assert pre is None and filters == {"worker": None}
    assert plugin.reserve(state, p, "worker") is None
    assert plugin.manager.claim_has_pending_allocation(state.read("DynamicResources").initial_extended_uid)
    assert plugin.pre_bind(state, p, "worker") is None
    [claim] = ext_claims(store)
    assert claim.name.startswith("my-pod-extended-resources-")
    assert [(r.name, r.exactly.device_class_name, r.exactly.count) for r in claim.requests] == [
        ("container-0-request-1", "class-2", 1)]
    assert [r["device"] for r in claim.allocation["devices"]["results"]] == ["instance-0"]
    assert claim.reserved_for == ({"resource": "pods", "name": "my-pod", "uid": POD_UID},)
    assert claim.finalizers == ("resource.kubernetes.io/delete-protection",)
    assert not plugin.manager.in_flight


@pytest.mark.parametrize("lookup", ["none", "decoy"])
def test_pre_bind_uses_the_created_claim(lookup):
    """PreBind goes on with the claim its create returned (upstream: the API's answer), not with
    a lookup in the cluster afterwards: a lookup finding no claim, or another one, changes nothing."""
    plugin, store, batch = setup([device_class(), worker_slice()])
    p = ext_pod({ERN: 1})
    state, pre, filters = cycle(plugin, p, batch)
    assert pre is None and filters == {"worker": None}
    assert plugin.reserve(state, p, "worker") is None
    decoy = prior_claim()
    plugin._find_extended_resource_claim = lambda pod: None if lookup == "none" else decoy
    returned = []
    real_add = store.add_object
    store.add_object = lambda obj: returned.append(real_add(obj)) or returned[-1]
    assert plugin.pre_bind(state, p, "worker") is None
    [claim] = ext_claims(store)
    assert [c.uid for c in returned] == [claim.uid] and claim.name.startswith("my-pod-extended-resources-")
    s = state.read("DynamicResources")
    assert s.claims[s.extended_index] is claim  # the status write's result, stored, tracked for Unreserve
    assert [r["device"] for r in claim.allocation["devices"]["results"]] == ["instance-0"]
    assert claim.reserved_for == ({"resource": "pods", "name": "my-pod", "uid": POD_UID},)
    assert not plugin.manager.in_flight


def test_pre_bind_refuses_a_create_without_its_claim():
    """A client whose create answers no object: PreBind fails as a create error, no lookup."""
    plugin, store, batch = setup([device_class(), worker_slice()])
    p = ext_pod({ERN: 1})
    state, _, _ = cycle(plugin, p, batch)
    assert plugin.reserve(state, p, "worker") is None
    real_add = store.add_object
    store.add_object = lambda obj: real_add(obj) and None
    status = plugin.pre_bind(state, p, "worker")
    assert reasons(status) == (Code.ERROR, ["create claim for extended resources default/: the create returned "
                                            "no claim"])


@pytest.mark.parametrize("name,ern,requested,alloc", [
    ("extended-resource-name-with-zero-allocatable", ERN, ERN, {ERN: "0"}),
    ("extended-resource-name-with-resources", ERN, ERN, {}),
    ("implicit-extended-resource-name-with-resources", ERN, DEVICE_CLASS_PREFIX + "my-resource-class", {}),
])
def test_extended_resource_allocated_through_dra(name, ern, requested, alloc):
    plugin, store, batch = setup([device_class(ern=ern), worker_slice(devices=2)],
                                 [make_node("worker", extra=alloc)])
    p = ext_pod({requested: 1})
    state, pre, filters = cycle(plugin, p, batch)
    assert pre is None and filters == {"worker": None}
    assert plugin.reserve(state, p, "worker") is None
    assert plugin.pre_bind(state, p, "worker") is None
    [claim] = ext_claims(store)
    assert claim.owner_references[0].uid == POD_UID and claim.owner_references[0].controller
    assert [(r.name, r.exactly.count) for r in claim.requests] == [("container-0-request-0", 1)]
    assert [r["request"] for r in claim.allocation["devices"]["results"]] == ["container-0-request-0"]


def test_implicit_extended_resource_name_two_containers():
    plugin, store, batch = setup([device_class(), worker_slice(devices=2)])
    p = ext_pod({DEVICE_CLASS_PREFIX + "my-resource-class": 1}, containers=2)
    state, _, filters = cycle(plugin, p, batch)
    assert filters == {"worker": None}
    assert plugin.reserve(state, p, "worker") is None
    assert plugin.pre_bind(state, p, "worker") is None
    [claim] = ext_claims(store)
    assert [r.name for r in claim.requests] == ["container-0-request-0", "container-1-request-0"]
    assert sorted(r["device"] for r in claim.allocation["devices"]["results"]) == ["instance-0", "instance-1"]


def test_non_dra_extended_resource_name_with_zero_allocatable():
    """The class maps no such name: PreFilter skips."""
    plugin, _, batch = setup([device_class(ern=None), worker_slice()], [make_node("worker", extra={ERN: "0"})])
    state, pre, _ = cycle(plugin, ext_pod({ERN: 1}), batch)
    assert reasons(pre) == (Code.SKIP, [])
    assert reasons(plugin.pre_bind_pre_flight(state, ext_pod({ERN: 1}), "worker")) == (Code.SKIP, [])


def test_extended_resource_name_no_resource():
    plugin, _, batch = setup([device_class()])
    p = ext_pod({ERN: 1})
    state, pre, filters = cycle(plugin, p, batch)
    assert pre is None
    assert reasons(filters["worker"]) == (UUA, ["cannot allocate all claims"])
    _, status = plugin.post_filter(state, p, None)
    assert reasons(status) == (Code.UNSCHEDULABLE, [])


def test_extended_resource_not_provided_at_all():
    """A requested extended resource neither the node nor a class provides."""
    plugin, _, batch = setup([device_class(), worker_slice()])
    _, _, filters = cycle(plugin, ext_pod({ERN: 1, "example.com/fpga": 1}), batch)
    assert reasons(filters["worker"]) == (UUA, ["cannot fit resource"])


@pytest.mark.parametrize("node", ["worker", "worker-2"])
def test_extended_resource_name_with_resources_has_claim(node):
    """extended-resource-name-with-resources-has-claim / -delete-claim: a prior cycle's claim is
    refused on every node and PostFilter deletes it."""
    plugin, store, batch = setup([device_class(), worker_slice(), prior_claim(node)])
    p = ext_pod({ERN: 1})
    state, pre, filters = cycle(plugin, p, batch)
    assert pre is None
    assert reasons(filters["worker"]) == (UUA, ["cannot schedule extended resource claim"])
    _, status = plugin.post_filter(state, p, None)
    assert reasons(status) == (Code.UNSCHEDULABLE, ["deletion of ResourceClaim completed"])
    assert ext_claims(store) == []


def test_extended_resource_name_bind_failure():
    """Unreserve after PreBind deletes the claim PreBind created."""
    plugin, store, batch = setup([device_class(), worker_slice()])
    p = ext_pod({ERN: 1})
    state, _, _ = cycle(plugin, p, batch)
    assert plugin.reserve(state, p, "worker") is None
    assert plugin.pre_bind(state, p, "worker") is None
    assert len(ext_claims(store)) == 1
    plugin.unreserve(state, p, "worker")
    assert ext_claims(store) == []


def test_extended_resource_name_skip_bind():
    """Unreserve before PreBind: nothing was created, the in-flight allocation is dropped."""
    plugin, store, batch = setup([device_class(), worker_slice()])
    p = ext_pod({ERN: 1})
    state, _, _ = cycle(plugin, p, batch)
    assert plugin.reserve(state, p, "worker") is None
    assert plugin.manager.in_flight
    plugin.unreserve(state, p, "worker")
    assert not plugin.manager.in_flight
    assert ext_claims(store) == []


def test_extended_resource_name_claim_creation_failure():
    plugin, store, batch = setup([device_class(), worker_slice()])

    def refuse(obj):
        raise ValueError("claim creation errors")

    store.add_object = refuse
    p = ext_pod({ERN: 1})
    state, _, _ = cycle(plugin, p, batch)
    assert plugin.reserve(state, p, "worker") is None
    status = plugin.pre_bind(state, p, "worker")
    assert reasons(status) == (Code.ERROR, ["create claim for extended resources default/: claim creation errors"])


def test_user_claim_and_extended_resource_from_a_device_plugin_fails_prebind():
    """A pod with a claim of its own whose extended resource the node's device plugin offers:
    its special claim for the node has no request, so PreBind cannot record the mappings
    (upstream's bindClaim and patchPodExtendedResourceClaimStatus)."""
    user = parse_resource_claim({"metadata": {"name": "c", "namespace": "default", "uid": "uid-c"}, "spec": {
        "devices": {"requests": [{"name": "r", "exactly": {"deviceClassName": "my-resource-class"}}]}}})
    plugin, store, batch = setup([device_class(), worker_slice(), user], [make_node("worker", extra={ERN: "1"})])
    p = Pod.from_manifest({"metadata": {"name": "my-pod", "namespace": "default", "uid": POD_UID},
                           "spec": {"containers": [_container("con0", {ERN: 1})],
                                    "resourceClaims": [{"name": "r", "resourceClaimName": "c"}]}}, validate=False)
    state, pre, filters = cycle(plugin, p, batch)
    assert pre is None and filters == {"worker": None}
    assert plugin.reserve(state, p, "worker") is None
    status = plugin.pre_bind(state, p, "worker")
    assert reasons(status) == (Code.ERROR, ["nil or empty request mappings, no update of pod default/my-pod "
                                            "ExtendedResourceClaimStatus"])
    plugin.unreserve(state, p, "worker")
    assert ext_claims(store) == []  # Unreserve deleted the claim PreBind created


def test_mapped_extended_resources_counts_nonzero_requests_only():
    """upstream hasDeviceClassMappedExtendedResource skips zero requests: a pod whose only mapped
    resource is requested at zero has no special claim; with a nonzero one, every DRA extended
    resource name it requests is kept (podScalarResources, zeros and unmapped names included)."""
    other = "example.com/other"
    plugin, _store, _batch = setup([device_class()])
    assert plugin.mapped_extended_resources(ext_pod({ERN: 0})) is None
    assert plugin.mapped_extended_resources(ext_pod({ERN: 0, other: 1})) is None
    assert plugin.mapped_extended_resources(ext_pod({ERN: 1, other: 0})) == {ERN: 1, other: 0}
    assert plugin.mapped_extended_resources(ext_pod({other: 2})) is None


def test_reserve_without_an_allocation_for_the_node():
    """Reserve on a node Filter left no allocation for: nothing to do when the special claim is
    the only claim to allocate (the node's device plugins serve the resources), an error when a
    claim of the pod's own must be allocated."""
    user = parse_resource_claim({"metadata": {"name": "c", "namespace": "default", "uid": "uid-c"}, "spec": {
        "devices": {"requests": [{"name": "r", "exactly": {"deviceClassName": "my-resource-class"}}]}}})
    plugin, _store, batch = setup([device_class(), worker_slice(), user])
    p = ext_pod({ERN: 1})
    state, pre, _filters = cycle(plugin, p, batch)
    assert pre is None
    s = state.read("DynamicResources")
    s.node_allocations.clear()
    s.vector = None
    assert plugin.reserve(state, p, "elsewhere") is None
    p2 = Pod.from_manifest({"metadata": {"name": "my-pod", "namespace": "default", "uid": POD_UID},
                            "spec": {"containers": [_container("con0", {ERN: 1})],
                                     "resourceClaims": [{"name": "r", "resourceClaimName": "c"}]}}, validate=False)
    state, pre, _filters = cycle(plugin, p2, batch)
    assert pre is None
    s = state.read("DynamicResources")
    s.node_allocations.clear()
    s.vector = None
    assert reasons(plugin.reserve(state, p2, "elsewhere")) == (Code.ERROR, ["claim allocation not found for node"])


# -- NodeResourcesFit: shouldDelegateResourceToDRA ---------------------------------------------------
def _fit(store):
    return fit_module.new(NodeResourcesFitArgs.defaults() if hasattr(NodeResourcesFitArgs, "defaults")
                          else NodeResourcesFitArgs(), SimpleNamespace(client=store))


def _fit_verdicts(fit, p, nodes):
    snapshot = build_snapshot(nodes)
    state = CycleState()
    fit.pre_filter(state, p, list(snapshot.batch()))
    per_node = {info.node().name: reasons(fit.filter(state, p, info)) for info in snapshot.batch()}
    batch = snapshot.batch()
    verdicts = fit.filter_vectorized(state, p, batch)
    vector = {info.node().name: reasons(verdicts.status(i)) for i, info in enumerate(batch)}
    return per_node, vector


def test_fit_leaves_dra_backed_resources_to_dynamic_resources():
    store = ObjectStore([device_class()])
    fit = _fit(store)
    nodes = [make_node("none"), make_node("zero", extra={ERN: "0"}), make_node("two", extra={ERN: "2"}),
             make_node("one", extra={ERN: "1"})]
    p = ext_pod({ERN: 2})
    per_node, vector = _fit_verdicts(fit, p, nodes)
    assert per_node == vector
    assert per_node == {"none": None, "zero": None, "two": None,
                        "one": (UUA, [f"Insufficient {ERN}"])}
    # without a class mapping the name, every node without enough fails as before
    per_node, _ = _fit_verdicts(_fit(ObjectStore([device_class(ern=None)])), p, nodes)
    assert per_node == {"none": (UUA, [f"Insufficient {ERN}"]), "zero": (UUA, [f"Insufficient {ERN}"]),
                        "two": None, "one": (UUA, [f"Insufficient {ERN}"])}


def test_per_node_and_batch_filters_agree_on_random_clusters():
    """Both plugins' Filter, node by node and over the batch, on seeded random clusters."""
    for seed in range(40):
        rng = random.Random(seed)
        classes = [device_class("gpu", ERN if rng.random() < 0.7 else None)]
        nodes, slices = [], []
        for i in range(rng.randint(1, 6)):
            extra = {}
            if rng.random() < 0.3:
                extra[ERN] = rng.choice(("0", "1", "2"))
            nodes.append(make_node(f"n{i}", extra=extra))
            if rng.random() < 0.7:
                slices.append(worker_slice(f"n{i}", rng.randint(1, 3)))
        name = rng.choice((ERN, DEVICE_CLASS_PREFIX + "gpu"))
        p = _pod([_container("con0", {"cpu": 1, name: rng.randint(1, 3)})],
                 [_container("init0", {name: rng.randint(1, 2)}, rng.random() < 0.5)] if rng.random() < 0.3 else [])
        store = ObjectStore([*classes, *slices])
        per_node, vector = _fit_verdicts(_fit(store), p, nodes)
        assert per_node == vector, seed
        plugin = DynamicResources(DynamicResourcesArgs(), SimpleNamespace(client=store))
        snapshot = build_snapshot(nodes)
        state = CycleState()
        _, pre = plugin.pre_filter(state, p, list(snapshot.batch()))
        if pre is not None:
            continue
        batch = snapshot.batch()
        one = {info.node().name: reasons(plugin.filter(state, p, info)) for info in batch}
        state2 = CycleState()
        plugin.pre_filter(state2, p, list(batch))
        verdicts = plugin.filter_vectorized(state2, p, batch)
        assert one == {info.node().name: reasons(verdicts.status(i)) for i, info in enumerate(batch)}, seed


def test_fit_batch_filter_without_the_absent_delegated_checks():
    """Fit's batch Filter drops the checks of DRA-mapped resources that no node's allocatable has
    (no table column, or a column that is 0 on every node) and takes the kernel's verdicts for the
    rest: seeded clusters where cpu, the pod count and a resource no class maps fail on some nodes,
    the mapped resources absent from every node, zero on some, or present on some; batch verdicts
    (codes and reasons) equal the per-node ones."""
    unmapped = "example.com/fpga"
    mixed = {"absent": 0, "zero": 0}  # seeds where some nodes pass and some fail
    for seed in range(90):
        rng = random.Random(seed)
        classes = [device_class("gpu", ERN), device_class("vf", ERN + "1")]
        mode = ("absent", "zero", "some")[seed % 3]
        nodes = []
        for i in range(rng.randint(2, 8)):
            extra = {}
            if mode != "absent" and rng.random() < 0.5:
                extra[ERN] = "0" if mode == "zero" else rng.choice(("0", "1", "3"))
            if rng.random() < 0.4:
                extra[unmapped] = rng.choice(("0", "1", "2"))
            nodes.append(make_node(f"n{i}", cpu=rng.choice(("1", "2", "4")), pods=rng.choice(("0", "1", "110")),
                                   extra=extra))
        requests: dict = {"cpu": rng.choice((1, 3)), rng.choice((ERN, DEVICE_CLASS_PREFIX + "gpu")): rng.randint(1, 2)}
        if rng.random() < 0.5:
            requests[ERN + "1"] = 1
        if rng.random() < 0.5:
            requests[unmapped] = rng.randint(1, 2)
        p = _pod([_container("con0", requests)])
        per_node, vector = _fit_verdicts(_fit(ObjectStore(classes)), p, nodes)
        assert per_node == vector, seed
        if mode in mixed and None in vector.values() and any(v is not None for v in vector.values()):
            mixed[mode] += 1
    assert min(mixed.values()) >= 5, mixed


def test_fit_batch_filter_follows_a_node_offering_the_delegated_resource():
    """The dropped checks are kept per table node version: a node whose device plugin starts
    serving the mapped resource (too little of it) fails the next Filter on the same table."""
    fit = _fit(ObjectStore([device_class("gpu", ERN)]))
    snapshot = build_snapshot([make_node("a", extra={ERN: "0"}), make_node("b")])
    p = ext_pod({ERN: 2})

    def verdicts():
        state = CycleState()
        fit.pre_filter(state, p, list(snapshot.batch()))
        batch = snapshot.batch()
        got = fit.filter_vectorized(state, p, batch)
        return {info.node().name: reasons(got.status(i)) for i, info in enumerate(batch)}

    assert verdicts() == {"a": None, "b": None}
    snapshot.table.update_node(make_node("b", extra={ERN: "1"}))
    assert verdicts() == {"a": None, "b": (UUA, [f"Insufficient {ERN}"])}


# -- whole scheduler: the fused cycle decides as the plugin calls ----------------------------------
#: scoring resources backed by DRA: NodeResourcesFit and BalancedAllocation score nodes without
#: the resource in their allocatable from their devices
SCORING_CONFIG = {"profiles": [{"schedulerName": "default-scheduler", "pluginConfig": [
    {"name": "NodeResourcesFit", "args": {"scoringStrategy": {"type": "MostAllocated", "resources": [
        {"name": "cpu", "weight": 1}, {"name": ERN, "weight": 5}]}}},
    {"name": "NodeResourcesBalancedAllocation", "args": {"resources": [
        {"name": "cpu", "weight": 1}, {"name": DEVICE_CLASS_PREFIX + "gpu", "weight": 1}]}}]}]}


def _scheduler_run(seed: int, compiled: bool, config: dict | None = None):
    from fastsched import load_config
    from fastsched.scheduler import Scheduler

    rng = random.Random(seed)
    s = Scheduler(load_config({"apiVersion": "kubescheduler.config.k8s.io/v1",
                               "kind": "KubeSchedulerConfiguration", **(config or {})}), seed=seed, record="all")
    s.use_compiled_cycle = compiled
    nodes = []
    for i in range(rng.randint(3, 12)):
        extra = {ERN: rng.choice(("0", "1", "2"))} if rng.random() < 0.3 else {}
        nodes.append(make_node(f"n{i}", cpu="8", extra=extra))
    s.add_nodes(nodes)
    s.add_object({"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": "gpu"},
                  "spec": {"extendedResourceName": ERN}})
    for i in range(len(nodes)):
        if rng.random() < 0.7:
            s.add_object({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice",
                          "metadata": {"name": f"n{i}-slice"},
                          "spec": {"driver": DRIVER, "nodeName": f"n{i}",
                                   "pool": {"name": f"n{i}", "generation": 1, "resourceSliceCount": 1},
                                   "devices": [{"name": f"d{k}"} for k in range(rng.randint(1, 4))]}})
    outcomes = []
    for round_ in range(2):
        pods = []
        for k in range(rng.randint(4, 12)):
            name = rng.choice((ERN, DEVICE_CLASS_PREFIX + "gpu", DEVICE_CLASS_PREFIX + "fpga"))
            requests = {"cpu": "1", name: str(rng.randint(1, 2))}
            pods.append({"apiVersion": "v1", "kind": "Pod",
                         "metadata": {"name": f"p{round_}-{k}", "namespace": "default"},
                         "spec": {"containers": [{"name": "c", "image": "x", "resources": {
                             "requests": requests, "limits": {n: v for n, v in requests.items() if n != "cpu"}}}]}})
        s.add_pods(pods)
        outcomes += [(r.pod.name, r.node_name, r.status, r.message,
                      tuple(h.total_scores.tolist()) if h.total_scores is not None else None)
                     for r in s.run() for h in r.history[:1]]
        if round_ == 0:  # a class for the implicit fpga name appears: plans must follow it
            s.add_object({"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": "fpga"},
                          "spec": {}})
    claims = sorted((c["metadata"]["generateName"], tuple(r["device"] for r in c["status"]["allocation"]["devices"]
                                                          ["results"]))
                    for c in s.objects("ResourceClaim"))
    return outcomes, claims


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("config", [None, SCORING_CONFIG], ids=["default", "dra-scoring"])
def test_fused_cycle_decides_as_the_plugin_calls(seed, config):
    compiled = _scheduler_run(seed, True, config)
    assert compiled == _scheduler_run(seed, False, config)
    assert compiled[1], "some pod got devices through DRA"


# -- NodeResourcesFit: isSchedulableAfterDeviceClassEvent (fit_test.go) ------------------------------
def _hint_class(name: str = "", ern: str | None = None) -> DeviceClass:
    return DeviceClass(name=name, extended_resource_name=ern or "")


# Upstream Test_isSchedulableAfterDeviceClassChange (v1.37.2, fit_test.go): (name, the pod's
# requests, old class, new class, hint, error). ``newResourcePod(framework.Resource{Memory: 2})`` is a
# pod requesting memory 2. Upstream's two "...-pointer" rows differ from the "same-..." one only in
# Go pointers (one shared string, or a nil pointer); a Python class holds the name as a string.
DEVICE_CLASS_CHANGE_ROWS = [
    ("backoff-wrong-new-object", {}, None, "not-a-class", "queue", True),
    ("backoff-wrong-old-object", {}, "not-a-class", _hint_class(), "queue", True),
    ("skip-queue-on-class-nil-extended-resource-name-pointer", {"memory": 2}, _hint_class(), _hint_class(),
     "skip", False),
    ("skip-queue-on-class-same-extended-resource-name-pointer", {"memory": 2}, _hint_class(ern=ERN),
     _hint_class(ern=ERN), "skip", False),
    ("skip-queue-on-class-same-extended-resource-name", {"memory": 2}, _hint_class(ern=ERN), _hint_class(ern=ERN),
     "skip", False),
    ("queue-on-class-add-with-implicit-extended-resource-name", {DEVICE_CLASS_PREFIX + "gpuclass": 1}, None,
     _hint_class("gpuclass", ERN), "queue", False),
    ("skip-on-class-add-with-implicit-extended-resource-name-not-matching", {DEVICE_CLASS_PREFIX + "gpuclass": 1},
     None, _hint_class("myclass", ERN), "skip", False),
    ("skip-on-class-add-with-explicit-extended-resource-name-not-matching", {"example.com/othergpu": 1}, None,
     _hint_class("myclass", ERN), "skip", False),
    ("skip-on-class-update-with-implicit-extended-resource-name", {DEVICE_CLASS_PREFIX + "gpuclass": 1},
     _hint_class("gpuclass"), _hint_class("gpuclass", ERN), "skip", False),
    ("queue-on-class-add-with-extended-resource-name", {ERN: 1}, None, _hint_class(ern=ERN), "queue", False),
    ("queue-on-class-update-with-extended-resource-name", {ERN: 1}, _hint_class(ern=ERN + "1"), _hint_class(ern=ERN),
     "queue", False),
]


@pytest.mark.parametrize("name,requests,old,new,want,err", DEVICE_CLASS_CHANGE_ROWS,
                         ids=[r[0] for r in DEVICE_CLASS_CHANGE_ROWS])
def test_fit_is_schedulable_after_device_class_event(name, requests, old, new, want, err):
    from fastsched.framework.interface import QueueingHint
    from fastsched.plugins.noderesources.dra_extended import is_schedulable_after_device_class_event

    target = ext_pod(requests) if requests else Pod(name="p")
    hint, error = is_schedulable_after_device_class_event(target, old, new)
    assert hint == (QueueingHint.QUEUE if want == "queue" else QueueingHint.QUEUE_SKIP)
    assert (error is not None) == err


# -- NodeResourcesFit's Score: TestFitScore's DRA-backed extended resource cases ---------------------
@pytest.mark.parametrize("run_pre_score", [True, False], ids=["prescore", "without-prescore"])
def test_fit_score_least_allocated_with_dra_backed_extended_resources(run_pre_score):
    """node1 has 3 devices of the class, node2 2: (3-1)/3 and (2-1)/2 free."""
    from fastsched.config.args import ResourceSpec, ScoringStrategy

    ern = "extended.resource.dra.io/something"
    store = ObjectStore([device_class("device-class-name", ern), worker_slice("node1", 3), worker_slice("node2", 2)])
    args = NodeResourcesFitArgs(scoring_strategy=ScoringStrategy("LeastAllocated", [ResourceSpec(ern, 1)]))
    fit = fit_module.new(args, SimpleNamespace(client=store))
    snapshot = build_snapshot([make_node("node1"), make_node("node2")])
    p = ext_pod({ern: 1})
    state = CycleState()
    if run_pre_score:
        assert fit.pre_score(state, p, list(snapshot.batch())) is None
    per_node = [fit.score(state, p, info)[0] for info in snapshot.batch()]
    vector, status = fit.score_vectorized(state, p, snapshot.batch())
    assert status is None
    assert per_node == vector.tolist() == [66, 50]


def test_fit_score_counts_allocated_devices_and_prefers_the_device_plugin():
    """MostAllocated over cpu (weight 1) and the DRA-backed resource (weight 5): a node offering
    the resource through its allocatable is scored from it, the others from their devices (the
    allocated ones counted); a node with neither leaves the resource out."""
    from fastsched.config.args import ResourceSpec, ScoringStrategy

    taken = parse_resource_claim({"metadata": {"name": "taken", "namespace": "default", "uid": "uid-taken"},
                                  "spec": {"devices": {"requests": [{"name": "r", "exactly": {
                                      "deviceClassName": "my-resource-class"}}]}},
                                  "status": {"allocation": {"devices": {"results": [
                                      {"request": "r", "driver": DRIVER, "pool": "dra", "device": "instance-0"}]}}}})
    store = ObjectStore([device_class(), worker_slice("dra", 4), taken])
    args = NodeResourcesFitArgs(scoring_strategy=ScoringStrategy(
        "MostAllocated", [ResourceSpec("cpu", 1), ResourceSpec(ERN, 5)]))
    fit = fit_module.new(args, SimpleNamespace(client=store))
    snapshot = build_snapshot([make_node("dra", cpu="4"), make_node("plugin", cpu="4", extra={ERN: "8"}),
                               make_node("none", cpu="4")])
    p = _pod([_container("c", {"cpu": "1", ERN: 1})])
    state = CycleState()
    fit.pre_score(state, p, list(snapshot.batch()))
    per_node = [fit.score(state, p, info)[0] for info in snapshot.batch()]
    # cpu 1000/4000 = 25; dra: (1 + 1) of 4 devices = 50; plugin: 1 of 8 = 12; none: cpu only
    assert per_node == [(25 + 5 * 50) // 6, (25 + 5 * 12) // 6, 25]
    assert fit.score_vectorized(state, p, snapshot.batch())[0].tolist() == per_node


def test_balanced_allocation_scores_dra_backed_resources_and_reports_upstreams_panic():
    """BalancedAllocation scores a DRA-backed resource from the devices when the class has no
    selector; with CEL selectors upstream v1.37.2 dereferences its nil CEL cache (a panic)."""
    from fastsched.config.args import NodeResourcesBalancedAllocationArgs, ResourceSpec
    from fastsched.plugins.noderesources import balanced_allocation

    args = NodeResourcesBalancedAllocationArgs(resources=[ResourceSpec("cpu", 1), ResourceSpec(ERN, 1)])
    snapshot = build_snapshot([make_node("worker", cpu="4")])
    p = _pod([_container("c", {"cpu": "1", ERN: 1})])
    ba = balanced_allocation.new(args, SimpleNamespace(client=ObjectStore([device_class(), worker_slice(devices=2)])))
    state = CycleState()
    assert ba.pre_score(state, p, list(snapshot.batch())) is None
    (info,) = list(snapshot.batch())
    # with the pod cpu 1/4 and 1 of 2 devices: std 0.125, balance 87; without it 100:
    # 50 + (50 + 87 - 100) / 2 (cpu alone would give 75)
    assert ba.score(state, p, info) == (68, None)
    assert ba.score_vectorized(state, p, snapshot.batch())[0].tolist() == [68]
    selective = parse_device_class({"metadata": {"name": "my-resource-class"}, "spec": {
        "extendedResourceName": ERN, "selectors": [{"cel": {"expression": f'device.driver == "{DRIVER}"'}}]}})
    ba = balanced_allocation.new(args, SimpleNamespace(client=ObjectStore([selective, worker_slice(devices=4)])))
    state = CycleState()
    ba.pre_score(state, p, list(snapshot.batch()))
    score, status = ba.score(state, p, info)
    assert status is not None and status.code() == Code.ERROR
    assert "nil CEL cache" in status.message()
    assert ba.score_vectorized(state, p, snapshot.batch())[1].code() == Code.ERROR


@pytest.mark.parametrize("seed", range(8))
def test_nodes_of_one_shape_share_the_special_claims_search(seed, monkeypatch):
    """Filter builds the special claim per node; nodes that leave a pod the same DRA-served
    requests get the same claim object, so the allocator's node-shape cache serves them one
    search. A Scheduler run on nodes of two shapes (some offering one of the resources through a
    device plugin) ends as the same run with the cache off (every pod's node, status and message,
    every claim's allocation; without the claims shared either), with fewer searches."""
    import random

    from fastsched import Scheduler
    from fastsched.dra import allocator as allocator_module
    from fastsched.plugins import dynamicresources as dr_module
    from fastsched.plugins.dynamicresources import manager as manager_module

    rng = random.Random(seed)
    ern2 = "example.com/gpu2"
    nodes = [make_node(f"w{i}", extra={ern2: "1"} if rng.random() < 0.3 else None) for i in range(8)]
    slices = [worker_slice(f"w{i}", devices=1 + (i % 2) * 2) for i in range(8)]
    pods = [_pod([_container("c", {ERN: rng.choice([1, 2]), ern2: 1})], name=f"p{i}", uid=f"uid-{i}")
            for i in range(10)]
    searches: list[int] = []
    real = allocator_module._Allocation.run
    monkeypatch.setattr(allocator_module._Allocation, "run", lambda self: searches.append(1) or real(self))

    class NoMemo(dict):  # the reference builds the special claim anew for every node
        def __setitem__(self, key, value):
            pass

    def run(shapes: bool):
        searches.clear()
        if not shapes:
            monkeypatch.setattr(manager_module.NodeShapes, "key", lambda self, *a: None)
            init = dr_module._StateData.__init__

            def no_memo_init(self):
                init(self)
                self.extended_claims = NoMemo()
            monkeypatch.setattr(dr_module._StateData, "__init__", no_memo_init)
        s = Scheduler(seed=seed)
        s.add([device_class(), device_class("class-2", ern2), *slices])
        s.add_nodes(nodes)
        s.add_pods(pods)
        results = [(r.pod.name, r.status, r.node_name, r.message) for r in s.run()]
        claims = sorted((c["metadata"]["name"], repr(c.get("status", {}).get("allocation")))
                        for c in s.objects("ResourceClaim"))
        return results, claims, len(searches)

    results, claims, searched = run(True)
    want_results, want_claims, want_searched = run(False)
    assert results == want_results and claims == want_claims
    assert any(r[1] == "Scheduled" for r in results)
    assert searched < want_searched


@pytest.mark.parametrize("seed", range(3))
def test_prebind_creates_the_claim_its_manifest_decodes_to(seed, monkeypatch):
    """PreBind hands the Scheduler's cluster the special claim built from the values of its
    manifest (the cluster validates objects built in code as it validates manifests) instead of
    the manifest: the claims stored, field for field, the claims ``objects`` shows at the end and
    the pods' results are those of a run handing the manifest to the loader."""
    import dataclasses

    from fastsched.plugins import dynamicresources as dr_module
    from fastsched.scheduler import cluster as cluster_module

    added: list = []
    real_add = cluster_module.Cluster.add_object

    def recording_add(self, obj):
        stored = real_add(self, obj)
        if stored.KIND == "ResourceClaim":
            added.append(stored)
        return stored

    monkeypatch.setattr(cluster_module.Cluster, "add_object", recording_add)
    built_in_plugin: list = []  # (the built path reads the spec parsed per request list)
    real_spec = dr_module.DynamicResources._special_spec
    monkeypatch.setattr(dr_module.DynamicResources, "_special_spec",
                        lambda self, *a: built_in_plugin.append(1) or real_spec(self, *a))
    runs = {}
    for built in (True, False):
        monkeypatch.setattr(cluster_module.Cluster, "validates_built_objects", built)
        added.clear()
        built_in_plugin.clear()
        outcomes, claims = _scheduler_run(seed, True)
        runs[built] = (outcomes, claims, list(added))
        assert len(built_in_plugin) == (len(added) if built else 0)
    assert runs[True][:2] == runs[False][:2]
    got, want = runs[True][2], runs[False][2]
    assert len(got) == len(want) and got
    for a, b in zip(got, want):
        for f in dataclasses.fields(a):
            if f.name != "decoded_under":  # (the loader's record of how it decoded b)
                assert getattr(a, f.name) == getattr(b, f.name), (seed, a.name, f.name)
        assert a.admitted == b.admitted


def test_special_claim_requests_kept_per_containers_and_classes():
    """The special claim's requests and mappings are kept across pods for the same DRA-served
    requests, class names and container tuples (pods stamped from one template share them), so
    a later such pod reuses them; a pod with other containers (another request name, another
    container in the mappings) gets its own, equal to ``create_requests_and_mappings``."""
    import dataclasses

    from fastsched.dra.extended_resources import create_requests_and_mappings
    from fastsched.plugins.dynamicresources import _state

    plugin, store, batch = setup([device_class(), worker_slice(devices=4)])
    a = _pod([_container("c0", {ERN: 1})], name="a", uid="uid-a")
    b = dataclasses.replace(a, name="b", uid="uid-b")  # the same container tuple, as a template's pods
    c = _pod([_container("x", {"cpu": "1"}), _container("c1", {ERN: 1})], name="c", uid="uid-c")
    d = _pod([_container("other", {ERN: 1})], name="d", uid="uid-d")
    e = _pod([_container("c0", {ERN: 1})], init=[_container("side", {ERN: 1}, sidecar=True)], name="e", uid="uid-e")
    (node,) = [info.node() for info in batch]
    made = {}
    for p in (a, b, c, d, e):
        state, pre, _ = cycle(plugin, p, batch)
        assert pre is None
        s = _state(state)
        claim, mappings, status = plugin._filter_extended_resources(s, node)
        assert status is None and claim is not None
        want_requests, want_mappings = create_requests_and_mappings(p, {ERN: 1}, plugin.manager.device_class_resolver())
        assert list(claim.requests) == want_requests and mappings == want_mappings
        assert claim.owner_references == s.claims[s.extended_index].owner_references
        made[p.name] = claim.requests
    assert made["b"] is made["a"]  # kept: b's containers are a's
    assert [r.name for r in made["c"]] == ["container-1-request-0"]
