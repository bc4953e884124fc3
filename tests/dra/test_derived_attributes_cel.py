"""DRADerivedAttributes' CEL side (alpha, off at v1.37.2; its validation and the allocator's side:
``test_derived_attributes_validation.py`` and ``test_derived_attributes_allocator.py``).

Upstream's tables transcribed (``dynamic-resource-allocation/cel/compile_test.go`` v0.37.2):

* ``TestCompileDerivedAttributes``: ``validateOutputType`` for derived attributes, against
  :func:`fastsched.api.celcost.output_type_error` (the static type check of the cost estimator);
* ``TestEvaluateDerivedAttributes``: ``EvaluateDerivedAttribute`` / ``valToDeviceAttribute``,
  against :func:`fastsched.api.cel.derived_attribute` (upstream compiles these with
  DRAListTypeAttributes on).
"""
from __future__ import annotations

import pytest

from fastsched.api.cel import CELError, compile_expression, derived_attribute, device_input
from fastsched.api.celcost import output_type_error
from fastsched.api.resource import parse_resource_slice

COMPILE_CASES = {
    # name: (expression, list types on, stored expression, expected error ("" when valid))
    "valid-bool": ("true", False, False, ""),
    "valid-bool-list-when-listType-enabled": ("[true, false]", True, False, ""),
    "valid-int": ("1", False, False, ""),
    "valid-int-list-when-listType-enabled": ("[1, 2, 3]", True, False, ""),
    "valid-string": ('"fish"', False, False, ""),
    "valid-string-list-when-listType-enabled": ('["a", "b"]', True, False, ""),
    "valid-semver": ('semver("1.0.0")', False, False, ""),
    "valid-semver-list-when-listType-enabled": ('[semver("1.0.0"), semver("2.0.0")]', True, False, ""),
    "valid-any": ('device.attributes["dra.example.com"]["numa"]', False, False, ""),
    "valid-any-list-when-listType-enabled": ('[device.attributes["dra.example.com"]["numa"]]', True, False, ""),
    "valid-dyn": ('dyn("foo")', False, False, ""),
    "valid-dyn-list-when-listType-enabled": ('[dyn("foo"), dyn(1)]', True, False, ""),
    "valid-int-list-in-stored-expression-despite-disabled-feature-gate": ("[1, 2, 3]", False, True, ""),
    "invalid-map": ("device.attributes", False, False,
                    "must evaluate to a primitive scalar (string, integer, boolean, semver), "
                    "not map(string, map(string, google.protobuf.Any))"),
    "invalid-int-list-when-listType-disabled": ("[1, 2, 3]", False, False,
                                                "must evaluate to a primitive scalar (string, integer, boolean, "
                                                "semver), not list(int)"),
    "invalid-list-of-maps": ("[device.attributes]", True, False,
                             "must evaluate to a primitive scalar (string, integer, boolean, semver) or a list of "
                             "these scalars, not list(map(string, map(string, dyn)))"),
    "invalid-null-literal": ("null", True, False,
                             "must evaluate to a primitive scalar (string, integer, boolean, semver) or a list of "
                             "these scalars, not null_type"),
}


@pytest.mark.parametrize("name", COMPILE_CASES)
def test_compile_derived_attributes(name):
    expression, list_types, stored, expected = COMPILE_CASES[name]
    assert output_type_error(expression, list_types, derived_attribute=True, stored=stored) == expected


def _mock_device() -> dict:
    s = parse_resource_slice({"metadata": {"name": "s"}, "spec": {
        "driver": "driver-a", "nodeName": "n", "pool": {"name": "p", "resourceSliceCount": 1},
        "devices": [{"name": "d", "attributes": {
            "bool-attr": {"bool": True}, "int-attr": {"int": 42}, "str-attr": {"string": "hello"},
            "ver-attr": {"version": "1.0.0"}, "bool-list-attr": {"bools": [True, False]},
            "int-list-attr": {"ints": [1, 2, 3]}, "str-list-attr": {"strings": ["hello", "world"]},
            "ver-list-attr": {"versions": ["1.0.0", "2.0.0"]}}}]}})
    return device_input("driver-a", s.devices[0])


_EMPTY = {"driver": "", "allowMultipleAllocations": False, "attributes": {}, "capacity": {}}
D = 'device.attributes["driver-a"]'
EVALUATE_CASES = {
    # name: (expression, on the mock device (else an empty one), expected (kind, value) or ("error", substring))
    "bool-scalar-literal": ("true", False, ("bool", True)),
    "int-scalar-literal": ("42", False, ("int", 42)),
    "string-scalar-literal": ('"hello"', False, ("string", "hello")),
    "semver-scalar-literal": ('semver("1.0.0")', False, ("version", "1.0.0")),
    "bool-scalar-device": (f'{D}["bool-attr"]', True, ("bool", True)),
    "int-scalar-device": (f'{D}["int-attr"]', True, ("int", 42)),
    "string-scalar-device": (f'{D}["str-attr"]', True, ("string", "hello")),
    "semver-scalar-device": (f'{D}["ver-attr"]', True, ("version", "1.0.0")),
    "bool-list-literal": ("[true, false]", False, ("bools", (True, False))),
    "int-list-literal": ("[1, 2, 3]", False, ("ints", (1, 2, 3))),
    "string-list-literal": ('["hello", "world"]', False, ("strings", ("hello", "world"))),
    "semver-list-literal": ('[semver("1.0.0"), semver("2.0.0")]', False, ("versions", ("1.0.0", "2.0.0"))),
    "bool-list-device": (f'{D}["bool-list-attr"]', True, ("bools", (True, False))),
    "int-list-device": (f'{D}["int-list-attr"]', True, ("ints", (1, 2, 3))),
    "string-list-device": (f'{D}["str-list-attr"]', True, ("strings", ("hello", "world"))),
    "semver-list-device": (f'{D}["ver-list-attr"]', True, ("versions", ("1.0.0", "2.0.0"))),
    "runtime-error-heterogeneous-list-semver": (f'[dyn({D}["ver-attr"]), dyn({D}["str-attr"])]', True,
                                                ("error", "expected list element at index 1 to be semver, got string")),
    "runtime-error-heterogeneous-list-bool": (f'[dyn({D}["bool-attr"]), dyn({D}["str-attr"])]', True,
                                              ("error", "expected list element at index 1 to be bool, got string")),
    "runtime-error-heterogeneous-list-int": (f'[dyn({D}["int-attr"]), dyn({D}["str-attr"])]', True,
                                             ("error", "expected list element at index 1 to be int, got string")),
    "runtime-error-heterogeneous-list-string": (f'[dyn({D}["str-attr"]), dyn({D}["int-attr"])]', True,
                                                ("error", "expected list element at index 1 to be string, got int64")),
    "runtime-error-attribute-not-found": (f'{D}["non-existent-attr"]', True, ("error", "no such key")),
    "runtime-error-type-mismatch-op": (f'{D}["int-attr"] + "hello"', True, ("error", "no such overload")),
    "runtime-error-null-dynamic": ("dyn(null)", True, ("error", "unsupported CEL return type: structpb.NullValue")),
}


