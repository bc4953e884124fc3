"""DRADerivedAttributes' API validation (``validateDeviceDerivedAttributes`` and the claim's cost
budget, v1.37.2 ``pkg/apis/resource/validation/validation.go``, plus the declarative rules of
``zz_generated.validations.go``).

The rows of ``validation_resourceclaim_test.go`` (``TestValidateClaim``) from
"derived-attributes-valid" to "derived-attributes-list-type-enabled" are transcribed as they are
(expressions, costs and cel-go's compile error included).
"""
from __future__ import annotations

import copy

import pytest

from fastsched.api.resource import parse_resource_claim, parse_resource_claim_template, validate_resource_claim
from fastsched.api.resource import validate_resource_claim_template
from fastsched.util.field import FieldError, FieldPath

GOOD, GOOD2, NS = "foo", "bar", "ns"
NUMA = 'device.attributes["dra.example.com"]["numa"]'
_TEN = "[1, 2, 3, 4, 5, 6, 7, 8, 9, 10]"
# 5 nested .all() over 10 elements: 855,551 per expression (two of them exceed the claim's 1,000,000)
COST_5 = f"{_TEN}.all(x, {_TEN}.all(y, {_TEN}.all(z, {_TEN}.all(z2, {_TEN}.all(z3, int('1'.find('[0-9]*')) < 100)))))"
COST_7 = (f"{_TEN}.all(x, {_TEN}.all(y, {_TEN}.all(z, {_TEN}.all(z2, {_TEN}.all(z3, {_TEN}.all(z4, "
          f"{_TEN}.all(z5, int('1'.find('[0-9]*')) < 100)))))))")

REQ0 = FieldPath("spec").child("devices").child("requests").index(0)
ATTR0 = REQ0.child("exactly", "derivedAttributes").index(0)
ATTR1 = REQ0.child("exactly", "derivedAttributes").index(1)
UNREFERENCED = "must be referenced by at least one matchAttribute or distinctAttribute constraint targeting this request"


def _exactly(name=GOOD, derived=None):
    body = {"deviceClassName": GOOD, "allocationMode": "ExactCount", "count": 1}
    if derived is not None:
        body["derivedAttributes"] = [{"name": n, "expression": e} for n, e in derived]
    return {"name": name, "exactly": body}


def _claim(requests, constraints=()):
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim", "metadata": {"name": GOOD, "namespace": NS},
            "spec": {"devices": {"requests": list(requests), "constraints": list(constraints)}}}


def _match(attr, *requests):
    c = {"matchAttribute": attr}
    if requests:
        c["requests"] = list(requests)
    return c


def _one(expression, name="derived/sharedNumaNode"):
    """testClaim(validClaimSpec) with one derived attribute on request 0, matched there."""
    return _claim([_exactly(derived=[(name, expression)])], [_match(name, GOOD)])


CASES = {
    # name: (claim manifest, DRAListTypeAttributes, expected errors)
    "derived-attributes-valid": (_one(NUMA), False, []),
    "derived-attributes-valid-dotted-domain": (_one(NUMA, "dra.example.com/sharedNumaNode"), False, []),
    "derived-attributes-valid-global-constraint": (
        _claim([_exactly(derived=[("derived/sharedNumaNode", NUMA)])], [_match("derived/sharedNumaNode")]), False, []),
    "derived-attributes-valid-parent-constraint": (
        _claim([{"name": GOOD, "firstAvailable": [{"name": "subreq", "deviceClassName": GOOD,
                                                   "allocationMode": "ExactCount", "count": 1,
                                                   "derivedAttributes": [{"name": "derived/sharedNumaNode",
                                                                          "expression": NUMA}]}]}],
               [_match("derived/sharedNumaNode", GOOD)]), False, []),
    "derived-attributes-unreferenced": (
        _claim([_exactly(derived=[("derived/sharedNumaNode", NUMA)])]), False,
        [FieldError.invalid(ATTR0.child("name"), "derived/sharedNumaNode", UNREFERENCED)]),
    "derived-attributes-unreferenced-wrong-request-constraint": (
        _claim([_exactly(derived=[("derived/sharedNumaNode", NUMA)]), _exactly(GOOD2)],
               [_match("derived/sharedNumaNode", GOOD2)]), False,
        [FieldError.invalid(ATTR0.child("name"), "derived/sharedNumaNode", UNREFERENCED)]),
    "derived-attributes-duplicate-name": (
        _claim([_exactly(derived=[("derived/sharedNumaNode", NUMA),
                                  ("derived/sharedNumaNode", 'device.attributes["dra.example.com"]["socket"]')])],
               [_match("derived/sharedNumaNode", GOOD)]), False,
        [FieldError.duplicate(ATTR1, "derived/sharedNumaNode")]),
    "derived-attributes-CEL-compile-errors": (  # an invalid map key type (bool instead of string)
        _one("device.attributes[true].someBoolean"), False,
        [FieldError.invalid(ATTR0.child("expression"), "device.attributes[true].someBoolean",
                            "compilation failed: ERROR: <input>:1:18: found no matching overload for '_[_]' applied "
                            "to '(map(string, map(string, any)), bool)'\n | device.attributes[true].someBoolean\n | "
                            ".................^")]),
    "derived-attributes-CEL-invalid-type": (
        _one("device.attributes"), False,
        [FieldError.invalid(ATTR0.child("expression"), "device.attributes",
                            "must evaluate to a primitive scalar (string, integer, boolean, semver), "
                            "not map(string, map(string, google.protobuf.Any))")]),
    "derived-attributes-CEL-length": (
        _one('device.driver == "' + "x" * (10 * 1024 - len('device.driver == ""') + 1) + '"'), False,
        [FieldError.too_long(ATTR0.child("expression"), 10 * 1024)]),
    "derived-attributes-CEL-cost-under-limit": (_one(COST_5, "derived/sharedNumaNode1"), False, []),
    "derived-attributes-CEL-cost-per-expression-exceeds-limit": (
        _one(COST_7, "derived/sharedNumaNode1"), False,
        [FieldError.forbidden(ATTR0.child("expression"), "too complex, exceeds cost limit"),
         FieldError.forbidden(FieldPath("spec").child("devices"),
                              "too complex, total cost of derived attribute CEL expressions in the claim exceeds "
                              "cost limit")]),
    "derived-attributes-CEL-cost-exceeds-limit": (
        _claim([_exactly(derived=[("derived/sharedNumaNode1", COST_5), ("derived/sharedNumaNode2", COST_5)])],
               [_match("derived/sharedNumaNode1", GOOD), _match("derived/sharedNumaNode2", GOOD)]), False,
        [FieldError.forbidden(FieldPath("spec").child("devices"),
                              "too complex, total cost of derived attribute CEL expressions in the claim exceeds "
                              "cost limit")]),
    "derived-attributes-list-type-disabled": (
        _one("[1, 2, 3]"), False,
        [FieldError.invalid(ATTR0.child("expression"), "[1, 2, 3]",
                            "must evaluate to a primitive scalar (string, integer, boolean, semver), not list(int)")]),
    "derived-attributes-list-type-enabled": (_one("[1, 2, 3]"), True, []),
}


