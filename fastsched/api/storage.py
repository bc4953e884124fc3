"""Storage objects: what the volume plugins read (core/v1 and storage.k8s.io/v1).

Typed views of ``v1`` PersistentVolume and PersistentVolumeClaim and ``storage.k8s.io/v1``
StorageClass, CSINode, CSIDriver and CSIStorageCapacity, with the API server's defaulting
(``pkg/apis/core/v1/defaults.go``, ``pkg/apis/storage/v1/defaults.go``) and the create-time
validation that matters to scheduling, with upstream's messages and field paths
(``pkg/apis/core/validation``, ``pkg/apis/storage/validation``).

Quantities (``capacity``, ``request``, ...) are :class:`~fastsched.api.quantity.Quantity` objects,
compared exactly as upstream's ``Cmp``; None when absent. The objects keep the manifest they were
read from; the ``with_*`` helpers return a changed copy whose manifest carries the change too, so
``Scheduler.objects(kind)`` shows a claim's binding after a run.

Also here, the pod-side helpers every volume plugin shares: which claim a pod volume names
(``persistentVolumeClaim`` or a generic ``ephemeral`` volume, upstream
``ephemeral.VolumeClaimName``), ``VolumeIsForPod``, the claim and volume class
(``GetPersistentVolumeClaimClass``) and PV node affinity (``CheckNodeAffinity``).

Parsers: ``parse_<kind>(manifest)``, also in :data:`STORAGE_PARSERS`; validators
``validate_<kind>(obj) -> list[FieldError]`` (ObjectMeta included), also in
:data:`STORAGE_VALIDATORS`.
"""
from __future__ import annotations

import copy
import dataclasses
import functools
from dataclasses import dataclass
from typing import Any, Callable, ClassVar, Mapping

from ..util.field import FieldError, FieldPath
from ._manifest import as_bool, as_int, as_list, as_map, as_optional_str, as_str, as_string_tuple, get_field
from ._meta import object_meta
from .labels import LabelSelector, NodeSelector
from .objects import KubeObject, _field_copier, _read_only, deterministic_uid
from .quantity import Quantity, parse_quantity
from .validation import _rfc3339, node_selector_errors, validate_label_selector, validate_object_meta

__all__ = [
    "with_creation_timestamp",
    "PersistentVolume", "PersistentVolumeClaim", "StorageClass", "CSINode", "CSINodeDriver", "CSIDriver",
    "CSIStorageCapacity", "ClaimRef", "parse_persistent_volume", "parse_persistent_volume_claim",
    "parse_storage_class", "parse_csi_node", "parse_csi_driver", "parse_csi_storage_capacity",
    "STORAGE_PARSERS", "STORAGE_VALIDATORS", "volume_source", "claim_name_of_volume", "ephemeral_claim_name",
    "volume_is_for_pod", "ephemeral_claim_manifests", "claim_class", "volume_class", "check_node_affinity", "pv_bound_to_claim",
    "ANN_BIND_COMPLETED", "ANN_BOUND_BY_CONTROLLER", "ANN_SELECTED_NODE", "ANN_BETA_STORAGE_CLASS",
    "ANN_MIGRATED_PLUGINS", "READ_WRITE_ONCE_POD", "WAIT_FOR_FIRST_CONSUMER", "IMMEDIATE", "NOT_SUPPORTED_PROVISIONER",
]

#: ``volume.AnnBindCompleted``: the PV controller finished binding the claim
ANN_BIND_COMPLETED = "pv.kubernetes.io/bind-completed"
#: ``volume.AnnBoundByController``
ANN_BOUND_BY_CONTROLLER = "pv.kubernetes.io/bound-by-controller"
#: ``volume.AnnSelectedNode``: the node the scheduler chose for a claim to provision
ANN_SELECTED_NODE = "volume.kubernetes.io/selected-node"
#: ``v1.BetaStorageClassAnnotation`` (read before ``spec.storageClassName``)
ANN_BETA_STORAGE_CLASS = "volume.beta.kubernetes.io/storage-class"
#: ``v1.MigratedPluginsAnnotationKey`` on CSINode: in-tree plugins migrated to CSI on the node
ANN_MIGRATED_PLUGINS = "storage.alpha.kubernetes.io/migrated-plugins"
#: set by the provisioner on the volumes it creates (the external provisioner deletes those)
ANN_PROVISIONED_BY = "pv.kubernetes.io/provisioned-by"
READ_WRITE_ONCE = "ReadWriteOnce"
READ_ONLY_MANY = "ReadOnlyMany"
READ_WRITE_MANY = "ReadWriteMany"
READ_WRITE_ONCE_POD = "ReadWriteOncePod"
_ACCESS_MODES = (READ_ONLY_MANY, READ_WRITE_MANY, READ_WRITE_ONCE, READ_WRITE_ONCE_POD)
WAIT_FOR_FIRST_CONSUMER = "WaitForFirstConsumer"
IMMEDIATE = "Immediate"
_BINDING_MODES = (IMMEDIATE, WAIT_FOR_FIRST_CONSUMER)
#: ``volume.NotSupportedProvisioner``: a class whose claims are never provisioned
NOT_SUPPORTED_PROVISIONER = "kubernetes.io/no-provisioner"
FILESYSTEM = "Filesystem"
BLOCK = "Block"
_VOLUME_MODES = (BLOCK, FILESYSTEM)
_RECLAIM_POLICIES = ("Delete", "Recycle", "Retain")
#: ``spec`` keys of a PersistentVolume that are volume sources (one must be set)
PV_SOURCES = ("awsElasticBlockStore", "azureDisk", "azureFile", "cephfs", "cinder", "csi", "fc", "flexVolume",
              "flocker", "gcePersistentDisk", "glusterfs", "hostPath", "iscsi", "local", "nfs", "photonPersistentDisk",
              "portworxVolume", "quobyte", "rbd", "scaleIO", "storageos", "vsphereVolume")


