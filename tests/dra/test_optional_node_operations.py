"""DRAOptionalNodeOperations (alpha, off at v1.37.2): slices whose devices skip node-local
operations, allocated only on nodes that declare the feature.

Upstream's tables transcribed (v1.37.2 / v0.37.2): the ``optional-node-operations*`` rows of
``allocatortesting/allocator_testing.go`` (``TestAllocator``); ``dynamicresources_test.go``:
the testPlugin rows ``allocated-skip-node-operations-missing-feature`` and
``allocated-skip-node-operations-with-feature``, ``TestFilterReusesPendingAllocationRequiresDRAOptionalNodeOperations``
(upstream writes it with a PodGroup claim and DRAWorkloadResourceClaims on; the reuse it tests is
GenericWorkload's, so here the member names the claim itself),
``Test_allocationResultRequiresDRAOptionalNodeOperations`` and the ``OptionalNodeOperations`` row of
``TestAllocatorSelection``; ``validation_resourceslice_test.go``'s ``skipNodeOperations`` rows; the
ResourceSlice strategy's ``*-optional-node-operations`` rows (create) and the ResourceClaim status
strategy's (a given status)."""
from __future__ import annotations

from types import SimpleNamespace

import pytest

from fastsched.api import Node
from fastsched.api.resource import (allocation_requires_optional_node_operations, claim_with_status,
                                    parse_resource_claim, parse_resource_slice)
from fastsched.api.strategy import prepare_for_create, validate
from fastsched.config.args import DynamicResourcesArgs
from fastsched.dra.allocator import Allocator, Features
from fastsched.features import KNOWN_GATES, FeatureGates
from fastsched.framework.cycle_state import CycleState
from fastsched.framework.objects import ObjectStore
from fastsched.framework.status import Code
from fastsched.plugins.dynamicresources import (POD_GROUP_CYCLE_KEY, DynamicResources,
                                                _get_or_create_pod_group_state)
from fastsched.plugins.dynamicresources.tests.test_dynamic_resources import (CLAIM, DRIVER, UUA, allocation_on, claim,
                                                                             device_class, pod, ref, run_cycle,
                                                                             worker_slice)
from fastsched.snapshot import build_snapshot
from fastsched.testing import node_manifest

from .builders import (CLAIM0, CLASS_A, DEVICE1, DRIVER_A, NODE1, POOL1, REGION1, REQ0, allocation,
                       claim_with_request, device_class as class_of, local_node_selector, node, result, slice_one)

ALL = "*"
FEATURE = "DRAOptionalNodeOperations"
GATE_ON = FeatureGates({FEATURE: True})


def node_with_feature(name: str, region: str):
    """``nodeWithDRAOptionalNodeOperations``."""
    n = node(name, region)
    n.declared_features = (FEATURE,)
    return n


def skipping_slice(*ops: str):
    """``sliceWithOneDevice(...).withSkipNodeOperations(ops...)``."""
    s = slice_one("slice-1", NODE1, POOL1, DRIVER_A)
    return s.replace(skip_node_operations=tuple(ops))


# -- allocator_testing.go ---------------------------------------------------------------------------
ON = Features(optional_node_operations=True)

ALLOCATOR_CASES = {
    "optional-node-operations": (
        ON, node_with_feature(NODE1, REGION1),
        [allocation(local_node_selector(NODE1),
                    {**result(REQ0, DRIVER_A, POOL1, DEVICE1), "skipNodeOperations": [ALL]})]),
    "optional-node-operations-missing-feature": (ON, node(NODE1, REGION1), None),
    # the experimental variant (another alpha feature selects it) refuses such devices with the
    # feature off; the incubating variant has no such field (the API server drops it then)
    "experimental-variant-feature-off": (Features(list_type_attributes=True), node_with_feature(NODE1, REGION1), None),
    "incubating-variant": (
        Features(), node(NODE1, REGION1),
        [allocation(local_node_selector(NODE1), result(REQ0, DRIVER_A, POOL1, DEVICE1))]),
}


@pytest.mark.parametrize("name", sorted(ALLOCATOR_CASES))
def test_allocator(name):
    features, the_node, expected = ALLOCATOR_CASES[name]
    classes = {CLASS_A: class_of(CLASS_A, DRIVER_A)}
    allocator = Allocator(features, set(), classes.get, [skipping_slice(ALL)])
    assert allocator.allocate(the_node, [claim_with_request(CLAIM0, REQ0, CLASS_A)]) == expected


