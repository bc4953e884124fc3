"""Cluster generator: reproducibility, requested proportions, placement rules, speed."""
from __future__ import annotations

from collections import Counter

import pytest

from fastsched.api import LABEL_HOSTNAME, LABEL_REGION, LABEL_ZONE, Node
from fastsched.sim.generators import (
    UPSTREAM_NODE_ALLOCATABLE,
    ClusterSpec,
    NodeShape,
    PodShape,
    RunningPodsSpec,
    SpecError,
    TaintSpec,
    generate_cluster,
    generate_nodes,
    generate_running_pods,
    upstream_node,
    upstream_nodes,
)

GI = 2**30

SPEC = {
    "nodes": 2000,
    "regions": 2,
    "zones": ["a", "b", "c", "d"],
    "shapes": [
        {"name": "small", "cpu": 4, "memory": "16Gi", "weight": 0.5},
        {"name": "big", "cpu": "16", "memory": "64Gi", "ephemeral-storage": "100Gi", "weight": 0.4},
        {"name": "gpu", "cpu": 32, "memory": "128Gi", "nvidia.com/gpu": 8, "fraction": 0.1,
         "labels": {"accelerator": "a100"}, "taints": [{"key": "nvidia.com/gpu", "effect": "NoSchedule"}]},
    ],
    "labels": {"disktype": {"values": ["ssd", "hdd"], "probabilities": [0.25, 0.75], "fraction": 0.5},
               "tier": ["gold", "silver"], "team": "infra"},
    "taints": [{"key": "spot", "value": "true", "effect": "PreferNoSchedule", "fraction": 0.2}],
    "unschedulable_fraction": 0.05,
    "images": {"pool": [{"name": f"img-{i}", "size": "100Mi"} for i in range(6)], "per_node": 2},
    "pods": {"count": 3000, "shapes": [{"cpu": "500m", "memory": "1Gi", "weight": 2}, {"cpu": 2, "memory": "4Gi"}],
             "labels": {"app": ["web", "db"]}, "namespaces": ["default", "prod"]},
    "seed": 11,
}


def _fingerprint(nodes, pods):
    return ([(n.name, n.uid, dict(n.labels), dict(n.allocatable), n.taints, n.unschedulable, n.images) for n in nodes],
            [(p.name, p.namespace, p.node_name, dict(p.labels), dict(p.requests), p.phase) for p in pods])


@pytest.fixture(scope="module")
def cluster():
    spec = ClusterSpec.from_dict(SPEC)
    return spec, *generate_cluster(spec)


def test_same_seed_same_cluster_different_seed_differs(cluster):
    _, nodes, pods = cluster
    again = generate_cluster(SPEC)
    assert _fingerprint(nodes, pods) == _fingerprint(*again)
    other = generate_cluster({**SPEC, "seed": 12})
    a, b = _fingerprint(nodes, pods), _fingerprint(*other)
    assert a[0] != b[0] and a[1] != b[1]
    assert [n.name for n in nodes] == [n.name for n in other[0]]


def test_shapes_in_exact_proportion(cluster):
    _, nodes, _ = cluster
    by_cpu = Counter(n.allocatable["cpu"] for n in nodes)
    assert by_cpu == {4000: 1000, 16000: 800, 32000: 200}
    gpu = [n for n in nodes if n.allocatable["cpu"] == 32000]
    assert all(n.allocatable["nvidia.com/gpu"] == 8 and n.labels["accelerator"] == "a100" for n in gpu)
    assert all(n.taints[0].key == "nvidia.com/gpu" and n.taints[0].effect == "NoSchedule" for n in gpu)
    big = [n for n in nodes if n.allocatable["cpu"] == 16000]
    assert all(n.allocatable["ephemeral-storage"] == 100 * GI and n.allocatable["memory"] == 64 * GI for n in big)
    assert all(n.capacity == n.allocatable for n in nodes)
    assert all("nvidia.com/gpu" not in n.allocatable for n in nodes if n.allocatable["cpu"] != 32000)


