"""The group cycle's members on the fused compiled cycle agree with the plugin-call path.

A pod group's members run one after the other with the earlier ones assumed in the snapshot (the
cache's node table) and everything reverted at the end; the compiled cycle reads that table, so a
member sees its group's assumptions exactly as on the plugin-call path, and none after a revert.
Seeded random clusters with gangs (identical members, node selectors, zone spreading and
anti-affinity for the CYCLE forms, gangs too big for the cluster, lower-priority pods to preempt)
run to the end twice, ``use_compiled_cycle`` on and off: every pod ends the same (status, node,
message, nominated node) and every PodGroup has the same conditions. The same with
TopologyAwareWorkloadScheduling on and PodGroups kept within a zone or a rack (each placement's
members on the fused cycle over the placement's rows).
"""
from __future__ import annotations

import random

import pytest

from fastsched import Scheduler, load_config
from fastsched.clock import VirtualClock
from fastsched.features import FeatureGates

ZONES = ("zone-a", "zone-b", "zone-c")
SEEDS = range(24)


TAS_SEEDS = range(100, 112)


def _gates(tas: bool = False) -> FeatureGates:
    return FeatureGates({"GenericWorkload": True, **({"TopologyAwareWorkloadScheduling": True} if tas else {})})


def _node(i: int, rng: random.Random) -> dict:
    labels = {"kubernetes.io/hostname": f"node-{i}", "topology.kubernetes.io/zone": rng.choice(ZONES)}
    if rng.random() < 0.8:
        labels["rack"] = f"rack-{rng.randint(0, 3)}"
    if rng.random() < 0.3:
        labels["disk"] = "ssd"
    spec: dict = {}
    if rng.random() < 0.1:
        spec["taints"] = [{"key": "dedicated", "value": "x", "effect": "NoSchedule"}]
    cpu = rng.choice(("2", "4", "8"))
    mem = rng.choice(("8Gi", "16Gi"))
    alloc = {"cpu": cpu, "memory": mem, "pods": "110"}
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": f"node-{i}", "labels": labels},
            "spec": spec, "status": {"capacity": alloc, "allocatable": alloc}}


def _pod(name: str, cpu: str, *, node: str | None = None, group: str | None = None, priority: int | None = None,
         labels: dict | None = None, extra: dict | None = None) -> dict:
    spec: dict = {"containers": [{"name": "c", "image": "registry.k8s.io/pause:3.10.1",
                                  "resources": {"requests": {"cpu": cpu, "memory": "256Mi"}}}]}
    if node:
        spec["nodeName"] = node
    if group:
        spec["schedulingGroup"] = {"podGroupName": group}
    if priority is not None:
        spec["priorityClassName"] = f"prio-{priority}"
    spec.update(extra or {})
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "default",
                                                            "labels": labels or {}}, "spec": spec}



def run_scenario(s: Scheduler, sc: dict) -> tuple[list, list]:
    """Load a gang scenario into ``s`` and run it to its end: each pod's (key, status, node,
    message, nominated node) and each PodGroup's conditions (name, [(type, status, reason,
    message)]), what the path comparisons of these tests compare."""
    s.add(sc["objects"])
    s.add(sc["nodes"])
    if sc["running"]:
        s.add(sc["running"])
    s.add(sc["incoming"])
    results = s.run(until=1e9 + 600)
    pods = [(r.pod.key, r.status, r.node_name, r.message, r.nominated_node_name) for r in results]
    conditions = [(pg["metadata"]["name"], [(c["type"], c["status"], c["reason"], c["message"])
                                            for c in (pg.get("status") or {}).get("conditions") or ()])
                  for pg in s.objects("PodGroup")]
    return pods, conditions

