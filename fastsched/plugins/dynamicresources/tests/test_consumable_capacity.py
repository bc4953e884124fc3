"""Consumable capacity (DRAConsumableCapacity, beta and on at v1.37.2) is not ported: a claim with
capacity requests, or a device allowing multiple allocations that a request reaches, is an Error
naming the gate, never a silent answer; with the gate off (allocator features), upstream's error."""
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


def _filter(exactly: dict, device: dict, features: Features | None = None):
    claim = parse_resource_claim({"metadata": {"name": "c", "namespace": "default", "uid": "uid-c"},
                                  "spec": {"devices": {"requests": [{"name": "r", "exactly": exactly}]}}})
    store = ObjectStore([parse_device_class({"metadata": {"name": "gpu"}, "spec": {}}),
                         parse_resource_slice({"metadata": {"name": "s"}, "spec": {
                             "driver": DRIVER, "nodeName": "worker",
                             "pool": {"name": "worker", "generation": 1, "resourceSliceCount": 1},
                             "devices": [device]}}), claim])
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


def test_capacity_requests_are_an_error_naming_the_gate():
    code, message = _filter({"deviceClassName": "gpu", "capacity": {"requests": {"memory": "1Gi"}}},
                            {"name": "gpu-0", "capacity": {"memory": {"value": "8Gi"}}})
    assert code == Code.ERROR
    assert message == ("claim default/c, request r: has capacity requests: consumable capacity "
                       "(DRAConsumableCapacity, beta and on at v1.37.2) is not modelled by fastsched")


def test_capacity_requests_with_the_gate_off_are_upstreams_error():
    code, message = _filter({"deviceClassName": "gpu", "capacity": {"requests": {"memory": "1Gi"}}},
                            {"name": "gpu-0"}, Features(consumable_capacity=False))
    assert (code, message) == (Code.ERROR, "claim default/c, request r: has capacity requests, but the "
                                           "DRAConsumableCapacity feature is disabled")


def test_a_device_allowing_multiple_allocations_is_an_error_naming_the_gate():
    code, message = _filter({"deviceClassName": "gpu"}, {"name": "gpu-0", "allowMultipleAllocations": True})
    assert code == Code.ERROR
    assert message.startswith("claim default/c, request r: device gpu.example.com/worker/gpu-0 allows multiple "
                              "allocations: consumable capacity (DRAConsumableCapacity")
    # an ordinary device is allocated as before
    assert _filter({"deviceClassName": "gpu"}, {"name": "gpu-0"}) is None
