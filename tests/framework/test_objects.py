"""Plugins read and write API objects through ``handle.client``; the queue reacts to their events."""
from dataclasses import dataclass

import pytest

from fastsched import Scheduler, load_config
from fastsched.api.objects import KubeObject
from fastsched.framework import Code, PreFilterPlugin, Status
from fastsched.framework.interface import (ActionType, ClusterEvent, ClusterEventWithHint, EnqueueExtensions,
                                           EventResource, QueueingHint)
from fastsched.framework.objects import ObjectClient, ObjectStore, object_key
from fastsched.runtime import Registry
from fastsched.testing import make_node, make_pod


@dataclass(slots=True, kw_only=True, eq=False)
class Claim(KubeObject):
    """A stand-in for a namespaced kind whose events the queue knows (a claim)."""

    KIND = "PersistentVolumeClaim"
    size: int = 0


@dataclass(slots=True, kw_only=True, eq=False)
class Volume(KubeObject):
    """A stand-in for a cluster-scoped kind."""

    KIND = "PersistentVolume"


def test_object_store_reads_and_writes_by_kind_and_key():
    store = ObjectStore()
    assert isinstance(store, ObjectClient)
    store.add_object(Claim(name="c", namespace="ns"))
    store.add_object(Volume(name="v"))
    assert store.get_object("PersistentVolumeClaim", "c", "ns").name == "c"
    assert store.get_object("PersistentVolumeClaim", "c", "other") is None
    assert store.get_object("PersistentVolume", "v", "ignored-for-cluster-scoped").name == "v"
    with pytest.raises(ValueError, match="already exists"):
        store.add_object(Claim(name="c", namespace="ns"))
    store.update_object(Claim(name="c", namespace="ns", size=5))
    assert [c.size for c in store.list_objects("PersistentVolumeClaim", "ns")] == [5]
    assert store.list_objects("PersistentVolumeClaim", "other") == []
    store.delete_object("PersistentVolumeClaim", "c", "ns")
    with pytest.raises(KeyError):
        store.delete_object("PersistentVolumeClaim", "c", "ns")
    assert sorted(store.kinds()) == ["PersistentVolume"] and len(store) == 1
    assert object_key("PersistentVolume", "v", "ns") == "v"
    assert object_key("PersistentVolumeClaim", "c", "") == "default/c"


class NeedsClaim(PreFilterPlugin, EnqueueExtensions):
    """Rejects a pod until a claim named after it exists; requeued by claim events only."""

    def __init__(self, args, handle):
        self.handle = handle
        self.hints = []

    def name(self):
        return "NeedsClaim"

    def pre_filter(self, state, pod, nodes):
        claim = self.handle.client.get_object("PersistentVolumeClaim", pod.name, pod.namespace)
        if claim is None:
            return None, Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, f'persistentvolumeclaim "{pod.name}" not found')
        return None, None

    def pre_filter_extensions(self):
        return None

    def _hint(self, pod, old, new):
        self.hints.append((old is not None, new is not None))
        return QueueingHint.QUEUE, None

    def events_to_register(self):
        return [ClusterEventWithHint(ClusterEvent(EventResource.PERSISTENT_VOLUME_CLAIM, ActionType.ALL), self._hint)]


CONFIG = """
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
  - schedulerName: default-scheduler
    plugins:
      preFilter: {enabled: [{name: NeedsClaim}]}
"""


def claim_manifest(name, storage="1Gi"):
    return {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": name, "namespace": "default"},
            "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": storage}}}}


def scheduler_with_plugin():
    sched = Scheduler(load_config(CONFIG, registry_names=["NeedsClaim"]),
                      registry=Registry({"NeedsClaim": NeedsClaim}), seed=0)
    sched.add_node(make_node("n1"))
    return sched, sched.profiles["default-scheduler"].plugins_map["NeedsClaim"]


def test_a_claim_event_requeues_the_pod_that_waits_for_it():
    sched, plugin = scheduler_with_plugin()
    sched.add_pod(make_pod("web"))
    (first,) = sched.run()
    assert first.node_name is None and 'persistentvolumeclaim "web" not found' in first.message
    assert sched.list_objects("PersistentVolumeClaim") == []

    sched.add_object(claim_manifest("web"))  # fires PersistentVolumeClaim/Add
    assert plugin.hints == [(False, True)]
    results = sched.run()
    assert [(r.pod.name, r.node_name) for r in results] == [("web", "n1")]
    assert [c.name for c in sched.list_objects("PersistentVolumeClaim", "default")] == ["web"]


def test_object_updates_and_deletes_reach_the_hints_with_old_and_new():
    sched, plugin = scheduler_with_plugin()
    sched.add_pod(make_pod("db"))
    sched.run()
    # each event moves the pod out of unschedulablePods; the run between puts it back
    sched.add_object(claim_manifest("other"))
    sched.run()
    sched.update_object(claim_manifest("other", storage="3Gi"))
    sched.run()
    sched.delete_object("PersistentVolumeClaim", "other")
    assert sched.results[sched.get_object("Pod", "db").uid].attempts == 3
    assert plugin.hints == [(False, True), (True, True), (True, False)]
    assert sched.get_object("PersistentVolumeClaim", "other") is None


def test_kinds_without_an_event_resource_fire_nothing():
    sched, plugin = scheduler_with_plugin()
    sched.add_pod(make_pod("x"))
    sched.run()
    sched.add({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "s"},
               "spec": {"selector": {"app": "x"}, "ports": [{"port": 80}]}})
    assert plugin.hints == []


def test_explain_hands_its_objects_to_the_plugins():
    from fastsched import explain

    cfg = load_config(CONFIG, registry_names=["NeedsClaim"])
    registry = Registry({"NeedsClaim": NeedsClaim})
    pod = make_pod("web")
    without = explain(pod, [make_node("n1")], config=cfg, registry=registry)
    assert without.prefilter_status.code() == Code.UNSCHEDULABLE_AND_UNRESOLVABLE
    with_claim = explain(pod, [make_node("n1")], config=cfg, registry=registry,
                         objects=[Claim(name="web", namespace="default")])
    assert with_claim.prefilter_status is None or with_claim.prefilter_status.is_success()
