"""Test utilities: manifest builders, seeded random clusters, and the plugin checks.

Public so that users writing plugins can check them the way the in-tree plugins are checked:
:func:`check_plugin` (in the manner of scikit-learn's ``check_estimator``) runs one plugin through
every check below on seeded random clusters; :func:`assert_paths_equivalent` runs a profile's Filter
and Score on a snapshot twice — through the vectorized methods over a NodeBatch and through the
per-node methods over a plain list of NodeInfo views — and requires identical codes, reasons,
plugins and scores.
"""
from __future__ import annotations

import copy
import dataclasses
import random
import time
import zlib
from typing import TYPE_CHECKING, Any, Callable, Iterable, Mapping, Sequence, cast

import numpy as np

from ..api import Node, Pod
from ..config.load import load_config
from ..config.types import KubeSchedulerConfiguration, KubeSchedulerProfile, Plugin, PluginConfig, Plugins, PluginSet
from ..framework.columns import NODES, ColumnForm
from ..framework.cycle_state import CycleState
from ..framework.interface import FilterPlugin, PreFilterPlugin, PreScorePlugin, ScorePlugin
from ..framework.objects import ObjectStore
from ..framework.status import MAX_NODE_SCORE, MIN_NODE_SCORE, Code, Status
from ..framework.types import NodeScore, PreFilterResult
from ..framework.vectorized import FilterVerdicts
from ..snapshot import Snapshot, build_snapshot

if TYPE_CHECKING:  # pragma: no cover
    from ..framework import protocols as fwk
    from ..runtime.framework import Framework

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


#: the projected volume the ServiceAccount admission plugin adds to a pod (its ``TokenVolumeSource``
#: at v1.37.2: a bound token, the cluster's CA bundle, the pod's namespace)
SERVICE_ACCOUNT_TOKEN_SOURCE: dict = {"defaultMode": 420, "sources": [
    {"serviceAccountToken": {"expirationSeconds": 3607, "path": "token"}},
    {"configMap": {"items": [{"key": "ca.crt", "path": "ca.crt"}], "name": "kube-root-ca.crt"}},
    {"downwardAPI": {"items": [{"fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.namespace"},
                                "path": "namespace"}]}}]}
#: where the admission plugin mounts that volume in every container
SERVICE_ACCOUNT_MOUNT_PATH = "/var/run/secrets/kubernetes.io/serviceaccount"
#: the characters of a generated name's suffix (k8s.io/apimachinery's ``rand.String``)
NAME_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"


def add_service_account_token(manifest: dict, rng: random.Random) -> dict:
    """``manifest`` (changed in place, and returned) as the ServiceAccount admission plugin leaves a
    pod that does not opt out (``automountServiceAccountToken``): a projected volume
    ``kube-api-access-<5 characters>`` (a name of its own per pod, drawn from ``rng`` as
    ``names.SimpleNameGenerator`` draws it) appended to ``spec.volumes``, and a read-only mount of it
    appended to every init container's, then every container's, ``volumeMounts``. It is what makes
    no two pods of a real cluster's dump alike."""
    name = "kube-api-access-" + "".join(rng.choice(NAME_ALPHABET) for _ in range(5))
    spec = manifest["spec"]
    for container in (*spec.get("initContainers", ()), *spec["containers"]):
        container.setdefault("volumeMounts", []).append(
            {"mountPath": SERVICE_ACCOUNT_MOUNT_PATH, "name": name, "readOnly": True})
    spec.setdefault("volumes", []).append({"name": name, "projected": copy.deepcopy(SERVICE_ACCOUNT_TOKEN_SOURCE)})
    return manifest


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


#: The RuntimeClass a fifth of :func:`random_pod`'s pods name: add it to the Scheduler first, or the
#: RuntimeClass admission refuses them (``RuntimeClass "overhead" not found``)
RANDOM_RUNTIME_CLASS: dict = {"apiVersion": "node.k8s.io/v1", "kind": "RuntimeClass", "metadata": {"name": "overhead"},
                              "handler": "runc", "overhead": {"podFixed": {"cpu": "100m", "memory": "64Mi"}}}


def random_pod(rng: random.Random, i: int = 0) -> Pod:
    """An incoming pod exercising every per-node plugin feature at random (the pods with an
    overhead name :data:`RANDOM_RUNTIME_CLASS`)."""
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
    if rng.random() < 0.2:  # the overhead RANDOM_RUNTIME_CLASS gives (the admission refuses one without a class)
        spec["runtimeClassName"] = RANDOM_RUNTIME_CLASS["metadata"]["name"]
        spec["overhead"] = dict(RANDOM_RUNTIME_CLASS["overhead"]["podFixed"])
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


