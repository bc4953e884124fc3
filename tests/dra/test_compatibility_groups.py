"""DRADeviceCompatibilityGroups (alpha, off at v1.37.2): which devices drawing from one counter set
may be allocated together.

Upstream's tables transcribed (v0.37.2): ``structured/internal/experimental/
compatibility_groups_test.go`` (the intersection's ``admits`` and ``add``) and the
``compatibility-groups-*`` rows of ``allocatortesting/allocator_testing.go`` (``TestAllocator``),
against :class:`fastsched.dra.allocator.Allocator`; the API's declarative rules
(``zz_generated.validations.go``) and the ResourceSlice strategy's drop.
"""
from __future__ import annotations

import pytest

from fastsched.api.resource import parse_resource_slice
from fastsched.api.strategy import prepare_for_create, validate
from fastsched.dra.allocator import Allocator, Features, _groups_add, _groups_admit
from fastsched.features import FeatureGates

from .builders import (CLAIM0, CLAIM1, CLASS_A, DEVICE1, DEVICE2, DEVICE3, DRIVER_A, NODE1, POOL1, POOL2, REGION1,
                       REQ0, REQ1, SUB0, SUB1, allocation, claim, device_class, first_available, local_node_selector,
                       node, request, result, sub_request)
from .test_consumable_capacity import SHARE, _fixed_share_ids, class_multi
from .test_consumable_capacity import device as cc_device
from .test_consumable_capacity import req as cc_req


# -- compatibility_groups_test.go ----------------------------------------------------------------
def gs(*groups: str) -> frozenset:
    return frozenset(groups)


ADMITS = {
    "empty-intersection-admits-grouped": (None, gs("mig"), True),
    "empty-intersection-admits-nil": (None, gs(), True),
    "no-group-members-admit-no-group-candidate (nil-vs-nil)": (_groups_add(None, gs()), gs(), True),
    "no-group-members-reject-grouped-candidate (nil-vs-set)": (_groups_add(None, gs()), gs("mig"), False),
    "grouped-members-reject-no-group-candidate (set-vs-nil)": (_groups_add(None, gs("mig")), gs(), False),
    "grouped-members-admit-overlapping-candidate (set-vs-set)": (_groups_add(None, gs("mig")), gs("mig"), True),
    "grouped-members-reject-disjoint-candidate": (_groups_add(None, gs("mig")), gs("vgpu"), False),
    "multi-group-candidate-overlaps": (_groups_add(None, gs("foo", "foobar")), gs("bar", "foobar"), True),
    "multi-group-candidate-disjoint": (_groups_add(None, gs("foo", "foobar")), gs("baz"), False),
}


@pytest.mark.parametrize("name", sorted(ADMITS))
def test_intersection_admits(name):
    state, candidate, want = ADMITS[name]
    assert _groups_admit(state, candidate) is want


def test_intersection_rolling():
    state = None
    assert _groups_admit(state, gs("foo", "foobar"))
    state = _groups_add(state, gs("foo", "foobar"))
    assert _groups_admit(state, gs("bar", "foobar"))
    state = _groups_add(state, gs("bar", "foobar"))
    assert state == (False, gs("foobar"))
    assert not _groups_admit(state, gs("baz"))
    assert _groups_admit(state, gs("qux", "foobar"))


def test_intersection_no_groups_stacking():
    state = None
    for _ in range(3):
        assert _groups_admit(state, gs())
        state = _groups_add(state, gs())
    assert not _groups_admit(state, gs("mig"))


# -- allocator_testing.go -------------------------------------------------------------------------
CS1, CS2, CAP0 = "counter-set-1", "counter-set-2", "capacity-0"
ON = Features(compatibility_groups=True)
OFF = Features(compatibility_groups=False)


def use(counter_set: str, value: str, *groups: str) -> dict:
    """``deviceCounterConsumption[WithGroups]``."""
    c: dict = {"counterSet": counter_set, "counters": {CAP0: {"value": value}}}
    if groups:
        c["compatibilityGroups"] = list(groups)
    return c


def dev(name: str, *uses: dict, **fields) -> dict:
    return {"name": name, "consumesCounters": list(uses), **fields}


def devices_slice(name: str, pool: str, count: int, *devices: dict):
    return parse_resource_slice({"metadata": {"name": name}, "spec": {
        "driver": DRIVER_A, "nodeName": NODE1, "pool": {"name": pool, "generation": 1, "resourceSliceCount": count},
        "devices": list(devices)}})


def counters_slice(name: str, pool: str, count: int, *sets: str):
    return parse_resource_slice({"metadata": {"name": name}, "spec": {
        "driver": DRIVER_A, "nodeName": NODE1, "pool": {"name": pool, "generation": 1, "resourceSliceCount": count},
        "sharedCounters": [{"name": s, "counters": {CAP0: {"value": "4"}}} for s in sets]}})


