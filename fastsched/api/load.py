"""Reading manifests into :mod:`fastsched.api` objects: the API server's part.

Sources accepted by :func:`load_one` (behind ``Pod.from_manifest`` etc.) and :func:`load_objects`:

* a dict, in the API's camelCase form or the snake_case form of a kubernetes-client ``to_dict()``;
* an API client's object: kubernetes-client and lightkube models (``to_dict()``), pydantic models
  (``model_dump()``), kr8s objects (``.raw``); no client is ever imported;
* YAML or JSON text (str or bytes), possibly with several ``---`` documents;
* a path (``str`` or :class:`pathlib.Path`) to a YAML or JSON file, or (:func:`load_objects`) to a
  directory of them;
* an already-built object, returned as is;
* for :func:`load_objects` also lists of any of these and ``kind: List`` / ``PodList``-style
  documents with ``items`` holding any mix of kinds.

A str is YAML/JSON text when it contains a newline or ``": "`` or starts with ``{`` or ``[``;
otherwise it is a file path if such a file exists. A str that looks like a path (ends in
.yaml/.yml/.json or contains a path separator) but names no file is an error.

Each object is decoded as the API server decodes it (:mod:`.schema`: unknown fields reported),
defaulted, and validated (:mod:`.validation`: upstream's messages and field paths). The defaulting
that changes what the scheduler sees: container requests default to limits, ResourceList values are
rounded up to milli-units, pod-level requests are defaulted from container requests and pod-level
limits when pod-level limits are set (``defaultPodRequests``), host-network pods expose container
ports as host ports, node allocatable defaults to capacity, and namespaces get the
``kubernetes.io/metadata.name`` label. Manifests taken from a live cluster are already defaulted,
and defaulting them again changes nothing. Names from ``metadata.generateName`` are given by the
:class:`~fastsched.Scheduler` the object is added to.
"""
from __future__ import annotations

import dataclasses
import json
import os
import re
from collections import Counter
from collections.abc import Callable, Iterable, Mapping  # (isinstance through typing's aliases costs 1 µs more)
from typing import Any, TypeVar

import yaml

from ..errors import NOT_UTF8_TEXT
from ..features import KNOWN_GATES, FeatureGates
from ..util.collector import collector_paused
from ..util.goyaml import GoYAMLLoader
from ._manifest import as_list, type_name
from .decode import PARSERS as _PARSERS
from .decode import SUPPORTED_KINDS
from .errors import ManifestError, warn_manifest
from .objects import KubeObject, Pod, register_loader
from .schema import JSONFloat, _json_kind
from .schema import decode as _decode
from .schema import schema_api_version as _schema_api_version
from .schema import schema_kinds as _schema_kinds
from .strategy import prepare_for_create as _prepare_for_create
from .strategy import raise_if_invalid as _validate
from .templates import PodTemplates
from .validation import ValidationError

__all__ = ["load_one", "load_objects", "SUPPORTED_KINDS"]

#: scalars resolve as go-yaml v2 (sigs.k8s.io/yaml) resolves them, e.g. ``y`` is a bool, ``1:20`` a string
_YAML_LOADER = GoYAMLLoader
#: Pods stamped from one template are decoded and validated once (see .templates)
_POD_TEMPLATES = PodTemplates()


# --------------------------------------------------------------------------------------------
# Sources
# --------------------------------------------------------------------------------------------
_PATH_SUFFIXES = (".yaml", ".yml", ".json")


def _names_a_file(source: str | os.PathLike) -> bool:
    """Whether a str/Path source is a file path rather than YAML/JSON text (see the module doc)."""
    if isinstance(source, os.PathLike):
        return True
    if "\n" in source or ": " in source or source.lstrip()[:1] in ("{", "["):
        return False
    return os.path.exists(source) or source.endswith(_PATH_SUFFIXES) or os.sep in source


def _manifest_files(directory: str) -> list[str]:
    """The .yaml/.yml/.json files under ``directory`` (recursively), in sorted path order."""
    found: list[str] = []
    for root, dirs, files in os.walk(directory):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        found.extend(os.path.join(root, name) for name in sorted(files) if name.endswith(_PATH_SUFFIXES))
    return found


