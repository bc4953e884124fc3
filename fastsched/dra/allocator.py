"""The structured allocator (upstream ``k8s.io/dynamic-resource-allocation/structured``, the
``internal/stable`` variant ``NewAllocator`` picks when no alpha DRA gate is on, v1.34).

``Allocator(features, allocated_devices, get_class, slices, selector_cache).allocate(node,
claims)`` returns one allocation result per claim (``status.allocation`` as the API carries it:
``{"devices": {"results": [...], "config": [...]}, "nodeSelector": {...}}``), None when the
claims cannot all be allocated on ``node``, and raises :class:`AllocatorError` for what upstream
reports as an error (a CEL error, a missing class, "All" on an incomplete pool, ...).

The search is upstream's: depth-first with backtracking, the first complete solution wins;
claims in the given order, requests in spec order, one device at a time; for each device the
candidates are pools -> slices (list order) -> devices (slice order). Upstream takes the pools
in Go map order, i.e. randomly on every call; fastsched takes them in the order their first
slice is listed (the order the slices were added), which is one of the orders upstream can take.
With one pool per node and driver (the common case) the devices picked are the same.

Allocation results are v1.34's: ``devices.config`` lists each used class's config once per request
of the class, without ``requests`` (later releases name the requests and drop duplicates), then the
claim's config entries that apply, as given.

Alpha features (DRAPartitionableDevices, DRADeviceTaints, DRADeviceBindingConditions,
DRAConsumableCapacity) are off in v1.34 and behave as upstream with them off: slices with
``perDeviceNodeSelection`` are ignored, devices consuming counters or with binding conditions are
never picked, taints are ignored, ``distinctAttribute`` constraints are an error.
"""
from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any, Callable, Container, Iterable, Mapping, Sequence

from ..api.resource import (ALLOCATION_MODE_ALL, ALLOCATION_MODE_EXACT_COUNT, ALLOCATION_RESULTS_MAX_SIZE,
                            DeviceClass, ResourceClaim, ResourceSlice)
from ..api.cel import CELError, SelectorCache, compile_expression

__all__ = ["Features", "DeviceID", "Pool", "Allocator", "AllocatorError", "AllocationTimeout", "gather_pools",
           "allocated_devices_of"]

#: (driver, pool, device)
DeviceID = tuple


def device_id_text(device_id: DeviceID) -> str:
    """``DeviceID.String()``: ``driver/pool/device``."""
    return "/".join(device_id)


@dataclass(frozen=True, slots=True)
class Features:
    """``structured.Features``: the DRA gates the allocator honours (v1.34 defaults)."""

    admin_access: bool = True
    prioritized_list: bool = True
    partitionable_devices: bool = False
    device_taints: bool = False
    device_binding: bool = False
    consumable_capacity: bool = False


class AllocatorError(Exception):
    """An allocation error (upstream's ``Allocate`` error); the text is upstream's."""


class AllocationTimeout(AllocatorError):
    """The filter timeout ran out during the search (``context.DeadlineExceeded``)."""


class _Stop(Exception):
    """``errAllocationResultMaxSizeExceeded``: more devices than a claim's result can hold."""


class Pool:
    """A resource pool as seen from one node: its current-generation slices targeting the node."""

    __slots__ = ("driver", "pool", "slices", "is_incomplete", "is_invalid", "invalid_reason")

    def __init__(self, driver: str, pool: str, first: ResourceSlice):
        self.driver, self.pool = driver, pool
        self.slices: list[ResourceSlice] = [first]
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


