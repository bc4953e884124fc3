"""The pod group scheduling cycle (GenericWorkload), on the plugin-call path.

Transcribed from ``pkg/scheduler/schedule_one_podgroup_test.go`` (v1.37.2): ``TestValidatePodGroup``
(its non-composite rows), ``TestPodGroupSchedulingAlgorithm`` (TopologyAwareWorkloadScheduling and
CompositePodGroup off), ``TestSubmitPodGroupAlgorithmResult``'s branches, ``TestUpdatePodGroupCondition``,
``TestPodGroupCycle_PodGroupPostFilter``, ``TestScheduleOnePodGroup_PodGroupNotFound``,
``TestScheduleOnePodGroup_SchedulerNameMismatchUpdatesStatus``, ``TestSkipPodGroupPodSchedule`` and
``TestScheduleOnePodGroup_FinishesAttemptWhenAllPoppedPodsAreAssumed``, plus whole gangs through
``Scheduler.run()``.

GenericWorkload (and PodGroupPreemptionPolicy, for its rows) is switched on through
:class:`~fastsched.features.FeatureGates`. The Priority admission of PodGroups
(``plugin/pkg/admission/priority``: ``TestAdmitPodGroup``) is at the end.
"""
from __future__ import annotations

import pytest

from fastsched import Scheduler, load_config
from fastsched.api.objects import PodSchedulingGroup
from fastsched.api.scheduling import GangSchedulingPolicy, PodGroup, PodGroupSchedulingPolicy
from fastsched.features import FeatureGates
from fastsched.framework import Code, CycleState, FilterPlugin, Status
from fastsched.framework.podgroups import QueuedPodGroupInfo
from fastsched.framework.types import NominatingInfo, NominatingMode, PodInfo, QueuedPodInfo
from fastsched.runtime import Registry
from fastsched.scheduler.result import SCHEDULED, UNSCHEDULABLE
from fastsched.scheduler.schedule_one_podgroup import (PodGroupPostFilterMissing, run_pod_group_post_filter_plugins,
                                                       set_status_condition)
from fastsched.testing import make_node, make_pod


def workload_gates(**extra: bool) -> FeatureGates:
    return FeatureGates({"GenericWorkload": True, **extra})


def config(*filters: str, scheduler_name: str = "default-scheduler", no_post_filter: bool = True) -> dict:
    plugins: dict = {}
    if no_post_filter:  # their PodGroupPostFilter (workload-aware preemption) is not ported
        plugins["multiPoint"] = {"disabled": [{"name": "DefaultPreemption"}, {"name": "DynamicResources"}]}
    if filters:
        plugins["filter"] = {"enabled": [{"name": f} for f in filters]}
    return {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
            "profiles": [{"schedulerName": scheduler_name, "plugins": plugins}]}


def member(name, group="pg", *, cpu="100m", priority=None, scheduler="default-scheduler", node="", policy=None):
    pod = make_pod(name, cpu=cpu, priority=priority).replace(uid=name, scheduling_group=PodSchedulingGroup(group),
                                                             scheduler_name=scheduler)
    if policy is not None:
        pod = pod.replace(preemption_policy=policy)
    return pod.with_node_name(node) if node else pod


def gang(name="pg", min_count=None, priority=None, policy=None) -> PodGroup:
    sp = PodGroupSchedulingPolicy(basic=True) if min_count is None else \
        PodGroupSchedulingPolicy(gang=GangSchedulingPolicy(min_count))
    return PodGroup(name=name, namespace="default", scheduling_policy=sp, priority=priority, preemption_policy=policy)


def info(pg: PodGroup, pods) -> QueuedPodGroupInfo:
    entity = QueuedPodGroupInfo(pg)
    for pod in pods:
        entity.add_pod(QueuedPodInfo(PodInfo(pod)))
    return entity


def scheduler(cfg=None, registry=None, nodes=("node1",), cpu="4", gates=None) -> Scheduler:
    s = Scheduler(cfg or config(), registry=registry, feature_gates=gates or workload_gates())
    s.add_nodes([make_node(n, cpu=cpu) for n in nodes])
    return s


# -- TestValidatePodGroup (non-composite rows) ------------------------------------------------------
S1, S2 = "sched1", "sched2"
VALIDATE = {
    "failure when no pods to evaluate": (gang(), [], [], [S1], False, True),
    "success for same scheduler name": (gang(), [member("p1", scheduler=S1), member("p2", scheduler=S1)], [], [S1],
                                        False, False),
    "failure for different scheduler names": (gang(), [member("p1", scheduler=S1), member("p2", scheduler=S2)], [],
                                              [S1, S2], False, True),
    "failure when profile not found": (gang(), [member("p1", scheduler=S1), member("p2", scheduler=S1)], [], [S2],
                                       False, True),
    "success when priorities match": (gang(priority=10), [member("p1", priority=10), member("p2", priority=10)], [],
                                      None, False, False),
    "failure when different priorities across pods": (gang(priority=10), [member("p1", priority=9),
                                                                          member("p2", priority=10)], [], None, False,
                                                      True),
    "failure when different priorities across pods and pod group": (
        gang(priority=9), [member("p1", priority=10), member("p2", priority=10)], [], None, False, True),
    "success when new pods match scheduled pods scheduler name and priority": (
        gang(priority=10), [member("p1", priority=10, scheduler=S1)],
        [member("p2", priority=10, scheduler=S1, node="node1")], [S1], False, False),
    "failure when new pod has different scheduler name than scheduled pod": (
        gang(priority=10), [member("p1", priority=10, scheduler=S1)],
        [member("p2", priority=10, scheduler=S2, node="node1")], [S1, S2], False, True),
    "failure when new pod has different priority than scheduled pod": (
        gang(priority=10), [member("p1", priority=10, scheduler=S1)],
        [member("p2", priority=9, scheduler=S1, node="node1")], [S1], False, True),
    "success when preemption policies match": (gang(policy="Never"), [member("p1", policy="Never"),
                                                                      member("p2", policy="Never")], [], None, True,
                                               False),
    "failure when different preemption policies across pods": (
        gang(policy="Never"), [member("p1", policy="PreemptLowerPriority"), member("p2", policy="Never")], [], None,
        True, True),
    "failure when different preemption policies across pods and pod group": (
        gang(policy="Never"), [member("p1", policy="PreemptLowerPriority"), member("p2", policy="PreemptLowerPriority")],
        [], None, True, True),
    "success when preemption policies between pods and podgroup do not match but PodGroupPreemptionPolicy is "
    "disabled": (gang(policy="Never"), [member("p1", policy="PreemptLowerPriority"),
                                        member("p2", policy="PreemptLowerPriority")], [], None, False, False),
    "failure when preemption policies do not match across pods and PodGroupPreemptionPolicy is disabled": (
        gang(policy="Never"), [member("p1", policy="PreemptLowerPriority"), member("p2", policy="Never")], [], None,
        False, True),
}


