"""What a topic's test file adds (fastsched.perf.topics): nodedeclaredfeatures' node update."""
import textwrap

from fastsched.perf import load_perf_config, run_workload

CONFIG = """\
- name: NodeDeclaredFeaturesEnabled
  defaultPodTemplatePath: templates/pod.yaml
  workloadTemplate:
    - opcode: createNodes
      countParam: $nodes
    - opcode: createPods
      namespace: test
      countParam: $measurePods
      collectMetrics: true
  workloads:
    - name: enabled
      featureGates:
        NodeDeclaredFeatures: true
      params: {nodes: 3, measurePods: 4, numNodeDeclaredFeatures: 11}
    - name: gate-not-set
      params: {nodes: 3, measurePods: 4, numNodeDeclaredFeatures: 11}
"""
POD = """\
apiVersion: v1
kind: Pod
metadata:
  generateName: pod-
spec:
  resources:
    requests: {cpu: 100m, memory: 200Mi}
  containers:
  - name: container-a
    image: registry.k8s.io/pause:3.10.1
"""


def _config(tmp_path, folder):
    topic = tmp_path / folder
    (topic / "templates").mkdir(parents=True)
    (topic / "templates" / "pod.yaml").write_text(POD)
    (topic / "performance-config.yaml").write_text(textwrap.dedent(CONFIG))
    return load_perf_config(topic / "performance-config.yaml")


def test_node_declared_features_topic_declares_mock_features_on_every_node(tmp_path):
    """node_declared_features_test.go: after createNodes every node declares Feature1..N (sorted as
    strings); the scheduler's registry is not the mocks (upstream's DefaultFramework is built before
    the test swaps AllFeatures), so the pod-level-resources pods need nothing and all schedule."""
    r = run_workload(_config(tmp_path, "nodedeclaredfeatures"), "NodeDeclaredFeaturesEnabled", "enabled",
                     keep_scheduler=True)
    assert r.status == "passed", r.reason
    want = ("Feature1", "Feature10", "Feature11", *(f"Feature{i}" for i in range(2, 10)))
    assert [tuple(n.declared_features) for n in r.scheduler.nodes()] == [want] * 3
    assert r.pods_scheduled == 4


def test_the_parameter_is_read_only_with_the_workloads_gate_and_only_in_that_topic(tmp_path):
    r = run_workload(_config(tmp_path, "nodedeclaredfeatures"), "NodeDeclaredFeaturesEnabled", "gate-not-set")
    assert r.status == "failed" and "['numNodeDeclaredFeatures'] are defined on workload gate-not-set, but unused" \
        in r.reason
    r = run_workload(_config(tmp_path, "other"), "NodeDeclaredFeaturesEnabled", "enabled", keep_scheduler=True)
    assert r.status == "failed" and "['numNodeDeclaredFeatures'] are defined on workload enabled, but unused" in r.reason
