"""Kubernetes resource quantities (``k8s.io/apimachinery/pkg/api/resource.Quantity``).

Grammar::

    <quantity>  ::= <sign>? <number> <suffix>
    <number>    ::= <digits> | <digits>.<digits> | <digits>. | .<digits>
    <suffix>    ::= <binarySI> | <decimalSI> | <decimalExponent>
    <binarySI>  ::= Ki | Mi | Gi | Ti | Pi | Ei
    <decimalSI> ::= n | u | m | "" | k | M | G | T | P | E
    <decimalExponent> ::= (e | E) <sign>? <digits>      ("12E" is 12 exa, "1E3" is 1000)

Like upstream, a parsed value is rounded away from zero to a whole number of nano-units
(``0.1n`` becomes ``1n``) and binary-suffixed values are capped at 2^63-1. The parsed value is
therefore an exact integer count of nano-units, which is what :class:`Quantity` stores.

Errors are ParseQuantity's own where it refuses the text too: ``quantities must match the regular
expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'`` (the text does not scan: ``abc``,
``0x10``, the empty string) and ``unable to parse quantity's suffix`` (``1Qi``, ``1.5m5``), after
the field path. Text is trimmed of spaces first, as ``Quantity.UnmarshalJSON`` trims it, and a JSON
number is parsed from its literal (``1e400``).

Deliberate differences from upstream ``ParseQuantity``:

* a quantity must contain at least one digit: upstream accepts ``"Gi"``, ``"m"``, ``"e3"`` or
  ``"."`` as zero (kubernetes/apimachinery#165), which the documented grammar does not allow;
* more than 1000 digits are rejected, and magnitudes of 10^100 or more are clamped to 10^100, so
  that absurd input cannot make Python build gigantic integers.
"""
from __future__ import annotations

import functools
import re
from fractions import Fraction
from typing import Any, Mapping

from ._manifest import child_path, type_name
from .errors import ManifestError, QuantityError

__all__ = [
    "Quantity",
    "parse_quantity",
    "resource_amount",
    "INT64_MAX",
    "INT64_MIN",
    "canonical",
    "canonical_text",
    "format_of",
]

INT64_MAX = 2**63 - 1
INT64_MIN = -(2**63)

_NANOS_PER_UNIT = 10**9
_NANOS_PER_MILLI = 10**6
# Binary-suffixed values are capped at the int64 maximum (upstream ``maxAllowed``).
_BINARY_CAP_NANOS = INT64_MAX * _NANOS_PER_UNIT
# |value| >= 10**100 is clamped (see the module docstring); 10**109 nano-units == 10**100.
_CLAMP_NANOS = 10**109
_CLAMP_DIGITS = 110
_MAX_DIGITS = 1000
# Plain integers within this bound convert without overflowing int64 even in millicores; larger
# ones take the text path, which saturates like upstream.
_MAX_PLAIN_INT = INT64_MAX // 1000

_DECIMAL_SUFFIX_EXPONENTS = {
    "": 0, "n": -9, "u": -6, "m": -3, "k": 3, "M": 6, "G": 9, "T": 12, "P": 15, "E": 18,
}
_BINARY_SUFFIX_BITS = {"Ki": 10, "Mi": 20, "Gi": 30, "Ti": 40, "Pi": 50, "Ei": 60}

# Same split as upstream's scanner: number, then any run of suffix letters with an optional
# signed digit tail; the suffix is interpreted afterwards.
_QUANTITY_RE = re.compile(r"([+-]?)([0-9]*)(?:\.([0-9]*))?([eEinumkKMGTP]*[-+]?[0-9]*)")
_INT64_RE = re.compile(r"[+-]?[0-9]+")

_CPU = "cpu"


class _Malformed(ValueError):
    """Internal: why a quantity string failed to parse (no path or quoting yet)."""


class _Upstream(_Malformed):
    """Internal: a quantity ParseQuantity refuses too, with its error's text as it is."""


#: ParseQuantity's ErrFormatWrong and ErrSuffix
FORMAT_WRONG = "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"
SUFFIX_WRONG = "unable to parse quantity's suffix"
# what Go's strings.TrimSpace removes (Quantity.UnmarshalJSON trims the text before parsing)
_SPACE = " \t\n\v\f\r\x85\xa0"


def parse_int64(text: str) -> int | None:
    """Go ``strconv.ParseInt(text, 10, 64)``: the integer, or None if invalid or out of range."""
    if _INT64_RE.fullmatch(text) is None:
        return None
    value = int(text)
    if value < INT64_MIN or value > INT64_MAX:
        return None
    return value


