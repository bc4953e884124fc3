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
    assert rows[0][4] == "no sample" and rows[0][5] == "0" and rows[0][6] == "-"
    assert rows[1][4] == "1,234.0" and rows[1][5] == "1" and rows[1][6] == "12.34x" and rows[1][9] == "1,000"


def _fake_sampled_runs(monkeypatch, per_pods: int):
    """run_workload replaced: a phase keeps one sample per ``per_pods`` measured pods."""
    calls = []

    def fake(config, tc, w, **kw):
        pods = w.params["pods"]
        calls.append(pods)
        samples = pods // per_pods
        return WorkloadResult(tc.name, w.name, "passed", threshold=w.threshold_for(None),
                              measured=float(pods) if samples else None,
                              phases=[PhaseStats("m", ["ns"], pods_scheduled=pods, seconds=1.0,
                                                 throughput_samples=samples)])

    monkeypatch.setattr(perf_runner, "run_workload", fake)
    return calls


@pytest.mark.parametrize("min_samples, per_pods, calls, kept", [
    (1, 50, [50], None),                # one sample is enough by default
    (3, 50, [50, 200], 200),            # one sample kept, 3 asked: x4 keeps 4
    (3, 20, [50, 200], 200),            # 2 samples, fewer than 3: x4 keeps 10
    (3, 10, [50], None),                # 5 samples: no rescaled run
    (3, 100, [50, 200, 400], 400),      # none, then 2 (a step of 2 from them, not x4 again), then 4
    (5, 10**6, [50, 200, 800, 3200], 3200),  # never enough: the last try is reported
])
def test_min_samples_rescales_runs_measured_by_their_tail(perf_dir, monkeypatch, min_samples, per_pods, calls, kept):
    config = load_perf_config(perf_dir(CONFIG, pod__yaml=POD))
    made = _fake_sampled_runs(monkeypatch, per_pods)
    (r,) = run_perf(config, workload="hard", rescale=4, rescale_min_samples=min_samples).results
    assert made == calls
    if kept is None:
        assert r.rescaled is None
    else:
        assert r.rescaled.scaled_params == {"pods": kept}
        assert r.rescaled.throughput_samples == kept // per_pods
    assert r.throughput_samples == 50 // per_pods  # the original stays as it ran


@pytest.mark.parametrize("bad", [0, -2, 1.5, True, "3"])
def test_min_samples_must_be_a_positive_integer(perf_dir, monkeypatch, bad):
    config = load_perf_config(perf_dir(CONFIG, pod__yaml=POD))
    _fake_sampled_runs(monkeypatch, 1)
    with pytest.raises(PerfConfigError, match="rescale_min_samples: Invalid value: .*: must be an integer of at least 1"):
        run_perf(config, workload="hard", rescale=4, rescale_min_samples=bad)


def test_the_cli_min_samples_needs_rescale_and_a_positive_count(perf_dir, capsys):
    path = perf_dir(CONFIG, pod__yaml=POD)
    code, out, err = run(capsys, "perf", path, "--workload", "tiny", "--min-samples", "3")
    assert code == 1 and "--min-samples: only with --rescale-no-sample" in err
    code, out, err = run(capsys, "perf", path, "--workload", "tiny", "--rescale-no-sample", "2", "--min-samples", "0")
    assert code == 2 and "argument --min-samples: must be at least 1, got 0" in err


FULL = """\
- name: Full
  defaultPodTemplatePath: ../templates/pod.yaml
  workloadTemplate:
  - {opcode: createNodes, countParam: $nodes}
  - {opcode: createPods, countParam: $pods, collectMetrics: true}
  workloads:
  - {name: w, labels: [performance], threshold: 1, params: {nodes: 1, pods: 3000}}
"""


def test_a_wait_times_out_while_the_scheduler_keeps_working(perf_dir):
    # 1 node holds 40 of these pods (4 CPUs / 100m): the other ~2,960 fail one after another,
    # each attempt work on the run's clock. Upstream's wait times out however busy the scheduler
    # is; checking the deadline only when the scheduler idles let every one of them be attempted
    # first (MixedSchedulingBasePod x100 worked for hours that way).
    config = load_perf_config(perf_dir(FULL, pod__yaml=POD))
    (tc, w), = perf_runner.select_workloads(config)
    r = perf_runner.run_workload(config, tc, w, wait_timeout=0.02, cpu_time=True, keep_scheduler=True)
    assert r.status == "failed"
    assert r.reason.startswith("op 1 (createPods): timed out after 0.02s waiting for")
    a = r.scheduler.metrics.attempts
    assert a["scheduled"] <= 40
    assert a["scheduled"] + a["unschedulable"] + a["error"] < 1500  # stopped at the deadline, not after 3,000


