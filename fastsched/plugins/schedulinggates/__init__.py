"""SchedulingGates (upstream ``pkg/scheduler/framework/plugins/schedulinggates/scheduling_gates.go``, v1.34).

PreEnqueue keeps a pod with ``spec.schedulingGates`` out of activeQ with UnschedulableAndUnresolvable
``waiting for scheduling gates: [g1 g2]`` (Go's ``%v`` of the gate names). With queueing hints on
(the default) it registers Pod/UpdatePodSchedulingGatesEliminated, whose hint queues the gated pod
itself; with hints off it registers nothing (the queue then re-checks every pod update).
"""
from __future__ import annotations

from typing import Any

from ...api import Pod
from ...framework import protocols as fwk
from ...framework.interface import (ActionType, ClusterEvent, ClusterEventWithHint, EnqueueExtensions,
                                    EventResource, PreEnqueuePlugin, QueueingHint)
from ...framework.status import Code, Status

NAME = "SchedulingGates"


def _as_pods(old_obj: Any, new_obj: Any) -> tuple[Pod | None, Pod | None, Exception | None]:
    """Upstream ``util.As[*v1.Pod]``: the typed objects, or an error naming the wrong type."""
    for obj in (new_obj, old_obj):
        if obj is not None and not isinstance(obj, Pod):
            return None, None, TypeError(f"expected *v1.Pod, but got {type(obj).__name__}")
    return old_obj, new_obj, None


class SchedulingGates(PreEnqueuePlugin, EnqueueExtensions):
    """Gates pods until their ``spec.schedulingGates`` list is empty."""

    def __init__(self, enable_scheduling_queue_hint: bool = True):
        self._enable_scheduling_queue_hint = enable_scheduling_queue_hint

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
            ClusterEvent(EventResource.POD, ActionType.UPDATE_POD_SCHEDULING_GATES_ELIMINATED),
            self.is_schedulable_after_update_pod_scheduling_gates_eliminated)]

    def is_schedulable_after_update_pod_scheduling_gates_eliminated(
            self, pod: Pod, old_obj: Any, new_obj: Any) -> tuple[QueueingHint, Exception | None]:
        """Queue the gated pod when the update that removed its gates is its own."""
        _, modified, err = _as_pods(old_obj, new_obj)
        if err is not None:
            return QueueingHint.QUEUE, err
        if modified is None or modified.uid != pod.uid:  # (an update always has its new object)
            return QueueingHint.QUEUE_SKIP, None
        return QueueingHint.QUEUE, None


def new(args: Any, handle: fwk.Handle) -> SchedulingGates:
    """Upstream ``New``: no args; queueing hints are on by default in v1.34."""
    return SchedulingGates()


__all__ = ["NAME", "SchedulingGates", "new"]
