"""``run()``'s arguments: ``until`` NaN or infinite looped for ever (NaN compares False with every
event time; an infinite horizon retries pods that keep failing every five virtual minutes, as
upstream retries them, for ever); a string failed deep in the loop
(``'>' not supported between instances of 'float' and 'str'``); ``max_attempts=0`` (or a
negative bound) still made one attempt. Now ``until`` must be a finite number and
``max_attempts`` a non-negative integer (0: no attempt), refused at the call otherwise."""
from __future__ import annotations

import math
import signal

import numpy as np
import pytest

from fastsched import Scheduler
from fastsched.testing import make_node, make_pod


def _scheduler() -> Scheduler:
    s = Scheduler()
    s.add_nodes([make_node("n0", cpu="2")])
    s.add_pods([make_pod(f"p{i}", cpu="1") for i in range(4)])  # two never fit: retried for ever
    return s


class _Hang(BaseException):
    pass


def _raise_hang(signum, frame):
    raise _Hang


@pytest.fixture
def alarm():
    previous = signal.signal(signal.SIGALRM, _raise_hang)
    signal.alarm(20)
    yield
    signal.alarm(0)
    signal.signal(signal.SIGALRM, previous)


@pytest.mark.parametrize("until", [math.nan, math.inf, -math.inf, np.float64("nan")])
def test_a_non_finite_until_is_refused(until, alarm):
    s = _scheduler()
    with pytest.raises(ValueError, match=r"^run\(until=.*\): must be a finite number of seconds"):
        s.run(until=until)
    assert s.clock.now() == 0 and all(r.status == "Pending" for r in s.pod_results())


@pytest.mark.parametrize("until", ["5", [5], object()])
def test_an_until_that_is_no_number_is_refused(until):
    with pytest.raises(TypeError, match=r"^run\(until=.*\): must be a number of seconds"):
        _scheduler().run(until=until)


@pytest.mark.parametrize("max_attempts", [-1, 1.5, "2"])
def test_a_bad_max_attempts_is_refused(max_attempts):
    with pytest.raises((TypeError, ValueError), match=r"^run\(max_attempts=.*\): must be a non-negative integer"):
        _scheduler().run(max_attempts=max_attempts)


def test_max_attempts_zero_makes_no_attempt():
    s = _scheduler()
    assert [r.status for r in s.run(max_attempts=0)] == ["Pending"] * 4
    assert [r.status for r in s.run(max_attempts=1)] == ["Scheduled", "Pending", "Pending", "Pending"]


@pytest.mark.parametrize("until", [600, 600.0, np.float64(600.0), np.int64(600)])
def test_finite_numbers_run_as_before(until):
    s = _scheduler()
    statuses = [r.status for r in s.run(until=until)]
    assert statuses == ["Scheduled", "Scheduled", "Unschedulable", "Unschedulable"] and s.clock.now() == 600
