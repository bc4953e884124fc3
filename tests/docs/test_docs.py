"""The docs a newcomer reads run as written: README and docs/ snippets, examples/, --help."""
from __future__ import annotations

import re
import runpy
import shutil
import warnings
from pathlib import Path

import pytest

from fastsched.cli import main
from fastsched.sim.report import FILES_DOC
from fastsched.sim.scenario import _TOP_LEVEL, SCHEDULER_TIME_MODELS, Scenario
from fastsched.sim.simulation import PODS_CSV_DOC, STATUS_DOC, SUMMARY_DOC, TIMESERIES_DOC
from fastsched.sim.streams import _DISTRIBUTIONS, _TRACE_COLUMNS

ROOT = Path(__file__).resolve().parents[2]
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


#: a block whose first line starts with this is an outline with placeholders, not run (it says so)
SKETCH = "# sketch"


def python_blocks(path: Path) -> list[str]:
    """The ```python blocks of ``path`` that are meant to run as written."""
    blocks = re.findall(r"```python\n(.*?)```", path.read_text(), flags=re.S)
    return [b for b in blocks if not b.startswith(SKETCH)]


@pytest.fixture
def in_a_copy(tmp_path, monkeypatch):
    """A working directory holding a copy of examples/, as a newcomer's checkout has it."""
    shutil.copytree(ROOT / "examples", tmp_path / "examples")
    monkeypatch.chdir(tmp_path)
    return tmp_path


@pytest.mark.parametrize("doc", DOCS, ids=lambda p: p.name)
def test_python_snippets_run_as_written(doc, in_a_copy, capsys):
    blocks = python_blocks(doc)
    if doc.name in ("README.md", "decision-records.md", "scenario.md"):
        assert blocks, f"{doc.name} lost its examples"
    for number, block in enumerate(blocks, 1):
        # run from a file, as a reader would save it (numba's cache=True needs a real file)
        script = in_a_copy / f"{doc.stem}_block_{number}.py"
        script.write_text(block)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the cluster dump's ConfigMap: a ManifestWarning
            try:
                runpy.run_path(str(script), run_name="__main__")
            except Exception as exc:
                first = block.strip().splitlines()[0]
                raise AssertionError(f"{doc.name}: python block {number} ({first!r}) fails as written: "
                                     f"{type(exc).__name__}: {exc}") from exc
    out = capsys.readouterr().out
    if doc.name in ("README.md", "decision-records.md"):
        assert "Insufficient cpu" in out and "Scheduled gke-prod-pool-1-" in out


def test_readme_record_snippet_shows_a_rejection_and_the_runner_up(in_a_copy):
    (block,) = [b for b in python_blocks(ROOT / "README.md") if 'record="all"' in b]
    ns: dict = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        exec(compile(block, "README.md", "exec"), ns)
    rec, result = ns["rec"], ns["result"]
    assert result.status == "Scheduled" and rec.selected_node == result.node_name
    assert set(rec.rejected_by()) == {"NodeResourcesFit"} and len(rec.rejected_by()["NodeResourcesFit"]) == 2
    top = rec.score_table(top=2)
    assert top[0]["node"] == rec.selected_node and top[0]["total"] >= top[1]["total"]


def test_command_lines_of_the_docs_run(in_a_copy, capsys):
    assert main(["simulate", "examples/scenario.yaml", "--out", "report", "--quiet"]) == 0
    assert (in_a_copy / "report" / "report.html").stat().st_size > 0


def test_examples_folder_still_reads_as_a_cluster(in_a_copy, capsys):
    """examples/ is also a folder of manifests (``--cluster examples``): the scenario's kind header
    makes manifest readers skip it, with the warning for kinds not modelled."""
    pod = in_a_copy / "probe.yaml"
    pod.write_text("apiVersion: v1\nkind: Pod\nmetadata: {name: probe, namespace: shop}\n"
                   "spec: {containers: [{name: c, image: nginx, resources: {requests: {cpu: '1'}}}]}\n")
    assert main(["capacity", "--cluster", "examples", "--pod", str(pod), "--json"]) == 0
    captured = capsys.readouterr()
    assert "Scenario (1)" in captured.err and '"placed": 14' in captured.out


def test_example_scenario_uses_every_section():
    sc = Scenario.load(ROOT / "examples" / "scenario.yaml")
    raw_keys = set(re.findall(r"^([a-z_]+):", (ROOT / "examples" / "scenario.yaml").read_text(), flags=re.M))
    assert raw_keys == set(_TOP_LEVEL) | {"kind"}
    assert sc.pdbs and sc.scheduler_time.enabled and sc.events and sc.priority_classes
    assert any(type(s).__name__ == "TraceStream" for s in sc.arrivals)


def test_scenario_doc_describes_every_field():
    text = (ROOT / "docs" / "scenario.md").read_text()
    for key in _TOP_LEVEL:
        assert f"| `{key}` |" in text, key
    stream_fields = ("name", "rate", "interval", "batch", "count", "start", "end", "template", "mix", "duration",
                     "namespace", "labels", "priority")
    trace_fields = ("trace", "format", "speedup")
    cluster_fields = ("nodes", "name_prefix", "regions", "zones", "zone_assignment", "shapes", "labels", "taints",
                      "unschedulable_fraction", "images", "images_per_node", "pods", "seed")
    running_fields = ("count", "shapes", "labels", "namespaces", "placement", "respect_capacity",
                      "on_unplaceable", "name_prefix")
    for key in stream_fields + trace_fields + cluster_fields + running_fields:
        assert f"`{key}`" in text, key
    for column in _TRACE_COLUMNS:
        assert f"`{column}`" in text, column
    for distribution in _DISTRIBUTIONS:
        assert f"distribution: {distribution}" in text, distribution
    for model in SCHEDULER_TIME_MODELS:
        assert f"`{model}" in text or f"model: {model}" in text, model
    for key in ("min_available", "max_unavailable", "selector", "reschedule", "shape", "at"):
        assert f"`{key}" in text, key


def test_report_doc_defines_every_file_field_and_column():
    text = (ROOT / "docs" / "report.md").read_text()
    for table in (FILES_DOC, SUMMARY_DOC, STATUS_DOC, PODS_CSV_DOC, TIMESERIES_DOC):
        for key, meaning in table.items():
            assert f"| `{key}` | {meaning} |" in text, key


def test_simulate_help_points_to_the_docs(capsys):
    try:
        code = main(["simulate", "--help"])
    except SystemExit as exc:  # argparse's way out of --help
        code = exc.code
    assert code == 0
    out = capsys.readouterr().out
    assert "docs/scenario.md" in out and "docs/report.md" in out and "report.html" in out
