"""PreFilter / Filter / AddPod / RemovePod state (upstream ``podtopologyspread/filtering.go``, v1.34).

PreFilter counts, per hard constraint, the matching pods of every topology domain over *all* nodes
(those having every constraint's key and passing the constraint's inclusion policies), and keeps the
two smallest domains (critical paths). Filter then checks
``count[node's domain] + self_match - global_min <= maxSkew`` per constraint.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Sequence

import numpy as np

from ..._kernels import _table
from ...api import required_node_affinity_matches
from ...framework import protocols as fwk
from ...framework.status import Code
from .common import (MAX_INT32, DomainCache, DomainCounts, InclusionMasks, SelectorCounts, SpecNodeParts,
                     SpreadConstraint, count_pods_match_selector, has_all_keys_mask, label_column,
                     match_node_inclusion_policies, node_labels_match_constraints)

if TYPE_CHECKING:  # pragma: no cover
    from ...api import Node, Pod
    from ...framework.protocols import NodeTable


class CriticalPaths:
    """Upstream ``criticalPaths``: two (topology value, match count) pairs; ``[0]`` always holds the
    minimum count, ``[1]`` a count >= it (not necessarily the second minimum after updates)."""

    __slots__ = ("paths",)

    def __init__(self) -> None:
        self.paths: list[list[Any]] = [["", MAX_INT32], ["", MAX_INT32]]  # [topology value, count] pairs

    def update(self, value: str, num: int) -> None:
        p = self.paths
        i = 0 if value == p[0][0] else (1 if value == p[1][0] else -1)
        if i >= 0:
            p[i][1] = num
            if p[0][1] > p[1][1]:
                p[0], p[1] = p[1], p[0]
        elif num < p[0][1]:
            p[1] = p[0]
            p[0] = [value, num]
        elif num < p[1][1]:
            p[1] = [value, num]

    def clone(self) -> "CriticalPaths":
        c = CriticalPaths.__new__(CriticalPaths)
        c.paths = [list(self.paths[0]), list(self.paths[1])]
        return c

    def as_tuple(self) -> tuple[tuple[str, int], tuple[str, int]]:
        return (tuple(self.paths[0]), tuple(self.paths[1]))

    def __repr__(self) -> str:
        return f"CriticalPaths({self.paths!r})"


class PreFilterState:
    """Upstream ``preFilterState``: the hard constraints, their critical paths and domain counts.

    ``tp_value_to_match_num[i]`` is a :class:`~.common.DomainCounts` (domain value -> matching pods);
    an empty ``constraints`` list is a legit state that lets every node pass. The batch Filter's
    per-label-code verdicts are kept until the state changes (:func:`update_with_pod`)."""

    __slots__ = ("constraints", "critical_paths", "tp_value_to_match_num", "_verdicts")

    def __init__(self, constraints: Sequence[SpreadConstraint] = (), critical_paths: Sequence[CriticalPaths] = (),
                 tp_value_to_match_num: Sequence[DomainCounts] = ()):
        self.constraints = list(constraints)
        self.critical_paths = list(critical_paths)
        self.tp_value_to_match_num = list(tp_value_to_match_num)
        #: (table, pod labels, [(topology key, (V+2,) int8 verdict by label code)]) or None
        self._verdicts: tuple | None = None

    def min_match_num(self, i: int, min_domains: int) -> int:
        """The global minimum for the skew; 0 when there are fewer domains than ``min_domains``."""
        if len(self.tp_value_to_match_num[i]) < min_domains:
            return 0
        return self.critical_paths[i].paths[0][1]

    def clone(self) -> "PreFilterState":
        return PreFilterState(self.constraints, [p.clone() for p in self.critical_paths],
                              [m.clone() for m in self.tp_value_to_match_num])

    def skew_limit(self, i: int, pod: Pod) -> int:
        """Constraint ``i``'s largest passing count: a node fails when its domain's count exceeds
        it (``count + selfMatch - minMatch > maxSkew``)."""
        c = self.constraints[i]
        return c.max_skew - (1 if c.selector.matches(pod.labels) else 0) + self.min_match_num(i, c.min_domains)

    def verdicts_by_code(self, table: NodeTable, pod: Pod) -> list[tuple[str, np.ndarray]]:
        """Per constraint, ``(topology key, (V+2,) int8)``: the Filter verdict of a node by its label
        code of the key (0 pass, 2 skew too large; the last entry, which code -1 selects, is 1:
        label missing). Built once per state, table and pod labels (Filter runs on windows of
        nodes), dropped when AddPod/RemovePod change the counts."""
        cached = self._verdicts
        pod_labels = pod.labels
        if cached is not None and cached[0] is table and cached[1] is pod_labels:
            return cached[2]
        verdicts = []
        for i, c in enumerate(self.constraints):
            key = c.topology_key
            limit = self.skew_limit(i, pod)
            domain_counts = self.tp_value_to_match_num[i]
            if len(table.label_values.get(key, ())) <= _SMALL_DOMAINS:
                listed = [2 if m > limit else 0 for m in domain_counts.lookup_list(table, key)]
                listed[-1] = 1
                v = np.array(listed, dtype=np.int8)
            else:
                v = np.where(domain_counts.lookup(table, key) > limit, np.int8(2), np.int8(0)).astype(np.int8)
                v[-1] = 1
            verdicts.append((key, v))
        self._verdicts = (table, pod_labels, verdicts)
        return verdicts


#: Filter reasons (upstream ``ErrReasonConstraintsNotMatch`` / ``ErrReasonNodeLabelNotMatch``).
ERR_REASON_CONSTRAINTS_NOT_MATCH = "node(s) didn't match pod topology spread constraints"
ERR_REASON_NODE_LABEL_NOT_MATCH = ERR_REASON_CONSTRAINTS_NOT_MATCH + " (missing required label)"
FILTER_REASONS = [(ERR_REASON_NODE_LABEL_NOT_MATCH,), (ERR_REASON_CONSTRAINTS_NOT_MATCH,)]
#: Filter verdict (see filter_batch_verdicts) -> Code.
VERDICT_CODES = np.array([Code.SUCCESS, Code.UNSCHEDULABLE_AND_UNRESOLVABLE, Code.UNSCHEDULABLE], dtype=np.int8)
#: Filter verdict -> index into FILTER_REASONS (-1: passes).
VERDICT_REASONS = np.array([-1, 0, 1], dtype=np.int32)


# ------------------------------------------------------------------------------------------------
# PreFilter: one node at a time (upstream's algorithm) and over the table
# ------------------------------------------------------------------------------------------------
def pre_filter_state_per_node(pod: Pod, nodes: Sequence[fwk.NodeInfo], constraints: Sequence[SpreadConstraint],
                              enable_node_inclusion_policy: bool) -> PreFilterState:
    """Upstream ``calPreFilterState``, walking each NodeInfo's pods."""
    counts: list[dict[str, int]] = [{} for _ in constraints]
    for node_info in nodes:
        node = node_info.node()
        if not enable_node_inclusion_policy and not required_node_affinity_matches(pod, node):
            continue
        labels = node.labels
        if not node_labels_match_constraints(labels, constraints):
            continue
        for i, c in enumerate(constraints):
            if enable_node_inclusion_policy and not match_node_inclusion_policies(c, pod, node):
                continue
            value = labels[c.topology_key]
            count = count_pods_match_selector(node_info.pods, c.selector, pod.namespace)
            counts[i][value] = counts[i].get(value, 0) + count
    paths = []
    for mapping in counts:
        p = CriticalPaths()
        for value, num in mapping.items():  # insertion order: first appearance in the node list
            p.update(value, num)
        paths.append(p)
    return PreFilterState(constraints, paths, [DomainCounts(m) for m in counts])


