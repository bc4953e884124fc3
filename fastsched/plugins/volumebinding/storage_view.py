"""What the four volume plugins share: listers over ``handle.client``, CSI migration, row caches.

* :class:`StorageLister` stands for upstream's PVC / PV / StorageClass / CSINode / CSIDriver /
  CSIStorageCapacity listers. ``handle.client`` None (a bare framework in a unit test) reads as
  "no objects". Lookups that fail give upstream's NotFound texts (``persistentvolumeclaim "x" not
  found``); :class:`NotFoundError` carries them.
* CSI migration (``k8s.io/csi-translation-lib``, v1.34): in-tree plugin names, their CSI drivers,
  volume handles of translated volumes, and the topology keys translated PVs use.
* :class:`RowCache`: a per-row value of a node table (what a row's pods attach, say) recomputed only
  for rows whose ``row_version`` changed, and all over again when the storage objects change
  (:func:`storage_version`).
"""
from __future__ import annotations

import builtins

import weakref
from typing import TYPE_CHECKING, AbstractSet, Any, Callable, Iterable, Mapping, Protocol

import numpy as np

from ...framework import vectorized
from ...framework.objects import CLUSTER_SCOPED_KINDS
from ...framework.status import Code
from ...api.storage import (CSIDriver, CSINode, CSIStorageCapacity, PersistentVolume, PersistentVolumeClaim,
                            StorageClass, volume_source)

if TYPE_CHECKING:  # pragma: no cover
    from ...framework.protocols import NodeTable

STORAGE_KINDS = ("PersistentVolume", "PersistentVolumeClaim", "StorageClass", "CSINode", "CSIDriver",
                 "CSIStorageCapacity")

# -- csi-translation-lib ---------------------------------------------------------------------------
AWS_EBS_PLUGIN = "kubernetes.io/aws-ebs"
GCE_PD_PLUGIN = "kubernetes.io/gce-pd"
AZURE_DISK_PLUGIN = "kubernetes.io/azure-disk"
AZURE_FILE_PLUGIN = "kubernetes.io/azure-file"
CINDER_PLUGIN = "kubernetes.io/cinder"
VSPHERE_PLUGIN = "kubernetes.io/vsphere-volume"
PORTWORX_PLUGIN = "kubernetes.io/portworx-volume"
#: in-tree plugin -> its CSI driver (``GetCSINameFromInTreeName``)
CSI_DRIVER_OF_PLUGIN = {
    AWS_EBS_PLUGIN: "ebs.csi.aws.com",
    GCE_PD_PLUGIN: "pd.csi.storage.gke.io",
    AZURE_DISK_PLUGIN: "disk.csi.azure.com",
    AZURE_FILE_PLUGIN: "file.csi.azure.com",
    CINDER_PLUGIN: "cinder.csi.openstack.org",
    VSPHERE_PLUGIN: "csi.vsphere.vmware.com",
    PORTWORX_PLUGIN: "pxd.portworx.com",
}
#: volume source (camelCase) -> in-tree plugin, for the migratable sources
PLUGIN_OF_SOURCE = {
    "awsElasticBlockStore": AWS_EBS_PLUGIN,
    "gcePersistentDisk": GCE_PD_PLUGIN,
    "azureDisk": AZURE_DISK_PLUGIN,
    "azureFile": AZURE_FILE_PLUGIN,
    "cinder": CINDER_PLUGIN,
    "vsphereVolume": VSPHERE_PLUGIN,
    "portworxVolume": PORTWORX_PLUGIN,
}
#: translated PVs' zone topology key per plugin (``translateTopologyFromInTreeToCSI``)
CSI_ZONE_KEY_OF_PLUGIN = {
    AWS_EBS_PLUGIN: "topology.ebs.csi.aws.com/zone",
    GCE_PD_PLUGIN: "topology.gke.io/zone",
    AZURE_DISK_PLUGIN: "topology.disk.csi.azure.com/zone",
    CINDER_PLUGIN: "topology.cinder.csi.openstack.org/zone",
}
_UNSPECIFIED = "UNSPECIFIED"


class TranslationError(Exception):
    """A volume csi-translation-lib cannot translate (the message is upstream's)."""


