"""The composite group cycle (CompositePodGroup): ``runRootSchedulingAlgorithm`` over a tree,
``compositePodGroupSchedulingPlacementAlgorithm``, the completion of the results, submission.

Transcribed from ``pkg/scheduler/schedule_one_podgroup_test.go`` (v1.37.2):
``TestCPGSchedulingPlacementAlgorithm`` (every row), ``TestCPGSchedulingPlacementAlgorithm_Scoring``
(both rows), ``TestPlacementCycleStateLifecycle_MultiLevel``, ``TestCPGHierarchicalScheduling_ScheduleOnePodGroup``,
``TestCPGHierarchicalScheduling_Internal``, ``TestCPGMinGroupCount_Internal`` and
``TestCPGBasicWithGangChildren_Internal``. Upstream builds the tree and the queued pods by hand and
calls the methods on a test snapshot; here the tree is built the same way, the entity from it
(``QueuedPodGroupInfo.from_tree``), and the Scheduler's methods are called. The gate is not
switchable for users yet: these tests make it switchable for themselves.
"""
from __future__ import annotations

import dataclasses

import pytest

from fastsched import Scheduler
from fastsched.api.compositepodgroup import CompositePodGroup
from fastsched.api.objects import PodSchedulingGroup
from fastsched.api.scheduling import (CompositeGangSchedulingPolicy,
                                      CompositePodGroupSchedulingPolicy, GangSchedulingPolicy, PodGroup,
                                      PodGroupSchedulingPolicy)
from fastsched.features import COMPOSITE_POD_GROUP, KNOWN_GATES, FeatureGates
from fastsched.framework import Code, CycleState, Status
from fastsched.framework.composite import COMPOSITE_POD_GROUP_KEY_TYPE, PodGroupInfo
from fastsched.framework.interface import GeneratePlacementsResult, Placement
from fastsched.framework.podgroups import POD_GROUP_KEY_TYPE, QueuedPodGroupInfo
from fastsched.framework.types import PodInfo, QueuedPodInfo
from fastsched.runtime import Registry
from fastsched.scheduler.schedule_one_podgroup import get_placement_cycle_state, get_pod_group_scheduling_cycle
from fastsched.testing import make_node, make_pod

from .test_schedule_one_podgroup_tas import Ordered  # orderedPlacementPlugin, as there

S, U, E = Code.SUCCESS, Code.UNSCHEDULABLE, Code.ERROR
GATES = {"GenericWorkload": True, "TopologyAwareWorkloadScheduling": True, COMPOSITE_POD_GROUP: True}


@pytest.fixture(autouse=True)
def composite_gate(monkeypatch):
    monkeypatch.setitem(KNOWN_GATES, COMPOSITE_POD_GROUP,
                        dataclasses.replace(KNOWN_GATES[COMPOSITE_POD_GROUP], switchable=True))


# -- objects -----------------------------------------------------------------------------------------
def cpg_obj(name, parent=None, min_group_count=None, ts=None):
    """``st.MakeCompositePodGroup()`` (basic unless a minGroupCount is given)."""
    policy = CompositePodGroupSchedulingPolicy(basic=True) if min_group_count is None else \
        CompositePodGroupSchedulingPolicy(gang=CompositeGangSchedulingPolicy(min_group_count))
    return CompositePodGroup(name=name, namespace="default", parent_composite_pod_group_name=parent,
                             scheduling_policy=policy, creation_timestamp=ts)


def pg_obj(name, parent=None, min_count=None, ts=None):
    policy = PodGroupSchedulingPolicy(basic=True) if min_count is None else \
        PodGroupSchedulingPolicy(gang=GangSchedulingPolicy(min_count))
    return PodGroup(name=name, namespace="default", parent_composite_pod_group_name=parent,
                    scheduling_policy=policy, creation_timestamp=ts)


def pod(name, group, priority=None):
    return make_pod(name, cpu="100m", priority=priority).replace(
        uid=name, scheduling_group=PodSchedulingGroup(group), scheduler_name="test-scheduler")


def leaf(pg):
    return PodGroupInfo(pg.namespace, pg.name, POD_GROUP_KEY_TYPE, pod_group=pg)


def node(c, children):
    return PodGroupInfo(c.namespace, c.name, COMPOSITE_POD_GROUP_KEY_TYPE, composite_pod_group=c,
                        children=list(children))


def entity(tree, pods):
    """The QueuedPodGroupInfo of a hand-built tree with ``pods`` queued (``QueuedPodInfos``)."""
    e = QueuedPodGroupInfo.from_tree(tree)
    for p in pods:
        e.add_pod(QueuedPodInfo(PodInfo(p)))
    return e


