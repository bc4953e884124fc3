"""The docs a newcomer reads run as written: every Python block and every ``fastsched ...`` command of
README.md and docs/**/*.md (the site), examples/, --help, and the reference pages' coverage."""
from __future__ import annotations

import argparse
import importlib
import importlib.util
import re
import runpy
import shlex
import shutil
import subprocess
import sys
import warnings
from dataclasses import dataclass
from pathlib import Path

import pytest

from fastsched.cli import build_parser, main
from fastsched.features import KNOWN_GATES
from fastsched.sim.report import FILES_DOC
from fastsched.sim.scenario import _TOP_LEVEL, SCHEDULER_TIME_MODELS, Scenario
from fastsched.sim.simulation import PODS_CSV_DOC, STATUS_DOC, SUMMARY_DOC, TIMESERIES_DOC
from fastsched.sim.streams import _DISTRIBUTIONS, _TRACE_COLUMNS
from fastsched.testing import oracle

ROOT = Path(__file__).resolve().parents[2]
#: (docs/dev holds the maintainers' design notes, whose code blocks sketch designs: not site pages)
DOCS = [ROOT / "README.md", *sorted(p for p in (ROOT / "docs").rglob("*.md") if ROOT / "docs" / "dev" not in p.parents)]

#: the line right before a fence that changes how the block is tested, with the reason said:
#: ``<!-- docs-test: skip: REASON -->`` (not run: it needs Go, Dask, a cluster, minutes, ...) or
#: ``<!-- docs-test: pytest: REASON -->`` (a Python block that is a test file: run by pytest)
MARKER = re.compile(r"<!-- docs-test: (?P<verb>[a-z]+): (?P<reason>.*?) -->")
FENCE = re.compile(r"^```(?P<lang>[\w-]*)[^\n]*\n(?P<body>.*?)^```[ \t]*$", re.M | re.S)
SHELL = ("bash", "sh", "shell", "console")


@dataclass(frozen=True)
class Block:
    doc: Path
    line: int
    lang: str
    body: str
    verb: str = ""
    reason: str = ""

    @property
    def id(self) -> str:
        return f"{self.doc.relative_to(ROOT).as_posix()}:{self.line}"


def blocks(path: Path) -> list[Block]:
    """The fenced blocks of ``path``, each with the docs-test marker of the line before it."""
    text = path.read_text()
    out = []
    for m in FENCE.finditer(text):
        before = text[:m.start()].rstrip("\n").rsplit("\n", 1)[-1]
        marker = MARKER.fullmatch(before.strip())
        out.append(Block(path, text.count("\n", 0, m.start()) + 1, m["lang"], m["body"],
                         marker["verb"] if marker else "", marker["reason"].strip() if marker else ""))
    return out


#: files the site includes whole (pymdownx.snippets, ``--8<-- "FILE"``) and why their blocks are not run
INCLUDED = {
    "BENCHMARKS.md": "the benchmarks' own commands: a 15-minute pytest-benchmark run, and Go for "
                     "`fastsched differential --bench`; their figures are what the page shows",
    "CHANGELOG.md": "no runnable blocks",
}
INCLUDE = re.compile(r'^--8<-- "(?P<file>[^"]+)"$', re.M)


def included_blocks() -> list[Block]:
    out = []
    for doc in DOCS:
        for m in INCLUDE.finditer(doc.read_text()):
            assert m["file"] in INCLUDED, f"{doc.name} includes {m['file']}: say in INCLUDED how its blocks are tested"
            out += [Block(b.doc, b.line, b.lang, b.body, "skip", INCLUDED[m["file"]]) for b in blocks(ROOT / m["file"])]
    return out


ALL_BLOCKS = [b for doc in DOCS for b in blocks(doc)] + included_blocks()
PYTHON_BLOCKS = [b for b in ALL_BLOCKS if b.lang == "python" and b.verb != "skip"]
SHELL_BLOCKS = [b for b in ALL_BLOCKS if b.lang in SHELL and b.verb != "skip"]


def python_blocks(path: Path) -> list[str]:
    """The ```python blocks of ``path`` that are meant to run as written."""
    return [b.body for b in blocks(path) if b.lang == "python" and b.verb != "skip"]


def fastsched_commands(block: Block) -> list[list[str]]:
    """The ``fastsched ...`` command lines of a shell block, as argv (after ``fastsched``)."""
    lines = block.body.replace("\\\n", " ").splitlines()
    return [shlex.split(line, comments=True)[1:] for line in lines if line.strip().startswith("fastsched ")]


