"""Run a :class:`~fastsched.sim.scenario.Scenario` through the Scheduler in virtual time.

:func:`simulate` adds the scenario's initial cluster (namespaces, priority classes, nodes, running
pods) to a :class:`~fastsched.scheduler.Scheduler` on a :class:`~fastsched.clock.VirtualClock`,
then puts everything that happens at a time of its own on that clock, the scheduler's one event
core, and runs the scheduler (``sched.run(until=...)``) over it:

* the **timeline** (lazy: one event on the clock at a time), applied at its times, all events of
  one instant together:

  * **pod arrival** — ``add_pod``; once the pod is bound, its **completion** is an event at
    ``bind time + duration`` (nothing for pods that run forever), applied (``delete_pod``) at its
    exact virtual time, so pods freed by it are placed at that very time;
  * **node add** — ``add_node``;
  * **node drain** — the node is cordoned (``update_node`` with ``spec.unschedulable``), its pods
    are evicted (``delete_pod``) and, when the event's ``reschedule`` is true, re-arrive at once
    as new pods (:func:`~fastsched.sim.events.requeued`: same name and uid, unbound) with the
    same duration, counted from their new bind time;
  * **node remove** — the node's pods are deleted (re-arriving as for a drain when
    ``reschedule``) and the node is deleted;

* **samples**, every ``sample_interval`` and after each node event, ordered after the changes and
  the scheduler's reaction at the same instant (:data:`~fastsched.clock.PRIORITY_SAMPLE`).

Preemption victims (DefaultPreemption) are deleted by the scheduler and do not re-arrive. The run
ends at the scenario's ``until``, or, without one, when the scheduler can make no more progress
and no event (arrival, completion, sample up to the horizon) is left.

**Modelled scheduler time** (the scenario's ``scheduler_time``, or ``simulate(scheduler_time=)``,
see :class:`~fastsched.sim.scenario.SchedulerTime`): each attempt costs virtual time (its measured
wall time, a fixed cost, or a per-node model); the events due while the scheduler is busy happen
at their times, so a burst of arrivals waits in the queue and placement latency, backlog and
throughput show in virtual time as in a cluster. ``scheduler_busy_seconds`` in the summary is the
virtual time charged.

**PodDisruptionBudgets** (the scenario's ``pdbs``) are kept current as the disruption controller
keeps them: after every bind and every deletion of a matching pod their status
(``currentHealthy``, ``desiredHealthy``, ``disruptionsAllowed``, ``expectedPods``) is recomputed
from the running pods they select, so preemption prefers victims whose budget allows a disruption.

**Decision records**: ``simulate(record=...)`` passes ``record`` to the Scheduler ("failures" by
default: the pods that failed at least once keep every attempt); the score arrays of a kept record
are trimmed to its ``RECORD_TOP_SCORES`` best nodes to bound memory. The HTML report shows them.

What is recorded
----------------
* one :class:`PodRecord` per pod handed to the scheduler (every arrival, every re-arrival);
  running pods of the initial cluster are not records (they are counted in ``initial_pods``);
* a time series sampled every ``sample_interval`` virtual seconds, after every node event and at
  the start and end (:data:`TIMESERIES_DOC` lists the columns); a sample shows the cluster once
  the scheduler has placed what it could at that instant;
* a summary (:data:`SUMMARY_DOC`) and the scheduler's metrics (attempts, attempt latencies,
  extension-point and plugin durations).

Fragmentation
-------------
Measured against a *reference pod*: the median cpu request and the median memory request of the
scenario's arriving pods. Over the live, schedulable (not cordoned) nodes, with
``free = allocatable - requested``::

    fragmentation = sum(free cpu on nodes where the reference pod does not fit)
                    / sum(free cpu)

where "does not fit" means free cpu < reference cpu, or free memory < reference memory, or no pod
slot left. 0 means all free cpu is usable by a typical pod; 1 means none is (0 when nothing is
free). Taints and affinity are ignored — it measures resource fragmentation only.

Speed: the per-event work is the scheduler's; the bookkeeping here is O(1) per pod (bind and
preemption are observed through hooks, not by scanning results) and a sample is a few NumPy
reductions over the node table columns.
"""
from __future__ import annotations

import copy
import math
import time
from dataclasses import dataclass, field
from functools import partial
from typing import Any, Callable

import numpy as np

from ..api import Pod
from ..clock import PRIORITY_CLUSTER, PRIORITY_SAMPLE
from ..scheduler import Scheduler
from .events import NodeAdd, NodeDrain, NodeRemove, PodArrival, requeued
from .fragmentation import stranded
from .gangs import GANG_SUMMARY_DOC, GPU_FRAGMENTATION_DOC, GangTracker
from .scenario import Scenario, SchedulerTime
from .storage import CapacityTracker, LocalVolumeProvisioner, storage_summary

__all__ = ["PodRecord", "SimulationResult", "simulate", "SUMMARY_DOC", "TIMESERIES_DOC", "FRAGMENTATION_DOC",
           "PODS_CSV_DOC", "STATUS_DOC"]

#: the score columns a kept decision record holds in a simulation: its best nodes by total
RECORD_TOP_SCORES = 10
#: the attempts a pod's decision records keep in a simulation: its first and its latest ones
RECORD_MAX_ATTEMPTS = 4

#: Final statuses of a record (besides the scheduler's own for never-bound pods:
#: Unschedulable, Pending, Error, Gated, NoProfile).
RUNNING = "Running"
COMPLETED = "Completed"
EVICTED = "Evicted"
PREEMPTED = "Preempted"
BOUND_STATUSES = (RUNNING, COMPLETED, EVICTED, PREEMPTED)

