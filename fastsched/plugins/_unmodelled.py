"""Shared pieces of the in-tree plugins whose objects fastsched does not model yet: DynamicResources
(ResourceClaims, ResourceSlices, DeviceClasses). It behaves exactly as upstream for pods that use
none of those, and rejects the other pods at PreFilter with UnschedulableAndUnresolvable and a
fixed reason (:func:`not_modelled`). The volume plugins model their objects since issue 15 (see
:mod:`fastsched.plugins.volumebinding.storage_view`); the volume-source helpers stay here for
callers that still use them.

Pod volumes are the raw manifest entries (camelCase API form, or the snake_case dict of a
kubernetes-client model, where absent sources are present with a None value).
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Iterable, Mapping

from ..framework.status import Code, Status

if TYPE_CHECKING:  # pragma: no cover
    from ..api import Pod

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
