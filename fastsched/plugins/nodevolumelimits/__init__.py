"""NodeVolumeLimits (upstream ``pkg/scheduler/framework/plugins/nodevolumelimits/csi.go``, ``CSILimits``, v1.34).

Extension points as upstream: PreFilter, Filter and EnqueueExtensions. Upstream counts the CSI
volumes a pod attaches: ``persistentVolumeClaim`` and generic ``ephemeral`` volumes (through their
PVCs) and inline volumes that csi-translation-lib can migrate to CSI (``IsInlineMigratable``:
gcePersistentDisk, awsElasticBlockStore, cinder, azureDisk, azureFile, vsphereVolume,
portworxVolume; the rbd translation was removed in v1.31). A pod with none of those gets Skip at
PreFilter, and its Filter passes every node (it attaches no CSI volume). A pod with any is rejected
at PreFilter with UnschedulableAndUnresolvable :data:`REASON_NOT_MODELLED`.
"""
from __future__ import annotations

from typing import Any

from ...framework.batch import BatchFilterPlugin, FilterBatchResult
from ...framework.cycle_state import CycleState
from ...framework.interface import (ActionType, ClusterEvent, ClusterEventWithHint, EnqueueExtensions,
                                    EventResource, PreFilterPlugin)
from ...framework.status import Code, Status
from .._unmodelled import (AWS_ELASTIC_BLOCK_STORE, AZURE_DISK, AZURE_FILE, CINDER, EPHEMERAL,
                           GCE_PERSISTENT_DISK, PERSISTENT_VOLUME_CLAIM, PORTWORX_VOLUME, VOLUME_ATTACHMENT,
                           VSPHERE_VOLUME, not_modelled, pod_uses_any)

NAME = "NodeVolumeLimits"
#: inline volume types with a CSI migration translator in v1.34
MIGRATABLE_INLINE_SOURCES = (GCE_PERSISTENT_DISK, AWS_ELASTIC_BLOCK_STORE, CINDER, AZURE_DISK, AZURE_FILE,
                             VSPHERE_VOLUME, PORTWORX_VOLUME)
UNMODELLED_SOURCES = (PERSISTENT_VOLUME_CLAIM, EPHEMERAL, *MIGRATABLE_INLINE_SOURCES)
REASON_NOT_MODELLED = not_modelled(
    NAME, "PersistentVolumeClaims, generic ephemeral volumes or CSI-migratable inline volumes").message()


class NodeVolumeLimits(PreFilterPlugin, BatchFilterPlugin, EnqueueExtensions):
    """CSI attach limits per node; passes every node for the pods fastsched models."""

    def name(self) -> str:
        return NAME

    @staticmethod
    def _unmodelled(pod: Any) -> bool:
        return pod_uses_any(pod, UNMODELLED_SOURCES)

    def pre_filter(self, state: CycleState, pod: Any, nodes: Any) -> tuple[None, Status | None]:
        if self._unmodelled(pod):
            return None, Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, REASON_NOT_MODELLED)
        return None, Status(Code.SKIP)

    def pre_filter_extensions(self) -> None:
        return None

    def _filter_status(self, pod: Any) -> Status | None:
        # Filter reads no cycle state; without CSI volumes there is nothing to count.
        if self._unmodelled(pod):
            return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, REASON_NOT_MODELLED)
        return None

    def filter(self, state: CycleState, pod: Any, node_info: Any) -> Status | None:
        return self._filter_status(pod)

    def filter_batch(self, state: CycleState, pod: Any, nodes: Any) -> FilterBatchResult | Status:
        s = self._filter_status(pod)
        return FilterBatchResult.all_pass(len(nodes)) if s is None else s

    def events_to_register(self) -> list[ClusterEventWithHint]:
        return [
            ClusterEventWithHint(ClusterEvent(EventResource.CSI_NODE, ActionType.ADD)),
            ClusterEventWithHint(ClusterEvent(EventResource.POD, ActionType.DELETE)),
            ClusterEventWithHint(ClusterEvent(EventResource.PERSISTENT_VOLUME_CLAIM, ActionType.ADD)),
            ClusterEventWithHint(ClusterEvent(VOLUME_ATTACHMENT, ActionType.DELETE)),
        ]


def new(args: Any, handle: Any) -> NodeVolumeLimits:
    """Upstream ``NewCSI``: the plugin takes no args."""
    return NodeVolumeLimits()


__all__ = ["NAME", "NodeVolumeLimits", "new", "REASON_NOT_MODELLED"]