def plugin_of_source(entry: Mapping[str, Any]) -> tuple[str, Mapping[str, Any]] | None:
    """(in-tree plugin, source dict) of a pod volume or PV spec with a migratable source."""
    for source, plugin in PLUGIN_OF_SOURCE.items():
        spec = volume_source(entry, source)
        if spec is not None:
            return plugin, spec
    return None


def csi_migration_on(csi_node: CSINode | None, plugin: str) -> bool:
    """NodeVolumeLimits' ``isCSIMigrationOn`` (nodevolumelimits/utils.go, v1.37): AWS EBS, Portworx,
    GCE PD, Azure Disk and Cinder are migrated on any node with a CSINode; the others are not
    counted. (v1.34 also wanted Portworx listed in the CSINode's migrated-plugins annotation; v1.37
    reads no annotation, the CSIMigrationPortworx gate being gone.)"""
    if csi_node is None or not plugin:
        return False
    return plugin in (AWS_EBS_PLUGIN, PORTWORX_PLUGIN, GCE_PD_PLUGIN, AZURE_DISK_PLUGIN, CINDER_PLUGIN)


class MigrationInfo(Protocol):
    """What the CSI migration checks read of a CSINode (``_MigratedEverywhere`` stands in for one)."""

    @property
    def migrated_plugins(self) -> AbstractSet[str]: ...


def plugin_migrated_on_node(csi_node: MigrationInfo | None, plugin: str) -> bool:
    """VolumeBinding's ``isPluginMigratedToCSIOnNode``: the CSINode annotation lists the plugin."""
    return csi_node is not None and plugin in csi_node.migrated_plugins


def _ebs_volume_id(volume_id: str) -> str:
    """``KubernetesVolumeIDToEBSVolumeID``: ``aws://zone/vol-x`` -> ``vol-x``."""
    if not volume_id.startswith("aws://"):
        return volume_id
    path = volume_id[len("aws://"):]
    path = path.split("/", 1)[1] if "/" in path else ""
    aws_id = path.strip("/")
    if not aws_id.startswith("vol-") or "/" in aws_id:
        raise TranslationError(f"Invalid format for AWS volume ({volume_id})")
    return aws_id


def translated_handle(plugin: str, spec: Mapping[str, Any], zone_labels: Mapping[str, str] | None = None) -> str:
    """The CSI ``volumeHandle`` csi-translation-lib gives an in-tree volume source."""
    if plugin == AWS_EBS_PLUGIN:
        return _ebs_volume_id(spec.get("volumeID") or spec.get("volume_id") or "")
    if plugin == GCE_PD_PLUGIN:
        pd = spec.get("pdName") or spec.get("pd_name") or ""
        zone = _UNSPECIFIED
        labels = zone_labels or {}
        value = labels.get("topology.kubernetes.io/zone") or labels.get("failure-domain.beta.kubernetes.io/zone")
        if value and "__" not in value:
            zone = value
        elif value:
            region = labels.get("topology.kubernetes.io/region") or labels.get(
                "failure-domain.beta.kubernetes.io/region") or _UNSPECIFIED
            return f"projects/{_UNSPECIFIED}/regions/{region}/disks/{pd}"
        return f"projects/{_UNSPECIFIED}/zones/{zone}/disks/{pd}"
    if plugin == AZURE_DISK_PLUGIN:
        return spec.get("diskURI") or spec.get("disk_uri") or ""
    if plugin in (CINDER_PLUGIN, PORTWORX_PLUGIN):
        return spec.get("volumeID") or spec.get("volume_id") or ""
    if plugin == AZURE_FILE_PLUGIN:
        return spec.get("shareName") or spec.get("share_name") or ""
    if plugin == VSPHERE_PLUGIN:
        return spec.get("volumePath") or spec.get("volume_path") or ""
    return ""


# -- listers ----------------------------------------------------------------------------------------
class NotFoundError(LookupError):
    """A lister miss; ``str()`` is upstream's NotFound text."""

    def __str__(self) -> str:
        return self.args[0]


_RESOURCE = {"PersistentVolumeClaim": "persistentvolumeclaim", "PersistentVolume": "persistentvolume",
             "StorageClass": "storageclass.storage.k8s.io", "CSINode": "csinode.storage.k8s.io",
             "CSIDriver": "csidriver.storage.k8s.io"}


