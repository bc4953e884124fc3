"""Consumable capacity (DRAConsumableCapacity, beta and on at v1.37.2) through DynamicResources'
Filter: capacity requests are checked against the device's capacities, a device allowing multiple
allocations is shared with the capacity other claims' results consumed (the manager's
AllocatedState, ``GatherAllocatedState``); with the gate off (allocator features), upstream's
error for capacity requests and shares count as dedicated devices."""
from __future__ import annotations

from types import SimpleNamespace

from fastsched.api import Pod
from fastsched.api.resource import parse_device_class, parse_resource_claim, parse_resource_slice
from fastsched.config.args import DynamicResourcesArgs
from fastsched.dra.allocator import Features
from fastsched.framework.cycle_state import CycleState
from fastsched.framework.objects import ObjectStore
from fastsched.framework.status import Code
from fastsched.plugins.dynamicresources import DynamicResources
from fastsched.snapshot import build_snapshot
from fastsched.testing import make_node

DRIVER = "gpu.example.com"
SHARED_DEVICE = {"name": "gpu-0", "allowMultipleAllocations": True,
                 "capacity": {"memory": {"value": "8Gi", "requestPolicy": {
                     "default": "1Gi", "validRange": {"min": "1Gi", "step": "1Gi"}}}}}


def _allocated(name: str, memory: str) -> dict:
    """A claim already allocated a share of gpu-0 consuming ``memory``."""
    return {"metadata": {"name": name, "namespace": "default", "uid": f"uid-{name}"},
            "spec": {"devices": {"requests": [{"name": "r", "exactly": {"deviceClassName": "gpu"}}]}},
            "status": {"allocation": {"devices": {"results": [{
                "request": "r", "driver": DRIVER, "pool": "worker", "device": "gpu-0",
                "shareID": "aaaaaaaa-aaaa-aaaa-aaaa-aaaaaaaaaaaa", "consumedCapacity": {"memory": memory}}]}}}}


def _filter(exactly: dict, device: dict, features: Features | None = None, others: tuple = ()):
    claim = parse_resource_claim({"metadata": {"name": "c", "namespace": "default", "uid": "uid-c"},
                                  "spec": {"devices": {"requests": [{"name": "r", "exactly": exactly}]}}})
    store = ObjectStore([parse_device_class({"metadata": {"name": "gpu"}, "spec": {}}),
                         parse_resource_slice({"metadata": {"name": "s"}, "spec": {
                             "driver": DRIVER, "nodeName": "worker",
                             "pool": {"name": "worker", "generation": 1, "resourceSliceCount": 1},
                             "devices": [device]}}), claim, *(parse_resource_claim(o) for o in others)])
    plugin = DynamicResources(DynamicResourcesArgs(), SimpleNamespace(client=store), features=features)
    pod = Pod.from_manifest({"metadata": {"name": "p", "namespace": "default", "uid": "uid-p"},
                             "spec": {"containers": [{"name": "c", "image": "x"}],
                                      "resourceClaims": [{"name": "r", "resourceClaimName": "c"}]}}, validate=False)
    (info,) = list(build_snapshot([make_node("worker")]).batch())
    state = CycleState()
    _, pre = plugin.pre_filter(state, pod, [info])
    assert pre is None
    status = plugin.filter(state, pod, info)
    return None if status is None else (status.code(), status.message())


def test_capacity_request_within_the_device():
    assert _filter({"deviceClassName": "gpu", "capacity": {"requests": {"memory": "1Gi"}}},
                   {"name": "gpu-0", "capacity": {"memory": {"value": "8Gi"}}}) is None


def test_capacity_request_beyond_the_device_is_unschedulable():
    code, message = _filter({"deviceClassName": "gpu", "capacity": {"requests": {"memory": "9Gi"}}},
                            {"name": "gpu-0", "capacity": {"memory": {"value": "8Gi"}}})
    assert (code, message) == (Code.UNSCHEDULABLE_AND_UNRESOLVABLE, "cannot allocate all claims")


def test_capacity_requests_with_the_gate_off_are_upstreams_error():
    code, message = _filter({"deviceClassName": "gpu", "capacity": {"requests": {"memory": "1Gi"}}},
                            {"name": "gpu-0"}, Features(consumable_capacity=False))
    assert (code, message) == (Code.ERROR, "claim default/c, request r: has capacity requests, but the "
                                           "DRAConsumableCapacity feature is disabled")


def test_a_shared_device_has_room_for_another_share():
    exactly = {"deviceClassName": "gpu", "capacity": {"requests": {"memory": "3Gi"}}}
    assert _filter(exactly, SHARED_DEVICE, others=(_allocated("a", "5Gi"),)) is None
    # the shares already consume 6Gi of 8Gi: 3Gi does not fit
    assert _filter(exactly, SHARED_DEVICE, others=(_allocated("a", "5Gi"), _allocated("b", "1Gi"))) == (
        Code.UNSCHEDULABLE_AND_UNRESOLVABLE, "cannot allocate all claims")


def test_with_the_gate_off_a_share_holds_the_whole_device():
    features = Features(consumable_capacity=False)
    assert _filter({"deviceClassName": "gpu"}, SHARED_DEVICE, features) is None
    assert _filter({"deviceClassName": "gpu"}, SHARED_DEVICE, features, others=(_allocated("a", "1Gi"),)) == (
        Code.UNSCHEDULABLE_AND_UNRESOLVABLE, "cannot allocate all claims")
