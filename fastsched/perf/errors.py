"""WorkloadError: the error of a scheduler_perf workload that cannot run to its end.

It sits below both the executor (:mod:`fastsched.perf.runner`) and its op handlers
(:mod:`fastsched.perf.ops`), which both raise it; the runner imports the ops, so the error cannot
live in either without an import cycle. ``fastsched.perf`` and ``fastsched.perf.runner``
re-export it.
"""
from __future__ import annotations

from ..errors import FastschedError

__all__ = ["WorkloadError"]


class WorkloadError(FastschedError):
    """A workload that cannot run to its end (upstream: the benchmark fails)."""
