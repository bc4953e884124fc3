"""DRADerivedAttributes in the allocator (v0.37.2 ``structured/internal/experimental``:
``lookupAttribute``, ``validateDeviceRequest``).

Upstream's ``derived-attributes*`` rows of ``allocatortesting/allocator_testing.go``
(``TestAllocator``) transcribed, plus: the experimental variant selected by the feature, the
evaluation cached per device and expression, a distinctAttribute constraint, the evaluation
error's wording, and the gate through the scheduler (kept on create, a failing expression as
Filter's error). The gate off refusing them: ``test_derived_attributes_cel.py``.
"""
from __future__ import annotations

import pytest

from fastsched.dra import allocator as allocator_module
from fastsched.dra.allocator import Allocator, AllocatorError, Features

from .builders import (CLAIM0, CLASS_A, CLASS_B, DEVICE1, DEVICE2, DEVICE3, DRIVER_A, DRIVER_B, NODE1, POOL1, POOL2,
                       REGION1, REQ0, REQ1, SUB0, SUB1, SLICE1, SLICE2, allocation, claim, device, device_class,
                       first_available, local_node_selector, node, request, result, slice_, sub_request)

DEVICE4 = "device-4"
ON = Features(derived_attributes=True)


def _derived(body: dict, *attrs: tuple[str, str]) -> dict:
    """``requestWithDerivedAttributes`` / ``subRequest(..., []DeviceDerivedAttribute{...})``."""
    target = body["exactly"] if "exactly" in body else body
    target["derivedAttributes"] = [{"name": n, "expression": e} for n, e in attrs]
    return body


def _s(value: str) -> dict:
    return {"string": value}


def _match(attr: str, *requests: str) -> dict:
    return {"matchAttribute": attr, "requests": list(requests)}


