"""Record the scheduler's decisions on a fixed set of seeded workloads as a regression fixture.

The fixture is fastsched's own output, not an independent expectation: the test that replays it
catches decisions that move, not decisions that were wrong when recorded.

Issue 13 rebuilds the scheduling cycle's engine; its results must not move. This records, before the
change, what the scheduler decides for every pod of each case (node, status, message, attempts), the
round-robin ``next_start_node_index`` and both RNG states (the tie-break generator and the plugins'
``random.Random``), and ``tests/scheduler/test_golden_placements.py`` replays the cases and compares.

Run from the repository root: ``python tools/record_placements.py`` (rewrites
``tests/scheduler/data/golden_placements.json``). Re-record only for a change that is meant to alter
decisions, and say why in the commit.
"""
from __future__ import annotations

import hashlib
import json
import pickle
import random
import sys
from pathlib import Path

from fastsched import load_config
from fastsched.scheduler import Scheduler
from fastsched.sim.workloads import WORKLOADS
from fastsched.testing import RANDOM_RUNTIME_CLASS, random_cluster, random_pod

OUT = Path(__file__).resolve().parent.parent / "tests" / "scheduler" / "data" / "golden_placements.json"

#: (case name, workload, nodes, init pods, measured pods, percentageOfNodesToScore)
WORKLOAD_CASES = [
    ("basic-300", "SchedulingBasic", 300, 300, 201, 0),
    ("basic-1200-pct0", "SchedulingBasic", 1200, 600, 301, 0),
    ("basic-300-pct100", "SchedulingBasic", 300, 300, 151, 100),
    ("node-affinity", "SchedulingNodeAffinity", 300, 300, 151, 0),
    ("pod-affinity", "SchedulingPodAffinity", 300, 300, 151, 0),
    ("pod-anti-affinity", "SchedulingPodAntiAffinity", 300, 150, 151, 0),
    ("preferred-pod-affinity", "SchedulingPreferredPodAffinity", 300, 300, 151, 0),
    ("preferred-pod-anti-affinity", "SchedulingPreferredPodAntiAffinity", 300, 300, 151, 0),
    ("mixed", "MixedSchedulingBasePod", 300, 60, 151, 0),
    ("topology-spreading", "TopologySpreading", 300, 300, 151, 0),
    ("preferred-topology-spreading", "PreferredTopologySpreading", 300, 300, 151, 0),
    ("unschedulable", "Unschedulable", 300, 100, 151, 0),
    ("preemption-basic", "PreemptionBasic", 100, 400, 60, 0),
]
#: (case name, seed, nodes, running pods, incoming pods)
RANDOM_CASES = [("random-1", 1, 300, 600, 200), ("random-2", 2, 400, 400, 200),
                ("random-3", 3, 150, 900, 200)]


def _config(percentage: int):
    return load_config({"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
                        "percentageOfNodesToScore": percentage})


def _digest(state) -> str:
    return hashlib.sha256(pickle.dumps(state, protocol=4)).hexdigest()[:16]


def _outcome(s: Scheduler, results) -> dict:
    return {
        "pods": [[r.pod.name, r.node_name or "", r.status, r.message, r.attempts, r.nominated_node_name or ""]
                 for r in results],
        "next_start_node_index": s.next_start_node_index,
        "rng": _digest(s.rng.bit_generator.state),
        "plugin_rng": _digest(s.plugin_rng.getstate()),
    }


def run_workload_case(workload: str, nodes: int, init: int, measured: int, percentage: int) -> dict:
    inst = WORKLOADS[workload].build(nodes=nodes, init_pods=init, measured_pods=measured, prebind=True)
    s = Scheduler(_config(percentage), seed=0)
    s.add(inst.namespaces)
    s.add_nodes(inst.nodes)
    s.add_pods(inst.init_pods)
    s.add_pods(inst.measured_pods)
    return _outcome(s, s.run())


def run_random_case(seed: int, nodes: int, running: int, incoming: int) -> dict:
    node_list, pods = random_cluster(seed, nodes, running)
    rng = random.Random(seed * 7919)
    s = Scheduler(_config(0), seed=seed)
    s.add_nodes(node_list)
    s.add(RANDOM_RUNTIME_CLASS)
    s.add_pods(pods)
    s.add_pods([random_pod(rng, i) for i in range(incoming)])
    return _outcome(s, s.run())


def record_all() -> dict:
    out = {}
    for name, *args in WORKLOAD_CASES:
        out[name] = run_workload_case(*args)
    for name, *args in RANDOM_CASES:
        out[name] = run_random_case(*args)
    return out


if __name__ == "__main__":
    data = record_all()
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(json.dumps(data, indent=0, sort_keys=True) + "\n")
    print(f"wrote {OUT} ({sum(len(v['pods']) for v in data.values())} pods in {len(data)} cases)", file=sys.stderr)
