"""Processed pod (anti-)affinity terms (upstream ``fwk.AffinityTerm`` and ``framework.NewPodInfo``).

A term becomes ``AffinityTerm(namespaces, selector, namespace_selector, topology_key)``:

* ``selector``: the labelSelector; unset (None) selects nothing, ``{}`` selects everything;
* ``namespaces``: ``term.namespaces``, or the owning pod's namespace when the term lists none
  *and* has no namespaceSelector (``getNamespacesFromPodAffinityTerm``);
* ``namespace_selector``: unset selects nothing, ``{}`` selects every namespace.

``matches(namespace, labels, ns_labels)`` is upstream's ``AffinityTerm.Matches``: the pod's namespace
is listed or its namespace's labels satisfy the namespace selector, and its labels satisfy the
selector. For an existing pod's term, ``ns_labels`` are the incoming pod's namespace labels.

The incoming pod's terms additionally go through ``mergeAffinityTermNamespacesIfNotEmpty``: a
namespace selector other than ``{}`` is unrolled into the names of the namespaces it selects now, and
replaced by "nothing"; then matching never needs the other pod's namespace labels.

``matchLabelKeys`` / ``mismatchLabelKeys`` are ignored here, as by the v1.34 scheduler: its
``newAffinityTerm`` reads only labelSelector, namespaces, namespaceSelector and topologyKey. The
kube-apiserver merges those keys into the labelSelector when the pod is created
(``MatchLabelKeysInPodAffinity``, on by default since v1.31), so a pod the scheduler sees already
carries the merged selector.
"""
from __future__ import annotations

import functools
from typing import TYPE_CHECKING, Any, Mapping, Sequence

from ...api.labels import NOTHING, LabelSelector

if TYPE_CHECKING:  # pragma: no cover
    from ...framework import protocols as fwk
    from ...api import Pod, PodAffinityTerm, WeightedPodAffinityTerm

_EMPTY_LABELS: Mapping[str, str] = {}


class AffinityTerm:
    """A processed PodAffinityTerm; immutable once built (merging returns a new term)."""

    __slots__ = ("namespaces", "selector", "namespace_selector", "topology_key")

    def __init__(self, namespaces: frozenset[str], selector: LabelSelector,
                 namespace_selector: LabelSelector, topology_key: str):
        self.namespaces = namespaces
        self.selector = selector
        self.namespace_selector = namespace_selector
        self.topology_key = topology_key

    def __fork__(self, copier: object) -> "AffinityTerm":
        """Immutable once built: a fork shares the term. (Since a term without a namespaceSelector
        merges into itself, one term is reachable both from the plugin's state and from the
        closures of the table's count subscriptions, which a fork does not copy: a copy would
        leave the fork holding both the copy and the original.)"""
        return self

    def matches(self, namespace: str, labels: Mapping[str, str],
                ns_labels: Mapping[str, str] | None = None) -> bool:
        """Upstream ``Matches``; ``ns_labels`` None reads as an empty label set (Go's nil Set)."""
        if namespace in self.namespaces or self.namespace_selector.matches(
                _EMPTY_LABELS if ns_labels is None else ns_labels):
            return self.selector.matches(labels)
        return False

    def matches_pod(self, pod: "Pod", ns_labels: Mapping[str, str] | None = None) -> bool:
        return self.matches(pod.namespace, pod.labels, ns_labels)

    def __repr__(self) -> str:
        return (f"AffinityTerm(namespaces={sorted(self.namespaces)}, selector={self.selector!r}, "
                f"namespace_selector={self.namespace_selector!r}, topology_key={self.topology_key!r})")