def config_enabling(plugin: str, point: str, *, disabled: Iterable[str] = (), weight: int | None = None,
                    feature_gates: Any = None) -> KubeSchedulerConfiguration:
    """The default configuration (one profile, ``default-scheduler``) with the out-of-tree plugin
    ``plugin`` enabled at extension point ``point`` (its field in the YAML: ``filter``, ``preBind``,
    ``queueSort``, ...) after the default plugins there, and the plugins named in ``disabled``
    disabled at that point (a ``bind`` or ``queueSort`` plugin replaces ``DefaultBinder`` or
    ``PrioritySort`` that way). Defaulted and validated as a user's file is, with ``plugin``
    registered as an out-of-tree name, so a mistake reads as it would for that file; ``weight`` is
    the Score weight (upstream's default, 1, when None); ``feature_gates`` (a mapping of gate to
    bool, or FeatureGates; default v1.37.2's) decide the defaults as they do in ``load_config``.

    Pair it with ``Scheduler(config, registry=Registry({plugin: factory}))``."""
    entry: dict[str, Any] = {"name": plugin}
    if weight is not None:
        entry["weight"] = weight
    plugin_set: dict[str, Any] = {"enabled": [entry]}
    if disabled:
        plugin_set["disabled"] = [{"name": name} for name in disabled]
    source = {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
              "profiles": [{"schedulerName": "default-scheduler", "plugins": {point: plugin_set}}]}
    return load_config(source, registry_names=[plugin], feature_gates=feature_gates)


def assert_paths_equivalent(fw: Framework, snapshot: Snapshot, pod: Pod, *,
                            pre_filter_per_node: bool = False) -> dict:
    """Run PreFilter, Filter, PreScore and Score both ways; raise AssertionError on any difference.

    The vectorized side gets the snapshot's NodeBatch, the per-node side a plain list of the same
    nodes' NodeInfo views. With ``pre_filter_per_node`` the per-node side also runs PreFilter on that
    list (PreFilter's own two paths are compared too); otherwise both sides share the PreFilter run
    on the batch. Messages name the node (and the plugin, for scores) of the first difference.

    Returns a small summary (feasible count, whether scores ran) so callers can check the case
    exercised something.
    """
    fw.set_snapshot_shared_lister(snapshot)
    batch = snapshot.batch()
    views = list(batch)
    state = CycleState()
    result, pre_status, _ = fw.run_pre_filter_plugins(state, pod, batch)
    state_p = state
    if pre_filter_per_node:
        state_p = CycleState()
        result_p, pre_status_p, _ = fw.run_pre_filter_plugins(state_p, pod, views)
        _assert_same_status(pre_status, pre_status_p, "prefilter")
        if result != result_p:
            raise AssertionError(f"prefilter: batch gave {result}, per-node gave {result_p}")
    if pre_status is not None and pre_status.code() != Code.SUCCESS:
        return {"prefilter": pre_status, "feasible": 0}
    got = fw.run_filter_plugins_vectorized(state, pod, batch)
    for i, view in enumerate(views):
        want = fw.run_filter_plugins(state_p, pod, view)
        have = got.status(i)
        _assert_same_status(have, want, f"filter on node {view.name}")
    feasible_pos = np.flatnonzero(got.feasible())
    summary = {"prefilter": pre_status, "feasible": int(feasible_pos.size), "scored": False}
    if feasible_pos.size == 0:
        return summary
    feasible_batch = batch.select(feasible_pos)
    state_b, state_p = state.clone(), state_p.clone()
    s1 = fw.run_pre_score_plugins(state_b, pod, feasible_batch)
    s2 = fw.run_pre_score_plugins(state_p, pod, list(feasible_batch))
    _assert_same_status(s1, s2, "prescore")
    if s1 is not None and s1.code() != Code.SUCCESS:
        return summary
    m1, e1 = fw.run_score_plugins_matrix(state_b, pod, feasible_batch)
    m2, e2 = fw.run_score_plugins_matrix(state_p, pod, list(feasible_batch))
    _assert_same_status(e1, e2, "score")
    if (m1 is None) != (m2 is None):
        raise AssertionError(f"score: batch gave {m1}, per-node gave {m2}")
    if m1 is not None and m2 is not None:
        names = feasible_batch.names
        for what in ("raw", "normalized", "weighted", "totals"):
            a, b = getattr(m1, what), getattr(m2, what)
            if a.shape != b.shape:
                raise AssertionError(f"{what} scores: batch shape {a.shape}, per-node shape {b.shape}")
            if not np.array_equal(a, b):
                at = tuple(int(k) for k in np.argwhere(a != b)[0])
                node = names[at[-1]]
                plugin = f" of {m1.plugin_names[at[0]]}" if a.ndim == 2 else ""
                raise AssertionError(f"{what} scores{plugin} differ on node {node}: batch gave {int(a[at])}, "
                                     f"per-node gave {int(b[at])} ({int(np.count_nonzero(a != b))} differences)")
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


# ------------------------------------------------------------------------------------------------
# check_plugin: one plugin through every check, on seeded random clusters
# ------------------------------------------------------------------------------------------------
_POD_TOPOLOGY_KEYS = ("kubernetes.io/hostname", "topology.kubernetes.io/zone", "example.com/rack")


def _random_pod_term(rng: random.Random) -> dict:
    term: dict = {"topologyKey": rng.choice(_POD_TOPOLOGY_KEYS)}
    selector = rng.choice(({"matchLabels": {"app": rng.choice(("web", "db", "cache"))}},
                           {"matchExpressions": [{"key": "team", "operator": "Exists"}]}, {}, None))
    if selector is not None:
        term["labelSelector"] = selector
    if rng.random() < 0.2:
        term["namespaces"] = rng.sample(("default", "prod"), rng.randint(1, 2))
    return term


