"""Deployment controller: ReplicaSet naming, hashing, cascade to pods, template changes."""
from __future__ import annotations

import re

from fastsched.api import deterministic_uid
from fastsched.api.names import NameGenerator
from fastsched.api.workloads import ReplicaSet
from fastsched.controller import reconcile
from fastsched.controller.common import compute_hash
from fastsched.controller.deployment import equal_ignore_hash

from .helpers import ListView, owned_pod, template, workload

NOW = 1_700_000_000.0


def deployment(replicas=2, labels=None, image="busybox", **extra):
    tmpl = template(labels or {"app": "api"})
    tmpl["spec"]["containers"][0]["image"] = image
    spec = {"replicas": replicas, "selector": {"matchLabels": {"app": "api"}}, "template": tmpl, **extra}
    return workload("Deployment", "api", spec, annotations={"owner": "team-a",
                                                            "kubectl.kubernetes.io/last-applied-configuration": "{}"})


def test_defaults():
    d = workload("Deployment", "api", {"selector": {"matchLabels": {"app": "api"}},
                                       "template": template({"app": "api"})})
    assert (d.replicas, d.strategy_type, d.max_surge, d.max_unavailable) == (1, "RollingUpdate", "25%", "25%")
    assert (d.revision_history_limit, d.progress_deadline_seconds, d.paused) == (10, 600, False)


def test_creates_replica_set_named_by_template_hash():
    d = deployment(3)
    changes = reconcile(d, ListView(), NameGenerator(1), NOW)
    [rs] = changes.create_objects
    pod_template_hash = compute_hash(d.template, None)
    assert re.fullmatch(r"[456789bcdf]{1,10}", pod_template_hash)
    assert isinstance(rs, ReplicaSet)
    assert rs.name == f"api-{pod_template_hash}"
    assert rs.labels == {"app": "api", "pod-template-hash": pod_template_hash}
    assert rs.selector_spec == {"matchLabels": {"app": "api", "pod-template-hash": pod_template_hash}}
    assert rs.template["metadata"]["labels"] == {"app": "api", "pod-template-hash": pod_template_hash}
    assert rs.replicas == 3
    assert rs.annotations == {"owner": "team-a", "deployment.kubernetes.io/revision": "1",
                              "deployment.kubernetes.io/desired-replicas": "3",
                              "deployment.kubernetes.io/max-replicas": "4"}
    [ref] = rs.owner_references
    assert (ref.api_version, ref.kind, ref.name, ref.uid, ref.controller) == ("apps/v1", "Deployment", "api", d.uid,
                                                                              True)
    assert rs.uid == deterministic_uid("ReplicaSet", "default", rs.name)
    # the ReplicaSet's pods come in the same pass
    names = [m["metadata"]["name"] for m in changes.create_pods]
    assert names == [f"{rs.name}-k8pzw", f"{rs.name}-fg5kp", f"{rs.name}-4927t"]
    for manifest in changes.create_pods:
        assert manifest["metadata"]["generateName"] == f"{rs.name}-"
        assert manifest["metadata"]["labels"] == {"app": "api", "pod-template-hash": pod_template_hash}
        assert manifest["metadata"]["ownerReferences"][0]["uid"] == rs.uid
        assert manifest["metadata"]["ownerReferences"][0]["kind"] == "ReplicaSet"


def test_hash_is_stable_and_depends_on_template_and_collision_count():
    d = deployment()
    assert compute_hash(d.template, None) == compute_hash(deployment().template, None)
    assert compute_hash(d.template, None) != compute_hash(deployment(image="nginx").template, None)
    assert compute_hash(d.template, None) != compute_hash(d.template, 1)


def test_apply_then_reconcile_again_is_empty():
    d = deployment(2)
    view = ListView(objects=[d])
    view.apply(reconcile(d, view, NameGenerator(2), NOW))
    assert len(view.objects("ReplicaSet", "default")) == 1
    assert len(view.pods("default")) == 2
    assert reconcile(d, view, NameGenerator(2), NOW).is_empty()
    [rs] = view.objects("ReplicaSet", "default")
    assert reconcile(rs, view, NameGenerator(2), NOW).is_empty()


def test_scaling_updates_the_replica_set_and_its_pods():
    view = ListView()
    view.apply(reconcile(deployment(2), view, NameGenerator(2), NOW))
    changes = reconcile(deployment(4), view, NameGenerator(3), NOW)
    assert not changes.create_objects
    [rs] = changes.update_objects
    assert rs.replicas == 4 and rs.annotations["deployment.kubernetes.io/desired-replicas"] == "4"
    assert len(changes.create_pods) == 2
    view.apply(changes)
    changes = reconcile(deployment(1), view, NameGenerator(3), NOW)
    assert [o.replicas for o in changes.update_objects] == [1]
    assert len(changes.delete_pods) == 3


