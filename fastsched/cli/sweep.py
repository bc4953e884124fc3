"""``fastsched sweep``: run many simulations (a grid or list of runs) on processes or Dask.

One module per command (see :mod:`fastsched.cli`); the shared helpers are in
:mod:`fastsched.cli.common`.
"""
from __future__ import annotations

import argparse
from typing import Any

from .common import _check_out_dir, CLIError, _console, _file, _fmt, _json_out, _one_line


def cmd_sweep(args: argparse.Namespace) -> int:
    """Run a sweep file's runs on processes or Dask; write results.csv and a report per run."""
    from ..sim.sweep import SweepError, load_sweep, sweep

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
    for col in ("run", "status"):
        t.add_column(col, justify="left")
    for col in ("pods scheduled", "unschedulable", "p99 latency (s)", "seconds"):
        t.add_column(col, justify="right")
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
