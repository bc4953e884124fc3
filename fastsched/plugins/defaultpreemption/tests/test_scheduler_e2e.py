"""DefaultPreemption end to end: ``Scheduler(config).add(...)`` then ``run()``.

The profile enables only the plugins these scenarios need, so the tests do not depend on every
default plugin being finished.
"""
from __future__ import annotations

from typing import Any

import pytest

from fastsched.api import PodDisruptionBudget, PriorityClass
from fastsched.scheduler.scheduler import Scheduler
from fastsched.testing import make_node, make_pod

PLUGINS = ["PrioritySort", "NodeUnschedulable", "TaintToleration", "NodeResourcesFit", "DefaultPreemption",
           "DefaultBinder"]


def config(plugins=PLUGINS, preemption_args=None) -> dict:
    profile: dict[str, Any] = {"schedulerName": "default-scheduler",
               "plugins": {"multiPoint": {"enabled": [{"name": n} for n in plugins],
                                          "disabled": [{"name": "*"}]}}}
    if preemption_args is not None:
        profile["pluginConfig"] = [{"name": "DefaultPreemption", "args": preemption_args}]
    return {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
            "profiles": [profile]}


@pytest.fixture
def scheduler():
    """A Scheduler factory (the default configuration of these tests unless one is given)."""
    return lambda cfg=None, **kw: Scheduler(config() if cfg is None else cfg, **kw)


def results_by_name(sched) -> dict:
    return {r.pod.name: r for r in sched.run()}


def test_high_priority_pod_preempts_the_lowest_priority_victim(scheduler):
    s = scheduler()
    s.add([make_node("n1", cpu="1", memory="1Gi"), make_node("n2", cpu="1", memory="1Gi")])
    s.add([make_pod("low", cpu="800m", priority=0, node_name="n1"),
           make_pod("mid", cpu="600m", priority=10, node_name="n2")])
    s.add(make_pod("high", cpu="500m", priority=100))
    res = results_by_name(s)
    assert res["high"].status == "Scheduled" and res["high"].node_name == "n1"
    assert res["high"].attempts == 2  # preempts, then fits once the victim is gone
    assert sorted(p.name for p in s.pods.values()) == ["high", "mid"]
    assert s.metrics.preemption_victims == 1


def test_priority_classes_and_reprieve(scheduler):
    s = scheduler()
    s.add([PriorityClass(name="critical", value=1000), PriorityClass(name="batch", value=1)])
    s.add(make_node("n1", cpu="2", memory="4Gi"))
    s.add([make_pod("b1", cpu="500m", node_name="n1", priorityClassName="batch"),
           make_pod("b2", cpu="1", node_name="n1", priorityClassName="batch"),
           make_pod("b3", cpu="200m", node_name="n1", priorityClassName="batch")])
    s.add(make_pod("crit", cpu="1", priorityClassName="critical"))
    res = results_by_name(s)
    assert res["crit"].status == "Scheduled" and res["crit"].node_name == "n1"
    # all three removed, then reprieved most important first (equal priority, no start time:
    # node order): b1 fits back, b2 does not, b3 fits back
    assert sorted(p.name for p in s.pods.values()) == ["b1", "b3", "crit"]


def test_preemption_policy_never_stays_pending(scheduler):
    s = scheduler()
    s.add(make_node("n1", cpu="1", memory="1Gi"))
    s.add(make_pod("low", cpu="800m", priority=0, node_name="n1"))
    s.add(make_pod("high", cpu="500m", priority=100, preemptionPolicy="Never"))
    res = results_by_name(s)
    assert res["high"].status == "Unschedulable"
    assert "preemption: not eligible due to preemptionPolicy=Never." in res["high"].message
    assert "low" in {p.name for p in s.pods.values()} and s.metrics.preemption_victims == 0


def test_pdb_protected_pod_is_spared(scheduler):
    s = scheduler()
    s.add([make_node("n1", cpu="1", memory="1Gi"), make_node("n2", cpu="1", memory="1Gi")])
    s.add([make_pod("guarded", cpu="800m", priority=0, node_name="n1", labels={"app": "db"}),
           make_pod("free", cpu="800m", priority=0, node_name="n2", labels={"app": "web"})])
    s.add(PodDisruptionBudget.from_manifest({
        "apiVersion": "policy/v1", "kind": "PodDisruptionBudget", "metadata": {"name": "db", "namespace": "default"},
        "spec": {"selector": {"matchLabels": {"app": "db"}}}, "status": {"disruptionsAllowed": 0}}))
    s.add(make_pod("high", cpu="500m", priority=100))
    res = results_by_name(s)
    assert res["high"].node_name == "n2"
    assert sorted(p.name for p in s.pods.values()) == ["guarded", "high"]


