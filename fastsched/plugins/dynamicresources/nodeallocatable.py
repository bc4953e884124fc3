"""DRANodeAllocatableResources in DynamicResources (upstream v1.37.2
``pkg/scheduler/framework/plugins/dynamicresources/nodeallocatabledynamicresources.go``).

A device may say what an allocation of it takes from the node's own allocatable
(``Device.nodeAllocatableResources``: cpu, memory, ``hugepages-*``): a *mapping* (the consumed
capacity times ``capacityMultiplier``, or ``deviceMultiplier`` per device) and an *overhead*
(``perPod`` plus ``perContainer`` for each container referencing the claim). Filter sums these
per claim into the pod's ``status.nodeAllocatableResourceClaimStatuses`` (``buildNodeAllocatableDRAInfo``),
adds them to the pod's requests (``PodRequests`` with ``UseDRANodeAllocatableResourceClaimStatus``)
and checks the total against the node's free allocatable (``nodeFitsResources``); the scheduler
copies the statuses into the assumed pod, PreBind writes them, Unreserve clears them. A claim with a
*mapped* device cannot be shared by two pods (``validateNodeAllocatableDRAClaimSharing``).

Statuses are kept as API maps (``resourceClaimName``, ``containers``, ``mapping`` [{name, quantity}],
``overhead`` [{name, perPod, perContainer}]) with quantities as upstream writes them
(``Quantity.String()``), so they can be written into the pod as they are.
"""
from __future__ import annotations

from fractions import Fraction
from typing import Any, Iterable, Mapping, Sequence

from ...api.quantity import canonical_text, format_of, nanos_from_amount, parse_quantity
from ...api.resources import aggregate_container_request_nanos, node_allocatable_claim_nanos, pod_requests
from ...framework.status import Code, Status

__all__ = [
    "ClaimKey",
    "SHARING_MESSAGE",
    "filter_slices_for_node",
    "get_device_from_slices",
    "add_device_mapping",
    "add_device_overhead",
    "build_node_allocatable_dra_info",
    "claim_has_mapped_device",
    "validate_claim_sharing",
    "validate_pod_level_resources_cover_dra",
    "node_fits_resources",
    "statuses_nanos",
    "pod_requests_with_statuses",
]

#: validateNodeAllocatableDRAClaimSharing's message (``%s``: the claim's name)
SHARING_MESSAGE = "node allocatable resource claim {} has a mapped device and cannot be shared across pods"

_NANOS = 10**9

#: (namespace, name, uid): upstream keys the allocations by a ``v1.ObjectReference`` of these
ClaimKey = tuple[str, str, str]


class _Q:
    """An exact quantity being summed: nano-units and the ``Format`` upstream's ``Add`` keeps
    (a zero-valued Quantity takes the first addend's)."""

    __slots__ = ("nanos", "fmt")

    def __init__(self, nanos: int, fmt: str):
        self.nanos, self.fmt = nanos, fmt

    def text(self) -> str:
        return canonical_text(self.nanos, self.fmt)

    def add(self, nanos: int, fmt: str) -> None:
        """``Quantity.Add``: a sum whose value is still zero takes the addend's format (whatever
        format the zero had: a consumed capacity of "0" followed by a deviceMultiplier of "8Gi" sums
        to "8Gi", as upstream prints it)."""
        if self.nanos == 0:
            self.fmt = fmt
        self.nanos += nanos


def _selector_matches(spec: Any, node: Any) -> bool:
    """``nodeaffinity.NewNodeSelector(spec).Match(node)``; a selector that does not parse matches
    nothing (upstream skips it on the error)."""
    if spec is None:
        return False
    if getattr(spec, "parse_errors", None):
        return False
    return bool(spec.matches(node))


def filter_slices_for_node(slices: Iterable[Any], node: Any) -> list[Any]:
    """``filterSlicesForNode``: the slices for ``node`` (its own, all-nodes ones, those whose node
    selector matches it, and per-device ones, whose devices are checked later); every slice when
    ``node`` is None."""
    slices = list(slices)
    if node is None:
        return slices
    out = []
    for rs in slices:
        if rs.node_name and rs.node_name == node.name:
            out.append(rs)
        elif rs.all_nodes:
            out.append(rs)
        elif rs.node_selector is not None:
            if _selector_matches(rs.node_selector, node):
                out.append(rs)
        elif rs.per_device_node_selection:
            out.append(rs)
    return out


