"""Scheduler.fork() and Scheduler.transaction(): independent what-ifs, exact reverts."""
from __future__ import annotations

import random

import numpy as np
import pytest

from fastsched import Scheduler
from fastsched.testing import RANDOM_RUNTIME_CLASS, make_node, make_pod, random_cluster, random_pod

#: node-table columns compared by the fingerprints
COLUMNS = ("live", "alloc", "requested", "nonzero_requested", "allowed_pods", "pod_count", "unschedulable",
           "taint_set", "has_host_ports", "pods_with_affinity", "pods_with_req_anti", "terminating_pods",
           "row_first", "row_last", "pod_row", "pod_next", "pod_prev", "pod_shape", "pod_flags")


def fingerprint(s: Scheduler) -> dict:
    """Everything a later placement can depend on, as plain values."""
    table = s.snapshot.table
    return {
        "columns": {name: getattr(table, name).tolist() for name in COLUMNS},
        "rows": dict(table.row_of),
        "results": [(r.pod.name, r.status, r.node_name, r.message, r.attempts, r.nominated_node_name)
                    for r in s.pod_results()],
        "queue": sorted((qpi.pod.name, where, qpi.attempts) for qpi, where in s.queue.queued_pod_infos()),
        "pods": sorted((p.name, p.node_name) for p in s.pods.values()),
        "rng": s.rng.bit_generator.state,
        "plugin_rng": s.plugin_rng.getstate(),
        "start_index": s.next_start_node_index,
        "now": s.clock.now(),
        "attempts": dict(s.metrics.attempts),
    }


def busy_scheduler(seed: int = 0) -> Scheduler:
    """A cluster with running pods of mixed priorities, some pods placed, some failed (and
    preemptions, which draw from the scheduler's RNG), some still queued."""
    nodes, running = random_cluster(seed, n_nodes=40, n_pods=80)
    s = Scheduler(seed=seed)
    s.add_nodes(nodes)
    s.add(RANDOM_RUNTIME_CLASS)
    s.add_pods(running)
    rng = random.Random(seed)
    s.add_pods([random_pod(rng, i) for i in range(60)])
    s.add_pods([make_pod(f"vip-{i}", cpu="3", memory="6Gi", priority=1000) for i in range(6)])
    s.run(max_attempts=40)
    return s


def further_inputs(s: Scheduler, seed: int) -> list:
    """The same further inputs for any scheduler: pods, a node, a deletion, then run to the end."""
    rng = random.Random(1000 + seed)
    s.add_pods([random_pod(rng, 100 + i) for i in range(30)])
    s.add_node(make_node("late-node", cpu="16", memory="32Gi"))
    s.delete_pod(next(p for p in s.pods.values() if p.node_name))
    results = s.run()
    return [(r.pod.name, r.status, r.node_name, r.message) for r in results]


@pytest.mark.parametrize("seed", [0, 1])
def test_fork_places_exactly_as_the_original_would(seed):
    original, reference = busy_scheduler(seed), busy_scheduler(seed)
    fork = original.fork()
    assert fingerprint(fork) == fingerprint(original)
    want = further_inputs(reference, seed)  # a scheduler never forked
    assert further_inputs(fork, seed) == want
    assert further_inputs(original, seed) == want
    assert fingerprint(fork) == fingerprint(original) == fingerprint(reference)
    assert original.metrics.preemption_victims == reference.metrics.preemption_victims


def test_a_fork_diverges_without_touching_its_parent():
    parent = busy_scheduler(2)
    before = fingerprint(parent)
    table_before = parent.snapshot.table
    fork = parent.fork()
    fork.add_nodes([make_node(f"extra-{i}", cpu="32", memory="64Gi") for i in range(3)])
    fork.add_pods([make_pod(f"what-if-{i}", cpu="2") for i in range(50)])
    fork.delete_node(next(iter(parent.snapshot.table.row_of)))
    fork.run()
    assert fingerprint(parent) == before
    assert parent.snapshot.table is table_before
    assert fork.snapshot.table is not parent.snapshot.table
    assert fork.snapshot.table.uid != parent.snapshot.table.uid
    assert "extra-0" in fork.snapshot.table.row_of and "extra-0" not in parent.snapshot.table.row_of
    # and the parent goes on as if the fork never happened
    reference = busy_scheduler(2)
    assert further_inputs(parent, 2) == further_inputs(reference, 2)


