"""The structured allocator (upstream ``k8s.io/dynamic-resource-allocation/structured``, v0.37.2).

At kube-scheduler v1.37.2's default gates ``structured.NewAllocator`` picks the **incubating**
variant (``structured/internal/incubating/allocator_incubating.go``, ``pools_incubating.go``):
DRADeviceBindingConditions, DRAConsumableCapacity and DRAPartitionableDevices are on, which the
"stable" variant does not support. This module ports that variant.

``Allocator(features, allocated_devices, get_class, slices, selector_cache, all_slices).allocate(
node, claims)`` returns one allocation result per claim (``status.allocation`` as the API carries
it: ``{"devices": {"results": [...], "config": [...]}, "nodeSelector": {...}}``), None when the
claims cannot all be allocated on ``node``, raises :class:`FailedAllocationOnNode` when nothing
fits and an invalid pool was seen (``ErrFailedAllocationOnNode``: that node only), and
:class:`AllocatorError` for what upstream reports as an error of the cycle (a CEL error, a missing
class, "All" on an incomplete pool, ...).

The search is upstream's: depth-first with backtracking, the first complete solution wins;
claims in the given order, requests in spec order, one device at a time; for each device the
candidates are pools (sorted by driver and pool name, pools with binding conditions last) ->
slices (sorted by name) -> devices (slice order), skipping incomplete and invalid pools; the next
device of the same request is searched from after the previous one. Pools are gathered per node
as ``GatherPools`` does, checking a pool that looks incomplete against every slice.

Allocation results are v1.37.2's: each used class's config once, naming the requests of the
class; claim config entries that apply as given; entries applying to every request without
``requests``. Devices with binding conditions carry ``bindingConditions`` and
``bindingFailureConditions`` in their result; a device that ``bindsToNode`` restricts the
allocation to the node.

Features (``structured.Features``) with v1.37.2's defaults: admin access, prioritized list,
partitionable devices (counter sets: devices consuming counters are allocated while the pool's
counters last), device taints (NoSchedule / NoExecute taints must be tolerated by the request),
binding conditions, consumable capacity (DRAConsumableCapacity with DRAFractionalCapacityRange:
requests with ``capacity.requests`` are checked against each device's capacities and their
``requestPolicy``, see :mod:`fastsched.dra.consumable`; a device with ``allowMultipleAllocations``
is not marked in use but allocated as a *share* with a ``shareID`` and the ``consumedCapacity`` in
its result, next to the capacity already consumed by other shares, :class:`AllocatedState`).
DeviceTaintRules are in the slices it is given (DynamicResources' manager adds their taints).

Alpha: with DRAListTypeAttributes (``Features.list_type_attributes``) or
DRADeviceCompatibilityGroups (``Features.compatibility_groups``) upstream picks the
**experimental** variant (``internal/experimental``) for every claim. Its search is the incubating
one's; what differs is, with list-type attributes, the constraints' set semantics
(``matchAttribute``: the running intersection of the devices' value sets stays non-empty;
``distinctAttribute``: the sets are pairwise disjoint; a scalar is a one-element set) and CEL's
lists and ``includes()``; with compatibility groups, a device drawing from a counter set must share
a group with every device there (allocated, or allocated in this search), checked before its
counters. With DRAOptionalNodeOperations (``Features.optional_node_operations``) a device of a
slice with ``skipNodeOperations`` is allocated only on a node whose ``status.declaredFeatures``
has ``DRAOptionalNodeOperations`` (checked after "in use"), and its result carries the slice's
list; the experimental variant refuses such devices when the feature is off (the incubating one
has no such field, and the API server drops it then). With DRADerivedAttributes
(``Features.derived_attributes``) a request's ``derivedAttributes`` shadow the devices' attributes of
the same name for the claim's constraints, on that request only (``lookupAttribute``: the
expression evaluated per device, once per device and expression; an error ends the allocation);
selectors never see them. Without it every variant refuses a request with them.

Share IDs: upstream draws a random (time-based) UUID per share (``uuid.NewUUID``). fastsched
derives it from the claim and the result's index (:func:`share_id`), so a run is reproducible; the
value is a valid UUID as the API requires and unique among the shares of a device (a claim's
results are distinct). Only whether a result has one can be compared with upstream.
"""
from __future__ import annotations

import dataclasses
import time
import uuid
from dataclasses import dataclass, field
from fractions import Fraction
from itertools import repeat
from typing import Any, Callable, Container, Iterable, Iterator, Mapping, Sequence

import numpy as np

from ..api.resource import (ALLOCATION_MODE_ALL, ALLOCATION_MODE_EXACT_COUNT, ALLOCATION_RESULTS_MAX_SIZE,
                            DRA_OPTIONAL_NODE_OPERATIONS_FEATURE, DeviceAttribute, DeviceClass, ResourceClaim,
                            ResourceSlice, compatibility_groups)
from ..api.cel import CELError, SelectorCache, compile_expression, derived_attribute, device_input
from ..api.quantity import Quantity, parse_quantity
from .consumable import (CapacityError, ConsumedCapacityCollection, canonical, cmp_request_over_capacity,
                         consumed_capacity_from_request)

__all__ = ["Features", "AllocatedState", "share_id", "DeviceID", "Pool", "Allocator", "NodeShapes", "SameShapeAnswer", "GroupAnswer", "relocated", "node_local",
           "AllocatorError", "AllocationTimeout", "FailedAllocationOnNode",
           "gather_pools", "allocated_devices_of", "enhance_runtime_error", "tolerates_taint", "taint_prevents_allocation"]

#: (driver, pool, device)
DeviceID = tuple


def device_id_text(device_id: DeviceID) -> str:
    """``DeviceID.String()``: ``driver/pool/device``."""
    return "/".join(device_id)


@dataclass(frozen=True, slots=True)
class Features:
    """``structured.Features``: the DRA gates the allocator honours (v1.37.2 defaults,
    ``dynamicresources.go`` AllocatorFeatures: DRAPartitionableDevices beta on since 1.36,
    DRADeviceTaints GA, DRADeviceBindingConditions and DRAResourceClaimDeviceStatus on,
    DRAConsumableCapacity beta on; DRAFractionalCapacityRange beta but off: on only with
    ``--min-compatibility-version`` 1.37)."""

    admin_access: bool = True
    prioritized_list: bool = True
    partitionable_devices: bool = True
    device_taints: bool = True
    device_binding: bool = True
    consumable_capacity: bool = True
    fractional_capacity_range: bool = False
    #: DRAListTypeAttributes (alpha, off): list-valued attributes, matched as sets
    list_type_attributes: bool = False
    #: DRADeviceCompatibilityGroups (alpha, off): devices drawing from one counter set must share
    #: a compatibility group (off: slices declaring groups are ignored)
    compatibility_groups: bool = False
    #: DRAOptionalNodeOperations (alpha, off): devices of slices with ``skipNodeOperations`` only on
    #: nodes declaring the feature, the operations copied into their results
    optional_node_operations: bool = False
    #: DRADerivedAttributes (alpha, off): requests' ``derivedAttributes`` seen by the constraints
    #: (off: a request with them is refused)
    derived_attributes: bool = False

    @property
    def variant(self) -> str:
        """The variant ``structured.NewAllocator`` picks for these features: "experimental" with
        any alpha allocator feature on, else "incubating" (the "stable" variant, for GA-only
        feature sets, is not ported: the incubating one is a superset of it)."""
        return ("experimental" if self.list_type_attributes or self.compatibility_groups
                or self.optional_node_operations or self.derived_attributes else "incubating")


_EMPTY_CAPACITY: dict = {}


@dataclass(slots=True)
class AllocatedState:
    """The shares part of ``structured.AllocatedState`` (the dedicated devices are the
    allocator's ``allocated_devices``): ``shared_devices`` the devices some allocated result holds
    with a ``shareID`` (``AllocatedSharedDeviceIDs``, by device), ``aggregated_capacity`` device ->
    capacity name -> the sum of the ``consumedCapacity`` of those results (``AggregatedCapacity``)."""

    shared_devices: Container[DeviceID] = field(default_factory=frozenset)
    aggregated_capacity: Mapping[DeviceID, Mapping[str, Fraction]] = field(default_factory=dict)


def share_id(claim: Any, index: int) -> str:
    """The ``shareID`` of a claim's ``index``-th result: a UUID derived from the claim's uid (or
    namespace/name) and the index (upstream: a random UUID; see the module doc)."""
    key = claim.uid or f"{claim.namespace}/{claim.name}"
    return str(uuid.uuid5(uuid.NAMESPACE_URL, f"fastsched/share/{key}/{index}"))


class AllocatorError(Exception):
    """An allocation error (upstream's ``Allocate`` error); the text is upstream's."""


class FailedAllocationOnNode(AllocatorError):
    """``structured.ErrFailedAllocationOnNode``: allocation failed on this node only (an invalid
    pool was seen and nothing fitted); Filter makes it the node's unschedulable status."""


class AllocationTimeout(AllocatorError):
    """The filter timeout ran out during the search (``context.DeadlineExceeded``)."""


class _Stop(Exception):
    """``errAllocationResultMaxSizeExceeded``: more devices than a claim's result can hold."""


class Pool:
    """A resource pool as seen from one node (upstream ``Pool`` of ``pools_incubating.go``): its
    current-generation slices with devices targeting the node (``slices``, sorted by name), the
    other slices of the pool (``slices_not_targeting``) and its counter sets (partitionable
    devices), or just the flags of an incomplete or invalid pool."""

    __slots__ = ("driver", "pool", "slices", "slices_not_targeting", "counter_sets", "is_incomplete",
                 "is_invalid", "invalid_reason")

    def __init__(self, driver: str, pool: str, slices: list[ResourceSlice] | None = None):
        self.driver, self.pool = driver, pool
        self.slices: list[ResourceSlice] = slices if slices is not None else []
        self.slices_not_targeting: list[ResourceSlice] = []
        #: counter set name -> counter name -> value (Quantity)
        self.counter_sets: dict[str, dict[str, Quantity]] = {}
        self.is_incomplete = False
        self.is_invalid = False
        self.invalid_reason = ""

    @property
    def pool_id(self) -> str:
        return f"{self.driver}/{self.pool}"


def _node_matches(node: Any, node_name: str, all_nodes: bool, node_selector: Any) -> bool:
    if node_name:
        return node is not None and node.name == node_name
    if all_nodes:
        return True
    if node_selector is not None:
        return node is not None and node_selector.matches(node)
    return False


