"""Dynamic Resource Allocation objects (``resource.k8s.io/v1``, GA in v1.34).

Typed views of ResourceSlice, DeviceClass, ResourceClaim and ResourceClaimTemplate, with the API
server's defaulting (``pkg/apis/resource/v1/defaults.go``: ``allocationMode`` ExactCount, ``count``
1 for ExactCount requests and subrequests) and the validation that matters for scheduling, with
upstream's messages and field paths (``pkg/apis/resource/validation/validation.go``).

Things kept as the API carries them (camelCase dicts, shown again by ``Scheduler.objects``):
device and class ``config`` entries (opaque to the scheduler), a claim's ``status.allocation``
and ``status.reservedFor``. What the allocator reads is parsed: requests, subrequests, selectors,
constraints, devices with attributes and capacities, slice pools and node selection.

Parsers: ``parse_<kind>(manifest)``, also in :data:`RESOURCE_PARSERS`; validators
``validate_<kind>(obj) -> list[FieldError]``, also in :data:`RESOURCE_VALIDATORS`.
"""
from __future__ import annotations

import copy
import dataclasses
import ipaddress
import json
import re
from dataclasses import dataclass, field
from typing import Any, Callable, ClassVar, Mapping, Sequence, TypeVar

from ..util.field import FieldError, FieldPath, GoStruct, go_quote
from ._manifest import as_bool, as_int, as_list, as_map, as_str, get_field
from ._meta import list_of, nested, object_meta
from .labels import NodeSelector
from .objects import KubeObject, _field_copier, _read_only, deterministic_uid
from .quantity import Quantity, canonical_text, format_of, parse_quantity
from .util_validation import (_regex_error, dns1123_label_errors, dns1123_subdomain_errors, label_value_errors,
                              qualified_name_errors)
from .validation import node_selector_errors, validate_object_meta

__all__ = [
    "DeviceAttribute", "Device", "ResourceSlice", "DeviceClass", "DeviceSelector", "DeviceSubRequest",
    "ExactDeviceRequest", "DeviceRequest", "DeviceConstraint", "ResourceClaim", "ResourceClaimTemplate",
    "DeviceTaintRule", "parse_device_taint_rule", "validate_device_taint_rule",
    "parse_resource_slice", "parse_device_class", "parse_resource_claim", "parse_resource_claim_template",
    "validate_resource_slice", "validate_device_class", "validate_resource_claim",
    "validate_resource_claim_status_update", "validate_resource_claim_status",
    "validate_resource_claim_template", "RESOURCE_PARSERS", "RESOURCE_VALIDATORS", "RESOURCE_API_VERSION",
    "ALLOCATION_MODE_EXACT_COUNT", "ALLOCATION_MODE_ALL", "ALLOCATION_RESULTS_MAX_SIZE",
    "RESOURCE_CLAIM_RESERVED_FOR_MAX_SIZE", "FINALIZER", "claim_with_status", "claim_spec_fields",
]

RESOURCE_API_VERSION = "resource.k8s.io/v1"
ALLOCATION_MODE_EXACT_COUNT = "ExactCount"
ALLOCATION_MODE_ALL = "All"
#: ``resourceapi.AllocationResultsMaxSize``
ALLOCATION_RESULTS_MAX_SIZE = 32
#: ``resourceapi.ResourceClaimReservedForMaxSize``
RESOURCE_CLAIM_RESERVED_FOR_MAX_SIZE = 256
#: ``resourceapi.Finalizer``: added by the scheduler when it allocates a claim.
FINALIZER = "resource.kubernetes.io/delete-protection"
# validation limits (``resourceapi`` constants)
_DEVICE_REQUESTS_MAX = 32
_DEVICE_SELECTORS_MAX = 32
_DEVICE_CONSTRAINTS_MAX = 32
_DEVICE_CONFIG_MAX = 32
_FIRST_AVAILABLE_MAX = 8
_RESOURCE_SLICE_MAX_DEVICES = 128
_DEVICE_ATTRIBUTES_AND_CAPACITIES_MAX = 32
_CEL_EXPRESSION_MAX_LEN = 10 * 1024
_DRIVER_NAME_MAX = 63
_POOL_NAME_MAX = 253
# limits of a claim's status (k8s/pkg/apis/resource/types.go)
_ALLOCATION_RESULTS_MAX = 32
_BINDING_CONDITIONS_MAX = 4  # BindingConditionsMaxSize = BindingFailureConditionsMaxSize
_OPAQUE_PARAMETERS_MAX = 10 * 1024
_DEVICE_STATUS_CONDITIONS_MAX = 8
_DEVICE_STATUS_DATA_MAX = 10 * 1024
_NETWORK_IPS_MAX = 16
_INTERFACE_NAME_MAX = 256
_HARDWARE_ADDRESS_MAX = 128
_ATTRIBUTE_ID_MAX = 32
_DEVICE_ATTRIBUTE_STRING_MAX = 64
#: ``ResourceSliceMaxDevicesWithAdvancedFeatures``: with taints, consumed counters or list attributes
_RESOURCE_SLICE_MAX_DEVICES_ADVANCED = 64
#: ``ResourceSliceMaxAttributeValuesPerDevice`` (list items counted one by one)
_DEVICE_ATTRIBUTE_VALUES_MAX = 48


# --------------------------------------------------------------------------------------------
# ResourceSlice
# --------------------------------------------------------------------------------------------
@dataclass(slots=True, frozen=True)
class DeviceAttribute:
    """One device attribute: ``kind`` is which of ``int``, ``bool``, ``string`` or ``version`` is
    set ("" when none is), ``value`` its value; with DRAListTypeAttributes also ``ints``,
    ``bools``, ``strings`` or ``versions``, whose ``value`` is a tuple (possibly empty: invalid).
    ``fields`` holds every field that was set, ``(name, value)`` in the API's order, when more
    than one was (invalid, but validation and the gated drop need them all)."""

    kind: str
    value: Any
    fields: tuple = ()


@dataclass(slots=True, frozen=True, eq=False)
class Device:
    """A device of a ResourceSlice. Attribute and capacity names are as given (qualified or plain;
    a plain name belongs to the slice's driver). ``capacity`` maps names to quantities."""

    name: str
    attributes: Mapping[str, DeviceAttribute] = field(default_factory=dict)
    capacity: Mapping[str, Quantity] = field(default_factory=dict)
    consumes_counters: tuple[Mapping[str, Any], ...] = ()
    node_name: str = ""
    all_nodes: bool = False
    node_selector: NodeSelector | None = None
    node_selector_spec: Mapping[str, Any] | None = None
    binding_conditions: tuple[str, ...] = ()
    binding_failure_conditions: tuple[str, ...] = ()
    binds_to_node: bool = False
    taints: tuple[Mapping[str, Any], ...] = ()
    allow_multiple_allocations: bool = False
    #: capacity name -> its ``requestPolicy`` (DRAConsumableCapacity), for the capacities with one
    capacity_policies: Mapping[str, "CapacityRequestPolicy"] = field(default_factory=dict)
    #: node-allocatable resource name (cpu, memory, ``hugepages-*``) -> how an allocation of this
    #: device counts against it (DRANodeAllocatableResources, alpha; dropped on create when off)
    node_allocatable_resources: Mapping[str, "NodeAllocatableResource"] = field(default_factory=dict)


@dataclass(slots=True, frozen=True)
class CapacityRequestPolicy:
    """A device capacity's ``requestPolicy`` (DRAConsumableCapacity): ``default``, and at most one
    of ``valid_values`` (ascending) and ``valid_range`` (``min``, ``max``, ``step``)."""

    default: Quantity | None = None
    valid_values: tuple[Quantity, ...] = ()
    valid_range: "CapacityRequestPolicyRange | None" = None


@dataclass(slots=True, frozen=True)
class NodeAllocatableMapping:
    """``NodeAllocatableMapping``: the node-allocatable quantity an allocation of the device stands
    for, ``consumedCapacity[capacity_key] * capacity_multiplier`` or ``device_multiplier`` per
    device. None: the field is unset (an empty ``capacity_key`` is set, and invalid)."""

    capacity_key: str | None = None
    capacity_multiplier: Quantity | None = None
    device_multiplier: Quantity | None = None


@dataclass(slots=True, frozen=True)
class NodeAllocatableOverhead:
    """``NodeAllocatableOverhead``: an auxiliary amount per pod and per container referencing the
    claim."""

    per_pod: Quantity | None = None
    per_container: Quantity | None = None


@dataclass(slots=True, frozen=True)
class NodeAllocatableResource:
    """``NodeAllocatableResource``: a mapping, an overhead, or both (validation wants one)."""

    mapping: NodeAllocatableMapping | None = None
    overhead: NodeAllocatableOverhead | None = None


@dataclass(slots=True, frozen=True)
class CapacityRequestPolicyRange:
    min: Quantity | None = None
    max: Quantity | None = None
    step: Quantity | None = None


@dataclass(slots=True, kw_only=True, eq=False)
class ResourceSlice(KubeObject):
    """A ``resource.k8s.io/v1`` ResourceSlice: one slice of a driver's pool of devices.

    Exactly one of ``node_name``, ``node_selector``, ``all_nodes`` (and, with the alpha
    DRAPartitionableDevices gate, ``per_device_node_selection``) says which nodes can use it."""

    KIND: ClassVar[str] = "ResourceSlice"

    driver: str = ""
    pool_name: str = ""
    pool_generation: int = 0
    resource_slice_count: int = 0
    node_name: str = ""
    node_selector: NodeSelector | None = None
    #: ``spec.nodeSelector`` as given (camelCase), copied into allocation results
    node_selector_spec: Mapping[str, Any] | None = None
    all_nodes: bool = False
    per_device_node_selection: bool | None = None
    devices: tuple[Device, ...] = ()
    shared_counters: tuple[Mapping[str, Any], ...] = ()
    #: some device declares ``compatibilityGroups`` on a counter consumption
    #: (DRADeviceCompatibilityGroups; ``sliceUsesCompatibilityGroups``)
    uses_compatibility_groups: bool = False
    #: ``spec.skipNodeOperations`` (DRAOptionalNodeOperations): node-local operations the kubelet
    #: skips for this slice's devices; the allocator copies them into a result and allocates such
    #: a device only on a node that declares the feature
    skip_node_operations: tuple[str, ...] = ()


#: ``SkipNodeOperation`` values (``symbolsForSkipNodeOperation``, as ``validate.Enum`` sorts them)
SKIP_NODE_OPERATIONS = ("*", "NodePrepareResources", "NodeUnprepareResources")
#: the node's ``status.declaredFeatures`` entry a device with ``skipNodeOperations`` needs
#: (``draoptionalnodeoperations.DRAOptionalNodeOperationsFeatureGate``)
DRA_OPTIONAL_NODE_OPERATIONS_FEATURE = "DRAOptionalNodeOperations"


#: a device attribute's value fields in the API's order, with their parsers
_ATTRIBUTE_FIELDS: tuple[tuple[str, Callable[[Any, str], Any]], ...] = (
    ("int", as_int), ("bool", as_bool), ("string", as_str), ("version", as_str),
    ("ints", lambda v, k: tuple(as_int(x, k) for x in as_list(v, k))),
    ("bools", lambda v, k: tuple(as_bool(x, k) for x in as_list(v, k))),
    ("strings", lambda v, k: tuple(as_str(x, k) for x in as_list(v, k))),
    ("versions", lambda v, k: tuple(as_str(x, k) for x in as_list(v, k))),
)
#: which field a DeviceAttribute's ``kind`` is when several are set (``getAttributeValue``:
#: lists first; only invalid attributes have several)
_ATTRIBUTE_PRECEDENCE = ("ints", "bools", "strings", "versions", "int", "bool", "string", "version")
LIST_ATTRIBUTE_KINDS = frozenset({"ints", "bools", "strings", "versions"})


def _attribute(value: Any) -> DeviceAttribute:
    attr = as_map(value, "")
    found = []
    for key, parse in _ATTRIBUTE_FIELDS:
        v = get_field(attr, key)
        if v is not None:
            found.append((key, parse(v, key)))
    return _attribute_of(tuple(found))


def _attribute_of(found: tuple) -> DeviceAttribute:
    if not found:
        return DeviceAttribute("", None)
    if len(found) == 1:
        return DeviceAttribute(found[0][0], found[0][1])
    kind, value = min(found, key=lambda kv: _ATTRIBUTE_PRECEDENCE.index(kv[0]))
    return DeviceAttribute(kind, value, found)


def attribute_fields(attr: DeviceAttribute) -> tuple:
    """Every ``(field, value)`` set in ``attr``."""
    if attr.fields:
        return attr.fields
    return ((attr.kind, attr.value),) if attr.kind else ()


def has_list_attributes(rs: "ResourceSlice") -> bool:
    """``haveListAttributes``: some device has a list-valued attribute field."""
    return any(k in LIST_ATTRIBUTE_KINDS for d in rs.devices for a in d.attributes.values()
               for k, _ in attribute_fields(a))


def drop_list_attributes(rs: "ResourceSlice") -> "ResourceSlice":
    """``dropDisableDRAListTypeAttributesFields`` on create: the list fields of every attribute
    removed (an attribute left with no value then fails validation); ``rs`` when there are none."""
    if not has_list_attributes(rs):
        return rs
    import dataclasses

    devices = []
    for d in rs.devices:
        attrs = {name: _attribute_of(tuple(kv for kv in attribute_fields(a) if kv[0] not in LIST_ATTRIBUTE_KINDS))
                 for name, a in d.attributes.items()}
        devices.append(dataclasses.replace(d, attributes=attrs))
    manifest = copy.deepcopy(rs.manifest) if rs.manifest else rs.manifest
    for d in ((manifest or {}).get("spec") or {}).get("devices") or ():
        for a in (d.get("attributes") or {}).values():
            for k in LIST_ATTRIBUTE_KINDS:
                if isinstance(a, dict):
                    a.pop(k, None)
    return rs.replace(devices=tuple(devices), manifest=manifest)


def _capacity(value: Any) -> Quantity:
    cap = as_map(value, "")
    return parse_quantity(cap.get("value"), "value")


