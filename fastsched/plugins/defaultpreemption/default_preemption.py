"""DefaultPreemption (upstream ``plugins/defaultpreemption/default_preemption.go``, v1.34).

PostFilter: when no node fits the pod, find the node where evicting the fewest / least important
lower-priority pods makes it fit, evict them, and nominate that node (see :mod:`.preemption`).

The ``SchedulerAsyncPreemption`` gate (beta, on by default in v1.34) is read from the handle's
``feature_gates`` (:mod:`fastsched.features`) when the plugin is built; ``enable_async_preemption``
switches it afterwards.

* On: PostFilter nominates the preemptor at once and its victims are evicted ``api_delay`` seconds
  later on the framework's clock (default 0: before the next scheduling cycle; see :mod:`.preemption`).
  PreEnqueue keeps the preemptor out of activeQ and backoffQ while its preemption is evicting
  victims (UnschedulableAndUnresolvable ``waiting for the preemption for this pod to be finished``),
  and the plugin registers Pod/Delete with a hint that always answers QueueSkip: the deletion of
  the last victim requeues the preemptor through the hints of the plugins that rejected it
  (NodeResourcesFit's, ...), and this registration only lets the queue look at the gated pod on that
  event (upstream's ``isPodSchedulableAfterPodDeletion``).
* Off: victims are evicted inside PostFilter; PreEnqueue always admits, and no event is registered.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, Sequence

from ...api import PREEMPT_NEVER
from ...config.args import DefaultPreemptionArgs
from ...features import COMPOSITE_POD_GROUP, GENERIC_WORKLOAD, POD_GROUP_PREEMPTION_POLICY, SCHEDULER_ASYNC_PREEMPTION, \
    feature_gates_of
from ...framework import protocols as fwk
from ...framework.interface import (ActionType, ClusterEvent, ClusterEventWithHint, EnqueueExtensions,
                                    EventResource, PostFilterPlugin, PreEnqueuePlugin, QueueingHint)
from ...framework.podgroups import POD_GROUP_KEY_TYPE, pod_group_key
from ...framework.status import Code, Status, StatusError
from ...framework.types import NodeToStatus, PodInfo, PostFilterResult
from ..helper.args import validated_args
from .podgroup_preemption import (POD_GROUP_PREEMPTION_MSG_PREFIX, WAITING_FOR_GROUP_PREEMPTION, PodGroupEvaluator,
                                  PodGroupPostFilterResult, filter_victims_with_pdb_violation, get_cross_nodes_victims,
                                  more_important_victim, new_pod_victim, sort_victims)
from .preemption import Candidate, Evaluator, Victims, node_infos_of
from ...util.gosort import go_sort_slice
from .util import (DISRUPTION_TARGET, NOT_STARTED, REASON_PREEMPTION_BY_SCHEDULER, PDBIndex,  # noqa: F401
                   importance_key, more_important_pod, pod_priority, pod_start_time, pod_terminating_by_preemption)
# (imported with the plugin, not at the first preemption: that import compiled the module inside
# the first scheduling cycle that preempts when no bytecode is cached)
from .vectorized import VectorizedDryRun, plan_dry_run

if TYPE_CHECKING:  # pragma: no cover
    from ...api import LabelSelector, Pod, PodDisruptionBudget
    from ...framework import types as _types
    from ...framework.cycle_state import CycleState

NAME = "DefaultPreemption"
PREEMPTION_MSG_PREFIX = "preemption: "
ERR_NOT_ELIGIBLE_NEVER = "not eligible due to preemptionPolicy=Never."
ERR_NOT_ELIGIBLE_TERMINATING = "not eligible due to a terminating pod on the nominated node."
ERR_NO_VICTIMS = "No preemption victims found for incoming pod"
#: PreEnqueue's message while the pod's asynchronous preemption is under way (upstream's words)
WAITING_FOR_PREEMPTION = "waiting for the preemption for this pod to be finished"

#: ``is_eligible_pod(node_info, victim, preemptor) -> bool`` (upstream ``IsEligiblePodFunc``; ``victim`` a Victim:
#: with GenericWorkload the victim unit, without it a unit of one pod)
IsEligiblePodFunc = Callable[[Any, Any, "Pod"], bool]
#: ``more_important_pod(pod1, pod2) -> bool`` (upstream ``MoreImportantPodFunc``)
MoreImportantPodFunc = Callable[["Pod", "Pod"], bool]


def filter_pods_with_pdb_violation(pod_infos: Sequence[PodInfo], pdbs: "Sequence[PodDisruptionBudget] | PDBIndex"
                                   ) -> tuple[list[PodInfo], list[PodInfo]]:
    """Upstream ``filterPodsWithPDBViolation``: split ``pod_infos`` (order kept) into the pods whose
    eviction would exceed a PDB's ``disruptionsAllowed`` and the others.

    Each matching PDB (same namespace, selector matches, pod not already in ``disruptedPods``) loses
    one allowed disruption per pod, in order; a pod is violating when one of its PDBs goes below 0,
    and its PDBs after that one are not charged (v1.37.2's ``FilterVictimsWithPDBViolation`` returns
    there; v1.34's ``filterPodsWithPDBViolation`` charged every matching PDB). A pod without labels
    matches no PDB.
    """
    index = pdbs if isinstance(pdbs, PDBIndex) else PDBIndex(pdbs)
    allowed = [pdb.disruptions_allowed for pdb in index.pdbs]
    violating: list[PodInfo] = []
    non_violating: list[PodInfo] = []
    for pi in pod_infos:
        pod = pi.pod
        violated = False
        if pod.labels:
            for i, pdb, selector in index.by_namespace.get(pod.namespace, ()):
                if not selector.matches(pod.labels):
                    continue
                if pod.name in pdb.disrupted_pods:
                    continue  # its eviction was already processed by the API server
                allowed[i] -= 1
                if allowed[i] < 0:
                    violated = True
                    break
        (violating if violated else non_violating).append(pi)
    return violating, non_violating


def _error_status_from(status: Status) -> Status:
    """``fwk.AsStatus(status.AsError())``: an Error status carrying the failure's message."""
    err = status.as_error()
    return Status.from_error(err if err is not None else StatusError(status.message()))


#: Go's pdqsort sorts this many elements or fewer by insertion sort, which is stable
_GO_MAX_INSERTION = 12

#: methods a subclass must not override for the vectorized dry run (vectorized.py) to give its
#: results; DefaultPreemption.__init_subclass__ reads them to set ``dry_run_vectorizable``
DRY_RUN_METHODS = ("select_victims_on_node", "is_preemption_allowed", "has_potential_victims", "no_victims_status",
                    "_sort_by_importance", "_remove_pod", "_index_pdbs")


class DefaultPreemption(PostFilterPlugin, PreEnqueuePlugin, EnqueueExtensions):
    """Preempts lower-priority pods to make room for a pod no node fits."""

    #: whether the vectorized dry run reproduces this class's (vectorized.plan_dry_run): true for
    #: DefaultPreemption and for subclasses that override none of DRY_RUN_METHODS
    dry_run_vectorizable: bool = True

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        cls.dry_run_vectorizable = all(getattr(cls, m) is getattr(DefaultPreemption, m) for m in DRY_RUN_METHODS)

    def __init__(self, args: DefaultPreemptionArgs | None, handle: fwk.Handle):
        self.args = validated_args(args, DefaultPreemptionArgs,
                                   "got args of type {got}, want *DefaultPreemptionArgs")
        self.handle = handle
        #: extra victim eligibility beyond "lower priority" (upstream ``IsEligiblePod``); None = all.
        #: Called with a victim's PodInfo; with GenericWorkload with the victim unit
        #: (:class:`.podgroup_preemption.Victim`, upstream v1.37's argument), once per node it is on
        self.is_eligible_pod: IsEligiblePodFunc | None = None
        #: victim ordering (upstream ``MoreImportantPod``): priority, then earlier start time
        self.more_important_pod: MoreImportantPodFunc = more_important_pod
        #: victim unit ordering with GenericWorkload (upstream ``MoreImportantVictim``)
        self.more_important_victim: Callable[[Any, Any], bool] = more_important_victim
        gates = feature_gates_of(handle)
        async_preemption = gates.enabled(SCHEDULER_ASYNC_PREEMPTION)
        self.evaluator = Evaluator(NAME, handle, self, enable_async_preemption=async_preemption)
        #: GenericWorkload: PreEnqueue holds a pod group's members while the group's preemption runs
        self.enable_generic_workload = gates.enabled(GENERIC_WORKLOAD)
        #: CompositePodGroup: PreEnqueue holds the members of a whole tree while its root's runs
        self.enable_composite_pod_group = gates.enabled(COMPOSITE_POD_GROUP)
        #: with GenericWorkload, PreEnqueue reads a pod group's member only for its group (the
        #: group's or its root's UID, upstream's too): the queue asks once per pass over a group's
        #: members (this method's; a subclass's may read more)
        self.pre_enqueue_per_pod_group = self.enable_generic_workload and \
            type(self).pre_enqueue is DefaultPreemption.pre_enqueue
        #: workload-aware preemption (PodGroupPostFilter), sharing the evaluator's executor state
        self.pod_group_evaluator = PodGroupEvaluator(handle, self.evaluator,
                                                     gates.enabled(POD_GROUP_PREEMPTION_POLICY), NAME,
                                                     self.enable_composite_pod_group)
        self._pdb_index: tuple[Any, PDBIndex] | None = None
        #: dry-run all nodes at once where that gives the per-node path's results (see
        #: :mod:`.vectorized`); False always takes the per-node path (the reference)
        self.vectorized = True
        self._vectorized_runner: Any = None
        self._plan: tuple | None = None

    def name(self) -> str:
        return NAME

    # -- extension points ----------------------------------------------------------------------
    def post_filter(self, state: "CycleState", pod: "Pod", filtered_node_status_map: NodeToStatus
                    ) -> tuple[PostFilterResult | None, Status | None]:
        result, status = self.evaluator.preempt(state, pod, filtered_node_status_map)
        msg = "" if status is None else status.message()
        if status is not None and msg:
            return result, Status(status.code(), PREEMPTION_MSG_PREFIX + msg)
        return result, status

    def pod_group_post_filter(self, state: Any, pod_group_info: Any, scheduling_func: Callable
                              ) -> tuple[PodGroupPostFilterResult | None, Status]:
        """Upstream ``PodGroupPostFilter`` (v1.37.2): workload-aware preemption
        (:mod:`.podgroup_preemption`) inside a snapshot mutation session; a message gets the prefix
        ``pod group preemption: ``."""
        ms = getattr(self.handle, "mutable_snapshot", None)
        if ms is None:
            return None, Status.from_error(StatusError(
                "pod group preemption: failed to start mutations: the framework handle has no mutable snapshot"))
        try:
            ms.start_mutations()
        except Exception as e:  # noqa: BLE001
            return None, Status.from_error(StatusError(f"pod group preemption: failed to start mutations: {e}"))
        try:
            result, status, decision = self.pod_group_evaluator.evaluate(pod_group_info, scheduling_func)
        finally:
            try:
                ms.end_mutations()
            except Exception as e:  # noqa: BLE001 - upstream's deferred EndMutations error wins
                return None, Status.from_error(StatusError(f"pod group preemption: failed to end mutations: {e}"))
        if decision is not None:  # the evictions, once the snapshot is restored (see evaluate())
            result, status = self.pod_group_evaluator.actuate_decision(decision)
        msg = status.message()
        if msg:
            return result, Status(status.code(), POD_GROUP_PREEMPTION_MSG_PREFIX + msg)
        return result, status

    def pre_enqueue(self, pod: "Pod") -> Status | None:
        """Upstream ``PreEnqueue``: hold the pod while its asynchronous preemption is evicting
        victims; with GenericWorkload, a pod group's member while its group's is."""
        if not self.evaluator.enable_async_preemption:
            return None
        if not self.evaluator.preempting:  # nothing is preempting: no uid, the pod's or its group's, is held
            return None
        group = pod.scheduling_group
        if group is not None and self.enable_generic_workload:
            manager = getattr(self.handle, "pod_group_manager", None)
            if manager is None:
                return None
            # the group's UID, or with CompositePodGroup its root's; none found (the group or an
            # ancestor not seen): not DefaultPreemption's business, the pod is not held
            root_uid = self._root_uid(manager, pod) if self.enable_composite_pod_group else \
                self._pod_group_uid(manager, pod)
            if root_uid is None:
                return None
            if self.evaluator.is_pod_running_preemption(root_uid):
                return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, WAITING_FOR_GROUP_PREEMPTION)
            return None
        if self.evaluator.is_pod_running_preemption(pod.uid):
            return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, WAITING_FOR_PREEMPTION)
        return None

    @staticmethod
    def _pod_group_uid(manager: Any, pod: "Pod") -> str | None:
        group = pod.scheduling_group
        assert group is not None
        try:
            return manager.pod_groups_lister().get(pod.namespace, group.pod_group_name).uid
        except LookupError:
            return None

    @staticmethod
    def _root_uid(manager: Any, pod: "Pod") -> str | None:
        """The UID of the pod's root group (CompositePodGroup: ``BuildHierarchySnapshotFromPod``,
        then ``GetRootKeyForGroup``), None when the hierarchy cannot be resolved."""
        group = pod.scheduling_group
        assert group is not None
        try:
            snapshot = manager.composite_groups.hierarchy_snapshot_for_pod(pod)
            root, ok = snapshot.root_key_for_group(pod_group_key(pod.namespace, group.pod_group_name or ""))
            if not ok or root is None:
                return None
            if root.type == POD_GROUP_KEY_TYPE:
                return snapshot.pod_groups_lister().get(root.namespace, root.name).uid
            return snapshot.composite_objects_lister().get(root.namespace, root.name).uid
        except LookupError:
            return None

    def events_to_register(self) -> list[ClusterEventWithHint]:
        """Upstream ``EventsToRegister``: AssignedPod/Delete (v1.37; v1.34 registered Pod/Delete;
        hint: always QueueSkip) with async preemption, so that the queue considers a pod this plugin
        gated when an assigned pod is deleted; nothing without."""
        if not self.evaluator.enable_async_preemption:
            return []
        return [ClusterEventWithHint(ClusterEvent(EventResource.ASSIGNED_POD, ActionType.DELETE),
                                     self.is_pod_schedulable_after_pod_deletion)]

    def is_pod_schedulable_after_pod_deletion(self, pod: "Pod", old_obj: Any, new_obj: Any
                                              ) -> tuple[QueueingHint, Exception | None]:
        """Always QueueSkip: the plugins whose failures the preemption resolves (in the pod's
        rejector plugins beside this one) decide when to requeue it, not preemption."""
        return QueueingHint.QUEUE_SKIP, None

    # -- switches --------------------------------------------------------------------------------
    @property
    def enable_async_preemption(self) -> bool:
        """The SchedulerAsyncPreemption gate as this plugin applies it (set it before the
        scheduler reads ``events_to_register``)."""
        return self.evaluator.enable_async_preemption

    @enable_async_preemption.setter
    def enable_async_preemption(self, value: bool) -> None:
        self.evaluator.enable_async_preemption = bool(value)

    @property
    def api_delay(self) -> float:
        """Seconds, on the framework's clock, that an asynchronous preemption's API calls take
        (default 0: they complete before the scheduler's next cycle)."""
        return self.evaluator.api_delay

    @api_delay.setter
    def api_delay(self, seconds: float) -> None:
        if seconds < 0:
            raise ValueError(f"api_delay must be >= 0, got {seconds}")
        self.evaluator.api_delay = float(seconds)

    # -- preemption.Interface --------------------------------------------------------------------
    def calculate_num_candidates(self, num_nodes: int) -> int:
        """Upstream ``calculateNumCandidates``: max(percentage of the nodes, absolute), at most all."""
        n = num_nodes * self.args.min_candidate_nodes_percentage // 100
        if n < self.args.min_candidate_nodes_absolute:
            n = self.args.min_candidate_nodes_absolute
        if n > num_nodes:
            n = num_nodes
        return n

    def get_offset_and_num_candidates(self, num_nodes: int) -> tuple[int, int]:
        """A random offset in [0, num_nodes) from the handle's seeded RNG (upstream ``rand.Int31n``)."""
        return self.handle.rng.randrange(num_nodes), self.calculate_num_candidates(num_nodes)

    def candidates_to_victims_map(self, candidates: Sequence[Candidate]) -> dict[str, Victims]:
        return {c.name: c.victims for c in candidates}

    def ordered_score_funcs(self, nodes_to_victims: dict[str, Victims]) -> None:
        """None: pick_one_node_for_preemption uses upstream's default criteria."""
        return None

    def is_preemption_allowed(self, node_info: fwk.NodeInfo, victim: PodInfo, preemptor: "Pod") -> bool:
        """Upstream ``isPreemptionAllowed``: lower priority, and ``is_eligible_pod`` when set.

        Without GenericWorkload upstream's ``GetVictimsOnNode`` still hands ``IsEligiblePod`` a
        Victim, ``NewPodVictim(podInfo, nil, nil)`` (preemption.go), never the bare PodInfo: the
        hook sees ``pods()`` and ``priority()`` whatever the gate."""
        if pod_priority(victim.pod) >= pod_priority(preemptor):
            return False
        return self.is_eligible_pod is None or self.is_eligible_pod(node_info, new_pod_victim(victim, None, None),
                                                                    preemptor)

    def has_potential_victims(self, node_info: fwk.NodeInfo, preemptor: "Pod") -> bool:
        """Whether select_victims_on_node would find a pod to remove (lets the dry run skip copies;
        with GenericWorkload it always looks: the units need the group listers)."""
        if self._pod_groups() is not None:
            return True
        return any(self.is_preemption_allowed(node_info, pi, preemptor) for pi in node_info.pods)

    def vectorized_dry_run(self, state: "CycleState", pod: "Pod") -> tuple[Any, Any, Any] | None:
        """``(runner, plan, table)`` when the vectorized dry run applies to this preemptor (its
        remaining filters are node-only or additive, see :func:`.vectorized.plan_dry_run`), else None."""
        if not self.vectorized or self._pod_groups() is not None:  # (GenericWorkload: units, per node)
            return None
        lister = self.handle.snapshot_shared_lister() if callable(getattr(self.handle, "snapshot_shared_lister",
                                                                          None)) else None
        table = getattr(lister, "table", None)
        if table is None:
            return None
        cached = self._plan
        if cached is not None and cached[0] is state and cached[1] is pod and cached[2] is table:
            return cached[3]
        plan = plan_dry_run(self, state, pod, table)
        found = None
        if plan is not None:
            if self._vectorized_runner is None:
                self._vectorized_runner = VectorizedDryRun(self)
            found = (self._vectorized_runner, plan, table)
        self._plan = (state, pod, table, found)
        return found

    @property
    def default_score_funcs(self) -> bool:
        """Whether ``ordered_score_funcs`` is upstream's default (None: pickOneNodeForPreemption's criteria)."""
        return type(self).ordered_score_funcs is DefaultPreemption.ordered_score_funcs

    @staticmethod
    def no_victims_status() -> Status:
        return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_NO_VICTIMS)

    def pod_eligible_to_preempt_others(self, pod: "Pod", nominated_node_status: Status | None
                                       ) -> tuple[bool, str]:
        """Upstream ``PodEligibleToPreemptOthers``.

        Not eligible with preemptionPolicy Never, or while a lower-priority pod on the pod's
        nominated node is terminating because of an earlier preemption (unless the filters found
        that node UnschedulableAndUnresolvable: then waiting for it is pointless).
        """
        if pod.preemption_policy == PREEMPT_NEVER:
            return False, ERR_NOT_ELIGIBLE_NEVER
        nominated = pod.nominated_node_name
        if nominated:
            if nominated_node_status is not None and nominated_node_status.code() == Code.UNSCHEDULABLE_AND_UNRESOLVABLE:
                return True, ""
            try:
                node_info = node_infos_of(self.handle).get(nominated)
            except KeyError:
                node_info = None
            if node_info is not None:
                pod_groups = self._pod_groups()
                composite_pod_groups = self._composite_listers()[0]
                for pi in node_info.pods:
                    if pod_groups is not None:  # GenericWorkload: NewPodVictim, the group's priority
                        victim = new_pod_victim(pi, pod_groups, composite_pod_groups)
                        allowed = (victim.priority() < pod_priority(pod)
                                   and (self.is_eligible_pod is None or self.is_eligible_pod(node_info, victim, pod)))
                    else:
                        allowed = self.is_preemption_allowed(node_info, pi, pod)
                    if allowed and pod_terminating_by_preemption(pi.pod):
                        return False, ERR_NOT_ELIGIBLE_TERMINATING
        return True, ""

    # -- GenericWorkload: victims as units (preemption.go GetVictimsOnNode, SelectVictimsOnNode) ----
    def _pod_groups(self) -> Any:
        """The PodGroups lister with GenericWorkload on (upstream's ``pgSnapshotLister``), else None."""
        if not self.enable_generic_workload:
            return None
        manager = getattr(self.handle, "pod_group_manager", None)
        return None if manager is None else manager.pod_groups_lister()

    def _composite_listers(self) -> tuple[Any, Any]:
        """The CompositePodGroup objects and states listers with CompositePodGroup on (upstream's
        ``cpgSnapshotLister``, the evaluator's ``compositePodGroupSnapshot``), else (None, None):
        victims and priorities then stay flat."""
        if not self.enable_composite_pod_group:
            return None, None
        manager = getattr(self.handle, "pod_group_manager", None)
        if manager is None:
            return None, None
        groups = manager.composite_groups
        return groups.objects_lister(), groups.states_lister()

    def victims_on_node(self, node_info: _types.NodeInfo, pod_groups: Any) -> list[Any]:
        """``GetVictimsOnNode`` with GenericWorkload (``getCrossNodesVictims`` on the node alone):
        the units of its pods, through the CompositePodGroup hierarchies with that gate on; raises
        StatusError when a unit's node is not in the snapshot."""
        manager = getattr(self.handle, "pod_group_manager")
        return get_cross_nodes_victims([node_info], node_infos_of(self.handle), pod_groups,
                                       manager.pod_group_states_lister(), *self._composite_listers())

    def _select_victims_on_node_by_units(self, state: "CycleState", pod: "Pod", node_info: _types.NodeInfo,
                                         pdbs: Any, pod_groups: Any) -> tuple[list["Pod"], int, Status | None]:
        """``SelectVictimsOnNode`` with GenericWorkload: the node's victims are units
        (``GetVictimsOnNode`` → ``getCrossNodesVictims``: a ``disruptionMode: all`` group's scheduled
        pods together, wherever they run, or with CompositePodGroup the highest such group of its
        hierarchy; a member's priority is its group's, or its hierarchy's top's). Only the main node's
        copy is changed; the other nodes of a unit get the PreFilter extensions alone. Units are
        ordered by ``MoreImportantVictim``; ``is_eligible_pod`` is asked with each node of a unit and
        the unit (upstream's ``IsEligiblePodFunc`` takes a Victim)."""
        handle = self.handle
        main = node_info.node().name
        try:
            units = self.victims_on_node(node_info, pod_groups)
        except StatusError as e:
            return [], 0, Status.from_error(e)
        name_to_node: dict[str, Any] = {main: node_info}
        preemptor_priority = pod_priority(pod)

        def allowed(v: Any) -> bool:  # isPreemptionAllowedAcrossAllVictimNodes
            if v.priority() >= preemptor_priority:
                return False
            return self.is_eligible_pod is None or all(
                self.is_eligible_pod(n, v, pod) for n in v.affected_nodes().values())

        def remove(v: Any) -> Status | None:
            for pi in v.pods():
                ni = name_to_node[pi.pod.node_name]
                if pi.pod.node_name == main:
                    try:
                        ni.remove_pod(pi.pod)
                    except KeyError as e:
                        return Status.from_error(StatusError(str(e.args[0]) if e.args else str(e)))
                st = handle.run_pre_filter_extension_remove_pod(state, pod, pi, ni)
                if st is not None and not st.is_success():
                    return _error_status_from(st)
            return None

        def add(v: Any) -> Status | None:
            for pi in v.pods():
                ni = name_to_node[pi.pod.node_name]
                if pi.pod.node_name == main:
                    ni.add_pod_info(pi)
                st = handle.run_pre_filter_extension_add_pod(state, pod, pi, ni)
                if st is not None and not st.is_success():
                    return _error_status_from(st)
            return None

        potential = [v for v in units if allowed(v)]
        if not potential:
            return [], 0, self.no_victims_status()
        for v in potential:
            for name, ni in v.affected_nodes().items():
                name_to_node.setdefault(name, ni)
            status = remove(v)
            if status is not None:
                return [], 0, status
        status = handle.run_filter_plugins_with_nominated_pods(state, pod, node_info)
        if status is not None and not status.is_success():
            return [], 0, status
        potential = sort_victims(potential, self.more_important_victim)
        violating, non_violating = filter_victims_with_pdb_violation(potential, pdbs or [])
        victims: list = []
        num_violating = 0
        for v, count in [(v, c) for v, c in violating] + [(v, 0) for v in non_violating]:
            status = add(v)
            if status is not None:
                return [], 0, status
            st = handle.run_filter_plugins_with_nominated_pods(state, pod, node_info)
            if st is None or st.is_success():
                continue  # reprieved
            status = remove(v)
            if status is not None:
                return [], 0, status
            victims.append(v)
            num_violating += count
        if violating and non_violating:
            victims = sort_victims(victims, self.more_important_victim)
        return [pi.pod for v in victims for pi in v.pods()], num_violating, None

    def select_victims_on_node(self, state: "CycleState", pod: "Pod", node_info: _types.NodeInfo, pdbs: Any
                               ) -> tuple[list["Pod"], int, Status | None]:
        """Upstream ``SelectVictimsOnNode`` on copies of the node and the cycle state.

        Remove every lower-priority pod; if the pod then passes the filters, add them back one at a
        time (PDB-violating ones first, each group most important first) and keep each that still
        lets the pod fit. The rest are the victims. Returns (victims most important first, number of
        PDB-violating victims, status).
        """
        pod_groups = self._pod_groups()
        if pod_groups is not None:
            return self._select_victims_on_node_by_units(state, pod, node_info, pdbs, pod_groups)
        handle = self.handle
        potential = [pi for pi in node_info.pods if self.is_preemption_allowed(node_info, pi, pod)]
        for pi in potential:
            status = self._remove_pod(state, pod, pi, node_info)
            if status is not None:
                return [], 0, status
        if not potential:
            return [], 0, self.no_victims_status()

        status = handle.run_filter_plugins_with_nominated_pods(state, pod, node_info)
        if status is not None and not status.is_success():
            return [], 0, status

        made = {id(pi): i for i, pi in enumerate(potential)}  # the order GetVictimsOnNode made them in
        potential = self._sort_by_importance(potential, made)
        violating, non_violating = filter_pods_with_pdb_violation(potential, self._index_pdbs(pdbs))
        victims: list[PodInfo] = []
        num_violating = 0
        for group_is_violating, group in ((True, violating), (False, non_violating)):
            for pi in group:
                node_info.add_pod_info(pi)
                s = handle.run_pre_filter_extension_add_pod(state, pod, pi, node_info)
                if s is not None and not s.is_success():
                    return [], 0, _error_status_from(s)
                s = handle.run_filter_plugins_with_nominated_pods(state, pod, node_info)
                if s is None or s.is_success():
                    continue  # reprieved
                status = self._remove_pod(state, pod, pi, node_info)
                if status is not None:
                    return [], 0, status
                victims.append(pi)
                if group_is_violating:
                    num_violating += 1
        if violating and non_violating:
            victims = self._sort_by_importance(victims, made)
        return [pi.pod for pi in victims], num_violating, None

    # -- helpers ---------------------------------------------------------------------------------
    def _remove_pod(self, state: "CycleState", pod: "Pod", pi: PodInfo, node_info: _types.NodeInfo) -> Status | None:
        """Remove ``pi`` from the copy and update the PreFilter states; an Error status on failure."""
        try:
            node_info.remove_pod(pi.pod)
        except KeyError as e:
            return Status.from_error(StatusError(str(e.args[0]) if e.args else str(e)))
        s = self.handle.run_pre_filter_extension_remove_pod(state, pod, pi, node_info)
        if s is not None and not s.is_success():
            return _error_status_from(s)
        return None

    def _sort_by_importance(self, pod_infos: list[PodInfo], made: dict[int, int]) -> list[PodInfo]:
        """Most important first, ordered as upstream's ``sort.Slice(potentialVictims,
        MoreImportantVictim)`` orders them: Go's pdqsort (:func:`~fastsched.util.gosort.go_sort_slice`),
        which leaves equally important pods beyond 12 where its partitions put them, not in list
        order; which ones are reprieved, and which a PDB counts as violating, follow that order.

        ``made`` maps ``id(pod_info)`` to the pod's position on the node when the victims were made
        (upstream's ``GetVictimsOnNode``): two pods that have not started compare by the
        ``time.Now()`` each victim got then, so the one made first is the more important.
        """
        if self.more_important_pod is not more_important_pod:
            custom = self.more_important_pod
            out = list(pod_infos)
            go_sort_slice(out, lambda a, b: custom(a.pod, b.pod))
            return out
        # MoreImportantVictim on single-pod victims as one key: priority, start, and the making
        # order only between two not-started pods (finite equal starts stay tied, as in Go)
        keyed = [((-pod_priority(pi.pod), start, made[id(pi)] if start == NOT_STARTED else 0), pi)
                 for pi in pod_infos for start in (pod_start_time(pi.pod),)]
        if len(keyed) > _GO_MAX_INSERTION:
            go_sort_slice(keyed, lambda a, b: a[0] < b[0])
        else:  # Go's insertion sort is stable: the same order as Python's sort
            keyed.sort(key=lambda kp: kp[0])
        return [pi for _, pi in keyed]

    def _index_pdbs(self, pdbs: Any) -> PDBIndex:
        """The PDBIndex of ``pdbs``, built once per dry run (the same list is passed for each node)."""
        if isinstance(pdbs, PDBIndex):
            return pdbs
        cached = self._pdb_index
        if cached is not None and cached[0] is pdbs:
            return cached[1]
        index = PDBIndex(pdbs or ())
        self._pdb_index = (pdbs, index)
        return index


def new(args: DefaultPreemptionArgs | None, handle: fwk.Handle) -> DefaultPreemption:
    """The plugin factory: ``args`` is a DefaultPreemptionArgs (None for the defaults)."""
    return DefaultPreemption(args, handle)


__all__ = ["DISRUPTION_TARGET", "DefaultPreemption", "ERR_NOT_ELIGIBLE_NEVER", "ERR_NOT_ELIGIBLE_TERMINATING",
           "ERR_NO_VICTIMS", "NAME", "PDBIndex", "PREEMPTION_MSG_PREFIX", "REASON_PREEMPTION_BY_SCHEDULER",
           "WAITING_FOR_PREEMPTION", "filter_pods_with_pdb_violation", "new", "pod_terminating_by_preemption"]
