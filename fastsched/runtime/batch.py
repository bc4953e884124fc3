"""Opportunistic batching (upstream ``pkg/scheduler/framework/runtime/batch.go`` and
``framework/sorted_nodes.go``, OpportunisticBatching, beta and on since 1.35).

After a full scheduling cycle, the scored nodes other than the chosen one are kept with their raw
scores (:class:`SortedScoredNodes`, a max-heap by total score). The pod of the very next cycle, if
it has the same signature (``Framework.sign_pod``), no nominated node and the batch is younger
than :data:`MAX_BATCH_AGE`, gets a *hint*: the best remaining node, after the node chosen last
time was re-filtered and, when it still fits, re-scored and put back among the candidates (the
candidates' totals are renormalized together). The cycle then filters only the hint and, if it
fits, binds there without scoring (``fastsched.scheduler.schedule_one``).

A line-by-line port: :class:`SortedScoredNodes` reproduces Go's ``container/heap`` (``Init``,
``Pop``), so ties pop in the order upstream's heap pops them for the same input order; flushes
never clear the state (only :meth:`OpportunisticBatch.store_schedule_results` replaces it).
Counters stand in for upstream's batch metrics (``scheduler_batch_attempts_total``,
``scheduler_batch_cache_flushed_total``, ``scheduler_batch_rescore_attempts_total``) and
``batched_pods`` for the integration tests' ``TotalBatchedPods``.

The age uses the scheduler's clock (upstream: the wall clock): on a virtual clock cycles at one
instant never expire a batch.
"""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable, Iterable

import numpy as np

from ..snapshot.snapshot import NodeBatch

if TYPE_CHECKING:  # pragma: no cover
    from ..api import Pod
    from ..framework.cycle_state import CycleState

__all__ = ["MAX_BATCH_AGE", "BatchState", "OpportunisticBatch", "ScoredNode", "SortedScoredNodes", "heap_after_pop"]

#: upstream ``maxBatchAge`` (500 ms), in seconds of the scheduler's clock
MAX_BATCH_AGE = 0.5

# upstream metrics' label values
HINT_USED, HINT_NOT_USED, NO_HINT = "hint_used", "hint_not_used", "no_hint"
FLUSH_POD_FAILED, FLUSH_POD_SKIPPED, FLUSH_POD_NOMINATED = "pod_failed", "pod_skipped", "pod_nominated"
FLUSH_NODE_MISSING, FLUSH_EMPTY_LIST, FLUSH_EXPIRED = "node_missing", "empty_list", "expired"
FLUSH_POD_INCOMPATIBLE, FLUSH_POD_NOT_BATCHABLE = "pod_incompatible", "pod_not_batchable"
FLUSH_FILTER_ERROR, FLUSH_PRESCORE_ERROR = "filter_error", "prescore_error"
FLUSH_RESCORE_ERROR, FLUSH_NORMALIZE_ERROR = "rescore_error", "normalize_error"


@dataclass(slots=True)
class ScoredNode:
    """Upstream ``fwk.NodePluginScores`` as the batch keeps it: the node, the raw score of each
    Score plugin that ran (``RawScores``) and the total; ``randomizer`` is set only when extenders
    score, which turns batching off, so it is always 0 here."""

    name: str
    raw: tuple[tuple[str, int], ...] = ()
    total: int = 0
    randomizer: int = 0


def _less(a: ScoredNode, b: ScoredNode) -> bool:
    # nodeScoreHeap.Less: a max-heap by total, then randomizer
    return a.total > b.total or (a.total == b.total and a.randomizer > b.randomizer)


def _down(h: list[ScoredNode], i0: int, n: int) -> None:
    """Go's ``container/heap.down``."""
    i = i0
    while True:
        j1 = 2 * i + 1
        if j1 >= n:
            break
        j = j1
        j2 = j1 + 1
        if j2 < n and _less(h[j2], h[j1]):
            j = j2
        if not _less(h[j], h[i]):
            break
        h[i], h[j] = h[j], h[i]
        i = j


