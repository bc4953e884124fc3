"""Pod ordering helpers of preemption (upstream ``pkg/scheduler/util/utils.go``, v1.34).

``GetPodStartTime`` returns ``status.startTime``, or ``time.Now()`` for a pod that has not started.
fastsched returns ``math.inf`` for such a pod: upstream's "now" is by construction no earlier than
any start time that has already happened, and infinity keeps that order whatever clock (virtual or
real) the simulation runs on. The one difference is between two pods that have not started:
upstream compares two successive ``time.Now()`` calls (so the first argument usually wins), fastsched
treats them as equal here. Victims are ordered by ``MoreImportantVictim`` instead, whose times were
taken when ``GetVictimsOnNode`` made the victims, one after the other: there the victim made first
is the more important (see ``DefaultPreemption._sort_by_importance`` and the kernel's ``_go_less``).
"""
from __future__ import annotations

import math
from typing import TYPE_CHECKING, Sequence

if TYPE_CHECKING:  # pragma: no cover
    from ...api import LabelSelector, Pod, PodDisruptionBudget

#: What :func:`pod_start_time` gives for a pod without ``status.startTime``.
NOT_STARTED = math.inf
DISRUPTION_TARGET = "DisruptionTarget"
REASON_PREEMPTION_BY_SCHEDULER = "PreemptionByScheduler"


def pod_terminating_by_preemption(pod: "Pod") -> bool:
    """Upstream ``podTerminatingByPreemption``: deleting, and its first DisruptionTarget condition
    is True with reason PreemptionByScheduler."""
    if pod.deletion_timestamp is None:
        return False
    for condition in pod.conditions:
        if condition.get("type") == DISRUPTION_TARGET:
            return condition.get("status") == "True" and condition.get("reason") == REASON_PREEMPTION_BY_SCHEDULER
    return False


class PDBIndex:
    """The PodDisruptionBudgets of one preemption attempt, grouped by namespace.

    Only PDBs whose selector can match a pod are indexed: a nil or empty selector matches nothing
    here (upstream's rule for PDBs in preemption).
    """

    __slots__ = ("pdbs", "by_namespace")

    def __init__(self, pdbs: Sequence["PodDisruptionBudget"]):
        self.pdbs = list(pdbs)
        #: namespace -> (position in ``pdbs``, the PDB, its selector) of the PDBs that can match
        self.by_namespace: dict[str, list[tuple[int, "PodDisruptionBudget", LabelSelector]]] = {}
        for i, pdb in enumerate(self.pdbs):
            selector = pdb.selector
            if selector is None or selector.is_empty() or selector.selects_nothing():
                continue
            self.by_namespace.setdefault(pdb.namespace, []).append((i, pdb, selector))


def pod_priority(pod: "Pod") -> int:
    """Upstream ``corev1helpers.PodPriority``: ``spec.priority``, or 0 when unset."""
    p = pod.priority
    return 0 if p is None else p


def pod_start_time(pod: "Pod") -> float:
    """Upstream ``GetPodStartTime``: ``status.startTime`` (seconds), or :data:`NOT_STARTED`."""
    t = pod.start_time
    return NOT_STARTED if t is None else t


def more_important_pod(pod1: "Pod", pod2: "Pod") -> bool:
    """Upstream ``MoreImportantPod``: higher priority first; on a tie the pod that started earlier."""
    p1, p2 = pod_priority(pod1), pod_priority(pod2)
    if p1 != p2:
        return p1 > p2
    return pod_start_time(pod1) < pod_start_time(pod2)


def importance_key(pod: "Pod") -> tuple[int, float]:
    """A sort key ordering pods as :func:`more_important_pod` does (most important first)."""
    return (-pod_priority(pod), pod_start_time(pod))


def earliest_pod_start_time(pods: Sequence["Pod"]) -> float | None:
    """Upstream ``GetEarliestPodStartTime``: the earliest start among the highest-priority pods.

    None for an empty list (upstream logs an error and returns nil).
    """
    if not pods:
        return None
    earliest = pod_start_time(pods[0])
    max_priority = pod_priority(pods[0])
    for pod in pods:
        priority = pod_priority(pod)
        if priority == max_priority:
            start = pod_start_time(pod)
            if start < earliest:
                earliest = start
        elif priority > max_priority:
            max_priority = priority
            earliest = pod_start_time(pod)
    return earliest


__all__ = ["DISRUPTION_TARGET", "NOT_STARTED", "PDBIndex", "REASON_PREEMPTION_BY_SCHEDULER",
           "pod_terminating_by_preemption", "earliest_pod_start_time", "importance_key", "more_important_pod", "pod_priority",
           "pod_start_time"]
