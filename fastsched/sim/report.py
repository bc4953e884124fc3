"""Write a :class:`~fastsched.sim.simulation.SimulationResult` to a directory.

:func:`write_report` writes

* ``summary.json`` — the summary (pods_total, pods_scheduled, pods_unschedulable, pods_per_second,
  latencies, fragmentation, ...) plus ``definitions`` of its fields;
* ``pods.csv`` — one row per pod record (:attr:`PodRecord.CSV_FIELDS`; empty cells for None);
* ``timeseries.csv`` — one row per sample (columns: see ``TIMESERIES_DOC``);
* ``metrics.json`` — the scheduler's metrics: attempts by result, attempt latency percentiles,
  preemption victims, per-extension-point durations (``extension_point_duration``, with a
  per-point total in ``extension_point_totals``) and sampled per-plugin durations;
* ``utilization.png``, ``pending.png``, ``throughput.png``, ``latency.png`` — plots (matplotlib,
  Agg backend).
"""
from __future__ import annotations

import csv
import json
import math
import os
from pathlib import Path
from typing import Any

from .simulation import SUMMARY_DOC, TIMESERIES_DOC, PodRecord, SimulationResult

__all__ = ["write_report", "REPORT_FILES"]

REPORT_FILES = ("summary.json", "pods.csv", "timeseries.csv", "metrics.json",
                "utilization.png", "pending.png", "throughput.png", "latency.png")


def _clean(value: Any) -> Any:
    """JSON-safe: NaN and infinities become None, tuples lists."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {str(k): _clean(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_clean(v) for v in value]
    return value


def _write_json(path: Path, data: Any) -> None:
    path.write_text(json.dumps(_clean(data), indent=2, sort_keys=False) + "\n")


def _cell(value: Any) -> Any:
    if value is None:
        return ""
    if isinstance(value, float):
        return "" if not math.isfinite(value) else repr(round(value, 9))
    return value


def _write_csv(path: Path, fields: list[str], rows: list[dict]) -> None:
    with path.open("w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(fields)
        for row in rows:
            w.writerow([_cell(row.get(f)) for f in fields])


def _timeseries_fields(result: SimulationResult) -> list[str]:
    head = ["time", "kind", "nodes", "cordoned", "pending", "running", "arrived_total", "bound_total"]
    utils = [f"util_{r}" for r in result.resources]
    tail = ["fragmentation", "throughput_virtual", "throughput_wall", "scheduler_seconds"]
    extra = []
    for s in result.timeseries:
        for k in s:
            if k not in head and k not in utils and k not in tail and k not in extra:
                extra.append(k)
    return head + utils + tail + extra


def _metrics(result: SimulationResult) -> dict:
    m = dict(result.metrics)
    totals: dict[str, dict] = {}
    for entry in m.get("extension_point_duration", []):
        t = totals.setdefault(entry["extension_point"], {"count": 0, "total_seconds": 0.0})
        t["count"] += entry["count"]
        t["total_seconds"] += entry["total_seconds"]
    for t in totals.values():
        t["mean_seconds"] = t["total_seconds"] / t["count"] if t["count"] else 0.0
    m["extension_point_totals"] = dict(sorted(totals.items(), key=lambda kv: -kv[1]["total_seconds"]))
    return m


def write_report(result: SimulationResult, out_dir: str | os.PathLike) -> dict[str, Path]:
    """Write the report files into ``out_dir`` (created if needed); returns name -> path."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    paths = {name: out / name for name in REPORT_FILES}
    _write_json(paths["summary.json"], {**result.summary, "definitions": {
        "summary": SUMMARY_DOC, "timeseries": TIMESERIES_DOC}})
    _write_csv(paths["pods.csv"], list(PodRecord.CSV_FIELDS), [r.as_row() for r in result.records])
    _write_csv(paths["timeseries.csv"], _timeseries_fields(result), result.timeseries)
    _write_json(paths["metrics.json"], _metrics(result))
    _plots(result, paths)
    return paths


