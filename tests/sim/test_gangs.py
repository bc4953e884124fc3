"""Gang streams in simulations (fastsched.sim.gangs): the stream, its validation, the gang metrics."""
from __future__ import annotations

import pytest

from fastsched.sim import simulate
from fastsched.sim.scenario import Scenario, ScenarioError

GPU = "nvidia.com/gpu"


def _container(cpu="1", gpus=None, **extra):
    requests = {"cpu": cpu}
    resources = {"requests": requests}
    if gpus is not None:
        requests[GPU] = str(gpus)
        resources["limits"] = {GPU: str(gpus)}
    return {"name": "c", "image": "x", "resources": resources, **extra}


def _template(cpu="1", gpus=None, node=None):
    spec = {"containers": [_container(cpu, gpus)]}
    if node is not None:
        spec["nodeSelector"] = {"kubernetes.io/hostname": node}
    return {"spec": spec}


def _scenario(arrivals, nodes=2, until=400, **extra):
    """``nodes`` nodes of 8 cpu, 32Gi and 4 GPUs each (node-00000, node-00001, ...)."""
    return {"name": "gangs", "seed": 1, "until": until,
            "cluster": {"nodes": nodes, "zones": 1,
                        "shapes": [{"cpu": 8, "memory": "32Gi", "pods": 110, GPU: 4}]},
            "arrivals": arrivals, **extra}


def _gang_stream(pods=2, gpus=4, min_count=None, **stream):
    gang = {"pods": pods, "gpus": gpus}
    if min_count is not None:
        gang["min_count"] = min_count
    return {"name": "train", "interval": 100, "count": 1, "gang": gang, "template": _template(), **stream}


# -- the stream ------------------------------------------------------------------------------------
def test_stream_makes_a_pod_group_and_members_and_turns_the_gate_on():
    sc = Scenario.load(_scenario([_gang_stream(pods=3, min_count=2, start=5, count=2, duration=60)]))
    assert sc.feature_gates.enabled("GenericWorkload")
    assert Scenario.load(_scenario([{"name": "p", "interval": 1, "count": 1, "template": _template()}])) \
        .feature_gates is None
    arrivals = list(sc.timeline().arrivals())
    assert [(a.time, a.pod.name, a.gang) for a in arrivals] == [
        (5.0, "train-00000-0", "train-00000"), (5.0, "train-00000-1", "train-00000"),
        (5.0, "train-00000-2", "train-00000"),
        (105.0, "train-00001-0", "train-00001"), (105.0, "train-00001-1", "train-00001"),
        (105.0, "train-00001-2", "train-00001")]
    assert [a.group is not None for a in arrivals] == [True, False, False, True, False, False]
    assert arrivals[0].group == {"apiVersion": "scheduling.k8s.io/v1beta1", "kind": "PodGroup",
                                 "metadata": {"name": "train-00000", "namespace": "default"},
                                 "spec": {"schedulingPolicy": {"gang": {"minCount": 2}}}}
    pod = arrivals[1].pod
    assert pod.pod_group_name == "train-00000"
    assert pod.requests[GPU] == 4 and pod.containers[0].limits[GPU] == 4
    assert len({a.pod.uid for a in arrivals}) == 6
    assert {a.duration for a in arrivals} == {60.0}


def test_a_topology_constraint_keeps_the_gang_in_one_zone():
    """gang.topology: each PodGroup constrained to one zone, TopologyAwareWorkloadScheduling on. 3
    members x 4 GPUs on 4 nodes of 4 GPUs in 2 zones: without the constraint the gang starts, with
    it no zone holds it; 2 members fit in one zone and do."""
    def gang(pods, topology):
        stream = _gang_stream(pods=pods, start=10)
        if topology:
            stream["gang"]["topology"] = {"key": "topology.kubernetes.io/zone"}
        sc = _scenario([stream], nodes=4, until=100)
        sc["cluster"]["zones"] = 2
        return sc

    sc = Scenario.load(gang(3, True))
    assert sc.feature_gates.enabled("TopologyAwareWorkloadScheduling")
    assert not Scenario.load(gang(3, False)).feature_gates.enabled("TopologyAwareWorkloadScheduling")
    first = next(iter(sc.timeline().arrivals()))
    assert first.group["spec"]["schedulingConstraints"] == {"topology": [{"key": "topology.kubernetes.io/zone"}]}
    assert simulate(gang(3, False)).gangs[0].started == 10.0
    r = simulate(gang(3, True))
    assert r.gangs[0].started is None and all(rec.status == "Unschedulable" for rec in r.records)
    assert any("placements are available" in rec.reason for rec in r.records), [rec.reason for rec in r.records]
    r = simulate(gang(2, True))
    assert r.gangs[0].started == 10.0
    zones = {r.scheduler.get_object("Node", rec.node).labels["topology.kubernetes.io/zone"] for rec in r.records}
    assert len(zones) == 1


