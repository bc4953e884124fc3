"""Deleting bound pods added in bulk (``Cluster._delete_pod``'s one-step index removal,
``cache.pop_bulk_pod``) against the index-by-index removal it replaces: on seeded random clusters
(controllers, namespaces, pods re-set one at a time before their deletion, deletions by Pod and by
uid, preemptions with PDBs and nominations), the same indexes, the same events to the scheduler and
its observers, in the same order, and the same results."""
import random

import pytest

from fastsched.api import OwnerReference, PodDisruptionBudget
from fastsched.scheduler import Scheduler, cluster as cluster_module
from fastsched.sim.workloads import WORKLOADS
from fastsched.testing import make_pod

from tests.snapshot.test_bulk_scheduler import BUILDS, in_bulk, outcome, scheduler_state


def index_state(s: Scheduler) -> dict:
    c = s.cluster
    bulk = s.cache.bulk
    return {
        "scheduler": scheduler_state(s),
        "keys": dict(c._pod_uid_by_key._d), "order": dict(c._order_of._d), "pods": list(dict.keys(c.pods)),
        "namespaces": {ns: list(d) for ns, d in c._pod_uids_by_namespace._d.items()},
        "controlled": {key: list(d) for key, d in c._controlled._d.items()},
        "controlled_views": {key: sorted(c._controlled.get(key, {})) for key in list(c._controlled._d)},
        "bulk": (bulk.n_live, bulk.flags[:bulk.n].tolist(), bulk.rec[:bulk.n].tolist(), [bulk.name(b) if bulk.flags[b] else None for b in range(bulk.n)],
                 sorted(bulk.objects), {ns: dict(d) for ns, d in bulk.by_name.items()}),
        "admission_errors": dict(c.admission_errors),
    }


def with_controllers(build, seed):
    """``build``'s pods, a third of the bound ones controlled by one of three (absent) owners, some
    owned without being controlled."""
    def built():
        namespaces, nodes, pods = build()
        rng = random.Random(seed)
        owners = [f"{k:08x}-0000-4000-8000-{seed:012x}" for k in range(3)]
        out = []
        for p in pods:
            r = rng.random() if p.node_name else 1.0  # (the bound ones)
            if r < 0.33:
                p = p.replace(owner_references=(OwnerReference("ReplicaSet", "rs", rng.choice(owners), True, "apps/v1"),))
            elif r < 0.45:
                p = p.replace(owner_references=(OwnerReference("ReplicaSet", "rs", rng.choice(owners), False, "apps/v1"),))
            out.append(p)
        return namespaces, nodes, out
    return built


class _Log:
    """The events the scheduler hears and sends, in order."""

    def __init__(self, s: Scheduler):
        self.events: list = []
        handler = s.cluster._handler
        for name in ("on_pod_delete", "on_preempting", "on_nomination_cleared", "on_pod_status_update",
                     "on_pod_update"):
            self._wrap(handler, name)
        self._wrap(s.queue, "move_all_to_active_or_backoff_queue")
        self._wrap(s.queue.nominator, "delete_nominated_pod_if_exists")
        s.preemption_callbacks.append(lambda v, p, n: self.events.append(("callback", v.uid, p.uid, n)))

    def _wrap(self, obj, name):
        inner = getattr(obj, name)

        def logged(*args, **kwargs):
            self.events.append((name, *[getattr(a, "uid", a) if not callable(a) else "fn" for a in args]))
            return inner(*args, **kwargs)
        setattr(obj, name, logged)


def _ops(s: Scheduler, seed: int) -> list:
    rng = random.Random(seed)
    log = _Log(s)
    bound = [p for p in s.pods.values() if p.node_name]
    rng.shuffle(bound)
    for p in bound[:10]:  # re-set one at a time first: the dict entry wins
        s.update_pod(p.replace(labels={**p.labels, "touched": "yes"}))
    for i, p in enumerate(bound[:40]):
        s.delete_pod(p if i % 3 else p.uid)
    try:
        s.delete_pod(bound[0].uid)
    except Exception as e:  # noqa: BLE001 - gone: the same error on both paths
        log.events.append(("error", type(e).__name__, str(e)))
    return log.events


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("name", ["basic", "generated-1", "random-1", "preemption"])
def test_one_step_removal_is_the_index_by_index_removal(name, seed, monkeypatch):
    build = with_controllers(BUILDS[name], seed)
    fast, slow = in_bulk(build), in_bulk(build)
    hits = []
    real = cluster_module.pop_bulk_pod
    monkeypatch.setattr(cluster_module, "pop_bulk_pod", lambda *a: hits.append(r := real(*a)) or r)
    fast_events = _ops(fast, seed)
    monkeypatch.setattr(cluster_module, "pop_bulk_pod", lambda *a: None)
    slow_events = _ops(slow, seed)
    assert sum(h is not None for h in hits) >= 25  # the one-step path ran (not the fallback only)
    assert fast_events == slow_events
    assert index_state(fast) == index_state(slow)
    monkeypatch.setattr(cluster_module, "pop_bulk_pod", real)
    assert outcome(fast) == outcome(slow)


