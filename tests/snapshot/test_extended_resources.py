"""Many extended resources, each on few nodes (upstream's SchedulingWithExtendedResource gives each
node its own): the table's sparse request shapes (``shape_offsets`` / ``shape_cols`` /
``shape_amounts``) and the row sums they feed, against NodeInfos rebuilt from the objects, and
NodeResourcesFit / BalancedAllocation on the table against the same plugins on those NodeInfos.

Seeded random clusters: extended resources on one node, on some, on all; pods requesting 0-3 of
them (and resources no node has); pods added and removed, nodes added, removed, and updated to gain
or lose a resource."""
from __future__ import annotations

import random

import numpy as np
import pytest

from fastsched import Scheduler, load_config
from fastsched.clock import VirtualClock
from fastsched.config.args import (MOST_ALLOCATED, NodeResourcesBalancedAllocationArgs, NodeResourcesFitArgs,
                                   ResourceSpec, ScoringStrategy)
from fastsched.framework import CycleState, NodeInfo
from fastsched.framework.status import Code
from fastsched.plugins.helper.tests.support import single_plugin_framework
from fastsched.plugins.noderesources import BALANCED_ALLOCATION_NAME, FIT_NAME, Fit
from fastsched.snapshot import build_snapshot
from fastsched.testing import make_node, make_pod

COMMON = "common.io/everywhere"            # on every node
SOME = [f"some.io/r-{i}" for i in range(4)]  # on about a third of the nodes each


def _rare(i: int) -> str:
    return f"foo.com/bar-{i}"              # on node i only (until updates move it)


def _node(rng: random.Random, i: int, name: str | None = None) -> object:
    extra = {COMMON: str(rng.randint(1, 4)), _rare(i): str(rng.randint(1, 2))}
    for r in SOME:
        if rng.random() < 0.35:
            extra[r] = str(rng.randint(1, 3))
    return make_node(name or f"n{i}", cpu=f"{rng.choice((2, 4, 8))}", memory=f"{rng.choice((4, 8))}Gi",
                     pods=str(rng.choice((3, 8, 110))), extra=extra)


def _requests(rng: random.Random, n_rare: int) -> dict[str, str]:
    req: dict[str, str] = {}
    if rng.random() < 0.8:
        req["cpu"] = f"{rng.choice((100, 500, 1500))}m"
    if rng.random() < 0.6:
        req["memory"] = rng.choice(("256Mi", "1Gi", "3Gi"))
    names = [COMMON, *SOME, *(_rare(j) for j in range(n_rare + 3))]  # (+3: names no node has)
    for name in rng.sample(names, rng.randint(0, 3)):
        req[name] = str(rng.randint(1, 2))
    return req


def _pod(rng: random.Random, name: str, n_rare: int, node_name: str | None = None) -> object:
    return make_pod(name, requests=_requests(rng, n_rare), node_name=node_name)


def _reference(nodes: dict, pods: list) -> dict[str, NodeInfo]:
    infos = {name: NodeInfo(n) for name, n in nodes.items()}
    for p in pods:
        infos[p.node_name].add_pod(p)
    return infos


def _assert_columns(table, infos: dict[str, NodeInfo]) -> None:
    """Every row's alloc / requested, column by column, as the NodeInfo rebuilt from the objects."""
    names = table.resource_names
    for name, ni in infos.items():
        row = table.row_of[name]
        want_req = [ni.requested.get(r) for r in names]
        want_alloc = [ni.allocatable.get(r) for r in names]
        assert table.requested[row].tolist() == want_req, name
        assert table.alloc[row].tolist() == want_alloc, name
        assert table.pod_count[row] == len(ni.pods)
        assert table.nonzero_requested[row].tolist() == [ni.non_zero_requested.milli_cpu,
                                                         ni.non_zero_requested.memory]
    # the extended-resource row index is the nonzero allocatable of the extended columns
    live = np.flatnonzero(table.live)
    want_index = {}
    for col in range(3, len(names)):
        rows = live[table.alloc[live, col] != 0]
        if len(rows):
            want_index[col] = {int(r): int(table.alloc[r, col]) for r in rows}
    assert table.extended_rows == want_index
    # each record's shape, as a dense vector, is its pod's requests
    for rec in np.flatnonzero(table.pod_row[:table._next_record] >= 0).tolist():
        pod = table.pod_info(rec).pod
        want = [pod.requests.get(r, 0) for r in names]
        assert table.shape_vector(int(table.pod_shape[rec])).tolist() == want


