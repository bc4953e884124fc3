"""The unschedulable pool's periodic flush: its timestamp and flag (v1.37.2).

Transcribed from ``pkg/scheduler/backend/queue/scheduling_queue_test.go`` (v1.37.2):
``TestFlushUnschedulableEntitiesLeftoverSetsFlag``,
``TestFlushUnschedulablePodsLeftoverSetsFlag_GatedPod`` (its 8 rows) and
``TestGatedPodFlushFrequency`` (both rows), against ``flushUnschedulableEntitiesLeftover``: each
entity the flush moves gets a flush timestamp and the was-flushed flag; the flush is a wildcard
event, so gated entities rerun PreEnqueue, and a gated one that stays gated is flushed again only
podMaxInUnschedulablePodsDuration after the last flush.
"""
from __future__ import annotations

import pytest

from fastsched.api.objects import PodSchedulingGroup
from fastsched.api.scheduling import GangSchedulingPolicy, PodGroup, PodGroupSchedulingPolicy
from fastsched.clock import VirtualClock
from fastsched.framework import Code, Status
from fastsched.framework.podgroups import QueuedPodGroupInfo
from fastsched.framework.types import PodInfo, QueuedPodInfo
from fastsched.plugins.queuesort import PrioritySort
from fastsched.scheduler.backend.queue import PriorityQueue
from fastsched.testing import make_pod

#: DefaultPodMaxInUnschedulablePodsDuration
FIVE_MINUTES = 300.0
PROFILE = "default-scheduler"


class AllowList:
    """scheduling_queue_test.go's preEnqueuePlugin: pods with an allowed label pass."""

    def __init__(self, *allow: str):
        self.allow = allow
        self.calls = 0

    def name(self) -> str:
        return "preEnqueuePlugin"

    def pre_enqueue(self, pod):
        self.calls += 1
        if any(label in pod.labels for label in self.allow):
            return None
        return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, "pod label not in allowlists")


def new_queue(clock, plugin, **kw) -> PriorityQueue:
    sort = PrioritySort()
    # makeEmptyQueueingHintMapPerProfile: the profile registers no hints
    return PriorityQueue(sort.less, clock, sort_key=sort.sort_key, pre_enqueue_plugins={PROFILE: [plugin]},
                         queueing_hints={PROFILE: {}}, **kw)


def test_flush_unschedulable_entities_leftover_sets_flag():
    """TestFlushUnschedulableEntitiesLeftoverSetsFlag (the failed pod is the popped one here, so
    that the clearing is the failure's, not a new QueuedPodInfo's)."""
    clock = VirtualClock(1000.0)
    q = new_queue(clock, AllowList("allow"))
    pod = make_pod("test-pod", namespace="ns1", labels={"allow": ""}).replace(uid="tp-1")
    q.add(pod)
    pinfo = q.pop()
    assert not pinfo.was_flushed_from_unschedulable
    pinfo.unschedulable_plugins = {"fakePlugin"}
    assert q.add_unschedulable_if_not_present(pinfo, q.scheduling_cycle()) is None
    clock.advance(FIVE_MINUTES + 1)
    q.flush_unschedulable_pods_leftover()
    pinfo = q.pop()
    assert pinfo is not None and pinfo.was_flushed_from_unschedulable
    assert pinfo.flush_timestamp == clock.now()
    pinfo.unschedulable_plugins = {"fakePlugin"}
    assert q.add_unschedulable_if_not_present(pinfo, q.scheduling_cycle()) is None
    internal = q._unschedulable_pods.get(pod.uid)
    assert internal is pinfo
    assert not internal.was_flushed_from_unschedulable and internal.flush_timestamp is None


GATED_POD_ROWS = [
    # name, gatedBeforeFlush, gatedAfterFlush, backingOff, wantWasFlushedFromUnschedulable, wantQ
    ("flag is set when pod is not gated", False, False, False, True, "active"),
    ("flag is set when pod is no longer gated", True, False, False, True, "active"),
    ("flag is unset when pod is newly gated", False, True, False, False, "unschedulable"),
    ("flag is unset when pod is still gated", True, True, False, False, "unschedulable"),
    ("flag is set when pod is not gated and backoff is not complete", False, False, True, True, "backoff"),
    ("flag is set when pod is no longer gated and backoff is not complete", True, False, True, True, "backoff"),
    ("flag is unset when pod is newly gated and backoff is not complete", False, True, True, False, "unschedulable"),
    ("flag is unset when pod is still gated and backoff is not complete", True, True, True, False, "unschedulable"),
]


@pytest.mark.parametrize("name,gated_before,gated_after,backing_off,want_flag,want_q", GATED_POD_ROWS,
                         ids=[r[0] for r in GATED_POD_ROWS])
