"""Counts and scores keyed by topology pair, in two interchangeable forms.

Upstream keeps ``map[topologyPair]int64`` (PreFilter) and ``map[key]map[value]int64`` (PreScore).
Here each map is built either by walking NodeInfo pods (the *pairs* form, a dict) or over the node
table (the *arrays* form: per topology key an int64 array indexed by the table's label codes for that
key, ``table.label_values[key][code]`` being the value). Either form converts to the other on demand,
so the per-node and the batch methods read the same state, whichever path built it.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Mapping, Sequence

import numpy as np

if TYPE_CHECKING:  # pragma: no cover
    from ...framework.protocols import NodeTable


def lookup(arr: np.ndarray | None, codes: np.ndarray) -> np.ndarray:
    """``arr[codes]`` with 0 where a code is -1 (label absent) or beyond ``arr``; int64 (n,)."""
    if arr is None or not len(arr) or not len(codes):
        return np.zeros(len(codes), dtype=np.int64)
    # one gather from a padded copy: code -1 reads the trailing 0, codes beyond arr read 0 too
    padded = np.zeros(max(len(arr), int(codes.max()) + 1) + 1, dtype=np.int64)
    padded[:len(arr)] = arr
    return padded[codes]


def _value_codes(table: NodeTable, key: str, values: list[str]) -> np.ndarray:
    """The table's label codes of ``values`` under ``key`` (-1 for values no node has)."""
    return np.fromiter((table.label_code(key, v) for v in values), dtype=np.int64, count=len(values))


class TopologyCounts:
    """``(topology key, value) -> count``: upstream ``topologyToMatchedTermCount``.

    Entries are never zero (upstream deletes a pair when an update brings it to 0; counts may go
    negative through RemovePod, which upstream keeps).
    """

    __slots__ = ("_pairs", "_table", "_arrays")

    def __init__(self, pairs: dict[tuple[str, str], int] | None = None):
        #: None when only the arrays form is current
        self._pairs: dict[tuple[str, str], int] | None = pairs if pairs is not None else {}
        self._table: Any = None
        #: key -> (V_key,) int64 counts by label code; None when only the pairs form is current
        self._arrays: dict[str, np.ndarray] | None = None

    @classmethod
    def from_arrays(cls, table: NodeTable, arrays: dict[str, np.ndarray]) -> "TopologyCounts":
        c = cls.__new__(cls)
        c._pairs = None
        c._table = table
        c._arrays = {k: a for k, a in arrays.items() if np.count_nonzero(a)}  # (faster than any())
        return c

    @classmethod
    def from_nonzero_arrays(cls, table: NodeTable, arrays: dict[str, np.ndarray]) -> "TopologyCounts":
        """:meth:`from_arrays` for arrays the caller knows to have a nonzero count each (taken as
        they are: the arrays form is never written in place, :meth:`update` moves to pairs)."""
        c = cls.__new__(cls)
        c._pairs = None
        c._table = table
        c._arrays = arrays
        return c

    # -- forms ------------------------------------------------------------------------------------
    def pairs(self) -> dict[tuple[str, str], int]:
        """The dict form (materialized once from the arrays)."""
        if self._pairs is None:
            pairs: dict[tuple[str, str], int] = {}
            assert self._arrays is not None  # one of the two forms is always current
            for key, arr in self._arrays.items():
                values = self._table.label_values[key]
                nz = np.flatnonzero(arr)
                for code, count in zip(nz.tolist(), arr[nz].tolist()):
                    pairs[(key, values[code])] = count
            self._pairs = pairs
        return self._pairs

    def arrays(self, table: NodeTable) -> dict[str, np.ndarray]:
        """The arrays form over ``table`` (built once from the pairs when needed)."""
        if self._arrays is None or self._table is not table:
            by_key: dict[str, list[tuple[str, int]]] = {}
            for (key, value), count in self.pairs().items():
                by_key.setdefault(key, []).append((value, count))
            arrays = {}
            for key, entries in by_key.items():
                values = table.label_values.get(key)
                if values is None:
                    continue  # no node has the key: no node can look these counts up
                arr = np.zeros(len(values), dtype=np.int64)
                codes = _value_codes(table, key, [v for v, _ in entries])
                counts = np.array([c for _, c in entries], dtype=np.int64)
                ok = codes >= 0
                np.add.at(arr, codes[ok], counts[ok])
                arrays[key] = arr
            self._table, self._arrays = table, arrays
        return self._arrays

    # -- map operations -----------------------------------------------------------------------------
    def get(self, key: str, value: str) -> int:
        return self.pairs().get((key, value), 0)

    def is_empty(self) -> bool:
        """``len(m) == 0``."""
        if self._pairs is not None:
            return not self._pairs
        return not self._arrays

    def keys(self) -> set[str]:
        """The topology keys with at least one entry."""
        if self._pairs is not None:
            return {k for k, _ in self._pairs}
        return set(self._arrays or ())

    def update(self, node_labels: Mapping[str, str], key: str, delta: int) -> None:
        """Upstream ``update``: add ``delta`` at ``(key, node[key])`` if the node has the key."""
        value = node_labels.get(key)
        if value is None:
            return
        pairs = self.pairs()
        self._arrays = None  # the pairs are now the only current form
        pair = (key, value)
        c = pairs.get(pair, 0) + delta
        if c:
            pairs[pair] = c
        else:
            pairs.pop(pair, None)

    def clone(self) -> "TopologyCounts":
        return TopologyCounts(dict(self.pairs()))

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, TopologyCounts):
            return NotImplemented
        return self.pairs() == other.pairs()

    def __repr__(self) -> str:
        return f"TopologyCounts({self.pairs()!r})"