def random_check_pod(rng: random.Random, i: int = 0, *, name: str | None = None,
                     node_name: str | None = None) -> Pod:
    """:func:`random_pod` plus, at random, pod (anti-)affinity terms, topology spread constraints
    and another namespace, so every in-tree plugin has something to decide; bound to ``node_name``
    when given (a running pod)."""
    manifest = random_pod(rng, i).manifest
    spec = dict(manifest["spec"])
    meta = dict(manifest["metadata"])
    if rng.random() < 0.35:
        affinity = dict(spec.get("affinity", {}))
        for kind in rng.sample(("podAffinity", "podAntiAffinity"), rng.randint(1, 2)):
            terms: dict = {}
            if rng.random() < 0.5:
                terms["requiredDuringSchedulingIgnoredDuringExecution"] = [_random_pod_term(rng)]
            if rng.random() < 0.7:
                terms["preferredDuringSchedulingIgnoredDuringExecution"] = [
                    {"weight": rng.randint(1, 100), "podAffinityTerm": _random_pod_term(rng)}]
            affinity[kind] = terms
        spec["affinity"] = affinity
    if rng.random() < 0.3:
        # (topologyKey, whenUnsatisfiable) pairs must be distinct: validation refuses duplicates
        pairs = [(key, when) for key in _POD_TOPOLOGY_KEYS[:2] for when in ("DoNotSchedule", "ScheduleAnyway")]
        spec["topologySpreadConstraints"] = [
            {"maxSkew": rng.randint(1, 3), "topologyKey": key, "whenUnsatisfiable": when,
             "labelSelector": {"matchLabels": {"app": rng.choice(("web", "db"))}}}
            for key, when in rng.sample(pairs, rng.randint(1, 2))]
    if rng.random() < 0.2:
        meta["namespace"] = "prod"
    if name is not None:
        meta["name"] = name
    if node_name is not None:
        spec["nodeName"] = node_name
    return Pod.from_manifest({**manifest, "metadata": meta, "spec": spec}, validate=False)


def check_cluster(seed: int, n_nodes: int = 60, n_pods: int = 120,
                  extra_pods: int | None = None) -> tuple[list[Node], list[Pod]]:
    """:func:`random_cluster` plus ``extra_pods`` (default a tenth of ``n_pods``) running
    :func:`random_check_pod` pods, with pod (anti-)affinity terms and spread constraints at random."""
    nodes, pods = random_cluster(seed, n_nodes, n_pods)
    rng = random.Random(seed * 7919 + 1)
    extra = n_pods // 10 if extra_pods is None else extra_pods
    pods += [random_check_pod(rng, i, name=f"running-{i:05d}", node_name=rng.choice(nodes).name)
             for i in range(extra)]
    return nodes, pods


def with_replicas(pods: Sequence[Pod], rng: random.Random) -> list[Pod]:
    """``pods`` with, after some unbound ones, 1 to 3 replicas sharing their spec objects (as a
    workload's pods do), so the fused cycle reuses a compiled plan across cycles."""
    out: list[Pod] = []
    for p in pods:
        out.append(p)
        if not p.node_name and rng.random() < 0.4:
            for k in range(rng.randint(1, 3)):
                replica = p.replace(name=f"{p.name}-r{k}", uid="")
                replica.admitted = p.admitted  # validated (or, like make_pod's, deliberately not) as p
                out.append(replica)
    return out


@dataclasses.dataclass
class CheckScenario:
    """One seed's cluster for :func:`check_plugin` (its ``scenario`` argument): nodes, running pods,
    the pods to check, and the other API objects the plugin reads through ``handle.client``
    (PersistentVolumes, claims, StorageClasses, CSINodes, ResourceSlices, DeviceClasses, ...)."""

    nodes: list[Node]
    running: list[Pod]
    incoming: list[Pod]
    objects: list = dataclasses.field(default_factory=list)


def storage_check_scenario(seed: int, nodes: int = 14, claims: int = 40, pvs: int = 30) -> CheckScenario:
    """:func:`fastsched.sim.storage.random_storage_cluster` as a :class:`CheckScenario`: claims of
    every kind (bound, WaitForFirstConsumer, Immediate, topology-restricted with capacity, RWOP,
    missing), PVs with zonal and per-node affinity, CSINodes with attach limits, pods mounting one
    to three claims and inline EBS/GCE volumes; about a third of the pods run already."""
    from ..api.load import load_objects
    from ..sim.storage import random_storage_cluster

    node_ms, object_ms, pod_ms = random_storage_cluster(seed, nodes=nodes, pvs=pvs, claims=claims)
    rng = random.Random(seed * 7919 + 3)
    cluster_nodes = [node for node in load_objects(node_ms) if isinstance(node, Node)]  # (nodes only)
    running: list[Pod] = []
    incoming: list[Pod] = []
    for p in load_objects(pod_ms):
        assert isinstance(p, Pod)  # the generator's pod manifests
        if rng.random() < 0.35:
            running.append(p.with_node_name(rng.choice(cluster_nodes).name))
        else:
            incoming.append(p)
    return CheckScenario(cluster_nodes, running, incoming, load_objects(object_ms))


_DRA_DRIVER = "gpu.example.com"
_DRA_MODELS = ("a100", "h100", "l4")


