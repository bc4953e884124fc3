"""Modelled scheduler time, PodDisruptionBudget status and the default scenario's contention."""
from __future__ import annotations

import pytest

from fastsched.sim import simulate
from fastsched.sim.scenario import (DEFAULT_SCENARIO_YAML, Scenario, ScenarioError, SchedulerTime,
                                    default_scenario)
from fastsched.sim.simulation import PODS_CSV_DOC, STATUS_DOC, SUMMARY_DOC, TIMESERIES_DOC, PodRecord

BURST = """\
name: burst
seed: 2
until: 30
cluster:
  nodes: 20
  shapes: [{name: std, cpu: 8, memory: 32Gi, pods: 110}]
arrivals:
  - name: burst
    interval: 100
    batch: 10
    count: 10
    template:
      spec:
        containers: [{name: c, image: nginx, resources: {requests: {cpu: 100m}}}]
"""


def test_fixed_cost_queues_a_burst_in_virtual_time():
    result = simulate(BURST, scheduler_time={"model": "fixed", "scheduling": 0.1, "binding": 0.05})
    binds = sorted(r.bind_time for r in result.records)
    # ten pods arrive together at t=0; the scheduler takes 0.15 s per bound pod, one after the other
    assert binds == pytest.approx([0.15 * i for i in range(10)])
    assert [r.latency for r in sorted(result.records, key=lambda r: r.bind_time)] == pytest.approx(binds)
    assert result.summary["scheduler_busy_seconds"] == pytest.approx(1.5)
    assert result.summary["scheduler_busy_share"] == pytest.approx(1.5 / 30)
    assert result.summary["placement_latency_seconds"]["max"] == pytest.approx(1.35)


def test_without_a_model_every_pod_binds_at_its_arrival():
    result = simulate(BURST)
    assert {r.bind_time for r in result.records} == {0.0}
    assert result.summary["scheduler_busy_seconds"] == 0 and result.summary["scheduler_time"]["model"] == "none"


def test_per_node_and_measured_models():
    per_node = simulate(BURST, scheduler_time={"model": "per_node", "scheduling": 0.01, "per_node": 0.001})
    # 0.01 + 20 nodes x 0.001 = 0.03 s per attempt
    assert sorted(r.bind_time for r in per_node.records) == pytest.approx([0.03 * i for i in range(10)])
    # A thousand times fastsched's own wall time per attempt: positive, and the binds spread over it.
    # The horizon is far: on a loaded machine an attempt can take milliseconds of wall time, i.e.
    # seconds of virtual time, and the burst's 30 s would end before the last pod binds.
    measured = simulate(BURST.replace("until: 30", "until: 1000000"), scheduler_time={"model": "measured", "scale": 1000})
    busy = measured.summary["scheduler_busy_seconds"]
    assert busy > 0 and max(r.bind_time for r in measured.records) < busy
    assert len({r.bind_time for r in measured.records}) == 10


@pytest.mark.parametrize("raw, message", [
    ({"model": "fast"}, "scheduler_time.model: must be one of none, measured, fixed, per_node"),
    ({"model": "per_node", "scheduling": 0.01}, "scheduler_time.per_node: required by the per_node model"),
    ({"model": "fixed", "scale": 2}, "scheduler_time.scale: only the measured model takes scale"),
    ({"model": "measured", "scheduling": 1}, "scheduler_time: the measured model takes only scale"),
    ({"model": "fixed", "scheduling": -1}, "scheduler_time.scheduling: must be >= 0"),
    ({"model": "fixed", "bogus": 1}, "scheduler_time.bogus: unknown field"),
])
def test_scheduler_time_errors_name_the_field(raw, message):
    with pytest.raises(ScenarioError, match=message.replace(".", r"\.").replace("(", r"\(")):
        Scenario.load({"name": "x", "scheduler_time": raw, "cluster": {"nodes": 1}})


def test_scheduler_time_from_the_scenario_and_its_cost():
    sc = Scenario.load({"name": "x", "cluster": {"nodes": 1}, "scheduler_time": {"scheduling": 0.004}})
    assert sc.scheduler_time == SchedulerTime("fixed", scheduling=0.004)
    assert SchedulerTime("per_node", 0.001, 0.002, 0.0001).cost(9.0, True, 100) == pytest.approx(0.013)
    assert SchedulerTime("measured", scale=3).cost(0.5, False) == 1.5


PREEMPTION = """\
name: pdb
seed: 1
until: 60
cluster:
  nodes: 2
  shapes: [{name: std, cpu: 4, memory: 16Gi, pods: 110}]
priority_classes:
  - {name: high, value: 1000}
pdbs:
  - {name: guard, selector: {app: guarded}, min_available: 3}
arrivals:
  - name: guarded
    interval: 100
    batch: 4
    count: 4
    template:
      metadata: {labels: {app: guarded}}
      spec:
        containers: [{name: c, image: nginx, resources: {requests: {cpu: "1"}}}]
  - name: other
    interval: 100
    batch: 4
    count: 4
    template:
      metadata: {labels: {app: other}}
      spec:
        containers: [{name: c, image: nginx, resources: {requests: {cpu: "1"}}}]
  - name: vip
    interval: 100
    start: 10
    count: 1
    template:
      spec:
        priorityClassName: high
        containers: [{name: c, image: nginx, resources: {requests: {cpu: "2"}}}]
"""


