"""PreScore, Score and NormalizeScore (upstream ``interpodaffinity/scoring.go``, v1.34).

PreScore adds, for every existing pod E on a node N of the snapshot (all nodes, not only the
feasible ones: upstream reads the shared lister), at ``topologyScore[key][N[key]]``:

* ``+w`` for each incoming preferred affinity term (weight w) E matches, ``-w`` for each incoming
  preferred anti-affinity term E matches;
* ``+hardPodAffinityWeight`` (when > 0) for each of E's required affinity terms the incoming pod
  matches (with its namespace labels);
* ``+w`` / ``-w`` for each of E's preferred affinity / anti-affinity terms the incoming pod matches.

A contribution needs N to carry the term's key, and creates the entry even when weights cancel.
PreScore returns Skip when ``ignorePreferredTermsOfExistingPods`` is set and the pod has no
preferred terms, or when no entry was created. Score sums the node's entries; NormalizeScore maps
[min, max] to [0, 100] in float64 with truncation.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, Iterable, Mapping, Sequence

import numpy as np

from ..._kernels import _interpodaffinity as _ipa
from ...framework import protocols as fwk
from ...framework.cycle_state import CycleState, NotFoundError
from ...framework.status import MAX_NODE_SCORE, Status, StatusError
from .filtering import NAME, class_counts, term_counts, term_matcher
from .signatures import ParsedSignature, parsed_signatures
from .terms import (AffinityTerm, preferred_affinity_terms, preferred_anti_affinity_terms,
                    required_affinity_terms)
from .topology import DomainSums, RowWeights, ScoreMap, TopologyScores

if TYPE_CHECKING:  # pragma: no cover
    from ...api import Pod
    from ...framework.protocols import NodeTable

PRE_SCORE_STATE_KEY = "PreScore" + NAME
ERR_EMPTY_SHARED_LISTER = "empty shared lister in InterPodAffinity PreScore"

_INT64_MAX = 2**63 - 1
_INT64_MIN = -(2**63)

Weighted = Sequence[tuple[AffinityTerm, int]]


class PreScoreState:
    """Upstream ``preScoreState``: the topology scores (Clone shares them, as upstream does)."""

    __slots__ = ("topology_score",)

    def __init__(self, topology_score: TopologyScores):
        self.topology_score = topology_score

    def clone(self) -> "PreScoreState":
        return self


def read_state(state: CycleState) -> PreScoreState | Status:
    try:
        return state.read(PRE_SCORE_STATE_KEY)
    except NotFoundError as e:
        return Status.from_error(StatusError(f'failed to read "{PRE_SCORE_STATE_KEY}" from cycleState: {e}'))


def has_preferred_terms(pod: "Pod") -> bool:
    """Upstream ``hasConstraints``: the pod has preferred pod affinity or anti-affinity terms."""
    a = pod.affinity
    if a is None:
        return False
    return bool((a.pod_affinity is not None and a.pod_affinity.preferred)
                or (a.pod_anti_affinity is not None and a.pod_anti_affinity.preferred))


# ------------------------------------------------------------------------------------------------
# walking NodeInfos (upstream's algorithm)
# ------------------------------------------------------------------------------------------------
def process_existing_pod(score_map: ScoreMap, existing: "Pod", node_labels: Mapping[str, str],
                         pod: "Pod", ns_labels: Mapping[str, str] | None, preferred: Weighted,
                         preferred_anti: Weighted, hard_weight: int) -> None:
    """Upstream ``processExistingPod``."""
    if not node_labels:
        return
    for t, w in preferred:
        if t.matches(existing.namespace, existing.labels, None):
            score_map.add(node_labels, t.topology_key, w)
    for t, w in preferred_anti:
        if t.matches(existing.namespace, existing.labels, None):
            score_map.add(node_labels, t.topology_key, -w)
    if hard_weight > 0:
        for t in required_affinity_terms(existing):
            if t.matches(pod.namespace, pod.labels, ns_labels):
                score_map.add(node_labels, t.topology_key, hard_weight)
    for t, w in preferred_affinity_terms(existing):
        if t.matches(pod.namespace, pod.labels, ns_labels):
            score_map.add(node_labels, t.topology_key, w)
    for t, w in preferred_anti_affinity_terms(existing):
        if t.matches(pod.namespace, pod.labels, ns_labels):
            score_map.add(node_labels, t.topology_key, -w)


def scores_walking(pod: "Pod", ns_labels: Mapping[str, str] | None, preferred: Weighted,
                   preferred_anti: Weighted, hard_weight: int, node_infos: Iterable[fwk.NodeInfo],
                   all_pods: bool) -> TopologyScores:
    """Upstream's PreScore loop: contributions of every pod of ``node_infos`` (``all_pods``), or only of
    their pods with affinity terms (enough when the incoming pod has no preferred terms)."""
    score_map = ScoreMap()
    for ni in node_infos:
        labels = ni.node().labels
        for pi in (ni.pods if all_pods else ni.pods_with_affinity):
            process_existing_pod(score_map, pi.pod, labels, pod, ns_labels, preferred, preferred_anti,
                                 hard_weight)
    return TopologyScores(score_map.pairs)


# ------------------------------------------------------------------------------------------------
# on the node table
# ------------------------------------------------------------------------------------------------
def scores_on_table(pod: "Pod", ns_labels: Mapping[str, str] | None, preferred: Weighted,
                    preferred_anti: Weighted, hard_weight: int, table: NodeTable,
                    mask: Any) -> TopologyScores:
    """:func:`scores_walking` over the table rows in ``mask`` (every pod there): the incoming pod's
    terms are evaluated once per pod label signature, existing pods' once per affinity signature."""
    contributions = RowWeights()
    for terms, sign in ((preferred, 1), (preferred_anti, -1)):
        for t, w in terms:
            per_row = table.count_matching_pods(term_matcher(t))
            rows = np.flatnonzero(per_row)
            if rows.size:
                contributions.add_rows(t.topology_key, rows, per_row[rows] * (sign * w))
    signature_rows = table.affinity_signature_rows
    for k, parsed in enumerate(parsed_signatures(table)):
        if not signature_rows[k]:
            continue
        for t, w in _existing_terms(parsed, hard_weight):
            if t.matches(pod.namespace, pod.labels, ns_labels):
                contributions.add_group(t.topology_key, signature_rows[k], w)
    return TopologyScores.from_arrays(table, contributions.sums(table, mask))


