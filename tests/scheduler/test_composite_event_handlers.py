"""The CompositePodGroup informer's handlers (``eventhandlers.go``: ``addCompositePodGroup``,
``updateCompositePodGroup``, ``deleteCompositePodGroup``): a CompositePodGroup the Cluster stores
feeds the cache (states and links) and the queue (the root's tree), then the event.

The gate is not switchable for users yet (the composite group cycle is not wired): these tests
make it switchable for themselves to build a Scheduler with it.
"""
from __future__ import annotations

import dataclasses

import pytest

from fastsched import Scheduler
from fastsched.features import COMPOSITE_POD_GROUP, KNOWN_GATES
from fastsched.framework.composite import COMPOSITE_POD_GROUP_KEY_TYPE, composite_pod_group_key
from fastsched.framework.interface import EventResource
from fastsched.framework.podgroups import pod_group_key

GATES = {"GenericWorkload": True, "TopologyAwareWorkloadScheduling": True, COMPOSITE_POD_GROUP: True}


@pytest.fixture
def composite_gate(monkeypatch):
    monkeypatch.setitem(KNOWN_GATES, COMPOSITE_POD_GROUP,
                        dataclasses.replace(KNOWN_GATES[COMPOSITE_POD_GROUP], switchable=True))


def cpg_doc(name: str, parent: str | None = None, min_group_count: int = 2) -> dict:
    spec: dict = {"workloadRef": {"workloadName": "w", "templateName": name},
                  "schedulingPolicy": {"gang": {"minGroupCount": min_group_count}}}
    if parent is not None:
        spec["parentCompositePodGroupName"] = parent
    return {"apiVersion": "scheduling.k8s.io/v1alpha3", "kind": "CompositePodGroup",
            "metadata": {"name": name, "namespace": "default"}, "spec": spec}


def pg_doc(name: str, parent: str, min_count: int = 1) -> dict:
    return {"apiVersion": "scheduling.k8s.io/v1beta1", "kind": "PodGroup",
            "metadata": {"name": name, "namespace": "default"},
            "spec": {"parentCompositePodGroupName": parent, "workloadRef": {"workloadName": "w", "templateName": name},
                     "schedulingPolicy": {"gang": {"minCount": min_count}}}}


def pod_doc(name: str, group: str) -> dict:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "default"},
            "spec": {"schedulingGroup": {"podGroupName": group},
                     "containers": [{"name": "c", "image": "i", "resources": {"requests": {"cpu": "100m"}}}]}}


def root_entity(sched: Scheduler, name: str = "root"):
    return sched.queue.get_pod_group("default", name, COMPOSITE_POD_GROUP_KEY_TYPE)


def test_members_wait_incomplete_until_the_root_is_seen_then_join_its_entity(composite_gate):
    sched = Scheduler(feature_gates=GATES)
    assert sched.cache.composite_groups.enabled and sched.queue.composite_pod_group
    sched.add([cpg_doc("mid", "root"), pg_doc("pg1", "mid"), pg_doc("pg2", "root"),
               pod_doc("a", "pg1"), pod_doc("b", "pg2")])
    assert {p.name for p in sched.queue.incomplete_pod_group_pods_list()} == {"a", "b"}
    assert root_entity(sched) is None
    seq = sched._change_seq
    sched.add(cpg_doc("root"))
    entity = root_entity(sched)
    assert entity is not None and {m.pod.name for m in entity.members} == {"a", "b"}
    assert sched.queue.incomplete_pod_group_pods_list() == [] and sched._change_seq == seq + 1
    # the cache: the states link the tree, the root resolves
    groups = sched.cache.composite_groups
    assert groups.root_key_for_group(pod_group_key("default", "pg1")) == (composite_pod_group_key("default", "root"), True)
    assert groups.composite_objects_lister().get("default", "root").name == "root"


def test_update_reaches_the_queued_tree_and_delete_decomposes_it(composite_gate):
    sched = Scheduler(feature_gates=GATES)
    sched.add([cpg_doc("root"), cpg_doc("mid", "root"), pg_doc("pg1", "mid"), pg_doc("pg2", "root"),
               pod_doc("a", "pg1"), pod_doc("b", "pg2")])
    updated = sched.cluster.get_object("CompositePodGroup", "mid", "default").replace(
        scheduling_policy=sched.cluster.get_object("CompositePodGroup", "root", "default").scheduling_policy)
    sched.update_object(updated)
    mid = next(c for c in root_entity(sched).tree.children if c.name == "mid")
    assert mid.composite_pod_group.scheduling_policy == updated.scheduling_policy
    assert sched.cache.composite_groups.composite_objects_lister().get("default", "mid").scheduling_policy \
        == updated.scheduling_policy
    sched.delete_object("CompositePodGroup", "mid", "default")
    assert {m.pod.name for m in root_entity(sched).members} == {"b"}
    assert {p.name for p in sched.queue.incomplete_pod_group_pods_list()} == {"a"}
    with pytest.raises(LookupError):
        sched.cache.composite_groups.composite_objects_lister().get("default", "mid")


def test_the_event_is_a_composite_pod_group_event(composite_gate, monkeypatch):
    sched = Scheduler(feature_gates=GATES)
    seen = []
    monkeypatch.setattr(sched.queue, "move_all_to_active_or_backoff_queue",
                        lambda event, old, new, *a, **k: seen.append((event.resource, event.action_type)))
    sched.add(cpg_doc("root"))
    sched.delete_object("CompositePodGroup", "root", "default")
    assert [r for r, _ in seen] == [EventResource.COMPOSITE_POD_GROUP] * 2


def test_without_the_gate_the_kind_is_refused_and_nothing_is_wired():
    sched = Scheduler(feature_gates={"GenericWorkload": True})
    assert not sched.cache.composite_groups.enabled and not sched.queue.composite_pod_group
    with pytest.raises(Exception, match='no matches for kind "CompositePodGroup"'):
        sched.add(cpg_doc("root"))