def _nanos_from_text(text: str) -> int:
    """Parse a quantity string into an exact count of nano-units (upstream rounding and caps)."""
    match = _QUANTITY_RE.fullmatch(text) if text else None
    if match is None:
        raise _Upstream(FORMAT_WRONG)
    sign, whole, fraction, suffix = match.groups()
    fraction = fraction or ""
    if not whole and not fraction:
        if suffix not in _DECIMAL_SUFFIX_EXPONENTS and suffix not in _BINARY_SUFFIX_BITS and not (
                len(suffix) > 1 and suffix[0] in "eE" and parse_int64(suffix[1:]) is not None):
            raise _Upstream(SUFFIX_WRONG)
        raise _Malformed("no digits before the suffix")  # (upstream reads it as 0: see the module)
    if len(whole) + len(fraction) > _MAX_DIGITS:
        raise _Malformed(f"more than {_MAX_DIGITS} digits")

    binary_bits = None
    exponent = _DECIMAL_SUFFIX_EXPONENTS.get(suffix)
    if exponent is None:
        binary_bits = _BINARY_SUFFIX_BITS.get(suffix)
        if binary_bits is None:
            if len(suffix) > 1 and suffix[0] in "eE":
                exponent = parse_int64(suffix[1:])
                if exponent is None:
                    raise _Upstream(SUFFIX_WRONG)
            else:
                raise _Upstream(SUFFIX_WRONG)

    digits = (whole + fraction).lstrip("0")
    if not digits:
        return 0
    mantissa = int(digits)
    if binary_bits is not None:
        # mantissa * 2**bits / 10**len(fraction), in nano-units, rounded up.
        numerator = (mantissa << binary_bits) * _NANOS_PER_UNIT
        nanos = -(-numerator // 10 ** len(fraction))
        nanos = min(nanos, _BINARY_CAP_NANOS)
    else:
        assert exponent is not None  # a suffix is binary, decimal or an exponent (or refused above)
        # value = mantissa * 10**nano_exponent nano-units
        nano_exponent = exponent - len(fraction) + 9
        if nano_exponent >= 0:
            if len(digits) + nano_exponent > _CLAMP_DIGITS:
                nanos = _CLAMP_NANOS
            else:
                nanos = min(mantissa * 10**nano_exponent, _CLAMP_NANOS)
        elif -nano_exponent > len(digits) + 1:
            nanos = 1  # below one nano-unit: upstream rounds any non-zero amount up to 1n
        else:
            nanos = -(-mantissa // 10 ** (-nano_exponent))
    return -nanos if sign == "-" else nanos


def _round_away_from_zero_unbounded(nanos: int, units: int) -> int:
    return -(-nanos // units) if nanos >= 0 else nanos // units


def _round_away_from_zero(nanos: int, units: int) -> int:
    """nanos / units rounded away from zero, saturated to int64 (upstream ``AsScaledInt64``)."""
    result = -(-nanos // units) if nanos >= 0 else nanos // units
    if result > INT64_MAX:
        return INT64_MAX
    if result < INT64_MIN:
        return INT64_MIN
    return result


def _quantity_text(value: Any) -> str:
    """The textual form of a quantity given as a YAML/JSON scalar."""
    value_type = type(value)
    if value_type is str:
        if value and (value[0] in _SPACE or value[-1] in _SPACE):
            return value.strip(_SPACE)  # as Quantity.UnmarshalJSON trims it
        return value
    if value_type is int:
        return str(value)
    if value_type is float:
        return repr(value)  # shortest round-trip form: 0.5, 1e-05, 1e+20; inf/nan fail to parse
    if isinstance(value, float) and type(value) is not bool:
        # a JSON number with its literal (fastsched.api.schema.JSONFloat): UnmarshalJSON parses
        # the literal, so 1e400 is a (huge) quantity, not an infinity
        return getattr(value, "literal", None) or repr(float(value))
    if isinstance(value, Quantity):
        return value._text
    raise _Malformed(f"expected a string or number, got {type_name(value)}")


# Parsed amounts by quantity text: (nanos, milli value, value). Cluster manifests repeat the
# same few strings ("4", "16Gi", "110") over and over, so parsing each string once makes
# loading many nodes cheap. Bounded so that pathological input cannot grow it without limit.
_AMOUNT_CACHE: dict[str, tuple[int, int, int]] = {}
_AMOUNT_CACHE_LIMIT = 65536


def _amounts_of_text(text: str) -> tuple[int, int, int]:
    cached = _AMOUNT_CACHE.get(text)
    if cached is not None:
        return cached
    nanos = _nanos_from_text(text)
    amounts = (
        nanos,
        _round_away_from_zero(nanos, _NANOS_PER_MILLI),
        _round_away_from_zero(nanos, _NANOS_PER_UNIT),
    )
    if len(_AMOUNT_CACHE) >= _AMOUNT_CACHE_LIMIT:
        _AMOUNT_CACHE.clear()
    _AMOUNT_CACHE[text] = amounts
    return amounts


def _amounts(value: Any, path: str | None) -> tuple[int, int, int]:
    """(nanos, milli value, value) of a quantity scalar; QuantityError naming ``path`` if bad."""
    if type(value) is int and -_MAX_PLAIN_INT <= value <= _MAX_PLAIN_INT:
        return value * _NANOS_PER_UNIT, value * 1000, value
    try:
        return _amounts_of_text(_quantity_text(value))
    except _Upstream as exc:
        raise QuantityError(str(exc), path) from None  # ParseQuantity's own words (no value, as upstream)
    except _Malformed as exc:
        raise QuantityError(f"invalid quantity {_show(value)}: {exc}", path) from None


def _show(value: Any) -> str:
    if isinstance(value, str):
        return '"' + value + '"'
    return repr(value)


@functools.total_ordering
class Quantity:
    """An exact resource quantity, e.g. ``Quantity("100m")`` or ``Quantity(2)``.

    ``str(q)`` returns the text it was parsed from; comparisons use the exact value.
    """

    __slots__ = ("_text", "_nanos")
    _text: str
    _nanos: int

    def __init__(self, value: Any):
        if isinstance(value, Quantity):
            self._text, self._nanos = value._text, value._nanos
            return
        nanos = _amounts(value, None)[0]
        self._text = _quantity_text(value)
        self._nanos = nanos

    def value(self) -> int:
        """The value rounded away from zero to an integer (upstream ``Value()``), int64-saturated."""
        return _round_away_from_zero(self._nanos, _NANOS_PER_UNIT)

    def milli_value(self) -> int:
        """The value in thousandths rounded away from zero (upstream ``MilliValue()``)."""
        return _round_away_from_zero(self._nanos, _NANOS_PER_MILLI)

    def nano_value(self) -> int:
        """The exact value in nano-units (every parsed quantity is a whole number of them)."""
        return self._nanos

    def as_fraction(self) -> Fraction:
        """The exact value as a Fraction."""
        return Fraction(self._nanos, _NANOS_PER_UNIT)

    def is_zero(self) -> bool:
        return self._nanos == 0

    def sign(self) -> int:
        return (self._nanos > 0) - (self._nanos < 0)

    def __str__(self) -> str:
        return self._text

    def __repr__(self) -> str:
        return f"Quantity({self._text!r})"

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Quantity):
            return self._nanos == other._nanos
        return NotImplemented

    def __lt__(self, other: object) -> bool:
        if isinstance(other, Quantity):
            return self._nanos < other._nanos
        return NotImplemented

    def __hash__(self) -> int:
        return hash(self._nanos)


def parse_quantity(value: Any, path: str | None = None) -> Quantity:
    """Parse a quantity given as text or a YAML/JSON number; QuantityError naming ``path`` if bad."""
    if isinstance(value, Quantity):
        return value
    nanos = _amounts(value, path)[0]
    quantity = Quantity.__new__(Quantity)
    quantity._text = _quantity_text(value)
    quantity._nanos = nanos
    return quantity


def resource_amount(resource_name: str, quantity: Any) -> int:
    """The scheduler's integer amount of a quantity: millicores for ``cpu``, ``value()`` otherwise."""
    amounts = _amounts(quantity, None)
    return amounts[1] if resource_name == _CPU else amounts[2]


def amount_from_nanos(resource_name: str, nanos: int) -> int:
    """Convert an exact nano-unit amount to the scheduler's integer amount for the resource."""
    if resource_name == _CPU:
        return _round_away_from_zero(nanos, _NANOS_PER_MILLI)
    return _round_away_from_zero(nanos, _NANOS_PER_UNIT)


def nanos_from_amount(resource_name: str, amount: int) -> int:
    """Inverse of :func:`amount_from_nanos` for integer amounts (millicores for cpu)."""
    return amount * (_NANOS_PER_MILLI if resource_name == _CPU else _NANOS_PER_UNIT)


# ResourceList entries by quantity text: (nanos rounded up to whole milli-units, milli value, value).
_RESOURCE_LIST_CACHE: dict[str, tuple[int, int, int]] = {}


def _resource_list_entry(raw: Any, name: str, path: str) -> tuple[int, int, int]:
    try:
        nanos, milli, value = _amounts_of_text(_quantity_text(raw))
    except _Malformed as exc:
        raise QuantityError(f"invalid quantity {_show(raw)}: {exc}", child_path(path, name)) from None
    if nanos % _NANOS_PER_MILLI:
        nanos = _round_away_from_zero_unbounded(nanos, _NANOS_PER_MILLI) * _NANOS_PER_MILLI
    entry = (nanos, milli, value)
    if type(raw) is str:
        if len(_RESOURCE_LIST_CACHE) >= _AMOUNT_CACHE_LIMIT:
            _RESOURCE_LIST_CACHE.clear()
        _RESOURCE_LIST_CACHE[raw] = entry
    return entry


def read_resource_list(value: Any, path: str) -> tuple[dict[str, int], dict[str, int]]:
    """Parse a ResourceList map into new dicts (scheduler amounts, exact nano-unit amounts).

    Amounts are millicores for cpu and ``value()`` for everything else. The nano-unit amounts are
    first rounded up to whole milli-units, as the API server's ``SetDefaults_ResourceList`` does
    to every stored ResourceList (which makes ``0.5m + 0.5m`` sum to 2m, as in a real cluster).
    ManifestError/QuantityError name the offending entry (``<path>.cpu``).
    """
    amounts: dict[str, int] = {}
    nanos: dict[str, int] = {}
    if value is None:
        return amounts, nanos
    if type(value) is not dict and not isinstance(value, Mapping):
        raise ManifestError(f"expected a map of resource quantities, got {type_name(value)}", path)
    cache = _RESOURCE_LIST_CACHE
    for name, raw in value.items():
        if type(name) is not str:
            raise ManifestError(f"resource names must be strings, got {name!r}", path)
        if type(raw) is int and -_MAX_PLAIN_INT <= raw <= _MAX_PLAIN_INT:
            nanos[name] = raw * _NANOS_PER_UNIT
            amounts[name] = raw * 1000 if name == _CPU else raw
            continue
        # Only str keys: True == 1 would otherwise hit the entry of an integer.
        entry = cache.get(raw) if type(raw) is str else None
        if entry is None:
            entry = _resource_list_entry(raw, name, path)
        nanos[name] = entry[0]
        amounts[name] = entry[1] if name == _CPU else entry[2]
    return amounts, nanos


# -- Quantity.String() ---------------------------------------------------------------------------------
def canonical_text(nanos: int, fmt: str) -> str:
    """``Quantity.String()`` of an exact value in ``fmt`` (``BinarySI``, ``DecimalSI`` or
    ``DecimalExponent``), as ``CanonicalizeBytes`` writes it."""
    if fmt == "BinarySI":
        if -1024 * _NANOS_PER_UNIT < nanos < 1024 * _NANOS_PER_UNIT or nanos % _NANOS_PER_UNIT:
            fmt = "DecimalSI"
        else:
            value = nanos // _NANOS_PER_UNIT
            suffixes = ("", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei")
            k = 0
            while k < 6 and value % 1024 == 0 and value != 0:
                value //= 1024
                k += 1
            return f"{value}{suffixes[k]}"
    if nanos == 0:
        return "0"
    # mantissa * 10**exponent, exponent a multiple of 3, the mantissa as small as exact
    mantissa, exponent = nanos, -9
    while mantissa % 1000 == 0 and exponent < 18:
        mantissa //= 1000
        exponent += 3
    if fmt == "DecimalExponent":
        return f"{mantissa}e{exponent}" if exponent else str(mantissa)
    suffix = {-9: "n", -6: "u", -3: "m", 0: "", 3: "k", 6: "M", 9: "G", 12: "T", 15: "P", 18: "E"}[exponent]
    return f"{mantissa}{suffix}"


def format_of(q: Quantity) -> str:
    """The ``Format`` a quantity was parsed with (from its text)."""
    text = str(q)
    if text.endswith("i"):
        return "BinarySI"
    if "e" in text or "E" in text[1:]:
        stripped = text.rstrip("0123456789+-")
        if stripped.endswith(("e", "E")):
            return "DecimalExponent"
    return "DecimalSI"


def canonical(q: Quantity) -> Quantity:
    """``q`` with its text as upstream serializes it (``Quantity.String()``)."""
    return parse_quantity(canonical_text(q.nano_value(), format_of(q)))