def scores_incremental(pod: "Pod", ns_labels: Mapping[str, str] | None, preferred: Weighted,
                       preferred_anti: Weighted, hard_weight: int, table: NodeTable,
                       rows: np.ndarray) -> TopologyScores:
    """:func:`scores_on_table` from the table's count subscriptions (kept up to date as pods come
    and go) instead of the row dicts."""
    entries = score_entries(pod, ns_labels, preferred, preferred_anti, hard_weight, table)
    if not entries:  # nothing can contribute (the pods without terms of most workloads): no entry
        return TopologyScores.from_nonempty_arrays(table, {})
    if len(rows) == len(table):
        return scores_of_entries(table, entries)
    sums = DomainSums(table, rows)
    for key, subs, weights in entries:
        sums.add_all(key, subs, weights)
    return TopologyScores.from_arrays(table, sums.sums())


def score_entries(pod: "Pod", ns_labels: Mapping[str, str] | None, preferred: Weighted, preferred_anti: Weighted,
                  hard_weight: int, table: NodeTable) -> list[tuple[str, list, list]]:
    """``(topology key, subscriptions, weights)`` per key, keys in first-contribution order: the
    incoming pod's preferred terms (one subscription each, weight +-w), then the existing pods'
    terms matching its class (one subscription per (key, weight), :func:`class_counts`), brought
    up to date: what :func:`scores_incremental` sums."""
    by_key: dict[str, tuple[list, list]] = {}  # topology key -> (subscriptions, weights), in order
    for terms, sign in ((preferred, 1), (preferred_anti, -1)):
        for t, w in terms:
            subs, weights = by_key.setdefault(t.topology_key, ([], []))
            subs.append(term_counts(table, t))
            weights.append(sign * w)
    # existing pods' terms matching the incoming pod's class: one subscription per (key, weight)
    existing = class_counts("ipa-score", pod, ns_labels, table,
                            lambda parsed: _existing_terms(parsed, hard_weight), hard_weight)
    for (key, w), sub in existing.items():
        subs, weights = by_key.setdefault(key, ([], []))
        subs.append(sub)
        weights.append(w)
    return [(key, subs, weights) for key, (subs, weights) in by_key.items()]


