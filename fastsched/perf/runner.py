"""Run scheduler_perf workloads on a fastsched Scheduler, as upstream's ``WorkloadExecutor`` does.

**Time.** Upstream runs the scheduler, the test's pod creation, churn tickers and the throughput
collector concurrently, in wall time. fastsched runs them on one thread, on the Scheduler's
:class:`~fastsched.clock.VirtualClock`, which here *advances by the wall-clock time fastsched
spends working* (scheduling cycles, creating objects) and *jumps over idle waits* (a sleep op, a
backoff, the next churn tick while nothing is queued). So every rate is in wall-clock seconds of
fastsched's own work, idle waits cost no real time but count as time passing (as they do
upstream), and a run is reproducible in everything but the measured durations. The scheduler
works whenever the workload waits (a ``createPods`` waiting for its pods, a ``barrier``, a
``sleep``); churn, ``deletePodsPerSecond`` and ``updatePerSecond`` tickers and the throughput
sampler are events on the same clock.

**Throughput** is measured as upstream's ``throughputCollector`` measures it: pods of the watched
namespaces (and label selector) going from unbound to bound are counted; every second a sample is
taken once the count is > 0; the first sample is discarded; an interval with no new pod is merged
into the next one, whose rate is recorded once per merged second. ``Average`` is the mean of the
samples, ``PercNN`` the sorted sample at ``ceil(n*NN/100)-1``.

**Latency metrics** use upstream's names and data-item shape (milliseconds, ``Perc50/90/95/99`` and
``Average``) from what fastsched records during the collection window: each scheduling attempt's
wall time (``scheduler_scheduling_attempt_duration_seconds``, all results together: fastsched does
not split them by result), each pod's creation-to-bind time (``scheduler_pod_scheduling_duration_
seconds``), and the framework's extension point and plugin durations (``Average`` only: fastsched
keeps their count and sum, not a histogram). Percentiles are exact over the samples, where
upstream interpolates Prometheus buckets.
"""
from __future__ import annotations

import copy
import gc
import math
import time
import uuid
import warnings
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping

import numpy as np
import yaml

from ..api import ManifestError, ManifestWarning, Namespace, Node, Pod
from ..api.names import NameGenerator
from ..clock import PRIORITY_CLUSTER, PRIORITY_SAMPLE
from ..errors import FastschedError
from .config import MetricSelector, Op, PerfConfig, PerfConfigError, TestCase, Workload, label_filter_enabled
from .gates import gated_registry, scheduler_gates, split_gates
from .gotemplate import Template, TemplateError

__all__ = ["DataItem", "WorkloadResult", "PerfReport", "WorkloadError", "run_workload", "run_perf",
           "CLUSTER_SCOPED_KINDS", "MODELLED_KINDS", "WAIT_TIMEOUT"]

#: upstream's waitUntilPodsScheduledInNamespace timeout (10 minutes)
WAIT_TIMEOUT = 600.0
#: scheduling attempts between two looks at the clock (bounds the sampler's time resolution)
CHUNK = 32
THROUGHPUT_SAMPLE_INTERVAL = 1.0
_HOSTNAME = "kubernetes.io/hostname"

CLUSTER_SCOPED_KINDS = frozenset({"Node", "Namespace", "PriorityClass", "PersistentVolume", "StorageClass",
                                  "CSINode", "CSIDriver", "ResourceSlice", "DeviceClass", "VolumeAttachment",
                                  "RuntimeClass", "ClusterRole", "ClusterRoleBinding"})


def _modelled_kinds() -> frozenset[str]:
    from ..api import SUPPORTED_KINDS
    return frozenset(SUPPORTED_KINDS)


MODELLED_KINDS = _modelled_kinds()

# scheduler_perf's makeBaseNode / makeBasePod (util.go, testutils.MakePodSpec)
_BASE_NODE = {"apiVersion": "v1", "kind": "Node", "metadata": {}, "status": {
    "capacity": {"pods": "110", "cpu": "4", "memory": "32Gi"},
    "allocatable": {"pods": "110", "cpu": "4", "memory": "32Gi"},
    "phase": "Running", "conditions": [{"type": "Ready", "status": "True"}]}}
_BASE_POD = {"apiVersion": "v1", "kind": "Pod", "metadata": {"generateName": "pod-"}, "spec": {"containers": [{
    "name": "pause", "image": "registry.k8s.io/pause:3.10.1", "ports": [{"containerPort": 80}],
    "resources": {"limits": {"cpu": "100m", "memory": "500Mi"}, "requests": {"cpu": "100m", "memory": "500Mi"}}}]}}


class WorkloadError(FastschedError):
    """A workload that cannot run to its end (upstream: the benchmark fails)."""


class _Skip(Exception):
    pass


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

    @property
    def pods_per_second(self) -> float | None:
        """Pods bound per second over the whole collection (a simpler figure than the sampled
        SchedulingThroughput; useful when the phase is shorter than two samples)."""
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
    measured: float | None = None
    #: True when ``measured`` is the measured phase's overall pods/s because the phase was too
    #: short for two throughput samples (the first 1 s sample is discarded, as upstream does)
    measured_overall: bool = False
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

    @property
    def name(self) -> str:
        return f"{self.test_case}/{self.workload}"

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
                "measured_is_overall_rate": self.measured_overall, "ratio": self.ratio,
                "threshold_errors": self.threshold_errors, "warnings": self.warnings,
                "nodes": self.nodes, "pods_created": self.pods_created, "pods_scheduled": self.pods_scheduled,
                "seconds": self.seconds, "virtual_seconds": self.virtual_seconds,
                "phases": [{"name": p.name, "namespaces": p.namespaces, "pods_scheduled": p.pods_scheduled,
                            "seconds": p.seconds, "wall_seconds": p.wall_seconds,
                            "pods_per_second": p.pods_per_second, "attempts": p.attempts}
                           for p in self.phases],
                "timeline": self.timeline}


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


