"""The vectorized dry run and Filter correction against the per-node path (the reference).

Seeded random clusters (priorities, start times, several resource shapes with extended resources
and ephemeral storage, host ports, taints, node affinity), PodDisruptionBudgets (some with
disruptedPods), nominated pods (through the in-tree Nominator and through a nominator that only
answers node by node) and preemptors that do not fit. For each: the same candidates with the same
victims in the same order and PDB violations, the same per-node statuses in walk order, the same
errors, the same PostFilter result, evictions, cleared nominations and RNG state; and the Filter
correction (``filter_with_nominated_pods``) gives every node upstream's status.
"""
from __future__ import annotations

import functools
import random

import numpy as np
import pytest

from fastsched.api import PodDisruptionBudget
from fastsched.config.args import DefaultPreemptionArgs
from fastsched.framework import CycleState, PodInfo
from fastsched.framework.types import NominatingInfo, NominatingMode
from fastsched.plugins.defaultpreemption import vectorized
from fastsched.runtime.filter_results import ArrayNodeToStatus
from fastsched.runtime.nominated import filter_with_nominated_pods, nominated_filters
from fastsched.scheduler.backend.queue.nominator import Nominator
from fastsched.snapshot import build_snapshot
from fastsched.testing import make_pod, random_cluster, random_pod

from .support import COUNTING_FILTER, Setup, pdb

ADDITIVE = ["NodeUnschedulable", "NodeName", "TaintToleration", "NodeAffinity", "NodePorts", "NodeResourcesFit"]
WITH_PRE_FILTER = ("NodeAffinity", "NodePorts", "NodeResourcesFit", "InterPodAffinity")
SEEDS = range(10)


def pre_filters(filters) -> list[str]:
    return [f for f in filters if f in WITH_PRE_FILTER]


def statuses_of(nts) -> list[tuple]:
    return [(name, int(s.code()), tuple(s.reasons()), s.plugin()) for name, s in nts.items()]


def reason_counts(nts) -> dict[str, int]:
    """reason -> how many of ``nts``'s statuses carry it (a FitError's histogram, by hand)."""
    counts: dict[str, int] = {}
    for _, s in nts.items():
        for r in s.reasons():
            counts[r] = counts.get(r, 0) + 1
    return counts


def candidates_of(candidates) -> list[tuple]:
    return [(c.name, [p.name for p in c.victims.pods], c.victims.num_pdb_violations) for c in candidates]


def status_tuple(s) -> tuple:
    return (0, (), "") if s is None else (int(s.code()), tuple(s.reasons()), s.plugin())


def random_pdbs(rng: random.Random, running) -> list:
    out = []
    for i, app in enumerate(("web", "db", "cache", "batch")):
        if rng.random() < 0.7:
            ns = rng.choice(("default", "prod"))
            disrupted = [p.name for p in running
                         if p.namespace == ns and p.labels.get("app") == app and rng.random() < 0.3]
            out.append(pdb(f"pdb-{i}", {"app": app}, allowed=rng.choice((0, 0, 1, 2, 5)), namespace=ns,
                           disrupted=disrupted))
    if rng.random() < 0.3:
        out.append(pdb("pdb-team", {"team": "a"}, allowed=rng.choice((0, 1))))
    if rng.random() < 0.3:
        out.append(pdb("pdb-empty", {}, allowed=0))  # an empty selector matches nothing here
    if rng.random() < 0.5:
        # matches pods without a team label, but never a pod without labels (upstream's rule)
        out.append(PodDisruptionBudget.from_manifest({
            "apiVersion": "policy/v1", "kind": "PodDisruptionBudget",
            "metadata": {"name": "pdb-no-team", "namespace": "default"},
            "spec": {"selector": {"matchExpressions": [{"key": "team", "operator": "DoesNotExist"}]}},
            "status": {"disruptionsAllowed": rng.choice((0, 1, 3))}}, validate=False))
    return out


def random_nominated(rng: random.Random, nodes, count: int) -> dict[str, list]:
    out: dict[str, list] = {}
    for i in range(count):
        node = rng.choice(nodes).name
        req = {"cpu": rng.choice(("100m", "500m", "2")), "memory": rng.choice(("64Mi", "1Gi"))}
        if rng.random() < 0.2:
            req["nvidia.com/gpu"] = "1"
        p = make_pod(f"nominated-{i}", uid=f"nominated-{i}", requests=req, priority=rng.choice((0, 100, 500, 5000)),
                     host_ports=[rng.choice((80, 443))] if rng.random() < 0.2 else [])
        out.setdefault(node, []).append(p.replace(nominated_node_name=node))
    return out