@pytest.mark.parametrize("name", EVALUATE_CASES)
def test_evaluate_derived_attributes(name):
    expression, on_device, expected = EVALUATE_CASES[name]
    compiled = compile_expression(expression, True)
    assert compiled.error == ""
    device = _mock_device() if on_device else _EMPTY
    if expected[0] == "error":
        with pytest.raises(CELError) as excinfo:
            derived_attribute(compiled, device)
        assert expected[1] in str(excinfo.value)
    else:
        assert derived_attribute(compiled, device) == expected


# -- the API without the gate: decoded, dropped on create; the allocator refuses them -------------
_CLAIM = """
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: c, namespace: default}
spec:
  devices:
    requests:
    - {name: a, exactly: {deviceClassName: gpu, derivedAttributes: [{name: derived/numa, expression: 'device.driver'}]}}
    - {name: b, firstAvailable: [{name: s, deviceClassName: gpu, derivedAttributes: [{name: derived/numa, expression: '1'}]},
                                 {name: t, deviceClassName: gpu}]}
    constraints: [{matchAttribute: derived/numa}]
"""
_TEMPLATE = """
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata: {name: t, namespace: default}
spec:
  spec:
    devices:
      requests:
      - {name: a, exactly: {deviceClassName: gpu, derivedAttributes: [{name: derived/numa, expression: 'device.driver'}]}}
"""


def test_decoded_as_the_api_declares_them():
    import yaml

    from fastsched.api.resource import parse_resource_claim

    rc = parse_resource_claim(yaml.safe_load(_CLAIM))
    assert rc.requests[0].exactly.derived_attributes == (("derived/numa", "device.driver"),)
    assert rc.requests[1].first_available[0].derived_attributes == (("derived/numa", "1"),)
    assert rc.requests[1].first_available[1].derived_attributes == ()


def test_dropped_on_create_without_the_gate():
    """``dropDisabledDRADerivedAttributesFields`` (``pkg/api/resourceclaimspec``), for claims and
    claim templates: gone from the object and its manifest, with no unknown-field warning."""
    import warnings

    from fastsched.api import load_objects

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        rc, tmpl = load_objects(_CLAIM + "---" + _TEMPLATE)
    assert rc.requests[0].exactly.derived_attributes == ()
    assert [sub.derived_attributes for sub in rc.requests[1].first_available] == [(), ()]
    assert "derivedAttributes" not in str(rc.manifest)
    assert tmpl.requests[0].exactly.derived_attributes == ()
    assert "derivedAttributes" not in str(tmpl.claim_spec) and "derivedAttributes" not in str(tmpl.manifest)
    assert rc.requests[0].exactly.device_class_name == "gpu" and rc.requests[1].first_available[1].name == "t"


@pytest.mark.parametrize("list_type_attributes", [False, True])  # incubating, experimental variant
def test_allocator_cannot_handle_them(list_type_attributes):
    """Every variant's ``validateDeviceRequest`` refuses a request with derived attributes before
    anything else when it cannot handle them (the experimental one without DRADerivedAttributes)."""
    from fastsched.dra.allocator import Allocator, AllocatorError, Features

    from .builders import CLAIM0, CLASS_A, DRIVER_A, NODE1, POOL1, REGION1, REQ0, SLICE1, claim, device
    from .builders import device_class, node, request, slice_

    req = request(REQ0, CLASS_A, 1)
    req["exactly"]["derivedAttributes"] = [{"name": "derived/numa", "expression": "device.driver"}]
    the_claim = claim(CLAIM0, req, constraints=[{"matchAttribute": "derived/numa"}])
    features = Features(list_type_attributes=list_type_attributes)
    assert features.variant == ("experimental" if list_type_attributes else "incubating")
    allocator = Allocator(features, set(), {CLASS_A: device_class(CLASS_A, DRIVER_A)}.get,
                          [slice_(SLICE1, NODE1, POOL1, DRIVER_A, device("device-1"))])
    with pytest.raises(AllocatorError) as excinfo:
        allocator.allocate(node(NODE1, REGION1), [the_claim])
    assert str(excinfo.value) == (f"claim default/{CLAIM0}, request {REQ0}: cannot handle request with derived "
                                  f"attributes, the feature is disabled")
