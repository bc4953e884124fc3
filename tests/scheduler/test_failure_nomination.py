"""The failure handler re-files the failed pod's nomination from the pod it just read, as upstream's
``handleSchedulingFailure`` calls ``AddNominatedPod(podInfo.PodInfo, nominatingInfo)`` whatever the
info (a nil one is mode Noop: the pod's own ``status.nominatedNodeName``).

A nomination withdrawn through the API while the pod is in flight (an external component clearing
``status.nominatedNodeName``; the queue only records events for a pod in flight) must be dropped
when the attempt fails without a PostFilter answer; kept, it holds its node's room against every
pod of lower or equal priority.
"""
from __future__ import annotations

import pytest

from fastsched import Scheduler, load_config
from fastsched.runtime import Registry
from fastsched.scheduler.scheduler import SCHEDULED, UNSCHEDULABLE
from fastsched.testing import make_node, make_pod, pod_manifest

CONFIG = """
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
  - schedulerName: default-scheduler
    plugins:
      preFilter: {enabled: [{name: Withdraw}]}
"""


class Withdraw:
    """At PreFilter, clears the pod's status.nominatedNodeName through the API when ``withdraw``
    (what a cluster autoscaler withdrawing its expectation does), while the pod is in flight."""

    def __init__(self, holder: dict, withdraw: bool):
        self.holder, self.withdraw = holder, withdraw

    def name(self):
        return "Withdraw"

    def pre_filter(self, state, pod, nodes=None):
        s = self.holder["s"]
        live = s.get_pod(pod.namespace, pod.name)
        if self.withdraw and live.nominated_node_name:
            s.update_pod(live.replace(nominated_node_name=""))
        return None, None

    def pre_filter_extensions(self):
        return None


@pytest.mark.parametrize("withdraw", [True, False])
def test_a_nomination_withdrawn_in_flight_is_dropped_when_the_attempt_fails(withdraw):
    holder: dict = {}
    s = Scheduler(load_config(CONFIG, registry_names=["Withdraw"]),
                  registry=Registry({"Withdraw": lambda args, handle: Withdraw(holder, withdraw)}))
    holder["s"] = s
    s.add_node(make_node("n1", cpu="2"))
    # p never fits (its selector) and never preempts (PostFilter answers no nominating info)
    manifest = pod_manifest("p", cpu="2", priority=100, nodeSelector={"zone": "nowhere"},
                            preemptionPolicy="Never")
    manifest["status"] = {"nominatedNodeName": "n1"}
    s.add_pod(manifest)
    [p] = s.run()
    assert p.status == UNSCHEDULABLE
    assert (s.queue.nominator.nominated_node_for(p.pod.uid) is None) == withdraw
    assert s.get_pod("default", "p").nominated_node_name == ("" if withdraw else "n1")
    s.add_pod(make_pod("q", cpu="2", priority=0))
    q = {r.pod.name: r for r in s.run()}["q"]
    if withdraw:  # n1's room is free: upstream schedules q there
        assert (q.status, q.node_name) == (SCHEDULED, "n1")
    else:  # n1's room is p's (a nominated pod of higher priority counts in Filter)
        assert q.status == UNSCHEDULABLE and "Insufficient cpu" in q.message
