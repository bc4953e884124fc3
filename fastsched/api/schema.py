"""Schema-driven decoding of Kubernetes manifests: field names matched the way Kubernetes does.

:func:`decode` walks a manifest dict along the API schema of its kind (``_schema.json``, generated
from the official ``kubernetes`` 34.1.0 client models by ``tools/generate_api_schema.py``) and
returns it canonical: every struct field under its camelCase JSON name. Each key
is matched to a field

a. exactly, by its JSON name (``nodeName``);
b. else by the snake_case attribute name the kubernetes client's ``to_dict()`` writes
   (``node_name``, ``host_i_ps``, ``_exec``: the client's own ``attribute_map``, not a guess);
c. else case-insensitively, as Go's ``encoding/json`` does (``sigs.k8s.io/yaml`` decodes with it:
   upstream's scheduler_perf templates write ``NodeTaintsPolicy: Honor``). ASCII letters fold, and
   so do the two non-ASCII runes whose Unicode fold orbit holds an ASCII letter (KELVIN SIGN ~ k,
   LATIN SMALL LETTER LONG S ~ s). These matches are listed in :attr:`Decoded.case_folded`: the
   API server itself decodes case-sensitively and would drop them.

Keys that match no field are dropped and listed in :attr:`Decoded.unknown` by field path
(``spec.containers[0].resources.requets``), like the API server's strict field validation.

Keys are taken in document order. Two keys that land on the same field (``nodeName`` and
``node_name``, ``labels`` and ``Labels``) decode as Go decodes a repeated key: the later value
wins, except that a struct or map decoded over an earlier struct or map is merged into it, the
later keys winning (Go decodes into the existing struct/map); lists and scalars are replaced.

Values: structs recurse; ``list[T]`` items recurse when ``T`` is a struct; ``dict(str, T)`` keeps
its keys untouched (labels, annotations, resource lists, nodeSelector are free-form) and recurses
into values only when ``T`` is a struct. Primitives and free-form ``object`` values (RawExtension,
IntOrString) are copied as is; ``None`` stays ``None`` (Go leaves the field unset).

Types: every value must have a JSON type its field's Go type takes (``_go_types.py``, generated
from k8s.io/api and k8s.io/apimachinery by ``tools/generate_go_types.py``): an object for a
struct or map, an array for a slice, a string for string types, an integer in range for int32 and
int64, a bool for bool, a quantity string or number for resource.Quantity, a string or int32 for
IntOrString, an RFC 3339 string for metav1.Time (quantities and times are parsed, as their
UnmarshalJSON methods parse them). Anything else raises :class:`~.errors.ManifestError` at
the field path (``spec.volumes[0].persistentVolumeClaim``) with encoding/json's message, as the
API server refuses it: ``json: cannot unmarshal string into Go struct field
Volume.spec.volumes.persistentVolumeClaim of type v1.PersistentVolumeClaimVolumeSource`` (Go
names the struct holding the field and the JSON path without indices). The first such value in
document order is reported, as Go reports the first. The structure
(struct dicts, lists of structs, maps of structs) is new; leaves, free-form maps and lists of
primitives are shared with the input, which is never modified. A document already written with
the API's own names throughout (the common case: ``kubectl`` dumps, hand-written manifests) is
returned as it is, after one read-only walk: nothing is copied.

Map keys appear in paths as ``.key`` when they are identifiers and as ``[key]`` otherwise
(``spec.devices[0].attributes[dra.example.com/model].bool``).

The schema is compiled once, on first use, into per-type tables; matching a key exactly costs one
dict lookup, and a document with no unknown or case-folded key builds no path strings.
"""
from __future__ import annotations

import json
import re
import threading
from dataclasses import dataclass
from importlib import resources
from datetime import date as _date
from collections.abc import Mapping as _MappingABC
from typing import Any, Callable, Mapping

from ._manifest import as_timestamp as _as_timestamp
from ._manifest import child_path as _child_path
from .errors import ManifestError, QuantityError
from .quantity import _AMOUNT_CACHE as _QUANTITY_CACHE
from .quantity import _amounts as _quantity_amounts
from ..util.goyaml import GoFloat, go_float_text, json_float

__all__ = ["Decoded", "JSONFloat", "decode", "schema_kinds", "schema_api_version", "schema_client_version", "typed_yaml",
           "TYPED_YAML_KINDS"]


@dataclass(frozen=True, slots=True)
class Decoded:
    """The result of :func:`decode`."""

    document: dict
    """Canonical copy: every struct field under its camelCase JSON name, unknown fields dropped."""
    unknown: tuple[str, ...]
    """Field paths of the keys that match no field, e.g. ``spec.nodeSelecter``."""
    case_folded: tuple[str, ...]
    """Field paths (as written) of the keys matched only case-insensitively."""


