"""Upstream's structured allocator test table (``structured/internal/allocatortesting``,
``TestAllocator``, v0.37.2), the cases the incubating variant runs with v1.37.2's default features
(consumable capacity, compatibility groups and the other alpha features aside).

Upstream compares results ignoring the order of device results; fastsched's search order is
upstream's, so the expected lists are in pick order and compared exactly.
"""
from __future__ import annotations

import pytest

from fastsched.api.resource import parse_device_class, parse_resource_slice
from fastsched.dra.allocator import Allocator, AllocatorError, FailedAllocationOnNode, Features

from .builders import (CLAIM0, CLAIM1, CLASS_A, CLASS_B, DEVICE0, DEVICE1, DEVICE2, DEVICE3, DRIVER_A, DRIVER_B,
                       NODE1, NODE2, POOL1, POOL2, POOL3, POOL4, REGION1, REGION2, REQ0, REQ1, REQ2, SLICE1, SLICE2,
                       SUB0, SUB1, allocation, claim, claim_with_request, device, device_class, first_available,
                       local_node_selector, node, node_label_selector, opaque, request, result, slice_, slice_one,
                       sub_request)

MEM = 'device.capacity["driver-a"].memory.compareTo(quantity("{}")) >= 0'
INT_ATTR = "driver-a/numa"
VERSION_ATTR = "driver-a/driverVersion"
STRING_ATTR = "driver-a/stringAttribute"
BOOL_ATTR = "driver-a/boolAttribute"


def attrs(**kw):
    out = {}
    for k, v in kw.items():
        kind = "bool" if isinstance(v, bool) else "int" if isinstance(v, int) else (
            "version" if k == "driverVersion" else "string")
        out[k] = {kind: v}
    return out


def run(claims, classes, slices, the_node, allocated=(), features=Features()):
    by_name = {c.name: c for c in classes}
    return Allocator(features, set(allocated), by_name.get, slices).allocate(the_node, claims)


TAINT_NONE = {"key": "taint-key", "value": "taint-value", "effect": "None"}
TAINT_NO_SCHEDULE = {"key": "taint-key", "value": "taint-value", "effect": "NoSchedule"}
TAINT_NO_EXECUTE = {"key": "taint-key", "value": "taint-value-2", "effect": "NoExecute"}
TOLERATION_NO_EXECUTE = {"operator": "Equal", "key": "taint-key", "value": "taint-value-2", "effect": "NoExecute"}


def consumes(memory: str, counter_set: str = "counter-set-1") -> dict:
    return {"counterSet": counter_set, "counters": {"memory": {"value": memory}}}


def counter_slice(name: str, node_name: str, pool: str, driver: str, memory: str, count: int = 1):
    """``sliceWithCounterSets``: one counter set ``counter-set-1`` with ``memory``."""
    return parse_resource_slice({"metadata": {"name": name}, "spec": {
        "driver": driver, "nodeName": node_name, "pool": {"name": pool, "generation": 1, "resourceSliceCount": count},
        "sharedCounters": [{"name": "counter-set-1", "counters": {"memory": {"value": memory}}}]}})


N1 = node(NODE1, REGION1)
A = device_class(CLASS_A, DRIVER_A)
B = device_class(CLASS_B, DRIVER_B)
LOCAL1 = local_node_selector(NODE1)

