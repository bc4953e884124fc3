"""The scheduling queue with CompositePodGroup: a root CompositePodGroup's entity covers its tree.

Transcribed from ``pkg/scheduler/backend/queue/scheduling_queue_test.go`` (v1.37.2), every row:
``TestPriorityQueue_AddCompositePodGroup``, ``TestPriorityQueue_UpdateCompositePodGroup``,
``TestPriorityQueue_DeleteCompositePodGroup``, ``TestPriorityQueue_AddPodGroup_Hierarchical``,
``TestPriorityQueue_UpdatePodGroup_Hierarchical``, ``TestPriorityQueue_DeletePodGroup_Hierarchical``
(pod names compared as sets, as upstream's ``cmpopts.SortSlices``); then the entity's own
operations (``QueuedPodGroupInfo``'s AddPod/RemovePod/Update over leaves, the tree's
Add/Update/Remove of groups) and ``AddAttemptedPodGroupIfNeeded`` over the leaves.
"""
from __future__ import annotations

import pytest

from fastsched.api.compositepodgroup import CompositePodGroup
from fastsched.api.objects import PodSchedulingGroup
from fastsched.api.scheduling import CompositeGangSchedulingPolicy, CompositePodGroupSchedulingPolicy, \
    GangSchedulingPolicy, PodGroup, PodGroupSchedulingPolicy
from fastsched.clock import VirtualClock
from fastsched.framework import Code, Status
from fastsched.framework.composite import COMPOSITE_POD_GROUP_KEY_TYPE
from fastsched.framework.types import PodInfo, QueuedPodInfo
from fastsched.plugins.queuesort import PrioritySort
from fastsched.scheduler.backend.queue import PriorityQueue
from fastsched.testing import make_pod


def pod(name: str, group: str):
    """``st.MakePod().Name(name).Namespace("ns1").UID(...).PodGroupName(group)``."""
    return make_pod(name, namespace="ns1").replace(uid=f"uid-{name}", scheduling_group=PodSchedulingGroup(group))


def pg(name: str, parent: str | None = None, min_count: int | None = None) -> PodGroup:
    policy = PodGroupSchedulingPolicy(gang=GangSchedulingPolicy(min_count)) if min_count else \
        PodGroupSchedulingPolicy(basic=True)
    return PodGroup(name=name, namespace="ns1", parent_composite_pod_group_name=parent, scheduling_policy=policy)


def cpg(name: str, parent: str | None = None, min_group_count: int | None = None) -> CompositePodGroup:
    policy = CompositePodGroupSchedulingPolicy(gang=CompositeGangSchedulingPolicy(min_group_count)) \
        if min_group_count else CompositePodGroupSchedulingPolicy(basic=True)
    return CompositePodGroup(name=name, namespace="ns1", parent_composite_pod_group_name=parent,
                             scheduling_policy=policy)


def new_queue(composite: bool = True, clock=None) -> PriorityQueue:
    sort = PrioritySort()
    return PriorityQueue(sort.less, clock or VirtualClock(), sort_key=sort.sort_key, generic_workload=True,
                         composite_pod_group=composite)


def active_pod_groups(q: PriorityQueue) -> dict[str, set[str]]:
    """``getActivePodGroups``: ``<type>/<name>`` -> the names of its queued pods."""
    return {f"{e.type}/{e.name}": {m.pod.name for m in e.members}
            for e in q._active_q.raw_values() if e.pod is None}


def names(pods) -> set[str]:
    return {p.name for p in pods}


def setup(q: PriorityQueue, cpgs=(), pgs=(), pods=(), pgs_first: bool = False) -> None:
    """The tables' setup: CompositePodGroups, PodGroups (or the other way round), then pods."""
    if pgs_first:
        for g in pgs:
            q.add_pod_group(g)
    for c in cpgs:
        q.add_composite_pod_group(c)
    if not pgs_first:
        for g in pgs:
            q.add_pod_group(g)
    for p in pods:
        q.add(p)


def check(q: PriorityQueue, active: dict, incomplete=(), pending=()) -> None:
    assert active_pod_groups(q) == {k: set(v) for k, v in active.items()}
    assert names(q.incomplete_pod_group_pods_list()) == set(incomplete)
    assert names(q.pending_pod_group_pods_list()) == set(pending)


