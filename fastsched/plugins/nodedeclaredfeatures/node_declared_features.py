"""The NodeDeclaredFeatures plugin (upstream ``pkg/scheduler/framework/plugins/nodedeclaredfeatures/
nodedeclaredfeatures.go``, v1.37.2): PreFilter, Filter (per node and batch), EnqueueExtensions."""
from __future__ import annotations

import operator
from typing import TYPE_CHECKING, Any

import numpy as np

from ...api import Pod
from ...features import feature_gates_of
from ...framework import protocols as fwk
from ...framework.columns import FILTER_ON_NODES, FILTER_SKIPPED, ColumnForm
from ...framework.cycle_state import CycleState, NotFoundError
from ...framework.interface import (FILTER_NODE_ONLY, ActionType, ClusterEvent, ClusterEventWithHint,
                                    EnqueueExtensions, EventResource, PreFilterPlugin, QueueingHint)
from ...framework import signers
from ...framework.status import Code, Status, StatusError
from ...framework.types import PreFilterResult
from ...framework.vectorized import FilterVerdicts, VectorizedFilterPlugin
from .ndf import COMPONENT_VERSION, DEFAULT_FRAMEWORK, Framework, is_subset

if TYPE_CHECKING:  # pragma: no cover
    from ...framework.protocols import NodeTable

NAME = "NodeDeclaredFeatures"
#: The CycleState key of the pod's required features (``preFilterStateKey``).
PRE_FILTER_STATE_KEY = "PreFilter" + NAME
#: Filter reason for a node that lacks a feature the pod needs (``errReasonUnsatisfiedRequirements``).
ERR_REASON_UNSATISFIED_REQUIREMENTS = "node(s) didn't match Pod's required features"


class PreFilterState:
    """``preFilterState``: the pod's required features (a bit mask over the framework's registry)."""

    __slots__ = ("reqs",)

    def __init__(self, reqs: int):
        self.reqs = reqs

    def clone(self) -> "PreFilterState":
        return self  # never modified after PreFilter (upstream's Clone returns itself)


def is_pod_resize_deferred(pod: Pod) -> bool:
    """``resource.IsPodResizeDeferred`` (component-helpers): the pod's PodResizePending condition
    has reason Deferred."""
    for condition in pod.conditions:
        if condition.get("type") == "PodResizePending":
            return condition.get("reason") == "Deferred"
    return False


