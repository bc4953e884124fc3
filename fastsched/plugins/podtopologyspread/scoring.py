"""PreScore / Score / NormalizeScore (upstream ``podtopologyspread/scoring.go``, v1.34).

PreScore registers, per soft constraint other than ``kubernetes.io/hostname``, the topology domains
of the filtered nodes, and counts the matching pods of those domains over *all* nodes; filtered
nodes missing a topology key are ignored (score 0) when ``requireAllTopologies``. Score sums
``count * log(size + 2) + (maxSkew - 1)`` over the constraints whose key the node has (hostname
constraints count the node's own pods), rounded half away from zero. NormalizeScore maps
``s -> 100 * (max + min - s) / max`` over the non-ignored nodes (100 for all when max is 0).
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Sequence

import numpy as np

from ..._kernels import _interpodaffinity as _ipa
from ..._kernels import _table
from ...api import required_node_affinity_matches
from ...framework import protocols as fwk
from ...framework.status import MAX_NODE_SCORE
from .common import (DomainCache, DomainCounts, InclusionMasks, SelectorCounts, SpecNodeParts, SpreadConstraint,
                     count_pods_match_selector, go_log, go_round, go_round_array, has_all_keys_mask, label_column,
                     match_node_inclusion_policies, node_labels_match_constraints, table_match_counts)

if TYPE_CHECKING:  # pragma: no cover
    from ...api import Pod
    from ...framework.protocols import NodeTable

_MAX_INT64 = 2**63 - 1
#: up to this many label values Score's per-code scores are computed in Python (cheaper than
#: numpy's calls; the same float operations)
_SMALL_VALUES = 16


def topology_normalizing_weight(size: int) -> float:
    """Upstream ``topologyNormalizingWeight``: ``math.Log(float64(size + 2))`` (kept per size)."""
    weight = _WEIGHTS.get(size)
    if weight is None:
        weight = go_log(float(size + 2))
        if len(_WEIGHTS) < 1 << 16:
            _WEIGHTS[size] = weight
    return weight


_WEIGHTS: dict[int, float] = {}


class PreScoreState:
    """Upstream ``preScoreState``.

    ``topology_value_to_pod_counts[i]`` is a :class:`~.common.DomainCounts` of the registered domains
    of constraint ``i`` (None for hostname constraints, counted per node in Score);
    ``topology_normalizing_weight[i]`` is ``log(size + 2)``. ``ignored_nodes`` is the set of names of
    the filtered nodes missing a key. The batch path also keeps ``ignored_rows`` (int64 table rows)
    and, for hostname constraints, the per-row match counts, so Score need not recount; for the
    others it keeps the counts by domain code with the registered domains (``coded``), which Score
    reads directly and the DomainCounts are built from on first use.
    Like upstream's, ``clone()`` returns the same object (nothing mutates it after PreScore).
    """

    __slots__ = ("constraints", "_counts", "topology_normalizing_weight",
                 "_ignored_nodes", "_table", "_ignored_rows", "_row_counts", "_terms", "_coded", "score_parts")

    def __init__(self, constraints: Sequence[SpreadConstraint], counts: Sequence[DomainCounts | None],
                 weights: Sequence[float], ignored_nodes: set[str] | None = None, *, table: NodeTable | None = None,
                 ignored_rows: np.ndarray | None = None, row_counts: dict[int, np.ndarray] | None = None,
                 coded: dict[int, tuple[np.ndarray, np.ndarray]] | None = None, score_parts: list | None = None):
        self.constraints = list(constraints)
        self._counts = list(counts)
        self.topology_normalizing_weight = list(weights)
        self._ignored_nodes = ignored_nodes
        self._table = table
        self._ignored_rows = ignored_rows
        self._row_counts = row_counts or {}
        #: Score's per-label-code terms and rounded scores (see term_by_code), per constraint
        self._terms: dict = {}
        #: constraint -> (sums (V+1,) int64 by domain code, registered (V+1,) uint8), over ``table``'s
        #: label codes of its key (V: the virtual "" domain of nodes without it); its DomainCounts
        #: in ``_counts`` is None until read
        self._coded = coded or {}
        #: ``_score_parts``' answer over ``table``, when PreScore built it (the kept path)
        self.score_parts = score_parts

    @property
    def topology_value_to_pod_counts(self) -> list[DomainCounts | None]:
        coded = self._coded
        if coded:
            counts = self._counts
            table = self._table
            assert table is not None  # (the batch path keeps it)
            for i, (sums, present) in coded.items():
                n_values = len(sums) - 1
                real = np.flatnonzero(present[:n_values])
                absent_count = int(sums[n_values]) if present[n_values] else None
                counts[i] = DomainCounts.from_codes(table, self.constraints[i].topology_key, real, sums[real],
                                                    absent_count)
            self._coded = {}
        return self._counts

    def score_part(self, i: int, table: NodeTable) -> tuple[np.ndarray, np.ndarray] | None:
        """``(counts, registered)`` by label code of constraint ``i``'s key over ``table`` for
        ``_ipa.spread_scores`` (0 counted where a code is not registered), or None when the state
        keeps them otherwise."""
        coded = self._coded.get(i)
        if coded is None or self._table is not table:
            return None
        return coded

    @property
    def ignored_nodes(self) -> set[str]:
        if self._ignored_nodes is None:
            # only the batch path leaves the names out, and it keeps the table and rows
            assert self._table is not None and self._ignored_rows is not None
            nodes = self._table.nodes
            self._ignored_nodes = {node.name for r in self._ignored_rows.tolist()
                                   if (node := nodes[r]) is not None}  # (live rows: never None)
        return self._ignored_nodes

    def ignored_mask(self, nodes: fwk.NodeBatch) -> np.ndarray | None:
        """(n,) bool: which nodes of the NodeBatch ``nodes`` are ignored; None when none is."""
        if self._ignored_rows is not None and self._table is nodes.table:
            if len(self._ignored_rows) == 0:
                return None
            mask = np.isin(nodes.rows, self._ignored_rows)
        else:
            ignored = self.ignored_nodes
            if not ignored:
                return None
            mask = np.fromiter((name in ignored for name in nodes.names), dtype=bool, count=len(nodes))
        return mask if mask.any() else None

    def term_by_code(self, i: int, table: NodeTable) -> np.ndarray:
        """(V+2,) float64 by label code of constraint ``i``'s key (not the hostname): Score's term
        ``count * weight + (maxSkew - 1)`` of a node with that code; 0.0 at the last entry, which
        code -1 (label absent) selects. Kept per constraint and table (the state does not change
        after PreScore)."""
        cached = self._terms.get(i)
        if cached is not None and cached[0] is table:
            return cached[1]
        c = self.constraints[i]
        domain_counts = self.topology_value_to_pod_counts[i]
        assert domain_counts is not None  # set for every constraint not on the hostname
        count = domain_counts.lookup(table, c.topology_key)  # (V+2,) int64
        term = count.astype(np.float64) * self.topology_normalizing_weight[i] + float(c.max_skew - 1)
        term[-1] = 0.0
        self._terms[i] = (table, term)
        return term

    def rounded_by_code(self, i: int, table: NodeTable) -> np.ndarray:
        """(V+2,) int64: the score of a node whose only term is :meth:`term_by_code`'s (0 for a node
        without the key): ``go_round(0.0 + term)``, as Score sums from 0.0."""
        cached = self._terms.get(("rounded", i))
        if cached is not None and cached[0] is table:
            return cached[1]
        c = self.constraints[i]
        if len(table.label_values.get(c.topology_key, ())) <= _SMALL_VALUES:  # the same floats, in Python
            domain_counts = self.topology_value_to_pod_counts[i]
            assert domain_counts is not None  # set for every constraint not on the hostname
            weight, base = self.topology_normalizing_weight[i], float(c.max_skew - 1)
            listed = [go_round(0.0 + (float(count) * weight + base))
                      for count in domain_counts.lookup_list(table, c.topology_key)]
            listed[-1] = 0
            rounded = np.array(listed, dtype=np.int64)
        else:
            rounded = go_round_array(0.0 + self.term_by_code(i, table))
        self._terms[("rounded", i)] = (table, rounded)
        return rounded

    def hostname_counts(self, i: int, table: NodeTable, namespace: str) -> np.ndarray:
        """(C,) int64 per-row match counts of hostname constraint ``i``'s selector."""
        counts = self._row_counts.get(i)
        if counts is None or self._table is not table:
            counts = table_match_counts(table, self.constraints[i].selector, namespace)
            if self._table is None or self._table is table:
                self._table = table
                self._row_counts[i] = counts
        return counts

    def clone(self) -> "PreScoreState":
        return self