def _device_matches_node(device: Any, node: Any) -> bool:
    """``deviceMatchesNode``."""
    if node is None:
        return True
    if device.node_name and device.node_name == node.name:
        return True
    if device.all_nodes:
        return True
    if device.node_selector is not None and _selector_matches(device.node_selector, node):
        return True
    return False


def get_device_from_slices(slices: Sequence[Any], result: Mapping[str, Any], node: Any) -> Any:
    """``getDeviceFromSlices``: the device a result names, from the first slice of its driver and
    pool holding it; LookupError (upstream's error text) when none does or when a per-device slice's
    device does not match ``node``."""
    driver, pool, name = result.get("driver", ""), result.get("pool", ""), result.get("device", "")
    for rs in slices:
        if rs.driver == driver and rs.pool_name == pool:
            for device in rs.devices:
                if device.name == name:
                    if rs.per_device_node_selection and not _device_matches_node(device, node):
                        raise LookupError(f"device {name} does not match node")
                    return device
    raise LookupError(f"device {name} not found in pool {pool} for driver {driver}")


def add_device_mapping(resource_name: str, mapping: Any, result: Mapping[str, Any], key: ClaimKey,
                       totals: dict[str, _Q]) -> None:
    """``addDeviceMapping``: ``consumedCapacity[capacityKey] x capacityMultiplier`` (nothing when
    the result did not consume that capacity), else ``deviceMultiplier``; ValueError when a
    capacity key is set but the result has no consumed capacity at all."""
    if mapping.capacity_key:
        consumed = result.get("consumedCapacity")
        if consumed is None:
            raise ValueError(f"claim {key[0]}/{key[1]}, device {result.get('device', '')}: ConsumedCapacity is nil, "
                             f"but Capacity key '{mapping.capacity_key}' is set in NodeAllocatableResources for "
                             f"resource {resource_name}")
        if mapping.capacity_key in consumed:
            q = parse_quantity(consumed[mapping.capacity_key])
            nanos, fmt = q.nano_value(), format_of(q)
            m = mapping.capacity_multiplier
            if m is not None and m.nano_value() != _NANOS:
                # inf.Dec multiplication is exact; a product finer than a nano-unit is rounded up
                # (the requests built from it round up too)
                product = Fraction(nanos) * Fraction(m.nano_value(), _NANOS)
                nanos = -((-product.numerator) // product.denominator)
            _add(totals, resource_name, nanos, fmt)
        return
    if mapping.device_multiplier is not None:
        q = mapping.device_multiplier
        _add(totals, resource_name, q.nano_value(), format_of(q))


def _add(totals: dict[str, _Q], name: str, nanos: int, fmt: str) -> None:
    current = totals.get(name)
    if current is None:
        totals[name] = _Q(nanos, fmt)
    else:
        current.add(nanos, fmt)


def add_device_overhead(resource_name: str, overhead: Any, totals: dict[str, list[_Q | None]]) -> None:
    """``addDeviceOverhead``: per-pod and per-container amounts summed per resource."""
    if overhead.per_pod is None and overhead.per_container is None:
        return
    current = totals.setdefault(resource_name, [None, None])
    for slot, q in ((0, overhead.per_pod), (1, overhead.per_container)):
        if q is None:
            continue
        have = current[slot]
        if have is None:
            current[slot] = _Q(q.nano_value(), format_of(q))
        else:
            have.add(q.nano_value(), format_of(q))


def _container_claim_names(container: Mapping[str, Any]) -> list[str]:
    resources = container.get("resources") or {}
    return [c.get("name", "") for c in (resources.get("claims") or []) if isinstance(c, Mapping)]


def _pod_containers(pod: Any) -> tuple[list[Mapping[str, Any]], list[Mapping[str, Any]]]:
    """The pod's init containers and containers as API maps (their ``resources.claims``)."""
    spec = (getattr(pod, "manifest", None) or {}).get("spec") or {}
    return list(spec.get("initContainers") or []), list(spec.get("containers") or [])


def build_node_allocatable_dra_info(pod: Any, allocations: Mapping[ClaimKey, Mapping[str, Any]],
                                    claim_name_to_uid: Mapping[str, str], slices: Sequence[Any],
                                    node: Any) -> list[dict[str, Any]]:
    """``buildNodeAllocatableDRAInfo``: one status per claim whose devices map or add overhead,
    its containers those (init containers first) referencing the claim through the pod's claim
    names, sorted by claim name; the mappings and overheads sorted by resource name. LookupError /
    ValueError with upstream's text when a device is not found or a mapping cannot be computed."""
    if not allocations:
        return []
    by_uid: dict[str, dict[str, Any]] = {}
    for key, alloc in allocations.items():
        mapped: dict[str, _Q] = {}
        overheads: dict[str, list[_Q | None]] = {}
        for result in (alloc.get("devices") or {}).get("results") or []:
            try:
                device = get_device_from_slices(slices, result, node)
            except LookupError as e:
                raise LookupError(f"claim {key[0]}/{key[1]}, device {result.get('device', '')}, driver "
                                  f"{result.get('driver', '')}: {e}") from None
            if device is None or not device.node_allocatable_resources:
                continue
            for name, entry in device.node_allocatable_resources.items():
                if entry.mapping is not None:
                    add_device_mapping(name, entry.mapping, result, key, mapped)
                if entry.overhead is not None:
                    add_device_overhead(name, entry.overhead, overheads)
        if mapped or overheads:
            overhead_list = []
            for name in sorted(overheads):
                per_pod, per_container = overheads[name]
                item: dict[str, Any] = {"name": name}
                if per_pod is not None:
                    item["perPod"] = per_pod.text()
                if per_container is not None:
                    item["perContainer"] = per_container.text()
                overhead_list.append(item)
            by_uid[key[2]] = {
                "resourceClaimName": key[1],
                "containers": [],
                "mapping": [{"name": name, "quantity": mapped[name].text()} for name in sorted(mapped)],
                "overhead": overhead_list,
            }
    init_containers, containers = _pod_containers(pod)
    for group in (init_containers, containers):
        for container in group:
            for claim_name in _container_claim_names(container):
                uid = claim_name_to_uid.get(claim_name)
                if uid is not None and uid in by_uid:
                    by_uid[uid]["containers"].append(container.get("name", ""))
    return sorted(by_uid.values(), key=lambda s: s["resourceClaimName"])


def claim_has_mapped_device(allocation: Mapping[str, Any] | None, slices: Sequence[Any]) -> bool:
    """PreFilter's ``claimHasNodeAllocatableMappedDevice`` for one allocation: some device of it
    (looked up in every slice, without a node) has a ``mapping`` entry."""
    if allocation is None:
        return False
    for result in (allocation.get("devices") or {}).get("results") or []:
        try:
            device = get_device_from_slices(slices, result, None)
        except LookupError:
            continue
        if device is not None and any(e.mapping is not None for e in device.node_allocatable_resources.values()):
            return True
    return False


def validate_claim_sharing(pod: Any, claim: Any, mapped: Mapping[str, bool],
                           pending_allocations: Mapping[str, set[str]] | None, reserved_for_pod: bool) -> Status | None:
    """``validateNodeAllocatableDRAClaimSharing``: a claim with a mapped device reserved for some
    other consumer, or put in flight by another member of this pod group cycle, fails the pod
    (UnschedulableAndUnresolvable). ``reserved_for_pod``: ``IsReservedForPod`` with the
    DRAWorkloadResourceClaims gate's group rule."""
    if claim is None:
        return None
    if not mapped.get(claim.uid, False):
        return None  # overhead-only claims may be shared
    if claim.reserved_for and not reserved_for_pod:
        return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, SHARING_MESSAGE.format(claim.name))
    if pending_allocations is not None:
        for uid in pending_allocations.get(claim.uid, ()):
            if uid != pod.uid:
                return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, SHARING_MESSAGE.format(claim.name))
    return None


