"""What the end-to-end benchmarks share: one convention for what is timed, set-up, churn, pods.

**What is timed** (every end-to-end benchmark states it in its docstring by pointing here):
``Scheduler.run()`` over measured pods that were already added to the Scheduler. Building the
cluster, adding nodes, init pods and measured pods, and collecting the set-up's garbage happen
before the clock starts (pytest-benchmark's ``setup``). The figure reported is pods/s of CPU time
of the process (``time.process_time``, all its threads: what other processes on a shared machine
do not inflate); wall time is recorded beside it in ``extra_info``. Where a workload has churn (Unschedulable, PreemptionAsync),
the churn pods' ``add_pod`` runs inside the timed loop, as upstream's churn op runs during its
measured phase.

**Churn.** Upstream's ``churn`` op creates one pod every ``intervalMilliseconds`` of wall time
while the measured pods are scheduled; at upstream's throughput floor that is one churn pod per
``floor × interval`` measured pods (590 × 0.2 = 118 for Unschedulable). fastsched schedules 10-50x
faster, so a wall-clock ticker would create none. :func:`run_measured` keeps upstream's mix
instead: one churn pod after every ``floor × interval`` scheduling attempts, until every measured
pod is placed.

**Pods.** Workload pods are stamped from one template (:mod:`fastsched.sim.workloads`): the
replicas share their spec objects, as a controller's pods parsed once would, and the scheduler's
per-spec caches hit from the second pod. ``parsed=True`` instead parses each measured pod from
its own manifest (the API server hands the scheduler one decoded object per pod), so no spec
object is shared; benchmarks report both.
"""
from __future__ import annotations

import gc
import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from fastsched.api import Pod
from fastsched.scheduler import Scheduler
from fastsched.sim.workloads import WORKLOADS, template_manifest

#: measured pods at most, to keep runs short on two cores
MAX_PODS = int(os.environ.get("FASTSCHED_BENCH_MAX_PODS", "1000"))


def parsed_pods(template: str, pods: list[Pod]) -> list[Pod]:
    """``pods`` (stamped from ``template``) again, each parsed from its own copy of the template's
    manifest with the pod's name, namespace and uid: no spec object shared between pods."""
    out = []
    for p in pods:
        manifest = template_manifest(template, p.name, p.namespace)
        manifest["metadata"].pop("generateName", None)
        manifest["metadata"]["uid"] = p.uid
        out.append(Pod.from_manifest(manifest))
    return out


@dataclass
class Prepared:
    """A Scheduler holding a workload, its measured pods added and not yet run."""

    scheduler: Scheduler
    measured: list[Pod]
    churn_pods: list[Pod] = field(default_factory=list)
    churn_every: int = 0          # scheduling attempts between two churn pods (0: no churn)


