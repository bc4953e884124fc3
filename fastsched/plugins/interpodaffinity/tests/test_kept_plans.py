"""The incoming pod's kept per-spec work across cycles: a term without a namespaceSelector keeps
its identity through the namespace merge, and the ``ipa-all`` subscription entries kept per
(table, term identities) give the counts a fresh lookup gives, as pods with new label signatures
come and the table drops its subscriptions."""
from __future__ import annotations

import numpy as np

from fastsched.api import Namespace
from fastsched.plugins.interpodaffinity import filtering
from fastsched.plugins.interpodaffinity.terms import NamespaceView, merge_namespaces, required_affinity_terms
from fastsched.snapshot import build_snapshot
from fastsched.testing import make_node, make_pod

ZONE = "topology.kubernetes.io/zone"


class _Handle:
    """What NamespaceView reads of the handle."""

    def __init__(self, namespaces: dict) -> None:
        self.namespaces = namespaces

    def get_namespace(self, name: str):
        return self.namespaces.get(name)


def _incoming(namespace_selector: dict | None = None):
    term: dict = {"topologyKey": ZONE, "labelSelector": {"matchExpressions": [
        {"key": "app", "operator": "In", "values": ["a", "b"]}]}}
    if namespace_selector is not None:
        term["namespaceSelector"] = namespace_selector
    return make_pod("incoming", namespace="default", labels={"app": "a"},
                    affinity={"podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [term]}})


def test_term_without_namespace_selector_merges_into_itself():
    view = NamespaceView(_Handle({"default": Namespace(name="default", labels={})}))
    t, = required_affinity_terms(_incoming())
    merged = view.merged(t)
    assert merged is t and view.merged(t) is t  # the same object every cycle
    reference = merge_namespaces(t, view)  # upstream's merge, a new term with the same fields
    assert (reference.namespaces, reference.selector, reference.namespace_selector, reference.topology_key) == \
        (merged.namespaces, merged.selector, merged.namespace_selector, merged.topology_key)
    # a namespaceSelector still merges the namespaces it selects (the term's own: none, the selector set)
    sel, = required_affinity_terms(_incoming({"matchLabels": {}}))
    assert view.merged(sel) is sel  # empty selector: upstream leaves the term as it is
    picked, = required_affinity_terms(_incoming({"matchLabels": {"team": "x"}}))
    view2 = NamespaceView(_Handle({"default": Namespace(name="default", labels={}),
                                   "x1": Namespace(name="x1", labels={"team": "x"})}))
    merged_picked = view2.merged(picked)
    assert merged_picked is not picked and merged_picked.namespaces == frozenset({"x1"})


def _check(table, affinity) -> None:
    live = np.fromiter(table.row_of.values(), dtype=np.int64, count=len(table))
    kept, _ = filtering.incoming_incremental(affinity, [], table, live)
    scratch, _ = filtering.incoming_on_table(affinity, [], table, filtering.row_mask(table, live))
    assert kept == scratch


def test_kept_all_terms_entries_follow_new_signatures_and_dropped_subscriptions():
    nodes = [make_node(f"n{i}", labels={ZONE: f"z{i % 3}"}) for i in range(6)]
    pods = [make_pod(f"e{i}", namespace="default", labels={"app": "a"}, node_name=f"n{i}") for i in range(3)]
    snap = build_snapshot(nodes, pods)
    table = snap.table
    affinity = required_affinity_terms(_incoming())  # the same term objects every call, as in a run
    _check(table, affinity)
    _check(table, affinity)  # the kept entries
    # a matching pod with a label signature the table has not seen: the subscription must match it
    snap.add_pod(make_pod("new-sig", namespace="default", labels={"app": "b", "x": "1"}, node_name="n4"))
    _check(table, affinity)
    snap.add_pod(make_pod("same-sig", namespace="default", labels={"app": "a"}, node_name="n5"))
    _check(table, affinity)
    # the table forgets its subscriptions: the kept entries must not be read any more
    table.drop_subscriptions()
    snap.add_pod(make_pod("after-drop", namespace="default", labels={"app": "a"}, node_name="n3"))
    _check(table, affinity)
    _check(table, affinity)
