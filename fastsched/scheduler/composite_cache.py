"""The scheduler cache's composite pod groups (CompositePodGroup): ``backend/cache/cache.go``'s
``compositePodGroupStates`` and the operations that keep them, not wired into
:class:`~fastsched.scheduler.cache.SchedulerCache` yet.

A CompositePodGroup's state (:class:`~fastsched.framework.composite.CompositePodGroupState`)
holds its object and its children's keys. A child links itself to its parent when it is added
(``AddPodGroup`` for a PodGroup naming a parent, ``AddCompositePodGroup``), creating a
placeholder state for a parent not observed yet; removing a child unlinks it and drops a parent
state left empty. Upstream's ``RemoveCompositePodGroup`` has one quirk kept here: when the removed
group names a parent whose state is gone, it returns before clearing its own object.

:class:`CompositeGroupStore` works on the cache's PodGroup states (``pod_group_states``: key ->
:class:`~fastsched.framework.podgroups.PodGroupState`, the dict the cache keeps) and its own
``states``; ``GetRootKeyForGroup`` and ``BuildHierarchySnapshotFromPod`` read both.
"""
from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from ..framework.composite import (COMPOSITE_POD_GROUP_KEY_TYPE, WORKLOAD_MAX_TREE_DEPTH, CompositePodGroupObjects,
                                   CompositePodGroupState, CompositePodGroupStates, composite_pod_group_key)
from ..framework.podgroups import (POD_GROUP_KEY_TYPE, EntityKey, PodGroupObjects, PodGroupState, PodGroupStateError,
                                   PodGroupStates, pod_group_key)

if TYPE_CHECKING:  # pragma: no cover
    from ..api import Pod
    from ..api.compositepodgroup import CompositePodGroup
    from ..api.scheduling import PodGroup

__all__ = ["CompositeGroupStore", "HierarchySnapshot"]

_log = logging.getLogger(__name__)


class _SnapshotCompositeStates:
    """``compositePodGroupStateSnapshotLister`` (its own error text)."""

    __slots__ = ("_states",)

    def __init__(self, states: dict[EntityKey, CompositePodGroupState]):
        self._states = states

    def get(self, namespace: str, name: str) -> CompositePodGroupState:
        state = self._states.get(composite_pod_group_key(namespace, name))
        if state is None:
            raise PodGroupStateError(f"composite pod group state not found for pod group {namespace}/{name}")
        return state


class _SnapshotCompositeObjects:
    """``compositePodGroupSnapshotListerImpl`` (its own error texts)."""

    __slots__ = ("_states",)

    def __init__(self, states: dict[EntityKey, CompositePodGroupState]):
        self._states = states

    def get(self, namespace: str, name: str) -> "CompositePodGroup":
        key = composite_pod_group_key(namespace, name)
        state = self._states.get(key)
        if state is None:
            raise PodGroupStateError(f"composite pod group not found in snapshot: {key}")
        if state.composite_pod_group is None:
            raise PodGroupStateError(f'composite pod group object not found for pod group "{key}"')
        return state.composite_pod_group


class HierarchySnapshot:
    """``BuildHierarchySnapshotFromPod``'s snapshot: copies of the states of one hierarchy, read
    through the same ``PodGroupManager`` methods as the cache (a Snapshot made with the gate on)."""

    __slots__ = ("pod_group_states", "composite_pod_group_states")

    def __init__(self) -> None:
        self.pod_group_states: dict[EntityKey, PodGroupState] = {}
        self.composite_pod_group_states: dict[EntityKey, CompositePodGroupState] = {}

    def pod_groups_lister(self) -> PodGroupObjects:
        return PodGroupObjects(self.pod_group_states, True)

    def pod_group_states_lister(self) -> PodGroupStates:
        return PodGroupStates(self.pod_group_states, True)

    def composite_states_lister(self) -> _SnapshotCompositeStates:
        return _SnapshotCompositeStates(self.composite_pod_group_states)

    def composite_objects_lister(self) -> _SnapshotCompositeObjects:
        return _SnapshotCompositeObjects(self.composite_pod_group_states)

    def root_key_for_group(self, key: EntityKey) -> tuple[EntityKey | None, bool]:
        """``(*Snapshot).GetRootKeyForGroup`` over the copies."""
        return _root_key(key, self.pod_group_states, self.composite_pod_group_states, True, "snapshot ")


