"""``fastsched perf``: run an upstream scheduler_perf performance-config.yaml.

One module per command (see :mod:`fastsched.cli`); the shared helpers are in
:mod:`fastsched.cli.common`.
"""
from __future__ import annotations

import argparse
import os
from pathlib import Path
from typing import Any

from .common import PROG, CLIError, _console, _error, _fmt, _json_out, _one_line


def cmd_perf(args: argparse.Namespace) -> int:
    """Run an upstream ``performance-config.yaml``: every selected workload, a table of results,
    optionally upstream's data-items JSON."""
    from ..perf import PerfConfigError, load_perf_config, run_perf, select_workloads
    from ..perf.report import results_table, write_data_items

    try:
        config = load_perf_config(args.config)
        label = args.label if args.label is not None else ("" if args.workload else "performance")
        selected = select_workloads(config, name=args.name, workload=args.workload, label_filter=label)
    except PerfConfigError as exc:
        raise CLIError(str(exc)) from None
    factor = args.rescale_no_sample
    if factor is not None and not factor > 1:  # NaN too
        raise CLIError(f"--rescale-no-sample: Invalid value: {factor:g}: must be greater than 1")
    if args.min_samples > 1 and factor is None:
        raise CLIError("--min-samples: only with --rescale-no-sample (it says which runs are rescaled)")
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
                                  on_result=on_result, cpu_time=args.cpu_time,
                                  rescale=args.rescale_no_sample, rescale_min_samples=args.min_samples)
        else:
            report = run_perf(config, name=args.name, workload=args.workload, label_filter=label,
                              topic=args.topic, seed=args.seed, on_result=finished, cpu_time=args.cpu_time,
                              rescale=args.rescale_no_sample, rescale_min_samples=args.min_samples)
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
        if any(r.measured is None and r.no_throughput_sample for r in report.results):
            con.print("no sample: the measured phase ended before a second 1 s throughput tick after its first "
                      "bound pod, so it has no SchedulingThroughput sample; as upstream, no value is reported "
                      "and the threshold is not checked (\"phases pods/s\" is fastsched's own figure over the "
                      "measured phases, not the metric)")
        if any(r.rescaled is not None for r in report.results):
            con.print("rescaled: the same workload run with its measured pods' count parameters turned up "
                      "(--rescale-no-sample), a bigger workload than the config's; its metric is upstream's "
                      "SchedulingThroughput of that run and checks no threshold of the original")
        if any(r.rescaled is not None and r.rescaled.scaled_cluster_params for r in report.results):
            con.print("cluster scaled: the rescaled pods did not fit the config's cluster (they stayed unschedulable), "
                      "so its nodes (and their per-node slices) and its init pods and claims were scaled as its "
                      "pods were (the values in its row): the config's fill ratio on a bigger cluster, each pod's "
                      "Filter and Score dearer")
        if args.min_samples > 1 and any(r.measured is not None and r.rescaled is not None for r in report.results):
            con.print(f"a metric of fewer than {args.min_samples} samples is shown but rescaled (--min-samples): "
                      "upstream's collector drops the first 1 s tick with a bind, so one or two samples are the "
                      "phase's last pods over whole seconds, not its rate")
        for r in report.results:
            if r.status in ("skipped", "failed"):
                con.print(f"{r.name}: {r.status}: {r.reason}", markup=False, highlight=False)
            rs = r.rescaled
            if rs is not None:
                # a rescaled run capped at (or refused by) the room of the nodes its pods can go
                # to, or ended there with too few samples: what it measured and why no more
                for note in [*(w for w in rs.warnings if w.startswith("rescale capped")),
                             *([f"{rs.status}: {rs.reason}"] if rs.reason else [])]:
                    con.print(f"{r.name} rescaled: {note}", markup=False, highlight=False)
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
