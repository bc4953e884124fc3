"""``node.k8s.io/v1`` RuntimeClass: what the RuntimeClass admission plugin reads when a pod naming
one (``spec.runtimeClassName``) is created (``plugin/pkg/admission/runtimeclass``).

Modelled: the object, its create validation (``pkg/apis/node/validation`` ``ValidateRuntimeClass``:
metadata, ``handler``, ``overhead.podFixed`` as container limits), ``overhead.podFixed`` (which
the admission makes the pod's overhead) and :func:`runtime_class_name` (a pod's
``spec.runtimeClassName``, which :class:`~fastsched.api.Pod` does not keep: read from the pod's
manifest). ``scheduling`` is kept as written (the manifest's); the admission's use of it
(nodeSelector and tolerations merged into the pod's) is not applied yet (see
docs/reference/deviations.md).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, ClassVar, Mapping

from ..util.field import FieldError, FieldPath
from ._manifest import as_map, as_str, get_field
from ._meta import object_meta
from .objects import KubeObject
from .quantity import read_resource_list
from .util_validation import dns1123_label_errors
from .validation import _container_resource_name_errors, _quantities, _resource_requirements_errors, validate_object_meta

__all__ = ["RuntimeClass", "parse_runtime_class", "validate_runtime_class", "runtime_class_name",
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


def parse_runtime_class(obj: Mapping[str, Any]) -> RuntimeClass:
    """Build a RuntimeClass from a manifest dict."""
    meta = object_meta(obj, namespaced=False)
    overhead = get_field(obj, "overhead")
    amounts = nanos = None
    if overhead is not None:
        amounts, nanos = read_resource_list(get_field(as_map(overhead, "overhead"), "podFixed"), "overhead.podFixed")
    as_map(get_field(obj, "scheduling"), "scheduling")  # (kept in the manifest; a map when given)
    return RuntimeClass(**meta, handler=as_str(get_field(obj, "handler"), "handler"),
                        overhead_pod_fixed=amounts, overhead_pod_fixed_nanos=nanos)


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
    return errors


def runtime_class_name(pod: Any) -> str:
    """The pod's ``spec.runtimeClassName`` ("" when unset): read from its manifest (a pod built in
    code has none)."""
    manifest = getattr(pod, "manifest", None)
    if not manifest:
        return ""
    spec = manifest.get("spec")
    name = spec.get("runtimeClassName") if isinstance(spec, Mapping) else None
    return name if isinstance(name, str) else ""


RUNTIME_CLASS_PARSERS: dict[str, Callable[[Mapping[str, Any]], KubeObject]] = {"RuntimeClass": parse_runtime_class}
RUNTIME_CLASS_VALIDATORS: dict[str, Callable[[Any], list[FieldError]]] = {"RuntimeClass": validate_runtime_class}
