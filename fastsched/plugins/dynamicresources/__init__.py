"""DynamicResources (upstream ``pkg/scheduler/framework/plugins/dynamicresources/dynamicresources.go``, v1.34).

DRA is GA and on by default in v1.34. Extension points as upstream: PreEnqueue, PreFilter, Filter,
PostFilter, Reserve / Unreserve, PreBind (with PreBindPreFlight) and EnqueueExtensions; no
PreScore or Score. The DRAExtendedResource gate (alpha, off) is not modelled.

For a pod without ``spec.resourceClaims``, as upstream: PreEnqueue succeeds; PreFilter stores an
empty state and returns Skip; Filter and Reserve succeed; PostFilter returns Unschedulable
``no new claims to deallocate``; PreBindPreFlight returns Skip and PreBind Success. Filter,
PostFilter, Reserve, PreBindPreFlight and PreBind return an Error (``not found``) when PreFilter did
not store its state. A pod with resource claims is rejected at PreFilter with
UnschedulableAndUnresolvable :data:`REASON_NOT_MODELLED` (PreEnqueue lets it through, since the
claims cannot be looked up; PreFilter still stores the empty state first, as upstream, so PostFilter
then reports ``no new claims to deallocate``).
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Sequence

from ...config.args import DynamicResourcesArgs
from ...framework import protocols as fwk
from ...framework.vectorized import VectorizedFilterPlugin, FilterVerdicts
from ...framework.columns import NODES, ColumnForm
from ...framework.cycle_state import CycleState
from ...framework.interface import (ActionType, ClusterEvent, ClusterEventWithHint, EnqueueExtensions,
                                    EventResource, PostFilterPlugin, PreBindPlugin, PreEnqueuePlugin,
                                    PreFilterPlugin, ReservePlugin)
from ...framework.status import Code, Status
from ..helper.args import validated_args
from .._unmodelled import DEVICE_CLASS, RESOURCE_CLAIM, RESOURCE_SLICE, not_modelled

if TYPE_CHECKING:  # pragma: no cover
    from ...api import Pod
    from ...framework.types import NodeToStatus
    from ...snapshot.table import NodeTable

NAME = "DynamicResources"
#: PreFilter stores the state Reserve and PreBind read, then answers Skip (pods without claims).
_COLUMN_FORM = ColumnForm(filter=NODES, keeps_state=True)
#: CycleState key (upstream ``stateKey = Name``)
STATE_KEY = NAME
REASON_NOT_MODELLED = not_modelled(NAME, "resource claims").message()
NO_NEW_CLAIMS_TO_DEALLOCATE = "no new claims to deallocate"


class _StateData:
    """Upstream ``stateData`` of a pod without claims (``claims`` empty)."""

    __slots__ = ()

    def clone(self) -> "_StateData":
        return self  # upstream shares the pointer across clones


def _state_status(state: CycleState) -> Status | None:
    """None when PreFilter stored the state; else upstream's ``statusError(err)`` (``not found``)."""
    try:
        state.read(STATE_KEY)
    except KeyError as e:
        return Status.from_error(e)
    return None


class DynamicResources(PreEnqueuePlugin, PreFilterPlugin, VectorizedFilterPlugin, PostFilterPlugin, ReservePlugin,
                       PreBindPlugin, EnqueueExtensions):
    """ResourceClaim allocation; a no-op for the pods fastsched models (no claims)."""

    def __init__(self, args: DynamicResourcesArgs | None = None, enable_scheduling_queue_hint: bool = True):
        self.args = args if args is not None else DynamicResourcesArgs()
        self._enable_scheduling_queue_hint = enable_scheduling_queue_hint

    def name(self) -> str:
        return NAME

    def column_form(self, pod: Pod, table: NodeTable) -> ColumnForm | None:
        """The fused cycle's form for pods without claims: PreFilter stores the state Reserve and
        PreBind read, then answers Skip."""
        return None if pod.resource_claims else _COLUMN_FORM

    # -- PreEnqueue -------------------------------------------------------------------------------
    def pre_enqueue(self, pod: Pod) -> Status | None:
        return None

    # -- PreFilter / Filter / PostFilter ----------------------------------------------------------
    def pre_filter(self, state: CycleState, pod: Pod, nodes: Sequence[fwk.NodeInfo]) -> tuple[None, Status | None]:
        # Upstream stores the (empty) state before looking at the claims.
        state.write(STATE_KEY, _StateData())
        if pod.resource_claims:
            return None, Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, REASON_NOT_MODELLED)
        return None, Status(Code.SKIP)

    def pre_filter_extensions(self) -> None:
        return None

    def _filter_status(self, state: CycleState, pod: Pod) -> Status | None:
        """The verdict for every node: it never depends on the node for pods without claims."""
        s = _state_status(state)
        if s is None and pod.resource_claims:
            # only reachable when Filter runs without the PreFilter rejection
            return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, REASON_NOT_MODELLED)
        return s

    def filter(self, state: CycleState, pod: Pod, node_info: fwk.NodeInfo) -> Status | None:
        return self._filter_status(state, pod)

    def filter_vectorized(self, state: CycleState, pod: Pod, nodes: fwk.NodeBatch) -> FilterVerdicts | Status:
        s = self._filter_status(state, pod)
        return FilterVerdicts.all_pass(len(nodes)) if s is None else s

    def post_filter(self, state: CycleState, pod: Pod, filtered_node_status_map: NodeToStatus) -> tuple[None, Status]:
        s = _state_status(state)
        if s is not None:
            return None, s
        return None, Status(Code.UNSCHEDULABLE, NO_NEW_CLAIMS_TO_DEALLOCATE)

    # -- Reserve / PreBind ------------------------------------------------------------------------
    def reserve(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        return _state_status(state)

    def unreserve(self, state: CycleState, pod: Pod, node_name: str) -> None:
        return None

    def pre_bind_pre_flight(self, state: CycleState, pod: Pod, node_name: str) -> Status:
        s = _state_status(state)
        return s if s is not None else Status(Code.SKIP)

    def pre_bind(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        return _state_status(state)

    # -- EnqueueExtensions ------------------------------------------------------------------------
    def events_to_register(self) -> list[ClusterEventWithHint]:
        node_actions = ActionType.ADD | ActionType.UPDATE_NODE_LABEL | ActionType.UPDATE_NODE_ALLOCATABLE
        if not self._enable_scheduling_queue_hint:
            node_actions |= ActionType.UPDATE_NODE_TAINT
        add_update = ActionType.ADD | ActionType.UPDATE
        return [
            ClusterEventWithHint(ClusterEvent(EventResource.NODE, node_actions)),
            ClusterEventWithHint(ClusterEvent(RESOURCE_CLAIM, add_update)),
            ClusterEventWithHint(ClusterEvent(EventResource.POD, ActionType.UPDATE_POD_GENERATED_RESOURCE_CLAIM)),
            ClusterEventWithHint(ClusterEvent(DEVICE_CLASS, add_update)),
            ClusterEventWithHint(ClusterEvent(RESOURCE_SLICE, add_update)),
        ]


def new(args: Any, handle: fwk.Handle) -> DynamicResources:
    """Upstream ``New`` with DynamicResourceAllocation on: type-check and validate the args."""
    return DynamicResources(validated_args(args, DynamicResourcesArgs,
                                           "got args of type {got}, want *DynamicResourcesArgs"))


__all__ = ["NAME", "DynamicResources", "new", "REASON_NOT_MODELLED", "NO_NEW_CLAIMS_TO_DEALLOCATE", "STATE_KEY"]
