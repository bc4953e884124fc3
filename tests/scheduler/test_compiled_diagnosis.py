"""The compiled Filter diagnosis of a pod that fits nowhere (``CompiledCycle.diagnose``, issue 29,
docs/dev/failing-cycle.md) against the plugin-call path's Filter windows.

Two levels:

* node by node: ``diagnose`` against ``ScheduleOneMixin._filter_until_enough`` (the windows of
  ``run_filter_plugins_with_nominated_pods_vectorized``) on seeded random clusters, the default
  profile and custom profiles whose Filter plugins are shuffled (NODES plugins before and after
  NodeResourcesFit and the CYCLE ones): the same code, plugin and reasons on every node, the same
  FitError histogram and plugin sets;
* whole runs: ``Scheduler.use_compiled_diagnosis`` on and off (recorded and not), nominations
  from preemption, a taint changed between two failing attempts of one spec: the same results,
  messages, cluster, cache, queue, metrics and decision records (``AttemptRecord.as_dict``).

Planted mutants each test here fails on (tried, then reverted): the merge ignoring profile order
(a dynamic plugin's verdicts only where no static plugin rejected); reason ids not offset by the
static table's length; the static arrays' "first rejecting plugin wins" dropped (a later NODES
plugin overwrites); Unschedulable and UnschedulableAndUnresolvable swapped in the static codes; the
nominated rows judged on the table instead of the shadow; the plan arrays kept across a change of
the node set (the plan key without ``node_version``: test_taint_changed_between_two_attempts).
"""
from __future__ import annotations

import random

import numpy as np
import pytest

from fastsched import Scheduler, load_config
from fastsched.framework.cycle_state import CycleState
from fastsched.framework.types import PodInfo
from fastsched.runtime import compiled_cycle as cc
from fastsched.scheduler.backend.queue.nominator import Nominator
from fastsched.scheduler.schedule_one import ScheduleOneMixin, num_feasible_nodes_to_find
from fastsched.testing import RANDOM_RUNTIME_CLASS, make_node, make_pod, random_cluster, random_pod

from .test_compiled_binding import _full_state, _mixed_workload, _watch

