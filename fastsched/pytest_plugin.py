"""pytest plugin: benchmark your own plugins and configurations on fastsched in a few lines.

Installed with fastsched (entry point ``pytest11: fastsched``), so any project that has fastsched
installed gets these fixtures (``pytest -p no:fastsched`` turns them off):

- ``fastsched_cluster(nodes=5000, pods=0, zones=3, seed=0, **spec)``: a seeded synthetic cluster
  (:func:`fastsched.sim.generators.generate_cluster`), as ``(nodes, running_pods)``;
- ``fastsched_workload(name="SchedulingBasic", nodes=None, init_pods=None, measured_pods=None,
  seed=0, prebind=True)``: an upstream scheduler_perf-shaped workload at a given size
  (:data:`fastsched.sim.workloads.WORKLOADS`), a ``WorkloadInstance``;
- ``fastsched_framework(config=None, profile=None, registry=None, nodes=(), pods=())``: the
  Framework of one profile built from a KubeSchedulerConfiguration, over a snapshot of ``nodes``
  and ``pods``;
- ``fastsched_benchmark(workload, config=None, registry=None, rounds=3)``: schedules the
  workload's measured pods under pytest-benchmark's ``benchmark`` (a fresh Scheduler per round)
  and puts ``pods_per_second`` (best round, wall time), ``pods_per_second_median``,
  ``cpu_pods_per_second`` (best round, CPU time of the process), ``nodes``, ``pods`` and
  ``scheduled`` in ``benchmark.extra_info``; returns the last round's :class:`BenchmarkResult`.

What is timed, here and in fastsched's own ``benchmarks/``: ``Scheduler.run()`` over measured
pods that were already added. Building the Scheduler, adding nodes, init pods (and scheduling
them, unless the workload is prebound) and the measured pods happen in the round's set-up, outside
pytest-benchmark's timing.

::

    def test_my_plugin_is_fast(fastsched_workload, fastsched_benchmark):
        wl = fastsched_workload("SchedulingBasic", nodes=5000, measured_pods=1000)
        result = fastsched_benchmark(wl, config="my-config.yaml", registry={"MyPlugin": MyPlugin})
        assert result.scheduled == 1000

fastsched is imported lazily, so the plugin costs nothing in test runs that do not use it.
"""
from __future__ import annotations

import gc
import time
from dataclasses import dataclass
from typing import Any, Callable, Iterable

import pytest

__all__ = ["BenchmarkResult", "fastsched_cluster", "fastsched_workload", "fastsched_framework",
           "fastsched_benchmark", "schedule_workload"]


@dataclass
class BenchmarkResult:
    """One scheduling round of :func:`schedule_workload`."""

    nodes: int
    pods: int
    scheduled: int
    seconds: float          # wall seconds of Scheduler.run()
    scheduler: Any
    cpu_seconds: float = 0.0  # CPU seconds of the process during Scheduler.run()

    @property
    def pods_per_second(self) -> float:
        return self.scheduled / self.seconds if self.seconds > 0 else float("inf")


def _registry(registry: Any) -> Any:
    if registry is None:
        return None
    from fastsched.runtime import Registry

    return registry if isinstance(registry, Registry) else Registry(dict(registry))


def _setup(workload: Any, config: Any, registry: Any, seed: int) -> tuple[Any, list]:
    """A Scheduler holding the workload's namespaces, nodes and init pods (scheduled, unless
    the workload was built prebound), and its measured pods added, not yet scheduled."""
    from fastsched import Scheduler

    sched = Scheduler(config if config is not None else workload.config, registry=_registry(registry), seed=seed)
    for ns in workload.namespaces:
        sched.add_namespace(ns)
    for pc in workload.priority_classes:
        sched.add(pc)
    sched.add_nodes(workload.nodes)
    if workload.init_pods:
        sched.add_pods(workload.init_pods)
        if not workload.prebound:
            sched.run()
    measured = list(workload.measured_pods)
    sched.add_pods(measured)
    return sched, measured


def _timed_run(workload: Any, sched: Any, measured: list) -> BenchmarkResult:
    """``sched.run()``, timed (wall and CPU), as a :class:`BenchmarkResult`."""
    c0, t0 = time.process_time(), time.perf_counter()
    sched.run()
    seconds, cpu = time.perf_counter() - t0, time.process_time() - c0
    scheduled = sum(1 for p in measured if sched.results[p.uid].scheduled)
    return BenchmarkResult(len(workload.nodes), len(measured), scheduled, seconds, sched, cpu)


def schedule_workload(workload: Any, config: Any = None, registry: Any = None, seed: int = 0) -> BenchmarkResult:
    """Set up and schedule one round, timing only ``Scheduler.run()`` over the measured pods
    (added during the set-up)."""
    sched, measured = _setup(workload, config, registry, seed)
    gc.collect()
    return _timed_run(workload, sched, measured)


