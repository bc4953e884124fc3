"""The ``fastsched`` command line.

::

    fastsched simulate [SCENARIO] [--out DIR] [--seed N] [--record all|failures|none] [--quiet]
    fastsched bench WORKLOAD [--nodes N] [--pods M] [--init-pods K] [--seed N] [--schedule-init] [--json]
    fastsched perf CONFIG [--name TEST] [--workload NAME] [--label FILTER] [--out FILE]
                   [--fail-under-threshold] [--topic T] [--seed N] [--json] [--list]
    fastsched explain --cluster FILE --pod FILE [--config FILE] [--profile NAME] [--limit N | --all] [--json]
    fastsched capacity --cluster FILE --pod FILE [--pod FILE ...] [--replicas N ...]
                       [--node-template FILE] [--max-nodes N] [--config FILE] [--per-node] [--json]
    fastsched sweep SWEEP.yaml --out DIR [--local-dask N | --dask ADDRESS] [--workers N] [--report full|data]
                    [--no-resume] [--json]
    fastsched config validate FILE
    fastsched config defaults
    fastsched differential [--class C ...] --scenarios N [--seed S] [--out DIR] [--record DIR] [--oracle PATH] [--raw]
    fastsched differential --bench [--bench-nodes N] [--bench-init-pods K] [--bench-pods M]

Every expected failure (missing or unreadable file, a file that is not text, bad YAML, invalid
configuration or scenario, malformed manifest, unknown workload) is a
:class:`~fastsched.errors.FastschedError`: it prints one line ``fastsched: error: ...`` to stderr and
exits with status 1 (2 for command-line usage errors, as argparse does). Set ``FASTSCHED_DEBUG=1``
to get the traceback of an unexpected exception instead of its one-line report.
"""
from __future__ import annotations

import argparse
import json
import math
import os
import sys
from pathlib import Path
from typing import Any, Sequence

from .errors import NOT_UTF8_TEXT, FastschedError, located

PROG = "fastsched"
DEFAULT_OUT = "fastsched-report"
#: how many nodes ``explain`` shows by default (the best ones)
EXPLAIN_LIMIT = 10


class CLIError(FastschedError):
    """An expected failure: reported as one line, exit status 1."""


# ------------------------------------------------------------------------------------------------
# helpers
# ------------------------------------------------------------------------------------------------
def _one_line(text: str) -> str:
    return "; ".join(part.strip() for part in str(text).splitlines() if part.strip())


def _console(stderr: bool = False):
    from rich.console import Console

    con = Console(stderr=stderr, highlight=False, soft_wrap=True)
    if not con.is_terminal and not os.environ.get("COLUMNS"):
        con.width = 200  # piped or captured: don't squeeze tables into 80 columns
    return con


def _file(path: str, what: str) -> Path:
    p = Path(path)
    if not p.exists():
        raise CLIError(f"{what} file not found: {path}")
    if not p.is_file():
        raise CLIError(f"{what} is not a file: {path}")
    return p


def _config(path: str | None) -> Any:
    """The configuration of ``--config``, checked as ``config validate`` checks it (validated and
    built: what is returned, a Scheduler accepts)."""
    from .config import ConfigError, load_config
    from .scheduler.config_check import check_config

    if path is None:
        return load_config(None)
    p = _file(path, "config")
    try:
        return check_config(p)
    except ConfigError as exc:
        raise CLIError(f"invalid config {path}: {_one_line(str(exc))}") from None


def _objects(path: str, what: str, strict: bool = False, *, directory: bool = False) -> list:
    """The objects of a manifest file (or, with ``directory``, a directory of them), as
    ``Scheduler.add`` reads them."""
    from .api import ManifestError, load_objects

    p = Path(path)
    if not (directory and p.is_dir()):
        p = _file(path, what)
    try:
        return load_objects(p, strict=strict)
    except ManifestError as exc:
        raise CLIError(f"{what} {_one_line(str(exc))}") from None


def _one_pod(path: str, strict: bool = False) -> Any:
    from .api import Pod

    objs = _objects(path, "pod", strict)
    pods = [o for o in objs if isinstance(o, Pod)]
    if len(pods) != 1 or len(objs) != 1:
        kinds = ", ".join(type(o).__name__ for o in objs) or "nothing"
        raise CLIError(f"pod {path}: expected exactly one Pod manifest, found {kinds}")
    return pods[0]


def _json_out(data: Any) -> None:
    sys.stdout.write(json.dumps(data, indent=2, default=str) + "\n")


def _fmt(v: Any, digits: int = 3) -> str:
    if v is None:
        return "-"
    if isinstance(v, float):
        if not math.isfinite(v):
            return "-"
        return f"{v:,.{digits}f}"
    if isinstance(v, int):
        return f"{v:,}"
    return str(v)


# ------------------------------------------------------------------------------------------------
# simulate
# ------------------------------------------------------------------------------------------------
def _check_out_dir(out: str) -> None:
    """Fail now, not after the simulation, when the report cannot be written to ``out``: it must
    be a writable directory, or creatable (its nearest existing ancestor a writable directory)."""
    import errno

    from .sim.report import REPORT_FILES

    def fail(code: int, where: Path) -> None:
        detail = os.strerror(code) + ("" if str(where) == str(out) else f": {where}")
        raise CLIError(f"cannot write the report to {out}: {detail}")

    p = Path(out)
    if p.exists():
        if not p.is_dir():
            fail(errno.ENOTDIR, p)
        if not os.access(p, os.W_OK | os.X_OK):
            fail(errno.EACCES, p)
        for name in REPORT_FILES:
            f = p / name
            if f.is_dir():
                fail(errno.EISDIR, f)
            if f.exists() and not os.access(f, os.W_OK):
                fail(errno.EACCES, f)
        return
    parent = p.absolute().parent
    while not parent.exists():
        parent = parent.parent
    if not parent.is_dir():
        fail(errno.ENOTDIR, parent)
    if not os.access(parent, os.W_OK | os.X_OK):
        fail(errno.EACCES, parent)


