"""End-to-end tests of fastsched.sim.simulation (and the report it writes)."""
from __future__ import annotations

import csv
import json
import math

import numpy as np
import pytest

from fastsched.sim import simulate, write_report
from fastsched.sim.simulation import BOUND_STATUSES, COMPLETED, EVICTED, PREEMPTED, RUNNING

SCENARIO = """\
name: small
seed: 5
cluster:
  nodes: 50
  zones: [z1, z2]
  shapes:
    - {name: std, cpu: 4, memory: 16Gi, pods: 30}
  pods: {count: 40, shapes: [{cpu: 500m, memory: 1Gi}]}
priority_classes:
  - {name: high, value: 1000}
arrivals:
  - name: web
    rate: 4
    count: 300
    template:
      spec:
        containers: [{name: c, image: nginx, resources: {requests: {cpu: 700m, memory: 1Gi}}}]
    duration: {distribution: exponential, mean: 60}
  - name: big
    interval: 10
    batch: 5
    count: 40
    template:
      spec:
        priorityClassName: high
        containers: [{name: c, image: nginx, resources: {requests: {cpu: "3", memory: 4Gi}}}]
    duration: 40
  - name: forever
    interval: 20
    count: 4
    template:
      spec:
        containers: [{name: c, image: nginx, resources: {requests: {cpu: 100m}}}]
  - name: huge
    interval: 30
    count: 2
    template:
      spec:
        containers: [{name: c, image: nginx, resources: {requests: {cpu: "64"}}}]
events:
  - {at: 30, drain: {count: 5}}
  - {at: 50, remove: {count: 3, reschedule: false}}
  - {at: 60, add: {count: 4, shape: std}}
"""

DRAIN_AT, REMOVE_AT = 30.0, 50.0


@pytest.fixture(scope="module")
def scenario_file(tmp_path_factory):
    path = tmp_path_factory.mktemp("sim") / "scenario.yaml"
    path.write_text(SCENARIO)
    return path


@pytest.fixture(scope="module")
def result(scenario_file):
    return simulate(scenario_file)


def test_summary_counts_match_records(result):
    s, recs = result.summary, result.records
    assert s["pods_total"] == len(recs) > 300
    bound = [r for r in recs if r.node]
    assert s["pods_scheduled"] == len(bound) == sum(1 for r in recs if r.bind_time is not None)
    assert s["pods_unschedulable"] == sum(1 for r in recs if r.status == "Unschedulable")
    assert s["pods_scheduled"] + s["pods_unschedulable"] + s["pods_pending"] == s["pods_total"]
    assert sum(s["pods_by_status"].values()) == s["pods_total"]
    assert all(r.status in BOUND_STATUSES for r in bound)
    assert all(r.status not in BOUND_STATUSES for r in recs if not r.node)
    # the two 64-cpu pods never fit anywhere
    huge = [r for r in recs if r.stream == "huge"]
    assert len(huge) == 2 and all(r.status == "Unschedulable" and r.attempts >= 1 for r in huge)
    assert all("Insufficient cpu" in r.reason for r in huge)
    assert s["pods_unschedulable"] >= 2
    # preemption happened (high-priority 3-cpu pods on a loaded cluster) and is accounted for
    preempted = [r for r in recs if r.status == PREEMPTED]
    assert s["preemption_victims"] >= len(preempted) > 0
    assert all(r.reason.startswith("preempted by ") and r.end_time >= r.bind_time for r in preempted)
    assert s["attempts"]["scheduled"] == s["pods_scheduled"]
    assert s["attempts_total"] == sum(s["attempts"].values())
    assert s["pods_per_second"] == pytest.approx(s["pods_scheduled"] / s["scheduler_seconds"])
    assert s["wall_seconds"] >= s["scheduler_seconds"] > 0
    assert s["initial_nodes"] == 50 and s["final_nodes"] == 50 - 3 + 4 and s["initial_pods"] == 40
    assert s["node_events"] == {"add": 1, "drain": 1, "remove": 1}
    assert s["completions"] == s["pods_by_status"].get(COMPLETED, 0)


def test_latencies_are_bind_minus_arrival(result):
    recs = [r for r in result.records if r.bind_time is not None]
    lat = np.array([r.bind_time - r.arrival for r in recs])
    assert (lat >= 0).all()
    assert all(r.latency == pytest.approx(r.bind_time - r.arrival) for r in recs)
    p = result.summary["placement_latency_seconds"]
    assert p["count"] == len(recs)
    for q in (50, 90, 99):
        assert p[f"p{q}"] == pytest.approx(float(np.percentile(lat, q)))
    assert p["max"] == pytest.approx(lat.max()) and p["max"] > 0  # some pods waited for room


