"""Upstream's v1.37.2 ``podgroup`` scheduler_perf configs (GenericWorkload), run unchanged: the
``createPodGroups`` op, the gang and basic templates, every member bound as upstream binds them.

``podgroup/tas`` (TopologyAwareWorkloadScheduling: each gang's PodGroup constrained to one rack)
runs too.
"""
from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from fastsched.api.scheduling import POD_GROUP_INITIALLY_SCHEDULED
from fastsched.perf import PerfConfigError, load_perf_config, run_workload, select_workloads

PODGROUP = Path(__file__).parent / "data" / "upstream-v1.37.2" / "podgroup"


def _run(topic: str, test_case: str, workload: str):
    config = load_perf_config(PODGROUP / topic / "performance-config.yaml")
    return config, run_workload(config, test_case, workload, keep_scheduler=True)


@pytest.mark.parametrize("topic, test_case, workload, prefix, groups, size", [
    ("gangscheduling", "GangScheduling", "10Nodes_3Gangs", "gang", 3, 3),
    ("gangscheduling", "GangScheduling", "100Nodes_10Gangs", "gang", 10, 3),
    ("basicscheduling", "BasicScheduling", "10Nodes_3Groups", "basic-group", 3, 3),
    ("basicscheduling", "BasicScheduling", "100Nodes_10Groups", "basic-group", 10, 3),
])
def test_small_podgroup_workloads_bind_every_member(topic, test_case, workload, prefix, groups, size):
    _, r = _run(topic, test_case, workload)
    assert r.status == "passed", r.reason
    assert not [w for w in r.warnings if "GenericWorkload" in w], r.warnings  # the gate is modelled
    sched = r.scheduler
    assert sched.feature_gates.enabled("GenericWorkload")
    ns = f"{prefix.split('-')[0]}-ns-0"
    pods = sched.pods_in_namespace(ns)
    assert r.pods_created == r.pods_scheduled == len(pods) == groups * size
    assert all(p.node_name for p in pods)
    # gang-pod.yaml / basic-pod.yaml: pod i belongs to group i / podsPerGroup
    by_group = Counter(p.scheduling_group.pod_group_name for p in pods)
    assert by_group == {f"{prefix}-{g}": size for g in range(groups)}
    for g in range(groups):
        pg = sched.get_object("PodGroup", f"{prefix}-{g}", ns)
        assert pg is not None
        if prefix == "gang":
            assert pg.scheduling_policy.gang.min_count == size
        (cond,) = [c for c in pg.conditions if c["type"] == POD_GROUP_INITIALLY_SCHEDULED]
        assert (cond["status"], cond["reason"]) == ("True", "Scheduled")
    # each group was scheduled in one group cycle, its members assumed in the snapshot one after the
    # other: on empty nodes of equal size the scores then send every pod to a node of its own
    # (fewer pods than nodes), as upstream's run does
    assert len({p.node_name for p in pods}) == len(pods)


def test_the_group_cycle_runs_the_members_of_one_gang_together():
    _, r = _run("gangscheduling", "GangScheduling", "10Nodes_3Gangs")
    sched = r.scheduler
    # one scheduling attempt per member, all successful; no member was retried
    assert sched.metrics.attempts["scheduled"] == 9
    assert sched.metrics.attempts["unschedulable"] == sched.metrics.attempts["error"] == 0


def test_the_pod_group_histograms_are_collected_as_upstreams_default_collector_does():
    """upstream's default metricsCollectorConfig has scheduler_podgroup_scheduling_attempt_duration_seconds
    (by result: only the results observed give an item) and ..._algorithm_duration_seconds."""
    _, r = _run("gangscheduling", "GangScheduling", "10Nodes_3Gangs")
    metrics = r.scheduler.metrics
    assert metrics.pod_group_attempts == {"scheduled": 3, "unschedulable": 0, "waiting_on_preemption": 0, "error": 0}
    assert [res for res, _ in metrics.pod_group_attempt_latencies] == ["scheduled"] * 3
    assert len(metrics.pod_group_algorithm_latencies) == 3
    assert metrics.generated_placements == 0 and metrics.placement_evaluations == []  # TAS is off here
    items = {(i.labels.get("Metric"), i.labels.get("result")): i for i in r.data_items}
    attempt = items[("scheduler_podgroup_scheduling_attempt_duration_seconds", "scheduled")]
    algorithm = items[("scheduler_podgroup_scheduling_algorithm_duration_seconds", None)]
    for item in (attempt, algorithm):
        assert item.unit == "ms" and set(item.data) == {"Perc50", "Perc90", "Perc95", "Perc99", "Average"}
        assert 0 < item.data["Perc50"] <= item.data["Perc99"]
    # the algorithm is part of the attempt (which also binds the members)
    assert algorithm.data["Average"] <= attempt.data["Average"]
    assert not [k for k in items if k[0] == "scheduler_podgroup_scheduling_attempt_duration_seconds"
                and k[1] != "scheduled"]
    assert not [k for k in items if k[0] == "scheduler_placement_evaluation_duration_seconds"]