@pytest.fixture
def in_a_copy(tmp_path, monkeypatch):
    """A working directory laid out as a newcomer's checkout: examples/, docs/examples/ and the
    upstream scheduler_perf configs of tests/perf/data/upstream."""
    shutil.copytree(ROOT / "examples", tmp_path / "examples", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copytree(ROOT / "docs" / "examples", tmp_path / "docs" / "examples")
    (tmp_path / "tests" / "perf" / "data").mkdir(parents=True)
    (tmp_path / "tests" / "perf" / "data" / "upstream").symlink_to(ROOT / "tests" / "perf" / "data" / "upstream")
    # the oracle's recorded set (differential.md reads oracle.RECORDED_DIR): the checkout's, which
    # is not found from the package's location when the suite runs against an installed wheel
    monkeypatch.setattr(oracle, "RECORDED_DIR", ROOT / "tests" / "oracle" / "recorded")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_markers_say_why_and_name_a_known_action():
    for doc in DOCS:
        text = doc.read_text()
        for m in re.finditer(r"<!-- docs-test:.*?-->", text):
            marker = MARKER.fullmatch(m.group(0))
            assert marker and marker["verb"] in ("skip", "pytest") and len(marker["reason"].strip()) > 10, \
                f"{doc.name}: {m.group(0)!r}: write <!-- docs-test: skip|pytest: the reason -->"
            following = text[m.end():].lstrip("\n")
            assert following.startswith("```"), f"{doc.name}: {m.group(0)!r} is not right before a code block"


def test_every_shell_block_runs_or_says_why_not():
    """A shell block holds ``fastsched`` commands only (run below), or is marked skip with its reason."""
    for b in ALL_BLOCKS:
        if b.lang in SHELL and b.verb != "skip":
            others = [line for line in b.body.splitlines()
                      if line.strip() and not line.lstrip().startswith(("fastsched ", "#"))]
            assert not others, f"{b.id}: {others[0]!r} is not a fastsched command: mark the block " \
                               "<!-- docs-test: skip: why -->"


def test_the_site_has_runnable_examples():
    assert len(PYTHON_BLOCKS) >= 25 and len(SHELL_BLOCKS) >= 15
    for page in ("getting-started.md", "guide/why-pending.md", "guide/writing-plugins.md", "decision-records.md"):
        assert any(b.doc == ROOT / "docs" / page for b in PYTHON_BLOCKS), f"{page} lost its examples"


@pytest.mark.parametrize("block", PYTHON_BLOCKS, ids=lambda b: b.id)
def test_python_blocks_run_as_written(block, in_a_copy, capsys):
    # run from a file, as a reader would save it (numba's cache=True needs a real file)
    script = in_a_copy / f"{'test_' if block.verb == 'pytest' else ''}block_{block.line}.py"
    script.write_text(block.body)
    if block.verb == "pytest":  # a test file of the reader's project, with fastsched's pytest plugin
        run = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(script)],
                             cwd=in_a_copy, capture_output=True, text=True, timeout=300)
        assert run.returncode == 0, f"{block.id} fails under pytest:\n{run.stdout[-3000:]}{run.stderr[-2000:]}"
        return
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the cluster dump's ConfigMap: a ManifestWarning
        try:
            runpy.run_path(str(script), run_name="__main__")
        except Exception as exc:
            first = block.body.strip().splitlines()[0]
            raise AssertionError(f"{block.id}: python block ({first!r}) fails as written: "
                                 f"{type(exc).__name__}: {exc}") from exc
    out = capsys.readouterr().out
    for (page, in_block), expected in EXPECTED_OUTPUT.items():
        if block.doc == ROOT / page and in_block in block.body:
            for text in expected:
                assert text in out, f"{block.id} no longer prints {text!r}: {out[-1500:]}"


#: what some blocks print, as their comments say: (page, text of the block) -> texts in the output
EXPECTED_OUTPUT = {
    ("docs/getting-started.md", "explain("): ["Insufficient cpu"],
    ("docs/getting-started.md", 'record="all"'): ["Scheduled gke-prod-pool-1-", "Insufficient cpu"],
    ("docs/decision-records.md", 'record="all"'): ["Scheduled gke-prod-pool-1-", "Insufficient cpu"],
    ("docs/guide/why-pending.md", 'record="failures"'): ["Unschedulable 0/2 nodes are available", "Insufficient cpu"],
    ("docs/guide/writing-plugins.md", "class DiskType"): ["'fused_cycles': 65", "40 0"],
    ("docs/guide/extenders.md", "ReferenceExtender"): ["no licence on this node", "Scheduled n3"],
}


_RAN: set[tuple[str, ...]] = set()


@pytest.mark.parametrize("block", SHELL_BLOCKS, ids=lambda b: b.id)
def test_fastsched_commands_run_as_written(block, in_a_copy, capsys):
    commands = fastsched_commands(block)
    assert commands, f"{block.id}: a shell block without a fastsched command must be marked skip"
    for argv in commands:
        if tuple(argv) in _RAN:  # the same command on another page: once is enough
            continue
        code = main(argv)
        captured = capsys.readouterr()
        assert code == 0, f"{block.id}: `fastsched {shlex.join(argv)}` exits {code}: {captured.err[-2000:]}"
        _RAN.add(tuple(argv))