def cmd_simulate(args: argparse.Namespace) -> int:
    from .sim.report import write_report
    from .sim.scenario import Scenario, ScenarioError, default_scenario
    from .sim.simulation import simulate

    _check_out_dir(args.out)
    try:
        scenario = default_scenario() if args.scenario is None else Scenario.load(_file(args.scenario, "scenario"))
    except ScenarioError as exc:
        where = "default scenario" if args.scenario is None else f"scenario {args.scenario}"
        raise CLIError(f"invalid {where}: {_one_line(str(exc))}") from None

    err = _console(stderr=True)
    record = None if args.record == "none" else args.record
    show_progress = not args.quiet and err.is_terminal
    try:
        if show_progress:
            from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

            with Progress(TextColumn("[bold]simulating[/] {task.description}"), BarColumn(),
                          TextColumn("{task.completed:,.0f}/{task.total:,.0f} virtual s"),
                          TimeElapsedColumn(), console=err, transient=True) as bar:
                task = bar.add_task(scenario.name, total=1.0)

                def progress(now: float, horizon: float) -> None:
                    bar.update(task, completed=now, total=horizon)

                result = simulate(scenario, seed=args.seed, progress=progress, record=record)
        else:
            result = simulate(scenario, seed=args.seed, record=record)
    except ScenarioError as exc:  # raised while building the timeline (e.g. a drain of absent nodes)
        where = "default scenario" if args.scenario is None else f"scenario {args.scenario}"
        raise CLIError(f"invalid {where}: {_one_line(str(exc))}") from None

    try:
        paths = write_report(result, args.out)
    except OSError as exc:
        raise CLIError(f"cannot write the report to {args.out}: {exc.strerror or exc}") from None
    if args.quiet:
        print(f"report written to {Path(args.out)}")
        return 0
    _print_summary(result)
    print(f"report written to {Path(args.out)} ({', '.join(sorted(p.name for p in paths.values()))})")
    return 0


def _print_summary(result: Any) -> None:
    from rich.table import Table

    s = result.summary
    t = Table(title=f"Simulation summary: {s['scenario']} (seed {s['seed']})", show_header=True)
    t.add_column("metric")
    t.add_column("value", justify="right")
    lat = s["placement_latency_seconds"]
    rows = [
        ("nodes (initial → final)", f"{s['initial_nodes']:,} → {s['final_nodes']:,}"),
        ("initial running pods", _fmt(s["initial_pods"])),
        ("pods handed to the scheduler", _fmt(s["pods_total"])),
        ("  scheduled", _fmt(s["pods_scheduled"])),
        ("  unschedulable", _fmt(s["pods_unschedulable"])),
        ("  pending (other)", _fmt(s["pods_pending"])),
        ("final status", ", ".join(f"{k} {v:,}" for k, v in s["pods_by_status"].items()) or "-"),
        ("pods/s (scheduler wall time)", _fmt(s["pods_per_second"], 1)),
        ("scheduler / total wall seconds", f"{s['scheduler_seconds']:.2f} / {s['wall_seconds']:.2f}"),
        ("virtual seconds", _fmt(s["virtual_seconds"], 1)),
        ("placement latency p50/p90/p99 (virtual s)",
         "/".join(_fmt(lat.get(k), 2) for k in ("p50", "p90", "p99"))),
        ("attempts (scheduled/unschedulable/error)",
         "/".join(_fmt(s["attempts"].get(k, 0)) for k in ("scheduled", "unschedulable", "error"))),
        ("preemption victims (of them records)", f"{s['preemption_victims']:,} ({s['preempted_records']:,})"),
        ("evictions: records + initial pods (re-arrived)",
         f"{s['evicted_records']:,} + {s['evicted_initial_pods']:,} ({s['requeued']:,})"),
        ("modelled scheduler busy (virtual s, share)",
         f"{s['scheduler_busy_seconds']:,.1f} ({s['scheduler_busy_share']:.1%})"),
        ("completions", _fmt(s["completions"])),
        ("mean utilization", ", ".join(f"{r} {v:.0%}" for r, v in s["utilization_mean"].items()) or "-"),
        ("fragmentation (mean / final)",
         f"{s['fragmentation']['mean']:.1%} / {s['fragmentation']['final']:.1%}"),
    ]
    for k, v in rows:
        t.add_row(k, v)
    _console().print(t)


# ------------------------------------------------------------------------------------------------
# bench
# ------------------------------------------------------------------------------------------------
def _workload(name: str) -> Any:
    from .sim.workloads import WORKLOADS

    if name in WORKLOADS:
        return WORKLOADS[name]
    folded = {k.lower(): k for k in WORKLOADS}
    if name.lower() in folded:
        return WORKLOADS[folded[name.lower()]]
    raise CLIError(f"unknown workload {name!r}; known: {', '.join(WORKLOADS)}")


def cmd_bench(args: argparse.Namespace) -> int:
    """One built-in workload: an alias of ``fastsched perf`` on that workload's upstream-format
    test case (:meth:`fastsched.sim.workloads.Workload.perf_case`), sized by the flags."""
    from .perf import run_workload
    from .perf.config import parse_perf_config

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


