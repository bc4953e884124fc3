"""End to end: a Job under GenericWorkload and WorkloadWithJob, through the Scheduler's cluster
(the API server's strategies and admission, the Job controller) and its gang machinery.

A gang Job of parallelism N gets a Workload and a PodGroup with minCount N; its N pods name the
group and are scheduled in one pod group cycle, all of them or none. The same pods and PodGroup
written by hand give the same answers: the controller only adds the objects.
"""
from __future__ import annotations

from fastsched import Scheduler
from fastsched.controller.jobscheduling import compute_pod_group_name, compute_workload_name
from fastsched.testing import make_node

GATES = "GenericWorkload=true,WorkloadWithJob=true"


def _job(name="train", parallelism=4, cpu="1", scheduling=None, priority_class_name=None, owners=None) -> dict:
    pod_spec: dict = {"restartPolicy": "Never",
                      "containers": [{"name": "c", "image": "i", "resources": {"requests": {"cpu": cpu}}}]}
    if priority_class_name:
        pod_spec["priorityClassName"] = priority_class_name
    meta: dict = {"name": name, "namespace": "default"}
    if owners:
        meta["ownerReferences"] = owners
    doc = {"apiVersion": "batch/v1", "kind": "Job", "metadata": meta,
           "spec": {"parallelism": parallelism, "completions": parallelism, "template": {"spec": pod_spec}}}
    doc["spec"]["scheduling"] = {"schedulingPolicy": {"gang": {}}} if scheduling is None else scheduling
    return doc


def _scheduler(gates=GATES, nodes=4, node_cpu="2"):
    s = Scheduler(feature_gates=gates)
    s.add_nodes([make_node(f"n{i}", cpu=node_cpu) for i in range(nodes)])
    return s


def _run(s):
    return {r.pod.name: r for r in s.run(until=s.clock.now() + 1)}


def test_gang_job_is_scheduled_together():
    s = _scheduler()
    s.add(_job(parallelism=4, cpu="2"))
    (wl,) = s.cluster.objects_in_namespace("Workload", "default")
    (pg,) = s.cluster.objects_in_namespace("PodGroup", "default")
    job = s.cluster.get_object("Job", "train", "default")
    assert wl.name == compute_workload_name("train", job.uid)
    assert pg.name == compute_pod_group_name(wl.name, "train-pgt-0")
    assert (pg.is_gang, pg.min_count, pg.priority) == (True, 4, 0)  # Priority admission: no class, 0
    results = _run(s)
    assert len(results) == 4 and all(r.status == "Scheduled" for r in results.values())
    assert sorted(r.node_name for r in results.values()) == ["n0", "n1", "n2", "n3"]
    assert all(r.pod.scheduling_group.pod_group_name == pg.name for r in results.values())
    (cond,) = s.cluster.get_object("PodGroup", pg.name, "default").conditions
    assert (cond["type"], cond["status"], cond["reason"]) == ("PodGroupInitiallyScheduled", "True", "Scheduled")


def _by_hand(s, pg_name, n, cpu):
    """The same PodGroup and pods written by hand."""
    s.add({"apiVersion": "scheduling.k8s.io/v1beta1", "kind": "PodGroup", "metadata": {"name": pg_name},
           "spec": {"schedulingPolicy": {"gang": {"minCount": n}}}})
    s.add([{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": f"m{i}"},
            "spec": {"schedulingGroup": {"podGroupName": pg_name},
                     "containers": [{"name": "c", "image": "i", "resources": {"requests": {"cpu": cpu}}}]}}
           for i in range(n)])


def test_gang_job_that_does_not_fit_binds_nothing():
    """Three nodes for a gang of four: no pod bound, every pod says why, as the same gang written
    by hand."""
    s = _scheduler(nodes=3)
    s.add(_job(parallelism=4, cpu="2"))
    results = _run(s)
    assert len(results) == 4 and not any(r.node_name for r in results.values())
    assert all(r.status == "Unschedulable" and r.message for r in results.values())
    (pg,) = s.cluster.objects_in_namespace("PodGroup", "default")
    assert s.cache.pod_group_states_lister().get("default", pg.name).scheduled_pods_count() == 0
    (cond,) = s.cluster.get_object("PodGroup", pg.name, "default").conditions
    hand = _scheduler(nodes=3)
    _by_hand(hand, pg.name, 4, "2")
    hand_results = _run(hand)
    assert sorted(r.message for r in results.values()) == sorted(r.message for r in hand_results.values())
    (hand_cond,) = hand.cluster.get_object("PodGroup", pg.name, "default").conditions
    assert (cond["status"], cond["reason"], cond["message"]) == (
        hand_cond["status"], hand_cond["reason"], hand_cond["message"])
    assert (cond["status"], cond["reason"]) == ("False", "Unschedulable")
    assert cond["message"].startswith("minCount (4) cannot be satisfied: 3 scheduled, 0 remaining, ")


