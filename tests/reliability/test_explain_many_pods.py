"""``explain`` says what ``run`` then does, pod after pod, on a cluster that fills up: 12 nodes in
three zones (a fifth tainted), 80 pods with spread constraints, required anti-affinity, preferred
affinity, node selectors, tolerations and three priorities, drawn by hypothesis (derandomized).

Before each pod is added, ``explain(manifest)`` is asked; the pod's one attempt must then bind it
to one of the best-scored nodes explain named, or fail when explain found no feasible node. A pod
that fails is deleted (so the next attempt is the next pod's, as in the differential oracle's
driver). ``tests/scheduler/test_api_sequences.py`` checks the same on 1..4 nodes and a few pods.
"""
from __future__ import annotations

import random

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fastsched import Scheduler
from fastsched.scheduler.result import SCHEDULED


def _node(j: int, tainted: bool) -> dict:
    alloc = {"cpu": "4", "memory": "8Gi", "pods": "20"}
    n: dict = {"apiVersion": "v1", "kind": "Node",
               "metadata": {"name": f"n{j}", "labels": {"kubernetes.io/hostname": f"n{j}", "zone": f"z{j % 3}"}},
               "spec": {}, "status": {"allocatable": dict(alloc), "capacity": dict(alloc)}}
    if tainted:
        n["spec"]["taints"] = [{"key": "dedicated", "value": "x", "effect": "NoSchedule"}]
    return n


def _pod(rng: random.Random, i: int) -> dict:
    spec: dict = {"containers": [{"name": "c", "image": "busybox", "resources": {"requests": {
        "cpu": rng.choice(["100m", "250m", "500m", "1", "2"]), "memory": rng.choice(["128Mi", "1Gi", "2Gi"])}}}]}
    app = rng.choice(["a", "b", "c"])
    r = rng.random()
    if r < 0.2:
        spec["topologySpreadConstraints"] = [{
            "maxSkew": rng.choice([1, 2]), "topologyKey": rng.choice(["zone", "kubernetes.io/hostname"]),
            "whenUnsatisfiable": rng.choice(["DoNotSchedule", "ScheduleAnyway"]),
            "labelSelector": {"matchLabels": {"app": app}}}]
    elif r < 0.35:
        spec["affinity"] = {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
            {"labelSelector": {"matchLabels": {"app": app}}, "topologyKey": "kubernetes.io/hostname"}]}}
    elif r < 0.45:
        spec["affinity"] = {"podAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
            {"weight": 10, "podAffinityTerm": {"labelSelector": {"matchLabels": {"app": app}}, "topologyKey": "zone"}}]}}
    elif r < 0.55:
        spec["nodeSelector"] = {"zone": rng.choice(["z0", "z1", "z2"])}
    elif r < 0.62:
        spec["tolerations"] = [{"key": "dedicated", "operator": "Exists"}]
    if rng.random() < 0.3:
        spec["priority"] = rng.choice([0, 100, 1000])
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": f"p{i}", "namespace": "default", "labels": {"app": app}}, "spec": spec}


def explain_then_attempt(s, manifest: dict, *context):
    """``s.explain(manifest)``, then the pod added and given one attempt: the explanation and the
    attempt's result (``context`` joins the assertion's message)."""
    ex = s.explain(manifest)
    s.add(manifest)
    s.run(max_attempts=1)
    meta = manifest["metadata"]
    r = s.results[s.get_pod(meta["namespace"], meta["name"]).uid]
    assert r.attempts == 1, (meta["name"], *context, r.status, r.attempts)
    return ex, r


@settings(max_examples=2, deadline=None, derandomize=True, database=None,
          suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(0, 10_000))
def test_explain_names_where_the_next_attempt_binds(seed):
    rng = random.Random(seed)
    s = Scheduler(seed=seed)
    s.add([_node(j, rng.random() < 0.2) for j in range(12)])
    bound = 0
    for i in range(80):
        ex, r = explain_then_attempt(s, _pod(rng, i))
        if r.status == SCHEDULED:
            bound += 1
            assert r.node_name in ex.best_nodes, (i, r.node_name, ex.best_nodes)
        else:
            assert not ex.best_nodes and not ex.feasible, (i, r.message, ex.best_nodes)
            s.delete_pod(r.pod.uid)
    assert 20 < bound < 80  # the cluster filled up: both outcomes were compared
