"""NodeResourcesFit's side of extended resources backed by DRA (DRAExtendedResource, GA at v1.37.2).

Upstream ``noderesources/fit.go``: ``shouldDelegateResourceToDRA``. A requested scalar resource is
left to DynamicResources on a node whose allocatable has none of it (0 or absent) when a
DeviceClass maps its name (``spec.extendedResourceName`` or ``deviceclass.resource.kubernetes.io/
<class>``, :mod:`fastsched.dra.extended_resources`); the node's device plugins decide it otherwise.

Kept apart from :mod:`.fit` so the plugin's own code only asks :func:`delegable_resources` which
resources may be delegated (empty for almost every pod: no class maps them) and applies it per
node (:func:`fit.fits_request`) or over a batch (:func:`clear_delegated`).
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Hashable, Iterable

import numpy as np

from ...api.resource import DeviceClass
from ...dra.extended_resources import DEVICE_CLASS_PREFIX, is_dra_extended_resource_name
from ...features import DRA_LIST_TYPE_ATTRIBUTES, feature_gates_of
from ...framework.interface import ActionType, ClusterEvent, ClusterEventWithHint, EventResource, QueueingHint
from ..dynamicresources.manager import DeviceClassesGuard, classes_guard as _classes_guard, manager_for, manager_of_handle
from ..helper.typed import as_typed

if TYPE_CHECKING:  # pragma: no cover
    from ...framework.protocols import NodeTable

__all__ = ["DRAScoreState", "UpstreamPanic", "clear_delegated", "delegable_resources", "device_class_event", "dra_guard",
           "dra_guard_source",
           "is_schedulable_after_device_class_event"]


#: the DRA manager of the handle's client; None (upstream's nil draManager: nothing is delegated)
#: without a client or with one that lists no objects (a plugin test's fake)
_manager = manager_of_handle


def delegable_resources(handle: Any, scalar_requests: Iterable[tuple[str, int]]) -> frozenset[str]:
    """The requested (non-zero) resources a DeviceClass maps: DynamicResources serves them on the
    nodes whose allocatable has none (``shouldDelegateResourceToDRA`` without the node part)."""
    names = [name for name, want in scalar_requests if want and is_dra_extended_resource_name(name)]
    if not names:
        return frozenset()
    manager = _manager(handle)
    if manager is None:
        return frozenset()  # no DRA manager: upstream's draManager == nil
    resolver = manager.device_class_resolver()
    if not resolver:
        return frozenset()
    return frozenset(name for name in names if resolver.get_device_class(name) is not None)


#: resource names that are never DRA extended resource names (native resources): a pod requesting
#: only these is answered without a call per name (the compiled cycle asks every cycle, twice)
_NATIVE_NAMES = frozenset(("cpu", "memory", "ephemeral-storage", "pods"))


def dra_guard(handle: Any, scalar_names: Iterable[str]) -> Hashable:
    """What the delegation of a pod's requests depends on beside the pod: the DeviceClasses
    (their version), for pods requesting DRA extended resource names; None otherwise."""
    # (checked for every pod each cycle, by Fit's and BalancedAllocation's column guards: a pod of
    # native resources only takes one frozenset test; otherwise a plain loop, where a name without
    # "/" -- cpu, memory, pods, ephemeral-storage -- is neither an extended resource nor a class's
    # implicit name, so it takes no call)
    if _NATIVE_NAMES.issuperset(scalar_names):
        return None
    for name in scalar_names:
        if "/" in name and is_dra_extended_resource_name(name):
            break
    else:
        return None
    return _classes_guard(_manager(handle))


def dra_guard_source(handle: Any, scalar_names: Iterable[str]) -> DeviceClassesGuard | None:
    """The guard source of :func:`dra_guard` for a pod with these request names: None when the
    guard is fixed (:func:`dra_guard_fixed`), else the handle's :class:`DeviceClassesGuard`, whose
    value is the guard's for every pod with these names at any moment."""
    return None if dra_guard_fixed(scalar_names) else DeviceClassesGuard(handle)


def dra_guard_fixed(scalar_names: Iterable[str]) -> bool:
    """Whether :func:`dra_guard` answers None for these names whatever the DeviceClasses (the
    guard memo's contract, ``framework.columns.GuardedColumnPlugin``): no name is a DRA extended
    resource name (a function of the names alone)."""
    if _NATIVE_NAMES.issuperset(scalar_names):
        return True
    return not any("/" in name and is_dra_extended_resource_name(name) for name in scalar_names)


