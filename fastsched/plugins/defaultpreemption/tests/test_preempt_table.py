"""Upstream v1.37.2 ``default_preemption_test.go`` ``TestPreempt``, every row, with asynchronous
preemption on and off (as upstream runs each row; the asynchronous API calls land at once here,
``api_delay`` 0, so the evictions are read right after PostFilter).

As upstream's test: nodes of ``veryLargeRes`` named ``name/zone`` (labels hostname, zone), the row's
plugin at PreFilter and Filter, every node Unschedulable, the preemptor re-read from the cluster.
Upstream also checks the DisruptionTarget patch of each victim and calls Preempt a second time
(that check is vacuous: it clears the deleted set first); the fake client here records evictions
only. Priorities low 0, mid 100, high 1000.
"""
from __future__ import annotations

import pytest

from fastsched.api import PREEMPT_LOWER_PRIORITY, PREEMPT_NEVER

from .support import (HIGH, LARGE, LOW, MEDIUM, MID, SMALL, VERY_LARGE, FakeExtender, Setup, big_node, pod,
                      unschedulable_on)

NODES3 = ["node1", "node2", "node3"]
FOO = {"foo": ""}


def preemptor(policy: str | None = PREEMPT_LOWER_PRIORITY):
    return pod("p", priority=HIGH, req=VERY_LARGE, preemption_policy=policy)


def basic_pods():
    return [pod("p1.1", node_name="node1", priority=LOW, req=SMALL),
            pod("p1.2", node_name="node1", priority=LOW, req=SMALL),
            pod("p2.1", node_name="node2", priority=HIGH, req=LARGE),
            pod("p3.1", node_name="node3", priority=MID, req=MEDIUM)]


def extender_pods(p21_node="node2"):
    return [pod("p1.1", node_name="node1", priority=MID, req=SMALL),
            pod("p1.2", node_name="node1", priority=LOW, req=SMALL),
            pod("p2.1", node_name=p21_node, priority=MID, req=LARGE)]


def spread_on(key):
    return {"maxSkew": 1, "topologyKey": key, "whenUnsatisfiable": "DoNotSchedule",
            "labelSelector": {"matchExpressions": [{"key": "foo", "operator": "Exists"}]}}


NODE1_ONLY = (lambda n: n == "node1")  # noqa: E731 - upstream's Node1PredicateExtender

# name -> (preemptor, pods, extenders (factories), node names, filter plugin, nominated node, victims)
ROWS: dict[str, tuple] = {
    "basic preemption logic": (
        preemptor(), basic_pods(), (), NODES3, "NodeResourcesFit", "node1", ["p1.1", "p1.2"]),
    "preemption for topology spread constraints": (
        pod("p", labels=FOO, priority=HIGH, topologySpreadConstraints=[spread_on("zone"), spread_on("hostname")]),
        [pod("p-a1", node_name="node-a", labels=FOO, priority=HIGH),
         pod("p-a2", node_name="node-a", labels=FOO, priority=HIGH),
         pod("p-b1", node_name="node-b", labels=FOO, priority=LOW),
         pod("p-x1", node_name="node-x", labels=FOO, priority=HIGH),
         pod("p-x2", node_name="node-x", labels=FOO, priority=HIGH)],
        (), ["node-a/zone1", "node-b/zone1", "node-x/zone2"], "PodTopologySpread", "node-b", ["p-b1"]),
    "Scheduler extenders allow only node1, otherwise node3 would have been chosen": (
        preemptor(), extender_pods("node3"), (lambda: FakeExtender(), lambda: FakeExtender(keep=NODE1_ONLY)), NODES3,
        "NodeResourcesFit", "node1", ["p1.1", "p1.2"]),
    "Scheduler extenders do not allow any preemption": (
        preemptor(), extender_pods(), (lambda: FakeExtender(keep=lambda n: False),), NODES3, "NodeResourcesFit",
        None, []),
    "One scheduler extender allows only node1, the other returns error but ignorable. Only node1 would be chosen": (
        preemptor(), extender_pods(),
        (lambda: FakeExtender(error=True, ignorable=True), lambda: FakeExtender(keep=NODE1_ONLY)), NODES3,
        "NodeResourcesFit", "node1", ["p1.1", "p1.2"]),
    "One scheduler extender allows only node1, but it is not interested in given pod, otherwise node1 would have "
    "been chosen": (
        # the sum of the victims' priorities on node1 is larger than on node2: node2 is chosen
        preemptor(), extender_pods(), (lambda: FakeExtender(keep=NODE1_ONLY, interested=False), lambda: FakeExtender()),
        ["node1", "node2"], "NodeResourcesFit", "node2", ["p2.1"]),
    "no preempting in pod": (
        preemptor(PREEMPT_NEVER), basic_pods(), (), NODES3, "NodeResourcesFit", None, []),
    "PreemptionPolicy is nil": (
        preemptor(None), basic_pods(), (), NODES3, "NodeResourcesFit", "node1", ["p1.1", "p1.2"]),
}


@pytest.mark.parametrize("async_preemption", [True, False], ids=["async", "sync"])
@pytest.mark.parametrize("name", list(ROWS), ids=list(ROWS))
def test_preempt(name, async_preemption):
    p, pods, extenders, node_specs, plugin, want_node, want_victims = ROWS[name]
    nodes = []
    for spec in node_specs:
        labels = dict(zip(("hostname", "zone", "region"), spec.split("/")))
        nodes.append(big_node(labels["hostname"], labels=labels))
    s = Setup(nodes, pods, p, filters=[plugin], extenders=[make() for make in extenders],
              async_preemption=async_preemption)
    if async_preemption:
        s.plugin.api_delay = 0
    result, status = s.post_filter(unschedulable_on(*(n.name for n in nodes)))
    assert status.is_success() or status.is_rejected(), status
    got_node = None if result is None else result.nominating_info.nominated_node_name
    assert got_node == want_node, status
    assert sorted(s.client.victims) == want_victims
