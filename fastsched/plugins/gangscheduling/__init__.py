"""GangScheduling (upstream ``pkg/scheduler/framework/plugins/gangscheduling/gangscheduling.go``, v1.37.2).

In the default profile only with GenericWorkload (``applyFeatureGates``); registered whatever the
gates, as upstream. With CompositePodGroup off (the only value fastsched models):

* **PreEnqueue**: a pod without ``spec.schedulingGroup`` passes. Its PodGroup not seen ->
  UnschedulableAndUnresolvable ``waiting for pods's pod group "<name>" to appear in scheduling
  queue`` (sic); a basic group passes; a gang passes once the scheduler knows ``minCount`` of its
  pods (``PodGroupState.AllPodsCount``: unscheduled, assumed and bound), else
  UnschedulableAndUnresolvable ``waiting for minCount pods from a gang to appear in scheduling
  queue``.
* **Permit**: a gang pod waits (up to 5 minutes) until ``minCount`` members are scheduled (assumed
  or bound, this one included), activating the unscheduled ones meanwhile; the pod that completes
  the count allows every waiting member.
* **PlacementFeasible** (the group cycle's check after each pod): ``remaining + scheduled <
  minCount`` -> Unschedulable ``minCount (m) cannot be satisfied: s scheduled, r remaining``;
  ``scheduled < minCount`` -> Wait ``minCount (m) is not yet satisfied: ...``; else Success.
* **Events**: UnscheduledPod/Add and AssignedPod/Add (a pod of the same group), PodGroup/Add (the
  pod's group), PodGroup/Update (the pod's gang whose ``minCount`` decreased).

The PodGroup objects and states are the scheduler cache's (upstream's ``PodGroupManager``), read
through the handle's ``pod_group_manager`` (set by the Scheduler); Permit reads the PodGroup from
the snapshot upstream, which in fastsched is the cache itself.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ...api import Pod
from ...api.scheduling import PodGroup
from ...framework import protocols as fwk
from ...framework.cycle_state import CycleState
from ...framework.interface import (ActionType, ClusterEvent, ClusterEventWithHint, EnqueueExtensions,
                                    EventResource, PermitPlugin, PreEnqueuePlugin, QueueingHint)
from ...framework.podgroups import PodGroupStateError
from ...framework.status import Code, Status

NAME = "GangScheduling"
#: ``permitTimeoutDuration``
PERMIT_TIMEOUT_SECONDS = 5 * 60.0


@dataclass(frozen=True)
class PlacementProgress:
    """``framework.PlacementProgress``: the group cycle's count of pods still to try and of the
    group's pods scheduled (assumed or bound, those of this cycle included)."""

    remaining: int
    scheduled: int


def _as(cls: type, old_obj: Any, new_obj: Any) -> tuple[Any, Any, Exception | None]:
    """``util.As``: the typed objects, or an error naming the wrong type."""
    for obj in (new_obj, old_obj):
        if obj is not None and not isinstance(obj, cls):
            kind = "*v1.Pod" if cls is Pod else "*v1beta1.PodGroup"
            return None, None, TypeError(f"expected {kind}, but got {type(obj).__name__}")
    return old_obj, new_obj, None


def get_min_count(pod_group: PodGroup) -> int:
    """``getMinCount``: the gang's ``minCount``, 1 for a basic group."""
    gang = pod_group.scheduling_policy.gang
    return 1 if gang is None else gang.min_count


