"""Scenario files: loading, traces, validation errors with field paths, deterministic timelines."""
from __future__ import annotations

import json
from collections import Counter

import pytest
import yaml

from fastsched.api import LABEL_ZONE
from fastsched.sim.scenario import (
    DEFAULT_SCENARIO_YAML,
    NodeAdd,
    NodeDrain,
    NodeRemove,
    PodArrival,
    Scenario,
    ScenarioError,
    default_scenario,
    requeued,
)

BASIC = """
name: small
seed: 5
until: 100
cluster:
  nodes: 30
  zones: [z1, z2, z3]
  shapes:
    - {name: std, cpu: 4, memory: 16Gi}
    - {name: gpu, cpu: 16, memory: 64Gi, nvidia.com/gpu: 2, weight: 0.2}
  pods: {count: 20}
priority_classes:
  - {name: high, value: 1000}
  - {name: everyone, value: 5, global_default: true}
arrivals:
  - name: web
    rate: 4
    template: pod-default
    duration: {distribution: exponential, mean: 20}
  - name: jobs
    interval: 10
    batch: 3
    count: 12
    start: 5
    namespace: batch
    labels: {team: data}
    mix:
      - {template: pod-with-topology-spreading, weight: 1}
      - template:
          metadata: {labels: {app: train}}
          spec:
            priorityClassName: high
            containers: [{name: t, image: busybox, resources: {requests: {cpu: "2", nvidia.com/gpu: "1"}, limits: {nvidia.com/gpu: "1"}}}]
        weight: 1
        duration: 50
events:
  - {at: 30, drain: {count: 2, selector: {topology.kubernetes.io/zone: z2}}}
  - {at: 30, add: {count: 3, shape: gpu}}
  - {at: 60, remove: {nodes: [node-00001]}}
"""


def _key(timeline):
    out = []
    for e in timeline:
        if isinstance(e, PodArrival):
            out.append(("arrival", e.time, e.pod.key, e.duration, e.pod.priority))
        elif isinstance(e, NodeAdd):
            out.append(("add", e.time, tuple(n.name for n in e.nodes)))
        else:
            out.append((type(e).__name__, e.time, e.node_names))
    return out


def test_load_from_text_and_timeline_is_deterministic():
    sc = Scenario.load(BASIC)
    tl = sc.timeline()
    assert _key(tl) == _key(Scenario.load(BASIC).timeline()) == _key(sc.timeline())
    assert [e.time for e in tl] == sorted(e.time for e in tl)
    other = Scenario.load(BASIC.replace("seed: 5", "seed: 6")).timeline()
    assert _key(tl) != _key(other)
    assert all(e.time <= 100 for e in tl)
    # node events come before arrivals at the same time; the add precedes the drain
    at30 = [type(e) for e in tl if e.time == 30]
    assert at30[:2] == [NodeAdd, NodeDrain]


def test_streams_counts_names_and_fields():
    sc = Scenario.load(BASIC)
    arrivals = [e for e in sc.timeline() if isinstance(e, PodArrival)]
    web = [a for a in arrivals if a.stream == "web"]
    assert 300 < len(web) < 500  # Poisson, rate 4 over 100 s
    assert all(a.duration is not None and a.duration >= 0 for a in web)
    assert 10 < sum(a.duration for a in web) / len(web) < 30
    assert all(a.pod.priority == 5 and a.pod.priority_class_name == "everyone" for a in web)  # global default
    jobs = [a for a in arrivals if a.stream == "jobs"]
    assert [a.time for a in jobs] == [5.0] * 3 + [15.0] * 3 + [25.0] * 3 + [35.0] * 3
    assert all(a.pod.namespace == "batch" and a.pod.labels["team"] == "data" for a in jobs)
    kinds = Counter("train" if a.pod.labels.get("app") == "train" else "spread" for a in jobs)
    assert set(kinds) == {"train", "spread"}
    for a in jobs:
        if a.pod.labels.get("app") == "train":
            assert a.pod.priority == 1000 and a.pod.requests["nvidia.com/gpu"] == 1 and a.duration == 50
        else:
            assert a.pod.topology_spread_constraints and a.pod.labels["color"] == "blue"
    names = [a.pod.key for a in arrivals]
    assert len(set(names)) == len(names)
    assert {"default", "batch"} <= {ns.name for ns in sc.namespaces()}