def _labels_match(actual: Mapping[str, str], required: Mapping[str, str] | None) -> bool:
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
        if item.labels.get("Metric") != selector.name or not _labels_match(item.labels, selector.labels):
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
class _Collection:
    """The collectors started by one startCollectingMetrics (or a createPods' collectMetrics)."""

    def __init__(self, ex: "_Executor", name: str, namespaces: list[str], selector: Mapping[str, str] | None):
        self.ex = ex
        self.name = name
        self.label = f"{ex.tc.name}/{ex.w.name}/{name}"
        self.namespaces = set(namespaces)
        self.selector = dict(selector or {})
        self.count = 0
        self.samples: list[float] = []
        self.started = False
        self.last_count = 0
        self.last_time = 0.0
        self.skipped = 0
        self.e2e: list[float] = []
        sched = ex.sched
        self.attempts_start = len(sched.metrics.attempt_latencies)
        self.attempt_counts = dict(sched.metrics.attempts)
        sched.metrics.framework.reset()  # upstream resets the collected metrics at start
        self.t0 = ex.clock.now()
        self.wall0 = time.perf_counter()
        self.timer = ex.clock.schedule(self.t0 + THROUGHPUT_SAMPLE_INTERVAL, self._tick, PRIORITY_SAMPLE)

    def watches(self, pod: Pod) -> bool:
        return pod.namespace in self.namespaces and _labels_match(pod.labels, self.selector)

    def on_bound(self, pod: Pod, created_at: float | None, at: float) -> None:
        if self.watches(pod):
            self.count += 1
        if created_at is not None:
            self.e2e.append(at - created_at)

    def _tick(self) -> None:
        now = self.ex.clock.now()
        self.timer = self.ex.clock.schedule(now + THROUGHPUT_SAMPLE_INTERVAL, self._tick, PRIORITY_SAMPLE)
        scheduled = self.count
        if scheduled == 0:
            return
        if not self.started:  # the first sample is an outlier: skipped
            self.started = True
            self.last_count, self.last_time = scheduled, now
            return
        new = scheduled - self.last_count
        if new == 0:
            self.skipped += 1
            return
        rate = new / (now - self.last_time)
        self.samples.extend([rate] * (self.skipped + 1))
        self.last_count, self.last_time, self.skipped = scheduled, now, 0

    def stop(self) -> tuple[list[DataItem], PhaseStats]:
        self.timer.stop()
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
                           time.perf_counter() - self.wall0)
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


def _filter_ok(labels: Mapping[str, str], filters: list[dict] | None) -> bool:
    """A metricsCollectorConfig entry: each {label, values} must list the item's value."""
    if not filters:
        return True
    return all(labels.get(f.get("label")) in (f.get("values") or []) for f in filters if f.get("label") in labels)