def statuses_nanos(statuses: Sequence[Mapping[str, Any]]) -> dict[str, int]:
    """What the statuses add to the pod's requests, in nano-units (``addDRANodeAllocatableClaimResources``)."""
    parsed = []
    for status in statuses:
        parsed.append({
            "containers": tuple(status.get("containers") or ()),
            "mapping": [(m["name"], parse_quantity(m["quantity"]).nano_value())
                        for m in status.get("mapping") or () if m.get("quantity") is not None],
            "overhead": [(o["name"],
                          None if o.get("perPod") is None else parse_quantity(o["perPod"]).nano_value(),
                          None if o.get("perContainer") is None else parse_quantity(o["perContainer"]).nano_value())
                         for o in status.get("overhead") or ()],
        })
    return node_allocatable_claim_nanos(parsed)


class _WithStatuses:
    """The pod with other claim statuses (upstream's shallow ``podCopy``): what ``pod_requests``
    reads."""

    __slots__ = ("containers", "init_containers", "overhead_nanos", "resources", "node_allocatable_claim_nanos")

    def __init__(self, pod: Any, nanos: Mapping[str, int], skip_pod_level: bool = False):
        self.containers = pod.containers
        self.init_containers = pod.init_containers
        self.overhead_nanos = pod.overhead_nanos
        self.resources = None if skip_pod_level else pod.resources
        self.node_allocatable_claim_nanos = nanos