def pre_filter_state_batch(pod: Pod, nodes: fwk.NodeBatch, constraints: Sequence[SpreadConstraint],
                           enable_node_inclusion_policy: bool) -> PreFilterState:
    """:func:`pre_filter_state_per_node` over a NodeBatch, with per-row counts from the table.

    Domains are ordered by first appearance in ``nodes`` and the critical paths are the two smallest
    (count, first appearance) pairs: what upstream's update loop gives when it visits the domains in
    that order, so both paths produce the same state.

    The per-domain counts are the count subscription's sums over the included rows
    (``CountSubscription.coded_counts``), kept up to date as pods come and go; while some pod
    terminates (not counted, though its signature is) they are summed from the per-row counts.
    """
    table, rows = nodes.table, nodes.rows
    selector_counts = SelectorCounts(table, pod.namespace)
    terminating = table.total_terminating_pods > 0  # (the table's running sum of the column: O(1))
    values_of = table.label_values
    paths, domain_counts = [], []
    for c, (included_rows, codes, domain_codes, n_values, codes_by_row) in zip(
            constraints, _node_parts(pod, table, rows, constraints, enable_node_inclusion_policy)):
        if not terminating:
            sub = selector_counts.subscription(c.selector)
            if sub is None:  # an empty or Nothing selector counts no pod
                by_code = np.zeros(n_values, dtype=np.int64)
            else:  # (the subscription's array, updated by later pods: copied)
                by_code = sub.coded_counts(table, codes_by_row, n_values).copy()  # (V,) int64
        else:
            pods = selector_counts(c.selector)[included_rows]  # (m,) int64
            sums = np.bincount(codes, weights=pods, minlength=n_values)  # (V,) float64, exact integers
            by_code = np.rint(sums).astype(np.int64)
        values = values_of.get(c.topology_key, [])
        if len(domain_codes) <= _SMALL_DOMAINS:
            counts = by_code[domain_codes]  # (D,) int64
            paths.append(_critical_paths(values, domain_codes, counts))
        else:  # (many domains, e.g. one per node: the gather and the two smallest in one pass)
            counts = np.empty(len(domain_codes), dtype=np.int64)
            first, second = _table.gather_two_smallest(by_code, domain_codes, counts)
            paths.append(_paths_at(values, domain_codes, counts, first, second))
        domain_counts.append(DomainCounts.from_codes(table, c.topology_key, domain_codes, counts, by_code=by_code))
    return PreFilterState(constraints, paths, domain_counts)