@pytest.mark.parametrize("name", CASES)
def test_validate_claim_derived_attributes(name):
    manifest, list_types, expected = CASES[name]
    claim = parse_resource_claim(copy.deepcopy(manifest))
    assert validate_resource_claim(claim, list_types) == expected


def test_template_paths_and_subrequest_target():
    """A claim template's errors are under spec.spec; a constraint naming "req/sub" covers that
    subrequest only, one naming another subrequest does not."""
    sub = {"name": "s", "deviceClassName": GOOD, "derivedAttributes": [{"name": "derived/n", "expression": "1"}]}
    other = {"name": "t", "deviceClassName": GOOD, "derivedAttributes": [{"name": "derived/n", "expression": "2"}]}
    spec = {"devices": {"requests": [{"name": GOOD, "firstAvailable": [sub, other]}],
                        "constraints": [{"matchAttribute": "derived/n", "requests": [f"{GOOD}/s"]}]}}
    tmpl = parse_resource_claim_template({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
                                          "metadata": {"name": "t", "namespace": NS}, "spec": {"spec": spec}})
    path = FieldPath("spec").child("spec", "devices", "requests").index(0).child("firstAvailable").index(1)
    assert validate_resource_claim_template(tmpl) == [
        FieldError.invalid(path.child("derivedAttributes").index(0).child("name"), "derived/n", UNREFERENCED)]


def test_distinct_attribute_counts_and_declarative_rules():
    """A distinctAttribute constraint references a derived attribute as matchAttribute does; the
    declarative rules (name and expression required, the name's format, at most 32) come after
    the hand-written errors, and the 33-entry list short-circuits the per-entry declarative rules."""
    ok = _claim([_exactly(derived=[("derived/n", "1")])], [{"distinctAttribute": "derived/n"}])
    assert validate_resource_claim(parse_resource_claim(ok)) == []

    bad = _claim([_exactly(derived=[("", "1"), ("derived/ok", ""), ("noslash", "1"), ("a/b/c", "1")])],
                 [_match("derived/ok")])
    attrs = REQ0.child("exactly", "derivedAttributes")
    assert validate_resource_claim(parse_resource_claim(bad)) == [
        FieldError.invalid(attrs.index(2).child("name"), "noslash", UNREFERENCED),
        FieldError.invalid(attrs.index(3).child("name"), "a/b/c", UNREFERENCED),
        # the declarative ones, last
        FieldError.required(attrs.index(0).child("name")),
        FieldError.required(attrs.index(1).child("expression")),
        FieldError.invalid(attrs.index(2).child("name"), "noslash",
                           "a fully qualified name must be a domain and a name separated by a slash"),
        # a/b/c: resourcesQualifiedName checks one or two parts only (upstream's TODO), and it has a slash
    ]

    many = _claim([_exactly(derived=[(f"derived/a{i}", "1") for i in range(33)])], [_match("derived/a0")])
    errors = validate_resource_claim(parse_resource_claim(many))
    unreferenced = [e for e in errors if e.detail == UNREFERENCED]
    assert len(unreferenced) == 32  # the hand-written rules still see every entry
    assert errors[len(unreferenced):] == [FieldError.too_many(attrs, 33, 32)]