class GangScheduling(PreEnqueuePlugin, PermitPlugin, EnqueueExtensions):
    """All-or-nothing scheduling of a gang's ``minCount`` pods (see the module docstring)."""

    #: PreEnqueue reads a member only for its pod group (namespace and name): every member of one
    #: group gets the same answer, so the queue asks once per group when it runs a group's members
    pre_enqueue_per_pod_group = True

    def __init__(self, handle: Any):
        self._handle = handle

    def name(self) -> str:
        return NAME

    # -- the PodGroupManager -------------------------------------------------------------------------
    def _manager(self) -> Any:
        manager = getattr(self._handle, "pod_group_manager", None)
        if manager is None:
            raise PodGroupStateError("generic workload feature gate is disabled")
        return manager

    def _pod_group(self, namespace: str, name: str) -> PodGroup:
        return self._manager().pod_groups_lister().get(namespace, name)

    def _state(self, namespace: str, name: str) -> Any:
        return self._manager().pod_group_states_lister().get(namespace, name)

    # -- events ---------------------------------------------------------------------------------------
    def events_to_register(self) -> list[ClusterEventWithHint]:
        return [
            ClusterEventWithHint(ClusterEvent(EventResource.UNSCHEDULED_POD, ActionType.ADD),
                                 self.is_schedulable_after_pod_added),
            ClusterEventWithHint(ClusterEvent(EventResource.ASSIGNED_POD, ActionType.ADD),
                                 self.is_schedulable_after_pod_added),
            ClusterEventWithHint(ClusterEvent(EventResource.POD_GROUP, ActionType.ADD),
                                 self.is_schedulable_after_pod_group_added),
            ClusterEventWithHint(ClusterEvent(EventResource.POD_GROUP, ActionType.UPDATE),
                                 self.is_schedulable_after_pod_group_updated),
        ]

    @staticmethod
    def _same_group(pod: Pod, namespace: str, name: str) -> bool:
        """``areSameHierarchy`` with CompositePodGroup off: the same pod group key."""
        return pod.namespace == namespace and pod.pod_group_name == name

    def is_schedulable_after_pod_added(self, pod: Pod, old_obj: Any,
                                       new_obj: Any) -> tuple[QueueingHint, Exception | None]:
        _, added, err = _as(Pod, old_obj, new_obj)
        if err is not None:
            return QueueingHint.QUEUE, err
        if pod.scheduling_group is None or added is None or added.scheduling_group is None:
            return QueueingHint.QUEUE_SKIP, None
        if self._same_group(pod, added.namespace, added.pod_group_name or ""):
            return QueueingHint.QUEUE, None
        return QueueingHint.QUEUE_SKIP, None

    def is_schedulable_after_pod_group_added(self, pod: Pod, old_obj: Any,
                                             new_obj: Any) -> tuple[QueueingHint, Exception | None]:
        _, added, err = _as(PodGroup, old_obj, new_obj)
        if err is not None:
            return QueueingHint.QUEUE, err
        if pod.scheduling_group is None:
            return QueueingHint.QUEUE_SKIP, None
        if self._same_group(pod, added.namespace, added.name):
            return QueueingHint.QUEUE, None
        return QueueingHint.QUEUE_SKIP, None

    def is_schedulable_after_pod_group_updated(self, pod: Pod, old_obj: Any,
                                               new_obj: Any) -> tuple[QueueingHint, Exception | None]:
        """Queue when the pod's gang lowered its ``minCount``."""
        old, new, err = _as(PodGroup, old_obj, new_obj)
        if err is not None:
            return QueueingHint.QUEUE, err
        if pod.scheduling_group is None:
            return QueueingHint.QUEUE_SKIP, None
        if not self._same_group(pod, new.namespace, new.name):
            return QueueingHint.QUEUE_SKIP, None
        old_gang, new_gang = old.scheduling_policy.gang, new.scheduling_policy.gang
        if old_gang is None or new_gang is None:
            return QueueingHint.QUEUE_SKIP, None
        if new_gang.min_count >= old_gang.min_count:
            return QueueingHint.QUEUE_SKIP, None
        return QueueingHint.QUEUE, None

    # -- PreEnqueue -----------------------------------------------------------------------------------
    def pre_enqueue(self, pod: Pod) -> Status | None:
        """``preEnqueueHierarchiesDisabled``."""
        if pod.scheduling_group is None:
            return None
        name = pod.pod_group_name or ""
        namespace = pod.namespace
        # (_pod_group and _state inlined over one manager: every arrival of a gang member asks)
        try:
            manager = self._manager()
            pod_group = manager.pod_groups_lister().get(namespace, name)
        except PodGroupStateError:
            return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
                          f'waiting for pods\'s pod group "{name}" to appear in scheduling queue')
        gang = pod_group.scheduling_policy.gang
        if gang is None:
            return None
        try:
            state = manager.pod_group_states_lister().get(namespace, name)
        except PodGroupStateError as e:
            return Status.from_error(e)
        if state.all_pods_count() < gang.min_count:
            return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
                          "waiting for minCount pods from a gang to appear in scheduling queue")
        return None

    # -- Permit ---------------------------------------------------------------------------------------
    def permit(self, state: CycleState, pod: Pod, node_name: str) -> tuple[Status | None, float]:
        if pod.scheduling_group is None:
            return None, 0.0
        name = pod.pod_group_name or ""
        try:
            pod_group = self._pod_group(pod.namespace, name)
        except PodGroupStateError as e:
            return Status.from_error(f"failed to get podGroup {pod.namespace}/{name}: {e}"), 0.0
        try:
            group_state = self._state(pod.namespace, pod_group.name)
        except PodGroupStateError as e:
            return Status.from_error(e), 0.0
        return self._permit_pod_group(pod_group, group_state)

    def _permit_pod_group(self, pod_group: PodGroup, group_state: Any) -> tuple[Status | None, float]:
        """``permitPodGroup``."""
        gang = pod_group.scheduling_policy.gang
        if gang is None:
            return None, 0.0
        if group_state.scheduled_pods_count() < gang.min_count:
            self._handle.activate(group_state.unscheduled_pods())
            return Status(Code.WAIT, "waiting for minCount pods from a gang to be scheduled"), PERMIT_TIMEOUT_SECONDS
        for uid in group_state.assumed_pod_uids():
            waiting = self._handle.get_waiting_pod(uid)
            if waiting is not None:
                waiting.allow(NAME)
        return None, 0.0

    def permit_waits(self, pod_group: PodGroup, group_state: Any) -> bool:
        """:meth:`_permit_pod_group` for a member of a gang whose members held at Permit the
        scheduler keeps itself, without WaitingPods (``PodGroupCycleMixin``'s ``_GangPermitRun``:
        all of them released in the same submit, before anything can observe them): True, after
        the same activation, when the member waits; False when it passes (the members waiting so
        far are then the caller's to release, as the allow loop would)."""
        gang = pod_group.scheduling_policy.gang
        if gang is None:
            return False
        if group_state.scheduled_pods_count() < gang.min_count:
            self._handle.activate(group_state.unscheduled_pods())
            return True
        return False

    # -- PlacementFeasible ----------------------------------------------------------------------------
    def _entity_min_count(self, pod_group_info: Any) -> int:
        """The ``minCount`` PlacementFeasible checks: the PodGroup's (the composite subclass reads a
        CompositePodGroup entity's ``minGroupCount`` too)."""
        return get_min_count(pod_group_info.pod_group)

    def placement_feasible(self, state: Any, pod_group_info: Any, args: PlacementProgress) -> Status | None:
        """``PlacementFeasible``: whether the group can still (or does already) reach ``minCount``."""
        min_count = self._entity_min_count(pod_group_info)
        remaining, scheduled = args.remaining, args.scheduled
        if remaining + scheduled < min_count:
            return Status(Code.UNSCHEDULABLE, f"minCount ({min_count}) cannot be satisfied: {scheduled} scheduled, "
                                              f"{remaining} remaining")
        if scheduled < min_count:
            return Status(Code.WAIT, f"minCount ({min_count}) is not yet satisfied: {scheduled} scheduled, "
                                     f"{remaining} remaining")
        return None


def new(args: Any, handle: fwk.Handle) -> GangScheduling:
    """Upstream ``New``: no args; with CompositePodGroup (``feature.Features.EnableCompositePodGroup``)
    the hierarchy-aware plugin (:mod:`.hierarchy`)."""
    from ...features import COMPOSITE_POD_GROUP, feature_gates_of
    if feature_gates_of(handle).enabled(COMPOSITE_POD_GROUP):
        from .hierarchy import CompositeGangScheduling  # (it subclasses this module's plugin)
        return CompositeGangScheduling(handle)
    return GangScheduling(handle)


__all__ = ["NAME", "PERMIT_TIMEOUT_SECONDS", "GangScheduling", "PlacementProgress", "get_min_count", "new"]
