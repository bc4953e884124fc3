"""Field paths and field errors in the form of apimachinery's ``util/validation/field``
(``field.Path``, ``field.Error``), and Go's renderings of values (``strconv.Quote``, ``%v``,
encoding/json), shared by every layer: the API objects' validation, the configuration's, the
plugins' messages. The bottom of the package: it imports nothing of fastsched but ``errors``.

``str(FieldError)`` follows apimachinery's ``field.Error.Error()``: ``<path>: <type>[: <value>][: <detail>]``.
Values are rendered the way Go renders them there: 32/64-bit ints, floats and bools with ``%v``,
strings with ``%q``, anything else as compact JSON (``null`` for nil).
"""

from __future__ import annotations

import base64
import enum
import json
import math
from collections.abc import Iterable
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from ..errors import located


class FieldPath:
    """A field path such as ``profiles[0].plugins.score`` (upstream ``field.Path``)."""

    __slots__ = ("_text",)

    def __init__(self, text: str = "") -> None:
        self._text = text

    def child(self, *names: str) -> FieldPath:
        text = self._text
        for name in names:
            text = f"{text}.{name}" if text else name
        return FieldPath(text)

    def index(self, i: int) -> FieldPath:
        return FieldPath(f"{self._text}[{i}]")

    def key(self, k: str) -> FieldPath:
        return FieldPath(f"{self._text}[{k}]")

    def __str__(self) -> str:
        return self._text

    def __repr__(self) -> str:
        return f"FieldPath({self._text!r})"

    def __eq__(self, other: object) -> bool:
        if isinstance(other, FieldPath):
            return self._text == other._text
        return NotImplemented

    def __hash__(self) -> int:
        return hash(self._text)


def as_path(path: FieldPath | str | None) -> FieldPath:
    """Coerce a str (or None) to a :class:`FieldPath`."""
    if isinstance(path, FieldPath):
        return path
    return FieldPath(path or "")


class ErrorType(enum.Enum):
    """Field error types; the value is upstream's machine-readable name."""

    INVALID = "FieldValueInvalid"
    TYPE_INVALID = "FieldValueTypeInvalid"
    REQUIRED = "FieldValueRequired"
    DUPLICATE = "FieldValueDuplicate"
    NOT_SUPPORTED = "FieldValueNotSupported"
    NOT_FOUND = "FieldValueNotFound"
    FORBIDDEN = "FieldValueForbidden"
    TOO_MANY = "FieldValueTooMany"
    TOO_LONG = "FieldValueTooLong"
    #: Not a ``field.Error`` type: a strict-decoding "unknown field" error.
    UNKNOWN_FIELD = "UnknownField"
    #: Not a ``field.Error`` type: the configuration validates but this field keeps a profile (or
    #: an extender) from being built, as upstream finds when it builds the framework.
    BUILD_FAILED = "BuildFailed"
    #: Not a ``field.Error`` type: the strict JSON decoder refused the value (a wrong JSON type,
    #: an integer out of its Go type's range, a bad duration): ``detail`` is the decoder's own
    #: message (``json: cannot unmarshal string into Go struct field ...``).
    DECODING = "DecodingError"

    @property
    def label(self) -> str:
        """The human-readable form used in messages (``ErrorType.String()``)."""
        return _LABELS[self]


_LABELS = {
    ErrorType.INVALID: "Invalid value",
    ErrorType.TYPE_INVALID: "Invalid value",
    ErrorType.REQUIRED: "Required value",
    ErrorType.DUPLICATE: "Duplicate value",
    ErrorType.NOT_SUPPORTED: "Unsupported value",
    ErrorType.NOT_FOUND: "Not found",
    ErrorType.FORBIDDEN: "Forbidden",
    ErrorType.TOO_MANY: "Too many",
    ErrorType.TOO_LONG: "Too long",
    ErrorType.UNKNOWN_FIELD: "Unknown field",
    ErrorType.BUILD_FAILED: "Cannot build",
    ErrorType.DECODING: "Cannot decode",
}