def test_pdb_status_is_kept_and_preemption_prefers_pods_it_allows():
    result = simulate(PREEMPTION, record="all")
    vip = next(r for r in result.records if r.stream == "vip")
    assert vip.status == "Running"
    preempted = [r for r in result.records if r.status == "Preempted"]
    assert len(preempted) == 2 and result.summary["preempted_records"] == 2
    # 4 guarded pods, minAvailable 3: one disruption allowed; upstream picks victims that do not
    # violate a budget first, so at most one of the victims is guarded
    assert sum(r.stream == "guarded" for r in preempted) <= 1
    pdb = result.summary["pdbs"]["default/guard"]
    assert pdb["current_healthy"] == 4 - sum(r.stream == "guarded" for r in preempted)
    assert pdb["desired_healthy"] == 3
    # the preemptor's first attempt is a decision record naming its victims
    first = vip.history[0]
    assert first.outcome == "Unschedulable" and sorted(k for k, _ in first.victims) == sorted(
        f"{r.namespace}/{r.name}" for r in preempted)


def test_pdb_errors():
    with pytest.raises(ScenarioError, match=r"pdbs\[0\]: give exactly one of min_available and max_unavailable"):
        Scenario.load({"name": "x", "cluster": {"nodes": 1}, "pdbs": [{"name": "a", "selector": {"app": "x"}}]})


def test_every_csv_column_and_summary_key_is_documented():
    assert set(PODS_CSV_DOC) == set(PodRecord.CSV_FIELDS)
    result = simulate(BURST, scheduler_time="measured")
    assert set(result.summary) <= set(SUMMARY_DOC)
    for row in result.timeseries:
        for key in row:
            assert key in TIMESERIES_DOC or (key.startswith("util_") and "util_<resource>" in TIMESERIES_DOC)
    assert {r.status for r in result.records} <= set(STATUS_DOC)


@pytest.fixture(scope="module")
def default_result():
    # The built-in scenario's first 500 of its 900 s: the contention below is there by then, and
    # the numbers reconcile at any horizon. The whole scenario runs in the simulations guide's
    # docs test (``fastsched simulate --out report``); running it twice cost the suite ~45 s more.
    assert default_scenario().until == 900
    return simulate(Scenario.load(DEFAULT_SCENARIO_YAML.replace("\nuntil: 900\n", "\nuntil: 500\n")))


def test_default_scenario_has_contention_and_its_numbers_reconcile(default_result):
    s = default_result.summary
    records = default_result.records
    assert s["pods_unschedulable"] > 0
    assert s["preemption_victims"] > 0 and s["preempted_records"] > 0
    lat = s["placement_latency_seconds"]
    assert lat["p99"] > 1 and lat["max"] > 60  # GPU pods wait for GPUs; bursts wait for the scheduler
    assert s["scheduler_busy_seconds"] > 0
    assert s["pods_total"] == len(records) == sum(s["pods_by_status"].values())
    assert s["pods_total"] == s["pods_scheduled"] + s["pods_unschedulable"] + s["pods_pending"]
    assert s["evictions"] == s["evicted_records"] + s["evicted_initial_pods"]
    assert s["pods_by_status"].get("Evicted", 0) + s["pods_by_status"].get("Deleted", 0) == s["evicted_records"]
    assert s["pods_by_status"].get("Preempted", 0) == s["preempted_records"] <= s["preemption_victims"]
    assert s["requeued"] == s["evictions"]  # every drain and removal of the scenario reschedules
    assert s["completions"] == s["pods_by_status"]["Completed"]
    assert sum(r.incarnation > 0 for r in records) == s["requeued"]
    for r in records:
        if r.status in ("Completed", "Evicted", "Preempted"):
            assert r.run_seconds == pytest.approx(r.end_time - r.bind_time)
            if r.status == "Completed":
                assert r.run_seconds == pytest.approx(r.duration)
            else:
                assert r.duration is None or r.run_seconds <= r.duration + 1e-9
    assert s["wall_seconds"] > 0  # (how long is measured in benchmarks/, not asserted here)
    # decision records: the pods that failed keep theirs, bounded
    assert s["records_kept"] > 0 and s["record_bytes"] < 200 * 2**20
    unschedulable = next(r for r in records if r.status == "Unschedulable")
    last = unschedulable.history[-1]
    assert last.outcome == "Unschedulable" and "NodeResourcesFit" in last.rejected_by()
