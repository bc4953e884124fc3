"""Bulk adds and lazily built objects of the node table, against one-at-a-time adds and eager objects.

A table built with ``add_nodes`` / ``add_pods`` must equal, column for column and view for view,
one built with ``add_node`` / ``add_pod`` for each object in turn, and stay equal under the same
incremental updates, whether or not its Python objects (Nodes, PodInfo lists) were built before.
"""
import random
import uuid

import numpy as np
import pytest

from fastsched._kernels import _table
from fastsched.api import Pod
from fastsched.framework.types import PodInfo
from fastsched.sim.generators import PodFactory, generate_cluster, upstream_nodes
from fastsched.snapshot import NodeTable, Snapshot, build_snapshot
from fastsched.snapshot.table import FLAG_UID_STRING
from fastsched.testing import make_node, make_pod, random_cluster, random_existing_pod


def table_state(t: NodeTable, *, objects: bool = True) -> dict:
    """Everything a plugin or the scheduler can read from the table, rows by name."""
    live = np.flatnonzero(t.live)
    state = {
        "row_of": dict(t.row_of), "names": t.node_names[live].tolist(), "live": live.tolist(),
        "resources": list(t.resource_names), "taint_sets": list(t.taint_sets),
        "version": t.version, "node_version": t.node_version, "capacity": t.capacity,
        "totals": (t.total_pods_with_affinity, t.total_pods_with_req_anti, t.total_terminating_pods),
        "labels": {k: col[live].tolist() for k, col in t.label_codes.items()},
        "label_values": {k: list(v) for k, v in t.label_values.items()},
        "images": {k: dict(v) for k, v in t.image_rows.items() if v},
        "signatures": [(s, dict(r)) for s, r in zip(t.pod_signatures, t.signature_rows)],
        "affinity": [(s, dict(r)) for s, r in zip(t.affinity_signatures, t.affinity_signature_rows)],
    }
    for name in ("alloc", "requested", "nonzero_requested", "allowed_pods", "pod_count", "unschedulable",
                 "taint_set", "has_host_ports", "pods_with_affinity", "pods_with_req_anti", "terminating_pods",
                 "row_version"):
        state[name] = getattr(t, name)[live].tolist()
    assert int(np.sum(t.pods_with_affinity)) == t.total_pods_with_affinity
    assert int(np.sum(t.pods_with_req_anti)) == t.total_pods_with_req_anti
    assert int(np.sum(t.terminating_pods)) == t.total_terminating_pods
    if objects:
        state["pods"] = {int(r): [pi.pod.uid for pi in t.pods[r]] for r in live}  # in the table's order
        state["pod_objects"] = {int(r): [pi.pod for pi in t.pods[r]] for r in live}
        state["nodes"] = {int(r): t.nodes[r] for r in live}
        state["ports"] = {int(r): sorted(t.ports[r].items()) if t.ports[r] else None for r in live}
    return state


def sequential_snapshot(nodes, pods) -> Snapshot:
    snap = Snapshot()
    for n in nodes:
        snap.add_node(n)
    for p in pods:
        if p.node_name in snap.table.row_of:
            snap.add_pod(p)
    return snap


def generated_cluster(seed: int, nodes: int = 150, pods: int = 600):
    """Nodes and pods built in code (no manifests): shapes, zones, labels, taints, images, pod
    shapes with labels in two namespaces. Most of them share templates."""
    return generate_cluster({
        "nodes": nodes, "seed": seed, "zones": ["za", "zb", "zc"], "regions": ["r1"],
        "shapes": [{"name": "small", "cpu": 4, "memory": "16Gi", "pods": 30, "weight": 2},
                   {"name": "gpu", "cpu": 16, "memory": "64Gi", "pods": 110, "nvidia.com/gpu": 2, "weight": 1,
                    "labels": {"accelerator": "a100"},
                    "taints": [{"key": "gpu", "value": "yes", "effect": "NoSchedule"}]}],
        "labels": {"disktype": {"values": ["ssd", "hdd"], "probabilities": [0.5, 0.5]}},
        "images": {"pool": [{"name": "nginx:1", "size": "70Mi"}, {"name": "redis:7", "size": "120Mi"}],
                   "per_node": 1},
        "pods": {"count": pods, "shapes": [{"cpu": "100m", "memory": "100Mi", "weight": 3},
                                           {"cpu": "1", "memory": "1Gi", "weight": 1}],
                 "labels": {"app": {"values": ["a", "b", "c"], "probabilities": [0.5, 0.3, 0.2]}},
                 "namespaces": ["default", "prod"]},
    })


