"""The NodeUnschedulable plugin: per-node and batch Filter."""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from ...api import TAINT_EFFECT_NO_SCHEDULE, Node, Pod, Taint, tolerations_tolerate_taint
from ...framework.interface import FILTER_NODE_ONLY
from ...framework import protocols as fwk
from ...framework.vectorized import VectorizedFilterPlugin, FilterVerdicts
from ...framework.columns import FILTER_ON_NODES, ColumnForm
from ...framework.cycle_state import CycleState
from ...framework.interface import (ActionType, ClusterEvent, ClusterEventWithHint, EnqueueExtensions, EventResource,
                                    QueueingHint)
from ...framework import signers
from ..helper.deferred_resize import DeferredResizePreFilter
from ..helper.typed import as_typed
from ...framework.status import Code, Status

if TYPE_CHECKING:  # pragma: no cover
    from ...framework.protocols import NodeTable

NAME = "NodeUnschedulable"

#: Filter reason for an unschedulable node the pod does not tolerate.
ERR_REASON_UNSCHEDULABLE = "node(s) were unschedulable"
#: Kept for parity with upstream's exported constant (no longer produced by the plugin).
ERR_REASON_UNKNOWN_CONDITION = "node(s) had unknown conditions"

#: The taint a pod must tolerate to land on an unschedulable node (upstream ``TaintNodeUnschedulable``).
UNSCHEDULABLE_TAINT = Taint(key="node.kubernetes.io/unschedulable", effect=TAINT_EFFECT_NO_SCHEDULE)


def tolerates_unschedulable(pod: Pod) -> bool:
    """Whether the pod's tolerations tolerate ``node.kubernetes.io/unschedulable:NoSchedule``."""
    return tolerations_tolerate_taint(pod.tolerations, UNSCHEDULABLE_TAINT)


class NodeUnschedulable(DeferredResizePreFilter, VectorizedFilterPlugin, EnqueueExtensions):
    """Rejects ``spec.unschedulable`` nodes (UnschedulableAndUnresolvable) for non-tolerating pods."""

    #: the verdict reads the node's spec.unschedulable and taints only
    #: (fastsched.framework.interface.FilterPlugin.filter_pod_dependence)
    filter_pod_dependence = FILTER_NODE_ONLY

    def __init__(self, *, enable_scheduling_queue_hint: bool = True):
        self._queue_hints = enable_scheduling_queue_hint

    def name(self) -> str:
        return NAME

    # -- opportunistic batching ---------------------------------------------------------------------
    def sign_pod(self, pod: Pod) -> tuple[signers.Fragments | None, Status | None]:
        """Upstream ``SignPod``: the tolerations."""
        return ((signers.TOLERATIONS_SIGNER, signers.tolerations_signer(pod)),), None

    #: the pod spec fields its column form and plan parts read (fastsched.framework.columns)
    column_reads = ("tolerations",)

    def column_form(self, pod: Pod, table: NodeTable) -> ColumnForm:
        """The fused cycle's form: the verdict depends only on the node and the pod's tolerations."""
        return FILTER_ON_NODES

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
    def is_schedulable_after_target_pod_toleration_change(pod: Pod, old_obj: Any,
                                                          new_obj: Any) -> tuple[QueueingHint, Any]:
        """Upstream ``isSchedulableAfterTargetPodTolerationChange``: Queue when the updated pod
        now tolerates ``node.kubernetes.io/unschedulable:NoSchedule`` (tolerations can only be
        added, and the pod was rejected here, so it did not tolerate it before)."""
        _, modified, err = as_typed(Pod, "*v1.Pod", old_obj, new_obj)
        if err is not None:
            return QueueingHint.QUEUE, err
        assert modified is not None  # an update
        if tolerates_unschedulable(modified):
            return QueueingHint.QUEUE, None
        return QueueingHint.QUEUE_SKIP, None

    @staticmethod
    def is_schedulable_after_node_change(pod: Pod, old_obj: Any, new_obj: Any) -> tuple[QueueingHint, Any]:
        """Upstream ``isSchedulableAfterNodeChange``: Queue when a schedulable node was added or a
        node stopped being unschedulable."""
        original, modified, err = as_typed(Node, "*v1.Node", old_obj, new_obj)
        if err is not None:
            return QueueingHint.QUEUE, err
        assert modified is not None  # an add or an update
        if (original is not None and original.unschedulable and not modified.unschedulable) or \
                (original is None and not modified.unschedulable):
            return QueueingHint.QUEUE, None
        return QueueingHint.QUEUE_SKIP, None

    def filter(self, state: CycleState, pod: Pod, node_info: fwk.NodeInfo) -> Status | None:
        if not node_info.node().unschedulable:
            return None
        if tolerates_unschedulable(pod):
            return None
        return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_REASON_UNSCHEDULABLE)

    def filter_vectorized(self, state: CycleState, pod: Pod, nodes: fwk.NodeBatch) -> FilterVerdicts:
        if tolerates_unschedulable(pod):
            return FilterVerdicts.all_pass(len(nodes))
        unschedulable = nodes.table.unschedulable[nodes.rows]  # (n,) bool
        if not np.count_nonzero(unschedulable):
            return FilterVerdicts.all_pass(len(nodes))
        return FilterVerdicts.from_mask(unschedulable, Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
                                           ERR_REASON_UNSCHEDULABLE)


def new(args: Any, handle: fwk.Handle) -> NodeUnschedulable:
    """The plugin factory; NodeUnschedulable takes no args (upstream ignores them)."""
    return NodeUnschedulable()
