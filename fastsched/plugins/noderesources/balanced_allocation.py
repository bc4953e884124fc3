"""NodeResourcesBalancedAllocation (upstream ``noderesources/balanced_allocation.go``, v1.37).

Favors nodes whose balance of resource usage fractions the pod improves: the balance
``int64((1 - std) * 100)`` with the pod against the balance without it,
``50 + (50 + with - without) / 2`` (see :class:`.scorers.BalancedScorer`; v1.34 scored the balance
with the pod only). Usage is the node's actual ``Requested`` (plus the pod's requests without the
non-zero defaults). A configured resource a DeviceClass maps (DRAExtendedResource) on a node whose
allocatable has none of it is scored from the node's devices of the class
(:mod:`.dra_extended`), as upstream; but where the class has CEL selectors upstream v1.37.2 panics
(``NewBalancedAllocation`` leaves the scorer's CEL cache nil): Score answers an Error status saying
so.

PreScore returns Skip for a best-effort pod (every configured resource's request is 0; upstream
#129138, in v1.34); Score called without PreScore state recomputes the requests and gives such a pod
0. There is no NormalizeScore, and no EnqueueExtensions (it is a Score plugin only).
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Sequence

import numpy as np

from ...config.args import NodeResourcesBalancedAllocationArgs
from ...framework import protocols as fwk
from ...framework.vectorized import VectorizedScorePlugin
from ...framework.columns import CYCLE, RESOURCES, ColumnForm, ResourceScoreParams
from ...framework.cycle_state import CycleState
from ...framework.interface import PreScorePlugin
from ...framework import signers
from ...framework.status import Code, Status
from ..helper.args import validated_args
from .fit import sign_pod_requests
from . import dra_extended
from .resource_allocation import ResourceAllocationScorer
from .scorers import BalancedScorer

if TYPE_CHECKING:  # pragma: no cover
    from ...framework.protocols import NodeTable
    from ...api import Pod

NAME = "NodeResourcesBalancedAllocation"
#: Score is a resource scorer of the fused kernel.
_COLUMN_FORM = ColumnForm(score=RESOURCES)
_DRA_COLUMN_FORM = ColumnForm(score=CYCLE)
PRE_SCORE_STATE_KEY = "PreScore" + NAME
PRE_SCORE_DRA_STATE_KEY = PRE_SCORE_STATE_KEY + "/dra"


class BalancedAllocationPreScoreState:
    """The pod's request of each configured resource, in the args' order."""

    __slots__ = ("pod_requests",)

    def __init__(self, pod_requests: Sequence[int]):
        self.pod_requests = tuple(pod_requests)

    def clone(self) -> "BalancedAllocationPreScoreState":
        return self


def is_best_effort(pod_requests: Sequence[int]) -> bool:
    """Upstream ``isBestEffortPod``: no configured resource is requested."""
    return all(request == 0 for request in pod_requests)


class BalancedAllocation(PreScorePlugin, VectorizedScorePlugin):
    """Scores nodes by how balanced their resource usage would be with the pod."""

    def __init__(self, args: NodeResourcesBalancedAllocationArgs, handle: fwk.Handle | None = None):
        self.handle = handle
        self.scorer = ResourceAllocationScorer(NAME, args.resources, BalancedScorer(), use_requested=True)

    def name(self) -> str:
        return NAME

    # -- opportunistic batching ---------------------------------------------------------------------
    def sign_pod(self, pod: "Pod") -> tuple[signers.Fragments | None, Status | None]:
        """Upstream ``SignPod``: as NodeResourcesFit's."""
        return sign_pod_requests(self.handle, pod)

    #: the pod spec fields its column form and plan parts read (fastsched.framework.columns)
    column_reads = ("containers", "init_containers", "overhead", "resources", "resource_claims")
    #: its column form and plan parts read no container's ``volume_mounts`` (compiled_cycle shares a plan
    #: between pods whose mounts alone differ)
    column_reads_mounts = False

    def column_named_resources(self, pod: "Pod") -> frozenset[str]:
        """The requested resources its plan parts depend on by name: its scoring resources (the
        compiled cycle may share its parts between pods renaming the others)."""
        return frozenset(self.scorer.resource_names)

    def column_form(self, pod: "Pod", table: NodeTable) -> ColumnForm:
        """Score runs in the fused kernel (PreScore's Skip of best-effort pods still applies);
        each cycle, node by node, when a configured resource the pod requests is backed by DRA."""
        if dra_extended.dra_scores_pod(self.handle, self.scorer.resource_names, self.scorer.pod_request_list(pod)):
            return _DRA_COLUMN_FORM
        return _COLUMN_FORM

    def column_guard(self, pod: "Pod", table: NodeTable) -> Any:
        """The DeviceClasses' version for pods requesting extended resources."""
        return dra_extended.dra_guard(self.handle, pod.requests)

    def column_guard_fixed(self, pod: "Pod") -> bool:
        """:meth:`column_guard` is None for every cluster state when the pod requests no DRA
        extended resource name (``framework.columns.GuardedColumnPlugin``'s contract)."""
        return dra_extended.dra_guard_fixed(pod.requests)

    def column_guard_source(self, pod: "Pod") -> Any:
        """:meth:`column_guard`'s source for pods requesting DRA extended resource names, shared
        with the other plugins reading the handle's DeviceClasses (``dra_extended.DeviceClassesGuard``,
        ``framework.columns.GuardedColumnPlugin``)."""
        return dra_extended.dra_guard_source(self.handle, pod.requests)

    def column_score_params(self, state: CycleState, pod: "Pod", table: NodeTable) -> ResourceScoreParams:
        """The balanced-allocation scorer for the kernel, with the PreScore requests in ``state``."""
        pod_requests = self._pod_requests(state, pod)
        if pod_requests is None:
            raise ValueError("a best-effort pod is skipped at PreScore")
        return self.scorer.column_params(table, pod_requests)

    def pre_score(self, state: CycleState, pod: "Pod", nodes: Sequence[fwk.NodeInfo]) -> Status | None:
        pod_requests = self.scorer.pod_request_list(pod)
        if is_best_effort(pod_requests):
            # Scoring best-effort pods here would pile them onto the same node (upstream #129138).
            return Status(Code.SKIP)
        state.write(PRE_SCORE_STATE_KEY, BalancedAllocationPreScoreState(pod_requests))
        dra = dra_extended.dra_score_state(self.handle, self.scorer.resource_names, nil_cel_cache=True)
        if dra is not None:
            state.write(PRE_SCORE_DRA_STATE_KEY, dra)
        return None

    def _dra_state(self, state: CycleState) -> "dra_extended.DRAScoreState | None":
        if isinstance(state.get(PRE_SCORE_STATE_KEY), BalancedAllocationPreScoreState):
            return state.get(PRE_SCORE_DRA_STATE_KEY)
        return dra_extended.dra_score_state(self.handle, self.scorer.resource_names, nil_cel_cache=True)

    def _pod_requests(self, state: CycleState, pod: "Pod") -> tuple[int, ...] | None:
        """The PreScore requests, or recomputed ones; None for a best-effort pod without state."""
        value = state.get(PRE_SCORE_STATE_KEY)
        if isinstance(value, BalancedAllocationPreScoreState):
            return value.pod_requests
        pod_requests = self.scorer.pod_request_list(pod)
        return None if is_best_effort(pod_requests) else pod_requests

    def score(self, state: CycleState, pod: "Pod", node_info: fwk.NodeInfo) -> tuple[int, Status | None]:
        pod_requests = self._pod_requests(state, pod)
        if pod_requests is None:
            return 0, None
        try:
            return self.scorer.score(node_info, pod_requests, self._dra_state(state))
        except dra_extended.UpstreamPanic as e:
            return 0, Status(Code.ERROR, str(e))

    def score_vectorized(self, state: CycleState, pod: "Pod", nodes: fwk.NodeBatch) -> tuple[np.ndarray, Status | None]:
        pod_requests = self._pod_requests(state, pod)
        if pod_requests is None:
            return np.zeros(len(nodes), dtype=np.int64), None
        try:
            return self.scorer.score_vectorized(nodes, pod_requests, self._dra_state(state))
        except dra_extended.UpstreamPanic as e:
            return np.zeros(len(nodes), dtype=np.int64), Status(Code.ERROR, str(e))


def new(args: NodeResourcesBalancedAllocationArgs | None, handle: fwk.Handle | None = None) -> BalancedAllocation:
    """Upstream ``NewBalancedAllocation``: validate the args (unique names, every weight 1)."""
    args = validated_args(args, NodeResourcesBalancedAllocationArgs,
                          "want args to be of type NodeResourcesBalancedAllocationArgs, got {got}")
    return BalancedAllocation(args, handle)
