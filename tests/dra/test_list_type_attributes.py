"""DRAListTypeAttributes (alpha, off at v1.37.2): list-valued device attributes.

Upstream's tables transcribed (v0.37.2 / v1.37.2):

* ``dynamic-resource-allocation/cel/compile_test.go`` (``testcases``): the list-type rows, CEL
  lists and ``includes()`` (declared only with the gate);
* ``structured/internal/allocatortesting/allocator_testing.go`` (``TestAllocator``): the
  ``list-attributes-*`` and ``numanode-*`` rows, against :class:`fastsched.dra.allocator.Allocator`
  with ``Features(list_type_attributes=...)`` (upstream runs them on the experimental variant);
* ``pkg/apis/resource/validation`` (``validateDeviceAttribute``, ``numEntriesDeviceAttribute``,
  ``haveListAttributes``) and ``pkg/registry/resource/resourceslice/strategy.go``
  (``dropDisableDRAListTypeAttributesFields``).
"""
from __future__ import annotations

import pytest

from fastsched.api.cel import CELError, compile_error, compile_expression, device_input
from fastsched.api.resource import parse_resource_slice
from fastsched.api.strategy import prepare_for_create, validate
from fastsched.dra.allocator import Allocator, AllocatorError, Features
from fastsched.features import FeatureGates

from .builders import (CLAIM0, CLASS_A, DEVICE0, DEVICE1, DEVICE2, DEVICE3, DRIVER_A, NODE1, POOL1, REGION1, REQ0,
                       REQ1, REQ2, SLICE1, allocation, claim, device, device_class, local_node_selector, node,
                       request, result, slice_)

DEVICE4 = "device-4"
DRA = "dra.example.com"


# -- cel/compile_test.go ------------------------------------------------------------------------
def _input(attributes: dict) -> dict:
    s = parse_resource_slice({"metadata": {"name": "s"}, "spec": {
        "driver": DRA, "nodeName": "n", "pool": {"name": "p", "resourceSliceCount": 1},
        "devices": [{"name": "d", "attributes": attributes}]}})
    return device_input(DRA, s.devices[0])


