"""VolumeRestrictions (upstream ``pkg/scheduler/framework/plugins/volumerestrictions/volume_restrictions.go``, v1.34).

Extension points as upstream: PreFilter (with AddPod/RemovePod extensions), Filter and
EnqueueExtensions.

* PreFilter: ``needsCheck`` = the pod has a gcePersistentDisk, awsElasticBlockStore, rbd or iscsi
  volume. The pod's ``persistentVolumeClaim`` claims are looked up (a missing one:
  UnschedulableAndUnresolvable with the lister's text) and those with the ReadWriteOncePod access
  mode collected; ``conflicting_pvc_ref_count`` = how many of them some pod in the snapshot already
  uses (``IsPVCUsedByPods``, assumed pods included). No check needed and no conflict: Skip.
* AddPod / RemovePod move the count by the number of the pod's claim volumes named like one of the
  ReadWriteOncePod claims (so preemption can free such a claim).
* Filter: a disk conflict with a pod on the node (same GCE PD unless both read-only, same EBS
  volume, same iSCSI IQN unless both read-only, an RBD image sharing a monitor, pool and image
  unless both read-only): Unschedulable ``node(s) had no available disk``; then the state (Error
  when missing); then a count above 0: Unschedulable on every node.

Vectorized: the disk volumes of each row's pods are kept in a :class:`RowCache` (recomputed only
for rows that changed), so Filter over many nodes costs a lookup per row holding such volumes.
Pods without claims and without those inline volumes keep the fused cycle's no-op form.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Mapping, Sequence

import numpy as np

from ...api.storage import READ_WRITE_ONCE_POD, _snake, volume_source
from ...framework import protocols as fwk
from ...framework.columns import FILTER_EACH_CYCLE, FILTER_SKIPPED, ColumnForm
from ...framework.cycle_state import CycleState
from ...framework.interface import (ActionType, ClusterEvent, ClusterEventWithHint, EnqueueExtensions,
                                    EventResource, PreFilterExtensions, PreFilterPlugin, QueueingHint)
from ...framework import signers
from ...framework.status import Code, Status
from ...framework.vectorized import FilterVerdicts, VectorizedFilterPlugin
from ..volumebinding.storage_view import RowCache, StorageLister

if TYPE_CHECKING:  # pragma: no cover
    from ...api import Pod
    from ...framework.types import PodInfo
    from ...framework.protocols import NodeTable

NAME = "VolumeRestrictions"
PRE_FILTER_STATE_KEY = "PreFilter" + NAME
#: inline volume types upstream checks for disk conflicts (``needsRestrictionsCheck``)
CONFLICT_CHECKED_SOURCES = ("gcePersistentDisk", "awsElasticBlockStore", "rbd", "iscsi")
ERR_REASON_DISK_CONFLICT = "node(s) had no available disk"
ERR_REASON_READ_WRITE_ONCE_POD_CONFLICT = (
    "node(s) unavailable due to PersistentVolumeClaim with ReadWriteOncePod access mode already in-use by another pod")


def _state_error() -> Status:
    """Upstream ``getPreFilterState`` failing: PreFilter did not store its state."""
    return Status.from_error(f'cannot read "{PRE_FILTER_STATE_KEY}" from cycleState')


def _claim_name(volume: Mapping[str, Any]) -> str | None:
    src = volume_source(volume, "persistentVolumeClaim")
    if src is None:
        return None
    return src.get("claimName") or src.get("claim_name") or ""


#: every key under which :func:`volume_source` may find a conflict-checked source (camelCase and
#: snake_case): a volume holding none of them needs no check, whatever its values
_CHECKED_KEYS = frozenset(k for s in CONFLICT_CHECKED_SOURCES for k in (s, _snake(s)))


def _needs_check(volume: Mapping[str, Any]) -> bool:
    # (the disjointness test first: a claim volume's two keys against the set, instead of eight
    # lookups through volume_source, in PreFilter and the column form of every volume pod's cycle)
    if _CHECKED_KEYS.isdisjoint(volume):
        return False
    return any(volume_source(volume, s) is not None for s in CONFLICT_CHECKED_SOURCES)


def _disk_key(volume: Mapping[str, Any]) -> tuple | None:
    """A conflict-checked inline volume as ``(kind, identity..., read_only)``; None for others."""
    gce = volume_source(volume, "gcePersistentDisk")
    if gce is not None:
        return ("gce", gce.get("pdName") or gce.get("pd_name") or "", bool(gce.get("readOnly") or gce.get("read_only")))
    ebs = volume_source(volume, "awsElasticBlockStore")
    if ebs is not None:
        return ("ebs", ebs.get("volumeID") or ebs.get("volume_id") or "", False)
    iscsi = volume_source(volume, "iscsi")
    if iscsi is not None:
        return ("iscsi", iscsi.get("iqn") or "", bool(iscsi.get("readOnly") or iscsi.get("read_only")))
    rbd = volume_source(volume, "rbd")
    if rbd is not None:
        monitors = frozenset(rbd.get("monitors") or ())
        pool = rbd.get("pool") or "rbd"   # API default
        image = rbd.get("image") or ""
        return ("rbd", (monitors, pool, image), bool(rbd.get("readOnly") or rbd.get("read_only")))
    return None


def _conflicts(new: tuple, existing: tuple) -> bool:
    """Upstream ``isVolumeConflict`` for two conflict-checked volumes."""
    kind = new[0]
    if kind != existing[0]:
        return False
    both_read_only = new[2] and existing[2]
    if kind == "gce" or kind == "iscsi":
        return new[1] == existing[1] and not both_read_only
    if kind == "ebs":
        return new[1] == existing[1]
    mon, pool, image = new[1]
    emon, epool, eimage = existing[1]
    return bool(mon & emon) and pool == epool and image == eimage and not both_read_only


def _pod_disks(pod: Pod) -> tuple:
    return tuple(k for k in map(_disk_key, pod.volumes) if k is not None)


class _PreFilterState:
    """Upstream ``preFilterState``: the pod's ReadWriteOncePod claim names and how many of them
    are in use (moved by AddPod / RemovePod)."""

    __slots__ = ("read_write_once_pod_pvcs", "conflicting_pvc_ref_count")

    def __init__(self, pvcs: frozenset[str], count: int):
        self.read_write_once_pod_pvcs = pvcs
        self.conflicting_pvc_ref_count = count

    def update_with_pod(self, pod: Pod, multiplier: int) -> None:
        conflicts = sum(1 for v in pod.volumes if _claim_name(v) in self.read_write_once_pod_pvcs)
        self.conflicting_pvc_ref_count += multiplier * conflicts

    def clone(self) -> "_PreFilterState":
        return _PreFilterState(self.read_write_once_pod_pvcs, self.conflicting_pvc_ref_count)


def used_pvc_keys(nodes: Sequence[fwk.NodeInfo]) -> set[str]:
    """``namespace/claim`` of every PVC volume of the pods on these nodes (upstream's
    ``usedPVCSet`` of the snapshot)."""
    used: set[str] = set()
    for ni in nodes:
        for pi in ni.pods:
            pod = pi.pod
            for v in pod.volumes:
                name = _claim_name(v)
                if name is not None:
                    used.add(f"{pod.namespace}/{name}")
    return used


class VolumeRestrictions(PreFilterPlugin, VectorizedFilterPlugin, PreFilterExtensions, EnqueueExtensions):
    """Disk conflicts of inline volumes and ReadWriteOncePod claims in use."""

    def __init__(self, handle: fwk.Handle | None = None, enable_scheduling_queue_hint: bool = True):
        self.handle = handle
        self._enable_scheduling_queue_hint = enable_scheduling_queue_hint
        self._disks = RowCache(self._row_disks)
        self._claim_counts: dict[str, int] = {}   # namespace/claim -> pods of the table using it
        self._claims = RowCache(self._row_claims, self._claims_changed, self._claims_reset)

    def name(self) -> str:
        return NAME

    @property
    def _lister(self) -> StorageLister:
        return StorageLister(getattr(self.handle, "client", None))

    # -- opportunistic batching ---------------------------------------------------------------------
    def sign_pod(self, pod: Pod) -> tuple[signers.Fragments | None, Status | None]:
        """Upstream ``SignPod``: the volumes' sources (ConfigMap and Secret sources left out)."""
        return ((signers.VOLUMES_SIGNER, signers.volumes_signer(pod)),), None

    #: the pod spec fields its column form and plan parts read (fastsched.framework.columns)
    column_reads = ("namespace", "volumes")

    def column_form(self, pod: Pod, table: NodeTable) -> ColumnForm | None:
        """The fused cycle's no-op form for pods without claims or conflict-checked volumes
        (PreFilter answers Skip for them); the others' Filter reads the volumes of the pods on the
        nodes: it runs each cycle (CYCLE)."""
        for v in pod.volumes:
            if _claim_name(v) is not None or _needs_check(v):
                return FILTER_EACH_CYCLE
        return FILTER_SKIPPED

    # -- PreFilter ----------------------------------------------------------------------------------
    def _used_pvcs(self, nodes: Sequence[fwk.NodeInfo]) -> Any:
        """The claims some pod of the snapshot uses (``IsPVCUsedByPods``): per row, recomputed only
        for rows that changed, summed in a Counter."""
        table = getattr(nodes, "table", None)
        if table is None:
            return used_pvc_keys(nodes)
        self._claims.sync(table, np.flatnonzero(table.live), None)
        return self._claim_counts

    @staticmethod
    def _row_claims(table: NodeTable, row: int) -> tuple[str, ...]:
        keys = []
        for pi in table.pods[row]:
            pod = pi.pod
            for v in pod.volumes:
                name = _claim_name(v)
                if name is not None:
                    keys.append(f"{pod.namespace}/{name}")
        return tuple(keys)

    def _claims_changed(self, row: int, old: Any, new: Any) -> None:
        counts = self._claim_counts
        for key in old or ():
            counts[key] -= 1
            if counts[key] <= 0:
                del counts[key]
        for key in new or ():
            counts[key] = counts.get(key, 0) + 1

    def _claims_reset(self, capacity: int) -> None:
        if capacity >= 0:
            self._claim_counts.clear()

    def pre_filter(self, state: CycleState, pod: Pod, nodes: Sequence[fwk.NodeInfo]) -> tuple[None, Status | None]:
        # (one pass: whether a volume needs the disk check, and the claims' access modes; the
        # lister made at the first claim)
        needs_check = False
        lister = None
        pvcs: set[str] = set()
        for v in pod.volumes:
            if not needs_check and _needs_check(v):
                needs_check = True
            name = _claim_name(v)
            if name is None:
                continue
            if lister is None:
                lister = self._lister
            pvc = lister.pvc(pod.namespace, name)
            if pvc is None:
                return None, Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
                                    f'persistentvolumeclaim "{name}" not found')
            if READ_WRITE_ONCE_POD in pvc.access_modes:
                pvcs.add(pvc.name)
        count = 0
        if pvcs:
            used = self._used_pvcs(nodes)
            count = sum(1 for name in pvcs if f"{pod.namespace}/{name}" in used)
        if not needs_check and count == 0:
            return None, Status(Code.SKIP)
        state.write(PRE_FILTER_STATE_KEY, _PreFilterState(frozenset(pvcs), count))
        return None, None

    def pre_filter_extensions(self) -> PreFilterExtensions:
        return self

    def _state(self, state: CycleState) -> _PreFilterState | None:
        try:
            return state.read(PRE_FILTER_STATE_KEY)
        except KeyError:
            return None

    def add_pod(self, state: CycleState, pod_to_schedule: Pod, pod_info_to_add: PodInfo,
                node_info: fwk.NodeInfo) -> Status | None:
        s = self._state(state)
        if s is None:
            return _state_error()
        s.update_with_pod(pod_info_to_add.pod, 1)
        return None

    def remove_pod(self, state: CycleState, pod_to_schedule: Pod, pod_info_to_remove: PodInfo,
                   node_info: fwk.NodeInfo) -> Status | None:
        s = self._state(state)
        if s is None:
            return _state_error()
        s.update_with_pod(pod_info_to_remove.pod, -1)
        return None

    # -- Filter -------------------------------------------------------------------------------------
    def _after_disks(self, state: CycleState) -> Status | None:
        s = self._state(state)
        if s is None:
            return _state_error()
        if s.conflicting_pvc_ref_count > 0:
            return Status(Code.UNSCHEDULABLE, ERR_REASON_READ_WRITE_ONCE_POD_CONFLICT)
        return None

    def filter(self, state: CycleState, pod: Pod, node_info: fwk.NodeInfo) -> Status | None:
        wanted = _pod_disks(pod)
        if wanted:
            for pi in node_info.pods:
                existing = _pod_disks(pi.pod)
                if any(_conflicts(w, e) for w in wanted for e in existing):
                    return Status(Code.UNSCHEDULABLE, ERR_REASON_DISK_CONFLICT)
        return self._after_disks(state)

    @staticmethod
    def _row_disks(table: NodeTable, row: int) -> tuple:
        disks: list[Any] = []
        for pi in table.pods[row]:
            disks.extend(_pod_disks(pi.pod))
        return tuple(disks)

    def filter_vectorized(self, state: CycleState, pod: Pod, nodes: fwk.NodeBatch) -> FilterVerdicts | Status:
        n = len(nodes)
        rest = self._after_disks(state)
        wanted = _pod_disks(pod)
        table = getattr(nodes, "table", None)
        if not wanted or table is None:
            if not wanted:
                return FilterVerdicts.all_pass(n) if rest is None else rest
            return FilterVerdicts.from_statuses([self.filter(state, pod, ni) for ni in nodes])
        rows = np.asarray(nodes.rows, dtype=np.int64)
        self._disks.sync(table, rows, None)
        conflict = np.zeros(n, dtype=bool)
        for i, row in enumerate(rows.tolist()):
            existing = self._disks.get(row)
            if existing and any(_conflicts(w, e) for w in wanted for e in existing):
                conflict[i] = True
        codes = np.zeros(n, dtype=np.int8)
        rid = np.full(n, -1, dtype=np.int32)
        reasons: list[tuple[str, ...]] = [(ERR_REASON_DISK_CONFLICT,)]
        codes[conflict] = int(Code.UNSCHEDULABLE)
        rid[conflict] = 0
        if rest is not None:
            reasons.append(tuple(rest.reasons()))
            codes[~conflict] = int(rest.code())
            rid[~conflict] = 1
        return FilterVerdicts(codes, rid, reasons)

    # -- EnqueueExtensions --------------------------------------------------------------------------
    def events_to_register(self) -> list[ClusterEventWithHint]:
        node_actions = ActionType.ADD
        if not self._enable_scheduling_queue_hint:
            node_actions |= ActionType.UPDATE_NODE_TAINT | ActionType.UPDATE_NODE_LABEL
        return [
            ClusterEventWithHint(ClusterEvent(EventResource.ASSIGNED_POD, ActionType.DELETE),
                                 self.is_schedulable_after_assigned_pod_deleted),
            ClusterEventWithHint(ClusterEvent(EventResource.NODE, node_actions)),
            ClusterEventWithHint(ClusterEvent(EventResource.PERSISTENT_VOLUME_CLAIM, ActionType.ADD),
                                 self.is_schedulable_after_persistent_volume_claim_added),
        ]

    def is_schedulable_after_persistent_volume_claim_added(self, pod: Pod, old: Any,
                                                           new: Any) -> tuple[QueueingHint, Any]:
        """``isSchedulableAfterPersistentVolumeClaimAdded``: the pod uses the new claim."""
        if new is None or new.namespace != pod.namespace:
            return QueueingHint.QUEUE_SKIP, None
        if any(_claim_name(v) == new.name for v in pod.volumes):
            return QueueingHint.QUEUE, None
        return QueueingHint.QUEUE_SKIP, None

    def is_schedulable_after_assigned_pod_deleted(self, pod: Pod, old: Any, new: Any) -> tuple[QueueingHint, Any]:
        """``isSchedulableAfterAssignedPodDeleted``: the deleted pod had a conflicting disk or a claim of
        the same name in the pod's namespace."""
        deleted = old
        if deleted is None or deleted.namespace != pod.namespace:
            return QueueingHint.QUEUE_SKIP, None
        wanted = _pod_disks(pod)
        if wanted and any(_conflicts(w, e) for w in wanted for e in _pod_disks(deleted)):
            return QueueingHint.QUEUE, None
        names = {_claim_name(v) for v in pod.volumes} - {None}
        if any(_claim_name(v) in names for v in deleted.volumes):
            return QueueingHint.QUEUE, None
        return QueueingHint.QUEUE_SKIP, None


def new(args: Any, handle: fwk.Handle) -> VolumeRestrictions:
    """Upstream ``New``: the plugin takes no args."""
    return VolumeRestrictions(handle)


__all__ = ["NAME", "VolumeRestrictions", "new", "PRE_FILTER_STATE_KEY", "ERR_REASON_DISK_CONFLICT",
           "ERR_REASON_READ_WRITE_ONCE_POD_CONFLICT"]