_DOMAINS = DomainCache()

#: the node-dependent part of pre_filter_state_batch per pod spec and node set: ``_domains``' answer
#: per constraint (a quarter of a TopologySpreading cycle when built per pod)
_NODE_PARTS = SpecNodeParts()


def _node_parts(pod: Pod, table: NodeTable, rows: np.ndarray, constraints: Sequence[SpreadConstraint],
                enable_node_inclusion_policy: bool) -> list[tuple[np.ndarray, np.ndarray, np.ndarray, int, np.ndarray]]:
    """:func:`_domains` for each constraint, over the rows with every constraint's key and, per
    the inclusion policies, matching the pod's required node affinity and tolerating the taints."""
    refs = SpecNodeParts.refs(pod, rows)
    flags = (enable_node_inclusion_policy,)
    hit = _NODE_PARTS.last(table, constraints, refs, *flags)
    if hit is not None:
        return hit
    key, refs = SpecNodeParts.key(pod, table, rows, constraints, *flags)
    hit = _NODE_PARTS.get(key, refs)
    if hit is not None:
        return _NODE_PARTS.remember(table, constraints, refs, flags, hit)
    included = has_all_keys_mask(table, rows, constraints)  # (n,) bool
    masks = InclusionMasks(pod, table, rows)
    if not enable_node_inclusion_policy:
        included &= masks.affinity
    parts = []
    for c in constraints:
        mask = masks.for_constraint(c) if enable_node_inclusion_policy else None
        node_mask = included if mask is None else included & mask
        parts.append(_domains(table, rows, node_mask, c.topology_key))
    return _NODE_PARTS.remember(table, constraints, refs, flags, _NODE_PARTS.put(key, refs, parts))


def _domains(table: NodeTable, rows: np.ndarray, node_mask: np.ndarray, key: str
             ) -> tuple[np.ndarray, np.ndarray, np.ndarray, int, np.ndarray]:
    """``(included rows (m,), their codes of key (m,) int64, domain codes (D,) in first-appearance
    order, V, codes by row (C,) int64: the code of each included row, -1 elsewhere)`` for the rows
    where ``node_mask``; cached per node-set version, node list and mask (they change only when
    nodes do, while the counts change with every pod)."""
    ck = (table.uid, table.node_version, key, len(rows))
    value = _DOMAINS.get(ck, (node_mask, rows))
    if value is not None:
        return value
    positions = np.flatnonzero(node_mask)
    included_rows = rows[positions]
    codes = label_column(table, key, included_rows).astype(np.int64)  # (m,) all >= 0
    n_values = len(table.label_values.get(key, ()))
    distinct, first = np.unique(codes, return_index=True)
    domain_codes = distinct[np.argsort(first, kind="stable")]  # (D,) in first-appearance order
    codes_by_row = np.full(table.capacity, -1, dtype=np.int64)
    codes_by_row[included_rows] = codes
    value = (included_rows, codes, domain_codes, n_values, codes_by_row)
    _DOMAINS.put(ck, (node_mask, rows), value)
    return value


