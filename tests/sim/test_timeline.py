"""The lazy timeline (bounded memory for open-ended streams) and numbers in any YAML notation."""
from __future__ import annotations

import itertools
import tracemalloc

import numpy as np
import pytest
import yaml

from fastsched.sim.scenario import (
    NodeAdd,
    PodArrival,
    Scenario,
    ScenarioError,
    Timeline,
)

OPEN_ENDED = """
seed: 3
until: {until}
cluster: {{nodes: 4}}
arrivals:
  - {{name: web, rate: 50, template: pod-default, duration: {{distribution: exponential, mean: 30}}}}
  - name: batch
    interval: 0.5
    batch: 4
    mix: [{{template: pod-default, weight: 2}}, {{template: pod-with-pod-anti-affinity, weight: 1}}]
events:
  - {{at: 2, add: {{count: 1}}}}
"""


def test_open_ended_stream_until_1e12_uses_bounded_memory():
    """until: 1e12 and streams bounded only by it: 1.5e14 arrivals. Building the timeline and
    taking its first 1,000 events must not make the others (it once took 19.4 GB in 60 s)."""
    sc = Scenario.load(OPEN_ENDED.format(until="1e12"))
    assert sc.until == 1e12
    tracemalloc.start()
    try:
        tl = sc.timeline()
        first = list(itertools.islice(iter(tl), 1000))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    # (the memory bound is the check: a timeline that made the other arrivals would hold them;
    # a wall-time bound would only add a failure on a loaded machine)
    assert len(first) == 1000 and peak < 5 * 2**20, peak
    times = [e.time for e in first]
    assert times == sorted(times)
    assert {e.stream for e in first if isinstance(e, PodArrival)} == {"web", "batch"}
    assert any(isinstance(e, NodeAdd) for e in first)
    # what a simulation needs up front comes without making the pods (they would take memory)
    tracemalloc.start()
    try:
        cpu, memory = tl.reference_requests()
        assert tl.last_time() == 1e12
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 5 * 2**20, peak
    assert cpu == 100.0 and memory == 500 * 2**20  # pod-default and the anti-affinity template alike


def test_timeline_is_lazy_reiterable_and_ordered():
    sc = Scenario.load(OPEN_ENDED.format(until=30))
    tl = sc.timeline()
    assert isinstance(tl, Timeline)
    events = list(tl)
    again = list(tl)
    key = [(type(e).__name__, e.time, getattr(getattr(e, "pod", None), "key", None)) for e in events]
    assert key == [(type(e).__name__, e.time, getattr(getattr(e, "pod", None), "key", None)) for e in again]
    assert [e.time for e in events] == sorted(e.time for e in events) and events[-1].time <= 30
    batch = [e for e in events if isinstance(e, PodArrival) and e.stream == "batch"]
    assert len(batch) == 61 * 4 and [e.time for e in batch[:8]] == [0.0] * 4 + [0.5] * 4
    web = [e for e in events if isinstance(e, PodArrival) and e.stream == "web"]
    assert 1200 < len(web) < 1800
    assert tl.last_time() == events[-1].time
    assert sc.summary()["arrivals"] == len(batch) + len(web)


def test_streams_larger_than_a_chunk_keep_counts_and_names():
    sc = Scenario.load("cluster: {nodes: 2}\narrivals:\n"
                       "  - {name: a, rate: 1000, count: 10000, template: pod-default}\n"
                       "  - {name: b, interval: 0.001, batch: 3, count: 9001, template: pod-default}\n")
    arrivals = list(sc.timeline())
    a = [e for e in arrivals if e.stream == "a"]
    b = [e for e in arrivals if e.stream == "b"]
    assert len(a) == 10000 and len(b) == 9001
    assert [e.pod.name for e in a[:2]] == ["a-00000", "a-00001"] and a[-1].pod.name == "a-09999"
    assert len({e.pod.key for e in arrivals}) == len(arrivals)
    assert b[-1].time == pytest.approx(3000 * 0.001)


def test_reference_requests_are_the_medians_of_the_arrivals():
    text = """
seed: 9
cluster: {nodes: 2}
arrivals:
  - name: mixed
    rate: 3
    count: 501
    mix:
      - {template: {spec: {containers: [{name: c, image: i, resources: {requests: {cpu: 100m, memory: 1Gi}}}]}}}
      - {template: {spec: {containers: [{name: c, image: i, resources: {requests: {cpu: "2", memory: 2Gi}}}]}}}
      - {template: {spec: {containers: [{name: c, image: i, resources: {requests: {cpu: 700m}}}]}}, weight: 2}
  - {name: fixed, interval: 1, end: 40, template: pod-default}
"""
    tl = Scenario.load(text).timeline()
    pods = [e.pod for e in tl if isinstance(e, PodArrival)]
    expected = (float(np.median([p.requests.get("cpu", 0) for p in pods])),
                float(np.median([p.requests.get("memory", 0) for p in pods])))
    assert tl.reference_requests() == expected
    assert tl.last_time() == max(e.time for e in tl)