def preemptor(rng: random.Random, i: int):
    p = random_pod(rng, i)
    return p.replace(uid=f"preemptor-{i}", priority=rng.choice((50, 500, 1000, 5000)))


@functools.lru_cache(maxsize=None)
def scenario(seed: int, ties: bool = False):
    """A random cluster; with ``ties``, 12 nodes with some 30 pods each, of two priorities and two
    start times (or none), so that more than 12 potential victims on a node tie and their order is
    Go's ``sort.Slice``'s, not a stable sort's."""
    rng = random.Random(7000 + seed)
    if ties:
        nodes, running = random_cluster(seed, 12, 360)
        running = [p.replace(priority=rng.choice((0, 0, 10)),
                             start_time=rng.choice((1.0, 1.0, 1.0, 2.0, None))) for p in running]
    else:
        nodes, running = random_cluster(seed, 60, 600)
        running = [p.replace(start_time=float(rng.randint(0, 4))) if rng.random() < 0.6 else p for p in running]
    running = [p.replace(labels={}) if rng.random() < 0.1 else p for p in running]
    snapshot = build_snapshot(nodes, running)
    return nodes, running, snapshot, random_pdbs(rng, running), random_nominated(rng, nodes, 12), \
        [preemptor(rng, i) for i in range(6)]


def setup_for(seed: int, p, *, vectorized_path: bool, real_nominator: bool, filters=ADDITIVE, args=None,
              ties: bool = False):
    nodes, running, snapshot, pdbs, nominated, _ = scenario(seed, ties)
    s = Setup(nodes, running, p, pdbs=pdbs, filters=filters, pre_filters=pre_filters(filters), seed=seed,
              snapshot=snapshot, nominated=None if real_nominator else nominated, args=args)
    if real_nominator:
        nominator = Nominator()
        for node, pods in nominated.items():
            for q in pods:
                nominator.add_nominated_pod(PodInfo(q), NominatingInfo(node, NominatingMode.OVERRIDE))
        s.fw.set_pod_nominator(nominator)
    s.plugin.vectorized = vectorized_path
    return s


class _Counter:
    """Counts the vectorized dry runs, so a test cannot pass by silently taking the per-node path."""

    def __init__(self, monkeypatch):
        self.runs = 0
        original = vectorized.VectorizedDryRun.run

        def run(this, *a, **k):
            self.runs += 1
            return original(this, *a, **k)

        monkeypatch.setattr(vectorized.VectorizedDryRun, "run", run)


@pytest.mark.parametrize("ties", [False, True], ids=["", "ties"])
@pytest.mark.parametrize("real_nominator", [True, False], ids=["nominator", "node-by-node"])
def test_dry_run_matches_per_node(monkeypatch, real_nominator, ties):
    counter = _Counter(monkeypatch)
    compared = with_victims = histograms = 0
    for seed in SEEDS:
        *_, preemptors = scenario(seed, ties)
        for p in preemptors:
            ref = setup_for(seed, p, vectorized_path=False, real_nominator=real_nominator, ties=ties)
            vec = setup_for(seed, p, vectorized_path=True, real_nominator=real_nominator, ties=ties)
            state = ref.cycle_state()
            pdbs = ref.client.list_pdbs()
            nodes = list(ref.snapshot.batch())
            n = len(nodes)
            for offset, k in ((0, n), (seed % n, 3), ((7 * seed) % n, 1), (n - 1, 10), (1, 0), (n + 2, 5)):
                want = ref.plugin.evaluator.dry_run_preemption_per_node(state.clone(), p, nodes, pdbs, offset, k)
                got = vec.plugin.evaluator.dry_run_preemption(state.clone(), p, nodes, pdbs, offset, k)
                assert candidates_of(got[0]) == candidates_of(want[0]), (seed, p.name, offset, k)
                # the FitError's counts, read from the walk before any status is made, then made
                hist, size = got[1].reason_histogram(), got[1].len()
                assert statuses_of(got[1]) == statuses_of(want[1]), (seed, p.name, offset, k)
                assert (dict(hist), size) == (reason_counts(want[1]), want[1].len()), (seed, p.name, offset, k)
                histograms += bool(hist)
                assert got[2] == want[2]
                compared += 1
                with_victims += bool(want[0])
            # no potential node at all
            want = ref.plugin.evaluator.dry_run_preemption_per_node(state.clone(), p, [], pdbs, 0, 3)
            got = vec.plugin.evaluator.dry_run_preemption(state.clone(), p, [], pdbs, 0, 3)
            assert (candidates_of(got[0]), statuses_of(got[1]), got[2]) == ([], [], None) == \
                (candidates_of(want[0]), statuses_of(want[1]), want[2])
            compared += 1
    assert counter.runs == compared
    assert with_victims >= compared // 3, (with_victims, compared)
    assert histograms >= compared // 3, (histograms, compared)


