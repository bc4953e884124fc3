"""Cluster generators, scheduler_perf workloads, simulation scenarios, the simulation loop and its report.

* :mod:`.generators` — seeded synthetic clusters (:class:`ClusterSpec`, :func:`generate_cluster`);
* :mod:`.workloads` — kube-scheduler's scheduler_perf workloads (:data:`WORKLOADS`);
* :mod:`.scenario` — scenarios: a cluster, pod arrivals and node events (:class:`Scenario`);
  their arrival streams are in :mod:`.streams` (gang streams and the gang metrics in :mod:`.gangs`),
  the timeline events in :mod:`.events`;
* :mod:`.simulation` — :func:`simulate` runs a scenario on the Scheduler in virtual time;
* :mod:`.report` — :func:`write_report` writes summary.json, pods.csv, timeseries.csv, metrics.json and plots;
* :mod:`.capacity` — :func:`max_replicas`, :func:`fits_together`, :func:`nodes_needed`, :func:`max_gangs`.

Submodules load on first use, so ``import fastsched.sim`` stays cheap.
"""
from __future__ import annotations

import importlib

_LAZY = {
    "ClusterSpec": ".generators", "generate_cluster": ".generators", "SpecError": ".spec",
    "WORKLOADS": ".workloads", "Workload": ".workloads", "WorkloadInstance": ".workloads",
    "Scenario": ".scenario", "ScenarioError": ".scenario", "default_scenario": ".scenario", "requeued": ".events",
    "PodArrival": ".events", "NodeAdd": ".events", "NodeDrain": ".events", "NodeRemove": ".events",
    "simulate": ".simulation", "SimulationResult": ".simulation", "PodRecord": ".simulation",
    "write_report": ".report",
    "max_replicas": ".capacity", "fits_together": ".capacity", "nodes_needed": ".capacity",
    "ReplicaResult": ".capacity", "CapacityReport": ".capacity", "max_gangs": ".capacity",
    "GangCapacityResult": ".capacity", "GangRecord": ".gangs",
}

__all__ = sorted(_LAZY)


def __getattr__(name: str):
    try:
        module = _LAZY[name]
    except KeyError:
        raise AttributeError(f"module 'fastsched.sim' has no attribute {name!r}") from None
    value = getattr(importlib.import_module(module, __name__), name)
    globals()[name] = value
    return value


def __dir__():
    return sorted(set(globals()) | set(_LAZY))
