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

from ...framework import protocols as fwk
from ...framework.interface import ActionType, ClusterEvent, ClusterEventWithHint, EventResource
from .._unmodelled import (AWS_ELASTIC_BLOCK_STORE, AZURE_DISK, AZURE_FILE, CINDER, EPHEMERAL,
                           GCE_PERSISTENT_DISK, PERSISTENT_VOLUME_CLAIM, PORTWORX_VOLUME, VOLUME_ATTACHMENT,
                           VSPHERE_VOLUME, UnmodelledVolumePlugin, not_modelled)

NAME = "NodeVolumeLimits"
#: inline volume types with a CSI migration translator in v1.34
MIGRATABLE_INLINE_SOURCES = (GCE_PERSISTENT_DISK, AWS_ELASTIC_BLOCK_STORE, CINDER, AZURE_DISK, AZURE_FILE,
                             VSPHERE_VOLUME, PORTWORX_VOLUME)
UNMODELLED_SOURCES = (PERSISTENT_VOLUME_CLAIM, EPHEMERAL, *MIGRATABLE_INLINE_SOURCES)
REASON_NOT_MODELLED = not_modelled(
    NAME, "PersistentVolumeClaims, generic ephemeral volumes or CSI-migratable inline volumes").message()


class NodeVolumeLimits(UnmodelledVolumePlugin):
    """CSI attach limits per node; passes every node for the pods fastsched models (Filter reads
    no cycle state; without CSI volumes there is nothing to count)."""

    NAME = NAME
    UNMODELLED_SOURCES = UNMODELLED_SOURCES
    REASON_NOT_MODELLED = REASON_NOT_MODELLED

    def events_to_register(self) -> list[ClusterEventWithHint]:
        return [
            ClusterEventWithHint(ClusterEvent(EventResource.CSI_NODE, ActionType.ADD)),
            ClusterEventWithHint(ClusterEvent(EventResource.POD, ActionType.DELETE)),
            ClusterEventWithHint(ClusterEvent(EventResource.PERSISTENT_VOLUME_CLAIM, ActionType.ADD)),
            ClusterEventWithHint(ClusterEvent(VOLUME_ATTACHMENT, ActionType.DELETE)),
        ]


def new(args: Any, handle: fwk.Handle) -> NodeVolumeLimits:
    """Upstream ``NewCSI``: the plugin takes no args."""
    return NodeVolumeLimits()


__all__ = ["NAME", "NodeVolumeLimits", "new", "REASON_NOT_MODELLED"]