# --------------------------------------------------------------------------------------------
# Compiled schema
# --------------------------------------------------------------------------------------------
class _Struct:
    """A struct type: ``fields`` maps each JSON name to ``(json_name, sub)`` where ``sub`` is the
    compiled value type (None for leaves). ``aliases`` maps client attribute names, ``folded``
    the Go-folded JSON names, to the same entries. ``maps`` names the leaf fields that are maps
    (merged, not replaced, by a repeated key). ``leaves`` holds the :class:`_Leaf` check of each
    leaf field, ``go`` each field's Go type (for messages) and ``go_name`` the Go struct's name."""

    __slots__ = ("name", "fields", "aliases", "folded", "maps", "leaves", "go", "go_name")

    def __init__(self, name: str):
        self.name = name
        self.fields: dict[str, tuple[str, Any]] = {}
        self.aliases: dict[str, tuple[str, Any]] = {}
        self.folded: dict[str, tuple[str, Any]] = {}
        self.maps: frozenset[str] = frozenset()
        self.leaves: dict[str, _Leaf] = {}
        self.go: dict[str, str] = {}
        self.go_name = _MODEL_PREFIX_RE.sub("", name)


class _List:
    __slots__ = ("item",)

    def __init__(self, item: Any):
        self.item = item


class _Map:
    __slots__ = ("item",)

    def __init__(self, item: Any):
        self.item = item


_MODEL_PREFIX_RE = re.compile(r"^(?:CoreV1|ResourceV1|StorageV1|V1(?:alpha[0-9]+|beta[0-9]+)?)")
_INT_RANGES = {"int8": (-2**7, 2**7 - 1), "int16": (-2**15, 2**15 - 1), "int32": (-2**31, 2**31 - 1),
               "int64": (-2**63, 2**63 - 1), "int": (-2**63, 2**63 - 1), "uint8": (0, 2**8 - 1),
               "byte": (0, 2**8 - 1), "uint16": (0, 2**16 - 1), "uint32": (0, 2**32 - 1),
               "uint64": (0, 2**64 - 1), "uint": (0, 2**64 - 1)}
# apimachinery's quantity grammar, as ParseQuantity's ErrFormatWrong prints it
_QUANTITY_FORMAT = "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"


_SIMPLE = {"string": frozenset({str}), "time": frozenset(), "bool": frozenset({bool}),
           "quantity": frozenset(), "intstr": frozenset({str}), "float": frozenset({int, float})}


class _Leaf:
    """The JSON values a leaf field takes, by its Go type (``go``, as encoding/json prints it).

    ``kind`` is one of ``string``, ``bool``, ``int`` (``low``..``high``), ``float``,
    ``quantity`` (resource.Quantity: a string or a number that parses as a quantity), ``intstr``
    (IntOrString: a string or an int32), ``time`` (metav1.Time: an RFC 3339 string), ``raw``
    (RawExtension, FieldsV1: any JSON),
    ``list`` and ``map`` (of ``item``). A ``date``/``datetime`` (what YAML loaders and client
    models give for timestamps) counts as the string it stands for.
    """

    __slots__ = ("go", "kind", "item", "low", "high", "simple", "ok")

    def __init__(self, go: str, kind: str, item: "_Leaf | None" = None, low: int = 0, high: int = 0):
        self.go = go
        self.kind = kind
        self.item = item
        self.low = low
        self.high = high
        # types always accepted (checked inline by the walkers), and ok(value): whether a value
        # of any other type is accepted
        self.simple: frozenset = _SIMPLE.get(kind, frozenset())
        self.ok: Callable[[Any], bool] = getattr(self, "_ok_" + kind)

    def _ok_string(self, value: Any) -> bool:
        return isinstance(value, (str, _date))

    def _ok_time(self, value: Any) -> bool:
        if isinstance(value, _date):
            return True
        if not isinstance(value, str):
            return False
        try:
            _as_timestamp(value, None)  # metav1.Time.UnmarshalJSON parses it (RFC 3339)
        except ManifestError:
            return False
        return True

    def _ok_int(self, value: Any) -> bool:
        return type(value) is int and self.low <= value <= self.high

    def _ok_bool(self, value: Any) -> bool:
        return type(value) is bool

    def _ok_list(self, value: Any) -> bool:
        if not isinstance(value, (list, tuple)):
            return False
        item = self.item
        assert item is not None  # a list's and a map's leaves have an item
        simple, ok = item.simple, item.ok
        for element in value:
            if type(element) not in simple and element is not None and not ok(element):
                return False
        return True

    def _ok_map(self, value: Any) -> bool:
        if type(value) is not dict and not isinstance(value, _MappingABC):
            return False
        item = self.item
        assert item is not None  # a list's and a map's leaves have an item
        simple, ok = item.simple, item.ok
        for element in value.values():
            if type(element) not in simple and element is not None and not ok(element):
                return False
        return True

    def _ok_quantity(self, value: Any) -> bool:
        if type(value) is str and value in _QUANTITY_CACHE:  # parsed before
            return True
        if not isinstance(value, (str, int, float)) or type(value) is bool:
            return False
        try:
            _quantity_amounts(value, None)  # Quantity.UnmarshalJSON parses it (cached by text)
        except QuantityError:
            return False
        return True

    def _ok_intstr(self, value: Any) -> bool:
        return isinstance(value, str) or (type(value) is int and -2**31 <= value < 2**31)

    def _ok_float(self, value: Any) -> bool:
        return isinstance(value, (int, float)) and type(value) is not bool

    def _ok_raw(self, value: Any) -> bool:
        return True

    def error(self, value: Any, path: str, struct: str, go_path: str) -> "ManifestError":
        """The decoder's error for ``value`` (which :meth:`ok` refused) at ``path``."""
        kind, item = self.kind, self.item
        if kind == "list" and item is not None and isinstance(value, (list, tuple)):
            for index, element in enumerate(value):
                if element is not None and not item.ok(element):
                    return item.error(element, f"{path}[{index}]", struct, go_path)
        if kind == "map" and item is not None and isinstance(value, Mapping):
            for key, element in value.items():
                if element is not None and not item.ok(element):
                    return item.error(element, _child_path(path, _key_text(key)), struct, go_path)
        if kind == "quantity":
            if isinstance(value, (str, int, float)) and type(value) is not bool:
                try:  # a string or number that is no quantity: the quantity parser's own message
                    _quantity_amounts(value, path)
                except QuantityError as error:
                    return error
            return ManifestError(_QUANTITY_FORMAT, path)
        if kind == "time" and isinstance(value, str):
            try:  # a string that is no RFC 3339 time: the timestamp reader's own message
                _as_timestamp(value, path)
            except ManifestError as error:
                return error
        if kind == "time":  # metav1.Time.UnmarshalJSON decodes a string first
            return ManifestError(f"json: cannot unmarshal {_json_kind(value)} into Go value of type string", path)
        if kind == "intstr":  # IntOrString.UnmarshalJSON decodes a non-string as an int32
            return ManifestError(f"json: cannot unmarshal {_json_kind(value, True)} into Go value of type int32",
                                 path)
        return ManifestError(_mismatch(value, self.go, struct, go_path, kind in ("int", "float")), path)


