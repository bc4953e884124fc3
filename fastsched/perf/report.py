"""What ``fastsched perf`` shows and writes: a rich table per run and upstream's JSON file."""
from __future__ import annotations

import json
import math
import os
from pathlib import Path
from typing import Any

from .metrics import PerfReport, WorkloadResult

__all__ = ["results_table", "rescaled_label", "write_data_items", "default_json_name"]


def _num(v: float | None, digits: int = 1) -> str:
    if v is None or (isinstance(v, float) and not math.isfinite(v)):
        return "-"
    return f"{v:,.{digits}f}"


def _status(r: WorkloadResult) -> str:
    return {"passed": "[green]passed[/]", "below-threshold": "[red]below threshold[/]",
            "failed": "[red]failed[/]", "skipped": "[yellow]skipped[/]"}.get(r.status, r.status)


def results_table(report: PerfReport, title: str = "scheduler_perf results") -> Any:
    """A rich Table: each workload's threshold, measured value (the selected metric and bucket,
    SchedulingThroughput Average by default) and their ratio, with pods and time."""
    from rich.table import Table

    t = Table(title=title, show_lines=False)
    t.add_column("test case / workload", no_wrap=True)
    t.add_column("status")
    t.add_column("metric")
    t.add_column("threshold", justify="right")
    t.add_column("measured", justify="right")
    # SchedulingThroughput's kept samples (the fewest of the measured phases): one or two are the
    # phase's tail over whole seconds, not its rate (see run_perf's rescale_min_samples)
    t.add_column("samples", justify="right")
    t.add_column("ratio", justify="right")
    t.add_column("p50 / p90 / p99", justify="right")
    t.add_column("pods bound", justify="right")
    # fastsched's own figure, beside the metric and never in its place: what a phase too short for
    # a throughput sample still tells (pods bound over the phases' time on the run's clock)
    t.add_column("phases pods/s", justify="right")
    t.add_column("wall s", justify="right")
    for r in report.results:
        _add_row(t, r, r.name)
        if r.rescaled is not None:
            # the rescaled run's own row, under the original's "no sample": a bigger workload
            # than the config's, named by the parameters it changed
            _add_row(t, r.rescaled, f"  rescaled: {rescaled_label(r.rescaled)}")
    return t


def rescaled_label(r: WorkloadResult) -> str:
    """A rescaled run named by the parameters it changed: ``measurePods=10,000``, and when it
    scaled the cluster too, ``; cluster scaled: nodesWithDRA=2,000, initClaims=10,000``."""
    text = ", ".join(f"{k}={v:,}" for k, v in r.scaled_params.items())
    if r.scaled_cluster_params:
        text += "; cluster scaled: " + ", ".join(f"{k}={v:,}" for k, v in r.scaled_cluster_params.items())
    return text


def _add_row(t: Any, r: WorkloadResult, name: str) -> None:
    """One row of :func:`results_table`: ``r``'s metric, ratio and fastsched's own phase rate."""
    metric = r.selector.name if r.selector.name != "SchedulingThroughput" else "pods/s"
    if r.selector.data_bucket != "Average":
        metric += f" {r.selector.data_bucket}"
    measured = "no sample" if r.measured is None and r.no_throughput_sample else _num(r.measured)
    ratio = r.ratio
    ratio_text = "-" if ratio is None else (f"[green]{ratio:.2f}x[/]" if ratio > 1 else f"[red]{ratio:.2f}x[/]")
    pct = "-"
    for item in r.data_items:
        if item.labels.get("Metric") == r.selector.name and item.data:
            pct = " / ".join(_num(item.data.get(k)) for k in ("Perc50", "Perc90", "Perc99"))
            break
    samples = r.throughput_samples if r.status != "skipped" else None
    t.add_row(name, _status(r), metric, _num(r.threshold or None, 0), measured,
              "-" if samples is None else f"{samples:,}", ratio_text, pct,
              f"{r.pods_scheduled:,}" if r.status != "skipped" else "-", _phases_rate(r),
              _num(r.seconds, 1) if r.status != "skipped" else "-")


def _phases_rate(r: WorkloadResult) -> str:
    """Pods bound per second over the workload's measured phases together (their pods over their
    time on the run's clock), "-" without a phase."""
    rate = r.phases_pods_per_second
    return "-" if r.status == "skipped" or rate is None else _num(rate, 0)


def default_json_name(topic: str | None) -> str:
    """Upstream's file name: ``BenchmarkPerfScheduling_benchmark_<topic>_<date>.json``."""
    import time

    return f"BenchmarkPerfScheduling_benchmark_{topic or 'fastsched'}_{time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime())}.json"


def write_data_items(report: PerfReport, out: str | os.PathLike) -> Path:
    """Write upstream's data-items JSON (indented, as ``dataItems2JSONFile``); ``out`` may be a
    directory (upstream's ``-data-items-dir``: the file gets upstream's name) or a file name."""
    p = Path(out)
    if p.is_dir():
        p = p / default_json_name(report.topic)
    p.write_text(json.dumps(report.data_items_json(), indent=2) + "\n", encoding="utf-8")
    return p