V1 = {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration"}


def _status_tuple(s):
    return None if s is None else (int(s.code()), s.plugin(), tuple(s.reasons()))


def _shuffled_profile(seed: int) -> dict:
    """A config whose second profile enables the default Filter plugins in a shuffled order."""
    probe = Scheduler(load_config(V1), seed=0)
    names = [name for name, _ in probe.profiles["default-scheduler"]._filter_named]
    random.Random(seed).shuffle(names)
    return {**V1, "profiles": [{"schedulerName": "default-scheduler"}, {
        "schedulerName": "shuffled",
        "plugins": {"filter": {"disabled": [{"name": "*"}], "enabled": [{"name": n} for n in names]}}}]}


def _failing_pod(rng: random.Random, i: int, scheduler: str):
    """A random pod (selectors, affinity, tolerations, host ports, nodeName; random_pod's), made
    to fit nowhere more often than not (too big, or a resource no node has enough of)."""
    base = random_pod(rng, i)
    x = rng.random()
    requests = ({"cpu": "300", "memory": "1Gi"} if x < 0.35 else {"cpu": "1", "nvidia.com/gpu": "9"} if x < 0.5
                else {"cpu": rng.choice(("500m", "6", "20")), "memory": rng.choice(("1Gi", "40Gi"))})
    m = base.manifest
    spec = {}
    if m is not None:
        for key in ("nodeSelector", "affinity", "tolerations"):
            if key in m["spec"]:
                spec[key] = m["spec"][key]
    return make_pod(f"failing-{i}", requests=requests, host_ports=[80] if rng.random() < 0.15 else [],
                    priority=rng.choice((None, 0, 2000)), schedulerName=scheduler, **spec)


def _node_by_node(s: Scheduler, profile: str, pods: list, seed: int) -> tuple[int, int]:
    """(pods diagnosed, pods that fit nowhere): ``diagnose`` equals the windows on every node."""
    fw = s.profiles[profile]
    engine = fw.compiled_cycle
    served = failing = 0
    for i, pod in enumerate(pods):
        snapshot = s.cache.update_snapshot()
        nodes = snapshot.batch()
        state, ref_state = CycleState(), CycleState()
        _, st, _ = fw.run_pre_filter_plugins(state, pod, nodes)
        if st is not None and not st.is_success():
            continue
        fw.run_pre_filter_plugins(ref_state, pod, nodes)
        start = (seed + 37 * i) % len(nodes)
        k = num_feasible_nodes_to_find(s.config.percentage_of_nodes_to_score, len(nodes))
        ref, ref_nodes = ScheduleOneMixin._filter_until_enough(fw, ref_state, pod, nodes, start, k)
        got = engine.diagnose(state, pod, snapshot, nodes, start)
        fits_nowhere = len(ref) == len(nodes) and ref.num_feasible() == 0 and ref.first_error() < 0
        failing += fits_nowhere
        if got is None:
            continue
        assert fits_nowhere, (pod.name, "diagnosed a pod that fits somewhere or errs")
        res, evaluated = got
        served += 1
        assert list(evaluated.rows) == list(ref_nodes.rows)
        for p in range(len(ref)):
            assert _status_tuple(res.status(p)) == _status_tuple(ref.status(p)), (pod.name, p)
        assert res.reason_counts() == ref.reason_counts()
        assert res.unschedulable_plugins() == ref.unschedulable_plugins()
    return served, failing


@pytest.mark.parametrize("seed", [61, 62])
@pytest.mark.parametrize("profile", ["default-scheduler", "shuffled"])
def test_node_by_node(seed, profile):
    s = Scheduler(load_config(_shuffled_profile(seed)), seed=seed)
    s.add(RANDOM_RUNTIME_CLASS)  # (random_pod's pods with an overhead name it)
    nodes, running = random_cluster(seed, 40, 80)
    s.add_nodes(nodes)
    s.add_pods(running)
    s.run()
    rng = random.Random(seed)
    pods = [_failing_pod(rng, i, profile) for i in range(40)]
    served, failing = _node_by_node(s, profile, pods, seed)
    # most pods that fit nowhere are diagnosed (the others: a CYCLE verdict alone rejects some node)
    assert served >= failing // 2 and served >= 8, (served, failing)


def _nominating_build(seed: int, config: dict, record):
    def build():
        s = Scheduler(load_config(config), seed=seed, record=record)
        s.add(RANDOM_RUNTIME_CLASS)
        nodes, running = random_cluster(seed, 24, 60)
        s.add_nodes(nodes)
        s.add_pods(running)
        pods = _mixed_workload(seed, 60)
        rng = random.Random(seed)
        pods += [_failing_pod(rng, 1000 + i, rng.choice(("default-scheduler", "shuffled"))) for i in range(20)]
        s.add_pods(pods)
        return s
    return build


def _records(s):
    out = []
    for r in s.pod_results():
        for rec in (r.history or ()):
            out.append(rec.as_dict())
    return out


def _counted_diagnose():
    calls = [0]
    inner = cc.CompiledCycle.diagnose

    def counted(self, *args):
        got = inner(self, *args)
        calls[0] += got is not None
        return got
    return calls, inner, counted


@pytest.mark.parametrize("record", ["all", None])
@pytest.mark.parametrize("seed", [71, 72])
def test_runs_with_and_without_the_diagnosis(seed, record):
    build = _nominating_build(seed, _shuffled_profile(seed), record)
    states = {}
    calls, inner, counted = _counted_diagnose()
    cc.CompiledCycle.diagnose = counted
    try:
        for on in (True, False):
            s = build()
            s.use_compiled_diagnosis = on
            seen = []
            _watch(s, seen)
            s.run()
            states[on] = (_full_state(s, seen), _records(s))
            if on:
                served = calls[0]
    finally:
        cc.CompiledCycle.diagnose = inner
    assert served > 10, served
    assert calls[0] == served  # (off: never served)
    (full_on, records_on), (full_off, records_off) = states[True], states[False]
    for key in full_off:
        assert full_on[key] == full_off[key], key
    assert records_on == records_off
    if record:
        assert any(rec["outcome"] == "Unschedulable" and rec["filter"] for rec in records_on)


def test_taint_changed_between_two_attempts():
    """One spec fails twice; between the attempts a node's taint changes (the plan's NODES
    verdicts must not be reused), then a node is tainted so that the pod's reasons change."""
    def run(on):
        s = Scheduler(load_config(V1), seed=3, record="all")
        s.use_compiled_diagnosis = on
        s.add_nodes([make_node(f"n{i}", cpu="4", memory="8Gi",
                               taints=[{"key": "k", "value": "v", "effect": "NoSchedule"}] if i % 3 == 0 else [])
                     for i in range(9)])
        s.add_pods([make_pod(f"big-{j}", cpu="6") for j in range(3)])
        s.run()
        for i in (1, 2):
            s.update_node(make_node(f"n{i}", cpu="4", memory="8Gi", taints=[{"key": f"t{i}", "effect": "NoSchedule"}]))
        s.add_node(make_node("n9", cpu="4", memory="8Gi", unschedulable=True))
        s.run()
        return [(r.pod.name, r.status, r.message, r.attempts) for r in s.pod_results()], _records(s)

    calls, inner, counted = _counted_diagnose()
    cc.CompiledCycle.diagnose = counted
    try:
        on = run(True)
    finally:
        cc.CompiledCycle.diagnose = inner
    off = run(False)
    assert calls[0] >= 4
    assert on == off
    # the attempts before and after the change differ (or the test would not see stale arrays)
    messages = {rec["message"] for rec in on[1]}
    assert any("3 node(s) had untolerated taint(s)" in m for m in messages), messages
    assert any("5 node(s) had untolerated taint(s)" in m and "1 node(s) were unschedulable" in m
               for m in messages), messages


def test_a_nominated_row_that_fits_declines():
    """A node holding a nominated pod of lower priority is judged without it (the pod fits there):
    the diagnosis must not claim the pod fits nowhere; with higher priority it fits nowhere."""
    s = Scheduler(load_config(V1), seed=1)
    s.add_nodes([make_node(f"n{i}", cpu="4", memory="8Gi") for i in range(4)])
    s.add_pods([make_pod(f"fill-{i}", cpu="4", node_name=f"n{i}") for i in range(3)])
    s.run()
    fw = s.profiles["default-scheduler"]
    for prio, expect in ((0, None), (100, "fails")):
        nominator = Nominator()
        nominator.add_nominated_pod(PodInfo(make_pod(f"nom-{prio}", cpu="3", priority=prio).replace(
            nominated_node_name="n3")))
        fw.set_pod_nominator(nominator)
        pod = make_pod("p", cpu="2", priority=50)
        snapshot = s.cache.update_snapshot()
        nodes = snapshot.batch()
        state = CycleState()
        fw.run_pre_filter_plugins(state, pod, nodes)
        got = fw.compiled_cycle.diagnose(state, pod, snapshot, nodes, 0)
        if expect is None:
            assert got is None
        else:
            assert got is not None
            res, evaluated = got
            row = list(evaluated.table.node_names[evaluated.rows]).index("n3")
            assert _status_tuple(res.status(row))[2] == ("Insufficient cpu",)


def test_reason_ids_index_their_own_tables():
    """The static reasons come first, the dynamic plugins' after them: ids never collide."""
    s = Scheduler(load_config(V1), seed=2)
    s.add_nodes([make_node(f"n{i}", cpu="2", memory="4Gi", labels={"disk": "ssd" if i % 2 else "hdd"})
                 for i in range(6)])
    fw = s.profiles["default-scheduler"]
    pod = make_pod("p", cpu="3", node_selector={"disk": "ssd"})
    snapshot = s.cache.update_snapshot()
    nodes = snapshot.batch()
    state = CycleState()
    fw.run_pre_filter_plugins(state, pod, nodes)
    res, evaluated = fw.compiled_cycle.diagnose(state, pod, snapshot, nodes, 1)
    got = sorted({(res.plugin_names[int(p)], res.reasons[int(r)]) for p, r in zip(res.plugin_ids, res.reason_ids)})
    assert got == [("NodeAffinity", ("node(s) didn't match Pod's node affinity/selector",)),
                   ("NodeResourcesFit", ("Insufficient cpu",))]
    # and node by node as the per-node RunFilterPlugins says (cpu 3 > 2 allocatable: Unresolvable)
    for p, name in enumerate(evaluated.table.node_names[evaluated.rows].tolist()):
        assert _status_tuple(res.status(p)) == _status_tuple(fw.run_filter_plugins(state, pod, snapshot.get(name)))
    assert np.count_nonzero(res.codes == 3) == 6


@pytest.mark.parametrize("diagnosis", [True, False])
def test_a_failed_pod_queued_with_its_patched_status(diagnosis):
    """_handle_failure (step 6: PodInfo.update only when the pod changed): the queued PodInfo of a
    pod that failed holds the cluster's pod, PodScheduled=False condition included, whether the
    status patch's echo reached the queue or not; and one nominated by preemption its nomination."""
    s = Scheduler(load_config(V1), seed=4)
    s.use_compiled_diagnosis = diagnosis
    s.add_nodes([make_node(f"n{i}", cpu="2", memory="4Gi") for i in range(3)])
    s.add_pods([make_pod(f"low-{i}", cpu="2", priority=0) for i in range(3)])
    s.run()
    s.add_pods([make_pod("big", cpu="8"), make_pod("vip", cpu="2", priority=100)])
    s.run(until=s.clock.now() + 0.5)
    queued = {qpi.pod.name: qpi for qpi, _ in s.queue.queued_pod_infos()}
    assert "big" in queued
    for name, qpi in queued.items():
        fresh = s.cluster.pods[qpi.pod.uid]
        assert qpi.pod_info.pod is fresh, name
        assert any(c["type"] == "PodScheduled" and c["status"] == "False" for c in fresh.conditions), name


# -- the kernel pass (_diagnosis.merge_fit) ---------------------------------------------------------

def _merge_reference(rows, first, scode, srid, fit_pos, table_cols, cols, wants, rid0, counted):
    """merge_fit by its definition: the resource checks' masks (_resources.fit_filter_verdicts over
    the rows a node-only plugin before ``fit_pos`` did not reject), merged by profile position."""
    from fastsched._kernels import _resources
    pod_count, allowed, alloc, requested = table_cols
    n = len(rows)
    pid, code, rid = first[rows].astype(np.int16), scode[rows].copy(), srid[rows].copy()
    asked = np.flatnonzero((pid < 0) | (pid > fit_pos))
    fcodes = np.empty(len(asked), np.int8)
    frids = np.empty(len(asked), np.int32)
    patterns = np.empty(_resources.MAX_PATTERNS, np.int64)
    k = _resources.fit_filter_verdicts(pod_count, allowed, alloc, requested, np.ascontiguousarray(rows[asked]),
                                       cols, wants, 2, 3, fcodes, frids, patterns)
    if k < 0:
        return "too many", None
    failed = fcodes != 0
    take = asked[failed]
    pid[take], code[take], rid[take] = fit_pos, fcodes[failed], frids[failed] + rid0
    passing = (code == 0) & (counted[rows] != 0 if counted is not None else True)
    if passing.any():
        return "found", None
    return k, (pid, code, rid, patterns[:k].tolist())


@pytest.mark.parametrize("seed", range(6))
def test_merge_fit_against_its_definition(seed):
    """Random node-only arrays, fit position, columns, checks and nominated rows: the kernel's
    statuses, masks and answers (patterns, MERGE_FOUND, MERGE_TOO_MANY) equal the composition of
    fit_filter_verdicts and the profile-order merge, node by node."""
    from fastsched._kernels import _diagnosis
    rng = np.random.default_rng(seed)
    answers = set()
    for trial in range(60):
        C, R = int(rng.integers(1, 40)), int(rng.integers(1, 5))
        n = int(rng.integers(1, C + 1))
        rows = rng.permutation(C)[:n].astype(np.int64)
        reject = rng.random(C) < rng.choice((0.2, 0.6, 1.0))
        fit_pos = int(rng.integers(0, 7))
        positions = rng.integers(0, 6, C)
        positions[positions >= fit_pos] += 1  # (profile positions are distinct: never Fit's)
        first = np.where(reject, positions, -1).astype(np.int16)
        scode = np.where(reject, rng.choice((2, 3), C), 0).astype(np.int8)
        srid = np.where(reject, rng.integers(0, 4, C), -1).astype(np.int32)
        alloc = rng.integers(0, 8, (C, R)).astype(np.int64)
        requested = np.minimum(rng.integers(0, 8, (C, R)), alloc).astype(np.int64)
        allowed = rng.integers(1, 4, C).astype(np.int64)
        pod_count = rng.integers(0, 4, C).astype(np.int64)
        K = int(rng.choice((1, 2, 3, 8, 62)))
        cols = rng.integers(-1, R, K).astype(np.int64)
        wants = rng.integers(0, 9, K).astype(np.int64)
        counted = None
        if rng.random() < 0.4:
            counted = (rng.random(C) < 0.7).astype(np.uint8)
        table_cols = (pod_count, allowed, alloc, requested)
        want, ref = _merge_reference(rows, first, scode, srid, fit_pos, table_cols, cols, wants, 4, counted)
        pid, code, rid = np.empty(n, np.int16), np.empty(n, np.int8), np.empty(n, np.int32)
        patterns = np.empty(_diagnosis.MAX_PATTERNS, np.int64)
        got = _diagnosis.merge_fit(rows, first, scode, srid, fit_pos, pod_count, allowed, alloc, requested, cols,
                                   wants, 2, 3, 4, counted, pid, code, rid, patterns)
        if want == "found":
            assert got == _diagnosis.MERGE_FOUND, trial
        elif want == "too many":
            assert got == _diagnosis.MERGE_TOO_MANY, trial
        else:
            assert got == want, trial
            rpid, rcode, rrid, rpatterns = ref
            assert patterns[:got].tolist() == rpatterns
            assert pid.tolist() == rpid.tolist() and code.tolist() == rcode.tolist(), trial
            assert rid.tolist() == rrid.tolist(), trial
        answers.add(got if got < 0 else min(got, 1))
    # (the trials reach every answer: masks, none, a node that fits; 62 checks reach too many)
    assert answers >= {_diagnosis.MERGE_FOUND, 0, 1}, answers


def test_merge_fit_too_many_masks():
    """More distinct failure masks than MAX_PATTERNS: MERGE_TOO_MANY (the caller then asks the
    plugin's filter_vectorized), as fit_filter_verdicts answers -1."""
    from fastsched._kernels import _diagnosis
    C, K = 200, 8
    alloc = np.full((C, K), 10, np.int64)
    # row r lacks the resources of the bits of r + 1: 200 distinct masks, none empty
    requested = np.array([[10 * (((r + 1) >> j) & 1) for j in range(K)] for r in range(C)], np.int64)
    args = (np.arange(C, dtype=np.int64), np.full(C, -1, np.int16), np.zeros(C, np.int8), np.full(C, -1, np.int32),
            0, np.zeros(C, np.int64), np.full(C, 110, np.int64), alloc, requested, np.arange(K, dtype=np.int64),
            np.ones(K, np.int64), 2, 3, 0, None)
    outs = (np.empty(C, np.int16), np.empty(C, np.int8), np.empty(C, np.int32),
            np.empty(_diagnosis.MAX_PATTERNS, np.int64))
    assert _diagnosis.merge_fit(*args, *outs) == _diagnosis.MERGE_TOO_MANY
    # the first 64 nodes alone: exactly MAX_PATTERNS masks, numbered in order of first appearance
    assert _diagnosis.merge_fit(np.arange(64, dtype=np.int64), *args[1:], *outs) == 64
    assert outs[3].tolist() == [(r + 1) << 1 for r in range(64)]



@pytest.mark.parametrize("seed", range(4))
def test_merge_fit_cache_across_calls(seed):
    """The resource checks' masks kept across calls (row_version / cache_version / cache_mask):
    over a sequence of calls on one table whose rows change between them (their row_version
    moved), in another order each time, with other counted rows, the same answers, statuses and
    masks as the kernel without the cache; rows not counted never enter the cache."""
    from fastsched._kernels import _diagnosis
    rng = np.random.default_rng(100 + seed)
    C, R = int(rng.integers(5, 60)), int(rng.integers(1, 4))
    alloc = rng.integers(0, 8, (C, R)).astype(np.int64)
    requested = np.minimum(rng.integers(0, 8, (C, R)), alloc).astype(np.int64)
    allowed = rng.integers(1, 4, C).astype(np.int64)
    pod_count = rng.integers(0, 4, C).astype(np.int64)
    row_version = np.arange(C, dtype=np.int64)
    version = C
    fit_pos = 2
    reject = rng.random(C) < 0.3
    first = np.where(reject, rng.choice((0, 1, 3), C), -1).astype(np.int16)
    scode = np.where(reject, rng.choice((2, 3), C), 0).astype(np.int8)
    srid = np.where(reject, rng.integers(0, 4, C), -1).astype(np.int32)
    cols = rng.integers(-1, R, 3).astype(np.int64)
    wants = rng.integers(0, 6, 3).astype(np.int64)
    cache_version = np.full(C, -1, np.int64)
    cache_mask = np.zeros(C, np.int64)
    hits = 0
    for step in range(40):
        # some rows change (their version moves), some without a version move are not touched
        for r in rng.choice(C, int(rng.integers(0, 4)), replace=False).tolist():
            requested[r] = np.minimum(rng.integers(0, 8, R), alloc[r])
            pod_count[r] = rng.integers(0, 4)
            if rng.random() < 0.3:
                alloc[r] = rng.integers(0, 8, R)
                allowed[r] = rng.integers(1, 4)
            version += 1
            row_version[r] = version
        n = int(rng.integers(1, C + 1))
        rows = rng.permutation(C)[:n].astype(np.int64)
        counted = (rng.random(C) < 0.8).astype(np.uint8) if rng.random() < 0.5 else None
        # a row not counted is judged on a shadow: other requests there than the table's
        shadow_requested = requested.copy()
        if counted is not None:
            shadow_requested[counted == 0] += rng.integers(0, 3, (int((counted == 0).sum()), R))
        judged = (pod_count, allowed, alloc, shadow_requested)
        outs = []
        for cache in (None, (row_version, cache_version, cache_mask)):
            pid, code, rid = np.empty(n, np.int16), np.empty(n, np.int8), np.empty(n, np.int32)
            patterns = np.empty(_diagnosis.MAX_PATTERNS, np.int64)
            before = cache_version.copy()
            got = _diagnosis.merge_fit(rows, first, scode, srid, fit_pos, *judged, cols, wants, 2, 3, 4, counted,
                                       pid, code, rid, patterns, *(cache or ()))
            if cache is not None:
                hits += int(((before == row_version) & (before >= 0)).sum())
                if counted is not None:  # the shadow's rows never enter the cache
                    assert (cache_version[counted == 0] == before[counted == 0]).all()
            outs.append((got, pid.tolist(), code.tolist(), rid.tolist(), patterns[:max(got, 0)].tolist())
                        if got >= 0 else (got,))
        assert outs[0] == outs[1], step
    assert hits > 0


def _count_merges(monkeypatch):
    from fastsched._kernels import _diagnosis
    served = [0, 0]
    inner = _diagnosis.merge_fit

    def counted(*args):
        got = inner(*args)
        served[0 if got >= 0 else 1] += 1
        return got
    monkeypatch.setattr(cc._diagnosis, "merge_fit", counted)
    return served


@pytest.mark.parametrize("profile", ["default-scheduler", "shuffled"])
def test_node_by_node_through_the_kernel_pass(monkeypatch, profile):
    """test_node_by_node's check with the kernel pass counted: most pods diagnosed are merged by
    it (the rest: MERGE_FOUND before a CYCLE Filter rejects the node)."""
    served = _count_merges(monkeypatch)
    seed = 63
    s = Scheduler(load_config(_shuffled_profile(seed)), seed=seed)
    s.add(RANDOM_RUNTIME_CLASS)  # (random_pod's pods with an overhead name it)
    nodes, running = random_cluster(seed, 40, 80)
    s.add_nodes(nodes)
    s.add_pods(running)
    s.run()
    rng = random.Random(seed)
    diagnosed, _ = _node_by_node(s, profile, [_failing_pod(rng, i, profile) for i in range(40)], seed)
    assert served[0] >= diagnosed >= 8, (served, diagnosed)


def test_many_masks_take_the_plugins_verdicts(monkeypatch):
    """Eight extended resources allocated at random: a pod asking for all of them fails with more
    masks than the kernel numbers; the diagnosis then asks NodeResourcesFit's filter_vectorized
    and still equals the windows node by node."""
    served = _count_merges(monkeypatch)
    rng = random.Random(5)
    names = [f"example.com/r{j}" for j in range(8)]
    s = Scheduler(load_config(V1), seed=5)
    s.add_nodes([make_node(f"n{i}", cpu="4", memory="8Gi", extra={r: str(rng.choice((0, 1, 2))) for r in names},
                           taints=[{"key": "k", "effect": "NoSchedule"}] if i % 17 == 0 else [])
                 for i in range(300)])
    pod = make_pod("p", cpu="1", requests={r: "2" for r in names})
    diagnosed, failing = _node_by_node(s, "default-scheduler", [pod], 5)
    assert diagnosed == failing == 1
    assert served == [0, 1], served


def test_a_subclass_filter_is_not_judged_by_its_checks():
    """A Fit subclass overriding filter_vectorized (or an instance attribute standing for it) does
    not promise the check masks: its verdicts are asked (_paired_with_filter)."""
    from fastsched.plugins.noderesources.fit import Fit

    class Own(Fit):
        def filter_vectorized(self, state, pod, nodes):
            return super().filter_vectorized(state, pod, nodes)

    fit = object.__new__(Fit)
    own = object.__new__(Own)
    assert cc._paired_with_filter(fit, "column_filter_checks", fit.filter_vectorized) is not None
    assert cc._paired_with_filter(own, "column_filter_checks", own.filter_vectorized) is None
    assert cc._paired_with_filter(fit, "column_filter_checks", lambda *a: None) is None
