"""fastsched's CEL compile check (``fastsched.api.cel.compile_error``, API validation's "compilation
failed") against the real DRA CEL compiler, and the runtime of what it newly accepts.

tests/api/data/dra_cel_cost.json holds what k8s.io/dynamic-resource-allocation/cel v0.37.2 (cel-go
v0.29.2) says of 692 expressions (tools/dra_cel_cost), 174 of them written for this check: type
errors (no matching overload -- ``1.0 == 1`` --, mixed list and map literals, undefined fields,
non-bool logical operands, comprehension ranges, undeclared variables, several errors in one
expression, on other lines, after wide characters), ``cel.bind`` and the regex library's ``find``/``findAll``, which upstream's
environment declares (ext.Bindings in dracel's, library.Regex in the apiserver base environment).
"""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from fastsched.api.cel import CELError, compile_error, compile_expression, device_input
from fastsched.api.resource import parse_resource_slice

_FIXTURE = json.loads((Path(__file__).parents[1] / "api" / "data" / "dra_cel_cost.json").read_text())


def _upstream(entry: dict) -> str:
    return entry["error"][len("compilation failed: "):] if entry["error"].startswith("compilation failed") else ""


def test_fixture_covers_the_new_verdicts():
    errors = [_upstream(e) for e in _FIXTURE]
    assert sum("found no matching overload for '_==_' applied to '(double, int)'" in e for e in errors) >= 2
    assert sum(e.count("\nERROR: ") >= 1 for e in errors) >= 4  # several errors in one expression
    assert any(e.startswith("ERROR: <input>:2:") for e in errors)
    assert any("undefined field" in e for e in errors) and any("expected type 'bool'" in e for e in errors)
    accepted = [e["expression"] for e in _FIXTURE if not e["error"]]
    assert sum("cel.bind(" in x for x in accepted) >= 5 and sum(".find(" in x for x in accepted) >= 2
    assert sum(".findAll(" in x for x in accepted) >= 2


def test_compile_check_agrees_with_cel_go():
    """Every expression: refused exactly when upstream refuses it, with upstream's message."""
    failures = []
    for e in _FIXTURE:
        if not e["consumableCapacity"] and "allowMultipleAllocations" in e["expression"]:
            continue  # (fastsched's device always has allowMultipleAllocations: DRAConsumableCapacity is on)
        want, got = _upstream(e), compile_error(e["expression"], e["listTypeAttributes"])
        if got != want:
            failures.append(f"{e['expression']!r} (list types {e['listTypeAttributes']}): {got!r} != {want!r}")
    assert not failures, f"{len(failures)} differ:\n" + "\n".join(failures[:10])


@pytest.mark.parametrize("expression, value", [
    ('type(device.attributes["dra.example.com"].count) == int', True),
    ('type(device.attributes["dra.example.com"].model) == int', False),
    ('type(device.attributes["dra.example.com"].model) == string', True),
    ("type(1u) == uint && type(1.0) == double && type(true) == bool && type([]) == list && type({}) == map", True),
    ("type(null) == null_type && type(type(1)) == type", True),
])
def test_type_identifiers(expression, value):
    """The standard type identifiers compared with ``type()`` (compiles upstream: the fixture)."""
    compiled = compile_expression(expression)
    assert compiled.error == ""
    assert compiled.value(_device({"model": {"string": "ab"}, "count": {"int": 3}})) is value


def _device(attributes: dict, driver: str = "dra.example.com"):
    rs = parse_resource_slice({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": "s"},
                               "spec": {"driver": driver, "nodeName": "n", "pool": {"name": "p", "resourceSliceCount": 1},
                                        "devices": [{"name": "d", "attributes": attributes}]}})
    return device_input(driver, rs.devices[0])