_VALUELESS = (ErrorType.REQUIRED, ErrorType.FORBIDDEN, ErrorType.TOO_LONG)


class Rendered(str):
    """A value already rendered as Go would print it (e.g. an internal struct as JSON)."""


class GoStruct(dict):
    """A dict rendered as a Go struct: JSON keys keep their order (plain dicts are sorted, as Go maps)."""


@dataclass(frozen=True)
class FieldError:
    """One problem at one field path."""

    path: str
    type: ErrorType
    value: Any = ""
    detail: str = ""

    @classmethod
    def invalid(cls, path: FieldPath | str, value: Any, detail: str) -> FieldError:
        return cls(str(path), ErrorType.INVALID, value, detail)

    @classmethod
    def type_invalid(cls, path: FieldPath | str, value: Any, detail: str) -> FieldError:
        return cls(str(path), ErrorType.TYPE_INVALID, value, detail)

    @classmethod
    def required(cls, path: FieldPath | str, detail: str = "") -> FieldError:
        return cls(str(path), ErrorType.REQUIRED, "", detail)

    @classmethod
    def duplicate(cls, path: FieldPath | str, value: Any) -> FieldError:
        return cls(str(path), ErrorType.DUPLICATE, value)

    @classmethod
    def not_supported(cls, path: FieldPath | str, value: Any, valid: Iterable[str]) -> FieldError:
        quoted = [go_quote(v) for v in valid]
        detail = "supported values: " + ", ".join(quoted) if quoted else ""
        return cls(str(path), ErrorType.NOT_SUPPORTED, value, detail)

    @classmethod
    def not_found(cls, path: FieldPath | str, value: Any) -> FieldError:
        return cls(str(path), ErrorType.NOT_FOUND, value)

    @classmethod
    def forbidden(cls, path: FieldPath | str, detail: str) -> FieldError:
        return cls(str(path), ErrorType.FORBIDDEN, "", detail)

    @classmethod
    def too_many(cls, path: FieldPath | str, actual: int, limit: int) -> FieldError:
        """``field.TooMany``: ``Too many: <actual>: must have at most <limit> items``."""
        return cls(str(path), ErrorType.TOO_MANY, actual, f"must have at most {limit} {'item' if limit == 1 else 'items'}")

    @classmethod
    def too_long(cls, path: FieldPath | str, limit: int) -> FieldError:
        """``field.TooLong``: ``Too long: may not be more than <limit> bytes`` (no value)."""
        return cls(str(path), ErrorType.TOO_LONG, "<value omitted>",
                   f"may not be more than {limit} {'byte' if limit == 1 else 'bytes'}")

    @classmethod
    def unknown_field(cls, path: FieldPath | str) -> FieldError:
        return cls(str(path), ErrorType.UNKNOWN_FIELD)

    @classmethod
    def build_failed(cls, path: FieldPath | str, detail: str) -> FieldError:
        """Building the profile or extender failed because of this field; ``detail`` is the
        builder's message (``str()`` is ``<path>: <detail>``)."""
        return cls(str(path), ErrorType.BUILD_FAILED, "", detail)

    @classmethod
    def decoding(cls, path: FieldPath | str, value: Any, detail: str) -> FieldError:
        """The strict decoder refused ``value`` at ``path`` with message ``detail`` (``str()`` is
        ``<path>: <detail>``: upstream's message, which names no index, after fastsched's path)."""
        return cls(str(path), ErrorType.DECODING, value, detail)

    def body(self) -> str:
        """The message without the field path (upstream ``ErrorBody()``)."""
        if self.type is ErrorType.UNKNOWN_FIELD:
            return self.type.label
        if self.type in (ErrorType.BUILD_FAILED, ErrorType.DECODING):
            return self.detail or self.type.label
        text = self.type.label
        if self.type not in _VALUELESS:
            text += ": " + go_value(self.value)
        if self.detail:
            text += ": " + self.detail
        return text

    def __str__(self) -> str:
        if self.type is ErrorType.UNKNOWN_FIELD:
            # Mirrors the strict decoder's message rather than field.Error's.
            return f"unknown field {go_quote(self.path)}"
        if self.type in (ErrorType.BUILD_FAILED, ErrorType.DECODING):
            return located(self.body(), self.path)
        # apimachinery's "%s: %s" of field and body (an empty field still gets its ": ")
        return f"{self.path}: {self.body()}"


