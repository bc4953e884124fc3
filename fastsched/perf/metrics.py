"""What a scheduler_perf run measures: the collectors of a collection window and the results.

:class:`Collection` is one startCollectingMetrics window (throughput samples, attempt and
pod-scheduling latencies, the framework's extension point and plugin durations, as the module
docstring of :mod:`fastsched.perf.runner` describes them); :class:`DataItem`,
:class:`PhaseStats`, :class:`WorkloadResult` and :class:`PerfReport` are what a run returns, and
:func:`apply_threshold` checks the items against a workload's threshold. They are apart from the
executor because how metrics are computed and reported is read (and compared with upstream's
collectors) on its own; ``fastsched.perf`` and ``fastsched.perf.runner`` re-export the public
names.
"""
from __future__ import annotations

import bisect
import math
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Mapping

import numpy as np

from ..api import Pod
from ..clock import PRIORITY_SAMPLE
from .config import MetricSelector

if TYPE_CHECKING:  # the collector reads the executor's scheduler and clock; the runner imports this module
    from .runner import _Executor

__all__ = ["DataItem", "PhaseStats", "WorkloadResult", "PerfReport", "apply_threshold",
           "THROUGHPUT_SAMPLE_INTERVAL"]

THROUGHPUT_SAMPLE_INTERVAL = 1.0


# ------------------------------------------------------------------------------------------------
# results
# ------------------------------------------------------------------------------------------------
@dataclass
class DataItem:
    """Upstream's ``DataItem``: ``data`` (bucket -> value; None when nothing was measured),
    ``unit`` and ``labels`` (``Metric``, ``Name``, ...)."""

    data: dict[str, float] | None
    unit: str
    labels: dict[str, str]

    def as_json(self) -> dict:
        out: dict[str, Any] = {"data": self.data, "unit": self.unit}
        if self.labels:
            out["labels"] = dict(self.labels)
        return out


@dataclass
class PhaseStats:
    """One metrics collection: what fastsched scheduled and how long it took."""

    name: str
    namespaces: list[str]
    pods_scheduled: int = 0
    #: the collection's duration on the run's clock (fastsched's working time plus idle waits)
    seconds: float = 0.0
    attempts: dict[str, int] = field(default_factory=dict)
    #: its wall-clock duration (idle waits cost none)
    wall_seconds: float = 0.0
    #: how many SchedulingThroughput samples it kept (0: upstream reports no SchedulingThroughput)
    throughput_samples: int = 0

    @property
    def pods_per_second(self) -> float | None:
        """Pods bound per second over the whole collection: a figure of fastsched's, not
        upstream's metric; never stands in for SchedulingThroughput (a phase without samples
        has no SchedulingThroughput, as upstream's)."""
        return self.pods_scheduled / self.seconds if self.seconds > 0 else None