def test_node_events():
    sc = Scenario.load(BASIC)
    nodes, pods = sc.initial_cluster()
    assert len(nodes) == 30 and len(pods) == 20
    by_name = {n.name: n for n in nodes}
    events = [e for e in sc.timeline() if not isinstance(e, PodArrival)]
    add, drain, remove = events
    assert isinstance(add, NodeAdd) and [n.name for n in add.nodes] == ["node-00030", "node-00031", "node-00032"]
    assert all(n.allocatable["nvidia.com/gpu"] == 2 for n in add.nodes)
    assert isinstance(drain, NodeDrain) and len(drain.node_names) == 2 and drain.reschedule
    by_name.update((n.name, n) for n in add.nodes)  # added at the same time, before the drain
    assert all(by_name[n].labels[LABEL_ZONE] == "z2" for n in drain.node_names)
    assert isinstance(remove, NodeRemove) and remove.node_names == ("node-00001",)


def test_load_from_file_with_relative_paths(tmp_path):
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "nodes.yaml").write_text(yaml.safe_dump_all([
        {"apiVersion": "v1", "kind": "Node", "metadata": {"name": f"n{i}", "labels": {"zone": "a" if i < 2 else "b"}},
         "status": {"capacity": {"cpu": "4", "memory": "8Gi", "pods": "10"}}} for i in range(4)]))
    (tmp_path / "sub" / "sched.yaml").write_text(
        "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\npercentageOfNodesToScore: 100\n")
    (tmp_path / "sub" / "trace.csv").write_text(
        "arrival_time,cpu,memory,duration,name,labels,priority,gpu\n"
        "0.5,250m,1Gi,30,first,app=a;tier=x,7,\n"
        "2,1.5,1073741824,,,app=b,,1\n"
        "1,1,512Mi,10,,,,\n")
    (tmp_path / "sub" / "trace.json").write_text(json.dumps({"pods": [
        {"arrival_time": 4, "cpu": 2, "memory": "2Gi", "duration": 8, "namespace": "ml", "labels": {"k": "v"}}]}))
    (tmp_path / "sub" / "scenario.yaml").write_text("""
seed: 3
config: sched.yaml
cluster: {nodes: nodes.yaml, pods: {count: 4, shapes: [{cpu: 1}]}}
arrivals:
  - {trace: trace.csv, speedup: 2}
  - {name: js, trace: trace.json, start: 10}
events:
  - {at: 1, add: {count: 2, shape: {cpu: 2, memory: 4Gi}}}
""")
    sc = Scenario.load(tmp_path / "sub" / "scenario.yaml")
    assert sc.config.profiles[0].scheduler_name == "default-scheduler"
    assert sc.config.percentage_of_nodes_to_score == 100
    nodes, pods = sc.initial_cluster()
    assert [n.name for n in nodes] == ["n0", "n1", "n2", "n3"] and len(pods) == 4
    assert all(p.node_name in {"n0", "n1", "n2", "n3"} for p in pods)
    tl = sc.timeline()
    arrivals = [e for e in tl if isinstance(e, PodArrival)]
    assert [(a.time, a.stream) for a in arrivals] == [(0.25, "trace-0"), (0.5, "trace-0"), (1.0, "trace-0"),
                                                       (14.0, "js")]
    first, third, second, js = arrivals
    assert first.pod.name == "first" and first.duration == 15 and first.pod.priority == 7
    assert dict(first.pod.requests) == {"cpu": 250, "memory": 2**30}
    assert dict(first.pod.labels) == {"app": "a", "tier": "x"}
    assert second.duration is None and second.pod.requests == {"cpu": 1500, "memory": 2**30, "nvidia.com/gpu": 1}
    assert third.duration == 5 and third.pod.requests["memory"] == 512 * 2**20
    assert js.pod.namespace == "ml" and js.duration == 8 and js.pod.labels == {"k": "v"}
    (add,) = [e for e in tl if isinstance(e, NodeAdd)]
    assert [n.name for n in add.nodes] == ["added-node-00000", "added-node-00001"]
    assert add.nodes[0].allocatable["cpu"] == 2000
    # the same document as a dict and as text, with base_dir
    text = (tmp_path / "sub" / "scenario.yaml").read_text()
    assert _key(Scenario.load(text, base_dir=tmp_path / "sub").timeline()) == _key(tl)
    assert _key(Scenario.load(yaml.safe_load(text), base_dir=tmp_path / "sub").timeline()) == _key(tl)