def key(pgi):
    return f"{pgi.type}/{pgi.namespace}/{pgi.name}"


# -- fakes (fakePlacementPlugin, orderedPlacementPlugin, fakePlacementFeasiblePlugin) ------------------
class FakePlacementPlugin:
    """Filter by node name (``podPerNode``: a node reserved by Reserve rejects the next pods),
    PlacementGenerate and PlacementScore from tables by group key."""

    def __init__(self, name, *, placements=None, generate_status=None, scores=None, score_status=None,
                 filter_status=None, pod_per_node=False):
        self._name = name
        self.placements = placements or {}
        self.generate_status = generate_status or {}
        self.scores = scores or {}
        self.score_status = score_status or {}
        self.filter_status = filter_status or {}
        self.pod_per_node = pod_per_node
        self.reserved: set[str] = set()

    def name(self):
        return self._name

    def filter(self, state, pod, node_info):
        name = node_info.node().name
        st = self.filter_status.get(name)
        if st is not None:
            return Status(st.code(), *st.reasons())
        if name in self.reserved:
            return Status(U, f"{name} is already reserved")
        return None

    def reserve(self, state, pod, node_name):
        if self.pod_per_node:
            self.reserved.add(node_name)
        return None

    def unreserve(self, state, pod, node_name):
        if self.pod_per_node:
            self.reserved.discard(node_name)

    def generate_placements(self, state, pod_group, parent_placement):
        parent = {n.node().name: n for n in parent_placement.nodes}
        out = []
        for name, node_names in self.placements.get(key(pod_group), {}).items():
            nodes = [parent[n] for n in node_names if n in parent]
            if nodes:
                out.append(Placement(name, nodes))
        return GeneratePlacementsResult(out), self.generate_status.get(key(pod_group))

    def score_placement(self, state, pod_group, assignments):
        return (self.scores.get(key(pod_group), {}).get(assignments.name, 0),
                self.score_status.get(key(pod_group), {}).get(assignments.name))

    def placement_score_extensions(self):
        return None


class FakePlacementFeasible:
    """fakePlacementFeasiblePlugin: codes per placement (the order placements are first seen in)
    and per evaluated pod or child (a CompositePodGroup's total is its number of children)."""

    def __init__(self, codes):
        self.codes = codes
        self.count = 0

    def name(self):
        return "GangScheduling"

    def placement_feasible(self, state, pod_group_info, progress):
        if not self.codes:
            return None
        total = len(pod_group_info.children) if pod_group_info.type == COMPOSITE_POD_GROUP_KEY_TYPE else \
            len(pod_group_info.unscheduled_pods())
        evaluated = total - progress.remaining
        if evaluated == 0:
            self.count += 1
        index = state.get("fakePlacementFeasiblePluginDataKey")
        if index is None:
            index = self.count - 1
            state.write("fakePlacementFeasiblePluginDataKey", index)
        if index < len(self.codes):
            codes = self.codes[index]
            if not codes:
                return None
            if evaluated < len(codes):
                return None if codes[evaluated] == S else Status(codes[evaluated], "injected placementFeasible status")
        return None


def _config(generate=None, scores=(), filters=(), reserves=(), extra=None):
    plugins = {"multiPoint": {"disabled": [{"name": "*"}],
                              "enabled": [{"name": "PrioritySort"}, {"name": "DefaultBinder"}]},
               "filter": {"enabled": [{"name": f} for f in filters]},
               "reserve": {"enabled": [{"name": r} for r in reserves]},
               "placementScore": {"enabled": [{"name": n, "weight": w} for n, w in scores]}}
    if generate is not None:
        plugins["placementGenerate"] = {"enabled": [{"name": generate}]}
    plugins.update(extra or {})
    return {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
            "profiles": [{"schedulerName": "test-scheduler", "plugins": plugins}]}


def _scheduler(cfg, plugins, nodes=4, gates=GATES, cpu="4"):
    reg = Registry({p.name(): (lambda p: lambda a, h: p)(p) for p in plugins})
    s = Scheduler(cfg, registry=reg, feature_gates=FeatureGates(dict(gates)))
    s.add_nodes([make_node(f"node{i + 1}", cpu=cpu) for i in range(nodes)])
    return s


