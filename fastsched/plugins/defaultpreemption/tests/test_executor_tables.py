"""Upstream v1.37.2 ``pkg/scheduler/framework/preemption/executor_test.go`` tables that decide
answers, transcribed as data: ``TestPrepareCandidate`` (every row; both
SchedulerAsyncPreemption settings, as upstream's loop), ``TestAsyncPreemptionFailure`` (every row),
``TestPrepareCandidateAsyncActivatesPreemptorAfterLastVictimInMemoryPreemption`` (the waiting-pod rows),
``TestPrepareCandidateAsyncSetsPreemptingSets`` (every row, each preemptor type),
``TestRemoveNominatedNodeName`` (every row), ``TestIsPodRunningPreemption`` /
``TestIsPodGroupRunningPreemption`` (the rows fastsched's state can hold) and ``TestPreemptPod``
(the rows fastsched can reach). The skipped rows and tables are listed at each table.

The client plays upstream's fake clientset reactors: a victim named ``fail-victim`` fails its API
call (with the row's error), ``not-found-victim`` answers NotFound, any other is deleted.
"""
from __future__ import annotations

from types import SimpleNamespace

import pytest

from fastsched.api.compositepodgroup import CompositePodGroup
from fastsched.api.scheduling import PodGroup
from fastsched.errors import NotFoundError
from fastsched.extender.extender import Victims
from fastsched.framework.status import Code
from fastsched.framework.types import PodInfo
from fastsched.plugins.defaultpreemption.podgroup_preemption import (GroupVictims, PodGroupEvaluator, PodGroupPreemptor,
                                                                     SelectVictimsResult)
from fastsched.plugins.defaultpreemption.preemption import Candidate, Evaluator
from fastsched.testing import make_pod

MID, HIGH = 100, 1000
COND = {"type": "DisruptionTarget", "status": "True", "reason": "PreemptionByScheduler",
        "message": "default-scheduler: preempting to accommodate a higher priority pod"}
ERR_DELETE, ERR_PATCH = "delete pod failed", "patch pod status failed"


def _victim(name, uid="victim1", priority=MID, conditions=(), deleting=False):
    p = make_pod(name, uid=uid, priority=priority, node_name="node1").replace(conditions=tuple(conditions))
    return p.replace(deletion_timestamp=0.0) if deleting else p


VICTIMS = {
    "victim1": _victim("victim1"),
    "notFoundVictim1": _victim("not-found-victim"),
    "failVictim": _victim("fail-victim"),
    "victim2": _victim("victim2", uid="victim2", priority=50000),
    "victim1WithMatchingCondition": _victim("victim1", conditions=(COND,)),
    "failVictim1WithMatchingCondition": _victim("fail-victim", conditions=(COND,)),
    "victimWithDeletionTimestamp": _victim("victim1-with-deletion-timestamp", uid="victim1-with-deletion-timestamp",
                                           deleting=True),
}
PREEMPTOR = make_pod("preemptor", uid="preemptor", priority=HIGH)


class ReactorClient:
    """upstream's clientset reactors (delete and patch) for TestPrepareCandidate."""

    def __init__(self, victims, failure):
        self.failure = failure  # the error of fail-victim's call
        self.gone = {v.uid for v in victims if v.name == "not-found-victim"}
        self.deleted: list[str] = []

    def get_pod_by_uid(self, uid):
        return None if uid in self.gone else object()

    def preempt_pod(self, victim, preemptor, node_name):
        if victim.name == "fail-victim":
            raise RuntimeError(self.failure)
        if victim.name == "not-found-victim":
            raise NotFoundError(f'pods "{victim.name}" not found')
        self.deleted.append(victim.name)

    def clear_nominated_node_name(self, p):
        pass


class CapturingClock:
    """Holds the asynchronous calls so the preempting set can be read before they land (upstream's
    fakePodNominator holding the goroutine back)."""

    def __init__(self):
        self.pending = []

    def after_func(self, delay, fn):
        self.pending.append(fn)


