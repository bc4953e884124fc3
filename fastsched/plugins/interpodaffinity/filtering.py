"""PreFilter state, AddPod/RemovePod and Filter (upstream ``interpodaffinity/filtering.go``, v1.34).

PreFilter counts, per topology pair ``(key, value)``:

* ``existing_anti_affinity_counts`` — for each existing pod on the snapshot's nodes with pods with
  required anti-affinity, each of its required anti-affinity terms that matches the incoming pod
  (with the incoming pod's namespace labels) adds 1 at ``(term.key, node[term.key])``;
* ``affinity_counts`` — each existing pod on ``nodes`` that matches *all* the incoming pod's
  required affinity terms adds 1 at ``(term.key, node[term.key])`` for *each* term;
* ``anti_affinity_counts`` — each incoming required anti-affinity term an existing pod matches adds 1.

Pairs need the node to carry the key. Terminating pods count like the others (upstream's
interpodaffinity never looks at deletionTimestamp). Two ways build the same counts: the ``*_walking``
functions walk ``NodeInfo.pods`` (upstream's algorithm, the reference), and the ``*_on_table``
functions work on the node table: the incoming pod's terms are evaluated once per distinct pod label
signature (``table.count_matching_pods``), existing pods' terms once per affinity signature
(``table.affinity_signatures``), and the counts are summed per label code with ``np.bincount``.
The ``*_incremental`` functions (what the plugin runs) read the same counts from the table's count
subscriptions (``table.matching_counts``, ``table.affinity_signature_counts``), kept up to date as
pods come and go, so a cycle's cost does not grow with the number of pods scheduled.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, Iterable, Mapping, Sequence

import numpy as np

from ..._kernels import _interpodaffinity as _ipa
from ...framework import protocols as fwk
from ...framework.vectorized import FilterVerdicts
from ...framework.cycle_state import CycleState, NotFoundError
from ...framework.status import Code, Status, StatusError
from ...util.hashed_key import HashedKey
from .signatures import parsed_signatures
from .terms import AffinityTerm, pod_matches_all_terms, required_anti_affinity_terms
from .topology import DomainSums, RowWeights, TopologyCounts

if TYPE_CHECKING:  # pragma: no cover
    from ...api import Pod
    from ...framework.protocols import NodeTable

NAME = "InterPodAffinity"
PRE_FILTER_STATE_KEY = "PreFilter" + NAME

ERR_REASON_EXISTING_ANTI_AFFINITY_RULES_NOT_MATCH = "node(s) didn't satisfy existing pods anti-affinity rules"
ERR_REASON_AFFINITY_RULES_NOT_MATCH = "node(s) didn't match pod affinity rules"
ERR_REASON_ANTI_AFFINITY_RULES_NOT_MATCH = "node(s) didn't match pod anti-affinity rules"


class PreFilterState:
    """What PreFilter computes for Filter (upstream ``preFilterState``)."""

    __slots__ = ("existing_anti_affinity_counts", "affinity_counts", "anti_affinity_counts", "pod",
                 "affinity_terms", "anti_affinity_terms", "namespace_labels", "pod_matches_own_affinity")

    def __init__(self, pod: "Pod", affinity_terms: list[AffinityTerm], anti_affinity_terms: list[AffinityTerm],
                 namespace_labels: Mapping[str, str] | None, existing_anti_affinity_counts: TopologyCounts,
                 affinity_counts: TopologyCounts, anti_affinity_counts: TopologyCounts,
                 pod_matches_own_affinity: bool | None = None):
        self.pod = pod
        #: the incoming pod's required (anti-)affinity terms, namespaceSelector merged
        self.affinity_terms = affinity_terms
        self.anti_affinity_terms = anti_affinity_terms
        self.namespace_labels = namespace_labels
        self.existing_anti_affinity_counts = existing_anti_affinity_counts
        self.affinity_counts = affinity_counts
        self.anti_affinity_counts = anti_affinity_counts
        #: the "first pod of a group" condition: the pod matches all its own affinity terms (given
        #: by a caller that knows it: a ShapePlan keeps it for the pod's shape)
        self.pod_matches_own_affinity = (pod_matches_all_terms(affinity_terms, pod.namespace, pod.labels)
                                         if pod_matches_own_affinity is None else pod_matches_own_affinity)

    def clone(self) -> "PreFilterState":
        """Copies the counts (AddPod/RemovePod mutate them); the terms are shared."""
        c = PreFilterState.__new__(PreFilterState)
        c.pod = self.pod
        c.affinity_terms = self.affinity_terms
        c.anti_affinity_terms = self.anti_affinity_terms
        c.namespace_labels = self.namespace_labels
        c.pod_matches_own_affinity = self.pod_matches_own_affinity
        c.existing_anti_affinity_counts = self.existing_anti_affinity_counts.clone()
        c.affinity_counts = self.affinity_counts.clone()
        c.anti_affinity_counts = self.anti_affinity_counts.clone()
        return c

    def update_with_pod(self, pod: "Pod", node_labels: Mapping[str, str], multiplier: int) -> None:
        """Upstream ``updateWithPod``: account (+1) or discount (-1) one pod on a node."""
        incoming = self.pod
        for t in required_anti_affinity_terms(pod):
            if t.matches(incoming.namespace, incoming.labels, self.namespace_labels):
                self.existing_anti_affinity_counts.update(node_labels, t.topology_key, multiplier)
        if pod_matches_all_terms(self.affinity_terms, pod.namespace, pod.labels):
            for t in self.affinity_terms:
                self.affinity_counts.update(node_labels, t.topology_key, multiplier)
        for t in self.anti_affinity_terms:
            if t.matches(pod.namespace, pod.labels, None):
                self.anti_affinity_counts.update(node_labels, t.topology_key, multiplier)

    def skips_filter(self) -> bool:
        """Upstream's PreFilter Skip rule."""
        return (self.existing_anti_affinity_counts.is_empty() and not self.affinity_terms
                and not self.anti_affinity_terms)


