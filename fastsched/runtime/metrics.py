"""Duration metrics per extension point and per plugin (upstream's framework metrics, in memory).

Extension points are always observed; per-plugin durations only in cycles whose CycleState has
``set_record_plugin_metrics(True)`` (upstream samples 10 % of cycles).
"""
from __future__ import annotations

import threading
from collections import defaultdict
from dataclasses import dataclass


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

    @property
    def mean(self) -> float:
        return self.total / self.count if self.count else 0.0

    def as_dict(self) -> dict:
        return {"count": self.count, "total_seconds": self.total, "mean_seconds": self.mean,
                "min_seconds": 0.0 if self.count == 0 else self.min, "max_seconds": self.max}


class MetricsRecorder:
    """Collects ``framework_extension_point_duration`` and ``plugin_execution_duration`` equivalents."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        # (extension point, status code, profile) -> stats
        self.extension_point_duration: dict[tuple[str, str, str], DurationStats] = defaultdict(DurationStats)
        # (extension point, plugin, status code) -> stats
        self.plugin_execution_duration: dict[tuple[str, str, str], DurationStats] = defaultdict(DurationStats)

    def observe_extension_point(self, point: str, code: str, profile: str, seconds: float) -> None:
        with self._lock:
            self.extension_point_duration[(point, code, profile)].observe(seconds)

    def observe_plugin(self, point: str, plugin: str, code: str, seconds: float) -> None:
        with self._lock:
            self.plugin_execution_duration[(point, plugin, code)].observe(seconds)

    def reset(self) -> None:
        with self._lock:
            self.extension_point_duration.clear()
            self.plugin_execution_duration.clear()

    def snapshot(self) -> dict:
        """A JSON-ready copy of everything observed so far."""
        with self._lock:
            return {
                "extension_point_duration": [
                    {"extension_point": p, "status": c, "profile": prof, **st.as_dict()}
                    for (p, c, prof), st in sorted(self.extension_point_duration.items())],
                "plugin_execution_duration": [
                    {"extension_point": p, "plugin": pl, "status": c, **st.as_dict()}
                    for (p, pl, c), st in sorted(self.plugin_execution_duration.items())],
            }
