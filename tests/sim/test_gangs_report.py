"""Gang streams in the report (gangs.csv, gangs.png, report.html) and the CLI summary."""
from __future__ import annotations

import csv

from fastsched.sim import simulate

from .test_gangs import _gang_stream, _scenario


def test_report_has_the_gang_files_and_chart(tmp_path):
    from fastsched.sim.report import write_report

    r = simulate(_scenario([_gang_stream(start=10, count=2, duration=50)], until=300), sample_interval=10)
    paths = write_report(r, tmp_path)
    assert paths["gangs.png"].stat().st_size > 0
    with paths["gangs.csv"].open() as fh:
        rows = list(csv.DictReader(fh))
    assert [(row["name"], row["created"], row["started"], row["wait"]) for row in rows] == [
        ("default/train-00000", "10.0", "10.0", "0.0"), ("default/train-00001", "110.0", "110.0", "0.0")]
    html = paths["report.html"].read_text()
    assert "gangs started" in html and "GPU fragmentation" in html and "gangs.csv columns" in html
    assert html.count("<svg") >= 5


def test_cli_summary_shows_gangs(tmp_path, capsys):
    import yaml

    from fastsched.cli import main

    file = tmp_path / "s.yaml"
    file.write_text(yaml.safe_dump(_scenario([_gang_stream(pods=3, start=10)], until=100)))
    assert main(["simulate", str(file), "--out", str(tmp_path / "out")]) == 0
    out = capsys.readouterr().out
    assert "gangs started / created (never started)" in out and "0 / 1 (1)" in out


def test_example_scenario_shows_the_gang_metrics(tmp_path):
    """examples/gang-training.yaml: training gangs beside inference pods on 32 GPU nodes; the
    40-node gang (320 GPUs > 256) never starts, the others wait for whole free nodes."""
    from pathlib import Path

    from fastsched.sim.report import write_report

    r = simulate(Path(__file__).resolve().parents[2] / "examples" / "gang-training.yaml")
    g = r.summary["gangs"]
    assert g["total"] == 15 + 3 + 1
    assert g["never_started_gangs"] == ["default/train-40-00000"] and g["never_started"] == 1
    assert g["wait_seconds"]["count"] == 18 and g["wait_seconds"]["max"] > 0
    assert 0 < g["gpu_fragmentation"]["mean"] < 1
    assert any(row["gpus_stranded"] > 0 for row in r.timeseries)
    paths = write_report(r, tmp_path)
    assert "gangs never started" in paths["report.html"].read_text()
