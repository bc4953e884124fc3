"""The combined Filter verdicts of a profile over many nodes (the batch form of RunFilterPlugins)."""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

from .._kernels import _diagnosis
from ..framework.vectorized import FilterVerdicts
from ..framework.status import REJECTED_CODES, Code, Status
from ..framework.types import NodeToStatus
from .returns import bad_return

#: code (as uint8) -> whether it is a rejection: a table lookup costs a seventh of np.isin (issue 14)
_IS_REJECTED = np.zeros(256, dtype=bool)
_IS_REJECTED[[int(c) for c in REJECTED_CODES]] = True
# plain ints for array comparisons: NumPy probes an Enum operand for array attributes (slow)
_SUCCESS = int(Code.SUCCESS)
_ERROR = int(Code.ERROR)
_MAX_CODE = max(int(c) for c in Code)


def _valid_values(res: FilterVerdicts, failed_reason_ids: np.ndarray) -> bool:
    """Whether failing verdicts hold Codes and reason ids of tuples (or lists) of strings
    (``failed_reason_ids``: the reason ids of the failing nodes)."""
    if res.codes.view(np.uint8).max() > _MAX_CODE:  # negative codes wrap to >= 128
        return False
    reasons = res.reasons
    if type(reasons) is not list and not isinstance(reasons, (list, tuple)):
        return False
    if failed_reason_ids.min() < -1 or failed_reason_ids.max() >= len(reasons):
        return False
    for r in reasons:
        if type(r) is not tuple and not isinstance(r, (tuple, list)):
            return False
        for x in r:
            if type(x) is not str and not isinstance(x, str):
                return False
    return True