@pytest.mark.parametrize("name", list(VALIDATE))
def test_validate_pod_group(name):
    pg, pods, scheduled, profiles, policy_gate, want_error = VALIDATE[name]
    s = scheduler(gates=workload_gates(PodGroupPreemptionPolicy=policy_gate))
    s.cache.add_pod_group(pg)
    for pod in scheduled:
        s.cache.add_pod(pod)
    s.profiles = {p: None for p in (profiles or ["default-scheduler"])}
    err = s._validate_pod_group(info(pg, pods))
    assert (err is not None) == want_error, err


def test_validate_pod_group_messages():
    s = scheduler()
    s.cache.add_pod_group(gang(priority=10))
    err = s._validate_pod_group(info(gang(priority=10), [member("p1", priority=10), member("p2", priority=9)]))
    assert str(err) == ("all pods in a single pod group should have the same priority as the pod group's priority, "
                        "got 9 and 10")
    err = s._validate_pod_group(info(gang(priority=10), [member("p1", priority=10),
                                                         member("p2", priority=10, scheduler="other")]))
    assert str(err) == ('all pods in a single pod group should have the same .spec.schedulerName set, got: "other" '
                        'and "default-scheduler"')
    err = s._validate_pod_group(info(gang(), [member("p1", policy="Never"), member("p2")]))
    assert str(err) == ("all pods in a single pod group should have the same preemption policy, got "
                        "PreemptLowerPriority and Never")


# -- TestPodGroupSchedulingAlgorithm --------------------------------------------------------------------
class FakeFilter(FilterPlugin):
    """fakePodGroupPlugin's Filter: each pod's status by name (a missing one: Unschedulable)."""

    statuses: dict = {}

    def __init__(self, args=None, handle=None):
        pass

    def name(self):
        return "FakePodGroupPlugin"

    def filter(self, state, pod, node_info):
        if pod.name in self.statuses:
            st = self.statuses[pod.name]
            return None if st is None else Status(st.code(), *st.reasons())
        return Status(Code.UNSCHEDULABLE, "default fake filter failure")


class FakePlacementFeasible:
    """fakePlacementFeasiblePlugin (one placement): the injected code for each evaluation."""

    def __init__(self, codes):
        self.codes = codes

    def name(self):
        return "GangScheduling"

    def placement_feasible(self, state, pod_group_info, progress):
        evaluated = len(pod_group_info.unscheduled_pods()) - progress.remaining
        if evaluated < len(self.codes):
            code = self.codes[evaluated]
            return None if code == Code.SUCCESS else Status(code, "injected placementFeasible status")
        return None


S, U, UU, W, E = Code.SUCCESS, Code.UNSCHEDULABLE, Code.UNSCHEDULABLE_AND_UNRESOLVABLE, Code.WAIT, Code.ERROR
OK = None
ALGORITHM = {
    "All pods feasible": ({"p1": OK, "p2": OK, "p3": OK}, [], S, {"p1": S, "p2": S, "p3": S}),
    "All pods feasible, podGroup already meeting quorum before any pod is evaluated": (
        {"p1": OK, "p2": OK, "p3": OK}, [S, S, S, S], S, {"p1": S, "p2": S, "p3": S}),
    "All pods feasible, podGroup schedulable with 3 schedulable pods": (
        {"p1": OK, "p2": OK, "p3": OK}, [W, W, W, S], S, {"p1": S, "p2": S, "p3": S}),
    "All pods feasible, podGroup waiting": ({"p1": OK, "p2": OK, "p3": OK}, [W, W, W, W], U,
                                            {"p1": S, "p2": S, "p3": S}),
    "All pods feasible, podGroup unschedulable": ({"p1": OK, "p2": OK, "p3": OK}, [W, U], U, {"p1": S}),
    "All pods feasible, podGroup unschedulable with 2 pods": ({"p1": OK, "p2": OK, "p3": OK}, [W, W, U], U,
                                                              {"p1": S, "p2": S}),
    "PodGroup schedulable with 2 schedulable pods": ({"p1": Status(U), "p2": OK, "p3": OK}, [W, W, W, S], S,
                                                     {"p1": U, "p2": S, "p3": S}),
    "All pods unschedulable": ({"p1": Status(UU), "p2": Status(U), "p3": Status(U)}, [W, S, S, S], U,
                               {"p1": U, "p2": U, "p3": U}),
    "Any filter returned Error": ({"p1": OK, "p2": Status(E), "p3": OK}, [], E, {"p1": S, "p2": E}),
    "Any placementFeasible returned Error": ({"p1": OK, "p2": OK, "p3": OK}, [W, S, E], E, {"p1": S, "p2": S}),
    "First placementFeasible call returned Unschedulable": ({"p1": OK, "p2": OK, "p3": OK}, [U], U, {}),
    "First placementFeasible call returned Error": ({"p1": OK, "p2": OK, "p3": OK}, [E], E, {}),
}


def _algorithm_scheduler(statuses, codes):
    FakeFilter.statuses = statuses
    s = scheduler(config("FakePodGroupPlugin", scheduler_name="test-scheduler"),
                  registry=Registry({"FakePodGroupPlugin": FakeFilter}))
    fw = s.profiles["test-scheduler"]
    fw.plugins_map["GangScheduling"] = FakePlacementFeasible(codes)
    s.cache.add_pod_group(gang())
    return s, fw


@pytest.mark.parametrize("name", list(ALGORITHM))
def test_pod_group_scheduling_algorithm(name):
    statuses, codes, group_code, pod_codes = ALGORITHM[name]
    s, fw = _algorithm_scheduler(statuses, codes)
    pods = [member(f"p{i}", scheduler="test-scheduler") for i in (1, 2, 3)]
    for pod in pods:
        s.cache.add_pod_group_member(pod)
    entity = info(gang(), pods)
    result = s._run_root_scheduling_algorithm(fw, CycleState(), entity)
    assert result.status.code() == group_code
    got = {r.pinfo.pod.name: (Code.SUCCESS if r.status is None else r.status.code()) for r in result.pod_results}
    assert got == pod_codes
    for r in result.pod_results:
        assert r.node_name == ("node1" if r.status is None else "")
    # every assumption of the algorithm is reverted
    assert s.cache.pod_group_states_lister().get("default", "pg").scheduled_pods_count() == 0
    assert not any(s.cache.is_assumed_pod(p) for p in pods)