def test_lifecycle_times(result):
    recs = result.records
    for r in recs:
        if r.status == COMPLETED:  # completes exactly duration after its bind
            assert r.end_time == pytest.approx(r.bind_time + r.duration)
        if r.status == RUNNING:
            assert r.end_time is None
            assert r.duration is None or r.bind_time + r.duration > result.summary["virtual_seconds"] - 1e-9
    forever = [r for r in recs if r.stream == "forever" and r.incarnation == 0]
    assert len(forever) == 4 and all(r.duration is None for r in forever)
    evicted = [r for r in recs if r.status == EVICTED]
    drained = [r for r in evicted if "drained" in r.reason]
    removed = [r for r in evicted if "removed" in r.reason]
    assert drained and all(r.end_time == DRAIN_AT for r in drained)
    assert all(r.end_time == REMOVE_AT for r in removed)
    # every pod evicted by the drain re-arrives at once (same uid, next incarnation, same duration);
    # pods of removed nodes (reschedule: false) do not
    by_uid: dict[str, list] = {}
    for r in recs:
        by_uid.setdefault(r.uid, []).append(r)
    for r in drained:
        nxt = [x for x in by_uid[r.uid] if x.incarnation == r.incarnation + 1]
        assert len(nxt) == 1 and nxt[0].arrival == DRAIN_AT and nxt[0].duration == r.duration
        assert nxt[0].node != r.node or nxt[0].node == ""
    for r in removed:
        assert not [x for x in by_uid[r.uid] if x.incarnation > r.incarnation]
    s = result.summary
    requeued = sum(1 for r in recs if r.incarnation > 0)
    assert s["requeued"] == requeued and s["evictions"] >= len(evicted)
    initial_requeued = [r for r in recs if r.stream == "initial"]
    assert all(r.incarnation == 1 and r.arrival == DRAIN_AT and r.duration is None for r in initial_requeued)


def test_timeseries_sanity(result):
    ts = result.timeseries
    assert ts[0]["kind"] == "start" and ts[-1]["kind"] == "end" and len(ts) > 50
    times = [s["time"] for s in ts]
    assert times == sorted(times) and times[0] == 0.0
    assert times[-1] == pytest.approx(result.summary["virtual_seconds"])
    for s in ts:
        assert s["pending"] >= 0 and s["running"] >= 0
        for k, v in s.items():
            if k.startswith("util_"):
                assert 0.0 <= v <= 1.0, (k, v, s["time"])
        assert 0.0 <= s["fragmentation"] <= 1.0
        for k in ("throughput_virtual", "throughput_wall"):
            assert s[k] is None or s[k] >= 0
    assert {s["kind"] for s in ts} >= {"step", "drain", "remove", "add"}
    assert max(s["util_cpu"] for s in ts) > 0.5
    end = ts[-1]
    assert end["bound_total"] == result.summary["pods_scheduled"]
    assert end["arrived_total"] == result.summary["pods_total"]
    assert end["pending"] == result.summary["pods_total"] - result.summary["pods_scheduled"]
    assert end["nodes"] == result.summary["final_nodes"]
    # at the drain sample the five drained nodes are cordoned
    drain = next(s for s in ts if s["kind"] == "drain")
    assert drain["cordoned"] == 5 and drain["time"] == DRAIN_AT
    # virtual throughput of a periodic sample = binds since the previous sample / the step
    step = result.summary["sample_interval"]
    for prev, cur in zip(ts, ts[1:]):
        if cur["kind"] == "step" and prev["kind"] == "step":
            assert cur["throughput_virtual"] == pytest.approx((cur["bound_total"] - prev["bound_total"]) / step)
    assert result.summary["fragmentation"]["reference_pod"]["cpu_millis"] == 700.0


def test_deterministic(scenario_file, result):
    again = simulate(scenario_file)
    assert [r.as_row() for r in again.records] == [r.as_row() for r in result.records]
    assert [(s["time"], s["pending"], s["util_cpu"]) for s in again.timeseries] == \
        [(s["time"], s["pending"], s["util_cpu"]) for s in result.timeseries]
    other = simulate(scenario_file, seed=11)
    assert other.seed == 11
    assert [r.as_row() for r in other.records] != [r.as_row() for r in result.records]


def test_until_and_write_report(tmp_path):
    text = SCENARIO.replace("seed: 5", "seed: 5\nuntil: 70")
    res = simulate(text, sample_interval=10)
    s = res.summary
    assert s["virtual_seconds"] == 70.0 and s["sample_interval"] == 10
    assert all(r.arrival <= 70 for r in res.records)
    assert [x["time"] for x in res.timeseries if x["kind"] == "step"] == [10.0 * k for k in range(1, 8)]
    assert all(r.end_time is None or r.end_time <= 70 for r in res.records)

    paths = write_report(res, tmp_path / "out")
    summary = json.loads(paths["summary.json"].read_text())
    for key in ("pods_total", "pods_scheduled", "pods_unschedulable", "pods_per_second"):
        assert summary[key] == s[key]
    rows = list(csv.DictReader(paths["pods.csv"].open()))
    assert len(rows) == summary["pods_total"]
    assert sum(1 for r in rows if r["node"]) == summary["pods_scheduled"]
    assert sum(1 for r in rows if r["status"] == "Unschedulable") == summary["pods_unschedulable"]
    ts = list(csv.DictReader(paths["timeseries.csv"].open()))
    assert len(ts) == len(res.timeseries) and "util_cpu" in ts[0]
    metrics = json.loads(paths["metrics.json"].read_text())
    assert metrics["attempts"] == s["attempts"]
    points = {e["extension_point"] for e in metrics["extension_point_duration"]}
    assert {"PreFilter", "PreScore", "Score", "Bind"} <= points  # upstream records no Filter point
    assert set(metrics["extension_point_totals"]) == points
    for name in ("utilization.png", "pending.png", "throughput.png", "latency.png"):
        assert paths[name].read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert not math.isnan(summary["fragmentation"]["mean"])