def pop(q: PriorityQueue) -> None:
    assert q.pop() is not None


ROOT = "compositepodgroup/root-cpg"


# -- TestPriorityQueue_AddCompositePodGroup (PodGroups added first) --------------------------------
def _pop_then_add(p):
    """``beforeAdd``/``beforeDelete``: pop the root, then a pod arrives while it is in flight."""
    def before(q):
        pop(q)
        q.add(p)
    return before


ADD_CPG_ROWS = {
    "Root with pods": dict(pgs=[pg("pg1", "root-cpg")], pods=[pod("pod1", "pg1")], add=cpg("root-cpg"),
                           active={ROOT: ["pod1"]}),
    "Root without pods": dict(pgs=[pg("pg1", "root-cpg")], add=cpg("root-cpg"), active={}),
    "Root when another root exists": dict(
        pgs=[pg("pg1", "root-cpg"), pg("pg2")], pods=[pod("pod2", "pg2"), pod("pod1", "pg1")], add=cpg("root-cpg"),
        active={ROOT: ["pod1"], "podgroup/pg2": ["pod2"]}),
    "Non-root when parent is missing": dict(
        pgs=[pg("pg1", "child-cpg")], pods=[pod("pod1", "pg1")], add=cpg("child-cpg", "parent-cpg"), active={},
        incomplete=["pod1"]),
    "Non-root when parent is root": dict(
        pgs=[pg("pg1", "child-cpg")], cpgs=[cpg("root-cpg")], pods=[pod("pod1", "pg1")],
        add=cpg("child-cpg", "root-cpg"), active={ROOT: ["pod1"]}),
    "Non-root when parent is root and is already in active queue with another pod": dict(
        pgs=[pg("pg1", "child-cpg"), pg("pg2", "root-cpg")], cpgs=[cpg("root-cpg")],
        pods=[pod("pod2", "pg2"), pod("pod1", "pg1")], add=cpg("child-cpg", "root-cpg"),
        active={ROOT: ["pod1", "pod2"]}),
    "Non-root when parent exists but root is missing": dict(
        pgs=[pg("pg1", "child-cpg")], cpgs=[cpg("parent-cpg", "root-cpg")], pods=[pod("pod1", "pg1")],
        add=cpg("child-cpg", "parent-cpg"), active={}, incomplete=["pod1"]),
    "Non-root when parent is root and is currently in-flight (popped)": dict(
        pgs=[pg("pg1", "child-cpg"), pg("pg2", "root-cpg")], cpgs=[cpg("root-cpg")],
        pods=[pod("pod2", "pg2"), pod("pod1", "pg1")], before=pop, add=cpg("child-cpg", "root-cpg"),
        active={}, pending=["pod1"]),
    "Root when another root is currently in-flight (popped)": dict(
        pgs=[pg("pg1", "root-cpg"), pg("pg2")], pods=[pod("pod2", "pg2"), pod("pod1", "pg1")], before=pop,
        add=cpg("root-cpg"), active={ROOT: ["pod1"]}),
}


@pytest.mark.parametrize("row", list(ADD_CPG_ROWS.values()), ids=list(ADD_CPG_ROWS))
def test_add_composite_pod_group(row):
    q = new_queue()
    setup(q, row.get("cpgs", ()), row.get("pgs", ()), row.get("pods", ()), pgs_first=True)
    if "before" in row:
        row["before"](q)
    q.add_composite_pod_group(row["add"])
    check(q, row["active"], row.get("incomplete", ()), row.get("pending", ()))


# -- TestPriorityQueue_UpdateCompositePodGroup ------------------------------------------------------
UPDATE_CPG_ROWS = {
    "Root when minCount is updated": dict(
        cpgs=[cpg("root-cpg", min_group_count=3)], pgs=[pg("pg1", "root-cpg")], pods=[pod("pod1", "pg1")],
        update=cpg("root-cpg", min_group_count=5)),
    "Non-root when minCount is updated": dict(
        cpgs=[cpg("root-cpg"), cpg("child-cpg", "root-cpg")], pgs=[pg("pg1", "child-cpg")],
        pods=[pod("pod1", "pg1")], update=cpg("child-cpg", "root-cpg", min_group_count=2)),
}


