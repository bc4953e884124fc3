"""The (plugins x nodes) score matrix of RunScorePlugins and its batched weighting kernel."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from ..errors import FastschedError
from .._kernels import _score
from ..framework.parallelize import Parallelizer, chunk_size_for
from ..framework.status import MAX_NODE_SCORE, MIN_NODE_SCORE
from ..framework.types import NodePluginScores, PluginScore


#: Matrices smaller than this (plugins x nodes) are weighted on the calling thread.
PARALLEL_MIN_ELEMENTS = 1 << 18


class ScoreRangeError(FastschedError, ValueError):
    """A normalized score outside [MIN_NODE_SCORE, MAX_NODE_SCORE] (upstream's message)."""

    def __init__(self, plugin: str, score: int, node_index: int):
        super().__init__(
            f'plugin "{plugin}" returns an invalid score {score}, it should in the range of '
            f"[{MIN_NODE_SCORE}, {MAX_NODE_SCORE}] after normalizing")
        self.plugin = plugin
        self.score = score
        self.node_index = node_index


def weight_and_check(scores: np.ndarray, weights: np.ndarray, plugin_names: list[str],
                     parallelizer: Parallelizer, *,
                     min_parallel_elements: int = PARALLEL_MIN_ELEMENTS) -> tuple[np.ndarray, np.ndarray]:
    """Weight a normalized (plugins x nodes) int64 matrix and sum it per node.

    Runs in chunks over nodes with upstream's chunk-size rule, on ``parallelizer.threads`` OpenMP
    threads with the GIL released. Returns
    ``(weighted (P, N) int64, totals (N,) int64)``; raises :class:`ScoreRangeError` for the first
    out-of-range score in node order, then plugin order.
    """
    scores = np.ascontiguousarray(scores, dtype=np.int64)
    weights = np.ascontiguousarray(weights, dtype=np.int64)
    n_plugins, n_nodes = scores.shape
    if weights.shape != (n_plugins,):
        raise ValueError(f"weights has shape {weights.shape}, want ({n_plugins},)")
    weighted = np.empty_like(scores)
    totals = np.zeros(n_nodes, dtype=np.int64)
    if n_plugins == 0 or n_nodes == 0:
        return weighted, totals

    # Waking worker threads costs more than weighting a small matrix: small ones stay on this thread.
    threads = parallelizer.threads if scores.size >= min_parallel_elements else 1
    bad_node, bad_plugin = _score.weight_and_check(
        scores, weights, weighted, totals, chunk_size_for(n_nodes, parallelizer.parallelism),
        threads, MIN_NODE_SCORE, MAX_NODE_SCORE)
    if bad_node >= 0:
        raise ScoreRangeError(plugin_names[bad_plugin], int(scores[bad_plugin, bad_node]), bad_node)
    return weighted, totals


@dataclass
class ScoreMatrix:
    """Everything RunScorePlugins computed, as arrays.

    ``raw``, ``normalized`` and ``weighted`` are (plugins x nodes) int64; ``totals`` is (nodes,) int64;
    rows follow ``plugin_names`` (the Score plugins that ran), columns ``nodes`` / ``node_names``.
    """

    plugin_names: list[str]
    nodes: Any  # the scored nodes: a NodeBatch or a list of NodeInfo (names built on demand)
    raw: np.ndarray
    normalized: np.ndarray
    weighted: np.ndarray
    totals: np.ndarray

    @property
    def node_names(self) -> list[str]:
        nodes = self.nodes
        if hasattr(nodes, "names"):
            return nodes.names
        return [ni.node().name for ni in nodes]

    def to_node_plugin_scores(self) -> list[NodePluginScores]:
        """Upstream's ``[]NodePluginScores`` form (one Python object per node: the slow view)."""
        w = self.weighted.T.tolist()
        t = self.totals.tolist()
        names = self.plugin_names
        return [NodePluginScores(name=n, scores=[PluginScore(p, s) for p, s in zip(names, row)],
                                 total_score=tot)
                for n, row, tot in zip(self.node_names, w, t)]
