"""The Scheduler's entry points interleaved, drawn by hypothesis: pods scheduled alone and gangs
(PodGroups, GenericWorkload), pods of three priorities (preemption), a Permit plugin that makes
some pods wait (1, 10 or 60 s: the waits time out), and between the steps of ``run(until=...)`` /
``run(max_attempts=...)`` the operations a user or a controller interleaves: pods added, pending
and bound pods deleted, waiting pods allowed, rejected or deleted, PodGroups deleted, nodes added
and deleted, ``explain`` of a pending pod, a ``fork()`` that goes on in place of the original, and a
``transaction()`` whose block does some of the above and is reverted.

Whatever the draw: ``explain`` changes nothing the scheduler holds; a reverted transaction leaves
the results, the node table, the pods waiting at Permit, the queue, the clock and the cache as
they were; the final ``run()`` returns by itself with nothing left waiting at Permit, every pod
of the cluster has a result, a bound pod's result is Scheduled on its node and every other pod's
says why (a pod of a deleted PodGroup waits for it, Pending, as upstream's
incompletePodGroupPods); and the node table agrees with one built afresh from the cluster's nodes
and bound pods. Found by these operations run over many seeds: a fork's (and a reverted
transaction's) pods waiting at Permit never timed out; the few derandomized examples kept here
(sized for the suite) do not reach it: test_fork_permit_waits.py pins it.

Allowed endings that upstream has too: a member of a gang left with fewer pods than its minCount
(a member deleted while queued) fails PlacementFeasible before any member reaches
DynamicResources' PreFilter, whose PodGroupPostFilter then reads no state: ``error in
"DynamicResources" PodGroupPostFilter plugins: not found``; and a waiting pod preempted stays with
its Error ``waiting on permit for pod: preempted`` once run() finds its retry settled.
"""
from __future__ import annotations

import random
import warnings

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fastsched import Scheduler
from fastsched.runtime import Registry
from fastsched.scheduler.result import ERROR, PENDING, SCHEDULED, WAITING
from fastsched.testing import config_enabling
from tests.reliability.test_fork_permit_waits import NAME, Waits
from tests.test_explain_pod_groups import node, pod

GATES = {"GenericWorkload": True}
GUARD_ATTEMPTS = 20_000
#: the node-table columns compared with a table built afresh (per node name; resource vectors by
#: resource name, as the two tables may intern extended resources in another order)
COLUMNS = ("alloc", "requested", "nonzero_requested", "pod_count", "allowed_pods", "unschedulable",
           "has_host_ports", "pods_with_affinity", "pods_with_req_anti")
#: the final errors upstream produces too (see the module docstring)
UPSTREAM_ERRORS = ('error in "DynamicResources" PodGroupPostFilter plugins: not found',
                   "waiting on permit for pod: preempted")
OPS = ("gang", "pods", "pods", "run_k", "run_until", "run_until", "run", "delete_pending", "delete_bound",
       "delete_node", "add_node", "fork", "transaction", "allow", "reject", "delete_waiting", "explain",
       "delete_group")
SETTINGS = settings(max_examples=3, deadline=None, derandomize=True, database=None,
                    suppress_health_check=[HealthCheck.too_slow])


def _pod(name: str, millis: int, group: str | None = None, priority: int | None = None) -> dict:
    manifest = pod(name, millis, group)
    if priority is not None:
        manifest["spec"]["priority"] = priority
    return manifest


def table_by_node(s: Scheduler) -> dict:
    t = s.snapshot.table
    out = {}
    for name, row in t.row_of.items():
        if not t.live[row]:
            continue
        values = {}
        for column in COLUMNS:
            v = np.asarray(getattr(t, column)[row]).tolist()
            values[column] = {t.resource_names[i]: x for i, x in enumerate(v) if x} if isinstance(v, list) else v
        out[name] = values
    return out


def fingerprint(s: Scheduler) -> tuple:
    return ([(r.pod.name, r.status, r.node_name, r.message, r.attempts, r.nominated_node_name) for r in s.pod_results()],
            table_by_node(s), sorted(s._waiting),
            sorted((q.pod.name if q.pod is not None else q.name, where) for q, where in s.queue.queued_pod_infos()),
            s.clock.now(), s.cache.pod_count())


