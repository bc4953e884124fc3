"""Builders for DRA test objects, after upstream's allocator test helpers
(``structured/internal/allocatortesting/allocator_testing.go``): classes selecting a driver,
claims with requests, slices with devices."""
from __future__ import annotations

from typing import Any

from fastsched.api.resource import parse_device_class, parse_resource_claim, parse_resource_slice

REGION1, REGION2 = "region-1", "region-2"
NODE1, NODE2 = "node-1", "node-2"
CLASS_A, CLASS_B = "class-a", "class-b"
DRIVER_A, DRIVER_B = "driver-a", "driver-b"
POOL1, POOL2, POOL3, POOL4 = "pool-1", "pool-2", "pool-3", "pool-4"
REQ0, REQ1, REQ2 = "req-0", "req-1", "req-2"
SUB0, SUB1 = "subReq-0", "subReq-1"
CLAIM0, CLAIM1 = "claim-0", "claim-1"
SLICE1, SLICE2 = "slice-1", "slice-2"
DEVICE0, DEVICE1, DEVICE2, DEVICE3 = "device-0", "device-1", "device-2", "device-3"


class Node:
    """The node as the allocator reads it (name, labels)."""

    def __init__(self, name: str, region: str):
        self.name = name
        self.labels = {"region": region, "planet": "earth"}


def node(name: str, region: str) -> Node:
    return Node(name, region)


def device_class(name: str, driver: str, config: list | None = None) -> Any:
    spec: dict = {"selectors": [{"cel": {"expression": f'device.driver == "{driver}"'}}]}
    if config:
        spec["config"] = config
    return parse_device_class({"metadata": {"name": name}, "spec": spec})


def opaque(driver: str, attribute: str) -> dict:
    """upstream ``deviceConfiguration``."""
    return {"opaque": {"driver": driver, "parameters": {attribute: attribute + "Value"}}}


def request(name: str, cls: str, count: int = 1, *selectors: str, mode: str = "ExactCount",
            admin: bool | None = None, tolerations: list | None = None) -> dict:
    exactly: dict = {"deviceClassName": cls, "allocationMode": mode}
    if tolerations:
        exactly["tolerations"] = tolerations
    if mode == "ExactCount":
        exactly["count"] = count
    if selectors:
        exactly["selectors"] = [{"cel": {"expression": s}} for s in selectors]
    if admin is not None:
        exactly["adminAccess"] = admin
    return {"name": name, "exactly": exactly}


def sub_request(name: str, cls: str, count: int = 1, *selectors: str, mode: str = "ExactCount") -> dict:
    sub: dict = {"name": name, "deviceClassName": cls, "allocationMode": mode}
    if mode == "ExactCount":
        sub["count"] = count
    if selectors:
        sub["selectors"] = [{"cel": {"expression": s}} for s in selectors]
    return sub


def first_available(name: str, *subs: dict) -> dict:
    return {"name": name, "firstAvailable": list(subs)}


def claim(name: str, *requests: dict, constraints: list | None = None, config: list | None = None,
          namespace: str = "default", **extra: Any) -> Any:
    devices: dict = {"requests": list(requests)}
    if constraints:
        devices["constraints"] = constraints
    if config:
        devices["config"] = config
    manifest = {"metadata": {"name": name, "namespace": namespace, **extra.get("metadata", {})},
                "spec": {"devices": devices}}
    if "status" in extra:
        manifest["status"] = extra["status"]
    return parse_resource_claim(manifest)


def claim_with_request(name: str, req: str, cls: str, *constraints: dict) -> Any:
    return claim(name, request(req, cls, 1), constraints=list(constraints) or None)


def device(name: str, capacity: dict | None = None, attributes: dict | None = None, **fields: Any) -> dict:
    d: dict = {"name": name}
    if capacity:
        d["capacity"] = {k: {"value": v} for k, v in capacity.items()}
    if attributes:
        d["attributes"] = attributes
    d.update(fields)
    return d


def slice_(name: str, node_selection: Any, pool: Any, driver: str, *devices: dict, generation: int = 1,
           count: int = 1) -> Any:
    """``sliceWithDevices``: ``node_selection`` a node name, "ALL" (allNodes) or a nodeSelector dict."""
    spec: dict = {"driver": driver, "pool": {"name": pool, "generation": generation, "resourceSliceCount": count},
                  "devices": list(devices)}
    if node_selection == "ALL":
        spec["allNodes"] = True
    elif isinstance(node_selection, dict):
        spec["nodeSelector"] = node_selection
    else:
        spec["nodeName"] = node_selection
    return parse_resource_slice({"metadata": {"name": name}, "spec": spec})


def slice_one(name: str, node_selection: Any, pool: str, driver: str, **kw: Any) -> Any:
    """``sliceWithOneDevice``: one device named ``device-1``."""
    return slice_(name, node_selection, pool, driver, device(DEVICE1), **kw)


def local_node_selector(node_name: str) -> dict:
    return {"nodeSelectorTerms": [{"matchFields": [{"key": "metadata.name", "operator": "In",
                                                    "values": [node_name]}]}]}


def node_label_selector(key: str, *values: str) -> dict:
    return {"nodeSelectorTerms": [{"matchExpressions": [{"key": key, "operator": "In", "values": list(values)}]}]}


def result(req: str, driver: str, pool: str, dev: str, admin: bool = False) -> dict:
    r = {"request": req, "driver": driver, "pool": pool, "device": dev}
    if admin:
        r["adminAccess"] = True
    return r


def allocation(selector: dict | None, *results: dict, config: list | None = None) -> dict:
    a: dict = {"devices": {"results": list(results)}}
    if config:
        a["devices"]["config"] = config
    if selector is not None:
        a["nodeSelector"] = selector
    return a
