"""NodeName: upstream's node_name_test.go cases, and batch == per-node."""
from __future__ import annotations

import random

import pytest

from fastsched.api import Pod
from fastsched.framework import ActionType, Code, CycleState, EventResource, NodeInfo
from fastsched.plugins.helper.tests.support import single_plugin_framework
from fastsched.plugins.nodename import ERR_REASON, NAME, NodeName, new
from fastsched.snapshot import build_snapshot
from fastsched.testing import assert_paths_equivalent, make_node, random_pod, random_snapshot


def _verdict(status):
    return None if status is None else (status.code(), status.reasons())


@pytest.mark.parametrize("pod_node_name, want", [
    ("", None),                                                     # no host specified
    ("foo", None),                                                  # host matches
    ("bar", (Code.UNSCHEDULABLE_AND_UNRESOLVABLE, [ERR_REASON])),   # host doesn't match
    ("missing", (Code.UNSCHEDULABLE_AND_UNRESOLVABLE, [ERR_REASON])),
])
def test_filter(pod_node_name, want):
    snapshot = build_snapshot([make_node("foo"), make_node("bar")])
    pod = Pod(name="p", node_name=pod_node_name)
    plugin = new(None, None)
    assert _verdict(plugin.filter(CycleState(), pod, NodeInfo(make_node("foo")))) == want
    batch = snapshot.batch()
    position = batch.names.index("foo")
    assert _verdict(plugin.filter_vectorized(CycleState(), pod, batch).status(position)) == want


def test_events_to_register():
    assert [(e.event.resource, e.event.action_type) for e in NodeName().events_to_register()] == [
        (EventResource.NODE, ActionType.ADD)]
    assert [e.event.action_type for e in NodeName(enable_scheduling_queue_hint=False).events_to_register()] == [
        ActionType.ADD | ActionType.UPDATE_NODE_TAINT | ActionType.UPDATE_NODE_LABEL]


@pytest.mark.parametrize("seed", range(10))
def test_batch_equals_per_node(seed):
    fw = single_plugin_framework(NAME)
    snapshot = random_snapshot(seed, 250, 500)
    rng = random.Random(seed)
    pinned = 0
    for i in range(8):
        pod = random_pod(rng, i)
        if i % 2:
            pod = pod.replace(node_name=rng.choice((f"node-{rng.randint(0, 249):05d}", "node-99999")))
        summary = assert_paths_equivalent(fw, snapshot, pod)
        if pod.node_name:
            pinned += 1
            assert summary["feasible"] == (1 if pod.node_name in snapshot.table.row_of else 0)
    assert pinned >= 4


# -- TestNodeName_PreFilter (v1.37.2 node_name_test.go) ---------------------------------------------
@pytest.mark.parametrize("node_name, want", [
    ("foo", frozenset({"foo"})),   # assigned pod with nodeName set, prefilter restricts to assigned node
    ("", None),                    # unassigned pod without nodeName set, prefilter returns nil
], ids=["assigned", "unassigned"])
def test_pre_filter(node_name, want):
    pod = Pod.from_manifest({"metadata": {"name": "p"}, "spec": {"nodeName": node_name, "containers": []}},
                            validate=False)
    result, status = NodeName().pre_filter(CycleState(), pod, [])
    assert status is None or status.is_success()
    assert (None if result is None else result.node_names) == want
