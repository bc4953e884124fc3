"""Setting up a large cluster: adding N nodes and N bound pods, and the memory the cluster then holds.

The cluster is SchedulingBasic's (scheduler_perf's default node, pod-default pods bound round-robin,
as ``WORKLOADS["SchedulingBasic"].build(prebind=True)`` makes them):

* ``test_add_cluster``: ``Scheduler.add_nodes`` + ``add_pods`` of already-built objects, timed
  (wall and CPU seconds in extra_info);
* ``test_cluster_memory``: a fresh process streams the same cluster to a Scheduler in chunks of
  100,000 objects (so that the input objects do not stay alive) and reports the growth of its
  resident set over the empty Scheduler's, per node + pod;
* ``test_table_add_remove_pod``: ``NodeTable.add_pod`` and ``remove_pod`` one pod at a time
  (10,000 pods on 5,000 nodes), µs per call;
* ``test_generate_nodes``: the scenario generator's 100,000 nodes (``generate_nodes``).

What is timed: the adds (or the table calls) alone, on objects built in the set-up; CPU time of
the process (``time.process_time``), wall beside it.

    python -m pytest benchmarks/bench_scale.py --benchmark-only                  # 100,000 nodes and pods
    FASTSCHED_BENCH_LARGE=1 python -m pytest benchmarks/bench_scale.py --benchmark-only   # and 1,000,000
    python benchmarks/bench_scale.py 1000000     # the memory measurement alone, printed
"""
import gc
import json
import os
import subprocess
import sys
import time

import pytest

SIZES = [100_000] + ([1_000_000] if os.environ.get("FASTSCHED_BENCH_LARGE") else [])
CHUNK = 100_000


def built(n):
    from fastsched.scheduler import Scheduler
    from fastsched.sim.workloads import WORKLOADS

    inst = WORKLOADS["SchedulingBasic"].build(nodes=n, init_pods=n, measured_pods=1, prebind=True)
    s = Scheduler(seed=0)
    s.add(inst.namespaces)
    gc.collect()
    return (s, inst.nodes, inst.init_pods), {}


def add(s, nodes, pods):
    wall, cpu = time.perf_counter(), time.process_time()
    s.add_nodes(nodes)
    s.add_pods(pods)
    return time.perf_counter() - wall, time.process_time() - cpu


@pytest.mark.parametrize("n", SIZES)
def test_add_cluster(benchmark, n):
    wall, cpu = benchmark.pedantic(add, setup=lambda: built(n), rounds=1 if n > 100_000 else 3, iterations=1)
    benchmark.extra_info.update(nodes=n, pods=n, wall_seconds=round(wall, 2), cpu_seconds=round(cpu, 2),
                                us_per_node_and_pod=round(cpu / n * 1e6, 2))


@pytest.mark.parametrize("n", SIZES)
def test_cluster_memory(benchmark, n):
    def measure():
        out = subprocess.run([sys.executable, __file__, str(n)], capture_output=True, text=True, check=True)
        return json.loads(out.stdout.splitlines()[-1])

    result = benchmark.pedantic(measure, rounds=1, iterations=1)
    benchmark.extra_info.update(result)


def table_add_remove(n_nodes: int = 5000, n_pods: int = 10_000) -> dict:
    """µs of CPU per ``NodeTable.add_pod`` and per ``remove_pod``, one pod at a time."""
    from fastsched.snapshot import build_snapshot
    from fastsched.sim.generators import upstream_nodes
    from fastsched.sim.workloads import template_pod

    nodes = upstream_nodes(n_nodes)
    table = build_snapshot(nodes, []).table
    pods = [template_pod("pod-default", f"p-{i:05d}") for i in range(n_pods)]
    where = [nodes[i % n_nodes].name for i in range(n_pods)]
    gc.collect()
    c = time.process_time()
    for node, pod in zip(where, pods):
        table.add_pod(node, pod)
    added = time.process_time() - c
    c = time.process_time()
    for node, pod in zip(where, pods):
        table.remove_pod(node, pod)
    removed = time.process_time() - c
    return {"add_pod_us": round(added / n_pods * 1e6, 2), "remove_pod_us": round(removed / n_pods * 1e6, 2)}