# -- TestCPGSchedulingPlacementAlgorithm ---------------------------------------------------------------
CPG, PG1, PG2 = "compositepodgroup/default/cpg", "podgroup/default/pg1", "podgroup/default/pg2"
DEFAULT_PLACEMENTS = {
    CPG: {"placement1": ["node1", "node2"], "placement2": ["node3", "node4"]},
    PG1: {"placement1": ["node1"], "placement2": ["node2"], "placement3": ["node3"], "placement4": ["node4"]},
    PG2: {"placement1": ["node1"], "placement2": ["node2"], "placement3": ["node3"], "placement4": ["node4"]},
}
OK_1 = ("p1", S, None)  # (pod, code, message); a success is on one node of one evaluated
# name: (plugin kwargs, placementFeasible codes, {group key: (status (code, message) or None,
#        [(pod, code, host or message)])})
CPG_PLACEMENT_ALGORITHM = {
    "respects higher score of parent placement": (
        dict(scores={CPG: {"placement1": 1, "placement2": 2},
                     PG1: {"placement1": 5, "placement2": 5, "placement3": 1, "placement4": 2},
                     PG2: {"placement1": 5, "placement2": 5, "placement3": 2, "placement4": 1}}),
        None,
        {CPG: (None, []), PG1: (None, [("p1", S, "node4")]), PG2: (None, [("p2", S, "node3")])}),
    "discards infeasible placements": (
        dict(scores={CPG: {"placement1": 2, "placement2": 1},
                     PG1: {"placement1": 5, "placement2": 5, "placement3": 1, "placement4": 2},
                     PG2: {"placement1": 5, "placement2": 5, "placement3": 2, "placement4": 1}}),
        [[U, U, U]],
        {CPG: (None, []), PG1: (None, [("p1", S, "node4")]), PG2: (None, [("p2", S, "node3")])}),
    "returns unschedulable if no pods got scheduled": (
        dict(scores={CPG: {"placement1": 2, "placement2": 1},
                     PG1: {"placement1": 5, "placement2": 1, "placement3": 1, "placement4": 1},
                     PG2: {"placement1": 5, "placement2": 1, "placement3": 1, "placement4": 1}},
             filter_status={f"node{i}": Status(U, f"node{i} rejected") for i in range(1, 5)}),
        None,
        {CPG: ((U, "pod group is unschedulable"), []),
         PG1: (None, [("p1", U, "0/1 nodes are available: 1 node1 rejected.")]),
         PG2: (None, [("p2", U, "0/1 nodes are available: 1 node1 rejected.")])}),
    "respects pods already scheduled in sibling pod groups": (
        dict(pod_per_node=True,
             scores={CPG: {"placement1": 1}, PG1: {"placement1": 2, "placement2": 1},
                     PG2: {"placement1": 2, "placement2": 1}}),
        None,
        {CPG: (None, []), PG1: (None, [("p1", S, "node1")]),
         PG2: (None, [("p2", U, "0/1 nodes are available: 1 node1 is already reserved.")])}),
    "when generate plugin fails at CPG, returns error": (
        dict(generate_status={CPG: Status.from_error(Exception("injected error"))}), None,
        {CPG: ((E, "injected error"), [])}),
    "when generate plugin fails at PG, returns error": (
        dict(generate_status={PG2: Status.from_error(Exception("injected error"))}), None,
        {CPG: ((E, "composite pod group evaluation failed due to child error: injected error"), [])}),
}


def _two_leaf_tree():
    cpg = cpg_obj("cpg")
    pg1 = pg_obj("pg1", "cpg", ts=1.0)  # pg1 is ordered before pg2
    pg2 = pg_obj("pg2", "cpg", ts=2.0)
    p1, p2 = pod("p1", "pg1"), pod("p2", "pg2")
    return cpg, pg1, pg2, p1, p2, node(cpg, [leaf(pg1), leaf(pg2)])


def _got(results):
    out = {}
    for k, r in results.items():
        st = None if r.status is None or r.status.is_success() else \
            (r.status.code(), str(r.status.as_error()) if r.status.code() == E else r.status.message())
        pods = []
        for pr in r.pod_results:
            if pr.status is None or pr.status.is_success():
                assert (pr.result.evaluated_nodes, pr.result.feasible_nodes) == (1, 1)
                pods.append((pr.pinfo.pod.name, S, pr.node_name))
            else:
                assert pr.node_name == ""
                pods.append((pr.pinfo.pod.name, pr.status.code(), pr.status.message()))
        out[str(k)] = (st, pods)
    return out


