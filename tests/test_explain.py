"""explain(): every plugin's verdict on every node, and the scores behind the decision."""
from fastsched import explain, load_config
from fastsched.framework import Code
from fastsched.scheduler import Scheduler
from fastsched.testing import node_manifest, pod_manifest

NODES = [
    node_manifest("small", cpu="1", labels={"disktype": "ssd"}),
    node_manifest("tainted", cpu="8", taints=[{"key": "dedicated", "value": "gpu", "effect": "NoSchedule"}]),
    node_manifest("big-hdd", cpu="8", labels={"disktype": "hdd"}),
    node_manifest("big-ssd", cpu="8", labels={"disktype": "ssd"}),
]
POD = pod_manifest("web", cpu="2", affinity={"nodeAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
    {"weight": 10, "preference": {"matchExpressions": [{"key": "disktype", "operator": "In", "values": ["ssd"]}]}}]}})


def test_every_filter_on_every_node():
    e = explain(POD, NODES)
    assert e.node_names == ["small", "tainted", "big-hdd", "big-ssd"]
    # each plugin's own verdict, even after another plugin already rejected the node
    small = e.filter["small"]
    # 2 cpus asked of a 1-cpu node: preemption could not help either
    assert small["NodeResourcesFit"].code() == Code.UNSCHEDULABLE_AND_UNRESOLVABLE
    assert small["NodeResourcesFit"].reasons() == ["Insufficient cpu"]
    assert small["TaintToleration"] is None and small["NodeName"] is None
    tainted = e.filter["tainted"]
    assert tainted["TaintToleration"].code() == Code.UNSCHEDULABLE_AND_UNRESOLVABLE
    assert tainted["TaintToleration"].message() == "node(s) had untolerated taint {dedicated: gpu}"
    assert tainted["NodeResourcesFit"] is None
    # NodePorts and NodeAffinity skipped at PreFilter (no host ports, no required affinity):
    # their Filter does not run, so they have no verdict anywhere
    assert "NodePorts" not in small and e.prefilter["NodePorts"].code() == Code.SKIP
    assert "NodeAffinity" not in small and e.prefilter["NodeAffinity"].code() == Code.SKIP
    assert e.feasible == ["big-hdd", "big-ssd"]


def test_scores_over_feasible_nodes_and_best_nodes():
    e = explain(POD, NODES)
    na = e.scores["NodeAffinity"]
    assert set(na) == {"big-hdd", "big-ssd"}
    assert (na["big-ssd"].raw, na["big-ssd"].normalized, na["big-ssd"].weighted) == (10, 100, 200)
    assert (na["big-hdd"].raw, na["big-hdd"].normalized, na["big-hdd"].weighted) == (0, 0, 0)
    for node in e.feasible:
        assert e.total[node] == sum(per_node[node].weighted for per_node in e.scores.values())
    assert e.best_nodes == ["big-ssd"]
    assert e.prescore["TaintToleration"] is None
    rows = e.table()
    assert rows[3]["node"] == "big-ssd" and rows[3]["total"] == e.total["big-ssd"]
    assert rows[0]["filter:NodeResourcesFit"] == "UnschedulableAndUnresolvable: Insufficient cpu"


def test_best_nodes_agree_with_the_scheduler():
    cfg = load_config({"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
                       "percentageOfNodesToScore": 100})
    s = Scheduler(cfg, seed=3)
    s.add_nodes(NODES)
    e = s.explain(POD)
    s.add_pod(POD)
    (r,) = s.run()
    assert r.node_name in e.best_nodes


def test_pod_rejected_at_prefilter_says_so():
    pod = pod_manifest("pinned", affinity={"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
        "nodeSelectorTerms": [{"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["a"]}]},
                              ]}}})
    pod["spec"]["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"][0][
        "matchFields"].append({"key": "metadata.name", "operator": "In", "values": ["b"]})
    e = explain(pod, NODES)
    assert e.prefilter_status.code() == Code.UNSCHEDULABLE_AND_UNRESOLVABLE
    assert e.prefilter_status.message() == "pod affinity terms conflict"
    assert e.prefilter["NodeAffinity"].plugin() == "NodeAffinity"
    assert e.best_nodes == [] and e.total == {}


def test_existing_pods_and_yaml_inputs():
    import yaml

    nodes_yaml = yaml.safe_dump_all(NODES)
    running = [pod_manifest("hog", cpu="7", node_name="big-ssd")]
    e = explain(yaml.safe_dump(POD), nodes_yaml, existing_pods=running)
    hog = e.filter["big-ssd"]["NodeResourcesFit"]
    assert hog.code() == Code.UNSCHEDULABLE and hog.reasons() == ["Insufficient cpu"]
    assert e.best_nodes == ["big-hdd"]


def test_registry_and_profile_arguments():
    from fastsched.framework import FilterPlugin, Status
    from fastsched.runtime import Registry

    class NoHdd(FilterPlugin):
        def name(self):
            return "NoHdd"

        def filter(self, state, pod, node_info):
            if node_info.node().labels.get("disktype") == "hdd":
                return Status(Code.UNSCHEDULABLE, "hdd is too slow")
            return None

    cfg = """
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
  - schedulerName: picky
    plugins:
      filter: {enabled: [{name: NoHdd}]}
"""
    e = explain(POD, NODES, config=cfg, registry=Registry({"NoHdd": lambda a, h: NoHdd()}), profile="picky")
    assert e.filter["big-hdd"]["NoHdd"].message() == "hdd is too slow"
    assert e.best_nodes == ["big-ssd"] and e.profile == "picky"