# ------------------------------------------------------------------------------------------------
# PreScore: one node at a time (upstream's algorithm) and over the table
# ------------------------------------------------------------------------------------------------
def pre_score_state_per_node(pod: Pod, filtered: Sequence[fwk.NodeInfo], all_nodes: Sequence[fwk.NodeInfo],
                             constraints: Sequence[SpreadConstraint], require_all_topologies: bool,
                             enable_node_inclusion_policy: bool) -> PreScoreState:
    """Upstream ``initPreScoreState`` and PreScore's count over all nodes, walking NodeInfo pods."""
    ignored: set[str] = set()
    counts: list[dict[str, int] | None] = [None if c.is_hostname else {} for c in constraints]
    n_filtered = 0
    for node_info in filtered:
        n_filtered += 1
        node = node_info.node()
        labels = node.labels
        if require_all_topologies and not node_labels_match_constraints(labels, constraints):
            ignored.add(node.name)
            continue
        for i, c in enumerate(constraints):
            domain_counts = counts[i]
            if domain_counts is not None:
                domain_counts.setdefault(labels.get(c.topology_key, ""), 0)
    # (counts[i] is a dict for every constraint that is not on the hostname)
    weights = [topology_normalizing_weight(n_filtered - len(ignored) if c.is_hostname else len(counts[i] or ()))
               for i, c in enumerate(constraints)]
    for node_info in all_nodes:
        node = node_info.node()
        if not enable_node_inclusion_policy and not required_node_affinity_matches(pod, node):
            continue
        labels = node.labels
        if require_all_topologies and not node_labels_match_constraints(labels, constraints):
            continue
        for i, c in enumerate(constraints):
            if enable_node_inclusion_policy and not match_node_inclusion_policies(c, pod, node):
                continue
            domain_counts = counts[i]
            value = labels.get(c.topology_key, "")
            if domain_counts is None or value not in domain_counts:
                continue
            domain_counts[value] += count_pods_match_selector(node_info.pods, c.selector, pod.namespace)
    return PreScoreState(constraints, [None if m is None else DomainCounts(m) for m in counts], weights, ignored)


