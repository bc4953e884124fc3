"""Scheduler.add_nodes / add_pods / add (vectorized, bound pods kept as columns) against add_node /
add_pod one object at a time: the same cluster, the same indexes, the same placements afterwards,
and the same results of later updates, deletions, preemptions and explanations."""
import random

import pytest

from fastsched.api import ManifestError
from fastsched.scheduler import Scheduler
from fastsched.sim.workloads import WORKLOADS
from fastsched.testing import RANDOM_RUNTIME_CLASS, make_node, make_pod, random_cluster, random_pod

from .test_bulk import generated_cluster, table_state


def scheduler_state(s: Scheduler) -> dict:
    pods = list(s.pods.values())
    namespaces = sorted({p.namespace for p in pods})
    return {
        "table": table_state(s.snapshot.table),
        "order": s.snapshot.order().tolist(),
        "pods": list(s.pods.items()), "len": len(s.pods), "uids": list(s.pods),
        "keys": {p.key: s.cluster._pod_uid_by_key.get(p.key) for p in pods},
        "namespaces": {ns: list(s.cluster._pod_uids_by_namespace.get(ns, ())) for ns in namespaces},
        "in_namespace": {ns: s.pods_in_namespace(ns) for ns in namespaces},
        "orphans": {ns: s.cluster.controlled_or_orphans("Pod", ns, "nobody") for ns in namespaces},
        "added": {p.uid: s.cluster._order_of[p.uid] for p in pods},
        "objects": s.objects("Pod"), "nodes": s.objects("Node"), "node_names": s.cache.node_names(),
        "cache": (s.cache.pod_count(), s.cache.node_count()), "seq": s._change_seq,
        "assumed": [s.cache.is_assumed_pod(p) for p in pods],
        "cached": [s.cache.get_pod(p) for p in pods],
    }


def outcome(s: Scheduler) -> dict:
    results = s.run()
    return {"results": [(r.pod.key, r.status, r.node_name, r.message) for r in results],
            "rng": s.rng.bit_generator.state, "plugin_rng": s.plugin_rng.getstate(),
            "next_start": s.next_start_node_index, "state": scheduler_state(s)}


def one_by_one(build):
    s = Scheduler(seed=3)
    s.add(RANDOM_RUNTIME_CLASS)  # (random_pod's pods with an overhead name it)
    namespaces, nodes, pods = build()
    for ns in namespaces:
        s.add_namespace(ns)
    for n in nodes:
        s.add_node(n)
    for p in pods:
        s.add_pod(p)
    return s


def in_bulk(build):
    s = Scheduler(seed=3)
    s.add(RANDOM_RUNTIME_CLASS)  # (random_pod's pods with an overhead name it)
    namespaces, nodes, pods = build()
    s.add(namespaces)
    s.add_nodes(nodes)
    s.add_pods(pods)
    return s


def workload(name, **sizes):
    def build():
        inst = WORKLOADS[name].build(prebind=True, **sizes)
        return inst.namespaces, inst.nodes, inst.init_pods + inst.measured_pods
    return build


def generated(seed):
    def build():
        nodes, running = generated_cluster(seed, nodes=60, pods=200)
        rng = random.Random(seed)
        incoming = [random_pod(rng, i) for i in range(40)]
        mixed = list(running)
        for p in incoming:  # unbound pods among the bound ones
            mixed.insert(rng.randrange(len(mixed) + 1), p)
        return [], nodes, mixed
    return build


def from_random_cluster(seed):
    def build():
        nodes, running = random_cluster(seed, 80, 250)
        rng = random.Random(seed)
        return [], nodes, running + [random_pod(rng, i) for i in range(40)]
    return build


BUILDS = {
    "basic": workload("SchedulingBasic", nodes=200, init_pods=300, measured_pods=60),
    "anti-affinity": workload("SchedulingPodAntiAffinity", nodes=120, init_pods=100, measured_pods=40),
    "spreading": workload("TopologySpreading", nodes=150, init_pods=200, measured_pods=40),
    "preemption": workload("PreemptionBasic", nodes=20, init_pods=60, measured_pods=10),
    "generated-1": generated(1),
    "generated-2": generated(2),
    "random-1": from_random_cluster(1),
    "random-2": from_random_cluster(2),
}


