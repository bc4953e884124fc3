"""StatefulSet and Indexed Job pods as a dump hands them over (each with its own hostname, claims,
pod-name label, completion index annotation and generateName), stamped from one template
(fastsched.api.templates): whole runs place them as pods decoded each on their own and as the
plugin-call path does, on a cluster whose claims are some bound (to a PV on one node) and some not
(WaitForFirstConsumer, PVs on some nodes only), so that each pod's own claims decide where it goes."""
from __future__ import annotations

import copy
import random

import pytest

from fastsched import Scheduler, load_config
from fastsched.api import load as load_module
from fastsched.api.templates import PodTemplates
from fastsched.sim.storage import pv_manifest, pvc_manifest, storage_class_manifest

V1 = {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration"}
HOST = "kubernetes.io/hostname"
INDEX = "batch.kubernetes.io/job-completion-index"


class _NoTemplates(PodTemplates):
    """Every pod decoded on its own (no template cache)."""

    def key(self, document):
        return None


class _Counting(PodTemplates):
    def __init__(self):
        super().__init__()
        self.stamped = 0

    def stamp(self, key, document):
        pod = super().stamp(key, document)
        self.stamped += pod is not None
        return pod


def _nodes(n: int) -> list[dict]:
    return [{"apiVersion": "v1", "kind": "Node",
             "metadata": {"name": f"n{i}", "labels": {HOST: f"n{i}", "topology.kubernetes.io/zone": f"z{i % 3}"}},
             "status": {"allocatable": {"cpu": "4", "memory": "16Gi", "pods": "110"}}} for i in range(n)]


def _sts_pod(ordinal: int, rng: random.Random, *, token: bool) -> dict:
    """A StatefulSet's pod; with ``token`` the ServiceAccount token volume too (whose restoring
    also gives the stamped pod its own volumes: without, only the claims' names do)."""
    name = f"db-{ordinal}"
    token_name = "kube-api-access-" + "".join(rng.choice("bcdfghjklmnpqrstvwxz2456789") for _ in range(5))
    m = {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "generateName": "db-", "namespace": "default",
                         "uid": f"00000000-0000-4000-8000-{ordinal:012d}",
                         "labels": {"app": "db", "controller-revision-hash": "db-5f8d6c",
                                    "statefulset.kubernetes.io/pod-name": name,
                                    "apps.kubernetes.io/pod-index": str(ordinal)},
                         "ownerReferences": [{"apiVersion": "apps/v1", "kind": "StatefulSet", "name": "db",
                                              "uid": "8b6c1f1e-0000-4000-8000-000000000002", "controller": True}]},
            "spec": {"containers": [{"name": "db", "image": "postgres:16",
                                     "resources": {"requests": {"cpu": "700m", "memory": "1Gi"}},
                                     "volumeMounts": [{"name": "data", "mountPath": "/data"},
                                                      {"name": token_name, "mountPath": "/var/run/secrets/x",
                                                       "readOnly": True}]}],
                     "hostname": name, "subdomain": "db",
                     "affinity": {"podAntiAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
                         {"weight": 10, "podAffinityTerm": {"topologyKey": HOST,
                                                            "labelSelector": {"matchLabels": {"app": "db"}}}}]}},
                     "volumes": [{"name": "data", "persistentVolumeClaim": {"claimName": f"data-{name}"}},
                                 {"name": token_name, "projected": {"sources": [
                                     {"serviceAccountToken": {"expirationSeconds": 3607, "path": "token"}}]}}]},
            "status": {"phase": "Pending"}}
    if not token:
        spec = m["spec"]
        spec["volumes"] = spec["volumes"][:1]
        spec["containers"][0]["volumeMounts"] = spec["containers"][0]["volumeMounts"][:1]
    return m


