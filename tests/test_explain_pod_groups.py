"""``Scheduler.explain`` for a member of a PodGroup (GenericWorkload): the per-pod explanation plus
the group cycle's verdict from a dry run on a fork, which must equal what ``run()`` then does, and
leave the scheduler untouched."""
from __future__ import annotations

import json
import random

import pytest

from fastsched import Scheduler
from fastsched.cli import main
from fastsched.scheduler.scheduler import SCHEDULED

GATES = {"GenericWorkload": True}


def node(name: str, cpu_m: int) -> dict:
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name}},
            "status": {"allocatable": {"cpu": f"{cpu_m}m", "memory": "16Gi", "pods": "110"}}}


def pod(name: str, cpu_m: int, group: str | None = None, node_name: str | None = None) -> dict:
    spec: dict = {"containers": [{"name": "c", "image": "x", "resources": {"requests": {"cpu": f"{cpu_m}m"}}}]}
    if group is not None:
        spec["schedulingGroup"] = {"podGroupName": group}
    if node_name is not None:
        spec["nodeName"] = node_name
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "default"}, "spec": spec}


def pod_group(name: str, min_count: int | None) -> dict:
    policy = {"gang": {"minCount": min_count}} if min_count is not None else {"basic": {}}
    return {"apiVersion": "scheduling.k8s.io/v1beta1", "kind": "PodGroup",
            "metadata": {"name": name, "namespace": "default"}, "spec": {"schedulingPolicy": policy}}


def random_cluster(seed: int):
    """Nodes partly filled by bound pods and one group of pending members (gang or basic)."""
    rng = random.Random(seed)
    s = Scheduler(feature_gates=GATES, seed=seed)
    n_nodes = rng.randint(1, 6)
    s.add_nodes([node(f"n{i}", rng.choice([1000, 2000, 4000])) for i in range(n_nodes)])
    s.add_pods([pod(f"run-{i}", rng.choice([250, 500, 1000]), node_name=f"n{rng.randrange(n_nodes)}")
                for i in range(rng.randint(0, 2 * n_nodes))])
    size = rng.randint(1, 6)
    s.add([pod_group("g", rng.choice([None, *range(1, size + 1)]))])
    s.add_pods([pod(f"g-{m}", rng.choice([250, 500, 1000, 1500]), "g") for m in range(size)])
    return s, size


@pytest.mark.parametrize("seed", range(40))
def test_the_group_verdict_of_explain_is_what_run_does(seed):
    s, size = random_cluster(seed)
    before = ([(r.pod.key, r.status, r.message) for r in s.pod_results()], s.cache.pod_count())
    e = s.explain(s.cluster.get_pod("default", "g-0"))
    # the scheduler itself is untouched
    assert ([(r.pod.key, r.status, r.message) for r in s.pod_results()], s.cache.pod_count()) == before
    g = e.pod_group
    assert g is not None and g.cycle_ran, g
    results = {r.pod.key: r for r in s.run() if r.pod.name.startswith("g-")}
    assert len(results) == size
    for key, (status, node_name, message) in g.members.items():
        r = results[key]
        assert (status, node_name if status == SCHEDULED else "") == (
            r.status, r.node_name if r.status == SCHEDULED else ""), key
        if r.attempts == 1:  # (a member left out of a basic group is retried once the others bound)
            assert message == r.message, key
    assert g.scheduled == [k for k, r in results.items() if r.status == SCHEDULED]


def test_a_pod_not_yet_created_joins_its_group_in_the_dry_run_only():
    s = Scheduler(feature_gates=GATES)
    s.add_nodes([node("n0", 2000), node("n1", 2000)])
    s.add([pod_group("g", 3)])
    s.add_pods([pod("g-0", 500, "g"), pod("g-1", 500, "g")])
    held = s.explain(s.cluster.get_pod("default", "g-0")).pod_group
    assert not held.cycle_ran and held.reason.startswith("PreEnqueue holds the group: GangScheduling: ")
    e = s.explain(pod("g-2", 500, "g"))  # the third member, as if created now: the gang would schedule
    assert e.pod_group.cycle_ran and e.pod_group.scheduled == ["default/g-0", "default/g-1", "default/g-2"]
    assert [r.status for r in s.pod_results()] == ["Gated", "Gated"] and s.cache.pod_count() == 0
    assert "pod group default/g" in e._repr_html_()


def test_a_member_of_a_missing_group_is_told_so_and_single_pods_have_no_group_section():
    s = Scheduler(feature_gates=GATES)
    s.add_nodes([node("n0", 2000)])
    e = s.explain(pod("lonely", 500, "nowhere"))
    assert e.pod_group.policy is None and not e.pod_group.cycle_ran
    assert e.pod_group.reason == 'pod group "nowhere" does not exist: its members wait for it'
    assert s.explain(pod("solo", 500)).pod_group is None
    off = Scheduler()  # GenericWorkload off: the field is dropped, there is no group
    off.add_nodes([node("n0", 2000)])
    assert off.explain(pod("m", 500, "g")).pod_group is None


def test_the_cli_explains_a_member_with_its_group(tmp_path, capsys):
    import yaml

    cluster = tmp_path / "cluster.yaml"
    cluster.write_text(yaml.safe_dump_all([node("n0", 2000), node("n1", 1000), pod_group("g", 1)]))
    member = tmp_path / "pod.yaml"
    member.write_text(yaml.safe_dump(pod("g-0", 1500, "g")))
    assert main(["explain", "--cluster", str(cluster), "--pod", str(member)]) == 0
    out = capsys.readouterr().out
    assert "pod group default/g (gang, minCount 1)" in out and "default/g-0: Scheduled on n0" in out
    assert main(["explain", "--cluster", str(cluster), "--pod", str(member), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["pod_group"]["members"] == [{"pod": "default/g-0", "status": "Scheduled", "node": "n0",
                                             "message": "Successfully assigned default/g-0 to n0"}]