def read_state(state: CycleState) -> PreFilterState | Status:
    try:
        return state.read(PRE_FILTER_STATE_KEY)
    except NotFoundError as e:
        return Status.from_error(StatusError(f'error reading "{PRE_FILTER_STATE_KEY}" from cycleState: {e}'))


# ------------------------------------------------------------------------------------------------
# building the counts
# ------------------------------------------------------------------------------------------------
def existing_anti_affinity_walking(pod: "Pod", ns_labels: Mapping[str, str] | None,
                                   node_infos: Iterable[fwk.NodeInfo]) -> TopologyCounts:
    """Upstream ``getExistingAntiAffinityCounts`` over NodeInfos with required-anti-affinity pods."""
    counts = TopologyCounts()
    for ni in node_infos:
        labels = ni.node().labels
        for pi in ni.pods_with_required_anti_affinity:
            for t in required_anti_affinity_terms(pi.pod):
                if t.matches(pod.namespace, pod.labels, ns_labels):
                    counts.update(labels, t.topology_key, 1)
    return counts


def incoming_walking(affinity: Sequence[AffinityTerm], anti_affinity: Sequence[AffinityTerm],
                     node_infos: Iterable[fwk.NodeInfo]) -> tuple[TopologyCounts, TopologyCounts]:
    """Upstream ``getIncomingAffinityAntiAffinityCounts`` over every pod of ``node_infos``."""
    aff, anti = TopologyCounts(), TopologyCounts()
    if not affinity and not anti_affinity:
        return aff, anti
    for ni in node_infos:
        labels = ni.node().labels
        for pi in ni.pods:
            p = pi.pod
            if pod_matches_all_terms(affinity, p.namespace, p.labels):
                for t in affinity:
                    aff.update(labels, t.topology_key, 1)
            for t in anti_affinity:
                if t.matches(p.namespace, p.labels, None):
                    anti.update(labels, t.topology_key, 1)
    return aff, anti


class RowMask:
    """(C,) bool, True at ``rows``, built on first indexing: most cycles (no term matches any pod)
    never read it, and building it costs a pass over the whole table."""

    __slots__ = ("_table", "_rows", "_mask")

    def __init__(self, table: NodeTable, rows: np.ndarray):
        self._table, self._rows = table, rows
        self._mask: np.ndarray | None = None

    def __getitem__(self, index: Any) -> np.ndarray:
        if self._mask is None:
            self._mask = np.zeros(self._table.capacity, dtype=bool)
            self._mask[self._rows] = True
        return self._mask[index]


def row_mask(table: NodeTable, rows: np.ndarray) -> RowMask:
    """(C,) bool mask, True at ``rows`` (built lazily)."""
    return RowMask(table, rows)


def _counts(table: NodeTable, contributions: RowWeights, mask: RowMask) -> TopologyCounts:
    return TopologyCounts.from_arrays(table, {k: sums for k, (sums, _) in contributions.sums(table, mask).items()})


def existing_anti_affinity_on_table(pod: "Pod", ns_labels: Mapping[str, str] | None, table: NodeTable,
                                    mask: RowMask) -> TopologyCounts:
    """:func:`existing_anti_affinity_walking` over the table rows in ``mask``: an existing pod's terms
    are evaluated once per affinity signature, the counts summed per label code."""
    contributions = RowWeights()
    signature_rows = table.affinity_signature_rows
    for k, parsed in enumerate(parsed_signatures(table)):
        if not parsed.required_anti_affinity or not signature_rows[k]:
            continue
        for t in parsed.required_anti_affinity:
            if t.matches(pod.namespace, pod.labels, ns_labels):
                contributions.add_group(t.topology_key, signature_rows[k], 1)
    return _counts(table, contributions, mask)


