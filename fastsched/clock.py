"""Time for the scheduler: one discrete-event core, in virtual or in real time.

Everything that happens at a time of its own is an event on the scheduler's clock, in one heap (as
SimPy keeps all of time in one heap): backoff completions and the unschedulable-pods flush (the
queue's timer), Permit timeouts, a simulation's pod completions, scenario events and report
samples. Both clocks offer the same core:

* ``schedule(at, callback, priority=0)`` -> :class:`Timer` (``stop()`` cancels it);
  ``after_func(delay, callback)`` is ``schedule(now + delay, callback)``;
* ``peek()``: the time of the earliest pending event, or None;
* ``step()``: move time to that event and run it (a :class:`VirtualClock` jumps, a
  :class:`RealClock` sleeps until then); False when nothing is pending;
* ``run(until)``: step until nothing is pending or the next event is later than ``until``.

**Order.** Events run by time; at equal times by ``priority`` (lower first; see the ``PRIORITY_*``
constants), then in the order they were scheduled. A callback may schedule more events, at the
current time too: they run in the same ``step``-sequence, after those already due. Time never
moves backwards: an event scheduled in the past runs at the current time.

**Threads.** Callbacks always run on the thread that steps the clock (the scheduler's thread),
never on a timer thread, so virtual and real time run the same code.
"""
from __future__ import annotations

import heapq
import itertools
import threading
import time
from typing import Callable

__all__ = ["Timer", "VirtualClock", "RealClock", "PRIORITY_CLUSTER", "PRIORITY_TIMEOUT", "PRIORITY_QUEUE",
           "PRIORITY_SAMPLE"]

#: Changes to the cluster (pod completions, scenario events) run first at a given time...
PRIORITY_CLUSTER = 0
#: ...then timeouts (Permit)...
PRIORITY_TIMEOUT = 10
#: ...then the scheduling queue's flushes (backoff completions, unschedulable pods' timeout), so a
#: pod retried at time t sees every change made at t...
PRIORITY_QUEUE = 20
#: ...and observations (report samples) last.
PRIORITY_SAMPLE = 30


class Timer:
    """A scheduled event; ``stop()`` returns True when it prevented the call."""

    __slots__ = ("deadline", "priority", "_fn", "_stopped", "_fired")

    def __init__(self, deadline: float, fn: Callable[[], None], priority: int = 0):
        self.deadline = deadline
        self.priority = priority
        self._fn = fn
        self._stopped = False
        self._fired = False

    def stop(self) -> bool:
        if self._stopped or self._fired:
            return False
        self._stopped = True
        return True

    @property
    def active(self) -> bool:
        return not (self._stopped or self._fired)

    def _fire(self) -> None:
        if self._stopped or self._fired:
            return
        self._fired = True
        self._fn()


class _EventCore:
    """The heap of events shared by both clocks; subclasses say what time is and how to wait."""

    virtual: bool

    def __init__(self) -> None:
        self._events: list[tuple[float, int, int, Timer]] = []
        self._seq = itertools.count()
        self._lock = threading.RLock()

    # -- time, for subclasses ---------------------------------------------------------------------
    def now(self) -> float:  # pragma: no cover - abstract
        raise NotImplementedError

    def _wait_until(self, when: float) -> None:  # pragma: no cover - abstract
        raise NotImplementedError

    # -- the core ---------------------------------------------------------------------------------
    def schedule(self, at: float, fn: Callable[[], None], priority: int = 0) -> Timer:
        """Run ``fn`` at time ``at`` (at once if ``at`` is past, when the clock is next stepped)."""
        with self._lock:
            timer = Timer(max(float(at), self.now()), fn, priority)
            earliest = not self._events or timer.deadline < self._events[0][0]
            heapq.heappush(self._events, (timer.deadline, priority, next(self._seq), timer))
        if earliest and not self.virtual:
            self.wake()  # (a sleeper waiting for a later event: this one comes first)
        return timer

    def after_func(self, delay: float, fn: Callable[[], None], priority: int = 0) -> Timer:
        """``schedule(now() + delay, fn)`` (Go's ``time.AfterFunc``)."""
        return self.schedule(self.now() + max(delay, 0.0), fn, priority)

    def peek(self) -> float | None:
        """The time of the earliest pending event, or None."""
        with self._lock:
            while self._events and not self._events[0][3].active:
                heapq.heappop(self._events)
            return self._events[0][0] if self._events else None

    next_deadline = peek

    def pending(self) -> int:
        """How many events are pending (stopped ones excluded)."""
        with self._lock:
            return sum(1 for event in self._events if event[3].active)

    def step(self) -> bool:
        """Move time to the earliest pending event and run it; False when there is none."""
        with self._lock:
            while self._events and not self._events[0][3].active:
                heapq.heappop(self._events)
            if not self._events:
                return False
            deadline = self._events[0][0]
        self._wait_until(deadline)
        with self._lock:
            if (not self._events or self._events[0][0] > deadline or not self._events[0][3].active
                    or deadline > self.now()):
                # cancelled meanwhile, or (a real clock) woken before the deadline: nothing to
                # run, time moved
                return True
            timer = heapq.heappop(self._events)[3]
        timer._fire()  # outside the lock: callbacks schedule events
        return True

    advance_to_next_timer = step

    def wake(self) -> None:
        """Cut short a real clock's sleep in :meth:`step` (its caller then sees whatever woke it:
        a waiting pod allowed from another thread, an earlier event). Nothing on a virtual clock."""

    def run(self, until: float | None = None) -> None:
        """Step until nothing is pending or the next event is later than ``until``; a virtual
        clock then stands at ``until``."""
        while True:
            upcoming = self.peek()
            if upcoming is None or (until is not None and upcoming > until):
                break
            self.step()
        if until is not None and self.virtual and until > self.now():
            self._wait_until(until)


class VirtualClock(_EventCore):
    """Simulated time starting at ``start`` seconds: nothing sleeps, time jumps to the next event."""

    virtual = True

    def __init__(self, start: float = 0.0):
        super().__init__()
        self._now = float(start)

    def now(self) -> float:
        return self._now

    monotonic = now

    def _wait_until(self, when: float) -> None:
        if when > self._now:
            self._now = when

    def advance_to(self, when: float) -> None:
        """Move time to ``when`` (never backwards), running every event due by then, in order."""
        self.run(when)
        self._wait_until(when)

    def advance(self, seconds: float) -> None:
        self.advance_to(self._now + seconds)

    def sleep(self, seconds: float) -> None:
        if seconds > 0:
            self.advance(seconds)


class RealClock(_EventCore):
    """Wall-clock time: stepping sleeps until the next event is due, then runs it on the calling
    thread."""

    virtual = False

    def now(self) -> float:
        return time.time()

    def monotonic(self) -> float:
        return time.monotonic()

    def __init__(self) -> None:
        super().__init__()
        self._cond = threading.Condition(threading.Lock())
        self._woken = False

    def _wait_until(self, when: float) -> None:
        """Sleep until ``when``, or until :meth:`wake` (also one that came while nobody slept)."""
        with self._cond:
            delay = when - time.time()
            if delay > 0 and not self._woken:
                self._cond.wait(delay)
            self._woken = False

    def wake(self) -> None:
        with self._cond:
            self._woken = True
            self._cond.notify_all()

    def advance_to(self, when: float) -> None:
        """Run every event due by ``when``, sleeping between them and until ``when``."""
        self.run(when)
        while when > time.time():
            self._wait_until(when)
            self.run(when)

    def sleep(self, seconds: float) -> None:
        if seconds > 0:
            self.advance_to(self.now() + seconds)