def test_basic_job_binds_what_fits():
    """A Job without spec.scheduling gets a Basic PodGroup: its pods are placed as they fit."""
    s = _scheduler(nodes=3)
    doc = _job(parallelism=4, cpu="2")
    del doc["spec"]["scheduling"]
    s.add(doc)
    (pg,) = s.cluster.objects_in_namespace("PodGroup", "default")
    assert not pg.is_gang
    results = _run(s)
    assert sorted(r.status for r in results.values()) == ["Scheduled"] * 3 + ["Unschedulable"]


def test_gates_off_the_job_is_pods_alone():
    """WorkloadWithJob off (GenericWorkload on): spec.scheduling dropped, no Workload or PodGroup,
    the pods placed as they fit."""
    s = _scheduler(gates="GenericWorkload=true", nodes=3)
    s.add(_job(parallelism=4, cpu="2"))
    assert s.cluster.get_object("Job", "train", "default").scheduling is None
    assert not s.cluster.objects_in_namespace("Workload", "default")
    assert not s.cluster.objects_in_namespace("PodGroup", "default")
    results = _run(s)
    assert sorted(r.status for r in results.values()) == ["Scheduled"] * 3 + ["Unschedulable"]


def test_pod_group_refused_means_no_pods():
    """The API server refuses the PodGroup (Priority admission: no such class): upstream's sync
    returns the error before it manages pods, so none are created (TestEnsureWorkloadAndPodGroup's
    "PodGroup create error propagates")."""
    s = _scheduler()
    s.add(_job(priority_class_name="missing"))
    assert len(s.cluster.objects_in_namespace("Workload", "default")) == 1
    assert not s.cluster.objects_in_namespace("PodGroup", "default")
    assert not s.cluster.pods_in_namespace("default")


def test_priority_class_reaches_the_pod_group():
    s = _scheduler()
    s.add({"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": "high"},
           "value": 1000})
    s.add(_job(priority_class_name="high"))
    (wl,) = s.cluster.objects_in_namespace("Workload", "default")
    (pg,) = s.cluster.objects_in_namespace("PodGroup", "default")
    assert wl.pod_group_templates[0].priority_class_name == "high"
    assert (pg.priority_class_name, pg.priority) == ("high", 1000)


def test_cron_job_jobs_stay_pods_alone():
    """v1.37.2 treats a CronJob's Job as owned by a parent that does not delegate: not managed."""
    s = _scheduler()
    s.add({"apiVersion": "batch/v1", "kind": "CronJob", "metadata": {"name": "nightly"},
           "spec": {"schedule": "* * * * *", "jobTemplate": {"spec": _job(parallelism=2)["spec"]}}})
    assert len(s.cluster.objects_in_namespace("Job", "default")) == 1
    assert not s.cluster.objects_in_namespace("PodGroup", "default")
    assert all(p.scheduling_group is None for p in s.cluster.pods_in_namespace("default"))


def test_topology_constraints_dropped_without_tas():
    """TopologyAwareWorkloadScheduling off: the Job keeps its constraints, the Workload's template
    and the PodGroup lose them (their create strategies)."""
    s = _scheduler()
    s.add(_job(scheduling={"schedulingPolicy": {"gang": {"minCount": 2}},
                           "schedulingConstraints": {"topology": [{"key": "topology.kubernetes.io/zone"}]}}))
    job = s.cluster.get_object("Job", "train", "default")
    assert job.scheduling.scheduling_constraints is not None
    (wl,) = s.cluster.objects_in_namespace("Workload", "default")
    (pg,) = s.cluster.objects_in_namespace("PodGroup", "default")
    assert wl.pod_group_templates[0].scheduling_constraints is None and pg.scheduling_constraints is None
    assert pg.min_count == 2