def gather_pools(slices: Iterable[ResourceSlice], node: Any, features: Features,
                 all_slices: Iterable[ResourceSlice] | Callable[[], Iterable[ResourceSlice]] | None = None
                 ) -> list[Pool]:
    """``GatherPools`` (v1.37.2 ``structured/internal/incubating/pools_incubating.go``): the pools
    with slices usable from ``node``, out-dated generations dropped, sorted by (driver, pool) with
    the pools that have devices with binding conditions last.

    A pool with fewer slices for the node than ``resourceSliceCount`` is checked against every
    slice of the cluster (``all_slices``, ``checkSlicesInPool``): ignored when a newer generation
    exists elsewhere, incomplete (no devices) when slices are missing, else built from the slices
    for the node plus the others. ``all_slices`` None: ``slices`` are all there are; a callable is
    called only when some pool looks incomplete.
    (v1.34 kept pools in map order and flagged pools from the node's slices only.)"""
    slices = slices if isinstance(slices, (list, tuple)) else list(slices)
    by_pool: dict[tuple[str, str], list[ResourceSlice]] = {}
    for s in slices:
        if not features.partitionable_devices and (s.per_device_node_selection is not None or s.shared_counters):
            continue
        if s.uses_compatibility_groups and not features.compatibility_groups:
            # pools_incubating.go GatherPools: this allocator cannot check the groups; ignoring the
            # slice leaves its pool incomplete, so none of the pool's devices are allocated
            continue
        if s.node_name or s.all_nodes or s.node_selector is not None:
            if not _node_matches(node, s.node_name, s.all_nodes, s.node_selector):
                continue
        elif s.per_device_node_selection:
            if not any(_node_matches(node, d.node_name, d.all_nodes, d.node_selector) for d in s.devices):
                continue
        else:
            continue  # some future way of selecting nodes: not usable
        key = (s.driver, s.pool_name)
        listed = by_pool.get(key)
        if listed is None:
            by_pool[key] = [s]
            continue
        generation = listed[0].pool_generation
        if s.pool_generation < generation:
            continue
        if s.pool_generation > generation:
            by_pool[key] = [s]
            continue
        listed.append(s)
    result: list[Pool] = []
    with_binding_conditions: list[Pool] = []
    everything: Iterable[ResourceSlice] | None = None  # all_slices, once needed
    for (driver, name), listed in by_pool.items():
        count = listed[0].resource_slice_count
        if len(listed) == count:
            pool = _build_pool(driver, name, listed, features, None)
        else:
            if everything is None:
                everything = slices if all_slices is None else all_slices() if callable(all_slices) else all_slices
            obsolete, all_for_pool = _check_slices_in_pool(everything, driver, name, listed[0].pool_generation)
            if obsolete:
                continue  # the driver is replacing this generation: ignore the pool
            if not features.compatibility_groups:
                # the ignored slices do not count towards the pool's completeness either
                all_for_pool = [s for s in all_for_pool if not s.uses_compatibility_groups]
            if len(all_for_pool) != count:
                pool = Pool(driver, name)
                pool.is_incomplete = True
                result.append(pool)
                continue
            pool = _build_pool(driver, name, listed, features, all_for_pool)
        if any(d.binding_conditions for s in pool.slices for d in s.devices):
            with_binding_conditions.append(pool)
        else:
            result.append(pool)
    result.sort(key=lambda p: (p.driver, p.pool))
    with_binding_conditions.sort(key=lambda p: (p.driver, p.pool))
    return result + with_binding_conditions


def _check_slices_in_pool(all_slices: Iterable[ResourceSlice], driver: str, name: str,
                          generation: int) -> tuple[bool, list[ResourceSlice]]:
    """``checkSlicesInPool``: (a newer generation exists, the pool's slices of ``generation``)."""
    out = []
    for s in all_slices:
        if s.driver != driver or s.pool_name != name:
            continue
        if s.pool_generation == generation:
            out.append(s)
        elif s.pool_generation > generation:
            return True, []
    return False, out


def _build_pool(driver: str, name: str, listed: list[ResourceSlice], features: Features,
                all_for_pool: list[ResourceSlice] | None) -> Pool:
    """``buildPool``: slices sorted by name (first-fit allocation follows that order), counter
    sets apart, then validated: a device name twice among the device slices, a counter set name
    twice, or a device consuming an unknown counter set or counter make the pool invalid."""
    listed = sorted(listed, key=lambda s: s.name)
    device_slices: list[ResourceSlice] = []
    counter_slices: list[ResourceSlice] = []
    not_targeting: list[ResourceSlice] = []
    for s in listed:
        (counter_slices if features.partitionable_devices and s.shared_counters else device_slices).append(s)
    if all_for_pool is not None and len(listed) < len(all_for_pool):
        names = {s.name for s in listed}
        for s in all_for_pool:
            if s.name in names:
                continue
            (counter_slices if features.partitionable_devices and s.shared_counters else not_targeting).append(s)
    pool = Pool(driver, name, device_slices)
    seen: set[str] = set()
    for s in device_slices:
        for d in s.devices:
            if d.name in seen:
                pool.is_invalid, pool.invalid_reason = True, f"duplicate device name {d.name}"
                pool.slices = []
                return pool
            seen.add(d.name)
    if not features.partitionable_devices:
        return pool
    reason = ""
    counter_sets: dict[str, dict[str, Quantity]] = {}
    for s in counter_slices:
        for counter_set in s.shared_counters:
            set_name = counter_set.get("name", "")
            if set_name in counter_sets:
                reason = reason or f"duplicate counter set name {set_name}"
            counter_sets[set_name] = {str(k): _counter_value(v) for k, v in (counter_set.get("counters") or {}).items()}
    if not reason:
        for group in (device_slices, not_targeting):
            for s in group:
                for d in s.devices:
                    for consumption in d.consumes_counters:
                        set_name = consumption.get("counterSet", "")
                        counters = counter_sets.get(set_name)
                        if counters is None:
                            reason = reason or f"counter set {set_name} not found"
                            continue
                        for counter in consumption.get("counters") or {}:
                            if counter not in counters:
                                reason = reason or f"counter {counter} not found in counter set {set_name}"
    if reason:
        pool.is_invalid, pool.invalid_reason, pool.slices = True, reason, []
        return pool
    pool.slices_not_targeting = not_targeting
    pool.counter_sets = counter_sets
    return pool


def _counter_value(value: Any) -> Quantity:
    """A ``Counter`` (``{"value": quantity}``) or its quantity."""
    if isinstance(value, Quantity):
        return value
    if isinstance(value, Mapping):
        value = value.get("value")
    return parse_quantity(value, "value")


def allocated_devices_of(claims: Iterable[ResourceClaim]) -> set[DeviceID]:
    """The devices in the allocation results of ``claims`` (``ListAllAllocatedDevices``; results
    with ``adminAccess`` do not block a device, as upstream's ``GatherAllocatedState``)."""
    out: set[DeviceID] = set()
    for claim in claims:
        allocation = claim.allocation
        if not allocation:
            continue
        for r in (allocation.get("devices") or {}).get("results") or ():
            if r.get("adminAccess"):
                continue
            out.add((r.get("driver", ""), r.get("pool", ""), r.get("device", "")))
    return out


def _check_capacity_requests(claim: Any, request: Any, features: Features) -> None:
    """Capacity requests with DRAConsumableCapacity off: upstream's error (allocator_incubating.go
    Allocate)."""
    if features.consumable_capacity:
        return
    if request.exactly is not None and request.exactly.capacity is not None:
        raise AllocatorError(f"claim {_claim_ref(claim)}, request {request.name}: has capacity requests, but the "
                             f"DRAConsumableCapacity feature is disabled")
    for sub in request.first_available:
        if sub.capacity is not None:
            raise AllocatorError(f"claim {_claim_ref(claim)}, subrequest {sub.name}: has capacity requests, but "
                                 f"the DRAConsumableCapacity feature is disabled")


class _Request:
    """``requestAccessor``: an ``exactly`` request or a ``firstAvailable`` subrequest."""

    __slots__ = ("name", "class_name", "mode", "count", "admin_access", "has_admin_access", "selectors",
                 "tolerations", "capacity", "capacity_requests", "derived_attributes")

    def __init__(self, name: str, body: Any, *, subrequest: bool):
        self.name = name
        self.class_name = body.device_class_name
        self.mode = body.allocation_mode
        self.count = body.count
        self.admin_access = False if subrequest else bool(body.admin_access)
        self.has_admin_access = False if subrequest else body.admin_access is not None
        self.selectors = body.selectors
        self.tolerations = body.tolerations
        self.capacity = body.capacity
        #: ``request.capacities()`` (name -> quantity; None: no capacity requests)
        self.capacity_requests = body.capacity_requests
        #: ``request.derivedAttributes()``: (name, expression) pairs (DRADerivedAttributes)
        self.derived_attributes = body.derived_attributes


class _RequestData:
    __slots__ = ("request", "parent", "device_class", "num_devices", "selected_sub_request", "all_devices",
                 "derived")

    def __init__(self, request: _Request, parent: Any):
        self.request = request
        self.parent = parent  # the parent DeviceRequest of a subrequest, else None
        #: ``requestData.derivedAttributes``: name -> expression (a later entry of a name wins, as
        #: the Go map's assignment); None without derived attributes
        self.derived: dict[str, str] | None = None
        self.device_class: DeviceClass | None = None
        self.num_devices = 0
        self.selected_sub_request = 0
        self.all_devices: list[tuple] = []

    def request_name(self) -> str:
        return f"{self.parent.name}/{self.request.name}" if self.parent is not None else self.request.name


#: attribute kind -> the element type of its set (``deviceAttributeListAsSet``: a scalar is a
#: one-element set of its type)
_SET_TYPE = {"int": "int", "ints": "int", "bool": "bool", "bools": "bool", "string": "string", "strings": "string",
             "version": "version", "versions": "version"}
_LIST_KINDS = frozenset({"ints", "bools", "strings", "versions"})


def attribute_as_set(attribute: Any) -> tuple[str, frozenset] | None:
    """``attributeAsSet`` (experimental ``allocator_experimental.go``): (element type, values) of a
    scalar or non-empty list attribute; None for an attribute without a value. Versions are
    compared as strings, as upstream's ``sets.Set[string]``."""
    kind = attribute.kind
    if kind in _LIST_KINDS:
        if not attribute.value:
            return None
        return _SET_TYPE[kind], frozenset(attribute.value)
    if kind in _SET_TYPE:
        return kind, frozenset((attribute.value,))
    return None


def _intersection(a: tuple[str, frozenset], b: tuple[str, frozenset]) -> tuple[str, frozenset] | None:
    """``deviceAttributeListAsSet.intersection``: None when the types differ or nothing is common.
    (Python's ``True == 1`` cannot mix types here: the element types are compared first.)"""
    if a[0] != b[0]:
        return None
    common = a[1] & b[1]
    return (a[0], common) if common else None