def _read_file(file_name: str) -> str:
    try:
        with open(file_name, "rb") as stream:
            raw = stream.read()
    except FileNotFoundError:
        raise ManifestError(f"no such file: {file_name!r}") from None
    except OSError as exc:
        raise ManifestError(f"cannot read {file_name!r}: {exc.strerror or exc}") from None
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        raise ManifestError(f"cannot read {file_name!r}: {NOT_UTF8_TEXT}") from None


def _read_sources(source: Any, duplicates: dict | None = None) -> list[tuple[list[Any], str | None]]:
    """``(documents, file name)`` for each file of a source: YAML/JSON text or bytes (one entry,
    file name None), a file, or a directory of manifest files. With ``duplicates`` (strict
    decoding), the keys set twice are recorded there (see :func:`_parse_text`)."""
    if isinstance(source, (bytes, bytearray)):
        try:
            text = bytes(source).decode("utf-8")
        except UnicodeDecodeError as exc:
            raise ManifestError(f"manifest bytes are not UTF-8: {exc}") from None
        return [(_parse_text(text, None, duplicates), None)]
    if not _names_a_file(source):
        return [(_parse_text(source, None, duplicates), None)]
    path = os.fspath(source)
    if os.path.isdir(path):
        return [(_parse_text(_read_file(name), name, duplicates), name) for name in _manifest_files(path)]
    return [(_parse_text(_read_file(path), path, duplicates), path)]


def _read_documents(source: Any, duplicates: dict | None = None) -> tuple[list[Any], str | None]:
    """The non-empty documents of YAML/JSON text or one file, and the file name (None for text)."""
    sources = _read_sources(source, duplicates)
    if len(sources) != 1:
        raise ManifestError(f"expected one manifest file, got the directory {os.fspath(source)!r}")
    return sources[0]


def _refuse_constant(name: str) -> Any:
    raise ValueError(f"{name} is no JSON")


def _json_documents(text: str, duplicates: dict | None) -> list[Any]:
    """JSON text as Go's encoding/json reads it: NaN and Infinity are no JSON (ValueError: the
    caller reads the text as YAML then, as apimachinery's YAMLOrJSONDecoder falls back, where they
    are strings); a float keeps its literal for the decoder's messages (``number 1e3``); a key set
    twice in an object decodes as Go decodes into a struct or map: an object over an earlier
    object is merged into it (the later keys winning), anything else replaces. The repeated keys
    are recorded in ``duplicates`` (id of the object's dict -> [(key, None)]) when it is given."""
    merged_into: dict[int, int] = {}  # id of an object merged away -> id of the one it went into
    keep: list[dict] = []  # (the merged-away objects stay alive: their ids stay unique)

    def merge(old: dict, new: dict) -> None:
        merged_into[id(new)] = id(old)
        keep.append(new)
        for key, value in new.items():
            before = old.get(key)
            if type(before) is dict and type(value) is dict:
                merge(before, value)
            else:
                old[key] = value

    def hook(pairs: list[tuple[str, Any]]) -> dict:
        out: dict[str, Any] = {}
        for key, value in pairs:
            if key in out:
                if duplicates is not None:
                    duplicates.setdefault(id(out), []).append((key, None))
                before = out[key]
                if type(before) is dict and type(value) is dict:
                    merge(before, value)
                    continue
            out[key] = value
        return out

    documents = [json.loads(text, object_pairs_hook=hook, parse_constant=_refuse_constant,
                            parse_float=JSONFloat.parse)]
    if duplicates is not None and merged_into:
        for gone, into in merged_into.items():  # (the repeated keys of a merged object are its target's)
            while into in merged_into:
                into = merged_into[into]
            if gone in duplicates:
                duplicates.setdefault(into, []).extend(duplicates.pop(gone))
    return documents


def _chunk_starts(text: str) -> list[int]:
    """The 0-based first line of each document as apimachinery's YAMLReader cuts a stream: a
    line starting with ``---`` (then only spaces or a comment) ends a non-empty document; a
    leading one belongs to the first."""
    starts, filled = [0], False
    for index, line in enumerate(text.split("\n")):
        rest = line[3:].strip() if line.startswith("---") else None
        if rest is not None and (not rest or rest[0] == "#"):
            if filled:
                starts.append(index + 1)
                filled = False
                continue
        filled = True
    return starts