def test_template_change_creates_new_replica_set_and_scales_old_to_zero():
    view = ListView()
    view.apply(reconcile(deployment(2), view, NameGenerator(2), NOW))
    [old_rs] = view.objects("ReplicaSet", "default")
    old_pods = {p.name for p in view.pods("default")}
    changes = reconcile(deployment(2, image="nginx"), view, NameGenerator(4), NOW)
    [new_rs] = changes.create_objects
    assert new_rs.name != old_rs.name
    assert new_rs.annotations["deployment.kubernetes.io/revision"] == "2"
    assert [(o.name, o.replicas) for o in changes.update_objects] == [(old_rs.name, 0)]
    assert {p.name for p in changes.delete_pods} == old_pods
    assert all(m["metadata"]["name"].startswith(new_rs.name + "-") for m in changes.create_pods)
    assert len(changes.create_pods) == 2
    view.apply(changes)
    assert reconcile(deployment(2, image="nginx"), view, NameGenerator(4), NOW).is_empty()


def test_existing_replica_set_found_ignoring_hash_label():
    d = deployment(2)
    first = reconcile(d, ListView(), NameGenerator(0), NOW).create_objects[0]
    assert equal_ignore_hash(first.template, d.template)
    renamed = workload("ReplicaSet", "api-custom", {"replicas": 2, "selector": first.selector_spec,
                                                    "template": first.template},
                       labels=dict(first.labels), ownerReferences=[{"apiVersion": "apps/v1", "kind": "Deployment",
                                                                   "name": "api", "uid": d.uid, "controller": True}])
    changes = reconcile(d, ListView(objects=[renamed]), NameGenerator(0), NOW)
    assert not changes.create_objects and not changes.update_objects
    assert all(m["metadata"]["generateName"] == "api-custom-" for m in changes.create_pods)


def test_orphan_replica_set_adopted():
    d = deployment(1)
    orphan = workload("ReplicaSet", "api-x", {"replicas": 1, "selector": {"matchLabels": {"app": "api"}},
                                             "template": template({"app": "api"})}, labels={"app": "api"})
    changes = reconcile(d, ListView(objects=[orphan]), NameGenerator(0), NOW)
    adopted = [o for o in changes.update_objects if o.name == "api-x"]
    assert adopted and adopted[0].owner_references[-1].uid == d.uid


def test_name_collision_bumps_collision_count():
    d = deployment(1)
    taken = f"api-{compute_hash(d.template, None)}"
    squatter = workload("ReplicaSet", taken, {"replicas": 0, "selector": {"matchLabels": {"x": "y"}},
                                              "template": template({"x": "y"})})
    changes = reconcile(d, ListView(objects=[squatter]), NameGenerator(0), NOW)
    [rs] = changes.create_objects
    assert rs.name == f"api-{compute_hash(d.template, 1)}"
    [updated] = [o for o in changes.update_objects if o.KIND == "Deployment"]
    assert updated.collision_count == 1


def test_paused_or_selecting_all_does_nothing():
    assert reconcile(deployment(2, paused=True), ListView(), NameGenerator(0), NOW).is_empty()
    d = workload("Deployment", "api", {"selector": {}, "template": template({"app": "api"})})
    assert reconcile(d, ListView(), NameGenerator(0), NOW).is_empty()


def test_old_replica_set_pods_deleted_even_if_already_scaled_to_zero():
    d = deployment(1)
    old = workload("ReplicaSet", "api-old", {"replicas": 0, "selector": {"matchLabels": {"app": "api", "v": "1"}},
                                            "template": template({"app": "api", "v": "1"})},
                   labels={"app": "api", "v": "1"},
                   ownerReferences=[{"apiVersion": "apps/v1", "kind": "Deployment", "name": "api", "uid": d.uid,
                                     "controller": True}])
    leftover = owned_pod("api-old-1", old, {"app": "api", "v": "1"}, phase="Running")
    changes = reconcile(d, ListView([leftover], objects=[old]), NameGenerator(0), NOW)
    assert [p.name for p in changes.delete_pods] == ["api-old-1"]
    assert len(changes.create_objects) == 1 and len(changes.create_pods) == 1


def test_adopted_and_scaled_replica_set_reported_once():
    d = deployment(3)
    orphan = workload("ReplicaSet", "api-x", {"replicas": 1, "selector": {"matchLabels": {"app": "api"}},
                                             "template": template({"app": "api"})}, labels={"app": "api"})
    changes = reconcile(d, ListView(objects=[orphan]), NameGenerator(0), NOW)
    [updated] = changes.update_objects
    assert updated.replicas == 3 and updated.owner_references[-1].uid == d.uid
    assert len(changes.create_pods) == 3