@pytest.mark.parametrize("name", sorted(BUILDS))
def test_bulk_adds_place_pods_as_one_by_one_adds(name):
    bulk, one = in_bulk(BUILDS[name]), one_by_one(BUILDS[name])
    assert bulk.cache.bulk.n_live > 0
    assert scheduler_state(bulk) == scheduler_state(one)
    assert outcome(bulk) == outcome(one)


def test_add_routes_nodes_and_pods_of_a_dump_through_the_bulk_paths():
    build = BUILDS["basic"]
    s = Scheduler(seed=3)
    s.add(RANDOM_RUNTIME_CLASS)  # (random_pod's pods with an overhead name it)
    namespaces, nodes, pods = build()
    s.add([*pods, *nodes, *namespaces])  # kinds are applied in dependency order
    assert s.cache.bulk.n_live == 300
    assert scheduler_state(s) == scheduler_state(one_by_one(build))


def test_updates_deletions_and_ghosts_of_bulk_pods():
    def ops(s):
        rng = random.Random(5)
        bound = [p for p in s.pods.values() if p.node_name]
        for p in rng.sample(bound, 30):
            s.delete_pod(p)
        bound = [p for p in s.pods.values() if p.node_name]
        for p in rng.sample(bound, 20):
            s.update_pod(p.replace(labels={**p.labels, "touched": "yes"}))
        p = rng.choice([p for p in s.pods.values() if p.node_name])
        s.update_pod(p.replace(phase="Succeeded"))   # leaves its node
        victim = rng.choice(sorted(s.cache.node_names()))
        kept = s.get_object("Node", victim)
        s.delete_node(victim)                        # its pods become ghosts
        explained = s.explain(rng.choice([p for p in s.pods.values() if p.node_name]))
        s.add_node(kept)                             # ... and come back
        return explained.best_nodes

    bulk, one = in_bulk(BUILDS["basic"]), one_by_one(BUILDS["basic"])
    assert ops(bulk) == ops(one)
    assert scheduler_state(bulk) == scheduler_state(one)
    assert outcome(bulk) == outcome(one)


@pytest.mark.parametrize("where", [0, 7, 149])
def test_a_duplicate_fails_where_one_by_one_adds_fail(where):
    def build():
        inst = WORKLOADS["SchedulingBasic"].build(nodes=50, init_pods=150, measured_pods=5, prebind=True)
        pods = inst.init_pods + inst.measured_pods
        clash = pods[where].replace(uid="")      # same namespace/name, its own uid
        clash.uid = "another"
        return inst.namespaces, inst.nodes, pods[:where + 3] + [clash] + pods[where + 3:]

    bulk, one = Scheduler(seed=1), Scheduler(seed=1)
    namespaces, nodes, pods = build()
    bulk.add(namespaces), bulk.add_nodes(nodes)
    with pytest.raises(ManifestError) as bulk_error:
        bulk.add_pods(pods)
    namespaces, nodes, pods = build()
    one.add(namespaces), one.add_nodes(nodes)
    with pytest.raises(ManifestError) as one_error:
        for p in pods:
            one.add_pod(p)
    assert str(bulk_error.value) == str(one_error.value)
    assert scheduler_state(bulk) == scheduler_state(one)


def test_duplicate_and_invalid_nodes_fail_where_one_by_one_adds_fail():
    nodes = [make_node(f"n{i}") for i in range(10)]
    s = Scheduler()
    with pytest.raises(ManifestError, match='nodes "n3" already exists'):
        s.add_nodes(nodes[:6] + [make_node("n3")] + nodes[6:])
    assert s.cache.node_names() == [f"n{i}" for i in range(6)]
    bad = make_node("n7").replace(name="Bad_Name")
    with pytest.raises(ManifestError):
        s.add_nodes([make_node("x1"), bad, make_node("x2")])
    assert s.cache.node_names()[-1] == "x1"


def test_an_invalid_pod_of_a_template_is_reported_with_the_api_servers_message():
    inst = WORKLOADS["SchedulingBasic"].build(nodes=5, init_pods=10, measured_pods=1, prebind=True)
    pods = list(inst.init_pods)
    pods[6] = pods[6].replace(name="Not_A_DNS_Name")
    s = Scheduler()
    s.add(inst.namespaces), s.add_nodes(inst.nodes)
    with pytest.raises(ManifestError, match="metadata.name"):
        s.add_pods(pods)
    assert len(s.pods) == 6 and s.cache.pod_count() == 6


