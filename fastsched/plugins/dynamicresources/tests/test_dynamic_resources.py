"""DynamicResources: upstream's behaviour for pods without claims, rejection of the others, args, events."""
from __future__ import annotations

import random

import pytest

from fastsched.config.args import DynamicResourcesArgs
from fastsched.config.types import KubeSchedulerProfile, Plugin, Plugins, PluginSet
from fastsched.framework.cycle_state import CycleState
from fastsched.framework.interface import ActionType, ClusterEvent, EventResource
from fastsched.framework.status import Code
from fastsched.framework.types import NodeToStatus
from fastsched.plugins import in_tree_registry
from fastsched.plugins.dynamicresources import (NAME, NO_NEW_CLAIMS_TO_DEALLOCATE, REASON_NOT_MODELLED, STATE_KEY,
                                                DynamicResources, new)
from fastsched.plugins.volumebinding.tests.support import (implemented_points, pod_with_volumes, random_volume_pod,
                                                           statuses_agree)
from fastsched.runtime.framework import FrameworkError, new_framework
from fastsched.testing import assert_paths_equivalent, random_snapshot, single_plugin_profile

CLAIM = {"name": "gpu", "resourceClaimName": "my-gpu-claim"}
TEMPLATE_CLAIM = {"name": "gpu", "resourceClaimTemplateName": "gpu-template"}


def test_reason_wording():
    assert REASON_NOT_MODELLED == "DynamicResources: pods with resource claims are not modelled by fastsched"


def test_extension_points():
    assert implemented_points(new(None, None)) == {"pre_enqueue", "pre_filter", "filter", "post_filter", "reserve",
                                                   "pre_bind"}


def test_pod_without_claims_through_the_cycle():
    plugin = new(None, None)
    pod = pod_with_volumes()
    assert plugin.pre_enqueue(pod) is None
    state = CycleState()
    result, status = plugin.pre_filter(state, pod, [])
    assert result is None and status.code() == Code.SKIP
    assert STATE_KEY in state
    assert plugin.pre_filter_extensions() is None
    assert plugin.filter(state, pod, None) is None
    result, status = plugin.post_filter(state, pod, NodeToStatus())
    assert result is None
    assert (status.code(), status.reasons()) == (Code.UNSCHEDULABLE, [NO_NEW_CLAIMS_TO_DEALLOCATE])
    assert plugin.reserve(state, pod, "n1") is None
    assert plugin.pre_bind_pre_flight(state, pod, "n1").code() == Code.SKIP
    assert plugin.pre_bind(state, pod, "n1") is None
    assert plugin.unreserve(state, pod, "n1") is None


def test_without_prefilter_state_upstream_errors():
    plugin = DynamicResources()
    pod = pod_with_volumes()
    state = CycleState()
    statuses = [plugin.filter(state, pod, None), plugin.post_filter(state, pod, NodeToStatus())[1],
                plugin.reserve(state, pod, "n"), plugin.pre_bind_pre_flight(state, pod, "n"),
                plugin.pre_bind(state, pod, "n")]
    assert all((s.code(), s.reasons()) == (Code.ERROR, ["not found"]) for s in statuses)
    assert plugin.unreserve(state, pod, "n") is None


@pytest.mark.parametrize("claim", [CLAIM, TEMPLATE_CLAIM])
def test_pods_with_claims_are_rejected_at_prefilter(claim):
    plugin = DynamicResources()
    pod = pod_with_volumes(claims=[claim])
    assert plugin.pre_enqueue(pod) is None  # claims cannot be looked up; PreFilter rejects
    state = CycleState()
    _, status = plugin.pre_filter(state, pod, [])
    assert (status.code(), status.reasons()) == (Code.UNSCHEDULABLE_AND_UNRESOLVABLE, [REASON_NOT_MODELLED])
    assert STATE_KEY in state  # upstream stores the state before reading the claims
    assert plugin.filter(state, pod, None).reasons() == [REASON_NOT_MODELLED]
    # upstream's claims list is still empty in the state, so PostFilter has nothing to deallocate
    assert plugin.post_filter(state, pod, NodeToStatus())[1].reasons() == [NO_NEW_CLAIMS_TO_DEALLOCATE]


def test_post_filter_in_the_framework():
    fw = new_framework(in_tree_registry(), single_plugin_profile(NAME))
    state = CycleState()
    fw.run_pre_filter_plugins(state, pod_with_volumes(), [])
    _, status = fw.run_post_filter_plugins(state, pod_with_volumes(), NodeToStatus())
    assert (status.code(), status.reasons(), status.plugin()) == (
        Code.UNSCHEDULABLE, [NO_NEW_CLAIMS_TO_DEALLOCATE], NAME)
    state = CycleState()
    assert fw.run_reserve_plugins_reserve(state, pod_with_volumes(), "n").message() == \
        'running Reserve plugin "DynamicResources": not found'


