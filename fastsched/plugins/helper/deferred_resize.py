"""The PreFilter v1.37 gave NodeUnschedulable and TaintToleration (one behaviour, one place)."""
from __future__ import annotations

from typing import Sequence

from ...api import Pod
from ...framework import protocols as fwk
from ...framework.cycle_state import CycleState
from ...framework.status import Status
from ...framework.types import PreFilterResult

__all__ = ["DeferredResizePreFilter"]


class DeferredResizePreFilter:
    """v1.37.2 ``PreFilter`` of NodeUnschedulable and TaintToleration: Skip (their Filter then passes
    every node) for a pod whose resize is deferred under InPlacePodVerticalScalingSchedulerPreemption,
    alpha, off and fixed in fastsched; so Success: the plugin is listed at PreFilter (metrics,
    decision records) as upstream's."""

    def pre_filter(self, state: CycleState, pod: Pod, nodes: Sequence[fwk.NodeInfo]
                   ) -> tuple[PreFilterResult | None, Status | None]:
        return None, None

    def pre_filter_extensions(self) -> None:
        return None
