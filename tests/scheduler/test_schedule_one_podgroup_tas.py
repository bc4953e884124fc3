"""The pod group cycle with TopologyAwareWorkloadScheduling: ``podGroupSchedulingPlacementAlgorithm``.

Transcribed from ``pkg/scheduler/schedule_one_podgroup_test.go`` (v1.37.2, CompositePodGroup off):
``TestPodGroupSchedulingPlacementAlgorithm`` (its placement metrics are not modelled),
``TestPodGroupSchedulingPlacementAlgorithm_Scoring`` and ``TestPlacementCycleStateLifecycle``'s
PodGroup case; then the default TAS profile (TopologyPlacementGenerator, PodGroupPodsCount,
NodeResourcesFit's ScorePlacement) through ``Scheduler.run()``.
"""
from __future__ import annotations

import pytest

from fastsched import Scheduler
from fastsched.api.objects import PodSchedulingGroup
from fastsched.api.scheduling import (GangSchedulingPolicy, PodGroup, PodGroupSchedulingConstraints,
                                      PodGroupSchedulingPolicy, TopologyConstraint)
from fastsched.config.defaults import default_plugin_list
from fastsched.features import FeatureGateError, FeatureGates
from fastsched.framework import Code, CycleState, Status
from fastsched.framework.interface import GeneratePlacementsResult, Placement
from fastsched.framework.podgroups import QueuedPodGroupInfo
from fastsched.framework.types import PodInfo, QueuedPodInfo
from fastsched.runtime import Registry
from fastsched.scheduler.result import SCHEDULED, UNSCHEDULABLE
from fastsched.scheduler.schedule_one_podgroup import ERR_POD_GROUP_UNSCHEDULABLE, POD_GROUP_CYCLE_KEY
from fastsched.testing import make_node, make_pod

TAS = {"GenericWorkload": True, "TopologyAwareWorkloadScheduling": True}
S, U, W, E = Code.SUCCESS, Code.UNSCHEDULABLE, Code.WAIT, Code.ERROR


def tas_gates() -> FeatureGates:
    return FeatureGates(dict(TAS))


def member(name, group="pg", *, cpu="100m", scheduler="test-scheduler"):
    return make_pod(name, cpu=cpu).replace(uid=name, scheduling_group=PodSchedulingGroup(group),
                                           scheduler_name=scheduler)


def info(pg: PodGroup, pods) -> QueuedPodGroupInfo:
    entity = QueuedPodGroupInfo(pg)
    for pod in pods:
        entity.add_pod(QueuedPodInfo(PodInfo(pod)))
    return entity


# -- fakes (fakePlacementPlugin, orderedPlacementPlugin, fakePlacementFeasiblePlugin) ----------------
class FakePlacementPlugin:
    """Filter by node name, PlacementGenerate from a table (nodes of the parent placement only, empty
    placements dropped), PlacementScore from a table."""

    def __init__(self, name, *, filter_status=None, placements=None, generate_status=None, scores=None,
                 score_status=None):
        self._name = name
        self.filter_status = filter_status or {}
        self.placements = placements or {}
        self.generate_status = generate_status
        self.scores = scores or {}
        self.score_status = score_status or {}

    def name(self):
        return self._name

    def filter(self, state, pod, node_info):
        st = self.filter_status.get(node_info.node().name)
        return None if st is None else Status(st.code(), *st.reasons())

    def generate_placements(self, state, pod_group, parent_placement):
        parent = {n.node().name: n for n in parent_placement.nodes}
        out = []
        for name, node_names in self.placements.items():
            nodes = [parent[n] for n in node_names if n in parent]
            if nodes:
                out.append(Placement(name, nodes))
        return GeneratePlacementsResult(out), self.generate_status

    def score_placement(self, state, pod_group, assignments):
        return self.scores.get(assignments.name, 0), self.score_status.get(assignments.name)

    def placement_score_extensions(self):
        return None


class Ordered:
    """orderedPlacementPlugin: the wrapped generator's placements sorted by name."""

    def __init__(self, inner):
        self.inner = inner

    def name(self):
        return self.inner.name() + "_Ordered"

    def generate_placements(self, state, pod_group, parent_placement):
        result, st = self.inner.generate_placements(state, pod_group, parent_placement)
        if (st is None or st.is_success()) and result is not None:
            result.placements.sort(key=lambda p: p.name)
        return result, st