# ------------------------------------------------------------------------------------------------
# perf
# ------------------------------------------------------------------------------------------------
def cmd_perf(args: argparse.Namespace) -> int:
    """Run an upstream ``performance-config.yaml``: every selected workload, a table of results,
    optionally upstream's data-items JSON."""
    from .perf import PerfConfigError, load_perf_config, run_perf, select_workloads
    from .perf.report import results_table, write_data_items

    try:
        config = load_perf_config(args.config)
        label = args.label if args.label is not None else ("" if args.workload else "performance")
        selected = select_workloads(config, name=args.name, workload=args.workload, label_filter=label)
    except PerfConfigError as exc:
        raise CLIError(str(exc)) from None
    if args.out:
        _check_writable(args.out)
    if args.list:
        for tc, w in selected:
            reason = tc.not_modelled()
            print(f"{tc.name}/{w.name}" + (f"  (skipped: {reason})" if reason else ""))
        return 0
    if not selected:
        raise CLIError(f"no workload of {args.config} passes the label filter {label!r} "
                       "(--label '' selects every workload)")

    err = _console(stderr=True)
    show_progress = err.is_terminal and not args.json
    results = []

    def finished(r: Any) -> None:
        results.append(r)
        for w in r.warnings:
            if r.measured_overall and w.startswith("Failed to measure SchedulingThroughput"):
                continue  # the table's footnote says it
            err.print(f"{PROG}: warning: {r.name}: {_one_line(w)}", markup=False, highlight=False)
        if not show_progress and not args.json:
            err.print(f"{r.name}: {r.status}" + (f" ({_one_line(r.reason)})" if r.reason else ""),
                      markup=False, highlight=False)

    try:
        if show_progress:
            from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

            with Progress(TextColumn("{task.description}"), BarColumn(), TextColumn("op {task.completed:.0f}/"
                          "{task.total:.0f}"), TextColumn("{task.fields[pods]}"), TimeElapsedColumn(),
                          console=err, transient=False) as bar:
                tasks: dict[str, Any] = {}

                def on_start(tc: Any, w: Any) -> None:
                    tasks[f"{tc.name}/{w.name}"] = bar.add_task(f"{tc.name}/{w.name}", total=None, pods="")

                def progress(ev: dict) -> None:
                    task = tasks.get(ev["workload"])
                    if task is not None:
                        bar.update(task, completed=ev["op"], total=ev["ops"] or None,
                                   pods=f"{ev['pods_bound']:,}/{ev['pods_created']:,} pods bound ({ev['opcode']})")

                def on_result(r: Any) -> None:
                    task = tasks.get(r.name)
                    if task is not None:
                        bar.update(task, pods=f"{r.status}", completed=bar.tasks[task].total or 0)
                    finished(r)

                report = run_perf(config, name=args.name, workload=args.workload, label_filter=label,
                                  topic=args.topic, seed=args.seed, progress=progress, on_start=on_start,
                                  on_result=on_result)
        else:
            report = run_perf(config, name=args.name, workload=args.workload, label_filter=label,
                              topic=args.topic, seed=args.seed, on_result=finished)
    except PerfConfigError as exc:
        raise CLIError(str(exc)) from None

    if args.out:
        try:
            path = write_data_items(report, args.out)
        except OSError as exc:
            raise CLIError(f"cannot write {args.out}: {exc.strerror or exc}") from None
    if args.json:
        _json_out({"topic": report.topic, "results": [r.as_dict() for r in report.results],
                   **report.data_items_json()})
    else:
        con = _console()
        con.print(results_table(report, title=f"scheduler_perf: {args.config}"))
        if any(r.measured_overall for r in report.results):
            con.print("* the measured phase was shorter than two 1 s throughput samples: its overall pods/s "
                      "is shown (and checked) instead of SchedulingThroughput")
        for r in report.results:
            if r.status in ("skipped", "failed"):
                con.print(f"{r.name}: {r.status}: {r.reason}", markup=False, highlight=False)
            for e in r.threshold_errors:
                con.print(f"{r.name}: {e}", markup=False, highlight=False)
        if args.out:
            con.print(f"data items written to {path}", markup=False, highlight=False)
    failed = report.failed
    if failed:
        _error(f"{len(failed)} workload{'s' if len(failed) > 1 else ''} failed: "
               + "; ".join(f"{r.name}: {r.reason}" for r in failed))
        return 1
    below = report.below_threshold
    if below and args.fail_under_threshold:
        _error(f"{len(below)} workload{'s' if len(below) > 1 else ''} below threshold: "
               + ", ".join(f"{r.name} ({_fmt(r.measured, 1)} vs {_fmt(r.threshold, 0 if r.threshold >= 10 else 3)})"
                           if r.measured is not None
                           else r.name for r in below))
        return 1
    return 0


def _check_writable(out: str) -> None:
    p = Path(out)
    target = p if p.is_dir() else p.absolute().parent
    if not target.exists():
        raise CLIError(f"cannot write {out}: {target} does not exist")
    if not os.access(target, os.W_OK):
        raise CLIError(f"cannot write {out}: permission denied")
    if p.exists() and not p.is_dir() and not os.access(p, os.W_OK):
        raise CLIError(f"cannot write {out}: permission denied")


# ------------------------------------------------------------------------------------------------
# explain
# ------------------------------------------------------------------------------------------------
def _cluster_scheduler(args: argparse.Namespace, cfg: Any) -> Any:
    """A Scheduler holding ``--cluster`` as it runs (what ``Scheduler.add`` reads: nodes, running
    pods, namespaces, workloads whose controllers create pods, ...)."""
    from .api import ManifestError, Node
    from .sim.capacity import cluster_scheduler

    objs = _objects(args.cluster, "cluster", args.strict, directory=True)
    if not any(isinstance(o, Node) for o in objs):
        raise CLIError(f"cluster {args.cluster}: no Node objects")
    try:
        return cluster_scheduler(objs, cfg, seed=args.seed)
    except ManifestError as exc:
        raise CLIError(f"cluster {_one_line(str(exc))}") from None


def _status_text(s: Any) -> str | None:
    if s is None:
        return None
    return f"{s.code()}: {s.message()}" if s.message() else str(s.code())


def _camel_lines(name: str, width: int = 10) -> str:
    """``NodeResourcesBalancedAllocation`` -> ``Node\nResources\nBalanced\nAllocation`` (narrow headers)."""
    import re

    words = re.findall(r"[A-Z]+(?![a-z])|[A-Z]?[a-z0-9]+|.", name)
    lines: list[str] = []
    for w in words:
        if lines and len(lines[-1]) + len(w) <= width:
            lines[-1] += w
        else:
            lines.append(w)
    return "\n".join(lines)


