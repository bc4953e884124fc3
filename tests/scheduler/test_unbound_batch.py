"""``Cluster.add_pods``' batch of unbound pods (``Cluster._flush_unbound``: the duplicate checks once
for a run of unbound pods, then ``add_pod``'s stores and the handler's call pod by pod) leaves what
``add_pod`` of each pod in turn leaves: the same error (message and field path) at the same pod, the
pods before it stored and queued, the same indexes, results, queue and placements; and each
handler call sees the cluster as ``add_pod`` leaves it (the pods after it not yet stored).

Planted mutants this file kills (each checked, then reverted): the batch's duplicate check dropped
(``_pods_are_new`` answering True); the stores of the whole batch before the handler calls; the
key index's ``add_new`` skipped; the order index's ``add_new`` skipped; the namespace index's
``add_new`` skipped; the unbound batch not flushed on the error path; ``_index_controller``'s
shortcut indexing every pod under no controller.

The queue's activeQ adds of a run are made at once at its end (``PriorityQueue.begin_add_run`` /
``end_add_run``, the handler's ``on_unbound_pods_add``): the pop order, the gated pods and the
queue's incoming-pods records equal ``add_pod``'s of each. Kills: the run's adds reversed or
left out at the end, the incoming-pods record dropped for the batch, the run's adds not made when
the handler raises. (``test_queue.py`` checks ``add_or_update_many`` of both heaps.)
"""
import collections
import random

import pytest

from fastsched import Scheduler
from fastsched.api import Pod
from fastsched.errors import FastschedError
from fastsched.testing import make_node, pod_manifest

NAMESPACES = ("default", "a")


def _history(rng: random.Random, step: int, names: list[tuple[str, str, str]]) -> list:
    """A run of pods: unbound ones mostly (some gated, some owned by a controller), bound and
    terminal ones, a generateName, and now and then a bad one (a duplicate uid or name, in the run
    or against a known pod; a pod built in code with an invalid name)."""
    items: list = []
    for i in range(rng.randrange(5, 30)):
        ns, name = rng.choice(NAMESPACES), f"p{step}-{i}"
        uid = f"{step:04d}{i:04d}-0000-4000-8000-000000000000"
        kind = rng.random()
        if kind < 0.15:
            m = pod_manifest(name, ns, uid=uid, cpu="10m", node_name=f"n{rng.randrange(3)}")
        elif kind < 0.2:
            m = pod_manifest(name, ns, uid=uid, cpu="10m", node_name="n0")
            m["status"] = {"phase": "Succeeded"}
        elif kind < 0.27:
            m = pod_manifest(name, ns, uid=uid, cpu="10m", schedulingGates=[{"name": "example.com/wait"}])
        elif kind < 0.32:
            m = pod_manifest(name, ns, cpu="10m")
            del m["metadata"]["name"]
            m["metadata"]["generateName"] = "g-"
        else:
            m = pod_manifest(name, ns, uid=uid, cpu=f"{rng.randrange(1, 40) * 10}m")
            if rng.random() < 0.3:
                m["metadata"]["ownerReferences"] = [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "rs",
                                                     "uid": "00000000-0000-4000-8000-000000000001",
                                                     "controller": True}]
        bad = rng.random()
        if bad < 0.01 and names:  # a known pod's uid
            m["metadata"]["uid"] = rng.choice(names)[2]
        elif bad < 0.02 and names:  # a known pod's name
            other = rng.choice(names)
            m["metadata"]["namespace"], m["metadata"]["name"] = other[0], other[1]
            m["metadata"].pop("generateName", None)
        elif bad < 0.025 and items and isinstance(items[-1], dict) and "name" in items[-1]["metadata"]:
            m["metadata"]["uid"] = items[-1]["metadata"].get("uid", uid)  # the run's previous pod's uid
        elif bad < 0.03:
            m = Pod.from_manifest(m).replace(name="Bad_", manifest=None)  # built in code, invalid
        items.append(m)
        if isinstance(m, dict) and "name" in m["metadata"]:
            names.append((m["metadata"]["namespace"], m["metadata"]["name"], m["metadata"].get("uid", "")))
    return items


