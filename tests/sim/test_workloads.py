"""scheduler_perf workloads: counts, templates (checked against upstream's), nodes, prebinding."""
from __future__ import annotations

from collections import Counter

import pytest

from fastsched.api import LABEL_HOSTNAME, LABEL_ZONE
from fastsched.sim.workloads import TEMPLATES, WORKLOADS, template_manifest, template_pod

MI = 2**20

REQUIRED = ["SchedulingBasic", "SchedulingPodAntiAffinity", "SchedulingPodAffinity", "SchedulingPreferredPodAffinity",
            "SchedulingPreferredPodAntiAffinity", "TopologySpreading", "PreferredTopologySpreading",
            "SchedulingNodeAffinity", "Unschedulable", "PreemptionBasic", "MixedSchedulingBasePod"]

# (nodes, init pods per op, measured pods, floor) from shared/spec/upstream-perf.md
UPSTREAM = {
    "SchedulingBasic": (5000, 1000, 10000, 680),
    "SchedulingDaemonset": (15000, 0, 30000, 1100),
    "TopologySpreading": (5000, 5000, 5000, 460),
    "PreferredTopologySpreading": (5000, 5000, 5000, 340),
    "Unschedulable": (5000, 100, 10000, 590),
    "PreemptionAsync": (5000, 20000, 5000, 570),
    "SchedulingPodAntiAffinity": (5000, 1000, 2000, 60),
    "SchedulingPodAffinity": (5000, 5000, 5000, 35),
    "SchedulingPreferredPodAffinity": (5000, 5000, 5000, 90),
    "SchedulingPreferredPodAntiAffinity": (5000, 5000, 5000, 90),
    "SchedulingNodeAffinity": (5000, 5000, 10000, 220),
    "MixedSchedulingBasePod": (5000, 2000, 5000, 140),
    "PreemptionBasic": (500, 2000, 500, 18),
}


def test_registry_covers_the_upstream_workloads():
    assert set(REQUIRED) <= set(WORKLOADS)
    for name, w in WORKLOADS.items():
        nodes, init, measured, floor = UPSTREAM[name]
        assert (w.default_nodes, w.default_init_pods, w.default_measured_pods) == (nodes, init, measured), name
        assert w.upstream_floor_pods_per_second == floor, name
        assert w.upstream_file.startswith("test/integration/scheduler_perf/") and w.upstream_case
        assert all(t in TEMPLATES for t in w.templates)
        assert w.config is None


@pytest.mark.parametrize("name", sorted(WORKLOADS))
def test_every_workload_builds_small(name):
    w = WORKLOADS[name]
    inst = w.build(nodes=50, init_pods=8, measured_pods=12)
    assert len(inst.nodes) == 50 + (1 if w.named_node else 0)
    assert len(inst.init_pods) == 8 * len(w.init_ops)
    assert len(inst.measured_pods) == 12
    keys = [p.key for p in inst.pods]
    assert len(set(keys)) == len(keys)
    assert all(not p.node_name for p in inst.pods)
    ns = {n.name for n in inst.namespaces}
    assert {p.namespace for p in inst.pods} <= ns
    assert all(n.labels[LABEL_HOSTNAME] == n.name for n in inst.nodes)
    # the measured pods are the measured template's
    assert inst.measured_pods[0].containers == template_pod(w.measured_op.template).containers


def test_default_sizes_and_scaling():
    inst = WORKLOADS["SchedulingBasic"].build()
    assert (len(inst.nodes), len(inst.init_pods), len(inst.measured_pods)) == (5000, 1000, 10000)
    assert [n.name for n in inst.namespaces] == ["namespace-1", "namespace-2"]
    small = WORKLOADS["TopologySpreading"].build(nodes=500)
    assert (len(small.nodes), len(small.init_pods), len(small.measured_pods)) == (500, 500, 500)
    mixed = WORKLOADS["MixedSchedulingBasePod"].build(nodes=50)
    assert len(mixed.init_pods) == 5 * 20 and len(mixed.measured_pods) == 50


def test_default_pod_template_matches_upstream():
    pod = template_pod("pod-default")
    (c,) = pod.containers
    assert c.image.startswith("registry.k8s.io/pause:") and c.name == "pause"
    assert dict(c.requests) == {"cpu": 100, "memory": 500 * MI} == dict(c.limits)
    assert c.ports[0].container_port == 80 and c.ports[0].host_port == 0
    assert pod.priority is None and not pod.labels and pod.affinity is None


def test_affinity_templates_match_upstream():
    anti = template_pod("pod-with-pod-anti-affinity")
    assert anti.labels == {"color": "green"}
    (term,) = anti.affinity.pod_anti_affinity.required
    assert term.topology_key == LABEL_HOSTNAME and term.namespaces == ("sched-1", "sched-0")
    assert term.label_selector.matches({"color": "green"}) and not term.label_selector.matches({"color": "blue"})

    aff = template_pod("pod-with-pod-affinity")
    assert aff.labels == {"color": "blue"}
    (term,) = aff.affinity.pod_affinity.required
    assert term.topology_key == LABEL_ZONE and term.namespaces == ("sched-1", "sched-0")

    for name, color, kind in (("pod-with-preferred-pod-affinity", "red", "pod_affinity"),
                              ("pod-with-preferred-pod-anti-affinity", "yellow", "pod_anti_affinity")):
        pod = template_pod(name)
        assert pod.labels == {"color": color}
        group = getattr(pod.affinity, kind)
        assert group.required == () and len(group.preferred) == 1
        (weighted,) = group.preferred
        assert weighted.weight == 1 and weighted.pod_affinity_term.topology_key == LABEL_HOSTNAME