@pytest.mark.parametrize("real_nominator", [True, False], ids=["nominator", "node-by-node"])
@pytest.mark.parametrize("percentage", [10, 100])
def test_post_filter_matches_per_node(monkeypatch, real_nominator, percentage):
    counter = _Counter(monkeypatch)
    args = DefaultPreemptionArgs(min_candidate_nodes_percentage=percentage, min_candidate_nodes_absolute=3)
    outcomes = {"preempted": 0, "failed": 0}
    for seed in SEEDS:
        *_, preemptors = scenario(seed)
        for p in preemptors:
            results = []
            for path in (False, True):
                s = setup_for(seed, p, vectorized_path=path, real_nominator=real_nominator, args=args)
                state = s.cycle_state()
                statuses = s.filter_statuses(state)
                if s.feasible:
                    break
                result, status = s.plugin.post_filter(state, p, statuses)
                results.append((result.nominating_info.nominated_node_name if result is not None else None,
                                status_tuple(status), list(s.client.preempted), list(s.client.cleared),
                                s.fw.rng.getstate()))
            if len(results) < 2:
                continue
            assert results[1] == results[0], (seed, p.name)
            outcomes["preempted" if results[0][2] else "failed"] += 1
    # every preemption dry-ran vectorized (a failure may stop before: no potential node)
    assert outcomes["preempted"] <= counter.runs <= sum(outcomes.values())
    assert outcomes["preempted"] >= 10 and outcomes["failed"] >= 3, outcomes


@pytest.mark.parametrize("real_nominator", [True, False], ids=["nominator", "node-by-node"])
def test_filter_with_nominated_pods_matches_per_node(real_nominator):
    checked = corrected = 0
    for seed in SEEDS:
        *_, nominated, preemptors = scenario(seed)
        for p in preemptors:
            s = setup_for(seed, p, vectorized_path=True, real_nominator=real_nominator)
            state = s.cycle_state()
            batch = s.snapshot.batch()
            got = filter_with_nominated_pods(s.fw, state, p, batch)
            assert got is not None
            for i, view in enumerate(batch):
                want = s.fw.run_filter_plugins_with_nominated_pods(state, p, view)
                assert status_tuple(got.status(i)) == status_tuple(want), (seed, p.name, view.name)
                plain = s.fw.run_filter_plugins(state, p, view)
                corrected += status_tuple(plain) != status_tuple(want)
                checked += 1
            # a window of the nodes, twice (the second reuses the cycle's shadow)
            part = batch.window(seed % len(batch), 5, 25)
            for _ in range(2):
                got = filter_with_nominated_pods(s.fw, state, p, part)
                for i, view in enumerate(part):
                    want = s.fw.run_filter_plugins_with_nominated_pods(state, p, view)
                    assert status_tuple(got.status(i)) == status_tuple(want)
    assert corrected >= 5, (corrected, checked)


def test_other_filters_take_the_per_node_path(monkeypatch):
    counter = _Counter(monkeypatch)
    seed = 1
    *_, preemptors = scenario(seed)
    for filters in (ADDITIVE + [COUNTING_FILTER], ADDITIVE + ["InterPodAffinity"]):
        for p in preemptors[:3]:
            s = setup_for(seed, p, vectorized_path=True, real_nominator=True, filters=filters)
            state = s.cycle_state()
            table = s.snapshot.table
            eligible = vectorized.filters_plan(s.fw, state, table) is not None
            # InterPodAffinity is in the skip set for these pods (no affinity terms anywhere)
            assert eligible == ("InterPodAffinity" in filters), filters
            # the runtime decides the same for its Filter with nominated pods
            assert (nominated_filters(s.fw, state) is not None) == eligible
            if not eligible:
                assert filter_with_nominated_pods(s.fw, state, p, s.snapshot.batch()) is None
            statuses = s.filter_statuses(state)
            if s.feasible:
                continue
            s.plugin.post_filter(state, p, statuses)
    assert counter.runs > 0  # the InterPodAffinity profile, whose plugin skips


