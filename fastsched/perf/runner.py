"""Run scheduler_perf workloads on a fastsched Scheduler, as upstream's ``WorkloadExecutor`` does.

**Time.** Upstream runs the scheduler, the test's pod creation, churn tickers and the throughput
collector concurrently, in wall time. fastsched runs them on one thread, on the Scheduler's
:class:`~fastsched.clock.VirtualClock`, which here *advances by the wall-clock time fastsched
spends working* (scheduling cycles, creating objects) and *jumps over idle waits* (a sleep op, a
backoff, the next churn tick while nothing is queued). So every rate is in wall-clock seconds of
fastsched's own work, idle waits cost no real time but count as time passing (as they do
upstream), and a run is reproducible in everything but the measured durations. With ``cpu_time``
(``fastsched perf --cpu-time``) the work is counted in the process's CPU seconds instead, so other
load on a shared machine does not lower the rates. The scheduler
works whenever the workload waits (a ``createPods`` waiting for its pods, a ``barrier``, a
``sleep``); churn, ``deletePodsPerSecond`` and ``updatePerSecond`` tickers and the throughput
sampler are events on the same clock.

**Throughput** is measured as upstream's ``throughputCollector`` measures it: pods of the watched
namespaces (and label selector) going from unbound to bound are counted, those already bound when
the collection starts included (the informer's Add events); a tick every second of the run's
clock from the collection's start counts the binds up to its own time; sampling starts at the
first tick with a count > 0, and that first sample is discarded; an interval with no new pod is
merged into the next one, whose rate is recorded once per merged second; the interval after the
last tick is dropped. ``Average`` is the mean of the samples, ``PercNN`` the sorted sample at
``ceil(n*NN/100)-1``. The wait that ends a measured phase sees its pods done at upstream's 1 s poll
(immediately, then every second), so the ticks between the last bind and that poll still sample
(the scheduler does not run on meanwhile: ``_wait``). A phase that keeps no sample has no SchedulingThroughput, as upstream's: a warning,
no measured value, no threshold check (fastsched's own overall pods/s is in the phase's stats,
never in its place).

**Latency metrics** use upstream's names and data-item shape (milliseconds, ``Perc50/90/95/99`` and
``Average``) from what fastsched records during the collection window: each scheduling attempt's
wall time (``scheduler_scheduling_attempt_duration_seconds``, all results together: fastsched does
not split them by result), each pod's creation-to-bind time (``scheduler_pod_scheduling_duration_
seconds``), and the framework's extension point and plugin durations (``Average`` only: fastsched
keeps their count and sum, not a histogram). Percentiles are exact over the samples, where
upstream interpolates Prometheus buckets.

This module holds the executor (its clock, templates, waits and the loop over a workload's ops)
and the entry points; the op handlers are in :mod:`fastsched.perf.ops`, the collectors and the
results in :mod:`fastsched.perf.metrics`.
"""
from __future__ import annotations

import gc
import math
import time
import warnings
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np
import yaml

from ..api import ManifestError, ManifestWarning, Namespace, Pod
from ..api.labels import required_node_affinity_matches
from ..api.names import NameGenerator
from ..errors import FastschedError
from ..util.collector import FULL_COLLECTION_EVERY, full_collections_deferred
from ..util.goyaml import GoYAMLTypedLoader
from .config import Op, PerfConfig, PerfConfigError, TestCase, Workload, label_filter_enabled
# WorkloadError, the results and CLUSTER_SCOPED_KINDS are re-exported (__all__): users import them from here
from .errors import WorkloadError
from .gates import gated_registry, not_modelled_gate, scheduler_feature_gates, split_gates
from .gotemplate import Template, TemplateError
from .metrics import Collection, DataItem, PerfReport, WorkloadResult
from .ops import CLUSTER_SCOPED_KINDS, WorkloadOps
from .topics import topic_options

__all__ = ["DataItem", "WorkloadResult", "PerfReport", "WorkloadError", "run_workload", "run_perf",
           "rescale_workload", "cluster_count_params", "CLUSTER_SCOPED_KINDS", "MODELLED_KINDS", "WAIT_TIMEOUT"]

#: libyaml's loader when PyYAML has it (as fastsched.api.load): rendered templates of many objects
#: (v1.37's DRA ResourceSlices: 500 of 10 devices) take minutes to parse in pure Python
_YAML_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

#: upstream's waitUntilPodsScheduledInNamespace timeout (10 minutes)
WAIT_TIMEOUT = 600.0
#: upstream's waitUntilPodsScheduledInNamespace / waitUntilPodsAttemptedInNamespace poll period
WAIT_POLL_INTERVAL = 1.0
#: scheduling attempts between two looks at the clock (bounds the sampler's time resolution)
CHUNK = 32

#: with ``cpu_time``, pods bound within this much wall time of the last reading of the process
#: CPU clock share that reading (see ``_Executor._bound_work``)
BOUND_CLOCK_REUSE = 50e-6


def _modelled_kinds() -> frozenset[str]:
    from ..api import SUPPORTED_KINDS
    return frozenset(SUPPORTED_KINDS)


MODELLED_KINDS = _modelled_kinds()


class _Skip(Exception):
    pass


def _yaml_problem(exc: yaml.YAMLError) -> str:
    """A YAML error's problem and its line (PyYAML prints the mark on a line of its own)."""
    lines = str(exc).splitlines()
    problem = getattr(exc, "problem", None)
    mark = getattr(exc, "problem_mark", None)
    if problem and mark is not None:
        return f"line {mark.line + 1}: {problem}"
    return lines[0] if lines else type(exc).__name__


