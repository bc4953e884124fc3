"""The API objects plugins read and write besides nodes and pods: what upstream's plugins reach
through ``handle.SharedInformerFactory()`` listers and ``handle.ClientSet()``.

VolumeBinding reads PersistentVolumes, claims, StorageClasses and CSINodes and writes claim and
volume bindings at PreBind; DynamicResources reads ResourceSlices, DeviceClasses and claims and
writes claim allocations. In fastsched both go through ``handle.client``, an
:class:`ObjectClient`: the :class:`~fastsched.Scheduler` itself when a plugin runs inside one (its
writes fire the cluster events the queue reacts to, as the informers' would), or an
:class:`ObjectStore` for a framework built alone (``explain(..., objects=...)``, plugin tests).

Objects are the immutable :class:`~fastsched.api.objects.KubeObject` subclasses; a write replaces
the stored object with a new one (``obj.replace(...)`` or a re-parsed manifest), as an update to
the API server does.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Iterable, Protocol, runtime_checkable

from .interface import EventResource

if TYPE_CHECKING:  # pragma: no cover
    from ..api.objects import KubeObject

__all__ = ["EVENT_RESOURCE_OF_KIND", "CLUSTER_SCOPED_KINDS", "ObjectClient", "ObjectStore", "object_key"]

#: kind -> the cluster event resource its informer reports (upstream ``framework.EventResource``),
#: for the kinds whose events the scheduling queue registers interest in
EVENT_RESOURCE_OF_KIND: dict[str, EventResource] = {
    "PersistentVolume": EventResource.PERSISTENT_VOLUME,
    "PersistentVolumeClaim": EventResource.PERSISTENT_VOLUME_CLAIM,
    "StorageClass": EventResource.STORAGE_CLASS,
    "CSINode": EventResource.CSI_NODE,
    "CSIDriver": EventResource.CSI_DRIVER,
    "CSIStorageCapacity": EventResource.CSI_STORAGE_CAPACITY,
    "VolumeAttachment": EventResource.VOLUME_ATTACHMENT,
    "ResourceClaim": EventResource.RESOURCE_CLAIM,
    "ResourceSlice": EventResource.RESOURCE_SLICE,
    "DeviceClass": EventResource.DEVICE_CLASS,
    # the ResourceSlice tracker turns a rule's change into updates of the slices it taints
    "DeviceTaintRule": EventResource.RESOURCE_SLICE,
}

#: kinds without a namespace (their key is the name alone; the objects' own ``key`` is, as their
#: namespace is empty: a kind missing here was stored under its name and looked up under
#: ``namespace/name``, so ``get_object`` never found a RuntimeClass)
CLUSTER_SCOPED_KINDS = frozenset({"Node", "Namespace", "PriorityClass", "PersistentVolume", "StorageClass",
                                  "CSINode", "CSIDriver", "VolumeAttachment", "ResourceSlice", "DeviceClass",
                                  "DeviceTaintRule", "RuntimeClass"})


def object_key(kind: str, name: str, namespace: str = "") -> str:
    """The store key of an object: ``name`` for cluster-scoped kinds, else ``namespace/name``."""
    return name if kind in CLUSTER_SCOPED_KINDS else f"{namespace or 'default'}/{name}"


@runtime_checkable
class ObjectClient(Protocol):
    """Read and write API objects of any kind (``handle.client`` of a framework)."""

    def get_object(self, kind: str, name: str, namespace: str = "default") -> KubeObject | None:
        """The current object of ``kind`` named ``name`` (in ``namespace``), or None."""

    def list_objects(self, kind: str, namespace: str | None = None) -> list[KubeObject]:
        """The current objects of ``kind`` (in ``namespace`` when given), in the order added."""

    def add_object(self, obj: Any) -> KubeObject:
        """Create an object (an error when one of the same kind and key exists); returns the
        object as stored (a ``generateName`` resolved to its name), as the API's create does."""

    def update_object(self, obj: Any) -> None:
        """Replace the object of the same kind and key."""

    def delete_object(self, kind: str, name: str, namespace: str = "default") -> None:
        """Delete an object (KeyError when unknown)."""


class ObjectStore:
    """An :class:`ObjectClient` over plain dicts, for a framework that runs without a Scheduler.

    ``ObjectStore(objects)`` takes what :func:`~fastsched.api.objects_of` reads (files, manifests,
    fastsched objects); kinds are stored as given. Writes only change the store: no queue, no
    controllers (use a :class:`~fastsched.Scheduler` for those).
    """

    def __init__(self, objects: Any = (), *, strict: bool = False):
        self._by_kind: dict[str, dict[str, KubeObject]] = {}
        self._generated = 0
        if objects is None or objects == ():
            return
        from ..api import objects_of

        for obj in objects_of(objects, strict=strict):
            self.add_object(obj)

    def get_object(self, kind: str, name: str, namespace: str = "default") -> KubeObject | None:
        return self._by_kind.get(kind, {}).get(object_key(kind, name, namespace))

    def list_objects(self, kind: str, namespace: str | None = None) -> list[KubeObject]:
        objs = self._by_kind.get(kind, {}).values()
        return [o for o in objs if namespace is None or o.namespace == namespace]

    def add_object(self, obj: Any) -> KubeObject:
        obj = _one_object(obj)
        if obj.KIND == "PersistentVolume":  # the PV controller's first sync, as in a Scheduler
            from ..api.storage import synced_volume
            obj = synced_volume(obj)
        store = self._by_kind.setdefault(obj.KIND, {})
        if not obj.name and obj.generate_name:
            # the API server's generateName (its 5 random characters: a counter here)
            self._generated += 1
            name = f"{obj.generate_name}{self._generated:05d}"
            manifest = dict(obj.manifest) if obj.manifest else {}
            if manifest:
                manifest["metadata"] = {**(manifest.get("metadata") or {}), "name": name}
            obj = obj.replace(name=name, manifest=manifest)
        key = object_key(obj.KIND, obj.name, obj.namespace)
        if key in store:
            raise ValueError(f'{obj.KIND} "{key}" already exists')
        store[key] = obj
        return obj

    def update_object(self, obj: Any) -> None:
        obj = _one_object(obj)
        store = self._by_kind.get(obj.KIND, {})
        key = object_key(obj.KIND, obj.name, obj.namespace)
        if key not in store:
            raise KeyError(f"{obj.KIND} {key} is not known")
        store[key] = obj

    def delete_object(self, kind: str, name: str, namespace: str = "default") -> None:
        key = object_key(kind, name, namespace)
        if self._by_kind.get(kind, {}).pop(key, None) is None:
            raise KeyError(f"{kind} {key} is not known")

    def kinds(self) -> Iterable[str]:
        """The kinds stored (with at least one object)."""
        return [k for k, objs in self._by_kind.items() if objs]

    def __len__(self) -> int:
        return sum(len(objs) for objs in self._by_kind.values())


def _one_object(obj: Any) -> KubeObject:
    from ..api import objects_of
    from ..api.objects import KubeObject

    if isinstance(obj, KubeObject):
        return obj
    loaded = objects_of(obj)
    if len(loaded) != 1:
        raise ValueError(f"expected one object, got {len(loaded)}")
    return loaded[0]