CLUSTERS = {
    "manifests": lambda seed: random_cluster(seed, 80, 300),      # parsed objects: kept as they are
    "generated": lambda seed: generated_cluster(seed),            # built in code: templates
}


@pytest.mark.parametrize("kind", sorted(CLUSTERS))
@pytest.mark.parametrize("seed", range(3))
def test_bulk_add_equals_one_by_one(kind, seed):
    nodes, pods = CLUSTERS[kind](seed)
    bulk = build_snapshot(nodes, pods)
    one = sequential_snapshot(*CLUSTERS[kind](seed))
    assert table_state(bulk.table) == table_state(one.table)
    assert bulk.order().tolist() == one.order().tolist()
    for a, b in zip(bulk.batch(), one.batch()):
        assert a.name == b.name and a.node() == b.node()
        assert a.requested == b.requested and a.allocatable == b.allocatable
        assert a.non_zero_requested.milli_cpu == b.non_zero_requested.milli_cpu
        assert a.image_states == b.image_states
        assert [pi.pod.uid for pi in a.pods_with_affinity] == [pi.pod.uid for pi in b.pods_with_affinity]
        assert [pi.pod.uid for pi in a.pods_with_required_anti_affinity] == \
            [pi.pod.uid for pi in b.pods_with_required_anti_affinity]


def test_a_resource_per_node_interned_once_in_the_order_of_single_adds():
    """Every node offers its own extended resource (upstream's SchedulingWithExtendedResource):
    the bulk add widens the matrices once and numbers the columns as single adds would."""
    nodes = [make_node(f"n{i}", extra={f"foo.com/bar-{i % 7}": "1", f"example.com/x-{i}": "2"})
             for i in range(30)]
    pods = [make_pod(f"p{i}", node_name=f"n{i}", requests={"cpu": "100m", f"foo.com/bar-{i % 7}": "1"})
            for i in range(0, 30, 3)]
    bulk = build_snapshot(nodes, pods)
    one = sequential_snapshot(nodes, pods)
    expected = ["cpu", "memory", "ephemeral-storage"]
    for i in range(30):
        expected += [name for name in (f"foo.com/bar-{i % 7}", f"example.com/x-{i}") if name not in expected]
    assert bulk.table.resource_names == expected
    assert table_state(bulk.table) == table_state(one.table)
    before = bulk.table.alloc
    bulk.table.intern_resources(["foo.com/bar-1", "example.com/x-3"])  # all known: nothing changes
    assert bulk.table.alloc is before


def test_templated_objects_are_rebuilt_equal_and_shared():
    nodes, pods = generated_cluster(4, nodes=60, pods=300)
    snap = build_snapshot(nodes, pods)
    t = snap.table
    assert (t.node_template[t.live] >= 0).all()          # every node was templated
    assert len(t._node_templates) < len(nodes)
    assert len(t._pod_infos) == 0                         # no PodInfo built yet
    by_name = {n.name: n for n in nodes}
    for row in np.flatnonzero(t.live).tolist():
        node = t.nodes[row]
        assert node == by_name[node.name] and node.uid == by_name[node.name].uid
        assert t.nodes[row] is node                       # built once, then kept
    pods_by_uid = {p.uid: p for p in pods}
    rebuilt = [pi.pod for row in np.flatnonzero(t.live).tolist() for pi in t.pods[row]]
    assert sorted(p.uid for p in rebuilt) == sorted(pods_by_uid)
    for pod in rebuilt:
        assert pod == pods_by_uid[pod.uid]
        assert pod.requests == pods_by_uid[pod.uid].requests
    # (rebuilt by the API objects' copier: the compiled slot copy for Pod and Node)
    from fastsched.api.objects import _make_field_copier
    from fastsched.snapshot.lazy import _copier
    assert _copier(type(rebuilt[0])) is _make_field_copier(type(rebuilt[0]))
    assert _copier(type(nodes[0])) is _make_field_copier(type(nodes[0]))


OPS = ("add_pod", "remove_pod", "remove_node", "add_node", "update_node", "touch")