def clear_delegated(failed: np.ndarray, unresolvable: np.ndarray, table: NodeTable, rows: np.ndarray,
                    cols: np.ndarray, wants: np.ndarray, names: list[str], delegated: frozenset[str]) -> None:
    """The batch Filter's verdicts (``failed`` (N, 1 + K), ``unresolvable`` (N,), as
    ``_resources.fit_filter`` leaves them) with the delegated checks taken out: a check of a
    delegated resource passes on nodes whose allocatable has none of it, and ``unresolvable`` is
    recomputed from the checks that still fail."""
    alloc = table.alloc
    n = len(rows)
    changed = False
    for j, name in enumerate(names):
        if name not in delegated:
            continue
        col = int(cols[j])
        capacity = alloc[rows, col] if col >= 0 else np.zeros(n, dtype=np.int64)
        skip = capacity <= 0
        if skip.any():
            failed[skip, j + 1] = 0
            changed = True
    if not changed:
        return
    unres = np.zeros(n, dtype=bool)
    for j in range(len(names)):
        col = int(cols[j])
        capacity = alloc[rows, col] if col >= 0 else np.zeros(n, dtype=np.int64)
        unres |= failed[:, j + 1].astype(bool) & (wants[j] > capacity)
    unresolvable[:] = unres


def is_schedulable_after_device_class_event(pod: Any, old: Any, new: Any) -> tuple[QueueingHint, Any]:
    """``isSchedulableAfterDeviceClassEvent``: a class added with the pod's implicit class name
    among its requests, or added / updated with a new ``extendedResourceName`` the pod requests."""
    # Upstream util.As[*resourceapi.DeviceClass]: an object of another type is answered with Queue
    # and an error (isSchedulableAfterDeviceClassEvent), not raised.
    old, new, err = as_typed(DeviceClass, "*v1.DeviceClass", old, new)
    if err is not None:
        return QueueingHint.QUEUE, err
    if new is None:
        return QueueingHint.QUEUE_SKIP, None
    requests = pod.requests
    if old is not None:
        if old.extended_resource_name == new.extended_resource_name:
            return QueueingHint.QUEUE_SKIP, None
    elif DEVICE_CLASS_PREFIX + new.name in requests:
        return QueueingHint.QUEUE, None
    if new.extended_resource_name and new.extended_resource_name in requests:
        return QueueingHint.QUEUE, None
    return QueueingHint.QUEUE_SKIP, None


def device_class_event() -> ClusterEventWithHint:
    """The event NodeResourcesFit registers with DRAExtendedResource: a DeviceClass added or updated."""
    return ClusterEventWithHint(ClusterEvent(EventResource.DEVICE_CLASS, ActionType.ADD | ActionType.UPDATE),
                                is_schedulable_after_device_class_event)


# -- scoring (resource_allocation.go: draPreScoreState, calculateDRAResourceTotals) -------------------
class _Allocated:
    """``structured.IsDeviceAllocated`` as a container: in any of the given containers."""

    __slots__ = ("parts",)

    def __init__(self, *parts: Any):
        self.parts = parts

    def __contains__(self, item: object) -> bool:
        return any(item in part for part in self.parts)