def _find_in_active_q(q: PriorityQueue, name: str, key_type: str):
    """``findPodGroupInfoInActiveQ``."""
    def search(node):
        if node.name == name and node.type == key_type:
            return node
        for child in node.children:
            found = search(child)
            if found is not None:
                return found
        return None
    for e in q._active_q.raw_values():
        if e.pod is not None:
            continue
        if not e.is_composite:  # a PodGroup root: the entity is its node
            if e.name == name and e.type == key_type:
                return e
            continue
        found = search(e.tree)
        if found is not None:
            return found
    return None


@pytest.mark.parametrize("row", list(UPDATE_CPG_ROWS.values()), ids=list(UPDATE_CPG_ROWS))
def test_update_composite_pod_group(row):
    q = new_queue()
    setup(q, row["cpgs"], row["pgs"], row["pods"])
    q.update_composite_pod_group(row["update"])
    check(q, {ROOT: ["pod1"]})
    node = _find_in_active_q(q, row["update"].name, COMPOSITE_POD_GROUP_KEY_TYPE)
    assert node is not None and node.composite_pod_group is row["update"]


# -- TestPriorityQueue_DeleteCompositePodGroup ------------------------------------------------------
TWO_LEVEL = dict(cpgs=[cpg("root-cpg"), cpg("child-cpg", "root-cpg")],
                 pgs=[pg("pg1", "child-cpg"), pg("pg2", "root-cpg")], pods=[pod("pod1", "pg1"), pod("pod2", "pg2")])
MID = dict(cpgs=[cpg("root-cpg"), cpg("mid-cpg", "root-cpg")])
DELETE_CPG_ROWS = {
    "Non-root when parent is root and is already in activeQ with another pod": dict(
        **TWO_LEVEL, delete=cpg("child-cpg"), active={ROOT: ["pod2"]}, incomplete=["pod1"]),
    "Root with pods": dict(**TWO_LEVEL, delete=cpg("root-cpg"), active={}, incomplete=["pod1", "pod2"]),
    "Non-root when parent does not exist": dict(
        cpgs=[cpg("child-cpg", "root-cpg")], pgs=[pg("pg1", "child-cpg")], pods=[pod("pod1", "pg1")],
        delete=cpg("child-cpg"), active={}, incomplete=["pod1"]),
    "Non-root when parent is root and is in-flight (popped)": dict(
        **TWO_LEVEL, before=pop, delete=cpg("child-cpg"), active={}),
    "Non-root with pending pods when parent is root and is in-flight (popped)": dict(
        **TWO_LEVEL, before=_pop_then_add(pod("pod3", "pg1")), delete=cpg("child-cpg"), active={},
        incomplete=["pod3"]),
    "Root with pending pods when in-flight (popped)": dict(
        cpgs=[cpg("root-cpg")], pgs=[pg("pg1", "root-cpg")], pods=[pod("pod1", "pg1")],
        before=_pop_then_add(pod("pod2", "pg1")), delete=cpg("root-cpg"), active={}, incomplete=["pod2"]),
    "Non-root with pods when root ancestor exists": dict(
        **MID, pgs=[pg("pg1", "mid-cpg")], pods=[pod("pod1", "pg1")], delete=cpg("mid-cpg"), active={},
        incomplete=["pod1"]),
    "Non-root when root ancestor is already in activeQ with another pod": dict(
        **MID, pgs=[pg("pg1", "mid-cpg"), pg("pg2", "root-cpg")], pods=[pod("pod1", "pg1"), pod("pod2", "pg2")],
        delete=cpg("mid-cpg"), active={ROOT: ["pod2"]}, incomplete=["pod1"]),
}


@pytest.mark.parametrize("row", list(DELETE_CPG_ROWS.values()), ids=list(DELETE_CPG_ROWS))
def test_delete_composite_pod_group(row):
    q = new_queue()
    setup(q, row["cpgs"], row["pgs"], row["pods"])
    before = row.get("before")
    if before is not None:
        before(q)
    q.delete_composite_pod_group(row["delete"])
    check(q, row["active"], row.get("incomplete", ()), row.get("pending", ()))