def _parse_text(text: str, file_name: str | None, duplicates: dict | None = None) -> list[Any]:
    """The documents of YAML or JSON text. With ``duplicates`` (strict decoding), a key set twice
    in a mapping is recorded there, by the id of the mapping's dict: ``[(key, None)]`` for JSON,
    ``[(go-yaml's message, line in the document)]`` for YAML (the line counted as the API server
    counts it, from the start of the document's part of the stream)."""
    if text.lstrip()[:1] in ("{", "["):
        try:
            return _json_documents(text, duplicates)
        except ValueError:
            pass  # not JSON after all: YAML flow style, or broken; let the YAML parser decide
    try:
        loader = _YAML_LOADER(text)
        if duplicates is not None:
            loader.duplicates = []
        try:
            documents = []
            while loader.check_data():
                documents.append(loader.get_data())
        finally:
            loader.dispose()
    except yaml.YAMLError as exc:
        error = ManifestError(f"invalid YAML: {exc}")
        raise (error.with_source(file_name) if file_name else error) from None
    if duplicates is not None and loader.duplicates:
        starts = _chunk_starts(text)
        for owner, message, line in loader.duplicates:
            start = max(s for s in starts if s <= line)
            duplicates.setdefault(owner, []).append((message, line - start + 1))
    return [document for document in documents if document is not None]


_CLIENT_MODEL_NAME_RE = re.compile(r"V\d+(?:(?:alpha|beta)\d+)?([A-Z]\w*)")


def _client_model_kind(model: Any) -> str | None:
    """``V1Pod`` (kubernetes client) or ``Pod`` (lightkube) -> ``Pod``: the kind a model class stands for."""
    name = type(model).__name__
    match = _CLIENT_MODEL_NAME_RE.fullmatch(name)
    if match:
        return match.group(1)
    return name if name in _PARSERS else None


def _is_model(value: Any) -> bool:
    """Whether ``value`` is an API client's object rather than a plain mapping: a kubernetes-client
    or lightkube model (``to_dict()``), a pydantic model (``model_dump()``) or a kr8s object (``raw``)."""
    if isinstance(value, Mapping):
        return False
    return (isinstance(getattr(value, "raw", None), Mapping) or callable(getattr(value, "to_dict", None))
            or callable(getattr(value, "model_dump", None)))


def _from_model(model: Any) -> Mapping[str, Any]:
    """The manifest of an API client's object (see :func:`_is_model`)."""
    raw = getattr(model, "raw", None)
    if isinstance(raw, Mapping):  # kr8s: the object's JSON as the API returned it
        return raw
    if callable(getattr(model, "to_dict", None)):
        document = model.to_dict()
        what = "to_dict()"
    else:  # pydantic models: their aliases are the API's JSON names
        document = model.model_dump(by_alias=True, exclude_none=True, mode="json")
        what = "model_dump()"
    if not isinstance(document, Mapping):
        raise ManifestError(f"{type(model).__name__}.{what} returned {type_name(document)}, not a map")
    return document


# Other served versions whose schema is field-for-field the one fastsched reads: the API server's
# conversion copies every field, so fastsched reads them as that version (resource.k8s.io/v1beta2's
# DeviceClassSpec is v1's: selectors, config, extendedResourceName; v1.37's scheduler_perf DRA
# templates create DeviceClasses as v1beta2)
_SAME_SCHEMA_VERSIONS = {"DeviceClass": ("resource.k8s.io/v1beta2",)}

# Versions of the modelled kinds that a v1.34 API server still serves besides the one fastsched
# reads (it converts them; fastsched does not: their fields differ, e.g. v1beta1's devices[].basic)
_SERVED_OTHER_VERSIONS = {kind: ("resource.k8s.io/v1beta1", "resource.k8s.io/v1beta2")
                          for kind in ("ResourceSlice", "DeviceClass", "ResourceClaim", "ResourceClaimTemplate")}
_SERVED_OTHER_VERSIONS["DeviceTaintRule"] = ("resource.k8s.io/v1alpha3", "resource.k8s.io/v1beta2")


def _unsupported_version(kind: str, api_version: str) -> ManifestError:
    """A known kind under another apiVersion: what the API server says of a version it does not
    serve, or that fastsched reads only the version it models."""
    if api_version in _SERVED_OTHER_VERSIONS.get(kind, ()):
        return ManifestError(f"fastsched reads {kind} as {_schema_api_version(kind)} only, not {api_version} "
                             f"(convert it, e.g. kubectl get -o yaml from a v1.34 cluster)", "apiVersion")
    return ManifestError(f'no kind "{kind}" is registered for version "{api_version}"', "apiVersion")