class Ops:
    def __init__(self, seed: int):
        self.rng = random.Random(seed)
        self.s = Scheduler(config_enabling(NAME, "permit", feature_gates=GATES), registry=Registry({NAME: Waits}),
                           seed=seed, feature_gates=GATES)
        self.s.add_nodes([node(f"n{i}", self.rng.choice([2000, 4000])) for i in range(self.rng.randint(2, 10))])
        self.count = 0
        self.log: list[str] = []

    def _next(self) -> int:
        self.count += 1
        return self.count

    def _waiting(self) -> list:
        out: list = []
        next(iter(self.s.profiles.values())).iterate_over_waiting_pods(out.append)
        return out

    def do(self, nested: bool = False) -> None:
        rng, s = self.rng, self.s
        op = rng.choice(OPS)
        self.log.append(op)
        if op == "gang":
            g = f"g{self._next()}"
            size = rng.randint(1, 6)
            min_count = rng.choice([None, rng.randint(1, size)])
            policy = {"gang": {"minCount": min_count}} if min_count is not None else {"basic": {}}
            s.add([{"apiVersion": "scheduling.k8s.io/v1beta1", "kind": "PodGroup",
                    "metadata": {"name": g, "namespace": "default"}, "spec": {"schedulingPolicy": policy}}])
            s.add_pods([_pod(f"{g}-{m}", rng.choice([100, 250, 500, 1000]), g) for m in range(size)])
        elif op == "pods":
            pods = []
            for _ in range(rng.randint(1, 25)):
                i = self._next()
                name = f"solo-{i}" if rng.random() < 0.6 else f"wait-{rng.choice([1, 10, 60])}-{i}"
                pods.append(_pod(name, rng.choice([100, 250, 500, 1000, 3000]), None, rng.choice([None, 10, 1000])))
            s.add_pods(pods)
        elif op == "run_k":
            s.run(max_attempts=rng.randint(1, 30))
        elif op == "run_until":
            s.run(until=s.clock.now() + rng.choice([0.0, 0.5, 1, 5, 31]))
        elif op == "run":
            s.run(max_attempts=3000)
        elif op in ("delete_pending", "delete_bound"):
            live = [r.pod.uid for r in s.pod_results() if r.pod.uid in s.pods]
            chosen = [uid for uid in live if bool(s.pods[uid].node_name) == (op == "delete_bound")]
            if chosen:
                s.delete_pod(s.pods[rng.choice(chosen)])
        elif op == "delete_group":
            groups = s.list_objects("PodGroup")
            if groups:
                s.delete_object("PodGroup", rng.choice(groups).name, "default")
        elif op == "delete_node":
            nodes = s.nodes()
            if len(nodes) > 1:
                s.delete_node(rng.choice(nodes).name)
        elif op == "add_node":
            s.add_node(node(f"x{self._next()}", rng.choice([1000, 4000])))
        elif op in ("allow", "reject", "delete_waiting"):
            waiting = self._waiting()
            if waiting:
                wp = rng.choice(waiting)
                if op == "allow":
                    for plugin in wp.get_pending_plugins():
                        wp.allow(plugin)
                elif op == "reject":
                    wp.reject(NAME, "rejected by the test")
                elif wp.get_pod().uid in s.pods:
                    s.delete_pod(s.pods[wp.get_pod().uid])
        elif op == "explain":
            pending = [p for p in s.pods.values() if not p.node_name]
            if pending:
                before = fingerprint(s)
                s.explain(rng.choice(pending))
                assert fingerprint(s) == before, ("explain changed the scheduler", self.log)
        elif op == "fork" and not nested:
            self.s = s.fork()
        elif op == "transaction" and not nested:
            before = fingerprint(s)
            with s.transaction():
                for _ in range(rng.randint(1, 6)):
                    self.do(nested=True)
                self.s = s  # (a fork inside the block is dropped with it)
            assert fingerprint(s) == before, ("the reverted transaction left changes", self.log)


def rebuilt(s: Scheduler) -> Scheduler:
    fresh = Scheduler(seed=0, feature_gates=GATES)
    fresh.add_nodes(list(s.nodes()))
    fresh.add_pods([p for p in s.pods.values() if p.node_name])
    return fresh


def check_end(s: Scheduler, log: list[str]) -> None:
    before = sum(r.attempts for r in s.pod_results())
    results = s.run(max_attempts=GUARD_ATTEMPTS)
    assert sum(r.attempts for r in results) - before < GUARD_ATTEMPTS, ("run() did not end by itself", log)
    assert not s._waiting, (log, [r.pod.name for r in results if r.status == WAITING])
    for r in results:
        live = s.pods.get(r.pod.uid)
        if live is None:
            continue  # deleted
        if live.node_name:
            assert (r.status, r.node_name) == (SCHEDULED, live.node_name), (log, r.pod.name, r.status, r.message)
            continue
        assert r.status != SCHEDULED, (log, r.pod.name)
        assert r.status != WAITING, (log, r.pod.name, r.message)
        assert r.status != ERROR or r.message in UPSTREAM_ERRORS, (log, r.pod.name, r.message)
        if r.status == PENDING:  # only the members of a PodGroup that does not exist (any more)
            assert live.scheduling_group is not None, (log, r.pod.name)
            assert s.get_object("PodGroup", live.scheduling_group.pod_group_name, live.namespace) is None, (log, r.pod.name)
        else:
            assert r.message, (log, r.pod.name, r.status)
    known = {r.pod.uid for r in results}
    assert all(p.uid in known for p in s.pods.values() if not p.node_name), log
    assert table_by_node(s) == table_by_node(rebuilt(s)), log


@SETTINGS
@given(st.integers(0, 10_000), st.integers(15, 30))
def test_interleaved_operations_keep_the_scheduler_consistent(seed, n_ops):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # (pods bound to deleted nodes: ManifestWarning, as meant)
        ops = Ops(seed)
        for _ in range(n_ops):
            ops.do()
        check_end(ops.s, ops.log)
