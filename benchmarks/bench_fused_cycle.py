"""The scheduler beside its lower bound: a bare fused single-pass kernel over the same columns.

SchedulingBasic (default profile, adaptive percentageOfNodesToScore, init pods = nodes, prebound).
Each round's set-up builds the cluster three times (outside the timed function); the round then
measures, interleaved in one process, with CPU time of the process:

* ``scheduler``: ``Scheduler.run()`` over the measured pods (queue, cycles, binding, bookkeeping);
* ``bare kernel``: the same pods placed by a loop that only calls the compiled plan's kernel
  (``FusedPlan.run``, the same filter/score/select pass), draws ties from the same RNG and adds the
  pod's requests to the chosen row: what placing a pod costs with no framework around it. Two
  variants: the single pass that computes every score (the lower bound issue 13 defines), and the
  same pass with the plan's score cache (rows' resource scores reused while the row is unchanged),
  as the scheduler runs it from a spec's second pod on.

All place every pod on the same node (asserted), so the ratios are the framework's overhead.
extra_info records pods/s of each (median over rounds) and both ratios (issue 13: the scheduler
within 3x of the single pass at 5,000 nodes).

What is timed: the ``scheduler`` part is ``Scheduler.run()`` over measured pods already added, as
``common.py`` states; the bare parts time only their placement loop (the plan is compiled by one
``run(max_attempts=1)`` before the clock starts). pytest-benchmark's own time for a round is the
three parts together; the figures are the per-part CPU times in extra_info.

    python -m pytest benchmarks/bench_fused_cycle.py --benchmark-only
    FASTSCHED_BENCH_LARGE=1 python -m pytest benchmarks/bench_fused_cycle.py --benchmark-only  # + 50k, 1M nodes
"""
import gc
import os
import statistics
import time

import numpy as np
import pytest

from fastsched.scheduler import Scheduler
from fastsched.scheduler.schedule_one import num_feasible_nodes_to_find
from fastsched.sim.workloads import WORKLOADS

SIZES = [(5000, 1000)]
if os.environ.get("FASTSCHED_BENCH_LARGE"):
    SIZES += [(50_000, 1000), (1_000_000, 300)]


def prepared(nodes: int, measured: int) -> Scheduler:
    inst = WORKLOADS["SchedulingBasic"].build(nodes=nodes, init_pods=nodes, measured_pods=measured, prebind=True)
    s = Scheduler(inst.config, seed=0)
    s.add(inst.namespaces)
    s.add_nodes(inst.nodes)
    s.add_pods(inst.init_pods)
    s.add_pods(inst.measured_pods)
    gc.collect()
    return s


def scheduler_round(s: Scheduler) -> tuple[float, list[str]]:
    t = time.process_time()
    results = s.run()
    dt = time.process_time() - t
    assert all(r.scheduled for r in results)
    return len(results) / dt, [r.node_name for r in results]


def bare_kernel_round(s: Scheduler, score_cache: bool = False) -> tuple[float, list[str]]:
    """Place the queued pods with the compiled plan's kernel alone (all pods share one spec),
    computing every score or (``score_cache``) with the plan's score cache."""
    first = s.run(max_attempts=1)  # compiles the plan
    (fw,) = s.profiles.values()
    engine = fw.compiled_cycle
    # one plan, kept under its spec objects' key and under its value key
    (plan,) = {id(p): p for p in engine._plans.values() if hasattr(p, "fused")}.values()
    table = s.snapshot.table
    pods = [r.pod for r in s.pod_results() if not r.scheduled]
    order = s.snapshot.order()
    n = len(order)
    k = num_feasible_nodes_to_find(s.config.percentage_of_nodes_to_score, n)
    requests = np.zeros(table.requested.shape[1], dtype=np.int64)
    for name, amount in pods[0].requests.items():
        requests[table.resource_index[name]] = amount
    nz = np.array([pods[0].non_zero_requests.get("cpu", 0), pods[0].non_zero_requests.get("memory", 0)])
    fused, cols, rng = plan.fused, engine._columns, s.rng
    if score_cache:
        fused.enable_score_cache(table.capacity)  # as the scheduler's plan has from its second pod on
    else:
        fused.drop_score_cache()
    start = s.next_start_node_index
    names = []
    t = time.process_time()
    for _ in pods:
        found, examined, best, ties, first_best = fused.run(cols, order, start % n, k, True)
        pick = first_best if ties == 1 else int(np.flatnonzero(fused.totals[:found] == best)[int(rng.integers(ties))])
        row = int(fused.selected_rows[pick])
        table.requested[row] += requests
        table.nonzero_requested[row] += nz
        table.pod_count[row] += 1
        table._touch(row)  # the row changed: its cached scores are stale
        start = (start + examined) % n
        names.append(table.node_names[row])
    dt = time.process_time() - t
    return len(pods) / dt, [r.node_name for r in first if r.scheduled] + names


@pytest.mark.parametrize("nodes,measured", SIZES, ids=[f"{n}-nodes" for n, _ in SIZES])
def test_scheduler_beside_bare_kernel(benchmark, nodes, measured):
    rounds = 3 if nodes <= 50_000 else 1
    sched, bare, cached = [], [], []

    def three_clusters():
        return (prepared(nodes, measured), prepared(nodes, measured), prepared(nodes, measured)), {}

    def one_round(for_scheduler, for_bare, for_cached):
        rate_s, placed_s = scheduler_round(for_scheduler)
        rate_b, placed_b = bare_kernel_round(for_bare)
        rate_c, placed_c = bare_kernel_round(for_cached, score_cache=True)
        assert placed_s == placed_b == placed_c, "the bare kernels must place the pods as the scheduler does"
        sched.append(rate_s)
        bare.append(rate_b)
        cached.append(rate_c)

    benchmark.pedantic(one_round, setup=three_clusters, rounds=rounds, iterations=1)
    s, b, c = statistics.median(sched), statistics.median(bare), statistics.median(cached)
    benchmark.extra_info.update(nodes=nodes, measured_pods=measured, scheduler_pods_per_second=round(s),
                                bare_kernel_pods_per_second=round(b), ratio=round(b / s, 2),
                                bare_kernel_score_cache_pods_per_second=round(c), ratio_score_cache=round(c / s, 2))
