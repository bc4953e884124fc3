"""The compiled cycle with nominated pods (upstream's RunFilterPluginsWithNominatedPods) places every
pod exactly as the plugin-call path: same node, status, message and attempts, same round-robin index
and RNG state, on seeded random clusters where pods of several priorities are nominated to a third of
the nodes. The nominated pods carry labels that the incoming pods' affinity terms and spread
constraints select, requests and host ports, so the PreFilter extensions' AddPod and the resource and
port checks change verdicts on the nodes they are nominated to; some incoming pods are nominated
pods themselves (a pod never counts its own nomination)."""
import random

import pytest

from fastsched import load_config
from fastsched.framework.types import PodInfo
from fastsched.plugins.interpodaffinity.tests.generators import (NAMESPACES, random_affinity_cluster,
                                                                 random_incoming_pod)
from fastsched.plugins.podtopologyspread.tests.test_pod_topology_spread import random_spread_pod
from fastsched.scheduler import Scheduler
from fastsched.scheduler.backend.queue.nominator import Nominator
from fastsched.testing import RANDOM_RUNTIME_CLASS, make_node, make_pod, random_pod

V1 = {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration"}
CONFIGS = {
    "default": {},
    "score-all-nodes": {"percentageOfNodesToScore": 100},
    "few-nodes": {"percentageOfNodesToScore": 1},
}
PRIORITIES = (-10, 0, 0, 100, 1000)


def _unvalidated(pod):
    """``pod`` as make_pod's pods: not validated (the generators hold objects an API server refuses)."""
    pod.admitted = True
    return pod


def _any_pod(rng: random.Random, i: int, kind: str):
    """An affinity pod, a spread pod or a plain one (requests, host ports, node affinity), with a
    random priority and a uid of its own."""
    roll = rng.random()
    if roll < 0.35:
        pod = random_incoming_pod(rng, i)
    elif roll < 0.65:
        pod = random_spread_pod(rng, i).replace(owner_references=())  # the generator's has no uid
    else:
        pod = random_pod(rng, i)
    name = f"{kind}-{i}"
    return _unvalidated(pod.replace(name=name, uid=f"uid-{name}", priority=rng.choice(PRIORITIES)))


def _nominations(rng: random.Random, node_names: list[str], count: int) -> list[tuple[object, str]]:
    """(pod, node) for ``count`` nominated pods on about a third of the nodes."""
    nodes = rng.sample(node_names, k=max(1, len(node_names) // 3))
    return [(_any_pod(rng, i, "nominated"), rng.choice(nodes)) for i in range(count)]


def _run(config: dict, seed: int, compiled: bool, *, nodes: int = 120, running: int = 240, incoming: int = 140):
    node_list, pods = random_affinity_cluster(seed, nodes, running)
    rng = random.Random(seed * 13 + 5)
    s = Scheduler(load_config({**V1, **config}), seed=seed)
    s.use_compiled_cycle = compiled
    s.add(list(NAMESPACES.values()))
    s.add(RANDOM_RUNTIME_CLASS)  # (random_pod's pods with an overhead name it)
    s.add_nodes(node_list)
    s.add_pods(pods)
    (fw,) = s.profiles.values()
    # Pods nominated by earlier preemptions, not in this run's queue (the nominator holds them).
    nominator = Nominator()
    nominated = _nominations(rng, [n.name for n in node_list], nodes // 2)
    for pod, node in nominated:
        nominator.add_nominated_pod(PodInfo(pod.replace(nominated_node_name=node)))
    fw.set_pod_nominator(nominator)
    batch = [_any_pod(rng, i, "incoming") for i in range(incoming)]
    # nominated pods themselves, their nominations not yet in their status
    for pod, _ in rng.sample(nominated, k=len(nominated) // 5):
        batch.insert(rng.randrange(len(batch)), _unvalidated(pod.replace(nominated_node_name="")))
    s.add_pods(batch)
    results = s.run()
    # the nominations change (some go, new ones come), then the nodes (a node goes, its row is
    # reused by the next node added, new nodes get nominations); pods are scheduled after each
    for pod, _ in rng.sample(nominated, k=len(nominated) // 3):
        nominator.delete_nominated_pod_if_exists(pod)
    names = [n.name for n in node_list]
    for pod, node in _nominations(rng, names, nodes // 4):
        nominator.add_nominated_pod(PodInfo(pod.replace(name=f"{pod.name}-b", uid=f"{pod.uid}-b",
                                                        nominated_node_name=node)))
    s.add_pods([_any_pod(rng, incoming + i, "incoming") for i in range(incoming // 3)])
    results = [*results, *s.run()]
    # a pod nominated to a node not there yet, which fills it; the node comes after a nominated
    # node went (the new one takes its row) and pods were scheduled (the nominations are the same)
    s.delete_node(rng.choice([name for name in names if nominator.nominated_pods_for_node(name)]))
    holder = make_pod("late-holder", uid="uid-late-holder", cpu="4", memory="8Gi", priority=max(PRIORITIES))
    nominator.add_nominated_pod(PodInfo(holder.replace(nominated_node_name="late")))
    s.add_pods([_any_pod(rng, 2 * incoming + i, "incoming") for i in range(incoming // 4)])
    results = [*results, *s.run()]
    s.add_nodes([make_node("late", cpu="4", memory="8Gi", pods="110")])
    s.add_pods([_any_pod(rng, 3 * incoming + i, "incoming") for i in range(incoming // 4)])
    results = [*results, *s.run()]
    outcome = [(r.pod.name, r.node_name, r.status, r.message, r.attempts) for r in results]
    return s, outcome, s.next_start_node_index, s.rng.bit_generator.state


def _engine(s):
    (fw,) = s.profiles.values()
    return fw.compiled_cycle


#: seeds 1 and 2 under every config; seed 3 (preemption-heavy: ~9,500 attempts, three times the
#: others', ~30 s a config) under the default config only, to keep the suite within its budget
CASES = [(config, seed) for config in sorted(CONFIGS) for seed in (1, 2)] + [("default", 3)]


@pytest.mark.parametrize(("config", "seed"), CASES)
def test_nominated_pods_place_as_the_plugin_call_path(config, seed):
    fused, *got = _run(CONFIGS[config], seed, True)
    plain, *want = _run(CONFIGS[config], seed, False)
    assert got[0] == want[0]
    assert got[1:] == want[1:]
    engine = _engine(fused)
    # the kernel served the pods while nominations stood, and judged nominated rows for them
    assert engine.fused_cycles > 50, (engine.fused_cycles, engine.declined_cycles)
    assert engine.nominated_cycles > 30, engine.nominated_cycles
    assert _engine(plain).fused_cycles == 0


def test_a_nominated_pod_of_higher_priority_takes_the_room_of_lower_ones():
    """One node fits one more pod: a nominated pod of priority >= the incoming pod's holds it (the
    other node wins), one of lower priority does not, and a pod's own nomination does not count."""
    def run(nominated_priority: int, incoming_uid: str = "uid-in") -> str:
        s = Scheduler(load_config(V1), seed=1)
        s.add_nodes([make_node("roomy", cpu="4", memory="8Gi"), make_node("tight", cpu="2", memory="8Gi")])
        s.add_pods([make_pod("busy", node_name="roomy", cpu="2500m")])  # roomy: 1.5 CPUs left, tight: 2
        nominator = Nominator()
        preemptor = make_pod("preemptor", uid="uid-pre", cpu="1500m", priority=nominated_priority)
        nominator.add_nominated_pod(PodInfo(preemptor.replace(nominated_node_name="tight")))
        (fw,) = s.profiles.values()
        fw.set_pod_nominator(nominator)
        s.add_pods([make_pod("in", uid=incoming_uid, cpu="1", priority=10)])
        (result,) = s.run()
        engine = _engine(s)
        assert engine.fused_cycles == 1
        return result.node_name, engine.nominated_cycles

    assert run(10) == ("roomy", 1)           # equal priority: tight has 0.5 CPU with the preemptor
    assert run(11) == ("roomy", 1)           # higher
    assert run(9) == ("tight", 0)            # lower: ignored (tight, the emptier node, scores higher)
    assert run(10, "uid-pre") == ("tight", 0)  # its own nomination


def test_no_nominations_no_index_asked(monkeypatch):
    """With nobody nominated a compiled cycle has no row to judge twice and asks the table's
    NominationIndex nothing (issue 29: selecting the nominated pods for each pod was a quarter of
    SchedulingBasic's run()); once a pod is nominated, the cycles ask it again."""
    from fastsched.runtime import nominated

    asked = []
    real_get = nominated.NominationIndex.get
    def counted_get(self, *args, **kwargs):
        asked.append(1)
        return real_get(self, *args, **kwargs)

    monkeypatch.setattr(nominated.NominationIndex, "get", counted_get)
    s = Scheduler(load_config(V1), seed=1)
    s.add_nodes([make_node(f"n{i}", cpu="4", memory="8Gi") for i in range(4)])
    s.add_pods([make_pod(f"p{i}", uid=f"uid-p{i}", cpu="1") for i in range(6)])
    assert all(r.status == "Scheduled" for r in s.run())
    engine = _engine(s)
    assert engine.fused_cycles == 6 and engine.nominated_cycles == 0
    assert asked == []
    (fw,) = s.profiles.values()
    fw.pod_nominator.add_nominated_pod(PodInfo(make_pod("pre", uid="uid-pre", cpu="1").replace(
        nominated_node_name="n0")))
    s.add_pods([make_pod("q", uid="uid-q", cpu="1")])
    s.run()
    assert engine.fused_cycles == 7 and asked


def test_rows_with_no_nominations_left_are_the_index_answer():
    """With nothing nominated the compiled cycle answers no rows without asking the nominations'
    index (every gang member while nothing preempts); a nomination that comes, and goes again,
    is seen in between: the rows are those the index gives for the same pod at every step.
    (Fails when the shortcut is taken with a nominated node left.)"""
    s = Scheduler(load_config(V1), seed=1)
    s.add_nodes([make_node("roomy", cpu="4", memory="8Gi"), make_node("tight", cpu="2", memory="8Gi")])
    nominator = Nominator()
    (fw,) = s.profiles.values()
    fw.set_pod_nominator(nominator)
    s.add_pods([make_pod("busy", node_name="roomy", cpu="2500m")])
    engine = _engine(s)
    table = s.cache.update_snapshot().table
    incoming = make_pod("in", uid="uid-in", cpu="1", priority=10)

    def indexed() -> list:
        from fastsched.runtime.nominated import NominatedUsage, table_state
        rows = NominatedUsage(fw, table_state(table).nominations, incoming, table, len(table.resource_names)).counted()[0]
        return sorted(set(rows.tolist()))

    preemptors = [make_pod(f"pre{i}", uid=f"uid-pre{i}", cpu="1500m", priority=20) for i in range(2)]
    steps = [[], [(preemptors[0], "tight")], [(preemptors[0], "tight"), (preemptors[1], "roomy")],
             [(preemptors[1], "roomy")], []]
    seen = []
    for step in steps:
        for pod in preemptors:
            nominator.delete_nominated_pod_if_exists(pod)
        for pod, node in step:
            nominator.add_nominated_pod(PodInfo(pod.replace(nominated_node_name=node)))
        got = engine._nominated_rows(incoming, table)
        assert sorted(got) == indexed()
        seen.append(len(got))
    assert seen == [0, 1, 2, 1, 0]
    # and the cycle places as the plugin-call path with the nominations gone
    s.add_pods([incoming])
    (result,) = s.run()
    assert result.node_name == "tight" and engine.fused_cycles == 1 and engine.nominated_cycles == 0


def test_a_pod_only_nominated_nodes_could_fit_takes_the_plugin_call_path():
    """The walk with the nominated rows masked finds no node: the compiled cycle declines without
    judging those rows, and the plugin-call path decides as upstream's two passes do: no room next
    to the nomination (the pod fails), or room for both (the pod goes there)."""
    def run(compiled: bool, tight_cpu: str) -> tuple:
        s = Scheduler(load_config(V1), seed=1)
        s.use_compiled_cycle = compiled
        s.add_nodes([make_node("full", cpu="2", memory="8Gi"), make_node("tight", cpu=tight_cpu, memory="8Gi")])
        # full: 0.5 CPU left, held by a pod the incoming one cannot preempt (same priority)
        s.add_pods([make_pod("busy", node_name="full", cpu="1500m", priority=10)])
        nominator = Nominator()
        preemptor = make_pod("preemptor", uid="uid-pre", cpu="1500m", priority=10)
        nominator.add_nominated_pod(PodInfo(preemptor.replace(nominated_node_name="tight")))
        (fw,) = s.profiles.values()
        fw.set_pod_nominator(nominator)
        s.add_pods([make_pod("in", uid="uid-in", cpu="1", priority=10)])
        (result,) = s.run()
        engine = _engine(s)
        return (result.node_name, result.status, result.message), engine.fused_cycles, engine.declined_cycles

    for tight_cpu, node in (("2", None), ("3", "tight")):  # 0.5 CPU left beside the preemptor, or 1.5
        got, fused, declined = run(True, tight_cpu)
        want, _, _ = run(False, tight_cpu)
        assert got == want and got[0] == node, (tight_cpu, got, want)
        assert (fused, declined) == (0, 1), (tight_cpu, fused, declined)


def test_first_rows_is_first_appearance_order():
    """compiled_cycle.first_rows (the nominated rows of an attempt): each row once, in the order
    of first appearance, as dict.fromkeys gives it, whether a node's pods are adjacent (the
    nomination arrays' layout: one run per node) or not (a row starting two runs)."""
    import numpy as np

    from fastsched.runtime.compiled_cycle import first_rows

    rng = random.Random(29)
    kinds = {"runs": 0, "split": 0}
    for _ in range(3000):
        n_nodes = rng.randint(1, 12)
        nodes = rng.sample(range(40), n_nodes)
        if rng.random() < 0.5:  # one run per node
            rows = [r for r in nodes for _ in range(rng.randint(1, 4))]
        else:  # arbitrary order: runs may repeat
            rows = [rng.choice(nodes) for _ in range(rng.randint(1, 20))]
        arr = np.array(rows, dtype=np.int64)
        want = list(dict.fromkeys(rows))
        kinds["runs" if len(want) == sum(1 for i, r in enumerate(rows) if i == 0 or rows[i - 1] != r) else "split"] += 1
        found, index = first_rows(arr)
        assert found == want and type(found) is list and all(type(r) is int for r in found)
        assert index.dtype == np.intp and index.tolist() == want
        assert index is not arr and arr.tolist() == rows  # the caller's array neither shared nor changed
    assert min(kinds.values()) > 500, kinds


def test_rows_asked_again_in_a_cycle_are_the_index_answer():
    """The cycle's state asking again (diagnose after the walk) gets the same rows without the
    index; a nomination added or withdrawn between two asks with the same state, another pod
    asking with it, or another state, are answered anew: always the rows the index gives.
    (Fails when the repeat's shortcut ignores the nominator's version or the pod.)"""
    from fastsched.framework.cycle_state import CycleState
    from fastsched.runtime.nominated import NominatedUsage, table_state

    s = Scheduler(load_config(V1), seed=1)
    s.add_nodes([make_node(f"n{i}", cpu="4", memory="8Gi") for i in range(6)])
    nominator = Nominator()
    (fw,) = s.profiles.values()
    fw.set_pod_nominator(nominator)
    engine = _engine(s)
    table = s.cache.update_snapshot().table
    low = make_pod("low", uid="uid-low", cpu="1", priority=10)
    high = make_pod("high", uid="uid-high", cpu="1", priority=30)

    def indexed(pod) -> list:
        rows = NominatedUsage(fw, table_state(table).nominations, pod, table, len(table.resource_names)).counted()[0]
        return list(dict.fromkeys(rows.tolist()))

    rng = random.Random(5)
    preemptors = [make_pod(f"pre{i}", uid=f"uid-pre{i}", cpu="1", priority=20) for i in range(5)]
    states = [CycleState(), CycleState()]
    for _ in range(60):
        if rng.random() < 0.5:
            pod = rng.choice(preemptors)
            if rng.random() < 0.3:
                nominator.delete_nominated_pod_if_exists(pod)
            else:
                nominator.delete_nominated_pod_if_exists(pod)
                nominator.add_nominated_pod(PodInfo(pod.replace(nominated_node_name=f"n{rng.randrange(6)}")))
        pod = rng.choice((low, low, high))
        state = rng.choice(states)
        for _ in range(2):  # asked twice, as the walk and diagnose ask
            got = engine._nominated_rows(pod, table, state)
            assert list(got) == indexed(pod)