def test_table_changes_between_dry_runs():
    """The pod columns follow the table: pods added and removed, a start time set in place."""
    seed = 2
    nodes, running, _, pdbs, nominated, preemptors = scenario(seed)
    snapshot = build_snapshot(nodes, running)  # a private copy: this test changes it
    rng = random.Random(5)
    p = preemptors[0].replace(priority=5000)
    ref = Setup(nodes, running, p, pdbs=pdbs, filters=ADDITIVE, pre_filters=pre_filters(ADDITIVE), seed=seed,
                snapshot=snapshot)
    ref.plugin.vectorized = False
    vec = Setup(nodes, running, p, pdbs=pdbs, filters=ADDITIVE, pre_filters=pre_filters(ADDITIVE), seed=seed,
                snapshot=snapshot)
    extra = 0
    for step in range(8):
        state = ref.cycle_state()
        views = list(snapshot.batch())
        args = (ref.client.list_pdbs(), step % len(views), len(views))
        want = ref.plugin.evaluator.dry_run_preemption_per_node(state.clone(), p, views, *args)
        got = vec.plugin.evaluator.dry_run_preemption(state.clone(), p, views, *args)
        assert candidates_of(got[0]) == candidates_of(want[0]), step
        assert statuses_of(got[1]) == statuses_of(want[1]), step
        # change the cluster: remove a pod, add one, start a not-started pod in place
        victim = rng.choice([pi.pod for v in views for pi in v.pods])
        snapshot.remove_pod(victim)
        extra += 1
        snapshot.add_pod(make_pod(f"added-{extra}", uid=f"added-{extra}", node_name=rng.choice(nodes).name,
                                  requests={"cpu": "500m"}, priority=rng.choice((0, 100)),
                                  labels={"app": "web"}))
        not_started = [pi.pod for v in views for pi in v.pods if pi.pod.start_time is None]
        if not_started:
            rng.choice(not_started).start_time = float(step)  # as the scheduler does at bind


def test_candidates_read_like_a_list():
    seed = 0
    *_, preemptors = scenario(seed)
    for p in preemptors:
        s = setup_for(seed, p, vectorized_path=True, real_nominator=True)
        state = s.cycle_state()
        got, _, _ = s.plugin.evaluator.dry_run_preemption(state, p, list(s.snapshot.batch()),
                                                          s.client.list_pdbs(), 0, 100)
        if len(got) < 2:
            continue
        assert got == list(got) and got[:2] == [got[0], got[1]]
        best = s.plugin.evaluator.select_candidate(got)
        from fastsched.plugins.defaultpreemption import pick_one_node_for_preemption
        assert best.name == pick_one_node_for_preemption({c.name: c.victims for c in got})
        return
    pytest.fail("no dry run with several candidates")


def test_select_victims_kernel_orders_ties_by_entry():
    """Pods that have not started: the node's pod-list order decides (the order their victims were
    made in, each with its ``time.Now()``); 4 victims, so ``sort.Slice`` is an insertion sort."""
    from fastsched._kernels import _preemption
    prio = np.array([5, 5, 5, 7], dtype=np.int64)
    start = np.array([np.inf, np.inf, 1.0, 2.0])
    req = np.array([[100], [100], [100], [100]], dtype=np.int64)
    seg = np.array([0, 4], dtype=np.int64)
    entries = np.arange(4, dtype=np.int64)
    out = [np.empty(4, dtype=np.int64), np.zeros(4, dtype=np.uint8)] + [np.empty(1, dtype=np.int64) for _ in range(4)]
    out.append(np.empty(1, dtype=np.float64))
    # the preemptor needs 350 of 400: only one pod may stay
    _preemption.select_victims(seg, entries, np.ones(1, dtype=np.uint8), prio, start, req,
                               np.zeros(4, dtype=np.uint8), np.zeros(5, dtype=np.int64), np.zeros(0, dtype=np.int32),
                               np.zeros(0, dtype=np.int64), True, np.zeros(1, dtype=np.int64),
                               np.array([350], dtype=np.int64), np.zeros(1, dtype=np.int64),
                               np.array([[450]], dtype=np.int64),
                               np.array([10], dtype=np.int64), np.zeros((1, 1), dtype=np.int64),
                               np.zeros(1, dtype=np.int64), *out)
    victims, _, n_victims, n_violating, top, total, first = out
    # importance: 3 (prio 7), 2 (start 1.0), 0, 1 (not started, entry order); 3 is reprieved
    assert n_victims[0] == 3 and victims[:3].tolist() == [2, 0, 1]
    assert top[0] == 5 and total[0] == 3 * (5 + 2**31) and first[0] == 1.0 and n_violating[0] == 0