def random_ops(rng, snaps, nodes, pods, steps, *, factory=None):
    """Apply the same random updates to every snapshot of ``snaps``; ``touch`` builds the lazy
    objects of a random row (in every snapshot) so that built and unbuilt rows both get updated."""
    live_pods = list(pods)
    live_nodes = {n.name: n for n in nodes}
    for step in range(steps):
        op = rng.choice(OPS)
        if op == "add_pod" and live_nodes:
            node = rng.choice(sorted(live_nodes))
            p = (factory(f"late-{step}", node) if factory and rng.random() < 0.5
                 else random_existing_pod(rng, 10_000 + step, node))
            for s in snaps:
                s.add_pod(p)
            live_pods.append(p)
        elif op == "remove_pod" and live_pods:
            p = live_pods.pop(rng.randrange(len(live_pods)))
            for s in snaps:
                s.remove_pod(p)
        elif op == "remove_node" and len(live_nodes) > 1:
            name = rng.choice(sorted(live_nodes))
            removed = [{pi.pod.uid for pi in s.remove_node(name)} for s in snaps]
            assert all(r == removed[0] for r in removed)
            assert removed[0] == {p.uid for p in live_pods if p.node_name == name}
            live_pods = [p for p in live_pods if p.node_name != name]
            del live_nodes[name]
        elif op == "add_node":
            n = make_node(f"new-{step}", cpu=str(rng.randint(1, 8)),
                          labels={"topology.kubernetes.io/zone": rng.choice(("za", "zq"))})
            for s in snaps:
                s.add_node(n)
            live_nodes[n.name] = n
        elif op == "update_node" and live_nodes:
            name = rng.choice(sorted(live_nodes))
            n = make_node(name, cpu="32", labels={"relabelled": "yes", "topology.kubernetes.io/zone": "zb"})
            for s in snaps:
                s.update_node(n)
            live_nodes[name] = n
        elif op == "touch" and live_nodes:
            row = snaps[0].table.row_of[rng.choice(sorted(live_nodes))]
            for s in snaps:
                s.table.pods[row], s.table.nodes[row]
    return live_nodes, live_pods


@pytest.mark.parametrize("kind", sorted(CLUSTERS))
@pytest.mark.parametrize("seed", range(3))
def test_incremental_updates_after_a_bulk_add(kind, seed):
    rng = random.Random(seed)
    nodes, pods = CLUSTERS[kind](seed)
    bulk = build_snapshot(nodes, pods)
    one = sequential_snapshot(*CLUSTERS[kind](seed))
    factory = PodFactory(make_pod("tmpl", cpu="200m", labels={"app": "late"}).replace(manifest={}))
    live_nodes, live_pods = random_ops(
        rng, [bulk, one], nodes, pods, 250,
        factory=lambda name, node: factory.make(name, "default", node_name=node))
    assert table_state(bulk.table) == table_state(one.table)
    assert bulk.order().tolist() == one.order().tolist()
    # and both equal a table built from scratch from what is left (the same pods per node)
    fresh = sequential_snapshot(live_nodes.values(), live_pods)
    have = {n: sorted(pi.pod.uid for pi in bulk.table.pods[r]) for n, r in bulk.table.row_of.items()}
    want = {n: sorted(pi.pod.uid for pi in fresh.table.pods[r]) for n, r in fresh.table.row_of.items()}
    assert have == want


def test_lazy_rows_follow_updates_whether_built_or_not():
    nodes, pods = generated_cluster(7, nodes=40, pods=200)
    eager, lazy = build_snapshot(nodes, pods), build_snapshot(nodes, pods)
    for row in np.flatnonzero(eager.table.live).tolist():  # build every object of one of them
        eager.table.pods[row], eager.table.nodes[row]
    random_ops(random.Random(1), [eager, lazy], nodes, pods, 300)
    assert table_state(lazy.table) == table_state(eager.table)


def test_a_row_keeps_its_list_order_under_removals():
    t = NodeTable()
    t.add_nodes([make_node("n")])
    pods = [make_pod(f"p{i}", node_name="n") for i in range(6)]
    t.add_pods(pods[:4])
    assert [pi.pod.name for pi in t.pods[0]] == ["p0", "p1", "p2", "p3"]
    t.remove_pod("n", pods[1])   # the last pod moves into the gap, as list[i] = list[-1]; pop()
    assert [pi.pod.name for pi in t.pods[0]] == ["p0", "p3", "p2"]
    t.add_pods(pods[4:])
    t.remove_pod("n", pods[0])
    assert [pi.pod.name for pi in t.pods[0]] == ["p5", "p3", "p2", "p4"]
    assert t.pod_records(0) == [t.find_pod("n", p.uid) for p in (pods[5], pods[3], pods[2], pods[4])]


