"""The runtime's RunFilterPluginsWithNominatedPods over many nodes (fastsched.runtime.nominated):
layering, and which Filter plugins allow the vectorized form."""
from __future__ import annotations

import ast
from pathlib import Path

import pytest

from fastsched.framework import CycleState
from fastsched.plugins import in_tree_registry
from fastsched.runtime import nominated
from fastsched.runtime.nominated import ADDITIVE, NODE_ONLY, filter_kind

RUNTIME = Path(nominated.__file__).resolve().parent


def _imported_modules(path: Path) -> set[str]:
    """Every module ``path`` imports (at any depth), as written (relative ones resolved)."""
    out: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            out.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = ["fastsched", "runtime"][: max(0, 2 - (node.level - 1))]
                base = ".".join(parts + ([base] if base else []))
            out.add(base)
            out.update(f"{base}.{alias.name}" for alias in node.names)
    return out


@pytest.mark.parametrize("path", sorted(RUNTIME.glob("*.py")), ids=lambda p: p.name)
def test_the_runtime_imports_no_plugin_package(path):
    bad = sorted(m for m in _imported_modules(path) if m.startswith("fastsched.plugins"))
    assert not bad, f"{path.name} imports {bad}"


def test_in_tree_filter_kinds_are_declared_by_their_classes():
    from fastsched.plugins.nodeaffinity.node_affinity import NodeAffinity
    from fastsched.plugins.noderesources.fit import Fit
    from fastsched.plugins.nodeports import NodePorts
    from fastsched.plugins.interpodaffinity import InterPodAffinity
    assert filter_kind(NodeAffinity.__new__(NodeAffinity)) == NODE_ONLY
    assert filter_kind(Fit.__new__(Fit)) == ADDITIVE
    assert filter_kind(NodePorts.__new__(NodePorts)) == ADDITIVE
    assert filter_kind(InterPodAffinity.__new__(InterPodAffinity)) is None

    class StricterFit(Fit):  # a subclass inherits its base's declaration
        pass

    assert filter_kind(StricterFit.__new__(StricterFit)) == ADDITIVE


def test_an_unknown_filter_kind_is_the_plugin_authors_error():
    class F:
        filter_pod_dependence = "sometimes"

    with pytest.raises(ValueError, match="F.filter_pod_dependence is 'sometimes'"):
        filter_kind(F())


def test_an_out_of_tree_node_only_filter_allows_the_vectorized_form():
    from fastsched.config.types import KubeSchedulerProfile, Plugin, Plugins, PluginSet
    from fastsched.framework import FilterPlugin
    from fastsched.runtime import Registry, new_framework
    from fastsched.snapshot import build_snapshot
    from fastsched.testing import make_node

    class Zoned(FilterPlugin):
        def __init__(self, args, handle):
            pass

        def name(self):
            return "Zoned"

        def filter(self, state, pod, node_info):
            return None

        def filter_vectorized(self, state, pod, nodes):
            return None

    reg = in_tree_registry()
    reg.merge(Registry({"Zoned": Zoned}))
    profile = KubeSchedulerProfile(scheduler_name="p", plugins=Plugins(
        queue_sort=PluginSet(enabled=[Plugin("PrioritySort")]), bind=PluginSet(enabled=[Plugin("DefaultBinder")]),
        filter=PluginSet(enabled=[Plugin("NodeResourcesFit"), Plugin("Zoned")]),
        pre_filter=PluginSet(enabled=[Plugin("NodeResourcesFit")])))
    fw = new_framework(reg, profile, snapshot_shared_lister=build_snapshot([make_node("n")]))
    assert nominated.nominated_filters(fw, CycleState()) is None  # Zoned declares no kind
    Zoned.filter_pod_dependence = NODE_ONLY
    try:
        nominated._FILTERS.clear()
        assert [(n, k) for n, _, k in nominated.nominated_filters(fw, CycleState())] == [
            ("NodeResourcesFit", ADDITIVE), ("Zoned", NODE_ONLY)]
    finally:
        nominated._FILTERS.clear()