class JSONFloat(float):
    """A JSON number with a fraction or an exponent, as read from JSON text: ``literal`` is its
    text, which encoding/json quotes in its errors (``number 1e3``, ``number 1e400``)."""

    __slots__ = ("literal",)
    literal: str

    @classmethod
    def parse(cls, text: str) -> "JSONFloat":
        number = cls(text)
        number.literal = text
        return number


def _json_kind(value: Any, numeric: bool = False) -> str:
    """What encoding/json calls a value in its errors: ``string``, ``number`` (``number 1.5``
    when it was decoding into a number type), ``bool``, ``array``, ``object``."""
    if isinstance(value, (str, _date)):
        return "string"
    if type(value) is bool:
        return "bool"
    if isinstance(value, (int, float)):
        if not numeric:
            return "number"
        literal = getattr(value, "literal", None)
        if literal is not None:
            return f"number {literal}"
        if isinstance(value, float) and value != value:
            return "number NaN"
        if isinstance(value, float) and value in (float("inf"), float("-inf")):
            return "number " + ("-" if value < 0 else "") + "1e999"
        return f"number {value!r}"
    if isinstance(value, Mapping):
        return "object"
    if isinstance(value, (list, tuple)):
        return "array"
    return type(value).__name__


def _mismatch(value: Any, go: str, struct: str, go_path: str, numeric: bool = False) -> str:
    """encoding/json's UnmarshalTypeError text for a struct field."""
    return f"json: cannot unmarshal {_json_kind(value, numeric)} into Go struct field {struct}.{go_path} of type {go}"


_SCHEMA_LEAF_GO = {"str": "string", "int": "int64", "bool": "bool", "datetime": "v1.Time", "object": "raw",
                   "float": "float64", "date": "string"}


def _go_leaf(go: str, kinds: Mapping[str, str], display: str | None = None) -> _Leaf:
    """The :class:`_Leaf` of Go type ``go`` (named types resolved through ``kinds``)."""
    shown = display or go
    if go in ("string", "types.UID", "[]byte"):
        return _Leaf(shown, "string")
    if go == "bool":
        return _Leaf(shown, "bool")
    if go in _INT_RANGES:
        low, high = _INT_RANGES[go]
        return _Leaf(shown, "int", low=low, high=high)
    if go in ("float32", "float64"):
        return _Leaf(shown, "float")
    if go == "resource.Quantity":
        return _Leaf(shown, "quantity")
    if go == "intstr.IntOrString":
        return _Leaf(shown, "intstr")
    if go in ("v1.Time", "v1.MicroTime"):
        return _Leaf(shown, "time")
    if go.startswith("[]"):
        return _Leaf(shown, "list", _go_leaf(go[2:], kinds))
    if go.startswith("map["):
        return _Leaf(shown, "map", _go_leaf(_go_item(go), kinds))
    underlying = kinds.get(go)
    if underlying is not None and underlying != "struct" and underlying != go:
        return _go_leaf(underlying, kinds, shown)
    return _Leaf(shown, "raw")  # RawExtension, FieldsV1: any JSON