class SortedScoredNodes:
    """Upstream ``NewSortedScoredNodes``: ``heap.Init`` over the list as given; :meth:`pop` is
    ``heap.Pop`` (the best total; among equal totals, the node the heap's order puts first).

    :meth:`deferred` makes one whose heap is built on first use: most kept candidates are replaced
    by the next cycle's before any is popped, so a cycle keeps arrays, not a Python heap."""

    __slots__ = ("_h", "_build", "_n")

    def __init__(self, nodes: Iterable[ScoredNode]):
        self._h = _heapify(list(nodes))
        self._build: Callable[[], list[ScoredNode]] | None = None
        self._n = len(self._h)

    @classmethod
    def deferred(cls, n: int, build: Callable[[], list[ScoredNode]]) -> "SortedScoredNodes":
        """A heap of ``n`` nodes that ``build()`` returns, already a heap (built when first used)."""
        self = cls.__new__(cls)
        self._h, self._build, self._n = [], build, n
        return self

    def _heap(self) -> list[ScoredNode]:
        if self._build is not None:
            self._h, self._build = self._build(), None
        return self._h

    def pop(self) -> ScoredNode:
        h = self._heap()
        n = len(h) - 1
        h[0], h[n] = h[n], h[0]
        _down(h, 0, n)
        self._n = n
        return h.pop()

    def __len__(self) -> int:
        return self._n

    def unordered(self) -> list[ScoredNode]:
        """Upstream ``UnorderedList``: a copy of the heap's slice (its internal order)."""
        return list(self._heap())