A = f'device.attributes["{DRA}"]'
ON = True
#: name -> (list types on, expression, attributes, expected match or ("error", substring))
CEL_CASES = {
    "includes-function-can-evaluate": (ON, f'{A}.name.includes("fish")', {"name": {"strings": ["fish", "bird"]}}, True),
    "list-of-bool": (False, f"{A}.names.size() == 2", {"names": {"bools": [True, False]}}, True),
    "list-of-int": (False, f"{A}.names.size() == 2", {"names": {"ints": [1, 2]}}, True),
    "list-of-string": (False, f"{A}.names.size() == 2", {"names": {"strings": ["fish", "bird"]}}, True),
    "list-of-semver": (False, f"{A}.names.size() == 2", {"names": {"versions": ["1.0.0", "2.0.0"]}}, True),
    "macro-on-list-of-int": (ON, f"{A}.names.exists(x, x > 0)", {"names": {"ints": [1, 2]}}, True),
    "macro-on-list-of-string": (ON, f'{A}.names.all(x, x != "")', {"names": {"strings": ["fish", "bird"]}}, True),
    "macro-on-list-of-semver": (ON, f'{A}.names.all(x, x.isGreaterThan(semver("0.0.1")))',
                                {"names": {"versions": ["1.0.0", "2.0.0"]}}, True),
    "list-result-type-causes-match-error": (False, f"{A}.names", {"names": {"strings": ["fish", "bird"]}},
                                            ("error", "CEL result of type list could not be converted to bool")),
    "includes-function-compilation-and-eval-success": (ON, f'{A}.attr.includes("fish")', {"attr": {"string": "fish"}},
                                                       True),
    "includes-function-on-bool-scalar-positive": (ON, f"{A}.name.includes(true)", {"name": {"bool": True}}, True),
    "includes-function-on-bool-scalar-negative": (ON, f"{A}.name.includes(true)", {"name": {"bool": False}}, False),
    "includes-function-on-bool-list-positive": (ON, f"{A}.name.includes(true)", {"name": {"bools": [True, False]}},
                                                True),
    "includes-function-on-bool-list-negative": (ON, f"{A}.name.includes(false)", {"name": {"bools": [True, True]}},
                                                False),
    "includes-function-on-int-scalar-positive": (ON, f"{A}.name.includes(1)", {"name": {"int": 1}}, True),
    "includes-function-on-int-scalar-negative": (ON, f"{A}.name.includes(1)", {"name": {"int": 2}}, False),
    "includes-function-on-int-list-positive": (ON, f"{A}.name.includes(1)", {"name": {"ints": [1, 2]}}, True),
    "includes-function-on-int-list-negative": (ON, f"{A}.name.includes(3)", {"name": {"ints": [1, 2]}}, False),
    "includes-function-on-string-scalar-positive": (ON, f'{A}.name.includes("fish")', {"name": {"string": "fish"}},
                                                    True),
    "includes-function-on-string-scalar-negative": (ON, f'{A}.name.includes("bird")', {"name": {"string": "fish"}},
                                                    False),
    "includes-function-on-string-list-positive": (ON, f'{A}.name.includes("fish")',
                                                  {"name": {"strings": ["fish", "bird"]}}, True),
    "includes-function-on-string-list-negative": (ON, f'{A}.name.includes("cat")',
                                                  {"name": {"strings": ["fish", "bird"]}}, False),
    "includes-function-on-semver-scalar-positive": (ON, f'{A}.name.includes(semver("1.0.0"))',
                                                    {"name": {"version": "1.0.0"}}, True),
    "includes-function-on-semver-scalar-negative": (ON, f'{A}.name.includes(semver("2.0.0"))',
                                                    {"name": {"version": "1.0.0"}}, False),
    "includes-function-on-semver-list-positive": (ON, f'{A}.name.includes(semver("1.0.0"))',
                                                  {"name": {"versions": ["1.0.0", "2.0.0"]}}, True),
    "includes-function-on-semver-list-negative": (ON, f'{A}.name.includes(semver("3.0.0"))',
                                                  {"name": {"versions": ["1.0.0", "2.0.0"]}}, False),
    "includes-function-on-very-long-list-positive": (ON, f'{A}.name.includes("value-48")',
                                                     {"name": {"strings": [f"value-{i}" for i in range(48)]}}, False),
    "in-operator-on-list": (False, f"1 in {A}.names", {"names": {"ints": [1, 2, 3]}}, True),
    # (fastsched) bools and ints never equal each other, in lists either
    "includes-int-in-bool-list": (ON, f"{A}.name.includes(1)", {"name": {"bools": [True]}}, False),
    "includes-bool-in-int-list": (ON, f"{A}.name.includes(true)", {"name": {"ints": [1]}}, False),
}


@pytest.mark.parametrize("name", sorted(CEL_CASES))
def test_cel(name):
    list_types, expression, attributes, expected = CEL_CASES[name]
    compiled = compile_expression(expression, list_types)
    assert compiled.error == ""
    if isinstance(expected, tuple):
        with pytest.raises(CELError) as excinfo:
            compiled.matches(_input(attributes))
        assert expected[1] in str(excinfo.value)
    else:
        assert compiled.matches(_input(attributes)) is expected


def test_includes_is_undeclared_without_the_gate():
    # includes-function-compilation-error
    assert "undeclared reference to 'includes'" in compile_error(f'{A}.attr.includes("fish")')
    assert compile_error(f'{A}.attr.includes("fish")', True) == ""


def test_an_attribute_without_a_value_is_a_cel_error():
    # getAttributeValue: "unsupported attribute value" (an attribute validation would refuse)
    with pytest.raises(CELError, match="attribute name: unsupported attribute value"):
        compile_expression(f'device.driver == "{DRA}"').matches(_input({"name": {}}))


# -- allocator_testing.go -----------------------------------------------------------------------
STRING_ATTR, INT_ATTR = f"{DRIVER_A}/stringAttribute", f"{DRIVER_A}/numa"
BOOL_ATTR, VERSION_ATTR = f"{DRIVER_A}/boolAttribute", f"{DRIVER_A}/driverVersion"
NUMA_NODE_ATTR = "resource.kubernetes.io/numaNode"
LIST = Features(list_type_attributes=True)
SCALAR = Features(list_type_attributes=False)


def dev(name: str, attr: str, **value) -> dict:
    return device(name, attributes={attr: value})