# ------------------------------------------------------------------------------------------------
# executor
# ------------------------------------------------------------------------------------------------
class _Executor(WorkloadOps):
    """One workload run (upstream's ``WorkloadExecutor``)."""

    def __init__(self, config: PerfConfig, tc: TestCase, w: Workload, *, topic: str | None, seed: int,
                 progress: Callable[[dict], None] | None, scheduler_config: Any, registry: Any,
                 prebind_init: bool, keep_scheduler: bool, cpu_time: bool = False,
                 wait_timeout: float = WAIT_TIMEOUT):
        self.config, self.tc, self.w = config, tc, w
        #: how long (on the run's clock) a wait on pods may last (upstream's 10 minutes)
        self.wait_timeout = wait_timeout
        #: what a unit of fastsched's work costs in virtual time: wall time, or with ``cpu_time``
        #: this process's CPU time (steadier on a machine shared with other work)
        self.work_clock: Callable[[], float] = time.process_time if cpu_time else time.perf_counter
        #: what the topic's own test file adds (fastsched.perf.topics), by the config's folder
        self.topic_options = topic_options(config.base_dir.name)
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
        self.parsed: dict[tuple, Any] = {}
        self.warned: set[str] = set()
        self.pods_per_namespace: dict[str, int] = {}  # upstream's numPodsScheduledPerNamespace
        self.scheduled: dict[str, int] = {}           # bound pods per namespace, now
        self.created_at: dict[str, float] = {}
        self.finalizer_uids: set[str] = set()
        self.collection: Collection | None = None
        self.background: list[Any] = []                # timers of churn / tickers to stop at the end
        self.pending_steady: list[Pod] = []
        self.steady: dict[str, Callable[[], Any]] = {}
        self.steady_counts: dict[str, int] = {}
        self.next_node_index = 0
        self.in_step = False
        self.step_wall = 0.0
        #: the last (wall, work clock) reading taken for a bound pod (``_bound_work``), kept when
        #: the work clock is the process CPU clock
        self.reuse_bound_reading = cpu_time
        self.wall_clock: Callable[[], float] = time.perf_counter
        self.bound_reading = (-math.inf, -math.inf)
        self.last_progress = 0.0
        self.op_index = 0
        self.n_ops = 0
        self.opcode = ""
        self.pods_created = 0
        self.pods_bound = 0
        #: scheduling attempts at which the waits' own next full collection runs (see _step)
        self.full_collection_at = FULL_COLLECTION_EVERY
        self.gates: Any = None  # the Scheduler's FeatureGates (API objects are loaded with them)

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
            return load_config(path, feature_gates=self.gates)
        except (ConfigError, OSError) as exc:
            raise WorkloadError(f"schedulerConfigPath {self.tc.scheduler_config_path}: {exc}") from None

    def _build_scheduler(self) -> None:
        from ..clock import VirtualClock
        from ..scheduler import Scheduler

        gates = {**self.tc.feature_gates, **self.w.feature_gates}
        modelled, ignored = split_gates(gates)
        for gate, value in ignored.items():
            self.warn(f"feature gate {gate}={str(value).lower()} is not modelled by fastsched: ignored "
                      "(kube-scheduler v1.37's default behaviour runs)")
        self.gates = scheduler_feature_gates(modelled)
        with gated_registry(modelled):
            self.sched = Scheduler(self._scheduler_config(), registry=self.registry, seed=self.seed,
                                   clock=VirtualClock(), feature_gates=self.gates)
        # scheduler_perf's API server runs with --disable-admission-plugins=ServiceAccount,
        # TaintNodesByCondition,Priority (util.go: mustSetupCluster): a PodGroup keeps the
        # spec.priority its template writes (workload_preemption's 8888888 has no class)
        self.sched.cluster.priority_admission = False
        self.clock = self.sched.clock
        self.sched.bound_callbacks.append(self._on_bound)
        self.sched.preemption_callbacks.append(self._on_preempted)

    # -- the clock ---------------------------------------------------------------------------------
    def _elapse(self, wall_start: float) -> None:
        """Advance virtual time by the wall time spent since ``wall_start`` (running due events)."""
        self.clock.advance_to(self.clock.now() + (self.work_clock() - wall_start))

    def _attempts(self) -> int:
        a = self.sched.metrics.attempts
        return a["scheduled"] + a["unschedulable"] + a["error"]

    def _step(self) -> bool:
        """Up to CHUNK scheduling attempts at the current time; then time moves on by their cost.
        Whether any attempt was made."""
        before = self._attempts()
        self.in_step = True
        self.step_wall = start = self.work_clock()
        try:
            self.sched.run(until=self.clock.now(), max_attempts=CHUNK, results=False)
        finally:
            self.in_step = False
        if self.pending_steady:
            self._steady_replace()
        after = self._attempts()
        # The waits (_wait, _run_for) defer the collector's passes over the old generation, as
        # Scheduler.run does within one call: between its calls of CHUNK attempts the runner's
        # own work (a steady state's replacement pods and their claims) would otherwise start
        # them, a full pass over the whole heap (~90 ms at 500 nodes, ~10% of
        # SchedulingWithResourceClaimTemplate/match_empty's phase). Its own full collection runs
        # every FULL_COLLECTION_EVERY attempts instead (the scheduler's count per call never
        # gets there in calls of CHUNK). The cadence is anchored at multiples of
        # FULL_COLLECTION_EVERY, as Scheduler.run's: counting from ``after`` instead let a step
        # that passed the mark by a few attempts push every later mark back by as many (one
        # collection in 6 attempts instead of 5 where steps make 2 attempts).
        if after >= self.full_collection_at:
            if gc.isenabled():  # (a caller who turned the collector off wants no pass)
                gc.collect()
            # the next mark after ``after`` (a step of many attempts owes one pass, not several)
            self.full_collection_at += FULL_COLLECTION_EVERY * ((after - self.full_collection_at) // FULL_COLLECTION_EVERY + 1)
        did = after != before
        self._elapse(start)
        if self.progress is not None and (now := time.perf_counter()) - self.last_progress > 0.25:
            self.last_progress = now
            self._report_progress()
        return did

    def _report_progress(self) -> None:
        if self.progress is not None:
            self.progress({"workload": self.result.name, "op": self.op_index, "ops": self.n_ops,
                           "opcode": self.opcode, "pods_created": self.pods_created, "pods_bound": self.pods_bound})

    def _wait(self, done: Callable[[], bool], what: str, pending: Callable[[], str] | None = None,
              timeout: float | None = None, poll: bool = False) -> None:
        """Let the scheduler work (and time pass) until ``done()``, for at most ``timeout``
        seconds of the run's clock (default: the run's ``wait_timeout``, upstream's 10 minutes).
        The deadline holds while the scheduler keeps working, as upstream's poll times out however
        busy the scheduler is: a wait whose pods keep failing (each failed attempt, a fruitless
        preemption over every node, is work) ends at it instead of going on for as long as the
        attempts last.

        ``poll``: a scheduler_perf wait on scheduled pods, upstream's ``wait.PollUntilContextTimeout
        (1s, immediate)``, which sees the pods done at the first poll (the wait's start, then every
        second) at or after the moment they are. While a collection runs, that poll is where the
        phase and its throughput sampling end, so a tick between the last bind and the poll
        samples the last binds: the collection is told the poll's time (``Collection.poll_end``).
        The wait itself still ends when the pods are done (the scheduler does not run on to the
        poll: in a workload like PreemptionAsync, churn's preemptors would evict the measured pods
        meanwhile, a race upstream's faster first poll wins)."""
        if timeout is None:
            timeout = self.wait_timeout
        start = self.clock.now()
        deadline = start + timeout
        with full_collections_deferred():  # see _step
            while not done():
                if self._step():
                    if self.clock.now() > deadline:
                        detail = pending() if pending is not None else ""
                        raise WorkloadError(f"timed out after {timeout:g}s waiting for {what}{detail}")
                    continue
                upcoming = self.clock.peek()
                if upcoming is None or upcoming > deadline:
                    detail = pending() if pending is not None else ""
                    if upcoming is not None:
                        self.clock.advance_to(deadline)
                        raise WorkloadError(f"timed out after {timeout:g}s waiting for {what}{detail}")
                    raise WorkloadError(f"waiting for {what}: nothing can make progress any more{detail}")
                self.clock.advance_to(upcoming)
        if poll and self.collection is not None:
            self.collection.poll_end = start + math.ceil((self.clock.now() - start) / WAIT_POLL_INTERVAL) \
                * WAIT_POLL_INTERVAL

    def _run_for(self, seconds: float) -> None:
        """Let the scheduler work and time pass for ``seconds`` (virtual)."""
        end = self.clock.now() + seconds
        with full_collections_deferred():  # see _step
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
        at = self.clock.now() + (self._bound_work() - self.step_wall if self.in_step else 0.0)
        if self.collection is not None:
            self.collection.on_bound(pod, self.created_at.get(pod.uid), at)
        if ns in self.steady:
            self.pending_steady.append(pod)

    def _bound_work(self) -> float:
        """The work clock for a pod bound in the current step. Reading the process CPU clock is a
        system call (~2 us here: a gang's released members bind at ~13 us each, so the reading
        was ~2% of the phase it measures); a pod bound within :data:`BOUND_CLOCK_REUSE` of wall
        time after the last reading in this step takes that reading (its bind time is then early
        by at most that much CPU time per thread: nothing against the throughput's 1 s samples
        and the latencies' buckets). A wall-clock work clock is read each time (it costs no more
        than the wall clock)."""
        work = self.work_clock
        if not self.reuse_bound_reading:
            return work()
        wall = self.wall_clock()
        last_wall, last_work = self.bound_reading
        if wall - last_wall < BOUND_CLOCK_REUSE and last_work >= self.step_wall:
            return last_work
        now = work()
        self.bound_reading = (wall, now)
        return now

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

    def _document(self, text: str, path: str, what: str, kind: str | None = None) -> dict:
        """The one object of ``text`` as upstream's ``yaml.UnmarshalStrict`` reads it: scalars
        resolved as go-yaml v2, a key set twice an error, and, decoded into a typed ``kind``
        (Pod, Node, ...: :data:`~fastsched.api.schema.TYPED_YAML_KINDS`), numbers and bools in
        string fields turned into their text (:func:`~fastsched.api.schema.typed_yaml`); with no
        ``kind`` (createAny's Unstructured, churn's YAMLToJSONStrict) nothing is converted."""
        from ..api.schema import TYPED_YAML_KINDS, typed_yaml

        try:
            docs = [d for d in yaml.load_all(text, Loader=GoYAMLTypedLoader) if d is not None]
            if len(docs) == 1 and isinstance(docs[0], dict):
                return typed_yaml(docs[0], kind if kind in TYPED_YAML_KINDS else None)
        except yaml.YAMLError as exc:
            raise WorkloadError(f"{what}: {path}: invalid YAML after rendering: {_yaml_problem(exc)}") from None
        raise WorkloadError(f"{what}: {path}: expected one object, got {len(docs)} documents")

    def _object(self, doc: dict, path: str, what: str, kind: str | None = None) -> Any:
        """Decode one object strictly (unknown fields are errors, as ``yaml.UnmarshalStrict``;
        field names that match only case-insensitively are read, as Go's decoder reads them)."""
        from ..api import load_objects

        doc = self._decoded(doc, path, what, kind)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", ManifestWarning)
            try:
                objs = load_objects([doc], feature_gates=self.gates)
            except ManifestError as exc:
                raise WorkloadError(f"{what}: {path}: {exc}") from None
        for c in caught:
            self.warn(f"{path}: {c.message}")
        return objs[0]

    def _decoded(self, doc: dict, path: str, what: str, kind: str | None = None) -> dict:
        """:meth:`_object`'s strict decoding alone (kind, field types, unknown fields): the
        document, its kind set."""
        from ..api.schema import decode, schema_kinds

        doc_kind = doc.get("kind") or kind
        if kind is not None and doc_kind != kind and type(doc_kind) is not str and kind in schema_kinds():
            # a kind of another type: UnmarshalStrict into the op's type refuses it at TypeMeta.kind
            doc_kind = kind
        if kind is not None and doc_kind != kind:
            raise WorkloadError(f"{what}: {path}: expected a {kind}, got kind {doc_kind!r}")
        if doc_kind not in MODELLED_KINDS:
            raise WorkloadError(f"{what}: {path}: objects of kind {doc_kind!r} are not modelled by fastsched")
        if doc_kind in schema_kinds():
            try:
                decoded = decode(doc, doc_kind)
            except ManifestError as exc:  # (a wrong type: the op's error, not a traceback)
                raise WorkloadError(f"{what}: {path}: {exc}") from None
            if decoded.unknown:
                fields = ", ".join(f'unknown field "{p}"' for p in decoded.unknown)
                raise WorkloadError(f"{what}: {path}: strict decoding error: {fields}")
        return {**doc, "kind": doc_kind}

    def _parsed(self, path: str, what: str, text: str, kind: str) -> Any:
        key = (path, text)
        obj = self.parsed.get(key)
        if obj is None:
            obj = self.parsed[key] = self._object(self._document(text, path, what, kind), path, what, kind)
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
            reason = self.tc.not_modelled() or not_modelled_gate({**self.tc.feature_gates, **self.w.feature_gates})
            if reason:
                raise _Skip(reason)
            resolved = self.tc.ops_for(self.w)
            unused = resolved.unused_params
            if self.topic_options.params_read is not None:
                read = set(self.topic_options.params_read(self.w))
                unused = [p for p in unused if p not in read]
            if unused:
                raise WorkloadError(f"the parameters {unused} are defined on workload "
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
                except FastschedError as exc:
                    # WorkloadError, PerfConfigError, and what the Scheduler refuses on the op's
                    # behalf (a namespace name that is not a DNS label): the workload fails, the
                    # run goes on to the next one
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
            if r.status == "failed":
                r.unschedulable_pods = _unschedulable_pods(sched)
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
            paths: list[tuple[str, str, bool]] = []  # (file, the field naming it, rendered?)
            if op.opcode in ("createAny", "updateAny"):
                paths.append((op.fields["templatePath"], f"{op.path}.templatePath", True))
            if op.opcode == "churn":
                paths.extend((p, f"{op.path}.templatePaths[{i}]", False)
                             for i, p in enumerate(op.fields.get("templatePaths") or []))
            for path, field, templated in paths:
                text = self.config.read_template(path, field)
                if templated:
                    env = {**(op.fields.get("templateParams") or {}), "Index": 0, "Count": 1}
                    text = self._render(path, field, env)
                try:
                    doc = yaml.load(text, Loader=GoYAMLTypedLoader)
                except yaml.YAMLError:
                    continue  # reported when the op runs
                kind = doc.get("kind") if isinstance(doc, dict) else None
                if kind and kind not in MODELLED_KINDS:
                    raise _Skip(f"op {op.opcode} creates {kind} objects ({path}), which fastsched does not model")

    def _run_op(self, op: Op, index: int) -> None:
        # the handlers are WorkloadOps' _op_<opcode> methods (fastsched.perf.ops)
        handler = getattr(self, "_op_" + op.opcode)
        handler(op, index)
        if op.opcode == "createNodes" and self.topic_options.node_update is not None:
            wall = self.work_clock()
            self.topic_options.node_update(self)
            self._elapse(wall)


def _unschedulable_pods(sched: Any) -> int:
    """Pods left unbound whose last scheduling attempt found no node for them (Unschedulable:
    every node rejected by Filter, and PostFilter found no victims to make room)."""
    from ..scheduler.result import UNSCHEDULABLE

    return sum(1 for res in sched.results.values() if res.status == UNSCHEDULABLE and not res.pod.node_name)


# ------------------------------------------------------------------------------------------------
# entry points
# ------------------------------------------------------------------------------------------------
def run_workload(config: PerfConfig, test_case: str | TestCase, workload: str | Workload, *, topic: str | None = None,
                 seed: int = 0, progress: Callable[[dict], None] | None = None, scheduler_config: Any = None,
                 registry: Any = None, prebind_init: bool = False, keep_scheduler: bool = False,
                 cpu_time: bool = False, wait_timeout: float = WAIT_TIMEOUT) -> WorkloadResult:
    """Run one workload of one test case; never raises for a failing workload (see
    :attr:`WorkloadResult.status`). ``scheduler_config`` (anything :func:`~fastsched.load_config`
    takes) replaces the test case's ``schedulerConfigPath``; ``registry`` adds out-of-tree plugins
    (upstream's ``outOfTreePluginRegistry``); ``prebind_init`` binds the pods of createPods ops
    that precede the measured phase round-robin instead of scheduling them (a fast set-up for
    quick benchmarks); ``keep_scheduler`` keeps the Scheduler in the result, for inspection;
    ``cpu_time`` advances the virtual clock by the process's CPU time instead of wall time (rates
    that other processes on the machine do not lower); ``wait_timeout`` bounds each wait on pods
    (seconds of the run's clock; upstream's 10 minutes by default): a wait past it fails the
    workload with upstream's ``timed out`` error."""
    if isinstance(wait_timeout, bool) or not isinstance(wait_timeout, (int, float)) or not wait_timeout > 0:
        raise PerfConfigError(f"wait_timeout: Invalid value: {wait_timeout!r}: must be greater than 0")
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
                   registry=registry, prebind_init=prebind_init, keep_scheduler=keep_scheduler,
                   cpu_time=cpu_time, wait_timeout=wait_timeout)
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
             on_result: Callable[[WorkloadResult], None] | None = None, rescale: float | None = None,
             rescale_min_samples: int = 1, **options: Any) -> PerfReport:
    """Run every selected workload (see :func:`select_workloads`) one after another; ``topic``
    picks per-topic thresholds (default: the config's folder name, as upstream's topics are).

    ``rescale`` (a factor > 1): a workload whose SchedulingThroughput phase kept no sample (upstream
    reports no value for it) is run again with the count parameters of its measured createPods
    (:meth:`TestCase.measured_count_params`) multiplied by the factor, and again up to
    :data:`RESCALE_TRIES` times while that still keeps too few samples (by the factor again after a
    run without a sample, by a step from the samples kept otherwise: :func:`_next_step`); the last run is the result's
    :attr:`~WorkloadResult.rescaled`. The original result (``no sample``, no threshold check) is
    unchanged: the rescaled run measures a bigger workload than the config's, reported beside it.
    When that run's extra pods do not fit the config's cluster (a cluster the config fills, as
    DRA's 5000pods_500nodes), it is made again with the cluster's node counts and its init pods
    and claims scaled by the same scale as its pods (:attr:`~WorkloadResult.scaled_cluster_params`; why
    that is conservative: ``_rescaled``).

    ``rescale_min_samples`` (default 1: only a phase without a sample): with ``rescale``, a
    workload whose measured phase kept fewer SchedulingThroughput samples than this is rescaled
    too, and the rescaled runs grow until one keeps that many. Why: upstream's collector
    drops the first 1 s tick with a bind, so a phase ending between the second and third tick
    keeps one sample, the pods bound after the second tick over a whole second: its tail, which
    falls as the scheduler gets faster (BENCHMARKS.md measures with 3)."""
    if rescale is not None:
        _check_factor(rescale)
    _check_min_samples(rescale_min_samples, "rescale_min_samples")
    if topic is None:
        topic = config.base_dir.name or None
    results = []
    for tc, w in select_workloads(config, name=name, workload=workload, label_filter=label_filter):
        if on_start is not None:
            on_start(tc, w)
        r = run_workload(config, tc, w, topic=topic, seed=seed, progress=progress, **options)
        if rescale is not None:
            r.rescaled = rescale_workload(config, r, factor=rescale, min_samples=rescale_min_samples, topic=topic,
                                          seed=seed, **options)
        results.append(r)
        if on_result is not None:
            on_result(r)
    return PerfReport(results, topic)


