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


def test_a_claim_written_bound_without_bind_completed_is_bound_by_the_controller():
    """syncClaim keys off pv.kubernetes.io/bind-completed, not status.phase: a claim dumped as
    Bound without the annotation goes through syncUnboundClaim, whose VolumeName branch completes
    the binding (the volume claimed by it, or free), whatever the class's binding mode; until
    then VolumeBinding counts it as unbound (issue 25)."""
    sched = Scheduler(seed=1)
    sched.add_node(make_node("n1"))
    sched.add([storage_class_manifest("wait", binding_mode="WaitForFirstConsumer"),
               pv_manifest("pv-claimed", storage_class="", capacity="1Gi", claim=("default", "data"),
                           phase="Bound"),
               pv_manifest("pv-free", storage_class="wait", capacity="1Gi"),
               pvc_manifest("data", storage_class="", volume_name="pv-claimed", phase="Bound"),
               pvc_manifest("logs", storage_class="wait", volume_name="pv-free", phase="Bound"),
               pod_with_claims("db", ["data", "logs"])])
    for name, volume in (("data", "pv-claimed"), ("logs", "pv-free")):
        claim, pv = _claim(sched, name), _volume(sched, volume)
        assert claim.annotations["pv.kubernetes.io/bind-completed"] == "yes"
        assert (claim.volume_name, claim.phase) == (volume, "Bound")
        assert pv.phase == "Bound" and pv.claim_ref.name == name and pv.claim_ref.uid == claim.uid
    (result,) = sched.run()
    assert (result.status, result.node_name) == ("Scheduled", "n1")


def test_a_claim_bound_to_a_volume_of_another_claim_stays_unbound():
    sched = Scheduler(seed=1)
    sched.add([pv_manifest("pv-1", storage_class="", capacity="1Gi", claim=("default", "other"), phase="Bound"),
               pvc_manifest("data", storage_class="", volume_name="pv-1", phase="Bound")])
    claim = _claim(sched, "data")
    assert "pv.kubernetes.io/bind-completed" not in claim.annotations
    assert _volume(sched, "pv-1").claim_ref.name == "other"
