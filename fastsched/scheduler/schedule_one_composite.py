"""The group cycle of a composite entity (CompositePodGroup, alpha): ``schedule_one_podgroup.go``'s
composite paths, v1.37.2.

A root CompositePodGroup's entity (:meth:`~fastsched.framework.podgroups.QueuedPodGroupInfo.from_tree`)
is scheduled as its tree (:class:`~fastsched.framework.composite.PodGroupInfo`):

* ``runRootSchedulingAlgorithm``: ``podGroupSchedulingRecursiveAlgorithm`` from the root, one
  result per group of the tree by entity key; every assumption it made is reverted at its end;
  a successful root that scheduled no pod is Unschedulable ``pod group is unschedulable``.
* a CompositePodGroup (``compositePodGroupSchedulingPlacementAlgorithm``): the PlacementGenerate
  plugin's placements of the current placement's nodes; in each (assumed in the snapshot) the
  children one by one in ``GetChildGroups`` order (``compositePodGroupSchedulingDefaultAlgorithm``:
  PlacementFeasible over the children before any and after each — a child that succeeded counts
  as scheduled —, an Unschedulable or Error stops; a child's Error is the group's ``composite pod
  group evaluation failed due to child error: ...``; a failure reverts what its children assumed).
  None fitting: the first placement's subtree results, the group's status ``0/N placements are
  available, first placement status: ...``; several: scored by the PlacementScore plugins over
  the combined assignments of the successful leaves (``findBestCompositePodGroupPlacement``), and
  the best subtree's members assumed again (``assumeSubtreeWithRevert``) for the groups after it.
* a PodGroup leaf: ``podGroupSchedulingAlgorithm`` (the placement algorithm with
  TopologyAwareWorkloadScheduling, its best result assumed again; else the default algorithm)
  over the leaf's queued members.
* ``completeCompositePodGroupAlgorithmResult`` (a group without a result, or a success under a
  failed parent, gets the parent's status; untried members the leaf's), the PodGroupPostFilter
  plugins when the root is Unschedulable (their status over every group of the tree), then
  ``submitPodGroupAlgorithmResult`` leaf by leaf (each leaf's condition) and the root's requeue.

Each cycle state links to its parent's as upstream's: a placement's ``POD_GROUP_CYCLE_KEY`` is its
group's cycle state, a child group's ``PLACEMENT_CYCLE_KEY`` the parent's placement state, a
member's the placement it is tried in. Upstream iterates maps of placements and results (random
order); here placements are in the generator's order and results in the order the groups were
evaluated. The PodGroupPostFilter plugins are given the entity (its members are every leaf's).
"""
from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any, Callable

from ..features import TOPOLOGY_AWARE_WORKLOAD_SCHEDULING
from ..framework.cycle_state import CycleState
from ..framework.podgroups import POD_GROUP_KEY_TYPE, EntityKey, QueuedPodGroupInfo
from ..framework.status import Code, Status
from ..snapshot.snapshot import PlacementError
from .composite_algorithm import complete_composite_results, make_composite_pod_group_assignments, \
    successful_leaf_results
from .schedule_one_podgroup import (POD_GROUP_CYCLE_KEY, PodGroupAlgorithmResult, PodGroupCycleMixin, _as_status, _ok,
                                    _unschedulable_group, run_placement_feasible_plugins,
                                    run_pod_group_post_filter_plugins, set_placement_cycle_state)

if TYPE_CHECKING:  # pragma: no cover
    from ..runtime import Framework

__all__ = ["CompositeCycleMixin"]

_perf_counter = time.perf_counter


class _Members:
    """The members of a subtree, for the decision-record bookkeeping (``_take_member_records``)."""

    __slots__ = ("members",)

    def __init__(self, members: list):
        self.members = members


def _status(st: Status | None) -> Status:
    return st if st is not None else Status(Code.SUCCESS)


