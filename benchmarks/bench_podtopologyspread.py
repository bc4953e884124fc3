"""PodTopologySpread: PreFilter + Filter + PreScore + Score + NormalizeScore for one pod, batch vs per-node.

Workloads mirror upstream scheduler_perf (``test/integration/scheduler_perf/topology_spreading/
performance-config.yaml`` and the pod templates in ``templates/``) at 5,000 nodes and 5,000 existing pods:

* TopologySpreading — ``pod-with-topology-spreading.yaml``: label ``color: blue``, ``maxSkew: 5`` on
  ``topology.kubernetes.io/zone``, DoNotSchedule, selector ``color: blue``;
* PreferredTopologySpreading — ``pod-with-preferred-topology-spreading.yaml``: the same, ScheduleAnyway;
* DefaultTopologySpreading — ``pod-with-label.yaml`` (``app: scheduler-perf``, no constraints) in
  ``service-ns`` with the ``service.yaml`` Service selecting it, under the system default constraints
  (hostname maxSkew 3 + zone maxSkew 5, ScheduleAnyway).

Nodes are ``node-default.yaml`` (4 CPU, 32Gi, 110 pods) with zones ``moon-1..3`` assigned round-robin
(``labelNodePrepareStrategy``) and a ``kubernetes.io/hostname`` label (kubelets set it; the
scheduler_perf fake nodes do not). Two states of the existing pods, each 5,000 pods one per node:

* ``init``: the ``initPods`` phase, 5,000 ``pod-default.yaml`` pods (no labels): nothing matches;
* ``midway``: 3,000 of those plus 2,000 pods of the measured template already scheduled (the state
  after ``measurePods: 2000``), so the counts are not all zero.

The batch path is what the runtime does with a NodeBatch (table-built state, ``filter_vectorized``,
``score_vectorized``, ``normalize_score_vectorized``); the per-node path walks NodeInfos in PreFilter/PreScore
and calls ``filter``/``score`` node by node (upstream's shape).

Run: ``python benchmarks/bench_podtopologyspread.py`` (table of timings), or
``python -m pytest benchmarks/bench_podtopologyspread.py --benchmark-only``.

What is timed: one pod's plugin cycle over every node of a snapshot built in the set-up. The batch
test's pytest-benchmark figures are *warm* calls (the same pod again on the same table, so caches
kept per table and per pod spec are filled); extra_info adds the *first* call on the fresh snapshot
(cold), the warm median and one call of the per-node path, which does its full work each time
(``common.plugin_timings``, CPU time of the process).
"""
from __future__ import annotations


import pytest
from common import plugin_timings

from fastsched.plugins import in_tree_registry
from fastsched.plugins.podtopologyspread import NAME, WorkloadObjects
from fastsched.runtime.framework import new_framework
from fastsched.snapshot import build_snapshot
from fastsched.testing import (make_node, make_pod, plugin_cycle_vectorized, plugin_cycle_per_node,
                               single_plugin_profile)

N_NODES = 5_000
N_PODS = 5_000
N_MEASURED_BEFORE = 2_000
ZONE = "topology.kubernetes.io/zone"
ZONES = ("moon-1", "moon-2", "moon-3")
SERVICE_NS = "service-ns"
SERVICE_SELECTOR = {"app": "scheduler-perf"}


def _spreading(when: str) -> dict:
    return {"topologySpreadConstraints": [{
        "maxSkew": 5, "topologyKey": ZONE, "whenUnsatisfiable": when,
        "labelSelector": {"matchLabels": {"color": "blue"}}}]}


TEMPLATES = {
    # name: (namespace, labels, extra pod spec)
    "TopologySpreading": ("default", {"color": "blue"}, _spreading("DoNotSchedule")),
    "PreferredTopologySpreading": ("default", {"color": "blue"}, _spreading("ScheduleAnyway")),
    "DefaultTopologySpreading": (SERVICE_NS, SERVICE_SELECTOR, {}),
}
STATES = ("init", "midway")