def incoming_on_table(affinity: Sequence[AffinityTerm], anti_affinity: Sequence[AffinityTerm], table: NodeTable,
                      mask: RowMask) -> tuple[TopologyCounts, TopologyCounts]:
    """:func:`incoming_walking` over the table rows in ``mask``: the terms are evaluated once per pod
    label signature (``count_matching_pods``), the counts summed per label code."""
    aff, anti = RowWeights(), RowWeights()
    if affinity:
        per_row = table.count_matching_pods(lambda ns, labels: pod_matches_all_terms(affinity, ns, labels))
        rows = np.flatnonzero(per_row)
        if rows.size:
            for t in affinity:
                aff.add_rows(t.topology_key, rows, per_row[rows])
    for t in anti_affinity:
        per_row = table.count_matching_pods(term_matcher(t))
        rows = np.flatnonzero(per_row)
        if rows.size:
            anti.add_rows(t.topology_key, rows, per_row[rows])
    return _counts(table, aff, mask), _counts(table, anti, mask)


def term_matcher(t: AffinityTerm) -> Callable[[str, dict[str, str]], bool]:
    """``(namespace, labels) -> t.matches(namespace, labels, None)``: the predicate of a pod label
    signature the table's counts take."""
    return lambda ns, labels: t.matches(ns, labels, None)


def term_match_key(t: AffinityTerm) -> tuple:
    """What ``t.matches(ns, labels, None)`` depends on: a count subscription key."""
    return (t.namespaces, t.selector, t.namespace_selector)


#: a count subscription key of this plugin: the table finds a subscription by its key at every
#: query and every ``has_subscription`` check, and these keys hold label selectors (hashed in
#: Python) and sorted label tuples, so they are hashed once, when made
SubscriptionKey = HashedKey


def _term_key(t: AffinityTerm) -> SubscriptionKey:
    """The ``ipa-term`` subscription key of ``t``, kept per term (terms are immutable and shared
    across cycles: ``affinity_term``'s cache, ``NamespaceView.merged``)."""
    entry = _TERM_KEYS.get(id(t))
    if entry is not None and entry[0] is t:
        return entry[1]
    key = SubscriptionKey(("ipa-term", term_match_key(t)))
    if len(_TERM_KEYS) >= _TERM_KEYS_SIZE:
        _TERM_KEYS.clear()
    _TERM_KEYS[id(t)] = (t, key)  # (the term is held: its id stays its own while the entry lives)
    return key


#: id(term) -> (term, its ``ipa-term`` SubscriptionKey)
_TERM_KEYS: dict[int, tuple[AffinityTerm, SubscriptionKey]] = {}
_TERM_KEYS_SIZE = 1024


def term_counts(table: NodeTable, t: AffinityTerm):
    """The table's count subscription of the pods ``t`` selects (namespace labels nil)."""
    return table.matching_counts(_term_key(t), term_matcher(t))


class ClassCounts:
    """For one class of incoming pods (namespace, labels, namespace labels: all that
    ``AffinityTerm.matches`` reads of the incoming pod), count subscriptions of the existing pods
    whose terms match the class, one per (topology key, weight) of the matching terms (a pod
    counted once per matching term). Each affinity signature is matched once, when first seen;
    later pods of it move the counts in O(1) per change (the table's subscriptions). ``terms_of``
    gives a signature's ``(term, weight)`` pairs."""

    __slots__ = ("kind", "checked", "subs")

    def __init__(self, kind: tuple) -> None:
        self.kind = kind
        self.checked = 0   # affinity signatures matched so far
        self.subs: dict[tuple[str, int], Any] = {}  # (topology key, weight) -> CountSubscription

    def update(self, pod: "Pod", ns_labels: Mapping[str, str] | None, table: NodeTable,
               terms_of: Callable[[Any], Iterable[tuple[AffinityTerm, int]]]) -> dict[tuple[str, int], Any]:
        """Match the signatures created since the last call; returns the subscriptions."""
        if not all(table.has_subscription(sub) for sub in self.subs.values()):
            for sub in self.subs.values():  # one was evicted: match every signature again
                table.drop_subscription(sub)
            self.checked, self.subs = 0, {}
        if self.checked == len(table.affinity_signatures):
            return self.subs  # no signature since the last call (the usual cycle)
        signatures = parsed_signatures(table)
        for k in range(self.checked, len(signatures)):
            for t, w in terms_of(signatures[k]):
                if t.matches(pod.namespace, pod.labels, ns_labels):
                    sub = self.subs.get((t.topology_key, w))
                    if sub is None:
                        key = SubscriptionKey((*self.kind, t.topology_key, w))
                        sub, created = table.affinity_signature_set_counts(key)
                        if not created:  # left over from a forgotten state of this class: start clean
                            table.drop_subscription(sub)
                            sub, _ = table.affinity_signature_set_counts(key)
                        self.subs[(t.topology_key, w)] = sub
                    table.attach_affinity_signature(sub, k)
        self.checked = len(signatures)
        return self.subs


