"""The PodTopologySpread plugin (upstream ``podtopologyspread/plugin.go``, v1.34)."""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Sequence

import numpy as np

from ..._kernels import _table

from ...api import LABEL_HOSTNAME, LABEL_ZONE, Pod, TopologySpreadConstraint
from ...config.args import SYSTEM_DEFAULTING, PodTopologySpreadArgs
from ...framework import protocols as fwk
from ...framework.vectorized import VectorizedFilterPlugin, VectorizedScoreExtensions, VectorizedScorePlugin, FilterVerdicts
from ...framework.columns import CYCLE, EACH_CYCLE, NODES, SKIPPED, ColumnForm
from ...framework.cycle_state import CycleState, NotFoundError
from ...framework.interface import (ActionType, ClusterEvent, ClusterEventWithHint, EnqueueExtensions,
                                    EventResource, PreFilterExtensions, PreFilterPlugin, PreScorePlugin,
                                    QueueingHint)
from ...framework import signers
from ...framework.status import Code, Status, StatusError
from ...framework.types import NodeScore, PodInfo, PreFilterResult
from ..helper.args import validated_args
from ..helper.typed import as_typed
from .common import (DO_NOT_SCHEDULE, HONOR, SCHEDULE_ANYWAY, SpreadConstraint, WorkloadObjects, controller_lookup,
                     default_selector, filter_constraints, node_labels_match_constraints)
from .filtering import (ERR_REASON_CONSTRAINTS_NOT_MATCH, ERR_REASON_NODE_LABEL_NOT_MATCH, FILTER_REASONS,
                        VERDICT_CODES, VERDICT_REASONS, PreFilterState, filter_batch_verdicts, pre_filter_state_batch,
                        pre_filter_state_per_node, update_with_pod)
from .scoring import (PreScoreState, normalize_scores, normalize_scores_batch, pre_score_state_batch,
                      pre_score_state_per_node, score_vectorized, score_node)

if TYPE_CHECKING:  # pragma: no cover
    from ...framework.protocols import NodeTable

NAME = "PodTopologySpread"
PRE_FILTER_STATE_KEY = "PreFilter" + NAME
PRE_SCORE_STATE_KEY = "PreScore" + NAME


#: ``defaultingType: System``: hostname maxSkew 3 and zone maxSkew 5, both ScheduleAnyway.
SYSTEM_DEFAULT_CONSTRAINTS = (
    TopologySpreadConstraint(max_skew=3, topology_key=LABEL_HOSTNAME, when_unsatisfiable=SCHEDULE_ANYWAY),
    TopologySpreadConstraint(max_skew=5, topology_key=LABEL_ZONE, when_unsatisfiable=SCHEDULE_ANYWAY),
)

#: at most this many parsed constraint lists are kept (cleared when full)
_CONSTRAINTS_CACHE_SIZE = 256
#: at most this many pod specs' default constraints are kept (cleared when full)
_DEFAULTS_CACHE_SIZE = 256
#: a controller entry the workload objects do not have (``_defaults``' record of what it read)
_ABSENT = object()
#: the lowest int64: a count check without a lower bound (``_table.clear_failing``)
_LOWEST = -(1 << 63)
#: the forms of a pod whose own constraints are all hard / all soft: the other part answers Skip
#: (reads nothing of the spec: the form itself says so)
_FILTER_EACH_CYCLE_SCORE_SKIPPED = ColumnForm(filter=CYCLE, score=NODES, reads=())
_SCORE_EACH_CYCLE_FILTER_SKIPPED = ColumnForm(filter=NODES, score=CYCLE, reads=())