def test_template_from_file(tmp_path):
    (tmp_path / "pod.yaml").write_text(yaml.safe_dump({
        "apiVersion": "v1", "kind": "Pod", "metadata": {"name": "x", "labels": {"a": "b"}},
        "spec": {"containers": [{"name": "c", "image": "i", "resources": {"requests": {"cpu": "300m"}}}]}}))
    sc = Scenario.load({"cluster": {"nodes": 2}, "arrivals": [{"interval": 1, "count": 2, "template": "pod.yaml"}]},
                       base_dir=tmp_path)
    pods = [e.pod for e in sc.timeline()]
    assert [p.name for p in pods] == ["stream-0-00000", "stream-0-00001"]
    assert all(p.requests["cpu"] == 300 and p.labels == {"a": "b"} for p in pods)


ERRORS = [
    ("arrivals: [{rate: 1, count: 2, template: pod-default}, {rate: 0, count: 2, template: pod-default}]",
     "arrivals[1].rate: must be > 0"),
    ("arrivals: [{interval: -3, count: 2, template: pod-default}]", "arrivals[0].interval: must be > 0"),
    ("arrivals: [{rate: 1, template: pod-default}]", "arrivals[0]: needs count or end"),
    ("arrivals: [{rate: 1, interval: 2, count: 1, template: pod-default}]", "arrivals[0]: needs exactly one of rate"),
    ("arrivals: [{rate: 1, count: 1}]", "arrivals[0]: needs exactly one of template, mix"),
    ("arrivals: [{rate: 1, count: 1, template: nope}]", "arrivals[0].template: unknown template 'nope'"),
    ("arrivals: [{rate: 1, count: 1, template: {spec: {containers: [{name: c, resources: {requests: {cpu: lots}}}]}}}]",
     "arrivals[0].template: spec.containers[0].resources.requests.cpu: quantities must match the regular expression"),
    ("arrivals: [{rate: 1, count: 1, template: pod-default, duration: -1}]", "arrivals[0].duration: must be >= 0"),
    ("arrivals: [{rate: 1, count: 1, template: pod-default, duration: {distribution: uniform, min: 5, max: 1}}]",
     "arrivals[0].duration.max: must be >= min"),
    ("arrivals: [{rate: 1, count: 1, template: pod-default, duration: {distribution: exponential}}]",
     "arrivals[0].duration.mean: required"),
    ("arrivals: [{rate: 1, count: 1, template: pod-default, speed: 2}]", "arrivals[0].speed: unknown field"),
    ("arrivals: [{rate: 1, count: 1, mix: [{template: pod-default, weight: 0}]}]",
     "arrivals[0].mix: weights must not all be zero"),
    ("arrivals: [{rate: 1, count: 1, template: {spec: {priorityClassName: gold, containers: [{name: c, image: busybox}]}}}]",
     "arrivals[0].template.spec.priorityClassName: no PriorityClass named 'gold'"),
    ("arrivals: [{name: a, rate: 1, count: 1, template: pod-default}, {name: a, rate: 1, count: 1, template: pod-default}]",
     "arrivals[1].name: duplicate stream name"),
    ("arrivals: [{trace: nowhere.csv}]", "arrivals[0].trace: no such file"),
    ("events: [{at: 5}]", "events[0]: needs exactly one of add, drain, remove"),
    ("events: [{drain: {count: 1}}]", "events[0].at: required"),
    ("events: [{at: 1, drain: {count: 1, nodes: [node-00000]}}]", "events[0].drain: needs exactly one of count, nodes"),
    ("events: [{at: 1, add: {count: 1, shape: huge}}]", "events[0].add.shape: no cluster shape named 'huge'"),
    ("events: [{at: 1, add: {count: 0}}]", "events[0].add.count: must be >= 1"),
    ("config: {apiVersion: kubescheduler.config.k8s.io/v1, kind: KubeSchedulerConfiguration, parallelism: -2}",
     "config: parallelism"),
    ("config: missing-config.yaml", "config: no such file"),
    ("until: 0", "until: must be > 0"),
    ("seed: -1", "seed: must be >= 0"),
    ("colour: blue", "colour: unknown field"),
    ("priority_classes: [{name: a}]", "priority_classes[0].value: required"),
]


@pytest.mark.parametrize("extra, message", ERRORS)
def test_validation_errors_name_the_field(extra, message):
    with pytest.raises(ScenarioError) as info:
        Scenario.load("cluster: {nodes: 5, zones: 1}\n" + extra + "\n")
    assert str(info.value).startswith(message), str(info.value)