class CompositeCycleMixin:
    """The composite entity's cycle, as methods of the Scheduler (see the module docstring)."""

    cache: Any
    feature_gates: Any
    metrics: Any
    use_compiled_cycle: bool
    _pod_group_dry_run: bool
    _placement_now: Any
    _rerun_for_post_filter: Callable[[Callable[[], Any]], Any]  # (ScheduleOnePodGroupMixin's)

    # -- podGroupCycle ---------------------------------------------------------------------------
    def _composite_pod_group_cycle(self, fw: "Framework", group_state: CycleState, pg_info: QueuedPodGroupInfo,
                                   started: float) -> None:
        """``podGroupCycle`` for a composite entity."""
        try:
            results = self._run_composite_root_algorithm(fw, group_state, pg_info)
            root = pg_info.tree
            root_status = results[root.key].status
            self._complete_composite_results(pg_info, group_state, results)
            self.metrics.pod_group_algorithm_latencies.append(_perf_counter() - started)
            if root_status.code() == Code.UNSCHEDULABLE:
                def scheduling_func() -> tuple[list, Status]:
                    # PodGroupPostFilter's rerun of the whole tree (no decision records, the
                    # plugin-call path: see _pod_group_cycle_rest)
                    again = self._rerun_for_post_filter(
                        lambda: self._run_composite_root_algorithm(fw, CycleState(), pg_info))
                    proposed = [r for res in again.values() for r in res.pod_results if _ok(r.status) and r.node_name]
                    return proposed, again[root.key].status
                pf_result, pf_status = run_pod_group_post_filter_plugins(
                    list(getattr(fw, "pod_group_post_filter_plugins", ())), group_state, pg_info, scheduling_func)
                self._apply_composite_post_filter_result(results, pf_result, pf_status)
            for result in list(results.values()):
                if result.pod_group_info.composite_pod_group is not None:
                    continue  # a CompositePodGroup owns no pods
                self._submit_leaf_result(fw, result.pod_group_info, result, started)  # type: ignore[attr-defined]
            self._finish_submit(pg_info, results[root.key], started, root_status)  # type: ignore[attr-defined]
        finally:
            self.cache.drop_parked()

    @staticmethod
    def _apply_composite_post_filter_result(results: dict, pf_result: Any, status: Status) -> None:
        """``applyPodGroupPostFilterResult`` over every group of the tree: the flat one per result
        (a CompositePodGroup's result holds no pods; a status shared by several groups gets the
        reason once per group, as upstream's)."""
        for result in results.values():
            PodGroupCycleMixin._apply_pod_group_post_filter_result(result, pf_result, status)

    def _complete_composite_results(self, pg_info: QueuedPodGroupInfo, group_state: CycleState,
                                    results: dict) -> None:
        """``completeCompositePodGroupAlgorithmResult``."""
        complete_composite_results(pg_info.tree, results, None,
                                   lambda pgi, st: PodGroupAlgorithmResult(pgi, _status(st)))
        for leaf in pg_info.tree.leaves():
            if leaf.members:  # (the leaves with queued members: QueuedPodInfos' keys)
                self._complete_pod_group_algorithm_result(leaf, group_state, results[leaf.key])  # type: ignore[attr-defined]

    # -- runRootSchedulingAlgorithm ----------------------------------------------------------------
    def _run_composite_root_algorithm(self, fw: "Framework", group_state: CycleState,
                                      pg_info: QueuedPodGroupInfo) -> dict[EntityKey, PodGroupAlgorithmResult]:
        """``runRootSchedulingAlgorithm`` for a composite entity: the results of the tree's groups
        by key; every assumption reverted before it returns."""
        root = pg_info.tree
        for leaf in root.leaves():  # QueuedPodInfos per leaf (skipPodGroupPodSchedule may have dropped some)
            leaf.members = pg_info.leaf_members(leaf.name)
        results: dict[EntityKey, PodGroupAlgorithmResult] = {}
        reverts: list[Callable[..., None]] = []
        try:
            root_result, reverts = self._recursive_algorithm(fw, group_state, pg_info, root, results)
        finally:
            for revert in reversed(reverts):
                revert()
        if _ok(root_result.status) and not root_result.any_scheduled:
            root_result.status = _unschedulable_group()
        return results

    def _recursive_algorithm(self, fw: "Framework", group_state: CycleState, root: QueuedPodGroupInfo,
                             node: Any, results: dict) -> tuple[PodGroupAlgorithmResult, list]:
        """``podGroupSchedulingRecursiveAlgorithm``."""
        if node.type == POD_GROUP_KEY_TYPE:
            result, reverts = self._leaf_algorithm(fw, group_state, node)
            results[node.key] = result
            return result, reverts
        return self._composite_placement_algorithm(fw, group_state, root, node, results)

    def _leaf_algorithm(self, fw: "Framework", group_state: CycleState, leaf: Any
                        ) -> tuple[PodGroupAlgorithmResult, list]:
        """``podGroupSchedulingAlgorithm`` for a leaf: the placement algorithm (its best result
        assumed again), or the default one in an implicit placement."""
        reverts: list[Callable[..., None]] = []
        if self.feature_gates.enabled(TOPOLOGY_AWARE_WORKLOAD_SCHEDULING):
            result = self._pod_group_placement_algorithm(fw, group_state, leaf, reverts)  # type: ignore[attr-defined]
        else:
            placement_state = CycleState()
            placement_state.write(POD_GROUP_CYCLE_KEY, group_state)
            result = self._pod_group_default_algorithm(fw, placement_state, leaf, reverts)  # type: ignore[attr-defined]
        result.status = _status(result.status)
        return result, reverts

    # -- compositePodGroupSchedulingPlacementAlgorithm -------------------------------------------
    def _composite_placement_algorithm(self, fw: "Framework", group_state: CycleState, root: QueuedPodGroupInfo,
                                       node: Any, results: dict) -> tuple[PodGroupAlgorithmResult, list]:
        final: PodGroupAlgorithmResult | None = None
        try:
            snapshot = self.cache.update_snapshot()
            group_state.set_record_plugin_metrics(True)
            placements, st = fw.run_placement_generate_plugins(group_state, node, snapshot.placement_batch())
            if not _ok(st):
                final = PodGroupAlgorithmResult(node, _status(st))
                return final, []
            placements = self._placement_order(node, placements)  # type: ignore[attr-defined]
            members = _Members([m for leaf in node.leaves() for m in leaf.members])
            any_subtree: dict | None = None
            successful: list[tuple[Any, dict]] = []
            records: dict[int, dict] = {}
            parent = snapshot.get_placement()
            try:
                for placement in placements:
                    try:
                        snapshot.assume_placement(placement)
                    except PlacementError as e:
                        final = PodGroupAlgorithmResult(node, _as_status(f"failed to assume pod group placement: {e}"))
                        return final, []
                    placement_state = CycleState()
                    placement_state.write(POD_GROUP_CYCLE_KEY, group_state)
                    subtree: dict = {}
                    own: list = []
                    outer, self._placement_now = self._placement_now, placement
                    try:
                        result, own = self._composite_default_algorithm(fw, placement_state, root, node, subtree)
                    finally:
                        self._placement_now = outer
                        for revert in reversed(own):
                            revert()
                    taken = self._take_member_records(members)  # type: ignore[attr-defined]
                    if result.status.code() == Code.ERROR:
                        self._open_records_update(taken)
                        final = result
                        return final, []
                    if any_subtree is None:
                        any_subtree = subtree
                        records[id(subtree)] = taken
                    if result.status.is_success():
                        successful.append((placement, subtree))
                        records[id(subtree)] = taken
            finally:
                snapshot.forget_placement()
                snapshot.assume_placement(parent)
            if not successful:
                assert any_subtree is not None  # the generator gives at least one placement
                any_root = any_subtree[node.key]
                any_root.status = _unschedulable_group(
                    f"0/{len(placements)} placements are available, first placement status: {any_root.status.as_error()}")
                # the whole subtree: the members keep their own FitErrors (their plugins' hints)
                results.update(any_subtree)
                self._open_records_update(records.get(id(any_subtree), {}))
                final = any_root
                return final, []
            best, st = self._find_best_composite_placement(fw, group_state, node, successful)
            if best is None:
                final = PodGroupAlgorithmResult(node, _status(st))
                return final, []
            err, reverts = self._assume_subtree_with_revert(fw, successful_leaf_results(node, best))  # type: ignore[attr-defined]
            if err is not None:
                final = PodGroupAlgorithmResult(node, _as_status(f"failed to assume the subtree: {err}"))
                return final, []
            results.update(best)
            self._open_records_update(records.get(id(best), {}))
            final = best[node.key]
            return final, reverts
        finally:
            results[node.key] = final

    def _open_records_update(self, records: dict) -> None:
        if records:
            self._open_records.update(records)  # type: ignore[attr-defined]

    def _find_best_composite_placement(self, fw: "Framework", group_state: CycleState, node: Any,
                                       successful: list) -> tuple[dict | None, Status | None]:
        """``findBestCompositePodGroupPlacement``: one successful placement is the best; several are
        scored over their successful leaves' combined assignments (ties by the seeded RNG)."""
        if len(successful) == 1:
            return successful[0][1], None
        assignments, states = make_composite_pod_group_assignments(node, successful)
        scores, st = fw.run_placement_score_plugins(group_state, node, assignments, states)
        if st is not None and not st.is_success():
            return None, st
        return successful[self._pick_best_placement(scores)][1], None  # type: ignore[attr-defined]

    # -- compositePodGroupSchedulingDefaultAlgorithm ---------------------------------------------
    def _composite_default_algorithm(self, fw: "Framework", placement_state: CycleState, root: QueuedPodGroupInfo,
                                     node: Any, results: dict) -> tuple[PodGroupAlgorithmResult, list]:
        from ..plugins.gangscheduling import PlacementProgress
        own: list[Callable[..., None]] = []
        result: PodGroupAlgorithmResult | None = None
        try:
            plugins = self._placement_feasible_plugins(fw)  # type: ignore[attr-defined]
            remaining, scheduled = len(node.children), 0
            feasible = run_placement_feasible_plugins(plugins, placement_state, node,
                                                      PlacementProgress(remaining, scheduled))
            if feasible is not None and feasible.code() in (Code.UNSCHEDULABLE, Code.ERROR):
                result = PodGroupAlgorithmResult(node, feasible, placement_state=placement_state)
                return result, own
            any_scheduled = False
            for child in node.child_groups():
                child_state = CycleState()
                set_placement_cycle_state(child_state, placement_state)
                child_result, child_reverts = self._recursive_algorithm(fw, child_state, root, child, results)
                if child_result.status.code() == Code.ERROR:
                    result = PodGroupAlgorithmResult(node, _as_status(
                        f"composite pod group evaluation failed due to child error: {child_result.status.as_error()}"),
                        placement_state=placement_state)
                    return result, own
                any_scheduled = any_scheduled or child_result.any_scheduled
                own.extend(child_reverts)
                remaining -= 1
                if child_result.status.is_success():
                    scheduled += 1
                feasible = run_placement_feasible_plugins(plugins, placement_state, node,
                                                          PlacementProgress(remaining, scheduled))
                if feasible is not None and feasible.code() in (Code.UNSCHEDULABLE, Code.ERROR):
                    break
            if feasible is not None and feasible.is_wait():
                feasible = _unschedulable_group(*feasible.reasons())
            result = PodGroupAlgorithmResult(node, _status(feasible), placement_state=placement_state,
                                             any_scheduled=any_scheduled)
            return result, own
        finally:
            assert result is not None
            results[node.key] = result
            if not result.status.is_success():
                for revert in reversed(own):
                    revert()
                own.clear()
                result.any_scheduled = False
