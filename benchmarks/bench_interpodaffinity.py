"""InterPodAffinity: PreFilter + Filter + PreScore + Score + NormalizeScore for one pod, batch vs per-node.

Workloads mirror upstream scheduler_perf (``test/integration/scheduler_perf/affinity/performance-config.yaml``
and the pod templates in ``templates/``) at 5,000 nodes and 5,000 existing pods in namespace
``sched-0``; the incoming pod is in ``sched-1``; every term lists ``namespaces: [sched-1, sched-0]``:

* SchedulingPodAntiAffinity — ``pod-with-pod-anti-affinity.yaml``: label ``color: green``, required
  anti-affinity to ``color: green`` on ``kubernetes.io/hostname``. 4,000 such pods, one per node (as
  the scheduler would place them), plus 1,000 label-less pods on the other nodes, so 1,000 nodes stay
  feasible and Score runs;
* SchedulingPodAffinity — ``pod-with-pod-affinity.yaml``: ``color: blue``, required affinity to
  ``color: blue`` on ``topology.kubernetes.io/zone``; every node is in ``zone1``
  (``labelNodePrepareStrategy``);
* SchedulingPreferredPodAffinity / SchedulingPreferredPodAntiAffinity —
  ``pod-with-preferred-pod-{affinity,anti-affinity}.yaml``: ``color: red`` / ``yellow``, weight-1
  preferred term on ``kubernetes.io/hostname``.

Existing pods of the last three are placed on random nodes (seeded). The batch path is what the
runtime does with a NodeBatch (table-built state, ``filter_vectorized``, ``score_vectorized``,
``normalize_score_vectorized``); the per-node path walks NodeInfos in PreFilter/PreScore and calls
``filter``/``score`` node by node (upstream's shape).

Run: ``python benchmarks/bench_interpodaffinity.py`` (table of timings), or
``python -m pytest benchmarks/bench_interpodaffinity.py --benchmark-only``.

What is timed: one pod's plugin cycle over every node of a snapshot built in the set-up. The batch
test's pytest-benchmark figures are *warm* calls (the same pod again on the same table, so caches
kept per table and per pod spec are filled); extra_info adds the *first* call on the fresh snapshot
(cold), the warm median and one call of the per-node path, which does its full work each time
(``common.plugin_timings``, CPU time of the process).
"""
from __future__ import annotations

import random

import pytest
from common import plugin_timings

from fastsched.api import Namespace
from fastsched.plugins import in_tree_registry
from fastsched.plugins.interpodaffinity import NAME
from fastsched.runtime.framework import new_framework
from fastsched.snapshot import build_snapshot
from fastsched.testing import (make_node, make_pod, plugin_cycle_vectorized, plugin_cycle_per_node,
                               single_plugin_profile)

N_NODES = 5_000
N_PODS = 5_000
HOSTNAME = "kubernetes.io/hostname"
ZONE = "topology.kubernetes.io/zone"
NAMESPACES = {n: Namespace(name=n) for n in ("sched-0", "sched-1")}


def _term(color: str, key: str) -> dict:
    return {"labelSelector": {"matchLabels": {"color": color}}, "topologyKey": key,
            "namespaces": ["sched-1", "sched-0"]}


TEMPLATES = {
    # name: (label color, affinity manifest, node zone label or None)
    "SchedulingPodAntiAffinity": ("green", {"podAntiAffinity": {
        "requiredDuringSchedulingIgnoredDuringExecution": [_term("green", HOSTNAME)]}}, None),
    "SchedulingPodAffinity": ("blue", {"podAffinity": {
        "requiredDuringSchedulingIgnoredDuringExecution": [_term("blue", ZONE)]}}, "zone1"),
    "SchedulingPreferredPodAffinity": ("red", {"podAffinity": {
        "preferredDuringSchedulingIgnoredDuringExecution": [
            {"weight": 1, "podAffinityTerm": _term("red", HOSTNAME)}]}}, None),
    "SchedulingPreferredPodAntiAffinity": ("yellow", {"podAntiAffinity": {
        "preferredDuringSchedulingIgnoredDuringExecution": [
            {"weight": 1, "podAffinityTerm": _term("yellow", HOSTNAME)}]}}, None),
}


