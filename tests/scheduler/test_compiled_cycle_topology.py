"""The fused cycle with CYCLE column forms (InterPodAffinity, PodTopologySpread: Filter over every node
from the table's counts each cycle, Score on the feasible nodes the kernel found) places every pod
exactly as the plugin-call path: same node, status, message and attempts, same round-robin index and
RNG state, on seeded random clusters with pod (anti-)affinity, spread constraints, namespaces and
churn between runs."""
import random
import sys

import pytest

from fastsched import load_config
from fastsched.plugins.interpodaffinity.tests.generators import (NAMESPACES, random_affinity_cluster,
                                                                 random_incoming_pod)
from fastsched.plugins.podtopologyspread.tests.test_pod_topology_spread import random_spread_pod
from fastsched.scheduler import Scheduler
from fastsched.testing import RANDOM_RUNTIME_CLASS, random_pod

V1 = {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration"}
CONFIGS = {
    "default": {},
    "score-all-nodes": {"percentageOfNodesToScore": 100},
    "few-nodes": {"percentageOfNodesToScore": 1},
    "weights": {"profiles": [{"schedulerName": "default-scheduler", "plugins": {"score": {"enabled": [
        {"name": "InterPodAffinity", "weight": 7}, {"name": "PodTopologySpread", "weight": 5},
        {"name": "NodeResourcesFit", "weight": 3}]}}}]},
    "ignore-existing-preferred": {"profiles": [{"schedulerName": "default-scheduler", "pluginConfig": [
        {"name": "InterPodAffinity", "args": {"ignorePreferredTermsOfExistingPods": True,
                                              "hardPodAffinityWeight": 0}}]}]},
}


def _unvalidated(pod):
    """``pod`` as make_pod's pods: not validated (the generators hold objects an API server refuses)."""
    pod.admitted = True
    return pod


def _spread_pod(rng: random.Random, i: int):
    return _unvalidated(random_spread_pod(rng, i).replace(owner_references=()))  # the generator's has no uid


def _incoming(rng: random.Random, i: int):
    roll = rng.random()
    if roll < 0.45:
        return random_incoming_pod(rng, i)
    if roll < 0.85:
        return _spread_pod(rng, i)
    return _unvalidated(random_pod(rng, i).replace(name=f"plain-{i}"))


def _run(config: dict, seed: int, compiled: bool, *, nodes: int = 120, running: int = 240, incoming: int = 120):
    node_list, pods = random_affinity_cluster(seed, nodes, running)
    rng = random.Random(seed * 17 + 3)
    s = Scheduler(load_config({**V1, **config}), seed=seed)
    s.use_compiled_cycle = compiled
    s.add(list(NAMESPACES.values()))
    s.add(RANDOM_RUNTIME_CLASS)  # (random_pod's pods with an overhead name it)
    s.add_nodes(node_list)
    s.add_pods(pods)
    s.add_pods([_incoming(rng, i) for i in range(incoming)])
    first = s.run()
    # churn: delete some placed pods and some nodes, then schedule more
    placed = [r.pod for r in first if r.node_name]
    for p in rng.sample(placed, k=min(15, len(placed))):
        s.delete_pod(p)
    for node in rng.sample(node_list, k=5):
        s.delete_node(node.name)
    s.add_pods([_incoming(rng, incoming + i) for i in range(incoming // 2)])
    second = s.run()
    outcome = [(r.pod.name, r.node_name, r.status, r.message, r.attempts) for r in (*first, *second)]
    return s, outcome, s.next_start_node_index, s.rng.bit_generator.state


@pytest.mark.parametrize("seed", [1, 2, 3])
@pytest.mark.parametrize("config", sorted(CONFIGS))
def test_cycle_forms_place_as_the_plugin_call_path(config, seed):
    fused, *fused_rest = _run(CONFIGS[config], seed, True)
    plain, *plain_rest = _run(CONFIGS[config], seed, False)
    assert fused_rest == plain_rest
    (fw,) = fused.profiles.values()
    engine = fw.compiled_cycle
    # the affinity and spread pods went through the kernel, not around it
    assert engine.fused_cycles > 60, (engine.fused_cycles, engine.declined_cycles)
    (plain_fw,) = plain.profiles.values()
    assert plain_fw.compiled_cycle.fused_cycles == 0


def test_cycle_forms_are_used_for_affinity_and_spread_pods():
    """Neither plugin sends a pod to the plugin-call path any more: pods with spread constraints or
    affinity terms compile to plans with CYCLE parts (unless another plugin declines them)."""
    node_list, pods = random_affinity_cluster(5, 80, 160)
    rng = random.Random(5)
    s = Scheduler(load_config(V1), seed=5)
    s.add(list(NAMESPACES.values()))
    s.add_nodes(node_list)
    s.add_pods(pods)
    (fw,) = s.profiles.values()
    engine = fw.compiled_cycle
    with_cycle_parts = 0
    for i in range(40):
        pod = _spread_pod(rng, i) if i % 2 else random_incoming_pod(rng, i)
        s.add_pods([pod])
        s.run()
        plan = next(iter(reversed(engine._plans.values())))
        if type(plan).__name__ == "_Declined":
            assert "InterPodAffinity" not in plan.reason and "PodTopologySpread" not in plan.reason, plan.reason
        elif plan.cycle_filter or plan.cycle_score:
            with_cycle_parts += 1
    assert with_cycle_parts >= 15
    assert engine.fused_cycles >= 15


def test_a_cycle_form_that_fails_sends_the_pod_to_the_plugin_call_path():
    """A CYCLE plugin's PreScore Error is not the kernel's to report: the plugin-call path runs and
    reports it as upstream does (the pod fails with the plugin's error), and nothing was placed."""
    node_list, pods = random_affinity_cluster(9, 40, 60)
    s = Scheduler(load_config(V1), seed=9)
    s.add(list(NAMESPACES.values()))
    s.add_nodes(node_list)
    s.add_pods(pods)
    (fw,) = s.profiles.values()
    ipa = next(p for p in fw.pre_score_plugins if p.name() == "InterPodAffinity")

    def broken(*_args, **_kwargs):
        raise RuntimeError("broken pre_score")

    ipa.pre_score = broken
    fw.compiled_cycle._plans.clear()
    rng = random.Random(9)
    pod = next(p for p in (random_incoming_pod(rng, i) for i in range(50))
               if p.affinity is not None and p.affinity.pod_anti_affinity is None)
    s.add_pods([pod])
    (result,) = s.run()
    assert fw.compiled_cycle.declined_cycles >= 1
    assert not result.node_name
    assert "broken pre_score" in result.message


@pytest.mark.parametrize("config", ["default", "few-nodes"])
def test_cycle_filters_over_several_windows_place_as_the_plugin_call_path(config, monkeypatch):
    """With the smallest first window (k + k/4 nodes) on 320 nodes, CYCLE Filters judge the node
    order a window at a time, and pods whose filters reject many nodes need several: still the
    plugin-call path's placements, start index and RNG state."""
    from fastsched.runtime import compiled_cycle
    from fastsched.snapshot.snapshot import NodeBatch

    monkeypatch.setattr(compiled_cycle, "CYCLE_WINDOW_SLACK", 0)
    windows = []
    original = NodeBatch.window

    def counting_window(self, start, begin, end):
        if sys._getframe(1).f_code.co_name == "_filter_windows":  # the fused cycle's windows only
            windows.append(begin)
        return original(self, start, begin, end)

    monkeypatch.setattr(NodeBatch, "window", counting_window)
    fused, *fused_rest = _run(CONFIGS[config], 11, True, nodes=320, running=900, incoming=90)
    continued = sum(1 for begin in windows if begin > 0)
    plain, *plain_rest = _run(CONFIGS[config], 11, False, nodes=320, running=900, incoming=90)
    assert fused_rest == plain_rest
    assert continued >= 5, continued


def _both(rng: random.Random, i: int):
    """An affinity pod carrying a spread pod's constraints too: both plugins' Filters are CYCLE."""
    pod = random_incoming_pod(rng, i)
    return _unvalidated(pod.replace(topology_spread_constraints=random_spread_pod(rng, i).topology_spread_constraints))


@pytest.mark.parametrize("ipa_mask", [True, False])
def test_window_masks_with_verdicts_place_as_the_plugin_call_path(ipa_mask, monkeypatch):
    """PodTopologySpread's and InterPodAffinity's window Filters write the pass mask directly
    (``filter_window_mask``; ANDed when both do), or one answers verdicts after the other wrote it
    (``ipa_mask`` False: InterPodAffinity declines its mask), on pods with both spread constraints
    and affinity terms: still the plugin-call path's placements, start index and RNG state."""
    from fastsched._kernels import _table
    from fastsched.plugins.interpodaffinity.plugin import InterPodAffinity

    if not ipa_mask:
        monkeypatch.setattr(InterPodAffinity, "filter_window_mask", lambda self, *args: False)
    calls = {True: 0, False: 0}
    original = _table.clear_failing

    def counting(checks, rows, mask, first):
        calls[bool(first)] += 1
        return original(checks, rows, mask, first)

    monkeypatch.setattr(_table, "clear_failing", counting)
    monkeypatch.setattr(sys.modules[__name__], "_incoming", _both)
    fused, *fused_rest = _run(CONFIGS["default"], 4, True, nodes=100, running=200, incoming=80)
    plain, *plain_rest = _run(CONFIGS["default"], 4, False, nodes=100, running=200, incoming=80)
    assert fused_rest == plain_rest
    assert calls[True] >= 20, calls
    if ipa_mask:
        assert calls[False] >= 20, calls  # InterPodAffinity's mask ANDed into PodTopologySpread's
