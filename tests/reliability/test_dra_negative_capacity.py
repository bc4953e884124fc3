"""A device whose capacity is negative (validation lets it through: a stored slice from before
stricter rules) makes v1.37.2's allocator abort when it meets the device
(``errNegativeCapacity``), so DynamicResources' Filter fails with that error. The batch Filter
counted the device in its free-device columns and passed the node; Reserve, allocating for the
chosen node, then failed with ``claim allocation not found for node``, and ``explain`` called the
node feasible. Now such a device sends the batch Filter to the allocator, node by node."""
from __future__ import annotations

import pytest

from fastsched import Scheduler
from fastsched.scheduler.result import ERROR

DRIVER = "test-driver.cdi.k8s.io"


def _objects(capacity: str, n_nodes: int) -> list[dict]:
    out: list[dict] = [{"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": "test-class"},
                        "spec": {"selectors": [{"cel": {"expression": f'device.driver == "{DRIVER}"'}}]}}]
    for i in range(n_nodes):
        out.append({"apiVersion": "v1", "kind": "Node", "metadata": {"name": f"n{i}"},
                    "status": {"capacity": {"pods": "110", "cpu": "4", "memory": "32Gi"}}})
        out.append({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": f"n{i}-slice"},
                    "spec": {"driver": DRIVER, "nodeName": f"n{i}",
                             "pool": {"name": f"n{i}", "generation": 1, "resourceSliceCount": 1},
                             "devices": [{"name": "gpu-0", "capacity": {"memory": {"value": capacity}}},
                                         {"name": "gpu-1"}]}})
    out.append({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
                "metadata": {"name": "claim", "namespace": "default"},
                "spec": {"devices": {"requests": [{"name": "req-0", "exactly": {"deviceClassName": "test-class"}}]}}})
    out.append({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "default"},
                "spec": {"containers": [{"name": "c", "image": "i", "resources": {"claims": [{"name": "r"}]}}],
                         "resourceClaims": [{"name": "r", "resourceClaimName": "claim"}]}})
    return out


@pytest.mark.parametrize("n_nodes", [1, 3])
def test_a_negative_device_capacity_fails_filter_as_the_allocator_does(n_nodes):
    s = Scheduler()
    s.add(_objects("-1", n_nodes))
    e = s.explain(s.get_pod("default", "p"))
    assert e.best_nodes == []
    [r] = s.run()
    assert r.status == ERROR
    assert r.message == ('running "DynamicResources" filter plugin: claim default/claim, request req-0: checking '
                         f'capacity for device {DRIVER}/n0/gpu-0: capacity "memory": capacity value is negative')


def test_a_positive_device_capacity_still_schedules():
    s = Scheduler()
    s.add(_objects("40Gi", 3))
    [r] = s.run()
    assert r.status == "Scheduled", r.message