# --------------------------------------------------------------------------------------------
# Go-style value rendering


def go_quote(s: str) -> str:
    """``strconv.Quote``: a double-quoted Go string literal."""
    if s.isascii() and s.isprintable() and '"' not in s and "\\" not in s:
        return f'"{s}"'  # (nothing to escape: names, mostly; the loop costs ~1 µs a character)
    return _go_quote_escaped(s)


def _go_quote_escaped(s: str) -> str:
    """:func:`go_quote` character by character (what the fast path must agree with)."""
    out = ['"']
    for ch in s:
        code = ord(ch)
        if ch == '"' or ch == "\\":
            out.append("\\" + ch)
        elif ch in _GO_ESCAPES:
            out.append(_GO_ESCAPES[ch])
        elif ch == " " or (ch.isprintable() and not ch.isspace()):
            out.append(ch)
        elif code < 0x80:
            out.append(f"\\x{code:02x}")
        elif code <= 0xFFFF:
            out.append(f"\\u{code:04x}")
        else:
            out.append(f"\\U{code:08x}")
    out.append('"')
    return "".join(out)


_GO_ESCAPES = {"\a": "\\a", "\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r", "\t": "\\t", "\v": "\\v"}


def go_float(v: float) -> str:
    """``fmt.Sprintf("%v", float64)``: shortest digits, exponent form when exp < -4 or exp >= 6."""
    if math.isnan(v):
        return "NaN"
    if math.isinf(v):
        return "+Inf" if v > 0 else "-Inf"
    if v == 0:
        return "-0" if math.copysign(1.0, v) < 0 else "0"
    sign, digits, exp = Decimal(repr(v)).normalize().as_tuple()
    assert isinstance(exp, int)  # 'n'/'N'/'F' (NaN, Inf) were answered above
    ds = "".join(map(str, digits))
    point = len(ds) + exp  # position of the decimal point within the digit string
    x = point - 1
    prefix = "-" if sign else ""
    if x < -4 or x >= 6:
        mant = ds[0] + ("." + ds[1:] if len(ds) > 1 else "")
        return f"{prefix}{mant}e{'-' if x < 0 else '+'}{abs(x):02d}"
    if point <= 0:
        return f"{prefix}0.{'0' * -point}{ds}"
    if point >= len(ds):
        return f"{prefix}{ds}{'0' * (point - len(ds))}"
    return f"{prefix}{ds[:point]}.{ds[point:]}"


def go_json(value: Any) -> str:
    """Compact JSON as Go's ``encoding/json`` writes it (maps sorted, ``<>&`` escaped)."""
    text = json.dumps(_jsonable(value), ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    for raw, esc in (
        ("<", "\\u003c"),
        (">", "\\u003e"),
        ("&", "\\u0026"),
        ("\u2028", "\\u2028"),
        ("\u2029", "\\u2029"),
    ):
        text = text.replace(raw, esc)
    return text


def _jsonable(value: Any) -> Any:
    if isinstance(value, GoStruct):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, dict):
        return {str(k): _jsonable(value[k]) for k in sorted(value, key=str)}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    if isinstance(value, (bytes, bytearray)):
        return base64.b64encode(bytes(value)).decode("ascii")
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    to_dict = getattr(value, "to_dict", None)
    if callable(to_dict):
        return _jsonable(GoStruct(to_dict()))
    return str(value)


def go_value(value: Any) -> str:
    """Render a bad value as ``field.Error.ErrorBody`` does."""
    if isinstance(value, Rendered):
        return str(value)
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return go_float(value)
    if isinstance(value, str):
        return go_quote(value)
    return go_json(value)
