"""InterPodAffinity's column guard (``InterPodAffinity._reach``: whether existing pods' required
anti-affinity, and their scoring terms, can reach an incoming pod), which keys the compiled cycle's
plans and decides the Skips they keep.

* It is sound: whenever a pod on the table has such a term matching the incoming pod (with its
  namespace's labels), the guard says so; and when it says no, upstream's PreFilter (walking the
  NodeInfos) answers Skip for a pod without required terms and its PreScore for a pod without
  preferred terms.
* The kept answer (per kind of incoming pod, across cluster changes) equals a fresh plugin's.
* It changes when it must (namespaceSelector terms and namespace labels, deletions, scoring terms,
  the hard weight and ignorePreferredTermsOfExistingPods) and stays when it may (pods and
  signatures no term of which reaches the pod, nodes, other namespaces).
* Whole runs decide as the plugin-call path on seeded random clusters changed between runs.
"""
from __future__ import annotations

import random

import pytest

from fastsched import Scheduler, load_config
from fastsched.api import Namespace
from fastsched.config.args import InterPodAffinityArgs
from fastsched.framework.columns import CYCLE, NODES
from fastsched.framework.cycle_state import CycleState
from fastsched.framework.status import Code
from fastsched.plugins import in_tree_registry
from fastsched.plugins.interpodaffinity.plugin import NAME
from fastsched.plugins.interpodaffinity.terms import (preferred_affinity_terms, preferred_anti_affinity_terms,
                                                      required_affinity_terms, required_anti_affinity_terms)
from fastsched.runtime.framework import new_framework
from fastsched.snapshot import build_snapshot
from fastsched.testing import make_node, make_pod, single_plugin_profile

from .generators import (NAMESPACES, random_affinity_cluster, random_change, random_existing_pod,
                         random_incoming_pod)

