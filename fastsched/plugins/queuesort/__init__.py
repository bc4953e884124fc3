"""PrioritySort (upstream ``pkg/scheduler/framework/plugins/queuesort/priority_sort.go``, v1.34).

The default QueueSort plugin: higher pod priority first; equal priorities in queue-timestamp order.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ...framework import protocols as fwk
from ...framework.interface import QueueSortPlugin
from ...framework.podgroups import entity_priority
from ...framework.types import QueuedPodInfo

if TYPE_CHECKING:  # pragma: no cover
    from ...api import Pod

NAME = "PrioritySort"


def _priority(pod: Pod) -> int:
    """Upstream ``corev1helpers.PodPriority``: ``spec.priority``, or 0 when unset."""
    return 0 if pod.priority is None else pod.priority


class PrioritySort(QueueSortPlugin):
    """Orders activeQ by priority, then by the time the pod was (re)queued."""

    def name(self) -> str:
        return NAME

    def less(self, a: QueuedPodInfo, b: QueuedPodInfo) -> bool:
        """Whether ``a`` goes before ``b``: ``p1 > p2 || (p1 == p2 && a.Timestamp.Before(b.Timestamp))``
        (``GetPriority``: a pod group's is its PodGroup's, see :func:`~fastsched.framework.podgroups.entity_priority`)."""
        p1, p2 = entity_priority(a), entity_priority(b)
        return p1 > p2 or (p1 == p2 and a.timestamp < b.timestamp)

    def sort_key(self, info: QueuedPodInfo) -> tuple[int, float]:
        """The key the queue orders by: ``less(a, b) == (sort_key(a) < sort_key(b))``."""
        return -entity_priority(info), info.timestamp


def new(args: Any, handle: fwk.Handle) -> PrioritySort:
    """Upstream ``New``: the plugin takes no args."""
    return PrioritySort()


__all__ = ["NAME", "PrioritySort", "new"]
