"""Clocks: virtual time for simulations (nothing ever sleeps), real time on request.

Both offer ``now()`` (seconds), ``after_func(delay, fn)`` (a one-shot timer with ``stop()``) and
``sleep(seconds)``. :class:`VirtualClock` fires timers only when time is advanced, in deadline order
(ties in creation order), on the thread that advances it.
"""
from __future__ import annotations

import heapq
import itertools
import threading
import time
from typing import Callable


class Timer:
    """A one-shot timer; ``stop()`` returns True when it prevented the call."""

    __slots__ = ("deadline", "_fn", "_stopped", "_fired", "_thread_timer")

    def __init__(self, deadline: float, fn: Callable[[], None]):
        self.deadline = deadline
        self._fn = fn
        self._stopped = False
        self._fired = False
        self._thread_timer: threading.Timer | None = None

    def stop(self) -> bool:
        if self._stopped or self._fired:
            return False
        self._stopped = True
        if self._thread_timer is not None:
            self._thread_timer.cancel()
        return True

    @property
    def active(self) -> bool:
        return not (self._stopped or self._fired)

    def _fire(self) -> None:
        if self._stopped or self._fired:
            return
        self._fired = True
        self._fn()


class RealClock:
    """Wall-clock time; timers run on background threads."""

    virtual = False

    def now(self) -> float:
        return time.time()

    def monotonic(self) -> float:
        return time.monotonic()

    def sleep(self, seconds: float) -> None:
        if seconds > 0:
            time.sleep(seconds)

    def after_func(self, delay: float, fn: Callable[[], None]) -> Timer:
        t = Timer(self.now() + delay, fn)
        th = threading.Timer(max(delay, 0.0), t._fire)
        th.daemon = True
        t._thread_timer = th
        th.start()
        return t

    def next_deadline(self) -> float | None:
        return None

    def advance_to_next_timer(self) -> bool:
        return False


class VirtualClock:
    """Simulated time starting at ``start`` seconds; advanced only by :meth:`advance`/``sleep``."""

    virtual = True

    def __init__(self, start: float = 0.0):
        self._now = float(start)
        self._timers: list[tuple[float, int, Timer]] = []
        self._seq = itertools.count()
        self._lock = threading.RLock()

    def now(self) -> float:
        return self._now

    monotonic = now

    def after_func(self, delay: float, fn: Callable[[], None]) -> Timer:
        with self._lock:
            t = Timer(self._now + max(delay, 0.0), fn)
            heapq.heappush(self._timers, (t.deadline, next(self._seq), t))
            return t

    def next_deadline(self) -> float | None:
        """The deadline of the earliest active timer, or None."""
        with self._lock:
            while self._timers and not self._timers[0][2].active:
                heapq.heappop(self._timers)
            return self._timers[0][0] if self._timers else None

    def advance_to(self, when: float) -> None:
        """Move time to ``when`` (never backwards), firing every timer due by then, in order."""
        while True:
            with self._lock:
                if self._timers and self._timers[0][0] <= when:
                    deadline, _, t = heapq.heappop(self._timers)
                    if not t.active:
                        continue
                    self._now = max(self._now, deadline)
                else:
                    self._now = max(self._now, when)
                    return
            t._fire()  # outside the lock: callbacks may schedule timers

    def advance(self, seconds: float) -> None:
        self.advance_to(self._now + seconds)

    def sleep(self, seconds: float) -> None:
        if seconds > 0:
            self.advance(seconds)

    def advance_to_next_timer(self) -> bool:
        """Advance to the earliest active timer and fire it; False when there is none."""
        d = self.next_deadline()
        if d is None:
            return False
        self.advance_to(d)
        return True
