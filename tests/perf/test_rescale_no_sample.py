"""``--rescale-no-sample``: a workload whose measured phase keeps no SchedulingThroughput sample
(upstream reports no value for it) is run again with its measured pods' count parameters turned
up; that run is reported beside the original, which stays ``no sample``."""
import json

import pytest

from fastsched.perf import load_perf_config, run_perf
from fastsched.perf import runner as perf_runner
from fastsched.perf.config import PerfConfigError
from fastsched.perf.metrics import PerfReport, PhaseStats, WorkloadResult

from .conftest import POD, UPSTREAM
from .test_cli_perf import CONFIG, run

V137 = UPSTREAM.parent / "upstream-v1.37.2"


@pytest.mark.parametrize("topic, case, params", [
    # the finalizer pods are created before, unmeasured (skipWaitToCompletion): only measurePods
    ("misc", "SchedulingDeletedPodsWithFinalizers", ["measurePods"]),
    ("misc", "SchedulingBasic", ["measurePods"]),
    ("affinity", "SchedulingPodMatchingAntiAffinity", ["measurePods"]),
    ("volumes", "SchedulingInTreePVs", ["measurePods"]),
])
def test_the_knobs_are_the_measured_create_pods_count_params(topic, case, params):
    config = load_perf_config(V137 / topic / "performance-config.yaml")
    assert config.test_case(case).measured_count_params() == params


def test_pods_created_between_start_and_stop_collecting_count_and_a_fixed_count_has_no_knob(perf_dir):
    path = perf_dir("""\
    - name: Window
      defaultPodTemplatePath: ../templates/pod.yaml
      workloadTemplate:
      - {opcode: createNodes, countParam: $nodes}
      - {opcode: createPods, countParam: $init}
      - {opcode: startCollectingMetrics, name: m, namespaces: [a]}
      - {opcode: createPods, countParam: $measured, namespace: a}
      - {opcode: stopCollectingMetrics}
      - {opcode: createPods, countParam: $after}
      workloads:
      - {name: w, params: {nodes: 1, init: 1, measured: 1, after: 1}}
    - name: Fixed
      defaultPodTemplatePath: ../templates/pod.yaml
      workloadTemplate:
      - {opcode: createNodes, countParam: $nodes}
      - {opcode: createPods, count: 3, collectMetrics: true}
      workloads:
      - {name: w, params: {nodes: 1}}
    """, pod__yaml=POD)
    config = load_perf_config(path)
    assert config.test_case("Window").measured_count_params() == ["measured"]
    assert config.test_case("Fixed").measured_count_params() == []
    w = config.test_case("Window").workloads[0]
    scaled = w.scaled(["measured"], 4)
    assert scaled.params == {"nodes": 1, "init": 1, "measured": 4, "after": 1} and w.params["measured"] == 1
    assert w.scaled(["measured"], 1.2).params["measured"] == 2  # always more pods than the original


def _fake_runs(monkeypatch, sampled_from: int):
    """run_workload replaced: a phase keeps a sample once the measured pods reach ``sampled_from``."""
    calls = []

    def fake(config, tc, w, **kw):
        pods = w.params["pods"]
        calls.append(pods)
        samples = 1 if pods >= sampled_from else 0
        r = WorkloadResult(tc.name, w.name, "passed", threshold=w.threshold_for(None),
                           measured=float(pods) if samples else None,
                           phases=[PhaseStats("m", ["ns"], pods_scheduled=pods, seconds=1.0,
                                              throughput_samples=samples)])
        return r

    monkeypatch.setattr(perf_runner, "run_workload", fake)
    return calls


@pytest.mark.parametrize("sampled_from, calls, kept", [
    (50, [50], None),                   # a sample at the config's size: no rescaled run
    (200, [50, 200], 200),              # x4 keeps one
    (800, [50, 200, 800], 800),         # x4, then x16
    (3200, [50, 200, 800, 3200], 3200),  # the third and last try
    (10**6, [50, 200, 800, 3200], 3200),  # still none: the last run, no sample, is reported
])
def test_rescaled_runs_multiply_until_a_sample(perf_dir, monkeypatch, sampled_from, calls, kept):
    config = load_perf_config(perf_dir(CONFIG, pod__yaml=POD))
    made = _fake_runs(monkeypatch, sampled_from)
    (r,) = run_perf(config, workload="hard", rescale=4).results
    assert made == calls
    assert r.measured == (None if kept else 50.0)  # the original is never replaced
    if kept is None:
        assert r.rescaled is None
    else:
        assert r.no_throughput_sample and r.rescaled.scaled_params == {"pods": kept}
        assert r.rescaled.no_throughput_sample == (kept < sampled_from)
        assert json.dumps(r.as_dict()["rescaled"])  # --json carries it


def test_no_rescale_without_the_option_or_a_knob_and_a_factor_must_exceed_one(perf_dir, monkeypatch):
    config = load_perf_config(perf_dir(CONFIG, pod__yaml=POD))
    made = _fake_runs(monkeypatch, 10**6)
    (r,) = run_perf(config, workload="hard").results
    assert made == [50] and r.rescaled is None
    with pytest.raises(PerfConfigError, match="rescale: Invalid value: 1: must be greater than 1"):
        run_perf(config, workload="hard", rescale=1)


def test_the_cli_runs_the_rescaled_workload_and_shows_its_row(perf_dir, capsys, monkeypatch):
    # a real (tiny) run: 2 pods keep no sample, nor do 4 and 8: the last try is reported
    monkeypatch.setattr(perf_runner, "RESCALE_TRIES", 2)
    path = perf_dir(CONFIG, pod__yaml=POD)
    code, out, err = run(capsys, "perf", path, "--workload", "tiny", "--rescale-no-sample", "2", "--json")
    assert code == 0, err
    (r,) = json.loads(out)["results"]
    assert r["measured"] is None and r["no_throughput_sample"]
    assert r["rescaled"]["scaled_params"] == {"pods": 8} and r["rescaled"]["pods_scheduled"] == 8
    assert r["rescaled"]["status"] == "passed" and r["rescaled"]["no_throughput_sample"]
    code, out, err = run(capsys, "perf", path, "--workload", "tiny", "--rescale-no-sample", "1")
    assert code == 1 and "--rescale-no-sample: Invalid value: 1: must be greater than 1" in err


def test_the_table_shows_the_rescaled_run_under_no_sample():
    from rich.console import Console

    from fastsched.perf.report import results_table

    def result(pods, samples, measured=None, params=None):
        r = WorkloadResult("Basic", "short", "passed", threshold=100, measured=measured, pods_scheduled=pods,
                           phases=[PhaseStats("m", ["ns"], pods_scheduled=pods, seconds=pods / 1000,
                                              throughput_samples=samples)])
        r.scaled_params = params or {}
        return r

    short = result(500, 0)
    short.rescaled = result(2000, 1, measured=1234.0, params={"measurePods": 2000})
    console = Console(width=250, record=True)
    console.print(results_table(PerfReport(results=[short])))
    rows = [[c.strip() for c in line.split("│")[1:-1]] for line in console.export_text().splitlines()
            if line.count("│") > 5]
    assert [row[0] for row in rows] == ["Basic/short", "rescaled: measurePods=2,000"]
    assert rows[0][4] == "no sample" and rows[0][5] == "-"
    assert rows[1][4] == "1,234.0" and rows[1][5] == "12.34x" and rows[1][8] == "1,000"