#: (table uid, kind, class key) -> ClassCounts; bounded (cleared when full: rebuilt on demand,
#: their subscriptions age out of the tables' registries)
_CLASS_COUNTS: dict[tuple, ClassCounts] = {}
_CLASS_COUNTS_SIZE = 128


def class_counts(kind: str, pod: "Pod", ns_labels: Mapping[str, str] | None, table: NodeTable,
                 terms_of: Callable[[Any], Iterable[tuple[AffinityTerm, int]]], *extra: Any
                 ) -> dict[tuple[str, int], Any]:
    """The :class:`ClassCounts` subscriptions of ``pod``'s class for ``kind`` (and ``extra``, which
    must determine ``terms_of``), brought up to date. The class of the last call per (table,
    kind, extra) is compared first (``_LAST_CLASS``: two dict comparisons), so consecutive pods of
    one class, each with its own labels dict (pods parsed one manifest each), skip building and
    hashing the sorted class key."""
    last_key = (table.uid, kind, *extra)
    last = _LAST_CLASS.get(last_key)
    if last is not None and last[0] == pod.namespace and last[1] == pod.labels and last[2] == ns_labels:
        return last[3].update(pod, ns_labels, table, terms_of)
    class_key = (kind, *extra, pod.namespace, tuple(sorted(pod.labels.items())),
                 None if ns_labels is None else tuple(sorted(ns_labels.items())))
    cache_key = (table.uid, class_key)
    state = _CLASS_COUNTS.get(cache_key)
    if state is None:
        if len(_CLASS_COUNTS) >= _CLASS_COUNTS_SIZE:
            _CLASS_COUNTS.clear()
            _LAST_CLASS.clear()  # its states must be the ones _CLASS_COUNTS holds
        state = _CLASS_COUNTS[cache_key] = ClassCounts(class_key)
    if len(_LAST_CLASS) >= _CLASS_COUNTS_SIZE:
        _LAST_CLASS.clear()
    # copies: the entry is decided by the contents, not by objects that may change later
    _LAST_CLASS[last_key] = (pod.namespace, dict(pod.labels), None if ns_labels is None else dict(ns_labels), state)
    return state.update(pod, ns_labels, table, terms_of)


#: (table uid, kind, *extra) -> (namespace, labels, namespace labels, the ClassCounts of that class
#: in _CLASS_COUNTS): the class the last :func:`class_counts` call of that kind looked up
_LAST_CLASS: dict[tuple, tuple] = {}


def _required_anti_terms(parsed: Any) -> Iterable[tuple[AffinityTerm, int]]:
    return [(t, 1) for t in parsed.required_anti_affinity]


def existing_anti_affinity_incremental(pod: "Pod", ns_labels: Mapping[str, str] | None, table: NodeTable,
                                       rows: np.ndarray) -> TopologyCounts:
    """:func:`existing_anti_affinity_on_table` from count subscriptions kept per class of incoming
    pods (:class:`ClassCounts`) instead of the row dicts: with namespace-selector anti-affinity an
    incoming pod meets dozens of existing pods' terms, which are now matched once per class and
    signature, not once per cycle."""
    full = len(rows) == len(table)
    labels = pod.labels
    memo_key = (table.uid, pod.namespace, id(labels), id(ns_labels))
    if full:
        memo = _EXISTING_MEMO.get(memo_key)
        if (memo is not None and memo[2] == len(table.affinity_signatures) and memo[0] == labels
                and memo[1] == ns_labels):
            out = _existing_from_memo(table, memo[3])
            if out is not None:
                return TopologyCounts.from_nonzero_arrays(table, out)
    entries = existing_entries(pod, ns_labels, table)
    if full and distinct_keys(entries):
        if len(_EXISTING_MEMO) >= _CLASS_COUNTS_SIZE:
            _EXISTING_MEMO.clear()
        _EXISTING_MEMO[memo_key] = (dict(labels), None if ns_labels is None else dict(ns_labels),
                                    len(table.affinity_signatures), entries)
    return counts_of_subscriptions(table, rows, entries)


