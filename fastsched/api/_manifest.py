"""Typed access to manifest dicts, shared by the object parsers.

Manifests come either in the API's camelCase form or as the snake_case dicts that the official
``kubernetes`` client's ``to_dict()`` produces. :func:`get_field` looks a structural field up under
both spellings; the contents of maps (labels, resource lists, ...) are never key-converted.
Every helper raises :class:`ManifestError` naming the field path when a value has the wrong type.
"""
from __future__ import annotations

import re
from datetime import datetime, timezone
from typing import Any, Mapping, NoReturn

from .errors import ManifestError


class FrozenDict(dict):
    """A read-only dict: mutation raises TypeError. Unlike ``types.MappingProxyType`` it can be
    pickled, deep-copied and hashed, and reading it costs no more than reading a dict."""

    __slots__ = ()

    def _read_only(self, *args: Any, **kwargs: Any) -> NoReturn:
        raise TypeError(f"{type(self).__name__} is read-only")

    __setitem__ = __delitem__ = __ior__ = _read_only
    clear = pop = popitem = setdefault = update = _read_only

    def __reduce__(self):
        return (type(self), (dict(self),))

    def __copy__(self) -> "FrozenDict":
        return self

    def __deepcopy__(self, memo: dict) -> "FrozenDict":
        return self

    def __hash__(self) -> int:  # type: ignore[override]
        return hash(frozenset(self.items()))

    def __repr__(self) -> str:
        return f"FrozenDict({dict.__repr__(self)})"


EMPTY_MAP: Mapping[str, Any] = FrozenDict()

_CAMEL_HUMP_RE = re.compile(r"(?<=[a-z0-9])([A-Z]+)")
_SNAKE_ALIASES: dict[str, str] = {}


def _snake_case(key: str) -> str:
    # "hostIP" -> "host_ip", "nodeName" -> "node_name": the client's attribute names.
    return _CAMEL_HUMP_RE.sub(lambda match: "_" + match.group(1).lower(), key)


def get_field(obj: Mapping[str, Any], key: str) -> Any:
    """``obj[key]`` under its camelCase or snake_case spelling; None when absent or null."""
    value = obj.get(key)
    if value is None:
        snake = _SNAKE_ALIASES.get(key)
        if snake is None:
            snake = _SNAKE_ALIASES[key] = _snake_case(key)
        if snake != key:
            value = obj.get(snake)
    return value


_SIMPLE_KEY_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_-]*")


def child_path(path: str | None, key: str) -> str:
    """``path.key`` for identifier-like keys, ``path[key]`` for keys such as ``nvidia.com/gpu``."""
    if _SIMPLE_KEY_RE.fullmatch(key):
        return f"{path}.{key}" if path else key
    return f"{path}[{key}]" if path else f"[{key}]"


def type_name(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, Mapping):
        return "map"
    if isinstance(value, (list, tuple)):
        return "list"
    if isinstance(value, str):
        return "string"
    return type(value).__name__


def as_map(value: Any, path: str) -> Mapping[str, Any]:
    """The value as a mapping (None counts as absent: an empty map)."""
    if type(value) is dict:
        return value
    if value is None:
        return EMPTY_MAP
    if isinstance(value, Mapping):
        return value
    raise ManifestError(f"expected a map, got {type_name(value)}", path)


def as_list(value: Any, path: str) -> list | tuple:
    """The value as a list (None counts as absent: an empty list)."""
    if type(value) is list:
        return value
    if value is None:
        return ()
    if isinstance(value, tuple):
        return value
    raise ManifestError(f"expected a list, got {type_name(value)}", path)


def as_str(value: Any, path: str, default: str = "") -> str:
    if type(value) is str:
        return value
    if value is None:
        return default
    raise ManifestError(f"expected a string, got {type_name(value)} {value!r}", path)


def as_optional_str(value: Any, path: str) -> str | None:
    if value is None or type(value) is str:
        return value
    raise ManifestError(f"expected a string, got {type_name(value)} {value!r}", path)


