"""VolumeRestrictions: upstream's ``volume_restrictions_test.go`` tables (TestGCEDiskConflicts,
TestAWSDiskConflicts, TestRBDDiskConflicts, TestISCSIDiskConflicts, TestAccessModeConflicts),
the AddPod/RemovePod extensions, and the vectorized Filter against the per-node one."""
from __future__ import annotations

import pytest

from fastsched.framework.columns import CYCLE
from fastsched.framework.cycle_state import CycleState
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
