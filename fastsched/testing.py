"""Test utilities: manifest builders, seeded random clusters, and the batch-vs-per-node check.

Public so that users writing batch plugins can check them the way the in-tree plugins are checked:
:func:`assert_paths_equivalent` runs a profile's Filter and Score on a snapshot twice — through the
batch methods over a NodeBatch and through the per-node methods over a plain list of NodeInfo views
— and requires identical codes, reasons, plugins and scores.
"""
from __future__ import annotations

import random
import time
from typing import Any, Iterable, Sequence

import numpy as np

from .api import Node, Pod
from .config.types import KubeSchedulerProfile, Plugin, PluginConfig, Plugins, PluginSet
from .framework.cycle_state import CycleState
from .framework.status import Code
from .framework.types import NodeScore
from .snapshot import Snapshot, build_snapshot

ZONES = ("zone-a", "zone-b", "zone-c")
REGIONS = ("region-1", "region-2")
IMAGES = (("nginx:1.25", 60 * 2**20), ("busybox", 2 * 2**20), ("redis:7", 120 * 2**20),
          ("registry.k8s.io/pause:3.9", 700 * 2**10), ("tensorflow/tensorflow:2.15.0-gpu", 3 * 2**30),
          ("postgres:16", 400 * 2**20))
TAINT_POOL = (
    {"key": "dedicated", "value": "gpu", "effect": "NoSchedule"},
    {"key": "dedicated", "value": "infra", "effect": "NoExecute"},
    {"key": "spot", "value": "", "effect": "PreferNoSchedule"},
    {"key": "maintenance", "effect": "PreferNoSchedule"},
    {"key": "node.kubernetes.io/unschedulable", "effect": "NoSchedule"},
    {"key": "flaky", "value": "true", "effect": "NoSchedule"},
)


# ------------------------------------------------------------------------------------------------
# manifest builders
# ------------------------------------------------------------------------------------------------
def pod_manifest(name: str = "p", namespace: str = "default", *, uid: str | None = None,
                 cpu: str | None = None, memory: str | None = None, requests: dict | None = None,
                 labels: dict | None = None, priority: int | None = None, node_name: str | None = None,
                 images: Sequence[str] = ("busybox",), host_ports: Sequence[int] = (), **spec: Any) -> dict:
    """A Pod manifest; ``cpu``/``memory``/``requests`` go to the first container."""
    req = dict(requests or {})
    if cpu is not None:
        req["cpu"] = cpu
    if memory is not None:
        req["memory"] = memory
    containers = []
    for i, image in enumerate(images or ("busybox",)):
        c: dict = {"name": f"c{i}", "image": image}
        if i == 0 and req:
            c["resources"] = {"requests": req}
            # the API server requires limit == request for resources that cannot be overcommitted
            fixed = {name: amount for name, amount in req.items() if _not_overcommitable(name)}
            if fixed:
                c["resources"]["limits"] = fixed
        if i == 0 and host_ports:
            c["ports"] = [{"containerPort": p, "hostPort": p} for p in host_ports]
        containers.append(c)
    s: dict = {"containers": containers, **spec}
    if priority is not None:
        s["priority"] = priority
    if node_name is not None:
        s["nodeName"] = node_name
    meta: dict = {"name": name, "namespace": namespace}
    if uid:
        meta["uid"] = uid
    if labels:
        meta["labels"] = dict(labels)
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": s}


def _not_overcommitable(resource_name: str) -> bool:
    """Extended resources (``vendor.com/x`` outside ``kubernetes.io``) and hugepages."""
    if resource_name.startswith("hugepages-"):
        return True
    domain = resource_name.split("/", 1)[0] if "/" in resource_name else ""
    return bool(domain) and domain != "kubernetes.io" and not domain.endswith(".kubernetes.io")


def node_manifest(name: str = "n", *, cpu: str = "4", memory: str = "8Gi", pods: str = "110",
                  extra: dict | None = None, labels: dict | None = None, taints: Sequence[dict] = (),
                  unschedulable: bool = False, images: Sequence[tuple[str, int]] = ()) -> dict:
    """A Node manifest with the given allocatable (== capacity)."""
    alloc = {"cpu": cpu, "memory": memory, "pods": pods, **(extra or {})}
    meta: dict = {"name": name, "labels": {"kubernetes.io/hostname": name, **(labels or {})}}
    spec: dict = {}
    if taints:
        spec["taints"] = [dict(t) for t in taints]
    if unschedulable:
        spec["unschedulable"] = True
    status: dict = {"allocatable": dict(alloc), "capacity": dict(alloc)}
    if images:
        status["images"] = [{"names": [n], "sizeBytes": size} for n, size in images]
    return {"apiVersion": "v1", "kind": "Node", "metadata": meta, "spec": spec, "status": status}