FRAGMENTATION_DOC = ("share of the free cpu (over live, uncordoned nodes) that sits on nodes where the "
                     "reference pod (median cpu and median memory request of the arriving pods) does not fit "
                     "(free cpu or free memory below it, or no pod slot left); 0 when nothing is free")

#: the final status of a record (pods.csv ``status``, summary ``pods_by_status``)
STATUS_DOC = {
    "Running": "bound, and still running at the end",
    "Completed": "bound, ran its duration and ended",
    "Evicted": "bound, then evicted by a node drain or removal (it re-arrives as a new record, "
               "incarnation + 1, when the event reschedules)",
    "Preempted": "bound, then deleted as a preemption victim (it does not re-arrive)",
    "Unschedulable": "never bound: its last attempt was rejected (no node fits; see reason)",
    "Error": "never bound: its last attempt failed with an error",
    "Pending": "never bound: not attempted yet at the end (it arrived as the run ended, or waits in "
               "the queue behind the modelled scheduler time)",
    "Deleted": "never bound: deleted while waiting (e.g. assumed on a node that was drained)",
    "Waiting": "never bound: held at Permit at the end",
    "Gated": "never bound: scheduling gates not removed",
    "NoProfile": "never bound: no profile for its schedulerName",
}

SUMMARY_DOC = {
    "scenario": "the scenario's name", "description": "the scenario's description", "seed": "the seed of the arrivals, node-event picks and tie-breaking",
    "pods_total": "records: pods handed to the scheduler (arrivals and re-arrivals after eviction); "
                  "= pods_scheduled + pods_unschedulable + pods_pending",
    "pods_scheduled": "records that were bound to a node (status Running, Completed, Evicted or Preempted)",
    "pods_unschedulable": "records never bound whose last attempt was rejected (status Unschedulable)",
    "pods_pending": "records never bound for another reason (never attempted, Error, Gated, NoProfile, "
                    "Deleted, Waiting)",
    "pods_by_status": "records by final status (STATUS_DOC); sums to pods_total",
    "pods_per_second": "pods_scheduled / scheduler_seconds (wall-clock throughput of fastsched itself)",
    "scheduler_seconds": "wall-clock seconds spent inside Scheduler calls during the timeline (run, "
                         "add/delete pod, node updates)",
    "setup_seconds": "wall-clock seconds to build the scheduler and add the initial cluster",
    "wall_seconds": "wall-clock seconds of the whole simulation (timeline building, set-up and sampling included)",
    "virtual_seconds": "virtual time at the end",
    "placement_latency_seconds": "bind time - arrival time over scheduled records (virtual seconds): "
                                 "count, p50, p90, p99, mean, max",
    "initial_nodes": "nodes at time 0", "initial_pods": "pods running at time 0 (not records)",
    "final_nodes": "live nodes at the end",
    "node_events": "node events applied, by kind (add, drain, remove)",
    "completions": "records that ran their duration and ended (status Completed)",
    "evictions": "pods deleted by node drains and removals: evicted_records + evicted_initial_pods",
    "evicted_records": "records evicted (status Evicted, or Deleted when evicted before their bind)",
    "evicted_initial_pods": "pods of the initial cluster evicted (they are not records; when the event "
                            "reschedules, each re-arrives as a record with stream 'initial', incarnation 1)",
    "requeued": "evicted pods that re-arrived as new records (drains and removals with reschedule: true)",
    "preemption_victims": "pods deleted by preemption: records (status Preempted) and initial pods",
    "preempted_records": "records whose status is Preempted",
    "attempts": "scheduling attempts by result (scheduled, unschedulable, error); a record may take "
                "several attempts",
    "attempts_total": "sum of attempts",
    "attempt_latency_seconds": "wall-clock seconds per attempt (scheduling + binding cycle): p50, p90, p99",
    "utilization_final": "requested / allocatable per resource over live nodes at the end",
    "utilization_mean": "mean over the samples of the utilization per resource",
    "fragmentation": FRAGMENTATION_DOC,
    "scheduler_time": "the modelled scheduler time (model, scheduling, binding, per_node, scale)",
    "scheduler_busy_seconds": "virtual seconds charged to scheduling attempts by the modelled scheduler "
                              "time (0 with model none)",
    "scheduler_busy_share": "scheduler_busy_seconds / virtual_seconds: how busy the modelled scheduler was",
    "pdbs": "PodDisruptionBudgets at the end: name -> expected pods, current healthy, desired healthy, "
            "disruptions allowed",
    "storage": "claims and volumes at the end ({} without any): claims by phase (Bound, Pending), volumes by phase "
               "(Available, Bound, Released, Failed), volumes provisioned dynamically (still there), StorageClasses, CSINodes",
    "record": "which decision records were kept (all, failures, or none)",
    "records_kept": "decision records (attempts) kept", "record_bytes": "bytes held by their arrays",
    "sample_interval": "virtual seconds between periodic samples", "samples": "rows of timeseries.csv",
    "gangs": "gang jobs of the gang streams (only with one): " + "; ".join(
        f"{k}: {v}" for k, v in GANG_SUMMARY_DOC.items()),
}

