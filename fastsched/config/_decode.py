"""Strict, table-driven decoding of the v1 (camelCase) form, plus Go duration parsing/formatting.

A :class:`Decoder` collects every problem as a :class:`FieldError` instead of stopping at the first,
so one :class:`ConfigError` can list them all. ``null`` counts as "not set", as it does for Go's
pointer and zero-value fields.
"""

from __future__ import annotations

import base64
import binascii
import re
from decimal import Decimal
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from ..util.field import FieldError, FieldPath, go_quote

#: Marks a value that failed to decode (its error is already recorded).
ERROR = object()

INT32_RANGE = (-(2**31), 2**31 - 1)
INT64_RANGE = (-(2**63), 2**63 - 1)

Converter = Callable[["Decoder", Any, FieldPath], Any]


class Decoder:
    """Accumulates decoding errors while converting YAML/JSON data.

    A value of the wrong JSON type (or an integer outside its Go type's range) is reported in the
    words of the strict JSON decoder kube-scheduler loads its configuration with (apimachinery's
    ``serializer/json`` over ``sigs.k8s.io/json``: ``UnmarshalTypeError.Error`` and
    ``decodeState.addErrorContext``): ``json: cannot unmarshal string into Go struct field
    KubeSchedulerConfiguration.parallelism of type int32``, where the struct is the Go type holding
    the field last named and the field is the dotted JSON path from the document's root, without
    list indices. Each message follows fastsched's field path (which has the indices). Upstream
    stops at its first such error; the decoder lists them all, in document order.

    The Go types come from the converters (``go_type`` attributes, see :func:`go_typed`) and from
    :meth:`fill`'s ``go_type`` (the struct being filled). ``root`` is the path at which the JSON
    document being decoded starts (plugin args are a document of their own upstream) and
    ``prefix`` what upstream puts before the decoder's message there (``decoding
    .profiles[0].pluginConfig[1]: decoding args for plugin X: ``).
    """

    def __init__(self) -> None:
        self.errors: list[FieldError] = []
        #: the Go type (``v1.KubeSchedulerProfile``) of the struct whose field is being decoded
        self._struct: str | None = None
        self.root = ""
        self.prefix = ""

    def error(self, err: FieldError) -> Any:
        self.errors.append(err)
        return ERROR

    def type_error(self, value: Any, path: FieldPath, go_type: str, numeric: bool = False) -> Any:
        """Record encoding/json's UnmarshalTypeError for ``value`` decoded into ``go_type``."""
        what = _json_kind(value, numeric)
        if self._struct is None:
            text = f"json: cannot unmarshal {what} into Go value of type {go_type}"
        else:
            go_path = str(path)
            if self.root and go_path.startswith(self.root + "."):
                go_path = go_path[len(self.root) + 1:]
            go_path = _INDEX.sub("", go_path)
            if self._struct == "v1.KubeSchedulerConfiguration" and go_path in _DEBUGGING_FIELDS:
                # fields of the embedded DebuggingConfiguration: encoding/json's field stack
                # names the embedded struct
                go_path = "DebuggingConfiguration." + go_path
            text = (f"json: cannot unmarshal {what} into Go struct field "
                    f"{self._struct.rpartition('.')[2]}.{go_path} of type {go_type}")
        return self.error(FieldError.decoding(path, value, self.prefix + text))

    # --- scalars -------------------------------------------------------------------------

    def integer(self, value: Any, path: FieldPath, bounds: tuple[int, int] = INT32_RANGE,
                go_type: str = "int32") -> Any:
        if isinstance(value, float) and value.is_integer():
            # YAML's 16.0 reaches the JSON decoder as 16: sigs.k8s.io/yaml re-encodes floats
            # with encoding/json, which writes an integral float without a fraction
            value = int(value)
        if isinstance(value, bool) or not isinstance(value, int):
            return self.type_error(value, path, go_type, numeric=True)
        lo, hi = bounds
        if not lo <= value <= hi:
            return self.type_error(value, path, go_type, numeric=True)
        return value

    def int32(self, value: Any, path: FieldPath) -> Any:
        return self.integer(value, path, INT32_RANGE, "int32")

    def int64(self, value: Any, path: FieldPath) -> Any:
        return self.integer(value, path, INT64_RANGE, "int64")

    def number(self, value: Any, path: FieldPath) -> Any:
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            return self.type_error(value, path, "float32")
        return float(value)

    def boolean(self, value: Any, path: FieldPath) -> Any:
        if not isinstance(value, bool):
            return self.type_error(value, path, "bool")
        return value

    def string(self, value: Any, path: FieldPath, go_type: str = "string") -> Any:
        if not isinstance(value, str):
            return self.type_error(value, path, go_type)
        return value

    def duration_value(self, value: Any, path: FieldPath) -> Any:
        """A ``metav1.Duration`` field that is no pointer: encoding/json calls its UnmarshalJSON
        with a null too, which leaves the string empty: ``time: invalid duration ""``."""
        return self.duration("" if value is None else value, path)

    def duration(self, value: Any, path: FieldPath) -> Any:
        """A Go duration string (``"30s"``, ``"1m30s"``) as float seconds.

        ``metav1.Duration.UnmarshalJSON`` decodes a string (a type error names the field's struct
        and ``string``: the oracle's answer) and parses it with ``time.ParseDuration``, whose
        error is reported as it is."""
        if not isinstance(value, str):
            return self.type_error(value, path, "string")
        try:
            return parse_duration(value)
        except ValueError as exc:
            return self.error(FieldError.decoding(path, value, self.prefix + str(exc)))

    def data(self, value: Any, path: FieldPath) -> Any:
        """A ``[]byte`` field: base64 text in JSON/YAML."""
        if not isinstance(value, str):
            return self.type_error(value, path, "[]uint8")
        try:
            return base64.b64decode(value, validate=True)
        except (binascii.Error, ValueError):
            return self.error(FieldError.invalid(path, value, "illegal base64 data"))

    # --- containers ----------------------------------------------------------------------

    def mapping(self, value: Any, path: FieldPath, go_type: str = "map[string]interface {}") -> Any:
        if not isinstance(value, dict):
            return self.type_error(value, path, go_type)
        for key in value:
            if not isinstance(key, str):
                return self.error(FieldError.type_invalid(path.child(str(key)), key, "object keys must be strings"))
        return value

    def list_of(self, value: Any, path: FieldPath, item: Converter) -> Any:
        if not isinstance(value, list):
            return self.type_error(value, path, "[]" + go_type_of(item))
        out = []
        for i, element in enumerate(value):
            if element is None:
                # encoding/json leaves a null element at its zero value (an empty struct, "")
                zero = getattr(item, "zero", None)
                if zero is None:
                    self.error(FieldError.type_invalid(path.index(i), None, "must not be null"))
                    continue
                element = zero()
            converted = item(self, element, path.index(i))
            if converted is not ERROR:
                out.append(converted)
        return out

    def struct(self, value: Any, path: FieldPath, keys: Iterable[str],
               go_type: str = "map[string]interface {}", takes_null: Iterable[str] = ()) -> dict[str, Any] | None:
        """Check ``value`` is an object with only ``keys``; return its set (non-null) entries, and
        the null ones of ``takes_null`` (fields whose JSON unmarshaler is called with null)."""
        if self.mapping(value, path, go_type) is ERROR:
            return None
        allowed = set(keys)
        present = {}
        for key, element in value.items():
            if key not in allowed:
                self.error(FieldError.unknown_field(path.child(key)))
            elif element is not None or key in takes_null:
                present[key] = element
        return present

    def fill(self, target: Any, value: Any, path: FieldPath, fields: Sequence[tuple[str, str, Converter]],
             go_type: str = "map[string]interface {}") -> Any:
        """Decode object ``value`` into ``target`` with a ``(json key, attribute, converter)`` table;
        ``go_type`` is the Go struct ``target`` stands for (``v1.KubeSchedulerProfile``)."""
        present = self.struct(value, path, (key for key, _, _ in fields), go_type,
                              [key for key, _, conv in fields if getattr(conv, "takes_null", False)])
        if present is None:
            return ERROR
        outer, self._struct = self._struct, go_type
        try:
            for key, attr, conv in fields:
                if key in present:
                    converted = conv(self, present[key], path.child(key))
                    if converted is not ERROR:
                        setattr(target, attr, converted)
        finally:
            self._struct = outer
        return target

    def fields(self, value: Any, path: FieldPath, fields: Sequence[tuple[str, Converter]], go_type: str) -> Any:
        """Decode object ``value`` strictly with a ``(json key, converter)`` table into a plain dict
        of its set fields (nulls dropped); ``go_type`` as for :meth:`fill`."""
        present = self.struct(value, path, (k for k, _ in fields), go_type)
        if present is None:
            return ERROR
        out = {}
        outer, self._struct = self._struct, go_type
        try:
            for key, conv in fields:
                if key in present:
                    converted = conv(self, present[key], path.child(key))
                    if converted is not ERROR:
                        out[key] = converted
        finally:
            self._struct = outer
        return out