def test_multi_point_expansion_of_the_unmodelled_plugins():
    # Upstream's default MultiPoint order restricted to the plugins of this package family.
    order = ["SchedulingGates", "PrioritySort", "VolumeRestrictions", "NodeVolumeLimits", "VolumeBinding", "VolumeZone",
             "DynamicResources", "ImageLocality", "DefaultBinder"]
    plugins = Plugins()
    plugins.multi_point = PluginSet([Plugin(n, 1 if n == "ImageLocality" else 0) for n in order])
    fw = new_framework(in_tree_registry(), KubeSchedulerProfile(scheduler_name="s", plugins=plugins))
    listed = fw.list_plugins()
    names = {point: [p.name for p in getattr(listed, point).enabled] for point in (
        "pre_enqueue", "queue_sort", "pre_filter", "filter", "post_filter", "pre_score", "score", "reserve",
        "permit", "pre_bind", "bind", "post_bind")}
    assert names == {
        "pre_enqueue": ["SchedulingGates", "DynamicResources"],
        "queue_sort": ["PrioritySort"],
        "pre_filter": ["VolumeRestrictions", "NodeVolumeLimits", "VolumeBinding", "VolumeZone", "DynamicResources"],
        "filter": ["VolumeRestrictions", "NodeVolumeLimits", "VolumeBinding", "VolumeZone", "DynamicResources"],
        "post_filter": ["DynamicResources"],
        "pre_score": ["VolumeBinding"],
        "score": ["VolumeBinding", "ImageLocality"],
        "reserve": ["VolumeBinding", "DynamicResources"],
        "permit": [],
        "pre_bind": ["VolumeBinding", "DynamicResources"],
        "bind": ["DefaultBinder"],
        "post_bind": [],
    }
    # A pod without volumes or claims passes the whole binding cycle.
    pod, state = pod_with_volumes(), CycleState()
    _, status, _ = fw.run_pre_filter_plugins(state, pod, [])
    assert status is None and set(state.skip_filter_plugins) == set(names["filter"])
    assert fw.run_pre_score_plugins(state, pod, []) is None and set(state.skip_score_plugins) == {"VolumeBinding"}
    assert fw.run_reserve_plugins_reserve(state, pod, "n1") is None
    assert fw.run_pre_bind_pre_flights(state, pod, "n1").code() == Code.SKIP
    assert fw.run_pre_bind_plugins(state, pod, "n1") is None


def test_args_validation():
    assert new(DynamicResourcesArgs(filter_timeout=0), None).args.filter_timeout == 0
    with pytest.raises(ValueError) as e:
        new(DynamicResourcesArgs(filter_timeout=-1), None)
    assert str(e.value) == "filterTimeout: Invalid value: \"-1s\": must be zero or positive"
    with pytest.raises(ValueError) as e:
        new({"filterTimeout": "1s"}, None)
    assert str(e.value) == "got args of type dict, want *DynamicResourcesArgs"
    with pytest.raises(FrameworkError, match='initializing plugin "DynamicResources": filterTimeout'):
        new_framework(in_tree_registry(), single_plugin_profile(NAME, args=DynamicResourcesArgs(filter_timeout=-2)))


def test_events_to_register():
    add_update = ActionType.ADD | ActionType.UPDATE
    want = [
        ClusterEvent(EventResource.NODE,
                     ActionType.ADD | ActionType.UPDATE_NODE_LABEL | ActionType.UPDATE_NODE_ALLOCATABLE),
        ClusterEvent("resource.k8s.io/ResourceClaim", add_update),
        ClusterEvent(EventResource.POD, ActionType.UPDATE_POD_GENERATED_RESOURCE_CLAIM),
        ClusterEvent("resource.k8s.io/DeviceClass", add_update),
        ClusterEvent("resource.k8s.io/ResourceSlice", add_update),
    ]
    assert [e.event for e in new(None, None).events_to_register()] == want
    no_hints = [e.event for e in DynamicResources(enable_scheduling_queue_hint=False).events_to_register()]
    assert no_hints[0].action_type == want[0].action_type | ActionType.UPDATE_NODE_TAINT


def test_random_equivalence():
    fw = new_framework(in_tree_registry(), single_plugin_profile(NAME))
    plugin = fw.plugin(NAME)
    rejected = skipped = 0
    for seed in range(10):
        snapshot = random_snapshot(seed, 200, 400)
        batch = snapshot.batch()
        rng = random.Random(seed)
        for i in range(6):
            pod = random_volume_pod(rng, i)
            if rng.random() < 0.3:
                pod = pod.replace(resource_claims=(rng.choice((CLAIM, TEMPLATE_CLAIM)),))
            summary = assert_paths_equivalent(fw, snapshot, pod)
            if summary["prefilter"] is not None:
                assert summary["prefilter"].reasons() == [REASON_NOT_MODELLED]
                rejected += 1
            else:
                assert summary["feasible"] == len(batch)
                skipped += 1
            state = CycleState()
            plugin.pre_filter(state, pod, batch)
            verdicts = statuses_agree(plugin, state, pod, batch)
            if pod.resource_claims:
                assert verdicts[0].reasons() == [REASON_NOT_MODELLED]
            else:
                assert verdicts == [None] * len(batch)
            assert statuses_agree(plugin, CycleState(), pod, batch)[0].reasons() == ["not found"]
    assert rejected >= 8 and skipped >= 30, (rejected, skipped)
