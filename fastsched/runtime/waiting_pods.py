"""Pods waiting at Permit (upstream ``runtime/waiting_pods_map.go``)."""
from __future__ import annotations

import math
import threading
from functools import lru_cache, partial
from typing import TYPE_CHECKING, Callable

from ..framework.status import Code, Status
from ..framework.types import WaitingPod

if TYPE_CHECKING:  # pragma: no cover
    from ..clock import Timer
    from ..api import Pod


#: a Go time.Duration's range, in nanoseconds (int64)
_DURATION_MIN, _DURATION_MAX = -(2**63), 2**63 - 1


def format_go_duration(seconds: float) -> str:
    """Go's ``time.Duration.String()`` (``10s``, ``1m30s``, ``15m0s``, ``500ms``, ``-5s``); a value
    past a Duration's int64 nanoseconds (``inf`` too) is shown as the nearest Duration."""
    ns = round(seconds * 1e9) if math.isfinite(seconds) else (_DURATION_MAX if seconds > 0 else _DURATION_MIN)
    ns = min(max(ns, _DURATION_MIN), _DURATION_MAX)
    if ns == 0:
        return "0s"
    sign = "-" if ns < 0 else ""
    ns = abs(ns)
    if ns < 1_000_000_000:
        for unit, size in (("ms", 1_000_000), ("µs", 1_000), ("ns", 1)):
            if ns >= size:
                return sign + _trim(ns / size) + unit
    h, rem = divmod(ns, 3600 * 10**9)
    m, rem = divmod(rem, 60 * 10**9)
    s = _trim(rem / 1e9)
    if h:
        return f"{sign}{h}h{m}m{s}s"
    if m:
        return f"{sign}{m}m{s}s"
    return f"{sign}{s}s"


@lru_cache(maxsize=64)
def _timeout_message(plugin: str, wait: float) -> str:
    """A waiting plugin's timeout rejection text (kept: a gang's members wait with the same one)."""
    return f"rejected due to timeout after waiting {format_go_duration(wait)} at plugin {plugin}"


def _trim(x: float) -> str:
    out = f"{x:.9f}".rstrip("0").rstrip(".")
    return out or "0"


class WaitingPodImpl(WaitingPod):
    """A pod held at Permit until every waiting plugin allows it, one rejects it, or a timer fires."""

    def __init__(self, pod: "Pod", plugins_max_wait: dict[str, float], clock):
        self._pod = pod
        self._lock = threading.Lock()
        #: made by the first wait() that finds the pod not signalled yet (most waiting pods are
        #: signalled before anyone waits: a gang's members are allowed together), set by _signal
        self._event: threading.Event | None = None
        self._status: Status | None = None
        self._signalled = False
        self._clock = clock
        self._pending: dict[str, Timer] = {}
        for plugin, wait in plugins_max_wait.items():
            # a bound method, not a closure: a fork or a transaction's saved state copies the
            # clock's timers with this pod, and rebinds a method to the copy (a closure would
            # keep rejecting the original, and the copy would wait forever)
            self._pending[plugin] = clock.after_func(
                wait, partial(self.reject, plugin, _timeout_message(plugin, wait)))

    def get_pod(self) -> "Pod":
        return self._pod

    def get_pending_plugins(self) -> list[str]:
        with self._lock:
            return list(self._pending)

    def _signal(self, status: Status | None) -> None:
        # Only the first signal counts, like upstream's buffered channel of size 1.
        if self._signalled:
            return
        self._signalled = True
        self._status = status
        if self._event is not None:
            self._event.set()
        wake = getattr(self._clock, "wake", None)
        if wake is not None:  # (a real clock's step may be sleeping in wait(), on another thread)
            wake()

    def allow(self, plugin_name: str) -> None:
        with self._lock:
            timer = self._pending.pop(plugin_name, None)
            if timer is not None:
                timer.stop()
            if self._pending:
                return
            self._signal(Status(Code.SUCCESS))

    def reject(self, plugin_name: str, msg: str) -> bool:
        """Declare the pod unschedulable; False when it was already allowed or stopped."""
        return self._stop_with_status(Code.UNSCHEDULABLE, plugin_name, msg)

    def preempt(self, plugin_name: str, msg: str) -> bool:
        """The pod was chosen as a preemption victim (upstream v1.37 ``waitingPod.Preempt``): stop
        it with an Error status, not Unschedulable, so that the binding cycle's failure sends it to
        backoffQ to be scheduled again. False when it was already allowed or stopped: then the
        preemptor deletes it through the API instead."""
        return self._stop_with_status(Code.ERROR, plugin_name, msg)

    def _stop_with_status(self, code: Code, plugin_name: str, msg: str) -> bool:
        """Upstream ``stopWithStatus``: only the first signal counts (``done``)."""
        with self._lock:
            for timer in self._pending.values():
                timer.stop()
            if self._signalled:
                return False
            self._signal(Status(code, msg).with_plugin(plugin_name))
            return True

    @property
    def signalled(self) -> bool:
        return self._signalled

    def result(self) -> Status | None:
        """The signalled status (None while still waiting)."""
        return self._status

    def wait(self) -> Status | None:
        """Block until signalled, stepping the clock's events meanwhile (its Permit timers among
        them): a virtual clock jumps to the next event, a real one sleeps until it."""
        with self._lock:
            if self._signalled:
                return self._status
            if self._event is None:
                self._event = threading.Event()
            event = self._event
        while not event.is_set():
            if not self._clock.step():
                event.wait(0.05)
        return self._status


class WaitingPodsMap:
    """The waiting pods of a framework, by pod UID."""

    def __init__(self) -> None:
        self._pods: dict[str, WaitingPodImpl] = {}
        self._lock = threading.RLock()

    def add(self, wp: WaitingPodImpl) -> None:
        with self._lock:
            self._pods[wp.get_pod().uid] = wp

    def remove(self, uid: str) -> None:
        with self._lock:
            self._pods.pop(uid, None)

    def get(self, uid: str) -> WaitingPodImpl | None:
        # one dict lookup, atomic as it is: the lock guards the multi-step operations only
        return self._pods.get(uid)

    def iterate(self, callback: Callable[[WaitingPod], None]) -> None:
        with self._lock:
            pods = list(self._pods.values())
        for wp in pods:
            callback(wp)

    def __len__(self) -> int:
        return len(self._pods)