class _MatchAttribute:
    """``matchAttributeConstraint``: every device (of the listed requests) has the same value;
    with DRAListTypeAttributes (``list_types``) the values are sets whose running intersection
    must stay non-empty (``intersection_stack``: one entry per device added, popped on remove)."""

    __slots__ = ("request_names", "attribute_name", "attribute", "num_devices", "list_types", "intersection_stack",
                 "evaluate")

    def __init__(self, request_names: Sequence[str], attribute_name: str, list_types: bool = False,
                 evaluate: Callable[[str, str, Any, DeviceID], Any] | None = None):
        self.request_names = frozenset(request_names)
        self.attribute_name = attribute_name
        #: the allocation's derived attribute evaluation (name, expression, device, id) -> attribute
        self.evaluate = evaluate
        self.attribute: DeviceAttribute | None = None  # the first device's (set with num_devices)
        self.num_devices = 0
        self.list_types = list_types
        self.intersection_stack: list[tuple[str, frozenset]] = []

    def _applies(self, request: str, sub: str) -> bool:
        if not self.request_names:
            return True
        if not sub:
            return request in self.request_names
        return request in self.request_names or f"{request}/{sub}" in self.request_names

    def lookup(self, derived: dict[str, str] | None, device: Any, device_id: DeviceID) -> Any:
        """``lookupAttribute`` (experimental): the request's derived attribute of that name before
        the device's own (AllocatorError when evaluating it fails)."""
        if derived is not None and self.evaluate is not None:
            expression = derived.get(self.attribute_name)
            if expression is not None:
                return self.evaluate(self.attribute_name, expression, device, device_id)
        return _lookup_attribute(device, device_id, self.attribute_name)

    def add(self, request: str, sub: str, device: Any, device_id: DeviceID,
            derived: dict[str, str] | None = None) -> bool:
        if not self._applies(request, sub):
            return True
        # (no derived attributes on the request: the device's own, without the extra call)
        attribute = (_lookup_attribute(device, device_id, self.attribute_name) if derived is None
                     else self.lookup(derived, device, device_id))
        if attribute is None:
            return False
        if self.list_types:
            as_set = attribute_as_set(attribute)
            if as_set is None:
                return False
            if self.num_devices:
                as_set = _intersection(self.intersection_stack[self.num_devices - 1], as_set)
                if as_set is None:
                    return False
            self.intersection_stack.append(as_set)
            self.num_devices += 1
            return True
        if self.num_devices == 0:
            self.attribute, self.num_devices = attribute, 1
            return True
        if attribute.kind not in ("int", "bool", "string", "version"):
            return False
        first = self.attribute
        if first is None or first.kind != attribute.kind or first.value != attribute.value:
            return False
        self.num_devices += 1
        return True

    def remove(self, request: str, sub: str, device: Any, device_id: DeviceID) -> None:
        if not self._applies(request, sub):
            return
        self.num_devices -= 1
        if self.list_types:
            del self.intersection_stack[self.num_devices:]


class _DistinctAttribute(_MatchAttribute):
    """``distinctAttributeConstraint`` (v1.37.2 ``incubating/constraint.go``): no two devices (of
    the listed requests) share the value."""

    __slots__ = ("attributes",)

    def __init__(self, request_names: Sequence[str], attribute_name: str, list_types: bool = False,
                 evaluate: Callable[[str, str, Any, DeviceID], Any] | None = None):
        super().__init__(request_names, attribute_name, list_types, evaluate)
        self.attributes: list[Any] = []

    def add(self, request: str, sub: str, device: Any, device_id: DeviceID,
            derived: dict[str, str] | None = None) -> bool:
        if not self._applies(request, sub):
            return True
        # (no derived attributes on the request: the device's own, without the extra call)
        attribute = (_lookup_attribute(device, device_id, self.attribute_name) if derived is None
                     else self.lookup(derived, device, device_id))
        if attribute is None:
            return False
        if self.list_types:
            # experimental constraint.go matchesAttribute: pairwise disjoint sets
            as_set = attribute_as_set(attribute)
            if as_set is None:
                return False
            for existing in self.attributes:
                other = attribute_as_set(existing)
                if other is not None and _intersection(as_set, other) is not None:
                    return False
            self.attributes.append(attribute)
            return True
        if attribute.kind not in ("int", "bool", "string", "version"):
            if self.attributes:
                return False  # "Distinct attribute type unknown"
        elif any(a.kind == attribute.kind and a.value == attribute.value for a in self.attributes):
            return False
        self.attributes.append(attribute)
        return True

    def remove(self, request: str, sub: str, device: Any, device_id: DeviceID) -> None:
        if not self._applies(request, sub):
            return
        self.attributes.pop()


def _lookup_attribute(device: Any, device_id: DeviceID, name: str) -> Any:
    attr = device.attributes.get(name)
    if attr is not None:
        return attr
    index = name.find("/")
    if index < 0 or name[:index] != device_id[0]:
        return None
    return device.attributes.get(name[index + 1:])


def _groups_admit(state: tuple[bool, frozenset] | None, groups: frozenset) -> bool:
    """``compatibilityGroupIntersection.admits``; ``state`` None: no device on the counter set yet,
    else (every device so far declared no groups, the running intersection of the groups)."""
    if state is None:
        return True
    if not groups:
        return state[0]  # a device without groups only goes with others without groups
    if state[0]:
        return False
    return bool(state[1] & groups)


def _groups_add(state: tuple[bool, frozenset] | None, groups: frozenset) -> tuple[bool, frozenset]:
    """``compatibilityGroupIntersection.add`` (a new state; the old one stays a valid snapshot)."""
    if state is None:
        return (True, frozenset()) if not groups else (False, groups)
    if state[0] or not groups:
        return state
    return False, state[1] & groups


def _claim_ref(claim: ResourceClaim) -> str:
    """``klog.KObj(claim)``."""
    return f"{claim.namespace}/{claim.name}" if claim.namespace else claim.name


#: ``cel.EnhanceRuntimeError``'s hint (v0.37.2 ``dynamic-resource-allocation/cel/errors.go``)
_NO_SUCH_KEY_HINT = (". consider using CEL optional chaining (.? followed by orValue()) or guarding the check with "
                     "has() for optional fields")


def enhance_runtime_error(message: str) -> str:
    """``cel.EnhanceRuntimeError``: a "no such key:" error gets the optional-chaining hint."""
    if "no such key:" in message and not message.endswith(_NO_SUCH_KEY_HINT):
        return message + _NO_SUCH_KEY_HINT
    return message


def tolerates_taint(toleration: Mapping[str, Any], taint: Mapping[str, Any]) -> bool:
    """``resourceclaim.ToleratesTaint``."""
    effect = toleration.get("effect") or ""
    if effect and effect != taint.get("effect"):
        return False
    key = toleration.get("key") or ""
    if key and key != taint.get("key"):
        return False
    operator = toleration.get("operator") or ""
    if operator in ("", "Equal"):
        return (toleration.get("value") or "") == (taint.get("value") or "")
    return operator == "Exists"


def taint_prevents_allocation(device: Any, tolerations: Sequence[Mapping[str, Any]]) -> bool:
    """``taintPreventsAllocation``: a NoSchedule or NoExecute taint no toleration of the request
    tolerates (other effects, None included, are ignored)."""
    for taint in device.taints:
        if taint.get("effect") in ("NoSchedule", "NoExecute"):
            if not any(tolerates_taint(t, taint) for t in tolerations or ()):
                return True
    return False


class Allocator:
    """``structured.NewAllocator``: reusable for many nodes within one scheduling cycle.

    ``allocated_devices``: the devices already allocated in the cluster (plus in-flight
    allocations); ``get_class(name)`` returns the DeviceClass or None; ``slices`` every
    ResourceSlice, or a callable ``slices(node)`` returning (at least) the slices that can target
    the node, in the order added; ``all_slices`` (a callable returning every slice) is what an
    incomplete-looking pool is checked against (``checkSlicesInPool``; default: ``slices`` when a
    list, else the node's slices); ``selector_cache`` the cross-cycle CEL result cache (a fresh one
    when None); ``deadline`` a ``time.monotonic()`` value after which the search stops
    (filterTimeout); ``allocated_state`` the shares of devices allowing multiple allocations and
    the capacity they consume (consumable capacity; None: none).
    """

    def __init__(self, features: Features, allocated_devices: Container[DeviceID], get_class: Callable[[str], DeviceClass | None],
                 slices: Sequence[ResourceSlice] | Callable[[Any], Sequence[ResourceSlice]],
                 selector_cache: SelectorCache | None = None,
                 all_slices: Callable[[], Sequence[ResourceSlice]] | None = None,
                 allocated_state: AllocatedState | None = None):
        self.features = features
        self.allocated_devices = allocated_devices
        self.allocated_state = allocated_state if allocated_state is not None else AllocatedState()
        self.get_class = get_class
        if callable(slices):
            self.slices_for_node = slices
        else:
            listed = list(slices)
            self.slices_for_node = lambda node: listed
            if all_slices is None:
                all_slices = lambda: listed  # noqa: E731
        self.all_slices = all_slices
        self.selector_cache = selector_cache if selector_cache is not None else SelectorCache()
        #: allocateOne invocations (``Stats.NumAllocateOneInvocations``)
        self.num_allocate_one_invocations = 0
        #: pool id -> counter set -> counter -> available (``availableCounters``: the counter sets
        #: minus what allocated devices consume; computed once per pool and allocator)
        self.available_counters: dict[tuple[str, str], dict[str, dict[str, Fraction]]] = {}
        #: pool id -> counter set -> the groups' state of its allocated devices
        #: (``compatibilityGroupsBaseline``, DRADeviceCompatibilityGroups; once per pool)
        self.compatibility_baseline: dict[tuple[str, str], dict[str, tuple[bool, frozenset] | None]] = {}
        #: the cross-cycle slice signatures (:class:`NodeShapes`) that let nodes of one shape share
        #: an answer; None: every node is searched
        self.shapes: NodeShapes | None = None
        #: node -> its shape key or None (the owner's kept :meth:`NodeShapes.node_key`), used when
        #: ``shapes`` is set; when None, ``shapes.key`` over this allocator's slices and devices
        self.shape_key: Callable[[Any], tuple[tuple, tuple[tuple[str, str], ...]] | None] | None = None
        #: shape -> (the claims, the answer, the node searched, its pools): this allocator's searches
        self._by_shape: dict[tuple, tuple] = {}
        #: what the answers of :attr:`shapes` kept across cycles depend on besides the shape and the
        #: claims' requests (the owner's DeviceClass version; the features are added here); None:
        #: no answer is kept across cycles (:meth:`NodeShapes.answers`)
        self.memo_salt: Any = None

    def node_shape(self, node: Any) -> tuple[tuple, tuple[tuple[str, str], ...]] | None:
        """``(shape, pools)`` of ``node`` (:class:`NodeShapes`), or None: no shape, or no shapes
        used by this allocator."""
        shapes = self.shapes
        if shapes is None:
            return None
        shape_key = self.shape_key
        if shape_key is not None:
            return shape_key(node)
        return shapes.key(node, self.slices_for_node(node), self.allocated_devices)

    def allocate(self, node: Any, claims: Sequence[ResourceClaim], deadline: float | None = None) -> list[dict] | None:
        """``Allocate``: one allocation result per claim, None when there is no solution.

        Nodes of one *shape* get one search per allocator (one scheduling cycle): see
        :class:`NodeShapes` for what a shape is and why the answers are the same."""
        if not claims:
            # Nothing to search (Filter passes no claims when every claim of the pod reuses a pending
            # allocation: the members of a PodGroup sharing its claim). Upstream still gathers the
            # node's pools first, but GatherPools' only errors are a node selector that does not
            # compile and a slice that does not convert, which the API server's validation rules
            # out (gather_pools never raises), and allocateOne with no claims is done at once after
            # its context check. So: the deadline check and no results, without the per-node
            # walk over every slice (dra/workloadresourceclaims: ~90% of the run).
            self.num_allocate_one_invocations += 1
            if deadline is not None and time.monotonic() > deadline:
                raise AllocationTimeout("filter operation aborted: context deadline exceeded")
            return []
        key = self.node_shape(node)
        if key is None:
            return _Allocation(self, node, claims, deadline).run()
        shape, pools = key
        by_shape = self._by_shape
        known = by_shape.get(shape)
        if known is not None and len(known[0]) == len(claims) and all(a is b for a, b in zip(known[0], claims)):
            _claims, answer, first_node, first_pools = known
            if answer is None or node.name == first_node:
                return answer
            return SameShapeAnswer(answer, first_node, first_pools, node.name, pools)
        shapes = self.shapes
        memo_key = None
        if self.memo_salt is not None and shapes is not None:
            memo_key = _memo_key(shape, claims, shapes.salt_token(self.memo_salt, self.features), shapes,
                                 self.get_class)
            if memo_key is not None:
                try:
                    kept = shapes.answers.get(memo_key)
                except TypeError:  # unhashable (tolerations, capacity requests as mappings): not kept
                    kept = memo_key = None
                if kept is not None:
                    # another cycle's search on a node of this shape, for claims asking the same:
                    # the same answer (NodeShapes.answers), this node's own through relocated
                    answer, first_node, first_pools = kept
                    by_shape[shape] = (tuple(claims), answer, first_node, first_pools)
                    if answer is None:
                        return None
                    return SameShapeAnswer(answer, first_node, first_pools, node.name, pools)
        answer = _Allocation(self, node, claims, deadline).run()
        if answer is None or all(node_local(a, node.name) for a in answer):
            # (the claims are kept so their ids cannot be reused by other objects)
            by_shape[shape] = (tuple(claims), answer, node.name, pools)
            if memo_key is not None and shapes is not None:
                shapes.keep_answer(memo_key, (answer, node.name, pools))
        return answer


