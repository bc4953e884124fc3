"""GangScheduling with CompositePodGroup on (``gangscheduling.go``'s hierarchy paths, v1.37.2).

With the gate, a gang's readiness is its hierarchy's: a PodGroup under a CompositePodGroup is
ready when the tree from the **root** CompositePodGroup is — each CompositePodGroup when at least
``minGroupCount`` children are ready (1 for a basic one), each PodGroup when its count reaches its
``minCount`` (1 for a basic one). PreEnqueue counts every known member (``AllPodsCount``), Permit
the scheduled ones (``ScheduledPodsCount``), both over a copy of the hierarchy's states taken from
the cache (``BuildHierarchySnapshotFromPod``):

* **PreEnqueue** (``preEnqueueWithHierarchies``): no ``schedulingGroup`` -> Success; the copy
  cannot be made -> UnschedulableAndUnresolvable ``failed to build hierarchy snapshot: <error>``;
  a PodGroup without parent -> its own readiness (a basic one needs one pod: unlike the flat path,
  which lets a basic group's pod through), UnschedulableAndUnresolvable ``waiting for minCount
  pods from a gang to appear in scheduling queue``; under a parent -> ``checkCPGHierarchyReadiness``:
  UnschedulableAndUnresolvable ``waiting for composite pod group "<root>" tree to meet quorum``.
* **Permit**: a member under a parent waits (5 minutes) with ``waiting for composite pod group
  "<root>" tree to meet quorum`` until the tree is ready by scheduled pods, activating every
  unscheduled member of the tree meanwhile; the member that completes it allows every assumed
  member of the tree. A PodGroup without parent is the flat Permit over the copy.
* **Hints** (``areSameHierarchy``): the same root, by the cache's ``GetRootKeyForGroup``; plus
  CompositePodGroup/Add.
* **PlacementFeasible**: ``getMinCount`` of a composite entity is its ``minGroupCount``.

The tree's children come in the cache's order (upstream's: a set's); readiness does not depend on it.
"""
from __future__ import annotations

import logging
from typing import Any, Iterator

from ...api import Pod
from ...api.compositepodgroup import CompositePodGroup
from ...api.scheduling import PodGroup
from ...framework.composite import COMPOSITE_POD_GROUP_KEY_TYPE, composite_pod_group_key
from ...framework.cycle_state import CycleState
from ...framework.interface import ActionType, ClusterEvent, ClusterEventWithHint, EventResource, QueueingHint
from ...framework.podgroups import EntityKey, PodGroupStateError, pod_group_key
from ...framework.status import Code, Status
from . import NAME, PERMIT_TIMEOUT_SECONDS, GangScheduling, _as

__all__ = ["CompositeGangScheduling", "get_min_count_of_entity"]

_log = logging.getLogger(__name__)


def get_min_count_of_entity(pod_group_info: Any) -> int:
    """``getMinCount``: a CompositePodGroup's ``minGroupCount`` (1 if basic), else the PodGroup's
    ``minCount`` (1 if basic)."""
    cpg = getattr(pod_group_info, "composite_pod_group", None)
    if getattr(pod_group_info, "type", None) == COMPOSITE_POD_GROUP_KEY_TYPE and cpg is not None:
        gang = cpg.scheduling_policy.gang
        return 1 if gang is None else gang.min_group_count
    gang = pod_group_info.pod_group.scheduling_policy.gang
    return 1 if gang is None else gang.min_count


class _LiveManager:
    """The cache as upstream's ``PodGroupManager``: its PodGroup listers and its composite part."""

    __slots__ = ("_cache",)

    def __init__(self, cache: Any):
        self._cache = cache

    def pod_groups_lister(self) -> Any:
        return self._cache.pod_groups_lister()

    def pod_group_states_lister(self) -> Any:
        return self._cache.pod_group_states_lister()

    def composite_states_lister(self) -> Any:
        return self._cache.composite_groups.composite_states_lister()

    def composite_objects_lister(self) -> Any:
        return self._cache.composite_groups.composite_objects_lister()

    def root_key_for_group(self, key: EntityKey) -> tuple[EntityKey | None, bool]:
        return self._cache.composite_groups.root_key_for_group(key)

    def hierarchy_snapshot_for_pod(self, pod: Pod) -> Any:
        return self._cache.composite_groups.hierarchy_snapshot_for_pod(pod)


def _all_pods(state: Any) -> int:
    return state.all_pods_count()


def _scheduled_pods(state: Any) -> int:
    return state.scheduled_pods_count()


