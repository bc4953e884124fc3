"""The TaintToleration plugin: Filter, PreScore, Score and NormalizeScore, per node and batched.

The batch methods evaluate the pod's tolerations once per taint set of the table
(``table.taint_set[rows]`` indexes ``table.taint_sets``), keep that per toleration list until a new
taint set appears, and gather the results per node.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Iterable, Sequence

import numpy as np

from ...api import (TAINT_EFFECT_NO_EXECUTE, TAINT_EFFECT_NO_SCHEDULE, TAINT_EFFECT_PREFER_NO_SCHEDULE, Node, Pod,
                    Taint, Toleration, find_untolerated_taint, tolerations_tolerate_taint)
from ...framework.interface import FILTER_NODE_ONLY
from ...framework import protocols as fwk
from ...framework.vectorized import (VectorizedFilterPlugin, VectorizedScoreExtensions, VectorizedScorePlugin,
                                FilterVerdicts)
from ...framework.columns import NODES, NORMALIZE_DEFAULT_REVERSE, ColumnForm
from ...framework.cycle_state import CycleState, NotFoundError
from ...framework.interface import (ActionType, ClusterEvent, ClusterEventWithHint, EnqueueExtensions,
                                    EventResource, PreScorePlugin, QueueingHint)
from ...framework import signers
from ..helper.deferred_resize import DeferredResizePreFilter
from ..helper.typed import as_typed
from ...framework.status import MAX_NODE_SCORE, Code, Status, StatusError
from ...framework.types import NodeScore
from ..helper.normalize_score import default_normalize_score

if TYPE_CHECKING:  # pragma: no cover
    from ...framework.protocols import NodeTable

NAME = "TaintToleration"
#: Filter and Score read only the nodes' taints; Score is normalized reversed (fewer intolerable
#: PreferNoSchedule taints is better).
_COLUMN_FORM = ColumnForm(filter=NODES, score=NODES, normalize=NORMALIZE_DEFAULT_REVERSE)
PRE_SCORE_STATE_KEY = "PreScore" + NAME

#: Filter's reason for a node with a NoSchedule/NoExecute taint the pod does not tolerate (v1.34.4)
UNTOLERATED_TAINT_REASON = "node(s) had untolerated taint(s)"
#: The effects Filter looks at (upstream ``helper.DoNotScheduleTaintsFilterFunc``).
DO_NOT_SCHEDULE_EFFECTS = frozenset({TAINT_EFFECT_NO_SCHEDULE, TAINT_EFFECT_NO_EXECUTE})

#: Distinct toleration lists whose per-taint-set Filter verdicts (and Score counts) are kept.
_FILTER_CACHE_SIZE = 256


def untolerated_taint_reason(taints: Iterable[Taint], tolerations: Sequence[Toleration]) -> str | None:
    """The Filter reason for the first untolerated NoSchedule/NoExecute taint, or None.

    ``node(s) had untolerated taint(s)``, as v1.34.2 and later print it (upstream #134740,
    taint_toleration.go:120 at v1.34.4; v1.34.0 printed ``node(s) had untolerated taint {<key>:
    <value>}``, and the FitError's histogram then had one entry per distinct taint). The taint
    itself goes to upstream's V(4) log only.
    """
    taint = find_untolerated_taint(taints, tolerations, DO_NOT_SCHEDULE_EFFECTS)
    if taint is None:
        return None
    return UNTOLERATED_TAINT_REASON


def prefer_no_schedule_tolerations(tolerations: Iterable[Toleration]) -> tuple[Toleration, ...]:
    """The tolerations that can tolerate a PreferNoSchedule taint: that effect, or an empty one."""
    return tuple(t for t in tolerations if not t.effect or t.effect == TAINT_EFFECT_PREFER_NO_SCHEDULE)


def count_intolerable_prefer_no_schedule(taints: Iterable[Taint], tolerations: Sequence[Toleration]) -> int:
    """The number of PreferNoSchedule taints none of ``tolerations`` tolerates."""
    return sum(1 for taint in taints
               if taint.effect == TAINT_EFFECT_PREFER_NO_SCHEDULE
               and not tolerations_tolerate_taint(tolerations, taint))


class _PreScoreState:
    """The pod's tolerations that matter for PreferNoSchedule taints; shared on clone."""

    __slots__ = ("tolerations_prefer_no_schedule",)

    def __init__(self, tolerations: tuple[Toleration, ...]):
        self.tolerations_prefer_no_schedule = tolerations

    def clone(self) -> "_PreScoreState":
        return self


def _read_pre_score_state(state: CycleState) -> _PreScoreState | Status:
    try:
        return state.read(PRE_SCORE_STATE_KEY)
    except NotFoundError as e:
        return Status.from_error(StatusError(f'failed to read "{PRE_SCORE_STATE_KEY}" from cycleState: {e}'))


class TaintToleration(DeferredResizePreFilter, VectorizedFilterPlugin, PreScorePlugin, VectorizedScorePlugin,
                      VectorizedScoreExtensions, EnqueueExtensions):
    """Filters on NoSchedule/NoExecute taints; prefers nodes with fewer intolerable PreferNoSchedule taints."""

    #: the verdict reads the node's taints only
    #: (fastsched.framework.interface.FilterPlugin.filter_pod_dependence)
    filter_pod_dependence = FILTER_NODE_ONLY

    def __init__(self, *, enable_scheduling_queue_hint: bool = True):
        self._queue_hints = enable_scheduling_queue_hint
        # (table, number of taint sets, tolerations) -> Filter verdict per taint set
        self._filter_cache: dict[tuple, tuple[np.ndarray, np.ndarray, list[tuple[str, ...]]]] = {}
        # (table, number of taint sets, PreferNoSchedule tolerations) -> Score per taint set
        self._score_cache: dict[tuple, np.ndarray | None] = {}

    def name(self) -> str:
        return NAME

    # -- opportunistic batching ---------------------------------------------------------------------
    def sign_pod(self, pod: Pod) -> tuple[signers.Fragments | None, Status | None]:
        """Upstream ``SignPod``: the tolerations."""
        return ((signers.TOLERATIONS_SIGNER, signers.tolerations_signer(pod)),), None

    #: the pod spec fields its column form and plan parts read (fastsched.framework.columns)
    column_reads = ("tolerations",)

    def column_form(self, pod: Pod, table: NodeTable) -> ColumnForm:
        """The fused cycle's form: Filter and Score read only the node's taints."""
        return _COLUMN_FORM

    def events_to_register(self) -> list[ClusterEventWithHint]:
        if not self._queue_hints:
            # Without queueing hints the preCheck may swallow Node/Add, so label updates count too.
            return [ClusterEventWithHint(ClusterEvent(
                EventResource.NODE,
                ActionType.ADD | ActionType.UPDATE_NODE_TAINT | ActionType.UPDATE_NODE_LABEL))]
        return [
            ClusterEventWithHint(ClusterEvent(EventResource.NODE, ActionType.ADD | ActionType.UPDATE_NODE_TAINT),
                                 self.is_schedulable_after_node_change),
            # the pod's own new toleration (TargetPod: that pod's update)
            ClusterEventWithHint(ClusterEvent(EventResource.TARGET_POD, ActionType.UPDATE_POD_TOLERATIONS),
                                 self.is_schedulable_after_target_pod_toleration_change),
        ]

    @staticmethod
    def is_schedulable_after_node_change(pod: Pod, old_obj: Any, new_obj: Any) -> tuple[QueueingHint, Any]:
        """Upstream ``isSchedulableAfterNodeChange``: Queue when the node was added or changed from
        having an untolerated NoSchedule/NoExecute taint to having none."""
        original, modified, err = as_typed(Node, "*v1.Node", old_obj, new_obj)
        if err is not None:
            return QueueingHint.QUEUE, err
        assert modified is not None  # an add or an update
        was_untolerated = original is None or \
            find_untolerated_taint(original.taints, pod.tolerations, DO_NOT_SCHEDULE_EFFECTS) is not None
        is_untolerated = find_untolerated_taint(modified.taints, pod.tolerations, DO_NOT_SCHEDULE_EFFECTS) is not None
        if was_untolerated and not is_untolerated:
            return QueueingHint.QUEUE, None
        return QueueingHint.QUEUE_SKIP, None

    @staticmethod
    def is_schedulable_after_target_pod_toleration_change(pod: Pod, old_obj: Any,
                                                          new_obj: Any) -> tuple[QueueingHint, Any]:
        """Upstream ``isSchedulableAfterTargetPodTolerationChange``: the rejected pod itself got a
        toleration, so Queue."""
        return QueueingHint.QUEUE, None

    # -- Filter -----------------------------------------------------------------------------------
    def filter(self, state: CycleState, pod: Pod, node_info: fwk.NodeInfo) -> Status | None:
        reason = untolerated_taint_reason(node_info.node().taints, pod.tolerations)
        if reason is None:
            return None
        return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, reason)

    def filter_vectorized(self, state: CycleState, pod: Pod, nodes: fwk.NodeBatch) -> FilterVerdicts:
        set_codes, set_reason_ids, reasons = self._verdicts_per_taint_set(nodes.table, pod.tolerations)
        if not np.count_nonzero(set_codes):
            return FilterVerdicts.all_pass(len(nodes))
        set_ids = nodes.table.taint_set[nodes.rows]  # (n,) int32 indices into table.taint_sets
        return FilterVerdicts(set_codes[set_ids], set_reason_ids[set_ids], reasons)

    def _verdicts_per_taint_set(self, table: NodeTable, tolerations: tuple[Toleration, ...]
                                ) -> tuple[np.ndarray, np.ndarray, list[tuple[str, ...]]]:
        """The Filter verdict of every taint set of ``table``: (S,) int8 codes, (S,) int32 reason ids
        and the reason tuples. Taint sets are only ever appended, so the answer for one toleration
        list stays valid while the number of sets is unchanged."""
        key = (table.uid, len(table.taint_sets), tolerations)
        cached = self._filter_cache.get(key)
        if cached is not None:
            return cached
        reasons: list[tuple[str, ...]] = []
        reason_index: dict[str, int] = {}
        set_reason_ids = np.full(len(table.taint_sets), -1, dtype=np.int32)  # (S,)
        for k, taints in enumerate(table.taint_sets):
            reason = untolerated_taint_reason(taints, tolerations)
            if reason is None:
                continue
            rid = reason_index.get(reason)
            if rid is None:
                rid = reason_index[reason] = len(reasons)
                reasons.append((reason,))
            set_reason_ids[k] = rid
        codes = np.where(set_reason_ids >= 0, np.int8(Code.UNSCHEDULABLE_AND_UNRESOLVABLE), np.int8(Code.SUCCESS))
        if len(self._filter_cache) >= _FILTER_CACHE_SIZE:
            self._filter_cache.clear()
        self._filter_cache[key] = cached = (codes.astype(np.int8), set_reason_ids, reasons)
        return cached

    # -- PreScore / Score ---------------------------------------------------------------------------
    def pre_score(self, state: CycleState, pod: Pod, nodes: Sequence[fwk.NodeInfo]) -> Status | None:
        state.write(PRE_SCORE_STATE_KEY, _PreScoreState(prefer_no_schedule_tolerations(pod.tolerations)))
        return None

    def score(self, state: CycleState, pod: Pod, node_info: fwk.NodeInfo) -> tuple[int, Status | None]:
        pre_score = _read_pre_score_state(state)
        if isinstance(pre_score, Status):
            return 0, pre_score
        tolerations = pre_score.tolerations_prefer_no_schedule
        return count_intolerable_prefer_no_schedule(node_info.node().taints, tolerations), None

    def score_vectorized(self, state: CycleState, pod: Pod, nodes: fwk.NodeBatch) -> tuple[np.ndarray, Status | None]:
        pre_score = _read_pre_score_state(state)
        if isinstance(pre_score, Status):
            return np.zeros(len(nodes), dtype=np.int64), pre_score
        counts = self._counts_per_taint_set(nodes.table, pre_score.tolerations_prefer_no_schedule)
        if counts is None:  # no taint set has an intolerable PreferNoSchedule taint
            return np.zeros(len(nodes), dtype=np.int64), None
        return counts[nodes.table.taint_set[nodes.rows]], None  # (n,) int64

    def _counts_per_taint_set(self, table: NodeTable, tolerations: tuple[Toleration, ...]) -> np.ndarray | None:
        """(S,) int64 intolerable PreferNoSchedule taints per taint set of ``table``; None when all 0."""
        key = (table.uid, len(table.taint_sets), tolerations)
        if key in self._score_cache:
            return self._score_cache[key]
        counts = np.array([count_intolerable_prefer_no_schedule(taints, tolerations) for taints in table.taint_sets],
                          dtype=np.int64)
        if len(self._score_cache) >= _FILTER_CACHE_SIZE:
            self._score_cache.clear()
        self._score_cache[key] = result = counts if np.count_nonzero(counts) else None
        return result

    # -- NormalizeScore -----------------------------------------------------------------------------
    def score_extensions(self) -> "TaintToleration":
        return self

    def normalize_score(self, state: CycleState, pod: Pod, scores: list[NodeScore]) -> Status | None:
        return default_normalize_score(MAX_NODE_SCORE, True, scores)

    def normalize_score_vectorized(self, state: CycleState, pod: Pod, scores: np.ndarray, nodes: fwk.NodeBatch
                                   ) -> Status | None:
        return default_normalize_score(MAX_NODE_SCORE, True, scores)


def new(args: Any, handle: fwk.Handle) -> TaintToleration:
    """The plugin factory; TaintToleration takes no args."""
    return TaintToleration()
