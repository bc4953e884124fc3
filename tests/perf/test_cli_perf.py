"""``fastsched perf`` as a user runs it, and ``fastsched bench`` as its alias."""
import json

import pytest

from fastsched.cli import main

from .conftest import POD, UPSTREAM

CONFIG = """\
- name: Basic
  defaultPodTemplatePath: ../templates/pod.yaml
  workloadTemplate:
  - opcode: createNodes
    countParam: $nodes
  - opcode: createPods
    countParam: $pods
    collectMetrics: true
  workloads:
  - name: easy
    labels: [performance]
    threshold: 1
    params: {nodes: 10, pods: 50}
  - name: hard
    labels: [performance]
    threshold: 100000000
    params: {nodes: 10, pods: 50}
  - name: tiny
    labels: [integration-test]
    params: {nodes: 2, pods: 2}
"""


def run(capsys, *argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def _slow_cpu(monkeypatch, seconds: float = 0.05) -> None:
    """A fake CPU clock that moves ``seconds`` per reading: with --cpu-time a 50-pod phase lasts
    seconds of the run's clock, long enough for SchedulingThroughput samples."""
    import itertools
    import time

    from fastsched.perf import runner

    readings = itertools.count()
    monkeypatch.setattr(time, "process_time", lambda: next(readings) * seconds)
    # every bound pod reads the clock (the runner's reuse of a reading taken within 50 us of wall
    # time would make the fake phase as short as the machine is fast)
    monkeypatch.setattr(runner, "BOUND_CLOCK_REUSE", 0.0)


def test_table_json_file_and_threshold_exit_status(perf_dir, capsys, tmp_path, monkeypatch):
    path = perf_dir(CONFIG, pod__yaml=POD)
    _slow_cpu(monkeypatch)
    code, out, err = run(capsys, "perf", path, "--out", tmp_path / "items.json", "--cpu-time")
    assert code == 0, err
    assert "Basic/easy" in out and "Basic/hard" in out and "Basic/tiny" not in out  # label filter: performance
    assert "below threshold" in out and "passed" in out and "data items written to" in out
    data = json.loads((tmp_path / "items.json").read_text())
    assert data["version"] == "v1" and {i["labels"]["Name"] for i in data["dataItems"]} == {
        "Basic/easy/namespace-1", "Basic/hard/namespace-1"}
    code, out, err = run(capsys, "perf", path, "--fail-under-threshold", "--cpu-time")
    last = err.strip().splitlines()[-1]
    assert code == 1 and last.startswith("fastsched: error: 1 workload below threshold: Basic/hard (")
    assert last.endswith(" vs 100,000,000)")
    code, out, err = run(capsys, "perf", path, "--workload", "tiny", "--json")
    result = json.loads(out)
    assert code == 0 and [r["workload"] for r in result["results"]] == ["tiny"]
    assert result["results"][0]["pods_scheduled"] == 2 and result["version"] == "v1"
    code, out, err = run(capsys, "perf", path, "--label", "", "--list")
    assert code == 0 and out.split() == ["Basic/easy", "Basic/hard", "Basic/tiny"]
    # a directory for --out gets upstream's file name
    code, out, err = run(capsys, "perf", path, "--workload", "tiny", "--out", tmp_path)
    assert code == 0 and list(tmp_path.glob("BenchmarkPerfScheduling_benchmark_topic_*.json"))
    # a phase too short for a kept sample: upstream's warning, no value and no threshold check
    code, out, err = run(capsys, "perf", path, "--workload", "hard", "--fail-under-threshold")
    assert code == 0 and "no sample" in out and "passed" in out
    assert "warning: Basic/hard: Failed to measure SchedulingThroughput for Basic/hard/namespace-1" in err


@pytest.mark.parametrize("argv, fragments", [
    (("perf", "absent.yaml"), ["config file not found: absent.yaml"]),
    (("perf", "{config}", "--name", "Nope"), ["no test case named 'Nope'", "known: Basic"]),
    (("perf", "{config}", "--workload", "nope"), ["no workload named 'nope'", "known: easy, hard, tiny"]),
    (("perf", "{config}", "--label", "absent"), ["no workload of", "passes the label filter 'absent'"]),
])
def test_errors_are_one_line(perf_dir, capsys, argv, fragments):
    path = perf_dir(CONFIG, pod__yaml=POD)
    code, out, err = run(capsys, *(a.format(config=path) for a in argv))
    assert code == 1 and err.count("\n") == 1 and err.startswith("fastsched: error: ") and "Traceback" not in err
    for f in fragments:
        assert f in err


def test_a_failing_or_skipped_workload_is_reported(perf_dir, capsys):
    path = perf_dir(CONFIG.replace("params: {nodes: 2, pods: 2}", "params: {nodes: 2, pods: 2000}"), pod__yaml=POD)
    code, out, err = run(capsys, "perf", path, "--workload", "tiny")
    assert code == 1 and "Basic/tiny: failed" in out and "1 workload failed" in err
    assert "at least pod namespace-1/pod-" in err and "Insufficient cpu" in err


def test_upstream_files_run_as_they_are(capsys):
    code, out, err = run(capsys, "perf", UPSTREAM / "misc" / "performance-config.yaml", "--name",
                         "SchedulingWithExtendedResource", "--workload", "fast")
    assert code == 0, err
    assert "SchedulingWithExtendedResource/fast" in out and "passed" in out
    # DRA is modelled (always on, v1.34's default); the extended resources backed by DRA are not
    assert "DynamicResourceAllocation" not in err
    assert "feature gate DRAExtendedResource=false is not modelled" in err


def test_switching_off_an_always_on_gate_is_reported():
    from fastsched.perf.gates import split_gates

    assert split_gates({"DynamicResourceAllocation": True}) == ({}, {})
    assert split_gates({"DynamicResourceAllocation": False}) == ({}, {"DynamicResourceAllocation": False})


def test_bench_is_an_alias_of_the_perf_runner(capsys):
    code, out, err = run(capsys, "bench", "TopologySpreading", "--nodes", "30", "--pods", "40", "--json")
    data = json.loads(out)
    assert code == 0 and data["measured_scheduled"] == 40 and data["nodes"] == 30 and data["init_prebound"]
    code, out, err = run(capsys, "bench", "SchedulingDaemonset", "--nodes", "20", "--pods", "30")
    assert code == 0 and "21 nodes" in out and "scheduled 30/30 measured pods" in out


def test_cpu_time_counts_the_work_in_process_cpu_seconds(perf_dir, capsys, monkeypatch):
    """--cpu-time: the virtual clock advances by the process's CPU time (time.process_time), not
    by wall time; here a fake CPU clock that jumps 1 s per reading makes every step cost seconds."""
    import itertools
    import time

    from fastsched.perf import load_perf_config, run_workload

    config = load_perf_config(perf_dir(CONFIG, pod__yaml=POD))
    assert run_workload(config, "Basic", "tiny").virtual_seconds < 10
    ticks = itertools.count()
    monkeypatch.setattr(time, "process_time", lambda: float(next(ticks)))
    slow = run_workload(config, "Basic", "tiny", cpu_time=True)
    assert slow.status == "passed" and slow.virtual_seconds >= 3
    code, out, err = run(capsys, "perf", config.source, "--workload", "tiny", "--cpu-time", "--json")
    assert code == 0, err
    assert json.loads(out)["results"][0]["status"] == "passed"


def test_the_table_gives_the_phases_rate_beside_a_missing_sample():
    """A phase too short for a throughput sample shows ``no sample`` as the metric and, in its own
    column, the measured phases' pods per second (their pods over their time); a skipped workload
    shows neither."""
    from rich.console import Console

    from fastsched.perf.metrics import PerfReport, PhaseStats, WorkloadResult
    from fastsched.perf.report import results_table

    short = WorkloadResult("Basic", "short", "passed", pods_scheduled=300,
                           phases=[PhaseStats("measured", ["ns-1"], pods_scheduled=200, seconds=0.5),
                                   PhaseStats("measured", ["ns-2"], pods_scheduled=100, seconds=0.5)])
    skipped = WorkloadResult("Basic", "skipped", "skipped")
    console = Console(width=250, record=True)
    console.print(results_table(PerfReport(results=[short, skipped])))
    lines = console.export_text().splitlines()
    (header,) = [[c.strip() for c in line.split("┃")[1:-1]] for line in lines if line.count("┃") > 5]
    rows = {line.split("│")[1].strip(): [c.strip() for c in line.split("│")[1:-1]]
            for line in lines if line.count("│") > 5}
    col = header.index("phases pods/s")
    assert rows["Basic/short"][header.index("measured")] == "no sample"
    assert rows["Basic/short"][col] == "300"  # 300 pods in 1 s (the phases alone: 400 and 200)
    assert rows["Basic/skipped"][col] == "-"
