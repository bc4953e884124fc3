"""Shared pieces of PodTopologySpread (upstream ``podtopologyspread/common.go``, ``helper/spread.go``).

* :class:`SpreadConstraint` — a pod's (or a default) constraint with its selector parsed and
  matchLabelKeys merged, minDomains and the node inclusion policies defaulted;
* :func:`filter_constraints` / :func:`default_selector` — upstream ``filterTopologySpreadConstraints``
  and ``helper.DefaultSelector`` (see :class:`WorkloadObjects` for what the latter can see);
* node inclusion (``matchNodeInclusionPolicies``) per node and over a NodeBatch;
* pod counting (``countPodsMatchSelector``) over a NodeInfo's pods and over the whole table;
* :class:`DomainCounts` — a topology-value -> pod-count map that is either a dict (built one node at
  a time) or code-indexed arrays over the table's label dictionary (built by the batch path);
* :func:`go_log` and :func:`go_round` — Go's ``math.Log`` (amd64) and ``math.Round``.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Iterable, Mapping, Sequence

import numpy as np

from ...api import (LABEL_HOSTNAME, TAINT_EFFECT_NO_EXECUTE, TAINT_EFFECT_NO_SCHEDULE, LabelSelector,
                    find_untolerated_taint, required_node_affinity_matches)
from ...api.labels import IN, NOTHING
from ..helper.node_selector import required_node_affinity_mask

if TYPE_CHECKING:  # pragma: no cover
    from ...api import Node, Pod, TopologySpreadConstraint
    from ...framework.types import PodInfo
    from ...framework.protocols import NodeTable

DO_NOT_SCHEDULE = "DoNotSchedule"
SCHEDULE_ANYWAY = "ScheduleAnyway"
HONOR = "Honor"
IGNORE = "Ignore"

#: The taint effects the node taints policy looks at (upstream ``DoNotScheduleTaintsFilterFunc``).
DO_NOT_SCHEDULE_EFFECTS = frozenset({TAINT_EFFECT_NO_SCHEDULE, TAINT_EFFECT_NO_EXECUTE})

MAX_INT32 = 2**31 - 1


# ------------------------------------------------------------------------------------------------
# constraints
# ------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class SpreadConstraint:
    """Upstream's internal ``topologySpreadConstraint``: the selector is parsed (matchLabelKeys
    merged in), minDomains defaults to 1, nodeAffinityPolicy to Honor, nodeTaintsPolicy to Ignore."""

    max_skew: int
    topology_key: str
    selector: LabelSelector
    min_domains: int = 1
    node_affinity_policy: str = HONOR
    node_taints_policy: str = IGNORE

    @property
    def is_hostname(self) -> bool:
        return self.topology_key == LABEL_HOSTNAME


def merge_label_set_with_selector(match_labels: Mapping[str, str], selector: LabelSelector) -> LabelSelector:
    """Upstream ``mergeLabelSetWithSelector``: ``SelectorFromSet(match_labels)`` plus the selector's
    requirements; a Nothing selector (nil labelSelector) stays Nothing."""
    if selector.selects_nothing():
        return selector
    merged: list[tuple[str, str, Iterable[str]]] = [(key, IN, (value,)) for key, value in match_labels.items()]
    merged.extend(selector.requirements())
    return LabelSelector(merged)


def filter_constraints(constraints: Iterable[TopologySpreadConstraint], pod_labels: Mapping[str, str], action: str, *,
                       enable_match_label_keys: bool = True,
                       enable_node_inclusion_policy: bool = True) -> list[SpreadConstraint]:
    """Upstream ``filterTopologySpreadConstraints``: the constraints whose whenUnsatisfiable is
    ``action``, as :class:`SpreadConstraint`.

    ``constraints`` are ``api.TopologySpreadConstraint`` objects: an unset labelSelector (None)
    selects nothing; matchLabelKeys whose key the pod has are ANDed into the selector (the v1.34
    scheduler still does this itself; see the package docstring).
    """
    result = []
    for c in constraints:
        if c.when_unsatisfiable != action:
            continue
        selector = c.label_selector if c.label_selector is not None else NOTHING
        if enable_match_label_keys and c.match_label_keys:
            match_labels = {key: pod_labels[key] for key in c.match_label_keys if key in pod_labels}
            if match_labels:
                selector = merge_label_set_with_selector(match_labels, selector)
        affinity_policy, taints_policy = HONOR, IGNORE
        if enable_node_inclusion_policy:
            if c.node_affinity_policy is not None:
                affinity_policy = c.node_affinity_policy
            if c.node_taints_policy is not None:
                taints_policy = c.node_taints_policy
        result.append(SpreadConstraint(
            max_skew=c.max_skew, topology_key=c.topology_key, selector=selector,
            min_domains=1 if c.min_domains is None else c.min_domains,
            node_affinity_policy=affinity_policy, node_taints_policy=taints_policy))
    return result


# ------------------------------------------------------------------------------------------------
# DefaultSelector
# ------------------------------------------------------------------------------------------------
@dataclass
class WorkloadObjects:
    """The Services, ReplicationControllers, ReplicaSets and StatefulSets that upstream's
    ``helper.DefaultSelector`` reads through informers.

    fastsched has no store for these kinds yet, so the plugin starts with an empty set: exactly
    upstream's behaviour in a cluster that has none of them (the default selector is empty and the
    default constraints do not apply). Callers that know the objects can fill this in:

    * ``services``: namespace -> the ``spec.selector`` of each Service (None: a Service without a
      selector, which selects nothing);
    * ``replication_controllers``: (namespace, name) -> ``spec.selector`` map (None allowed);
    * ``replica_sets`` / ``stateful_sets``: (namespace, name) -> parsed ``spec.selector`` (None:
      unset, which adds no requirement).

    The entries are values: a change replaces an entry (a namespace's list of Service selectors,
    a controller's selector) with a new object, never edits one in place, as the scheduler's event
    handlers do. The plugin keeps each pod spec's default constraints with the entries they were
    derived from and checks those by identity.
    """

    services: Mapping[str, Sequence[Mapping[str, str] | None]] = field(default_factory=dict)
    replication_controllers: Mapping[tuple[str, str], Mapping[str, str] | None] = field(default_factory=dict)
    replica_sets: Mapping[tuple[str, str], LabelSelector | None] = field(default_factory=dict)
    stateful_sets: Mapping[tuple[str, str], LabelSelector | None] = field(default_factory=dict)

    def is_empty(self) -> bool:
        """No object at all: every pod's default selector is empty."""
        return not (self.services or self.replication_controllers or self.replica_sets or self.stateful_sets)


_RC_KIND = ("", "v1", "ReplicationController")
_RS_KIND = ("apps", "v1", "ReplicaSet")
_SS_KIND = ("apps", "v1", "StatefulSet")


def _parse_group_version(api_version: str) -> tuple[str, str] | None:
    """Upstream ``schema.ParseGroupVersion``; None for a string with more than one '/'."""
    if not api_version or api_version == "/":
        return "", ""
    slashes = api_version.count("/")
    if slashes == 0:
        return "", api_version
    if slashes == 1:
        group, version = api_version.split("/")
        return group, version
    return None


def _with_requirements(selector: LabelSelector, other: LabelSelector | None) -> LabelSelector:
    """``selector.Add(other.Requirements()...)``; a nil (Nothing) selector adds nothing."""
    if other is None or other.selects_nothing() or not other.requirements():
        return selector
    return LabelSelector(list(selector.requirements()) + list(other.requirements()))


#: the WorkloadObjects field of a controller's kind (the kinds DefaultSelector reads)
_OWNER_FIELDS = {_RC_KIND: "replication_controllers", _RS_KIND: "replica_sets", _SS_KIND: "stateful_sets"}


def controller_lookup(pod: Pod) -> tuple[str, tuple[str, str]] | None:
    """``(WorkloadObjects field, (namespace, name))`` of the object DefaultSelector reads for the
    pod's controller: its first controller owner reference, when that is a ReplicationController,
    ReplicaSet or StatefulSet; None otherwise (no controller, another kind, a malformed apiVersion)."""
    owner = next((ref for ref in pod.owner_references if ref.controller), None)
    if owner is None:
        return None
    group_version = _parse_group_version(owner.api_version)
    if group_version is None:
        return None
    field_name = _OWNER_FIELDS.get((*group_version, owner.kind))
    return None if field_name is None else (field_name, (pod.namespace, owner.name))


def default_selector(pod: Pod, objects: WorkloadObjects) -> LabelSelector:
    """Upstream ``helper.DefaultSelector``: the selectors of the Services selecting the pod, merged,
    plus those of the ReplicationController / ReplicaSet / StatefulSet controlling it.

    It reads ``objects.services[pod.namespace]`` and at most one controller entry
    (:func:`controller_lookup`): what callers keeping the answer per pod spec check."""
    label_set: dict[str, str] = {}
    for service_selector in objects.services.get(pod.namespace, ()):
        if service_selector is None:  # services with nil selectors match nothing, not everything
            continue
        if all(pod.labels.get(k) == v for k, v in service_selector.items()):
            label_set.update(service_selector)
    selector = LabelSelector.from_match_labels(label_set)
    lookup = controller_lookup(pod)
    if lookup is None:
        return selector
    field_name, key = lookup
    controllers = getattr(objects, field_name)
    if key not in controllers:
        return selector
    if field_name == "replication_controllers":
        label_set.update(controllers[key] or {})
        return LabelSelector.from_match_labels(label_set)
    return _with_requirements(selector, controllers[key])


# ------------------------------------------------------------------------------------------------
# node inclusion
# ------------------------------------------------------------------------------------------------
def node_labels_match_constraints(labels: Mapping[str, str], constraints: Sequence[SpreadConstraint]) -> bool:
    """Upstream ``nodeLabelsMatchSpreadConstraints``: the node has every constraint's key."""
    return all(c.topology_key in labels for c in constraints)


def match_node_inclusion_policies(c: SpreadConstraint, pod: Pod, node: Node) -> bool:
    """Upstream ``matchNodeInclusionPolicies`` (node affinity parse errors are ignored: an invalid
    term matches nothing)."""
    if c.node_affinity_policy == HONOR and not required_node_affinity_matches(pod, node):
        return False
    if c.node_taints_policy == HONOR and \
            find_untolerated_taint(node.taints, pod.tolerations, DO_NOT_SCHEDULE_EFFECTS) is not None:
        return False
    return True


def label_column(table: NodeTable, key: str, rows: np.ndarray) -> np.ndarray:
    """(n,) int32 label codes of ``key`` at ``rows`` (-1 where the node lacks the label)."""
    column = table.label_codes.get(key)
    if column is None:
        return np.full(len(rows), -1, dtype=np.int32)
    return column[rows]


def has_all_keys_mask(table: NodeTable, rows: np.ndarray, constraints: Sequence[SpreadConstraint]) -> np.ndarray:
    """(n,) bool: :func:`node_labels_match_constraints` for each row."""
    mask = np.ones(len(rows), dtype=bool)
    for key in {c.topology_key for c in constraints}:
        mask &= label_column(table, key, rows) >= 0
    return mask


class InclusionMasks:
    """The node inclusion policy masks of one pod over a set of rows, computed on first use.

    ``affinity`` (n,) bool is the pod's required node affinity; ``taints`` (n,) bool is "no
    untolerated NoSchedule/NoExecute taint", evaluated once per distinct taint set.
    """

    def __init__(self, pod: Pod, table: NodeTable, rows: np.ndarray):
        self._pod, self._table, self._rows = pod, table, rows
        self._affinity: np.ndarray | None = None
        self._taints: np.ndarray | None = None

    @property
    def affinity(self) -> np.ndarray:
        if self._affinity is None:
            self._affinity = required_node_affinity_mask(self._pod, _Rows(self._table, self._rows))
        return self._affinity

    @property
    def taints(self) -> np.ndarray:
        if self._taints is None:
            tolerated = tolerated_taint_sets(self._table, self._pod.tolerations)
            self._taints = tolerated[self._table.taint_set[self._rows]]
        return self._taints

    def for_constraint(self, c: SpreadConstraint) -> np.ndarray | None:
        """(n,) bool of the rows passing ``c``'s inclusion policies, or None when all pass."""
        mask = None
        if c.node_affinity_policy == HONOR:
            mask = self.affinity
        if c.node_taints_policy == HONOR:
            mask = self.taints if mask is None else mask & self.taints
        return mask


#: (table uid, id of a pod's tolerations) -> (the tolerations, table.taint_sets, its length, (T,) bool):
#: the answer for every taint set of a table, per pod spec (pods of one template share their
#: tolerations object). taint_sets only grows, so a longer list means new sets to evaluate.
_TOLERATED_SETS: dict[tuple, tuple] = {}
_TOLERATED_SETS_SIZE = 256


def tolerated_taint_sets(table: NodeTable, tolerations: Sequence) -> np.ndarray:
    """(T,) bool over ``table.taint_sets``: whether ``tolerations`` tolerate every NoSchedule and
    NoExecute taint of the set (upstream's inclusion check, ``find_untolerated_taint``)."""
    key = (table.uid, id(tolerations))
    sets = table.taint_sets
    hit = _TOLERATED_SETS.get(key)
    if hit is not None and (hit[0] is not tolerations or hit[1] is not sets):
        hit = None
    if hit is not None and hit[2] == len(sets):
        return hit[3]
    start = hit[2] if hit is not None else 0
    fresh = np.array([find_untolerated_taint(sets[k], tolerations, DO_NOT_SCHEDULE_EFFECTS) is None
                      for k in range(start, len(sets))], dtype=bool)
    tolerated = np.concatenate([hit[3], fresh]) if hit is not None else fresh
    if len(_TOLERATED_SETS) >= _TOLERATED_SETS_SIZE:
        _TOLERATED_SETS.clear()
    _TOLERATED_SETS[key] = (tolerations, sets, len(sets), tolerated)
    return tolerated


class _Rows:
    """The (table, rows) pair the node selector helpers take."""

    __slots__ = ("table", "rows")

    def __init__(self, table: NodeTable, rows: np.ndarray):
        self.table, self.rows = table, rows


# ------------------------------------------------------------------------------------------------
# counting pods
# ------------------------------------------------------------------------------------------------
def count_pods_match_selector(pod_infos: Iterable[PodInfo], selector: LabelSelector, namespace: str) -> int:
    """Upstream ``countPodsMatchSelector``: pods in ``namespace``, not terminating, matching.

    As in v1.34, a selector without requirements (``labelSelector: {}``) counts 0 pods.
    """
    if selector.is_empty():
        return 0
    count = 0
    for pod_info in pod_infos:
        pod = pod_info.pod
        if pod.deletion_timestamp is not None or pod.namespace != namespace:
            continue
        if selector.matches(pod.labels):
            count += 1
    return count


def table_match_counts(table: NodeTable, selector: LabelSelector, namespace: str) -> np.ndarray:
    """(C,) int64: :func:`count_pods_match_selector` for every table row at once (read only: it may
    be the table's count subscription array, kept up to date as pods come and go).

    The selector is evaluated once per distinct pod label signature; terminating pods, which the
    signature index counts too, are then subtracted by walking the few rows that have any.
    """
    if selector.is_empty() or selector.selects_nothing():
        return np.zeros(table.capacity, dtype=np.int64)
    counts = table.matching_counts(("pts", namespace, selector),
                                   lambda ns, labels: ns == namespace and selector.matches(labels)).rows
    if not table.total_terminating_pods:  # (the table's running sum of the column: O(1))
        return counts  # the table's array, kept up to date: read only
    counts = counts.copy()
    for row in np.flatnonzero(table.terminating_pods).tolist():
        for pod_info in table.pods[row]:
            pod = pod_info.pod
            if pod.deletion_timestamp is not None and pod.namespace == namespace and selector.matches(pod.labels):
                counts[row] -= 1
    return counts


class DomainCache:
    """Node-dependent per-constraint data (domain codes and order, included rows), cached per table,
    node-set version (``table.node_version``), topology key and the exact node arrays it was built
    from (rows, inclusion mask): they change only when nodes do, while counts change with every pod.
    Bounded by entries and by bytes."""

    MAX_ENTRIES = 64
    MAX_BYTES = 64 << 20

    def __init__(self) -> None:
        self._entries: dict[tuple, tuple[tuple[np.ndarray, ...], Any]] = {}
        self._bytes = 0

    def get(self, key: tuple, arrays: tuple[np.ndarray, ...]) -> Any:
        entry = self._entries.get(key)
        if entry is None:
            return None
        cached, value = entry
        if all(np.array_equal(a, b) for a, b in zip(cached, arrays)):
            return value
        return None

    def put(self, key: tuple, arrays: tuple[np.ndarray, ...], value: tuple) -> None:
        kept = tuple(a.copy() for a in arrays)
        size = sum(a.nbytes for a in kept) + sum(v.nbytes for v in value if isinstance(v, np.ndarray))
        if size > self.MAX_BYTES:
            return
        if len(self._entries) >= self.MAX_ENTRIES or self._bytes + size > self.MAX_BYTES:
            self._entries.clear()
            self._bytes = 0
        old = self._entries.pop(key, None)
        if old is not None:
            self._bytes -= sum(a.nbytes for a in old[0]) + sum(v.nbytes for v in old[1] if isinstance(v, np.ndarray))
        self._entries[key] = (kept, value)
        self._bytes += size


class SpecNodeParts:
    """Node-dependent values built for a pod spec (PreFilter's and PreScore's node parts), cached
    per ``(table uid, node version, the constraints' keys and policies, flags)`` with the rows and
    the pod's ``node_selector``, ``affinity`` and ``tolerations`` objects checked by identity: pods
    of one template share those objects (interned at admission), so the parts are built once per
    spec and node set instead of once per pod. Bounded (cleared when full); an entry holds the
    objects, so their identity stays theirs while it lives."""

    SIZE = 64

    def __init__(self) -> None:
        self._entries: dict[tuple, tuple[tuple, Any]] = {}
        #: the last hit: (constraints list, table, node version, flags, refs, value); pods of one
        #: spec share their constraints list (the plugin keeps it per spec), so a cycle like the
        #: last one finds its parts without building the key
        self._last: tuple | None = None

    def last(self, table: "NodeTable", constraints: Sequence[SpreadConstraint], refs: tuple, *flags: bool) -> Any:
        """The value of the last :meth:`get` or :meth:`put` when it was for this very constraints
        list, table, node version, flags and ``refs`` objects; else None."""
        last = self._last
        if last is None or last[0] is not constraints or last[1] is not table or last[2] != table.node_version \
                or last[3] != flags or not all(a is b for a, b in zip(last[4], refs)):
            return None
        return last[5]

    def remember(self, table: "NodeTable", constraints: Sequence[SpreadConstraint], refs: tuple, flags: tuple,
                 value: Any) -> Any:
        """Make ``value`` the one :meth:`last` answers."""
        self._last = (constraints, table, table.node_version, flags, refs, value)
        return value

    @staticmethod
    def refs(pod: "Pod", rows: np.ndarray) -> tuple:
        """The objects a pod's parts over ``rows`` are checked against by identity."""
        return (rows, pod.node_selector, pod.affinity, pod.tolerations)

    @staticmethod
    def key(pod: "Pod", table: "NodeTable", rows: np.ndarray, constraints: Sequence[SpreadConstraint],
            *flags: bool) -> tuple[tuple, tuple]:
        """``(key, refs)`` of ``pod``'s parts over ``rows``."""
        key = (table.uid, table.node_version, *flags,
               tuple((c.topology_key, c.node_affinity_policy, c.node_taints_policy) for c in constraints))
        return key, SpecNodeParts.refs(pod, rows)

    def get(self, key: tuple, refs: tuple) -> Any:
        hit = self._entries.get(key)
        if hit is not None and all(a is b for a, b in zip(hit[0], refs)):
            return hit[1]
        return None

    def put(self, key: tuple, refs: tuple, value: Any) -> Any:
        if len(self._entries) >= self.SIZE:
            self._entries.clear()
        self._entries[key] = (refs, value)
        return value


class SelectorCounts:
    """Per-row match counts of a pod's selectors, each computed once per table."""

    def __init__(self, table: NodeTable, namespace: str):
        self._table, self._namespace = table, namespace
        self._counts: dict[LabelSelector, np.ndarray] = {}

    def __call__(self, selector: LabelSelector) -> np.ndarray:
        counts = self._counts.get(selector)
        if counts is None:
            counts = self._counts[selector] = table_match_counts(self._table, selector, self._namespace)
        return counts

    def subscription(self, selector: LabelSelector) -> Any:
        """The table's count subscription of the pods of the namespace matching ``selector``
        (terminating ones included: callers check ``table.terminating_pods``), or None for an empty
        or Nothing selector, which counts no pod."""
        if selector.is_empty() or selector.selects_nothing():
            return None
        namespace = self._namespace
        return self._table.matching_counts(("pts", namespace, selector),
                                           lambda ns, labels: ns == namespace and selector.matches(labels))


# ------------------------------------------------------------------------------------------------
# topology value -> count maps
# ------------------------------------------------------------------------------------------------
class DomainCounts:
    """One constraint's ``topology value -> count`` map (upstream ``TpValueToMatchNum[i]`` or
    ``TopologyValueToPodCounts[i]``), in insertion (first appearance) order.

    Built one node at a time it is a dict; built by the batch path it is arrays over the table's
    label dictionary for ``key``: ``codes`` (D,) int64 label codes and ``counts`` (D,) int64, plus
    ``absent_count`` for the ``""`` domain of nodes *without* the label when the table has no ``""``
    value (PreScore with system-default constraints). Each form is derived from the other on demand;
    :meth:`add` switches to the dict form.
    """

    __slots__ = ("_dict", "_table", "_key", "_codes", "_counts", "_absent_count", "_by_code")

    def __init__(self, mapping: dict[str, int] | None = None):
        #: the dict form, None while only the arrays form is current
        self._dict: dict[str, int] | None = mapping if mapping is not None else {}
        #: the arrays form (None when stale): label codes of ``_key`` in ``_table`` and their counts
        self._table: NodeTable | None = None
        self._key: str | None = None
        self._codes: np.ndarray | None = None
        self._counts: np.ndarray | None = None
        self._absent_count: int | None = None
        #: with the arrays form, optionally the counts by label code (V,) int64 (0 for a code that
        #: is not a domain): what :meth:`counts_by_code` answers
        self._by_code: np.ndarray | None = None

    @classmethod
    def from_codes(cls, table: NodeTable, key: str, codes: np.ndarray, counts: np.ndarray,
                   absent_count: int | None = None, by_code: np.ndarray | None = None) -> "DomainCounts":
        """The arrays form; ``by_code`` (V,) int64, when given, is ``counts`` scattered by label code
        (0 elsewhere), owned by the map from now on."""
        dc = cls.__new__(cls)
        dc._dict = None
        dc._table, dc._key = table, key
        dc._codes = np.asarray(codes, dtype=np.int64)
        dc._counts = np.asarray(counts, dtype=np.int64)
        dc._absent_count = absent_count
        dc._by_code = by_code
        return dc

    def __len__(self) -> int:
        if self._dict is not None:
            return len(self._dict)
        assert self._codes is not None  # one of the two forms is always current
        return len(self._codes) + (self._absent_count is not None)

    def as_dict(self) -> dict[str, int]:
        """The map as a dict (materialized once from the arrays)."""
        if self._dict is None:
            # one of the two forms is always current
            assert self._table is not None and self._key is not None
            assert self._codes is not None and self._counts is not None
            values = self._table.label_values.get(self._key, [])
            mapping = dict(zip([values[c] for c in self._codes.tolist()], self._counts.tolist()))
            if self._absent_count is not None:
                mapping[""] = self._absent_count
            self._dict = mapping
        return self._dict

    def __contains__(self, value: str) -> bool:
        return value in self.as_dict()

    def get(self, value: str, default: int = 0) -> int:
        return self.as_dict().get(value, default)

    def add(self, value: str, delta: int) -> int:
        """``map[value] += delta`` (creating the entry); returns the new count."""
        mapping = self.as_dict()
        self._codes = self._counts = self._table = self._by_code = None  # the arrays are stale from now on
        count = mapping[value] = mapping.get(value, 0) + delta
        return count

    def lookup(self, table: NodeTable, key: str) -> np.ndarray:
        """(V+2,) int64 counts indexed by label code of ``key`` (V = the table's distinct values);
        the last entry, which code -1 (label absent) selects, is 0, as are unknown values."""
        n_values = len(table.label_values.get(key, ()))
        out = np.zeros(n_values + 2, dtype=np.int64)
        if self._codes is not None and self._counts is not None and self._table is table and self._key == key:
            out[self._codes] = self._counts
            return out
        return self._fill_by_code(out, table, key)

    def counts_by_code(self, table: NodeTable, key: str) -> np.ndarray:
        """Counts indexed by label code of ``key`` (a code past the end reads 0): the kept
        ``by_code`` array when current for this table and key, else :meth:`lookup`. Read only."""
        if self._by_code is not None and self._table is table and self._key == key:
            return self._by_code
        return self.lookup(table, key)

    def lookup_list(self, table: NodeTable, key: str) -> list[int]:
        """:meth:`lookup` as a list (for a key with few values: no array calls)."""
        n_values = len(table.label_values.get(key, ()))
        out = [0] * (n_values + 2)
        if self._codes is not None and self._counts is not None and self._table is table and self._key == key:
            for code, count in zip(self._codes.tolist(), self._counts.tolist()):
                out[code] = count
            return out
        return self._fill_by_code(out, table, key)

    def _fill_by_code(self, out: Any, table: NodeTable, key: str) -> Any:
        """``out`` (an array or a list) with each value's count at its label code of ``key``
        (values the table has no code for are left out)."""
        for value, count in self.as_dict().items():
            code = table.label_code(key, value)
            if code >= 0:
                out[code] = count
        return out

    def clone(self) -> "DomainCounts":
        dc = DomainCounts.__new__(DomainCounts)
        dc._dict = dict(self._dict) if self._dict is not None else None
        dc._table, dc._key, dc._codes, dc._counts = self._table, self._key, self._codes, self._counts
        dc._absent_count, dc._by_code = self._absent_count, self._by_code
        return dc

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, DomainCounts):
            return NotImplemented
        return self.as_dict() == other.as_dict()

    def __repr__(self) -> str:
        return f"DomainCounts({self.as_dict()!r})"