def test_variant():
    """TestAllocatorSelection's ``OptionalNodeOperations`` row: the experimental variant."""
    assert ON.variant == "experimental" and Features().variant == "incubating"


# -- dynamicresources_test.go -----------------------------------------------------------------------
def test_allocation_result_requires_optional_node_operations():
    """Test_allocationResultRequiresDRAOptionalNodeOperations."""
    def alloc(*ops_per_result):
        return {"devices": {"results": [{"request": "r", "driver": "d", "pool": "p", "device": f"dev-{i}",
                                         **({"skipNodeOperations": ops} if ops is not None else {})}
                                        for i, ops in enumerate(ops_per_result)]}}
    assert allocation_requires_optional_node_operations(None) is False  # nil allocation
    assert allocation_requires_optional_node_operations({"devices": {"results": []}}) is False  # no results
    assert allocation_requires_optional_node_operations(alloc(None)) is False  # no skip operations
    assert allocation_requires_optional_node_operations(alloc([ALL])) is True  # result with skip operations
    assert allocation_requires_optional_node_operations(alloc([])) is False  # empty skip operations
    assert allocation_requires_optional_node_operations(alloc(None, [ALL])) is True  # one of several results


def _skipping_allocation(node_name: str | None = "worker") -> dict:
    a = allocation_on(node_name or "worker")
    if node_name is None:
        del a["nodeSelector"]
    a["devices"]["results"][0]["skipNodeOperations"] = [ALL]
    return a


def _setup(objects, *nodes):
    store = ObjectStore(objects)
    plugin = DynamicResources(DynamicResourcesArgs(), SimpleNamespace(client=store))
    snapshot = build_snapshot([Node.from_manifest(n, validate=False) for n in nodes])
    return plugin, store, snapshot.batch()


def _node(name: str = "worker", declared: bool = False) -> dict:
    m = node_manifest(name)
    if declared:
        m["status"]["declaredFeatures"] = [FEATURE]
    return m


def test_allocated_skip_node_operations_missing_feature():
    """``allocated-skip-node-operations-missing-feature``: unavailable on the node, PostFilter
    deallocates the claim."""
    plugin, store, batch = _setup([device_class(), claim(allocation=_skipping_allocation()), worker_slice()], _node())
    p = pod(ref())
    out = run_cycle(plugin, p, batch)
    assert out["pre_filter"] is None
    assert (out["filter"]["worker"].code(), out["filter"]["worker"].reasons()) == (
        UUA, ["resourceclaim not available on the node"])
    _, status = plugin.post_filter(out["state"], p, None)
    assert (status.code(), status.reasons()) == (Code.UNSCHEDULABLE, ["deallocation of ResourceClaim completed"])
    assert store.get_object("ResourceClaim", CLAIM, "default").allocation is None


def test_allocated_skip_node_operations_with_feature():
    """``allocated-skip-node-operations-with-feature``: the node declares it; PreBind reserves."""
    plugin, store, batch = _setup([device_class(), claim(allocation=_skipping_allocation()), worker_slice()],
                                  _node(declared=True))
    p = pod(ref())
    out = run_cycle(plugin, p, batch)
    assert out["filter"]["worker"] is None
    assert plugin.reserve(out["state"], p, "worker") is None
    assert plugin.pre_bind(out["state"], p, "worker") is None
    written = store.get_object("ResourceClaim", CLAIM, "default")
    assert written.reserved_for == ({"resource": "pods", "name": "my-pod", "uid": "1234"},)


def test_batch_filter_agrees_on_allocated_claims():
    plugin, _, batch = _setup([device_class(), claim(allocation=_skipping_allocation(None)), worker_slice()],
                              _node("worker"), _node("worker-2", declared=True))
    p = pod(ref())
    state = CycleState()
    plugin.pre_filter(state, p, list(batch))
    verdicts = plugin.filter_vectorized(state, p, batch)
    assert list(verdicts.codes) == [UUA, Code.SUCCESS]


