"""The scheduling queue's forest of pod groups with CompositePodGroup: ``workload_forest.go``.

The queue keeps its own view of the PodGroup and CompositePodGroup objects it has observed (the
cache's may run ahead of it), and which children each CompositePodGroup has: a child is linked to
its parent as soon as the child is seen, whether the parent has been or not, so that adding the
parent later needs no search. A pod's queue entity is its group's **root**: the PodGroup itself
when it has no parent (or the gate is off), else the topmost CompositePodGroup reached through
``parentCompositePodGroupName`` — unknown until every ancestor is observed. A root's entity
covers the whole tree below it (:class:`~fastsched.framework.composite.PodGroupInfo`), its
PodGroups being the leaves whose members are scheduled.

:class:`CompositeWorkloadForest` has the interface of the flat
:class:`~fastsched.scheduler.backend.queue.pod_groups.WorkloadForest` (roots as entity keys) plus
upstream's composite operations. With ``composite_pod_group_enabled`` false it behaves as upstream's
forest with the gate off: a PodGroup's parent is ignored. Cycles (a CompositePodGroup its own
ancestor) are logged and give no root, as upstream's ``HandleError`` paths.

Deviation, on purpose: upstream keeps each parent's children in a set, so the order in which a
tree's children and leaves come out is Go's map order (random); here it is the order the children
were observed.
"""
from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from ....framework.composite import COMPOSITE_POD_GROUP_KEY_TYPE, PodGroupInfo, composite_pod_group_key
from ....framework.podgroups import POD_GROUP_KEY_TYPE, EntityKey, QueuedPodGroupInfo, pod_group_key

if TYPE_CHECKING:  # pragma: no cover
    from ....api import Pod
    from ....api.compositepodgroup import CompositePodGroup
    from ....api.scheduling import PodGroup

__all__ = ["CompositeWorkloadForest"]

_log = logging.getLogger(__name__)


