"""``node.k8s.io/v1`` RuntimeClass: what the RuntimeClass admission plugin reads when a pod naming
one (``spec.runtimeClassName``) is created (``plugin/pkg/admission/runtimeclass``).

Modelled: the object, its create validation (``pkg/apis/node/validation`` ``ValidateRuntimeClass``:
metadata, ``handler``, ``overhead.podFixed`` as container limits), ``overhead.podFixed`` (which
the admission makes the pod's overhead) and :func:`runtime_class_name` (a pod's
``spec.runtimeClassName``, which :class:`~fastsched.api.Pod` does not keep: read from the pod's
manifest), ``scheduling`` (its nodeSelector and tolerations, which the admission merges into the
pod's: :func:`merge_tolerations` is ``pkg/util/tolerations.MergeTolerations``).
"""
from __future__ import annotations

from collections import abc
from dataclasses import dataclass
from typing import Any, Callable, ClassVar, Mapping

from ..util.field import FieldError, FieldPath, GoStruct
from ._manifest import as_map, as_str, as_string_map, get_field
from ._meta import list_of, object_meta, toleration
from .objects import KubeObject, Toleration
from .quantity import read_resource_list
from .util_validation import dns1123_label_errors
from .validation import (_container_resource_name_errors, _quantities, _resource_requirements_errors,
                         _toleration_errors, validate_labels, validate_object_meta)

__all__ = ["RuntimeClass", "parse_runtime_class", "validate_runtime_class", "runtime_class_name", "merge_tolerations",
           "RUNTIME_CLASS_PARSERS", "RUNTIME_CLASS_VALIDATORS"]


@dataclass(slots=True, kw_only=True, eq=False)
class RuntimeClass(KubeObject):
    """A ``node.k8s.io/v1`` RuntimeClass (cluster-scoped; its fields are top-level, not under spec)."""

    KIND: ClassVar[str] = "RuntimeClass"

    handler: str = ""
    #: ``overhead.podFixed`` as scheduler amounts (millicores for cpu) and exact nano-units; None
    #: without ``overhead``
    overhead_pod_fixed: Mapping[str, int] | None = None
    overhead_pod_fixed_nanos: Mapping[str, int] | None = None
    #: whether ``scheduling`` is set; its ``nodeSelector`` (None when unset) and ``tolerations``
    has_scheduling: bool = False
    scheduling_node_selector: Mapping[str, str] | None = None
    scheduling_tolerations: tuple[Toleration, ...] = ()


def parse_runtime_class(obj: Mapping[str, Any]) -> RuntimeClass:
    """Build a RuntimeClass from a manifest dict."""
    meta = object_meta(obj, namespaced=False)
    overhead = get_field(obj, "overhead")
    amounts = nanos = None
    if overhead is not None:
        amounts, nanos = read_resource_list(get_field(as_map(overhead, "overhead"), "podFixed"), "overhead.podFixed")
    scheduling = as_map(get_field(obj, "scheduling"), "scheduling")
    selector = get_field(scheduling, "nodeSelector")
    return RuntimeClass(**meta, handler=as_str(get_field(obj, "handler"), "handler"),
                        overhead_pod_fixed=amounts, overhead_pod_fixed_nanos=nanos,
                        has_scheduling=get_field(obj, "scheduling") is not None,
                        scheduling_node_selector=None if selector is None else as_string_map(
                            selector, "scheduling.nodeSelector"),
                        scheduling_tolerations=tuple(list_of(get_field(scheduling, "tolerations"),
                                                             "scheduling.tolerations", toleration)))


def validate_runtime_class(rc: RuntimeClass) -> list[FieldError]:
    """``ValidateRuntimeClass``: the metadata (the name a DNS subdomain), a ``handler`` that is a
    DNS label."""
    errors = validate_object_meta(rc, namespaced=False)
    if not rc.handler:
        errors.append(FieldError.required(FieldPath("handler"), ""))
    else:
        errors.extend(FieldError.invalid(FieldPath("handler"), rc.handler, msg)
                      for msg in dns1123_label_errors(rc.handler))
    if rc.overhead_pod_fixed:  # validateOverhead: podFixed checked as container limits
        raw = get_field(as_map(get_field(rc.manifest or {}, "overhead"), "overhead"), "podFixed")
        limits = _quantities(rc.overhead_pod_fixed, (raw,), rc.overhead_pod_fixed_nanos)
        errors.extend(_resource_requirements_errors({}, limits, FieldPath("overhead"), _container_resource_name_errors))
    # validateScheduling: the nodeSelector as labels; the tolerations as a pod's, each once
    path = FieldPath("scheduling")
    if rc.scheduling_node_selector is not None:
        errors.extend(validate_labels(rc.scheduling_node_selector, path.child("nodeSelector")))
    errors.extend(_toleration_errors(rc.scheduling_tolerations, path.child("tolerations")))
    seen: set[tuple[str, str, str, str]] = set()
    for i, t in enumerate(rc.scheduling_tolerations):
        key = (t.key, t.operator, t.value, t.effect)  # (the API's list keys; the operator as written)
        if key in seen:
            # (field.Duplicate of an internal core.Toleration: json.Marshal of its untagged fields)
            errors.append(FieldError.duplicate(path.child("tolerations").index(i), GoStruct(
                Key=t.key, Operator=t.operator, Value=t.value, Effect=t.effect,
                TolerationSeconds=t.toleration_seconds)))
        seen.add(key)
    return errors


def _is_superset(ss: Toleration, t: Toleration) -> bool:
    """``isSuperset``: whether ``ss`` tolerates a superset of what ``t`` tolerates."""
    if t == ss:
        return True
    if t.key != ss.key and (ss.key or ss.operator != "Exists"):  # empty key + Exists: every key
        return False
    if t.effect != ss.effect and ss.effect:  # empty effect: every effect
        return False
    if ss.effect == "NoExecute" and ss.toleration_seconds is not None:
        if t.toleration_seconds is None or t.toleration_seconds > ss.toleration_seconds:
            return False
    if ss.operator in ("Equal", ""):  # an empty operator covers as Equal, but is not covered by it
        return t.operator == "Equal" and t.value == ss.value
    return ss.operator == "Exists"


def merge_tolerations(first: tuple[Toleration, ...], second: tuple[Toleration, ...]) -> tuple[Toleration, ...]:
    """``MergeTolerations``: both lists, in order, without the tolerations another one covers
    (of equal ones, the first is kept)."""
    every = (*first, *second)
    merged: list[Toleration] = []
    for i, t in enumerate(every):
        if any(_is_superset(m, t) for m in merged):
            continue
        if any(t != later and _is_superset(later, t) for later in every[i + 1:]):
            continue
        merged.append(t)
    return tuple(merged)


def runtime_class_name(pod: Any) -> str:
    """The pod's ``spec.runtimeClassName`` ("" when unset): read from its manifest (a pod built in
    code has none). Every pod added asks: a plain dict is taken without an ABC isinstance check
    (``typing.Mapping``'s costs ~1 us)."""
    manifest = pod.manifest
    if not manifest:
        return ""
    spec = manifest.get("spec")
    if type(spec) is not dict and not isinstance(spec, abc.Mapping):
        return ""
    name = get_field(spec, "runtimeClassName")
    return name if type(name) is str else ""


RUNTIME_CLASS_PARSERS: dict[str, Callable[[Mapping[str, Any]], KubeObject]] = {"RuntimeClass": parse_runtime_class}
RUNTIME_CLASS_VALIDATORS: dict[str, Callable[[Any], list[FieldError]]] = {"RuntimeClass": validate_runtime_class}