def test_preemption_cannot_help(scheduler):
    s = scheduler()
    s.add([make_node("n1", cpu="1", memory="1Gi"),
           make_node("n2", cpu="4", memory="1Gi", taints=[{"key": "k", "effect": "NoSchedule"}])])
    # removing "low" frees too little: "peer" has the preemptor's priority
    s.add([make_pod("low", cpu="300m", priority=0, node_name="n1"),
           make_pod("peer", cpu="600m", priority=100, node_name="n1")])
    s.add(make_pod("high", cpu="500m", priority=100))
    res = results_by_name(s)
    assert res["high"].status == "Unschedulable"
    msg = res["high"].message
    assert "preemption: 0/2 nodes are available: 1 Insufficient cpu, 1 Preemption is not helpful for scheduling." in msg
    assert res["high"].nominated_node_name is None
    assert "low" in {p.name for p in s.pods.values()}


def test_equal_priority_pods_are_never_victims(scheduler):
    s = scheduler()
    s.add(make_node("n1", cpu="1", memory="1Gi"))
    s.add(make_pod("running", cpu="800m", priority=100, node_name="n1"))
    s.add(make_pod("pending", cpu="500m", priority=100))
    res = results_by_name(s)
    assert res["pending"].status == "Unschedulable"
    assert ("preemption: 0/1 nodes are available: 1 No preemption victims found for incoming pod."
            in res["pending"].message)


def test_a_pod_scheduled_earlier_can_become_a_victim(scheduler):
    s = scheduler()
    s.add(make_node("n1", cpu="1", memory="1Gi"))
    s.add(make_pod("victim", cpu="1", priority=0, node_name="n1"))
    s.add(make_pod("mid", cpu="600m", priority=50))
    res = results_by_name(s)
    assert res["mid"].node_name == "n1"
    # a higher-priority pod now needs the room "mid" took: it preempts mid
    s.add(make_pod("high", cpu="600m", priority=100))
    res = results_by_name(s)
    assert res["high"].status == "Scheduled" and res["high"].node_name == "n1"
    assert res["mid"].status == "Deleted"
    assert s.metrics.preemption_victims == 2


@pytest.mark.parametrize("asynchronous", [False, True], ids=["sync", "async"])
def test_a_victim_deleted_meanwhile_is_neither_counted_nor_told(scheduler, asynchronous):
    """Two victims on one node; a preemption observer deletes the second as the first goes (a
    controller reacting, in a simulation). The second's deletion answers NotFound, which the
    preemption takes as already deleted (v1.37 executor.go PreemptPod); it was counted in
    ``metrics.preemption_victims`` (the pods deleted by preemption) and told to the observers
    all the same, so a simulation ended its record a second time. (The asynchronous path looked
    the victim up first already.)"""
    from fastsched.features import FeatureGates

    s = scheduler(feature_gates=FeatureGates({"SchedulerAsyncPreemption": asynchronous}))
    s.add([make_node("n1", cpu="1", memory="1Gi")])
    s.add([make_pod("low-a", cpu="400m", priority=0, node_name="n1"),
           make_pod("low-b", cpu="400m", priority=0, node_name="n1")])
    told = []

    def observer(victim, preemptor, node_name):
        told.append(victim.name)
        other = "low-b" if victim.name == "low-a" else "low-a"
        if s.get_pod("default", other) is not None:
            s.delete_pod(s.get_pod("default", other), reason="deleted by a controller")

    s.preemption_callbacks.append(observer)
    s.add(make_pod("high", cpu="900m", priority=100))
    res = results_by_name(s)
    assert res["high"].status == "Scheduled" and res["high"].node_name == "n1"
    assert len(told) == 1 and s.metrics.preemption_victims == 1
    assert sorted(p.name for p in s.pods.values()) == ["high"]


def test_preempting_a_pod_already_gone_answers_not_found_first(scheduler):
    from fastsched.errors import NotFoundError

    s = scheduler()
    s.add([make_node("n1", cpu="1", memory="1Gi")])
    s.add(make_pod("low", cpu="400m", priority=0, node_name="n1"))
    victim = s.get_pod("default", "low")
    told = []
    s.preemption_callbacks.append(lambda v, p, n: told.append(v.name))
    s.delete_pod(victim)
    with pytest.raises(NotFoundError, match='pods "low" not found'):
        s.cluster.preempt_pod(victim, make_pod("high", priority=100), "n1")
    assert told == [] and s.metrics.preemption_victims == 0