@pytest.mark.parametrize("name", list(CPG_PLACEMENT_ALGORITHM))
def test_cpg_scheduling_placement_algorithm(name):
    kwargs, codes, want = CPG_PLACEMENT_ALGORITHM[name]
    plugin = FakePlacementPlugin("FakePlacementPlugin", placements=DEFAULT_PLACEMENTS, **kwargs)
    ordered = Ordered(plugin)
    s = _scheduler(_config(ordered.name(), [(plugin.name(), 1)], filters=[plugin.name()], reserves=[plugin.name()]),
                   [plugin, ordered])
    fw = s.profiles["test-scheduler"]
    fw.plugins_map["GangScheduling"] = FakePlacementFeasible(codes or [])
    cpg, pg1, pg2, p1, p2, tree = _two_leaf_tree()
    s.cache.add_composite_pod_group(cpg)
    for g in (pg1, pg2):
        s.cache.add_pod_group(g)
    for p in (p1, p2):
        s.cache.add_pod_group_member(p)
    e = entity(tree, [p1, p2])
    results = s._run_composite_root_algorithm(fw, CycleState(), e)
    assert _got(results) == want
    # every assumption, reservation and placement is gone
    assert s.cache.snapshot.get_placement() is None
    assert not any(s.cache.is_assumed_pod(p) for p in (p1, p2)) and not plugin.reserved


# -- TestCPGSchedulingPlacementAlgorithm_Scoring ------------------------------------------------------
_CHILD_SCORES = {PG1: {"placement1": 10, "placement2": 5, "placement3": 10, "placement4": 5},
                 PG2: {"placement1": 5, "placement2": 10, "placement3": 5, "placement4": 10}}
CPG_SCORING = {
    "respects higher score of root placement1": (
        [(1, {CPG: {"placement1": 50, "placement2": 75}, **_CHILD_SCORES}),
         (2, {CPG: {"placement1": 25, "placement2": 10}, **_CHILD_SCORES})], {"p1": "node1", "p2": "node2"}),
    "respects higher score of root placement2": (
        [(1, {CPG: {"placement1": 75, "placement2": 50}, **_CHILD_SCORES}),
         (2, {CPG: {"placement1": 10, "placement2": 25}, **_CHILD_SCORES})], {"p1": "node3", "p2": "node4"}),
}


@pytest.mark.parametrize("name", list(CPG_SCORING))
def test_cpg_scheduling_placement_algorithm_scoring(name):
    data, hosts = CPG_SCORING[name]
    generator = FakePlacementPlugin("FakeGeneratorPlugin", placements=DEFAULT_PLACEMENTS)
    ordered = Ordered(generator)
    scorers = [FakePlacementPlugin(f"FakeScorePlugin[{i}]", scores=scores) for i, (_, scores) in enumerate(data)]
    cfg = _config(ordered.name(), [(p.name(), w) for p, (w, _) in zip(scorers, data)], filters=[generator.name()],
                  extra={"permit": {"enabled": [{"name": "GangScheduling"}]}})
    s = _scheduler(cfg, [generator, ordered, *scorers])
    fw = s.profiles["test-scheduler"]
    assert type(fw.plugins_map["GangScheduling"]).__name__ == "CompositeGangScheduling"  # new() reads the gate
    # upstream's groups here have no parent: the tree is the test's own
    cpg, pg1, pg2 = cpg_obj("cpg"), pg_obj("pg1"), pg_obj("pg2")
    p1, p2 = pod("p1", "pg1"), pod("p2", "pg2")
    s.cache.add_composite_pod_group(cpg)
    for g in (pg1, pg2):
        s.cache.add_pod_group(g)
    for p in (p1, p2):
        s.cache.add_pod_group_member(p)
    e = entity(node(cpg, [leaf(pg1), leaf(pg2)]), [p1, p2])
    results = s._run_composite_root_algorithm(fw, CycleState(), e)
    got = {pr.pinfo.pod.name: pr.node_name for r in results.values() for pr in r.pod_results}
    assert got == hosts


# -- TestPlacementCycleStateLifecycle_MultiLevel --------------------------------------------------------
HIERARCHY_KEY = "hierarchyKey"


def _from_placement(state, out):
    """collectHierarchyFromPlacementCycleState"""
    if state is None:
        return
    _from_group(get_pod_group_scheduling_cycle(state), out)
    out.append(state.read(HIERARCHY_KEY))


def _from_group(state, out):
    """collectHierarchyFromPodGroupCycleState"""
    if state is None:
        return
    _from_placement(get_placement_cycle_state(state), out)
    out.append(state.read(HIERARCHY_KEY))