def test_spreading_and_node_affinity_templates_match_upstream():
    for name, when in (("pod-with-topology-spreading", "DoNotSchedule"),
                       ("pod-with-preferred-topology-spreading", "ScheduleAnyway")):
        pod = template_pod(name)
        (tsc,) = pod.topology_spread_constraints
        assert (tsc.max_skew, tsc.topology_key, tsc.when_unsatisfiable) == (5, LABEL_ZONE, when)
        assert tsc.label_selector.matches({"color": "blue"}) and pod.labels == {"color": "blue"}
    na = TEMPLATES["pod-with-node-affinity"]["spec"]["affinity"]["nodeAffinity"]
    (term,) = na["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"]
    assert term["matchExpressions"] == [{"key": LABEL_ZONE, "operator": "In", "values": ["zone1", "zone2"]}]
    assert template_pod("pod-with-node-affinity").affinity.node_affinity.required is not None


def test_priority_templates_match_upstream():
    low = template_pod("pod-low-priority")
    assert low.priority is None and low.requests["cpu"] == 900 and low.requests["memory"] == 500 * MI
    high = template_pod("pod-high-priority")
    assert high.priority == 10 and high.requests["cpu"] == 3000
    large = template_pod("pod-high-priority-large-cpu")
    assert large.priority == 10 and large.requests["cpu"] == 9000 and not large.containers[0].limits
    assert template_manifest("pod-high-priority-large-cpu")["metadata"]["generateName"] == "pod-h-"


def test_node_labels_follow_the_workload():
    spread = WORKLOADS["TopologySpreading"].build(nodes=9, init_pods=1, measured_pods=1)
    assert Counter(n.labels[LABEL_ZONE] for n in spread.nodes) == {"moon-1": 3, "moon-2": 3, "moon-3": 3}
    aff = WORKLOADS["SchedulingPodAffinity"].build(nodes=4, init_pods=1, measured_pods=1)
    assert {n.labels[LABEL_ZONE] for n in aff.nodes} == {"zone1"}
    anti = WORKLOADS["SchedulingPodAntiAffinity"].build(nodes=4, init_pods=1, measured_pods=1)
    assert all(LABEL_ZONE not in n.labels for n in anti.nodes)
    assert [n.name for n in anti.namespaces] == ["sched-0", "sched-1"]
    assert {p.namespace for p in anti.init_pods} == {"sched-0"} and {p.namespace for p in anti.measured_pods} == {"sched-1"}
    ds = WORKLOADS["SchedulingDaemonset"].build(nodes=5, measured_pods=3)
    assert ds.nodes[0].name == "scheduler-perf-node" and ds.nodes[0].allocatable["pods"] == 90000


def test_mixed_workload_init_groups():
    inst = WORKLOADS["MixedSchedulingBasePod"].build(nodes=20, init_pods=3, measured_pods=4)
    colors = Counter(p.labels.get("color") for p in inst.init_pods)
    assert colors == {None: 3, "blue": 3, "green": 3, "red": 3, "yellow": 3}
    assert {p.namespace for p in inst.init_pods} == {"sched-0"}
    assert {p.namespace for p in inst.measured_pods} == {"namespace-7"}


def test_prebind_round_robin_and_random():
    inst = WORKLOADS["PreemptionBasic"].build(prebind=True)
    assert inst.prebound
    per_node = Counter(p.node_name for p in inst.init_pods)
    assert len(per_node) == 500 and set(per_node.values()) == {4}  # 3.6 of 4 cpu, as upstream intends
    assert all(p.phase == "Running" for p in inst.init_pods)
    assert all(not p.node_name for p in inst.measured_pods)
    a = WORKLOADS["SchedulingBasic"].build(nodes=30, init_pods=40, prebind="random", seed=3)
    b = WORKLOADS["SchedulingBasic"].build(nodes=30, init_pods=40, prebind="random", seed=3)
    c = WORKLOADS["SchedulingBasic"].build(nodes=30, init_pods=40, prebind="random", seed=4)
    assert [p.node_name for p in a.init_pods] == [p.node_name for p in b.init_pods]
    assert [p.node_name for p in a.init_pods] != [p.node_name for p in c.init_pods]
    anti = WORKLOADS["SchedulingPodAntiAffinity"].build(nodes=50, init_pods=50, prebind=True)
    assert len({p.node_name for p in anti.init_pods}) == 50
    with pytest.raises(ValueError, match="fits on no node"):
        WORKLOADS["PreemptionBasic"].build(nodes=2, init_pods=9, prebind=True)


def test_churn():
    inst = WORKLOADS["Unschedulable"].build(nodes=10, init_pods=2, measured_pods=3)
    assert inst.churn.interval_seconds == 0.2 and inst.churn.template == "pod-high-priority-large-cpu"
    arrivals = inst.churn.arrivals(1.0)
    assert [t for t, _ in arrivals] == [0.2, 0.4, 0.6, 0.8, 1.0]
    assert all(p.requests["cpu"] == 9000 and p.priority == 10 for _, p in arrivals)
    assert len({p.name for _, p in arrivals}) == 5
    assert [n.name for n in inst.namespaces] == ["namespace-1", "namespace-2", "namespace-3"]
    assert WORKLOADS["SchedulingBasic"].build(nodes=5).churn is None
