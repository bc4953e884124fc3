"""``fastsched simulate``: run a scenario in virtual time and write a report.

One module per command (see :mod:`fastsched.cli`); the shared helpers are in
:mod:`fastsched.cli.common`.
"""
from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from .common import _check_out_dir, CLIError, _console, _file, _fmt, _one_line


def cmd_simulate(args: argparse.Namespace) -> int:
    from ..sim.report import write_report
    from ..sim.scenario import Scenario, ScenarioError, default_scenario
    from ..sim.simulation import simulate

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
    g = s.get("gangs")
    if g:
        w = g["wait_seconds"]
        rows += [
            ("gangs started / created (never started)", f"{g['started']:,} / {g['total']:,} ({g['never_started']:,})"),
            ("gang wait p50/p90/max (virtual s)", "/".join(_fmt(w.get(k), 2) for k in ("p50", "p90", "max"))),
            (f"{g['gpu_resource']} held at Permit (max / mean)",
             f"{g['gpus_held_at_permit']['max']:,} / {g['gpus_held_at_permit']['mean']:.1f}"),
            ("GPU fragmentation (mean / final)",
             f"{g['gpu_fragmentation']['mean']:.1%} / {g['gpu_fragmentation']['final']:.1%}"),
        ]
    for k, v in rows:
        t.add_row(k, v)
    _console().print(t)
