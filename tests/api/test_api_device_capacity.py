"""``requestPolicy`` of a device capacity (DRAConsumableCapacity): upstream's
``TestValidateDeviceCapacity`` (``pkg/apis/resource/validation/validation_device_capacity_test.go``,
v1.37.2) against fastsched's ``validateMultiAllocatableDeviceCapacity``, and the slice-level rules
(a policy needs ``allowMultipleAllocations``; field paths ``spec.devices[i].capacity[name]``)."""
from __future__ import annotations

import pytest

from fastsched.api.quantity import parse_quantity as Q
from fastsched.api.resource import (CapacityRequestPolicy, CapacityRequestPolicyRange, _request_policy_errors,
                                    parse_resource_claim, parse_resource_slice, validate_resource_slice)
from fastsched.util.field import ErrorType, FieldError, FieldPath

ONE_KI, ONE_KI_LONG = Q("1Ki"), Q("1024")
HUNDRED_MILLI, TWO_HUNDRED_MILLI, ONE_UNIT = Q("100m"), Q("200m"), Q("1")
ONE, TWO, MAX, OVER = Q("1Gi"), Q("2Gi"), Q("10Gi"), Q("20Gi")
ZERO, NEG_ONE = Q("0"), Q("-1")
MAX_INT64, MAX_INT64_P1, TWO_POW64 = Q(str(2**63 - 1)), Q(str(2**63)), Q("18446744073709551616")

POLICY = "spec.devices.capacity.requestPolicy"
VALUES = POLICY + ".validValues"
RANGE = POLICY + ".validRange"


def pol(default=None, values=None, rng=None) -> CapacityRequestPolicy:
    return CapacityRequestPolicy(default=default, valid_values=tuple(values or ()), valid_range=rng)


def rng(min=None, max=None, step=None) -> CapacityRequestPolicyRange:
    return CapacityRequestPolicyRange(min=min, max=max, step=step)


def invalid(path, value, detail):
    return FieldError(path, ErrorType.INVALID, value, detail)