def _optional_quantity(value: Any, path: str) -> Quantity | None:
    return None if value is None else parse_quantity(value, path)


def _request_policy(value: Any) -> CapacityRequestPolicy | None:
    """``capacity.<name>.requestPolicy`` (None when unset)."""
    cap = as_map(value, "")
    raw = get_field(cap, "requestPolicy")
    if raw is None:
        return None
    policy = as_map(raw, "requestPolicy")
    valid_range = get_field(policy, "validRange")
    rng = None
    if valid_range is not None:
        r = as_map(valid_range, "requestPolicy.validRange")
        rng = CapacityRequestPolicyRange(
            min=_optional_quantity(r.get("min"), "requestPolicy.validRange.min"),
            max=_optional_quantity(r.get("max"), "requestPolicy.validRange.max"),
            step=_optional_quantity(r.get("step"), "requestPolicy.validRange.step"))
    return CapacityRequestPolicy(
        default=_optional_quantity(policy.get("default"), "requestPolicy.default"),
        valid_values=tuple(parse_quantity(v, f"requestPolicy.validValues[{i}]") for i, v in
                           enumerate(as_list(get_field(policy, "validValues") or [], "requestPolicy.validValues"))),
        valid_range=rng)


def _node_allocatable_resource(value: Any) -> NodeAllocatableResource:
    """One ``nodeAllocatableResources`` entry (its key is the resource name)."""
    entry = as_map(value, "")
    mapping = overhead = None
    raw_mapping = get_field(entry, "mapping")
    if raw_mapping is not None:
        m = as_map(raw_mapping, "mapping")
        key = get_field(m, "capacityKey")
        mapping = NodeAllocatableMapping(
            capacity_key=None if key is None else as_str(key, "mapping.capacityKey"),
            capacity_multiplier=_optional_quantity(get_field(m, "capacityMultiplier"), "mapping.capacityMultiplier"),
            device_multiplier=_optional_quantity(get_field(m, "deviceMultiplier"), "mapping.deviceMultiplier"))
    raw_overhead = get_field(entry, "overhead")
    if raw_overhead is not None:
        o = as_map(raw_overhead, "overhead")
        overhead = NodeAllocatableOverhead(
            per_pod=_optional_quantity(get_field(o, "perPod"), "overhead.perPod"),
            per_container=_optional_quantity(get_field(o, "perContainer"), "overhead.perContainer"))
    return NodeAllocatableResource(mapping=mapping, overhead=overhead)


def drop_node_allocatable_resources(rs: "ResourceSlice") -> "ResourceSlice":
    """``dropDisabledDRANodeAllocatableResourcesFields`` on create: every device's
    ``nodeAllocatableResources`` removed; ``rs`` when no device has the field."""
    manifest_devices = ((rs.manifest or {}).get("spec") or {}).get("devices") or ()
    if not any(d.node_allocatable_resources for d in rs.devices) and not any(
            isinstance(d, dict) and "nodeAllocatableResources" in d for d in manifest_devices):
        return rs
    import dataclasses

    devices = tuple(dataclasses.replace(d, node_allocatable_resources={}) for d in rs.devices)
    manifest = copy.deepcopy(rs.manifest) if rs.manifest else rs.manifest
    for d in ((manifest or {}).get("spec") or {}).get("devices") or ():
        if isinstance(d, dict):
            d.pop("nodeAllocatableResources", None)
    return rs.replace(devices=devices, manifest=manifest)


def _node_selector(value: Any) -> NodeSelector | None:
    return None if value is None else NodeSelector.from_dict(value)


def _device(value: Any) -> Device:
    dev = as_map(value, "")
    attributes = {str(k): nested(f"attributes[{k}]", _attribute, v)
                  for k, v in as_map(dev.get("attributes") or {}, "attributes").items()}
    raw_capacity = as_map(dev.get("capacity") or {}, "capacity")
    capacity = {str(k): nested(f"capacity[{k}]", _capacity, v) for k, v in raw_capacity.items()}
    policies = {str(k): p for k, p in ((k, nested(f"capacity[{k}]", _request_policy, v))
                                       for k, v in raw_capacity.items()) if p is not None}
    # v1.37.2 keeps the fields of DRAPartitionableDevices (consumesCounters, nodeName,
    # nodeSelector, allNodes), DRADeviceBindingConditions (bindingConditions,
    # bindingFailureConditions, bindsToNode), DRADeviceTaints (taints) and DRAConsumableCapacity
    # (allowMultipleAllocations): the gates are on (v1.34 dropped them, its gates were off)
    node_selector_spec = get_field(dev, "nodeSelector")
    return Device(
        name=as_str(dev.get("name"), "name"),
        attributes=attributes,
        capacity=capacity,
        consumes_counters=tuple(as_map(c, "consumesCounters") for c in as_list(get_field(dev, "consumesCounters") or [],
                                                                                 "consumesCounters")),
        node_name=as_str(get_field(dev, "nodeName"), "nodeName"),
        all_nodes=as_bool(get_field(dev, "allNodes"), "allNodes"),
        node_selector=nested("nodeSelector", _node_selector, node_selector_spec),
        node_selector_spec=node_selector_spec,
        binding_conditions=tuple(as_str(c, "bindingConditions")
                                 for c in as_list(get_field(dev, "bindingConditions") or [], "bindingConditions")),
        binding_failure_conditions=tuple(as_str(c, "bindingFailureConditions") for c in
                                         as_list(get_field(dev, "bindingFailureConditions") or [],
                                                 "bindingFailureConditions")),
        binds_to_node=as_bool(get_field(dev, "bindsToNode"), "bindsToNode"),
        taints=tuple(as_map(t, "taints") for t in as_list(dev.get("taints") or [], "taints")),
        allow_multiple_allocations=as_bool(get_field(dev, "allowMultipleAllocations"), "allowMultipleAllocations"),
        capacity_policies=policies,
        node_allocatable_resources={
            str(k): nested(f"nodeAllocatableResources[{k}]", _node_allocatable_resource, v)
            for k, v in as_map(get_field(dev, "nodeAllocatableResources") or {}, "nodeAllocatableResources").items()},
    )


def parse_resource_slice(obj: Mapping[str, Any]) -> ResourceSlice:
    """Build a ResourceSlice from a manifest dict."""
    meta = object_meta(obj, namespaced=False)
    spec = as_map(obj.get("spec") or {}, "spec")
    pool = as_map(spec.get("pool") or {}, "spec.pool")
    return ResourceSlice(
        **meta,
        driver=as_str(spec.get("driver"), "spec.driver"),
        pool_name=as_str(pool.get("name"), "spec.pool.name"),
        pool_generation=as_int(pool.get("generation"), "spec.pool.generation") or 0,
        resource_slice_count=as_int(get_field(pool, "resourceSliceCount"), "spec.pool.resourceSliceCount") or 0,
        node_name=as_str(get_field(spec, "nodeName"), "spec.nodeName"),
        node_selector=nested("spec.nodeSelector", _node_selector, get_field(spec, "nodeSelector")),
        node_selector_spec=get_field(spec, "nodeSelector"),
        all_nodes=as_bool(get_field(spec, "allNodes"), "spec.allNodes"),
        # perDeviceNodeSelection and sharedCounters: DRAPartitionableDevices is on in v1.37.2
        per_device_node_selection=(None if get_field(spec, "perDeviceNodeSelection") is None
                                   else as_bool(get_field(spec, "perDeviceNodeSelection"),
                                                "spec.perDeviceNodeSelection")),
        devices=(devices := list_of(spec.get("devices"), "spec.devices", _device)),
        shared_counters=tuple(as_map(c, "spec.sharedCounters") for c in
                              as_list(get_field(spec, "sharedCounters") or [], "spec.sharedCounters")),
        uses_compatibility_groups=_uses_compatibility_groups(devices),
        skip_node_operations=tuple(as_str(op, "spec.skipNodeOperations") for op in
                                   as_list(get_field(spec, "skipNodeOperations") or [], "spec.skipNodeOperations")),
    )


def compatibility_groups(consumption: Mapping[str, Any]) -> frozenset[str]:
    """A counter consumption's ``compatibilityGroups`` as a set (``compatibilityGroupSet``; empty:
    no groups)."""
    return frozenset(consumption.get("compatibilityGroups") or ())


def _uses_compatibility_groups(devices: Any) -> bool:
    return any(c.get("compatibilityGroups") for d in devices for c in d.consumes_counters)


def drop_compatibility_groups(rs: "ResourceSlice") -> "ResourceSlice":
    """``dropDisabledDRADeviceCompatibilityGroupsFields`` on create: every counter consumption's
    ``compatibilityGroups`` removed; ``rs`` when none has them."""
    if not rs.uses_compatibility_groups and not any("compatibilityGroups" in c for d in rs.devices
                                                    for c in d.consumes_counters):
        return rs
    import dataclasses

    devices = tuple(dataclasses.replace(d, consumes_counters=tuple(
        {k: v for k, v in c.items() if k != "compatibilityGroups"} for c in d.consumes_counters))
        for d in rs.devices)
    manifest = copy.deepcopy(rs.manifest) if rs.manifest else rs.manifest
    for d in ((manifest or {}).get("spec") or {}).get("devices") or ():
        for c in d.get("consumesCounters") or ():
            if isinstance(c, dict):
                c.pop("compatibilityGroups", None)
    return rs.replace(devices=devices, manifest=manifest, uses_compatibility_groups=False)


def drop_skip_node_operations(rs: "ResourceSlice") -> "ResourceSlice":
    """``dropDisabledDRAOptionalNodeOperationsFields`` on create: ``spec.skipNodeOperations``
    removed; ``rs`` when it has none."""
    spec = (rs.manifest or {}).get("spec")
    if not rs.skip_node_operations and not (isinstance(spec, dict) and "skipNodeOperations" in spec):
        return rs
    manifest = rs.manifest
    if manifest and isinstance(spec, dict):
        manifest = {**manifest, "spec": {k: v for k, v in spec.items() if k != "skipNodeOperations"}}
    return rs.replace(skip_node_operations=(), manifest=manifest)


def allocation_requires_optional_node_operations(allocation: Mapping[str, Any] | None) -> bool:
    """``allocationResultRequiresDRAOptionalNodeOperations``: some allocated device of the
    allocation result has ``skipNodeOperations``."""
    if not allocation:
        return False
    return any(r.get("skipNodeOperations") for r in (allocation.get("devices") or {}).get("results") or ())


# --------------------------------------------------------------------------------------------
# DeviceClass
# --------------------------------------------------------------------------------------------
@dataclass(slots=True, frozen=True)
class DeviceSelector:
    """A device selector: ``cel`` is the CEL expression ("" when the selector has no ``cel``)."""

    cel: str


@dataclass(slots=True, kw_only=True, eq=False)
class DeviceClass(KubeObject):
    """A ``resource.k8s.io/v1`` DeviceClass: selectors every device of the class must pass and
    configuration handed to the driver (``config``: the raw entries)."""

    KIND: ClassVar[str] = "DeviceClass"

    selectors: tuple[DeviceSelector, ...] = ()
    config: tuple[Mapping[str, Any], ...] = ()
    extended_resource_name: str = ""


def _selector(value: Any) -> DeviceSelector:
    sel = as_map(value, "")
    cel = sel.get("cel")
    if cel is None:
        return DeviceSelector("")
    return DeviceSelector(as_str(as_map(cel, "cel").get("expression"), "cel.expression"))


def parse_device_class(obj: Mapping[str, Any]) -> DeviceClass:
    """Build a DeviceClass from a manifest dict."""
    spec = as_map(obj.get("spec") or {}, "spec")
    return DeviceClass(
        **object_meta(obj, namespaced=False),
        selectors=list_of(spec.get("selectors"), "spec.selectors", _selector),
        config=tuple(as_list(spec.get("config") or [], "spec.config")),
        extended_resource_name=as_str(get_field(spec, "extendedResourceName"), "spec.extendedResourceName"),
    )


# --------------------------------------------------------------------------------------------
# ResourceClaim
# --------------------------------------------------------------------------------------------
@dataclass(slots=True, frozen=True)
class DeviceSubRequest:
    """One ``firstAvailable`` alternative (also the body of an ``exactly`` request, see
    :class:`ExactDeviceRequest`). Defaults as the API server: ExactCount, count 1."""

    name: str
    device_class_name: str
    selectors: tuple[DeviceSelector, ...] = ()
    allocation_mode: str = ALLOCATION_MODE_EXACT_COUNT
    count: int = 1
    tolerations: tuple[Mapping[str, Any], ...] = ()
    admin_access: bool | None = None
    #: ``capacity`` (DRAConsumableCapacity: ``{requests: {name: quantity}}``) as given; None unset
    capacity: Mapping[str, Any] | None = None
    #: ``capacity.requests`` parsed (name -> quantity); None when ``capacity`` or its requests are unset
    capacity_requests: Mapping[str, Quantity] | None = None
    #: ``derivedAttributes`` (DRADerivedAttributes, alpha: dropped on create without the gate):
    #: ``(name, expression)`` pairs as given
    derived_attributes: tuple[tuple[str, str], ...] = ()


#: ``exactly`` has the same fields as a subrequest (plus adminAccess; ``name`` unused).
ExactDeviceRequest = DeviceSubRequest


@dataclass(slots=True, frozen=True)
class DeviceRequest:
    """A claim's request: either ``exactly`` or ``first_available`` (a prioritized list)."""

    name: str
    exactly: ExactDeviceRequest | None = None
    first_available: tuple[DeviceSubRequest, ...] = ()


@dataclass(slots=True, frozen=True)
class DeviceConstraint:
    """``requests`` (empty: all) and ``match_attribute`` ("" when unset: an unknown constraint)."""

    requests: tuple[str, ...] = ()
    match_attribute: str = ""
    distinct_attribute: str = ""