# ------------------------------------------------------------------------------------------------
# executor
# ------------------------------------------------------------------------------------------------
class _Executor:
    """One workload run (upstream's ``WorkloadExecutor``)."""

    def __init__(self, config: PerfConfig, tc: TestCase, w: Workload, *, topic: str | None, seed: int,
                 progress: Callable[[dict], None] | None, scheduler_config: Any, registry: Any,
                 prebind_init: bool, keep_scheduler: bool):
        self.config, self.tc, self.w = config, tc, w
        self.topic = topic
        self.seed = seed
        self.progress = progress
        self.scheduler_config = scheduler_config
        self.registry = registry
        self.prebind_init = prebind_init
        self.volume_index: dict[str, int] = {}  # namespace -> next scheduler_perf volume index
        self.keep_scheduler = keep_scheduler
        self.result = WorkloadResult(tc.name, w.name, "passed", threshold=w.threshold_for(topic),
                                     selector=tc.selector_for(w))
        self.names = NameGenerator(seed)
        self.rng = np.random.default_rng([seed, 17])
        self.templates: dict[str, Template] = {}
        self.parsed: dict[tuple[str, str], Any] = {}
        self.warned: set[str] = set()
        self.pods_per_namespace: dict[str, int] = {}  # upstream's numPodsScheduledPerNamespace
        self.scheduled: dict[str, int] = {}           # bound pods per namespace, now
        self.created_at: dict[str, float] = {}
        self.finalizer_uids: set[str] = set()
        self.collection: _Collection | None = None
        self.background: list[Any] = []                # timers of churn / tickers to stop at the end
        self.pending_steady: list[Pod] = []
        self.steady: dict[str, Callable[[], Any]] = {}
        self.steady_counts: dict[str, int] = {}
        self.next_node_index = 0
        self.in_step = False
        self.step_wall = 0.0
        self.last_progress = 0.0
        self.op_index = 0
        self.n_ops = 0
        self.opcode = ""
        self.pods_created = 0
        self.pods_bound = 0

    # -- messages ----------------------------------------------------------------------------------
    def warn(self, message: str) -> None:
        if message not in self.warned:
            self.warned.add(message)
            self.result.warnings.append(message)

    # -- set-up ------------------------------------------------------------------------------------
    def _scheduler_config(self) -> Any:
        if self.scheduler_config is not None:
            return self.scheduler_config
        if not self.tc.scheduler_config_path:
            return None
        from ..config import ConfigError, load_config

        path = self.config.resolve(self.tc.scheduler_config_path)
        try:
            return load_config(path)
        except (ConfigError, OSError) as exc:
            raise WorkloadError(f"schedulerConfigPath {self.tc.scheduler_config_path}: {exc}") from None

    def _build_scheduler(self) -> None:
        from ..clock import VirtualClock
        from ..scheduler import Scheduler

        gates = {**self.tc.feature_gates, **self.w.feature_gates}
        modelled, ignored = split_gates(gates)
        for gate, value in ignored.items():
            self.warn(f"feature gate {gate}={str(value).lower()} is not modelled by fastsched: ignored "
                      "(kube-scheduler v1.34's default behaviour runs)")
        with gated_registry(modelled):
            self.sched = Scheduler(self._scheduler_config(), registry=self.registry, seed=self.seed,
                                   clock=VirtualClock(), feature_gates=scheduler_gates(modelled))
        self.clock = self.sched.clock
        self.sched.bound_callbacks.append(self._on_bound)
        self.sched.preemption_callbacks.append(self._on_preempted)

    # -- the clock ---------------------------------------------------------------------------------
    def _elapse(self, wall_start: float) -> None:
        """Advance virtual time by the wall time spent since ``wall_start`` (running due events)."""
        self.clock.advance_to(self.clock.now() + (time.perf_counter() - wall_start))

    def _attempts(self) -> int:
        a = self.sched.metrics.attempts
        return a["scheduled"] + a["unschedulable"] + a["error"]

    def _step(self) -> bool:
        """Up to CHUNK scheduling attempts at the current time; then time moves on by their cost.
        Whether any attempt was made."""
        before = self._attempts()
        self.in_step = True
        self.step_wall = start = time.perf_counter()
        try:
            self.sched.run(until=self.clock.now(), max_attempts=CHUNK, results=False)
        finally:
            self.in_step = False
        if self.pending_steady:
            self._steady_replace()
        did = self._attempts() != before
        self._elapse(start)
        if self.progress is not None and start - self.last_progress > 0.25:
            self.last_progress = start
            self._report_progress()
        return did

    def _report_progress(self) -> None:
        if self.progress is not None:
            self.progress({"workload": self.result.name, "op": self.op_index, "ops": self.n_ops,
                           "opcode": self.opcode, "pods_created": self.pods_created, "pods_bound": self.pods_bound})

    def _wait(self, done: Callable[[], bool], what: str, pending: Callable[[], str] | None = None,
              timeout: float = WAIT_TIMEOUT) -> None:
        """Let the scheduler work (and time pass) until ``done()``; upstream's 10-minute timeout."""
        deadline = self.clock.now() + timeout
        while not done():
            if self._step():
                continue
            upcoming = self.clock.peek()
            if upcoming is None or upcoming > deadline:
                detail = pending() if pending is not None else ""
                if upcoming is not None:
                    self.clock.advance_to(deadline)
                    raise WorkloadError(f"timed out after {timeout:g}s waiting for {what}{detail}")
                raise WorkloadError(f"waiting for {what}: nothing can make progress any more{detail}")
            self.clock.advance_to(upcoming)

    def _run_for(self, seconds: float) -> None:
        """Let the scheduler work and time pass for ``seconds`` (virtual)."""
        end = self.clock.now() + seconds
        while self.clock.now() < end:
            if not self._step():
                upcoming = self.clock.peek()
                self.clock.advance_to(end if upcoming is None else min(upcoming, end))

    # -- observers ---------------------------------------------------------------------------------
    def _on_bound(self, res: Any) -> None:
        pod = res.pod
        ns = pod.namespace
        self.scheduled[ns] = self.scheduled.get(ns, 0) + 1
        self.pods_bound += 1
        at = self.clock.now() + (time.perf_counter() - self.step_wall if self.in_step else 0.0)
        if self.collection is not None:
            self.collection.on_bound(pod, self.created_at.get(pod.uid), at)
        if ns in self.steady:
            self.pending_steady.append(pod)

    def _on_preempted(self, victim: Pod, preemptor: Pod, node_name: str) -> None:
        if victim.node_name:
            self.scheduled[victim.namespace] = self.scheduled.get(victim.namespace, 0) - 1

    # -- templates ---------------------------------------------------------------------------------
    def _template(self, path: str, what: str) -> Template:
        t = self.templates.get(path)
        if t is None:
            text = self.config.read_template(path, what)
            try:
                t = Template(text, name=path)
            except TemplateError as exc:
                raise WorkloadError(f"{what}: {exc}") from None
            self.templates[path] = t
        return t

    def _render(self, path: str, what: str, env: dict) -> str:
        try:
            return self._template(path, what).execute(env)
        except TemplateError as exc:
            raise WorkloadError(f"{what}: {exc}") from None

    def _document(self, text: str, path: str, what: str) -> dict:
        try:
            docs = [d for d in yaml.safe_load_all(text) if d is not None]
        except yaml.YAMLError as exc:
            raise WorkloadError(f"{what}: {path}: invalid YAML after rendering: {str(exc).splitlines()[0]}") from None
        if len(docs) != 1 or not isinstance(docs[0], dict):
            raise WorkloadError(f"{what}: {path}: expected one object, got {len(docs)} documents")
        return docs[0]

    def _object(self, doc: dict, path: str, what: str, kind: str | None = None) -> Any:
        """Decode one object strictly (unknown fields are errors, as ``yaml.UnmarshalStrict``;
        field names that match only case-insensitively are read, as Go's decoder reads them)."""
        from ..api import load_objects
        from ..api.schema import decode, schema_kinds

        doc_kind = doc.get("kind") or kind
        if kind is not None and doc_kind != kind:
            raise WorkloadError(f"{what}: {path}: expected a {kind}, got kind {doc_kind!r}")
        if doc_kind not in MODELLED_KINDS:
            raise WorkloadError(f"{what}: {path}: objects of kind {doc_kind!r} are not modelled by fastsched")
        if doc_kind in schema_kinds():
            decoded = decode(doc, doc_kind)
            if decoded.unknown:
                fields = ", ".join(f'unknown field "{p}"' for p in decoded.unknown)
                raise WorkloadError(f"{what}: {path}: strict decoding error: {fields}")
        doc = {**doc, "kind": doc_kind}
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", ManifestWarning)
            try:
                objs = load_objects([doc])
            except ManifestError as exc:
                raise WorkloadError(f"{what}: {path}: {exc}") from None
        for c in caught:
            self.warn(f"{path}: {c.message}")
        return objs[0]

    def _parsed(self, path: str, what: str, text: str, kind: str) -> Any:
        key = (path, text)
        obj = self.parsed.get(key)
        if obj is None:
            obj = self.parsed[key] = self._object(self._document(text, path, what), path, what, kind)
        return obj

    def _plain(self, path: str, what: str, kind: str | None = None) -> Any:
        """A file read as plain YAML (no template rendering): namespace and churn templates."""
        text = self.config.read_template(path, what)
        return self._parsed(path, what, text, kind) if kind else self._object(
            self._document(text, path, what), path, what)

    # -- namespaces --------------------------------------------------------------------------------
    def _ensure_namespace(self, ns: str) -> None:
        """createNamespaceIfNotPresent."""
        if ns not in self.pods_per_namespace:
            if ns not in self.sched.namespaces:
                self.sched.add_namespace(Namespace(name=ns))
            self.pods_per_namespace[ns] = 0

    def _generated(self, obj: Any) -> str:
        """A name for ``obj`` as the API server's generateName gives it (seeded)."""
        if obj.name:
            return obj.name
        if not obj.generate_name:
            raise WorkloadError(f"{obj.KIND} template has neither metadata.name nor metadata.generateName")
        while True:
            name = self.names.generate(obj.generate_name)
            if not self.sched.name_taken(obj.KIND, obj.namespace, name):
                return name

    # -- ops ---------------------------------------------------------------------------------------
    def run(self) -> WorkloadResult:
        wall0 = time.perf_counter()
        r = self.result
        try:
            reason = self.tc.not_modelled()
            if reason:
                raise _Skip(reason)
            resolved = self.tc.ops_for(self.w)
            if resolved.unused_params:
                raise WorkloadError(f"the parameters {resolved.unused_params} are defined on workload "
                                    f"{self.w.name}, but unused. Please make sure there are no typos")
            self._precheck(resolved.ops)
            self._build_scheduler()
            self.n_ops = len(resolved.ops)
            collector_was_enabled = gc.isenabled()
            for index, op in enumerate(resolved.ops):
                self.op_index, self.opcode = index, op.opcode
                self._report_progress()
                op_wall, op_virtual = time.perf_counter(), self.clock.now()
                try:
                    self._run_op(op, index)
                except (WorkloadError, PerfConfigError) as exc:
                    raise WorkloadError(f"op {index} ({op.opcode}): {exc}") from None
                r.timeline.append({"op": index, "opcode": op.opcode,
                                   "namespace": op.fields.get("namespace") if op.opcode == "createPods" else None,
                                   "seconds": time.perf_counter() - op_wall,
                                   "virtual_seconds": self.clock.now() - op_virtual})
                if not collector_was_enabled:
                    gc.enable()
            self.op_index = self.n_ops
            self._report_progress()
        except _Skip as exc:
            r.status, r.reason = "skipped", str(exc)
        except PerfConfigError as exc:
            r.status, r.reason = "failed", str(exc)
        except WorkloadError as exc:
            r.status, r.reason = "failed", str(exc)
        finally:
            for timer in self.background:
                timer.stop()
        sched = getattr(self, "sched", None)
        if sched is not None:
            r.nodes = len(sched.cache.node_names())
            r.virtual_seconds = self.clock.now()
            r.preemption_victims = sched.metrics.preemption_victims
            if self.keep_scheduler:
                r.scheduler = sched
        r.pods_created, r.pods_scheduled = self.pods_created, self.pods_bound
        r.seconds = time.perf_counter() - wall0
        if r.status == "passed" and r.threshold_errors:
            r.status = "below-threshold"
        return r

    def _precheck(self, ops: list[Op]) -> None:
        """Skip the workload now if an op needs objects fastsched does not model."""
        for op in ops:
            reason = op.not_modelled
            if reason:
                raise _Skip(reason)
            paths: list[tuple[str, bool]] = []
            if op.opcode in ("createAny", "updateAny"):
                paths.append((op.fields["templatePath"], True))
            if op.opcode == "churn":
                paths.extend((p, False) for p in op.fields.get("templatePaths") or [])
            for path, templated in paths:
                text = self.config.read_template(path, f"{op.path}.templatePath")
                if templated:
                    env = {**(op.fields.get("templateParams") or {}), "Index": 0, "Count": 1}
                    text = self._render(path, f"{op.path}.templatePath", env)
                try:
                    doc = yaml.safe_load(text)
                except yaml.YAMLError:
                    continue  # reported when the op runs
                kind = doc.get("kind") if isinstance(doc, dict) else None
                if kind and kind not in MODELLED_KINDS:
                    raise _Skip(f"op {op.opcode} creates {kind} objects ({path}), which fastsched does not model")

    def _run_op(self, op: Op, index: int) -> None:
        handler = getattr(self, "_op_" + op.opcode)
        handler(op, index)

    # createNodes -------------------------------------------------------------------------------
    def _op_createNodes(self, op: Op, index: int) -> None:
        f = op.fields
        count = int(f.get("count") or 0)
        what = f"{op.path}.nodeTemplatePath"
        path = f.get("nodeTemplatePath")
        allocatable = (f.get("nodeAllocatableStrategy") or {}).get("nodeAllocatable") or {}
        params = f.get("templateParams") or {}
        wall = time.perf_counter()
        nodes: list[Node] = []
        template = self._template(path, what) if path else None
        static: Node | None = None
        taken = set(self.sched.cache.node_names())
        for i in range(count):
            if template is None or (static is not None):
                node = static
            else:
                text = template.execute({**params, "Index": i, "Count": count}) if not template.is_static \
                    else template.execute({})
                node = self._node_from_text(text, path, what, allocatable)
                if template.is_static:
                    static = node
            if node is None:  # makeBaseNode("node-<opIndex>-")
                base = copy.deepcopy(_BASE_NODE)
                base["metadata"]["generateName"] = f"node-{index}-"
                if allocatable:
                    base["status"]["allocatable"].update(allocatable)
                node = static = self._object(base, "makeBaseNode", what, "Node")
            # IntegrationTestNodePreparer: name = generateName + rand.String(5) (a taken name is
            # retried, as upstream's create retries), hostname label = name
            name = node.name
            while not name or (name in taken and not node.name):
                name = node.generate_name + self.names.random_string(5)
            taken.add(name)
            labels = {**node.labels, _HOSTNAME: name}
            new = node.replace(name=name, uid="", labels=labels)
            new.admitted = bool(nodes)  # the first one of the op is validated in full
            nodes.append(new)
        nodes = self._prepare_nodes(op, nodes)
        try:
            self.sched.add_nodes(nodes)
            strategy = f.get("nodeAllocatableStrategy") or {}
            if strategy.get("csiNodeAllocatable") or strategy.get("migratedPlugins"):  # PrepareDependentObjects
                from ..sim.storage import perf_csi_node
                self.sched.add([perf_csi_node(n.name, strategy.get("csiNodeAllocatable") or {},
                                              strategy.get("migratedPlugins") or ()) for n in nodes])
        except (ManifestError, ValueError) as exc:
            raise WorkloadError(str(exc)) from None
        self._elapse(wall)

    def _node_from_text(self, text: str, path: str, what: str, allocatable: Mapping[str, str]) -> Node:
        key = (path, text + repr(sorted(allocatable.items())))
        node = self.parsed.get(key)
        if node is None:
            doc = self._document(text, path, what)
            if allocatable:  # NodeAllocatableStrategy: allocatable = (defaulted) capacity + overrides
                status = dict(doc.get("status") or {})
                alloc = dict(status.get("allocatable") or status.get("capacity") or {})
                alloc.update(allocatable)
                status["allocatable"] = alloc
                doc = {**doc, "status": status}
            node = self.parsed[key] = self._object(doc, path, what, "Node")
        return node

    def _prepare_nodes(self, op: Op, new_nodes: list[Node]) -> list[Node]:
        """The op's node strategy, applied as upstream's PrepareNodes applies it: to the nodes at
        positions [nextNodeIndex, nextNodeIndex + count) of *all* nodes listed by name."""
        f = op.fields
        count = len(new_nodes)
        start = self.next_node_index
        self.next_node_index += count
        label = f.get("labelNodePrepareStrategy")
        unique = f.get("uniqueNodeLabelStrategy")
        if not label and not unique:
            return new_nodes
        by_name = {n.name: n for n in new_nodes}
        existing = {n.name: n for n in self.sched.nodes()}
        window = sorted([*existing, *by_name])[start:start + count]
        for i, name in enumerate(window):
            if label:
                key, value = label["labelKey"], label["labelValues"][i % len(label["labelValues"])]
            else:
                key, value = unique["labelKey"], str(uuid.UUID(int=int(self.rng.integers(0, 2**63)) << 64
                                                              | int(self.rng.integers(0, 2**63)), version=4))
            if name in by_name:
                node = by_name[name]
                admitted = node.admitted
                node = node.replace(labels={**node.labels, key: value})
                node.admitted = admitted
                by_name[name] = node
            else:  # a node of an earlier op: patched in place, as upstream's PATCH does
                old = existing[name]
                self.sched.update_node(old.replace(labels={**old.labels, key: value}))
        return [by_name[n.name] for n in new_nodes]

    # createNamespaces ----------------------------------------------------------------------------
    def _op_createNamespaces(self, op: Op, index: int) -> None:
        f = op.fields
        base = None
        count = int(f.get("count") or 0)
        if f.get("namespaceTemplatePath") and count:
            # upstream names each copy <prefix>-<i> before creating it: the template needs no name
            path, what = f["namespaceTemplatePath"], f"{op.path}.namespaceTemplatePath"
            doc = self._document(self.config.read_template(path, what), path, what)
            doc = {**doc, "metadata": {**(doc.get("metadata") or {}), "name": f"{f.get('prefix', '')}-0"}}
            base = self._object(doc, path, what, "Namespace")
        for i in range(count):
            name = f"{f.get('prefix', '')}-{i}"
            ns = base.replace(name=name, uid="", generate_name="") if base is not None else Namespace(name=name)
            self.sched.add_namespace(ns)
            self.pods_per_namespace.setdefault(name, 0)

    # createPods ----------------------------------------------------------------------------------
    def _pod_factory(self, path: str | None, what: str, env: dict) -> tuple[Any, bool]:
        """(PodFactory, whether the pod has finalizers) for the rendered template."""
        from ..sim.generators import PodFactory

        if path is None:
            text, key_path = yaml.safe_dump(_BASE_POD), "makeBasePod"
        else:
            template = self._template(path, what)
            text = template.execute({} if template.is_static else env)
            key_path = path
        key = ("pod", key_path, text)
        entry = self.parsed.get(key)
        if entry is None:
            doc = self._document(text, key_path, what)
            pod = self._object(doc, key_path, what, "Pod")
            finalizers = bool((doc.get("metadata") or {}).get("finalizers"))
            entry = self.parsed[key] = (PodFactory(pod), finalizers)
        return entry

    def _make_pods(self, op: Op, ns: str, count: int, start: int = 0) -> tuple[list[Pod], list[bool]]:
        f = op.fields
        path = f.get("podTemplatePath") or self.tc.default_pod_template_path
        what = f"{op.path}.podTemplatePath"
        params = f.get("templateParams") or {}
        pods, finalizers = [], []
        batch: set[str] = set()
        last_env_static = None
        for i in range(start, start + count):
            if last_env_static is None:
                factory, fin = self._pod_factory(path, what, {**params, "Index": i, "Count": count})
                if path is None or self._template(path, what).is_static:
                    last_env_static = (factory, fin)
            else:
                factory, fin = last_env_static
            tpl = factory.template
            name = tpl.name
            if not name:  # generateName, as the API server names the pod (seeded)
                if not tpl.generate_name:
                    raise WorkloadError(f"{what}: the pod template has neither metadata.name nor "
                                        "metadata.generateName")
                name = self.names.generate(tpl.generate_name)
                while name in batch or self.sched.name_taken("Pod", ns, name):
                    name = self.names.generate(tpl.generate_name)
                batch.add(name)
            pods.append(factory.make(name, ns))
            finalizers.append(fin)
        return pods, finalizers

    def _add_pods(self, pods: list[Pod], finalizers: list[bool], ns: str) -> list[Pod]:
        before = len(self.sched.pods_in_namespace(ns))
        try:
            self.sched.add_pods(pods)
        except (ManifestError, ValueError) as exc:
            raise WorkloadError(str(exc)) from None
        added = self.sched.pods_in_namespace(ns)[before:]
        now = self.clock.now()
        for pod, fin in zip(added, finalizers):
            self.created_at[pod.uid] = now
            if fin:
                self.finalizer_uids.add(pod.uid)
            if pod.node_name:  # created bound: counted as scheduled, as the informer handler does
                self.scheduled[ns] = self.scheduled.get(ns, 0) + 1
                if self.collection is not None:
                    self.collection.on_bound(pod, None, now)
        self.pods_created += len(added)
        return added

    def _prebound(self, pods: list[Pod]) -> list[Pod]:
        from ..sim.workloads import prebind_pods

        try:
            return prebind_pods(pods, self.sched.nodes(), occupied=self.sched.pods.values(), seed=self.seed)
        except ValueError as exc:
            raise WorkloadError(str(exc)) from None

    def _op_createPods(self, op: Op, index: int) -> None:
        f = op.fields
        ns = f.get("namespace") or f"namespace-{index}"
        self._ensure_namespace(ns)
        count = int(f.get("count") or 0)
        if f.get("collectMetrics"):
            self._start_collecting(ns, [ns], None)
        if f.get("steadyState"):
            self._steady_state(op, ns, count, float(f.get("duration") or 0))
        else:
            wall = time.perf_counter()
            pods, fins = self._make_pods(op, ns, count)
            if f.get("persistentVolumeTemplatePath"):
                pods = self._with_volumes(op, ns, pods)
            if self.prebind_init and not f.get("collectMetrics") and not f.get("skipWaitToCompletion") \
                    and self.collection is None:
                pods = self._prebound(pods)
            self._add_pods(pods, fins, ns)
            self._elapse(wall)
            if f.get("skipWaitToCompletion"):
                self.pods_per_namespace[ns] = self.pods_per_namespace.get(ns, 0) + count
            else:
                self._wait(lambda: self.scheduled.get(ns, 0) >= count,
                           f"{count} pods to be scheduled in namespace {ns}",
                           lambda: self._pending_detail(ns, count))
        if f.get("collectMetrics"):
            self._stop_collecting()

    def _with_volumes(self, op: Op, ns: str, pods: list[Pod]) -> list[Pod]:
        """scheduler_perf's CreatePodWithPersistentVolume: a bound PV and claim per pod, the pod
        mounting the claim (:func:`fastsched.sim.storage.perf_volume_pair`)."""
        from ..sim.storage import perf_volume_objects

        f = op.fields
        docs = []
        for key in ("persistentVolumeTemplatePath", "persistentVolumeClaimTemplatePath"):
            path = f.get(key)
            if not path:
                raise WorkloadError(f"{op.path}.{key}: required with persistentVolumeTemplatePath")
            docs.append(self._document(self.config.read_template(path, f"{op.path}.{key}"), path, f"{op.path}.{key}"))
        start = self.volume_index.get(ns, 0)
        try:
            pvs, pvcs, volumes = perf_volume_objects(docs[0], docs[1], ns, start, len(pods))
            for pv, pvc in zip(pvs, pvcs):   # the claim first, as upstream creates it
                self.sched.add_object(pvc)
                self.sched.add_object(pv)
        except (ManifestError, ValueError) as exc:
            raise WorkloadError(str(exc)) from None
        self.volume_index[ns] = start + len(pods)
        from ..api.objects import _field_copier

        copy_pod = _field_copier(Pod)
        out = []
        for pod, volume in zip(pods, volumes):
            clone = copy_pod(pod)  # a field copy (no __init__): only the volumes differ
            clone.volumes = (volume,)
            manifest = pod.manifest
            if manifest:  # so objects("Pod") shows the volume too
                clone.manifest = {**manifest, "spec": {**(manifest.get("spec") or {}), "volumes": [volume]}}
            out.append(clone)
        return out

    def _pending_detail(self, ns: str, want: int) -> str:
        got = self.scheduled.get(ns, 0)
        for pod in self.sched.pods_in_namespace(ns):
            if not pod.node_name:
                res = self.sched.results.get(pod.uid)
                msg = f": {res.status}: {res.message}" if res is not None and res.message else ""
                return f" ({got} of {want} scheduled; at least pod {pod.key} is not scheduled{msg})"
        return f" ({got} of {want} scheduled)"

    def _steady_state(self, op: Op, ns: str, count: int, duration: float) -> None:
        """createPodsSteadily: ``count`` pods, and each one seen bound is deleted and replaced by
        a new one (template Index 0, Count 1, as upstream creates it), for ``duration`` seconds."""
        self.steady[ns] = lambda: self._add_pods(*self._make_pods(op, ns, 1), ns)
        self.steady_counts[ns] = 0
        wall = time.perf_counter()
        pods, fins = self._make_pods(op, ns, count)
        self._add_pods(pods, fins, ns)
        self._elapse(wall)
        try:
            self._run_for(duration)
        finally:
            del self.steady[ns]
            self.pending_steady.clear()
        if not self.steady_counts[ns]:
            raise WorkloadError("no pod at all got scheduled, either because of a problem or because the test "
                                "interval was too small")

    def _steady_replace(self) -> None:
        pods, self.pending_steady = self.pending_steady, []
        for pod in pods:
            replace = self.steady.get(pod.namespace)
            if replace is None:
                continue
            self.steady_counts[pod.namespace] += 1
            self._delete(pod)
            replace()

    # deletePods ----------------------------------------------------------------------------------
    def _delete(self, pod: Pod) -> None:
        """Delete a pod as the API server does: one with finalizers gets a deletionTimestamp."""
        current = self.sched.pods.get(pod.uid)
        if current is None:
            return  # already gone (preempted, deleted): upstream logs the NotFound error
        if pod.uid in self.finalizer_uids:
            if current.deletion_timestamp is None:
                self.sched.update_pod(current.replace(deletion_timestamp=self.clock.now()))
            return
        if current.node_name:
            self.scheduled[current.namespace] = self.scheduled.get(current.namespace, 0) - 1
        self.sched.delete_pod(current.uid, reason="deleted by the workload")

    def _op_deletePods(self, op: Op, index: int) -> None:
        f = op.fields
        ns = f.get("namespace", "")
        selector = f.get("labelSelector") or {}
        victims = [p for p in self.sched.pods_in_namespace(ns) if _labels_match(p.labels, selector)]
        rate = int(f.get("deletePodsPerSecond") or 0)
        if rate <= 0:
            for pod in victims:
                self._delete(pod)
            return
        left = [len(victims)]
        interval = 1.0 / rate

        def tick(i: int = 0) -> None:
            if i >= len(victims):
                return
            self._delete(victims[i])
            left[0] -= 1
            if i + 1 < len(victims):
                self.background.append(self.clock.schedule(self.clock.now() + interval,
                                                           lambda: tick(i + 1), PRIORITY_CLUSTER))

        if victims:
            self.background.append(self.clock.schedule(self.clock.now() + interval, tick, PRIORITY_CLUSTER))
        if not f.get("skipWaitToCompletion"):
            self._wait(lambda: left[0] <= 0, f"{len(victims)} pods to be deleted in namespace {ns}")

    # churn ---------------------------------------------------------------------------------------
    def _op_churn(self, op: Op, index: int) -> None:
        f = op.fields
        ns = f.get("namespace") or f"namespace-{index}"
        if ns not in self.sched.namespaces:
            self.sched.add_namespace(Namespace(name=ns))
        objs = [self._plain(p, f"{op.path}.templatePaths[{i}]") for i, p in enumerate(f["templatePaths"])]
        interval = (f.get("intervalMilliseconds") or 500) / 1000.0
        number = int(f.get("number") or 0)
        mode = f["mode"]
        slots: list[list[str]] = [[""] * max(number, 1) for _ in objs]
        count = [0]

        def churn_fn(i: int, name: str) -> str:
            obj = objs[i]
            if name:
                self._churn_delete(obj, name, ns)
                return ""
            return self._churn_create(obj, ns)

        def tick() -> None:
            if mode == "create":
                if number and count[0] >= number:
                    return
                for i in range(len(objs)):
                    churn_fn(i, "")
            else:
                slot = count[0] % number
                for i in range(len(objs)):
                    slots[i][slot] = churn_fn(i, slots[i][slot])
            count[0] += 1
            self.background.append(self.clock.schedule(self.clock.now() + interval, tick, PRIORITY_CLUSTER))

        self.background.append(self.clock.schedule(self.clock.now() + interval, tick, PRIORITY_CLUSTER))

    def _churn_create(self, obj: Any, ns: str) -> str:
        scoped = obj.KIND not in CLUSTER_SCOPED_KINDS
        base = obj.replace(namespace=ns) if scoped else obj
        name = self._generated(base)
        new = base.replace(name=name, uid="")
        try:
            if isinstance(new, Pod):
                self._add_pods([new], [False], ns)
            elif isinstance(new, Node):
                self.sched.add_node(new)
            elif isinstance(new, Namespace):
                self.sched.add_namespace(new)
            else:
                self.sched.add(new)
        except (ManifestError, ValueError) as exc:
            self.warn(f"churn: cannot create {new.KIND} {new.key}: {exc}")
            return ""
        return name

    def _churn_delete(self, obj: Any, name: str, ns: str) -> None:
        try:
            if isinstance(obj, Pod):
                pod = self.sched.get_object("Pod", name, ns)
                if pod is not None:
                    self._delete(pod)
            elif isinstance(obj, Node):
                self.sched.delete_node(name)
            elif not isinstance(obj, Namespace):
                self.sched.delete_object(obj.KIND, name, ns)
        except KeyError:
            pass

    # barrier / sleep -----------------------------------------------------------------------------
    def _is_attempted(self, pod: Pod) -> bool:
        """Bound, or carrying a PodScheduled condition: tried at least once, or gated
        (upstream's scheduler reports SchedulingGated in that condition)."""
        from ..scheduler.scheduler import ERROR, GATED, SCHEDULED, UNSCHEDULABLE

        if pod.node_name:
            return True
        res = self.sched.results.get(pod.uid)
        return res is not None and (res.attempts > 0 or res.status in (SCHEDULED, UNSCHEDULABLE, ERROR, GATED))

    def _counter(self, ns: str, selector: Mapping[str, str] | None, attempted: bool) -> Callable[[], int]:
        """How many pods of ``ns`` (matching ``selector``) are scheduled (or attempted), counted
        incrementally: each look only re-examines the pods not counted yet."""
        if not selector and not attempted:
            return lambda: self.scheduled.get(ns, 0)
        ok = self._is_attempted if attempted else (lambda p: bool(p.node_name))
        counted = [0]
        pending = [p.uid for p in self.sched.pods_in_namespace(ns) if _labels_match(p.labels, selector)]

        def count() -> int:
            still = []
            pods = self.sched.pods
            for uid in pending:
                pod = pods.get(uid)
                if pod is None:
                    continue
                if ok(pod):
                    counted[0] += 1
                else:
                    still.append(uid)
            pending[:] = still
            return counted[0]

        return count

    def _op_barrier(self, op: Op, index: int) -> None:
        f = op.fields
        namespaces = list(f.get("namespaces") or [])
        for ns in namespaces:
            if ns not in self.pods_per_namespace:
                raise WorkloadError(f"unknown namespace {ns}")
        if not namespaces:
            namespaces = list(self.pods_per_namespace)
        selector = f.get("labelSelector") or {}
        stage = f.get("stageRequirement") or "Scheduled"
        for ns in namespaces:
            want = self.pods_per_namespace[ns]
            count = self._counter(ns, selector, stage == "Attempted")
            self._wait(lambda count=count, want=want: count() >= want,
                       f"{want} pods to be {stage.lower()} in namespace {ns}",
                       lambda ns=ns, want=want: self._pending_detail(ns, want))
        if stage != "Attempted":
            if not f.get("namespaces"):
                self.pods_per_namespace = {}
            else:
                for ns in namespaces:
                    self.pods_per_namespace.pop(ns, None)

    def _op_sleep(self, op: Op, index: int) -> None:
        self._run_for(float(op.fields.get("duration") or 0.0))

    # metrics -------------------------------------------------------------------------------------
    def _start_collecting(self, name: str, namespaces: list[str], selector: Mapping[str, str] | None) -> None:
        if self.collection is not None:
            raise WorkloadError("metrics collection is overlapping. Probably second collector was started before "
                                "stopping a previous one")
        gc.collect()  # upstream: runtime.GC() before collecting; a full collection here, not mid-phase
        self.collection = _Collection(self, name, namespaces, selector)

    def _stop_collecting(self) -> None:
        if self.collection is None:
            raise WorkloadError("missing startCollectingMetrics operation before stopping")
        items, phase = self.collection.stop()
        self.collection = None
        r = self.result
        r.threshold_errors.extend(apply_threshold(items, r.threshold, r.selector))
        for item in items:
            if r.measured is None and item.data is not None and item.labels.get("Metric") == r.selector.name \
                    and _labels_match(item.labels, r.selector.labels):
                r.measured = item.data.get(r.selector.data_bucket)
        r.data_items.extend(items)
        r.phases.append(phase)
        if r.measured is None and r.selector.name == "SchedulingThroughput" and r.selector.data_bucket == "Average" \
                and phase.pods_per_second is not None and not any(
                    i.data for i in items if i.labels.get("Metric") == "SchedulingThroughput"):
            # fewer than two 1 s samples (fastsched finished too fast): the phase's overall rate
            # stands in for the average, and is what the threshold is checked against
            r.measured = phase.pods_per_second
            r.measured_overall = True
            if r.threshold and not (r.measured > r.threshold):
                r.threshold_errors.append(
                    f"{self.collection_label(phase)}: expected overall pods/s to be higher (no "
                    f"SchedulingThroughput samples): got {r.measured:f}, want {r.threshold:f}")

    def collection_label(self, phase: PhaseStats) -> str:
        return f"{self.tc.name}/{self.w.name}/{phase.name}"

    def _op_startCollectingMetrics(self, op: Op, index: int) -> None:
        f = op.fields
        self._start_collecting(f.get("name", ""), list(f.get("namespaces") or []), f.get("labelSelector"))

    def _op_stopCollectingMetrics(self, op: Op, index: int) -> None:
        self._stop_collecting()

    # createAny / updateAny -----------------------------------------------------------------------
    def _any_object(self, op: Op, i: int, count: int) -> Any:
        f = op.fields
        what = f"{op.path}.templatePath"
        path = f["templatePath"]
        env = {**(f.get("templateParams") or {}), "Index": i, "Count": count}
        text = self._render(path, what, env)
        doc = self._document(text, path, what)
        kind = doc.get("kind")
        ns = f.get("namespace") or ""
        if ns and kind in CLUSTER_SCOPED_KINDS:
            raise WorkloadError(f'namespace "{ns}" set for "{path}", but {kind} has scope "root"')
        if not ns and kind not in CLUSTER_SCOPED_KINDS:
            raise WorkloadError(f'namespace not set for "{path}", but {kind} has scope "namespace"')
        if ns:
            doc = {**doc, "metadata": {**(doc.get("metadata") or {}), "namespace": ns}}
        return self._object(doc, path, what)

    def _op_createAny(self, op: Op, index: int) -> None:
        f = op.fields
        if f.get("namespace"):
            self._ensure_namespace(f["namespace"])
        count = int(f["count"]) if f.get("count") is not None else 1
        wall = time.perf_counter()
        for i in range(count):
            obj = self._any_object(op, i, count)
            try:
                if isinstance(obj, Pod):
                    self._add_pods([obj], [False], obj.namespace)
                elif isinstance(obj, Namespace):
                    self.sched.add_namespace(obj)
                    self.pods_per_namespace.setdefault(obj.name, 0)
                else:
                    self.sched.add(obj)
            except (ManifestError, ValueError) as exc:
                raise WorkloadError(str(exc)) from None
        self._elapse(wall)

    # DRA ops (fastsched.dra.perf_ops) ----------------------------------------------------------
    def _op_createResourceDriver(self, op: Op, index: int) -> None:
        from ..dra.perf_ops import create_resource_driver
        wall = time.perf_counter()
        create_resource_driver(self.sched, op.fields["driverName"], op.fields["nodes"],
                               int(op.fields.get("maxClaimsPerNode") or 0))
        self._elapse(wall)

    def _op_createResourceClaims(self, op: Op, index: int) -> None:
        from ..dra.perf_ops import create_resource_claims
        self._ensure_namespace(op.fields["namespace"])
        wall = time.perf_counter()
        text = self.config.read_template(op.fields["templatePath"], f"{op.path}.templatePath")
        create_resource_claims(self.sched, yaml.safe_load(text), int(op.fields.get("count") or 0),
                               op.fields["namespace"])
        self._elapse(wall)

    def _op_allocResourceClaims(self, op: Op, index: int) -> None:
        from ..dra.perf_ops import alloc_resource_claims
        wall = time.perf_counter()
        try:
            alloc_resource_claims(self.sched, op.fields.get("namespace") or None, self.seed)
        except RuntimeError as exc:
            raise WorkloadError(str(exc)) from None
        self._elapse(wall)

    def _op_updateAny(self, op: Op, index: int) -> None:
        f = op.fields
        if f.get("namespace"):
            self._ensure_namespace(f["namespace"])
        count = int(f["count"]) if f.get("count") is not None else 1
        rate = int(f.get("updatePerSecond") or 0)
        done = [0]

        def update(i: int) -> None:
            obj = self._any_object(op, i, count)
            self._update(obj, op)
            done[0] += 1

        if rate <= 0:
            for i in range(count):
                update(i)
            return
        interval = 1.0 / rate

        def tick(i: int = 0) -> None:
            update(i)
            if i + 1 < count:
                self.background.append(self.clock.schedule(self.clock.now() + interval, lambda: tick(i + 1),
                                                           PRIORITY_CLUSTER))

        errors: list[WorkloadError] = []

        def safe_tick() -> None:
            try:
                tick(0)
            except WorkloadError as exc:
                errors.append(exc)

        if count:
            self.background.append(self.clock.schedule(self.clock.now() + interval, safe_tick, PRIORITY_CLUSTER))
        self._wait(lambda: done[0] >= count or bool(errors), f"{count} objects to be updated")
        if errors:
            raise errors[0]

    def _update(self, obj: Any, op: Op) -> None:
        sched = self.sched
        try:
            if isinstance(obj, Pod):
                old = sched.get_object("Pod", obj.name, obj.namespace)
                if old is None:
                    raise WorkloadError(f'pods "{obj.name}" not found')
                new = obj.replace(uid=old.uid, node_name=obj.node_name or old.node_name)
                sched.update_pod(new)
            elif isinstance(obj, Node):
                if sched.cache.get_node(obj.name) is None:
                    raise WorkloadError(f'nodes "{obj.name}" not found')
                sched.update_node(obj)
            elif isinstance(obj, Namespace):
                sched.add_namespace(obj)
            else:
                sched.update_object(obj)
        except KeyError as exc:
            raise WorkloadError(f"{op.path}: {exc.args[0] if exc.args else exc}") from None
        except (ManifestError, ValueError) as exc:
            raise WorkloadError(str(exc)) from None