def test_uids_that_are_not_uuids():
    t = NodeTable()
    t.add_nodes([make_node("n")])
    odd = [make_pod("a", uid="uid-1", node_name="n"), make_pod("b", uid="UPPER-CASE", node_name="n"),
           make_pod("c", node_name="n")]
    t.add_pods(odd[:2])
    t.add_pod("n", odd[2])
    recs = t.pod_records(0)
    assert [t.pod_uid(r) for r in recs] == ["uid-1", "UPPER-CASE", odd[2].uid]
    assert [bool(t.pod_flags[r] & FLAG_UID_STRING) for r in recs] == [True, True, False]
    assert t.find_pod("n", "uid-1") == recs[0] and t.find_pod("n", "nope") == -1
    t.remove_pod("n", odd[0])
    assert [pi.pod.uid for pi in t.pods[0]] == [odd[2].uid, "UPPER-CASE"]
    assert 0 not in t._pod_uid_str.values() and len(t._pod_uid_str) == 1


def test_uid_index_against_a_dict():
    rng = random.Random(3)
    pods = [make_pod(f"p{i}") for i in range(3000)]
    index, want = _table.UidIndex(), {}
    for step in range(20000):
        pod = rng.choice(pods)
        hi, lo = _table.parse_uid(pod.uid)
        assert _table.format_uid(hi, lo) == pod.uid
        if rng.random() < 0.5:
            index.put(hi, lo, step)
            want[pod.uid] = step
        elif rng.random() < 0.5:
            assert index.remove(hi, lo) == (want.pop(pod.uid, None) is not None)
        assert index.lookup(pod.uid) == want.get(pod.uid, -1) == index.get(hi, lo)
    assert len(index) == len(want)
    assert _table.parse_uid("uid-1") is None and index.lookup("uid-1") == -1


def test_upstream_nodes_share_one_template_and_hostname_codes_follow_rows():
    nodes = upstream_nodes(500)
    t = NodeTable()
    rows = t.add_nodes(nodes)
    assert rows.tolist() == list(range(500)) and len(t._node_templates) == 1
    codes = t.label_codes["kubernetes.io/hostname"]
    assert [t.label_values["kubernetes.io/hostname"][c] for c in codes[:500]] == [n.name for n in nodes]
    t.remove_node(nodes[10].name)
    assert t.add_nodes([make_node("again")]).tolist() == [10]  # freed rows are reused first
    assert t.nodes[10].name == "again" and t.node_template[10] == -1


def test_pods_given_as_pod_infos_and_on_other_nodes_are_kept():
    t = NodeTable()
    t.add_nodes([make_node("a"), make_node("b")])
    factory = PodFactory(make_pod("x", cpu="1").replace(manifest={}))
    plain = factory.make("p0", node_name="a")
    pi = PodInfo(factory.make("p1", node_name="a"))
    moved = factory.make("p2", node_name="a")  # accounted on another node than its spec.nodeName
    t.add_pods([plain, pi, moved], node_names=["a", "a", "b"])
    recs = t.pod_records(0) + t.pod_records(1)
    assert [int(t.pod_template[r]) >= 0 for r in recs] == [True, False, False]
    assert t.pods[0][1] is pi and t.pods[1][0].pod is moved   # kept as given
    assert t.requested[:2, 0].tolist() == [2000, 1000]


def test_bulk_pods_on_a_missing_node_add_nothing():
    t = NodeTable()
    t.add_nodes([make_node("a")])
    before = table_state(t)
    with pytest.raises(KeyError):
        t.add_pods([make_pod("p", node_name="a"), make_pod("q", node_name="zz")])
    assert table_state(t) == before


def test_a_pod_subclass_is_rebuilt_as_itself():
    class MyPod(Pod):
        __slots__ = ()

    t = NodeTable()
    t.add_nodes([make_node("a")])
    base = make_pod("x", cpu="1")
    pods = [MyPod(name=f"p{i}", namespace="default", node_name="a", containers=base.containers) for i in range(3)]
    t.add_pods(pods)
    assert all(type(pi.pod) is MyPod and pi.pod == p for pi, p in zip(t.pods[0], pods))