# -- TestPriorityQueue_AddPodGroup_Hierarchical ---------------------------------------------------------
ADD_PG_ROWS = {
    "Root with pods": dict(pods=[pod("pod1", "pg1")], add=pg("pg1"), active={"podgroup/pg1": ["pod1"]}),
    "Root without pods": dict(add=pg("pg1"), active={}),
    "Root when another root exists": dict(
        pgs=[pg("pg2")], pods=[pod("pod2", "pg2"), pod("pod1", "pg1")], add=pg("pg1"),
        active={"podgroup/pg1": ["pod1"], "podgroup/pg2": ["pod2"]}),
    "Non-root when parent is missing": dict(
        pods=[pod("pod1", "pg1")], add=pg("pg1", "missing-cpg"), active={}, incomplete=["pod1"]),
    "Non-root when parent is root": dict(
        cpgs=[cpg("root-cpg")], pods=[pod("pod1", "pg1")], add=pg("pg1", "root-cpg"), active={ROOT: ["pod1"]}),
    "Non-root when parent is root and is already in active queue with another pod": dict(
        cpgs=[cpg("root-cpg")], pgs=[pg("pg2", "root-cpg")], pods=[pod("pod2", "pg2"), pod("pod1", "pg1")],
        add=pg("pg1", "root-cpg"), active={ROOT: ["pod1", "pod2"]}),
    "Non-root when parent exists but root is missing": dict(
        cpgs=[cpg("parent-cpg", "root-cpg")], pods=[pod("pod1", "pg1")], add=pg("pg1", "parent-cpg"), active={},
        incomplete=["pod1"]),
    "Non-root with pending pods when parent is root and is currently in-flight (popped)": dict(
        cpgs=[cpg("root-cpg")], pgs=[pg("pg2", "root-cpg")], pods=[pod("pod1", "pg2")],
        before=_pop_then_add(pod("pod2", "pg1")), add=pg("pg1", "root-cpg"), active={}, pending=["pod2"]),
    "Non-root when parent is root and is currently in-flight (popped)": dict(
        cpgs=[cpg("root-cpg")], pgs=[pg("pg2", "root-cpg")], pods=[pod("pod1", "pg2"), pod("pod2", "pg1")],
        before=pop, add=pg("pg1", "root-cpg"), active={}, pending=["pod2"]),
    "Root when another root is currently in-flight (popped)": dict(
        pgs=[pg("pg2")], pods=[pod("pod2", "pg2"), pod("pod1", "pg1")], before=pop, add=pg("pg1"),
        active={"podgroup/pg1": ["pod1"]}),
    "Non-root when CPG feature is disabled": dict(
        disabled=True, pods=[pod("pod1", "pg1")], add=pg("pg1", "root-cpg"), active={"podgroup/pg1": ["pod1"]}),
}


@pytest.mark.parametrize("row", list(ADD_PG_ROWS.values()), ids=list(ADD_PG_ROWS))
def test_add_pod_group_hierarchical(row):
    q = new_queue(composite=not row.get("disabled", False))
    setup(q, row.get("cpgs", ()), row.get("pgs", ()), row.get("pods", ()))
    before = row.get("before")
    if before is not None:
        before(q)
    q.add_pod_group(row["add"])
    check(q, row["active"], row.get("incomplete", ()), row.get("pending", ()))


# -- TestPriorityQueue_UpdatePodGroup_Hierarchical --------------------------------------------------
UPDATE_PG_ROWS = {
    "Root when minCount is updated": dict(
        pgs=[pg("pg1", min_count=2)], update=pg("pg1", min_count=3), active={"podgroup/pg1": ["pod1"]}),
    "Non-root when minCount is updated": dict(
        cpgs=[cpg("root-cpg")], pgs=[pg("pg1", "root-cpg")], update=pg("pg1", "root-cpg", min_count=3),
        active={ROOT: ["pod1"]}),
    "Non-root when CPG feature is disabled": dict(
        disabled=True, pgs=[pg("pg1", "root-cpg", min_count=2)], update=pg("pg1", "root-cpg", min_count=3),
        active={"podgroup/pg1": ["pod1"]}),
}


