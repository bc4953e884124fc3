"""The columnar table and its NodeInfo views against plain NodeInfo objects."""
import random

import numpy as np
import pytest

from fastsched.framework import NodeInfo
from fastsched.framework.listers import NodeInfoSnapshot
from fastsched.snapshot import NodeTable, Snapshot, build_snapshot, zone_key
from fastsched.testing import make_node, make_pod, random_cluster, random_existing_pod


def plain(nodes, pods):
    infos = {n.name: NodeInfo(n) for n in nodes}
    for p in pods:
        if p.node_name in infos:
            infos[p.node_name].add_pod(p)
    NodeInfoSnapshot(infos.values())  # fills image spread counts
    return infos


def assert_view_equals(view, ni):
    assert view.name == ni.name
    assert view.requested == ni.requested
    assert view.non_zero_requested.milli_cpu == ni.non_zero_requested.milli_cpu
    assert view.non_zero_requested.memory == ni.non_zero_requested.memory
    assert view.allocatable == ni.allocatable
    assert sorted(p.pod.uid for p in view.pods) == sorted(p.pod.uid for p in ni.pods)
    assert sorted(p.pod.uid for p in view.pods_with_affinity) == sorted(p.pod.uid for p in ni.pods_with_affinity)
    assert sorted(view.used_ports.items()) == sorted(ni.used_ports.items())
    assert view.image_states == ni.image_states
    snap = view.snapshot()
    assert snap.requested == ni.requested and len(snap.pods) == len(ni.pods)


@pytest.mark.parametrize("seed", range(5))
def test_views_match_plain_node_infos(seed):
    nodes, pods = random_cluster(seed, 120, 400)
    snap = build_snapshot(nodes, pods)
    infos = plain(nodes, pods)
    assert len(snap) == len(nodes)
    for view in snap.batch():
        assert_view_equals(view, infos[view.name])


def test_incremental_updates_equal_a_rebuild():
    rng = random.Random(7)
    nodes, pods = random_cluster(3, 80, 200)
    snap = build_snapshot(nodes, pods)
    live_pods = list(pods)
    live_nodes = {n.name: n for n in nodes}
    for step in range(300):
        r = rng.random()
        if r < 0.4 and live_nodes:
            p = random_existing_pod(rng, 10_000 + step, rng.choice(list(live_nodes)))
            snap.add_pod(p)
            live_pods.append(p)
        elif r < 0.7 and live_pods:
            p = live_pods.pop(rng.randrange(len(live_pods)))
            snap.remove_pod(p)
        elif r < 0.8:
            name = rng.choice(list(live_nodes))
            removed = snap.remove_node(name)
            assert {pi.pod.uid for pi in removed} == {p.uid for p in live_pods if p.node_name == name}
            live_pods = [p for p in live_pods if p.node_name != name]
            del live_nodes[name]
        elif r < 0.9:
            n = make_node(f"new-{step}", cpu=str(rng.randint(1, 8)), labels={"topology.kubernetes.io/zone": "zone-x"},
                          extra={"example.com/widget": "3"} if rng.random() < 0.5 else None)
            snap.add_node(n)
            live_nodes[n.name] = n
        else:
            name = rng.choice(list(live_nodes))
            old = live_nodes[name]
            n = make_node(name, cpu="32", labels={"relabelled": "yes"})  # drops the old labels
            snap.update_node(n)
            live_nodes[name] = n
            assert snap.table.label_codes["disktype"][snap.table.row_of[name]] == -1 or "disktype" not in old.labels
    infos = plain(live_nodes.values(), live_pods)
    assert len(snap) == len(live_nodes)
    assert sorted(snap.batch().names) == sorted(live_nodes)
    for view in snap.batch():
        assert_view_equals(view, infos[view.name])
    # the columns too, row by row
    t = snap.table
    for name, ni in infos.items():
        row = t.row_of[name]
        assert t.pod_count[row] == len(ni.pods)
        assert t.requested[row, t.resource_index["cpu"]] == ni.requested.milli_cpu
        assert t.allowed_pods[row] == ni.allocatable.allowed_pod_number
        for key, value in ni.node().labels.items():
            assert t.label_values[key][t.label_codes[key][row]] == value
    assert t.live.sum() == len(live_nodes)


def test_rows_are_reused_and_capacity_grows():
    t = NodeTable(capacity=2)
    rows = [t.add_node(make_node(f"n{i}")) for i in range(5)]
    assert rows == [0, 1, 2, 3, 4] and t.capacity >= 5
    t.remove_node("n1")
    assert t.add_node(make_node("again")) == 1
    assert t.nodes[1].name == "again" and t.pod_count[1] == 0


def test_new_resource_from_a_pod_adds_a_column():
    t = NodeTable()
    t.add_node(make_node("n", extra={"nvidia.com/gpu": "2"}))
    t.add_pod("n", make_pod("p", requests={"example.com/new": "3", "cpu": "1"}))
    col = t.resource_index["example.com/new"]
    assert t.requested[0, col] == 3 and t.alloc[0, col] == 0
    assert t.requested[0, t.resource_index["cpu"]] == 1000
    assert t.alloc[0, t.resource_index["nvidia.com/gpu"]] == 2
    t.remove_pod("n", make_pod("p"))
    assert t.requested[0].tolist() == [0] * len(t.resource_names)
    with pytest.raises(KeyError):
        t.remove_pod("n", make_pod("p"))