#: up to this many domains (or label values) the small per-domain work is done in Python (cheaper
#: than numpy's calls)
_SMALL_DOMAINS = 16


def _critical_paths(values: Sequence[str], domain_codes: np.ndarray, counts: np.ndarray) -> CriticalPaths:
    """The two smallest (count, position) domains; ``counts`` is in first-appearance order."""
    p = CriticalPaths()
    n = len(counts)
    if n == 0:
        return p
    if n <= _SMALL_DOMAINS:
        listed = counts.tolist()
        first = second = -1
        for j, num in enumerate(listed):  # strict "<": the earlier of equal counts stays
            if first < 0 or num < listed[first]:
                first, second = j, first
            elif second < 0 or num < listed[second]:
                second = j
        p.paths[0] = [values[int(domain_codes[first])], listed[first]]
        if second >= 0:
            p.paths[1] = [values[int(domain_codes[second])], listed[second]]
        return p
    first, second = _table.two_smallest(counts)  # the earlier of equal counts first
    return _paths_at(values, domain_codes, counts, first, second)


def _paths_at(values: Sequence[str], domain_codes: np.ndarray, counts: np.ndarray, first: int,
              second: int) -> CriticalPaths:
    """The critical paths of the domains at positions ``first`` and ``second`` (-1: none) of
    ``domain_codes`` / ``counts`` (``_table.two_smallest``'s answer)."""
    p = CriticalPaths()
    if first >= 0:
        p.paths[0] = [values[int(domain_codes[first])], int(counts[first])]
    if second >= 0:
        p.paths[1] = [values[int(domain_codes[second])], int(counts[second])]
    return p


# ------------------------------------------------------------------------------------------------
# AddPod / RemovePod
# ------------------------------------------------------------------------------------------------
def update_with_pod(state: PreFilterState, updated_pod: Pod, preemptor: Pod, node: Node | None, delta: int,
                    enable_node_inclusion_policy: bool) -> None:
    """Upstream ``updateWithPod``: move the pod's domain counts by ``delta`` and fix the paths.

    Like upstream, the added/removed pod's deletion timestamp is not looked at, and a selector
    without requirements counts it (PreFilter's count skips such selectors).
    """
    if state is None or updated_pod.namespace != preemptor.namespace or node is None:
        return
    labels = node.labels
    if not node_labels_match_constraints(labels, state.constraints):
        return
    if not enable_node_inclusion_policy and not required_node_affinity_matches(preemptor, node):
        return
    pod_labels = updated_pod.labels
    for i, c in enumerate(state.constraints):
        if not c.selector.matches(pod_labels):
            continue
        if enable_node_inclusion_policy and not match_node_inclusion_policies(c, preemptor, node):
            continue
        value = labels[c.topology_key]
        num = state.tp_value_to_match_num[i].add(value, delta)
        state.critical_paths[i].update(value, num)
        state._verdicts = None  # the counts changed


# ------------------------------------------------------------------------------------------------
# Filter
# ------------------------------------------------------------------------------------------------
def filter_batch_verdicts(state: PreFilterState, pod: Pod, nodes: fwk.NodeBatch) -> np.ndarray:
    """(n,) int8 per node of ``nodes``: 0 pass, 1 missing topology label, 2 skew too large.

    Constraints are checked in order and the first failure decides, as upstream's loop returns at
    the first failing constraint. Each constraint's verdict is one per label code of its key
    (:meth:`PreFilterState.verdicts_by_code`), looked up by the nodes' codes.
    """
    table, rows = nodes.table, nodes.rows
    verdict = None
    for key, by_code in state.verdicts_by_code(table, pod):
        v = by_code[label_column(table, key, rows)]  # code -1 (label absent) reads the last entry
        verdict = v if verdict is None else np.where(verdict == 0, v, verdict)
    if verdict is None:
        return np.zeros(len(rows), dtype=np.int8)
    return verdict
