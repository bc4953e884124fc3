"""DRANodeAllocatableResources, the scheduler side (v1.37.2
``pkg/scheduler/framework/plugins/dynamicresources/nodeallocatabledynamicresources_test.go``):
``TestBuildNodeAllocatableDRAInfo``, ``TestNodeFitsNativeResources``,
``TestValidateNodeAllocatableDRAClaimSharing``, ``TestValidatePodLevelResourcesCoverDRA`` (its
requests rows), ``TestFilterSlicesForNode`` and the patch/clear tests, transcribed; then the plugin's
Filter, the assume and PreBind/Unreserve on a scheduler (the gate is set on the plugin and the
scheduler directly: ``FeatureGates`` still refuses it)."""
from __future__ import annotations

import pytest

from fastsched.api.decode import parse_pod
from fastsched.api.resource import parse_resource_slice
from fastsched.framework.status import Code
from fastsched.framework.types import Resource
from fastsched.plugins.dynamicresources import nodeallocatable as na

NS = "test-ns"
DRIVER = "dra.example.com"


def _slice(name, *devices, driver=DRIVER, pool="pool1", node="test-node", extra=None):
    spec = {"driver": driver, "pool": {"name": pool, "resourceSliceCount": 1}, "devices": list(devices)}
    if node is not None:
        spec["nodeName"] = node
    spec.update(extra or {})
    return parse_resource_slice({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice",
                                 "metadata": {"name": name}, "spec": spec})


def _pod(containers, resources=None, init_containers=()):
    """``st.MakePod()``: containers as (name, requests, claim names)."""
    def c(entry):
        name, requests, claims = entry
        return {"name": name, "image": "i",
                "resources": {"requests": requests, "claims": [{"name": n} for n in claims]}}
    spec = {"containers": [c(x) for x in containers], "initContainers": [c(x) for x in init_containers]}
    if resources is not None:
        spec["resources"] = resources
    return parse_pod({"apiVersion": "v1", "kind": "Pod",
                      "metadata": {"name": "test-pod", "namespace": NS, "uid": "test-uid"}, "spec": spec})


def _alloc(device, consumed=None, pool="pool1", driver=DRIVER):
    result = {"request": "r", "driver": driver, "pool": pool, "device": device}
    if consumed is not None:
        result["consumedCapacity"] = consumed
    return {"devices": {"results": [result]}}


CPU_PER_INSTANCE = {"name": "cpu0", "nodeAllocatableResources": {"cpu": {"mapping": {"deviceMultiplier": "1"}}}}
CPU_CAPACITY = {"name": "cpu0", "nodeAllocatableResources": {"cpu": {"mapping": {"capacityKey": "dra.example.com/cpu"}}}}
CPU_MEM_CAPACITY = {"name": "device1", "nodeAllocatableResources": {
    "cpu": {"mapping": {"capacityKey": "dra.example.com/cpu"}},
    "memory": {"mapping": {"capacityKey": "dra.example.com/memory"}}}}
GPU_AUX = {"name": "gpu0", "nodeAllocatableResources": {"cpu": {"mapping": {"deviceMultiplier": "2"}},
                                                        "memory": {"mapping": {"deviceMultiplier": "4Gi"}}}}
COMBINED = {"name": "combined-device", "nodeAllocatableResources": {
    "cpu": {"mapping": {"deviceMultiplier": "2"}, "overhead": {"perPod": "1", "perContainer": "500m"}}}}
MEM_OVERHEAD = {"name": "device1", "nodeAllocatableResources": {
    "memory": {"overhead": {"perPod": "1Gi", "perContainer": "500Mi"}}}}


def _st(claim, containers, mapping=(), overhead=()):
    return {"resourceClaimName": claim, "containers": list(containers),
            "mapping": [{"name": n, "quantity": q} for n, q in mapping],
            "overhead": [dict(name=n, **o) for n, o in overhead]}


def _k(name, uid, ns=""):
    return (ns, name, uid)


