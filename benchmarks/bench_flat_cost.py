"""Per-pod cost over a long run (issue 14: "the last 1,000 pods take at most 1.2x the first 1,000").

One scheduler holds a scheduler_perf workload's nodes and init pods (prebound) and N measured pods;
``run(max_attempts=1000)`` places them 1,000 at a time, and the CPU time of each block is recorded.
The ratio last block / first block shows whether per-pod cost grows with the pods placed. Every
measured pod must be scheduled (asserted).

What is timed: ``Scheduler.run()`` over measured pods already added, as ``common.py`` states
(CPU time of the process; set-up outside the timing), block by block.

    python benchmarks/bench_flat_cost.py SchedulingPodAffinity TopologySpreading --nodes 5000 --pods 10000
    python -m pytest benchmarks/bench_flat_cost.py --benchmark-only   # 5,000 nodes, 5,000 pods
"""
from __future__ import annotations

import argparse
import time

import pytest
from common import prepared

from fastsched.scheduler import Scheduler
from fastsched.sim.workloads import WORKLOADS

BLOCK = 1000
NODES, PODS = 5000, 5 * BLOCK


def block_times(s: Scheduler, pods: int) -> list[float]:
    """CPU seconds of each block of BLOCK scheduling attempts."""
    out = []
    for _ in range(max(1, pods // BLOCK)):
        t = time.process_time()
        s.run(max_attempts=BLOCK, results=False)
        out.append(time.process_time() - t)
    return out


@pytest.mark.parametrize("name", ["SchedulingPodAffinity", "TopologySpreading"])
def test_flat_cost(benchmark, name):
    p = prepared(name, NODES, PODS)
    blocks = benchmark.pedantic(block_times, args=(p.scheduler, len(p.measured)), rounds=1, iterations=1)
    scheduled = sum(1 for q in p.measured if p.scheduler.results[q.uid].scheduled)
    assert scheduled == len(p.measured), f"{scheduled}/{len(p.measured)}"
    benchmark.extra_info.update(nodes=NODES, pods=len(p.measured), blocks_ms=[round(b * 1e3, 1) for b in blocks],
                                last_over_first=round(blocks[-1] / blocks[0], 3))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("workloads", nargs="+", choices=sorted(WORKLOADS), metavar="WORKLOAD")
    ap.add_argument("--nodes", type=int, default=5000)
    ap.add_argument("--pods", type=int, default=10000)
    args = ap.parse_args()
    for name in args.workloads:
        p = prepared(name, args.nodes, args.pods)
        s, n = p.scheduler, len(p.measured)
        blocks = block_times(s, n)
        scheduled = sum(1 for q in p.measured if s.results[q.uid].scheduled)
        print(f"{name}: nodes={args.nodes} pods={n} scheduled={scheduled} "
              f"blocks(ms)={[round(b * 1e3) for b in blocks]} last/first={blocks[-1] / blocks[0]:.2f} "
              f"pods/s={n / sum(blocks):,.0f}", flush=True)


if __name__ == "__main__":
    main()