_SNAKE_OF: dict[str, str] = {}


def _snake(name: str) -> str:
    snake = _SNAKE_OF.get(name)
    if snake is None:
        snake = _SNAKE_OF[name] = "".join("_" + ch.lower() if ch.isupper() else ch for ch in name)
    return snake


def volume_source(entry: Mapping[str, Any], source: str) -> Mapping[str, Any] | None:
    """The ``source`` part (camelCase name) of a pod volume or PV spec, also read in the
    snake_case form of a kubernetes-client model; None when not set."""
    value = entry.get(source)
    if value is None:
        snake = _SNAKE_OF.get(source) or _snake(source)
        if snake != source:
            value = entry.get(snake)
    return value


# --------------------------------------------------------------------------------------------
# Objects
# --------------------------------------------------------------------------------------------
@dataclass(slots=True, frozen=True)
class ClaimRef:
    """A PV's ``spec.claimRef`` (the parts binding reads)."""

    namespace: str = ""
    name: str = ""
    uid: str = ""


@dataclass(slots=True, kw_only=True, eq=False)
class PersistentVolume(KubeObject):
    """A ``v1`` PersistentVolume. ``source`` names its volume source (``csi``,
    ``awsElasticBlockStore``, ...; "" when none) and ``source_spec`` is that source's dict.
    ``node_affinity`` is ``spec.nodeAffinity.required`` (None: any node). ``phase`` is
    ``status.phase`` (the API server stores ``Pending`` on create)."""

    KIND: ClassVar[str] = "PersistentVolume"

    capacity: Quantity | None = None
    capacity_keys: tuple[str, ...] = ()
    access_modes: tuple[str, ...] = ()
    storage_class_name: str = ""
    volume_mode: str | None = FILESYSTEM
    node_affinity: NodeSelector | None = None
    claim_ref: ClaimRef | None = None
    phase: str = "Pending"
    source: str = ""
    sources: tuple[str, ...] = ()
    source_spec: Mapping[str, Any] | None = None
    reclaim_policy: str = "Retain"
    volume_attributes_class_name: str | None = None

    @property
    def csi_driver(self) -> str:
        return (self.source_spec or {}).get("driver", "") if self.source == "csi" else ""

    @property
    def csi_volume_handle(self) -> str:
        if self.source != "csi":
            return ""
        spec = self.source_spec or {}
        return spec.get("volumeHandle") or spec.get("volume_handle") or ""


@dataclass(slots=True, kw_only=True, eq=False)
class PersistentVolumeClaim(KubeObject):
    """A ``v1`` PersistentVolumeClaim. ``storage_class_name`` is ``spec.storageClassName`` (None
    when unset: see :func:`claim_class`); ``request`` is ``spec.resources.requests.storage``."""

    KIND: ClassVar[str] = "PersistentVolumeClaim"

    namespace: str = "default"
    access_modes: tuple[str, ...] = ()
    selector: LabelSelector | None = None
    request: Quantity | None = None
    request_keys: tuple[str, ...] = ()
    storage_class_name: str | None = None
    volume_name: str = ""
    volume_mode: str | None = FILESYSTEM
    phase: str = "Pending"
    volume_attributes_class_name: str | None = None


@dataclass(slots=True, kw_only=True, eq=False)
class StorageClass(KubeObject):
    """A ``storage.k8s.io/v1`` StorageClass (defaults: reclaimPolicy Delete, volumeBindingMode
    Immediate). ``allowed_topologies`` is a tuple of terms, each a tuple of ``(key, values)``."""

    KIND: ClassVar[str] = "StorageClass"

    provisioner: str = ""
    volume_binding_mode: str | None = IMMEDIATE
    allowed_topologies: tuple[tuple[tuple[str, tuple[str, ...]], ...], ...] = ()
    reclaim_policy: str = "Delete"
    parameters: Mapping[str, str] | None = None