def test_the_nomination_index_sees_a_node_added_after_its_nomination():
    """A pod nominated to a node the table does not hold yet counts once the node comes: the index
    is keyed on the node set's version, not only on the nominations (which did not change)."""
    from fastsched import load_config
    from fastsched.framework.types import PodInfo
    from fastsched.scheduler import Scheduler
    from fastsched.scheduler.backend.queue.nominator import Nominator
    from fastsched.testing import make_node, make_pod

    s = Scheduler(load_config(None), seed=1)
    s.add_nodes([make_node("early", cpu="4", memory="8Gi")])
    nominator = Nominator()
    nominator.add_nominated_pod(PodInfo(make_pod("preemptor", uid="uid-pre", cpu="1",
                                                 priority=10).replace(nominated_node_name="late")))
    (fw,) = s.profiles.values()
    fw.set_pod_nominator(nominator)
    index = nominated.NominationIndex()
    table = s.cache.update_snapshot().table
    width = len(table.resource_names)
    assert len(index.get(fw, table, width)[0]) == 0  # "late" is no node yet
    s.add_nodes([make_node("late", cpu="4", memory="8Gi")])
    table = s.cache.update_snapshot().table
    rows = index.get(fw, table, len(table.resource_names))[0]
    assert [table.node_names[r] for r in rows] == ["late"]


def _arrays_as_lists(arrays):
    rows, prios, vectors, uids, ports, names = arrays
    return (rows.tolist(), prios.tolist(), vectors.tolist(), list(uids), [(q, tuple(p)) for q, p in ports],
            list(names))


@pytest.mark.parametrize("seed", range(4))
def test_the_nomination_index_kept_across_cycles_equals_a_fresh_one(seed):
    """Kept by the nominator's version between cycles (no CycleState given), the index answers what
    an index built from scratch answers after every change: nominations added, moved, replaced
    (a new PodInfo with other requests, as the queue's update gives) and withdrawn, nodes added."""
    import random

    from fastsched.framework.types import PodInfo
    from fastsched.testing import make_node, make_pod

    rng = random.Random(seed)
    s, fw, nominator = _with_nominator(4, "8", "8Gi")
    index = nominated.NominationIndex()
    current: dict[str, PodInfo] = {}
    nodes = 4
    followed = 0
    real_follow = index._follow

    def follow(*args):
        nonlocal followed
        got = real_follow(*args)
        followed += got is not None
        return got

    index._follow = follow
    states, pick = [CycleState(), CycleState(), None], random.Random(seed + 100)  # (rng draws as before)
    for step in range(80):
        for _ in range(rng.choice((1, 1, 2, 3))):
            op = rng.random()
            if op < 0.4 or not current:
                name = f"p{step}-{op:.6f}"
                pod = make_pod(name, uid=f"uid-{name}", cpu=f"{rng.randint(1, 4)}", priority=rng.randint(0, 3),
                               host_ports=rng.choice([(), (8080,)]))
                current[name] = PodInfo(pod.replace(nominated_node_name=f"n{rng.randrange(nodes + 1)}"))
                nominator.add_nominated_pod(current[name])
            elif op < 0.55:  # the queue's update: a new PodInfo, maybe other requests
                name = rng.choice(sorted(current))
                old = current[name].pod
                current[name] = PodInfo(make_pod(name, uid=old.uid, cpu=f"{rng.randint(1, 4)}",
                                                 priority=old.priority).replace(
                                                     nominated_node_name=old.nominated_node_name))
                nominator.update_nominated_pod(old, current[name])
            elif op < 0.7:  # the failure handler's re-filing of the same PodInfo
                nominator.add_nominated_pod(current[rng.choice(sorted(current))])
            elif op < 0.92:
                nominator.delete_nominated_pod_if_exists(current.pop(rng.choice(sorted(current))).pod)
            else:
                s.add_nodes([make_node(f"n{nodes}", cpu="8", memory="8Gi")])
                nodes += 1
        table = s.cache.update_snapshot().table
        width = len(table.resource_names)
        got = index.get(fw, table, width)
        again = index.get(fw, table, width)  # the version's short cut
        want = nominated.NominationIndex().get(fw, table, width)
        assert _arrays_as_lists(got) == _arrays_as_lists(want), step
        assert _arrays_as_lists(again) == _arrays_as_lists(want), step
        # a cycle's states asking (the walk, diagnose, the dry run), some twice in a row
        for state in [pick.choice(states) for _ in range(3)]:
            assert _arrays_as_lists(index.get(fw, table, width, state)) == _arrays_as_lists(want), step
    assert followed > 10  # the journal's path was taken