SCENARIOS = {
    "policy-without-default": (ONE, pol(), False, []),
    "policy-with-valid-values-without-default": (ONE, pol(values=[ONE]), False, [
        FieldError(POLICY + ".default", ErrorType.REQUIRED, "", "required when validValues is defined")]),
    "policy-with-valid-range-without-default": (ONE, pol(rng=rng(ONE)), False, [
        FieldError(POLICY + ".default", ErrorType.REQUIRED, "", "required when validRange is defined")]),
    "policy-with-valid-range-without-min": (ONE, pol(ONE, rng=rng()), False, [
        FieldError(RANGE + ".min", ErrorType.REQUIRED, "", "required when validRange is defined")]),
    "valid-simple-range": (MAX, pol(ONE, rng=rng(ONE)), False, []),
    "valid-range-with-max": (MAX, pol(ONE, rng=rng(ONE, MAX)), False, []),
    "valid-range-with-step": (MAX, pol(ONE, rng=rng(ONE, None, ONE)), False, []),
    "valid-range-with-max-and-step": (MAX, pol(ONE, rng=rng(ONE, MAX, ONE)), False, []),
    "valid-single-option": (MAX, pol(ONE, [ONE]), False, []),
    "valid-two-options": (MAX, pol(ONE, [ONE, MAX]), False, []),
    "default-without-policy": (MAX, pol(ONE), False, []),
    "more-than-one-policy": (MAX, pol(ONE, [ONE], rng(ONE)), False, [
        FieldError(POLICY, ErrorType.FORBIDDEN, "", 'exactly one policy can be specified, cannot specify '
                                                    '"validValues" and "validRange" at the same time')]),
    "invalid-options": (MAX, pol(ONE, [OVER]), False, [
        invalid(VALUES + "[0]", "20Gi", "option is larger than capacity value: 10Gi"),
        invalid(VALUES, "1Gi", "default value is not valid according to the requestPolicy")]),
    "valid-fractional-values": (MAX, pol(HUNDRED_MILLI, [HUNDRED_MILLI, TWO_HUNDRED_MILLI, ONE_UNIT]), True, []),
    "invalid-options-duplicate": (MAX, pol(ONE, [ONE, ONE]), False, [
        FieldError(VALUES + "[1]", ErrorType.DUPLICATE, "1073741824")]),
    "invalid-options-duplicate-normalized": (MAX, pol(ONE_KI, [ONE_KI, ONE_KI_LONG]), False, [
        FieldError(VALUES + "[1]", ErrorType.DUPLICATE, "1024")]),
    "invalid-options-unsort": (MAX, pol(ONE, [TWO, ONE]), False, [
        invalid(VALUES + "[1]", "1Gi", "values must be sorted in ascending order")]),
    "invalid-range-large-min-small-max": (MAX, pol(TWO, rng=rng(OVER, ONE)), False, [
        invalid(RANGE + ".min", "20Gi", "min is larger than capacity value: 10Gi"),
        invalid(RANGE + ".default", "2Gi", "default is less than min: 20Gi"),
        invalid(RANGE + ".max", "20Gi", "min is larger than max: 1Gi"),
        invalid(RANGE + ".default", "2Gi", "default is more than max: 1Gi")]),
    "invalid-range-large-max": (MAX, pol(ONE, rng=rng(ONE, OVER)), False, [
        invalid(RANGE + ".max", "20Gi", "max is larger than capacity value: 10Gi")]),
    "invalid-range-multiple-of-step": (MAX, pol(TWO, rng=rng(ONE, MAX, TWO)), False, [
        invalid(RANGE + ".step", "2Gi", "value is not a multiple of a given step (2Gi) from (1Gi)"),
        invalid(RANGE + ".step", "10Gi", "value is not a multiple of a given step (2Gi) from (1Gi)")]),
    "range-step-multiple-of-2^64": (TWO_POW64, pol(ZERO, rng=rng(ZERO, None, TWO_POW64)), False, [
        invalid(RANGE + ".step", "18446744073709551616", "must not be larger than 9223372036854775807")]),
    "range-step-at-int64-max": (MAX_INT64, pol(ZERO, rng=rng(ZERO, None, MAX_INT64)), False, []),
    "range-step-int64-max-plus-one": (MAX_INT64_P1, pol(ZERO, rng=rng(ZERO, None, MAX_INT64_P1)), False, [
        invalid(RANGE + ".step", "9223372036854775808", "must not be larger than 9223372036854775807")]),
    "range-negative-min-with-step": (MAX, pol(ZERO, rng=rng(NEG_ONE, None, ONE)), False, [
        invalid(RANGE + ".min", "-1", "must be greater than or equal to 0")]),
    "range-fractional-default-integer-range": (MAX, pol(HUNDRED_MILLI, rng=rng(ZERO, None, ONE_UNIT)), True, [
        invalid(RANGE + ".step", "100m", "value is not a multiple of a given step (1) from (0)")]),
    "range-no-step-negative-bounds-accepted": (MAX, pol(NEG_ONE, rng=rng(NEG_ONE)), False, []),
    "valid-range-fractional-step": (Q("1"), pol(Q("200m"), rng=rng(Q("200m"), Q("1"), Q("100m"))), True, []),
    "invalid-range-fractional-step-not-aligned": (Q("1"), pol(Q("250m"), rng=rng(Q("200m"), Q("1"), Q("100m"))),
                                                  True, [invalid(RANGE + ".step", "250m", "value is not a multiple "
                                                                 "of a given step (100m) from (200m)")]),
    "invalid-range-large-step": (MAX, pol(ONE, rng=rng(ONE, None, MAX)), False, [
        invalid(RANGE + ".step", "10Gi", "one step 11Gi is larger than capacity value: 10Gi")]),
    "fractional-range-gate-disabled-valid": (Q("1"), pol(Q("200m"), rng=rng(Q("200m"), Q("1"), Q("100m"))), False,
                                             []),
    "fractional-range-gate-disabled-misaligned": (Q("1"), pol(Q("250m"), rng=rng(Q("200m"), Q("1"), Q("100m"))),
                                                  False, []),
    "fractional-range-overflow-min": (Q("100P"), pol(Q("20P"), rng=rng(Q("10P"), None, Q("100m"))), True, [
        invalid(RANGE + ".default", "20P", "value cannot be represented as a milli value"),
        invalid(RANGE + ".min", "10P", "value cannot be represented as a milli value")]),
    "fractional-too-fine-precision": (Q("1"), pol(Q("20u"), rng=rng(Q("10u"))), True, [
        invalid(RANGE + ".default", "20u", "value cannot be represented as a milli value"),
        invalid(RANGE + ".min", "10u", "value cannot be represented as a milli value")]),
}