def test_cycle_state_reused_with_other_nominations_is_rebuilt():
    """A new CycleState always re-reads the nominations (the per-cycle reuse is keyed on it)."""
    seed = 3
    *_, preemptors = scenario(seed)
    p = preemptors[0]
    s = setup_for(seed, p, vectorized_path=True, real_nominator=True)
    nominator = s.fw.pod_nominator
    batch = s.snapshot.batch()
    for round_ in range(3):
        state = s.cycle_state()
        got = filter_with_nominated_pods(s.fw, state, p, batch)
        for i, view in enumerate(batch):
            want = s.fw.run_filter_plugins_with_nominated_pods(state, p, view)
            assert status_tuple(got.status(i)) == status_tuple(want)
        big = make_pod(f"big-{round_}", uid=f"big-{round_}", requests={"cpu": "64"}, priority=10**6)
        node = batch.name_at(round_)
        nominator.add_nominated_pod(PodInfo(big), NominatingInfo(node, NominatingMode.OVERRIDE))
    assert isinstance(CycleState(), CycleState)


def _post_filter_on_both_paths(seed, seen, args, *, latest=None, filters=None, check=None):
    """PostFilter on the scheduler's kind of status map for ``seen`` (the pod this cycle's Filter
    saw; ``latest`` the client's latest version, ``seen`` itself by default), on the per-node and
    on the vectorized path: the two (nominated node, status, victims, RNG state), or None when the
    pod fits somewhere. ``check(setup)`` runs on each path's set-up."""
    results = []
    for path in (False, True):
        kw = {} if filters is None else {"filters": filters}
        s = setup_for(seed, seen, vectorized_path=path, real_nominator=True, args=args, **kw)
        if check is not None:
            check(s)
        s.client.pods[seen.uid] = seen if latest is None else latest
        state = s.cycle_state(seen)
        batch = s.snapshot.batch()
        res = s.fw.run_filter_plugins_with_nominated_pods_vectorized(state, seen, batch)
        if res.feasible().any():
            return None
        statuses = ArrayNodeToStatus(res, batch, np.flatnonzero(~res.feasible()))
        result, status = s.plugin.post_filter(state, seen, statuses)
        results.append((result.nominating_info.nominated_node_name if result is not None else None,
                        status_tuple(status), list(s.client.preempted), s.fw.rng.getstate()))
    return results


@pytest.mark.parametrize("order", ["node-only-first", "additive-first"])
def test_screened_post_filter_matches_per_node(monkeypatch, order):
    """PostFilter on the scheduler's kind of status map (over the NodeBatch, so the potential nodes
    come as rows of this pod's Filter codes): the dry run skips the node-only filters only when
    they run before the additive ones, and gives the per-node path's results either way (with the
    additive filters first, a node NodeResourcesFit rejected may still fail a node-only filter)."""
    filters = ADDITIVE if order == "node-only-first" else ADDITIVE[4:] + ADDITIVE[:4]
    skipped: list[bool] = []
    original = vectorized.VectorizedDryRun._verdicts

    def verdicts(this, *a, **k):
        skipped.append(bool(a[11] if len(a) > 11 else k.get("skip_node_only", False)))
        return original(this, *a, **k)

    monkeypatch.setattr(vectorized.VectorizedDryRun, "_verdicts", verdicts)
    args = DefaultPreemptionArgs(min_candidate_nodes_percentage=100, min_candidate_nodes_absolute=3)
    compared = 0
    for seed in SEEDS:
        *_, preemptors = scenario(seed)
        for p in preemptors:
            # (the pod Filter saw is the client's latest version)
            results = _post_filter_on_both_paths(seed, p, args, filters=filters)
            if results is not None:
                assert results[1] == results[0], (seed, p.name, order)
                compared += 1
    assert compared >= 20, compared
    assert skipped and all(skipped) == (order == "node-only-first") and any(skipped) == all(skipped), skipped