@pytest.fixture
def fastsched_cluster() -> Callable[..., tuple[list, list]]:
    """Factory of seeded synthetic clusters: ``fastsched_cluster(nodes=5000, pods=0, zones=3,
    seed=0, **spec)`` -> ``(nodes, running pods)`` (``spec``: ClusterSpec fields, e.g.
    ``shapes=[{"cpu": 8, "memory": "32Gi", "pods": 110}]``)."""
    def make(nodes: int = 5000, pods: int = 0, zones: int = 3, seed: int = 0, **spec: Any) -> tuple[list, list]:
        from fastsched.sim.generators import generate_cluster

        raw: dict[str, Any] = {"nodes": nodes, "seed": seed, **spec}
        if zones:
            raw.setdefault("zones", zones)
        if pods:
            raw.setdefault("pods", {"count": pods})
        return generate_cluster(raw)

    return make


@pytest.fixture
def fastsched_workload() -> Callable[..., Any]:
    """Factory of upstream-shaped workloads: ``fastsched_workload("SchedulingBasic", nodes=5000,
    init_pods=None, measured_pods=None, seed=0, prebind=True)`` -> ``WorkloadInstance``; sizes
    default to upstream's, init and measured pods scale with ``nodes``."""
    def make(name: str = "SchedulingBasic", nodes: int | None = None, init_pods: int | None = None,
             measured_pods: int | None = None, seed: int = 0, prebind: bool | str = True) -> Any:
        from fastsched.sim.workloads import WORKLOADS

        if name not in WORKLOADS:
            raise pytest.UsageError(f"unknown fastsched workload {name!r}; known: {', '.join(WORKLOADS)}")
        return WORKLOADS[name].build(nodes=nodes, init_pods=init_pods, measured_pods=measured_pods, seed=seed,
                                     prebind=prebind)

    return make


@pytest.fixture
def fastsched_framework() -> Callable[..., Any]:
    """Factory of Frameworks: ``fastsched_framework(config=None, profile=None, registry=None,
    nodes=(), pods=())`` builds ``profile`` (default: the first) of ``config`` (anything
    ``load_config`` takes) with the in-tree plugins plus ``registry``, over a snapshot of
    ``nodes`` and running ``pods``."""
    def make(config: Any = None, profile: str | None = None, registry: Any = None,
             nodes: Iterable[Any] = (), pods: Iterable[Any] = ()) -> Any:
        from fastsched import load_config
        from fastsched.plugins import in_tree_registry
        from fastsched.runtime import new_framework
        from fastsched.snapshot import build_snapshot

        extra = _registry(registry)
        cfg = load_config(config, registry_names=list(extra or ()))
        reg = in_tree_registry()
        if extra is not None:
            reg.merge(extra)
        prof = cfg.profile(profile) if profile else cfg.profiles[0]
        snapshot = build_snapshot(list(nodes), list(pods))
        return new_framework(reg, prof, snapshot_shared_lister=snapshot, parallelism=cfg.parallelism)

    return make


@pytest.fixture
def fastsched_benchmark(request: pytest.FixtureRequest) -> Callable[..., BenchmarkResult]:
    """``fastsched_benchmark(workload, config=None, registry=None, rounds=3, seed=0)``: schedule a
    workload's measured pods under pytest-benchmark (see the module docstring)."""
    try:
        benchmark = request.getfixturevalue("benchmark")
    except pytest.FixtureLookupError:
        raise pytest.UsageError("fastsched_benchmark needs pytest-benchmark (pip install pytest-benchmark)") from None

    def run(workload: Any, config: Any = None, registry: Any = None, rounds: int = 3, seed: int = 0
            ) -> BenchmarkResult:
        state: dict[str, Any] = {}
        times: list[float] = []
        cpu_times: list[float] = []

        def setup() -> tuple[tuple, dict]:
            state["sched"], state["measured"] = _setup(workload, config, registry, seed)
            gc.collect()
            return (), {}

        def target() -> BenchmarkResult:
            result = _timed_run(workload, state["sched"], state["measured"])
            times.append(result.seconds)
            cpu_times.append(result.cpu_seconds)
            return result

        result = benchmark.pedantic(target, setup=setup, rounds=rounds, iterations=1)
        times.sort()
        benchmark.extra_info.update({
            "pods_per_second": result.scheduled / times[0] if times[0] > 0 else None,
            "pods_per_second_median": result.scheduled / times[len(times) // 2] if times[len(times) // 2] > 0
            else None,
            "cpu_pods_per_second": result.scheduled / min(cpu_times) if min(cpu_times) > 0 else None,
            "nodes": result.nodes, "pods": result.pods, "scheduled": result.scheduled,
        })
        return result

    return run