@dataclass
class WorkloadResult:
    """The outcome of one workload: ``status`` is ``passed``, ``below-threshold``, ``failed``
    (an error, in ``reason``) or ``skipped`` (``reason`` says why)."""

    test_case: str
    workload: str
    status: str
    reason: str = ""
    data_items: list[DataItem] = field(default_factory=list)
    threshold: float = 0.0
    selector: MetricSelector = field(default_factory=MetricSelector)
    #: the selected metric's bucket; None when the collection produced no such item (a
    #: SchedulingThroughput phase without a kept sample: upstream reports none and checks no
    #: threshold, see :attr:`no_throughput_sample`)
    measured: float | None = None
    threshold_errors: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    phases: list[PhaseStats] = field(default_factory=list)
    #: one entry per op run: ``{"op", "opcode", "namespace", "seconds", "virtual_seconds"}``
    timeline: list[dict] = field(default_factory=list)
    nodes: int = 0
    pods_created: int = 0
    pods_scheduled: int = 0
    seconds: float = 0.0
    virtual_seconds: float = 0.0
    preemption_victims: int = 0
    scheduler: Any = None
    #: on a rescaled run: the workload parameters it changed (name -> value used); see
    #: :attr:`rescaled`
    scaled_params: dict[str, Any] = field(default_factory=dict)
    #: on a rescaled run that scaled the cluster too: the parameters that size the cluster and
    #: its fill before the measured phase (node counts, init pods and claims; name -> value
    #: used), empty when only the measured pods were turned up; see ``cluster_scaled_because``
    scaled_cluster_params: dict[str, Any] = field(default_factory=dict)
    #: on a rescaled run that scaled the cluster too: why (the reason the run with only its
    #: measured pods turned up failed, its pods not fitting the config's cluster)
    cluster_scaled_because: str = ""
    #: on a failed run: the pods left unbound whose last attempt found no node (Unschedulable);
    #: how a rescaled run whose extra pods do not fit the cluster is told from a slow one
    unschedulable_pods: int = 0
    #: when the workload kept no SchedulingThroughput sample (or fewer than the run's
    #: ``rescale_min_samples``) and the run asked for it (``fastsched perf --rescale-no-sample``):
    #: the same workload run again with its measured pods' count parameters turned up, whose
    #: metric is reported beside (never in place of) this one's; its own status does not change
    #: this result's
    rescaled: "WorkloadResult | None" = None

    @property
    def name(self) -> str:
        return f"{self.test_case}/{self.workload}"

    @property
    def no_throughput_sample(self) -> bool:
        """The threshold's metric is SchedulingThroughput and a measured phase kept no sample
        (upstream: "Failed to measure SchedulingThroughput", no item, no threshold check)."""
        return self.selector.name == "SchedulingThroughput" and any(
            p.throughput_samples == 0 for p in self.phases)

    @property
    def throughput_samples(self) -> int | None:
        """The fewest SchedulingThroughput samples a measured phase kept; None when the threshold's
        metric is not SchedulingThroughput or the run measured no phase. A phase of one or two
        samples is measured by its tail (the pods bound after the second 1 s tick over a whole
        second), not by its rate: ``fastsched perf --min-samples`` rescales such runs too."""
        if self.selector.name != "SchedulingThroughput" or not self.phases:
            return None
        return min(p.throughput_samples for p in self.phases)

    @property
    def ratio(self) -> float | None:
        """measured / threshold (threshold / measured for ``expectLower`` selectors)."""
        if not self.threshold or self.measured is None:
            return None
        if self.selector.expect_lower:
            return self.threshold / self.measured if self.measured else None
        return self.measured / self.threshold

    def as_dict(self) -> dict:
        return {"test_case": self.test_case, "workload": self.workload, "status": self.status,
                "reason": self.reason, "threshold": self.threshold or None, "metric": self.selector.name,
                "bucket": self.selector.data_bucket, "measured": self.measured,
                "no_throughput_sample": self.no_throughput_sample, "ratio": self.ratio,
                "threshold_errors": self.threshold_errors, "warnings": self.warnings,
                "nodes": self.nodes, "pods_created": self.pods_created, "pods_scheduled": self.pods_scheduled,
                "seconds": self.seconds, "virtual_seconds": self.virtual_seconds,
                "phases": [{"name": p.name, "namespaces": p.namespaces, "pods_scheduled": p.pods_scheduled,
                            "seconds": p.seconds, "wall_seconds": p.wall_seconds,
                            "pods_per_second": p.pods_per_second, "throughput_samples": p.throughput_samples,
                            "attempts": p.attempts}
                           for p in self.phases],
                "timeline": self.timeline,
                **({"scaled_params": dict(self.scaled_params)} if self.scaled_params else {}),
                **({"scaled_cluster_params": dict(self.scaled_cluster_params),
                    "cluster_scaled_because": self.cluster_scaled_because} if self.scaled_cluster_params else {}),
                **({"unschedulable_pods": self.unschedulable_pods} if self.status == "failed" else {}),
                "rescaled": None if self.rescaled is None else self.rescaled.summary_dict()}

    @property
    def phases_pods_per_second(self) -> float | None:
        """fastsched's own figure: pods bound over the measured phases' time together on the run's
        clock (None without a phase); not upstream's metric."""
        seconds = sum(p.seconds for p in self.phases)
        if not self.phases or seconds <= 0:
            return None
        return sum(p.pods_scheduled for p in self.phases) / seconds

    def summary_dict(self) -> dict:
        """A rescaled run in ``--json``: its parameters (``cluster_scaled``: the cluster's and its
        init fill's too, ``scaled_cluster_params``, and why), metric, samples and phases' own rate."""
        return {"scaled_params": dict(self.scaled_params), "cluster_scaled": bool(self.scaled_cluster_params),
                "scaled_cluster_params": dict(self.scaled_cluster_params),
                "cluster_scaled_because": self.cluster_scaled_because, "status": self.status, "reason": self.reason,
                # ("rescale capped at x3 instead of x4: ...": a try bounded by its pods' nodes' room)
                "warnings": list(self.warnings),
                "measured": self.measured, "no_throughput_sample": self.no_throughput_sample,
                "ratio": self.ratio, "throughput_samples": [p.throughput_samples for p in self.phases],
                "pods_scheduled": sum(p.pods_scheduled for p in self.phases),
                "phases_pods_per_second": self.phases_pods_per_second}