class MultiLevelTracker:
    """multiLevelPlacementStateTracker: each point records the chain of ids the cycle states above
    it hold (group keys written at PlacementGenerate, placement numbers at PlacementFeasible)."""

    def __init__(self, placements):
        self.placements = placements
        self.index = 0
        self.generate, self.feasible, self.score, self.filters = [], [], [], []

    def name(self):
        return "MultiLevelTracker"  # (upstream's is GangScheduling: it is put in that place below)

    def filter(self, state, pod, node_info):
        out: list = []
        _from_placement(get_placement_cycle_state(state), out)
        self.filters.append(out)
        return None

    def placement_feasible(self, state, pod_group_info, progress):
        if progress.scheduled == 0:
            if pod_group_info.pod_group is not None:
                out: list = []
                _from_group(get_pod_group_scheduling_cycle(state), out)
                self.feasible.append(out)
            self.index += 1
            state.write(HIERARCHY_KEY, str(self.index))
        return None

    def score_placement(self, state, pod_group, assignments):
        if pod_group.pod_group is not None:
            out: list = []
            _from_placement(state, out)
            self.score.append(out)
        return 0, None

    def placement_score_extensions(self):
        return None

    def generate_placements(self, state, pod_group, parent_placement):
        if pod_group.pod_group is not None:
            out: list = []
            _from_placement(get_placement_cycle_state(state), out)
            self.generate.append(out)
        state.write(HIERARCHY_KEY, key(pod_group))
        return GeneratePlacementsResult([Placement(n, list(parent_placement.nodes))
                                         for n in self.placements[key(pod_group)]]), None


def test_placement_cycle_state_lifecycle_multi_level():
    root_c, mid_c, pg = cpg_obj("rootcpg"), cpg_obj("midcpg", "rootcpg"), pg_obj("pg", "midcpg")
    p1 = pod("p1", "pg")
    two = ["placement1", "placement2"]
    tracker = MultiLevelTracker({"compositepodgroup/default/rootcpg": two, "compositepodgroup/default/midcpg": two,
                                 "podgroup/default/pg": two})
    s = _scheduler(_config(tracker.name(), [(tracker.name(), 1)], filters=[tracker.name()]), [tracker], nodes=1)
    fw = s.profiles["test-scheduler"]
    fw.plugins_map["GangScheduling"] = tracker
    s.cache.add_composite_pod_group(root_c)
    s.cache.add_composite_pod_group(mid_c)
    s.cache.add_pod_group(pg)
    e = entity(node(root_c, [node(mid_c, [leaf(pg)])]), [p1])
    results = s._run_composite_root_algorithm(fw, CycleState(), e)
    assert results[e.tree.key].status.is_success()
    r, m, g = "compositepodgroup//rootcpg", "compositepodgroup//midcpg", "podgroup//pg"
    r, m, g = (x.replace("//", "/default/") for x in (r, m, g))
    leaf_want = [[r, a, m, b, g, c] for a, b, c in
                 [("1", "2", "3"), ("1", "2", "4"), ("1", "5", "6"), ("1", "5", "7"),
                  ("8", "9", "10"), ("8", "9", "11"), ("8", "12", "13"), ("8", "12", "14")]]
    feasible_want = [[r, a, m, b, g] for a, b in
                     [("1", "2"), ("1", "2"), ("1", "5"), ("1", "5"), ("8", "9"), ("8", "9"), ("8", "12"), ("8", "12")]]
    generate_want = [[r, a, m, b] for a, b in [("1", "2"), ("1", "5"), ("8", "9"), ("8", "12")]]
    assert tracker.generate == generate_want
    assert tracker.feasible == feasible_want
    assert tracker.filters == leaf_want
    assert sorted(tracker.score, key="|".join) == sorted(leaf_want, key="|".join)


# -- TestCPGHierarchicalScheduling_ScheduleOnePodGroup ------------------------------------------------
def test_cpg_hierarchical_scheduling_recursive_algorithm():
    """cpg-root (gang, minGroupCount 2) over pg1..pg3 (minCount 1): pg3's PlacementFeasible is
    Unschedulable before its pod; two children suffice, p3 has no result."""
    fake = FakePlacementFeasible([[S], [S, S], [S, S, S], [U]])
    s = _scheduler(_config(), [], nodes=1)
    fw = s.profiles["test-scheduler"]
    fw.plugins_map["GangScheduling"] = fake
    root_c = cpg_obj("cpg-root", min_group_count=2)
    pgs = [pg_obj(f"pg{i}", "cpg-root", min_count=1, ts=float(i)) for i in (1, 2, 3)]
    pods = [pod(f"p{i}", f"pg{i}") for i in (1, 2, 3)]
    s.cache.add_composite_pod_group(root_c)
    for g in pgs:
        s.cache.add_pod_group(g)
    e = entity(node(root_c, [leaf(g) for g in pgs]), pods)
    for lf in e.tree.leaves():
        lf.members = e.leaf_members(lf.name)
    res: dict = {}
    result, reverts = s._recursive_algorithm(fw, CycleState(), e, e.tree, res)
    try:
        assert result.status.is_success()
        scheduled = {pr.pinfo.pod.name for r in res.values() if r.pod_group_info.composite_pod_group is None
                     and r.status.is_success() for pr in r.pod_results if pr.status is None or pr.status.is_success()}
        assert scheduled == {"p1", "p2"}
        assert res[e.tree.children[2].key].pod_results == []  # stopped before its pod
    finally:
        for revert in reversed(reverts):
            revert()