def _go_item(go: str) -> str:
    """The element type of a Go slice or map type: ``[]v1.Volume`` -> ``v1.Volume``."""
    if go.startswith("[]"):
        return go[2:]
    if go.startswith("map["):
        depth = 0
        for index in range(3, len(go)):
            depth += {"[": 1, "]": -1}.get(go[index], 0)
            if depth == 0:
                return go[index + 1:]
    return go


def _schema_go(type_string: str) -> str:
    """A Go type for a client type string, when the Go types table lacks the field."""
    match = _LIST_RE.match(type_string)
    if match:
        return "[]" + _schema_go(match.group(1))
    match = _DICT_RE.match(type_string)
    if match:
        return "map[string]" + _schema_go(match.group(1))
    if type_string in _SCHEMA_LEAF_GO:
        return _SCHEMA_LEAF_GO[type_string]
    return "v1." + _MODEL_PREFIX_RE.sub("", type_string)


class _Schema:
    __slots__ = ("client", "roots", "kinds", "api_versions")

    def __init__(self, client: str, roots: dict[str, _Struct], kinds: frozenset[str],
                 api_versions: dict[str, str]):
        self.client = client
        self.roots = roots
        self.kinds = kinds
        self.api_versions = api_versions


# Go's encoding/json folds a key to the smallest rune of each rune's Unicode fold orbit (with
# ASCII letters upper-cased). Field names are ASCII, so only ASCII letters and the two non-ASCII
# runes whose orbit holds an ASCII letter matter; any other rune leaves the key unmatchable.
_GO_FOLD = {code: code + 32 for code in range(ord("A"), ord("Z") + 1)}
_GO_FOLD[0x212A] = ord("k")  # KELVIN SIGN
_GO_FOLD[0x017F] = ord("s")  # LATIN SMALL LETTER LONG S

_LIST_RE = re.compile(r"^list\[(.*)\]$")
_DICT_RE = re.compile(r"^dict\(str, (.*)\)$")

_schema: _Schema | None = None
_schema_lock = threading.Lock()


def _compile(raw: Mapping[str, Any], go_types: Mapping[str, Any] | None = None) -> _Schema:
    types: Mapping[str, Mapping[str, str]] = raw["types"]
    snake: Mapping[str, str] = raw["snake"]
    go_fields: Mapping[str, Mapping[str, str]] = (go_types or {}).get("types", {})
    go_kinds: Mapping[str, str] = (go_types or {}).get("kinds", {})
    structs = {name: _Struct(name) for name in types}

    def value_type(type_string: str) -> Any:
        match = _LIST_RE.match(type_string)
        if match:
            item = value_type(match.group(1))
            return None if item is None else _List(item)
        match = _DICT_RE.match(type_string)
        if match:
            item = value_type(match.group(1))
            return None if item is None else _Map(item)
        return structs.get(type_string)  # None: a primitive or free-form object

    for name, fields in types.items():
        struct = structs[name]
        maps = []
        struct_go = go_fields.get(name, {})
        for json_name, type_string in fields.items():
            entry = (json_name, value_type(type_string))
            struct.fields[json_name] = entry
            go = struct_go.get(json_name) or _schema_go(type_string)
            struct.go[json_name] = go
            if entry[1] is None:
                struct.leaves[json_name] = _go_leaf(go, go_kinds)
            attribute = snake.get(json_name)
            if attribute is not None:
                struct.aliases[attribute] = entry
            struct.folded.setdefault(json_name.translate(_GO_FOLD), entry)
            if entry[1] is None and type_string.startswith("dict("):
                maps.append(json_name)
        struct.maps = frozenset(maps)

    roots = {kind: structs[model] for kind, model in raw["kinds"].items()}
    for fragment, model in raw.get("fragments", {}).items():
        roots.setdefault(fragment, structs[model])
    return _Schema(raw["client"], roots, frozenset(raw["kinds"]), dict(raw.get("apiVersions", {})))


def _load() -> _Schema:
    global _schema
    with _schema_lock:
        if _schema is None:
            package = resources.files(__package__)
            text = package.joinpath("_schema.json").read_text(encoding="utf-8")
            from ._go_types import GO_TYPES

            _schema = _compile(json.loads(text), GO_TYPES)
    return _schema


# --------------------------------------------------------------------------------------------
# Repeated keys (Go decodes a repeated struct or map into the existing value)
# --------------------------------------------------------------------------------------------
def _merge(old: Any, new: Any, sub: Any, is_map: bool) -> Any:
    if not (isinstance(old, dict) and isinstance(new, dict)):
        return new
    if type(sub) is _Struct:
        merged = dict(old)
        fields = sub.fields
        for name, value in new.items():
            if name in merged:
                entry_sub = fields[name][1]
                value = _merge(merged[name], value, entry_sub, name in sub.maps)
            merged[name] = value
        return merged
    if is_map or type(sub) is _Map:
        return {**old, **new}
    return new