_DEBUGGING_FIELDS = frozenset(("enableProfiling", "enableContentionProfiling"))
_INDEX = re.compile(r"\[[^\]]*\]")


def _json_kind(value: Any, numeric: bool = False) -> str:
    """What encoding/json calls a JSON value in its errors: ``string``, ``bool``, ``array``,
    ``object``, ``number`` (``number 1.5``, the literal, when decoding into a number type)."""
    if isinstance(value, str):
        return "string"
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, (int, float)):
        return "number " + go_number_text(value) if numeric else "number"
    if isinstance(value, (list, tuple)):
        return "array"
    if isinstance(value, dict):
        return "object"
    return "string"  # (YAML timestamps and the like: sigs.k8s.io/yaml writes them as JSON strings)


def go_number_text(value: float | int) -> str:
    """A YAML number as sigs.k8s.io/yaml hands it to the JSON decoder: encoding/json's float64
    encoding (shortest digits; exponent form below 1e-6 and from 1e21, ``e-07`` shortened to
    ``e-7``)."""
    if isinstance(value, int):
        return str(value)
    if value != value:
        return "NaN"
    if value in (float("inf"), float("-inf")):
        return "-Inf" if value < 0 else "+Inf"
    if value.is_integer() and abs(value) < 1e21:
        return str(int(value))
    text = repr(value)
    if value != 0 and (abs(value) < 1e-6 or abs(value) >= 1e21):
        mantissa, _, exponent = text.partition("e")
        sign, digits = exponent[0], exponent[1:].lstrip("0") or "0"
        return f"{mantissa}e{sign}{digits.zfill(2) if sign == '+' else digits}"
    if "e" in text:
        return format(Decimal(text), "f")
    return text


