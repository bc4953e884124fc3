"""Quantity grammar, rounding and errors (upstream apimachinery resource.Quantity)."""
from fractions import Fraction

import pytest

from fastsched.api import ManifestError, Quantity, QuantityError, parse_quantity, resource_amount
from fastsched.api.quantity import INT64_MAX

GI = 1024**3


@pytest.mark.parametrize(
    "text, value, milli, nanos",
    [
        ("100m", 1, 100, 100_000_000),  # 0.1 -> Value() rounds up to 1
        ("1.5", 2, 1500, 1_500_000_000),
        ("2Gi", 2 * GI, 2 * GI * 1000, 2 * GI * 10**9),
        ("1e3", 1000, 1_000_000, 1000 * 10**9),
        ("500k", 500_000, 500_000_000, 500_000 * 10**9),
        ("1E3", 1000, 1_000_000, 1000 * 10**9),  # E followed by digits is an exponent...
        ("0.1", 1, 100, 100_000_000),
        (".5", 1, 500, 500_000_000),
        ("1.", 1, 1000, 10**9),
        ("+1", 1, 1000, 10**9),
        ("-1", -1, -1000, -(10**9)),
        ("1Ki", 1024, 1_024_000, 1024 * 10**9),
        ("0.5Mi", 524_288, 524_288_000, 524_288 * 10**9),
        ("1.5Gi", 1_610_612_736, 1_610_612_736_000, 1_610_612_736 * 10**9),
        ("123456789n", 1, 124, 123_456_789),  # 123.456789 milli rounds up to 124
        ("1.0001", 2, 1001, 1_000_100_000),
        ("1e-3", 1, 1, 1_000_000),
        ("1E-3", 1, 1, 1_000_000),
        ("1e+3", 1000, 1_000_000, 1000 * 10**9),
        ("1.G", 10**9, 10**12, 10**18),
        ("0", 0, 0, 0),
        ("-0", 0, 0, 0),
        ("007", 7, 7000, 7 * 10**9),
        ("5u", 1, 1, 5000),
        # a non-zero amount below one nano-unit is rounded up to 1n, as upstream does
        ("0.000000000001", 1, 1, 1),
        ("0.1n", 1, 1, 1),
    ],
)
def test_valid_quantities(text, value, milli, nanos):
    quantity = parse_quantity(text)
    assert quantity.value() == value
    assert quantity.milli_value() == milli
    assert quantity.nano_value() == nanos
    assert str(quantity) == text


def test_bare_E_is_exa_and_values_beyond_int64_saturate():
    quantity = parse_quantity("12E")  # E alone is the exa suffix: 12 * 10**18 > 2**63 - 1
    assert quantity.as_fraction() == 12 * 10**18
    assert quantity.value() == INT64_MAX
    assert quantity.milli_value() == INT64_MAX


def test_binary_quantities_are_capped_at_int64_max():
    assert parse_quantity("7Ei").value() == 7 * 2**60  # 8070450532247928832 still fits
    assert parse_quantity("9Ei").as_fraction() == INT64_MAX  # 9 * 2**60 does not: capped
    assert parse_quantity("-9Ei").as_fraction() == -INT64_MAX


def test_negative_values_round_away_from_zero_like_upstream_value():
    # upstream int64Amount.AsScaledInt64 / negativeScaleInt64 round away from zero
    assert parse_quantity("-1.5").value() == -2
    assert parse_quantity("-0.1").value() == -1
    assert parse_quantity("-100m").milli_value() == -100
    assert parse_quantity("-0.5m").milli_value() == -1


def test_numbers_as_yaml_gives_them():
    assert parse_quantity(2).value() == 2
    assert str(parse_quantity(2)) == "2"
    assert parse_quantity(0.5).milli_value() == 500
    assert str(parse_quantity(0.5)) == "0.5"
    assert parse_quantity(1e-05).milli_value() == 1  # 0.01 milli rounds up
    assert parse_quantity(10**30).value() == INT64_MAX


def test_exact_comparisons_and_hashing():
    assert Quantity("1") == Quantity("1000m") == Quantity("1000000u") == Quantity(1)
    assert hash(Quantity("1")) == hash(Quantity("1000m"))
    assert Quantity("1Ki") > Quantity("1k")  # 1024 > 1000
    assert Quantity("999m") < Quantity("1")
    assert Quantity("1.5").as_fraction() == Fraction(3, 2)
    assert Quantity("0").is_zero() and Quantity("-2").sign() == -1
    assert parse_quantity(Quantity("3")) == Quantity(3)


