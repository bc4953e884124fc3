"""Forks and transactions of a Scheduler with pods waiting at Permit.

A pod waiting at Permit has a timer on the clock per waiting plugin; a fork (and a transaction's
saved state) copies the clock with its timers. The timer's callback was a closure over the
original ``WaitingPodImpl``, which the fork's copier shares (functions are atomic): when the fork's
timer fired it rejected the original's waiting pod, and the fork's own waited forever: its
``run()`` returned with the pod ``Waiting`` at Permit, assumed on its node, and every later
``run()`` too (found by the interleaved-operations hunt, test_interleaved_ops.py). After a
transaction's revert the same: the restored state's timer rejected the discarded pod.
"""
from __future__ import annotations

from fastsched import Scheduler
from fastsched.framework import Code, Status
from fastsched.runtime import Registry
from fastsched.scheduler.result import SCHEDULED, UNSCHEDULABLE, WAITING
from fastsched.testing import config_enabling, make_node, make_pod

NAME = "Waits"
TIMEOUT = 10.0
TIMED_OUT = f"0/1 nodes are available: 1 rejected due to timeout after waiting 10s at plugin {NAME}."


class Waits:
    """Permit: a pod named wait-<seconds>-<i> waits that long (never allowed: the wait times out,
    unless a test allows it)."""

    def __init__(self, args, handle):
        pass

    def name(self):
        return NAME

    def permit(self, state, pod, node_name):
        if pod.name.startswith("wait-"):
            return Status(Code.WAIT), float(pod.name.split("-")[1])
        return None, 0


def _waiting_scheduler() -> Scheduler:
    """One pod waiting at Permit (its timer due at 10 s), one bound."""
    s = Scheduler(config_enabling(NAME, "permit"), registry=Registry({NAME: Waits}), seed=0)
    s.add_nodes([make_node("n0", cpu="4")])
    s.add_pods([make_pod(f"wait-{TIMEOUT:g}-0", cpu="100m"), make_pod("p", cpu="100m")])
    s.run(until=1)
    assert [r.status for r in s.pod_results()] == [WAITING, SCHEDULED] and len(s._waiting) == 1
    return s


def _settled(s: Scheduler) -> None:
    """Both pods end as in a scheduler never forked: the wait times out at 10 s, every retry too."""
    waiting, bound = s.run()
    assert (waiting.status, waiting.message) == (UNSCHEDULABLE, TIMED_OUT)
    assert waiting.attempts == s.permit_wait_retries
    assert bound.status == SCHEDULED
    assert not s._waiting and s.cache.pod_count() == 1 and not s.cache.is_assumed_pod(waiting.pod)


def test_a_scheduler_never_forked_times_the_wait_out():
    _settled(_waiting_scheduler())


def test_a_fork_times_out_its_own_waiting_pod_and_leaves_the_original_waiting():
    s = _waiting_scheduler()
    fork = s.fork()
    _settled(fork)
    assert s.pod_results()[0].status == WAITING and len(s._waiting) == 1  # untouched by the fork's timer
    _settled(s)


def test_after_a_transaction_reverts_the_wait_still_times_out():
    s = _waiting_scheduler()
    with s.transaction():
        s.run(until=2)
    _settled(s)
