"""The pod group metrics of upstream's scheduler (``pkg/scheduler/metrics``, v1.37.2) in
``Scheduler.metrics``: ``podgroup_schedule_attempts_total`` and its duration by result (scheduled,
unschedulable, waiting_on_preemption, error: the root result after PodGroupPostFilter), the
algorithm's duration, and with TopologyAwareWorkloadScheduling the placements generated and
evaluated (feasible or infeasible)."""
from __future__ import annotations

from fastsched import Scheduler, load_config
from fastsched.features import FeatureGates
from fastsched.framework import Code, Status
from fastsched.runtime import Registry

GANG = {"GenericWorkload": True}
TAS = {"GenericWorkload": True, "TopologyAwareWorkloadScheduling": True}


def node(name: str, cpu: str = "2", zone: str = "a") -> dict:
    return {"apiVersion": "v1", "kind": "Node",
            "metadata": {"name": name, "labels": {"topology.kubernetes.io/zone": zone, "kubernetes.io/hostname": name}},
            "status": {"allocatable": {"cpu": cpu, "memory": "8Gi", "pods": "110"}}}


def group(name: str, min_count: int, **spec) -> dict:
    return {"apiVersion": "scheduling.k8s.io/v1beta1", "kind": "PodGroup",
            "metadata": {"name": name, "namespace": "default"},
            "spec": {"schedulingPolicy": {"gang": {"minCount": min_count}}, **spec}}


def pod(name: str, cpu: str, group_name: str | None = None, priority_class: str | None = None) -> dict:
    spec: dict = {"containers": [{"name": "c", "image": "x", "resources": {"requests": {"cpu": cpu}}}]}
    if group_name:
        spec["schedulingGroup"] = {"podGroupName": group_name}
    if priority_class:
        spec["priorityClassName"] = priority_class
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "default"}, "spec": spec}


def test_scheduled_and_unschedulable_groups_are_counted_by_result():
    s = Scheduler(feature_gates=GANG)
    s.add_nodes([node("n0"), node("n1")])
    s.add([group("fits", 2), group("too-big", 3)])
    s.add_pods([pod(f"fits-{i}", "500m", "fits") for i in range(2)]
               + [pod(f"big-{i}", "1500m", "too-big") for i in range(3)])
    s.run()
    m = s.metrics
    assert m.pod_group_attempts == {"scheduled": 1, "unschedulable": 1, "waiting_on_preemption": 0, "error": 0}
    assert sorted(res for res, _ in m.pod_group_attempt_latencies) == ["scheduled", "unschedulable"]
    assert len(m.pod_group_algorithm_latencies) == 2
    assert all(sec > 0 for _, sec in m.pod_group_attempt_latencies)
    assert m.as_dict()["pod_group_attempts"] == m.pod_group_attempts
    assert m.generated_placements == 0 and "placements" not in m.as_dict()


def test_a_group_that_preempts_is_waiting_on_preemption():
    s = Scheduler(feature_gates=GANG)
    s.add([{"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": "high"},
            "value": 1000}])
    s.add_nodes([node("n0"), node("n1")])
    s.add_pods([pod(f"low-{i}", "1500m") for i in range(2)])
    s.run()
    s.add([group("g", 2, priorityClassName="high")])
    s.add_pods([pod(f"g-{i}", "1500m", "g", "high") for i in range(2)])
    s.run()
    m = s.metrics
    assert m.pod_group_attempts["waiting_on_preemption"] == 1, m.pod_group_attempts
    assert m.pod_group_attempts["scheduled"] == 1  # after the victims are gone
    assert [res for res, _ in m.pod_group_attempt_latencies][:1] == ["waiting_on_preemption"]


def test_an_erring_plugin_makes_an_error_attempt():
    class Broken:
        def name(self):
            return "Broken"

        def pre_filter(self, state, pod, nodes):
            return None, Status(Code.ERROR, "broken")

    config = load_config("""
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
  - schedulerName: default-scheduler
    plugins:
      preFilter: {enabled: [{name: Broken}]}
""", registry_names=["Broken"], feature_gates=FeatureGates(GANG))
    s = Scheduler(config, registry=Registry({"Broken": lambda args, handle: Broken()}), feature_gates=GANG)
    s.add_nodes([node("n0")])
    s.add([group("g", 1)])
    s.add_pods([pod("g-0", "100m", "g")])
    s.run()
    assert s.metrics.pod_group_attempts["error"] >= 1
    assert {res for res, _ in s.metrics.pod_group_attempt_latencies} == {"error"}


def test_placements_generated_and_evaluated_by_feasibility():
    """Two zones, a gang constrained to one zone: zone a has room for it, zone b does not."""
    s = Scheduler(feature_gates=TAS)
    s.add_nodes([node("a0", zone="a"), node("a1", zone="a"), node("b0", cpu="1", zone="b")])
    s.add([group("g", 2, schedulingConstraints={"topology": [{"key": "topology.kubernetes.io/zone"}]})])
    s.add_pods([pod(f"g-{i}", "1500m", "g") for i in range(2)])
    (r0, r1) = s.run()
    assert {r0.node_name, r1.node_name} == {"a0", "a1"}
    m = s.metrics
    assert m.generated_placements == 2
    assert sorted(res for res, _ in m.placement_evaluations) == ["feasible", "infeasible"]
    assert m.as_dict()["placements"] == {"generated": 2, "feasible": 1, "infeasible": 1}
