"""What the API server refuses: create-time validation of the objects fastsched loads.

fastsched has no API server, so the loader has to refuse what a v1.34 API server would refuse,
with the same field paths and messages. This module ports the behaviour of upstream's
create-time validation for the fields the scheduler reads:

* ``pkg/apis/core/validation/validation.go``: ``ValidatePodCreate`` (``ValidateObjectMeta``,
  ``ValidatePodSpec``, ``validateContainersOnlyForPod``), ``ValidateNode``,
  ``ValidateNodeResources``, ``ValidateNamespace``;
* ``pkg/apis/scheduling/validation``: ``ValidatePriorityClass``;
* ``pkg/apis/policy/validation``: ``ValidatePodDisruptionBudget`` (then, as
  ``apiserver/pkg/registry/rest/create.go`` ``BeforeCreate`` does, the generic ObjectMeta checks with
  the path-segment name rule, which is the only name rule PDBs get);
* ``staging/src/k8s.io/apimachinery``: ``api/validation`` (ObjectMeta, name rules, annotations),
  ``apis/meta/v1/validation`` (labels, label selectors), ``util/validation`` (qualified names,
  DNS-1123 labels/subdomains, label values, port names and numbers and their messages),
  ``api/errors.NewInvalid`` (the ``Kind "name" is invalid: ...`` text).

Validation runs on the typed objects after the loader's defaulting, as upstream validates after
decoding and defaulting (requests defaulted from limits, ``hostPort`` defaulted from
``containerPort`` for host-network pods, node allocatable from capacity, port protocol TCP).
Where a message shows a value the typed object no longer holds exactly (a quantity's original
format, a toleration's empty operator, a selector's matchLabels/matchExpressions split) the
object's ``manifest`` is consulted, and only when it agrees with the typed object.

Quantities are rendered as upstream's ``Quantity.String()``: the canonical form of the value in
the quantity's format (``"-1"``, ``"500m"``, ``"1Gi"``, ``"1e3"``), after the API server's rounding
up to milli-units. Objects built in code (no manifest) are rendered in decimal SI form.

Deliberately not validated (the scheduler never reads these fields, or the typed objects do not
keep them; a field listed here is accepted whatever it holds):

* ObjectMeta: ``generation``, ``finalizers``, ``managedFields`` (not kept); the generated name when
  only ``generateName`` is set (the name is generated after loading);
* pod annotations with pod-specific meaning (mirror pod, ``pod-deletion-cost``, seccomp/AppArmor
  and toleration annotations) and node annotations with node-specific meaning (taints,
  preferAvoidPods);
* in ``spec.volumes`` (kept raw; ``ValidateVolumes`` checks the names, one source a volume and the
  claims of ephemeral volumes), the fields of the sources the scheduler does not read (``emptyDir``,
  ``hostPath``, ``secret``, ``configMap``, ``projected``, ``nfs``, ... : counted, their fields not
  checked); a generic ephemeral volume's ``volumeClaimTemplate`` is validated where its claim is
  created (the Cluster); ``spec.resourceClaims`` and container ``resources.claims`` are
  validated in :mod:`.resource`;
* container ``command``/``args``/``env``/``envFrom``/``volumeMounts``/``volumeDevices``/probes/
  ``lifecycle``/``securityContext``/``resizePolicy``/``terminationMessagePolicy``/
  ``imagePullPolicy``, ephemeral containers (not kept);
* pod ``terminationGracePeriodSeconds``, ``restartPolicy``, ``dnsPolicy``, ``dnsConfig``,
  ``securityContext``, ``imagePullSecrets``, ``readinessGates``, ``serviceAccountName``,
  ``activeDeadlineSeconds``, ``hostAliases``,
  ``os`` and the Windows/host-process rules (not kept, or defaulted by the API server);
* the whole pod and node ``status`` (upstream does not validate status on create either);
* node ``spec.podCIDRs``, ``configSource``; PDB ``unhealthyPodEvictionPolicy``.

Upstream checks that need other objects (the priority admission plugin resolving
``priorityClassName`` and refusing a mismatching ``spec.priority``) are admission, not validation,
and are not done here. Upstream does not validate ``spec.schedulerName`` at all.

Go iterates maps in random order; here labels, annotations and resource lists are checked in the
order the object holds them, so a message list is deterministic.
"""
from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from datetime import datetime, timezone
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, NamedTuple

from ..errors import NotFoundError
from ..util.field import ErrorType, FieldError, FieldPath, GoStruct, Rendered, go_json, go_quote
from ._manifest import _snake_case, get_field
from .errors import ManifestError
from .labels import LabelSelector, NodeSelector, NodeSelectorRequirement, NodeSelectorTerm
from .util_validation import (
    byte_length,
    dns1123_label_errors,
    dns1123_subdomain_errors,
    qualified_name_errors,
    label_value_errors,
    is_valid_percent,
    is_valid_port_name,
    is_valid_port_num,
    is_dns1123_label,
    is_dns1123_subdomain,
    is_qualified_name,
    is_valid_label_value,
)
from .objects import (
    Affinity,
    Container,
    KubeObject,
    Namespace,
    Node,
    OwnerReference,
    Pod,
    PodAffinityTerm,
    PodDisruptionBudget,
    PriorityClass,
    Taint,
    Toleration,
    TopologySpreadConstraint,
)
from .quantity import INT64_MAX, amount_from_nanos, nanos_from_amount, parse_quantity
from .resources import aggregate_container_request_nanos

__all__ = [
    "ValidationError",
    "group_resource",
    "not_found",
    "TooLongError",
    "NameRule",
    "validate_pod",
    "validate_pod_spec",
    "validate_pod_resource_claims",
    "validate_node",
    "validate_namespace",
    "validate_priority_class",
    "validate_pod_disruption_budget",
    "validate_object_meta",
    "validate_annotations",
    "validate_label_selector",
    "name_is_dns_subdomain",
    "name_is_dns_label",
    "name_is_path_segment",
    "is_qualified_name",
    "is_valid_label_value",
    "is_dns1123_label",
    "is_dns1123_subdomain",
    "quantity_string",
    "HIGHEST_USER_DEFINABLE_PRIORITY",
    "TOTAL_ANNOTATION_SIZE_LIMIT",
]

#: A name rule, upstream ``ValidateNameFunc``: ``(name, prefix) -> problem messages``. ``prefix``
#: is true for ``generateName`` (a trailing dash is then allowed).
NameRule = Callable[[str, bool], "list[str]"]

#: ``scheduling.HighestUserDefinablePriority``: values above it are reserved for system classes.
HIGHEST_USER_DEFINABLE_PRIORITY = 1_000_000_000
_SYSTEM_CRITICAL_PRIORITY = 2 * HIGHEST_USER_DEFINABLE_PRIORITY
_SYSTEM_PRIORITY_CLASS_PREFIX = "system-"
# pkg/apis/scheduling/v1/helpers.go systemPriorityClasses: name -> (value, globalDefault)
_SYSTEM_PRIORITY_CLASSES = {
    "system-node-critical": (_SYSTEM_CRITICAL_PRIORITY + 1000, False),
    "system-cluster-critical": (_SYSTEM_CRITICAL_PRIORITY, False),
}
#: ``apimachineryvalidation.TotalAnnotationSizeLimitB``: 256 KiB of keys and values together.
TOTAL_ANNOTATION_SIZE_LIMIT = 256 * (1 << 10)

_IS_NEGATIVE = "must be greater than or equal to 0"
_IN_NEEDS_VALUES = "must be specified when `operator` is 'In' or 'NotIn'"
_EXISTS_FORBIDS_VALUES = "may not be specified when `operator` is 'Exists' or 'DoesNotExist'"
_IS_NOT_INTEGER = "must be an integer"
_IS_NOT_POSITIVE = "must be greater than zero"


# --------------------------------------------------------------------------------------------
# Errors
# --------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class TooLongError(FieldError):
    """``field.TooLong``: ``<path>: Too long: may not be more than N bytes`` (the value is omitted).

    ``config.errors.ErrorType`` has no ``FieldValueTooLong`` member, so this carries
    ``ErrorType.INVALID`` and renders its own body.
    """

    def body(self) -> str:
        return "Too long: " + self.detail if self.detail else "Too long"


def _too_long(path: FieldPath, max_length: int) -> FieldError:
    unit = "byte" if max_length == 1 else "bytes"
    return TooLongError(str(path), ErrorType.INVALID, "<value omitted>", f"may not be more than {max_length} {unit}")


# GroupKind.String() of the kinds validated here (NewInvalid's qualifiedKind).
_QUALIFIED_KINDS = {
    "Pod": "Pod",
    "Node": "Node",
    "Namespace": "Namespace",
    "PriorityClass": "PriorityClass.scheduling.k8s.io",
    "PodDisruptionBudget": "PodDisruptionBudget.policy",
    "Deployment": "Deployment.apps",
    "ReplicaSet": "ReplicaSet.apps",
    "StatefulSet": "StatefulSet.apps",
    "DaemonSet": "DaemonSet.apps",
    "Job": "Job.batch",
    "CronJob": "CronJob.batch",
    "ReplicationController": "ReplicationController",
    "Service": "Service",
    "StorageClass": "StorageClass.storage.k8s.io",
    "CSINode": "CSINode.storage.k8s.io",
    "CSIDriver": "CSIDriver.storage.k8s.io",
    "CSIStorageCapacity": "CSIStorageCapacity.storage.k8s.io",
    "RuntimeClass": "RuntimeClass.node.k8s.io",
    "ResourceSlice": "ResourceSlice.resource.k8s.io",
    "DeviceClass": "DeviceClass.resource.k8s.io",
    "ResourceClaim": "ResourceClaim.resource.k8s.io",
    "ResourceClaimTemplate": "ResourceClaimTemplate.resource.k8s.io",
    "DeviceTaintRule": "DeviceTaintRule.resource.k8s.io",
    "Workload": "Workload.scheduling.k8s.io",
    "PodGroup": "PodGroup.scheduling.k8s.io",
    "CompositePodGroup": "CompositePodGroup.scheduling.k8s.io",
}


class ValidationError(ManifestError):
    """An object the API server would refuse: upstream's ``StatusError`` from ``NewInvalid``.

    ``str()`` is ``Pod "web" is invalid: <error>`` for one error and ``Pod "web" is invalid:
    [<error>, <error>]`` for several (identical messages once, as ``ErrorList.ToAggregate``).
    ``errors`` keeps every :class:`FieldError` (as the status causes do); ``kind`` is the object's
    kind and ``name`` its name.
    """

    def __init__(self, kind: str, name: str, errors: Iterable[FieldError]):
        self.kind = kind
        self.name = name
        self.errors = list(errors)
        super().__init__(_status_message(kind, name, self.errors))

    def __reduce__(self):
        return (_rebuild_validation_error, (self.kind, self.name, self.errors, self.source))


def group_resource(kind: str) -> str:
    """The API's resource name for ``kind``, with its group: ``pods``, ``storageclasses.storage.k8s.io``
    (what NotFound and Conflict errors name; apimachinery's UnsafeGuessKindToResource plural)."""
    kind_part, _, group = _QUALIFIED_KINDS.get(kind, kind).partition(".")
    lower = kind_part.lower()
    if lower.endswith("s"):
        plural = lower + "es"
    elif lower.endswith("y"):
        plural = lower[:-1] + "ies"
    else:
        plural = lower + "s"
    return f"{plural}.{group}" if group else plural


def not_found(kind: str, name: str) -> NotFoundError:
    """The API server's NotFound error for object ``name`` of ``kind``."""
    return NotFoundError(f'{group_resource(kind)} "{name}" not found')


def _rebuild_validation_error(kind: str, name: str, errors: list[FieldError], source: str | None):
    error = ValidationError(kind, name, errors)
    return error.with_source(source) if source else error


def _status_message(kind: str, name: str, errors: Sequence[FieldError]) -> str:
    qualified = _QUALIFIED_KINDS.get(kind, kind)
    messages: list[str] = []
    for error in errors:
        text = str(error)
        if text not in messages:
            messages.append(text)
    if not messages:
        return f"{qualified} {go_quote(name)} is invalid"
    aggregate = messages[0] if len(messages) == 1 else "[" + ", ".join(messages) + "]"
    return f"{qualified} {go_quote(name)} is invalid: {aggregate}"


def _named(value: str) -> Rendered:
    """A value of a named Go string type (``core.ResourceName``, ``core.TaintEffect``...):
    ``field.Error`` renders those with ``json.Marshal``, not ``%q``."""
    return Rendered(go_json(value))