# -- the *_Internal tests: podGroupCycle through the Scheduler ------------------------------------------
class FilterByPod:
    """fakePodGroupPlugin's Filter: a status per pod name."""

    def __init__(self, statuses):
        self.statuses = statuses

    def name(self):
        return "FakePodGroupPlugin"

    def filter(self, state, pod, node_info):
        st = self.statuses.get(pod.name)
        return None if st is None else Status(st.code(), *st.reasons())


def _cpg_doc(name, parent=None, min_group_count=0):
    policy = {"gang": {"minGroupCount": min_group_count}} if min_group_count else {"basic": {}}
    spec: dict = {"workloadRef": {"workloadName": "w", "templateName": name}, "schedulingPolicy": policy}
    if parent is not None:
        spec["parentCompositePodGroupName"] = parent
    return {"apiVersion": "scheduling.k8s.io/v1alpha3", "kind": "CompositePodGroup",
            "metadata": {"name": name, "namespace": "default"}, "spec": spec}


def _pg_doc(name, parent, min_count=0):
    policy = {"gang": {"minCount": min_count}} if min_count else {"basic": {}}
    return {"apiVersion": "scheduling.k8s.io/v1beta1", "kind": "PodGroup",
            "metadata": {"name": name, "namespace": "default"},
            "spec": {"parentCompositePodGroupName": parent, "workloadRef": {"workloadName": "w", "templateName": name},
                     "schedulingPolicy": policy}}


def _pod_docs(group, count=3):
    return [{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": f"{group}-pod-{i}", "namespace": "default"},
             "spec": {"schedulerName": "test-scheduler", "schedulingGroup": {"podGroupName": group},
                      "containers": [{"name": "c", "image": "i", "resources": {"requests": {"cpu": "1"}}}]}}
            for i in range(count)]


def _run_tree(cpgs, pgs, failing):
    """A Scheduler with the gate, GangScheduling (new(): the hierarchy's) and the filter; the tree's
    objects and 3 pods per PodGroup added; run until nothing is left to do. The pods' outcomes."""
    filt = FilterByPod({f"{g}-pod-{i}": Status(U, "insufficient cpu") for g in failing for i in range(3)})
    cfg = _config(filters=[filt.name()], extra={"multiPoint": {"disabled": [{"name": "*"}], "enabled": [
        {"name": "PrioritySort"}, {"name": "DefaultBinder"}, {"name": "GangScheduling"}]}})
    s = _scheduler(cfg, [filt], nodes=1, cpu="20")
    docs = [_cpg_doc(*c) for c in cpgs] + [_pg_doc(*g) for g in pgs]
    for g in pgs:
        docs += _pod_docs(g[0])
    s.add(docs)
    results = {r.pod.name: r for r in s.run(until=s.clock.now() + 10)}
    return s, {name: r.status for name, r in results.items()}


def _assert_outcomes(outcomes, scheduled, failed):
    from fastsched.scheduler.result import SCHEDULED
    for g in scheduled:
        for i in range(3):
            assert outcomes[f"{g}-pod-{i}"] == SCHEDULED, (g, outcomes)
    for g in failed:
        for i in range(3):
            assert outcomes.get(f"{g}-pod-{i}") != SCHEDULED, (g, outcomes)