def test_decision_records_snippet_shows_a_rejection_and_the_runner_up(in_a_copy):
    for page in ("guide/why-pending.md", "decision-records.md"):
        (block,) = [b for b in python_blocks(ROOT / "docs" / page) if 'record="all"' in b]
        ns: dict = {}
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            exec(compile(block, page, "exec"), ns)
        rec, result = ns["rec"], ns["result"]
        assert result.status == "Scheduled" and rec.selected_node == result.node_name
        assert set(rec.rejected_by()) == {"NodeResourcesFit"} and len(rec.rejected_by()["NodeResourcesFit"]) == 2
        top = rec.score_table(top=2)
        assert top[0]["node"] == rec.selected_node and top[0]["total"] >= top[1]["total"]


def test_plugin_example_runs():
    (block,) = [b for b in python_blocks(ROOT / "docs" / "guide" / "writing-plugins.md") if "class PreferFast" in b]
    ns: dict = {}
    exec(compile(block, "writing-plugins.md", "exec"), ns)
    assert ns["status"] is None
    totals = {s.name: s.total_score for s in ns["scores"]}
    # node a is labelled fast: PreferFast gives it 100 x weight 2 on top of the default plugins
    assert totals["a"] > totals["b"]
    assert ns["verdicts"].feasible().all()


def _subcommands(parser: argparse.ArgumentParser, prefix: str = "fastsched"):
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield f"{prefix} {name}", sub
                yield from _subcommands(sub, f"{prefix} {name}")


def test_cli_reference_has_every_command_and_option():
    text = (ROOT / "docs" / "reference" / "cli.md").read_text()
    for command, sub in _subcommands(build_parser()):
        assert re.search(rf"^#+ {re.escape(command)}$", text, flags=re.M), f"{command} has no section"
        section = text.split(f" {command}\n", 1)[1].split("\n## ", 1)[0]
        for action in sub._actions:
            for option in action.option_strings:
                if option not in ("-h", "--help"):
                    assert f"`{option}" in section or f", {option}" in section, f"{command} {option} is not documented"


def test_go_developers_page_states_the_version_followed():
    from fastsched import UPSTREAM_VERSION

    text = (ROOT / "docs" / "go-developers.md").read_text()
    assert f"**kube-scheduler {UPSTREAM_VERSION}**" in text and "`fastsched.UPSTREAM_VERSION`" in text
    for module in ("schedule_one.py", "cluster.py", "eventhandlers.py", "backend/queue"):
        assert module in text, module


def test_feature_gates_page_lists_every_gate_with_its_default():
    text = (ROOT / "docs" / "reference" / "feature-gates.md").read_text()
    for gate in KNOWN_GATES.values():
        assert f"| `{gate.name}` | {str(gate.default).lower()} | {gate.stage} |" in text, gate.name
    # the whole table is what fastsched.features says (switchable or fixed, what follows each gate)
    spec = importlib.util.spec_from_file_location("gates_table", ROOT / "tools" / "generate_feature_gates_table.py")
    tool = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(tool)
    assert tool.rendered(text) == text, "run tools/generate_feature_gates_table.py"


#: ``fastsched.a.b.C`` in backticks on any page: it must still exist (a rename breaks the docs)
DOTTED = re.compile(r"`(fastsched(?:\.[A-Za-z_][A-Za-z0-9_]*)+)(?![\w./-])")


def _resolve(name: str) -> object:
    parts = name.split(".")
    for i in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:i]))
        except ImportError:
            continue
        for attr in parts[i:]:
            obj = getattr(obj, attr)
        return obj
    raise ImportError(name)


def test_names_on_the_pages_still_exist():
    missing = []
    for doc in DOCS:
        for name in sorted(set(DOTTED.findall(doc.read_text()))):
            try:
                _resolve(name)
            except (ImportError, AttributeError):
                missing.append(f"{doc.relative_to(ROOT)}: {name}")
    assert not missing, "names the docs use that no longer exist:\n" + "\n".join(missing)


def test_examples_folder_still_reads_as_a_cluster(in_a_copy, capsys):
    """examples/ is also a folder of manifests (``--cluster examples``): the scenario's kind header
    makes manifest readers skip it, with the warning for kinds not modelled."""
    pod = in_a_copy / "probe.yaml"
    pod.write_text("apiVersion: v1\nkind: Pod\nmetadata: {name: probe, namespace: shop}\n"
                   "spec: {containers: [{name: c, image: nginx, resources: {requests: {cpu: '1'}}}]}\n")
    assert main(["capacity", "--cluster", "examples", "--pod", str(pod), "--json"]) == 0
    captured = capsys.readouterr()
    assert "Scenario (2)" in captured.err and '"placed": 14' in captured.out


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