# TestPrepareCandidate, the pod-preemptor rows: (candidate node, victims, failing call's error,
# expected deleted pod (any of; "" for none), expected status error (sync), expected preempting
# set (async), expected activated pods (async))
PREPARE_CANDIDATE = {
    "no victims": ("", [], None, [], None, set(), None),
    "one victim without condition": ("node1", ["victim1"], None, ["victim1"], None, {"preemptor"}, None),
    "one victim, but victim is already being deleted": ("node1", ["victimWithDeletionTimestamp"], None, [], None,
                                                        set(), None),
    "one victim, but victim is already deleted": ("node1", ["notFoundVictim1"], None, [], None, {"preemptor"}, None),
    "one victim with same condition": ("node1", ["victim1WithMatchingCondition"], None, ["victim1"], None,
                                       {"preemptor"}, None),
    "one victim, not-found victim error is ignored when patching": ("node1", ["victim1WithMatchingCondition"], None,
                                                                    ["victim1"], None, {"preemptor"}, None),
    "one victim, but pod deletion failed": ("node1", ["failVictim1WithMatchingCondition"], ERR_DELETE, [], ERR_DELETE,
                                            {"preemptor"}, ["preemptor"]),
    "one victim, not-found victim error is ignored when deleting": ("node1", ["victim1"], None, ["victim1"], None,
                                                                    {"preemptor"}, None),
    "one victim, but patch pod failed": ("node1", ["failVictim"], ERR_PATCH, [], ERR_PATCH, {"preemptor"},
                                         ["preemptor"]),
    "two victims without condition, one passes successfully and the second fails": (
        "node1", ["failVictim", "victim2"], ERR_PATCH, ["victim2", ""], ERR_PATCH, {"preemptor"}, ["preemptor"]),
    # (its metrics are not checked: fastsched keeps no preemption metrics per PDB violation)
    "metrics: pod preemptor with PDB violations": ("node1", ["victim1"], None, ["victim1"], None, {"preemptor"}, None),
}


def _evaluator(client, clock, activated, async_on):
    handle = SimpleNamespace(client=client, clock=clock, activate=lambda pods: activated.extend(sorted(pods)),
                             nominated_pods_for_node=lambda node_name: [])
    ev = Evaluator("test-plugin", handle, None, enable_async_preemption=async_on)
    ev.api_delay = 1.0
    return ev


def _check_deleted(got, want):
    assert len(got) <= 1
    if not want:
        assert got == []
    else:
        assert (got[0] if got else "") in want


@pytest.mark.parametrize("async_on", [True, False], ids=["async", "sync"])
@pytest.mark.parametrize("name", list(PREPARE_CANDIDATE), ids=list(PREPARE_CANDIDATE))
def test_prepare_candidate(name, async_on):
    node, victim_ids, failure, want_deleted, want_err, want_preempting, want_activated = PREPARE_CANDIDATE[name]
    victims = [VICTIMS[v] for v in victim_ids]
    client, clock, activated = ReactorClient(victims, failure), CapturingClock(), []
    ev = _evaluator(client, clock, activated, async_on)
    c = Candidate(node, Victims(victims, num_pdb_violations=3 if name.startswith("metrics") else 0))
    if async_on:
        ev.prepare_candidate_async(c, PREEMPTOR, "test-plugin")
        assert ev.preempting == want_preempting  # registered at once
        for fn in clock.pending:
            fn()
        assert activated == (want_activated or [])
    else:
        status = ev.prepare_candidate(c, PREEMPTOR, "test-plugin")
        if want_err is None:
            assert status is None
        else:
            assert status is not None and status.code() == Code.ERROR and status.message() == want_err
    assert ev.preempting == set()
    _check_deleted(client.deleted, want_deleted)