# -- submitPodGroupAlgorithmResult: whole cycles through the Scheduler -----------------------------
def _run_gang(min_count, n_pods, *, cpu="1", node_cpu="2", nodes=("n0", "n1"), cfg=None):
    s = scheduler(cfg, nodes=nodes, cpu=node_cpu)
    s.add(gang("g", min_count))
    s.add_pods([member(f"m{i}", "g", cpu=cpu) for i in range(n_pods)])
    return s, {r.pod.name: r for r in s.run(until=s.clock.now() + 1)}


def test_gang_that_fits_is_bound_together():
    s, results = _run_gang(3, 3)
    assert all(r.status == SCHEDULED for r in results.values())
    pg = s.cluster.get_object("PodGroup", "g", "default")
    (cond,) = pg.conditions
    assert (cond["type"], cond["status"], cond["reason"], cond["message"]) == (
        "PodGroupInitiallyScheduled", "True", "Scheduled", "")
    assert sorted(s.cache.pod_group_states_lister().get("default", "g").assigned_pod_uids()) == ["m0", "m1", "m2"]


def test_gang_that_does_not_fit_binds_nothing_and_says_why():
    s, results = _run_gang(3, 3, cpu="2")
    assert [r.status for r in results.values()] == [UNSCHEDULABLE] * 3
    assert not any(r.node_name for r in results.values())
    assert s.cache.pod_group_states_lister().get("default", "g").scheduled_pods_count() == 0
    # members that fit before the gang was found infeasible read the group's status; the one that
    # did not fit its own FitError
    assert results["m0"].message == ("pod group is unschedulable, minCount (3) cannot be satisfied: 2 scheduled, "
                                     "0 remaining, ")
    assert results["m2"].message == "0/2 nodes are available: 2 Insufficient cpu."
    (cond,) = s.cluster.get_object("PodGroup", "g", "default").conditions
    assert (cond["status"], cond["reason"], cond["message"]) == (
        "False", "Unschedulable", "minCount (3) cannot be satisfied: 2 scheduled, 0 remaining, ")


def test_gang_infeasible_before_any_pod():
    """PlacementFeasible Unschedulable before a pod is tried: every member gets the group status
    (wrapped once, upstream's double prefix when it is wrapped again)."""
    s = scheduler(nodes=("n0",))
    s.add(gang("g", 3))
    members = [member(f"m{i}", "g") for i in range(3)]
    s.cache.add_pod_group(s.cluster.get_object("PodGroup", "g", "default"))
    entity = info(s.cluster.get_object("PodGroup", "g", "default"), members[:2])
    for pod in members[:2]:
        s.cache.add_pod_group_member(pod)
    fw = s.profiles["default-scheduler"]
    result = s._run_root_scheduling_algorithm(fw, CycleState(), entity)
    assert result.status.code() == Code.UNSCHEDULABLE and result.pod_results == []
    assert result.status.message() == "pod group is unschedulable, minCount (3) cannot be satisfied: 0 scheduled, " \
                                      "2 remaining"


def test_basic_group_binds_what_fits():
    s = scheduler(nodes=("n0",), cpu="2")
    s.add(gang("b"))
    s.add_pods([member(f"m{i}", "b", cpu="1") for i in range(3)])
    results = {r.pod.name: r for r in s.run(until=s.clock.now() + 1)}
    assert sorted(r.status for r in results.values()) == sorted([SCHEDULED, SCHEDULED, UNSCHEDULABLE])
    (cond,) = s.cluster.get_object("PodGroup", "b", "default").conditions
    assert cond["status"] == "True"


def test_gang_waits_for_its_pod_group_and_min_count():
    s = scheduler(nodes=("n0", "n1"))
    s.add_pods([member("m0", "g"), member("m1", "g")])
    s.run(until=1)
    assert s.queue.where("m0") == "incomplete"
    s.add(gang("g", 3))
    results = {r.pod.name: r for r in s.run(until=2)}
    assert results["m0"].status == "Gated"
    assert "waiting for minCount pods from a gang to appear in scheduling queue" in results["m0"].message
    s.add_pods([member("m2", "g")])
    results = {r.pod.name: r for r in s.run(until=3)}
    assert all(r.status == SCHEDULED for r in results.values())


# -- TestUpdatePodGroupCondition ----------------------------------------------------------------------
def _cond(status, reason, message, ltt="2026-01-01T00:00:00Z", gen=0):
    return {"type": "PodGroupInitiallyScheduled", "status": status, "reason": reason, "message": message,
            "observedGeneration": gen, "lastTransitionTime": ltt}


@pytest.mark.parametrize("existing,new,changed,want", [
    ((), _cond("True", "Scheduled", "", None), True, "True"),
    ((_cond("False", "Unschedulable", "x"),), _cond("True", "Scheduled", "", None), True, "True"),
    ((_cond("True", "Scheduled", ""),), _cond("False", "Unschedulable", "x", None), False, "True"),
    ((_cond("False", "Unschedulable", "x"),), _cond("False", "Unschedulable", "x", None), False, "False"),
    ((_cond("False", "Unschedulable", "x"),), _cond("False", "Unschedulable", "y", None), True, "False"),
], ids=["no condition: added", "False to True", "never back from True", "unchanged: no patch",
        "new message: patched, transition time kept"])
def test_update_pod_group_condition(existing, new, changed, want):
    s = scheduler()
    pg = gang().replace(conditions=existing)
    s.add(pg.replace(conditions=()))
    s.cluster.update_object(pg)
    entity = QueuedPodGroupInfo(s.cluster.get_object("PodGroup", "pg", "default"))
    s.clock.advance_to(100.0)
    new = {k: v for k, v in new.items() if v is not None}
    before = s.cluster.get_object("PodGroup", "pg", "default")
    s._update_pod_group_condition(entity, new)
    after = s.cluster.get_object("PodGroup", "pg", "default")
    assert (after is not before) == changed
    (cond,) = after.conditions
    assert cond["status"] == want
    if changed and existing and existing[0]["status"] == want:
        assert cond["lastTransitionTime"] == existing[0]["lastTransitionTime"]


