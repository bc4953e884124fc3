"""scheduler_perf's DRA ops (upstream ``test/integration/scheduler_perf/dra.go``) on a
:class:`~fastsched.Scheduler`: ``createResourceDriver`` (one ResourceSlice per matching node),
``createResourceClaims`` and ``allocResourceClaims`` (claims allocated without a pod, on randomly
chosen nodes). The perf runner's op handlers (:mod:`fastsched.perf.ops`) call these."""
from __future__ import annotations

import copy
import fnmatch
import random
from typing import Any

from ..api.resource import claim_with_status
from .allocator import Allocator, Features, allocated_devices_of

__all__ = ["resource_slice", "create_resource_driver", "create_resource_claims", "alloc_resource_claims"]


def resource_slice(driver: str, node: str, capacity: int) -> dict:
    """``resourceSlice``: ``capacity`` devices ``instance-<i>`` on ``node`` (attributes model A100,
    family GPU, driverVersion 1.2.3, dra.example.com/numa = i; 1Gi of memory), without binding
    conditions, as v1.37.2's dra.go (v1.34's set some, which its API server dropped with
    DRADeviceBindingConditions off; v1.37.2 has that gate on and no longer sets them)."""
    devices = [{"name": f"instance-{i}",
                "attributes": {"model": {"string": "A100"}, "family": {"string": "GPU"},
                               "driverVersion": {"version": "1.2.3"}, "dra.example.com/numa": {"int": i}},
                "capacity": {"memory": {"value": "1Gi"}}} for i in range(capacity)]
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": node},
            "spec": {"driver": driver, "nodeName": node, "pool": {"name": node, "resourceSliceCount": 1},
                     "devices": devices}}


def create_resource_driver(sched: Any, driver: str, nodes_glob: str, max_claims_per_node: int) -> int:
    """``createResourceDriverOp``: a slice for each node whose name matches ``nodes_glob``
    (``filepath.Match``); the number of slices created."""
    created = 0
    for node in sched.nodes():
        if fnmatch.fnmatchcase(node.name, nodes_glob):
            sched.add_object(resource_slice(driver, node.name, max_claims_per_node))
            created += 1
    return created


def create_resource_claims(sched: Any, template: Any, count: int, namespace: str) -> None:
    """``createResourceClaimsOp``: ``count`` copies of the claim ``template`` (a manifest dict) in
    ``namespace`` (names from ``generateName``, as the API server gives them)."""
    for _ in range(count):
        manifest = copy.deepcopy(dict(template))
        manifest.setdefault("metadata", {})["namespace"] = namespace
        sched.add_object(manifest)


def alloc_resource_claims(sched: Any, namespace: str | None, seed: int, features: Features = Features()) -> None:
    """``allocResourceClaimsOp``: allocate each unallocated claim (of ``namespace``, all when
    empty), one at a time, on the first node of a fresh random order where the allocator finds
    devices; the allocation is written to the claim's status. Raises RuntimeError, as upstream
    fails the test, when a claim fits nowhere."""
    rng = random.Random(seed)
    claims = [c for c in sched.list_objects("ResourceClaim") if not namespace or c.namespace == namespace]
    nodes = list(sched.nodes())
    slices_by_node: dict[str, list] = {}
    elsewhere = []
    for s in sched.list_objects("ResourceSlice"):
        if s.node_name:
            slices_by_node.setdefault(s.node_name, []).append(s)
        else:
            elsewhere.append(s)

    def slices_for(node: Any) -> list:
        return [*slices_by_node.get(node.name, ()), *elsewhere]

    allocated = allocated_devices_of(sched.list_objects("ResourceClaim"))
    for i, claim in enumerate(claims):
        if claim.allocation is not None:
            continue
        allocator = Allocator(features, allocated, lambda name: sched.get_object("DeviceClass", name, ""),
                              slices_for)
        rng.shuffle(nodes)
        for node in nodes:
            result = allocator.allocate(node, [claim])
            if result is not None:
                current = sched.get_object("ResourceClaim", claim.name, claim.namespace)
                sched.update_object(claim_with_status(current, allocation=result[0]))
                allocated |= allocated_devices_of([claim_with_status(current, allocation=result[0])])
                break
        else:
            raise RuntimeError(f"Could not allocate claim {i} out of {len(claims)}")