def test_table_add_remove_pod(benchmark):
    rounds: list[dict] = []
    benchmark.pedantic(lambda: rounds.append(table_add_remove()), rounds=3, iterations=1)
    benchmark.extra_info.update(nodes=5000, pods=10_000, rounds=3,  # the best round of each
                                add_pod_us=min(r["add_pod_us"] for r in rounds),
                                remove_pod_us=min(r["remove_pod_us"] for r in rounds))


def _rss_mib() -> float:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


def measure_memory(n: int) -> dict:
    """Stream the cluster to a Scheduler in this process; RSS growth and add time."""
    from fastsched.scheduler import Scheduler
    from fastsched.sim.generators import upstream_nodes
    from fastsched.sim.workloads import WORKLOADS, _factory

    workload = WORKLOADS["SchedulingBasic"]
    op = workload.init_ops[0]
    factory = _factory(op.template)
    width = max(5, len(str(n - 1)))
    s = Scheduler(seed=0)
    s.add(workload.build(nodes=1, init_pods=0, measured_pods=1).namespaces)
    gc.collect()
    before = _rss_mib()
    wall = cpu = 0.0
    for start in range(0, n, CHUNK):
        count = min(CHUNK, n - start)
        nodes = upstream_nodes(count, start=start, total=n)  # named as the whole cluster names them
        # as _prebind binds them: a replaced copy per pod, bound round-robin
        pods = [factory.make(f"pod-{op.op_index}-{i:0{width}d}", op.namespace).replace(
            node_name=nodes[i - start].name, phase="Running") for i in range(start, start + count)]
        t, c = time.perf_counter(), time.process_time()
        s.add_nodes(nodes)
        s.add_pods(pods)
        wall += time.perf_counter() - t
        cpu += time.process_time() - c
        del nodes, pods
    gc.collect()
    growth = _rss_mib() - before
    assert len(s.snapshot.table) == n and s.cache.pod_count() == n
    return {"nodes": n, "pods": n, "rss_growth_mib": round(growth), "bytes_per_node_and_pod": round(growth * 2**20 / n),
            "add_wall_seconds": round(wall, 2), "add_cpu_seconds": round(cpu, 2)}


if __name__ == "__main__":
    print(json.dumps(measure_memory(int(sys.argv[1]) if len(sys.argv) > 1 else 100_000)))


def test_generate_nodes(benchmark):
    """``sim.generators.generate_nodes`` for 100,000 nodes of a spec with zones, regions, node
    classes and taints (tests/sim/test_generators.py's spec): CPU seconds in extra_info."""
    from fastsched.sim.generators import ClusterSpec, generate_nodes

    spec = ClusterSpec.from_dict({
        "nodes": 100_000, "regions": 2, "zones": ["a", "b", "c", "d"], "seed": 11, "pods": {"count": 0},
        "shapes": [{"name": "small", "cpu": 4, "memory": "16Gi", "weight": 0.5},
                   {"name": "big", "cpu": "16", "memory": "64Gi", "ephemeral-storage": "100Gi", "weight": 0.4},
                   {"name": "gpu", "cpu": 32, "memory": "128Gi", "nvidia.com/gpu": 8, "fraction": 0.1,
                    "labels": {"accelerator": "a100"},
                    "taints": [{"key": "nvidia.com/gpu", "effect": "NoSchedule"}]}],
        "labels": {"disktype": {"values": ["ssd", "hdd"], "probabilities": [0.25, 0.75], "fraction": 0.5},
                   "tier": ["gold", "silver"], "team": "infra"},
        "taints": [{"key": "spot", "value": "true", "effect": "PreferNoSchedule", "fraction": 0.2}],
        "unschedulable_fraction": 0.05,
        "images": {"pool": [{"name": f"img-{i}", "size": "100Mi"} for i in range(6)], "per_node": 2}})

    def generate():
        cpu = time.process_time()
        nodes = generate_nodes(spec)
        return len(nodes), time.process_time() - cpu

    n, cpu = benchmark.pedantic(generate, rounds=3, iterations=1)
    assert n == 100_000
    benchmark.extra_info.update(nodes=n, cpu_seconds=round(cpu, 3))
