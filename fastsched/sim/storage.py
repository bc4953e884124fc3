"""Storage generators: manifests of PersistentVolumes, claims, classes and CSI objects, and seeded
random clusters with volumes (for tests, benchmarks and scenarios).

Builders return manifest dicts (camelCase API form), so what they build goes through the same
decoding and validation as user input; ``objects_of(...)`` or ``Scheduler.add`` read them.
"""
from __future__ import annotations

import random
from typing import Any, Iterable, Mapping, Sequence

__all__ = ["pv_manifest", "pvc_manifest", "storage_class_manifest", "csi_node_manifest", "csi_driver_manifest",
           "csi_storage_capacity_manifest", "pod_with_claims", "random_storage_cluster", "ZONE", "REGION"]

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
    for i in range(claims):
        kind = rng.random()
        name = f"claim-{i}"
        size = rng.choice(["1Gi", "2Gi", "5Gi"])
        modes = ["ReadWriteOncePod"] if rng.random() < 0.15 else ["ReadWriteOnce"]
        if kind < 0.3:   # bound to its own PV
            pv = f"pv-bound-{i}"
            aff = {ZONE: [rng.choice(zone_names)]} if rng.random() < 0.6 else None
            labels = {ZONE: rng.choice(zone_names)} if rng.random() < 0.5 else None
            objects.append(pv_manifest(pv, capacity=size, storage_class="wait", node_affinity=aff, labels=labels,
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
        aff: dict | None
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
    import copy as _copy

    pv = _copy.deepcopy(dict(pv_template))
    pvc = _copy.deepcopy(dict(pvc_template))
    volume_id = f"vol-{index}"
    pv_name = f"{namespace}-{volume_id}"
    pvc_name = f"pvc-{index}"
    pv["metadata"] = {**(pv.get("metadata") or {}), "name": pv_name}
    spec = pv.setdefault("spec", {})
    if spec.get("csi") is not None:
        spec["csi"] = {**spec["csi"], "volumeHandle": pv_name}
    elif spec.get("awsElasticBlockStore") is not None:
        spec["awsElasticBlockStore"] = {**spec["awsElasticBlockStore"], "volumeID": volume_id}
    spec["claimRef"] = {"kind": "PersistentVolumeClaim", "namespace": namespace, "name": pvc_name,
                        "apiVersion": "v1"}
    pv["status"] = {"phase": "Bound"}
    pvc["metadata"] = {**(pvc.get("metadata") or {}), "name": pvc_name, "namespace": namespace}
    pvc.setdefault("spec", {})["volumeName"] = pv_name
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
    from ..api.storage import ClaimRef

    if count <= 0:
        return [], [], []
    pv_doc, pvc_doc, volume = perf_volume_pair(pv_template, pvc_template, namespace, start)
    pv0, pvc0 = load_objects([pv_doc, pvc_doc])
    copy_pv, copy_pvc = _field_copier(type(pv0)), _field_copier(type(pvc0))
    pvs, pvcs, volumes = [pv0], [pvc0], [volume]
    for i in range(start + 1, start + count):
        pv_doc, pvc_doc, volume = perf_volume_pair(pv_template, pvc_template, namespace, i)
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
