"""Capacity answers against the one-copy-at-a-time loop they stand for."""
from __future__ import annotations

from collections import Counter

import pytest

from fastsched import Scheduler
from fastsched.sim.capacity import (ReplicaResult, _copy, cluster_scheduler, fits_together, free_space_bound,
                                    max_replicas, nodes_needed)
from fastsched.testing import make_node, make_pod, random_cluster


def brute_force(cluster_objects, template, limit, *, extra_nodes=(), scheduler=None):
    """The definition: add one copy, run the scheduler to the end, repeat until a copy fails."""
    s = scheduler if scheduler is not None else cluster_scheduler(cluster_objects, extra_nodes=extra_nodes)
    per_node, stop = Counter(), ""
    for i in range(limit):
        s.add_pod(_copy(template, i))
        r = s.run()[-1]
        if not r.scheduled:
            stop = r.message
            s.delete_pod(r.pod)
            break
        per_node[r.node_name] += 1
    return sum(per_node.values()), dict(sorted(per_node.items())), stop, s


def small_cluster(seed):
    nodes, running = random_cluster(seed, n_nodes=12, n_pods=20)
    return nodes + running


TEMPLATES = [
    make_pod("small", cpu="500m", memory="256Mi"),
    make_pod("wide", cpu="2", memory="3Gi"),
    make_pod("gpu", requests={"cpu": "1", "nvidia.com/gpu": "1"}),
    make_pod("zonal", cpu="250m", node_selector={"topology.kubernetes.io/zone": "zone-a"}),
    make_pod("spread", cpu="200m", labels={"app": "s"}, topology_spread_constraints=[
        {"maxSkew": 1, "topologyKey": "topology.kubernetes.io/zone", "whenUnsatisfiable": "DoNotSchedule",
         "labelSelector": {"matchLabels": {"app": "s"}}}]),
]


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("template", TEMPLATES, ids=lambda p: p.name)
def test_max_replicas_equals_the_brute_force_loop(seed, template):
    objects = small_cluster(seed)
    placed, per_node, stop, _ = brute_force(objects, template, 2000)
    got = max_replicas(objects, template)
    assert (got.placed, got.per_node, got.stop_reason) == (placed, per_node, stop)
    assert got.placed < 2000 and got.stop_reason  # the cluster filled up: the reason is a FitError
    assert "nodes are available" in got.stop_reason


@pytest.mark.parametrize("seed", [3, 4])
def test_fits_together_equals_the_brute_force_loop(seed):
    objects = small_cluster(seed)
    workloads = [(TEMPLATES[0], 15), (TEMPLATES[1], 40), (TEMPLATES[3], 5)]
    report = fits_together(objects, workloads)
    s = None
    for (pod, replicas), got in zip(workloads, report.workloads):
        placed, per_node, stop, s = brute_force(objects, pod, replicas, scheduler=s)
        assert (got.placed, got.per_node, got.stop_reason) == (placed, per_node, stop)
        assert got.requested == replicas and got.all_fit == (placed == replicas)


def test_nodes_needed_equals_a_linear_search_with_the_brute_force_loop():
    objects = small_cluster(5)
    template = make_node("big", cpu="8", memory="16Gi", labels={"topology.kubernetes.io/zone": "zone-b"})
    workloads = [(TEMPLATES[1], 30)]
    report = nodes_needed(objects, workloads, template, max_nodes=64)
    k = 0
    while True:
        extra = [template.replace(name=f"big-{i}", uid=f"{template.uid}-{i}",
                                  labels={**template.labels, "kubernetes.io/hostname": f"big-{i}"}, manifest={})
                 for i in range(k)]
        placed, per_node, _, _ = brute_force(objects, TEMPLATES[1], 30, extra_nodes=extra)
        if placed == 30:
            break
        k += 1
    assert report.nodes_added == k and report.all_fit
    assert report.workloads[0].per_node == per_node


def test_nodes_needed_names_the_fit_error_when_nothing_is_enough():
    objects = small_cluster(6)
    tiny = make_node("tiny", cpu="1", memory="1Gi")
    with pytest.raises(ValueError) as exc:
        nodes_needed(objects, [(make_pod("huge", cpu="500"), 3)], tiny, max_nodes=4)
    message = str(exc.value)
    assert "do not fit even with 4 more tiny nodes" in message
    assert "default/huge: 0 of 3 replicas placed" in message and "Insufficient cpu" in message


