"""backoffQ (upstream ``pkg/scheduler/backend/queue/backoff_queue.go``, v1.34).

Two heaps ordered by backoff expiration: ``podBackoffQ`` holds pods rejected by plugins,
``podErrorBackoffQ`` pods that failed without a rejector plugin (errors). With
SchedulerPopFromBackoffQ (``pop_from_backoff_q``) expirations are truncated to 1-second ordering
windows (KEP-5142), pods in the same window are ordered by the QueueSort ``less``, and
:meth:`BackoffQueue.pop_backoff` lets activeQ take the head of ``podBackoffQ`` when it is empty.
"""
from __future__ import annotations

import itertools
import math
from typing import Any, Callable, Iterator

from ....api.objects import Pod
from ....framework.podgroups import entity_key
from ....framework.types import QueuedPodInfo
from ..heap import Heap, KeyedHeap

#: podBackoffQ ordering window (upstream ``backoffQOrderingWindowDuration``)
BACKOFF_Q_ORDERING_WINDOW = 1.0

_NS = 1_000_000_000


def _size(pinfo: QueuedPodInfo) -> int:
    """``QueuedEntityInfo.Size``: 1 for a pod, the members for a pod group."""
    return 1 if pinfo.pod is not None else pinfo.size()


class BackoffQueue:
    """Upstream ``backoffQueue``: podBackoffQ and podErrorBackoffQ, used as one queue, keyed by UID.

    ``less_fn`` is the QueueSort ``less`` (the order within an ordering window); ``record(queue,
    event)`` counts the queue's incoming pods. ``sort_key``, when given, orders as ``less_fn``
    (``less_fn(a, b) == (sort_key(a) < sort_key(b))``, the QueueSort plugin's ``sort_key``).

    The heaps: an order that is a sort key (the backoff expiration alone, or it then ``sort_key``)
    is a :class:`~fastsched.scheduler.backend.heap.KeyedHeap`, whose comparisons are C tuple
    comparisons; only podBackoffQ with a QueueSort without ``sort_key`` keeps the
    ``less``-driven :class:`~fastsched.scheduler.backend.heap.Heap`. Both break ties by insertion
    order and keep it across updates, so the pops are the same. Every entry's fields that the order
    reads (counts, timestamp, priority) change only while it is out of the heap or through
    :meth:`update` (``fix``), as activeQ's, so a key computed at push is the one ``less`` would see.
    """

    __slots__ = ("clock", "pod_initial_backoff", "pod_max_backoff", "pop_from_backoff_q", "pod_backoff_q",
                 "pod_error_backoff_q", "_less_fn", "_sort_key", "_record", "_initial_ns", "_max_ns")

    def __init__(self, clock: Any, pod_initial_backoff: float, pod_max_backoff: float,
                 less_fn: Callable[[QueuedPodInfo, QueuedPodInfo], bool], pop_from_backoff_q: bool,
                 record: Callable[[str, str], None], sort_key: Callable[[QueuedPodInfo], Any] | None = None):
        self.clock = clock
        self.pod_initial_backoff = float(pod_initial_backoff)
        self.pod_max_backoff = float(pod_max_backoff)
        self._initial_ns = round(self.pod_initial_backoff * _NS)
        self._max_ns = round(self.pod_max_backoff * _NS)
        self.pop_from_backoff_q = bool(pop_from_backoff_q)
        self._less_fn = less_fn
        self._sort_key = sort_key
        self._record = record
        # (bound methods, not closures: a fork's deep copy rebinds them to the copied queue)
        self.pod_backoff_q: Heap | KeyedHeap
        if not self.pop_from_backoff_q:
            self.pod_backoff_q = KeyedHeap(self.backoff_time)
        elif sort_key is None:
            self.pod_backoff_q = Heap(self._less_backoff_with_priority)
        else:
            self.pod_backoff_q = KeyedHeap(self._backoff_sort_key)
        self.pod_error_backoff_q = KeyedHeap(self.backoff_time)

    # -- less functions (upstream lessBackoffCompleted) ----------------------------------------
    def _less_backoff_with_priority(self, a: QueuedPodInfo, b: QueuedPodInfo) -> bool:
        ba, bb = self.backoff_time(a), self.backoff_time(b)
        if ba != bb:
            return ba < bb
        return self._less_fn(a, b)

    def _backoff_sort_key(self, pinfo: QueuedPodInfo) -> tuple[float, Any]:
        """:meth:`_less_backoff_with_priority` as a key: the expiration, then the QueueSort key."""
        return self.backoff_time(pinfo), self._sort_key(pinfo)  # type: ignore[misc]

    # -- backoff ---------------------------------------------------------------------------------
    def _align_ns(self, t_ns: int) -> int:
        """Upstream ``alignToWindow``."""
        if not self.pop_from_backoff_q:
            return t_ns
        return t_ns - t_ns % _NS  # Truncate to the 1 s window

    @staticmethod
    def _failure_count(pinfo: QueuedPodInfo) -> int:
        if pinfo.consecutive_errors_count > 0:
            return pinfo.consecutive_errors_count
        return pinfo.unschedulable_count

    def _duration_ns(self, count: int, size: int = 1) -> int:
        if count <= 0:
            return 0
        max_ns = self._max_ns
        if size > 1:
            # a pod group's (calculateBackoffDuration): the max times sqrt(the entity's pod count)
            max_ns = int(max_ns * math.sqrt(size))
        shift = count - 1
        if self._initial_ns > (max_ns >> shift):
            return max_ns
        return self._initial_ns << shift

    def backoff_duration(self, pinfo: QueuedPodInfo) -> float:
        """Upstream ``calculateBackoffDuration``: ``initial * 2**(n-1)`` capped at the max.

        ``n`` is ``consecutive_errors_count`` when positive, else ``unschedulable_count`` (v1.34
        no longer counts ``attempts``); 0 when ``n`` is 0 or the max backoff is 0.
        """
        if self._max_ns == 0:
            return 0.0
        return self._duration_ns(self._failure_count(pinfo), _size(pinfo)) / _NS

    def backoff_time(self, pinfo: QueuedPodInfo) -> float:
        """Upstream ``getBackoffTime`` (cached in ``backoff_expiration``); ``-inf`` for no backoff."""
        if self._max_ns == 0:
            return -math.inf
        count = self._failure_count(pinfo)
        if count == 0:
            return -math.inf
        if pinfo.backoff_expiration is None:
            t_ns = round(pinfo.timestamp * _NS) + self._duration_ns(count, _size(pinfo))
            pinfo.backoff_expiration = self._align_ns(t_ns) / _NS
        return pinfo.backoff_expiration

    def is_backing_off(self, pinfo: QueuedPodInfo, now: float | None = None) -> bool:
        """Upstream ``isPodBackingoff`` (at ``now``, default the clock's time).

        With ordering windows the pod backs off while its (window-aligned) expiration is not
        before the current window, i.e. until the window after its expiration's window starts.
        """
        bo = self.backoff_time(pinfo)
        if bo == -math.inf:
            return False
        if now is None:
            now = self.clock.now()
        if self.pop_from_backoff_q:
            return not bo < self._align_ns(round(now * _NS)) / _NS
        return bo > now

    def backoff_expiration(self, pinfo: QueuedPodInfo) -> float:
        """The earliest time at which ``pinfo`` no longer backs off (its timestamp when it never did)."""
        bo = self.backoff_time(pinfo)
        if bo == -math.inf:
            return pinfo.timestamp
        return bo + BACKOFF_Q_ORDERING_WINDOW if self.pop_from_backoff_q else bo

    def pop_all_backoff_completed(self) -> list[QueuedPodInfo]:
        """Upstream ``popAllBackoffCompleted``: pop the pods done backing off, podBackoffQ's first."""
        completed = []
        for heap in (self.pod_backoff_q, self.pod_error_backoff_q):
            while True:
                head = heap.peek()
                if head is None or self.is_backing_off(head):
                    break
                heap.pop()
                completed.append(head)
        return completed

    def heads(self) -> list[QueuedPodInfo]:
        """The head of each heap (the next pod to complete its backoff there)."""
        return [h for h in (self.pod_backoff_q.peek(), self.pod_error_backoff_q.peek()) if h is not None]

    # -- the queue -------------------------------------------------------------------------------
    def add(self, pinfo: QueuedPodInfo, event: str) -> None:
        """Into podErrorBackoffQ when no plugin rejected the pod, else podBackoffQ (and out of the other)."""
        uid = entity_key(pinfo)
        if not pinfo.unschedulable_plugins and not pinfo.pending_plugins:
            self.pod_error_backoff_q.add_or_update(uid, pinfo)
            self.pod_backoff_q.delete(uid)
        else:
            self.pod_backoff_q.add_or_update(uid, pinfo)
            self.pod_error_backoff_q.delete(uid)
        self._record("backoff", event)

    def update(self, uid: str, new_pod: Pod) -> QueuedPodInfo | None:
        """Update the pod in place if it is here; returns its QueuedPodInfo, else None."""
        for heap in (self.pod_backoff_q, self.pod_error_backoff_q):
            pinfo = heap.get(uid)
            if pinfo is not None:
                pinfo.pod_info.update(new_pod)
                heap.fix(uid)
                return pinfo
        return None

    def delete(self, uid: str) -> bool:
        """Remove the pod; whether it was here."""
        if self.pod_backoff_q.delete(uid) is not None:
            return True
        return self.pod_error_backoff_q.delete(uid) is not None

    def pop_backoff(self) -> QueuedPodInfo | None:
        """The head of podBackoffQ (for activeQ's pop when SchedulerPopFromBackoffQ is on)."""
        return self.pod_backoff_q.pop()

    def get(self, uid: str) -> QueuedPodInfo | None:
        p = self.pod_backoff_q.get(uid)
        return p if p is not None else self.pod_error_backoff_q.get(uid)

    def has(self, uid: str) -> bool:
        return uid in self.pod_backoff_q or uid in self.pod_error_backoff_q

    def list(self) -> list[QueuedPodInfo]:
        """podBackoffQ's pods then podErrorBackoffQ's, each in pop order."""
        return self.pod_backoff_q.values() + self.pod_error_backoff_q.values()

    def raw_values(self) -> Iterator[QueuedPodInfo]:
        return itertools.chain(self.pod_backoff_q.raw_values(), self.pod_error_backoff_q.raw_values())

    def __len__(self) -> int:
        return len(self.pod_backoff_q) + len(self.pod_error_backoff_q)