def one_claim(constraint: dict, *requests: dict):
    return claim(CLAIM0, *requests, constraints=[constraint])


def match(attr: str) -> dict:
    return {"matchAttribute": attr}


def distinct(attr: str, *requests: str) -> dict:
    c: dict = {"distinctAttribute": attr}
    if requests:
        c["requests"] = list(requests)
    return c


def ok(*devices: str, requests: tuple | None = None) -> list:
    reqs = requests or (REQ0,) * len(devices)
    return [allocation(local_node_selector(NODE1), *(result(r, DRIVER_A, POOL1, d) for r, d in zip(reqs, devices)))]


S = "stringAttribute"
#: name -> (features, claim, devices, expected: results, None, or ("error", substring))
ALLOC_CASES = {
    "list-attributes-match-constaint-scalar-string-values": (
        LIST, one_claim(match(STRING_ATTR), request(REQ0, CLASS_A, 2)),
        [dev(DEVICE1, S, string="value1"), dev(DEVICE2, S, string="value1")], ok(DEVICE1, DEVICE2)),
    "list-attributes-match-constaint-list-of-string-values-with-common-elements": (
        LIST, one_claim(match(STRING_ATTR), request(REQ0, CLASS_A, 2)),
        [dev(DEVICE1, S, strings=["value1", "value2", "value3"]), dev(DEVICE2, S, strings=["value2", "value3", "value4"])],
        ok(DEVICE1, DEVICE2)),
    "list-attributes-match-constaint-list-of-string-values-with-partially-common-elements": (
        LIST, one_claim(match(STRING_ATTR), request(REQ0, CLASS_A, 3)),
        [dev(DEVICE1, S, strings=["value1", "value2"]), dev(DEVICE2, S, strings=["value2", "value3"]),
         dev(DEVICE3, S, strings=["value3", "value1"])], None),
    "list-attributes-match-constraint-backtrack-needs-intersection-restore": (
        LIST, one_claim(match(STRING_ATTR), request(REQ0, CLASS_A, 3)),
        [dev(DEVICE1, S, strings=["value1", "value2"]), dev(DEVICE2, S, strings=["value1"]),
         dev(DEVICE3, S, strings=["value2"]), dev(DEVICE4, S, strings=["value2"])],
        ok(DEVICE1, DEVICE3, DEVICE4)),
    "list-attributes-match-constaint-list-of-string-values-without-common-elements": (
        LIST, one_claim(match(STRING_ATTR), request(REQ0, CLASS_A, 1), request(REQ0, CLASS_A, 1)),
        [dev(DEVICE1, S, strings=["value1", "value2"]), dev(DEVICE2, S, strings=["value3", "value4"])], None),
    "list-attributes-match-constaint-mixed-scalar-and-list-of-string-values-with-common-elements": (
        LIST, one_claim(match(STRING_ATTR), request(REQ0, CLASS_A, 2)),
        [dev(DEVICE1, S, string="value1"), dev(DEVICE2, S, strings=["value1", "value2"])], ok(DEVICE1, DEVICE2)),
    "list-attributes-match-constaint-mixed-scalar-and-list-of-string-values-with-partially-common-elements": (
        LIST, one_claim(match(STRING_ATTR), request(REQ0, CLASS_A, 3)),
        [dev(DEVICE1, S, string="value1"), dev(DEVICE2, S, strings=["value1", "value2"]),
         dev(DEVICE3, S, strings=["value2", "value3"])], None),
    "list-attributes-match-constaint-mixed-scalar-and-list-of-string-values-without-common-elements": (
        LIST, one_claim(match(STRING_ATTR), request(REQ0, CLASS_A, 2)),
        [dev(DEVICE1, S, string="value1"), dev(DEVICE2, S, strings=["value2", "value3"])], None),
    "list-attributes-match-constaint-list-of-int-values-with-common-elements": (
        LIST, one_claim(match(INT_ATTR), request(REQ0, CLASS_A, 2)),
        [dev(DEVICE1, "numa", ints=[0, 1, 2]), dev(DEVICE2, "numa", ints=[1, 2, 3])], ok(DEVICE1, DEVICE2)),
    "numanode-matchattribute-overlapping-lists-are-co-placed": (
        LIST, one_claim(match(NUMA_NODE_ATTR), request(REQ0, CLASS_A, 2)),
        [dev(DEVICE1, NUMA_NODE_ATTR, ints=[4]), dev(DEVICE2, NUMA_NODE_ATTR, ints=[4, 5, 6, 7])],
        ok(DEVICE1, DEVICE2)),
    "numanode-matchattribute-disjoint-lists-are-not-allocated": (
        LIST, one_claim(match(NUMA_NODE_ATTR), request(REQ0, CLASS_A, 2)),
        [dev(DEVICE1, NUMA_NODE_ATTR, ints=[0]), dev(DEVICE2, NUMA_NODE_ATTR, ints=[4, 5, 6, 7])], None),
    "list-attributes-match-constaint-list-of-bool-values-with-common-elements": (
        LIST, one_claim(match(BOOL_ATTR), request(REQ0, CLASS_A, 2)),
        [dev(DEVICE1, "boolAttribute", bools=[True, False]), dev(DEVICE2, "boolAttribute", bools=[True])],
        ok(DEVICE1, DEVICE2)),
    "list-attributes-match-constaint-list-of-version-values-with-common-elements": (
        LIST, one_claim(match(VERSION_ATTR), request(REQ0, CLASS_A, 2)),
        [dev(DEVICE1, "driverVersion", versions=["1.0.0", "1.1.0", "2.0.0"]),
         dev(DEVICE2, "driverVersion", versions=["1.1.0", "2.0.0", "2.1.0"])], ok(DEVICE1, DEVICE2)),
    "list-attributes-match-constaint-with-empty-or-unknown-type": (
        LIST, one_claim(match(STRING_ATTR), request(REQ0, CLASS_A, 2)),
        [device(DEVICE1, attributes={S: {}}), dev(DEVICE2, S, strings=[])],
        ("error", "unsupported attribute value")),
    "list-attributes-disabled-match-constraint-with-lists": (
        SCALAR, one_claim(match(STRING_ATTR), request(REQ0, CLASS_A, 2)),
        [dev(DEVICE1, S, strings=["value1", "value2", "value3"]), dev(DEVICE2, S, strings=["value2", "value3", "value4"])],
        None),
    "list-attributes-distinct-constraint-scalar-string-values-all-distinct": (
        LIST, one_claim(distinct(STRING_ATTR), request(REQ0, CLASS_A, 2)),
        [dev(DEVICE1, S, string="value1"), dev(DEVICE2, S, string="value2")], ok(DEVICE1, DEVICE2)),
    "list-attributes-distinct-constraint-scalar-string-values-not-distinct": (
        LIST, one_claim(distinct(STRING_ATTR), request(REQ0, CLASS_A, 2)),
        [dev(DEVICE1, S, string="value1"), dev(DEVICE2, S, string="value1")], None),
    "list-attributes-distinct-constraint-single-request-count-3-not-distinct": (
        LIST, one_claim(distinct(STRING_ATTR), request(REQ0, CLASS_A, 3)),
        [dev(DEVICE1, S, string="value1"), dev(DEVICE2, S, string="value2"), dev(DEVICE3, S, string="value1")], None),
    "list-attributes-distinct-constraint-single-request-count-3-all-distinct": (
        LIST, one_claim(distinct(STRING_ATTR), request(REQ0, CLASS_A, 3)),
        [dev(DEVICE1, S, string="value1"), dev(DEVICE2, S, string="value2"), dev(DEVICE3, S, string="value3")],
        ok(DEVICE1, DEVICE2, DEVICE3)),
    "list-attributes-distinct-constraint-list-of-string-values-all-distinct": (
        LIST, one_claim(distinct(STRING_ATTR), request(REQ0, CLASS_A, 2)),
        [dev(DEVICE1, S, strings=["value1", "value2"]), dev(DEVICE2, S, strings=["value2", "value3"]),
         dev(DEVICE3, S, strings=["value3", "value4"])], ok(DEVICE1, DEVICE3)),
    "list-attributes-distinct-constraint-list-of-string-values-with-common-elements": (
        LIST, one_claim(distinct(STRING_ATTR), request(REQ0, CLASS_A, 2)),
        [dev(DEVICE1, S, strings=["value1", "value2", "value3"]), dev(DEVICE2, S, strings=["value2", "value4", "value5"])],
        None),
    "list-attributes-distinct-constraint-mixed-scalar-and-list-all-distinct": (
        LIST, one_claim(distinct(STRING_ATTR), request(REQ0, CLASS_A, 2)),
        [dev(DEVICE1, S, string="value1"), dev(DEVICE2, S, strings=["value1", "value2"]),
         dev(DEVICE3, S, strings=["value2", "value3"])], ok(DEVICE1, DEVICE3)),
    "list-attributes-distinct-constraint-mixed-scalar-and-list-with-common-elements": (
        LIST, one_claim(distinct(STRING_ATTR), request(REQ0, CLASS_A, 2)),
        [dev(DEVICE1, S, string="value1"), dev(DEVICE2, S, strings=["value1", "value2"])], None),
    "list-attributes-distinct-constraint-list-of-int-values-all-distinct": (
        LIST, one_claim(distinct(INT_ATTR), request(REQ0, CLASS_A, 2)),
        [dev(DEVICE1, "numa", ints=[0, 1]), dev(DEVICE2, "numa", ints=[1, 2]), dev(DEVICE3, "numa", ints=[2, 3])],
        ok(DEVICE1, DEVICE3)),
    "list-attributes-distinct-constraint-list-of-bool-values-all-distinct": (
        LIST, one_claim(distinct(BOOL_ATTR), request(REQ0, CLASS_A, 2)),
        [dev(DEVICE1, "boolAttribute", bools=[True]), dev(DEVICE2, "boolAttribute", bools=[True, False]),
         dev(DEVICE3, "boolAttribute", bools=[False])], ok(DEVICE1, DEVICE3)),
    "list-attributes-distinct-constraint-list-of-version-values-all-distinct": (
        LIST, one_claim(distinct(VERSION_ATTR), request(REQ0, CLASS_A, 2)),
        [dev(DEVICE1, "driverVersion", versions=["1.0.0", "1.1.0"]),
         dev(DEVICE2, "driverVersion", versions=["1.1.0", "2.0.0"]),
         dev(DEVICE3, "driverVersion", versions=["2.0.0", "2.1.0"])], ok(DEVICE1, DEVICE3)),
    "list-attributes-distinct-constaint-with-empty-or-unknown-type": (
        LIST, one_claim(distinct(VERSION_ATTR), request(REQ0, CLASS_A, 2)),
        [dev(DEVICE1, "driverVersion", versions=[]), device(DEVICE2, attributes={"driverVersion": {}})],
        ("error", "unsupported attribute value")),
    "list-attributes-disabled-distinct-constraint-with-lists": (
        SCALAR, one_claim(distinct(STRING_ATTR), request(REQ0, CLASS_A, 2)),
        [dev(DEVICE1, S, strings=["value1", "value2", "value3"]), dev(DEVICE2, S, strings=["value2", "value3", "value4"])],
        None),
    "list-attributes-distinct-constraint-backtrack-needs-remove": (
        LIST, one_claim(distinct(STRING_ATTR, REQ0, REQ1, REQ2), request(REQ0, CLASS_A, 1), request(REQ1, CLASS_A, 1),
                        request(REQ2, CLASS_A, 1)),
        [dev(DEVICE1, S, strings=["value1", "value2", "value3"]), dev(DEVICE2, S, strings=["value3", "value4", "value5"]),
         dev(DEVICE3, S, strings=["value1", "value2"]), dev(DEVICE4, S, strings=["value3", "value4"]),
         dev(DEVICE0, S, strings=["value5", "value6"])],
        ok(DEVICE3, DEVICE4, DEVICE0, requests=(REQ0, REQ1, REQ2))),
}