def pre_score_state_batch(pod: Pod, filtered: fwk.NodeBatch, all_rows: np.ndarray,
                          constraints: Sequence[SpreadConstraint],
                          require_all_topologies: bool, enable_node_inclusion_policy: bool) -> PreScoreState:
    """:func:`pre_score_state_per_node` over the NodeBatch ``filtered`` and the table rows ``all_rows``
    (all nodes of the snapshot, same table), with per-row counts from the table.

    A node without a constraint's key belongs to the ``""`` domain (only possible without
    ``requireAllTopologies``): its label code -1 is mapped to the code of ``""`` when the table has
    that value, else to a virtual code V (one past the dictionary). The counts of the domains are
    the count subscription's sums over the included rows (``CountSubscription.coded_counts``, kept
    up to date across cycles), or per-row sums while some pod terminates.
    """
    table, rows = filtered.table, filtered.rows
    terminating = table.total_terminating_pods > 0  # (the table's running sum of the column: O(1))
    flags = (require_all_topologies, enable_node_inclusion_policy)
    if not terminating:
        kept = _KEPT.get(id(constraints))
        if kept is not None and kept.holds(pod, table, all_rows, constraints, flags):
            return kept.state(table, rows)
    keys_by_row, domains = _node_parts(pod, table, all_rows, constraints, require_all_topologies,
                                       enable_node_inclusion_policy)
    if not terminating and keys_by_row is None:
        _KeptSpec.keep(pod, table, all_rows, constraints, flags, domains)
    if keys_by_row is not None:
        ignored = ~keys_by_row[rows]  # (n,) bool
        n_ignored = int(np.count_nonzero(ignored))
    else:
        ignored, n_ignored = None, 0
    if n_ignored:
        kept_rows, ignored_rows = rows[~ignored], rows[ignored]
    else:
        kept_rows, ignored_rows = rows, _NO_ROWS
    selector_counts = SelectorCounts(table, pod.namespace)
    counts: list[DomainCounts | None] = []
    weights: list[float] = []
    row_counts: dict[int, np.ndarray] = {}
    coded: dict[int, tuple[np.ndarray, np.ndarray]] = {}
    for i, c in enumerate(constraints):
        counts.append(None)
        # every included row's pods (by row, or by domain); only the registered domains are read
        sub = None if terminating else selector_counts.subscription(c.selector)
        if c.is_hostname:
            weights.append(topology_normalizing_weight(len(rows) - n_ignored))
            # (the subscription's rows are table_match_counts' answer while no pod terminates)
            row_counts[i] = sub.rows if sub is not None else selector_counts(c.selector)
            continue
        n_values, absent_code, counted_rows, counted_codes, codes_by_row, domain_by_row, held = domains[i]
        # the domains the kept rows register, by domain code (V: the virtual ""), in one pass
        registered, n_registered = _ipa.domains_present(domain_by_row, kept_rows, n_values + 1, held)
        weights.append(topology_normalizing_weight(n_registered))
        if sub is not None:
            sums = sub.coded_counts(table, codes_by_row, n_values + 1)
        elif not terminating:  # an empty or Nothing selector counts no pod
            sums = np.zeros(n_values + 1, dtype=np.int64)
        else:
            pods = selector_counts(c.selector)[counted_rows]
            sums = np.rint(np.bincount(counted_codes, weights=pods, minlength=n_values + 1)).astype(np.int64)
        # (a copy: the subscription's sums move with the pods the cycle assumes after PreScore)
        coded[i] = (sums.copy(), registered)
    return PreScoreState(constraints, counts, weights, table=table, ignored_rows=ignored_rows,
                         row_counts=row_counts, coded=coded)


