"""ReplicaSet and ReplicationController controllers."""
from __future__ import annotations

import re

from fastsched.api import Pod
from fastsched.api.names import NameGenerator
from fastsched.controller import ControllerOptions, reconcile
from fastsched.controller.replicaset import BURST_REPLICAS

from .helpers import ListView, owned_pod, template, workload

NOW = 1_700_000_000.0
SELECTOR = {"matchLabels": {"app": "web"}}


def rs_obj(replicas=3, name="web", labels=None, **spec):
    return workload("ReplicaSet", name, {"replicas": replicas, "selector": SELECTOR,
                                         "template": template(labels or {"app": "web"}, **spec)})


def test_creates_replicas_with_generated_names_labels_and_controller_ref():
    rs = rs_obj(3, labels={"app": "web", "tier": "fe"})
    changes = reconcile(rs, ListView(), NameGenerator(1), NOW)
    assert [m["metadata"]["name"] for m in changes.create_pods] == ["web-k8pzw", "web-fg5kp", "web-4927t"]
    for manifest in changes.create_pods:
        meta = manifest["metadata"]
        assert meta["generateName"] == "web-"
        assert meta["namespace"] == "default"
        assert meta["labels"] == {"app": "web", "tier": "fe"}
        assert meta["ownerReferences"] == [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "web",
                                            "uid": rs.uid, "controller": True, "blockOwnerDeletion": True}]
        assert "uid" not in meta
        assert manifest["spec"]["containers"][0]["name"] == "c"
        Pod.from_manifest(manifest)  # a valid pod
    assert not changes.delete_pods


def test_same_seed_same_names_and_new_seed_other_names():
    rs = rs_obj(4)
    first = [m["metadata"]["name"] for m in reconcile(rs, ListView(), NameGenerator(7), NOW).create_pods]
    again = [m["metadata"]["name"] for m in reconcile(rs, ListView(), NameGenerator(7), NOW).create_pods]
    other = [m["metadata"]["name"] for m in reconcile(rs, ListView(), NameGenerator(8), NOW).create_pods]
    assert first == again != other
    assert all(re.fullmatch(r"web-[bcdfghjklmnpqrstvwxz2456789]{5}", name) for name in first)


def test_annotations_and_finalizers_copied_and_template_not_mutated():
    tmpl = template({"app": "web"}, annotations={"a": "1"})
    tmpl["metadata"]["finalizers"] = ["example.com/f"]
    rs = workload("ReplicaSet", "web", {"replicas": 1, "selector": SELECTOR, "template": tmpl})
    manifest = reconcile(rs, ListView(), NameGenerator(0), NOW).create_pods[0]
    assert manifest["metadata"]["annotations"] == {"a": "1"}
    assert manifest["metadata"]["finalizers"] == ["example.com/f"]
    manifest["spec"]["containers"].append({"name": "x"})
    assert len(rs.template["spec"]["containers"]) == 1


def test_generated_names_skip_taken_ones():
    rs = rs_obj(1)
    view = ListView(taken=[("Pod", "default", "web-k8pzw")])
    assert reconcile(rs, view, NameGenerator(1), NOW).create_pods[0]["metadata"]["name"] == "web-fg5kp"


def test_counts_owned_active_pods_only():
    rs = rs_obj(3)
    labels = {"app": "web"}
    pods = [
        owned_pod("web-a", rs, labels, phase="Running", node="n1"),
        owned_pod("web-b", rs, labels, phase="Succeeded", node="n1"),
        owned_pod("web-c", rs, labels, phase="Failed", node="n1"),
        owned_pod("web-d", rs, labels, phase="Running", node="n1", deleting=True),
    ]
    changes = reconcile(rs, ListView(pods), NameGenerator(0), NOW)
    assert len(changes.create_pods) == 2
    assert not changes.delete_pods


def test_adopts_matching_orphans_and_ignores_pods_of_other_controllers():
    rs = rs_obj(2)
    other = rs_obj(1, name="other")
    orphan = owned_pod("loose", None, {"app": "web"}, phase="Running")
    foreign = owned_pod("foreign", other, {"app": "web"}, phase="Running")
    non_controller = owned_pod("ref", rs, {"app": "web"}, phase="Running", controller=False)
    changes = reconcile(rs, ListView([orphan, foreign, non_controller]), NameGenerator(0), NOW)
    adopted = {pod.name: pod for pod in changes.adopt_pods}
    assert set(adopted) == {"loose", "ref"}  # a non-controller reference is still an orphan
    ref = adopted["loose"].owner_references[-1]
    assert (ref.kind, ref.name, ref.uid, ref.controller) == ("ReplicaSet", "web", rs.uid, True)
    assert adopted["loose"].manifest["metadata"]["ownerReferences"][-1]["blockOwnerDeletion"] is True
    assert not changes.create_pods  # the two adopted pods count


def test_orphan_being_deleted_or_not_matching_is_not_adopted():
    rs = rs_obj(1)
    pods = [owned_pod("gone", None, {"app": "web"}, deleting=True), owned_pod("db", None, {"app": "db"})]
    changes = reconcile(rs, ListView(pods), NameGenerator(0), NOW)
    assert not changes.adopt_pods
    assert len(changes.create_pods) == 1


def test_owned_pod_that_no_longer_matches_is_released():
    rs = rs_obj(1)
    pod = owned_pod("web-x", rs, {"app": "other"}, phase="Running")
    changes = reconcile(rs, ListView([pod]), NameGenerator(0), NOW)
    assert [p.name for p in changes.release_pods] == ["web-x"]
    assert changes.release_pods[0].owner_references == ()
    assert len(changes.create_pods) == 1