def test_the_gang_takes_the_templates_priority_class():
    sc = Scenario.load(_scenario([_gang_stream(template={"spec": {"priorityClassName": "high",
                                                                  "containers": [_container()]}})],
                                 priority_classes=[{"name": "high", "value": 1000}]))
    first = next(iter(sc.timeline().arrivals()))
    assert first.group["spec"]["priorityClassName"] == "high"
    assert first.pod.priority == 1000


@pytest.mark.parametrize("gang, extra, want", [
    ({"pods": 2, "topology": {}}, {},
     "arrivals[0].gang.topology.key: required: the node label the gang is kept within (e.g. "
     "topology.kubernetes.io/zone)"),
    ({"pods": 2, "topology": {"key": "bad key"}}, {},
     "arrivals[0].gang.topology.key: invalid label key 'bad key': name part must consist of alphanumeric "
     "characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or "
     "'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"),
    ({"pods": 2, "topology": {"key": "zone", "keys": 1}}, {},
     "arrivals[0].gang.topology.keys: unknown field (expected one of: key)"),
    ({"min_count": 2}, {}, "arrivals[0].gang.pods: required: member pods per gang"),
    ({"pods": 0}, {}, "arrivals[0].gang.pods: must be >= 1, got 0"),
    ({"pods": 2, "min_count": 3}, {}, "arrivals[0].gang.min_count: must be <= pods (2), got 3: such a gang never starts"),
    ({"pods": 2, "gpus": -1}, {}, "arrivals[0].gang.gpus: must be >= 0, got -1"),
    ({"pods": 2, "gpus": 1, "gpu_resource": "gpu"}, {},
     "arrivals[0].gang.gpu_resource: must be an extended resource name such as nvidia.com/gpu, got 'gpu'"),
    ({"pods": 2, "replicas": 3}, {}, "arrivals[0].gang.replicas: unknown field (expected one of: gpu_resource, gpus, "
                                     "min_count, pods, topology)"),
    ({"pods": 2}, {"batch": 4}, "arrivals[0].batch: a gang stream's members per arrival are gang.pods"),
    ({"pods": 2}, {"template": {"spec": {"schedulingGroup": {"podGroupName": "g"}, "containers": [_container()]}}},
     "arrivals[0].template.spec.schedulingGroup: set by the gang stream (each member names its gang's PodGroup): "
     "remove it"),
    ({"pods": 2, "gpus": 2}, {"template": _template(gpus=1)},
     "arrivals[0].template.spec.containers[0].resources.requests: gives nvidia.com/gpu already: set it there or "
     "in gang.gpus, not both"),
])
def test_gang_stream_validation(gang, extra, want):
    stream = {"name": "train", "interval": 100, "count": 1, "gang": gang, "template": _template(), **extra}
    with pytest.raises(ScenarioError) as e:
        Scenario.load(_scenario([stream]))
    assert str(e.value).startswith(want), str(e.value)


def test_a_gang_stream_takes_one_template():
    stream = {"name": "train", "interval": 100, "count": 1, "gang": {"pods": 2},
              "mix": [{"template": _template()}]}
    with pytest.raises(ScenarioError, match=r"^arrivals\[0\]\.mix: a gang stream takes one template"):
        Scenario.load(_scenario([stream]))


