"""Workload objects added to a Scheduler: their controllers' pods, scaling, cascading deletion,
and PodTopologySpread's default constraints fed by Services and ReplicaSets."""
import collections
import re
from pathlib import Path

import pytest

from fastsched import Scheduler, load_config
from fastsched.api import ManifestError, ManifestWarning
from fastsched.api.names import NAME_ALPHABET
from fastsched.scheduler.scheduler import DELETED, SCHEDULED
from fastsched.testing import node_manifest

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
SUFFIX = f"[{NAME_ALPHABET}]{{5}}"
HASH = "[456789bcdf]{1,10}"


def cluster(nodes: int = 3, zones: int = 3, cpu: str = "8", **kwargs) -> Scheduler:
    s = Scheduler(seed=11, **kwargs)
    for i in range(nodes):
        s.add_node(node_manifest(f"n{i}", cpu=cpu, labels={"topology.kubernetes.io/zone": f"z{i % zones}"}))
    return s


def deployment(name: str = "web", replicas: int = 3, cpu: str = "100m", labels: dict | None = None) -> dict:
    labels = labels or {"app": name}
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name, "namespace": "default"},
            "spec": {"replicas": replicas, "selector": {"matchLabels": labels},
                     "template": {"metadata": {"labels": labels},
                                  "spec": {"containers": [{"name": "c", "image": "nginx",
                                                           "resources": {"requests": {"cpu": cpu}}}]}}}}


def pods_of(s: Scheduler, label: str) -> list:
    return [p for p in s.pods.values() if p.labels.get("app") == label]


def test_a_deployment_creates_a_replica_set_and_its_pods():
    s = cluster()
    s.add(deployment(replicas=3))
    (rs,) = s.objects("ReplicaSet")
    assert re.fullmatch(f"web-{HASH}", rs["metadata"]["name"])
    template_hash = rs["metadata"]["labels"]["pod-template-hash"]
    pods = pods_of(s, "web")
    assert len(pods) == 3
    for pod in pods:
        assert re.fullmatch(f"web-{template_hash}-{SUFFIX}", pod.name)
        (owner,) = pod.owner_references
        assert (owner.kind, owner.name, owner.controller) == ("ReplicaSet", rs["metadata"]["name"], True)
        assert pod.labels["pod-template-hash"] == template_hash
    assert all(r.status == SCHEDULED for r in s.run())
    again = cluster()
    again.add(deployment(replicas=3))
    assert sorted(p.name for p in pods_of(again, "web")) == sorted(p.name for p in pods)  # seeded


def test_scaling_and_deleting_a_deployment():
    s = cluster()
    s.add(deployment(replicas=2))
    s.run()
    s.scale("Deployment", "web", 5)
    assert len(pods_of(s, "web")) == 5
    s.run()
    s.scale("Deployment", "web", 1)
    assert len(pods_of(s, "web")) == 1
    s.delete_object("Deployment", "web")
    assert pods_of(s, "web") == [] and s.objects("ReplicaSet") == []
    with pytest.raises(KeyError):
        s.scale("Deployment", "web", 2)


def test_a_deleted_replica_set_pod_is_replaced():
    s = cluster()
    s.add(deployment(replicas=2))
    s.run()
    victim = pods_of(s, "web")[0]
    s.delete_pod(victim)
    assert s.results[victim.uid].status == DELETED
    survivors = pods_of(s, "web")
    assert len(survivors) == 2 and victim.uid not in {p.uid for p in survivors}


def test_a_duplicate_workload_is_an_error():
    s = cluster()
    s.add(deployment())
    with pytest.raises(ManifestError, match='deployments.apps "web" already exists'):
        s.add(deployment())


def test_a_stateful_set_creates_ordinal_pods():
    s = cluster()
    s.add({"apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": {"name": "db"},
           "spec": {"replicas": 3, "serviceName": "db", "selector": {"matchLabels": {"app": "db"}},
                    "template": {"metadata": {"labels": {"app": "db"}},
                                 "spec": {"containers": [{"name": "c", "image": "postgres"}]}}}})
    pods = sorted(pods_of(s, "db"), key=lambda p: p.name)
    assert [p.name for p in pods] == ["db-0", "db-1", "db-2"]
    assert [p.labels["apps.kubernetes.io/pod-index"] for p in pods] == ["0", "1", "2"]
    s.delete_object("StatefulSet", "db")
    assert pods_of(s, "db") == []


def test_a_daemon_set_follows_the_nodes():
    s = cluster(nodes=2)
    s.add_node(node_manifest("tainted", taints=[{"key": "dedicated", "value": "gpu", "effect": "NoSchedule"}]))
    s.add({"apiVersion": "apps/v1", "kind": "DaemonSet", "metadata": {"name": "agent", "namespace": "kube-system"},
           "spec": {"selector": {"matchLabels": {"app": "agent"}},
                    "template": {"metadata": {"labels": {"app": "agent"}},
                                 "spec": {"containers": [{"name": "c", "image": "agent"}]}}}})
    placed = {p.name: p for p in pods_of(s, "agent")}
    assert len(placed) == 2  # not on the node whose taint the pod does not tolerate
    s.add_node(node_manifest("late"))
    assert len(pods_of(s, "agent")) == 3
    results = {r.pod.name: r for r in s.run()}
    targets = sorted(r.node_name for r in results.values() if r.pod.labels.get("app") == "agent")
    assert targets == ["late", "n0", "n1"]
    for pod in pods_of(s, "agent"):
        assert any(t.key == "node.kubernetes.io/unschedulable" for t in pod.tolerations)