@dataclass
class PerfReport:
    """Every workload run (or skipped) by :func:`run_perf`."""

    results: list[WorkloadResult]
    topic: str | None = None

    @property
    def data_items(self) -> list[DataItem]:
        return [item for r in self.results for item in r.data_items]

    def data_items_json(self) -> dict:
        """``{"version": "v1", "dataItems": [...]}`` as upstream's ``dataItems2JSONFile`` writes it:
        a label used by any item is added to the others as ``"not applicable"`` (perfdash)."""
        items = [item.as_json() for item in self.data_items]
        labels = {k for item in items for k in item.get("labels", {})}
        for item in items:
            lab = item.setdefault("labels", {})
            for k in labels:
                lab.setdefault(k, "not applicable")
        return {"version": "v1", "dataItems": items}

    @property
    def below_threshold(self) -> list[WorkloadResult]:
        return [r for r in self.results if r.status == "below-threshold"]

    @property
    def failed(self) -> list[WorkloadResult]:
        return [r for r in self.results if r.status == "failed"]


def _percentiles(values: list[float], scale: float = 1.0) -> dict[str, float]:
    a = np.sort(np.asarray(values, dtype=float)) * scale
    return {"Perc50": float(np.percentile(a, 50)), "Perc90": float(np.percentile(a, 90)),
            "Perc95": float(np.percentile(a, 95)), "Perc99": float(np.percentile(a, 99)),
            "Average": float(a.mean())}


def labels_match(actual: Mapping[str, str], required: Mapping[str, str] | None) -> bool:
    if not required:
        return True
    return all(actual.get(k) == v for k, v in required.items())


def apply_threshold(items: list[DataItem], threshold: float, selector: MetricSelector) -> list[str]:
    """Upstream's ``applyThreshold``: adds ``<bucket>Threshold`` to the selected items and
    returns one message per item not above (below, with ``expectLower``) the threshold."""
    if threshold == 0:
        return []
    errors = []
    for item in items:
        if item.labels.get("Metric") != selector.name or not labels_match(item.labels, selector.labels):
            continue
        if item.data is None:
            continue
        bucket = selector.data_bucket
        item.data[bucket + "Threshold"] = threshold
        value = item.data.get(bucket)
        name = item.labels.get("Name", "")
        if value is None:
            errors.append(f'{name}: no data present for "{selector.name}" metric "{bucket}" bucket')
            continue
        ok = value < threshold if selector.expect_lower else value > threshold
        if not ok:
            word = "lower" if selector.expect_lower else "higher"
            errors.append(f'{name}: expected "{selector.name}" "{bucket}" to be {word}: got {value:f}, '
                          f'want {threshold:f}')
    return errors