def rescale_workload(config: PerfConfig, result: WorkloadResult, *, factor: float, min_samples: int = 1,
                     topic: str | None = None, seed: int = 0, **options: Any) -> WorkloadResult | None:
    """``run_perf``'s ``rescale`` for one finished ``result`` of ``config``: None when it passed
    (or fell below its threshold) with at least ``min_samples`` SchedulingThroughput samples, or
    did not pass, or has no measured pods' count parameter to turn up; otherwise the workload run
    again with its measured pods' count parameters times ``factor`` (then by :func:`_next_step`,
    up to :data:`RESCALE_TRIES` runs) until a run keeps ``min_samples``; the last run is returned.
    ``options`` are :func:`run_workload`'s (the original's: ``cpu_time``, ``prebind_init``...)."""
    _check_factor(factor)
    _check_min_samples(min_samples, "min_samples")
    if result.status not in ("passed", "below-threshold") or not _too_few_samples(result, min_samples):
        return None
    tc = config.test_case(result.test_case)
    (w,) = [x for x in tc.workloads if x.name == result.workload]
    return _rescaled(config, tc, w, topic=topic, seed=seed, factor=factor, options=options, original=result,
                     min_samples=min_samples)


def _check_factor(factor: Any) -> None:
    # (True is an int but no factor: refused, as `True > 1` already refused it)
    if isinstance(factor, bool) or not isinstance(factor, (int, float)) or not factor > 1:
        raise PerfConfigError(f"rescale: Invalid value: {factor!r}: must be greater than 1")