def _heapify(h: list[ScoredNode]) -> list[ScoredNode]:
    """Go's ``heap.Init``, in place."""
    n = len(h)
    for i in range(n // 2 - 1, -1, -1):
        _down(h, i, n)
    return h


def heap_after_pop(first: ScoredNode, others: list[ScoredNode]) -> list[ScoredNode]:
    """The heap upstream keeps after ``NewSortedScoredNodes([first, *others]).Pop()`` when ``first``
    is a best node (``heap.Init`` leaves it at the root, so the Pop returns it)."""
    h = _heapify([first, *others])
    n = len(h) - 1
    h[0], h[n] = h[n], h[0]
    _down(h, 0, n)
    h.pop()
    return h


@dataclass(slots=True)
class BatchState:
    """Upstream ``batchState``: the signature the candidates were scored for, the candidates, and
    when the batch began (the scheduler's clock)."""

    signature: Any
    nodes: SortedScoredNodes
    created: float


class OpportunisticBatch:
    """Upstream ``OpportunisticBatch``: one per profile (``Framework.batch``)."""

    def __init__(self, handle: Any, generic_workload: bool = False):
        #: the Framework: its clock, Filter, PreScore, raw Score and NormalizeScores
        self.handle = handle
        self.generic_workload = generic_workload
        self.state: BatchState | None = None
        #: upstream ``lastCycle``: (cycle count, chosen node, succeeded)
        self.last_cycle: tuple[int, str, bool] = (0, "", False)
        #: pods placed on a hint (upstream's ``batchedPods``, read by tests as TotalBatchedPods)
        self.batched_pods = 0
        #: scheduler_batch_attempts_total by result, scheduler_batch_cache_flushed_total by reason
        self.attempts: Counter[str] = Counter()
        self.flushes: Counter[str] = Counter()
        self.rescore_attempts = 0
        #: (cycle, reason) of the flushes of the latest cycle that had any (decision records)
        self._flush_log: list[tuple[int, str]] = []

    def flushes_of(self, cycle: int) -> list[str]:
        """The flush reasons counted in scheduling cycle ``cycle`` (if it is the latest with any), sorted."""
        return sorted(r for c, r in self._flush_log if c == cycle)

    # -- upstream GetNodeHint ------------------------------------------------------------------
    def get_node_hint(self, state: "CycleState", pod: "Pod", signature: Any, cycle: int, snapshot: Any) -> str:
        """The node hinted for ``pod`` in scheduling cycle ``cycle`` ("" = none). ``state`` is the
        cycle's (PreFilter has run); ``snapshot`` the cycle's node snapshot."""
        hint = ""
        if self._compatible(pod, signature, cycle) and self._refresh_hint_candidates(state, pod, snapshot, cycle):
            assert self.state is not None
            hint = self.state.nodes.pop().name
        if not hint:
            self.attempts[NO_HINT] += 1
        return hint

    def has_state(self) -> bool:
        """Whether candidates are kept (upstream ``!stateEmpty()``): the cheap test a cycle makes
        before asking for a hint."""
        st = self.state
        return st is not None and len(st.nodes) > 0

    def _flush(self, reason: str, cycle: int) -> None:
        # upstream logUnusableState: counts the reason; the state stays as it is
        self.flushes[reason] += 1
        log = self._flush_log
        if log and log[-1][0] != cycle:
            log.clear()
        log.append((cycle, reason))

    def _compatible(self, pod: "Pod", signature: Any, cycle: int) -> bool:
        if not self.has_state():
            return False
        assert self.state is not None
        last_count, _, succeeded = self.last_cycle
        if cycle != last_count + 1 and (not self.generic_workload or cycle != last_count):
            self._flush(FLUSH_POD_SKIPPED, cycle)
            return False
        if not succeeded:
            self._flush(FLUSH_POD_FAILED, cycle)
            return False
        if pod.nominated_node_name:
            self._flush(FLUSH_POD_NOMINATED, cycle)
            return False
        if signature is None or signature != self.state.signature:
            self._flush(FLUSH_POD_INCOMPATIBLE, cycle)
            return False
        if self.handle.clock.now() > self.state.created + MAX_BATCH_AGE:
            self._flush(FLUSH_EXPIRED, cycle)
            return False
        return True

    def _refresh_hint_candidates(self, state: "CycleState", pod: "Pod", snapshot: Any, cycle: int) -> bool:
        chosen = self.last_cycle[1]
        row = snapshot.table.row_of.get(chosen)
        if row is None:
            self._flush(FLUSH_NODE_MISSING, cycle)
            return False
        st = self.handle.run_filter_plugins(state, pod, snapshot.get(chosen))
        if st is None or st.is_success():
            return self._rescore_hinted_node(state, pod, snapshot, row, cycle)
        if not st.is_rejected():
            self._flush(FLUSH_FILTER_ERROR, cycle)
            return False
        return True

    def _rescore_hinted_node(self, state: "CycleState", pod: "Pod", snapshot: Any, chosen_row: int,
                            cycle: int) -> bool:
        self.rescore_attempts += 1
        assert self.state is not None
        cached = self.state.nodes.unordered()
        row_of = snapshot.table.row_of
        rows = []
        for sn in cached:  # resolveCachedCandidates: every cached node must still exist
            row = row_of.get(sn.name)
            if row is None:
                self._flush(FLUSH_NODE_MISSING, cycle)
                return False
            rows.append(row)
        rows.append(chosen_row)
        nodes = NodeBatch(snapshot.table, np.array(rows, dtype=np.int64))
        fw = self.handle
        rescore_state = state.clone()
        st = fw.run_pre_score_plugins(rescore_state, pod, nodes)
        if st is not None and not st.is_success():
            self._flush(FLUSH_PRESCORE_ERROR, cycle)
            return False
        one = NodeBatch(snapshot.table, np.array([chosen_row], dtype=np.int64))
        fresh, names, st = fw.run_raw_score_plugins(rescore_state, pod, one)
        if fresh is None:
            self._flush(FLUSH_RESCORE_ERROR, cycle)
            return False
        fresh_raw = tuple((name, int(fresh[j, 0])) for j, name in enumerate(names))
        candidates = [*cached, ScoredNode(self.last_cycle[1], fresh_raw)]
        # NormalizeScores: the plugins that run now, each node's cached raw score (0 when missing)
        raw = np.zeros((len(names), len(candidates)), dtype=np.int64)
        index = {name: j for j, name in enumerate(names)}
        for i, sn in enumerate(candidates):
            for name, score in sn.raw:
                j = index.get(name)
                if j is not None:
                    raw[j, i] = score
        if names:
            m, st = fw.normalize_scores(rescore_state, pod, nodes, raw)
            if m is None:
                self._flush(FLUSH_NORMALIZE_ERROR, cycle)
                return False
            totals = m.totals.tolist()
        else:
            totals = [0] * len(candidates)
        self.state.nodes = SortedScoredNodes(ScoredNode(sn.name, sn.raw, int(t), sn.randomizer)
                                             for sn, t in zip(candidates, totals))
        return True

    # -- upstream StoreScheduleResults ---------------------------------------------------------
    def store_schedule_results(self, signature: Any, hinted: str, chosen: str,
                               others: SortedScoredNodes | None, cycle: int) -> None:
        """After a successful SchedulePod: remember the cycle; keep the candidates when the hint
        was used, else make ``others`` (the other scored nodes) the candidates."""
        self.last_cycle = (cycle, chosen, True)
        if hinted == chosen:
            self.attempts[HINT_USED] += 1
            self.batched_pods += 1
            return
        if hinted:
            self.attempts[HINT_NOT_USED] += 1
        if signature is not None and others is not None and len(others) > 0:
            self.state = BatchState(signature, others, self.handle.clock.now())
        else:
            self._flush(FLUSH_EMPTY_LIST if others is None or len(others) == 0 else FLUSH_POD_NOT_BATCHABLE, cycle)
            self.state = None