def _state(s: Scheduler) -> dict:
    c = s.cluster
    pods = list(c.pods.values())
    return {
        "pods": [(p.uid, p.namespace, p.name, p.node_name, tuple(t.key for t in p.tolerations), p.priority)
                 for p in pods],
        "order": [c._order_of[p.uid] for p in pods],
        "keys": [c._pod_uid_by_key.get(p.key) for p in pods],
        "by_namespace": {ns: list(c._pod_uids_by_namespace.get(ns) or ()) for ns in NAMESPACES},
        # (in the order the pods were added, as controlled_or_orphans reads it: the index keeps
        # the bulk pods apart)
        "controlled": [sorted(c._controlled.get(("Pod", ns, owner)) or (), key=c._order_of.__getitem__)
                       for ns in NAMESPACES for owner in ("", "00000000-0000-4000-8000-000000000001")],
        "admission_errors": dict(c.admission_errors),
        "results": [(r.pod.uid, r.pod.name, r.status, r.message) for r in s.pod_results()],
        "pending": [p.uid for p in s.queue.pending_pods()[0]], "summary": s.queue.pending_pods()[1],
        "change_seq": s._change_seq,
    }


def _add_each_or_all(s: Scheduler, items: list, one_by_one: bool) -> None:
    """add_pod of each item, or add_pods of them all (the two sides every test here compares)."""
    if one_by_one:
        for item in items:
            s.add_pod(item)
    else:
        s.add_pods(items)


def _add(s: Scheduler, items: list, one_by_one: bool) -> str | None:
    """_add_each_or_all; the FastschedError's message it stopped at, or None."""
    try:
        _add_each_or_all(s, items, one_by_one)
    except FastschedError as e:
        return str(e)
    return None


def _run(history: list[list], one_by_one: bool, seen: list | None = None) -> list:
    s = Scheduler(seed=3)
    s.add_nodes([make_node(f"n{i}", cpu="4", memory="16Gi") for i in range(3)])
    s.add({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "a"}})
    if seen is not None:
        handler = s.cluster._handler
        on_pod_add = handler.on_pod_add

        def watched(pod, err):
            # what the handler's call can see of the cluster: the pods stored so far
            # (bound pods added in bulk come as one call, on_bound_pods_add: unbound ones only)
            if not pod.node_name:
                seen.append((pod.uid, len(s.cluster.pods), s.cluster.get_pod(pod.namespace, pod.name) is pod))
            on_pod_add(pod, err)
        handler.on_pod_add = watched
    out = []
    for step, items in enumerate(history):
        out.append((_add(s, items, one_by_one), _state(s)))
        if step % 2:
            s.run()
            out.append(("run", _state(s), [(r.pod.uid, r.node_name) for r in s.pod_results()]))
    return out


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_a_batch_of_unbound_pods_is_add_pod_of_each(seed):
    rng = random.Random(seed)
    names: list[tuple[str, str, str]] = []
    history = [_history(rng, step, names) for step in range(6)]
    seen_batch: list = []
    seen_one: list = []
    batched = _run(history, False, seen_batch)
    assert batched == _run(history, True, seen_one)
    assert seen_batch == seen_one
    errors = [step[0] for step in batched if step[0] not in (None, "run")]
    assert errors, "some runs must stop at a bad pod"
    assert any(step[0] is None for step in batched)
    final = batched[-1][1]
    owned = final["controlled"][1] + final["controlled"][3]  # under the ReplicaSet's uid
    assert owned and not set(owned) & set(final["controlled"][0] + final["controlled"][2])


