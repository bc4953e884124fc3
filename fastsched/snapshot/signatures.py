"""The node table's pod signatures and the count subscriptions kept up to date over them.

Pods are also indexed by *label signature* (namespace + full label set): ``pod_signatures[k]`` is
``(namespace, labels)`` and ``signature_rows[k]`` maps row -> number of pods with that signature on
the row. Pods of one workload share a signature, so counting the pods that match a selector per node
(PodTopologySpread, InterPodAffinity) is a loop over distinct signatures plus array work over rows:
see :meth:`SignatureCounts.count_matching_pods`.

Pods with pod (anti-)affinity (``PodInfo.has_affinity``) are also indexed by *affinity signature*
(namespace + ``spec.affinity.podAffinity`` + ``spec.affinity.podAntiAffinity``):
``affinity_signatures[k]`` is ``(namespace, pod_affinity, pod_anti_affinity)`` and
``affinity_signature_rows[k]`` maps row -> number of such pods on the row. A workload's pods share
one signature, so InterPodAffinity evaluates an existing pod's terms once per signature, not once
per pod.

**Count subscriptions.** :meth:`SignatureCounts.matching_counts` (pods whose label signature
satisfies a predicate) and :meth:`SignatureCounts.affinity_signature_counts` (pods of one affinity
signature) give a :class:`CountSubscription`: the same per-row counts as
:meth:`SignatureCounts.count_matching_pods`, as a (C,) int64 array built once and then kept up to
date by the pod add/remove paths (a pod change touches only the subscriptions of its signature, as
upstream's ``updateWithPod``), plus per-domain sums per topology key rebuilt when ``node_version``
changes and updated in between. The predicate is evaluated once per distinct signature (new
signatures on the next query). The registry is bounded: the least recently queried subscriptions are
evicted (``MAX_SUBSCRIPTIONS``, ``MAX_SUBSCRIPTION_CELLS``).

:class:`SignatureCounts` holds the :class:`~fastsched.snapshot.table.NodeTable` methods that intern
signatures, count them and manage the subscriptions (a mixin of the table); they are apart from
the table because they are what PodTopologySpread and InterPodAffinity query, a concern of its
own beside the table's resource accounting (moved here from the table, as they were).
``fastsched.snapshot.table`` re-exports :class:`CountSubscription`, which the plugins name there.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from .lazy import pooled_ints

if TYPE_CHECKING:  # pragma: no cover
    from ..api import Pod
    from .table import NodeTable

__all__ = ["CountSubscription", "SignatureCounts"]


class SignatureCounts:
    """The signature and count-subscription methods of :class:`~fastsched.snapshot.table.NodeTable`
    (a mixin: they work on the table's signature indexes, ``_subs`` registries and capacity)."""

    if TYPE_CHECKING:  # what the mixin uses of NodeTable (declared there)
        capacity: int
        pod_signatures: list[tuple[str, tuple[tuple[str, str], ...]]]
        signature_rows: list[dict[int, int]]
        _signature_index: dict[tuple, int]
        affinity_signatures: list[tuple]
        affinity_signature_rows: list[dict[int, int]]
        _affinity_signature_index: dict[tuple, int]
        _subs: dict[Any, CountSubscription]
        _sig_subs: dict[int, list[CountSubscription]]
        _asig_subs: dict[int, list[CountSubscription]]

    def _count_signatures_many(self, index: list[dict[int, int]], sigs: np.ndarray, rows: np.ndarray) -> None:
        if len(sigs) == 0:
            return
        ints = pooled_ints(self.capacity)
        subs_of = self._sig_subs if index is self.signature_rows else self._asig_subs
        order = np.lexsort((rows, sigs))
        s, r = sigs[order], rows[order]
        cut = np.flatnonzero((s[1:] != s[:-1]) | (r[1:] != r[:-1])) + 1
        starts = np.concatenate(([0], cut))
        counts = np.diff(np.concatenate((starts, [len(s)])))
        ks, row_list, count_list = s[starts], r[starts].tolist(), counts.tolist()
        bounds = np.flatnonzero(np.concatenate(([True], ks[1:] != ks[:-1], [True])))
        for lo, hi in zip(bounds[:-1].tolist(), bounds[1:].tolist()):
            rows_of_k = index[int(ks[lo])]
            added = dict(zip([ints[row] for row in row_list[lo:hi]], count_list[lo:hi]))
            subs = subs_of.get(int(ks[lo]))
            if subs:
                for sub in subs:
                    sub._bump_many(self, r[starts[lo:hi]], counts[lo:hi])
            if rows_of_k:
                for key in added.keys() & rows_of_k.keys():  # rows that already had such pods
                    added[key] += rows_of_k[key]
            rows_of_k.update(added)

    def _signature_id(self, pod: "Pod") -> int:
        key = (pod.namespace, tuple(sorted(pod.labels.items())))
        k = self._signature_index.get(key)
        if k is None:
            k = self._signature_index[key] = len(self.pod_signatures)
            self.pod_signatures.append(key)
            self.signature_rows.append({})
        return k

    def _affinity_signature_id(self, pod: "Pod") -> int:
        affinity = pod.affinity
        assert affinity is not None  # (NodeTable._derive asks only for a pod with pod (anti-)affinity)
        key = (pod.namespace, affinity.pod_affinity, affinity.pod_anti_affinity)
        k = self._affinity_signature_index.get(key)
        if k is None:
            k = self._affinity_signature_index[key] = len(self.affinity_signatures)
            self.affinity_signatures.append(key)
            self.affinity_signature_rows.append({})
        return k

    def _count_signature(self, row: int, k: int, sign: int) -> None:
        self._count_in(self.signature_rows[k], self._sig_subs.get(k), row, sign)

    def _count_affinity_signature(self, row: int, k: int, sign: int) -> None:
        self._count_in(self.affinity_signature_rows[k], self._asig_subs.get(k), row, sign)

    def _count_in(self, rows: dict, subs: Any, row: int, sign: int) -> None:
        """Add ``sign`` pods of one signature on ``row``: its {row: count} index, then the count
        subscriptions of that signature."""
        key = pooled_ints(row + 1)[row]
        c = rows.get(key, 0) + sign
        if c:
            rows[key] = c
        else:
            rows.pop(key, None)
        if subs:
            for sub in subs:
                sub._bump(self, row, sign)

    # ------------------------------------------------------------------------------------------
    # count subscriptions
    # ------------------------------------------------------------------------------------------
    #: at most this many subscriptions (least recently used evicted), and at most this many cells
    MAX_SUBSCRIPTIONS = 256
    MAX_SUBSCRIPTION_CELLS = 1 << 24

    def matching_counts(self, key: Any, matches) -> "CountSubscription":
        """The count subscription of the pods whose label signature satisfies ``matches(namespace,
        labels)``: ``.rows`` (C,) int64 per row, kept up to date by every later pod add/remove (only
        the subscriptions of the pod's signature are touched). ``key`` (hashable) identifies the
        predicate: one subscription per key, reused across cycles. ``matches`` is called once per
        distinct signature. The arrays are the table's: do not mutate them. Same counts as
        :meth:`count_matching_pods`."""
        sub = self._subs.pop(key, None)
        if sub is None:
            sub = CountSubscription(key, self.capacity, matches, self._sig_subs)
            self._admit(sub)
        self._subs[key] = sub  # most recently used last
        sub._catch_up(self)
        return sub

    def affinity_signature_counts(self, k: int) -> "CountSubscription":
        """The count subscription of the pods of affinity signature ``k`` (``affinity_signature_rows[k]``
        as arrays, kept up to date)."""
        key = ("affinity-signature", k)
        sub = self._subs.pop(key, None)
        if sub is None:
            sub = CountSubscription(key, self.capacity, None, self._asig_subs)
            sub._attach(self, k, self.affinity_signature_rows[k])
            self._admit(sub)
        self._subs[key] = sub
        return sub

    def affinity_signature_set_counts(self, key: Any) -> "tuple[CountSubscription, bool]":
        """``(subscription, created)``: the count subscription ``key`` of the pods of the affinity
        signatures the caller attaches with :meth:`attach_affinity_signature` (a signature attached
        twice counts its pods twice). One per key, reused; ``created`` says it is new (or was
        evicted and is empty again), so the caller attaches its signatures afresh."""
        sub = self._subs.pop(key, None)
        created = sub is None
        if sub is None:
            sub = CountSubscription(key, self.capacity, None, self._asig_subs)
            self._admit(sub)
        self._subs[key] = sub
        return sub, created

    def attach_affinity_signature(self, sub: "CountSubscription", k: int) -> None:
        """Count affinity signature ``k``'s pods (now and as they come and go) in ``sub``."""
        sub._attach(self, k, self.affinity_signature_rows[k])

    def has_subscription(self, sub: "CountSubscription") -> bool:
        """Whether ``sub`` is still kept up to date (not evicted or dropped)."""
        return self._subs.get(sub.key) is sub

    def drop_subscription(self, sub: "CountSubscription") -> None:
        """Stop keeping ``sub`` up to date and forget it (a later query of its key starts empty)."""
        sub._detach()
        if self._subs.get(sub.key) is sub:
            del self._subs[sub.key]

    def _admit(self, sub: "CountSubscription") -> None:
        limit = min(self.MAX_SUBSCRIPTIONS, max(self.MAX_SUBSCRIPTION_CELLS // max(self.capacity, 1), 8))
        while len(self._subs) >= limit:
            oldest = next(iter(self._subs))
            self._subs.pop(oldest)._detach()

    def drop_subscriptions(self) -> None:
        """Forget every count subscription (they are rebuilt on the next query)."""
        for sub in self._subs.values():
            sub._detach()
        self._subs.clear()

    def count_matching_pods(self, matches) -> np.ndarray:
        """(C,) int64: per row, the pods whose signature satisfies ``matches(namespace, labels)``.

        ``labels`` is a dict. ``matches`` is called once per distinct signature, not per pod.
        Terminating pods are counted like the others; callers that exclude them (PodTopologySpread)
        subtract them by walking the pods of the rows where ``terminating_pods`` is non-zero.
        """
        counts = np.zeros(self.capacity, dtype=np.int64)
        for (ns, items), rows in zip(self.pod_signatures, self.signature_rows):
            if rows and matches(ns, dict(items)):
                idx = np.fromiter(rows.keys(), dtype=np.int64, count=len(rows))
                val = np.fromiter(rows.values(), dtype=np.int64, count=len(rows))
                np.add.at(counts, idx, val)
        return counts


class CountSubscription:
    """Per-row counts of a set of pods (those of the label signatures a predicate selects, or of one
    affinity signature), kept up to date by the table's pod add/remove paths in O(1) per change, as
    upstream's ``updateWithPod`` keeps its maps; see :meth:`NodeTable.matching_counts`.

    ``rows``: (C,) int64 pods per row. :meth:`domain_counts` gives per-label-code sums for a topology
    key over every row, built once per node-set version (``table.node_version``) and then updated on
    every change; :meth:`frozen_domain_counts` a read-only copy of them, shared until they move.
    Do not mutate the arrays.
    """

    __slots__ = ("key", "rows", "_matches", "_checked", "_registry", "_sigs", "_views", "_coded")

    #: at most this many :meth:`coded_counts` views per subscription (the oldest is dropped)
    MAX_CODED_VIEWS = 4

    def __init__(self, key: Any, capacity: int, matches, registry: dict):
        self.key = key
        self.rows = np.zeros(capacity, dtype=np.int64)
        self._matches = matches
        self._checked = 0            # label signatures evaluated so far
        self._registry = registry    # signature -> subscriptions (the table's)
        self._sigs: list[int] = []   # the signatures this subscription is registered on
        #: topology key -> [node_version, (V,) int64 sums, (read-only copy, any nonzero) or None
        #: (:meth:`frozen_domain_counts`; dropped whenever the sums move), the number of nonzero
        #: sums (kept by :meth:`_bump`: the frozen copy's "any nonzero" without a pass over V)]
        self._views: dict[str, list] = {}
        #: id(codes_by_row) -> [node_version, codes_by_row (C,) int64, (D,) int64 sums]
        self._coded: dict[int, list] = {}

    def _attach(self, table: SignatureCounts, k: int, rows_of_k: dict) -> None:
        self._registry.setdefault(k, []).append(self)
        self._sigs.append(k)
        if rows_of_k:
            idx = np.fromiter(rows_of_k.keys(), dtype=np.int64, count=len(rows_of_k))
            val = np.fromiter(rows_of_k.values(), dtype=np.int64, count=len(rows_of_k))
            self._bump_many(table, idx, val)

    def _catch_up(self, table: SignatureCounts) -> None:
        """Evaluate the predicate on the signatures created since the last query."""
        n = len(table.pod_signatures)
        if self._checked == n:
            return
        for k in range(self._checked, n):
            ns, items = table.pod_signatures[k]
            if self._matches(ns, dict(items)):
                self._attach(table, k, table.signature_rows[k])
        self._checked = n

    def _detach(self) -> None:
        for k in self._sigs:
            lst = self._registry.get(k)
            if lst is not None:
                lst.remove(self)
                if not lst:
                    del self._registry[k]
        self._sigs = []

    def _bump(self, table: NodeTable, row: int, sign: int) -> None:
        self.rows[row] += sign
        if self._views:
            version = table.node_version
            for key, view in self._views.items():
                if view[0] == version:
                    code = table.label_codes[key][row]
                    if code >= 0:
                        sums = view[1]
                        before = int(sums[code])
                        sums[code] = after = before + sign
                        view[2] = None
                        if not before:
                            view[3] += 1
                        elif not after:
                            view[3] -= 1
        if self._coded:
            version = table.node_version
            for view in self._coded.values():
                if view[0] == version:
                    code = view[1][row]
                    if code >= 0:
                        view[2][code] += sign

    def _bump_many(self, table: SignatureCounts, rows: np.ndarray, counts: np.ndarray) -> None:
        np.add.at(self.rows, rows, counts)
        for view in self._views.values():
            view[0] = -1  # rebuilt on next use
        for view in self._coded.values():
            view[0] = -1

    def domain_counts(self, table: NodeTable, key: str) -> np.ndarray:
        """(V,) int64: per label code of ``key``, the pods on the rows with that value (every row)."""
        view = self._views.get(key)
        if view is not None and view[0] == table.node_version:
            return view[1]
        column = table.label_codes.get(key)
        n_values = len(table.label_values.get(key, ()))
        if column is None:
            sums = np.zeros(n_values, dtype=np.int64)
        else:
            rows = np.flatnonzero(self.rows)
            codes = column[rows]
            keep = codes >= 0
            sums = np.bincount(codes[keep], weights=self.rows[rows[keep]], minlength=n_values)
            sums = np.rint(sums).astype(np.int64)
        self._views[key] = [table.node_version, sums, None, int(np.count_nonzero(sums))]
        return sums

    def frozen_domain_counts(self, table: NodeTable, key: str) -> tuple[np.ndarray, bool]:
        """(:meth:`domain_counts` as a read-only copy, whether any count is nonzero). The copy is
        made when first asked after the counts last moved and handed to every caller until they
        move again: a state that must keep this cycle's counts (InterPodAffinity's PreFilter) takes
        it instead of copying (V,) every cycle while pods that do not count come and go."""
        sums = self.domain_counts(table, key)
        view = self._views[key]
        frozen = view[2]
        if frozen is None:
            copy = sums.copy()
            copy.setflags(write=False)
            frozen = view[2] = (copy, view[3] > 0)
        return frozen

    def coded_counts(self, table: NodeTable, codes_by_row: np.ndarray, n_codes: int) -> np.ndarray:
        """(n_codes,) int64: per code ``d``, the pods on the rows ``r`` with ``codes_by_row[r] == d``
        (rows with a negative code are not counted). ``codes_by_row`` (C,) int64 is the caller's
        grouping of rows into domains (e.g. a topology key's values over the nodes a pod's
        inclusion policies keep); it is held by identity and must not change while the table's
        ``node_version`` stays: the sums are built once per node-set version and then updated on
        every pod change, like :meth:`domain_counts`. Do not mutate the answer."""
        view = self._coded.get(id(codes_by_row))
        version = table.node_version
        if view is not None and view[0] == version and view[1] is codes_by_row:
            return view[2]
        rows = np.flatnonzero(self.rows)
        codes = codes_by_row[rows]
        keep = codes >= 0
        sums = np.rint(np.bincount(codes[keep], weights=self.rows[rows[keep]], minlength=n_codes)).astype(np.int64)
        coded = self._coded
        coded.pop(id(codes_by_row), None)
        if len(coded) >= self.MAX_CODED_VIEWS:
            coded.pop(next(iter(coded)))
        coded[id(codes_by_row)] = [version, codes_by_row, sums]
        return sums
