"""BENCHMARKS.md is one run: every table on it is what ``benchmarks/report.py`` prints from the newest
results file in ``benchmarks/results/``, verbatim.

A figure edited by hand, a table left over from an older run, or a benchmark file the report has no
section for fails here, so the page cannot drift back into a collage of runs from different days
(issue 29: "a reader cannot tell which figures are current"). A/B comparisons of single changes
belong in docs/dev/benchmark-history.md, which this test does not read.
"""
from __future__ import annotations

import contextlib
import importlib.util
import io
import json
import re
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _report_module():
    spec = importlib.util.spec_from_file_location("_bench_report", ROOT / "benchmarks" / "report.py")
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _newest_results() -> Path:
    files = sorted((ROOT / "benchmarks" / "results").glob("*.json"))
    assert files, "benchmarks/results/ holds no run"
    return files[-1]  # named by date, YYYY-MM-DD[...].json


@pytest.fixture(scope="module")
def report():
    return _report_module()


@pytest.fixture(scope="module")
def printed(report) -> str:
    out = io.StringIO()
    argv = sys.argv
    sys.argv = ["report.py", str(_newest_results())]
    try:
        with contextlib.redirect_stdout(out):
            report.main()
    finally:
        sys.argv = argv
    return out.getvalue()


def test_every_benchmark_file_has_a_place_in_the_report(report):
    data = json.loads(_newest_results().read_text())
    files = {b["fullname"].split("::")[0].rsplit("/", 1)[-1] for b in data["benchmarks"]}
    placed = {name for name, _, _ in report.SECTIONS} | set(report.PERF_TABLE_FILES)
    assert files - placed == set(), "benchmarks the report prints nowhere: add a section to benchmarks/report.py"
    # and every benchmark file of the suite is in the run the page comes from
    suite = {p.name for p in (ROOT / "benchmarks").glob("bench_*.py")
             if "def test_" in p.read_text()}
    assert suite - files == set(), "benchmark files missing from the newest run: re-run the benchmarks"


def test_every_table_on_the_page_is_the_newest_runs(printed):
    page = (ROOT / "BENCHMARKS.md").read_text()
    first, *sections = re.split(r"\n(?=### )", printed)
    stamp = re.match(r"Run ending \S+ \S+ UTC, commit `[0-9a-f]+`", first)
    assert stamp is not None and stamp.group(0) in page, "the page does not name the run its tables come from"
    assert len(sections) >= 15
    for section in sections:
        title, _, body = section.partition("\n")
        assert body.strip() in page, f"{title}: the page's table differs from the newest run's"