def test_taint_sets_are_shared():
    t = NodeTable()
    taint = {"key": "k", "value": "v", "effect": "NoSchedule"}
    for i in range(3):
        t.add_node(make_node(f"n{i}", taints=[taint] if i != 1 else ()))
    assert t.taint_set[:3].tolist() == [1, 0, 1]
    assert len(t.taint_sets) == 2 and t.taint_sets[0] == ()


def zone_node(name, zone, region="r"):
    return make_node(name, labels={"topology.kubernetes.io/zone": zone, "topology.kubernetes.io/region": region})


def test_node_order_interleaves_zones_like_node_tree():
    snap = Snapshot()
    for name, zone in [("a1", "a"), ("a2", "a"), ("b1", "b"), ("c1", "c"), ("c2", "c"), ("c3", "c"), ("a3", "a")]:
        snap.add_node(zone_node(name, zone))
    assert snap.batch().names == ["a1", "b1", "c1", "a2", "c2", "a3", "c3"]
    snap.remove_node("b1")
    assert snap.batch().names == ["a1", "c1", "a2", "c2", "a3", "c3"]
    snap.add_node(make_node("nozone"))  # the "" zone comes after the existing zones
    assert snap.batch().names == ["a1", "c1", "nozone", "a2", "c2", "a3", "c3"]
    # relabelling a node moves it to the end of its new zone
    snap.update_node(zone_node("a1", "c"))
    assert snap.batch().names == ["a2", "c1", "nozone", "a3", "c2", "c3", "a1"]


def test_zone_key_prefers_beta_labels_and_includes_region():
    n = make_node("n", labels={"failure-domain.beta.kubernetes.io/zone": "old",
                               "topology.kubernetes.io/zone": "new", "topology.kubernetes.io/region": "r"})
    assert zone_key(n) == "r:\x00:old"
    assert zone_key(make_node("m")) == ""


def test_count_matching_pods_equals_brute_force():
    nodes, pods = random_cluster(11, 60, 300)
    snap = build_snapshot(nodes, pods)
    t = snap.table

    def pred(ns, labels):
        return ns == "default" and labels.get("app") in ("web", "db") and "team" not in labels

    got = t.count_matching_pods(pred)
    want = np.zeros(t.capacity, dtype=np.int64)
    for row, pis in enumerate(t.pods):
        want[row] = sum(pred(pi.pod.namespace, dict(pi.pod.labels)) for pi in pis)
    assert got.tolist() == want.tolist() and want.sum() > 0


def test_lister_interface():
    nodes, pods = random_cluster(4, 30, 60)
    snap = build_snapshot(nodes, pods)
    assert snap.node_infos() is snap
    assert snap.get("node-00003").name == "node-00003"
    with pytest.raises(KeyError):
        snap.get("missing")
    want = {n.name for n in snap.batch() if n.pods_with_affinity}
    assert {v.name for v in snap.have_pods_with_affinity_list()} == want


def test_table_uids_are_never_reused():
    """Plugins key per-table caches on ``uid``; unlike ``id()`` it is not reused after a table dies."""
    import gc
    import weakref

    from fastsched.snapshot.table import NodeTable

    seen = set()
    for _ in range(50):
        t = NodeTable()
        assert t.uid not in seen
        seen.add(t.uid)
        dead = weakref.ref(t)
        del t
        # the table holds reference cycles: the youngest generations free it (a full collection
        # per round took a second each late in the suite, with everything else alive)
        for generation in (0, 1, 2):
            if dead() is None:
                break
            gc.collect(generation)
        assert dead() is None  # freed, so a new table may well get its id()


def test_mark_positive_at_reads_counts_at_the_rows_codes():
    """_table.mark_positive_at: a positive count at the row's label code, ORed or ANDed into a
    mask; an absent label (-1) and a code past the counts read 0; read-only (forked) columns work."""
    import numpy as np
    import pytest

    from fastsched._kernels._table import mark_positive_at

    counts = np.array([0, 2, -1, 5], dtype=np.int64)
    codes = np.array([1, -1, 3, 7, 0, 2], dtype=np.int32)
    codes.flags.writeable = False
    rows = np.array([0, 1, 2, 3, 4, 5, 0], dtype=np.int64)
    expected = np.array([True, False, True, False, False, False, True])
    marks = np.zeros(7, dtype=bool)
    mark_positive_at(counts, codes, rows, marks.view(np.uint8), False)
    assert marks.tolist() == expected.tolist()
    marks = np.array([True, True, False, True, True, True, False])
    mark_positive_at(counts, codes, rows, marks.view(np.uint8), True)
    assert marks.tolist() == (expected & [True, True, False, True, True, True, False]).tolist()
    with pytest.raises(ValueError, match="out has 3 entries for 7 rows"):
        mark_positive_at(counts, codes, rows, np.zeros(3, dtype=np.uint8), False)