@dataclass(slots=True, kw_only=True, eq=False)
class ResourceClaim(KubeObject):
    """A ``resource.k8s.io/v1`` ResourceClaim.

    ``allocation`` is ``status.allocation`` as the API carries it (None: not allocated);
    ``reserved_for`` the ``status.reservedFor`` entries (``{resource, name, uid}``); ``finalizers``
    ``metadata.finalizers``. Use :func:`claim_with_status` to change them."""

    KIND: ClassVar[str] = "ResourceClaim"

    namespace: str = "default"
    requests: tuple[DeviceRequest, ...] = ()
    constraints: tuple[DeviceConstraint, ...] = ()
    config: tuple[Mapping[str, Any], ...] = ()
    allocation: Mapping[str, Any] | None = None
    reserved_for: tuple[Mapping[str, Any], ...] = ()
    finalizers: tuple[str, ...] = ()

    def replace(self, **changes: Any) -> "ResourceClaim":
        """:meth:`KubeObject.replace` as a field copy: the same object ``dataclasses.replace``
        makes (``__post_init__``'s uid from the name when empty, labels and annotations read-only,
        ``admitted`` reset, ``decoded_under`` kept while the manifest is), without running
        ``__init__`` over every field (every scheduled pod of the DRA extended-resource cases
        makes a claim and names it and writes its status through here, ~10 us each time)."""
        if type(self) is not ResourceClaim or not _CLAIM_INIT_FIELDS.issuperset(changes):
            return KubeObject.replace(self, **changes)  # (an unknown field: dataclasses.replace's error)
        clone = _copy_claim(self)
        for name, value in changes.items():
            setattr(clone, name, value)
        if "labels" in changes:
            clone.labels = _read_only(clone.labels)
        if "annotations" in changes:
            clone.annotations = _read_only(clone.annotations)
        if not clone.uid and clone.name:
            clone.uid = deterministic_uid(self.KIND, clone.namespace, clone.name)
        clone.admitted = False
        if "manifest" in changes:
            clone.decoded_under = None
        return clone


#: the fields ``ResourceClaim.replace`` may change (its ``__init__`` parameters)
_CLAIM_INIT_FIELDS = frozenset(f.name for f in dataclasses.fields(ResourceClaim) if f.init)
#: a field-for-field copy of a ResourceClaim (``claim_with_status``)
_copy_claim = _field_copier(ResourceClaim)


def _tolerations(value: Any) -> tuple:
    return tuple(as_list(value or [], "tolerations"))


def _sub_request_fields(req: Mapping[str, Any]) -> dict[str, Any]:
    mode = as_str(get_field(req, "allocationMode"), "allocationMode") or ALLOCATION_MODE_EXACT_COUNT
    count = as_int(req.get("count"), "count")
    if count is None and mode == ALLOCATION_MODE_EXACT_COUNT:
        count = 1  # SetDefaults_ExactDeviceRequest / SetDefaults_DeviceSubRequest
    admin = get_field(req, "adminAccess")
    return dict(
        device_class_name=as_str(get_field(req, "deviceClassName"), "deviceClassName"),
        selectors=list_of(req.get("selectors"), "selectors", _selector),
        allocation_mode=mode,
        count=count or 0,
        tolerations=_tolerations(req.get("tolerations")),
        admin_access=None if admin is None else as_bool(admin, "adminAccess"),
        capacity=None if req.get("capacity") is None else as_map(req.get("capacity"), "capacity"),
        capacity_requests=_capacity_requests(req.get("capacity")),
        derived_attributes=list_of(get_field(req, "derivedAttributes"), "derivedAttributes", _derived_attribute),
    )


def _derived_attribute(value: Any) -> tuple[str, str]:
    attr = as_map(value, "")
    return as_str(attr.get("name"), "name") or "", as_str(attr.get("expression"), "expression") or ""


def _capacity_requests(value: Any) -> Mapping[str, Quantity] | None:
    """``capacity.requests`` of a request (``CapacityRequirements``)."""
    if value is None:
        return None
    requests = get_field(as_map(value, "capacity"), "requests")
    if requests is None:
        return None
    return {str(k): parse_quantity(v, f"capacity.requests[{k}]")
            for k, v in as_map(requests, "capacity.requests").items()}


def _sub_request(value: Any) -> DeviceSubRequest:
    req = as_map(value, "")
    return DeviceSubRequest(name=as_str(req.get("name"), "name"), **_sub_request_fields(req))


def _request(value: Any) -> DeviceRequest:
    req = as_map(value, "")
    exactly = req.get("exactly")
    return DeviceRequest(
        name=as_str(req.get("name"), "name"),
        exactly=None if exactly is None else DeviceSubRequest(
            name="", **nested("exactly", lambda v: _sub_request_fields(as_map(v, "")), exactly)),
        first_available=list_of(get_field(req, "firstAvailable"), "firstAvailable", _sub_request),
    )


def _constraint(value: Any) -> DeviceConstraint:
    c = as_map(value, "")
    return DeviceConstraint(
        requests=tuple(as_str(r, "requests") for r in as_list(c.get("requests") or [], "requests")),
        match_attribute=as_str(get_field(c, "matchAttribute"), "matchAttribute"),
        distinct_attribute=as_str(get_field(c, "distinctAttribute"), "distinctAttribute"),
    )


def _claim_spec_fields(spec: Mapping[str, Any], path: str) -> dict[str, Any]:
    devices = as_map(spec.get("devices") or {}, f"{path}.devices")
    p = f"{path}.devices"
    return dict(
        requests=list_of(devices.get("requests"), f"{p}.requests", _request),
        constraints=list_of(devices.get("constraints"), f"{p}.constraints", _constraint),
        config=tuple(as_list(devices.get("config") or [], f"{p}.config")),
    )


def claim_spec_fields(spec: Mapping[str, Any]) -> dict[str, Any]:
    """A claim's ``spec`` parsed: the ``requests``, ``constraints`` and ``config`` fields of
    :class:`ResourceClaim` (immutable values: one result may serve many claims)."""
    return _claim_spec_fields(as_map(spec, "spec"), "spec")


def parse_resource_claim(obj: Mapping[str, Any], *, spec_fields: Mapping[str, Any] | None = None) -> ResourceClaim:
    """Build a ResourceClaim from a manifest dict. ``spec_fields``: :func:`claim_spec_fields` of
    an equal ``spec``, parsed beforehand (for claims built in code from one spec)."""
    meta = object_meta(obj, namespaced=True)
    if spec_fields is None:
        spec_fields = _claim_spec_fields(as_map(obj.get("spec") or {}, "spec"), "spec")
    status = as_map(obj.get("status") or {}, "status")
    allocation = status.get("allocation")
    metadata = as_map(obj.get("metadata") or {}, "metadata")
    return ResourceClaim(
        **meta,
        **spec_fields,
        allocation=None if allocation is None else as_map(allocation, "status.allocation"),
        # a null entry is Go's zero ResourceClaimConsumerReference (validation then asks for its
        # resource, name and uid); kept as None it crashed the validation's reads
        reserved_for=tuple({} if ref is None else ref
                           for ref in as_list(get_field(status, "reservedFor") or [], "status.reservedFor")),
        finalizers=tuple(as_list(metadata.get("finalizers") or [], "metadata.finalizers")),
    )


def claim_with_status(claim: ResourceClaim, *, allocation: Any = ..., reserved_for: Any = ...,
                      finalizers: Any = ...) -> ResourceClaim:
    """A copy of ``claim`` with ``status.allocation`` / ``status.reservedFor`` /
    ``metadata.finalizers`` replaced (``...``: unchanged; allocation None: deallocated), its
    manifest updated to match (what ``Scheduler.objects("ResourceClaim")`` shows)."""
    changes: dict[str, Any] = {}
    # a new top level, metadata and status; the spec is shared (nothing changes it)
    manifest: dict[str, Any] = dict(claim.manifest) if claim.manifest else {
        "apiVersion": RESOURCE_API_VERSION, "kind": "ResourceClaim",
        "metadata": {"name": claim.name, "namespace": claim.namespace}}
    manifest["metadata"] = dict(manifest.get("metadata") or {})
    manifest["status"] = status = dict(manifest.get("status") or {})
    if allocation is not ...:
        changes["allocation"] = allocation
        if allocation is None:
            status.pop("allocation", None)
            status.pop("devices", None)
        else:
            status["allocation"] = allocation  # shared: allocations are never changed in place
    if reserved_for is not ...:
        changes["reserved_for"] = tuple(reserved_for)
        if reserved_for:
            status["reservedFor"] = [dict(r) for r in reserved_for]
        else:
            status.pop("reservedFor", None)
    if finalizers is not ...:
        changes["finalizers"] = tuple(finalizers)
        meta = manifest["metadata"]
        if finalizers:
            meta["finalizers"] = list(finalizers)
        else:
            meta.pop("finalizers", None)
    if not status:
        manifest.pop("status", None)
    if type(claim) is not ResourceClaim:
        new = claim.replace(manifest=manifest, **changes)
    else:
        # ``replace(manifest=, **changes)`` as its field copy does it, without the call's checks:
        # the changed fields are claim fields with no read-only wrapping, and a claim with a name
        # and no uid gets the uid replace would derive (every scheduled pod of the DRA
        # extended-resource cases writes a claim status through here: issue 27)
        new = _copy_claim(claim)
        for name, value in changes.items():
            setattr(new, name, value)
        new.manifest = manifest
        new.decoded_under = None
        if not new.uid and new.name:
            new.uid = deterministic_uid(new.KIND, new.namespace, new.name)
    new.admitted = True  # a status write: the object was admitted when created
    return new


# --------------------------------------------------------------------------------------------
# ResourceClaimTemplate
# --------------------------------------------------------------------------------------------
@dataclass(slots=True, kw_only=True, eq=False)
class ResourceClaimTemplate(KubeObject):
    """A ``resource.k8s.io/v1`` ResourceClaimTemplate: ``claim_metadata`` / ``claim_spec`` are the
    raw ``spec.metadata`` / ``spec.spec`` the resourceclaim controller copies into each claim;
    ``requests``, ``constraints`` and ``config`` are parsed from ``spec.spec`` for validation."""

    KIND: ClassVar[str] = "ResourceClaimTemplate"

    namespace: str = "default"
    claim_metadata: Mapping[str, Any] = field(default_factory=dict)
    claim_spec: Mapping[str, Any] = field(default_factory=dict)
    requests: tuple[DeviceRequest, ...] = ()
    constraints: tuple[DeviceConstraint, ...] = ()
    config: tuple[Mapping[str, Any], ...] = ()


def parse_resource_claim_template(obj: Mapping[str, Any]) -> ResourceClaimTemplate:
    """Build a ResourceClaimTemplate from a manifest dict."""
    spec = as_map(obj.get("spec") or {}, "spec")
    claim_spec = as_map(spec.get("spec") or {}, "spec.spec")
    return ResourceClaimTemplate(
        **object_meta(obj, namespaced=True),
        claim_metadata=copy.deepcopy(dict(as_map(spec.get("metadata") or {}, "spec.metadata"))),
        claim_spec=copy.deepcopy(dict(claim_spec)),
        **_claim_spec_fields(claim_spec, "spec.spec"),
    )


# --------------------------------------------------------------------------------------------
# Validation (pkg/apis/resource/validation)
# --------------------------------------------------------------------------------------------
def _entry_name_errors(path: FieldPath, name: str, seen: set[str]) -> list[FieldError]:
    """A list entry's ``name`` (a request, subrequest or device): required, a DNS label, unique in
    its list; ``seen`` gathers the list's names."""
    if not name:
        return [FieldError.required(path.child("name"))]
    errors = [FieldError.invalid(path.child("name"), name, m) for m in dns1123_label_errors(name)]
    if name in seen:
        errors.append(FieldError.duplicate(path.child("name"), name))
    seen.add(name)
    return errors


def _too_many(path: FieldPath, actual: int, limit: int) -> FieldError:
    # validateSlice / validateSet past maxSize: field.TooMany ("Too many: <n>: must have at most
    # <limit> items"), the only error for that field (the check short-circuits)
    return FieldError.too_many(path, actual, limit)


def _driver_name_errors(name: str, path: FieldPath) -> list[FieldError]:
    """``validateDriverName``: required, at most 63 characters, a DNS subdomain."""
    if not name:
        return [FieldError.required(path)]
    errors = []
    if len(name) > _DRIVER_NAME_MAX:
        errors.append(FieldError.invalid(path, name, f"must be no more than {_DRIVER_NAME_MAX} bytes"))
    errors.extend(FieldError.invalid(path, name, m) for m in dns1123_subdomain_errors(name))
    return errors


def _selector_errors(selectors: tuple[DeviceSelector, ...], path: FieldPath,
                     list_type_attributes: bool = False) -> list[FieldError]:
    from .cel import compile_error  # lazy: the CEL library is only needed with DRA objects
    from .celcost import SELECTOR_MAX_COST, output_type_error, selector_max_cost

    errors: list[FieldError] = []
    if len(selectors) > _DEVICE_SELECTORS_MAX:
        errors.append(_too_many(path, len(selectors), _DEVICE_SELECTORS_MAX))
    for i, sel in enumerate(selectors):
        p = path.index(i)
        if not sel.cel:
            errors.append(FieldError.required(p.child("cel", "expression")))
            continue
        if len(sel.cel) > _CEL_EXPRESSION_MAX_LEN:
            errors.append(FieldError.invalid(p.child("cel", "expression"), "<value omitted>",
                                             f"may not be longer than {_CEL_EXPRESSION_MAX_LEN}"))
            continue
        problem = compile_error(sel.cel, list_type_attributes)
        if problem:
            errors.append(FieldError.invalid(p.child("cel", "expression"), sel.cel, f"compilation failed: {problem}"))
            continue
        # CompileCELExpression: the checked result type (validateOutputType) ...
        wrong_type = output_type_error(sel.cel, list_type_attributes)
        if wrong_type:
            errors.append(FieldError.invalid(p.child("cel", "expression"), sel.cel, wrong_type))
            continue
        # ... then validateCELExpression: the static cost estimate against CELSelectorExpressionMaxCost
        cost = selector_max_cost(sel.cel, list_type_attributes)
        if cost is not None and cost > SELECTOR_MAX_COST:
            errors.append(FieldError.forbidden(p.child("cel", "expression"), "too complex, exceeds cost limit"))
    return errors