@dataclass(slots=True, frozen=True)
class CSINodeDriver:
    """One ``spec.drivers`` entry of a CSINode; ``count`` is ``allocatable.count`` (None: no limit)."""

    name: str
    node_id: str = ""
    count: int | None = None
    topology_keys: tuple[str, ...] = ()


@dataclass(slots=True, kw_only=True, eq=False)
class CSINode(KubeObject):
    """A ``storage.k8s.io/v1`` CSINode (named like its node)."""

    KIND: ClassVar[str] = "CSINode"

    drivers: tuple[CSINodeDriver, ...] = ()

    @property
    def migrated_plugins(self) -> frozenset[str]:
        """The in-tree plugins listed in the ``storage.alpha.kubernetes.io/migrated-plugins`` annotation."""
        value = self.annotations.get(ANN_MIGRATED_PLUGINS, "")
        return frozenset(value.split(",")) if value else frozenset()


@dataclass(slots=True, kw_only=True, eq=False)
class CSIDriver(KubeObject):
    """A ``storage.k8s.io/v1`` CSIDriver (defaults: attachRequired true, storageCapacity false)."""

    KIND: ClassVar[str] = "CSIDriver"

    attach_required: bool = True
    storage_capacity: bool | None = False
    #: ``spec.preventPodSchedulingIfMissing`` (v1.35+, VolumeLimitScaling): NodeVolumeLimits refuses
    #: nodes whose CSINode lacks the driver (None: unset)
    prevent_pod_scheduling_if_missing: bool | None = None


@dataclass(slots=True, kw_only=True, eq=False)
class CSIStorageCapacity(KubeObject):
    """A ``storage.k8s.io/v1`` CSIStorageCapacity (namespaced). ``node_topology`` None means the
    capacity is reachable from no node."""

    KIND: ClassVar[str] = "CSIStorageCapacity"

    namespace: str = "default"
    storage_class_name: str = ""
    node_topology: LabelSelector | None = None
    capacity: Quantity | None = None
    maximum_volume_size: Quantity | None = None


# --------------------------------------------------------------------------------------------
# Parsing
# --------------------------------------------------------------------------------------------
def _quantity(value: Any, path: str) -> Quantity | None:
    return None if value is None else parse_quantity(value, path)


def _resource_list(value: Any, path: str) -> tuple[Quantity | None, tuple[str, ...]]:
    """The ``storage`` entry of a ResourceList and every key (for validation)."""
    entries = as_map(value, path)
    storage = entries.get("storage")
    return _quantity(storage, f"{path}.storage"), tuple(entries)


def _node_selector(value: Any, path: str) -> NodeSelector | None:
    if value is None:
        return None
    return NodeSelector.from_dict(value, path)


def parse_persistent_volume(obj: Mapping[str, Any]) -> PersistentVolume:
    """Build a PersistentVolume from a manifest dict (``SetDefaults_PersistentVolume``: reclaim
    policy Retain, volumeMode Filesystem, phase Pending)."""
    meta = object_meta(obj, namespaced=False)
    spec = as_map(obj.get("spec"), "spec")
    status = as_map(obj.get("status"), "status")
    capacity, capacity_keys = _resource_list(spec.get("capacity"), "spec.capacity")
    affinity = as_map(get_field(spec, "nodeAffinity"), "spec.nodeAffinity")
    claim_ref_raw = get_field(spec, "claimRef")
    claim_ref = None
    if claim_ref_raw is not None:
        raw = as_map(claim_ref_raw, "spec.claimRef")
        claim_ref = ClaimRef(namespace=as_str(raw.get("namespace"), "spec.claimRef.namespace"),
                             name=as_str(raw.get("name"), "spec.claimRef.name"),
                             uid=as_str(raw.get("uid"), "spec.claimRef.uid"))
    sources = tuple(s for s in PV_SOURCES if volume_source(spec, s) is not None)
    source = sources[0] if sources else ""
    source_spec = as_map(volume_source(spec, source), f"spec.{source}") if source else None
    return PersistentVolume(
        **meta,
        capacity=capacity,
        capacity_keys=capacity_keys,
        access_modes=as_string_tuple(get_field(spec, "accessModes"), "spec.accessModes"),
        storage_class_name=as_str(get_field(spec, "storageClassName"), "spec.storageClassName"),
        volume_mode=as_optional_str(get_field(spec, "volumeMode"), "spec.volumeMode") or FILESYSTEM,
        node_affinity=_node_selector(affinity.get("required"), "spec.nodeAffinity.required"),
        claim_ref=claim_ref,
        phase=as_str(status.get("phase"), "status.phase") or "Pending",
        source=source,
        sources=sources,
        source_spec=source_spec,
        reclaim_policy=as_str(get_field(spec, "persistentVolumeReclaimPolicy"),
                              "spec.persistentVolumeReclaimPolicy") or "Retain",
        volume_attributes_class_name=as_optional_str(get_field(spec, "volumeAttributesClassName"),
                                                     "spec.volumeAttributesClassName"),
    )