def _check_min_samples(v: Any, name: str) -> None:
    if isinstance(v, bool) or not isinstance(v, int) or v < 1:
        raise PerfConfigError(f"{name}: Invalid value: {v!r}: must be an integer of at least 1")


def _too_few_samples(r: WorkloadResult, min_samples: int) -> bool:
    """A SchedulingThroughput workload whose measured phase kept fewer than ``min_samples``."""
    samples = r.throughput_samples
    return samples is not None and samples < min_samples


#: how many times a rescaled run multiplies the measured pods again while it keeps too few samples
RESCALE_TRIES = 3
#: a rescaled run's waits are given this many times the whole run before it on its clock, times
#: the step from it (the same work, the step times over, may take that much longer than linear as
#: the cluster fills), and never less than RESCALE_MIN_WAIT seconds
RESCALE_WAIT_SLACK = 4.0
RESCALE_MIN_WAIT = 60.0


def _rescaled(config: PerfConfig, tc: TestCase, w: Workload, *, topic: str | None, seed: int, factor: float,
              options: dict, original: WorkloadResult, min_samples: int = 1) -> WorkloadResult | None:
    """``run_perf``'s ``rescale``: the workload run with its measured pods' count parameters
    multiplied by ``factor``, then again up to :data:`RESCALE_TRIES` runs in all until its phase
    keeps ``min_samples`` SchedulingThroughput samples; None when the test case has no such
    parameter (a measured createPods with a fixed count: nothing of the workload's own to turn up).

    **The step between tries** (:func:`_next_step`): after a try that kept no sample, ``factor``
    again; after one that kept ``k >= 1`` but fewer than ``min_samples``, a step from ``k`` (the
    smallest integer ``m >= 2`` with ``(k + 1) * m >= min_samples + 2``), not ``factor``: the
    factor compounded (x10 keeping 1 of 3 samples, then x100) measured a workload many times
    bigger than needed, which then overflowed the config's cluster and scaled it x100 too.

    Each run's waits are bounded by the run before it (its whole time on its clock x the step x
    :data:`RESCALE_WAIT_SLACK`, at least :data:`RESCALE_MIN_WAIT`, at most the run's
    ``wait_timeout``, upstream's 10 minutes): a bigger workload that the cluster cannot hold
    (MixedSchedulingBasePod x100: 500,000 measured pods where 5,000 nodes of 4 CPUs hold 200,000
    of 100m) fails every extra pod's attempt and its fruitless preemption over every node, for as
    long as those attempts last. (A check of the cluster's room before the run would refuse
    workloads whose measured pods make room by preempting.)

    **The cluster scaled too.** A workload whose cluster the config fills exactly (DRA's
    5000pods_500nodes: 500 nodes of 10 devices, 2,500 claims allocated before and 2,500 measured
    pods; the extendedresource cases the same with init pods) has no room for more measured pods.
    When a run fails because its pods did not fit (:func:`_pods_did_not_fit`), the same run is
    made again with the cluster's size scaled by the same scale as the measured pods: the
    parameters of :func:`cluster_count_params` (node counts, with the per-node ResourceSlices
    that share them, and the init pods and claims that fill the cluster before the measured
    phase); that run, and every later try (the cluster following each try's scale), is reported
    with ``scaled_cluster_params`` (the values the cluster got) and the failed run's reason in
    ``cluster_scaled_because``, which says that the run before it (passed, so its pods fit the
    same cluster) was smaller: the extra pods overflow it. Only a failed fit scales the cluster:
    a run that is merely slow does not. Why a pass of it is conservative evidence
    for the config's workload: every Filter and Score of every measured pod runs over the scale
    times the nodes (and DRA's allocator over the scale times the slices), so each pod costs
    more than in the config's cluster, never less. Why the init pods and claims are scaled too,
    by the same scale and no more: the measured pods then see the config's fill ratio all
    along (5000pods_500nodes: half the devices taken when they start, all at the end); with the
    config's init count in a cluster the scale times bigger they would start in an emptier one
    (12.5% taken instead of 50%), where fewer nodes are full and each pod finds its feasible
    nodes sooner: cheaper per pod than the config's, which would overstate the rate. A
    parameter that is 0 (no nodes without devices, no init claims) stays 0."""
    names = tc.measured_count_params()
    if not names:
        return None
    previous = original
    previous_scale = 1.0
    run: WorkloadResult | None = None
    scale = 1.0
    step = factor                 # the next try's scale over the run before it (_next_step)
    cluster: list[str] = []       # the cluster's parameters, once a run's pods did not fit
    because = ""
    tries, again = 0, False
    room = measured_pod_room(config, tc, w)
    capped = ""                   # why the scale of the try is below the step's (the room)
    while again or tries < RESCALE_TRIES:
        if not again:
            tries += 1
            scale = previous_scale * step
            capped = ""
            if room is not None and not room.fits(scale):
                # no count parameter makes room on the nodes the measured pods can go to: the
                # biggest try that fits, or none when it is no bigger than the run before it
                top = room.max_scale
                if int(room.measured * top) <= int(room.measured * previous_scale):
                    return _no_bigger_try(tc, w, original, run, room, scale, min_samples)
                capped = f"x{top:.3g} instead of x{scale:g}: {room.describe()}"
                scale = top
        again = False
        scaled = w.scaled(names, scale, cluster)
        budget = min(options.get("wait_timeout", WAIT_TIMEOUT), _rescale_wait(previous, step))
        run = run_workload(config, tc, scaled, topic=topic, seed=seed, **{**options, "wait_timeout": budget})
        run.scaled_params = {n: scaled.params[n] for n in names}
        run.scaled_cluster_params = {n: scaled.params[n] for n in cluster}
        run.cluster_scaled_because = because
        if capped:
            run.warnings.append(f"rescale capped at {capped}")
        if not cluster and _pods_did_not_fit(run):
            # the run before it passed in this same cluster (a failed run ends the tries), so
            # the pods this one added are the ones that found no room
            overflow = (f"the {'original' if previous is original else f'x{previous_scale:g}'} run before it "
                        f"fit the same cluster: the extra pods of x{scale:g} overflow it")
            node_params, fill_params = cluster_count_params(config, tc, w)
            node_params = [n for n in node_params if n not in names]
            if room is not None:
                # the nodes the measured pods can go to are not among those the params scale
                run.reason += f" ({overflow}; no count parameter makes room for them: {room.describe()})"
            elif node_params:
                cluster = [*node_params, *(n for n in fill_params if n not in names and n not in node_params)]
                because = f"{run.reason} ({overflow})"
                again = True  # the same scale, the cluster scaled with it (not a try of its own)
                continue
            run.reason += f" ({overflow}, and no count parameter of a createNodes op sizes the cluster)"
        elif run.status == "failed" and run.reason.startswith("op ") and "timed out after" in run.reason \
                and budget < WAIT_TIMEOUT:
            run.reason += (f" (a rescaled run's waits get {RESCALE_WAIT_SLACK:g}x the step {step:g} times the "
                           f"{previous.virtual_seconds:.3g}s the run before it took, at least {RESCALE_MIN_WAIT:g}s: "
                           "this run did not scale like its workload, e.g. its cluster has no room for the extra "
                           "pods)")
        if run.status not in ("passed", "below-threshold") or not _too_few_samples(run, min_samples):
            break
        previous, previous_scale = run, scale
        step = _next_step(run.throughput_samples or 0, min_samples, factor)
    return run