def _set_repeated(out: dict, name: str, value: Any, struct: _Struct, sub: Any) -> None:
    if name in out:
        value = _merge(out[name], value, sub, name in struct.maps)
    out[name] = value


# --------------------------------------------------------------------------------------------
# Fast pass: no paths; gives up (_Anomaly) at the first unknown or case-folded key, and
# (_Mismatch) at the first value of the wrong JSON type, for the reporting pass to locate
# --------------------------------------------------------------------------------------------
class _Anomaly(Exception):
    pass


class _Mismatch(Exception):
    pass


def _struct_fast(src: Mapping, struct: _Struct) -> dict:
    out: dict[str, Any] = {}
    fields = struct.fields
    repeated = False  # set once an alias matched: from then on two keys may share a field
    for key, value in src.items():
        entry = fields.get(key)
        if entry is None:
            entry = struct.aliases.get(key)
            if entry is None:
                raise _Anomaly
            repeated = True
            name, sub = entry
            if value is not None:
                if sub is None:
                    leaf = struct.leaves[name]
                    if type(value) not in leaf.simple and not leaf.ok(value):
                        raise _Mismatch
                else:
                    value = _value_fast(value, sub)
            _set_repeated(out, name, value, struct, sub)
            continue
        name, sub = entry
        if value is not None:
            if sub is None:
                leaf = struct.leaves[name]
                if type(value) not in leaf.simple and not leaf.ok(value):
                    raise _Mismatch
            elif type(sub) is _Struct:
                if not isinstance(value, Mapping):
                    raise _Mismatch
                value = _struct_fast(value, sub)
            else:
                value = _value_fast(value, sub)
        if repeated and name in out:
            _set_repeated(out, name, value, struct, sub)
        else:
            out[name] = value
    return out


def _struct_clean(src: Mapping, struct: _Struct) -> bool:
    """Whether every key of ``src`` (recursively) is exactly its field's JSON name: then the
    document is already canonical and decoding copies nothing. Raises _Mismatch at a value of
    the wrong type."""
    fields = struct.fields
    leaves = struct.leaves
    for key, value in src.items():
        entry = fields.get(key)
        if entry is None:
            return False
        if value is None:
            continue
        sub = entry[1]
        if sub is None:
            leaf = leaves[key]
            if type(value) not in leaf.simple and not leaf.ok(value):
                raise _Mismatch
            continue
        if type(sub) is _Struct:
            if type(value) is not dict and not isinstance(value, _MappingABC):
                raise _Mismatch
            if not _struct_clean(value, sub):
                return False
        elif not _value_clean(value, sub):
            return False
    return True


def _value_clean(value: Any, sub: Any) -> bool:
    kind = type(sub)
    if kind is _Struct:
        if type(value) is not dict and not isinstance(value, _MappingABC):
            raise _Mismatch
        return _struct_clean(value, sub)
    item = sub.item
    if kind is _List:
        if not isinstance(value, (list, tuple)):
            raise _Mismatch
        if type(item) is _Struct:
            for element in value:
                if element is None:
                    continue
                if type(element) is not dict and not isinstance(element, _MappingABC):
                    raise _Mismatch
                if not _struct_clean(element, item):
                    return False
            return True
        return all(element is None or _value_clean(element, item) for element in value)
    if type(value) is not dict and not isinstance(value, _MappingABC):  # _Map
        raise _Mismatch
    return all(element is None or _value_clean(element, item) for element in value.values())


def _value_fast(value: Any, sub: Any) -> Any:
    kind = type(sub)
    if kind is _Struct:
        if isinstance(value, Mapping):
            return _struct_fast(value, sub)
        raise _Mismatch
    if kind is _List:
        if not isinstance(value, (list, tuple)):
            raise _Mismatch
        item = sub.item
        if type(item) is _Struct:
            out = []
            for x in value:
                if x is not None:
                    if not isinstance(x, Mapping):
                        raise _Mismatch
                    x = _struct_fast(x, item)
                out.append(x)
            return out
        return [x if x is None else _value_fast(x, item) for x in value]
    # _Map
    if not isinstance(value, Mapping):
        raise _Mismatch
    item = sub.item
    return {k: (x if x is None else _value_fast(x, item)) for k, x in value.items()}


# --------------------------------------------------------------------------------------------
# Reporting pass: builds field paths, collects unknown and case-folded keys, raises at the first
# value of the wrong type (in document order, as Go reports the first one)
# --------------------------------------------------------------------------------------------
_IDENTIFIER_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")


def _key_text(key: Any) -> str:
    if isinstance(key, str):
        return key
    if isinstance(key, bool):  # YAML 1.1 `on:`/`yes:` keys; sigs.k8s.io/yaml writes "true"
        return "true" if key else "false"
    if key is None:
        return "null"
    return str(key)


def _field_path(path: str, key: Any) -> str:
    key = _key_text(key)
    return f"{path}.{key}" if path else key


