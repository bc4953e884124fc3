"""The NodeName plugin: per-node and batch Filter."""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Sequence

import numpy as np

from ...api import Pod
from ...framework.interface import FILTER_NODE_ONLY
from ...framework import protocols as fwk
from ...framework.vectorized import VectorizedFilterPlugin, FilterVerdicts
from ...framework.columns import FILTER_ON_NODES, ColumnForm
from ...framework.cycle_state import CycleState
from ...framework.interface import ActionType, ClusterEvent, ClusterEventWithHint, EnqueueExtensions, EventResource
from ...framework import signers
from ...framework.status import Code, Status
from ...framework.types import PreFilterResult

if TYPE_CHECKING:  # pragma: no cover
    from ...framework.protocols import NodeTable

NAME = "NodeName"

#: Filter reason when the pod asks for another node.
ERR_REASON = "node(s) didn't match the requested node name"


def fits(pod: Pod, node_info: fwk.NodeInfo) -> bool:
    """Upstream ``Fits``: no ``spec.nodeName``, or it names this node."""
    return not pod.node_name or pod.node_name == node_info.node().name


class NodeName(VectorizedFilterPlugin, EnqueueExtensions):
    """Rejects (UnschedulableAndUnresolvable) every node but the one named by ``spec.nodeName``."""

    #: the verdict reads the node's name only
    #: (fastsched.framework.interface.FilterPlugin.filter_pod_dependence)
    filter_pod_dependence = FILTER_NODE_ONLY

    def __init__(self, *, enable_scheduling_queue_hint: bool = True):
        self._queue_hints = enable_scheduling_queue_hint

    def name(self) -> str:
        return NAME

    # -- opportunistic batching ---------------------------------------------------------------------
    def sign_pod(self, pod: Pod) -> tuple[signers.Fragments | None, Status | None]:
        """Upstream ``SignPod``: the pod's spec.nodeName."""
        return ((signers.NODE_NAME_SIGNER, pod.node_name),), None

    #: the pod spec fields its column form and plan parts read (fastsched.framework.columns)
    column_reads = ("node_name",)

    def column_form(self, pod: Pod, table: NodeTable) -> ColumnForm:
        """The fused cycle's form: the verdict depends only on the node's name."""
        return FILTER_ON_NODES

    def events_to_register(self) -> list[ClusterEventWithHint]:
        action = ActionType.ADD
        if not self._queue_hints:
            # Without queueing hints the preCheck may swallow Node/Add, so node updates count too.
            action |= ActionType.UPDATE_NODE_TAINT | ActionType.UPDATE_NODE_LABEL
        return [ClusterEventWithHint(ClusterEvent(EventResource.NODE, action))]

    # -- PreFilter (v1.37) -----------------------------------------------------------------------------
    def pre_filter(self, state: CycleState, pod: Pod, nodes: Sequence[fwk.NodeInfo]
                   ) -> tuple[PreFilterResult | None, Status | None]:
        """v1.37.2 ``PreFilter``: a pod that already names its node (an assigned pod whose resize is
        deferred, or a static assignment) is evaluated on that node only, so no other node can be a
        preemption target; any other pod, every node."""
        if pod.node_name:
            return PreFilterResult((pod.node_name,)), None
        return None, None

    def pre_filter_extensions(self) -> None:
        return None

    def filter(self, state: CycleState, pod: Pod, node_info: fwk.NodeInfo) -> Status | None:
        if fits(pod, node_info):
            return None
        return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_REASON)

    def filter_vectorized(self, state: CycleState, pod: Pod, nodes: fwk.NodeBatch) -> FilterVerdicts:
        if not pod.node_name:
            return FilterVerdicts.all_pass(len(nodes))
        wanted_row = nodes.table.row_of.get(pod.node_name)
        if wanted_row is None:
            mismatch = np.ones(len(nodes), dtype=bool)
        else:
            mismatch = nodes.rows != wanted_row  # (n,) bool
        return FilterVerdicts.from_mask(mismatch, Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_REASON)


def new(args: Any, handle: fwk.Handle) -> NodeName:
    """The plugin factory; NodeName takes no args."""
    return NodeName()