def test_a_scheduler_is_answered_on_a_fork_and_left_unchanged():
    objects = small_cluster(7)
    s = cluster_scheduler(objects)
    before = (sorted((p.name, p.node_name) for p in s.pods.values()), s.snapshot.table.requested.tolist(),
              s.rng.bit_generator.state)
    got = max_replicas(s, TEMPLATES[0])
    assert got.placed == max_replicas(objects, TEMPLATES[0]).placed > 0
    report = nodes_needed(s, [(TEMPLATES[1], 25)], make_node("n", cpu="8", memory="16Gi"), max_nodes=32)
    assert report.all_fit
    after = (sorted((p.name, p.node_name) for p in s.pods.values()), s.snapshot.table.requested.tolist(),
             s.rng.bit_generator.state)
    assert after == before
    with pytest.raises(ValueError, match="has its own"):
        max_replicas(s, TEMPLATES[0], config={})


def test_queued_cluster_pods_take_their_turns_as_in_the_loop():
    # pods of the cluster still queued (unschedulable until the copies' binds wake them or not)
    # make the copies go one run() at a time, as the definition does
    nodes = [make_node(f"n{i}", cpu="4", memory="8Gi", labels={"topology.kubernetes.io/zone": f"z{i % 2}"})
             for i in range(4)]
    s = Scheduler(seed=0)
    s.add_nodes(nodes)
    s.add_pods([make_pod("stuck", cpu="64")])
    s.run()
    template = make_pod("c", cpu="300m")
    got = max_replicas(s, template)
    placed, per_node, stop, _ = brute_force(None, template, 1000, scheduler=s.fork())
    assert (got.placed, got.per_node, got.stop_reason) == (placed, per_node, stop)


def test_free_space_bound_is_an_upper_bound():
    objects = small_cluster(8)
    s = cluster_scheduler(objects)
    for template in TEMPLATES[:3]:
        bound = free_space_bound(s, template)
        assert bound >= max_replicas(objects, template).placed


def test_distribution_summary_and_progress():
    r = ReplicaResult("default/p", None, 7, {"a": 3, "b": 1, "c": 3})
    assert r.top_nodes(2) == [("a", 3), ("c", 3)]
    assert r.histogram() == {1: 1, 3: 2}
    seen = []
    got = max_replicas([make_node("a", cpu="4"), make_node("b", cpu="4")], make_pod("p", cpu="1"),
                       progress=lambda done, total: seen.append((done, total)))
    assert got.placed == 8 and seen[-1] == (8, None)
    assert [d for d, _ in seen] == sorted(d for d, _ in seen)


def test_a_pod_asking_for_nothing_stops_at_max_copies():
    got = max_replicas([make_node("a", pods="1000")], make_pod("empty"), max_copies=300)
    assert got.placed == 300 and got.stop_reason == ""


def test_cli_summarizes_the_distribution_and_lists_all_nodes_on_request(tmp_path, capsys):
    import json

    import yaml

    from fastsched.cli import main

    nodes = [{"apiVersion": "v1", "kind": "Node", "metadata": {"name": f"n{i:02d}"},
              "status": {"allocatable": {"cpu": str(2 + i % 3), "memory": "8Gi", "pods": "110"}}} for i in range(14)]
    cluster = tmp_path / "cluster.yaml"
    cluster.write_text(yaml.safe_dump_all(nodes))
    pod = tmp_path / "pod.yaml"
    pod.write_text("apiVersion: v1\nkind: Pod\nmetadata: {name: web}\n"
                   "spec: {containers: [{name: c, image: nginx, resources: {requests: {cpu: '1'}}}]}\n")
    assert main(["capacity", "--cluster", str(cluster), "--pod", str(pod)]) == 0
    out = capsys.readouterr().out
    assert "41 more copies of default/web fit" in out
    assert "and 4 more nodes (--per-node lists them all); 14 nodes got copies" in out
    assert "copies per node" in out
    assert "the next copy does not fit: 0/14 nodes are available: 14 Insufficient cpu." in out
    assert main(["capacity", "--cluster", str(cluster), "--pod", str(pod), "--per-node"]) == 0
    out = capsys.readouterr().out
    assert all(f"n{i:02d}" in out for i in range(14)) and "more nodes" not in out
    assert main(["capacity", "--cluster", str(cluster), "--pod", str(pod), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert len(data["per_node"]) == 14 and data["placed"] == 41