def test_cpg_hierarchical_scheduling_internal():
    """cpg-root (gang 2) over cpg-sub1 (gang 2: pg1, pg2, pg3 failing), cpg-sub2 (basic: pg4
    basic, pg5) and cpg-sub3 (gang 2: pg6, pg7 failing): sub3 fails, so pg6, which fitted, fails
    with it; sub1 and sub2 bind."""
    s, outcomes = _run_tree(
        [("cpg-root", None, 2), ("cpg-sub1", "cpg-root", 2), ("cpg-sub2", "cpg-root", 0),
         ("cpg-sub3", "cpg-root", 2)],
        [("pg1", "cpg-sub1", 3), ("pg2", "cpg-sub1", 3), ("pg3", "cpg-sub1", 3), ("pg4", "cpg-sub2", 0),
         ("pg5", "cpg-sub2", 3), ("pg6", "cpg-sub3", 3), ("pg7", "cpg-sub3", 3)],
        failing=("pg3", "pg7"))
    _assert_outcomes(outcomes, scheduled=("pg1", "pg2", "pg4", "pg5"), failed=("pg3", "pg6", "pg7"))
    # each leaf's condition: pg6 reads its parent's failure
    conds = {g: s.cluster.get_object("PodGroup", g, "default").conditions for g in ("pg1", "pg6", "pg7")}
    assert [(c["status"], c["reason"]) for c in conds["pg1"]] == [("True", "Scheduled")]
    assert [(c["status"], c["reason"]) for c in conds["pg6"]] == [("False", "Unschedulable")]
    assert [(c["status"], c["reason"]) for c in conds["pg7"]] == [("False", "Unschedulable")]


def test_cpg_min_group_count_internal():
    """cpg-root (gang 2) over pg1, pg2, pg3 (minCount 3; pg3's pods do not fit)."""
    _, outcomes = _run_tree([("cpg-root", None, 2)],
                            [("pg1", "cpg-root", 3), ("pg2", "cpg-root", 3), ("pg3", "cpg-root", 3)],
                            failing=("pg3",))
    _assert_outcomes(outcomes, scheduled=("pg1", "pg2"), failed=("pg3",))


def test_cpg_basic_with_gang_children_internal():
    """cpg-root (basic) over pg1 (fits) and pg2 (does not): pg1 binds alone."""
    _, outcomes = _run_tree([("cpg-root", None, 0)], [("pg1", "cpg-root", 3), ("pg2", "cpg-root", 3)],
                            failing=("pg2",))
    _assert_outcomes(outcomes, scheduled=("pg1",), failed=("pg2",))


def test_sibling_after_a_nested_composite_sees_its_best_placement():
    """Not an upstream row: the nested CompositePodGroup's best subtree is assumed again
    (``assumeSubtreeWithRevert``) before its parent's next child runs: pg2, after cpg-mid, finds
    node1 reserved by pg1's pod (the tables above have no group after a nested one)."""
    placements = {"compositepodgroup/default/root": {"placement1": ["node1", "node2"]},
                  "compositepodgroup/default/mid": {"placement1": ["node1"]},
                  PG1: {"placement1": ["node1"]}, PG2: {"placement1": ["node1"]}}
    plugin = FakePlacementPlugin("FakePlacementPlugin", placements=placements, pod_per_node=True)
    s = _scheduler(_config(plugin.name(), [(plugin.name(), 1)], filters=[plugin.name()], reserves=[plugin.name()]),
                   [plugin])
    fw = s.profiles["test-scheduler"]
    root_c, mid_c = cpg_obj("root"), cpg_obj("mid", "root", ts=1.0)
    pg1, pg2 = pg_obj("pg1", "mid"), pg_obj("pg2", "root", ts=2.0)
    p1, p2 = pod("p1", "pg1"), pod("p2", "pg2")
    for c in (root_c, mid_c):
        s.cache.add_composite_pod_group(c)
    for g in (pg1, pg2):
        s.cache.add_pod_group(g)
    e = entity(node(root_c, [node(mid_c, [leaf(pg1)]), leaf(pg2)]), [p1, p2])
    results = s._run_composite_root_algorithm(fw, CycleState(), e)
    got = _got(results)
    assert got[PG1] == (None, [("p1", S, "node1")])
    assert got[PG2] == (None, [("p2", U, "0/1 nodes are available: 1 node1 is already reserved.")])
    assert not plugin.reserved