def test_set_status_condition():
    conds, changed = set_status_condition((), {"type": "A", "status": "True", "reason": "R", "message": ""}, 60.0)
    assert changed and conds[0]["lastTransitionTime"] == "1970-01-01T00:01:00Z"
    conds2, changed = set_status_condition(conds, {"type": "A", "status": "False", "reason": "R", "message": ""}, 120.0)
    assert changed and conds2[0]["lastTransitionTime"] == "1970-01-01T00:02:00Z"


# -- TestScheduleOnePodGroup_PodGroupNotFound / _SchedulerNameMismatchUpdatesStatus ---------------------
def test_pod_group_not_found_fails_every_member_without_condition():
    s = scheduler()
    s.cache.add_pod_group(gang("gone"))
    pods = [member("p1", "gone"), member("p2", "gone")]
    for pod in pods:
        s.cluster.add_pod(pod)
    entity = info(gang("gone"), pods)
    s.cache.remove_pod_group(gang("gone"))
    s.schedule_one_pod_group(entity)
    for pod in pods:
        res = s.results[pod.uid]
        assert (res.status, res.message) == ("Error", "pod group object not found for pod group podgroup/default/gone")


def test_scheduler_name_mismatch_updates_status():
    s = scheduler()
    s.add(gang("g"))
    pods = [member("p1", "g"), member("p2", "g", scheduler="other")]
    entity = info(s.cluster.get_object("PodGroup", "g", "default"), pods)
    for pod in pods:
        s.cache.add_pod_group_member(pod)
    s.schedule_one_pod_group(entity)
    (cond,) = s.cluster.get_object("PodGroup", "g", "default").conditions
    assert (cond["status"], cond["reason"]) == ("False", "SchedulerError")
    assert cond["message"] == ('all pods in a single pod group should have the same .spec.schedulerName set, got: '
                               '"other" and "default-scheduler"')


def test_finishes_attempt_when_all_popped_pods_are_assumed():
    s = scheduler()
    s.add(gang("g", 1))
    pod = member("p1", "g")
    s.cluster.add_pod(pod)
    s.cache.assume_pod(pod.with_node_name("node1"))
    entity = info(s.cluster.get_object("PodGroup", "g", "default"), [pod])
    s.schedule_one_pod_group(entity)
    assert entity.members == [] and not s.queue.in_flight("p1") and len(s.queue.pending_pod_group_pods) == 0


# -- TestPodGroupCycle_PodGroupPostFilter (the runner's rules) -----------------------------------------
class PGPostFilter:
    def __init__(self, name, status, nominations=None):
        self._name, self.status, self.nominations, self.called = name, status, nominations, False

    def name(self):
        return self._name

    def pod_group_post_filter(self, state, pg_info, scheduling_func):
        self.called = True
        return self.nominations, self.status


def test_pod_group_post_filter_runner():
    a = PGPostFilter("A", Status(U, "a"))
    b = PGPostFilter("B", Status(U, "b"))
    res, st = run_pod_group_post_filter_plugins([a, b], None, None, None)
    assert res is None and (st.code(), st.message(), st.plugin()) == (U, "a, b", "A")
    c = PGPostFilter("C", Status(UU, "stop"))
    d = PGPostFilter("D", None)
    res, st = run_pod_group_post_filter_plugins([c, d], None, None, None)
    assert (st.code(), st.plugin()) == (UU, "C") and not d.called
    e = PGPostFilter("E", Status(E, "boom"))
    res, st = run_pod_group_post_filter_plugins([e], None, None, None)
    assert (st.code(), st.message()) == (E, 'error in "E" PodGroupPostFilter plugins: boom')
    res, st = run_pod_group_post_filter_plugins([PGPostFilter("F", None, {"x": 1})], None, None, None)
    assert st.is_success() and res == {"x": 1}


def test_post_filter_result_nominates_members():
    s, fw = _algorithm_scheduler({"p1": OK, "p2": OK}, [W, W, W])
    pods = [member("p1", scheduler="test-scheduler"), member("p2", scheduler="test-scheduler")]
    for pod in pods:
        s.cluster.add_pod(pod)
        s.cache.add_pod_group_member(pod)
    result = s._run_root_scheduling_algorithm(fw, CycleState(), info(gang(), pods))
    assert result.status.code() == U

    class Result:
        nominating_infos = {("default", "p1"): NominatingInfo("node1", NominatingMode.OVERRIDE)}
    s._apply_pod_group_post_filter_result(result, Result(), Status(Code.SUCCESS))
    assert result.waiting_on_preemption
    assert result.pod_results[0].result.nominating_info.nominated_node_name == "node1"


def test_default_profile_post_filter_is_workload_aware_preemption():
    """With the default profile a group that does not fit runs DynamicResources' and
    DefaultPreemption's PodGroupPostFilter (defaultpreemption/tests/test_podgroup_preemption.py):
    nothing of lower priority to preempt is UnschedulableAndUnresolvable, whose text alone is
    appended."""
    s = scheduler(config(no_post_filter=False), nodes=("n0",), cpu="1")
    s.add(gang("g", 2))
    s.add_pods([member("m0", "g", cpu="1"), member("m1", "g", cpu="1")])
    m0, m1 = s.run(until=1)
    assert m0.message == ("pod group is unschedulable, minCount (2) cannot be satisfied: 1 scheduled, 0 remaining, "
                          "pod group preemption: No preemption victims found for incoming preemptor")
    assert m1.message == "0/1 nodes are available: 1 Insufficient cpu."


def test_post_filter_missing_raises():
    """A plugin without the method in a hand-made list raises upstream's framework build error
    (a profile naming one does not build)."""
    class NoMethod:
        def name(self):
            return "X"
    with pytest.raises(PodGroupPostFilterMissing, match='^plugin "X" does not extend PodGroupPostFilterPlugin plugin$'):
        run_pod_group_post_filter_plugins([NoMethod()], None, None, None)


def test_gate_off_pods_are_scheduled_alone():
    s = Scheduler(config())
    s.add_nodes([make_node("n0", cpu="4")])
    s.add_pods([member("m0", "g")])
    (r,) = s.run()
    assert r.status == SCHEDULED and s.cache.pod_group_states == {}


def test_run_without_until_ends_for_a_gang_that_never_fits():
    """run() stops once every member of a failing gang is settled on the unchanged cluster (a
    group is requeued by backoff, never parked by events): after one attempt, as a single pod that
    does not fit. (The PodGroup's condition written after the attempt is no cluster change for
    settling: no plugin reads it. It was counted once, which made two attempts here.)"""
    s = scheduler(nodes=("n0",), cpu="1")
    s.add(gang("g", 2))
    s.add_pods([member("m0", "g", cpu="1"), member("m1", "g", cpu="1")])
    results = s.run()
    assert [r.status for r in results] == [UNSCHEDULABLE, UNSCHEDULABLE]
    assert all(r.attempts == 1 for r in results)
    assert s.cluster.get_object("PodGroup", "g", "default").conditions  # the condition was written