@functools.lru_cache(maxsize=8192)
def affinity_term(term: "PodAffinityTerm", pod_namespace: str) -> AffinityTerm:
    """Upstream ``newAffinityTerm`` for a term of a pod in ``pod_namespace`` (cached: terms are
    immutable values shared by the pods of a workload)."""
    if term.namespaces or term.namespace_selector is not None:
        namespaces = frozenset(term.namespaces)
    else:
        namespaces = frozenset((pod_namespace,))
    selector = term.label_selector if term.label_selector is not None else NOTHING
    namespace_selector = term.namespace_selector if term.namespace_selector is not None else NOTHING
    return AffinityTerm(namespaces, selector, namespace_selector, term.topology_key)


def affinity_terms(terms: Sequence["PodAffinityTerm"], pod_namespace: str) -> list[AffinityTerm]:
    return [affinity_term(t, pod_namespace) for t in terms]


def weighted_terms(terms: Sequence["WeightedPodAffinityTerm"],
                   pod_namespace: str) -> list[tuple[AffinityTerm, int]]:
    return [(affinity_term(t.pod_affinity_term, pod_namespace), int(t.weight)) for t in terms]


# -- a pod's term lists (upstream PodInfo.{Required,Preferred}{,Anti}AffinityTerms) --------------
#: (id of a PodAffinity / PodAntiAffinity, namespace) -> (that object, (required, preferred)): the
#: pods of a workload share their spec's objects, and each cycle asks for their terms several times;
#: the held object keeps its id from being reused. Bounded: cleared when full.
_LISTS: dict[tuple[int, str], tuple[Any, tuple[list[AffinityTerm], list[tuple[AffinityTerm, int]]]]] = {}
_LISTS_SIZE = 4096


def _term_lists(spec: Any, namespace: str) -> tuple[list[AffinityTerm], list[tuple[AffinityTerm, int]]]:
    """The required and preferred terms of a PodAffinity or PodAntiAffinity (read-only lists)."""
    key = (id(spec), namespace)
    entry = _LISTS.get(key)
    if entry is not None and entry[0] is spec:
        return entry[1]
    lists = (affinity_terms(spec.required, namespace), weighted_terms(spec.preferred, namespace))
    if len(_LISTS) >= _LISTS_SIZE:
        _LISTS.clear()
    _LISTS[key] = (spec, lists)
    return lists


def pod_term_lists(pod: "Pod") -> tuple[tuple | None, tuple | None]:
    """The pod's (required, preferred) term lists of its PodAffinity and of its PodAntiAffinity
    (None for one it does not have): the lists the four functions below read."""
    a = pod.affinity
    if a is None:
        return None, None
    pa, pn = a.pod_affinity, a.pod_anti_affinity
    return (None if pa is None else _term_lists(pa, pod.namespace),
            None if pn is None else _term_lists(pn, pod.namespace))


def required_affinity_terms(pod: "Pod") -> list[AffinityTerm]:
    a = pod.affinity
    if a is None or a.pod_affinity is None:
        return []
    return _term_lists(a.pod_affinity, pod.namespace)[0]


def required_anti_affinity_terms(pod: "Pod") -> list[AffinityTerm]:
    a = pod.affinity
    if a is None or a.pod_anti_affinity is None:
        return []
    return _term_lists(a.pod_anti_affinity, pod.namespace)[0]


def preferred_affinity_terms(pod: "Pod") -> list[tuple[AffinityTerm, int]]:
    a = pod.affinity
    if a is None or a.pod_affinity is None:
        return []
    return _term_lists(a.pod_affinity, pod.namespace)[1]


def preferred_anti_affinity_terms(pod: "Pod") -> list[tuple[AffinityTerm, int]]:
    a = pod.affinity
    if a is None or a.pod_anti_affinity is None:
        return []
    return _term_lists(a.pod_anti_affinity, pod.namespace)[1]


def pod_matches_all_terms(terms: Sequence[AffinityTerm], namespace: str, labels: Mapping[str, str]) -> bool:
    """Upstream ``podMatchesAllAffinityTerms`` for the incoming pod's (merged) terms: False when
    there are no terms; the namespace labels are not consulted (nil)."""
    if not terms:
        return False
    for t in terms:
        if not t.matches(namespace, labels, None):
            return False
    return True