class NodeDeclaredFeatures(PreFilterPlugin, VectorizedFilterPlugin, EnqueueExtensions):
    """Sends a pod only to nodes that declare every feature its spec needs.

    PreFilter infers the pod's requirements (:mod:`.ndf`) and answers Skip when there are none;
    Filter rejects a node whose ``status.declaredFeatures`` lack one, UnschedulableAndUnresolvable
    (a node's declared features change only when its kubelet changes).
    """

    #: the verdict reads the node's declared features only
    #: (fastsched.framework.interface.FilterPlugin.filter_pod_dependence)
    filter_pod_dependence = FILTER_NODE_ONLY
    #: the pod spec fields the inference reads (fastsched.framework.columns)
    column_reads = ("containers", "init_containers", "host_network", "host_users", "ephemeral_containers")

    def column_named_resources(self, pod: "Pod") -> frozenset[str]:
        """None of the pod's resources by name: it reads the containers, not their resources."""
        return frozenset()

    def __init__(self, *, framework: Framework | None = DEFAULT_FRAMEWORK,
                 version: tuple[int, int, int] | None = COMPONENT_VERSION, enabled: bool = True,
                 enable_in_place_pod_vertical_scaling_scheduler_preemption: bool = False):
        self.framework = framework if framework is not None else DEFAULT_FRAMEWORK
        self.version = version
        self.enabled = enabled
        self.enable_in_place_pod_vertical_scaling_scheduler_preemption = \
            enable_in_place_pod_vertical_scaling_scheduler_preemption
        # (table uid, node version) -> (C,) int64 column of the rows' declared feature sets
        self._columns: dict[tuple[int, int], np.ndarray] = {}
        #: (spec fields, version, requirements) of the last inference (see _inferred)
        self._last_inferred: tuple | None = None

    def name(self) -> str:
        return NAME

    # -- PreFilter ---------------------------------------------------------------------------------
    def _deferred(self, pod: Pod) -> bool:
        return self.enable_in_place_pod_vertical_scaling_scheduler_preemption and is_pod_resize_deferred(pod)

    def pre_filter(self, state: CycleState, pod: Pod,
                   nodes: Any) -> tuple[PreFilterResult | None, Status | None]:
        if self._deferred(pod) or not self.enabled:
            return None, Status(Code.SKIP)
        try:
            reqs = self._inferred(pod)
        except ValueError as e:
            return None, Status.from_error(StatusError(str(e)))
        if not reqs:
            return None, Status(Code.SKIP)
        state.write(PRE_FILTER_STATE_KEY, PreFilterState(reqs))
        return None, None

    def _inferred(self, pod: Pod) -> int:
        """``InferForPodScheduling`` of ``pod``. With the default framework (whose features read
        only the ``column_reads`` fields) the last answer is reused for a pod whose fields are the
        very objects of the last pod's (pods stamped from one template, a preemptor's retries): each
        inference walked every feature over the containers (~1% of a PreemptionBasic cycle)."""
        fw = self.framework
        if fw is not DEFAULT_FRAMEWORK:  # another registry's features may read other fields
            return fw.infer_for_pod_scheduling(pod, self.version)
        spec = (pod.containers, pod.init_containers, pod.host_network, pod.host_users, pod.ephemeral_containers)
        version = self.version
        last = self._last_inferred
        if last is not None and last[1] == version and all(map(operator.is_, last[0], spec)):
            return last[2]
        reqs = fw.infer_for_pod_scheduling(pod, version)
        self._last_inferred = (spec, version, reqs)
        return reqs

    def pre_filter_extensions(self) -> None:
        return None

    # -- Filter ------------------------------------------------------------------------------------
    def _reqs(self, state: CycleState) -> int | Status:
        try:
            s = state.read(PRE_FILTER_STATE_KEY)
        except NotFoundError as e:
            return Status.from_error(StatusError(f'error reading "{PRE_FILTER_STATE_KEY}" from cycle-state: {e}'))
        if not isinstance(s, PreFilterState):
            return Status.from_error(StatusError(
                f"invalid PreFilter state, got type {type(s).__name__}, expected PreFilterState"))
        return s.reqs

    def filter(self, state: CycleState, pod: Pod, node_info: fwk.NodeInfo) -> Status | None:
        if self._deferred(pod) or not self.enabled:
            return None
        reqs = self._reqs(state)
        if isinstance(reqs, Status):
            return reqs
        # NodeInfo.SetNode maps the node's declared features with TryMap
        if not is_subset(reqs, self.framework.try_map(node_info.node().declared_features)):
            return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_REASON_UNSATISFIED_REQUIREMENTS)
        return None

    def _column(self, table: "NodeTable") -> np.ndarray:
        key = (table.uid, table.node_version)
        col = self._columns.get(key)
        if col is None or len(col) != table.capacity:
            col = np.zeros(table.capacity, dtype=np.int64)
            nodes, try_map = table.nodes, self.framework.try_map
            for row in np.flatnonzero(table.live):
                node = nodes[int(row)]
                if node is not None and node.declared_features:
                    col[row] = try_map(node.declared_features)
            if len(self._columns) >= 8:
                self._columns.clear()
            self._columns[key] = col
        return col

    def filter_vectorized(self, state: CycleState, pod: Pod, nodes: fwk.NodeBatch) -> FilterVerdicts:
        if self._deferred(pod) or not self.enabled:
            return FilterVerdicts.all_pass(len(nodes))
        reqs = self._reqs(state)
        if isinstance(reqs, Status):
            return FilterVerdicts.from_statuses([reqs] * len(nodes))
        declared = self._column(nodes.table)[nodes.rows]
        fail = (declared & reqs) != reqs
        if not np.count_nonzero(fail):
            return FilterVerdicts.all_pass(len(nodes))
        return FilterVerdicts.from_mask(fail, Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_REASON_UNSATISFIED_REQUIREMENTS)

    # -- opportunistic batching ---------------------------------------------------------------------
    def sign_pod(self, pod: Pod) -> tuple[signers.Fragments | None, Status | None]:
        """Upstream ``SignPod``: the features the pod's spec needs (the inference's error is an Error)."""
        try:
            reqs = self.framework.infer_for_pod_scheduling(pod, self.version)
        except ValueError as e:
            return None, Status.from_error(StatusError(str(e)))
        return ((signers.FEATURES_SIGNER, reqs),), None

    def column_form(self, pod: Pod, table: "NodeTable") -> ColumnForm:
        """The fused cycle's form: the verdict depends only on the nodes and the pod's spec."""
        if self._deferred(pod) or not self.enabled:
            return FILTER_SKIPPED
        try:
            reqs = self.framework.infer_for_pod_scheduling(pod, self.version)
        except ValueError:
            return FILTER_ON_NODES  # PreFilter's Error sends the pod to the plugin-call path
        return FILTER_ON_NODES if reqs else FILTER_SKIPPED

    # -- EnqueueExtensions -------------------------------------------------------------------------
    def events_to_register(self) -> list[ClusterEventWithHint]:
        if not self.enabled:
            return []
        return [
            ClusterEventWithHint(ClusterEvent(EventResource.NODE,
                                              ActionType.ADD | ActionType.UPDATE_NODE_DECLARED_FEATURE),
                                 self.is_schedulable_after_node_change),
            # the pod's own update (TargetPod): its required features may have changed
            ClusterEventWithHint(ClusterEvent(EventResource.TARGET_POD, ActionType.UPDATE),
                                 self.is_schedulable_after_target_pod_update),
        ]

    def is_schedulable_after_target_pod_update(self, pod: Pod, old_obj: Any,
                                               new_obj: Any) -> tuple[QueueingHint, Exception | None]:
        """Queue when the pod's required features changed."""
        if not isinstance(old_obj, Pod) or not isinstance(new_obj, Pod):
            return QueueingHint.QUEUE, TypeError(f"expected Pods, got {type(old_obj).__name__}, "
                                                 f"{type(new_obj).__name__}")
        try:
            old_reqs = self.framework.infer_for_pod_scheduling(old_obj, self.version)
            new_reqs = self.framework.infer_for_pod_scheduling(new_obj, self.version)
        except ValueError as e:
            return QueueingHint.QUEUE, e
        if new_reqs == old_reqs:
            return QueueingHint.QUEUE_SKIP, None
        return QueueingHint.QUEUE, None

    def is_schedulable_after_node_change(self, pod: Pod, old_obj: Any,
                                         new_obj: Any) -> tuple[QueueingHint, Exception | None]:
        """Queue on a node added, or updated with other declared features."""
        if new_obj is None or not hasattr(new_obj, "declared_features"):
            return QueueingHint.QUEUE, TypeError(f"expected a Node, got {type(new_obj).__name__}")
        if old_obj is not None and tuple(old_obj.declared_features) == tuple(new_obj.declared_features):
            return QueueingHint.QUEUE_SKIP, None
        return QueueingHint.QUEUE, None


def new(args: Any, handle: fwk.Handle | None) -> NodeDeclaredFeatures:
    """The plugin factory (``New``): takes no args; with the gate off (never at v1.37, where it is
    locked on) the plugin does nothing."""
    gates = feature_gates_of(handle)
    if not gates.enabled("NodeDeclaredFeatures"):
        return NodeDeclaredFeatures(enabled=False)
    return NodeDeclaredFeatures(enable_in_place_pod_vertical_scaling_scheduler_preemption=gates.enabled(
        "InPlacePodVerticalScalingSchedulerPreemption"))
