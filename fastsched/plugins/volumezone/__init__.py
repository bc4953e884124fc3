"""VolumeZone (upstream ``pkg/scheduler/framework/plugins/volumezone/volume_zone.go``, v1.34).

Extension points as upstream: PreFilter, Filter and EnqueueExtensions (no PreFilterExtensions).
Upstream only looks at ``persistentVolumeClaim`` volumes (not generic ephemeral ones): it matches
the zone/region labels of their bound PersistentVolumes against the node's. A pod without PVC
volumes has no PV topologies: PreFilter returns Skip, and Filter (which recomputes the topologies
when the PreFilter state is missing) passes every node. A pod with PVC volumes is rejected at
PreFilter with UnschedulableAndUnresolvable :data:`REASON_NOT_MODELLED`.
"""
from __future__ import annotations

from typing import Any

from ...framework.batch import BatchFilterPlugin, FilterBatchResult
from ...framework.cycle_state import CycleState
from ...framework.interface import (ActionType, ClusterEvent, ClusterEventWithHint, EnqueueExtensions,
                                    EventResource, PreFilterPlugin)
from ...framework.status import Code, Status
from .._unmodelled import PERSISTENT_VOLUME_CLAIM, not_modelled, pod_uses_any

NAME = "VolumeZone"
PRE_FILTER_STATE_KEY = "PreFilter" + NAME
UNMODELLED_SOURCES = (PERSISTENT_VOLUME_CLAIM,)
REASON_NOT_MODELLED = not_modelled(NAME, "PersistentVolumeClaims").message()
#: upstream's reason, for reference (never produced for the pods fastsched models)
ERR_REASON_CONFLICT = "node(s) had no available volume zone"


class VolumeZone(PreFilterPlugin, BatchFilterPlugin, EnqueueExtensions):
    """PV zone labels against node labels; passes every node for the pods fastsched models."""

    def __init__(self, enable_scheduling_queue_hint: bool = True):
        self._enable_scheduling_queue_hint = enable_scheduling_queue_hint

    def name(self) -> str:
        return NAME

    @staticmethod
    def _unmodelled(pod: Any) -> bool:
        return pod_uses_any(pod, UNMODELLED_SOURCES)

    def pre_filter(self, state: CycleState, pod: Any, nodes: Any) -> tuple[None, Status | None]:
        if self._unmodelled(pod):
            return None, Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, REASON_NOT_MODELLED)
        return None, Status(Code.SKIP)  # no PV topologies

    def pre_filter_extensions(self) -> None:
        return None

    def _filter_status(self, pod: Any) -> Status | None:
        # Without PVCs the recomputed PV topologies are empty and every node passes.
        if self._unmodelled(pod):
            return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, REASON_NOT_MODELLED)
        return None

    def filter(self, state: CycleState, pod: Any, node_info: Any) -> Status | None:
        return self._filter_status(pod)

    def filter_batch(self, state: CycleState, pod: Any, nodes: Any) -> FilterBatchResult | Status:
        s = self._filter_status(pod)
        return FilterBatchResult.all_pass(len(nodes)) if s is None else s

    def events_to_register(self) -> list[ClusterEventWithHint]:
        node_actions = ActionType.ADD | ActionType.UPDATE_NODE_LABEL
        if not self._enable_scheduling_queue_hint:
            node_actions |= ActionType.UPDATE_NODE_TAINT
        add_update = ActionType.ADD | ActionType.UPDATE
        return [
            ClusterEventWithHint(ClusterEvent(EventResource.STORAGE_CLASS, ActionType.ADD)),
            ClusterEventWithHint(ClusterEvent(EventResource.NODE, node_actions)),
            ClusterEventWithHint(ClusterEvent(EventResource.PERSISTENT_VOLUME_CLAIM, add_update)),
            ClusterEventWithHint(ClusterEvent(EventResource.PERSISTENT_VOLUME, add_update)),
        ]


def new(args: Any, handle: Any) -> VolumeZone:
    """Upstream ``New``: the plugin takes no args."""
    return VolumeZone()


__all__ = ["NAME", "VolumeZone", "new", "REASON_NOT_MODELLED"]