class DRAScoreState:
    """Upstream ``draPreScoreState``: the allocated devices and the slices, taken at PreScore, for
    the scorers' DRA-backed extended resources (a configured scoring resource a DeviceClass maps,
    on a node whose allocatable has none of it)."""

    __slots__ = ("manager", "resolver", "allocated", "slices", "_totals", "nil_cel_cache", "_shared",
                 "list_type_attributes")

    def __init__(self, manager: Any, resolver: Any, *, nil_cel_cache: bool = False,
                 list_type_attributes: bool = False):
        self.manager = manager
        self.resolver = resolver
        #: DRAListTypeAttributes: upstream's Fit builds its CEL cache with EnableListTypeAttributes
        #: (fit.go), so a class selector using ``includes()`` compiles and scores with the gate
        self.list_type_attributes = list_type_attributes
        #: BalancedAllocation's scorer: upstream's NewBalancedAllocation never sets its CEL cache
        self.nil_cel_cache = nil_cel_cache
        # structured.IsDeviceAllocated: dedicated, or shared (consumable capacity)
        held = manager.allocated_devices()
        state = manager.allocated_state()
        self.allocated = (_Allocated(held, state.shared_devices, state.aggregated_capacity)
                          if state.shared_devices or state.aggregated_capacity else held)
        self.slices = manager.slices()
        self._totals: dict[tuple[str, str], tuple[int, int]] = {}
        #: the manager's totals by node shape, or None when they cannot be shared (see
        #: :meth:`_by_shape`): kept across cycles, keyed by what the shape numbers and the classes
        #: were read with
        self._shared: dict[tuple, tuple[int, int]] | None = None
        if (not nil_cel_cache and getattr(manager, "incremental", False) and self.allocated is held
                and isinstance(getattr(manager, "shape_totals", None), dict)):
            self._shared = manager.shape_totals

    def clone(self) -> "DRAScoreState":
        return self

    def maps(self, resource: str) -> bool:
        return self.resolver.get_device_class(resource) is not None

    def totals(self, node: Any, resource: str) -> tuple[int, int]:
        """``calculateDRAExtendedResourceAllocatableRequest``: (devices of the resource's class
        the node can use, how many of them are allocated); (0, 0) when a selector fails."""
        key = (node.name, resource)
        hit = self._totals.get(key)
        if hit is None:
            hit = self._totals[key] = self._by_shape(node, resource)
        return hit

    def _by_shape(self, node: Any, resource: str) -> tuple[int, int]:
        """:meth:`_compute`, shared by the nodes of one shape (``DRAManager.shape_key``, the
        allocator's ``NodeShapes``) across nodes and cycles. A shape says every slice that can
        target the node is bound to it by ``nodeName`` (so every device of them is the node's),
        which driver and devices they hold up to the pool's, slice's and node's names (CEL sees
        driver, attributes and capacity), and which of the devices are allocated or in flight:
        all the count reads. Not shared (computed per node): nodes without a shape, states whose
        allocated devices include shares (the shape's held flags do not read them), a manager
        whose kept keys are not maintained (not indexed), and BalancedAllocation's nil-cache
        panic. The manager drops the kept totals with its shapes (slices or how they are read
        changed); a DeviceClass change changes ``class_version``, in the key."""
        shared = self._shared
        if shared is None:
            return self._compute(node, resource)
        shape = self.manager.shape_key(node)
        if shape is None:
            return self._compute(node, resource)
        key = (self.manager.class_version, resource, shape[0], self.list_type_attributes)
        hit = shared.get(key)
        if hit is None:
            if len(shared) >= _SHARED_TOTALS_SIZE:
                shared.clear()
            hit = shared[key] = self._compute(node, resource)
        return hit

    def totals_rows(self, table: NodeTable, rows: np.ndarray, resource: str) -> tuple[np.ndarray, np.ndarray]:
        """:meth:`totals` of the nodes at ``rows`` (N,) int64 of ``table``: (capacity, allocated),
        (N,) int64 each."""
        nodes = table.nodes
        totals = self.totals
        shape_keys = getattr(self.manager, "shape_keys_by_name", None) if self._shared is not None else None
        if shape_keys is None:
            pairs = [totals(nodes[r], resource) for r in rows.tolist()]
            if not pairs:
                return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
            both = np.array(pairs, dtype=np.int64).reshape(len(pairs), 2)
            return np.ascontiguousarray(both[:, 0]), np.ascontiguousarray(both[:, 1])
        # the nodes' kept shape keys read by the rows' names in one pass (a Node object only for
        # a key not kept, and for the first node of each shape), and one :meth:`totals` per shape:
        # the value :meth:`_by_shape` shares by ``shape[0]`` anyway, found here by the identity of
        # the interned shape tuple instead of hashing the nested tuple per node (equal shapes that
        # are distinct objects only share less; ``keys`` holds them all, so no id is reused)
        at = rows.tolist()
        keys = shape_keys(table.node_names[rows].tolist(), lambda i: nodes[at[i]])
        by_shape: dict[int, int] = {}
        firsts: list[tuple[int, int]] = []  # each shape's (and each unshaped node's) totals
        index: list[int] = []  # each node's entry in ``firsts``
        for i, key in enumerate(keys):
            if key is None:
                index.append(len(firsts))
                firsts.append(totals(nodes[at[i]], resource))
                continue
            j = by_shape.get(id(key[0]))
            if j is None:
                j = by_shape[id(key[0])] = len(firsts)
                firsts.append(totals(nodes[at[i]], resource))
            index.append(j)
        if not index:
            return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
        both = np.array(firsts, dtype=np.int64).reshape(len(firsts), 2)[np.array(index, dtype=np.intp)]
        return np.ascontiguousarray(both[:, 0]), np.ascontiguousarray(both[:, 1])

    def _compute(self, node: Any, resource: str) -> tuple[int, int]:
        from ...api.cel import CELError, compile_expression

        device_class = self.resolver.get_device_class(resource)
        if device_class is None:
            return 0, 0
        if self.nil_cel_cache and any(sel.cel for sel in device_class.selectors) and any(
                s.devices for s in self.slices):
            self._panic_if_any_device(node, resource, device_class)
        compiled = [compile_expression(sel.cel, self.list_type_attributes)
                    for sel in device_class.selectors if sel.cel]
        if any(c.error for c in compiled):
            return 0, 0  # upstream: the compile error is logged, the resource not scored by DRA
        cache = self.manager.selector_cache
        capacity = allocated = 0
        # (the slices that can target the node: the manager's per-node index, rather than every
        # slice of the cluster for every node scored; the checks below still pick the devices)
        slices_for_node = getattr(self.manager, "slices_for_node", None)
        slices = self.slices if slices_for_node is None else slices_for_node(node)
        try:
            for s in slices:
                if s.per_device_node_selection:
                    devices = [d for d in s.devices if _device_on_node(d, node)]
                elif not s.all_nodes and s.node_name != node.name and s.node_selector is not None:
                    if not s.node_selector.matches(node):
                        continue
                    devices = list(s.devices)
                elif not s.all_nodes and s.node_name and s.node_name != node.name:
                    continue
                else:
                    devices = list(s.devices)
                for device in devices:
                    if all(cache.matches(c, s.driver, device) for c in compiled):
                        capacity += 1
                        if (s.driver, s.pool_name, device.name) in self.allocated:
                            allocated += 1
        except CELError:
            return 0, 0
        return capacity, allocated


    def _panic_if_any_device(self, node: Any, resource: str, device_class: Any) -> None:
        for s in self.slices:
            if s.per_device_node_selection:
                devices = [d for d in s.devices if _device_on_node(d, node)]
            elif not s.all_nodes and s.node_name != node.name and s.node_selector is not None:
                devices = list(s.devices) if s.node_selector.matches(node) else []
            elif not s.all_nodes and s.node_name and s.node_name != node.name:
                devices = []
            else:
                devices = list(s.devices)
            if devices:
                raise UpstreamPanic(
                    f"kube-scheduler v1.37.2 panics here (nil pointer dereference): NodeResourcesBalancedAllocation "
                    f"scores {resource} from the devices of DeviceClass {device_class.name}, whose CEL selectors it "
                    f"evaluates with a nil CEL cache (NewBalancedAllocation does not set it)")