class FakePlacementFeasible:
    """fakePlacementFeasiblePlugin: codes per placement (in evaluation order) and per evaluated pod."""

    def __init__(self, codes):
        self.codes = codes
        self.count = 0

    def name(self):
        return "GangScheduling"

    def placement_feasible(self, state, pod_group_info, progress):
        if not self.codes:
            return None
        evaluated = len(pod_group_info.unscheduled_pods()) - progress.remaining
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


def _config(generate, scores, filters=("FakePlacementPlugin",)):
    plugins = {"multiPoint": {"disabled": [{"name": "*"}],
                              "enabled": [{"name": "PrioritySort"}, {"name": "DefaultBinder"}]},
               "filter": {"enabled": [{"name": f} for f in filters]},
               "placementGenerate": {"enabled": [{"name": generate}]},
               "placementScore": {"enabled": [{"name": n, "weight": w} for n, w in scores]}}
    return {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
            "profiles": [{"schedulerName": "test-scheduler", "plugins": plugins}]}


def _placement_scheduler(plugin: FakePlacementPlugin, codes=None):
    ordered = Ordered(plugin)
    reg = Registry({plugin.name(): lambda a, h: plugin, ordered.name(): lambda a, h: ordered})
    s = Scheduler(_config(ordered.name(), [(plugin.name(), 1)]), registry=reg, feature_gates=tas_gates())
    s.add_nodes([make_node("node1", cpu="4"), make_node("node2", cpu="4")])
    fw = s.profiles["test-scheduler"]
    fw.plugins_map["GangScheduling"] = FakePlacementFeasible(codes or [])
    pg = PodGroup(name="pg", namespace="default")
    s.cache.add_pod_group(pg)
    pod = member("foo")
    s.cache.add_pod_group_member(pod)
    return s, fw, info(pg, [pod])


TWO = {"placement1": ["node1"], "placement2": ["node2"]}
GROUP_UNSCHEDULABLE = "0/2 placements are available, first placement status: injected placementFeasible status"
# name: (plugin kwargs, placementFeasible codes, want group (code, message or None, plugin or None),
#        want pod results [(code, host, message prefix)])
PLACEMENT_ALGORITHM = {
    "respects higher score of placement1": (
        dict(placements=TWO, scores={"placement1": 2, "placement2": 1}), None, (S, None, None), [(S, "node1", None)]),
    "respects higher score of placement2": (
        dict(placements=TWO, scores={"placement1": 1, "placement2": 2}), None, (S, None, None), [(S, "node2", None)]),
    "when no placements are generated, returns unschedulable": (
        dict(placements={}), None, (U, "no feasible placements found", "FakePlacementPlugin_Ordered"), []),
    "when all placements are infeasible, returns unschedulable": (
        dict(placements=TWO, scores={"placement1": 1, "placement2": 2},
             filter_status={"node1": Status(U), "node2": Status(U)}),
        [[W, U], [W, U]], (U, GROUP_UNSCHEDULABLE, None), [(U, "", "0/1 nodes are available:")]),
    "when all placements are infeasible, but pods are feasible, returns unschedulable": (
        dict(placements=TWO, scores={"placement1": 1, "placement2": 2}),
        [[W, U], [W, U]], (U, GROUP_UNSCHEDULABLE, None), [(S, "node1", None)]),
    "filters out infeasible placements": (
        dict(placements=TWO, scores={"placement1": 1}, filter_status={"node2": Status(U)}),
        [[W, S], [W, U]], (S, None, None), [(S, "node1", None)]),
    "filters out infeasible placements with feasible pods": (
        dict(placements=TWO, scores={"placement1": 1, "placement2": 2}),
        [[W, S], [W, U]], (S, None, None), [(S, "node1", None)]),
    "when generate plugin fails, returns error": (
        dict(generate_status=Status(E, "error for test")), None, (E, "error for test", None), []),
    "when score plugin fails, returns error": (
        dict(placements=TWO, scores={"placement1": 1}, score_status={"placement2": Status(E, "error for test")}),
        None, (E, 'running PlacementScore plugins: plugin "FakePlacementPlugin" failed with: error for test', None),
        []),
    "when a placement evaluation errors, returns error": (
        dict(placements={"placement1": ["node1"]}, scores={"placement1": 1},
             filter_status={"node1": Status(E, "error for test")}),
        None, (E, 'failed to schedule other pod from a pod group: running "FakePlacementPlugin" filter plugin: '
                  'error for test', None),
        [(E, "", 'running "FakePlacementPlugin" filter plugin: error for test')]),
}