class TopologyScores:
    """``key -> value -> score``: upstream ``scoreMap``. An entry exists once a term contributed to
    it, even when the contributions sum to 0 (PreScore skips only when there is no entry at all)."""

    __slots__ = ("_pairs", "_table", "_arrays")

    def __init__(self, pairs: dict[str, dict[str, int]] | None = None):
        #: None when only the arrays form is current
        self._pairs: dict[str, dict[str, int]] | None = pairs if pairs is not None else {}
        self._table: Any = None
        #: key -> ((V_key,) int64 scores, (V_key,) bool entry exists) by label code
        self._arrays: dict[str, tuple[np.ndarray, np.ndarray]] | None = None

    @classmethod
    def from_arrays(cls, table: NodeTable, arrays: dict[str, tuple[np.ndarray, np.ndarray]]) -> "TopologyScores":
        s = cls.__new__(cls)
        s._pairs = None
        s._table = table
        s._arrays = {k: sp for k, sp in arrays.items() if sp[1].any()}
        return s

    @classmethod
    def from_nonempty_arrays(cls, table: NodeTable, arrays: dict[str, tuple[np.ndarray, np.ndarray]]
                             ) -> "TopologyScores":
        """:meth:`from_arrays` for arrays the caller knows to have an entry each (taken as they
        are: the arrays form is never written in place)."""
        s = cls.__new__(cls)
        s._pairs = None
        s._table = table
        s._arrays = arrays
        return s

    def pairs(self) -> dict[str, dict[str, int]]:
        if self._pairs is None:
            pairs: dict[str, dict[str, int]] = {}
            assert self._arrays is not None  # one of the two forms is always current
            for key, (scores, present) in self._arrays.items():
                values = self._table.label_values[key]
                idx = np.flatnonzero(present)
                pairs[key] = {values[c]: s for c, s in zip(idx.tolist(), scores[idx].tolist())}
            self._pairs = pairs
        return self._pairs

    def arrays_table(self) -> Any:
        """The table the scores' arrays are over (None: built as pairs, no arrays yet)."""
        return self._table if self._arrays is not None else None

    def arrays(self, table: NodeTable) -> dict[str, tuple[np.ndarray, np.ndarray]]:
        if self._arrays is None or self._table is not table:
            arrays = {}
            for key, by_value in self.pairs().items():
                values = table.label_values.get(key)
                if values is None:
                    continue
                scores = np.zeros(len(values), dtype=np.int64)
                present = np.zeros(len(values), dtype=bool)
                items = list(by_value.items())
                codes = _value_codes(table, key, [v for v, _ in items])
                vals = np.array([s for _, s in items], dtype=np.int64)
                ok = codes >= 0
                scores[codes[ok]] = vals[ok]
                present[codes[ok]] = True
                arrays[key] = (scores, present)
            self._table, self._arrays = table, arrays
        return self._arrays

    def is_empty(self) -> bool:
        if self._pairs is not None:
            return not self._pairs
        return not self._arrays

    def score(self, node_labels: Mapping[str, str]) -> int:
        """Upstream ``Score``: the sum over keys of the entry at the node's value (0 if none)."""
        total = 0
        for key, by_value in self.pairs().items():
            value = node_labels.get(key)
            if value is not None:
                total += by_value.get(value, 0)
        return total

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, TopologyScores):
            return NotImplemented
        return self.pairs() == other.pairs()

    def __repr__(self) -> str:
        return f"TopologyScores({self.pairs()!r})"


