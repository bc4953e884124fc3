"""Deleting a Namespace (``delete_object("Namespace", name)``), which answered NotFound for every
namespace: as the API server and the namespace controller, its content goes (workloads, pods,
claims, budgets, services), the scheduler hears each pod deletion (a queued pod of another
namespace waiting for room schedules), no controller brings anything back, and the Namespace is
gone; ``default``, ``kube-system`` and ``kube-public`` are NamespaceLifecycle's immortal ones."""
from __future__ import annotations

import pytest

from fastsched import Scheduler
from fastsched.api import ManifestError
from fastsched.errors import NotFoundError
from fastsched.scheduler.result import DELETED, SCHEDULED


def _node(name: str, cpu: str = "4") -> dict:
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name},
            "status": {"allocatable": {"cpu": cpu, "memory": "8Gi", "pods": "110"}}}


def _pod(name: str, namespace: str, cpu: str, node: str | None = None, labels: dict | None = None) -> dict:
    spec: dict = {"containers": [{"name": "c", "image": "i", "resources": {"requests": {"cpu": cpu}}}]}
    if node:
        spec["nodeName"] = node
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": namespace,
                                                              "labels": labels or {}}, "spec": spec}


def _team_cluster() -> Scheduler:
    s = Scheduler(seed=0)
    s.add([_node("n0")])
    s.add([{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "team"}},
           {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "other"}}])
    s.add([
        _pod("big", "team", "3", node="n0"),  # holds most of n0
        {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web", "namespace": "team"},
         "spec": {"replicas": 2, "selector": {"matchLabels": {"app": "web"}},
                  "template": {"metadata": {"labels": {"app": "web"}},
                               "spec": {"containers": [{"name": "c", "image": "i",
                                                        "resources": {"requests": {"cpu": "100m"}}}]}}}},
        {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "web", "namespace": "team"},
         "spec": {"selector": {"app": "web"}, "ports": [{"port": 80}]}},
        {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": "data", "namespace": "team"},
         "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}},
        {"apiVersion": "policy/v1", "kind": "PodDisruptionBudget", "metadata": {"name": "web", "namespace": "team"},
         "spec": {"minAvailable": 1, "selector": {"matchLabels": {"app": "web"}}}},
        _pod("waiting", "other", "2"),  # no room until team's big pod goes
    ])
    return s


def test_deleting_a_namespace_deletes_its_content_and_frees_its_nodes():
    s = _team_cluster()
    first = {r.pod.name: r.status for r in s.run()}
    assert first["waiting"] != SCHEDULED and sum(st == SCHEDULED for st in first.values()) == 2, first
    team = [p["metadata"]["uid"] for p in s.objects("Pod") if p["metadata"]["namespace"] == "team"]
    assert len(team) == 3

    s.delete_object("Namespace", "team")

    for kind in ("Pod", "Deployment", "ReplicaSet", "Service", "PersistentVolumeClaim", "PodDisruptionBudget"):
        assert [o for o in s.objects(kind) if o["metadata"].get("namespace") == "team"] == [], kind
    assert [n["metadata"]["name"] for n in s.objects("Namespace")] == ["other"]
    # every pod of the namespace the scheduler had a result for (the Deployment's) ends deleted
    scheduled_here = [uid for uid in team if uid in s.results]
    assert len(scheduled_here) == 2
    assert {s.results[uid].status for uid in scheduled_here} == {DELETED}
    again = {r.pod.name: r.status for r in s.run()}
    assert again.get("waiting") == SCHEDULED, again  # the scheduler heard the deletions
    assert [p for p in s.objects("Pod") if p["metadata"]["namespace"] == "team"] == []  # nothing came back


@pytest.mark.parametrize("name", ["default", "kube-system", "kube-public"])
def test_the_immortal_namespaces_may_not_be_deleted(name):
    s = Scheduler()
    s.add([_node("n0"), _pod("p", name, "1")])
    with pytest.raises(ManifestError) as err:
        s.delete_object("Namespace", name)
    assert str(err.value).endswith(f'namespaces "{name}" is forbidden: this namespace may not be deleted')
    assert len(s.objects("Pod")) == 1


def test_a_namespace_that_does_not_exist_is_not_found():
    s = Scheduler()
    with pytest.raises(NotFoundError, match='namespaces "nope" not found'):
        s.delete_object("Namespace", "nope")


def test_a_namespace_known_only_by_its_pods_is_deleted_with_them():
    # fastsched admits pods into a namespace whose Namespace object was never added: it exists
    s = Scheduler()
    s.add([_node("n0"), _pod("a", "implicit", "1"), _pod("b", "implicit", "1", node="n0")])
    s.delete_object("Namespace", "implicit")
    assert s.objects("Pod") == []
    assert {r.pod.name: r.status for r in s.run()} == {"a": DELETED}
