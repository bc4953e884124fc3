"""What became of each pod handed to the Scheduler: the statuses and :class:`PodResult`.

A module of its own so that the cycle (``schedule_one.py``) and the loop (``scheduler.py``) both
write results without importing each other.
"""
from __future__ import annotations

from dataclasses import dataclass

from ..api import Pod
from .records import kss_annotations

__all__ = ["DELETED", "ERROR", "GATED", "NO_PROFILE", "PENDING", "PodResult", "SCHEDULED", "TERMINATING",
           "UNSCHEDULABLE", "WAITING"]

SCHEDULED = "Scheduled"
UNSCHEDULABLE = "Unschedulable"
ERROR = "Error"
PENDING = "Pending"
GATED = "Gated"
WAITING = "Waiting"
DELETED = "Deleted"
NO_PROFILE = "NoProfile"
TERMINATING = "Terminating"


@dataclass
class PodResult:
    """What became of one pod handed to the scheduler."""

    pod: Pod
    node_name: str | None = None
    message: str = ""
    attempts: int = 0
    nominated_node_name: str | None = None
    #: Scheduled, Unschedulable, Error, Pending (queued, not yet tried), Waiting (held at Permit),
    #: Gated, Deleted, NoProfile, Terminating (has a deletionTimestamp: never scheduled, as
    #: upstream's skipPodSchedule)
    status: str = PENDING
    #: scheduler clock time when the pod was added and when it was bound (None if not bound)
    queued_at: float = 0.0
    bound_at: float | None = None
    #: the pod's decision records (fastsched.scheduler.records.AttemptRecord), oldest first, when
    #: the Scheduler records (``Scheduler(record="all" | "failures")``); empty otherwise
    history: list | tuple = ()

    @property
    def scheduled(self) -> bool:
        return self.status == SCHEDULED

    def kss_annotations(self, *, legacy_keys: bool = False) -> dict[str, str]:
        """The decision records as kube-scheduler-simulator's pod annotations (key -> JSON text),
        under ``kube-scheduler-simulator.sigs.k8s.io/`` (KSS v0.4.0 and later), or with
        ``legacy_keys=True`` under ``scheduler-simulator/`` (older KSS)."""
        return kss_annotations(self.history, legacy_keys=legacy_keys)

    def _repr_html_(self) -> str:
        from .display import pod_result_html

        return pod_result_html(self)