class _LoadContext:
    """What one load call gathers besides objects: kinds skipped, unknown and case-folded fields.

    Decoding follows the API server: unknown fields are dropped with a warning (``kubectl``'s
    default field validation), or are an error with ``strict``. Field names that match only
    case-insensitively are accepted as Go's encoding/json (and so scheduler_perf's template loader)
    accepts them, with a warning, since the API server's own decoder is case-sensitive; with
    ``strict`` they are unknown fields.
    """

    __slots__ = ("strict", "validate", "gates", "warn_unknown_kinds", "skipped_kinds", "unknown_fields",
                 "case_folded", "decoded_under", "on_stamped", "duplicates")

    def __init__(self, strict: bool, validate: bool = True, warn_unknown_kinds: bool = True,
                 gates: Mapping[str, bool] | None = None, on_stamped: Callable[[Pod], None] | None = None):
        self.strict = strict
        #: with ``strict``: the keys set twice in the text read (see :func:`_parse_text`), by the
        #: id of the mapping's dict; None without ``strict`` (a repeated key is not an error)
        self.duplicates: dict[int, list[tuple[str, int | None]]] | None = {} if strict else None
        #: called with each Pod stamped from a template (see objects_of)
        self.on_stamped = on_stamped
        self.validate = validate
        self.gates = gates
        self.warn_unknown_kinds = warn_unknown_kinds
        self.skipped_kinds: Counter[str] = Counter()
        self.unknown_fields: dict[str, list[str]] = {}   # field path -> objects that had it
        self.case_folded: dict[str, list[str]] = {}
        #: recorded on every object decoded here (KubeObject.decoded_under)
        self.decoded_under = (gate_overrides(gates), validate)

    def parse(self, kind: str, document: Mapping[str, Any]) -> KubeObject:
        """Decode, build and validate one object of a known kind (a Pod stamped from a template
        seen before: from that template, see :mod:`.templates`)."""
        if kind != "Pod" or (self.duplicates and self._duplicate_problems(document, ())):
            obj = self._parse(kind, document)
        else:
            key = _POD_TEMPLATES.key(document)
            if key is None:
                obj = self._parse(kind, document)
            else:
                stamped = _POD_TEMPLATES.stamp(key, document)
                if stamped is not None:
                    # (a copy of its template's fields: the record is this load's, for its document)
                    stamped.decoded_under = self.decoded_under
                    if self.on_stamped is not None:
                        self.on_stamped(stamped)
                    return stamped
                obj = self._parse(kind, document, key)
        if obj.decoded_under is None:
            obj.decoded_under = self.decoded_under
        return obj

    def _parse(self, kind: str, document: Mapping[str, Any], template_key: tuple | None = None) -> KubeObject:
        api_version = document.get("apiVersion")
        if api_version is not None and not isinstance(api_version, str):
            # the API server reads apiVersion and kind first (runtime.TypeMeta)
            raise ManifestError("couldn't get version/kind; json parse error: json: cannot unmarshal "
                                f"{_json_kind(api_version)} into Go struct field .apiVersion of type string",
                                "apiVersion")
        if kind in _schema_kinds():
            if api_version is not None and api_version != _schema_api_version(kind) \
                    and api_version not in _SAME_SCHEMA_VERSIONS.get(kind, ()):
                raise _unsupported_version(kind, api_version)
            decoded = _decode(document, kind)
            if self.duplicates:
                problems = self._duplicate_problems(document, (*decoded.unknown, *decoded.case_folded))
                if problems:
                    raise ManifestError(f"strict decoding error: {', '.join(problems)}")
            if decoded.unknown or decoded.case_folded:
                self._note_paths(kind, document, decoded.unknown, decoded.case_folded)
            if decoded.document is not document:
                template_key = None  # not written with the API's own names: stamp only clean manifests
            document = decoded.document
        obj = _prepare_for_create(_PARSERS[kind](document), self.gates)
        if obj.manifest is not document:  # a disabled gate's fields dropped from it: keep the source
            obj.decoded_under = (*self.decoded_under, document)
        if self.validate:
            _validate(obj, self.gates)
            if template_key is not None and isinstance(obj, Pod):  # valid: later pods of its template are stamped from it
                _POD_TEMPLATES.remember(template_key, obj)
        obj.admitted = True
        return obj

    def _duplicate_problems(self, document: Mapping[str, Any], unknown: tuple[str, ...]) -> list[str]:
        """apimachinery's strict decoding errors for ``document`` when a key is set twice in it
        (else []), with its ``unknown`` fields: for YAML go-yaml's ``yaml: unmarshal errors:``
        naming each repeated key's line first, then the unknown fields; for JSON sigs.k8s.io/json's
        ``duplicate field "metadata.name"`` and ``unknown field`` in document order (a repeated
        key where its later value ends)."""
        duplicates = self.duplicates
        assert duplicates is not None
        lines: list[tuple[int, str]] = []
        events: list[tuple[int, str]] = []  # (position in the document, error)
        starts: dict[str, int] = {}
        position = 0

        def walk(value: Any, path: str) -> None:
            nonlocal position
            if type(value) is dict:
                ends: dict[str, int] = {}
                for key, item in value.items():
                    child = f"{path}.{key}" if path else str(key)
                    position += 1
                    starts.setdefault(child, position)
                    walk(item, child)
                    position += 1
                    ends[str(key)] = position
                for key, line in duplicates.get(id(value), ()):
                    if line is not None:  # YAML: go-yaml's message and line
                        lines.append((line, key))
                    else:
                        events.append((ends.get(key, position), f'duplicate field "{f"{path}.{key}" if path else key}"'))
            elif type(value) is list:
                for index, item in enumerate(value):
                    walk(item, f"{path}[{index}]")

        walk(document, "")
        if not lines and not events:
            return []
        unknown_events = [(starts.get(p, position + 1), f'unknown field "{p}"') for p in unknown]
        if lines:
            yaml_error = "yaml: unmarshal errors:\n" + "\n".join(f"  line {line}: {message}"
                                                                 for line, message in sorted(lines))
            return [yaml_error, *(error for _, error in unknown_events)]
        # (a key repeated three times is one error, as sigs.k8s.io/json reports it)
        return list(dict.fromkeys(error for _, error in sorted(events + unknown_events, key=lambda event: event[0])))

    def _note_paths(self, kind: str, document: Mapping[str, Any], unknown: Iterable[str],
                    case_folded: Iterable[str]) -> None:
        if self.strict:
            paths = [*unknown, *case_folded]
            fields = ", ".join(f'unknown field "{path}"' for path in paths)
            raise ManifestError(f"strict decoding error: {fields}")
        where = _describe(kind, document)
        for path in unknown:
            self.unknown_fields.setdefault(f"{kind} {path}", []).append(where)
        for path in case_folded:
            self.case_folded.setdefault(f"{kind} {path}", []).append(where)

    def emit_warnings(self) -> None:
        """One warning per unknown field (naming up to three objects), per case-folded field and
        one for all skipped kinds."""
        for table, what in ((self.unknown_fields, "unknown field"),
                            (self.case_folded, "field name matched case-insensitively (the API server "
                                               "would drop it as unknown)")):
            for kind_and_path, owners in table.items():
                kind, path = kind_and_path.split(" ", 1)
                shown = ", ".join(owners[:3]) + (f" and {len(owners) - 3} more" if len(owners) > 3 else "")
                warn_manifest(f'{what} "{path}" in {shown}')
        if self.skipped_kinds and self.warn_unknown_kinds:
            counts = ", ".join(f"{kind} ({count})" for kind, count in sorted(self.skipped_kinds.items()))
            total = sum(self.skipped_kinds.values())
            warn_manifest(f"skipped {total} object{'s' if total != 1 else ''} of kinds fastsched does not model: "
                          f"{counts}")