@pytest.mark.parametrize("seed", range(3))
def test_add_rows_sums_as_add_at(seed):
    """The nominated usage kernel against ``np.add.at``/``bincount``: repeated rows, rows outside
    the window (position -1) skipped, strided vectors; a bad row raises before anything is added."""
    import numpy as np

    from fastsched._kernels import _preemption

    rng = np.random.default_rng(seed)
    cap, width, q = 40, 3, 120
    rows = rng.integers(0, cap, q)
    vectors = rng.integers(-5, 50, (q, 2 * width))[:, ::2]  # not C-contiguous
    out = rng.integers(0, 9, (cap, width))
    counts = rng.integers(0, 9, cap)
    want_out, want_counts = out.copy(), counts.copy()
    np.add.at(want_out, rows, vectors)
    want_counts += np.bincount(rows, minlength=cap)
    assert _preemption.add_rows(out, counts, rows, vectors) == q
    assert (out == want_out).all() and (counts == want_counts).all()

    window = rng.choice(cap, 15, replace=False)
    pos_of = np.full(cap, -1, dtype=np.int64)
    pos_of[window] = np.arange(15)
    req, count = np.zeros((15, width), dtype=np.int64), np.zeros(15, dtype=np.int64)
    inside = np.isin(rows, window)
    want_req = np.zeros_like(req)
    np.add.at(want_req, pos_of[rows[inside]], vectors[inside])
    assert _preemption.add_rows(req, count, rows, vectors, pos_of) == int(inside.sum())
    assert (req == want_req).all()
    assert (count == np.bincount(pos_of[rows[inside]], minlength=15)).all()

    bad = rows.copy()
    bad[-1] = cap
    before = out.copy()
    with pytest.raises(IndexError):
        _preemption.add_rows(out, counts, bad, vectors)
    assert (out == before).all()


@pytest.mark.parametrize("seed", range(3))
def test_nominated_usage_of_a_window_equals_the_node_by_node_sum(seed):
    """NominatedUsage.usage (the index's arrays summed by the kernel) against the nominator asked
    node by node, for preemptors of each priority, nominated or not, on random windows."""
    import random

    import numpy as np

    from fastsched.framework.types import PodInfo
    from fastsched.testing import make_pod

    rng = random.Random(seed)
    s, fw, nominator = _with_nominator(12, "64", "64Gi")
    pods = []
    for i in range(40):
        pod = make_pod(f"p{i}", uid=f"uid-p{i}", cpu=f"{rng.randint(1, 4)}", memory=f"{rng.randint(1, 3)}Gi",
                       priority=rng.randint(0, 3), host_ports=rng.choice([(), (), (8080,)]))
        pods.append(pod)
        nominator.add_nominated_pod(PodInfo(pod.replace(nominated_node_name=f"n{rng.randrange(12)}")))
    table = s.cache.update_snapshot().table
    width = len(table.resource_names)
    index = nominated.NominationIndex()
    for trial in range(30):
        pod = rng.choice(pods) if trial % 2 else make_pod("x", uid="uid-x", cpu="1", priority=rng.randint(0, 3))
        rows = np.array(rng.sample(range(12), rng.randint(1, 12)), dtype=np.int64)
        usage = nominated.NominatedUsage(fw, index, pod, table, width)
        got = usage.usage(rows)
        want = usage._usage_node_by_node(rows)
        if want[0] is None:
            assert got == (None, None, None)
            continue
        assert (got[0] == want[0]).all() and (got[1] == want[1]).all()
        assert {r: sorted(p) for r, p in (got[2] or {}).items()} == {r: sorted(p) for r, p in (want[2] or {}).items()}
        assert (index.pos_of == -1).all()  # the scratch is left clean


def _with_nominator(nodes: int, cpu: str, memory: str):
    """A default-profile Scheduler of ``nodes`` nodes, its framework and the Nominator set on it."""
    from fastsched import load_config
    from fastsched.scheduler import Scheduler
    from fastsched.scheduler.backend.queue.nominator import Nominator
    from fastsched.testing import make_node

    s = Scheduler(load_config(None), seed=1)
    s.add_nodes([make_node(f"n{i}", cpu=cpu, memory=memory) for i in range(nodes)])
    nominator = Nominator()
    (fw,) = s.profiles.values()
    fw.set_pod_nominator(nominator)
    return s, fw, nominator