# api/validation/generic.go name rules --------------------------------------------------------
def _mask_trailing_dash(name: str) -> str:
    if len(name) > 1 and name.endswith("-"):
        return name[:-2] + "a"
    return name


def name_is_dns_subdomain(name: str, prefix: bool) -> list[str]:
    """``NameIsDNSSubdomain`` (pods, nodes, priority classes, ...)."""
    return list(dns1123_subdomain_errors(_mask_trailing_dash(name) if prefix else name))


def name_is_dns_label(name: str, prefix: bool) -> list[str]:
    """``NameIsDNSLabel`` (namespaces: ``ValidateNamespaceName``)."""
    return list(dns1123_label_errors(_mask_trailing_dash(name) if prefix else name))


def name_is_path_segment(name: str, prefix: bool) -> list[str]:
    """``path.ValidatePathSegmentName``, the generic rule ``BeforeCreate`` applies to every kind."""
    if not prefix:
        for illegal in (".", ".."):
            if name == illegal:
                return [f"may not be '{illegal}'"]
    return [f"may not contain '{illegal}'" for illegal in ("/", "%") if illegal in name]


# --------------------------------------------------------------------------------------------
# Small field validators
# --------------------------------------------------------------------------------------------
def _label_name_errors(name: str, path: FieldPath) -> list[FieldError]:
    """``ValidateLabelName``."""
    return [FieldError.invalid(path, name, msg) for msg in qualified_name_errors(name)]


def _qualified_name_errors(name: str, path: FieldPath) -> list[FieldError]:
    """core ``ValidateQualifiedName``."""
    return [FieldError.invalid(path, name, msg) for msg in qualified_name_errors(name)]


def validate_labels(labels: Mapping[str, str] | None, path: FieldPath) -> list[FieldError]:
    """``ValidateLabels``: every key a qualified name, every value a label value (path unkeyed)."""
    errors: list[FieldError] = []
    for key, value in (labels or {}).items():
        errors.extend(_label_name_errors(key, path))
        errors.extend(FieldError.invalid(path, value, msg) for msg in label_value_errors(value))
    return errors


def _validate_annotations(annotations: Mapping[str, str], parent: FieldPath, errors: list[FieldError]) -> None:
    """``ValidateAnnotations`` into ``errors``: keys are qualified names ignoring case; 256 KiB in
    total. The path ``parent.annotations`` is built only for an error (every object the cluster
    creates passes here: each pod and DynamicResources' special claim per pod, issue 27)."""
    path: FieldPath | None = None
    total = 0
    for key, value in annotations.items():
        problems = qualified_name_errors(key.lower())
        if problems:
            if path is None:
                path = parent.child("annotations")
            for msg in problems:  # (a loop: a generator here would make path and key cells on every call)
                errors.append(FieldError.invalid(path, key, msg))
        total += byte_length(key) + byte_length(value)
    if total > TOTAL_ANNOTATION_SIZE_LIMIT:
        errors.append(_too_long(parent.child("annotations") if path is None else path, TOTAL_ANNOTATION_SIZE_LIMIT))


def validate_annotations(annotations: Mapping[str, str], parent: FieldPath) -> list[FieldError]:
    """``ValidateAnnotations`` of the object whose metadata is at ``parent`` (its errors under
    ``parent.annotations``): what :func:`validate_object_meta` checks of them."""
    errors: list[FieldError] = []
    if annotations:
        _validate_annotations(annotations, parent, errors)
    return errors


def _name_errors(rule: NameRule, name: str, path: FieldPath) -> list[FieldError]:
    problems = rule(name, False)
    return [FieldError.invalid(path, name, msg) for msg in problems] if problems else []


def _dns_label_errors(value: str, path: FieldPath) -> list[FieldError]:
    """core ``ValidateDNS1123Label``."""
    return [FieldError.invalid(path, value, msg) for msg in dns1123_label_errors(value)]


# --------------------------------------------------------------------------------------------
# ObjectMeta
# --------------------------------------------------------------------------------------------
def validate_object_meta(obj: KubeObject, *, namespaced: bool, name_rule: NameRule = name_is_dns_subdomain,
                         path: FieldPath | None = None) -> list[FieldError]:
    """``ValidateObjectMetaAccessor`` on create, for any kind.

    ``name_rule`` is the kind's ``ValidateNameFunc``. ``generateName`` is read from
    ``obj.generate_name`` when the object has it. An object with only ``generateName`` gets its
    name after loading, so only ``generateName`` is checked then.
    """
    meta = FieldPath("metadata") if path is None else path
    errors: list[FieldError] = []
    generate_name = getattr(obj, "generate_name", "") or ""
    problems: Sequence[str]
    if generate_name:
        problems = name_rule(generate_name, True)
        if problems:
            errors.extend(FieldError.invalid(meta.child("generateName"), generate_name, msg) for msg in problems)
    if not obj.name:
        if not generate_name:
            errors.append(FieldError.required(meta.child("name"), "name or generateName is required"))
    else:
        problems = name_rule(obj.name, False)
        if problems:
            errors.extend(FieldError.invalid(meta.child("name"), obj.name, msg) for msg in problems)
    if namespaced:
        if not obj.namespace:
            errors.append(FieldError.required(meta.child("namespace")))
        else:
            problems = dns1123_label_errors(obj.namespace)
            if problems:
                errors.extend(FieldError.invalid(meta.child("namespace"), obj.namespace, msg) for msg in problems)
    elif obj.namespace:
        errors.append(FieldError.forbidden(meta.child("namespace"), "not allowed on this type"))
    if obj.labels:
        errors.extend(validate_labels(obj.labels, meta.child("labels")))
    if obj.annotations:
        _validate_annotations(obj.annotations, meta, errors)
    if obj.owner_references:
        _validate_owner_references(obj.owner_references, meta, errors)
    return errors


def _owner_reference_json(ref: OwnerReference) -> GoStruct:
    value = GoStruct(apiVersion=ref.api_version, kind=ref.kind, name=ref.name, uid=ref.uid)
    if ref.controller:
        value["controller"] = True
    return value


def _validate_owner_references(refs: Sequence[OwnerReference], parent: FieldPath, errors: list[FieldError]) -> None:
    """``ValidateOwnerReferences`` into ``errors`` (its errors name the list, not the entry, as
    upstream's do). Each reference's rules are checked on its fields first; the path
    ``parent.ownerReferences`` and the errors are built only when one fails (every object the
    cluster creates passes here, issue 27)."""
    first_controller: OwnerReference | None = None
    for ref in refs:
        api_version = ref.api_version
        slashes = api_version.count("/")
        # ParseGroupVersion's version: "" for "" and "/", the text after "/" for "group/version",
        # "" when it fails (more than one "/": FromAPIVersionAndKind keeps only the kind)
        no_version = not api_version or slashes > 1 or (slashes == 1 and api_version[-1] == "/")
        # BannedOwners: group "", version v1, kind Event ("v1" and "/v1" both parse to it)
        banned = ref.kind == "Event" and (api_version == "v1" or api_version == "/v1")
        if no_version or banned or not ref.kind or not ref.name or not ref.uid:
            path = parent.child("ownerReferences")
            if no_version:
                errors.append(FieldError.invalid(path.child("apiVersion"), api_version, "version must not be empty"))
            if not ref.kind:
                errors.append(FieldError.invalid(path.child("kind"), ref.kind, "must not be empty"))
            if not ref.name:
                errors.append(FieldError.invalid(path.child("name"), ref.name, "must not be empty"))
            if not ref.uid:
                errors.append(FieldError.invalid(path.child("uid"), ref.uid, "must not be empty"))
            if banned:
                errors.append(FieldError.invalid(path, _owner_reference_json(ref),
                                                 "/v1, Kind=Event is disallowed from being an owner"))
        if ref.controller:
            if first_controller is None:
                first_controller = ref
            else:
                errors.append(FieldError.invalid(
                    parent.child("ownerReferences"), [_owner_reference_json(r) for r in refs],
                    f'Only one reference can have Controller set to true. Found "true" in references for '
                    f"{first_controller.kind}/{first_controller.name} and {ref.kind}/{ref.name}"))


# --------------------------------------------------------------------------------------------
# Quantities
# --------------------------------------------------------------------------------------------
_NANO = 10**9
_MILLI_NANOS = 10**6
_DECIMAL_SI, _BINARY_SI, _DECIMAL_EXPONENT = "DecimalSI", "BinarySI", "DecimalExponent"
_BINARY_SUFFIXES = {"Ki": 1, "Mi": 2, "Gi": 3, "Ti": 4, "Pi": 5, "Ei": 6}
_BINARY_SUFFIX_BY_POWER = {power: suffix for suffix, power in _BINARY_SUFFIXES.items()}
_DECIMAL_SUFFIXES = ("", "n", "u", "m", "k", "M", "G", "T", "P", "E")
_DECIMAL_SUFFIX_BY_EXPONENT = {-9: "n", -6: "u", -3: "m", 0: "", 3: "k", 6: "M", 9: "G", 12: "T", 15: "P", 18: "E"}
_NUMBER_PREFIX_RE = re.compile(r"[+-]?[0-9]*(?:\.[0-9]*)?")


class _Q(NamedTuple):
    """A quantity as validation sees it: exact nano-units after the milli round-up, and format."""

    nanos: int
    format: str = _DECIMAL_SI


