"""Every op of scheduler_perf's format, run on small configs: objects created, placements, results."""
import json

import pytest

from fastsched.perf import load_perf_config, run_perf, run_workload
from fastsched.perf.report import write_data_items

from .conftest import POD, UPSTREAM

ALL_OPS = """\
- name: AllOps
  featureGates:
    NodeInclusionPolicyInPodTopologySpread: true
    SomeFutureGate: true
  workloadTemplate:
  - opcode: createNodes
    countParam: $nodes
    nodeTemplatePath: ../templates/node.yaml
    labelNodePrepareStrategy: {labelKey: zone, labelValues: [a, b]}
  - opcode: createNodes
    count: 2
    uniqueNodeLabelStrategy: {labelKey: unique}
  - opcode: createNodes
    count: 1
    nodeAllocatableStrategy: {nodeAllocatable: {example.com/gpu: "4"}}
  - opcode: createNamespaces
    prefix: team
    count: 2
    namespaceTemplatePath: ../templates/ns.yaml
  - opcode: createAny
    namespace: team-0
    templatePath: ../templates/service.yaml
  - opcode: createAny
    namespace: team-0
    countParam: $named
    templatePath: ../templates/named-pod.yaml
  - opcode: createPods
    count: 4
    namespace: team-1
    podTemplatePath: ../templates/web-pod.yaml
    skipWaitToCompletion: true
  - opcode: barrier
    namespaces: [team-1]
  - opcode: churn
    mode: create
    number: 3
    intervalMilliseconds: 100
    templatePaths: [../templates/pod.yaml]
  - opcode: sleep
    durationParam: $pause
  - opcode: updateAny
    templatePath: ../templates/node-update.yaml
  - opcode: deletePods
    namespace: team-1
    labelSelector: {app: web}
  - opcode: startCollectingMetrics
    name: measured
    namespaces: [namespace-13]
  - opcode: createPods
    countParam: $measurePods
    podTemplatePath: ../templates/pod.yaml
  - opcode: stopCollectingMetrics
  workloads:
  - name: small
    labels: [performance]
    threshold: 1
    params: {nodes: 3, named: 3, pause: 1s, measurePods: 20}
"""

TEMPLATES = dict(
    node__yaml="""\
        apiVersion: v1
        kind: Node
        metadata:
          name: idx-node-{{ .Index }}
          labels: {index: "{{ .Index }}", of: "{{ .Count }}", half: "{{ div .Index 2 }}"}
        status:
          capacity: {pods: "110", cpu: "4", memory: 32Gi}
        """,
    node_update__yaml="""\
        apiVersion: v1
        kind: Node
        metadata:
          name: idx-node-{{ .Index }}
          labels: {updated: "true"}
        status:
          capacity: {pods: "110", cpu: "4", memory: 32Gi}
        """,
    ns__yaml="""\
        apiVersion: v1
        kind: Namespace
        metadata:
          labels: {team: devops}
        """,
    service__yaml="""\
        apiVersion: v1
        kind: Service
        metadata: {generateName: service-}
        spec:
          selector: {app: web}
          ports: [{port: 80}]
        """,
    named_pod__yaml="""\
        apiVersion: v1
        kind: Pod
        metadata:
          name: indexed-{{ .Index }}
        spec:
          containers: [{name: c, image: pause, resources: {requests: {cpu: 100m}}}]
        """,
    web_pod__yaml="""\
        apiVersion: v1
        kind: Pod
        metadata: {generateName: web-, labels: {app: web}}
        spec:
          containers: [{name: c, image: pause, resources: {requests: {cpu: 100m}}}]
        """,
    pod__yaml=POD,
)


