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

from ...framework import protocols as fwk
from ...framework.interface import ActionType, ClusterEvent, ClusterEventWithHint, EventResource
from .._unmodelled import PERSISTENT_VOLUME_CLAIM, UnmodelledVolumePlugin, not_modelled

NAME = "VolumeZone"
PRE_FILTER_STATE_KEY = "PreFilter" + NAME
UNMODELLED_SOURCES = (PERSISTENT_VOLUME_CLAIM,)
REASON_NOT_MODELLED = not_modelled(NAME, "PersistentVolumeClaims").message()
#: upstream's reason, for reference (never produced for the pods fastsched models)
ERR_REASON_CONFLICT = "node(s) had no available volume zone"


class VolumeZone(UnmodelledVolumePlugin):
    """PV zone labels against node labels; passes every node for the pods fastsched models.

    Filter recomputes the PV topologies when the PreFilter state is missing; without PVCs they are
    empty and every node passes.
    """

    NAME = NAME
    UNMODELLED_SOURCES = UNMODELLED_SOURCES
    REASON_NOT_MODELLED = REASON_NOT_MODELLED

    def __init__(self, enable_scheduling_queue_hint: bool = True):
        self._enable_scheduling_queue_hint = enable_scheduling_queue_hint

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


def new(args: Any, handle: fwk.Handle) -> VolumeZone:
    """Upstream ``New``: the plugin takes no args."""
    return VolumeZone()


__all__ = ["NAME", "VolumeZone", "new", "REASON_NOT_MODELLED"]
