"""User kernels in numba against the per-node Python path and the in-tree compiled kernel.

Run: python benchmarks/bench_numba.py [--nodes 5000] [--rounds 15]
(or python -m pytest benchmarks/bench_numba.py --benchmark-only, which runs 7 rounds, records the
times in extra_info and checks the targets: the numba example plugin >= 50x its per-node Python
version, and the numba MostAllocated plugin within 2x of the in-tree compiled kernel).

What is timed: one scoring of every node by each alternative, on a snapshot and plugins built (and
the numba kernels compiled, by the answers' check) before timing. Method: one process; each
alternative is timed with ``time.process_time`` (CPU time of the process, not wall time: the
machine is shared) over enough calls to take a few milliseconds, and the
alternatives are interleaved round after round so that noise hits them alike; the median per call
of the rounds is reported. Every alternative scores the same NodeBatch of all nodes.
"""
from __future__ import annotations

import argparse
import pathlib
import statistics
import sys
import time

from fastsched.config import load_config
from fastsched.framework import CycleState
from fastsched.plugins import in_tree_registry
from fastsched.runtime import new_framework
from fastsched.testing import make_pod, random_snapshot

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "examples" / "numba_gpu_fragmentation"))
import gpu_fragmentation as fgd  # noqa: E402

MOST_ALLOCATED = """
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
  - schedulerName: default-scheduler
    pluginConfig:
      - name: NodeResourcesFit
        args:
          scoringStrategy:
            type: MostAllocated
            resources: [{name: cpu, weight: 1}, {name: memory, weight: 1}]
"""


def alternatives(n_nodes: int) -> dict:
    """name -> (callable scoring every node once, calls per timing)."""
    snapshot = random_snapshot(0, n_nodes=n_nodes, n_pods=2 * n_nodes)
    batch = snapshot.batch()
    views = list(batch)
    pod = make_pod("train", requests={"cpu": "2", "nvidia.com/gpu": "1"})
    numba_fgd = fgd.GpuFragmentation({}, None)
    python_fgd = fgd.GpuFragmentationPython({}, None)
    numba_most = fgd.MostAllocatedNumba({}, None)
    fw = new_framework(in_tree_registry(), load_config(MOST_ALLOCATED).profiles[0], snapshot_shared_lister=snapshot)
    in_tree = fw.plugins_map["NodeResourcesFit"]
    state = CycleState()
    in_tree.pre_score(state, pod, batch)

    # the same answers first: a benchmark of different work would mean nothing
    assert numba_fgd.score_vectorized(CycleState(), pod, batch)[0].tolist() == \
        [python_fgd.score(state, pod, v)[0] for v in views]
    assert numba_most.score_vectorized(CycleState(), pod, batch)[0].tolist() == \
        in_tree.score_vectorized(state, pod, batch)[0].tolist()
    return {
        "GpuFragmentation numba (score_vectorized)": (lambda: numba_fgd.score_vectorized(state, pod, batch), 200),
        "GpuFragmentation per-node Python (score per NodeInfo)":
            (lambda: [python_fgd.score(state, pod, v) for v in views], 2),
        "GpuFragmentation numba, its per-node path (score per NodeInfo)":
            (lambda: [numba_fgd.score(state, pod, v) for v in views], 2),
        "MostAllocated numba plugin (score_vectorized)": (lambda: numba_most.score_vectorized(state, pod, batch), 200),
        "MostAllocated in-tree Cython (NodeResourcesFit.score_vectorized)":
            (lambda: in_tree.score_vectorized(state, pod, batch), 200),
    }


def measure(n_nodes: int = 5000, rounds: int = 15) -> dict[str, float]:
    """Median seconds of CPU time per call of each alternative."""
    alts = alternatives(n_nodes)
    samples: dict[str, list[float]] = {name: [] for name in alts}
    for _ in range(rounds):
        for name, (fn, calls) in alts.items():
            t0 = time.process_time()
            for _ in range(calls):
                fn()
            samples[name].append((time.process_time() - t0) / calls)
    return {name: statistics.median(s) for name, s in samples.items()}


def ratios(times: dict[str, float]) -> dict[str, float]:
    names = list(times)
    return {"numba plugin vs per-node Python (speed-up)": times[names[1]] / times[names[0]],
            "numba MostAllocated / in-tree kernel (time ratio)": times[names[3]] / times[names[4]],
            "numba GpuFragmentation / in-tree MostAllocated (time ratio)": times[names[0]] / times[names[4]],
            "numba plugin vs its own per-node path (speed-up)": times[names[2]] / times[names[0]]}


def test_numba_plugin_targets(benchmark):
    times = benchmark.pedantic(measure, args=(5000, 7), rounds=1, iterations=1)
    r = ratios(times)
    benchmark.extra_info.update({**{f"{name} (us)": round(t * 1e6, 1) for name, t in times.items()},
                                 **{name: round(v, 2) for name, v in r.items()}})
    assert r["numba plugin vs per-node Python (speed-up)"] >= 50, times
    assert r["numba MostAllocated / in-tree kernel (time ratio)"] <= 2, times


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--nodes", type=int, default=5000)
    ap.add_argument("--rounds", type=int, default=15)
    args = ap.parse_args()
    times = measure(args.nodes, args.rounds)
    for name, t in times.items():
        print(f"{name:<68} {t * 1e6:10.1f} us")
    for name, r in ratios(times).items():
        print(f"{name:<68} {r:10.2f}")


if __name__ == "__main__":
    main()
