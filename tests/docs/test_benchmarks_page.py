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


def test_the_perf_table_shows_samples_and_the_rescaled_run_when_recorded(report):
    """A run with FASTSCHED_BENCH_RESCALE records each case's kept samples and its rescaled run
    (None when the config's run kept enough): the table gains their columns; older results,
    without them, print as before."""
    def bench(case, **extra):
        return {"name": f"test_x[{case}]", "param": case,
                "extra_info": {"threshold": 100, "measured_pods_per_second": None, "ratio": None,
                               "phase_pods_per_second": 5000.0, "cpu_s": 2.0, **extra}}

    old = report.upstream([bench("misc/A")], None)
    assert old == [["misc/A", "100", "no sample", "-", "5,000", "2.0"]]
    short = bench("misc/A", throughput_samples=1, measured_pods_per_second=1200.0, ratio=12.0,
                  rescaled={"status": "passed", "params": {"measurePods": 100000}, "measured_pods_per_second": 4000.0,
                            "throughput_samples": 7, "ratio": 40.0})
    enough = bench("misc/B", throughput_samples=5, measured_pods_per_second=3000.0, ratio=30.0, rescaled=None)
    rows = report.upstream([short, enough], None, samples_col=True, rescaled=True)
    assert rows[0] == ["misc/A", "100", "1,200", "1", "12.0x", "measurePods=100,000", "4,000", "7", "40.0x",
                       "5,000", "2.0"]
    assert rows[1] == ["misc/B", "100", "3,000", "5", "30.0x", "-", "-", "-", "-", "5,000", "2.0"]