def test_jobs_count_succeeded_pods_and_create_the_rest():
    s = cluster()
    job = {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "batch", "uid": "job-uid-1"},
           "spec": {"completions": 3, "parallelism": 3,
                    "template": {"spec": {"restartPolicy": "Never",
                                          "containers": [{"name": "c", "image": "python"}]}}}}
    done = {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": "batch-done1", "labels": {"batch.kubernetes.io/controller-uid": "job-uid-1",
                                                           "batch.kubernetes.io/job-name": "batch"},
                         "ownerReferences": [{"apiVersion": "batch/v1", "kind": "Job", "name": "batch",
                                              "uid": "job-uid-1", "controller": True}]},
            "spec": {"nodeName": "n0", "restartPolicy": "Never", "containers": [{"name": "c", "image": "python"}]},
            "status": {"phase": "Succeeded"}}
    s.add([job, done])
    pods = [p for p in s.pods.values() if p.labels.get("batch.kubernetes.io/job-name") == "batch"]
    assert len(pods) == 3  # the succeeded one and two new ones for the remaining completions
    created = [p for p in pods if p.name != "batch-done1"]
    assert len(created) == 2 and all(re.fullmatch(f"batch-{SUFFIX}", p.name) for p in created)


def test_services_feed_the_default_topology_spread():
    """With a Service selecting the pods, the system default constraints score the nodes; without
    one, PodTopologySpread has nothing to spread on (upstream's DefaultSelector)."""
    def spread_scores(with_service: bool) -> dict:
        s = cluster(nodes=3, zones=3)
        s.add(deployment(replicas=2))
        if with_service:
            s.add({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "web"},
                   "spec": {"selector": {"app": "web"}, "ports": [{"port": 80}]}})
        s.run()
        probe = deployment()["spec"]["template"]
        probe = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "probe", **probe["metadata"]},
                 "spec": probe["spec"]}
        scores = s.explain(probe).scores.get("PodTopologySpread")
        return None if scores is None else {node: detail.normalized for node, detail in scores.items()}

    with_service = spread_scores(True)
    assert len(set(with_service.values())) > 1   # nodes holding a web pod score lower
    assert spread_scores(False) is None          # no selector: no default constraints, PreScore skips


def test_the_example_dump_schedules_and_spreads_the_new_service_over_zones():
    s = Scheduler(load_config(EXAMPLES / "config.yaml"), seed=0)
    with pytest.warns(ManifestWarning, match=r"ConfigMap \(1\)"):
        s.add(EXAMPLES / "cluster.yaml")
    assert len(s.pods) == 13                       # the controllers found their pods: none doubled
    assert s.run() == []                           # nothing pending in the dump
    zone_of = {n.name: n.labels["topology.kubernetes.io/zone"] for n in s.nodes()}
    s.add(EXAMPLES / "workload.yaml")
    results = s.run()
    assert all(r.status == SCHEDULED for r in results), [r.message for r in results if not r.scheduled]
    api = [r for r in results if r.pod.labels.get("app") == "api"]
    assert len(api) == 6
    per_zone = collections.Counter(zone_of[r.node_name] for r in api)
    assert sorted(per_zone.values()) == [2, 2, 2]
    assert len({r.node_name for r in api}) == 6    # hostname constraint: one per node
    jobs = [r for r in results if r.pod.labels.get("batch.kubernetes.io/job-name") == "reindex"]
    assert len(jobs) == 2                          # parallelism 2 of 4 completions
    succeeded = [p for p in s.pods.values() if p.phase == "Succeeded"]
    assert len(succeeded) == 2 and all(s.cache.get_pod(p) is None for p in succeeded)  # they hold nothing


def test_the_ownership_index_answers_as_a_full_read_of_the_namespace():
    """controlled_or_orphans (the index) gives what claim would keep from every pod of the
    namespace, in the same order, through adoption, scaling and deletion."""
    s = cluster()
    s.add([deployment("a", replicas=2), deployment("b", replicas=3)])
    orphan = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "stray", "labels": {"app": "c"}},
              "spec": {"containers": [{"name": "c", "image": "i"}]}}
    s.add(orphan)
    s.scale("Deployment", "b", 1)

    def full_read(kind, owner_uid):
        objects = s.pods_in_namespace("default") if kind == "Pod" else s.cluster.objects_in_namespace(kind, "default")
        out = []
        for obj in objects:
            controller = next((r for r in obj.owner_references if r.controller), None)
            if controller is None or controller.uid == owner_uid:
                out.append(obj)
        return out

    for rs in s.cluster.objects_in_namespace("ReplicaSet", "default"):
        assert s.cluster.controlled_or_orphans("Pod", "default", rs.uid) == full_read("Pod", rs.uid)
    for d in s.cluster.objects_in_namespace("Deployment", "default"):
        assert s.cluster.controlled_or_orphans("ReplicaSet", "default", d.uid) == full_read("ReplicaSet", d.uid)
    s.delete_object("Deployment", "a")
    assert [p.name for p in s.cluster.controlled_or_orphans("Pod", "default", "nobody")] == ["stray"]
