"""The DefaultStorageClass admission plugin, the PV controller's retroactive default class and its
reclaiming of volumes, and the garbage collector's deletion of the claims a pod owns."""
from __future__ import annotations

import pytest

from fastsched import Scheduler
from fastsched.controller.persistentvolume import ANN_DEFAULT_CLASS, default_storage_class
from fastsched.api.load import load_objects
from fastsched.sim.storage import pod_with_claims, pv_manifest, pvc_manifest, storage_class_manifest
from fastsched.testing import make_node

DEFAULT = {ANN_DEFAULT_CLASS: "true"}


def _class(name, *, default=False, created=None, binding_mode="Immediate", beta=False, provisioner="csi.example.com"):
    m = storage_class_manifest(name, binding_mode=binding_mode, provisioner=provisioner)
    if default:
        key = "storageclass.beta.kubernetes.io/is-default-class" if beta else ANN_DEFAULT_CLASS
        m["metadata"]["annotations"] = {key: "true"}
    if created is not None:
        m["metadata"]["creationTimestamp"] = created
    return m


def _claim(sched, name, namespace="default"):
    return sched.get_object("PersistentVolumeClaim", name, namespace)


def _raw_claim(name, **kwargs):
    """A claim whose spec.storageClassName is absent (nil), unlike pvc_manifest(storage_class="")."""
    return pvc_manifest(name, storage_class=None, **kwargs)


# -- admission ---------------------------------------------------------------------------------------
def test_a_claim_without_a_class_gets_the_default_class_on_creation():
    sched = Scheduler(seed=0)
    sched.add([_class("standard", default=True, binding_mode="WaitForFirstConsumer"), _class("fast")])
    sched.add([_raw_claim("data")])
    claim = _claim(sched, "data")
    assert claim.storage_class_name == "standard"
    assert sched.objects("PersistentVolumeClaim")[0]["spec"]["storageClassName"] == "standard"
    assert claim.phase == "Pending"  # WaitForFirstConsumer: left for VolumeBinding


@pytest.mark.parametrize("claim", [
    pvc_manifest("empty", storage_class=""),                                   # "" is a class: no class
    pvc_manifest("named", storage_class="fast"),
    pvc_manifest("beta", storage_class=None, annotations={"volume.beta.kubernetes.io/storage-class": "fast"}),
], ids=["empty-string", "named", "beta-annotation"])
def test_a_claim_that_has_a_class_keeps_it(claim):
    sched = Scheduler(seed=0)
    sched.add([_class("standard", default=True, binding_mode="WaitForFirstConsumer"),
               _class("fast", binding_mode="WaitForFirstConsumer")])
    sched.add([claim])
    got = _claim(sched, claim["metadata"]["name"])
    assert got.storage_class_name == claim["spec"].get("storageClassName")


def test_a_bound_claim_from_a_dump_keeps_its_missing_class():
    sched = Scheduler(seed=0)
    pv = pv_manifest("old", storage_class="", capacity="1Gi", claim=("default", "legacy"), phase="Bound")
    sched.add([_class("standard", default=True), pv,
               _raw_claim("legacy", volume_name="old", bound=True)])
    claim = _claim(sched, "legacy")
    assert claim.storage_class_name is None and claim.phase == "Bound" and claim.volume_name == "old"


def test_without_a_default_class_the_claim_stays_classless():
    sched = Scheduler(seed=0)
    sched.add([_class("fast"), _raw_claim("data")])
    assert _claim(sched, "data").storage_class_name is None


def test_the_newest_default_class_wins_then_the_first_by_name():
    old = _class("zz-old", default=True, created="2024-01-01T00:00:00Z")
    new = _class("new", default=True, created="2024-06-01T00:00:00Z")
    beta = _class("beta", default=True, created="2024-03-01T00:00:00Z", beta=True)
    not_default = _class("later", created="2025-01-01T00:00:00Z")
    assert default_storage_class(load_objects([old, new, beta, not_default])).name == "new"
    # the same second (the API server stores whole seconds): the first name wins
    a = _class("b-class", default=True, created="2024-06-01T00:00:00Z")
    b = _class("a-class", default=True, created="2024-06-01T00:00:00Z")
    assert default_storage_class(load_objects([a, b, old])).name == "a-class"
    assert default_storage_class(load_objects([not_default])) is None


def test_classes_added_later_are_newer_in_virtual_time():
    sched = Scheduler(seed=0)
    sched.add([_class("first", default=True, binding_mode="WaitForFirstConsumer")])
    sched.clock.advance(10)
    sched.add([_class("second", default=True, binding_mode="WaitForFirstConsumer")])
    sched.add([_raw_claim("data")])
    assert _claim(sched, "data").storage_class_name == "second"


# -- retroactive default class (PV controller) ---------------------------------------------------------
def test_an_unbound_classless_claim_gets_a_default_class_that_appears_later_and_is_provisioned():
    sched = Scheduler(seed=0)
    sched.add([_raw_claim("data", request="5Gi")])
    assert _claim(sched, "data").storage_class_name is None and _claim(sched, "data").phase == "Pending"
    sched.add([_class("standard", default=True)])   # Immediate, with a provisioner
    claim = _claim(sched, "data")
    assert claim.storage_class_name == "standard" and claim.phase == "Bound"
    pv = sched.get_object("PersistentVolume", claim.volume_name, "")
    assert pv.storage_class_name == "standard" and pv.claim_ref.uid == claim.uid


