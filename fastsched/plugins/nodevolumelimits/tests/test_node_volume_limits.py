"""NodeVolumeLimits: cases of upstream's ``csi_test.go`` (TestCSILimits) and the vectorized
Filter against the per-node one."""
from __future__ import annotations

import pytest

from fastsched.api.load import load_objects
from fastsched.framework.cycle_state import CycleState
from fastsched.framework.interface import ActionType, EventResource, QueueingHint
from fastsched.framework.status import Code, Status
from fastsched.plugins.nodevolumelimits import ERR_REASON_MAX_VOLUME_COUNT_EXCEEDED, NodeVolumeLimits
from fastsched.snapshot import build_snapshot
from fastsched.plugins.helper.tests.volumes import (Handle, assert_window_mask_agrees, csi_node_manifest, node, pod, pv_manifest, pvc_manifest,
                                   storage_class_manifest)

EBS = "ebs.csi.aws.com"
GCE = "pd.csi.storage.gke.io"
EXCEEDED = Status(Code.UNSCHEDULABLE, ERR_REASON_MAX_VOLUME_COUNT_EXCEEDED)


def _objects():
    objs = [storage_class_manifest("csi-sc", provisioner=EBS, binding_mode="Immediate"),
            storage_class_manifest("csi-sc-gce", provisioner=GCE, binding_mode="Immediate"),
            storage_class_manifest("intree-sc", provisioner="kubernetes.io/aws-ebs", binding_mode="Immediate")]
    for i in range(6):
        objs.append(pv_manifest(f"csi-ebs.csi.aws.com-{i}", source={"csi": {"driver": EBS, "volumeHandle": f"h{i}"}}))
        objs.append(pvc_manifest(f"csi-ebs.csi.aws.com-{i}", volume_name=f"csi-ebs.csi.aws.com-{i}"))
    objs.append(pv_manifest("csi-gce-0", source={"csi": {"driver": GCE, "volumeHandle": "g0"}}))
    objs.append(pvc_manifest("csi-gce-0", volume_name="csi-gce-0"))
    objs.append(pvc_manifest("unbound-0", storage_class="csi-sc"))         # pending: counted via the class
    objs.append(pvc_manifest("unbound-1", storage_class="csi-sc"))
    objs.append(pvc_manifest("no-sc-unbound"))                              # no class: not counted
    objs.append(pvc_manifest("invalid-pv", volume_name="missing-pv", storage_class="csi-sc"))  # counted via class
    objs.append(pvc_manifest("invalid-pv-invalid-sc", volume_name="missing-pv", storage_class="nope"))
    objs.append(pv_manifest("intree-0", source={"awsElasticBlockStore": {"volumeID": "vol-0"}}))
    objs.append(pvc_manifest("intree-0", volume_name="intree-0"))
    objs.append(pvc_manifest("intree-unbound", storage_class="intree-sc"))
    return objs


def _claims(*names):
    return list(names)


CASES = [
    # name, new pod claims, existing pods' claims, limits per driver (None: no CSINode), migrated, want
    ("fits when node volume limit >= new pods CSI volume", ["csi-ebs.csi.aws.com-0"],
     [["csi-ebs.csi.aws.com-1"]], {EBS: 4}, None),
    ("doesn't when node volume limit <= pods CSI volume", ["csi-ebs.csi.aws.com-0"],
     [["csi-ebs.csi.aws.com-1"], ["csi-ebs.csi.aws.com-2"]], {EBS: 2}, EXCEEDED),
    ("should when driver does not support volume limits", ["csi-ebs.csi.aws.com-0"],
     [["csi-ebs.csi.aws.com-1"]], {EBS: None}, None),
    ("count pending PVCs towards volume limit <= pods CSI volume", ["csi-ebs.csi.aws.com-0"],
     [["unbound-0"], ["csi-ebs.csi.aws.com-1"]], {EBS: 2}, EXCEEDED),
    ("count multiple pending pvcs", ["csi-ebs.csi.aws.com-0"], [["unbound-0", "unbound-1"]], {EBS: 2}, EXCEEDED),
    ("should count PVCs with invalid PV name but valid SC", ["csi-ebs.csi.aws.com-0"],
     [["invalid-pv"], ["csi-ebs.csi.aws.com-1"]], {EBS: 2}, EXCEEDED),
    ("should not count PVCs without class", ["csi-ebs.csi.aws.com-0"],
     [["no-sc-unbound"], ["csi-ebs.csi.aws.com-1"]], {EBS: 2}, None),
    ("should not count PVCs with invalid PV name and invalid SC", ["csi-ebs.csi.aws.com-0"],
     [["invalid-pv-invalid-sc"], ["csi-ebs.csi.aws.com-1"]], {EBS: 2}, None),
    ("should not count a volume shared with an existing pod twice", ["csi-ebs.csi.aws.com-0"],
     [["csi-ebs.csi.aws.com-0"], ["csi-ebs.csi.aws.com-1"]], {EBS: 2}, None),
    ("limits of other drivers do not apply", ["csi-gce-0"], [["csi-ebs.csi.aws.com-1"]], {EBS: 1}, None),
    ("no CSINode: no limits", ["csi-ebs.csi.aws.com-0"], [["csi-ebs.csi.aws.com-1"]], None, None),
    ("count in-tree volumes if migration is enabled", ["intree-0"], [["csi-ebs.csi.aws.com-1"]], {EBS: 1}, EXCEEDED),
    ("in-tree unbound claims count through the class", ["intree-unbound"], [["csi-ebs.csi.aws.com-1"]], {EBS: 1},
     EXCEEDED),
    ("not counted without a CSINode (migration off)", ["intree-0"], [["intree-unbound"]], None, None),
]


