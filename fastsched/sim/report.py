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
  Agg backend);
* with gang streams (:mod:`fastsched.sim.gangs`): ``gangs.csv`` — one row per gang
  (:data:`~fastsched.sim.gangs.GANGS_CSV_DOC`) and ``gangs.png`` — gangs waiting, GPUs held at
  Permit and GPU fragmentation over time, and the gang wait times;
* ``records.json`` — the decision records kept (``simulate(record=...)``), per pod record:
  ``{"pods": [{"index", "pod", "incarnation", "status", "history": [AttemptRecord.as_dict()]}]}``
  (per-node lists bounded to the rejected nodes first, :data:`RECORD_JSON_MAX_NODES` in all);
* ``report.html`` — one self-contained page (no network needed: the charts are matplotlib SVG
  inlined, the table's search and sort a few lines of script): the summary with what each number
  means, the plots, the per-pod table (search, sort) and each pod's decision records, the column
  definitions of the CSVs. Rendered with Jinja2 from ``fastsched/sim/templates/report.html.j2``.

Every column and field is documented in :data:`FILES_DOC`, ``SUMMARY_DOC``, ``PODS_CSV_DOC``,
``STATUS_DOC`` and ``TIMESERIES_DOC`` (and in docs/report.md).
"""
from __future__ import annotations

import csv
import io
import json
import math
import os
import re
from pathlib import Path
from typing import Any

from .gangs import GANGS_CSV_DOC, GangRecord
from .simulation import (PODS_CSV_DOC, STATUS_DOC, SUMMARY_DOC, TIMESERIES_DOC, PodRecord, SimulationResult,
                         fmt_number, reconciliation, summary_rows)

__all__ = ["write_report", "REPORT_FILES", "FILES_DOC", "render_html"]

REPORT_FILES = ("summary.json", "pods.csv", "timeseries.csv", "metrics.json",
                "utilization.png", "pending.png", "throughput.png", "latency.png", "records.json", "report.html")

FILES_DOC = {
    "report.html": "this page: open it in a browser, no network needed",
    "summary.json": "the summary numbers and, under definitions, what each means",
    "pods.csv": "one row per pod handed to the scheduler (columns: see pods.csv columns)",
    "timeseries.csv": "one row per sample (columns: see timeseries.csv columns)",
    "metrics.json": "the scheduler's metrics: attempts by result, attempt latency percentiles, preemption "
                    "victims, extension-point durations (extension_point_duration, per-point totals in "
                    "extension_point_totals) and sampled per-plugin durations",
    "records.json": "the decision records kept: per pod, every kept attempt with its per-plugin verdicts and scores",
    "utilization.png": "requested / allocatable per resource over time, with CPU fragmentation",
    "pending.png": "pods waiting to be scheduled and pods running over time",
    "throughput.png": "pods bound per virtual second and per scheduler wall second",
    "latency.png": "distribution of placement latency (bind time - arrival)",
    "gangs.csv": "gang streams only: one row per gang (columns: see gangs.csv columns)",
    "gangs.png": "gang streams only: gangs waiting, GPUs held at Permit, GPU fragmentation, gang wait times",
}
#: the files written only for a run with gang streams
GANG_FILES = ("gangs.csv", "gangs.png")
#: per-node entries of each attempt in records.json (rejected nodes first)
RECORD_JSON_MAX_NODES = 20


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
    paths = {name: out / name for name in REPORT_FILES + (GANG_FILES if "gangs" in result.summary else ())}
    _write_json(paths["summary.json"], {**result.summary, "definitions": {
        "summary": SUMMARY_DOC, "timeseries": TIMESERIES_DOC, "pods_csv": PODS_CSV_DOC, "statuses": STATUS_DOC}})
    _write_csv(paths["pods.csv"], list(PodRecord.CSV_FIELDS), [r.as_row() for r in result.records])
    _write_csv(paths["timeseries.csv"], _timeseries_fields(result), result.timeseries)
    _write_json(paths["metrics.json"], _metrics(result))
    if "gangs.csv" in paths:
        _write_csv(paths["gangs.csv"], list(GangRecord.CSV_FIELDS), [g.as_row() for g in result.gangs])
    _write_json(paths["records.json"], {"pods": [
        {"index": r.index, "pod": f"{r.namespace}/{r.name}", "incarnation": r.incarnation, "status": r.status,
         "history": [h.as_dict(max_nodes=RECORD_JSON_MAX_NODES) for h in r.history]}
        for r in result.records if r.history]})
    svgs = _plots(result, paths)
    paths["report.html"].write_text(render_html(result, svgs), encoding="utf-8")
    return paths


# ------------------------------------------------------------------------------------------------
# report.html
# ------------------------------------------------------------------------------------------------
_CHART_CAPTIONS = {
    "utilization": "Requested / allocatable per resource over live nodes; the dashed line is the share of free CPU "
                   "stranded on nodes where a typical pod no longer fits. Dotted lines: node events.",
    "pending": "Pods waiting to be scheduled (left) and running (right). Spikes are bursts of arrivals and the "
               "pods evicted by drains; a plateau is pods waiting for capacity (e.g. GPUs) to free up.",
    "throughput": "Pods bound per virtual second, and per wall second fastsched itself spent scheduling.",
    "latency": "Placement latency: bind time - arrival, in virtual seconds (log scale); pods bound at the "
               "instant they arrived are counted apart.",
    "gangs": "Gang jobs. Top: gangs created and not started, and the GPUs their members hold while waiting at "
             "Permit. Middle: GPU fragmentation, the share of free GPUs on nodes that cannot host one whole member "
             "of any gang stream. Bottom: gang wait, from the first member's creation to the min_count-th bind.",
}


def _summary_cards(s: dict) -> list[dict]:
    lat = s.get("placement_latency_seconds", {})

    def card(key: str, label: str, value: Any, kind: str = "") -> dict:
        return {"key": key, "label": label, "value": fmt_number(value), "kind": kind}

    return [
        card("pods_total", "pods handed to the scheduler", s["pods_total"]),
        card("pods_scheduled", "scheduled (bound)", s["pods_scheduled"], "ok"),
        card("pods_unschedulable", "unschedulable at the end", s["pods_unschedulable"],
             "bad" if s["pods_unschedulable"] else ""),
        card("pods_pending", "pending for another reason", s["pods_pending"]),
        card("preemption_victims", "preemption victims", s["preemption_victims"]),
        card("evictions", "evicted by node drains and removals", s["evictions"]),
        card("latency_p50", "placement latency p50 (virtual s)", lat.get("p50")),
        card("latency_p99", "placement latency p99 (virtual s)", lat.get("p99")),
        card("scheduler_busy_share", "modelled scheduler busy share",
             f"{100 * s.get('scheduler_busy_share', 0.0):.1f}%"),
        card("pods_per_second", "pods/s (fastsched wall time)", s.get("pods_per_second"), ""),
    ] + _gang_cards(s, card)


def _gang_cards(s: dict, card: Any) -> list[dict]:
    g = s.get("gangs")
    if not g:
        return []
    return [
        card("gangs_started", "gangs started", f"{g['started']:,} of {g['total']:,}", "ok"),
        card("gangs_never_started", "gangs never started", g["never_started"], "bad" if g["never_started"] else ""),
        card("gang_wait_p50", "gang wait p50 (virtual s)", g["wait_seconds"].get("p50")),
        card("gang_wait_max", "gang wait max (virtual s)", g["wait_seconds"].get("max")),
        card("gang_gpus_held_max", "GPUs held at Permit (max)", g["gpus_held_at_permit"]["max"]),
        card("gpu_fragmentation_mean", "GPU fragmentation (mean)", f"{100 * g['gpu_fragmentation']['mean']:.1f}%"),
    ]


_POD_COLUMNS = (("#", "number", "index"), ("name", "text", "name"), ("stream", "text", "stream"),
                ("inc", "number", "incarnation"), ("status", "text", "status"), ("arrival", "number", "arrival"),
                ("latency", "number", "latency"), ("node", "text", "node"), ("attempts", "number", "attempts"),
                ("priority", "number", "priority"), ("reason", "text", "reason"))


def render_html(result: SimulationResult, svgs: dict[str, str]) -> str:
    """The self-contained ``report.html`` for ``result`` (``svgs``: chart name -> inline SVG)."""
    import jinja2

    from .. import __version__
    from ..scheduler.display import record_html

    env = jinja2.Environment(loader=jinja2.PackageLoader("fastsched.sim", "templates"),
                             autoescape=jinja2.select_autoescape(["html", "j2"]))
    pods = []
    for r in result.records:
        history = r.history
        pods.append({"index": r.index, "name": r.name, "stream": r.stream, "incarnation": r.incarnation,
                     "status": r.status, "arrival": f"{r.arrival:.3f}",
                     "latency": "" if r.latency is None else f"{r.latency:.3f}", "node": r.node,
                     "attempts": r.attempts, "priority": r.priority, "reason": r.reason,
                     "has_record": bool(history),
                     "record_html": "".join(record_html(h) for h in history) if history else ""})
    return env.get_template("report.html.j2").render(
        summary=result.summary, description=result.summary.get("description", ""),
        cards=_summary_cards(result.summary), reconciliation=reconciliation(result.summary),
        charts=[{"name": n, "svg": svgs[n], "caption": _CHART_CAPTIONS[n]} for n in svgs],
        pods=pods, pod_columns=[{"name": n, "type": t, "doc": PODS_CSV_DOC[k]} for n, t, k in _POD_COLUMNS],
        record_mode=result.summary.get("record", "none"), summary_rows=summary_rows(result.summary),
        status_doc=STATUS_DOC, pods_csv_doc=PODS_CSV_DOC, timeseries_doc=TIMESERIES_DOC,
        files_doc={k: v for k, v in FILES_DOC.items() if k not in GANG_FILES or "gangs" in result.summary},
        gangs_csv_doc=GANGS_CSV_DOC if "gangs" in result.summary else None,
        version=__version__)


# ------------------------------------------------------------------------------------------------
# plots
# ------------------------------------------------------------------------------------------------
def _plots(result: SimulationResult, paths: dict[str, Path]) -> dict[str, str]:
    """Write the PNG plots; returns the same charts as inline SVG text (chart name -> svg) for report.html."""
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

    svgs: dict[str, str] = {}

    def save(fig, name: str) -> None:
        fig.tight_layout()
        fig.savefig(paths[name], dpi=100)
        buf = io.StringIO()
        fig.savefig(buf, format="svg")
        text = buf.getvalue()
        text = text[text.index("<svg"):]  # drop the XML prolog and doctype
        svgs[name[:-len(".png")]] = re.sub(r"\s*<metadata>.*?</metadata>", "", text, count=1, flags=re.S)
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

    # placement latency histogram: log-spaced bins over the positive latencies (they span
    # milliseconds of queueing behind the scheduler to minutes of waiting for capacity); the pods
    # bound at the instant they arrived are counted in the legend
    lat = [r.latency for r in result.records if r.latency is not None]
    positive = [x for x in lat if x > 1e-9]
    fig, ax = plt.subplots(figsize=(10, 4.5))
    if positive:
        import numpy as np

        low, high = min(positive), max(positive)
        edges = (np.logspace(np.log10(low), np.log10(high * 1.0001), 40).tolist() if high > low
                 else [low * 0.9, low * 1.1])
        ax.hist(positive, bins=edges, color="tab:blue", edgecolor="white",
                label=f"{len(positive):,} pods that waited")
        ax.set_xscale("log")
        p = result.summary.get("placement_latency_seconds", {})
        for key, color in (("p50", "tab:green"), ("p90", "tab:orange"), ("p99", "tab:red")):
            if p.get(key):
                ax.axvline(p[key], color=color, linestyle="--", label=f"{key} = {p[key]:.3g} s")
            elif p.get(key) == 0:  # off a log axis: say so in the legend
                ax.plot([], [], " ", label=f"{key} = 0 s")
        ax.plot([], [], " ", label=f"{len(lat) - len(positive):,} pods bound on arrival (latency 0)")
        ax.legend(fontsize=9)
    elif lat:
        ax.text(0.5, 0.5, f"all {len(lat):,} scheduled pods were bound on arrival (latency 0)",
                ha="center", va="center", transform=ax.transAxes)
    else:
        ax.text(0.5, 0.5, "no pod was scheduled", ha="center", va="center", transform=ax.transAxes)
    ax.set_xlabel("placement latency: bind time - arrival (virtual s, log scale)")
    ax.set_ylabel("pods")
    ax.set_title(f"Placement latency ({len(lat):,} scheduled pods) — {title}")
    ax.grid(alpha=0.3)
    save(fig, "latency.png")
    if "gangs.png" in paths:
        _gang_plot(result, t, mark_events, save, title)
    return svgs


def _gang_plot(result: SimulationResult, t: list, mark_events: Any, save: Any, title: str) -> None:
    """gangs.png: gangs waiting and GPUs held at Permit, GPU fragmentation, gang wait times."""
    import matplotlib.pyplot as plt

    ts = result.timeseries
    g = result.summary["gangs"]
    fig, (ax, axf, axw) = plt.subplots(3, 1, figsize=(10, 10))
    ax.plot(t, [s.get("gangs_waiting", 0) for s in ts], color="tab:red", drawstyle="steps-post",
            label="gangs waiting (not started)")
    ax.set_ylabel("gangs")
    ax.set_ylim(bottom=0)
    ax2 = ax.twinx()
    ax2.plot(t, [s.get("gang_gpus_held_at_permit", 0) for s in ts], color="tab:purple", drawstyle="steps-post",
             label=f"{g['gpu_resource']} held at Permit")
    ax2.set_ylabel("GPUs held at Permit")
    ax2.set_ylim(bottom=0, top=max(1, g["gpus_held_at_permit"]["max"]) * 1.1)
    mark_events(ax)
    h1, l1 = ax.get_legend_handles_labels()
    h2, l2 = ax2.get_legend_handles_labels()
    ax.legend(h1 + h2, l1 + l2, loc="upper left", fontsize=9)
    ax.set_title(f"Gang jobs: {g['started']:,} of {g['total']:,} started, {g['never_started']:,} never — {title}")
    ax.set_xlabel("virtual time (s)")
    ax.grid(alpha=0.3)
    axf.plot(t, [s.get("gpu_fragmentation", 0.0) for s in ts], color="grey", linestyle="--",
             label="GPU fragmentation (stranded / free GPUs)")
    axf.set_ylim(0, 1.02)
    axf.set_ylabel("share of free GPUs")
    axf3 = axf.twinx()
    axf3.plot(t, [s.get("gpus_free", 0) for s in ts], color="tab:green", alpha=0.7, label="free GPUs")
    axf3.plot(t, [s.get("gpus_stranded", 0) for s in ts], color="tab:orange", alpha=0.7, label="stranded GPUs")
    axf3.set_ylabel("GPUs")
    axf3.set_ylim(bottom=0)
    h1, l1 = axf.get_legend_handles_labels()
    h2, l2 = axf3.get_legend_handles_labels()
    axf.legend(h1 + h2, l1 + l2, loc="upper left", fontsize=9)
    axf.set_xlabel("virtual time (s)")
    axf.grid(alpha=0.3)
    waits = [r.wait for r in result.gangs if r.wait is not None]
    if waits:
        axw.hist(waits, bins=min(30, max(5, len(waits))), color="tab:blue", edgecolor="white",
                 label=f"{len(waits):,} gangs started")
        p = g["wait_seconds"]
        for key, color in (("p50", "tab:green"), ("p90", "tab:orange"), ("max", "tab:red")):
            if p.get(key) is not None:
                axw.axvline(p[key], color=color, linestyle="--", label=f"{key} = {p[key]:.3g} s")
        axw.legend(fontsize=9)
    else:
        axw.text(0.5, 0.5, "no gang started", ha="center", va="center", transform=axw.transAxes)
    axw.set_xlabel("gang wait: min_count-th member bound - first member created (virtual s)")
    axw.set_ylabel("gangs")
    axw.grid(alpha=0.3)
    save(fig, "gangs.png")


def _nan(v: Any) -> float:
    return float("nan") if v is None else v