def test_an_error_in_the_middle_of_a_run_of_unbound_pods():
    """The pods before the bad one are stored and queued, those after it are not; the message is
    add_pod's, with its field path."""
    def add(one_by_one: bool, bad) -> tuple:
        s = Scheduler(seed=1)
        s.add_nodes([make_node("n0", cpu="4", memory="16Gi")])
        # (runs shorter than _UNBOUND_RUN_MIN take add_pod itself)
        items = [pod_manifest(f"p{i}", cpu="10m", uid=f"000000{i:02d}-0000-4000-8000-000000000000") for i in range(16)]
        items[12] = bad(items)
        error = _add(s, items, one_by_one)
        assert error is not None, "no error"
        return error, _state(s)

    def same_uid(items):
        return pod_manifest("other", cpu="10m", uid=items[1]["metadata"]["uid"])

    def same_name(items):
        return pod_manifest("p1", cpu="10m", uid="00000099-0000-4000-8000-000000000000")

    def invalid(items):
        return Pod.from_manifest(items[12]).replace(name="Bad_", manifest=None)

    for bad, wanted in ((same_uid, "metadata.uid"), (same_name, 'pods "p1" already exists'),
                        (invalid, 'metadata.name: Invalid value: "Bad_"')):
        message, state = add(False, bad)
        assert (message, state) == add(True, bad)
        assert wanted in message
        assert [r[1] for r in state["results"]] == [f"p{i}" for i in range(12)]
        assert state["pending"] == [r[0] for r in state["results"]]


def _queue_run(one_by_one: bool, items: list, pre: list) -> tuple:
    s = Scheduler(seed=2)
    s.add_nodes([make_node("n0", cpu="4", memory="16Gi")])
    records: list = []
    s.queue._metrics = lambda name, labels: records.append((name, tuple(sorted(labels.items()))))
    for item in pre:  # pods queued before the run, at other priorities
        s.add_pod(item)
    error = _add(s, items, one_by_one)
    gated = sorted(r.pod.uid for r in s.pod_results() if r.status == "Gated")
    popped = []
    while (qpi := s.queue.pop()) is not None:
        popped.append((qpi.pod.uid, qpi.initial_attempt_timestamp is not None))
    # (counters: their values, not the order of the calls -- a run records its gated pods as
    # each is added and its activeQ adds at its end)
    return error, popped, gated, collections.Counter(records), s.queue.pending_pods()[1]


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_the_queue_after_a_run_is_add_of_each(seed):
    """activeQ's pop order (mixed priorities: the heap and its sorted run both used), the gated
    pods, the incoming-pods records after a run added at once equal add_pod's of each; also when
    the run stops at a bad pod (the pods before it queued)."""
    rng = random.Random(seed)
    pre = [pod_manifest(f"q{i}", cpu="10m", priority=rng.choice((0, 5, 10)),
                        uid=f"900000{i:02d}-0000-4000-8000-000000000000") for i in range(6)]
    items = []
    for i in range(40):
        extra = {"schedulingGates": [{"name": "example.com/wait"}]} if rng.random() < 0.15 else {}
        items.append(pod_manifest(f"p{i}", cpu="10m", priority=rng.choice((0, 0, 5, 10, 20)),
                                  uid=f"000000{i:02d}-0000-4000-8000-000000000000", **extra))
    batched = _queue_run(False, items, pre)
    assert batched == _queue_run(True, items, pre)
    error, popped, gated, records, _ = batched
    assert error is None and len(popped) + len(gated) == 46 and gated
    assert sorted(set(r[0] for r in records)) == ["queue_incoming_pods"] and sum(records.values()) == 46
    bad = list(items)
    bad[30] = pod_manifest("p3", cpu="10m", uid="00000099-0000-4000-8000-000000000000")
    batched = _queue_run(False, bad, pre)
    assert batched == _queue_run(True, bad, pre)
    assert batched[0] and len(batched[1]) + len(batched[2]) == 36


