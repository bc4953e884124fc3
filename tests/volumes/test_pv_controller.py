"""The PV controller's part (fastsched.controller.persistentvolume): claims that do not wait for a
consumer are bound to static volumes, or provisioned, as soon as they can be."""
from __future__ import annotations

from fastsched import Scheduler
from fastsched.sim.storage import ZONE, pod_with_claims, pv_manifest, pvc_manifest, storage_class_manifest
from fastsched.testing import make_node


def _claim(sched, name):
    return sched.get_object("PersistentVolumeClaim", name)


def _volume(sched, name):
    return sched.get_object("PersistentVolume", name)


def test_a_classless_claim_binds_to_the_smallest_matching_volume_whichever_comes_first():
    sched = Scheduler(seed=1)
    sched.add([pvc_manifest("data", storage_class="", request="5Gi")])
    assert _claim(sched, "data").phase == "Pending"  # nothing to bind to yet
    sched.add([pv_manifest("big", storage_class="", capacity="50Gi"),
               pv_manifest("small", storage_class="", capacity="8Gi"),
               pv_manifest("too-small", storage_class="", capacity="1Gi"),
               pv_manifest("other-class", storage_class="fast", capacity="6Gi")])
    claim, pv = _claim(sched, "data"), _volume(sched, "small")
    assert (claim.volume_name, claim.phase) == ("small", "Bound")
    assert pv.phase == "Bound" and pv.claim_ref.name == "data" and pv.claim_ref.uid == claim.uid
    assert claim.annotations["pv.kubernetes.io/bind-completed"] == "yes"
    assert _volume(sched, "big").phase == "Available"


def test_claims_with_a_selector_or_a_volume_name_get_that_volume():
    sched = Scheduler(seed=1)
    sched.add([pv_manifest("a", storage_class="", capacity="10Gi", labels={"tier": "gold"}),
               pv_manifest("b", storage_class="", capacity="5Gi"),
               pv_manifest("c", storage_class="", capacity="5Gi")])
    gold = pvc_manifest("gold", storage_class="", request="1Gi")
    gold["spec"]["selector"] = {"matchLabels": {"tier": "gold"}}
    named = pvc_manifest("named", storage_class="", request="1Gi")
    named["spec"]["volumeName"] = "c"
    sched.add([gold, named])
    assert _claim(sched, "gold").volume_name == "a"
    assert _claim(sched, "named").volume_name == "c" and _volume(sched, "c").claim_ref.name == "named"
    assert _volume(sched, "b").phase == "Available"


def test_an_immediate_class_with_a_provisioner_provisions_and_others_wait():
    sched = Scheduler(seed=1)
    sched.add([storage_class_manifest("std", provisioner="csi.example.com", binding_mode="Immediate",
                                      allowed_topologies={ZONE: ["zone-b"]}),
               storage_class_manifest("late", provisioner="csi.example.com"),  # WaitForFirstConsumer
               pvc_manifest("now", storage_class="std", request="2Gi"),
               pvc_manifest("later", storage_class="late", request="2Gi"),
               pvc_manifest("orphan", storage_class="missing", request="2Gi")])
    now = _claim(sched, "now")
    pv = _volume(sched, now.volume_name)
    assert now.phase == "Bound" and pv.phase == "Bound" and pv.claim_ref.uid == now.uid
    assert pv.node_affinity is not None  # the class's allowed topology
    assert [(r.key, tuple(r.values)) for r in pv.node_affinity.terms[0].match_expressions] == [(ZONE, ("zone-b",))]
    assert _claim(sched, "later").phase == "Pending"   # VolumeBinding's, when a pod is scheduled
    assert _claim(sched, "orphan").phase == "Pending"  # its class does not exist


def test_a_pod_waiting_for_an_immediate_claim_schedules_once_a_volume_appears():
    sched = Scheduler(seed=1)
    sched.add_node(make_node("n1"))
    sched.add([pvc_manifest("data", storage_class="", request="1Gi"), pod_with_claims("db", ["data"])])
    (first,) = sched.run()
    assert first.status == "Unschedulable" and "pod has unbound immediate PersistentVolumeClaims" in first.message
    sched.add([pv_manifest("pv-1", storage_class="", capacity="1Gi")])
    (second,) = sched.run()
    assert (second.status, second.node_name) == ("Scheduled", "n1")
    assert _claim(sched, "data").volume_name == "pv-1"
