"""VolumeZone: Skip and pass for pods without PVCs, rejection of the others, events."""
from __future__ import annotations

import random

import pytest

from fastsched.framework.cycle_state import CycleState
from fastsched.framework.interface import ActionType, ClusterEvent, EventResource
from fastsched.framework.status import Code
from fastsched.plugins import in_tree_registry
from fastsched.plugins.volumebinding.tests.support import (HARMLESS, VOLUMES, implemented_points, pod_with_volumes,
                                                           random_volume_pod, snake_volume, statuses_agree)
from fastsched.plugins.volumezone import NAME, REASON_NOT_MODELLED, VolumeZone, new
from fastsched.runtime.framework import new_framework
from fastsched.testing import assert_paths_equivalent, random_snapshot, single_plugin_profile


def test_reason_wording():
    assert REASON_NOT_MODELLED == "VolumeZone: pods with PersistentVolumeClaims are not modelled by fastsched"


def test_extension_points():
    plugin = new(None, None)
    assert implemented_points(plugin) == {"pre_filter", "filter"}
    assert plugin.pre_filter_extensions() is None


@pytest.mark.parametrize("volumes", [(), tuple(VOLUMES[s] for s in HARMLESS), (VOLUMES["ephemeral"],),
                                     (VOLUMES["gcePersistentDisk"],)])
def test_pods_without_pvcs(volumes):
    # Only persistentVolumeClaim volumes are looked at (generic ephemeral ones are not).
    plugin = VolumeZone()
    pod = pod_with_volumes(*volumes)
    state = CycleState()
    _, status = plugin.pre_filter(state, pod, [])
    assert status.code() == Code.SKIP
    # Filter without PreFilter state recomputes the (empty) PV topologies: every node passes.
    snapshot = random_snapshot(1, 30, 30)
    assert statuses_agree(plugin, state, pod, snapshot.batch()) == [None] * 30


def test_pods_with_pvcs_are_rejected():
    for volume in (VOLUMES["persistentVolumeClaim"], snake_volume("persistentVolumeClaim")):
        pod = pod_with_volumes(VOLUMES["configMap"], volume)
        _, status = VolumeZone().pre_filter(CycleState(), pod, [])
        assert (status.code(), status.reasons()) == (Code.UNSCHEDULABLE_AND_UNRESOLVABLE, [REASON_NOT_MODELLED])
        assert VolumeZone().filter(CycleState(), pod, None).reasons() == [REASON_NOT_MODELLED]


def test_events_to_register():
    add_update = ActionType.ADD | ActionType.UPDATE
    want = [ClusterEvent(EventResource.STORAGE_CLASS, ActionType.ADD),
            ClusterEvent(EventResource.NODE, ActionType.ADD | ActionType.UPDATE_NODE_LABEL),
            ClusterEvent(EventResource.PERSISTENT_VOLUME_CLAIM, add_update),
            ClusterEvent(EventResource.PERSISTENT_VOLUME, add_update)]
    assert [e.event for e in new(None, None).events_to_register()] == want
    no_hints = [e.event for e in VolumeZone(enable_scheduling_queue_hint=False).events_to_register()]
    assert no_hints[1].action_type == ActionType.ADD | ActionType.UPDATE_NODE_LABEL | ActionType.UPDATE_NODE_TAINT


def test_random_equivalence():
    fw = new_framework(in_tree_registry(), single_plugin_profile(NAME))
    plugin = fw.plugin(NAME)
    rejected = skipped = 0
    for seed in range(10):
        snapshot = random_snapshot(seed, 200, 400)
        batch = snapshot.batch()
        rng = random.Random(seed)
        for i in range(6):
            pod = random_volume_pod(rng, i, ("persistentVolumeClaim",))
            summary = assert_paths_equivalent(fw, snapshot, pod)
            verdicts = statuses_agree(plugin, CycleState(), pod, batch)
            if summary["prefilter"] is not None:
                assert summary["prefilter"].reasons() == [REASON_NOT_MODELLED]
                assert verdicts[0].reasons() == [REASON_NOT_MODELLED]
                rejected += 1
            else:
                assert summary["feasible"] == len(batch) and verdicts == [None] * len(batch)
                skipped += 1
    assert rejected >= 8 and skipped >= 30, (rejected, skipped)