def test_newer_pod_version_is_not_screened():
    """When the client's latest version of the preemptor is not the pod Filter saw (here the
    Filter's version tolerated every taint, the latest tolerates none), the Filter's codes say
    nothing about the node-only filters: the vectorized dry run must run them again, as the
    per-node path does with the latest version."""
    from fastsched.api.objects import Toleration
    args = DefaultPreemptionArgs(min_candidate_nodes_percentage=100, min_candidate_nodes_absolute=3)
    compared = 0
    for seed in SEEDS[:5]:  # (a few seconds)
        *_, preemptors = scenario(seed)
        for p in preemptors:
            seen = p.replace(tolerations=(Toleration(operator="Exists"),))
            latest = p.replace(tolerations=())
            results = _post_filter_on_both_paths(seed, seen, args, latest=latest)
            if results is not None:
                assert results[1] == results[0], (seed, p.name)
                compared += 1
    assert compared >= 10, compared


def test_node_only_subclass_is_not_screened(monkeypatch):
    """A subclass of an in-tree node-only filter may answer Unschedulable (here TaintToleration with
    its failures made Unschedulable): a node it rejected first is then a potential node although it
    fails that filter, so the dry run must run it again even when it comes first."""
    from fastsched.framework.status import Code, Status
    from fastsched.framework.vectorized import FilterVerdicts
    from fastsched.plugins.tainttoleration.taint_toleration import TaintToleration

    from . import support

    class SoftTaints(TaintToleration):
        def filter(self, state, pod, node_info):
            s = super().filter(state, pod, node_info)
            return None if s is None else Status(Code.UNSCHEDULABLE, *s.reasons())

        def filter_vectorized(self, state, pod, nodes):
            v = super().filter_vectorized(state, pod, nodes)
            return FilterVerdicts(np.where(v.codes != 0, int(Code.UNSCHEDULABLE), 0), v.reason_ids, v.reasons)

    in_tree = support.registry

    def soft_registry():
        reg = in_tree()
        factory = reg["TaintToleration"]
        reg.unregister("TaintToleration")

        def soft(args, handle):
            pl = factory(args, handle)
            pl.__class__ = SoftTaints
            return pl

        reg.register("TaintToleration", soft)
        return reg

    monkeypatch.setattr(support, "registry", soft_registry)

    def soft_taints(s):
        assert type(s.fw.plugin("TaintToleration")) is SoftTaints
    args = DefaultPreemptionArgs(min_candidate_nodes_percentage=100, min_candidate_nodes_absolute=3)
    compared = 0
    for seed in SEEDS[:5]:  # (a few seconds)
        *_, preemptors = scenario(seed)
        for p in preemptors:
            results = _post_filter_on_both_paths(seed, p, args, check=soft_taints)
            if results is not None:
                assert results[1] == results[0], (seed, p.name)
                compared += 1
    assert compared >= 10, compared


@pytest.mark.parametrize("first", ["NodeVolumeLimits", "VolumeBinding", "VolumeZone"])
def test_volume_filter_first_is_not_screened(monkeypatch, first):
    """The volume plugins are node-only in the dry run but not in the screen's sense: NodeVolumeLimits
    answers plain Unschedulable when the pod's CSI driver is not installed on the node (upstream's
    csi.go), so a node the cycle found Unschedulable may have failed it, even with every volume
    plugin before the additive filters. Only the four filters that never answer Unschedulable let
    the dry run skip the node-only verdicts."""
    from fastsched.runtime.nominated import NODE_ONLY, PER_POD

    classes = vectorized._plugin_classes()

    def plugin(name):
        return object.__new__(classes[name])  # the dry run's plan reads the class only

    kind = PER_POD if first == "NodeVolumeLimits" else NODE_ONLY
    filters = [(first, plugin(first), kind)] + [(n, plugin(n), NODE_ONLY) for n in ("NodeName", "NodeAffinity")]
    monkeypatch.setattr(vectorized, "nominated_filters", lambda handle, state: filters)
    plan = vectorized._filters_plan(None, None, None, None)
    assert plan is not None and plan.node_only[0] == first
    assert plan.node_only_first is False
    filters.pop(0)
    assert vectorized._filters_plan(None, None, None, None).node_only_first is True


