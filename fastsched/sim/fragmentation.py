"""Stranded free capacity: the free amount of a resource on nodes where no pod of given shapes
fits (the simulation's cpu fragmentation and the gang streams' GPU fragmentation)."""
from __future__ import annotations

from typing import Any, Iterable

import numpy as np

__all__ = ["stranded"]


def stranded(table: Any, col: int, shapes: Iterable[tuple[float, float, float]]) -> tuple[float, int, int]:
    """``(stranded / free, free, stranded)`` of resource column ``col`` over the live, uncordoned
    rows of the node table: free is ``alloc - requested`` (not below 0); a row's free amount is
    stranded when no shape ``(cpu millis, memory bytes, amount of col)`` fits there (free cpu,
    memory and ``col`` at least the shape's, a pod slot left). Taints and affinity are ignored.
    ``(0.0, 0, 0)`` when nothing is free."""
    rows = table.live & ~table.unschedulable
    if not rows.any():
        return 0.0, 0, 0
    free = np.maximum(table.alloc[rows, col] - table.requested[rows, col], 0)
    total = int(free.sum())
    if total <= 0:
        return 0.0, 0, 0
    free_cpu = np.maximum(table.alloc[rows, 0] - table.requested[rows, 0], 0)
    free_mem = np.maximum(table.alloc[rows, 1] - table.requested[rows, 1], 0)
    slots = table.allowed_pods[rows] - table.pod_count[rows]
    hosts = np.zeros(len(free), dtype=bool)
    for cpu, mem, amount in shapes:
        hosts |= (free >= amount) & (free_cpu >= cpu) & (free_mem >= mem) & (slots >= 1)
    lost = int(free[~hosts].sum())
    return lost / total, total, lost