@pytest.mark.parametrize("name", list(PLACEMENT_ALGORITHM))
def test_pod_group_scheduling_placement_algorithm(name):
    kwargs, codes, (group_code, group_message, group_plugin), pods = PLACEMENT_ALGORITHM[name]
    s, fw, entity = _placement_scheduler(FakePlacementPlugin("FakePlacementPlugin", **kwargs), codes)
    result = s._run_root_scheduling_algorithm(fw, CycleState(), entity)
    st = result.status
    assert st.code() == group_code, st
    if group_message is not None:
        if group_code == E:
            assert str(st.as_error()) == group_message
        elif group_code == U and group_message.startswith("0/"):
            assert list(st.reasons()) == [ERR_POD_GROUP_UNSCHEDULABLE, group_message]  # Reasons(): the error first
            assert str(st.as_error()) == ERR_POD_GROUP_UNSCHEDULABLE
        else:
            assert st.message() == group_message
    if group_plugin is not None:
        assert st.plugin() == group_plugin
    got = [(S if r.status is None else r.status.code(), r.node_name) for r in result.pod_results]
    assert got == [(c, h) for c, h, _ in pods]
    for r, (_, _, prefix) in zip(result.pod_results, pods):
        if prefix is not None:
            assert r.status.message().startswith(prefix), r.status.message()
    # every assumption and the placement are gone
    assert s.cache.snapshot.get_placement() is None
    assert not any(s.cache.is_assumed_pod(q.pod) for q in entity.members)


# -- TestPodGroupSchedulingPlacementAlgorithm_Scoring -------------------------------------------------
SCORING = {
    "respects higher score of placement1": ([(1, {"placement1": 50, "placement2": 75}),
                                             (2, {"placement1": 25, "placement2": 10})], "node1"),
    "respects higher score of placement2": ([(1, {"placement1": 75, "placement2": 50}),
                                             (2, {"placement1": 10, "placement2": 25})], "node2"),
}


@pytest.mark.parametrize("name", list(SCORING))
def test_pod_group_scheduling_placement_algorithm_scoring(name):
    data, host = SCORING[name]
    generator = FakePlacementPlugin("FakeGeneratorPlugin", placements=TWO)
    scorers = [FakePlacementPlugin(f"FakeScorePlugin[{i}]", scores=scores) for i, (_, scores) in enumerate(data)]
    reg = Registry({generator.name(): lambda a, h: generator,
                    **{p.name(): (lambda p: lambda a, h: p)(p) for p in scorers}})
    cfg = _config(generator.name(), [(p.name(), w) for p, (w, _) in zip(scorers, data)], filters=(generator.name(),))
    s = Scheduler(cfg, registry=reg, feature_gates=tas_gates())
    s.add_nodes([make_node("node1", cpu="4"), make_node("node2", cpu="4")])
    fw = s.profiles["test-scheduler"]
    pg = PodGroup(name="pg", namespace="default")
    s.cache.add_pod_group(pg)
    pod = member("foo")
    s.cache.add_pod_group_member(pod)
    result = s._pod_group_placement_algorithm(fw, CycleState(), info(pg, [pod]))
    assert result.pod_results[0].node_name == host


# -- TestPlacementCycleStateLifecycle (PodGroup) ------------------------------------------------------
class PlacementStateTracker:
    """Filter writes the node's name into the placement's CycleState; ScorePlacement reads it back."""

    def __init__(self):
        self.read = {}

    def name(self):
        return "PlacementStateTracker"

    def filter(self, state, pod, node_info):
        placement_state = state.get(POD_GROUP_CYCLE_KEY)
        if placement_state is None:
            return Status(E, "PlacementCycleState is nil during Filter")
        self.last = node_info.node().name
        return None

    def generate_placements(self, state, pod_group, parent_placement):
        by_name = {n.node().name: n for n in parent_placement.nodes}
        return GeneratePlacementsResult([Placement("placement-a", [by_name["node1"]]),
                                         Placement("placement-b", [by_name["node2"]])]), None

    def score_placement(self, state, pod_group, assignments):
        self.read[assignments.name] = [a.node_name for a in assignments.proposed_assignments]
        return 1, None