#: TestBuildNodeAllocatableDRAInfo: name -> (pod, claims (name, uid), slices, allocations, want or None: error)
BUILD_CASES = {
    "empty": (_pod([]), [], [], {}, []),
    "one container, one claim, per instance quantity": (
        _pod([("c1", {}, ["node-allocatable-claim"])]), [("node-allocatable-claim", "claim-uid")],
        [_slice("slice1", CPU_PER_INSTANCE)], {_k("node-allocatable-claim", "claim-uid"): _alloc("cpu0")},
        [_st("node-allocatable-claim", ["c1"], [("cpu", "1")])]),
    "Pod with Standard and DRA CPU and Memory Request": (
        _pod([("c1", {"cpu": "100m", "memory": "100Mi"}, ["node-allocatable-claim"])]),
        [("node-allocatable-claim", "claim-uid")], [_slice("slice1", CPU_MEM_CAPACITY)],
        {_k("node-allocatable-claim", "claim-uid"): _alloc("device1", {"dra.example.com/cpu": "4",
                                                                        "dra.example.com/memory": "8Gi"})},
        [_st("node-allocatable-claim", ["c1"], [("cpu", "4"), ("memory", "8Gi")])]),
    "Fungible GPU/CPU claim - GPU selected": (
        _pod([("c1", {"cpu": "1"}, ["fungible-claim"])]), [("fungible-claim", "claim-uid")],
        [_slice("gpu-slice", {"name": "gpu0"})], {_k("fungible-claim", "claim-uid"): _alloc("gpu0")}, []),
    "Fungible GPU/CPU claim - CPU selected": (
        _pod([("c1", {"cpu": "1"}, ["fungible-claim"])]), [("fungible-claim", "claim-uid")],
        [_slice("cpu-slice", CPU_CAPACITY)],
        {_k("fungible-claim", "claim-uid"): _alloc("cpu0", {"dra.example.com/cpu": "30"})},
        [_st("fungible-claim", ["c1"], [("cpu", "30")])]),
    "Combined CPU request and Auxiliary Request": (
        _pod([("c1", {"cpu": "100m"}, ["gpu-claim", "cpu-claim"])]),
        [("cpu-claim", "cpu-claim-uid"), ("gpu-claim", "gpu-claim-uid")],
        [_slice("cpu-slice", CPU_CAPACITY), _slice("gpu-slice", GPU_AUX)],
        {_k("cpu-claim", "cpu-claim-uid"): _alloc("cpu0", {"dra.example.com/cpu": "10"}),
         _k("gpu-claim", "gpu-claim-uid"): _alloc("gpu0")},
        [_st("cpu-claim", ["c1"], [("cpu", "10")]), _st("gpu-claim", ["c1"], [("cpu", "2"), ("memory", "4Gi")])]),
    "Pod Level Resources with shared CPU claim and sidecar containers": (
        _pod([("c1", {}, ["cpu-claim"]), ("c2", {}, ["cpu-claim"]), ("sidecar1", {}, []), ("sidecar2", {}, [])],
             resources={"requests": {"cpu": "11", "memory": "10Gi"}}),
        [("cpu-claim", "cpu-claim-uid")], [_slice("cpu-slice", CPU_CAPACITY)],
        {_k("cpu-claim", "cpu-claim-uid"): _alloc("cpu0", {"dra.example.com/cpu": "10"})},
        [_st("cpu-claim", ["c1", "c2"], [("cpu", "10")])]),
    "Multiple Claims per Container": (
        _pod([("c1", {"cpu": "100m"}, ["claim1", "claim2"])]), [("claim1", "claim1-uid"), ("claim2", "claim2-uid")],
        [_slice("slice1", CPU_CAPACITY), _slice("slice2", CPU_MEM_CAPACITY)],
        {_k("claim1", "claim1-uid"): _alloc("cpu0", {"dra.example.com/cpu": "4"}),
         _k("claim2", "claim2-uid"): _alloc("device1", {"dra.example.com/memory": "8Gi"})},
        [_st("claim1", ["c1"], [("cpu", "4")]), _st("claim2", ["c1"], [("memory", "8Gi")])]),
    "Unreferenced Claims": (
        _pod([("c1", {}, [])]), [("unref-claim", "unref-claim-uid")], [_slice("slice1", CPU_CAPACITY)],
        {_k("unref-claim", "unref-claim-uid"): _alloc("cpu0", {"dra.example.com/cpu": "4"})},
        [_st("unref-claim", [], [("cpu", "4")])]),
    "Unreferenced Claims with Overhead": (
        _pod([("c1", {}, [])]), [("unref-claim", "unref-claim-uid")], [_slice("slice1", MEM_OVERHEAD)],
        {_k("unref-claim", "unref-claim-uid"): _alloc("device1")},
        [_st("unref-claim", [], overhead=[("memory", {"perPod": "1Gi", "perContainer": "500Mi"})])]),
    "Unreferenced Claims with Overhead Per Container Only": (
        _pod([("c1", {}, [])]), [("unref-claim", "unref-claim-uid")],
        [_slice("slice1", {"name": "device1", "nodeAllocatableResources": {
            "memory": {"overhead": {"perContainer": "500Mi"}}}})],
        {_k("unref-claim", "unref-claim-uid"): _alloc("device1")},
        [_st("unref-claim", [], overhead=[("memory", {"perContainer": "500Mi"})])]),
    "Combined Capacity and PerAllocatedUnitQuantity": (
        _pod([("c1", {}, ["claim1"])]), [("claim1", "claim1-uid")],
        [_slice("slice1", {"name": "device1", "nodeAllocatableResources": {
            "cpu": {"mapping": {"capacityKey": "dra.example.com/cores", "capacityMultiplier": "2"}}}})],
        {_k("claim1", "claim1-uid"): _alloc("device1", {"dra.example.com/cores": "4"})},
        [_st("claim1", ["c1"], [("cpu", "8")])]),
    "Capacity Key Missing in Allocation - Should be Ignored": (
        _pod([("c1", {}, ["claim1"])]), [("claim1", "claim1-uid")], [_slice("slice1", CPU_CAPACITY)],
        {_k("claim1", "claim1-uid"): _alloc("cpu0", {"dra.example.com/wrong": "4"})}, []),
    "Overhead Mappings": (
        _pod([("c1", {}, ["claim1"])]), [("claim1", "claim1-uid")], [_slice("slice1", MEM_OVERHEAD)],
        {_k("claim1", "claim1-uid"): _alloc("device1")},
        [_st("claim1", ["c1"], overhead=[("memory", {"perPod": "1Gi", "perContainer": "500Mi"})])]),
    "Overhead Mappings - Only PerPod": (
        _pod([("c1", {}, ["claim1"])]), [("claim1", "claim1-uid")],
        [_slice("slice1", {"name": "device1", "nodeAllocatableResources": {"memory": {"overhead": {"perPod": "1Gi"}}}})],
        {_k("claim1", "claim1-uid"): _alloc("device1")},
        [_st("claim1", ["c1"], overhead=[("memory", {"perPod": "1Gi"})])]),
    "Overhead Mappings - Only PerContainer": (
        _pod([("c1", {}, ["claim1"])]), [("claim1", "claim1-uid")],
        [_slice("slice1", {"name": "device1", "nodeAllocatableResources": {
            "memory": {"overhead": {"perContainer": "500Mi"}}}})],
        {_k("claim1", "claim1-uid"): _alloc("device1")},
        [_st("claim1", ["c1"], overhead=[("memory", {"perContainer": "500Mi"})])]),
    "Overhead Mappings - Multiple Containers": (
        _pod([("c1", {}, ["claim1"]), ("c2", {}, ["claim1"])]), [("claim1", "claim1-uid")],
        [_slice("slice1", MEM_OVERHEAD)], {_k("claim1", "claim1-uid"): _alloc("device1")},
        [_st("claim1", ["c1", "c2"], overhead=[("memory", {"perPod": "1Gi", "perContainer": "500Mi"})])]),
    "Combined direct mapped and overhead mappings for the same resource": (
        _pod([("c1", {}, ["claim1"])]), [("claim1", "claim1-uid")],
        [_slice("slice1", {"name": "device1", "nodeAllocatableResources": {
            "memory": {"mapping": {"deviceMultiplier": "2Gi"}, "overhead": {"perPod": "1Gi", "perContainer": "500Mi"}}}})],
        {_k("claim1", "claim1-uid"): _alloc("device1")},
        [_st("claim1", ["c1"], [("memory", "2Gi")], [("memory", {"perPod": "1Gi", "perContainer": "500Mi"})])]),
    "device with both mapped and overhead": (
        _pod([("c1", {}, ["claim1"])]), [("claim1", "claim1-uid")], [_slice("slice1", COMBINED)],
        {_k("claim1", "claim1-uid"): _alloc("combined-device")},
        [_st("claim1", ["c1"], [("cpu", "2")], [("cpu", {"perPod": "1", "perContainer": "500m"})])]),
    "Driver name collision with same pool and device name": (
        _pod([("c1", {}, ["claim1"])]), [("claim1", "claim1-uid")],
        [_slice("slice-a", {"name": "cpu0", "nodeAllocatableResources": {"cpu": {"mapping": {"deviceMultiplier": "1"}}}},
                driver="driver-a.example.com"),
         _slice("slice-b", {"name": "cpu0", "nodeAllocatableResources": {"cpu": {"mapping": {"deviceMultiplier": "8"}}}},
                driver="driver-b.example.com")],
        {_k("claim1", "claim1-uid"): _alloc("cpu0", driver="driver-b.example.com")},
        [_st("claim1", ["c1"], [("cpu", "8")])]),
    "Invalid -  Device Not Found": (
        _pod([("c1", {}, ["claim1"])]), [("claim1", "claim1-uid")], [_slice("slice1", {"name": "device1"})],
        {_k("claim1", "claim1-uid"): _alloc("nonexistent-device")}, None),
}


