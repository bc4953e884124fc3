"""The vectorized plugin protocol, next to upstream's one-node-at-a-time interfaces.

A plugin may add vectorized methods beside its per-node ones; the runtime uses them whenever it has
the candidate nodes as a NodeBatch (:class:`fastsched.framework.protocols.NodeBatch`: ``nodes.table``,
``nodes.rows``, its columns documented there), and falls back to the per-node methods otherwise.
Both paths must give identical verdicts, reasons and scores (:func:`fastsched.testing.check_plugin`
checks a plugin for that).

* ``filter_vectorized(state, pod, nodes) -> FilterVerdicts`` — a Code per node (int8) and, for each
  failing node, the index of its reason tuple. Returning a ``Status`` instead applies that status to
  every node (e.g. an Error).
* ``score_vectorized(state, pod, nodes) -> (scores, status)`` — raw scores, int64 array of shape
  ``(len(nodes),)``.
* ``normalize_score_vectorized(state, pod, scores, nodes) -> status`` (on the ScoreExtensions object) —
  normalizes the int64 array in place.

Plugins declare these by subclassing :class:`VectorizedFilterPlugin` / :class:`VectorizedScorePlugin` /
:class:`VectorizedScoreExtensions`, or simply by defining the methods.
"""
from __future__ import annotations

import abc
from itertools import compress, repeat
from operator import is_not
from typing import TYPE_CHECKING, Iterable, Sequence

import numpy as np

from .interface import FilterPlugin, ScoreExtensions, ScorePlugin
from .status import Code, Status

if TYPE_CHECKING:  # pragma: no cover
    from ..api import Pod
    from . import protocols as fwk
    from .cycle_state import CycleState

SUCCESS = np.int8(Code.SUCCESS)


def _read_only(a: np.ndarray) -> np.ndarray:
    a.flags.writeable = False
    return a


# shared buffers behind FilterVerdicts.all_pass
_PASS_CODES = _read_only(np.zeros(1 << 12, dtype=np.int8))
_NO_REASON_IDS = _read_only(np.full(1 << 12, -1, dtype=np.int32))


