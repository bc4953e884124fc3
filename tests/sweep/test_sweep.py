"""Sweeps: a list and a grid of runs, on a process pool and on Dask, with a failing run and resume."""
from __future__ import annotations

import concurrent.futures as cf
import csv
import json
import textwrap

import pytest

from fastsched import sweep
from fastsched.cli import main
from fastsched.sim.sweep import FAILED, OK, SweepError, load_sweep

SCENARIO = """\
name: tiny
seed: 1
until: 120
cluster:
  nodes: 12
  zones: 2
  shapes: [{cpu: 4, memory: 16Gi}, {cpu: 2, memory: 8Gi}]
arrivals:
  - name: web
    rate: 0.5
    count: 40
    template: {spec: {containers: [{name: c, image: nginx, resources: {requests: {cpu: 700m, memory: 1Gi}}}]}}
    duration: {distribution: exponential, mean: 150}
"""
CONFIG = """\
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
  - schedulerName: default-scheduler
    pluginConfig:
      - name: NodeResourcesFit
        args: {{scoringStrategy: {{type: {strategy}}}}}
"""
#: a run that fails: the override is an invalid scenario field (found in the worker)
SWEEP = """\
name: weights
scenario: scenario.yaml
runs:
  - {name: least-s1, seed: 1, config: least.yaml}
  - {name: most-s1, seed: 1, config: most.yaml}
  - {name: most-s2, seed: 2, config: most.yaml, cluster.nodes: 6}
  - {name: broken, seed: 1, until: -5}
"""


def deterministic(row: dict) -> dict:
    """The metrics that depend only on the run (not on wall-clock time or the machine)."""
    wall = ("pods_per_second", "scheduler_seconds", "setup_seconds", "wall_seconds", "seconds",
            "attempt_latency_seconds")
    return {k: v for k, v in row.items() if not k.startswith(wall) and k not in ("traceback",)}


@pytest.fixture
def sweep_dir(tmp_path):
    (tmp_path / "scenario.yaml").write_text(SCENARIO)
    (tmp_path / "least.yaml").write_text(CONFIG.format(strategy="LeastAllocated"))
    (tmp_path / "most.yaml").write_text(CONFIG.format(strategy="MostAllocated"))
    (tmp_path / "sweep.yaml").write_text(SWEEP)
    return tmp_path


def read_csv(path):
    with open(path, newline="", encoding="utf-8") as fh:
        return list(csv.DictReader(fh))


def check_table(result, out):
    rows = {r["run"]: r for r in result.rows}
    assert [r["run"] for r in result.rows] == ["least-s1", "most-s1", "most-s2", "broken"]
    assert rows["broken"]["status"] == FAILED
    assert rows["broken"]["error"] == "SpecError: until: must be > 0, got -5"
    for name in ("least-s1", "most-s1", "most-s2"):
        assert rows[name]["status"] == OK and rows[name]["error"] == ""
        assert rows[name]["pods_total"] == 40 and rows[name]["pods_scheduled"] > 0
        summary = json.loads((out / "runs" / name / "summary.json").read_text())
        assert summary["pods_scheduled"] == rows[name]["pods_scheduled"] and summary["seed"] == rows[name]["seed"]
    assert rows["most-s2"]["initial_nodes"] == 6 and rows["most-s1"]["initial_nodes"] == 12
    table = read_csv(out / "results.csv")
    assert [r["run"] for r in table] == ["least-s1", "most-s1", "most-s2", "broken"]
    assert table[3]["status"] == "failed" and "until: must be > 0" in table[3]["error"]
    assert table[0]["param.config"].endswith("least.yaml") and table[2]["param.cluster.nodes"] == "6"
    assert int(table[1]["pods_scheduled"]) == rows["most-s1"]["pods_scheduled"]
    assert json.loads((out / "runs" / "broken" / "run.json").read_text())["status"] == FAILED
    return rows


