"""The compiled cycle remembers each plugin's form by the identity of the spec values that plugin
reads (``CompiledCycle._form_memo``): pods that share some spec objects and not others (a
StatefulSet's pods, a label object each; pods built from parts of others) decide exactly as the
plugin-call path. The pods here are put together from the fields of a pool of random pods, so that
every plugin's form is looked up both for values seen before and for new ones, in every mix; a
planted mutant that keys a plugin's form without its values is caught."""
import dataclasses
import random

import pytest

from fastsched import load_config
from fastsched.runtime import compiled_cycle as cc
from fastsched.scheduler import Scheduler
from fastsched.testing import RANDOM_RUNTIME_CLASS, make_node, make_pod, random_cluster, random_pod

V1 = {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration"}
#: the spec fields mixed between pods (each taken, as the same object, from a pod of the pool)
MIXED = ("labels", "containers", "init_containers", "node_selector", "affinity", "tolerations",
         "topology_spread_constraints", "host_network")


def _mixed_pods(seed: int, count: int) -> list:
    rng = random.Random(seed)
    pool = [random_pod(rng, i) for i in range(12)]
    pods = []
    selectors = [p.node_selector for p in pool if p.node_selector]
    for i in range(count):
        if pods and rng.random() < 0.3:
            # a twin of the pod before, differing in one field only (a node selector, most often:
            # a pod without one has NodeAffinity's Skip form, which reads nothing of the spec)
            field = "node_selector" if selectors and rng.random() < 0.5 else rng.choice(MIXED)
            value = rng.choice(selectors) if field == "node_selector" else getattr(rng.choice(pool), field)
            pod = dataclasses.replace(pods[-1], name=f"mixed-{i}", uid="", **{field: value})
        else:
            base = rng.choice(pool)
            changes = {f: getattr(rng.choice(pool), f) for f in MIXED if rng.random() < 0.4}
            pod = dataclasses.replace(base, name=f"mixed-{i}", uid="", **changes)
        pod.admitted = True  # parts of pods the API server may refuse together: not validated (as make_pod)
        pods.append(pod)
    return pods


def _run(seed: int, compiled: bool):
    nodes, running = random_cluster(seed, 120, 200)
    s = Scheduler(load_config(V1), seed=seed)
    s.use_compiled_cycle = compiled
    s.add_nodes(nodes)
    s.add(RANDOM_RUNTIME_CLASS)  # (random_pod's pods with an overhead name it)
    s.add_pods(running)
    s.add_pods(_mixed_pods(seed, 150))
    results = s.run()
    (fw,) = s.profiles.values()
    outcome = [(r.pod.name, r.node_name, r.status, r.message, r.attempts) for r in results]
    return outcome, s.next_start_node_index, fw.compiled_cycle


@pytest.mark.parametrize("seed", [4, 5, 6])
def test_pods_mixing_spec_objects_decide_as_the_plugin_calls(seed):
    fused, index, engine = _run(seed, True)
    plain, plain_index, _ = _run(seed, False)
    assert fused == plain and index == plain_index
    assert engine.fused_cycles >= 50
    assert engine._form_memo  # forms were remembered (and, with shared objects, found again)


def _spread_twins(compiled: bool, monkeypatch=None):
    """Two pods alike but for a hard zone spread constraint (a field no plugin with a static part
    reads: only PodTopologySpread's form tells them apart), the plain one placed first. Zone a has
    the bigger, emptier nodes (the plain pod's choice) and the pods the constraint counts; the
    constrained pod must go to zone b."""
    s = Scheduler(load_config(V1), seed=0)
    s.use_compiled_cycle = compiled
    zone = "topology.kubernetes.io/zone"
    s.add_nodes([make_node(f"a{i}", cpu="64", memory="256Gi", labels={zone: "a"}) for i in range(3)]
                + [make_node(f"b{i}", cpu="4", memory="8Gi", labels={zone: "b"}) for i in range(3)])
    s.add_pods([make_pod(f"web-{i}", labels={"app": "web"}, cpu="100m", node_name=f"a{i}") for i in range(3)])
    plain = make_pod("plain", labels={"app": "web"}, cpu="100m")
    constrained = make_pod("tmp", labels={"app": "web"}, cpu="100m", topologySpreadConstraints=[{
        "maxSkew": 1, "topologyKey": zone, "whenUnsatisfiable": "DoNotSchedule",
        "labelSelector": {"matchLabels": {"app": "web"}}}])
    twin = dataclasses.replace(plain, name="spread", uid="",
                               topology_spread_constraints=constrained.topology_spread_constraints)
    s.add_pods([plain])
    first = s.run()
    s.add_pods([twin])
    return [(r.pod.name, r.node_name, r.status) for r in [*first, *s.run()]]


def test_pods_differing_only_in_a_form_decide_as_the_plugin_calls():
    fused = _spread_twins(True)
    assert fused == _spread_twins(False)
    assert fused[-1][0] == "spread" and fused[-1][1].startswith("b")


def test_a_form_keyed_without_its_values_is_caught(monkeypatch):
    """The planted mutant: every plugin's form remembered by the plugin alone (as if it read no
    field), so the constrained pod gets the plain pod's forms, then its plan."""
    original = cc.CompiledCycle.__init__

    def init(self, fw):
        original(self, fw)
        self._read_positions = [() for _ in self._read_positions]

    monkeypatch.setattr(cc.CompiledCycle, "__init__", init)
    assert _spread_twins(True) != _spread_twins(False)