_NO_ROWS = np.zeros(0, dtype=np.int64)
_NO_ROWS.flags.writeable = False


class _KeptSpec:
    """What :func:`pre_score_state_batch` reads for one pod spec while the node set stays, kept
    across its cycles: per constraint its count subscription's key and predicate (those
    :meth:`SelectorCounts.subscription` makes) and :func:`_node_parts`' domains, so a cycle of a
    spec seen before computes only what changes from pod to pod (the domains its filtered nodes
    register, the counts now, the weights) and Score's parts with them. Kept per constraints list
    (the plugin keeps one per spec) and checked like ``SpecNodeParts.last``: the same list, table,
    node version, node rows, flags, namespace and node_selector / affinity / tolerations objects.
    Only for specs whose every node has every key (no node ignored) and whose every selector counts
    pods (a subscription); while some pod terminates the full path runs."""

    __slots__ = ("constraints", "table", "node_version", "all_rows", "flags", "namespace", "refs", "items",
                 "state_constraints")

    def __init__(self, pod: Pod, table: NodeTable, all_rows: np.ndarray, constraints: Sequence[SpreadConstraint],
                 flags: tuple, items: list[tuple]):
        self.constraints, self.table, self.node_version, self.all_rows = constraints, table, table.node_version, all_rows
        self.flags, self.namespace, self.refs = flags, pod.namespace, (pod.node_selector, pod.affinity, pod.tolerations)
        #: per constraint (hostname?, subscription key, predicate, topology key, maxSkew - 1, the
        #: domain codes' count, domain code by row of the counted rows, of every row, how many
        #: domain codes the nodes hold)
        self.items = items
        #: the states' constraints list (theirs to read, shared: nothing mutates a state)
        self.state_constraints = list(constraints)

    def holds(self, pod: Pod, table: NodeTable, all_rows: np.ndarray, constraints: Sequence[SpreadConstraint],
              flags: tuple) -> bool:
        refs = self.refs
        return (self.constraints is constraints and self.table is table and self.node_version == table.node_version
                and self.all_rows is all_rows and self.flags == flags and self.namespace == pod.namespace
                and refs[0] is pod.node_selector and refs[1] is pod.affinity and refs[2] is pod.tolerations)

    @classmethod
    def keep(cls, pod: Pod, table: NodeTable, all_rows: np.ndarray, constraints: Sequence[SpreadConstraint],
             flags: tuple, domains: list) -> None:
        namespace = pod.namespace
        items = []
        for c, domain in zip(constraints, domains):
            selector = c.selector
            if selector.is_empty() or selector.selects_nothing():
                return
            matches = (lambda sel: lambda ns, labels: ns == namespace and sel.matches(labels))(selector)
            base = float(c.max_skew - 1)
            if domain is None:
                items.append((True, ("pts", namespace, selector), matches, c.topology_key, base, 0, None, None, 0))
            else:
                n_values, _absent, _rows, _codes, codes_by_row, domain_by_row, held = domain
                items.append((False, ("pts", namespace, selector), matches, c.topology_key, base, n_values + 1,
                              codes_by_row, domain_by_row, held))
        if len(_KEPT) >= 64:
            _KEPT.clear()
        _KEPT[id(constraints)] = cls(pod, table, all_rows, constraints, flags, items)

    def state(self, table: NodeTable, rows: np.ndarray) -> PreScoreState:
        """The PreScoreState of a cycle whose filtered nodes are the table rows ``rows`` (none
        ignored), as the full path builds it, with Score's parts."""
        weights: list[float] = []
        row_counts: dict[int, np.ndarray] = {}
        coded: dict[int, tuple[np.ndarray, np.ndarray]] = {}
        parts: list | None = []
        label_codes = table.label_codes
        for i, (hostname, key, matches, topology_key, base, n_codes, codes_by_row, domain_by_row,
                held) in enumerate(self.items):
            sub: Any = table.matching_counts(key, matches)
            column = label_codes.get(topology_key)
            if hostname:
                weight = topology_normalizing_weight(len(rows))
                counts = row_counts[i] = sub.rows
                present = None
            else:
                # the domains the filtered rows register, by domain code (the last: the virtual "")
                present, n_registered = _ipa.domains_present(domain_by_row, rows, n_codes, held)
                weight = topology_normalizing_weight(n_registered)
                # (a copy: the subscription's sums move with the pods the cycle assumes after PreScore)
                counts = sub.coded_counts(table, codes_by_row, n_codes).copy()
                coded[i] = (counts, present)
            weights.append(weight)
            if column is not None and parts is not None:  # (a key no node has adds nothing)
                if column.dtype != np.int32 or not column.flags.c_contiguous:
                    parts = None
                else:
                    parts.append((column, counts, present, weight, base))
        # (PreScoreState.__init__'s fields, without its copies: the lists are this cycle's)
        s = PreScoreState.__new__(PreScoreState)
        s.constraints, s._counts, s.topology_normalizing_weight = self.state_constraints, [None] * len(weights), weights
        s._ignored_nodes, s._table, s._ignored_rows, s._row_counts = None, table, _NO_ROWS, row_counts
        s._terms, s._coded, s.score_parts = {}, coded, parts
        return s