# TestIsPodRunningPreemption / TestIsPodGroupRunningPreemption (the same rows, a pod's or a pod
# group's UID): (preempting set, want). fastsched evicts the last victim in the same step as the
# preemptor leaves the preempting set (see preemption.py's module docstring), so upstream's
# lastVictimsPendingPreemption never holds an entry while the UID is still preempting; the rows
# "preemptor in preemptingSet, victim in lastVictimSet, not in PodLister", "... and in PodLister"
# and "... with deletion timestamp" describe a state fastsched never has and are not transcribed.
IS_RUNNING = {
    "preemptor not in preemptingSet": (set(), False),
    "preemptor not in preemptingSet, lastVictimSet not empty": (set(), False),
    "preemptor in preemptingSet, no lastVictim for preemptor": ({"preemptor"}, True),
}


@pytest.mark.parametrize("name", list(IS_RUNNING), ids=list(IS_RUNNING))
def test_is_pod_running_preemption(name):
    preempting, want = IS_RUNNING[name]
    ev = _evaluator(None, None, [], True)
    ev.preempting = set(preempting)
    assert ev.is_pod_running_preemption("preemptor") is want


class _WaitingPod:
    def __init__(self):
        self.preempted_by = None

    def preempt(self, plugin_name, msg):
        self.preempted_by = plugin_name
        return True


class _RecordingClient:
    def __init__(self):
        self.deleted: list[str] = []

    def preempt_pod(self, victim, preemptor, node_name):
        self.deleted.append(victim.name)


# TestPreemptPod: (victim is waiting at Permit, want preempted in memory, want deleted). Row "victim
# is in preBind, context should be cancelled" is not transcribed: fastsched binds within the
# scheduling loop, so no victim is ever in PreBind.
PREEMPT_POD = {
    "victim is in waiting pods, it should be rejected (no calls to apiserver)": (True, True, []),
    "victim is not in waiting/preBind pods, pod should be deleted": (False, False, ["victim"]),
}


@pytest.mark.parametrize("name", list(PREEMPT_POD), ids=list(PREEMPT_POD))
def test_preempt_pod(name):
    waiting_victim, want_in_memory, want_deleted = PREEMPT_POD[name]
    victim = make_pod("victim", uid="victim", node_name="fake-node")
    waiting = _WaitingPod()
    client = _RecordingClient()
    handle = SimpleNamespace(client=client, get_waiting_pod=lambda uid: waiting if waiting_victim else None)
    ev = Evaluator("test-plugin", handle, None)
    in_memory = ev.preempt_pod(Candidate("fake-node", Victims([victim])), PREEMPTOR, victim, "test-plugin")
    assert in_memory is want_in_memory and client.deleted == want_deleted
    assert waiting.preempted_by == ("test-plugin" if waiting_victim else None)


# TestPrepareCandidate, the pod-group-preemptor rows, through PodGroupEvaluator.actuate
# (actuatePodGroupPreemption): (group kind, victims, failing call's error, expected deleted pod,
# expected status error (sync), expected preempting set (async), expected activated pods (async)).
# Their metrics (workload disruptions, PDB violations) are not checked: fastsched keeps no such
# preemption metrics.
PG1 = PodGroup(name="pg1", namespace="default", uid="pg1")
CPG1 = CompositePodGroup(name="cpg1", namespace="default", uid="cpg1")
PREPARE_CANDIDATE_GROUP = {
    "podgroup preemptor, one victim without condition": (PG1, ["victim1"], None, ["victim1"], None, {"pg1"}, None),
    "compositepodgroup preemptor, one victim without condition": (CPG1, ["victim1"], None, ["victim1"], None,
                                                                  {"cpg1"}, None),
    "podgroup preemptor, one victim, but pod deletion failed": (PG1, ["failVictim1WithMatchingCondition"], ERR_DELETE,
                                                                [], ERR_DELETE, {"pg1"}, ["default/preemptor"]),
    "metrics: podgroup preemptor with workload disruptions": (PG1, ["victim1"], None, ["victim1"], None, {"pg1"},
                                                              None),
    "metrics: podgroup preemptor with PDB violations and disruptions": (PG1, ["victim1"], None, ["victim1"], None,
                                                                        {"pg1"}, None),
    # fastsched's own row (no upstream one): PreemptPod's NotFound is "already deleted" for a pod
    # group preemptor too
    "podgroup preemptor, one victim, but victim is already deleted": (PG1, ["notFoundVictim1"], None, [], None,
                                                                      {"pg1"}, None),
}