# ------------------------------------------------------------------------------------------------
# entry points
# ------------------------------------------------------------------------------------------------
def run_workload(config: PerfConfig, test_case: str | TestCase, workload: str | Workload, *, topic: str | None = None,
                 seed: int = 0, progress: Callable[[dict], None] | None = None, scheduler_config: Any = None,
                 registry: Any = None, prebind_init: bool = False, keep_scheduler: bool = False) -> WorkloadResult:
    """Run one workload of one test case; never raises for a failing workload (see
    :attr:`WorkloadResult.status`). ``scheduler_config`` (anything :func:`~fastsched.load_config`
    takes) replaces the test case's ``schedulerConfigPath``; ``registry`` adds out-of-tree plugins
    (upstream's ``outOfTreePluginRegistry``); ``prebind_init`` binds the pods of createPods ops
    that precede the measured phase round-robin instead of scheduling them (a fast set-up for
    quick benchmarks); ``keep_scheduler`` keeps the Scheduler in the result, for inspection."""
    tc = test_case if isinstance(test_case, TestCase) else config.test_case(test_case)
    if isinstance(workload, Workload):
        w = workload
    else:
        matches = [x for x in tc.workloads if x.name == workload]
        if not matches:
            raise PerfConfigError(f"{config.source}: test case {tc.name} has no workload {workload!r}; known: "
                                  f"{', '.join(x.name for x in tc.workloads)}")
        w = matches[0]
    ex = _Executor(config, tc, w, topic=topic, seed=seed, progress=progress, scheduler_config=scheduler_config,
                   registry=registry, prebind_init=prebind_init, keep_scheduler=keep_scheduler)
    return ex.run()