@pytest.mark.parametrize("workload, groups", [("10Nodes_3Gangs", 3), ("100Nodes_10Gangs", 10)])
def test_tas_workloads_place_each_gang_in_one_rack(workload, groups):
    config = load_perf_config(PODGROUP / "tas" / "performance-config.yaml")
    r = run_workload(config, "TopologyAwareScheduling", workload, keep_scheduler=True)
    assert r.status == "passed", r.reason
    assert not [w for w in r.warnings if "TopologyAwareWorkloadScheduling" in w], r.warnings  # the gate is modelled
    sched = r.scheduler
    assert sched.feature_gates.enabled("TopologyAwareWorkloadScheduling")
    pods = sched.pods_in_namespace("tas-ns-0")
    assert r.pods_created == r.pods_scheduled == len(pods) == groups * 3
    racks: dict[str, set] = {}
    for p in pods:
        node = sched.get_object("Node", p.node_name)
        racks.setdefault(p.scheduling_group.pod_group_name, set()).add(node.labels["topology.kubernetes.io/rack"])
    assert set(racks) == {f"gang-{g}" for g in range(groups)} and all(len(v) == 1 for v in racks.values())
    pg = sched.get_object("PodGroup", "gang-0", "tas-ns-0")
    assert [t.key for t in pg.scheduling_constraints.topology] == ["topology.kubernetes.io/rack"]
    # one group cycle per gang, each generating a placement per rack and evaluating every one
    metrics = sched.metrics
    racks_total = len({n.labels["topology.kubernetes.io/rack"] for n in sched.nodes()})
    assert metrics.pod_group_attempts["scheduled"] == groups
    assert metrics.generated_placements == groups * racks_total == len(metrics.placement_evaluations)
    assert {res for res, _ in metrics.placement_evaluations} <= {"feasible", "infeasible"}
    assert any(res == "feasible" for res, _ in metrics.placement_evaluations)


def test_the_workloads_resolve_their_create_pod_groups_op():
    config = load_perf_config(PODGROUP / "gangscheduling" / "performance-config.yaml")
    tc = config.test_case("GangScheduling")
    ops = tc.ops_for(next(w for w in tc.workloads if w.name == "5000Nodes_9Gangs_9000Pods_1000PerGroup")).ops
    (op,) = [op for op in ops if op.opcode == "createPodGroups"]
    assert op.fields["count"] == 9
    assert op.fields["templateParams"] == {"podsPerGroup": 1000}
    assert op.not_modelled is None
    (pods,) = [op for op in ops if op.opcode == "createPods"]
    assert pods.fields["count"] == 9000


CREATE_PODGROUPS = """\
- name: T
  featureGates: {GenericWorkload: true}
  workloadTemplate:
  - opcode: createPodGroups
%s
  - opcode: createPods
    count: 1
    collectMetrics: true
  workloads:
  - name: w
    params: {num: %s}
"""


@pytest.mark.parametrize("fields, n, message", [
    ("    countParam: $num\n    namespace: ns", "1", "templatePath must be set"),
    ("    countParam: $num\n    templatePath: pg.yaml", "1", "namespace must be set"),
    ("    countParam: num\n    namespace: ns\n    templatePath: pg.yaml", "1", 'invalid Count=0 / CountParam="num"'),
    ("    count: -1\n    namespace: ns\n    templatePath: pg.yaml", "1", 'invalid Count=-1 / CountParam=""'),
    ("    countParam: $num\n    namespace: ns\n    templatePath: pg.yaml", "0", "count must be greater than 0, got 0"),
    ("    countParam: $num\n    namespace: ns\n    templatePath: pg.yaml\n    extra: 1", "1", 'unknown field "extra"'),
])
def test_create_pod_groups_is_validated_as_upstream(tmp_path, fields, n, message):
    path = tmp_path / "c.yaml"
    path.write_text(CREATE_PODGROUPS % (fields, n))
    with pytest.raises(PerfConfigError, match=message.replace("(", r"\(")):
        config = load_perf_config(path)
        tc = config.test_cases[0]
        tc.ops_for(tc.workloads[0])