@pytest.mark.parametrize("bad", [0, -1.0, True, "10"])
def test_the_wait_timeout_must_be_a_positive_number(perf_dir, bad):
    config = load_perf_config(perf_dir(FULL, pod__yaml=POD))
    (tc, w), = perf_runner.select_workloads(config)
    with pytest.raises(PerfConfigError, match=f"wait_timeout: Invalid value: {bad!r}: must be greater than 0"):
        perf_runner.run_workload(config, tc, w, wait_timeout=bad)


def test_a_rescaled_run_gets_a_wait_budget_from_the_run_before_it(perf_dir, monkeypatch):
    # the original took 2 s on its clock, x4 runs get max(60, 4 * 4 * 2) = 60 s, and a run of
    # 20 s before the next try gives it 4 * 4 * 20 = 320 s; never above the run's own timeout
    config = load_perf_config(perf_dir(CONFIG, pod__yaml=POD))
    budgets = []

    def fake(config, tc, w, **kw):
        pods = w.params["pods"]
        if pods > 50:
            budgets.append(kw["wait_timeout"])
        return WorkloadResult(tc.name, w.name, "passed", virtual_seconds={50: 2.0, 200: 20.0}.get(pods, 200.0),
                              phases=[PhaseStats("m", ["ns"], pods_scheduled=pods, seconds=1.0, throughput_samples=0)])

    monkeypatch.setattr(perf_runner, "run_workload", fake)
    run_perf(config, workload="hard", rescale=4)
    assert budgets == [60.0, 320.0, 600.0]  # the last: 4 * 4 * 200 = 3,200, upstream's 600 caps it
    budgets.clear()
    run_perf(config, workload="hard", rescale=4, wait_timeout=100.0)
    assert budgets == [60.0, 100.0, 100.0]


def test_a_rescaled_run_past_its_budget_fails_and_says_why(perf_dir, monkeypatch):
    config = load_perf_config(perf_dir(CONFIG, pod__yaml=POD))
    made = []

    def fake(config, tc, w, **kw):
        pods = w.params["pods"]
        made.append(pods)
        if pods == 50:
            return WorkloadResult(tc.name, w.name, "passed", virtual_seconds=2.0,
                                  phases=[PhaseStats("m", ["ns"], pods_scheduled=50, seconds=1.0, throughput_samples=0)])
        return WorkloadResult(tc.name, w.name, "failed", virtual_seconds=kw["wait_timeout"],
                              reason=f"op 1 (createPods): timed out after {kw['wait_timeout']:g}s waiting for pods")

    monkeypatch.setattr(perf_runner, "run_workload", fake)
    (r,) = run_perf(config, workload="hard", rescale=4).results
    assert made == [50, 200]  # no further try after a failure
    assert r.status == "passed" and r.rescaled.status == "failed"
    assert r.rescaled.reason == (
        "op 1 (createPods): timed out after 60s waiting for pods (a rescaled run's waits get 4x the step 4 "
        "times the 2s the run before it took, at least 60s: this run did not scale like its workload, e.g. "
        "its cluster has no room for the extra pods)")


def test_rescale_workload_reruns_one_finished_result(perf_dir, monkeypatch):
    # the public step run_perf takes per result (benchmarks/common.py calls it after its own run)
    from fastsched.perf import rescale_workload

    config = load_perf_config(perf_dir(CONFIG, pod__yaml=POD))
    made = _fake_sampled_runs(monkeypatch, 25)
    (r,) = run_perf(config, workload="hard").results  # 50 pods: 2 samples
    assert made == [50] and r.throughput_samples == 2
    assert rescale_workload(config, r, factor=4) is None  # it has a sample: nothing to do by default
    rs = rescale_workload(config, r, factor=4, min_samples=3)
    assert made == [50, 200] and rs.scaled_params == {"pods": 200} and rs.throughput_samples == 8
    r.status = "failed"
    assert rescale_workload(config, r, factor=4, min_samples=3) is None and made == [50, 200]
    with pytest.raises(PerfConfigError, match="rescale: Invalid value: 1: must be greater than 1"):
        rescale_workload(config, r, factor=1)