def load_one(cls: type[KubeObject], source: Any, *, strict: bool = False, validate: bool = True,
             feature_gates: Mapping[str, bool] | None = None) -> Any:
    """Build one ``cls`` object (Pod, Node, ...) from any supported source; ``validate=False``
    skips the API server's validation (for test objects, as upstream's test wrappers build typed
    objects that no API server has seen). ``feature_gates`` (gate names to bools; v1.37.2's
    defaults for the others) are the API server's: fields of disabled gates are dropped on create
    (a pod's ``spec.schedulingGroup`` without GenericWorkload)."""
    kind = cls.KIND
    file_name = None
    document: object  # checked to be a Mapping below
    context = _LoadContext(strict, validate, gates=feature_gates)
    if type(source) is dict:
        document = source
    elif isinstance(source, cls):
        return source
    elif isinstance(source, KubeObject):
        raise ManifestError(f"expected a {kind}, got a {source.KIND}")
    elif isinstance(source, (str, bytes, bytearray, os.PathLike)):
        documents, file_name = _read_documents(source, context.duplicates)
        if len(documents) != 1:
            error = ManifestError(f"expected exactly one {kind} document, got {len(documents)}")
            raise error.with_source(file_name) if file_name else error
        document = documents[0]
    elif _is_model(source):
        document = _from_model(source)
    elif isinstance(source, Mapping):
        document = source
    else:
        raise ManifestError(f"cannot read a {kind} from {type(source).__name__}")
    try:
        if not isinstance(document, Mapping):
            raise ManifestError(f"expected a {kind} manifest (a map), got {type_name(document)}")
        document_kind = document.get("kind")
        if document_kind is not None and document_kind != kind:
            raise ManifestError(f"expected kind {kind!r}, got {document_kind!r}", "kind")
        obj = context.parse(kind, document)
    except ManifestError as error:
        if file_name:
            raise error.with_source(file_name) from None
        raise
    context.emit_warnings()
    return obj