@pytest.mark.parametrize("seed", range(3))
def test_the_nomination_index_appended_in_place_keeps_every_answer(seed):
    """Many nodes, nominations mostly to nodes that held none (a preemption's): the journal's path
    appends those pods to growing buffers. Every answer equals a fresh index's, and every earlier
    answer still holds what it held when it was given (nothing before its end is written again),
    through appends, drops (the compacting splice) and appends after them."""
    import random

    from fastsched.framework.types import PodInfo
    from fastsched.testing import make_pod

    rng = random.Random(100 + seed)
    s, fw, nominator = _with_nominator(60, "8", "8Gi")
    index = nominated.NominationIndex()
    current: dict[str, PodInfo] = {}
    appended = 0
    real_append = index._append

    def append(*args):
        nonlocal appended
        appended += 1
        return real_append(*args)

    index._append = append
    answers = []
    for step in range(150):
        op = rng.random()
        if op < 0.7 or not current:
            name = f"p{step}"
            pod = make_pod(name, uid=f"uid-{name}", cpu=f"{rng.randint(1, 4)}", priority=rng.randint(0, 3),
                           host_ports=rng.choice([(), (), (8080,)]))
            node = rng.choice([f"n{i}" for i in range(60)])
            current[name] = PodInfo(pod.replace(nominated_node_name=node))
            nominator.add_nominated_pod(current[name])
        else:
            nominator.delete_nominated_pod_if_exists(current.pop(rng.choice(sorted(current))).pod)
        table = s.cache.update_snapshot().table
        width = len(table.resource_names)
        got = index.get(fw, table, width)
        want = nominated.NominationIndex().get(fw, table, width)
        assert _arrays_as_lists(got) == _arrays_as_lists(want), step
        answers.append((got, _arrays_as_lists(got)))
    for got, held in answers:
        assert _arrays_as_lists(got) == held
    assert appended > 40  # the in-place path was taken


@pytest.mark.parametrize("seed", range(4))
def test_counted_leaves_out_the_pods_own_nomination_as_a_comparison_of_every_uid(seed):
    """NominatedUsage.counted compares the pod's uid only on the row of the node it is nominated
    to: the same selection as comparing every entry's uid, for pods nominated (to nodes of the
    table or to one it does not have), not nominated, or nominated since the last answer."""
    import random

    import numpy as np

    from fastsched.framework.types import PodInfo
    from fastsched.testing import make_pod

    rng = random.Random(7 + seed)
    s, fw, nominator = _with_nominator(10, "64", "64Gi")
    table = s.cache.update_snapshot().table
    width = len(table.resource_names)
    index = nominated.NominationIndex()
    pods = [make_pod(f"p{i}", uid=f"{i:08x}-0000-4000-8000-000000000000" if i % 3 else f"uid-p{i}",
                     cpu="1", priority=rng.randint(0, 2)) for i in range(30)]
    excluded = 0
    for _ in range(120):
        pod = rng.choice(pods)
        op = rng.random()
        if op < 0.4:
            node = rng.choice([f"n{rng.randrange(10)}", "not-a-node"])
            nominator.add_nominated_pod(PodInfo(pod.replace(nominated_node_name=node)))
        elif op < 0.55:
            nominator.delete_nominated_pod_if_exists(pod)
        ask = rng.choice(pods)
        got = nominated.NominatedUsage(fw, index, ask, table, width).counted()
        rows, prios, vectors, uids, ports, _ = index.arrays
        keep = (prios >= (ask.priority or 0)) & (uids != ask.uid)
        excluded += int(((prios >= (ask.priority or 0)) & (uids == ask.uid)).any())
        assert got[0].tolist() == rows[keep].tolist()
        assert got[1].tolist() == vectors[keep].tolist()
        assert got[2].tolist() == np.flatnonzero(keep).tolist()
    assert excluded > 5  # (the pod's own entry was there to leave out)