@pytest.mark.parametrize("name", sorted(ALLOC_CASES))
def test_allocator(name):
    features, the_claim, devices, expected = ALLOC_CASES[name]
    classes = {CLASS_A: device_class(CLASS_A, DRIVER_A)}
    allocator = Allocator(features, set(), classes.get, [slice_(SLICE1, NODE1, POOL1, DRIVER_A, *devices)])
    if isinstance(expected, tuple):
        with pytest.raises(AllocatorError) as excinfo:
            allocator.allocate(node(NODE1, REGION1), [the_claim])
        assert expected[1] in str(excinfo.value)
        return
    assert allocator.allocate(node(NODE1, REGION1), [the_claim]) == expected


def test_variant():
    """``NewAllocator``: any alpha allocator feature selects the experimental variant."""
    assert Features().variant == "incubating"
    assert LIST.variant == "experimental"


def test_includes_in_a_claim_selector_follows_the_allocator_features():
    """The allocator compiles selectors in the environment of its features: without the gate,
    ``includes`` is undeclared (a compile error of the cycle)."""
    the_claim = claim(CLAIM0, request(REQ0, CLASS_A, 1, f'device.attributes["{DRIVER_A}"].{S}.includes("value2")'))
    classes = {CLASS_A: device_class(CLASS_A, DRIVER_A)}
    slices = [slice_(SLICE1, NODE1, POOL1, DRIVER_A, dev(DEVICE1, S, strings=["value1"]),
                     dev(DEVICE2, S, strings=["value2", "value3"]))]
    assert Allocator(LIST, set(), classes.get, slices).allocate(node(NODE1, REGION1), [the_claim]) == ok(DEVICE2)
    with pytest.raises(AllocatorError, match="undeclared reference to 'includes'"):
        Allocator(SCALAR, set(), classes.get, slices).allocate(node(NODE1, REGION1), [the_claim])


