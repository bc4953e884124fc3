"""fastsched.api.celcost against the real DRA CEL compiler: tests/api/data/dra_cel_cost.json holds,
for 692 expressions (200 of them from tools/dra_cel_cost/random_expressions.py, 174 written for the
compile check's type errors, cel.bind and the regex library: tests/dra/test_cel_compile_check.py), what
k8s.io/dynamic-resource-allocation/cel v0.37.2 (cel-go v0.29.2) says -- its static cost estimate
(CompilationResult.MaxCost), its output type and its compile error --, written by tools/dra_cel_cost
(see there to add expressions)."""
import json
from pathlib import Path

import pytest

from fastsched.api.celcost import MAX_UINT64, CostUnsupported, estimate_max_cost, output_type_error

_FIXTURE = json.loads((Path(__file__).parent / "data" / "dra_cel_cost.json").read_text())


def _id(entry: dict) -> str:
    flags = "".join(f for f, on in (("C", entry["consumableCapacity"]), ("L", entry["listTypeAttributes"]),
                                     ("D", entry["derivedAttribute"])) if on)
    return f"{flags}:{entry['expression'][:70]}"


@pytest.mark.parametrize("entry", _FIXTURE, ids=[_id(e) for e in _FIXTURE])
def test_estimate_agrees_with_cel_go(entry):
    expression, cc, lt = entry["expression"], entry["consumableCapacity"], entry["listTypeAttributes"]
    if entry["error"].startswith("compilation failed"):
        # does not type-check upstream: the estimator must not invent a cost for it
        with pytest.raises(CostUnsupported):
            estimate_max_cost(expression, cc, lt)
        return
    result = estimate_max_cost(expression, cc, lt)
    if entry["error"]:
        # compiled, refused for its output type (validateOutputType): upstream reports no cost then
        assert entry["maxCost"] == str(MAX_UINT64)
        return
    assert (result.max, result.output_type) == (int(entry["maxCost"]), entry["outputType"])


@pytest.mark.parametrize("entry", [e for e in _FIXTURE if not e["error"].startswith("compilation failed")],
                         ids=[_id(e) for e in _FIXTURE if not e["error"].startswith("compilation failed")])
def test_output_type_check_agrees_with_cel_go(entry):
    """validateOutputType's verdict (and words) for the expressions that compile."""
    assert output_type_error(entry["expression"], entry["listTypeAttributes"], entry["derivedAttribute"]) == \
        entry["error"]


@pytest.mark.parametrize("expression, list_type_attributes, message", [
    # validation_resourceclaim_test.go "derived-attributes-CEL-invalid-type", "derived-attributes-list-type-disabled"
    ("device.attributes", False, "must evaluate to a primitive scalar (string, integer, boolean, semver), "
                                 "not map(string, map(string, google.protobuf.Any))"),
    ("[1, 2, 3]", False, "must evaluate to a primitive scalar (string, integer, boolean, semver), not list(int)"),
    ("[1, 2, 3]", True, ""),
])
def test_derived_attribute_output_type_rows(expression, list_type_attributes, message):
    assert output_type_error(expression, list_type_attributes, derived_attribute=True) == message


def test_fixture_covers_the_output_types():
    errors = {e["error"].split(",")[0].split(" (")[0] for e in _FIXTURE if e["error"].startswith("must")}
    assert errors == {"must evaluate to bool or the unknown type", "must evaluate to a primitive scalar"}
    derived = [e for e in _FIXTURE if e["derivedAttribute"]]
    assert any(e["outputType"].startswith("list(") for e in derived) and any(e["error"] for e in derived)


def test_fixture_covers_the_cost_paths():
    """The fixture exercises what the estimator distinguishes: saturated estimates, estimates above
    the 1,000,000 limit and below it, and all three environments."""
    costs = [int(e["maxCost"]) for e in _FIXTURE if not e["error"]]
    assert any(c == MAX_UINT64 for c in costs)
    assert any(1_000_000 < c < MAX_UINT64 for c in costs)
    assert sum(c <= 1_000_000 for c in costs) > 250
    assert {(e["consumableCapacity"], e["listTypeAttributes"]) for e in _FIXTURE} >= {
        (False, False), (True, False), (True, True), (False, True)}


@pytest.mark.parametrize("expression", [
    "device.driver == ",  # syntax
    "nosuch(device.driver)",  # undeclared function
    "device.nosuch == 1",  # undefined field
    '{"a": 1}.nosuch.all(x, y, x)',  # two-variable comprehension (not modelled)
    "(" * 2000 + "true" + ")" * 2000,  # deeper than the stack: not a crash
    "device" + ".x" * 3000 + " == 1",
    r'device.driver == "\u12"',  # malformed escape
    "1e == 1",  # malformed exponent
])
def test_unsupported_is_reported_not_guessed(expression):
    with pytest.raises(CostUnsupported):
        estimate_max_cost(expression)