# -- the metrics ----------------------------------------------------------------------------------
def test_gang_wait_time_is_exact():
    """Two nodes of 4 GPUs; an inference pod takes node-00000's 4 GPUs from t=0 to t=50; a gang of
    2 members x 4 GPUs arrives at t=10 and needs both nodes. A rejected group backs off (it does not
    wait for events): initial 1 s doubled per failure, capped at 10 s x sqrt(2 members) = 14.142 s.
    With SchedulerPopFromBackoffQ (on at v1.37.2) an expiry is truncated to its 1 s window and the
    group backs off until the next window starts (upstream's isEntityBackingoff), and a rejected
    group waits in the error backoff queue, which Pop does not take from: attempts at 10, 12 (11 +
    1), 15, 20, 29, 44 (43.14 -> 43 + 1), 59 (58.14 -> 58 + 1), where the GPUs are free (since 50).
    Wait = 59 - 10 = 49."""
    r = simulate(_scenario([
        {"name": "infer", "interval": 1000, "count": 1, "template": _template(gpus=4, node="node-00000"),
         "duration": 50},
        _gang_stream(start=10, duration=100)]), sample_interval=10)
    [g] = r.gangs
    assert (g.name, g.created, g.started, g.wait, g.bound) == ("default/train-00000", 10.0, 59.0, 49.0, 2)
    assert {rec.name: rec.bind_time for rec in r.records} == {
        "infer-00000": 0.0, "train-00000-0": 59.0, "train-00000-1": 59.0}
    s = r.summary["gangs"]
    assert (s["total"], s["started"], s["never_started"]) == (1, 1, 0)
    assert s["wait_seconds"]["count"] == 1 and s["wait_seconds"]["max"] == 49.0
    waiting = {row["time"]: row["gangs_waiting"] for row in r.timeseries if row["kind"] == "step"}
    assert [t for t, n in waiting.items() if n] == [10.0, 20.0, 30.0, 40.0, 50.0]
    assert s["gpus_held_at_permit"]["max"] == 0  # the group cycle releases the whole gang at once


def test_gang_that_cannot_fit_never_starts_and_binds_no_member():
    """3 members x 4 GPUs on 2 nodes of 4 GPUs: all or nothing, so nothing."""
    r = simulate(_scenario([_gang_stream(pods=3, start=10)], until=200), sample_interval=10)
    [g] = r.gangs
    assert (g.started, g.bound) == (None, 0)
    assert all(rec.bind_time is None and rec.status == "Unschedulable" for rec in r.records)
    assert sum(len(r.scheduler.cache.pods_on_node(n)) for n in ("node-00000", "node-00001")) == 0
    s = r.summary["gangs"]
    assert (s["total"], s["started"], s["never_started"], s["never_started_gangs"]) == \
        (1, 0, 1, ["default/train-00000"])
    assert s["wait_seconds"]["count"] == 0
    assert s["gpus_held_at_permit"]["max"] == 0
    assert r.timeseries[-1]["gangs_waiting"] == 1


def test_gang_with_min_count_below_its_pods_starts_with_min_count():
    """3 members x 4 GPUs, minCount 2, on 2 nodes of 4 GPUs: two bound at once, the third waits."""
    r = simulate(_scenario([_gang_stream(pods=3, min_count=2, start=10)], until=200), sample_interval=10)
    [g] = r.gangs
    assert (g.started, g.wait, g.bound) == (10.0, 0.0, 2)
    assert sorted(rec.status for rec in r.records) == ["Running", "Running", "Unschedulable"]
    assert r.summary["gangs"]["never_started"] == 0


