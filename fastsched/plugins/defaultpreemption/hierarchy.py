"""Workload-aware preemption across composite pod groups (CompositePodGroup, v1.37.2): who a pod
belongs to when it is a victim, and how a composite preemptor's priority and policy are read.

Upstream ``pkg/scheduler/framework/preemption``: ``util.go`` (``TraverseHierarchyUp``,
``GetPodPriority``: a member counts with the priority of the **top** of its hierarchy that can be
listed), ``types.go`` (``getHighestAllAncestor``: the highest PodGroup or CompositePodGroup with
``disruptionMode: all`` is the unit evicted together; ``resolveCompositePreemptionPolicy``) and
``pkg/scheduler/util/utils.go`` (``CompositePodGroupPriority``). With a CompositePodGroup lister
of ``None`` (the gate off) each function is its flat counterpart in :mod:`.podgroup_preemption`,
so these replace them where the gate is on. ``MoreImportantVictim``'s CompositePodGroup rank is
already in :func:`~.podgroup_preemption.more_important_victim`.

Listers: anything with ``get(namespace, name)`` raising ``LookupError`` (PodGroupStateError is
one) for a missing object.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable

from ...framework.composite import COMPOSITE_POD_GROUP_KEY_TYPE, WORKLOAD_MAX_TREE_DEPTH, composite_pod_group_key
from ...framework.podgroups import POD_GROUP_KEY_TYPE, EntityKey, pod_group_key, pod_group_priority
from .podgroup_preemption import composite_pod_group_priority, resolve_composite_preemption_policy  # re-exported
from .podgroup_preemption import get_highest_all_ancestor as _flat_highest_all_ancestor
from .podgroup_preemption import get_pod_priority as _flat_pod_priority
from .util import pod_priority

if TYPE_CHECKING:  # pragma: no cover
    from ...api import Pod
    from ...api.compositepodgroup import CompositePodGroup
    from ...api.scheduling import PodGroup

__all__ = ["composite_pod_group_priority", "traverse_hierarchy_up", "get_pod_priority", "get_highest_all_ancestor",
           "resolve_composite_preemption_policy"]

#: visit(key, pod_group, composite_pod_group) -> stop
Visit = Callable[[EntityKey, "PodGroup | None", "CompositePodGroup | None"], bool]


def _get(lister: Any, namespace: str, name: str) -> Any:
    try:
        return lister.get(namespace, name)
    except LookupError:
        return None


def traverse_hierarchy_up(namespace: str, start: EntityKey, pod_groups: Any, composite_pod_groups: Any,
                          visit: Visit) -> None:
    """``TraverseHierarchyUp``: from ``start`` up the parents, ``visit`` at each listed group until
    it returns True, a group cannot be listed, the top is reached, a key repeats or 4 levels were
    visited. Nothing without both listers; other key types are not visited."""
    if pod_groups is None or composite_pod_groups is None:
        return
    current = start
    visited: set[EntityKey] = set()
    for _ in range(WORKLOAD_MAX_TREE_DEPTH):
        if current in visited:
            return
        visited.add(current)
        if current.type == POD_GROUP_KEY_TYPE:
            pg = _get(pod_groups, namespace, current.name)
            if pg is None or visit(current, pg, None) or pg.parent_composite_pod_group_name is None:
                return
            current = composite_pod_group_key(namespace, pg.parent_composite_pod_group_name)
        elif current.type == COMPOSITE_POD_GROUP_KEY_TYPE:
            cpg = _get(composite_pod_groups, namespace, current.name)
            if cpg is None or visit(current, None, cpg) or cpg.parent_composite_pod_group_name is None:
                return
            current = composite_pod_group_key(namespace, cpg.parent_composite_pod_group_name)
        # upstream's switch has no default: another type visits nothing and goes round again


def get_pod_priority(pod: "Pod", pod_groups: Any, composite_pod_groups: Any = None) -> int:
    """``GetPodPriority``: the priority of the topmost group listed above the pod (a
    CompositePodGroup's or a PodGroup's), else the pod's own; without a CompositePodGroup lister,
    the flat rule (the PodGroup's)."""
    group = pod.scheduling_group
    if group is None or pod_groups is None:
        return pod_priority(pod)
    if composite_pod_groups is None:
        return _flat_pod_priority(pod, pod_groups)
    last: list[Any] = [None]

    def visit(key: EntityKey, pg: Any, cpg: Any) -> bool:
        last[0] = pg if pg is not None else cpg
        return False

    traverse_hierarchy_up(pod.namespace, pod_group_key(pod.namespace, group.pod_group_name or ""), pod_groups,
                          composite_pod_groups, visit)
    top = last[0]
    if top is None:
        return pod_priority(pod)
    if top.KIND == "CompositePodGroup":
        return composite_pod_group_priority(top)
    return pod_group_priority(top)


def get_highest_all_ancestor(pod: "Pod", pod_groups: Any, composite_pod_groups: Any = None) -> EntityKey | None:
    """``getHighestAllAncestor``: the key of the highest listed group above the pod (its PodGroup
    included) with ``disruptionMode: all``, None if none; without a CompositePodGroup lister, the
    flat rule (the pod's PodGroup if ``all``)."""
    group = pod.scheduling_group
    if group is None or pod_groups is None:
        return None
    if composite_pod_groups is None:
        return _flat_highest_all_ancestor(pod, pod_groups)
    highest: list[EntityKey | None] = [None]

    def visit(key: EntityKey, pg: Any, cpg: Any) -> bool:
        mode = (pg if pg is not None else cpg).disruption_mode
        if mode is not None and mode.all:
            highest[0] = key
        return False

    traverse_hierarchy_up(pod.namespace, pod_group_key(pod.namespace, group.pod_group_name or ""), pod_groups,
                          composite_pod_groups, visit)
    return highest[0]