def test_topology_and_label_draws(cluster):
    _, nodes, _ = cluster
    assert all(n.labels[LABEL_HOSTNAME] == n.name for n in nodes)
    zones = Counter(n.labels[LABEL_ZONE] for n in nodes)
    assert zones == {"a": 500, "b": 500, "c": 500, "d": 500}  # round-robin
    # zone j is in region j % regions
    assert {(n.labels[LABEL_ZONE], n.labels[LABEL_REGION]) for n in nodes} == {
        ("a", "region-1"), ("b", "region-2"), ("c", "region-1"), ("d", "region-2")}
    disk = Counter(n.labels.get("disktype") for n in nodes)
    assert disk[None] == 1000  # fraction 0.5, exact
    assert 0.19 < disk["ssd"] / 1000 < 0.31
    tier = Counter(n.labels["tier"] for n in nodes)
    assert 0.43 < tier["gold"] / 2000 < 0.57
    assert all(n.labels["team"] == "infra" for n in nodes)


def test_taints_unschedulable_and_images(cluster):
    _, nodes, _ = cluster
    spot = [n for n in nodes if any(t.key == "spot" for t in n.taints)]
    assert len(spot) == 400
    assert all(t.value == "true" and t.effect == "PreferNoSchedule" for n in spot for t in n.taints if t.key == "spot")
    assert sum(n.unschedulable for n in nodes) == 100
    assert all(len(n.images) == 2 and len({i.names for i in n.images}) == 2 for n in nodes)
    assert all(i.size_bytes == 100 * 2**20 for n in nodes for i in n.images)
    usage = Counter(i.names[0] for n in nodes for i in n.images)
    assert set(usage) == {f"img-{i}" for i in range(6)}
    assert all(500 < c < 850 for c in usage.values())  # 4000 picks over 6 images


def test_running_pods_fit_and_respect_taints(cluster):
    _, nodes, pods = cluster
    assert len(pods) == 3000
    assert len({p.name for p in pods}) == 3000
    by_name = {n.name: n for n in nodes}
    used: dict[str, Counter] = {}
    for p in pods:
        assert p.phase == "Running" and p.node_name in by_name
        node = by_name[p.node_name]
        assert not node.unschedulable
        assert not any(t.effect == "NoSchedule" for t in node.taints)  # gpu nodes are tainted
        used.setdefault(p.node_name, Counter()).update({**p.requests, "pods": 1})
    for name, total in used.items():
        alloc = by_name[name].allocatable
        assert all(total[r] <= alloc.get(r, 0) for r in total)
    assert Counter(p.requests["cpu"] for p in pods) == {500: 2000, 2000: 1000}
    assert set(Counter(p.namespace for p in pods)) == {"default", "prod"}
    assert set(Counter(p.labels["app"] for p in pods)) == {"web", "db"}


def test_placement_modes_and_unplaceable():
    nodes = upstream_nodes(10)
    rr = generate_running_pods(RunningPodsSpec(count=20, placement="round-robin"), nodes)
    assert Counter(p.node_name for p in rr) == {n.name: 2 for n in nodes}
    # 4 cpu per node, 3-cpu pods: one per node
    spec = RunningPodsSpec(count=15, shapes=[PodShape(cpu="3", memory="1Gi")])
    with pytest.raises(SpecError, match=r"^pods\.count: 5 of 15 running pods fit on no node"):
        generate_running_pods(spec, nodes)
    spec.on_unplaceable = "skip"
    placed = generate_running_pods(spec, nodes)
    assert len(placed) == 10 and len({p.node_name for p in placed}) == 10
    spec.respect_capacity = False
    assert len(generate_running_pods(spec, nodes)) == 15
    # tolerations and node selectors widen / narrow the eligible nodes
    tainted = generate_nodes(ClusterSpec(nodes=6, taints=[TaintSpec("dedicated", "x", "NoSchedule", 0.5)]))
    tolerant = PodShape(tolerations=[{"key": "dedicated", "operator": "Exists"}],
                        node_selector={LABEL_HOSTNAME: tainted[0].name})
    pods = generate_running_pods(RunningPodsSpec(count=3, shapes=[tolerant]), tainted)
    assert {p.node_name for p in pods} == {tainted[0].name}


