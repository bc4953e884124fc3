"""Storage generators: manifests of PersistentVolumes, claims, classes and CSI objects, and seeded
random clusters with volumes (for tests, benchmarks and scenarios).

Builders return manifest dicts (camelCase API form), so what they build goes through the same
decoding and validation as user input; ``objects_of(...)`` or ``Scheduler.add`` read them.
"""
from __future__ import annotations

import functools
import math
import os
import pickle
import random
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Mapping, Sequence

import numpy as np

from ..api.storage import ANN_PROVISIONED_BY
from ..plugins.volumebinding.storage_view import STORAGE_KINDS

__all__ = ["pv_manifest", "pvc_manifest", "storage_class_manifest", "csi_node_manifest", "csi_driver_manifest",
           "csi_storage_capacity_manifest", "pod_with_claims", "random_storage_cluster", "ZONE", "REGION",
           "StorageSpec", "ClaimSpec", "parse_claims", "CapacityTracker", "LocalVolumeProvisioner",
           "storage_summary"]

ZONE = "topology.kubernetes.io/zone"
REGION = "topology.kubernetes.io/region"


def pv_manifest(name: str, *, capacity: str = "1Gi", access_modes: Sequence[str] = ("ReadWriteOnce",),
                storage_class: str | None = None, node_affinity: Mapping[str, Sequence[str]] | None = None,
                claim: tuple[str, str] | None = None, claim_uid: str = "", phase: str = "Available",
                labels: Mapping[str, str] | None = None, source: Mapping[str, Any] | None = None,
                volume_mode: str | None = None, annotations: Mapping[str, str] | None = None) -> dict:
    """A PersistentVolume; ``node_affinity`` maps label keys to allowed values (one term);
    ``claim`` is ``(namespace, name)`` of a claimRef; ``source`` defaults to a CSI volume."""
    spec: dict[str, Any] = {"capacity": {"storage": capacity}, "accessModes": list(access_modes)}
    spec.update(source if source is not None else {"csi": {"driver": "csi.example.com", "volumeHandle": name}})
    if storage_class is not None:
        spec["storageClassName"] = storage_class
    if node_affinity:
        spec["nodeAffinity"] = {"required": {"nodeSelectorTerms": [{"matchExpressions": [
            {"key": k, "operator": "In", "values": list(v)} for k, v in node_affinity.items()]}]}}
    if claim is not None:
        ref = {"kind": "PersistentVolumeClaim", "namespace": claim[0], "name": claim[1]}
        if claim_uid:
            ref["uid"] = claim_uid
        spec["claimRef"] = ref
    if volume_mode is not None:
        spec["volumeMode"] = volume_mode
    meta: dict[str, Any] = {"name": name}
    if labels:
        meta["labels"] = dict(labels)
    if annotations:
        meta["annotations"] = dict(annotations)
    return {"apiVersion": "v1", "kind": "PersistentVolume", "metadata": meta, "spec": spec,
            "status": {"phase": phase}}