def test_resource_amount_uses_millicores_for_cpu_only():
    assert resource_amount("cpu", "0.1m") == 1  # 0.1 millicore rounds up to 1
    assert resource_amount("cpu", "1.5") == 1500
    assert resource_amount("cpu", 2) == 2000
    assert resource_amount("memory", "1.5Gi") == 1_610_612_736
    assert resource_amount("memory", "100m") == 1  # 0.1 byte rounds up to 1
    assert resource_amount("nvidia.com/gpu", 1) == 1
    assert resource_amount("cpu", Quantity("250m")) == 250


@pytest.mark.parametrize(
    "value",
    [
        "12x", "", "1.2.3", "Gi", "1 Gi", "e3", " ", "\t", "1.1.M", "1+1.0M", "0.1mi", "aoeu",
        ".5i", "1i", "-3.01i", "-3.01e-", "1KiB", "1K", "1ki", "1e", "1e3k", "1E3Ki", ".", "+", "m",
        "1e1.5", "inf", "1_000", "0x10", "\uff11",  # full-width digit one
        "1e99999999999999999999",  # exponent does not fit int64
        [1], {"a": 1}, True, None, float("nan"),
    ],
)
def test_malformed_quantities(value):
    with pytest.raises(QuantityError):
        parse_quantity(value)


@pytest.mark.parametrize("text, go_error", [
    ("abc", "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"),
    ("0x10", "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"),
    ("", "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"),
    ("1Qi", "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"),
    ("1.5m5", "unable to parse quantity's suffix"),
    ("+-1", "unable to parse quantity's suffix"),
    ("1i", "unable to parse quantity's suffix"),
    ("1e99999999999999999999", "unable to parse quantity's suffix"),
])
def test_malformed_quantities_in_parse_quantitys_words(text, go_error):
    """resource.Quantity.UnmarshalJSON's errors for these texts (apimachinery v0.37.2, run with
    Go), after the field path."""
    with pytest.raises(QuantityError) as info:
        parse_quantity(text, "spec.overhead.cpu")
    assert str(info.value) == f"spec.overhead.cpu: {go_error}"


def test_spaces_around_a_quantity_are_trimmed_as_unmarshal_json_trims_them():
    assert parse_quantity(" 1").milli_value() == 1000 and parse_quantity("250m\n").milli_value() == 250
    assert str(parse_quantity(" 2Gi ")) == "2Gi"


def test_a_json_number_is_parsed_from_its_literal():
    """UnmarshalJSON parses the number's bytes: 1e400 is a quantity (past float64's range)."""
    from fastsched.api import load_objects

    (node,) = load_objects('{"apiVersion":"v1","kind":"Node","metadata":{"name":"n"},'
                           '"status":{"capacity":{"cpu":1e400,"pods":1.5e1}}}', validate=False)
    assert node.allocatable["pods"] == 15 and node.allocatable["cpu"] > 10**18


def test_quantity_error_names_path_in_upstreams_words():
    path = "spec.containers[0].resources.requests.cpu"
    with pytest.raises(QuantityError) as info:
        parse_quantity("12x", path)
    error = info.value
    assert isinstance(error, ManifestError) and isinstance(error, ValueError)
    assert error.path == path
    assert str(error) == ("spec.containers[0].resources.requests.cpu: quantities must match the regular "
                          "expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'")


def test_digitless_quantities_are_rejected_with_a_reason():
    # upstream ParseQuantity accepts these as 0 (apimachinery#165); the grammar needs a digit
    with pytest.raises(QuantityError, match="no digits"):
        parse_quantity("Gi")


def test_list_value_error_mentions_the_type():
    with pytest.raises(QuantityError, match="got list"):
        parse_quantity(["1"], "spec.overhead.cpu")


def test_huge_exponents_are_clamped_instead_of_building_huge_integers():
    assert parse_quantity("1e400").value() == INT64_MAX
    assert parse_quantity("1e-400").nano_value() == 1
    assert parse_quantity("-1e-400").nano_value() == -1