def test_template_records_read_without_pod_infos():
    """On a fresh table (its pods kept as template records, no PodInfo built yet) the dry run reads
    the pods off their templates and builds PodInfos for the victims read only: the same
    candidates, victims, PDB violations and statuses as the per-node path; a candidate read after
    its node's pods changed is refused, never answered with another pod."""
    seed = 1
    nodes, running, _, pdbs, _, preemptors = scenario(seed)
    running = [q.replace(manifest=None) for q in running]  # (pods with a manifest keep their PodInfo)
    compared = grew = 0
    for p in preemptors:
        p = p.replace(priority=5000)
        fresh = build_snapshot(nodes, running)
        table = fresh.table
        assert not table._pod_infos  # every pod a template record
        vec = Setup(nodes, running, p, pdbs=pdbs, filters=ADDITIVE, pre_filters=pre_filters(ADDITIVE), seed=seed,
                    snapshot=fresh)
        ref = Setup(nodes, running, p, pdbs=pdbs, filters=ADDITIVE, pre_filters=pre_filters(ADDITIVE), seed=seed,
                    snapshot=build_snapshot(nodes, running))
        ref.plugin.vectorized = False
        state = vec.cycle_state()
        views = list(fresh.batch())
        args = (vec.client.list_pdbs(), seed, len(views))
        got = vec.plugin.evaluator.dry_run_preemption(state.clone(), p, views, *args)
        want = ref.plugin.evaluator.dry_run_preemption_per_node(ref.cycle_state(), p, list(ref.snapshot.batch()),
                                                                *args)
        built = len(table._pod_infos)
        assert built < len(running) // 4, built  # not every row's pods (the disrupted PDBs' few)
        if len(got[0]) < 2:
            continue
        first = got[0][0]
        assert built <= len(table._pod_infos) <= built + len(first.victims.pods)
        grew += len(table._pod_infos) > built
        assert candidates_of(got[0]) == candidates_of(want[0]), p.name
        assert statuses_of(got[1]) == statuses_of(want[1]), p.name
        # the victims are the table's own PodInfos' pods (what the eviction and the cache read)
        for c in got[0]:
            row_pods = fresh.get(c.name).pods
            assert all(any(v is pi.pod for pi in row_pods) for v in c.victims.pods)
        compared += 1
        if compared > 1:
            break
        # on another fresh table, a candidate not yet read whose node changed: refused
        other = build_snapshot(nodes, running)
        o = Setup(nodes, running, p, pdbs=pdbs, filters=ADDITIVE, pre_filters=pre_filters(ADDITIVE), seed=seed,
                  snapshot=other)
        again = o.plugin.evaluator.dry_run_preemption(o.cycle_state(), p, list(other.batch()), *args)[0]
        # (a candidate with a victim not built yet: a PDB's disruptedPods check builds some)
        j = next(j for j in range(1, len(again)) if any(
            again._pinfo[e] is None for e in again._victims[again._ptr[j]:again._ptr[j] + again.n_victims[j]]))
        other.add_pod(make_pod(f"late-{p.name}", uid=f"late-{p.name}", node_name=again.names[j],
                               requests={"cpu": "1m"}))
        assert again[0].name == got[0][0].name  # another node's candidate still reads
        with pytest.raises(RuntimeError, match="read after its node's pods changed"):
            again[j]
    assert compared >= 2 and grew, (compared, grew)


def _plan_fields(plan) -> tuple:
    if plan is None:
        return (None,)
    return (plan.check_fit, plan.cols.tolist(), plan.wants.tolist(), plan.check_ports, plan.wanted_ports,
            list(plan.node_only), plan.fit_state, plan.node_only_first, list(plan.per_pod))


def test_plans_kept_by_the_pre_filter_states_values():
    """filters_plan keeps its plans by the PreFilter states' values (each cycle writes new state
    objects): in one framework, every preemptor's plan is the one _filters_plan makes for its own
    state, and two states of equal values share one plan object."""
    seed = 3
    *_, preemptors = scenario(seed)
    s = setup_for(seed, preemptors[0], vectorized_path=True, real_nominator=True)
    table = s.snapshot.table
    plans = []
    # and pods alike but for one value each: a scalar resource, a host port, memory, storage
    alike = [make_pod(f"alike-{i}", cpu="500m", priority=100, **kw) for i, kw in enumerate((
        {}, {"requests": {"nvidia.com/gpu": "1"}}, {"requests": {"nvidia.com/gpu": "2"}},
        {"host_ports": (80,)}, {"host_ports": (443,)}, {"host_ports": (80, 443)},
        {"memory": "1Gi"}, {"requests": {"ephemeral-storage": "1Gi"}}))]
    for p in preemptors + alike + (preemptors + alike)[::-1]:  # (each value met again after the others)
        state = s.cycle_state(p)
        got = vectorized.filters_plan(s.fw, state, table)
        want = vectorized._filters_plan(s.fw, state, table, state.skip_filter_plugins)
        assert _plan_fields(got) == _plan_fields(want)
        again = s.cycle_state(p)  # the same pod's PreFilter once more: new objects, equal values
        assert vectorized.filters_plan(s.fw, again, table) is got
        plans.append(got)
    # the pods' requests and ports differ: so do their plans, each from its own values
    assert len({tuple(map(str, _plan_fields(plan))) for plan in plans}) > 2 + len(alike)