CASES = {
    "empty": dict(claims=[], classes=[], slices=[], node=None, expect=[]),
    "simple": dict(claims=[claim_with_request(CLAIM0, REQ0, CLASS_A)], classes=[A],
                   slices=[slice_one(SLICE1, NODE1, POOL1, DRIVER_A)], node=N1,
                   expect=[allocation(LOCAL1, result(REQ0, DRIVER_A, POOL1, DEVICE1))]),
    "other-node": dict(claims=[claim_with_request(CLAIM0, REQ0, CLASS_A)], classes=[A],
                       slices=[slice_one(SLICE1, NODE1, POOL1, DRIVER_B), slice_one(SLICE2, NODE2, POOL2, DRIVER_A)],
                       node=node(NODE2, REGION2),
                       expect=[allocation(local_node_selector(NODE2), result(REQ0, DRIVER_A, POOL2, DEVICE1))]),
    "small-and-large": dict(
        claims=[claim(CLAIM0, request(REQ0, CLASS_A, 1, MEM.format("1Gi")), request(REQ1, CLASS_A, 1, MEM.format("2Gi")))],
        classes=[A], node=N1,
        slices=[slice_(SLICE1, NODE1, POOL1, DRIVER_A, device(DEVICE1, {"memory": "1Gi"}), device(DEVICE2, {"memory": "2Gi"}))],
        expect=[allocation(LOCAL1, result(REQ0, DRIVER_A, POOL1, DEVICE1), result(REQ1, DRIVER_A, POOL1, DEVICE2))]),
    "small-and-large-backtrack-requests": dict(
        claims=[claim(CLAIM0, request(REQ0, CLASS_A, 1, MEM.format("1Gi")), request(REQ1, CLASS_A, 1, MEM.format("2Gi")))],
        classes=[A], node=N1,
        slices=[slice_(SLICE1, NODE1, POOL1, DRIVER_A, device(DEVICE2, {"memory": "2Gi"}), device(DEVICE1, {"memory": "1Gi"}))],
        expect=[allocation(LOCAL1, result(REQ0, DRIVER_A, POOL1, DEVICE1), result(REQ1, DRIVER_A, POOL1, DEVICE2))]),
    "small-and-large-backtrack-claims": dict(
        claims=[claim(CLAIM0, request(REQ0, CLASS_A, 1, MEM.format("1Gi"))),
                claim(CLAIM1, request(REQ1, CLASS_A, 1, MEM.format("2Gi")))],
        classes=[A], node=N1,
        slices=[slice_(SLICE1, NODE1, POOL1, DRIVER_A, device(DEVICE2, {"memory": "2Gi"}), device(DEVICE1, {"memory": "1Gi"}))],
        expect=[allocation(LOCAL1, result(REQ0, DRIVER_A, POOL1, DEVICE1)),
                allocation(LOCAL1, result(REQ1, DRIVER_A, POOL1, DEVICE2))]),
    "devices-split-across-different-slices": dict(
        claims=[claim(CLAIM0, request(REQ0, CLASS_A, 2))], classes=[A], node=N1,
        slices=[slice_one(SLICE1, NODE1, POOL1, DRIVER_A), slice_one(SLICE2, NODE1, POOL2, DRIVER_A)],
        expect=[allocation(LOCAL1, result(REQ0, DRIVER_A, POOL1, DEVICE1), result(REQ0, DRIVER_A, POOL2, DEVICE1))]),
    # the generation-2 slice replaces the older one; the pool (2 slices announced, 1 present) is
    # incomplete and v1.37.2 takes no device from it (v1.34 still took ExactCount devices)
    "obsolete-slice": dict(
        claims=[claim_with_request(CLAIM0, REQ0, CLASS_A)], classes=[A], node=N1,
        slices=[slice_("slice-1-obsolete", NODE1, POOL1, DRIVER_A, device(DEVICE1), count=2),
                slice_("slice-1-obsolete", NODE1, POOL1, DRIVER_A, device(DEVICE2), count=2, generation=2)],
        expect=None),
    # an invalid pool fails the node only (ErrFailedAllocationOnNode; v1.34: "pool %s is invalid")
    "duplicate-slice": dict(
        claims=[claim_with_request(CLAIM0, REQ0, CLASS_A)], classes=[A], node=N1,
        slices=[slice_one(SLICE1, NODE1, POOL1, DRIVER_A, count=2), slice_one(SLICE1 + "-2", NODE1, POOL1, DRIVER_A, count=2)],
        error="invalid resource pools were encountered", failed_on_node=True),
    "no-slices": dict(claims=[claim_with_request(CLAIM0, REQ0, CLASS_A)], classes=[A], slices=[], node=N1, expect=None),
    "not-enough-suitable-devices": dict(
        claims=[claim_with_request(CLAIM0, REQ0, CLASS_A), claim_with_request(CLAIM0, REQ1, CLASS_A)], classes=[A],
        slices=[slice_one(SLICE1, NODE1, POOL1, DRIVER_A)], node=N1, expect=None),
    "no-classes": dict(claims=[claim_with_request(CLAIM0, REQ0, CLASS_A)], classes=[],
                       slices=[slice_one(SLICE1, NODE1, POOL1, DRIVER_A)], node=N1,
                       error="could not retrieve device class class-a"),
    "unknown-class": dict(claims=[claim_with_request(CLAIM0, REQ0, "unknown-class")], classes=[A],
                          slices=[slice_one(SLICE1, NODE1, POOL1, DRIVER_A)], node=N1,
                          error="could not retrieve device class unknown-class"),
    "empty-class": dict(claims=[claim_with_request(CLAIM0, REQ0, "")], classes=[A],
                        slices=[slice_one(SLICE1, NODE1, POOL1, DRIVER_A)], node=N1,
                        error="claim default/claim-0, request req-0: missing device class name (unsupported request type?)"),
    "no-claims-to-allocate": dict(claims=[], classes=[A], slices=[slice_one(SLICE1, NODE1, POOL1, DRIVER_A)], node=N1,
                                  expect=[]),
    "all-devices-single": dict(
        claims=[claim(CLAIM0, request(REQ0, CLASS_A, mode="All"))], classes=[A],
        slices=[slice_one(SLICE1, NODE1, POOL1, DRIVER_A)], node=N1,
        expect=[allocation(LOCAL1, result(REQ0, DRIVER_A, POOL1, DEVICE1))]),
    "all-devices-many": dict(
        claims=[claim(CLAIM0, request(REQ0, CLASS_A, mode="All"))], classes=[A], node=N1,
        slices=[slice_one(SLICE1, NODE1, POOL1, DRIVER_A), slice_one(SLICE1, NODE1, POOL2, DRIVER_A)],
        expect=[allocation(LOCAL1, result(REQ0, DRIVER_A, POOL1, DEVICE1), result(REQ0, DRIVER_A, POOL2, DEVICE1))]),
    "all-devices-of-the-incomplete-pool": dict(
        claims=[claim(CLAIM0, request(REQ0, CLASS_A, mode="All"))], classes=[A], node=N1,
        slices=[slice_one(SLICE1, NODE1, POOL1, DRIVER_A, count=2)],
        error="claim default/claim-0, request req-0: asks for all devices, but resource pool driver-a/pool-1 is "
              "currently being updated"),
    "all-devices-plus-another": dict(
        claims=[claim(CLAIM0, request(REQ0, CLASS_A, mode="All")), claim(CLAIM1, request(REQ0, CLASS_B, 1))],
        classes=[A, B], node=N1,
        slices=[slice_one(SLICE1, NODE1, POOL1, DRIVER_A), slice_one(SLICE1, NODE1, POOL1, DRIVER_B)],
        expect=[allocation(LOCAL1, result(REQ0, DRIVER_A, POOL1, DEVICE1)),
                allocation(LOCAL1, result(REQ0, DRIVER_B, POOL1, DEVICE1))]),
    "all-devices-many-plus-another-reversed": dict(
        claims=[claim(CLAIM1, request(REQ0, CLASS_B, 1)), claim(CLAIM0, request(REQ0, CLASS_A, mode="All"))],
        classes=[A, B], node=N1,
        slices=[slice_(SLICE1, NODE1, POOL1, DRIVER_A, device(DEVICE1), device(DEVICE2)),
                slice_one(SLICE1, NODE1, POOL1, DRIVER_B)],
        expect=[allocation(LOCAL1, result(REQ0, DRIVER_B, POOL1, DEVICE1)),
                allocation(LOCAL1, result(REQ0, DRIVER_A, POOL1, DEVICE1), result(REQ0, DRIVER_A, POOL1, DEVICE2))]),
    "all-devices-no-solution": dict(
        claims=[claim(CLAIM1, request(REQ0, CLASS_A, 1)), claim(CLAIM0, request(REQ0, CLASS_A, mode="All"))],
        classes=[A], slices=[slice_one(SLICE1, NODE1, POOL1, DRIVER_A)], node=N1, expect=None),
    "all-devices-no-solution-reversed": dict(
        claims=[claim(CLAIM0, request(REQ0, CLASS_A, mode="All")), claim(CLAIM1, request(REQ0, CLASS_A, 1))],
        classes=[A], slices=[slice_one(SLICE1, NODE1, POOL1, DRIVER_A)], node=N1, expect=None),
    "all-devices-slice-without-devices": dict(
        claims=[claim(CLAIM0, request(REQ0, CLASS_A, mode="All"))], classes=[A],
        slices=[slice_(SLICE1, NODE1, POOL1, DRIVER_A)], node=N1, expect=None),
    "all-devices-some-allocated": dict(
        claims=[claim(CLAIM0, request(REQ0, CLASS_A, mode="All"))], classes=[A], node=N1,
        allocated=[(DRIVER_A, POOL1, DEVICE1)],
        slices=[slice_(SLICE1, NODE1, POOL1, DRIVER_A, device(DEVICE1), device(DEVICE2))], expect=None),
    "all-devices-some-allocated-admin-access": dict(
        claims=[claim(CLAIM0, request(REQ0, CLASS_A, mode="All", admin=True))], classes=[A], node=N1,
        allocated=[(DRIVER_A, POOL1, DEVICE1)],
        slices=[slice_(SLICE1, NODE1, POOL1, DRIVER_A, device(DEVICE1), device(DEVICE2))],
        expect=[allocation(LOCAL1, result(REQ0, DRIVER_A, POOL1, DEVICE1, True),
                           result(REQ0, DRIVER_A, POOL1, DEVICE2, True))]),
    "all-devices-some-allocating-admin-access": dict(
        claims=[claim(CLAIM0, request(REQ0, CLASS_A, 1, admin=True), request(REQ1, CLASS_A, mode="All", admin=True))],
        classes=[A], node=N1, slices=[slice_(SLICE1, NODE1, POOL1, DRIVER_A, device(DEVICE1), device(DEVICE2))],
        expect=None),
    "count-devices-some-allocated-admin-access": dict(
        claims=[claim(CLAIM0, request(REQ0, CLASS_A, 2, admin=True))], classes=[A], node=N1,
        allocated=[(DRIVER_A, POOL1, DEVICE1)],
        slices=[slice_(SLICE1, NODE1, POOL1, DRIVER_A, device(DEVICE1), device(DEVICE2))],
        expect=[allocation(LOCAL1, result(REQ0, DRIVER_A, POOL1, DEVICE1, True),
                           result(REQ0, DRIVER_A, POOL1, DEVICE2, True))]),
    "separate-claims-share-device-admin-access": dict(
        claims=[claim(CLAIM0, request(REQ0, CLASS_A, 1, admin=True)), claim(CLAIM1, request(REQ0, CLASS_A, 1, admin=True))],
        classes=[A], node=N1, slices=[slice_(SLICE1, NODE1, POOL1, DRIVER_A, device(DEVICE1), device(DEVICE2))],
        expect=[allocation(LOCAL1, result(REQ0, DRIVER_A, POOL1, DEVICE1, True)),
                allocation(LOCAL1, result(REQ0, DRIVER_A, POOL1, DEVICE1, True))]),
    "admin-access-claims-device-allocating-for-non-admin-access": dict(
        claims=[claim_with_request(CLAIM0, REQ0, CLASS_A), claim(CLAIM1, request(REQ0, CLASS_A, 1, admin=True))],
        classes=[A], node=N1, slices=[slice_(SLICE1, NODE1, POOL1, DRIVER_A, device(DEVICE1), device(DEVICE2))],
        expect=[allocation(LOCAL1, result(REQ0, DRIVER_A, POOL1, DEVICE1)),
                allocation(LOCAL1, result(REQ0, DRIVER_A, POOL1, DEVICE1, True))]),
    "all-devices-slice-without-devices-prioritized-list": dict(
        claims=[claim(CLAIM0, first_available(REQ0, sub_request(SUB0, CLASS_A, mode="All"), sub_request(SUB1, CLASS_B, 1)))],
        classes=[A, B], node=N1,
        slices=[slice_(SLICE1, NODE1, POOL1, DRIVER_A), slice_one(SLICE2, NODE1, POOL2, DRIVER_B)],
        expect=[allocation(LOCAL1, result("req-0/subReq-1", DRIVER_B, POOL2, DEVICE1))]),
    "all-devices-some-allocated-prioritized-list": dict(
        claims=[claim(CLAIM0, first_available(REQ0, sub_request(SUB0, CLASS_A, mode="All"), sub_request(SUB1, CLASS_B, 1)))],
        classes=[A, B], node=N1, allocated=[(DRIVER_A, POOL1, DEVICE1)],
        slices=[slice_(SLICE1, NODE1, POOL1, DRIVER_A, device(DEVICE1), device(DEVICE2)),
                slice_one(SLICE2, NODE1, POOL2, DRIVER_B)],
        expect=[allocation(LOCAL1, result("req-0/subReq-1", DRIVER_B, POOL2, DEVICE1))]),
    "network-attached-device": dict(
        claims=[claim_with_request(CLAIM0, REQ0, CLASS_A)], classes=[A], node=N1,
        slices=[slice_one(SLICE1, node_label_selector("region", REGION1), POOL1, DRIVER_A)],
        expect=[allocation(node_label_selector("region", REGION1), result(REQ0, DRIVER_A, POOL1, DEVICE1))]),
    "unsuccessful-allocation-network-attached-device": dict(
        claims=[claim_with_request(CLAIM0, REQ0, CLASS_A)], classes=[A], node=node(NODE2, REGION2),
        slices=[slice_one(SLICE1, node_label_selector("region", REGION1), POOL1, DRIVER_A)], expect=None),
    "many-network-attached-devices": dict(
        claims=[claim(CLAIM0, request(REQ0, CLASS_A, 4))], classes=[A], node=N1,
        slices=[slice_one(SLICE1, node_label_selector("region", REGION1), POOL1, DRIVER_A),
                slice_one(SLICE1, "ALL", POOL2, DRIVER_A),
                slice_one(SLICE1, node_label_selector("planet", "earth"), POOL3, DRIVER_A),
                slice_one(SLICE1, local_node_selector(NODE1), POOL4, DRIVER_A)],
        expect=[allocation({"nodeSelectorTerms": [{
            "matchExpressions": [{"key": "region", "operator": "In", "values": [REGION1]},
                                 {"key": "planet", "operator": "In", "values": ["earth"]}],
            "matchFields": [{"key": "metadata.name", "operator": "In", "values": [NODE1]}]}]},
            result(REQ0, DRIVER_A, POOL1, DEVICE1), result(REQ0, DRIVER_A, POOL2, DEVICE1),
            result(REQ0, DRIVER_A, POOL3, DEVICE1), result(REQ0, DRIVER_A, POOL4, DEVICE1))]),
    "local-and-network-attached-devices": dict(
        claims=[claim(CLAIM0, request(REQ0, CLASS_A, 2))], classes=[A], node=N1,
        slices=[slice_one(SLICE1, node_label_selector("region", REGION1), POOL1, DRIVER_A),
                slice_one(SLICE1, NODE1, POOL2, DRIVER_A)],
        expect=[allocation(LOCAL1, result(REQ0, DRIVER_A, POOL1, DEVICE1), result(REQ0, DRIVER_A, POOL2, DEVICE1))]),
    "several-different-drivers": dict(
        claims=[claim_with_request(CLAIM0, REQ0, CLASS_A), claim_with_request(CLAIM0, REQ0, CLASS_B)],
        classes=[A, B], node=N1,
        slices=[slice_(SLICE1, NODE1, POOL1, DRIVER_A, device(DEVICE1), device(DEVICE2)),
                slice_one(SLICE1, NODE1, POOL1, DRIVER_B)],
        expect=[allocation(LOCAL1, result(REQ0, DRIVER_A, POOL1, DEVICE1)),
                allocation(LOCAL1, result(REQ0, DRIVER_B, POOL1, DEVICE1))]),
    "already-allocated-devices": dict(
        claims=[claim_with_request(CLAIM0, REQ0, CLASS_A)], classes=[A], node=N1,
        allocated=[(DRIVER_A, POOL1, DEVICE1), (DRIVER_A, POOL1, DEVICE2)],
        slices=[slice_one(SLICE1, NODE1, POOL1, DRIVER_A)], expect=None),
    "admin-access-disabled": dict(
        claims=[claim(CLAIM0, request(REQ0, CLASS_A, 1, admin=True))], classes=[A], node=N1,
        features=Features(admin_access=False), slices=[slice_one(SLICE1, NODE1, POOL1, DRIVER_A)],
        error="claim default/claim-0, request req-0: admin access is requested, but the feature is disabled"),
    "admin-access-enabled": dict(
        claims=[claim(CLAIM0, request(REQ0, CLASS_A, 1, admin=True))], classes=[A], node=N1,
        allocated=[(DRIVER_A, POOL1, DEVICE1), (DRIVER_A, POOL1, DEVICE2)],
        slices=[slice_one(SLICE1, NODE1, POOL1, DRIVER_A)],
        expect=[allocation(LOCAL1, result(REQ0, DRIVER_A, POOL1, DEVICE1, True))]),
    "with-constraint": dict(
        claims=[claim(CLAIM0, request(REQ0, CLASS_A, 1), request(REQ1, CLASS_A, 1),
                      constraints=[{"matchAttribute": a} for a in (INT_ATTR, VERSION_ATTR, STRING_ATTR, BOOL_ATTR)])],
        classes=[A], node=N1,
        slices=[slice_(SLICE1, NODE1, POOL1, DRIVER_A,
                       device(DEVICE1, attributes=attrs(driverVersion="1.0.0", numa=1, stringAttribute="s", boolAttribute=True)),
                       device(DEVICE2, attributes=attrs(driverVersion="1.0.0", numa=1, stringAttribute="s", boolAttribute=True)))],
        expect=[allocation(LOCAL1, result(REQ0, DRIVER_A, POOL1, DEVICE1), result(REQ1, DRIVER_A, POOL1, DEVICE2))]),
    "with-constraint-non-existent-attribute": dict(
        claims=[claim(CLAIM0, request(REQ0, CLASS_A, 1), constraints=[{"matchAttribute": "driver-a/NonExistentAttribute"}])],
        classes=[A], node=N1, slices=[slice_one(SLICE1, NODE1, POOL1, DRIVER_A)], expect=None),
    "with-constraint-not-matching-int-attribute": dict(
        claims=[claim(CLAIM0, request(REQ0, CLASS_A, 2), constraints=[{"matchAttribute": INT_ATTR}])],
        classes=[A, B], node=N1,
        slices=[slice_(SLICE1, NODE1, POOL1, DRIVER_A, device(DEVICE1, attributes=attrs(numa=1)),
                       device(DEVICE2, attributes=attrs(numa=2)))], expect=None),
    "with-constraint-not-matching-int-attribute-all-devices": dict(
        claims=[claim(CLAIM0, request(REQ0, CLASS_A, mode="All"), constraints=[{"matchAttribute": INT_ATTR}])],
        classes=[A, B], node=N1,
        slices=[slice_(SLICE1, NODE1, POOL1, DRIVER_A, device(DEVICE1, attributes=attrs(numa=1)),
                       device(DEVICE2, attributes=attrs(numa=2)))],
        error="claim default/claim-0, request req-0: cannot add device driver-a/pool-1/device-2 because a claim "
              "constraint would not be satisfied"),
    "with-constraint-not-matching-string-attribute": dict(
        claims=[claim(CLAIM0, request(REQ0, CLASS_A, 2), constraints=[{"matchAttribute": STRING_ATTR}])],
        classes=[A, B], node=N1,
        slices=[slice_(SLICE1, NODE1, POOL1, DRIVER_A, device(DEVICE1, attributes=attrs(stringAttribute="a")),
                       device(DEVICE2, attributes=attrs(stringAttribute="b")))], expect=None),
    "with-constraint-not-matching-bool-attribute": dict(
        claims=[claim(CLAIM0, request(REQ0, CLASS_A, 2), constraints=[{"matchAttribute": BOOL_ATTR}])],
        classes=[A, B], node=N1,
        slices=[slice_(SLICE1, NODE1, POOL1, DRIVER_A, device(DEVICE1, attributes=attrs(boolAttribute=True)),
                       device(DEVICE2, attributes=attrs(boolAttribute=False)))], expect=None),
    "with-constraint-not-matching-version-attribute": dict(
        claims=[claim(CLAIM0, request(REQ0, CLASS_A, 2), constraints=[{"matchAttribute": VERSION_ATTR}])],
        classes=[A, B], node=N1,
        slices=[slice_(SLICE1, NODE1, POOL1, DRIVER_A, device(DEVICE1, attributes=attrs(driverVersion="1.0.0")),
                       device(DEVICE2, attributes=attrs(driverVersion="2.0.0")))], expect=None),
    "with-constraint-for-request": dict(
        claims=[claim(CLAIM0, request(REQ0, CLASS_A, 1), request(REQ1, CLASS_A, 1),
                      constraints=[{"requests": [REQ0], "matchAttribute": VERSION_ATTR}])],
        classes=[A, B], node=N1,
        slices=[slice_(SLICE1, NODE1, POOL1, DRIVER_A, device(DEVICE1, attributes=attrs(driverVersion="1.0.0")),
                       device(DEVICE2, attributes=attrs(driverVersion="2.0.0")))],
        expect=[allocation(LOCAL1, result(REQ0, DRIVER_A, POOL1, DEVICE1), result(REQ1, DRIVER_A, POOL1, DEVICE2))]),
    "with-constraint-for-request-retry": dict(
        claims=[claim(CLAIM0, request(REQ0, CLASS_A, 1), request(REQ1, CLASS_A, 1),
                      constraints=[{"requests": [REQ0], "matchAttribute": VERSION_ATTR},
                                   {"matchAttribute": STRING_ATTR}])],
        classes=[A, B], node=N1,
        slices=[slice_(SLICE1, NODE1, POOL1, DRIVER_A,
                       device(DEVICE1, attributes=attrs(driverVersion="1.0.0", stringAttribute="a")),
                       device(DEVICE2, attributes=attrs(driverVersion="2.0.0", stringAttribute="b")),
                       device(DEVICE3, attributes=attrs(driverVersion="3.0.0", stringAttribute="b")))],
        expect=[allocation(LOCAL1, result(REQ0, DRIVER_A, POOL1, DEVICE2), result(REQ1, DRIVER_A, POOL1, DEVICE3))]),
    "with-class-device-config": dict(
        claims=[claim_with_request(CLAIM0, REQ0, CLASS_A)],
        classes=[device_class(CLASS_A, DRIVER_A, [opaque(DRIVER_A, "classAttribute")])], node=N1,
        slices=[slice_one(SLICE1, NODE1, POOL1, DRIVER_A)],
        expect=[allocation(LOCAL1, result(REQ0, DRIVER_A, POOL1, DEVICE1),
                           config=[{"source": "FromClass", **opaque(DRIVER_A, "classAttribute")}])]),
    "with-class-device-config-with-multiple-request-and-configs": dict(
        claims=[claim(CLAIM0, request(REQ0, CLASS_A, 1), request(REQ1, CLASS_A, 1), request(REQ2, CLASS_B, 1))],
        classes=[device_class(CLASS_A, DRIVER_A, [opaque(DRIVER_A, "classAttribute-A")]),
                 device_class(CLASS_B, DRIVER_B, [opaque(DRIVER_B, "classAttribute-B")])], node=N1,
        slices=[slice_(SLICE1, NODE1, POOL1, DRIVER_A, device(DEVICE0), device(DEVICE1)),
                slice_one(SLICE2, NODE1, POOL1, DRIVER_B)],
        expect=[allocation(LOCAL1, result(REQ0, DRIVER_A, POOL1, DEVICE0), result(REQ1, DRIVER_A, POOL1, DEVICE1),
                           result(REQ2, DRIVER_B, POOL1, DEVICE1),
                           # v1.37.2: each class's config once, naming its requests
                           config=[{"source": "FromClass", "requests": [REQ0, REQ1], **opaque(DRIVER_A, "classAttribute-A")},
                                   {"source": "FromClass", "requests": [REQ2], **opaque(DRIVER_B, "classAttribute-B")}])]),
    "with-claim-config-for-two-requests": dict(
        claims=[claim(CLAIM0, request(REQ0, CLASS_A, 1), request(REQ1, CLASS_A, 1), request(REQ2, CLASS_A, 1),
                      config=[{"requests": [REQ0, REQ1], **opaque(DRIVER_A, "deviceAttribute")}])],
        classes=[A], node=N1,
        slices=[slice_(SLICE1, NODE1, POOL1, DRIVER_A, device(DEVICE0), device(DEVICE1), device(DEVICE2))],
        expect=[allocation(LOCAL1, result(REQ0, DRIVER_A, POOL1, DEVICE0), result(REQ1, DRIVER_A, POOL1, DEVICE1),
                           result(REQ2, DRIVER_A, POOL1, DEVICE2),
                           config=[{"source": "FromClaim", "requests": [REQ0, REQ1], **opaque(DRIVER_A, "deviceAttribute")}])]),
    "claim-config-covering-all-requests-is-cleared": dict(
        claims=[claim(CLAIM0, first_available(REQ0, sub_request(SUB0, CLASS_A, 1), sub_request(SUB1, CLASS_B, 1)),
                      request(REQ1, CLASS_A, 1),
                      config=[{"requests": ["req-0/subReq-0", REQ1], **opaque(DRIVER_A, "all")}])],
        classes=[A, B], node=N1, slices=[slice_(SLICE1, NODE1, POOL1, DRIVER_A, device(DEVICE0), device(DEVICE1))],
        expect=[allocation(LOCAL1, result("req-0/subReq-0", DRIVER_A, POOL1, DEVICE0), result(REQ1, DRIVER_A, POOL1, DEVICE1),
                           config=[{"source": "FromClaim", **opaque(DRIVER_A, "all")}])]),
    "claim-with-device-config": dict(
        claims=[claim(CLAIM0, request(REQ0, CLASS_A, 1), config=[opaque(DRIVER_A, "deviceAttribute")])],
        classes=[A], node=N1, slices=[slice_one(SLICE1, NODE1, POOL1, DRIVER_A)],
        expect=[allocation(LOCAL1, result(REQ0, DRIVER_A, POOL1, DEVICE1),
                           config=[{"source": "FromClaim", **opaque(DRIVER_A, "deviceAttribute")}])]),
    "unknown-allocation-mode": dict(
        claims=[claim(CLAIM0, request(REQ0, CLASS_A, 1, mode="future-mode"))], classes=[A], node=N1,
        slices=[slice_one(SLICE1, NODE1, POOL1, DRIVER_A)], error="unsupported count mode future-mode"),
    "invalid-CEL-one-device": dict(
        claims=[claim(CLAIM0, request(REQ0, CLASS_A, 1, "noSuchVar"))], classes=[A], node=N1,
        slices=[slice_one(SLICE1, NODE1, POOL1, DRIVER_A)], error="undeclared reference"),
    "invalid-CEL-one-device-class": dict(
        claims=[claim_with_request(CLAIM0, REQ0, CLASS_A)],
        classes=[parse_device_class({"metadata": {"name": CLASS_A},
                                     "spec": {"selectors": [{"cel": {"expression": "noSuchVar"}}]}})],
        node=N1, slices=[slice_one(SLICE1, NODE1, POOL1, DRIVER_A)], error="undeclared reference"),
    "invalid-CEL-all-devices": dict(
        claims=[claim(CLAIM0, request(REQ0, CLASS_A, 1, "noSuchVar", mode="All"))], classes=[A], node=N1,
        slices=[slice_one(SLICE1, NODE1, POOL1, DRIVER_A)], error="undeclared reference"),
    "too-many-devices-single-request": dict(
        claims=[claim(CLAIM0, request(REQ0, CLASS_A, 500))], classes=[A], node=None, slices=[],
        error="exceeds the claim limit"),
    "many-devices-okay": dict(claims=[claim(CLAIM0, request(REQ0, CLASS_A, 32))], classes=[A], node=None, slices=[],
                              expect=None),
    "too-many-devices-total": dict(
        claims=[claim(CLAIM0, request(REQ0, CLASS_A, 32), request(REQ1, CLASS_A, 1))], classes=[A], node=N1,
        slices=[slice_(SLICE1, NODE1, POOL1, DRIVER_A, *(device(f"device-{i}") for i in range(33)))],
        error="exceeds the claim limit"),
    "prioritized-list-first-unavailable": dict(
        claims=[claim(CLAIM0, first_available(REQ0, sub_request(SUB0, CLASS_B, 1), sub_request(SUB1, CLASS_A, 1)))],
        classes=[A, B], node=N1, slices=[slice_one(SLICE1, NODE1, POOL1, DRIVER_A)],
        expect=[allocation(LOCAL1, result("req-0/subReq-1", DRIVER_A, POOL1, DEVICE1))]),
    "prioritized-list-non-available": dict(
        claims=[claim(CLAIM0, first_available(REQ0, sub_request(SUB0, CLASS_B, 2), sub_request(SUB1, CLASS_A, 2)))],
        classes=[A, B], node=N1,
        slices=[slice_one(SLICE1, NODE1, POOL1, DRIVER_A), slice_one(SLICE2, NODE1, POOL2, DRIVER_B)], expect=None),
    "prioritized-list-device-config": dict(
        claims=[claim(CLAIM0, first_available(REQ0, sub_request(SUB0, CLASS_A, 1), sub_request(SUB1, CLASS_B, 2)),
                      config=[{"requests": ["req-0/subReq-0"], **opaque(DRIVER_A, "foo")},
                              {"requests": ["req-0/subReq-1"], **opaque(DRIVER_B, "bar")}])],
        classes=[A, B], node=N1,
        slices=[slice_(SLICE1, NODE1, POOL1, DRIVER_B, device(DEVICE1), device(DEVICE2))],
        expect=[allocation(LOCAL1, result("req-0/subReq-1", DRIVER_B, POOL1, DEVICE1),
                           result("req-0/subReq-1", DRIVER_B, POOL1, DEVICE2),
                           # it applies to every request: "empty means all" (v1.37.2)
                           config=[{"source": "FromClaim", **opaque(DRIVER_B, "bar")}])]),
    "prioritized-list-class-config": dict(
        claims=[claim(CLAIM0, first_available(REQ0, sub_request(SUB0, CLASS_A, 2), sub_request(SUB1, CLASS_B, 2)))],
        classes=[device_class(CLASS_A, DRIVER_A, [opaque(DRIVER_A, "foo")]),
                 device_class(CLASS_B, DRIVER_B, [opaque(DRIVER_B, "bar")])], node=N1,
        slices=[slice_(SLICE1, NODE1, POOL1, DRIVER_B, device(DEVICE1), device(DEVICE2)),
                slice_(SLICE2, NODE1, POOL2, DRIVER_A, device(DEVICE3))],
        expect=[allocation(LOCAL1, result("req-0/subReq-1", DRIVER_B, POOL1, DEVICE1),
                           result("req-0/subReq-1", DRIVER_B, POOL1, DEVICE2),
                           config=[{"source": "FromClass", **opaque(DRIVER_B, "bar")}])]),
    "prioritized-list-subrequests-with-expressions": dict(
        claims=[claim(CLAIM0, request(REQ0, CLASS_A, 1, MEM.format("1Gi")),
                      first_available(REQ1, sub_request(SUB0, CLASS_A, 1, MEM.format("4Gi")),
                                      sub_request(SUB1, CLASS_A, 2, MEM.format("2Gi"))))],
        classes=[A], node=N1,
        slices=[slice_(SLICE1, NODE1, POOL1, DRIVER_A, device(DEVICE1, {"memory": "2Gi"}),
                       device(DEVICE2, {"memory": "2Gi"}), device(DEVICE3, {"memory": "1Gi"}))],
        expect=[allocation(LOCAL1, result(REQ0, DRIVER_A, POOL1, DEVICE3),
                           result("req-1/subReq-1", DRIVER_A, POOL1, DEVICE1),
                           result("req-1/subReq-1", DRIVER_A, POOL1, DEVICE2))]),
    "prioritized-list-subrequests-with-constraints-ref-parent-request": dict(
        claims=[claim(CLAIM0, request(REQ0, CLASS_A, 1, MEM.format("8Gi")),
                      first_available(REQ1, sub_request(SUB0, CLASS_A, 1, MEM.format("2Gi")),
                                      sub_request(SUB1, CLASS_A, 1, MEM.format("1Gi"))),
                      constraints=[{"requests": [REQ0, REQ1], "matchAttribute": VERSION_ATTR}])],
        classes=[A], node=N1,
        slices=[slice_(SLICE1, NODE1, POOL1, DRIVER_A, device(DEVICE1, {"memory": "8Gi"}, attrs(driverVersion="1.0.0"))),
                slice_(SLICE2, NODE1, POOL2, DRIVER_A, device(DEVICE2, {"memory": "2Gi"}, attrs(driverVersion="2.0.0")),
                       device(DEVICE3, {"memory": "1Gi"}, attrs(driverVersion="1.0.0")))],
        expect=[allocation(LOCAL1, result(REQ0, DRIVER_A, POOL1, DEVICE1),
                           result("req-1/subReq-1", DRIVER_A, POOL2, DEVICE3))]),
    "prioritized-list-subrequests-with-constraints-ref-sub-request": dict(
        claims=[claim(CLAIM0, request(REQ0, CLASS_A, 1, MEM.format("8Gi")),
                      first_available(REQ1, sub_request(SUB0, CLASS_A, 1, MEM.format("2Gi")),
                                      sub_request(SUB1, CLASS_A, 1, MEM.format("1Gi"))),
                      constraints=[{"requests": [REQ0, "req-1/subReq-0"], "matchAttribute": VERSION_ATTR}])],
        classes=[A], node=N1,
        slices=[slice_(SLICE1, NODE1, POOL1, DRIVER_A, device(DEVICE1, {"memory": "8Gi"}, attrs(driverVersion="1.0.0"))),
                slice_(SLICE2, NODE1, POOL2, DRIVER_A, device(DEVICE2, {"memory": "2Gi"}, attrs(driverVersion="2.0.0")))],
        expect=[allocation(LOCAL1, result(REQ0, DRIVER_A, POOL1, DEVICE1),
                           result("req-1/subReq-1", DRIVER_A, POOL2, DEVICE2))]),
    "prioritized-list-subrequests-with-allocation-mode-all": dict(
        claims=[claim(CLAIM0, first_available(REQ0, sub_request(SUB0, CLASS_A, mode="All"), sub_request(SUB1, CLASS_A, 1)))],
        classes=[A], node=N1, allocated=[(DRIVER_A, POOL1, DEVICE1)],
        slices=[slice_(SLICE1, NODE1, POOL1, DRIVER_A, device(DEVICE1), device(DEVICE2))],
        expect=[allocation(LOCAL1, result("req-0/subReq-1", DRIVER_A, POOL1, DEVICE2))]),
    "prioritized-list-allocation-mode-all-multiple-requests": dict(
        claims=[claim(CLAIM0, request(REQ0, CLASS_A, 1),
                      first_available(REQ1, sub_request(SUB0, CLASS_A, mode="All"), sub_request(SUB1, CLASS_A, 1)))],
        classes=[A], node=N1, slices=[slice_(SLICE1, NODE1, POOL1, DRIVER_A, device(DEVICE1), device(DEVICE2))],
        expect=[allocation(LOCAL1, result(REQ0, DRIVER_A, POOL1, DEVICE1),
                           result("req-1/subReq-1", DRIVER_A, POOL1, DEVICE2))]),
    "prioritized-list-disabled": dict(
        claims=[claim(CLAIM0, first_available(REQ0, sub_request(SUB0, CLASS_A, 1)))], classes=[A], node=N1,
        features=Features(prioritized_list=False), slices=[slice_one(SLICE1, NODE1, POOL1, DRIVER_A)],
        error="claim default/claim-0, request req-0: has subrequests, but the DRAPrioritizedList feature is disabled"),
    "prioritized-list-multi-request": dict(
        claims=[claim(CLAIM0, request(REQ1, CLASS_A, 1, MEM.format("8Gi")),
                      first_available(REQ0, sub_request(SUB0, CLASS_A, 1, MEM.format("8Gi")),
                                      sub_request(SUB1, CLASS_A, 1, MEM.format("4Gi"))))],
        classes=[A], node=N1,
        slices=[slice_(SLICE1, NODE1, POOL1, DRIVER_A, device(DEVICE1, {"memory": "8Gi"})),
                slice_(SLICE2, NODE1, POOL2, DRIVER_A, device(DEVICE2, {"memory": "4Gi"}))],
        expect=[allocation(LOCAL1, result(REQ1, DRIVER_A, POOL1, DEVICE1),
                           result("req-0/subReq-1", DRIVER_A, POOL2, DEVICE2))]),
    "prioritized-list-with-backtracking": dict(
        claims=[claim(CLAIM0, first_available(REQ0, sub_request(SUB0, CLASS_A, 1, MEM.format("8Gi")),
                                              sub_request(SUB1, CLASS_A, 1, MEM.format("4Gi"))),
                      request(REQ1, CLASS_A, 1, MEM.format("8Gi")))],
        classes=[A], node=N1,
        slices=[slice_(SLICE1, NODE1, POOL1, DRIVER_A, device(DEVICE1, {"memory": "8Gi"})),
                slice_(SLICE2, NODE1, POOL2, DRIVER_A, device(DEVICE2, {"memory": "4Gi"}))],
        expect=[allocation(LOCAL1, result("req-0/subReq-1", DRIVER_A, POOL2, DEVICE2),
                           result(REQ1, DRIVER_A, POOL1, DEVICE1))]),
    "prioritized-list-too-many-in-first-subrequest": dict(
        claims=[claim(CLAIM0, first_available(REQ0, sub_request(SUB0, CLASS_B, 500), sub_request(SUB1, CLASS_A, 1)))],
        classes=[A, B], node=N1, slices=[slice_one(SLICE1, NODE1, POOL1, DRIVER_A)],
        expect=[allocation(LOCAL1, result("req-0/subReq-1", DRIVER_A, POOL1, DEVICE1))]),
    # -- v1.37.2's default-on features (DRADeviceTaints, DRAPartitionableDevices,
    # DRADeviceBindingConditions): upstream's cases of the same names
    "tainted-two-devices": dict(
        claims=[claim_with_request(CLAIM0, REQ0, CLASS_A)], classes=[A], node=N1,
        slices=[slice_(SLICE1, NODE1, POOL1, DRIVER_A, device(DEVICE1, taints=[TAINT_NO_SCHEDULE]),
                       device(DEVICE2, taints=[TAINT_NO_EXECUTE]))],
        expect=None),
    "tainted-one-device-two-taints": dict(
        claims=[claim_with_request(CLAIM0, REQ0, CLASS_A)], classes=[A], node=N1,
        slices=[slice_(SLICE1, NODE1, POOL1, DRIVER_A, device(DEVICE1, taints=[TAINT_NO_SCHEDULE, TAINT_NO_EXECUTE]))],
        expect=None),
    "tainted-two-devices-tolerated": dict(
        claims=[claim(CLAIM0, request(REQ0, CLASS_A, 1, tolerations=[TOLERATION_NO_EXECUTE]))], classes=[A], node=N1,
        slices=[slice_(SLICE1, NODE1, POOL1, DRIVER_A, device(DEVICE1, taints=[TAINT_NO_SCHEDULE]),
                       device(DEVICE2, taints=[TAINT_NO_EXECUTE]))],
        expect=[allocation(LOCAL1, {**result(REQ0, DRIVER_A, POOL1, DEVICE2), "tolerations": [TOLERATION_NO_EXECUTE]})]),
    "tainted-no-effect": dict(
        claims=[claim_with_request(CLAIM0, REQ0, CLASS_A)], classes=[A], node=N1,
        slices=[slice_(SLICE1, NODE1, POOL1, DRIVER_A, device(DEVICE1, taints=[TAINT_NONE]))],
        expect=[allocation(LOCAL1, result(REQ0, DRIVER_A, POOL1, DEVICE1))]),
    "tainted-admin-access": dict(
        claims=[claim(CLAIM0, request(REQ0, CLASS_A, 1, admin=True))], classes=[A], node=N1,
        allocated=[(DRIVER_A, POOL1, DEVICE1), (DRIVER_A, POOL1, DEVICE2)],
        slices=[slice_(SLICE1, NODE1, POOL1, DRIVER_A, device(DEVICE1, taints=[TAINT_NO_SCHEDULE]))], expect=None),
    "tainted-all-devices-single": dict(
        claims=[claim(CLAIM0, request(REQ0, CLASS_A, mode="All"))], classes=[A], node=N1,
        slices=[slice_(SLICE1, NODE1, POOL1, DRIVER_A, device(DEVICE1, taints=[TAINT_NO_SCHEDULE]))], expect=None),
    "tainted-disabled": dict(
        claims=[claim_with_request(CLAIM0, REQ0, CLASS_A)], classes=[A], node=N1,
        features=Features(device_taints=False),
        slices=[slice_(SLICE1, NODE1, POOL1, DRIVER_A, device(DEVICE1, taints=[TAINT_NO_SCHEDULE]))],
        expect=[allocation(LOCAL1, result(REQ0, DRIVER_A, POOL1, DEVICE1))]),
    "partitionable-devices-single-device": dict(
        claims=[claim(CLAIM0, request(REQ0, CLASS_A, 1))], classes=[A], node=N1,
        slices=[slice_(SLICE1, NODE1, POOL1, DRIVER_A, device(DEVICE1, consumesCounters=[consumes("4Gi")]), count=2),
                counter_slice(SLICE2, NODE1, POOL1, DRIVER_A, "8Gi", count=2)],
        expect=[allocation(LOCAL1, result(REQ0, DRIVER_A, POOL1, DEVICE1))]),
    "partitionable-devices-multiple-devices-share-the-counters": dict(
        claims=[claim(CLAIM0, request(REQ0, CLASS_A, 2))], classes=[A], node=N1,
        slices=[slice_(SLICE1, NODE1, POOL1, DRIVER_A, device(DEVICE1, consumesCounters=[consumes("6Gi")]),
                       device(DEVICE2, consumesCounters=[consumes("4Gi")]), device(DEVICE3, consumesCounters=[consumes("2Gi")]),
                       count=2),
                counter_slice(SLICE2, NODE1, POOL1, DRIVER_A, "8Gi", count=2)],
        expect=[allocation(LOCAL1, result(REQ0, DRIVER_A, POOL1, DEVICE1), result(REQ0, DRIVER_A, POOL1, DEVICE3))]),
    "partitionable-devices-no-capacity-available": dict(
        claims=[claim(CLAIM0, request(REQ0, CLASS_A, 1))], classes=[A], node=N1, allocated=[(DRIVER_A, POOL1, DEVICE2)],
        slices=[slice_(SLICE1, NODE1, POOL1, DRIVER_A, device(DEVICE1, consumesCounters=[consumes("4Gi")]),
                       device(DEVICE2, consumesCounters=[consumes("16Gi")]), count=2),
                counter_slice(SLICE2, NODE1, POOL1, DRIVER_A, "18Gi", count=2)],
        expect=None),
    "partitionable-devices-overallocated-capacity-pool": dict(
        claims=[claim(CLAIM0, request(REQ0, CLASS_A, 1))], classes=[A], node=N1, allocated=[(DRIVER_A, POOL1, DEVICE2)],
        slices=[slice_(SLICE1, NODE1, POOL1, DRIVER_A, device(DEVICE1, consumesCounters=[consumes("4Gi")]),
                       device(DEVICE2, consumesCounters=[consumes("20Gi")]), count=2),
                counter_slice(SLICE2, NODE1, POOL1, DRIVER_A, "18Gi", count=2)],
        expect=None),
    "partitionable-devices-unknown-counter-set-is-an-invalid-pool": dict(
        claims=[claim(CLAIM0, request(REQ0, CLASS_A, 1))], classes=[A], node=N1,
        slices=[slice_(SLICE1, NODE1, POOL1, DRIVER_A, device(DEVICE1, consumesCounters=[consumes("4Gi", "other-set")]),
                       count=2),
                counter_slice(SLICE2, NODE1, POOL1, DRIVER_A, "8Gi", count=2)],
        error="invalid resource pools were encountered", failed_on_node=True),
    "partitionable-devices-disabled-device-consumes-counters": dict(
        claims=[claim(CLAIM0, request(REQ0, CLASS_A, 1))], classes=[A], node=N1,
        features=Features(partitionable_devices=False),
        slices=[slice_(SLICE1, NODE1, POOL1, DRIVER_A, device(DEVICE1, consumesCounters=[consumes("4Gi")]))],
        expect=None),
    "device-binding-conditions": dict(
        claims=[claim(CLAIM0, request(REQ0, CLASS_A, 1))], classes=[A], node=N1,
        slices=[slice_(SLICE1, NODE1, POOL1, DRIVER_A, device(DEVICE1, bindingConditions=["IsPrepare"],
                                                              bindingFailureConditions=["BindingFailed"]))],
        expect=[allocation(LOCAL1, {**result(REQ0, DRIVER_A, POOL1, DEVICE1), "bindingConditions": ["IsPrepare"],
                                    "bindingFailureConditions": ["BindingFailed"]})]),
    "binding-conditions-with-and-without": dict(
        claims=[claim(CLAIM0, request(REQ0, CLASS_A, 1), request(REQ1, CLASS_A, 1))], classes=[A], node=N1,
        slices=[slice_(SLICE1, NODE1, POOL1, DRIVER_A, device(DEVICE1),
                       device(DEVICE2, bindingConditions=["IsPrepare"], bindingFailureConditions=["BindingFailed"]))],
        expect=[allocation(LOCAL1, result(REQ0, DRIVER_A, POOL1, DEVICE1),
                           {**result(REQ1, DRIVER_A, POOL1, DEVICE2), "bindingConditions": ["IsPrepare"],
                            "bindingFailureConditions": ["BindingFailed"]})]),
    "binding-conditions-without-feature-gate": dict(
        claims=[claim(CLAIM0, request(REQ0, CLASS_A, 1))], classes=[A], node=N1,
        features=Features(device_binding=False),
        slices=[slice_(SLICE1, NODE1, POOL1, DRIVER_A, device(DEVICE1, bindingConditions=["IsPrepare"],
                                                              bindingFailureConditions=["BindingFailed"]))],
        expect=None),
    # a pool whose devices have binding conditions comes after the others (GatherPools)
    "binding-conditions-pool-last": dict(
        claims=[claim(CLAIM0, request(REQ0, CLASS_A, 1))], classes=[A], node=N1,
        slices=[slice_(SLICE1, NODE1, POOL1, DRIVER_A, device(DEVICE1, bindingConditions=["IsPrepare"])),
                slice_(SLICE2, NODE1, POOL2, DRIVER_A, device(DEVICE1))],
        expect=[allocation(LOCAL1, result(REQ0, DRIVER_A, POOL2, DEVICE1))]),
    # pools by (driver, pool) name and slices by name, whatever the order they were listed in
    "pools-and-slices-sorted": dict(
        claims=[claim(CLAIM0, request(REQ0, CLASS_A, 1))], classes=[A], node=N1,
        slices=[slice_("slice-b", NODE1, POOL2, DRIVER_A, device(DEVICE2), count=2),
                slice_("slice-a", NODE1, POOL2, DRIVER_A, device(DEVICE3), count=2),
                slice_(SLICE1, NODE1, POOL3, DRIVER_A, device(DEVICE1))],
        expect=[allocation(LOCAL1, result(REQ0, DRIVER_A, POOL2, DEVICE3))]),
    "distinct-attribute": dict(
        claims=[claim(CLAIM0, request(REQ0, CLASS_A, 2), constraints=[{"distinctAttribute": INT_ATTR}])],
        classes=[A], node=N1,
        slices=[slice_(SLICE1, NODE1, POOL1, DRIVER_A, device(DEVICE1, attributes=attrs(numa=1)),
                       device(DEVICE2, attributes=attrs(numa=1)), device(DEVICE3, attributes=attrs(numa=2)))],
        expect=[allocation(LOCAL1, result(REQ0, DRIVER_A, POOL1, DEVICE1), result(REQ0, DRIVER_A, POOL1, DEVICE3))]),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_allocator(name):
    case = CASES[name]
    kwargs = dict(allocated=case.get("allocated", ()), features=case.get("features", Features()))
    if "error" in case:
        with pytest.raises(AllocatorError) as excinfo:
            run(case["claims"], case["classes"], case["slices"], case["node"], **kwargs)
        assert case["error"] in str(excinfo.value)
        assert isinstance(excinfo.value, FailedAllocationOnNode) == case.get("failed_on_node", False)
        return
    got = run(case["claims"], case["classes"], case["slices"], case["node"], **kwargs)
    assert got == case["expect"]


def test_selector_runtime_error_names_the_claim():
    bad = claim(CLAIM0, request(REQ0, CLASS_A, 1, 'device.attributes["driver-a"].missing == 1'))
    with pytest.raises(AllocatorError) as excinfo:
        run([bad], [A], [slice_one(SLICE1, NODE1, POOL1, DRIVER_A)], N1)
    # v1.37.2 selectorsMatch names the device; cel.EnhanceRuntimeError adds the hint
    assert str(excinfo.value) == ("claim default/claim-0: selector #0 on device driver-a/pool-1/device-1: CEL runtime "
                                  "error: no such key: missing. consider using CEL optional chaining (.? followed by "
                                  "orValue()) or guarding the check with has() for optional fields")


def test_selector_runtime_error_names_the_class():
    cls = parse_device_class({"metadata": {"name": CLASS_A},
                              "spec": {"selectors": [{"cel": {"expression": 'device.attributes["driver-a"].x > 1'}}]}})
    with pytest.raises(AllocatorError) as excinfo:
        run([claim_with_request(CLAIM0, REQ0, CLASS_A)], [cls], [slice_one(SLICE1, NODE1, POOL1, DRIVER_A)], N1)
    assert str(excinfo.value).startswith("class class-a: selector #0 on device driver-a/pool-1/device-1: CEL runtime error")


@pytest.mark.parametrize("name", sorted(CASES))
def test_no_claims_answers_as_the_search(name):
    """``Allocate`` with no claims (Filter when every claim of the pod reuses a pending allocation:
    PodGroup members sharing the group's claim) answers without gathering the node's pools: the
    same answer as the search over the case's slices (none to allocate: no results, even on nodes
    whose pools are invalid or incomplete), and the same timeout past the deadline."""
    from fastsched.dra.allocator import AllocationTimeout, _Allocation

    case = CASES[name]
    by_name = {c.name: c for c in case["classes"]}
    alloc = Allocator(case.get("features", Features()), set(case.get("allocated", ())), by_name.get, case["slices"])
    searched = _Allocation(alloc, case["node"], [], None).run()
    got = alloc.allocate(case["node"], [])
    assert got == searched == []
    assert got is not None
    for answer in (lambda: alloc.allocate(case["node"], [], deadline=0.0),
                   lambda: _Allocation(alloc, case["node"], [], 0.0).run()):
        with pytest.raises(AllocationTimeout):
            answer()