class CompositeGroupStore:
    """The cache's composite pod group states and their upkeep (see the module docstring).
    ``enabled``: the CompositePodGroup gate (off: nothing is linked, the listers refuse)."""

    __slots__ = ("pod_group_states", "states", "enabled")

    def __init__(self, pod_group_states: dict[EntityKey, PodGroupState], enabled: bool = True) -> None:
        self.pod_group_states = pod_group_states
        self.states: dict[EntityKey, CompositePodGroupState] = {}
        self.enabled = enabled

    # -- listers ----------------------------------------------------------------------------------
    def states_lister(self) -> CompositePodGroupStates:
        """``Cache.CompositePodGroupStates()``."""
        return CompositePodGroupStates(self.states, self.enabled)

    def objects_lister(self) -> CompositePodGroupObjects:
        """``Cache.CompositePodGroups()``."""
        return CompositePodGroupObjects(self.states, self.enabled)

    # the names a HierarchySnapshot has (plugins read either through the same methods)
    composite_states_lister = states_lister
    composite_objects_lister = objects_lister

    # -- PodGroups (the parent links of AddPodGroup / RemovePodGroup) --------------------------------
    def _state(self, key: EntityKey) -> CompositePodGroupState:
        state = self.states.get(key)
        if state is None:  # a placeholder until the parent is observed
            state = self.states[key] = CompositePodGroupState()
        return state

    def link_pod_group(self, pod_group: "PodGroup") -> None:
        """``AddPodGroup``'s part after the PodGroup's own state: link it to its parent."""
        if not self.enabled or pod_group.parent_composite_pod_group_name is None:
            return
        parent = composite_pod_group_key(pod_group.namespace, pod_group.parent_composite_pod_group_name)
        self._state(parent).add_child(pod_group_key(pod_group.namespace, pod_group.name))

    def unlink_pod_group(self, pod_group: "PodGroup") -> None:
        """``RemovePodGroup``'s part before the PodGroup's own state goes (the caller checked the
        state exists): unlink it from its parent, drop a parent left empty."""
        if not self.enabled or pod_group.parent_composite_pod_group_name is None:
            return
        parent_key = composite_pod_group_key(pod_group.namespace, pod_group.parent_composite_pod_group_name)
        parent = self.states.get(parent_key)
        if parent is not None:
            parent.remove_child(pod_group_key(pod_group.namespace, pod_group.name))
            if parent.empty():
                del self.states[parent_key]

    # -- CompositePodGroups -----------------------------------------------------------------------
    def add_composite_pod_group(self, cpg: "CompositePodGroup") -> None:
        """``AddCompositePodGroup``."""
        if not self.enabled:
            return
        key = composite_pod_group_key(cpg.namespace, cpg.name)
        self._state(key).set_composite_pod_group(cpg)
        if cpg.parent_composite_pod_group_name is not None:
            self._state(composite_pod_group_key(cpg.namespace, cpg.parent_composite_pod_group_name)).add_child(key)

    def update_composite_pod_group(self, old: "CompositePodGroup", new: "CompositePodGroup") -> None:
        """``UpdateCompositePodGroup``: the object replaced (a missing state is a missed add: logged)."""
        if not self.enabled:
            return
        state = self.states.get(composite_pod_group_key(new.namespace, new.name))
        if state is None:
            _log.error("Pod group state not found for update, this indicates a missed add event: %s/%s",
                       new.namespace, new.name)
            return
        state.set_composite_pod_group(new)

    def remove_composite_pod_group(self, cpg: "CompositePodGroup") -> None:
        """``RemoveCompositePodGroup`` (the parent is read from the cached object)."""
        if not self.enabled:
            return
        key = composite_pod_group_key(cpg.namespace, cpg.name)
        state = self.states.get(key)
        if state is None:
            _log.error("Composite pod group state not found for removal: %s/%s", cpg.namespace, cpg.name)
            return
        cached = state.composite_pod_group
        if cached is not None and cached.parent_composite_pod_group_name is not None:
            parent_key = composite_pod_group_key(cpg.namespace, cached.parent_composite_pod_group_name)
            parent = self.states.get(parent_key)
            if parent is None:
                return  # upstream returns here, leaving this state as it is
            parent.remove_child(key)
            if parent.empty():
                del self.states[parent_key]
        state.remove_composite_pod_group()
        if state.empty():
            del self.states[key]

    # -- walks ------------------------------------------------------------------------------------
    def root_key_for_group(self, key: EntityKey) -> tuple[EntityKey | None, bool]:
        """``GetRootKeyForGroup``: ``(root, True)``; ``(None, False)`` when a state or object on
        the way is missing; PodGroupStateError for a cycle or a pod key."""
        return _root_key(key, self.pod_group_states, self.states, self.enabled, "")

    def hierarchy_snapshot_for_pod(self, pod: "Pod") -> HierarchySnapshot:
        """``BuildHierarchySnapshotFromPod``: up from the pod's PodGroup to its root (at most 3
        parents), then copies of every state below the root. PodGroupStateError with upstream's
        texts when a state or object is missing or the tree loops."""
        group = pod.scheduling_group
        if group is None:
            raise PodGroupStateError("pod has no scheduling group")
        current = pod_group_key(pod.namespace, group.pod_group_name or "")
        pg_state = self.pod_group_states.get(current)
        if pg_state is None:
            raise PodGroupStateError(f"pod group state not found for {current}")
        pg = pg_state.pod_group
        if pg is None:
            raise PodGroupStateError(f"pod group object not found in state for {current}")
        if self.enabled and pg.parent_composite_pod_group_name is not None:
            current = composite_pod_group_key(pod.namespace, pg.parent_composite_pod_group_name)
            for _ in range(WORKLOAD_MAX_TREE_DEPTH - 1):
                state = self.states.get(current)
                if state is None:
                    raise PodGroupStateError(f"parent composite pod group state not found for {current}")
                cpg = state.composite_pod_group
                if cpg is None:
                    raise PodGroupStateError(f"composite pod group object not found in state for {current}")
                if cpg.parent_composite_pod_group_name is None:
                    break
                current = composite_pod_group_key(pod.namespace, cpg.parent_composite_pod_group_name)
        snapshot = HierarchySnapshot()
        self._copy_tree(current, snapshot, set())
        return snapshot

    def _copy_tree(self, key: EntityKey, snapshot: HierarchySnapshot, visited: set[EntityKey]) -> None:
        """``buildPodGroupStateSnapshotTree``."""
        if key in visited:
            raise PodGroupStateError(f"cycle detected in composite pod group hierarchy: {key}")
        visited.add(key)
        if key.type == POD_GROUP_KEY_TYPE:
            pg_state = self.pod_group_states.get(key)
            if pg_state is None:
                raise PodGroupStateError(f"pod group state not found for {key}")
            snapshot.pod_group_states[key] = pg_state.clone()
        elif key.type == COMPOSITE_POD_GROUP_KEY_TYPE:
            state = self.states.get(key)
            if state is None:
                raise PodGroupStateError(f"composite pod group state not found for {key}")
            snapshot.composite_pod_group_states[key] = state.clone()
            for child in list(state.children):
                self._copy_tree(child, snapshot, visited)