def gather_pools(slices: Iterable[ResourceSlice], node: Any, features: Features) -> list[Pool]:
    """``GatherPools``: the pools with slices usable from ``node`` (out-dated generations
    dropped, incomplete and invalid pools flagged), in first-seen order."""
    pools: dict[tuple[str, str], Pool] = {}
    for s in slices:
        if not features.partitionable_devices and s.per_device_node_selection is not None:
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
        pool = pools.get(key)
        if pool is None:
            pools[key] = Pool(s.driver, s.pool_name, s)
            continue
        generation = pool.slices[0].pool_generation
        if s.pool_generation < generation:
            continue
        if s.pool_generation > generation:
            pool.slices = []
        pool.slices.append(s)
    for pool in pools.values():
        pool.is_incomplete = len(pool.slices) != pool.slices[0].resource_slice_count
        seen: set[str] = set()
        for s in pool.slices:
            for d in s.devices:
                if d.name in seen and not pool.is_invalid:
                    pool.is_invalid, pool.invalid_reason = True, f"duplicate device name {d.name}"
                seen.add(d.name)
    return list(pools.values())


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


class _Request:
    """``requestAccessor``: an ``exactly`` request or a ``firstAvailable`` subrequest."""

    __slots__ = ("name", "class_name", "mode", "count", "admin_access", "has_admin_access", "selectors",
                 "tolerations")

    def __init__(self, name: str, body: Any, *, subrequest: bool):
        self.name = name
        self.class_name = body.device_class_name
        self.mode = body.allocation_mode
        self.count = body.count
        self.admin_access = False if subrequest else bool(body.admin_access)
        self.has_admin_access = False if subrequest else body.admin_access is not None
        self.selectors = body.selectors
        self.tolerations = body.tolerations


class _RequestData:
    __slots__ = ("request", "parent", "device_class", "num_devices", "selected_sub_request", "all_devices")

    def __init__(self, request: _Request, parent: Any):
        self.request = request
        self.parent = parent  # the parent DeviceRequest of a subrequest, else None
        self.device_class: DeviceClass | None = None
        self.num_devices = 0
        self.selected_sub_request = 0
        self.all_devices: list[tuple] = []

    def request_name(self) -> str:
        return f"{self.parent.name}/{self.request.name}" if self.parent is not None else self.request.name


class _MatchAttribute:
    """``matchAttributeConstraint``: every device (of the listed requests) has the same value."""

    __slots__ = ("request_names", "attribute_name", "attribute", "num_devices")

    def __init__(self, request_names: Sequence[str], attribute_name: str):
        self.request_names = frozenset(request_names)
        self.attribute_name = attribute_name
        self.attribute = None
        self.num_devices = 0

    def _applies(self, request: str, sub: str) -> bool:
        if not self.request_names:
            return True
        if not sub:
            return request in self.request_names
        return request in self.request_names or f"{request}/{sub}" in self.request_names

    def add(self, request: str, sub: str, device: Any, device_id: DeviceID) -> bool:
        if not self._applies(request, sub):
            return True
        attribute = _lookup_attribute(device, device_id, self.attribute_name)
        if attribute is None:
            return False
        if self.num_devices == 0:
            self.attribute, self.num_devices = attribute, 1
            return True
        if attribute.kind not in ("int", "bool", "string", "version"):
            return False
        if self.attribute.kind != attribute.kind or self.attribute.value != attribute.value:
            return False
        self.num_devices += 1
        return True

    def remove(self, request: str, sub: str, device: Any, device_id: DeviceID) -> None:
        if not self._applies(request, sub):
            return
        self.num_devices -= 1


def _lookup_attribute(device: Any, device_id: DeviceID, name: str) -> Any:
    attr = device.attributes.get(name)
    if attr is not None:
        return attr
    index = name.find("/")
    if index < 0 or name[:index] != device_id[0]:
        return None
    return device.attributes.get(name[index + 1:])


def _claim_ref(claim: ResourceClaim) -> str:
    """``klog.KObj(claim)``."""
    return f"{claim.namespace}/{claim.name}" if claim.namespace else claim.name


