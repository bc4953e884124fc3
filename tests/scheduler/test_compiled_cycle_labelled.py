"""Pods that differ from the last one only in their labels (a StatefulSet's pods, each with its
``statefulset.kubernetes.io/pod-name``; pods one manifest each): ``CompiledCycle._plan_of_last_values``
takes the last shared key's plan without the guard memo, the alias and the lookup, and
``NodeTable._derive`` takes the last spec's accounting data but the signature. Each must give what
the full path gives: whole runs against the plugin-call path, the plan against the full lookup's,
the derived data against ``_compute_derived``."""
from __future__ import annotations

import random

import pytest

from fastsched import Scheduler, load_config
from fastsched.runtime.compiled_cycle import CompiledCycle, _spec_of
from fastsched.testing import make_node, make_pod, pod_manifest

V1 = {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration"}
ZONES = ("z0", "z1", "z2")


def _cluster(rng: random.Random, terms: bool) -> tuple[list, list]:
    nodes = [make_node(f"n{i}", cpu=str(rng.choice((2, 4, 8))), memory="16Gi", pods="110",
                       labels={"topology.kubernetes.io/zone": ZONES[i % 3], "kubernetes.io/hostname": f"n{i}"})
             for i in range(40)]
    running = []
    for i in range(30):
        spec: dict = {}
        if terms and i % 3 == 0:  # existing pods whose terms select the incoming pods' labels
            term = {"labelSelector": {"matchLabels": {"app": "db"}}, "topologyKey": "kubernetes.io/hostname"}
            key = "podAntiAffinity" if i % 2 else "podAffinity"
            spec["affinity"] = {key: {"preferredDuringSchedulingIgnoredDuringExecution": [
                {"weight": 1 + i % 5, "podAffinityTerm": term}]}}
        running.append(make_pod(f"r{i}", cpu="250m", labels={"app": rng.choice(("web", "db"))},
                                node_name=f"n{rng.randrange(40)}", **spec))
    return nodes, running


def _labelled(rng: random.Random, count: int) -> list[dict]:
    """Manifests one per pod, each with a label of its own; runs of one request and app label
    (the shortcut's case) broken by others (its refusals)."""
    out = []
    cpu, app = "100m", "web"
    for i in range(count):
        if rng.random() < 0.15:
            cpu = rng.choice(("100m", "300m", "1"))
        if rng.random() < 0.1:
            app = rng.choice(("web", "db"))
        out.append(pod_manifest(f"p{i}", cpu=cpu, memory="128Mi",
                                labels={"app": app, "statefulset.kubernetes.io/pod-name": f"p{i}"}))
    return out


def _run(nodes, running, manifests, seed, compiled):
    s = Scheduler(load_config(V1), seed=seed)
    s.use_compiled_cycle = compiled
    s.add_nodes(nodes)
    s.add_pods(running)
    s.add_pods(manifests)
    return s, [(r.pod.key, r.status, r.node_name, r.message) for r in s.run()]


@pytest.mark.parametrize("terms", [False, True], ids=["no-terms", "terms-on-labels"])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_labelled_pods_decide_as_the_plugin_call_path(monkeypatch, seed, terms):
    rng = random.Random(seed)
    nodes, running = _cluster(rng, terms)
    manifests = _labelled(rng, 150)
    served = []
    real = CompiledCycle._plan_of_last_values

    def counting(self, pod, spec, ids, table):
        plan = real(self, pod, spec, ids, table)
        served.append(plan is not None)
        return plan

    monkeypatch.setattr(CompiledCycle, "_plan_of_last_values", counting)
    s, fast = _run(nodes, running, manifests, seed, compiled=True)
    _, slow = _run(nodes, running, manifests, seed, compiled=False)
    assert fast == slow
    assert sum(r[1] == "Scheduled" for r in fast) >= 100
    (fw,) = s.profiles.values()
    assert fw.compiled_cycle.fused_cycles >= 100  # the compiled side did run the kernel
    if not terms:
        assert sum(served) >= 20  # the shortcut was taken, not only declined


def _engine():
    s = Scheduler(load_config(V1), seed=0)
    s.add_nodes([make_node(f"n{i}", cpu="8", memory="32Gi", labels={"kubernetes.io/hostname": f"n{i}"})
                 for i in range(4)])
    s.add_pods([make_pod("warm", requests={"cpu": "100m"})])
    s.run()  # binds the engine to the snapshot's table
    (fw,) = s.profiles.values()
    return s, fw.compiled_cycle


def _full_lookup(engine, pod, table, snapshot):
    """The plan as _plan_of's memo path and _look_up find it without the last shared key (which
    is then this pod's, computed in full, as on the path a pod takes when not served)."""
    engine._last_shared = None
    spec = _spec_of(pod)
    ids = tuple(map(id, spec))
    values = engine._memo_guards(pod, spec, ids, table)[1]
    return engine._look_up(pod, spec, (*ids, table.node_version, *values), table, snapshot)


def test_the_shortcut_serves_exactly_the_pods_whose_full_lookup_finds_the_last_shared_plan():
    s, engine = _engine()
    snapshot = s.cache.update_snapshot()
    table = engine._table
    assert snapshot.table is table
    base = make_pod("p", requests={"cpu": "100m", "memory": "64Mi"}, labels={"app": "web"})

    def labelled(i, **changes):
        labels = {**base.labels, "statefulset.kubernetes.io/pod-name": f"p{i}"}
        return base.replace(name=f"p{i}", uid=f"p{i}", labels=labels, **changes)

    other = make_pod("q", requests={"cpu": "2"})
    tolerating = make_pod("t", requests={"cpu": "100m", "memory": "64Mi"},
                          tolerations=[{"key": "k", "operator": "Exists", "effect": "NoSchedule"}])
    pods = [labelled(i) for i in range(3)]
    pods.append(labelled(3, containers=other.containers))     # other requests: not served
    pods.append(labelled(4, containers=other.containers))     # the same requests again: served
    pods.append(labelled(5, tolerations=tolerating.tolerations))  # TaintToleration's static part reads them
    pods += [labelled(6), labelled(7), labelled(8), labelled(9)]
    served = []
    for i, pod in enumerate(pods):
        if i == 8:  # a node added: the node-set version differs from the last shared key's
            s.add_nodes([make_node("late", cpu="8", memory="32Gi")])
            snapshot = s.cache.update_snapshot()
            table = snapshot.table
            assert table is engine._table and table.node_version != engine._last_shared[2][0]
        spec = _spec_of(pod)
        got = engine._plan_of_last_values(pod, spec, tuple(map(id, spec)), table)
        full = _full_lookup(engine, pod, table, snapshot)
        if got is not None:
            served.append(i)
            assert got is full, i  # the very plan the lookup gives
    assert served == [1, 2, 4, 7, 9]


def test_derive_of_labelled_pods_is_compute_derived_with_their_own_signature():
    s, engine = _engine()
    table = engine._table
    affinity = {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
        {"labelSelector": {"matchLabels": {"app": "web"}}, "topologyKey": "kubernetes.io/hostname"}]}}
    kinds = [make_pod("a", requests={"cpu": "300m"}, labels={"app": "web"}, affinity=affinity),
             make_pod("b", requests={"cpu": "1", "memory": "1Gi"}, labels={"app": "web"}, host_ports=[8080])]
    signatures = {}
    for kind in kinds:
        for i in range(6):
            name = f"{kind.name}{i % 4}"  # labels met before again (i = 4, 5): their signature again
            pod = kind.replace(name=f"{kind.name}-{i}", uid=f"{kind.name}-{i}",
                               labels={**kind.labels, "pod-name": name})
            got = table._derive(pod)
            want = table._compute_derived(pod, got.keep)
            assert (got.shape, got.affinity_signature, got.flags, got.host_ports, got.signature) == (
                want.shape, want.affinity_signature, want.flags, want.host_ports, want.signature), (kind.name, i)
            assert got.signature == signatures.setdefault(name, got.signature)
    assert len(set(signatures.values())) == 8  # a signature of its own per distinct label set
