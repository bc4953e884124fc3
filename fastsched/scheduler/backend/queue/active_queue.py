"""activeQ (upstream ``pkg/scheduler/backend/queue/active_queue.go``, v1.34).

The heap the scheduler pops from, ordered by the profile's QueueSort ``less`` (ties by insertion
order), with the bookkeeping of the pods popped and not yet done ("in flight"): the cluster events
received while any pod is in flight are recorded, so that a pod coming back unschedulable can be
checked against the events it missed. It also counts the scheduling cycles (one per pop).
"""
from __future__ import annotations

import builtins
import itertools
from collections import deque
from dataclasses import dataclass
from typing import Any, Callable, Iterable, Iterator, Protocol

from ....api.objects import Pod
from ....framework.events import EVENT_FORCE_ACTIVATE, POP_FROM_BACKOFF_Q
from ....framework.interface import ClusterEvent
from ....framework.podgroups import entity_key
from ....framework.types import QueuedPodInfo
from ..heap import Heap, KeyedHeap


@dataclass(frozen=True)
class InFlightEvent:
    """A cluster event received while some pod was in flight (upstream ``clusterEvent``)."""

    event: ClusterEvent
    old_obj: Any = None
    new_obj: Any = None


class BackoffQPopper(Protocol):
    """Upstream ``backoffQPopper``: what activeQ pops from when it is empty (SchedulerPopFromBackoffQ)."""

    def pop_backoff(self) -> QueuedPodInfo | None: ...