def test_structural_and_runtime_errors(tmp_path):
    for text, message in [("cluster: {nodes: 5, shapes: [{cpu: 1, memory: 1Gi, gpus: 2}]}", "cluster.shapes[0].gpus"),
                          ("arrivals: []", "cluster: required"),
                          ("cluster: [1]", "cluster: must be a mapping"),
                          ("cluster: {nodes: 5\n", "scenario: invalid YAML"),
                          ("- 1", "scenario: a scenario must be a mapping")]:
        with pytest.raises(ScenarioError, match="^" + message.replace("[", r"\[").replace("]", r"\]")):
            Scenario.load(text)
    with pytest.raises(ScenarioError, match="cannot read scenario"):
        Scenario.load(tmp_path / "absent.yaml")
    (tmp_path / "bad.csv").write_text("arrival_time,cpu,colour\n1,1,red\n")
    with pytest.raises(ScenarioError, match=r"^arrivals\[0\]\.trace: bad.csv: unknown column\(s\) colour"):
        Scenario.load({"cluster": {"nodes": 1}, "arrivals": [{"trace": "bad.csv"}]}, base_dir=tmp_path)
    (tmp_path / "bad2.csv").write_text("arrival_time,cpu\n1,1\n2,many\n")
    with pytest.raises(ScenarioError, match=r"^arrivals\[0\]\.trace \(bad2.csv, line 3\)\.cpu: invalid quantity 'many': quantities must match"):
        Scenario.load({"cluster": {"nodes": 1}, "arrivals": [{"trace": "bad2.csv"}]}, base_dir=tmp_path)
    # resolved when the timeline is built: more nodes asked for than exist
    sc = Scenario.load("cluster: {nodes: 3}\nevents: [{at: 1, drain: {count: 5}}]")
    with pytest.raises(ScenarioError, match=r"^events\[0\]\.drain\.count: 5 requested but only 3"):
        sc.timeline()
    sc = Scenario.load("cluster: {nodes: 3}\nevents: [{at: 1, remove: {nodes: [ghost]}}]")
    with pytest.raises(ScenarioError, match=r"^events\[0\]\.remove\.nodes: no node 'ghost'"):
        sc.timeline()


def test_requeued_copy():
    sc = Scenario.load(BASIC)
    pod = sc.pods[0]
    assert pod.node_name
    again = requeued(pod)
    assert again.node_name == "" and again.phase == "" and again.uid == pod.uid and again.name == pod.name


def test_default_scenario():
    sc = default_scenario()
    assert sc.name == "default" and yaml.safe_load(DEFAULT_SCENARIO_YAML)["cluster"]["nodes"] == 1000
    nodes, pods = sc.initial_cluster()
    assert len(nodes) == 1000 and len(pods) == 3000
    assert Counter(n.labels[LABEL_ZONE] for n in nodes) == {"zone-a": 334, "zone-b": 333, "zone-c": 333}
    assert sum("nvidia.com/gpu" in n.allocatable for n in nodes) == 50
    # contention is part of the scenario: modelled scheduler time, a PDB guarding preemptible pods
    assert sc.scheduler_time.model == "per_node" and sc.scheduler_time.per_node > 0
    assert [p.key for p in sc.pdbs] == ["default/inference"]
    tl = sc.timeline()
    arrivals = [e for e in tl if isinstance(e, PodArrival)]
    assert 4000 <= len(arrivals) <= 6000
    assert sum(a.duration is not None for a in arrivals) > 0.9 * len(arrivals)
    features = Counter()
    for a in arrivals:
        p = a.pod
        features["anti"] += bool(p.affinity and p.affinity.pod_anti_affinity)
        features["spread"] += bool(p.topology_spread_constraints)
        features["node_affinity"] += bool(p.affinity and p.affinity.node_affinity)
        features["gpu"] += bool(p.requests.get("nvidia.com/gpu"))
        features["high"] += (p.priority or 0) >= 1000
        features["too_big"] += p.requests.get("cpu", 0) > 32000  # more than the largest node
    assert all(features[k] > 0 for k in ("anti", "spread", "node_affinity", "gpu", "high", "too_big")), features
    assert features["high"] < 50
    # more GPU demand than GPUs: 0.8 pods/s x 400 s mean run x 1 GPU against 50 nodes x 4 GPUs
    assert features["gpu"] * 400 / 600 > 4 * 50
    assert {type(e) for e in tl} == {PodArrival, NodeAdd, NodeDrain, NodeRemove}
    assert sc.summary()["arrivals"] == len(arrivals)
