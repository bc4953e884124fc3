"""report.html: self-contained, and rendered by a real headless browser (Debian's chromium)."""
from __future__ import annotations

import html
import json
import re
import shutil
import subprocess

import numpy as np
import pytest

from fastsched.sim import simulate, write_report
from fastsched.sim.report import REPORT_FILES

SCENARIO = """\
name: report-check
description: a small cluster with a preemption, pods too big to fit and a drain
seed: 3
until: 120
scheduler_time: {model: fixed, scheduling: 0.01, binding: 0.005}
cluster:
  nodes: 6
  zones: [z1, z2]
  shapes: [{name: std, cpu: 4, memory: 16Gi, pods: 110}]
priority_classes:
  - {name: high, value: 1000}
arrivals:
  - name: web
    interval: 5
    batch: 4
    count: 24
    template:
      metadata: {labels: {app: web}}
      spec:
        containers: [{name: c, image: nginx, resources: {requests: {cpu: "1"}}}]
  - name: vip
    interval: 100
    start: 40
    count: 1
    template:
      spec:
        priorityClassName: high
        containers: [{name: c, image: nginx, resources: {requests: {cpu: "3"}}}]
  - name: huge
    interval: 100
    start: 10
    count: 1
    template:
      spec:
        containers: [{name: c, image: nginx, resources: {requests: {cpu: "64"}}}]
events:
  - {at: 60, drain: {count: 1}}
"""


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    result = simulate(SCENARIO, record="all")
    out = tmp_path_factory.mktemp("report")
    write_report(result, out)
    return result, out


def test_every_report_file_is_written(report):
    result, out = report
    for name in REPORT_FILES:
        assert (out / name).stat().st_size > 0, name
    records = json.loads((out / "records.json").read_text())
    assert len(records["pods"]) == sum(1 for r in result.records if r.history)
    vip = next(p for p in records["pods"] if p["pod"].endswith(vip_record(result).name))
    assert vip["history"][0]["victims"] and vip["history"][0]["outcome"] == "Unschedulable"


def test_report_is_self_contained(report):
    _, out = report
    text = (out / "report.html").read_text()
    assert "<script src" not in text and "<link" not in text and "@import" not in text
    # nothing is fetched: every link and source points inside the page; the only URLs are the SVG
    # namespaces, which are names, not fetches
    for target in re.findall(r"(?:href|src)=\"([^\"]*)\"", text):
        assert target.startswith("#"), target
    urls = set(re.findall(r"https?://[^\s\"'<>)]+", text))
    assert urls <= {"http://www.w3.org/2000/svg", "http://www.w3.org/1999/xlink"}, urls
    assert text.count("<svg") == 4  # utilization, pending, throughput, latency


def test_report_states_the_summary_and_every_record(report):
    result, out = report
    text = html.unescape((out / "report.html").read_text())
    s = result.summary
    assert s["pods_unschedulable"] >= 1 and s["preemption_victims"] >= 1
    for key in ("pods_total", "pods_scheduled", "pods_unschedulable", "preemption_victims"):
        assert f'data-key="{key}">{s[key]:,}<' in text
    assert text.count('<tr data-index=') == len(result.records)
    assert text.count('<template id="record-') == sum(1 for r in result.records if r.history)
    assert "Insufficient cpu" in text and "victims:" in text


def vip_record(result):
    return next(r for r in result.records if r.stream == "vip")


def _chromium():
    for name in ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable"):
        path = shutil.which(name)
        if path:
            return path
    return None


def _browser(*args):
    exe = _chromium()
    if exe is None:
        pytest.skip("no chromium on PATH (Debian: apt-get install -y chromium)")
    cmd = [exe, "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
           "--no-first-run", "--virtual-time-budget=5000", *args]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout


def test_browser_renders_the_summary_and_a_pods_decision_record(report):
    result, out = report
    vip = vip_record(result)
    url = (out / "report.html").resolve().as_uri() + f"#pod={vip.name}"
    dom = html.unescape(_browser("--dump-dom", url))
    assert 'data-rendered="yes"' in dom  # the page's script ran to its end
    s = result.summary
    for key in ("pods_total", "pods_scheduled", "pods_unschedulable", "preemption_victims"):
        assert f'data-key="{key}">{s[key]:,}<' in dom
    # the #pod= link opened the preemptor's decision records: its rejection, its victims, its bind
    panel = dom[dom.index('id="record-panel"'):]
    panel = panel[:panel.index("</template>") if "</template>" in panel else len(panel)]
    assert f"Decision records of {vip.name}" in panel
    first = vip.history[0]
    assert "NodeResourcesFit" in panel and "Insufficient cpu" in panel
    for victim, _node in first.victims:
        assert victim in panel
    assert f"nominated node: <b>{first.nominated_node_name}</b>" in panel
    assert "Scheduled" in panel and vip.node in panel


def test_browser_screenshot_is_not_blank(report, tmp_path):
    _, out = report
    shot = tmp_path / "report.png"
    _browser(f"--screenshot={shot}", "--window-size=1280,1600", (out / "report.html").resolve().as_uri())
    import matplotlib.image as mpimg

    pixels = mpimg.imread(shot)[..., :3]
    assert pixels.shape[0] >= 1000 and pixels.shape[1] >= 1200
    # a rendered page has text and charts: many colours and more than a sliver of non-white
    colours = np.unique((pixels * 255).astype(np.uint8).reshape(-1, 3), axis=0)
    non_white = (pixels < 0.95).any(axis=2).mean()
    assert len(colours) > 50 and non_white > 0.05, (len(colours), non_white)


def test_simulation_result_displays_its_summary_in_notebooks(report):
    result, _ = report
    page = result._repr_html_()
    assert f"Simulation {result.scenario} (seed {result.seed})" in page
    assert f"{result.summary['pods_total']:,} pods = {result.summary['pods_scheduled']:,} scheduled" in page
    assert "<code>preemption_victims</code>" in page