def parse_persistent_volume_claim(obj: Mapping[str, Any]) -> PersistentVolumeClaim:
    """Build a PersistentVolumeClaim from a manifest dict (``SetDefaults_PersistentVolumeClaim``:
    volumeMode Filesystem, phase Pending)."""
    meta = object_meta(obj, namespaced=True)
    spec = as_map(obj.get("spec"), "spec")
    status = as_map(obj.get("status"), "status")
    resources = as_map(spec.get("resources"), "spec.resources")
    request, request_keys = _resource_list(resources.get("requests"), "spec.resources.requests")
    selector_raw = spec.get("selector")
    selector = None if selector_raw is None else LabelSelector.from_dict(selector_raw, "spec.selector")
    return PersistentVolumeClaim(
        **meta,
        access_modes=as_string_tuple(get_field(spec, "accessModes"), "spec.accessModes"),
        selector=selector,
        request=request,
        request_keys=request_keys,
        storage_class_name=as_optional_str(get_field(spec, "storageClassName"), "spec.storageClassName"),
        volume_name=as_str(get_field(spec, "volumeName"), "spec.volumeName"),
        volume_mode=as_optional_str(get_field(spec, "volumeMode"), "spec.volumeMode") or FILESYSTEM,
        phase=as_str(status.get("phase"), "status.phase") or "Pending",
        volume_attributes_class_name=as_optional_str(get_field(spec, "volumeAttributesClassName"),
                                                     "spec.volumeAttributesClassName"),
    )


def _topology_terms(value: Any, path: str) -> tuple[tuple[tuple[str, tuple[str, ...]], ...], ...]:
    terms = []
    for i, raw_term in enumerate(as_list(value, path)):
        term_path = f"{path}[{i}]"
        term = as_map(raw_term, term_path)
        exprs_path = f"{term_path}.matchLabelExpressions"
        exprs = []
        for j, raw_expr in enumerate(as_list(get_field(term, "matchLabelExpressions"), exprs_path)):
            expr = as_map(raw_expr, f"{exprs_path}[{j}]")
            exprs.append((as_str(expr.get("key"), f"{exprs_path}[{j}].key"),
                          as_string_tuple(expr.get("values"), f"{exprs_path}[{j}].values")))
        terms.append(tuple(exprs))
    return tuple(terms)


def parse_storage_class(obj: Mapping[str, Any]) -> StorageClass:
    """Build a StorageClass from a manifest dict (``SetDefaults_StorageClass``)."""
    meta = object_meta(obj, namespaced=False)
    params = obj.get("parameters")
    return StorageClass(
        **meta,
        provisioner=as_str(obj.get("provisioner"), "provisioner"),
        volume_binding_mode=as_str(get_field(obj, "volumeBindingMode"), "volumeBindingMode") or IMMEDIATE,
        allowed_topologies=_topology_terms(get_field(obj, "allowedTopologies"), "allowedTopologies"),
        reclaim_policy=as_str(get_field(obj, "reclaimPolicy"), "reclaimPolicy") or "Delete",
        parameters=None if params is None else dict(as_map(params, "parameters")),
    )


def parse_csi_node(obj: Mapping[str, Any]) -> CSINode:
    """Build a CSINode from a manifest dict."""
    meta = object_meta(obj, namespaced=False)
    spec = as_map(obj.get("spec"), "spec")
    drivers = []
    for i, raw in enumerate(as_list(spec.get("drivers"), "spec.drivers")):
        path = f"spec.drivers[{i}]"
        d = as_map(raw, path)
        allocatable = as_map(d.get("allocatable"), f"{path}.allocatable")
        drivers.append(CSINodeDriver(
            name=as_str(d.get("name"), f"{path}.name"),
            node_id=as_str(get_field(d, "nodeID") or d.get("node_id"), f"{path}.nodeID"),
            count=as_int(allocatable.get("count"), f"{path}.allocatable.count"),
            topology_keys=as_string_tuple(get_field(d, "topologyKeys"), f"{path}.topologyKeys")))
    return CSINode(**meta, drivers=tuple(drivers))


def parse_csi_driver(obj: Mapping[str, Any]) -> CSIDriver:
    """Build a CSIDriver from a manifest dict (``SetDefaults_CSIDriver``)."""
    meta = object_meta(obj, namespaced=False)
    spec = as_map(obj.get("spec"), "spec")
    return CSIDriver(
        **meta,
        attach_required=as_bool(get_field(spec, "attachRequired"), "spec.attachRequired", True),
        storage_capacity=as_bool(get_field(spec, "storageCapacity"), "spec.storageCapacity", False),
        prevent_pod_scheduling_if_missing=(
            None if get_field(spec, "preventPodSchedulingIfMissing") is None
            else as_bool(get_field(spec, "preventPodSchedulingIfMissing"), "spec.preventPodSchedulingIfMissing")),
    )