_K = TypeVar("_K", bound=KubeObject)


def gate_overrides(gates: Mapping[str, bool] | None) -> frozenset:
    """The gates of ``gates`` set away from v1.37.2's defaults, as (name, value) pairs: what
    decoding can depend on, comparable whatever form the gates were given in."""
    if not gates:
        return frozenset()
    if type(gates) is FeatureGates:  # (immutable: its answer is kept on it)
        return gates.non_defaults()
    return frozenset((name, bool(value)) for name, value in gates.items()
                     if name in KNOWN_GATES and bool(value) != KNOWN_GATES[name].default)


def check_decoded_gates(obj: _K, gates: Mapping[str, bool] | None) -> _K:
    """``obj`` as the API server of ``gates`` takes it when it was decoded under other gates
    (``obj.decoded_under``). The same object when its manifest decodes the same under both; with
    the fields of gates that ``gates`` has off dropped (the create strategy's ``PrepareForCreate``,
    as from its manifest, and as for an object built in code); a ManifestError naming the fields
    and the gates when it lost fields at decoding that ``gates`` keep. A ValidationError when the
    API server of ``gates`` refuses it.

    An object decoded beforehand (``Pod.from_manifest(m)``: v1.37.2's default gates) and added to
    a Scheduler with GenericWorkload would otherwise be taken as it is: its ``spec.schedulingGroup``
    dropped, a gang member would silently be a loose pod. It is not re-decoded silently either: the
    caller holds the object, reads its fields and may have changed it (:meth:`replace` keeps the
    record while the manifest is the same); the error says how to decode it with the Scheduler's
    gates."""
    record = obj.decoded_under
    if record is None:
        return obj
    decoded_gates, validate = record[0], record[1]
    wanted = gate_overrides(gates)
    if decoded_gates == wanted:
        return obj
    # the document it was decoded from (its manifest, unless the gates' drops rewrote that)
    kind, manifest = obj.KIND, record[2] if len(record) > 2 else obj.manifest
    if not manifest:
        return obj
    theirs = _redecoded(kind, manifest, wanted, validate)  # the Scheduler's API server may refuse it
    mine = _canonical(_redecoded(kind, manifest, decoded_gates, validate))
    if mine == _canonical(theirs):
        # the same under these gates: recorded so, so that its copies are not decoded again
        obj.decoded_under = (wanted, *record[1:])
        return obj
    before, after = dict(decoded_gates), dict(wanted)

    def value(side: dict, name: str) -> bool:
        return side.get(name, KNOWN_GATES[name].default)

    differing = sorted(n for n in set(before) | set(after) if value(before, n) != value(after, n))
    # the gates that alone make a difference (each flipped on the decoded object's gates)
    responsible = [n for n in differing
                   if _canonical(_redecoded(kind, manifest, frozenset({**before, n: value(after, n)}.items()),
                                            validate)) != mine]
    if responsible and not any(value(after, n) for n in responsible):
        # only gates the Scheduler has off: their fields dropped, as the API server drops them
        # from a manifest (validated by the caller, as an object built in code)
        prepared = _prepare_for_create(obj, gates)
        if prepared is obj:
            prepared = obj.replace()
        prepared.admitted = False
        prepared.decoded_under = (wanted, *record[1:])
        return prepared
    named = responsible or differing
    fields = _differing_fields(_redecoded(kind, manifest, decoded_gates, validate), theirs)
    s = "s" if len(named) > 1 else ""
    raise ManifestError(
        f"decoded with feature gate{s} {', '.join(f'{n}={str(value(before, n)).lower()}' for n in named)}, "
        f"but this Scheduler's API server has {', '.join(f'{n}={str(value(after, n)).lower()}' for n in named)} "
        f"and keeps what that dropped: decode it with the Scheduler's feature gates "
        f"({kind}.from_manifest(..., feature_gates=scheduler.feature_gates)) or add its manifest",
        ", ".join(fields) or None).with_source(_describe(kind, manifest))