def _memo_key(shape: tuple, claims: Sequence[ResourceClaim], salt: Any, shapes: "NodeShapes | None" = None,
              get_class: Callable[[str], Any] | None = None) -> tuple | None:
    """The key of an answer kept across cycles: the node's shape (its slices up to names and which
    of its devices are held), what each claim asks (requests and constraints; the allocator reads
    a claim's name and uid only for messages, never kept, and for share ids, which shapes rule out)
    and ``salt``; None when a claim carries what the key does not say (config, an allocation) or
    is unhashable (tolerations, capacity requests as mappings). With ``shapes`` and ``get_class``
    the requests are keyed without their classes' names (:meth:`NodeShapes.class_blind`)."""
    parts = []
    for claim in claims:
        if claim.config or claim.allocation is not None:
            return None
        requests: Any = claim.requests
        if shapes is not None and get_class is not None:
            requests = shapes.class_blind(requests, get_class, salt)
        parts.append((requests, claim.constraints))
    # (hashable or not: the caller's lookup says, without hashing the nested shape twice)
    return (shape, tuple(parts), salt)


def _class_blind(requests: tuple, get_class: Callable[[str], Any]) -> Any:
    """:meth:`NodeShapes.class_blind`'s form of ``requests``: ``("class-blind", the requests with
    every class name "", the named classes' selectors in (sub)request order)``, or ``requests``
    when a class is missing or has config (or a request is neither ``exactly`` nor
    ``firstAvailable``)."""
    blinded = []
    selectors = []
    for request in requests:
        bodies = (request.exactly,) if request.exactly is not None else request.first_available
        if not bodies:
            return requests
        new_bodies = []
        for body in bodies:
            device_class = get_class(body.device_class_name) if body.device_class_name else None
            if device_class is None or device_class.config:
                return requests
            selectors.append(tuple(device_class.selectors))
            new_bodies.append(dataclasses.replace(body, device_class_name=""))
        if request.exactly is not None:
            blinded.append(dataclasses.replace(request, exactly=new_bodies[0]))
        else:
            blinded.append(dataclasses.replace(request, first_available=tuple(new_bodies)))
    return ("class-blind", tuple(blinded), tuple(selectors))


_MISSING = object()


class _Interned:
    """A value interned in a table (``value``): hashed and compared by identity, as equal values
    of one table are one object. Part of the kept answers' keys (``NodeShapes.class_blind``,
    ``NodeShapes.salt_token``)."""

    __slots__ = ("value",)

    def __init__(self, value: Any):
        self.value = value

    def __repr__(self) -> str:
        return f"_Interned({self.value!r})"


