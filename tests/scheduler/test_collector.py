"""The garbage collector around the scheduling loop (:mod:`fastsched.util.collector`): full passes
deferred while ``run()`` schedules, one every ``FULL_COLLECTION_EVERY`` attempts instead, and the
thresholds as the caller had them afterwards, also when blocks nest or ``run()`` raises; a paused block's objects handed to the old generation
without a young pass, unless the heap is frozen."""
from __future__ import annotations

import gc

import pytest

from fastsched.scheduler import Scheduler
from fastsched.testing import make_node, make_pod
from fastsched.util import collector
from fastsched.util.collector import full_collections_deferred


@pytest.fixture
def thresholds():
    saved = gc.get_threshold()
    gc.set_threshold(700, 10, 10)
    yield
    gc.set_threshold(*saved)


def test_the_old_generation_waits_in_the_block_and_the_thresholds_come_back(thresholds):
    with full_collections_deferred():
        assert gc.get_threshold()[:2] == (700, 10) and gc.get_threshold()[2] > 10 ** 6
        with full_collections_deferred():  # (nested: the outer block restores)
            pass
        assert gc.get_threshold()[2] > 10 ** 6
    assert gc.get_threshold() == (700, 10, 10)
    with pytest.raises(RuntimeError), full_collections_deferred():
        raise RuntimeError
    assert gc.get_threshold() == (700, 10, 10)


def test_run_defers_full_passes_and_runs_its_own_every_so_many_attempts(thresholds, monkeypatch):
    monkeypatch.setattr("fastsched.scheduler.scheduler.FULL_COLLECTION_EVERY", 7)
    sched = Scheduler(seed=1)
    for i in range(4):
        sched.add_node(make_node(f"n{i}", cpu="100"))
    for i in range(30):
        sched.add_pod(make_pod(f"p{i}", cpu="100m"))
    seen = []

    def during(phase, info):
        if phase == "start":
            seen.append((info["generation"], gc.get_threshold()[2]))

    gc.callbacks.append(during)
    try:
        results = sched.run()
    finally:
        gc.callbacks.remove(during)
    assert all(r.node_name for r in results)
    full = [t for g, t in seen if g == 2]
    assert len(full) == 4  # after attempts 7, 14, 21 and 28, with the thresholds deferred
    assert all(t > 10 ** 6 for t in full)
    assert gc.get_threshold() == (700, 10, 10)
    assert collector._deferred_depth == 0


class _Node:
    def __init__(self):
        self.other = None


def _made_in_a_paused_block():
    assert 2000 >= collector.PROMOTE_AFTER * gc.get_threshold()[0]
    with collector.collector_paused():
        made = [_Node() for _ in range(2000)]
        for a, b in zip(made, made[1:]):
            a.other = b
        cycle = _Node()
        cycle.other = cycle
    return made, cycle


@pytest.mark.skipif(not collector._SPLICED_FREEZE, reason="a free-threaded build keeps the young pass")
def test_a_paused_block_hands_its_objects_to_the_old_generation_without_a_pass(thresholds):
    assert gc.isenabled()
    passes = []

    def during(phase, info):
        if phase == "start":
            passes.append(info["generation"])

    gc.callbacks.append(during)
    try:
        made, cycle = _made_in_a_paused_block()
        after = [object.__new__(_Node) for _ in range(10)]  # allocations after the block: no pass due
    finally:
        gc.callbacks.remove(during)
    assert passes == []
    assert gc.get_count()[0] < 50
    old = {id(o) for o in gc.get_objects(generation=2)}
    assert all(id(o) in old for o in made) and id(cycle) in old
    assert gc.get_freeze_count() == 0
    # nothing is lost: a cycle made in the block is collected by the next full pass
    import weakref
    ref = weakref.ref(cycle)
    del cycle
    gc.collect()
    assert ref() is None
    del made, after


def test_a_paused_block_leaves_a_frozen_heap_frozen(thresholds):
    gc.collect()
    kept = [_Node() for _ in range(10)]
    gc.freeze()
    try:
        frozen = gc.get_freeze_count()
        made, _ = _made_in_a_paused_block()
        assert gc.get_freeze_count() == frozen  # not thawed by the block's exit
        old = {id(x) for x in gc.get_objects(generation=2)}
        assert not any(id(o) in old for o in kept)
    finally:
        gc.unfreeze()
    del made, kept


def test_a_small_paused_block_leaves_its_objects_to_the_young_pass(thresholds):
    gc.collect()
    with collector.collector_paused():
        made = [_Node() for _ in range(100)]  # fewer than PROMOTE_AFTER young thresholds
    young = {id(o) for o in gc.get_objects(generation=0)}
    assert all(id(o) in young for o in made)
    assert gc.get_count()[0] >= 100