def test_bind_row_of_compile_test():
    """compile_test.go "bind": ``cel.bind(dra, device.attributes["dra.example.com"], dra.name)``."""
    compiled = compile_expression('cel.bind(dra, device.attributes["dra.example.com"], dra.name)')
    assert compiled.error == ""
    assert compiled.matches(_device({"name": {"bool": True}})) is True
    assert compiled.matches(_device({"name": {"bool": False}})) is False


@pytest.mark.parametrize("expression, value", [
    ('cel.bind(s, device.attributes["dra.example.com"].model, cel.bind(t, s + s, t.size() > 2))', True),
    ('cel.bind(x, [1, 2, 3], x.exists(y, y == 2))', True),
    ('cel.bind(m, {"a": 1, "b": 2}, m.exists(k, m[k] == 2))', True),
    ('cel.bind(x, 1, cel.bind(x, x + 1, x)) == 2', True),  # the inner binding shadows the outer
    ('cel.bind(c, device.attributes["dra.example.com"].count, c > 1 && c < 5)', True),
    ("'cel.bind(x, 1, x)' == 'x'", False),  # (in a string: no binding)
])
def test_bind_values(expression, value):
    compiled = compile_expression(expression)
    assert compiled.error == ""
    assert compiled.value(_device({"model": {"string": "ab"}, "count": {"int": 3}})) == value


def test_bind_errors_are_the_bodys():
    compiled = compile_expression('cel.bind(a, device.attributes["dra.example.com"], a.nosuch == 1)')
    with pytest.raises(CELError, match="no such key: nosuch"):
        compiled.matches(_device({"name": {"bool": True}}))


# Go's regexp (FindString, FindAllString), as the regex library calls them: rows checked with a Go
# program on go1.22's regexp: (string, pattern, n, find, findAll)
REGEX_ROWS = [
    ("baaac", "a*", -1, "", ["", "aaa", ""]),
    ("a1b22c333", "[0-9]+", -1, "1", ["1", "22", "333"]),
    ("a1b22c333", "[0-9]+", 2, "1", ["1", "22"]),
    ("x", "y", -1, "", []),
    ("abc", "", -1, "", ["", "", "", ""]),
    ("aaa", "a*?", -1, "", ["", "", "", ""]),
    ("日本語", ".", -1, "日", ["日", "本", "語"]),
    ("abab", "(ab)*", 0, "abab", []),
    ("abcabc", "b|bc", -1, "b", ["b", "b"]),
    ("ABC abc", "(?i)abc", -1, "ABC", ["ABC", "abc"]),
    ("a\nb", "^[a-z]$", -1, "", []),
    ("a\nb", "(?m)^[a-z]$", -1, "a", ["a", "b"]),
    ("foo.bar", "\\w+\\z", -1, "bar", ["bar"]),
    ("xay", "(?<n>a)", -1, "a", ["a"]),
]


@pytest.mark.parametrize("s, pattern, n, find, find_all", REGEX_ROWS)
def test_find_and_find_all(s, pattern, n, find, find_all):
    dev = _device({"s": {"string": s}, "re": {"string": pattern}, "n": {"int": n}})
    a = 'device.attributes["dra.example.com"]'
    assert compile_expression(f"{a}.s.find({a}.re)").value(dev) == find
    assert compile_expression(f"{a}.s.findAll({a}.re, {a}.n)").value(dev) == find_all
    if n < 0:
        assert compile_expression(f"{a}.s.findAll({a}.re)").value(dev) == find_all


def test_find_with_an_illegal_regex():
    """The library's ``Illegal regex`` error (with Python's reason for the pattern, not Go's)."""
    compiled = compile_expression('"abc".find(device.driver) == ""')
    with pytest.raises(CELError, match="^Illegal regex: error parsing regexp: "):
        compiled.matches(_device({}, driver="("))


def test_find_is_a_member_function():
    assert compile_error('find("abc", "a") == "a"') == (
        "ERROR: <input>:1:5: found no matching overload for 'find' applied to '(string, string)'\n"
        ' | find("abc", "a") == "a"\n | ....^')
