"""The scheduling queue (upstream ``pkg/scheduler/backend/queue``, v1.34), file by file:

- :mod:`.scheduling_queue`: ``scheduling_queue.go``: :class:`PriorityQueue` (with
  unschedulablePods, the queueing hints, PreEnqueue), its constants and :class:`QueueError`;
- :mod:`.active_queue`: ``active_queue.go``: activeQ and the in-flight pods and events;
- :mod:`.backoff_queue`: ``backoff_queue.go``: podBackoffQ and podErrorBackoffQ, the backoff rules;
- :mod:`.nominator`: ``nominator.go``: the pods nominated to nodes.

The heap they use is :mod:`fastsched.scheduler.backend.heap`; the cluster events are in
:mod:`fastsched.framework.events`.
"""
from .active_queue import ActiveQueue, InFlightEvent
from .backoff_queue import BACKOFF_Q_ORDERING_WINDOW, BackoffQueue
from .nominator import Nominator, PodLister, nominating_mode
from .scheduling_queue import (ACTIVE_Q, BACKOFF_FLUSH_PERIOD, BACKOFF_Q, DEFAULT_POD_INITIAL_BACKOFF,
                               DEFAULT_POD_MAX_BACKOFF, DEFAULT_POD_MAX_IN_UNSCHEDULABLE_PODS_DURATION,
                               PRE_ENQUEUE, QUEUE_AFTER_BACKOFF, QUEUE_IMMEDIATELY,
                               QUEUE_SKIP, UNSCHEDULABLE_FLUSH_PERIOD, UNSCHEDULABLE_Q, PriorityQueue, QueueError,
                               UnschedulablePods)

__all__ = ["ACTIVE_Q", "BACKOFF_FLUSH_PERIOD", "BACKOFF_Q", "BACKOFF_Q_ORDERING_WINDOW", "DEFAULT_POD_INITIAL_BACKOFF",
           "DEFAULT_POD_MAX_BACKOFF", "DEFAULT_POD_MAX_IN_UNSCHEDULABLE_PODS_DURATION",
           "PRE_ENQUEUE", "QUEUE_AFTER_BACKOFF", "QUEUE_IMMEDIATELY", "QUEUE_SKIP", "UNSCHEDULABLE_FLUSH_PERIOD",
           "UNSCHEDULABLE_Q", "ActiveQueue", "BackoffQueue", "InFlightEvent", "Nominator", "PodLister",
           "PriorityQueue", "QueueError", "UnschedulablePods", "nominating_mode"]