#: ``DeviceClaimDerivedAttributeCELMaxCost``: the budget of one derived attribute's expression and
#: of all of a claim's together
_DERIVED_ATTRIBUTE_MAX_COST = 1_000_000
_DEVICE_DERIVED_ATTRIBUTES_MAX = 32


class _DerivedAttributeBudget:
    """``deviceValidationOptions``' derived-attribute part: the names each constraint target uses
    (``gatherConstraintAttributes``: "" for a constraint on every request, else "req" or
    "req/sub") and the running cost of the claim's derived attribute expressions."""

    __slots__ = ("constraint_attributes", "total_cost")

    def __init__(self, constraints: Sequence["DeviceConstraint"]):
        attrs: dict[str, set[str]] = {}
        for c in constraints:
            name = c.match_attribute or c.distinct_attribute
            if not name:
                continue
            for target in c.requests or ("",):
                attrs.setdefault(target, set()).add(name)
        self.constraint_attributes = attrs
        self.total_cost = 0

    def used_by_constraint(self, attribute: str, request_name: str) -> bool:
        """``isAttributeUsedByConstraint``: a constraint on every request, on this (sub)request, or
        on the parent request of this subrequest."""
        attrs = self.constraint_attributes
        if attribute in attrs.get("", ()) or attribute in attrs.get(request_name, ()):
            return True
        parent, sep, _ = request_name.partition("/")
        return bool(sep) and attribute in attrs.get(parent, ())


def _derived_attribute_errors(attrs: tuple[tuple[str, str], ...], path: FieldPath, request_name: str,
                              budget: _DerivedAttributeBudget, list_type_attributes: bool) -> list[FieldError]:
    """``validateDeviceDerivedAttributes``: a set keyed by name (no size limit here: the declarative
    maxItems, see :func:`_derived_attribute_declarative_errors`), each name used by a constraint on
    the request, each expression compiled as a derived attribute and within the cost budget (its
    estimate also counted towards the claim's total)."""
    from .cel import compile_error  # lazy: the CEL library is only needed with DRA objects
    from .celcost import SELECTOR_MAX_COST, output_type_error, selector_max_cost

    errors: list[FieldError] = []
    for i, (name, expression) in enumerate(attrs):
        p = path.index(i)
        # an empty name or expression is the declarative rules' "Required"
        if name and not budget.used_by_constraint(name, request_name):
            errors.append(FieldError.invalid(p.child("name"), name, "must be referenced by at least one "
                                             "matchAttribute or distinctAttribute constraint targeting this request"))
        if not expression:
            continue
        ep = p.child("expression")
        # validateCELExpression with DerivedAttribute: length, compilation, output type, cost
        if len(expression) > _CEL_EXPRESSION_MAX_LEN:
            errors.append(FieldError.too_long(ep, _CEL_EXPRESSION_MAX_LEN))
            continue
        problem = compile_error(expression, list_type_attributes)
        if problem:
            errors.append(FieldError.invalid(ep, expression, f"compilation failed: {problem}"))
            continue
        wrong_type = output_type_error(expression, list_type_attributes, derived_attribute=True)
        if wrong_type:
            errors.append(FieldError.invalid(ep, expression, wrong_type))
            continue
        # an expression the estimator does not model is not cost-checked (see celcost)
        cost = selector_max_cost(expression, list_type_attributes)
        if cost is None:
            continue
        if cost > min(SELECTOR_MAX_COST, _DERIVED_ATTRIBUTE_MAX_COST):
            errors.append(FieldError.forbidden(ep, "too complex, exceeds cost limit"))
        budget.total_cost += cost
    seen: set[str] = set()
    for i, (name, _) in enumerate(attrs):
        if name in seen:
            errors.append(FieldError.duplicate(path.index(i), name))
        seen.add(name)
    return errors


def _derived_attribute_declarative_errors(requests: tuple["DeviceRequest", ...], devices: FieldPath) -> list[FieldError]:
    """The declarative rules of ``derivedAttributes`` (v1.37.2 ``zz_generated.validations.go``,
    neither alpha nor beta, so enforced; no hand-written twin): at most 32 (short-circuits the
    entries), then per entry ``name`` required and a resource fully qualified name, ``expression``
    required. The API server appends them after the hand-written errors."""
    errors: list[FieldError] = []
    for i, req in enumerate(requests):
        p = devices.child("requests").index(i)
        bodies = [(p.child("exactly"), req.exactly)] if req.exactly is not None else []
        bodies += [(p.child("firstAvailable").index(j), sub) for j, sub in enumerate(req.first_available)]
        for bp, body in bodies:
            attrs = body.derived_attributes
            if not attrs:
                continue
            ap = bp.child("derivedAttributes")
            if len(attrs) > _DEVICE_DERIVED_ATTRIBUTES_MAX:
                errors.append(_too_many(ap, len(attrs), _DEVICE_DERIVED_ATTRIBUTES_MAX))
                continue
            for k, (name, expression) in enumerate(attrs):
                ep = ap.index(k)
                if not name:
                    errors.append(FieldError.required(ep.child("name")))
                else:
                    errors.extend(_resource_fully_qualified_name_errors(name, ep.child("name")))
                if not expression:
                    errors.append(FieldError.required(ep.child("expression")))
    return errors


def _resource_fully_qualified_name_errors(name: str, path: FieldPath) -> list[FieldError]:
    """apimachinery ``validate.ResourceFullyQualifiedName`` (format
    k8s-resource-fully-qualified-name): ``resourcesQualifiedName`` then the slash."""
    errors: list[FieldError] = []
    parts = name.split("/")
    if len(parts) == 1:
        errors.extend(_c_identifier_errors(parts[0], path))
    elif len(parts) == 2:
        prefix, ident = parts
        if not prefix:
            errors.append(FieldError.invalid(path, "", "prefix must not be empty"))
        else:
            if len(prefix) > 63:
                errors.append(FieldError.too_long(path, 63))
            errors.extend(FieldError.invalid(path, prefix, "prefix: " + m) for m in dns1123_subdomain_errors(prefix))
        if not ident:
            errors.append(FieldError.invalid(path, "", "name must not be empty"))
        else:
            errors.extend(_c_identifier_errors(ident, path))
    if "/" not in name:
        errors.append(FieldError.invalid(path, name, "a fully qualified name must be a domain and a name separated "
                                         "by a slash"))
    return errors


def _c_identifier_errors(ident: str, path: FieldPath) -> list[FieldError]:
    """``validateCIdentifier`` (apimachinery strfmt.go): at most 32 bytes, a C identifier."""
    errors: list[FieldError] = []
    if len(ident) > _ATTRIBUTE_ID_MAX:
        errors.append(FieldError.too_long(path, _ATTRIBUTE_ID_MAX))
    if not _C_IDENTIFIER(ident):
        errors.append(FieldError.invalid(path, ident, _C_IDENTIFIER_MESSAGE))
    return errors


def _sub_request_errors(req: DeviceSubRequest, path: FieldPath, *, exactly: bool,
                        list_type_attributes: bool = False, request_name: str = "",
                        budget: _DerivedAttributeBudget | None = None) -> list[FieldError]:
    errors: list[FieldError] = []
    if not req.device_class_name:
        errors.append(FieldError.required(path.child("deviceClassName")))
    else:
        errors.extend(FieldError.invalid(path.child("deviceClassName"), req.device_class_name, m)
                      for m in dns1123_subdomain_errors(req.device_class_name))
    errors.extend(_selector_errors(req.selectors, path.child("selectors"), list_type_attributes))
    if req.derived_attributes and budget is not None:
        errors.extend(_derived_attribute_errors(req.derived_attributes, path.child("derivedAttributes"),
                                                request_name, budget, list_type_attributes))
    if req.allocation_mode == ALLOCATION_MODE_ALL:
        if req.count:
            errors.append(FieldError.invalid(path.child("count"), req.count,
                                             "must not be specified when allocationMode is 'All'"))
    elif req.allocation_mode == ALLOCATION_MODE_EXACT_COUNT:
        if req.count <= 0:
            errors.append(FieldError.invalid(path.child("count"), req.count, "must be greater than zero"))
    else:
        errors.append(FieldError.not_supported(path.child("allocationMode"), req.allocation_mode,
                                               [ALLOCATION_MODE_ALL, ALLOCATION_MODE_EXACT_COUNT]))
    return errors


def _claim_spec_errors(requests, constraints, config, path: FieldPath,
                       list_type_attributes: bool = False) -> list[FieldError]:
    """``validateDeviceClaim`` (requests, constraints, config) under ``<path>.devices``;
    ``list_type_attributes``: DRAListTypeAttributes (CEL's ``includes``)."""
    devices = path.child("devices")
    errors: list[FieldError] = []
    names: set[str] = set()
    sub_names: dict[str, set[str]] = {}
    budget = _DerivedAttributeBudget(constraints)
    if len(requests) > _DEVICE_REQUESTS_MAX:
        errors.append(_too_many(devices.child("requests"), len(requests), _DEVICE_REQUESTS_MAX))
    for i, req in enumerate(requests):
        p = devices.child("requests").index(i)
        errors.extend(_entry_name_errors(p, req.name, names))
        has_exactly, has_first = req.exactly is not None, bool(req.first_available)
        if has_exactly and has_first:
            errors.append(FieldError.forbidden(p, "exactly one of `exactly` or `firstAvailable` is required, but multiple fields are set"))
        elif not has_exactly and not has_first:
            errors.append(FieldError.required(p, "exactly one of `exactly` or `firstAvailable` is required"))
        elif has_exactly:
            errors.extend(_sub_request_errors(req.exactly, p.child("exactly"), exactly=True,
                                              list_type_attributes=list_type_attributes, request_name=req.name,
                                              budget=budget))
        else:
            fa = p.child("firstAvailable")
            if len(req.first_available) > _FIRST_AVAILABLE_MAX:
                errors.append(_too_many(fa, len(req.first_available), _FIRST_AVAILABLE_MAX))
            seen: set[str] = set()
            for j, sub in enumerate(req.first_available):
                sp = fa.index(j)
                errors.extend(_entry_name_errors(sp, sub.name, seen))
                errors.extend(_sub_request_errors(sub, sp, exactly=False, list_type_attributes=list_type_attributes,
                                                  request_name=f"{req.name}/{sub.name}", budget=budget))
            sub_names[req.name] = seen

    def known(ref: str) -> bool:
        parent, _, sub = ref.partition("/")
        if not sub:
            return ref in names
        return sub in sub_names.get(parent, ())

    if len(constraints) > _DEVICE_CONSTRAINTS_MAX:
        errors.append(_too_many(devices.child("constraints"), len(constraints), _DEVICE_CONSTRAINTS_MAX))
    for i, c in enumerate(constraints):
        p = devices.child("constraints").index(i)
        for j, ref in enumerate(c.requests):
            if not known(ref):
                errors.append(FieldError.invalid(p.child("requests").index(j), ref,
                                                 "must be the name of a request in the claim or the name of a request "
                                                 "and its subrequest separated with '/'"))
        if not c.match_attribute and not c.distinct_attribute:
            errors.append(FieldError.required(p, "exactly one of `matchAttribute` or `distinctAttribute` is required"))
        elif c.match_attribute:
            errors.extend(_qualified_name_errors(c.match_attribute, p.child("matchAttribute"), fully=True))
    if len(config) > _DEVICE_CONFIG_MAX:
        errors.append(_too_many(devices.child("config"), len(config), _DEVICE_CONFIG_MAX))
    for i, cfg in enumerate(config):
        for j, ref in enumerate(as_list(cfg.get("requests") or [], "requests")):
            if not known(ref):
                errors.append(FieldError.invalid(devices.child("config").index(i).child("requests").index(j), ref,
                                                 "must be the name of a request in the claim or the name of a request "
                                                 "and its subrequest separated with '/'"))
    if budget.total_cost > _DERIVED_ATTRIBUTE_MAX_COST:
        errors.append(FieldError.forbidden(devices, "too complex, total cost of derived attribute CEL expressions "
                                           "in the claim exceeds cost limit"))
    errors.extend(_derived_attribute_declarative_errors(requests, devices))
    return errors


def _qualified_name_errors(name: str, path: FieldPath, *, fully: bool) -> list[FieldError]:
    """``validateQualifiedName`` / ``validateFullyQualifiedName`` of an attribute or capacity name."""
    domain, sep, ident = name.rpartition("/")
    if not sep:
        domain, ident = "", name
    errors: list[FieldError] = []
    if fully and not domain:
        return [FieldError.required(path, "a fully qualified name must be a domain and a name separated by a slash")]
    if not ident:
        errors.append(FieldError.required(path, "the name cannot be empty"))
    elif len(ident) > _ATTRIBUTE_ID_MAX or not _C_IDENTIFIER(ident):
        if not _C_IDENTIFIER(ident):
            errors.append(FieldError.invalid(path, ident, _C_IDENTIFIER_MESSAGE))
        if len(ident) > _ATTRIBUTE_ID_MAX:
            errors.append(FieldError.invalid(path, ident, f"must be no more than {_ATTRIBUTE_ID_MAX} bytes"))
    if domain:
        errors.extend(FieldError.invalid(path, domain, m) for m in dns1123_subdomain_errors(domain))
    return errors


#: ``content.IsCIdentifier``'s message
_C_IDENTIFIER_MESSAGE = ("a valid C identifier must start with alphabetic character or '_', followed by a string of "
                         "alphanumeric characters or '_' (e.g. 'my_name',  or 'MY_NAME',  or 'MyName', regex used for "
                         "validation is '[A-Za-z_][A-Za-z0-9_]*')")


def _C_IDENTIFIER(s: str) -> bool:
    return bool(s) and (s[0].isascii() and (s[0].isalpha() or s[0] == "_")) and all(
        c.isascii() and (c.isalnum() or c == "_") for c in s)