class PodTopologySpread(VectorizedFilterPlugin, PreFilterPlugin, PreFilterExtensions, PreScorePlugin,
                        VectorizedScorePlugin, VectorizedScoreExtensions, EnqueueExtensions):
    """Spreads pods over topology domains: hard constraints filter, soft ones (or the cluster
    defaults) score. Feature flags default to v1.34's gates (all on)."""

    def __init__(self, args: PodTopologySpreadArgs | None = None, handle: fwk.Handle | None = None, *,
                 enable_node_inclusion_policy: bool = True, enable_match_label_keys: bool = True,
                 enable_scheduling_queue_hint: bool = True, workload_objects: WorkloadObjects | None = None):
        args = args if args is not None else PodTopologySpreadArgs()
        self._handle = handle
        self.system_defaulted = args.defaulting_type == SYSTEM_DEFAULTING
        if self.system_defaulted:
            self.default_constraints: tuple[TopologySpreadConstraint, ...] = SYSTEM_DEFAULT_CONSTRAINTS
        else:
            self.default_constraints = tuple(TopologySpreadConstraint(
                max_skew=c.max_skew, topology_key=c.topology_key, when_unsatisfiable=c.when_unsatisfiable,
                min_domains=c.min_domains, node_affinity_policy=c.node_affinity_policy,
                node_taints_policy=c.node_taints_policy, match_label_keys=tuple(c.match_label_keys))
                for c in args.default_constraints)
        self.enable_node_inclusion_policy = enable_node_inclusion_policy
        self.enable_match_label_keys = enable_match_label_keys
        self.enable_scheduling_queue_hint = enable_scheduling_queue_hint
        #: what DefaultSelector can see (fastsched has no store of these kinds: empty by default)
        self.workload_objects = workload_objects if workload_objects is not None else WorkloadObjects()
        #: (id of a pod's constraints, id of its labels, action, flags) -> (constraints, labels, parsed)
        self._constraints_cache: dict[tuple, tuple[Any, Any, list[SpreadConstraint]]] = {}
        #: (namespace, id of labels, id of owner references) -> what _defaults read and answered
        self._defaults_cache: dict[tuple, tuple] = {}

    def name(self) -> str:
        return NAME

    # -- opportunistic batching ---------------------------------------------------------------------
    def sign_pod(self, pod: Pod) -> tuple[signers.Fragments | None, Status | None]:
        """Upstream ``SignPod``: no fragment; refuses a pod with constraints, and every pod while the
        plugin has default constraints (whether or not they would apply to the pod)."""
        if pod.topology_spread_constraints:
            return None, Status(Code.UNSCHEDULABLE, "pods with topology constraints are not signable")
        if self.default_constraints:
            return None, Status(Code.UNSCHEDULABLE, "pods with default topology constraints are not signable")
        return None, None

    def sign_refuses_every_pod(self) -> bool:
        """Whether :meth:`sign_pod` refuses every pod (it does while there are default constraints):
        the framework then keeps no batch state for the profile."""
        return bool(self.default_constraints)

    # -- the fused cycle -----------------------------------------------------------------------------
    #: the pod spec fields its column form and plan parts read (fastsched.framework.columns)
    column_reads = ("namespace", "labels", "topology_spread_constraints", "node_selector", "affinity", "tolerations")

    def column_form(self, pod: Pod, table: NodeTable) -> ColumnForm | None:
        """A pod with no hard and no soft constraint (its own or defaulted) is skipped at PreFilter
        and PreScore; any constraint counts pods per domain, and its scores weigh the domains of
        the feasible nodes: Filter and Score run each cycle (CYCLE). A pod whose own constraints
        are all hard (or all soft) is skipped at PreScore (PreFilter) whatever the nodes hold: that
        part is static (NODES, answered Skip once per plan, as :data:`SKIPPED`'s)."""
        if pod.topology_spread_constraints:
            hard = bool(self._own_constraints(pod, DO_NOT_SCHEDULE))
            soft = bool(self._own_constraints(pod, SCHEDULE_ANYWAY))
            if hard and soft:
                return EACH_CYCLE
            if hard:
                return _FILTER_EACH_CYCLE_SCORE_SKIPPED
            if soft:
                return _SCORE_EACH_CYCLE_FILTER_SKIPPED
            return SKIPPED
        if self._has_default_constraints(pod):
            return EACH_CYCLE  # the pods on the nodes, and the feasible nodes
        return SKIPPED

    def column_guard(self, pod: Pod, table: NodeTable) -> bool:
        """Whether the pod gets default constraints: it depends on the Services, ReplicaSets, ...
        that select it, which are not part of the pod spec (cheap when there are none)."""
        return self._has_default_constraints(pod)

    def column_guard_fixed(self, pod: Pod) -> bool:
        """:meth:`column_guard` is False for every cluster state when the plugin has no default
        constraints (its arguments: ``framework.columns.GuardedColumnPlugin``'s contract)."""
        return not self.default_constraints

    def _has_default_constraints(self, pod: Pod) -> bool:
        if not self.default_constraints or self.workload_objects.is_empty():
            return False
        hard, soft = self._defaults(pod)
        return bool(hard or soft)

    # -- constraints ------------------------------------------------------------------------------
    def _filter(self, constraints: Sequence[TopologySpreadConstraint], pod: Pod, action: str) -> list[SpreadConstraint]:
        return filter_constraints(constraints, pod.labels, action,
                                  enable_match_label_keys=self.enable_match_label_keys,
                                  enable_node_inclusion_policy=self.enable_node_inclusion_policy)

    def _own_constraints(self, pod: Pod, action: str) -> list[SpreadConstraint]:
        """:meth:`_filter` of the pod's own constraints, kept per constraints object (and labels
        object, which matchLabelKeys read): pods of one spec share them (interned at admission), so
        the constraints are parsed once per spec, not once per cycle. Callers do not mutate the
        list (the states copy it)."""
        own = pod.topology_spread_constraints
        labels = pod.labels
        key = (id(own), id(labels), action, self.enable_match_label_keys, self.enable_node_inclusion_policy)
        hit = self._constraints_cache.get(key)
        if hit is not None and hit[0] is own and hit[1] is labels:
            return hit[2]
        constraints = self._filter(own, pod, action)
        if len(self._constraints_cache) >= _CONSTRAINTS_CACHE_SIZE:
            self._constraints_cache.clear()
        self._constraints_cache[key] = (own, labels, constraints)
        return constraints

    def build_default_constraints(self, pod: Pod, action: str) -> list[SpreadConstraint]:
        """Upstream ``buildDefaultConstraints``: the default constraints of ``action`` with the
        selector DefaultSelector deduces for the pod; none when that selector is empty. Callers
        do not mutate the list (it is kept per pod spec, see :meth:`_defaults`)."""
        if not self.default_constraints or self.workload_objects.is_empty():
            return []
        hard, soft = self._defaults(pod)
        return hard if action == DO_NOT_SCHEDULE else soft if action == SCHEDULE_ANYWAY else \
            self._build_default_constraints(pod, action)

    def _build_default_constraints(self, pod: Pod, action: str) -> list[SpreadConstraint]:
        """:meth:`build_default_constraints` computed afresh.

        The selector is computed first (upstream filters the constraints first): filtering the
        default constraints cannot fail, and most pods have an empty selector."""
        selector = default_selector(pod, self.workload_objects)
        if selector.is_empty():
            return []
        constraints = self._filter(self.default_constraints, pod, action)
        if not constraints:
            return []
        return [SpreadConstraint(c.max_skew, c.topology_key, selector, c.min_domains, c.node_affinity_policy,
                                 c.node_taints_policy) for c in constraints]

    def _defaults(self, pod: Pod) -> tuple[list[SpreadConstraint], list[SpreadConstraint]]:
        """``(hard, soft)``: :meth:`_build_default_constraints` for DoNotSchedule and ScheduleAnyway,
        kept per pod spec. The answer reads the pod's namespace, labels and owner references, and of
        the workload objects the namespace's Service selectors and the controller's entry
        (``default_selector``); it is reused while the pod holds the very same labels and owner
        references objects (pods of one template share them: interned at admission) and those
        entries are the very same objects (:class:`WorkloadObjects`: entries are replaced, not
        edited). A column guard, PreFilter, PreScore and the queueing hints ask this several times
        a cycle; it was a selector and two constraint lists built per call."""
        objects = self.workload_objects
        namespace, labels, owners = pod.namespace, pod.labels, pod.owner_references
        key = (namespace, id(labels), id(owners))
        hit = self._defaults_cache.get(key)
        if hit is not None:  # (the entry holds the labels and owners: their ids are not reused)
            (kept_labels, kept_owners, kept_services, lookup, kept_controller, answer) = hit
            if kept_labels is labels and kept_owners is owners and objects.services.get(namespace) is kept_services \
                    and (lookup is None or getattr(objects, lookup[0]).get(lookup[1], _ABSENT) is kept_controller):
                return answer
        lookup = controller_lookup(pod)
        controller = _ABSENT if lookup is None else getattr(objects, lookup[0]).get(lookup[1], _ABSENT)
        services = objects.services.get(namespace)
        answer = (self._build_default_constraints(pod, DO_NOT_SCHEDULE),
                  self._build_default_constraints(pod, SCHEDULE_ANYWAY))
        if len(self._defaults_cache) >= _DEFAULTS_CACHE_SIZE:
            self._defaults_cache.clear()
        self._defaults_cache[key] = (labels, owners, services, lookup, controller, answer)
        return answer

    def get_constraints(self, pod: Pod) -> list[SpreadConstraint]:
        """Upstream ``getConstraints``: the pod's hard constraints, or the default hard ones."""
        if pod.topology_spread_constraints:
            return self._own_constraints(pod, DO_NOT_SCHEDULE)
        return self.build_default_constraints(pod, DO_NOT_SCHEDULE)

    def _soft_constraints(self, pod: Pod) -> list[SpreadConstraint]:
        if pod.topology_spread_constraints:
            return self._own_constraints(pod, SCHEDULE_ANYWAY)
        return self.build_default_constraints(pod, SCHEDULE_ANYWAY)

    # -- PreFilter / extensions ----------------------------------------------------------------------
    def pre_filter(self, state: CycleState, pod: Pod, nodes: Sequence[fwk.NodeInfo]) -> tuple[PreFilterResult | None,
                                                                                      Status | None]:
        constraints = self.get_constraints(pod)
        if not constraints:
            return None, Status(Code.SKIP)
        if fwk.is_node_batch(nodes):
            s = pre_filter_state_batch(pod, nodes, constraints, self.enable_node_inclusion_policy)
        else:
            s = pre_filter_state_per_node(pod, nodes, constraints, self.enable_node_inclusion_policy)
        state.write(PRE_FILTER_STATE_KEY, s)
        return None, None

    def pre_filter_extensions(self) -> "PodTopologySpread":
        return self

    def add_pod(self, state: CycleState, pod_to_schedule: Pod, pod_info_to_add: PodInfo,
                node_info: fwk.NodeInfo) -> Status | None:
        s = _read_pre_filter_state(state)
        if isinstance(s, Status):
            return s
        update_with_pod(s, pod_info_to_add.pod, pod_to_schedule, node_info.node(), 1,
                        self.enable_node_inclusion_policy)
        return None

    def remove_pod(self, state: CycleState, pod_to_schedule: Pod, pod_info_to_remove: PodInfo,
                   node_info: fwk.NodeInfo) -> Status | None:
        s = _read_pre_filter_state(state)
        if isinstance(s, Status):
            return s
        update_with_pod(s, pod_info_to_remove.pod, pod_to_schedule, node_info.node(), -1,
                        self.enable_node_inclusion_policy)
        return None

    # -- Filter ---------------------------------------------------------------------------------------
    def filter(self, state: CycleState, pod: Pod, node_info: fwk.NodeInfo) -> Status | None:
        s = _read_pre_filter_state(state)
        if isinstance(s, Status):
            return s
        if not s.constraints:
            return None
        labels = node_info.node().labels
        pod_labels = pod.labels
        for i, c in enumerate(s.constraints):
            value = labels.get(c.topology_key)
            if value is None:
                return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_REASON_NODE_LABEL_NOT_MATCH)
            min_match = s.min_match_num(i, c.min_domains)
            self_match = 1 if c.selector.matches(pod_labels) else 0
            if s.tp_value_to_match_num[i].get(value, 0) + self_match - min_match > c.max_skew:
                return Status(Code.UNSCHEDULABLE, ERR_REASON_CONSTRAINTS_NOT_MATCH)
        return None

    def filter_vectorized(self, state: CycleState, pod: Pod, nodes: fwk.NodeBatch) -> FilterVerdicts | Status:
        s = _read_pre_filter_state(state)
        if isinstance(s, Status):
            return s
        if not s.constraints:
            return FilterVerdicts.all_pass(len(nodes))
        if len(s.constraints) == 1:  # one pass over the window's label codes
            table, key = nodes.table, s.constraints[0].topology_key
            column = table.label_codes.get(key)
            if column is not None and column.dtype == np.int32 and column.flags.c_contiguous:
                codes, reasons = _table.skew_verdicts_at(
                    column, nodes.rows, s.tp_value_to_match_num[0].counts_by_code(table, key), s.skew_limit(0, pod),
                    VERDICT_CODES[1], VERDICT_REASONS[1], VERDICT_CODES[2], VERDICT_REASONS[2])
                return FilterVerdicts(codes, reasons, FILTER_REASONS)
        verdicts = filter_batch_verdicts(s, pod, nodes)  # (n,) int8 in {0, 1, 2}
        return FilterVerdicts(VERDICT_CODES[verdicts], VERDICT_REASONS[verdicts], FILTER_REASONS)

    def filter_window_mask(self, state: CycleState, pod: Pod, nodes: fwk.NodeBatch, mask: np.ndarray,
                           first: bool) -> bool:
        """The compiled cycle's window Filter (see ``CompiledCycle._filter_windows``): whether each
        row of ``nodes`` passes, written into ``mask`` (C,) uint8 at the rows (set when ``first``,
        else ANDed), as ``filter_vectorized``'s codes == 0 (one constraint: a row fails without the
        key or with ``count > limit``). False (nothing written) where ``filter_vectorized`` takes
        another path (no state, no or several constraints, an unusual column): it then answers."""
        s = _read_pre_filter_state(state)
        if isinstance(s, Status) or len(s.constraints) != 1:
            return False
        table, key = nodes.table, s.constraints[0].topology_key
        column = table.label_codes.get(key)
        if column is None or column.dtype != np.int32 or not column.flags.c_contiguous:
            return False
        counts = s.tp_value_to_match_num[0].counts_by_code(table, key)
        _table.clear_failing([(counts, column, False, _LOWEST, s.skew_limit(0, pod))], nodes.rows, mask, first)
        return True

    # -- PreScore / Score -------------------------------------------------------------------------------
    def pre_score(self, state: CycleState, pod: Pod, nodes: Sequence[fwk.NodeInfo]) -> Status | None:
        lister = self._handle.snapshot_shared_lister() if self._handle is not None else None
        if lister is None:
            return Status.from_error(StatusError("getting all nodes: SnapshotSharedLister is nil"))
        try:
            all_nodes = lister.node_infos().list()
        except Exception as e:  # noqa: BLE001 - reported as upstream does
            return Status.from_error(StatusError(f"getting all nodes: {e}"))
        if len(nodes) == 0 or len(all_nodes) == 0:
            return Status(Code.SKIP)  # no nodes to score
        constraints = self._soft_constraints(pod)
        if not constraints:
            return Status(Code.SKIP)
        # Only non-system-default rules require every key: then nodes without a zone label still
        # get hostname spreading.
        require_all = bool(pod.topology_spread_constraints) or not self.system_defaulted
        if fwk.is_node_batch(nodes) and fwk.is_node_batch(all_nodes) and all_nodes.table is nodes.table:
            s = pre_score_state_batch(pod, nodes, all_nodes.rows, constraints, require_all,
                                      self.enable_node_inclusion_policy)
        else:
            s = pre_score_state_per_node(pod, nodes, all_nodes, constraints, require_all,
                                         self.enable_node_inclusion_policy)
        state.write(PRE_SCORE_STATE_KEY, s)
        return None

    def score(self, state: CycleState, pod: Pod, node_info: fwk.NodeInfo) -> tuple[int, Status | None]:
        s = _read_pre_score_state(state)
        if isinstance(s, Status):
            return 0, s
        return score_node(s, pod, node_info), None

    def score_vectorized(self, state: CycleState, pod: Pod, nodes: fwk.NodeBatch) -> tuple[np.ndarray, Status | None]:
        s = _read_pre_score_state(state)
        if isinstance(s, Status):
            return np.zeros(len(nodes), dtype=np.int64), s
        return score_vectorized(s, pod, nodes), None

    def score_extensions(self) -> "PodTopologySpread":
        return self

    def normalize_score(self, state: CycleState, pod: Pod, scores: list[NodeScore]) -> Status | None:
        s = _read_pre_score_state(state)
        if isinstance(s, Status):
            return s
        normalize_scores(s, scores)
        return None

    def normalize_score_vectorized(self, state: CycleState, pod: Pod, scores: np.ndarray, nodes: fwk.NodeBatch
                                   ) -> Status | None:
        s = _read_pre_score_state(state)
        if isinstance(s, Status):
            return s
        normalize_scores_batch(s, scores, nodes)
        return None

    # -- EnqueueExtensions -------------------------------------------------------------------------------
    def events_to_register(self) -> list[ClusterEventWithHint]:
        node_actions = (ActionType.ADD | ActionType.DELETE | ActionType.UPDATE_NODE_LABEL
                        | ActionType.UPDATE_NODE_TAINT)
        assigned_actions = ActionType.ADD | ActionType.UPDATE_POD_LABEL | ActionType.DELETE
        if not self.enable_scheduling_queue_hint:
            return [
                ClusterEventWithHint(ClusterEvent(EventResource.POD, assigned_actions),
                                     self.is_schedulable_after_assigned_pod_change),
                ClusterEventWithHint(ClusterEvent(EventResource.NODE, node_actions), self.is_schedulable_after_node_change),
            ]
        return [
            # an assigned pod added, relabelled or deleted may change the counts
            ClusterEventWithHint(ClusterEvent(EventResource.ASSIGNED_POD, assigned_actions),
                                 self.is_schedulable_after_assigned_pod_change),
            # the pod's own update: a new label, or a new toleration under NodeTaintsPolicy: Honor
            ClusterEventWithHint(ClusterEvent(EventResource.TARGET_POD,
                                              ActionType.UPDATE_POD_TOLERATIONS | ActionType.UPDATE_POD_LABEL),
                                 self.is_schedulable_after_target_pod_change),
            ClusterEventWithHint(ClusterEvent(EventResource.NODE, node_actions), self.is_schedulable_after_node_change),
        ]

    def is_schedulable_after_target_pod_change(self, pod: Pod, old_obj: Any, new_obj: Any) -> tuple[QueueingHint, Any]:
        """Upstream ``isSchedulableAfterTargetPodChange``: Queue on a new toleration when a
        constraint honours taints, else as a label change."""
        original, modified, err = as_typed(Pod, "*v1.Pod", old_obj, new_obj)
        if err is not None:
            return QueueingHint.QUEUE, err
        assert original is not None and modified is not None  # an update
        constraints = self.get_constraints(pod)
        if tuple(modified.tolerations) != tuple(original.tolerations) and \
                any(c.node_taints_policy == HONOR for c in constraints):
            return QueueingHint.QUEUE, None
        return _after_pod_label_change(original, modified, constraints)

    def is_schedulable_after_assigned_pod_change(self, pod: Pod, old_obj: Any,
                                                 new_obj: Any) -> tuple[QueueingHint, Any]:
        """Upstream ``isSchedulableAfterAssignedPodChange``."""
        original, modified, err = as_typed(Pod, "*v1.Pod", old_obj, new_obj)
        if err is not None:
            return QueueingHint.QUEUE, err
        if (modified is not None and not _involved_in_spreading(modified, pod)) or \
                (original is not None and not _involved_in_spreading(original, pod)):
            return QueueingHint.QUEUE_SKIP, None
        constraints = self.get_constraints(pod)
        if modified is not None and original is not None:
            return _after_pod_label_change(original, modified, constraints)
        changed = modified if modified is not None else original
        assert changed is not None
        if any(c.selector.matches(changed.labels) for c in constraints):
            return QueueingHint.QUEUE, None
        return QueueingHint.QUEUE_SKIP, None

    def is_schedulable_after_node_change(self, pod: Pod, old_obj: Any, new_obj: Any) -> tuple[QueueingHint, Any]:
        """Upstream ``isSchedulableAfterNodeChange``."""
        original, modified = old_obj, new_obj
        constraints = self.get_constraints(pod)
        original_matching = original is not None and node_labels_match_constraints(original.labels, constraints)
        modified_matching = modified is not None and node_labels_match_constraints(modified.labels, constraints)
        if original is not None and modified is not None:
            if original_matching != modified_matching:
                return QueueingHint.QUEUE, None
            keys_changed = any(original.labels.get(c.topology_key, "") != modified.labels.get(c.topology_key, "")
                               for c in constraints)
            if modified_matching and (keys_changed or tuple(original.taints) != tuple(modified.taints)):
                return QueueingHint.QUEUE, None
            return QueueingHint.QUEUE_SKIP, None
        if modified is not None:
            return (QueueingHint.QUEUE if modified_matching else QueueingHint.QUEUE_SKIP), None
        return (QueueingHint.QUEUE if original_matching else QueueingHint.QUEUE_SKIP), None