def not_found(kind: str, name: str) -> NotFoundError:
    return NotFoundError(f'{_RESOURCE.get(kind, kind.lower())} "{name}" not found')


class StorageLister:
    """Upstream's storage listers over ``handle.client`` (None: no objects)."""

    __slots__ = ("client", "_stores")

    def __init__(self, client: Any):
        self.client = client
        #: the client's general object store by kind (``Cluster.object_stores``) when it has one:
        #: the lookups read it without ``get_object``'s dispatch (a dozen per pod of the volume cases)
        self._stores: Mapping[str, Mapping[str, Any]] | None = getattr(client, "object_stores", None)

    def _get(self, kind: str, name: str, namespace: str = "") -> Any:
        stores = self._stores
        if stores is not None:
            store = stores.get(kind)
            if store is None:
                return None
            return store.get(name if kind in CLUSTER_SCOPED_KINDS else f"{namespace or 'default'}/{name}")
        client = self.client
        if client is None:
            return None
        return client.get_object(kind, name, namespace or "default")

    def pvc(self, namespace: str, name: str) -> PersistentVolumeClaim | None:
        stores = self._stores
        if stores is not None:  # (_get's, inlined: the lookup of every cycle's claims)
            store = stores.get("PersistentVolumeClaim")
            return None if store is None else store.get(f"{namespace or 'default'}/{name}")
        return self._get("PersistentVolumeClaim", name, namespace)

    def pv(self, name: str) -> PersistentVolume | None:
        stores = self._stores
        if stores is not None:
            store = stores.get("PersistentVolume")
            return None if store is None else store.get(name)
        return self._get("PersistentVolume", name)

    def known_empty(self, kind: str) -> bool:
        """Whether the client is known to hold no object of ``kind`` (False when it cannot say
        without a list: a client without ``object_stores``)."""
        stores = self._stores
        return stores is not None and not stores.get(kind)

    def storage_class(self, name: str) -> StorageClass | None:
        return self._get("StorageClass", name)

    def csi_node(self, name: str) -> CSINode | None:
        return self._get("CSINode", name)

    def csi_driver(self, name: str) -> CSIDriver | None:
        return self._get("CSIDriver", name)

    def must_pvc(self, namespace: str, name: str) -> PersistentVolumeClaim:
        obj = self.pvc(namespace, name)
        if obj is None:
            raise not_found("PersistentVolumeClaim", name)
        return obj

    def must_pv(self, name: str) -> PersistentVolume:
        obj = self.pv(name)
        if obj is None:
            raise not_found("PersistentVolume", name)
        return obj

    def must_storage_class(self, name: str) -> StorageClass:
        obj = self.storage_class(name)
        if obj is None:
            raise not_found("StorageClass", name)
        return obj

    def list(self, kind: str) -> list:
        client = self.client
        return [] if client is None else client.list_objects(kind)

    def capacities(self) -> builtins.list[CSIStorageCapacity]:  # (``list`` here is the method above)
        return self.list("CSIStorageCapacity")


def storage_version(client: Any) -> Any:
    """A value that changes whenever a storage object is added, updated or deleted: the client's
    ``object_version`` counters when it has them (the Scheduler), else the identities of every
    storage object (an ObjectStore: small, explain-sized stores)."""
    if client is None:
        return None
    versions = getattr(client, "object_version", None)
    if versions is not None:
        return tuple(versions(kind) for kind in STORAGE_KINDS)
    return tuple(id(o) for kind in STORAGE_KINDS for o in client.list_objects(kind))