#: constraints list id -> its _KeptSpec (the list is held: its id stays its own while the entry lives)
_KEPT: dict[int, _KeptSpec] = {}

_DOMAINS = DomainCache()

#: the node-dependent part of pre_score_state_batch per pod spec and node set (as filtering's):
#: (rows-with-every-key by table row or None, _score_domains' answer per constraint)
_NODE_PARTS = SpecNodeParts()


def _node_parts(pod: Pod, table: NodeTable, all_rows: np.ndarray, constraints: Sequence[SpreadConstraint],
                require_all_topologies: bool, enable_node_inclusion_policy: bool) -> tuple[np.ndarray | None, list]:
    """``(keys_by_row, domains)``: with requireAllTopologies and a node of ``all_rows`` missing a
    key, (C,) bool by table row "has every constraint's key" (else None); per constraint (None for hostname ones) :func:`_score_domains`
    over all the nodes included by the pod's inclusion policies (and with every key)."""
    refs = SpecNodeParts.refs(pod, all_rows)
    flags = (require_all_topologies, enable_node_inclusion_policy)
    hit = _NODE_PARTS.last(table, constraints, refs, *flags)
    if hit is not None:
        return hit
    key, refs = SpecNodeParts.key(pod, table, all_rows, constraints, *flags)
    hit = _NODE_PARTS.get(key, refs)
    if hit is not None:
        return _NODE_PARTS.remember(table, constraints, refs, flags, hit)
    keys_by_row = None
    all_included = np.ones(len(all_rows), dtype=bool)
    masks = InclusionMasks(pod, table, all_rows)
    if not enable_node_inclusion_policy:
        all_included &= masks.affinity
    if require_all_topologies:
        has_keys = has_all_keys_mask(table, all_rows, constraints)
        all_included &= has_keys
        if not has_keys.all():
            # by table row: the filtered nodes of each cycle read it with one gather (when every
            # node has every key, None: no filtered node, a subset of all_rows, is ignored)
            keys_by_row = np.zeros(table.capacity, dtype=bool)
            keys_by_row[all_rows] = has_keys
    domains: list = []
    for c in constraints:
        if c.is_hostname:
            domains.append(None)
            continue
        mask = masks.for_constraint(c) if enable_node_inclusion_policy else None
        node_mask = all_included if mask is None else all_included & mask
        domains.append(_score_domains(table, all_rows, node_mask, c.topology_key))
    return _NODE_PARTS.remember(table, constraints, refs, flags, _NODE_PARTS.put(key, refs, (keys_by_row, domains)))


