"""The scheduler's backend (upstream ``pkg/scheduler/backend``): the heap and the scheduling queue.

- :mod:`.heap`: upstream ``backend/heap/heap.go``;
- :mod:`.queue`: upstream ``backend/queue`` (``scheduling_queue.go``, ``active_queue.go``,
  ``backoff_queue.go``, ``nominator.go``).

The cache (upstream ``backend/cache``) is :mod:`fastsched.scheduler.cache`.
"""