def _redecoded(kind: str, manifest: Mapping[str, Any], overrides: frozenset, validate: bool) -> KubeObject:
    return _LoadContext(False, validate, warn_unknown_kinds=False, gates=dict(overrides)).parse(kind, manifest)


#: fields whose manifest path is not ``spec.<camelCase of the attribute>``
_FIELD_PATHS = {
    "node_allocatable_claim_nanos": "status.nodeAllocatableResourceClaimStatuses",
    "resource_claim_statuses": "status.resourceClaimStatuses",
    "allocation": "status.allocation",
    "labels": "metadata.labels", "annotations": "metadata.annotations",
}


def _canonical(value: Any) -> Any:
    """``value`` as plain comparable data: the API's nested dataclasses are compared by identity
    (``eq=False``), so two decodings of one manifest are compared field by field."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return (type(value).__name__, *((f.name, _canonical(getattr(value, f.name)))
                                        for f in dataclasses.fields(value) if f.compare))
    if isinstance(value, Mapping):
        return ("{}", *sorted((repr(k), _canonical(v)) for k, v in value.items()))
    if isinstance(value, (list, tuple)):
        return tuple(_canonical(v) for v in value)
    if isinstance(value, (set, frozenset)):
        return ("set", *sorted(repr(_canonical(v)) for v in value))
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    return repr(value)


def _differing_fields(a: KubeObject, b: KubeObject) -> list[str]:
    """The manifest paths of the top-level fields where ``a`` and ``b`` differ."""
    out = []
    for f in dataclasses.fields(a):
        if not f.compare or _canonical(getattr(a, f.name)) == _canonical(getattr(b, f.name)):
            continue
        path = _FIELD_PATHS.get(f.name)
        if path is None:
            head, *rest = f.name.split("_")
            path = "spec." + head + "".join(part.title() for part in rest)
        out.append(path)
    return out


_CLUSTER_SCOPED_KINDS = frozenset({"Node", "Namespace", "PriorityClass", "PersistentVolume", "StorageClass",
                                   "CSINode", "CSIDriver", "ResourceSlice", "DeviceClass", "DeviceTaintRule",
                                   "RuntimeClass"})


def _describe(kind: str, document: Mapping[str, Any]) -> str:
    """``Pod default/web`` for error messages, from whatever the raw document holds."""
    meta = document.get("metadata")
    if not isinstance(meta, Mapping):
        return kind
    name = meta.get("name")
    if not isinstance(name, str) or not name:
        generate_name = meta.get("generateName")
        if not isinstance(generate_name, str) or not generate_name:
            return kind
        name = generate_name + "*"
    if kind not in _CLUSTER_SCOPED_KINDS:
        namespace = meta.get("namespace")
        namespace = namespace if isinstance(namespace, str) and namespace else "default"
        return f"{kind} {namespace}/{name}"
    return f"{kind} {name}"


def load_objects(source: Any, *, strict: bool = False, ignore_unknown: bool = False,
                 validate: bool = True, feature_gates: Mapping[str, bool] | None = None,
                 on_stamped: Callable[[Pod], None] | None = None) -> list[KubeObject]:
    """Build every object of a source: multi-document YAML/JSON (text, a file, or a directory of
    ``.yaml``/``.yml``/``.json`` files read recursively in path order), ``List`` documents (any mix
    of kinds, ``kubectl get -o yaml`` dumps), lists (or any iterable) of dicts, API-client objects
    (kubernetes client, lightkube, kr8s, pydantic models) or fastsched objects, or one of those.

    Objects are dispatched by ``kind`` (see :data:`SUPPORTED_KINDS`) and decoded and validated as
    the API server would (:class:`~fastsched.api.validation.ValidationError` with upstream's
    messages). Kinds fastsched does not model are skipped with one :class:`ManifestWarning`
    counting them by kind (no warning with ``ignore_unknown``). Unknown fields are dropped with a
    warning naming their paths, or raise with ``strict``; ``validate=False`` skips validation.
    ``feature_gates`` are the API server's (see :func:`load_one`). Errors are prefixed with where the
    object came from: file name, ``document N`` (1-based, when there are several) and
    ``Kind namespace/name``. ``on_stamped`` is called with each Pod stamped from a template
    (:mod:`.templates`): a new object that nothing else holds yet, which it may change in place.
    """
    objects: list[KubeObject] = []
    context = _LoadContext(strict, validate, warn_unknown_kinds=not ignore_unknown, gates=feature_gates,
                           on_stamped=on_stamped)
    # The objects built here hold no reference cycles, yet every one of them is tracked by the
    # cyclic garbage collector, whose repeated passes over the growing heap would take about
    # as long as the parsing itself when loading 100k objects: pause it for the bulk build.
    with collector_paused():
        if isinstance(source, (str, bytes, bytearray, os.PathLike)):
            for documents, file_name in _read_sources(source, context.duplicates):
                several = len(documents) > 1
                for index, document in enumerate(documents):
                    where = ": ".join(part for part in (file_name, f"document {index + 1}" if several else None)
                                      if part)
                    _collect_within(document, where, None, context, objects)
        elif isinstance(source, (Mapping, KubeObject)) or _is_model(source):
            _collect(source, None, context, objects)
        elif isinstance(source, Iterable):
            for index, item in enumerate(source):
                _collect_within(item, f"[{index}]", None, context, objects)
        else:
            raise ManifestError(f"cannot load objects from {type(source).__name__}")
    context.emit_warnings()
    return objects


def objects_of(source: Any, kind: type | None = None, *, strict: bool = False,
               feature_gates: Mapping[str, bool] | None = None,
               on_stamped: Callable[[Pod], None] | None = None) -> list:
    """:func:`load_objects` for an optional argument: ``None`` gives ``[]``; with ``kind``, every
    object must be of that class (ManifestError naming the class found otherwise)."""
    if source is None:
        return []
    objects = load_objects(source, strict=strict, feature_gates=feature_gates, on_stamped=on_stamped)
    if kind is not None:
        for obj in objects:
            if not isinstance(obj, kind):
                raise ManifestError(f"expected {kind.__name__} objects, got a {type(obj).__name__}")
    return objects


def _collect_within(item: Any, where: str, default_kind: str | None, context: _LoadContext,
                    objects: list[KubeObject]) -> None:
    """:func:`_collect`, prefixing errors with ``where`` (e.g. ``document 2``, ``items[3]``)."""
    try:
        _collect(item, default_kind, context, objects)
    except ManifestError as error:
        raise (error.with_source(where) if where else error) from None


def _collect(item: Any, default_kind: str | None, context: _LoadContext, objects: list[KubeObject]) -> None:
    if isinstance(item, KubeObject):
        objects.append(item)
        return
    if isinstance(item, (list, tuple)):
        for index, element in enumerate(item):
            _collect_within(element, f"[{index}]", default_kind, context, objects)
        return
    if type(item) is not dict and _is_model(item):  # (a plain dict, nearly every item: no model)
        default_kind = _client_model_kind(item) or default_kind
        item = _from_model(item)
    if type(item) is not dict and not isinstance(item, Mapping):
        raise ManifestError(f"expected a Kubernetes object (a map), got {type_name(item)}")
    kind = item.get("kind") or default_kind
    if not isinstance(kind, str):
        raise ManifestError("missing kind" if kind is None else f"kind must be a string, got {kind!r}", "kind")
    if kind.endswith("List") and ("items" in item or kind == "List"):
        items = as_list(item.get("items"), "items")
        item_kind = kind[: -len("List")] or None
        for index, element in enumerate(items):
            _collect_within(element, f"items[{index}]", item_kind, context, objects)
        return
    if kind not in _PARSERS:
        context.skipped_kinds[kind] += 1
        return
    try:
        objects.append(context.parse(kind, item))
    except ValidationError:
        raise  # its message names the object already: Pod "web" is invalid: ...
    except ManifestError as error:
        raise error.with_source(_describe(kind, item)) from None


# KubeObject.from_manifest reads through load_one (fastsched.api.objects cannot import this module,
# which imports it)
register_loader(load_one)