def _score_domains(table: NodeTable, all_rows: np.ndarray, node_mask: np.ndarray, key: str) -> tuple:
    """The node-dependent part of one non-hostname constraint's PreScore counts: ``(V, the code of
    the "" domain (V when virtual), the included rows (m,), their domain codes (m,) int64, the
    domain code by row (C,) int64 of the included rows (-1 elsewhere), the domain code by row (C,)
    int64 of every row, how many distinct domain codes the rows of all_rows hold)``, cached per
    node-set version, node list and inclusion mask (they change only when nodes do). The last is
    where ``_ipa.domains_present`` over filtered nodes (a subset of all_rows) can stop: no more
    codes are there to find (the virtual V, held by no node when every node has the key, kept the
    pass going to the last filtered row)."""
    ck = (table.uid, table.node_version, key, len(all_rows))
    value = _DOMAINS.get(ck, (node_mask, all_rows))
    if value is not None:
        return value
    n_values = len(table.label_values.get(key, ()))
    empty_code = table.label_code(key, "")
    absent_code = empty_code if empty_code >= 0 else n_values
    column = table.label_codes.get(key)
    domain_by_row = np.full(table.capacity, absent_code, dtype=np.int64)
    if column is not None:
        domain_by_row[:] = np.where(column >= 0, column, absent_code)
    positions = np.flatnonzero(node_mask)
    counted_rows = all_rows[positions]
    codes = domain_by_row[counted_rows]
    codes_by_row = np.full(table.capacity, -1, dtype=np.int64)
    codes_by_row[counted_rows] = codes
    held = int(np.count_nonzero(np.bincount(domain_by_row[all_rows], minlength=n_values + 1)))
    value = (n_values, absent_code, counted_rows, codes, codes_by_row, domain_by_row, held)
    _DOMAINS.put(ck, (node_mask, all_rows), value)
    return value


# ------------------------------------------------------------------------------------------------
# Score
# ------------------------------------------------------------------------------------------------
def score_node(state: PreScoreState, pod: Pod, node_info: fwk.NodeInfo) -> int:
    """Upstream ``Score`` for one node."""
    node = node_info.node()
    if node.name in state.ignored_nodes:
        return 0
    labels = node.labels
    score = 0.0
    for i, c in enumerate(state.constraints):
        value = labels.get(c.topology_key)
        if value is None:
            continue
        if c.is_hostname:
            count = count_pods_match_selector(node_info.pods, c.selector, pod.namespace)
        else:
            domain_counts = state.topology_value_to_pod_counts[i]
            assert domain_counts is not None  # set for every constraint not on the hostname
            count = domain_counts.get(value, 0)
        score += float(count) * state.topology_normalizing_weight[i] + float(c.max_skew - 1)
    return go_round(score)