def _same(a, b) -> bool:
    if a is None or b is None:
        return a is None and b is None
    return a.code() == b.code() and a.reasons() == b.reasons()


@pytest.mark.parametrize("name,new_claims,existing,limits,want", CASES, ids=[c[0] for c in CASES])
def test_csi_limits(name, new_claims, existing, limits, want):
    objects = _objects()
    if limits is not None:
        objects.append(csi_node_manifest("node-1", limits))
    n1 = node("node-1")
    pods = [pod(f"e{i}", claims, node_name="node-1") for i, claims in enumerate(existing)]
    snapshot = build_snapshot([n1], pods)
    batch = snapshot.batch()
    pl = NodeVolumeLimits(Handle(objects))
    p = pod("p", new_claims)
    state = CycleState()
    _, pre = pl.pre_filter(state, p, batch)
    assert pre is None
    assert _same(pl.filter(state, p, batch[0]), want)
    v = pl.filter_vectorized(state, p, batch)
    assert _same(v if isinstance(v, Status) else v.status(0), want)


def test_inline_ebs_counts_with_migration_and_skip_without_volumes():
    objects = [csi_node_manifest("node-1", {EBS: 1})]
    existing = pod("e", extra=[{"name": "x", "awsElasticBlockStore": {"volumeID": "aws://us-east-1a/vol-1"}}],
                   node_name="node-1")
    snapshot = build_snapshot([node("node-1")], [existing])
    pl = NodeVolumeLimits(Handle(objects))
    same = pod("p", extra=[{"name": "x", "awsElasticBlockStore": {"volumeID": "vol-1"}}])
    other = pod("q", extra=[{"name": "x", "awsElasticBlockStore": {"volumeID": "vol-2"}}])
    batch = snapshot.batch()
    assert pl.filter(CycleState(), same, batch[0]) is None            # the same volume, translated: counted once
    assert _same(pl.filter(CycleState(), other, batch[0]), EXCEEDED)
    assert pl.pre_filter(CycleState(), pod("r"), batch)[1].code() == Code.SKIP
    assert pl.pre_filter(CycleState(), pod("r", extra=[{"name": "e", "emptyDir": {}}]), batch)[1].code() == Code.SKIP