def parse_csi_storage_capacity(obj: Mapping[str, Any]) -> CSIStorageCapacity:
    """Build a CSIStorageCapacity from a manifest dict."""
    meta = object_meta(obj, namespaced=True)
    topology = get_field(obj, "nodeTopology")
    return CSIStorageCapacity(
        **meta,
        storage_class_name=as_str(get_field(obj, "storageClassName"), "storageClassName"),
        node_topology=None if topology is None else LabelSelector.from_dict(topology, "nodeTopology"),
        capacity=_quantity(obj.get("capacity"), "capacity"),
        maximum_volume_size=_quantity(get_field(obj, "maximumVolumeSize"), "maximumVolumeSize"),
    )


STORAGE_PARSERS: dict[str, Callable[[Mapping[str, Any]], KubeObject]] = {
    "PersistentVolume": parse_persistent_volume,
    "PersistentVolumeClaim": parse_persistent_volume_claim,
    "StorageClass": parse_storage_class,
    "CSINode": parse_csi_node,
    "CSIDriver": parse_csi_driver,
    "CSIStorageCapacity": parse_csi_storage_capacity,
}


# --------------------------------------------------------------------------------------------
# Validation (create)
# --------------------------------------------------------------------------------------------
def _meta_errors(obj: KubeObject, namespaced: bool) -> list[FieldError]:
    return validate_object_meta(obj, namespaced=namespaced)


def _access_mode_errors(modes: tuple[str, ...], path: FieldPath, required_detail: str) -> list[FieldError]:
    errors: list[FieldError] = []
    if not modes:
        errors.append(FieldError.required(path, required_detail))
    for mode in modes:
        if mode not in _ACCESS_MODES:
            errors.append(FieldError.not_supported(path, mode, _ACCESS_MODES))
    if READ_WRITE_ONCE_POD in modes and len(modes) > 1:
        errors.append(FieldError.forbidden(path, "may not use ReadWriteOncePod with other access modes"))
    return errors


def _positive_storage_errors(q: Quantity | None, path: FieldPath) -> list[FieldError]:
    if q is not None and q.sign() <= 0:
        return [FieldError.invalid(path, str(q), "must be greater than zero")]
    return []


def validate_persistent_volume(pv: PersistentVolume) -> list[FieldError]:
    """``ValidatePersistentVolume`` (create): capacity, access modes, one volume source, volume
    mode, reclaim policy, node affinity."""
    errors = _meta_errors(pv, namespaced=False)
    spec = FieldPath("spec")
    errors += _access_mode_errors(pv.access_modes, spec.child("accessModes"), "")
    if not pv.capacity_keys:
        errors.append(FieldError.required(spec.child("capacity"), ""))
    for key in pv.capacity_keys:
        if key != "storage":
            errors.append(FieldError.not_supported(spec.child("capacity").key(key), key, ["storage"]))
    errors += _positive_storage_errors(pv.capacity, spec.child("capacity").key("storage"))
    if pv.reclaim_policy not in _RECLAIM_POLICIES:
        errors.append(FieldError.not_supported(spec.child("persistentVolumeReclaimPolicy"), pv.reclaim_policy,
                                               _RECLAIM_POLICIES))
    if not pv.sources:
        errors.append(FieldError.required(spec, "must specify a volume type"))
    for extra in pv.sources[1:]:
        errors.append(FieldError.forbidden(spec.child(extra), "may not specify more than 1 volume type"))
    if pv.source == "csi":
        csi_path = spec.child("csi")
        if not pv.csi_driver:
            errors.append(FieldError.required(csi_path.child("driver"), ""))
        if not pv.csi_volume_handle:
            errors.append(FieldError.required(csi_path.child("volumeHandle"), ""))
    if pv.volume_mode is not None and pv.volume_mode not in _VOLUME_MODES:
        errors.append(FieldError.not_supported(spec.child("volumeMode"), pv.volume_mode, _VOLUME_MODES))
    if pv.node_affinity is not None:
        errors += node_selector_errors(pv.node_affinity, spec.child("nodeAffinity", "required"))
    if pv.source == "local" and pv.node_affinity is None:
        errors.append(FieldError.required(spec.child("nodeAffinity"), "Local volume requires node affinity"))
    return errors


def validate_persistent_volume_claim(pvc: PersistentVolumeClaim) -> list[FieldError]:
    """``ValidatePersistentVolumeClaim`` (create): access modes, a positive storage request,
    volume mode, selector."""
    errors = _meta_errors(pvc, namespaced=True)
    spec = FieldPath("spec")
    errors += _access_mode_errors(pvc.access_modes, spec.child("accessModes"), "at least 1 access mode is required")
    storage_path = spec.child("resources").key("storage")
    if pvc.request is None:
        errors.append(FieldError.required(storage_path, ""))
    else:
        errors += _positive_storage_errors(pvc.request, storage_path)
    if pvc.volume_mode is not None and pvc.volume_mode not in _VOLUME_MODES:
        errors.append(FieldError.not_supported(spec.child("volumeMode"), pvc.volume_mode, _VOLUME_MODES))
    if pvc.selector is not None:
        errors += validate_label_selector(pvc.selector, spec.child("selector"))
    return errors