def make_pod(*args: Any, **kwargs: Any) -> Pod:
    """A Pod from :func:`pod_manifest`. Like upstream's ``st.MakePod`` it skips the API server's
    validation, so plugin tests can hold objects a cluster would refuse."""
    return Pod.from_manifest(pod_manifest(*args, **kwargs), validate=False)


def make_node(*args: Any, **kwargs: Any) -> Node:
    """A Node from :func:`node_manifest`, unvalidated as :func:`make_pod`."""
    return Node.from_manifest(node_manifest(*args, **kwargs), validate=False)


# ------------------------------------------------------------------------------------------------
# random clusters
# ------------------------------------------------------------------------------------------------
def random_node(rng: random.Random, i: int) -> Node:
    zone = rng.choice(ZONES)
    labels = {"topology.kubernetes.io/zone": zone, "topology.kubernetes.io/region": rng.choice(REGIONS)}
    if rng.random() < 0.1:  # some nodes lack topology labels
        labels.pop("topology.kubernetes.io/zone")
    if rng.random() < 0.6:
        labels["disktype"] = rng.choice(("ssd", "hdd", "nvme"))
    if rng.random() < 0.5:
        labels["tier"] = str(rng.randint(0, 5)) if rng.random() < 0.9 else "high"
    if rng.random() < 0.3:
        labels["gpu"] = "true"
    extra = {}
    if rng.random() < 0.3:
        extra["nvidia.com/gpu"] = str(rng.choice((0, 1, 2, 4, 8)))
    if rng.random() < 0.5:
        extra["ephemeral-storage"] = rng.choice(("0", "10Gi", "100Gi"))
    if rng.random() < 0.1:
        extra["hugepages-2Mi"] = rng.choice(("0", "1Gi"))
    taints = rng.sample(TAINT_POOL, k=rng.choice((0, 0, 0, 1, 1, 2)))
    images = rng.sample(IMAGES, k=rng.randint(0, 4))
    return make_node(f"node-{i:05d}", cpu=rng.choice(("0", "1", "2", "4", "8", "16", "3500m")),
                     memory=rng.choice(("0", "1Gi", "4Gi", "16Gi", "64Gi")),
                     pods=rng.choice(("0", "1", "3", "10", "110")), extra=extra, labels=labels,
                     taints=taints, unschedulable=rng.random() < 0.05, images=images)


def _random_requests(rng: random.Random, scale: float = 1.0) -> dict:
    req = {}
    if rng.random() < 0.8:
        req["cpu"] = rng.choice(("0", "50m", "100m", "250m", "500m", "1", "2", "6"))
    if rng.random() < 0.8:
        req["memory"] = rng.choice(("0", "64Mi", "256Mi", "1Gi", "3Gi", "20Gi"))
    if rng.random() < 0.15:
        req["nvidia.com/gpu"] = str(rng.choice((1, 2, 3)))
    if rng.random() < 0.15:
        req["ephemeral-storage"] = rng.choice(("1Gi", "50Gi"))
    if rng.random() < 0.05:
        req["example.com/foo"] = "1"
    return req


def random_existing_pod(rng: random.Random, i: int, node_name: str) -> Pod:
    labels = {"app": rng.choice(("web", "db", "cache", "batch"))}
    if rng.random() < 0.5:
        labels["team"] = rng.choice(("a", "b"))
    ports = [rng.choice((80, 443, 8080))] if rng.random() < 0.1 else []
    return make_pod(f"existing-{i:05d}", namespace=rng.choice(("default", "default", "prod")),
                    requests=_random_requests(rng), labels=labels, node_name=node_name,
                    priority=rng.choice((None, 0, 100, 1000)), host_ports=ports,
                    images=rng.sample([n for n, _ in IMAGES], k=rng.randint(1, 2)))