@pytest.mark.parametrize("name", list(BUILD_CASES))
def test_build_node_allocatable_dra_info(name):
    pod, claims, slices, allocations, want = BUILD_CASES[name]
    names = {claim_name: uid for claim_name, uid in claims}
    if want is None:
        with pytest.raises(LookupError, match="device nonexistent-device not found in pool pool1"):
            na.build_node_allocatable_dra_info(pod, allocations, names, slices, None)
        return
    assert na.build_node_allocatable_dra_info(pod, allocations, names, slices, None) == want


def test_capacity_key_without_consumed_capacity_is_an_error():
    """addDeviceMapping: a capacity key set but no consumedCapacity in the result."""
    with pytest.raises(ValueError, match="ConsumedCapacity is nil, but Capacity key 'dra.example.com/cpu' is set"):
        na.build_node_allocatable_dra_info(_pod([]), {_k("c", "u", NS): _alloc("cpu0")}, {},
                                           [_slice("s", CPU_CAPACITY)], None)


def test_sums_take_the_format_of_the_first_non_zero_addend():
    """Quantity.Add: while the sum is zero it takes the addend's format, whatever format the zero
    had (a differential found "memory=8589934592" where upstream printed "8Gi": a capacity-keyed
    device that consumed "0" summed before a deviceMultiplier of "8Gi"). Overheads the same."""
    from fastsched.api.quantity import parse_quantity
    from fastsched.api.resource import NodeAllocatableMapping, NodeAllocatableOverhead

    totals: dict = {}
    key = ("default", "claim-0", "uid")
    keyed = NodeAllocatableMapping(capacity_key="memory", capacity_multiplier=parse_quantity("250m"))
    na.add_device_mapping("memory", keyed, {"device": "gpu-1", "consumedCapacity": {"memory": "0"}}, key, totals)
    assert totals["memory"].text() == "0"
    na.add_device_mapping("memory", NodeAllocatableMapping(device_multiplier=parse_quantity("8Gi")), {}, key, totals)
    assert totals["memory"].text() == "8Gi"
    # once non-zero the sum keeps its format
    na.add_device_mapping("memory", keyed, {"device": "gpu-5", "consumedCapacity": {"memory": "4000"}}, key, totals)
    assert (totals["memory"].nanos, totals["memory"].fmt) == ((8 * GI + 1000) * 10**9, "BinarySI")

    overheads: dict = {}
    na.add_device_overhead("memory", NodeAllocatableOverhead(per_pod=parse_quantity("0")), overheads)
    na.add_device_overhead("memory", NodeAllocatableOverhead(per_pod=parse_quantity("1Gi"),
                                                             per_container=parse_quantity("500m")), overheads)
    na.add_device_overhead("memory", NodeAllocatableOverhead(per_container=parse_quantity("1Gi")), overheads)
    per_pod, per_container = overheads["memory"]
    assert per_pod.text() == "1Gi"
    assert per_container.nanos == GI * 10**9 + 5 * 10**8