def validate_storage_class(sc: StorageClass) -> list[FieldError]:
    """``ValidateStorageClass``: provisioner, reclaim policy, binding mode, allowed topologies."""
    errors = _meta_errors(sc, namespaced=False)
    if not sc.provisioner:
        errors.append(FieldError.required(FieldPath("provisioner"), sc.provisioner))
    if sc.reclaim_policy not in ("Delete", "Retain"):
        errors.append(FieldError.not_supported(FieldPath("reclaimPolicy"), sc.reclaim_policy, ("Delete", "Retain")))
    if sc.volume_binding_mode is None:
        errors.append(FieldError.required(FieldPath("volumeBindingMode"), ""))
    elif sc.volume_binding_mode not in _BINDING_MODES:
        errors.append(FieldError.not_supported(FieldPath("volumeBindingMode"), sc.volume_binding_mode, _BINDING_MODES))
    for i, term in enumerate(sc.allowed_topologies):
        term_path = FieldPath("allowedTopologies").index(i)
        if not term:
            errors.append(FieldError.required(term_path.child("matchLabelExpressions"),
                                              "must contain at least one requirement"))
        keys: set[str] = set()
        for j, (key, values) in enumerate(term):
            expr_path = term_path.child("matchLabelExpressions").index(j)
            if key in keys:
                errors.append(FieldError.duplicate(expr_path.child("key"), key))
            keys.add(key)
            if not values:
                errors.append(FieldError.required(expr_path.child("values"),
                                                  "must specify as least one value"))
    return errors


def validate_csi_node(node: CSINode) -> list[FieldError]:
    """``ValidateCSINode``: driver names unique and present, counts not negative."""
    errors = _meta_errors(node, namespaced=False)
    seen: set[str] = set()
    for i, d in enumerate(node.drivers):
        path = FieldPath("spec").child("drivers").index(i)
        if not d.name:
            errors.append(FieldError.required(path.child("name"), ""))
        elif d.name in seen:
            errors.append(FieldError.duplicate(path.child("name"), d.name))
        seen.add(d.name)
        if not d.node_id:
            errors.append(FieldError.required(path.child("nodeID"), ""))
        if d.count is not None and d.count < 0:
            errors.append(FieldError.invalid(path.child("allocatable", "count"), d.count,
                                             "must be greater than or equal to 0"))
    return errors


def validate_csi_driver(driver: CSIDriver) -> list[FieldError]:
    """``ValidateCSIDriver`` (the name is a driver name)."""
    return _meta_errors(driver, namespaced=False)


def validate_csi_storage_capacity(cap: CSIStorageCapacity) -> list[FieldError]:
    """``ValidateCSIStorageCapacity``: a storage class name, quantities not negative."""
    errors = _meta_errors(cap, namespaced=True)
    if not cap.storage_class_name:
        errors.append(FieldError.required(FieldPath("storageClassName"), ""))
    for name, q in (("capacity", cap.capacity), ("maximumVolumeSize", cap.maximum_volume_size)):
        if q is not None and q.sign() < 0:
            errors.append(FieldError.invalid(FieldPath(name), str(q), "must be greater than or equal to 0"))
    return errors


STORAGE_VALIDATORS: dict[str, Callable[[Any], list[FieldError]]] = {
    "PersistentVolume": validate_persistent_volume,
    "PersistentVolumeClaim": validate_persistent_volume_claim,
    "StorageClass": validate_storage_class,
    "CSINode": validate_csi_node,
    "CSIDriver": validate_csi_driver,
    "CSIStorageCapacity": validate_csi_storage_capacity,
}


# --------------------------------------------------------------------------------------------
# Helpers shared by the volume plugins
# --------------------------------------------------------------------------------------------
def ephemeral_claim_name(pod_name: str, volume_name: str) -> str:
    """``ephemeral.VolumeClaimName``: the claim of a generic ephemeral volume."""
    return f"{pod_name}-{volume_name}"


def claim_name_of_volume(pod: Any, volume: Mapping[str, Any]) -> tuple[str, bool] | None:
    """``(claim name, is ephemeral)`` of a pod volume backed by a claim, else None."""
    pvc = volume_source(volume, "persistentVolumeClaim")
    if pvc is not None:
        return (pvc.get("claimName") or pvc.get("claim_name") or "", False)
    if volume.get("ephemeral") is not None:
        return (ephemeral_claim_name(pod.name, volume.get("name") or ""), True)
    return None


def volume_is_for_pod(pod: Any, pvc: PersistentVolumeClaim) -> str | None:
    """``ephemeral.VolumeIsForPod``: None when the claim is controlled by the pod, else the error."""
    if pvc.namespace == pod.namespace and any(ref.controller and ref.uid == pod.uid for ref in pvc.owner_references):
        return None
    return (f"PVC {pvc.namespace}/{pvc.name} was not created for pod {pod.namespace}/{pod.name} "
            "(pod is not owner)")