def pvc_manifest(name: str, *, namespace: str = "default", request: str | None = "1Gi",
                 access_modes: Sequence[str] = ("ReadWriteOnce",), storage_class: str | None = None,
                 volume_name: str = "", bound: bool = False, annotations: Mapping[str, str] | None = None,
                 selector: Mapping[str, str] | None = None, phase: str | None = None,
                 owner: Any = None, volume_mode: str | None = None) -> dict:
    """A claim; ``bound`` adds ``pv.kubernetes.io/bind-completed`` (with ``volume_name``)."""
    spec: dict[str, Any] = {"accessModes": list(access_modes)}
    if request is not None:
        spec["resources"] = {"requests": {"storage": request}}
    if storage_class is not None:
        spec["storageClassName"] = storage_class
    if volume_name:
        spec["volumeName"] = volume_name
    if selector:
        spec["selector"] = {"matchLabels": dict(selector)}
    if volume_mode is not None:
        spec["volumeMode"] = volume_mode
    ann = dict(annotations or {})
    if bound:
        ann["pv.kubernetes.io/bind-completed"] = "yes"
    meta: dict[str, Any] = {"name": name, "namespace": namespace}
    if ann:
        meta["annotations"] = ann
    if owner is not None:
        meta["ownerReferences"] = [{"apiVersion": "v1", "kind": "Pod", "name": owner.name, "uid": owner.uid,
                                    "controller": True}]
    out = {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": meta, "spec": spec}
    if phase is not None or bound:
        out["status"] = {"phase": phase or "Bound"}
    return out


def storage_class_manifest(name: str, *, provisioner: str = "csi.example.com",
                           binding_mode: str = "WaitForFirstConsumer",
                           allowed_topologies: Mapping[str, Sequence[str]] | None = None) -> dict:
    """A StorageClass; ``allowed_topologies`` maps keys to values (one term)."""
    out: dict[str, Any] = {"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass", "metadata": {"name": name},
                           "provisioner": provisioner, "volumeBindingMode": binding_mode}
    if allowed_topologies:
        out["allowedTopologies"] = [{"matchLabelExpressions": [{"key": k, "values": list(v)}
                                                                for k, v in allowed_topologies.items()]}]
    return out


def csi_node_manifest(node: str, drivers: Mapping[str, int | None] | None = None,
                      migrated_plugins: Iterable[str] = (), topology_keys: Sequence[str] = ()) -> dict:
    """A CSINode for ``node`` with ``driver -> allocatable count`` (None: no count)."""
    specs = []
    for driver, count in (drivers or {}).items():
        d: dict[str, Any] = {"name": driver, "nodeID": node, "topologyKeys": list(topology_keys)}
        if count is not None:
            d["allocatable"] = {"count": count}
        specs.append(d)
    meta: dict[str, Any] = {"name": node}
    plugins = ",".join(migrated_plugins)
    if plugins:
        meta["annotations"] = {"storage.alpha.kubernetes.io/migrated-plugins": plugins}
    return {"apiVersion": "storage.k8s.io/v1", "kind": "CSINode", "metadata": meta, "spec": {"drivers": specs}}


def csi_driver_manifest(name: str, storage_capacity: bool = False) -> dict:
    return {"apiVersion": "storage.k8s.io/v1", "kind": "CSIDriver", "metadata": {"name": name},
            "spec": {"storageCapacity": storage_capacity}}


def csi_storage_capacity_manifest(name: str, storage_class: str, capacity: str | None,
                                  node_labels: Mapping[str, str] | None, *, namespace: str = "default",
                                  maximum_volume_size: str | None = None) -> dict:
    out: dict[str, Any] = {"apiVersion": "storage.k8s.io/v1", "kind": "CSIStorageCapacity",
                           "metadata": {"name": name, "namespace": namespace}, "storageClassName": storage_class}
    if capacity is not None:
        out["capacity"] = capacity
    if maximum_volume_size is not None:
        out["maximumVolumeSize"] = maximum_volume_size
    if node_labels is not None:
        out["nodeTopology"] = {"matchLabels": dict(node_labels)}
    return out


def pod_with_claims(name: str, claims: Sequence[str] = (), *, namespace: str = "default", cpu: str = "100m",
                    extra_volumes: Sequence[Mapping[str, Any]] = (), priority: int | None = None) -> dict:
    """A pod manifest mounting the named claims (and any extra volume entries)."""
    volumes = [{"name": f"v{i}", "persistentVolumeClaim": {"claimName": c}} for i, c in enumerate(claims)]
    volumes.extend(dict(v) for v in extra_volumes)
    spec: dict[str, Any] = {"containers": [{"name": "c", "image": "img",
                                            "resources": {"requests": {"cpu": cpu}}}], "volumes": volumes}
    if priority is not None:
        spec["priority"] = priority
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": namespace}, "spec": spec}


def random_storage_cluster(seed: int, nodes: int = 12, zones: int = 3, pvs: int = 20, claims: int = 16,
                           ) -> tuple[list[dict], list[dict], list[dict]]:
    """A seeded cluster with volumes: (node manifests, storage object manifests, pod manifests).

    Zones spread over the nodes; some nodes carry a CSINode with an attach limit; a
    WaitForFirstConsumer class with static PVs (zonal or per-node affinity, assorted sizes, some
    pre-bound), an Immediate class, a class restricted by allowedTopologies with capacity
    tracking; claims of every kind (bound, delayed, immediate-unbound, RWOP, missing); pods
    mounting one to three claims, some with inline EBS / GCE volumes.
    """
    rng = random.Random(seed)
    zone_names = [f"zone-{z}" for z in range(zones)]
    node_ms = []
    objects: list[dict] = [
        storage_class_manifest("wait", provisioner="kubernetes.io/no-provisioner"),
        storage_class_manifest("dyn", allowed_topologies={ZONE: zone_names[:max(1, zones - 1)]}),
        storage_class_manifest("fast", binding_mode="Immediate"),
        csi_driver_manifest("csi.example.com", storage_capacity=True),
    ]
    for i in range(nodes):
        name = f"node-{i}"
        labels = {ZONE: zone_names[i % zones], "kubernetes.io/hostname": name}
        if rng.random() < 0.2:
            labels = {"kubernetes.io/hostname": name}   # no topology labels
        node_ms.append({"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": labels},
                        "status": {"allocatable": {"cpu": "8", "memory": "32Gi", "pods": "110"}}})
        if rng.random() < 0.7:
            objects.append(csi_node_manifest(name, {"csi.example.com": rng.choice([1, 2, 3, None]),
                                                    "ebs.csi.aws.com": rng.choice([1, 2, None])},
                                             migrated_plugins=["kubernetes.io/aws-ebs"] if rng.random() < 0.5 else ()))
    for z in zone_names:
        objects.append(csi_storage_capacity_manifest(f"cap-{z}", "dyn", rng.choice(["1Gi", "5Gi", "20Gi"]), {ZONE: z}))
    claim_names = []
    aff: dict | None
    for i in range(claims):
        kind = rng.random()
        name = f"claim-{i}"
        size = rng.choice(["1Gi", "2Gi", "5Gi"])
        modes = ["ReadWriteOncePod"] if rng.random() < 0.15 else ["ReadWriteOnce"]
        if kind < 0.3:   # bound to its own PV
            pv = f"pv-bound-{i}"
            aff = {ZONE: [rng.choice(zone_names)]} if rng.random() < 0.6 else None
            pv_labels = {ZONE: rng.choice(zone_names)} if rng.random() < 0.5 else None
            objects.append(pv_manifest(pv, capacity=size, storage_class="wait", node_affinity=aff, labels=pv_labels,
                                       claim=("default", name), phase="Bound", access_modes=modes))
            objects.append(pvc_manifest(name, request=size, storage_class="wait", volume_name=pv, bound=True,
                                        access_modes=modes))
        elif kind < 0.6:
            objects.append(pvc_manifest(name, request=size, storage_class="wait", access_modes=modes))
        elif kind < 0.85:
            objects.append(pvc_manifest(name, request=size, storage_class="dyn", access_modes=modes))
        elif kind < 0.95:
            objects.append(pvc_manifest(name, request=size, storage_class="fast", access_modes=modes))
        else:
            pass  # missing claim
        claim_names.append(name)
    for i in range(pvs):
        r = rng.random()
        if r < 0.5:
            aff = {ZONE: [rng.choice(zone_names)]}
        elif r < 0.8:
            aff = {"kubernetes.io/hostname": [f"node-{rng.randrange(nodes)}"]}
        else:
            aff = None
        objects.append(pv_manifest(f"pv-{i}", capacity=rng.choice(["1Gi", "2Gi", "5Gi", "10Gi"]),
                                   storage_class="wait", node_affinity=aff,
                                   access_modes=[rng.choice(["ReadWriteOnce", "ReadWriteOncePod"])]))
    pods = []
    for i in range(max(4, claims // 2)):
        picked = rng.sample(claim_names, k=min(len(claim_names), rng.randint(1, 3)))
        extra = []
        if rng.random() < 0.2:
            extra.append({"name": "ebs", "awsElasticBlockStore": {"volumeID": f"vol-{rng.randrange(3)}"}})
        if rng.random() < 0.1:
            extra.append({"name": "gce", "gcePersistentDisk": {"pdName": f"pd-{rng.randrange(2)}",
                                                               "readOnly": rng.random() < 0.5}})
        pods.append(pod_with_claims(f"pod-{i}", picked, extra_volumes=extra))
    return node_ms, objects, pods


def perf_volume_pair(pv_template: Mapping[str, Any], pvc_template: Mapping[str, Any], namespace: str,
                     index: int) -> tuple[dict, dict, dict]:
    """scheduler_perf's ``CreatePodWithPersistentVolume`` (bindVolume true) with
    ``getCustomVolumeFactory``: the PV ``<namespace>-vol-<i>`` (a CSI source's handle is the PV
    name, an EBS source's volumeID ``vol-<i>``), bound to claim ``pvc-<i>`` (claimRef, phase Bound)
    and the claim bound to it (``volumeName``, phase Bound); returns (pv, pvc, pod volume)."""
    return _volume_pair(tree_copier(pv_template), tree_copier(pvc_template), namespace, index)


#: the leaf types whose ``repr`` is a Python literal of an equal value of the same type
_LITERAL_LEAVES = (str, int, bool, type(None))


def _literal(value: Any) -> str | None:
    """``value`` (a plain YAML tree: dicts, lists and literal leaves) as the source of a Python
    expression that builds an equal tree of new containers; None for anything else."""
    t = type(value)
    if t is dict:
        parts = []
        for k, v in value.items():
            key, item = _literal(k), _literal(v)
            if key is None or item is None:
                return None
            parts.append(f"{key}: {item}")
        return "{" + ", ".join(parts) + "}"
    if t is list:
        items = [_literal(v) for v in value]
        return None if any(i is None for i in items) else "[" + ", ".join(items) + "]"  # type: ignore[arg-type]
    if t in _LITERAL_LEAVES or (t is float and math.isfinite(value)):
        return repr(value)
    return None


def tree_copier(template: Mapping[str, Any]) -> Callable[[], dict]:
    """A function returning a deep copy of ``template`` (a manifest tree) at each call.

    For a plain tree (dicts, lists, strings, ints, finite floats, booleans, None: what YAML
    templates hold) it is compiled from the tree's literal, so a call builds the containers
    as a dict display does (~4x faster than a pickle load, which was a sixth of making a
    scheduler_perf volume pair); any other tree is pickled once and loaded per call."""
    source = _literal(dict(template))
    if source is not None:
        return eval("lambda: " + source, {"__builtins__": {}})  # noqa: S307 - a literal of our own making
    return functools.partial(pickle.loads, pickle.dumps(dict(template), pickle.HIGHEST_PROTOCOL))


def _volume_pair(pv_copy: Callable[[], dict], pvc_copy: Callable[[], dict], namespace: str,
                 index: int) -> tuple[dict, dict, dict]:
    """:func:`perf_volume_pair` from the templates' copiers (:func:`tree_copier`, once per op):
    this runs once per measured pod."""
    pv = pv_copy()
    pvc = pvc_copy()
    volume_id = f"vol-{index}"
    pv_name = f"{namespace}-{volume_id}"
    pvc_name = f"pvc-{index}"
    pv["metadata"] = {**(pv.get("metadata") or {}), "name": pv_name}
    spec = pv["spec"] = dict(pv.get("spec") or {})  # (a null spec, as Go decodes it: empty)
    if spec.get("csi") is not None:
        spec["csi"] = {**spec["csi"], "volumeHandle": pv_name}
    elif spec.get("awsElasticBlockStore") is not None:
        spec["awsElasticBlockStore"] = {**spec["awsElasticBlockStore"], "volumeID": volume_id}
    spec["claimRef"] = {"kind": "PersistentVolumeClaim", "namespace": namespace, "name": pvc_name,
                        "apiVersion": "v1"}
    pv["status"] = {"phase": "Bound"}
    pvc["metadata"] = {**(pvc.get("metadata") or {}), "name": pvc_name, "namespace": namespace}
    pvc["spec"] = {**(pvc.get("spec") or {}), "volumeName": pv_name}
    pvc["status"] = {"phase": "Bound"}
    volume = {"name": "vol", "persistentVolumeClaim": {"claimName": pvc_name}}
    return pv, pvc, volume


def perf_csi_node(node_name: str, csi_allocatable: Mapping[str, Any], migrated_plugins: Sequence[str]) -> dict:
    """scheduler_perf's ``NodeAllocatableStrategy.PrepareDependentObjects``: the node's CSINode with
    one driver per ``csiNodeAllocatable`` entry (its ``count``) and the migrated-plugins annotation."""
    drivers = []
    for driver, alloc in csi_allocatable.items():
        d: dict[str, Any] = {"name": driver, "nodeID": node_name, "topologyKeys": None}
        count = (alloc or {}).get("count")
        if count is not None:
            d["allocatable"] = {"count": count}
        drivers.append(d)
    meta: dict[str, Any] = {"name": node_name}
    if migrated_plugins:
        meta["annotations"] = {"storage.alpha.kubernetes.io/migrated-plugins": ",".join(migrated_plugins)}
    return {"apiVersion": "storage.k8s.io/v1", "kind": "CSINode", "metadata": meta, "spec": {"drivers": drivers}}


def perf_volume_objects(pv_template: Mapping[str, Any], pvc_template: Mapping[str, Any], namespace: str,
                        start: int, count: int) -> tuple[list, list, list[dict]]:
    """:func:`perf_volume_pair` for ``count`` indexes from ``start``, as objects: the templates
    are decoded and validated once (with the first index), the others derived from them (only
    names, handles and references change), as the API server would accept each of them."""
    from ..api.load import load_objects
    from ..api.objects import _field_copier, deterministic_uid
    from ..api.storage import ClaimRef, PersistentVolume, PersistentVolumeClaim

    if count <= 0:
        return [], [], []
    pv_doc, pvc_doc, volume = perf_volume_pair(pv_template, pvc_template, namespace, start)
    pv0, pvc0 = load_objects([pv_doc, pvc_doc])
    assert isinstance(pv0, PersistentVolume) and isinstance(pvc0, PersistentVolumeClaim)  # the templates' kinds
    copy_pv = _field_copier(type(pv0))
    copy_pvc = _field_copier(type(pvc0))
    pvs, pvcs, volumes = [pv0], [pvc0], [volume]
    pv_copy, pvc_copy = tree_copier(pv_template), tree_copier(pvc_template)
    for i in range(start + 1, start + count):
        pv_doc, pvc_doc, volume = _volume_pair(pv_copy, pvc_copy, namespace, i)
        pv_name, pvc_name = pv_doc["metadata"]["name"], pvc_doc["metadata"]["name"]
        pv = copy_pv(pv0)   # a field copy (no __init__): only these fields differ
        pv.name, pv.uid, pv.manifest = pv_name, deterministic_uid("PersistentVolume", "", pv_name), pv_doc
        pv.source_spec = pv_doc["spec"].get(pv0.source) if pv0.source else None
        pv.claim_ref = ClaimRef(namespace=namespace, name=pvc_name)
        pvc = copy_pvc(pvc0)
        pvc.name, pvc.manifest, pvc.volume_name = pvc_name, pvc_doc, pv_name
        pvc.uid = deterministic_uid("PersistentVolumeClaim", namespace, pvc_name)
        pvs.append(pv)
        pvcs.append(pvc)
        volumes.append(volume)
    return pvs, pvcs, volumes


# --------------------------------------------------------------------------------------------
# scenario storage: the ``storage:`` section and arrival streams' ``claims:``
# --------------------------------------------------------------------------------------------
#: the scenario's ``storage`` keys
STORAGE_FIELDS = ("classes", "drivers", "volumes", "objects")
#: ``storage.classes[i]`` keys (besides a StorageClass manifest with ``kind``)
CLASS_FIELDS = ("name", "provisioner", "binding_mode", "default", "reclaim_policy", "allowed_topologies",
                "parameters", "capacity", "capacity_key")
#: ``storage.drivers[i]`` keys
DRIVER_FIELDS = ("name", "attach_limit", "storage_capacity", "attach_required", "topology_keys", "nodes")
#: ``storage.volumes[i]`` keys
VOLUME_FIELDS = ("name_prefix", "count", "per", "storage_class", "capacity", "access_modes", "volume_mode",
                 "reclaim_policy", "driver", "nodes", "labels")
#: ``arrivals[i].claims[j]`` keys
CLAIM_FIELDS = ("name", "storage_class", "size", "access_modes", "volume_mode", "ephemeral", "when_deleted",
                "selector")
#: ``storage.volumes[i].per`` values
VOLUME_PER = ("cluster", "zone", "node")
#: the kinds ``storage.objects`` may hold: STORAGE_KINDS (the storage lister's)
#: the namespace of the CSIStorageCapacity objects a class's ``capacity`` makes
CAPACITY_NAMESPACE = "kube-system"
_LOCAL_PROVISIONER = "kubernetes.io/no-provisioner"
#: ``pv.kubernetes.io/provisioned-by`` of the local volumes a pool offers again once released
LOCAL_VOLUME_PROVISIONER = "local-volume-provisioner"
_HOSTNAME = "kubernetes.io/hostname"


def _spec_tools():
    from . import spec as g
    return g


def _validated(manifest: dict, path: str) -> Any:
    """``manifest`` decoded and validated as the API server would; SpecError at ``path``."""
    from ..api import ManifestError
    from ..api.load import load_objects

    try:
        (obj,) = load_objects([manifest])
    except (ManifestError, ValueError) as exc:
        raise _spec_tools().SpecError(path, str(exc)) from None
    return obj


def _quantity_text(value: Any, path: str, *, positive: bool = False) -> str:
    """``value`` as a quantity's text; SpecError at ``path`` when it is not one, is negative (a
    CSIStorageCapacity's ``must be greater than or equal to 0``) or, with ``positive``, not above
    zero (a PersistentVolume's ``must be greater than zero``)."""
    g = _spec_tools()
    if isinstance(value, bool) or not isinstance(value, (str, int, float)):
        raise g.SpecError(path, f"must be a quantity (such as 10Gi), got {g.type_name(value)}")
    from ..api.quantity import parse_quantity
    try:
        quantity = parse_quantity(value, path)
    except ValueError as exc:
        reason = str(getattr(exc, "reason", exc))
        # (a scenario's own field: the value shown before the quantity parser's words)
        raise g.SpecError(path, reason if reason.startswith("invalid quantity")
                          else f"invalid quantity {value!r}: {reason}") from None
    if quantity._nanos < 0 or (positive and quantity._nanos == 0):
        raise g.SpecError(path, f'Invalid value: "{value}": must be greater than '
                                f'{"zero" if positive else "or equal to 0"}')
    return str(value)


def _string_list(f: Any, name: str, default: Sequence[str] = ()) -> list[str]:
    g = _spec_tools()
    if name not in f:
        return list(default)
    values = f.list(name)
    for i, v in enumerate(values):
        if not isinstance(v, str) or not v:
            raise g.SpecError(g.child(f.at(name), i), f"must be a non-empty string, got {g.type_name(v)}")
    return list(values)


def _topology_terms(raw: Any, path: str) -> list[dict]:
    """``{key: [values]}`` (one term) or a list of such mappings (terms ORed), as
    ``allowedTopologies`` entries."""
    g = _spec_tools()
    terms = raw if isinstance(raw, (list, tuple)) else [raw]
    out = []
    for i, term in enumerate(terms):
        tpath = g.child(path, i) if isinstance(raw, (list, tuple)) else path
        if not isinstance(term, Mapping) or not term:
            raise g.SpecError(tpath, f"must be a non-empty mapping of label key to values, got {g.type_name(term)}")
        exprs = []
        for key, values in term.items():
            values = [values] if isinstance(values, str) else values
            if not isinstance(values, (list, tuple)) or not values or not all(isinstance(v, str) for v in values):
                raise g.SpecError(g.child(tpath, key), "must be a non-empty list of label values")
            exprs.append({"key": str(key), "values": list(values)})
        out.append({"matchLabelExpressions": exprs})
    return out


@dataclass
class DriverSpec:
    """A CSI driver: its CSIDriver object and, on the nodes it runs on, its CSINode entry."""

    name: str
    path: str
    attach_limit: int | None = None
    storage_capacity: bool | None = None
    attach_required: bool = True
    topology_keys: tuple[str, ...] | None = None
    nodes: dict[str, str] = field(default_factory=dict)

    def on(self, labels: Mapping[str, str]) -> bool:
        return all(labels.get(k) == v for k, v in self.nodes.items())


@dataclass
class VolumePool:
    """Static PersistentVolumes: ``count`` in the cluster, per zone or per node."""

    path: str
    index: int
    name_prefix: str
    count: int
    per: str
    storage_class: str
    capacity: Any               # a LabelSpec over quantity texts
    access_modes: tuple[str, ...]
    volume_mode: str | None
    reclaim_policy: str
    driver: str
    nodes: dict[str, str]
    labels: dict[str, str]


@dataclass
class StorageSpec:
    """The scenario's ``storage`` section: classes, CSI drivers (CSIDriver and CSINode objects with
    attach limits), static volume pools and manifests (docs/scenario.md, "storage")."""

    classes: list[dict] = field(default_factory=list)
    class_paths: list[str] = field(default_factory=list)
    capacities: list[tuple[str, str, str, str]] = field(default_factory=list)  # class, driver, quantity, key
    drivers: list[DriverSpec] = field(default_factory=list)
    volumes: list[VolumePool] = field(default_factory=list)
    objects: list[Any] = field(default_factory=list)
    seed: int = 0

    @property
    def empty(self) -> bool:
        return not (self.classes or self.drivers or self.volumes or self.objects)

    @property
    def class_names(self) -> set[str]:
        return {m["metadata"]["name"] for m in self.classes} | {
            o.name for o in self.objects if o.KIND == "StorageClass"}

    @classmethod
    def parse(cls, raw: Any, path: str, resolve: Any, seed: int = 0) -> "StorageSpec":
        """``raw`` read with field paths; ``resolve(value, path)`` turns a file reference into a
        path (the scenario's, relative to its folder)."""
        g = _spec_tools()
        out = cls(seed=seed)
        if raw is None:
            return out
        f = g.Fields(raw, path, STORAGE_FIELDS)
        for i, entry in enumerate(f.list("drivers")):
            out.drivers.append(_parse_driver(entry, g.child(f.at("drivers"), i)))
        _distinct([d.name for d in out.drivers], [d.path for d in out.drivers], "name", "driver")
        for i, entry in enumerate(f.list("classes")):
            out._parse_class(entry, g.child(f.at("classes"), i))
        names = [m["metadata"]["name"] for m in out.classes]
        _distinct(names, out.class_paths, "name", "class")
        if "objects" in f:
            out.objects = _load_objects(f.get("objects"), f.at("objects"), resolve)
        tracked = {driver: name for name, driver, _, _ in out.capacities}
        for manifest, cpath in zip(out.classes, out.class_paths):
            name, provisioner = manifest["metadata"]["name"], manifest.get("provisioner")
            if provisioner in tracked and name not in {c for c, _, _, _ in out.capacities}:
                raise g.SpecError(cpath, f"driver {provisioner!r} tracks capacity (class {tracked[provisioner]!r} "
                                         "has capacity): give this class a capacity too, or it can provision no "
                                         "volume (\"did not have enough free storage\")")
        declared = out.class_names
        for i, entry in enumerate(f.list("volumes")):
            _parse_pool(entry, g.child(f.at("volumes"), i), i, out, declared)
        prefixes = [p.name_prefix for p in out.volumes]
        _distinct(prefixes, [g.child(p.path, "name_prefix") for p in out.volumes], "name_prefix", "volume pool")
        return out

    def _parse_class(self, raw: Any, path: str) -> None:
        g = _spec_tools()
        if isinstance(raw, Mapping) and "kind" in raw:
            given = dict(raw)
            if given.get("kind") != "StorageClass":
                raise g.SpecError(g.child(path, "kind"), f"must be StorageClass, got {given.get('kind')!r}")
            _validated(given, path)
            self.classes.append(given)
            self.class_paths.append(path)
            return
        f = g.Fields(raw, path, CLASS_FIELDS)
        if "name" not in f:
            raise g.SpecError(f.at("name"), "required")
        name = f.string("name")
        default_provisioner = self.drivers[0].name if len(self.drivers) == 1 else None
        if "provisioner" not in f and default_provisioner is None:
            raise g.SpecError(f.at("provisioner"), "required (a CSI driver name, or kubernetes.io/no-provisioner "
                                                    "for static volumes only)")
        provisioner = f.string("provisioner", default_provisioner)
        manifest: dict[str, Any] = {
            "apiVersion": "storage.k8s.io/v1", "kind": "StorageClass", "metadata": {"name": name},
            "provisioner": provisioner,
            "volumeBindingMode": f.string("binding_mode", "Immediate", choices=("Immediate", "WaitForFirstConsumer")),
            "reclaimPolicy": f.string("reclaim_policy", "Delete", choices=("Delete", "Retain")),
        }
        if f.boolean("default", False):
            manifest["metadata"]["annotations"] = {"storageclass.kubernetes.io/is-default-class": "true"}
        if "allowed_topologies" in f:
            manifest["allowedTopologies"] = _topology_terms(f.get("allowed_topologies"), f.at("allowed_topologies"))
        if "parameters" in f:
            manifest["parameters"] = f.string_map("parameters")
        _validated(manifest, path)
        if "capacity" in f:
            if provisioner == _LOCAL_PROVISIONER:
                raise g.SpecError(f.at("capacity"), f"a class with provisioner {_LOCAL_PROVISIONER} provisions "
                                                    "nothing: it has no capacity to track")
            driver = next((d for d in self.drivers if d.name == provisioner), None)
            if driver is not None and driver.storage_capacity is False:
                raise g.SpecError(f.at("capacity"), f"driver {provisioner!r} has storage_capacity: false "
                                                    "(capacity is tracked only for drivers that ask for it)")
            self.capacities.append((name, provisioner, _quantity_text(f.get("capacity"), f.at("capacity")),
                                    f.string("capacity_key", ZONE)))
        elif "capacity_key" in f:
            raise g.SpecError(f.at("capacity_key"), "only applies with capacity")
        self.classes.append(manifest)
        self.class_paths.append(path)

    # -- products -------------------------------------------------------------------------------
    def _driver_objects(self) -> list[dict]:
        tracked = {driver for _, driver, _, _ in self.capacities}
        out = []
        for d in self.drivers:
            capacity = d.storage_capacity if d.storage_capacity is not None else d.name in tracked
            out.append({"apiVersion": "storage.k8s.io/v1", "kind": "CSIDriver", "metadata": {"name": d.name},
                        "spec": {"attachRequired": d.attach_required, "storageCapacity": capacity}})
        declared = {d.name for d in self.drivers}
        for driver in sorted(tracked - declared):  # a class tracks capacity: its driver asks for it
            out.append({"apiVersion": "storage.k8s.io/v1", "kind": "CSIDriver", "metadata": {"name": driver},
                        "spec": {"attachRequired": True, "storageCapacity": True}})
        return out

    def csi_nodes(self, nodes: Sequence[Any]) -> list[Any]:
        """The CSINode of each node that runs a declared driver (the CSI node plugins' registration),
        for nodes at time 0 and nodes added later alike."""
        if not self.drivers:
            return []
        out = []
        for node in nodes:
            entries = []
            for d in self.drivers:
                if not d.on(node.labels):
                    continue
                keys = d.topology_keys if d.topology_keys is not None else tuple(
                    k for k in (ZONE, REGION) if k in node.labels)
                entry: dict[str, Any] = {"name": d.name, "nodeID": node.name, "topologyKeys": list(keys)}
                if d.attach_limit is not None:
                    entry["allocatable"] = {"count": d.attach_limit}
                entries.append(entry)
            if entries:
                out.append({"apiVersion": "storage.k8s.io/v1", "kind": "CSINode", "metadata": {"name": node.name},
                            "spec": {"drivers": entries}})
        from ..api.load import load_objects
        return load_objects(out) if out else []

    def initial_objects(self, nodes: Sequence[Any]) -> list[Any]:
        """Every storage object at time 0 for these nodes: classes, CSIDrivers, CSINodes, the
        capacity objects of classes with ``capacity``, static volumes, then ``objects``."""
        from ..api.load import load_objects

        g = _spec_tools()
        zones = sorted({n.labels[ZONE] for n in nodes if ZONE in n.labels})
        manifests: list[dict] = [*self.classes, *self._driver_objects()]
        for class_name, driver, quantity, key in self.capacities:
            segments = sorted({n.labels[key] for n in nodes if key in n.labels})
            for value in segments:
                manifests.append(csi_storage_capacity_manifest(
                    f"{class_name}-{_dns_part(value)}", class_name, quantity, {key: value}, namespace=CAPACITY_NAMESPACE))
        out = load_objects(manifests) if manifests else []
        out.extend(self.csi_nodes(nodes))
        for pool in self.volumes:
            out.extend(self._pool_volumes(pool, nodes, zones, g))
        out.extend(self.objects)
        return out

    def _pool_volumes(self, pool: VolumePool, nodes: Sequence[Any], zones: list[str], g: Any) -> list[Any]:
        from ..api.load import load_objects

        rng = np.random.default_rng([int(self.seed), 300, pool.index])
        groups: list[tuple[str, dict | None]]
        if pool.per == "cluster":
            groups = [("", None)]
        elif pool.per == "zone":
            if not zones:
                raise g.SpecError(g.child(pool.path, "per"), f"the cluster's nodes have no {ZONE} label: "
                                                             "no zone to put volumes in")
            groups = [(f"{_dns_part(z)}-", {ZONE: [z]}) for z in zones]
        else:
            chosen = [n for n in nodes if all(n.labels.get(k) == v for k, v in pool.nodes.items())]
            if not chosen:
                raise g.SpecError(g.child(pool.path, "nodes"), "no node of the cluster matches")
            groups = [(f"{_dns_part(n.name)}-", {_HOSTNAME: [n.labels.get(_HOSTNAME, n.name)]}) for n in chosen]
        sizes = pool.capacity.draw(rng, pool.count * len(groups))
        width = max(1, len(str(pool.count - 1)))
        manifests = []
        k = 0
        for infix, affinity in groups:
            for i in range(pool.count):
                name = f"{pool.name_prefix}{infix}{i:0{width}d}"
                if pool.driver:
                    source = {"csi": {"driver": pool.driver, "volumeHandle": name}}
                else:
                    source = {"local": {"path": f"/mnt/disks/{name}"}}
                m = pv_manifest(name, capacity=pool.capacity.values[int(sizes[k])], access_modes=pool.access_modes,
                                storage_class=pool.storage_class, node_affinity=affinity, source=source,
                                volume_mode=pool.volume_mode, labels=pool.labels or None, phase="Available")
                m["spec"]["persistentVolumeReclaimPolicy"] = pool.reclaim_policy
                if pool.reclaim_policy == "Delete":  # who deletes it once released
                    m["metadata"].setdefault("annotations", {})[ANN_PROVISIONED_BY] = (
                        pool.driver or LOCAL_VOLUME_PROVISIONER)
                manifests.append(m)
                k += 1
        if manifests:  # one validated through the API's rules with the pool's path; the rest alike
            _validated(manifests[0], pool.path)
        return load_objects(manifests)


def _dns_part(value: str) -> str:
    import re
    part = re.sub(r"[^a-z0-9-]+", "-", value.lower()).strip("-")
    return part or "x"


def _distinct(names: list[str], paths: list[str], key: str, what: str) -> None:
    g = _spec_tools()
    seen: set[str] = set()
    for name, path in zip(names, paths):
        if name in seen:
            raise g.SpecError(path if path.endswith(key) else g.child(path, key), f"duplicate {what} {key} {name!r}")
        seen.add(name)


def _parse_driver(raw: Any, path: str) -> DriverSpec:
    g = _spec_tools()
    f = g.Fields(raw, path, DRIVER_FIELDS)
    if "name" not in f:
        raise g.SpecError(f.at("name"), "required (the CSI driver's name, e.g. ebs.csi.aws.com)")
    topology = tuple(_string_list(f, "topology_keys")) if "topology_keys" in f else None
    capacity = f.boolean("storage_capacity", False) if "storage_capacity" in f else None
    out = DriverSpec(name=f.string("name"), path=path,
                     attach_limit=f.number("attach_limit", None, minimum=0, integer=True),
                     storage_capacity=capacity, attach_required=f.boolean("attach_required", True),
                     topology_keys=topology, nodes=f.string_map("nodes"))
    _validated({"apiVersion": "storage.k8s.io/v1", "kind": "CSIDriver", "metadata": {"name": out.name}}, f.at("name"))
    return out


def _parse_pool(raw: Any, path: str, index: int, spec: StorageSpec, declared: set[str]) -> VolumePool:
    g = _spec_tools()
    f = g.Fields(raw, path, VOLUME_FIELDS)
    if "count" not in f:
        raise g.SpecError(f.at("count"), "required (volumes per zone, per node or in the cluster)")
    per = f.string("per", "cluster", choices=VOLUME_PER)
    if "nodes" in f and per != "node":
        raise g.SpecError(f.at("nodes"), "only applies with per: node")
    storage_class = f.string("storage_class", "")
    if storage_class and storage_class not in declared:
        raise g.SpecError(f.at("storage_class"),
                          f"no StorageClass named {storage_class!r} (declare it under storage.classes "
                          f"or storage.objects; known: {', '.join(sorted(declared)) or 'none'})")
    capacity_raw = f.get("capacity", "10Gi")
    from .generators import LabelSpec
    capacity = LabelSpec.from_dict("capacity", capacity_raw, f.at("capacity"))
    for i, value in enumerate(capacity.values):
        _quantity_text(value, f.at("capacity") if len(capacity.values) == 1 else g.child(f.at("capacity"), i),
                       positive=True)
    if capacity.fraction != 1.0:
        raise g.SpecError(f.at("capacity"), "fraction does not apply to a volume size")
    class_manifest = next((m for m in spec.classes if m["metadata"]["name"] == storage_class), None)
    provisioner = class_manifest.get("provisioner", "") if class_manifest else ""
    driver = f.string("driver", "")
    if not driver and provisioner and provisioner != _LOCAL_PROVISIONER and not provisioner.startswith("kubernetes.io/"):
        driver = provisioner
    if not driver and per != "node":
        raise g.SpecError(f.at("driver"), "required unless per: node (a volume without a CSI driver is a local "
                                          "volume, which needs a node)")
    prefix = f.string("name_prefix", f"pv-{index}-" if index else "pv-")
    return_pool = VolumePool(
        path=path, index=index, name_prefix=prefix,
        count=f.number("count", minimum=0, maximum=g.MAX_GENERATED, integer=True), per=per,
        storage_class=storage_class, capacity=capacity,
        access_modes=tuple(_string_list(f, "access_modes", ("ReadWriteOnce",))),
        volume_mode=f.string("volume_mode", None, choices=("Filesystem", "Block")),
        reclaim_policy=f.string("reclaim_policy", "Retain" if driver else "Delete", choices=("Retain", "Delete")),
        driver=driver, nodes=f.string_map("nodes"), labels=f.string_map("labels"))
    spec.volumes.append(return_pool)
    return return_pool


def _load_objects(raw: Any, path: str, resolve: Any) -> list[Any]:
    from ..api import ManifestError
    from ..api.load import load_objects

    g = _spec_tools()
    if isinstance(raw, (list, tuple)):
        sources = [(g.child(path, i), item) for i, item in enumerate(raw)]
    else:
        sources = [(path, resolve(raw, path))]
    out = []
    for where, source in sources:
        if not isinstance(source, (Mapping, os.PathLike, str)):
            raise g.SpecError(where, f"must be a manifest or a file, got {g.type_name(source)}")
        if isinstance(source, Mapping) and source.get("kind") not in STORAGE_KINDS:
            raise g.SpecError(where, f"kind {source.get('kind')!r}: storage.objects holds only "
                                     f"{', '.join(STORAGE_KINDS)}")
        try:
            loaded = load_objects(dict(source) if isinstance(source, Mapping) else source)
        except (ManifestError, OSError, ValueError) as exc:
            raise g.SpecError(where, str(exc)) from None
        for obj in loaded:
            if obj.KIND not in STORAGE_KINDS:
                raise g.SpecError(where, f"{obj.KIND} {obj.key}: storage.objects holds only "
                                         f"{', '.join(STORAGE_KINDS)}")
        out.extend(loaded)
    return out


@dataclass
class ClaimSpec:
    """One ``claims`` entry of an arrival stream: each pod of the stream gets a claim of its own,
    mounted as the volume ``name``."""

    name: str
    path: str
    storage_class: str | None
    size: str
    access_modes: tuple[str, ...]
    volume_mode: str | None
    ephemeral: bool
    when_deleted: str
    selector: dict[str, str]

    def claim_spec(self) -> dict:
        spec: dict[str, Any] = {"accessModes": list(self.access_modes),
                                "resources": {"requests": {"storage": self.size}}}
        if self.storage_class is not None:
            spec["storageClassName"] = self.storage_class
        if self.volume_mode is not None:
            spec["volumeMode"] = self.volume_mode
        if self.selector:
            spec["selector"] = {"matchLabels": dict(self.selector)}
        return spec

    def claim_name(self, pod_name: str) -> str:
        """A StatefulSet's naming: ``<claim>-<pod>``."""
        return f"{self.name}-{pod_name}"

    def volume(self, pod_name: str) -> dict:
        if self.ephemeral:
            return {"name": self.name, "ephemeral": {"volumeClaimTemplate": {"spec": self.claim_spec()}}}
        return {"name": self.name, "persistentVolumeClaim": {"claimName": self.claim_name(pod_name)}}

    def manifest(self, pod_name: str, namespace: str) -> dict:
        return {"apiVersion": "v1", "kind": "PersistentVolumeClaim",
                "metadata": {"name": self.claim_name(pod_name), "namespace": namespace},
                "spec": self.claim_spec()}


def parse_claims(raw: Any, path: str, classes: set[str] | None) -> list[ClaimSpec]:
    """An arrival stream's ``claims`` (``classes``: the declared class names, checked when given)."""
    g = _spec_tools()
    if not isinstance(raw, (list, tuple)):
        raise g.SpecError(path, f"must be a list of claims, got {g.type_name(raw)}")
    out = []
    for i, entry in enumerate(raw):
        cpath = g.child(path, i)
        f = g.Fields(entry, cpath, CLAIM_FIELDS)
        if "name" not in f:
            raise g.SpecError(f.at("name"), "required (the pod's volume name; the claim is <name>-<pod name>)")
        ephemeral = f.boolean("ephemeral", False)
        if ephemeral and "when_deleted" in f:
            raise g.SpecError(f.at("when_deleted"), "an ephemeral claim is always deleted with its pod")
        storage_class = f.string("storage_class", None) if "storage_class" in f else None
        if storage_class and classes is not None and storage_class not in classes:
            raise g.SpecError(f.at("storage_class"), f"no StorageClass named {storage_class!r} (declare it under "
                                                     f"storage.classes or storage.objects; known: "
                                                     f"{', '.join(sorted(classes)) or 'none'})")
        claim = ClaimSpec(name=f.string("name"), path=cpath, storage_class=storage_class,
                          size=_quantity_text(f.get("size", "1Gi"), f.at("size")),
                          access_modes=tuple(_string_list(f, "access_modes", ("ReadWriteOnce",))),
                          volume_mode=f.string("volume_mode", None, choices=("Filesystem", "Block")),
                          ephemeral=ephemeral,
                          when_deleted=f.string("when_deleted", "Delete", choices=("Delete", "Retain")),
                          selector=f.string_map("selector"))
        _validated(claim.manifest("pod", "default"), cpath)
        out.append(claim)
    _distinct([c.name for c in out], [c.path for c in out], "name", "claim")
    return out


class LocalVolumeProvisioner:
    """The local static provisioner (sig-storage-local-static-provisioner) for the scenario's local
    volume pools with ``reclaim_policy: Delete``: once the PV controller hands a released local
    volume over for deletion (it carries ``pv.kubernetes.io/provisioned-by``), the provisioner
    cleans the disk and deletes the volume, then discovers the disk again and creates a new
    Available volume of the same name and spec, at the same virtual instant."""

    def __init__(self, sched: Any, volumes: Sequence[Any]):
        self.sched = sched
        self.originals = {v.name: v for v in volumes if v.source == "local"
                          and v.annotations.get(ANN_PROVISIONED_BY) == LOCAL_VOLUME_PROVISIONER}
        self.deleted: list[str] = []
        if self.originals:
            sched.object_listeners.append(self.observe)

    def observe(self, kind: str, old: Any, new: Any) -> None:
        if kind == "PersistentVolume" and new is None and old is not None and old.name in self.originals:
            if not self.deleted:
                from ..clock import PRIORITY_CLUSTER
                self.sched.clock.schedule(self.sched.clock.now(), self.recreate, PRIORITY_CLUSTER)
            self.deleted.append(old.name)

    def recreate(self) -> None:
        names, self.deleted = self.deleted, []
        for name in names:
            if self.sched.get_object("PersistentVolume", name, "") is None:
                self.sched.add_object(self.originals[name])


class CapacityTracker:
    """The external provisioner's capacity controller for the classes with ``capacity``: when a
    volume of such a class is provisioned or deleted, the CSIStorageCapacity of its topology
    segment is republished (the segment's capacity less the provisioned volumes in it), at the
    same virtual instant, as the driver's GetCapacity would then report."""

    def __init__(self, sched: Any, spec: StorageSpec):
        from ..api.quantity import parse_quantity

        self.sched = sched
        self.classes = {c: (driver, parse_quantity(q), key) for c, driver, q, key in spec.capacities}
        self.used: dict[tuple[str, str], int] = {}
        self.dirty: set[tuple[str, str]] = set()
        self.pending = False
        if self.classes:
            sched.object_listeners.append(self.observe)

    def observe(self, kind: str, old: Any, new: Any) -> None:
        if kind != "PersistentVolume":
            return
        for pv, sign in ((old, -1), (new, +1)):
            if pv is None or pv.storage_class_name not in self.classes or \
                    not pv.annotations.get(ANN_PROVISIONED_BY):
                continue
            _, _, key = self.classes[pv.storage_class_name]
            segment = _affinity_value(pv, key)
            if segment is None:
                continue
            k = (pv.storage_class_name, segment)
            self.used[k] = self.used.get(k, 0) + sign * (pv.capacity.nano_value() if pv.capacity is not None else 0)
            self.dirty.add(k)
        if self.dirty and not self.pending:
            from ..clock import PRIORITY_CLUSTER
            self.pending = True
            self.sched.clock.schedule(self.sched.clock.now(), self.publish, PRIORITY_CLUSTER)

    def publish(self) -> None:
        self.pending = False
        dirty, self.dirty = self.dirty, set()
        for class_name, segment in sorted(dirty):
            obj = self.sched.get_object("CSIStorageCapacity", f"{class_name}-{_dns_part(segment)}", CAPACITY_NAMESPACE)
            if obj is None:
                continue
            total = self.classes[class_name][1]
            free = max(total.nano_value() - self.used.get((class_name, segment), 0), 0)
            text = _nanos_text(free)
            manifest = dict(obj.manifest)
            manifest["capacity"] = text
            self.sched.update_object(manifest)


def _nanos_text(nanos: int) -> str:
    if nanos % 10**9 == 0:
        return str(nanos // 10**9)
    return f"{nanos // 10**6}m"


def _affinity_value(pv: Any, key: str) -> str | None:
    """The single value the PV's node affinity requires for ``key`` (a provisioned volume's
    topology), or None."""
    aff = pv.node_affinity
    if aff is None:
        return None
    for term in aff.terms:
        for req in term.match_expressions:
            if req.key == key and req.operator == "In" and len(req.values) == 1:
                return req.values[0]
    return None


def storage_summary(sched: Any) -> dict:
    """A simulation's ``storage`` summary: claims and volumes by phase at the end ({} without any)."""
    claims = sched.list_objects("PersistentVolumeClaim")
    volumes = sched.list_objects("PersistentVolume")
    if not claims and not volumes:
        return {}
    claim_phases: dict[str, int] = {}
    for c in claims:
        claim_phases[c.phase] = claim_phases.get(c.phase, 0) + 1
    volume_phases: dict[str, int] = {}
    for v in volumes:
        volume_phases[v.phase] = volume_phases.get(v.phase, 0) + 1
    return {"claims": dict(sorted(claim_phases.items())), "volumes": dict(sorted(volume_phases.items())),
            "provisioned": sum(1 for v in volumes if v.annotations.get(ANN_PROVISIONED_BY)
                               not in (None, LOCAL_VOLUME_PROVISIONER)),
            "storage_classes": len(sched.list_objects("StorageClass")),
            "csi_nodes": len(sched.list_objects("CSINode"))}
