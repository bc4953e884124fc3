"""Terminating pods through the Scheduler: upstream's ``countPodsMatchSelector`` skips a pod with a
``deletionTimestamp`` (PreFilter's and PreScore's counts, Score's per-node count for the hostname
key), so a pod that *becomes* terminating on its node stops counting at once.

fastsched counts from the node table (count subscriptions, which count every pod, and the
``terminating_pods`` column, by which the terminating ones are subtracted), with or without decision
records: a pod updated to terminating must move both, and the answers must be upstream's, worked
out below. The per-node path (PreFilter and PreScore over a list of NodeInfos, counting pod by pod)
must give the same states on the Scheduler's snapshot after such an update.
"""
from __future__ import annotations

import pytest

from fastsched import Scheduler
from fastsched.api import Pod

from .test_pod_topology_spread import assert_same_state

HOSTNAME = "kubernetes.io/hostname"


def _node(name: str) -> dict:
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": {HOSTNAME: name}},
            "status": {"allocatable": {"cpu": "8", "memory": "16Gi", "pods": "110"}}}


def _pod(name: str, node: str | None = None, *, when: str | None = None) -> dict:
    spec: dict = {"containers": [{"name": "c", "image": "busybox", "resources": {"requests": {"cpu": "100m"}}}]}
    if node:
        spec["nodeName"] = node
    if when:
        spec["topologySpreadConstraints"] = [{"maxSkew": 1, "topologyKey": HOSTNAME, "whenUnsatisfiable": when,
                                              "labelSelector": {"matchLabels": {"app": "web"}}}]
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "default",
                                                            "labels": {"app": "web"}}, "spec": spec}


def _cluster(record: str | None, terminate: tuple[str, ...]) -> Scheduler:
    s = Scheduler(seed=0, record=record)
    s.add([_node("n0"), _node("n1"), _node("n2")])
    # n0: 2 web pods, n1: 1, n2: 1
    s.add([_pod("a0", "n0"), _pod("a1", "n0"), _pod("b0", "n1"), _pod("c0", "n2")])
    for name in terminate:  # being deleted (graceful termination): still on the node
        current = s.get_pod("default", name)
        s.update_pod(current.replace(deletion_timestamp=s.clock.now()))
    return s


def _run(record: str | None, when: str, terminate: tuple[str, ...]) -> tuple[str, str]:
    s = _cluster(record, terminate)
    s.add(_pod("incoming", when=when))
    (result,) = [r for r in s.run() if r.pod.name == "incoming"]
    return result.status, result.node_name or ""


@pytest.mark.parametrize("record", [None, "all"], ids=["fast", "plugin"])
@pytest.mark.parametrize("when", ["DoNotSchedule", "ScheduleAnyway"])
def test_a_pod_that_becomes_terminating_stops_counting(record, when):
    # n0's two pods terminating: counts n0 0, n1 1, n2 1. DoNotSchedule: only n0 keeps the skew
    # within 1 (n1 and n2 would make it 2 - 0). ScheduleAnyway: n0 scores best (fewest matches).
    assert _run(record, when, ("a0", "a1")) == ("Scheduled", "n0")


@pytest.mark.parametrize("record", [None, "all"], ids=["fast", "plugin"])
def test_live_pods_count(record):
    # nothing terminating: counts n0 2, n1 1, n2 1; n0 would make the skew 3 - 1; n1 and n2 tie
    # (the seeded choice between them is the same on both paths)
    status, node = _run(record, "DoNotSchedule", ())
    assert status == "Scheduled" and node in ("n1", "n2")


def test_both_paths_agree_with_one_terminating_pod():
    # a1 terminating: counts n0 1, n1 1, n2 1, every node keeps the skew within 1
    assert _run(None, "DoNotSchedule", ("a1",)) == _run("all", "DoNotSchedule", ("a1",))


@pytest.mark.parametrize("terminate", [(), ("a1",), ("a0", "a1"), ("b0", "c0")])
@pytest.mark.parametrize("when", ["DoNotSchedule", "ScheduleAnyway"])
def test_per_node_path_agrees_after_the_update(terminate, when):
    s = _cluster(None, terminate)
    snapshot = s.cache.update_snapshot()
    assert int(snapshot.table.terminating_pods.sum()) == len(terminate)
    plugin = s.profiles["default-scheduler"].plugin("PodTopologySpread")
    incoming = Pod.from_manifest(_pod("incoming", when=when))
    assert_same_state(plugin, snapshot, incoming)