def test_process_pool_and_dask_give_the_same_table_and_resume_skips_finished_runs(sweep_dir):
    pytest.importorskip("distributed", reason="Dask (dask[distributed]) is not installed")
    out_p, out_d = sweep_dir / "out-processes", sweep_dir / "out-dask"
    seen = []
    by_processes = sweep(sweep_dir / "sweep.yaml", out=out_p, workers=2, report="data",
                         progress=lambda done, total, row: seen.append((done, total, row.get("run"))))
    rows_p = check_table(by_processes, out_p)
    assert by_processes.ran == 4 and by_processes.skipped == 0
    assert seen[0] == (0, 4, None) and seen[-1][:2] == (4, 4)
    by_dask = sweep(sweep_dir / "sweep.yaml", out=out_d, local_dask=2, report="data")
    rows_d = check_table(by_dask, out_d)
    for name in ("least-s1", "most-s1", "most-s2"):
        assert deterministic(rows_p[name]) == deterministic(rows_d[name]), name
    # the two strategies do differ (the sweep compares something)
    assert deterministic(rows_p["least-s1"]) != deterministic(rows_p["most-s1"])

    # resume: the finished runs are skipped (their reports untouched), the failed one runs again
    stamp = (out_p / "runs" / "least-s1" / "summary.json").stat().st_mtime_ns
    with cf.ThreadPoolExecutor(max_workers=2) as pool:  # resuming does not depend on the executor
        again = sweep(sweep_dir / "sweep.yaml", out=out_p, executor=pool, report="data")
    assert again.ran == 1 and again.skipped == 3
    assert (out_p / "runs" / "least-s1" / "summary.json").stat().st_mtime_ns == stamp
    assert [deterministic(r) for r in again.rows[:3]] == [deterministic(rows_p[n]) for n in ("least-s1", "most-s1", "most-s2")]
    # a run whose config file changed is not "finished"
    (sweep_dir / "least.yaml").write_text(CONFIG.format(strategy="LeastAllocated") + "# edited\n")
    with cf.ThreadPoolExecutor(max_workers=2) as pool:
        edited = sweep(sweep_dir / "sweep.yaml", out=out_p, executor=pool, report="data")
    assert edited.ran == 2 and edited.skipped == 2  # least-s1 again, and the failing run
    # a run whose parameters changed is not "finished"
    (sweep_dir / "sweep.yaml").write_text(SWEEP.replace("cluster.nodes: 6", "cluster.nodes: 8"))
    with cf.ThreadPoolExecutor(max_workers=2) as pool:
        changed = sweep(sweep_dir / "sweep.yaml", out=out_p, executor=pool, report="data")
    assert changed.ran == 2 and {r["run"]: r for r in changed.rows}["most-s2"]["initial_nodes"] == 8


def test_any_executor_and_the_cli(sweep_dir, capsys):
    (sweep_dir / "two.yaml").write_text(SWEEP.replace("  - {name: most-s2, seed: 2, config: most.yaml, cluster.nodes: 6}\n", "")
                                        .replace("  - {name: broken, seed: 1, until: -5}\n", ""))
    with cf.ThreadPoolExecutor(max_workers=2) as pool:
        result = sweep(sweep_dir / "two.yaml", out=sweep_dir / "threads", executor=pool, report="data")
    assert [r["status"] for r in result.rows] == [OK, OK]
    code = main(["sweep", str(sweep_dir / "two.yaml"), "--out", str(sweep_dir / "cli"), "--workers", "1", "--json"])
    data = json.loads(capsys.readouterr().out)
    assert code == 0 and data["runs"] == 2 and data["ran"] == 2 and data["failed"] == []
    assert (sweep_dir / "cli" / "runs" / "least-s1" / "report.html").is_file()  # the full report by default
    assert not (sweep_dir / "threads" / "runs" / "least-s1" / "report.html").exists()
    pods = read_csv(sweep_dir / "threads" / "runs" / "least-s1" / "pods.csv")
    assert len(pods) == 40 and pods[0]["name"] and pods[0]["status"]
    table = read_csv(sweep_dir / "cli" / "results.csv")
    # the same runs in threads and in a process: the same metrics, as written to results.csv
    for row, written in zip(result.rows, table):
        assert deterministic(written) == {k: "" if row.get(k) is None else str(row.get(k))
                                          for k in deterministic(written)}
    # a failing run: reported, and the exit status says so
    (sweep_dir / "bad.yaml").write_text("scenario: scenario.yaml\nruns: [{name: nope, until: -1}]\n")
    code = main(["sweep", str(sweep_dir / "bad.yaml"), "--out", str(sweep_dir / "bad"), "--workers", "1",
                 "--report", "data"])
    captured = capsys.readouterr()
    assert code == 1 and "1 of 1 runs failed" in captured.err and "until: must be > 0" in captured.out


def test_grid_names_seeds_and_overrides(sweep_dir):
    (sweep_dir / "grid.yaml").write_text(textwrap.dedent("""\
        name: g
        seed: 7
        scenario: scenario.yaml
        runs:
          - {name: first, config: least.yaml, until: 100}
        grid:
          config: [least.yaml, most.yaml]
          cluster.nodes: [4, 8]
          arrivals.0.rate: [0.25]
        """))
    plan = load_sweep(sweep_dir / "grid.yaml")
    names = [r.name for r in plan.runs]
    assert names == ["first", "config=least,cluster.nodes=4,arrivals.0.rate=0.25",
                     "config=least,cluster.nodes=8,arrivals.0.rate=0.25",
                     "config=most,cluster.nodes=4,arrivals.0.rate=0.25",
                     "config=most,cluster.nodes=8,arrivals.0.rate=0.25"]
    first, grid_run = plan.runs[0], plan.runs[4]
    assert first.scenario["until"] == 100 and first.scenario["config"] == str(sweep_dir / "least.yaml")
    assert grid_run.scenario["cluster"]["nodes"] == 8 and grid_run.scenario["arrivals"][0]["rate"] == 0.25
    assert grid_run.scenario["cluster"]["shapes"][0]["cpu"] == 4  # the rest of the scenario is kept
    # seeds: derived from the sweep seed and the run name, the same on every load, distinct per run
    again = load_sweep(sweep_dir / "grid.yaml")
    assert [r.seed for r in plan.runs] == [r.seed for r in again.runs]
    assert len({r.seed for r in plan.runs}) == len(plan.runs)
    assert all(r.scenario["seed"] == r.seed for r in plan.runs)
    (sweep_dir / "grid2.yaml").write_text((sweep_dir / "grid.yaml").read_text().replace("seed: 7", "seed: 8"))
    assert [r.seed for r in load_sweep(sweep_dir / "grid2.yaml").runs] != [r.seed for r in plan.runs]