V1 = {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration"}
ZONE = "topology.kubernetes.io/zone"


def _plugin(args, namespaces, snap):
    fw = new_framework(in_tree_registry(), single_plugin_profile(NAME, args=args), namespaces=namespaces)
    fw.set_snapshot_shared_lister(snap)
    return fw.plugins_map[NAME]


def _brute_reach(pods, incoming, ns_labels, args) -> tuple[bool, bool]:
    """Whether a pod of ``pods`` has a required anti-affinity term, and a scoring term, matching
    ``incoming``: upstream's ``processExistingPod`` / ``getExistingAntiAffinityCounts`` matching,
    pod by pod."""
    def m(t):
        return t.matches(incoming.namespace, incoming.labels, ns_labels)
    anti = any(m(t) for p in pods for t in required_anti_affinity_terms(p))
    score = not args.ignore_preferred_terms_of_existing_pods and any(
        any(m(t) for t, _ in preferred_affinity_terms(p)) or any(m(t) for t, _ in preferred_anti_affinity_terms(p))
        or (args.hard_pod_affinity_weight > 0 and any(m(t) for t in required_affinity_terms(p))) for p in pods)
    return anti, score


@pytest.mark.parametrize("seed", range(8))
def test_the_guard_is_sound_and_kept_as_a_fresh_plugin_answers(seed):
    rng = random.Random(2700 + seed)
    nodes, pods = random_affinity_cluster(seed, n_nodes=30, n_pods=12)  # few terms: both answers met
    snap = build_snapshot(nodes, pods)
    table = snap.table
    namespaces = dict(NAMESPACES)
    args = InterPodAffinityArgs(hard_pod_affinity_weight=seed % 3,
                                ignore_preferred_terms_of_existing_pods=seed % 4 == 3)
    kept = _plugin(args, namespaces, snap)
    on_table = {p.uid: p for p in pods if p.node_name in table.row_of}
    ids = {"pod": len(pods), "node": len(nodes)}
    shapes = [7000 * seed + k for k in range(12)]
    seen = {(a, s): 0 for a in (False, True) for s in (False, True)}
    skips = 0
    for step in range(40):
        for shape in rng.sample(shapes, 6):
            incoming = random_incoming_pod(random.Random(shape), 0)
            if shape % 3 == 0:  # no terms of its own: what the guard alone decides
                incoming = incoming.replace(affinity=None)
            got = kept.column_guard(incoming, table)
            assert got == _plugin(args, namespaces, snap).column_guard(incoming, table), (step, shape)
            ns = namespaces.get(incoming.namespace)
            brute = _brute_reach(list(on_table.values()), incoming, None if ns is None else ns.labels, args)
            assert (got[0] or not brute[0]) and (got[1] or not brute[1]), (step, shape, got, brute)
            seen[got] += 1
            # no reach: upstream's PreFilter / PreScore (walking NodeInfos) answer Skip
            batch = list(snap.batch())
            if not got[0] and not required_affinity_terms(incoming) and not required_anti_affinity_terms(incoming):
                _, status = kept.pre_filter(CycleState(), incoming, batch)
                assert status is not None and status.code() == Code.SKIP, (step, shape)
                skips += 1
            if not got[1] and not preferred_affinity_terms(incoming) and not preferred_anti_affinity_terms(incoming):
                status = kept.pre_score(CycleState(), incoming, batch)
                assert status is not None and status.code() == Code.SKIP, (step, shape)
                skips += 1
        random_change(rng, snap, on_table, namespaces, ids, step)
    answers = {(i, v) for got, n in seen.items() if n for i, v in enumerate(got)}
    assert answers >= {(0, False), (0, True), (1, False)} and ((1, True) in answers) != (seed % 4 == 3), seen
    assert skips > 20


def _snap_and_plugin(existing, namespaces, **args):
    nodes = [make_node(f"n{i}", labels={ZONE: f"z{i % 2}"}) for i in range(4)]
    snap = build_snapshot(nodes, existing)
    return snap, _plugin(InterPodAffinityArgs(**args), namespaces, snap)


def _running(name, labels=None, namespace="default", node="n0", **affinity):
    return make_pod(name, namespace=namespace, labels=labels or {"app": "other"}, node_name=node,
                    affinity=affinity or None)


def _term(app, **extra):
    return {"labelSelector": {"matchLabels": {"app": app}}, "topologyKey": ZONE, **extra}


def test_namespace_selector_terms_follow_the_incoming_namespace_labels():
    """An existing pod's anti-affinity term picks namespaces by labels: relabelling the incoming
    pod's namespace moves the guard (and back), relabelling another namespace does not."""
    namespaces = {"a": Namespace(name="a", labels={"env": "dev"}), "b": Namespace(name="b", labels={"env": "prod"})}
    anti = _running("anti", podAntiAffinity={"requiredDuringSchedulingIgnoredDuringExecution": [
        _term("web", namespaceSelector={"matchLabels": {"env": "prod"}})]})
    snap, pl = _snap_and_plugin([anti], namespaces)
    table = snap.table
    web = make_pod("web", namespace="a", labels={"app": "web"})
    assert pl.column_guard(web, table) == (False, False)
    assert pl.column_guard(web.replace(namespace="b"), table) == (True, False)
    namespaces["b"] = Namespace(name="b", labels={"env": "dev"})  # another namespace: no change for "a"
    assert pl.column_guard(web, table) == (False, False)
    namespaces["a"] = Namespace(name="a", labels={"env": "prod"})
    assert pl.column_guard(web, table) == (True, False)
    namespaces["a"] = Namespace(name="a", labels={"env": "dev"})
    assert pl.column_guard(web, table) == (False, False)
    del namespaces["a"]  # unknown namespace: nil labels
    assert pl.column_guard(web, table) == (False, False)
    assert pl.column_form(web, table).filter == NODES


def test_deleting_the_last_pod_with_anti_affinity_moves_the_guard():
    term = {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [_term("web")]}}
    a1, a2 = _running("a1", **term), _running("a2", node="n1", **term)
    snap, pl = _snap_and_plugin([a1, a2], {})
    web = make_pod("web", labels={"app": "web"})
    assert pl.column_guard(web, snap.table) == (True, False)
    assert pl.column_form(web, snap.table).filter == CYCLE
    snap.remove_pod(a1)  # a pod of the signature stays
    assert pl.column_guard(web, snap.table) == (True, False)
    snap.remove_pod(a2)
    assert pl.column_guard(web, snap.table) == (False, False)
    assert pl.column_form(web, snap.table).filter == NODES
    snap.add_pod(a1)
    assert pl.column_guard(web, snap.table) == (True, False)


@pytest.mark.parametrize("hard_weight", [0, 1])
@pytest.mark.parametrize("ignore", [False, True])
def test_scoring_terms_of_existing_pods(hard_weight, ignore):
    """Existing pods' preferred affinity and anti-affinity terms score the pods they select; their
    required affinity terms only with hardPodAffinityWeight > 0; required anti-affinity never;
    none with ignorePreferredTermsOfExistingPods."""
    cases = {
        "preferred": {"podAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
            {"weight": 3, "podAffinityTerm": _term("web")}]}},
        "preferred-anti": {"podAntiAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
            {"weight": 3, "podAffinityTerm": _term("web")}]}},
        "required": {"podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [_term("web")]}},
        "required-anti": {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [_term("web")]}},
    }
    web, db = make_pod("web", labels={"app": "web"}), make_pod("db", labels={"app": "db"})
    for case, affinity in cases.items():
        snap, pl = _snap_and_plugin([_running("e", **affinity)], {}, hard_pod_affinity_weight=hard_weight,
                                    ignore_preferred_terms_of_existing_pods=ignore)
        scores = not ignore and (case.startswith("preferred") or (case == "required" and hard_weight > 0))
        assert pl.column_guard(web, snap.table) == (case == "required-anti", scores), case
        assert pl.column_guard(db, snap.table) == (False, False), case
        assert pl.column_form(web, snap.table).score == (CYCLE if scores else NODES), case
        assert pl.column_form(db, snap.table).score == NODES, case