class NodeShapes:
    """Content signatures of node-local ResourceSlices, for the allocator's node-shape cache.

    Why: a Filter runs the allocator on every node it looks at (scheduler_perf's
    SchedulingWithResourceClaimTemplate/match_empty_500nodes looks at ~350 of 500 nodes per pod, each
    ~100 µs of Python), while such clusters are made of a few node *shapes*. Two nodes have the same
    shape when every slice that can target either is bound to it by ``nodeName`` (no node
    selectors, no slices for all nodes, no per-device node selection, no shared counters,
    consumed counters or skipNodeOperations) and their slices, sorted as the allocator sorts them
    (driver, pool, slice name), agree in everything but the node's name, the pool's name and the slice's name --
    driver, generation, slice count and every device field (``repr`` of the devices) -- and the
    same devices of them are allocated or in flight. The allocator reads nothing else of a node
    then (CEL sees a device's driver, attributes and capacity; a node-local device makes the
    allocation's node selector ``metadata.name In [node]``), so the search visits the same devices
    in the same order and finds the same devices, up to the pool and node names, which
    :func:`relocated` puts back. Errors are never shared: a node whose search raises raises on its
    own.

    The signatures are kept across cycles by slice object (a changed slice is a new object); the
    owner calls :meth:`clear` when slices change, so dropped slices are not kept alive.

    :meth:`node_key` also keeps each node's key across cycles (computing one reads every device's
    held state, ~3 µs for 10 devices, for each node each cycle otherwise): an owner using it calls
    :meth:`device_changed` for every device that becomes held or free, and :meth:`clear` when
    slices (or what they are read with: DeviceTaintRules) change."""

    #: beyond this many slices for one node the key costs more than it saves
    MAX_SLICES = 16
    #: distinct kept shape tuples interned before starting over (sharing lost, never wrong)
    MAX_INTERNED = 4096
    #: answers kept across cycles before starting over
    MAX_ANSWERS = 4096

    def __init__(self) -> None:
        #: id(slice) -> (slice, shape number or -1 when the slice cannot be part of a shape, the
        #: ids of its devices)
        self._slices: dict[int, tuple[ResourceSlice, int, tuple[DeviceID, ...]]] = {}
        self._numbers: dict[tuple, int] = {}
        #: node name -> its key (None: no shape), for :meth:`node_key`
        self._node_keys: dict[str, tuple[tuple, tuple[tuple[str, str], ...]] | None] = {}
        #: device id -> node name -> where the node's kept key says whether it is held (the index
        #: of its slice's part and of the device in that part's held bits; None: listed more than
        #: once, so the key is dropped instead of updated)
        self._key_nodes: dict[DeviceID, dict[str, tuple[int, int] | None]] = {}
        #: shape tuple -> (itself, its number), for :meth:`node_key` (equal kept shapes are one
        #: object and one number; numbers are never reused, so one number is one shape)
        self._interned: dict[tuple, tuple[tuple, int]] = {}
        self._next_number = 0
        #: the kept keys as columns over the rows of one node table (:meth:`columns`): the node
        #: table, its ``node_version`` when built, each row's shape number (-1: no kept key, -2:
        #: a kept None key) and pools (set with the row's number; an array is replaced, never
        #: changed for a row it set, until :meth:`clear`, so a batch can keep the one it read)
        self._table: Any = None
        self._table_version = -1
        self._row_numbers: Any = None
        self._row_pools: Any = None
        #: (shape, the claims' requests, salt) -> (answer, node searched, its pools): searches kept
        #: across cycles (``Allocator.allocate``). A shape says which of the node's devices are
        #: held, so an allocation or a freed device moves the node to another key instead of
        #: making a kept answer wrong; slice changes clear them with the shape numbers they use.
        self.answers: dict[tuple, tuple] = {}
        #: id(requests) -> (requests, salt, their class-blind form): :meth:`class_blind`
        self._class_blind: dict[int, tuple[Any, Any, Any]] = {}
        #: the class-blind forms, interned (form -> its :class:`_Interned`)
        self._blind_forms: dict[Any, _Interned] = {}
        #: (salt, features) -> its :class:`_Interned` (:meth:`salt_token`), and the last pair asked
        self._salts: dict[tuple, _Interned] = {}
        self._last_salt: tuple[Any, Any, _Interned] | None = None

    def clear(self) -> None:
        self._slices.clear()
        self._numbers.clear()
        self._node_keys.clear()
        self._key_nodes.clear()
        self._interned.clear()
        self.answers.clear()
        self._class_blind.clear()
        self._blind_forms.clear()
        self._salts.clear()
        self._last_salt = None
        self._table = self._row_numbers = self._row_pools = None

    def _intern(self, shape: tuple) -> tuple[tuple, int]:
        """``(the kept shape object equal to shape, its number)``."""
        interned = self._interned
        entry = interned.get(shape)
        if entry is None:
            if len(interned) >= self.MAX_INTERNED:
                interned.clear()  # (sharing lost, never wrong: numbers go on counting)
            entry = interned[shape] = (shape, self._next_number)
            self._next_number += 1
        return entry

    def _set_row(self, name: str, key: tuple | None, number: int = -2) -> None:
        """The columns' entries of node ``name`` after its kept key changed (``number``: the
        key's shape number; -1 when it is no longer kept)."""
        table = self._table
        if table is None:
            return
        if self._table_version != table.node_version:
            self._table = self._row_numbers = self._row_pools = None  # (rebuilt when asked for)
            return
        row = table.row_of.get(name)
        if row is None or row >= len(self._row_numbers):
            return
        self._row_numbers[row] = number
        if key is not None:
            self._row_pools[row] = key[1]

    def columns(self, table: Any) -> tuple[np.ndarray, np.ndarray]:
        """``(numbers, pools)`` over the rows of node table ``table``: each row's kept shape
        number (-1: its key is not kept, ask :meth:`node_key`; -2: its key is None) and its pools
        (the key's second part), kept as keys are computed, updated and dropped. Equal numbers
        are equal shapes. Built again when the table's nodes changed (``node_version``)."""
        numbers = self._row_numbers
        if (numbers is not None and self._table is table and self._table_version == table.node_version
                and len(numbers) == len(table.live)):
            return numbers, self._row_pools
        size = len(table.live)
        numbers = np.full(size, -1, dtype=np.int64)
        pools = np.empty(size, dtype=object)
        row_of = table.row_of
        for name, key in self._node_keys.items():
            row = row_of.get(name)
            if row is None or row >= size:
                continue
            if key is None:
                numbers[row] = -2
            else:
                numbers[row] = self._intern(key[0])[1]
                pools[row] = key[1]
        self._table, self._table_version = table, table.node_version
        self._row_numbers, self._row_pools = numbers, pools
        return numbers, pools

    def class_blind(self, requests: tuple, get_class: Callable[[str], Any], salt: Any) -> Any:
        """``requests`` as the kept answers' key says them: each (sub)request's class name put
        aside for the class's selectors, when every class they name exists and has no config;
        else ``requests`` itself. Kept per requests object (and ``salt``, which names the classes'
        version).

        Why the answers are the same: of a DeviceClass the allocator reads its selectors (which
        devices it may pick, the same CEL on the same devices giving the same verdicts), its
        config (copied into the allocation, "FromClass": hence none here) and its name, only in
        error messages (a search that raises keeps no answer) and to group the class's config
        entries (none). So requests that differ only by the names of classes with equal
        selectors and no config get the same devices on nodes of one shape. scheduler_perf's DRA
        extended-resource cases make 25-50 such classes, one per extended resource, all selecting
        every device of one driver: keyed by class name, the answers kept across cycles served
        ~2 in 5 of Reserve's searches, one shape's answer asked for by each class in turn (issue 27).
        Equal forms are one object (interned: an :class:`_Interned` holding the form), so the kept
        answers' lookups hash and compare them by identity (hashing the form's frozen dataclasses
        was ~1.7 us a Reserve: issues 27, 29)."""
        memo = self._class_blind
        kept = memo.get(id(requests))
        if kept is not None and kept[0] is requests and kept[1] == salt:
            return kept[2]
        blind = _class_blind(requests, get_class)
        if blind is not requests:
            forms = self._blind_forms
            if len(forms) >= self.MAX_ANSWERS:
                forms.clear()
            try:
                form = forms.get(blind)
                if form is None:
                    form = forms[blind] = _Interned(blind)
                blind = form
            except TypeError:
                pass  # (unhashable: so is the key, which is then not kept)
        if len(memo) >= self.MAX_ANSWERS:
            memo.clear()  # (sharing lost, never wrong)
        memo[id(requests)] = (requests, salt, blind)  # (requests kept: its id is not reused)
        return blind

    def salt_token(self, salt: Any, features: Any) -> _Interned:
        """``(salt, features)`` of the kept answers' keys as one interned object: equal pairs give
        the same object (until the table starts over: then another, which only misses), so a
        key's lookup hashes and compares it by identity. The last pair is compared first
        (``features`` by identity: the plugin's one object), which every allocator of a run
        repeats. Why: hashing the Features dataclass and the salt was ~1.1 us a Reserve (issues
        27, 29)."""
        last = self._last_salt
        if last is not None and last[1] is features and last[0] == salt:
            return last[2]
        key = (salt, features)
        tokens = self._salts
        token = tokens.get(key)
        if token is None:
            if len(tokens) >= self.MAX_ANSWERS:
                tokens.clear()
            token = tokens[key] = _Interned(key)
        self._last_salt = (salt, features, token)
        return token

    def keep_answer(self, key: tuple, kept: tuple) -> None:
        answers = self.answers
        if len(answers) >= self.MAX_ANSWERS:
            answers.clear()  # (sharing lost, never wrong)
        answers[key] = kept

    def device_changed(self, device: DeviceID, held: bool | None = None) -> None:
        """``device`` became held or free (``held``: whether the ``allocated()`` view the keys
        were computed with now holds it). The kept keys of the nodes it is on get that held bit
        (the rest of a key depends on the slices alone, which :meth:`clear` covers); with
        ``held`` None they are dropped and computed again when asked for.

        Why: Reserve holds a device of the node it picked, whose key the next cycle's Filter reads
        again; computing it again (the node's slices, every device's held state and the device
        index) was ~4% of a DRA extended-resource run, one per pod."""
        if held is None:
            names = self._key_nodes.pop(device, None)
            if names:
                node_keys = self._node_keys
                for name in names:
                    node_keys.pop(name, None)
                    self._set_row(name, None, -1)
            return
        self.devices_changed(((device, held),))

    def devices_changed(self, changes: Sequence[tuple[DeviceID, bool]]) -> None:
        """:meth:`device_changed` for each ``(device, held)`` in order, with a node's bits of all
        of them set in its kept key at once: one new shape interned per node instead of one per
        device (a claim's allocation holds or frees several devices of one node; the shapes in
        between, which no Filter reads, are not interned). The kept keys and columns end as the
        calls one by one leave them; only the numbers of shapes never kept are not taken."""
        key_nodes, node_keys = self._key_nodes, self._node_keys
        flips: dict[str, list] = {}
        for device, held in changes:
            names = key_nodes.get(device)
            if not names:
                continue
            dropped = None  # (made only when a node goes: a list per device cost more than the rest)
            for name, at in names.items():
                if node_keys.get(name) is None:  # (dropped: computed again, with its devices, when asked for)
                    pass
                elif at is None:
                    node_keys.pop(name, None)
                    self._set_row(name, None, -1)
                else:
                    node_flips = flips.get(name)
                    if node_flips is None:
                        flips[name] = [(at, held)]
                    else:
                        node_flips.append((at, held))
                    continue
                if dropped is None:
                    dropped = [name]
                else:
                    dropped.append(name)
            if dropped is not None:
                for name in dropped:
                    del names[name]
                if not names:
                    del key_nodes[device]
        for name, node_flips in flips.items():
            key = node_keys.get(name)
            if key is None:  # (dropped by a later device of the batch)
                continue
            parts = key[0]
            new_parts: list | None = None
            # a part's bits flipped in a list, made a tuple again once (a claim's devices are
            # mostly bits of one part: one new tuple instead of three per device)
            for (i, j), held in node_flips:
                part = (parts if new_parts is None else new_parts)[i]
                bits = part[2]
                if bits[j] == held:
                    continue
                if new_parts is None:
                    new_parts = list(parts)
                if type(bits) is tuple:
                    bits = list(bits)
                    new_parts[i] = (part[0], part[1], bits)
                bits[j] = held
            if new_parts is None:
                continue
            new_parts = [part if type(part[2]) is tuple else (part[0], part[1], tuple(part[2])) for part in new_parts]
            shape, shape_number = self._intern(tuple(new_parts))
            node_keys[name] = new_key = (shape, key[1])
            if self._table is not None:
                self._set_row(name, new_key, shape_number)

    def node_key(self, node: Any, slices_for_node: Callable[[Any], Sequence[ResourceSlice]],
                 allocated: Callable[[], Container[DeviceID]]
                 ) -> tuple[tuple, tuple[tuple[str, str], ...]] | None:
        """:meth:`key` of ``node``, kept by node name until :meth:`clear` or
        :meth:`device_changed` for one of its devices. The caller passes the same live views every
        time (``slices_for_node`` and ``allocated()``, the held devices): the kept key is only
        right for them. A None key depends on the slices alone (no held state): kept too."""
        name = getattr(node, "name", None)
        node_keys = self._node_keys
        if name in node_keys:
            return node_keys[name]
        slices = slices_for_node(node)
        order: list = []
        key = self.key(node, slices, allocated(), order)
        shape_number = -2
        if key is not None:
            # kept keys of equal shapes share one shape tuple and number, so a batch can group
            # nodes by its identity or number (no hash of the nested tuple per node per cycle)
            shape, shape_number = self._intern(key[0])
            key = (shape, key[1])
        if name:
            node_keys[name] = key
            if self._table is not None:
                self._set_row(name, key, shape_number)
            if key is not None:
                # where each device's held bit is in the key (``order``: the slices' entries in
                # the key's order), for device_changed
                key_nodes = self._key_nodes
                seen: set[DeviceID] = set()
                for i, entry in enumerate(order):
                    for j, device in enumerate(entry[2]):
                        at: tuple[int, int] | None = (i, j)
                        if device in seen:
                            at = None  # (a device listed twice: its bits are not one place)
                        seen.add(device)
                        names = key_nodes.get(device)
                        if names is None:
                            key_nodes[device] = {name: at}
                        else:
                            names[name] = at
        return key

    def node_keys(self, nodes: Sequence[Any], slices_for_node: Callable[[Any], Sequence[ResourceSlice]],
                  allocated: Callable[[], Container[DeviceID]]
                  ) -> list[tuple[tuple, tuple[tuple[str, str], ...]] | None]:
        """:meth:`node_key` of each of ``nodes``, the kept ones read in one pass (a batch Filter
        asks for hundreds of nodes per cycle)."""
        node_keys = self._node_keys
        missing = _MISSING
        out: list[Any] = [node_keys.get(node.name, missing) for node in nodes]
        for i, key in enumerate(out):
            if key is missing:
                out[i] = self.node_key(nodes[i], slices_for_node, allocated)
        return out

    def node_keys_by_name(self, names: Sequence[str], node_at: Callable[[int], Any],
                          slices_for_node: Callable[[Any], Sequence[ResourceSlice]],
                          allocated: Callable[[], Container[DeviceID]]
                          ) -> list[tuple[tuple, tuple[tuple[str, str], ...]] | None]:
        """:meth:`node_keys` of the nodes named ``names``: ``node_at(i)`` gives the node of
        ``names[i]``, built only when its key is not kept (a score pass reads hundreds of rows of
        the node table per cycle, whose names are at hand and whose Node objects are not)."""
        missing = _MISSING
        out: list[Any] = list(map(self._node_keys.get, names, repeat(missing)))  # (in C)
        if missing in out:
            for i, key in enumerate(out):
                if key is missing:
                    out[i] = self.node_key(node_at(i), slices_for_node, allocated)
        return out

    def _entry(self, s: ResourceSlice) -> tuple[ResourceSlice, int, tuple[DeviceID, ...]]:
        """``(slice, shape number or -1, its device ids)``, computed once per slice object."""
        known = self._slices.get(id(s))
        if known is not None and known[0] is s:
            return known
        number = -1
        # (skipNodeOperations: the answer then depends on the node's declared features)
        if (s.node_name and not s.all_nodes and s.node_selector is None and not s.per_device_node_selection
                and not s.shared_counters and not s.skip_node_operations
                and not any(d.consumes_counters or d.node_name or d.all_nodes or d.node_selector is not None
                            or d.node_selector_spec is not None or d.allow_multiple_allocations
                            for d in s.devices)):
            signature = (s.driver, s.pool_generation, s.resource_slice_count, repr(s.devices))
            number = self._numbers.setdefault(signature, len(self._numbers))
        entry = (s, number, tuple((s.driver, s.pool_name, d.name) for d in s.devices))
        self._slices[id(s)] = entry
        return entry

    def key(self, node: Any, slices: Sequence[ResourceSlice], allocated: Container[DeviceID],
            order: list | None = None) -> tuple[tuple, tuple[tuple[str, str], ...]] | None:
        """``(shape, pools)``: the node's shape and its pools (driver, pool name) in the allocator's
        order, or None
        when the node's slices do not allow one. ``order`` (when given) receives the slices'
        entries in the key's order (where :meth:`device_changed` finds a device's held bit)."""
        name = getattr(node, "name", None)
        if not name or not slices or len(slices) > self.MAX_SLICES:
            return None
        own = []
        for s in slices:
            if s.node_name != name:
                return None
            entry = self._entry(s)
            if entry[1] < 0:
                return None
            own.append(entry)
        if len(own) > 1:
            own.sort(key=lambda e: (e[0].driver, e[0].pool_name, e[0].name))
        pools: list[tuple[str, str]] = []
        parts: list[tuple] = []
        listed = own_count = generation = 0
        contains = allocated.__contains__
        for s, number, ids in own:
            pool = (s.driver, s.pool_name)
            if not pools or pools[-1] != pool:
                if pools and listed != own_count:
                    return None
                pools.append(pool)
                listed, own_count, generation = 0, s.resource_slice_count, s.pool_generation
            elif s.pool_generation != generation:
                return None  # gather_pools drops the older generation
            listed += 1
            parts.append((number, len(pools) - 1, tuple(map(contains, ids))))
        if listed != own_count:
            return None  # a pool with slices elsewhere: gather_pools looks at the whole cluster
        if order is not None:
            order.extend(own)
        return tuple(parts), tuple(pools)


