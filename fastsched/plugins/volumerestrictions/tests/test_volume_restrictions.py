"""VolumeRestrictions: upstream's ``volume_restrictions_test.go`` tables (TestGCEDiskConflicts,
TestAWSDiskConflicts, TestRBDDiskConflicts, TestISCSIDiskConflicts, TestAccessModeConflicts),
the AddPod/RemovePod extensions, and the vectorized Filter against the per-node one."""
from __future__ import annotations

import pytest

from fastsched.framework.columns import CYCLE
from fastsched.framework.cycle_state import CycleState
from fastsched.framework.interface import QueueingHint
from fastsched.framework.status import Code, Status
from fastsched.framework.types import PodInfo
from fastsched.plugins.volumerestrictions import (ERR_REASON_DISK_CONFLICT, ERR_REASON_READ_WRITE_ONCE_POD_CONFLICT,
                                                  VolumeRestrictions)
from fastsched.snapshot import build_snapshot
from fastsched.plugins.helper.tests.volumes import Handle, node, node_info, pod, pvc_manifest

DISK = Status(Code.UNSCHEDULABLE, ERR_REASON_DISK_CONFLICT)
SOURCES = {
    "gce": ({"gcePersistentDisk": {"pdName": "foo"}}, {"gcePersistentDisk": {"pdName": "bar"}}),
    "aws": ({"awsElasticBlockStore": {"volumeID": "foo"}}, {"awsElasticBlockStore": {"volumeID": "bar"}}),
    "rbd": ({"rbd": {"monitors": ["a", "b"], "pool": "foo", "image": "bar"}},
            {"rbd": {"monitors": ["c", "d"], "pool": "foo", "image": "bar"}}),
    "iscsi": ({"iscsi": {"targetPortal": "127.0.0.1:3260", "iqn": "iqn.2016-12.server:storage.target01", "lun": 0}},
              {"iscsi": {"targetPortal": "127.0.0.1:3260", "iqn": "iqn.2016-12.server:storage.target02", "lun": 0}}),
}


def _vol(src: dict, name: str = "v") -> dict:
    return {"name": name, **src}


def _same(a, b) -> bool:
    if a is None or b is None:
        return a is None and b is None
    return a.code() == b.code() and a.reasons() == b.reasons()


@pytest.mark.parametrize("kind", sorted(SOURCES))
@pytest.mark.parametrize("case", ["nothing", "one state", "same state", "different state"])
def test_disk_conflicts(kind, case):
    state1, state2 = SOURCES[kind]
    existing = pod("e", extra=[_vol(state1)], node_name="n")
    new_pod, pods, want_pre, want = {
        "nothing": (pod("p"), [], Code.SKIP, None),
        "one state": (pod("p"), [existing], Code.SKIP, None),
        "same state": (pod("p", extra=[_vol(state1)]), [existing], None, DISK),
        "different state": (pod("p", extra=[_vol(state2)]), [existing], None, None),
    }[case]
    pl = VolumeRestrictions(Handle())
    ni = node_info(node("n"), pods)
    state = CycleState()
    _, pre = pl.pre_filter(state, new_pod, [ni])
    assert (pre.code() if pre is not None else None) == want_pre
    if want_pre is None:
        assert _same(pl.filter(state, new_pod, ni), want)


def test_read_only_disks_do_not_conflict():
    ro = {"gcePersistentDisk": {"pdName": "foo", "readOnly": True}}
    pl = VolumeRestrictions(Handle())
    ni = node_info(node("n"), [pod("e", extra=[_vol(ro)], node_name="n")])
    state = CycleState()
    pl.pre_filter(state, pod("p", extra=[_vol(ro)]), [ni])
    assert pl.filter(state, pod("p", extra=[_vol(ro)]), ni) is None
    # EBS conflicts even when both are read-only
    ebs = {"awsElasticBlockStore": {"volumeID": "foo", "readOnly": True}}
    ni = node_info(node("n"), [pod("e", extra=[_vol(ebs)], node_name="n")])
    state = CycleState()
    pl.pre_filter(state, pod("p", extra=[_vol(ebs)]), [ni])
    assert _same(pl.filter(state, pod("p", extra=[_vol(ebs)]), ni), DISK)


RWOP = Status(Code.UNSCHEDULABLE, ERR_REASON_READ_WRITE_ONCE_POD_CONFLICT)
PVCS = [pvc_manifest("claim-with-rwop", access_modes=["ReadWriteOncePod"]),
        pvc_manifest("claim-with-rwop-2", access_modes=["ReadWriteOncePod"]),
        pvc_manifest("claim-with-rwx", access_modes=["ReadWriteMany"])]


@pytest.mark.parametrize("name", ["nothing", "failed to get PVC", "no access mode conflict",
                                  "access mode conflict, unschedulable", "two conflicts, unschedulable"])
