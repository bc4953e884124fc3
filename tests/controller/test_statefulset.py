"""StatefulSet controller: ordinals, identity, storage, scale down, OrderedReady."""
from __future__ import annotations

import re

from fastsched.api import Pod
from fastsched.api.names import NameGenerator
from fastsched.controller import ControllerOptions, reconcile
from fastsched.controller.statefulset import revision_name

from .helpers import ListView, owned_pod, template, workload

NOW = 1_700_000_000.0
STRICT = ControllerOptions(strict_ordered_ready=True)


def sts(replicas=3, *, start=None, claims=(), policy=None, volumes=None, retention=None):
    tmpl = template({"app": "db"})
    if volumes is not None:
        tmpl["spec"]["volumes"] = volumes
    spec = {"replicas": replicas, "serviceName": "db-headless", "selector": {"matchLabels": {"app": "db"}},
            "template": tmpl}
    if start is not None:
        spec["ordinals"] = {"start": start}
    if claims:
        spec["volumeClaimTemplates"] = list(claims)
    if policy:
        spec["podManagementPolicy"] = policy
    if retention:
        spec["persistentVolumeClaimRetentionPolicy"] = retention
    return workload("StatefulSet", "db", spec)


def claim_template(name, size="1Gi", labels=None):
    meta = {"name": name}
    if labels:
        meta["labels"] = labels
    return {"metadata": meta, "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": size}}}}


def test_defaults():
    s = sts()
    assert (s.pod_management_policy, s.update_strategy_type, s.partition, s.ordinals_start) == (
        "OrderedReady", "RollingUpdate", 0, 0)
    assert (s.pvc_retention_when_deleted, s.pvc_retention_when_scaled) == ("Retain", "Retain")


def test_pods_named_by_ordinal_with_identity_labels():
    s = sts(3)
    changes = reconcile(s, ListView(), NameGenerator(0), NOW)
    revision = revision_name(s)
    assert re.fullmatch(r"db-[456789bcdf]{1,10}", revision)
    assert [m["metadata"]["name"] for m in changes.create_pods] == ["db-0", "db-1", "db-2"]
    for ordinal, manifest in enumerate(changes.create_pods):
        meta = manifest["metadata"]
        assert meta["generateName"] == "db-"
        assert meta["labels"] == {"app": "db", "statefulset.kubernetes.io/pod-name": f"db-{ordinal}",
                                  "apps.kubernetes.io/pod-index": str(ordinal),
                                  "controller-revision-hash": revision}
        assert manifest["spec"]["hostname"] == f"db-{ordinal}"
        assert manifest["spec"]["subdomain"] == "db-headless"
        assert meta["ownerReferences"][0]["kind"] == "StatefulSet"
        assert meta["ownerReferences"][0]["uid"] == s.uid
        Pod.from_manifest(manifest)


def test_ordinals_start_and_existing_pods_skipped():
    s = sts(3, start=5)
    existing = owned_pod("db-6", s, {"app": "db"}, phase="Running", node="n")
    changes = reconcile(s, ListView([existing]), NameGenerator(0), NOW)
    assert [m["metadata"]["name"] for m in changes.create_pods] == ["db-5", "db-7"]
    assert changes.create_pods[1]["metadata"]["labels"]["apps.kubernetes.io/pod-index"] == "7"


def test_volume_claim_templates_become_volumes_and_claims():
    data = claim_template("data", labels={"kind": "disk"})
    logs = claim_template("logs")
    s = sts(2, claims=[data, logs],
            volumes=[{"name": "logs", "emptyDir": {}}, {"name": "cfg", "configMap": {"name": "c"}}])
    changes = reconcile(s, ListView(), NameGenerator(0), NOW)
    volumes = changes.create_pods[1]["spec"]["volumes"]
    assert volumes == [
        {"name": "data", "persistentVolumeClaim": {"claimName": "data-db-1"}},
        {"name": "logs", "persistentVolumeClaim": {"claimName": "logs-db-1"}},
        {"name": "cfg", "configMap": {"name": "c"}},
    ]
    claims = {m["metadata"]["name"]: m for m in changes.create_manifests}
    assert sorted(claims) == ["data-db-0", "data-db-1", "logs-db-0", "logs-db-1"]
    assert claims["data-db-0"]["kind"] == "PersistentVolumeClaim"
    assert claims["data-db-0"]["metadata"]["labels"] == {"kind": "disk", "app": "db"}
    assert claims["logs-db-0"]["metadata"]["labels"] == {"app": "db"}
    assert claims["logs-db-0"]["spec"]["resources"] == {"requests": {"storage": "1Gi"}}
    assert "ownerReferences" not in claims["logs-db-0"]["metadata"]
    Pod.from_manifest(changes.create_pods[0])