def _pod(name: str, namespace: str, labels: dict, spec: dict, node_name: str | None = None):
    return make_pod(name, namespace=namespace, labels=labels, node_name=node_name, cpu="100m", memory="500Mi",
                    images=("registry.k8s.io/pause:3.10.1",), **spec)


def build(workload: str, state: str, n_nodes: int = N_NODES, n_pods: int = N_PODS):
    """(snapshot, plugin, incoming pod) for ``workload`` with the existing pods of ``state``."""
    namespace, labels, spec = TEMPLATES[workload]
    nodes = [make_node(f"scheduler-perf-{i:05d}", cpu="4", memory="32Gi", labels={ZONE: ZONES[i % len(ZONES)]})
             for i in range(n_nodes)]
    n_measured = N_MEASURED_BEFORE if state == "midway" else 0
    pods = [_pod(f"measured-{i}", namespace, labels, spec, nodes[i % n_nodes].name) for i in range(n_measured)]
    pods += [_pod(f"init-{i}", "default", {}, {}, nodes[i % n_nodes].name) for i in range(n_measured, n_pods)]
    snap = build_snapshot(nodes, pods)
    fw = new_framework(in_tree_registry(), single_plugin_profile(NAME), snapshot_shared_lister=snap)
    plugin = fw.plugins_map[NAME]
    plugin.workload_objects = WorkloadObjects(services={SERVICE_NS: [SERVICE_SELECTOR]})
    return snap, plugin, _pod("measured", namespace, labels, spec)


CASES = [(w, s) for w in TEMPLATES for s in STATES]


@pytest.mark.parametrize("workload, state", CASES)
def test_batch(benchmark, workload, state):
    snap, pl, pod = build(workload, state)
    benchmark.extra_info.update(nodes=N_NODES, pods=N_PODS, **plugin_timings(
        lambda: plugin_cycle_vectorized(snap, pl, pod), lambda: plugin_cycle_per_node(snap, pl, pod)))
    feasible, scores = benchmark(plugin_cycle_vectorized, snap, pl, pod)
    want_feasible, want_scores = plugin_cycle_per_node(snap, pl, pod)
    assert feasible == want_feasible
    assert (scores is None and want_scores is None) or scores.tolist() == want_scores


@pytest.mark.parametrize("workload, state", CASES)
def test_per_node(benchmark, workload, state):
    snap, pl, pod = build(workload, state)
    benchmark.extra_info.update(nodes=N_NODES, pods=N_PODS)
    benchmark.pedantic(plugin_cycle_per_node, args=(snap, pl, pod), rounds=3, iterations=1)


def main() -> None:
    print(f"{'workload':28s} {'state':7s} {'feasible':>8s} {'distinct':>8s} {'first ms':>9s} {'warm ms':>8s} "
          f"{'per-node ms':>12s} {'vs first':>9s} {'vs warm':>8s}")
    for workload, state in CASES:
        snap, pl, pod = build(workload, state)
        t = plugin_timings(lambda: plugin_cycle_vectorized(snap, pl, pod), lambda: plugin_cycle_per_node(snap, pl, pod))
        feasible, scores = plugin_cycle_vectorized(snap, pl, pod)
        want = plugin_cycle_per_node(snap, pl, pod)
        assert feasible == want[0] and ((scores is None and want[1] is None) or scores.tolist() == want[1])
        distinct = "-" if scores is None else str(len(set(scores.tolist())))
        print(f"{workload:28s} {state:7s} {feasible:8d} {distinct:>8s} {t['first_call_ms']:9.2f} "
              f"{t['warm_median_ms']:8.2f} {t['per_node_ms']:12.1f} {t['per_node_over_first_call']:8.0f}x "
              f"{t['per_node_over_warm']:7.0f}x")


if __name__ == "__main__":
    main()