# -- API: validation and the gated drop -----------------------------------------------------------
def _slice(attributes: dict, n: int = 1):
    return parse_resource_slice({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": "s"},
                                 "spec": {"driver": DRA, "nodeName": "n",
                                          "pool": {"name": "p", "generation": 1, "resourceSliceCount": 1},
                                          "devices": [{"name": f"d{i}", "attributes": attributes} for i in range(n)]}})


GATE_ON = FeatureGates({"DRAListTypeAttributes": True})


def _errors(obj, gates=GATE_ON) -> list[str]:
    return [str(e) for e in validate(prepare_for_create(obj, gates), gates)]


def test_validation_of_list_attributes():
    assert _errors(_slice({"a": {"ints": [1, 2]}, "b": {"strings": ["x"]}, "c": {"bools": [True]},
                           "v": {"versions": ["1.0.0"]}})) == []
    assert _errors(_slice({"a": {"ints": []}})) == [
        "spec.devices[0].attributes[a].ints: Invalid value: []: must not be empty if specified"]
    assert _errors(_slice({"v": {"versions": ["1.0.0", "01.0.0"]}})) == [
        'spec.devices[0].attributes[v].versions[1]: Invalid value: "01.0.0": must be a string compatible with '
        "semver.org spec 2.0.0"]
    assert _errors(_slice({"s": {"strings": ["x" * 65]}})) == [
        "spec.devices[0].attributes[s].strings[0]: Too long: may not be more than 64 bytes"]
    assert _errors(_slice({"s": {"string": "x" * 65}})) == [
        "spec.devices[0].attributes[s].string: Too long: may not be more than 64 bytes"]
    assert _errors(_slice({"a": {"int": 1, "ints": [1]}})) == [
        'spec.devices[0].attributes[a]: Invalid value: {"int":1,"ints":[1]}: exactly one value must be specified']
    assert _errors(_slice({"a": {}})) == [
        'spec.devices[0].attributes[a]: Invalid value: "": exactly one value must be specified']
    # numEntriesDeviceAttribute: list items count one by one (48 at most per device)
    assert _errors(_slice({"a": {"ints": list(range(40))}, "b": {"strings": [str(i) for i in range(9)]}})) == [
        "spec.devices[0]: Invalid value: 49: the total number of attribute values must not exceed 48"]
    # haveListAttributes: at most 64 devices in the slice
    assert _errors(_slice({"a": {"ints": [1]}}, 65)) == [
        "spec.devices: Too many: 65: must have at most 64 items"]
    assert _errors(_slice({"a": {"int": 1}}, 65)) == []