#: kept (class version, resource, node shape) totals beyond which the manager's dict starts over
_SHARED_TOTALS_SIZE = 4096


class UpstreamPanic(Exception):
    """What upstream does here is a Go panic (the scheduler crashes); the Score plugin reports it as
    an Error status naming the cause."""


def _device_on_node(device: Any, node: Any) -> bool:
    if device.all_nodes or (device.node_name and device.node_name == node.name):
        return True
    return device.node_selector is not None and device.node_selector.matches(node)


def dra_score_state(handle: Any, resource_names: Iterable[str], *, nil_cel_cache: bool = False
                    ) -> DRAScoreState | None:
    """``getDRAPreScoredParams``: the state when some configured scoring resource maps to a
    DeviceClass, else None."""
    names = [n for n in resource_names if is_dra_extended_resource_name(n)]
    if not names:
        return None
    manager = _manager(handle)
    if manager is None:
        return None
    resolver = manager.device_class_resolver()
    if not any(resolver.get_device_class(n) is not None for n in names):
        return None
    return DRAScoreState(manager, resolver, nil_cel_cache=nil_cel_cache,
                         list_type_attributes=feature_gates_of(handle).enabled(DRA_LIST_TYPE_ATTRIBUTES))


def dra_scores_pod(handle: Any, resource_names: Iterable[str], pod_requests: Iterable[int]) -> bool:
    """Whether a configured scoring resource the pod requests maps to a DeviceClass (then a node
    without it in its allocatable is scored from its devices: node by node, not in the kernel)."""
    wanted = [n for n, want in zip(resource_names, pod_requests) if want and is_dra_extended_resource_name(n)]
    if not wanted:
        return False
    manager = _manager(handle)
    if manager is None:
        return False
    resolver = manager.device_class_resolver()
    return any(resolver.get_device_class(n) is not None for n in wanted)