class Allocator:
    """``structured.NewAllocator``: reusable for many nodes within one scheduling cycle.

    ``allocated_devices``: the devices already allocated in the cluster (plus in-flight
    allocations); ``get_class(name)`` returns the DeviceClass or None; ``slices`` every
    ResourceSlice, or a callable ``slices(node)`` returning (at least) the slices that can target
    the node, in the order added; ``selector_cache`` the cross-cycle CEL result cache (a fresh one when None);
    ``deadline`` a ``time.monotonic()`` value after which the search stops (filterTimeout).
    """

    def __init__(self, features: Features, allocated_devices: Container[DeviceID], get_class: Callable[[str], DeviceClass | None],
                 slices: Sequence[ResourceSlice] | Callable[[Any], Sequence[ResourceSlice]],
                 selector_cache: SelectorCache | None = None):
        self.features = features
        self.allocated_devices = allocated_devices
        self.get_class = get_class
        if callable(slices):
            self.slices_for_node = slices
        else:
            listed = list(slices)
            self.slices_for_node = lambda node: listed
        self.selector_cache = selector_cache if selector_cache is not None else SelectorCache()
        #: allocateOne invocations (``Stats.NumAllocateOneInvocations``)
        self.num_allocate_one_invocations = 0

    def allocate(self, node: Any, claims: Sequence[ResourceClaim], deadline: float | None = None) -> list[dict] | None:
        """``Allocate``: one allocation result per claim, None when there is no solution."""
        return _Allocation(self, node, claims, deadline).run()


