"""The start and end of the binding cycle at v1.37.2: NominatedNodeNameForExpectation (beta, on)
runs the PreBind pre-flights first (schedule_one.go ``bindingCycle``) and nominates the pod to its
node when a PreBind plugin will work; ClearingNominatedNodeNameAfterBinding (beta, on) leaves a
bound pod without a nominated node name. Each with its gate off, as upstream with it off."""
import pytest

from fastsched import Scheduler, load_config
from fastsched.framework import Code, Status
from fastsched.runtime import Registry
from fastsched.testing import make_node, pod_manifest


class PreBinder:
    """A PreBind plugin with a pre-flight answering ``pre_flight``; it records the nominated node
    name the API's pod had when its PreBind ran."""

    def __init__(self, pre_flight: Status | None):
        self.pre_flight, self.pre_binds, self.nominated_at_pre_bind = pre_flight, 0, []
        self.handle = None

    def name(self):
        return "PreBinder"

    def pre_bind_pre_flight(self, state, pod, node_name):
        return self.pre_flight

    def pre_bind(self, state, pod, node_name):
        self.pre_binds += 1
        self.nominated_at_pre_bind.append(self.handle.client.pods[pod.uid].nominated_node_name)
        return None


def scheduler(plugin: PreBinder, **gates) -> Scheduler:
    config = load_config("""
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
  - schedulerName: default-scheduler
    plugins:
      preBind: {enabled: [{name: PreBinder}]}
""", registry_names=["PreBinder"])

    def new(args, handle):
        plugin.handle = handle
        return plugin

    s = Scheduler(config, registry=Registry({"PreBinder": new}), feature_gates=gates or None, seed=1)
    s.add_nodes([make_node(f"n{i}", cpu="4") for i in range(3)])
    return s


def test_a_pod_whose_pre_bind_will_work_is_nominated_to_its_node_until_bound():
    plugin = PreBinder(None)  # Success: the plugin will work
    s = scheduler(plugin)
    s.add_pods([pod_manifest(f"p{i}", cpu="1") for i in range(4)])
    results = s.run()
    assert [r.status for r in results] == ["Scheduled"] * 4
    assert plugin.nominated_at_pre_bind == [r.node_name for r in results]
    assert all(not s.cluster.pods[r.pod.uid].nominated_node_name for r in results)


def test_pre_flight_skip_skips_the_plugin_and_nominates_nothing():
    plugin = PreBinder(Status(Code.SKIP))
    s = scheduler(plugin)
    s.add_pods([pod_manifest(f"p{i}", cpu="1") for i in range(3)])
    assert [r.status for r in s.run()] == ["Scheduled"] * 3
    assert plugin.pre_binds == 0


def test_with_the_gate_off_no_pre_flight_runs_and_pre_bind_always_does():
    plugin = PreBinder(Status(Code.SKIP))
    s = scheduler(plugin, NominatedNodeNameForExpectation=False)
    s.add_pods([pod_manifest(f"p{i}", cpu="1") for i in range(3)])
    assert [r.status for r in s.run()] == ["Scheduled"] * 3
    assert plugin.pre_binds == 3 and plugin.nominated_at_pre_bind == ["", "", ""]


@pytest.mark.parametrize("answer", [Status(Code.ERROR, "no state"), Status(Code.UNSCHEDULABLE, "nope")],
                         ids=["error", "unschedulable"])
def test_a_failed_pre_flight_fails_the_binding_cycle_and_loses_no_pod(answer):
    plugin = PreBinder(answer)
    s = scheduler(plugin)
    s.add_pods([pod_manifest(f"p{i}", cpu="1") for i in range(3)])
    results = s.run(until=5)
    assert plugin.pre_binds == 0
    for r in results:
        assert r.status in ("Error", "Unschedulable") and r.node_name is None
        assert "PreBindPreFlight" in r.message or "nope" in r.message
        assert not s.cluster.pods[r.pod.uid].nominated_node_name
    # nothing stays assumed: the nodes hold no pod
    assert all(len(s.snapshot.get(f"n{i}").pods) == 0 for i in range(3))


@pytest.mark.parametrize("clearing", [True, False])
def test_a_bound_pods_nomination_is_cleared_with_clearing_nominated_node_name_after_binding(clearing):
    plugin = PreBinder(Status(Code.SKIP))
    s = scheduler(plugin, ClearingNominatedNodeNameAfterBinding=clearing)
    m = pod_manifest("p", cpu="1")
    m["status"] = {"nominatedNodeName": "n2"}
    s.add_pods([m])
    (r,) = s.run()
    assert r.status == "Scheduled"
    assert s.cluster.pods[r.pod.uid].nominated_node_name == ("" if clearing else "n2")