def pod_requests_with_statuses(pod: Any, statuses: Sequence[Mapping[str, Any]], *, skip_pod_level: bool = False,
                               exclude_overhead: bool = False) -> dict[str, int]:
    """``PodRequests`` of the pod with ``statuses`` as its claim statuses (cpu in millicores)."""
    return pod_requests(_WithStatuses(pod, statuses_nanos(statuses), skip_pod_level),
                        exclude_overhead=exclude_overhead)


def _is_supported_pod_level_resource(name: str) -> bool:
    return name in ("cpu", "memory") or name.startswith("hugepages-")


class _Limits:
    """A container seen through its limits (what ``aggregate_container_request_nanos`` sums:
    upstream's ``aggregateContainerResourcesByFn`` with ``containerSpecLimits``)."""

    __slots__ = ("request_nanos", "is_sidecar")

    def __init__(self, container: Any):
        self.request_nanos = {name: nanos_from_amount(name, amount) for name, amount in container.limits.items()}
        self.is_sidecar = container.is_sidecar


def _status_amounts(status: Mapping[str, Any]) -> list[tuple[str, int]]:
    """A status's (name, nanos) amounts as ``GetContainerDRAAllocations`` adds them for one of
    its containers: each mapped quantity, each overhead's perPod plus perContainer once."""
    out = [(m["name"], parse_quantity(m["quantity"]).nano_value()) for m in status.get("mapping") or ()
           if m.get("quantity") is not None]
    for o in status.get("overhead") or ():
        amount = sum(parse_quantity(o[k]).nano_value() for k in ("perPod", "perContainer") if o.get(k) is not None)
        out.append((o["name"], amount))
    return out


def _limits_error(pod: Any, statuses: Sequence[Mapping[str, Any]], pod_limits: Mapping[str, int]) -> Status | None:
    """``validatePodLevelResourcesCoverDRA``'s limits part."""
    # AggregateContainerLimits with the claim statuses: the containers' limits aggregated, then
    # the claims' amounts added where a limit is declared (always for hugepages)
    limits = aggregate_container_request_nanos([_Limits(c) for c in pod.containers],
                                               [_Limits(c) for c in pod.init_containers])
    for name, amount in statuses_nanos(statuses).items():
        if name in limits or name.startswith("hugepages-"):
            limits[name] = limits.get(name, 0) + amount
    for name, amount in limits.items():  # (Go ranges a map: the first failing one at random)
        if not name.startswith("hugepages-") or name not in pod_limits:
            continue
        if amount > nanos_from_amount(name, pod_limits[name]):
            return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, f"pod level limit for {name} is insufficient to "
                          f"cover the aggregated container and node-allocatable DRA limits")
    # each container's limits plus its DRA allocations (GetContainerDRAAllocations) within the pod's
    for container in pod.containers:
        allocations: dict[str, int] = {}
        for status in statuses:
            if container.name in (status.get("containers") or ()):
                for name, amount in _status_amounts(status):
                    allocations[name] = allocations.get(name, 0) + amount
        for name, limit in container.limits.items():
            if name.startswith("hugepages-") or name not in pod_limits:
                continue
            if nanos_from_amount(name, limit) + allocations.get(name, 0) > nanos_from_amount(name, pod_limits[name]):
                return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, f"pod level limit for {name} is insufficient to "
                              f"cover the limit and DRA overhead for container {container.name}")
    return None