def scenario(seed: int, tas: bool = False) -> dict:
    """``tas``: TopologyAwareWorkloadScheduling on, most PodGroups kept within a zone or a rack."""
    rng = random.Random(seed)
    objects: list[dict] = [{"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass",
                            "metadata": {"name": f"prio-{p}"}, "value": p} for p in (10, 100)]
    nodes = [_node(i, rng) for i in range(rng.randint(6, 30))]
    running = [_pod(f"run-{i}", rng.choice(("500m", "1", "2")), node=rng.choice(nodes)["metadata"]["name"],
                    priority=10, labels={"app": "low"})
               for i in range(rng.randint(0, 3 * len(nodes)))]
    incoming: list[dict] = []
    for k in range(rng.randint(1, 4)):
        name = f"gang-{k}"
        members = rng.randint(2, 40)
        min_count = max(1, members + rng.choice((0, 0, 0, -1, 1)))
        priority = rng.choice((None, 100, 100))
        pg_spec: dict = {"schedulingPolicy": {"gang": {"minCount": min_count}} if rng.random() < 0.8
                         else {"basic": {}}}
        if priority is not None:
            pg_spec["priorityClassName"] = f"prio-{priority}"
        if tas and rng.random() < 0.8:
            pg_spec["schedulingConstraints"] = {"topology": [{"key": rng.choice(("topology.kubernetes.io/zone",
                                                                                  "rack"))}]}
        objects.append({"apiVersion": "scheduling.k8s.io/v1beta1", "kind": "PodGroup",
                        "metadata": {"name": name, "namespace": "default"}, "spec": pg_spec})
        labels = {"app": name}
        extra: dict = {}
        shape = rng.choice(("plain", "plain", "selector", "spread", "anti", "toleration"))
        if shape == "selector":
            extra["nodeSelector"] = {"disk": "ssd"}
        elif shape == "spread":
            extra["topologySpreadConstraints"] = [{
                "maxSkew": rng.choice((1, 2)), "topologyKey": "topology.kubernetes.io/zone",
                "whenUnsatisfiable": rng.choice(("DoNotSchedule", "ScheduleAnyway")),
                "labelSelector": {"matchLabels": labels}}]
        elif shape == "anti":
            extra["affinity"] = {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
                {"topologyKey": "kubernetes.io/hostname", "labelSelector": {"matchLabels": labels}}]}}
        elif shape == "toleration":
            extra["tolerations"] = [{"key": "dedicated", "operator": "Exists", "effect": "NoSchedule"}]
        cpu = rng.choice(("100m", "250m", "500m", "1", "1500m"))
        for m in range(members):
            incoming.append(_pod(f"{name}-{m}", cpu, group=name, priority=priority, labels=labels, extra=extra))
        if rng.random() < 0.3:
            incoming.append(_pod(f"plain-{k}", rng.choice(("250m", "1")), labels={"app": "plain"}))
    return {"seed": seed, "objects": objects, "nodes": nodes, "running": running, "incoming": incoming, "tas": tas}


def run(sc: dict, compiled: bool) -> tuple[list, list, int, list]:
    gates = _gates(sc.get("tas", False))
    s = Scheduler(load_config(None, feature_gates=gates), seed=sc["seed"], clock=VirtualClock(start=1e9),
                  feature_gates=gates)
    s.use_compiled_cycle = compiled
    fused_in_groups = 0
    algorithm = s._pod_group_pod_algorithm

    def counted(fw, placement_state, member):
        nonlocal fused_in_groups
        before = fw.compiled_cycle.fused_cycles if fw.compiled_cycle is not None else 0
        out = algorithm(fw, placement_state, member)
        fused_in_groups += (fw.compiled_cycle.fused_cycles if fw.compiled_cycle is not None else 0) - before
        return out

    s._pod_group_pod_algorithm = counted
    pods, conditions = run_scenario(s, sc)
    placed = sorted((p.key, p.node_name) for p in s.cluster.pods.values())  # victims gone
    return pods, conditions, fused_in_groups, placed


@pytest.mark.parametrize("seed, tas", [(seed, False) for seed in SEEDS] + [(seed, True) for seed in TAS_SEEDS])
def test_compiled_members_end_as_plugin_path_members(seed, tas):
    """``tas``: inside a placement the fused cycle takes the placement's rows as its candidates."""
    sc = scenario(seed, tas)
    plugin_pods, plugin_conditions, plugin_fused, plugin_placed = run(sc, compiled=False)
    pods, conditions, _, placed = run(sc, compiled=True)
    assert plugin_fused == 0
    assert pods == plugin_pods
    assert conditions == plugin_conditions
    assert placed == plugin_placed


def test_the_tas_scenarios_exercise_the_compiled_cycle_in_placements():
    fused = failed = 0
    for seed in TAS_SEEDS:
        sc = scenario(seed, tas=True)
        pods, _, f, _ = run(sc, compiled=True)
        fused += f
        failed += sum(1 for p in pods if "placements are available" in (p[3] or ""))
    assert fused > 100 and failed > 0, (fused, failed)


def test_the_scenarios_exercise_the_compiled_cycle_in_groups():
    """The comparison compares something: most members took the fused cycle, gangs were bound,
    gangs failed, and running pods were preempted."""
    fused = members = bound = failed = victims = 0
    for seed in SEEDS:
        sc = scenario(seed)
        pods, _, f, placed = run(sc, compiled=True)
        victims += len(sc["running"]) - sum(1 for key, _ in placed if "/run-" in key)
        fused += f
        members += sum(1 for p in sc["incoming"] if p["spec"].get("schedulingGroup"))
        bound += sum(1 for p in pods if p[1] == "Scheduled" and "/gang-" in p[0])
        failed += sum(1 for p in pods if p[1] != "Scheduled" and "/gang-" in p[0])
    assert fused > members // 2, (fused, members)
    assert bound > 0 and failed > 0 and victims > 0, (bound, failed, victims)