def test_forks_of_forks_are_independent():
    s = busy_scheduler(3)
    a = s.fork()
    b = a.fork()
    a.add_pods([make_pod("only-in-a", cpu="1")])
    a.run()
    assert "only-in-a" not in {p.name for p in b.pods.values()}
    assert "only-in-a" not in {p.name for p in s.pods.values()}
    assert fingerprint(b) == fingerprint(s)


def test_fork_drops_the_parents_observers():
    s = busy_scheduler(4)
    seen = []
    s.bound_callbacks.append(seen.append)
    fork = s.fork()
    assert fork.bound_callbacks == [] and fork.preemption_callbacks == []
    fork.add_pods([make_pod("x", cpu="100m")])
    fork.run()
    assert seen == []


def test_transaction_reverts_columns_queue_and_results_exactly():
    s = busy_scheduler(5)
    before = fingerprint(s)
    with s.transaction() as tx:
        s.add_pods([make_pod(f"t-{i}", cpu="1") for i in range(40)])
        s.add_node(make_node("t-node", cpu="64", memory="128Gi"))
        s.run()
        assert fingerprint(s) != before
    assert tx.reverted and not tx.committed
    assert fingerprint(s) == before
    # the reverted scheduler continues exactly as one that never ran the block
    assert further_inputs(s, 5) == further_inputs(busy_scheduler(5), 5)


def test_transaction_commit_keeps_the_changes():
    s = busy_scheduler(6)
    with s.transaction() as tx:
        s.add_pods([make_pod("kept", cpu="100m")])
        s.run()
        after = fingerprint(s)
        tx.commit()
    assert not tx.reverted
    assert fingerprint(s) == after
    assert any(r.pod.name == "kept" and r.scheduled for r in s.pod_results())


def test_transaction_reverts_on_an_exception_and_keeps_callbacks():
    s = busy_scheduler(7)
    seen = []
    s.bound_callbacks.append(seen.append)
    before = fingerprint(s)
    with pytest.raises(RuntimeError, match="boom"):
        with s.transaction():
            s.add_pods([make_pod("doomed", cpu="100m")])
            s.run()
            raise RuntimeError("boom")
    assert fingerprint(s) == before
    assert s.bound_callbacks == [seen.append]
    assert "doomed" in [r.pod.name for r in seen]  # the observer saw the block's binds


def test_rollback_inside_and_nested_transactions():
    s = busy_scheduler(8)
    before = fingerprint(s)
    with s.transaction() as outer:
        s.add_pods([make_pod("a", cpu="100m")])
        s.run()
        middle = fingerprint(s)
        with s.transaction():
            s.add_pods([make_pod("b", cpu="100m")])
            s.run()
        assert fingerprint(s) == middle
        outer.rollback()
        assert fingerprint(s) == before
        s.add_pods([make_pod("c", cpu="100m")])
        s.run()
        outer.commit()
    names = {r.pod.name for r in s.pod_results()}
    assert "c" in names and "a" not in names and "b" not in names


def test_fork_shares_numpy_columns_read_only_until_a_side_writes():
    """(tests/sim/test_fork_columns.py checks the copy-on-write in detail.)"""
    s = busy_scheduler(9)
    fork = s.fork()
    for name in COLUMNS:
        a, b = getattr(s.snapshot.table, name), getattr(fork.snapshot.table, name)
        assert a is b and not a.flags.writeable, name
    fork.add_pods([make_pod("x", cpu="100m")])
    fork.run()
    for name in ("requested", "pod_count", "pod_row"):
        a, b = getattr(s.snapshot.table, name), getattr(fork.snapshot.table, name)
        assert not np.shares_memory(a, b) and b.flags.writeable and not a.flags.writeable, name
    assert s.snapshot.table.alloc is fork.snapshot.table.alloc  # never written: still shared
    # the per-node containers too (a pod placed writes none of them)
    a, b = s.snapshot.table, fork.snapshot.table
    assert a.row_of is b.row_of
    assert a.label_values["kubernetes.io/hostname"] is b.label_values["kubernetes.io/hostname"]
    fork.add_node(make_node("fork-only", cpu="4", memory="8Gi"))
    assert "fork-only" in b.row_of and "fork-only" not in a.row_of