@pytest.mark.parametrize("text, message", [
    ("scenario: scenario.yaml\n", "no runs"),
    ("runs: [{seed: 1}]\n", "scenario: required"),
    ("scenario: scenario.yaml\nruns: [{name: a}, {name: a}]\n", "duplicate run name 'a'"),
    ("scenario: scenario.yaml\nruns: [{config: absent.yaml}]\n", "config: no such file"),
    ("scenario: scenario.yaml\ngrid: {seed: []}\n", "grid.seed: must be a non-empty list"),
    ("scenario: scenario.yaml\nrun: []\n", "run: unknown field"),
    ("scenario: scenario.yaml\nruns: [{name: 'a/b'}]\n", "run name 'a/b'"),
    ("scenario: scenario.yaml\nruns: [{seed: -1}]\n", "seed: must be a non-negative integer"),
])
def test_sweep_file_errors_name_the_field(sweep_dir, text, message):
    (sweep_dir / "bad.yaml").write_text(text)
    with pytest.raises(SweepError, match=message.replace("(", r"\(")):
        load_sweep(sweep_dir / "bad.yaml")


def test_parquet_table(sweep_dir):
    """pyarrow is in the [test] extra: a missing pyarrow fails here rather than skipping."""
    import pyarrow.parquet as pq

    (sweep_dir / "one.yaml").write_text("scenario: scenario.yaml\nruns: [{name: a, seed: 3}, {name: b, until: -1}]\n")
    result = sweep(sweep_dir / "one.yaml", out=sweep_dir / "pq", workers=1, report="data")
    table = pq.read_table(result.files["parquet"]).to_pylist()
    assert [r["run"] for r in table] == ["a", "b"] and table[0]["pods_total"] == 40 and table[1]["status"] == "failed"


def test_cli_on_a_dask_scheduler_address(sweep_dir, capsys):
    distributed = pytest.importorskip("distributed", reason="Dask (dask[distributed]) is not installed")
    (sweep_dir / "grid.yaml").write_text("scenario: scenario.yaml\ngrid: {config: [least.yaml, most.yaml], seed: [4]}\n")
    with distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=True, dashboard_address=None) as cluster:
        code = main(["sweep", str(sweep_dir / "grid.yaml"), "--out", str(sweep_dir / "on-dask"),
                     "--dask", cluster.scheduler_address, "--report", "data", "--json"])
    data = json.loads(capsys.readouterr().out)
    assert code == 0 and data["ran"] == 2 and data["failed"] == []
    table = read_csv(sweep_dir / "on-dask" / "results.csv")
    assert [r["run"] for r in table] == ["config=least,seed=4", "config=most,seed=4"]
    assert all(r["status"] == "ok" and r["seed"] == "4" for r in table)
    assert (sweep_dir / "on-dask" / "runs" / "config=most,seed=4" / "summary.json").is_file()
    code = main(["sweep", str(sweep_dir / "grid.yaml"), "--out", str(sweep_dir / "x"), "--dask", "a", "--local-dask", "1"])
    assert code == 2  # one or the other
    code = main(["sweep", str(sweep_dir / "grid.yaml"), "--out", str(sweep_dir / "x"), "--local-dask", "0"])
    assert code == 1 and "at least 1 worker" in capsys.readouterr().err


def test_the_shipped_example_sweep_loads():
    import pathlib

    # (under docs/: examples/ holds manifests, which `--cluster examples` reads as one cluster)
    example = pathlib.Path(__file__).resolve().parents[2] / "docs" / "examples" / "sweep_weights" / "sweep.yaml"
    plan = load_sweep(example)
    assert [r.name for r in plan.runs][:2] == ["least-small-cluster", "config=least,seed=1"]
    assert len(plan.runs) == 7 and plan.runs[0].scenario["cluster"]["nodes"] == 30
    assert all(r.scenario["config"].endswith(("least.yaml", "most.yaml")) for r in plan.runs)
