"""The preemption victim's removal shortcuts against the paths they replace, on seeded random inputs:
``Cache._unplace_bulk`` removing a bulk pod by its table record (``NodeTable.remove_record``)
instead of by node name and a scan of the node's records, and ``UidMap``'s last-lookup memo and
``remove_if`` against a plain dict."""
import random

import numpy as np
import pytest

from fastsched.scheduler import Scheduler
from fastsched.scheduler.cache import IN_CACHE, Cache, UidMap
from fastsched.snapshot.table import FLAG_AFFINITY, FLAG_HOST_PORTS, FLAG_REQUIRED_ANTI, NodeTable

from tests.scheduler.test_bulk_pod_deletes import _Log, index_state, preemption_run, with_controllers
from tests.snapshot.test_bulk import table_state
from tests.snapshot.test_bulk_scheduler import BUILDS, in_bulk, outcome, scheduler_state


def _unplace_bulk_by_name(self, b):
    """The removal as it was before ``remove_record``: the node's name, then ``_unplace``."""
    bulk = self.bulk
    pod, node_name = bulk.pod(b), bulk.node_name(b)
    bulk.detach(b, pod)
    self._unplace(pod, node_name)
    bulk.clear(b, IN_CACHE)
    return pod


def _deletions(s: Scheduler, seed: int) -> list:
    """Bound pods deleted (some after their node: ghosts), in a seeded order; the events heard."""
    rng = random.Random(seed)
    log = _Log(s)
    bound = [p for p in s.pods.values() if p.node_name]
    rng.shuffle(bound)
    nodes = sorted({p.node_name for p in bound[40:60]})
    for name in nodes[:2]:  # their pods become ghosts (records gone, objects kept)
        s.delete_node(name)
    for i, p in enumerate(bound[:60]):
        s.delete_pod(p if i % 2 else p.uid)
    return log.events


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("name", ["basic", "spreading", "anti-affinity", "random-1", "generated-2"])
def test_bulk_removal_by_record_is_the_removal_by_node_name(name, seed, monkeypatch):
    build = with_controllers(BUILDS[name], seed)
    fast, slow = in_bulk(build), in_bulk(build)
    hits = []
    real = NodeTable.remove_record
    monkeypatch.setattr(NodeTable, "remove_record", lambda self, *a: hits.append(a) or real(self, *a))
    fast_events = _deletions(fast, seed)
    monkeypatch.setattr(Cache, "_unplace_bulk", _unplace_bulk_by_name)
    slow_events = _deletions(slow, seed)
    assert len(hits) >= 20  # the record path ran, not the ghost fallback only
    assert fast_events == slow_events
    assert index_state(fast) == index_state(slow)
    assert scheduler_state(fast) == scheduler_state(slow)
    assert outcome(fast) == outcome(slow)


@pytest.mark.parametrize("seed", range(4))
def test_preemption_victims_removed_by_record_as_by_node_name(seed, monkeypatch):
    fast = preemption_run(seed, monkeypatch)
    slow = preemption_run(seed, monkeypatch,
                          patch=lambda mp: mp.setattr(Cache, "_unplace_bulk", _unplace_bulk_by_name))
    assert fast[3] > 0
    assert fast == slow


@pytest.mark.parametrize("seed", range(5))
def test_uid_map_memo_and_remove_if_answer_as_a_dict(seed):
    rng = random.Random(seed)
    canonical = [f"{rng.getrandbits(32):08x}-{rng.getrandbits(16):04x}-4000-8000-{rng.getrandbits(48):012x}"
                 for _ in range(60)]
    others = [f"uid-{k}" for k in range(20)]  # not canonical UUIDs: the dict side
    m, ref = UidMap(), {}
    nxt = 0
    for _ in range(600):
        op = rng.random()
        if op < 0.15:
            batch = rng.sample(canonical + others, 5)
            batch = [u for u in batch if u not in ref]
            if batch:
                m.put_many(batch, nxt)
                ref.update({u: nxt + i for i, u in enumerate(batch)})
                nxt += len(batch)
        elif op < 0.3:
            u = rng.choice(canonical + others)
            m.remove(u)
            ref.pop(u, None)
        elif op < 0.45:
            u = rng.choice(canonical + others)
            value = ref.get(u, -1) if rng.random() < 0.6 else rng.randrange(nxt + 1)
            m.remove_if(u, value)
            if u in ref and ref[u] == value:
                del ref[u]
        else:
            u = rng.choice(canonical + others)
            # the same object twice (the memo), and an equal copy (not the memo's object)
            assert m.get(u) == ref.get(u, -1)
            assert m.get(u) == ref.get(u, -1)
            assert m.get("".join(u)) == ref.get(u, -1)
        assert len(m) == len(ref)