class _Gate:
    """A Permit plugin that makes every pod wait (allowed from outside, or timed out)."""

    def __init__(self, args=None, handle=None):
        pass

    def name(self):
        return "Gate"

    def permit(self, state, pod, node_name):
        from fastsched.framework import Code, Status

        return Status(Code.WAIT), 30.0


def gated_scheduler() -> Scheduler:
    from fastsched import load_config
    from fastsched.framework import PermitPlugin
    from fastsched.runtime import Registry

    gate = type("Gate", (_Gate, PermitPlugin), {})
    cfg = load_config("""
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- plugins:
    permit: {enabled: [{name: Gate}]}
""", registry_names=["Gate"])
    s = Scheduler(cfg, registry=Registry({"Gate": gate}))
    s.add_nodes([make_node(f"n{i}", cpu="4", memory="8Gi") for i in range(3)])
    s.add_pods([make_pod(f"w{i}", cpu="1") for i in range(4)])
    s.run(until=5)
    return s


def test_a_fork_of_pods_waiting_at_permit_goes_its_own_way():
    parent = gated_scheduler()
    assert {r.status for r in parent.pod_results()} == {"Waiting"}
    fork = parent.fork()
    uid = parent.pod_results()[0].pod.uid
    # the fork allows the first pod; the parent lets every pod time out
    fork.profiles["default-scheduler"].get_waiting_pod(uid).allow("Gate")
    fork_results = fork.run(until=10)
    parent_results = parent.run(until=40)
    assert fork_results[0].status == "Scheduled" and fork_results[0].pod.start_time == 5
    assert [r.status for r in fork_results[1:]] == ["Waiting"] * 3
    # the parent's pods timed out at t=35 (and, retried, wait again): as in a scheduler never forked
    assert parent.metrics.attempts["unschedulable"] == 4
    assert all(r.pod.start_time is None for r in parent_results)  # the fork's bind set its own copy's
    unforked = gated_scheduler()
    assert [(r.pod.name, r.status, r.node_name, r.message, r.attempts) for r in unforked.run(until=40)] == \
        [(r.pod.name, r.status, r.node_name, r.message, r.attempts) for r in parent_results]
    # and the fork equals a scheduler that took its path without forking
    reference = gated_scheduler()
    reference.profiles["default-scheduler"].get_waiting_pod(uid).allow("Gate")
    assert [(r.pod.name, r.status, r.node_name) for r in reference.run(until=10)] == \
        [(r.pod.name, r.status, r.node_name) for r in fork_results]


def test_the_original_keeps_the_results_it_handed_out():
    s = Scheduler(seed=0)
    s.add_nodes([make_node("small", cpu="1", memory="2Gi")])
    s.add_pods([make_pod("big", cpu="4")])
    (held,) = s.run()
    assert held.status == "Unschedulable"
    fork = s.fork()
    fork.add_node(make_node("roomy", cpu="8", memory="16Gi"))
    (in_fork,) = fork.run()
    assert in_fork.status == "Scheduled" and in_fork is not held
    assert held.status == "Unschedulable" and s.pod_results()[0] is held  # untouched by the fork
    s.add_node(make_node("other", cpu="8", memory="16Gi"))
    s.run()
    assert held.status == "Scheduled" and held.node_name == "other"  # the very object, kept live
    assert in_fork.node_name == "roomy"