class _Allocation:
    """``allocator``: the state of one ``Allocate`` call."""

    def __init__(self, owner: Allocator, node: Any, claims: Sequence[ResourceClaim], deadline: float | None):
        self.a = owner
        self.node = node
        self.claims = list(claims)
        self.deadline = deadline
        self.pools: list[Pool] = []
        self.request_data: dict[tuple[int, int, int], _RequestData] = {}
        self.constraints: list[list[_MatchAttribute]] = [[] for _ in self.claims]
        self.matches: dict[tuple, bool] = {}
        self.allocating: dict[DeviceID, set[int]] = {}
        # per claim: list of (request name, parent name, device id, device, slice, admin access)
        self.result: list[list[tuple]] = [[] for _ in self.claims]

    # -- setup ----------------------------------------------------------------------------------
    def run(self) -> list[dict] | None:
        features = self.a.features
        self.pools = gather_pools(self.a.slices_for_node(self.node), self.node, features)
        for ci, claim in enumerate(self.claims):
            min_devices = 0
            for ri, request in enumerate(claim.requests):
                has_sub = bool(request.first_available)
                if not features.prioritized_list and has_sub:
                    raise AllocatorError(f"claim {_claim_ref(claim)}, request {request.name}: has subrequests, but the "
                                         f"DRAPrioritizedList feature is disabled")
                if has_sub:
                    least = None
                    for si, sub in enumerate(request.first_available):
                        data = self._validate_request(ci, (ci, ri, si), _Request(sub.name, sub, subrequest=True), request)
                        self.request_data[(ci, ri, si)] = data
                        least = data.num_devices if least is None else min(least, data.num_devices)
                    min_devices += least or 0
                else:
                    body = request.exactly
                    if body is None:
                        raise AllocatorError(f"claim {_claim_ref(claim)}, request {request.name}: missing device class "
                                             f"name (unsupported request type?)")
                    data = self._validate_request(ci, (ci, ri, 0), _Request(request.name, body, subrequest=False), None)
                    self.request_data[(ci, ri, 0)] = data
                    min_devices += data.num_devices
            if min_devices > ALLOCATION_RESULTS_MAX_SIZE:
                raise AllocatorError(f"claim {_claim_ref(claim)}: number of requested devices {min_devices} exceeds the "
                                     f"claim limit of {ALLOCATION_RESULTS_MAX_SIZE}")
            constraints = []
            for i, c in enumerate(claim.constraints):
                if c.match_attribute:
                    constraints.append(_MatchAttribute(c.requests, c.match_attribute))
                else:
                    raise AllocatorError(f"claim {_claim_ref(claim)}, constraint #{i}: empty constraint (unsupported "
                                         f"constraint type?)")
            self.constraints[ci] = constraints
        try:
            done = self._allocate_one(0, 0, 0, 0, False)
        except _Stop:
            done = False
        if not done:
            return None
        return [self._result(ci) for ci in range(len(self.claims))]

    def _validate_request(self, ci: int, key: tuple, request: _Request, parent: Any) -> _RequestData:
        claim = self.claims[ci]
        data = _RequestData(request, parent)
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
                            data.all_devices.append(((s.driver, s.pool_name, device.name), device, s, pool))
            data.num_devices = len(data.all_devices)
        else:
            raise AllocatorError(f"claim {_claim_ref(claim)}, request {request.name}: unsupported count mode "
                                 f"{request.mode}")
        return data

    # -- search ---------------------------------------------------------------------------------
    def _allocate_one(self, ci: int, ri: int, si: int, di: int, allocate_sub_request: bool) -> bool:
        self.a.num_allocate_one_invocations += 1
        if self.deadline is not None and time.monotonic() > self.deadline:
            raise AllocationTimeout("filter operation aborted: context deadline exceeded")
        if ci >= len(self.claims):
            return True
        claim = self.claims[ci]
        if ri >= len(claim.requests):
            try:
                return self._allocate_one(ci + 1, 0, 0, 0, False)
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
                    success = self._allocate_one(ci, ri, sub, di, True)
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
            return self._allocate_one(ci, ri + 1, 0, 0, False)
        if len(self.result[ci]) + data.num_devices - di > ALLOCATION_RESULTS_MAX_SIZE:
            raise _Stop()
        if do_all:
            device_id, device, s, pool = data.all_devices[di]
            ok, undo = self._allocate_device(ci, key, device_id, device, s, must=True)
            if not ok:
                return False
            try:
                done = self._allocate_one(ci, ri, si, di + 1, allocate_sub_request)
            except BaseException:
                undo()
                raise
            if not done:
                undo()
            return done
        admin = request.admin_access
        for pool in self.pools:
            # Upstream (v1.34 allocator_stable.go allocateOne) takes devices from incomplete pools
            # too, and fails when the search reaches an invalid pool: allocating from one is unsafe.
            # Found by the differential oracle (tests/oracle).
            if pool.is_invalid:
                raise AllocatorError(f"pool {pool.pool} is invalid: {pool.invalid_reason}")
            for s in pool.slices:
                for device in s.devices:
                    device_id = (pool.driver, pool.pool, device.name)
                    if admin:
                        if ci in self.allocating.get(device_id, ()):
                            continue
                    elif device_id in self.a.allocated_devices or self.allocating.get(device_id):
                        continue
                    if not self._is_selectable(key, data, s, device):
                        continue
                    ok, undo = self._allocate_device(ci, key, device_id, device, s, must=False)
                    if not ok:
                        continue
                    try:
                        done = self._allocate_one(ci, ri, si, di + 1, allocate_sub_request)
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
            compiled = compile_expression(sel.cel)
            where = f"class {device_class.name}" if device_class is not None else f"claim {_claim_ref(self.claims[ci])}"
            if compiled.error:
                raise AllocatorError(f"{where}: selector #{i}: CEL compile error: {compiled.error}")
            try:
                matched = self.a.selector_cache.matches(compiled, s.driver, device)
            except CELError as e:
                # v1.34's words (allocator_stable.go selectorsMatch): no device in the message; later
                # releases name it. Found by the differential oracle (tests/oracle).
                raise AllocatorError(f"{where}: selector #{i}: CEL runtime error: {e}") from None
            if not matched:
                return False
        return True

    def _allocate_device(self, ci: int, key: tuple, device_id: DeviceID, device: Any, s: ResourceSlice,
                         must: bool) -> tuple[bool, Callable[[], None] | None]:
        claim = self.claims[ci]
        data = self.request_data[key]
        request = data.request
        if request.admin_access:
            if ci in self.allocating.get(device_id, ()):
                return False, None
        elif device_id in self.a.allocated_devices or self.allocating.get(device_id):
            return False, None
        if not self.a.features.partitionable_devices and device.consumes_counters:
            return False, None
        if data.parent is None:
            base, sub = request.name, ""
        else:
            base, sub = data.parent.name, request.name
        constraints = self.constraints[ci]
        for i, c in enumerate(constraints):
            if not c.add(base, sub, device, device_id):
                if must:
                    raise AllocatorError(f"claim {_claim_ref(claim)}, request {request.name}: cannot add device "
                                         f"{device_id_text(device_id)} because a claim constraint would not be satisfied")
                for e in range(i):
                    constraints[e].remove(base, sub, device, device_id)
                return False, None
        self.allocating.setdefault(device_id, set()).add(ci)
        results = self.result[ci]
        previous = len(results)
        results.append((request.name, data.parent.name if data.parent is not None else "", device_id, device, s,
                        request.admin_access, request.tolerations))

        def undo() -> None:
            for c in constraints:
                c.remove(base, sub, device, device_id)
            self.allocating[device_id].discard(ci)
            del results[previous:]

        return True, undo

    # -- results --------------------------------------------------------------------------------
    def _result(self, ci: int) -> dict:
        claim = self.claims[ci]
        results = []
        for name, parent, device_id, device, s, admin, tolerations in self.result[ci]:
            entry: dict[str, Any] = {"request": f"{parent}/{name}" if parent else name, "driver": device_id[0],
                                     "pool": device_id[1], "device": device_id[2]}
            if admin:
                entry["adminAccess"] = True
            if tolerations:
                entry["tolerations"] = [dict(t) for t in tolerations]
            results.append(entry)
        # v1.34: each used class's config once per request using the class, without ``requests``
        # (later releases name the requests, drop duplicates and clear lists covering every
        # request); then the claim's config entries that apply, as given
        config: list[dict] = []
        for ri, request in enumerate(claim.requests):
            data = self.request_data[(ci, ri, 0)]
            if data.parent is not None:
                data = self.request_data[(ci, ri, data.selected_sub_request)]
            if data.device_class is None:
                continue
            for c in data.device_class.config:
                config.append({"source": "FromClass", **_device_configuration(c)})
        for c in claim.config:
            requests = list(c.get("requests") or ())
            if not requests:
                config.append({"source": "FromClaim", **_device_configuration(c)})
                continue
            for ri, request in enumerate(claim.requests):
                if request.name in requests:
                    config.append({"source": "FromClaim", "requests": requests, **_device_configuration(c)})
                    continue
                data = self.request_data[(ci, ri, 0)]
                if data.parent is None:
                    continue
                sub = request.first_available[data.selected_sub_request]
                if f"{request.name}/{sub.name}" in requests:
                    config.append({"source": "FromClaim", "requests": requests, **_device_configuration(c)})
        allocation: dict[str, Any] = {"devices": {"results": results}}
        if config:
            allocation["devices"]["config"] = config
        node_selector = self._node_selector(ci)
        if node_selector is not None:
            allocation["nodeSelector"] = node_selector
        return allocation

    def _node_selector(self, ci: int) -> dict | None:
        """``createNodeSelector``."""
        fields: list[dict] = []
        expressions: list[dict] = []
        for _name, _parent, _id, device, s, _admin, _tol in self.result[ci]:
            if s.per_device_node_selection:
                node_name, spec = device.node_name, device.node_selector_spec
            else:
                node_name, spec = s.node_name, s.node_selector_spec
            if node_name:
                return {"nodeSelectorTerms": [{"matchFields": [
                    {"key": "metadata.name", "operator": "In", "values": [node_name]}]}]}
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