def test_flush_unschedulable_pods_leftover_sets_flag_gated_pod(name, gated_before, gated_after, backing_off,
                                                               want_flag, want_q):
    """TestFlushUnschedulablePodsLeftoverSetsFlag_GatedPod."""
    backoff = FIVE_MINUTES + 60 if backing_off else 0.0
    clock = VirtualClock(1000.0)
    q = new_queue(clock, AllowList("allow"), pod_initial_backoff=backoff, pod_max_backoff=backoff)
    pod = make_pod("pod1", namespace="ns1", labels={"allow": ""}).replace(uid="1")
    q.add(pod)
    assert q.pop() is not None
    # upstream deletes the label from the pod object the QueuedPodInfo shares, after the pop
    queued = pod.replace(labels={}) if gated_after else pod
    pinfo = QueuedPodInfo(PodInfo(queued))
    pinfo.unschedulable_plugins = {"foo"}
    if gated_before:  # setQueuedPodInfoGated
        pinfo.gated = True
        pinfo.gating_plugin = "preEnqueuePlugin"
        pinfo.unschedulable_plugins = {"preEnqueuePlugin"}
    assert q.add_unschedulable_if_not_present(pinfo, q.scheduling_cycle()) is None
    clock.advance(FIVE_MINUTES + 1)
    q.flush_unschedulable_pods_leftover()
    assert q.where(pod.uid) == want_q
    actual = q.get(pod.uid)
    assert actual is not None
    assert actual.was_flushed_from_unschedulable is want_flag


def gated_pod_entity():
    pod = make_pod("pod1", namespace="ns1").replace(uid="1")  # no allowed label: gated
    pinfo = QueuedPodInfo(PodInfo(pod))
    pinfo.unschedulable_plugins = {"foo"}
    return pinfo


def gated_pod_group_entity():
    pod = make_pod("pod1", namespace="ns1").replace(uid="1", scheduling_group=PodSchedulingGroup("pg"))
    entity = QueuedPodGroupInfo(PodGroup(name="pg", namespace="ns1",
                                         scheduling_policy=PodGroupSchedulingPolicy(gang=GangSchedulingPolicy(1))))
    member = QueuedPodInfo(PodInfo(pod))
    member.unschedulable_plugins = {"foo"}
    entity.add_pod(member)
    return entity


@pytest.mark.parametrize("make_entity", [gated_pod_entity, gated_pod_group_entity], ids=["queued pod", "queued pod group"])
def test_gated_pod_flush_frequency(make_entity):
    """TestGatedPodFlushFrequency: a gated entity is flushed once per podMaxInUnschedulablePodsDuration,
    not at every periodic flush."""
    clock = VirtualClock(1000.0)
    plugin = AllowList()  # empty allowlist: gates every pod
    entity = make_entity()
    entity.timestamp = clock.now()
    q = new_queue(clock, plugin, pod_max_in_unschedulable_pods_duration=FIVE_MINUTES,
                  generic_workload=entity.pod is None)
    q._unschedulable_pods.add(entity, "test-setup")
    key = entity.key_string if entity.pod is None else entity.pod.uid

    def entity_from_any_queue():
        # still gated: it can only be back in the unschedulable pool
        found = q._unschedulable_pods.get(key)
        assert found is not None, "Failed to find entity in the unschedulable pool"
        return found

    clock.advance(FIVE_MINUTES + 1)  # T=5:01
    q.flush_unschedulable_pods_leftover()
    first = entity_from_any_queue().flush_timestamp
    assert first is not None, "Expected FlushTimestamp to be set after the first leftover flush"
    calls = plugin.calls
    assert calls > 0  # the gated entity reran PreEnqueue

    clock.advance(4 * 60)  # T=9:01
    q.flush_unschedulable_pods_leftover()
    assert entity_from_any_queue().flush_timestamp == first, "pod was flushed prematurely"
    assert plugin.calls == calls

    clock.advance(61)  # T=10:02
    q.flush_unschedulable_pods_leftover()
    assert entity_from_any_queue().flush_timestamp > first
    assert plugin.calls > calls


class _RejectOnce:
    """A Filter plugin that rejects each pod's first attempt and registers no event: only the
    unschedulable timeout's flush brings a rejected pod back."""

    def __init__(self):
        self.seen: set[str] = set()

    def name(self):
        return "RejectOnce"

    def filter(self, state, pod, node_info):
        if pod.uid in self.seen:
            return None
        self.seen.add(pod.uid)
        return Status(Code.UNSCHEDULABLE, "first attempt")

    def events_to_register(self):
        return []


@pytest.mark.parametrize("path", ["commit", "collapsed", "idle", "full"])
@pytest.mark.parametrize("flushed", [True, False])
def test_pod_scheduled_after_flush_metric(flushed, path):
    """Upstream bindingCycle's PodScheduledAfterFlush: counted for a pod bound after the timeout's
    flush brought it back, not for one bound at its first attempt; on each binding path."""
    from fastsched import Scheduler, load_config
    from fastsched.framework.interface import EnqueueExtensions, FilterPlugin
    from fastsched.plugins.registry import Registry
    from fastsched.testing import make_node, pod_manifest

    class Plugin(_RejectOnce, FilterPlugin, EnqueueExtensions):
        pass

    plugin = Plugin()
    config = load_config("""
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
  - schedulerName: default-scheduler
    plugins:
      filter: {enabled: [{name: RejectOnce}]}
""", registry_names=["RejectOnce"])
    s = Scheduler(config, registry=Registry({"RejectOnce": lambda args, handle: plugin}), seed=1)
    s.use_bind_commit = path == "commit"
    s.use_compiled_binding = path in ("commit", "collapsed")
    s.use_idle_binding = path != "full"
    s.add_nodes([make_node("n1", cpu="4")])
    if not flushed:
        plugin.seen.add("p-uid")
    s.add_pods([pod_manifest("p", uid="p-uid", cpu="1")])
    results = s.run(until=400)
    assert [r.status for r in results][-1:] == ["Scheduled"]
    assert s.metrics.pod_scheduled_after_flush == (1 if flushed else 0)
    assert s.metrics.as_dict()["pod_scheduled_after_flush"] == (1 if flushed else 0)
