"""Randomized checks of DefaultPreemption against a plain reference implementation.

For seeded random clusters (NodeUnschedulable, TaintToleration, NodeAffinity, NodePorts and
NodeResourcesFit as filters, random priorities and PDBs) and preemptors that do not fit:

* with ``minCandidateNodesPercentage: 100`` every potential node is dry-run, so the chosen node and
  its victims must equal a straightforward re-derivation of upstream's rules (victims by greedy
  reprieve, PDB-violating first; node by the lexicographic pick criteria, first in offset order);
* with the default args (early stop) the result must still be sound: the victims are lower
  priority pods of an Unschedulable node, the pod fits once they are gone, and each victim alone
  would not fit back (these filters are monotone in the node's pods).
"""
from __future__ import annotations

import functools
import random

from fastsched.config.args import DefaultPreemptionArgs
from fastsched.framework import Code
from fastsched.snapshot import build_snapshot
from fastsched.testing import make_pod, random_cluster
from fastsched.util.gosort import go_sort_slice

from .support import Setup, assert_placed, pdb

FILTERS = ["NodeUnschedulable", "TaintToleration", "NodeAffinity", "NodePorts", "NodeResourcesFit"]
PRE_FILTERS = ["NodeAffinity", "NodePorts", "NodeResourcesFit"]
SEEDS = range(12)


def prio(p) -> int:
    return 0 if p.priority is None else p.priority


def importance(p) -> tuple:
    return (-prio(p), float("inf") if p.start_time is None else p.start_time)


def go_sorted(pod_infos, made: dict) -> list:
    """``sort.Slice(victims, MoreImportantVictim)``: Go's pdqsort (not stable beyond 12), pods
    that have not started ordered by when their victims were made (``made``: uid -> position)."""
    out = list(pod_infos)
    key = {pi.pod.uid: importance(pi.pod) + ((made[pi.pod.uid],) if pi.pod.start_time is None else (0,))
           for pi in out}
    go_sort_slice(out, lambda a, b: key[a.pod.uid] < key[b.pod.uid])
    return out


def random_preemptor(rng: random.Random, i: int):
    spec = {}
    if rng.random() < 0.3:
        spec["tolerations"] = [{"operator": "Exists"}]
    return make_pod(f"preemptor-{i}", uid=f"preemptor-{i}", priority=rng.choice((0, 50, 500, 500, 5000)),
                    requests={"cpu": rng.choice(("500m", "1", "2", "3", "12")),
                              "memory": rng.choice(("256Mi", "1Gi", "4Gi"))},
                    host_ports=[80] if rng.random() < 0.15 else [], labels={"app": "web"}, **spec)


def random_pdbs(rng: random.Random):
    out = []
    for i, app in enumerate(("web", "db", "cache")):
        if rng.random() < 0.6:
            out.append(pdb(f"pdb-{i}", {"app": app}, allowed=rng.choice((0, 0, 1, 2)),
                           namespace=rng.choice(("default", "prod"))))
    return out


def with_start_times(pods, rng: random.Random):
    return [p.replace(start_time=float(rng.randint(0, 5))) if rng.random() < 0.7 else p for p in pods]


def fails(status) -> bool:
    return status is not None and not status.is_success()


def reference_victims(s: Setup, state, preemptor, view, pdbs):
    """(victims, PDB violations) on one node by upstream's rules, or None when it is no candidate."""
    fw = s.fw
    lower = [pi for pi in view.pods if prio(pi.pod) < prio(preemptor)]
    if not lower:
        return None
    ni, st = view.snapshot(), state.clone()
    for pi in lower:
        ni.remove_pod(pi.pod)
        assert fw.run_pre_filter_extension_remove_pod(st, preemptor, pi, ni) is None
    if fails(fw.run_filter_plugins_with_nominated_pods(st, preemptor, ni)):
        return None
    made = {pi.pod.uid: i for i, pi in enumerate(lower)}
    ordered = go_sorted(lower, made)
    allowed = [b.disruptions_allowed for b in pdbs]
    violating = set()
    for pi in ordered:
        for k, b in enumerate(pdbs):
            sel = b.selector
            if (pi.pod.labels and b.namespace == pi.pod.namespace and sel is not None and not sel.is_empty()
                    and sel.matches(pi.pod.labels) and pi.pod.name not in b.disrupted_pods):
                allowed[k] -= 1
                if allowed[k] < 0:
                    violating.add(pi.pod.uid)
    victims, violations = [], 0
    groups = [pi for pi in ordered if pi.pod.uid in violating], [pi for pi in ordered if pi.pod.uid not in violating]
    for pi in groups[0] + groups[1]:
        ni.add_pod_info(pi)
        fw.run_pre_filter_extension_add_pod(st, preemptor, pi, ni)
        if fails(fw.run_filter_plugins_with_nominated_pods(st, preemptor, ni)):
            ni.remove_pod(pi.pod)
            fw.run_pre_filter_extension_remove_pod(st, preemptor, pi, ni)
            victims.append(pi)
            violations += pi.pod.uid in violating
    if not victims:
        return None
    if groups[0] and groups[1]:  # upstream re-sorts only then
        victims = go_sorted(victims, made)
    return [pi.pod for pi in victims], violations


