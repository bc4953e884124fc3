"""WaitingPodImpl: a pod held at Permit (upstream ``waiting_pods_map.go``). Its Event is made only
by a wait() that finds it not yet signalled; these check that a wait returns the signalled status
in each order of events."""
from __future__ import annotations

import threading

from fastsched.clock import VirtualClock
from fastsched.framework.status import Code
from fastsched.runtime.waiting_pods import WaitingPodImpl
from fastsched.testing import make_pod


def test_allowed_before_the_wait_returns_success_at_once():
    wp = WaitingPodImpl(make_pod("p"), {"A": 10.0, "B": 20.0}, VirtualClock())
    wp.allow("A")
    assert not wp.signalled and wp.get_pending_plugins() == ["B"]
    wp.allow("B")
    assert wp.signalled and wp._event is None  # nobody waited: no Event was made
    st = wp.wait()
    assert st is not None and st.code() == Code.SUCCESS


def test_a_wait_before_any_signal_runs_the_clock_to_the_timeout():
    clock = VirtualClock()
    wp = WaitingPodImpl(make_pod("p"), {"A": 300.0}, clock)
    out: list = []
    waiter = threading.Thread(target=lambda: out.append(wp.wait()), daemon=True)  # (a lost signal hangs)
    waiter.start()
    waiter.join(5.0)
    assert out, "the wait did not return after its timer fired"
    st = out[0]
    assert st.code() == Code.UNSCHEDULABLE and st.plugin() == "A"
    assert st.message() == "rejected due to timeout after waiting 5m0s at plugin A"
    assert clock.now() == 300.0
    assert not wp.reject("A", "again")  # only the first signal counts


def test_a_signal_from_another_thread_wakes_a_waiting_pod():
    """A wait with no clock event to run sleeps on the Event; an allow from another thread sets it
    (a pod with no timer left: the clock has nothing to step)."""
    wp = WaitingPodImpl(make_pod("p"), {}, VirtualClock())
    out: list = []
    waiter = threading.Thread(target=lambda: out.append(wp.wait()), daemon=True)
    waiter.start()
    while wp._event is None and waiter.is_alive():  # until the wait has made its Event
        threading.Event().wait(0.01)
    assert not wp.signalled
    wp.allow("A")
    waiter.join(5.0)
    assert not waiter.is_alive() and out and out[0].code() == Code.SUCCESS