def test_gpus_held_at_permit():
    """An out-of-tree Permit plugin holds member 1 of the gang for 30 s (then allows it), as a
    quota or admission check might. The group's cycle places both members at t=10; member 0 passes
    Permit once member 1 is assumed (GangScheduling: 2 of minCount 2) and is bound at 10; member 1
    waits at Permit on its node, holding its 4 GPUs, from 10 to 40. The gang starts at 40 (its
    2nd bind): wait 30 s; 4 GPUs held at the samples 10, 20 and 30."""
    from fastsched.framework import Code, PermitPlugin, Status
    from fastsched.runtime import Registry
    from fastsched.scheduler.config_check import check_config
    from fastsched.sim.gangs import workload_gates

    class Hold(PermitPlugin):
        def __init__(self, handle):
            self.handle = handle

        def name(self):
            return "Hold"

        def permit(self, state, pod, node_name):
            if not pod.name.endswith("-1"):
                return None, 0.0
            uid = pod.uid
            self.handle.clock.after_func(30, lambda: self.handle.get_waiting_pod(uid).allow("Hold"))
            return Status(Code.WAIT), 60.0

    registry = Registry({"Hold": lambda args, handle: Hold(handle)})
    sc = Scenario.load(_scenario([_gang_stream(start=10, duration=1000)], until=100))
    sc.config = check_config({"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
                              "profiles": [{"plugins": {"permit": {"enabled": [{"name": "Hold"}]}}}]},
                             registry=registry, feature_gates=workload_gates())
    r = simulate(sc, sample_interval=10, registry=registry)
    assert {rec.name: rec.bind_time for rec in r.records} == {"train-00000-0": 10.0, "train-00000-1": 40.0}
    held = {row["time"]: row["gang_gpus_held_at_permit"] for row in r.timeseries if row["kind"] == "step"}
    assert held == {float(t): (4 if t in (10, 20, 30) else 0) for t in range(10, 101, 10)}
    [g] = r.gangs
    assert (g.created, g.started, g.wait) == (10.0, 40.0, 30.0)
    s = r.summary["gangs"]
    assert s["gpus_held_at_permit"]["max"] == 4 and s["gpus_held_at_permit"]["final"] == 0
    assert s["never_started"] == 0


def test_gpu_fragmentation():
    """Three nodes of 8 cpu / 4 GPUs; a pod with 2 GPUs pinned to node-00000, a 7.5-cpu pod pinned
    to node-00001; a gang member needs 1 cpu and 4 GPUs (its stream starts after the run). Free GPUs
    2 + 4 + 4 = 10; node-00000 has too few GPUs, node-00001 too little cpu: 6 stranded, 0.6."""
    r = simulate(_scenario([
        {"name": "a", "interval": 1000, "count": 1, "template": _template(gpus=2, node="node-00000")},
        {"name": "b", "interval": 1000, "count": 1, "template": _template(cpu="7500m", node="node-00001")},
        _gang_stream(start=500)], nodes=3, until=20), sample_interval=10)
    last = r.timeseries[-1]
    assert (last["gpus_free"], last["gpus_stranded"], last["gpu_fragmentation"]) == (10, 6, 0.6)
    assert r.timeseries[0]["gpu_fragmentation"] == 0.0  # at the start every node hosts a member
    assert r.summary["gangs"]["gpu_fragmentation"]["final"] == 0.6
    assert r.summary["gangs"]["total"] == 0


def test_a_given_configuration_gets_gang_scheduling_also_in_sweeps_with_plugins():
    """The scenario's configuration is loaded with GenericWorkload on (GangScheduling joins the
    default plugins), also when a sweep with out-of-tree plugins checks it against them; without a
    gang stream it is not."""
    from fastsched.runtime import Registry
    from fastsched.sim.sweep import _load_scenario

    config = {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration"}

    def names(sc):
        return [p.name for p in sc.config.profiles[0].plugins.multi_point.enabled]

    data = {**_scenario([_gang_stream()]), "config": config}
    assert names(Scenario.load(data))[-1] == "GangScheduling"
    assert names(_load_scenario(Scenario, data, ".", Registry({})))[-1] == "GangScheduling"
    plain = {**_scenario([{"name": "p", "interval": 1, "count": 1, "template": _template()}]), "config": config}
    assert "GangScheduling" not in names(Scenario.load(plain))


def test_a_gangs_cycle_costs_modelled_scheduler_time_per_member():
    """scheduler_time fixed 0.5 s per attempt + 0.1 s per bind: a gang of 2 bound in one group
    cycle costs 2 x 0.6 s; a gang of 3 that cannot fit, 3 x 0.5 s per failed cycle (its first at
    t=20, the run ends at 20.5 with until: 20.5 - no retry in between)."""
    r = simulate(_scenario([_gang_stream(start=10)], until=20, scheduler_time={"model": "fixed", "scheduling": 0.5,
                                                                                "binding": 0.1}))
    assert r.summary["scheduler_busy_seconds"] == pytest.approx(1.2)
    assert [rec.bind_time for rec in r.records] == [10.0, 10.0]
    r = simulate(_scenario([_gang_stream(pods=3, start=20)], until=20.5,
                           scheduler_time={"model": "fixed", "scheduling": 0.5}))
    assert r.summary["scheduler_busy_seconds"] == pytest.approx(1.5)