def _frameworks():
    scored = [ResourceSpec("cpu", 1), ResourceSpec("memory", 1), ResourceSpec(COMMON, 2), ResourceSpec(SOME[0], 3),
              ResourceSpec(_rare(1), 1)]
    fit = single_plugin_framework(FIT_NAME, args=NodeResourcesFitArgs(
        scoring_strategy=ScoringStrategy(MOST_ALLOCATED, scored)))
    balanced = single_plugin_framework(BALANCED_ALLOCATION_NAME, args=NodeResourcesBalancedAllocationArgs(
        [ResourceSpec(r.name, 1) for r in scored]))
    return fit.plugin(FIT_NAME), balanced.plugin(BALANCED_ALLOCATION_NAME)


def _status(s) -> tuple:
    return (Code.SUCCESS, ()) if s is None else (s.code(), tuple(s.reasons()))


def _assert_plugins(snapshot, infos: dict[str, NodeInfo], incoming, fit, balanced, seen: dict) -> None:
    """Fit's Filter and Score and BalancedAllocation's Score on the table (batch and views) as on
    the rebuilt NodeInfos: verdicts, messages, scores."""
    batch = snapshot.batch()
    state = CycleState()
    fit.pre_filter(state, incoming, batch)
    verdicts = fit.filter_vectorized(state, incoming, batch)
    feasible = []
    for i, view in enumerate(batch):
        want = _status(fit.filter(state, incoming, infos[view.name]))
        assert _status(verdicts.status(i)) == want, view.name
        assert _status(fit.filter(state, incoming, view)) == want, view.name
        if want[0] == Code.SUCCESS:
            feasible.append(i)
        else:
            seen["reasons"].update(want[1])
    # the compiled plan's row mask keeps every row the Filter can pass (and rules out only failures)
    mask = fit.column_filter_rows(state, incoming, snapshot.table)
    if mask is not None:
        seen["masks"] += 1
        for view in batch:
            if not mask[snapshot.table.row_of[view.name]]:
                assert _status(fit.filter(state, incoming, infos[view.name]))[0] != Code.SUCCESS, view.name
    if not feasible:
        return
    nodes = batch.select(np.isin(np.arange(len(batch)), feasible))
    for plugin in (fit, balanced):
        st = CycleState()
        plugin.pre_filter(st, incoming, nodes) if plugin is fit else None
        plugin.pre_score(st, incoming, nodes)
        scores, status = plugin.score_vectorized(st, incoming, nodes)
        assert status is None or status.is_success()
        for j, view in enumerate(nodes):
            want = plugin.score(st, incoming, infos[view.name])
            assert (int(scores[j]), None) == (want[0], None if want[1] is None or want[1].is_success() else want[1])
            seen["scores"].add((plugin.name(), want[0]))


@pytest.mark.parametrize("seed", range(6))
def test_sparse_shapes_and_fit_agree_with_node_infos(seed):
    rng = random.Random(9_000 + seed)
    n = rng.choice((12, 30))
    nodes = {f"n{i}": _node(rng, i) for i in range(n)}
    pods = []
    for k in range(3 * n):
        name = rng.choice(list(nodes))
        pods.append(_pod(rng, f"p{k}", n, node_name=name))
    snapshot = build_snapshot(list(nodes.values()), pods)
    fit, balanced = _frameworks()
    seen: dict = {"reasons": set(), "scores": set(), "masks": 0}
    next_node = n
    for step in range(120):
        r = rng.random()
        if r < 0.35 and nodes:
            p = _pod(rng, f"q{step}", next_node, node_name=rng.choice(list(nodes)))
            snapshot.add_pod(p)
            pods.append(p)
        elif r < 0.6 and pods:
            p = pods.pop(rng.randrange(len(pods)))
            snapshot.remove_pod(p)
        elif r < 0.7:
            node = _node(rng, next_node)
            next_node += 1
            snapshot.add_node(node)
            nodes[node.name] = node
        elif r < 0.75 and len(nodes) > 2:
            name = rng.choice(list(nodes))
            snapshot.remove_node(name)
            del nodes[name]
            pods = [p for p in pods if p.node_name != name]
        else:
            # gain or lose resources: the node's own rare one replaced by another's, SOME re-drawn
            name = rng.choice(list(nodes))
            node = _node(rng, rng.randrange(next_node + 2), name=name)
            snapshot.update_node(node)
            nodes[name] = node
        if step % 20 == 19:
            infos = _reference(nodes, pods)
            _assert_columns(snapshot.table, infos)
            for i in range(3):
                _assert_plugins(snapshot, infos, _pod(rng, f"in{step}-{i}", next_node), fit, balanced, seen)
    # the cases ran: rare resources short or missing, and scores that vary
    assert any(reason.startswith("Insufficient foo.com/bar-") for reason in seen["reasons"]), seen["reasons"]
    assert len(seen["scores"]) > 5, seen["scores"]
    assert seen["masks"] > 0