def _pod(name: str, namespace: str, color: str, affinity: dict, node_name: str | None = None):
    return make_pod(name, namespace=namespace, labels={"color": color}, node_name=node_name, cpu="100m",
                    memory="500Mi", images=("registry.k8s.io/pause:3.10.1",), affinity=affinity)


def build(workload: str, n_nodes: int = N_NODES, n_pods: int = N_PODS, seed: int = 0):
    """(snapshot, plugin, incoming pod) for ``workload``."""
    color, affinity, zone = TEMPLATES[workload]
    labels = {ZONE: zone} if zone else {}
    nodes = [make_node(f"scheduler-perf-{i:05d}", cpu="4", memory="32Gi", labels=labels) for i in range(n_nodes)]
    rng = random.Random(seed)
    pods = []
    if workload == "SchedulingPodAntiAffinity":
        n_anti = n_nodes * 4 // 5
        for i in range(n_pods):
            if i < n_anti:
                pods.append(_pod(f"init-{i}", "sched-0", color, affinity, nodes[i].name))
            else:
                pods.append(make_pod(f"plain-{i}", namespace="sched-0", node_name=nodes[n_anti + i % (n_nodes - n_anti)].name))
    else:
        for i in range(n_pods):
            pods.append(_pod(f"init-{i}", "sched-0", color, affinity, rng.choice(nodes).name))
    snap = build_snapshot(nodes, pods)
    fw = new_framework(in_tree_registry(), single_plugin_profile(NAME), snapshot_shared_lister=snap,
                       namespaces=NAMESPACES)
    return snap, fw.plugins_map[NAME], _pod("measured", "sched-1", color, affinity)


@pytest.mark.parametrize("workload", list(TEMPLATES))
def test_batch(benchmark, workload):
    snap, pl, pod = build(workload)
    benchmark.extra_info.update(nodes=N_NODES, pods=N_PODS, **plugin_timings(
        lambda: plugin_cycle_vectorized(snap, pl, pod), lambda: plugin_cycle_per_node(snap, pl, pod)))
    feasible, scores = benchmark(plugin_cycle_vectorized, snap, pl, pod)
    want_feasible, want_scores = plugin_cycle_per_node(snap, pl, pod)
    assert feasible == want_feasible
    assert (scores is None and want_scores is None) or scores.tolist() == want_scores


@pytest.mark.parametrize("workload", list(TEMPLATES))
def test_per_node(benchmark, workload):
    snap, pl, pod = build(workload)
    benchmark.extra_info.update(nodes=N_NODES, pods=N_PODS)
    benchmark.pedantic(plugin_cycle_per_node, args=(snap, pl, pod), rounds=3, iterations=1)


def main() -> None:
    print(f"{'workload':38s} {'feasible':>8s} {'first ms':>9s} {'warm ms':>8s} {'per-node ms':>12s} "
          f"{'vs first':>9s} {'vs warm':>8s}")
    for workload in TEMPLATES:
        snap, pl, pod = build(workload)
        t = plugin_timings(lambda: plugin_cycle_vectorized(snap, pl, pod), lambda: plugin_cycle_per_node(snap, pl, pod))
        feasible, scores = plugin_cycle_vectorized(snap, pl, pod)
        want = plugin_cycle_per_node(snap, pl, pod)
        assert feasible == want[0] and ((scores is None and want[1] is None) or scores.tolist() == want[1])
        print(f"{workload:38s} {feasible:8d} {t['first_call_ms']:9.2f} {t['warm_median_ms']:8.2f} "
              f"{t['per_node_ms']:12.1f} {t['per_node_over_first_call']:8.0f}x {t['per_node_over_warm']:7.0f}x")


if __name__ == "__main__":
    main()
