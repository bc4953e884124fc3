"""VolumeBinding: cases of upstream's ``volume_binding_test.go`` (TestVolumeBinding) and
``binder_test.go`` (FindPodVolumes with static PVs, provisioning, capacity; Assume / Revert /
Bind), and the vectorized Filter against the per-node one."""
from __future__ import annotations

import pytest

from fastsched.api.load import load_objects
from fastsched.api.storage import ANN_BIND_COMPLETED, ANN_SELECTED_NODE, CSIDriver, StorageClass
from fastsched.framework.columns import CYCLE
from fastsched.framework.cycle_state import CycleState
from fastsched.framework.interface import QueueingHint
from fastsched.framework.status import Code, Status
from fastsched.plugins.volumebinding import REASON_UNBOUND_IMMEDIATE, STATE_KEY, VolumeBinding
from fastsched.plugins.volumebinding.binder import (ERR_REASON_BIND_CONFLICT, ERR_REASON_NODE_CONFLICT,
                                                    ERR_REASON_NOT_ENOUGH_SPACE, ERR_REASON_PV_NOT_EXIST)
from fastsched.sim.storage import csi_driver_manifest, csi_storage_capacity_manifest
from fastsched.snapshot import build_snapshot
from fastsched.plugins.helper.tests.volumes import Handle, assert_window_mask_agrees, node, pod, pv_manifest, pvc_manifest, storage_class_manifest

U = Code.UNSCHEDULABLE_AND_UNRESOLVABLE
WAIT, IMMEDIATE = "wait-sc", "immediate-sc"
CLASSES = [storage_class_manifest(WAIT, provisioner="kubernetes.io/no-provisioner"),
           storage_class_manifest(IMMEDIATE, binding_mode="Immediate")]


def _same(a, b) -> bool:
    if a is None or b is None:
        return a is None and b is None
    return a.code() == b.code() and a.reasons() == b.reasons()


def _nodes():
    return [node("node-a", {"foo": "bar", "kubernetes.io/hostname": "node-a"}),
            node("node-b", {"foo": "barbar", "kubernetes.io/hostname": "node-b"}),
            node("node-c", {"foo": "barbar", "kubernetes.io/hostname": "node-c"})]


def _run(objects, claims, nodes=None):
    nodes = nodes or _nodes()
    pl = VolumeBinding(handle=Handle(objects))
    snapshot = build_snapshot(nodes)
    batch = snapshot.batch()
    p = pod("pod-a", claims)
    state = CycleState()
    _, pre = pl.pre_filter(state, p, batch)
    per_node = None
    vector = None
    if pre is None or pre.code() == Code.SUCCESS:
        per_node = [pl.filter(state, p, ni) for ni in batch]
        state_v = CycleState()
        pl.pre_filter(state_v, p, batch)
        v = pl.filter_vectorized(state_v, p, batch)
        vector = [v] * len(batch) if isinstance(v, Status) else [v.status(i) for i in range(len(batch))]
        for a, b in zip(per_node, vector):
            assert _same(a, b), (a, b)
        assert_window_mask_agrees(pl, state_v, p, batch, v)
    return pl, state, p, pre, per_node