def go_typed(conv: Converter, go_type: str, zero: Callable[[], Any] | None = None) -> Converter:
    """``conv`` marked with the Go type it decodes (named in type errors of the list holding it)
    and, when encoding/json decodes a null list element of that type without complaint, the JSON
    value standing for its zero value (``dict`` for a struct, ``str`` for a string)."""
    conv.go_type = go_type  # type: ignore[attr-defined]
    if zero is not None:
        conv.zero = zero  # type: ignore[attr-defined]
    return conv


def go_type_of(conv: Converter) -> str:
    return getattr(conv, "go_type", "interface {}")


def list_of(item: Converter) -> Converter:
    """A converter for a list whose elements use ``item``."""
    return go_typed(lambda dec, value, path: dec.list_of(value, path, item), "[]" + go_type_of(item), list)


def struct_of(go_type: str) -> Callable[[Converter], Converter]:
    """Decorate a struct's converter with the struct's Go type; a null element of a list of it
    decodes as an empty object, as encoding/json leaves it at the zero struct."""
    return lambda decode: go_typed(decode, go_type, dict)


#: the Go type of the struct apimachinery reads a document's apiVersion and kind into first
#: (``SimpleMetaFactory.Interpret``), as reflect prints it
_TYPE_META_STRUCT = ('struct { APIVersion string "json:\\"apiVersion,omitempty\\""; '
                     'Kind string "json:\\"kind,omitempty\\"" }')