def _job_pod(index: int, rng: random.Random) -> dict:
    suffix = "".join(rng.choice("bcdfghjklmnpqrstvwxz2456789") for _ in range(5))
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": f"train-{index}-{suffix}", "generateName": f"train-{index}-", "namespace": "default",
                         "labels": {"job-name": "train", INDEX: str(index)},
                         "annotations": {INDEX: str(index)}},
            "spec": {"containers": [{"name": "w", "image": "trainer:3",
                                     "resources": {"requests": {"cpu": "500m", "memory": "512Mi"}}}],
                     "hostname": f"train-{index}", "subdomain": "train", "restartPolicy": "Never",
                     "topologySpreadConstraints": [{"maxSkew": 1, "topologyKey": "topology.kubernetes.io/zone",
                                                    "whenUnsatisfiable": "ScheduleAnyway",
                                                    "labelSelector": {"matchLabels": {"job-name": "train"}}}]}}


def _storage(rng: random.Random, replicas: int, nodes: int) -> list[dict]:
    """The class (WaitForFirstConsumer, no provisioner), a local PV on one node per claim or for
    some claims none, each claim bound to its PV (on one node) or not (binds at scheduling)."""
    out = [storage_class_manifest("local", provisioner="kubernetes.io/no-provisioner")]
    for ordinal in range(replicas):
        claim = f"data-db-{ordinal}"
        node = f"n{rng.randrange(nodes)}"
        roll = rng.random()
        if roll < 0.4:  # bound: the pod must go to the PV's node
            out.append(pv_manifest(f"pv-{ordinal}", storage_class="local", capacity="10Gi",
                                   node_affinity={HOST: [node]}, claim=("default", claim), phase="Bound"))
            out.append(pvc_manifest(claim, storage_class="local", request="5Gi", volume_name=f"pv-{ordinal}",
                                    bound=True))
        else:
            if roll < 0.85:  # a PV it may bind to (on one node); else none: unschedulable
                out.append(pv_manifest(f"pv-{ordinal}", storage_class="local", capacity="10Gi",
                                       node_affinity={HOST: [node]}))
            out.append(pvc_manifest(claim, storage_class="local", request="5Gi"))
    return out


def _run(seed: int, *, compiled: bool, templates: PodTemplates, monkeypatch):
    rng = random.Random(seed)
    nodes = _nodes(8)
    storage = _storage(rng, 24, 8)
    pods = []
    for i in range(24):
        pods.append(_sts_pod(i, rng, token=seed % 2 == 1))
        if rng.random() < 0.6:
            pods.append(_job_pod(i, rng))
    monkeypatch.setattr(load_module, "_POD_TEMPLATES", templates)
    s = Scheduler(load_config(V1), seed=seed)
    s.use_compiled_cycle = compiled
    s.add(nodes)
    s.add(storage)
    s.add_pods(copy.deepcopy(pods))
    results = [(r.pod.key, r.status, r.node_name, r.message) for r in s.run()]
    bound = {f"default/db-{m['spec']['claimRef']['name'].rsplit('-', 1)[1]}":
             m["spec"]["nodeAffinity"]["required"]["nodeSelectorTerms"][0]["matchExpressions"][0]["values"][0]
             for m in storage if m["kind"] == "PersistentVolume" and "claimRef" in m["spec"]}
    return results, bound


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_controller_pods_place_as_pods_decoded_afresh_and_as_the_plugin_call_path(seed, monkeypatch):
    counting = _Counting()
    stamped, bound = _run(seed, compiled=True, templates=counting, monkeypatch=monkeypatch)
    afresh, _ = _run(seed, compiled=True, templates=_NoTemplates(), monkeypatch=monkeypatch)
    slow, _ = _run(seed, compiled=False, templates=PodTemplates(), monkeypatch=monkeypatch)
    assert stamped == afresh == slow
    assert counting.stamped >= 30  # (the StatefulSet's and the Job's pods after their first)
    statuses = {r[1] for r in stamped}
    assert "Scheduled" in statuses and len(statuses) > 1  # (claims without a PV: unschedulable)
    assert sum(r[1] == "Scheduled" for r in stamped) >= 15
    # each pod's own claim decided: a bound claim's pod went to its PV's node
    placed = {key: node for key, status, node, _ in stamped if status == "Scheduled"}
    assert bound and all(placed.get(key, node) == node for key, node in bound.items())
    assert any(key in placed for key in bound)