def claim_class(pvc: PersistentVolumeClaim) -> str:
    """``GetPersistentVolumeClaimClass``: the beta annotation, else ``spec.storageClassName``, else ""."""
    annotated = pvc.annotations.get(ANN_BETA_STORAGE_CLASS)
    if annotated is not None:
        return annotated
    return pvc.storage_class_name or ""


def volume_class(pv: PersistentVolume) -> str:
    """``GetPersistentVolumeClass``: the beta annotation, else ``spec.storageClassName``."""
    annotated = pv.annotations.get(ANN_BETA_STORAGE_CLASS)
    return annotated if annotated is not None else pv.storage_class_name


class _LabelsOnly:
    """A node with labels and no name: what ``CheckNodeAffinity`` matches (matchFields ignored)."""

    __slots__ = ("labels",)
    name = ""

    def __init__(self, labels: Mapping[str, str]):
        self.labels = labels


def check_node_affinity(node_affinity: NodeSelector | None, node_labels: Mapping[str, str]) -> bool:
    """``volume.CheckNodeAffinity``: whether a PV's required node affinity admits a node with
    these labels (no affinity: any node; matchFields are not looked at)."""
    if node_affinity is None:
        return True
    return node_affinity.matches(_LabelsOnly(node_labels))


def pv_bound_to_claim(pv: PersistentVolume, pvc: PersistentVolumeClaim) -> bool:
    """``IsVolumeBoundToClaim``: the PV's claimRef names the claim (and its UID, when set)."""
    ref = pv.claim_ref
    if ref is None or ref.name != pvc.name or ref.namespace != pvc.namespace:
        return False
    return not ref.uid or ref.uid == pvc.uid


def _map(m: dict, key: str) -> dict:
    """``m[key]``, a new empty map when absent or null (Go decodes a null map or struct as empty)."""
    child = m.get(key)
    if child is None:
        child = m[key] = {}
    return child


def _with_manifest(obj: KubeObject, mutate: Callable[[dict], None], **changes: Any) -> Any:
    """``obj`` with ``changes``; its manifest (when it has one) changed by ``mutate`` too."""
    manifest = obj.manifest
    if manifest:
        copied = copy.deepcopy(dict(manifest))
        mutate(copied)
        manifest = copied
    new = obj.replace(manifest=manifest, **changes)
    new.admitted = True
    return new


#: [(timestamp, its RFC 3339 text)] of the last ``with_creation_timestamp`` that formatted one
#: (one tuple, replaced whole: a reader gets a pair that belongs together)
_LAST_TIMESTAMP_TEXT: list[tuple[float | None, str | None]] = [(None, None)]


def with_creation_timestamp(obj: KubeObject, timestamp: float | None) -> Any:
    """``obj`` with ``metadata.creationTimestamp`` set to ``timestamp`` (seconds; None: unset), in
    its manifest too (RFC 3339, whole seconds, as the API server writes it), still admitted. The
    manifest is copied down to its metadata only (the rest is shared, as a replace shares it)."""
    manifest = obj.manifest
    if manifest:
        meta = dict(manifest.get("metadata") or {})
        # the text of the last timestamp formatted: every object created within one second of
        # the run's clock gets the same one (strftime per created object was ~2% of a DRA
        # extended-resource pod, whose PreBind creates a claim: issues 27, 29)
        kept = _LAST_TIMESTAMP_TEXT[0]
        if kept[0] is not None and kept[0] == timestamp:
            text = kept[1]
        else:
            text = _rfc3339(timestamp)
            _LAST_TIMESTAMP_TEXT[0] = (timestamp, text)
        if text is None:
            meta.pop("creationTimestamp", None)
        else:
            meta["creationTimestamp"] = text
        manifest = {**manifest, "metadata": meta}
    copier = _replace_copier(type(obj))
    if copier is None:
        new = obj.replace(manifest=manifest, creation_timestamp=timestamp)
    else:
        # replace()'s object without its __init__ (~20-28 us a PV or claim at load ~8, twice a
        # pod of the scheduler_perf volume cases; the copy ~1-2 us): every field copied, the two
        # changed set, then what KubeObject.__post_init__ (the class's only one) would do again
        new = copier(obj)
        new.manifest = manifest
        new.creation_timestamp = timestamp
        if not new.uid and new.name:
            new.uid = deterministic_uid(new.KIND, new.namespace, new.name)
        new.labels = _read_only(new.labels)
        new.annotations = _read_only(new.annotations)
    new.admitted = obj.admitted
    new.decoded_under = obj.decoded_under  # (only the creation time changed: decoded as before)
    return new


#: the fields KubeObject declares ``init=False``: set by with_creation_timestamp after the copy
_KUBE_OBJECT_NON_INIT = frozenset(f.name for f in dataclasses.fields(KubeObject) if not f.init)


