"""Effective pod resource requests (upstream ``component-helpers/resource.PodRequests``).

Sums are computed on exact nano-unit amounts and converted at the end (millicores for cpu,
``Quantity.Value()`` for everything else), exactly as upstream adds ``Quantity`` values before
calling ``MilliValue()``/``Value()``.

PodLevelResources is beta and enabled by default in v1.34, so ``spec.resources.requests`` for
cpu, memory and ``hugepages-*`` replace the aggregated container values. In-place resize
(``UseStatusResources``) is not modelled: for pending pods it is the spec anyway.
"""
from __future__ import annotations

from typing import Any, Iterable, Mapping, Protocol

from .quantity import amount_from_nanos

__all__ = [
    "DEFAULT_MILLI_CPU_REQUEST",
    "DEFAULT_MEMORY_REQUEST",
    "pod_requests",
    "non_zero_pod_requests",
    "aggregate_container_request_nanos",
    "is_pod_level_resource",
    "node_allocatable_claim_nanos",
    "requests_without_claim_statuses",
]

#: Scheduler default cpu request, in millicores, for a container that sets none (upstream
#: ``schedutil.DefaultMilliCPURequest``).
DEFAULT_MILLI_CPU_REQUEST = 100
#: Scheduler default memory request, in bytes (200 MiB), for a container that sets none.
DEFAULT_MEMORY_REQUEST = 200 * 1024 * 1024

_CPU = "cpu"
_MEMORY = "memory"
_NANOS_PER_MILLI = 10**6
_NANOS_PER_UNIT = 10**9
# Non-negative nano amounts up to this convert without saturating (even in millicores).
_SAFE_NANOS = (2**63 - 1) * _NANOS_PER_MILLI
_HUGEPAGES_PREFIX = "hugepages-"
_DEFAULT_REQUEST_NANOS = {
    _CPU: DEFAULT_MILLI_CPU_REQUEST * _NANOS_PER_MILLI,
    _MEMORY: DEFAULT_MEMORY_REQUEST * _NANOS_PER_UNIT,
}


# read-only members (properties): the API objects are frozen, and a settable protocol member
# would not accept their fields
class _ContainerRequests(Protocol):
    @property
    def request_nanos(self) -> Mapping[str, int]: ...

    @property
    def is_sidecar(self) -> bool: ...


class _PodResourcesLike(Protocol):
    @property
    def request_nanos(self) -> Mapping[str, int]: ...


class _PodLike(Protocol):
    @property
    def containers(self) -> Iterable[_ContainerRequests]: ...

    @property
    def init_containers(self) -> Iterable[_ContainerRequests]: ...

    @property
    def overhead_nanos(self) -> Mapping[str, int]: ...

    @property
    def resources(self) -> _PodResourcesLike | None: ...

    @property
    def node_allocatable_claim_nanos(self) -> Mapping[str, int]: ...


def is_pod_level_resource(name: str) -> bool:
    """Whether ``spec.resources`` may set this resource (cpu, memory, ``hugepages-*``)."""
    return name == _CPU or name == _MEMORY or name.startswith(_HUGEPAGES_PREFIX)


def _pod_level_requests(pod: _PodLike) -> Mapping[str, int] | None:
    """The pod-level request nanos when ``IsPodLevelRequestsSet``, else None."""
    resources = pod.resources
    if resources is None:
        return None
    requests = resources.request_nanos
    for name in requests:
        if is_pod_level_resource(name):
            return requests
    return None


def _with_defaults(requests: Mapping[str, int], defaults: Mapping[str, int]) -> Mapping[str, int]:
    # upstream applyNonMissing: only an absent entry gets the default; an explicit 0 stays 0.
    missing = [name for name in defaults if name not in requests]
    if not missing:
        return requests
    merged = dict(requests)
    for name in missing:
        merged[name] = defaults[name]
    return merged


def _add_into(total: dict[str, int], addend: Mapping[str, int]) -> None:
    for name, amount in addend.items():
        total[name] = total.get(name, 0) + amount


def aggregate_container_request_nanos(containers: Iterable[_ContainerRequests],
                                      init_containers: Iterable[_ContainerRequests],
                                      defaults: Mapping[str, int] | None = None) -> dict[str, int]:
    """Upstream ``AggregateContainerRequests`` on exact nano-unit amounts: no pod-level
    resources, no overhead. ``defaults`` are nano amounts given to containers missing them."""
    total: dict[str, int] = {}
    for container in containers:
        requests = container.request_nanos
        if defaults:
            requests = _with_defaults(requests, defaults)
        _add_into(total, requests)

    # Init containers run one at a time, but restartable ("sidecar") ones keep running: while a
    # normal init container runs, the sidecars started before it run too, and every sidecar
    # keeps running alongside the regular containers (KEP-753).
    sidecars_running: dict[str, int] = {}
    init_peak: dict[str, int] = {}
    for container in init_containers:
        requests = container.request_nanos
        if defaults:
            requests = _with_defaults(requests, defaults)
        if container.is_sidecar:
            _add_into(total, requests)
            _add_into(sidecars_running, requests)
            candidate = sidecars_running
        else:
            candidate = dict(requests)
            _add_into(candidate, sidecars_running)
        for name, amount in candidate.items():
            if name not in init_peak or amount > init_peak[name]:
                init_peak[name] = amount
    for name, amount in init_peak.items():
        if name not in total or amount > total[name]:
            total[name] = amount
    return total