# -- namespaces ------------------------------------------------------------------------------------
class NamespaceView:
    """The namespaces the plugin sees through the framework handle.

    ``handle.get_namespace(name)`` gives a Namespace (``.labels``) or None; the full list, needed to
    unroll a namespaceSelector, comes from ``handle.namespaces`` (name -> Namespace) when present.
    """

    __slots__ = ("_handle", "_matching", "_merged")

    #: entries of each memo at most (cleared when full)
    MEMO_SIZE = 256

    def __init__(self, handle: fwk.Handle | None):
        self._handle = handle
        #: id(selector) -> (selector, the namespaces' names, their Namespace objects, the names
        #: matching): see :meth:`names_matching`
        self._matching: dict[int, tuple] = {}
        #: id(term) -> (term, the names_matching list it was merged with, the merged term)
        self._merged: dict[int, tuple] = {}

    def labels_of(self, name: str) -> Mapping[str, str] | None:
        """Upstream ``GetNamespaceLabelsSnapshot``: the namespace's labels, None when unknown."""
        get = getattr(self._handle, "get_namespace", None)
        ns = get(name) if get is not None else None
        return None if ns is None else ns.labels

    def names_matching(self, selector: LabelSelector) -> list[str]:
        """``nsLister.List(selector)``: names of the known namespaces whose labels match."""
        known = getattr(self._handle, "namespaces", None)
        if not known or selector.selects_nothing():
            return []
        # Kept per selector while the mapping holds the same names and the same (or equal)
        # Namespace objects (an update replaces the object): the incoming pod's namespace-selector
        # terms are merged every cycle, and matching the selector against every namespace was about
        # a third of PreFilter (SchedulingRequiredPodAntiAffinityWithNSSelector: 101 namespaces).
        # The list returned is shared: read-only.
        names, objects = tuple(known), tuple(known.values())
        memo = self._matching.get(id(selector))
        if memo is not None and memo[0] is selector and memo[1] == names and memo[2] == objects:
            return memo[3]  # (the tuples compare in C, each element by identity first)
        matching = [name for name, ns in known.items() if selector.matches(ns.labels)]
        if len(self._matching) >= self.MEMO_SIZE:
            self._matching.clear()
        self._matching[id(selector)] = (selector, names, objects, matching)
        return matching

    def merged(self, term: AffinityTerm) -> AffinityTerm:
        """:func:`merge_namespaces` of ``term``, the merged term kept while :meth:`names_matching`
        answers with the same list (the namespaces unchanged).

        A term without a namespaceSelector (NOTHING, what ``affinity_term`` makes of an unset one)
        merges into a term equal to itself (no namespace is added and the selector stays NOTHING),
        so the term itself is returned: merging built a new term every cycle for such terms (the
        usual case; ``names_matching`` answers a fresh empty list, so the memo never held), and
        the incoming pod's terms keep their identity across cycles, which the kept plans of
        :mod:`.filtering` check."""
        if term.namespace_selector.is_empty() or term.namespace_selector.selects_nothing():
            return term
        extra = self.names_matching(term.namespace_selector)
        memo = self._merged.get(id(term))
        if memo is not None and memo[0] is term and memo[1] is extra:
            return memo[2]
        merged = AffinityTerm(term.namespaces.union(extra), term.selector, NOTHING, term.topology_key)
        if len(self._merged) >= self.MEMO_SIZE:
            self._merged.clear()
        self._merged[id(term)] = (term, extra, merged)
        return merged


def merge_namespaces(term: AffinityTerm, namespaces: NamespaceView) -> AffinityTerm:
    """Upstream ``mergeAffinityTermNamespacesIfNotEmpty`` (for the incoming pod's terms only)."""
    if term.namespace_selector.is_empty():
        return term
    extra = namespaces.names_matching(term.namespace_selector)
    return AffinityTerm(term.namespaces.union(extra), term.selector, NOTHING, term.topology_key)
