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
into values only when ``T`` is a struct. Primitives, free-form ``object`` values (RawExtension,
IntOrString) and values of an unexpected type (a string where a struct is expected) are copied
as is, for the typed parsers to report with their paths; ``None`` stays ``None``. The structure
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
from typing import Any, Mapping

__all__ = ["Decoded", "decode", "schema_kinds", "schema_api_version", "schema_client_version"]


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
    (merged, not replaced, by a repeated key)."""

    __slots__ = ("name", "fields", "aliases", "folded", "maps")

    def __init__(self, name: str):
        self.name = name
        self.fields: dict[str, tuple[str, Any]] = {}
        self.aliases: dict[str, tuple[str, Any]] = {}
        self.folded: dict[str, tuple[str, Any]] = {}
        self.maps: frozenset[str] = frozenset()


class _List:
    __slots__ = ("item",)

    def __init__(self, item: Any):
        self.item = item


class _Map:
    __slots__ = ("item",)

    def __init__(self, item: Any):
        self.item = item


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


def _compile(raw: Mapping[str, Any]) -> _Schema:
    types: Mapping[str, Mapping[str, str]] = raw["types"]
    snake: Mapping[str, str] = raw["snake"]
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
        for json_name, type_string in fields.items():
            entry = (json_name, value_type(type_string))
            struct.fields[json_name] = entry
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
            text = resources.files(__package__).joinpath("_schema.json").read_text(encoding="utf-8")
            _schema = _compile(json.loads(text))
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
# Fast pass: no paths; gives up (_Anomaly) at the first unknown or case-folded key
# --------------------------------------------------------------------------------------------
class _Anomaly(Exception):
    pass


def _struct_fast(src: Mapping, struct: _Struct) -> dict:
    out = {}
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
            if sub is not None and value is not None:
                value = _value_fast(value, sub)
            _set_repeated(out, name, value, struct, sub)
            continue
        name, sub = entry
        if sub is not None and value is not None:
            if type(sub) is _Struct:
                if isinstance(value, dict):
                    value = _struct_fast(value, sub)
                elif isinstance(value, Mapping):
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
    document is already canonical and decoding copies nothing."""
    fields = struct.fields
    for key, value in src.items():
        entry = fields.get(key)
        if entry is None:
            return False
        sub = entry[1]
        if sub is None or value is None:
            continue
        kind = type(sub)
        if kind is _Struct:
            if isinstance(value, Mapping) and not _struct_clean(value, sub):
                return False
        elif not _value_clean(value, sub):
            return False
    return True


def _value_clean(value: Any, sub: Any) -> bool:
    kind = type(sub)
    if kind is _Struct:
        return not isinstance(value, Mapping) or _struct_clean(value, sub)
    item = sub.item
    if kind is _List:
        if not isinstance(value, (list, tuple)):
            return True
        if type(item) is _Struct:
            for element in value:
                if isinstance(element, Mapping) and not _struct_clean(element, item):
                    return False
            return True
        return all(element is None or _value_clean(element, item) for element in value)
    if not isinstance(value, Mapping):  # _Map
        return True
    return all(element is None or _value_clean(element, item) for element in value.values())


def _value_fast(value: Any, sub: Any) -> Any:
    kind = type(sub)
    if kind is _Struct:
        if isinstance(value, dict) or isinstance(value, Mapping):
            return _struct_fast(value, sub)
        return value
    if kind is _List:
        if not isinstance(value, (list, tuple)):
            return value
        item = sub.item
        if type(item) is _Struct:
            return [_struct_fast(x, item) if isinstance(x, dict) or isinstance(x, Mapping) else x
                    for x in value]
        return [x if x is None else _value_fast(x, item) for x in value]
    # _Map
    if not (isinstance(value, dict) or isinstance(value, Mapping)):
        return value
    item = sub.item
    return {k: (x if x is None else _value_fast(x, item)) for k, x in value.items()}


# --------------------------------------------------------------------------------------------
# Reporting pass: builds field paths, collects unknown and case-folded keys
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


def _struct_report(src: Mapping, struct: _Struct, path: str, report: _Report) -> dict:
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
        if sub is not None and value is not None:
            value = _value_report(value, sub, _field_path(path, name), report)
        if name in out:
            _set_repeated(out, name, value, struct, sub)
        else:
            out[name] = value
    return out


def _value_report(value: Any, sub: Any, path: str, report: _Report) -> Any:
    kind = type(sub)
    if kind is _Struct:
        return _struct_report(value, sub, path, report) if isinstance(value, Mapping) else value
    if kind is _List:
        if not isinstance(value, (list, tuple)):
            return value
        item = sub.item
        return [x if x is None else _value_report(x, item, f"{path}[{index}]", report)
                for index, x in enumerate(value)]
    if not isinstance(value, Mapping):
        return value
    item = sub.item
    return {k: (x if x is None else _value_report(x, item, _map_key_path(path, k), report))
            for k, x in value.items()}


# --------------------------------------------------------------------------------------------
# API
# --------------------------------------------------------------------------------------------
def decode(document: Mapping, kind: str) -> Decoded:
    """``document`` (a manifest of ``kind``) matched field by field against the API schema.

    Raises KeyError for a kind the schema does not know (see :func:`schema_kinds`; the
    ``PodTemplateSpec`` and ``ObjectMeta`` fragments are accepted too) and TypeError when
    ``document`` is not a mapping. List kinds (``PodList``, ``List``) are the caller's to split.
    """
    schema = _schema or _load()
    root = schema.roots[kind]
    if not isinstance(document, Mapping):
        raise TypeError(f"a {kind} manifest must be a mapping, not {type(document).__name__}")
    if _struct_clean(document, root):  # the common case: written with the API's own names
        return Decoded(document if type(document) is dict else dict(document), (), ())
    try:
        return Decoded(_struct_fast(document, root), (), ())
    except _Anomaly:
        pass
    report = _Report()
    decoded = _struct_report(document, root, "", report)
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
