"""Upstream's own configs (vendored in data/upstream): every integration-test workload runs, and
templates with {{.Index}} give the placements upstream's files intend."""
import pytest

from fastsched.perf import load_perf_config, run_perf, run_workload

from .conftest import UPSTREAM

TOPICS = ["misc", "affinity", "topology_spreading"]


#: test cases whose ``$gatedPods`` pods carry scheduling gates no op removes: upstream's files create
#: them with skipWaitToCompletion and expect them pending to the end ("pods that will stay gated")
STAY_GATED = {"SchedulingWhileGated", "SchedulingGatedPodsWithPodAffinityImpactForThroughput"}
#: test cases whose ``$deletingPods`` pods are deleted (at a rate, skipWaitToCompletion) while the
#: scheduler runs: upstream's comment says "a few pods should still be chosen into the scheduling",
#: so how many of them are scheduled before their deletion depends on timing; the others must all be
DELETED_WHILE_SCHEDULING = {"SchedulingDeletedPodsWithFinalizers"}
#: test cases whose measured pods can only be placed by preempting the init pods
PREEMPTING = {"PreemptionBasic"}


@pytest.mark.parametrize("topic", TOPICS)
def test_integration_workloads_pass(topic):
    """Every integration-test workload passes, and every pod it creates is scheduled, except the
    pods upstream keeps gated; preemption workloads preempt."""
    config = load_perf_config(UPSTREAM / topic / "performance-config.yaml")
    report = run_perf(config, label_filter="integration-test")
    assert len(report.results) >= 4
    params = {(tc.name, w.name): w.params for tc in config.test_cases for w in tc.workloads}
    for r in report.results:
        assert r.status == "passed", (r.name, r.reason)
        gated = params[r.test_case, r.workload]["gatedPods"] if r.test_case in STAY_GATED else 0
        assert r.pods_created > gated and r.phases, (r.test_case, r.workload)
        if r.test_case in DELETED_WHILE_SCHEDULING:
            deleting = params[r.test_case, r.workload]["deletingPods"]
            assert r.pods_created - deleting <= r.pods_scheduled <= r.pods_created, \
                (r.test_case, r.workload, r.pods_created, r.pods_scheduled)
            continue
        assert r.pods_scheduled == r.pods_created - gated, (r.test_case, r.workload, r.pods_created, r.pods_scheduled)
        if r.test_case in PREEMPTING:
            assert r.preemption_victims > 0, (r.test_case, r.workload)


def test_extended_resource_pods_land_on_the_node_of_their_index():
    config = load_perf_config(UPSTREAM / "misc" / "performance-config.yaml")
    r = run_workload(config, "SchedulingWithExtendedResource", "fast", keep_scheduler=True)
    assert r.status == "passed", r.reason
    sched = r.scheduler
    nodes = {n.name: n for n in sched.nodes()}
    pods = sched.pods_in_namespace("test")
    assert sorted(p.name for p in pods) == sorted(f"test-extended-resource-{i}" for i in range(10))
    for pod in pods:
        index = pod.name.rsplit("-", 1)[1]
        node = nodes[pod.node_name]
        assert node.name.startswith("scheduler-perf-extended-resource-")
        assert node.allocatable[f"foo.com/bar-{index}"] == 1   # node i offers foo.com/bar-i


def test_daemonset_pods_all_go_to_the_named_node():
    config = load_perf_config(UPSTREAM / "misc" / "performance-config.yaml")
    r = run_workload(config, "SchedulingDaemonset", "5Nodes", keep_scheduler=True)
    assert r.status == "passed" and r.nodes == 6
    assert {p.node_name for p in r.scheduler.pods.values()} == {"scheduler-perf-node"}


def test_pod_sets_and_namespace_selectors():
    config = load_perf_config(UPSTREAM / "affinity" / "performance-config.yaml")
    r = run_workload(config, "SchedulingRequiredPodAntiAffinityWithNSSelector", "10Nodes", keep_scheduler=True)
    assert r.status == "passed", r.reason
    sched = r.scheduler
    assert {ns: len(sched.pods_in_namespace(ns)) for ns in ("init-ns-0", "init-ns-1", "measure-ns-0")} == {
        "init-ns-0": 2, "init-ns-1": 2, "measure-ns-0": 6}
    # required anti-affinity across every devops namespace: at most one green pod per node
    hosts = [p.node_name for p in sched.pods.values()]
    assert len(hosts) == len(set(hosts)) == 10