@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_validate_device_capacity(name):
    value, policy, fractional, want = SCENARIOS[name]
    assert _request_policy_errors(value, policy, FieldPath(POLICY), fractional) == want


def _slice(device: dict):
    return parse_resource_slice({"metadata": {"name": "s"}, "spec": {
        "driver": "gpu.example.com", "nodeName": "n", "pool": {"name": "p", "generation": 1, "resourceSliceCount": 1},
        "devices": [device]}})


def test_a_request_policy_needs_allow_multiple_allocations():
    policy = {"default": "1Gi", "validRange": {"min": "1Gi"}}
    errors = validate_resource_slice(_slice({"name": "d", "capacity": {"memory": {"value": "8Gi",
                                                                                  "requestPolicy": policy}}}))
    assert errors == [FieldError("spec.devices[0].capacity[memory].requestPolicy", ErrorType.FORBIDDEN, "",
                                 "allowMultipleAllocations must be true")]
    assert validate_resource_slice(_slice({"name": "d", "allowMultipleAllocations": True,
                                           "capacity": {"memory": {"value": "8Gi", "requestPolicy": policy}}})) == []
    errors = validate_resource_slice(_slice({"name": "d", "allowMultipleAllocations": True, "capacity": {
        "memory": {"value": "8Gi", "requestPolicy": {"default": "1Gi", "validValues": ["2Gi"]}}}}))
    assert errors == [invalid("spec.devices[0].capacity[memory].requestPolicy.validValues", "1Gi",
                              "default value is not valid according to the requestPolicy")]


def test_capacity_requests_are_decoded():
    claim = parse_resource_claim({"metadata": {"name": "c", "namespace": "default"}, "spec": {"devices": {
        "requests": [{"name": "r", "exactly": {"deviceClassName": "gpu",
                                               "capacity": {"requests": {"memory": "3Gi"}}}}]}}})
    assert claim.requests[0].exactly.capacity_requests == {"memory": Q("3Gi")}
    with pytest.raises(Exception) as excinfo:
        parse_resource_claim({"metadata": {"name": "c", "namespace": "default"}, "spec": {"devices": {
            "requests": [{"name": "r", "exactly": {"deviceClassName": "gpu",
                                                   "capacity": {"requests": {"memory": "lots"}}}}]}}})
    assert "capacity.requests[memory]" in str(excinfo.value)


def test_the_slice_validation_follows_the_fractional_gate():
    """DRAFractionalCapacityRange (off at v1.37.2's defaults) picks the step arithmetic."""
    from fastsched.api.strategy import validate
    device = {"name": "d", "allowMultipleAllocations": True, "capacity": {"cores": {"value": "1", "requestPolicy": {
        "default": "250m", "validRange": {"min": "200m", "max": "1", "step": "100m"}}}}}
    assert validate(_slice(device)) == []  # integer path: 250m reads as 1, min as 1, step as 1
    assert validate(_slice(device), {"DRAFractionalCapacityRange": True}) == [
        invalid("spec.devices[0].capacity[cores].requestPolicy.validRange.step", "250m",
                "value is not a multiple of a given step (100m) from (200m)")]
