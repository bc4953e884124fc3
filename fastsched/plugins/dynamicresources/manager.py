"""The DRA manager (upstream ``SharedDRAManager``: the claim assume cache with in-flight
allocations, the ResourceSlice and DeviceClass listers) over ``handle.client``.

One manager per client, shared by every profile's plugin (upstream shares it per scheduler).
Inside a :class:`~fastsched.Scheduler` it keeps indexes current through the Scheduler's
``object_listeners`` (each claim, slice or class write calls it): the allocated devices (with a
reference count per device, so in-flight and written allocations of the same claim overlap
safely), slices by node name plus the slices for many nodes, and a version per kind for the
vectorized filter's columns. With a plain :class:`~fastsched.framework.objects.ObjectStore` (or no
client) it recomputes from the objects on each use.
"""
from __future__ import annotations

import dataclasses
from typing import Any, Callable, Container, Hashable, Iterable, Mapping, Sequence

from ...api.resource import DeviceClass, DeviceTaintRule, ResourceClaim, ResourceSlice
from ...dra.allocator import AllocatedState, DeviceID, NodeShapes
from ...dra.consumable import ConsumedCapacityCollection
from ...dra.extended_resources import EXTENDED_RESOURCE_CLAIM_ANNOTATION, SPECIAL_CLAIM_IN_MEM_NAME, ExtendedResourceCache
from ...api.cel import SelectorCache

__all__ = ["DRAManager", "manager_for"]

#: The attribute a client carries its manager in. Why not a ``WeakKeyDictionary`` keyed by the
#: client: the manager holds its client, so such an entry never dies, and every Scheduler (its
#: cluster, framework, pods) that ever used DRA lived until the process ended: 2.8 M objects after
#: tests/scheduler, and each full collection (scheduler_perf's ``runtime.GC()``) took seconds. As an
#: attribute the pair is an ordinary cycle the collector frees with the client.
_ATTRIBUTE = "_fastsched_dra_manager"


def manager_for(client: Any) -> "DRAManager":
    """The manager of ``client`` (created on first use; a private one when ``client`` is None or
    cannot carry it)."""
    if client is None:
        return DRAManager(None)
    manager = getattr(client, _ATTRIBUTE, None)
    if manager is None:
        manager = DRAManager(client)
        try:
            setattr(client, _ATTRIBUTE, manager)
        except (AttributeError, TypeError):
            return manager
    return manager


def manager_of_handle(handle: Any) -> "DRAManager | None":
    """The DRA manager of a framework handle's client; None (upstream's nil draManager) without a
    client or with one that lists no objects (a plugin test's fake)."""
    client = getattr(handle, "client", None) if handle is not None else None
    if client is None or not callable(getattr(client, "list_objects", None)):
        return None
    return manager_for(client)


def classes_guard(manager: Any) -> Hashable:
    """``noderesources.dra_extended.dra_guard``'s value once the pod is known to request a DRA
    extended resource name: the DeviceClasses' version in ``manager`` (None without one)."""
    if manager is None:
        return None
    if manager.incremental:
        return manager.class_version
    classes = manager.client.list_objects("DeviceClass")
    return hash(tuple((c.name, c.extended_resource_name, c.creation_timestamp) for c in classes))


class DeviceClassesGuard:
    """The guard source (``framework.columns.GuardedColumnPlugin.column_guard_source``) of
    ``noderesources.dra_extended.dra_guard`` for pods that request a DRA extended resource name:
    its value read from the handle's DRA manager without testing the names again. Equal for one
    handle (identity), so NodeResourcesFit's, BalancedAllocation's (and DynamicResources', when
    the handle's manager is its own) guards are asked once a cycle by the compiled cycle (issues 27, 29: three of the five guards of a DRA-backed
    extended-resource pod were this value, each computed from the pod's requests every cycle)."""

    __slots__ = ("handle",)

    def __init__(self, handle: Any) -> None:
        self.handle = handle

    def __eq__(self, other: object) -> bool:
        return type(other) is DeviceClassesGuard and other.handle is self.handle

    def __hash__(self) -> int:
        return hash((DeviceClassesGuard, id(self.handle)))

    def __call__(self) -> Hashable:
        return classes_guard(manager_of_handle(self.handle))