CASES = {
    # name: (features, claim, classes, slices, expected allocation or None, expected error substring)
    "derived-attributes": (
        ON,
        claim(CLAIM0,
              _derived(request(REQ0, CLASS_A, 1), ("derived/sharedNumaNode", f'device.attributes["{DRIVER_A}"]["numa"]')),
              _derived(request(REQ1, CLASS_B, 1),
                       ("derived/sharedNumaNode", f'device.attributes["{DRIVER_B}"]["numaNode"]')),
              constraints=[_match("derived/sharedNumaNode", REQ0, REQ1)]),
        [(CLASS_A, DRIVER_A), (CLASS_B, DRIVER_B)],
        [slice_(SLICE1, NODE1, POOL1, DRIVER_A, device(DEVICE2, attributes={"numa": _s("numa-0")}),
                device(DEVICE1, attributes={"numa": _s("numa-1")})),
         slice_(SLICE2, NODE1, POOL2, DRIVER_B, device(DEVICE3, attributes={"numaNode": _s("numa-1")}),
                device(DEVICE4, attributes={"numaNode": _s("numa-2")}))],
        allocation(local_node_selector(NODE1), result(REQ0, DRIVER_A, POOL1, DEVICE1),
                   result(REQ1, DRIVER_B, POOL2, DEVICE3)),
        None),
    "derived-attributes-with-prioritized-list": (
        ON,
        claim(CLAIM0,
              first_available(REQ0,
                              _derived(sub_request(SUB0, CLASS_A, 1),
                                       ("derived/match", f'device.attributes["{DRIVER_A}"]["foo"]')),
                              _derived(sub_request(SUB1, CLASS_A, 1),
                                       ("derived/match", f'device.attributes["{DRIVER_A}"]["bar"]'))),
              _derived(request(REQ1, CLASS_B, 1), ("derived/match", f'device.attributes["{DRIVER_B}"]["baz"]')),
              constraints=[_match("derived/match", REQ0, REQ1)]),
        [(CLASS_A, DRIVER_A), (CLASS_B, DRIVER_B)],
        [slice_(SLICE1, NODE1, POOL1, DRIVER_A, device(DEVICE1, attributes={"foo": _s("A"), "bar": _s("B")})),
         slice_(SLICE2, NODE1, POOL2, DRIVER_B, device(DEVICE2, attributes={"baz": _s("B")}))],
        allocation(local_node_selector(NODE1), result(f"{REQ0}/{SUB1}", DRIVER_A, POOL1, DEVICE1),
                   result(REQ1, DRIVER_B, POOL2, DEVICE2)),
        None),
    "derived-attributes-override": (
        ON,
        claim(CLAIM0,
              _derived(request(REQ0, CLASS_A, 1), ("dra.example.com/myAttr", '"value-2"')),
              request(REQ1, CLASS_A, 1),
              constraints=[_match("dra.example.com/myAttr", REQ0, REQ1)]),
        [(CLASS_A, "dra.example.com")],
        [slice_(SLICE1, NODE1, POOL1, "dra.example.com", device(DEVICE1, attributes={"myAttr": _s("value-1")}),
                device(DEVICE2, attributes={"myAttr": _s("value-2")}))],
        allocation(local_node_selector(NODE1), result(REQ0, "dra.example.com", POOL1, DEVICE1),
                   result(REQ1, "dra.example.com", POOL1, DEVICE2)),
        None),
    "derived-attributes-cel-missing-attribute": (
        ON,
        claim(CLAIM0,
              _derived(request(REQ0, CLASS_A, 1),
                       ("derived/missing", f'device.attributes["{DRIVER_A}"]["missingAttr"]')),
              constraints=[_match("derived/missing", REQ0)]),
        [(CLASS_A, DRIVER_A)],
        [slice_(SLICE1, NODE1, POOL1, DRIVER_A, device(DEVICE1, attributes={"existingAttr": _s("yes")}))],
        None, "no such key: missingAttr"),
    "derived-attributes-type-mismatch": (
        ON,
        claim(CLAIM0,
              _derived(request(REQ0, CLASS_A, 2), ("derived/myAttr", f'device.attributes["{DRIVER_A}"]["static"]')),
              constraints=[_match("derived/myAttr", REQ0)]),
        [(CLASS_A, DRIVER_A)],
        [slice_(SLICE1, NODE1, POOL1, DRIVER_A, device(DEVICE1, attributes={"static": _s("value")}),
                device(DEVICE2, attributes={"static": {"int": 1}}))],
        None, None),
    # -- fastsched's own rows ----------------------------------------------------------------------
    # distinctAttribute sees them too: two devices with the same derived value cannot go together
    "distinct-derived": (
        ON,
        claim(CLAIM0, _derived(request(REQ0, CLASS_A, 2), ("derived/n", f'device.attributes["{DRIVER_A}"]["g"] / 2')),
              constraints=[{"distinctAttribute": "derived/n"}]),
        [(CLASS_A, DRIVER_A)],
        [slice_(SLICE1, NODE1, POOL1, DRIVER_A, device(DEVICE1, attributes={"g": {"int": 2}}),
                device(DEVICE2, attributes={"g": {"int": 3}}), device(DEVICE3, attributes={"g": {"int": 4}}))],
        allocation(local_node_selector(NODE1), result(REQ0, DRIVER_A, POOL1, DEVICE1),
                   result(REQ0, DRIVER_A, POOL1, DEVICE3)),
        None),
    # the error names the attribute and the device; an output the scheduler cannot use is an
    # evaluation error (a map)
    "evaluation-error-wording": (
        ON,
        claim(CLAIM0, _derived(request(REQ0, CLASS_A, 1), ("derived/n", "dyn(device.attributes)")),
              constraints=[_match("derived/n")]),
        [(CLASS_A, DRIVER_A)], [slice_(SLICE1, NODE1, POOL1, DRIVER_A, device(DEVICE1))],
        None, "evaluate derived attribute derived/n on device driver-a/pool-1/device-1 failed: unsupported CEL "
              "return type"),
}


@pytest.mark.parametrize("name", CASES)
def test_allocator(name):
    features, the_claim, classes, slices, expected, error = CASES[name]
    by_name = {n: device_class(n, d) for n, d in classes}
    allocator = Allocator(features, set(), by_name.get, slices)
    if error is not None:
        with pytest.raises(AllocatorError) as excinfo:
            allocator.allocate(node(NODE1, REGION1), [the_claim])
        assert error in str(excinfo.value)
        return
    assert allocator.allocate(node(NODE1, REGION1), [the_claim]) == ([expected] if expected is not None else None)


def test_variant():
    """TestAllocatorSelection: the feature needs the experimental variant."""
    assert ON.variant == "experimental" and Features().variant == "incubating"


