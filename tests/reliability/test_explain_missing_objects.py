"""``explain`` and ``run`` agree on pods that reference objects the cluster does not have: a
PersistentVolumeClaim that does not exist, an unbound claim of a StorageClass that does not exist,
an ephemeral volume whose claim the ephemeral volume controller has not created, beside plain pods
(some too big for any node) on 8 nodes that fill up; 60 pods drawn by hypothesis (derandomized).

A PreFilter plugin that rejects the pod (VolumeRestrictions' or VolumeBinding's "not found")
makes every node infeasible, as upstream's ``findNodesThatFitPod`` gives every node the PreFilter
status and runs no Filter: ``explain`` must say no node is feasible and name no best node, and
the attempt then fails with that PreFilter message in its FitError. (``explain`` listed every node
as feasible in this case: its Filter verdicts, never run, were empty.)
"""
from __future__ import annotations

import random

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fastsched import Scheduler
from fastsched.framework import Code
from fastsched.scheduler.result import SCHEDULED

from .test_explain_many_pods import explain_then_attempt

KINDS = ("plain", "plain", "plain", "too-big", "missing-pvc", "missing-class", "ephemeral")


def _node(j: int) -> dict:
    alloc = {"cpu": "4", "memory": "8Gi", "pods": "20"}
    return {"apiVersion": "v1", "kind": "Node",
            "metadata": {"name": f"n{j}", "labels": {"kubernetes.io/hostname": f"n{j}", "zone": f"z{j % 2}"}},
            "status": {"allocatable": dict(alloc), "capacity": dict(alloc)}}


def _objects(rng: random.Random, i: int, kind: str) -> tuple[list[dict], dict]:
    """(objects created before the pod, the pod)"""
    cpu = "8" if kind == "too-big" else rng.choice(["250m", "500m", "1"])
    spec: dict = {"containers": [{"name": "c", "image": "busybox", "resources": {"requests": {"cpu": cpu}}}]}
    before: list[dict] = []
    if kind == "missing-pvc":
        spec["volumes"] = [{"name": "data", "persistentVolumeClaim": {"claimName": f"absent-{i}"}}]
    elif kind == "missing-class":
        before.append({"apiVersion": "v1", "kind": "PersistentVolumeClaim",
                       "metadata": {"name": f"claim-{i}", "namespace": "default"},
                       "spec": {"storageClassName": "no-such-class", "accessModes": ["ReadWriteOnce"],
                                "resources": {"requests": {"storage": "1Gi"}}}})
        spec["volumes"] = [{"name": "data", "persistentVolumeClaim": {"claimName": f"claim-{i}"}}]
    elif kind == "ephemeral":
        spec["volumes"] = [{"name": "scratch", "ephemeral": {"volumeClaimTemplate": {"spec": {
            "accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}}}}]
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": f"p{i}", "namespace": "default"}, "spec": spec}
    return before, pod


@settings(max_examples=2, deadline=None, derandomize=True, database=None,
          suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(0, 10_000))
def test_explain_and_run_agree_on_pods_referencing_missing_objects(seed):
    rng = random.Random(seed)
    s = Scheduler(seed=seed)
    s.add([_node(j) for j in range(8)])
    bound = rejected_at_prefilter = 0
    for i in range(60):
        kind = rng.choice(KINDS)
        before, manifest = _objects(rng, i, kind)
        if before:
            s.add(before)
        ex, r = explain_then_attempt(s, manifest, kind)
        pre = ex.prefilter_status
        if pre is not None and pre.code() != Code.SUCCESS:
            rejected_at_prefilter += 1
            assert ex.feasible == [] and not ex.best_nodes, (i, pre.message(), ex.feasible)
            assert r.status != SCHEDULED, (i, r.message)
            if kind != "ephemeral":  # (added, the pod gets its claim from the controller: another verdict)
                assert pre.message() in r.message, (i, r.message)
        if r.status == SCHEDULED:
            bound += 1
            assert r.node_name in ex.best_nodes, (i, r.node_name, ex.best_nodes)
        else:
            assert not ex.best_nodes and not ex.feasible, (i, r.message, ex.feasible)
            s.delete_pod(r.pod.uid)
    assert bound > 10 and rejected_at_prefilter > 5  # both sides of the question were asked
