"""Strict, table-driven decoding of the v1 (camelCase) form, plus Go duration parsing/formatting.

A :class:`Decoder` collects every problem as a :class:`FieldError` instead of stopping at the first,
so one :class:`ConfigError` can list them all. ``null`` counts as "not set", as it does for Go's
pointer and zero-value fields.
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from ..util.field import FieldError, FieldPath, go_quote

#: Marks a value that failed to decode (its error is already recorded).
ERROR = object()

INT32_RANGE = (-(2**31), 2**31 - 1)
INT64_RANGE = (-(2**63), 2**63 - 1)

Converter = Callable[["Decoder", Any, FieldPath], Any]


class Decoder:
    """Accumulates decoding errors while converting YAML/JSON data."""

    def __init__(self) -> None:
        self.errors: list[FieldError] = []

    def error(self, err: FieldError) -> Any:
        self.errors.append(err)
        return ERROR

    # --- scalars -------------------------------------------------------------------------

    def integer(self, value: Any, path: FieldPath, bounds: tuple[int, int] = INT32_RANGE) -> Any:
        if isinstance(value, bool) or not isinstance(value, int):
            return self.error(FieldError.type_invalid(path, value, "must be an integer"))
        lo, hi = bounds
        if not lo <= value <= hi:
            return self.error(FieldError.type_invalid(path, value, f"not in valid range [{lo}, {hi}]"))
        return value

    def int32(self, value: Any, path: FieldPath) -> Any:
        return self.integer(value, path, INT32_RANGE)

    def int64(self, value: Any, path: FieldPath) -> Any:
        return self.integer(value, path, INT64_RANGE)

    def number(self, value: Any, path: FieldPath) -> Any:
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            return self.error(FieldError.type_invalid(path, value, "must be a number"))
        return float(value)

    def boolean(self, value: Any, path: FieldPath) -> Any:
        if not isinstance(value, bool):
            return self.error(FieldError.type_invalid(path, value, "must be a boolean"))
        return value

    def string(self, value: Any, path: FieldPath) -> Any:
        if not isinstance(value, str):
            return self.error(FieldError.type_invalid(path, value, "must be a string"))
        return value

    def duration(self, value: Any, path: FieldPath) -> Any:
        """A Go duration string (``"30s"``, ``"1m30s"``) as float seconds."""
        if not isinstance(value, str):
            return self.error(FieldError.type_invalid(path, value, 'must be a duration string such as "30s"'))
        try:
            return parse_duration(value)
        except ValueError as exc:
            return self.error(FieldError.invalid(path, value, str(exc)))

    def data(self, value: Any, path: FieldPath) -> Any:
        """A ``[]byte`` field: base64 text in JSON/YAML."""
        if not isinstance(value, str):
            return self.error(FieldError.type_invalid(path, value, "must be a base64-encoded string"))
        try:
            return base64.b64decode(value, validate=True)
        except (binascii.Error, ValueError):
            return self.error(FieldError.invalid(path, value, "illegal base64 data"))

    # --- containers ----------------------------------------------------------------------

    def mapping(self, value: Any, path: FieldPath) -> Any:
        if not isinstance(value, dict):
            return self.error(FieldError.type_invalid(path, value, "must be an object"))
        for key in value:
            if not isinstance(key, str):
                return self.error(FieldError.type_invalid(path.child(str(key)), key, "object keys must be strings"))
        return value

    def list_of(self, value: Any, path: FieldPath, item: Converter) -> Any:
        if not isinstance(value, list):
            return self.error(FieldError.type_invalid(path, value, "must be a list"))
        out = []
        for i, element in enumerate(value):
            if element is None:
                self.error(FieldError.type_invalid(path.index(i), None, "must not be null"))
                continue
            converted = item(self, element, path.index(i))
            if converted is not ERROR:
                out.append(converted)
        return out

    def struct(self, value: Any, path: FieldPath, keys: Iterable[str]) -> dict[str, Any] | None:
        """Check ``value`` is an object with only ``keys``; return its set (non-null) entries."""
        if self.mapping(value, path) is ERROR:
            return None
        allowed = set(keys)
        present = {}
        for key, element in value.items():
            if key not in allowed:
                self.error(FieldError.unknown_field(path.child(key)))
            elif element is not None:
                present[key] = element
        return present

    def fill(self, target: Any, value: Any, path: FieldPath, fields: Sequence[tuple[str, str, Converter]]) -> Any:
        """Decode object ``value`` into ``target`` with a ``(json key, attribute, converter)`` table."""
        present = self.struct(value, path, (key for key, _, _ in fields))
        if present is None:
            return ERROR
        for key, attr, conv in fields:
            if key in present:
                converted = conv(self, present[key], path.child(key))
                if converted is not ERROR:
                    setattr(target, attr, converted)
        return target


def list_of(item: Converter) -> Converter:
    """A converter for a list whose elements use ``item``."""
    return lambda dec, value, path: dec.list_of(value, path, item)


INT32: Converter = Decoder.int32
INT64: Converter = Decoder.int64
NUMBER: Converter = Decoder.number
BOOL: Converter = Decoder.boolean
STR: Converter = Decoder.string
DURATION: Converter = Decoder.duration
BYTES: Converter = Decoder.data
STR_LIST: Converter = list_of(STR)


# --------------------------------------------------------------------------------------------
# Go durations

_UNITS_NS = {
    "ns": 1,
    "us": 1_000,
    "\u00b5s": 1_000,  # micro sign
    "\u03bcs": 1_000,  # Greek mu
    "ms": 1_000_000,
    "s": 1_000_000_000,
    "m": 60 * 1_000_000_000,
    "h": 3600 * 1_000_000_000,
}
_COMPONENT = re.compile(r"([0-9]*)(?:\.([0-9]*))?([^0-9.]*)")


def parse_duration_ns(text: str) -> int:
    """``time.ParseDuration`` in integer nanoseconds; ValueError with Go's message on bad input."""
    s = text
    neg = False
    if s[:1] in ("-", "+"):
        neg = s[0] == "-"
        s = s[1:]
    if s == "0":
        return 0
    if not s:
        raise ValueError(f"time: invalid duration {go_quote(text)}")
    total = 0
    while s:
        m = _COMPONENT.match(s)
        assert m is not None  # every group of the pattern may be empty: it matches any string
        whole, frac, unit = m.group(1), m.group(2), m.group(3)
        if not whole and not frac:
            raise ValueError(f"time: invalid duration {go_quote(text)}")
        if not unit:
            raise ValueError(f"time: missing unit in duration {go_quote(text)}")
        if unit not in _UNITS_NS:
            raise ValueError(f"time: unknown unit {go_quote(unit)} in duration {go_quote(text)}")
        scale = _UNITS_NS[unit]
        total += int(whole or "0") * scale
        if frac:
            total += int(frac) * scale // 10 ** len(frac)
        s = s[m.end() :]
    if total > INT64_RANGE[1]:
        raise ValueError(f"time: invalid duration {go_quote(text)}")
    return -total if neg else total


