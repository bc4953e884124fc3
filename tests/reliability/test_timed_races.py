"""Timed events racing the scheduling loop, with many pods: ``run(until=T)`` in steps on a busy
scheduler (every attempt costs modelled time, so events fall between and during attempts), with
events on the virtual clock that delete pods (pending, in flight or bound), delete nodes and add
them back, cordon them, add pods of three priorities (preemption, whose victims' deletions race
the binds), and resize pods; drawn by hypothesis (derandomized), 120 pods on 10 nodes.

Whatever the draw, each ``run(until)`` returns at ``until`` at the latest; every pod ever added
has one result, and a pod still in the cluster is Scheduled on the node it is bound to, or not
Scheduled; a deleted pod's result says Deleted; the cache holds exactly the bound pods and each
node's requested cpu in the table is the sum of its pods'; no node of the cluster holds more
than it can (before resizes). A final ``run()`` returns.
"""
from __future__ import annotations

import random

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fastsched import Scheduler
from fastsched.scheduler.result import DELETED, PENDING, SCHEDULED
from fastsched.testing import make_node, make_pod

N_NODES, N_PODS = 10, 120
NODE_MILLIS = 4000
PRIORITIES = (0, 100, 1000)


class Race:
    def __init__(self, seed: int):
        self.rng = random.Random(seed)
        self.s = Scheduler(seed=seed)
        self.s.cycle_cost = lambda wall, bound: 0.05 + (0.1 if bound else 0.0)
        for j in range(N_NODES):
            self.s.add_node(self._node(j))
        self.added = 0
        self.deleted_uids: set[str] = set()
        self.removed_nodes: list[str] = []

    @staticmethod
    def _node(j: int):
        return make_node(f"n{j}", cpu=f"{NODE_MILLIS}m", memory="16Gi", pods=30)

    def add_pod(self) -> None:
        i, self.added = self.added, self.added + 1
        pr = self.rng.choice(PRIORITIES)
        cpu = self.rng.choice(("250m", "500m", "1", "2", "5"))  # 5: fits no node
        self.s.add_pod(make_pod(f"p{i}", cpu=cpu, priority=pr))

    def event(self) -> None:
        """One drawn change to the cluster, at the time its timer fires."""
        s, rng = self.s, self.rng
        r = rng.random()
        pods = list(s.cluster.pods.values())
        if r < 0.35 and self.added < N_PODS:
            for _ in range(rng.randint(1, 6)):
                if self.added < N_PODS:
                    self.add_pod()
        elif r < 0.55 and pods:
            pod = rng.choice(pods)
            self.deleted_uids.add(pod.uid)
            s.delete_pod(pod)
        elif r < 0.65 and len(s.nodes()) > 3:
            name = rng.choice(s.nodes()).name
            self.removed_nodes.append(name)
            s.delete_node(name)
        elif r < 0.75 and self.removed_nodes:
            s.add_node(self._node(int(self.removed_nodes.pop(0)[1:])))
        elif r < 0.85 and s.nodes():
            node = rng.choice(s.nodes())
            s.update_node(node.replace(unschedulable=not node.unschedulable))
        elif pods:  # a pending pod's new version (labels changed): the queue hears an update
            pod = rng.choice(pods)
            if not pod.node_name:
                s.update_pod(pod.replace(labels={**pod.labels, "v": str(rng.randint(0, 9))}))

    def check(self) -> None:
        s = self.s
        pods = s.cluster.pods
        for uid in self.deleted_uids:
            assert uid not in pods and s.results[uid].status == DELETED, (uid, s.results[uid].status)
        assert len(s.results) == self.added
        for uid, pod in pods.items():
            res = s.results[uid]
            if pod.node_name:
                assert res.status == SCHEDULED and res.node_name == pod.node_name, (pod.key, res.status)
            else:
                assert res.status != SCHEDULED, (pod.key, res.node_name)
        table = s.cache.update_snapshot().table
        for node in s.nodes():
            bound = [p for p in pods.values() if p.node_name == node.name]
            cpu = sum(p.requests.get("cpu", 0) for p in bound)
            assert cpu <= node.allocatable["cpu"] and len(bound) <= node.allocatable["pods"], node.name
            assert int(table.requested[table.row_of[node.name]][table.resource_index["cpu"]]) == cpu, node.name
        assert s.cache.pod_count() == sum(1 for p in pods.values() if p.node_name)


@settings(max_examples=3, deadline=None, derandomize=True, database=None,
          suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(0, 100_000), st.floats(0.05, 1.0))
def test_timed_events_racing_the_loop_keep_the_invariants(seed, step):
    race = Race(seed)
    for _ in range(20):
        race.add_pod()
    t = 0.0
    for k in range(60):  # events at drawn times, some between attempts, some at the same instant
        when = race.rng.uniform(0, 12.0)
        race.s.clock.schedule(when, race.event)
    while t < 12.0:
        t += step
        race.s.run(until=t)
        assert race.s.clock.now() <= t + 1e-9
        race.check()
    race.s.run()
    race.check()
    assert any(r.status == SCHEDULED for r in race.s.results.values())
    assert not any(r.status == PENDING and r.attempts == 0 for r in race.s.results.values()
                   if r.pod.uid in race.s.cluster.pods)