def test_uid_map_memo_forgets_on_every_change():
    u = "0000000a-0000-4000-8000-00000000000b"
    v = "uid-not-canonical"
    m = UidMap()
    for uid in (u, v):
        m.put_many([uid], 7)
        assert m.get(uid) == 7
        m.remove(uid)
        assert m.get(uid) == -1
        m.put_many([uid], 9)
        assert m.get(uid) == 9
        m.remove_if(uid, 8)  # not its value: kept
        assert m.get(uid) == 9
        m.remove_if(uid, 9)
        assert m.get(uid) == -1


@pytest.mark.parametrize("seed", range(3))
def test_node_table_remove_record_is_remove_pod(seed):
    # two equal schedulers' tables: every bound pod removed by record on one, by node name on the other
    build = BUILDS["random-1" if seed % 2 else "spreading"]
    a, b = in_bulk(build), in_bulk(build)
    rng = random.Random(seed)
    pods = [p for p in a.pods.values() if p.node_name]
    rng.shuffle(pods)
    ta, tb = a.snapshot.table, b.snapshot.table
    for p in pods[:80]:
        rec = ta.find_pod(p.node_name, p.uid)
        assert rec >= 0
        pa = ta.remove_record(rec) if rng.random() < 0.5 else ta.remove_record(rec, ta.row_of[p.node_name])
        pb = tb.remove_pod(p.node_name, p)
        assert pa.pod.uid == pb.pod.uid == p.uid
    assert ta.version == tb.version
    assert table_state(ta) == table_state(tb)  # (the schedulers' bulk entries still name the records)
    assert np.array_equal(ta.requested, tb.requested) and np.array_equal(ta.pod_count, tb.pod_count)


def _remove_record_step_by_step(self, rec, row=-1):
    """``NodeTable.remove_record`` as it was before ``Accounts.release``: the record's columns
    read one by one, ``Accounts.remove``, then ``_free_record``."""
    from fastsched.snapshot.table import FLAG_TERMINATING
    if row < 0:
        row = int(self.pod_row[rec])
    if self._shared:
        self._own_accounts()
    pi = self.pod_info(rec)
    lst = self._row_lists.get(row)
    if lst is not None:
        for i, other in enumerate(lst):
            if other is pi:
                lst[i] = lst[-1]
                lst.pop()
                break
    flags = int(self.pod_flags[rec])
    self.version += 1
    self._acc.remove(rec, self.version)
    self._count_signature(row, int(self.pod_signature[rec]), -1)
    if flags & FLAG_AFFINITY:
        self.total_pods_with_affinity -= 1
        self._count_affinity_signature(row, int(self.pod_affinity_signature[rec]), -1)
    if flags & FLAG_REQUIRED_ANTI:
        self.total_pods_with_req_anti -= 1
    if flags & FLAG_TERMINATING:
        self.total_terminating_pods -= 1
    if flags & FLAG_HOST_PORTS:
        self._count_ports(row, self._record_derived(rec).host_ports, -1)
    self._free_record(rec)
    return pi


def _record_columns(t: NodeTable) -> dict:
    """The per-record columns and free lists (what ``table_state`` does not read)."""
    n = len(t.pod_row)
    return {"cols": {name: getattr(t, name)[:n].tolist() for name in (
                "pod_row", "pod_next", "pod_prev", "pod_flags", "pod_signature", "pod_affinity_signature",
                "pod_template", "row_first", "row_last")},
            "names": list(t.pod_names), "uid_str": dict(t._pod_uid_str), "infos": sorted(t._pod_infos),
            "freed": list(t._freed_records), "free_templates": list(t._free_pod_templates),
            "templates": [None if x is None else x.refs for x in t._pod_templates],
            "template_keys": len(t._pod_template_index), "change": t._change_pos.tolist()}