class ActiveQueue:
    """Upstream ``activeQueue``: the activeQ heap, the in-flight pods and events, the scheduling cycle.

    ``queue`` is a :class:`~fastsched.scheduler.backend.heap.Heap` (or ``KeyedHeap``) keyed by pod
    UID; ``backoff_q_popper`` is given when SchedulerPopFromBackoffQ is on; ``record(queue, event)``
    counts the queue's incoming pods.
    """

    __slots__ = ("queue", "_backoff_q_popper", "_record", "_seq", "_in_flight", "_in_flight_pods",
                 "_in_flight_events", "_force_activated", "_sched_cycle", "last_in_flight_seq")

    def __init__(self, queue: Heap | KeyedHeap, record: Callable[[str, str], None],
                 backoff_q_popper: BackoffQPopper | None = None):
        self.queue = queue
        self._backoff_q_popper = backoff_q_popper
        self._record = record
        # in-flight pods and the events received since each was popped
        self._seq = itertools.count()
        self._in_flight: dict[str, int] = {}          # uid -> sequence number at pop
        self._in_flight_pods: dict[str, Pod] = {}
        self._in_flight_events: deque[tuple[int, InFlightEvent]] = deque()
        #: uid -> the pod as activated, for in-flight pods that got a ForceActivate event. Kept per
        #: pod, not in the event list: the event concerns that pod only (see
        #: PriorityQueue._is_pod_worth_requeuing) and GangScheduling's Permit activates every other
        #: member of a gang whose members are all in flight, N^2 events for a gang of N (12.5 M for
        #: scheduler_perf's gangs of 5,000) where one mark per pod answers the same
        self._force_activated: dict[str, Pod] = {}
        self._sched_cycle = 0
        #: the sequence number of the last pod that went in flight: changes whenever a pod joins the
        #: in-flight set (what PriorityQueue.activate's per-group memo is keyed by)
        self.last_in_flight_seq = -1

    # -- the heap ----------------------------------------------------------------------------------
    def add(self, pinfo: QueuedPodInfo, event: str) -> None:
        self.queue.add_or_update(entity_key(pinfo), pinfo)
        self._record("active", event)

    def add_pods(self, pinfos: list[QueuedPodInfo], event: str, record: bool = True) -> None:
        """:meth:`add` of each of ``pinfos`` (pods, not pod group entities), in order: one heap
        call for them all, the incoming-pods count recorded for each (``record=False``: the
        caller knows the recorder counts nothing)."""
        self.queue.add_or_update_many([(p.pod.uid, p) for p in pinfos])
        if record:
            for _ in pinfos:
                self._record("active", event)

    def update(self, uid: str, new_pod: Pod) -> QueuedPodInfo | None:
        """Update the pod in place if it is here; returns its QueuedPodInfo, else None."""
        pinfo = self.queue.get(uid)
        if pinfo is not None:
            pinfo.pod_info.update(new_pod)
            self.queue.fix(uid)
        return pinfo

    def delete(self, uid: str) -> QueuedPodInfo | None:
        return self.queue.delete(uid)

    def get(self, uid: str) -> QueuedPodInfo | None:
        return self.queue.get(uid)

    def __contains__(self, uid: object) -> bool:
        return uid in self.queue

    def __len__(self) -> int:
        return len(self.queue)

    def list(self) -> list[Pod]:
        """The pods, in pop order."""
        return [p.pod for p in self.queue.values()]

    def raw_values(self) -> Iterator[QueuedPodInfo]:
        return self.queue.raw_values()

    def pop(self) -> QueuedPodInfo | None:
        """Take the head of activeQ, or of the backoff popper when activeQ is empty.

        Increments ``attempts`` and the scheduling cycle, marks the pod in flight and clears its
        rejector plugins for the next attempt. A pod already in flight is discarded and the next
        one popped. Returns None when there is nothing to pop (upstream blocks instead).
        """
        while True:
            pinfo = self.queue.pop()
            if pinfo is None:
                if self._backoff_q_popper is None:
                    return None
                pinfo = self._backoff_q_popper.pop_backoff()
                if pinfo is None:
                    return None
                self._record("active", POP_FROM_BACKOFF_Q)
            if pinfo.pod is None:  # a pod group entity (GenericWorkload)
                if self._group_to_in_flight(pinfo):
                    return pinfo
                continue
            pinfo.attempts += 1
            pinfo.backoff_expiration = None
            pod = pinfo.pod_info.pod
            uid = pod.uid
            if uid in self._in_flight:
                # The same pod is tracked twice: discard this copy and pop the next one.
                continue
            self._in_flight[uid] = self.last_in_flight_seq = next(self._seq)
            self._in_flight_pods[uid] = pod
            self._sched_cycle += 1
            if pinfo.unschedulable_plugins:
                pinfo.unschedulable_plugins.clear()
            if pinfo.pending_plugins:
                pinfo.pending_plugins.clear()
            return pinfo

    def _group_to_in_flight(self, entity: Any) -> bool:
        """``unlockedMoveEntityToInFlight`` for a pod group: attempts counted (the group's and each
        member's), every member in flight (a member in flight already is dropped from the entity;
        none left: the entity is discarded), one scheduling cycle."""
        entity.inc_attempts()
        entity.backoff_expiration = None
        entity.held = None  # (the pop clears the members' rejector plugins: the PreEnqueue memo goes)
        for member in [m for m in entity.members if m.pod.uid in self._in_flight]:
            entity.remove_pod(member.pod)
        if not entity.members:
            return False
        for member in entity.members:
            pod = member.pod_info.pod
            self._in_flight[pod.uid] = self.last_in_flight_seq = next(self._seq)
            self._in_flight_pods[pod.uid] = pod
            if member.unschedulable_plugins:
                member.unschedulable_plugins.clear()
            if member.pending_plugins:
                member.pending_plugins.clear()
        entity.members_with_pending = 0
        self._sched_cycle += 1
        return True

    # -- in flight ---------------------------------------------------------------------------------
    def scheduling_cycle(self) -> int:
        """The number of pods popped so far."""
        return self._sched_cycle

    def done(self, uid: str) -> None:
        """The pod's scheduling attempt is over: stop recording events for it. (Inlined for the
        last pod in flight in ``_kernels/_bind.pyx``, the compiled binding path's commit.)"""
        if self._in_flight.pop(uid, None) is None:
            return
        self._in_flight_pods.pop(uid, None)
        if self._force_activated:
            self._force_activated.pop(uid, None)
        if not self._in_flight:
            self._in_flight_events.clear()
            return
        # Events older than the oldest pod still in flight are no longer needed.
        oldest = next(iter(self._in_flight.values()))
        events = self._in_flight_events
        while events and events[0][0] < oldest:
            events.popleft()

    def in_flight(self, uid: str) -> bool:
        return uid in self._in_flight

    def in_flight_pods(self) -> builtins.list[Pod]:  # (``list`` is the method above)
        return list(self._in_flight_pods.values())

    def in_flight_events(self) -> builtins.list[InFlightEvent]:
        """The events recorded for the pods in flight, in order (ForceActivate events, kept per
        pod, are in :meth:`cluster_events_for_pod`)."""
        return [e for _, e in self._in_flight_events]

    def cluster_events_for_pod(self, pinfo: QueuedPodInfo) -> builtins.list[InFlightEvent] | None:
        """The events received since the pod was popped, then its ForceActivate event if it got
        one (the requeue decision takes the strongest answer over the events, so their order does
        not matter); None when it is not in flight."""
        uid = pinfo.pod.uid
        seq = self._in_flight.get(uid)
        if seq is None:
            return None
        events = [e for s, e in self._in_flight_events if s > seq]
        forced = self._force_activated.get(uid)
        if forced is not None:
            events.append(InFlightEvent(EVENT_FORCE_ACTIVATE, None, forced))
        return events

    def add_events_if_pod_in_flight(self, old_pod: Pod | None, new_pod: Pod,
                                    events: Iterable[ClusterEvent]) -> bool:
        """Record ``events`` if ``new_pod`` is in flight; whether it is."""
        if new_pod.uid not in self._in_flight:
            return False
        for event in events:
            self._in_flight_events.append((next(self._seq), InFlightEvent(event, old_pod, new_pod)))
        return True

    def force_activated(self, pod: Pod) -> bool:
        """A ForceActivate event for ``pod`` if it is in flight (kept per pod: see
        ``_force_activated``); whether it is."""
        uid = pod.uid
        if uid not in self._in_flight:
            return False
        self._force_activated[uid] = pod
        return True

    def add_event_if_any_in_flight(self, old_obj: Any, new_obj: Any, event: ClusterEvent) -> bool:
        """Record ``event`` if any pod is in flight; whether one is."""
        if not self._in_flight:
            return False
        self._in_flight_events.append((next(self._seq), InFlightEvent(event, old_obj, new_obj)))
        return True