def node_local(allocation: Mapping[str, Any], node_name: str) -> bool:
    """Whether an allocation's node selector is none or ``metadata.name In [node_name]`` only."""
    selector = allocation.get("nodeSelector")
    return selector is None or selector == {"nodeSelectorTerms": [{"matchFields": [
        {"key": "metadata.name", "operator": "In", "values": [node_name]}]}]}


class SameShapeAnswer(list):
    """The allocation found for another node of the same shape, as read by Score (request names
    only): the same dicts, naming the other node's pools. :func:`relocated` gives this node's own
    (done for the one node Reserve picks, not for every node Filter passes)."""

    __slots__ = ("first_node", "first_pools", "node_name", "pools")

    def __init__(self, answer: list[dict], first_node: str, first_pools: tuple[tuple[str, str], ...],
                 node_name: str, pools: tuple[tuple[str, str], ...]):
        super().__init__(answer)
        self.first_node, self.first_pools, self.node_name, self.pools = first_node, first_pools, node_name, pools


class GroupAnswer(list):
    """The allocation found for the first node of a group of same-shape nodes in a batch Filter,
    given as is to every other node of the group (Score reads the request names only). A node's
    own answer, its :class:`SameShapeAnswer`, needs the node's pools: :meth:`at`, made for the
    one node Reserve picks instead of for each of the hundreds of nodes Filter passes (one object
    per node was ~10% of a DRA extended-resource cycle)."""

    __slots__ = ("first_node", "first_pools")

    def __init__(self, answer: list[dict], first_node: str, first_pools: tuple[tuple[str, str], ...]):
        super().__init__(answer)
        self.first_node, self.first_pools = first_node, first_pools

    def at(self, node_name: str, pools: tuple[tuple[str, str], ...]) -> list[dict]:
        """``node_name``'s relocated answer (``pools``: its pools in the allocator's order)."""
        if node_name == self.first_node:
            return list(self)
        return relocated(SameShapeAnswer(self, self.first_node, self.first_pools, node_name, pools)) or []


def relocated(answer: list[dict] | None) -> list[dict] | None:
    """``answer`` with each result's pool the pool at the same place on its node and the node
    selector naming its node, when it is a :class:`SameShapeAnswer`; else ``answer`` itself."""
    if not isinstance(answer, SameShapeAnswer):
        if isinstance(answer, GroupAnswer):  # names no node: GroupAnswer.at
            raise TypeError("relocated: a GroupAnswer needs the node's pools (GroupAnswer.at)")
        return answer
    rename = dict(zip(answer.first_pools, answer.pools))
    out = []
    for allocation in answer:
        devices = allocation["devices"]
        copy: dict[str, Any] = {**allocation,
                                "devices": {**devices, "results": [{**r, "pool": rename[r["driver"], r["pool"]][1]}
                                                                   for r in devices["results"]]}}
        if "nodeSelector" in allocation:
            copy["nodeSelector"] = {"nodeSelectorTerms": [{"matchFields": [
                {"key": "metadata.name", "operator": "In", "values": [answer.node_name]}]}]}
        out.append(copy)
    return out


def derived_output_type_error(expression: str) -> str:
    """``GetOrCompileDerivedAttribute``'s output type check (stored expressions: a list of scalars
    allowed whatever DRAListTypeAttributes); "" when allowed or not modelled by the checker."""
    from ..api.celcost import output_type_error  # lazy, as the API's validation

    return output_type_error(expression, True, derived_attribute=True, stored=True) or ""


