"""Duration metrics per extension point and per plugin (upstream's framework metrics, in memory).

Extension points are always observed; per-plugin durations only in cycles whose CycleState has
``set_record_plugin_metrics(True)`` (upstream samples 10 % of cycles).

Recording is on every scheduling cycle's path (several observations per pod), so it is kept cheap:
each label set is a :class:`DurationSeries` that appends the duration to a C ``array('d')`` and
folds the array into its :class:`DurationStats` every :data:`FOLD_EVERY` observations, or when the
stats are read. Folding adds the durations one by one in the order they were observed, so count,
total, min and max are exactly what observing them one at a time gives. An append takes no lock:
under the GIL ``array.append`` is atomic, and a fold removes exactly the items it read (under the
recorder's lock), so observations from other threads (the Parallelizer's workers record per-node
plugin durations) are never lost. On a free-threaded build appends take the lock too.
"""
from __future__ import annotations

import functools
import operator
import sys
import threading
from array import array
from dataclasses import dataclass

#: Observations a series buffers before folding them into its stats (bounds its memory).
FOLD_EVERY = 4096

# Whether array.append is atomic with respect to other threads (true under the GIL).
_GIL = getattr(sys, "_is_gil_enabled", lambda: True)()


@dataclass
class DurationStats:
    """Count, sum, min and max of observed durations in seconds."""

    count: int = 0
    total: float = 0.0
    min: float = float("inf")
    max: float = 0.0

    def observe(self, seconds: float) -> None:
        self.count += 1
        self.total += seconds
        if seconds < self.min:
            self.min = seconds
        if seconds > self.max:
            self.max = seconds

    def observe_many(self, durations) -> None:
        """Observe ``durations`` in order: the same result as :meth:`observe` on each in turn."""
        if not durations:
            return
        self.count += len(durations)
        # a left fold, as repeated ``+=`` adds: the same float total, bit for bit
        self.total = functools.reduce(operator.add, durations, self.total)
        low, high = min(durations), max(durations)
        if low < self.min:
            self.min = low
        if high > self.max:
            self.max = high

    @property
    def mean(self) -> float:
        return self.total / self.count if self.count else 0.0

    def as_dict(self) -> dict:
        return {"count": self.count, "total_seconds": self.total, "mean_seconds": self.mean,
                "min_seconds": 0.0 if self.count == 0 else self.min, "max_seconds": self.max}


class DurationSeries:
    """The observations of one label set: pending durations in a C array, folded into ``stats``.

    Get one from :meth:`MetricsRecorder.extension_point_series` or
    :meth:`MetricsRecorder.plugin_series` and call :meth:`observe`; read through the recorder.
    """

    __slots__ = ("stats", "_pending", "_lock")

    def __init__(self, lock: threading.Lock):
        self.stats = DurationStats()
        self._pending = array("d")
        self._lock = lock

    if _GIL:
        def observe(self, seconds: float) -> None:
            """Record one duration in seconds."""
            pending = self._pending
            pending.append(seconds)
            if len(pending) >= FOLD_EVERY:
                with self._lock:
                    self._fold_locked()
    else:  # pragma: no cover - free-threaded builds: appends are not atomic there
        def observe(self, seconds: float) -> None:
            """Record one duration in seconds."""
            with self._lock:
                self._pending.append(seconds)
                if len(self._pending) >= FOLD_EVERY:
                    self._fold_locked()

    def _fold_locked(self) -> None:
        pending = self._pending
        n = len(pending)
        if n:
            # read then delete exactly those n: an append from another thread in between stays
            chunk = pending[:n]
            del pending[:n]
            self.stats.observe_many(chunk)

    def _reset_locked(self) -> None:
        del self._pending[:]
        self.stats = DurationStats()


class MetricsRecorder:
    """Collects ``framework_extension_point_duration`` and ``plugin_execution_duration`` equivalents.

    ``extension_point_duration`` and ``plugin_execution_duration`` map label tuples to
    :class:`DurationStats` (read-only views, current when read); :meth:`snapshot` gives everything
    as JSON-ready dicts.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        # (extension point, status code, profile) -> series
        self._ep: dict[tuple[str, str, str], DurationSeries] = {}
        # (extension point, plugin, status code) -> series
        self._pl: dict[tuple[str, str, str], DurationSeries] = {}

    # -- recording -------------------------------------------------------------------------------
    def extension_point_series(self, point: str, code: str, profile: str) -> DurationSeries:
        """The series of one (extension point, status code, profile): callers on a hot path keep
        it (or its ``observe``) instead of looking the labels up on every observation."""
        s = self._ep.get((point, code, profile))
        if s is None:
            with self._lock:
                s = self._ep.setdefault((point, code, profile), DurationSeries(self._lock))
        return s

    def plugin_series(self, point: str, plugin: str, code: str) -> DurationSeries:
        """The series of one (extension point, plugin, status code)."""
        s = self._pl.get((point, plugin, code))
        if s is None:
            with self._lock:
                s = self._pl.setdefault((point, plugin, code), DurationSeries(self._lock))
        return s

    def observe_extension_point(self, point: str, code: str, profile: str, seconds: float) -> None:
        s = self._ep.get((point, code, profile))
        if s is None:
            s = self.extension_point_series(point, code, profile)
        s.observe(seconds)

    def observe_plugin(self, point: str, plugin: str, code: str, seconds: float) -> None:
        s = self._pl.get((point, plugin, code))
        if s is None:
            s = self.plugin_series(point, plugin, code)
        s.observe(seconds)

    def reset(self) -> None:
        """Forget every observation (series handed out stay valid and start again from zero)."""
        with self._lock:
            for s in self._ep.values():
                s._reset_locked()
            for s in self._pl.values():
                s._reset_locked()

    # -- reading ---------------------------------------------------------------------------------
    def _folded(self, series: dict) -> dict[tuple[str, str, str], DurationStats]:
        with self._lock:
            out = {}
            for key, s in list(series.items()):
                s._fold_locked()
                if s.stats.count:
                    out[key] = s.stats
            return out

    @property
    def extension_point_duration(self) -> dict[tuple[str, str, str], DurationStats]:
        """(extension point, status code, profile) -> stats, for the label sets observed."""
        return self._folded(self._ep)

    @property
    def plugin_execution_duration(self) -> dict[tuple[str, str, str], DurationStats]:
        """(extension point, plugin, status code) -> stats, for the label sets observed."""
        return self._folded(self._pl)

    def snapshot(self) -> dict:
        """A JSON-ready copy of everything observed so far."""
        ep, pl = self.extension_point_duration, self.plugin_execution_duration
        return {
            "extension_point_duration": [
                {"extension_point": p, "status": c, "profile": prof, **st.as_dict()}
                for (p, c, prof), st in sorted(ep.items())],
            "plugin_execution_duration": [
                {"extension_point": p, "plugin": pl_, "status": c, **st.as_dict()}
                for (p, pl_, c), st in sorted(pl.items())],
        }