def _map_key_path(path: str, key: Any) -> str:
    key = _key_text(key)
    if _IDENTIFIER_RE.match(key):
        return f"{path}.{key}" if path else key
    return f"{path}[{key}]"


class _Report:
    __slots__ = ("unknown", "folded")

    def __init__(self) -> None:
        self.unknown: list[str] = []
        self.folded: list[str] = []


def _struct_report(src: Mapping, struct: _Struct, path: str, go_path: str, report: _Report) -> dict:
    out: dict = {}
    fields = struct.fields
    for key, value in src.items():
        entry = fields.get(key)
        if entry is None:
            entry = struct.aliases.get(key)
            if entry is None:
                entry = struct.folded.get(key.translate(_GO_FOLD)) if isinstance(key, str) else None
                if entry is None:
                    # a null unknown field says nothing: a newer client's to_dict() lists each
                    # field of its own API version, set or not
                    if value is not None:
                        report.unknown.append(_field_path(path, key))
                    continue
                report.folded.append(_field_path(path, key))
        name, sub = entry
        if value is not None:
            embedded = _EMBEDDED_GO.get(struct.name)
            if embedded is not None and name in embedded[1]:
                # a field promoted from an embedded struct: the decoder's error context names the
                # embedded struct on the way (``Volume.spec.volumes.VolumeSource.hostPath``)
                field_go_path = f"{go_path}.{embedded[0]}.{name}" if go_path else f"{embedded[0]}.{name}"
            elif not go_path and name in _TYPE_META:
                # a kind's own apiVersion and kind, from its embedded TypeMeta (``Pod.TypeMeta.kind``:
                # scheduler_perf's typed decoding of a template; the API server reads them first)
                field_go_path = f"TypeMeta.{name}"
            else:
                field_go_path = f"{go_path}.{name}" if go_path else name
            if sub is None:
                leaf = struct.leaves[name]
                if not leaf.ok(value):
                    raise leaf.error(value, _field_path(path, name), struct.go_name, field_go_path)
            else:
                value = _value_report(value, sub, _field_path(path, name), field_go_path, struct.go[name],
                                      struct.go_name, report)
        if name in out:
            _set_repeated(out, name, value, struct, sub)
        else:
            out[name] = value
    return out


def _value_report(value: Any, sub: Any, path: str, go_path: str, go: str, owner: str,
                  report: _Report) -> Any:
    """``value`` decoded along ``sub``; ``go`` is its Go type and ``owner`` the Go struct whose
    field (``go_path``) holds it, for the error when it has the wrong type."""
    kind = type(sub)
    if kind is _Struct:
        if not isinstance(value, Mapping):
            raise ManifestError(_mismatch(value, go, owner, go_path), path)
        return _struct_report(value, sub, path, go_path, report)
    if kind is _List:
        if not isinstance(value, (list, tuple)):
            raise ManifestError(_mismatch(value, go, owner, go_path), path)
        item, item_go = sub.item, _go_item(go)
        return [x if x is None else _value_report(x, item, f"{path}[{index}]", go_path, item_go, owner, report)
                for index, x in enumerate(value)]
    if not isinstance(value, Mapping):
        raise ManifestError(_mismatch(value, go, owner, go_path), path)
    item, item_go = sub.item, _go_item(go)
    return {k: (x if x is None else _value_report(x, item, _map_key_path(path, k), go_path, item_go, owner,
                                                  report))
            for k, x in value.items()}


# --------------------------------------------------------------------------------------------
# sigs.k8s.io/yaml's typed decoding (scheduler_perf's templates)
# --------------------------------------------------------------------------------------------
_LOCAL_REF = frozenset({"name"})  # LocalObjectReference
_VOLUME_SOURCE = frozenset({
    "hostPath", "emptyDir", "gcePersistentDisk", "awsElasticBlockStore", "gitRepo", "secret", "nfs", "iscsi",
    "glusterfs", "persistentVolumeClaim", "rbd", "flexVolume", "cinder", "cephfs", "flocker", "downwardAPI", "fc",
    "azureFile", "configMap", "vsphereVolume", "quobyte", "azureDisk", "photonPersistentDisk", "projected",
    "portworxVolume", "scaleIO", "storageos", "csi", "ephemeral", "image"})
_PV_SOURCE = frozenset({
    "gcePersistentDisk", "awsElasticBlockStore", "hostPath", "glusterfs", "nfs", "rbd", "iscsi", "cinder", "cephfs",
    "fc", "flocker", "flexVolume", "azureFile", "vsphereVolume", "quobyte", "azureDisk", "photonPersistentDisk",
    "portworxVolume", "scaleIO", "local", "storageos", "csi"})
_CONTAINER_COMMON = frozenset({
    "name", "image", "command", "args", "workingDir", "ports", "envFrom", "env", "resources", "resizePolicy",
    "restartPolicy", "restartPolicyRules", "volumeMounts", "volumeDevices", "livenessProbe", "readinessProbe",
    "startupProbe", "lifecycle", "terminationMessagePath", "terminationMessagePolicy", "imagePullPolicy",
    "securityContext", "stdin", "stdinOnce", "tty"})
