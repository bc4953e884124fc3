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

from ...dra.extended_resources import DEVICE_CLASS_PREFIX, is_dra_extended_resource_name
from ...framework.interface import ActionType, ClusterEvent, ClusterEventWithHint, EventResource, QueueingHint
from ..dynamicresources.manager import manager_for

if TYPE_CHECKING:  # pragma: no cover
    from ...framework.protocols import NodeTable

__all__ = ["clear_delegated", "delegable_resources", "device_class_event", "dra_guard",
           "is_schedulable_after_device_class_event"]


def _manager(handle: Any) -> Any:
    client = getattr(handle, "client", None) if handle is not None else None
    return manager_for(client) if client is not None else None


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


def dra_guard(handle: Any, scalar_names: Iterable[str]) -> Hashable:
    """What the delegation of a pod's requests depends on beside the pod: the DeviceClasses
    (their version), for pods requesting DRA extended resource names; None otherwise."""
    if not any(is_dra_extended_resource_name(name) for name in scalar_names):
        return None
    manager = _manager(handle)
    if manager is None:
        return None
    if manager.incremental:
        return manager.class_version
    classes = manager.client.list_objects("DeviceClass")
    return hash(tuple((c.name, c.extended_resource_name, c.creation_timestamp) for c in classes))


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
