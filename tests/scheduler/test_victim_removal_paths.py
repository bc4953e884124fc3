"""The preemption victim's removal shortcuts against the paths they replace, on seeded random inputs:
``Cache._unplace_bulk`` removing a bulk pod by its table record (``NodeTable.remove_record``)
instead of by node name and a scan of the node's records, and ``UidMap``'s last-lookup memo and
``remove_if`` against a plain dict."""
import random

import numpy as np
import pytest

from fastsched.scheduler import Scheduler
from fastsched.scheduler.cache import IN_CACHE, Cache, UidMap
from fastsched.snapshot.table import NodeTable

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