def test_upstream_node_template():
    node = upstream_node("scheduler-perf-x")
    assert dict(node.allocatable) == {"pods": 110, "cpu": 4000, "memory": 32 * GI} == dict(UPSTREAM_NODE_ALLOCATABLE)
    assert node.capacity == node.allocatable and node.labels == {LABEL_HOSTNAME: "scheduler-perf-x"}
    zoned = upstream_nodes(7, label_key=LABEL_ZONE, label_values=["moon-1", "moon-2", "moon-3"])
    assert [n.labels[LABEL_ZONE] for n in zoned] == ["moon-1", "moon-2", "moon-3"] * 2 + ["moon-1"]
    spec = ClusterSpec.upstream(5, zones=["zone1"])
    assert all(dict(n.allocatable) == dict(UPSTREAM_NODE_ALLOCATABLE) and n.labels[LABEL_ZONE] == "zone1"
               for n in generate_nodes(spec))



def test_upstream_nodes_in_chunks_are_named_as_at_once():
    # 100,001 nodes are named with six digits; a chunk of the first 50 alone would get five
    built = upstream_nodes(100_001)
    whole = built[:50] + built[-50:]
    chunks = upstream_nodes(50, total=100_001) + upstream_nodes(50, start=99_951, total=100_001)
    assert [n.name for n in chunks] == [n.name for n in whole]
    assert whole[0].name == "scheduler-perf-000000" and whole[-1].name == "scheduler-perf-100000"
    assert [n.labels for n in chunks] == [n.labels for n in whole]
    assert [n.uid for n in chunks] == [n.uid for n in whole]
    assert upstream_nodes(2, start=3)[0].name == "scheduler-perf-00003"  # without total: as before


def test_spec_in_code_and_defaults():
    spec = ClusterSpec(nodes=9, zones=3, shapes=[NodeShape(cpu="2", memory="4Gi")], labels={"x": ["1", "2"]})
    nodes, pods = generate_cluster(spec)
    assert len(nodes) == 9 and pods == []
    assert [n.labels[LABEL_ZONE] for n in nodes[:3]] == ["zone-1", "zone-2", "zone-3"]
    assert nodes[0].name == "node-00000" and all(isinstance(n, Node) and not n.manifest for n in nodes)


@pytest.mark.parametrize("patch, message", [
    ({"nodes": -1}, "cluster.nodes: must be >= 0"),
    ({"nodes": 2_000_000}, "cluster.nodes: must be <= 1e+06"),
    ({"shapes": [{"cpu": "4x"}]}, "cluster.shapes[0].cpu: invalid quantity '4x': quantities must match"),
    ({"shapes": [{"cpu": 1, "colour": "red"}]}, "cluster.shapes[0].colour: unknown field"),
    ({"shapes": []}, "cluster.shapes: must not be empty"),
    ({"labels": {"k": {"values": ["a"], "probabilities": [1, 2]}}}, "cluster.labels.k.probabilities: must be a list of 1"),
    ({"taints": [{"key": "k", "effect": "Sometimes"}]}, "cluster.taints[0].effect: must be one of"),
    ({"taints": [{"key": "k", "fraction": 1.5}]}, "cluster.taints[0].fraction: must be <= 1"),
    ({"zones": []}, "cluster.zones: must be a count or a non-empty list"),
    ({"regions": 2, "zones": None}, "cluster.zones: required when regions are given"),
    ({"pods": {"count": 5, "placement": "packed"}}, "cluster.pods.placement: must be one of random, round-robin"),
    ({"pods": {"count": 5, "shapes": [{"cpu": "1", "nvidia.com/gpu": "x"}]}},
     "cluster.pods.shapes[0][nvidia.com/gpu]: invalid quantity 'x': quantities must match"),
    ({"images": {"pool": [{"name": "a"}], "per_node": 2}}, "cluster.images.per_node: must be <= 1"),
])
def test_spec_errors_name_the_field(patch, message):
    base = {"nodes": 10, "zones": 2}
    with pytest.raises(SpecError) as info:
        ClusterSpec.from_dict({**base, **patch})
    assert str(info.value).startswith(message), str(info.value)


def test_100k_nodes_generate_with_the_specs_proportions():
    """(How fast: ``benchmarks/bench_scale.py::test_generate_nodes``; speed is measured there, not
    asserted here.)"""
    spec = ClusterSpec.from_dict({**SPEC, "nodes": 100_000, "pods": {"count": 0}})
    nodes = generate_nodes(spec)
    assert len(nodes) == 100_000 and nodes[-1].name == "node-99999"
    assert Counter(n.allocatable["cpu"] for n in nodes)[32000] == 10_000