def prepared(name: str, nodes: int, measured: int | None = None, *, parsed: bool = False,
             config: Any = None, init_pods: int | None = None) -> Prepared:
    """Workload ``name`` at ``nodes`` nodes, init pods prebound round-robin, and its measured pods
    (``measured``, or upstream's proportion capped at MAX_PODS) added, not yet run."""
    w = WORKLOADS[name]
    if measured is None:
        measured = max(1, min(MAX_PODS, round(w.default_measured_pods * nodes / w.default_nodes)))
    inst = w.build(nodes=nodes, init_pods=init_pods, measured_pods=measured, prebind=True)
    s = Scheduler(inst.config if config is None else config, seed=0)
    s.add(inst.namespaces)
    s.add(inst.priority_classes)
    s.add_nodes(inst.nodes)
    s.add_pods(inst.init_pods)
    pods = parsed_pods(w.measured_op.template, inst.measured_pods) if parsed else list(inst.measured_pods)
    s.add_pods(pods)
    churn_pods: list[Pod] = []
    every = 0
    if inst.churn is not None:
        floor = w.upstream_floor_pods_per_second or 100.0
        every = max(1, round(floor * inst.churn.interval_seconds))
        churn_pods = inst.churn.pods(len(pods) // every + 2)
    gc.collect()  # the set-up's garbage is not the measured phase's to collect
    return Prepared(s, pods, churn_pods, every)


def run_measured(p: Prepared) -> dict:
    """Run the scheduler over the measured pods (with churn, if any); process CPU and wall seconds,
    measured pods scheduled, churn pods added and preemption victims."""
    s = p.scheduler
    victims0 = s.metrics.preemption_victims
    churned = 0
    c0, w0 = time.process_time(), time.perf_counter()
    if not p.churn_every:
        s.run(results=False)
    else:
        pending = iter(p.churn_pods)
        while True:
            s.run(max_attempts=p.churn_every, results=False)
            if all(s.results[q.uid].scheduled for q in p.measured):
                break
            nxt = next(pending, None)
            if nxt is None:
                s.run(results=False)
                break
            s.add_pod(nxt)
            churned += 1
    cpu, wall = time.process_time() - c0, time.perf_counter() - w0
    n = len(p.measured)
    return {"cpu_seconds": cpu, "wall_seconds": wall, "measured": n,
            "scheduled": sum(1 for q in p.measured if s.results[q.uid].scheduled),
            "churn_pods": churned, "preemption_victims": s.metrics.preemption_victims - victims0,
            "cpu_pods_per_second": n / cpu if cpu > 0 else float("inf"),
            "wall_pods_per_second": n / wall if wall > 0 else float("inf")}


def cold_and_warm(fn: Any, warm_calls: int = 20) -> tuple[float, float]:
    """Process CPU ms of the first call of ``fn()`` (cold: nothing cached yet) and the median of the
    next ``warm_calls`` calls (warm: the per-table and per-spec caches filled by the first)."""
    t = time.process_time()
    fn()
    cold = time.process_time() - t
    warm = []
    for _ in range(warm_calls):
        t = time.process_time()
        fn()
        warm.append(time.process_time() - t)
    warm.sort()
    return cold * 1e3, warm[len(warm) // 2] * 1e3


def plugin_timings(batch: Any, per_node: Any, warm_calls: int = 20) -> dict:
    """For the plugin micro-benchmarks: CPU ms of the batch path's first call on a fresh snapshot
    (cold: the table's count subscriptions, per-spec answers and the like not built yet), the median
    of its next ``warm_calls`` calls (warm), and one call of the per-node path (which does its full
    work on every call), with the per-node/batch ratios against both. Call it before anything else
    has run the batch path on that snapshot."""
    cold, warm = cold_and_warm(batch, warm_calls)
    t = time.process_time()
    per_node()
    per_node_ms = (time.process_time() - t) * 1e3
    return {"first_call_ms": round(cold, 3), "warm_median_ms": round(warm, 3), "per_node_ms": round(per_node_ms, 2),
            "per_node_over_first_call": round(per_node_ms / cold, 1) if cold > 0 else None,
            "per_node_over_warm": round(per_node_ms / warm, 1) if warm > 0 else None}


def perf_run(config: Any, name: str, workload: str, **options: Any) -> tuple[Any, float]:
    """:func:`fastsched.perf.run_workload`, with the process's CPU seconds of the whole run
    (set-up included). The runner's own figures are on a clock of wall time, which other
    processes on a shared machine inflate; this one is not."""
    from fastsched.perf import run_workload

    c = time.process_time()
    r = run_workload(config, name, workload, **options)
    return r, time.process_time() - c


#: upstream's scheduler_perf configs of the release fastsched follows (vendored unchanged)
UPSTREAM_CONFIGS = Path(__file__).resolve().parent.parent / "tests/perf/data/upstream-v1.37.2"


def upstream_perf_row(topic: str, name: str, workload: str, **options: Any) -> dict:
    """One run of upstream's ``topic/performance-config.yaml`` case ``name``/``workload`` through
    fastsched's scheduler_perf runner on the process-CPU clock (``cpu_time=True``: the machine is
    shared, wall time measures the neighbours), as ``fastsched perf --cpu-time`` runs it.

    ``measured`` is upstream's SchedulingThroughput Average by upstream's collector rules, None when
    the measured phase kept no sample (upstream reports no value and checks no threshold then);
    ``phase_pods_per_second`` is the measured phase's own rate (fastsched's figure, never the
    metric); ``cpu_s`` the process's CPU seconds of the whole run, set-up included."""
    from fastsched.perf import load_perf_config

    config = load_perf_config(UPSTREAM_CONFIGS / topic / "performance-config.yaml")
    r, cpu = perf_run(config, name, workload, topic=topic, cpu_time=True, **options)
    row = {"status": r.status, "reason": r.reason,
           "measured_pods_per_second": None if r.measured is None else round(r.measured, 1),
           "no_throughput_sample": r.no_throughput_sample, "throughput_samples": r.throughput_samples,
           "phase_pods_per_second": max((p.pods_per_second or 0.0) for p in r.phases) if r.phases else None,
           "threshold": r.threshold or None, "ratio": r.ratio and round(r.ratio, 1), "cpu_s": round(cpu, 2),
           "pods_created": r.pods_created, "pods_scheduled": r.pods_scheduled,
           "preemption_victims": r.preemption_victims}
    if RESCALE_FACTOR:
        row["rescaled"] = _rescaled_row(config, r, topic, options)
    return row


#: ``FASTSCHED_BENCH_RESCALE=10``: a perf case whose measured phase kept fewer than
#: RESCALE_MIN_SAMPLES SchedulingThroughput samples is run again with its measured pods times
#: this factor (``fastsched perf --rescale-no-sample 10 --min-samples 3``), and that run's metric
#: is recorded beside the config's (``rescaled``); unset: no rescaled runs (they take minutes)
RESCALE_FACTOR = float(os.environ.get("FASTSCHED_BENCH_RESCALE") or 0)
#: one or two samples are the phase's tail over whole seconds, not its rate (see run_perf)
RESCALE_MIN_SAMPLES = 3


def _rescaled_row(config: Any, r: Any, topic: str, options: dict) -> dict | None:
    """The rescaled run of ``r`` as a row's ``rescaled`` entry (None: not needed or not possible)."""
    from fastsched.perf import rescale_workload

    c = time.process_time()
    rs = rescale_workload(config, r, factor=RESCALE_FACTOR, min_samples=RESCALE_MIN_SAMPLES, topic=topic,
                          cpu_time=True, **options)
    if rs is None:
        return None
    return {"status": rs.status, "reason": rs.reason, "params": dict(rs.scaled_params),
            # the cluster's node counts and init fill, when the measured pods alone did not fit
            **({"cluster_params": dict(rs.scaled_cluster_params)} if rs.scaled_cluster_params else {}),
            "measured_pods_per_second": None if rs.measured is None else round(rs.measured, 1),
            "throughput_samples": rs.throughput_samples, "ratio": rs.ratio and round(rs.ratio, 1),
            "phase_pods_per_second": rs.phases_pods_per_second and round(rs.phases_pods_per_second, 1),
            "cpu_s": round(time.process_time() - c, 2)}