def test_the_incoming_pods_own_terms_run_each_cycle_whatever_the_guard():
    snap, pl = _snap_and_plugin([], {})
    own = {
        "required": {"podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [_term("x")]}},
        "required-anti": {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [_term("x")]}},
        "preferred": {"podAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
            {"weight": 1, "podAffinityTerm": _term("x")}]}},
    }
    for case, affinity in own.items():
        pod = make_pod("p", labels={"app": "web"}, affinity=affinity)
        assert pl.column_guard(pod, snap.table) == (False, False)
        form = pl.column_form(pod, snap.table)
        assert (form.filter, form.score) == ((NODES, CYCLE) if case == "preferred" else (CYCLE, NODES)), case


def test_the_guard_stays_for_what_cannot_reach_the_pod():
    """Pods without terms, pods whose terms select others (new signatures), nodes: the guard and
    the pod's form hold; then a term that selects it moves them."""
    snap, pl = _snap_and_plugin([_running("anti", podAntiAffinity={
        "requiredDuringSchedulingIgnoredDuringExecution": [_term("db")]})], {})
    table = snap.table
    web = make_pod("web", labels={"app": "web"})
    assert pl.column_guard(web, table) == (False, False)
    snap.add_pod(_running("plain", labels={"app": "web"}))
    snap.add_pod(_running("pref", podAffinity={"preferredDuringSchedulingIgnoredDuringExecution": [
        {"weight": 2, "podAffinityTerm": _term("db")}]}))
    snap.add_pod(_running("other-ns", namespace="kube-system", podAntiAffinity={
        "requiredDuringSchedulingIgnoredDuringExecution": [_term("web")]}))  # its own namespace only
    snap.add_node(make_node("n9", labels={ZONE: "z3"}))
    assert len(table.affinity_signatures) == 3
    assert pl.column_guard(web, table) == (False, False)
    assert pl.column_form(web, table).filter == NODES and pl.column_form(web, table).score == NODES
    snap.add_pod(_running("reaches", podAffinity={"preferredDuringSchedulingIgnoredDuringExecution": [
        {"weight": 2, "podAffinityTerm": _term("web")}]}))
    assert pl.column_guard(web, table) == (False, True)


# -- whole runs: the compiled cycle against the plugin calls ---------------------------------------

def _run(seed, compiled):
    rng = random.Random(seed)
    nodes, existing = random_affinity_cluster(seed, n_nodes=60, n_pods=120)
    s = Scheduler(load_config({**V1, "profiles": [{"schedulerName": "default-scheduler", "pluginConfig": [
        {"name": "InterPodAffinity", "args": {"hardPodAffinityWeight": seed % 3}}]}]}), seed=seed)
    s.use_compiled_cycle = compiled
    for ns in NAMESPACES.values():
        s.add_namespace({"apiVersion": "v1", "kind": "Namespace",
                         "metadata": {"name": ns.name, "labels": dict(ns.labels)}})
    s.add_nodes(nodes)
    s.add_pods(existing)
    out = []
    for step in range(6):
        incoming = []
        for i in range(25):
            pod = random_incoming_pod(rng, 100 * step + i)
            if rng.random() < 0.6:  # most without terms: the pods the guard lets skip
                pod = pod.replace(affinity=None)
            incoming.append(pod)
        s.add_pods(incoming)
        out += [(r.pod.name, r.node_name, r.status, r.message) for r in s.run()]
        op = step % 3
        if op == 0:  # namespaces relabelled: existing namespaceSelector terms reach other pods
            for name in ("default", "prod", "dev"):
                s.add_namespace({"apiVersion": "v1", "kind": "Namespace", "metadata": {
                    "name": name, "labels": {"env": rng.choice(("prod", "dev"))}}})
        elif op == 1:  # pods with terms deleted
            with_terms = [p for p in s.cluster.pods.values() if p.node_name and p.affinity is not None]
            for p in rng.sample(with_terms, min(10, len(with_terms))):
                s.delete_pod(p)
        else:  # running pods with new terms
            s.add_pods([random_existing_pod(rng, 10_000 + 10 * step + j, rng.choice(nodes).name)
                        for j in range(10)])
    return s, out, s.next_start_node_index, s.rng.bit_generator.state


@pytest.mark.parametrize("seed", [1, 2, 3, 4])
def test_compiled_runs_decide_as_the_plugin_calls(seed):
    fused, *got = _run(seed, True)
    _, *want = _run(seed, False)
    assert got == want
    (fw,) = fused.profiles.values()
    engine = fw.compiled_cycle
    assert engine.fused_cycles >= 60, (engine.fused_cycles, engine.declined_cycles)