def _claim_held(claim: ResourceClaim | None) -> tuple[list[DeviceID], list[tuple[DeviceID, Any]]]:
    """The devices ``claim``'s allocation makes unavailable, and its shares: the results with a
    ``shareID`` (consumable capacity, ``foreachAllocatedDevice``'s shared devices) as (device, its
    ``consumedCapacity`` or None). One pass over the results (the listener reads both for the old
    and the new claim of every claim event)."""
    if claim is None or not claim.allocation:
        return [], []
    devices: list[DeviceID] = []
    shares: list[tuple[DeviceID, Any]] = []
    for r in (claim.allocation.get("devices") or {}).get("results") or ():
        if r.get("adminAccess"):
            continue  # admin access does not make a device unavailable
        d = (r.get("driver", ""), r.get("pool", ""), r.get("device", ""))
        if r.get("shareID") is None:
            devices.append(d)
        else:
            shares.append((d, r.get("consumedCapacity")))
    return devices, shares


def _consumed(consumed: Any) -> dict:
    """A result's ``consumedCapacity`` as name -> Quantity."""
    from ...api.quantity import parse_quantity
    return {str(k): parse_quantity(v, "consumedCapacity") for k, v in (consumed or {}).items()}


class _Union:
    """Two containers as one (the dedicated and the shared devices with DRAConsumableCapacity off)."""

    __slots__ = ("a", "b")

    def __init__(self, a: Container[DeviceID], b: Container[DeviceID]):
        self.a, self.b = a, b

    def __contains__(self, item: object) -> bool:
        return item in self.a or item in self.b