class ScoreMap:
    """A mutable ``scoreMap`` for the walking path (upstream ``processTerm``)."""

    __slots__ = ("pairs",)

    def __init__(self) -> None:
        self.pairs: dict[str, dict[str, int]] = {}

    def add(self, node_labels: Mapping[str, str], key: str, delta: int) -> None:
        value = node_labels.get(key)
        if value is None:
            return
        by_value = self.pairs.setdefault(key, {})
        by_value[value] = by_value.get(value, 0) + delta


class RowWeights:
    """Per topology key, (row, weight) contributions gathered from many pod groups, turned into
    per-label-code sums with one ``np.bincount`` per key.

    Groups are table index entries (``{row: pods}`` dicts); small groups are gathered in Python lists
    and large ones as arrays, so many small groups cost no NumPy call each.
    """

    __slots__ = ("_lists", "_arrays")

    _LARGE = 64

    def __init__(self) -> None:
        self._lists: dict[str, tuple[list[int], list[int]]] = {}
        self._arrays: dict[str, list[tuple[np.ndarray, np.ndarray]]] = {}

    def add_group(self, key: str, rows: Mapping[int, int], weight: int) -> None:
        """``weight`` per pod on each row of ``rows`` (row -> number of pods)."""
        if len(rows) >= self._LARGE:
            r = np.fromiter(rows.keys(), dtype=np.int64, count=len(rows))
            w = np.fromiter(rows.values(), dtype=np.int64, count=len(rows)) * weight
            self._arrays.setdefault(key, []).append((r, w))
            return
        entry = self._lists.get(key)
        if entry is None:
            entry = self._lists[key] = ([], [])
        entry[0].extend(rows.keys())
        entry[1].extend(c * weight for c in rows.values())

    def add_rows(self, key: str, rows: np.ndarray, weights: np.ndarray) -> None:
        self._arrays.setdefault(key, []).append((rows, weights))

    def sums(self, table: NodeTable, mask: Any) -> dict[str, tuple[np.ndarray, np.ndarray]]:
        """key -> ((V_key,) int64 sums, (V_key,) bool some contribution landed) over the rows in
        ``mask`` ((C,) bool, or anything indexed like it) that carry the key."""
        out = {}
        for key in set(self._lists) | set(self._arrays):
            column = table.label_codes.get(key)
            if column is None:
                continue
            parts = list(self._arrays.get(key, ()))
            if key in self._lists:
                row_list, weight_list = self._lists[key]
                parts.append((np.array(row_list, dtype=np.int64), np.array(weight_list, dtype=np.int64)))
            rows = np.concatenate([p[0] for p in parts])
            weights = np.concatenate([p[1] for p in parts])
            codes = column[rows]
            keep = (codes >= 0) & mask[rows]
            if not keep.any():
                continue
            codes = codes[keep]
            n_values = len(table.label_values[key])
            # float64 weights are exact: the sums stay far below 2**53
            sums = np.bincount(codes, weights=weights[keep], minlength=n_values).astype(np.int64)
            present = np.zeros(n_values, dtype=bool)
            present[codes] = True
            out[key] = (sums, present)
        return out