def test_access_mode_conflicts(name):
    with_one = pod("pod-with-one-pvc", ["claim-with-rwop"], node_name="node-1")
    with_two = pod("pod-with-two-pvcs", ["claim-with-rwop", "claim-with-rwop-2"], node_name="node-1")
    one_conflict = pod("pod-with-one-conflict", ["claim-with-rwop"])
    two_conflicts = pod("pod-with-two-conflicts", ["claim-with-rwop", "claim-with-rwop-2"])
    rwx = pod("pod-with-rwx", ["claim-with-rwx"], node_name="node-1")
    n1 = node("node-1")
    new_pod, existing, objects, want_pre, want = {
        "nothing": (pod("p"), [], [], Status(Code.SKIP), None),
        "failed to get PVC": (with_one, [], [], Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
                                                       'persistentvolumeclaim "claim-with-rwop" not found'), None),
        "no access mode conflict": (with_one, [rwx], [PVCS[0], PVCS[2]], Status(Code.SKIP), None),
        "access mode conflict, unschedulable": (one_conflict, [with_one, rwx], [PVCS[0], PVCS[2]], None, RWOP),
        "two conflicts, unschedulable": (two_conflicts, [with_two, rwx], PVCS, None, RWOP),
    }[name]
    pl = VolumeRestrictions(Handle(objects))
    snapshot = build_snapshot([n1], existing)
    batch = snapshot.batch()
    state = CycleState()
    _, pre = pl.pre_filter(state, new_pod, batch)
    assert _same(pre, want_pre), (pre, want_pre)
    if want_pre is None:
        assert _same(pl.filter(state, new_pod, batch[0]), want)
        v = pl.filter_vectorized(state, new_pod, batch)
        got = v.status(0) if not isinstance(v, Status) else v
        assert _same(got, want)


def test_remove_pod_frees_the_claim_for_preemption():
    holder = pod("holder", ["claim-with-rwop"], node_name="node-1")
    pl = VolumeRestrictions(Handle(PVCS))
    snapshot = build_snapshot([node("node-1")], [holder])
    state = CycleState()
    p = pod("p", ["claim-with-rwop"])
    pl.pre_filter(state, p, snapshot.batch())
    ni = snapshot.batch()[0]
    assert _same(pl.filter(state, p, ni), RWOP)
    assert pl.remove_pod(state, p, PodInfo(holder), ni) is None
    assert pl.filter(state, p, ni) is None
    assert pl.add_pod(state, p, PodInfo(holder), ni) is None
    assert _same(pl.filter(state, p, ni), RWOP)
    assert pl.add_pod(CycleState(), p, PodInfo(holder), ni).code() == Code.ERROR


def test_column_form_runs_each_cycle_only_for_pods_with_claims_or_disks():
    pl = VolumeRestrictions(Handle())
    assert pl.column_form(pod("p"), None) is not None
    assert pl.column_form(pod("p", extra=[{"name": "e", "emptyDir": {}}]), None) is not None
    assert pl.column_form(pod("p", ["c"]), None).filter == CYCLE
    assert pl.column_form(pod("p", extra=[_vol(SOURCES["aws"][0])]), None).filter == CYCLE


# -- queueing hints ---------------------------------------------------------------------------------
def _vpod(name: str, *sources: dict, claims: tuple[str, ...] = (), namespace: str = "default"):
    """``st.MakePod().Name(name).Volume(...)`` / ``.PVC(...)``: a pod with the inline volumes and claims."""
    extra = [_vol(src, f"v{i}") for i, src in enumerate(sources)]
    return pod(name, claims, extra, namespace=namespace)


_GCE, _GCE2 = {"gcePersistentDisk": {"pdName": "foo"}}, {"gcePersistentDisk": {"pdName": "bar"}}
_AWS, _AWS2 = {"awsElasticBlockStore": {"volumeID": "foo"}}, {"awsElasticBlockStore": {"volumeID": "bar"}}
_RBD = {"rbd": {"monitors": ["a", "b"], "pool": "foo", "image": "bar", "fsType": "ext4"}}
_RBD2 = {"rbd": {"monitors": ["c", "d"], "pool": "foo", "image": "bar", "fsType": "ext4"}}
_ISCSI = {"iscsi": {"targetPortal": "127.0.0.1:3260", "iqn": "iqn.2016-12.server:storage.target01",
                    "fsType": "ext4", "lun": 0}}
_ISCSI2 = {"iscsi": {"targetPortal": "127.0.0.1:3260", "iqn": "iqn.2017-12.server:storage.target01",
                     "fsType": "ext4", "lun": 0}}