def cmd_explain(args: argparse.Namespace) -> int:
    pod = _one_pod(args.pod, args.strict)
    cfg = _config(args.config)
    profile = args.profile or pod.scheduler_name
    try:
        cfg.profile(profile)
    except KeyError:
        names = ", ".join(p.scheduler_name for p in cfg.profiles)
        raise CLIError(f"no profile named {profile!r} in the configuration (profiles: {names})") from None
    e = _cluster_scheduler(args, cfg).explain(pod, profile=profile)
    feasible = set(e.feasible)
    order = sorted(e.node_names, key=lambda n: (n not in feasible, -e.total.get(n, 0), e.node_names.index(n)))
    limit = None if args.all or args.limit == 0 else args.limit
    if limit is not None:
        order = order[:limit]
    if args.json:
        rows = {r["node"]: r for r in e.table()}
        _json_out({"pod": pod.key, "profile": e.profile,
                   "prefilter": {k: _status_text(v) for k, v in e.prefilter.items()},
                   "prefilter_status": _status_text(e.prefilter_status),
                   "prefilter_nodes": None if e.prefilter_result is None or e.prefilter_result.node_names is None
                   else sorted(e.prefilter_result.node_names),
                   "prescore": {k: _status_text(v) for k, v in e.prescore.items()},
                   "error": _status_text(e.error), "feasible": e.feasible, "best_nodes": e.best_nodes,
                   "nodes": [{**rows[n], "feasible": n in feasible} for n in order],
                   "nodes_total": len(e.node_names), "nodes_not_shown": len(e.node_names) - len(order)})
        return 0
    _print_explanation(e, order, feasible)
    return 0


def _print_explanation(e: Any, order: list[str], feasible: set[str]) -> None:
    from rich.table import Table

    con = _console()
    con.print(f"[bold]{e.pod.key}[/] with profile [bold]{e.profile}[/]: {len(feasible)}/{len(e.node_names)} "
              f"nodes feasible")
    from .framework.status import Code

    failed_pre = {k: v for k, v in e.prefilter.items() if v is not None and v.code() != Code.SKIP}
    for plugin, s in failed_pre.items():
        con.print(f"  PreFilter {plugin}: {_status_text(s)}")
    if e.prefilter_status is not None and e.prefilter_status.code() != Code.SUCCESS and not failed_pre:
        con.print(f"  PreFilter: {_status_text(e.prefilter_status)}")
    if e.prefilter_result is not None and e.prefilter_result.node_names is not None:
        con.print(f"  PreFilter restricts the pod to {len(e.prefilter_result.node_names)} node(s)")
    filter_plugins: list[str] = []
    for verdicts in e.filter.values():
        for p in verdicts:
            if p not in filter_plugins:
                filter_plugins.append(p)
    rejecting = [p for p in filter_plugins if any(v.get(p) is not None for v in e.filter.values())]
    passing = [p for p in filter_plugins if p not in rejecting]
    t = Table(title="Filter verdicts and weighted scores per node", show_lines=False)
    t.add_column("node", no_wrap=True)
    t.add_column("feasible")
    for p in rejecting:
        t.add_column(f"filter\n{_camel_lines(p)}")
    for p in e.scores:
        t.add_column(f"score\n{_camel_lines(p)}", justify="right")
    t.add_column("total", justify="right")
    for n in order:
        cells = [n, "[green]yes[/]" if n in feasible else "[red]no[/]"]
        for p in rejecting:
            s = e.filter.get(n, {}).get(p, "skipped")
            cells.append("ok" if s is None else ("-" if s == "skipped" else f"[red]{s.message()}[/]"))
        for p, per_node in e.scores.items():
            d = per_node.get(n)
            cells.append("" if d is None else str(d.weighted))
        cells.append(str(e.total[n]) if n in e.total else "")
        t.add_row(*cells)
    con.print(t)
    if passing:
        con.print(f"filters passed on every node: {', '.join(passing)}")
    if len(order) < len(e.node_names):
        left = len(e.node_names) - len(order)
        con.print(f"({left} more node{'s' if left > 1 else ''} not shown: the best {len(order)} of "
                  f"{len(e.node_names)} are; --limit N shows N, --all shows every node)")
    if e.error is not None:
        con.print(f"[red]scoring error[/]: {_status_text(e.error)}")
    if e.best_nodes:
        best = e.total[e.best_nodes[0]]
        con.print(f"[bold]best node{'s' if len(e.best_nodes) > 1 else ''}[/] (total {best}): "
                  f"{', '.join(e.best_nodes)}")
    else:
        con.print("[bold red]no feasible node[/]: the pod is unschedulable on this cluster")


# ------------------------------------------------------------------------------------------------
# capacity
# ------------------------------------------------------------------------------------------------
def cmd_capacity(args: argparse.Namespace) -> int:
    from .api import Node
    from .sim.capacity import fits_together, max_replicas, nodes_needed

    objs = _objects(args.cluster, "cluster", args.strict, directory=True)
    if not any(isinstance(o, Node) for o in objs) and not args.node_template:
        raise CLIError(f"cluster {args.cluster}: no Node objects")
    pods = [_one_pod(p, args.strict) for p in args.pod]
    replicas = args.replicas or []
    cfg = _config(args.config)
    if any(r < 0 for r in replicas):
        raise CLIError("--replicas must not be negative")
    template = None
    if args.node_template:
        found = [o for o in _objects(args.node_template, "node template", args.strict) if isinstance(o, Node)]
        if len(found) != 1:
            raise CLIError(f"node template {args.node_template}: expected exactly one Node manifest")
        template = found[0]

    if not replicas:
        if len(pods) != 1:
            raise CLIError("give --replicas for each --pod when asking about several pods")
        if template is not None:
            raise CLIError("--node-template needs --replicas (how many copies must fit)")
        with _CapacityProgress("placing copies") as progress:
            r = max_replicas(objs, pods[0], config=cfg, seed=args.seed, progress=progress)
        report = {"mode": "max_replicas", "pod": r.pod, "placed": r.placed, "per_node": r.per_node,
                  "stop_reason": r.stop_reason}
        if args.json:
            _json_out(report)
            return 0
        con = _console()
        con.print(f"[bold]{r.placed:,}[/] more copies of {r.pod} fit on the cluster")
        _print_distribution(r, all_nodes=args.per_node)
        if r.stop_reason:
            con.print(f"the next copy does not fit: {r.stop_reason}")
        return 0

    if len(replicas) != len(pods):
        raise CLIError(f"{len(pods)} --pod but {len(replicas)} --replicas: give one --replicas per --pod")
    workloads = list(zip(pods, replicas))
    if template is not None:
        try:
            with _CapacityProgress("trying node counts") as progress:
                rep = nodes_needed(objs, workloads, template, config=cfg, max_nodes=args.max_nodes, seed=args.seed,
                                   progress=progress)
        except ValueError as exc:
            raise CLIError(_one_line(str(exc))) from None
        mode = "nodes_needed"
    else:
        with _CapacityProgress("placing replicas") as progress:
            rep = fits_together(objs, workloads, config=cfg, seed=args.seed, progress=progress)
        mode = "fits_together"
    data = {"mode": mode, **rep.as_dict()}
    if template is not None:
        data["node_template"] = template.name
    if args.json:
        _json_out(data)
        return 0
    con = _console()
    if mode == "nodes_needed":
        con.print(f"[bold]{rep.nodes_added}[/] node(s) like {template.name} must be added for every workload to fit")
    else:
        con.print("all workloads fit together" if rep.all_fit else "[red]the workloads do not all fit together[/]")
    for w in rep.workloads:
        mark = "[green]fit[/]" if w.all_fit else "[red]does not fit[/]"
        con.print(f"{w.pod}: {w.placed:,}/{w.requested:,} replicas placed — {mark}")
        _print_distribution(w, indent="  ", all_nodes=args.per_node)
        if w.stop_reason:
            con.print(f"  stopped by: {w.stop_reason}")
    return 0