class DomainSums:
    """Per topology key, per-label-code sums of weighted count subscriptions
    (:class:`~fastsched.snapshot.table.CountSubscription`) over the rows ``rows`` (distinct live rows
    of ``table``): the incremental counterpart of :class:`RowWeights`. When ``rows`` are every node of
    the table, a subscription's per-domain counts are read as they are kept (O(domains)); otherwise
    they are summed over ``rows``."""

    __slots__ = ("_table", "_rows", "_full", "_out", "_counts_only")

    def __init__(self, table: NodeTable, rows: np.ndarray, counts_only: bool = False):
        self._table, self._rows = table, rows
        self._full = len(rows) == len(table)
        self._out: dict[str, tuple[np.ndarray, np.ndarray]] = {}
        #: PreFilter's counts need no "some contribution landed" arrays (only PreScore's map keeps
        #: entries whose contributions cancel): :meth:`counts` then, not :meth:`sums`
        self._counts_only = counts_only

    def add(self, key: str, sub: Any, weight: int) -> None:
        """Add ``weight`` times the subscription ``sub``'s per-domain counts of ``key``."""
        self.add_all(key, (sub,), (weight,))

    def add_all(self, key: str, subs: Sequence[Any], weights: Sequence[int] | None = None) -> None:
        """:meth:`add` for each of ``subs`` (weight 1, or ``weights[i]``; a subscription may repeat),
        summed first: with namespace-selector (anti-)affinity an incoming pod meets dozens of
        existing pods' terms per topology key, and one merge per key costs a fraction of one per
        term."""
        table = self._table
        values = table.label_values.get(key)
        if values is None or not subs:
            return
        n_values = len(values)
        full = self._full
        if not full:
            codes = table.label_codes[key][self._rows]
            keep = codes >= 0
            rows, codes = self._rows[keep], codes[keep]
        # unweighted sums per distinct weight (one array operation per subscription), weighted once
        groups: dict[int, np.ndarray] = {}
        for i, sub in enumerate(subs):
            w = 1 if weights is None else weights[i]
            acc = groups.get(w)
            if full:
                c = sub.domain_counts(table, key)  # (V',) with V' <= V: label values only grow
                if acc is None:
                    acc = groups[w] = np.zeros(n_values, dtype=np.int64)
                acc[:len(c)] += c
            else:
                if acc is None:
                    acc = groups[w] = np.zeros(len(rows), dtype=np.float64)
                acc += sub.rows[rows]
        if not full:  # per row -> per domain; float64 sums of integers stay exact far below 2**53
            groups = {w: np.rint(np.bincount(codes, weights=acc, minlength=n_values)).astype(np.int64)
                      for w, acc in groups.items()}
        if len(groups) == 1 and 1 in groups:
            counts = landed = groups[1]
        else:
            counts = np.zeros(n_values, dtype=np.int64)
            landed = np.zeros(n_values, dtype=np.int64)
            for w, acc in groups.items():
                counts += acc * w
                landed += acc
        # the subscriptions' counts are never negative: "some contribution landed" is "their
        # unweighted sum > 0"
        entry = self._out.get(key)
        if self._counts_only:
            if entry is None:
                self._out[key] = (counts, _NO_PRESENT)  # (a fresh array: the groups' sums)
            else:
                owned = entry[0]
                owned += counts
            return
        if entry is None:
            self._out[key] = (counts, landed > 0)
        else:
            sums, present = entry
            sums += counts
            present |= landed > 0

    def sums(self) -> dict[str, tuple[np.ndarray, np.ndarray]]:
        """key -> ((V,) int64 sums, (V,) bool some contribution landed), as :meth:`RowWeights.sums`."""
        assert not self._counts_only, "a counts_only DomainSums keeps no landed arrays"
        return self._out

    def counts(self) -> dict[str, np.ndarray]:
        """key -> (V,) int64 sums (what PreFilter's counts hold)."""
        return {k: c for k, (c, _) in self._out.items()}


#: the landed placeholder of a counts_only DomainSums
_NO_PRESENT = np.zeros(0, dtype=bool)