def _dra_claim_manifest(rng: random.Random, name: str, nodes: Sequence[Node]) -> dict:
    requests: list[dict[str, Any]] = []
    for r in range(rng.choice((1, 1, 1, 2))):
        selectors = []
        if rng.random() < 0.6:
            selectors.append(f'device.attributes["{_DRA_DRIVER}"].model == "{rng.choice(_DRA_MODELS)}"')
        if rng.random() < 0.2:
            selectors.append(f'device.capacity["{_DRA_DRIVER}"].memory.compareTo(quantity("40Gi")) >= 0')
        body: dict = {"deviceClassName": "gpu", "count": rng.randint(1, 3)}
        if selectors:
            body["selectors"] = [{"cel": {"expression": s}} for s in selectors]
        if rng.random() < 0.1:
            requests.append({"name": f"r{r}", "firstAvailable": [{"name": "big", **body, "count": 4},
                                                                 {"name": "small", **body}]})
        else:
            requests.append({"name": f"r{r}", "exactly": body})
    devices: dict = {"requests": requests}
    if rng.random() < 0.3:
        devices["constraints"] = [{"matchAttribute": f"{_DRA_DRIVER}/numa"}]
    manifest: dict = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
                      "metadata": {"name": name, "namespace": "default", "uid": name}, "spec": {"devices": devices}}
    if rng.random() < 0.1:  # allocated for one node already, not reserved
        node = rng.choice(nodes).name
        manifest["status"] = {"allocation": {"devices": {"results": []}, "nodeSelector": {"nodeSelectorTerms": [
            {"matchFields": [{"key": "metadata.name", "operator": "In", "values": [node]}]}]}}}
    return manifest


def device_check_scenario(seed: int, nodes: int = 24, pods: int = 12) -> CheckScenario:
    """A seeded cluster with devices as a :class:`CheckScenario`: a DeviceClass, 0-2 pools of GPUs
    per node (models, NUMA, memory; some pools incomplete), devices already allocated to running
    claims, and ``pods`` pods each with one or two claims of their own (selectors, counts,
    prioritized lists, matchAttribute constraints, some allocated already), a few without claims."""
    from ..api.load import load_objects

    rng = random.Random(seed * 7919 + 5)
    objects: list[dict] = [{"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": "gpu"},
                            "spec": {"selectors": [{"cel": {"expression": f'device.driver == "{_DRA_DRIVER}"'}}]}}]
    cluster_nodes = [make_node(f"node-{i:05d}", cpu="16", memory="64Gi") for i in range(nodes)]
    taken = []
    for node in cluster_nodes:
        for p in range(rng.choice((0, 1, 1, 1, 2))):
            pool = f"{node.name}-pool-{p}"
            devices = [{"name": f"gpu-{j}", "attributes": {"model": {"string": rng.choice(_DRA_MODELS)},
                                                           "numa": {"int": rng.randint(0, 1)}},
                        "capacity": {"memory": {"value": rng.choice(("16Gi", "40Gi", "80Gi"))}}}
                       for j in range(rng.randint(0, 6))]
            objects.append({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": pool},
                            "spec": {"driver": _DRA_DRIVER, "nodeName": node.name, "devices": devices,
                                     "pool": {"name": pool, "generation": 1,
                                              "resourceSliceCount": 2 if rng.random() < 0.1 else 1}}})
            taken += [(pool, d["name"], node.name) for d in devices if rng.random() < 0.3]
    for k, (pool, device, node_name) in enumerate(taken):
        objects.append({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
                        "metadata": {"name": f"taken-{k}", "namespace": "default", "uid": f"taken-{k}"},
                        "spec": {"devices": {"requests": [{"name": "r", "exactly": {"deviceClassName": "gpu"}}]}},
                        "status": {"allocation": {
                            "devices": {"results": [{"request": "r", "driver": _DRA_DRIVER, "pool": pool,
                                                     "device": device}]},
                            "nodeSelector": {"nodeSelectorTerms": [{"matchFields": [
                                {"key": "metadata.name", "operator": "In", "values": [node_name]}]}]}},
                            "reservedFor": [{"resource": "pods", "name": f"holder-{k}", "uid": f"holder-{k}"}]}})
    incoming = []
    for i in range(pods):
        claims = [] if rng.random() < 0.1 else [
            _dra_claim_manifest(rng, f"claim-{seed}-{i}-{j}", cluster_nodes) for j in range(rng.choice((1, 1, 2)))]
        objects += claims
        incoming.append(make_pod(f"pod-{i}", uid=f"pod-{seed}-{i}", cpu="100m", resourceClaims=[
            {"name": f"e{j}", "resourceClaimName": c["metadata"]["name"]} for j, c in enumerate(claims)]))
    return CheckScenario(cluster_nodes, [], incoming, load_objects(objects))


class CheckCompanion(FilterPlugin, ScorePlugin):
    """The plugin :func:`check_plugin` adds beside a Filter-only or Score-only plugin, so that the
    profile has both and the fused cycle can run: every node passes; each node scores a fixed value
    from its name (0..100, no normalization), so ties are rare but placements are still decided by
    the plugin under test wherever it has a say."""

    NAME = "CheckPluginCompanion"
    _FORM = ColumnForm(filter=NODES, score=NODES)

    def name(self) -> str:
        return self.NAME

    @staticmethod
    def _score_of(node_name: str) -> int:
        return zlib.crc32(node_name.encode()) % (MAX_NODE_SCORE + 1)

    def column_form(self, pod: Pod, table: Any) -> ColumnForm:
        """Both columns depend only on the node names."""
        return self._FORM

    def filter(self, state: CycleState, pod: Pod, node_info: fwk.NodeInfo) -> Status | None:
        return None

    def filter_vectorized(self, state: CycleState, pod: Pod, nodes: fwk.NodeBatch) -> FilterVerdicts:
        return FilterVerdicts.all_pass(len(nodes))

    def score(self, state: CycleState, pod: Pod, node_info: fwk.NodeInfo) -> tuple[int, Status | None]:
        return self._score_of(node_info.name), None

    def score_vectorized(self, state: CycleState, pod: Pod, nodes: fwk.NodeBatch) -> tuple[np.ndarray, None]:
        return np.fromiter(map(self._score_of, nodes.names), dtype=np.int64, count=len(nodes)), None