def test_a_run_stopped_by_an_exception_in_the_handler_queues_the_pods_before_it():
    """An exception out of the handler's call for a pod (none is expected: a crashing PreEnqueue
    plugin gates its pod) stops the run there, as add_pod of each: the pods before it queued
    (the run's activeQ adds are made on the way out)."""
    def add(one_by_one: bool) -> tuple:
        s = Scheduler(seed=1)
        s.add_nodes([make_node("n0", cpu="4", memory="16Gi")])
        handler = s.cluster._handler
        on_pod_add = handler.on_pod_add

        def failing(pod, err):
            if pod.name == "p9":
                raise RuntimeError("boom")
            on_pod_add(pod, err)
        handler.on_pod_add = failing
        items = [pod_manifest(f"p{i}", cpu="10m", uid=f"000000{i:02d}-0000-4000-8000-000000000000") for i in range(16)]
        with pytest.raises(RuntimeError, match="boom"):
            _add_each_or_all(s, items, one_by_one)
        handler.on_pod_add = on_pod_add
        popped = []
        while (qpi := s.queue.pop()) is not None:
            popped.append(qpi.pod.name)
        return popped, sorted(p.name for p in s.cluster.pods.values())

    batched = add(False)
    assert batched == add(True)
    assert batched[0] == [f"p{i}" for i in range(9)]


class _ScriptedNames:
    """A NameGenerator whose generate answers scripted suffixes in turn (a collision on demand)."""

    def __init__(self, suffixes):
        self._suffixes = iter(suffixes)

    def generate(self, base):
        return base + next(self._suffixes)


@pytest.mark.parametrize("mutant", [False, True])
def test_a_generated_name_sees_the_pods_of_the_run_not_yet_stored(mutant, monkeypatch):
    """A pod named from generateName in the middle of a run of unbound pods (and of bound ones)
    sees the run's pods before it as taken, as add_pod of each does (the API server names a pod
    seeing every pod created before it): a generated name equal to one of theirs is drawn again.
    The names are scripted so that the collisions happen: g-aaaaa is drawn for the generated pod
    after an explicit g-aaaaa (bound) and g-bbbbb after an earlier generated g-bbbbb. A planted
    mutant (name_taken blind to the run's pods) makes add_pods refuse a pod add_pod takes."""
    from fastsched.scheduler import cluster as cluster_module

    if mutant:
        real = cluster_module.Cluster.name_taken

        def blind(self, kind, namespace, name):
            pending, self._pending_pod_keys = self._pending_pod_keys, None
            try:
                return real(self, kind, namespace, name)
            finally:
                self._pending_pod_keys = pending
        monkeypatch.setattr(cluster_module.Cluster, "name_taken", blind)

    def generated(i):
        m = pod_manifest("x", cpu="10m")
        del m["metadata"]["name"]
        m["metadata"]["generateName"] = "g-"
        return m

    items = [pod_manifest(f"p{i}", cpu="10m", uid=f"000000{i:02d}-0000-4000-8000-000000000000") for i in range(12)]
    items[3] = pod_manifest("g-aaaaa", cpu="10m", node_name="n0", uid="00000077-0000-4000-8000-000000000000")
    items[5] = generated(5)  # draws g-aaaaa (taken by items[3], in the run), then g-bbbbb
    items[9] = generated(9)  # draws g-bbbbb (items[5]'s, in the run), then g-ccccc
    items.append(generated(12))  # draws g-ddddd

    def add(one_by_one: bool) -> tuple:
        s = Scheduler(seed=1)
        s.add_nodes([make_node("n0", cpu="4", memory="16Gi")])
        s.cluster.names = _ScriptedNames(["aaaaa", "bbbbb", "bbbbb", "ccccc", "ddddd"])
        return _add(s, items, one_by_one), _state(s)

    batched, each = add(False), add(True)
    if mutant:
        assert batched != each and batched[0] is not None and "already exists" in batched[0]
        return
    assert batched == each
    error, state = batched
    assert error is None
    assert sorted(n for _, _, n, *_ in state["pods"] if n.startswith("g-")) == ["g-aaaaa", "g-bbbbb", "g-ccccc", "g-ddddd"]