def validate_resource_slice(rs: ResourceSlice, fractional_capacity_range: bool = False) -> list[FieldError]:
    """``ValidateResourceSlice`` (the parts the allocator relies on); ``fractional_capacity_range``
    the DRAFractionalCapacityRange gate (off at v1.37.2's defaults), which the requestPolicy
    checks follow."""

    spec = FieldPath("spec")
    errors = validate_object_meta(rs, namespaced=False)
    errors += _driver_name_errors(rs.driver, spec.child("driver"))
    pool = spec.child("pool")  # validateResourcePool
    errors += _pool_name_errors(rs.pool_name, pool.child("name"))
    if rs.resource_slice_count <= 0:
        errors.append(FieldError.invalid(pool.child("resourceSliceCount"), rs.resource_slice_count,
                                         "must be greater than zero"))
    if rs.pool_generation < 0:
        errors.append(FieldError.invalid(pool.child("generation"), rs.pool_generation,
                                         "must be greater than or equal to zero"))
    if rs.node_name:  # validateNodeName (corevalidation.ValidateNodeName: a DNS subdomain)
        errors.extend(FieldError.invalid(spec.child("nodeName"), rs.node_name, m)
                      for m in dns1123_subdomain_errors(rs.node_name))
    set_fields = [name for name, isset in (("`nodeName`", bool(rs.node_name)),
                                           ("`nodeSelector`", rs.node_selector is not None),
                                           ("`allNodes`", rs.all_nodes),
                                           ("`perDeviceNodeSelection`", bool(rs.per_device_node_selection)))
                  if isset]
    if not set_fields:
        errors.append(FieldError.required(spec, "exactly one of `nodeName`, `nodeSelector`, `allNodes`, "
                                                "`perDeviceNodeSelection` is required"))
    elif len(set_fields) > 1:
        errors.append(FieldError.invalid(spec, ", ".join(f[1:-1] for f in set_fields),
                                         "exactly one of `nodeName`, `nodeSelector`, `allNodes`, "
                                         "`perDeviceNodeSelection` is required, but multiple fields are set"))
    if rs.node_selector is not None and len(rs.node_selector.terms) != 1:
        errors.append(FieldError.invalid(spec.child("nodeSelector", "nodeSelectorTerms"),
                                         len(rs.node_selector.terms), "must have exactly one node selector term"))
    devices = spec.child("devices")
    # haveDeviceTaints || haveConsumesCounters || haveListAttributes: the lower limit
    max_devices = _RESOURCE_SLICE_MAX_DEVICES
    if any(d.taints or d.consumes_counters for d in rs.devices) or has_list_attributes(rs):
        max_devices = _RESOURCE_SLICE_MAX_DEVICES_ADVANCED
    if len(rs.devices) > max_devices:
        errors.append(_too_many(devices, len(rs.devices), max_devices))
    seen: set[str] = set()
    for i, dev in enumerate(rs.devices):
        p = devices.index(i)
        errors.extend(_entry_name_errors(p, dev.name, seen))
        if len(dev.attributes) + len(dev.capacity) > _DEVICE_ATTRIBUTES_AND_CAPACITIES_MAX:
            errors.append(FieldError.invalid(p, len(dev.attributes) + len(dev.capacity),
                                             f"the total number of attributes and capacities must not exceed "
                                             f"{_DEVICE_ATTRIBUTES_AND_CAPACITIES_MAX}"))
        values = sum(_attribute_values(a) for a in dev.attributes.values())
        if values > _DEVICE_ATTRIBUTE_VALUES_MAX:
            errors.append(FieldError.invalid(p, values, f"the total number of attribute values must not exceed "
                                                        f"{_DEVICE_ATTRIBUTE_VALUES_MAX}"))
        for name, attr in dev.attributes.items():
            ap = p.child("attributes").key(name)
            errors.extend(_qualified_name_errors(name, ap, fully=False))
            errors.extend(_attribute_errors(attr, ap))
        for name in dev.capacity:
            cp = p.child("capacity").key(name)
            errors.extend(_qualified_name_errors(name, cp, fully=False))
            policy = dev.capacity_policies.get(name)
            if policy is None:
                continue
            if not dev.allow_multiple_allocations:
                # validateSingleAllocatableDeviceCapacity
                errors.append(FieldError.forbidden(cp.child("requestPolicy"), "allowMultipleAllocations must be true"))
            else:
                errors.extend(_request_policy_errors(dev.capacity[name], policy, cp.child("requestPolicy"),
                                                     fractional_capacity_range))
        # the last check of validateDevice
        errors.extend(_node_allocatable_resources_errors(dev, p.child("nodeAllocatableResources")))
    # validateResourceSliceSpec's last rule
    errors.extend(_skip_node_operations_errors(rs.skip_node_operations, spec.child("skipNodeOperations")))
    # declarative validation (compatibilityGroups and skipNodeOperations' enum and uniqueness have
    # no hand-written rules): after the rest, in field order
    for i, dev in enumerate(rs.devices):
        for j, consumption in enumerate(dev.consumes_counters):
            errors.extend(_compatibility_groups_errors(consumption.get("compatibilityGroups"), devices.index(i).child(
                "consumesCounters").index(j).child("compatibilityGroups")))
        errors.extend(_node_allocatable_union_errors(dev, devices.index(i).child("nodeAllocatableResources")))
    errors.extend(_skip_node_operations_declarative_errors(rs.skip_node_operations, spec.child("skipNodeOperations")))
    return errors


def _skip_node_operations_errors(ops: Any, path: FieldPath) -> list[FieldError]:
    """``validateSkipNodeOperations`` (hand-written: NodePrepareResources only together with
    NodeUnprepareResources or ``*``)."""
    if not ops:
        return []
    ops = list(ops)
    if "NodePrepareResources" in ops and "NodeUnprepareResources" not in ops and "*" not in ops:
        return [FieldError.invalid(path, ops, "NodePrepareResources cannot be skipped unless NodeUnprepareResources "
                                              "is also skipped")]
    return []


def _skip_node_operations_declarative_errors(ops: Any, path: FieldPath) -> list[FieldError]:
    """The declarative rules of a ``skipNodeOperations`` list (v1.37.2 ``zz_generated.validations.go``,
    ``listType=set`` of the ``SkipNodeOperation`` enum): each later duplicate once
    (``ValSliceUnique``), then each value outside the enum (``validate.Enum``)."""
    if not ops:
        return []
    ops = list(ops)
    dups = sorted({j for i in range(len(ops)) for j in range(i + 1, len(ops)) if ops[i] == ops[j]})
    errors = [FieldError.duplicate(path.index(j), ops[j]) for j in dups]
    errors.extend(FieldError.not_supported(path.index(i), op, SKIP_NODE_OPERATIONS)
                  for i, op in enumerate(ops) if op not in SKIP_NODE_OPERATIONS)
    return errors


def is_node_allocatable_resource_name(name: str) -> bool:
    """``IsNodeAllocatableResourceName``: cpu, memory and ``hugepages-*`` (not ephemeral-storage
    while the gate is alpha)."""
    return name in ("cpu", "memory") or name.startswith("hugepages-")


def _node_allocatable_resources_errors(dev: Device, path: FieldPath) -> list[FieldError]:
    """``validateNodeAllocatableResources``. Go walks the map in random order; the keys are taken
    sorted here so the errors come in a reproducible order."""
    errors: list[FieldError] = []
    for name in sorted(dev.node_allocatable_resources):
        entry = dev.node_allocatable_resources[name]
        kp = path.key(name)
        if not is_node_allocatable_resource_name(name):
            errors.append(FieldError.invalid(kp, name, "must be a node allocatable resource name"))
        if entry.mapping is None and entry.overhead is None:
            errors.append(FieldError.required(kp, "at least one of mapping or overhead must be set"))
        if entry.mapping is not None:
            errors.extend(_node_allocatable_mapping_errors(entry.mapping, dev.capacity, kp.child("mapping")))
        if entry.overhead is not None:
            errors.extend(_node_allocatable_overhead_errors(entry.overhead, kp.child("overhead")))
    return errors


def _node_allocatable_mapping_errors(m: NodeAllocatableMapping, capacity: Mapping[str, Quantity],
                                     path: FieldPath) -> list[FieldError]:
    """``validateNodeAllocatableMapping`` (the two dependentRequired rules are hand-written too:
    their declarative twins are alpha, so these are the ones the API server reports)."""
    errors: list[FieldError] = []
    if m.capacity_key is not None:
        if m.capacity_key == "":
            errors.append(FieldError.invalid(path.child("capacityKey"), "", "capacityKey must not be an empty string"))
        elif m.capacity_key not in capacity:
            errors.append(FieldError.not_found(path.child("capacityKey"), m.capacity_key))
        if m.capacity_multiplier is None:
            errors.append(FieldError.required(path.child("capacityMultiplier"),
                                              "capacityMultiplier is required when capacityKey is set"))
        elif m.capacity_multiplier.sign() <= 0:
            errors.append(FieldError.invalid(path.child("capacityMultiplier"), str(m.capacity_multiplier),
                                             "must be positive"))
    if m.device_multiplier is not None and m.device_multiplier.sign() <= 0:
        errors.append(FieldError.invalid(path.child("deviceMultiplier"), str(m.device_multiplier), "must be positive"))
    if m.capacity_multiplier is not None and m.capacity_key is None:
        errors.append(FieldError.required(path.child("capacityKey"),
                                          "capacityKey is required when capacityMultiplier is set"))
    return errors


def _node_allocatable_overhead_errors(o: NodeAllocatableOverhead, path: FieldPath) -> list[FieldError]:
    """``validateNodeAllocatableOverheadMapping``."""
    if o.per_pod is None and o.per_container is None:
        return [FieldError.invalid(path, "", "at least one of perPod or perContainer must be set")]
    errors: list[FieldError] = []
    if o.per_pod is not None and o.per_pod.sign() < 0:
        errors.append(FieldError.invalid(path.child("perPod"), str(o.per_pod), "must be non-negative"))
    if o.per_container is not None and o.per_container.sign() < 0:
        errors.append(FieldError.invalid(path.child("perContainer"), str(o.per_container), "must be non-negative"))
    return errors


def _node_allocatable_union_errors(dev: Device, path: FieldPath) -> list[FieldError]:
    """The declarative union of ``NodeAllocatableMapping`` (v1.37.2 ``zz_generated.validations.go``,
    not marked alpha, so enforced): exactly one of ``capacityKey`` and ``deviceMultiplier``."""
    errors: list[FieldError] = []
    for name in sorted(dev.node_allocatable_resources):
        m = dev.node_allocatable_resources[name].mapping
        if m is None:
            continue
        members = ("capacityKey", "deviceMultiplier")
        set_members = [f for f, isset in zip(members, (m.capacity_key is not None, m.device_multiplier is not None))
                       if isset]
        all_fields = ", ".join(f"`{f}`" for f in members)
        mp = path.key(name).child("mapping")
        if len(set_members) > 1:
            errors.append(FieldError.invalid(mp, "{" + ", ".join(set_members) + "}",
                                             f"must specify exactly one of: {all_fields}"))
        elif not set_members:
            errors.append(FieldError.invalid(mp, "", f"must specify one of: {all_fields}"))
    return errors


#: ``DeviceCompatibilityGroupsMaxSize``
_COMPATIBILITY_GROUPS_MAX = 2


def _compatibility_groups_errors(groups: Any, path: FieldPath) -> list[FieldError]:
    """The declarative rules of ``DeviceCounterConsumption.compatibilityGroups`` (v1.37.2
    ``zz_generated.validations.go``): at most 2 (nothing else checked then), each a DNS-1123 label
    (``k8s-short-name``), no duplicates."""
    if not groups:
        return []
    groups = as_list(groups, str(path))
    if len(groups) > _COMPATIBILITY_GROUPS_MAX:
        return [FieldError.too_many(path, len(groups), _COMPATIBILITY_GROUPS_MAX)]
    errors: list[FieldError] = []
    for i, group in enumerate(groups):
        errors.extend(FieldError.invalid(path.index(i), group, m) for m in dns1123_label_errors(str(group)))
    seen: set = set()
    for i, group in enumerate(groups):
        if group in seen:
            errors.append(FieldError.duplicate(path.index(i), group))
        seen.add(group)
    return errors


def _attribute_values(attr: DeviceAttribute) -> int:
    """``numEntriesDeviceAttribute``'s share of one attribute: its list items, or 1."""
    items = sum(len(v) for k, v in attribute_fields(attr) if k in LIST_ATTRIBUTE_KINDS)
    return items or 1


def _attribute_errors(attr: DeviceAttribute, path: FieldPath) -> list[FieldError]:
    """``validateDeviceAttribute`` (v1.37.2): each set field's own rules, then exactly one set."""
    from .semver import parse_semver

    errors: list[FieldError] = []
    fields = attribute_fields(attr)
    for key, value in fields:
        if key == "string" and len(value.encode()) > _DEVICE_ATTRIBUTE_STRING_MAX:
            errors.append(FieldError.too_long(path.child("string"), _DEVICE_ATTRIBUTE_STRING_MAX))
        elif key == "version" and parse_semver(value) is None:
            errors.append(FieldError.invalid(path.child("version"), value, "must be a string compatible with "
                                                                            "semver.org spec 2.0.0"))
        elif key in LIST_ATTRIBUTE_KINDS:
            if not value:
                errors.append(FieldError.invalid(path.child(key), [], "must not be empty if specified"))
            for i, item in enumerate(value):
                if key == "strings" and len(item.encode()) > _DEVICE_ATTRIBUTE_STRING_MAX:
                    errors.append(FieldError.too_long(path.child(key).index(i), _DEVICE_ATTRIBUTE_STRING_MAX))
                elif key == "versions" and parse_semver(item) is None:
                    errors.append(FieldError.invalid(path.child(key).index(i), item, "must be a string compatible "
                                                                                      "with semver.org spec 2.0.0"))
    if not fields:
        errors.append(FieldError.invalid(path, "", "exactly one value must be specified"))
    elif len(fields) > 1:
        errors.append(FieldError.invalid(path, GoStruct({k: list(v) if isinstance(v, tuple) else v
                                                         for k, v in fields}), "exactly one value must be specified"))
    return errors


