"""`capacity` at scale, and what a fork / a transaction costs.

Run: python benchmarks/bench_capacity.py [--nodes 5000] [--replicas 100000]
(``python -m pytest benchmarks/bench_capacity.py --benchmark-only`` runs the same measurements once,
records them in extra_info and checks the target: 100,000 replicas on 5,000 nodes answered in
under 10 s of CPU).

What is timed: each measured call alone (``capacity``, ``fork()``, a transaction round trip, the
fork's first bind; for the fork-alive overhead, ``Scheduler.run()`` over pods already added, as
``common.py`` states). Method: one process; ``time.process_time`` (CPU time of the process: the
machine is shared) around each measured call, and wall time beside it. The cluster is 5,000 of scheduler_perf's default nodes
(4 cpu, 32Gi, 110 pods); the pod asks for 100m cpu and 128Mi, so 200,000 copies would fit and the
100,000 asked for all do. A fork shares the node table's columns copy-on-write, so the first
bind on a fork is timed too (it copies the columns the bookkeeping writes). The one-copy-at-a-time loop that ``capacity`` used to run (a copy added,
``run()``, the results listed) is timed on a small count beside it.
"""
from __future__ import annotations

import argparse
import time

from fastsched.sim.capacity import _copy, cluster_scheduler, fits_together
from fastsched.sim.generators import upstream_nodes
from fastsched.testing import make_pod

POD = make_pod("web", cpu="100m", memory="128Mi")


def timed(fn, *args, **kwargs):
    wall, cpu = time.perf_counter(), time.process_time()
    out = fn(*args, **kwargs)
    return out, time.process_time() - cpu, time.perf_counter() - wall


def old_loop(nodes, count: int) -> int:
    """The former capacity loop: one copy, one run() returning every result, per copy."""
    s = cluster_scheduler(nodes)
    placed = 0
    for i in range(count):
        s.add_pod(_copy(POD, i))
        if not s.run()[-1].scheduled:
            break
        placed += 1
    return placed


def transaction_round_trip(s) -> None:
    """A pod added and scheduled in a transaction, then reverted."""
    with s.transaction():
        s.add_pods([make_pod("t", cpu="100m")])
        s.run(results=False)


def fork_alive_overhead(nodes, pods: int = 20_000, rounds: int = 3) -> dict:
    """Scheduling ``pods`` copies with and without a fork of the scheduler alive (the original's
    record lookups go through the shared dicts while one is), interleaved round by round; the
    median of each, CPU and wall."""
    import statistics

    runs: dict[bool, list] = {False: [], True: []}
    for _ in range(rounds):
        for alive in (False, True):
            s = cluster_scheduler(nodes)
            fork = s.fork() if alive else None
            s.add_pods([_copy(POD, i) for i in range(pods)])
            _, cpu, wall = timed(s.run, results=False)
            assert sum(r.scheduled for r in s.pod_results()) == pods
            runs[alive].append((cpu, wall))
            del fork, s
    return {f"run(), {pods:,} pods on {len(nodes):,} nodes, {'a fork alive' if alive else 'no fork'} "
            f"(median of {rounds})": (statistics.median(c for c, _ in runs[alive]),
                                      statistics.median(w for _, w in runs[alive]))
            for alive in (False, True)}


def measure(n_nodes: int = 5000, replicas: int = 100_000, old_count: int = 2000) -> dict:
    nodes = upstream_nodes(n_nodes)
    out: dict = {}
    report, cpu, wall = timed(fits_together, nodes, [(POD, replicas)])
    assert report.workloads[0].placed == replicas
    out[f"capacity: {replicas:,} replicas on {n_nodes:,} nodes"] = (cpu, wall)
    placed, cpu, wall = timed(old_loop, nodes, old_count)
    assert placed == old_count
    out[f"former one-copy loop: {old_count:,} replicas on {n_nodes:,} nodes"] = (cpu, wall)
    for bound in (0, 20_000, replicas):
        s = cluster_scheduler(nodes)
        if bound:
            s.add_pods([_copy(POD, i) for i in range(bound)])
            s.run(results=False)
        _, cpu, wall = timed(s.fork)
        out[f"fork: {n_nodes:,} nodes, {bound:,} pods placed one by one"] = (cpu, wall)

        _, cpu, wall = timed(transaction_round_trip, s)
        out[f"transaction (1 pod, reverted): {n_nodes:,} nodes, {bound:,} pods"] = (cpu, wall)
    big = cluster_scheduler(upstream_nodes(100_000))
    big.fork()  # the first fork also learns the state's classes
    fork, cpu, wall = timed(big.fork)
    out["fork: 100,000 nodes, no pods placed by the scheduler"] = (cpu, wall)
    # the columns are shared copy-on-write: the fork's first bind copies the bookkeeping columns
    fork.add_pods([_copy(POD, 0)])
    _, cpu, wall = timed(fork.run, results=False)
    out["first bind on that fork (copies the columns it writes)"] = (cpu, wall)
    out.update(fork_alive_overhead(nodes))
    return out


def test_capacity_target(benchmark):
    times = benchmark.pedantic(measure, args=(5000, 100_000, 2000), rounds=1, iterations=1)
    benchmark.extra_info.update({name: {"cpu_s": round(cpu, 4), "wall_s": round(wall, 4)}
                                 for name, (cpu, wall) in times.items()})
    cpu, _ = times["capacity: 100,000 replicas on 5,000 nodes"]
    assert cpu < 10, times


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--nodes", type=int, default=5000)
    ap.add_argument("--replicas", type=int, default=100_000)
    ap.add_argument("--old-count", type=int, default=2000)
    args = ap.parse_args()
    for name, (cpu, wall) in measure(args.nodes, args.replicas, args.old_count).items():
        print(f"{name:<66} cpu {cpu:8.3f} s   wall {wall:8.3f} s")


if __name__ == "__main__":
    main()
