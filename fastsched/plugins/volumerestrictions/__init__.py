"""VolumeRestrictions (upstream ``pkg/scheduler/framework/plugins/volumerestrictions/volume_restrictions.go``, v1.34).

Extension points as upstream: PreFilter (with AddPod/RemovePod extensions), Filter and
EnqueueExtensions. Upstream looks at two kinds of volumes: PersistentVolumeClaims (to enforce the
ReadWriteOncePod access mode, which needs the PVC objects) and the inline ``gcePersistentDisk``,
``awsElasticBlockStore``, ``rbd`` and ``iscsi`` volumes (disk conflicts with the pods on the node).
Generic ephemeral volumes are not looked at. A pod with none of those gets Skip at PreFilter (so
Filter does not run); a pod with any is rejected at PreFilter with UnschedulableAndUnresolvable
:data:`REASON_NOT_MODELLED`.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ...framework import protocols as fwk
from ...framework.cycle_state import CycleState
from ...framework.interface import (ActionType, ClusterEvent, ClusterEventWithHint, EventResource,
                                    PreFilterExtensions)
from ...framework.status import Status
from .._unmodelled import (AWS_ELASTIC_BLOCK_STORE, GCE_PERSISTENT_DISK, ISCSI, PERSISTENT_VOLUME_CLAIM, RBD,
                           UnmodelledVolumePlugin, not_modelled)

if TYPE_CHECKING:  # pragma: no cover
    from ...api import Pod
    from ...framework.types import PodInfo

NAME = "VolumeRestrictions"
PRE_FILTER_STATE_KEY = "PreFilter" + NAME
#: inline volume types upstream checks for disk conflicts (``needsRestrictionsCheck``)
CONFLICT_CHECKED_SOURCES = (GCE_PERSISTENT_DISK, AWS_ELASTIC_BLOCK_STORE, RBD, ISCSI)
UNMODELLED_SOURCES = (PERSISTENT_VOLUME_CLAIM, *CONFLICT_CHECKED_SOURCES)
REASON_NOT_MODELLED = not_modelled(
    NAME, "PersistentVolumeClaims or gcePersistentDisk, awsElasticBlockStore, rbd or iscsi volumes").message()
#: upstream's reasons, for reference (never produced for the pods fastsched models)
ERR_REASON_DISK_CONFLICT = "node(s) had no available disk"
ERR_REASON_READ_WRITE_ONCE_POD_CONFLICT = \
    "node has pod using PersistentVolumeClaim with the same name and ReadWriteOncePod access mode"


def _state_error() -> Status:
    """Upstream ``getPreFilterState`` failing: PreFilter did not store its state."""
    return Status.from_error(f'cannot read "{PRE_FILTER_STATE_KEY}" from cycleState')


class VolumeRestrictions(UnmodelledVolumePlugin, PreFilterExtensions):
    """Volume conflicts and ReadWriteOncePod; a Skip for the pods fastsched models."""

    NAME = NAME
    UNMODELLED_SOURCES = UNMODELLED_SOURCES
    REASON_NOT_MODELLED = REASON_NOT_MODELLED

    def __init__(self, enable_scheduling_queue_hint: bool = True):
        self._enable_scheduling_queue_hint = enable_scheduling_queue_hint

    def pre_filter_extensions(self) -> "VolumeRestrictions":
        return self

    def add_pod(self, state: CycleState, pod_to_schedule: Pod, pod_info_to_add: PodInfo,
                node_info: fwk.NodeInfo) -> Status | None:
        # The state exists only for pods with ReadWriteOncePod PVCs, which fastsched rejects.
        return None if PRE_FILTER_STATE_KEY in state else _state_error()

    def remove_pod(self, state: CycleState, pod_to_schedule: Pod, pod_info_to_remove: PodInfo,
                   node_info: fwk.NodeInfo) -> Status | None:
        return None if PRE_FILTER_STATE_KEY in state else _state_error()

    # -- Filter -----------------------------------------------------------------------------------
    def _filter_status(self, state: CycleState, pod: Pod) -> Status | None:
        """The verdict for every node: it never depends on the node for modelled pods."""
        if self._unmodelled(pod):
            return self._rejection()
        # No conflict-checked volume, so no disk conflict; then the PreFilter state is required.
        if PRE_FILTER_STATE_KEY not in state:
            return _state_error()
        return None

    # -- EnqueueExtensions ------------------------------------------------------------------------
    def events_to_register(self) -> list[ClusterEventWithHint]:
        node_actions = ActionType.ADD
        if not self._enable_scheduling_queue_hint:
            node_actions |= ActionType.UPDATE_NODE_TAINT | ActionType.UPDATE_NODE_LABEL
        return [
            ClusterEventWithHint(ClusterEvent(EventResource.POD, ActionType.DELETE)),
            ClusterEventWithHint(ClusterEvent(EventResource.NODE, node_actions)),
            ClusterEventWithHint(ClusterEvent(EventResource.PERSISTENT_VOLUME_CLAIM, ActionType.ADD)),
        ]


def new(args: Any, handle: fwk.Handle) -> VolumeRestrictions:
    """Upstream ``New``: the plugin takes no args."""
    return VolumeRestrictions()


__all__ = ["NAME", "VolumeRestrictions", "new", "REASON_NOT_MODELLED", "PRE_FILTER_STATE_KEY"]