class _CheckFailed(AssertionError):
    """A failed check, before the plugin, check and seed are put in front of its message."""

    def __init__(self, check: str, message: str, pod: Pod | None = None, node: str | None = None):
        where = ""
        if pod is not None:
            where += f" for pod {pod.namespace}/{pod.name}"
        if node is not None:
            where += f" on node {node}"
        super().__init__(f"check {check!r} failed{where}: {message}")


def _describe(value: Any) -> str:
    from ..runtime.returns import describe
    return describe(value)


def _expect(ok: bool, check: str, what: str, value: Any, expected: str, pod: Pod, node: str | None = None) -> None:
    if not ok:
        raise _CheckFailed(check, f"{what} returned {_describe(value)}, expected {expected}", pod, node)


def _hashable(v: Any) -> bool:
    try:
        hash(v)
    except TypeError:
        return False
    return True


def _is_status(s: Any) -> bool:
    return s is None or isinstance(s, Status)


def _code(s: Status | None) -> Code:
    return Code.SUCCESS if s is None else s.code()


def _same(a: Status | None, b: Status | None) -> bool:
    return (_code(a), [] if a is None else a.reasons()) == (_code(b), [] if b is None else b.reasons())


def _as_score(v: Any) -> int | None:
    from ..runtime.returns import as_int64
    return as_int64(v)


def _verdicts_ok(res: Any, n: int) -> bool:
    """A FilterVerdicts with int8 codes and int32 reason ids, one per node, holding Codes and reason
    ids of tuples of strings (what the framework accepts from ``filter_vectorized``)."""
    if not isinstance(res, FilterVerdicts):
        return False
    codes, rids, reasons = res.codes, res.reason_ids, res.reasons
    if not (isinstance(codes, np.ndarray) and codes.shape == (n,) and codes.dtype == np.int8
            and isinstance(rids, np.ndarray) and rids.shape == (n,) and rids.dtype == np.int32):
        return False
    if not all(isinstance(r, tuple) and all(isinstance(x, str) for x in r) for r in reasons):
        return False
    failed = codes != 0
    if not failed.any():
        return True
    valid_codes = {int(c) for c in Code}
    if not set(np.unique(codes[failed]).tolist()) <= valid_codes:
        return False
    return bool(((rids[failed] >= -1) & (rids[failed] < len(reasons))).all())


def _call(check: str, what: str, fn: Callable, *args: Any, pod: Pod, node: str | None = None) -> Any:
    """``fn(*args)``; an exception becomes the check's failure, naming the method, pod and node."""
    try:
        return fn(*args)
    except Exception as e:  # noqa: BLE001 - reported as the check's failure
        raise _CheckFailed(check, f"{what} raised {type(e).__name__}: {e}", pod, node) from e