def _print_distribution(result: Any, indent: str = "", all_nodes: bool = False) -> None:
    """Where the copies went: the nodes with the most (all of them with ``all_nodes``) and, when
    some are left out, how many nodes got how many copies."""
    from rich.table import Table

    from .sim.capacity import TOP_NODES

    per_node = result.per_node
    if not per_node:
        return
    con = _console()
    shown = result.top_nodes(len(per_node) if all_nodes else TOP_NODES)
    t = Table(show_header=True, box=None, padding=(0, 2))
    t.add_column(f"{indent}node")
    t.add_column("copies", justify="right")
    for n, c in shown:
        t.add_row(f"{indent}{n}", f"{c:,}")
    con.print(t)
    if len(shown) == len(per_node):
        return
    con.print(f"{indent}... and {len(per_node) - len(shown):,} more nodes (--per-node lists them all); "
              f"{len(per_node):,} nodes got copies:")
    h = Table(show_header=True, box=None, padding=(0, 2))
    h.add_column(f"{indent}copies per node", justify="right")
    h.add_column("nodes", justify="right")
    for copies, nodes in result.histogram().items():
        h.add_row(f"{indent}{copies:,}", f"{nodes:,}")
    con.print(h)


class _CapacityProgress:
    """A progress bar on stderr while capacity works (on a terminal only); yields the callback."""

    def __init__(self, what: str):
        self.what = what
        self._progress = None
        self._task = None

    def __enter__(self):
        con = _console(stderr=True)
        if not con.is_terminal:
            return None
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

        self._progress = Progress(TextColumn(self.what), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                                  console=con, transient=True)
        self._progress.start()
        self._task = self._progress.add_task(self.what, total=None)
        return self._update

    def _update(self, done: int, total: int | None) -> None:
        self._progress.update(self._task, completed=done, total=total)

    def __exit__(self, *exc) -> bool:
        if self._progress is not None:
            self._progress.stop()
        return False


# ------------------------------------------------------------------------------------------------
# sweep
# ------------------------------------------------------------------------------------------------
def cmd_sweep(args: argparse.Namespace) -> int:
    """Run a sweep file's runs on processes or Dask; write results.csv and a report per run."""
    from .sim.sweep import SweepError, load_sweep, sweep

    if args.dask is not None and args.local_dask is not None:
        raise CLIError("give --dask ADDRESS or --local-dask N, not both")
    _check_out_dir(args.out)
    try:
        plan = load_sweep(_file(args.file, "sweep"))
    except SweepError as exc:
        raise CLIError(f"invalid sweep {args.file}: {_one_line(str(exc))}") from None
    err = _console(stderr=True)
    options = dict(out=args.out, workers=args.workers, dask=args.dask, local_dask=args.local_dask,
                   resume=not args.no_resume, report=args.report)
    try:
        if err.is_terminal and not args.json:
            from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

            with Progress(TextColumn(f"[bold]sweep[/] {plan.name}"), BarColumn(), MofNCompleteColumn(),
                          TextColumn("{task.description}"), TimeElapsedColumn(), console=err, transient=True) as bar:
                task = bar.add_task("", total=len(plan.runs))

                def progress(done: int, total: int, row: dict) -> None:
                    failed = f"[red]{row['run']} failed[/]" if row.get("status") == "failed" else ""
                    bar.update(task, completed=done, total=total, description=failed)

                result = sweep(plan, progress=progress, **options)
        else:
            result = sweep(plan, **options)
    except SweepError as exc:
        raise CLIError(_one_line(str(exc))) from None
    failed = result.failed
    if args.json:
        _json_out({"sweep": plan.name, "runs": len(result.rows), "ran": result.ran, "skipped": result.skipped,
                   "failed": [{"run": r["run"], "error": r["error"]} for r in failed],
                   "results": {k: str(v) for k, v in result.files.items()}})
    else:
        _print_sweep(plan.name, result)
    if failed:
        raise CLIError(f"{len(failed)} of {len(result.rows)} runs failed (errors in {result.files['csv']})")
    return 0


def _print_sweep(name: str, result: Any) -> None:
    from rich.table import Table

    t = Table(title=f"Sweep {name}: {len(result.rows)} runs ({result.ran} run now, {result.skipped} already done)")
    for col, justify in (("run", "left"), ("status", "left"), ("pods scheduled", "right"),
                         ("unschedulable", "right"), ("p99 latency (s)", "right"), ("seconds", "right")):
        t.add_column(col, justify=justify)
    if result.failed:
        t.add_column("error")
    for r in result.rows:
        seconds = f"{r.get('seconds') or 0:.1f}"
        if r["status"] != "ok":
            t.add_row(r["run"], "[red]failed[/]", "", "", "", seconds, r["error"])
            continue
        p99 = r.get("placement_latency_seconds.p99")
        t.add_row(r["run"], "ok", _fmt(r.get("pods_scheduled")), _fmt(r.get("pods_unschedulable")),
                  "" if p99 is None else f"{p99:.2f}", seconds, *([""] if result.failed else []))
    _console().print(t)
    print(f"results: {', '.join(str(p) for p in result.files.values())}; reports in {result.out / 'runs'}")


