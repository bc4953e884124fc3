"""Print BENCHMARKS.md's tables from one pytest-benchmark JSON file.

    python -m pytest benchmarks/ --benchmark-only --benchmark-json=bench.json
    python benchmarks/report.py bench.json > tables.md

Every figure comes from a benchmark's ``extra_info`` (or, where a benchmark records none,
pytest-benchmark's own statistics, named as such); a benchmark missing from the file leaves its
table out.
"""
from __future__ import annotations

import json
import re
import sys
from collections import defaultdict
from typing import Any, Iterable


def _fmt(v: Any, digits: int = 0) -> str:
    if v is None:
        return "-"
    if isinstance(v, bool):
        return "yes" if v else "no"
    if isinstance(v, int):
        return f"{v:,}"
    if isinstance(v, (int, float)):
        if digits == 0 and abs(v) >= 1:
            return f"{v:,.0f}"
        return f"{v:,.{digits or 2}f}"
    return str(v)


def _table(header: Iterable[str], rows: Iterable[Iterable[Any]]) -> str:
    header = list(header)
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)


def _by_file(benchmarks: list[dict]) -> dict[str, list[dict]]:
    out: dict[str, list[dict]] = defaultdict(list)
    for b in benchmarks:
        out[b["fullname"].split("::")[0].rsplit("/", 1)[-1]].append(b)
    return out


def _param(b: dict) -> str:
    m = re.search(r"\[(.*)\]$", b["name"])
    return m.group(1) if m else ""


def header(data: dict) -> str:
    info = data.get("machine_info", {})
    fs = info.get("fastsched", {})
    when = data.get("datetime", "")[:16].replace("T", " ")
    load = f"{fs.get('loadavg_start')} at the start, {fs.get('loadavg_end')} at the end"
    return (f"Run ending {when} UTC, commit `{fs.get('commit', '?')}`: {fs.get('cpu_model', info.get('cpu', {}).get('brand_raw'))}, "
            f"{fs.get('cpus')} CPUs, Python {fs.get('python', info.get('python_version'))}, "
            f"NumPy {fs.get('numpy')}; load average (1, 5, 15 min) {load}.")


def workloads(bs: list[dict]) -> str:  # noqa: C901 - one table
    rows: dict[str, dict] = defaultdict(dict)
    for b in bs:
        e = b["extra_info"]
        name = _param(b).split("-")[0]
        rows[name][(e["nodes"], e["pods"])] = e
    out = []
    for name, cols in rows.items():
        any_e = next(iter(cols.values()))
        def cell(k):
            e = cols.get(k)
            return _fmt(e["cpu_pods_per_second"]) if e else "-"
        big = cols.get((5000, "shared"), any_e)
        out.append([name, cell((500, "shared")), f"**{cell((5000, 'shared'))}**", cell((5000, "parsed")),
                    _fmt(big.get("measured")), _fmt(big.get("churn_pods")), _fmt(big.get("preemption_victims")),
                    _fmt(any_e.get("upstream_floor"))])
    return _table(["workload", "500 nodes, shared spec", "5,000 nodes, shared spec", "5,000 nodes, parsed pods",
                   "measured pods (5,000 nodes)", "churn pods", "victims", "upstream floor"], out)


def end_to_end(bs: list[dict]) -> str:
    # (runs before the nodes parameter have neither nodes nor peak_rss_mib: 5,000 nodes)
    rows = [[_param(b).split("-")[0] or "named", _fmt(e.get("nodes", 5000)), _fmt(e["add_pods_us_best"], 1),
             _fmt(e["run_us_best"], 1), _fmt(e["cpu_pods_per_second_best"]), _fmt(e["cpu_pods_per_second_median"]),
             _fmt(e.get("peak_rss_mib"))]
            for b, e in ((b, b["extra_info"]) for b in bs)]
    return _table(["manifests", "nodes", "add_pods (µs per pod, best)", "run() (µs per pod, best)",
                   "end to end (pods/s, CPU, best of 3; 1 round at 1,000,000 nodes)", "median",
                   "process peak RSS (MiB)"], rows)