def _check_returns(plugin: Any, snapshot: Snapshot, pod: Pod) -> dict:
    """Call the plugin's own methods for ``pod`` on every node and check what they return: the
    types the framework accepts, scores within [0, 100] after NormalizeScore, the same answer
    from a snapshot's NodeInfo view as from a detached :class:`~fastsched.framework.NodeInfo`."""
    check, same = "returns", "NodeInfo implementations"
    batch = snapshot.batch()
    views = list(batch)
    state = CycleState()
    seen: dict = {"filter": False, "score": False}
    form = getattr(plugin, "column_form", None)
    if callable(form):
        cf = _call(check, "column_form", form, pod, snapshot.table, pod=pod)
        _expect(cf is None or isinstance(cf, ColumnForm), check, "column_form", cf, "a ColumnForm or None", pod)
        guard = getattr(plugin, "column_guard", None)
        if callable(guard):
            g = _call(check, "column_guard", guard, pod, snapshot.table, pod=pod)
            _expect(_hashable(g), check, "column_guard", g, "a hashable value", pod)
    filter_skipped = False
    if isinstance(plugin, PreFilterPlugin):
        out = _call(check, "pre_filter", plugin.pre_filter, state, pod, batch, pod=pod)
        _expect(type(out) is tuple and len(out) == 2 and (out[0] is None or isinstance(out[0], PreFilterResult))
                and _is_status(out[1]), check, "pre_filter", out,
                "a (PreFilterResult or None, Status or None) pair", pod)
        if _code(out[1]) == Code.SKIP:
            filter_skipped = True
        elif _code(out[1]) != Code.SUCCESS:
            return seen
        ext = _call(check, "pre_filter_extensions", plugin.pre_filter_extensions, pod=pod)
        _expect(ext is None or (callable(getattr(ext, "add_pod", None)) and callable(getattr(ext, "remove_pod", None))),
                check, "pre_filter_extensions", ext, "None or an object with add_pod and remove_pod", pod)
    feasible = list(range(len(views)))  # positions in the batch
    if isinstance(plugin, FilterPlugin) and not filter_skipped:
        seen["filter"] = True
        feasible = []
        for i, view in enumerate(views):
            st = _call(check, "filter", plugin.filter, state, pod, view, pod=pod, node=view.name)
            _expect(_is_status(st), check, "filter", st, "a Status or None", pod, view.name)
            detached = _call(same, "filter", plugin.filter, state, pod, view.snapshot(), pod=pod, node=view.name)
            if not _is_status(detached) or not _same(st, detached):
                raise _CheckFailed(same, f"filter gave {_describe(st)} on the snapshot's view and "
                                   f"{_describe(detached)} on a detached NodeInfo", pod, view.name)
            if _code(st) == Code.SUCCESS:
                feasible.append(i)
        vectorized = getattr(plugin, "filter_vectorized", None)
        if callable(vectorized):
            res = _call(check, "filter_vectorized", vectorized, state, pod, batch, pod=pod)
            _expect(res is None or isinstance(res, Status) or _verdicts_ok(res, len(batch)), check,
                    "filter_vectorized", res, f"a FilterVerdicts with {len(batch)} valid verdicts, a Status or None",
                    pod)
    if not feasible or not isinstance(plugin, ScorePlugin):
        return seen
    feasible_batch = batch.select(np.array(feasible, dtype=np.int64))
    if isinstance(plugin, PreScorePlugin):
        ps = _call(check, "pre_score", plugin.pre_score, state, pod, feasible_batch, pod=pod)
        _expect(_is_status(ps), check, "pre_score", ps, "a Status or None", pod)
        if _code(ps) != Code.SUCCESS:
            return seen
    seen["score"] = True
    scores = []
    for view in feasible_batch:
        out = _call(check, "score", plugin.score, state, pod, view, pod=pod, node=view.name)
        ok = type(out) is tuple and len(out) == 2 and _as_score(out[0]) is not None and _is_status(out[1])
        _expect(ok, check, "score", out, "an (int, Status or None) pair", pod, view.name)
        detached = _call(same, "score", plugin.score, state, pod, view.snapshot(), pod=pod, node=view.name)
        if not (type(detached) is tuple and len(detached) == 2 and _as_score(detached[0]) == _as_score(out[0])
                and _is_status(detached[1]) and _same(detached[1], out[1])):
            raise _CheckFailed(same, f"score gave {_describe(out)} on the snapshot's view and "
                               f"{_describe(detached)} on a detached NodeInfo", pod, view.name)
        if _code(out[1]) != Code.SUCCESS:
            return seen
        scores.append(NodeScore(view.name, int(out[0])))
    vectorized = getattr(plugin, "score_vectorized", None)
    if callable(vectorized):
        from ..runtime.returns import int_score_array
        out = _call(check, "score_vectorized", vectorized, state, pod, feasible_batch, pod=pod)
        ok = (type(out) is tuple and len(out) == 2 and int_score_array(out[0], len(feasible_batch)) is not None
              and _is_status(out[1]))
        _expect(ok, check, "score_vectorized", out,
                f"an (integer ndarray of shape ({len(feasible_batch)},), Status or None) pair", pod)
    ext = _call(check, "score_extensions", plugin.score_extensions, pod=pod)
    _expect(ext is None or callable(getattr(ext, "normalize_score", None)), check, "score_extensions", ext,
            "None or an object with normalize_score", pod)
    if ext is not None:
        raw = np.array([ns.score for ns in scores], dtype=np.int64)
        st = _call(check, "normalize_score", ext.normalize_score, state, pod, scores, pod=pod)
        _expect(_is_status(st), check, "normalize_score", st, "a Status or None", pod)
        if _code(st) != Code.SUCCESS:
            return seen
        vectorized = getattr(ext, "normalize_score_vectorized", None)
        if callable(vectorized):
            st = _call(check, "normalize_score_vectorized", vectorized, state, pod, raw, feasible_batch, pod=pod)
            _expect(_is_status(st), check, "normalize_score_vectorized", st, "a Status or None", pod)
    for ns in scores:
        v = _as_score(ns.score)
        if v is None or not MIN_NODE_SCORE <= v <= MAX_NODE_SCORE:
            what = "normalize_score left" if ext is not None else "score returned"
            raise _CheckFailed("score range", f"{what} {ns.score!r}, outside [{MIN_NODE_SCORE}, {MAX_NODE_SCORE}]",
                               pod, ns.name)
    return seen


def _as_factory(factory_or_plugin: Any) -> Callable[[Any, Any], Any]:
    """A factory ``(args, handle) -> plugin``: the callable itself, or one returning the given plugin."""
    if not isinstance(factory_or_plugin, type) and callable(getattr(factory_or_plugin, "name", None)):
        plugin = factory_or_plugin
        return lambda args, handle: plugin
    if callable(factory_or_plugin):
        return factory_or_plugin
    raise TypeError(f"check_plugin takes a plugin or a factory(args, handle), not {factory_or_plugin!r}")


def _with_companion(profile: KubeSchedulerProfile, name: str, plugin: Any) -> KubeSchedulerProfile:
    """``profile`` plus :class:`CheckCompanion` when ``plugin`` is not both a Filter and a Score plugin."""
    if isinstance(plugin, FilterPlugin) and isinstance(plugin, ScorePlugin):
        return profile
    assert profile.plugins is not None  # single_plugin_profile's
    plugins = dataclasses.replace(profile.plugins)
    plugins.multi_point = PluginSet([*profile.plugins.multi_point.enabled, Plugin(CheckCompanion.NAME, 1)])
    return dataclasses.replace(profile, plugins=plugins)


