"""VolumeZone: upstream's ``volume_zone_test.go`` tables (TestSingleZone, TestWithBinding) and the
vectorized Filter against the per-node one."""
from __future__ import annotations

import pytest

from fastsched.api.load import load_objects
from fastsched.api.storage import StorageClass
from fastsched.framework.cycle_state import CycleState
from fastsched.framework.interface import QueueingHint
from fastsched.framework.status import Code, Status
from fastsched.plugins.volumezone import ERR_REASON_CONFLICT, VolumeZone
from fastsched.snapshot import build_snapshot
from fastsched.plugins.helper.tests.volumes import (Handle, node, pod, pv_manifest, pvc_manifest,
                                                   storage_class_manifest)
from fastsched.sim.storage import pod_with_claims

BZ, BR = "failure-domain.beta.kubernetes.io/zone", "failure-domain.beta.kubernetes.io/region"
GZ, GR = "topology.kubernetes.io/zone", "topology.kubernetes.io/region"
CONFLICT = Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_REASON_CONFLICT)
PVS = [pv_manifest("Vol_1", labels={BZ: "us-west1-a"}),
       pv_manifest("Vol_2", labels={BR: "us-west1-b", "uselessLabel": "none"}),
       pv_manifest("Vol_3", labels={BR: "us-west1-c"}),
       pv_manifest("Vol_Stable_1", labels={GZ: "us-west1-a"}),
       pv_manifest("Vol_Stable_2", labels={GR: "us-west1-b", "uselessLabel": "none"}),
       pv_manifest("Vol_Stable_3", labels={GZ: "us-west1-a", GR: "us-west1-b"})]
PVCS = [pvc_manifest("PVC_1", volume_name="Vol_1"), pvc_manifest("PVC_2", volume_name="Vol_2"),
        pvc_manifest("PVC_3", volume_name="Vol_3"), pvc_manifest("PVC_4", volume_name="Vol_not_exist"),
        pvc_manifest("PVC_Stable_1", volume_name="Vol_Stable_1"),
        pvc_manifest("PVC_Stable_2", volume_name="Vol_Stable_2"),
        pvc_manifest("PVC_Stable_3", volume_name="Vol_Stable_3")]

SINGLE_ZONE = [
    ("pod without volume", [], {BZ: "us-west1-a"}, None),
    ("node without labels", ["PVC_1"], {}, None),
    ("beta zone label matched", ["PVC_1"], {BZ: "us-west1-a", "uselessLabel": "none"}, None),
    ("beta region label matched", ["PVC_2"], {BR: "us-west1-b", "uselessLabel": "none"}, None),
    ("beta region label doesn't match", ["PVC_2"], {BR: "no_us-west1-b", "uselessLabel": "none"}, CONFLICT),
    ("beta zone label doesn't match", ["PVC_1"], {BZ: "no_us-west1-a", "uselessLabel": "none"}, CONFLICT),
    ("zone label matched", ["PVC_Stable_1"], {GZ: "us-west1-a", "uselessLabel": "none"}, None),
    ("region label matched", ["PVC_Stable_2"], {GR: "us-west1-b", "uselessLabel": "none"}, None),
    ("region label doesn't match", ["PVC_Stable_2"], {GR: "no_us-west1-b", "uselessLabel": "none"}, CONFLICT),
    ("zone label doesn't match", ["PVC_Stable_1"], {GZ: "no_us-west1-a", "uselessLabel": "none"}, CONFLICT),
    ("pv with zone and region, node with only zone", ["PVC_Stable_3"], {GZ: "us-west1-a"}, CONFLICT),
    ("pv with zone,node with beta zone", ["PVC_Stable_1"], {BZ: "us-west1-a"}, CONFLICT),
    ("pv with beta label,node with ga label, matched", ["PVC_1"], {GZ: "us-west1-a"}, None),
    ("pv with beta label,node with ga label, don't match", ["PVC_1"], {GZ: "us-west1-b"}, CONFLICT),
]