# ------------------------------------------------------------------------------------------------
# collectors
# ------------------------------------------------------------------------------------------------
class Collection:
    """The collectors started by one startCollectingMetrics (or a createPods' collectMetrics)."""

    def __init__(self, ex: "_Executor", name: str, namespaces: list[str], selector: Mapping[str, str] | None):
        self.ex = ex
        self.name = name
        self.label = f"{ex.tc.name}/{ex.w.name}/{name}"
        self.namespaces = set(namespaces)
        self.selector = dict(selector or {})
        #: pods of the watched namespaces bound during the collection (PhaseStats.pods_scheduled)
        self.count = 0
        #: their bind times on the run's clock, in order: a tick counts the binds up to its own
        #: time, not those of the rest of the attempts chunk running when it fell due
        self.bind_times: list[float] = []
        #: upstream registers its handler on a running informer, whose Add events count the pods
        #: already bound in the watched namespaces ("%d pods scheduled so far"): a collection over
        #: such a namespace starts sampling at its first tick
        self.initial = sum(1 for ns in self.namespaces for p in ex.sched.pods_in_namespace(ns)
                           if p.node_name and labels_match(p.labels, self.selector))
        self.samples: list[float] = []
        self.started = False
        self.last_count = 0
        self.last_time = 0.0
        self.skipped = 0
        self.e2e: list[float] = []
        sched = ex.sched
        self.attempts_start = len(sched.metrics.attempt_latencies)
        self.pod_group_start = (len(sched.metrics.pod_group_attempt_latencies),
                                len(sched.metrics.pod_group_algorithm_latencies),
                                len(sched.metrics.placement_evaluations))
        self.attempt_counts = dict(sched.metrics.attempts)
        sched.metrics.framework.reset()  # upstream resets the collected metrics at start
        self.t0 = ex.clock.now()
        self.wall0 = time.perf_counter()
        self.ticks = 0
        #: when the wait that ended the phase would have seen it done at upstream's 1 s poll
        #: (set by the executor's wait; None: the phase ended otherwise, e.g. after a sleep)
        self.poll_end: float | None = None
        self.timer = ex.clock.schedule(self.t0 + THROUGHPUT_SAMPLE_INTERVAL, self._tick, PRIORITY_SAMPLE)

    def watches(self, pod: Pod) -> bool:
        return pod.namespace in self.namespaces and labels_match(pod.labels, self.selector)

    def on_bound(self, pod: Pod, created_at: float | None, at: float) -> None:
        if self.watches(pod):
            self.count += 1
            if self.bind_times and at < self.bind_times[-1]:
                bisect.insort(self.bind_times, at)
            else:
                self.bind_times.append(at)
        if created_at is not None:
            self.e2e.append(at - created_at)

    def scheduled_at(self, when: float) -> int:
        """upstream's ``getScheduledPods()`` at ``when``: the pods bound so far, those already
        bound when the collection started included."""
        return self.initial + bisect.bisect_right(self.bind_times, when)

    def _tick(self) -> None:
        """upstream's ticker case of ``throughputCollector.run``: ticks every second of the run's
        clock from the collection's start (a Go ticker's fixed period: t0 + k s)."""
        self.ticks += 1
        self.timer = self.ex.clock.schedule(self.t0 + (self.ticks + 1) * THROUGHPUT_SAMPLE_INTERVAL, self._tick,
                                            PRIORITY_SAMPLE)
        self._sample(self.ex.clock.now())

    def _sample(self, now: float) -> None:
        scheduled = self.scheduled_at(now)
        if scheduled == 0:  # sampling starts once a watched pod is bound
            return
        if not self.started:  # the first sample is an outlier ("sampling and creating pods get
            self.started = True  # started independently"): skipped
            self.last_count, self.last_time = scheduled, now
            return
        new = scheduled - self.last_count
        if new == 0:  # no 0 pods/s sample: the interval is merged into the next one with a pod
            self.skipped += 1
            return
        rate = new / (now - self.last_time)
        # one sample per merged interval, to keep the percentiles right (upstream's comment)
        self.samples.extend([rate] * (self.skipped + 1))
        self.last_count, self.last_time, self.skipped = scheduled, now, 0

    def stop(self) -> tuple[list[DataItem], PhaseStats]:
        self.timer.stop()
        # the ticks upstream's collector still takes before the wait's poll sees the phase done
        # and cancels it (the interval after the last of them is dropped, as upstream's)
        while self.poll_end is not None and self.t0 + (self.ticks + 1) * THROUGHPUT_SAMPLE_INTERVAL <= self.poll_end:
            self.ticks += 1
            self._sample(self.t0 + self.ticks * THROUGHPUT_SAMPLE_INTERVAL)
        sched = self.ex.sched
        items: list[DataItem] = []
        base = {"Name": self.label}
        if self.samples:
            s = sorted(self.samples)
            n = len(s)
            data = {"Average": sum(s) / n, **{f"Perc{p}": s[math.ceil(n * p / 100) - 1] for p in (50, 90, 95, 99)}}
            items.append(DataItem(data, "pods/s", {**base, "Metric": "SchedulingThroughput"}))
        else:
            self.ex.warn(f"Failed to measure SchedulingThroughput for {self.label}. Increase pods and/or nodes "
                         "to make scheduling take longer")
            items.append(DataItem(None, "", dict(base)))
        items.extend(self._histograms(base))
        phase = PhaseStats(self.name, sorted(self.namespaces), self.count, self.ex.clock.now() - self.t0,
                           {k: v - self.attempt_counts.get(k, 0) for k, v in sched.metrics.attempts.items()},
                           time.perf_counter() - self.wall0, len(self.samples))
        return items, phase

    def _wanted(self, metric: str) -> tuple[bool, list[dict] | None]:
        mcc = self.ex.tc.metrics_collector_config
        if mcc is None:
            return True, None  # upstream's default config: every metric below
        if metric not in mcc:
            return False, None
        return True, mcc[metric]

    def _histograms(self, base: dict) -> list[DataItem]:
        sched = self.ex.sched
        out: list[DataItem] = []
        ok, _ = self._wanted("scheduler_scheduling_attempt_duration_seconds")
        latencies = sched.metrics.attempt_latencies[self.attempts_start:]
        if ok and latencies:
            out.append(DataItem(_percentiles(latencies, 1000.0), "ms",
                                {**base, "Metric": "scheduler_scheduling_attempt_duration_seconds"}))
        ok, _ = self._wanted("scheduler_pod_scheduling_duration_seconds")
        if ok and self.e2e:
            out.append(DataItem(_percentiles(self.e2e, 1000.0), "ms",
                                {**base, "Metric": "scheduler_pod_scheduling_duration_seconds"}))
        out.extend(self._pod_group_histograms(base))
        fw = sched.metrics.framework
        ok, filters = self._wanted("scheduler_framework_extension_point_duration_seconds")
        if ok:
            per_point: dict[str, list[float]] = {}
            for (point, _code, _profile), st in fw.extension_point_duration.items():
                acc = per_point.setdefault(point, [0, 0.0])
                acc[0] += st.count
                acc[1] += st.total
            for point, (count, total) in sorted(per_point.items()):
                labels = {"extension_point": point}
                if count and _filter_ok(labels, filters):
                    out.append(DataItem({"Average": total / count * 1000.0}, "ms",
                                        {**base, "Metric": "scheduler_framework_extension_point_duration_seconds",
                                         **labels}))
        ok, filters = self._wanted("scheduler_plugin_execution_duration_seconds")
        if ok:
            per_plugin: dict[tuple[str, str], list[float]] = {}
            for (point, plugin, _code), st in fw.plugin_execution_duration.items():
                acc = per_plugin.setdefault((plugin, point), [0, 0.0])
                acc[0] += st.count
                acc[1] += st.total
            for (plugin, point), (count, total) in sorted(per_plugin.items()):
                labels = {"plugin": plugin, "extension_point": point}
                if count and _filter_ok(labels, filters):
                    out.append(DataItem({"Average": total / count * 1000.0}, "ms",
                                        {**base, "Metric": "scheduler_plugin_execution_duration_seconds", **labels}))
        return out


    def _pod_group_histograms(self, base: dict) -> list[DataItem]:
        """GenericWorkload's histograms as upstream's collector reads them (``collectHistogramVec``):
        one item per value of the ``result`` label the config lists (upstream's default config:
        waiting_on_preemption, scheduled, unschedulable, error), only those observed; without a
        label list, one item over every result. The TAS placement duration only when the config
        names it (upstream's default does not)."""
        metrics = self.ex.sched.metrics
        attempts_from, algorithm_from, placements_from = self.pod_group_start
        out: list[DataItem] = []
        mcc = self.ex.tc.metrics_collector_config
        by_result = (
            ("scheduler_podgroup_scheduling_attempt_duration_seconds",
             metrics.pod_group_attempt_latencies[attempts_from:], [{"label": "result", "values": _POD_GROUP_RESULTS}]),
            ("scheduler_placement_evaluation_duration_seconds", metrics.placement_evaluations[placements_from:], None),
        )
        for metric, observed, default_filters in by_result:
            if mcc is None:
                if default_filters is None:
                    continue
                filters: list[dict] | None = default_filters
            elif metric in mcc:
                filters = mcc[metric]
            else:
                continue
            results = [v for f in filters or () if f.get("label") == "result" for v in f.get("values") or ()]
            if not results:  # no result filter: every observation in one item (fastsched has one profile label)
                if observed:
                    out.append(DataItem(_percentiles([sec for _, sec in observed], 1000.0), "ms",
                                        {**base, "Metric": metric}))
                continue
            for result in results:
                seconds = [sec for res, sec in observed if res == result]
                if seconds:
                    out.append(DataItem(_percentiles(seconds, 1000.0), "ms",
                                        {**base, "Metric": metric, "result": result}))
        ok, _ = self._wanted("scheduler_podgroup_scheduling_algorithm_duration_seconds")
        algorithm = metrics.pod_group_algorithm_latencies[algorithm_from:]
        if ok and algorithm:
            out.append(DataItem(_percentiles(algorithm, 1000.0), "ms",
                                {**base, "Metric": "scheduler_podgroup_scheduling_algorithm_duration_seconds"}))
        return out


#: the ``result`` values upstream's default metricsCollectorConfig lists for the pod group attempt histogram
_POD_GROUP_RESULTS = ("waiting_on_preemption", "scheduled", "unschedulable", "error")


def _filter_ok(labels: Mapping[str, str], filters: list[dict] | None) -> bool:
    """A metricsCollectorConfig entry: each {label, values} must list the item's value."""
    if not filters:
        return True
    return all(labels.get(label) in (f.get("values") or []) for f in filters
               if (label := f.get("label")) is not None and label in labels)
