"""Upstream ``helper.DefaultNormalizeScore`` for both scoring paths."""
from __future__ import annotations

from typing import Sequence, Union

import numpy as np

from ..._kernels import _score
from ...framework.status import Status
from ...framework.types import NodeScore

Scores = Union[Sequence[NodeScore], np.ndarray]


def default_normalize_score(max_priority: int, reverse: bool, scores: Scores) -> Status | None:
    """Scale scores from [0, max(scores)] to [0, max_priority] in place, Go integer arithmetic.

    ``scores`` is a list of :class:`NodeScore` (per-node path; each ``.score`` is rewritten) or an
    int64 array of shape (n,) (batch path; rewritten in place). When every score is 0 (or the list
    is empty) the scores stay as they are, or all become ``max_priority`` when ``reverse``;
    otherwise ``s' = max_priority * s // max`` (truncating), then ``max_priority - s'`` when
    ``reverse``. Returns None, upstream's nil Status.
    """
    if isinstance(scores, np.ndarray):
        _normalize_array(int(max_priority), bool(reverse), scores)
        return None
    max_count = 0
    for node_score in scores:
        if node_score.score > max_count:
            max_count = node_score.score
    if max_count == 0:
        if reverse:
            for node_score in scores:
                node_score.score = max_priority
        return None
    for node_score in scores:
        score = _go_div(max_priority * node_score.score, max_count)
        node_score.score = max_priority - score if reverse else score
    return None


def _go_div(a: int, b: int) -> int:
    """Go's truncating integer division (b > 0); scores are meant to be >= 0, but a negative one
    must still give what the compiled kernel (C division) gives."""
    q = abs(a) // b
    return -q if a < 0 else q


def _normalize_array(max_priority: int, reverse: bool, scores: np.ndarray) -> None:
    if scores.ndim != 1:
        raise ValueError(f"scores must be one-dimensional, got shape {scores.shape}")
    if scores.dtype == np.int64 and scores.flags.c_contiguous and scores.flags.writeable:
        _score.default_normalize(scores, max_priority, reverse)
        return
    work = np.ascontiguousarray(scores, dtype=np.int64)
    if work is scores:  # read-only: the kernel cannot write into it
        work = scores.copy()
    _score.default_normalize(work, max_priority, reverse)
    scores[...] = work