class FilterVerdicts:
    """Per-node filter verdicts for a batch of nodes.

    ``codes``: (n,) int8, a :class:`Code` per node (0 = Success). ``reason_ids``: (n,) int32, for a
    failing node the index into ``reasons`` of its reason tuple (-1 for passing nodes).
    ``reasons``: list of tuples of reason strings (an Error's message is its only reason).
    """

    __slots__ = ("codes", "reason_ids", "reasons")

    def __init__(self, codes: np.ndarray, reason_ids: np.ndarray | None = None,
                 reasons: Sequence[tuple[str, ...]] = ()):
        self.codes = np.asarray(codes, dtype=np.int8)
        if reason_ids is None:
            reason_ids = np.full(len(self.codes), -1, dtype=np.int32)
        self.reason_ids = np.asarray(reason_ids, dtype=np.int32)
        self.reasons = list(reasons)

    @classmethod
    def all_pass(cls, n: int) -> "FilterVerdicts":
        """Every node passes (the arrays are read-only views of shared buffers: see
        :func:`passes_every_node`)."""
        global _PASS_CODES, _NO_REASON_IDS
        if n > len(_PASS_CODES):
            _PASS_CODES = _read_only(np.zeros(max(n, 2 * len(_PASS_CODES)), dtype=np.int8))
            _NO_REASON_IDS = _read_only(np.full(len(_PASS_CODES), -1, dtype=np.int32))
        if cls is not FilterVerdicts:
            return cls(_PASS_CODES[:n], _NO_REASON_IDS[:n])
        # what __init__ makes of these arrays (already int8 and int32), without its conversions:
        # the batch Filters of most cycles answer this (issue 27)
        out = _new_verdicts(cls)
        out.codes = _PASS_CODES[:n]
        out.reason_ids = _NO_REASON_IDS[:n]
        out.reasons = []
        return out

    @classmethod
    def from_mask(cls, fail: np.ndarray, code: Code, *reasons: str) -> "FilterVerdicts":
        """Nodes where ``fail`` is True get ``code`` with one shared reason tuple."""
        fail = np.asarray(fail, dtype=bool)
        # (the bools' bytes are 0 and 1: a product and a shift, not two selects and two casts;
        # DynamicResources' batch Filter answers this per cycle where few nodes have devices free)
        codes = fail.view(np.int8) * np.int8(code)
        rid = fail.astype(np.int32)
        rid -= 1
        return cls(codes, rid, [tuple(reasons)])

    @classmethod
    def from_statuses(cls, statuses: Sequence[Status | None], at: Iterable[int] | None = None) -> "FilterVerdicts":
        """From per-node statuses (the per-node path), sharing equal reason tuples. ``at``: the
        positions that may hold a Status, ascending and distinct (every other one is None), when
        the caller knows them: the same verdicts without a pass over every node (a batch Filter
        that decides a few nodes and passes the rest, as DynamicResources' sharing by node shape,
        set a few of ~500 entries; the pass was ~6% of such a cycle's instructions)."""
        n = len(statuses)
        codes = np.zeros(n, dtype=np.int8)
        rid = np.full(n, -1, dtype=np.int32)
        reasons: list[tuple[str, ...]] = []
        index: dict[tuple[str, ...], int] = {}
        if at is None:
            # (the failing nodes' positions found in C: most batches pass most nodes)
            at = compress(range(n), map(is_not, statuses, repeat(None)))
        for i in at:
            s = statuses[i]
            if s is None or s.code() == Code.SUCCESS:
                continue
            codes[i] = int(s.code())
            key = tuple(s.reasons())
            k = index.get(key)
            if k is None:
                k = index[key] = len(reasons)
                reasons.append(key)
            rid[i] = k
        return cls(codes, rid, reasons)

    def __len__(self) -> int:
        return len(self.codes)

    def status(self, i: int, plugin: str = "") -> Status | None:
        """The Status of the node at position ``i`` (None when it passed)."""
        code = int(self.codes[i])
        if code == Code.SUCCESS:
            return None
        rid = int(self.reason_ids[i])
        reasons = self.reasons[rid] if rid >= 0 else ()
        s = Status(Code(code), *reasons)
        if plugin:
            s.set_plugin(plugin)
        return s


_new_verdicts = object.__new__


def passes_every_node(res: FilterVerdicts) -> bool:
    """Whether ``res`` holds :meth:`FilterVerdicts.all_pass`'s codes (a read-only view of the
    shared zeros: every node passes). False says nothing (other verdicts may pass every node
    too): a caller's shortcut, skipping the codes' compare when it is True."""
    return res.codes.base is _PASS_CODES


class VectorizedFilterPlugin(FilterPlugin):
    """A Filter plugin with a vectorized path."""

    @abc.abstractmethod
    def filter_vectorized(self, state: "CycleState", pod: "Pod", nodes: "fwk.NodeBatch"
                          ) -> FilterVerdicts | Status | None:
        """Verdicts for every node in ``nodes`` (a NodeBatch)."""


class VectorizedScorePlugin(ScorePlugin):
    """A Score plugin with a vectorized path."""

    @abc.abstractmethod
    def score_vectorized(self, state: "CycleState", pod: "Pod", nodes: "fwk.NodeBatch"
                         ) -> tuple[np.ndarray, Status | None]:
        """Raw scores of every node in ``nodes`` (a NodeBatch), int64 of shape (len(nodes),)."""


class VectorizedScoreExtensions(ScoreExtensions):
    @abc.abstractmethod
    def normalize_score_vectorized(self, state: "CycleState", pod: "Pod", scores: np.ndarray,
                                   nodes: "fwk.NodeBatch") -> Status | None:
        """Normalize ``scores`` (int64, one per node of ``nodes``) in place."""