def random_pod(rng: random.Random, i: int = 0) -> Pod:
    """An incoming pod exercising every per-node plugin feature at random."""
    spec: dict = {}
    if rng.random() < 0.3:
        spec["nodeSelector"] = {"disktype": rng.choice(("ssd", "hdd"))}
    elif rng.random() < 0.1:
        spec["nodeSelector"] = {}
    affinity: dict = {}
    if rng.random() < 0.3:
        ops = [
            {"key": "tier", "operator": rng.choice(("Gt", "Lt")), "values": [str(rng.randint(0, 5))]},
            {"key": "topology.kubernetes.io/zone", "operator": rng.choice(("In", "NotIn")),
             "values": rng.sample(ZONES, k=rng.randint(1, 2))},
            {"key": "gpu", "operator": rng.choice(("Exists", "DoesNotExist"))},
        ]
        terms = [{"matchExpressions": rng.sample(ops, k=rng.randint(1, 2))} for _ in range(rng.randint(1, 2))]
        if rng.random() < 0.2:
            terms.append({"matchFields": [{"key": "metadata.name", "operator": "In",
                                           "values": [f"node-{rng.randint(0, 50):05d}"]}]})
        affinity.setdefault("nodeAffinity", {})["requiredDuringSchedulingIgnoredDuringExecution"] = {
            "nodeSelectorTerms": terms}
    if rng.random() < 0.4:
        pref = [{"weight": rng.randint(0, 100), "preference": {"matchExpressions": [
            {"key": rng.choice(("disktype", "tier", "gpu")), "operator": "Exists"}]}}
            for _ in range(rng.randint(1, 3))]
        affinity.setdefault("nodeAffinity", {})["preferredDuringSchedulingIgnoredDuringExecution"] = pref
    if affinity:
        spec["affinity"] = affinity
    if rng.random() < 0.5:
        tols = []
        for t in rng.sample(TAINT_POOL, k=rng.randint(1, 3)):
            tol = {"key": t["key"], "operator": rng.choice(("Equal", "Exists"))}
            if tol["operator"] == "Equal":
                tol["value"] = t.get("value", "")
            if rng.random() < 0.7:
                tol["effect"] = t["effect"]
            tols.append(tol)
        if rng.random() < 0.05:
            tols.append({"operator": "Exists"})
        spec["tolerations"] = tols
    if rng.random() < 0.05:
        spec["nodeName"] = f"node-{rng.randint(0, 30):05d}"
    ports = [rng.choice((80, 443, 9090))] if rng.random() < 0.2 else []
    images = rng.sample([n for n, _ in IMAGES], k=rng.randint(1, 3))
    if rng.random() < 0.2:
        spec["overhead"] = {"cpu": "100m", "memory": "64Mi"}
    return make_pod(f"incoming-{i}", requests=_random_requests(rng), host_ports=ports, images=images,
                    labels={"app": rng.choice(("web", "db"))}, **spec)


def random_cluster(seed: int, n_nodes: int = 200, n_pods: int = 400) -> tuple[list[Node], list[Pod]]:
    """Seeded nodes and running pods (each pod bound to a random node)."""
    rng = random.Random(seed)
    nodes = [random_node(rng, i) for i in range(n_nodes)]
    pods = [random_existing_pod(rng, i, rng.choice(nodes).name) for i in range(n_pods)]
    return nodes, pods


def random_snapshot(seed: int, n_nodes: int = 200, n_pods: int = 400) -> Snapshot:
    nodes, pods = random_cluster(seed, n_nodes, n_pods)
    return build_snapshot(nodes, pods)


# ------------------------------------------------------------------------------------------------
# batch vs per-node
# ------------------------------------------------------------------------------------------------
def single_plugin_profile(plugin: str, *, points: Iterable[str] | None = None, args: Any = None,
                          weight: int = 1, queue_sort: str = "PrioritySort",
                          bind: str = "DefaultBinder") -> KubeSchedulerProfile:
    """A profile that enables ``plugin`` through MultiPoint (or only at ``points``)."""
    plugins = Plugins()
    plugins.queue_sort = PluginSet([Plugin(queue_sort)])
    plugins.bind = PluginSet([Plugin(bind)])
    if points is None:
        plugins.multi_point = PluginSet([Plugin(plugin, weight)])
    else:
        for p in points:
            getattr(plugins, p).enabled.append(Plugin(plugin, weight if p == "score" else 0))
    pc = [PluginConfig(plugin, args)] if args is not None else []
    return KubeSchedulerProfile(scheduler_name="test", plugins=plugins, plugin_config=pc)