def test_pod_map_behaves_as_a_dict():
    s = in_bulk(BUILDS["basic"])
    uids = list(s.pods)
    some = uids[:5]
    assert len(s.pods) == len(uids) == len(set(uids))
    first = s.pods[some[0]]
    assert s.pods.get(some[0]) is first and some[0] in s.pods and "nope" not in s.pods
    assert s.pods.get("nope", 1) == 1
    with pytest.raises(KeyError):
        s.pods["nope"]
    replaced = first.replace(labels={"x": "y"})
    s.pods[some[0]] = replaced                     # replaced in place: the order does not change
    assert list(s.pods) == uids and s.pods[some[0]] is replaced and len(s.pods) == len(uids)
    assert s.pods.pop(some[0]) is replaced and some[0] not in s.pods
    assert s.pods.pop(some[0], None) is None and len(s.pods) == len(uids) - 1


def test_standalone_cache_bulk_pods():
    from fastsched.scheduler.cache import Cache, CacheError

    cache = Cache()
    cache.add_nodes([make_node("a"), make_node("b")])
    pods = [make_pod(f"p{i}", node_name="ab"[i % 2], cpu="100m").replace(manifest={}) for i in range(6)]
    cache.add_pods(pods)
    assert cache.pod_count() == 6 and cache.get_pod(pods[0]) == pods[0]
    assert not cache.is_assumed_pod(pods[0])
    with pytest.raises(CacheError):
        cache.add_pod(pods[1])
    with pytest.raises(CacheError):
        cache.assume_pod(pods[1])
    with pytest.raises(CacheError):
        cache.forget_pod(pods[1])
    cache.update_pod(pods[2], pods[2].replace(labels={"v": "2"}))
    assert cache.get_pod(pods[2]).labels == {"v": "2"}
    cache.remove_pod(pods[3])
    assert cache.get_pod(pods[3]) is None and cache.pod_count() == 5
    cache.remove_node("a")
    assert cache.pod_count() == 5 and cache.get_pod(pods[0]) == pods[0]
    cache.add_node(make_node("a"))
    assert sorted(pi.pod.name for pi in cache.pods_on_node("a")) == ["p0", "p2", "p4"]
    assert cache.snapshot.table.requested[cache.snapshot.table.row_of["a"], 0] == 300
    cache.remove_pod(pods[0])                     # a ghost that came back with its node
    assert sorted(pi.pod.name for pi in cache.pods_on_node("a")) == ["p2", "p4"]
    assert cache.pod_count() == 4 and cache.bulk.n_live == 3


def _live_templates(templates: list, index: dict, free: list) -> list:
    """The refs of the live templates, checking the slot bookkeeping: every live template indexed
    by its key at its slot, every free slot empty and listed once."""
    live = [t for t in templates if t is not None]
    assert sorted(index.values()) == [i for i, t in enumerate(templates) if t is not None]
    assert all(templates[index[t.key]] is t for t in live)
    assert sorted(free) == [i for i, t in enumerate(templates) if t is None]
    return [t.refs for t in live]


@pytest.mark.parametrize("name", ["basic", "generated-1"])
def test_templates_released_with_their_last_user_and_their_slots_reused(name):
    # pod templates counted by their records, node templates by their rows: each is forgotten
    # (key and slot) when its last user leaves, and a template interned later takes a freed slot
    s = in_bulk(BUILDS[name])
    t = s.snapshot.table
    pod_books = (t._pod_templates, t._pod_template_index, t._free_pod_templates)
    node_books = (t._node_templates, t._node_template_index, t._free_node_templates)
    pods = [p for p in s.pods.values() if p.node_name]
    refs = _live_templates(*pod_books)
    assert refs and sum(refs) == sum(int(t.pod_template[t.find_pod(p.node_name, p.uid)]) >= 0 for p in pods)
    assert _live_templates(*node_books)
    slots = len(t._pod_templates)
    for p in pods:
        s.delete_pod(p)
    assert _live_templates(*pod_books) == [] and len(t._free_pod_templates) == slots
    for node in sorted(t.row_of):
        s.delete_node(node)
    assert _live_templates(*node_books) == []
    _, nodes, again = BUILDS[name]()
    s.add_nodes(nodes)
    s.add_pods([p for p in again if p.node_name])
    assert s.snapshot.table is t
    assert _live_templates(*pod_books) and len(t._pod_templates) == slots  # the freed slots taken again
    assert _live_templates(*node_books)