# ------------------------------------------------------------------------------------------------
# Go arithmetic
# ------------------------------------------------------------------------------------------------
_LN2_HI = 6.93147180369123816490e-01
_LN2_LO = 1.90821492927058770002e-10
_L1, _L2, _L3 = 6.666666666666735130e-01, 3.999999999940941908e-01, 2.857142874366239149e-01
_L4, _L5 = 2.222219843214978396e-01, 1.818357216161805012e-01
_L6, _L7 = 1.531383769920937332e-01, 1.479819860511658591e-01
_HALF_SQRT2 = 7.07106781186547524401e-01


def go_log(x: float) -> float:
    """Go's ``math.Log`` as amd64 computes it (``log_amd64.s``, the FreeBSD algorithm, no fused
    multiply-add). It differs from C's ``log`` in the last bit for some inputs (e.g. 3)."""
    if x <= 0 or math.isinf(x) or math.isnan(x):
        return math.log(x) if x > 0 else (-math.inf if x == 0 else math.nan)
    f1, ki = math.frexp(x)
    if f1 < _HALF_SQRT2:
        f1 *= 2
        ki -= 1
    f = f1 - 1
    k = float(ki)
    s = f / (2 + f)
    s2 = s * s
    s4 = s2 * s2
    t1 = s2 * (_L1 + s4 * (_L3 + s4 * (_L5 + s4 * _L7)))
    t2 = s4 * (_L2 + s4 * (_L4 + s4 * _L6))
    r = t1 + t2
    hfsq = 0.5 * f * f
    return k * _LN2_HI - ((hfsq - (s * (hfsq + r) + k * _LN2_LO)) - f)


def go_round(x: float) -> int:
    """``int64(math.Round(x))``: half away from zero."""
    t = math.trunc(x)
    if abs(x - t) >= 0.5:
        t += 1 if x > 0 else -1
    return int(t)


def go_round_array(x: np.ndarray) -> np.ndarray:
    """:func:`go_round` element-wise: (n,) float64 -> (n,) int64."""
    t = np.trunc(x)
    t = t + np.where(np.abs(x - t) >= 0.5, np.sign(x), 0.0)
    return t.astype(np.int64)
