"""The resource scorers, each in two forms that agree exactly: one node, and many nodes at once.

A scorer receives, per configured resource ``r`` (in the args' order), the node's allocatable and
its requested amount *including* the incoming pod. A resource that must not count (allocatable 0,
or excluded by :mod:`.resource_allocation`'s rules) arrives with allocatable 0 and is skipped, as
upstream's scorers skip ``allocatable[i] == 0``.

* one node: ``score_one(requested, allocatable)`` with two equally long int sequences -> int;
* many nodes: ``score_many(requested, allocatable)`` with two int64 arrays of shape ``(R, N)``
  (``R`` resources, ``N`` nodes) -> int64 array of shape ``(N,)``.

Upstream files: ``least_allocated.go``, ``most_allocated.go``, ``requested_to_capacity_ratio.go``,
``balanced_allocation.go`` (``balancedResourceScorer``) and ``helper/shape_score.go``. Integer
arithmetic is Go's (truncating division); floats are IEEE float64 computed in upstream's order, so
the two forms agree bit for bit before the final truncation.
"""
from __future__ import annotations

import math
from typing import Sequence

import numpy as np

from ...config.args import MAX_CUSTOM_PRIORITY_SCORE, UtilizationShapePoint
from ...framework.status import MAX_NODE_SCORE

#: Utilization is a percentage.
MAX_UTILIZATION = 100


# ------------------------------------------------------------------------------------------------
# Go arithmetic
# ------------------------------------------------------------------------------------------------
def go_div(a: int, b: int) -> int:
    """Go's int64 division: truncates toward zero."""
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b > 0) else -q