def test_every_op_creates_what_upstream_creates(perf_dir):
    path = perf_dir(ALL_OPS, **TEMPLATES)
    config = load_perf_config(path)
    r = run_workload(config, "AllOps", "small", keep_scheduler=True)
    assert r.status == "passed", r.reason
    sched = r.scheduler
    nodes = {n.name: n for n in sched.nodes()}
    # createNodes: templates rendered per index, hostname labels, strategies as upstream applies them
    assert {f"idx-node-{i}" for i in range(3)} <= set(nodes)
    for i in (1, 2):
        labels = nodes[f"idx-node-{i}"].labels
        assert labels["index"] == str(i) and labels["of"] == "3" and labels["half"] == str(i // 2)
        assert labels["kubernetes.io/hostname"] == f"idx-node-{i}"
    assert [nodes[f"idx-node-{i}"].labels["zone"] for i in (1, 2)] == ["b", "a"]  # round-robin by name order
    # updateAny replaced idx-node-0 with the rendered object, as an Update does
    assert dict(nodes["idx-node-0"].labels) == {"updated": "true"}
    base = [n for name, n in nodes.items() if name.startswith("node-1-")]
    assert len(base) == 2 and len({n.labels["unique"] for n in base}) == 2      # makeBaseNode node-<op>-xxxxx
    (gpu,) = [n for name, n in nodes.items() if name.startswith("node-2-")]
    assert gpu.allocatable["example.com/gpu"] == 4 and gpu.allocatable["cpu"] == 4000
    # createNamespaces from a template, createAny of a Service and of pods named by index
    assert sched.namespaces["team-0"].labels["team"] == "devops" and "team-1" in sched.namespaces
    assert [o["metadata"]["namespace"] for o in sched.objects("Service")] == ["team-0"]
    indexed = sorted(p.name for p in sched.pods_in_namespace("team-0"))
    assert indexed == ["indexed-0", "indexed-1", "indexed-2"]
    # barrier waited for team-1's pods; deletePods removed them (label selector app=web)
    assert sched.pods_in_namespace("team-1") == []
    # churn created its 3 pods in namespace-8 during the 1 s sleep; generateName honoured
    churn = sched.pods_in_namespace("namespace-8")
    assert len(churn) == 3 and all(p.name.startswith("pod-") and len(p.name) == 9 for p in churn)
    # the measured pods, every pod placed on a node of the cluster
    assert len(sched.pods_in_namespace("namespace-13")) == 20
    assert all(p.node_name in nodes for p in sched.pods.values())
    assert r.pods_scheduled == len(sched.pods) + 4                               # + the 4 deleted
    assert r.phases[0].pods_scheduled == 20 and r.phases[0].name == "measured"
    # gates: applied where modelled, a warning naming the others
    assert any("SomeFutureGate=true is not modelled" in w for w in r.warnings)
    assert not any("NodeInclusionPolicy" in w for w in r.warnings)
    assert r.virtual_seconds >= 1.0 > r.seconds * 0 and [t["opcode"] for t in r.timeline][9] == "sleep"


def test_data_items_have_upstreams_shape(perf_dir, tmp_path):
    path = perf_dir(ALL_OPS.replace("measurePods: 20", "measurePods: 3000").replace("nodes: 3", "nodes: 100"),
                    **TEMPLATES)
    report = run_perf(load_perf_config(path))
    out = write_data_items(report, tmp_path / "items.json")
    data = json.loads(out.read_text())
    assert data["version"] == "v1"
    items = data["dataItems"]
    metrics = {i["labels"]["Metric"] for i in items}
    assert {"scheduler_scheduling_attempt_duration_seconds", "scheduler_pod_scheduling_duration_seconds",
            "scheduler_framework_extension_point_duration_seconds"} <= metrics
    labels = set(items[0]["labels"])
    for item in items:
        assert set(item) == {"data", "unit", "labels"} and set(item["labels"]) == labels  # "not applicable" filled
        assert item["labels"]["Name"] == "AllOps/small/measured"
        if item["data"] is None:  # too short for two throughput samples: upstream's item without data
            assert item["unit"] == "" and item["labels"]["Metric"] == "not applicable"
        elif item["labels"]["Metric"] == "SchedulingThroughput":
            assert item["unit"] == "pods/s" and set(item["data"]) >= {"Average", "Perc50", "Perc90", "Perc99"}
        else:
            assert item["unit"] == "ms" and "Average" in item["data"]
    attempt = next(i for i in items if i["labels"]["Metric"] == "scheduler_scheduling_attempt_duration_seconds")
    assert set(attempt["data"]) == {"Average", "Perc50", "Perc90", "Perc95", "Perc99"}
    r = report.results[0]
    assert r.status == "passed" and not r.threshold_errors
    if r.measured is None:  # no kept sample: upstream's warning, and no threshold check
        assert r.no_throughput_sample and any(w.startswith("Failed to measure SchedulingThroughput") for w in r.warnings)
    else:
        assert r.ratio > 1 and r.phases[0].throughput_samples > 0


STEADY = """\
- name: Steady
  defaultPodTemplatePath: ../templates/pod.yaml
  workloadTemplate:
  - opcode: createNodes
    count: 2
  - opcode: createPods
    count: 3
    podTemplatePath: ../templates/gated.yaml
    skipWaitToCompletion: true
  - opcode: barrier
    stageRequirement: Attempted
  - opcode: createPods
    count: 4
    podTemplatePath: ../templates/finalizer.yaml
    skipWaitToCompletion: true
  - opcode: deletePods
    namespace: namespace-3
    deletePodsPerSecond: 8
  - opcode: createPods
    count: 5
    steadyState: true
    durationParam: $duration
    collectMetrics: true
  workloads:
  - name: w
    params: {duration: 2s}
"""


def test_gated_barrier_finalizers_rate_limited_deletes_and_steady_state(perf_dir):
    path = perf_dir(STEADY, pod__yaml=POD, gated__yaml="""\
        apiVersion: v1
        kind: Pod
        metadata: {generateName: gated-pod-}
        spec:
          schedulingGates: [{name: test.k8s.io/hold}]
          containers: [{name: pause, image: pause}]
        """, finalizer__yaml="""\
        apiVersion: v1
        kind: Pod
        metadata: {generateName: pod-, finalizers: [test.k8s.io/finalizer]}
        spec:
          containers: [{name: pause, image: pause}]
        """)
    r = run_workload(load_perf_config(path), "Steady", "w", keep_scheduler=True)
    assert r.status == "passed", r.reason
    sched = r.scheduler
    # gated pods count as attempted (the barrier passed) and stay unscheduled
    assert all(not p.node_name for p in sched.pods_in_namespace("namespace-1"))
    # pods with finalizers are marked deleted (deletionTimestamp), not removed; 4 at 8/s took 0.5 s
    deleted = sched.pods_in_namespace("namespace-3")
    assert len(deleted) == 4 and all(p.deletion_timestamp is not None for p in deleted)
    deletes = next(t for t in r.timeline if t["opcode"] == "deletePods")
    assert deletes["virtual_seconds"] >= 0.5
    # steady state: every bound pod deleted and replaced during 2 s; 5 pods remain queued or bound
    steady = next(t for t in r.timeline if t["namespace"] is None and t["opcode"] == "createPods" and t["op"] == 5)
    assert steady["virtual_seconds"] >= 2.0
    assert r.phases[0].pods_scheduled > 5 and len(sched.pods_in_namespace("namespace-5")) == 5


def test_thresholds_and_metric_selectors(perf_dir, monkeypatch):
    import itertools
    import time

    # a fake CPU clock, 0.02 s per reading, run with cpu_time: the measured phase lasts seconds of
    # the run's clock, so SchedulingThroughput has samples to check the threshold against
    readings = itertools.count()
    monkeypatch.setattr(time, "process_time", lambda: next(readings) * 0.02)
    config = ALL_OPS.replace("threshold: 1\n", "threshold: 100000000\n").replace("measurePods: 20", "measurePods: 2000")
    config = config.replace("nodes: 3,", "nodes: 60,") + """\
  - name: latency
    threshold: 0.000001
    thresholdMetricSelector: {name: scheduler_scheduling_attempt_duration_seconds, dataBucket: Perc50, expectLower: true}
    params: {nodes: 30, named: 3, pause: 0s, measurePods: 20}
"""
    report = run_perf(load_perf_config(perf_dir(config, **TEMPLATES)), label_filter="", cpu_time=True)
    high, latency = report.results
    assert high.status == "below-threshold" and high.ratio < 1 and high.threshold_errors
    assert high.phases[0].throughput_samples > 0
    assert latency.status == "below-threshold" and "to be lower" in latency.threshold_errors[0]
    item = next(i for i in latency.data_items if i.labels.get("Metric") == latency.selector.name)
    assert item.data["Perc50Threshold"] == 0.000001 and latency.measured == item.data["Perc50"]


def test_feature_gates_change_placements(perf_dir):
    """SchedulingWithNodeInclusionPolicy's template (NodeTaintsPolicy: Honor, a capitalised key upstream's
    decoder reads): honoured, tainted nodes are left out of the spread; with the gate off they count as
    empty domains and maxSkew 1 stops the pods after one per untainted node."""
    config = (UPSTREAM / "topology_spreading" / "performance-config.yaml").read_text()
    path = perf_dir(config.replace("taintNodes: 1\n      normalNodes: 4\n      measurePods: 4",
                                   "taintNodes: 1\n      normalNodes: 2\n      measurePods: 4"))
    for name in ("node-with-taint.yaml", "pod-with-node-inclusion-policy.yaml"):
        (path.parent.parent / "templates" / name).write_text((UPSTREAM / "templates" / name).read_text())
    config = load_perf_config(path)
    on = run_workload(config, "SchedulingWithNodeInclusionPolicy", "5Nodes", keep_scheduler=True)
    assert on.status == "passed" and on.pods_scheduled == 4
    assert any("NodeTaintsPolicy" in w and "case-insensitively" in w for w in on.warnings)
    tc = config.test_case("SchedulingWithNodeInclusionPolicy")
    tc.feature_gates["NodeInclusionPolicyInPodTopologySpread"] = False
    off = run_workload(config, tc, "5Nodes", keep_scheduler=True)
    assert off.status == "failed" and off.pods_scheduled == 2 and "2 of 4 scheduled" in off.reason


@pytest.mark.parametrize("extra, reason", [
    # (the DRA ops run since issue 16: tests/dra/test_perf_workloads.py; createPodGroups since issue 30:
    # tests/perf/test_podgroup_configs.py)
    ("  - opcode: startCollectingProfile\n", "Go profiling"),
    # (createPods with PersistentVolume templates runs since issue 15: tests/volumes/test_perf_volumes.py)
    ("  - opcode: createAny\n    templatePath: ../templates/sc.yaml\n", "ConfigMap objects"),
])
def test_not_modelled_ops_skip_the_workload_with_the_reason(perf_dir, extra, reason):
    config = ALL_OPS.replace("  - opcode: startCollectingMetrics", extra + "  - opcode: startCollectingMetrics")
    path = perf_dir(config, sc__yaml="apiVersion: v1\nkind: ConfigMap\nmetadata: {name: s}\n"
                    "data: {x: y}\n", **TEMPLATES)
    r = run_perf(load_perf_config(path)).results[0]
    assert r.status == "skipped" and reason in r.reason and r.pods_created == 0


def test_errors_in_templates_and_params_fail_the_workload_with_a_path(perf_dir):
    path = perf_dir(ALL_OPS.replace("../templates/ns.yaml", "../templates/absent.yaml"), **TEMPLATES)
    r = run_perf(load_perf_config(path)).results[0]
    assert r.status == "failed"
    assert "op 3 (createNamespaces): " in r.reason and "[0].workloadTemplate[3].namespaceTemplatePath: template " \
        "file not found: ../templates/absent.yaml" in r.reason
    bad = dict(TEMPLATES, named_pod__yaml="metadata: {name: x-{{ .Index }\n")
    r = run_perf(load_perf_config(perf_dir(ALL_OPS, **bad))).results[0]
    assert r.status == "failed" and "named-pod.yaml" in r.reason
    bad = dict(TEMPLATES, web_pod__yaml=TEMPLATES["web_pod__yaml"].replace("containers:", "containerz:"))
    r = run_perf(load_perf_config(perf_dir(ALL_OPS, **bad))).results[0]
    assert r.status == "failed" and 'strict decoding error: unknown field "spec.containerz"' in r.reason
    r = run_perf(load_perf_config(perf_dir(ALL_OPS.replace("measurePods: 20}", "measurePods: 20, typo: 1}"),
                                           **TEMPLATES))).results[0]
    assert r.status == "failed" and "the parameters ['typo'] are defined on workload small, but unused" in r.reason


# -- pods whose rendered manifests differ only in their name share one parse ---------------------
_NAMED_TEMPLATE = """\
apiVersion: v1
kind: Pod
metadata:
  name: {name}
  labels:
    app: {app}
spec:
  containers:
  - image: registry.k8s.io/pause:3.10.1
    name: pause
    resources:
      requests:
        cpu: 100m
"""


@pytest.mark.parametrize("names, apps, parses", [
    (["p-0", "p-1", "p-2", "p-3"], ["a"] * 4, 1),                   # only the name differs: one parse
    (["p-0", "p-1", "p-2", "p-3"], ["a", "a", "b", "b"], 2),        # and a label: one parse per label
    (["p-0", "123", "true", "p-3"], ["a"] * 4, 3),                  # YAML reads 123 and true otherwise
    (["p-0", "y", "1e3", "0o17", "p-4"], ["a"] * 5, 4),            # go-yaml's bool, float and int: their text
    (["p-0", "P-1", "p_2", "p-3.x"], ["a"] * 4, 3),                 # not DNS subdomains: parsed (and refused)
])
def test_rendered_pods_that_differ_only_in_name_share_a_parse(tmp_path, names, apps, parses):
    """``_pod_factory``: a rendered text whose only difference from one parsed before is a plain
    ``metadata.name`` that YAML reads as a string and the API server accepts as it is takes that
    parse's factory and its own name; anything else is parsed (and refused as before)."""
    import yaml

    from fastsched.api import ManifestError, Pod
    from fastsched.api.schema import typed_yaml
    from fastsched.perf.errors import WorkloadError
    from fastsched.perf.runner import _Executor
    from fastsched.util.goyaml import GoYAMLTypedLoader

    config_path = tmp_path / "config.yaml"
    config_path.write_text("- name: T\n  workloadTemplate: [{opcode: createPods, count: 1, collectMetrics: true,"
                           " podTemplatePath: pod.yaml}]\n  workloads: [{name: w}]\n")
    (tmp_path / "pod.yaml").write_text("{{.body}}")
    config = load_perf_config(config_path)
    tc = config.test_case("T")
    r = _Executor(config, tc, tc.workloads[0], topic=None, seed=0, progress=None, scheduler_config=None,
                  registry=None, prebind_init=False, keep_scheduler=False)
    parsed_docs = []
    original = r._document
    r._document = lambda text, path, what, kind=None: parsed_docs.append(text) or original(text, path, what, kind)
    got = []
    for name, app in zip(names, apps):
        try:
            factory, _, own = r._pod_factory("pod.yaml", "op", {"body": _NAMED_TEMPLATE.format(name=name, app=app)})
        except WorkloadError as exc:
            got.append(("error", str(exc)))
            continue
        pod = factory.make(own or factory.template.name, "default")
        got.append((pod.name, pod.labels, pod.requests))
    assert len(parsed_docs) == parses
    for (name, app), g in zip(zip(names, apps), got):
        # as upstream's typed yaml.UnmarshalStrict reads it (a name y is "true", 1e3 "1000")
        manifest = typed_yaml(yaml.load(_NAMED_TEMPLATE.format(name=name, app=app), Loader=GoYAMLTypedLoader), "Pod")
        if g[0] == "error":  # refused as the pod's own manifest is
            with pytest.raises(ManifestError):
                Pod.from_manifest(manifest)
            continue
        alone = Pod.from_manifest(manifest)
        assert g == (alone.name, alone.labels, alone.requests)


def test_a_wrong_typed_field_in_a_rendered_pod_is_the_ops_error(tmp_path):
    """A rendered manifest with a field of the wrong type (``name: [123]``) fails the workload
    with the op, the template and the field, not a traceback."""
    (tmp_path / "config.yaml").write_text(
        "- name: T\n  workloadTemplate: [{opcode: createPods, count: 1, collectMetrics: true,"
        " podTemplatePath: pod.yaml}]\n  workloads: [{name: w}]\n")
    (tmp_path / "pod.yaml").write_text(_NAMED_TEMPLATE.format(name="[123]", app="a"))
    r = run_workload(load_perf_config(tmp_path / "config.yaml"), "T", "w")
    assert r.status == "failed"
    assert "pod.yaml: metadata.name: json: cannot unmarshal array into Go struct field " \
           "ObjectMeta.metadata.name of type string" in r.reason, r.reason


@pytest.mark.parametrize("head, message", [
    ("apiVersion: 5\nkind: Pod", "apiVersion: json: cannot unmarshal number into Go struct field "
                                  "Pod.TypeMeta.apiVersion of type string"),
    ("apiVersion: v1\nkind: [1]", "kind: json: cannot unmarshal array into Go struct field Pod.TypeMeta.kind of "
                                   "type string"),
    ("apiVersion: v1\nkind: Node", "expected a Pod, got kind 'Node'"),
])
def test_a_templates_apiversion_or_kind_of_another_type_is_refused_at_typemeta(tmp_path, head, message):
    """UnmarshalStrict into the op's type (sigs.k8s.io/yaml, encoding/json) names the embedded
    TypeMeta in the field of the error (Go 1.26's text, checked on these templates)."""
    (tmp_path / "config.yaml").write_text(
        "- name: T\n  workloadTemplate: [{opcode: createPods, count: 1, collectMetrics: true,"
        " podTemplatePath: pod.yaml}]\n  workloads: [{name: w}]\n")
    (tmp_path / "pod.yaml").write_text(head + "\nmetadata: {name: p}\nspec: {containers: [{name: c, image: i}]}\n")
    r = run_workload(load_perf_config(tmp_path / "config.yaml"), "T", "w")
    assert r.status == "failed"
    assert r.reason.endswith(f"pod.yaml: {message}"), r.reason


def test_numbers_and_bools_in_a_templates_string_fields_are_their_text(tmp_path):
    """Upstream decodes a rendered template with sigs.k8s.io/yaml's typed UnmarshalStrict, which
    turns a number or bool in a string field into its text (Go's formatting: floats with float32
    digits), resolving scalars as go-yaml v2; elsewhere they stay numbers (a priority), and the
    fields of an embedded struct (a volume's hostPath) are not converted."""
    (tmp_path / "config.yaml").write_text(
        "- name: T\n  workloadTemplate: [{opcode: createNodes, count: 1}, {opcode: createPods, count: 2,"
        " collectMetrics: true, podTemplatePath: pod.yaml}]\n  workloads: [{name: w}]\n")
    (tmp_path / "pod.yaml").write_text(
        "apiVersion: v1\nkind: Pod\nmetadata:\n  generateName: 0o17\n  labels: {a: yes, b: 0o17, d: 0.1, e: y,"
        " h: 08}\n  annotations: {c: 1e7, f: 1:20, g: 123456789.0, z: .inf}\n"
        "spec:\n  priority: 1e3\n  containers:\n  - name: 1e3\n    image: Off\n")
    r = run_workload(load_perf_config(tmp_path / "config.yaml"), "T", "w", keep_scheduler=True)
    assert r.status == "passed", r.reason
    pods = list(r.scheduler.cluster.pods.values())
    assert len(pods) == 2 and all(p.node_name for p in pods)
    for pod in pods:
        assert pod.labels == {"a": "true", "b": "15", "d": "0.1", "e": "true", "h": "8"}
        assert pod.annotations == {"c": "1e+07", "f": "1:20", "g": "1.2345679e+08", "z": "+Inf"}
        assert pod.name.startswith("15") and pod.priority == 1000
        assert [(c.name, c.image) for c in pod.containers] == [("1000", "false")]
    (tmp_path / "pod.yaml").write_text(
        "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers: [{name: c, image: i}]\n"
        "  volumes: [{name: v, hostPath: {path: 123}}]\n")
    r = run_workload(load_perf_config(tmp_path / "config.yaml"), "T", "w")
    assert r.status == "failed" and "spec.volumes[0].hostPath.path: json: cannot unmarshal number" in r.reason, \
        r.reason
    (tmp_path / "pod.yaml").write_text(
        "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  priority: .nan\n  containers: [{name: c}]\n")
    r = run_workload(load_perf_config(tmp_path / "config.yaml"), "T", "w")
    assert r.status == "failed" and "pod.yaml: invalid YAML after rendering: line 5: json: unsupported value: NaN" \
        in r.reason, r.reason
    (tmp_path / "pod.yaml").write_text(
        "apiVersion: v1\nkind: Pod\nmetadata: {name: p, labels: {a: x}, labels: {b: y}}\nspec:\n"
        "  containers: [{name: c, image: i}]\n")
    r = run_workload(load_perf_config(tmp_path / "config.yaml"), "T", "w")
    assert r.status == "failed" and 'invalid YAML after rendering: line 3: key "labels" already set in map' \
        in r.reason, r.reason


def test_the_name_line_is_looked_for_in_a_templates_first_renderings_only(tmp_path, monkeypatch):
    """Finding where ``metadata.name`` is costs a second parse of the text: done for a template's
    first renderings, not for every pod of a template whose names cannot be shared (quoted here)."""
    from fastsched.perf import ops as ops_module
    from fastsched.perf.runner import _Executor

    (tmp_path / "config.yaml").write_text(
        "- name: T\n  workloadTemplate: [{opcode: createPods, count: 1, collectMetrics: true,"
        " podTemplatePath: pod.yaml}]\n  workloads: [{name: w}]\n")
    (tmp_path / "pod.yaml").write_text("{{.body}}")
    config = load_perf_config(tmp_path / "config.yaml")
    tc = config.test_case("T")
    r = _Executor(config, tc, tc.workloads[0], topic=None, seed=0, progress=None, scheduler_config=None,
                  registry=None, prebind_init=False, keep_scheduler=False)
    looked = []
    real = ops_module._name_line
    monkeypatch.setattr(ops_module, "_name_line", lambda text: looked.append(text) or real(text))
    names = []
    for i in range(6):
        factory, _, own = r._pod_factory("pod.yaml", "op", {"body": _NAMED_TEMPLATE.format(name=f'"p-{i}"', app="a")})
        names.append(own or factory.template.name)
    assert names == [f"p-{i}" for i in range(6)]
    assert len(looked) == 3


@pytest.mark.parametrize("cpu_time", [True, False])
def test_bound_pods_share_a_cpu_clock_reading_only_briefly_and_within_the_step(tmp_path, cpu_time):
    """``_bound_work``: with the CPU work clock, a pod bound less than BOUND_CLOCK_REUSE of wall
    time after the last reading takes it; later, or in a later step, the clock is read again; with
    the wall work clock, every pod reads it."""
    from fastsched.perf import runner as runner_module
    from fastsched.perf.runner import BOUND_CLOCK_REUSE, _Executor

    (tmp_path / "config.yaml").write_text(
        "- name: T\n  workloadTemplate: [{opcode: createPods, count: 1, collectMetrics: true}]\n"
        "  workloads: [{name: w}]\n")
    config = load_perf_config(tmp_path / "config.yaml")
    tc = config.test_case("T")
    r = _Executor(config, tc, tc.workloads[0], topic=None, seed=0, progress=None, scheduler_config=None,
                  registry=None, prebind_init=False, keep_scheduler=False, cpu_time=cpu_time)
    wall, work, reads = [0.0], [10.0], []

    def work_clock():
        reads.append(work[0])
        return work[0]

    r.work_clock, r.wall_clock = work_clock, lambda: wall[0]
    r.step_wall = 10.0
    got = []
    for dt_wall, dt_work in [(0, 0), (BOUND_CLOCK_REUSE / 2, 1e-6), (BOUND_CLOCK_REUSE / 4, 1e-6),
                             (BOUND_CLOCK_REUSE, 1e-5), (0, 1e-6)]:
        wall[0] += dt_wall
        work[0] += dt_work
        got.append(r._bound_work())
    if cpu_time:
        assert got == pytest.approx([10.0, 10.0, 10.0, 10.0 + 1.2e-5, 10.0 + 1.2e-5], abs=1e-9) and len(reads) == 2
        r.step_wall = work[0] + 1.0  # a later step: no reading from before it
        work[0] = r.step_wall
        assert r._bound_work() == r.step_wall and len(reads) == 3
    else:
        assert got == pytest.approx([10.0, 10.0 + 1e-6, 10.0 + 2e-6, 10.0 + 1.2e-5, 10.0 + 1.3e-5], abs=1e-9)
        assert len(reads) == 5
    assert runner_module.BOUND_CLOCK_REUSE <= 1e-4  # bind times early by at most 0.1 ms of CPU


def test_the_waits_defer_full_collections_and_run_their_own_every_so_many_attempts(perf_dir, monkeypatch):
    """A wait (createPods' and a steady state's) runs with the collector's old-generation passes
    deferred, also around the runner's own work between the scheduler's calls (the steady state's
    replacement pods), and runs a full collection every FULL_COLLECTION_EVERY attempts instead;
    the thresholds come back after the wait."""
    import gc

    from fastsched.perf import runner as runner_module
    from fastsched.perf.runner import _Executor

    path = perf_dir("""\
        - name: G
          defaultPodTemplatePath: ../templates/pod.yaml
          workloadTemplate:
          - opcode: createNodes
            count: 2
          - opcode: createPods
            count: 6
          - opcode: createPods
            count: 3
            steadyState: true
            duration: 200ms
            collectMetrics: true
          workloads:
          - name: w
        """, pod__yaml=POD)
    monkeypatch.setattr(runner_module, "FULL_COLLECTION_EVERY", 5)
    saved = gc.get_threshold()
    gc.set_threshold(700, 10, 10)
    replacing, full = [], []
    real_replace = _Executor._steady_replace

    def steady_replace(self):
        replacing.append(gc.get_threshold()[2])
        return real_replace(self)

    def during(phase, info):
        if phase == "start" and info["generation"] == 2:
            full.append(gc.get_threshold()[2])

    monkeypatch.setattr(_Executor, "_steady_replace", steady_replace)
    gc.callbacks.append(during)
    try:
        r = run_workload(load_perf_config(path), "G", "w")
        after = gc.get_threshold()
    finally:
        gc.callbacks.remove(during)
        gc.set_threshold(*saved)
    assert r.status == "passed", r.reason
    assert after == (700, 10, 10)
    assert replacing and all(t > 10 ** 6 for t in replacing)
    attempts = r.phases[0].pods_scheduled + 6
    assert sum(1 for t in full if t > 10 ** 6) >= attempts // 5 - 1


@pytest.mark.parametrize("field", ["podTemplatePath", "nodeTemplatePath"])
def test_a_template_that_fails_to_execute_fails_the_workload(tmp_path, field):
    """A template whose execution fails (a function of a parameter the op does not give, as
    gang-pod.yaml's DivideInt without its parameters) fails the workload with the template's
    error; it escaped run_workload as a TemplateError when createPods or createNodes rendered it."""
    (tmp_path / "bad.yaml").write_text("apiVersion: v1\nkind: Pod\nmetadata:\n  name: p-{{DivideInt .Missing 2}}\n")
    ops = {"podTemplatePath": "[{opcode: createNodes, count: 1}, {opcode: createPods, count: 2, collectMetrics: true,"
                              " podTemplatePath: bad.yaml}]",
           "nodeTemplatePath": "[{opcode: createNodes, count: 1, nodeTemplatePath: bad.yaml}, {opcode: createPods,"
                               " count: 2, collectMetrics: true}]"}[field]
    (tmp_path / "config.yaml").write_text(f"- name: T\n  workloadTemplate: {ops}\n  workloads: [{{name: w}}]\n")
    r = run_workload(load_perf_config(tmp_path / "config.yaml"), "T", "w")
    assert r.status == "failed"
    assert f"{field}: template: bad.yaml:4:" in r.reason and "error calling DivideInt" in r.reason, r.reason


@pytest.mark.parametrize("depth", [400, 900])
def test_a_template_nested_hundreds_of_levels_deep_fails_the_workload_at_its_field(tmp_path, depth):
    """go-yaml reads a document nested a few hundred levels deep; the index plan's walk and the
    typed conversion recursed once per level and raised RecursionError out of run_workload. The
    workload now fails with the decoder's error at the field (an overhead that is no quantity)."""
    (tmp_path / "pod.yaml").write_text(
        "apiVersion: v1\nkind: Pod\nmetadata: {generateName: p-}\nspec:\n  containers: [{name: c, image: i}]\n"
        "  overhead: {x: " + "[" * depth + "]" * depth + "}\n")
    (tmp_path / "config.yaml").write_text(
        "- name: T\n  workloadTemplate: [{opcode: createNodes, count: 1}, {opcode: createPods, count: 2,"
        " collectMetrics: true, podTemplatePath: pod.yaml}]\n  workloads: [{name: w}]\n")
    r = run_workload(load_perf_config(tmp_path / "config.yaml"), "T", "w", wait_timeout=5)
    assert r.status == "failed"
    assert "pod.yaml: spec.overhead.x: quantities must match the regular expression" in r.reason, r.reason