def test_pdb_matches_do_not_outlive_the_pod_columns():
    """The PDBs a signature matches are kept per signature id, and a new table's pod columns (a
    fork's table, another snapshot's) number signatures afresh: with the same PDB objects, the
    matches of the old columns' signature 0 must not answer for the new columns' signature 0."""
    from fastsched.snapshot.table import NodeTable

    runner = vectorized.VectorizedDryRun(plugin=type("P", (), {"_index_pdbs": staticmethod(
        lambda pdbs: type("I", (), {"pdbs": list(pdbs), "by_namespace": {}})())})())
    pdbs = [pdb("guard", {"app": "a"}, allowed=0)]
    first, second = NodeTable(), NodeTable()
    runner.columns(first)
    matches = runner._matches(pdbs)
    matches.by_signature[0] = (0,)  # signature 0 of the first table's columns matched the PDB
    assert runner._matches(pdbs) is matches  # same columns, same PDBs: kept
    runner.columns(first)
    assert runner._matches(pdbs) is matches
    runner.columns(second)
    fresh = runner._matches(pdbs)
    assert fresh is not matches and fresh.by_signature == {}


@pytest.mark.parametrize("ties", [False, True], ids=["", "ties"])
@pytest.mark.parametrize("real_nominator", [True, False], ids=["nominator", "node-by-node"])
def test_fused_window_matches_step_by_step_and_per_node(monkeypatch, real_nominator, ties):
    """``_window_fused`` (one ``window_pass`` kernel) against ``_window``'s steps and the per-node
    path: NodeResourcesFit the only filter and no PDB, where it applies (with the nominated pods as
    arrays; a nominator that answers node by node makes it decline, and the steps run)."""
    fused_windows = []
    original = vectorized.VectorizedDryRun._window_fused

    def counting(this, *a, **k):
        win = original(this, *a, **k)
        fused_windows.append(win is not None)
        return win

    monkeypatch.setattr(vectorized.VectorizedDryRun, "_window_fused", counting)
    compared = with_victims = 0
    for seed in SEEDS:
        *_, preemptors = scenario(seed, ties)
        for p in preemptors:
            ref = setup_for(seed, p, vectorized_path=False, real_nominator=real_nominator, ties=ties,
                            filters=["NodeResourcesFit"])
            runs = {}
            for fused in (True, False):
                monkeypatch.setattr(vectorized.VectorizedDryRun, "fused", fused)
                runs[fused] = setup_for(seed, p, vectorized_path=True, real_nominator=real_nominator, ties=ties,
                                        filters=["NodeResourcesFit"])
            state = ref.cycle_state()
            nodes = list(ref.snapshot.batch())
            n = len(nodes)
            for offset, k in ((0, n), (seed % n, 3), ((7 * seed) % n, 1), (n - 1, 10), (2, 0)):
                want = ref.plugin.evaluator.dry_run_preemption_per_node(state.clone(), p, nodes, [], offset, k)
                got = {}
                for fused, s in runs.items():
                    monkeypatch.setattr(vectorized.VectorizedDryRun, "fused", fused)
                    got[fused] = s.plugin.evaluator.dry_run_preemption(state.clone(), p, nodes, [], offset, k)
                for fused in (True, False):
                    assert candidates_of(got[fused][0]) == candidates_of(want[0]), (seed, p.name, offset, k, fused)
                    assert statuses_of(got[fused][1]) == statuses_of(want[1]), (seed, p.name, offset, k, fused)
                    assert got[fused][2] == want[2]
                cands = got[True][0]
                for a in ("n_victims", "num_violations", "top_priority", "sum_priority", "first_start"):
                    assert getattr(cands, a).tolist() == getattr(got[False][0], a).tolist(), a
                compared += 1
                with_victims += bool(want[0])
    assert with_victims >= compared // 3, (with_victims, compared)
    if real_nominator:
        assert fused_windows and all(fused_windows), "the fused window did not run"
    else:
        assert fused_windows and not any(fused_windows), "a node-by-node nominator must decline the fused window"