class _GroupInfo:
    def __init__(self, group):
        composite = isinstance(group, CompositePodGroup)
        self.pod_group, self.composite_pod_group = (None, group) if composite else (group, None)

    def unscheduled_pods(self):
        return [PREEMPTOR]


@pytest.mark.parametrize("async_on", [True, False], ids=["async", "sync"])
@pytest.mark.parametrize("name", list(PREPARE_CANDIDATE_GROUP), ids=list(PREPARE_CANDIDATE_GROUP))
def test_prepare_candidate_pod_group(name, async_on):
    group, victim_ids, failure, want_deleted, want_err, want_preempting, want_activated = PREPARE_CANDIDATE_GROUP[name]
    victims = [VICTIMS[v] for v in victim_ids]
    client, clock, activated = ReactorClient(victims, failure), CapturingClock(), []
    ev = _evaluator(client, clock, activated, async_on)
    pge = PodGroupEvaluator(ev.handle, ev, enable_composite_pod_group=True)
    info = _GroupInfo(group)
    res = SelectVictimsResult({}, GroupVictims(victims, 1 if "PDB" in name else 0), 2 if "disruptions" in name else 0)
    status = pge.actuate(res, info, PodGroupPreemptor.of(info, False))
    if async_on:
        assert status is None
        assert ev.preempting == want_preempting  # registered at once
        for fn in clock.pending:
            fn()
        assert activated == (want_activated or [])
    elif want_err is None:
        assert status is None
    else:
        assert status is not None and status.code() == Code.ERROR and status.message() == want_err
    assert ev.preempting == set()
    _check_deleted(client.deleted, want_deleted)


class AttemptClient:
    """TestAsyncPreemptionFailure's delete reactor: every call is an attempt; a victim whose name
    starts with ``fail-victim`` fails it, any other is deleted."""

    def __init__(self):
        self.attempted: list[str] = []
        self.deleted: list[str] = []

    def get_pod_by_uid(self, uid):
        return object()

    def preempt_pod(self, victim, preemptor, node_name):
        self.attempted.append(victim.name)
        if victim.name.startswith("fail-victim"):
            raise RuntimeError("delete pod failed")
        self.deleted.append(victim.name)

    def clear_nominated_node_name(self, p):
        pass


# TestAsyncPreemptionFailure (SchedulerAsyncPreemption on): (victims, preemptor group (None: the
# pod preemptor), expect successful preemption, expect preemption attempt for last victim)
ASYNC_FAILURE = {
    "Failure with a single victim": (["fail-victim"], None, False, True),
    "Success with a single victim": (["victim1"], None, True, True),
    "Failure in first of three victims": (["fail-victim", "victim2", "victim3"], None, False, False),
    "Failure in second of three victims": (["victim1", "fail-victim", "victim3"], None, False, False),
    "Failure in first two of three victims": (["fail-victim1", "fail-victim2", "victim3"], None, False, False),
    "Failure in third of three victims": (["victim1", "victim2", "fail-victim"], None, False, True),
    "Success with three victims": (["victim1", "victim2", "victim3"], None, True, True),
    "Failure with a single victim for pod group": (["fail-victim"], PodGroup(name="pg1", namespace="default"), False,
                                                   True),
    "Failure with a single victim for composite pod group": (
        ["fail-victim"], CompositePodGroup(name="cpg1", namespace="default"), False, True),
}


class _MembersInfo(_GroupInfo):
    def unscheduled_pods(self):
        return [make_pod("pod1", uid="pod1", priority=HIGH), make_pod("pod2", uid="pod2", priority=HIGH)]