def _involved_in_spreading(incoming: Pod, pod_with_spreading: Pod) -> bool:
    """Upstream ``involvedInTopologySpreading`` (v1.37.2): an assigned or nominated pod of its
    namespace (a nominated pod counts as assigned to its node: its deletion or change of
    nomination is an AssignedPodDelete)."""
    if not incoming.node_name and not incoming.nominated_node_name:
        return False
    return incoming.namespace == pod_with_spreading.namespace


def _after_pod_label_change(original: Pod, modified: Pod, constraints: Sequence[Any]) -> tuple[QueueingHint, Any]:
    """Upstream ``isSchedulableAfterPodLabelChange``: Queue when the change makes the pod match
    (or stop matching) some constraint's selector."""
    if dict(modified.labels) == dict(original.labels):
        return QueueingHint.QUEUE_SKIP, None
    for c in constraints:
        if c.selector.matches(original.labels) != c.selector.matches(modified.labels):
            return QueueingHint.QUEUE, None
    return QueueingHint.QUEUE_SKIP, None


def _read_pre_filter_state(state: CycleState) -> PreFilterState | Status:
    try:
        return state.read(PRE_FILTER_STATE_KEY)
    except NotFoundError as e:
        return Status.from_error(StatusError(f'reading "{PRE_FILTER_STATE_KEY}" from cycleState: {e}'))


def _read_pre_score_state(state: CycleState) -> PreScoreState | Status:
    try:
        return state.read(PRE_SCORE_STATE_KEY)
    except NotFoundError as e:
        return Status.from_error(StatusError(f'error reading "{PRE_SCORE_STATE_KEY}" from cycleState: {e}'))


def new(args: PodTopologySpreadArgs | None, handle: fwk.Handle | None = None) -> PodTopologySpread:
    """Upstream ``New``: validate the args as ``ValidatePodTopologySpreadArgs(nil, args)`` does.

    Upstream also refuses a nil SnapshotSharedLister here; fastsched frameworks get their snapshot
    after construction, so the lister is read at PreScore instead.
    """
    args = validated_args(args, PodTopologySpreadArgs, "want args to be of type PodTopologySpreadArgs, got {got}")
    return PodTopologySpread(args, handle)


__all__ = ["NAME", "PodTopologySpread", "new", "PRE_FILTER_STATE_KEY", "PRE_SCORE_STATE_KEY",
           "ERR_REASON_CONSTRAINTS_NOT_MATCH", "ERR_REASON_NODE_LABEL_NOT_MATCH", "SYSTEM_DEFAULT_CONSTRAINTS"]
