"""``node.k8s.io/v1`` RuntimeClass: what the RuntimeClass admission plugin reads when a pod naming
one (``spec.runtimeClassName``) is created (``plugin/pkg/admission/runtimeclass``).

Modelled: the object, its create validation's ``handler`` and metadata checks
(``pkg/apis/node/validation`` ``ValidateRuntimeClass``), and :func:`runtime_class_name` (a pod's
``spec.runtimeClassName``, which :class:`~fastsched.api.Pod` does not keep: read from the pod's
manifest). ``overhead`` and ``scheduling`` are kept as written (the manifest's); the admission's
use of them (the pod's overhead from ``overhead.podFixed``, ``scheduling``'s nodeSelector and
tolerations merged into the pod's) is not applied yet (see docs/reference/deviations.md).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, ClassVar, Mapping

from ..util.field import FieldError, FieldPath
from ._manifest import as_map, as_str, get_field
from ._meta import object_meta
from .objects import KubeObject
from .util_validation import dns1123_label_errors
from .validation import validate_object_meta

__all__ = ["RuntimeClass", "parse_runtime_class", "validate_runtime_class", "runtime_class_name",
           "RUNTIME_CLASS_PARSERS", "RUNTIME_CLASS_VALIDATORS"]


@dataclass(slots=True, kw_only=True, eq=False)
class RuntimeClass(KubeObject):
    """A ``node.k8s.io/v1`` RuntimeClass (cluster-scoped; its fields are top-level, not under spec)."""

    KIND: ClassVar[str] = "RuntimeClass"

    handler: str = ""


def parse_runtime_class(obj: Mapping[str, Any]) -> RuntimeClass:
    """Build a RuntimeClass from a manifest dict."""
    meta = object_meta(obj, namespaced=False)
    as_map(get_field(obj, "overhead"), "overhead")      # (kept in the manifest; maps when given)
    as_map(get_field(obj, "scheduling"), "scheduling")
    return RuntimeClass(**meta, handler=as_str(get_field(obj, "handler"), "handler"))


def validate_runtime_class(rc: RuntimeClass) -> list[FieldError]:
    """``ValidateRuntimeClass``: the metadata (the name a DNS subdomain), a ``handler`` that is a
    DNS label."""
    errors = validate_object_meta(rc, namespaced=False)
    if not rc.handler:
        errors.append(FieldError.required(FieldPath("handler"), ""))
    else:
        errors.extend(FieldError.invalid(FieldPath("handler"), rc.handler, msg)
                      for msg in dns1123_label_errors(rc.handler))
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