PODS_CSV_DOC = {
    "index": "row number, in arrival order",
    "name": "pod name (a re-arrival keeps the evicted pod's name)",
    "namespace": "pod namespace",
    "uid": "pod uid (a re-arrival keeps the evicted pod's uid)",
    "stream": "the arrival stream that made it (scenario arrivals[].name); 'initial' for pods of the "
              "initial cluster that re-arrived after an eviction",
    "incarnation": "0 for a first arrival, n for the n-th re-arrival after an eviction",
    "arrival": "virtual second it was handed to the scheduler",
    "bind_time": "virtual second it was bound (empty: never bound)",
    "latency": "bind_time - arrival, virtual seconds (empty: never bound)",
    "node": "the node it was bound to (empty: never bound)",
    "attempts": "scheduling attempts it took",
    "status": "final status (STATUS_DOC: Running, Completed, Evicted, Preempted, Unschedulable, Error, Pending, ...)",
    "reason": "why: the scheduler's message (FitError text for Unschedulable), or what ended it",
    "end_time": "virtual second it completed, was evicted or preempted (empty: still running or never bound)",
    "duration": "planned run time in seconds once bound, from the scenario (empty: runs forever)",
    "run_seconds": "how long it actually ran: end_time (or the end of the run) - bind_time (empty: never bound)",
    "cpu": "requested cpu, millicores",
    "memory": "requested memory, bytes",
    "priority": "pod priority (from priorityClassName or spec.priority; 0 when unset)",
    "nominated_node": "node preemption nominated for it at the end (empty: none)",
}

TIMESERIES_DOC = {
    "time": "virtual seconds",
    "kind": "step (periodic), start, end, or the node event applied at this time (add, drain, remove); "
            "sampled after the scheduler has acted at that instant",
    "nodes": "live nodes", "cordoned": "live nodes marked unschedulable",
    "pending": "records arrived and not (yet) bound, not deleted",
    "running": "pods bound to live nodes (initial pods included)",
    "arrived_total": "records so far", "bound_total": "records bound so far",
    "util_<resource>": "sum requested / sum allocatable over live nodes (pods: pod count / allowed pods)",
    "fragmentation": FRAGMENTATION_DOC,
    "throughput_virtual": "records bound since the previous sample / virtual seconds since it",
    "throughput_wall": "records bound since the previous sample / scheduler wall seconds since it",
    "scheduler_seconds": "cumulative scheduler wall seconds",
    "gangs_waiting": "gang streams only: gangs created and not started (fewer than min_count members bound)",
    "gang_gpus_held_at_permit": "gang streams only: GPUs requested by gang members waiting at Permit",
    "gpu_fragmentation": "gang streams only: " + GPU_FRAGMENTATION_DOC,
    "gpus_free": "gang streams only: free GPUs over live, uncordoned nodes",
    "gpus_stranded": "gang streams only: of them, GPUs on nodes that cannot host a member of any gang stream",
}


@dataclass
class PodRecord:
    """What happened to one pod handed to the scheduler (one arrival or re-arrival)."""

    index: int
    name: str
    namespace: str
    uid: str
    stream: str
    arrival: float
    duration: float | None
    #: 0 for the first arrival, n for the n-th re-arrival after an eviction
    incarnation: int = 0
    cpu: int = 0  # requested millicores
    memory: int = 0  # requested bytes
    priority: int = 0
    bind_time: float | None = None
    node: str = ""
    attempts: int = 0
    status: str = "Pending"
    reason: str = ""
    #: when it completed, was evicted or preempted
    end_time: float | None = None
    #: how long it ran (end_time, or the end of the run, - bind_time)
    run_seconds: float | None = None
    nominated_node: str = ""
    # runtime state (not reported)
    _result: Any = field(default=None, repr=False, compare=False)
    _timer: Any = field(default=None, repr=False, compare=False)
    _final: str = field(default="", repr=False, compare=False)

    @property
    def scheduled(self) -> bool:
        return self.bind_time is not None

    @property
    def latency(self) -> float | None:
        return None if self.bind_time is None else self.bind_time - self.arrival

    CSV_FIELDS = ("index", "name", "namespace", "uid", "stream", "incarnation", "arrival", "bind_time",
                  "latency", "node", "attempts", "status", "reason", "end_time", "duration", "run_seconds",
                  "cpu", "memory", "priority", "nominated_node")

    @property
    def history(self) -> list:
        """The pod's decision records of this incarnation (see ``simulate(record=...)``)."""
        return list(self._result.history) if self._result is not None else []

    def as_row(self) -> dict:
        return {k: getattr(self, k) for k in self.CSV_FIELDS}


@dataclass
class SimulationResult:
    """What :func:`simulate` returns; :func:`~fastsched.sim.report.write_report` writes it out."""

    scenario: str
    seed: int
    records: list[PodRecord]
    #: one dict per sample (see TIMESERIES_DOC)
    timeseries: list[dict]
    summary: dict
    #: the scheduler's metrics (SchedulerMetrics.as_dict(): attempts, latencies, framework durations)
    metrics: dict
    #: resources with utilization columns, in order
    resources: list[str]
    scheduler: Any = field(default=None, repr=False)
    #: one GangRecord per gang of the gang streams (fastsched.sim.gangs), in creation order
    gangs: list = field(default_factory=list)

    def _repr_html_(self) -> str:
        """Notebooks: the summary numbers with what each means, and how the counts reconcile."""
        import html

        rows = "".join(f"<tr><td><code>{html.escape(r['key'])}</code></td><td style='text-align:right'>"
                       f"{html.escape(r['value'])}</td><td>{html.escape(r['doc'])}</td></tr>"
                       for r in summary_rows(self.summary))
        return (f"<div><b>Simulation {html.escape(self.scenario)} (seed {self.seed})</b>"
                f"<p>{html.escape(reconciliation(self.summary))}</p><table>{rows}</table>"
                f"<p>write_report(result, DIR) writes report.html with the plots, the pods and their "
                f"decision records.</p></div>")


