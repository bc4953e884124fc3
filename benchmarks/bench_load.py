"""Loading manifests: the API server's part (decode, default, validate) on a realistic cluster dump.

Each round loads 5,000 pod manifests as a ``kubectl get pods -o yaml`` dump holds them (owner
reference, two containers with probes, env and mounts, tolerations, anti-affinity), already parsed
from YAML: what ``Scheduler.add`` pays per pod before scheduling starts.

Run: python -m pytest benchmarks/bench_load.py --benchmark-only

What is timed: ``load_objects`` over the already-parsed documents (built in a fixture); extra_info
records CPU µs per pod of the process (``time.process_time``), best of the 5 rounds.
"""
import copy
import time

import pytest

from fastsched.api import load_objects

PODS = 5_000


def dump_pod(i: int) -> dict:
    container = {"name": "app", "image": "ghcr.io/example/app:1.2.3", "imagePullPolicy": "IfNotPresent",
                 "ports": [{"containerPort": 8080, "name": "http", "protocol": "TCP"}],
                 "resources": {"requests": {"cpu": "250m", "memory": "256Mi"}, "limits": {"memory": "256Mi"}},
                 "env": [{"name": "MODE", "value": "prod"},
                         {"name": "POD_IP", "valueFrom": {"fieldRef": {"fieldPath": "status.podIP"}}}],
                 "livenessProbe": {"httpGet": {"path": "/healthz", "port": 8080}, "periodSeconds": 10},
                 "readinessProbe": {"httpGet": {"path": "/ready", "port": "http"}},
                 "volumeMounts": [{"name": "kube-api-access", "mountPath": "/var/run/secrets", "readOnly": True}],
                 "terminationMessagePath": "/dev/termination-log", "terminationMessagePolicy": "File"}
    sidecar = dict(copy.deepcopy(container), name="proxy", image="envoyproxy/envoy:v1.31.0",
                   ports=[{"containerPort": 9901, "name": "admin", "protocol": "TCP"}])
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": f"web-6d8f9b7c54-{i:05d}", "namespace": "shop", "uid": f"uid-{i}",
                         "labels": {"app": "web", "pod-template-hash": "6d8f9b7c54"},
                         "annotations": {"prometheus.io/scrape": "true"},
                         "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "web-6d8f9b7c54",
                                              "uid": "rs-uid", "controller": True, "blockOwnerDeletion": True}]},
            "spec": {"nodeName": f"node-{i % 500}", "containers": [container, sidecar],
                     "volumes": [{"name": "kube-api-access", "projected": {"sources": [
                         {"serviceAccountToken": {"path": "token", "expirationSeconds": 3607}}]}}],
                     "tolerations": [{"key": "node.kubernetes.io/not-ready", "operator": "Exists",
                                      "effect": "NoExecute", "tolerationSeconds": 300}],
                     "affinity": {"podAntiAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
                         {"weight": 100, "podAffinityTerm": {"topologyKey": "kubernetes.io/hostname",
                                                              "labelSelector": {"matchLabels": {"app": "web"}}}}]}},
                     "priority": 0, "schedulerName": "default-scheduler", "restartPolicy": "Always"},
            "status": {"phase": "Running", "podIP": "10.8.0.7", "qosClass": "Burstable"}}


@pytest.fixture(scope="module")
def documents():
    return [dump_pod(i) for i in range(PODS)]


@pytest.mark.parametrize("validate", [True, False], ids=["validated", "decoded-only"])
def test_load_pod_dump(benchmark, documents, validate):
    cpu: list[float] = []

    def load():
        c = time.process_time()
        out = load_objects(documents, validate=validate)
        cpu.append(time.process_time() - c)
        return out

    objects = benchmark.pedantic(load, rounds=5, iterations=1)
    assert len(objects) == PODS and objects[0].node_name == "node-0"
    benchmark.extra_info.update(pods=PODS, cpu_us_per_pod=round(min(cpu) / PODS * 1e6, 1))
