"""SchedulingGates: PreEnqueue message and the queueing hint of upstream's tests."""
from __future__ import annotations

import pytest

from fastsched.api import Pod
from fastsched.framework.interface import (ActionType, ClusterEvent, EventResource, PreEnqueuePlugin,
                                           QueueingHint)
from fastsched.framework.status import Code
from fastsched.plugins import in_tree_registry
from fastsched.plugins.schedulinggates import NAME, SchedulingGates, new
from fastsched.runtime.framework import new_framework
from fastsched.testing import make_pod, single_plugin_profile


def gated(name: str = "p", gates: tuple[str, ...] = (), uid: str = "") -> Pod:
    return Pod(name=name, uid=uid, scheduling_gates=gates)


@pytest.mark.parametrize("gates,want", [
    ((), None),
    (("foo",), "waiting for scheduling gates: [foo]"),
    (("foo", "bar"), "waiting for scheduling gates: [foo bar]"),
    (("example.com/a", ""), "waiting for scheduling gates: [example.com/a ]"),  # Go %v of an empty name
])
def test_pre_enqueue(gates, want):
    status = SchedulingGates().pre_enqueue(gated(gates=gates))
    if want is None:
        assert status is None
    else:
        assert status.code() == Code.UNSCHEDULABLE_AND_UNRESOLVABLE
        assert status.reasons() == [want]


def test_pre_enqueue_from_manifest_and_framework():
    pod = make_pod("p", schedulingGates=[{"name": "g1"}, {"name": "g2"}])
    fw = new_framework(in_tree_registry(), single_plugin_profile(NAME))
    [plugin] = fw.pre_enqueue_plugins()
    assert isinstance(plugin, PreEnqueuePlugin)
    assert plugin.pre_enqueue(pod).message() == "waiting for scheduling gates: [g1 g2]"
    assert plugin.pre_enqueue(make_pod("q")) is None


def test_events_to_register():
    [ev] = new(None, None).events_to_register()
    assert ev.event == ClusterEvent(EventResource.TARGET_POD, ActionType.UPDATE_POD_SCHEDULING_GATES_ELIMINATED)
    assert ev.queueing_hint_fn is not None
    assert SchedulingGates(enable_scheduling_queue_hint=False).events_to_register() == []


def test_is_schedulable_after_update_target_pod_scheduling_gates_eliminated():
    """Upstream TestIsSchedulableAfterUpdateTargetPodSchedulingGatesEliminated (v1.37.2)."""
    pod, old = gated("p", ("foo",)), gated("p", ("foo",))
    hint, error = SchedulingGates().is_schedulable_after_update_target_pod_scheduling_gates_eliminated(
        pod, old, gated("p", ()))
    assert (hint, error) == (QueueingHint.QUEUE, None)