def fmt_number(value: Any, digits: int = 2) -> str:
    """A summary value as the report and the notebook view print it."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, int):
        return f"{value:,}"
    if isinstance(value, float):
        if not math.isfinite(value):
            return ""
        if 0 < abs(value) < 0.01:  # a modelled cost of 2 µs per node must not print as 0.00
            return f"{value:.3g}"
        return f"{value:,.{digits}f}"
    return str(value)


def reconciliation(s: dict) -> str:
    """How the summary's pod counts add up, in one sentence."""
    by_status = ", ".join(f"{k} {v:,}" for k, v in s["pods_by_status"].items())
    return (f"{s['pods_total']:,} pods = {s['pods_scheduled']:,} scheduled + {s['pods_unschedulable']:,} "
            f"unschedulable + {s['pods_pending']:,} pending; by final status: {by_status}. "
            f"Evictions {s['evictions']:,} = {s['evicted_records']:,} pods of this table + "
            f"{s['evicted_initial_pods']:,} pods of the initial cluster (not rows until they re-arrive); "
            f"{s['requeued']:,} re-arrived as new rows. Preemption victims {s['preemption_victims']:,}, of which "
            f"{s['preempted_records']:,} rows (status Preempted), the rest initial pods.")


def summary_rows(s: dict) -> list[dict]:
    """The summary as rows ``{key, value, doc}`` in SUMMARY_DOC's order."""
    rows = []
    for key, doc in SUMMARY_DOC.items():
        if key not in s:
            continue
        value = s[key]
        if isinstance(value, dict):
            parts = []
            for k, v in value.items():
                if k == "definition" or isinstance(v, list):
                    continue
                if isinstance(v, dict):  # e.g. a PDB's status, or the fragmentation's reference pod
                    inner = ", ".join(f"{ik} {fmt_number(iv)}" for ik, iv in v.items())
                    parts.append(f"{k} ({inner})")
                else:
                    parts.append(f"{k} {fmt_number(v)}")
            text = "; ".join(parts) if any("(" in p for p in parts) else ", ".join(parts)
        else:
            text = fmt_number(value, 3)
        rows.append({"key": key, "value": text, "doc": doc})
    return rows


def _nice_step(horizon: float, samples: int = 300) -> float:
    raw = max(horizon, 1e-9) / samples
    for step in (0.1, 0.2, 0.5, 1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600):
        if step >= raw:
            return float(step)
    return float(math.ceil(raw / 3600) * 3600)


def _percentiles(values: list[float]) -> dict:
    if not values:
        return {"count": 0, "p50": None, "p90": None, "p99": None, "mean": None, "max": None}
    a = np.asarray(values, dtype=float)
    p50, p90, p99 = np.percentile(a, [50, 90, 99]).tolist()
    return {"count": int(a.size), "p50": p50, "p90": p90, "p99": p99, "mean": float(a.mean()),
            "max": float(a.max())}


class _PdbStatus:
    """The disruption controller's part for the scenario's PodDisruptionBudgets: their status
    recomputed from the running pods they select whenever one of those pods starts or ends."""

    def __init__(self, sched: Scheduler, pdbs: list):
        self.sched = sched
        self.pdbs = list(pdbs)
        self.healthy = [0] * len(self.pdbs)

    def matching(self, pod: Pod) -> list[int]:
        return [i for i, pdb in enumerate(self.pdbs)
                if pdb.namespace == pod.namespace and pdb.selector is not None and pdb.selector.matches(pod.labels)]

    def count_initial(self, pods: list) -> None:
        for pod in pods:
            if pod.node_name:
                for i in self.matching(pod):
                    self.healthy[i] += 1
        for i in range(len(self.pdbs)):
            self.publish(i)

    def changed(self, pod: Pod, delta: int) -> None:
        if not self.pdbs:
            return
        for i in self.matching(pod):
            self.healthy[i] += delta
            self.publish(i)

    def publish(self, i: int) -> None:
        import dataclasses

        pdb = self.pdbs[i]
        healthy = self.healthy[i]
        expected = healthy  # no controller scale: the selected pods running are the expected ones
        if pdb.min_available is not None:
            desired = _budget_value(pdb.min_available, expected, round_up=True)
        elif pdb.max_unavailable is not None:
            desired = max(expected - _budget_value(pdb.max_unavailable, expected, round_up=True), 0)
        else:
            desired = expected
        updated = dataclasses.replace(pdb, current_healthy=healthy, desired_healthy=desired, expected_pods=expected,
                                      disruptions_allowed=max(healthy - desired, 0))
        self.pdbs[i] = updated
        self.sched.add_pdb(updated)

    def summary(self) -> dict:
        return {p.key: {"expected_pods": p.expected_pods, "current_healthy": p.current_healthy,
                        "desired_healthy": p.desired_healthy, "disruptions_allowed": p.disruptions_allowed}
                for p in self.pdbs}


def _budget_value(value: Any, expected: int, round_up: bool) -> int:
    """An int-or-percent budget field as the disruption controller reads it (percent of expected pods)."""
    if isinstance(value, str) and value.endswith("%"):
        share = float(value[:-1]) * expected / 100.0
        return int(math.ceil(share)) if round_up else int(share)
    return int(value)