HP2, HP1 = "hugepages-2Mi", "hugepages-1Gi"
GI = 1024**3


def _res(**kw):
    scalar = kw.pop("scalar", {})
    return Resource(scalar_resources=dict(scalar), **kw)


#: TestNodeFitsNativeResources: name -> (pod request, node allocatable, node requested, want (code, reasons) or None)
FITS_CASES = {
    "empty pod request": ({}, _res(), _res(), None),
    "sufficient cpu and memory": ({"cpu": 1000, "memory": GI}, _res(milli_cpu=2000, memory=2 * GI), _res(), None),
    "insufficient cpu": ({"cpu": 3000}, _res(milli_cpu=2000), _res(),
                         (Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ["Insufficient cpu"])),
    "insufficient memory": ({"memory": 3 * GI}, _res(memory=5 * GI), _res(memory=4 * GI),
                            (Code.UNSCHEDULABLE, ["Insufficient memory"])),
    "sufficient hugepages": ({HP2: 1, HP1: 2}, _res(scalar={HP2: 1, HP1: 2}), _res(), None),
    "insufficient hugepages 2Mi": ({HP2: 2}, _res(scalar={HP2: 1}), _res(),
                                   (Code.UNSCHEDULABLE_AND_UNRESOLVABLE, [f"Insufficient {HP2}"])),
    "insufficient hugepages 1Gi": ({HP1: 3}, _res(scalar={HP1: 2}), _res(),
                                   (Code.UNSCHEDULABLE_AND_UNRESOLVABLE, [f"Insufficient {HP1}"])),
    "all resources sufficient": ({"cpu": 1000, "memory": GI, HP2: 1}, _res(milli_cpu=2000, memory=2 * GI, scalar={HP2: 1}),
                                 _res(), None),
    # (not upstream's) both short, one beyond the allocatable: the reasons in upstream's order,
    # Unresolvable as soon as one is
    "cpu and memory short": ({"cpu": 3000, "memory": GI}, _res(milli_cpu=4000, memory=GI), _res(milli_cpu=2000, memory=1),
                             (Code.UNSCHEDULABLE, ["Insufficient cpu", "Insufficient memory"])),
    "ephemeral-storage beyond the node": ({"ephemeral-storage": 10}, _res(ephemeral_storage=5), _res(),
                                          (Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ["Insufficient ephemeral-storage"])),
}


@pytest.mark.parametrize("name", list(FITS_CASES))
def test_node_fits_native_resources(name):
    request, allocatable, requested, want = FITS_CASES[name]
    status = na.node_fits_resources(allocatable, requested, request)
    if want is None:
        assert status is None
    else:
        assert status is not None and (status.code(), status.reasons()) == want


# -- TestValidateNodeAllocatableDRAClaimSharing ---------------------------------------------------
from fastsched.api.resource import parse_resource_claim  # noqa: E402
from fastsched.plugins.dynamicresources.resourceclaim import is_reserved_for_pod  # noqa: E402

CLAIM = "node-allocatable-claim"
SHARED = f"node allocatable resource claim {CLAIM} has a mapped device and cannot be shared across pods"
SLICE_MAPPED = _slice("mapped", {"name": "cpu0", "nodeAllocatableResources": {"cpu": {"mapping": {"deviceMultiplier": "1"}}}},
                      pool="pool-1", node=None, extra={"allNodes": True})
SLICE_OVERHEAD = _slice("overhead", {"name": "gpu0", "nodeAllocatableResources": {
    "memory": {"overhead": {"perContainer": "100"}}}}, pool="pool-2", node=None, extra={"allNodes": True})
SLICE_COMBINED = _slice("combined", {"name": "combined", "nodeAllocatableResources": {
    "cpu": {"mapping": {"deviceMultiplier": "1"}, "overhead": {"perContainer": "100"}}}},
    pool="pool-combined", node=None, extra={"allNodes": True})


def _claim(pool=None, device=None, reserved_for=(), uid="claim-uid"):
    obj = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
           "metadata": {"name": CLAIM, "namespace": NS, "uid": uid},
           "spec": {"devices": {"requests": [{"name": "r", "exactly": {"deviceClassName": "c"}}]}}, "status": {}}
    if pool is not None:
        obj["status"]["allocation"] = {"devices": {"results": [
            {"request": "r", "driver": DRIVER, "pool": pool, "device": device}]}}
    if reserved_for:
        obj["status"]["reservedFor"] = list(reserved_for)
    return parse_resource_claim(obj)


