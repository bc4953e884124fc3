"""A failed cycle's plugin sets (upstream findNodesThatPassFilters' diagnosis): a Filter plugin that
answers Pending on a node goes to the pod's pending plugins, one that answers Unschedulable to its
unschedulable plugins, and a node's first failing plugin only counts (RunFilterPlugins stops
there). The sets decide which events requeue the pod (the queueing hints)."""
from __future__ import annotations

import pytest

from fastsched import Scheduler, load_config
from fastsched.framework.status import Code, Status
from fastsched.runtime import Registry
from fastsched.scheduler.scheduler import UNSCHEDULABLE
from fastsched.testing import make_node, make_pod

CONFIG = """
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
  - schedulerName: default-scheduler
    plugins:
      filter: {enabled: [{name: Waits}, {name: Refuses}]}
"""


class _Answers:
    """A Filter plugin answering ``code`` on the nodes named in ``nodes`` (Success elsewhere)."""

    def __init__(self, name: str, code: Code, nodes: set[str]):
        self._name, self.code, self.nodes = name, code, nodes

    def name(self):
        return self._name

    def filter(self, state, pod, node_info):
        if node_info.node().name in self.nodes:
            return Status(self.code, f"{self._name} says no")
        return None


@pytest.mark.parametrize("waits, refuses, pending, unschedulable", [
    ({"n1"}, {"n2", "n3"}, {"Waits"}, {"Refuses"}),        # both kinds
    (set(), {"n1", "n2", "n3"}, set(), {"Refuses"}),       # no Pending verdict
    ({"n1", "n2", "n3"}, {"n1"}, {"Waits"}, set()),        # Pending first on every node
    ({"n1", "n2"}, {"n1", "n3"}, {"Waits"}, {"Refuses"}),  # n1: Waits answers first
])
def test_pending_and_unschedulable_plugins_of_a_failed_cycle(waits, refuses, pending, unschedulable):
    registry = Registry({"Waits": lambda args, handle: _Answers("Waits", Code.PENDING, waits),
                         "Refuses": lambda args, handle: _Answers("Refuses", Code.UNSCHEDULABLE, refuses)})
    s = Scheduler(load_config(CONFIG, registry_names=["Waits", "Refuses"]), registry=registry)
    for name in ("n1", "n2", "n3"):
        s.add_node(make_node(name, cpu="4"))
    s.add_pod(make_pod("p", cpu="1"))
    [p] = s.run()
    assert p.status == UNSCHEDULABLE
    [(qpi, _)] = [(q, where) for q, where in s.queue.queued_pod_infos() if q.pod.name == "p"]
    assert qpi.pending_plugins == pending
    assert qpi.unschedulable_plugins == unschedulable