def test_scale_down_prefers_unassigned_then_pending_then_not_ready():
    rs = rs_obj(2)
    labels = {"app": "web"}
    pods = [
        owned_pod("ready", rs, labels, phase="Running", node="n1", ready=True),
        owned_pod("unassigned", rs, labels, phase="Pending"),
        owned_pod("pending", rs, labels, phase="Pending", node="n1"),
        owned_pod("not-ready", rs, labels, phase="Running", node="n2"),
    ]
    changes = reconcile(rs, ListView(pods), NameGenerator(0), NOW)
    assert [p.name for p in changes.delete_pods] == ["unassigned", "pending"]


def test_scale_down_deletion_cost_then_doubled_up_then_newer():
    rs = workload("ReplicaSet", "web", {"replicas": 2, "selector": SELECTOR, "template": template({"app": "web"})},
                  ownerReferences=[{"apiVersion": "apps/v1", "kind": "Deployment", "name": "d", "uid": "d-uid",
                                    "controller": True}])
    labels = {"app": "web"}
    base = dict(phase="Running", ready=True)
    pods = [
        owned_pod("cheap", rs, labels, node="n1", annotations={"controller.kubernetes.io/pod-deletion-cost": "-5"},
                  created="2023-01-01T00:00:00Z", **base),
        owned_pod("alone", rs, labels, node="n2", created="2023-06-01T00:00:00Z", **base),
        owned_pod("crowded", rs, labels, node="n3", created="2023-01-01T00:00:00Z", **base),
        owned_pod("crowded-2", rs, labels, node="n3", created="2023-01-01T00:00:00Z", **base),
    ]
    changes = reconcile(rs, ListView(pods, objects=[rs]), NameGenerator(0), NOW)
    deleted = [p.name for p in changes.delete_pods]
    assert deleted[0] == "cheap"
    assert deleted[1] in ("crowded", "crowded-2")  # two active pods of the same controller on n3


def test_scale_to_zero_deletes_every_active_pod():
    rs = rs_obj(0)
    pods = [owned_pod(f"web-{i}", rs, {"app": "web"}, phase="Running") for i in range(3)]
    changes = reconcile(rs, ListView(pods), NameGenerator(0), NOW)
    assert sorted(p.name for p in changes.delete_pods) == ["web-0", "web-1", "web-2"]


def test_reconcile_is_idempotent_once_applied():
    rs = rs_obj(5)
    view = ListView(objects=[rs])
    view.apply(reconcile(rs, view, NameGenerator(3), NOW))
    assert len(view.pods("default")) == 5
    assert reconcile(rs, view, NameGenerator(3), NOW).is_empty()


def test_replica_set_being_deleted_does_nothing():
    rs = workload("ReplicaSet", "web", {"replicas": 2, "selector": SELECTOR, "template": template({"app": "web"})},
                  deletionTimestamp="2024-01-01T00:00:00Z")
    assert reconcile(rs, ListView(), NameGenerator(0), NOW).is_empty()


def test_template_without_labels_creates_nothing():
    rs = workload("ReplicaSet", "web", {"replicas": 2, "selector": SELECTOR, "template": template(None)})
    assert reconcile(rs, ListView(), NameGenerator(0), NOW).create_pods == []


def test_long_name_prefix_and_generate_name_cut():
    name = "a" * 70
    rs = workload("ReplicaSet", name, {"replicas": 1, "selector": SELECTOR, "template": template({"app": "web"})})
    meta = reconcile(rs, ListView(), NameGenerator(0), NOW).create_pods[0]["metadata"]
    assert meta["generateName"] == name + "-"
    assert meta["name"].startswith("a" * 58) and len(meta["name"]) == 63


def test_per_sync_limit():
    rs = rs_obj(BURST_REPLICAS + 3)
    unlimited = reconcile(rs, ListView(), NameGenerator(0), NOW)
    limited = reconcile(rs, ListView(), NameGenerator(0), NOW, options=ControllerOptions(per_sync_limits=True))
    assert len(unlimited.create_pods) == BURST_REPLICAS + 3
    assert len(limited.create_pods) == BURST_REPLICAS


def test_replication_controller_defaults_selector_and_uses_v1_owner():
    rc = workload("ReplicationController", "legacy", {"replicas": 2, "template": template({"app": "old"})})
    assert rc.selector == {"app": "old"}
    assert rc.labels == {"app": "old"}
    changes = reconcile(rc, ListView(), NameGenerator(1), NOW)
    assert [m["metadata"]["name"] for m in changes.create_pods] == ["legacy-k8pzw", "legacy-fg5kp"]
    ref = changes.create_pods[0]["metadata"]["ownerReferences"][0]
    assert (ref["apiVersion"], ref["kind"], ref["name"], ref["uid"]) == ("v1", "ReplicationController", "legacy",
                                                                        rc.uid)


def test_replication_controller_default_replicas_and_scale_down():
    rc = workload("ReplicationController", "legacy", {"selector": {"app": "old"}, "template": template({"app": "old"})})
    assert rc.replicas == 1
    pods = [owned_pod("legacy-1", rc, {"app": "old"}, phase="Running", node="n"),
            owned_pod("legacy-2", rc, {"app": "old"}, phase="Pending")]
    changes = reconcile(rc, ListView(pods), NameGenerator(0), NOW)
    assert [p.name for p in changes.delete_pods] == ["legacy-2"]