class _Allocation:
    """``allocator``: the state of one ``Allocate`` call (v1.37.2 ``allocator_incubating.go``)."""

    def __init__(self, owner: Allocator, node: Any, claims: Sequence[ResourceClaim], deadline: float | None):
        self.a = owner
        self.node = node
        #: upstream's experimental variant runs (skipNodeOperations exist only there)
        self.experimental = owner.features.variant == "experimental"
        self.claims = list(claims)
        self.deadline = deadline
        self.pools: list[Pool] = []
        self.request_data: dict[tuple[int, int, int], _RequestData] = {}
        self.constraints: list[list[_MatchAttribute]] = [[] for _ in self.claims]
        self.matches: dict[tuple, bool] = {}
        self.allocating: dict[DeviceID, set[int]] = {}
        #: pool id -> counter set -> counter -> consumed by the devices being allocated
        self.consumed_counters: dict[tuple[str, str], dict[str, dict[str, Fraction]]] = {}
        #: pool id -> counter set -> the groups' running state in this search
        #: (``consumedCompatibilityGroups``, DRADeviceCompatibilityGroups)
        self.consumed_groups: dict[tuple[str, str], dict[str, tuple[bool, frozenset] | None]] = {}
        #: device -> capacity being consumed by the shares allocated in this search
        #: (``allocatingCapacity``; an entry also marks a device as shared in this search)
        self.allocating_capacity = ConsumedCapacityCollection()
        # per claim: list of (request name, parent name, device id, device, slice, admin access,
        # tolerations, consumed capacity or None, shared)
        self.result: list[list[tuple]] = [[] for _ in self.claims]
        #: (device, expression) -> the derived attribute's value (``derivedAttributesCache``: one
        #: evaluation per device and expression, whichever name or request uses it)
        self.derived_cache: dict[tuple[DeviceID, str], DeviceAttribute] = {}

    def _derived_attribute(self, name: str, expression: str, device: Any, device_id: DeviceID) -> DeviceAttribute:
        """``lookupAttribute``'s derived branch: ``expression`` compiled as a derived attribute
        (stored expressions: lists allowed whatever DRAListTypeAttributes) and evaluated on the
        device; its errors end the allocation."""
        key = (device_id, expression)
        hit = self.derived_cache.get(key)
        if hit is not None:
            return hit
        compiled = compile_expression(expression, self.a.features.list_type_attributes)
        problem = compiled.error or derived_output_type_error(expression)
        if problem:
            raise AllocatorError(f"compile derived attribute {name} failed: {problem}")
        try:
            kind, value = derived_attribute(compiled, device_input(device_id[0], device))
        except CELError as e:
            raise AllocatorError(f"evaluate derived attribute {name} on device {device_id_text(device_id)} failed: "
                                 f"{e}") from None
        attribute = self.derived_cache[key] = DeviceAttribute(kind, value)
        return attribute

    # -- setup ----------------------------------------------------------------------------------
    def run(self) -> list[dict] | None:
        features = self.a.features
        self.pools = gather_pools(self.a.slices_for_node(self.node), self.node, features, self.a.all_slices)
        for ci, claim in enumerate(self.claims):
            min_devices = 0
            for ri, request in enumerate(claim.requests):
                has_sub = bool(request.first_available)
                if not features.prioritized_list and has_sub:
                    raise AllocatorError(f"claim {_claim_ref(claim)}, request {request.name}: has subrequests, but the "
                                         f"DRAPrioritizedList feature is disabled")
                _check_capacity_requests(claim, request, features)
                if has_sub:
                    least = None
                    for si, sub in enumerate(request.first_available):
                        data = self._validate_request(ci, (ci, ri, si), _Request(sub.name, sub, subrequest=True), request)
                        self.request_data[(ci, ri, si)] = data
                        least = data.num_devices if least is None else min(least, data.num_devices)
                    per_request = least or 0
                else:
                    body = request.exactly
                    if body is None:
                        raise AllocatorError(f"claim {_claim_ref(claim)}, request {request.name}: missing device class "
                                             f"name (unsupported request type?)")
                    data = self._validate_request(ci, (ci, ri, 0), _Request(request.name, body, subrequest=False), None)
                    self.request_data[(ci, ri, 0)] = data
                    per_request = data.num_devices
                # v1.37.2 checks each request against what is left (v1.34: the claim's total)
                if per_request > ALLOCATION_RESULTS_MAX_SIZE - min_devices:
                    raise AllocatorError(f"claim {_claim_ref(claim)}, request {request.name}: adding {per_request} "
                                         f"devices exceeds the claim limit of {ALLOCATION_RESULTS_MAX_SIZE}, with "
                                         f"{min_devices} already accounted for")
                min_devices += per_request
            constraints: list[_MatchAttribute] = []
            evaluate = self._derived_attribute if features.derived_attributes else None
            for i, c in enumerate(claim.constraints):
                if c.match_attribute:
                    constraints.append(_MatchAttribute(c.requests, c.match_attribute, features.list_type_attributes,
                                                       evaluate))
                elif c.distinct_attribute:
                    constraints.append(_DistinctAttribute(c.requests, c.distinct_attribute,
                                                          features.list_type_attributes, evaluate))
                else:
                    raise AllocatorError(f"claim {_claim_ref(claim)}, constraint #{i}: empty constraint (unsupported "
                                         f"constraint type?)")
            self.constraints[ci] = constraints
        try:
            done = self._allocate_one(0, 0, 0, 0, False, (0, 0, 0))
        except _Stop:
            done = False
        if not done:
            # allocator_incubating.go Allocate: with no solution, an invalid pool fails this node
            # only (ErrFailedAllocationOnNode; v1.34 failed the whole cycle on reaching one)
            if any(pool.is_invalid for pool in self.pools):
                raise FailedAllocationOnNode("invalid resource pools were encountered")
            return None
        return [self._result(ci) for ci in range(len(self.claims))]

    def _validate_request(self, ci: int, key: tuple, request: _Request, parent: Any) -> _RequestData:
        claim = self.claims[ci]
        data = _RequestData(request, parent)
        if request.derived_attributes:
            # every variant's validateDeviceRequest, first: the stable and incubating ones cannot
            # handle them, the experimental one only with DRADerivedAttributes (the API server drops
            # them on create without it, so only claims written otherwise get here)
            if not self.a.features.derived_attributes:
                raise AllocatorError(f"claim {_claim_ref(claim)}, request {request.name}: cannot handle request "
                                     f"with derived attributes, the feature is disabled")
            data.derived = dict(request.derived_attributes)
        for i, sel in enumerate(request.selectors):
            if not sel.cel:
                raise AllocatorError(f"claim {_claim_ref(claim)}, request {request.name}, selector #{i}: CEL expression "
                                     f"empty (unsupported selector type?)")
        if not self.a.features.admin_access and request.has_admin_access:
            raise AllocatorError(f"claim {_claim_ref(claim)}, request {request.name}: admin access is requested, but "
                                 f"the feature is disabled")
        if not request.class_name:
            raise AllocatorError(f"claim {_claim_ref(claim)}, request {request.name}: missing device class name "
                                 f"(unsupported request type?)")
        device_class = self.a.get_class(request.class_name)
        if device_class is None:
            raise AllocatorError(f"claim {_claim_ref(claim)}, request {request.name}: could not retrieve device class "
                                 f"{request.class_name}: deviceclass.resource.k8s.io \"{request.class_name}\" not found")
        data.device_class = device_class
        if request.mode == ALLOCATION_MODE_EXACT_COUNT:
            data.num_devices = request.count
        elif request.mode == ALLOCATION_MODE_ALL:
            for pool in self.pools:
                if pool.is_incomplete:
                    raise AllocatorError(f"claim {_claim_ref(claim)}, request {request.name}: asks for all devices, but "
                                         f"resource pool {pool.pool_id} is currently being updated")
                if pool.is_invalid:
                    raise AllocatorError(f"claim {_claim_ref(claim)}, request {request.name}: asks for all devices, but "
                                         f"resource pool {pool.pool_id} is currently invalid")
                for s in pool.slices:
                    for device in s.devices:
                        if self._is_selectable(key, data, s, device):
                            if self.a.features.consumable_capacity:
                                # static capacity only: what is left is checked when allocating,
                                # so a matching device without room makes "All" fail
                                try:
                                    fits = cmp_request_over_capacity(_EMPTY_CAPACITY, request.capacity_requests,
                                                                     device, None,
                                                                     self.a.features.fractional_capacity_range)
                                except CapacityError as e:
                                    raise AllocatorError(f"claim {_claim_ref(claim)}, request {request.name}: checking "
                                                         f"capacity for device {device.name}: {e}") from None
                                if not fits:
                                    continue
                            data.all_devices.append(((s.driver, s.pool_name, device.name), device, s, pool))
            data.num_devices = len(data.all_devices)
        else:
            raise AllocatorError(f"claim {_claim_ref(claim)}, request {request.name}: unsupported count mode "
                                 f"{request.mode}")
        return data

    # -- search ---------------------------------------------------------------------------------
    def _allocate_one(self, ci: int, ri: int, si: int, di: int, allocate_sub_request: bool,
                      start: tuple[int, int, int]) -> bool:
        """``allocateOne``; ``start`` is the (pool, slice, device) position the search for the
        next device of the same request starts at (v1.37.2: combinations, not permutations, of a
        request's devices; the first solution found is the same)."""
        self.a.num_allocate_one_invocations += 1
        if self.deadline is not None and time.monotonic() > self.deadline:
            raise AllocationTimeout("filter operation aborted: context deadline exceeded")
        if ci >= len(self.claims):
            return True
        claim = self.claims[ci]
        if ri >= len(claim.requests):
            try:
                return self._allocate_one(ci + 1, 0, 0, 0, False, (0, 0, 0))
            except _Stop:
                return False
        key = (ci, ri, si)
        data = self.request_data[key]
        if not allocate_sub_request and data.parent is not None:
            all_exceeded = True
            sub = 0
            while True:
                if (ci, ri, sub) not in self.request_data:
                    if all_exceeded:
                        raise _Stop()
                    return False
                try:
                    success = self._allocate_one(ci, ri, sub, di, True, (0, 0, 0))
                except _Stop:
                    sub += 1
                    continue
                all_exceeded = False
                if success:
                    self.request_data[key].selected_sub_request = sub
                    return True
                sub += 1
        request = data.request
        do_all = request.mode == ALLOCATION_MODE_ALL
        if do_all and not data.all_devices:
            return False
        if di >= data.num_devices:
            return self._allocate_one(ci, ri + 1, 0, 0, False, (0, 0, 0))
        if data.num_devices - di > ALLOCATION_RESULTS_MAX_SIZE - len(self.result[ci]):
            raise _Stop()
        if do_all:
            device_id, device, s, pool = data.all_devices[di]
            ok, undo = self._allocate_device(ci, key, device_id, device, s, pool, must=True)
            if not ok or undo is None:  # (undo is None exactly when refused)
                return False
            try:
                done = self._allocate_one(ci, ri, si, di + 1, allocate_sub_request, (0, 0, 0))
            except BaseException:
                undo()
                raise
            if not done:
                undo()
            return done
        admin = request.admin_access
        consumable = self.a.features.consumable_capacity
        held = self.a.allocated_devices
        allocating = self.allocating
        pools = self.pools
        start_pool, start_slice, start_device = start
        for pi in range(start_pool, len(pools)):
            pool = pools[pi]
            # allocator_incubating.go allocateOne: no devices from incomplete or invalid pools (v1.34
            # took them from incomplete pools and failed the cycle on reaching an invalid one)
            if pool.is_incomplete or pool.is_invalid:
                continue
            slices = pool.slices
            for sli in range(start_slice if pi == start_pool else 0, len(slices)):
                s = slices[sli]
                devices = s.devices
                first = start_device if pi == start_pool and sli == start_slice else 0
                for dvi in range(first, len(devices)):
                    device = devices[dvi]
                    device_id = (pool.driver, pool.pool, device.name)
                    if admin:
                        if ci in allocating.get(device_id, ()):
                            continue
                    elif device_id in held or allocating.get(device_id):
                        continue
                    if not self._is_selectable(key, data, s, device):
                        continue
                    if consumable and not self._fits_capacity(ci, request, device_id, device, "checking"):
                        continue
                    ok, undo = self._allocate_device(ci, key, device_id, device, s, pool, must=False)
                    if not ok or undo is None:  # (undo is None exactly when refused)
                        continue
                    try:
                        done = self._allocate_one(ci, ri, si, di + 1, allocate_sub_request, (pi, sli, dvi + 1))
                    except BaseException:
                        undo()
                        raise
                    if done:
                        return True
                    undo()
        return False

    def _is_selectable(self, key: tuple, data: _RequestData, s: ResourceSlice, device: Any) -> bool:
        if not self.a.features.device_binding and device.binding_conditions:
            return False
        match_key = (s.driver, s.pool_name, device.name, key)
        hit = self.matches.get(match_key)
        if hit is not None:
            return hit
        result = True
        if data.device_class is not None and not self._selectors_match(key[0], s, device, data.device_class,
                                                                        data.device_class.selectors):
            result = False
        elif not self._selectors_match(key[0], s, device, None, data.request.selectors):
            result = False
        elif s.per_device_node_selection and not _node_matches(self.node, device.node_name, device.all_nodes,
                                                                 device.node_selector):
            result = False
        self.matches[match_key] = result
        return result

    def _selectors_match(self, ci: int, s: ResourceSlice, device: Any, device_class: DeviceClass | None,
                         selectors: Sequence[Any]) -> bool:
        for i, sel in enumerate(selectors):
            compiled = compile_expression(sel.cel, self.a.features.list_type_attributes)
            where = f"class {device_class.name}" if device_class is not None else f"claim {_claim_ref(self.claims[ci])}"
            if compiled.error:
                raise AllocatorError(f"{where}: selector #{i}: CEL compile error: {compiled.error}")
            try:
                matched = self.a.selector_cache.matches(compiled, s.driver, device)
            except CELError as e:
                # allocator_incubating.go selectorsMatch: the device is named and "no such key"
                # errors get cel.EnhanceRuntimeError's hint (v1.34 named neither)
                raise AllocatorError(f"{where}: selector #{i} on device {s.driver}/{s.pool_name}/{device.name}: CEL "
                                     f"runtime error: {enhance_runtime_error(str(e))}") from None
            if not matched:
                return False
        return True

    def _allocate_device(self, ci: int, key: tuple, device_id: DeviceID, device: Any, s: ResourceSlice, pool: Pool,
                         must: bool) -> tuple[bool, Callable[[], None] | None]:
        """``allocateDevice``: in use, counters (partitionable devices), taints (device taints),
        then the claim's constraints; on success the device is marked and its result recorded."""
        claim = self.claims[ci]
        data = self.request_data[key]
        request = data.request
        features = self.a.features
        multiple = features.consumable_capacity and device.allow_multiple_allocations
        if request.admin_access:
            if not multiple and ci in self.allocating.get(device_id, ()):
                return False, None
        elif device_id in self.a.allocated_devices or self.allocating.get(device_id):
            return False, None
        if s.skip_node_operations and self.experimental:
            # experimental allocateDevice (the incubating variant has no such field): the feature
            # on, and the node declaring it (the kubelet then skips those calls)
            if not features.optional_node_operations:
                return False, None
            if DRA_OPTIONAL_NODE_OPERATIONS_FEATURE not in (getattr(self.node, "declared_features", None) or ()):
                return False, None
        if device.consumes_counters and not features.partitionable_devices:
            return False, None
        counters_reserved = False
        restore_groups: Callable[[], None] | None = None
        # a further share of a device already shared does not consume its counters again
        if device.consumes_counters and not (multiple and self._capacity_in_use(device_id)):
            if features.compatibility_groups:
                # experimental allocateDevice: the groups before the counters
                restore_groups = self._consume_compatibility_groups(pool, device)
                if restore_groups is None:
                    return False, None
            if not self._reserve_counters(pool, device):
                if restore_groups is not None:
                    restore_groups()
                return False, None
            counters_reserved = True

        def release() -> None:
            if counters_reserved:
                self._release_counters(pool, device)
            if restore_groups is not None:
                restore_groups()

        if features.device_taints and device.taints and taint_prevents_allocation(device, request.tolerations):
            release()
            return False, None
        if data.parent is None:
            base, sub = request.name, ""
        else:
            base, sub = data.parent.name, request.name
        constraints = self.constraints[ci]
        derived = data.derived
        for i, c in enumerate(constraints):
            try:
                added = c.add(base, sub, device, device_id, derived)
            except AllocatorError:
                # a derived attribute failed: rollbackDevice, then the error ends the allocation
                for e in range(i - 1, -1, -1):
                    constraints[e].remove(base, sub, device, device_id)
                release()
                raise
            if not added:
                for e in range(i - 1, -1, -1):
                    constraints[e].remove(base, sub, device, device_id)
                release()
                if must:
                    raise AllocatorError(f"claim {_claim_ref(claim)}, request {request.name}: cannot add device "
                                         f"{device_id_text(device_id)} because a claim constraint would not be satisfied")
                return False, None

        def rollback() -> None:
            for c in reversed(constraints):
                c.remove(base, sub, device, device_id)
            release()

        consumed: dict[str, Quantity] | None = None
        if features.consumable_capacity:
            # checked again after the constraints (allocator_incubating.go allocateDevice)
            try:
                fits = self._fits_capacity(ci, request, device_id, device, "rechecking")
            except AllocatorError:
                rollback()
                raise
            if not fits:
                rollback()
                return False, None
            if multiple:
                try:
                    consumed = consumed_capacity_from_request(request.capacity_requests, device,
                                                              features.fractional_capacity_range)
                except CapacityError as e:
                    rollback()
                    raise AllocatorError(f"claim {_claim_ref(claim)}, request {request.name}: computing consumed "
                                         f"capacity for device {device_id_text(device_id)}: {e}") from None
        allocating_capacity = self.allocating_capacity
        entry_existed = False
        if multiple:
            entry_existed = device_id in allocating_capacity
            allocating_capacity.insert(device_id, consumed or {})
        else:
            self.allocating.setdefault(device_id, set()).add(ci)
        results = self.result[ci]
        previous = len(results)
        results.append((request.name, data.parent.name if data.parent is not None else "", device_id, device, s,
                        request.admin_access, request.tolerations, consumed or None, multiple))

        def undo() -> None:
            del results[previous:]
            if multiple:
                allocating_capacity.remove(device_id, consumed or {})
                if entry_existed and device_id not in allocating_capacity:
                    allocating_capacity[device_id] = {}  # the earlier share still marks the device shared
            else:
                self.allocating[device_id].discard(ci)
            rollback()

        return True, undo

    def _fits_capacity(self, ci: int, request: _Request, device_id: DeviceID, device: Any, what: str) -> bool:
        """``allocator.CmpRequestOverCapacity``: the request fits what is left of the device's
        capacities (allocated shares and the shares of this search)."""
        try:
            return cmp_request_over_capacity(self.a.allocated_state.aggregated_capacity.get(device_id, _EMPTY_CAPACITY),
                                             request.capacity_requests, device,
                                             self.allocating_capacity.get(device_id),
                                             self.a.features.fractional_capacity_range)
        except CapacityError as e:
            raise AllocatorError(f"claim {_claim_ref(self.claims[ci])}, request {request.name}: {what} capacity for "
                                 f"device {device_id_text(device_id)}: {e}") from None

    def _capacity_in_use(self, device_id: DeviceID) -> bool:
        """``deviceCapacityInUse``: the device is shared (allocated or in this search)."""
        state = self.a.allocated_state
        return (device_id in state.aggregated_capacity or device_id in state.shared_devices
                or device_id in self.allocating_capacity)

    # -- counters (partitionable devices) ---------------------------------------------------------
    def _available_counters(self, pool: Pool) -> dict[str, dict[str, Fraction]]:
        """``checkAvailableCounters``' first part: the pool's counter sets minus what its allocated
        devices (targeting the node or not) consume; computed once per pool and Allocator."""
        pool_key = (pool.driver, pool.pool)
        available = self.a.available_counters.get(pool_key)
        if available is not None:
            return available
        available = {name: dict(counters) for name, counters in
                     ((n, {c: q.as_fraction() for c, q in cs.items()}) for n, cs in pool.counter_sets.items())}
        for d in self._allocated_pool_devices(pool):
            for consumption in d.consumes_counters:
                counters = available.get(consumption.get("counterSet", ""))
                if counters is None:
                    continue
                for name, value in (consumption.get("counters") or {}).items():
                    if name in counters:
                        counters[name] -= _counter_value(value).as_fraction()
        self.a.available_counters[pool_key] = available
        return available

    def _allocated_pool_devices(self, pool: Pool) -> Iterator[Any]:
        """The pool's devices that are allocated (``internal.IsDeviceAllocated``: dedicated, or
        shared), targeting the node or not, in slice order."""
        held = self.a.allocated_devices
        state = self.a.allocated_state
        for group in (pool.slices, pool.slices_not_targeting):
            for sl in group:
                for d in sl.devices:
                    did = (sl.driver, sl.pool_name, d.name)
                    if did in held or did in state.shared_devices or did in state.aggregated_capacity:
                        yield d

    def _reserve_counters(self, pool: Pool, device: Any) -> bool:
        """``checkAvailableCounters``: add the device's consumption to what is being allocated
        from the pool; False (and nothing added) when some counter would go over."""
        available = self._available_counters(pool)
        consumed = self.consumed_counters.setdefault((pool.driver, pool.pool), {})
        for consumption in device.consumes_counters:
            per_set = consumed.setdefault(consumption.get("counterSet", ""), {})
            for name, value in (consumption.get("counters") or {}).items():
                per_set[name] = per_set.get(name, Fraction(0)) + _counter_value(value).as_fraction()
        for set_name, counters in available.items():
            used = consumed.get(set_name, {})
            for name, value in counters.items():
                if value < used.get(name, 0):
                    self._release_counters(pool, device)
                    return False
        return True

    # -- compatibility groups (DRADeviceCompatibilityGroups) ---------------------------------------
    def _compatibility_baseline(self, pool: Pool) -> dict[str, tuple[bool, frozenset] | None]:
        """``compatibilityGroupsBaselineForPool``: per counter set, the groups' intersection of the
        pool's allocated devices (targeting the node or not, in slice order), read from the slices;
        computed once per pool and Allocator."""
        pool_key = (pool.driver, pool.pool)
        baseline = self.a.compatibility_baseline.get(pool_key)
        if baseline is not None:
            return baseline
        baseline = {}
        for d in self._allocated_pool_devices(pool):
            for consumption in d.consumes_counters:
                name = consumption.get("counterSet", "")
                baseline[name] = _groups_add(baseline.get(name), compatibility_groups(consumption))
        self.a.compatibility_baseline[pool_key] = baseline
        return baseline

    def _consume_compatibility_groups(self, pool: Pool, device: Any) -> Callable[[], None] | None:
        """``checkAndConsumeCompatibilityGroups``: for every counter set the device draws from, its
        groups must meet those of the devices already there (allocated, and allocated in this
        search); then they narrow the running intersection. Returns the function that restores it
        (backtracking), or None (the device is refused; nothing changed)."""
        running = self.consumed_groups.setdefault((pool.driver, pool.pool), {})
        baseline = self._compatibility_baseline(pool)
        saved: list[tuple[str, Any, bool]] = []

        def restore() -> None:
            for name, previous, existed in reversed(saved):
                if existed:
                    running[name] = previous
                else:
                    running.pop(name, None)

        for consumption in device.consumes_counters:
            name = consumption.get("counterSet", "")
            existed = name in running
            current = running[name] if existed else baseline.get(name)
            groups = compatibility_groups(consumption)
            if not _groups_admit(current, groups):
                restore()
                return None
            saved.append((name, current, existed))
            running[name] = _groups_add(current, groups)
        return restore

    def _release_counters(self, pool: Pool, device: Any) -> None:
        """``deallocateCountersForDevice``."""
        consumed = self.consumed_counters.get((pool.driver, pool.pool), {})
        for consumption in device.consumes_counters:
            per_set = consumed.get(consumption.get("counterSet", ""), {})
            for name, value in (consumption.get("counters") or {}).items():
                per_set[name] = per_set.get(name, Fraction(0)) - _counter_value(value).as_fraction()

    # -- results --------------------------------------------------------------------------------
    def _result(self, ci: int) -> dict:
        claim = self.claims[ci]
        features = self.a.features
        results = []
        for index, (name, parent, device_id, device, s, admin, tolerations, consumed, shared) in \
                enumerate(self.result[ci]):
            entry: dict[str, Any] = {"request": f"{parent}/{name}" if parent else name, "driver": device_id[0],
                                     "pool": device_id[1], "device": device_id[2]}
            if admin:
                entry["adminAccess"] = True
            if tolerations:
                entry["tolerations"] = [dict(t) for t in tolerations]
            if features.device_binding:
                if device.binding_conditions:
                    entry["bindingConditions"] = list(device.binding_conditions)
                if device.binding_failure_conditions:
                    entry["bindingFailureConditions"] = list(device.binding_failure_conditions)
            if shared:
                entry["shareID"] = share_id(claim, index)
                if consumed:
                    entry["consumedCapacity"] = {k: str(canonical(v)) for k, v in consumed.items()}
            if s.skip_node_operations and self.experimental:
                # experimental Allocate: a copy of the slice's list (omitempty: only when set)
                entry["skipNodeOperations"] = list(s.skip_node_operations)
            results.append(entry)
        # allocator_incubating.go Allocate: each class's config once, naming the requests of that
        # class; the claim's config entries that apply, as given; then entries that apply to every
        # request lose their request list ("empty means all"). (v1.34: class config once per
        # request of the class, without requests.)
        config: list[dict] = []
        class_ranges: dict[str, tuple[int, int]] = {}
        for ri, request in enumerate(claim.requests):
            data = self._selected(ci, ri)
            device_class = data.device_class
            if device_class is None:
                continue
            known = class_ranges.get(device_class.name)
            if known is not None:
                for i in range(*known):
                    config[i]["requests"].append(data.request_name())
                continue
            first = len(config)
            for c in device_class.config:
                config.append({"source": "FromClass", "requests": [data.request_name()], **_device_configuration(c)})
            class_ranges[device_class.name] = (first, len(config))
        for c in claim.config:
            requests = list(c.get("requests") or ())
            if not requests:
                config.append({"source": "FromClaim", **_device_configuration(c)})
                continue
            for ri, request in enumerate(claim.requests):
                if request.name in requests:
                    config.append({"source": "FromClaim", "requests": requests, **_device_configuration(c)})
                    break
                data = self.request_data[(ci, ri, 0)]
                if data.parent is None:
                    continue
                sub = request.first_available[data.selected_sub_request]
                if f"{request.name}/{sub.name}" in requests:
                    config.append({"source": "FromClaim", "requests": requests, **_device_configuration(c)})
                    break
        for entry in config:
            named = entry.get("requests")
            if named and self._applies_to_all(ci, named):
                del entry["requests"]
        allocation: dict[str, Any] = {"devices": {"results": results}}
        if config:
            allocation["devices"]["config"] = config
        node_selector = self._node_selector(ci)
        if node_selector is not None:
            allocation["nodeSelector"] = node_selector
        return allocation

    def _selected(self, ci: int, ri: int) -> _RequestData:
        """The request's data, or its chosen subrequest's."""
        data = self.request_data[(ci, ri, 0)]
        if data.parent is not None:
            data = self.request_data[(ci, ri, data.selected_sub_request)]
        return data

    def _applies_to_all(self, ci: int, requests: Sequence[str]) -> bool:
        for ri, request in enumerate(self.claims[ci].requests):
            if request.name in requests:
                continue
            data = self.request_data[(ci, ri, 0)]
            if data.parent is not None:
                sub = request.first_available[data.selected_sub_request]
                if f"{request.name}/{sub.name}" in requests:
                    continue
            return False
        return True

    def _node_selector(self, ci: int) -> dict | None:
        """``createNodeSelector``."""
        fields: list[dict] = []
        expressions: list[dict] = []
        for _name, _parent, _id, device, s, _admin, _tol, _consumed, _shared in self.result[ci]:
            if s.per_device_node_selection:
                node_name, spec = device.node_name, device.node_selector_spec
            else:
                node_name, spec = s.node_name, s.node_selector_spec
            if node_name or device.binds_to_node:
                # v1.37.2 createNodeSelector: a node-local device, or one that binds to the node,
                # restricts the allocation to the node allocated for
                return {"nodeSelectorTerms": [{"matchFields": [
                    {"key": "metadata.name", "operator": "In", "values": [self.node.name]}]}]}
            if spec is not None:
                terms = spec.get("nodeSelectorTerms") or []
                if len(terms) == 1:
                    _add_requirements(terms[0].get("matchFields") or [], fields)
                    _add_requirements(terms[0].get("matchExpressions") or [], expressions)
                elif len(terms) > 1:
                    raise AllocatorError(f"create NodeSelector for claim {self.claims[ci].name}: unsupported "
                                         f"ResourceSlice.NodeSelector with {len(terms)} terms")
        if fields or expressions:
            term: dict[str, Any] = {}
            if expressions:
                term["matchExpressions"] = expressions
            if fields:
                term["matchFields"] = fields
            return {"nodeSelectorTerms": [term]}
        return None


def _device_configuration(config: Mapping[str, Any]) -> dict:
    """The ``DeviceConfiguration`` part of a class or claim config entry (``opaque``)."""
    return {k: v for k, v in config.items() if k not in ("requests", "source")}


def _add_requirements(source: Iterable[Mapping[str, Any]], into: list[dict]) -> None:
    for requirement in source:
        values = set(requirement.get("values") or ())
        if any(r.get("key") == requirement.get("key") and r.get("operator") == requirement.get("operator")
               and set(r.get("values") or ()) == values for r in into):
            continue
        into.append(dict(requirement))