def existing_entries(pod: "Pod", ns_labels: Mapping[str, str] | None, table: NodeTable) -> list[tuple[str, Any]]:
    """``(topology key, subscription)`` of the existing pods' required anti-affinity terms that
    match ``pod``'s class (:func:`class_counts`), brought up to date: what PreFilter's
    ``existing_anti_affinity_counts`` sum."""
    subs = class_counts("ipa-existing-anti", pod, ns_labels, table, _required_anti_terms)
    return [(key, sub) for (key, _), sub in subs.items()]


def distinct_keys(entries: Sequence[tuple[str, Any]]) -> bool:
    """Whether each topology key of ``entries`` has one subscription (:func:`counts_of_entries`)."""
    return len({key for key, _ in entries}) == len(entries)


def counts_of_entries(table: NodeTable, rows: np.ndarray, entries: Sequence[tuple[str, Any]],
                      distinct: bool) -> TopologyCounts:
    """:func:`counts_of_subscriptions` of kept ``entries`` (every subscription still kept by the
    table), through :func:`_existing_from_memo` when they cover every row with one subscription per
    key (``distinct``)."""
    if distinct and len(rows) == len(table):
        out = _existing_from_memo(table, entries)
        if out is not None:
            return TopologyCounts.from_nonzero_arrays(table, out)
    return counts_of_subscriptions(table, rows, entries)


def incoming_entries(affinity: Sequence[AffinityTerm], anti_affinity: Sequence[AffinityTerm], table: NodeTable
                     ) -> tuple[list[tuple[str, Any]], list[tuple[str, Any]]]:
    """The ``(topology key, subscription)`` entries :func:`incoming_incremental` sums: the
    required affinity terms' (one ``ipa-all`` subscription), the anti-affinity terms' (one each)."""
    aff = _all_terms_entries(affinity, table) if affinity else []
    return aff, [(t.topology_key, term_counts(table, t)) for t in anti_affinity]


#: (table uid, namespace, id(labels), id(ns_labels)) -> (labels, namespace labels (copies: the
#: ids only find the entry, the contents decide), number of affinity signatures then, the class's
#: ``(topology key, subscription)`` entries, one subscription per key): what
#: :func:`existing_anti_affinity_incremental` reads for a class of incoming pods while no affinity
#: signature is new, without building the class key and asking :func:`class_counts` each cycle.
_EXISTING_MEMO: dict[tuple, tuple] = {}


def _existing_from_memo(table: NodeTable, entries: Sequence[tuple[str, Any]]) -> dict[str, np.ndarray] | None:
    """:func:`counts_of_subscriptions` over every row for one subscription per key, from the
    subscriptions :func:`class_counts` gave when no affinity signature has been added since: the
    same subscriptions, so the same counts, while each is still kept (None otherwise, and when a
    key's frozen counts are shorter than its label values: the caller's general path pads them)."""
    out: dict[str, np.ndarray] = {}
    label_values = table.label_values
    for key, sub in entries:
        if not table.has_subscription(sub):
            return None  # evicted or dropped: class_counts matches the signatures again
        values = label_values.get(key)
        if values is None:
            continue  # no node has the key
        c, nonzero = sub.frozen_domain_counts(table, key)
        if len(c) != len(values):
            return None
        if nonzero:
            out[key] = c
    return out


def incoming_incremental(affinity: Sequence[AffinityTerm], anti_affinity: Sequence[AffinityTerm],
                         table: NodeTable, rows: np.ndarray) -> tuple[TopologyCounts, TopologyCounts]:
    """:func:`incoming_on_table` from the table's count subscriptions (one per distinct term or set
    of terms, kept up to date as pods come and go)."""
    if not affinity and not anti_affinity:  # (a pod without terms: every cycle of most workloads)
        return TopologyCounts.from_nonzero_arrays(table, {}), TopologyCounts.from_nonzero_arrays(table, {})
    aff, anti = incoming_entries(affinity, anti_affinity, table)
    return counts_of_subscriptions(table, rows, aff), counts_of_subscriptions(table, rows, anti)