def _root_key(key: EntityKey, pod_group_states: dict[EntityKey, PodGroupState],
              composite_states: dict[EntityKey, CompositePodGroupState], enabled: bool,
              where: str) -> tuple[EntityKey | None, bool]:
    """``GetRootKeyForGroup`` (the cache's and the snapshot's differ only in one error's words)."""
    current = key
    visited: list[EntityKey] = []
    while True:
        if current in visited:
            raise PodGroupStateError(f"cycle detected in the hierarchy: {[str(k) for k in visited]}")
        visited.append(current)
        if current.type == POD_GROUP_KEY_TYPE:
            pg_state = pod_group_states.get(current)
            if pg_state is None or pg_state.pod_group is None:
                return None, False
            pg = pg_state.pod_group
            if not enabled or pg.parent_composite_pod_group_name is None:
                return current, True
            current = composite_pod_group_key(pg.namespace, pg.parent_composite_pod_group_name)
        elif current.type == COMPOSITE_POD_GROUP_KEY_TYPE:
            state = composite_states.get(current)
            if state is None or state.composite_pod_group is None:
                return None, False
            cpg = state.composite_pod_group
            if cpg.parent_composite_pod_group_name is None:
                return current, True
            current = composite_pod_group_key(cpg.namespace, cpg.parent_composite_pod_group_name)
        else:
            raise PodGroupStateError(f"pod key type not supported in {where}GetRootKeyForGroup for {current}")