def parse_duration(text: str) -> float:
    """A Go duration string as float seconds (``"1m30s"`` → 90.0)."""
    return parse_duration_ns(text) / 1e9


def format_duration_ns(ns: int) -> str:
    """``time.Duration.String`` (``90s`` → ``"1m30s"``, ``0.0015s`` → ``"1.5ms"``)."""
    if ns == 0:
        return "0s"
    sign = "-" if ns < 0 else ""
    u = abs(ns)
    if u < 1_000_000_000:
        for limit, unit, digits in ((1_000, "ns", 0), (1_000_000, "\u00b5s", 3), (1_000_000_000, "ms", 6)):
            if u < limit:
                return sign + _frac(u, digits) + unit
    text = _frac(u % 60_000_000_000, 9) + "s"
    minutes = u // 60_000_000_000
    if minutes:
        text = f"{minutes % 60}m" + text
        if minutes >= 60:
            text = f"{minutes // 60}h" + text
    return sign + text


def _frac(value: int, digits: int) -> str:
    """``value / 10**digits`` without trailing zeros (Go's fmtFrac + fmtInt)."""
    if digits == 0:
        return str(value)
    whole, frac = divmod(value, 10**digits)
    frac_text = f"{frac:0{digits}d}".rstrip("0")
    return f"{whole}.{frac_text}" if frac_text else str(whole)


def format_duration(seconds: float) -> str:
    """Float seconds as a Go duration string."""
    return format_duration_ns(round(seconds * 1e9))