def assert_paths_equivalent(fw: Any, snapshot: Snapshot, pod: Pod) -> dict:
    """Run PreFilter, Filter, PreScore and Score both ways; raise AssertionError on any difference.

    Returns a small summary (feasible count, whether scores ran) so callers can check the case
    exercised something.
    """
    fw.set_snapshot_shared_lister(snapshot)
    batch = snapshot.batch()
    state = CycleState()
    _, pre_status, _ = fw.run_pre_filter_plugins(state, pod, batch)
    if pre_status is not None and pre_status.code() != Code.SUCCESS:
        return {"prefilter": pre_status, "feasible": 0}
    got = fw.run_filter_plugins_vectorized(state, pod, batch)
    views = list(batch)
    for i, view in enumerate(views):
        want = fw.run_filter_plugins(state, pod, view)
        have = got.status(i)
        _assert_same_status(have, want, f"filter on {view.name}")
    feasible_pos = np.flatnonzero(got.feasible())
    summary = {"prefilter": pre_status, "feasible": int(feasible_pos.size), "scored": False}
    if feasible_pos.size == 0:
        return summary
    feasible_batch = batch.select(feasible_pos)
    state_b, state_p = state.clone(), state.clone()
    s1 = fw.run_pre_score_plugins(state_b, pod, feasible_batch)
    s2 = fw.run_pre_score_plugins(state_p, pod, list(feasible_batch))
    _assert_same_status(s1, s2, "prescore")
    if s1 is not None and s1.code() != Code.SUCCESS:
        return summary
    m1, e1 = fw.run_score_plugins_matrix(state_b, pod, feasible_batch)
    m2, e2 = fw.run_score_plugins_matrix(state_p, pod, list(feasible_batch))
    _assert_same_status(e1, e2, "score")
    if m1 is not None:
        for what in ("raw", "normalized", "weighted", "totals"):
            a, b = getattr(m1, what), getattr(m2, what)
            if not np.array_equal(a, b):
                bad = np.argwhere(a != b)[:5].tolist()
                raise AssertionError(f"{what} scores differ at {bad}: batch {a.tolist()} vs per-node {b.tolist()}"
                                     if a.size < 50 else f"{what} scores differ at (plugin, node) {bad}")
        summary["scored"] = True
    return summary


def _assert_same_status(a: Any, b: Any, what: str) -> None:
    ca = Code.SUCCESS if a is None else a.code()
    cb = Code.SUCCESS if b is None else b.code()
    ra = [] if a is None else a.reasons()
    rb = [] if b is None else b.reasons()
    pa = "" if a is None else a.plugin()
    pb = "" if b is None else b.plugin()
    if (ca, ra, pa) != (cb, rb, pb):
        raise AssertionError(f"{what}: batch gave {ca} {ra} ({pa}), per-node gave {cb} {rb} ({pb})")


# ------------------------------------------------------------------------------------------------
# one plugin through one cycle (benchmarks of a single Filter/Score plugin)
# ------------------------------------------------------------------------------------------------
def plugin_cycle_vectorized(snapshot: Snapshot, plugin: Any, pod: Pod) -> tuple[int, Any]:
    """PreFilter, Filter, PreScore, Score and NormalizeScore of one batch plugin over every node.

    Returns (number of feasible nodes, normalized int64 scores or None when scoring was skipped).
    """
    nodes = snapshot.batch()
    state = CycleState()
    _, status = plugin.pre_filter(state, pod, nodes)
    if status is None:
        result = plugin.filter_vectorized(state, pod, nodes)
        nodes = nodes.select(result.codes == 0)
    if not len(nodes):
        return 0, None
    if plugin.pre_score(state, pod, nodes) is not None:
        return len(nodes), None
    scores, _ = plugin.score_vectorized(state, pod, nodes)
    plugin.normalize_score_vectorized(state, pod, scores, nodes)
    return len(nodes), scores


def plugin_cycle_per_node(snapshot: Snapshot, plugin: Any, pod: Pod) -> tuple[int, Any]:
    """:func:`plugin_cycle_vectorized` one node at a time, PreFilter/PreScore walking NodeInfo views."""
    nodes = list(snapshot.batch())
    state = CycleState()
    _, status = plugin.pre_filter(state, pod, nodes)
    if status is None:
        nodes = [ni for ni in nodes if plugin.filter(state, pod, ni) is None]
    if not nodes:
        return 0, None
    if plugin.pre_score(state, pod, nodes) is not None:
        return len(nodes), None
    scores = [NodeScore(ni.name, plugin.score(state, pod, ni)[0]) for ni in nodes]
    plugin.normalize_score(state, pod, scores)
    return len(nodes), [s.score for s in scores]


def best_time_ms(fn: Any, rounds: int) -> float:
    """The fastest of ``rounds`` calls of ``fn()``, in milliseconds (quick script timings)."""
    best = float("inf")
    for _ in range(rounds):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best * 1e3