def test_filter_reuses_pending_allocation_requires_optional_node_operations():
    """TestFilterReusesPendingAllocationRequiresDRAOptionalNodeOperations."""
    plugin, _, batch = _setup([device_class(), claim("shared"), worker_slice()],
                              _node("worker"), _node("worker-2", declared=True))
    allocation = _skipping_allocation()
    del allocation["nodeSelector"]
    pending = claim_with_status(claim("shared"), allocation=allocation)
    plugin.manager.signal_claim_pending_allocation(pending.uid, pending)
    group_state = CycleState()
    state = CycleState()
    state.write(POD_GROUP_CYCLE_KEY, group_state)
    p = pod(ref(claim="shared"))
    _get_or_create_pod_group_state(group_state).pending_allocations[pending.uid] = {p.uid}
    _, status = plugin.pre_filter(state, p, list(batch))
    assert status is None
    without, with_feature = list(batch)
    status = plugin.filter(state, p, without)
    assert (status.code(), status.reasons()) == (
        UUA, ["resource claim default/shared allocation requires DRAOptionalNodeOperations feature on the node"])
    assert plugin.filter(state, p, with_feature) is None
    # the batch Filter says the same
    verdicts = plugin.filter_vectorized(state, p, batch)
    assert list(verdicts.codes) == [UUA, Code.SUCCESS]


def test_plugin_allocates_only_on_declaring_nodes():
    """The gate on: the allocator (experimental) in Filter; the batch Filter agrees, and the result
    carries the slice's operations."""
    skipping = parse_resource_slice({"metadata": {"name": "s"}, "spec": {
        "driver": DRIVER, "nodeName": "worker-2",
        "pool": {"name": "worker-2", "generation": 1, "resourceSliceCount": 1},
        "skipNodeOperations": ["NodePrepareResources", "NodeUnprepareResources"],
        "devices": [{"name": "instance-0"}]}})
    objects = [device_class(), claim(), worker_slice(), skipping]
    for declared, want in ((False, [Code.SUCCESS, UUA]), (True, [Code.SUCCESS, Code.SUCCESS])):
        store = ObjectStore(objects)
        plugin = DynamicResources(DynamicResourcesArgs(), SimpleNamespace(client=store), features=ON)
        batch = build_snapshot([Node.from_manifest(_node("worker"), validate=False),
                                Node.from_manifest(_node("worker-2", declared=declared), validate=False)]).batch()
        p = pod(ref())
        state = CycleState()
        plugin.pre_filter(state, p, list(batch))
        assert list(plugin.filter_vectorized(state, p, batch).codes) == want
        per_node = [plugin.filter(state, p, info) for info in batch]
        assert [Code.SUCCESS if s is None else s.code() for s in per_node] == want
        if declared:
            (results,) = [a["devices"]["results"] for a in state.read("DynamicResources").node_allocations["worker-2"]]
            assert results[0]["skipNodeOperations"] == ["NodePrepareResources", "NodeUnprepareResources"]


# -- API: validation_resourceslice_test.go, the strategies ------------------------------------------
def _slice(*ops: str, manifest_ops=None):
    spec = {"driver": "driver.example.com", "nodeName": "worker", "pool": {
        "name": "pool", "generation": 1, "resourceSliceCount": 1}, "devices": [{"name": "device-0"}]}
    spec["skipNodeOperations"] = list(ops) if manifest_ops is None else manifest_ops
    return parse_resource_slice({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice",
                                 "metadata": {"name": "slice"}, "spec": spec})


def _errors(obj, gates=GATE_ON) -> list[str]:
    return [str(e) for e in validate(prepare_for_create(obj, gates), gates)]


def test_validation():
    assert _errors(_slice(ALL, "NodePrepareResources")) == []  # valid: All and Prepare
    assert _errors(_slice("NodePrepareResources", "NodeUnprepareResources")) == []  # valid: Prepare and Unprepare
    assert _errors(_slice("NodePrepareResources")) == [  # invalid: Prepare only
        'spec.skipNodeOperations: Invalid value: ["NodePrepareResources"]: NodePrepareResources cannot be skipped '
        'unless NodeUnprepareResources is also skipped']
    # the declarative rules: a set of the enum
    assert _errors(_slice(ALL, "Other", ALL)) == [
        'spec.skipNodeOperations[2]: Duplicate value: "*"',
        'spec.skipNodeOperations[1]: Unsupported value: "Other": supported values: "*", "NodePrepareResources", '
        '"NodeUnprepareResources"']


def test_slice_strategy():
    # drop-fields-optional-node-operations / keep-fields-optional-node-operations
    dropped = prepare_for_create(_slice(ALL), FeatureGates())
    assert dropped.skip_node_operations == () and "skipNodeOperations" not in dropped.manifest["spec"]
    kept = prepare_for_create(_slice(ALL), GATE_ON)
    assert kept.skip_node_operations == (ALL,) and kept.manifest["spec"]["skipNodeOperations"] == [ALL]
    # dropped, an invalid value is not validated
    assert _errors(_slice("NodePrepareResources"), FeatureGates()) == []


