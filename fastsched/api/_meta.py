"""ObjectMeta parsing shared by every kind's parser (:mod:`.load`, :mod:`.workloads`).

Parsers report field paths relative to the value they are given; a caller that knows where the
value sits prefixes the path (``ManifestError.nested_under``) only when an error happens, so the
common, error-free case builds no path strings.
"""
from __future__ import annotations

from typing import Any, Callable, Mapping

from ._manifest import as_bool, as_int, as_list, as_map, as_str, as_string_map, as_timestamp, get_field, type_name
from .errors import ManifestError
from .objects import OwnerReference, Toleration

__all__ = ["int_or_string", "list_of", "nested", "object_meta"]


def list_of(value: Any, path: str, parse: Callable[[Any], Any]) -> tuple:
    """``parse`` applied to each item of the list at ``path`` (None: empty)."""
    if value is None:
        return ()
    items = as_list(value, path)
    parsed = []
    for index, item in enumerate(items):
        try:
            parsed.append(parse(item))
        except ManifestError as error:
            raise error.nested_under(f"{path}[{index}]") from None
    return tuple(parsed)


def nested(path: str, parse: Callable[[Any], Any], value: Any) -> Any:
    """``parse(value)`` with error paths nested under ``path``."""
    try:
        return parse(value)
    except ManifestError as error:
        raise error.nested_under(path) from None


def _owner_reference(value: Any) -> OwnerReference:
    """One ``metadata.ownerReferences`` entry."""
    reference = as_map(value, "")
    return OwnerReference(
        kind=as_str(reference.get("kind"), "kind"),
        name=as_str(reference.get("name"), "name"),
        uid=as_str(reference.get("uid"), "uid"),
        controller=as_bool(reference.get("controller"), "controller"),
        api_version=as_str(get_field(reference, "apiVersion"), "apiVersion"),
    )


def object_meta(obj: Mapping[str, Any], namespaced: bool) -> dict[str, Any]:
    """The ObjectMeta fields every KubeObject takes, as constructor keywords (plus ``manifest``)."""
    meta = as_map(obj.get("metadata"), "metadata")
    namespace = as_str(meta.get("namespace"), "metadata.namespace") if namespaced else ""
    if namespaced and not namespace:
        namespace = "default"
    return {
        "name": as_str(meta.get("name"), "metadata.name"),
        "generate_name": as_str(get_field(meta, "generateName"), "metadata.generateName"),
        "namespace": namespace,
        "uid": as_str(meta.get("uid"), "metadata.uid"),
        "labels": as_string_map(meta.get("labels"), "metadata.labels"),
        "annotations": as_string_map(meta.get("annotations"), "metadata.annotations"),
        "creation_timestamp": as_timestamp(get_field(meta, "creationTimestamp"), "metadata.creationTimestamp"),
        "deletion_timestamp": as_timestamp(get_field(meta, "deletionTimestamp"), "metadata.deletionTimestamp"),
        "owner_references": list_of(get_field(meta, "ownerReferences"), "metadata.ownerReferences",
                                     _owner_reference),
        "manifest": obj,
    }


def int_or_string(value: Any, path: str) -> int | str | None:
    """An IntOrString field (``maxUnavailable: 1`` or ``"25%"``); None when absent."""
    if value is None or type(value) is int or type(value) is str:
        return value
    raise ManifestError(f"expected an integer or a percentage string, got {type_name(value)} {value!r}", path)


def toleration(value: Any) -> Toleration:
    """One ``core/v1`` Toleration (a pod's ``spec.tolerations`` entry, a RuntimeClass's
    ``scheduling.tolerations`` entry). An empty operator is kept as written, as the API server
    keeps it (no defaulting): matching a taint reads it as ``Equal``, but ``MergeTolerations``
    and the RuntimeClass duplicate check tell it from ``Equal``."""
    toleration = as_map(value, "")
    return Toleration(
        key=as_str(toleration.get("key"), "key"),
        operator=as_str(toleration.get("operator"), "operator"),
        value=as_str(toleration.get("value"), "value"),
        effect=as_str(toleration.get("effect"), "effect"),
        toleration_seconds=as_int(get_field(toleration, "tolerationSeconds"), "tolerationSeconds"),
    )
