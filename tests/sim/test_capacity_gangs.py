"""``max_gangs``: how many whole gangs fit (fastsched.sim.capacity), with hand-computed counts."""
from __future__ import annotations

import json

import pytest

from fastsched.sim.capacity import max_gangs
from fastsched.testing import make_node, node_manifest

GPU = "nvidia.com/gpu"


def gpu_nodes(n, gpus=4, cpu="8"):
    return [make_node(f"gpu-{i}", cpu=cpu, memory="32Gi", extra={GPU: str(gpus)}) for i in range(n)]


def member(gpus, cpu="1", name="train"):
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "default"},
            "spec": {"containers": [{"name": "c", "image": "x", "resources": {
                "requests": {"cpu": cpu, GPU: str(gpus)}, "limits": {GPU: str(gpus)}}}]}}


@pytest.mark.parametrize("nodes, gpus, pods, min_count, want_gangs, want_members", [
    # 3 nodes x 4 GPUs, members of 2 GPUs: 6 members fit; gangs of 4 -> 1 (4 GPUs left: 2 members)
    (3, 2, 4, None, 1, 4),
    # ... gangs of 3 -> 2 (all 12 GPUs)
    (3, 2, 3, None, 2, 6),
    # members of 3 GPUs: one per node (20 GPUs free on 5 nodes but 5 members); gangs of 2 -> 2
    (5, 3, 2, None, 2, 4),
    # gangs of 3 with minCount 2: the first binds 3 members, the second 2 (its 3rd does not fit,
    # and is removed), the third finds no node: 2 gangs, 5 members
    (5, 3, 3, 2, 2, 5),
    # a member larger than any node: no gang
    (2, 5, 1, None, 0, 0),
])
def test_max_gangs_hand_computed(nodes, gpus, pods, min_count, want_gangs, want_members):
    r = max_gangs(gpu_nodes(nodes), member(gpus), pods, min_count=min_count)
    assert (r.gangs, r.members) == (want_gangs, want_members)
    assert r.pods_per_gang == pods and r.min_count == (min_count or pods)
    assert all(v <= 4 // gpus for v in r.per_node.values())
    assert r.stop_reason  # the gang that did not start says why


def test_stop_reason_is_the_groups_condition():
    r = max_gangs(gpu_nodes(2), member(4), 3)
    assert r.gangs == 0
    # the group's PodGroupInitiallyScheduled message: GangScheduling's PlacementFeasible verdict,
    # then the PodGroupPostFilter plugins' (copies never preempt)
    assert r.stop_reason.startswith("minCount (3) cannot be satisfied: "), r.stop_reason
    assert r.stop_reason.endswith("pod group preemption: not eligible due to preemptionPolicy=Never."), r.stop_reason


def test_max_gangs_cap_and_cpu_bound():
    # cpu is the limit: 8 cpu per node, members of 3 cpu and no GPU -> 2 per node, 6 on 3 nodes;
    # gangs of 2 -> 3; capped at 2 when asked
    r = max_gangs(gpu_nodes(3), member(0, cpu="3"), 2)
    assert (r.gangs, r.members) == (3, 6)
    r = max_gangs(gpu_nodes(3), member(0, cpu="3"), 2, max_gangs=2)
    assert (r.gangs, r.stop_reason) == (2, "")


def test_a_fork_of_the_callers_scheduler_is_unchanged():
    from fastsched import Scheduler
    from fastsched.sim.gangs import workload_gates

    s = Scheduler(feature_gates=workload_gates())
    s.add_nodes(gpu_nodes(2))
    assert max_gangs(s, member(4), 2).gangs == 1
    assert len(s.pods) == 0
    with pytest.raises(ValueError, match="without GenericWorkload"):
        plain = Scheduler()
        plain.add_nodes(gpu_nodes(1))
        max_gangs(plain, member(1), 1)


def test_with_pod_group_preemption_policy_the_group_never_preempts():
    """With PodGroupPreemptionPolicy the PodGroup's policy decides (and must be its members'): the
    copies' groups say Never, through a class of the template's priority, and count as without it."""
    from fastsched import Scheduler
    from fastsched.features import FeatureGates

    s = Scheduler(feature_gates=FeatureGates({"GenericWorkload": True, "PodGroupPreemptionPolicy": True}))
    s.add_nodes(gpu_nodes(3))
    assert (max_gangs(s, member(2), 3).gangs, max_gangs(s, member(2), 4).gangs) == (2, 1)
    r = max_gangs(s, member(4), 4)
    assert r.gangs == 0 and r.stop_reason.endswith("pod group preemption: not eligible due to preemptionPolicy=Never.")
    assert "fastsched-capacity-never-0" not in s.cluster.priority_classes  # (a fork's)


@pytest.mark.parametrize("pods, min_count, want", [
    (0, None, "pods_per_gang must be >= 1, got 0"),
    (2, 3, "min_count must be between 1 and pods_per_gang (2), got 3"),
])
def test_max_gangs_bad_arguments(pods, min_count, want):
    with pytest.raises(ValueError) as e:
        max_gangs(gpu_nodes(1), member(1), pods, min_count=min_count)
    assert str(e.value) == want


def test_cli_gang_size(tmp_path, capsys):
    import yaml

    from fastsched.cli import main

    cluster = tmp_path / "cluster.yaml"
    cluster.write_text(yaml.safe_dump_all([node_manifest(f"gpu-{i}", cpu="8", memory="32Gi", extra={GPU: "4"})
                                           for i in range(3)]))
    pod = tmp_path / "pod.yaml"
    pod.write_text(yaml.safe_dump(member(2)))
    assert main(["capacity", "--cluster", str(cluster), "--pod", str(pod), "--gang-size", "3", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert (data["mode"], data["gangs"], data["members"], data["pods_per_gang"], data["min_count"]) == \
        ("max_gangs", 2, 6, 3, 3)
    assert main(["capacity", "--cluster", str(cluster), "--pod", str(pod), "--gang-size", "4"]) == 0
    assert "1 whole gang(s) of 4 x default/train fit" in capsys.readouterr().out


def test_a_profile_without_gang_scheduling_is_refused():
    from fastsched import load_config

    cfg = load_config(None)  # loaded with the default gates: GenericWorkload off, no GangScheduling
    with pytest.raises(ValueError, match="profile 'default-scheduler' has no GangScheduling plugin"):
        max_gangs(gpu_nodes(1), member(1), 1, config=cfg)