def _placements(config: KubeSchedulerConfiguration, registry: Any, seed: int, nodes: list[Node],
                running: list[Pod], incoming: list[Pod], compiled: bool, objects: Sequence[Any] = (),
                feature_gates: Any = None) -> tuple[list, Any, Any]:
    from ..scheduler import Scheduler
    s = Scheduler(config, registry=registry, seed=seed, feature_gates=feature_gates)
    s.use_compiled_cycle = compiled
    s.add(RANDOM_RUNTIME_CLASS)  # (random_check_pod's pods with an overhead name it)
    if objects:
        s.add(list(objects))
    s.add_nodes(nodes)
    s.add_pods(running)
    s.add_pods(incoming)
    results = s.run()
    outcome = [(r.pod.namespace, r.pod.name, r.node_name, str(r.status), r.message) for r in results]
    (fw,) = s.profiles.values()
    return outcome, (s.next_start_node_index, s.rng.bit_generator.state), fw.compiled_cycle


def _without_batching(feature_gates: Any) -> Any:
    """``feature_gates`` (None, a mapping or upstream's ``"Gate=bool,..."``) with OpportunisticBatching off."""
    if feature_gates is None:
        return {"OpportunisticBatching": False}
    if isinstance(feature_gates, str):
        return f"{feature_gates},OpportunisticBatching=false" if feature_gates else "OpportunisticBatching=false"
    if isinstance(feature_gates, Mapping):
        return {**feature_gates, "OpportunisticBatching": False}
    return feature_gates


def _outcome(result: tuple) -> str:
    """A scheduling result as ``node (status)``, with the message when it was not Scheduled."""
    _, _, node, status, message = result
    where = node or "no node"
    return f"{where} ({status})" if status == "Scheduled" else f"{where} ({status}: {message!r})"


def _check_column_form(name: str, factory: Callable, args: Any, weight: int, plugin: Any, seed: int,
                       nodes: list[Node], running: list[Pod], incoming: list[Pod], objects: Sequence[Any] = (),
                       feature_gates: Any = None) -> tuple[int, int]:
    """Schedule ``incoming`` with the fused cycle and with the plugin calls; the placements, the
    round-robin index and the RNG state must be the same. Returns (fused, declined) cycles.

    OpportunisticBatching is off here: the check's profile (the plugin and its companion) signs
    pods, and a batching profile's signed pods take the plugin calls on both runs (see
    ``_schedule_pod``), which would leave the fused cycle unchecked."""
    feature_gates = _without_batching(feature_gates)
    from ..plugins import in_tree_registry
    from ..runtime import Registry
    in_tree = in_tree_registry()
    extra: dict = {CheckCompanion.NAME: lambda a, h: CheckCompanion()}
    if name in in_tree:
        # The Scheduler always has the in-tree registry: it builds the in-tree plugin of that name.
        built = in_tree[name](args, None)
        if type(built) is not type(plugin):
            raise ValueError(f"check_plugin: {name!r} is an in-tree plugin's name, and the Scheduler that the "
                             f"column-form check builds would use the in-tree {type(built).__name__}; give "
                             f"{type(plugin).__name__} a name of its own")
    else:
        extra[name] = factory
    profile = _with_companion(single_plugin_profile(name, args=args, weight=weight), name, plugin)
    config = KubeSchedulerConfiguration(profiles=[dataclasses.replace(profile, scheduler_name="default-scheduler")])
    registry = Registry(extra)
    fused, got, engine = _placements(config, registry, seed, nodes, running, incoming, True, objects, feature_gates)
    calls, want, _ = _placements(config, registry, seed, nodes, running, incoming, False, objects, feature_gates)
    for g, w in zip(fused, calls):
        if g != w:
            pod = next(p for p in incoming if (p.namespace, p.name) == g[:2])
            raise _CheckFailed("column form", f"the fused cycle placed it on {_outcome(g)}, the plugin calls on "
                               f"{_outcome(w)}", pod)
    if len(fused) != len(calls) or got != want:
        raise _CheckFailed("column form", f"the fused cycle ended with (next start index, RNG state) {got[0]}, the "
                           f"plugin calls with {want[0]}, or with another number of results")
    return engine.fused_cycles, engine.declined_cycles


