"""``run()`` and Permit waits that time out, with many pods: upstream retries a pod rejected at
Permit (unschedulablePods or backoffQ, then the flush) for as long as it runs; ``run()`` without
``until`` retries it ``Scheduler.permit_wait_retries`` times in a row, so a plugin that makes pods
wait N < that many times and then allows them gets every pod bound (it used to stop after two
timeouts, on the rule that settles pods failing twice on an unchanged cluster), and one that
always waits still lets ``run()`` return, every pod named."""
from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fastsched import Scheduler
from fastsched.framework import Code, Status
from fastsched.scheduler.result import SCHEDULED, UNSCHEDULABLE
from fastsched.testing import make_pod
from tests.scheduler.test_loop_termination import scheduler_with

NAME = "Waits"
TIMEOUT = 10.0


class Waits:
    """Permit: Wait (10 s, never allowed: it times out) for the pods of ``waiting``, each
    ``times[pod]`` times (None: always), then Success."""

    def __init__(self, times):
        self.times, self.calls = times, {}

    def name(self):
        return NAME

    def permit(self, state, pod, node_name):
        n = self.calls[pod.name] = self.calls.get(pod.name, 0) + 1
        limit = self.times(pod.name)
        if limit is None or n <= limit:
            return Status(Code.WAIT), TIMEOUT
        return None, 0


def _scheduler(plugin, n_nodes: int, gates=None) -> Scheduler:
    return scheduler_with(plugin, "permit", feature_gates=gates, nodes=n_nodes, cpu="8")


@pytest.mark.parametrize("times", [3, 9])
def test_many_pods_whose_wait_times_out_n_times_then_is_allowed_are_all_bound(times):
    plugin = Waits(lambda name: times)
    s = _scheduler(plugin, 5)
    s.add_pods([make_pod(f"p{i}", cpu="50m") for i in range(60)])
    results = s.run()
    assert [r.status for r in results] == [SCHEDULED] * 60
    assert [r.attempts for r in results] == [times + 1] * 60
    assert set(plugin.calls.values()) == {times + 1}
    assert s.cache.pod_count() == 60 and s.clock.now() == TIMEOUT * times


def test_pods_that_always_wait_end_named_beside_pods_that_are_allowed_late():
    """Half the pods always time out, the others after 3 timeouts: run() returns, the late ones
    bound, the others Unschedulable with the timeout's message after permit_wait_retries attempts,
    none lost, nothing left assumed."""
    plugin = Waits(lambda name: None if int(name[1:]) % 2 else 3)
    s = _scheduler(plugin, 4)
    s.add_pods([make_pod(f"p{i}", cpu="50m") for i in range(60)])
    results = s.run()
    assert len(results) == 60
    for i, r in enumerate(results):
        if i % 2:
            assert r.status == UNSCHEDULABLE and r.attempts == s.permit_wait_retries
            assert r.message == (f"0/1 nodes are available: 1 rejected due to timeout after waiting "
                                 f"10s at plugin {NAME}.")
        else:
            assert r.status == SCHEDULED and r.attempts == 4
    assert s.cache.pod_count() == 30 and not s._waiting
    assert all(not s.cache.is_assumed_pod(r.pod) for r in results)


def test_without_nominations_the_others_releases_bring_rejected_pods_back():
    """Without NominatedNodeNameForExpectation no nomination's clearing requeues a pod rejected at
    Permit; with many pods, each rejected pod's release (upstream handleBindingCycleError's
    AssignedPodDelete for the others) moves those already rejected back, so every round of waits
    starts at once (one pod alone waits for the 5-minute timeout: test_loop_termination)."""
    plugin = Waits(lambda name: 4)
    s = _scheduler(plugin, 3, gates={"NominatedNodeNameForExpectation": False})
    s.add_pods([make_pod(f"p{i}", cpu="50m") for i in range(50)])
    results = s.run()
    assert [r.status for r in results] == [SCHEDULED] * 50
    assert {r.attempts for r in results} == {5}
    assert s.clock.now() == TIMEOUT * 4


@settings(max_examples=3, deadline=None, derandomize=True, database=None,
          suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.one_of(st.none(), st.integers(0, 9)), min_size=50, max_size=70), st.booleans())