# ------------------------------------------------------------------------------------------------
# config
# ------------------------------------------------------------------------------------------------
def cmd_config_validate(args: argparse.Namespace) -> int:
    """Load, validate and build every profile (and extender) as a Scheduler would: a config this
    calls valid is one ``Scheduler`` accepts. Each problem is printed as ``FILE: <field>: <reason>``."""
    from .config import ConfigError
    from .scheduler.config_check import check_config

    p = _file(args.file, "config")
    try:
        check_config(p)
    except ConfigError as exc:
        if not exc.errors:  # the document as a whole (unreadable, bad YAML)
            raise CLIError(f"invalid config {args.file}: {_one_line(str(exc))}") from None
        for line in exc.with_source(args.file).lines():
            print(_one_line(line))
        n = len(exc.errors)
        raise CLIError(f"invalid config {args.file}: {n} error{'s' if n > 1 else ''}") from None
    print(located("valid", source=args.file))
    return 0


def cmd_config_defaults(args: argparse.Namespace) -> int:
    from .config import dump_config, load_config

    sys.stdout.write(dump_config(load_config(None)))
    return 0


# ------------------------------------------------------------------------------------------------
# differential
# ------------------------------------------------------------------------------------------------
def cmd_differential(args: argparse.Namespace) -> int:
    """Upstream kube-scheduler (the Go oracle) against fastsched on generated scenarios; exit
    status 1 when any scenario differs (the reproducers are in --out)."""
    import random as _random
    import shutil

    from .testing import oracle as orc

    classes = args.classes or list(orc.CLASSES)
    unknown = [c for c in classes if c not in orc.CLASSES]
    if unknown:
        raise CLIError(f"unknown scenario class {unknown[0]!r} (classes: {', '.join(orc.CLASSES)})")
    binary = Path(args.oracle) if args.oracle else orc.oracle_binary()
    stale = binary.exists() and not args.oracle and \
        (orc.oracle_version(binary) or {}).get("kubernetes") != orc.pinned_version()
    if not binary.exists() or stale:  # missing, or built from another go.mod: (re)build the default one
        if args.oracle:
            raise CLIError(f"oracle binary not found: {args.oracle}")
        if shutil.which("go") is None:
            raise CLIError("the oracle is not built (or is stale) and `go` is not on PATH (it needs Go to build: "
                           "see oracle/)")
        try:
            binary = orc.build_oracle()
        except RuntimeError as exc:
            raise CLIError(str(exc)) from None
    try:
        oracle = orc.Oracle(binary, feature_gates=args.oracle_feature_gates)
    except orc.OracleVersionError as exc:
        raise CLIError(str(exc)) from None
    skew = orc.version_skew(oracle.version)
    if skew is not None and not args.allow_skew:
        oracle.close()
        raise CLIError(f"{skew}: differences would be the releases' (pass --allow-skew to run anyway)")
    out = sys.stdout
    if skew is not None:
        out.write(f"differential: {skew} (--allow-skew)\n")
    if args.bench:
        with oracle:
            for workload in orc.BENCH_WORKLOADS:
                r = orc.bench(oracle, workload, args.bench_nodes, args.bench_init_pods, args.bench_pods)
                line = [f"bench {workload} ({r['nodes']} nodes, {r['init_pods']} init pods, {r['pods']} pods):"]
                for side in ("upstream", "fastsched"):
                    s = r[side]
                    rate = s["scheduled"] / s["seconds"] if s["seconds"] > 0 else float("inf")
                    line.append(f"{side} {s['scheduled']} scheduled in {s['seconds']:.3f} s "
                                f"({rate:,.0f} pods/s, {s['cpu_seconds']:.3f} s CPU)")
                out.write(" ".join(line[:1]) + " " + "; ".join(line[1:]) + "\n")
                out.flush()
        return 0
    seed = args.seed if args.seed is not None else _random.SystemRandom().randrange(1 << 31)
    out.write(f"differential: seed {seed}, classes {', '.join(classes)}\n")
    out.flush()
    with oracle:
        summary = orc.differential(classes, args.scenarios, seed, args.out, oracle=oracle, record=args.record,
                                   log=lambda line: (out.write(line + "\n"), out.flush()), known=not args.raw)
    total = orc.ClassSummary()
    for cls, s in summary.items():
        known = f", {s.known} known" if s.known else ""
        out.write(f"{cls}: {s.scenarios} scenarios, {s.pods} pods, {s.differences} differences{known} "
                  f"({s.seconds:.1f} s)\n")
        total.scenarios += s.scenarios
        total.pods += s.pods
        total.differences += s.differences
    out.write(f"differential: {total.scenarios} scenarios, {total.pods} pods, {total.differences} differences\n")
    return 1 if total.differences else 0


# ------------------------------------------------------------------------------------------------
# parser and entry point
# ------------------------------------------------------------------------------------------------
class _Parser(argparse.ArgumentParser):
    def error(self, message: str):  # one line, no usage dump
        self.exit(2, f"{PROG}: error: {message} (see '{self.prog} --help')\n")


def _nonneg_int(text: str) -> int:
    try:
        v = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected an integer, got {text!r}") from None
    if v < 0:
        raise argparse.ArgumentTypeError(f"must not be negative, got {v}")
    return v