class _Simulation:
    def __init__(self, scenario: Any, seed: int | None, progress: Callable | None,
                 sample_interval: float | None, record: Any = "failures",
                 scheduler_time: SchedulerTime | None = None, registry: Any = None):
        self.registry = registry
        sc = scenario if isinstance(scenario, Scenario) else Scenario.load(scenario)
        if seed is not None and int(seed) != sc.seed:
            sc = copy.copy(sc)  # the initial cluster is kept (and shared); arrivals and events re-drawn
            sc.seed = int(seed)
        self.sc = sc
        self.record = record
        self.time_model = scheduler_time if scheduler_time is not None else sc.scheduler_time
        self.busy_seconds = 0.0
        self.progress = progress
        self.wall_start = time.perf_counter()
        nodes, pods = sc.initial_cluster()
        self.initial_nodes, self.initial_pods = nodes, pods
        self.timeline = sc.timeline()  # lazy: pods are made as the loop consumes it
        self.ref_cpu, self.ref_mem = self.timeline.reference_requests()
        self.horizon = float(sc.until) if sc.until is not None else max(self.timeline.last_time(), 1.0)
        self.step = float(sample_interval) if sample_interval else _nice_step(self.horizon)
        if self.step <= 0:
            raise ValueError("sample_interval must be > 0")

        self.records: list[PodRecord] = []
        self.current: dict[str, PodRecord] = {}  # uid -> the record of its current incarnation
        self.incarnations: dict[str, int] = {}
        self.n_pending = 0
        self.bound_total = 0
        self.evictions = 0
        self.evicted_records = 0
        self.evicted_initial = 0
        self.preempted_records = 0
        self.requeued = 0
        self.completions = 0
        self.node_events = {"add": 0, "drain": 0, "remove": 0}
        self.claims_of: dict[str, tuple[str, tuple[str, ...]]] = {}  # pod uid -> claims deleted with it
        self.sched_seconds = 0.0
        self._call_seconds = 0.0         # scheduler calls made by the simulation's code
        self._own_seconds = 0.0          # the simulation's callbacks, scheduler calls excluded
        self._run_started: float | None = None
        self.samples: list[dict] = []
        #: the gangs of the gang streams (None without any): fastsched.sim.gangs
        self.gangs = GangTracker(sc.gang_streams) if sc.gang_streams else None
        self._last_sample = (0.0, 0, 0.0)  # time, bound_total, sched_seconds
        self._last_progress = 0.0

    # -- scheduler calls (timed) ---------------------------------------------------------------
    def _timed(self, fn: Callable, *args: Any, **kwargs: Any) -> Any:
        """A scheduler call made by the simulation's own code (its time is scheduler time)."""
        t0 = time.perf_counter()
        try:
            return fn(*args, **kwargs)
        finally:
            self._call_seconds += time.perf_counter() - t0

    def _hook(self, fn: Callable) -> Callable:
        """``fn`` as a clock callback: the time it spends outside scheduler calls (bookkeeping,
        sampling) is the simulation's, not the scheduler's."""
        def call(*args: Any) -> None:
            t0, calls_before = time.perf_counter(), self._call_seconds
            try:
                fn(*args)
            finally:
                self._own_seconds += (time.perf_counter() - t0) - (self._call_seconds - calls_before)
        return call

    def _scheduler_seconds(self) -> float:
        """Wall-clock seconds the scheduler has spent so far in the timeline: the whole run less
        the simulation's own callbacks."""
        if self._run_started is None:  # before the timeline (0) or after it (the final figure)
            return self.sched_seconds
        return time.perf_counter() - self._run_started - self._own_seconds

    # -- hooks -----------------------------------------------------------------------------------
    def _on_bind(self, res: Any) -> None:
        rec = self.current.get(res.pod.uid)
        if rec is None or rec._result is not res or rec.bind_time is not None:
            return
        rec.bind_time = res.bound_at
        rec.node = res.node_name
        self.n_pending -= 1
        self.bound_total += 1
        if self.gangs is not None:
            self.gangs.bound(rec.uid, res.bound_at)
        self.pdb_status.changed(res.pod, +1)
        if rec.duration is not None:
            rec._timer = self.sched.clock.after_func(rec.duration, self._hook(partial(self._complete, rec)),
                                                     PRIORITY_CLUSTER)
            if self.sc.until is None:  # the run goes on until the last completion: so does the progress
                self.horizon = max(self.horizon, rec._timer.deadline)

    def _on_preempt(self, victim: Pod, preemptor: Pod, node_name: str) -> None:
        rec = self.current.get(victim.uid)
        if rec is None or rec.bind_time is None or rec._final:
            self.pdb_status.changed(victim, -1)  # an initial pod (not a record)
            return
        if rec._timer is not None:
            rec._timer.stop()
        rec._final = PREEMPTED
        rec.end_time = self.sched.clock.now()
        rec.reason = f"preempted by {preemptor.key} on node {node_name}"
        self.preempted_records += 1
        self.pdb_status.changed(victim, -1)
        if victim.uid in self.claims_of:  # once the preemption is done, as a controller would
            self.sched.clock.schedule(self.sched.clock.now(), self._hook(partial(self._release_claims, victim.uid)),
                                      PRIORITY_CLUSTER)

    def _complete(self, rec: PodRecord) -> None:
        if rec._final or self.current.get(rec.uid) is not rec:
            return
        rec._final = COMPLETED
        rec.end_time = self.sched.clock.now()
        rec.reason = f"completed after {rec.duration:g}s on {rec.node}"
        self.completions += 1
        if rec._result is not None:
            self.pdb_status.changed(rec._result.pod, -1)
        self._timed(self.sched.delete_pod, rec.uid, reason="completed")
        self._release_claims(rec.uid)

    def _release_claims(self, uid: str) -> None:
        """Delete the claims of a pod that ended for good (a stream's ``when_deleted: Delete``
        claims); their volumes are reclaimed by their policy."""
        namespace, names = self.claims_of.pop(uid, ("", ()))
        for name in names:
            if self.sched.get_object("PersistentVolumeClaim", name, namespace) is not None:
                self._timed(self.sched.delete_object, "PersistentVolumeClaim", name, namespace)

    def _cycle_cost(self, wall_seconds: float, bound: bool) -> float:
        """The Scheduler's ``cycle_cost``: the scenario's SchedulerTime, summed as busy time."""
        seconds = self.time_model.cost(wall_seconds, bound, len(self.sched.snapshot))
        self.busy_seconds += seconds
        return seconds

    # -- records ---------------------------------------------------------------------------------
    def _arrive(self, pod: Pod, duration: float | None, stream: str, now: float) -> None:
        inc = self.incarnations.get(pod.uid, -1) + 1
        self.incarnations[pod.uid] = inc
        req = pod.requests
        rec = PodRecord(index=len(self.records), name=pod.name, namespace=pod.namespace, uid=pod.uid,
                        stream=stream, arrival=now, duration=duration, incarnation=inc,
                        cpu=int(req.get("cpu", 0)), memory=int(req.get("memory", 0)))
        self.records.append(rec)
        self.current[pod.uid] = rec
        self.n_pending += 1
        self._timed(self.sched.add_pod, pod)
        rec._result = self.sched.results.get(pod.uid)
        if rec._result is not None:
            rec.priority = int(rec._result.pod.priority or 0)

    def _evict_node_pods(self, node_name: str, reason: str, reschedule: bool, now: float) -> None:
        sched = self.sched
        pods = [pi.pod for pi in sched.cache.pods_on_node(node_name)]
        for pod in pods:
            rec = self.current.get(pod.uid)
            if rec is not None and not rec._final:
                if rec.bind_time is not None:
                    if rec._timer is not None:
                        rec._timer.stop()
                    rec._final = EVICTED
                    rec.end_time = now
                else:  # assumed, waiting at Permit: deleted before it was bound (status Deleted)
                    self.n_pending -= 1
                rec.reason = reason
                duration, stream = rec.duration, rec.stream
                self.evicted_records += 1
            else:
                duration, stream = None, "initial"
                self.evicted_initial += 1
            self.pdb_status.changed(pod, -1)
            self.evictions += 1
            self._timed(sched.delete_pod, pod.uid, reason=reason)
            if not reschedule:
                self._release_claims(pod.uid)
            if reschedule:
                self.requeued += 1
                self.incarnations.setdefault(pod.uid, 0)  # an initial pod was incarnation 0
                self._arrive(requeued(pod), duration, stream, now)

    def _apply(self, event: Any, now: float) -> str | None:
        sched = self.sched
        if isinstance(event, PodArrival):
            for claim in event.claims:  # the pod's own claims (a stream's claims), created with it
                meta = claim["metadata"]
                if sched.get_object("PersistentVolumeClaim", meta["name"], meta["namespace"]) is None:
                    self._timed(sched.add_object, claim)
            if event.delete_claims:
                self.claims_of[event.pod.uid] = (event.pod.namespace, event.delete_claims)
            if event.group is not None:  # a gang's PodGroup, created with its first member
                self._timed(sched.add_object, event.group)
            if self.gangs is not None and event.gang:
                self.gangs.arrived(event, event.pod.uid, now)
            self._arrive(event.pod, event.duration, event.stream, now)
            return None
        if isinstance(event, NodeAdd):
            for node in event.nodes:
                self._timed(sched.add_node, node)
            for csi_node in self.sc.storage.csi_nodes(event.nodes):  # the CSI node plugins register
                self._timed(sched.add_object, csi_node)
            self.node_events["add"] += 1
            return "add"
        if isinstance(event, NodeDrain):
            for name in event.node_names:
                node = sched.cache.get_node(name)
                if node is None:
                    continue
                if not node.unschedulable:
                    self._timed(sched.update_node, node.replace(unschedulable=True))
                self._evict_node_pods(name, f"evicted: node {name} drained", event.reschedule, now)
            self.node_events["drain"] += 1
            return "drain"
        if isinstance(event, NodeRemove):
            for name in event.node_names:
                if sched.cache.get_node(name) is None:
                    continue
                self._evict_node_pods(name, f"deleted: node {name} removed", event.reschedule, now)
                self._timed(sched.delete_node, name)
                if sched.get_object("CSINode", name, "") is not None:  # owned by its node: collected
                    self._timed(sched.delete_object, "CSINode", name, "")
            self.node_events["remove"] += 1
            return "remove"
        raise TypeError(f"unknown timeline event {type(event).__name__}")

    # -- sampling --------------------------------------------------------------------------------
    def _fragmentation(self, table: Any) -> float:
        return stranded(table, 0, [(self.ref_cpu, self.ref_mem, self.ref_cpu)])[0]

    def _sample(self, kind: str) -> None:
        now = self.sched.clock.now()
        table = self.sched.snapshot.table
        live = table.live
        row: dict[str, Any] = {"time": now, "kind": kind, "nodes": int(live.sum()),
                               "cordoned": int((live & table.unschedulable).sum()),
                               "pending": self.n_pending, "running": int(table.pod_count[live].sum()),
                               "arrived_total": len(self.records), "bound_total": self.bound_total}
        alloc = table.alloc[live].sum(axis=0)
        req = table.requested[live].sum(axis=0)
        for i, name in enumerate(table.resource_names):
            if i < alloc.shape[0] and alloc[i] > 0:
                row[f"util_{name}"] = float(req[i]) / float(alloc[i])
        allowed = float(table.allowed_pods[live].sum())
        if allowed > 0:
            row["util_pods"] = row["running"] / allowed
        row["fragmentation"] = self._fragmentation(table)
        if self.gangs is not None:
            row["gangs_waiting"] = self.gangs.waiting()
            row["gang_gpus_held_at_permit"] = self.gangs.held_at_permit(self.sched._waiting)
            row["gpu_fragmentation"], row["gpus_free"], row["gpus_stranded"] = self.gangs.fragmentation(table)
        sched_seconds = self._scheduler_seconds()
        t0, b0, w0 = self._last_sample
        dt, dw, db = now - t0, sched_seconds - w0, self.bound_total - b0
        row["throughput_virtual"] = db / dt if dt > 0 else None
        row["throughput_wall"] = db / dw if dw > 0 else None
        row["scheduler_seconds"] = sched_seconds
        if dt > 0 or not self.samples:
            self._last_sample = (now, self.bound_total, sched_seconds)
        self.samples.append(row)

    def _report_progress(self, force: bool = False) -> None:
        if self.progress is None:
            return
        w = time.perf_counter()
        if force or w - self._last_progress >= 0.1:
            self._last_progress = w
            self.progress(min(self.sched.clock.now(), self.horizon), self.horizon)

    # -- the loop: everything is an event on the scheduler's clock ------------------------------
    def _schedule_next_event(self) -> None:
        """Put the timeline's next event on the clock (one at a time: the timeline is lazy)."""
        event = self._pending_event = next(self._events, None)
        if event is not None:
            self.sched.clock.schedule(event.time, self._hook(self._on_timeline_event), PRIORITY_CLUSTER)

    def _on_timeline_event(self) -> None:
        """Apply the timeline's events due now (all those of this instant: arrivals at the same
        time reach the scheduler together), then schedule the next one; a node event is sampled
        once the scheduler has reacted to it, at the same instant."""
        now = self.sched.clock.now()
        kinds = []
        while self._pending_event is not None and self._pending_event.time <= now:
            kind = self._apply(self._pending_event, now)
            if kind:
                kinds.append(kind)
            self._pending_event = next(self._events, None)
        for kind in kinds:
            self.sched.clock.schedule(now, self._hook(partial(self._sample, kind)), PRIORITY_SAMPLE)
        if self._pending_event is not None:
            self.sched.clock.schedule(self._pending_event.time, self._hook(self._on_timeline_event),
                                      PRIORITY_CLUSTER)
        self._report_progress()

    def _on_sample_tick(self) -> None:
        """The periodic sample; the next one is scheduled while the run lasts (to ``until``, or,
        without it, to the horizon, which grows as bound pods get their completions)."""
        self._sample("step")
        self._report_progress()
        at = self.sched.clock.now() + self.step
        if at <= self.horizon:
            self.sched.clock.schedule(at, self._hook(self._on_sample_tick), PRIORITY_SAMPLE)

    def run(self) -> SimulationResult:
        sc = self.sc
        t_setup = time.perf_counter()
        self.sched = sched = Scheduler(sc.config, registry=self.registry, seed=sc.seed, record=self.record,
                                       feature_gates=sc.feature_gates)
        sched.record_top_scores = RECORD_TOP_SCORES
        sched.record_max_attempts = RECORD_MAX_ATTEMPTS
        if self.time_model.enabled:
            sched.cycle_cost = self._cycle_cost
        sched.bound_callbacks.append(self._on_bind)
        sched.preemption_callbacks.append(self._on_preempt)
        for pc in sc.priority_classes:
            sched.add(pc)
        for ns in sc.namespaces():
            sched.add_namespace(ns)
        self.pdb_status = _PdbStatus(sched, sc.pdbs)
        self.pdb_status.count_initial(self.initial_pods)
        sched.add_nodes(self.initial_nodes)
        storage = sc.storage_objects()
        if storage:
            sched.add(storage)  # classes, CSI drivers and nodes, capacities, volumes, claims
        CapacityTracker(sched, sc.storage)
        LocalVolumeProvisioner(sched, [o for o in storage if o.KIND == "PersistentVolume"])
        bound: list[Pod] = []  # consecutive bound pods, added in one call (in bulk, as columns)
        for pod in self.initial_pods:
            if pod.node_name:
                bound.append(pod)
                continue
            sched.add_pods(bound)
            bound = []
            self._arrive(pod, None, "initial", 0.0)  # an unbound pod of the cluster: handed over at time 0
        sched.add_pods(bound)
        setup_seconds = time.perf_counter() - t_setup
        self._call_seconds = self._own_seconds = 0.0
        self._sample("start")
        self._events = iter(self.timeline)
        self._schedule_next_event()
        if self.step <= self.horizon:
            sched.clock.schedule(self.step, self._hook(self._on_sample_tick), PRIORITY_SAMPLE)
        self._run_started = time.perf_counter()
        sched.run(until=sc.until, results=False)
        self.sched_seconds = self._scheduler_seconds()
        self._run_started = None
        self._sample("end")
        self._report_progress(force=True)
        return self._result(setup_seconds)

    # -- results ---------------------------------------------------------------------------------
    def _result(self, setup_seconds: float) -> SimulationResult:
        sched = self.sched
        by_status: dict[str, int] = {}
        latencies = []
        end = sched.clock.now()
        records_kept = record_bytes = 0
        for rec in self.records:
            res = rec._result
            if res is not None:
                rec.attempts = res.attempts
                rec.nominated_node = res.nominated_node_name or "" if res.node_name is None else ""
                records_kept += len(res.history)
                record_bytes += sum(h.nbytes() for h in res.history)
            if rec.bind_time is not None:
                rec.run_seconds = (rec.end_time if rec.end_time is not None else end) - rec.bind_time
            if rec._final:
                rec.status = rec._final
            elif rec.bind_time is not None:
                rec.status = RUNNING
                rec.reason = res.message if res is not None else ""
            elif res is not None:
                rec.status, rec.reason = res.status, res.message
            if rec.bind_time is not None:
                latencies.append(rec.bind_time - rec.arrival)
            by_status[rec.status] = by_status.get(rec.status, 0) + 1
        scheduled = sum(by_status.get(s, 0) for s in BOUND_STATUSES)
        unschedulable = by_status.get("Unschedulable", 0)
        frag = [s["fragmentation"] for s in self.samples]
        resources = []
        for s in self.samples:
            for k in s:
                if k.startswith("util_") and k[5:] not in resources:
                    resources.append(k[5:])
        last = self.samples[-1]
        util_mean = {r: float(np.mean([s[f"util_{r}"] for s in self.samples if f"util_{r}" in s]))
                     for r in resources}
        metrics = sched.metrics.as_dict()
        summary = {
            "scenario": self.sc.name,
            "description": self.sc.description,
            "seed": self.sc.seed,
            "pods_total": len(self.records),
            "pods_scheduled": scheduled,
            "pods_unschedulable": unschedulable,
            "pods_pending": len(self.records) - scheduled - unschedulable,
            "pods_by_status": dict(sorted(by_status.items())),
            "pods_per_second": scheduled / self.sched_seconds if self.sched_seconds > 0 else None,
            "scheduler_seconds": self.sched_seconds,
            "setup_seconds": setup_seconds,
            "wall_seconds": time.perf_counter() - self.wall_start,
            "virtual_seconds": sched.clock.now(),
            "placement_latency_seconds": _percentiles(latencies),
            "initial_nodes": len(self.initial_nodes),
            "initial_pods": sum(1 for p in self.initial_pods if p.node_name),
            "final_nodes": last["nodes"],
            "node_events": dict(self.node_events),
            "completions": self.completions,
            "evictions": self.evictions,
            "evicted_records": self.evicted_records,
            "evicted_initial_pods": self.evicted_initial,
            "requeued": self.requeued,
            "preemption_victims": sched.metrics.preemption_victims,
            "preempted_records": self.preempted_records,
            "attempts": dict(sched.metrics.attempts),
            "attempts_total": sum(sched.metrics.attempts.values()),
            "attempt_latency_seconds": sched.metrics.latency_percentiles(),
            "utilization_final": {r: last.get(f"util_{r}") for r in resources},
            "utilization_mean": util_mean,
            "fragmentation": {"final": frag[-1], "mean": float(np.mean(frag)), "max": float(np.max(frag)),
                              "reference_pod": {"cpu_millis": self.ref_cpu, "memory_bytes": self.ref_mem},
                              "definition": FRAGMENTATION_DOC},
            "scheduler_time": self.time_model.as_dict(),
            "scheduler_busy_seconds": self.busy_seconds,
            "scheduler_busy_share": self.busy_seconds / sched.clock.now() if sched.clock.now() > 0 else 0.0,
            "pdbs": self.pdb_status.summary(),
            "storage": storage_summary(sched),
            "record": self.record or "none",
            "records_kept": records_kept,
            "record_bytes": record_bytes,
            "sample_interval": self.step,
            "samples": len(self.samples),
        }
        gangs: list = []
        if self.gangs is not None:
            summary["gangs"] = self.gangs.summary(self.samples, _percentiles)
            gangs = list(self.gangs.gangs.values())
        return SimulationResult(self.sc.name, self.sc.seed, self.records, self.samples, summary, metrics,
                                resources, sched, gangs)


