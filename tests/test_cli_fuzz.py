"""A property round over the command line on mutated files: ``fastsched explain`` (a cluster dump,
a pod, a configuration), ``simulate`` (a scenario), ``perf`` (a scheduler_perf config),
``sweep`` (a sweep file) and ``config validate``, each file with one to three places changed
(a value of another type, deleted, huge, negative, unicode, an item repeated).

Run in-process with ``FASTSCHED_DEBUG=1``, so that an exception other than fastsched's own
escapes ``main`` instead of becoming the one-line ``internal error`` report: each mutant must end
with status 0, or status 1 and exactly one line ``fastsched: error: ...`` on stderr, its last (no
traceback; ``perf`` prints its results table before it). Derandomized; the examples are few (the commands that pass run a small scenario).
"""
from __future__ import annotations

import copy
import json
import os
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fastsched.cli import main
from fastsched.config import dump_config, load_config
from tests.mutation import DELETE, DUPLICATE, apply, places

#: FASTSCHED_FUZZ_SCALE=N draws N times the examples (a longer round than the suite's)
SCALE = int(os.environ.get("FASTSCHED_FUZZ_SCALE", "1"))
ROOT = Path(__file__).resolve().parents[1]
WRONG = [None, True, 0, -1, 7, 2 ** 63, 1e300, 2.5, "", "x", "ünïcødé-☃", "-5", [], [1], {}, {"k": 1}]

DUMP = json.loads(json.dumps(yaml.safe_load((ROOT / "examples" / "cluster.yaml").read_text())))
POD = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "web", "namespace": "default"},
       "spec": {"containers": [{"name": "c", "image": "x", "resources": {"requests": {"cpu": "1", "memory": "1Gi"}}}],
                "tolerations": [{"key": "k", "operator": "Exists"}]}}
CONFIG = yaml.safe_load(dump_config(load_config(None)))
SCENARIO = {"name": "tiny", "seed": 2, "until": 20,
            "cluster": {"nodes": 4, "shapes": [{"cpu": 4, "memory": "16Gi", "pods": 20}],
                        "pods": {"count": 2, "shapes": [{"cpu": "500m", "memory": "1Gi"}]}},
            "arrivals": [{"name": "web", "rate": 1, "count": 6,
                          "template": {"spec": {"containers": [{"name": "c", "image": "nginx",
                                                                "resources": {"requests": {"cpu": "1"}}}]}},
                          "duration": {"distribution": "uniform", "min": 5, "max": 10}}],
            "events": [{"at": 4, "drain": {"count": 1}}]}
SWEEP = {"name": "fuzz", "seed": 3, "scenario": SCENARIO,
         "runs": [{"name": "a", "seed": 1}, {"name": "b", "cluster.nodes": 3}]}
UPSTREAM = ROOT / "tests" / "perf" / "data" / "upstream-v1.37.2"
PERF = [{"name": "Tiny", "defaultPodTemplatePath": str(UPSTREAM / "templates" / "pod-default.yaml"),
         "workloadTemplate": [{"opcode": "createNodes", "countParam": "$nodes"},
                              {"opcode": "createPods", "count": 2},
                              {"opcode": "createPods", "countParam": "$pods", "collectMetrics": True}],
         "workloads": [{"name": "small", "labels": ["performance"], "params": {"nodes": 2, "pods": 3}}]}]


def _mutated(draw, doc: Any, places: list[tuple]) -> Any:
    doc = copy.deepcopy(doc)
    for path in draw(st.lists(st.sampled_from(places), min_size=1, max_size=3, unique=True)):
        apply(doc, path, draw(st.sampled_from([DELETE, DUPLICATE, *WRONG])))
    return doc


def _write(path: Path, doc: Any) -> str:
    path.write_text(yaml.safe_dump(doc, sort_keys=False, allow_unicode=True), encoding="utf-8")
    return str(path)


def _check(capsys, argv: list[str]) -> None:
    code = main(argv)
    _, err = capsys.readouterr()
    assert "Traceback" not in err
    errors = [line for line in err.splitlines() if line.startswith("fastsched: error: ")]
    if code == 0:
        assert not errors, err
        return
    # (``perf`` prints its results table first, a failed workload's row included)
    assert code == 1, (code, err)
    assert len(errors) == 1 and err.strip("\n").splitlines()[-1] == errors[0], err


SETTINGS = dict(deadline=None, derandomize=True, database=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                       HealthCheck.function_scoped_fixture])


@pytest.fixture(autouse=True)
def _debug(monkeypatch):
    # (an unexpected exception escapes main: the round sees it instead of its one-line report)
    monkeypatch.setenv("FASTSCHED_DEBUG", "1")


@settings(max_examples=15 * SCALE, **SETTINGS)
@given(data=st.data(), which=st.sampled_from(["cluster", "pod", "config"]))
def test_explain_on_mutated_files_answers_or_reports_one_line(tmp_path, capsys, data, which):
    cluster, pod, config = DUMP, POD, CONFIG
    if which == "cluster":
        cluster = _mutated(data.draw, DUMP, places(DUMP))
    elif which == "pod":
        pod = _mutated(data.draw, POD, places(POD))
    else:
        config = _mutated(data.draw, CONFIG, places(CONFIG))
    _check(capsys, ["explain", "--cluster", _write(tmp_path / "cluster.yaml", cluster),
                    "--pod", _write(tmp_path / "pod.yaml", pod), "--config", _write(tmp_path / "config.yaml", config),
                    "--limit", "2"])


@settings(max_examples=20 * SCALE, **SETTINGS)
@given(data=st.data())
def test_config_validate_on_a_mutated_configuration_reports_one_line(tmp_path, capsys, data):
    _check(capsys, ["config", "validate", _write(tmp_path / "config.yaml",
                                                 _mutated(data.draw, CONFIG, places(CONFIG)))])


@settings(max_examples=8 * SCALE, **SETTINGS)
@given(data=st.data())
def test_simulate_on_a_mutated_scenario_runs_or_reports_one_line(tmp_path, capsys, data):
    scenario = _write(tmp_path / "scenario.yaml", _mutated(data.draw, SCENARIO, places(SCENARIO)))
    _check(capsys, ["simulate", scenario, "--out", str(tmp_path / "out"), "--quiet", "--record", "none"])


@settings(max_examples=6 * SCALE, **SETTINGS)
@given(data=st.data())
def test_sweep_on_a_mutated_sweep_file_runs_or_reports_one_line(tmp_path, capsys, data):
    sweep = _write(tmp_path / "sweep.yaml", _mutated(data.draw, SWEEP, places(SWEEP)))
    _check(capsys, ["sweep", sweep, "--out", str(tmp_path / "out"), "--workers", "1", "--report", "data",
                    "--no-resume"])


@settings(max_examples=12 * SCALE, **SETTINGS)
@given(data=st.data())
def test_perf_on_a_mutated_config_runs_or_reports_one_line(tmp_path, capsys, data):
    config = _write(tmp_path / "performance-config.yaml", _mutated(data.draw, PERF, places(PERF)))
    _check(capsys, ["perf", config, "--out", str(tmp_path / "perf.json")])