def _claim_with_status(ops):
    allocated = allocation_on("worker")
    allocated["devices"]["results"][0]["skipNodeOperations"] = ops
    return parse_resource_claim({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
                                 "metadata": {"name": "c", "namespace": "default"},
                                 "spec": {"devices": {"requests": [{"name": "req-1", "exactly": {
                                     "deviceClassName": "cls"}}]}},
                                 "status": {"allocation": allocated}})


def test_claim_status_strategy():
    # drop-fields-optional-node-operations / keep-fields-optional-node-operations
    dropped = prepare_for_create(_claim_with_status([ALL]), FeatureGates())
    assert "skipNodeOperations" not in dropped.allocation["devices"]["results"][0]
    assert "skipNodeOperations" not in dropped.manifest["status"]["allocation"]["devices"]["results"][0]
    kept = prepare_for_create(_claim_with_status([ALL]), GATE_ON)
    assert kept.allocation["devices"]["results"][0]["skipNodeOperations"] == [ALL]
    assert _errors(_claim_with_status(["NodePrepareResources", "x"])) == [
        'status.allocation.devices.results[0].skipNodeOperations: Invalid value: ["NodePrepareResources","x"]: '
        'NodePrepareResources cannot be skipped unless NodeUnprepareResources is also skipped',
        'status.allocation.devices.results[0].skipNodeOperations[1]: Unsupported value: "x": supported values: '
        '"*", "NodePrepareResources", "NodeUnprepareResources"']


def test_gate_is_switchable_and_needs_node_declared_features():
    assert FeatureGates(f"{FEATURE}=true").enabled(FEATURE)
    assert KNOWN_GATES[FEATURE].depends_on == ("DynamicResourceAllocation", "NodeDeclaredFeatures")


# -- through the Scheduler: the gate reaches the API server's strategy and the profile's plugin -----
def _cluster_manifests():
    res = "resource.k8s.io/v1"
    nodes = []
    for name, declared in (("node-a", False), ("node-b", True)):
        m = node_manifest(name)
        if declared:
            m["status"]["declaredFeatures"] = [FEATURE]
        nodes.append(m)
    slices = [{"apiVersion": res, "kind": "ResourceSlice", "metadata": {"name": f"{n}-gpus"}, "spec": {
        "driver": DRIVER, "nodeName": n, "pool": {"name": n, "generation": 1, "resourceSliceCount": 1},
        "skipNodeOperations": [ALL], "devices": [{"name": "gpu-0"}]}} for n in ("node-a", "node-b")]
    cls = {"apiVersion": res, "kind": "DeviceClass", "metadata": {"name": "gpu"},
           "spec": {"selectors": [{"cel": {"expression": f'device.driver == "{DRIVER}"'}}]}}
    claims = [{"apiVersion": res, "kind": "ResourceClaim", "metadata": {"name": f"c{i}", "namespace": "default"},
               "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu"}}]}}}
              for i in range(2)]
    pods = [{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": f"p{i}", "namespace": "default"},
             "spec": {"containers": [{"name": "c", "image": "x", "resources": {"claims": [{"name": "gpu"}]}}],
                      "resourceClaims": [{"name": "gpu", "resourceClaimName": f"c{i}"}]}} for i in range(2)]
    return [*nodes, cls, *slices, *claims], pods


@pytest.mark.parametrize("gate_on", [True, False])
def test_scheduler(gate_on):
    from fastsched import Scheduler

    objects, pods = _cluster_manifests()
    sched = Scheduler(seed=0, feature_gates={FEATURE: gate_on})
    sched.add(objects)
    slices = sched.objects("ResourceSlice")
    assert all(("skipNodeOperations" in s["spec"]) is gate_on for s in slices)
    sched.add(pods)
    results = {r.pod.name: r for r in sched.run()}
    claims = {c["metadata"]["name"]: c for c in sched.objects("ResourceClaim")}
    if gate_on:
        # only node-b declares the feature: one pod there, the other unschedulable
        placed = sorted((r.node_name or "") for r in results.values())
        assert placed == ["", "node-b"]
        (bound,) = [r for r in results.values() if r.node_name]
        results_of = claims[f"c{bound.pod.name[1:]}"]["status"]["allocation"]["devices"]["results"]
        assert results_of[0]["skipNodeOperations"] == [ALL]
    else:
        # the field was dropped: both nodes' devices are allocatable, the results carry nothing
        assert sorted(r.node_name for r in results.values()) == ["node-a", "node-b"]
        assert all("skipNodeOperations" not in c["status"]["allocation"]["devices"]["results"][0]
                   for c in claims.values())