def _plain_pod(uid="pod-uid", group=None):
    spec = {"containers": [{"name": "c", "image": "i"}]}
    if group is not None:
        spec["schedulingGroup"] = {"podGroupName": group}
    return parse_pod({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "test-pod", "namespace": NS, "uid": uid},
                      "spec": spec})


OTHER = [{"resource": "pods", "name": "other", "uid": "other-pod-uid"}]
MY_GROUP = [{"apiGroup": "scheduling.k8s.io", "resource": "podgroups", "name": "my-pod-group"}]
OTHER_GROUP = [{"apiGroup": "scheduling.k8s.io", "resource": "podgroups", "name": "other-pod-group"}]

#: name -> (pod, claim or None, slices, pending allocations or None, DRAWorkloadResourceClaims, want message or None)
SHARING_CASES = {
    "empty claim": (_plain_pod("test-uid"), None, [], None, False, None),
    "claim not allocated yet": (_plain_pod(), _claim(), [], None, False, None),
    "mapped claim, not shared (no other pods on node)": (_plain_pod(), _claim("pool-1", "cpu0"), [SLICE_MAPPED],
                                                         None, False, None),
    "mapped claim, shared (other pod using it)": (_plain_pod(), _claim("pool-1", "cpu0", OTHER), [SLICE_MAPPED],
                                                  None, False, SHARED),
    "overhead-only mapped claim, shared (other pod using it)": (_plain_pod(), _claim("pool-2", "gpu0"),
                                                                [SLICE_OVERHEAD], None, False, None),
    "mapped claim, same name but different namespace (sharing allowed)": (
        _plain_pod(), _claim("pool-1", "cpu0"), [SLICE_MAPPED], None, False, None),
    "mapped claim, shared (other pod using it via template)": (
        _plain_pod(), _claim("pool-1", "cpu0", OTHER), [SLICE_MAPPED], None, False, SHARED),
    "mapped claim, already reserved for another pod - early exit": (
        _plain_pod(), _claim("pool-1", "cpu0", OTHER), [SLICE_MAPPED], None, False, SHARED),
    "mapped claim, reserved for same pod group, workload claims enabled - allowed since no pods on node": (
        _plain_pod(group="my-pod-group"), _claim("pool-1", "cpu0", MY_GROUP), [SLICE_MAPPED], None, True, None),
    "mapped claim, reserved for different pod group, workload claims enabled - exit early": (
        _plain_pod(group="my-pod-group"), _claim("pool-1", "cpu0", OTHER_GROUP), [SLICE_MAPPED], None, True, SHARED),
    "mapping and overhead in same device, shared (other pod using it)": (
        _plain_pod(), _claim("pool-combined", "combined", OTHER), [SLICE_COMBINED], None, False, SHARED),
    "mapped claim, pending allocation by another pod in same group": (
        _plain_pod(), _claim("pool-1", "cpu0"), [SLICE_MAPPED], {"claim-uid": {"other-pod-uid"}}, False, SHARED),
    "mapped claim, pending allocation by same pod in same group": (
        _plain_pod(), _claim("pool-1", "cpu0"), [SLICE_MAPPED], {"claim-uid": {"pod-uid"}}, False, None),
    "overhead-only claim, pending allocation by another pod in same group": (
        _plain_pod(), _claim("pool-2", "gpu0"), [SLICE_OVERHEAD], {"claim-uid": {"other-pod-uid"}}, False, None),
    # (not upstream's) the group's reservation without DRAWorkloadResourceClaims is another consumer's
    "mapped claim, reserved for the pod's group, workload claims disabled": (
        _plain_pod(group="my-pod-group"), _claim("pool-1", "cpu0", MY_GROUP), [SLICE_MAPPED], None, False, SHARED),
}


@pytest.mark.parametrize("name", list(SHARING_CASES))
def test_validate_node_allocatable_dra_claim_sharing(name):
    pod, claim, slices, pending, workload_claims, want = SHARING_CASES[name]
    mapped = {}
    if claim is not None and claim.allocation is not None:
        mapped[claim.uid] = na.claim_has_mapped_device(claim.allocation, slices)
    reserved = claim is not None and is_reserved_for_pod(pod, claim, workload_claims)
    status = na.validate_claim_sharing(pod, claim, mapped, pending, reserved)
    if want is None:
        assert status is None
    else:
        assert status is not None and status.code() == Code.UNSCHEDULABLE_AND_UNRESOLVABLE
        assert status.reasons() == [want]


# -- TestValidatePodLevelResourcesCoverDRA (the requests rows; the limits part is not ported) ------
def _pl_pod(pod_requests, containers, overhead=None):
    spec = {"containers": [{"name": name, "image": "i",
                            "resources": {"requests": req, "claims": [{"name": "dra-claim"}]}} for name, req in containers]}
    if pod_requests is not None:
        spec["resources"] = {"requests": pod_requests}
    if overhead is not None:
        spec["overhead"] = overhead
    return parse_pod({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "test-pod", "namespace": NS}, "spec": spec})