def test_placement_cycle_state_lifecycle():
    tracker = PlacementStateTracker()
    reg = Registry({tracker.name(): lambda a, h: tracker})
    s = Scheduler(_config(tracker.name(), [(tracker.name(), 1)], filters=(tracker.name(),)), registry=reg,
                  feature_gates=tas_gates())
    s.add_nodes([make_node("node1", cpu="4"), make_node("node2", cpu="4")])
    fw = s.profiles["test-scheduler"]
    pg = PodGroup(name="pg", namespace="default")
    s.cache.add_pod_group(pg)
    pod = member("foo")
    s.cache.add_pod_group_member(pod)
    result = s._pod_group_placement_algorithm(fw, CycleState(), info(pg, [pod]))
    assert result.status.is_success()
    # each placement was scored with the member it proposed there (its own placement's run)
    assert tracker.read == {"placement-a": ["node1"], "placement-b": ["node2"]}


# -- the gate and the default profile -------------------------------------------------------------
def test_gate_requires_generic_workload():
    with pytest.raises(FeatureGateError):
        Scheduler(None, feature_gates=FeatureGates({"TopologyAwareWorkloadScheduling": True}))


def test_default_plugins_with_the_gate():
    names = [(p.name, p.weight) for p in default_plugin_list(FeatureGates(dict(TAS)))]
    assert names[-3:] == [("GangScheduling", 0), ("TopologyPlacementGenerator", 0), ("PodGroupPodsCount", 1)]
    s = Scheduler(None, feature_gates=tas_gates())
    fw = s.profiles["default-scheduler"]
    assert [p.name() for p in fw.placement_generate_plugins] == ["TopologyPlacementGenerator"]
    assert [p.name() for p in fw.placement_score_plugins] == ["NodeResourcesFit", "PodGroupPodsCount"]
    assert fw.placement_score_plugin_weight == {"NodeResourcesFit": 1, "PodGroupPodsCount": 1}


def _topology_group(name, key, min_count):
    return PodGroup(name=name, namespace="default",
                    scheduling_policy=PodGroupSchedulingPolicy(gang=GangSchedulingPolicy(min_count)),
                    scheduling_constraints=PodGroupSchedulingConstraints((TopologyConstraint(key),)))


def _tas_cluster(node_cpu=("2", "2", "4", "4")):
    s = Scheduler(None, feature_gates=tas_gates())
    zones = ["a", "a", "b", "b"]
    s.add_nodes([make_node(f"n{i}", cpu=c, labels={"zone": z}) for i, (c, z) in enumerate(zip(node_cpu, zones))])
    return s


def _gang_pods(group, n, cpu):
    return [make_pod(f"{group}-{i}", cpu=cpu).replace(uid=f"{group}-{i}", scheduling_group=PodSchedulingGroup(group))
            for i in range(n)]


def test_gang_is_placed_in_one_zone():
    s = _tas_cluster()
    s.add(_topology_group("g", "zone", 3))
    s.add_pods(_gang_pods("g", 3, "1500m"))
    results = {r.pod.name: r for r in s.run(until=s.clock.now() + 1)}
    nodes = {results[f"g-{i}"].node_name for i in range(3)}
    assert all(results[f"g-{i}"].status == SCHEDULED for i in range(3))
    assert nodes <= {"n2", "n3"}  # zone a has room for two such pods only


def test_gang_that_fits_no_zone_binds_nothing_and_says_why():
    s = _tas_cluster(("2", "2", "2", "2"))
    s.add(_topology_group("g", "zone", 3))
    s.add_pods(_gang_pods("g", 3, "1500m"))
    results = {r.pod.name: r for r in s.run(until=s.clock.now() + 1)}
    # the first placement (zone a) holds two members, the third fits neither node there: the two
    # read the group's status (wrapped again), the third its own FitError over the placement's nodes
    group = ("pod group is unschedulable, 0/2 placements are available, first placement status: minCount (3) "
             "cannot be satisfied: 2 scheduled, 0 remaining, pod group preemption: No preemption victims found "
             "for incoming preemptor")
    assert [results[f"g-{i}"].status for i in range(3)] == [UNSCHEDULABLE] * 3
    assert results["g-0"].message == results["g-1"].message == "pod group is unschedulable, " + group
    assert results["g-2"].message == "0/2 nodes are available: 2 Insufficient cpu."
    (cond,) = s.cluster.get_object("PodGroup", "g", "default").conditions
    assert (cond["reason"], cond["message"]) == ("Unschedulable", group)


def test_best_placement_by_pods_count_and_most_allocated():
    # zone a fits 2 of the 4 members (a basic group), zone b all 4: PodGroupPodsCount prefers b
    s = _tas_cluster(("1", "1", "4", "4"))
    pg = PodGroup(name="g", namespace="default", scheduling_policy=PodGroupSchedulingPolicy(basic=True),
                  scheduling_constraints=PodGroupSchedulingConstraints((TopologyConstraint("zone"),)))
    s.add(pg)
    s.add_pods(_gang_pods("g", 4, "900m"))
    results = {r.pod.name: r for r in s.run(until=s.clock.now() + 1)}
    assert {results[f"g-{i}"].node_name for i in range(4)} <= {"n2", "n3"}


