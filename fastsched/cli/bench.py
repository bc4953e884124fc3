"""``fastsched bench``: time one built-in scheduler_perf workload (an alias of ``perf``).

One module per command (see :mod:`fastsched.cli`); the shared helpers are in
:mod:`fastsched.cli.common`.
"""
from __future__ import annotations

import argparse
import sys
from typing import Any

from .common import PROG, CLIError, _fmt, _json_out, _one_line


def _workload(name: str) -> Any:
    from ..sim.workloads import WORKLOADS

    if name in WORKLOADS:
        return WORKLOADS[name]
    folded = {k.lower(): k for k in WORKLOADS}
    if name.lower() in folded:
        return WORKLOADS[folded[name.lower()]]
    raise CLIError(f"unknown workload {name!r}; known: {', '.join(WORKLOADS)}")


def cmd_bench(args: argparse.Namespace) -> int:
    """One built-in workload: an alias of ``fastsched perf`` on that workload's upstream-format
    test case (:meth:`fastsched.sim.workloads.Workload.perf_case`), sized by the flags."""
    from ..perf import run_workload
    from ..perf.config import parse_perf_config

    wl = _workload(args.workload)
    for flag in ("nodes", "pods", "init_pods"):
        v = getattr(args, flag)
        if v is not None and v < 0:
            raise CLIError(f"--{flag.replace('_', '-')} must not be negative, got {v}")
    try:
        case, templates = wl.perf_case(nodes=args.nodes, init_pods=args.init_pods, measured_pods=args.pods)
        config = parse_perf_config([case], source=f"fastsched bench {wl.name}", templates=templates)
    except ValueError as exc:
        raise CLIError(f"cannot build {wl.name}: {_one_line(str(exc))}") from None
    tc = config.test_cases[0]
    n_nodes, n_init, n_measured = wl.sizes(args.nodes, args.init_pods, args.pods)
    res = run_workload(config, tc, tc.workloads[0], seed=args.seed, prebind_init=not args.schedule_init,
                       keep_scheduler=True)
    for w in res.warnings:
        if not w.startswith("Failed to measure SchedulingThroughput"):
            sys.stderr.write(f"{PROG}: warning: {_one_line(w)}\n")
    if res.status == "failed":
        raise CLIError(f"{wl.name}: {_one_line(res.reason)}")
    sched = res.scheduler
    init_namespaces = {op.namespace for op in wl.init_ops}
    init_total = n_init * len(wl.init_ops)
    init_scheduled = sum(1 for ns in init_namespaces for p in sched.pods_in_namespace(ns) if p.node_name)
    prebound = bool(init_total) and not args.schedule_init
    init_seconds = 0.0 if prebound else sum(
        t["seconds"] for t in res.timeline if t["opcode"] == "createPods" and t["namespace"] in init_namespaces)
    phase = res.phases[-1] if res.phases else None
    done = phase.pods_scheduled if phase else 0
    elapsed = phase.seconds if phase else 0.0
    pps = phase.pods_per_second if phase else None
    churn_pods = len(sched.pods_in_namespace(wl.churn.namespace)) if wl.churn else 0
    throughput = next((i.data for i in res.data_items if i.labels.get("Metric") == "SchedulingThroughput"
                       and i.data), None)
    floor = wl.upstream_floor_pods_per_second
    attempts = phase.attempts if phase else {}
    out = {
        "workload": wl.name, "nodes": res.nodes, "init_pods": init_total,
        "init_prebound": prebound, "init_scheduled": init_scheduled, "init_seconds": init_seconds,
        "measured_pods": n_measured, "measured_scheduled": done, "churn_pods": churn_pods,
        "seconds": elapsed, "pods_per_second": pps,
        "scheduling_throughput": throughput, "attempts": attempts,
        "preemption_victims": res.preemption_victims,
        "upstream_floor_pods_per_second": floor,
        "upstream_case": f"{wl.upstream_case} ({wl.default_nodes} nodes, {wl.default_init_pods} init, "
                         f"{wl.default_measured_pods} measured)",
        "vs_floor": (pps / floor) if (pps and floor) else None,
    }
    if args.json:
        _json_out(out)
        return 0
    init = ("prebound" if prebound else f"scheduled in {init_seconds:.2f}s") if init_total else "none"
    print(f"{wl.name}: {res.nodes:,} nodes, {init_total:,} init pods ({init}), "
          f"{n_measured:,} measured pods" + (f", {churn_pods:,} churn pods" if wl.churn else ""))
    print(f"scheduled {done:,}/{n_measured:,} measured pods in {elapsed:.2f}s: {_fmt(pps, 1)} pods/s "
          f"(attempts: {attempts.get('scheduled', 0):,} scheduled, {attempts.get('unschedulable', 0):,} "
          f"unschedulable, {attempts.get('error', 0):,} error)")
    if throughput:
        print(f"SchedulingThroughput (1 s samples, as upstream): average {_fmt(throughput['Average'], 1)}, "
              f"p50 {_fmt(throughput['Perc50'], 1)}, p90 {_fmt(throughput['Perc90'], 1)} pods/s")
    if floor:
        print(f"upstream floor: {floor:g} pods/s for {out['upstream_case']}; this run: "
              f"{_fmt(out['vs_floor'], 2)}x the floor")
    else:
        print("upstream floor: none recorded for this workload")
    return 0