COVER = "is insufficient to cover the aggregated container and node-allocatable DRA requests"
#: name -> (pod, statuses, want message (a substring) or None)
COVER_CASES = {
    "PodLevelResources enabled, no pod resources set": (
        _pl_pod(None, [("c", {"cpu": "1", "memory": "1Gi"})]),
        [_st("dra-claim", [], [("cpu", "500m"), ("memory", "512Mi")])], None),
    "PodLevel resources sufficient": (
        _pl_pod({"cpu": "2", "memory": "2Gi"}, [("c", {"cpu": "1", "memory": "1Gi"})]),
        [_st("dra-claim", [], [("cpu", "500m"), ("memory", "512Mi")])], None),
    "PodLevel insufficient for one of the resource": (
        _pl_pod({"cpu": "1", "memory": "2Gi"}, [("c", {"cpu": "800m", "memory": "1Gi"})]),
        [_st("dra-claim", [], [("cpu", "300m"), ("memory", "512Mi")])], f"pod level request for cpu {COVER}"),
    "PodLevel insufficient for multiple resources": (
        _pl_pod({"cpu": "1", "memory": "1Gi"}, [("c", {"cpu": "1100m", "memory": "1100Mi"})]),
        [_st("dra-claim", [], [("cpu", "100m"), ("memory", "100Mi")])], COVER),
    "PodLevel resources sufficient with overheads": (
        _pl_pod({"cpu": "4", "memory": "3Gi"}, [("c1", {"cpu": "1", "memory": "1Gi"})],
                overhead={"cpu": "500m", "memory": "512Mi"}),
        [_st("dra-claim", [], [("cpu", "1"), ("memory", "1Gi")])], None),
    "PodLevel resources sufficient with DRA Overhead": (
        _pl_pod({"cpu": "2", "memory": "3Gi"}, [("c1", {"cpu": "1", "memory": "1Gi"})]),
        [_st("dra-claim", ["c1"], overhead=[("memory", {"perPod": "1Gi", "perContainer": "1Gi"})])], None),
    "PodLevel resources insufficient with DRA Overhead": (
        _pl_pod({"cpu": "2", "memory": "2Gi"}, [("c1", {"cpu": "1", "memory": "1Gi"})]),
        [_st("dra-claim", ["c1"], overhead=[("memory", {"perPod": "1Gi", "perContainer": "1Gi"})])],
        f"pod level request for memory {COVER}"),
    # (not upstream's) exact sums: 999m + 1m is exactly the pod's 1 cpu
    "PodLevel resources exactly covered": (
        _pl_pod({"cpu": "1"}, [("c1", {"cpu": "999m"})]), [_st("dra-claim", [], [("cpu", "1m")])], None),
}


def _limits_pod(pod_limits, containers):
    """TestValidatePodLevelResourcesCoverDRA's limits rows: containers as (name, limits)."""
    spec = {"resources": {"limits": pod_limits},
            "containers": [{"name": n, "image": "i", "resources": {"limits": lim, "claims": [{"name": "dra-claim"}]}}
                           for n, lim in containers]}
    pod = parse_pod({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "test-pod", "namespace": NS}, "spec": spec})
    # upstream's table builds the pod without the API's defaulting: no pod-level requests (the
    # API server would default them to the containers' aggregate, and the requests check would
    # answer first)
    from fastsched.api.objects import ResourceRequirements
    return pod.replace(resources=ResourceRequirements(limits=pod.resources.limits))


COVER_CASES.update({
    "PodLevel limits cover DRA": (
        _limits_pod({"memory": "2Gi"}, [("c1", {"memory": "1Gi"})]),
        [_st("dra-claim", ["c1"], overhead=[("memory", {"perContainer": "512Mi"})])], None),
    "PodLevel limits does not cover DRA": (
        _limits_pod({"memory": "2Gi"}, [("c1", {"memory": "1.5Gi"})]),
        [_st("dra-claim", ["c1"], overhead=[("memory", {"perContainer": "1Gi"})])],
        "pod level limit for memory is insufficient to cover the limit and DRA overhead for container c1"),
    "PodLevel limits overcommitted but individual container limits with DRA covered by pod level limits": (
        _limits_pod({"memory": "4Gi"}, [("c1", {"memory": "3Gi"}), ("c2", {"memory": "3Gi"})]), [], None),
    # (not upstream's) hugepages: the containers' aggregate limits plus the claims' within the pod's
    "PodLevel hugepages limit below the aggregate with DRA": (
        _limits_pod({"hugepages-2Mi": "8Mi", "memory": "1Gi"}, [("c1", {"hugepages-2Mi": "4Mi", "memory": "1Gi"})]),
        [_st("dra-claim", [], [("hugepages-2Mi", "6Mi")])],
        "pod level limit for hugepages-2Mi is insufficient to cover the aggregated container and node-allocatable "
        "DRA limits"),
    "PodLevel hugepages limit covering the aggregate with DRA": (
        _limits_pod({"hugepages-2Mi": "10Mi", "memory": "1Gi"}, [("c1", {"hugepages-2Mi": "4Mi", "memory": "1Gi"})]),
        [_st("dra-claim", [], [("hugepages-2Mi", "6Mi")])], None),
})


@pytest.mark.parametrize("name", list(COVER_CASES))
def test_validate_pod_level_resources_cover_dra(name):
    pod, statuses, want = COVER_CASES[name]
    status = na.validate_pod_level_resources_cover_dra(pod, statuses)
    if want is None:
        assert status is None
    else:
        assert status is not None and status.code() == Code.UNSCHEDULABLE_AND_UNRESOLVABLE
        assert want in status.reasons()[0]


