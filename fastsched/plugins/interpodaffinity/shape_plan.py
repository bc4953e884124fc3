"""One plan per incoming pod shape, shared by PreFilter and PreScore.

A pod's shape is what InterPodAffinity reads of it: its namespace, its labels and its (anti-)affinity
terms (the objects ``terms._term_lists`` keeps per spec and ``affinity_term`` per API term, so pods
parsed one manifest each still share them). Each cycle, PreFilter and PreScore used to resolve the
same things again from the pod: the merged terms, the subscription keys of the incoming pod's terms
(``term_counts``, ``_all_terms_entries``), the class of existing pods' terms that match it
(``class_counts``) and whether it matches its own affinity. A :class:`ShapePlan` keeps them, with
the count subscriptions they resolved to, while what they depend on holds:

* the table (its uid) and the number of pod label signatures (a subscription of the incoming pod's
  terms matches a new signature only when queried: ``CountSubscription._catch_up``) and of affinity
  signatures (a class matches a new signature only when updated: ``ClassCounts.update``);
* the namespace's labels (existing pods' terms are matched with them);
* the merged terms (a term with a namespaceSelector is unrolled into the namespaces it selects now:
  merged again each cycle and compared by identity, ``NamespaceView.merged`` keeps them);
* every subscription still kept by the table (not evicted or dropped).

When one of these moves the plan's parts are resolved again through the same functions as the
unplanned path, so both read the same subscriptions; the counts themselves are always read from the
subscriptions (kept up to date as pods come and go), never kept in the plan.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Mapping

from .terms import pod_matches_all_terms

if TYPE_CHECKING:  # pragma: no cover
    from ...api import Pod
    from ...framework.protocols import NodeTable


class ShapePlan:
    """What PreFilter and PreScore resolve for one pod shape on one table (see the module)."""

    __slots__ = ("uid", "namespace", "labels", "pod_affinity", "pod_anti_affinity", "needs_merge",
                 "affinity", "anti_affinity", "preferred", "preferred_anti", "matches_own",
                 "n_pod_signatures", "n_affinity_signatures", "ns_labels", "ns_labels_copy",
                 "filter_entries", "filter_subs", "existing_entries", "existing_distinct", "score_keys",
                 "score_subs", "score_values")

    def __init__(self, uid: Any, pod: "Pod", pod_affinity: tuple | None, pod_anti_affinity: tuple | None) -> None:
        self.uid = uid
        self.namespace = pod.namespace
        self.labels = dict(pod.labels)
        #: the pod's ``_term_lists`` (required, preferred) of its PodAffinity / PodAntiAffinity, or None
        self.pod_affinity = pod_affinity
        self.pod_anti_affinity = pod_anti_affinity
        terms = [*(pod_affinity[0] if pod_affinity else ()), *(pod_anti_affinity[0] if pod_anti_affinity else ()),
                 *(t for t, _ in (pod_affinity[1] if pod_affinity else ())),
                 *(t for t, _ in (pod_anti_affinity[1] if pod_anti_affinity else ()))]
        #: some term has a namespaceSelector that merging unrolls (its merge can change each cycle)
        self.needs_merge = any(not (t.namespace_selector.is_empty() or t.namespace_selector.selects_nothing())
                               for t in terms)
        self.affinity: list = []
        self.anti_affinity: list = []
        self.preferred: list = []
        self.preferred_anti: list = []
        self.matches_own = False
        self.n_pod_signatures = -1
        self.n_affinity_signatures = -1
        self.ns_labels: Mapping[str, str] | None = None
        self.ns_labels_copy: dict | None = None
        self.reset()

    def same_shape(self, pod: "Pod", pod_affinity: tuple | None, pod_anti_affinity: tuple | None) -> bool:
        """Whether ``pod`` (with these term lists) has this plan's shape (the terms by identity)."""
        return (self.pod_affinity == pod_affinity and self.pod_anti_affinity == pod_anti_affinity
                and self.namespace == pod.namespace and self.labels == pod.labels)

    def set_merged(self, affinity: list, anti_affinity: list, preferred: list, preferred_anti: list) -> None:
        self.affinity, self.anti_affinity = affinity, anti_affinity
        self.preferred, self.preferred_anti = preferred, preferred_anti
        self.matches_own = pod_matches_all_terms(affinity, self.namespace, self.labels)

    def same_merged(self, affinity: list, anti_affinity: list, preferred: list, preferred_anti: list) -> bool:
        return (_same(affinity, self.affinity) and _same(anti_affinity, self.anti_affinity)
                and _same_weighted(preferred, self.preferred) and _same_weighted(preferred_anti, self.preferred_anti))

    def reset(self) -> None:
        """Forget the resolved subscriptions (resolved again on next use)."""
        self.filter_entries: tuple | None = None   # (affinity entries, anti-affinity entries)
        self.filter_subs: list = []
        self.existing_entries: list | None = None  # existing pods' required anti-affinity
        self.existing_distinct = False
        self.score_keys: list | None = None        # [(topology key, subscriptions, weights)]
        self.score_subs: list = []
        self.score_values: bool | None = None     # some scored key has many values (plugin.py)

    def current(self, table: "NodeTable", ns_labels: Mapping[str, str] | None) -> None:
        """Reset the resolved parts unless the table's signature counts and the namespace labels
        are those they were resolved with."""
        n_pod, n_aff = len(table.pod_signatures), len(table.affinity_signatures)
        if (n_pod != self.n_pod_signatures or n_aff != self.n_affinity_signatures
                or not (ns_labels is self.ns_labels or ns_labels == self.ns_labels_copy)):
            self.reset()
            self.n_pod_signatures, self.n_affinity_signatures = n_pod, n_aff
            self.ns_labels = ns_labels
            self.ns_labels_copy = None if ns_labels is None else dict(ns_labels)


def _same(a: list, b: list) -> bool:
    return len(a) == len(b) and all(x is y for x, y in zip(a, b))


def _same_weighted(a: list, b: list) -> bool:
    return len(a) == len(b) and all(x[0] is y[0] and x[1] == y[1] for x, y in zip(a, b))


def shape_key(uid: Any, pod: "Pod", pod_affinity: tuple | None, pod_anti_affinity: tuple | None) -> tuple:
    """The plans' dictionary key of a shape (term identities: the plan holds the terms)."""
    return (uid, pod.namespace, tuple(sorted(pod.labels.items())), _ids(pod_affinity), _ids(pod_anti_affinity))


def _ids(lists: tuple | None) -> tuple | None:
    if lists is None:
        return None
    return (tuple(map(id, lists[0])), tuple((id(t), w) for t, w in lists[1]))