@pytest.mark.parametrize("name", list(ASYNC_FAILURE), ids=list(ASYNC_FAILURE))
def test_async_preemption_failure(name):
    victim_names, group, want_success, want_last_attempted = ASYNC_FAILURE[name]
    victims = [make_pod(n, uid=n, priority=MID, node_name="node1") for n in victim_names]
    client, activated = AttemptClient(), []
    ev = _evaluator(client, None, activated, True)
    if group is None:
        ev.prepare_candidate_async(Candidate("node1", Victims(victims)), PREEMPTOR, "test-plugin")
        assert activated == ([] if want_success else ["preemptor"])
    else:
        info = _MembersInfo(group)
        pge = PodGroupEvaluator(ev.handle, ev, enable_composite_pod_group=True)
        pge.actuate(SelectVictimsResult({}, GroupVictims(victims)), info, PodGroupPreemptor.of(info, False))
        assert activated == ["default/pod1", "default/pod2"]  # every member of the group
    assert ev.preempting == set()
    last = victim_names[-1]
    assert (last in client.attempted) is want_last_attempted
    # the last victim is attempted if and only if every preceding one was deleted
    assert all(v in client.deleted for v in victim_names[:-1]) is (last in client.attempted)
    assert (last in client.deleted) is want_success


# TestPrepareCandidateAsyncActivatesPreemptorAfterLastVictimInMemoryPreemption, the waiting-pod
# rows: (victims, preemptor group (None: the pod preemptor), want preemptor activated). The rows
# "last preBind pod", "last pod enters preBind during preemption" and "non-last preBind pod" are
# not transcribed: fastsched binds within the scheduling loop, so no victim is ever in PreBind.
IN_MEMORY_LAST = {
    "last waiting pod": (["waiting-v"], None, True),
    "last waiting pod after API-deleted victim": (["api-v", "waiting-v"], None, True),
    "last waiting pod for pod group": (["waiting-v"], PodGroup(name="pg", namespace="default", uid="pg"), True),
    "last waiting pod for composite pod group": (["waiting-v"],
                                                 CompositePodGroup(name="cpg", namespace="default", uid="cpg"), True),
    "non-last waiting pod": (["waiting-v", "api-v"], None, False),
}


class _TwoMembers(_GroupInfo):
    def unscheduled_pods(self):
        return [make_pod("p", uid="p", priority=HIGH), make_pod("p2", uid="p2", priority=HIGH)]


@pytest.mark.parametrize("name", list(IN_MEMORY_LAST), ids=list(IN_MEMORY_LAST))
def test_async_activates_preemptor_after_last_victim_in_memory(name):
    victim_names, group, want_activate = IN_MEMORY_LAST[name]
    victims = [make_pod(n, uid=n, priority=MID, node_name="node1") for n in victim_names]
    waiting = _WaitingPod()
    client, activated = AttemptClient(), []
    ev = _evaluator(client, None, activated, True)
    preemptor_uid = group.uid if group is not None else "p"

    def activate(pods):
        # fakePodActivator: "Preemptor was activated before its preempting state was cleared"
        assert preemptor_uid not in ev.preempting
        activated.extend(sorted(pods))

    ev.handle.activate = activate
    ev.handle.get_waiting_pod = lambda uid: waiting if uid == "waiting-v" else None
    if group is None:
        ev.prepare_candidate_async(Candidate("node1", Victims(victims)), make_pod("p", uid="p", priority=HIGH),
                                   "test-plugin")
        want = ["p"]
    else:
        info = _TwoMembers(group)
        pge = PodGroupEvaluator(ev.handle, ev, plugin_name="test-plugin", enable_composite_pod_group=True)
        pge.actuate(SelectVictimsResult({}, GroupVictims(victims)), info, PodGroupPreemptor.of(info, False))
        want = ["default/p", "default/p2"]
    assert ev.preempting == set()
    assert waiting.preempted_by == "test-plugin" and "waiting-v" not in client.attempted
    assert activated == (want if want_activate else [])