# -- TestFilterSlicesForNode ----------------------------------------------------------------------
def _node(name):
    from fastsched.api.decode import parse_node
    return parse_node({"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": {
        "kubernetes.io/hostname": name}}, "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"}}})


def _sel(host):
    return {"nodeSelector": {"nodeSelectorTerms": [{"matchExpressions": [
        {"key": "kubernetes.io/hostname", "operator": "In", "values": [host]}]}]}}


SLICE_CASES = {
    "matches NodeName exactly": ([_slice("nodename", node="node1"), _slice("othernode", node="node2")], ["nodename"]),
    "matches AllNodes": ([_slice("allnodes", node=None, extra={"allNodes": True})], ["allnodes"]),
    "matches NodeSelector": ([_slice("nodeselector", node=None, extra=_sel("node1")),
                              _slice("othernodeselector", node=None, extra=_sel("node2"))], ["nodeselector"]),
}


@pytest.mark.parametrize("name", list(SLICE_CASES))
def test_filter_slices_for_node(name):
    slices, want = SLICE_CASES[name]
    assert sorted(s.name for s in na.filter_slices_for_node(slices, _node("node1"))) == want


# -- TestPatchNodeAllocatableResourceClaimStatus / TestClearNodeAllocatableResourceClaimStatus ----
from fastsched.plugins.dynamicresources import DynamicResources  # noqa: E402


class _FakeClient:
    """The pod store the status writes go to (upstream's fake clientset)."""

    def __init__(self, pod, patch_error=None):
        self.pods = {pod.uid: pod}
        self.patches: list = []
        self.patch_error = patch_error

    def get_pod_by_uid(self, uid):
        return self.pods.get(uid)

    def set_pod_status(self, pod):
        self.patches.append(pod)
        if self.patch_error is not None:
            raise self.patch_error
        self.pods[pod.uid] = pod


def _status_pod(statuses=None):
    spec = {"containers": [{"name": "c1", "image": "i"}]}
    obj = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "test-pod", "namespace": NS, "uid": "pod-uid"},
           "spec": spec}
    if statuses:
        obj["status"] = {"nodeAllocatableResourceClaimStatuses": statuses}
    return parse_pod(obj)


def _plugin(client):
    pl = DynamicResources(node_allocatable_resources=True)
    pl._client = client
    return pl


ONE = [_st("claim1", ["c1"], [("cpu", "1")])]
TWO = [_st("claim1", ["c1"], [("cpu", "2")])]
#: name -> (assumed pod's statuses, statuses to patch, patch error, want a patch, want error message or None)
PATCH_CASES = {
    "no node allocatable resource claims for this pod": (None, [], None, False, None),
    "assumed pod status same as new status": (ONE, ONE, None, True, None),
    "assumed pod status different from new status": (
        ONE, TWO, None, False, "assumed pod status does not match calculated status to be patched"),
    "pod status patch error": (ONE, ONE, RuntimeError("inject patch error"), True,
                               "updating pod test-ns/test-pod NodeAllocatableResourceClaimStatuses: inject patch error"),
}


@pytest.mark.parametrize("name", list(PATCH_CASES))
def test_patch_node_allocatable_resource_claim_status(name):
    assumed_statuses, final, error, want_patch, want = PATCH_CASES[name]
    pod = _status_pod(assumed_statuses)
    client = _FakeClient(_status_pod(), error)  # (the API's pod: no statuses yet)
    status = _plugin(client)._patch_node_allocatable_statuses(pod, final)
    assert bool(client.patches) == want_patch
    if want is None:
        assert status is None
        if want_patch:
            stored = client.pods["pod-uid"]
            assert na.claim_statuses_of(stored) == final
            assert stored.requests.get("cpu") == 1000  # the stored pod's requests count them
    else:
        assert status is not None and status.code() == Code.ERROR and status.message() == want


@pytest.mark.parametrize("statuses,want_patch", [([], False), (ONE, True)], ids=["no status to clear", "status cleared"])
def test_clear_node_allocatable_resource_claim_status(statuses, want_patch):
    pod = _status_pod(statuses)
    client = _FakeClient(pod)
    _plugin(client)._clear_node_allocatable_statuses(pod)
    assert bool(client.patches) == want_patch
    assert na.claim_statuses_of(client.pods["pod-uid"]) == []
    assert not client.pods["pod-uid"].node_allocatable_claim_nanos


def test_claim_statuses_are_no_scale_down():
    """``extractPodScaleDown`` reads PodRequests without the claim statuses: a bound pod whose
    statuses are cleared (or written) is no UpdatePodScaleDown; a container's request lowered is."""
    from fastsched.framework.events import pod_scheduling_properties_change
    from fastsched.framework.interface import ActionType

    def bound(statuses, cpu="1"):
        obj = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": NS, "uid": "u"},
               "spec": {"nodeName": "n", "containers": [{"name": "c1", "image": "i", "resources": {"requests": {"cpu": cpu}}}],
                        "resourceClaims": [{"name": "gpu", "resourceClaimName": "claim1"}]}}
        if statuses:
            obj["status"] = {"nodeAllocatableResourceClaimStatuses": statuses}
        return parse_pod(obj)

    with_statuses, without = bound(ONE), bound(None)
    assert with_statuses.requests["cpu"] == 2000
    actions = [e.action_type for e in pod_scheduling_properties_change(without, with_statuses)]
    assert ActionType.UPDATE_POD_SCALE_DOWN not in actions
    actions = [e.action_type for e in pod_scheduling_properties_change(bound(ONE, cpu="500m"), with_statuses)]
    assert ActionType.UPDATE_POD_SCALE_DOWN in actions


