"""VolumeBinding: upstream's behaviour for pods without PVCs, rejection of the others, args, events."""
from __future__ import annotations

import random

import numpy as np
import pytest

from fastsched.config.args import UtilizationShapePoint, VolumeBindingArgs
from fastsched.config.types import KubeSchedulerProfile, Plugin, Plugins, PluginSet
from fastsched.framework.cycle_state import CycleState
from fastsched.framework.interface import ActionType, ClusterEvent, EventResource
from fastsched.framework.status import Code
from fastsched.plugins import in_tree_registry
from fastsched.plugins.volumebinding import NAME, REASON_NOT_MODELLED, STATE_KEY, VolumeBinding, new
from fastsched.runtime.framework import FrameworkError, new_framework
from fastsched.testing import assert_paths_equivalent, random_snapshot, single_plugin_profile

from .support import (HARMLESS, VOLUMES, implemented_points, pod_with_volumes, random_volume_pod, snake_volume,
                      statuses_agree)

UNMODELLED = ("persistentVolumeClaim", "ephemeral")


def test_reason_wording():
    assert REASON_NOT_MODELLED == ("VolumeBinding: pods with PersistentVolumeClaims or generic ephemeral volumes "
                                   "are not modelled by fastsched")


def test_extension_points():
    assert implemented_points(new(None, None)) == {"pre_filter", "filter", "pre_score", "score", "reserve", "pre_bind"}


@pytest.mark.parametrize("volumes", [(), tuple(VOLUMES[s] for s in HARMLESS),
                                     (VOLUMES["gcePersistentDisk"], VOLUMES["rbd"])])
def test_pod_without_pvcs_through_the_binding_cycle(volumes):
    plugin = new(None, None)
    pod = pod_with_volumes(*volumes)
    state = CycleState()
    result, status = plugin.pre_filter(state, pod, [])
    assert result is None and status.code() == Code.SKIP
    assert STATE_KEY in state
    assert plugin.pre_filter_extensions() is None
    # Filter does not run after Skip; called anyway it passes.
    assert plugin.filter(state, pod, None) is None
    assert plugin.pre_score(state, pod, []).code() == Code.SKIP
    assert plugin.score(state, pod, None) == (0, None)
    assert plugin.score_extensions() is None
    # Before Reserve nothing is known to be bound (upstream: allBound false, no volumes for the node).
    assert plugin.pre_bind_pre_flight(state, pod, "n1").message() == 'no pod volumes found for node "n1"'
    assert plugin.reserve(state, pod, "n1") is None
    assert plugin.pre_bind_pre_flight(state, pod, "n1").code() == Code.SKIP
    assert plugin.pre_bind(state, pod, "n1") is None
    assert plugin.unreserve(state, pod, "n1") is None
    # the state is shared by clones, as upstream's pointer
    assert state.clone().read(STATE_KEY) is state.read(STATE_KEY)


def test_without_prefilter_state_upstream_errors():
    plugin = VolumeBinding()
    pod = pod_with_volumes()
    state = CycleState()
    for status in (plugin.filter(state, pod, None), plugin.reserve(state, pod, "n"),
                   plugin.pre_bind_pre_flight(state, pod, "n"), plugin.pre_bind(state, pod, "n")):
        assert status.code() == Code.ERROR and status.reasons() == ["not found"]
    assert plugin.pre_score(state, pod, []).code() == Code.SKIP  # no scorer: Skip before reading state


@pytest.mark.parametrize("source", UNMODELLED)
def test_pods_with_pvcs_are_rejected(source):
    plugin = new(None, None)
    for volume in (VOLUMES[source], snake_volume(source)):
        pod = pod_with_volumes(VOLUMES["emptyDir"], volume)
        state = CycleState()
        _, status = plugin.pre_filter(state, pod, [])
        assert status.code() == Code.UNSCHEDULABLE_AND_UNRESOLVABLE
        assert status.reasons() == [REASON_NOT_MODELLED]
        assert STATE_KEY not in state


