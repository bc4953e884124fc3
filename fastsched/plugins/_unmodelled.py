"""Shared pieces of the in-tree plugins whose objects fastsched does not model yet.

VolumeBinding, VolumeRestrictions, VolumeZone, NodeVolumeLimits and DynamicResources need
PersistentVolumeClaims, PersistentVolumes, StorageClasses, CSINodes or ResourceClaims, which
fastsched has no store for. They behave exactly as upstream for pods that use none of those, and
reject the other pods at PreFilter with UnschedulableAndUnresolvable and a fixed reason. Should
Filter run for such a pod without that rejection, it returns the same status at the point where
upstream would need the unmodelled objects (after any missing-state check upstream makes first).

Pod volumes are the raw manifest entries (camelCase API form, or the snake_case dict of a
kubernetes-client model, where absent sources are present with a None value).
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Iterable, Mapping, Sequence

from ..framework import protocols as fwk
from ..framework.vectorized import VectorizedFilterPlugin, FilterVerdicts
from ..framework.columns import FILTER_ON_NODES, ColumnForm
from ..framework.cycle_state import CycleState
from ..framework.interface import EnqueueExtensions, PreFilterExtensions, PreFilterPlugin
from ..framework.status import Code, Status

if TYPE_CHECKING:  # pragma: no cover
    from ..api import Pod
    from ..snapshot.table import NodeTable

# -- volume sources (camelCase names; the snake_case spelling is accepted too) ---------------------
PERSISTENT_VOLUME_CLAIM = "persistentVolumeClaim"
EPHEMERAL = "ephemeral"
GCE_PERSISTENT_DISK = "gcePersistentDisk"
AWS_ELASTIC_BLOCK_STORE = "awsElasticBlockStore"
RBD = "rbd"
ISCSI = "iscsi"
CINDER = "cinder"
AZURE_DISK = "azureDisk"
AZURE_FILE = "azureFile"
VSPHERE_VOLUME = "vsphereVolume"
PORTWORX_VOLUME = "portworxVolume"

_SNAKE = {
    PERSISTENT_VOLUME_CLAIM: "persistent_volume_claim",
    GCE_PERSISTENT_DISK: "gce_persistent_disk",
    AWS_ELASTIC_BLOCK_STORE: "aws_elastic_block_store",
    AZURE_DISK: "azure_disk",
    AZURE_FILE: "azure_file",
    VSPHERE_VOLUME: "vsphere_volume",
    PORTWORX_VOLUME: "portworx_volume",
}

# -- cluster event resources missing from fastsched.framework.interface.EventResource ----------------
# EventResource is a str enum, so these plain strings compare equal to upstream's resource names.
CSI_DRIVER = "storage.k8s.io/CSIDriver"
CSI_STORAGE_CAPACITY = "storage.k8s.io/CSIStorageCapacity"
VOLUME_ATTACHMENT = "storage.k8s.io/VolumeAttachment"
RESOURCE_CLAIM = "resource.k8s.io/ResourceClaim"
RESOURCE_SLICE = "resource.k8s.io/ResourceSlice"
DEVICE_CLASS = "resource.k8s.io/DeviceClass"


def volume_has(volume: Mapping[str, Any], source: str) -> bool:
    """Whether the volume entry sets ``source`` (a camelCase volume source name)."""
    if volume.get(source) is not None:
        return True
    snake = _SNAKE.get(source)
    return snake is not None and volume.get(snake) is not None


def pod_uses_any(pod: Pod, sources: Iterable[str]) -> bool:
    """Whether any of the pod's volumes sets one of ``sources``."""
    sources = tuple(sources)
    return any(volume_has(v, s) for v in pod.volumes for s in sources)


def not_modelled(plugin: str, what: str) -> Status:
    """The PreFilter rejection of a pod the plugin cannot evaluate without unmodelled objects."""
    return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, f"{plugin}: pods with {what} are not modelled by fastsched")


class UnmodelledVolumePlugin(PreFilterPlugin, VectorizedFilterPlugin, EnqueueExtensions):
    """What the unmodelled volume plugins share for the pods fastsched models.

    PreFilter rejects a pod that uses one of ``UNMODELLED_SOURCES`` (UnschedulableAndUnresolvable
    ``REASON_NOT_MODELLED``) and otherwise returns Skip, as upstream's do for pods without such
    volumes; Filter gives the same verdict on every node. Subclasses set the three class attributes
    and upstream's ``events_to_register``.
    """

    NAME: str = ""
    UNMODELLED_SOURCES: tuple[str, ...] = ()
    REASON_NOT_MODELLED: str = ""

    def name(self) -> str:
        return self.NAME

    def column_form(self, pod: Pod, table: NodeTable) -> ColumnForm | None:
        """The fused cycle's form for the pods modelled (PreFilter answers Skip for them)."""
        return None if self._unmodelled(pod) else FILTER_ON_NODES

    def _unmodelled(self, pod: Pod) -> bool:
        return pod_uses_any(pod, self.UNMODELLED_SOURCES)

    def _rejection(self) -> Status:
        return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, self.REASON_NOT_MODELLED)

    def pre_filter(self, state: CycleState, pod: Pod, nodes: Sequence[fwk.NodeInfo]) -> tuple[None, Status | None]:
        if self._unmodelled(pod):
            return None, self._rejection()
        return None, Status(Code.SKIP)

    def pre_filter_extensions(self) -> PreFilterExtensions | None:
        return None

    def _filter_status(self, state: CycleState, pod: Pod) -> Status | None:
        """The verdict for every node (it never depends on the node for the pods modelled)."""
        return self._rejection() if self._unmodelled(pod) else None

    def filter(self, state: CycleState, pod: Pod, node_info: fwk.NodeInfo) -> Status | None:
        return self._filter_status(state, pod)

    def filter_vectorized(self, state: CycleState, pod: Pod, nodes: fwk.NodeBatch) -> FilterVerdicts | Status:
        s = self._filter_status(state, pod)
        return FilterVerdicts.all_pass(len(nodes)) if s is None else s