# -- the whole cycle on a Scheduler with the gate on -------------------------------------------------
RES = "resource.k8s.io/v1"


def _cluster(node_cpus, nar, claims=1, shared_pods=0, pod_cpu="1", gpus=1):
    """Nodes with ``node_cpus`` cpus, ``gpus`` GPUs each with ``nar`` as its nodeAllocatableResources,
    ``claims`` claims with a pod each (``shared_pods`` more pods naming claim c0)."""
    objects: list = [{"apiVersion": RES, "kind": "DeviceClass", "metadata": {"name": "gpu"},
                      "spec": {"selectors": [{"cel": {"expression": f'device.driver == "{DRIVER}"'}}]}}]
    for i, cpus in enumerate(node_cpus):
        name = f"node-{i}"
        objects.append({"apiVersion": "v1", "kind": "Node", "metadata": {"name": name},
                        "status": {"allocatable": {"cpu": cpus, "memory": "16Gi", "pods": "110"}}})
        objects.append({"apiVersion": RES, "kind": "ResourceSlice", "metadata": {"name": f"{name}-gpus"}, "spec": {
            "driver": DRIVER, "nodeName": name, "pool": {"name": name, "generation": 1, "resourceSliceCount": 1},
            "devices": [{"name": f"gpu-{k}", "nodeAllocatableResources": nar} for k in range(gpus)]}})
    for i in range(claims):
        objects.append({"apiVersion": RES, "kind": "ResourceClaim", "metadata": {"name": f"c{i}", "namespace": "default"},
                        "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu"}}]}}})
    pods = [{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": f"p{i}", "namespace": "default"},
             "spec": {"containers": [{"name": "c", "image": "x", "resources": {
                 "requests": {"cpu": pod_cpu}, "claims": [{"name": "gpu"}]}}],
                 "resourceClaims": [{"name": "gpu", "resourceClaimName": f"c{min(i, claims - 1) if i < claims else 0}"}]}}
            for i in range(claims + shared_pods)]
    return objects, pods


def _run(objects, pods, gate=True):
    from fastsched import Scheduler
    sched = Scheduler(seed=0, feature_gates={"DRANodeAllocatableResources": gate})
    sched.add(objects)
    sched.add(pods)
    return sched, {r.pod.name: r for r in sched.run(max_attempts=20)}  # (bounded: a failing binding retries)


def test_footprint_fits_and_is_counted():
    """A GPU mapping 4 cpus: a 1-cpu pod takes 5 of node-0's 6 cpus; the bound pod carries the
    claim's status (PreBind wrote it), the node counts it, and a second such pod does not fit
    there (Insufficient cpu, resolvable by preemption: 5 + 5 > 6 but 5 <= 6)."""
    objects, pods = _cluster(["6"], {"cpu": {"mapping": {"deviceMultiplier": "4"}}}, claims=2, gpus=2)
    sched, results = _run(objects, pods)
    assert results["p0"].node_name == "node-0"
    stored = sched.get_pod("default", "p0")
    assert na.claim_statuses_of(stored) == [_st("c0", ["c"], [("cpu", "4")])]
    assert stored.requests["cpu"] == 5000
    assert results["p1"].node_name in (None, "")
    assert "Insufficient cpu" in results["p1"].message


def test_footprint_beyond_the_node_is_unresolvable():
    """A GPU mapping 8 cpus on 6-cpu nodes: the pod never fits (UnschedulableAndUnresolvable);
    with the gate off the same pod is placed (the mapping was dropped on create)."""
    objects, pods = _cluster(["6", "6"], {"cpu": {"mapping": {"deviceMultiplier": "8"}}})
    sched, results = _run(objects, pods)
    assert not results["p0"].node_name
    assert "2 Insufficient cpu" in results["p0"].message
    sched, results = _run(objects, pods, gate=False)
    assert results["p0"].node_name


def test_claim_with_mapped_device_is_not_shared():
    """Two pods naming one claim whose device maps cpu: the second fails
    (validateNodeAllocatableDRAClaimSharing); an overhead-only device may be shared."""
    objects, pods = _cluster(["16"], {"cpu": {"mapping": {"deviceMultiplier": "1"}}}, shared_pods=1)
    _, results = _run(objects, pods)
    assert results["p0"].node_name == "node-0"
    assert not results["p1"].node_name
    assert "node allocatable resource claim c0 has a mapped device and cannot be shared across pods" in results["p1"].message
    objects, pods = _cluster(["16"], {"cpu": {"overhead": {"perPod": "1"}}}, shared_pods=1)
    sched, results = _run(objects, pods)
    assert results["p0"].node_name == results["p1"].node_name == "node-0"
    assert sched.get_pod("default", "p1").requests["cpu"] == 2000  # 1 + the claim's perPod overhead