def test_evaluated_once_per_device_and_expression(monkeypatch):
    """derivedAttributesCache: two names (and two requests) with one expression evaluate it once
    per device within one allocation."""
    calls = []
    real = allocator_module.derived_attribute

    def counting(compiled, device):
        calls.append(compiled.expression)
        return real(compiled, device)

    monkeypatch.setattr(allocator_module, "derived_attribute", counting)
    expr = f'device.attributes["{DRIVER_A}"]["g"]'
    the_claim = claim(CLAIM0, _derived(request(REQ0, CLASS_A, 1), ("derived/a", expr), ("derived/b", expr)),
                      _derived(request(REQ1, CLASS_A, 1), ("derived/a", expr)),
                      constraints=[_match("derived/a"), _match("derived/b", REQ0)])
    slices = [slice_(SLICE1, NODE1, POOL1, DRIVER_A, device(DEVICE1, attributes={"g": {"int": 1}}),
                     device(DEVICE2, attributes={"g": {"int": 1}}))]
    allocator = Allocator(ON, set(), {CLASS_A: device_class(CLASS_A, DRIVER_A)}.get, slices)
    assert allocator.allocate(node(NODE1, REGION1), [the_claim]) == [allocation(
        local_node_selector(NODE1), result(REQ0, DRIVER_A, POOL1, DEVICE1), result(REQ1, DRIVER_A, POOL1, DEVICE2))]
    assert calls == [expr, expr]  # device-1 once (for both names), device-2 once


# -- through the scheduler -------------------------------------------------------------------------
RES = "resource.k8s.io/v1"


def _cluster(expression: str) -> tuple[list, list]:
    """Two nodes, each with a GPU and a NIC whose NUMA attributes are named differently; on node-0
    they disagree, on node-1 they agree. One pod with a claim matching them through derived
    attributes."""
    objects: list = [{"apiVersion": RES, "kind": "DeviceClass", "metadata": {"name": cls},
                      "spec": {"selectors": [{"cel": {"expression": f'device.driver == "{drv}"'}}]}}
                     for cls, drv in (("gpu", "gpu.example.com"), ("nic", "nic.example.com"))]
    for i, (gpu_numa, nic_numa) in enumerate([(0, 1), (1, 1)]):
        name = f"node-{i}"
        objects.append({"apiVersion": "v1", "kind": "Node", "metadata": {"name": name},
                        "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"}}})
        for drv, attr, value in (("gpu.example.com", "numa", gpu_numa), ("nic.example.com", "numaNode", nic_numa)):
            objects.append({"apiVersion": RES, "kind": "ResourceSlice", "metadata": {"name": f"{name}-{attr.lower()}"}, "spec": {
                "driver": drv, "nodeName": name, "pool": {"name": name, "generation": 1, "resourceSliceCount": 1},
                "devices": [{"name": "d0", "attributes": {attr: {"int": value}}}]}})
    objects.append({"apiVersion": RES, "kind": "ResourceClaim", "metadata": {"name": "c", "namespace": "default"},
                    "spec": {"devices": {
                        "requests": [
                            {"name": "g", "exactly": {"deviceClassName": "gpu", "derivedAttributes": [
                                {"name": "derived/numa", "expression": expression}]}},
                            {"name": "n", "exactly": {"deviceClassName": "nic", "derivedAttributes": [
                                {"name": "derived/numa",
                                 "expression": 'device.attributes["nic.example.com"]["numaNode"]'}]}}],
                        "constraints": [{"matchAttribute": "derived/numa"}]}}})
    pods = [{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "default"},
             "spec": {"containers": [{"name": "c", "image": "x"}],
                      "resourceClaims": [{"name": "c", "resourceClaimName": "c"}]}}]
    return objects, pods


def _schedule(expression: str, gate: bool):
    from fastsched import Scheduler
    sched = Scheduler(seed=0, feature_gates={"DRADerivedAttributes": gate})
    objects, pods = _cluster(expression)
    sched.add(objects)
    sched.add(pods)
    return sched, sched.run(max_attempts=3)[0]


def test_scheduler_gate_on_and_off():
    """On: kept on create, the constraint sees the derived NUMA node (node-1 only). Off: dropped on
    create, so the constraint names an attribute no device has (no node)."""
    numa = 'device.attributes["gpu.example.com"]["numa"]'
    sched, r = _schedule(numa, True)
    assert r.node_name == "node-1"
    assert sched.cluster.get_object("ResourceClaim", "c", "default").requests[0].exactly.derived_attributes
    _, r = _schedule(numa, False)
    assert not r.node_name and "cannot allocate all claims" in r.message


def test_scheduler_evaluation_error():
    """An expression failing on a device is Filter's error (the allocation stops), worded as
    upstream's lookupAttribute."""
    _, r = _schedule('device.attributes["gpu.example.com"]["nope"]', True)
    assert not r.node_name
    assert ("evaluate derived attribute derived/numa on device gpu.example.com/node-0/d0 failed: no such key: nope"
            in r.message)