def test_rejection_through_the_framework():
    fw = new_framework(in_tree_registry(), single_plugin_profile(NAME))
    _, status, _ = fw.run_pre_filter_plugins(CycleState(), pod_with_volumes(VOLUMES["ephemeral"]), [])
    assert (status.code(), status.reasons(), status.plugin()) == (
        Code.UNSCHEDULABLE_AND_UNRESOLVABLE, [REASON_NOT_MODELLED], NAME)


def test_default_profile_points_and_weight():
    # MultiPoint without a weight, as in upstream's default profile: Score weight defaults to 1.
    plugins = Plugins()
    plugins.multi_point = PluginSet([Plugin("PrioritySort"), Plugin(NAME), Plugin("DefaultBinder")])
    fw = new_framework(in_tree_registry(), KubeSchedulerProfile(scheduler_name="s", plugins=plugins))
    listed = fw.list_plugins()
    for point in ("pre_filter", "filter", "reserve", "pre_score", "pre_bind"):
        assert [p.name for p in getattr(listed, point).enabled] == [NAME]
    assert [(p.name, p.weight) for p in listed.score.enabled] == [(NAME, 1)]
    assert listed.post_filter.enabled == [] and listed.pre_enqueue.enabled == []


def test_args_validation():
    assert new(VolumeBindingArgs(bind_timeout_seconds=0), None).args.bind_timeout_seconds == 0
    with pytest.raises(ValueError) as e:
        new(VolumeBindingArgs(bind_timeout_seconds=-1), None)
    assert str(e.value) == ("bindTimeoutSeconds: Invalid value: -1: "
                            "invalid BindTimeoutSeconds, should not be a negative value")
    with pytest.raises(ValueError, match="turn on the feature gate StorageCapacityScoring"):
        new(VolumeBindingArgs(shape=[UtilizationShapePoint(0, 0)]), None)
    with pytest.raises(ValueError) as e:
        new({"bindTimeoutSeconds": 5}, None)
    assert str(e.value) == "want args to be of type VolumeBindingArgs, got dict"
    with pytest.raises(FrameworkError, match='initializing plugin "VolumeBinding": bindTimeoutSeconds'):
        new_framework(in_tree_registry(), single_plugin_profile(NAME, args=VolumeBindingArgs(bind_timeout_seconds=-5)))


def test_events_to_register():
    add_update = ActionType.ADD | ActionType.UPDATE
    want = [
        ClusterEvent(EventResource.STORAGE_CLASS, add_update),
        ClusterEvent(EventResource.PERSISTENT_VOLUME_CLAIM, add_update),
        ClusterEvent(EventResource.PERSISTENT_VOLUME, add_update),
        ClusterEvent(EventResource.NODE, ActionType.ADD | ActionType.UPDATE_NODE_LABEL),
        ClusterEvent(EventResource.CSI_NODE, add_update),
        ClusterEvent("storage.k8s.io/CSIDriver", ActionType.UPDATE),
        ClusterEvent("storage.k8s.io/CSIStorageCapacity", add_update),
    ]
    assert [e.event for e in new(None, None).events_to_register()] == want
    no_hints = [e.event for e in VolumeBinding(enable_scheduling_queue_hint=False).events_to_register()]
    assert no_hints[3] == ClusterEvent(EventResource.NODE, ActionType.ADD | ActionType.UPDATE_NODE_LABEL
                                       | ActionType.UPDATE_NODE_TAINT)


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
                skipped += 1
                assert summary["feasible"] == len(batch)
            # Filter and Score called directly (as if PreFilter had not skipped them) agree too.
            state = CycleState()
            plugin.pre_filter(state, pod, batch)
            verdicts = statuses_agree(plugin, state, pod, batch)
            assert all(v is None for v in verdicts) or summary["prefilter"] is not None
            scores, _ = plugin.score_vectorized(state, pod, batch)
            assert scores.dtype == np.int64 and scores.tolist() == [plugin.score(state, pod, v)[0] for v in batch]
            assert statuses_agree(plugin, CycleState(), pod, batch)[0].code() == Code.ERROR
    assert rejected >= 8 and skipped >= 30, (rejected, skipped)
