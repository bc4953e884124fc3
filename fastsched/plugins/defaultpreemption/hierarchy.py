"""Workload-aware preemption across composite pod groups (CompositePodGroup, v1.37.2): who a pod
belongs to when it is a victim, and how a composite preemptor's priority and policy are read.

Upstream ``pkg/scheduler/framework/preemption``: ``util.go`` (``TraverseHierarchyUp``,
``GetPodPriority``: a member counts with the priority of the **top** of its hierarchy that can be
listed), ``types.go`` (``getHighestAllAncestor``: the highest PodGroup or CompositePodGroup with
``disruptionMode: all`` is the unit evicted together; ``resolveCompositePreemptionPolicy``) and
``pkg/scheduler/util/utils.go`` (``CompositePodGroupPriority``). With a CompositePodGroup lister
of ``None`` (the gate off) each function is the flat rule. The functions live in
:mod:`.podgroup_preemption` (its victim functions take both listers); this module re-exports
them. ``MoreImportantVictim``'s CompositePodGroup rank is already in
:func:`~.podgroup_preemption.more_important_victim`.

Listers: anything with ``get(namespace, name)`` raising ``LookupError`` (PodGroupStateError is
one) for a missing object.
"""
from __future__ import annotations

# all defined in podgroup_preemption (the victim functions there take the CompositePodGroup lister
# and must not import this module: the package's no-cycle contract); this module names them
from .podgroup_preemption import (composite_pod_group_priority, get_highest_all_ancestor, get_pod_priority,
                                  resolve_composite_preemption_policy, traverse_hierarchy_up)

__all__ = ["composite_pod_group_priority", "traverse_hierarchy_up", "get_pod_priority", "get_highest_all_ancestor",
           "resolve_composite_preemption_policy"]