@pytest.mark.parametrize("seed", range(4))
def test_the_shadow_refreshed_from_the_changed_rows_equals_a_whole_copy(seed):
    """The Filter pass's shadow (``_nominated_shadow``) copies only the rows its last build added
    nominated pods to and the rows the table's changed-rows log holds since: after bound pods added
    and deleted (host ports among them), nominations added, moved and withdrawn, nodes added and
    removed, and a log that wrapped, its columns equal a shadow built from a whole copy, and the
    refresh path is the one taken (not only whole copies)."""
    import random

    import numpy as np

    from fastsched.framework.types import PodInfo
    from fastsched.testing import make_node, make_pod

    rng = random.Random(seed)
    s, fw, nominator = _with_nominator(6, "16", "32Gi")
    nodes = [f"n{i}" for i in range(6)]
    bound: list = []
    current: dict[str, PodInfo] = {}
    refreshed = 0
    real = nominated._preemption.refresh_rows

    def counting(*args):
        nonlocal refreshed
        refreshed += 1
        return real(*args)

    nominated._preemption.refresh_rows = counting
    try:
        for step in range(120):
            for _ in range(rng.choice((1, 2, 3))):
                op = rng.random()
                if op < 0.3 and nodes:
                    name = f"b{step}-{op:.6f}"
                    pod = make_pod(name, uid=f"uid-{name}", cpu=f"{rng.randint(1, 3)}",
                                   host_ports=rng.choice([(), (), (9000 + rng.randrange(3),)]))
                    s.add_pod(pod.replace(node_name=rng.choice(nodes)))
                    bound.append(pod)
                elif op < 0.45 and bound:
                    s.delete_pod(bound.pop(rng.randrange(len(bound))))
                elif op < 0.7 or not current:
                    name = f"p{step}-{op:.6f}"
                    pod = make_pod(name, uid=f"uid-{name}", cpu=f"{rng.randint(1, 4)}", priority=rng.randint(0, 3),
                                   host_ports=rng.choice([(), (8080,)]))
                    target = rng.choice(nodes + ["gone"])
                    current[name] = PodInfo(pod.replace(nominated_node_name=target))
                    nominator.add_nominated_pod(current[name])
                elif op < 0.85:
                    nominator.delete_nominated_pod_if_exists(current.pop(rng.choice(sorted(current))).pod)
                elif op < 0.93:
                    nodes.append(f"n{len(nodes)}-{step}")
                    s.add_nodes([make_node(nodes[-1], cpu="16", memory="32Gi")])
                elif len(nodes) > 2:
                    gone = nodes.pop(rng.randrange(len(nodes)))
                    for p in [p for p in bound if s.get_pod_by_uid(p.uid) is not None
                              and s.get_pod_by_uid(p.uid).node_name == gone]:
                        bound.remove(p)
                        s.delete_pod(p)
                    s.delete_node(gone)
            table = s.cache.update_snapshot().table
            if step == 60:  # a reader that fell behind the whole log copies everything
                table._change_pos[0] += len(table._change_rows) + 1
            st = nominated.table_state(table)
            pod = make_pod(f"me{step}", uid=f"uid-me{step}", cpu="1", priority=3)
            shadow = nominated._nominated_shadow(st, fw, CycleState(), pod, table)
            fresh = nominated.TableState(table)
            want = nominated._nominated_shadow(fresh, fw, CycleState(), pod, table)
            if want is None:
                assert shadow is None, step
                continue
            assert shadow is st.shadow
            np.testing.assert_array_equal(shadow.requested, want.requested, err_msg=str(step))
            np.testing.assert_array_equal(shadow.pod_count, want.pod_count, err_msg=str(step))
            np.testing.assert_array_equal(shadow.has_host_ports, want.has_host_ports, err_msg=str(step))
            def ports(t):
                return {r: None if t.ports[r] is None else t.ports[r]._ports for r in range(table.capacity)}

            assert ports(shadow) == ports(want), step
    finally:
        nominated._preemption.refresh_rows = real
    assert refreshed > 30


def test_refresh_rows_copies_the_rows_and_the_logged_rows_only():
    """The kernel: the given rows and the log's entries ``start <= q < end`` (a ring) are copied,
    no other; a bad row or a range longer than the log raises before anything is written."""
    import numpy as np

    from fastsched._kernels import _preemption

    src_req = np.arange(24, dtype=np.int64).reshape(8, 3)
    src_cnt = np.arange(8, dtype=np.int64) + 100
    src_hp = np.array([True, False] * 4)
    dst_req, dst_cnt, dst_hp = np.full((8, 3), -1, np.int64), np.full(8, -1, np.int64), np.zeros(8, bool)
    log = np.array([5, 6, 7, 1], dtype=np.int64)  # entries 5..6 are at 1, 2: rows 6 and 7
    _preemption.refresh_rows(dst_req, dst_cnt, dst_hp, src_req, src_cnt, src_hp,
                             np.array([0, 2], dtype=np.int64), log, 5, 7)
    copied = [0, 2, 6, 7]
    for r in range(8):
        if r in copied:
            assert dst_req[r].tolist() == src_req[r].tolist() and dst_cnt[r] == src_cnt[r] and dst_hp[r] == src_hp[r]
        else:
            assert dst_req[r].tolist() == [-1, -1, -1] and dst_cnt[r] == -1 and not dst_hp[r]
    before = dst_req.copy()
    with pytest.raises(IndexError):
        _preemption.refresh_rows(dst_req, dst_cnt, dst_hp, src_req * 2, src_cnt, src_hp,
                                 np.array([1, 8], dtype=np.int64), log, 5, 7)
    with pytest.raises(ValueError):
        _preemption.refresh_rows(dst_req, dst_cnt, dst_hp, src_req * 2, src_cnt, src_hp,
                                 np.array([1], dtype=np.int64), log, 0, 5)
    np.testing.assert_array_equal(dst_req, before)