def test_each_pod_is_bound_after_its_own_timeouts_or_ends_after_the_retries(waits, nominations):
    """Pod i times out ``waits[i]`` times, then is allowed (None: always waits): whatever the mix,
    run() returns; pod i is bound at attempt waits[i] + 1, or Unschedulable after
    permit_wait_retries attempts, and at most two more (the cluster rule then settles it: two
    failures on one committed cluster, and the others' binds, up to the 10th round, are changes);
    nothing stays assumed or waiting."""
    plugin = Waits(lambda name: waits[int(name[1:])])
    s = _scheduler(plugin, 4, gates={"NominatedNodeNameForExpectation": nominations})
    s.add_pods([make_pod(f"p{i}", cpu="50m") for i in range(len(waits))])
    results = s.run()
    assert len(results) == len(waits)
    for k, r in zip(waits, results):
        if k is None:
            assert r.status == UNSCHEDULABLE
            assert s.permit_wait_retries <= r.attempts <= s.permit_wait_retries + 2
        else:
            assert (r.status, r.attempts) == (SCHEDULED, k + 1)
    assert s.cache.pod_count() == sum(k is not None for k in waits) and not s._waiting


class WaitsNegative:
    """Permit: Wait with a negative timeout for the odd pods, Success for the others."""

    def name(self):
        return NAME

    def permit(self, state, pod, node_name):
        return (Status(Code.WAIT), -5) if int(pod.name[1:]) % 2 else (None, 0)


def test_many_pods_waiting_with_a_negative_timeout_are_rejected_by_the_timeout():
    """A negative Permit timeout fires at once (upstream's time.AfterFunc): with many pods, each
    waiting pod is rejected by the timeout in upstream's words, retried like any Permit
    rejection, and never reported as an Error; the others bind and nothing stays assumed."""
    s = _scheduler(WaitsNegative(), 4)
    s.add_pods([make_pod(f"p{i}", cpu="50m") for i in range(60)])
    results = s.run()
    assert len(results) == 60
    for i, r in enumerate(results):
        if i % 2:
            assert r.status == UNSCHEDULABLE and r.attempts == s.permit_wait_retries
            assert r.message == (f"0/1 nodes are available: 1 rejected due to timeout after waiting "
                                 f"-5s at plugin {NAME}.")
        else:
            assert r.status == SCHEDULED
    assert s.metrics.attempts["error"] == 0
    assert s.cache.pod_count() == 30 and not s._waiting
    assert all(not s.cache.is_assumed_pod(r.pod) for r in results)


class WaitsNoTime:
    """Permit: Wait with a timeout of ``timeout`` (0 or less: rejected at once) for every pod."""

    def __init__(self, timeout):
        self.timeout, self.calls = timeout, 0

    def name(self):
        return NAME

    def permit(self, state, pod, node_name):
        self.calls += 1
        assert self.calls < 5000, "run(until) spins at one virtual instant"
        return Status(Code.WAIT), self.timeout


@pytest.mark.parametrize("timeout", [0, -5, 0.0])
def test_run_until_with_waits_of_no_time_reaches_until(timeout):
    """A wait rejected at once requeues its pod at once (its nomination's clearing): upstream
    retries it as fast as its cycles run; ``run(until)`` on the virtual clock looped at t=0 for
    ever (memory growing), with a timeout of 0 already on main. Now each pod is parked after two
    such failures at one instant and retried at the unschedulable timeout's flushes."""
    plugin = WaitsNoTime(timeout)
    s = _scheduler(plugin, 4)
    s.add_pods([make_pod(f"p{i}", cpu="50m") for i in range(50)])
    results = s.run(until=100)
    assert s.clock.now() == 100
    assert [r.status for r in results] == [UNSCHEDULABLE] * 50
    assert {r.attempts for r in results} == {2}
    shown = "0s" if timeout == 0 else "-5s"
    assert {r.message for r in results} == {f"0/1 nodes are available: 1 rejected due to timeout after waiting "
                                            f"{shown} at plugin {NAME}."}
    results = s.run(until=700)  # the flushes at 5 and 10 minutes: two attempts each time
    assert {r.attempts for r in results} == {6}
    assert s.cache.pod_count() == 0 and not s._waiting