def test_list_fields_dropped_without_the_gate():
    """``dropDisableDRAListTypeAttributesFields``: an attribute left without a value fails
    validation; one with a scalar besides keeps the scalar."""
    off = FeatureGates()
    assert _errors(_slice({"a": {"ints": [1, 2]}}), off) == [
        'spec.devices[0].attributes[a]: Invalid value: "": exactly one value must be specified']
    kept = prepare_for_create(_slice({"a": {"int": 3, "ints": [1, 2]}}), off)
    assert kept.devices[0].attributes["a"].kind == "int" and kept.devices[0].attributes["a"].value == 3
    assert "ints" not in kept.manifest["spec"]["devices"][0]["attributes"]["a"]
    assert _errors(kept, off) == []
    unchanged = _slice({"a": {"int": 3}})
    assert prepare_for_create(unchanged, off) is unchanged


def test_includes_in_claims_and_classes_needs_the_gate():
    from fastsched.api.resource import parse_device_class, parse_resource_claim

    expression = f'device.attributes["{DRA}"].models.includes("a")'
    cls = parse_device_class({"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": "c"},
                              "spec": {"selectors": [{"cel": {"expression": expression}}]}})
    rc = parse_resource_claim({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
                               "metadata": {"name": "c", "namespace": "default"},
                               "spec": {"devices": {"requests": [{"name": "r", "exactly": {
                                   "deviceClassName": "c", "selectors": [{"cel": {"expression": expression}}]}}]}}})
    for obj in (cls, rc):
        assert _errors(obj) == []
        (error,) = _errors(obj, FeatureGates())
        assert "compilation failed: ERROR: <input>:1:1: undeclared reference to 'includes'" in error