def scores_of_entries(table: NodeTable, entries: Sequence[tuple[str, list, list]]) -> TopologyScores:
    """PreScore's map over every row from kept :func:`score_entries`: each key's map in one
    compiled pass over its subscriptions' kept per-domain counts, as DomainSums.add_all sums them."""
    out: dict[str, tuple[np.ndarray, np.ndarray]] = {}
    label_values = table.label_values
    for key, subs, weights in entries:
        values = label_values.get(key)
        if values is None:
            continue  # no node has the key
        scores, present, landed = _ipa.weighted_domain_sums(
            [sub.domain_counts(table, key) for sub in subs], weights, len(values))
        if landed:
            out[key] = (scores, present)
    return TopologyScores.from_nonempty_arrays(table, out)


def _existing_terms(parsed: ParsedSignature, hard_weight: int) -> Iterable[tuple[AffinityTerm, int]]:
    """An existing pod's scoring terms with the weight each adds when the incoming pod matches it."""
    if hard_weight > 0:
        for t in parsed.required_affinity:
            yield t, hard_weight
    yield from parsed.preferred_affinity
    for t, w in parsed.preferred_anti_affinity:
        yield t, -w


# ------------------------------------------------------------------------------------------------
# NormalizeScore
# ------------------------------------------------------------------------------------------------
def normalize_list(scores: list) -> None:
    """Upstream ``NormalizeScore`` on NodeScore objects."""
    min_count, max_count = _INT64_MAX, _INT64_MIN
    for ns in scores:
        if ns.score > max_count:
            max_count = ns.score
        if ns.score < min_count:
            min_count = ns.score
    diff = max_count - min_count
    for ns in scores:
        f = 0.0
        if diff > 0:
            f = float(MAX_NODE_SCORE) * (float(ns.score - min_count) / float(diff))
        ns.score = int(f)


def normalize_array(scores: np.ndarray) -> None:
    """:func:`normalize_list` on an int64 (n,) array, in place (same float64 operations): one
    compiled pass (``_interpodaffinity.normalize``) for a contiguous int64 array."""
    if not len(scores):
        return
    try:
        _ipa.normalize(scores)  # (it checks the array: int64, 1-d, C-contiguous, writable)
        return
    except (TypeError, ValueError):
        pass
    lo, hi = int(scores.min()), int(scores.max())
    diff = hi - lo
    if diff > 0:
        f = float(MAX_NODE_SCORE) * ((scores - lo).astype(np.float64) / float(diff))
        scores[...] = f.astype(np.int64)
    else:
        scores[...] = 0


def score_vectorized(state: PreScoreState, table: NodeTable, rows: np.ndarray) -> np.ndarray:
    """(n,) int64: each row's sum over topology keys of the entry at its value (one compiled pass
    per key, ``_interpodaffinity.add_scores_at``)."""
    out = np.zeros(len(rows), dtype=np.int64)
    if rows.dtype != np.int64 or not rows.flags.c_contiguous:
        rows = np.ascontiguousarray(rows, dtype=np.int64)
    label_codes = table.label_codes
    for key, (scores, _) in state.topology_score.arrays(table).items():
        column = label_codes.get(key)
        if column is not None:
            if scores.dtype != np.int64 or not scores.flags.c_contiguous:
                scores = np.ascontiguousarray(scores, dtype=np.int64)
            _ipa.add_scores_at(scores, column, rows, out)
    return out


#: label values of a topology key at most for :func:`same_score_everywhere` to compare
SAME_SCORE_VALUES = 64


def same_score_everywhere(state: PreScoreState, key_on_every_row: Callable[[Any, str], bool]) -> bool:
    """Whether :func:`score_vectorized` gives every live row of the scores' table the same raw
    score (upstream's NormalizeScore then gives each 0: max == min), decided where it is cheap:
    for each topology key scored, every live row has the key (``key_on_every_row(table, key)``)
    and the scores of every value the key has ever had (at most ``SAME_SCORE_VALUES``) are equal
    (SchedulingPodAffinity: one zone). False says nothing."""
    scores = state.topology_score
    table = scores.arrays_table()
    if table is None:
        return False
    label_values = table.label_values
    for key, (per_value, _) in scores.arrays(table).items():
        values = label_values.get(key)
        if values is None or len(values) > SAME_SCORE_VALUES or len(per_value) < len(values):
            return False
        if len(values) > 1 and int(per_value[:len(values)].min()) != int(per_value[:len(values)].max()):
            return False
        if not key_on_every_row(table, key):
            return False
    return True