class DRAManager:
    """Claims, slices, classes and in-flight allocations as DynamicResources reads them."""

    def __init__(self, client: Any):
        self.client = client
        self.selector_cache = SelectorCache()
        #: claim uid -> the claim with the allocation Reserve chose (``inFlightAllocations``)
        self.in_flight: dict[str, ResourceClaim] = {}
        #: claim uid -> how many pods share its in-flight allocation (``inFlightAllocation.sharers``:
        #: members of one pod group cycle reusing it, see :meth:`signal_claim_pending_allocation`)
        self.in_flight_sharers: dict[str, int] = {}
        #: device -> how many allocations (written or in flight) hold it
        self._held: dict[DeviceID, int] = {}
        #: DRAConsumableCapacity (set from the plugin's gates): shares are shares; off, the devices
        #: of shares count as allocated (GatherAllocatedState's legacy mode)
        self.consumable_capacity = True
        #: device -> how many results with a shareID (written or in flight) hold it
        self._shared: dict[DeviceID, int] = {}
        #: device -> the sum of those results' consumedCapacity (``AggregatedCapacity``)
        self._capacity = ConsumedCapacityCollection()
        #: called with (devices, now_held) when devices become held or free (vectorized columns):
        #: the devices one hold or free changed, in order, at once (a claim's allocation holds or
        #: frees several)
        self.device_listeners: list[Callable[[list[DeviceID], bool], None]] = []
        self.slice_version = 0
        self.class_version = 0
        #: the slices' shape signatures (the allocator's node-shape cache), dropped with each
        #: change of the slices so replaced slices are not kept alive
        self.node_shapes = NodeShapes()
        #: NodeResourcesFit's DRA-backed scoring totals by (class version, resource, node shape)
        #: (``noderesources/dra_extended.py``): the shape numbers are node_shapes', so both are
        #: dropped together (:meth:`_clear_shapes`)
        self.shape_totals: dict[tuple, tuple[int, int]] = {}
        self._seq = 0
        self._slice_seq: dict[str, int] = {}
        self._slices_by_node: dict[str, dict[str, ResourceSlice]] = {}
        self._slices_elsewhere: dict[str, ResourceSlice] = {}
        self._slice_list: list[ResourceSlice] | None = None
        #: resource name -> DeviceClass (upstream's ExtendedResourceCache, fed by class events)
        self._resolver = ExtendedResourceCache()
        #: DRADeviceTaintRules: the slices are read with the DeviceTaintRules' taints added
        #: (upstream's slice tracker, ListWithDeviceTaintRules); set from the plugin's gates
        self.taint_rules_enabled = True
        self._rules: list[DeviceTaintRule] | None = None
        self._patched: dict[int, tuple[ResourceSlice, ResourceSlice]] = {}
        #: (controller name, controller uid) -> (namespace, name) -> the claims annotated as an
        #: extended resource claim with that controller (:meth:`extended_resource_claims`)
        self._extended_claims: dict[tuple[str, str], dict[tuple[str, str], ResourceClaim]] = {}
        #: (taint_rules_enabled, consumable_capacity) the kept shape keys were computed with
        self._shape_flags: tuple[bool, bool] = (True, True)
        #: the last allocation :meth:`_held_by` read, with its answer (see there)
        self._held_last: tuple[Any, tuple[list[DeviceID], list[tuple[DeviceID, Any]]]] | None = None
        listeners = getattr(client, "object_listeners", None)
        self.incremental = listeners is not None
        if listeners is not None:
            for claim in client.list_objects("ResourceClaim"):
                self._index_extended(claim, +1)
                devices, shares = _claim_held(claim)
                self._hold(devices, +1)
                self._hold_shares(shares, +1)
            for s in client.list_objects("ResourceSlice"):
                self._add_slice(s)
            for dc in client.list_objects("DeviceClass"):
                self._resolver.on_add(dc)
            listeners.append(self._object_changed)

    # -- listener -------------------------------------------------------------------------------
    def _object_changed(self, kind: str, old: Any, new: Any) -> None:
        if kind == "ResourceClaim":
            if not self._reindex_extended(old, new):
                self._index_extended(old, -1)
                self._index_extended(new, +1)
            if old is not None and new is not None and old.allocation is new.allocation:
                return  # a write that kept the allocation (shared by claim_with_status): nothing held changes
            before, shares_before = self._held_by(old)
            after, shares_after = self._held_by(new)
            if before != after:
                self._hold(before, -1)
                self._hold(after, +1)
            if shares_before != shares_after:
                self._hold_shares(shares_before, -1)
                self._hold_shares(shares_after, +1)
        elif kind == "ResourceSlice":
            if old is not None:
                self._remove_slice(old)
                self._patched.pop(id(old), None)
            if new is not None:
                self._add_slice(new)
            self.slice_version += 1
            self._slice_list = None
            self._clear_shapes()
        elif kind == "DeviceTaintRule":
            self._rules = None
            self._patched.clear()
            self.slice_version += 1
            self._slice_list = None
            self._clear_shapes()
        elif kind == "DeviceClass":
            self.class_version += 1
            if old is None and new is not None:
                self._resolver.on_add(new)
            elif new is None and old is not None:
                self._resolver.on_delete(old)
            elif old is not None and new is not None:
                self._resolver.on_update(old, new)

    def _clear_shapes(self) -> None:
        self.node_shapes.clear()
        self.shape_totals.clear()

    def _index_extended(self, claim: ResourceClaim | None, delta: int) -> None:
        if claim is None or claim.annotations.get(EXTENDED_RESOURCE_CLAIM_ANNOTATION) != "true":
            return
        index = self._extended_claims
        key = (claim.namespace, claim.name)
        for ref in claim.owner_references:
            if not ref.controller:
                continue
            owner = (ref.name, ref.uid)
            if delta > 0:
                index.setdefault(owner, {})[key] = claim
            else:
                claims = index.get(owner)
                if claims is not None and claims.pop(key, None) is not None:
                    if not claims:
                        del index[owner]

    def _reindex_extended(self, old: ResourceClaim | None, new: ResourceClaim | None) -> bool:
        """``_index_extended(old, -1)`` then ``(new, +1)`` for a write that kept the claim's name,
        annotations and owner references (a status write's field copy shares them): ``new`` in
        ``old``'s entries. False when that does not apply (the caller does both then)."""
        if (old is None or new is None or old.owner_references is not new.owner_references
                or old.annotations is not new.annotations or old.name != new.name
                or old.namespace != new.namespace):
            return False
        if old.annotations.get(EXTENDED_RESOURCE_CLAIM_ANNOTATION) != "true":
            return True  # indexed neither before nor after
        index = self._extended_claims
        key = (old.namespace, old.name)
        for ref in old.owner_references:
            if ref.controller:
                claims = index.get((ref.name, ref.uid))
                if claims is None or key not in claims:
                    return False  # (not indexed: the full update, which only adds it)
        for ref in old.owner_references:
            if ref.controller:
                index[(ref.name, ref.uid)][key] = new
        return True

    def extended_resource_claims(self, pod_name: str, pod_uid: str) -> list[ResourceClaim] | None:
        """The claims annotated as an extended resource claim whose controller is the pod (by name
        and uid), in no particular order; None when not indexed (then every claim is read)."""
        if not self.incremental:
            return None
        return list(self._extended_claims.get((pod_name, pod_uid), {}).values())

    def _held_by(self, claim: ResourceClaim | None) -> tuple[list[DeviceID], list[tuple[DeviceID, Any]]]:
        """:func:`_claim_held` of ``claim``, the last allocation's answer kept (by the allocation
        object's identity; the lists are read, never changed, by the callers). Why: one
        allocation is read three times a pod (Reserve's in-flight copy, the status write that
        stores it, PreBind's end of the flight), each a walk of its results (issues 27, 29).
        An allocation mapping is never changed in place (a change is a new mapping and a new
        claim), so its identity stands for its contents while it is kept alive here."""
        allocation = claim.allocation if claim is not None else None
        if not allocation:
            return [], []
        kept = self._held_last
        if kept is not None and kept[0] is allocation:
            return kept[1]
        held = _claim_held(claim)
        self._held_last = (allocation, held)
        return held

    def _hold(self, devices: Iterable[DeviceID], delta: int) -> None:
        held = self._held
        changed = []
        for d in devices:
            n = held.get(d, 0) + delta
            if n > 0:
                held[d] = n
            else:
                held.pop(d, None)
            if (delta > 0 and n == 1) or (delta < 0 and n == 0):
                changed.append(d)
        if not changed:
            return
        # the devices that became held or free, told at once: the node shapes set a node's bits
        # of them in one new key (a claim's devices are mostly on one node), then each listener
        # hears them in order (a device's held state is its own count alone, so reading it after
        # the loop gives what each step gave)
        now_held = delta > 0
        # (each device's _in_allocated, known from the count: held now when it became held; a
        # freed device only through a share with DRAConsumableCapacity off)
        if now_held:
            flags = [(d, True) for d in changed]
        elif self.consumable_capacity:
            flags = [(d, False) for d in changed]
        else:
            shared = self._shared
            flags = [(d, d in shared) for d in changed]
        self.node_shapes.devices_changed(flags)
        for listener in self.device_listeners:
            listener(changed, now_held)

    def _in_allocated(self, d: DeviceID) -> bool:
        """Whether :meth:`allocated_devices` (indexed) holds ``d`` now: the held bit the kept
        shape keys read for it."""
        return d in self._held or (not self.consumable_capacity and d in self._shared)

    def _hold_shares(self, shares: Iterable[tuple[DeviceID, Any]], delta: int) -> None:
        shared, capacity = self._shared, self._capacity
        for d, consumed in shares:
            n = shared.get(d, 0) + delta
            if n > 0:
                shared[d] = n
            else:
                shared.pop(d, None)
            if (delta > 0 and n == 1) or (delta < 0 and n == 0):
                # (with DRAConsumableCapacity off a shared device counts as allocated)
                self.node_shapes.device_changed(d, self._in_allocated(d))
            if consumed is not None:
                if delta > 0:
                    capacity.insert(d, _consumed(consumed))
                else:
                    capacity.remove(d, _consumed(consumed))

    def _add_slice(self, s: ResourceSlice) -> None:
        self._seq += 1
        self._slice_seq[s.name] = self._seq
        if s.node_name:
            self._slices_by_node.setdefault(s.node_name, {})[s.name] = s
        else:
            self._slices_elsewhere[s.name] = s

    def _remove_slice(self, s: ResourceSlice) -> None:
        if s.node_name:
            self._slices_by_node.get(s.node_name, {}).pop(s.name, None)
        else:
            self._slices_elsewhere.pop(s.name, None)

    # -- reads ----------------------------------------------------------------------------------
    def get_claim(self, namespace: str, name: str) -> ResourceClaim | None:
        if self.client is None:
            return None
        return self.client.get_object("ResourceClaim", name, namespace)

    def get_class(self, name: str) -> DeviceClass | None:
        if self.client is None:
            return None
        return self.client.get_object("DeviceClass", name, "")

    def device_class_resolver(self) -> ExtendedResourceCache:
        """``DeviceClassResolver``: extended resource name -> DeviceClass. Indexed: kept current
        by class events, in their order; otherwise built from the classes in the order added."""
        if self.incremental:
            return self._resolver
        lister = getattr(self.client, "list_objects", None)
        if not callable(lister):  # no client, or one that lists no objects (a plugin test's fake)
            return ExtendedResourceCache()
        return ExtendedResourceCache(lister("DeviceClass"))

    def list_claims(self) -> list[ResourceClaim]:
        """Every ResourceClaim (``ResourceClaims().List()``)."""
        lister = getattr(self.client, "list_objects", None)
        return list(lister("ResourceClaim")) if callable(lister) else []

    def _taint_rules(self) -> list[DeviceTaintRule]:
        if not self.taint_rules_enabled or self.client is None:
            return []
        if self._rules is None or not self.incremental:
            self._rules = [r for r in self.client.list_objects("DeviceTaintRule") if r.has_selector]
        return self._rules

    def _with_rules(self, slices: Iterable[ResourceSlice]) -> list[ResourceSlice]:
        """The slices with the DeviceTaintRules' taints added to the devices they select (upstream
        tracker ``applyPatches``; a slice no rule touches is returned as is)."""
        rules = self._taint_rules()
        if not rules:
            return list(slices)
        out = []
        for s in slices:
            hit = self._patched.get(id(s)) if self.incremental else None
            if hit is not None and hit[0] is s:
                out.append(hit[1])
                continue
            patched = s
            devices = list(s.devices)
            changed = False
            for rule in rules:
                if (rule.driver is not None and rule.driver != s.driver) or (
                        rule.pool is not None and rule.pool != s.pool_name):
                    continue
                for i, d in enumerate(devices):
                    if rule.device is None or rule.device == d.name:
                        devices[i] = dataclasses.replace(d, taints=(*d.taints, rule.taint))
                        changed = True
            if changed:
                patched = s.replace(devices=tuple(devices))
            if self.incremental:
                self._patched[id(s)] = (s, patched)
            out.append(patched)
        return out

    def slices(self) -> list[ResourceSlice]:
        """Every ResourceSlice (with the DeviceTaintRules' taints), in the order added."""
        if self.client is None:
            return []
        if not self.incremental:
            return self._with_rules(self.client.list_objects("ResourceSlice"))
        if self._slice_list is None:
            self._slice_list = self._with_rules(self.client.list_objects("ResourceSlice"))
        return self._slice_list

    def slices_for_node(self, node: Any) -> list[ResourceSlice]:
        """The slices that can target ``node`` (its own ones and those for many nodes), in the
        order added; all slices when not indexed."""
        if not self.incremental:
            return self.slices()
        own = self._slices_by_node.get(getattr(node, "name", ""), {})
        if not self._slices_elsewhere:
            return self._with_rules(own.values())
        if not own:
            return self._with_rules(self._slices_elsewhere.values())
        seq = self._slice_seq
        return self._with_rules(sorted((*own.values(), *self._slices_elsewhere.values()),
                                       key=lambda s: seq.get(s.name, 0)))

    def shape_key(self, node: Any) -> tuple[tuple, tuple[tuple[str, str], ...]] | None:
        """The node's shape (``NodeShapes.key`` over :meth:`slices_for_node` and
        :meth:`allocated_devices`), kept across cycles: the listeners drop it when slices, taint
        rules or the node's held devices change (indexed managers only)."""
        flags = (self.taint_rules_enabled, self.consumable_capacity)
        if flags != self._shape_flags:  # the slices or devices read differently: no kept key holds
            self._clear_shapes()
            self._shape_flags = flags
        return self.node_shapes.node_key(node, self.slices_for_node, self.allocated_devices)

    def shape_keys(self, nodes: Sequence[Any]) -> list[tuple[tuple, tuple[tuple[str, str], ...]] | None]:
        """:meth:`shape_key` of each of ``nodes`` (``NodeShapes.node_keys``)."""
        flags = (self.taint_rules_enabled, self.consumable_capacity)
        if flags != self._shape_flags:
            self._clear_shapes()
            self._shape_flags = flags
        return self.node_shapes.node_keys(nodes, self.slices_for_node, self.allocated_devices)

    def shape_keys_by_name(self, names: Sequence[str], node_at: Callable[[int], Any]
                           ) -> list[tuple[tuple, tuple[tuple[str, str], ...]] | None]:
        """:meth:`shape_keys` of the nodes named ``names`` (``node_at(i)``: the node of
        ``names[i]``, asked for only when its key is not kept)."""
        flags = (self.taint_rules_enabled, self.consumable_capacity)
        if flags != self._shape_flags:
            self._clear_shapes()
            self._shape_flags = flags
        return self.node_shapes.node_keys_by_name(names, node_at, self.slices_for_node, self.allocated_devices)

    def shape_columns(self, table: Any) -> tuple[Any, Any]:
        """The kept shape keys as columns over ``table``'s rows (``NodeShapes.columns``): each
        row's shape number (-1: not kept, ask :meth:`shape_keys_by_name`; -2: no shape) and
        pools."""
        flags = (self.taint_rules_enabled, self.consumable_capacity)
        if flags != self._shape_flags:
            self._clear_shapes()
            self._shape_flags = flags
        return self.node_shapes.columns(table)

    def has_slices_for_many_nodes(self) -> bool:
        """Whether some slice is not bound to one node by ``nodeName``."""
        if not self.incremental:
            return any(not s.node_name for s in self.slices())
        return bool(self._slices_elsewhere)

    def allocated_devices(self) -> Container[DeviceID]:
        """``ListAllAllocatedDevices``: devices of allocated claims plus in-flight allocations.

        Indexed: the live held-device mapping itself, not a copy. Upstream takes a snapshot at
        PreFilter; the mapping changes only when a claim is written or an allocation goes in
        flight, which happens after the Filter calls of the cycle that reads it (Reserve asks the
        allocator before it signals the allocation), so the allocator sees the same devices."""
        if self.incremental:
            if not self.consumable_capacity and self._shared:
                return _Union(self._held.keys(), self._shared.keys())
            return self._held.keys()
        out: set[DeviceID] = set()
        for claim in self._claims():
            devices, shares = _claim_held(claim)
            out.update(devices)
            if not self.consumable_capacity:
                out.update(d for d, _ in shares)
        return out

    def _claims(self) -> list[ResourceClaim]:
        claims = list(self.client.list_objects("ResourceClaim")) if self.client is not None else []
        return claims + list(self.in_flight.values())

    def allocated_state(self) -> AllocatedState:
        """``GatherAllocatedState``'s shares: the devices of results with a shareID and the sum of
        their consumed capacity (empty with DRAConsumableCapacity off: those devices are in
        :meth:`allocated_devices`). Indexed: live views, as :meth:`allocated_devices`."""
        if not self.consumable_capacity:
            return AllocatedState()
        if self.incremental:
            return AllocatedState(self._shared.keys(), self._capacity)
        shared: set[DeviceID] = set()
        capacity = ConsumedCapacityCollection()
        for claim in self._claims():
            for d, consumed in _claim_held(claim)[1]:
                shared.add(d)
                if consumed is not None:
                    capacity.insert(d, _consumed(consumed))
        return AllocatedState(shared, capacity)

    def is_held(self, device: DeviceID) -> bool:
        return device in self._held

    # -- in-flight allocations --------------------------------------------------------------------
    def claim_has_pending_allocation(self, uid: str) -> bool:
        return uid in self.in_flight

    def get_pending_allocation(self, uid: str) -> Mapping[str, Any] | None:
        """``GetPendingAllocation``: the in-flight allocation of the claim, None when there is none."""
        claim = self.in_flight.get(uid)
        return claim.allocation if claim is not None else None

    def signal_claim_pending_allocation(self, uid: str, claim: ResourceClaim) -> None:
        """``SignalClaimPendingAllocation`` (dra_manager.go, v1.37.2): a claim already in flight
        gains one sharer and keeps its allocation (``claim`` is ignored then: a member of a pod
        group reusing the pending allocation, see DynamicResources' PreFilter); a claim that is
        allocated in the API already (``assumedClaim.Status.Allocation != nil``: the pod's state
        was stale) is not put in flight; otherwise ``claim`` goes in flight with one sharer.
        Special claims for extended resources are not looked up (they cannot be shared)."""
        if uid in self.in_flight:
            self.in_flight_sharers[uid] += 1
            return
        if claim.name != SPECIAL_CLAIM_IN_MEM_NAME:
            current = self.get_claim(claim.namespace, claim.name)
            if current is not None and current.uid == uid and current.allocation is not None:
                return
        self.in_flight[uid] = claim
        self.in_flight_sharers[uid] = 1
        if self.incremental:
            devices, shares = self._held_by(claim)
            self._hold(devices, +1)
            if shares:
                self._hold_shares(shares, +1)

    def remove_claim_pending_allocation(self, uid: str, force: bool = True) -> bool:
        """``MaybeRemoveClaimPendingAllocation``: drop one sharer of the claim's in-flight
        allocation, or the allocation itself when it is the last one or ``force``; whether it was
        removed."""
        old = self.in_flight.get(uid)
        if old is None:
            return False
        sharers = self.in_flight_sharers[uid]
        if not force and sharers > 1:
            self.in_flight_sharers[uid] = sharers - 1
            return False
        del self.in_flight[uid]
        del self.in_flight_sharers[uid]
        if self.incremental:
            devices, shares = self._held_by(old)
            self._hold(devices, -1)
            if shares:
                self._hold_shares(shares, -1)
        return True
