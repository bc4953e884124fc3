"""``FusedPlan``'s scores against references that do not run the kernel's scoring: the static
columns' weighted totals against NumPy's (several columns with distinct rows, so a gather that reads
one column's row for another, or the wrong row, differs), and the score cache's totals against the
same plan's with the cache dropped (every resource score computed), on the plans of a seeded random
cluster, before and after the table changes under them."""
import random

import numpy as np
import pytest

from fastsched import load_config
from fastsched._kernels import _cycle, _table
from fastsched.runtime.compiled_cycle import _Plan
from fastsched.scheduler import Scheduler
from fastsched.testing import RANDOM_RUNTIME_CLASS, random_cluster, random_node, random_pod

pytestmark = pytest.mark.filterwarnings("ignore::fastsched.api.ManifestWarning")

V1 = {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration"}
_E = np.zeros(0, dtype=np.int64)


class _Cols:
    """The table columns TableColumns binds (and a changed-rows log as the table keeps it: see
    ``touch``), for a plan without NodeResourcesFit or resource scorers."""

    def __init__(self, c, log_size=_table.CHANGE_LOG_SIZE):
        self.pod_count = np.zeros(c, dtype=np.int64)
        self.allowed_pods = np.full(c, 110, dtype=np.int64)
        self.alloc = np.zeros((c, 1), dtype=np.int64)
        self.requested = np.zeros((c, 1), dtype=np.int64)
        self.nonzero_requested = np.zeros((c, 2), dtype=np.int64)
        self._change_rows = np.empty(log_size, dtype=np.int64)
        self._change_pos = np.zeros(1, dtype=np.int64)

    def touch(self, r):
        """Log row ``r`` as changed (what the table does with each ``row_version`` write)."""
        pos = int(self._change_pos[0])
        self._change_rows[pos & (len(self._change_rows) - 1)] = r
        self._change_pos[0] = pos + 1


@pytest.mark.parametrize("seed", [11, 12])
def test_static_columns_total_as_numpy_weights_them(seed):
    rng = np.random.default_rng(seed)
    c, s = 64, 3
    raw = rng.integers(0, 101, size=(s, c), dtype=np.int64)
    weight = np.array([1, 3, 7], dtype=np.int64)
    ok = (rng.random(c) < 0.7).astype(np.uint8)
    fused = _cycle.FusedPlan(ok, None, None, raw, np.zeros(s, dtype=np.int64), weight,
                             _E, _E, np.zeros(1, dtype=np.int64), _E, _E, np.zeros(0, dtype=np.uint8), _E, _E,
                             np.zeros(1, dtype=np.int64), _E, _E, offset=5)
    cols = _cycle.TableColumns(_Cols(c))
    order = rng.permutation(c).astype(np.int64)
    for start, k in [(0, c), (17, 10), (40, 3)]:
        found, examined, best, ties, first = fused.run(cols, order, start, k, True)
        rows = fused.selected_rows[:found]
        want_rows = [r for r in np.roll(order, -start) if ok[r]][:k]
        assert list(rows) == want_rows
        want = 5 + (raw[:, rows] * weight[:, None]).sum(axis=0)
        assert list(fused.totals[:found]) == list(want)
        assert best == want.max() and ties == int((want == want.max()).sum())
        assert first == int(np.argmax(want))  # (the first of the ties)
    # every total tied: ``first`` is the first found node, ``ties`` all of them
    flat = _cycle.FusedPlan(ok, None, None, np.full((s, c), 50, dtype=np.int64), np.zeros(s, dtype=np.int64), weight,
                            _E, _E, np.zeros(1, dtype=np.int64), _E, _E, np.zeros(0, dtype=np.uint8), _E, _E,
                            np.zeros(1, dtype=np.int64), _E, _E)
    found, _, best, ties, first = flat.run(cols, order, 9, 20, True)
    assert (best, ties, first) == (50 * int(weight.sum()), found, 0) and found == 20


def test_score_cache_totals_as_the_uncached_scores():
    nodes, running = random_cluster(7, 120, 200)
    s = Scheduler(load_config({**V1, "percentageOfNodesToScore": 100}), seed=7)
    s.add_nodes(nodes)
    s.add(RANDOM_RUNTIME_CLASS)
    s.add_pods(running)
    rng = random.Random(7)
    s.add_pods([random_pod(rng, i) for i in range(40)])
    s.run()
    (fw,) = s.profiles.values()
    plans = [p for p in fw.compiled_cycle._plans.values() if type(p) is _Plan and not p.has_cycle_parts]
    table = s.snapshot.table
    cols = _cycle.TableColumns(table)
    order = s.snapshot.order()
    n = len(order)
    scored = 0
    for rnd in range(2):
        if rnd:  # rows change under the cached scores: more pods bound
            s.add_pods([random_pod(rng, 100 + i) for i in range(30)])
            s.run()
            cols.bind(table)
            order = s.snapshot.order()
            n = len(order)
        for plan in plans:
            fused = plan.fused
            if not fused.enable_score_cache(table.capacity):
                continue
            for start in (0, n // 3):
                # the first run reads what the cache holds (in the second round, totals cached
                # before the binds changed rows under them) and fills it; the second reads it
                runs = []
                for _ in range(2):
                    runs.append((fused.run(cols, order, start, n, True), fused.totals[:n].copy()))
                fused.drop_score_cache()
                fresh = fused.run(cols, order, start, n, True)
                for got, totals in runs:
                    assert got == fresh
                    assert list(totals[:got[0]]) == list(fused.totals[:fresh[0]])
                fused.enable_score_cache(table.capacity)
                scored += fresh[0]
            fused.run(cols, order, 0, n, True)  # (the cache full for the next round)
    assert scored > 500


@pytest.mark.parametrize("shape_score, out_of_range", [(200, True), (40, False)])
def test_score_cache_keeps_no_total_with_a_score_out_of_range(shape_score, out_of_range):
    """A RequestedToCapacityRatio shape scoring ``shape_score`` on every node (the kernel's
    arithmetic does not check it; upstream's range check after the weights does): a cycle reports
    SCORE_OUT_OF_RANGE on every run, the cached ones too, since a row with a score out of
    [0, 100] is not cached; an in-range score is cached and totals as the fresh one."""
    c = 32
    table = _Cols(c)
    table.alloc[:, 0] = 1000
    i64 = lambda *v: np.array(v, dtype=np.int64)  # noqa: E731
    fused = _cycle.FusedPlan(None, None, None, np.zeros((0, c), dtype=np.int64), _E, _E,
                             i64(2), i64(3), i64(0, 1), i64(0), i64(0), np.zeros(1, dtype=np.uint8), i64(100),
                             i64(1), i64(0, 2), i64(0, 100), i64(shape_score, shape_score))
    assert fused.enable_score_cache(c)
    cols = _cycle.TableColumns(table)
    order = np.arange(c, dtype=np.int64)
    for _ in range(3):
        found, _examined, best, ties, _first = fused.run(cols, order, 5, 10, True)
        assert found == 10
        if out_of_range:
            assert ties == _cycle.SCORE_OUT_OF_RANGE
        else:
            assert (best, ties) == (3 * shape_score, 10)
            assert list(fused.totals[:found]) == [3 * shape_score] * found


@pytest.mark.parametrize("seed", [21, 22])
def test_cached_fit_verdicts_follow_the_rows_as_the_uncached_walk(seed):
    """NodeResourcesFit's verdict kept in the score cache by the filter walk (``_walk``) is reused
    only while the row is not logged as changed: over rounds in which random rows change their pod
    count, allowed pods, allocatable or requests (logged, as the table does), a plan with its cache finds the same rows and totals as NumPy's fit test and the same
    plan with no cache. Each round runs the cached plan twice (the second reads verdicts and totals
    the first stored) at several starts and k. Kills a walk that trusts a stale verdict (version
    not dropped), a verdict stored inverted, and a scoring that reads a stored verdict as a total."""
    rng = np.random.default_rng(seed)
    c = 96
    table = _Cols(c)
    table.alloc = rng.integers(1, 9, size=(c, 2), dtype=np.int64) * 1000
    table.requested = rng.integers(0, 8, size=(c, 2), dtype=np.int64) * 1000
    table.pod_count = rng.integers(0, 6, size=c, dtype=np.int64)
    table.allowed_pods = rng.integers(3, 8, size=c, dtype=np.int64)
    wants = np.array([1500, 2000], dtype=np.int64)
    i64 = lambda *v: np.array(v, dtype=np.int64)  # noqa: E731

    def plan():  # LeastAllocated on cpu and memory (weight 2), the fit checks on both
        return _cycle.FusedPlan(None, i64(0, 1), wants, np.zeros((0, c), dtype=np.int64), _E, _E,
                                i64(0), i64(2), i64(0, 2), i64(0, 1), i64(0, 1), np.zeros(2, dtype=np.uint8),
                                wants, i64(1, 1), i64(0, 0), _E, _E)

    cached, fresh = plan(), plan()
    assert cached.enable_score_cache(c)
    cols = _cycle.TableColumns(table)
    order = rng.permutation(c).astype(np.int64)
    fitting_seen = set()
    for rnd in range(8):
        if rnd:  # some rows change under the cached verdicts, logged
            rows = rng.choice(c, size=20, replace=False)
            for r in rows.tolist():
                which = int(rng.integers(4))
                if which == 0:
                    table.pod_count[r] = rng.integers(0, 8)
                elif which == 1:
                    table.allowed_pods[r] = rng.integers(3, 8)
                elif which == 2:
                    table.alloc[r, rng.integers(2)] = rng.integers(1, 9) * 1000
                else:
                    table.requested[r, rng.integers(2)] = rng.integers(0, 8) * 1000
                table.touch(r)
        fits = ((table.pod_count + 1 <= table.allowed_pods)
                & (wants <= table.alloc - table.requested).all(axis=1))
        fitting_seen.update(np.flatnonzero(fits).tolist())
        for start, k in [(0, c), (int(rng.integers(c)), 7), (int(rng.integers(c)), 30)]:
            want_rows = [r for r in np.roll(order, -start).tolist() if fits[r]][:k]
            ref = fresh.run(cols, order, start, k, True)
            ref_totals = list(fresh.totals[:ref[0]])
            for _ in range(2):
                got = cached.run(cols, order, start, k, True)
                assert got == ref
                assert list(cached.selected_rows[:got[0]]) == want_rows
                assert list(cached.totals[:got[0]]) == ref_totals
    assert 10 < len(fitting_seen) < c  # (rows on both sides of the verdict)


def test_score_found_after_a_walk_without_scores_reads_the_rows_as_they_are_then():
    """``run(..., score=False)`` then ``score_found`` (the nominated pods' path) with a row changed
    in between (logged): the totals are the changed rows', as a fresh plan's. The walk
    of ``place`` / ``run`` with scores hands its cached totals to the scoring that follows in the
    same call; a walk without scores must not (kills hints left for ``score_found``)."""
    c = 16
    table = _Cols(c)
    table.alloc = np.full((c, 2), 8000, dtype=np.int64)
    table.requested = np.zeros((c, 2), dtype=np.int64)
    i64 = lambda *v: np.array(v, dtype=np.int64)  # noqa: E731
    wants = i64(1000, 1000)

    def plan():
        return _cycle.FusedPlan(None, i64(0, 1), wants, np.zeros((0, c), dtype=np.int64), _E, _E,
                                i64(0), i64(1), i64(0, 2), i64(0, 1), i64(0, 1), np.zeros(2, dtype=np.uint8),
                                wants, i64(1, 1), i64(0, 0), _E, _E)

    cached = plan()
    assert cached.enable_score_cache(c)
    cols = _cycle.TableColumns(table)
    order = np.arange(c, dtype=np.int64)
    cached.run(cols, order, 0, c, True)  # (every row's total cached)
    found, _, _, _, _ = cached.run(cols, order, 0, c, False)
    table.requested[3] = 4000  # row 3 changes after the walk, before the scoring
    table.touch(3)
    got = cached.score_found(cols, found, np.zeros((0, found), dtype=np.int64), _E)
    fresh = plan()
    want = fresh.run(cols, order, 0, c, True)
    assert got == want[2:]
    totals = list(cached.totals[:found])
    assert totals == list(fresh.totals[:found]) and totals[3] < totals[0]  # (row 3's new total)


def test_cache_follows_the_changed_rows_log_past_its_end_and_across_logs():
    """The score cache is synced with the table's changed-rows log (a ring): a plan that fell more
    than the log's size behind (some rows it missed overwritten) and a plan reading another log
    than the one it last read (a fork's table, a restored one) start afresh; the cached plan then
    finds the same rows and totals as an uncached one over rounds of row changes. A log of 8
    entries, rounds of 1 to 14 changed rows (kills the ring read past its end: the overwritten rows'
    entries kept), and rounds whose changes are not in a new log that starts at the old one's
    position (kills a log compared by position only). A scorer weighted 50,000 (totals up to
    5,000,000) is cached as a small one."""
    c = 24
    table = _Cols(c, log_size=8)
    table.alloc = np.full((c, 2), 16000, dtype=np.int64)
    table.requested = (np.arange(c, dtype=np.int64)[:, None] % 8) * np.array([1000, 1500], dtype=np.int64)
    i64 = lambda *v: np.array(v, dtype=np.int64)  # noqa: E731
    wants = i64(1000, 1000)

    def plan(weight):
        return _cycle.FusedPlan(None, i64(0, 1), wants, np.zeros((0, c), dtype=np.int64), _E, _E,
                                i64(0), i64(weight), i64(0, 2), i64(0, 1), i64(0, 1), np.zeros(2, dtype=np.uint8),
                                wants, i64(1, 1), i64(0, 0), _E, _E)

    order = np.arange(c, dtype=np.int64)
    rng = np.random.default_rng(5)
    for weight in (50_000, 1, 3):
        cached, fresh = plan(weight), plan(weight)
        assert cached.enable_score_cache(c)
        cols = _cycle.TableColumns(table)
        for rnd in range(12):
            if rnd:
                changed = rng.choice(c, size=int(rng.integers(1, 15)), replace=False).tolist()
                new_log = rnd % 3 == 0
                for r in changed:
                    table.requested[r] = rng.integers(0, 17, size=2) * 1000  # (some stop fitting)
                    if not new_log:
                        table.touch(r)
                if new_log:  # the rows as another table's: a log of its own at the same position
                    pos = table._change_pos[0]
                    table._change_rows = np.empty(8, dtype=np.int64)
                    table._change_pos = np.full(1, pos, dtype=np.int64)
                    assert cols.bind(table)
            for start, k in [(0, c), (int(rng.integers(c)), 9)]:
                ref = fresh.run(cols, order, start, k, True)
                for _ in range(2):
                    assert cached.run(cols, order, start, k, True) == ref
                    assert list(cached.totals[:ref[0]]) == list(fresh.totals[:ref[0]])
                    assert list(cached.selected_rows[:ref[0]]) == list(fresh.selected_rows[:ref[0]])


def _new_allocatable(rng, node):
    """``node`` with other cpu / memory / pods allocatable (a node update)."""
    alloc = dict(node.allocatable)
    alloc.update(cpu=rng.choice([2000, 4000, 8000, 16000]), memory=rng.choice([4, 8, 16, 32]) * 1024 ** 3,
                 pods=rng.choice([3, 10, 110]))
    return node.replace(allocatable=alloc)


@pytest.mark.parametrize("seed", [31, 32, 33])
def test_kept_caches_as_fresh_ones_through_binds_deletes_node_changes_forks_and_transactions(seed):
    """The plans' score caches kept across cluster changes (synced with the node table's
    changed-rows log) against the same plans with fresh caches, on a seeded random cluster: after
    each step (binds, bound pods deleted, node allocatables updated, nodes removed and added, a
    fork whose table the plans then read, a transaction rolled back) every cached plan's cycle
    at several starts equals its cycle from an empty cache. Kills each ``row_version`` writer
    not logging its row (``Accounts._account``: binds and deletes; ``NodeTable._touch``: node
    updates and removals; ``NodeTable._log_rows``: added nodes), and the fork's or restored table
    keeping the origin's log."""
    rng = random.Random(seed)
    nodes, running = random_cluster(seed, 60, 120)
    s = Scheduler(load_config({**V1, "percentageOfNodesToScore": 100}), seed=seed)
    s.add_nodes(nodes)
    s.add(RANDOM_RUNTIME_CLASS)
    s.add_pods(running)
    s.add_pods([random_pod(rng, i) for i in range(30)])
    s.run()
    (fw,) = s.profiles.values()
    plans = [p.fused for p in fw.compiled_cycle._plans.values() if type(p) is _Plan and not p.has_cycle_parts]
    plans = [f for f in plans if f.enable_score_cache(s.snapshot.table.capacity)]
    assert len(plans) >= 3
    next_pod = [1000]

    def bind(sched, m):
        sched.add_pods([random_pod(rng, next_pod[0] + i) for i in range(m)])
        next_pod[0] += m
        sched.run()

    def check(sched):
        table = sched.snapshot.table
        cols = _cycle.TableColumns(table)
        order = sched.snapshot.order()
        n = len(order)
        for fused in plans:
            fused.enable_score_cache(table.capacity)
            for start in (0, rng.randrange(n)):
                for k in (n, max(2, n // 4)):
                    kept = fused.run(cols, order, start, k, True)
                    kept_rows = list(fused.selected_rows[:kept[0]])
                    kept_totals = list(fused.totals[:kept[0]])
                    fused.drop_score_cache()
                    want = fused.run(cols, order, start, k, True)
                    assert kept == want
                    assert kept_rows == list(fused.selected_rows[:want[0]])
                    assert kept_totals == list(fused.totals[:want[0]])
                    fused.enable_score_cache(table.capacity)
                    fused.run(cols, order, 0, n, True)  # (the cache full again: kept into the next step)

    check(s)
    for step in range(10):
        what = step % 5
        if what == 0:
            bind(s, 15)
        elif what == 1:  # bound pods deleted
            bound = [r.pod for r in s.pod_results()
                     if r.node_name and s.get_pod(r.pod.namespace, r.pod.name) is not None]
            for pod in rng.sample(bound, min(8, len(bound))):
                s.delete_pod(pod)
        elif what == 2:  # node updates, a node removed and one added
            live = s.nodes()
            for node in rng.sample(live, 6):
                s.update_node(_new_allocatable(rng, node))
            s.delete_node(rng.choice(live).name)
            s.add_nodes([random_node(rng, 500 + step)])
        elif what == 3:  # the plans then read a fork's table, which changes on its own
            check(s)
            s = s.fork()
            bind(s, 10)
        else:  # a transaction's binds rolled back: the table restored
            check(s)
            with s.transaction():
                bind(s, 10)
                check(s)
        check(s)
