"""Manifests whose maps are ``null`` (JSON allows it, and Go decodes a null map or struct as
empty): ``metadata.annotations``, ``metadata.labels`` and ``status`` left null on
PersistentVolumes, claims, a StorageClass and pods, 40 pods with a claim each on 8 nodes, bound by
the PV controller (Immediate) or by VolumeBinding (WaitForFirstConsumer).

Found: the controllers' writes into the stored manifest (the phase, the claimRef, the
bound-by-controller and bind-completed annotations, the claim's volumeName) indexed the null map,
a TypeError or AttributeError out of ``Scheduler.add``/``run``.
"""
from __future__ import annotations

import pytest

from fastsched import Scheduler
from fastsched.scheduler.result import SCHEDULED

N_NODES, N_PODS = 8, 40


def _objects(mode: str) -> list[dict]:
    objs: list[dict] = [{"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass",
                         "metadata": {"name": "local", "annotations": None, "labels": None},
                         "provisioner": "kubernetes.io/no-provisioner", "volumeBindingMode": mode}]
    objs += [{"apiVersion": "v1", "kind": "Node",
              "metadata": {"name": f"n{j}", "labels": {"kubernetes.io/hostname": f"n{j}"}, "annotations": None},
              "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "20"}}} for j in range(N_NODES)]
    for i in range(N_PODS):
        objs.append({"apiVersion": "v1", "kind": "PersistentVolume",
                     "metadata": {"name": f"pv{i}", "annotations": None, "labels": None},
                     "spec": {"storageClassName": "local", "capacity": {"storage": "1Gi"},
                              "accessModes": ["ReadWriteOnce"], "local": {"path": f"/mnt/{i}"},
                              "nodeAffinity": {"required": {"nodeSelectorTerms": [{"matchExpressions": [
                                  {"key": "kubernetes.io/hostname", "operator": "In", "values": [f"n{i % N_NODES}"]}]}]}}},
                     "status": None})
        objs.append({"apiVersion": "v1", "kind": "PersistentVolumeClaim",
                     "metadata": {"name": f"c{i}", "namespace": "default", "annotations": None, "labels": None},
                     "spec": {"storageClassName": "local", "accessModes": ["ReadWriteOnce"],
                              "resources": {"requests": {"storage": "1Gi"}}},
                     "status": None})
        objs.append({"apiVersion": "v1", "kind": "Pod",
                     "metadata": {"name": f"p{i}", "namespace": "default", "annotations": None, "labels": None},
                     "spec": {"containers": [{"name": "c", "image": "busybox", "resources": {"requests": {"cpu": "100m"}}}],
                              "volumes": [{"name": "data", "persistentVolumeClaim": {"claimName": f"c{i}"}}]},
                     "status": None})
    return objs


@pytest.mark.parametrize("mode", ["WaitForFirstConsumer", "Immediate"])
def test_null_maps_in_volume_manifests_bind_every_pod(mode):
    s = Scheduler(seed=0)
    s.add(_objects(mode))
    results = list(s.run())
    assert len(results) == N_PODS and all(r.status == SCHEDULED for r in results), \
        [(r.pod.name, r.status, r.message) for r in results if r.status != SCHEDULED][:5]
    volume_of = {c["metadata"]["name"]: c["spec"]["volumeName"] for c in s.objects("PersistentVolumeClaim")}
    for r in results:  # each pod on the node of the volume its claim is bound to (written in the manifest)
        volume = volume_of[f"c{r.pod.name[1:]}"]
        assert r.node_name == f"n{int(volume[2:]) % N_NODES}", (r.pod.name, volume, r.node_name)