def _no_bigger_try(tc: TestCase, w: Workload, original: WorkloadResult, run: WorkloadResult | None,
                   room: MeasuredRoom, asked: float, min_samples: int) -> WorkloadResult:
    """``_rescaled``'s end when the next try (``asked`` times the config's measured pods) does
    not fit ``room`` and the biggest that does is no bigger than the run before it: that run,
    saying so, or before any try a ``skipped`` result with the reason (the case cannot be
    measured by scaling its pods)."""
    why = f"no rescaled try bigger than x{1 if run is None else _run_scale(run, room):g} fits: {room.describe()}"
    if run is None:
        return WorkloadResult(test_case=tc.name, workload=w.name, status="skipped", reason=f"not rescaled: {why}",
                              threshold=original.threshold, selector=original.selector)
    note = f"kept fewer than {min_samples} samples and x{asked:g} was asked, but {why}"
    run.reason = f"{run.reason}; {note}" if run.reason else note
    return run


def _run_scale(run: WorkloadResult, room: MeasuredRoom) -> float:
    """A rescaled run's scale of the config's measured pods (its scaled params over ``room.measured``)."""
    return round(sum(v for v in run.scaled_params.values()) / room.measured, 3) if room.measured else 1.0


def _next_step(kept: int, min_samples: int, factor: float) -> float:
    """How much bigger than a rescaled run keeping ``kept`` < ``min_samples`` throughput samples
    the next try is: ``factor`` when it kept none (nothing tells its length: the factor asked
    for); otherwise the smallest integer ``m >= 2`` with ``(kept + 1) * m >= min_samples + 2``.

    Why: upstream's collector drops its first 1 s tick with a bind and keeps one sample per
    whole tick after it, so a phase keeping ``k`` samples lasted at least ``k + 1`` ticks from
    its first (at most ``k + 2``). ``m`` times its pods take about ``m`` times as long, at least
    ``m * (k + 1)`` ticks, and a phase lasting ``min_samples + 1`` ticks past its first keeps
    ``min_samples``; one tick more is the margin for a rate that does not scale linearly (the
    phase's start within its first tick, a cluster filling up). The lower bound ``k + 1`` keeps
    the step from overshooting: the factor again (x10 then x100) measured a workload so much
    bigger that it no longer fit the config's cluster. ``m >= 2`` always holds (``k + 1 <=
    min_samples``), and every try stays bigger than the one before."""
    if kept <= 0:
        return factor
    return float(max(2, -(-(min_samples + 2) // (kept + 1))))


def _rescale_wait(previous: WorkloadResult, factor: float) -> float:
    """The wait timeout of a run ``factor`` (the step) times bigger than ``previous`` (see ``_rescaled``)."""
    return min(WAIT_TIMEOUT, max(RESCALE_MIN_WAIT, RESCALE_WAIT_SLACK * factor * previous.virtual_seconds))


def _pods_did_not_fit(run: WorkloadResult) -> bool:
    """Whether a rescaled ``run`` failed because its pods do not fit the cluster: it failed in a
    wait on pods (timed out, or nothing could make progress any more) with pods left unbound
    whose last attempt found no node (:attr:`WorkloadResult.unschedulable_pods`). The run it
    rescales passed with every pod bound in the same cluster, so such pods are the extra ones
    the cluster has no room for; a run that is merely slow times out with its pods queued or
    bound, none found unschedulable, and is not told to scale its cluster."""
    return (run.status == "failed" and run.unschedulable_pods > 0 and run.reason.startswith("op ")
            and ("timed out after" in run.reason or "nothing can make progress any more" in run.reason))


#: kinds a createAny op makes per node: its count is the cluster's size (a ResourceSlice
#: published for one node, ``spec.nodeName``; a CSINode is named after its node)
def _node_scoped(doc: dict) -> bool:
    kind = doc.get("kind")
    if kind in ("Node", "CSINode"):
        return True
    return kind == "ResourceSlice" and bool((doc.get("spec") or {}).get("nodeName"))


#: kinds whose objects, created before the measured phase, take up the cluster's room (pods, the
#: claims that DRA allocates devices to, the claims that bind volumes)
FILL_KINDS = frozenset({"Pod", "ResourceClaim", "PersistentVolumeClaim"})


def cluster_count_params(config: PerfConfig, tc: TestCase, w: Workload) -> tuple[list[str], list[str]]:
    """``(node params, fill params)`` of workload ``w``, in the template's order: the parameters a
    rescaled run whose pods do not fit scales with its measured pods (see ``_rescaled``).

    Node params: the ``countParam`` of each createNodes op, and of each createAny op whose
    object is per node (a ResourceSlice with ``spec.nodeName``, a CSINode: its template
    rendered for index 0, as the op renders it); these size the cluster (nodes with and without
    devices, their slices). A parameter read elsewhere only through ``templateParams``
    (``numDevices``: the devices of one node) is not a count of the cluster's and is not scaled.

    Fill params: the ``countParam`` of each op before the first measured one that creates what
    takes room (createPods, createAny of a :data:`FILL_KINDS` object, createResourceClaims),
    the init pods and claims. The measured pods' own parameters are in neither list."""
    resolved = tc.ops_for(w).ops
    measured = set(tc.measured_count_params())
    nodes: list[str] = []
    fill: list[str] = []
    collecting = False
    in_measured = False
    for op in resolved:
        ref = op.fields.get("countParam")
        name = ref[1:] if isinstance(ref, str) and ref.startswith("$") else None
        if op.opcode == "startCollectingMetrics":
            collecting = True
        elif op.opcode == "stopCollectingMetrics":
            collecting = False
        if op.opcode == "createPods" and (collecting or op.fields.get("collectMetrics")):
            in_measured = True
        if name is None or name in measured:
            continue
        if op.opcode == "createNodes":
            target: list[str] | None = nodes
        elif op.opcode == "createAny":
            doc = _rendered_object(config, op)
            target = nodes if _node_scoped(doc) else (
                fill if doc.get("kind") in FILL_KINDS and not in_measured else None)
        elif op.opcode in ("createPods", "createResourceClaims") and not in_measured:
            target = fill
        else:
            target = None
        if target is not None and name not in nodes and name not in fill:
            target.append(name)
    return nodes, fill


def _rendered_object(config: PerfConfig, op: Op) -> dict:
    """A createAny op's object for index 0 (its template rendered with the op's resolved
    ``templateParams``), as plain YAML."""
    path = op.fields["templatePath"]
    field = f"{op.path}.templatePath"
    text = config.read_template(path, field)
    env = {**(op.fields.get("templateParams") or {}), "Index": 0, "Count": int(op.fields.get("count") or 0)}
    try:
        doc = yaml.load(Template(text, name=path).execute(env), Loader=GoYAMLTypedLoader)
    except TemplateError as exc:
        raise PerfConfigError(f"{config.source}: {field}: {exc}") from None
    except yaml.YAMLError as exc:
        raise PerfConfigError(f"{config.source}: {field}: {path}: invalid YAML after rendering: "
                              f"{_yaml_problem(exc)}") from None
    return doc if isinstance(doc, dict) else {}


@dataclass(frozen=True)
class MeasuredRoom:
    """The pod slots left for a workload's measured pods when every node they can land on is
    created with a fixed count (:func:`measured_pod_room`): a bound that no scaling of the
    cluster's count parameters raises."""

    #: the measured pods those nodes hold at most (their pod slots less the earlier pods bound there)
    pods: int
    #: the config's measured pods (the sum of the measured createPods' counts)
    measured: int
    #: which nodes, for the reason a capped or refused try gives
    nodes: str

    @property
    def max_scale(self) -> float:
        """The largest scale of the measured pods that still fits."""
        return self.pods / self.measured if self.measured > 0 else math.inf

    def fits(self, scale: float) -> bool:
        return self.measured * scale <= self.pods

    def describe(self) -> str:
        return (f"the measured pods can only go to {self.nodes}, which the config creates with a fixed "
                f"count (no count parameter scales them): room for {self.pods:,} measured pods "
                f"(the config's: {self.measured:,}, at most x{self.max_scale:.3g})")


def measured_pod_room(config: PerfConfig, tc: TestCase, w: Workload) -> MeasuredRoom | None:
    """How many measured pods workload ``w``'s cluster holds by pod count when the only nodes the
    measured pods can land on are created with a fixed ``count`` (no ``countParam`` a rescaled run
    can turn up); None when that cannot be bounded from the config (a measured pod can land on a
    node of a scaled createNodes, nodes come from elsewhere -- createAny, churn --, a template
    differs per index), or the measured pods fit no node.

    Why: a rescaled run scales the measured pods (and, once they overflow, the node counts); for
    pods pinned to a named node (SchedulingDaemonset: every pod's NodeAffinity ``matchFields
    metadata.name In [scheduler-perf-node]``, one node of 90,000 pod slots, ``count: 1``) or a
    cluster of fixed nodes only (SchedulingWhileGated: that one node), neither makes room, so a
    try beyond the room leaves pods unschedulable and scaling the other nodes only makes it
    slower (the x4 SchedulingDaemonset: 120,000 pods on 60,001 nodes, 30,000 of them
    unschedulable, timed out). Read from the config: each createNodes op's node (its template
    rendered for index 0, ``allocatable.pods`` after ``nodeAllocatableStrategy``, ``makeBaseNode``'s
    110 without a template) and each createPods op's pod (``spec.nodeSelector`` and required node
    affinity, upstream's ``GetRequiredNodeAffinity(pod).Match(node)``; a pod with ``spec.nodeName``
    its node alone). The pods of earlier createPods ops that can only land on those nodes too take
    their slots (all of them: pods a later deletePods removes are counted, as they may still be
    there); gated pods (``schedulingGates``) take none. Only the pod count is bounded: taints and
    resources are left to the run (a try that overflows them fails as before)."""
    from ..api import Node

    ops = tc.ops_for(w).ops
    measured_names = set(tc.measured_count_params())
    node_params, _ = cluster_count_params(config, tc, w)
    scaled = set(node_params) | measured_names
    groups: list[tuple[Node, int, bool]] = []  # (the op's node, its count, whether a parameter scales it)
    earlier: list[tuple[Pod, int]] = []        # (a pod of a createPods before the measured one, its count)
    measured: list[tuple[Pod, int]] = []
    collecting = False
    for op in ops:
        f = op.fields
        if op.opcode == "startCollectingMetrics":
            collecting = True
        elif op.opcode == "stopCollectingMetrics":
            collecting = False
        elif op.opcode == "createNodes":
            count = int(f.get("count") or 0)
            node = _static_object(config, f.get("nodeTemplatePath"), f"{op.path}.nodeTemplatePath", "Node",
                                  f.get("templateParams") or {}, count)
            if node is None:
                return None
            if not node.name:
                # createNodes names it generateName + rand.String(5) and labels its hostname so (a
                # node without a name would skip matchFields, as upstream's NodeSelector does):
                # "aaaaa" is outside rand.String's alphabet, so no value names one of these nodes
                name = f"{node.generate_name or 'node-'}aaaaa"
                node = node.replace(name=name, labels={**node.labels, "kubernetes.io/hostname": name})
            pods = ((f.get("nodeAllocatableStrategy") or {}).get("nodeAllocatable") or {}).get("pods")
            if pods is not None:  # NodeAllocatableStrategy overrides the template's allocatable
                try:
                    node = node.replace(allocatable={**node.allocatable, "pods": int(pods)})
                except (TypeError, ValueError):
                    return None
            ref = f.get("countParam")
            groups.append((node, count, isinstance(ref, str) and ref[1:] in scaled))
        elif op.opcode == "createPods":
            count = int(f.get("count") or 0)
            pod = _static_object(config, f.get("podTemplatePath") or tc.default_pod_template_path,
                                 f"{op.path}.podTemplatePath", "Pod", {}, count)
            if pod is None:
                return None
            if collecting or f.get("collectMetrics"):
                measured.append((pod, count))
            elif not measured:  # (pods created after the measured ones do not compete with them)
                earlier.append((pod, count))
        elif op.opcode == "createAny":
            if _rendered_object(config, op).get("kind") in ("Node", "Pod"):
                return None  # nodes or pods made another way: the room is not read from the config
        elif op.opcode not in _ROOM_NEUTRAL_OPS:
            return None      # churn (recreated nodes), pod groups, ...: not bounded here
    if not measured:
        return None

    def lands(pod: Pod, node: Node) -> bool:
        if pod.node_name:
            return pod.node_name == node.name
        return required_node_affinity_matches(pod, node)

    eligible = [g for g in groups if any(lands(p, g[0]) for p, _ in measured)]
    if not eligible or any(g[2] for g in eligible):
        return None
    room = sum(node.allowed_pod_number * count for node, count, _ in eligible)
    for pod, count in earlier:
        takes = [g for g in groups if lands(pod, g[0])]
        if not pod.scheduling_gates and takes and all(any(g is e for e in eligible) for g in takes):
            room -= count
    names = sorted({node.name or f"{node.generate_name}*" for node, _, _ in eligible})
    count = sum(c for _, c, _ in eligible)
    nodes = f"{count:,} node{'s' if count != 1 else ''} ({', '.join(names)})"
    return MeasuredRoom(pods=max(0, room), measured=sum(c for _, c in measured), nodes=nodes)


#: ops that create no node and no pod (a barrier, deletions, namespaces, claims, ...)
_ROOM_NEUTRAL_OPS = frozenset({"createNamespaces", "barrier", "deletePods", "sleep", "startCollectingMetrics",
                               "stopCollectingMetrics", "createResourceDriver", "createResourceClaims",
                               "allocResourceClaims", "updateAny"})


def _static_object(config: PerfConfig, path: str | None, field: str, kind: str, params: dict, count: int) -> Any:
    """The Node or Pod every object of a createNodes/createPods op is (``makeBaseNode`` or
    ``makeBasePod`` without a template), or None when the template renders per index."""
    from ..api import load_objects
    from .ops import _BASE_NODE, _BASE_POD

    if not path:
        # (makeBaseNode names its nodes node-<opIndex>-<random>)
        doc: Any = {**_BASE_NODE, "metadata": {"generateName": "node-"}} if kind == "Node" else _BASE_POD
    else:
        template = Template(config.read_template(path, field), name=path)
        if not template.is_static:
            return None
        try:
            doc = yaml.load(template.execute({**params, "Index": 0, "Count": count}), Loader=GoYAMLTypedLoader)
        except (TemplateError, yaml.YAMLError):
            return None
    if not isinstance(doc, dict):
        return None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ManifestWarning)
        try:
            (obj,) = load_objects([{"kind": kind, **doc}])
        except (ManifestError, ValueError):
            return None
    return obj
