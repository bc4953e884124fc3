"""The README's code runs as written."""
import re
from pathlib import Path

import pytest

from fastsched.api import ManifestWarning

README = Path(__file__).resolve().parents[1] / "README.md"


def python_blocks():
    return re.findall(r"```python\n(.*?)```", README.read_text(), flags=re.S)


def test_plugin_example_runs():
    (block,) = [b for b in python_blocks() if "class PreferFast" in b]
    ns: dict = {}
    exec(compile(block, "README.md", "exec"), ns)
    assert ns["status"] is None
    totals = {s.name: s.total_score for s in ns["scores"]}
    # node a is labelled fast: PreferFast gives it 100 x weight 2 on top of the default plugins
    assert totals["a"] > totals["b"]
    assert ns["verdicts"].feasible().all()


def test_readme_states_the_upstream_version_and_commands():
    text = README.read_text()
    assert "kube-scheduler v1.34" in text
    assert 'pip install -e ".[test]"' in text and "python -m pytest -q" in text
    ci = (README.parent / ".ci" / "run").read_text()
    assert 'pip install -e ".[test]"' in ci and "python -m pytest -q" in ci


def test_usage_example_runs_on_the_shipped_examples(monkeypatch, capsys):
    (block,) = [b for b in python_blocks() if 'sched.add("examples/cluster.yaml")' in b]
    monkeypatch.chdir(README.parent)
    ns: dict = {}
    with pytest.warns(ManifestWarning, match=r"kinds fastsched does not model: ConfigMap \(1\)"):
        exec(compile(block, "README.md", "exec"), ns)
    out = capsys.readouterr().out
    assert "Scheduled" in out and "Unschedulable" not in out
    assert len(ns["api_pods"]) == 6 and all(p["spec"].get("nodeName") for p in ns["api_pods"])
