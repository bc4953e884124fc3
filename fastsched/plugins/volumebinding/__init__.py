"""VolumeBinding (upstream ``pkg/scheduler/framework/plugins/volumebinding/volume_binding.go``, v1.34).

Extension points as upstream: PreFilter, Filter, PreScore, Score (no NormalizeScore), Reserve /
Unreserve, PreBind (with PreBindPreFlight) and EnqueueExtensions.

Only pods without PersistentVolumeClaim and generic ephemeral volumes are modelled (the volume types
upstream's ``podHasPVCs`` looks at). For them, as upstream: PreFilter stores an empty state and
returns Skip (so Filter does not run); PreScore returns Skip (no scorer: the StorageCapacityScoring
gate is off in v1.34); Score is 0; Reserve marks every volume bound; PreBindPreFlight then returns
Skip and PreBind Success. A pod with such volumes is rejected at PreFilter with
UnschedulableAndUnresolvable :data:`REASON_NOT_MODELLED`.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Sequence

import numpy as np

from ...config.args import VolumeBindingArgs
from ...framework import protocols as fwk
from ...framework.vectorized import VectorizedFilterPlugin, VectorizedScorePlugin, FilterVerdicts
from ...framework.columns import NODES, ColumnForm
from ...framework.cycle_state import CycleState
from ...framework.interface import (ActionType, ClusterEvent, ClusterEventWithHint, EnqueueExtensions,
                                    EventResource, PreBindPlugin, PreFilterPlugin, PreScorePlugin,
                                    ReservePlugin)
from ...framework.status import Code, Status
from .._unmodelled import (CSI_DRIVER, CSI_STORAGE_CAPACITY, EPHEMERAL, PERSISTENT_VOLUME_CLAIM,
                           not_modelled, pod_uses_any)
from ..helper.args import validated_args

if TYPE_CHECKING:  # pragma: no cover
    from ...api import Pod
    from ...snapshot.table import NodeTable

NAME = "VolumeBinding"
#: PreFilter stores the state Reserve and PreBind read, then answers Skip (pods without PVCs).
_COLUMN_FORM = ColumnForm(filter=NODES, score=NODES, keeps_state=True)
#: CycleState key (upstream ``stateKey = Name``)
STATE_KEY = NAME
#: the volume sources whose pods need PVC objects (upstream ``podHasPVCs``)
UNMODELLED_SOURCES = (PERSISTENT_VOLUME_CLAIM, EPHEMERAL)
REASON_NOT_MODELLED = not_modelled(NAME, "PersistentVolumeClaims or generic ephemeral volumes").message()


class _StateData:
    """Upstream ``stateData`` for a pod without PVCs: nothing to bind, ``allBound`` set at Reserve."""

    __slots__ = ("all_bound",)

    def __init__(self) -> None:
        self.all_bound = False

    def clone(self) -> "_StateData":
        return self  # upstream shares the pointer across clones


def _state(state: CycleState) -> _StateData:
    """Upstream ``getStateData``; raises NotFoundError (message "not found") when absent."""
    return state.read(STATE_KEY)


class VolumeBinding(PreFilterPlugin, VectorizedFilterPlugin, PreScorePlugin, VectorizedScorePlugin, ReservePlugin,
                    PreBindPlugin, EnqueueExtensions):
    """Binds pod volumes; a no-op for the pods fastsched models (no PVCs)."""

    def __init__(self, args: VolumeBindingArgs | None = None, enable_scheduling_queue_hint: bool = True):
        self.args = args if args is not None else VolumeBindingArgs()
        self._enable_scheduling_queue_hint = enable_scheduling_queue_hint

    def name(self) -> str:
        return NAME

    def column_form(self, pod: Pod, table: NodeTable) -> ColumnForm | None:
        """The fused cycle's form for the pods modelled: PreFilter stores the state Reserve and
        PreBind read, then answers Skip; PreScore answers Skip."""
        return None if self._unmodelled(pod) else _COLUMN_FORM

    @staticmethod
    def _unmodelled(pod: Pod) -> bool:
        return pod_uses_any(pod, UNMODELLED_SOURCES)

    # -- PreFilter / Filter -----------------------------------------------------------------------
    def pre_filter(self, state: CycleState, pod: Pod, nodes: Sequence[fwk.NodeInfo]) -> tuple[None, Status | None]:
        if self._unmodelled(pod):
            return None, Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, REASON_NOT_MODELLED)
        state.write(STATE_KEY, _StateData())
        return None, Status(Code.SKIP)

    def pre_filter_extensions(self) -> None:
        return None

    def _filter_status(self, state: CycleState, pod: Pod) -> Status | None:
        """The verdict for every node: Filter never depends on the node for modelled pods."""
        try:
            _state(state)
        except KeyError as e:
            return Status.from_error(e)
        if self._unmodelled(pod):
            return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, REASON_NOT_MODELLED)
        return None

    def filter(self, state: CycleState, pod: Pod, node_info: fwk.NodeInfo) -> Status | None:
        return self._filter_status(state, pod)

    def filter_vectorized(self, state: CycleState, pod: Pod, nodes: fwk.NodeBatch) -> FilterVerdicts | Status:
        s = self._filter_status(state, pod)
        return FilterVerdicts.all_pass(len(nodes)) if s is None else s

    # -- PreScore / Score -------------------------------------------------------------------------
    def pre_score(self, state: CycleState, pod: Pod, nodes: Sequence[fwk.NodeInfo]) -> Status | None:
        # No scorer without the StorageCapacityScoring gate (alpha, off in v1.34).
        return Status(Code.SKIP)

    def score(self, state: CycleState, pod: Pod, node_info: fwk.NodeInfo) -> tuple[int, Status | None]:
        return 0, None

    def score_vectorized(self, state: CycleState, pod: Pod, nodes: fwk.NodeBatch) -> tuple[np.ndarray, Status | None]:
        return np.zeros(len(nodes), dtype=np.int64), None

    def score_extensions(self) -> None:
        return None

    # -- Reserve / PreBind ------------------------------------------------------------------------
    def reserve(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        try:
            s = _state(state)
        except KeyError as e:
            return Status.from_error(e)
        s.all_bound = True  # no pod volumes were found for any node: nothing to bind
        return None

    def unreserve(self, state: CycleState, pod: Pod, node_name: str) -> None:
        return None  # no assumed volumes to revert

    def pre_bind_pre_flight(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        try:
            s = _state(state)
        except KeyError as e:
            return Status.from_error(e)
        if s.all_bound:
            return Status(Code.SKIP)
        return Status.from_error(f"no pod volumes found for node {_go_quote(node_name)}")

    def pre_bind(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        try:
            s = _state(state)
        except KeyError as e:
            return Status.from_error(e)
        if s.all_bound:
            return None
        return Status.from_error(f"no pod volumes found for node {_go_quote(node_name)}")

    # -- EnqueueExtensions ------------------------------------------------------------------------
    def events_to_register(self) -> list[ClusterEventWithHint]:
        node_actions = ActionType.ADD | ActionType.UPDATE_NODE_LABEL
        if not self._enable_scheduling_queue_hint:
            node_actions |= ActionType.UPDATE_NODE_TAINT  # covers Node/Add events lost to preCheck
        add_update = ActionType.ADD | ActionType.UPDATE
        return [
            ClusterEventWithHint(ClusterEvent(EventResource.STORAGE_CLASS, add_update)),
            ClusterEventWithHint(ClusterEvent(EventResource.PERSISTENT_VOLUME_CLAIM, add_update)),
            ClusterEventWithHint(ClusterEvent(EventResource.PERSISTENT_VOLUME, add_update)),
            ClusterEventWithHint(ClusterEvent(EventResource.NODE, node_actions)),
            ClusterEventWithHint(ClusterEvent(EventResource.CSI_NODE, add_update)),
            ClusterEventWithHint(ClusterEvent(CSI_DRIVER, ActionType.UPDATE)),
            ClusterEventWithHint(ClusterEvent(CSI_STORAGE_CAPACITY, add_update)),
        ]


def _go_quote(s: str) -> str:
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'


def new(args: Any, handle: fwk.Handle) -> VolumeBinding:
    """Upstream ``New``: type-check and validate the args (``shape`` needs StorageCapacityScoring)."""
    args = validated_args(args, VolumeBindingArgs, "want args to be of type VolumeBindingArgs, got {got}")
    return VolumeBinding(args)


__all__ = ["NAME", "VolumeBinding", "new", "REASON_NOT_MODELLED", "STATE_KEY"]