BOUND = [pvc_manifest("pvc-a", volume_name="pv-a", bound=True, storage_class=WAIT)]
CASES = [
    ("pod has not pvcs", [], [], "skip", [None, None, None]),
    ("all bound", ["pvc-a"], BOUND + [pv_manifest("pv-a", storage_class=WAIT, claim=("default", "pvc-a"),
                                                    phase="Bound")], None, [None, None, None]),
    ("all bound with local volumes", ["pvc-a"],
     BOUND + [pv_manifest("pv-a", storage_class=WAIT, claim=("default", "pvc-a"), phase="Bound",
                          node_affinity={"kubernetes.io/hostname": ["node-a"]})],
     None, [None, (ERR_REASON_NODE_CONFLICT,), (ERR_REASON_NODE_CONFLICT,)]),
    ("PVC does not exist", ["pvc-a"], [], 'persistentvolumeclaim "pvc-a" not found', None),
    ("Part of PVCs do not exist", ["pvc-a", "pvc-b"],
     BOUND + [pv_manifest("pv-a", storage_class=WAIT, claim=("default", "pvc-a"), phase="Bound")],
     'persistentvolumeclaim "pvc-b" not found', None),
    ("immediate claims not bound", ["pvc-a"], [pvc_manifest("pvc-a", storage_class=IMMEDIATE)],
     REASON_UNBOUND_IMMEDIATE, None),
    ("pre-bound claim that is not bind-completed is immediate", ["pvc-a"],
     [pvc_manifest("pvc-a", storage_class=WAIT, volume_name="pv-a")], REASON_UNBOUND_IMMEDIATE, None),
    ("unbound claims no matches", ["pvc-a"], [pvc_manifest("pvc-a", storage_class=WAIT)], None,
     [(ERR_REASON_BIND_CONFLICT,)] * 3),
    ("bound and unbound unsatisfied", ["pvc-a", "pvc-b"],
     BOUND + [pv_manifest("pv-a", storage_class=WAIT, claim=("default", "pvc-a"), phase="Bound",
                          node_affinity={"foo": ["barbar"]}),
              pvc_manifest("pvc-b", storage_class=WAIT)],
     None, [(ERR_REASON_NODE_CONFLICT, ERR_REASON_BIND_CONFLICT), (ERR_REASON_BIND_CONFLICT,),
            (ERR_REASON_BIND_CONFLICT,)]),
    ("pv not found", ["pvc-a"], BOUND, None, [(ERR_REASON_PV_NOT_EXIST,)] * 3),
    # FindPodVolumes reads nothing of the node (the vectorized Filter's one call for every row)
    ("two bound, the second's pv not found", ["pvc-a", "pvc-b"],
     BOUND + [pv_manifest("pv-a", storage_class=WAIT, claim=("default", "pvc-a"), phase="Bound"),
              pvc_manifest("pvc-b", volume_name="pv-b", bound=True, storage_class=WAIT)],
     None, [(ERR_REASON_PV_NOT_EXIST,)] * 3),
    ("lost claim", ["pvc-a"], [pvc_manifest("pvc-a", storage_class=WAIT, volume_name="pv-a", phase="Lost")],
     'persistentvolumeclaim "pvc-a" bound to non-existent persistentvolume "pv-a"', None),
    ("static PV matched by affinity", ["pvc-a"],
     [pvc_manifest("pvc-a", storage_class=WAIT), pv_manifest("pv-x", storage_class=WAIT,
                                                             node_affinity={"foo": ["barbar"]})],
     None, [(ERR_REASON_BIND_CONFLICT,), None, None]),
]


@pytest.mark.parametrize("name,claims,objects,pre_want,want", CASES, ids=[c[0] for c in CASES])
def test_volume_binding(name, claims, objects, pre_want, want):
    pl, state, p, pre, per_node = _run(CLASSES + objects, claims)
    if pre_want == "skip":
        assert pre.code() == Code.SKIP
        assert state.read(STATE_KEY).claims is None
        return
    if pre_want is not None:
        assert _same(pre, Status(U, pre_want))
        return
    assert pre is None
    for got, reasons in zip(per_node, want):
        assert _same(got, None if reasons is None else Status(U, *reasons)), (got, reasons)