def _preemption_cluster(seed: int):
    def build():
        rng = random.Random(seed)
        inst = WORKLOADS["PreemptionBasic"].build(nodes=12, init_pods=48, measured_pods=10, prebind=True)
        init = []
        for i, p in enumerate(inst.init_pods):
            p = p.replace(priority=rng.choice([0, 1, 2]), labels={**p.labels, "grp": rng.choice("ab")})
            if rng.random() < 0.3:
                owner = f"0000000{i % 2}-0000-4000-8000-{seed:012x}"
                p = p.replace(owner_references=(OwnerReference("ReplicaSet", "rs", owner, True, "apps/v1"),))
            init.append(p)
        measured = list(inst.measured_pods)
        # a low-priority pending pod among the preemptors (it may preempt the priority-0 pods)
        measured.insert(0, make_pod("low", cpu="3", priority=1).replace(namespace=measured[0].namespace))
        return inst, init, measured
    return build


def preemption_run(seed: int, monkeypatch, patch=None, objects=None) -> tuple:
    """The preemption cluster of ``seed`` scheduled (``objects(measured)`` added before the measured
    pods; ``patch(monkeypatch)`` applied for the run, then undone): its outcome, the events heard,
    the nomination index's state and the number of victims."""
    inst, init, measured = _preemption_cluster(seed)()
    s = Scheduler(inst.config, seed=seed)
    s.add(inst.namespaces)
    s.add(inst.priority_classes)
    s.add_nodes(inst.nodes)
    s.add_pods(init)
    if objects is not None:
        s.add(objects(measured))
    s.add_pods(measured)
    if patch is not None:
        patch(monkeypatch)
    log = _Log(s)
    out = outcome(s)
    monkeypatch.undo()
    return out, log.events, index_state(s), s.metrics.preemption_victims


def _pdbs(measured) -> list:
    ns = measured[-1].namespace
    return [PodDisruptionBudget.from_manifest({
        "apiVersion": "policy/v1", "kind": "PodDisruptionBudget",
        "metadata": {"name": f"pdb-{g}", "namespace": ns},
        "spec": {"minAvailable": 20 if g == "a" else 1, "selector": {"matchLabels": {"grp": g}}},
        "status": {"disruptionsAllowed": 0 if g == "a" else 5}}) for g in "ab"]


@pytest.mark.parametrize("seed", range(6))
def test_preemption_victims_deleted_in_one_step_as_one_by_one(seed, monkeypatch):
    fast = preemption_run(seed, monkeypatch, objects=_pdbs)
    slow = preemption_run(seed, monkeypatch, objects=_pdbs,
                          patch=lambda mp: mp.setattr(cluster_module, "pop_bulk_pod", lambda *a: None))
    assert fast[3] > 0
    assert fast == slow


def test_a_deleted_bulk_pod_frees_its_name():
    # BulkPods keeps no names of its own: a pod's name comes from its table record, or from its
    # object once the record is gone (a ghost of a deleted node); deleting frees it either way
    from fastsched.sim.generators import upstream_nodes
    from fastsched.sim.workloads import template_pod

    s = Scheduler(seed=0)
    nodes = upstream_nodes(3)
    s.add_nodes(nodes)
    pods = [template_pod("pod-default", f"p-{i}").replace(node_name=nodes[i].name, phase="Running") for i in range(3)]
    s.add_pods(pods)
    bulk, keys = s.cache.bulk, s.cluster._pod_uid_by_key
    ns = pods[0].namespace
    assert bulk.n_live == 3 and sorted(bulk.by_name[ns]) == ["p-0", "p-1", "p-2"]
    s.delete_pod(pods[1])                      # on its node: the name from the table record
    s.delete_node(nodes[2].name)               # p-2 a ghost: its record gone, its object kept
    assert bulk.rec[bulk.by_name[ns]["p-2"]] == -1
    s.delete_pod(pods[2])                      # the name from the object
    assert sorted(bulk.by_name[ns]) == ["p-0"]
    assert not keys.has_name(ns, "p-1") and not keys.has_name(ns, "p-2") and keys.has_name(ns, "p-0")
    again = template_pod("pod-default", "p-1").replace(uid="00000000-0000-4000-8000-000000000001",
                                                       node_name=nodes[0].name, phase="Running")
    s.add_pod(again)                           # the name is free again
    assert s.cluster.pods[again.uid].name == "p-1"
