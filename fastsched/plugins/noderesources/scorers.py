"""The resource scorers, each in two forms that agree exactly: one node, and many nodes at once.

A scorer receives, per configured resource ``r`` (in the args' order), the node's requested amount
*including* the incoming pod, the node's allocated amount *without* it, and its allocatable
(upstream v1.37's ``scorer(requested, allocated, allocatable)``; only BalancedAllocation reads the
allocated amounts). A resource that must not count (allocatable 0, or excluded by
:mod:`.resource_allocation`'s rules) arrives with allocatable 0 and is skipped, as upstream's
scorers skip ``allocatable[i] == 0``.

* one node: ``score_one(requested, allocated, allocatable)`` with equally long int sequences -> int;
* many nodes: the compiled kernel ``fastsched._kernels._resources.resource_scores``, which reads
  the node table directly (see :mod:`.resource_allocation`); each scorer names its kernel form with
  ``kernel_kind``, ``kernel_weights`` and ``kernel_shape``. ``score_many(requested, allocatable)``
  runs the same kernel on two int64 arrays of shape ``(R, N)`` (``R`` resources, ``N`` nodes) and
  returns an int64 array of shape ``(N,)`` (BalancedScorer's also takes the allocated amounts).

Upstream files: ``least_allocated.go``, ``most_allocated.go``, ``requested_to_capacity_ratio.go``,
``balanced_allocation.go`` (``balancedResourceScorer``) and ``helper/shape_score.go``. Integer
arithmetic is Go's (truncating division); floats are IEEE float64 computed in upstream's order, so
the two forms agree bit for bit before the final truncation.
"""
from __future__ import annotations

import math
from typing import Sequence

import numpy as np

from ..._kernels import _resources
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


def go_round(x: float) -> float:
    """Go ``math.Round``: half away from zero."""
    t: float = math.trunc(x)
    if abs(x - t) >= 0.5:
        t += math.copysign(1.0, x)
    return float(t)


_NO_SHAPE = (np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64))


def kernel_score_many(scorer, requested: np.ndarray, allocatable: np.ndarray,
                      allocated: np.ndarray | None = None) -> np.ndarray:
    """Run ``scorer``'s kernel on (R, N) int64 ``requested`` / ``allocatable`` -> (N,) int64.

    The kernel adds one pod's requests to every node's usage; with ``allocated`` (the usage
    without the pod, (R, N)) each node is run alone with its own ``requested - allocated``."""
    requested = np.asarray(requested, dtype=np.int64)
    n_res, n = requested.shape
    alloc = np.ascontiguousarray(np.asarray(allocatable, dtype=np.int64).T)  # (N, R) int64
    cols = np.arange(n_res, dtype=np.int64)
    out = np.empty(n, dtype=np.int64)
    weights = scorer.kernel_weights if scorer.kernel_weights is not None else np.ones(n_res, dtype=np.int64)
    shape_u, shape_s = scorer.kernel_shape
    no_nonzero = np.zeros(n_res, dtype=np.uint8)
    if allocated is None:
        used = np.ascontiguousarray(requested.T)                             # (N, R) int64
        _resources.resource_scores(alloc, used, used, np.arange(n, dtype=np.int64), cols, cols,
                                   no_nonzero, np.zeros(n_res, dtype=np.int64),
                                   weights, scorer.kernel_kind, shape_u, shape_s, out)
        return out
    used = np.ascontiguousarray(np.asarray(allocated, dtype=np.int64).T)     # (N, R) int64
    pod = np.ascontiguousarray(requested.T) - used
    one = np.empty(1, dtype=np.int64)
    for i in range(n):
        _resources.resource_scores(alloc, used, used, np.array([i], dtype=np.int64), cols, cols,
                                   no_nonzero, np.ascontiguousarray(pod[i]),
                                   weights, scorer.kernel_kind, shape_u, shape_s, one)
        out[i] = one[0]
    return out


# ------------------------------------------------------------------------------------------------
# LeastAllocated / MostAllocated
# ------------------------------------------------------------------------------------------------
class _WeightedScorer:
    """Σ(score_r · w_r) / Σ w_r over the resources with allocatable != 0 (0 when no weight)."""

    kernel_kind: int
    kernel_shape = _NO_SHAPE

    def __init__(self, weights: Sequence[int]):
        self.weights = [int(w) for w in weights]
        self.kernel_weights = np.asarray(self.weights, dtype=np.int64)

    @staticmethod
    def resource_score(requested: int, capacity: int) -> int:  # pragma: no cover - abstract
        raise NotImplementedError

    def score_one(self, requested: Sequence[int], allocated: Sequence[int], allocatable: Sequence[int]) -> int:
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
        return kernel_score_many(self, requested, allocatable)