class CompositeGangScheduling(GangScheduling):
    """GangScheduling with CompositePodGroup on (see the module docstring)."""

    def _live(self) -> _LiveManager:
        return _LiveManager(self._manager())

    # -- events ---------------------------------------------------------------------------------------
    def events_to_register(self) -> list[ClusterEventWithHint]:
        return [*super().events_to_register(),
                ClusterEventWithHint(ClusterEvent(EventResource.COMPOSITE_POD_GROUP, ActionType.ADD),
                                     self.is_schedulable_after_composite_pod_group_added)]

    def _same_hierarchy(self, namespace: str, pod_group_name: str, target: EntityKey) -> bool:
        """``areSameHierarchy``: both roots found and equal (a lookup error is logged: False)."""
        live = self._live()
        own = pod_group_key(namespace, pod_group_name)
        try:
            root1, ok1 = live.root_key_for_group(own)
        except PodGroupStateError as err:
            _log.error("Failed to get root key for key %s: %s", own, err)
            return False
        if not ok1:
            return False
        try:
            root2, ok2 = live.root_key_for_group(target)
        except PodGroupStateError as err:
            _log.error("Failed to get root key for key %s: %s", target, err)
            return False
        return ok2 and root1 == root2

    def _same_group(self, pod: Pod, namespace: str, name: str) -> bool:  # type: ignore[override]
        # the PodGroup hints of the base class ask for the pod's group and a PodGroup key
        return self._same_hierarchy(pod.namespace, pod.pod_group_name or "", pod_group_key(namespace, name))

    def is_schedulable_after_pod_added(self, pod: Pod, old_obj: Any,
                                       new_obj: Any) -> tuple[QueueingHint, Exception | None]:
        _, added, err = _as(Pod, old_obj, new_obj)
        if err is not None:
            return QueueingHint.QUEUE, err
        if pod.scheduling_group is None or added is None or added.scheduling_group is None:
            return QueueingHint.QUEUE_SKIP, None
        target = pod_group_key(added.namespace, added.pod_group_name or "")
        if self._same_hierarchy(pod.namespace, pod.pod_group_name or "", target):
            return QueueingHint.QUEUE, None
        return QueueingHint.QUEUE_SKIP, None

    def is_schedulable_after_composite_pod_group_added(self, pod: Pod, old_obj: Any,
                                                       new_obj: Any) -> tuple[QueueingHint, Exception | None]:
        """``isSchedulableAfterCompositePodGroupAdded``: the added CompositePodGroup's root is the pod's."""
        for obj in (new_obj, old_obj):
            if obj is not None and not isinstance(obj, CompositePodGroup):
                return QueueingHint.QUEUE, TypeError(f"expected *v1alpha3.CompositePodGroup, but got "
                                                     f"{type(obj).__name__}")
        if pod.scheduling_group is None:
            return QueueingHint.QUEUE_SKIP, None
        target = composite_pod_group_key(new_obj.namespace, new_obj.name)
        if self._same_hierarchy(pod.namespace, pod.pod_group_name or "", target):
            return QueueingHint.QUEUE, None
        return QueueingHint.QUEUE_SKIP, None

    # -- PreEnqueue -----------------------------------------------------------------------------------
    def pre_enqueue(self, pod: Pod) -> Status | None:
        """``preEnqueueWithHierarchies``."""
        if pod.scheduling_group is None:
            return None
        try:
            snapshot = self._live().hierarchy_snapshot_for_pod(pod)
        except PodGroupStateError as err:
            return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, f"failed to build hierarchy snapshot: {err}")
        name = pod.pod_group_name or ""
        try:
            pod_group = snapshot.pod_groups_lister().get(pod.namespace, name)
        except PodGroupStateError:
            return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
                          f'waiting for pods\'s pod group "{name}" to appear in scheduling queue')
        if pod_group.parent_composite_pod_group_name is None:
            if self._pod_group_ready(snapshot, pod.namespace, pod_group.name, _all_pods):
                return None
            return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
                          "waiting for minCount pods from a gang to appear in scheduling queue")
        return self._check_hierarchy_readiness(snapshot, pod.namespace, pod_group.parent_composite_pod_group_name,
                                               _all_pods)

    def _check_hierarchy_readiness(self, snapshot: Any, namespace: str, start: str, count: Any) -> Status | None:
        """``checkCPGHierarchyReadiness``."""
        key = composite_pod_group_key(namespace, start)
        try:
            root, ok = snapshot.root_key_for_group(key)
        except PodGroupStateError as err:
            return Status.from_error(err)
        if not ok or root is None:
            return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, "failed to build hierarchy snapshot: composite pod "
                                                               f"group object not found in state for {key}")
        if not self._tree_ready(snapshot, root.namespace, root.name, count):
            return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
                          f'waiting for composite pod group "{root.name}" tree to meet quorum')
        return None

    def _tree_ready(self, snapshot: Any, namespace: str, name: str, count: Any) -> bool:
        """``isCPGTreeReady``: at least ``minGroupCount`` (1 if basic) ready children."""
        try:
            state = snapshot.composite_states_lister().get(namespace, name)
            cpg = snapshot.composite_objects_lister().get(namespace, name)
        except PodGroupStateError:
            return False
        gang = cpg.scheduling_policy.gang
        min_group_count = 1 if gang is None else gang.min_group_count
        ready = 0
        for child in state.get_children():
            if child.type == COMPOSITE_POD_GROUP_KEY_TYPE:
                ready += self._tree_ready(snapshot, namespace, child.name, count)
            else:
                ready += self._pod_group_ready(snapshot, namespace, child.name, count)
        return ready >= min_group_count

    @staticmethod
    def _pod_group_ready(snapshot: Any, namespace: str, name: str, count: Any) -> bool:
        """``isPGReady``: the count reaches ``minCount`` (1 if basic)."""
        try:
            pod_group: PodGroup = snapshot.pod_groups_lister().get(namespace, name)
            state = snapshot.pod_group_states_lister().get(namespace, name)
        except PodGroupStateError:
            return False
        gang = pod_group.scheduling_policy.gang
        return count(state) >= (1 if gang is None else gang.min_count)

    # -- Permit ---------------------------------------------------------------------------------------
    def permit(self, state: CycleState, pod: Pod, node_name: str) -> tuple[Status | None, float]:
        if pod.scheduling_group is None:
            return None, 0.0
        name = pod.pod_group_name or ""
        try:
            snapshot = self._live().hierarchy_snapshot_for_pod(pod)
        except PodGroupStateError as err:
            return Status.from_error(f"failed to build hierarchy snapshot: {err}"), 0.0
        try:
            pod_group = snapshot.pod_groups_lister().get(pod.namespace, name)
        except PodGroupStateError as err:
            return Status.from_error(f"failed to get podGroup {pod.namespace}/{name}: {err}"), 0.0
        if pod_group.parent_composite_pod_group_name is not None:
            return self._permit_for_hierarchy(snapshot, pod.namespace, pod_group.parent_composite_pod_group_name)
        try:
            group_state = snapshot.pod_group_states_lister().get(pod.namespace, pod_group.name)
        except PodGroupStateError as err:
            return Status.from_error(err), 0.0
        return self._permit_pod_group(pod_group, group_state)

    def _permit_for_hierarchy(self, snapshot: Any, namespace: str, start: str) -> tuple[Status | None, float]:
        """``permitPodForHierarchy``."""
        key = composite_pod_group_key(namespace, start)
        try:
            root, ok = snapshot.root_key_for_group(key)
        except PodGroupStateError as err:
            return Status.from_error(err), 0.0
        if not ok or root is None:
            return Status.from_error("failed to build hierarchy snapshot: composite pod group object not found in "
                                     f"state for {key}"), 0.0
        if not self._tree_ready(snapshot, root.namespace, root.name, _scheduled_pods):
            self._activate_tree(snapshot, root.namespace, root.name)
            return Status(Code.WAIT, f'waiting for composite pod group "{root.name}" tree to meet quorum'), \
                PERMIT_TIMEOUT_SECONDS
        self._allow_tree(snapshot, root.namespace, root.name)
        return None, 0.0

    def _leaf_states(self, snapshot: Any, namespace: str, name: str) -> Iterator[Any]:
        """The PodGroup states of the tree under composite group ``name``, depth first in children
        order (the walk of ``activateUnscheduledPodsInHierarchy`` and ``allowAssumedPodsInHierarchy``;
        a group without a state is skipped, as upstream's ``continue``)."""
        try:
            state = snapshot.composite_states_lister().get(namespace, name)
        except PodGroupStateError:
            return
        for child in state.get_children():
            if child.type == COMPOSITE_POD_GROUP_KEY_TYPE:
                yield from self._leaf_states(snapshot, namespace, child.name)
                continue
            try:
                yield snapshot.pod_group_states_lister().get(namespace, child.name)
            except PodGroupStateError:
                continue

    def _activate_tree(self, snapshot: Any, namespace: str, name: str) -> None:
        """``activateUnscheduledPodsInHierarchy``: every PodGroup's unscheduled members, per group."""
        for group_state in self._leaf_states(snapshot, namespace, name):
            self._handle.activate(group_state.unscheduled_pods())

    def _allow_tree(self, snapshot: Any, namespace: str, name: str) -> None:
        """``allowAssumedPodsInHierarchy``: every assumed member of the tree waiting at Permit is allowed."""
        for group_state in self._leaf_states(snapshot, namespace, name):
            for uid in group_state.assumed_pod_uids():
                waiting = self._handle.get_waiting_pod(uid)
                if waiting is not None:
                    waiting.allow(NAME)

    # -- PlacementFeasible ----------------------------------------------------------------------------
    def _entity_min_count(self, pod_group_info: Any) -> int:
        """``PlacementFeasible`` over a PodGroup or a CompositePodGroup entity."""
        return get_min_count_of_entity(pod_group_info)