# -- row caches -------------------------------------------------------------------------------------
class RowCache:
    """Per-row values of one node table, recomputed for rows whose ``row_version`` moved.

    ``compute(table, row) -> value``; :meth:`values` returns the values of the given rows.
    ``on_change(row, old, new)`` (optional) lets the owner keep aggregates (per-driver counts) in
    step; it is called only when the row's value changed (``new != old``), so it must be a delta
    (taking ``old`` out and putting an equal ``new`` in changes nothing). The whole cache is dropped when ``version`` (see :func:`storage_version`) changes.
    """

    def __init__(self, compute: Callable[["NodeTable", int], Any],
                 on_change: Callable[[int, Any, Any], None] | None = None,
                 on_reset: Callable[[int], None] | None = None):
        self._compute = compute
        self._on_change = on_change
        self._on_reset = on_reset
        self._table_ref: Any = None
        self._version: Any = None
        self._row_versions = np.full(0, -1, dtype=np.int64)
        self._values: dict[int, Any] = {}

    def sync(self, table: "NodeTable", rows: np.ndarray, version: Any) -> None:
        """Bring the given rows up to date."""
        same_table = self._table_ref is not None and self._table_ref() is table
        if not same_table or version != self._version:
            self._table_ref = weakref.ref(table)
            self._version = version
            self._values = {}
            self._row_versions = np.full(len(table.row_version), -1, dtype=np.int64)
            if self._on_reset is not None:
                self._on_reset(len(table.row_version))
        if len(self._row_versions) < len(table.row_version):
            grown = np.full(len(table.row_version), -1, dtype=np.int64)
            grown[:len(self._row_versions)] = self._row_versions
            self._row_versions = grown
            if self._on_reset is not None:
                self._on_reset(-len(table.row_version))
        versions = table.row_version
        if 2 * len(rows) >= len(versions):
            # most of the table (a cycle's Filter over every node): one compare over the whole
            # columns instead of two gathers; rows outside ``rows`` brought up to date too (their
            # values are what computing them now gives, as a later sync would)
            stale = np.flatnonzero(self._row_versions[:len(versions)] != versions)
        else:
            stale = rows[self._row_versions[rows] != versions[rows]]
        for row in stale.tolist():
            old = self._values.get(row)
            new = self._compute(table, row) if table.live[row] else None
            self._values[row] = new
            self._row_versions[row] = table.row_version[row]
            if self._on_change is not None and new != old:
                # (an equal value, e.g. a row reloaded when its assumed pod is bound: the owner's
                # aggregates, kept as deltas, would take it out and put it back)
                self._on_change(row, old, new)

    def get(self, row: int) -> Any:
        return self._values.get(row)

    def items(self) -> Iterable[tuple[int, Any]]:
        return self._values.items()


_MIGRATED_CACHE: dict = {}


def migrated_rows(table: "NodeTable", lister: StorageLister, plugin: str, version: Any) -> np.ndarray:
    """(C,) bool: the rows whose CSINode lists ``plugin`` as migrated; cached per table, node set
    and storage version."""
    key = (id(table), table.node_version, version, plugin)
    hit = _MIGRATED_CACHE.get(key)
    if hit is not None:
        return hit
    out = np.zeros(len(table.row_version), dtype=bool)
    for name, row in table.row_of.items():
        out[row] = plugin_migrated_on_node(lister.csi_node(name), plugin)
    if len(_MIGRATED_CACHE) > 16:
        _MIGRATED_CACHE.clear()
    _MIGRATED_CACHE[key] = out
    return out


# -- the compiled cycle's window mask -------------------------------------------------------------
def verdicts_into_mask(verdicts: Any, rows: np.ndarray, mask: np.ndarray, first: bool) -> bool:
    """A volume plugin's ``filter_window_mask`` from its ``filter_vectorized`` answer on a window
    (``CompiledCycle._filter_windows``): whether each row passes (codes == 0) written into
    ``mask`` at ``rows`` (set when ``first``, else ANDed). An all-pass answer (the shared buffers
    of :meth:`FilterVerdicts.all_pass`, every cycle of the volume cases) costs at most one store,
    instead of the compare, the ``all`` and the AND the verdicts' path does per Filter. False
    (nothing written) for what the verdicts' path does not take into the mask: a Status answer or
    an Error verdict (the caller then asks ``filter_vectorized``, whose answer it rejects)."""
    if type(verdicts) is not vectorized.FilterVerdicts:
        return False
    codes = verdicts.codes
    if type(codes) is not np.ndarray or codes.shape != rows.shape:
        return False
    if codes.base is vectorized._PASS_CODES:
        if first:
            mask[rows] = 1
        return True
    ok = codes == 0
    if not ok.all() and (codes == int(Code.ERROR)).any():
        return False
    if first:
        mask[rows] = ok
    else:
        mask[rows] &= ok
    return True