def validate_pod_level_resources_cover_dra(pod: Any, statuses: Sequence[Mapping[str, Any]]) -> Status | None:
    """``validatePodLevelResourcesCoverDRA``: a pod-level request below the containers' aggregate
    plus the claims' amounts, a pod-level hugepages limit below the containers' aggregate limits
    plus the claims', or a pod-level limit below one container's limit plus the claims' amounts
    that container references fails the pod (UnschedulableAndUnresolvable)."""
    resources = getattr(pod, "resources", None)
    if resources is None or not statuses:
        return None
    requests = resources.requests
    if requests:
        # AggregateContainerRequests with SkipPodLevelResources: exact sums, no overhead
        without = aggregate_container_request_nanos(pod.containers, pod.init_containers)
        for name, amount in statuses_nanos(statuses).items():
            without[name] = without.get(name, 0) + amount
        nanos = resources.request_nanos
        for name in requests:  # (Go ranges a map: the first failing resource in random order)
            if not _is_supported_pod_level_resource(name) or name not in without:
                continue
            if without[name] > nanos.get(name, 0):
                return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, f"pod level request for {name} is insufficient to "
                              f"cover the aggregated container and node-allocatable DRA requests")
    if resources.limits:
        return _limits_error(pod, statuses, resources.limits)
    return None


def node_fits_resources(allocatable: Any, requested: Any, request: Mapping[str, int]) -> Status | None:
    """``nodeFitsResources``: the pod's whole footprint (``request``: cpu in millicores) against
    the node's allocatable less what is requested there: ``Insufficient cpu``, ``memory``,
    ``ephemeral-storage``, ``hugepages-*``; UnschedulableAndUnresolvable when a footprint exceeds
    the allocatable itself (preemption cannot help), else Unschedulable."""
    reasons: list[str] = []
    unresolvable = False
    for name, reason, alloc, used in (
            ("cpu", "Insufficient cpu", allocatable.milli_cpu, requested.milli_cpu),
            ("memory", "Insufficient memory", allocatable.memory, requested.memory),
            ("ephemeral-storage", "Insufficient ephemeral-storage", allocatable.ephemeral_storage,
             requested.ephemeral_storage)):
        want = request.get(name, 0)
        if want > 0 and want > alloc - used:
            reasons.append(reason)
            unresolvable = unresolvable or want > alloc
    for name, want in request.items():  # (Go ranges a map; the reasons are sorted by the FitError)
        if not name.startswith("hugepages-"):
            continue
        alloc = allocatable.scalar_resources.get(name, 0)
        used = requested.scalar_resources.get(name, 0)
        if want > alloc - used:
            reasons.append(f"Insufficient {name}")
            unresolvable = unresolvable or want > alloc
    if not reasons:
        return None
    return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE if unresolvable else Code.UNSCHEDULABLE, *reasons)


def claim_statuses_of(pod: Any) -> list[Any]:
    """The pod's ``status.nodeAllocatableResourceClaimStatuses`` as written (API maps)."""
    status = (getattr(pod, "manifest", None) or {}).get("status") or {}
    return list(status.get("nodeAllocatableResourceClaimStatuses") or [])


def with_claim_statuses(pod: Any, statuses: Sequence[Mapping[str, Any]] | None) -> Any:
    """A copy of ``pod`` whose ``status.nodeAllocatableResourceClaimStatuses`` is ``statuses``
    (removed when empty, as the omitempty field is), with the amounts its requests count."""
    manifest = dict(getattr(pod, "manifest", None) or {})
    status = dict(manifest.get("status") or {})
    if statuses:
        status["nodeAllocatableResourceClaimStatuses"] = [dict(s) for s in statuses]
    else:
        status.pop("nodeAllocatableResourceClaimStatuses", None)
    manifest["status"] = status
    return pod.replace(manifest=manifest, node_allocatable_claim_nanos=statuses_nanos(statuses or ()))
