"""The group cycle's bookkeeping over a composite tree (CompositePodGroup): the pure parts of
``schedule_one_podgroup.go`` that turn per-group algorithm results into what placement scoring
and submission read; not used by the cycle yet.

A composite cycle keeps one result per group of the tree, by entity key (``results``:
:data:`~fastsched.framework.podgroups.EntityKey` -> a result with ``status`` and, for a leaf
PodGroup, ``pod_results``: the same shapes as
:class:`~fastsched.scheduler.schedule_one_podgroup.PodGroupAlgorithmResult` and ``AlgorithmResult``).

* :func:`successful_leaf_results` (``successfulLeafResults``): the leaves whose result *and every
  ancestor's* is a success, depth first in children order; a group without a result (the walk
  stopped before it: PlacementFeasible) or with a failed one hides its subtree.
* :func:`make_composite_pod_group_assignments` (``makeCompositePodGroupAssignments``): per candidate
  placement, the proposed assignments of those leaves together (the members that succeeded on a
  node) and the root's placement cycle state: what PlacementScore plugins score.
* :func:`complete_composite_results` (``completeCompositePodGroupAlgorithmResultMap``): a group
  without a result gets its parent's status, and a succeeded group under a failed parent is
  invalidated with the parent's status (its pods must not bind).
"""
from __future__ import annotations

from typing import Any, Callable, Iterator

from ..framework.composite import PodGroupInfo
from ..framework.interface import PodGroupAssignments, ProposedAssignment
from ..framework.podgroups import EntityKey
from ..framework.status import Status

__all__ = ["successful_leaf_results", "make_proposed_assignments", "make_composite_pod_group_assignments",
           "complete_composite_results"]


def _ok(status: Status | None) -> bool:
    return status is None or status.is_success()


def successful_leaf_results(root: PodGroupInfo, results: dict[EntityKey, Any]) -> Iterator[Any]:
    """``successfulLeafResults`` (see the module docstring); a group's own result is yielded after
    its children's when it has pod results."""
    def walk(pgi: PodGroupInfo) -> Iterator[Any]:
        result = results.get(pgi.key)
        if result is None or not _ok(result.status):
            return
        for child in pgi.children:
            yield from walk(child)
        if result.pod_results:
            yield result

    yield from walk(root)


def make_proposed_assignments(result: Any) -> list[ProposedAssignment]:
    """``makeProposedAssignments``: the members that succeeded on a node."""
    return [ProposedAssignment(r.pinfo.pod, r.node_name, r.state) for r in result.pod_results
            if _ok(r.status) and r.node_name]


def make_composite_pod_group_assignments(
        root: PodGroupInfo, successful: list[tuple[Any, dict[EntityKey, Any]]],
        proposed: Callable[[Any], list[ProposedAssignment]] = make_proposed_assignments,
) -> tuple[list[PodGroupAssignments], list[Any]]:
    """``makeCompositePodGroupAssignments``: for each ``(placement, results of its run)``, the
    combined proposed assignments of the successful leaves and the root result's placement state
    (upstream iterates a map of placements: here the given order)."""
    assignments: list[PodGroupAssignments] = []
    states: list[Any] = []
    for placement, subtree in successful:
        combined: list[ProposedAssignment] = []
        for result in successful_leaf_results(root, subtree):
            combined.extend(proposed(result))
        assignments.append(PodGroupAssignments(placement, combined))
        states.append(subtree[root.key].placement_state)
    return assignments, states


def complete_composite_results(pgi: PodGroupInfo, results: dict[EntityKey, Any], parent_status: Status | None,
                               make_result: Callable[[PodGroupInfo, Status | None], Any]) -> None:
    """``completeCompositePodGroupAlgorithmResultMap`` from ``pgi`` down: ``make_result(pgi,
    status)`` builds the result a group gets from its parent (the root's parent status is a
    success: upstream's empty result)."""
    result = results.get(pgi.key)
    if result is None or (not _ok(parent_status) and _ok(result.status)):
        result = results[pgi.key] = make_result(pgi, parent_status)
    if pgi.composite_pod_group is not None:
        for child in pgi.children:
            complete_composite_results(child, results, result.status, make_result)