def _same(a, b) -> bool:
    if a is None or b is None:
        return a is None and b is None
    return a.code() == b.code() and a.reasons() == b.reasons()


def _run(objects, claims, labels):
    pl = VolumeZone(Handle(objects))
    p = pod("p", claims)
    snapshot = build_snapshot([node("host1", labels)])
    batch = snapshot.batch()
    state = CycleState()
    _, pre = pl.pre_filter(state, p, batch)
    if pre is not None and pre.code() != Code.SUCCESS:
        return pl, state, p, batch, pre
    return pl, state, p, batch, None


@pytest.mark.parametrize("name,claims,labels,want", SINGLE_ZONE, ids=[c[0] for c in SINGLE_ZONE])
def test_single_zone(name, claims, labels, want):
    pl, state, p, batch, pre = _run(PVS + PVCS, claims, labels)
    if pre is not None:
        assert pre.code() == Code.SKIP and want is None
        return
    assert _same(pl.filter(state, p, batch[0]), want)
    v = pl.filter_vectorized(state, p, batch)
    assert _same(v if isinstance(v, Status) else v.status(0), want)
    # Filter without the PreFilter state recomputes the topologies
    assert _same(pl.filter(CycleState(), p, batch[0]), want)


def test_multi_zone_value():
    objects = [pv_manifest("Vol_Multi", labels={GZ: "us-west1-a__us-west1-b"}), pvc_manifest("c", volume_name="Vol_Multi")]
    for zone, want in (("us-west1-a", None), ("us-west1-b", None), ("us-west1-c", CONFLICT)):
        pl, state, p, batch, pre = _run(objects, ["c"], {GZ: zone})
        assert _same(pl.filter(state, p, batch[0]), want)


WITH_BINDING = [
    ("label zone failure domain matched", ["PVC_1"], None, None),
    ("unbound volume empty storage class", ["PVC_EmptySC"],
     "PersistentVolumeClaim had no pv name and storageClass name", None),
    ("unbound volume no storage class", ["PVC_NoSC"], "PersistentVolumeClaim had no pv name and storageClass name", None),
    ("unbound volume immediate binding mode", ["PVC_ImmediateSC"],
     'VolumeBindingMode not set for StorageClass "Class_Immediate"', None),
    ("unbound volume wait binding mode", ["PVC_WaitSC"], "skip", None),
    ("unbound volume non-existing storage class", ["PVC_NonExistentSC"],
     'storageclass.storage.k8s.io "Class_0" not found', None),
    ("claim does not exist", ["PVC_missing"], 'persistentvolumeclaim "PVC_missing" not found', None),
    ("bound to a missing volume", ["PVC_4"], 'persistentvolume "Vol_not_exist" not found', None),
]


@pytest.mark.parametrize("name,claims,pre_want,want", WITH_BINDING, ids=[c[0] for c in WITH_BINDING])
def test_with_binding(name, claims, pre_want, want):
    immediate = StorageClass(name="Class_Immediate", provisioner="p", volume_binding_mode=None)
    objects = PVS + PVCS + [
        storage_class_manifest("Class_Wait"), immediate,
        pvc_manifest("PVC_NoSC"), pvc_manifest("PVC_EmptySC", storage_class=""),
        pvc_manifest("PVC_WaitSC", storage_class="Class_Wait"),
        pvc_manifest("PVC_ImmediateSC", storage_class="Class_Immediate"),
        pvc_manifest("PVC_NonExistentSC", storage_class="Class_0")]
    pl, state, p, batch, pre = _run(objects, claims, {BZ: "us-west1-a", "uselessLabel": "none"})
    if pre_want is None:
        assert pre is None
        assert _same(pl.filter(state, p, batch[0]), want)
    elif pre_want == "skip":
        assert pre.code() == Code.SKIP
    else:
        assert _same(pre, Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, pre_want))