def _all_terms_entries(affinity: Sequence[AffinityTerm], table: NodeTable) -> list[tuple[str, Any]]:
    """``(topology key, subscription)`` per required affinity term, the subscription counting the
    pods that match every term (the ``ipa-all`` subscription), for :func:`incoming_incremental`.

    Kept per (table, the terms' identities) in ``_ALL_TERMS_PLANS``: the terms are the objects
    ``affinity_term`` caches per API term (and ``NamespaceView.merged`` per merge), so one pod
    spec's terms are the same objects every cycle, and building the subscription key (each term's
    namespaces, selector and namespace selector) and hashing it was most of this function's cost
    (SchedulingPodAffinity: every measured pod). The kept entries are used while the table still
    keeps their subscription (not evicted or dropped) and no pod label signature was added since
    (``matching_counts`` would then only match the new signatures: ``_catch_up``); otherwise the
    subscription is looked up again as before and the plan replaced."""
    plan_key = (table.uid, *map(id, affinity))
    plan = _ALL_TERMS_PLANS.get(plan_key)
    n_signatures = len(table.pod_signatures)
    if plan is not None:
        terms, sub, n, entries = plan
        if (n == n_signatures and len(terms) == len(affinity)
                and all(a is b for a, b in zip(terms, affinity)) and table.has_subscription(sub)):
            return entries
    terms = tuple(affinity)
    sub = table.matching_counts(SubscriptionKey(("ipa-all", tuple(term_match_key(t) for t in terms))),
                                lambda ns, labels: pod_matches_all_terms(terms, ns, labels))
    entries = [(t.topology_key, sub) for t in terms]
    if len(_ALL_TERMS_PLANS) >= _CLASS_COUNTS_SIZE:
        _ALL_TERMS_PLANS.clear()
    # the terms are held, so the ids in the key stay theirs while the entry lives
    _ALL_TERMS_PLANS[plan_key] = (terms, sub, len(table.pod_signatures), entries)
    return entries


#: (table uid, id of each term) -> (the terms, their ``ipa-all`` subscription, the table's number
#: of pod label signatures then, the ``(topology key, subscription)`` entries): see
#: :func:`_all_terms_entries`
_ALL_TERMS_PLANS: dict[tuple, tuple] = {}


def counts_of_subscriptions(table: NodeTable, rows: np.ndarray, entries: Sequence[tuple[str, Any]]
                            ) -> TopologyCounts:
    """PreFilter's counts: per topology key, the per-domain sums over ``rows`` of the count
    subscriptions listed for it in ``entries`` ((key, subscription), a subscription counted once
    per listing). The usual case, one subscription for a key and every row, takes the
    subscription's frozen copy of its kept counts (they move with the table's pods, the state
    must not; the copy is shared by the cycles between two moves, :meth:`frozen_domain_counts`);
    others go through :class:`DomainSums`."""
    if not entries:
        return TopologyCounts.from_arrays(table, {})
    full = len(rows) == len(table)
    if full and len(entries) == 1:
        # one term (SchedulingPodAffinity's measured pods): the loop below without its grouping
        key, sub = entries[0]
        values = table.label_values.get(key)
        if values is None:
            return TopologyCounts.from_nonzero_arrays(table, {})  # no node has the key
        c, nonzero = sub.frozen_domain_counts(table, key)
        if not nonzero:
            return TopologyCounts.from_nonzero_arrays(table, {})
        if len(c) != len(values):
            padded = np.zeros(len(values), dtype=np.int64)
            padded[:len(c)] = c
            c = padded
        return TopologyCounts.from_nonzero_arrays(table, {key: c})
    by_key: dict[str, list] = {}
    for key, sub in entries:
        by_key.setdefault(key, []).append(sub)
    out: dict[str, np.ndarray] = {}   # key -> (V,) int64, not all zero
    rest = None
    for key, subs in by_key.items():
        values = table.label_values.get(key)
        if values is None:
            continue  # no node has the key
        if full and len(subs) == 1:
            # (V',) read-only, V' <= V: label values only grow
            c, nonzero = subs[0].frozen_domain_counts(table, key)
            if not nonzero:
                continue  # (an all-zero key is no entry)
            if len(c) == len(values):
                out[key] = c
            else:
                counts = out[key] = np.zeros(len(values), dtype=np.int64)
                counts[:len(c)] = c
            continue
        if rest is None:
            rest = DomainSums(table, rows, counts_only=True)
        rest.add_all(key, subs)
    if rest is not None:
        out.update((k, a) for k, a in rest.counts().items() if np.count_nonzero(a))
    return TopologyCounts.from_nonzero_arrays(table, out)


# ------------------------------------------------------------------------------------------------
# Filter
# ------------------------------------------------------------------------------------------------
def satisfy_pod_affinity(state: PreFilterState, labels: Mapping[str, str]) -> bool:
    """Upstream ``satisfyPodAffinity``, with the first-pod-of-a-group exception."""
    pods_exist = True
    counts = state.affinity_counts
    for t in state.affinity_terms:
        value = labels.get(t.topology_key)
        if value is None:
            return False  # every topology label must exist on the node
        if counts.get(t.topology_key, value) <= 0:
            pods_exist = False
    if not pods_exist:
        return counts.is_empty() and state.pod_matches_own_affinity
    return True


def satisfy_pod_anti_affinity(state: PreFilterState, labels: Mapping[str, str]) -> bool:
    counts = state.anti_affinity_counts
    if not counts.is_empty():
        for t in state.anti_affinity_terms:
            value = labels.get(t.topology_key)
            if value is not None and counts.get(t.topology_key, value) > 0:
                return False
    return True