def scheduler(bs: list[dict]) -> str:
    rows = []
    for b in bs:
        e = b["extra_info"]
        rows.append([e["percentage_of_nodes_to_score"] or "0 (adaptive)",
                     {"shared": "shared spec objects", "parsed": "parsed one manifest each"}[e["pods"]],
                     _fmt(e["cpu_pods_per_second_best"]), _fmt(e["cpu_pods_per_second_median"])])
    return _table(["percentageOfNodesToScore", "pods", "best of 5 (pods/s, CPU)", "median of 5"], rows)


def preemption(bs: list[dict]) -> str:
    rows = [[_fmt(e["nodes"]), _fmt(e["measured"]), _fmt(e["cpu_pods_per_second"]), _fmt(e["wall_pods_per_second"]),
             _fmt(e["preemption_victims"]), _fmt(e["upstream_floor"])] for e in (b["extra_info"] for b in bs)]
    return _table(["nodes", "measured pods", "pods/s (CPU)", "pods/s (wall)", "victims", "upstream floor (500 nodes)"],
                  rows)


def failed_attempts(bs: list[dict]) -> str:
    rows = [["1,000 nodes of the built-in scenario's shapes, pods that fit nowhere, decisions recorded",
             f"{b['extra_info']['cpu_us_per_failed_attempt']:,.0f} µs"] for b in bs]
    return _table(["case", "CPU per failed attempt"], rows)


def gangs(bs: list[dict]) -> str:
    rows = []
    for b in bs:
        e = b["extra_info"]
        # a phase without one full one-second sample has no SchedulingThroughput (upstream's
        # collector), recorded as 0.0 with no_throughput_sample set: say so, never "0"
        metric = "no sample" if e.get("no_throughput_sample") else _fmt(e["measured_pods_per_second"])
        phases = e.get("phase_pods_per_second") or []
        rows.append([_param(b), _fmt(e["pods_scheduled"]), metric,
                     ", ".join(_fmt(p) for p in phases) or "-", _fmt(e["cpu_s"], 2)])
    return _table(["workload", "pods", "SchedulingThroughput (pods/s, CPU clock)", "measured phase (pods/s)",
                   "CPU s (whole run)"], rows)


def fused(bs: list[dict]) -> str:
    rows = [[_fmt(e["nodes"]), _fmt(e["measured_pods"]), _fmt(e["scheduler_pods_per_second"]),
             _fmt(e["bare_kernel_pods_per_second"]), f"{e['ratio']:.2f}",
             _fmt(e["bare_kernel_score_cache_pods_per_second"]), f"{e['ratio_score_cache']:.2f}"]
            for e in (b["extra_info"] for b in bs)]
    return _table(["nodes", "pods", "scheduler (pods/s, CPU)", "bare single pass", "ratio",
                   "bare pass with score cache", "ratio"], rows)


def flat(bs: list[dict]) -> str:
    rows = [[_param(b), _fmt(e["nodes"]), _fmt(e["pods"]), ", ".join(f"{x:.0f}" for x in e["blocks_ms"]),
             f"{e['last_over_first']:.2f}"] for b in bs for e in [b["extra_info"]]]
    return _table(["workload", "nodes", "pods", "CPU ms per block of 1,000", "last / first"], rows)


def micro(bs: list[dict], label: Any = _param) -> str:
    rows = []
    for b in bs:
        e = b["extra_info"]
        if "first_call_ms" not in e:
            continue
        rows.append([label(b) or b["name"].removeprefix("test_"), f"{e['first_call_ms']:.2f}", f"{e['warm_median_ms']:.3f}", _fmt(e["per_node_ms"], 1),
                     f"{e['per_node_over_first_call']:.0f}x", f"{e['per_node_over_warm']:.0f}x"])
    return _table(["case", "batch, first call (ms)", "batch, warm (ms)", "per-node (ms)", "per-node / first",
                   "per-node / warm"], rows)