def reference_pick(s: Setup, state, preemptor, statuses, pdbs, seed: int):
    """The (node, victim names) upstream's rules choose when every potential node is dry-run."""
    all_names = s.snapshot.batch().names
    potential = [n for n in all_names if statuses.get(n).code() == Code.UNSCHEDULABLE]
    if not potential:
        return None
    offset = random.Random(seed).randrange(len(potential))
    order = potential[offset:] + potential[:offset]
    found = {}
    for name in order:
        got = reference_victims(s, state, preemptor, s.snapshot.get(name), pdbs)
        if got is not None:
            found[name] = got
    if not found:
        return None
    # non-violating first, each in dry-run order; then the lexicographic criteria, first wins
    ranked = [n for n in found if found[n][1] == 0] + [n for n in found if found[n][1] > 0]

    def key(n):
        victims, violations = found[n]
        top = prio(victims[0])
        earliest = min(importance(v)[1] for v in victims if prio(v) == top)
        return (violations, top, sum(prio(v) + 2**31 for v in victims), len(victims), -earliest)

    best = min(ranked, key=key)
    return best, [v.name for v in found[best][0]]


@functools.lru_cache(maxsize=None)
def scenario(seed: int):
    """Nodes, running pods, their snapshot, PDBs and preemptors for ``seed`` (built once: both tests
    use them, and the fakes never change the snapshot)."""
    rng = random.Random(1000 + seed)
    nodes, running = random_cluster(seed, 70, 900)
    running = with_start_times(running, rng)
    return nodes, running, build_snapshot(nodes, running), random_pdbs(rng), [random_preemptor(rng, i) for i in range(4)]


def test_matches_reference_when_every_node_is_dry_run():
    outcomes = {"preempted": 0, "not helpful": 0, "fits": 0}
    total_victims = 0
    for seed in SEEDS:
        nodes, running, snapshot, pdbs, preemptors = scenario(seed)
        for preemptor in preemptors:
            s = Setup(nodes, running, preemptor, pdbs=pdbs, filters=FILTERS, pre_filters=PRE_FILTERS, seed=seed,
                      snapshot=snapshot, args=DefaultPreemptionArgs(min_candidate_nodes_percentage=100, min_candidate_nodes_absolute=0))
            state = s.cycle_state()
            statuses = s.filter_statuses(state)
            if s.feasible:
                outcomes["fits"] += 1
                continue
            want = reference_pick(s, state, preemptor, statuses, pdbs, seed)
            result, status = s.plugin.post_filter(state, preemptor, statuses)
            if want is None:
                assert status.code() == Code.UNSCHEDULABLE, status
                assert status.message().startswith(f"preemption: 0/{len(nodes)} nodes are available: ")
                assert result.nominating_info.nominated_node_name == ""
                assert s.client.preempted == []
                outcomes["not helpful"] += 1
                continue
            assert_placed(status, want[0], len(want[1]))
            node, victims = want
            assert result.nominating_info.nominated_node_name == node, (seed, preemptor.name)
            assert s.client.preempted == [(v, preemptor.name, node) for v in victims]
            outcomes["preempted"] += 1
            total_victims += len(victims)
    assert outcomes["preempted"] >= 15 and outcomes["not helpful"] >= 3 and outcomes["fits"] >= 3, outcomes
    assert total_victims > outcomes["preempted"], "some preemptions must need several victims"


def test_default_args_give_sound_minimal_victims():
    preempted = 0
    for seed in SEEDS:
        nodes, running, snapshot, pdbs, preemptors = scenario(seed)
        for preemptor in preemptors:
            s = Setup(nodes, running, preemptor, pdbs=pdbs, filters=FILTERS, pre_filters=PRE_FILTERS, seed=seed,
                      snapshot=snapshot)
            state = s.cycle_state()
            statuses = s.filter_statuses(state)
            result, status = s.plugin.post_filter(state, preemptor, statuses)
            if s.feasible or status is None or not status.is_success():
                continue
            preempted += 1
            node = result.nominating_info.nominated_node_name
            assert statuses.get(node).code() == Code.UNSCHEDULABLE
            view = s.snapshot.get(node)
            by_name = {pi.pod.name: pi for pi in view.pods}
            victims = [by_name[v] for v, _, n in s.client.preempted if n == node]
            assert len(victims) == len(s.client.preempted) > 0
            assert all(prio(pi.pod) < prio(preemptor) for pi in victims)
            ni = view.snapshot()
            for pi in victims:
                ni.remove_pod(pi.pod)
            assert not fails(s.fw.run_filter_plugins_with_nominated_pods(state.clone(), preemptor, ni))
            for pi in victims:
                ni.add_pod_info(pi)
                assert fails(s.fw.run_filter_plugins_with_nominated_pods(state.clone(), preemptor, ni)), pi.pod.name
                ni.remove_pod(pi.pod)
    assert preempted >= 15