def simulate(scenario: Any, *, seed: int | None = None, progress: Callable[[float, float], None] | None = None,
             sample_interval: float | None = None, record: Any = "failures",
             scheduler_time: SchedulerTime | dict | str | None = None,
             registry: Any = None) -> SimulationResult:
    """Run ``scenario`` (a Scenario, or anything :meth:`Scenario.load` takes) in virtual time.

    ``seed`` replaces the scenario's seed for the arrivals, the node-event picks and the scheduler's
    tie-breaking (the initial cluster stays the scenario's). ``progress(now, horizon)`` is called
    about ten times per wall second with the virtual time reached. ``sample_interval`` is the
    time-series step in virtual seconds (default: a round number giving about 300 samples over the
    scenario's span). ``record`` is the Scheduler's decision-record mode ("failures" by default,
    "all", or None). ``scheduler_time`` replaces the scenario's modelled scheduler time (a
    SchedulerTime, or its YAML form: ``{"model": "fixed", "scheduling": 0.005}``, ``"measured"``).
    ``registry`` (a :class:`~fastsched.runtime.Registry` or mapping of plugin name -> factory) is
    merged into the in-tree registry of the run's Scheduler, as ``Scheduler(registry=...)`` takes it
    (out-of-tree plugins; the scenario's config must then have been checked against it, e.g.
    ``check_config(raw, registry=registry)``). See the module docstring for what is simulated and recorded.
    """
    if scheduler_time is not None and not isinstance(scheduler_time, SchedulerTime):
        scheduler_time = SchedulerTime.parse(scheduler_time, "scheduler_time")
    return _Simulation(scenario, seed, progress, sample_interval, record, scheduler_time, registry).run()