def test_manifests_keep_scheduling_group_with_the_gate():
    """The Cluster is the API server: it loads manifests with the Scheduler's gates, so a pod's
    spec.schedulingGroup is kept with GenericWorkload and dropped without it."""
    manifests = [
        {"apiVersion": "scheduling.k8s.io/v1beta1", "kind": "PodGroup", "metadata": {"name": "g"},
         "spec": {"schedulingPolicy": {"gang": {"minCount": 2}}}},
        *({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": f"m{i}"},
           "spec": {"schedulingGroup": {"podGroupName": "g"},
                    "containers": [{"name": "c", "image": "i", "resources": {"requests": {"cpu": "1"}}}]}}
          for i in range(2)),
    ]
    s = scheduler(nodes=("n0",), cpu="1")
    s.add(manifests)
    assert {p.pod_group_name for p in s.cluster.pods.values()} == {"g"}
    assert [r.status for r in s.run()] == [UNSCHEDULABLE, UNSCHEDULABLE]
    off = Scheduler(config())
    off.add_nodes([make_node("n0", cpu="1")])
    off.add(manifests)
    assert {p.scheduling_group for p in off.cluster.pods.values()} == {None}
    assert sorted(r.status for r in off.run()) == [SCHEDULED, UNSCHEDULABLE]


# -- TestSubmitPodGroupAlgorithmResult ----------------------------------------------------------------
def _ok_result(host="node1"):
    return ("ok", host, None)


def _failed(code=U, nominate=None, message=None):
    return ("failed", nominate, Status(code, message) if message else Status(code))


SCHEDULED_COND = {"type": "PodGroupInitiallyScheduled", "status": "True", "reason": "Scheduled",
                  "message": "All pods scheduled", "lastTransitionTime": "2026-01-01T00:00:00Z",
                  "observedGeneration": 0}
SUBMIT = {
    "All pods feasible": (None, None, False, {"p1": _ok_result(), "p2": _ok_result(), "p3": _ok_result()},
                          {"p1", "p2", "p3"}, {}, set(), ("True", "Scheduled", ""), set()),
    "All pods feasible, but podGroup unschedulable": (
        None, Status(U, "not enough capacity for the gang"), False,
        {"p1": _ok_result(), "p2": _ok_result(), "p3": _ok_result()}, set(), {}, {"p1", "p2", "p3"},
        ("False", "Unschedulable", "not enough capacity for the gang"), set()),
    "One unschedulable": (None, None, False, {"p1": _ok_result(), "p2": _failed(), "p3": _ok_result()},
                          {"p1", "p3"}, {}, {"p2"}, ("True", "Scheduled", ""), {"p2"}),
    "All pods unschedulable": (
        None, Status(U, "0/3 nodes are available: insufficient cpu"), False,
        {"p1": _failed(), "p2": _failed(), "p3": _failed()}, set(), {}, {"p1", "p2", "p3"},
        ("False", "Unschedulable", "0/3 nodes are available: insufficient cpu"), set()),
    "Unschedulable for the entire pod group": (
        None, Status(U, "node affinity mismatch"), False, {"p1": _failed(), "p2": _failed(), "p3": _failed()},
        set(), {}, {"p1", "p2", "p3"}, ("False", "Unschedulable", "node affinity mismatch"), set()),
    "Error for one pod": (
        None, Status(E, "plugin returned error"), False,
        {"p1": _ok_result(), "p2": _failed(E, message="plugin returned error"),
         "p3": _failed(E, message="plugin returned error")}, set(), {}, {"p1", "p2", "p3"},
        ("False", "SchedulerError", "plugin returned error"), set()),
    "Already Scheduled, successful cycle keeps condition": (
        SCHEDULED_COND, None, False, {"p1": _ok_result(), "p2": _ok_result(), "p3": _ok_result()},
        {"p1", "p2", "p3"}, {}, set(), ("True", "Scheduled", ""), set()),
    "Already Scheduled, rejected cycle does not regress condition": (
        SCHEDULED_COND, Status(U, "extra pods could not be placed"), False,
        {"p1": _failed(), "p2": _failed(), "p3": _failed()}, set(), {}, {"p1", "p2", "p3"},
        ("True", "Scheduled", "All pods scheduled"), set()),
    "Already Scheduled, error cycle does not regress condition": (
        SCHEDULED_COND, Status(E), False, {"p1": _ok_result(), "p2": _failed(E), "p3": _failed(E)}, set(), {},
        {"p1", "p2", "p3"}, ("True", "Scheduled", "All pods scheduled"), set()),
    "PodGroup waiting on preemption uses nominating info instead of suggested host for successfully evaluated pods": (
        None, Status(U, "waiting on preemption"), True,
        {"p1": ("ok", "node1", NominatingInfo("node2", NominatingMode.OVERRIDE)), "p2": _failed(), "p3": _failed()},
        set(), {"p1": "node2"}, {"p2", "p3"}, ("False", "Unschedulable", "waiting on preemption"), set()),
    "Different number of pods in result and queue, should fail all queue pods": (
        None, Status(E), False, {"p1": _ok_result()}, set(), {}, {"p1", "p2", "p3"},
        ("False", "SchedulerError", "scheduling error for pod group, some pods were not processed"), set()),
}


