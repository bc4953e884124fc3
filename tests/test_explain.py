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
    assert tainted["TaintToleration"].message() == "node(s) had untolerated taint(s)"
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


# -- explain and run on seeded random clusters, with extenders ------------------------------------
import random  # noqa: E402

import pytest  # noqa: E402

from fastsched.config import ConfigError  # noqa: E402
from fastsched.extender.testing import ReferenceExtender  # noqa: E402

FPGA = "example.com/fpga"
#: scores that do not depend on which other nodes are scored (raw, before normalization), so the
#: sampled path's raw scores can be compared with explain's over every node
PER_NODE_RAW = ("NodeResourcesFit", "NodeResourcesBalancedAllocation", "TaintToleration", "NodeAffinity")


def random_cluster(rng: random.Random, n_nodes: int):
    nodes = []
    for i in range(n_nodes):
        taints = ([{"key": "spot", "value": "yes", "effect": "PreferNoSchedule"}] if rng.random() < 0.3 else [])
        nodes.append(node_manifest(f"node-{i:03d}", cpu=str(rng.choice([2, 4, 8])), memory=f"{rng.choice([4, 8, 16])}Gi",
                                   labels={"zone": rng.choice("abc"), "disk": rng.choice(["ssd", "hdd"])},
                                   taints=taints))
    return nodes


def random_pod(rng: random.Random, i: int) -> dict:
    # half the pods ask for the extender-managed FPGA no node advertises: only ignoredByScheduler
    # lets them fit, in run() and in explain alike
    requests = {"cpu": f"{rng.choice([100, 500, 1000, 2000])}m", "memory": f"{rng.choice([128, 512, 2048])}Mi"}
    if rng.random() < 0.5:
        requests[FPGA] = "1"
    spec: dict = {}
    if rng.random() < 0.5:
        spec["affinity"] = {"nodeAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
            {"weight": rng.randint(1, 100), "preference": {"matchExpressions": [
                {"key": "disk", "operator": "In", "values": [rng.choice(["ssd", "hdd"])]}]}}]}}
    if rng.random() < 0.3:
        spec["tolerations"] = [{"key": "spot", "operator": "Exists", "effect": "PreferNoSchedule"}]
    return pod_manifest(f"pod-{i}", requests=requests, **spec)


def extender_config(url: str, percentage: int | None) -> dict:
    cfg = {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
           "extenders": [{"urlPrefix": url, "filterVerb": "filter", "prioritizeVerb": "prioritize", "weight": 2,
                          "managedResources": [{"name": FPGA, "ignoredByScheduler": True}]}]}
    if percentage is not None:
        cfg["percentageOfNodesToScore"] = percentage
    return cfg


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_explain_equals_run_with_extenders_on_random_clusters(seed):
    """Every node scored: run() binds each pod to one of the nodes explain calls best, or leaves it
    unschedulable exactly when explain finds no feasible node; fastsched.explain on the same
    cluster gives the Scheduler's own explain, verdict for verdict and score for score."""
    rng = random.Random(seed)
    nodes = random_cluster(rng, 30)
    rejects = {n["metadata"]["name"]: "no fpga cable" for n in rng.sample(nodes, 6)}
    scores = {n["metadata"]["name"]: rng.randint(1, 10) for n in rng.sample(nodes, 10)}
    with ReferenceExtender(filter_reject=rejects, prioritize_scores=scores) as ext:
        cfg = extender_config(ext.url, 100)
        s = Scheduler(cfg, seed=seed)
        s.add_nodes(nodes)
        bound: list[dict] = []
        outcomes = set()
        for i in range(12):
            pod = random_pod(rng, i)
            e = s.explain(pod)
            alone = explain(pod, nodes, existing_pods=bound, config=cfg)
            assert alone.filter == e.filter and alone.total == e.total and alone.best_nodes == e.best_nodes
            if FPGA in pod["spec"]["containers"][0]["resources"]["requests"]:
                assert all(f"Insufficient {FPGA}" not in str(v) for verdicts in e.filter.values()
                           for v in verdicts.values())
            s.add_pod(pod)
            r = s.run()[-1]
            if e.best_nodes:
                assert r.status == "Scheduled" and r.node_name in e.best_nodes, (r.message, e.best_nodes)
                bound.append({**pod, "spec": {**pod["spec"], "nodeName": r.node_name}})
            else:
                assert r.status == "Unschedulable" and not e.feasible
            outcomes.add(r.status)
        assert "Scheduled" in outcomes  # the random clusters do exercise the comparison