def check_plugin(factory_or_plugin: Any, *, name: str | None = None, args: Any = None,
                 seeds: Iterable[int] = (0, 1, 2),
                 pods: int | Sequence[Pod] | Callable[[random.Random], Sequence[Pod]] = 12,
                 nodes: int = 60, running: int = 120, weight: int = 1, column_form: bool = True,
                 scenario: Callable[[int], CheckScenario] | None = None, feature_gates: Any = None) -> dict:
    """Check a plugin the way the in-tree plugins are checked; raise AssertionError at the first failure.

    ``factory_or_plugin`` is a factory ``(args, handle) -> plugin`` (as registered in a Registry)
    or a plugin object. The plugin is built into a single-plugin profile (with PrioritySort and
    DefaultBinder) on each seed's random cluster (:func:`check_cluster`: ``nodes`` nodes, ``running``
    running pods, on every other seed some of them with pod affinity terms), and for each pod
    (``pods``: a number of :func:`random_check_pod` pods, some with replicas (:func:`with_replicas`),
    a list of pods, or a function of the seed's ``random.Random`` returning the pods) these checks run:

    * ``returns``: its own methods, called directly on every node, return what the framework accepts
      (a Status or None from Filter, an (int, Status) pair from Score, valid FilterVerdicts with one
      verdict per node, an int64 array of shape (n,) from ``score_vectorized``, a ColumnForm or None
      from ``column_form``...); ``score range``: scores end within [0, 100]; ``NodeInfo
      implementations``: Filter and Score answer the same on the snapshot's NodeInfo view and on a
      detached NodeInfo copy (what preemption and nominated pods use);
    * ``vectorized``: its vectorized methods equal its per-node ones (:func:`assert_paths_equivalent`
      with PreFilter run both ways): verdicts, reasons, PreScore status, raw and normalized scores;
    * ``column form`` (when it has ``column_form`` and ``column_form`` is True): a Scheduler places
      the pods identically with the fused cycle and with the plugin calls (same nodes, statuses and
      messages, round-robin index and RNG state). A Filter-only or Score-only plugin gets
      :class:`CheckCompanion` beside it so that the fused cycle can run.

    ``scenario`` replaces the random cluster and pods for plugins that read other API objects (the
    volume and DRA plugins): a function of the seed returning a :class:`CheckScenario` (nodes,
    running pods, pods to check, and objects, which the framework reads through an
    :class:`~fastsched.framework.objects.ObjectStore` and the column-form check's Scheduler holds);
    :func:`storage_check_scenario` and :func:`device_check_scenario` are the in-tree plugins'.
    ``feature_gates`` go to the framework and the Scheduler (``{"StorageCapacityScoring": True}``
    for VolumeBinding's Score).

    The AssertionError names the plugin, the check, the seed, the pod and the node. ``args`` are the
    plugin's typed args (what its factory receives; None for its defaults). Returns a summary: pods
    checked, how many reached Filter and Score, the vectorized methods found and the fused and
    declined cycles of the column-form check.
    """
    from ..runtime import Registry, new_framework
    factory = _as_factory(factory_or_plugin)
    if name is None:
        name = factory(args, new_framework(Registry(), None)).name()
    from ..plugins import in_tree_registry
    in_tree = in_tree_registry()
    registry = Registry({name: factory})
    for other in ("PrioritySort", "DefaultBinder"):
        if other != name:
            registry.register(other, in_tree[other])
    profile = single_plugin_profile(name, args=args, weight=weight)
    summary: dict = {"plugin": name, "pods": 0, "filtered": 0, "scored": 0, "vectorized": [],
                     "fused_cycles": 0, "declined_cycles": 0}
    for k, seed in enumerate(seeds):
        # Every other cluster has no running pod with pod affinity terms, so that column forms that
        # depend on there being none (InterPodAffinity's) are exercised too.
        objects: list = []
        if scenario is not None:
            sc = scenario(seed)
            cluster_nodes, running_pods, incoming, objects = list(sc.nodes), list(sc.running), list(sc.incoming), \
                list(sc.objects)
        else:
            cluster_nodes, running_pods = check_cluster(seed, nodes, running, None if k % 2 == 0 else 0)
            rng = random.Random(seed * 31 + 7)
            if isinstance(pods, int):
                incoming = with_replicas([random_check_pod(rng, i) for i in range(pods)], rng)
            elif callable(pods):
                incoming = list(pods(rng))
            else:
                incoming = list(pods)
        snapshot = build_snapshot(cluster_nodes, running_pods)
        # an ObjectStore stands in for the Scheduler's Client: the object methods only (fwk.Client says so)
        client = cast("fwk.Client", ObjectStore(objects)) if scenario is not None else None
        fw = new_framework(registry, profile, snapshot_shared_lister=snapshot, client=client,
                           feature_gates=feature_gates)
        plugin = fw.plugin(name)
        holders = [plugin] + [e for e in (getattr(plugin, "score_extensions", lambda: None)(),) if e is not None]
        summary["vectorized"] = sorted({m for h in holders for m in ("filter_vectorized", "score_vectorized",
                                                                     "normalize_score_vectorized")
                                        if callable(getattr(h, m, None))})
        check = ""
        pod: Pod | None = None
        try:
            for pod in incoming:
                if pod.node_name:  # bound already: nothing to schedule
                    continue
                summary["pods"] += 1
                check = "returns"
                seen = _check_returns(plugin, snapshot, pod)
                summary["filtered"] += seen["filter"]
                summary["scored"] += seen["score"]
                check = "vectorized"
                assert_paths_equivalent(fw, snapshot, pod, pre_filter_per_node=True)
            pod = None
            if column_form and callable(getattr(plugin, "column_form", None)):
                check = "column form"
                fused, declined = _check_column_form(name, factory, args, weight, plugin, seed, cluster_nodes,
                                                     running_pods, incoming, objects, feature_gates)
                summary["fused_cycles"] += fused
                summary["declined_cycles"] += declined
        except _CheckFailed as e:
            # chained to what the plugin raised, if it raised
            raise AssertionError(f"check_plugin({name}), seed {seed}: {e}") from e.__cause__
        except AssertionError as e:
            where = f" for pod {pod.namespace}/{pod.name}" if pod is not None else ""
            raise AssertionError(f"check_plugin({name}), seed {seed}: check {check!r} failed{where}: {e}") from None
    return summary