@pytest.mark.parametrize("row", list(UPDATE_PG_ROWS.values()), ids=list(UPDATE_PG_ROWS))
def test_update_pod_group_hierarchical(row):
    q = new_queue(composite=not row.get("disabled", False))
    setup(q, row.get("cpgs", ()), row["pgs"], [pod("pod1", "pg1")])
    q.update_pod_group(row["update"])
    check(q, row["active"])
    node = _find_in_active_q(q, "pg1", "podgroup")
    assert node is not None and node.pod_group is row["update"]


# -- TestPriorityQueue_DeletePodGroup_Hierarchical ---------------------------------------------------
FLAT = dict(pgs=[pg("pg1")], pods=[pod("pod1", "pg1")])
SIBLINGS = dict(cpgs=[cpg("root-cpg")], pgs=[pg("pg1", "root-cpg"), pg("pg2", "root-cpg")],
                pods=[pod("pod1", "pg1"), pod("pod2", "pg2")])
DELETE_PG_ROWS = {
    "Non-root when parent is root and is already in activeQ with another pod": dict(
        **SIBLINGS, delete=pg("pg1"), active={ROOT: ["pod2"]}, incomplete=["pod1"]),
    "Root with pods": dict(**FLAT, delete=pg("pg1"), active={}, incomplete=["pod1"]),
    "Non-root when parent is root and is in-flight (popped)": dict(**SIBLINGS, before=pop, delete=pg("pg1"),
                                                                   active={}),
    "Non-root with pending pods when parent is root and is in-flight (popped)": dict(
        **SIBLINGS, before=_pop_then_add(pod("pod3", "pg1")), delete=pg("pg1"), active={}, incomplete=["pod3"]),
    "Root when in-flight (popped)": dict(**FLAT, before=pop, delete=pg("pg1"), active={}),
    "Root with pending pods when in-flight (popped)": dict(
        **FLAT, before=_pop_then_add(pod("pod2", "pg1")), delete=pg("pg1"), active={}, incomplete=["pod2"]),
    "Root without pods": dict(pgs=[pg("pg1")], delete=pg("pg1"), active={}),
    "Non-root when CPG feature is disabled": dict(
        disabled=True, pgs=[pg("pg1", "root-cpg")], pods=[pod("pod1", "pg1")], delete=pg("pg1", "root-cpg"),
        active={}, incomplete=["pod1"]),
}


@pytest.mark.parametrize("row", list(DELETE_PG_ROWS.values()), ids=list(DELETE_PG_ROWS))
def test_delete_pod_group_hierarchical(row):
    q = new_queue(composite=not row.get("disabled", False))
    setup(q, row.get("cpgs", ()), row["pgs"], row.get("pods", ()))
    before = row.get("before")
    if before is not None:
        before(q)
    q.delete_pod_group(row["delete"])
    check(q, row["active"], row.get("incomplete", ()), row.get("pending", ()))


# -- the entity over a tree ---------------------------------------------------------------------------
def _tree_queue(**kw):
    q = new_queue(**kw)
    setup(q, [cpg("root-cpg", min_group_count=2), cpg("mid-cpg", "root-cpg")],
          [pg("pg1", "mid-cpg"), pg("pg2", "root-cpg")],
          [pod("b", "pg2"), pod("a", "pg1"), pod("c", "pg1")])
    return q


def test_a_root_entity_keys_prioritises_and_lists_its_leaves_members():
    q = _tree_queue()
    e = q.get_pod_group("ns1", "root-cpg", COMPOSITE_POD_GROUP_KEY_TYPE)
    assert e is not None and e.is_composite and e.pod_group is None
    assert e.key_string == "compositepodgroup/ns1/root-cpg"
    assert str(e.key) == "compositepodgroup/ns1/root-cpg" and e.priority == 0
    # GetUnscheduledPods: leaf by leaf in the tree's order (mid-cpg's pg1 first: the children in
    # the order the forest saw them), each leaf in member order
    assert [p.name for p in e.unscheduled_pods()] == ["a", "c", "b"]
    assert [m.pod.name for m in e.leaf_members("pg1")] == ["a", "c"] and e.size() == 3
    assert q.get_pod_group("ns1", "root-cpg") is None  # a podgroup key of that name is another entity
    e.update_composite_pod_group(cpg("root-cpg", min_group_count=2).replace(priority=7))
    assert e.priority == 7