def test_schedule_one_pod_group_reconciles_the_tree_and_requeues_on_a_change_of_shape():
    """``scheduleOnePodGroup``: a popped tree whose root has another child in the snapshot fails
    every member with the reconciliation's error, writes no condition (the root's objects are
    dropped before the failure handler) and requeues the entity."""
    cfg = _config(extra={"multiPoint": {"disabled": [{"name": "*"}], "enabled": [
        {"name": "PrioritySort"}, {"name": "DefaultBinder"}, {"name": "GangScheduling"}]}})
    s = _scheduler(cfg, [], nodes=1, cpu="20")
    s.add([_cpg_doc("root", None, 2), _pg_doc("pg1", "root", 1), _pg_doc("pg2", "root", 1),
           *_pod_docs("pg1", 1), *_pod_docs("pg2", 1)])
    e = s.queue.pop()
    assert e.is_composite and len(e.tree.children) == 2
    s.cache.add_pod_group(pg_obj("pg3", "root"))  # the snapshot sees a third child the queue has not
    s.schedule_one_pod_group(e)
    want = "different number of children in composite pod group between snapshot (3) and queued entity (2)"
    for name in ("pg1-pod-0", "pg2-pod-0"):
        res = next(r for r in s.results.values() if r.pod.name == name)
        assert (res.status, res.message) == ("Error", want)
        assert not s.queue.in_flight(res.pod.uid)  # the attempt is over, the members requeued
    for g in ("pg1", "pg2"):
        assert s.cluster.get_object("PodGroup", g, "default").conditions == ()
    assert e.composite_pod_group is None and e.tree.composite_pod_group is None


class TreePostFilter:
    """A PodGroupPostFilter plugin that reruns the tree's algorithm and nominates pg1-pod-0."""

    def __init__(self, status):
        self.status = status
        self.rerun = None

    def name(self):
        return "TreePostFilter"

    def pod_group_post_filter(self, state, pg_info, scheduling_func):
        self.rerun = scheduling_func()
        from fastsched.framework.types import NominatingInfo, NominatingMode

        class Result:
            nominating_infos = {("default", "pg1-pod-0"): NominatingInfo("node1", NominatingMode.OVERRIDE)}
        return Result(), self.status


@pytest.mark.parametrize("post_filter_code", [S, E])
def test_post_filter_result_over_the_tree(post_filter_code):
    """Not an upstream row (``applyPodGroupPostFilterResult`` over a tree): cpg-root (gang 2)
    fails as pg2 does not fit; the PodGroupPostFilter's rerun proposes pg1's pods; its Success
    marks every group waiting on preemption (pg1-pod-0 nominated) and appends its text to every
    group's status, its Error replaces them."""
    filt = FilterByPod({f"pg2-pod-{i}": Status(U, "insufficient cpu") for i in range(3)})
    cfg = _config(filters=[filt.name()], extra={"multiPoint": {"disabled": [{"name": "*"}], "enabled": [
        {"name": "PrioritySort"}, {"name": "DefaultBinder"}, {"name": "GangScheduling"}]}})
    s = _scheduler(cfg, [filt], nodes=1, cpu="20")
    pf = TreePostFilter(Status(Code.SUCCESS) if post_filter_code == S else Status(E, "boom"))
    s.profiles["test-scheduler"].pod_group_post_filter_plugins = [pf]
    docs = [_cpg_doc("cpg-root", None, 2), _pg_doc("pg1", "cpg-root", 3), _pg_doc("pg2", "cpg-root", 3),
            *_pod_docs("pg1"), *_pod_docs("pg2")]
    s.add(docs)
    results = {r.pod.name: r for r in s.run(until=s.clock.now(), max_attempts=1)}
    proposed, rerun_status = pf.rerun
    assert sorted(a.pinfo.pod.name for a in proposed) == ["pg1-pod-0", "pg1-pod-1", "pg1-pod-2"]
    assert rerun_status.code() == U
    cond = {g: s.cluster.get_object("PodGroup", g, "default").conditions[0] for g in ("pg1", "pg2")}
    if post_filter_code == S:
        assert s.cluster.pods[results["pg1-pod-0"].pod.uid].nominated_node_name == "node1"
        assert s.metrics.pod_group_attempts["waiting_on_preemption"] == 1  # the root's result
        assert all((c["reason"], c["status"]) == ("Unschedulable", "False") for c in cond.values())
        # pg1 succeeded and was invalidated with the root's status object itself: the Success's
        # empty text is appended to it once for the root and once for pg1 (upstream's AppendReason
        # on a shared *Status), to pg2's own once
        assert cond["pg1"]["message"] == ("pod group is unschedulable, 0/1 placements are available, first placement "
                                          "status: minCount (2) cannot be satisfied: 1 scheduled, 0 remaining, , ")
        assert cond["pg2"]["message"].endswith("remaining, ") and not cond["pg2"]["message"].endswith(", , ")
    else:
        assert all((c["reason"], c["message"]) == ("SchedulerError", 'error in "TreePostFilter" PodGroupPostFilter '
                                                   'plugins: boom') for c in cond.values())
    assert all(r.status != "Scheduled" for r in results.values())