def score_vectorized(state: PreScoreState, pod: Pod, nodes: fwk.NodeBatch) -> np.ndarray:
    """(n,) int64: :func:`score_node` for every node of the NodeBatch ``nodes``.

    The float operations are upstream's, element-wise in the same order, so the sums are bit-equal.
    A constraint not on the hostname adds one term per label code of its key (computed once per
    code, 0.0 for a node without the key: adding it leaves the non-negative sum as it is); with
    only such a constraint the rounded score is one per code too.
    """
    table, rows = nodes.table, nodes.rows
    constraints = state.constraints
    parts = state.score_parts if state._table is table else None
    if parts is not None or (parts := _score_parts(state, pod, table)) is not None:
        # one compiled pass over the rows, the constraints' terms added in their order
        out = np.empty(len(rows), dtype=np.int64)
        _ipa.spread_scores(parts, rows if rows.dtype == np.int64 and rows.flags.c_contiguous
                           else np.ascontiguousarray(rows, dtype=np.int64), out)
    elif len(constraints) == 1 and not constraints[0].is_hostname:
        # one compiled pass: each row's rounded score at its label code (a row without the key
        # adds 0, the rounded score of code -1)
        out = np.zeros(len(rows), dtype=np.int64)
        column = table.label_codes.get(constraints[0].topology_key)
        if column is not None:
            _ipa.add_scores_at(state.rounded_by_code(0, table), column,
                               np.ascontiguousarray(rows, dtype=np.int64), out)
    else:
        scores = np.zeros(len(rows), dtype=np.float64)
        for i, c in enumerate(constraints):
            codes = label_column(table, c.topology_key, rows)  # (n,) int32, -1 = label absent
            if c.is_hostname:
                count = state.hostname_counts(i, table, pod.namespace)[rows]
                term = count.astype(np.float64) * state.topology_normalizing_weight[i] + float(c.max_skew - 1)
                scores = np.where(codes >= 0, scores + term, scores)
            else:
                scores = scores + state.term_by_code(i, table)[codes]
        out = go_round_array(scores)
    ignored = state.ignored_mask(nodes)
    if ignored is not None:
        out[ignored] = 0
    return out


def _score_parts(state: PreScoreState, pod: Pod, table: NodeTable) -> list | None:
    """``_ipa.spread_scores``' parts for the state's constraints, in their order, each with its
    weight and ``maxSkew - 1``: the domain counts by label code with the registered domains
    (:meth:`PreScoreState.score_part`) for a constraint not on the hostname, the per-row match
    counts for a hostname one; a key no node has adds nothing and has no part. None when the
    state has no such counts (built one node at a time) or a column is not what the kernel
    reads."""
    parts: list[tuple] = []
    weights = state.topology_normalizing_weight
    for i, c in enumerate(state.constraints):
        column = table.label_codes.get(c.topology_key)
        if column is None:
            continue
        if column.dtype != np.int32 or not column.flags.c_contiguous:
            return None
        if c.is_hostname:
            counts = state.hostname_counts(i, table, pod.namespace)
            if counts.dtype != np.int64 or not counts.flags.c_contiguous:
                return None
            parts.append((column, counts, None, weights[i], float(c.max_skew - 1)))
            continue
        coded = state.score_part(i, table)
        if coded is None:
            return None
        parts.append((column, coded[0], coded[1], weights[i], float(c.max_skew - 1)))
    return parts


# ------------------------------------------------------------------------------------------------
# NormalizeScore
# ------------------------------------------------------------------------------------------------
def normalize_scores(state: PreScoreState, scores: list) -> None:
    """Upstream ``NormalizeScore`` on a NodeScore list, in place."""
    ignored = state.ignored_nodes
    min_score, max_score = _MAX_INT64, 0
    for node_score in scores:
        if node_score.name in ignored:
            continue
        min_score = min(min_score, node_score.score)
        max_score = max(max_score, node_score.score)
    for node_score in scores:
        if node_score.name in ignored:
            node_score.score = 0
        elif max_score == 0:
            node_score.score = MAX_NODE_SCORE
        else:
            node_score.score = MAX_NODE_SCORE * (max_score + min_score - node_score.score) // max_score


def normalize_scores_batch(state: PreScoreState, scores: np.ndarray, nodes: fwk.NodeBatch) -> None:
    """:func:`normalize_scores` on an int64 array of the NodeBatch ``nodes``' scores, in place."""
    ignored = state.ignored_mask(nodes)
    if ignored is None and scores.dtype == np.int64 and scores.flags.c_contiguous and scores.flags.writeable:
        _table.normalize_reverse(scores, MAX_NODE_SCORE)
        return
    valid = scores if ignored is None else scores[~ignored]
    if len(valid) == 0:
        scores[:] = 0
        return
    min_score, max_score = int(valid.min()), max(0, int(valid.max()))
    if max_score == 0:
        scores[:] = MAX_NODE_SCORE
    else:
        scores[:] = MAX_NODE_SCORE * (max_score + min_score - scores) // max_score
    if ignored is not None:
        scores[ignored] = 0