@pytest.mark.parametrize("name", list(SUBMIT))
def test_submit_pod_group_algorithm_result(name):
    from fastsched.scheduler.schedule_one_podgroup import AlgorithmResult, PodGroupAlgorithmResult
    from fastsched.scheduler.schedule_one import PodsToActivate, ScheduleResult
    (existing, status, waiting, per_pod, want_bound, want_preempting, want_failed, want_cond,
     want_active) = SUBMIT[name]
    minimal = {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
               "profiles": [{"schedulerName": "test-scheduler", "plugins": {
                   "multiPoint": {"disabled": [{"name": "*"}]}, "queueSort": {"enabled": [{"name": "PrioritySort"}]},
                   "bind": {"enabled": [{"name": "DefaultBinder"}]}}}]}
    s = scheduler(minimal)
    s.add(gang())
    if existing:  # the condition an earlier cycle wrote (a status write: creating resets the status)
        s.update_object(s.cluster.get_object("PodGroup", "pg", "default").replace(conditions=(existing,)))
    pods = [member(f"p{i}", scheduler="test-scheduler") for i in (1, 2, 3)]
    for i, pod in enumerate(pods):
        s.clock.advance_to(float(i))
        s.add_pods([pod])
    entity = s.queue.pop()
    fw = s.profiles["test-scheduler"]
    preempting: dict = {}
    failed: set = set()
    original = s._handle_failure

    def failure_handler(fw_, qpi, st, err, nominating, started):
        if nominating is not None and nominating.nominated_node_name:
            preempting[qpi.pod.name] = nominating.nominated_node_name
        else:
            failed.add(qpi.pod.name)
        original(fw_, qpi, st, err, nominating, started)
    s._handle_failure = failure_handler
    result = PodGroupAlgorithmResult(entity, status if status is not None else Status(Code.SUCCESS),
                                     waiting_on_preemption=waiting)
    for member_ in entity.members:
        got = per_pod.get(member_.pod.name)
        if got is None:
            continue
        kind, host_or_nominate, extra = got
        state = CycleState()
        if kind == "ok":
            sr = ScheduleResult(suggested_host=host_or_nominate, nominating_info=extra)
            result.pod_results.append(AlgorithmResult(member_, sr, state, PodsToActivate(), None))
        else:
            sr = ScheduleResult(nominating_info=host_or_nominate)
            result.pod_results.append(AlgorithmResult(member_, sr, state, PodsToActivate(), extra))
    s._submit_pod_group_algorithm_result(fw, entity, result, 0.0, result.status)
    s._finish_permitted_bindings()
    bound = {r.pod.name for r in s.pod_results() if r.status == SCHEDULED}
    assert (bound, preempting, failed) == (want_bound, want_preempting, want_failed)
    (cond,) = s.cluster.get_object("PodGroup", "pg", "default").conditions
    assert (cond["status"], cond["reason"], cond["message"]) == want_cond
    active = {p.name for p in s.queue.pods_in_active_q()}
    assert active == want_active


# -- TestPodGroupCycle_NominatedNodes / TestPodGroupCycle_PodGroupPostFilter ----------------------------
class FakeGroupPreemption(FilterPlugin):
    """fakePodGroupPlugin as a Filter (rejecting every pod) and a PodGroupPostFilter answering
    ``status`` with the given nominations (by pod name)."""

    status: Status | None = None
    nominations: dict = {}
    calls = 0

    def __init__(self, args=None, handle=None):
        pass

    def name(self):
        return "FakeGroupPreemption"

    def filter(self, state, pod, node_info):
        return Status(Code.UNSCHEDULABLE, "default fake filter failure")

    def pod_group_post_filter(self, state, pg_info, scheduling_func):
        FakeGroupPreemption.calls += 1

        class Result:
            nominating_infos = {(p.namespace, p.name): self.nominations.get(p.name)
                                for p in pg_info.unscheduled_pods()}
        return Result(), self.status


def _post_filter_scheduler(status, nominations):
    FakeGroupPreemption.status, FakeGroupPreemption.nominations, FakeGroupPreemption.calls = status, nominations, 0
    cfg = {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
           "profiles": [{"schedulerName": "test-scheduler", "plugins": {
               "multiPoint": {"disabled": [{"name": "*"}]}, "queueSort": {"enabled": [{"name": "PrioritySort"}]},
               "filter": {"enabled": [{"name": "FakeGroupPreemption"}]},
               "podGroupPostFilter": {"enabled": [{"name": "FakeGroupPreemption"}]},
               "bind": {"enabled": [{"name": "DefaultBinder"}]}}}]}
    s = scheduler(cfg, registry=Registry({"FakeGroupPreemption": FakeGroupPreemption}))
    s.add(gang())
    pods = [member("p1", scheduler="test-scheduler"), member("p2", scheduler="test-scheduler")]
    s.add_pods(pods)
    return s, s.queue.pop()


def test_pod_group_cycle_nominated_nodes():
    s, entity = _post_filter_scheduler(Status(Code.SUCCESS),
                                       {"p1": NominatingInfo("node1", NominatingMode.OVERRIDE)})
    captured: dict = {}
    original = s._handle_failure

    def failure_handler(fw_, qpi, st, err, nominating, started):
        captured[qpi.pod.name] = nominating
        original(fw_, qpi, st, err, nominating, started)
    s._handle_failure = failure_handler
    s._pod_group_cycle(s.profiles["test-scheduler"], CycleState(), entity, 0.0)
    assert FakeGroupPreemption.calls == 1
    assert captured["p1"].nominated_node_name == "node1" and captured["p2"] is None


def test_pod_group_cycle_post_filter_text_in_the_condition():
    """applyPodGroupPostFilterResult: a rejected PodGroupPostFilter's text is appended to the
    group's status (the condition), the members keep their own FitErrors."""
    s, entity = _post_filter_scheduler(Status(Code.UNSCHEDULABLE, "pod group preemption: no victims"), {})
    s._pod_group_cycle(s.profiles["test-scheduler"], CycleState(), entity, 0.0)
    (cond,) = s.cluster.get_object("PodGroup", "pg", "default").conditions
    assert (cond["reason"], cond["message"]) == ("Unschedulable", "pod group is unschedulable, "
                                                 "pod group preemption: no victims")
    assert s.results["p1"].message == "0/1 nodes are available: 1 default fake filter failure."


# -- TestSkipPodGroupPodSchedule / TestPodGroupCycle_FillsPodResultsOnFewerResults ----------------------
def test_skip_pod_group_pod_schedule():
    s = scheduler()
    s.add(gang())
    p1, p2, p3 = member("p1"), member("p2"), member("p3")
    s.cluster.add_pod(p1)
    s.cluster.add_pod(p2.replace(deletion_timestamp=1.0))
    s.cluster.add_pod(p3)
    s.cache.assume_pod(p3.with_node_name("node1"))
    entity = info(gang(), [p1, p2, p3])
    s._skip_pod_group_pod_schedule(entity)
    assert [p.name for p in entity.unscheduled_pods()] == ["p1"] and entity.size() == 1


class ErrorFilter(FilterPlugin):
    def __init__(self, args=None, handle=None):
        pass

    def name(self):
        return "FakePodGroupPlugin"

    def filter(self, state, pod, node_info):
        if pod.name == "p2":
            return Status(Code.ERROR, "filter error for p2")
        return None