def _pod_request_nanos(pod: _PodLike, defaults: Mapping[str, int] | None,
                       exclude_overhead: bool) -> dict[str, int]:
    total = aggregate_container_request_nanos(pod.containers, pod.init_containers, defaults)
    # AggregateContainerRequests adds the DRA node-allocatable amounts of the pod's claim statuses
    # to the containers' (so pod-level requests, applied next, still override them)
    _add_into(total, pod.node_allocatable_claim_nanos)
    pod_level = _pod_level_requests(pod)
    if pod_level is not None:
        for name, amount in pod_level.items():
            if is_pod_level_resource(name):
                total[name] = amount

    if not exclude_overhead:
        _add_into(total, pod.overhead_nanos)
    return total


def node_allocatable_claim_nanos(statuses: Iterable[Mapping[str, Any]]) -> dict[str, int]:
    """Upstream ``addDRANodeAllocatableClaimResources`` over parsed
    ``nodeAllocatableResourceClaimStatuses`` entries (``mapping``: name -> nanos;
    ``overhead``: name -> (perPod nanos or None, perContainer nanos or None); ``containers``):
    every mapped quantity, and each overhead's ``perPod + perContainer x len(containers)``, summed
    per resource in nano-units. A claim counts once however many containers reference it, and
    whether they are init containers or not."""
    total: dict[str, int] = {}
    for status in statuses:
        for name, nanos in status["mapping"]:
            total[name] = total.get(name, 0) + nanos
        containers = len(status["containers"])
        for name, per_pod, per_container in status["overhead"]:
            amount = per_pod or 0
            if per_container is not None and containers:
                amount += per_container * containers
            total[name] = total.get(name, 0) + amount
    return total


class _WithoutClaimStatuses:
    """The pod without its ``status.nodeAllocatableResourceClaimStatuses`` amounts."""

    __slots__ = ("containers", "init_containers", "overhead_nanos", "resources")
    node_allocatable_claim_nanos: Mapping[str, int] = {}

    def __init__(self, pod: _PodLike):
        self.containers = pod.containers
        self.init_containers = pod.init_containers
        self.overhead_nanos = pod.overhead_nanos
        self.resources = pod.resources


def requests_without_claim_statuses(pod: Any) -> Mapping[str, int]:
    """``PodRequests`` without ``UseDRANodeAllocatableResourceClaimStatus``: what upstream's
    callers that do not pass the option read (NodeResourcesFit's PreFilter and hints,
    ``extractPodScaleDown``); ``pod.requests`` itself when the pod has no claim statuses."""
    if not pod.node_allocatable_claim_nanos:
        return pod.requests
    return pod_requests(_WithoutClaimStatuses(pod))


def _to_amounts(nanos: Mapping[str, int]) -> dict[str, int]:
    amounts = {}
    for name, amount in nanos.items():
        unit = _NANOS_PER_MILLI if name == _CPU else _NANOS_PER_UNIT
        if 0 <= amount <= _SAFE_NANOS:
            amounts[name] = -(-amount // unit)  # rounded up; cannot overflow int64
        else:
            amounts[name] = amount_from_nanos(name, amount)
    return amounts


def pod_requests(pod: _PodLike, *, non_missing_defaults: bool = False,
                 exclude_overhead: bool = False) -> dict[str, int]:
    """Effective pod requests per resource (millicores for cpu), as upstream ``PodRequests``.

    Regular containers are summed; init containers contribute through the sidecar rule (see
    the module docstring) and the per-resource maximum; pod-level ``spec.resources.requests``
    override cpu/memory/hugepages; ``spec.overhead`` is added unless ``exclude_overhead``.

    ``non_missing_defaults`` gives every container (init and regular) with no cpu or no memory
    entry the scheduler defaults (100m, 200Mi) first, as NodeResourcesFit scoring does
    (``NonMissingContainerRequests`` with both defaults). For the NodeInfo accounting rule, which
    differs when pod-level requests are set, use :func:`non_zero_pod_requests`.
    """
    defaults = _DEFAULT_REQUEST_NANOS if non_missing_defaults else None
    return _to_amounts(_pod_request_nanos(pod, defaults, exclude_overhead))


def non_zero_pod_requests(pod: _PodLike) -> dict[str, int]:
    """Requests with the scheduler's cpu/memory defaults, as NodeInfo accounts them.

    Upstream ``PodInfo.CalculateResource``: without pod-level requests, every container missing
    cpu or memory gets the default (100m / 200Mi); with pod-level requests, a default applies only
    to a resource absent from the pod's effective requests (so missing at both levels, and from
    the overhead). Overhead is included.
    """
    requests = _pod_request_nanos(pod, None, False)
    if _pod_level_requests(pod) is None:
        defaults: Mapping[str, int] = _DEFAULT_REQUEST_NANOS
    else:
        defaults = {name: amount for name, amount in _DEFAULT_REQUEST_NANOS.items() if name not in requests}
    if not _any_container_lacks(pod, defaults):
        return _to_amounts(requests)
    return _to_amounts(_pod_request_nanos(pod, defaults, False))


def _any_container_lacks(pod: _PodLike, resource_names: Iterable[str]) -> bool:
    """Whether some container (init or regular) has no request entry for one of the names."""
    names = tuple(resource_names)
    if not names:
        return False
    for containers in (pod.containers, pod.init_containers):
        for container in containers:
            requests = container.request_nanos
            for name in names:
                if name not in requests:
                    return True
    return False
