"""A plugin that deletes or adds nodes during a pod's scheduling cycle (through ``handle.client``,
as an upstream plugin may through its ClientSet). Upstream's cycle reads a snapshot taken at its
start; fastsched's node table is live, and a node deleted mid-cycle freed the row the cycle had
filtered: the pod was reported Scheduled on node "" (and counted in the cache), or, when a node
added next took that row, bound to that node, which no Filter had seen (a 2-cpu pod on a 100m
node). Now such an attempt fails (Error) and the pod is retried on the nodes as they are; a
cycle whose chosen node is untouched (another node deleted, the chosen one updated) goes on as
before."""
from __future__ import annotations

import random

from fastsched import Scheduler
from fastsched.framework import Code, Status
from fastsched.runtime import Registry
from fastsched.scheduler.result import SCHEDULED, UNSCHEDULABLE
from fastsched.testing import config_enabling, make_node, make_pod


def _scheduler(filter_fn) -> Scheduler:
    class Mid:
        def __init__(self, args, handle):
            self.handle = handle

        def name(self):
            return "Mid"

        def filter(self, state, pod, node_info):
            return filter_fn(self.handle.client, node_info.node().name)

    return Scheduler(config_enabling("Mid", "filter"), registry=Registry({"Mid": Mid}))


def _assert_consistent(s: Scheduler, results) -> None:
    nodes = {n.name: n for n in s.nodes()}
    for r in results:
        stored = s.cluster.pods.get(r.pod.uid)
        if r.status == SCHEDULED:
            assert r.node_name and stored is not None and stored.node_name == r.node_name, (r.pod.name, r.message)
        elif stored is not None:
            assert not stored.node_name, (r.pod.name, r.status, stored.node_name)
    bound = [p for p in s.cluster.pods.values() if p.node_name]
    assert s.cache.pod_count() == len(bound)
    for name, node in nodes.items():  # nodes that exist hold no more than they can
        assert sum(p.requests.get("cpu", 0) for p in bound if p.node_name == name) <= node.allocatable["cpu"]


def test_the_only_feasible_node_deleted_during_its_filter_is_not_a_placement():
    def delete_self(client, name):
        client.delete_node(name)
        return None

    for n_nodes in (1, 2):
        s = _scheduler(delete_self)
        s.add_nodes([make_node(f"n{i}", cpu="4") for i in range(n_nodes)])
        s.add_pods([make_pod("p0", cpu="500m")])
        [r] = s.run()
        assert r.status == UNSCHEDULABLE and r.node_name is None, (r.status, r.node_name, r.message)
        assert r.message == "no nodes available to schedule pods"
        _assert_consistent(s, [r])


def test_a_node_added_into_the_freed_row_is_not_taken_unfiltered():
    done = []

    def replace_n0(client, name):
        if name == "n0" and not done:
            done.append(1)
            client.delete_node("n0")
            client.add_node(make_node("tiny", cpu="100m"))
        return None if name == "n0" else Status(Code.UNSCHEDULABLE, "only n0")

    s = _scheduler(replace_n0)
    s.add_nodes([make_node(f"n{i}", cpu="4") for i in range(3)])
    s.add_pods([make_pod("p0", cpu="2")])
    [r] = s.run()
    assert r.status == UNSCHEDULABLE, (r.status, r.node_name, r.message)
    assert r.message.startswith("0/3 nodes are available: 1 Insufficient cpu, 2 only n0.")
    _assert_consistent(s, [r])


def test_a_cycle_whose_chosen_node_is_untouched_binds_as_before():
    """Deleting another node, or updating the chosen one, mid-cycle changes no placement."""
    seen = []

    def touch(client, name):
        if not seen:
            seen.append(1)
            client.delete_node("n0")
        if name == "n2":
            client.update_node(make_node("n2", cpu="4", labels={"touched": str(len(seen))}))
            seen.append(1)
        return None if name == "n2" else Status(Code.UNSCHEDULABLE, "only n2")

    s = _scheduler(touch)
    s.add_nodes([make_node(f"n{i}", cpu="4") for i in range(4)])
    s.add_pods([make_pod(f"p{i}", cpu="500m") for i in range(3)])
    results = s.run()
    assert [(r.status, r.node_name) for r in results] == [(SCHEDULED, "n2")] * 3
    _assert_consistent(s, results)


def test_many_pods_while_a_plugin_deletes_and_adds_nodes_mid_cycle():
    for seed in range(4):
        rng = random.Random(seed)
        added = []

        def churn(client, name):
            if rng.random() < 0.15 and name in {n.name for n in client.nodes()}:
                client.delete_node(name)
            if rng.random() < 0.1 and len(added) < 30:
                added.append(f"x{len(added)}")
                client.add_node(make_node(added[-1], cpu=rng.choice(("100m", "1", "4"))))
            return None

        s = _scheduler(churn)
        s.add_nodes([make_node(f"n{i}", cpu="4") for i in range(8)])
        s.add_pods([make_pod(f"p{i}", cpu=rng.choice(("250m", "1", "2"))) for i in range(60)])
        results = s.run()
        assert len(results) == 60 and {r.status for r in results} <= {SCHEDULED, UNSCHEDULABLE}
        assert any(r.status == SCHEDULED for r in results)
        _assert_consistent(s, results)
