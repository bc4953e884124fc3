"""A tiny in-memory ClusterView for the controller tests, and manifest builders."""
from __future__ import annotations

from typing import Any, Iterable

from fastsched.api import KubeObject, Node, Pod
from fastsched.api.workloads import WORKLOAD_PARSERS
from fastsched.controller import Changes


class ListView:
    """A ClusterView over lists; :meth:`apply` folds a reconcile's Changes in."""

    def __init__(self, pods: Iterable[Any] = (), nodes: Iterable[Any] = (), objects: Iterable[KubeObject] = (),
                 taken: Iterable[tuple[str, str, str]] = ()):
        self.pod_list: list[Pod] = [p if isinstance(p, Pod) else Pod.from_manifest(p) for p in pods]
        self.node_list: list[Node] = [n if isinstance(n, Node) else Node.from_manifest(n) for n in nodes]
        self.object_list: list[KubeObject] = list(objects)
        self.extra_names: set[tuple[str, str, str]] = set(taken)
        self.manifests: list[dict] = []

    def pods(self, namespace: str) -> list[Pod]:
        return [p for p in self.pod_list if p.namespace == namespace]

    def nodes(self) -> list[Node]:
        return list(self.node_list)

    def objects(self, kind: str, namespace: str) -> list[KubeObject]:
        return [o for o in self.object_list if o.KIND == kind and o.namespace == namespace]

    def name_taken(self, kind: str, namespace: str, name: str) -> bool:
        if (kind, namespace, name) in self.extra_names:
            return True
        if kind == "Pod":
            return any(p.namespace == namespace and p.name == name for p in self.pod_list)
        return any(o.KIND == kind and o.namespace == namespace and o.name == name for o in self.object_list)

    def apply(self, changes: Changes) -> None:
        deleted = {p.uid for p in changes.delete_pods}
        replaced = {p.uid: p for p in changes.adopt_pods + changes.release_pods}
        self.pod_list = [replaced.get(p.uid, p) for p in self.pod_list if p.uid not in deleted]
        self.pod_list += [Pod.from_manifest(m) for m in changes.create_pods]
        gone = {o.uid for o in changes.delete_objects}
        updated = {o.uid: o for o in changes.update_objects}
        self.object_list = [updated.pop(o.uid, o) for o in self.object_list if o.uid not in gone]
        self.object_list += list(updated.values()) + list(changes.create_objects)
        for manifest in changes.create_manifests:
            meta = manifest["metadata"]
            self.extra_names.add((manifest["kind"], meta["namespace"], meta["name"]))
            self.manifests.append(manifest)


def template(labels: dict | None = None, *, spec: dict | None = None, annotations: dict | None = None,
             cpu: str | None = None) -> dict:
    container: dict = {"name": "c", "image": "busybox"}
    if cpu:
        container["resources"] = {"requests": {"cpu": cpu}}
    meta: dict = {}
    if labels is not None:
        meta["labels"] = dict(labels)
    if annotations:
        meta["annotations"] = dict(annotations)
    return {"metadata": meta, "spec": {"containers": [container], **(spec or {})}}


def workload(kind: str, name: str, spec: dict, *, namespace: str = "default", uid: str | None = None,
             api_version: str | None = None, **metadata: Any) -> KubeObject:
    api = api_version or {"Deployment": "apps/v1", "ReplicaSet": "apps/v1", "StatefulSet": "apps/v1",
                          "DaemonSet": "apps/v1", "Job": "batch/v1", "CronJob": "batch/v1"}.get(kind, "v1")
    meta: dict = {"name": name, "namespace": namespace, **metadata}
    if uid:
        meta["uid"] = uid
    return WORKLOAD_PARSERS[kind]({"apiVersion": api, "kind": kind, "metadata": meta, "spec": spec})


def owned_pod(name: str, owner: KubeObject, labels: dict, *, phase: str | None = None, node: str | None = None,
              namespace: str = "default", deleting: bool = False, created: str | None = None,
              ready: bool = False, annotations: dict | None = None, controller: bool = True) -> Pod:
    meta: dict = {"name": name, "namespace": namespace, "labels": dict(labels)}
    if owner is not None:
        ref = {"apiVersion": {"Job": "batch/v1", "ReplicationController": "v1"}.get(owner.KIND, "apps/v1"),
               "kind": owner.KIND, "name": owner.name, "uid": owner.uid}
        if controller:
            ref["controller"] = True
        meta["ownerReferences"] = [ref]
    if deleting:
        meta["deletionTimestamp"] = "2024-01-01T00:00:00Z"
    if created:
        meta["creationTimestamp"] = created
    if annotations:
        meta["annotations"] = dict(annotations)
    spec: dict = {"containers": [{"name": "c", "image": "busybox"}]}
    if node:
        spec["nodeName"] = node
    status: dict = {}
    if phase:
        status["phase"] = phase
    if ready:
        status["conditions"] = [{"type": "Ready", "status": "True", "lastTransitionTime": "2024-01-01T00:00:00Z"}]
    return Pod.from_manifest({"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec, "status": status})