def test_pod_group_cycle_fills_pod_results_on_fewer_results():
    s = scheduler(config("FakePodGroupPlugin", scheduler_name="test-scheduler"),
                  registry=Registry({"FakePodGroupPlugin": ErrorFilter}))
    s.add(gang())
    s.add_pods([member(f"p{i}", scheduler="test-scheduler") for i in (1, 2, 3)])
    handled: dict = {}
    original = s._handle_failure

    def failure_handler(fw_, qpi, st, err, nominating, started):
        handled[qpi.pod.name] = st
        original(fw_, qpi, st, err, nominating, started)
    s._handle_failure = failure_handler
    s.schedule_one_pod_group(s.queue.pop())
    group_error = ('failed to schedule other pod from a pod group: running "FakePodGroupPlugin" filter plugin: '
                   'filter error for p2')
    assert str(handled["p1"].as_error()) == group_error and str(handled["p3"].as_error()) == group_error
    assert str(handled["p2"].as_error()) == 'running "FakePodGroupPlugin" filter plugin: filter error for p2'
    (cond,) = s.cluster.get_object("PodGroup", "pg", "default").conditions
    assert (cond["reason"], cond["message"]) == ("SchedulerError", group_error)


def test_fork_with_pod_groups_queued():
    """A fork copies the queue's pod group entities and their members' PodInfos."""
    from fastsched.scheduler.fork import fork_scheduler
    s = scheduler(nodes=("n0", "n1"))
    s.add(gang("g", 3))
    s.add_pods([member("m0", "g"), member("m1", "g")])  # gated: minCount 3
    s.add_pods([member("x0", "other")])  # incomplete: no PodGroup "other"
    s.run(until=1)
    clone = fork_scheduler(s)
    clone.add_pods([member("m2", "g")])
    assert all(r.status == SCHEDULED for r in clone.run(until=2) if r.pod.pod_group_name == "g")
    assert {r.pod.name: r.status for r in s.pod_results()}["m0"] != SCHEDULED
    assert s.queue.get_pod_group("default", "g").size() == 2


# -- Priority admission of PodGroups (plugin/pkg/admission/priority: admitPodGroup) --------------------
def _priority_class(name, value, global_default=False):
    return {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": name},
            "value": value, "globalDefault": global_default}


def test_pod_group_priority_admission():
    from fastsched.api import ManifestError
    s = scheduler(nodes=("n0",))
    s.add([_priority_class("low", 5, global_default=True), _priority_class("high", 100)])
    s.add(gang("g", 1))
    s.add(gang("h", 1).replace(priority_class_name="high"))
    assert (s.cluster.get_object("PodGroup", "g", "default").priority,
            s.cluster.get_object("PodGroup", "g", "default").priority_class_name) == (5, "low")
    assert s.cluster.get_object("PodGroup", "h", "default").priority == 100
    with pytest.raises(ManifestError, match='podgroups.scheduling.k8s.io "x" is forbidden: no PriorityClass with '
                                            'name missing was found'):
        s.add(gang("x").replace(priority_class_name="missing"))
    with pytest.raises(ManifestError, match=r"priority set in the pod group \(7\) must match the priority computed "
                                            r"\(5\) based on the priority class set in the spec"):
        s.add(gang("y", priority=7))
    # the members get the default class too: the group validates and schedules
    s.add_pods([member("m0", "g")])
    assert [r.status for r in s.run()] == [SCHEDULED]


# TestAdmitPodGroup: (classes, PodGroup changes, GenericWorkload, PodGroupPreemptionPolicy, error or None,
# (priorityClassName, priority, preemptionPolicy) admitted). The classes are upstream's test classes:
# default1 (1000, global default), nondefault1 (2000), nopreemptionpolicy (2000, global default,
# PreemptLowerPriority). The "update operation is a no-op" row has no counterpart: fastsched's PodGroups
# change only through the scheduler's condition patches, which admission does not see.
_DEFAULT1 = _priority_class("default1", 1000, global_default=True)
_NONDEFAULT1 = _priority_class("nondefault1", 2000)
_POLICY_CLASS = {**_priority_class("nopreemptionpolicy", 2000, global_default=True),
                 "preemptionPolicy": "PreemptLowerPriority"}
_NEVER_CLASS = {**_priority_class("never", 2000), "preemptionPolicy": "Never"}
_FORBIDDEN = 'podgroups.scheduling.k8s.io "test-podgroup" is forbidden: '
ADMIT_POD_GROUP = {
    "pod group with empty priorityClassName, accepted and set to global default": (
        [_DEFAULT1, _NONDEFAULT1], {}, True, False, None, ("default1", 1000, None)),
    "pod group with explicit priorityClassName, accepted": (
        [_DEFAULT1, _NONDEFAULT1], {"priorityClassName": "nondefault1"}, True, False, None,
        ("nondefault1", 2000, None)),
    "pod group with non-existent priorityClassName, rejected": (
        [_DEFAULT1, _NONDEFAULT1], {"priorityClassName": "non-existent"}, True, False,
        _FORBIDDEN + "no PriorityClass with name non-existent was found", None),
    "pod group with any priorityClassName but feature gate disabled, skips validation": (
        [_DEFAULT1, _NONDEFAULT1], {"priorityClassName": "non-existent"}, False, False, None,
        ("non-existent", None, None)),
    "pod group with no priorityClassName and no global default, accepted and priority should be zero": (
        [_NONDEFAULT1], {}, True, False, None, ("", 0, None)),
    "pod group create with pre-set Priority matching computed value, accepted": (
        [_DEFAULT1, _NONDEFAULT1], {"priorityClassName": "nondefault1", "priority": 2000}, True, False, None,
        ("nondefault1", 2000, None)),
    "pod group create with pre-set Priority not matching computed value, rejected": (
        [_DEFAULT1, _NONDEFAULT1], {"priorityClassName": "nondefault1", "priority": 9999}, True, False,
        _FORBIDDEN + "priority set in the pod group (9999) must match the priority computed (2000) based on the "
                     "priority class set in the spec", None),
    # (gate off: the API server's strategy drops the field before admission sees it)
    "pod group with any preemptionPolicy but PodGroupPreemptionPolicy gate disabled, skips validation": (
        [_POLICY_CLASS], {"priorityClassName": "nopreemptionpolicy", "preemptionPolicy": "Never"}, True, False, None,
        ("nopreemptionpolicy", 2000, None)),
    "pod group with nil preemption policy": (
        [_POLICY_CLASS], {"priorityClassName": "nopreemptionpolicy"}, True, True, None,
        ("nopreemptionpolicy", 2000, "PreemptLowerPriority")),
    "pod group with preemption policy that matches preemption policy resolved from priority class": (
        [_POLICY_CLASS], {"priorityClassName": "nopreemptionpolicy", "preemptionPolicy": "PreemptLowerPriority"},
        True, True, None, ("nopreemptionpolicy", 2000, "PreemptLowerPriority")),
    "pod group with preemption policy that doesn't match preemption policy resolved from priority class": (
        [_POLICY_CLASS], {"priorityClassName": "nopreemptionpolicy", "preemptionPolicy": "Never"}, True, True,
        _FORBIDDEN + "the string value of PreemptionPolicy (Never) must not be provided in pod group spec; priority "
                     "admission controller computed PreemptLowerPriority from the given PriorityClass name", None),
    # fastsched's own rows: the API server defaults before it admits, so a Never class needs the policy
    # written; without any class the policy is PreemptLowerPriority (getDefaultPriority)
    "Never class, policy written": (
        [_NEVER_CLASS], {"priorityClassName": "never", "preemptionPolicy": "Never"}, True, True, None,
        ("never", 2000, "Never")),
    "Never class, policy defaulted to PreemptLowerPriority first": (
        [_NEVER_CLASS], {"priorityClassName": "never"}, True, True,
        _FORBIDDEN + "the string value of PreemptionPolicy (PreemptLowerPriority) must not be provided in pod group "
                     "spec; priority admission controller computed Never from the given PriorityClass name", None),
    "no class at all, Never refused": (
        [], {"preemptionPolicy": "Never"}, True, True,
        _FORBIDDEN + "the string value of PreemptionPolicy (Never) must not be provided in pod group spec; priority "
                     "admission controller computed PreemptLowerPriority from the given PriorityClass name", None),
}