def test_decision_records_are_the_chosen_placements():
    """Scheduler(record=...): each member's record is its run in the placement whose result the
    cycle kept (zone b here, evaluated first), not the last placement tried (zone a)."""
    s = Scheduler(None, feature_gates=tas_gates(), record="all")
    s.add_nodes([make_node(f"n{i}", cpu=c, labels={"zone": z}) for i, (c, z) in enumerate(zip("4411", "bbaa"))])
    s.add(PodGroup(name="g", namespace="default", scheduling_policy=PodGroupSchedulingPolicy(basic=True),
                   scheduling_constraints=PodGroupSchedulingConstraints((TopologyConstraint("zone"),))))
    s.add_pods(_gang_pods("g", 4, "900m"))
    results = {r.pod.name: r for r in s.run(until=s.clock.now() + 1)}
    for i in range(4):
        (rec,) = s.results[f"g-{i}"].history
        assert rec.selected_node == results[f"g-{i}"].node_name
        assert sorted(rec.filter_node_names.tolist()) == ["n0", "n1"]  # the placement's nodes only


def test_topology_constraints_through_the_api():
    """spec.schedulingConstraints.topology: kept with the gate (at most one entry, a qualified name),
    dropped without it (the API server's PrepareForCreate), as a Scheduler's objects are loaded."""
    from fastsched.errors import FastschedError

    manifest = {"apiVersion": "scheduling.k8s.io/v1beta1", "kind": "PodGroup", "metadata": {"name": "g"},
                "spec": {"schedulingPolicy": {"gang": {"minCount": 2}},
                         "schedulingConstraints": {"topology": [{"key": "zone"}]}}}
    s = Scheduler(None, feature_gates=tas_gates())
    s.add(manifest)
    got = s.cluster.get_object("PodGroup", "g", "default").scheduling_constraints
    assert [t.key for t in got.topology] == ["zone"]
    off = Scheduler(None, feature_gates=FeatureGates({"GenericWorkload": True}))
    off.add(manifest)
    assert off.cluster.get_object("PodGroup", "g", "default").scheduling_constraints is None
    two = {**manifest, "spec": {**manifest["spec"], "schedulingConstraints": {"topology": [{"key": "a"}, {"key": "b"}]}}}
    with pytest.raises(FastschedError, match=r"spec.schedulingConstraints.topology: Too many: 2: must have at most 1"):
        s.add(two)


def test_preemptions_rerun_keeps_the_cycles_records():
    """PodGroupPostFilter's rerun of the placement algorithm (workload-aware preemption) opens no
    records and leaves the cycle's own: the member that failed keeps its record."""
    s = Scheduler(None, feature_gates=tas_gates(), record="all")
    # two zones, both full of low-priority pods; in the rerun both fit, zone b (evaluated second)
    # scores higher (NodeResourcesFit's MostAllocated over the placement) and is kept
    s.add_nodes([make_node("n0", cpu="2", labels={"zone": "a"}), make_node("n1", cpu="1", labels={"zone": "b"})])
    s.add_pods([make_pod("low", cpu="2", priority=1, node_name="n0"),
                make_pod("low-b", cpu="1", priority=1, node_name="n1")])
    s.add({"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": "high"}, "value": 10})
    s.add({"apiVersion": "scheduling.k8s.io/v1beta1", "kind": "PodGroup", "metadata": {"name": "g"},
           "spec": {"priorityClassName": "high", "schedulingPolicy": {"gang": {"minCount": 1}},
                    "schedulingConstraints": {"topology": [{"key": "zone"}]}}})
    s.add_pods([make_pod("g-0", cpu="1", priority=10).replace(uid="g-0", scheduling_group=PodSchedulingGroup("g"))])
    (r,) = [r for r in s.run(until=s.clock.now(), max_attempts=1) if r.pod.name == "g-0"]
    assert r.message == "0/1 nodes are available: 1 Insufficient cpu."  # its own FitError
    assert s.cluster.pods["g-0"].nominated_node_name == "n1"  # preemption reran the algorithm and nominated it
    (rec,) = s.results["g-0"].history
    assert rec.outcome == UNSCHEDULABLE and rec.message == r.message