def test_ephemeral_claims():
    eph = {"name": "vol", "ephemeral": {"volumeClaimTemplate": {"spec": {
        "accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}}}}
    p = pod("abc", extra=[eph])
    pl = VolumeBinding(handle=Handle(CLASSES))
    _, pre = pl.pre_filter(CycleState(), p, [])
    assert _same(pre, Status(U, 'waiting for ephemeral volume controller to create the persistentvolumeclaim "abc-vol"'))
    pl = VolumeBinding(handle=Handle(CLASSES + [pvc_manifest("abc-vol", storage_class=WAIT)]))
    _, pre = pl.pre_filter(CycleState(), p, [])
    assert _same(pre, Status(U, "PVC default/abc-vol was not created for pod default/abc (pod is not owner)"))
    pl = VolumeBinding(handle=Handle(CLASSES + [pvc_manifest("abc-vol", storage_class=WAIT, owner=p)]))
    state = CycleState()
    assert pl.pre_filter(state, p, [])[1] is None


def test_smallest_matching_pv_first_and_claims_by_size():
    objects = CLASSES + [
        pvc_manifest("small", storage_class=WAIT, request="1Gi"), pvc_manifest("big", storage_class=WAIT, request="5Gi"),
        pv_manifest("pv-10g", storage_class=WAIT, capacity="10Gi"),
        pv_manifest("pv-5g", storage_class=WAIT, capacity="5Gi"),
        pv_manifest("pv-2g", storage_class=WAIT, capacity="2Gi"),
        pv_manifest("pv-1g-rox", storage_class=WAIT, capacity="1Gi", access_modes=["ReadOnlyMany"]),
        pv_manifest("pv-bound", storage_class=WAIT, capacity="1Gi", claim=("default", "other"))]
    pl, state, p, pre, per_node = _run(objects, ["big", "small"])
    assert per_node == [None, None, None]
    vols = state.read(STATE_KEY).pod_volumes("node-a")
    assert [(b.pvc.name, b.pv.name) for b in vols.static_bindings] == [("small", "pv-2g"), ("big", "pv-5g")]


def test_prebound_pv_wins_and_selected_node():
    objects = CLASSES + [pvc_manifest("c", storage_class=WAIT),
                         pv_manifest("pv-small", storage_class=WAIT, capacity="1Gi"),
                         pv_manifest("pv-pre", storage_class=WAIT, capacity="9Gi", claim=("default", "c"),
                                     node_affinity={"foo": ["bar"]})]
    pl, state, p, pre, per_node = _run(objects, ["c"])
    assert per_node[0] is None and per_node[1] is not None
    assert state.read(STATE_KEY).pod_volumes("node-a").static_bindings[0].pv.name == "pv-pre"
    objects = [storage_class_manifest("dyn"), pvc_manifest("c", storage_class="dyn",
                                                           annotations={ANN_SELECTED_NODE: "node-b"})]
    pl, state, p, pre, per_node = _run(objects, ["c"])
    assert [s is None for s in per_node] == [False, True, False]


def test_provisioning_topology_and_capacity():
    base = [storage_class_manifest("dyn", allowed_topologies={"foo": ["bar"]}), pvc_manifest("c", storage_class="dyn",
                                                                                           request="5Gi")]
    pl, state, p, pre, per_node = _run(base, ["c"])
    assert per_node[0] is None and _same(per_node[1], Status(U, ERR_REASON_BIND_CONFLICT))
    with_capacity = base + [csi_driver_manifest("csi.example.com", storage_capacity=True),
                            csi_storage_capacity_manifest("cap", "dyn", "4Gi", {"foo": "bar"})]
    pl, state, p, pre, per_node = _run(with_capacity, ["c"])
    assert _same(per_node[0], Status(U, ERR_REASON_NOT_ENOUGH_SPACE))
    enough = base + [csi_driver_manifest("csi.example.com", storage_capacity=True),
                     csi_storage_capacity_manifest("cap", "dyn", "1Gi", {"foo": "bar"}, maximum_volume_size="6Gi")]
    pl, state, p, pre, per_node = _run(enough, ["c"])
    assert per_node[0] is None
    no_provisioner = [storage_class_manifest("dyn", provisioner="kubernetes.io/no-provisioner"),
                      pvc_manifest("c", storage_class="dyn")]
    pl, state, p, pre, per_node = _run(no_provisioner, ["c"])
    assert all(_same(s, Status(U, ERR_REASON_BIND_CONFLICT)) for s in per_node)


def test_missing_class_is_an_error_and_nil_mode():
    objects = [StorageClass(name="nomode", provisioner="p", volume_binding_mode=None),
               pvc_manifest("c", storage_class="nomode")]
    pl = VolumeBinding(handle=Handle(objects))
    _, pre = pl.pre_filter(CycleState(), pod("p", ["c"]), [])
    assert pre.code() == Code.ERROR and pre.message() == 'VolumeBindingMode not set for StorageClass "nomode"'


def test_reserve_prebind_binds_static_and_provisions():
    handle = Handle(CLASSES + [storage_class_manifest("dyn"), pvc_manifest("s", storage_class=WAIT, request="1Gi"),
                               pvc_manifest("d", storage_class="dyn", request="3Gi"),
                               pv_manifest("pv-1", storage_class=WAIT, capacity="1Gi")])
    nodes = _nodes()
    handle.client.add_object(nodes[0])
    pl = VolumeBinding(handle=handle)
    snapshot = build_snapshot(nodes)
    p = pod("pod-a", ["s", "d"])
    state = CycleState()
    assert pl.pre_filter(state, p, snapshot.batch())[1] is None
    assert pl.filter_vectorized(state, p, snapshot.batch()).codes.tolist() == [0, 0, 0]
    assert pl.reserve(state, p, "node-a") is None
    assert state.read(STATE_KEY).all_bound is False
    assumed = pl.binder.pv_cache.get(pl.binder.lister, "pv-1")
    assert assumed.claim_ref.name == "s"                       # assumed, not written yet
    assert handle.client.get_object("PersistentVolume", "pv-1").claim_ref is None
    assert pl.pre_bind_pre_flight(state, p, "node-a") is None
    assert pl.pre_bind(state, p, "node-a") is None
    c = handle.client
    s = c.get_object("PersistentVolumeClaim", "s")
    assert s.volume_name == "pv-1" and ANN_BIND_COMPLETED in s.annotations and s.phase == "Bound"
    assert c.get_object("PersistentVolume", "pv-1").claim_ref.name == "s"
    d = c.get_object("PersistentVolumeClaim", "d")
    assert d.annotations[ANN_SELECTED_NODE] == "node-a" and d.volume_name == f"pvc-{d.uid}"
    pv = c.get_object("PersistentVolume", d.volume_name)
    assert str(pv.capacity) == "3Gi" and pv.claim_ref.name == "d"
    # the pod's claims are now bound: a new cycle finds nothing to do
    state = CycleState()
    pl.pre_filter(state, p, snapshot.batch())
    assert pl.reserve(state, p, "node-a") is None and state.read(STATE_KEY).all_bound


def test_unreserve_reverts_assumed():
    handle = Handle(CLASSES + [pvc_manifest("s", storage_class=WAIT), pv_manifest("pv-1", storage_class=WAIT)])
    pl = VolumeBinding(handle=handle)
    snapshot = build_snapshot(_nodes())
    p = pod("pod-a", ["s"])
    state = CycleState()
    pl.pre_filter(state, p, snapshot.batch())
    pl.filter(state, p, snapshot.batch()[0])
    pl.reserve(state, p, "node-a")
    assert pl.binder.pv_cache.get(pl.binder.lister, "pv-1").claim_ref is not None
    pl.unreserve(state, p, "node-a")
    assert pl.binder.pv_cache.get(pl.binder.lister, "pv-1").claim_ref is None


def test_no_pvc_pod_keeps_the_fused_form():
    pl = VolumeBinding(handle=Handle())
    assert pl.column_form(pod("p"), None) is not None
    assert pl.column_form(pod("p", ["c"]), None).filter == CYCLE  # claims: judged each cycle
    state = CycleState()
    assert pl.pre_filter(state, pod("p"), [])[1].code() == Code.SKIP
    assert pl.reserve(state, pod("p"), "n") is None
    assert pl.pre_bind_pre_flight(state, pod("p"), "n").code() == Code.SKIP


def test_missing_claim_error_text_is_the_v137_assume_caches():
    """binder.go GetPodVolumeClaims -> isVolumeBound -> pvcCache.Get: v1.37's passive assume cache
    answers apierrors.NewNotFound (v1.34: 'could not find v1.PersistentVolumeClaim ...')."""
    from fastsched.plugins.volumebinding.binder import BinderError

    pl = VolumeBinding(handle=Handle(CLASSES))
    with pytest.raises(BinderError) as e:
        pl.binder.pod_volume_claims(pod("pod-a", ["gone"]))
    assert str(e.value) == 'error getting PVC "default/gone": persistentvolumeclaims "default/gone" not found'


# -- queueing hints ---------------------------------------------------------------------------------
def _obj(manifest: dict):
    """The object of ``manifest``, read without validation."""
    return load_objects([manifest], validate=False)[0]


def _make_pod(name: str = "pod-a", *volumes: dict, namespace: str = "default"):
    """Upstream's ``makePod(name)`` (namespace default) with the volumes."""
    return _obj({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": namespace},
                 "spec": {"containers": [{"name": "c", "image": "img"}], "volumes": list(volumes)}})


def _pvc_vol(claim: str, name: str = "") -> dict:
    return {"name": name, "persistentVolumeClaim": {"claimName": claim}}


def _ephemeral_vol(name: str) -> dict:
    return {"name": name, "ephemeral": {}}


def _csi_node(migrated: str | None):
    meta: dict = {"name": "csinode-a"}
    if migrated is not None:
        meta["annotations"] = {"storage.alpha.kubernetes.io/migrated-plugins": migrated}
    return _obj({"apiVersion": "storage.k8s.io/v1", "kind": "CSINode", "metadata": meta, "spec": {"drivers": []}})


_NOT_AN_OBJECT = object()  # upstream's new(struct{})

# Upstream TestIsSchedulableAfterCSINodeChange (v1.37.2): (name, old, new, error, hint); the pod is makePod("pod-a").
CSI_NODE_CHANGE_ROWS = [
    ("unexpected objects are passed", _NOT_AN_OBJECT, _NOT_AN_OBJECT, True, QueueingHint.QUEUE),
    ("CSINode is newly created", None, _csi_node(None), False, QueueingHint.QUEUE),
    ("CSINode's migrated-plugins annotations is added", _csi_node("test1"), _csi_node("test1, test2"), False,
     QueueingHint.QUEUE),
    ("CSINode's migrated-plugins annotation is updated", _csi_node("test1"), _csi_node("test2"), False,
     QueueingHint.QUEUE),
    ("CSINode is updated but migrated-plugins annotation gets unchanged", _csi_node("test1"), _csi_node("test1"), False,
     QueueingHint.QUEUE_SKIP),
]


@pytest.mark.parametrize("name,old,new,err,want", CSI_NODE_CHANGE_ROWS, ids=[r[0] for r in CSI_NODE_CHANGE_ROWS])
def test_is_schedulable_after_csi_node_change(name, old, new, err, want):
    hint, error = VolumeBinding(handle=Handle()).is_schedulable_after_csi_node_change(_make_pod(), old, new)
    assert hint == want and (error is not None) == err


# Upstream TestIsSchedulableAfterPersistentVolumeClaimChange (v1.37.2): (name, pod, old, new, error, hint).
# makePVC(name, class) is a claim in "default" with that class. Upstream's "type conversion error" row
# passes a nil pod (the hint fails before reading it); here makePod("pod-a").
PVC_CHANGE_ROWS = [
    ("pod has no pvc or ephemeral volumes", _make_pod("pod-a", {"name": "", "emptyDir": {}}),
     _obj(pvc_manifest("pvc-b", storage_class="sc-a")), _obj(pvc_manifest("pvc-b", storage_class="sc-a")), False,
     QueueingHint.QUEUE_SKIP),
    ("pvc with the same name as the one used by the pod in a different namespace is modified",
     _make_pod("pod-a", _pvc_vol("pvc-a"), _pvc_vol("pvc-b"), namespace="ns-a"), None,
     _obj(pvc_manifest("pvc-b", storage_class="")), False, QueueingHint.QUEUE_SKIP),
    ("pod has no pvc that is being modified", _make_pod("pod-a", _pvc_vol("pvc-a"), _pvc_vol("pvc-c")),
     _obj(pvc_manifest("pvc-b", storage_class="")), _obj(pvc_manifest("pvc-b", storage_class="")), False,
     QueueingHint.QUEUE_SKIP),
    ("pod has no generic ephemeral volume that is being modified",
     _make_pod("pod-a", _ephemeral_vol("ephemeral-a"), _ephemeral_vol("ephemeral-c")),
     _obj(pvc_manifest("pod-a-ephemeral-b", storage_class="")), _obj(pvc_manifest("pod-a-ephemeral-b", storage_class="")),
     False, QueueingHint.QUEUE_SKIP),
    ("pod has the pvc that is being modified", _make_pod("pod-a", _pvc_vol("pvc-a"), _pvc_vol("pvc-b")),
     _obj(pvc_manifest("pvc-b", storage_class="")), _obj(pvc_manifest("pvc-b", storage_class="")), False,
     QueueingHint.QUEUE),
    ("pod has the generic ephemeral volume that is being modified",
     _make_pod("pod-a", _ephemeral_vol("ephemeral-a"), _ephemeral_vol("ephemeral-b")),
     _obj(pvc_manifest("pod-a-ephemeral-b", storage_class="")), _obj(pvc_manifest("pod-a-ephemeral-b", storage_class="")),
     False, QueueingHint.QUEUE),
    ("type conversion error", _make_pod(), _NOT_AN_OBJECT, _NOT_AN_OBJECT, True, QueueingHint.QUEUE),
]


@pytest.mark.parametrize("name,the_pod,old,new,err,want", PVC_CHANGE_ROWS, ids=[r[0] for r in PVC_CHANGE_ROWS])
def test_is_schedulable_after_persistent_volume_claim_change(name, the_pod, old, new, err, want):
    hint, error = VolumeBinding(handle=Handle()).is_schedulable_after_persistent_volume_claim_change(the_pod, old, new)
    assert hint == want and (error is not None) == err


def _sc(topologies: dict | None = None):
    manifest: dict = {"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass", "metadata": {"name": "sc-a"},
                      "provisioner": "csi.example.com"}
    if topologies:
        manifest["allowedTopologies"] = [{"matchLabelExpressions": [{"key": k, "values": list(v)}
                                                                    for k, v in topologies.items()]}]
    return _obj(manifest)


# Upstream TestIsSchedulableAfterStorageClassChange (v1.37.2): (name, old, new, error, hint).
STORAGE_CLASS_CHANGE_ROWS = [
    ("When a new StorageClass is created, it returns Queue", None, _sc(), False, QueueingHint.QUEUE),
    ("When the AllowedTopologies are changed, it returns Queue", _sc(), _sc({"kubernetes.io/hostname": ["node-a"]}),
     False, QueueingHint.QUEUE),
    ("When there are no changes to the StorageClass, it returns QueueSkip", _sc(), _sc(), False,
     QueueingHint.QUEUE_SKIP),
    ("type conversion error", _NOT_AN_OBJECT, _NOT_AN_OBJECT, True, QueueingHint.QUEUE),
]


@pytest.mark.parametrize("name,old,new,err,want", STORAGE_CLASS_CHANGE_ROWS,
                         ids=[r[0] for r in STORAGE_CLASS_CHANGE_ROWS])
def test_is_schedulable_after_storage_class_change(name, old, new, err, want):
    hint, error = VolumeBinding(handle=Handle()).is_schedulable_after_storage_class_change(_make_pod(), old, new)
    assert hint == want and (error is not None) == err


def _cap(capacity: str | None = None, maximum: str | None = None):
    return _obj(csi_storage_capacity_manifest("cap-a", "", capacity, None, maximum_volume_size=maximum))


# Upstream TestIsSchedulableAfterCSIStorageCapacityChange (v1.37.2): (name, old, new, error, hint);
# resource.NewQuantity(n, DecimalSI) is the quantity "n".
CAPACITY_CHANGE_ROWS = [
    ("When a new CSIStorageCapacity is created, it returns Queue", None, _cap(), False, QueueingHint.QUEUE),
    ("When the volume limit is increase(Capacity set), it returns Queue", _cap(), _cap("100"), False,
     QueueingHint.QUEUE),
    ("When the volume limit is increase(MaximumVolumeSize set), it returns Queue", _cap(), _cap(maximum="100"), False,
     QueueingHint.QUEUE),
    ("When the volume limit is increase(Capacity increase), it returns Queue", _cap("50"), _cap("100"), False,
     QueueingHint.QUEUE),
    ("When the volume limit is increase(MaximumVolumeSize unset), it returns Queue", _cap("100", "50"), _cap("100"),
     False, QueueingHint.QUEUE),
    ("When the volume limit is increase(MaximumVolumeSize increase), it returns Queue", _cap("100", "50"),
     _cap("100", "60"), False, QueueingHint.QUEUE),
    ("When there are no changes to the CSIStorageCapacity, it returns QueueSkip", _cap("100", "50"), _cap("100", "50"),
     False, QueueingHint.QUEUE_SKIP),
    ("When the volume limit is equal(Capacity), it returns QueueSkip", _cap("100"), _cap("100"), False,
     QueueingHint.QUEUE_SKIP),
    ("When the volume limit is equal(MaximumVolumeSize unset), it returns QueueSkip", _cap("100", "50"), _cap("50"),
     False, QueueingHint.QUEUE_SKIP),
    ("When the volume limit is decrease(Capacity), it returns QueueSkip", _cap("100"), _cap("90"), False,
     QueueingHint.QUEUE_SKIP),
    ("When the volume limit is decrease(MaximumVolumeSize), it returns QueueSkip", _cap(maximum="100"),
     _cap(maximum="90"), False, QueueingHint.QUEUE_SKIP),
    ("type conversion error", _NOT_AN_OBJECT, _NOT_AN_OBJECT, True, QueueingHint.QUEUE),
]


@pytest.mark.parametrize("name,old,new,err,want", CAPACITY_CHANGE_ROWS, ids=[r[0] for r in CAPACITY_CHANGE_ROWS])
def test_is_schedulable_after_csi_storage_capacity_change(name, old, new, err, want):
    hint, error = VolumeBinding(handle=Handle()).is_schedulable_after_csi_storage_capacity_change(_make_pod(), old, new)
    assert hint == want and (error is not None) == err


def _driver(name: str, storage_capacity: bool | None):
    """A CSIDriver; ``None`` is upstream's nil StorageCapacity (the API server defaults it to false)."""
    return CSIDriver(name=name, storage_capacity=storage_capacity)


_WITH_CSI_TEST1 = _make_pod("pod-a", {"name": "", "csi": {"driver": "test1"}})
# Upstream TestIsSchedulableAfterCSIDriverChange (v1.37.2): (name, pod, old, new, error, hint).
CSI_DRIVER_CHANGE_ROWS = [
    ("pod has no CSIDriver", _make_pod(), _driver("test1", None), _driver("test1", True), False,
     QueueingHint.QUEUE_SKIP),
    ("unexpected objects are passed", _make_pod(), _NOT_AN_OBJECT, _NOT_AN_OBJECT, True, QueueingHint.QUEUE),
    ("driver name in pod and csidriver name are different", _WITH_CSI_TEST1, _driver("test2", True),
     _driver("test2", False), False, QueueingHint.QUEUE_SKIP),
    ("original StorageCapacity is nil", _WITH_CSI_TEST1, _driver("test1", None), _driver("test1", None), False,
     QueueingHint.QUEUE_SKIP),
    ("original StorageCapacity is false", _WITH_CSI_TEST1, _driver("test1", False), _driver("test1", False), False,
     QueueingHint.QUEUE_SKIP),
    ("modified StorageCapacity is nil", _WITH_CSI_TEST1, _driver("test1", True), _driver("test1", None), False,
     QueueingHint.QUEUE),
    ("modified StorageCapacity is true", _WITH_CSI_TEST1, _driver("test1", True), _driver("test1", True), False,
     QueueingHint.QUEUE_SKIP),
    ("modified StorageCapacity is false", _WITH_CSI_TEST1, _driver("test1", True), _driver("test1", False), False,
     QueueingHint.QUEUE),
]


@pytest.mark.parametrize("name,the_pod,old,new,err,want", CSI_DRIVER_CHANGE_ROWS,
                         ids=[r[0] for r in CSI_DRIVER_CHANGE_ROWS])
def test_is_schedulable_after_csi_driver_change(name, the_pod, old, new, err, want):
    hint, error = VolumeBinding(handle=Handle()).is_schedulable_after_csi_driver_change(the_pod, old, new)
    assert hint == want and (error is not None) == err


@pytest.mark.parametrize("old,new,want", [
    ("test1,test2", "test2,test1", QueueingHint.QUEUE),  # the same plugins, another string
    ("test1", "test1,", QueueingHint.QUEUE),
    (None, "", QueueingHint.QUEUE_SKIP),  # absent and empty read the same
], ids=["reordered", "trailing-comma", "absent-to-empty"])
def test_is_schedulable_after_csi_node_change_compares_the_annotation_text(old, new, want):
    """Not upstream's table: isSchedulableAfterCSINodeChange compares the migrated-plugins
    annotation's values as strings, not as sets of plugins."""
    hint, error = VolumeBinding(handle=Handle()).is_schedulable_after_csi_node_change(
        _make_pod(), _csi_node(old), _csi_node(new))
    assert (hint, error) == (want, None)