def score_weights(bs: list[dict]) -> str:
    rows: dict[int, dict] = defaultdict(dict)
    for b in bs:
        e = b["extra_info"]
        rows[e["nodes"]]["kernel" if b["name"].startswith("test_kernel") else "python"] = e.get("cpu_ms_median")
    return _table(["nodes", "kernel (ms, CPU)", "per-node Python loop (ms, CPU)"],
                  [[_fmt(n), _fmt(r.get("kernel"), 3), _fmt(r.get("python"), 1)] for n, r in sorted(rows.items())])


def upstream(bs: list[dict], topic: str | None = None, samples_col: bool = False,
             rescaled: bool = False) -> list[list[str]]:
    """Rows of the scheduler_perf table; ``samples_col``: the metric's kept samples (results from
    before they were recorded have none); with ``rescaled`` (the run had FASTSCHED_BENCH_RESCALE
    set) four more columns: the rescaled run's measured pods, metric, samples and ratio."""
    rows = []
    for b in bs:
        e = b["extra_info"]
        case = _param(b)
        if topic is not None:
            case = f"{topic}/{case}"
        metric = e.get("measured_pods_per_second")
        samples = e.get("throughput_samples")
        row = [case, _fmt(e.get("threshold")), "no sample" if metric is None else _fmt(metric)]
        if samples_col:
            row.append("-" if samples is None else _fmt(samples))
        row.append(f"{e['ratio']:.1f}x" if e.get("ratio") else "-")
        if rescaled:
            rs = e.get("rescaled")
            if rs is None:
                row += ["-", "-", "-", "-"]
            else:
                m = rs.get("measured_pods_per_second")
                params = ", ".join(f"{k}={_fmt(v)}" for k, v in rs["params"].items())
                if rs.get("cluster_params"):  # the cluster scaled too: its pods did not fit the config's
                    params += "; cluster scaled: " + ", ".join(f"{k}={_fmt(v)}" for k, v in rs["cluster_params"].items())
                row += [params,
                        ("no sample" if m is None else _fmt(m)) + ("" if rs["status"] == "passed" else f" ({rs['status']})"),
                        _fmt(rs.get("throughput_samples")), f"{rs['ratio']:.1f}x" if rs.get("ratio") else "-"]
        rows.append(row + [_fmt(e.get("phase_pods_per_second")), _fmt(e.get("cpu_s"), 1)])
    return rows


def capacity(bs: list[dict]) -> str:
    (b,) = bs
    rows = [[name, f"{v['cpu_s'] * 1e3:,.1f} ms" if v["cpu_s"] < 1 else f"{v['cpu_s']:.2f} s",
             f"{v['wall_s'] * 1e3:,.1f} ms" if v["wall_s"] < 1 else f"{v['wall_s']:.2f} s"]
            for name, v in b["extra_info"].items()]
    return _table(["case", "CPU", "wall"], rows)


def numba(bs: list[dict]) -> str:
    (b,) = bs
    return _table(["alternative", "value"], [[k, _fmt(v, 1) if "(us)" in k else f"{v:.2f}"]
                                             for k, v in b["extra_info"].items()])


def scale(bs: list[dict]) -> str:
    rows = []
    for b in bs:
        e = b["extra_info"]
        if b["name"].startswith("test_add_cluster"):
            rows.append([f"add {e['nodes']:,} nodes + {e['pods']:,} bound pods", f"{e['cpu_seconds']:.2f} s CPU "
                         f"({e['us_per_node_and_pod']:.2f} µs per node and pod), {e['wall_seconds']:.2f} s wall"])
        elif b["name"].startswith("test_cluster_memory"):
            rows.append([f"memory of {e['nodes']:,} nodes + {e['pods']:,} pods (streamed)",
                         f"{e['rss_growth_mib']:,} MiB RSS growth ({e['bytes_per_node_and_pod']:,} bytes per node and "
                         f"pod), added in {e['add_cpu_seconds']:.2f} s CPU"])
        elif b["name"].startswith("test_table_add_remove_pod"):
            rows.append([f"`NodeTable.add_pod` / `remove_pod` ({e['pods']:,} pods on {e['nodes']:,} nodes)",
                         f"{e['add_pod_us']:.2f} / {e['remove_pod_us']:.2f} µs CPU per call (best of {e['rounds']})"])
    return _table(["case", "result"], rows)