#: the JSON fields a struct has through an embedded (inline) struct, by schema struct name, for the
#: kinds scheduler_perf decodes typed (k8s.io/api v0.37.2, listed by reflection over their types)
_EMBEDDED: dict[str, frozenset[str]] = {
    "V1Volume": _VOLUME_SOURCE, "V1PersistentVolumeSpec": _PV_SOURCE,
    "V1EphemeralContainer": _CONTAINER_COMMON, "V1Probe": frozenset({"exec", "httpGet", "tcpSocket", "grpc"}),
    "V1DeviceClaimConfiguration": frozenset({"opaque"}), "V1DeviceAllocationConfiguration": frozenset({"opaque"}),
    **{name: _LOCAL_REF for name in ("V1ConfigMapVolumeSource", "V1SecretProjection", "V1ConfigMapProjection",
                                     "V1ConfigMapEnvSource", "V1SecretEnvSource", "V1ConfigMapKeySelector",
                                     "V1SecretKeySelector")},
}
_TYPE_META = frozenset({"apiVersion", "kind"})
#: by schema struct name: the Go name of the struct it embeds and the JSON fields it has through
#: it, for the decoder's error text (sigs.k8s.io/json's ``decodeState.object`` pushes the embedded
#: field's name onto the error context's field stack before the promoted field's: k8s.io/api
#: v0.37.2's embedded structs, TypeMeta aside, which the API server reads first)
_EMBEDDED_GO: dict[str, tuple[str, frozenset[str]]] = {
    "V1Volume": ("VolumeSource", _VOLUME_SOURCE), "V1PersistentVolumeSpec": ("PersistentVolumeSource", _PV_SOURCE),
    "V1EphemeralContainer": ("EphemeralContainerCommon", _CONTAINER_COMMON),
    "V1Probe": ("ProbeHandler", _EMBEDDED["V1Probe"]),
    **{name: ("DeviceConfiguration", frozenset({"opaque"}))
       for name in ("V1DeviceClaimConfiguration", "V1DeviceAllocationConfiguration", "V1DeviceClassConfiguration")},
    **{name: ("LocalObjectReference", _LOCAL_REF) for name in (
        "V1ConfigMapVolumeSource", "V1SecretProjection", "V1ConfigMapProjection", "V1ConfigMapEnvSource",
        "V1SecretEnvSource", "V1ConfigMapKeySelector", "V1SecretKeySelector")},
}

#: the kinds upstream's scheduler_perf decodes into typed objects (getSpecFromFile,
#: getSpecFromTextTemplateFile): :func:`typed_yaml` knows their embedded structs
TYPED_YAML_KINDS = frozenset({"Pod", "Node", "PersistentVolume", "PersistentVolumeClaim", "Namespace", "PodGroup",
                              "ResourceClaim"})


class _Embedded:
    """An embedded struct as a conversion target: ``names`` are its fields, which ``owner`` (the
    struct embedding it) holds flattened."""

    __slots__ = ("owner", "names")

    def __init__(self, owner: _Struct, names: frozenset[str]):
        self.owner = owner
        self.names = names


def _fold_match(key: str, names: Any) -> str | None:
    """The name in ``names`` that ``key`` is (exactly, else as encoding/json folds it), or None."""
    if key in names:
        return key
    folded = key.translate(_GO_FOLD)
    for name in names:
        if name.translate(_GO_FOLD) == folded:
            return name
    return None


def _field_target(struct: _Struct, name: str) -> Any:
    sub = struct.fields[name][1]
    return struct.leaves[name] if sub is None else sub


def _key_target(target: Any, key: str, embedded: frozenset[str]) -> Any:
    """The conversion target of ``key``'s value under ``target`` (None: none, an untyped subtree)."""
    kind = type(target)
    if kind is _Struct:
        entry = target.fields.get(key)
        if entry is None:
            entry = target.folded.get(key.translate(_GO_FOLD))
            if entry is None:
                return None  # an unknown field: converted as untyped (the strict decoder refuses it)
        name = entry[0]
        if name in embedded:
            # sigs.k8s.io/yaml passes the embedded struct itself (reflect's Field(index[0])), not
            # the promoted field: its value is not converted, and its keys are looked up among the
            # embedded struct's fields
            return _Embedded(target, _EMBEDDED.get(target.name, _TYPE_META))
        return _field_target(target, name)
    if kind is _Map:
        return target.item
    if kind is _Embedded:
        name = _fold_match(key, target.names)
        return None if name is None else _field_target(target.owner, name)
    if kind is _Leaf and target.kind == "map":
        return target.item
    return None