@pytest.mark.parametrize("kept, min_samples, factor, step", [
    (0, 3, 10.0, 10.0),   # no sample: nothing tells the phase's length, the factor asked for
    (1, 3, 10.0, 3.0),    # 2 ticks at least, x3 lasts 6 >= 5
    (2, 3, 10.0, 2.0),    # 3 ticks, x2 lasts 6 >= 5
    (1, 2, 4.0, 2.0),     # 2 ticks, x2 lasts 4 >= 4
    (1, 5, 4.0, 4.0),     # 2 ticks, x4 lasts 8 >= 7 (x3: 6, short of it)
    (3, 10, 1.5, 3.0),    # 4 ticks, x3 lasts 12 >= 12; independent of the factor
    (4, 5, 4.0, 2.0),     # never below 2, even one sample short
])
def test_the_next_step_follows_from_the_samples_kept(kept, min_samples, factor, step):
    assert perf_runner._next_step(kept, min_samples, factor) == step


@pytest.mark.parametrize("factor, min_samples, samples, calls", [
    # SchedulingInTreePVs x10 keeping 1 of 3: x30 next, not x100 (which overflowed its cluster)
    (10, 3, {500: 1, 1500: 3}, [50, 500, 1500]),
    (10, 3, {500: 2, 1000: 4}, [50, 500, 1000]),
    # no sample: the factor again, each time
    (4, 3, {}, [50, 200, 800, 3200]),
    (4, 1, {}, [50, 200, 800, 3200]),
    # none, none, then 2 of 5: x3 from them (the last try)
    (4, 5, {800: 2, 2400: 4}, [50, 200, 800, 2400]),
    # one of 5 (x4 from it), then 3 of 5 (x2 from them)
    (4, 5, {200: 1, 800: 3, 1600: 7}, [50, 200, 800, 1600]),
])
def test_tries_after_a_short_sampled_run_step_from_its_samples(perf_dir, monkeypatch, factor, min_samples, samples,
                                                               calls):
    config = load_perf_config(perf_dir(CONFIG, pod__yaml=POD))
    made = []

    def fake(config, tc, w, **kw):
        pods = w.params["pods"]
        made.append(pods)
        k = samples.get(pods, 0)
        return WorkloadResult(tc.name, w.name, "passed", threshold=w.threshold_for(None), virtual_seconds=1.0,
                              measured=float(pods) if k else None,
                              phases=[PhaseStats("m", ["ns"], pods_scheduled=pods, seconds=1.0, throughput_samples=k)])

    monkeypatch.setattr(perf_runner, "run_workload", fake)
    (r,) = run_perf(config, workload="hard", rescale=factor, rescale_min_samples=min_samples).results
    assert made == calls
    assert r.rescaled.scaled_params == {"pods": calls[-1]}
    assert r.rescaled.throughput_samples == samples.get(calls[-1], 0)


def test_a_stepped_tries_wait_budget_follows_its_step(perf_dir, monkeypatch):
    # x10 (500 pods, 30 s on its clock) keeps 1 sample of 3: the next try is x3 from it and
    # gets 4 * 3 * 30 = 360 s, not 4 * 10 * 30 (the factor: 1,200, capped at 600)
    config = load_perf_config(perf_dir(CONFIG, pod__yaml=POD))
    budgets = []

    def fake(config, tc, w, **kw):
        pods = w.params["pods"]
        budgets.append((pods, kw.get("wait_timeout")))
        k = {500: 1, 1500: 3}.get(pods, 0)
        return WorkloadResult(tc.name, w.name, "passed", virtual_seconds={50: 2.0, 500: 30.0}.get(pods, 90.0),
                              measured=float(pods) if k else None,
                              phases=[PhaseStats("m", ["ns"], pods_scheduled=pods, seconds=1.0, throughput_samples=k)])

    monkeypatch.setattr(perf_runner, "run_workload", fake)
    run_perf(config, workload="hard", rescale=10, rescale_min_samples=3)
    assert budgets[1:] == [(500, 80.0), (1500, 360.0)]  # x10 from the original's 2 s: 4 * 10 * 2 = 80