def test_a_classless_claim_that_a_classless_volume_matches_binds_it_and_gets_no_class():
    sched = Scheduler(seed=0)
    sched.add([_class("standard", default=True)])
    # created with the default class by admission ...
    sched.add([_raw_claim("admitted")])
    assert _claim(sched, "admitted").storage_class_name == "standard"
    # ... while a claim that existed before the default class and finds a classless volume binds it
    sched2 = Scheduler(seed=0)
    sched2.add([_raw_claim("data", request="1Gi")])
    sched2.add([pv_manifest("plain", storage_class="", capacity="2Gi"), _class("standard", default=True)])
    claim = _claim(sched2, "data")
    assert claim.storage_class_name is None and claim.volume_name == "plain"


def test_the_retroactive_class_waits_for_the_consumer_when_it_binds_late():
    sched = Scheduler(seed=0)
    sched.add([make_node("n1")])
    sched.add([_raw_claim("data")])
    sched.add([_class("local", default=True, binding_mode="WaitForFirstConsumer")])
    assert _claim(sched, "data").storage_class_name == "local" and _claim(sched, "data").phase == "Pending"
    sched.add([pod_with_claims("web", ["data"])])
    (result,) = sched.run()
    assert result.node_name == "n1" and _claim(sched, "data").phase == "Bound"


# -- reclaiming a deleted claim's volume -------------------------------------------------------------
@pytest.mark.parametrize("policy,source,annotations,expected", [
    ("Retain", None, None, "Released"),
    ("Delete", None, {"pv.kubernetes.io/provisioned-by": "csi.example.com"}, None),   # deleted
    ("Delete", None, None, "Failed"),                  # a static CSI volume: no deleter
    ("Recycle", {"hostPath": {"path": "/data"}}, None, "Available"),
    ("Recycle", None, None, "Failed"),                 # no recycler for CSI volumes
])
def test_a_deleted_claims_volume_is_reclaimed_by_its_policy(policy, source, annotations, expected):
    sched = Scheduler(seed=0)
    pv = pv_manifest("vol", storage_class="", capacity="1Gi", source=source, annotations=annotations)
    pv["spec"]["persistentVolumeReclaimPolicy"] = policy
    sched.add([pv, pvc_manifest("data", storage_class="")])
    assert sched.get_object("PersistentVolume", "vol", "").phase == "Bound"
    sched.delete_object("PersistentVolumeClaim", "data")
    got = sched.get_object("PersistentVolume", "vol", "")
    if expected is None:
        assert got is None
        return
    assert got.phase == expected
    assert (got.claim_ref is None) == (expected == "Available")
    if expected == "Released":  # not bound again, even to a new claim of that name
        sched.add([pvc_manifest("other", storage_class="")])
        assert _claim(sched, "other").phase == "Pending"


# -- the garbage collector: claims owned by a deleted pod ---------------------------------------------
def _ephemeral_pod(name, storage_class="standard"):
    m = pod_with_claims(name)
    m["spec"]["volumes"] = [{"name": "scratch", "ephemeral": {"volumeClaimTemplate": {"spec": {
        "accessModes": ["ReadWriteOnce"], "storageClassName": storage_class,
        "resources": {"requests": {"storage": "1Gi"}}}}}}]
    return m


@pytest.mark.parametrize("reclaim", ["Delete", "Retain"])
def test_deleting_a_pod_deletes_its_ephemeral_claims_and_reclaims_their_volumes(reclaim):
    sched = Scheduler(seed=0)
    cls = _class("standard", binding_mode="WaitForFirstConsumer")
    cls["reclaimPolicy"] = reclaim
    sched.add([make_node("n1"), cls, _ephemeral_pod("job"), pvc_manifest("shared", storage_class="standard")])
    (result,) = sched.run()
    assert result.node_name == "n1"
    claim = _claim(sched, "job-scratch")
    assert claim.phase == "Bound" and claim.owner_references[0].uid == result.pod.uid
    volume = claim.volume_name
    sched.delete_pod(result.pod.uid)
    assert _claim(sched, "job-scratch") is None
    assert _claim(sched, "shared") is not None          # not owned by the pod: kept
    pv = sched.get_object("PersistentVolume", volume, "")
    if reclaim == "Delete":
        assert pv is None
    else:
        assert pv.phase == "Released"


def test_a_claim_owned_by_another_pod_is_not_collected():
    sched = Scheduler(seed=0)
    sched.add([make_node("n1"), _class("standard", binding_mode="WaitForFirstConsumer"),
               _ephemeral_pod("a"), _ephemeral_pod("b")])
    results = {r.pod.name: r for r in sched.run()}
    sched.delete_pod(results["a"].pod.uid)
    assert _claim(sched, "a-scratch") is None and _claim(sched, "b-scratch").phase == "Bound"


def test_claims_made_by_controllers_get_the_default_class_too():
    sched = Scheduler(seed=0)
    sched.add([make_node("n1"), _class("standard", default=True, binding_mode="WaitForFirstConsumer")])
    eph = _ephemeral_pod("job")
    del eph["spec"]["volumes"][0]["ephemeral"]["volumeClaimTemplate"]["spec"]["storageClassName"]
    sts = {"apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": {"name": "db"},
           "spec": {"replicas": 2, "serviceName": "db", "selector": {"matchLabels": {"app": "db"}},
                    "template": {"metadata": {"labels": {"app": "db"}},
                                 "spec": {"containers": [{"name": "c", "image": "img"}]}},
                    "volumeClaimTemplates": [{"metadata": {"name": "data"}, "spec": {
                        "accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}}]}}
    sched.add([eph, sts])
    names = ["job-scratch", "data-db-0", "data-db-1"]
    assert [_claim(sched, n).storage_class_name for n in names] == ["standard"] * 3
    results = sched.run()
    assert all(r.node_name == "n1" for r in results)
    assert all(_claim(sched, n).phase == "Bound" for n in names)