def _run(nodes, pods, record):
    s = Scheduler(load_config(None), seed=5, record=record, clock=VirtualClock(start=1e9))
    s.add(list(nodes))
    s.add(list(pods))
    results = s.run(until=1e9 + 600)
    fused = sum(fw.compiled_cycle.fused_cycles for fw in s.profiles.values() if fw.compiled_cycle is not None)
    return [(r.pod.key, r.status, r.node_name, r.message, r.nominated_node_name) for r in results], fused


@pytest.mark.parametrize("seed", range(4))
def test_compiled_cycle_with_row_masks_ends_as_the_plugin_path(seed, monkeypatch):
    """Whole runs (retries included) with and without records (the fused compiled cycle, with
    Fit's row masks, against the plugin-call path): the same outcome pod by pod."""
    rng = random.Random(77 + seed)
    n = 40
    nodes = [_node(rng, i) for i in range(n)]
    pods = [make_pod(f"p{k}", namespace="default", requests=_requests(rng, n)) for k in range(120)]
    masks = []
    real = Fit.column_filter_rows

    def counting(self, state, pod, table):
        out = real(self, state, pod, table)
        masks.append(out is not None)
        return out

    monkeypatch.setattr(Fit, "column_filter_rows", counting)
    recorded, fused_recorded = _run(nodes, pods, "all")
    fast, fused = _run(nodes, pods, None)
    assert fused_recorded == 0 and fused > 0 and any(masks)
    assert fast == recorded
    assert any(r[1] != "Scheduled" for r in fast) and any(r[1] == "Scheduled" for r in fast)


def test_shapes_are_sparse_and_grow_geometrically():
    """5,000 resources and 5,000 pods each requesting its own: the shape entries stay O(requests),
    not O(shapes * resources) (the (S, R) matrix this replaced was 8,192 x 5,003 int64, 328 MB)."""
    nodes = [make_node(f"n{i}", cpu="4", extra={_rare(i): "1"}) for i in range(5000)]
    snapshot = build_snapshot(nodes, [])
    table = snapshot.table
    for i in range(5000):
        snapshot.add_pod(make_pod(f"p{i}", requests={_rare(i): "1"}, node_name=f"n{i}"))
    s = len(table._shape_index)
    assert s == 5000
    assert int(table.shape_offsets[s]) == 5000  # one entry per shape
    assert table.shape_cols.nbytes + table.shape_amounts.nbytes + table.shape_offsets.nbytes < 1 << 20
    col = table.resource_index[_rare(4321)]
    assert table.requested[table.row_of["n4321"], col] == 1
    assert int(table.requested[:, col].sum()) == 1
    snapshot.remove_pod(make_pod("p4321", node_name="n4321"))
    assert int(table.requested[:, col].sum()) == 0


def test_forks_keep_their_own_extended_rows():
    """``extended_rows`` is per table: a fork's node updates and removals do not show in the
    original's (nor the original's in the fork's), and each ends as its alloc columns say."""
    s = Scheduler(seed=1)
    s.add_nodes([make_node(f"n{i}", cpu="4", extra={_rare(i): "1", COMMON: "2"}) for i in range(8)])
    before = {col: dict(rows) for col, rows in s.snapshot.table.extended_rows.items()}
    fork = s.fork()
    fork.update_node(make_node("n1", cpu="4", extra={_rare(2): "3"}))  # loses its own, gains n2's
    fork.delete_node("n5")
    s.update_node(make_node("n6", cpu="4"))                            # loses both
    for sched in (s, fork):
        t = sched.snapshot.table
        live = np.flatnonzero(t.live)
        want = {}
        for col in range(3, len(t.resource_names)):
            rows = live[t.alloc[live, col] != 0]
            if len(rows):
                want[col] = {int(r): int(t.alloc[r, col]) for r in rows}
        assert t.extended_rows == want
    t, ft = s.snapshot.table, fork.snapshot.table
    col2 = t.resource_index[_rare(2)]
    assert ft.extended_rows[col2] == {t.row_of["n1"]: 3, t.row_of["n2"]: 1}
    assert t.extended_rows[col2] == before[col2] == {t.row_of["n2"]: 1}
    assert t.row_of["n5"] in t.extended_rows[t.resource_index[COMMON]]
