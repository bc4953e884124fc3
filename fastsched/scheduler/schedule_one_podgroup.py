"""The pod group scheduling cycle (upstream ``pkg/scheduler/schedule_one_podgroup.go``, v1.37.2).

With GenericWorkload a pop can be a whole pod group (:class:`~fastsched.framework.podgroups.
QueuedPodGroupInfo`); :meth:`PodGroupCycleMixin.schedule_one_pod_group` is ``scheduleOnePodGroup``:

1. the PodGroup object from the snapshot (gone: every member fails with the lister's error,
   no condition written), ``validatePodGroup`` (one scheduler name, every pod's priority the
   group's, one preemption policy; the group's scheduled pods included);
2. members being deleted or already assumed are dropped (``skipPodGroupPodSchedule``);
3. ``podGroupSchedulingDefaultAlgorithm`` inside one implicit placement: PlacementFeasible
   (GangScheduling) before any pod and after each; each member in member order through the
   ordinary algorithm (PostFilter skipped: a FitError is the member's Unschedulable), assumed and
   reserved; every assumption reverted at the end. A final Wait, or no pod scheduled, is
   Unschedulable ``pod group is unschedulable``;
4. untried members get the group's status; an Unschedulable group runs the PodGroupPostFilter
   plugins (workload-aware preemption, whose status text is appended to every member's);
5. ``submitPodGroupAlgorithmResult``: on success every scheduled member goes through assume,
   Reserve and Permit again (GangScheduling holds the first ``minCount - 1`` at Permit and releases
   them with the last) and its binding cycle; otherwise each member's failure is handled with its
   own status or the group's; the PodGroup's ``PodGroupInitiallyScheduled`` condition is written
   (True/Scheduled, False/Unschedulable, False/SchedulerError; never back from True), and the
   queue requeues the group with its pending members.

Each member's algorithm takes the fused compiled cycle where the profile and the pod allow it, as a
single pod's does (``_schedule_pod``): the snapshot is the cache's node table, so the members assumed
before it are in the columns the kernel reads, and their reverts are too (each assume and forget
moves the row's ``row_version``, which the plans' score caches check). The PodGroupPostFilter's
re-runs take the plugin-call path (see ``_pod_group_cycle``).
With TopologyAwareWorkloadScheduling the algorithm runs once per placement the PlacementGenerate
plugin offers (``podGroupSchedulingPlacementAlgorithm``: each assumed in the snapshot, whose
candidate nodes it limits, the default algorithm, its reverts; the best of the fitting ones by the
PlacementScore plugins); CompositePodGroup is not modelled. The in-tree PodGroupPostFilter plugins
are DynamicResources and DefaultPreemption (workload-aware preemption:
:mod:`fastsched.plugins.defaultpreemption.podgroup_preemption`); a plugin in that list without
``pod_group_post_filter`` (the framework refuses to build such a profile) raises
:class:`PodGroupPostFilterMissing` with upstream's build error.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any, Callable

from ..errors import FastschedError
from ..features import COMPOSITE_POD_GROUP, TOPOLOGY_AWARE_WORKLOAD_SCHEDULING
from ..framework.cycle_state import CycleState
from ..framework.interface import PodGroupAssignments, ProposedAssignment
from ..framework.composite import COMPOSITE_POD_GROUP_KEY_TYPE
from ..plugins.dynamicresources import assumed_with_claim_statuses
from ..plugins.gangscheduling import PERMIT_TIMEOUT_SECONDS as _GANG_PERMIT_TIMEOUT
from ..plugins.gangscheduling import GangScheduling as _GangScheduling
from ..runtime.framework import MAX_PERMIT_TIMEOUT as _MAX_PERMIT_TIMEOUT
from ..runtime.framework import _idle
from ..runtime.waiting_pods import WaitingPodImpl as _WaitingPodImpl
from ..framework.podgroups import PodGroupStateError, QueuedPodGroupInfo
from ..framework.status import Code, Status, StatusError
from ..framework.types import Diagnosis, FitError, NodeToStatus, NominatingInfo, NominatingMode, PodInfo
from ..snapshot.snapshot import PlacementError
from ..util.field import go_quote
from .result import TERMINATING, WAITING
from .schedule_one import (_TERMINATING_MESSAGE, PODS_TO_ACTIVATE_KEY, NoNodesAvailableError, PendingBinding,
                           PodsToActivate, ScheduleResult, _BatchCycle, _CycleError, num_feasible_nodes_to_find)

if TYPE_CHECKING:  # pragma: no cover
    from ..api import Pod
    from ..runtime import Framework

__all__ = ["ERR_POD_GROUP_UNSCHEDULABLE", "PLACEMENT_CYCLE_KEY", "POD_GROUP_CYCLE_KEY", "PodGroupCycleMixin",
           "PodGroupPostFilterMissing", "get_placement_cycle_state", "get_pod_group_scheduling_cycle",
           "set_placement_cycle_state",
           "run_placement_feasible_plugins", "run_pod_group_post_filter_plugins", "set_status_condition"]

#: ``errPodGroupUnschedulable``
ERR_POD_GROUP_UNSCHEDULABLE = "pod group is unschedulable"
#: the CycleState key marking a member's cycle as part of a group cycle (``SetPodGroupSchedulingCycle``)
POD_GROUP_CYCLE_KEY = "fastsched.io/pod-group-scheduling-cycle"
#: the CycleState key of ``SetPlacementCycleState``: in a member's state, the state of the placement
#: it is tried in (``GetPlacementCycleState``); in a child group's cycle state (CompositePodGroup),
#: its parent's placement state (``GetParentPlacementCycleState``: upstream's one field for both)
PLACEMENT_CYCLE_KEY = "fastsched.io/placement-cycle-state"


class _StateLink:
    """A CycleState held by reference: no ``clone``, so a cloned CycleState shares it (upstream's
    ``Clone`` copies the pointer rather than the placement's state)."""

    __slots__ = ("state",)

    def __init__(self, state: CycleState):
        self.state = state


def set_placement_cycle_state(state: CycleState, placement_state: CycleState | None) -> None:
    """``SetPlacementCycleState``."""
    if placement_state is None:
        state.delete(PLACEMENT_CYCLE_KEY)
    else:
        state.write(PLACEMENT_CYCLE_KEY, _StateLink(placement_state))


def get_placement_cycle_state(state: CycleState) -> CycleState | None:
    """``GetPlacementCycleState`` / ``GetParentPlacementCycleState``."""
    link = state.get(PLACEMENT_CYCLE_KEY)
    return None if link is None else link.state


def get_pod_group_scheduling_cycle(state: CycleState) -> CycleState | None:
    """``GetPodGroupSchedulingCycle``: a placement's (or a member's) group cycle state."""
    return state.get(POD_GROUP_CYCLE_KEY)
_GANG_SCHEDULING = "GangScheduling"
_perf_counter = time.perf_counter


def _unschedulable_group(*reasons: str) -> Status:
    """``NewStatus(Unschedulable, reasons...).WithError(errPodGroupUnschedulable)``."""
    return Status(Code.UNSCHEDULABLE, *reasons, err=StatusError(ERR_POD_GROUP_UNSCHEDULABLE))


def _as_status(err: BaseException | str) -> Status:
    return Status.from_error(err if isinstance(err, BaseException) else StatusError(err))


class PodGroupPostFilterMissing(FastschedError, TypeError):
    """A plugin in a profile's PodGroupPostFilter list without ``pod_group_post_filter``: the
    framework refuses to build such a profile (upstream's ``plugin "X" does not extend
    PodGroupPostFilterPlugin plugin``), so only a list assembled by hand gets here."""


# ------------------------------------------------------------------------------------------------
# the framework's runners for the workload-aware points
# ------------------------------------------------------------------------------------------------
def run_placement_feasible_plugins(plugins: list, state: Any, pod_group_info: Any, progress: Any) -> Status | None:
    """``RunPlacementFeasiblePlugins``: Wait is remembered and the loop goes on, Unschedulable
    returns, anything else is an Error naming the plugin."""
    status: Status | None = None
    for pl in plugins:
        st = pl.placement_feasible(state, pod_group_info, progress)
        if st is None or st.is_success():
            continue
        if st.code() == Code.WAIT:
            status = st.with_plugin(pl.name())
            continue
        if st.code() == Code.UNSCHEDULABLE:
            return st.with_plugin(pl.name())
        if st.code() == Code.ERROR:
            err = st.as_error()
            return _as_status(f"running PlacementFeasible plugin: {err}").with_plugin(pl.name())
        return _as_status(f"unexpected status from PlacementFeasible plugin: {st.code()}").with_plugin(pl.name())
    return status


def run_pod_group_post_filter_plugins(plugins: list, state: Any, pod_group_info: Any,
                                      scheduling_func: Callable) -> tuple[Any, Status]:
    """``RunPodGroupPostFilterPlugins``: the first Success wins, UnschedulableAndUnresolvable
    stops, Unschedulable collects reasons (the first such plugin is the rejector), anything else is
    ``error in "<plugin>" PodGroupPostFilter plugins: <message>``."""
    reasons: list[str] = []
    rejector = ""
    for pl in plugins:
        fn = getattr(pl, "pod_group_post_filter", None)
        if fn is None:
            raise PodGroupPostFilterMissing(f"plugin {go_quote(pl.name())} does not extend PodGroupPostFilterPlugin plugin")
        res, st = fn(state, pod_group_info, scheduling_func)
        if st is None or st.is_success():
            return res, st if st is not None else Status(Code.SUCCESS)
        if st.code() == Code.UNSCHEDULABLE_AND_UNRESOLVABLE:
            return res, st.with_plugin(pl.name())
        if st.code() == Code.UNSCHEDULABLE:
            reasons.extend(st.reasons())
            if not rejector:
                rejector = pl.name()
            continue
        return None, _as_status(f'error in "{pl.name()}" PodGroupPostFilter plugins: {st.message()}').with_plugin(
            pl.name())
    return None, Status(Code.UNSCHEDULABLE, *reasons, plugin=rejector)


# ------------------------------------------------------------------------------------------------
# conditions (k8s.io/apimachinery/pkg/api/meta: SetStatusCondition, FindStatusCondition)
# ------------------------------------------------------------------------------------------------
def _rfc3339(t: float) -> str:
    return datetime.fromtimestamp(int(t // 1), timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def set_status_condition(conditions: tuple, new: dict, now: float) -> tuple[tuple, bool]:
    """``meta.SetStatusCondition``: the conditions with ``new`` set (its lastTransitionTime now when
    it is new or its status changes), and whether anything changed."""
    out = [dict(c) for c in conditions]
    for c in out:
        if c.get("type") != new["type"]:
            continue
        changed = False
        if c.get("status") != new["status"]:
            c["status"] = new["status"]
            c["lastTransitionTime"] = new.get("lastTransitionTime") or _rfc3339(now)
            changed = True
        for key in ("reason", "message", "observedGeneration"):
            if c.get(key) != new.get(key):
                c[key] = new.get(key)
                changed = True
        return tuple(out), changed
    added = dict(new)
    added.setdefault("lastTransitionTime", _rfc3339(now))
    out.append(added)
    return tuple(out), True


def find_status_condition(conditions: tuple, cond_type: str) -> dict | None:
    return next((c for c in conditions if c.get("type") == cond_type), None)


# ------------------------------------------------------------------------------------------------
# results
# ------------------------------------------------------------------------------------------------
@dataclass
class AlgorithmResult:
    """``algorithmResult``: one member's outcome in the group algorithm."""

    pinfo: Any
    result: ScheduleResult
    state: CycleState
    pods_to_activate: PodsToActivate
    status: Status | None = None
    #: the error behind a failure (FitError: the member's own node-by-node message)
    err: Any = None
    duration: float = 0.0

    @property
    def node_name(self) -> str:
        return self.result.suggested_host


@dataclass
class PodGroupAlgorithmResult:
    """``podGroupAlgorithmResult``."""

    #: the flat entity, or the node of a composite tree the result is for
    pod_group_info: Any
    status: Status
    pod_results: list[AlgorithmResult] = field(default_factory=list)
    waiting_on_preemption: bool = False
    placement_state: Any = None
    any_scheduled: bool = False
    #: the placement this result was computed in (TopologyAwareWorkloadScheduling), None without
    placement: Any = None
    #: the decision records its run opened, by member uid (TopologyAwareWorkloadScheduling)
    records: dict = field(default_factory=dict)


def _ok(status: Status | None) -> bool:
    return status is None or status.is_success()


class PodGroupCycleMixin:
    """``scheduleOnePodGroup`` and its steps, as methods of the Scheduler (see the module docstring)."""

    # -- attributes provided by Scheduler ------------------------------------------------------
    cache: Any
    cluster: Any
    queue: Any
    profiles: dict
    results: dict
    clock: Any
    feature_gates: Any
    metrics: Any
    use_compiled_cycle: bool
    _waiting: dict
    _seq_seen: dict
    _attempt_uid: str | None
    _cycles: int
    _recording: Any
    record_mode: str | None
    #: NominatedNodeNameForExpectation (ScheduleOneMixin): a binding cycle starts with the pre-flights
    _pre_flights: bool
    next_start_node_index: int
    config: Any
    #: PodGroupPostFilter's rerun of the group algorithm is under way (no decision records)
    _pod_group_dry_run: bool = False
    #: the placement the placement algorithm is evaluating (the snapshot's may be None: a placement
    #: of every node is no placement there), None outside it
    _placement_now: Any = None
    #: a successful group's algorithm leaves its members' rows in the node table for submit
    #: (``Cache.park_assumed``); False: forgotten and written again (the reference behaviour,
    #: ``tests/scheduler/test_podgroup_parked_rows.py`` compares the two)
    park_group_assumptions: bool = True
    #: the in-tree GangScheduling's Wait answers between members made once after the last member
    #: (``_pure_gang_min_count``); False: PlacementFeasible called after every member (the
    #: reference, ``tests/scheduler/test_podgroup_deferred_feasibility.py`` compares the two)
    defer_gang_feasibility: bool = True
    #: a successful gang's members held at Permit by GangScheduling alone are kept by submit itself
    #: (``_GangPermitRun``: no WaitingPod, no timer), when all of them are released within the same
    #: submit; False: ``run_permit_plugins`` per member (the reference,
    #: ``tests/scheduler/test_podgroup_permit_run.py`` compares the two)
    use_gang_permit_run: bool = True
    #: runs of identical members placed by one kernel call each (``_place_run``,
    #: docs/dev/gang-runs.md section 4); False: every member through ``_pod_group_pod_algorithm``
    #: (the reference, ``tests/scheduler/test_podgroup_gang_runs.py`` compares the two)
    use_gang_runs: bool = True

    # ==========================================================================================
    # scheduleOnePodGroup
    # ==========================================================================================
    def schedule_one_pod_group(self, pg_info: QueuedPodGroupInfo) -> None:
        """One scheduling attempt for a popped pod group (upstream ``scheduleOnePodGroup``)."""
        started = _perf_counter()
        if self.feature_gates.enabled(COMPOSITE_POD_GROUP):
            # reconcilePodGroupWithSnapshot over the entity's tree (a flat entity: its PodGroup,
            # whose parent must not have changed either)
            rec_err = self._reconcile_pod_group_with_snapshot(pg_info.tree if pg_info.is_composite else pg_info)
            if rec_err is not None:
                # the hierarchy changed shape after the pop: no condition is written (upstream sets
                # the root's objects to nil before the failure handler), the entity is requeued
                pg_info.pod_group = None
                pg_info.composite_pod_group = None
                if pg_info.is_composite:
                    pg_info.tree.composite_pod_group = None
                self._handle_pod_group_failure_before_scheduling(pg_info, rec_err, started)
                return
            if pg_info.is_composite:
                pg_info.composite_pod_group = pg_info.tree.composite_pod_group
        else:
            try:
                pg_info.pod_group = self.cache.pod_groups_lister().get(pg_info.namespace, pg_info.name)
            except PodGroupStateError as e:  # reconcilePodGroupWithSnapshot
                pg_info.pod_group = None
                self._handle_pod_group_failure_before_scheduling(pg_info, e, started)
                return
        err = self._validate_pod_group(pg_info)
        if err is not None:
            self._handle_pod_group_failure_before_scheduling(pg_info, err, started)
            return
        fw = self.profiles[pg_info.members[0].pod.scheduler_name]  # frameworkForPodGroup
        self._skip_pod_group_pod_schedule(pg_info)
        if not pg_info.members:
            self._add_attempted(pg_info, Status(Code.SUCCESS))
            return
        seen = self._cluster_seen()  # type: ignore[attr-defined]  # (the same for every member: nothing changes here)
        self._attempt_uid = None  # (a member's failure is not counted inline: see Scheduler._settle)
        for member in pg_info.members:
            uid = member.pod.uid
            self._seq_seen[uid] = seen
            res = self.results.get(uid)
            if res is not None:
                res.attempts = member.attempts
        self._pod_group_cycle(fw, CycleState(), pg_info, started)

    def _add_attempted(self, pg_info: QueuedPodGroupInfo, status: Status | None) -> None:
        self.queue.add_attempted_pod_group_if_needed(pg_info, self.queue.scheduling_cycle(), status)

    def _handle_pod_group_failure_before_scheduling(self, pg_info: QueuedPodGroupInfo, err: BaseException,
                                                    started: float) -> None:
        """``handlePodGroupFailureBeforeScheduling``: every member fails with the error (its
        nomination cleared), the condition (when the PodGroup is known), the requeue."""
        status = _as_status(err)
        for member in list(pg_info.members):
            fw = self.profiles.get(member.pod.scheduler_name)
            if fw is None:
                self.queue.done(member.pod.uid)
                continue
            self._handle_failure(fw, member, _as_status(err), err,  # type: ignore[attr-defined]
                                 NominatingInfo("", NominatingMode.OVERRIDE), started)
        if pg_info.is_composite:
            self._update_pod_group_condition_with_error(pg_info.tree, err)
        elif pg_info.pod_group is not None:
            self._update_pod_group_condition(pg_info, {"type": "PodGroupInitiallyScheduled", "status": "False",
                                                       "reason": "SchedulerError", "message": str(err)})
        self._add_attempted(pg_info, status)

    def _update_pod_group_condition_with_error(self, node: Any, err: BaseException) -> None:
        """``updatePodGroupConditionWithError`` over a composite entity's tree: every PodGroup
        (leaf) gets the SchedulerError condition, children by creation time and name; a node whose
        object reconciliation dropped gets none."""
        if node.pod_group is not None:
            self._update_pod_group_condition(node, {"type": "PodGroupInitiallyScheduled", "status": "False",
                                                    "reason": "SchedulerError", "message": str(err)})
            return
        for child in node.child_groups():
            self._update_pod_group_condition_with_error(child, err)

    def _reconcile_pod_group_with_snapshot(self, node: Any) -> BaseException | None:
        """``reconcilePodGroupWithSnapshot`` for a composite entity's tree (CompositePodGroup on):
        every node's object replaced by the cache's (the queue's may be older); a CompositePodGroup
        whose parent or number of children differs from the snapshot's, or an object the cache
        does not have, is an error (the hierarchy changed shape after the pop)."""
        if node.type == COMPOSITE_POD_GROUP_KEY_TYPE or node.composite_pod_group is not None:
            groups = self.cache.composite_groups
            try:
                cpg = groups.composite_objects_lister().get(node.namespace, node.name)
            except PodGroupStateError as e:
                return e
            if node.composite_pod_group is not None and \
                    cpg.parent_composite_pod_group_name != node.composite_pod_group.parent_composite_pod_group_name:
                return StatusError(
                    f"different parent in composite pod group between snapshot "
                    f"({cpg.parent_composite_pod_group_name or '[unset]'}) and queued entity "
                    f"({node.composite_pod_group.parent_composite_pod_group_name or '[unset]'})")
            try:
                state = groups.composite_states_lister().get(node.namespace, node.name)
            except PodGroupStateError as e:
                return e
            n_children = len(state.get_children())
            if n_children != len(node.children):
                return StatusError(f"different number of children in composite pod group between snapshot "
                                   f"({n_children}) and queued entity ({len(node.children)})")
            for child in node.children:
                err = self._reconcile_pod_group_with_snapshot(child)
                if err is not None:
                    return err
            node.composite_pod_group = cpg
            return None
        try:
            pg = self.cache.pod_groups_lister().get(node.namespace, node.name)
        except PodGroupStateError as e:
            return e
        if pg.parent_composite_pod_group_name != node.pod_group.parent_composite_pod_group_name:
            return StatusError(f"different parent in pod group between snapshot "
                               f"({pg.parent_composite_pod_group_name or '[unset]'}) and queued entity "
                               f"({node.pod_group.parent_composite_pod_group_name or '[unset]'})")
        node.pod_group = pg
        return None

    def _validate_pod_group(self, pg_info: QueuedPodGroupInfo) -> BaseException | None:
        """``validatePodGroup``: the first problem among the queued members, then the group's
        scheduled pods; an unknown profile last."""
        scheduler_name = ""
        group_priority = pg_info.priority
        policy_gate = self.feature_gates.enabled("PodGroupPreemptionPolicy")
        group_policy = ""
        if policy_gate:  # podGroupPreemptionPolicy: the root PodGroup's, or the root CompositePodGroup's
            pg = pg_info.pod_group
            cpg = pg_info.composite_pod_group
            group_policy = pg.preemption_policy if pg is not None and pg.preemption_policy else \
                cpg.preemption_policy if pg is None and cpg is not None and cpg.preemption_policy else \
                "PreemptLowerPriority"

        def validate(pod: "Pod") -> BaseException | None:
            nonlocal group_policy
            if pod.scheduler_name != scheduler_name:
                return StatusError(f"all pods in a single pod group should have the same .spec.schedulerName set, "
                                   f'got: "{pod.scheduler_name}" and "{scheduler_name}"')
            priority = 0 if pod.priority is None else pod.priority
            if priority != group_priority:
                return StatusError(f"all pods in a single pod group should have the same priority as the pod "
                                   f"group's priority, got {priority} and {group_priority}")
            policy = pod.preemption_policy or "PreemptLowerPriority"
            if policy_gate:
                if policy != group_policy:
                    return StatusError(f"all pods in a single pod group should have the same preemption policy as "
                                       f"the pod group's preemption policy, got {policy} and {group_policy}")
            elif not group_policy:
                group_policy = policy
            elif policy != group_policy:
                return StatusError(f"all pods in a single pod group should have the same preemption policy, got "
                                   f"{policy} and {group_policy}")
            return None

        for member in pg_info.members:
            if not scheduler_name:
                scheduler_name = member.pod.scheduler_name
            err = validate(member.pod)
            if err is not None:
                return err
        # validateScheduledPods: the scheduled pods of every leaf (children by creation time, name)
        leaves = [(pg_info.namespace, pg_info.name)] if not pg_info.is_composite else \
            [(leaf.namespace, leaf.name) for leaf in _leaves_in_child_group_order(pg_info.tree)]
        for namespace, name in leaves:
            try:
                state = self.cache.pod_group_states_lister().get(namespace, name)
            except PodGroupStateError as e:
                return StatusError(f"failed to get pod group state: {e}")
            for pod in state.scheduled_pods():
                err = validate(pod)
                if err is not None:
                    return err
        if scheduler_name not in self.profiles:
            return StatusError(f'profile not found for scheduler name "{scheduler_name}"')
        return None

    def _skip_pod_group_pod_schedule(self, pg_info: QueuedPodGroupInfo) -> None:
        """``skipPodGroupPodSchedule``: members being deleted or already assumed are done."""
        kept = []
        for member in pg_info.members:
            pod = member.pod
            current = self.cluster.pods.get(pod.uid)
            if current is None or current.node_name or self.cache.is_assumed_pod(pod):
                self.queue.done(pod.uid)
                continue
            if current.deletion_timestamp is not None:
                self.queue.done(pod.uid)
                res = self.results.get(pod.uid)
                if res is not None:
                    res.status, res.message = TERMINATING, _TERMINATING_MESSAGE
                continue
            kept.append(member)
        pg_info.set_members(kept)

    # ==========================================================================================
    # the algorithm
    # ==========================================================================================
    def _pod_group_cycle(self, fw: "Framework", group_state: CycleState, pg_info: QueuedPodGroupInfo,
                         started: float) -> None:
        """``podGroupCycle``."""
        if pg_info.is_composite:  # (only a queue with CompositePodGroup builds such an entity)
            self._composite_pod_group_cycle(fw, group_state, pg_info, started)  # type: ignore[attr-defined]
            return
        # the algorithm's assumptions of a successful group stay in the node table for submit to
        # take up (Cache.park_assumed); whatever submit does not take up is dropped at its end
        result = self._run_root_scheduling_algorithm(fw, group_state, pg_info, park=self.park_group_assumptions)
        try:
            self._pod_group_cycle_rest(fw, group_state, pg_info, started, result)
        finally:
            self.cache.drop_parked()

    def _pod_group_cycle_rest(self, fw: "Framework", group_state: CycleState, pg_info: QueuedPodGroupInfo,
                              started: float, result: "PodGroupAlgorithmResult") -> None:
        """``podGroupCycle`` after the root algorithm: PodGroupPostFilter when it was
        Unschedulable, then submit."""
        root_status = result.status
        self._complete_pod_group_algorithm_result(pg_info, group_state, result)
        self.metrics.pod_group_algorithm_latencies.append(_perf_counter() - started)
        if root_status.code() == Code.UNSCHEDULABLE:
            def scheduling_func() -> tuple[list, Status]:
                # preemption's dry run: the members' records stay those of the cycle above; on the
                # plugin-call path: the assignments' CycleStates go to Filter plugins again
                # (workload-aware preemption's reprieve), which need every PreFilter's state, and
                # the fused cycle writes only what Reserve, Permit and binding read
                self.cache.drop_parked()  # (none: an Unschedulable algorithm parks nothing)
                again = self._rerun_for_post_filter(
                    lambda: self._run_root_scheduling_algorithm(fw, CycleState(), pg_info))
                return [r for r in again.pod_results if _ok(r.status)], again.status
            pf_result, pf_status = run_pod_group_post_filter_plugins(
                list(getattr(fw, "pod_group_post_filter_plugins", ())), group_state, pg_info, scheduling_func)
            self._apply_pod_group_post_filter_result(result, pf_result, pf_status)
        self._submit_pod_group_algorithm_result(fw, pg_info, result, started, root_status)

    def _rerun_for_post_filter(self, algorithm: Callable[[], Any]) -> Any:
        """``algorithm()`` as PodGroupPostFilter's rerun of the group's algorithm: a dry run
        (``_pod_group_dry_run``: no decision records) on the plugin-call path, whatever the
        compiled cycle's setting, which comes back after it."""
        self._pod_group_dry_run = True
        compiled, self.use_compiled_cycle = self.use_compiled_cycle, False
        try:
            return algorithm()
        finally:
            self._pod_group_dry_run = False
            self.use_compiled_cycle = compiled

    def _run_root_scheduling_algorithm(self, fw: "Framework", group_state: CycleState,
                                       pg_info: QueuedPodGroupInfo, park: bool = False) -> PodGroupAlgorithmResult:
        """``runRootSchedulingAlgorithm`` + ``podGroupSchedulingAlgorithm`` (with
        TopologyAwareWorkloadScheduling the placement algorithm, else one implicit placement):
        every assumption is reverted before it returns. ``park``: when the default algorithm
        succeeds, its assumptions are reverted with ``Cache.park_assumed`` (their rows kept in the
        node table for submit's assumes of the same objects)."""
        reverts: list[Callable[..., None]] = []
        keep_rows = False
        try:
            if self.feature_gates.enabled(TOPOLOGY_AWARE_WORKLOAD_SCHEDULING):
                # with CompositePodGroup the best placement's members are assumed again (reverted
                # below with the rest), as for a leaf inside a tree
                result = self._pod_group_placement_algorithm(
                    fw, group_state, pg_info, reverts if self.feature_gates.enabled(COMPOSITE_POD_GROUP) else None)
            else:
                placement_state = CycleState()
                placement_state.write(POD_GROUP_CYCLE_KEY, group_state)
                result = self._pod_group_default_algorithm(fw, placement_state, pg_info, reverts)
                keep_rows = park and result.status.is_success()
        finally:
            for revert in reversed(reverts):
                revert(keep_rows)
        if _ok(result.status) and not result.any_scheduled:
            result.status = _unschedulable_group()
        return result

    def _pod_group_placement_algorithm(self, fw: "Framework", group_state: CycleState,
                                       pg_info: Any, assumed: list | None = None) -> PodGroupAlgorithmResult:
        """``podGroupSchedulingPlacementAlgorithm`` (CompositePodGroup off): the PlacementGenerate
        plugin's placements of the current one's nodes; in each, assumed in the snapshot, the
        default algorithm, its assumptions reverted (an Error ends it all); none fitting is
        Unschedulable ``0/N placements are available, first placement status: ...`` with the first
        placement's member results; several are scored (``findBestPlacement``). The best one's
        result is returned without re-assuming it (submit assumes its members for real), unless
        ``assumed`` is a list (CompositePodGroup on: ``assumeSubtreeWithRevert``, for the groups
        after it in the tree to see it): the best result's members are assumed and reserved again
        and their reverts appended there. ``pg_info``: an entity, or a leaf of a tree (its
        ``members`` set by the cycle)."""
        snapshot = self.cache.update_snapshot()
        group_state.set_record_plugin_metrics(True)
        placements, st = fw.run_placement_generate_plugins(group_state, pg_info, snapshot.placement_batch())
        if st is not None and not st.is_success():
            return PodGroupAlgorithmResult(pg_info, st)
        metrics = self.metrics
        metrics.generated_placements += len(placements)
        placements = self._placement_order(pg_info, placements)
        any_result: PodGroupAlgorithmResult | None = None
        successful: list[tuple[Any, PodGroupAlgorithmResult]] = []
        parent = snapshot.get_placement()
        try:
            for placement in placements:
                evaluation_started = _perf_counter()
                try:
                    snapshot.assume_placement(placement)
                except PlacementError as e:
                    return PodGroupAlgorithmResult(pg_info, _as_status(f"failed to assume pod group placement: {e}"))
                placement_state = CycleState()
                placement_state.write(POD_GROUP_CYCLE_KEY, group_state)
                own: list[Callable[[], None]] = []
                outer, self._placement_now = self._placement_now, placement
                try:
                    result = self._pod_group_default_algorithm(fw, placement_state, pg_info, own)
                finally:
                    self._placement_now = outer
                    for revert in reversed(own):
                        revert()
                result.placement = placement
                result.records = self._take_member_records(pg_info)
                if result.status.code() == Code.ERROR:
                    return self._keep_member_records(pg_info, result)
                if any_result is None:
                    any_result = result
                if result.status.is_success():
                    successful.append((placement, result))
                metrics.placement_evaluations.append(
                    ("feasible" if result.status.is_success() else "infeasible", _perf_counter() - evaluation_started))
        finally:
            snapshot.forget_placement()
            snapshot.assume_placement(parent)
        if not successful:
            assert any_result is not None  # the generator gives at least one placement
            any_result.status = _unschedulable_group(
                f"0/{len(placements)} placements are available, first placement status: {any_result.status.as_error()}")
            return self._keep_member_records(pg_info, any_result)
        best, st = self._find_best_pod_group_placement(fw, group_state, pg_info, successful)
        if best is None:
            return PodGroupAlgorithmResult(pg_info, st if st is not None else _as_status("no best placement"))
        if assumed is not None:
            err, subtree_reverts = self._assume_subtree_with_revert(fw, [best])
            if err is not None:
                return PodGroupAlgorithmResult(pg_info, _as_status(f"failed to assume the subtree: {err}"))
            assumed.extend(subtree_reverts)
        return self._keep_member_records(pg_info, best)

    def _assume_subtree_with_revert(self, fw: "Framework", leaf_results: Any) -> tuple[Any, list]:
        """``assumeSubtreeWithRevert`` over the successful leaves' results (``successfulLeafResults``):
        each member that succeeded on a node assumed and reserved again; the first failure reverts
        them all and is returned as the error."""
        reverts: list[Callable[..., None]] = []
        for leaf_result in leaf_results:
            for pod_result in leaf_result.pod_results:
                if not _ok(pod_result.status) or not pod_result.node_name:
                    continue
                st, err, revert = self._assume_and_reserve_with_revert(fw, pod_result.state, pod_result.pinfo.pod,
                                                                       pod_result.node_name)
                if revert is not None:
                    reverts.append(revert)
                if st is not None and not st.is_success():
                    for undo in reversed(reverts):
                        undo()
                    return (st.as_error() if err is None else err), []
        return None, reverts

    def _take_member_records(self, pg_info: QueuedPodGroupInfo) -> dict:
        """The decision records a placement's run opened for the members (taken out: the next
        placement's run opens its own)."""
        records = getattr(self, "_open_records", None)
        if not records or self._pod_group_dry_run:  # (PodGroupPostFilter's rerun opens none)
            return {}
        return {m.pod.uid: records.pop(m.pod.uid) for m in pg_info.members if m.pod.uid in records}

    def _keep_member_records(self, pg_info: QueuedPodGroupInfo, result: PodGroupAlgorithmResult
                             ) -> PodGroupAlgorithmResult:
        """The members' open records are those of the placement whose result is returned."""
        if result.records:
            self._open_records.update(result.records)  # type: ignore[attr-defined]
        return result

    def _placement_order(self, pg_info: QueuedPodGroupInfo, placements: list) -> list:
        """The order the placements are evaluated in (upstream: the generator's, Go map order for
        TopologyPlacementGenerator's domains; here the generator's own). A seam for the oracle."""
        return placements

    def _find_best_pod_group_placement(self, fw: "Framework", group_state: CycleState, pg_info: QueuedPodGroupInfo,
                                       successful: list) -> tuple[PodGroupAlgorithmResult | None, Status | None]:
        """``findBestPodGroupPlacement`` / ``findBestPlacement``: one successful placement is the
        best; several are scored by the PlacementScore plugins, the highest total wins, ties
        broken by the seeded RNG (upstream: a random ``Randomizer`` per placement)."""
        if len(successful) == 1:
            return successful[0][1], None
        assignments = [PodGroupAssignments(placement, [ProposedAssignment(r.pinfo.pod, r.node_name, r.state)
                                                       for r in result.pod_results if _ok(r.status) and r.node_name])
                       for placement, result in successful]
        states = [result.placement_state for _, result in successful]
        scores, st = fw.run_placement_score_plugins(group_state, pg_info, assignments, states)
        if st is not None and not st.is_success():
            return None, st
        return successful[self._pick_best_placement(scores)][1], None

    def _pick_best_placement(self, scores: list) -> int:
        """The index of a placement with the highest total score; ties uniformly by the seeded RNG."""
        best = max(s.total_score for s in scores)
        tied = [i for i, s in enumerate(scores) if s.total_score == best]
        if len(tied) == 1:
            return tied[0]
        return tied[int(self.rng.integers(len(tied)))]  # type: ignore[attr-defined]

    def _placement_feasible_plugins(self, fw: "Framework") -> list:
        """GangScheduling is the only PlacementFeasible plugin (``NewFramework``), from the plugin map."""
        pl = fw.plugins_map.get(_GANG_SCHEDULING)
        return [] if pl is None or not hasattr(pl, "placement_feasible") else [pl]

    def _pod_group_default_algorithm(self, fw: "Framework", placement_state: CycleState,
                                     pg_info: QueuedPodGroupInfo, reverts: list) -> PodGroupAlgorithmResult:
        """``podGroupSchedulingDefaultAlgorithm``."""
        from ..plugins.gangscheduling import PlacementProgress
        members = list(pg_info.members)
        result = PodGroupAlgorithmResult(pg_info, _unschedulable_group(), placement_state=placement_state)
        own_reverts: list[Callable[[], None]] = []
        try:
            try:
                state = self.cache.pod_group_states_lister().get(pg_info.namespace, pg_info.name)
            except PodGroupStateError as e:
                result.status = _as_status(f"failed to get podGroup state for podGroup "
                                           f"{pg_info.namespace}/{pg_info.name} to compute gang feasibility: {e}")
                return result
            remaining, scheduled = len(members), state.scheduled_pods_count()
            plugins = self._placement_feasible_plugins(fw)
            feasible = run_placement_feasible_plugins(plugins, placement_state, pg_info,
                                                      PlacementProgress(remaining, scheduled))
            result.status = feasible if feasible is not None else Status(Code.SUCCESS)
            if result.status.code() == Code.ERROR:
                result.status = _as_status(f"failed to evaluate placement feasibility: {result.status.as_error()}")
                return result
            if result.status.code() == Code.UNSCHEDULABLE:
                result.status = _unschedulable_group(*result.status.reasons())
                return result
            any_scheduled = False
            # the in-tree GangScheduling as the only PlacementFeasible plugin answers from the
            # counts alone: while it would answer Wait (which only the answer after the last member
            # can leave as the result's status: a Wait never breaks the loop, and the code stays
            # Wait until the counts change it) its Status, whose message formats both counts, is
            # made once after the loop instead of per member
            wait_min = _pure_gang_min_count(plugins, pg_info) if self.defer_gang_feasibility else None
            deferred = False
            # runs of identical members in one kernel call each (the members' outcomes are the
            # single path's: handled below one by one, in member order)
            runs = wait_min is not None and self._gang_runs_ok(fw)
            index, stop = 0, False
            while index < len(members) and not stop:
                batch = self._place_run(fw, placement_state, members, index) if runs and index else None
                if not batch:
                    batch = [self._pod_group_pod_algorithm(fw, placement_state, members[index])]
                index += len(batch)
                for pod_result, revert in batch:
                    result.pod_results.append(pod_result)
                    if revert is not None:
                        own_reverts.append(revert)
                    st = pod_result.status
                    if st is not None and not st.is_success() and not st.is_rejected():
                        result.status = _as_status(f"failed to schedule other pod from a pod group: {st.as_error()}")
                        deferred = False
                        stop = True
                        break
                    remaining -= 1
                    if _ok(st):
                        scheduled += 1
                    if wait_min is not None and scheduled < wait_min <= remaining + scheduled:
                        # GangScheduling's Wait (result.status is a Wait already: the answer before the
                        # loop or the last member's, the only way into this branch with scheduled below
                        # minCount; only its message is behind until the Status is made below)
                        deferred = True
                        any_scheduled = any_scheduled or _ok(st)
                        continue
                    deferred = False
                    feasible = run_placement_feasible_plugins(plugins, placement_state, pg_info,
                                                              PlacementProgress(remaining, scheduled))
                    if feasible is not None and feasible.code() == Code.ERROR:
                        result.status = _as_status(f"failed to evaluate placement feasibility: {feasible.as_error()}")
                        stop = True
                        break
                    result.status = feasible if feasible is not None else Status(Code.SUCCESS)
                    if result.status.code() == Code.UNSCHEDULABLE:
                        stop = True
                        break
                    any_scheduled = any_scheduled or _ok(st)
            if deferred:  # the last member's answer, as the per-member call would have left it
                feasible = run_placement_feasible_plugins(plugins, placement_state, pg_info,
                                                          PlacementProgress(remaining, scheduled))
                result.status = feasible if feasible is not None else Status(Code.SUCCESS)
            if result.status.is_wait():
                result.status = _unschedulable_group(*result.status.reasons())
            result.any_scheduled = any_scheduled
            return result
        finally:
            if not result.status.is_success():
                for revert in reversed(own_reverts):
                    revert()
                own_reverts.clear()
                result.any_scheduled = False
            reverts.extend(own_reverts)

    def _pod_group_pod_algorithm(self, fw: "Framework", placement_state: CycleState,
                                 member: Any) -> tuple[AlgorithmResult, Callable[[], None] | None]:
        """``podGroupPodSchedulingAlgorithm``: the ordinary algorithm (PostFilter skipped), then
        assume and Reserve, with the revert."""
        pod = member.pod
        started = _perf_counter()
        state = CycleState()
        self._cycles += 1  # initPodSchedulingContext samples plugin metrics as a pod's cycle does
        state.set_record_plugin_metrics(self._cycles % 10 == 0)
        pta = PodsToActivate()
        state.write(PODS_TO_ACTIVATE_KEY, pta)
        state.write(POD_GROUP_CYCLE_KEY, placement_state.get(POD_GROUP_CYCLE_KEY))
        state.write(PLACEMENT_CYCLE_KEY, _StateLink(placement_state))  # SetPlacementCycleState
        pod_result = AlgorithmResult(member, ScheduleResult(), state, pta)
        if self.record_mode is not None and not self._pod_group_dry_run:
            self._begin_record(fw, member)  # type: ignore[attr-defined]  # open until its failure or binding
        else:
            self._recording = None
        try:
            try:
                pod_result.result = self._schedule_pod(fw, state, pod)  # type: ignore[attr-defined]
                if self._recording is not None:
                    self._recording.selected_node = pod_result.node_name
            finally:
                self._recording = fw.decision_sink = None  # paused: the rest of the group's cycle is not its
        except NoNodesAvailableError as e:
            pod_result.result = ScheduleResult(nominating_info=NominatingInfo("", NominatingMode.OVERRIDE))
            pod_result.status, pod_result.err = Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE).with_error(e), e
        except FitError as fe:  # a pod group cycle: no PostFilter, no nomination
            pod_result.result = ScheduleResult(nominating_info=None)
            pod_result.status, pod_result.err = Status(Code.UNSCHEDULABLE).with_error(fe), fe
        except _CycleError as e:
            pod_result.result = ScheduleResult(nominating_info=NominatingInfo("", NominatingMode.OVERRIDE))
            pod_result.status, pod_result.err = e.status, e
        if pod_result.status is not None:
            pod_result.duration = _perf_counter() - started
            return pod_result, None
        host = pod_result.node_name
        st, err, revert = self._assume_and_reserve_with_revert(fw, state, pod, host)
        pod_result.duration = _perf_counter() - started
        if not _ok(st):
            pod_result.result = ScheduleResult(nominating_info=NominatingInfo("", NominatingMode.OVERRIDE))
            pod_result.status, pod_result.err = st, err
            return pod_result, None
        return pod_result, revert

    def _gang_runs_ok(self, fw: "Framework") -> bool:
        """Whether this group algorithm may place runs of members (``_place_run``): the compiled
        cycle on, and nothing that would observe a member's cycle between its placement and the
        next member's, nor read more than the kernel gives: no extender, no decision records, not
        PodGroupPostFilter's rerun, no TAS placement assumed, no claim statuses on the assumed pods
        (DRANodeAllocatableResources), and no Permit plugin but GangScheduling (Permit runs at
        submit; a profile with other Permit plugins takes the path they were tested on)."""
        engine = fw.compiled_cycle
        return (self.use_gang_runs and engine is not None and engine.enabled and self.use_compiled_cycle
                and not self.extenders and self.record_mode is None and not self._pod_group_dry_run  # type: ignore[attr-defined]
                and not self._node_allocatable_resources  # type: ignore[attr-defined]
                and all(pl.name() == _GANG_SCHEDULING for pl in fw.permit_plugins)
                and self.cache.update_snapshot().get_placement() is None)

    def _place_run(self, fw: "Framework", placement_state: CycleState, members: list,
                   index: int) -> list[tuple[AlgorithmResult, Callable[..., None] | None]] | None:
        """``podGroupPodSchedulingAlgorithm`` for a run of members from ``index`` on whose
        compiled cycle is the previous member's (docs/dev/gang-runs.md section 4): placed and
        accounted by one kernel call (``CompiledCycle.place_run``), then each member's cycle
        finished as ``_pod_group_pod_algorithm`` finishes it (its CycleState, counters, the next
        start index, batching's store, the cache's assume, Reserve, the revert), in member order.
        Nothing observes a member's cycle in between (``_gang_runs_ok``; every Reserve plugin idle
        for the plan), so the members' outcomes, the node table, the cache and the RNG are the
        single path's. None or [] when no member was placed: the caller takes the member singly."""
        snapshot = self.cache.update_snapshot()
        num_nodes = len(snapshot)
        if num_nodes == 0 or (fw.batch is not None and fw.batch.has_state()):
            return None
        pods = []
        for member in members[index:]:
            pod = member.pod
            if pod.nominated_node_name:
                break
            pods.append(pod)
        if not pods or not self.cache.can_assume_run(pods):
            return None
        pct = fw.percentage_of_nodes_to_score()
        if pct is None:
            pct = self.config.percentage_of_nodes_to_score
        k = num_feasible_nodes_to_find(pct, num_nodes)
        reserve_plugins = fw.reserve_plugins
        engine = fw.compiled_cycle
        if engine is None:
            return None
        run = engine.place_run(pods, snapshot, self.next_start_node_index, k, self.rng,  # type: ignore[attr-defined]
                               lambda skip: all(_idle(pl, skip) for pl in reserve_plugins))
        if run is None or not run.hosts:
            return None
        placed = len(run.hosts)
        group_state = placement_state.get(POD_GROUP_CYCLE_KEY)
        link = _StateLink(placement_state)
        out: list[tuple[AlgorithmResult, Callable[..., None] | None]] = []
        states = []
        for j in range(placed):
            state = CycleState()
            self._cycles += 1  # initPodSchedulingContext samples plugin metrics as a pod's cycle does
            state.set_record_plugin_metrics(self._cycles % 10 == 0)
            pta = PodsToActivate()
            state.write(PODS_TO_ACTIVATE_KEY, pta)
            state.write(POD_GROUP_CYCLE_KEY, group_state)
            state.write(PLACEMENT_CYCLE_KEY, link)  # SetPlacementCycleState
            states.append(state)
            out.append((AlgorithmResult(members[index + j], ScheduleResult(run.hosts[j], run.examined[j], run.found[j]),
                                        state, pta), None))
        self._recording = fw.decision_sink = None
        engine.finish_run(run, states, snapshot)
        start = self.next_start_node_index
        cycle = self.queue.scheduling_cycle() if fw.batch is not None else 0
        for j in range(placed):
            start = (start + run.examined[j]) % num_nodes
            if fw.batch is not None:
                _BatchCycle(fw.batch, None, cycle).store_unsigned(run.hosts[j], run.found[j])
        self.next_start_node_index = start
        self.cache.assume_run(run.assumed)
        nominator = self.queue.nominator
        share = (_perf_counter() - run.t0) / placed
        for j in range(placed):
            pod_result = out[j][0]
            state, assumed, host = pod_result.state, run.assumed[j], run.hosts[j]
            nominator.delete_nominated_pod_if_exists(run.pods[j])
            fw.run_reserve_plugins_reserve(state, assumed, host)  # (every Reserve plugin idle: Success)
            pod_result.duration = share
            out[j] = (pod_result, self._revert_of(fw, state, run.pods[j], assumed, host))
        return out

    def _revert_of(self, fw: "Framework", state: CycleState, pod: "Pod", assumed: "Pod",
                   host: str) -> Callable[..., None]:
        """The revert ``_assume_and_reserve_with_revert`` returns (Unreserve, then the assumption
        forgotten or parked, the nomination given back); a run's members get the same."""
        def unreserve_and_forget(park: bool = False) -> None:
            fw.run_reserve_plugins_unreserve(state, assumed, host)
            try:
                if park:
                    self.cache.park_assumed(assumed)
                else:
                    self.cache.forget_pod(assumed)
            except Exception:  # noqa: BLE001 - upstream logs a failed forget
                return
            if pod.nominated_node_name:
                self.queue.nominator.add_nominated_pod(
                    PodInfo(pod), NominatingInfo(pod.nominated_node_name, NominatingMode.OVERRIDE))
        return unreserve_and_forget

    def _assume_and_reserve_with_revert(self, fw: "Framework", state: CycleState, pod: "Pod",
                                        host: str) -> tuple[Status | None, Any, Callable[[], None] | None]:
        """``assumeAndReserveWithRevert`` (the assumption is the snapshot's, which in fastsched is
        the cache: forgotten on revert, the pod's nomination given back)."""
        assumed = pod.with_node_name(host)
        if self._node_allocatable_resources:  # type: ignore[attr-defined]
            assumed = assumed_with_claim_statuses(assumed, state, host)
        try:
            self.cache.assume_pod(assumed)
        except Exception as e:  # noqa: BLE001
            return Status.from_error(StatusError(str(e))), e, None
        self.queue.nominator.delete_nominated_pod_if_exists(pod)
        unreserve_and_forget = self._revert_of(fw, state, pod, assumed, host)

        st = fw.run_reserve_plugins_reserve(state, assumed, host)
        if st is not None and not st.is_success():
            unreserve_and_forget()
            if st.is_rejected():
                fe = FitError(pod, 1, Diagnosis(node_to_status=NodeToStatus({host: st}),
                                                unschedulable_plugins={st.plugin()} - {""}))
                return Status(st.code()).with_error(fe), fe, None
            return st, StatusError(st.message()), None
        return None, None, unreserve_and_forget

    @staticmethod
    def _complete_pod_group_algorithm_result(pg_info: QueuedPodGroupInfo, group_state: CycleState,
                                             result: PodGroupAlgorithmResult) -> None:
        """``completePodGroupAlgorithmResult``: members not tried get a copy of the group status."""
        for member in pg_info.members[len(result.pod_results):]:
            state = CycleState()
            pta = PodsToActivate()
            state.write(PODS_TO_ACTIVATE_KEY, pta)
            result.pod_results.append(AlgorithmResult(member, ScheduleResult(), state, pta,
                                                      status=result.status.copy()))

    @staticmethod
    def _apply_pod_group_post_filter_result(result: PodGroupAlgorithmResult, pf_result: Any, status: Status) -> None:
        """``applyPodGroupPostFilterResult``."""
        if status.is_success():
            result.waiting_on_preemption = True
            infos = getattr(pf_result, "nominating_infos", None) or {}
            for pod_result in result.pod_results:
                pod = pod_result.pinfo.pod
                info = infos.get((pod.namespace, pod.name))
                if info is not None:
                    pod_result.result.nominating_info = info
        if status.code() == Code.ERROR:
            result.status = status
        else:
            result.status.append_reason(status.message())

    # ==========================================================================================
    # submitPodGroupAlgorithmResult
    # ==========================================================================================
    def _submit_pod_group_algorithm_result(self, fw: "Framework", pg_info: QueuedPodGroupInfo,
                                           result: PodGroupAlgorithmResult, started: float,
                                           root_status: Status) -> None:
        self._submit_leaf_result(fw, pg_info, result, started)
        self._finish_submit(pg_info, result, started, root_status)

    def _submit_leaf_result(self, fw: "Framework", pg_info: Any, result: PodGroupAlgorithmResult,
                            started: float) -> None:
        """``submitPodGroupAlgorithmResult``'s body for one PodGroup (``pg_info``: a flat entity
        or a leaf of a tree, with its ``members``): each member bound or failed, the condition."""
        if len(result.pod_results) != len(pg_info.members):  # upstream: "some pods were not processed"
            result.status = Status(Code.ERROR, "scheduling error for pod group, some pods were not processed")
            result.pod_results = []
            self._complete_pod_group_algorithm_result(pg_info, CycleState(), result)
        group = result.status
        clear = NominatingInfo("", NominatingMode.OVERRIDE)
        run = self._gang_permit_run(fw, pg_info, result) if group.is_success() else None
        for member, pod_result in zip(list(pg_info.members), result.pod_results):
            st = pod_result.status
            if not (_ok(st) and group.is_success()):
                self.cache.drop_parked()  # a failure's handling: the table as upstream's submit has it
                if run is not None:  # (the per-member path from here)
                    run.materialize()
                    run = None
            if group.code() == Code.ERROR:
                own = st if st is not None and st.code() == Code.ERROR else group
                self._handle_failure(fw, member, own, own.err() or StatusError(own.message()), clear,  # type: ignore[attr-defined]
                                     started)
                continue
            if _ok(st):
                if group.is_success():
                    if run is not None and (not run.active or not run.admits(pod_result.state)):
                        run.materialize()  # (ended: handed over at a failure, or not admitted)
                        run = None
                    self._bind_pod_group_member(fw, member, pod_result, started, run)
                elif group.is_rejected():
                    if result.waiting_on_preemption:
                        self._handle_failure(fw, member, group, group.err() or StatusError(group.message()),  # type: ignore[attr-defined]
                                             pod_result.result.nominating_info, started)
                    else:
                        failed = _unschedulable_group(group.message())
                        self._handle_failure(fw, member, failed, StatusError(failed.message()), clear,  # type: ignore[attr-defined]
                                             started)
                else:
                    err = StatusError(f"received unexpected pod group scheduling algorithm status code: {group.code()}")
                    self._handle_failure(fw, member, _as_status(err), err, clear, started)  # type: ignore[attr-defined]
            else:
                assert st is not None  # (not _ok)
                self._handle_failure(fw, member, st, pod_result.err if pod_result.err is not None  # type: ignore[attr-defined]
                                     else StatusError(st.message()), pod_result.result.nominating_info, started)
        if run is not None:  # (none left when the gang was released, as the precondition asks)
            run.materialize()
        if group.is_success():
            condition = {"type": "PodGroupInitiallyScheduled", "status": "True", "reason": "Scheduled",
                         "message": group.message()}
        elif group.is_rejected():
            condition = {"type": "PodGroupInitiallyScheduled", "status": "False", "reason": "Unschedulable",
                         "message": group.message()}
        else:
            condition = {"type": "PodGroupInitiallyScheduled", "status": "False", "reason": "SchedulerError",
                         "message": str(group.as_error())}
        self._update_pod_group_condition(pg_info, condition)

    def _finish_submit(self, pg_info: QueuedPodGroupInfo, root_result: PodGroupAlgorithmResult, started: float,
                       root_status: Status) -> None:
        """``submitPodGroupAlgorithmResult``'s end: the attempt's metric by the root's result, the
        entity requeued with the algorithm's root status."""
        group = root_result.status
        if group.is_success():  # upstream reads the root result's status after PodGroupPostFilter
            outcome = "scheduled"
        elif group.is_rejected():
            outcome = "waiting_on_preemption" if root_result.waiting_on_preemption else "unschedulable"
        else:
            outcome = "error"
        metrics = self.metrics
        metrics.pod_group_attempts[outcome] += 1
        metrics.pod_group_attempt_latencies.append((outcome, _perf_counter() - started))
        self._add_attempted(pg_info, root_status)

    def _gang_permit_run(self, fw: "Framework", pg_info: Any,
                         result: PodGroupAlgorithmResult) -> "_GangPermitRun | None":
        """The :class:`_GangPermitRun` for a successful group's submit, or None (each member's
        Permit through ``run_permit_plugins``). Its members held at Permit need no WaitingPod
        when nothing can observe them before they are released, and they are released within this
        submit: GangScheduling (its exact class) the only Permit plugin; no decision record (a
        record reads Permit's statuses and timeouts), no PostBind plugin (the members released
        first bind inside submit and run PostBind, which could look for WaitingPods); no pod of any
        profile waiting at Permit (members of this gang waiting from an earlier cycle would be
        counted and allowed; the map is shared); the gang's ``minCount`` reached by the members
        scheduled before this submit and the members it submits (else some wait past it, with
        timers). Each member's Reserve and PreBind plugins must be idle too
        (:meth:`_GangPermitRun.admits`, asked per member: the run ends where one is not)."""
        if not self.use_gang_permit_run or self.record_mode is not None or fw.decision_sink is not None:
            return None
        permit = fw.permit_plugins
        if len(permit) != 1 or type(permit[0]) is not _GangScheduling or fw.post_bind_plugins \
                or len(fw.waiting_pods):
            return None
        pods = [m.pod for m in pg_info.members]
        if not pods or any(p.scheduling_group is None for p in pods):
            return None
        plugin = permit[0]
        namespace, name = pods[0].namespace, pods[0].pod_group_name or ""
        if any(p.namespace != namespace or (p.pod_group_name or "") != name for p in pods):
            return None
        try:
            pod_group = plugin._pod_group(namespace, name)
            group_state = plugin._state(namespace, pod_group.name)
        except PodGroupStateError:
            return None
        gang = pod_group.scheduling_policy.gang
        if gang is None:  # a basic group: nothing waits
            return None
        submitted = sum(1 for r in result.pod_results if _ok(r.status))
        if group_state.scheduled_pods_count() + submitted < gang.min_count:
            return None
        return _GangPermitRun(fw, plugin, pod_group, group_state)

    def _bind_pod_group_member(self, fw: "Framework", member: Any, pod_result: AlgorithmResult,
                               started: float, run: "_GangPermitRun | None" = None) -> None:
        """``prepareForBindingCycle`` (assume in the cache, Reserve, Permit, activations) and the
        binding cycle, or the wait at Permit. ``run``: the submit's :class:`_GangPermitRun`, which
        answers Permit instead of ``run_permit_plugins`` (a member held there gets no WaitingPod)."""
        state = pod_result.state
        state.delete(POD_GROUP_CYCLE_KEY)  # SetPodGroupSchedulingCycle(nil): an ordinary cycle from here
        pod = member.pod
        host = pod_result.node_name
        # the algorithm's copy when its row is parked in the table (assume_pod takes it up)
        assumed = self.cache.parked_pod(pod.uid)
        if assumed is None or assumed.node_name != host:
            assumed = pod.with_node_name(host)
            if self._node_allocatable_resources:  # type: ignore[attr-defined]
                assumed = assumed_with_claim_statuses(assumed, state, host)
        try:
            self.cache.assume_pod(assumed)
        except Exception as e:  # noqa: BLE001
            self.cache.drop_parked()
            if run is not None:
                run.materialize()  # (the members held so far wait on as the per-member path has them)
            self._handle_failure(fw, member, Status.from_error(StatusError(str(e))), e,  # type: ignore[attr-defined]
                                 NominatingInfo("", NominatingMode.OVERRIDE), started)
            return
        self.queue.nominator.delete_nominated_pod_if_exists(pod)
        failure = None
        st = fw.run_reserve_plugins_reserve(state, assumed, host)
        if st is not None and not st.is_success():
            failure = st
        else:
            st = fw.run_permit_plugins(state, assumed, host) if run is None else run.permit(state, assumed)
            if st is not None and not st.is_success() and not st.is_wait():
                failure = st
        if failure is not None:
            self.cache.drop_parked()
            if run is not None:
                run.materialize()
            fw.run_reserve_plugins_unreserve(state, assumed, host)
            try:
                self.cache.forget_pod(assumed)
            except Exception:  # noqa: BLE001
                pass
            if failure.is_rejected():
                fe = FitError(pod, 1, Diagnosis(node_to_status=NodeToStatus({host: failure}),
                                                unschedulable_plugins={failure.plugin()} - {""}))
                self._handle_failure(fw, member, Status(failure.code()).with_error(fe), fe,  # type: ignore[attr-defined]
                                     NominatingInfo("", NominatingMode.OVERRIDE), started)
            else:
                self._handle_failure(fw, member, failure, StatusError(failure.message()),  # type: ignore[attr-defined]
                                     NominatingInfo("", NominatingMode.OVERRIDE), started)
            return
        pta = state.get(PODS_TO_ACTIVATE_KEY)
        if pta is not None and pta.map:
            self.activate(dict(pta.map))  # type: ignore[attr-defined]
            pta.map.clear()
        uid = pod.uid
        waits = fw.will_wait_on_permit(assumed) if run is None else st is not None and st.is_wait()
        if not waits:
            self.cache.drop_parked()  # (a binding cycle reads the cluster as upstream's has it)
        # ``go runBindingCycle``: a member's binding cycle is upstream's bindingCycle, which starts
        # (NominatedNodeNameForExpectation) with the PreBind pre-flights and nominates the member
        # to its node when a PreBind plugin will work or it waits at Permit, before WaitOnPermit
        pre_flight = None
        if self._pre_flights:
            pre_flight = self._pre_bind_pre_flight(fw, state, assumed, host, waits)  # type: ignore[attr-defined]
        if pre_flight is not None and (pre_flight.code() == Code.ERROR or pre_flight.is_rejected()):
            if run is not None:  # (not with idle PreBind plugins: _GangPermitRun.admits)
                run.materialize()
            if waits:  # its binding cycle ends here: nothing will wait on its Permit verdict
                fw.waiting_pods.remove(uid)
                self.cache.drop_parked()
            self._handle_binding_cycle_error(fw, state, member, assumed, host, pre_flight, None,  # type: ignore[attr-defined]
                                             started)
            return
        if waits:
            self._waiting[uid] = PendingBinding(fw, state, member, assumed, host, started)
            res = self.results.get(uid)
            if res is not None:
                res.status, res.node_name = WAITING, host
                res.message = f"waiting at Permit on node {host}"
                if self._pre_flights:  # nominated to its node while it waits (_pre_bind_pre_flight)
                    res.nominated_node_name = host
            return
        self._run_binding_cycle(fw, state, member, assumed, host, started)  # type: ignore[attr-defined]

    def _update_pod_group_condition(self, pg_info: Any, condition: dict) -> None:
        """``updatePodGroupCondition``: never back from True; ``observedGeneration`` the group's
        generation; ``SetStatusCondition``; the status patched (a PodGroup update event)."""
        pg = pg_info.pod_group
        if pg is None:
            return
        existing = find_status_condition(pg.conditions, condition["type"])
        if existing is not None and existing.get("status") == "True" and condition["status"] != "True":
            return
        condition = dict(condition, observedGeneration=pg.generation)
        conditions, changed = set_status_condition(pg.conditions, condition, self.clock.now())
        if not changed:
            return
        updated = pg.replace(conditions=conditions)
        updated.admitted = True  # a status patch: the spec was validated when the group was created
        self.cluster.update_object(updated)
        pg_info.pod_group = updated


class _GangPermitRun:
    """Permit for the members of one gang's submit when GangScheduling is the only Permit plugin
    (``PodGroupCycleMixin._gang_permit_run`` says when): what ``run_permit_plugins`` does for
    each (the plugin's answer with its activation of the unscheduled members, the plugin and point
    metrics, the Wait status), except that a member told to wait is kept here rather than
    registered as a WaitingPod with a 5-minute timer, and the member that completes ``minCount``
    releases them by forgetting them (GangScheduling's Allow of each). Submit goes on as for a
    waiting member (the pre-flights, the nomination, its PendingBinding); its binding cycle later
    finds no WaitingPod, which is what an allowed one leaves. Nothing between the first member's
    Permit and the release can tell: the Reserve and PreBind plugins are idle
    (:meth:`admits`), no record, no PostBind plugin, and no cycle runs inside submit. Whenever
    the run must end early (a member not admitted, a failure), :meth:`materialize` registers the
    members still held as the per-member path would have (same pods, same plugin, same timeout, at
    the same virtual time), and the per-member path takes over."""

    __slots__ = ("fw", "plugin", "pod_group", "group_state", "held", "active", "admitted")

    def __init__(self, fw: Any, plugin: Any, pod_group: Any, group_state: Any):
        self.fw, self.plugin, self.pod_group, self.group_state = fw, plugin, pod_group, group_state
        #: the assumed pods told to wait and not yet released, in member order
        self.held: list = []
        #: False once :meth:`materialize` handed the held members over: the next member's Permit
        #: must allow their WaitingPods, so the run does not answer it
        self.active = True
        #: the last skip set :meth:`admits` answered True for (the members of a run share one)
        self.admitted: frozenset | None = None

    def admits(self, state: CycleState) -> bool:
        """Whether the member whose cycle left ``state`` has idle Reserve and PreBind plugins (the
        runners call none of them, every pre-flight answers Skip: ``Framework``'s ``_idle``). The
        answer depends on the (frozen) skip set alone while the submit runs: a True one is kept
        for the very same set."""
        skipped = state.skip_filter_plugins
        if skipped is self.admitted:
            return True
        fw = self.fw
        ok = all(_idle(pl, skipped) for pl in fw.reserve_plugins) and \
            all(_idle(pl, skipped) for pl in fw.pre_bind_plugins)
        if ok and type(skipped) is frozenset:
            self.admitted = skipped
        return ok

    def permit(self, state: CycleState, pod: "Pod") -> Status | None:
        """``run_permit_plugins`` for ``pod`` (assumed) with GangScheduling alone."""
        fw = self.fw
        start = _perf_counter()
        waits = self.plugin.permit_waits(self.pod_group, self.group_state)
        if state.record_plugin_metrics:
            fw.metrics.observe_plugin("Permit", _GANG_SCHEDULING, "Wait" if waits else "Success",
                                      _perf_counter() - start)
        status: Status | None = None
        if waits:
            self.held.append(pod)
            status = Status(Code.WAIT, f"one or more plugins asked to wait and no plugin rejected pod "
                                       f"{go_quote(pod.name)}")
        else:
            self.held.clear()  # allowed, each of them (signalled before anything waits on them)
        fw._observe_point("Permit", status, _perf_counter() - start)
        return status

    def materialize(self) -> None:
        """The members still held become WaitingPods, each with its timer."""
        fw = self.fw
        timeout = min(_GANG_PERMIT_TIMEOUT, _MAX_PERMIT_TIMEOUT)
        for pod in self.held:
            fw.waiting_pods.add(_WaitingPodImpl(pod, {_GANG_SCHEDULING: timeout}, fw.clock))
        self.held.clear()
        self.active = False


def _pure_gang_min_count(plugins: list, pg_info: Any) -> int | None:
    """The ``minCount`` the PlacementFeasible plugins answer from when they are the in-tree
    GangScheduling alone (its exact class: the composite one reads more than two counts), whose
    ``placement_feasible`` reads only the entity's PodGroup (fixed for the cycle) and the progress:
    Unschedulable below ``minCount`` in reach, Wait below ``minCount``, else Success. None otherwise
    (the plugins are then called after every member)."""
    if len(plugins) != 1:
        return None
    from ..plugins.gangscheduling import GangScheduling
    pl = plugins[0]
    if type(pl) is not GangScheduling:
        return None
    return pl._entity_min_count(pg_info)


def _leaves_in_child_group_order(node: Any) -> list:
    """The PodGroups of a tree, depth first with each CompositePodGroup's children in
    ``GetChildGroups`` order (the order ``validateScheduledPods`` visits them)."""
    if node.composite_pod_group is None:
        return [node]
    return [leaf for child in node.child_groups() for leaf in _leaves_in_child_group_order(child)]