def _typed_scalar(value: Any, target: Any) -> Any:
    kind = type(value)
    if type(target) is _Leaf and target.kind == "string" and target.go != "[]byte":
        # a number or bool for a string-kinded field becomes its text (convertToJSONableObject)
        if kind is bool:
            return "true" if value else "false"
        if kind is int:
            return str(value)
        if kind is GoFloat:
            return go_float_text(value)
        return value
    if kind is GoFloat:
        return json_float(value, value.mark)
    return value


def _item_target(target: Any) -> Any:
    target_kind = type(target)
    if target_kind is _List or (target_kind is _Leaf and target.kind == "list"):
        return target.item
    return None


def _typed(value: Any, target: Any, roots: frozenset) -> Any:
    """:func:`typed_yaml`'s walk, without recursion (a template nested a few hundred levels deep,
    which go-yaml reads, would exhaust Python's stack)."""
    if type(value) is dict:
        out: Any = {}
    elif type(value) is list:
        out = [None] * len(value)
    else:
        return _typed_scalar(value, target)
    stack = [(value, target, out)]
    while stack:
        source, source_target, copy = stack.pop()
        if type(source) is dict:
            embedded: frozenset[str] = frozenset()
            if type(source_target) is _Struct:
                embedded = _EMBEDDED.get(source_target.name, frozenset())
                if source_target in roots:
                    embedded = embedded | _TYPE_META
            items: Any = source.items()
        else:
            item_target = _item_target(source_target)
            items = enumerate(source)
        for key, item in items:
            child_target = _key_target(source_target, key, embedded) if type(source) is dict else item_target
            if type(item) is dict:
                child: Any = {}
            elif type(item) is list:
                child = [None] * len(item)
            else:
                copy[key] = _typed_scalar(item, child_target)
                continue
            copy[key] = child
            stack.append((item, child_target, child))
    return out


def typed_yaml(document: Any, kind: str | None) -> Any:
    """``document`` (loaded with :class:`~fastsched.util.goyaml.GoYAMLTypedLoader`) as
    sigs.k8s.io/yaml's typed ``Unmarshal`` into a ``kind`` object hands it to encoding/json: along
    the Go type of each field (matched exactly, else case-insensitively), an int, float or bool
    in a string field (a label value ``yes``, a name ``0o17``) becomes its text (floats with
    float32 digits: ``1e7`` -> "1e+07"); floats elsewhere become JSON numbers, NaN and the
    infinities json.Marshal's error (a ``yaml.YAMLError``). Fields of an embedded struct
    (``apiVersion``, a volume's ``hostPath``, a key selector's ``name``) get the embedded struct as
    their target, as upstream's reflection does: their scalars are not converted. Types with their
    own UnmarshalJSON (Quantity, IntOrString, Time, RawExtension) and unknown fields take their
    values untyped. ``kind`` is one of :data:`TYPED_YAML_KINDS`, or None for an untyped target
    (an Unstructured, YAMLToJSON): only the floats are converted. The input is not modified."""
    if kind is None:
        return _typed(document, None, frozenset())
    schema = _schema or _load()
    root = schema.roots[kind]
    return _typed(document, root, frozenset({root}))


# --------------------------------------------------------------------------------------------
# API
# --------------------------------------------------------------------------------------------
def decode(document: Mapping, kind: str) -> Decoded:
    """``document`` (a manifest of ``kind``) matched field by field against the API schema.

    Raises KeyError for a kind the schema does not know (see :func:`schema_kinds`; the
    ``PodTemplateSpec`` and ``ObjectMeta`` fragments are accepted too), TypeError when
    ``document`` is not a mapping and ManifestError at a value of the wrong JSON type. List kinds (``PodList``, ``List``) are the caller's to split.
    """
    schema = _schema or _load()
    root = schema.roots[kind]
    # (a dict first, and collections.abc's Mapping: typing's alias of it runs two Python-level
    # calls, ~2 µs a pod of a dump, whose per-pod fields templates.py checks here)
    if type(document) is not dict and not isinstance(document, _MappingABC):
        raise TypeError(f"a {kind} manifest must be a mapping, not {type(document).__name__}")
    try:
        if _struct_clean(document, root):  # the common case: written with the API's own names
            return Decoded(document if type(document) is dict else dict(document), (), ())
        return Decoded(_struct_fast(document, root), (), ())
    except (_Anomaly, _Mismatch):
        pass  # the reporting pass locates the unknown fields, or raises at the value of the wrong type
    report = _Report()
    decoded = _struct_report(document, root, "", "", report)
    return Decoded(decoded, tuple(report.unknown), tuple(report.folded))


def schema_kinds() -> frozenset[str]:
    """The kinds :func:`decode` knows."""
    return (_schema or _load()).kinds


def schema_api_version(kind: str) -> str:
    """The apiVersion whose schema :func:`decode` applies to ``kind`` (``resource.k8s.io/v1``
    for ResourceClaim): manifests of another version of the kind may have other fields."""
    return (_schema or _load()).api_versions[kind]


def schema_client_version() -> str:
    """The version of the kubernetes Python client the schema was generated from."""
    return (_schema or _load()).client