def build_parser() -> argparse.ArgumentParser:
    from . import UPSTREAM_VERSION, __version__

    p = _Parser(prog=PROG, description=f"fastsched {__version__}: the kube-scheduler {UPSTREAM_VERSION} "
                                       "scheduling framework on vectorized kernels — simulate, benchmark, "
                                       "explain and plan capacity.")
    p.add_argument("--version", action="version", version=f"{PROG} {__version__} (kube-scheduler {UPSTREAM_VERSION})")
    sub = p.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)

    s = sub.add_parser("simulate", help="run a scenario in virtual time and write a report",
                       description="Run a scenario (cluster, configuration, pod arrivals, node events, modelled "
                                   "scheduler time) in virtual time and write a report: report.html (open it "
                                   "offline), summary.json, pods.csv, timeseries.csv, metrics.json, records.json "
                                   "and PNG plots.",
                       epilog="The scenario format, every field, is documented in docs/scenario.md; the report's "
                              "files and every CSV column in docs/report.md (in the fastsched repository; "
                              "examples/scenario.yaml is a scenario to start from).")
    s.add_argument("scenario", nargs="?", metavar="SCENARIO", help="scenario YAML file (default: the built-in one)")
    s.add_argument("--out", default=DEFAULT_OUT, metavar="DIR", help=f"report directory (default ./{DEFAULT_OUT})")
    s.add_argument("--seed", type=_nonneg_int, default=None, help="override the scenario's seed (arrivals, node-event picks, scheduler ties; "
                                                                "the initial cluster is kept)")
    s.add_argument("--record", choices=("all", "failures", "none"), default="failures",
                   help="decision records to keep and show in report.html: every attempt of every pod (all), "
                        "the attempts of pods that failed at least once (failures, the default), or none")
    s.add_argument("--quiet", action="store_true", help="no progress bar and no summary table")
    s.set_defaults(func=cmd_simulate)

    b = sub.add_parser("bench", help="time one built-in scheduler_perf workload (an alias of perf)")
    b.add_argument("workload", metavar="WORKLOAD", help="a scheduler_perf workload name, e.g. SchedulingBasic")
    b.add_argument("--nodes", type=_nonneg_int, default=None, help="nodes (default: upstream's size)")
    b.add_argument("--pods", type=_nonneg_int, default=None, help="measured pods (default: scaled with --nodes)")
    b.add_argument("--init-pods", type=_nonneg_int, default=None, help="init pods (default: scaled with --nodes)")
    b.add_argument("--seed", type=_nonneg_int, default=0)
    b.add_argument("--schedule-init", action="store_true",
                   help="schedule the init pods through the scheduler instead of prebinding them")
    b.add_argument("--json", action="store_true", help="machine-readable output")
    b.set_defaults(func=cmd_bench)

    pf = sub.add_parser("perf", help="run an upstream scheduler_perf performance-config.yaml")
    pf.add_argument("config", metavar="CONFIG", help="an upstream performance-config.yaml (template paths "
                                                     "resolve against its folder)")
    pf.add_argument("--name", metavar="TEST", help="run only this test case (e.g. SchedulingBasic)")
    pf.add_argument("--workload", metavar="NAME", help="run only workloads of this name (e.g. 5000Nodes_10000Pods)")
    pf.add_argument("--label", metavar="FILTER", default=None,
                    help="upstream's label filter: comma list, x/+x required, -x excluded (default "
                         "'performance', or none with --workload; '' selects every workload)")
    pf.add_argument("--out", metavar="FILE", help="write upstream's data-items JSON here (a directory gets "
                                                  "upstream's file name)")
    pf.add_argument("--fail-under-threshold", action="store_true",
                    help="exit with status 1 when a workload is below its threshold")
    pf.add_argument("--topic", metavar="T", help="threshold topic (default: the config's folder name)")
    pf.add_argument("--seed", type=_nonneg_int, default=0, help="seed for generated names and ties")
    pf.add_argument("--json", action="store_true", help="print results and data items as JSON, no table")
    pf.add_argument("--list", action="store_true", help="list the selected workloads and exit")
    pf.set_defaults(func=cmd_perf)

    e = sub.add_parser("explain", help="every plugin's verdict and score for one pod on a cluster")
    e.add_argument("--cluster", required=True, metavar="PATH",
                   help="a manifest file, cluster dump or directory: nodes, running pods, namespaces, workloads")
    e.add_argument("--pod", required=True, metavar="FILE", help="the pod manifest")
    e.add_argument("--config", metavar="FILE", help="KubeSchedulerConfiguration (default: the default one)")
    e.add_argument("--profile", metavar="NAME", help="profile (default: the pod's schedulerName)")
    shown = e.add_mutually_exclusive_group()
    shown.add_argument("--limit", type=_nonneg_int, default=EXPLAIN_LIMIT, metavar="N",
                       help=f"show the N best nodes (default {EXPLAIN_LIMIT}; 0: all)")
    shown.add_argument("--all", action="store_true", help="show every node")
    e.add_argument("--seed", type=_nonneg_int, default=0, help="seed for generated names and ties")
    e.add_argument("--strict", action="store_true", help="unknown manifest fields are errors, not warnings")
    e.add_argument("--json", action="store_true", help="machine-readable output")
    e.set_defaults(func=cmd_explain)

    c = sub.add_parser("capacity", help="how many pods fit; whether workloads fit; how many nodes to add")
    c.add_argument("--cluster", required=True, metavar="PATH",
                   help="a manifest file, cluster dump or directory: nodes, running pods, namespaces, "
                        "priority classes, workloads")
    c.add_argument("--pod", required=True, action="append", metavar="FILE", help="a pod manifest (repeatable)")
    c.add_argument("--replicas", action="append", type=_nonneg_int, metavar="N",
                   help="replicas of the matching --pod (repeatable, in the same order)")
    c.add_argument("--node-template", metavar="FILE", help="a Node manifest: how many such nodes must be added")
    c.add_argument("--max-nodes", type=_nonneg_int, default=1000, metavar="N",
                   help="give up beyond this many added nodes (default 1000)")
    c.add_argument("--config", metavar="FILE", help="KubeSchedulerConfiguration (default: the default one)")
    c.add_argument("--seed", type=_nonneg_int, default=0)
    c.add_argument("--strict", action="store_true", help="unknown manifest fields are errors, not warnings")
    c.add_argument("--per-node", action="store_true",
                   help="list every node's copies (default: the top nodes and a histogram)")
    c.add_argument("--json", action="store_true", help="machine-readable output (every node's copies)")
    c.set_defaults(func=cmd_capacity)

    w = sub.add_parser("sweep", help="run many simulations (a grid or list of runs) on processes or Dask")
    w.add_argument("file", metavar="SWEEP", help="a sweep file (YAML): scenario, runs and/or grid")
    w.add_argument("--out", required=True, metavar="DIR", help="results.csv and one report folder per run")
    where = w.add_mutually_exclusive_group()
    where.add_argument("--dask", metavar="ADDRESS", help="a Dask scheduler address (pip install 'fastsched[dask]')")
    where.add_argument("--local-dask", type=_nonneg_int, metavar="N", help="a local Dask cluster of N workers")
    w.add_argument("--workers", type=_nonneg_int, metavar="N",
                   help="worker processes without Dask (default: the CPU count)")
    w.add_argument("--no-resume", action="store_true", help="run every run again, even those already finished")
    w.add_argument("--report", choices=("full", "data"), default="full",
                   help="per-run report: full (plots, report.html) or data (summary.json and CSVs; faster)")
    w.add_argument("--json", action="store_true", help="machine-readable output")
    w.set_defaults(func=cmd_sweep)

    df = sub.add_parser("differential", help="compare fastsched with upstream kube-scheduler (the Go oracle) "
                                             "on generated scenarios")
    df.add_argument("--class", dest="classes", action="append", metavar="C",
                    help="a scenario class (repeatable; default: all): resources, taints, affinity, podaffinity, "
                         "spread, ports, images, volumes, preemption, profiles, dra, mixed")
    df.add_argument("--scenarios", type=_nonneg_int, default=20, metavar="N", help="scenarios per class (default 20)")
    df.add_argument("--seed", type=_nonneg_int, default=None, metavar="S",
                    help="first seed (default: a fresh random one, printed)")
    df.add_argument("--out", default=None, metavar="DIR", help="write each difference, shrunk, as DIR/<class>-<seed>.json")
    df.add_argument("--record", default=None, metavar="DIR",
                    help="write the agreeing scenarios and the oracle's answers to DIR/<class>.jsonl.gz "
                         "(the recorded set tests/oracle replays)")
    df.add_argument("--oracle", default=None, metavar="PATH",
                    help="the oracle binary (default: oracle/bin/oracle, built with `go build` when missing)")
    df.add_argument("--oracle-feature-gates", default=None, metavar="G",
                    help="feature gates the oracle sets on top of upstream's defaults, e.g. OpportunisticBatching=false "
                         "(default: $FASTSCHED_ORACLE_FEATURE_GATES)")
    df.add_argument("--allow-skew", action="store_true",
                    help="run even when the oracle's kube-scheduler release is not the one fastsched follows "
                         "(fastsched.UPSTREAM_VERSION)")
    df.add_argument("--raw", action="store_true",
                    help="count the known differences too (fastsched.testing.oracle.KNOWN; normalized away by default)")
    df.add_argument("--bench", action="store_true",
                    help="instead: time upstream's scheduling cycles (in process) and fastsched's on the same "
                         "SchedulingBasic-like and pod anti-affinity clusters")
    df.add_argument("--bench-nodes", type=_nonneg_int, default=None, metavar="N", help="--bench: nodes (default 500)")
    df.add_argument("--bench-init-pods", type=_nonneg_int, default=None, metavar="K",
                    help="--bench: pods bound beforehand (default 500; 100 with anti-affinity)")
    df.add_argument("--bench-pods", type=_nonneg_int, default=None, metavar="M",
                    help="--bench: pods scheduled and timed (default 1000; 400 with anti-affinity)")
    df.set_defaults(func=cmd_differential)

    g = sub.add_parser("config", help="validate a configuration or print the defaults")
    gsub = g.add_subparsers(dest="config_command", metavar="ACTION", parser_class=_Parser)
    v = gsub.add_parser("validate", help="check a KubeSchedulerConfiguration file")
    v.add_argument("file", metavar="FILE")
    v.set_defaults(func=cmd_config_validate)
    d = gsub.add_parser("defaults", help="print the defaulted configuration as YAML")
    d.set_defaults(func=cmd_config_defaults)
    g.set_defaults(func=None, _help=g)
    p.set_defaults(func=None, _help=p)
    return p


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit status (the console script exits with it)."""
    parser = build_parser()
    try:
        args = parser.parse_args(list(argv) if argv is not None else None)
    except SystemExit as exc:  # --help, --version, usage errors
        return exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 2)
    if args.func is None:
        args._help.print_help(sys.stderr)
        return 2
    import warnings

    from .api import ManifestWarning

    with warnings.catch_warnings():
        warnings.simplefilter("always", ManifestWarning)
        warnings.showwarning = _show_warning
        return _run(args)


def _show_warning(message: Any, category: type, filename: str, lineno: int, file: Any = None,
                  line: Any = None) -> None:
    """Warnings as one ``fastsched: warning: ...`` line each, as kubectl prints its warnings."""
    sys.stderr.write(f"{PROG}: warning: {_one_line(str(message))}\n")


def _run(args: argparse.Namespace) -> int:
    try:
        return int(args.func(args) or 0)
    except CLIError as exc:
        _error(str(exc))
        return 1
    except KeyboardInterrupt:
        _error("interrupted")
        return 130
    except BrokenPipeError:
        return 1
    except Exception as exc:  # noqa: BLE001 - one line, never a traceback (unless FASTSCHED_DEBUG)
        if os.environ.get("FASTSCHED_DEBUG"):
            raise
        if isinstance(exc, FastschedError):
            _error(str(exc))
        elif isinstance(exc, OSError):
            _error(f"{exc.strerror or exc}: {exc.filename or ''}")
        elif isinstance(exc, UnicodeDecodeError):  # a file that is not text, wherever it was read
            _error(f"cannot read a file: {NOT_UTF8_TEXT}")
        else:
            _error(f"internal error: {type(exc).__name__}: {exc} (FASTSCHED_DEBUG=1 shows the traceback)")
        return 1


def _error(message: str) -> None:
    sys.stderr.write(f"{PROG}: error: {_one_line(message)}\n")
    sys.stderr.flush()


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