def test_shared_value_dict_copies_on_first_access_and_the_oldest_keeps_the_object():
    from fastsched.scheduler.fork import SharedValueDict

    class Record:
        def __init__(self, v):
            self.v = v

    a = SharedValueDict({"x": Record(1), "y": Record(2), "z": Record(3)})
    x, y = a["x"], a["y"]
    b = a.forked()
    c = b.forked()
    assert dict.__getitem__(b, "x") is x and dict.__getitem__(c, "x") is x  # shared until touched
    bx = b["x"]                       # a younger member touches it: it takes a copy
    assert bx is not x and bx.v == 1 and a["x"] is x
    bx.v = 10
    assert x.v == 1 and c["x"].v == 1
    assert a["y"] is y                # the oldest touches it: it keeps the object, the others get copies
    y.v = 20
    assert b["y"].v == 2 and c["y"].v == 2
    c["z"] = Record(30)               # a write owns the key
    assert a["z"].v == 3 and b.get("z").v == 3 and c.get("z").v == 30
    assert [r.v for r in b.values()] == [10, 2, 3] and dict(a.items())["y"] is y
    assert b.pop("x").v == 10 and "x" not in b and a["x"] is x
    assert a.get("missing", 7) == 7 and b.setdefault("w", 5) == 5
    del c
    d = a.forked()                    # members that are gone are forgotten
    assert d["z"].v == 3 and d["z"] is not a["z"]


def test_decision_records_are_not_shared_between_a_fork_and_its_original():
    s = Scheduler(seed=0, record="all")
    s.add_nodes([make_node("small", cpu="1", memory="2Gi")])
    s.add_pods([make_pod("big", cpu="4")])
    (held,) = s.run()
    assert len(held.history) == 1
    fork = s.fork()
    fork.add_node(make_node("roomy", cpu="8", memory="16Gi"))
    (in_fork,) = fork.run()
    assert len(in_fork.history) == 2 and len(held.history) == 1  # the fork's attempt is its own
    assert in_fork.history[0] is not held.history[0]
    s.add_node(make_node("roomy", cpu="8", memory="16Gi"))
    s.run()
    assert len(held.history) == 2 and len(in_fork.history) == 2


def test_workload_controllers_fork_with_the_cluster(recwarn):
    import pathlib

    examples = pathlib.Path(__file__).resolve().parents[2] / "examples"

    def loaded() -> Scheduler:
        s = Scheduler(seed=3)
        s.add(str(examples / "cluster.yaml"))
        s.add(str(examples / "workload.yaml"))
        s.run()
        return s

    def what_if(s: Scheduler) -> list:
        s.scale("Deployment", "api", 12, namespace="shop")
        s.delete_node(sorted(s.snapshot.table.row_of)[0])
        return sorted((p["metadata"]["name"], p["spec"].get("nodeName")) for p in s.objects("Pod"))

    parent = loaded()
    before = sorted((p["metadata"]["name"], p["spec"].get("nodeName")) for p in parent.objects("Pod"))
    fork = parent.fork()
    forked = what_if(fork)
    fork.run()
    assert sorted((p["metadata"]["name"], p["spec"].get("nodeName")) for p in parent.objects("Pod")) == before
    assert len(fork.objects("Pod")) > len(before)  # the Deployment's controller made the new pods in the fork
    reference = loaded()
    assert what_if(reference) == forked
    reference.run()
    assert sorted((p["metadata"]["name"], p["spec"].get("nodeName")) for p in reference.objects("Pod")) == \
        sorted((p["metadata"]["name"], p["spec"].get("nodeName")) for p in fork.objects("Pod"))


def test_dropped_states_leave_the_family_of_shared_records():
    from fastsched.scheduler.fork import SharedValueDict
    from fastsched.sim.capacity import max_replicas

    s = busy_scheduler(10)
    with s.transaction() as tx:
        s.add_pods([make_pod("kept", cpu="100m")])
        s.run()
        tx.commit()
    # the entry state is dropped: nothing is shared any more, the records are a plain dict again
    assert type(s.results) is dict and type(s.cache._pods) is dict
    with s.transaction():
        s.run()
    assert type(s.results) is dict and type(s.cache._pods) is dict  # the block's state is dropped
    max_replicas(s, make_pod("probe", cpu="100m"))
    assert type(s.results) is dict  # capacity's fork, dropped
    fork = s.fork()
    assert isinstance(s.results, SharedValueDict) and fork.results._family is s.results._family
    assert sum(ref() is not None for ref in s.results._family) == 2
    from fastsched.scheduler.fork import release

    release(fork.__dict__)
    assert type(s.results) is dict and type(s.cache._pods) is dict
    assert fingerprint(s)["results"] == [(r.pod.name, r.status, r.node_name, r.message, r.attempts,
                                          r.nominated_node_name) for r in s.pod_results()]