def test_gate_is_switchable():
    assert FeatureGates("DRAListTypeAttributes=true").enabled("DRAListTypeAttributes")


def test_manifests_with_list_attributes_load_with_the_gate_only():
    """The decoder knows the list fields (strictly: no unknown field); without the gate the API
    server's drop leaves the attribute without a value, which validation refuses."""
    from fastsched.api.load import load_objects
    from fastsched.api.validation import ValidationError

    manifest = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": "s"},
                "spec": {"driver": DRA, "nodeName": "n", "pool": {"name": "p", "generation": 1, "resourceSliceCount": 1},
                         "devices": [{"name": "d", "attributes": {"numas": {"ints": [0, 1]}}}]}}
    (rs,) = load_objects([manifest], strict=True, feature_gates=GATE_ON)
    assert rs.devices[0].attributes["numas"].value == (0, 1)
    with pytest.raises(ValidationError, match=r"attributes\[numas\]: Invalid value: \"\": exactly one value"):
        load_objects([manifest], strict=True)


def test_dra_backed_scoring_compiles_class_selectors_with_the_gate():
    """NodeResourcesFit's DRA-backed scoring (``DRAScoreState._compute``): upstream's Fit builds its
    CEL cache with ``EnableListTypeAttributes: fts.EnableDRAListTypeAttributes`` (fit.go), so with
    the gate a class selector using ``includes()`` counts the node's matching devices; without it
    the selector does not compile and the resource is not scored by DRA (0, 0)."""
    from types import SimpleNamespace

    from fastsched.api.resource import parse_device_class
    from fastsched.dra.allocator import SelectorCache
    from fastsched.plugins.noderesources.dra_extended import DRAScoreState

    s = parse_resource_slice({"metadata": {"name": "s"}, "spec": {
        "driver": DRA, "nodeName": "n", "pool": {"name": "p", "resourceSliceCount": 1},
        "devices": [{"name": f"d{i}", "attributes": {"models": {"strings": models}}}
                    for i, models in enumerate((["a100", "h100"], ["h100"], ["a100"]))]}})
    device_class = parse_device_class({"metadata": {"name": "gpu"}, "spec": {
        "selectors": [{"cel": {"expression": f'{A}.models.includes("a100")'}}],
        "extendedResourceName": "example.com/gpu"}})
    manager = SimpleNamespace(allocated_devices=lambda: {(DRA, "p", "d2")},
                              allocated_state=lambda: SimpleNamespace(shared_devices=None, aggregated_capacity=None),
                              slices=lambda: [s], selector_cache=SelectorCache())
    resolver = SimpleNamespace(get_device_class=lambda name: device_class if name == "example.com/gpu" else None)
    node = SimpleNamespace(name="n")
    on = DRAScoreState(manager, resolver, list_type_attributes=True)
    off = DRAScoreState(manager, resolver, list_type_attributes=False)
    assert on.totals(node, "example.com/gpu") == (2, 1)  # d0 and d2 include a100; d2 is allocated
    assert off.totals(node, "example.com/gpu") == (0, 0)