def select_workloads(config: PerfConfig, *, name: str | None = None, workload: str | None = None,
                     label_filter: str | None = "performance") -> list[tuple[TestCase, Workload]]:
    """The (test case, workload) pairs to run: ``name`` picks a test case, ``workload`` a
    workload name, ``label_filter`` keeps those whose labels (test case's + workload's) pass
    upstream's filter."""
    cases = [config.test_case(name)] if name else config.test_cases
    out = []
    for tc in cases:
        for w in tc.workloads:
            if workload is not None and w.name != workload:
                continue
            if label_filter and not label_filter_enabled(label_filter, [*tc.labels, *w.labels]):
                continue
            out.append((tc, w))
    if workload is not None and not out:
        known = sorted({w.name for tc in cases for w in tc.workloads})
        raise PerfConfigError(f"{config.source}: no workload named {workload!r}"
                              + (f" in test case {name}" if name else "")
                              + (f" passes the label filter {label_filter!r}" if label_filter else "")
                              + f"; known: {', '.join(known)}")
    return out


def run_perf(config: PerfConfig, *, name: str | None = None, workload: str | None = None,
             label_filter: str | None = "performance", topic: str | None = None, seed: int = 0,
             progress: Callable[[dict], None] | None = None, on_start: Callable[[TestCase, Workload], None] | None = None,
             on_result: Callable[[WorkloadResult], None] | None = None, **options: Any) -> PerfReport:
    """Run every selected workload (see :func:`select_workloads`) one after another; ``topic``
    picks per-topic thresholds (default: the config's folder name, as upstream's topics are)."""
    if topic is None:
        topic = config.base_dir.name or None
    results = []
    for tc, w in select_workloads(config, name=name, workload=workload, label_filter=label_filter):
        if on_start is not None:
            on_start(tc, w)
        r = run_workload(config, tc, w, topic=topic, seed=seed, progress=progress, **options)
        results.append(r)
        if on_result is not None:
            on_result(r)
    return PerfReport(results, topic)