def test_existing_claims_not_recreated_and_delete_retention_sets_owner():
    s = sts(1, claims=[claim_template("data")], retention={"whenDeleted": "Delete"})
    changes = reconcile(s, ListView(taken=[("PersistentVolumeClaim", "default", "data-db-0")]), NameGenerator(0), NOW)
    assert changes.create_manifests == []
    assert changes.create_pods[0]["spec"]["volumes"][0]["persistentVolumeClaim"]["claimName"] == "data-db-0"
    changes = reconcile(s, ListView(), NameGenerator(0), NOW)
    assert changes.create_manifests[0]["metadata"]["ownerReferences"] == [
        {"apiVersion": "apps/v1", "kind": "StatefulSet", "name": "db", "uid": s.uid}]


def test_scale_down_deletes_condemned_ordinals():
    s = sts(1, policy="Parallel")
    pods = [owned_pod(f"db-{i}", s, {"app": "db"}, phase="Running", node="n", ready=True) for i in range(3)]
    changes = reconcile(s, ListView(pods), NameGenerator(0), NOW)
    assert [p.name for p in changes.delete_pods] == ["db-2", "db-1"]
    strict = reconcile(s, ListView(pods), NameGenerator(0), NOW, options=STRICT)
    assert [p.name for p in strict.delete_pods] == ["db-2", "db-1"]  # Parallel is not monotonic
    ordered = reconcile(sts(1), ListView([owned_pod(f"db-{i}", s, {"app": "db"}, phase="Running", node="n",
                                                    ready=True) for i in range(3)]), NameGenerator(0), NOW,
                        options=STRICT)
    assert [p.name for p in ordered.delete_pods] == ["db-2"]  # one at a time, highest first


def test_terminal_replica_deleted_not_replaced_in_same_pass():
    s = sts(2)
    pods = [owned_pod("db-0", s, {"app": "db"}, phase="Failed", node="n"),
            owned_pod("db-1", s, {"app": "db"}, phase="Running", node="n")]
    changes = reconcile(s, ListView(pods), NameGenerator(0), NOW)
    assert [p.name for p in changes.delete_pods] == ["db-0"]
    assert changes.create_pods == []


def test_strict_ordered_ready_creates_one_pod_at_a_time():
    s = sts(3)
    view = ListView()
    changes = reconcile(s, view, NameGenerator(0), NOW, options=STRICT)
    assert [m["metadata"]["name"] for m in changes.create_pods] == ["db-0"]
    view.apply(changes)
    assert reconcile(s, view, NameGenerator(0), NOW, options=STRICT).is_empty()  # db-0 is not Running and Ready
    view.pod_list = [owned_pod("db-0", s, {"app": "db"}, phase="Running", node="n", ready=True)]
    changes = reconcile(s, view, NameGenerator(0), NOW, options=STRICT)
    assert [m["metadata"]["name"] for m in changes.create_pods] == ["db-1"]


def test_default_mode_creates_all_ordered_ready_pods():
    assert len(reconcile(sts(4), ListView(), NameGenerator(0), NOW).create_pods) == 4


def test_foreign_pod_with_the_name_blocks_creation():
    s = sts(2)
    squatter = owned_pod("db-0", None, {"app": "other"}, phase="Running")
    changes = reconcile(s, ListView([squatter]), NameGenerator(0), NOW)
    assert changes.create_pods == []


def test_orphan_member_adopted_non_member_ignored():
    s = sts(2)
    orphan = owned_pod("db-1", None, {"app": "db"}, phase="Running", node="n")
    stranger = owned_pod("cache-0", None, {"app": "db"}, phase="Running", node="n")
    changes = reconcile(s, ListView([orphan, stranger]), NameGenerator(0), NOW)
    assert [p.name for p in changes.adopt_pods] == ["db-1"]
    assert [m["metadata"]["name"] for m in changes.create_pods] == ["db-0"]


def test_idempotent_after_apply():
    s = sts(3, claims=[claim_template("data")])
    view = ListView(objects=[s])
    view.apply(reconcile(s, view, NameGenerator(0), NOW))
    assert reconcile(s, view, NameGenerator(0), NOW).is_empty()