#: ``resourceapi.CapacityRequestPolicyDiscreteMaxOptions``
_CAPACITY_REQUEST_POLICY_DISCRETE_MAX_OPTIONS = 10
_NANOS_PER_MILLI = 10**6
_NANOS_PER_UNIT = 10**9


def _request_policy_errors(max_capacity: Quantity, policy: CapacityRequestPolicy, path: FieldPath,
                           fractional_range: bool = False) -> list[FieldError]:
    """``validateRequestPolicy`` (v1.37.2; ``fractional_range``: DRAFractionalCapacityRange)."""
    if policy.valid_values and policy.valid_range is not None:
        return [FieldError.forbidden(path, 'exactly one policy can be specified, cannot specify "validValues" and '
                                           '"validRange" at the same time')]
    errors: list[FieldError] = []
    if policy.valid_values:
        if policy.default is None:
            return [FieldError.required(path.child("default"), "required when validValues is defined")]
        vp = path.child("validValues")
        values = policy.valid_values
        for i in range(len(values) - 1):
            if values[i] > values[i + 1]:
                errors.append(FieldError.invalid(vp.index(i + 1), _s(values[i + 1]),
                                                 "values must be sorted in ascending order"))
        # validateSet: at most 10 entries, no duplicates (quantityKeyAsDec / quantityKeyInt)
        if len(values) > _CAPACITY_REQUEST_POLICY_DISCRETE_MAX_OPTIONS:
            errors.append(_too_many(vp, len(values), _CAPACITY_REQUEST_POLICY_DISCRETE_MAX_OPTIONS))
        else:
            seen: set = set()
            found_default = False
            for i, option in enumerate(values):
                if option > max_capacity:
                    errors.append(FieldError.invalid(vp.index(i), _s(option),
                                                     f"option is larger than capacity value: {_s(max_capacity)}"))
                if option == policy.default:
                    found_default = True
                key = option.nano_value() if fractional_range else option.value()
                if key in seen:
                    errors.append(FieldError.duplicate(vp.index(i), _dec(option)))
                seen.add(key)
            if not found_default:
                errors.append(FieldError.invalid(vp, _s(policy.default),
                                                 "default value is not valid according to the requestPolicy"))
        return errors
    rng = policy.valid_range
    if rng is None:
        return errors
    if policy.default is None:
        return [FieldError.required(path.child("default"), "required when validRange is defined")]
    rp = path.child("validRange")
    default = policy.default
    if rng.min is None:
        return [FieldError.required(rp.child("min"), "required when validRange is defined")]
    if rng.min > max_capacity:
        errors.append(FieldError.invalid(rp.child("min"), _s(rng.min), f"min is larger than capacity value: {_s(max_capacity)}"))
    if default < rng.min:
        errors.append(FieldError.invalid(rp.child("default"), _s(default), f"default is less than min: {_s(rng.min)}"))
    if rng.max is not None:
        if rng.min > rng.max:
            errors.append(FieldError.invalid(rp.child("max"), _s(rng.min), f"min is larger than max: {_s(rng.max)}"))
        if rng.max > max_capacity:
            errors.append(FieldError.invalid(rp.child("max"), _s(rng.max),
                                             f"max is larger than capacity value: {_s(max_capacity)}"))
        if default > rng.max:
            errors.append(FieldError.invalid(rp.child("default"), _s(default), f"default is more than max: {_s(rng.max)}"))
    pairs = [(q, n) for q, n in ((default, "default"), (rng.min, "min"), (rng.max, "max"), (rng.step, "step"))
             if q is not None]
    use_milli = fractional_range and any(q.nano_value() % _NANOS_PER_UNIT for q, _ in pairs)
    if use_milli:
        unsafe = [FieldError.invalid(rp.child(n), _s(q), "value cannot be represented as a milli value")
                  for q, n in pairs if q.nano_value() % _NANOS_PER_MILLI
                  or abs(q.nano_value() // _NANOS_PER_MILLI) > 2**63 - 1]
        if unsafe:
            return errors + unsafe
    step = rng.step
    if step is not None:
        if step.sign() <= 0:
            errors.append(FieldError.invalid(rp.child("step"), _s(step), "must be greater than zero"))
            return errors
        if _added(rng.min, step) > max_capacity:
            errors.append(FieldError.invalid(rp.child("step"), _s(step), f"one step {_s(_added(rng.min, step))} is larger "
                                                                           f"than capacity value: {_s(max_capacity)}"))
        if not use_milli:
            bad = False
            for q, n in pairs:
                if q.sign() < 0:
                    errors.append(FieldError.invalid(rp.child(n), _s(q), "must be greater than or equal to 0"))
                    bad = True
                elif q.value() > 2**63 - 1 or q.as_fraction() > 2**63 - 1:
                    errors.append(FieldError.invalid(rp.child(n), _s(q), "must not be larger than 9223372036854775807"))
                    bad = True
            if bad:
                return errors

        def amount(q: Quantity) -> int:
            return q.milli_value() if use_milli else q.value()
        for value in (default, rng.max):
            if value is not None and (amount(value) - amount(rng.min)) % amount(step) != 0:
                errors.append(FieldError.invalid(rp.child("step"), _s(value), f"value is not a multiple of a given "
                                                                               f"step ({_s(step)}) from ({_s(rng.min)})"))
    return errors


def _s(q: Quantity) -> str:
    """``Quantity.String()`` (canonical form) as upstream's messages show values."""
    return canonical_text(q.nano_value(), format_of(q))


def _dec(q: Quantity) -> str:
    """``quantityKeyAsDec``: the exact decimal value."""
    nanos = q.nano_value()
    if nanos % _NANOS_PER_UNIT == 0:
        return str(nanos // _NANOS_PER_UNIT)
    sign = "-" if nanos < 0 else ""
    whole, frac = divmod(abs(nanos), _NANOS_PER_UNIT)
    return f"{sign}{whole}.{frac:09d}".rstrip("0")


def _added(a: Quantity, b: Quantity) -> Quantity:
    """``a.Add(b)`` in ``a``'s format."""
    return parse_quantity(canonical_text(a.nano_value() + b.nano_value(), format_of(a)))


def validate_device_class(dc: DeviceClass, list_type_attributes: bool = False) -> list[FieldError]:
    """``ValidateDeviceClass``: metadata, selectors (CEL must compile; ``list_type_attributes``:
    DRAListTypeAttributes' environment), config count."""

    errors = validate_object_meta(dc, namespaced=False)
    errors += _selector_errors(dc.selectors, FieldPath("spec").child("selectors"), list_type_attributes)
    if len(dc.config) > _DEVICE_CONFIG_MAX:
        errors.append(_too_many(FieldPath("spec").child("config"), len(dc.config), _DEVICE_CONFIG_MAX))
    return errors


def validate_resource_claim(rc: ResourceClaim, list_type_attributes: bool = False) -> list[FieldError]:
    """``ValidateResourceClaim``: metadata and ``spec.devices``; a given status as its status
    update would be checked (:func:`validate_resource_claim_status`)."""

    errors = validate_object_meta(rc, namespaced=True)
    errors += _claim_spec_errors_kept(rc.requests, rc.constraints, rc.config, list_type_attributes)
    # a given status is validated as a status update would be: a malformed allocation is refused
    # here with its field path, not met later deep in the plugins
    errors += validate_resource_claim_status(rc)
    return errors


#: ``_claim_spec_errors`` of a claim's ``spec`` by (requests, constraints, list_type_attributes),
#: for claims without config: the rules read nothing else, and DynamicResources' PreBind creates
#: one special claim per pod with the few request lists its nodes' classes give (issues 27, 29:
#: the validation was a fifth of creating each). Bounded: emptied when full.
_SPEC_ERRORS_KEPT: dict[tuple, tuple[FieldError, ...]] = {}
_SPEC_ERRORS_KEPT_MAX = 256


def _claim_spec_errors_kept(requests: tuple[DeviceRequest, ...], constraints: tuple[DeviceConstraint, ...],
                            config: tuple[Mapping[str, Any], ...], list_type_attributes: bool) -> list[FieldError]:
    """``_claim_spec_errors`` under ``spec``, kept per hashable spec without config (requests with
    tolerations or capacity, mappings, are not hashable: computed each time)."""
    if config:
        return _claim_spec_errors(requests, constraints, config, FieldPath("spec"), list_type_attributes)
    key = (requests, constraints, list_type_attributes)
    try:
        kept = _SPEC_ERRORS_KEPT.get(key)
    except TypeError:
        return _claim_spec_errors(requests, constraints, config, FieldPath("spec"), list_type_attributes)
    if kept is None:
        if len(_SPEC_ERRORS_KEPT) >= _SPEC_ERRORS_KEPT_MAX:
            _SPEC_ERRORS_KEPT.clear()
        kept = _SPEC_ERRORS_KEPT[key] = tuple(
            _claim_spec_errors(requests, constraints, config, FieldPath("spec"), list_type_attributes))
    return list(kept)


def validate_resource_claim_status(rc: ResourceClaim) -> list[FieldError]:
    """``validateResourceClaimStatusUpdate`` of a claim given with a status, against an old status
    without one (a new claim): ``status.reservedFor``, ``status.devices``, reservedFor only with an
    allocation, then ``validateAllocationResult`` with ``stored=false`` — upstream passes a literal
    ``false`` there, because the old status has no allocation, so the allocation is new and the
    tighter rules for new results apply (e.g. the opaque parameters' size limit). Then the
    declarative rules fastsched enforces (``skipNodeOperations``' enum and uniqueness)."""
    raw_status = (rc.manifest or {}).get("status") if rc.manifest else None
    raw_devices = get_field(raw_status, "devices") if isinstance(raw_status, Mapping) else None
    if rc.allocation is None and not rc.reserved_for and not raw_devices:
        return []  # no status to check (a new claim's): every rule below reads one of these three
    status = FieldPath("status")
    errors = validate_resource_claim_status_update(rc)
    errors += _device_statuses_errors(as_list(raw_devices or [], "status.devices"), rc.allocation,
                                      status.child("devices"))
    if rc.reserved_for and rc.allocation is None:
        errors.append(FieldError.forbidden(status.child("reservedFor"), "may not be specified when `allocated` is not set"))
    if rc.allocation is not None:
        errors += _allocation_result_errors(rc.allocation, status.child("allocation"), _request_names(rc.requests))
    # the declarative rules of skipNodeOperations (no hand-written counterpart): after the rest
    results = status.child("allocation", "devices", "results")
    for i, ops in _result_skip_operations(rc):
        errors.extend(_skip_node_operations_declarative_errors(ops, results.index(i).child("skipNodeOperations")))
    return errors


def _request_names(requests: tuple[DeviceRequest, ...]) -> dict[str, frozenset[str] | None]:
    """``gatherRequestNames``: each request's name to its subrequests' names (None: no
    ``firstAvailable``)."""
    return {r.name: frozenset(s.name for s in r.first_available) if r.first_available else None for r in requests}


_REQUEST_REF_MSG = "must be the name of a request in the claim or the name of a request and a subrequest separated by '/'"


def _request_name_ref_errors(name: str, path: FieldPath, names: Mapping[str, frozenset[str] | None]) -> list[FieldError]:
    """``validateRequestNameRef``: at most one '/', each segment a DNS label, naming a request
    (or a request's subrequest) of the spec."""
    segments = name.split("/")
    if len(segments) > 2:
        return [FieldError.invalid(path, name, _REQUEST_REF_MSG)]
    errors = [FieldError.invalid(path, seg, m) for seg in segments for m in dns1123_label_errors(seg)]
    known = segments[0] in names and (len(segments) == 1 or segments[1] in (names[segments[0]] or ()))
    if not known:
        errors.append(FieldError.invalid(path, name, _REQUEST_REF_MSG))
    return errors


def _pool_name_errors(name: str, path: FieldPath) -> list[FieldError]:
    """``validatePoolName``: required, at most 253 bytes, each '/'-separated part a DNS subdomain
    (the error names the part, as ``ValidateDNS1123Subdomain(part, fldPath)``)."""
    if not name:
        return [FieldError.required(path, "")]
    errors = []
    if len(name.encode()) > _POOL_NAME_MAX:
        errors.append(FieldError.too_long(path, _POOL_NAME_MAX))
    for part in name.split("/"):
        errors.extend(FieldError.invalid(path, part, m) for m in dns1123_subdomain_errors(part))
    return errors


def _uuid_error(s: str) -> str | None:
    """github.com/google/uuid ``Validate`` (v1.6.0): the four accepted spellings, else its error."""
    def hex_pairs(t: str, starts) -> bool:
        return all(all(c in "0123456789abcdefABCDEF" for c in t[x:x + 2]) for x in starts)

    b = s.encode()
    n = len(b)
    if n == 36 + 9:
        if s[:9].lower() != "urn:uuid:":
            return f"invalid urn prefix: {go_quote(s[:9])}"
        s = s[9:]
    elif n == 36 + 2:
        if not (s.startswith("{") and s.endswith("}")):
            return "invalid bracketed UUID format"
        s = s[1:-1]
    elif n == 32:
        return None if s.isascii() and hex_pairs(s, range(0, 32, 2)) else "invalid UUID format"
    elif n != 36:
        return f"invalid UUID length: {n}"
    if len(s.encode()) == 36:
        if not s.isascii() or any(s[i] != "-" for i in (8, 13, 18, 23)):
            return "invalid UUID format"
        if not hex_pairs(s, (0, 2, 4, 6, 9, 11, 14, 16, 19, 21, 24, 26, 28, 30, 32, 34)):
            return "invalid UUID format"
    return None


def _uid_errors(uid: str, path: FieldPath) -> list[FieldError]:
    """``validateUID`` (a shareID)."""
    problem = _uuid_error(uid)
    if problem:
        return [FieldError.invalid(path, uid, f"error validating uid: {problem}")]
    if len(uid) != 36 or uid != uid.lower():
        return [FieldError.invalid(path, uid, "uid must be in RFC 4122 normalized form, "
                                              "`xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx` with lowercase hexadecimal characters")]
    return []


def _binding_parameters_errors(conditions: list, failure_conditions: list, path: FieldPath,
                               given: tuple[bool, bool] = (True, True)) -> list[FieldError]:
    """``validateDeviceBindingParameters``; ``given``: whether each list was in the manifest (an
    absent one is a nil slice, shown as ``null``; an empty one as ``[]``)."""
    errors: list[FieldError] = []
    for key, items in (("bindingConditions", conditions), ("bindingFailureConditions", failure_conditions)):
        if len(items) > _BINDING_CONDITIONS_MAX:
            errors.append(_too_many(path.child(key), len(items), _BINDING_CONDITIONS_MAX))
        else:
            for i, c in enumerate(items):
                errors.extend(FieldError.invalid(path.child(key).index(i), c, m) for m in qualified_name_errors(c))
    seen: set[str] = set()
    for i, c in enumerate(conditions):
        if c in seen:
            errors.append(FieldError.duplicate(path.child("bindingConditions").index(i), c))
        seen.add(c)
    seen_failure: set[str] = set()
    for i, c in enumerate(failure_conditions):
        if c in seen_failure:
            errors.append(FieldError.duplicate(path.child("bindingFailureConditions").index(i), c))
        seen_failure.add(c)
        if c in conditions:
            errors.append(FieldError.invalid(path.child("bindingFailureConditions").index(i), c,
                                             "bindingFailureConditions must not overlap with bindingConditions"))
    if not conditions and failure_conditions:
        errors.append(FieldError.invalid(path.child("bindingConditions"), conditions if given[0] else None,
                                         "bindingConditions are required to use bindingFailureConditions"))
    if not failure_conditions and conditions:
        errors.append(FieldError.invalid(path.child("bindingFailureConditions"), failure_conditions if given[1] else None,
                                         "bindingFailureConditions are required to use bindingConditions"))
    return errors


def _device_toleration_errors(t: Mapping[str, Any], path: FieldPath) -> list[FieldError]:
    """``validateDeviceToleration``."""
    errors: list[FieldError] = []
    key = as_str(t.get("key"), str(path.child("key"))) or ""
    operator = as_str(t.get("operator"), str(path.child("operator"))) or ""
    value = as_str(t.get("value"), str(path.child("value"))) or ""
    effect = as_str(t.get("effect"), str(path.child("effect"))) or ""
    if key:
        errors.extend(FieldError.invalid(path.child("key"), key, m) for m in qualified_name_errors(key))
    if operator == "Exists":
        if value:
            errors.append(FieldError.invalid(path.child("value"), value, "must be empty for operator `Exists`"))
    elif operator == "Equal":
        errors.extend(FieldError.invalid(path.child("value"), value, m) for m in label_value_errors(value))
    elif not operator:
        errors.append(FieldError.required(path.child("operator"), ""))
    else:
        errors.append(FieldError.not_supported(path.child("operator"), operator, ("Equal", "Exists")))
    if effect and effect not in DEVICE_TAINT_EFFECTS:
        errors.append(FieldError.not_supported(path.child("effect"), effect, sorted(DEVICE_TAINT_EFFECTS)))
    return errors


def _str_list(value: Any, path: FieldPath) -> list[str]:
    return [as_str(v, str(path.index(i))) for i, v in enumerate(as_list(value or [], str(path)))]


def _allocation_result_errors(allocation: Mapping[str, Any], path: FieldPath,
                              names: Mapping[str, frozenset[str] | None]) -> list[FieldError]:
    """``validateAllocationResult`` (``stored=false``): ``devices.results`` (at most 32; each one's
    request reference, driver, pool, device, binding conditions, tolerations, shareID,
    skipNodeOperations), ``devices.config`` (at most 64), then ``nodeSelector`` (core
    ``ValidateNodeSelector``, label values checked)."""
    errors: list[FieldError] = []
    devices = as_map(allocation.get("devices") or {}, f"{path}.devices")
    dp = path.child("devices")
    results = as_list(devices.get("results") or [], f"{dp}.results")
    rp = dp.child("results")
    if len(results) > _ALLOCATION_RESULTS_MAX:
        errors.append(_too_many(rp, len(results), _ALLOCATION_RESULTS_MAX))
    else:
        for i, r in enumerate(results):
            p = rp.index(i)
            r = as_map(r, str(p))
            errors += _request_name_ref_errors(as_str(r.get("request"), str(p.child("request"))) or "",
                                               p.child("request"), names)
            errors += _driver_name_errors(as_str(r.get("driver"), str(p.child("driver"))) or "", p.child("driver"))
            errors += _pool_name_errors(as_str(r.get("pool"), str(p.child("pool"))) or "", p.child("pool"))
            device = as_str(r.get("device"), str(p.child("device"))) or ""
            errors += [FieldError.invalid(p.child("device"), device, m) for m in dns1123_label_errors(device)]
            bc, bfc = get_field(r, "bindingConditions"), get_field(r, "bindingFailureConditions")
            errors += _binding_parameters_errors(_str_list(bc, p.child("bindingConditions")),
                                                 _str_list(bfc, p.child("bindingFailureConditions")), p,
                                                 (bc is not None, bfc is not None))
            for j, t in enumerate(as_list(r.get("tolerations") or [], str(p.child("tolerations")))):
                tp = p.child("tolerations").index(j)
                errors += _device_toleration_errors(as_map(t, str(tp)), tp)
            share = get_field(r, "shareID")
            if share is not None:
                errors += _uid_errors(as_str(share, str(p.child("shareID"))), p.child("shareID"))
            ops = get_field(r, "skipNodeOperations")
            if ops:
                errors += _skip_node_operations_errors(_str_list(ops, p.child("skipNodeOperations")),
                                                       p.child("skipNodeOperations"))
    config = as_list(devices.get("config") or [], f"{dp}.config")
    cp = dp.child("config")
    if len(config) > 2 * _DEVICE_CONFIG_MAX:  # class + claim
        errors.append(_too_many(cp, len(config), 2 * _DEVICE_CONFIG_MAX))
    else:
        for i, c in enumerate(config):
            errors += _allocation_config_errors(as_map(c, str(cp.index(i))), cp.index(i), names)
    selector = get_field(allocation, "nodeSelector")
    if selector is not None:
        errors += node_selector_errors(NodeSelector.from_dict(selector), path.child("nodeSelector"))
    return errors


def _allocation_config_errors(c: Mapping[str, Any], path: FieldPath,
                              names: Mapping[str, frozenset[str] | None]) -> list[FieldError]:
    """``validateDeviceAllocationConfiguration`` (``stored=false``): source, requests (a set of
    at most 32 references), the opaque configuration."""
    errors: list[FieldError] = []
    source = as_str(c.get("source"), str(path.child("source"))) or ""
    if not source:
        errors.append(FieldError.required(path.child("source"), ""))
    elif source not in ("FromClaim", "FromClass"):
        errors.append(FieldError.not_supported(path.child("source"), source, ("FromClaim", "FromClass")))
    requests = _str_list(c.get("requests"), path.child("requests"))
    if len(requests) > _DEVICE_REQUESTS_MAX:
        errors.append(_too_many(path.child("requests"), len(requests), _DEVICE_REQUESTS_MAX))
    else:
        for j, ref in enumerate(requests):
            errors += _request_name_ref_errors(ref, path.child("requests").index(j), names)
        seen: set[str] = set()
        for j, ref in enumerate(requests):
            if ref in seen:
                errors.append(FieldError.duplicate(path.child("requests").index(j), ref))
            seen.add(ref)
    opaque = c.get("opaque")
    if opaque is None:
        errors.append(FieldError.required(path.child("opaque"), ""))
    else:
        op = path.child("opaque")
        opaque = as_map(opaque, str(op))
        errors += _driver_name_errors(as_str(opaque.get("driver"), str(op.child("driver"))) or "", op.child("driver"))
        errors += _raw_extension_errors(opaque.get("parameters"), op.child("parameters"), _OPAQUE_PARAMETERS_MAX)
    return errors


def _raw_extension_errors(value: Any, path: FieldPath, limit: int) -> list[FieldError]:
    """``validateRawExtension`` (``stored=false``) of a field a manifest gives already decoded:
    its size is that of its compact JSON (what a client sends); it must be a JSON object."""
    if value is None:
        return [FieldError.required(path, "")]
    try:
        raw = json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode()
    except (TypeError, ValueError):
        return [FieldError.invalid(path, "<value omitted>", "must be a valid JSON object")]
    if len(raw) > limit:
        return [FieldError.too_long(path, limit)]
    if not isinstance(value, Mapping):
        return [FieldError.invalid(path, "<value omitted>", "must be a valid JSON object")]
    return []


def _shared_device_id(driver: str, pool: str, device: str, share: str | None) -> GoStruct:
    """``MakeSharedDeviceID`` as an error shows it: field.Error renders the struct as JSON (its
    UniqueStrings marshal as strings), ``{"Driver":…,"Pool":…,"Device":…,"ShareID":…}``."""
    return GoStruct(Driver=driver, Pool=pool, Device=device, ShareID=share or "")


def _device_statuses_errors(entries: Sequence[Any], allocation: Mapping[str, Any] | None, path: FieldPath) -> list[FieldError]:
    """``status.devices`` (``validateSet`` of ``validateDeviceStatus``, keyed by the shared device
    ID): each entry's driver, pool, device, shareID, that it names an allocated device, its
    conditions (at most 8), data and networkData; then later duplicates."""
    allocated: set[tuple[str, str, str, str]] = set()
    if allocation is not None:
        for r in as_list((as_map(allocation.get("devices") or {}, "status.allocation.devices")).get("results") or [],
                         "status.allocation.devices.results"):
            if isinstance(r, Mapping):
                allocated.add((str(r.get("driver") or ""), str(r.get("pool") or ""), str(r.get("device") or ""),
                               str(get_field(r, "shareID") or "")))
    errors: list[FieldError] = []
    keys: list[tuple[str, str, str, str]] = []
    for i, d in enumerate(entries):
        p = path.index(i)
        d = as_map(d, str(p))
        driver = as_str(d.get("driver"), str(p.child("driver"))) or ""
        pool = as_str(d.get("pool"), str(p.child("pool"))) or ""
        device = as_str(d.get("device"), str(p.child("device"))) or ""
        errors += _driver_name_errors(driver, p.child("driver"))
        errors += _pool_name_errors(pool, p.child("pool"))
        errors += [FieldError.invalid(p.child("device"), device, m) for m in dns1123_label_errors(device)]
        share = get_field(d, "shareID")
        if share is not None:
            errors += _uid_errors(as_str(share, str(p.child("shareID"))), p.child("shareID"))
        key = (driver, pool, device, str(share or ""))
        keys.append(key)
        if key not in allocated:
            errors.append(FieldError.invalid(p, _shared_device_id(*key), "must be an allocated device in the claim"))
        conditions = as_list(d.get("conditions") or [], str(p.child("conditions")))
        if len(conditions) > _DEVICE_STATUS_CONDITIONS_MAX:
            errors.append(FieldError.too_many(p.child("conditions"), len(conditions), _DEVICE_STATUS_CONDITIONS_MAX))
        errors += _conditions_errors(conditions, p.child("conditions"))
        data = d.get("data")
        if data is not None:
            errors += _raw_extension_errors(data, p.child("data"), _DEVICE_STATUS_DATA_MAX)
        network = get_field(d, "networkData")
        if network is not None:
            errors += _network_data_errors(as_map(network, str(p.child("networkData"))), p.child("networkData"))
    seen: set[tuple[str, str, str, str]] = set()
    for i, key in enumerate(keys):
        if key in seen:
            errors.append(FieldError.duplicate(path.index(i), _shared_device_id(*key)))
        seen.add(key)
    return errors


_CONDITION_REASON_RE = re.compile(r"[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?")
_CONDITION_STATUSES = ("False", "True", "Unknown")


def _conditions_errors(conditions: Sequence[Any], path: FieldPath) -> list[FieldError]:
    """metav1 ``ValidateConditions``: per entry, a type seen before (Duplicate), then
    ``ValidateCondition`` (type a label name, status, observedGeneration ≥ 0,
    lastTransitionTime set, reason's format and 1 KiB, message's 32 KiB)."""
    errors: list[FieldError] = []
    seen: set[str] = set()
    for i, c in enumerate(conditions):
        p = path.index(i)
        c = as_map(c, str(p))
        ctype = as_str(c.get("type"), str(p.child("type"))) or ""
        if ctype in seen:
            errors.append(FieldError.duplicate(p, ctype))
        seen.add(ctype)
        if not ctype:
            errors.append(FieldError.required(p.child("type"), "is required"))
        else:
            errors.extend(FieldError.invalid(p.child("type"), ctype, m) for m in qualified_name_errors(ctype))
        cstatus = as_str(c.get("status"), str(p.child("status"))) or ""
        if not cstatus:
            errors.append(FieldError.required(p.child("status"), ""))
        elif cstatus not in _CONDITION_STATUSES:
            errors.append(FieldError.not_supported(p.child("status"), cstatus, _CONDITION_STATUSES))
        generation = as_int(get_field(c, "observedGeneration"), str(p.child("observedGeneration"))) or 0
        if generation < 0:
            errors.append(FieldError.invalid(p.child("observedGeneration"), generation,
                                             "must be greater than or equal to zero"))
        if not get_field(c, "lastTransitionTime"):
            errors.append(FieldError.required(p.child("lastTransitionTime"), ""))
        reason = as_str(c.get("reason"), str(p.child("reason"))) or ""
        if not reason:
            errors.append(FieldError.required(p.child("reason"), ""))
        else:
            if not _CONDITION_REASON_RE.fullmatch(reason):
                errors.append(FieldError.invalid(p.child("reason"), reason, _regex_error(
                    "a condition reason must start with alphabetic character, optionally followed by a string of "
                    "alphanumeric characters or '_,:', and must end with an alphanumeric character or '_'",
                    _CONDITION_REASON_RE.pattern, "my_name", "MY_NAME", "MyName", "ReasonA,ReasonB",
                    "ReasonA:ReasonB")))
            if len(reason.encode()) > 1024:
                errors.append(FieldError.too_long(p.child("reason"), 1024))
        message = as_str(c.get("message"), str(p.child("message"))) or ""
        if len(message.encode()) > 32 * 1024:
            errors.append(FieldError.too_long(p.child("message"), 32 * 1024))
    return errors


def _network_data_errors(n: Mapping[str, Any], path: FieldPath) -> list[FieldError]:
    """``validateNetworkDeviceData``: interfaceName ≤ 256 bytes, hardwareAddress ≤ 128 bytes, ips a
    set of at most 16 interface addresses in canonical CIDR form."""
    errors: list[FieldError] = []
    name = as_str(get_field(n, "interfaceName"), str(path.child("interfaceName"))) or ""
    if len(name.encode()) > _INTERFACE_NAME_MAX:
        errors.append(FieldError.too_long(path.child("interfaceName"), _INTERFACE_NAME_MAX))
    hw = as_str(get_field(n, "hardwareAddress"), str(path.child("hardwareAddress"))) or ""
    if len(hw.encode()) > _HARDWARE_ADDRESS_MAX:
        errors.append(FieldError.too_long(path.child("hardwareAddress"), _HARDWARE_ADDRESS_MAX))
    ips = _str_list(n.get("ips"), path.child("ips"))
    if len(ips) > _NETWORK_IPS_MAX:
        errors.append(_too_many(path.child("ips"), len(ips), _NETWORK_IPS_MAX))
        return errors
    for i, ip in enumerate(ips):
        errors += _interface_address_errors(ip, path.child("ips").index(i))
    seen: set[str] = set()
    for i, ip in enumerate(ips):
        if ip in seen:
            errors.append(FieldError.duplicate(path.child("ips").index(i), ip))
        seen.add(ip)
    return errors


def _interface_address_errors(value: str, path: FieldPath) -> list[FieldError]:
    """apimachinery ``IsValidInterfaceAddress``: ``ParseCIDRSloppy`` (IPv4 octets may have leading
    zeros, read as decimal), then the value must be its canonical ``ip/bits``."""
    addr, sep, bits = value.partition("/")
    ip: ipaddress.IPv4Address | ipaddress.IPv6Address | None = None
    try:
        if not sep or not bits.isdigit() or not bits.isascii():
            raise ValueError
        if ":" in addr:
            ip = ipaddress.IPv6Address(addr)
            prefix, width = int(bits), 128
        else:
            octets = addr.split(".")
            if len(octets) != 4 or not all(o.isdigit() and o.isascii() and len(o) <= 3 and int(o) <= 255 for o in octets):
                raise ValueError
            ip = ipaddress.IPv4Address(".".join(str(int(o)) for o in octets))
            prefix, width = int(bits), 32
        if prefix > width:
            raise ValueError
    except ValueError:
        return [FieldError.invalid(path, value, "must be a valid address in CIDR form, (e.g. 10.9.8.7/24 or 2001:db8::1/64)")]
    text = str(ip)
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        text = str(ip.ipv4_mapped)  # Go prints a v4-mapped address as IPv4
        if prefix >= 96:
            prefix -= 96
    canonical = f"{text}/{prefix}"
    if value != canonical:
        return [FieldError.invalid(path, value, f"must be in canonical form ({go_quote(canonical)})")]
    return []


def _result_skip_operations(rc: ResourceClaim) -> list[tuple[int, list]]:
    """``(index, skipNodeOperations)`` of the allocation results that have some."""
    devices = (rc.allocation or {}).get("devices") or {}
    results = as_list(devices.get("results") or [], "status.allocation.devices.results")
    out = []
    for i, r in enumerate(results):
        ops = as_map(r, f"status.allocation.devices.results[{i}]").get("skipNodeOperations")
        if ops:
            out.append((i, [as_str(op, f"status.allocation.devices.results[{i}].skipNodeOperations")
                            for op in as_list(ops, f"status.allocation.devices.results[{i}].skipNodeOperations")]))
    return out


def _spec_without_derived_attributes(spec: Any) -> Any:
    """A claim spec manifest without its requests' ``derivedAttributes`` (``exactly`` and
    ``firstAvailable`` entries); ``spec`` itself when none has them."""
    if not isinstance(spec, Mapping):
        return spec
    devices = spec.get("devices")
    if not isinstance(devices, Mapping):
        return spec
    requests = devices.get("requests")
    if not isinstance(requests, list):
        return spec

    def strip(body: Any) -> Any:
        return {k: v for k, v in body.items() if k != "derivedAttributes"} if isinstance(body, Mapping) else body

    changed = False
    out = []
    for req in requests:
        if isinstance(req, Mapping):
            new = dict(req)
            if isinstance(req.get("exactly"), Mapping) and "derivedAttributes" in req["exactly"]:
                new["exactly"] = strip(req["exactly"])
            subs = req.get("firstAvailable")
            if isinstance(subs, list) and any(isinstance(x, Mapping) and "derivedAttributes" in x for x in subs):
                new["firstAvailable"] = [strip(x) for x in subs]
            changed = changed or new != req
            req = new
        out.append(req)
    return {**spec, "devices": {**devices, "requests": out}} if changed else spec


def _requests_without_derived_attributes(requests: tuple[DeviceRequest, ...]) -> tuple[DeviceRequest, ...]:
    def strip(body: DeviceSubRequest) -> DeviceSubRequest:
        return dataclasses.replace(body, derived_attributes=()) if body.derived_attributes else body

    return tuple(dataclasses.replace(r, exactly=None if r.exactly is None else strip(r.exactly),
                                     first_available=tuple(strip(sub) for sub in r.first_available))
                 for r in requests)


_ClaimOrTemplate = TypeVar("_ClaimOrTemplate", "ResourceClaim", "ResourceClaimTemplate")


def drop_derived_attributes(obj: _ClaimOrTemplate) -> _ClaimOrTemplate:
    """``dropDisabledDRADerivedAttributesFields`` on create (``pkg/api/resourceclaimspec``, for claims
    and claim templates): the requests' and subrequests' ``derivedAttributes`` removed; ``obj``
    when none has them."""
    if not any((r.exactly is not None and r.exactly.derived_attributes)
               or any(sub.derived_attributes for sub in r.first_available) for r in obj.requests):
        return obj
    requests = _requests_without_derived_attributes(obj.requests)
    manifest = obj.manifest
    if isinstance(obj, ResourceClaimTemplate):
        claim_spec = _spec_without_derived_attributes(obj.claim_spec)
        if manifest and isinstance(manifest.get("spec"), Mapping):
            manifest = {**manifest, "spec": {**manifest["spec"],
                                             "spec": _spec_without_derived_attributes(manifest["spec"].get("spec"))}}
        return obj.replace(requests=requests, claim_spec=claim_spec, manifest=manifest)
    if manifest:
        manifest = {**manifest, "spec": _spec_without_derived_attributes(manifest.get("spec"))}
    return obj.replace(requests=requests, manifest=manifest)


def drop_claim_skip_node_operations(rc: ResourceClaim) -> ResourceClaim:
    """``dropDisabledDRAOptionalNodeOperationsStatusFields``: the allocation results'
    ``skipNodeOperations`` removed (a claim given with a status is taken as written by a status
    update, which drops them without the gate); ``rc`` when none has them."""
    if not rc.allocation or not any("skipNodeOperations" in r for r in
                                    ((rc.allocation.get("devices") or {}).get("results") or ())
                                    if isinstance(r, Mapping)):
        return rc
    devices = dict(rc.allocation.get("devices") or {})
    devices["results"] = [{k: v for k, v in r.items() if k != "skipNodeOperations"} if isinstance(r, Mapping) else r
                          for r in devices.get("results") or ()]
    allocation = {**rc.allocation, "devices": devices}
    manifest = rc.manifest
    if manifest and isinstance(manifest.get("status"), Mapping):
        manifest = {**manifest, "status": {**manifest["status"], "allocation": allocation}}
    return rc.replace(allocation=allocation, manifest=manifest)


#: ``status.reservedFor`` (paths are immutable: one serves every status write)
_RESERVED_FOR_PATH = FieldPath("status").child("reservedFor")


def validate_resource_claim_status_update(rc: ResourceClaim) -> list[FieldError]:
    """``ValidateResourceClaimStatusUpdate``'s rules on ``status.reservedFor``, the part of a
    status write the scheduler and the resourceclaim controller can get wrong: at most
    ResourceClaimReservedForMaxSize entries (past it, that is the only error), each with its
    ``resource``, ``name`` and ``uid``, no uid twice. Upstream's bindClaim relies on it: it adds
    the pod to ``reservedFor`` without checking, and "the apiserver will tell us with a
    non-conflict error if this isn't possible"."""
    path = _RESERVED_FOR_PATH
    reserved = rc.reserved_for
    if len(reserved) > RESOURCE_CLAIM_RESERVED_FOR_MAX_SIZE:
        return [_too_many(path, len(reserved), RESOURCE_CLAIM_RESERVED_FOR_MAX_SIZE)]
    errors: list[FieldError] = []
    seen: set[str] = set()
    for i, ref in enumerate(reserved):
        for key in ("resource", "name", "uid"):  # validateResourceClaimUserReference
            if not ref.get(key):
                errors.append(FieldError.required(path.index(i).child(key), ""))
    for i, ref in enumerate(reserved):  # validateSet's uniqueness, after the items' own checks
        uid = str(ref.get("uid") or "")
        if uid in seen:
            errors.append(FieldError.duplicate(path.index(i), uid))
        seen.add(uid)
    return errors


def validate_resource_claim_template(t: ResourceClaimTemplate, list_type_attributes: bool = False) -> list[FieldError]:
    """``ValidateResourceClaimTemplate``: metadata and ``spec.spec.devices``."""

    errors = validate_object_meta(t, namespaced=True)
    errors += _claim_spec_errors(t.requests, t.constraints, t.config, FieldPath("spec").child("spec"),
                                 list_type_attributes)
    return errors


# --------------------------------------------------------------------------------------------
# DeviceTaintRule (DRADeviceTaintRules, GA at v1.37)
# --------------------------------------------------------------------------------------------
#: ``validDeviceTaintEffects``, as sets.List sorts them
DEVICE_TAINT_EFFECTS = ("NoExecute", "NoSchedule", "None")


@dataclass(slots=True, kw_only=True, eq=False)
class DeviceTaintRule(KubeObject):
    """A ``resource.k8s.io/v1`` DeviceTaintRule: ``taint`` (the raw ``{key, value, effect,
    timeAdded}``) added to every device its selector picks. ``driver`` / ``pool`` / ``device``:
    the selector's fields (None: any); ``has_selector`` False: no ``deviceSelector``, no device."""

    KIND: ClassVar[str] = "DeviceTaintRule"

    has_selector: bool = False
    driver: str | None = None
    pool: str | None = None
    device: str | None = None
    taint: Mapping[str, Any] = field(default_factory=dict)

    def selects(self, driver: str, pool: str, device: str) -> bool:
        """Whether the rule applies to the device (upstream tracker ``applyPatches``)."""
        return (self.has_selector and (self.driver is None or self.driver == driver)
                and (self.pool is None or self.pool == pool) and (self.device is None or self.device == device))


def _optional_str(value: Any, path: str) -> str | None:
    return None if value is None else as_str(value, path)


def parse_device_taint_rule(obj: Mapping[str, Any]) -> DeviceTaintRule:
    """Build a DeviceTaintRule from a manifest dict."""
    spec = as_map(obj.get("spec") or {}, "spec")
    selector = get_field(spec, "deviceSelector")
    sel = as_map(selector, "spec.deviceSelector") if selector is not None else {}
    return DeviceTaintRule(
        **object_meta(obj, namespaced=False),
        has_selector=selector is not None,
        driver=_optional_str(sel.get("driver"), "spec.deviceSelector.driver"),
        pool=_optional_str(sel.get("pool"), "spec.deviceSelector.pool"),
        device=_optional_str(sel.get("device"), "spec.deviceSelector.device"),
        taint=dict(as_map(spec.get("taint") or {}, "spec.taint")),
    )


def validate_device_taint_rule(rule: DeviceTaintRule) -> list[FieldError]:
    """``ValidateDeviceTaintRule``: metadata, the selector's names, the taint's key, value and effect."""
    errors = validate_object_meta(rule, namespaced=False)
    sel = FieldPath("spec").child("deviceSelector")
    if rule.driver is not None:
        errors += _driver_name_errors(rule.driver, sel.child("driver"))
    if rule.pool is not None:
        errors += _pool_name_errors(rule.pool, sel.child("pool"))
    if rule.device is not None:
        errors.extend(FieldError.invalid(sel.child("device"), rule.device, m) for m in dns1123_label_errors(rule.device))
    taint = FieldPath("spec").child("taint")
    key = str(rule.taint.get("key") or "")
    errors.extend(FieldError.invalid(taint.child("key"), key, m) for m in qualified_name_errors(key))
    value = str(rule.taint.get("value") or "")
    if value:
        errors.extend(FieldError.invalid(taint.child("value"), value, m) for m in label_value_errors(value))
    effect = str(rule.taint.get("effect") or "")
    if not effect:
        errors.append(FieldError.required(taint.child("effect"), ""))
    elif effect not in DEVICE_TAINT_EFFECTS:
        errors.append(FieldError.not_supported(taint.child("effect"), effect, DEVICE_TAINT_EFFECTS))
    return errors


RESOURCE_PARSERS: dict[str, Callable[[Mapping[str, Any]], KubeObject]] = {
    "ResourceSlice": parse_resource_slice,
    "DeviceClass": parse_device_class,
    "ResourceClaim": parse_resource_claim,
    "ResourceClaimTemplate": parse_resource_claim_template,
    "DeviceTaintRule": parse_device_taint_rule,
}

RESOURCE_VALIDATORS: dict[str, Callable[[Any], list[FieldError]]] = {
    "ResourceSlice": validate_resource_slice,
    "DeviceClass": validate_device_class,
    "ResourceClaim": validate_resource_claim,
    "ResourceClaimTemplate": validate_resource_claim_template,
    "DeviceTaintRule": validate_device_taint_rule,
}
