"""VolumeRestrictions: Skip for pods without checked volumes, rejection of the others, events."""
from __future__ import annotations

import random

import pytest

from fastsched.framework.cycle_state import CycleState
from fastsched.framework.interface import ActionType, ClusterEvent, EventResource
from fastsched.framework.status import Code
from fastsched.framework.types import PodInfo
from fastsched.plugins import in_tree_registry
from fastsched.plugins.volumebinding.tests.support import (HARMLESS, VOLUMES, implemented_points, pod_with_volumes,
                                                           random_volume_pod, snake_volume, statuses_agree)
from fastsched.plugins.volumerestrictions import (NAME, PRE_FILTER_STATE_KEY, REASON_NOT_MODELLED,
                                                  VolumeRestrictions, new)
from fastsched.runtime.framework import new_framework
from fastsched.testing import assert_paths_equivalent, random_snapshot, single_plugin_profile

UNMODELLED = ("persistentVolumeClaim", "gcePersistentDisk", "awsElasticBlockStore", "rbd", "iscsi")
STATE_ERROR = 'cannot read "PreFilterVolumeRestrictions" from cycleState'


def test_reason_wording():
    assert REASON_NOT_MODELLED == ("VolumeRestrictions: pods with PersistentVolumeClaims or gcePersistentDisk, "
                                   "awsElasticBlockStore, rbd or iscsi volumes are not modelled by fastsched")


def test_extension_points():
    plugin = new(None, None)
    assert implemented_points(plugin) == {"pre_filter", "filter"}
    assert plugin.pre_filter_extensions() is plugin


@pytest.mark.parametrize("volumes", [(), tuple(VOLUMES[s] for s in HARMLESS), (VOLUMES["ephemeral"],),
                                     (VOLUMES["cinder"], VOLUMES["azureDisk"])])
def test_skip_for_pods_without_checked_volumes(volumes):
    # Generic ephemeral volumes and other inline types are not looked at by upstream.
    pod = pod_with_volumes(*volumes)
    state = CycleState()
    _, status = VolumeRestrictions().pre_filter(state, pod, [])
    assert status.code() == Code.SKIP
    assert PRE_FILTER_STATE_KEY not in state


@pytest.mark.parametrize("source", UNMODELLED)
def test_pods_with_checked_volumes_are_rejected(source):
    for volume in (VOLUMES[source], snake_volume(source)):
        _, status = VolumeRestrictions().pre_filter(CycleState(), pod_with_volumes(VOLUMES["emptyDir"], volume), [])
        assert (status.code(), status.reasons()) == (Code.UNSCHEDULABLE_AND_UNRESOLVABLE, [REASON_NOT_MODELLED])


def test_filter_and_extensions_without_prefilter_state():
    # Upstream: no disk conflict is possible, then the missing PreFilter state is an Error.
    plugin = VolumeRestrictions()
    pod = pod_with_volumes(VOLUMES["emptyDir"])
    state = CycleState()
    status = plugin.filter(state, pod, None)
    assert (status.code(), status.reasons()) == (Code.ERROR, [STATE_ERROR])
    pi = PodInfo(pod_with_volumes(name="other"))
    assert plugin.add_pod(state, pod, pi, None).reasons() == [STATE_ERROR]
    assert plugin.remove_pod(state, pod, pi, None).reasons() == [STATE_ERROR]
    # An unmodelled pod gets the rejection instead (upstream would need PVCs / the node's pods' disks).
    status = plugin.filter(state, pod_with_volumes(VOLUMES["iscsi"]), None)
    assert status.reasons() == [REASON_NOT_MODELLED]


def test_framework_skips_filter_after_prefilter_skip():
    fw = new_framework(in_tree_registry(), single_plugin_profile(NAME))
    snapshot = random_snapshot(3, 50, 60)
    summary = assert_paths_equivalent(fw, snapshot, pod_with_volumes(VOLUMES["nfs"]))
    assert summary["prefilter"] is None and summary["feasible"] == 50


def test_events_to_register():
    want = [ClusterEvent(EventResource.POD, ActionType.DELETE), ClusterEvent(EventResource.NODE, ActionType.ADD),
            ClusterEvent(EventResource.PERSISTENT_VOLUME_CLAIM, ActionType.ADD)]
    assert [e.event for e in new(None, None).events_to_register()] == want
    no_hints = [e.event for e in VolumeRestrictions(enable_scheduling_queue_hint=False).events_to_register()]
    assert no_hints[1] == ClusterEvent(EventResource.NODE, ActionType.ADD | ActionType.UPDATE_NODE_TAINT
                                       | ActionType.UPDATE_NODE_LABEL)


def test_random_equivalence():
    fw = new_framework(in_tree_registry(), single_plugin_profile(NAME))
    plugin = fw.plugin(NAME)
    rejected = skipped = 0
    for seed in range(10):
        snapshot = random_snapshot(seed, 200, 400)
        batch = snapshot.batch()
        rng = random.Random(seed)
        for i in range(6):
            pod = random_volume_pod(rng, i, UNMODELLED)
            summary = assert_paths_equivalent(fw, snapshot, pod)
            if summary["prefilter"] is not None:
                assert summary["prefilter"].reasons() == [REASON_NOT_MODELLED]
                rejected += 1
            else:
                assert summary["feasible"] == len(batch)
                skipped += 1
            verdicts = statuses_agree(plugin, CycleState(), pod, batch)
            assert verdicts[0].reasons() == ([REASON_NOT_MODELLED] if summary["prefilter"] else [STATE_ERROR])
    assert rejected >= 8 and skipped >= 30, (rejected, skipped)