def as_int(value: Any, path: str) -> int | None:
    """An integer field (None when absent). Booleans and floats are rejected, as in Go's decoder."""
    if type(value) is int or value is None:
        return value
    raise ManifestError(f"expected an integer, got {type_name(value)} {value!r}", path)


def as_bool(value: Any, path: str, default: bool = False) -> bool:
    if value is None:
        return default
    if type(value) is bool:
        return value
    raise ManifestError(f"expected a boolean, got {type_name(value)} {value!r}", path)


def as_string_map(value: Any, path: str) -> Mapping[str, str]:
    """A map of strings to strings (labels, annotations, nodeSelector), as a FrozenDict copy."""
    if value is None:
        return EMPTY_MAP
    if type(value) is not dict:
        if not isinstance(value, Mapping):
            raise ManifestError(f"expected a map of strings, got {type_name(value)}", path)
        value = dict(value)
    nulls = None
    for key, item in value.items():
        if type(item) is not str or type(key) is not str:
            if type(key) is not str:
                raise ManifestError(f"keys must be strings, got {key!r}", path)
            if item is None:  # Go decodes null into a string as "" (the zero value)
                nulls = (nulls or []) + [key]
                continue
            raise ManifestError(f"expected a string, got {type_name(item)} {item!r}", child_path(path, key))
    if nulls:
        value = {key: ("" if key in nulls else item) for key, item in value.items()}
    return FrozenDict(value)


def as_string_tuple(value: Any, path: str) -> tuple[str, ...]:
    """A list of strings as a tuple."""
    items = as_list(value, path)
    for index, item in enumerate(items):
        if type(item) is not str:
            if item is None:  # Go decodes null into a string as "" (the zero value)
                return _strings_with_nulls(items, path)
            raise ManifestError(f"expected a string, got {type_name(item)} {item!r}", f"{path}[{index}]")
    return tuple(items)


def _strings_with_nulls(items: Any, path: str) -> tuple[str, ...]:
    out = []
    for index, item in enumerate(items):
        if item is None:
            item = ""
        elif type(item) is not str:
            raise ManifestError(f"expected a string, got {type_name(item)} {item!r}", f"{path}[{index}]")
        out.append(item)
    return tuple(out)


#: RFC 3339 text -> its epoch seconds, for the strings as_timestamp parsed lately. A manifest's
#: timestamp is parsed twice (the schema decoder's check, then the decoder), and a dump's pods
#: share them (a Deployment's pods created in the same second; a pending pod's PodScheduled
#: condition written when it was created): ~1.3 µs a parse against one dict lookup. Bounded:
#: cleared when it holds _MAX_PARSED_TIMESTAMPS strings. Only successful parses are kept.
_PARSED_TIMESTAMPS: dict[str, float] = {}
_MAX_PARSED_TIMESTAMPS = 4096


def as_timestamp(value: Any, path: str | None) -> float | None:
    """An RFC 3339 timestamp as float seconds since the Unix epoch (None when absent).

    Accepts the API's string form, the ``datetime`` that YAML loaders and the kubernetes client
    produce (naive values are taken as UTC), and plain numbers (already epoch seconds).
    """
    if value is None:
        return None
    if type(value) is str:
        seconds = _PARSED_TIMESTAMPS.get(value)
        if seconds is not None:
            return seconds
        text = value
        try:
            if text.endswith(("Z", "z")):
                text = text[:-1] + "+00:00"
            parsed = datetime.fromisoformat(text)
        except ValueError:
            raise ManifestError(f"invalid RFC 3339 timestamp {value!r}", path) from None
        if parsed.tzinfo is None:
            parsed = parsed.replace(tzinfo=timezone.utc)
        seconds = parsed.timestamp()
        if len(_PARSED_TIMESTAMPS) >= _MAX_PARSED_TIMESTAMPS:
            _PARSED_TIMESTAMPS.clear()
        _PARSED_TIMESTAMPS[value] = seconds
        return seconds
    if isinstance(value, datetime):
        if value.tzinfo is None:
            value = value.replace(tzinfo=timezone.utc)
        return value.timestamp()
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return float(value)
    raise ManifestError(f"expected an RFC 3339 timestamp, got {type_name(value)} {value!r}", path)
