"""A nominated pod's retry judges its nominated node alone first (upstream findNodesThatFitPod's
evaluateNominatedNode). The compiled cycle judges it on the kernel over that one row
(``CompiledCycle.evaluate_row``) when no other pod of the pod's priority or higher is nominated
there, and declines otherwise (a plan narrowed by PreFilter's node names, a node with such
nominations, a pod PreFilter or Filter rejects there): every pod must end as on the plugin-call
path, with the same node, status, message and attempts, the same round-robin index and RNG state.

The pods carry nominations to random nodes (some full, some missing, several pods nominated to one
node at random priorities, so that others' nominations count on some), the random pods' node
affinity (``matchFields`` on the node name: PreFilter names the nodes), taints, ports and spread;
the cluster runs preemption, whose preemptors come back nominated."""
import random

import pytest

from fastsched import load_config
from fastsched.runtime.compiled_cycle import CompiledCycle
from fastsched.scheduler import Scheduler
from fastsched.testing import RANDOM_RUNTIME_CLASS, make_node, make_pod, random_cluster, random_pod

V1 = {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration"}
PRIORITIES = (-10, 0, 0, 100, 1000)


def _run(seed: int, compiled: bool, config: dict, counts: dict):
    node_list, pods = random_cluster(seed, 40, 90)
    rng = random.Random(seed * 31 + 7)
    s = Scheduler(load_config({**V1, **config}), seed=seed)
    s.use_compiled_cycle = compiled
    s.add(RANDOM_RUNTIME_CLASS)
    s.add_nodes(node_list)
    s.add_pods([p.replace(priority=rng.choice((-100, 0))) for p in pods])
    names = [n.name for n in node_list]
    batch = []
    for i in range(120):
        # every other pod a small plain one (most fit their nominated node), the others random_pod's
        pod = random_pod(rng, i) if i % 2 else make_pod(cpu=rng.choice(("100m", "500m", "1")), memory="256Mi")
        roll = rng.random()
        nnn = rng.choice(names) if roll < 0.6 else ("ghost" if roll < 0.65 else "")
        pod = pod.replace(name=f"in-{i}", uid=f"uid-in-{i}", priority=rng.choice(PRIORITIES),
                          nominated_node_name=nnn)
        pod.admitted = True  # (random_pod's objects, unvalidated as make_pod's)
        batch.append(pod)
    # plain preemptors: a full node's low-priority pods give way, the preemptor comes back nominated
    batch += [make_pod(f"big-{i}", uid=f"uid-big-{i}", cpu="1500m", memory="1Gi", priority=2000)
              for i in range(12)]
    s.add_pods(batch)
    results = s.run()
    s.add_nodes([make_node("late", cpu="4", memory="8Gi")])
    s.add_pods([make_pod(f"late-{i}", uid=f"uid-late-{i}", cpu="1", priority=1000).replace(nominated_node_name="late")
                for i in range(6)])
    results = [*results, *s.run()]
    outcome = [(r.pod.name, r.node_name, r.status, r.message, r.attempts) for r in results]
    return outcome, s.next_start_node_index, s.rng.bit_generator.state


@pytest.mark.parametrize("config", [{}, {"percentageOfNodesToScore": 1}])
@pytest.mark.parametrize("seed", [1, 2])
def test_nominated_node_on_the_kernel_places_as_the_plugin_call_path(monkeypatch, seed, config):
    counts = {"placed": 0, "declined": 0}
    evaluate = CompiledCycle.evaluate_row

    def counted(self, *args):
        host = evaluate(self, *args)
        counts["declined" if host is None else "placed"] += 1
        return host

    monkeypatch.setattr(CompiledCycle, "evaluate_row", counted)
    got = _run(seed, True, config, counts)
    on_kernel = dict(counts)
    want = _run(seed, False, config, counts)
    assert counts == on_kernel  # the plugin-call path never asks the kernel
    assert got[0] == want[0]
    assert got[1:] == want[1:]
    # both ways out were taken: nominated nodes judged on the kernel, and declined to the plugin path
    assert on_kernel["placed"] >= 10 and on_kernel["declined"] >= 10, on_kernel


def test_other_nominations_on_the_node_decline_and_own_does_not():
    """A pod nominated to a node where another pod of its priority or higher is nominated takes the
    plugin-call path (upstream's two passes: with the other pod the node is full, so the pod goes
    elsewhere); one of lower priority, or the pod's own nomination, leaves the kernel's verdict."""
    def run(other_priority: int | None) -> tuple[str, int, int]:
        s = Scheduler(load_config(V1), seed=0)
        s.add_nodes([make_node("a", cpu="2", memory="8Gi"), make_node("b", cpu="2", memory="8Gi")])
        pods = [make_pod("in", uid="uid-in", cpu="1500m", priority=10).replace(nominated_node_name="b")]
        if other_priority is not None:  # (gated: it stays nominated, never scheduled)
            pods.insert(0, make_pod("other", uid="uid-other", cpu="1500m", priority=other_priority,
                                    schedulingGates=[{"name": "wait"}]).replace(nominated_node_name="b"))
        s.add_pods(pods)
        results = {r.pod.name: r for r in s.run()}
        (fw,) = s.profiles.values()
        engine = fw.compiled_cycle
        return results["in"].node_name, engine.fused_cycles, engine.declined_cycles

    assert run(None) == ("b", 1, 0)   # its own nomination only: the kernel places it on b
    assert run(9) == ("b", 1, 0)      # lower priority: not counted
    node, fused, declined = run(10)   # equal priority: b holds the gated pod's 1.5 CPUs
    assert node == "a" and declined >= 1


@pytest.mark.parametrize("named", ["a", "b"])
def test_nominated_node_with_prefilter_node_names(named):
    """PreFilter names the nodes (NodeAffinity's matchFields on the name): upstream judges the
    nominated node whatever the names are, so the kernel's plan over the named nodes declines and
    the plugin-call path decides; the pod goes to the named node on both paths."""
    def run(compiled: bool) -> tuple:
        s = Scheduler(load_config(V1), seed=0)
        s.use_compiled_cycle = compiled
        s.add_nodes([make_node("a", cpu="2", memory="8Gi"), make_node("b", cpu="2", memory="8Gi")])
        affinity = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
            {"matchFields": [{"key": "metadata.name", "operator": "In", "values": [named]}]}]}}}
        s.add_pods([make_pod("in", uid="uid-in", cpu="1", affinity=affinity).replace(nominated_node_name="b")])
        (r,) = s.run()
        return r.node_name, r.status, r.message, s.next_start_node_index

    assert run(True) == run(False)
    assert run(True)[0] == named