def test_vectorized_agrees_on_many_nodes():
    labels = [{}, {GZ: "us-west1-a"}, {GZ: "us-west1-b"}, {BZ: "us-west1-a"}, {GR: "us-west1-b"},
              {GZ: "us-west1-a", GR: "us-west1-b"}, {BR: "us-west1-b"}, {"other": "x"}]
    nodes = [node(f"n{i}", lab) for i, lab in enumerate(labels)]
    snapshot = build_snapshot(nodes)
    batch = snapshot.batch()
    for claims in (["PVC_1"], ["PVC_2"], ["PVC_Stable_3"], ["PVC_1", "PVC_Stable_2"]):
        pl = VolumeZone(Handle(PVS + PVCS))
        p = pod("p", claims)
        state = CycleState()
        pl.pre_filter(state, p, batch)
        v = pl.filter_vectorized(state, p, batch)
        for i in range(len(batch)):
            assert _same(v.status(i), pl.filter(state, p, batch[i])), (claims, labels[i])


# -- queueing hints ---------------------------------------------------------------------------------
def one(manifest: dict):
    """The object of ``manifest``, read without validation (upstream's names such as ``pod_1``)."""
    return load_objects([manifest], validate=False)[0]


def _pod(name: str, claims: tuple[str, ...] = ()):
    return one(pod_with_claims(name, claims))


def _pvc(name: str, namespace: str = "default", volume_name: str = ""):
    return one(pvc_manifest(name, namespace=namespace, volume_name=volume_name))


def _pv(name: str, labels: dict | None = None):
    return one(pv_manifest(name, labels=labels))


def _sc(name: str, binding_mode: str | None = None):
    manifest = {"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass", "metadata": {"name": name},
                "provisioner": "csi.example.com"}
    if binding_mode is not None:
        manifest["volumeBindingMode"] = binding_mode
    return one(manifest)


# Upstream TestIsSchedulableAfterPersistentVolumeClaimAdded (v1.37.2; isSchedulableAfterPersistentVolumeClaimChange):
# (name, pod, old, new, hint, error). createPodWithVolume(pod, pvc) is a pod in "default" mounting the claim.
PVC_CHANGE_ROWS = [
    ("error-wrong-new-object", _pod("pod_1", ("PVC_1",)), None, "not-a-pvc", QueueingHint.QUEUE, True),
    ("pvc-was-added-but-pod-refers-no-pvc", _pod("pod_1"), None, _pvc("PVC_1", volume_name="Vol_1"),
     QueueingHint.QUEUE_SKIP, False),
    ("pvc-was-added-and-pod-was-bound-to-different-pvc", _pod("pod_1", ("PVC_2",)), None,
     _pvc("PVC_1", volume_name="Vol_1"), QueueingHint.QUEUE_SKIP, False),
    ("pvc-was-added-and-pod-was-bound-to-pvc-but-different-ns", _pod("pod_1", ("PVC_1",)), None,
     _pvc("PVC_1", "ns1", volume_name="Vol_1"), QueueingHint.QUEUE_SKIP, False),
    ("pvc-was-added-and-pod-was-bound-to-the-pvc", _pod("pod_1", ("PVC_1",)), None, _pvc("PVC_1", volume_name="Vol_1"),
     QueueingHint.QUEUE, False),
    ("pvc-was-updated-and-pod-was-bound-to-the-pvc", _pod("pod_1", ("PVC_1",)), _pvc("PVC_1"),
     _pvc("PVC_1", volume_name="Vol_1"), QueueingHint.QUEUE, False),
    ("pvc-was-updated-but-pod-refers-no-pvc", _pod("pod_1"), _pvc("PVC_1"), _pvc("PVC_1", volume_name="Vol_1"),
     QueueingHint.QUEUE_SKIP, False),
]


@pytest.mark.parametrize("name,the_pod,old,new,want,err", PVC_CHANGE_ROWS, ids=[r[0] for r in PVC_CHANGE_ROWS])
def test_is_schedulable_after_persistent_volume_claim_change(name, the_pod, old, new, want, err):
    hint, error = VolumeZone(Handle()).is_schedulable_after_persistent_volume_claim_change(the_pod, old, new)
    assert hint == want and (error is not None) == err