@pytest.mark.parametrize("seed", [4, 5])
def test_the_sampled_path_agrees_with_explain_on_the_nodes_it_examined(seed):
    """400 nodes at the default percentageOfNodesToScore: run() examines a sample of the nodes
    from its rotating start. On each node it examined, its Filter verdict is explain's, its raw
    per-node scores are explain's, and the node it chose is feasible by explain."""
    rng = random.Random(seed)
    nodes = random_cluster(rng, 400)
    rejects = {n["metadata"]["name"]: "no fpga cable" for n in rng.sample(nodes, 40)}
    with ReferenceExtender(filter_reject=rejects) as ext:
        s = Scheduler(extender_config(ext.url, None), seed=seed, record="all")
        s.add_nodes(nodes)
        sampled = 0
        for i in range(6):
            pod = random_pod(rng, i)
            e = s.explain(pod)
            s.add_pod(pod)
            r = s.run()[-1]
            (rec,) = r.history[-1:]
            examined = list(rec.filter_node_names)
            sampled += len(examined) < len(nodes)
            for name, code in zip(examined, rec.filter_codes.tolist()):
                # the record's codes are the plugins' (the extender's verdicts are kept apart)
                plugins_reject = any(v is not None for p, v in e.filter[name].items() if not p.startswith("extender "))
                assert (code != 0) == plugins_reject, name
            for plugin in PER_NODE_RAW:
                if plugin not in rec.score_plugins:
                    continue
                row = rec.raw_scores[rec.score_plugins.index(plugin)].tolist()
                for name, raw in zip(rec.score_node_names, row):
                    assert e.scores[plugin][name].raw == raw, (plugin, name)
            assert r.status == "Scheduled" and r.node_name in e.feasible
        assert sampled == 6  # the sampled path, not every node


def test_an_unknown_profile_is_a_config_error():
    with pytest.raises(ConfigError, match=r"no profile named 'nope' in the configuration \(profiles: 'default-scheduler'\)"):
        explain(POD, NODES, profile="nope")


@pytest.mark.parametrize("seed", range(8))
def test_preemption_dry_run_is_the_attempt_run_makes(seed):
    """For a pod no node fits, Scheduler.explain's preemption part is the attempt run() then makes:
    its status, message (the FitError with PostFilter's words), nominated node and victims in
    eviction order; and the scheduler explained is left as it was."""
    rng = random.Random(seed)
    cpus = [rng.choice((2, 4)) for _ in range(4)]
    lows = [(f"low{i}", rng.choice(("1", "2")), rng.choice((0, 10))) for i in range(8)]

    def loaded() -> Scheduler:
        s = Scheduler(seed=seed)
        s.add_nodes([node_manifest(f"n{i}", cpu=str(c), pods="4") for i, c in enumerate(cpus)])
        s.add_pods([pod_manifest(name, cpu=cpu, priority=prio) for name, cpu, prio in lows])
        s.run()
        return s

    preemptor = pod_manifest("hi", cpu=rng.choice(("2", "3")), priority=rng.choice((5, 1000)))
    explained = loaded()
    before = {p.key: (p.node_name, p.nominated_node_name) for p in explained.pods.values()}
    e = explained.explain(preemptor)
    assert not e.best_nodes and e.preemption is not None and e.preemption.attempted
    assert {p.key: (p.node_name, p.nominated_node_name) for p in explained.pods.values()} == before
    assert explained.metrics.preemption_victims == 0

    ran = loaded()
    victims: list[tuple[str, str]] = []
    ran.preemption_callbacks.append(lambda victim, pod, node: victims.append((victim.key, node)))
    ran.add_pod(preemptor)
    ran.run(max_attempts=1)
    (r,) = [r for r in ran.pod_results() if r.pod.name == "hi"]
    assert (e.preemption.status, e.preemption.message, e.preemption.nominated_node, e.preemption.victims) == (
        r.status, r.message, r.nominated_node_name, victims)


def test_preemption_dry_run_of_a_gated_pod_says_it_is_not_attempted():
    s = Scheduler(seed=1)
    s.add_node(node_manifest("n1", cpu="1"))
    gated = pod_manifest("gated", cpu="2")
    gated["spec"]["schedulingGates"] = [{"name": "example.com/wait"}]
    e = s.explain(gated)
    assert e.preemption is not None and not e.preemption.attempted
    assert "PreEnqueue holds it" in e.preemption.reason