def satisfy_existing_pods_anti_affinity(state: PreFilterState, labels: Mapping[str, str]) -> bool:
    counts = state.existing_anti_affinity_counts
    if not counts.is_empty():
        for key, value in labels.items():
            if counts.get(key, value) > 0:
                return False
    return True


def filter_node(state: PreFilterState, labels: Mapping[str, str]) -> Status | None:
    """Upstream ``Filter`` on one node's labels: affinity, then anti-affinity, then existing pods'."""
    if not satisfy_pod_affinity(state, labels):
        return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_REASON_AFFINITY_RULES_NOT_MATCH)
    if not satisfy_pod_anti_affinity(state, labels):
        return Status(Code.UNSCHEDULABLE, ERR_REASON_ANTI_AFFINITY_RULES_NOT_MATCH)
    if not satisfy_existing_pods_anti_affinity(state, labels):
        return Status(Code.UNSCHEDULABLE, ERR_REASON_EXISTING_ANTI_AFFINITY_RULES_NOT_MATCH)
    return None


_REASONS = [(ERR_REASON_AFFINITY_RULES_NOT_MATCH,), (ERR_REASON_ANTI_AFFINITY_RULES_NOT_MATCH,),
            (ERR_REASON_EXISTING_ANTI_AFFINITY_RULES_NOT_MATCH,)]


def _int64(counts: np.ndarray) -> np.ndarray:
    """``counts`` as a C-contiguous int64 array (what the count arrays already are: no copy)."""
    return counts if counts.dtype == np.int64 and counts.flags.c_contiguous else np.ascontiguousarray(counts, np.int64)


_NO_COUNTS = np.zeros(0, dtype=np.int64)
_UNRESOLVABLE = int(Code.UNSCHEDULABLE_AND_UNRESOLVABLE)
_UNSCHEDULABLE = int(Code.UNSCHEDULABLE)


def filter_vectorized(state: PreFilterState, table: NodeTable, rows: np.ndarray) -> FilterVerdicts:
    """:func:`filter_node` for every row at once: each term (each key, for existing pods'
    anti-affinity) marks its outcome at the rows' label codes into one (n,) uint8 bit set in a
    compiled pass (``_interpodaffinity.mark``), and one more pass turns the bits into verdicts in
    upstream's order (``_interpodaffinity.verdicts``). rows: (n,) int64 table rows."""
    n = len(rows)
    label_codes = table.label_codes
    rows = np.ascontiguousarray(rows, dtype=np.int64)
    if not state.affinity_terms:
        # No affinity bit can be set (the measured pods of SchedulingPodAntiAffinity and
        # SchedulingPodMatchingAntiAffinity): the incoming pod's anti-affinity terms, then existing
        # pods' anti-affinity per key, go straight to verdicts in one compiled call
        # (``_interpodaffinity.anti_verdicts``, or ``hit_verdicts`` for one existing key alone:
        # what mark + verdicts give then, without the bit set and its second pass).
        anti, existing = _anti_affinity_checks(state, table)
        if not anti:
            if not existing:
                return FilterVerdicts.all_pass(n)
            if len(existing) == 1:
                (arr, key_column), = existing
                codes, reason_ids = _ipa.hit_verdicts(arr, key_column, rows, _UNSCHEDULABLE, 2)
                return FilterVerdicts(codes, reason_ids, _REASONS)
        codes, reason_ids = _ipa.anti_verdicts(anti, existing, rows, _UNSCHEDULABLE)
        return FilterVerdicts(codes, reason_ids, _REASONS)
    bits = np.zeros(n, dtype=np.uint8)

    # 1. affinity: every term's key present, and a matching pod in each term's domain (or first pod)
    first_pod = False
    if state.affinity_terms:
        arrays = state.affinity_counts.arrays(table)
        for t in state.affinity_terms:
            column = label_codes.get(t.topology_key)
            if column is None:  # no node has the key
                bits |= _ipa.MISSING_KEY
                continue
            counts = arrays.get(t.topology_key)  # absent: no domain has a matching pod
            _ipa.mark(_NO_COUNTS if counts is None else _int64(counts), column, rows, bits,
                      0, _ipa.NO_MATCHING_POD, _ipa.MISSING_KEY)
        first_pod = state.affinity_counts.is_empty() and state.pod_matches_own_affinity

    # 2. the incoming pod's anti-affinity; 3. existing pods' anti-affinity: any (key, node[key])
    # with a positive count
    anti, existing = _anti_affinity_checks(state, table)
    for domain_counts, column in anti:
        _ipa.mark(domain_counts, column, rows, bits, _ipa.ANTI, 0, 0)
    for domain_counts, column in existing:
        _ipa.mark(domain_counts, column, rows, bits, _ipa.EXISTING, 0, 0)

    codes, reason_ids = _ipa.verdicts(bits, first_pod, _UNRESOLVABLE, _UNSCHEDULABLE)
    return FilterVerdicts(codes, reason_ids, _REASONS)