def ok(*pairs: tuple, pool: str = POOL1) -> list:
    return [allocation(local_node_selector(NODE1), *(result(r, DRIVER_A, pool, d) for r, d in pairs))]


TAINT = {"key": "key1", "value": "value1", "effect": "NoSchedule"}
TWO_REQUESTS = claim(CLAIM0, request(REQ0, CLASS_A, 1), request(REQ1, CLASS_A, 1))
ONE_REQUEST = claim(CLAIM0, request(REQ0, CLASS_A, 1))

#: name -> (features, claims, slices, allocated devices, expected)
CASES = {
    "compatibility-groups-compatible": (
        ON, [TWO_REQUESTS],
        [devices_slice("slice-1", POOL1, 2, dev(DEVICE1, use(CS1, "2", "mig")), dev(DEVICE2, use(CS1, "2", "mig"))),
         counters_slice("slice-2", POOL1, 2, CS1)], (),
        ok((REQ0, DEVICE1), (REQ1, DEVICE2))),
    "compatibility-groups-incompatible": (
        ON, [TWO_REQUESTS],
        [devices_slice("slice-1", POOL1, 2, dev(DEVICE1, use(CS1, "2", "mig")), dev(DEVICE2, use(CS1, "2", "vgpu"))),
         counters_slice("slice-2", POOL1, 2, CS1)], (), None),
    "compatibility-groups-taint-rollback": (
        ON, [ONE_REQUEST],
        [devices_slice("slice-1", POOL1, 2, dev(DEVICE1, use(CS1, "2", "mig"), taints=[TAINT]),
                       dev(DEVICE2, use(CS1, "2", "vgpu"))),
         counters_slice("slice-2", POOL1, 2, CS1)], (),
        ok((REQ0, DEVICE2))),
    "compatibility-groups-incompatible-with-allocated-peer": (
        ON, [ONE_REQUEST],
        [devices_slice("slice-1", POOL1, 2, dev(DEVICE1, use(CS1, "1", "mig")), dev(DEVICE2, use(CS1, "1", "vgpu"))),
         counters_slice("slice-2", POOL1, 2, CS1)], ((DRIVER_A, POOL1, DEVICE1),), None),
    "compatibility-groups-compatible-with-allocated-peer": (
        ON, [ONE_REQUEST],
        [devices_slice("slice-1", POOL1, 2, dev(DEVICE1, use(CS1, "1", "mig")), dev(DEVICE2, use(CS1, "1", "mig"))),
         counters_slice("slice-2", POOL1, 2, CS1)], ((DRIVER_A, POOL1, DEVICE1),),
        ok((REQ0, DEVICE2))),
    "compatibility-groups-disabled-skips-grouped-pool": (
        OFF, [ONE_REQUEST],
        [devices_slice("slice-1", POOL1, 2, dev(DEVICE1, use(CS1, "2", "mig"))),
         counters_slice("slice-2", POOL1, 2, CS1),
         devices_slice("slice-3", POOL2, 2, dev(DEVICE2, use(CS2, "2"))),
         counters_slice("slice-4", POOL2, 2, CS2)], (),
        ok((REQ0, DEVICE2), pool=POOL2)),
    "compatibility-groups-disabled-skips-ungrouped-device-in-grouped-pool": (
        OFF, [ONE_REQUEST],
        [devices_slice("slice-1", POOL1, 3, dev(DEVICE1, use(CS1, "1", "mig"))),
         devices_slice("slice-2", POOL1, 3, dev(DEVICE2, use(CS1, "1"))),
         counters_slice("slice-3", POOL1, 3, CS1)], (), None),
    "compatibility-groups-multiple-counter-sets": (
        ON, [TWO_REQUESTS],
        [devices_slice("slice-1", POOL1, 2, dev(DEVICE1, use(CS1, "2", "mig")), dev(DEVICE2, use(CS2, "2", "vgpu"))),
         counters_slice("slice-2", POOL1, 2, CS1, CS2)], (),
        ok((REQ0, DEVICE1), (REQ1, DEVICE2))),
    "compatibility-groups-multiple-counter-sets-spanning-device": (
        ON, [TWO_REQUESTS],
        [devices_slice("slice-1", POOL1, 2, dev(DEVICE1, use(CS1, "1", "mig")),
                       dev(DEVICE2, use(CS1, "1", "vgpu"), use(CS2, "1", "vgpu"))),
         counters_slice("slice-2", POOL1, 2, CS1, CS2)], (), None),
    "compatibility-groups-with-prioritized-list": (
        ON, [claim(CLAIM0, request(REQ0, CLASS_A, 1),
                   first_available(REQ1, sub_request(SUB0, CLASS_A, 2), sub_request(SUB1, CLASS_A, 1)))],
        [devices_slice("slice-1", POOL1, 2, dev(DEVICE1, use(CS1, "1", "mig")), dev(DEVICE2, use(CS1, "1", "mig")),
                       dev(DEVICE3, use(CS1, "1", "vgpu"))),
         counters_slice("slice-2", POOL1, 2, CS1)], (),
        ok((REQ0, DEVICE1), (f"{REQ1}/{SUB1}", DEVICE2))),
    "compatibility-groups-multiple-claims": (
        ON, [claim(CLAIM0, request(REQ0, CLASS_A, 1)), claim(CLAIM1, request(REQ0, CLASS_A, 1))],
        [devices_slice("slice-1", POOL1, 2, dev(DEVICE1, use(CS1, "1", "mig")), dev(DEVICE2, use(CS1, "1", "mig"))),
         counters_slice("slice-2", POOL1, 2, CS1)], (),
        ok((REQ0, DEVICE1)) + ok((REQ0, DEVICE2))),
    "compatibility-groups-multiple-claims-incompatible": (
        ON, [claim(CLAIM0, request(REQ0, CLASS_A, 1)), claim(CLAIM1, request(REQ0, CLASS_A, 1))],
        [devices_slice("slice-1", POOL1, 2, dev(DEVICE1, use(CS1, "1", "mig")), dev(DEVICE2, use(CS1, "1", "vgpu"))),
         counters_slice("slice-2", POOL1, 2, CS1)], (), None),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_allocator(name):
    features, claims, slices, allocated, expected = CASES[name]
    classes = {CLASS_A: device_class(CLASS_A, DRIVER_A)}
    allocator = Allocator(features, set(allocated), classes.get, slices)
    assert allocator.allocate(node(NODE1, REGION1), claims) == expected


def test_compatibility_groups_with_consumable_capacity():
    """compatibility-groups-with-consumable-capacity: req1 does not fit on device1 (req0's share
    took its capacity) and is refused on device2 (disjoint group on the same counter set)."""
    mig, vgpu = use(CS1, "1", "mig"), use(CS1, "1", "vgpu")
    slices = [devices_slice("slice-1", POOL1, 2, cc_device(DEVICE1, consumes=[mig], from_counters=True, multi=True),
                            cc_device(DEVICE2, consumes=[vgpu], from_counters=True, multi=True),
                            cc_device(DEVICE3, consumes=[mig], from_counters=True, multi=True)),
              counters_slice("slice-2", POOL1, 2, CS1)]
    the_claim = claim(CLAIM0, cc_req(REQ0, 1, "1"), cc_req(REQ1, 1, "1"))
    classes = {CLASS_A: class_multi(True)}
    answer = Allocator(ON, set(), classes.get, slices).allocate(node(NODE1, REGION1), [the_claim])
    share = {"shareID": SHARE, "consumedCapacity": {CAP0: "1"}}
    assert _fixed_share_ids(answer) == [allocation(local_node_selector(NODE1),
                                                   {**result(REQ0, DRIVER_A, POOL1, DEVICE1), **share},
                                                   {**result(REQ1, DRIVER_A, POOL1, DEVICE3), **share})]


def test_variant():
    assert ON.variant == "experimental" and OFF.variant == "incubating"


# -- API --------------------------------------------------------------------------------------------
GATE_ON = FeatureGates({"DRADeviceCompatibilityGroups": True})


def _slice_with(groups):
    return devices_slice("s", POOL1, 1, dev(DEVICE1, {**use(CS1, "1"), "compatibilityGroups": groups}))


def _errors(rs, gates=GATE_ON) -> list[str]:
    return [str(e) for e in validate(prepare_for_create(rs, gates), gates)]


def test_validation():
    path = "spec.devices[0].consumesCounters[0].compatibilityGroups"
    assert _errors(_slice_with(["mig", "vgpu"])) == []
    assert _errors(_slice_with(["a", "b", "c"])) == [f"{path}: Too many: 3: must have at most 2 items"]
    assert _errors(_slice_with(["mig", "mig"])) == [f'{path}[1]: Duplicate value: "mig"']
    (error,) = _errors(_slice_with(["Mig"]))
    assert error.startswith(f'{path}[0]: Invalid value: "Mig": a lowercase RFC 1123 label must consist of')


def test_dropped_without_the_gate():
    dropped = prepare_for_create(_slice_with(["mig"]), FeatureGates())
    assert not dropped.uses_compatibility_groups
    assert "compatibilityGroups" not in dropped.devices[0].consumes_counters[0]
    kept = prepare_for_create(_slice_with(["mig"]), GATE_ON)
    assert kept.uses_compatibility_groups and kept.devices[0].consumes_counters[0]["compatibilityGroups"] == ["mig"]


def test_gate_is_switchable():
    assert FeatureGates("DRADeviceCompatibilityGroups=true").enabled("DRADeviceCompatibilityGroups")
