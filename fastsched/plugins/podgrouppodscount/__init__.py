"""PodGroupPodsCount (upstream ``pkg/scheduler/framework/plugins/podgrouppodscount/podgroup_pods_count.go``,
v1.37.2; CompositePodGroup's count over a composite entity's leaves built, not yet switched on).

A PlacementScore plugin of TopologyAwareWorkloadScheduling favouring placements that hold more of
the group: the score is the group's scheduled (assumed or bound) pods plus the members proposed in
the placement; normalized as ``score * 100 / max`` over the candidate placements (a maximum of 0 is
the error ``no pods from pod group are assigned to any of the candidate placements``).
"""
from __future__ import annotations

from typing import Any

from ...features import COMPOSITE_POD_GROUP, feature_gates_of
from ...framework import protocols as fwk
from ...framework.composite import get_pod_group_states
from ...framework.status import MAX_NODE_SCORE, MIN_NODE_SCORE, Status, StatusError

NAME = "PodGroupPodsCount"


class PodGroupPodsCount:
    """``PodGroupPodsCount`` (a PlacementScorePlugin with PlacementScoreExtensions).
    ``composite_pod_group``: the CompositePodGroup gate (a composite entity's count is every
    leaf PodGroup's under it, ``helper.GetPodGroupStates``; off: the group's own)."""

    def __init__(self, handle: Any, composite_pod_group: bool = False):
        self._handle = handle
        self._composite = composite_pod_group

    def name(self) -> str:
        return NAME

    def score_placement(self, state: Any, pod_group: Any, assignments: Any) -> tuple[int, Status | None]:
        manager = getattr(self._handle, "pod_group_manager", None)
        try:
            if manager is None:
                raise LookupError("no pod group manager")
            if self._composite:
                scheduled = 0
                for group_state, err in get_pod_group_states(manager.pod_group_states_lister(),
                                                             manager.composite_groups.composite_states_lister(),
                                                             pod_group.key):
                    if err is not None:
                        raise err
                    scheduled += group_state.scheduled_pods_count()
            else:
                scheduled = manager.pod_group_states_lister().get(pod_group.namespace,
                                                                  pod_group.name).scheduled_pods_count()
        except LookupError as e:
            return 0, Status.from_error(StatusError(str(e.args[0] if e.args else e)))
        return scheduled + len(assignments.proposed_assignments), None

    def placement_score_extensions(self) -> "PodGroupPodsCount":
        return self

    def normalize_placement_score(self, state: Any, pod_group: Any, scores: list) -> Status | None:
        max_count = 0
        for s in scores:
            max_count = max(max_count, s.score)
        if max_count == 0:
            return Status.from_error(StatusError(
                "no pods from pod group are assigned to any of the candidate placements"))
        for s in scores:
            s.score = MIN_NODE_SCORE + s.score * (MAX_NODE_SCORE - MIN_NODE_SCORE) // max_count
        return None


def new(args: Any, handle: fwk.Handle) -> PodGroupPodsCount:
    """Upstream ``New``: no args; the CompositePodGroup gate from the handle."""
    return PodGroupPodsCount(handle, feature_gates_of(handle).enabled(COMPOSITE_POD_GROUP))


__all__ = ["NAME", "PodGroupPodsCount", "new"]