_LOWEST = -(1 << 63)
_HIGHEST = (1 << 63) - 1


def window_checks(state: PreFilterState, table: NodeTable) -> list[tuple] | None:
    """:func:`filter_vectorized`'s checks as ``_table.clear_failing`` takes them (``(counts,
    label column, absent_ok, lo, hi)``: a row passes a check when its label is absent and
    ``absent_ok``, or its domain's count is in ``[lo, hi]``), for the compiled cycle's pass mask
    (only whether each row passes, not why). None when every row fails (an affinity term's key no
    node has). Per affinity term: the key present and, unless the pod is the first of its group, a
    positive count; per incoming anti-affinity term and per key of existing pods' anti-affinity:
    no positive count where the key is present (the same columns and counts as the verdicts')."""
    label_codes = table.label_codes
    checks: list[tuple] = []
    if state.affinity_terms:
        arrays = state.affinity_counts.arrays(table)
        first_pod = state.affinity_counts.is_empty() and state.pod_matches_own_affinity
        lo = _LOWEST if first_pod else 1
        for t in state.affinity_terms:
            column = label_codes.get(t.topology_key)
            if column is None:
                return None  # no node has the key: every row fails
            counts = arrays.get(t.topology_key)
            checks.append((_NO_COUNTS if counts is None else _int64(counts), column, False, lo, _HIGHEST))
    anti, existing = _anti_affinity_checks(state, table)
    for domain_counts, column in anti + existing:
        checks.append((domain_counts, column, True, _LOWEST, 0))
    return checks


def _anti_affinity_checks(state: PreFilterState, table: NodeTable
                          ) -> tuple[list[tuple[np.ndarray, np.ndarray]], list[tuple[np.ndarray, np.ndarray]]]:
    """The anti-affinity checks every Filter form makes, as (counts by domain code as int64, the
    table's label column) pairs: the incoming pod's terms whose key some node has and some domain
    counts, then the keys of existing pods' anti-affinity some node has. A row fails a pair when
    its label is present and its domain's count is positive."""
    label_codes = table.label_codes
    anti: list[tuple[np.ndarray, np.ndarray]] = []
    if not state.anti_affinity_counts.is_empty():
        arrays = state.anti_affinity_counts.arrays(table)
        for t in state.anti_affinity_terms:
            column = label_codes.get(t.topology_key)
            counts = arrays.get(t.topology_key)
            if column is not None and counts is not None:
                anti.append((_int64(counts), column))
    existing: list[tuple[np.ndarray, np.ndarray]] = []
    if not state.existing_anti_affinity_counts.is_empty():
        for key, arr in state.existing_anti_affinity_counts.arrays(table).items():
            column = label_codes.get(key)
            if column is not None and arr is not None:
                existing.append((_int64(arr), column))
    return anti, existing


#: label values of a topology key at most for :func:`passes_everywhere` to read every count
_EVERYWHERE_VALUES = 64


def passes_everywhere(state: PreFilterState, table: NodeTable, key_on_every_row: Callable[[str], bool]) -> bool:
    """Whether :func:`filter_vectorized` passes every live row of ``table`` for ``state`` (the
    compiled cycle's ``filter_passes_everywhere``), decided only where it is cheap: a pod whose
    only checks are its affinity terms (no incoming anti-affinity and no existing pods'
    anti-affinity count: such a count is a positive count at some domain, which fails its rows),
    each term's key on every live row (``key_on_every_row``) and, unless the pod is the first of its
    group, a positive count at every value the key has ever had (at most ``_EVERYWHERE_VALUES``):
    SchedulingPodAffinity's measured pods, all of one zone. The rows ``window_checks`` would test
    then all pass. False says nothing (the windows decide)."""
    if not state.affinity_terms or not state.anti_affinity_counts.is_empty() \
            or not state.existing_anti_affinity_counts.is_empty():
        return False
    first_pod = state.affinity_counts.is_empty() and state.pod_matches_own_affinity
    arrays = None if first_pod else state.affinity_counts.arrays(table)
    label_values = table.label_values
    for t in state.affinity_terms:
        key = t.topology_key
        values = label_values.get(key)
        if values is None or not key_on_every_row(key):
            return False
        if arrays is not None:
            counts = arrays.get(key)
            v = len(values)
            if counts is None or v > _EVERYWHERE_VALUES or len(counts) < v or (v and int(counts[:v].min()) < 1):
                return False
    return True