def test_stamped_pods_take_the_templates_request_totals_unless_a_request_field_is_overridden():
    """PodFactory: the totals read only the containers, init containers, overhead and pod-level
    resources the pods share with the template, so they are the template's own objects (no
    per-pod summing); a pod whose containers are overridden sums its own."""
    template = make_pod("tmpl", cpu="250m", memory="1Gi").replace(manifest={})
    factory = PodFactory(template)
    pod = factory.make("p-1", "default")
    assert pod.requests is template.requests and pod.non_zero_requests is template.non_zero_requests
    assert pod.scoring_requests is template.scoring_requests
    assert dict(pod.requests) == {"cpu": 250, "memory": 1 << 30}
    bigger = make_pod("big", cpu="2").containers
    other = factory.make("p-2", "default", containers=bigger)
    assert other.requests is not template.requests and other.requests["cpu"] == 2000
    assert factory.make("p-3", "default", phase="Running").requests is template.requests


@pytest.mark.parametrize("seed", range(3))
def test_terminating_total_follows_the_column(seed):
    """``total_terminating_pods`` (PodTopologySpread's O(1) "does a pod terminate" check) is the
    sum of the ``terminating_pods`` column through single and bulk adds of terminating and running
    pods, removals, node removals and re-adds (a fork copies it with the table's other attributes)."""
    rng = random.Random(seed)
    nodes, pods = random_cluster(seed, 20, 0)
    t = build_snapshot(nodes, []).table
    names = [n.name for n in nodes]
    placed: list = []

    def pod(i: int):
        p = make_pod(f"p{seed}-{i}", namespace=rng.choice(("default", "prod")), labels={"app": rng.choice("abc")})
        return p.replace(deletion_timestamp=float(i)) if rng.random() < 0.4 else p

    def check(table) -> None:
        assert table.total_terminating_pods == int(np.sum(table.terminating_pods[table.live]))

    for step in range(120):
        r = rng.random()
        if r < 0.4:
            node = rng.choice(names)
            if node in t.row_of:
                p = pod(step)
                t.add_pod(node, p)
                placed.append((node, p))
        elif r < 0.55:
            batch = [pod(1000 * step + k) for k in range(rng.randint(1, 6))]
            on = [rng.choice([n for n in names if n in t.row_of]) for _ in batch]
            t.add_pods(batch, on)
            placed.extend(zip(on, batch))
        elif r < 0.85 and placed:
            node, p = placed.pop(rng.randrange(len(placed)))
            t.remove_pod(node, p)
        elif r < 0.92:
            node = rng.choice(names)
            if node in t.row_of and len(t.row_of) > 1:
                t.remove_node(node)
                placed = [(n, p) for n, p in placed if n != node]
        else:
            gone = [n for n in nodes if n.name not in t.row_of]
            if gone:
                t.add_node(rng.choice(gone))
        check(t)
    assert t.total_terminating_pods > 0 or not any(p.deletion_timestamp is not None for _, p in placed)


def test_format_uid_is_the_canonical_uuid_string():
    # every hex digit position, the dashes, and the words' extremes (the ASCII buffer's form)
    rng = random.Random(11)
    words = [0, 1, 0xF, 0x10, 2**63, 2**64 - 1, 0x0123456789ABCDEF, 0xFEDCBA9876543210]
    words += [rng.getrandbits(64) for _ in range(200)]
    for hi in words:
        for lo in words[:12] + [rng.getrandbits(64)]:
            want = str(uuid.UUID(int=(hi << 64) | lo))
            got = _table.format_uid(hi, lo)
            assert got == want and type(got) is str
            assert _table.parse_uid(got) == (hi, lo)


@pytest.mark.parametrize("seed", range(4))
def test_pod_records_many_is_pod_records_row_after_row(seed):
    """``pod_records_many`` (one compiled pass) against ``pod_records`` row by row, rows in any
    order and repeated, after removals; a row outside the table raises."""
    rng = random.Random(seed)
    nodes, pods = random_cluster(seed, 20, 150)
    table = build_snapshot(nodes, pods).table
    for pi in [pi for r in range(len(nodes)) for pi in table.pods[r]][::7]:
        table.remove_pod(pi.pod.node_name, pi.pod)
    rows = [rng.randrange(len(nodes)) for _ in range(40)]
    recs, counts = table.pod_records_many(np.array(rows, dtype=np.int64))
    want = [table.pod_records(r) for r in rows]
    assert counts.tolist() == [len(w) for w in want]
    assert recs.tolist() == [rec for w in want for rec in w]
    assert table.pod_records_many(np.zeros(0, dtype=np.int64))[0].tolist() == []
    with pytest.raises(IndexError):
        table.pod_records_many(np.array([0, table.capacity], dtype=np.int64))