def test_missing_and_foreign_ephemeral_claims():
    pl = NodeVolumeLimits(Handle([csi_node_manifest("node-1", {EBS: 1})]))
    snapshot = build_snapshot([node("node-1")])
    eph = pod("abc", extra=[{"name": "xyz", "ephemeral": {"volumeClaimTemplate": {"spec": {
        "accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}}}}], namespace="test")
    got = pl.filter(CycleState(), eph, snapshot.batch()[0])
    assert _same(got, Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
                             'looking up PVC test/abc-xyz: persistentvolumeclaim "abc-xyz" not found'))
    pl = NodeVolumeLimits(Handle([csi_node_manifest("node-1", {EBS: 1}),
                                  pvc_manifest("abc-xyz", namespace="test", storage_class="csi-sc")]))
    got = pl.filter(CycleState(), eph, snapshot.batch()[0])
    assert _same(got, Status(Code.ERROR, "PVC test/abc-xyz was not created for pod test/abc (pod is not owner)"))


# -- v1.37: VolumeLimitScaling (csi_test.go TestVolumeLimitScalingGate at v1.37.2) ------------------
def _csi_driver(name, prevent):
    from fastsched.api.storage import parse_csi_driver

    spec = {} if prevent is None else {"preventPodSchedulingIfMissing": prevent}
    return parse_csi_driver({"apiVersion": "storage.k8s.io/v1", "kind": "CSIDriver", "metadata": {"name": name},
                             "spec": spec})


NOT_INSTALLED = Status(Code.UNSCHEDULABLE, f"{EBS} CSI driver is not installed on the node")


# Upstream v1.37.2 csi_test.go, TestVolumeLimitScalingGate, row by row under upstream's names
# (enableVolumeLimitScaling as the plugin's gate; limitSource "no-csi-driver" is a CSINode listing
# no driver, "csinode" one listing the EBS driver with the row's limit; csiDriverPresent and
# preventPodSchedulingIfMissing pick the CSIDriver object: absent, without the field (nil), or
# with it true), then fastsched's own rows.
VOLUME_LIMIT_SCALING_CASES = [
    # (name, gate, CSINode drivers and limits (None: no CSINode), CSIDriver's field, want)
    ("gate enabled - allow scheduling when CSIDriver exists but PreventPodSchedulingIfMissing is not set",
     True, {}, None, None),
    ("gate enabled - fail when driver not installed and PreventPodSchedulingIfMissing is true",
     True, {}, True, NOT_INSTALLED),
    ("gate disabled - skip driver presence check (regardless of CSIDriver presence)", False, {}, True, None),
    ("gate enabled - driver installed within limit", True, {EBS: 2}, True, None),
    ("gate enabled - allow scheduling when CSIDriver object missing", True, {}, "absent", None),
    # fastsched rows: the field set to false; no CSINode at all (not installed)
    ("fastsched: PreventPodSchedulingIfMissing false", True, {}, False, None),
    ("fastsched: no CSINode", True, None, True, NOT_INSTALLED),
]


@pytest.mark.parametrize("name,gate,csi_node_drivers,driver_prevent,want", VOLUME_LIMIT_SCALING_CASES,
                         ids=[c[0] for c in VOLUME_LIMIT_SCALING_CASES])
def test_volume_limit_scaling_gate(name, gate, csi_node_drivers, driver_prevent, want):
    objects = _objects()
    if csi_node_drivers is not None:
        objects.append(csi_node_manifest("node-1", csi_node_drivers))
    if driver_prevent != "absent":
        objects.append(_csi_driver(EBS, driver_prevent))
    snapshot = build_snapshot([node("node-1"), node("node-2")])
    batch = snapshot.batch()
    pl = NodeVolumeLimits(Handle(objects), enable_volume_limit_scaling=gate)
    p = pod("p", ["csi-ebs.csi.aws.com-0"])
    state = CycleState()
    assert pl.pre_filter(state, p, batch)[1] is None
    per_node = {ni.node().name: pl.filter(state, p, ni) for ni in batch}
    assert _same(per_node["node-1"], want)
    v = pl.filter_vectorized(state, p, batch)
    for i, ni in enumerate(batch):
        assert _same(v if isinstance(v, Status) else v.status(i), per_node[ni.node().name])
    # node-2 has no CSINode: refused whenever the driver asks to be present
    assert _same(per_node["node-2"], NOT_INSTALLED if gate and driver_prevent is True else None)


def test_volume_limit_scaling_checks_volumes_shared_with_existing_pods_and_before_limits():
    """The check runs over every new volume before the limits and before volumes already attached
    by the node's pods are dropped (csi.go Filter order)."""
    objects = _objects() + [csi_node_manifest("node-1", {GCE: 0}), _csi_driver(EBS, True)]
    existing = pod("e", ["csi-ebs.csi.aws.com-0"], node_name="node-1")
    snapshot = build_snapshot([node("node-1")], [existing])
    batch = snapshot.batch()
    pl = NodeVolumeLimits(Handle(objects))
    p = pod("p", ["csi-ebs.csi.aws.com-0", "csi-gce-0"])
    assert _same(pl.filter(CycleState(), p, batch[0]), NOT_INSTALLED)   # not the GCE limit's "exceed"
    v = pl.filter_vectorized(CycleState(), p, batch)
    assert _same(v if isinstance(v, Status) else v.status(0), NOT_INSTALLED)


def test_new_reads_the_gate():
    import types

    from fastsched.features import FeatureGates
    from fastsched.plugins.nodevolumelimits import new

    assert new(None, types.SimpleNamespace(client=None, feature_gates=FeatureGates())).enable_volume_limit_scaling
    assert new(None, None).enable_volume_limit_scaling   # no handle: v1.37.2's defaults


def test_inline_portworx_counts_without_the_migrated_plugins_annotation():
    """v1.37 utils.go isCSIMigrationOn: Portworx is migrated wherever a CSINode exists (v1.34 also
    wanted the CSINode's migrated-plugins annotation to list it)."""
    px = "pxd.portworx.com"
    objects = [csi_node_manifest("node-1", {px: 1})]
    existing = pod("e", extra=[{"name": "x", "portworxVolume": {"volumeID": "px-1"}}], node_name="node-1")
    snapshot = build_snapshot([node("node-1")], [existing])
    pl = NodeVolumeLimits(Handle(objects))
    other = pod("q", extra=[{"name": "x", "portworxVolume": {"volumeID": "px-2"}}])
    assert _same(pl.filter(CycleState(), other, snapshot.batch()[0]), EXCEEDED)


def test_scheduler_refuses_nodes_without_a_driver_that_must_be_present():
    """End to end, from manifests (spec.preventPodSchedulingIfMissing in the API schema)."""
    from fastsched import Scheduler
    from fastsched.sim.storage import csi_node_manifest as csinode

    s = Scheduler(seed=0)
    s.add([{"apiVersion": "v1", "kind": "Node", "metadata": {"name": n, "labels": {"kubernetes.io/hostname": n}},
            "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"}}} for n in ("node-a", "node-b")])
    s.add([csinode("node-a", {}), csinode("node-b", {EBS: 10}),
           {"apiVersion": "storage.k8s.io/v1", "kind": "CSIDriver", "metadata": {"name": EBS},
            "spec": {"preventPodSchedulingIfMissing": True}},
           pv_manifest("vol", source={"csi": {"driver": EBS, "volumeHandle": "h"}}, claim=("default", "data"),
                       phase="Bound"),
           pvc_manifest("data", volume_name="vol", bound=True)])
    s.add_pod(pod("p", ["data"]))
    (r,) = s.run()
    assert r.node_name == "node-b"
    s2 = Scheduler(seed=0)
    s2.add([{"apiVersion": "v1", "kind": "Node", "metadata": {"name": "node-a"},
             "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"}}}])
    s2.add([csinode("node-a", {}), {"apiVersion": "storage.k8s.io/v1", "kind": "CSIDriver", "metadata": {"name": EBS},
                                    "spec": {"preventPodSchedulingIfMissing": True}},
            pv_manifest("vol", source={"csi": {"driver": EBS, "volumeHandle": "h"}}, claim=("default", "data"),
                        phase="Bound"),
            pvc_manifest("data", volume_name="vol", bound=True)])
    s2.add_pod(pod("p", ["data"]))
    (r,) = s2.run()
    assert r.status == "Unschedulable"
    assert f"1 {EBS} CSI driver is not installed on the node" in r.message


@pytest.mark.parametrize("seed", range(6))
def test_volume_limit_scaling_vectorized_agrees_on_random_clusters(seed):
    """fastsched.sim.storage.random_storage_cluster with drivers that must be present, CSINodes
    missing some of them (or absent), pods already running: the vectorized Filter equals the
    per-node one on every node, and the driver check really refuses some."""
    import random

    from fastsched.api.load import load_objects
    from fastsched.sim.storage import random_storage_cluster

    rng = random.Random(seed)
    node_ms, object_ms, pod_ms = random_storage_cluster(seed, nodes=16, pvs=20, claims=30)
    objects = []
    for m in object_ms:
        if m["kind"] == "CSINode" and rng.random() < 0.5:
            drivers = m["spec"]["drivers"]
            m = {**m, "spec": {"drivers": [d for d in drivers if d["name"] != rng.choice(drivers)["name"]]}}
        if m["kind"] == "CSIDriver":
            m = {**m, "spec": {**m["spec"], "preventPodSchedulingIfMissing": True}}
        objects.append(m)
    objects.append({"apiVersion": "storage.k8s.io/v1", "kind": "CSIDriver", "metadata": {"name": EBS},
                    "spec": {"preventPodSchedulingIfMissing": rng.random() < 0.7}})
    nodes = load_objects(node_ms)
    pods = load_objects(pod_ms)
    running = [p.with_node_name(rng.choice(nodes).name) for p in pods[: len(pods) // 3]]
    incoming = pods[len(pods) // 3:]
    snapshot = build_snapshot(nodes, running)
    batch = snapshot.batch()
    pl = NodeVolumeLimits(Handle(load_objects(objects, validate=False)))
    refused = wrote = 0
    for p in incoming:
        state = CycleState()
        if pl.pre_filter(state, p, batch)[1] is not None:
            continue
        per_node = [pl.filter(state, p, ni) for ni in batch]
        v = pl.filter_vectorized(state, p, batch)
        for i, want in enumerate(per_node):
            assert _same(v if isinstance(v, Status) else v.status(i), want), (p.name, batch[i].node().name)
        wrote += assert_window_mask_agrees(pl, state, p, batch, v, seed)
        refused += sum(1 for s in per_node if s is not None and "CSI driver is not installed" in s.message())
    assert refused > 0 and wrote > 0


@pytest.mark.parametrize("seed", range(6))
def test_vectorized_agrees_without_any_csinode(seed):
    """The vectorized Filter's shortcut when no node has a CSINode (no limits anywhere: one verdict
    for every row) against the per-node Filter on random storage clusters without CSINodes,
    VolumeLimitScaling's missing-driver refusal and pods whose claims do not exist included."""
    import random

    from fastsched.api.load import load_objects
    from fastsched.sim.storage import random_storage_cluster

    rng = random.Random(seed)
    node_ms, object_ms, pod_ms = random_storage_cluster(seed, nodes=16, pvs=20, claims=30)
    objects = [m for m in object_ms if m["kind"] != "CSINode"]
    objects = [{**m, "spec": {**m["spec"], "preventPodSchedulingIfMissing": rng.random() < 0.5}}
               if m["kind"] == "CSIDriver" else m for m in objects]
    objects.append({"apiVersion": "storage.k8s.io/v1", "kind": "CSIDriver", "metadata": {"name": EBS},
                    "spec": {"preventPodSchedulingIfMissing": rng.random() < 0.7}})
    nodes = load_objects(node_ms)
    pods = load_objects(pod_ms)
    running = [p.with_node_name(rng.choice(nodes).name) for p in pods[: len(pods) // 3]]
    incoming = pods[len(pods) // 3:] + [pod(f"lost-{i}", [f"missing-{i}"]) for i in range(2)]
    batch = build_snapshot(nodes, running).batch()
    pl = NodeVolumeLimits(Handle(load_objects(objects, validate=False)))
    refused = wrote = 0
    for p in incoming:
        state = CycleState()
        if pl.pre_filter(state, p, batch)[1] is not None:
            continue
        per_node = [pl.filter(state, p, ni) for ni in batch]
        v = pl.filter_vectorized(state, p, batch)
        for i, want in enumerate(per_node):
            assert _same(v if isinstance(v, Status) else v.status(i), want), (p.name, batch[i].node().name)
        wrote += assert_window_mask_agrees(pl, state, p, batch, v, seed)
        refused += sum(1 for s in per_node if s is not None)
    assert refused > 0 and wrote > 0


def _foreign_ephemeral_pod(name, node_name=None):
    """A pod whose ephemeral volume's claim exists but is not owned by it (reading it fails)."""
    return pod(name, extra=[{"name": "xyz", "ephemeral": {"volumeClaimTemplate": {"spec": {
        "accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}}}}], namespace="test",
        node_name=node_name)


@pytest.mark.parametrize("limits,want_error", [({EBS: 1}, True), ({EBS: None}, False), (None, False)],
                         ids=["other-driver-limited", "no-count", "no-csinode"])
def test_existing_pods_are_read_where_the_node_has_any_limit(limits, want_error):
    """csi.go Filter lists the node's pods once the CSINode has any limit, whatever drivers the
    new pod's volumes use: an existing pod whose volumes cannot be read is an Error there, in the
    vectorized Filter too; and the pod's filter_pod_dependence_of says the verdict reads the pods."""
    objects = _objects() + [pvc_manifest("e-xyz", namespace="test", storage_class="csi-sc")]
    if limits is not None:
        objects.append(csi_node_manifest("node-1", limits))
    snapshot = build_snapshot([node("node-1"), node("node-2")], [_foreign_ephemeral_pod("e", "node-1")])
    batch = snapshot.batch()
    pl = NodeVolumeLimits(Handle(objects))
    p = pod("p", ["csi-gce-0"])   # GCE: no limit for its driver on any node
    state = CycleState()
    per_node = [pl.filter(state, p, view) for view in batch]
    assert (per_node[0] is not None and per_node[0].code() == Code.ERROR) == want_error
    assert per_node[1] is None
    v = pl.filter_vectorized(state, p, batch)
    assert all(_same(v.status(i), want) for i, want in enumerate(per_node))
    # the compiled cycle's window mask takes no Error verdict (the verdicts' path answers then)
    assert assert_window_mask_agrees(pl, state, p, batch, v) != want_error
    from fastsched.runtime.nominated import NODE_ONLY
    assert (pl.filter_pod_dependence_of(state, p, snapshot.table) == NODE_ONLY) == (limits in (None, {EBS: None}))
    # a pod without volumes, or whose own claim is missing: the same verdict on every node
    assert pl.filter_pod_dependence_of(state, pod("q"), snapshot.table) == NODE_ONLY
    assert pl.filter_pod_dependence_of(state, pod("r", ["nope"]), snapshot.table) == NODE_ONLY


@pytest.mark.parametrize("seed", range(3))
def test_kept_driver_maximum_follows_pods_coming_and_going(seed):
    """The per-driver maximum the vectorized Filter keeps between cycles (its table-wide bound)
    equals its count column's maximum after pods are added to and removed from the table, the
    row holding the maximum included; and the vectorized Filter still equals the per-node one
    on every node (a maximum kept too low would skip a node over its limit; so would a wrong
    remembered part of a filtered pod bound afterwards)."""
    import random

    from fastsched.api.load import load_objects

    rng = random.Random(seed)
    names = [f"node-{i}" for i in range(4)]
    objects = []
    for i in range(8):
        objects.append(pv_manifest(f"v{i}", source={"csi": {"driver": EBS, "volumeHandle": f"h{i}"}}))
        objects.append(pvc_manifest(f"c{i}", volume_name=f"v{i}"))
    objects += [csi_node_manifest(n, {EBS: 3}) for n in names]
    snapshot = build_snapshot([node(n) for n in names], [])
    pl = NodeVolumeLimits(Handle(load_objects(objects, validate=False)))
    placed: list = []
    checked = refused = 0
    incoming = None
    for step in range(40):
        if placed and (rng.random() < 0.4 or len(placed) > 10):
            p, at = placed.pop(rng.randrange(len(placed)))
            snapshot.remove_pod(p, at)
        else:
            at = rng.choice(names)
            # half the time the pod the last step filtered, bound as the scheduler binds it (what
            # it attaches is remembered from its Filter for its row's reload)
            p = incoming.with_node_name(at) if incoming is not None and rng.random() < 0.5 else \
                pod(f"e{step}", [f"c{rng.randrange(8)}"], node_name=at)
            snapshot.add_pod(p, at)
            placed.append((p, at))
        batch = snapshot.batch()
        incoming = pod(f"in{step}", [f"c{j}" for j in rng.sample(range(8), 2)])
        state = CycleState()
        assert pl.pre_filter(state, incoming, batch)[1] is None
        v = pl.filter_vectorized(state, incoming, batch)
        for i in range(len(batch)):
            want = pl.filter(state, incoming, batch[i])
            assert _same(v if isinstance(v, Status) else v.status(i), want), (step, batch[i].node().name)
            refused += want is not None
        col = pl._counts.get(EBS)
        if col is not None and EBS in pl._count_max:
            assert pl._count_max[EBS] == int(col.max()), step
            checked += 1
    assert checked > 10 and refused > 0


# -- queueing hints ---------------------------------------------------------------------------------
def _hpod(name: str = "p", namespace: str = "default", *volumes: dict, node_name: str = ""):
    """``st.MakePod()`` with the volumes, read without validation (upstream's volumes are sparse)."""
    spec: dict = {"containers": [{"name": "c", "image": "img"}], "volumes": list(volumes)}
    if node_name:
        spec["nodeName"] = node_name
    manifest = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": namespace}, "spec": spec}
    return load_objects([manifest], validate=False)[0]


def _pvc_volume(claim: str, name: str = "v") -> dict:
    return {"name": name, "persistentVolumeClaim": {"claimName": claim}}


# Upstream TestCSILimitsQHint (v1.37.2; isSchedulableAfterAssignedPodDeleted): (name, deleted pod's
# volumes, whether it was scheduled, hint). The pod waiting is podEbs (claim csi-ebs.csi.aws.com-2);
# a scheduled deleted pod is on upstream's "csiNode".
ASSIGNED_POD_DELETED_ROWS = [
    ("return a Queue when a deleted pod has a PVC", [_pvc_volume("placeholder")], True, QueueingHint.QUEUE),
    ("return a Queue when a deleted pod has a inline migratable volume",
     [{"name": "v", "awsElasticBlockStore": {}}], True, QueueingHint.QUEUE),
    ("return a QueueSkip when a deleted pod doesn't have any volume", [], True, QueueingHint.QUEUE_SKIP),
    ("return a QueueSkip when a deleted pod is not scheduled.", [_pvc_volume("csi-ebs.csi.aws.com-0")], False,
     QueueingHint.QUEUE_SKIP),
]


@pytest.mark.parametrize("name,volumes,scheduled,want", ASSIGNED_POD_DELETED_ROWS,
                         ids=[r[0] for r in ASSIGNED_POD_DELETED_ROWS])
def test_is_schedulable_after_assigned_pod_deleted(name, volumes, scheduled, want):
    waiting = _hpod("p", "default", _pvc_volume("csi-ebs.csi.aws.com-2"))
    deleted = _hpod("d", "default", *volumes, node_name="csiNode" if scheduled else "")
    plugin = NodeVolumeLimits(Handle())
    assert plugin.is_schedulable_after_assigned_pod_deleted(waiting, deleted, None) == (want, None)


# Upstream TestCSILimitsAddedPVCQHint (v1.37.2; isSchedulableAfterPVCAdded): (name, pod, added claim
# (name, namespace), hint). st.MakePersistentVolumeClaim() without Name has the name "".
ADDED_PVC_ROWS = [
    ("a pod isn't in the same namespace as an added PVC", _hpod("p", "ns1"), ("", "ns2"), QueueingHint.QUEUE_SKIP),
    ("a pod is in the same namespace as an added PVC", _hpod("p", "ns1", _pvc_volume("pvc1")), ("pvc1", "ns1"),
     QueueingHint.QUEUE),
    ("a pod has an ephemeral volume related to an added PVC", _hpod("pod1", "ns1", {"name": "ephemeral", "ephemeral": {}}),
     ("pod1-ephemeral", "ns1"), QueueingHint.QUEUE),
    ("a pod doesn't have the same PVC as an added PVC", _hpod("p", "ns1", _pvc_volume("pvc1")), ("pvc2", "ns1"),
     QueueingHint.QUEUE_SKIP),
    ("a pod doesn't have any PVC attached", _hpod("p", "ns1"), ("pvc2", "ns1"), QueueingHint.QUEUE_SKIP),
]


@pytest.mark.parametrize("name,the_pod,claim,want", ADDED_PVC_ROWS, ids=[r[0] for r in ADDED_PVC_ROWS])
def test_is_schedulable_after_pvc_added(name, the_pod, claim, want):
    added = load_objects([pvc_manifest(claim[0], namespace=claim[1])], validate=False)[0]
    assert NodeVolumeLimits(Handle()).is_schedulable_after_pvc_added(the_pod, None, added) == (want, None)


# Upstream TestCSILimitsAfterCSINodeUpdatedQHint (v1.37.2; isSchedulableAfterCSINodeUpdated): (name, old
# ebs.csi.aws.com count, new count, hint) on CSINode "test-node".
CSI_NODE_UPDATED_ROWS = [
    ("limit raised, queue", 1, 2, QueueingHint.QUEUE),
    ("limit decreased, skip queueing", 2, 1, QueueingHint.QUEUE_SKIP),
    ("limit unchanged, skip queueing", 1, 1, QueueingHint.QUEUE_SKIP),
]


@pytest.mark.parametrize("name,old_count,new_count,want", CSI_NODE_UPDATED_ROWS,
                         ids=[r[0] for r in CSI_NODE_UPDATED_ROWS])
def test_is_schedulable_after_csi_node_updated(name, old_count, new_count, want):
    old, new = load_objects([csi_node_manifest("test-node", {EBS: old_count}),
                             csi_node_manifest("test-node", {EBS: new_count})], validate=False)
    test_pod = _hpod("test-pod", "ns1", _pvc_volume("csi-ebs.csi.aws.com-0"))
    assert NodeVolumeLimits(Handle()).is_schedulable_after_csi_node_updated(test_pod, old, new) == (want, None)


def test_events_to_register():
    """v1.37.2 csi.go EventsToRegister: CSINode/Add without a hint, CSINode/Update with
    isSchedulableAfterCSINodeUpdated, and the three others with theirs.

    Not transcribed: TestCSILimitsDeletedVolumeAttachmentQHint (6 rows): fastsched has no
    VolumeAttachment kind (see the module docstring), so no such object is ever deleted and the
    event, registered as upstream's, carries no hint."""
    events = NodeVolumeLimits(Handle()).events_to_register()
    assert [(e.event.resource, e.event.action_type, e.queueing_hint_fn is not None) for e in events] == [
        (EventResource.CSI_NODE, ActionType.ADD, False),
        (EventResource.CSI_NODE, ActionType.UPDATE, True),
        (EventResource.ASSIGNED_POD, ActionType.DELETE, True),
        (EventResource.PERSISTENT_VOLUME_CLAIM, ActionType.ADD, True),
        (EventResource.VOLUME_ATTACHMENT, ActionType.DELETE, False)]


def test_scheduler_requeues_the_pod_when_a_csi_node_limit_is_raised():
    """A pod over the node's EBS limit comes back as soon as the node's CSINode raises the limit
    (CSINode/Update, isSchedulableAfterCSINodeUpdated: Queue), not at the 5-minute unschedulable
    timeout; an update raising no limit leaves it where it is (QueueSkip)."""
    from fastsched.scheduler import Scheduler

    s = Scheduler()
    s.add_node(node("node-1"))
    s.add([*_objects(), csi_node_manifest("node-1", {EBS: 1})])
    s.add_pod(pod("existing", ["csi-ebs.csi.aws.com-0"], node_name="node-1"))
    s.add_pod(pod("p", ["csi-ebs.csi.aws.com-1"]))
    (r,) = s.run(until=s.clock.now() + 60)
    assert r.status == "Unschedulable" and ERR_REASON_MAX_VOLUME_COUNT_EXCEEDED in r.message and r.attempts == 1
    s.update_object(csi_node_manifest("node-1", {EBS: 1}, topology_keys=("zone",)))  # no limit raised
    (r,) = s.run(until=s.clock.now() + 60)
    assert r.status == "Unschedulable" and r.attempts == 1
    s.update_object(csi_node_manifest("node-1", {EBS: 2}))
    (r,) = s.run(until=s.clock.now() + 60)
    assert r.status == "Scheduled" and r.node_name == "node-1"


def _aggregates(pl):
    counts = {d: c.tolist() for d, c in pl._counts.items() if c.any()}
    rows = {u: sorted(r) for u, r in pl._rows_of_volume.items() if r}
    maxima = {d: pl._driver_max(d, c) for d, c in pl._counts.items()}
    return counts, rows, maxima, sorted(pl._error_rows)


@pytest.mark.parametrize("seed", range(8))
def test_row_change_deltas_agree_with_full_swaps(seed):
    """_on_row_change takes a dict-to-dict change as the entries that differ; the aggregates
    (per-driver counts, their kept maxima, each volume's rows, the error rows) equal those of
    taking the whole old value out and the whole new one in, on seeded random row histories
    (values growing and shrinking by a few volumes, unique names moving between drivers,
    error texts and emptied rows among them)."""
    import random

    rng = random.Random(seed)
    drivers = ["a", "b", "a/x", "c"]
    delta, swap = NodeVolumeLimits(Handle([])), NodeVolumeLimits(Handle([]))
    capacity = 6
    for pl in (delta, swap):
        pl._on_reset(capacity)
    values: dict[int, object] = {}
    for step in range(400):
        row = rng.randrange(capacity)
        old = values.get(row)
        roll = rng.random()
        if roll < 0.08:
            new = "error text" if rng.random() < 0.5 else None
        else:
            new = dict(old) if isinstance(old, dict) else {}
            for _ in range(rng.randint(1, 3)):
                unique = f"v{rng.randrange(12)}"
                if rng.random() < 0.35:
                    new.pop(unique, None)
                else:
                    new[unique] = rng.choice(drivers)  # a name may move to another driver
        if new == old:
            continue  # RowCache calls on_change only for a changed value
        values[row] = new
        delta._on_row_change(row, old, new)
        if old is not None:
            swap._on_row_change(row, old, None)
        if new is not None:
            swap._on_row_change(row, None, new)
        if step % 7 == 0:  # the maxima asked between changes, as the Filter does
            assert _aggregates(delta) == _aggregates(swap), step
    assert _aggregates(delta) == _aggregates(swap)