# TestPrepareCandidateAsyncSetsPreemptingSets, for each preemptor type (pod, podgroup,
# compositepodgroup): (victims, last victim). Upstream keeps the preemptor's UID in ``preempting``
# during every PreemptPod call, the last one with lastVictimsPendingPreemption set (so
# IsPodRunningPreemption answers false once that victim is deleted); fastsched drops the UID just
# before the last call (see preemption.py's module docstring): the same answer by the time the
# victim's deletion lets anything read it. The rows' other checks are as upstream's.
SETS_PREEMPTING = {
    "no victims": ([], None),
    "one victim": (["victim1"], "victim1"),
    "two victims": (["victim1", "victim2"], "victim2"),
}
PREEMPTOR_TYPES = {"pod": None, "podgroup": PodGroup(name="pg1", namespace="default", uid="pg1"),
                   "compositepodgroup": CompositePodGroup(name="cpg1", namespace="default", uid="cpg1")}


@pytest.mark.parametrize("preemptor_type", list(PREEMPTOR_TYPES))
@pytest.mark.parametrize("name", list(SETS_PREEMPTING), ids=list(SETS_PREEMPTING))
def test_prepare_candidate_async_sets_preempting_sets(name, preemptor_type):
    victim_names, last = SETS_PREEMPTING[name]
    group = PREEMPTOR_TYPES[preemptor_type]
    victims = [make_pod(n, uid=n, priority=MID, node_name="node1") for n in victim_names]
    client = AttemptClient()
    ev = _evaluator(client, None, [], True)
    uid = group.uid if group is not None else PREEMPTOR.uid
    calls: list = []
    preempt = client.preempt_pod

    def preempt_pod(victim, preemptor, node_name):
        calls.append((victim.name, uid in ev.preempting))
        preempt(victim, preemptor, node_name)

    client.preempt_pod = preempt_pod
    assert ev.preempting == set()
    if group is None:
        ev.prepare_candidate_async(Candidate("node1" if victims else "", Victims(victims)), PREEMPTOR, "test-plugin")
    else:
        info = _GroupInfo(group)
        pge = PodGroupEvaluator(ev.handle, ev, enable_composite_pod_group=True)
        pge.actuate(SelectVictimsResult({}, GroupVictims(victims)), info, PodGroupPreemptor.of(info, False))
    assert ev.preempting == set()
    assert [n for n, _ in calls] == victim_names  # every victim once, the last one last
    if last is not None:
        assert calls[-1][0] == last
    assert all(held for n, held in calls if n != last)  # preempting before every call but the last


class _ClearingClient:
    def __init__(self):
        self.cleared: list[str] = []

    def clear_nominated_node_name(self, p):
        self.cleared.append(p.name)


# TestRemoveNominatedNodeName (clearNominatedNodeName, through the lower-priority nominations a
# preemption clears): (current nominatedNodeName, expect a patch request). The patch body
# (``{"status":{"nominatedNodeName":null}}``) is the API client's, not checked here.
REMOVE_NOMINATED = {
    "Should make patch request to clear node name": ("node1", True),
    "Should not make patch request if nominated node is already cleared": ("", False),
}


@pytest.mark.parametrize("name", list(REMOVE_NOMINATED), ids=list(REMOVE_NOMINATED))
def test_remove_nominated_node_name(name):
    current, want_patch = REMOVE_NOMINATED[name]
    foo = make_pod("foo", priority=0).replace(nominated_node_name=current)
    client = _ClearingClient()
    handle = SimpleNamespace(client=client, nominated_pods_for_node=lambda node_name: [PodInfo(foo)])
    ev = Evaluator("test-plugin", handle, None)
    assert ev._clear_lower_priority_nominations(PREEMPTOR, "node1") is False
    assert client.cleared == (["foo"] if want_patch else [])