class CompositeWorkloadForest:
    """``workloadForest``: the PodGroups and CompositePodGroups the queue has seen and the
    parent-to-children links (see the module docstring)."""

    __slots__ = ("pod_groups", "composite_pod_groups", "children", "composite_pod_group_enabled")

    def __init__(self, composite_pod_group_enabled: bool = True) -> None:
        self.pod_groups: dict[EntityKey, "PodGroup"] = {}
        self.composite_pod_groups: dict[EntityKey, "CompositePodGroup"] = {}
        #: parent CompositePodGroup key -> its children's keys (an ordered set: dict keys)
        self.children: dict[EntityKey, dict[EntityKey, None]] = {}
        self.composite_pod_group_enabled = composite_pod_group_enabled

    # -- links ----------------------------------------------------------------------------------
    def _link(self, namespace: str, parent: str, child: EntityKey) -> None:
        self.children.setdefault(composite_pod_group_key(namespace, parent), {})[child] = None

    def _unlink(self, namespace: str, parent: str, child: EntityKey) -> None:
        parent_key = composite_pod_group_key(namespace, parent)
        siblings = self.children.get(parent_key)
        if siblings is None:
            return
        siblings.pop(child, None)
        if not siblings:
            del self.children[parent_key]

    def pod_group_has_parent(self, pod_group: "PodGroup") -> bool:
        """``podGroupHasParent``: a parent is named and the gate is on."""
        return self.composite_pod_group_enabled and pod_group.parent_composite_pod_group_name is not None

    # -- PodGroups ------------------------------------------------------------------------------
    def add_pod_group(self, pod_group: "PodGroup") -> None:
        key = pod_group_key(pod_group.namespace, pod_group.name)
        self.pod_groups[key] = pod_group
        if self.pod_group_has_parent(pod_group):
            self._link(pod_group.namespace, pod_group.parent_composite_pod_group_name, key)  # type: ignore[arg-type]

    def update_pod_group(self, pod_group: "PodGroup") -> None:
        """``updatePodGroup``: the object replaced (the parent is immutable, so are the links)."""
        self.pod_groups[pod_group_key(pod_group.namespace, pod_group.name)] = pod_group

    def delete_pod_group(self, pod_group: "PodGroup") -> None:
        key = pod_group_key(pod_group.namespace, pod_group.name)
        self.pod_groups.pop(key, None)
        if self.pod_group_has_parent(pod_group):
            self._unlink(pod_group.namespace, pod_group.parent_composite_pod_group_name, key)  # type: ignore[arg-type]

    # -- CompositePodGroups ---------------------------------------------------------------------
    def add_composite_pod_group(self, cpg: "CompositePodGroup") -> None:
        key = composite_pod_group_key(cpg.namespace, cpg.name)
        self.composite_pod_groups[key] = cpg
        if cpg.parent_composite_pod_group_name is not None:
            self._link(cpg.namespace, cpg.parent_composite_pod_group_name, key)

    def update_composite_pod_group(self, cpg: "CompositePodGroup") -> None:
        self.composite_pod_groups[composite_pod_group_key(cpg.namespace, cpg.name)] = cpg

    def delete_composite_pod_group(self, cpg: "CompositePodGroup") -> None:
        """``deleteCompositePodGroup``: the object and its link to its parent go; its own
        children stay linked to it (they still name it)."""
        key = composite_pod_group_key(cpg.namespace, cpg.name)
        self.composite_pod_groups.pop(key, None)
        if cpg.parent_composite_pod_group_name is not None:
            self._unlink(cpg.namespace, cpg.parent_composite_pod_group_name, key)

    def get_pod_group(self, pod_group: "PodGroup") -> "PodGroup | None":
        return self.pod_groups.get(pod_group_key(pod_group.namespace, pod_group.name))

    def get_composite_pod_group(self, cpg: "CompositePodGroup") -> "CompositePodGroup | None":
        return self.composite_pod_groups.get(composite_pod_group_key(cpg.namespace, cpg.name))

    # -- roots ----------------------------------------------------------------------------------
    def root_for_pod(self, pod: "Pod") -> EntityKey | None:
        """``getRootLookupInfoForPod``: the key of the pod's root group, None until its PodGroup
        (and every ancestor) is observed."""
        group = pod.scheduling_group
        pod_group = self.pod_groups.get(pod_group_key(pod.namespace, (group.pod_group_name if group else "") or ""))
        return None if pod_group is None else self.root_for_pod_group(pod_group)

    def root_for_pod_group(self, pod_group: "PodGroup") -> EntityKey | None:
        """``getRootLookupInfoForPodGroup`` (the forest's own copy of the object decides)."""
        key = pod_group_key(pod_group.namespace, pod_group.name)
        current = self.pod_groups.get(key)
        if current is None:
            return None
        if not self.pod_group_has_parent(current):
            return key
        return self._root_above(current.parent_composite_pod_group_name, current.namespace)  # type: ignore[arg-type]

    def root_for_composite_pod_group(self, cpg: "CompositePodGroup") -> EntityKey | None:
        """``getRootLookupInfoForCPG``: walks up from the CompositePodGroup itself."""
        return self._root_above(cpg.name, cpg.namespace)

    def _root_above(self, parent_name: str, namespace: str) -> EntityKey | None:
        """``getRootLookupInfoForParentCPG``: up the parent chain to a CompositePodGroup without a
        parent; None if one is missing or the chain loops."""
        visited: set[EntityKey] = set()
        name = parent_name
        while True:
            key = composite_pod_group_key(namespace, name)
            if key in visited:
                _log.error("cycle detected in composite pod group hierarchy: %s/%s", parent_name, namespace)
                return None
            visited.add(key)
            cpg = self.composite_pod_groups.get(key)
            if cpg is None:
                return None
            if cpg.parent_composite_pod_group_name is None:
                return key
            name = cpg.parent_composite_pod_group_name

    # -- trees ----------------------------------------------------------------------------------
    def leaf_pod_groups(self, root: EntityKey) -> list["PodGroup"]:
        """``getLeafPodGroups``: the observed PodGroups of the tree under ``root`` (breadth first;
        a PodGroup root is its own leaf)."""
        if root.type == POD_GROUP_KEY_TYPE:
            pod_group = self.pod_groups.get(pod_group_key(root.namespace, root.name))
            return [] if pod_group is None else [pod_group]
        leaves: list["PodGroup"] = []
        queue = [composite_pod_group_key(root.namespace, root.name)]
        visited: set[EntityKey] = set()
        while queue:
            key = queue.pop(0)
            if key in visited:
                _log.error("cycle detected in composite pod group hierarchy: %s/%s", root.name, root.namespace)
                return leaves
            visited.add(key)
            for child in self.children.get(key, ()):
                pod_group = self.pod_groups.get(child)
                if pod_group is not None:
                    leaves.append(pod_group)
                if child in self.composite_pod_groups:
                    queue.append(child)
        return leaves

    def build_pod_group_info_for_pod_group(self, pod_group: "PodGroup",
                                           visited: set[EntityKey]) -> PodGroupInfo | None:
        """``buildPodGroupInfoForPG``: a leaf node (None if already visited: a cycle)."""
        key = pod_group_key(pod_group.namespace, pod_group.name)
        if key in visited:
            _log.error("cycle detected in composite pod group hierarchy: %s/%s", pod_group.name, pod_group.namespace)
            return None
        visited.add(key)
        return PodGroupInfo(pod_group.namespace, pod_group.name, POD_GROUP_KEY_TYPE, pod_group=pod_group)

    def build_pod_group_info_for_composite(self, cpg: "CompositePodGroup",
                                           visited: set[EntityKey]) -> PodGroupInfo | None:
        """``buildPodGroupInfoForCPG``: the node and, recursively, its observed children."""
        key = composite_pod_group_key(cpg.namespace, cpg.name)
        if key in visited:
            _log.error("cycle detected in composite pod group hierarchy: %s/%s", cpg.name, cpg.namespace)
            return None
        visited.add(key)
        info = PodGroupInfo(cpg.namespace, cpg.name, COMPOSITE_POD_GROUP_KEY_TYPE, composite_pod_group=cpg)
        for child in self.children.get(key, ()):
            child_pg = self.pod_groups.get(child)
            if child_pg is not None:
                node = self.build_pod_group_info_for_pod_group(child_pg, visited)
                if node is not None:
                    info.children.append(node)
            child_cpg = self.composite_pod_groups.get(child)
            if child_cpg is not None:
                node = self.build_pod_group_info_for_composite(child_cpg, visited)
                if node is not None:
                    info.children.append(node)
        return info

    def build_pod_group_info(self, root: EntityKey) -> PodGroupInfo | None:
        """``buildQueuedPodGroupInfo``'s tree: the whole observed hierarchy under ``root`` (None:
        the root is not observed)."""
        visited: set[EntityKey] = set()
        if root.type == POD_GROUP_KEY_TYPE:
            pod_group = self.pod_groups.get(pod_group_key(root.namespace, root.name))
            return None if pod_group is None else self.build_pod_group_info_for_pod_group(pod_group, visited)
        if root.type == COMPOSITE_POD_GROUP_KEY_TYPE:
            cpg = self.composite_pod_groups.get(composite_pod_group_key(root.namespace, root.name))
            return None if cpg is None else self.build_pod_group_info_for_composite(cpg, visited)
        return None

    def build_queued_pod_group_info(self, root: EntityKey) -> QueuedPodGroupInfo | None:
        """``buildQueuedPodGroupInfo``: a new, empty queue entity for the root and the observed
        tree below it (None: the root is not observed)."""
        tree = self.build_pod_group_info(root)
        return None if tree is None else QueuedPodGroupInfo.from_tree(tree)