# ------------------------------------------------------------------------------------------------
# plots
# ------------------------------------------------------------------------------------------------
def _plots(result: SimulationResult, paths: dict[str, Path]) -> None:
    import matplotlib

    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt

    ts = result.timeseries
    title = f"{result.scenario} (seed {result.seed})"
    t = [s["time"] for s in ts]
    events = [(s["time"], s["kind"]) for s in ts if s["kind"] in ("add", "drain", "remove")]

    def mark_events(ax) -> None:
        colors = {"add": "tab:green", "drain": "tab:orange", "remove": "tab:red"}
        seen = set()
        for when, kind in events:
            ax.axvline(when, color=colors[kind], linestyle=":", linewidth=1,
                       label=f"node {kind}" if kind not in seen else None)
            seen.add(kind)

    def save(fig, name: str) -> None:
        fig.tight_layout()
        fig.savefig(paths[name], dpi=100)
        plt.close(fig)

    # utilization per resource
    fig, ax = plt.subplots(figsize=(10, 5))
    for r in result.resources:
        ax.plot(t, [s.get(f"util_{r}", float("nan")) for s in ts], label=r, linewidth=1.5)
    ax.plot(t, [s["fragmentation"] for s in ts], label="fragmentation (cpu)", color="grey",
            linestyle="--", linewidth=1)
    mark_events(ax)
    ax.set_ylim(0, 1.02)
    ax.set_xlabel("virtual time (s)")
    ax.set_ylabel("requested / allocatable")
    ax.set_title(f"Utilization per resource — {title}")
    ax.grid(alpha=0.3)
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1), fontsize=9)
    save(fig, "utilization.png")

    # pending pods
    fig, ax = plt.subplots(figsize=(10, 4.5))
    ax.plot(t, [s["pending"] for s in ts], color="tab:red", label="pending pods", drawstyle="steps-post")
    ax.set_xlabel("virtual time (s)")
    ax.set_ylabel("pending pods")
    ax.set_ylim(bottom=0)
    ax2 = ax.twinx()
    ax2.plot(t, [s["running"] for s in ts], color="tab:blue", alpha=0.6, label="running pods")
    ax2.set_ylabel("running pods (all, incl. initial)")
    mark_events(ax)
    ax.set_title(f"Pending and running pods — {title}")
    ax.grid(alpha=0.3)
    h1, l1 = ax.get_legend_handles_labels()
    h2, l2 = ax2.get_legend_handles_labels()
    ax.legend(h1 + h2, l1 + l2, loc="upper left", fontsize=9)
    save(fig, "pending.png")

    # throughput
    steps = [s for s in ts if s["kind"] == "step"]
    fig, ax = plt.subplots(figsize=(10, 4.5))
    ax.plot([s["time"] for s in steps], [_nan(s["throughput_virtual"]) for s in steps], color="tab:green",
            label="pods bound / virtual s")
    ax.set_xlabel("virtual time (s)")
    ax.set_ylabel("pods bound per virtual second")
    ax.set_ylim(bottom=0)
    ax2 = ax.twinx()
    ax2.plot([s["time"] for s in steps], [_nan(s["throughput_wall"]) for s in steps], color="tab:purple",
             alpha=0.7, linewidth=1, label="pods bound / scheduler wall s")
    ax2.set_ylabel("pods bound per wall second (scheduler)")
    ax2.set_ylim(bottom=0)
    pps = result.summary.get("pods_per_second")
    if pps:
        ax2.axhline(pps, color="tab:purple", linestyle="--", linewidth=1, label=f"overall {pps:,.0f} pods/s")
    ax.set_title(f"Scheduling throughput — {title}")
    ax.grid(alpha=0.3)
    h1, l1 = ax.get_legend_handles_labels()
    h2, l2 = ax2.get_legend_handles_labels()
    ax.legend(h1 + h2, l1 + l2, loc="upper right", fontsize=9)
    save(fig, "throughput.png")

    # placement latency histogram
    lat = [r.latency for r in result.records if r.latency is not None]
    fig, ax = plt.subplots(figsize=(10, 4.5))
    if lat:
        top = max(lat)
        bins = 50 if top > 0 else 1
        ax.hist(lat, bins=bins, range=(0, top if top > 0 else 1), color="tab:blue", edgecolor="white")
        ax.set_yscale("log")
        p = result.summary.get("placement_latency_seconds", {})
        for key, color in (("p50", "tab:green"), ("p90", "tab:orange"), ("p99", "tab:red")):
            if p.get(key) is not None:
                ax.axvline(p[key], color=color, linestyle="--", label=f"{key} = {p[key]:.2f} s")
        ax.legend(fontsize=9)
    else:
        ax.text(0.5, 0.5, "no pod was scheduled", ha="center", va="center", transform=ax.transAxes)
    ax.set_xlabel("placement latency: bind time - arrival (virtual s)")
    ax.set_ylabel("pods (log scale)")
    ax.set_title(f"Placement latency ({len(lat)} scheduled pods) — {title}")
    ax.grid(alpha=0.3)
    save(fig, "latency.png")


def _nan(v: Any) -> float:
    return float("nan") if v is None else v