# Upstream TestIsSchedulableAfterStorageClassAdded (v1.37.2): (name, new class, hint, error).
STORAGE_CLASS_ADDED_ROWS = [
    ("error-wrong-new-object", "not-a-storageclass", QueueingHint.QUEUE, True),
    ("sc-doesn't-have-volume-binding-mode", _sc("SC_1"), QueueingHint.QUEUE_SKIP, False),
    ("new-sc-is-wait-for-first-consumer-mode", _sc("SC_1", "WaitForFirstConsumer"), QueueingHint.QUEUE, False),
]


@pytest.mark.parametrize("name,new,want,err", STORAGE_CLASS_ADDED_ROWS, ids=[r[0] for r in STORAGE_CLASS_ADDED_ROWS])
def test_is_schedulable_after_storage_class_added(name, new, want, err):
    hint, error = VolumeZone(Handle()).is_schedulable_after_storage_class_added(_pod("pod_1", ("PVC_1",)), None, new)
    assert hint == want and (error is not None) == err


# Upstream TestIsSchedulableAfterPersistentVolumeChange (v1.37.2): (name, old, new, hint, error).
PV_CHANGE_ROWS = [
    ("error-wrong-new-object", None, "not-a-pv", QueueingHint.QUEUE, True),
    ("error-wrong-old-object", "not-a-pv", _pv("Vol_1"), QueueingHint.QUEUE, True),
    ("new-pv-was-added", None, _pv("Vol_1", {BZ: "us-west1-b"}), QueueingHint.QUEUE, False),
    ("pv-was-updated-and-changed-topology", _pv("Vol_1", {BZ: "us-west1-a"}), _pv("Vol_1", {BZ: "us-west1-b"}),
     QueueingHint.QUEUE, False),
    ("pv-was-updated-and-added-topology-label", _pv("Vol_1", {BZ: "us-west1-a"}),
     _pv("Vol_1", {BZ: "us-west1-a", GZ: "zone"}), QueueingHint.QUEUE, False),
    ("pv-was-updated-but-no-topology-is-changed", _pv("Vol_1", {BZ: "us-west1-a", GZ: "zone"}),
     _pv("Vol_1", {BZ: "us-west1-a", GZ: "zone"}), QueueingHint.QUEUE_SKIP, False),
]


@pytest.mark.parametrize("name,old,new,want,err", PV_CHANGE_ROWS, ids=[r[0] for r in PV_CHANGE_ROWS])
def test_is_schedulable_after_persistent_volume_change(name, old, new, want, err):
    hint, error = VolumeZone(Handle()).is_schedulable_after_persistent_volume_change(_pod("pod_1", ("PVC_1",)), old, new)
    assert hint == want and (error is not None) == err


@pytest.mark.parametrize("old_value,new_value,want", [
    ("us-west1-a__us-west1-b", "us-west1-b__us-west1-a", QueueingHint.QUEUE_SKIP),  # the same zones
    ("us-west1-a", " us-west1-a ", QueueingHint.QUEUE_SKIP),  # trimmed
    ("us-west1-a__", "__us-west1-a", QueueingHint.QUEUE_SKIP),  # neither parses: no topology either side
    ("us-west1-a__", "us-west1-a", QueueingHint.QUEUE),  # now it parses
    ("us-west1-a", "us-west1-a__us-west1-b", QueueingHint.QUEUE),
], ids=["reordered", "trimmed", "unparsable-both", "parses-now", "zone-added"])
def test_is_schedulable_after_persistent_volume_change_compares_zone_sets(old_value, new_value, want):
    """Not upstream's table: getPVTopologies compares LabelZonesToSet's sets, not the raw label values."""
    hint, error = VolumeZone(Handle()).is_schedulable_after_persistent_volume_change(
        _pod("pod_1", ("PVC_1",)), _pv("Vol_1", {GZ: old_value}), _pv("Vol_1", {GZ: new_value}))
    assert (hint, error) == (want, None)