class FilterResults:
    """Per node: the final code, the plugin that decided it, and its reasons.

    ``codes``: (n,) int8 (0 = feasible). ``plugin_ids``: (n,) int16 index into ``plugin_names`` of
    the first failing filter (-1 for feasible nodes). ``reason_ids``: (n,) int32 index into
    ``reasons`` (tuples of strings). Statuses are materialized only on request (:meth:`status`).
    """

    __slots__ = ("codes", "plugin_ids", "reason_ids", "reasons", "plugin_names", "_all_feasible")

    def __init__(self, n: int, plugin_names: list[str]):
        self.codes = np.zeros(n, dtype=np.int8)
        self.plugin_ids = np.empty(n, dtype=np.int16)
        self.plugin_ids.fill(-1)
        self.reason_ids = np.empty(n, dtype=np.int32)
        self.reason_ids.fill(-1)
        self.reasons: list[tuple[str, ...]] = []
        self.plugin_names = plugin_names
        # True while no node has been marked failing (answers all_feasible() without a scan)
        self._all_feasible = True

    def __len__(self) -> int:
        return len(self.codes)

    def record(self, plugin_id: int, plugin_name: str, positions: np.ndarray,
               res: FilterVerdicts, check: Callable[[int], str] | None = None) -> np.ndarray:
        """Apply one plugin's verdicts on ``positions``; returns the positions still passing.

        Codes that are not rejections become Error with upstream's wrapping message. With
        ``check`` (a plugin's own ``filter_vectorized`` result, whose arrays have the right shape and
        dtype), verdicts whose values are not valid (a code that is no Code, a reason id outside
        ``reasons``, a reason that is not a tuple of strings) are replaced by an Error on every node
        (``check(len(positions))`` says what was expected); the values are only read when some node
        failed, so all-pass results cost nothing more.
        """
        if not np.count_nonzero(res.codes):  # every node passed (Success is 0)
            return positions
        failed = res.codes != _SUCCESS
        rids = res.reason_ids[failed]  # (f,) the failing nodes' reason ids (a copy)
        if check is not None and not _valid_values(res, rids):
            m = len(positions)
            res = FilterVerdicts.from_statuses(
                [bad_return(plugin_name, "Filter (filter_vectorized)", res, check(m))] * m)
            failed = res.codes != _SUCCESS
            rids = res.reason_ids[failed]
        self._all_feasible = False
        codes = res.codes[failed]  # (f,) int8 (a copy)
        offset = len(self.reasons)
        reasons = list(res.reasons)
        not_rejected = ~_IS_REJECTED[codes.view(np.uint8)]
        if not_rejected.any():
            # Codes that are no rejection (Error, Skip, ...) become Error with upstream's message.
            remap: dict[int, int] = {}
            for k in np.unique(rids[not_rejected]).tolist():
                msg = ", ".join(reasons[k]) if k >= 0 else ""
                remap[k] = len(reasons)
                reasons.append((f'running "{plugin_name}" filter plugin: {msg}',))
            sel = np.flatnonzero(not_rejected)
            rids[sel] = [remap[int(k)] for k in rids[sel].tolist()]
            codes[not_rejected] = Code.ERROR
        pos = positions[failed]
        self.codes[pos] = codes
        self.plugin_ids[pos] = plugin_id
        self.reason_ids[pos] = np.where(rids >= 0, rids + offset, -1) if offset or rids.min() < 0 else rids
        self.reasons.extend(reasons)
        return positions[~failed]

    def set_status(self, i: int, status: Status | None) -> None:
        """Overwrite node ``i`` with a per-node status (e.g. from the nominated-pods path)."""
        self._all_feasible = False  # conservative: all_feasible() then scans the codes
        if status is None or status.code() == Code.SUCCESS:
            self.codes[i] = 0
            self.plugin_ids[i] = -1
            self.reason_ids[i] = -1
            return
        self.codes[i] = int(status.code())
        plugin = status.plugin()
        if plugin not in self.plugin_names:
            self.plugin_names.append(plugin)
        self.plugin_ids[i] = self.plugin_names.index(plugin)
        self.reason_ids[i] = len(self.reasons)
        self.reasons.append(tuple(status.reasons()))

    @classmethod
    def from_arrays(cls, codes: np.ndarray, plugin_ids: np.ndarray, reason_ids: np.ndarray,
                    reasons: list[tuple[str, ...]], plugin_names: list[str]) -> "FilterResults":
        """Results holding the given arrays as they are (no copy, no check): the compiled
        diagnosis' (``CompiledCycle.diagnose``), whose codes are rejections only, plugin ids index
        ``plugin_names`` (-1 for a feasible node) and reason ids index ``reasons`` (-1: none)."""
        out = cls.__new__(cls)
        out.codes = codes
        out.plugin_ids = plugin_ids
        out.reason_ids = reason_ids
        out.reasons = reasons
        out.plugin_names = plugin_names
        out._all_feasible = False  # (all_feasible() scans the codes)
        return out

    @classmethod
    def placed(cls, n: int, part: "FilterResults", positions: np.ndarray) -> "FilterResults":
        """Results over ``n`` nodes holding ``part``'s verdicts at ``positions`` (the others feasible
        until set)."""
        out = cls(n, list(part.plugin_names))
        out.codes[positions] = part.codes
        out.plugin_ids[positions] = part.plugin_ids
        out.reason_ids[positions] = part.reason_ids
        out.reasons = list(part.reasons)
        out._all_feasible = part._all_feasible
        return out

    @classmethod
    def concat(cls, parts: "list[FilterResults]") -> "FilterResults":
        """The results of consecutive node ranges, as one (plugin and reason ids remapped)."""
        if len(parts) == 1:
            return parts[0]
        names = list(parts[0].plugin_names)
        out = cls(sum(len(p) for p in parts), names)
        pos = 0
        for p in parts:
            n = len(p)
            ids = []
            for name in p.plugin_names:
                if name not in names:
                    names.append(name)
                ids.append(names.index(name))
            pid_map = np.array(ids + [-1], dtype=np.int16)  # index -1 (no plugin) maps to -1
            out.codes[pos:pos + n] = p.codes
            out.plugin_ids[pos:pos + n] = pid_map[p.plugin_ids]
            out.reason_ids[pos:pos + n] = np.where(p.reason_ids >= 0, p.reason_ids + len(out.reasons), -1)
            out.reasons.extend(p.reasons)
            pos += n
        out._all_feasible = all(p._all_feasible for p in parts)
        return out

    # -- reading ---------------------------------------------------------------------------------
    def feasible(self) -> np.ndarray:
        """(n,) bool: nodes that passed every filter."""
        return self.codes == _SUCCESS

    def all_feasible(self) -> bool:
        """Whether every node passed every filter."""
        return self._all_feasible or not np.count_nonzero(self.codes)

    def num_feasible(self) -> int:
        """How many nodes passed every filter."""
        return len(self.codes) if self._all_feasible else len(self.codes) - int(np.count_nonzero(self.codes))

    def status(self, i: int) -> Status | None:
        """The Status RunFilterPlugins would return for node ``i`` (None when feasible)."""
        code = int(self.codes[i])
        if code == Code.SUCCESS:
            return None
        rid = int(self.reason_ids[i])
        s = Status(Code(code), *(self.reasons[rid] if rid >= 0 else ()))
        pid = int(self.plugin_ids[i])
        if pid >= 0:
            s.set_plugin(self.plugin_names[pid])
        return s

    def first_error(self, positions: np.ndarray | None = None) -> int:
        """The first position (in ``positions`` order, default all) whose code is Error; -1 if none."""
        codes = self.codes if positions is None else self.codes[positions]
        hits = np.flatnonzero(codes == _ERROR)
        if hits.size == 0:
            return -1
        return int(hits[0]) if positions is None else int(positions[hits[0]])

    def reason_counts(self, positions: np.ndarray | None = None) -> dict[str, int]:
        """How many of the (selected) failing nodes carry each reason string (FitError histogram),
        as a plain dict (a Counter's construction and its ``__missing__`` per new reason, both in
        Python, cost about what the rest of a preemptor's FitError message costs: issue 29)."""
        counts: dict[str, int] = {}
        get = counts.get
        if self.reason_ids.dtype == np.int32 and (positions is None or (type(positions) is np.ndarray
                                                                        and positions.dtype == np.int64)):
            # the gather, the bincount and the nonzero ids in one pass (None: a position or an id
            # out of range, which the NumPy form below handles or raises on as before)
            pairs = _diagnosis.id_counts(self.reason_ids, positions, len(self.reasons))
            if pairs is not None:
                reasons = self.reasons
                for k, c in pairs:
                    for reason in reasons[k]:
                        counts[reason] = get(reason, 0) + c
                return counts
        rids = self.reason_ids if positions is None else self.reason_ids[positions]
        rids = rids[rids >= 0]
        if rids.size:
            # a count per reason tuple (O(n), no sort: the ids index self.reasons)
            per_id = np.bincount(rids, minlength=len(self.reasons))
            for k in np.flatnonzero(per_id).tolist():
                c = int(per_id[k])
                for reason in self.reasons[k]:
                    counts[reason] = get(reason, 0) + c
        return counts

    def rejecting_plugins(self, positions: np.ndarray | None, pending_code: int) -> tuple[set[str], set[str]]:
        """(names of the plugins that rejected a (selected) node with a code other than
        ``pending_code``, names of those that rejected one with it): a failing cycle's
        UnschedulablePlugins and PendingPlugins, in one pass over the nodes."""
        if (self.plugin_ids.dtype == np.int16 and self.codes.dtype == np.int8
                and (positions is None or (type(positions) is np.ndarray and positions.dtype == np.int64))):
            got = _diagnosis.plugin_sets(self.plugin_ids, self.codes, positions, len(self.plugin_names),
                                         pending_code)
            if got is not None:
                names = self.plugin_names
                return {names[k] for k in got[0]}, {names[k] for k in got[1]}
        # (another dtype, or a position or id out of range: the NumPy form answers or raises)
        pos = np.arange(len(self.codes), dtype=np.int64) if positions is None else positions
        pending_at = self.codes[pos] == pending_code
        if not pending_at.any():
            return self.unschedulable_plugins(pos), set()
        return self.unschedulable_plugins(pos[~pending_at]), self.unschedulable_plugins(pos[pending_at])

    def unschedulable_plugins(self, positions: np.ndarray | None = None) -> set[str]:
        """Names of the plugins that rejected any (selected) node."""
        pids = self.plugin_ids if positions is None else self.plugin_ids[positions]
        pids = pids[pids >= 0]
        if not pids.size:
            return set()
        return {self.plugin_names[k] for k in np.flatnonzero(np.bincount(pids, minlength=len(self.plugin_names))).tolist()}