class LeastAllocatedScorer(_WeightedScorer):
    """Favors free capacity: ``(capacity - requested) * 100 / capacity``, 0 when over capacity."""

    kernel_kind = _resources.LEAST_ALLOCATED

    @staticmethod
    def resource_score(requested: int, capacity: int) -> int:
        if capacity == 0 or requested > capacity:
            return 0
        return go_div((capacity - requested) * MAX_NODE_SCORE, capacity)


class MostAllocatedScorer(_WeightedScorer):
    """Favors used capacity: ``min(requested, capacity) * 100 / capacity``."""

    kernel_kind = _resources.MOST_ALLOCATED

    @staticmethod
    def resource_score(requested: int, capacity: int) -> int:
        if capacity == 0:
            return 0
        # requested may exceed capacity because pods without requests get the non-zero defaults
        return go_div(min(requested, capacity) * MAX_NODE_SCORE, capacity)


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


class RequestedToCapacityRatioScorer:
    """Shape score of each resource's utilization; ``round(Σ f·w / Σ w)`` over resources with f > 0.

    Shape scores (0-10) are scaled by ``MaxNodeScore / MaxCustomPriorityScore`` (x10).
    """

    kernel_kind = _resources.REQUESTED_TO_CAPACITY_RATIO

    def __init__(self, weights: Sequence[int], shape: Sequence[UtilizationShapePoint]):
        self.weights = [int(w) for w in weights]
        self.kernel_weights = np.asarray(self.weights, dtype=np.int64)
        scale = MAX_NODE_SCORE // MAX_CUSTOM_PRIORITY_SCORE
        self.function = BrokenLinearFunction([(p.utilization, p.score * scale) for p in shape])
        self.kernel_shape = (np.array([u for u, _ in self.function.points], dtype=np.int64),
                             np.array([sc for _, sc in self.function.points], dtype=np.int64))

    def resource_score(self, requested: int, capacity: int) -> int:
        if capacity == 0 or requested > capacity:
            return self.function(MAX_UTILIZATION)
        return self.function(go_div(requested * MAX_UTILIZATION, capacity))

    def score_one(self, requested: Sequence[int], allocated: Sequence[int], allocatable: Sequence[int]) -> int:
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
        return kernel_score_many(self, requested, allocatable)


# ------------------------------------------------------------------------------------------------
# BalancedAllocation
# ------------------------------------------------------------------------------------------------
def balanced_resource_score(used: Sequence[int], allocatable: Sequence[int]) -> int:
    """Upstream ``balancedResourceScore``: ``int64((1 - std) * 100)`` of the usage fractions
    ``min(used/alloc, 1)`` of the resources with allocatable != 0.

    ``std`` is ``|f1 - f2| / 2`` for two fractions, the population standard deviation for more,
    0 otherwise.
    """
    fractions: list[float] = []
    total = 0.0
    for req, alloc in zip(used, allocatable):
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


class BalancedScorer:
    """Upstream v1.37 ``balancedResourceScorer``: how the pod changes the node's balance.

    ``50 + (50 + with_pod - without_pod) / 2`` (Go's integer division) where ``with_pod`` and
    ``without_pod`` are :func:`balanced_resource_score` of the usage with and without the pod's
    requests: in [50, 100] each, so the score is 75 for no change, towards 100 when the pod improves
    the balance, towards 50 when it worsens it (v1.34 scored the balance with the pod only).
    Weights are not used (validation forces them to 1).
    """

    kernel_kind = _resources.BALANCED
    kernel_shape = _NO_SHAPE
    kernel_weights: np.ndarray | None = None  # the balanced kernel reads no weights

    @staticmethod
    def score_one(requested: Sequence[int], allocated: Sequence[int], allocatable: Sequence[int]) -> int:
        with_pod = balanced_resource_score(requested, allocatable)
        without_pod = balanced_resource_score(allocated, allocatable)
        half = MAX_NODE_SCORE // 2
        return half + go_div(half + with_pod - without_pod, 2)

    @classmethod
    def score_many(cls, requested: np.ndarray, allocated: np.ndarray, allocatable: np.ndarray) -> np.ndarray:
        return kernel_score_many(cls, requested, allocatable, allocated)
