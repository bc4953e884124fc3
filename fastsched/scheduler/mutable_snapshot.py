"""The snapshot's mutation session (upstream ``backend/cache/snapshot.go``: ``StartMutations``,
``AddPod``, ``RemovePod``, ``EndMutations``; the ``MutableSnapshotSharedLister`` of v1.37.2).

Workload-aware preemption (:mod:`fastsched.plugins.defaultpreemption.podgroup_preemption`) removes
its potential victims from the snapshot, runs the pod group algorithm on what is left, adds victims
back one by one, and at the end wants the snapshot exactly as it was. Upstream copies every NodeInfo
at ``StartMutations`` and restores the copies at ``EndMutations``.

fastsched's snapshot *is* the cache's node table (see :mod:`fastsched.scheduler.cache`), so a
mutation changes the table in place, and the group algorithm run inside the session assumes and
forgets its pods in that same table, as upstream's runs in the mutated snapshot. What this class
adds is the exact restore: the first time a node is touched its pod list is remembered, and
``end_mutations`` puts back every pod removed and not re-added and restores each touched node's
pod order (removing a pod moves the node's last pod into its place, as upstream's
``NodeInfo.RemovePod`` does, so a remove and a re-add reorder the node). The cache's own records
(its pod states, ``PodGroupState``) are not touched: upstream's mutations are the snapshot's only.

Bound pods added in bulk refer to their table records (:class:`~fastsched.scheduler.cache.BulkPods`);
one removed here is detached first (it keeps its Pod object), so that its entry stays valid whatever
record it has afterwards.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..errors import FastschedError
from ..framework.types import PodInfo
from .cache import IN_CACHE

if TYPE_CHECKING:  # pragma: no cover
    from ..api import Pod
    from .cache import Cache

__all__ = ["MutableSnapshot", "SnapshotMutationError"]


class SnapshotMutationError(FastschedError, RuntimeError):
    """A mutation outside a session, a stacked session, or a pod/node the snapshot does not have."""


class MutableSnapshot:
    """``MutableSnapshotSharedLister`` over a :class:`~fastsched.scheduler.cache.Cache`."""

    def __init__(self, cache: "Cache"):
        self._cache = cache
        #: node name -> its pods (PodInfos) when the session first touched it; None: no session
        self._backup: dict[str, list[PodInfo]] | None = None

    # -- SharedLister ----------------------------------------------------------------------------
    def node_infos(self) -> Any:
        return self._cache.snapshot

    def pod_groups(self) -> Any:
        """``PodGroups()``: the PodGroup objects the scheduler knows."""
        return self._cache.pod_groups_lister()

    def pod_group_states(self) -> Any:
        """``PodGroupStates()``."""
        return self._cache.pod_group_states_lister()

    def composite_pod_groups(self) -> Any:
        """``CompositePodGroups()``: the CompositePodGroup objects (refused with the gate off)."""
        return self._cache.composite_groups.objects_lister()

    def composite_pod_group_states(self) -> Any:
        """``CompositePodGroupStates()``."""
        return self._cache.composite_groups.states_lister()

    @property
    def mutating(self) -> bool:
        return self._backup is not None

    # -- the session -----------------------------------------------------------------------------
    def start_mutations(self) -> None:
        if self._backup is not None:
            raise SnapshotMutationError("cannot stack mutations")
        self._backup = {}

    def end_mutations(self) -> None:
        """Restore every touched node as it was when the session started."""
        if self._backup is None:
            raise SnapshotMutationError("no mutation session started")
        backup, self._backup = self._backup, None
        table = self._cache.snapshot.table
        for node_name, original in backup.items():
            row = table.row_of.get(node_name)
            if row is None:
                continue  # (the node went away meanwhile: nothing to restore)
            current = list(table.pods[row])
            k = 0
            while k < len(current) and k < len(original) and current[k].pod.uid == original[k].pod.uid:
                k += 1
            if k == len(current) == len(original):
                continue
            # take the tail off from the end (no pod moves), then put the original tail back in order
            for pi in reversed(current[k:]):
                self._take_off(node_name, pi.pod)
            for pi in original[k:]:
                table.add_pod(node_name, pi)

    def _touch(self, node_name: str) -> None:
        assert self._backup is not None
        table = self._cache.snapshot.table
        row = table.row_of.get(node_name)
        if row is None:
            raise SnapshotMutationError(f'node "{node_name}" not found in the snapshot')
        if node_name not in self._backup:
            self._backup[node_name] = list(table.pods[row])

    def _take_off(self, node_name: str, pod: "Pod") -> PodInfo:
        """Remove the pod from the table, a bulk pod detached from its record first."""
        cache = self._cache
        if cache.bulk.n_live:
            b = cache.bulk.has(pod.uid, IN_CACHE)
            if b >= 0 and cache.bulk.rec[b] >= 0:
                cache.bulk.detach(b)
        return cache.snapshot.table.remove_pod(node_name, pod)

    def remove_pod(self, pod: "Pod", node_name: str) -> PodInfo:
        """``RemovePod``: take the pod off the node (an error when it is not there)."""
        if self._backup is None:
            raise SnapshotMutationError("RemovePod() called outside of mutation session")
        self._touch(node_name)
        try:
            return self._take_off(node_name, pod)
        except KeyError as e:
            raise SnapshotMutationError(str(e.args[0]) if e.args else str(e)) from None

    def add_pod(self, pod_info: PodInfo | "Pod", node_name: str) -> PodInfo:
        """``AddPod``: put the pod (its PodInfo kept) on the node."""
        if self._backup is None:
            raise SnapshotMutationError("AddPod() called outside of mutation session")
        self._touch(node_name)
        return self._cache.snapshot.table.add_pod(node_name, pod_info)