def load(bs: list[dict]) -> str:
    return _table(["loader", "CPU µs per pod (best of 5)"],
                  [[_param(b), _fmt(b["extra_info"]["cpu_us_per_pod"], 1)] for b in bs])


def dra_micro(bs: list[dict]) -> str:
    rows = [[k, f"{v:.1f} µs"] for b in bs if b["name"] == "test_allocator_and_cel" for k, v in b["extra_info"].items()]
    return _table(["call", "median (wall)"], rows)


SECTIONS = [
    ("bench_end_to_end.py", "SchedulingBasic end to end on single-manifest pods (add_pods + run)",
     end_to_end),
    ("bench_workloads.py", "End to end: scheduler_perf workloads, pods/s of CPU", workloads),
    ("bench_scheduler.py", "SchedulingBasic, 5,000 nodes, five rounds", scheduler),
    ("bench_preemption.py", "PreemptionBasic", preemption),
    ("bench_failed_attempts.py", "Attempts that fail", failed_attempts),
    ("bench_fused_cycle.py", "The scheduler beside a bare compiled pass", fused),
    ("bench_flat_cost.py", "Per-pod cost over a long run", flat),
    ("bench_default_profile.py", "Default profile, one pod, every node: batch vs per-node", micro),
    ("bench_noderesources.py", "NodeResourcesFit + BalancedAllocation, one pod, 5,000 nodes", micro),
    ("bench_interpodaffinity.py", "InterPodAffinity, one pod, 5,000 nodes and pods", micro),
    ("bench_podtopologyspread.py", "PodTopologySpread, one pod, 5,000 nodes and pods", micro),
    ("bench_score_weights.py", "RunScorePlugins' weighting step", score_weights),
    ("bench_capacity.py", "capacity, forks and transactions", capacity),
    ("bench_numba.py", "numba user kernels", numba),
    ("bench_scale.py", "Set-up at scale", scale),
    ("bench_load.py", "Loading manifests", load),
    ("bench_dra.py", "DRA allocator and CEL alone", dra_micro),
    ("bench_gangscheduling.py", "Gang scheduling, `podgroup/gangscheduling`", gangs),
]
# files whose rows print in the scheduler_perf table at the end rather than in a section
PERF_TABLE_FILES = ("bench_upstream_perf.py", "bench_volumes.py", "bench_dra.py")


def main() -> None:
    data = json.loads(open(sys.argv[1]).read())
    files = _by_file(data["benchmarks"])
    print(header(data))
    for fname, title, fn in SECTIONS:
        bs = files.get(fname)
        if fname == "bench_dra.py" and bs:
            bs = [b for b in bs if b["name"] == "test_allocator_and_cel"]
        if not bs:
            continue
        print(f"\n### {title} (`{fname}`)\n")
        print(fn(bs))
    perf_rows = []
    perf_bs = {fname: [b for b in files.get(fname, []) if b["name"] != "test_allocator_and_cel"]
               for fname in PERF_TABLE_FILES}
    # a run with FASTSCHED_BENCH_RESCALE set records "rescaled" (None or a run) in every row
    rescaled = any("rescaled" in b["extra_info"] for bs in perf_bs.values() for b in bs)
    samples_col = any("throughput_samples" in b["extra_info"] for bs in perf_bs.values() for b in bs)
    for fname, topic in zip(PERF_TABLE_FILES, (None, "volumes", "dra")):
        perf_rows += upstream(perf_bs[fname], topic, samples_col, rescaled)
    if perf_rows:
        print("\n### Upstream's performance workloads, as they are "
              "(`bench_upstream_perf.py`, `bench_volumes.py`, `bench_dra.py`)\n")
        cols = ["workload", "threshold", "SchedulingThroughput (pods/s, CPU clock)"]
        cols += ["samples"] * samples_col + ["ratio"]
        if rescaled:
            cols += ["rescaled run", "its SchedulingThroughput", "its samples", "its ratio"]
        print(_table(cols + ["measured phase (pods/s, fastsched's figure)", "CPU s (whole run, set-up included)"],
                     perf_rows))


if __name__ == "__main__":
    main()