_TYPE_META_ERROR = "couldn't get version/kind; json parse error: "


def type_meta_error(data: Any, path: FieldPath | None = None, prefix: str = "") -> FieldError | None:
    """The error ``SimpleMetaFactory.Interpret`` (standard encoding/json) stops a document with
    before decoding it: not an object, or an ``apiVersion``/``kind`` that is no string (the first
    in document order); None when it reads them."""
    path = path if path is not None else FieldPath()
    if not isinstance(data, dict):
        return FieldError.decoding(path, data, f"{prefix}{_TYPE_META_ERROR}json: cannot unmarshal "
                                               f"{_json_kind(data)} into Go value of type {_TYPE_META_STRUCT}")
    for key, value in data.items():
        if key in ("apiVersion", "kind") and value is not None and not isinstance(value, str):
            return FieldError.decoding(path.child(key), value,
                                       f"{prefix}{_TYPE_META_ERROR}json: cannot unmarshal {_json_kind(value)} "
                                       f"into Go struct field .{key} of type string")
    return None


def string_of(go_type: str) -> Converter:
    """A converter of a Go string type named ``go_type`` (``v1.ScoringStrategyType``)."""
    return go_typed(lambda dec, value, path: dec.string(value, path, go_type), go_type, str)


INT32: Converter = go_typed(lambda dec, value, path: dec.int32(value, path), "int32")
INT64: Converter = go_typed(lambda dec, value, path: dec.int64(value, path), "int64")
NUMBER: Converter = go_typed(lambda dec, value, path: dec.number(value, path), "float32")
BOOL: Converter = go_typed(lambda dec, value, path: dec.boolean(value, path), "bool")
STR: Converter = string_of("string")
#: a ``*metav1.Duration`` (null: unset)
DURATION: Converter = go_typed(lambda dec, value, path: dec.duration(value, path), "v1.Duration")
#: a ``metav1.Duration`` (null: refused, see :meth:`Decoder.duration_value`)
DURATION_VALUE: Converter = go_typed(lambda dec, value, path: dec.duration_value(value, path), "v1.Duration")
DURATION_VALUE.takes_null = True  # type: ignore[attr-defined]
BYTES: Converter = go_typed(lambda dec, value, path: dec.data(value, path), "[]uint8")
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


def _time_quote(s: str) -> str:
    """The time package's own ``quote`` (not strconv's): a non-ASCII or control character is
    written as its UTF-8 bytes in ``\\x`` escapes."""
    out = ['"']
    for ch in s:
        if ord(ch) >= 0x80 or ch < " ":
            out.extend(f"\\x{byte:02x}" for byte in ch.encode("utf-8", "surrogatepass"))
        else:
            out.append("\\" + ch if ch in '"\\' else ch)
    out.append('"')
    return "".join(out)


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
        raise ValueError(f"time: invalid duration {_time_quote(text)}")
    total = 0
    while s:
        m = _COMPONENT.match(s)
        assert m is not None  # every group of the pattern may be empty: it matches any string
        whole, frac, unit = m.group(1), m.group(2), m.group(3)
        if not whole and not frac:
            raise ValueError(f"time: invalid duration {_time_quote(text)}")
        if not unit:
            raise ValueError(f"time: missing unit in duration {_time_quote(text)}")
        if unit not in _UNITS_NS:
            raise ValueError(f"time: unknown unit {_time_quote(unit)} in duration {_time_quote(text)}")
        scale = _UNITS_NS[unit]
        total += int(whole or "0") * scale
        if frac:
            total += int(frac) * scale // 10 ** len(frac)
        s = s[m.end() :]
    if total > INT64_RANGE[1]:
        raise ValueError(f"time: invalid duration {_time_quote(text)}")
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