def test_pod_groups_keep_their_priority_without_the_priority_admission_plugin():
    # scheduler_perf's API server runs with --disable-admission-plugins=...,Priority: the
    # workload_preemption PodGroups' spec.priority 8888888 names no PriorityClass and is kept
    config = load_perf_config(PODGROUP.parent / "workload_preemption" / "performance-config.yaml")
    r = run_workload(config, "GangPreemptionBasic", "2Nodes_1PreemptorGang_2Pods_Evicting_10InitPods",
                     keep_scheduler=True)
    assert r.status == "passed", r.reason
    pg = r.scheduler.get_object("PodGroup", "gang-0", "gang-preempt-0")
    assert (pg.priority, pg.priority_class_name) == (8888888, "")
    assert r.preemption_victims > 0


def test_create_pod_groups_decodes_into_v1beta1_whatever_the_template_says():
    # default_preemption's podgroup.yaml says scheduling.k8s.io/v1alpha3; upstream decodes it into
    # the v1beta1 type and creates it with the v1beta1 client
    config = load_perf_config(PODGROUP.parent / "default_preemption" / "performance-config.yaml")
    r = run_workload(config, "PreemptionPodGroupDisruptionMode", "FastTest_PodGroupDisruptionMode_All",
                     keep_scheduler=True)
    assert r.status == "passed", r.reason
    pg = r.scheduler.get_object("PodGroup", "gang-0", "gang-preempt-1")
    assert pg is not None and pg.priority == 1000


WORKLOAD_CLAIMS = Path(__file__).parent / "data" / "upstream-v1.37.2" / "dra" / "workloadresourceclaims"


@pytest.mark.parametrize("test_case", ["SharedPodGroupResourceClaim", "SharedPodGroupResourceClaimTemplate"])
@pytest.mark.parametrize("workload, groups, pods, nodes", [("fast", 10, 10, 1), ("1podgroup_1000pods", 1, 1000, 10)])
def test_workload_resource_claims_share_one_claim_per_group(test_case, workload, groups, pods, nodes):
    """``dra/workloadresourceclaims`` (DRAWorkloadResourceClaims): each PodGroup names one claim (by
    name, or from the template, made by the resourceclaim controller for the group); all its
    members share it: one allocation per group, on a device of its own (one device per slice), the
    claim reserved for the PodGroup, every member bound."""
    config = load_perf_config(WORKLOAD_CLAIMS / "performance-config.yaml")
    r = run_workload(config, test_case, workload, keep_scheduler=True)
    assert r.status == "passed", r.reason
    sched = r.scheduler
    assert sched.feature_gates.enabled("DRAWorkloadResourceClaims")
    members = sched.pods_in_namespace("test")
    assert r.pods_scheduled == len(members) == pods and all(p.node_name for p in members)
    assert len({p.node_name for p in members}) == nodes  # the slices select every DRA node
    claims = sched.list_objects("ResourceClaim", "test")
    assert len(claims) == groups
    devices = Counter()
    for claim in claims:
        (entry,) = claim.reserved_for
        assert (entry["resource"], entry["apiGroup"]) == ("podgroups", "scheduling.k8s.io")
        group = entry["name"]
        if test_case == "SharedPodGroupResourceClaim":
            assert claim.name == "test-claim-" + group.rsplit("-", 1)[1]   # the group's named claim
        else:
            assert claim.name.startswith(group + "-resource-")           # generated for the group
        (res,) = claim.allocation["devices"]["results"]
        devices[(res["pool"], res["device"])] += 1
    assert len(devices) == groups and set(devices.values()) == {1}
    assert Counter(p.scheduling_group.pod_group_name for p in members) == \
        {f"test-dra-{g}": pods // groups for g in range(groups)}
