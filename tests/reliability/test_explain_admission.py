"""``explain`` of a manifest the cluster does not hold yet answers for the pod the API server
would create: admitted as ``add`` admits it (DefaultTolerationSeconds' not-ready and unreachable
tolerations, the priority of its PriorityClass). 60 pods drawn by hypothesis (derandomized) on 8
nodes, some of them tainted ``node.kubernetes.io/not-ready`` or ``unreachable`` (NoExecute, as the
node lifecycle controller taints them), with three PriorityClasses; explain, then one attempt.

Found: explain evaluated the manifest unadmitted, so it called the tainted nodes infeasible
(``node(s) had untolerated taint(s)``) where the attempt then bound the pod; and it left out the
nominated pods (a failed pod that preempted stays nominated) that upstream's Filter counts on
their node for pods of no higher priority, so it named nodes the attempt found full.
"""
from __future__ import annotations

import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fastsched import Scheduler
from fastsched.scheduler.result import SCHEDULED

TAINTS = (None, None, "node.kubernetes.io/not-ready", "node.kubernetes.io/unreachable")
CLASSES = {"low": 10, "mid": 100, "high": 1000}


def _node(j: int, taint: str | None) -> dict:
    alloc = {"cpu": "2", "memory": "8Gi", "pods": "20"}
    spec = {"taints": [{"key": taint, "effect": "NoExecute"}]} if taint else {}
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": f"n{j}", "labels": {"kubernetes.io/hostname": f"n{j}"}},
            "spec": spec, "status": {"allocatable": dict(alloc), "capacity": dict(alloc)}}


@settings(max_examples=2, deadline=None, derandomize=True, database=None,
          suppress_health_check=[HealthCheck.too_slow])
@pytest.mark.parametrize("delete_failed", [False, True])
@given(st.integers(0, 10_000))
def test_explain_answers_for_the_admitted_pod(delete_failed, seed):
    rng = random.Random(seed)
    s = Scheduler(seed=seed)
    s.add([{"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": n}, "value": v}
           for n, v in CLASSES.items()])
    s.add([_node(j, TAINTS[j % len(TAINTS)]) for j in range(8)])
    on_tainted = 0
    for i in range(60):
        spec: dict = {"containers": [{"name": "c", "image": "busybox", "resources": {"requests": {
            "cpu": rng.choice(["100m", "250m", "500m"])}}}]}
        if rng.random() < 0.7:
            spec["priorityClassName"] = rng.choice(sorted(CLASSES))
        manifest = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": f"p{i}", "namespace": "default"}, "spec": spec}
        ex = s.explain(manifest)
        s.add(manifest)
        s.run(max_attempts=1)
        r = s.results[s.get_pod("default", f"p{i}").uid]
        if r.status == SCHEDULED:
            assert r.node_name in ex.best_nodes, (i, r.node_name, ex.best_nodes, ex.feasible)
            on_tainted += int(r.node_name[1:]) % len(TAINTS) >= 2
        else:
            assert not ex.feasible, (i, r.message, ex.feasible)
            if delete_failed:  # else it may stay nominated: it counts on its node for pods of lower priority
                s.delete_pod(r.pod.uid)
        assert ex.pod.priority == r.pod.priority, (i, ex.pod.priority, r.pod.priority)
    assert on_tainted > 5