def test_a_pod_of_a_group_outside_the_tree_is_ignored_and_removal_is_by_leaf():
    q = _tree_queue()
    e = q.get_pod_group("ns1", "root-cpg", COMPOSITE_POD_GROUP_KEY_TYPE)
    e.add_pod(QueuedPodInfo(PodInfo(pod("x", "elsewhere"))))
    assert e.size() == 3
    assert e.remove_pod(pod("a", "pg2")) is None  # same name, another leaf
    assert e.remove_pod(pod("a", "pg1")).pod.name == "a" and e.size() == 2
    with pytest.raises(KeyError, match="pod ns1/zz to update not found in the queued group info"):
        e.update(pod("zz", "pg1"))


def test_pop_of_a_root_puts_every_leaf_member_in_flight_and_requeue_gathers_pending_of_every_leaf():
    clock = VirtualClock()
    q = _tree_queue(clock=clock)
    e = q.pop()
    assert e is not None and e.key_string == "compositepodgroup/ns1/root-cpg"
    assert {m.pod.name for m in e.members} == {"a", "b", "c"} and all(m.attempts == 1 for m in e.members)
    # members of two leaves arrive during the cycle: pending, by leaf
    q.add(pod("d", "pg2"))
    q.add(pod("f", "pg1"))
    assert names(q.pending_pod_group_pods_list()) == {"d", "f"}
    err = q.add_attempted_pod_group_if_needed(e, 1, Status(Code.UNSCHEDULABLE, "no"))
    assert err is None and names(q.pending_pod_group_pods_list()) == set()
    requeued = q.get_pod_group("ns1", "root-cpg", COMPOSITE_POD_GROUP_KEY_TYPE)
    assert requeued is not None and requeued.is_composite and requeued.unschedulable_count == 1
    assert {m.pod.name for m in requeued.members} == {"d", "f"}


class _GateLeaf:
    """A PreEnqueue plugin that gates the pods of one PodGroup."""

    def name(self) -> str:
        return "GateLeaf"

    def pre_enqueue(self, p):
        if p.scheduling_group.pod_group_name == "pg2":
            return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, "pg2 waits")
        return None


def test_one_gated_member_of_any_leaf_gates_the_root():
    sort = PrioritySort()
    q = PriorityQueue(sort.less, VirtualClock(), sort_key=sort.sort_key, generic_workload=True,
                      composite_pod_group=True, pre_enqueue_plugins={"default-scheduler": [_GateLeaf()]})
    setup(q, [cpg("root-cpg")], [pg("pg1", "root-cpg"), pg("pg2", "root-cpg")], [pod("a", "pg1")])
    assert set(active_pod_groups(q)) == {ROOT}
    q.add(pod("b", "pg2"))
    e = q.get_pod_group("ns1", "root-cpg", COMPOSITE_POD_GROUP_KEY_TYPE)
    assert active_pod_groups(q) == {} and e.gated and e.gating_plugin == "GateLeaf"
    assert e.gating_message == "pg2 waits" and q.pop() is None
    # deleting the gated member requeues the entity where it was (queueSkip: the unschedulable
    # pool), with the other leaf's member only
    q.delete(pod("b", "pg2"))
    e = q._unschedulable_pods.get("compositepodgroup/ns1/root-cpg")
    assert e is not None and [m.pod.name for m in e.members] == ["a"] and active_pod_groups(q) == {}


def test_gate_off_ignores_composite_pod_groups():
    q = new_queue(composite=False)
    q.add_composite_pod_group(cpg("root-cpg"))
    q.add_pod_group(pg("pg1", "root-cpg"))
    q.add(pod("a", "pg1"))
    assert active_pod_groups(q) == {"podgroup/pg1": {"a"}}
    q.delete_composite_pod_group(cpg("root-cpg"))
    q.update_composite_pod_group(cpg("root-cpg"))
    assert active_pod_groups(q) == {"podgroup/pg1": {"a"}}