def go_div_array(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Elementwise Go division of int64 arrays (``b`` must hold no zeros)."""
    q = np.abs(a) // np.abs(b)
    return np.where((a >= 0) == (b > 0), q, -q)


def go_round(x: float) -> float:
    """Go ``math.Round``: half away from zero."""
    t = math.trunc(x)
    if abs(x - t) >= 0.5:
        t += math.copysign(1.0, x)
    return float(t)


def go_round_array(x: np.ndarray) -> np.ndarray:
    """Elementwise Go ``math.Round`` of a float64 array."""
    t = np.trunc(x)
    return np.where(np.abs(x - t) >= 0.5, t + np.copysign(1.0, x), t)


# ------------------------------------------------------------------------------------------------
# LeastAllocated / MostAllocated
# ------------------------------------------------------------------------------------------------
class _WeightedScorer:
    """Σ(score_r · w_r) / Σ w_r over the resources with allocatable != 0 (0 when no weight)."""

    def __init__(self, weights: Sequence[int]):
        self.weights = [int(w) for w in weights]
        self._weights_col = np.asarray(self.weights, dtype=np.int64).reshape(-1, 1)

    @staticmethod
    def resource_score(requested: int, capacity: int) -> int:  # pragma: no cover - abstract
        raise NotImplementedError

    @staticmethod
    def resource_scores(requested: np.ndarray, capacity: np.ndarray) -> np.ndarray:  # pragma: no cover
        raise NotImplementedError

    def score_one(self, requested: Sequence[int], allocatable: Sequence[int]) -> int:
        node_score = weight_sum = 0
        for req, alloc, weight in zip(requested, allocatable, self.weights):
            if alloc == 0:
                continue
            node_score += self.resource_score(req, alloc) * weight
            weight_sum += weight
        if weight_sum == 0:
            return 0
        return go_div(node_score, weight_sum)

    def score_many(self, requested: np.ndarray, allocatable: np.ndarray) -> np.ndarray:
        counted = allocatable != 0                                    # (R, N) bool
        safe_alloc = np.where(counted, allocatable, 1)                # (R, N) int64, no zeros
        scores = self.resource_scores(requested, safe_alloc)          # (R, N) int64
        node_score = np.where(counted, scores * self._weights_col, 0).sum(axis=0)
        weight_sum = np.where(counted, self._weights_col, 0).sum(axis=0)
        return np.where(weight_sum == 0, 0, go_div_array(node_score, np.where(weight_sum == 0, 1, weight_sum)))


class LeastAllocatedScorer(_WeightedScorer):
    """Favors free capacity: ``(capacity - requested) * 100 / capacity``, 0 when over capacity."""

    @staticmethod
    def resource_score(requested: int, capacity: int) -> int:
        if capacity == 0 or requested > capacity:
            return 0
        return go_div((capacity - requested) * MAX_NODE_SCORE, capacity)

    @staticmethod
    def resource_scores(requested: np.ndarray, capacity: np.ndarray) -> np.ndarray:
        free = go_div_array((capacity - requested) * MAX_NODE_SCORE, capacity)
        return np.where(requested > capacity, 0, free)


class MostAllocatedScorer(_WeightedScorer):
    """Favors used capacity: ``min(requested, capacity) * 100 / capacity``."""

    @staticmethod
    def resource_score(requested: int, capacity: int) -> int:
        if capacity == 0:
            return 0
        # requested may exceed capacity because pods without requests get the non-zero defaults
        return go_div(min(requested, capacity) * MAX_NODE_SCORE, capacity)

    @staticmethod
    def resource_scores(requested: np.ndarray, capacity: np.ndarray) -> np.ndarray:
        return go_div_array(np.minimum(requested, capacity) * MAX_NODE_SCORE, capacity)


# ------------------------------------------------------------------------------------------------
# RequestedToCapacityRatio
# ------------------------------------------------------------------------------------------------
class BrokenLinearFunction:
    """Upstream ``helper.BuildBrokenLinearFunction`` over ``(utilization, score)`` points.

    ``f(p)`` is ``shape[0].score`` for ``p <= shape[0].utilization``, ``shape[-1].score`` past the
    last point, and otherwise linear between the first point ``i`` with ``p <= u_i`` and the one
    before it, with Go's truncating division (a decreasing shape gives negative numerators).
    """

    def __init__(self, points: Sequence[tuple[int, int]]):
        self.points = [(int(u), int(s)) for u, s in points]

    def __call__(self, p: int) -> int:
        pts = self.points
        for i, (u, s) in enumerate(pts):
            if p <= u:
                if i == 0:
                    return s
                u0, s0 = pts[i - 1]
                return s0 + go_div((s - s0) * (p - u0), u - u0)
        return pts[-1][1]

    def evaluate(self, p: np.ndarray) -> np.ndarray:
        """``f`` of every element of an int64 array (same shape)."""
        pts = self.points
        out = np.full(p.shape, pts[-1][1], dtype=np.int64)
        # walk the segments backwards so that the first matching point wins
        for i in range(len(pts) - 1, -1, -1):
            u, s = pts[i]
            if i == 0:
                value = np.full(p.shape, s, dtype=np.int64)
            else:
                u0, s0 = pts[i - 1]
                value = s0 + go_div_array((s - s0) * (p - u0), np.full(p.shape, u - u0, dtype=np.int64))
            out = np.where(p <= u, value, out)
        return out


class RequestedToCapacityRatioScorer:
    """Shape score of each resource's utilization; ``round(Σ f·w / Σ w)`` over resources with f > 0.

    Shape scores (0-10) are scaled by ``MaxNodeScore / MaxCustomPriorityScore`` (x10).
    """

    def __init__(self, weights: Sequence[int], shape: Sequence[UtilizationShapePoint]):
        self.weights = [int(w) for w in weights]
        self._weights_col = np.asarray(self.weights, dtype=np.int64).reshape(-1, 1)
        scale = MAX_NODE_SCORE // MAX_CUSTOM_PRIORITY_SCORE
        self.function = BrokenLinearFunction([(p.utilization, p.score * scale) for p in shape])

    def resource_score(self, requested: int, capacity: int) -> int:
        if capacity == 0 or requested > capacity:
            return self.function(MAX_UTILIZATION)
        return self.function(go_div(requested * MAX_UTILIZATION, capacity))

    def score_one(self, requested: Sequence[int], allocatable: Sequence[int]) -> int:
        node_score = weight_sum = 0
        for req, alloc, weight in zip(requested, allocatable, self.weights):
            if alloc == 0:
                continue
            resource_score = self.resource_score(req, alloc)
            if resource_score > 0:
                node_score += resource_score * weight
                weight_sum += weight
        if weight_sum == 0:
            return 0
        return int(go_round(float(node_score) / float(weight_sum)))

    def score_many(self, requested: np.ndarray, allocatable: np.ndarray) -> np.ndarray:
        counted = allocatable != 0                                           # (R, N) bool
        safe_alloc = np.where(counted, allocatable, 1)                       # (R, N) int64
        utilization = np.where(requested > safe_alloc, MAX_UTILIZATION,
                               go_div_array(requested * MAX_UTILIZATION, safe_alloc))
        scores = self.function.evaluate(utilization)                         # (R, N) int64
        counted &= scores > 0
        node_score = np.where(counted, scores * self._weights_col, 0).sum(axis=0)
        weight_sum = np.where(counted, self._weights_col, 0).sum(axis=0)
        ratio = node_score.astype(np.float64) / np.where(weight_sum == 0, 1, weight_sum).astype(np.float64)
        return np.where(weight_sum == 0, 0, go_round_array(ratio).astype(np.int64))


# ------------------------------------------------------------------------------------------------
# BalancedAllocation
# ------------------------------------------------------------------------------------------------
class BalancedScorer:
    """``int64((1 - std) * 100)`` of the resources' usage fractions ``min(req/alloc, 1)``.

    ``std`` is ``|f1 - f2| / 2`` for two fractions, the population standard deviation for more,
    0 otherwise. Weights are not used (validation forces them to 1).
    """

    @staticmethod
    def score_one(requested: Sequence[int], allocatable: Sequence[int]) -> int:
        fractions: list[float] = []
        total = 0.0
        for req, alloc in zip(requested, allocatable):
            if alloc == 0:
                continue
            # float64(req) / float64(alloc): convert first, as Go does (not Python's exact int division)
            fraction = float(req) / float(alloc)
            if fraction > 1:
                fraction = 1.0
            total += fraction
            fractions.append(fraction)
        std = 0.0
        if len(fractions) == 2:
            std = abs((fractions[0] - fractions[1]) / 2)
        elif len(fractions) > 2:
            mean = total / float(len(fractions))
            acc = 0.0
            for fraction in fractions:
                acc = acc + (fraction - mean) * (fraction - mean)
            std = math.sqrt(acc / float(len(fractions)))
        return int((1 - std) * float(MAX_NODE_SCORE))

    @staticmethod
    def score_many(requested: np.ndarray, allocatable: np.ndarray) -> np.ndarray:
        counted = allocatable != 0                                              # (R, N) bool
        safe_alloc = np.where(counted, allocatable, 1).astype(np.float64)
        fractions = np.minimum(requested.astype(np.float64) / safe_alloc, 1.0)  # (R, N) float64
        count = counted.sum(axis=0)                                             # (N,) int64
        # Sum in resource order; an uncounted resource adds +0.0, which leaves the sum unchanged.
        total = np.zeros(requested.shape[1], dtype=np.float64)
        for r in range(requested.shape[0]):
            total = total + np.where(counted[r], fractions[r], 0.0)

        # two fractions: the first two counted resources, in resource order
        order = np.argsort(~counted, axis=0, kind="stable")                     # counted rows first
        first = np.take_along_axis(fractions, order[:1], axis=0)[0] if len(order) else total
        second = np.take_along_axis(fractions, order[1:2], axis=0)[0] if len(order) > 1 else total
        std_two = np.abs((first - second) / 2)

        # more than two: population standard deviation, accumulated in resource order
        safe_count = np.where(count == 0, 1, count).astype(np.float64)
        mean = total / safe_count
        acc = np.zeros_like(total)
        for r in range(requested.shape[0]):
            deviation = fractions[r] - mean
            acc = acc + np.where(counted[r], deviation * deviation, 0.0)
        std_many = np.sqrt(acc / safe_count)

        std = np.where(count == 2, std_two, np.where(count > 2, std_many, 0.0))
        return ((1 - std) * float(MAX_NODE_SCORE)).astype(np.int64)