# Upstream Test_isSchedulableAfterAssignedPodDeleted (v1.37.2): (name, pod, deleted pod, hint). Upstream's
# existing pods and PVC are empty (the hint reads neither); its pods have no name or namespace.
ASSIGNED_POD_DELETED_ROWS = [
    ("queue-new-object-gcedisk-conflict", _vpod("p", _GCE), _vpod("e", _GCE), QueueingHint.QUEUE),
    ("skip-new-object-gcedisk-no-conflict", _vpod("p", _GCE), _vpod("e", _GCE2), QueueingHint.QUEUE_SKIP),
    ("queue-new-object-awsdisk-conflict", _vpod("p", _AWS), _vpod("e", _AWS), QueueingHint.QUEUE),
    ("skip-new-object-awsdisk-no-conflict", _vpod("p", _AWS), _vpod("e", _AWS2), QueueingHint.QUEUE_SKIP),
    ("queue-new-object-rbddisk-conflict", _vpod("p", _RBD), _vpod("e", _RBD), QueueingHint.QUEUE),
    ("skip-new-object-rbddisk-no-conflict", _vpod("p", _RBD), _vpod("e", _RBD2), QueueingHint.QUEUE_SKIP),
    ("queue-new-object-iscsidisk-conflict", _vpod("p", _ISCSI), _vpod("e", _ISCSI), QueueingHint.QUEUE),
    ("skip-new-object-iscsidisk-no-conflict", _vpod("p", _ISCSI), _vpod("e", _ISCSI2), QueueingHint.QUEUE_SKIP),
    ("queue-has-same-claim", _vpod("pod1", claims=("claim-rwop",)), _vpod("pod2", claims=("claim-rwop",)),
     QueueingHint.QUEUE),
    ("skip-no-same-claim", _vpod("pod1", claims=("claim-1-rwop",)), _vpod("pod2", claims=("claim-2-rwop",)),
     QueueingHint.QUEUE_SKIP),
]


@pytest.mark.parametrize("name,the_pod,deleted,want", ASSIGNED_POD_DELETED_ROWS,
                         ids=[r[0] for r in ASSIGNED_POD_DELETED_ROWS])
def test_is_schedulable_after_assigned_pod_deleted(name, the_pod, deleted, want):
    plugin = VolumeRestrictions(Handle())
    assert plugin.is_schedulable_after_assigned_pod_deleted(the_pod, deleted, None) == (want, None)


_RWX_1 = pvc_manifest("claim-with-rwx-1", access_modes=("ReadWriteMany",))
_RWX_2 = pvc_manifest("claim-with-rwx-2", access_modes=("ReadWriteMany",))
_POD_WITH_ONE_PVC = _vpod("pod-with-one-pvc", claims=("claim-with-rwx-1",))
_POD_WITH_TWO_PVCS = _vpod("pod-with-two-pvcs", claims=("claim-with-rwx-1", "claim-with-rwx-2"))
_POD_OTHER_NAMESPACE = _vpod("pod-with-one-pvc", claims=("claim-with-rwx-1",), namespace="kube-system")
# Upstream Test_isSchedulableAfterPersistentVolumeClaimChange (v1.37.2; isSchedulableAfterPersistentVolumeClaimAdded):
# (name, pod, new claim, hint); the old object is nil in every row, the new claim stored as upstream's.
PVC_ADDED_ROWS = [
    ("queue-new-object-pvc-belong-pod", _POD_WITH_TWO_PVCS, _RWX_1, QueueingHint.QUEUE),
    ("skip-new-object-unused", _POD_WITH_ONE_PVC, _RWX_2, QueueingHint.QUEUE_SKIP),
    ("skip-nil-old-object", _POD_WITH_ONE_PVC, _RWX_2, QueueingHint.QUEUE_SKIP),
    ("skip-new-object-not-belong-pod", _POD_WITH_ONE_PVC, _RWX_2, QueueingHint.QUEUE_SKIP),
    ("skip-new-object-namespace-not-equal-pod", _POD_OTHER_NAMESPACE, _RWX_1, QueueingHint.QUEUE_SKIP),
]


@pytest.mark.parametrize("name,the_pod,manifest,want", PVC_ADDED_ROWS, ids=[r[0] for r in PVC_ADDED_ROWS])
def test_is_schedulable_after_persistent_volume_claim_added(name, the_pod, manifest, want):
    handle = Handle([manifest])
    new = handle.client.list_objects("PersistentVolumeClaim")[0]
    plugin = VolumeRestrictions(handle)
    assert plugin.is_schedulable_after_persistent_volume_claim_added(the_pod, None, new) == (want, None)


def test_needs_check_fast_path_agrees_with_every_source_lookup():
    """``_needs_check``'s key-set test against the per-source lookups it short-cuts, on seeded
    random volumes: camelCase and snake_case sources, None values, other sources, extra keys."""
    import random

    from fastsched.api.storage import volume_source
    from fastsched.plugins.volumerestrictions import CONFLICT_CHECKED_SOURCES, _needs_check

    sources = [*CONFLICT_CHECKED_SOURCES, "gce_persistent_disk", "aws_elastic_block_store", "persistentVolumeClaim",
               "persistent_volume_claim", "secret", "configMap", "nfs", "csi", "emptyDir"]
    rng = random.Random(20)
    for _ in range(3000):
        vol = {"name": "v"}
        for key in rng.sample(sources, rng.randint(0, 3)):
            vol[key] = None if rng.random() < 0.3 else {"x": 1}
        want = any(volume_source(vol, s) is not None for s in CONFLICT_CHECKED_SOURCES)
        assert _needs_check(vol) is want, vol