@pytest.mark.parametrize("name", list(ADMIT_POD_GROUP))
def test_admit_pod_group(name):
    from fastsched.api import ManifestError
    classes, spec, generic, policy, error, want = ADMIT_POD_GROUP[name]
    s = Scheduler(config(), feature_gates=FeatureGates({"GenericWorkload": generic,
                                                        "PodGroupPreemptionPolicy": policy}))
    if classes:
        s.add([dict(c) for c in classes])
    doc = {"apiVersion": "scheduling.k8s.io/v1beta1", "kind": "PodGroup",
           "metadata": {"name": "test-podgroup", "namespace": "default"},
           "spec": {"schedulingPolicy": {"basic": {}}, **spec}}
    if error is not None:
        with pytest.raises(ManifestError) as exc:
            s.add(doc)
        assert error in str(exc.value)
        assert s.cluster.get_object("PodGroup", "test-podgroup", "default") is None
        return
    s.add(doc)
    pg = s.cluster.get_object("PodGroup", "test-podgroup", "default")
    assert (pg.priority_class_name, pg.priority, pg.preemption_policy) == want


def test_pod_group_priority_admission_needs_the_gate():
    s = Scheduler(config())
    s.add([_priority_class("low", 5, global_default=True)])
    s.add(gang("g", 1))
    assert s.cluster.get_object("PodGroup", "g", "default").priority is None


def test_decision_records_cover_group_members():
    """Scheduler(record=...): each member tried in a group's cycle has its record (its Filter and
    Score, its node), ended by its binding or by the group's verdict."""
    s = Scheduler(config(), feature_gates=workload_gates(), record="all")
    s.add_nodes([make_node("n0", cpu="1"), make_node("n1", cpu="2")])
    s.add(gang("ok", 2))
    s.add_pods([member("a0", "ok", cpu="300m"), member("a1", "ok", cpu="300m")])
    s.run()
    for uid in ("a0", "a1"):
        (rec,) = s.results[uid].history
        assert (rec.outcome, rec.selected_node) == (SCHEDULED, "n1")
        assert rec.filter_node_names.tolist() == ["n0", "n1"] and "NodeResourcesFit" in rec.score_plugins
    s = Scheduler(config(), feature_gates=workload_gates(), record="all")
    s.add_nodes([make_node("n0", cpu="1")])
    s.add(gang("big", 2))
    s.add_pods([member("b0", "big", cpu="600m"), member("b1", "big", cpu="600m")])
    s.run(max_attempts=1)
    r0, r1 = s.results["b0"].history[0], s.results["b1"].history[0]
    assert (r0.outcome, r0.selected_node) == (UNSCHEDULABLE, "n0")  # fit alone; the group did not
    assert r0.message == ("pod group is unschedulable, minCount (2) cannot be satisfied: 1 scheduled, 0 remaining, ")
    assert r1.outcome == UNSCHEDULABLE and not r1.selected_node
    assert r1.message == "0/1 nodes are available: 1 Insufficient cpu."


class _FailingBindingBase:
    def name(self):
        return "FailingBinding"


def _FailingBinding(point: str):  # noqa: N802
    """A Bind or PreBind plugin that always fails (an API that keeps refusing); plugin kinds are
    found by the class's methods."""
    def fail(self, state, pod, node_name):
        return Status(Code.ERROR, "api down")

    return type(f"Failing_{point}", (_FailingBindingBase,), {point: fail})()


@pytest.mark.parametrize("point", ["bind", "pre_bind"])
@pytest.mark.parametrize("members,min_count", [(2, 2), (4, 2), (5, None)])
def test_run_without_until_ends_for_a_gang_whose_bindings_keep_failing(point, members, min_count):
    """A group whose members fail at binding is requeued after each cycle (upstream retries it
    after its backoff, forever): run() without until parks it once every member failed twice on
    the unchanged cluster, and loses no member."""
    plugin = _FailingBinding(point)
    extension = {"bind": "bind", "pre_bind": "preBind"}[point]
    cfg = config()
    plugins = cfg["profiles"][0]["plugins"]
    plugins[extension] = {"enabled": [{"name": "FailingBinding"}]}
    if point == "bind":
        plugins[extension]["disabled"] = [{"name": "DefaultBinder"}]
    s = Scheduler(load_config(cfg, registry_names=["FailingBinding"]),
                  registry=Registry({"FailingBinding": lambda a, h: plugin}), feature_gates=workload_gates())
    s.add_nodes([make_node(f"n{i}", cpu="4") for i in range(3)])
    s.add(gang("g", min_count))
    s.add_pods([member(f"m{i}", "g", cpu="300m") for i in range(members)])
    # (a cap far above what the run needs, so that a regression fails instead of hanging)
    results = s.run(max_attempts=200)
    assert len(results) == members
    assert all(r.status == "Error" and "api down" in r.message and not r.node_name for r in results)
    assert all(2 <= r.attempts <= 4 for r in results)
    assert s.cache.pod_count() == 0  # nothing stays assumed
