"""The scheduling queue's former single module, kept for its importers.

The queue now follows upstream's files:

- :mod:`fastsched.scheduler.backend.queue.scheduling_queue` (``scheduling_queue.go``):
  ``PriorityQueue``, unschedulablePods, the queueing hints, the constants, ``QueueError``;
- :mod:`fastsched.scheduler.backend.queue.active_queue` (``active_queue.go``): activeQ, the
  in-flight pods and events (``InFlightEvent``);
- :mod:`fastsched.scheduler.backend.queue.backoff_queue` (``backoff_queue.go``): the backoff heaps
  and rules;
- :mod:`fastsched.scheduler.backend.queue.nominator` (``nominator.go``);
- :mod:`fastsched.scheduler.backend.heap` (``backend/heap/heap.go``);
- :mod:`fastsched.framework.events` (``framework/events.go``): the ``EVENT_*`` events, the special
  event labels, ``event_label``, ``match_cluster_events`` and the other event helpers.
"""
from ..framework.events import (BACKOFF_COMPLETE, EVENT_ASSIGNED_POD_ADD, EVENT_ASSIGNED_POD_DELETE,
                                EVENT_ASSIGNED_POD_UPDATE, EVENT_FORCE_ACTIVATE, EVENT_UNSCHEDULABLE_TIMEOUT,
                                EVENT_UNSCHEDULED_POD_ADD, EVENT_UNSCHEDULED_POD_DELETE, EVENT_UNSCHEDULED_POD_UPDATE,
                                FORCE_ACTIVATE, POP_FROM_BACKOFF_Q, SCHEDULE_ATTEMPT_FAILURE, UNSCHEDULABLE_TIMEOUT,
                                cluster_event_is_wildcard, event_label, match_any_cluster_event, match_cluster_events,
                                pod_scheduling_properties_change)
from .backend.queue import (ACTIVE_Q, BACKOFF_FLUSH_PERIOD, BACKOFF_Q, BACKOFF_Q_ORDERING_WINDOW,
                            DEFAULT_POD_INITIAL_BACKOFF, DEFAULT_POD_MAX_BACKOFF,
                            DEFAULT_POD_MAX_IN_UNSCHEDULABLE_PODS_DURATION, POD_TOPOLOGY_SPREAD, PRE_ENQUEUE,
                            QUEUE_AFTER_BACKOFF, QUEUE_IMMEDIATELY, QUEUE_SKIP, UNSCHEDULABLE_FLUSH_PERIOD,
                            UNSCHEDULABLE_Q, InFlightEvent, Nominator, PodLister, PriorityQueue, QueueError)

__all__ = ["ACTIVE_Q", "BACKOFF_COMPLETE", "BACKOFF_FLUSH_PERIOD", "BACKOFF_Q", "BACKOFF_Q_ORDERING_WINDOW",
           "DEFAULT_POD_INITIAL_BACKOFF", "DEFAULT_POD_MAX_BACKOFF", "DEFAULT_POD_MAX_IN_UNSCHEDULABLE_PODS_DURATION",
           "EVENT_ASSIGNED_POD_ADD", "EVENT_ASSIGNED_POD_DELETE", "EVENT_ASSIGNED_POD_UPDATE", "EVENT_FORCE_ACTIVATE",
           "EVENT_UNSCHEDULABLE_TIMEOUT", "EVENT_UNSCHEDULED_POD_ADD", "EVENT_UNSCHEDULED_POD_DELETE",
           "EVENT_UNSCHEDULED_POD_UPDATE", "FORCE_ACTIVATE", "POD_TOPOLOGY_SPREAD", "POP_FROM_BACKOFF_Q",
           "PRE_ENQUEUE", "QUEUE_AFTER_BACKOFF", "QUEUE_IMMEDIATELY", "QUEUE_SKIP", "SCHEDULE_ATTEMPT_FAILURE",
           "UNSCHEDULABLE_FLUSH_PERIOD", "UNSCHEDULABLE_Q", "UNSCHEDULABLE_TIMEOUT", "InFlightEvent", "Nominator",
           "PodLister", "PriorityQueue", "QueueError", "cluster_event_is_wildcard", "event_label",
           "match_any_cluster_event", "match_cluster_events", "pod_scheduling_properties_change"]