@functools.lru_cache(maxsize=None)
def _make_replace_copier(cls: type) -> Callable[[Any], Any] | None:
    """A field copier (``_field_copier``) for a class whose ``replace`` result
    :func:`with_creation_timestamp` can build by a field copy: a dataclass whose only
    ``__post_init__`` is KubeObject's and whose only ``init=False`` fields are KubeObject's (which
    the caller sets); else None (``replace``: a subclass's ``__post_init__`` may derive or reset
    other fields)."""
    if getattr(cls, "__post_init__", None) is not KubeObject.__post_init__:
        return None
    if {f.name for f in dataclasses.fields(cls) if not f.init} != _KUBE_OBJECT_NON_INIT:
        return None
    return _field_copier(cls)


# (typed as taking any class, as objects._field_copier is: mypy refuses a KubeObject class as
# lru_cache's Hashable by its instances' __hash__)
_replace_copier: Callable[[type], Callable[[Any], Any] | None] = _make_replace_copier


def with_claim_ref(pv: PersistentVolume, pvc: PersistentVolumeClaim, bound_by_controller: bool) -> PersistentVolume:
    """``GetBindVolumeToClaim``'s new PV: claimRef set to the claim (with its UID) and, unless it
    was pre-bound, the ``pv.kubernetes.io/bound-by-controller`` annotation."""
    ref = ClaimRef(namespace=pvc.namespace, name=pvc.name, uid=pvc.uid)
    annotations = dict(pv.annotations)
    if bound_by_controller:
        annotations[ANN_BOUND_BY_CONTROLLER] = "yes"

    def mutate(m: dict) -> None:
        _map(m, "spec")["claimRef"] = {"kind": "PersistentVolumeClaim", "apiVersion": "v1",
                                                "namespace": pvc.namespace, "name": pvc.name, "uid": pvc.uid}
        if bound_by_controller:
            _map(_map(m, "metadata"), "annotations")[ANN_BOUND_BY_CONTROLLER] = "yes"

    return _with_manifest(pv, mutate, claim_ref=ref, annotations=annotations)


def with_phase(obj: Any, phase: str) -> Any:
    """The PV or claim with ``status.phase`` set."""
    return _with_manifest(obj, lambda m: _map(m, "status").__setitem__("phase", phase), phase=phase)


def synced_volume(pv: Any) -> Any:
    """The PV controller's first sync of a new volume: one the API server stored ``Pending`` (no
    ``status.phase`` given) that no claim holds yet (no ``claimRef``, or one pre-binding it to a
    claim by name, without a uid) becomes ``Available``, which is what VolumeBinding matches
    claims against. Other volumes (and objects that are no PersistentVolume) are returned as
    they are."""
    if isinstance(pv, PersistentVolume) and pv.phase == "Pending" and (pv.claim_ref is None or not pv.claim_ref.uid):
        return with_phase(pv, "Available")
    return pv


def with_annotation(obj: Any, key: str, value: str | None) -> Any:
    """The object with annotation ``key`` set (removed when ``value`` is None)."""
    annotations = dict(obj.annotations)
    if value is None:
        annotations.pop(key, None)
    else:
        annotations[key] = value

    def mutate(m: dict) -> None:
        ann = _map(_map(m, "metadata"), "annotations")
        if value is None:
            ann.pop(key, None)
        else:
            ann[key] = value

    return _with_manifest(obj, mutate, annotations=annotations)


def with_volume_name(pvc: PersistentVolumeClaim, volume_name: str) -> PersistentVolumeClaim:
    """The claim with ``spec.volumeName`` set."""
    return _with_manifest(pvc, lambda m: _map(m, "spec").__setitem__("volumeName", volume_name),
                          volume_name=volume_name)


def claim_manifest_for_ephemeral(pod: Any, volume: Mapping[str, Any]) -> dict:
    """The claim the ephemeral-volume controller creates for a generic ephemeral volume
    (``pkg/controller/volume/ephemeral``): named ``<pod>-<volume>``, controlled by the pod, with the
    template's labels, annotations and spec."""
    template = as_map(volume_source(volume, "ephemeral"), "ephemeral")
    template = as_map(get_field(template, "volumeClaimTemplate"), "ephemeral.volumeClaimTemplate")
    meta = as_map(template.get("metadata"), "metadata")
    return {
        "apiVersion": "v1", "kind": "PersistentVolumeClaim",
        "metadata": {
            "name": ephemeral_claim_name(pod.name, volume.get("name") or ""),
            "namespace": pod.namespace,
            "labels": dict(meta.get("labels") or {}),
            "annotations": dict(meta.get("annotations") or {}),
            "ownerReferences": [{"apiVersion": "v1", "kind": "Pod", "name": pod.name, "uid": pod.uid,
                                 "controller": True, "blockOwnerDeletion": True}],
        },
        "spec": copy.deepcopy(dict(template.get("spec") or {})),
    }


def ephemeral_claim_manifests(pod: Any) -> list[dict]:
    """The claims the ephemeral-volume controller creates for a pod's generic ephemeral volumes."""
    return [claim_manifest_for_ephemeral(pod, v) for v in pod.volumes if v.get("ephemeral") is not None]