def _mixed_signatures():
    """Bound pods of five label sets, a third of them with required anti-affinity of four
    selectors, some with a host port: label and affinity signature numbers that differ on a
    pod (the workloads' pods share one of each)."""
    from fastsched.testing import make_node, make_pod
    nodes = [make_node(f"n{i}", cpu="32", memory="64Gi") for i in range(8)]
    pods = []
    for i in range(90):
        spec = {}
        if i % 3 == 0:
            spec["affinity"] = {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
                {"labelSelector": {"matchLabels": {"app": f"a{i % 4}"}}, "topologyKey": "kubernetes.io/hostname"}]}}
        pods.append(make_pod(f"p{i}", cpu="100m", labels={"app": f"a{i % 5}"}, node_name=f"n{i % 8}",
                             host_ports=(8000 + i,) if i % 7 == 0 else (), **spec))
    return [], nodes, pods


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("name", ["random-1", "random-2", "anti-affinity", "generated-1", "mixed-signatures"])
def test_remove_record_by_release_is_the_step_by_step_removal(name, seed, monkeypatch):
    # every bound pod removed by record, in a seeded order, with the row's PodInfo list built on
    # some rows, after a few one-by-one adds (records without a template): Accounts.release's one
    # step against the removal reading and writing the columns one element at a time
    build = _mixed_signatures if name == "mixed-signatures" else BUILDS[name]
    a, b = in_bulk(build), in_bulk(build)
    rng = random.Random(seed)
    ta, tb = a.snapshot.table, b.snapshot.table
    pods = [p for p in a.pods.values() if p.node_name]
    rng.shuffle(pods)
    rows = sorted(ta.row_of.values())
    for row in rng.sample(rows, min(10, len(rows) - 2)):  # PodInfo lists built on some rows
        assert [pi.pod.uid for pi in ta.pods[row]] == [pi.pod.uid for pi in tb.pods[row]]
    assert ta.built_pod_rows()
    flags = 0
    for p in pods[:120]:
        rec = ta.find_pod(p.node_name, p.uid)
        assert rec == tb.find_pod(p.node_name, p.uid) >= 0
        flags |= int(ta.pod_flags[rec])
        row = ta.row_of[p.node_name] if rng.random() < 0.5 else -1
        pa = ta.remove_record(rec, row)
        pb = _remove_record_step_by_step(tb, rec, row)
        assert pa.pod.uid == pb.pod.uid == p.uid
    # (the flags' branches ran: affinity and anti-affinity pods, pods with host ports)
    want = {"anti-affinity": FLAG_AFFINITY | FLAG_REQUIRED_ANTI, "random-1": FLAG_HOST_PORTS,
            "random-2": FLAG_HOST_PORTS,
            "mixed-signatures": FLAG_AFFINITY | FLAG_REQUIRED_ANTI | FLAG_HOST_PORTS}.get(name, 0)
    assert flags & want == want
    assert ta.version == tb.version
    assert table_state(ta) == table_state(tb)
    assert _record_columns(ta) == _record_columns(tb)
    assert np.array_equal(ta.requested, tb.requested) and np.array_equal(ta.nonzero_requested, tb.nonzero_requested)


def test_accounts_release_answers_what_the_record_held_and_refuses_a_bad_record():
    s = in_bulk(BUILDS["random-1"])
    t = s.snapshot.table
    p = next(p for p in s.pods.values() if p.node_name)
    rec = t.find_pod(p.node_name, p.uid)
    want = (t.row_of[p.node_name], int(t.pod_flags[rec]), int(t.pod_signature[rec]),
            int(t.pod_affinity_signature[rec]), int(t.pod_template[rec]))
    assert t._acc.release(rec, t.version + 1) == want
    assert (int(t.pod_row[rec]), int(t.pod_flags[rec]), int(t.pod_template[rec])) == (-1, 0, -1)
    with pytest.raises(KeyError, match=f"pod record {rec} is not on a row"):
        t._acc.release(rec, t.version + 2)  # (already released: on no row)
    with pytest.raises(IndexError, match="outside"):
        t._acc.release(len(t.pod_row), t.version + 2)
    with pytest.raises(IndexError, match="outside"):
        t._acc.release(-1, t.version + 2)