class ArrayNodeToStatus(NodeToStatus):
    """A NodeToStatus whose explicit entries are rejected nodes of a FilterResults (built lazily).

    ``positions`` are the rejected positions (into ``results`` and ``names``) that count as
    explicit entries; statuses set later (e.g. by extenders) override them.
    """

    def __init__(self, results: FilterResults, names: "list[str] | Any", positions: np.ndarray,
                 absent: Status | None = None):
        super().__init__(absent=absent)
        self._res = results
        # a list of names, or a NodeBatch whose names are only built if a name is asked for
        self._names_source = names
        self._pos = np.asarray(positions, dtype=np.int64)
        self._index: dict[str, int] | None = None

    @property
    def _names(self) -> list[str]:
        src = self._names_source
        return src if isinstance(src, list) else src.names

    def _idx(self) -> dict[str, int]:
        if self._index is None:
            names = self._names
            self._index = {names[p]: p for p in self._pos.tolist()}
        return self._index

    def get(self, node_name: str) -> Status:
        s = self._map.get(node_name)
        if s is not None:
            return s
        p = self._idx().get(node_name)
        if p is not None:
            s = self._res.status(p)
            if s is not None:  # always: the explicit positions are rejected ones
                return s
        return self._absent

    def len(self) -> int:
        if not self._map:  # (the FitError message asks at every failing attempt: no generator)
            return len(self._pos)
        idx = self._idx()
        return len(self._pos) + sum(1 for n in self._map if n not in idx)

    __len__ = len

    def items(self):
        seen = set(self._map)
        for p in self._pos.tolist():
            name = self._names[p]
            if name not in seen:
                yield name, self._res.status(p)
        yield from self._map.items()

    def reason_histogram(self) -> dict[str, int]:
        """reason -> count over the explicit entries, computed on the arrays."""
        if not self._map:
            return self._res.reason_counts(self._pos)
        keep = np.array([p for p in self._pos.tolist() if self._names[p] not in self._map], dtype=np.int64)
        counts = self._res.reason_counts(keep)
        for s in self._map.values():
            for r in s.reasons():
                counts[r] = counts.get(r, 0) + 1
        return counts

    def for_each_explicit_node(self, fn) -> None:
        """Call ``fn(name, status)`` for every explicit entry: the FilterResults' rejected nodes
        (unless a status was set for them by name since) and the statuses set by name, as
        :meth:`items` lists them (upstream ``ForEachExplicitNode``)."""
        for name, status in self.items():
            fn(name, status)

    def rows_for_status_code(self, code: Code) -> "tuple[Any, np.ndarray] | None":
        """Upstream ``NodesForStatusCode`` as rows of a node table, without building names.

        ``(table, rows)``: the table of the NodeBatch the map was built over and the rows of the
        explicit entries whose code is ``code``, in entry order. None when that answer would not be
        the whole of :meth:`nodes_for_status_code`: the map was built over names (no batch), a
        status was set by name since, or the absent nodes' status has ``code`` (then every node
        of the snapshot may qualify).
        """
        source = self._names_source
        table = getattr(source, "table", None)
        rows = getattr(source, "rows", None)
        if table is None or rows is None or self._map or self._absent.code() == code:
            return None
        pos = self._pos
        if len(pos):
            codes = self._res.codes
            if type(rows) is np.ndarray and rows.dtype == np.int64 and codes.dtype == np.int8:
                # the codes' gather and test and the rows' gather in one pass (None: a position
                # out of range, which the NumPy form below raises on)
                got = _diagnosis.rows_with_code(rows, codes, pos, int(code))
                if got is not None:
                    return table, got
            pos = pos[codes[pos] == int(code)]
        return table, rows[pos]

    def nodes_for_status_code(self, node_names, code: Code) -> list[str]:
        if self._absent.code() == code:
            return [n for n in node_names if self.get(n).code() == code]
        pos = self._pos[self._res.codes[self._pos] == code] if len(self._pos) else self._pos
        out = [self._names[p] for p in pos.tolist() if self._names[p] not in self._map]
        out.extend(n for n, s in self._map.items() if s.code() == code)
        return out