def _round_away(value: int, unit: int) -> int:
    return -(-value // unit) if value >= 0 else value // unit


def _go_scaled(nanos: int, unit: int) -> int:
    """``Quantity.Value()``/``MilliValue()``: rounded away from zero; 0 when it overflows int64
    (what upstream's int64 fast path returns for values such as ``1e30``)."""
    value = _round_away(nanos, unit)
    return value if -INT64_MAX - 1 <= value <= INT64_MAX else 0


def quantity_string(nanos: int, fmt: str = _DECIMAL_SI) -> str:
    """Upstream ``Quantity.String()`` (``CanonicalizeBytes``) of an exact nano-unit amount.

    ``fmt`` is ``"DecimalSI"``, ``"BinarySI"`` or ``"DecimalExponent"``. ``quantity_string(-10**9)``
    is ``"-1"``, ``quantity_string(5 * 10**8)`` is ``"500m"``, ``quantity_string(2**30 * 10**9,
    "BinarySI")`` is ``"1Gi"``.
    """
    if nanos == 0:
        return "0"
    if fmt == _BINARY_SI and (-1024 * _NANO < nanos < 1024 * _NANO or nanos % _NANO):
        fmt = _DECIMAL_SI  # small values, and values that are not whole, are shown decimal
    sign = "-" if nanos < 0 else ""
    magnitude = abs(nanos)
    if fmt == _BINARY_SI:
        value = magnitude // _NANO
        power = 0
        while value >= 1024 and value % 1024 == 0:
            value //= 1024
            power += 1
        return f"{sign}{value}{_BINARY_SUFFIX_BY_POWER.get(power, '')}"
    exponent = -9
    while magnitude >= 10 and magnitude % 10 == 0:
        magnitude //= 10
        exponent += 1
    shift = exponent % 3  # move the exponent down to a multiple of 3
    if shift:
        magnitude *= 10**shift
        exponent -= shift
    if fmt == _DECIMAL_EXPONENT:
        suffix = "" if exponent == 0 else f"e{exponent}"
    else:
        suffix = _DECIMAL_SUFFIX_BY_EXPONENT.get(exponent, "")  # upstream emits no suffix past E
    return f"{sign}{magnitude}{suffix}"


def _qstr(q: _Q) -> str:
    return quantity_string(q.nanos, q.format)


def _raw_quantity(name: str, raw: Any, amount: int) -> _Q | None:
    """The quantity of a raw manifest value, if it is the one the typed ``amount`` came from."""
    if type(raw) is str or type(raw) is int:
        return _raw_quantity_cached(name, raw, amount)
    return _raw_quantity_uncached(name, raw, amount)


def _raw_quantity_uncached(name: str, raw: Any, amount: int) -> _Q | None:
    if raw is None:
        return None
    try:
        parsed = parse_quantity(raw)
    except (ManifestError, TypeError, ValueError):
        return None
    exact = parsed.nano_value()
    nanos = _round_away(exact, _MILLI_NANOS) * _MILLI_NANOS  # SetDefaults_ResourceList rounds up to milli
    if amount_from_nanos(name, nanos) != amount:
        return None
    text = str(parsed)
    if text == "0":
        return _Q(nanos, _DECIMAL_SI)
    suffix = text[_NUMBER_PREFIX_RE.match(text).end():]  # type: ignore[union-attr]
    if suffix in _BINARY_SUFFIXES:
        fmt = _DECIMAL_SI if 0 < exact < _NANO else _BINARY_SI  # ParseQuantity: 0 < x < 1 is decimal
    elif suffix in _DECIMAL_SUFFIXES:
        fmt = _DECIMAL_SI
    else:
        fmt = _DECIMAL_EXPONENT
    return _Q(nanos, fmt)


_raw_quantity_cached = functools.lru_cache(maxsize=16384)(_raw_quantity_uncached)


_EMPTY: Mapping[str, Any] = {}


def _as_map(value: Any) -> Mapping[str, Any]:
    if type(value) is dict:
        return value
    return value if value is not None and isinstance(value, Mapping) else _EMPTY


def _as_seq(value: Any) -> Sequence[Any]:
    return value if type(value) is list or type(value) is tuple else ()


def _quantities(typed: Mapping[str, int], raw_lists: Sequence[Any] = (),
                exact: Mapping[str, int] | None = None) -> dict[str, _Q]:
    """The typed amounts as :class:`_Q`, taking exact value and format from the first raw list
    holding an entry that agrees with the typed amount, else from ``exact`` nano amounts."""
    raws = [_as_map(raw) for raw in raw_lists]
    result: dict[str, _Q] = {}
    for name, amount in typed.items():
        q = None
        for raw in raws:
            if name in raw:
                q = _raw_quantity(name, raw[name], amount)
                if q is not None:
                    break
        if q is None and exact is not None and name in exact and amount_from_nanos(name, exact[name]) == amount:
            q = _Q(exact[name])
        result[name] = q if q is not None else _Q(nanos_from_amount(name, amount))
    return result


# core/helper resource-name predicates ---------------------------------------------------------
_HUGEPAGES_PREFIX = "hugepages-"
_STANDARD_CONTAINER_RESOURCES = frozenset({"cpu", "memory", "ephemeral-storage"})
_STANDARD_RESOURCES = frozenset({
    "cpu", "memory", "ephemeral-storage", "requests.cpu", "requests.memory", "requests.ephemeral-storage",
    "limits.cpu", "limits.memory", "limits.ephemeral-storage", "pods", "resourcequotas", "services",
    "replicationcontrollers", "secrets", "configmaps", "persistentvolumeclaims", "storage", "requests.storage",
    "services.nodeports", "services.loadbalancers",
})
_INTEGER_RESOURCES = frozenset({
    "pods", "resourcequotas", "services", "replicationcontrollers", "secrets", "configmaps",
    "persistentvolumeclaims", "services.nodeports", "services.loadbalancers",
})
_QOS_COMPUTE_RESOURCES = ("cpu", "memory")
# resourcehelper.SupportedPodLevelResources() (v1.34: cpu, memory and hugepages), as sets.List sorts it
_POD_LEVEL_RESOURCES_LISTED = ("cpu", "hugepages-", "memory")


def _is_hugepages(name: str) -> bool:
    return name.startswith(_HUGEPAGES_PREFIX)


def _is_native(name: str) -> bool:
    return "/" not in name or "kubernetes.io/" in name


def _is_extended(name: str) -> bool:
    if _is_native(name) or name.startswith("requests."):
        return False
    return not qualified_name_errors("requests." + name)


def _is_overcommit_allowed(name: str) -> bool:
    return _is_native(name) and not _is_hugepages(name)


def _is_integer_resource(name: str) -> bool:
    return name in _INTEGER_RESOURCES or _is_extended(name)


def _is_standard_resource(name: str) -> bool:
    return name in _STANDARD_RESOURCES or _is_hugepages(name) or name.startswith("requests.hugepages-")


def _is_pod_level_resource(name: str) -> bool:
    return name in _QOS_COMPUTE_RESOURCES or _is_hugepages(name)


def _resource_name_errors(name: str, path: FieldPath) -> list[FieldError]:
    """``validateResourceName``."""
    errors = [FieldError.invalid(path, _named(name), msg) for msg in qualified_name_errors(name)]
    if errors:
        return errors
    if "/" not in name and not _is_standard_resource(name):
        return [FieldError.invalid(path, _named(name), "must be a standard resource type or fully qualified")]
    return []


def _container_resource_name_errors(name: str, path: FieldPath) -> list[FieldError]:
    """``validateContainerResourceName``."""
    errors = _resource_name_errors(name, path)
    if "/" not in name:
        if not (name in _STANDARD_CONTAINER_RESOURCES or _is_hugepages(name)):
            errors.append(FieldError.invalid(path, _named(name), "must be a standard resource for containers"))
    elif not _is_native(name) and not _is_extended(name):
        errors.append(FieldError.invalid(path, _named(name), "doesn't follow extended resource name standard"))
    return errors


def _pod_resource_name_errors(name: str, path: FieldPath) -> list[FieldError]:
    """``validatePodResourceName``."""
    errors = _resource_name_errors(name, path)
    if errors:
        return errors
    if not _is_pod_level_resource(name):
        return [FieldError.not_supported(path, _named(name), _POD_LEVEL_RESOURCES_LISTED)]
    return []


def _quantity_value_errors(name: str, q: _Q, path: FieldPath) -> list[FieldError]:
    """``ValidateResourceQuantityValue``: not negative; integral for integer resources."""
    errors = []
    if q.nanos < 0:
        errors.append(FieldError.invalid(path, _qstr(q), _IS_NEGATIVE))
    if _is_integer_resource(name) and _go_scaled(q.nanos, _MILLI_NANOS) % 1000 != 0:
        errors.append(FieldError.invalid(path, _named(_qstr(q)), _IS_NOT_INTEGER))
    return errors


def _hugepage_value_error(name: str, q: _Q) -> str | None:
    """``validateResourceQuantityHugePageValue`` (``IsHugePageResourceValueDivisible``)."""
    try:
        page = parse_quantity(name[len(_HUGEPAGES_PREFIX):]).nano_value()
    except (ManifestError, TypeError, ValueError):
        page = None
    divisible = False
    if page is not None and page > 0 and _go_scaled(page, _MILLI_NANOS) % 1000 == 0:
        page_value = _go_scaled(page, _NANO)
        divisible = page_value != 0 and _go_scaled(q.nanos, _NANO) % page_value == 0
    return None if divisible else f"{_qstr(q)} is not positive integer multiple of {name}"


@functools.lru_cache(maxsize=4096)
def _name_is_fine(name_errors: Callable[[str, FieldPath], list[FieldError]], name: str) -> bool:
    return not name_errors(name, FieldPath())


def _resource_requirements_errors(requests: Mapping[str, _Q], limits: Mapping[str, _Q], path: FieldPath,
                                  name_errors: Callable[[str, FieldPath], list[FieldError]]) -> list[FieldError]:
    """``validateResourceRequirements`` (claims aside)."""
    errors: list[FieldError] = []
    limits_path = path.child("limits")
    requests_path = path.child("requests")
    limits_cpu_or_memory = requests_cpu_or_memory = limits_hugepages = requests_hugepages = False
    for name, q in limits.items():
        entry = limits_path.key(name)
        if not _name_is_fine(name_errors, name):
            errors.extend(name_errors(name, entry))
        if q.nanos < 0 or _is_integer_resource(name):
            errors.extend(_quantity_value_errors(name, q, entry))
        if _is_hugepages(name):
            limits_hugepages = True
            message = _hugepage_value_error(name, q)
            if message:
                errors.append(FieldError.invalid(entry, _qstr(q), message))
        if name in _QOS_COMPUTE_RESOURCES:
            limits_cpu_or_memory = True
    for name, q in requests.items():
        entry = requests_path.key(name)
        if not _name_is_fine(name_errors, name):
            errors.extend(name_errors(name, entry))
        if q.nanos < 0 or _is_integer_resource(name):
            errors.extend(_quantity_value_errors(name, q, entry))
        limit = limits.get(name)
        if limit is not None:
            if q.nanos != limit.nanos and not _is_overcommit_allowed(name):
                errors.append(FieldError.invalid(requests_path, _qstr(q),
                                                 f"must be equal to {name} limit of {_qstr(limit)}"))
            elif q.nanos > limit.nanos:
                errors.append(FieldError.invalid(requests_path, _qstr(q),
                                                 f"must be less than or equal to {name} limit of {_qstr(limit)}"))
        elif not _is_overcommit_allowed(name):
            errors.append(FieldError.required(limits_path, "Limit must be set for non overcommitable resources"))
        if _is_hugepages(name):
            requests_hugepages = True
            message = _hugepage_value_error(name, q)
            if message:
                errors.append(FieldError.invalid(entry, _qstr(q), message))
        if name in _QOS_COMPUTE_RESOURCES:
            requests_cpu_or_memory = True
    if not limits_cpu_or_memory and not requests_cpu_or_memory and (requests_hugepages or limits_hugepages):
        errors.append(FieldError.forbidden(path, "HugePages require cpu or memory"))
    return errors


# --------------------------------------------------------------------------------------------
# Label selectors
# --------------------------------------------------------------------------------------------
class _SelectorView(NamedTuple):
    """A label selector as upstream sees it: matchLabels, then matchExpressions, in order."""

    match_labels: tuple[tuple[Any, Any], ...]
    match_expressions: tuple[tuple[Any, Any, tuple[Any, ...]], ...]


def _view_from_raw(raw: Mapping[str, Any]) -> _SelectorView:
    labels = tuple(_as_map(get_field(raw, "matchLabels")).items())
    expressions = []
    for item in _as_seq(get_field(raw, "matchExpressions")):
        item = _as_map(item)
        key = get_field(item, "key")
        operator = get_field(item, "operator")
        values = tuple(_as_seq(get_field(item, "values")))
        expressions.append(("" if key is None else key, "" if operator is None else operator, values))
    return _SelectorView(labels, tuple(expressions))


def _view_from_typed(selector: LabelSelector) -> _SelectorView:
    # The typed selector no longer tells matchLabels from matchExpressions: every requirement is
    # taken as an expression, in the selector's (key-sorted) order.
    return _SelectorView((), tuple((key, operator, tuple(sorted(values)))
                                   for key, operator, values in selector.requirements()))


def _typed_selector_is_valid(selector: LabelSelector) -> bool:
    """Whether the typed selector passes ``ValidateLabelSelector`` (then the manifest's spelling of
    it, which only changes error paths, need not be read)."""
    for key, operator, values in selector.requirements():
        if qualified_name_errors(key):
            return False
        if operator in ("In", "NotIn"):
            if not values:
                return False
        elif operator not in ("Exists", "DoesNotExist") or values:
            return False
        for value in values:
            if label_value_errors(value):
                return False
    return True


def _selector_view(typed: LabelSelector | None, raw: Any) -> _SelectorView | None:
    """The selector to validate: the manifest's when it is the one ``typed`` was parsed from (or
    is invalid, so that nothing could be parsed from it), else the typed one; None for nil."""
    if typed is not None and not typed.selects_nothing() and _typed_selector_is_valid(typed):
        return _view_from_typed(typed)
    if isinstance(raw, Mapping):
        try:
            parsed = LabelSelector.from_dict(raw)
        except ManifestError:
            return _view_from_raw(raw)
        if typed is not None and parsed == typed:
            return _view_from_raw(raw)
    if typed is None or typed.selects_nothing():
        return None
    return _view_from_typed(typed)


def _merged_selector_view(typed: LabelSelector | None, raw: Any, match_keys: Sequence[str],
                          mismatch_keys: Sequence[str], labels: Mapping[str, str]) -> _SelectorView | None:
    """The selector as the API server stores it: ``applyLabelKeysToLabelSelector`` (pod strategy
    ``PrepareForCreate``) appends ``key In (value)`` for each matchLabelKeys key and ``key NotIn
    (value)`` for each mismatchLabelKeys key the pod has a label for, to a non-nil selector.

    The loader may already have merged them into the typed selector: the manifest's selector is
    used when the typed one is it, merged or not; without a manifest, only requirements the typed
    selector lacks are appended."""
    if not match_keys and not mismatch_keys:
        return _selector_view(typed, raw)
    added = [(key, "In", (labels[key],)) for key in match_keys if key in labels]
    added += [(key, "NotIn", (labels[key],)) for key in mismatch_keys if key in labels]
    view: _SelectorView | None = None
    if isinstance(raw, Mapping):
        try:
            parsed: LabelSelector | None = LabelSelector.from_dict(raw)
        except ManifestError:
            parsed = None
        if parsed is None or (typed is not None and (
                parsed == typed or (added and LabelSelector([*parsed.requirements(), *added]) == typed))):
            view = _view_from_raw(raw)
    if view is None:
        if typed is None or typed.selects_nothing():
            return None
        present = {(key, operator, frozenset(values)) for key, operator, values in typed.requirements()}
        added = [item for item in added if (item[0], item[1], frozenset(item[2])) not in present]
        view = _view_from_typed(typed)
    if not added:
        return view
    return _SelectorView(view.match_labels, view.match_expressions + tuple(added))


def _validate_selector_view(view: _SelectorView | None, path: FieldPath, *,
                            allow_invalid_label_values: bool = False) -> list[FieldError]:
    """``metav1validation.ValidateLabelSelector``."""
    if view is None:
        return []
    errors: list[FieldError] = []
    labels_path = path.child("matchLabels")
    for key, value in view.match_labels:
        errors.extend(_label_name_errors(str(key), labels_path))
        errors.extend(FieldError.invalid(labels_path, value, msg) for msg in label_value_errors(str(value)))
    for index, (key, operator, values) in enumerate(view.match_expressions):
        entry = path.child("matchExpressions").index(index)
        if operator in ("In", "NotIn"):
            if not values:
                errors.append(FieldError.required(entry.child("values"), _IN_NEEDS_VALUES))
        elif operator in ("Exists", "DoesNotExist"):
            if values:
                errors.append(FieldError.forbidden(entry.child("values"), _EXISTS_FORBIDS_VALUES))
        else:
            errors.append(FieldError.invalid(entry.child("operator"), _named(str(operator)),
                                             "not a valid selector operator"))
        errors.extend(_label_name_errors(str(key), entry.child("key")))
        if not allow_invalid_label_values:
            for value_index, value in enumerate(values):
                errors.extend(FieldError.invalid(entry.child("values").index(value_index), value, msg)
                              for msg in label_value_errors(str(value)))
    return errors


def validate_label_selector(selector: LabelSelector | Mapping[str, Any] | None, path: FieldPath | str
                            ) -> list[FieldError]:
    """``ValidateLabelSelector`` of a raw selector map (camelCase or snake_case) or a typed one."""
    path = path if isinstance(path, FieldPath) else FieldPath(path)
    if isinstance(selector, Mapping):
        return _validate_selector_view(_view_from_raw(selector), path)
    return _validate_selector_view(_selector_view(selector, None), path)


def _label_keys_errors(path: FieldPath, keys: Sequence[str], view: _SelectorView | None) -> list[FieldError]:
    """``validateLabelKeys``."""
    if not keys:
        return []
    if view is None:
        return [FieldError.forbidden(path, "must not be specified when labelSelector is not set")]
    errors: list[FieldError] = []
    for index, key in enumerate(keys):
        errors.extend(_label_name_errors(key, path.index(index)))
    return errors


def _match_label_keys_errors(path: FieldPath, match_keys: Sequence[str], mismatch_keys: Sequence[str],
                             view: _SelectorView | None) -> list[FieldError]:
    """``ValidateMatchLabelKeysAndMismatchLabelKeys``, on the selector after the API server merged
    the keys into it (so a key also in the selector shows up there twice)."""
    errors = _label_keys_errors(path.child("matchLabelKeys"), match_keys, view)
    errors.extend(_label_keys_errors(path.child("mismatchLabelKeys"), mismatch_keys, view))
    if view is not None:
        key_index = {key: index for index, key in enumerate(match_keys)}
        seen = {key for key, _ in view.match_labels}
        for key, _, _ in view.match_expressions:
            index = key_index.get(key)
            if index is not None and key in seen:
                errors.append(FieldError.invalid(path.index(index), key,
                                                 "exists in both matchLabelKeys and labelSelector"))
            seen.add(key)
    mismatch = set(mismatch_keys)
    for index, key in enumerate(match_keys):
        if key in mismatch:
            errors.append(FieldError.invalid(path.child("matchLabelKeys").index(index), key,
                                             "exists in both matchLabelKeys and mismatchLabelKeys"))
    return errors


# --------------------------------------------------------------------------------------------
# Node selectors and affinity
# --------------------------------------------------------------------------------------------
def _node_selector_requirement_errors(requirement: NodeSelectorRequirement, path: FieldPath, *,
                                      allow_invalid_label_values: bool) -> list[FieldError]:
    """``ValidateNodeSelectorRequirement``."""
    errors: list[FieldError] = []
    operator, values = requirement.operator, requirement.values
    if operator in ("In", "NotIn"):
        if not values:
            errors.append(FieldError.required(path.child("values"), _IN_NEEDS_VALUES))
    elif operator in ("Exists", "DoesNotExist"):
        if values:
            errors.append(FieldError.forbidden(path.child("values"), _EXISTS_FORBIDS_VALUES))
    elif operator in ("Gt", "Lt"):
        if len(values) != 1:
            errors.append(FieldError.required(path.child("values"),
                                              "must be specified single value when `operator` is 'Lt' or 'Gt'"))
    else:
        errors.append(FieldError.invalid(path.child("operator"), _named(operator), "not a valid selector operator"))
    errors.extend(_label_name_errors(requirement.key, path.child("key")))
    if not allow_invalid_label_values:
        for index, value in enumerate(values):
            errors.extend(FieldError.invalid(path.child("values").index(index), value, msg)
                          for msg in label_value_errors(value))
    return errors


def _node_field_requirement_errors(requirement: NodeSelectorRequirement, path: FieldPath) -> list[FieldError]:
    """``ValidateNodeFieldSelectorRequirement``: only ``metadata.name``, In/NotIn, one value."""
    errors: list[FieldError] = []
    if requirement.operator in ("In", "NotIn"):
        if len(requirement.values) != 1:
            errors.append(FieldError.required(path.child("values"), "must be only one value when `operator` is 'In' "
                                                                    "or 'NotIn' for node field selector"))
    else:
        errors.append(FieldError.invalid(path.child("operator"), _named(requirement.operator),
                                         "not a valid selector operator"))
    if requirement.key != "metadata.name":
        errors.append(FieldError.invalid(path.child("key"), requirement.key, "not a valid field selector key"))
    else:
        for index, value in enumerate(requirement.values):
            errors.extend(FieldError.invalid(path.child("values").index(index), value, msg)
                          for msg in name_is_dns_subdomain(value, False))
    return errors


def _node_selector_term_errors(term: NodeSelectorTerm, path: FieldPath, *,
                               allow_invalid_label_values: bool) -> list[FieldError]:
    """``ValidateNodeSelectorTerm``."""
    errors: list[FieldError] = []
    for index, requirement in enumerate(term.match_expressions):
        errors.extend(_node_selector_requirement_errors(requirement, path.child("matchExpressions").index(index),
                                                        allow_invalid_label_values=allow_invalid_label_values))
    for index, requirement in enumerate(term.match_fields):
        errors.extend(_node_field_requirement_errors(requirement, path.child("matchFields").index(index)))
    return errors


def node_selector_errors(selector: NodeSelector, path: FieldPath) -> list[FieldError]:
    """``ValidateNodeSelector`` (label values checked: required node affinity on create)."""
    terms_path = path.child("nodeSelectorTerms")
    if not selector.terms:
        return [FieldError.required(terms_path, "must have at least one node selector term")]
    errors: list[FieldError] = []
    for index, term in enumerate(selector.terms):
        errors.extend(_node_selector_term_errors(term, terms_path.index(index), allow_invalid_label_values=False))
    return errors


def _pod_affinity_term_errors(term: PodAffinityTerm, raw: Mapping[str, Any], labels: Mapping[str, str],
                              path: FieldPath) -> list[FieldError]:
    """``validatePodAffinityTerm`` on the term as stored (label keys merged into the selector)."""
    view = _merged_selector_view(term.label_selector, get_field(raw, "labelSelector"), term.match_label_keys,
                                 term.mismatch_label_keys, labels)
    errors = _validate_selector_view(view, path.child("labelSelector"))
    errors.extend(_validate_selector_view(
        _selector_view(term.namespace_selector, get_field(raw, "namespaceSelector")), path.child("namespaceSelector")))
    for namespace in term.namespaces:
        # upstream names the field "namespace" here
        errors.extend(FieldError.invalid(path.child("namespace"), namespace, msg)
                      for msg in name_is_dns_label(namespace, False))
    errors.extend(_match_label_keys_errors(path, term.match_label_keys, term.mismatch_label_keys, view))
    if not term.topology_key:
        errors.append(FieldError.required(path.child("topologyKey"), "can not be empty"))
    errors.extend(_label_name_errors(term.topology_key, path.child("topologyKey")))
    return errors


_REQUIRED = "requiredDuringSchedulingIgnoredDuringExecution"
_PREFERRED = "preferredDuringSchedulingIgnoredDuringExecution"


def _pod_affinity_errors(rules: Any, raw: Mapping[str, Any], labels: Mapping[str, str],
                         path: FieldPath) -> list[FieldError]:
    """``validatePodAffinity`` / ``validatePodAntiAffinity``."""
    errors: list[FieldError] = []
    raw_required = _as_seq(get_field(raw, _REQUIRED))
    for index, term in enumerate(rules.required):
        raw_term = _as_map(raw_required[index]) if index < len(raw_required) else {}
        errors.extend(_pod_affinity_term_errors(term, raw_term, labels, path.child(_REQUIRED).index(index)))
    raw_preferred = _as_seq(get_field(raw, _PREFERRED))
    for index, weighted in enumerate(rules.preferred):
        entry = path.child(_PREFERRED).index(index)
        if weighted.weight <= 0 or weighted.weight > 100:
            errors.append(FieldError.invalid(entry.child("weight"), weighted.weight, "must be in the range 1-100"))
        raw_term = _as_map(raw_preferred[index]) if index < len(raw_preferred) else {}
        errors.extend(_pod_affinity_term_errors(weighted.pod_affinity_term,
                                                _as_map(get_field(raw_term, "podAffinityTerm")), labels,
                                                entry.child("podAffinityTerm")))
    return errors


def _affinity_errors(affinity: Affinity | None, raw: Mapping[str, Any], labels: Mapping[str, str],
                     path: FieldPath) -> list[FieldError]:
    """``validateAffinity``."""
    if affinity is None:
        return []
    errors: list[FieldError] = []
    node_affinity = affinity.node_affinity
    if node_affinity is not None:
        node_path = path.child("nodeAffinity")
        if node_affinity.required is not None:
            errors.extend(node_selector_errors(node_affinity.required, node_path.child(_REQUIRED)))
        for index, term in enumerate(node_affinity.preferred):
            entry = node_path.child(_PREFERRED).index(index)
            if term.weight <= 0 or term.weight > 100:
                errors.append(FieldError.invalid(entry.child("weight"), term.weight, "must be in the range 1-100"))
            # "we always allow invalid label-value for preferred affinity"
            errors.extend(_node_selector_term_errors(term.preference, entry.child("preference"),
                                                     allow_invalid_label_values=True))
    if affinity.pod_affinity is not None:
        errors.extend(_pod_affinity_errors(affinity.pod_affinity, _as_map(get_field(raw, "podAffinity")), labels,
                                           path.child("podAffinity")))
    if affinity.pod_anti_affinity is not None:
        errors.extend(_pod_affinity_errors(affinity.pod_anti_affinity, _as_map(get_field(raw, "podAntiAffinity")),
                                           labels, path.child("podAntiAffinity")))
    return errors


# --------------------------------------------------------------------------------------------
# Tolerations, taints, topology spread, scheduling gates
# --------------------------------------------------------------------------------------------
_TAINT_EFFECTS = ("NoSchedule", "PreferNoSchedule", "NoExecute")


def _taint_effect_errors(effect: str, allow_empty: bool, path: FieldPath) -> list[FieldError]:
    """``validateTaintEffect``."""
    if not allow_empty and not effect:
        return [FieldError.required(path)]
    if effect not in _TAINT_EFFECTS:
        return [FieldError.not_supported(path, _named(effect), _TAINT_EFFECTS)]
    return []


def _toleration_errors(tolerations: Sequence[Toleration], path: FieldPath) -> list[FieldError]:
    """``ValidateTolerations``."""
    errors: list[FieldError] = []
    for index, toleration in enumerate(tolerations):
        entry = path.index(index)
        operator = toleration.operator  # (as written: the loader keeps an empty one)
        if toleration.key:
            errors.extend(_label_name_errors(toleration.key, entry.child("key")))
        if not toleration.key and operator != "Exists":
            errors.append(FieldError.invalid(entry.child("operator"), _named(operator),
                                             'operator must be Exists when `key` is empty, which means "match all '
                                             'values and all keys"'))
        if toleration.toleration_seconds is not None and toleration.effect != "NoExecute":
            errors.append(FieldError.invalid(entry.child("effect"), _named(toleration.effect),
                                             "effect must be 'NoExecute' when `tolerationSeconds` is set"))
        if operator in ("Equal", ""):
            problems = label_value_errors(toleration.value)
            if problems:
                errors.append(FieldError.invalid(entry.child("operator"), toleration.value, ";".join(problems)))
        elif operator == "Exists":
            if toleration.value:
                errors.append(FieldError.invalid(entry.child("operator"), toleration.value,
                                                 "value must be empty when `operator` is 'Exists'"))
        else:
            errors.append(FieldError.not_supported(entry.child("operator"), _named(operator), ("Equal", "Exists")))
        if toleration.effect:
            errors.extend(_taint_effect_errors(toleration.effect, True, entry.child("effect")))
    return errors


def _rfc3339(timestamp: float | None) -> str | None:
    if timestamp is None:
        return None
    return datetime.fromtimestamp(int(timestamp // 1), timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def _taint_errors(taints: Sequence[Taint], path: FieldPath) -> list[FieldError]:
    """``validateNodeTaints``."""
    errors: list[FieldError] = []
    seen: set[tuple[str, str]] = set()
    for index, taint in enumerate(taints):
        entry = path.index(index)
        errors.extend(_label_name_errors(taint.key, entry.child("key")))
        problems = label_value_errors(taint.value)
        if problems:
            errors.append(FieldError.invalid(entry.child("value"), taint.value, ";".join(problems)))
        errors.extend(_taint_effect_errors(taint.effect, False, entry.child("effect")))
        if (taint.effect, taint.key) in seen:
            # the internal core.Taint has no JSON tags: Go field names
            value = GoStruct(Key=taint.key, Value=taint.value, Effect=taint.effect,
                             TimeAdded=_rfc3339(taint.time_added))
            errors.append(FieldError(str(entry), ErrorType.DUPLICATE, value,
                                     "taints must be unique by key and effect pair"))
            continue
        seen.add((taint.effect, taint.key))
    return errors


def _topology_spread_errors(constraints: Sequence[TopologySpreadConstraint], raw: Sequence[Any],
                            labels: Mapping[str, str], path: FieldPath) -> list[FieldError]:
    """``validateTopologySpreadConstraints`` with v1.34's selector merge (the API server merges
    ``matchLabelKeys`` into ``labelSelector``, then checks them as for pod affinity)."""
    errors: list[FieldError] = []
    for index, constraint in enumerate(constraints):
        entry = path.index(index)
        if constraint.max_skew <= 0:
            errors.append(FieldError.invalid(entry.child("maxSkew"), constraint.max_skew, _IS_NOT_POSITIVE))
        if not constraint.topology_key:
            errors.append(FieldError.required(entry.child("topologyKey"), "can not be empty"))
        action = constraint.when_unsatisfiable
        if action not in ("DoNotSchedule", "ScheduleAnyway"):
            errors.append(FieldError.not_supported(entry.child("whenUnsatisfiable"), _named(action),
                                                   ("DoNotSchedule", "ScheduleAnyway")))
        for later in constraints[index + 1:]:
            if later.topology_key == constraint.topology_key and later.when_unsatisfiable == action:
                errors.append(FieldError.duplicate(entry.child("{topologyKey, whenUnsatisfiable}"),
                                                   f"{{{constraint.topology_key}, {action}}}"))
                break
        if constraint.min_domains is not None:
            if constraint.min_domains <= 0:
                errors.append(FieldError.invalid(entry.child("minDomains"), constraint.min_domains, _IS_NOT_POSITIVE))
            if action != "DoNotSchedule":
                errors.append(FieldError.invalid(
                    entry.child("minDomains"), constraint.min_domains,
                    f"can only use minDomains if whenUnsatisfiable=DoNotSchedule, not {action}"))
        for field_name, policy in (("nodeAffinityPolicy", constraint.node_affinity_policy),
                                   ("nodeTaintsPolicy", constraint.node_taints_policy)):
            if policy is not None and policy not in ("Honor", "Ignore"):
                errors.append(FieldError.not_supported(entry.child(field_name), _named(policy), ("Honor", "Ignore")))
        raw_constraint = _as_map(raw[index]) if index < len(raw) else {}
        view = _merged_selector_view(constraint.label_selector, get_field(raw_constraint, "labelSelector"),
                                     constraint.match_label_keys, (), labels)
        errors.extend(_match_label_keys_errors(entry, constraint.match_label_keys, (), view))
        errors.extend(_validate_selector_view(view, entry.child("labelSelector")))
    return errors


def _scheduling_gate_errors(gates: Sequence[str], path: FieldPath) -> list[FieldError]:
    """``validateSchedulingGates``."""
    errors: list[FieldError] = []
    seen: set[str] = set()
    for index, gate in enumerate(gates):
        errors.extend(_qualified_name_errors(gate, path.index(index)))
        if gate in seen:
            errors.append(FieldError.duplicate(path.index(index), gate))
        seen.add(gate)
    return errors


# --------------------------------------------------------------------------------------------
# Containers
# --------------------------------------------------------------------------------------------
def _container_port_errors(container: Container, path: FieldPath) -> list[FieldError]:
    """``validateContainerPorts``."""
    errors: list[FieldError] = []
    names: set[str] = set()
    for index, port in enumerate(container.ports):
        entry = path.index(index)
        if port.name:
            problems = is_valid_port_name(port.name)
            if problems:
                errors.extend(FieldError.invalid(entry.child("name"), port.name, msg) for msg in problems)
            elif port.name in names:
                errors.append(FieldError.duplicate(entry.child("name"), port.name))
            else:
                names.add(port.name)
        if port.container_port == 0:
            errors.append(FieldError.required(entry.child("containerPort")))
        else:
            errors.extend(FieldError.invalid(entry.child("containerPort"), port.container_port, msg)
                          for msg in is_valid_port_num(port.container_port))
        if port.host_port != 0:
            errors.extend(FieldError.invalid(entry.child("hostPort"), port.host_port, msg)
                          for msg in is_valid_port_num(port.host_port))
        if not port.protocol:
            errors.append(FieldError.required(entry.child("protocol")))
        elif port.protocol not in ("SCTP", "TCP", "UDP"):
            errors.append(FieldError.not_supported(entry.child("protocol"), _named(port.protocol),
                                                   ("SCTP", "TCP", "UDP")))
    return errors


def _host_port_conflicts(containers: Sequence[Container], path: FieldPath) -> list[FieldError]:
    """``checkHostPortConflicts`` (``AccumulateUniqueHostPorts``): protocol/hostIP/hostPort unique."""
    errors: list[FieldError] = []
    seen: set[str] = set()
    for container_index, container in enumerate(containers):
        for port_index, port in enumerate(container.ports):
            if port.host_port == 0:
                continue
            key = f"{port.protocol}/{port.host_ip}/{port.host_port}"
            if key in seen:
                errors.append(FieldError.duplicate(
                    path.index(container_index).child("ports").index(port_index).child("hostPort"), key))
            else:
                seen.add(key)
    return errors


def _container_resources(container: Container, raw: Mapping[str, Any]) -> tuple[dict[str, _Q], dict[str, _Q]]:
    resources = _as_map(get_field(raw, "resources"))
    raw_requests = get_field(resources, "requests")
    raw_limits = get_field(resources, "limits")
    limits = _quantities(container.limits, (raw_limits,))
    # requests missing from the manifest were defaulted from the limits (SetDefaults_Pod)
    requests = _quantities(container.requests, (raw_requests, raw_limits), container.request_nanos)
    return requests, limits


def _container_common_errors(container: Container, raw: Mapping[str, Any], path: FieldPath) -> list[FieldError]:
    """``validateContainerCommon`` for the fields kept on :class:`Container`."""
    errors: list[FieldError] = []
    if not container.name:
        errors.append(FieldError.required(path.child("name")))
    elif dns1123_label_errors(container.name):
        errors.extend(_dns_label_errors(container.name, path.child("name")))
    if not container.image:
        errors.append(FieldError.required(path.child("image")))
    if container.ports:
        errors.extend(_container_port_errors(container, path.child("ports")))
    if container.requests or container.limits:
        requests, limits = _container_resources(container, raw)
        errors.extend(_resource_requirements_errors(requests, limits, path.child("resources"),
                                                    _container_resource_name_errors))
    return errors


def _raw_list(raw_spec: Mapping[str, Any], key: str, typed_len: int) -> Sequence[Any]:
    """The manifest's list for ``key`` when it lines up with the typed list, else ()."""
    items = _as_seq(get_field(raw_spec, key))
    return items if len(items) == typed_len else ()


def _raw_item(items: Sequence[Any], index: int) -> Mapping[str, Any]:
    return _as_map(items[index]) if index < len(items) else {}


def _containers_errors(containers: Sequence[Container], raw: Sequence[Any], path: FieldPath) -> list[FieldError]:
    """``validateContainers``."""
    if not containers:
        return [FieldError.required(path)]
    errors: list[FieldError] = []
    names: set[str] = set()
    for index, container in enumerate(containers):
        entry = path.index(index)
        errors.extend(_container_common_errors(container, _raw_item(raw, index), entry))
        if container.name in names:
            errors.append(FieldError.duplicate(entry.child("name"), container.name))
        else:
            names.add(container.name)
        errors.extend(_container_restart_policy_errors(container, entry))
    errors.extend(_host_port_conflicts(containers, path))
    return errors


_CONTAINER_RESTART_POLICIES = ("Always", "Never", "OnFailure")
#: with RestartAllContainersOnContainerExits (beta, on since v1.36)
_CONTAINER_RESTART_RULE_ACTIONS = ("Restart", "RestartAllContainers")
_CONTAINER_RESTART_RULE_OPERATORS = ("In", "NotIn")


def _container_restart_policy_errors(container: Container, path: FieldPath) -> list[FieldError]:
    """``validateContainerRestartPolicy`` with ContainerRestartRules (beta, on since v1.35) and
    RestartAllContainersOnContainerExits (beta, on since v1.36): a container's ``restartPolicy``
    and ``restartPolicyRules``, for regular containers and (through
    :func:`_init_container_restart_policy_errors`) init containers."""
    errors: list[FieldError] = []
    policy, rules = container.restart_policy, container.restart_policy_rules
    if policy is None:
        if not rules:
            return errors
        errors.append(FieldError.required(path.child("restartPolicy"),
                                          "must specify restartPolicy when restart rules are used"))
    elif policy not in _CONTAINER_RESTART_POLICIES:
        errors.append(FieldError.not_supported(path.child("restartPolicy"), _named(policy), _CONTAINER_RESTART_POLICIES))
    if len(rules) > 20:
        errors.append(FieldError.too_many(path.child("restartPolicyRules"), len(rules), 20))
    for index, rule in enumerate(rules):
        entry = path.child("restartPolicyRules").index(index)
        action = str(rule.get("action") or "")
        if action not in _CONTAINER_RESTART_RULE_ACTIONS:
            errors.append(FieldError.not_supported(entry.child("action"), _named(action), _CONTAINER_RESTART_RULE_ACTIONS))
        exit_codes = rule.get("exitCodes")
        if exit_codes is not None:
            codes = entry.child("exitCodes")
            operator = str(_as_map(exit_codes).get("operator") or "")
            if operator not in _CONTAINER_RESTART_RULE_OPERATORS:
                errors.append(FieldError.not_supported(codes.child("operator"), _named(operator),
                                                       _CONTAINER_RESTART_RULE_OPERATORS))
            values = _as_seq(_as_map(exit_codes).get("values"))
            if len(values) > 255:
                errors.append(FieldError.too_many(codes.child("values"), len(values), 255))
        else:
            errors.append(FieldError.required(entry.child("exitCodes"), "must be specified"))
    return errors


def _init_container_restart_policy_errors(container: Container, path: FieldPath) -> list[FieldError]:
    """``validateInitContainerRestartPolicy`` with ContainerRestartRules and
    RestartAllContainersOnContainerExits on: any container restart policy, and rules (also on a
    sidecar, ``Always``)."""
    if container.restart_policy is None:
        if container.restart_policy_rules:
            return [FieldError.required(path.child("restartPolicy"), "must specify restartPolicy when restart rules are used")]
        return []
    return _container_restart_policy_errors(container, path)


def _init_containers_errors(init_containers: Sequence[Container], containers: Sequence[Container],
                            raw: Sequence[Any], path: FieldPath) -> list[FieldError]:
    """``validateInitContainers``."""
    errors: list[FieldError] = []
    names = {container.name for container in containers}
    for index, container in enumerate(init_containers):
        entry = path.index(index)
        errors.extend(_container_common_errors(container, _raw_item(raw, index), entry))
        errors.extend(_init_container_restart_policy_errors(container, entry))
        if container.name in names:
            errors.append(FieldError.duplicate(entry.child("name"), container.name))
        elif container.name:
            names.add(container.name)
        # init containers run one by one: each is checked alone (upstream indexes it as [0])
        errors.extend(_host_port_conflicts((container,), path))
    return errors


_GO_SPACE = " \t\n\v\f\r\x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a" \
            "\u2028\u2029\u202f\u205f\u3000"


def _containers_only_for_pod_errors(containers: Sequence[Container], path: FieldPath) -> list[FieldError]:
    """``validateContainersOnlyForPod``: no whitespace around the image."""
    return [FieldError.invalid(path.index(index).child("image"), container.image,
                               "must not have leading or trailing whitespace")
            for index, container in enumerate(containers)
            if container.image != container.image.strip(_GO_SPACE)]


# --------------------------------------------------------------------------------------------
# Pod-level resources and overhead
# --------------------------------------------------------------------------------------------
def _first_format(name: str, containers: Iterable[Sequence[Container]], raws: Iterable[Sequence[Any]]) -> str:
    """The format of the first container quantity for ``name`` (a Quantity sum keeps it)."""
    for group, raw in zip(containers, raws):
        for index, container in enumerate(group):
            if name in container.requests:
                requests, _ = _container_resources(container, _raw_item(raw, index))
                return requests[name].format
    return _DECIMAL_SI


def _pod_resources_errors(pod: Pod, raw_spec: Mapping[str, Any], raw_containers: Sequence[Any],
                          raw_init: Sequence[Any], path: FieldPath) -> list[FieldError]:
    """``validatePodResources``: names and quantities, then ``validatePodResourceConsistency``."""
    resources = pod.resources
    if resources is None:
        return []
    raw = _as_map(get_field(raw_spec, "resources"))
    errors: list[FieldError] = []
    if get_field(raw, "claims") is not None:
        errors.append(FieldError.forbidden(path.child("claims"), "claims cannot be set for Resources at pod-level"))
    raw_requests, raw_limits = get_field(raw, "requests"), get_field(raw, "limits")
    limits = _quantities(resources.limits, (raw_limits,))
    requests = _quantities(resources.requests, (raw_requests, raw_limits), resources.request_nanos)
    errors.extend(_resource_requirements_errors(requests, limits, path, _pod_resource_name_errors))

    # Pod-level requests cover the containers' aggregate, for the resources pod-level resources
    # support (v1.34 skips the others); a supported resource missing at pod level counts as 0.
    aggregate = aggregate_container_request_nanos(pod.containers, pod.init_containers)
    for name, nanos in aggregate.items():
        if not _is_pod_level_resource(name):
            continue
        pod_request = requests.get(name, _Q(0))
        if nanos > pod_request.nanos:
            total = _Q(nanos, _first_format(name, (pod.containers, pod.init_containers), (raw_containers, raw_init)))
            errors.append(FieldError.invalid(path.child("requests").key(name), _qstr(pod_request),
                                             f"must be greater than or equal to aggregate container requests of "
                                             f"{_qstr(total)}"))
    # No regular container's limit above the pod-level limit.
    for index, container in enumerate(pod.containers):
        _, container_limits = _container_resources(container, _raw_item(raw_containers, index))
        for name, q in container_limits.items():
            pod_limit = limits.get(name)
            if pod_limit is not None and q.nanos > pod_limit.nanos:
                errors.append(FieldError.invalid(path.child("containers").index(index).key(name).child("limits"),
                                                 _qstr(q), f"must be less than or equal to pod limits of "
                                                           f"{_qstr(pod_limit)}"))
    return errors


def _overhead_errors(pod: Pod, raw_spec: Mapping[str, Any], path: FieldPath) -> list[FieldError]:
    """``validateOverhead``: the overhead checked as container limits (paths ``.limits[...]``)."""
    overhead = _quantities(pod.overhead, (get_field(raw_spec, "overhead"),), pod.overhead_nanos)
    return _resource_requirements_errors({}, overhead, path, _container_resource_name_errors)


# --------------------------------------------------------------------------------------------
# Volumes
# --------------------------------------------------------------------------------------------
#: ``core.VolumeSource``'s members in ``validateVolumeSource``'s order, as ``(JSON name, the path
#: its "may not specify more than 1 volume type" error names)``: upstream spells two of those
#: paths its own way (``cephFS``, ``downwarAPI``), kept as they are.
_VOLUME_SOURCES = (
    ("emptyDir", "emptyDir"), ("hostPath", "hostPath"), ("gitRepo", "gitRepo"),
    ("gcePersistentDisk", "gcePersistentDisk"), ("awsElasticBlockStore", "awsElasticBlockStore"),
    ("secret", "secret"), ("nfs", "nfs"), ("iscsi", "iscsi"), ("glusterfs", "glusterfs"), ("flocker", "flocker"),
    ("persistentVolumeClaim", "persistentVolumeClaim"), ("rbd", "rbd"), ("cinder", "cinder"),
    ("cephfs", "cephFS"), ("quobyte", "quobyte"), ("downwardAPI", "downwarAPI"), ("fc", "fc"),
    ("flexVolume", "flexVolume"), ("configMap", "configMap"), ("azureFile", "azureFile"),
    ("vsphereVolume", "vsphereVolume"), ("photonPersistentDisk", "photonPersistentDisk"),
    ("portworxVolume", "portworxVolume"), ("azureDisk", "azureDisk"), ("storageos", "storageos"),
    ("projected", "projected"), ("scaleIO", "scaleIO"), ("csi", "csi"), ("ephemeral", "ephemeral"),
    ("image", "image"),
)
#: each source's place in ``_VOLUME_SOURCES``, by its JSON name and its client (snake_case) name
_VOLUME_SOURCE_INDEX = {**{_snake_case(key): at for at, (key, _) in enumerate(_VOLUME_SOURCES)},
                        **{key: at for at, (key, _) in enumerate(_VOLUME_SOURCES)}}
_MORE_THAN_ONE_VOLUME_TYPE = "may not specify more than 1 volume type"
#: ``pdPartitionErrorMsg`` (``InclusiveRangeError(1, 255)``, though 0 is accepted)
_PD_PARTITION = "must be between 1 and 255, inclusive"
# iscsiInitiator{Iqn,Eui,Naa}Regex, with Go's ASCII classes and end of text spelled out (Go's
# MatchString searches: the iqn pattern is anchored at its end only)
_ISCSI_IQN_RE = re.compile(r"iqn\.[0-9]{4}-[0-9]{2}\.([A-Za-z0-9.\-]+)(:[^,;*&$|\t\n\f\r ]+)\Z")
_ISCSI_EUI_RE = re.compile(r"\Aeui.[A-Za-z0-9]{16}\Z")
_ISCSI_NAA_RE = re.compile(r"\Anaa.[A-Za-z0-9]{32}\Z")
_ISCSI_TOO_LONG = ("Total length of <volume name>:<iscsi.targetPortal> must be under 64 characters if "
                   "iscsi.initiatorName is specified.")
_AZURE_CACHING_MODES = ("None", "ReadOnly", "ReadWrite")  # (sets.List: sorted)
_AZURE_DISK_KINDS = ("Dedicated", "Managed", "Shared")
_AZURE_MANAGED_URI = ("/subscriptions/{sub-id}/resourcegroups/{group-name}/providers/microsoft.compute/disks/{disk-id}",)
_AZURE_BLOB_URI = ("https://{account-name}.blob.core.windows.net/{container-name}/{disk-name}.vhd",)


def _str_field(source: Mapping[str, Any], key: str) -> str:
    """A string field of a raw volume source; Go's zero value ``""`` when absent."""
    value = get_field(source, key)
    return "" if value is None else value


def _int_field(source: Mapping[str, Any], key: str) -> int:
    value = get_field(source, key)
    return 0 if value is None else value


def _partition_errors(source: Mapping[str, Any], path: str) -> list[FieldError]:
    partition = _int_field(source, "partition")
    return [] if 0 <= partition <= 255 else [FieldError.invalid(f"{path}.partition", partition, _PD_PARTITION)]


def _required(source: Mapping[str, Any], keys: Sequence[str], path: str) -> list[FieldError]:
    return [FieldError.required(f"{path}.{key}", "") for key in keys if not get_field(source, key)]


def _iqn_format_errors(value: str, path: str, bad_prefix: str) -> list[FieldError]:
    if not value.startswith(("iqn", "eui", "naa")):
        return [FieldError.invalid(path, value, bad_prefix)]
    pattern = _ISCSI_IQN_RE if value.startswith("iqn") else _ISCSI_EUI_RE if value.startswith("eui") else _ISCSI_NAA_RE
    return [] if pattern.search(value) else [FieldError.invalid(path, value, "must be valid format")]


def _iscsi_errors(iscsi: Mapping[str, Any], path: str) -> list[FieldError]:
    """``validateISCSIVolumeSource``."""
    errors = _required(iscsi, ("targetPortal",), path)
    iqn = _str_field(iscsi, "iqn")
    if not iqn:
        errors.append(FieldError.required(f"{path}.iqn", ""))
    else:
        errors.extend(_iqn_format_errors(iqn, f"{path}.iqn", "must be valid format starting with iqn, eui, or naa"))
    lun = _int_field(iscsi, "lun")
    if not 0 <= lun <= 255:
        errors.append(FieldError.invalid(f"{path}.lun", lun, "must be between 0 and 255, inclusive"))
    if (get_field(iscsi, "chapAuthDiscovery") or get_field(iscsi, "chapAuthSession")) \
            and get_field(iscsi, "secretRef") is None:
        errors.append(FieldError.required(f"{path}.secretRef", ""))
    initiator = get_field(iscsi, "initiatorName")
    if initiator is not None:
        # (upstream's path is lower case here; a wrong prefix is not checked against the patterns)
        initiator_path = f"{path}.initiatorname"
        if not initiator.startswith(("iqn", "eui", "naa")):
            errors.append(FieldError.invalid(initiator_path, initiator,
                                             "must be valid format starting with iqn, eui, or naa"))
        else:
            errors.extend(_iqn_format_errors(initiator, initiator_path, ""))
    return errors


def _azure_disk_errors(azure: Mapping[str, Any], path: str) -> list[FieldError]:
    """``validateAzureDisk``."""
    errors = _required(azure, ("diskName", "diskURI"), path)
    caching = get_field(azure, "cachingMode")
    if caching is not None and caching not in _AZURE_CACHING_MODES:
        errors.append(FieldError.not_supported(f"{path}.cachingMode", caching, _AZURE_CACHING_MODES))
    kind = get_field(azure, "kind")
    if kind is not None and kind not in _AZURE_DISK_KINDS:
        errors.append(FieldError.not_supported(f"{path}.kind", kind, _AZURE_DISK_KINDS))
    uri = _str_field(azure, "diskURI")
    if kind is not None:
        if kind == "Managed" and not uri.startswith("/subscriptions/"):
            errors.append(FieldError.not_supported(f"{path}.diskURI", uri, _AZURE_MANAGED_URI))
        if kind != "Managed" and not uri.startswith("https://"):
            errors.append(FieldError.not_supported(f"{path}.diskURI", uri, _AZURE_BLOB_URI))
    return errors


def csi_driver_name_errors(name: str, path: str) -> list[FieldError]:
    """``ValidateCSIDriverName``: required, at most 63 bytes, a DNS subdomain once lower-cased."""
    if not name:
        return [FieldError.required(path, "")]
    errors = [FieldError.too_long(path, 63)] if byte_length(name) > 63 else []
    errors.extend(FieldError.invalid(path, name, msg) for msg in is_dns1123_subdomain(name.lower()))
    return errors


def _csi_errors(csi: Mapping[str, Any], path: str) -> list[FieldError]:
    """``validateCSIVolumeSource``."""
    errors = csi_driver_name_errors(_str_field(csi, "driver"), f"{path}.driver")
    secret = get_field(csi, "nodePublishSecretRef")
    if secret is not None:
        secret_name = _str_field(_as_map(secret), "name")
        if not secret_name:
            errors.append(FieldError.required(f"{path}.nodePublishSecretRef.name", ""))
        else:  # (upstream's path: the source's, not the reference's)
            errors.extend(FieldError.invalid(f"{path}.name", secret_name, msg)
                          for msg in name_is_dns_subdomain(secret_name, False))
    return errors


def _cinder_errors(cinder: Mapping[str, Any], path: str) -> list[FieldError]:
    errors = _required(cinder, ("volumeID",), path)
    secret = get_field(cinder, "secretRef")
    if secret is not None and not _str_field(_as_map(secret), "name"):
        errors.append(FieldError.required(f"{path}.secretRef.name", ""))
    return errors


#: the per-source checks of the sources the scheduler reads (the volume plugins: claims, ephemeral
#: volumes, the conflict-checked and the CSI-migratable in-tree disks, CSI), as
#: ``JSON name -> (the child path upstream validates it under, its check)``. The other sources are
#: counted (one source a volume) but their fields are not checked (the module docstring).
_VOLUME_SOURCE_CHECKS: dict[str, tuple[str, Callable[[Mapping[str, Any], str], list[FieldError]]]] = {
    # (upstream validates gcePersistentDisk under the path "persistentDisk")
    "gcePersistentDisk": ("persistentDisk", lambda s, p: _required(s, ("pdName",), p) + _partition_errors(s, p)),
    "awsElasticBlockStore": ("awsElasticBlockStore",
                             lambda s, p: _required(s, ("volumeID",), p) + _partition_errors(s, p)),
    "iscsi": ("iscsi", _iscsi_errors),
    "persistentVolumeClaim": ("persistentVolumeClaim", lambda s, p: _required(s, ("claimName",), p)),
    "rbd": ("rbd", lambda s, p: _required(s, ("monitors", "image"), p)),
    "cinder": ("cinder", _cinder_errors),
    "azureFile": ("azureFile", lambda s, p: _required(s, ("secretName", "shareName"), p)),
    "vsphereVolume": ("vsphereVolume", lambda s, p: _required(s, ("volumePath",), p)),
    "portworxVolume": ("portworxVolume", lambda s, p: _required(s, ("volumeID",), p)),
    "azureDisk": ("azureDisk", _azure_disk_errors),
    "csi": ("csi", _csi_errors),
    # (the claim template itself is validated where its claim is created: the Cluster's
    # ``_ephemeral_claims``, with this volume's path)
    "ephemeral": ("ephemeral", lambda s, p: [] if get_field(s, "volumeClaimTemplate") is not None
                  else [FieldError.required(f"{p}.volumeClaimTemplate", "")]),
}


def ephemeral_claim_name_errors(pod_name: str, volume_name: str) -> tuple[str, ...]:
    """What ``ValidatePersistentVolumeName`` says of the claim ``<pod>-<volume>`` a generic
    ephemeral volume gets (the messages, each to be prefixed ``PVC name "<claim>": ``)."""
    return tuple(name_is_dns_subdomain(f"{pod_name}-{volume_name}", False))


def _volume_source_errors(volume: Mapping[str, Any], path: str, volume_name: str,
                          pod_name: str) -> list[FieldError]:
    """``validateVolumeSource``: exactly one source, and the checks of the sources the scheduler
    reads (``_VOLUME_SOURCE_CHECKS``)."""
    errors: list[FieldError] = []
    count = 0
    # (the volume's own keys looked up, not the 30 sources: pods stamped from a template run this
    # per pod, see ``templates``)
    present = [at for key, value in volume.items() if (at := _VOLUME_SOURCE_INDEX.get(key)) is not None
               and value is not None]
    if len(present) > 1:  # (a source in both spellings is one source)
        present = sorted(set(present))
    for at in present:
        key, forbidden_path = _VOLUME_SOURCES[at]
        source = get_field(volume, key)
        if count:
            errors.append(FieldError.forbidden(f"{path}.{forbidden_path}", _MORE_THAN_ONE_VOLUME_TYPE))
        else:
            count = 1
            check = _VOLUME_SOURCE_CHECKS.get(key)
            if check is not None:
                errors.extend(check[1](_as_map(source), f"{path}.{check[0]}"))
            if key == "ephemeral" and pod_name and volume_name:
                claim = f"{pod_name}-{volume_name}"
                errors.extend(FieldError.invalid(f"{path}.name", volume_name, f"PVC name {go_quote(claim)}: {msg}")
                              for msg in ephemeral_claim_name_errors(pod_name, volume_name))
        if key == "iscsi" and get_field(_as_map(source), "initiatorName") is not None \
                and byte_length(f"{volume_name}:{_str_field(_as_map(source), 'targetPortal')}") > 64:
            errors.append(FieldError.invalid(f"{path}.name", volume_name, _ISCSI_TOO_LONG))
    if not count:
        errors.append(FieldError.required(path, "must specify a volume type"))
    return errors


def validate_volumes(volumes: Sequence[Any], pod_name: str, path: str) -> list[FieldError]:
    """``ValidateVolumes`` over a pod's raw ``spec.volumes`` entries (``path`` their field path):
    each volume's source (:func:`_volume_source_errors`), its name (required, a DNS label, not
    repeated: a refused volume's name does not count as taken) and no ``persistentVolumeClaim``
    naming the claim an ephemeral volume of the pod creates. ``pod_name`` empty (a template, or
    ``generateName``) skips what needs the pod's name, as upstream does without it."""
    errors: list[FieldError] = []
    created: set[str] | None = None
    names: set[str] = set()
    for i, raw in enumerate(volumes):
        volume = _as_map(raw)
        volume_path = f"{path}[{i}]"
        name = volume.get("name") or ""
        found = _volume_source_errors(volume, volume_path, name, pod_name)
        if not name:
            found.append(FieldError.required(f"{volume_path}.name", ""))
        elif label_errors := dns1123_label_errors(name):
            found.extend(FieldError.invalid(f"{volume_path}.name", name, msg) for msg in label_errors)
        if name in names:
            found.append(FieldError.duplicate(f"{volume_path}.name", name))
        if found:
            errors.extend(found)
        else:
            names.add(name)
        if pod_name and (claim := get_field(volume, "persistentVolumeClaim")) is not None:
            if created is None:
                created = {f"{pod_name}-{_as_map(v).get('name') or ''}" for v in volumes
                           if get_field(_as_map(v), "ephemeral") is not None}
            claim_name = _str_field(_as_map(claim), "claimName")
            if claim_name in created:
                errors.append(FieldError.invalid(f"{volume_path}.persistentVolumeClaim.claimName", claim_name,
                                                 "must not reference a PVC that gets created for an ephemeral volume"))
    return errors


# --------------------------------------------------------------------------------------------
# Pods
# --------------------------------------------------------------------------------------------
def validate_pod_spec(pod: Pod, path: FieldPath | str = "spec", *, resource_is_pod: bool = False) -> list[FieldError]:
    """``ValidatePodSpec`` for the fields the scheduler reads.

    Reusable for pod templates (``validate_pod_spec(template_pod, "spec.template.spec")``); the
    pod's ``manifest`` (a Pod or a pod template document, with a ``spec``) supplies quantity
    formats. ``resource_is_pod`` is upstream's ``PodValidationOptions.ResourceIsPod``: a pod (not a
    template) with host networking must have ``hostPort == containerPort`` on every port.
    """
    path = path if isinstance(path, FieldPath) else FieldPath(path)
    raw_spec = _as_map(get_field(_as_map(pod.manifest), "spec"))
    raw_containers = _raw_list(raw_spec, "containers", len(pod.containers))
    raw_init = _raw_list(raw_spec, "initContainers", len(pod.init_containers)) if pod.init_containers else ()
    labels = pod.labels
    # (a template has no pod name: upstream passes no metadata, and the checks needing it are skipped)
    errors = validate_volumes(pod.volumes, pod.name if resource_is_pod else "", f"{path}.volumes") \
        if pod.volumes else []
    errors.extend(_containers_errors(pod.containers, raw_containers, path.child("containers")))
    if pod.init_containers:
        errors.extend(_init_containers_errors(pod.init_containers, pod.containers, raw_init,
                                              path.child("initContainers")))
    if pod.resources is not None:
        errors.extend(_pod_resources_errors(pod, raw_spec, raw_containers, raw_init, path.child("resources")))
    if pod.host_network:  # validatePodHostNetworkDeps
        for index, container in enumerate(pod.containers):
            for port_index, port in enumerate(container.ports):
                if (resource_is_pod or port.host_port != 0) and port.host_port != port.container_port:
                    errors.append(FieldError.invalid(
                        path.child("containers").index(index).child("ports").index(port_index).child("hostPort"),
                        port.host_port, "must match `containerPort` when `hostNetwork` is true"))
    if pod.node_selector:
        errors.extend(validate_labels(pod.node_selector, path.child("nodeSelector")))
    if pod.affinity is not None:
        errors.extend(_affinity_errors(pod.affinity, _as_map(get_field(raw_spec, "affinity")), labels,
                                       path.child("affinity")))
    if pod.scheduling_gates:
        errors.extend(_scheduling_gate_errors(pod.scheduling_gates, path.child("schedulingGates")))
    if pod.topology_spread_constraints:
        errors.extend(_topology_spread_errors(
            pod.topology_spread_constraints,
            _raw_list(raw_spec, "topologySpreadConstraints", len(pod.topology_spread_constraints)),
            labels, path.child("topologySpreadConstraints")))
    if pod.node_name:
        errors.extend(_name_errors(name_is_dns_subdomain, pod.node_name, path.child("nodeName")))
    for key in ("hostname", "subdomain"):  # (not kept: the manifest's; "" is not checked)
        value = raw_spec.get(key)
        if value:
            errors.extend(_dns_label_errors(value, path.child(key)))
    if pod.tolerations:
        errors.extend(_toleration_errors(pod.tolerations, path.child("tolerations")))
    if pod.priority_class_name:
        errors.extend(_name_errors(name_is_dns_subdomain, pod.priority_class_name, path.child("priorityClassName")))
    runtime_class = raw_spec.get("runtimeClassName")  # (not kept: the RuntimeClass admission reads it)
    if isinstance(runtime_class, str):  # ValidateRuntimeClassName, when set at all ("" too)
        errors.extend(_name_errors(name_is_dns_subdomain, runtime_class, path.child("runtimeClassName")))
    if pod.preemption_policy not in ("PreemptLowerPriority", "Never"):
        policy_path = path.child("preemptionPolicy")
        if not pod.preemption_policy:
            errors.append(FieldError.required(policy_path))
        else:
            errors.append(FieldError.not_supported(policy_path, _named(pod.preemption_policy),
                                                   ("PreemptLowerPriority", "Never")))
    if pod.overhead:
        errors.extend(_overhead_errors(pod, raw_spec, path.child("overhead")))
    if pod.resource_claims or raw_spec.get("resourceClaims") is not None:
        errors.extend(validate_pod_resource_claims(pod, path.child("resourceClaims")))
    if pod.scheduling_group is not None:
        errors.extend(_scheduling_group_errors(pod.scheduling_group.pod_group_name,
                                               path.child("schedulingGroup", "podGroupName")))
    return errors


def _scheduling_group_errors(pod_group_name: str | None, path: FieldPath) -> list[FieldError]:
    """``validateSchedulingGroup``: a one-of with ``podGroupName`` its only member, a DNS
    subdomain (``ValidatePodGroupName``)."""
    if pod_group_name is None:
        return [FieldError.invalid(path, None, "must specify one of: `podGroupName`")]
    return _name_errors(name_is_dns_subdomain, pod_group_name, path)


def validate_pod(pod: Pod) -> list[FieldError]:
    """``ValidatePodCreate``: metadata, spec, the pod-only container checks, and no
    ``spec.nodeName`` while scheduling gates remain."""
    errors = validate_object_meta(pod, namespaced=True, name_rule=name_is_dns_subdomain)
    spec = FieldPath("spec")
    errors.extend(validate_pod_spec(pod, spec, resource_is_pod=True))
    errors.extend(_containers_only_for_pod_errors(pod.containers, spec.child("containers")))
    errors.extend(_containers_only_for_pod_errors(pod.init_containers, spec.child("initContainers")))
    if pod.node_name and pod.scheduling_gates:
        errors.append(FieldError.forbidden(spec.child("nodeName"),
                                           "cannot be set until all schedulingGates have been cleared"))
    errors.extend(_node_allocatable_claim_status_errors(pod))
    return errors


def _is_node_allocatable_resource_name(name: Any) -> bool:
    """``helper.IsNodeAllocatableResourceName``: cpu, memory, ``hugepages-*``."""
    return isinstance(name, str) and (name in ("cpu", "memory") or name.startswith("hugepages-"))


def _negative_quantity(value: Any) -> bool:
    try:
        return value is not None and parse_quantity(value).sign() < 0
    except Exception:  # (a malformed quantity is the decoder's error)
        return False


def _node_allocatable_claim_status_errors(pod: Pod) -> list[FieldError]:
    """``validateNodeAllocatableResourceClaimStatus`` (``ValidatePodStatusUpdate``) on a pod given
    with ``status.nodeAllocatableResourceClaimStatuses``: fastsched takes a pod's status as written
    by a status update, and the field is there only with DRANodeAllocatableResources on (dropped
    on create otherwise). Each entry names a claim of ``spec.resourceClaims`` (or of
    ``status.resourceClaimStatuses``); mapped and overhead resources are node-allocatable ones with
    non-negative quantities, an overhead with ``perPod`` or ``perContainer``."""
    manifest = _as_map(pod.manifest)
    status = _as_map(get_field(manifest, "status"))
    statuses = get_field(status, "nodeAllocatableResourceClaimStatuses")
    if not isinstance(statuses, Sequence) or isinstance(statuses, (str, bytes)) or not statuses:
        return []
    path = FieldPath("status").child("nodeAllocatableResourceClaimStatuses")
    named = {get_field(_as_map(c), "resourceClaimName") for c in pod.resource_claims}
    named |= {get_field(_as_map(c), "resourceClaimName")
              for c in (get_field(status, "resourceClaimStatuses") or ()) if isinstance(c, Mapping)}
    named.discard(None)
    errors: list[FieldError] = []
    for i, entry in enumerate(statuses):
        entry = _as_map(entry)
        p = path.index(i)
        name = get_field(entry, "resourceClaimName") or ""
        if not name:
            continue
        if name not in named:
            errors.append(FieldError.invalid(p.child("resourceClaimName"), name, "no mapping found in pod reference"))
        for j, item in enumerate(get_field(entry, "mapping") or ()):
            item, ip = _as_map(item), p.child("mapping").index(j)
            if not _is_node_allocatable_resource_name(get_field(item, "name")):
                errors.append(FieldError.invalid(ip.child("name"), get_field(item, "name") or "",
                                                 "must be a node allocatable resource name"))
            if _negative_quantity(get_field(item, "quantity")):
                errors.append(FieldError.invalid(ip.child("quantity"), str(get_field(item, "quantity")),
                                                 "must be non-negative"))
        for j, item in enumerate(get_field(entry, "overhead") or ()):
            item, ip = _as_map(item), p.child("overhead").index(j)
            if not _is_node_allocatable_resource_name(get_field(item, "name")):
                errors.append(FieldError.invalid(ip.child("name"), get_field(item, "name") or "",
                                                 "must be a node allocatable resource name"))
            per_pod, per_container = get_field(item, "perPod"), get_field(item, "perContainer")
            if per_pod is None and per_container is None:
                errors.append(FieldError.invalid(ip, "", "at least one of perPod or perContainer must be set"))
            else:
                if _negative_quantity(per_pod):
                    errors.append(FieldError.invalid(ip.child("perPod"), str(per_pod), "must be non-negative"))
                if _negative_quantity(per_container):
                    errors.append(FieldError.invalid(ip.child("perContainer"), str(per_container),
                                                     "must be non-negative"))
    return errors


# --------------------------------------------------------------------------------------------
# Nodes, namespaces, priority classes, PDBs
# --------------------------------------------------------------------------------------------
def validate_node(node: Node) -> list[FieldError]:
    """``ValidateNode``: metadata, taints (reported under ``metadata.taints``, as upstream does)
    and the capacity/allocatable quantities (``ValidateNodeResources``: not negative, integral for
    integer resources; upstream does not check their names)."""
    meta = FieldPath("metadata")
    errors = validate_object_meta(node, namespaced=False, name_rule=name_is_dns_subdomain)
    if node.taints:
        errors.extend(_taint_errors(node.taints, meta.child("taints")))
    raw_status = _as_map(get_field(_as_map(node.manifest), "status"))
    raw_capacity = get_field(raw_status, "capacity")
    raw_allocatable = get_field(raw_status, "allocatable")
    for field_name, typed, raws in (
            ("capacity", node.capacity, (raw_capacity,)),
            ("allocatable", node.allocatable, (raw_allocatable,) if raw_allocatable is not None else (raw_capacity,))):
        for name, q in _quantities(typed, raws).items():
            errors.extend(_quantity_value_errors(name, q, FieldPath("status").child(field_name, name)))
    return errors


def validate_namespace(namespace: Namespace) -> list[FieldError]:
    """``ValidateNamespace``: a DNS-1123 label name, cluster-scoped."""
    return validate_object_meta(namespace, namespaced=False, name_rule=name_is_dns_label)


def validate_priority_class(priority_class: PriorityClass) -> list[FieldError]:
    """``ValidatePriorityClass``: values above 1,000,000,000 and names starting ``system-`` are
    reserved for the two system classes; ``preemptionPolicy`` is one of the two policies."""
    errors = validate_object_meta(priority_class, namespaced=False, name_rule=name_is_dns_subdomain)
    name, value = priority_class.name, priority_class.value
    if name.startswith(_SYSTEM_PRIORITY_CLASS_PREFIX):
        known = _SYSTEM_PRIORITY_CLASSES.get(name)
        if known is None:
            reason = f"{name} is not a known system priority class"
        elif known[0] != value:
            reason = f"value of {name} PriorityClass must be {known[0]}"
        elif known[1] != priority_class.global_default:
            reason = f"globalDefault of {name} PriorityClass must be {'true' if known[1] else 'false'}"
        else:
            reason = None
        if reason is not None:
            errors.append(FieldError.forbidden(
                FieldPath("metadata").child("name"),
                f"priority class names with '{_SYSTEM_PRIORITY_CLASS_PREFIX}' prefix are reserved for system use "
                f"only. error: {reason}"))
    elif value > HIGHEST_USER_DEFINABLE_PRIORITY:
        errors.append(FieldError.forbidden(FieldPath("value"), f"maximum allowed value of a user defined priority is "
                                                               f"{HIGHEST_USER_DEFINABLE_PRIORITY}"))
    if priority_class.preemption_policy not in ("PreemptLowerPriority", "Never"):
        policy_path = FieldPath("preemptionPolicy")
        if not priority_class.preemption_policy:
            errors.append(FieldError.required(policy_path))
        else:
            errors.append(FieldError.not_supported(policy_path, _named(priority_class.preemption_policy),
                                                   ("PreemptLowerPriority", "Never")))
    return errors


def _int_or_percent_errors(value: int | str, path: FieldPath) -> list[FieldError]:
    """apps ``ValidatePositiveIntOrPercent`` and ``IsNotMoreThan100Percent``."""
    if isinstance(value, str):
        problems = is_valid_percent(value)
        if problems:
            return [FieldError.invalid(path, value, msg) for msg in problems]
        if int(value[:-1]) > 100:
            return [FieldError.invalid(path, value, "must not be greater than 100%")]
        return []
    if value < 0:
        return [FieldError.invalid(path, value, _IS_NEGATIVE)]
    return []


def _pdb_spec_json(pdb: PodDisruptionBudget, raw_spec: Mapping[str, Any]) -> GoStruct:
    # internal policy.PodDisruptionBudgetSpec has no JSON tags: Go field names, declaration order
    raw_selector = get_field(raw_spec, "selector")
    selector: Any = None
    if isinstance(raw_selector, Mapping):
        view = _view_from_raw(raw_selector)
    elif pdb.selector is not None and not pdb.selector.selects_nothing():
        view = _view_from_typed(pdb.selector)
    else:
        view = None
    if view is not None:
        selector = GoStruct()
        if view.match_labels:
            selector["matchLabels"] = dict(view.match_labels)
        if view.match_expressions:
            selector["matchExpressions"] = [
                GoStruct(key=key, operator=operator, **({"values": list(values)} if values else {}))
                for key, operator, values in view.match_expressions]
    return GoStruct(MinAvailable=pdb.min_available, Selector=selector, MaxUnavailable=pdb.max_unavailable,
                    UnhealthyPodEvictionPolicy=get_field(raw_spec, "unhealthyPodEvictionPolicy"))


def validate_pod_disruption_budget(pdb: PodDisruptionBudget) -> list[FieldError]:
    """``ValidatePodDisruptionBudget`` (the spec only), then, when that passed, the generic
    ObjectMeta checks ``BeforeCreate`` runs with the path-segment name rule."""
    spec = FieldPath("spec")
    raw_spec = _as_map(get_field(_as_map(pdb.manifest), "spec"))
    errors: list[FieldError] = []
    if pdb.min_available is not None and pdb.max_unavailable is not None:
        errors.append(FieldError.invalid(spec, _pdb_spec_json(pdb, raw_spec),
                                         "minAvailable and maxUnavailable cannot be both set"))
    if pdb.min_available is not None:
        errors.extend(_int_or_percent_errors(pdb.min_available, spec.child("minAvailable")))
    if pdb.max_unavailable is not None:
        errors.extend(_int_or_percent_errors(pdb.max_unavailable, spec.child("maxUnavailable")))
    errors.extend(_validate_selector_view(_selector_view(pdb.selector, get_field(raw_spec, "selector")),
                                          spec.child("selector")))
    if errors:
        return errors
    return validate_object_meta(pdb, namespaced=True, name_rule=name_is_path_segment)


# --------------------------------------------------------------------------------------------
# Pod spec.resourceClaims (pkg/apis/core/validation: validatePodResourceClaims)
# --------------------------------------------------------------------------------------------
def validate_pod_resource_claims(pod: Any, path: FieldPath) -> list[FieldError]:
    """``validatePodResourceClaims`` and the containers' ``resources.claims`` references
    (``validateResourceClaimNames``). The two one-of errors carry the entry as their value (Go
    prints the struct with pointer addresses, which cannot be reproduced; fastsched shows the
    entry's fields)."""
    errors: list[FieldError] = []
    names: list[str] = []
    for i, entry in enumerate(pod.resource_claims):
        p = path.index(i)
        name = entry.get("name") or ""
        claim_name = entry.get("resourceClaimName") or entry.get("resource_claim_name")
        template = entry.get("resourceClaimTemplateName") or entry.get("resource_claim_template_name")
        if not name:
            errors.append(FieldError.required(p.child("name")))
        elif name in names:
            errors.append(FieldError.duplicate(p.child("name"), name))
        else:
            problems = dns1123_label_errors(name)
            errors.extend(FieldError.invalid(p.child("name"), name, m) for m in problems)
            if not problems and template and pod.name:
                final = f"{pod.name}-{name}"
                errors.extend(FieldError.invalid(p.child("name"), final, "final ResourceClaim name: " + m)
                              for m in dns1123_subdomain_errors(final))
            names.append(name)
        if claim_name and template:
            errors.append(FieldError.invalid(p, dict(entry), "at most one of `resourceClaimName` or "
                                                             "`resourceClaimTemplateName` may be specified"))
        if not claim_name and not template:
            errors.append(FieldError.invalid(p, dict(entry), "must specify one of: `resourceClaimName`, "
                                                             "`resourceClaimTemplateName`"))
        if claim_name:
            errors.extend(FieldError.invalid(p.child("resourceClaimName"), claim_name, m)
                          for m in dns1123_subdomain_errors(claim_name))
        if template:
            errors.extend(FieldError.invalid(p.child("resourceClaimTemplateName"), template, m)
                          for m in dns1123_subdomain_errors(template))
    spec = (pod.manifest or {}).get("spec") or {}
    root = FieldPath(str(path).rsplit(".", 1)[0]) if "." in str(path) else FieldPath("spec")
    for field_name in ("initContainers", "containers"):
        for ci, container in enumerate(spec.get(field_name) or ()):
            claims = ((container or {}).get("resources") or {}).get("claims") or ()
            seen: set[str] = set()
            for k, ref in enumerate(claims):
                p = root.child(field_name).index(ci).child("resources", "claims").index(k).child("name")
                ref_name = (ref or {}).get("name") or ""
                if not ref_name:
                    errors.append(FieldError.required(p))
                elif ref_name in seen:
                    errors.append(FieldError.duplicate(p, ref_name))
                elif ref_name not in names:
                    errors.append(FieldError.not_supported(p, ref_name, sorted(names)))
                seen.add(ref_name)
    return errors
