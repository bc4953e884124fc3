"""Upstream v1.37.2 ``pkg/scheduler/framework/preemption/preemption_test.go``: ``TestDryRunPreemption``,
``TestSelectCandidate`` and ``TestCallExtenders``, every row, on fastsched's Evaluator.

Upstream drives its Evaluator with fake PostFilter plugins (``FakePostFilterPlugin``: the node's
first pod is the victim, ``numViolatingVictim`` PDB violations; ``FakePreemptionScorePostFilterPlugin``:
the same, offset 0 over every node, and an ordered score of minus the victims' container count);
here the same fakes replace the matching methods of DefaultPreemption's evaluator interface.
Priorities mid 100, high 1000.
"""
from __future__ import annotations

import pytest

from fastsched.framework import Code
from fastsched.plugins.defaultpreemption import Candidate, Victims

from .support import HIGH, MID, Setup, big_node, names, pod


class FakePostFilterPlugin:
    """Upstream's FakePostFilterPlugin / FakePreemptionScorePostFilterPlugin over the real plugin:
    SelectVictimsOnNode answers the node's first pod with ``num_violating`` violations;
    GetOffsetAndNumCandidates (0, every node); OrderedScoreFuncs (score plugin only) prefers the
    fewest containers among the victims."""

    def __init__(self, plugin, num_violating=0, score=False):
        self.plugin, self.num_violating, self.score = plugin, num_violating, score

    def install(self):
        pl = self.plugin
        pl.vectorized = False  # the fake's SelectVictimsOnNode is per node
        pl.select_victims_on_node = lambda state, pod, node_info, pdbs: (
            [node_info.pods[0].pod], self.num_violating, None)
        pl.has_potential_victims = lambda node_info, preemptor: True
        pl.get_offset_and_num_candidates = lambda n: (0, n)
        if self.score:
            def ordered_score_funcs(nodes_to_victims):
                return [lambda node: -sum(len(p.containers) + len(p.init_containers)
                                          for p in nodes_to_victims[node].pods)]
            pl.ordered_score_funcs = ordered_score_funcs
        return self


def two_nodes():
    return Setup([big_node("node1"), big_node("node2")],
                 [pod("p1", node_name="node1", priority=MID), pod("p2", node_name="node2", priority=MID)],
                 pod("p", priority=HIGH), filters=[], pre_filters=[])


# -- TestDryRunPreemption (preemption_test.go) -----------------------------------------------------
@pytest.mark.parametrize("num_violating", [0, 1], ids=["no pdb violation", "pdb violation on each node"])
def test_dry_run_preemption(num_violating):
    s = two_nodes()
    FakePostFilterPlugin(s.plugin, num_violating).install()
    got, _, _ = s.dry_run(offset=0, num_candidates=2)
    assert sorted((c.name, sorted(names(c.victims.pods)), c.victims.num_pdb_violations) for c in got) == [
        ("node1", ["p1"], num_violating), ("node2", ["p2"], num_violating)]


# -- TestSelectCandidate (preemption_test.go) ------------------------------------------------------
def _pod_with_containers(name, node_name, n):
    from fastsched.api import Pod
    manifest = {"metadata": {"name": name, "namespace": "default", "uid": name},
                "spec": {"nodeName": node_name, "priority": MID,
                         "containers": [{"name": f"container{i}", "image": "busybox"} for i in range(1, n + 1)]}}
    return Pod.from_manifest(manifest, validate=False)


@pytest.mark.parametrize("name", ["pod has different number of containers on each node"], ids=str)
def test_select_candidate(name):
    running = [_pod_with_containers("p1.1", "node1", 2), _pod_with_containers("p2.1", "node2", 1),
               _pod_with_containers("p3.1", "node3", 3)]
    s = Setup([big_node(n) for n in ("node1", "node2", "node3")], running,
              pod("p", priority=HIGH, req={"cpu": "500m", "memory": "500"}), filters=[], pre_filters=[])
    FakePostFilterPlugin(s.plugin, score=True).install()
    # upstream dry-runs once per test pod (each with a fresh state), always expecting node2
    for p in running:
        got, _, _ = s.dry_run(offset=0, num_candidates=3, p=p)
        best = s.plugin.evaluator.select_candidate(got)
        assert best is not None and best.name == "node2"


# -- TestCallExtenders (preemption_test.go) --------------------------------------------------------
class UpstreamFakeExtender:
    """preemption_test.go's ``fakeExtender``: interested in any pod; without preemption support
    ProcessPreemption answers nothing; with it, an error, ``{"mock": empty}``, or the victims as given."""

    def __init__(self, supports=False, ignorable=False, error=False, no_victims=False):
        self.supports, self.ignorable, self.error, self.no_victims = supports, ignorable, error, no_victims

    def supports_preemption(self):
        return self.supports

    def is_interested(self, p):
        return p is not None

    def is_ignorable(self):
        return self.ignorable

    def process_preemption(self, p, victims, node_infos=None):
        if not self.supports:
            return None
        if self.error:
            raise RuntimeError("extender preempt error")
        if self.no_victims:
            return {"mock": Victims([], 0)}
        return victims


VICTIM = pod("victim", node_name="node1", priority=MID)


def one_candidate():
    return [Candidate("node1", Victims([VICTIM], 0))]


# name -> (extenders, candidates, wanted status code (None: success), wanted candidates as (node, #victims))
CALL_EXTENDERS: dict[str, tuple] = {
    "no extenders": ([], one_candidate(), None, [("node1", 1)]),
    "one extender supports preemption": ([UpstreamFakeExtender(supports=True)], one_candidate(), None, [("node1", 1)]),
    "one extender with return no victims": (
        [UpstreamFakeExtender(supports=True, no_victims=True)], one_candidate(), Code.ERROR, []),
    "one extender does not support preemption": (
        [UpstreamFakeExtender(supports=False)], one_candidate(), None, [("node1", 1)]),
    "one extender with no return victims and is ignorable": (
        [UpstreamFakeExtender(supports=True, no_victims=True, ignorable=True)], one_candidate(), None, []),
    "one extender returns error and is ignorable": (
        [UpstreamFakeExtender(supports=True, error=True, ignorable=True)], one_candidate(), None, [("node1", 1)]),
    "one extender returns error and is not ignorable": (
        [UpstreamFakeExtender(supports=True, error=True)], one_candidate(), Code.ERROR, []),
    "one extender with empty victims input": ([UpstreamFakeExtender(supports=True)], [], None, []),
}


@pytest.mark.parametrize("name", list(CALL_EXTENDERS), ids=list(CALL_EXTENDERS))
def test_call_extenders(name):
    extenders, candidates, want_code, want = CALL_EXTENDERS[name]
    preemptor = pod("preemptor", priority=HIGH)
    s = Setup([big_node("node1")], [], preemptor, extenders=extenders, filters=[], pre_filters=[])
    got, status = s.plugin.evaluator.call_extenders(preemptor, list(candidates))
    assert (None if status is None else status.code()) == want_code, status
    assert [(c.name, len(c.victims.pods)) for c in got] == want
