"""SchedulingGates (upstream ``pkg/scheduler/framework/plugins/schedulinggates/scheduling_gates.go``, v1.37.2).

PreEnqueue keeps a pod with ``spec.schedulingGates`` out of activeQ with UnschedulableAndUnresolvable
``waiting for scheduling gates: [g1 g2]`` (Go's ``%v`` of the gate names). With queueing hints on
(the default) it registers TargetPod/UpdatePodSchedulingGatesEliminated (the gated pod's own
update), whose hint queues; with hints off it registers nothing (the queue then re-checks every
pod update).
"""
from __future__ import annotations

from typing import Any

from ...api import Pod
from ...framework import protocols as fwk
from ...framework.interface import (ActionType, ClusterEvent, ClusterEventWithHint, EnqueueExtensions,
                                    EventResource, PreEnqueuePlugin, QueueingHint)
from ...framework.status import Code, Status

NAME = "SchedulingGates"


class SchedulingGates(PreEnqueuePlugin, EnqueueExtensions):
    """Gates pods until their ``spec.schedulingGates`` list is empty."""

    def __init__(self, enable_scheduling_queue_hint: bool = True):
        self._enable_scheduling_queue_hint = enable_scheduling_queue_hint
        #: PreEnqueue reads the pod's ``spec.schedulingGates`` and nothing else (upstream's too): the
        #: queue does not ask again for a pod object it let through (a gang's release pass; this
        #: method's answer: a subclass's may read more)
        self.pre_enqueue_pod_only = type(self).pre_enqueue is SchedulingGates.pre_enqueue

    def name(self) -> str:
        return NAME

    def pre_enqueue(self, pod: Pod) -> Status | None:
        if not pod.scheduling_gates:
            return None
        return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
                      f"waiting for scheduling gates: [{' '.join(pod.scheduling_gates)}]")

    def events_to_register(self) -> list[ClusterEventWithHint]:
        if not self._enable_scheduling_queue_hint:
            return []
        return [ClusterEventWithHint(
            ClusterEvent(EventResource.TARGET_POD, ActionType.UPDATE_POD_SCHEDULING_GATES_ELIMINATED),
            self.is_schedulable_after_update_target_pod_scheduling_gates_eliminated)]

    def is_schedulable_after_update_target_pod_scheduling_gates_eliminated(
            self, pod: Pod, old_obj: Any, new_obj: Any) -> tuple[QueueingHint, Exception | None]:
        """Upstream ``isSchedulableAfterUpdateTargetPodSchedulingGatesEliminated``: Queue (a
        TargetPod event is the gated pod's own update)."""
        return QueueingHint.QUEUE, None


def new(args: Any, handle: fwk.Handle) -> SchedulingGates:
    """Upstream ``New``: no args; queueing hints are on by default in v1.34."""
    return SchedulingGates()


__all__ = ["NAME", "SchedulingGates", "new"]