@pytest.mark.parametrize("text, value", [("1e12", 1e12), ("1.0e+9", 1e9), ("1_000", 1000), ("1.5E3", 1500.0),
                                         ("'2e3'", 2000.0), ("900", 900)])
def test_until_in_any_yaml_notation(text, value):
    sc = Scenario.load(f"until: {text}\ncluster: {{nodes: 1}}\n")
    assert sc.until == value


def test_numbers_in_any_yaml_notation_wherever_the_scenario_takes_one():
    text = """
seed: 1_0
until: 2e2
cluster: {nodes: 1e1, zones: 2e0, pods: {count: 4e0}}
arrivals:
  - {name: a, rate: 5e-1, count: 1e1, start: 1e1, end: 1.5e2, template: pod-default, duration: 3e1}
  - {name: b, interval: 2e1, batch: 2e0, count: 6, template: pod-default,
     duration: {distribution: uniform, min: 1e1, max: 2e1}}
events:
  - {at: 5e1, add: {count: 2e0}}
"""
    sc = Scenario.load(text)
    assert sc.seed == 10 and sc.until == 200.0
    nodes, pods = sc.initial_cluster()
    assert len(nodes) == 10 + 0 and len(pods) == 4 and sc.cluster.zones == ["zone-1", "zone-2"]
    a = [e for e in sc.timeline() if isinstance(e, PodArrival) and e.stream == "a"]
    assert len(a) <= 10 and all(10 <= e.time <= 150 and e.duration == 30 for e in a)
    # the dict PyYAML (YAML 1.1) makes, with "2e2" left as a string, reads the same
    data = yaml.safe_load(text)
    assert data["until"] == "2e2"
    again = Scenario.load(data)
    assert again.until == 200.0 and again.seed == 10


@pytest.mark.parametrize("extra, message", [
    ("until: soon", "until: must be a number (such as 900, 1.5e3 or 1_000), got the string 'soon'"),
    ("seed: 1e", "seed: must be a number (such as 900, 1.5e3 or 1_000), got the string '1e'"),
    ("until: 12h", "until: must be a number (such as 900, 1.5e3 or 1_000), got the string '12h'"),
    ("until: 1.5e400", "until: must be a finite number"),
    ("seed: 1.5e0", "seed: must be a whole number, got 1.5"),
])
def test_strings_that_are_not_numbers_are_errors(extra, message):
    with pytest.raises(ScenarioError) as info:
        Scenario.load("cluster: {nodes: 1}\n" + extra + "\n")
    assert str(info.value) == message


def test_binary_scenario_and_trace_files(tmp_path):
    binary = tmp_path / "scenario.yaml"
    binary.write_bytes(b"\xff\xfe\x00\x81 binary")
    with pytest.raises(ScenarioError, match=r"^cannot read scenario '.*scenario.yaml': not a UTF-8 text file"):
        Scenario.load(binary)
    (tmp_path / "trace.csv").write_bytes(b"\xff\xfe\x00\x81")
    with pytest.raises(ScenarioError, match=r"^arrivals\[0\]\.trace: cannot read trace .*not a UTF-8 text file"):
        Scenario.load({"cluster": {"nodes": 1}, "arrivals": [{"trace": "trace.csv"}]}, base_dir=tmp_path)


def test_unbuildable_scenario_config_is_refused_when_loaded():
    text = ("cluster: {nodes: 1}\nconfig: {apiVersion: kubescheduler.config.k8s.io/v1, "
            "kind: KubeSchedulerConfiguration, profiles: [{schedulerName: s, plugins: "
            "{filter: {enabled: [{name: NoSuchPlugin}]}}}]}\n")
    with pytest.raises(ScenarioError, match=r'^config: profiles\[0\]\.plugins\.filter\.enabled\[0\]\.name: '
                                            r'profile "s": FilterPlugin "NoSuchPlugin" does not exist'):
        Scenario.load(text)


def test_unsorted_trace_rows_arrive_in_time_order(tmp_path):
    (tmp_path / "t.csv").write_text("arrival_time,cpu\n5,1\n1,1\n3,1\n1,2\n")
    tl = Scenario.load({"cluster": {"nodes": 1}, "until": 4, "arrivals": [{"trace": "t.csv"}]},
                       base_dir=tmp_path).timeline()
    assert [(e.time, e.pod.name) for e in tl] == [(1.0, "trace-0-00001"), (1.0, "trace-0-00003"),
                                                  (3.0, "trace-0-00002")]
    assert tl.last_time() == 3.0 and tl.reference_requests()[0] == 1000.0
