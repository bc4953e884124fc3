"""The differential oracle's scenario generators: one seeded generator per scenario class.

:func:`generate` gives the scenario of a class (:data:`CLASSES`: resources, taints, affinity,
podaffinity, spread, ports, images, preemption, preemption-ties, profiles, volumes, dra, mixed) for
a seed, deterministically: the config, nodes, bound pods, other API objects and incoming pods that
:mod:`fastsched.testing.oracle` runs on both sides. Each ``gen_*`` function builds its class on a
:class:`_Gen` (a seeded RNG and manifest builders). They are apart from the oracle, which runs and
compares scenarios, because they are most of its code and are read for what the scenarios cover,
not for how the comparison works. ``fastsched.testing.oracle`` re-exports :func:`generate` and
:data:`CLASSES`, public there. The pods of the volumes and mixed classes mostly hold the
ServiceAccount admission's token volume and mounts (``kube-api-access-<random>``), as a cluster's do.
"""
from __future__ import annotations

import copy
import json
import random
from typing import Any, Callable, Iterable

from . import add_service_account_token

__all__ = ["CLASSES", "GATED_CLASSES", "NAMED_CLASSES", "generate"]


ZONES = ("zone-a", "zone-b", "zone-c")
NAMESPACES = ("default", "prod", "dev")
APPS = ("web", "db", "cache", "batch")
CONFIG_V1 = {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration"}


class _Gen:
    """Helpers shared by the class generators: a seeded RNG and manifest builders."""

    def __init__(self, cls: str, seed: int):
        self.cls = cls
        self.seed = seed
        self.rng = random.Random(f"{cls}:{seed}")
        self.nodes: list[dict] = []
        self.pods: list[dict] = []
        self.objects: list[dict] = []
        self.incoming: list[dict] = []
        self.config: dict = dict(CONFIG_V1)
        #: top-level scenario keys a class adds (``sampling``: the oracle retells the sampled search)
        self.scenario_extra: dict = {}
        self._n = 0

    def chance(self, p: float) -> bool:
        return self.rng.random() < p

    def node(self, *, cpu: str = "4", memory: str = "8Gi", pods: str = "110", extra: dict | None = None,
             labels: dict | None = None, taints: list | None = None, unschedulable: bool = False,
             images: list | None = None, zone: bool = True) -> dict:
        name = f"node-{len(self.nodes)}"
        lab = {"kubernetes.io/hostname": name}
        if zone:
            lab["topology.kubernetes.io/zone"] = self.rng.choice(ZONES)
        lab.update(labels or {})
        alloc = {"cpu": cpu, "memory": memory, "pods": pods, **(extra or {})}
        m: dict = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": lab},
                   "spec": {}, "status": {"allocatable": dict(alloc), "capacity": dict(alloc)}}
        if taints:
            m["spec"]["taints"] = taints
        if unschedulable:
            m["spec"]["unschedulable"] = True
        if images:
            m["status"]["images"] = [{"names": list(n), "sizeBytes": s} for n, s in images]
        self.nodes.append(m)
        return m

    def pod(self, *, node: str | None = None, ns: str = "default", requests: dict | None = None,
            labels: dict | None = None, priority: int | None = None, images: Iterable[str] = ("busybox",),
            ports: list | None = None, init: list | None = None, overhead: dict | None = None,
            name: str | None = None, **spec: Any) -> dict:
        self._n += 1
        name = name or (f"run-{self._n}" if node else f"pod-{self._n}")
        containers = []
        for i, image in enumerate(images):
            c: dict = {"name": f"c{i}", "image": image}
            if i == 0 and requests:
                c["resources"] = {"requests": dict(requests)}
                fixed = {k: v for k, v in requests.items() if "/" in k and not k.endswith("kubernetes.io")
                         or k.startswith("hugepages-")}
                if fixed:
                    c["resources"]["limits"] = fixed
            if i == 0 and ports:
                c["ports"] = ports
            containers.append(c)
        s: dict = {"containers": containers, **spec}
        if init:
            s["initContainers"] = init
        if overhead:  # as the RuntimeClass admission writes it: only a class defines an overhead
            s["runtimeClassName"] = self.runtime_class(overhead)
            s["overhead"] = overhead
        if priority is not None:
            s["priority"] = priority
        if node:
            s["nodeName"] = node
        meta: dict = {"name": name, "namespace": ns, "uid": f"uid-{ns}-{name}"}
        if labels:
            meta["labels"] = dict(labels)
        m = {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": s}
        if node:  # running: distinct start times, so that preemption's victim order is defined
            m["status"] = {"phase": "Running", "startTime": f"2026-01-01T00:{self._n // 60:02d}:{self._n % 60:02d}Z"}
        (self.pods if node else self.incoming).append(m)
        return m

    def runtime_class(self, overhead: dict) -> str:
        """The name of a RuntimeClass whose ``overhead.podFixed`` is ``overhead``, added to the
        objects the first time (no draw: the scenario's random stream is unchanged)."""
        name = "overhead-" + "-".join(f"{k}-{v}" for k, v in sorted(overhead.items())).lower()
        if not any(o["kind"] == "RuntimeClass" and o["metadata"]["name"] == name for o in self.objects):
            self.objects.append({"apiVersion": "node.k8s.io/v1", "kind": "RuntimeClass", "metadata": {"name": name},
                                 "handler": "runc", "overhead": {"podFixed": dict(overhead)}})
        return name

    def namespaces(self, names: Iterable[str] = NAMESPACES) -> None:
        for ns in names:
            labels = {"kubernetes.io/metadata.name": ns, "env": self.rng.choice(("prod", "test"))}
            if self.chance(0.5):
                labels["team"] = self.rng.choice(("a", "b"))
            self.objects.append({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns, "labels": labels}})

    def profile(self, **kw: Any) -> None:
        self.config = {**CONFIG_V1, "profiles": [{"schedulerName": "default-scheduler", **kw}]}

    def scenario(self) -> dict:
        return {"id": f"{self.cls}-{self.seed}", "class": self.cls, "seed": self.seed, "config": self.config,
                "nodes": self.nodes, "pods": self.pods, "objects": self.objects, "incoming": self.incoming,
                **self.scenario_extra}


def _qty_cpu(g: _Gen) -> str:
    return g.rng.choice(("0", "100m", "250m", "500m", "1", "1500m", "2", "3", "4"))


def _qty_mem(g: _Gen) -> str:
    return g.rng.choice(("0", "64Mi", "256Mi", "512Mi", "1Gi", "2Gi", "3Gi", "6Gi"))


def _requests(g: _Gen, extended: bool = True) -> dict:
    r: dict = {}
    if g.chance(0.85):
        r["cpu"] = _qty_cpu(g)
    if g.chance(0.8):
        r["memory"] = _qty_mem(g)
    if extended and g.chance(0.2):
        r["example.com/foo"] = str(g.rng.choice((1, 2, 3)))
    if extended and g.chance(0.15):
        r["nvidia.com/gpu"] = str(g.rng.choice((1, 2)))
    if extended and g.chance(0.15):
        r["ephemeral-storage"] = g.rng.choice(("1Gi", "10Gi", "50Gi"))
    if extended and g.chance(0.05):
        r["hugepages-2Mi"] = g.rng.choice(("2Mi", "1Gi"))
        r.setdefault("memory", "64Mi")  # the API server: HugePages require cpu or memory
    return r


def _basic_nodes(g: _Gen, n: int, **kw: Any) -> None:
    for _ in range(n):
        extra = {}
        if g.chance(0.4):
            extra["example.com/foo"] = str(g.rng.choice((0, 1, 2, 4)))
        if g.chance(0.3):
            extra["nvidia.com/gpu"] = str(g.rng.choice((0, 1, 2, 4)))
        if g.chance(0.5):
            extra["ephemeral-storage"] = g.rng.choice(("0", "20Gi", "100Gi"))
        if g.chance(0.1):
            extra["hugepages-2Mi"] = g.rng.choice(("0", "1Gi"))
        g.node(cpu=g.rng.choice(("1", "2", "4", "8", "3500m")), memory=g.rng.choice(("2Gi", "4Gi", "8Gi", "16Gi")),
               pods=g.rng.choice(("3", "10", "110", "110")), extra=extra, **kw)


def _fill(g: _Gen, k: int, **kw: Any) -> None:
    """k bound pods on random nodes, with random requests."""
    for _ in range(k):
        node = g.rng.choice(g.nodes)["metadata"]["name"]
        g.pod(node=node, requests=_requests(g), labels={"app": g.rng.choice(APPS)}, **kw)


ODD_CPU = ("1.5", "0.5", "1500m", "0.001", "2000m", "1e-1", "100m", "3")
ODD_MEM = ("100M", "1G", "1e9", "2Ki", "512Mi", "1.5Gi", "0", "128974848")


def _odd_requests(g: _Gen) -> dict:
    r: dict = {}
    if g.chance(0.8):
        r["cpu"] = g.rng.choice(ODD_CPU)
    if g.chance(0.8):
        r["memory"] = g.rng.choice(ODD_MEM)
    return r


def gen_resources(g: _Gen) -> None:
    _basic_nodes(g, g.rng.randint(2, 8))
    if g.chance(0.2):  # a node with nothing allocatable, or no room for pods
        g.nodes[0]["status"]["allocatable"].update({"cpu": "0", "pods": g.rng.choice(("0", "1"))})
    _fill(g, g.rng.randint(0, 14))
    for _ in range(g.rng.randint(1, 8)):
        kw: dict = {}
        if g.chance(0.2):
            kw["init"] = [{"name": "init", "image": "busybox", "resources": {"requests": {"cpu": _qty_cpu(g),
                                                                                          "memory": _qty_mem(g)}}}]
            if g.chance(0.5):
                kw["init"][0]["restartPolicy"] = "Always"  # a sidecar
            if g.chance(0.3):
                kw["init"].append({"name": "init2", "image": "busybox",
                                   "resources": {"requests": _odd_requests(g)} if g.chance(0.7) else {}})
        if g.chance(0.1):
            kw["overhead"] = {"cpu": "100m", "memory": "64Mi"}
        requests = _requests(g) if g.chance(0.7) else _odd_requests(g)
        images = g.rng.sample(("busybox", "nginx:1.25", "redis:7"), g.rng.randint(1, 2))
        m = g.pod(requests=requests, images=images, **kw)
        c0 = m["spec"]["containers"][0]
        if g.chance(0.15) and "cpu" in requests:  # limits only: the API server defaults requests to them
            c0["resources"] = {"limits": {k: v for k, v in c0["resources"]["requests"].items()}}
        if len(m["spec"]["containers"]) > 1 and g.chance(0.5):
            m["spec"]["containers"][1]["resources"] = {"requests": _odd_requests(g)}
        if g.chance(0.12):  # pod-level resources (PodLevelResources, beta and on in v1.34)
            c0["resources"] = {"requests": {"cpu": "100m", "memory": "64Mi"}}
            for c in m["spec"]["containers"][1:]:
                c.pop("resources", None)
            m["spec"]["resources"] = {"requests": {"cpu": g.rng.choice(("500m", "1", "2")),
                                                   "memory": g.rng.choice(("256Mi", "1Gi"))}}
            m["spec"].pop("initContainers", None)
            m["spec"].pop("overhead", None)
            m["spec"].pop("runtimeClassName", None)
    if g.chance(0.12):
        _declared_features(g)


#: features a node may declare (``status.declaredFeatures``): registered ones and one the scheduler
#: does not know (dropped when mapped)
DECLARED_FEATURES = ("RestartAllContainersOnContainerExits", "UserNamespacesHostNetworkSupport",
                     "VolumeBindMountOptions", "InPlacePodLevelResourcesVerticalScaling", "SomeFutureFeature")


def _declared_features(g: _Gen) -> None:
    """NodeDeclaredFeatures (drawn after the rest of the scenario, so its other draws stay as they
    were): some nodes declare features, and some incoming pods need one: a container or init
    container restart rule with action RestartAllContainers (ContainerRestartRules and
    RestartAllContainersOnContainerExits are beta, on); rarely a mount's bindMountOptions, which the
    API server drops (VolumeBindMountOptions is alpha, off), so the pod needs nothing."""
    for n in g.nodes:
        if g.chance(0.6):
            n["status"]["declaredFeatures"] = sorted(g.rng.sample(DECLARED_FEATURES, g.rng.randint(0, 3)))
    rule = {"action": "RestartAllContainers", "exitCodes": {"operator": "In", "values": [42]}}
    for m in g.incoming:
        c = g.rng.random()
        if c < 0.35:
            m["spec"]["containers"][0].update({"restartPolicy": "Never", "restartPolicyRules": [dict(rule)]})
        elif c < 0.45:
            m["spec"].setdefault("initContainers", []).insert(0, {
                "name": "init-r", "image": "busybox", "restartPolicy": "OnFailure", "restartPolicyRules": [dict(rule)]})
        elif c < 0.5:
            m["spec"]["volumes"] = [{"name": "scratch", "emptyDir": {}}]
            m["spec"]["containers"][0]["volumeMounts"] = [{"name": "scratch", "mountPath": "/scratch",
                                                           "bindMountOptions": ["nosuid"]}]


TAINTS = (
    {"key": "dedicated", "value": "gpu", "effect": "NoSchedule"},
    {"key": "dedicated", "value": "infra", "effect": "NoExecute"},
    {"key": "spot", "value": "true", "effect": "PreferNoSchedule"},
    {"key": "maintenance", "effect": "PreferNoSchedule"},
    {"key": "flaky", "value": "yes", "effect": "NoSchedule"},
    {"key": "node.kubernetes.io/not-ready", "effect": "NoExecute"},
)


def _toleration(g: _Gen) -> dict:
    t: dict[str, Any] = dict(g.rng.choice(TAINTS))
    if g.chance(0.3):
        t = {"key": t["key"], "operator": "Exists"}
        if g.chance(0.5):
            t["effect"] = g.rng.choice(("NoSchedule", "PreferNoSchedule", "NoExecute"))
    elif g.chance(0.1):
        t = {"operator": "Exists"}
    else:
        t["operator"] = "Equal"
        t.setdefault("value", "")
        if g.chance(0.3):
            t.pop("effect")
    if t.get("effect") == "NoExecute" and g.chance(0.3):
        t["tolerationSeconds"] = 60
    return t


PREFER_TAINTS = tuple({"key": f"soft-{i}", "value": v, "effect": "PreferNoSchedule"}
                      for i, v in enumerate(("a", "b", "", "c")))


def gen_taints(g: _Gen) -> None:
    for _ in range(g.rng.randint(2, 8)):
        taints = g.rng.sample(TAINTS, g.rng.choice((0, 1, 1, 2, 3)))
        if g.chance(0.4):
            taints += g.rng.sample(PREFER_TAINTS, g.rng.randint(1, 4))
        g.node(taints=[dict(t) for t in taints] or None, unschedulable=g.chance(0.1))
    _fill(g, g.rng.randint(0, 4))
    for _ in range(g.rng.randint(1, 6)):
        tol = [_toleration(g) for _ in range(g.rng.choice((0, 1, 2, 3)))]
        if g.chance(0.1):
            tol.append({"key": "node.kubernetes.io/unschedulable", "operator": "Exists", "effect": "NoSchedule"})
        if g.chance(0.3):
            t = dict(g.rng.choice(PREFER_TAINTS))
            tol.append(g.rng.choice(({**t, "operator": "Equal"}, {"key": t["key"], "operator": "Exists"},
                                     {"operator": "Exists", "effect": "PreferNoSchedule"},
                                     {"key": t["key"], "operator": "Equal", "value": "zz", "effect": "PreferNoSchedule"})))
        extra: dict[str, Any] = {"tolerations": tol} if tol else {}
        g.pod(requests={"cpu": "100m"}, **extra)


NODE_LABELS = {"disktype": ("ssd", "hdd", "nvme"), "tier": ("1", "2", "3", "10", "high", "007"), "gpu": ("true", "false"),
               "arch": ("amd64", "arm64")}


def _node_labels(g: _Gen) -> dict:
    return {k: g.rng.choice(v) for k, v in NODE_LABELS.items() if g.chance(0.6)}


def _selector_req(g: _Gen, *, fields: bool = False, required: bool = False) -> dict:
    if fields and g.chance(0.7):
        return {"key": "metadata.name", "operator": g.rng.choice(("In", "NotIn")),
                "values": [f"node-{g.rng.randint(0, 7)}"]}
    key = g.rng.choice(list(NODE_LABELS) + ["topology.kubernetes.io/zone"])
    vals = NODE_LABELS.get(key, ZONES)
    op = g.rng.choice(("In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt") if key == "tier" else
                      ("In", "NotIn", "Exists", "DoesNotExist"))
    r: dict = {"key": key, "operator": op}
    if op in ("In", "NotIn"):
        r["values"] = g.rng.sample(list(vals), g.rng.randint(1, 2))
    elif op in ("Gt", "Lt"):
        # the API server refuses values that are not label values in required terms only
        r["values"] = [str(g.rng.randint(0 if required else -1, 5))]
    return r


def _node_selector_term(g: _Gen, required: bool = False) -> dict:
    term: dict = {}
    if g.chance(0.85):
        term["matchExpressions"] = [_selector_req(g, required=required) for _ in range(g.rng.randint(1, 2))]
    if g.chance(0.3) or not term:
        f = _selector_req(g, fields=True, required=required)
        if f["key"] == "metadata.name":
            term["matchFields"] = [f]
        elif not term:
            term["matchExpressions"] = [f]
    return term


def gen_affinity(g: _Gen) -> None:
    for _ in range(g.rng.randint(2, 8)):
        g.node(labels=_node_labels(g))
    _fill(g, g.rng.randint(0, 4))
    for _ in range(g.rng.randint(1, 6)):
        spec: dict = {}
        if g.chance(0.35):
            spec["nodeSelector"] = {k: g.rng.choice(v) for k, v in g.rng.sample(sorted(NODE_LABELS.items()), 1)}
        aff: dict = {}
        if g.chance(0.5):
            aff["requiredDuringSchedulingIgnoredDuringExecution"] = {
                "nodeSelectorTerms": [_node_selector_term(g, True) for _ in range(g.rng.randint(1, 2))]}
        if g.chance(0.6):
            aff["preferredDuringSchedulingIgnoredDuringExecution"] = [
                {"weight": g.rng.randint(1, 100), "preference": _node_selector_term(g)}
                for _ in range(g.rng.randint(1, 3))]
        if aff:
            spec["affinity"] = {"nodeAffinity": aff}
        g.pod(requests={"cpu": "100m"}, **spec)


TOPOLOGY_KEYS = ("kubernetes.io/hostname", "topology.kubernetes.io/zone")


def _label_selector(g: _Gen) -> dict:
    c = g.rng.random()
    if c < 0.5:
        return {"matchLabels": {"app": g.rng.choice(APPS)}}
    if c < 0.8:
        return {"matchExpressions": [{"key": "app", "operator": g.rng.choice(("In", "NotIn")),
                                      "values": g.rng.sample(APPS, g.rng.randint(1, 2))}]}
    if c < 0.9:
        return {"matchExpressions": [{"key": "team", "operator": g.rng.choice(("Exists", "DoesNotExist"))}]}
    return {}


def _pod_term(g: _Gen) -> dict:
    t: dict = {"topologyKey": g.rng.choice(TOPOLOGY_KEYS), "labelSelector": _label_selector(g)}
    c = g.rng.random()
    if c < 0.2:
        t["namespaces"] = g.rng.sample(NAMESPACES, g.rng.randint(1, 2))
    elif c < 0.35:
        t["namespaceSelector"] = g.rng.choice(({}, {"matchLabels": {"env": "prod"}},
                                               {"matchExpressions": [{"key": "team", "operator": "Exists"}]}))
    if g.chance(0.1):
        t["matchLabelKeys"] = ["version"]
    elif g.chance(0.05):
        t["mismatchLabelKeys"] = ["version"]
    return t


def _pod_affinity(g: _Gen, existing: bool = False) -> dict:
    aff: dict = {}
    for kind in g.rng.sample(("podAffinity", "podAntiAffinity"), g.rng.randint(1, 2)):
        terms: dict = {}
        if g.chance(0.5):
            terms["requiredDuringSchedulingIgnoredDuringExecution"] = [_pod_term(g)]
        if g.chance(0.7):
            terms["preferredDuringSchedulingIgnoredDuringExecution"] = [
                {"weight": g.rng.randint(1, 100), "podAffinityTerm": _pod_term(g)} for _ in range(g.rng.randint(1, 2))]
        if terms:
            aff[kind] = terms
    return aff


def _pod_labels(g: _Gen) -> dict:
    labels = {"app": g.rng.choice(APPS)}
    if g.chance(0.4):
        labels["team"] = g.rng.choice(("a", "b"))
    if g.chance(0.3):
        labels["version"] = g.rng.choice(("v1", "v2"))
    return labels


def gen_podaffinity(g: _Gen) -> None:
    g.namespaces()
    for _ in range(g.rng.randint(2, 9)):
        g.node(zone=g.chance(0.9))
    for _ in range(g.rng.randint(0, 12)):
        spec: dict = {}
        if g.chance(0.35):
            aff = _pod_affinity(g, existing=True)
            if aff:
                spec["affinity"] = aff
        g.pod(node=g.rng.choice(g.nodes)["metadata"]["name"], ns=g.rng.choice(NAMESPACES), labels=_pod_labels(g),
              requests={"cpu": "100m"}, **spec)
    for _ in range(g.rng.randint(1, 6)):
        spec = {}
        aff = _pod_affinity(g)
        if aff and g.chance(0.85):
            spec["affinity"] = aff
        labels = _pod_labels(g)
        if g.chance(0.15):  # a pod whose required affinity only it matches (the first of its group)
            labels["group"] = "g1"
            spec["affinity"] = {"podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
                {"labelSelector": {"matchLabels": {"group": "g1"}}, "topologyKey": g.rng.choice(TOPOLOGY_KEYS)}]}}
        g.pod(ns=g.rng.choice(NAMESPACES), labels=labels, requests={"cpu": "100m"}, **spec)


def _spread_constraint(g: _Gen, key: str, unsat: str) -> dict:
    c: dict = {"maxSkew": g.rng.choice((1, 1, 2, 3)), "topologyKey": key, "whenUnsatisfiable": unsat,
               "labelSelector": _label_selector(g)}
    if unsat == "DoNotSchedule" and g.chance(0.25):
        c["minDomains"] = g.rng.randint(1, 5)
    if g.chance(0.2):
        c["nodeAffinityPolicy"] = g.rng.choice(("Honor", "Ignore"))
    if g.chance(0.2):
        c["nodeTaintsPolicy"] = g.rng.choice(("Honor", "Ignore"))
    if g.chance(0.2):
        c["matchLabelKeys"] = ["version"]
    return c


def gen_spread(g: _Gen) -> None:
    g.namespaces(("default", "prod"))
    for _ in range(g.rng.randint(2, 16)):
        taints = [dict(TAINTS[0])] if g.chance(0.15) else None
        g.node(zone=g.chance(0.85), labels=_node_labels(g) if g.chance(0.5) else None, taints=taints)
    for _ in range(g.rng.randint(0, 20)):
        m = g.pod(node=g.rng.choice(g.nodes)["metadata"]["name"], labels=_pod_labels(g), requests={"cpu": "100m"},
                  ns="prod" if g.chance(0.15) else "default")
        if g.chance(0.08):  # terminating: still on its node, not counted by spreading
            m["metadata"]["deletionTimestamp"] = "2026-05-31T23:59:00Z"
            m["metadata"]["deletionGracePeriodSeconds"] = 30
    if g.chance(0.3):  # system default spreading: a Service selects the pods
        app = g.rng.choice(APPS)
        g.objects.append({"apiVersion": "v1", "kind": "Service", "metadata": {"name": f"svc-{app}", "namespace": "default"},
                          "spec": {"selector": {"app": app}, "ports": [{"port": 80}]}})
    for _ in range(g.rng.randint(1, 6)):
        spec: dict = {}
        if g.chance(0.8):
            pairs = g.rng.sample([(k, u) for k in TOPOLOGY_KEYS for u in ("DoNotSchedule", "ScheduleAnyway")],
                                 g.rng.randint(1, 2))
            spec["topologySpreadConstraints"] = [_spread_constraint(g, k, u) for k, u in pairs]
        if g.chance(0.2):
            spec["nodeSelector"] = {"disktype": g.rng.choice(NODE_LABELS["disktype"])}
        elif g.chance(0.2):  # required node affinity (what nodeAffinityPolicy Honor filters domains by)
            spec["affinity"] = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": [_node_selector_term(g, True)]}}}
        if g.chance(0.2):
            spec["tolerations"] = [{"key": "dedicated", "operator": "Exists"}]
        labels = _pod_labels(g)
        # replicas (as a Deployment's pods): equal specs from separate manifests, which the
        # scheduler interns to one spec, so PodTopologySpread's per-spec kept PreScore state serves
        # the later ones while each bind moves the counts
        for _ in range(g.rng.randint(2, 4) if g.chance(0.35) else 1):
            g.pod(labels=dict(labels), requests={"cpu": "100m"}, **copy.deepcopy(spec))


def _ports(g: _Gen) -> list:
    out = []
    for _ in range(g.rng.randint(1, 2)):
        p: dict = {"containerPort": g.rng.choice((80, 443, 8080)), "hostPort": g.rng.choice((80, 443, 8080, 9000))}
        if g.chance(0.3):
            p["protocol"] = g.rng.choice(("UDP", "SCTP", "TCP"))
        if g.chance(0.3):
            p["hostIP"] = g.rng.choice(("0.0.0.0", "10.0.0.1", "10.0.0.2"))
        out.append(p)
    # the API server refuses duplicate (hostPort, protocol, hostIP) within a pod
    seen, uniq = set(), []
    for p in out:
        k = (p["hostPort"], p.get("protocol", "TCP"), p.get("hostIP", ""))
        if k not in seen:
            seen.add(k)
            uniq.append(p)
    return uniq


def gen_ports(g: _Gen) -> None:
    for _ in range(g.rng.randint(2, 6)):
        g.node()
    for _ in range(g.rng.randint(0, 8)):
        g.pod(node=g.rng.choice(g.nodes)["metadata"]["name"], ports=_ports(g) if g.chance(0.6) else None)
    for _ in range(g.rng.randint(1, 6)):
        if g.chance(0.15):  # host network: the API server defaults each containerPort's hostPort to it
            g.pod(ports=[{"containerPort": g.rng.choice((80, 443, 9000))}], requests={"cpu": "100m"}, hostNetwork=True)
            continue
        kw: dict = {}
        if g.chance(0.2):  # an init container's hostPort (a sidecar's counts, a plain one's does not)
            kw["init"] = [{"name": "init", "image": "busybox", "ports": _ports(g),
                           **({"restartPolicy": "Always"} if g.chance(0.6) else {})}]
        g.pod(ports=_ports(g) if g.chance(0.8) else None, requests={"cpu": "100m"}, **kw)


IMAGES = (("nginx:1.25", 60 * 2**20), ("docker.io/library/redis:7", 120 * 2**20), ("busybox:latest", 2 * 2**20),
          ("postgres:16", 400 * 2**20), ("tensorflow/tensorflow:2.15.0-gpu", 3 * 2**30),
          ("registry.k8s.io/pause:3.9", 700 * 2**10), ("example.com/big:1", 1500 * 2**20),
          ("nginx@sha256:" + "ab" * 32, 61 * 2**20), ("docker.io/library/nginx:latest", 70 * 2**20),
          ("quay.io/org/app:2", 30 * 2**20), ("tiny:1", 10 * 2**20))


def gen_images(g: _Gen) -> None:
    for _ in range(g.rng.randint(2, 8)):
        imgs = g.rng.sample(IMAGES, g.rng.randint(0, 4))
        g.node(images=[((n,) if not n.startswith("docker.io/library/") else (n, n.split("/")[-1]), s)
                       for n, s in imgs])
    for _ in range(g.rng.randint(1, 6)):
        names = [n for n, _ in g.rng.sample(IMAGES, g.rng.randint(1, 3))]
        names = [n.replace("docker.io/library/", "") if g.chance(0.5) else n for n in names]
        names = [n.replace(":latest", "") if g.chance(0.5) else n for n in names]
        kw: dict = {}
        if g.chance(0.3):  # init containers' and sidecars' images
            kw["init"] = [{"name": f"init{j}", "image": n, **({"restartPolicy": "Always"} if g.chance(0.5) else {})}
                          for j, (n, _) in enumerate(g.rng.sample(IMAGES, g.rng.randint(1, 2)))]
        g.pod(images=names, requests={"cpu": "100m"}, **kw)
    if g.chance(0.25):
        _image_volumes(g)


def _image_volumes(g: _Gen) -> None:
    """Image volumes (``volumes[].image.reference``; ImageVolume is GA), which ImageLocality counts
    since v1.37 like container images. Drawn after the rest of the scenario, so its other draws
    stay as they were."""
    for m in g.incoming:
        if g.chance(0.6):
            refs = [n for n, _ in g.rng.sample(IMAGES, g.rng.randint(1, 3))]
            refs = [n.replace("docker.io/library/", "") if g.chance(0.5) else n for n in refs]
            refs = [n.replace(":latest", "") if g.chance(0.5) else n for n in refs]
            m["spec"]["volumes"] = [{"name": f"img{j}", "image": {"reference": r, "pullPolicy": "IfNotPresent"}}
                                    for j, r in enumerate(refs)]
            m["spec"]["containers"][0]["volumeMounts"] = [{"name": f"img{j}", "mountPath": f"/img{j}", "readOnly": True}
                                                          for j in range(len(refs))]


def gen_preemption(g: _Gen) -> None:
    g.namespaces(("default",))
    prios = (0, 10, 100, 500, 1000)
    for p in prios:
        g.objects.append({"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass",
                          "metadata": {"name": f"prio-{p}"}, "value": p})
        # a class that never preempts: the Priority admission plugin gives its pods that policy (and
        # refuses a pod that asks for another one in its spec)
        g.objects.append({"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass",
                          "metadata": {"name": f"prio-{p}-never"}, "value": p, "preemptionPolicy": "Never"})
    for _ in range(g.rng.randint(1, 6)):
        g.node(cpu=g.rng.choice(("1", "2", "4")), memory="8Gi", pods=g.rng.choice(("4", "110")),
               taints=[dict(TAINTS[0])] if g.chance(0.1) else None)
    for _ in range(g.rng.randint(len(g.nodes) * 2, len(g.nodes) * 5)):
        g.pod(node=g.rng.choice(g.nodes)["metadata"]["name"], labels={"app": g.rng.choice(APPS)},
              requests={"cpu": g.rng.choice(("250m", "500m", "1")), "memory": g.rng.choice(("256Mi", "2Gi"))},
              priority=g.rng.choice(prios), priorityClassName=None)
    for pod in g.pods:
        pr = pod["spec"]["priority"]
        pod["spec"].pop("priorityClassName", None)
        pod["spec"]["priorityClassName"] = f"prio-{pr}"
        pod["spec"]["terminationGracePeriodSeconds"] = 0
    for app in g.rng.sample(APPS, g.rng.choice((0, 1, 1, 2))):
        g.objects.append({"apiVersion": "policy/v1", "kind": "PodDisruptionBudget",
                          "metadata": {"name": f"pdb-{app}", "namespace": "default"},
                          "spec": {"selector": {"matchLabels": {"app": app}}, "minAvailable": 1},
                          "status": {"disruptionsAllowed": g.rng.choice((0, 1)), "currentHealthy": 1,
                                     "desiredHealthy": 1, "expectedPods": 1}})
    for _ in range(g.rng.randint(1, 5)):
        pr = g.rng.choice((10, 100, 500, 1000, 1000))
        never = g.chance(0.15)
        spec: dict = {"priorityClassName": f"prio-{pr}-never" if never else f"prio-{pr}"}
        if never:  # as the admission plugin writes it
            spec["preemptionPolicy"] = "Never"
        spec["terminationGracePeriodSeconds"] = 0  # a victim later on goes at once, on both sides
        g.pod(labels={"app": g.rng.choice(APPS)}, requests={"cpu": g.rng.choice(("500m", "1", "2")), "memory": "256Mi"},
              priority=pr, **spec)


def gen_preemption_ties(g: _Gen) -> None:
    """Preemption where the victim order rests on Go's ``sort.Slice``: every node is full of more
    than 12 pods of a few priorities sharing a few start times, so ``MoreImportantVictim`` ties
    beyond pdqsort's insertion-sort length and the tied pods' order (which ones are reprieved, which
    ones a PDB counts as violating) is pdqsort's. The other preemption scenarios avoid this on
    purpose (distinct start times)."""
    g.namespaces(("default",))
    prios = (0, 10, 1000)
    for p in prios:
        g.objects.append({"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass",
                          "metadata": {"name": f"prio-{p}"}, "value": p})
    starts = [f"2026-01-01T00:00:{s:02d}Z" for s in g.rng.sample(range(60), g.rng.choice((1, 1, 2, 3)))]
    low = (0, 0, 0, 10) if g.chance(0.5) else (0,)
    for _ in range(g.rng.randint(1, 3)):
        node = g.node(cpu=g.rng.choice(("4", "8")), memory="64Gi", pods="110")
        name = node["metadata"]["name"]
        cpu_m = int(node["status"]["allocatable"]["cpu"]) * 1000
        used = 0
        while True:  # fill the node: the preemptor fits only once some of these go
            req = g.rng.choice((100, 250, 250, 500))
            if used + req > cpu_m:
                break
            used += req
            m = g.pod(node=name, labels={"app": g.rng.choice(APPS)}, requests={"cpu": f"{req}m", "memory": "64Mi"},
                      priority=g.rng.choice(low), priorityClassName=None)
            m["status"]["startTime"] = g.rng.choice(starts)
    for pod in g.pods:
        pod["spec"]["priorityClassName"] = f"prio-{pod['spec']['priority']}"
        pod["spec"]["terminationGracePeriodSeconds"] = 0
    for app in g.rng.sample(APPS, g.rng.choice((1, 1, 2, 3))):
        g.objects.append({"apiVersion": "policy/v1", "kind": "PodDisruptionBudget",
                          "metadata": {"name": f"pdb-{app}", "namespace": "default"},
                          "spec": {"selector": {"matchLabels": {"app": app}}, "minAvailable": 1},
                          "status": {"disruptionsAllowed": g.rng.choice((0, 1, 2, 3)), "currentHealthy": 1,
                                     "desiredHealthy": 1, "expectedPods": 1}})
    for _ in range(g.rng.randint(1, 4)):
        g.pod(labels={"app": g.rng.choice(APPS)},
              requests={"cpu": g.rng.choice(("300m", "700m", "1", "1500m", "2")), "memory": "64Mi"},
              priority=1000, priorityClassName="prio-1000", terminationGracePeriodSeconds=0)


def gen_profiles(g: _Gen) -> None:
    """Non-default plugin args and weights, and a second profile the pods may name."""
    strategy = g.rng.choice(("LeastAllocated", "MostAllocated", "RequestedToCapacityRatio"))
    fit_args: dict = {"scoringStrategy": {"type": strategy,
                                          "resources": [{"name": "cpu", "weight": g.rng.randint(1, 5)},
                                                        {"name": "memory", "weight": g.rng.randint(1, 5)}]}}
    if strategy == "RequestedToCapacityRatio":
        points = sorted(g.rng.sample(range(0, 101), g.rng.choice((2, 3, 4))))
        fit_args["scoringStrategy"]["requestedToCapacityRatio"] = {
            "shape": [{"utilization": u, "score": g.rng.randint(0, 10)} for u in points]}
    if g.chance(0.2):
        fit_args["ignoredResources"] = ["example.com/foo"]
    elif g.chance(0.2):
        fit_args["ignoredResourceGroups"] = ["example.com"]
    if g.chance(0.3):
        fit_args["scoringStrategy"]["resources"].append({"name": "example.com/foo", "weight": 2})
    plugin_config = [{"name": "NodeResourcesFit", "args": fit_args}]
    if g.chance(0.4):
        plugin_config.append({"name": "NodeResourcesBalancedAllocation",
                              "args": {"resources": [{"name": "cpu", "weight": 1}, {"name": "memory", "weight": 1},
                                                     *([{"name": "example.com/foo", "weight": 1}] if g.chance(0.5) else [])]}})
    if g.chance(0.4):
        plugin_config.append({"name": "InterPodAffinity", "args": {"hardPodAffinityWeight": g.rng.choice((0, 1, 50, 100)),
                                                                   "ignorePreferredTermsOfExistingPods": g.chance(0.5)}})
    if g.chance(0.4):
        added: dict = {"preferredDuringSchedulingIgnoredDuringExecution": [
            {"weight": 10, "preference": _node_selector_term(g, True)}]}
        if g.chance(0.3):
            added["requiredDuringSchedulingIgnoredDuringExecution"] = {"nodeSelectorTerms": [
                {"matchExpressions": [{"key": "arch", "operator": "NotIn", "values": ["arm64"]}]}]}
        plugin_config.append({"name": "NodeAffinity", "args": {"addedAffinity": added}})
    if g.chance(0.3):
        plugin_config.append({"name": "PodTopologySpread", "args": {"defaultingType": "List", "defaultConstraints": [
            {"maxSkew": 1, "topologyKey": "topology.kubernetes.io/zone", "whenUnsatisfiable": "ScheduleAnyway"}]}})
    score: dict = {}
    if g.chance(0.6):
        score["enabled"] = [{"name": n, "weight": g.rng.randint(1, 10)} for n in
                            g.rng.sample(("NodeResourcesFit", "ImageLocality", "TaintToleration", "NodeAffinity",
                                          "PodTopologySpread", "InterPodAffinity", "NodeResourcesBalancedAllocation"),
                                         g.rng.randint(1, 3))]
    if g.chance(0.3):
        score["disabled"] = [{"name": g.rng.choice(("ImageLocality", "NodeResourcesBalancedAllocation", "TaintToleration"))}]
        if score.get("enabled"):
            score["enabled"] = [e for e in score["enabled"] if e["name"] != score["disabled"][0]["name"]]
    prof: dict = {"schedulerName": "default-scheduler", "pluginConfig": plugin_config}
    if score:
        prof["plugins"] = {"score": score}
    other = {"schedulerName": "other-scheduler",
             "plugins": {"multiPoint": {"disabled": [{"name": "NodeResourcesBalancedAllocation"}]},
                         "score": {"enabled": [{"name": "NodeResourcesFit", "weight": 5}]}}}
    g.config = {**CONFIG_V1, "profiles": [prof, other]}
    g.namespaces(("default",))
    _basic_nodes(g, g.rng.randint(2, 8), labels=None)
    for n in g.nodes:
        n["metadata"]["labels"].update(_node_labels(g))
        if g.chance(0.3):
            n["status"]["images"] = [{"names": [m], "sizeBytes": s} for m, s in g.rng.sample(IMAGES, 2)]
    _fill(g, g.rng.randint(0, 10))
    for _ in range(g.rng.randint(0, 6)):  # running pods with affinity terms, for InterPodAffinity's args
        aff = _pod_affinity(g)
        extra: dict[str, Any] = {"affinity": aff} if aff else {}
        g.pod(node=g.rng.choice(g.nodes)["metadata"]["name"], labels=_pod_labels(g), requests={"cpu": "100m"}, **extra)
    for _ in range(g.rng.randint(1, 6)):
        spec: dict = {}
        if g.chance(0.3):
            spec["schedulerName"] = "other-scheduler"
        if g.chance(0.3):
            spec["affinity"] = _pod_affinity(g) or None
            if spec["affinity"] is None:
                spec.pop("affinity")
        g.pod(requests=_requests(g), labels=_pod_labels(g), **spec)


def gen_volumes(g: _Gen) -> None:
    g.namespaces(("default",))
    n_nodes = g.rng.randint(2, 6)
    for i in range(n_nodes):
        g.node(labels={"topology.kubernetes.io/region": g.rng.choice(("region-1", "region-2"))} if g.chance(0.6) else None)
        if g.chance(0.15):  # a node with the beta zone label only
            lab = g.nodes[-1]["metadata"]["labels"]
            if "topology.kubernetes.io/zone" in lab:
                lab["failure-domain.beta.kubernetes.io/zone"] = lab.pop("topology.kubernetes.io/zone")
    driver = "ebs.csi.example.com"
    for n in g.nodes:
        if g.chance(0.7):
            alloc = {"count": g.rng.randint(0, 3)} if g.chance(0.8) else None
            d: dict = {"name": driver, "nodeID": n["metadata"]["name"], "topologyKeys": ["topology.kubernetes.io/zone"]}
            if alloc is not None:
                d["allocatable"] = alloc
            drivers = [d]
            if g.chance(0.5):  # the CSI drivers in-tree AWS EBS and GCE PD volumes migrate to
                for name in ("ebs.csi.aws.com", "pd.csi.storage.gke.io"):
                    drivers.append({"name": name, "nodeID": n["metadata"]["name"],
                                    "allocatable": {"count": g.rng.randint(0, 2)}})
            g.objects.append({"apiVersion": "storage.k8s.io/v1", "kind": "CSINode", "metadata": {"name": n["metadata"]["name"]},
                              "spec": {"drivers": drivers}})
    g.objects.append({"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass", "metadata": {"name": "wait"},
                      "provisioner": "kubernetes.io/no-provisioner", "volumeBindingMode": "WaitForFirstConsumer"})
    g.objects.append({"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass", "metadata": {"name": "now"},
                      "provisioner": driver, "volumeBindingMode": "Immediate"})
    claims: list[str] = []
    if g.chance(0.5):  # dynamic provisioning at the first consumer, perhaps limited by published capacity
        sc: dict = {"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass", "metadata": {"name": "provisioned"},
                    "provisioner": driver, "volumeBindingMode": "WaitForFirstConsumer", "reclaimPolicy": "Delete"}
        if g.chance(0.4):
            sc["allowedTopologies"] = [{"matchLabelExpressions": [
                {"key": "topology.kubernetes.io/zone", "values": g.rng.sample(ZONES, g.rng.randint(1, 2))}]}]
        g.objects.append(sc)
        if g.chance(0.6):
            g.objects.append({"apiVersion": "storage.k8s.io/v1", "kind": "CSIDriver", "metadata": {"name": driver},
                              "spec": {"storageCapacity": True, "attachRequired": True}})
            for j, zone in enumerate(g.rng.sample(ZONES, g.rng.randint(1, 3))):
                cap: dict = {"apiVersion": "storage.k8s.io/v1", "kind": "CSIStorageCapacity",
                             "metadata": {"name": f"cap-{j}", "namespace": "default"},
                             "storageClassName": "provisioned",
                             "nodeTopology": {"matchLabels": {"topology.kubernetes.io/zone": zone}},
                             "capacity": g.rng.choice(("0", "2Gi", "5Gi", "20Gi"))}
                if g.chance(0.3):
                    cap["maximumVolumeSize"] = g.rng.choice(("1Gi", "4Gi"))
                g.objects.append(cap)
        for k in range(g.rng.randint(1, 3)):
            name = f"dyn-{k}"
            g.objects.append({"apiVersion": "v1", "kind": "PersistentVolumeClaim",
                              "metadata": {"name": name, "namespace": "default", "uid": f"uid-dyn-{k}"},
                              "spec": {"accessModes": ["ReadWriteOnce"], "storageClassName": "provisioned",
                                       "resources": {"requests": {"storage": g.rng.choice(("1Gi", "3Gi", "8Gi"))}}},
                              "status": {"phase": "Pending"}})
            claims.append(name)
    n_pvs = g.rng.randint(1, 6)
    # distinct sizes: among equally small matching PVs upstream takes the first of an unordered index
    sizes = g.rng.sample(range(1, 21), n_pvs)
    for i in range(n_pvs):
        zone = g.rng.choice(ZONES)
        cls = g.rng.choice(("wait", "now"))
        pv: dict = {"apiVersion": "v1", "kind": "PersistentVolume",
                    "metadata": {"name": f"pv-{i}", "labels": {}},
                    "spec": {"capacity": {"storage": f"{sizes[i]}Gi"},
                             "accessModes": [g.rng.choice(("ReadWriteOnce", "ReadWriteOncePod", "ReadOnlyMany"))],
                             "storageClassName": cls, "persistentVolumeReclaimPolicy": "Retain"}}
        if cls == "wait":
            pv["spec"]["local"] = {"path": f"/mnt/{i}"}
            pv["spec"]["nodeAffinity"] = {"required": {"nodeSelectorTerms": [{"matchExpressions": [
                {"key": "kubernetes.io/hostname", "operator": "In",
                 "values": [g.rng.choice(g.nodes)["metadata"]["name"]]}]}]}}
        else:
            pv["spec"]["csi"] = {"driver": driver, "volumeHandle": f"vol-{i}"}
            if g.chance(0.6):
                pv["metadata"]["labels"]["topology.kubernetes.io/zone"] = zone
                if g.chance(0.3):  # the in-tree multi-zone form, and a region
                    pv["metadata"]["labels"]["topology.kubernetes.io/zone"] = "__".join(sorted(g.rng.sample(ZONES, 2)))
                if g.chance(0.3):
                    pv["metadata"]["labels"]["topology.kubernetes.io/region"] = g.rng.choice(("region-1", "region-2"))
                if g.chance(0.2):  # the beta label VolumeZone also reads
                    pv["metadata"]["labels"]["failure-domain.beta.kubernetes.io/zone"] = \
                        pv["metadata"]["labels"].pop("topology.kubernetes.io/zone")
        pvc: dict = {"apiVersion": "v1", "kind": "PersistentVolumeClaim",
                     "metadata": {"name": f"claim-{i}", "namespace": "default", "uid": f"uid-claim-{i}"},
                     "spec": {"accessModes": pv["spec"]["accessModes"], "storageClassName": cls,
                              "resources": {"requests": {"storage": "1Gi"}}}}
        if cls == "now" or g.chance(0.3):  # bound already
            pvc["spec"]["volumeName"] = pv["metadata"]["name"]
            pvc["status"] = {"phase": "Bound", "accessModes": pv["spec"]["accessModes"],
                             "capacity": pv["spec"]["capacity"]}
            pv["spec"]["claimRef"] = {"kind": "PersistentVolumeClaim", "namespace": "default", "name": pvc["metadata"]["name"],
                                      "uid": f"uid-claim-{i}"}
            pv["status"] = {"phase": "Bound"}
            pvc["metadata"]["uid"] = f"uid-claim-{i}"
            pvc["metadata"]["annotations"] = {"pv.kubernetes.io/bind-completed": "yes"}  # the PV controller's
        else:
            pvc["status"] = {"phase": "Pending"}
            pv["status"] = {"phase": "Available"}
        g.objects += [pv, pvc]
        claims.append(pvc["metadata"]["name"])
    for _ in range(g.rng.randint(0, 5)):
        c = g.rng.choice(claims)
        pvc = next(o for o in g.objects if o["kind"] == "PersistentVolumeClaim" and o["metadata"]["name"] == c)
        if "volumeName" in pvc["spec"]:
            g.pod(node=g.rng.choice(g.nodes)["metadata"]["name"],
                  volumes=[{"name": "v", "persistentVolumeClaim": {"claimName": c}}])
    if g.chance(0.15):  # a claim being deleted
        pvc = next(o for o in g.objects if o["kind"] == "PersistentVolumeClaim")
        pvc["metadata"]["deletionTimestamp"] = "2026-05-31T23:59:00Z"
        pvc["metadata"]["finalizers"] = ["kubernetes.io/pvc-protection"]
    def inline_volume(j: int) -> dict:  # in-tree volumes VolumeRestrictions checks for conflicts
        kind = g.rng.choice(("gce", "aws", "iscsi", "rbd"))
        src: dict[str, Any]
        if kind == "gce":
            src = {"gcePersistentDisk": {"pdName": g.rng.choice(("disk-a", "disk-b")), "readOnly": g.chance(0.5)}}
        elif kind == "aws":
            src = {"awsElasticBlockStore": {"volumeID": g.rng.choice(("vol-a", "vol-b"))}}
        elif kind == "iscsi":
            src = {"iscsi": {"targetPortal": "10.0.0.1:3260", "iqn": "iqn.2026-01.com.example:t", "lun": g.rng.choice((0, 1)),
                             "readOnly": g.chance(0.5)}}
        else:
            src = {"rbd": {"monitors": ["10.0.0.2:6789"], "pool": "rbd", "image": g.rng.choice(("img-a", "img-b")),
                           "readOnly": g.chance(0.5)}}
        return {"name": f"inline{j}", **src}

    for _ in range(g.rng.randint(0, 3)):
        g.pod(node=g.rng.choice(g.nodes)["metadata"]["name"], volumes=[inline_volume(0)])
    for _ in range(g.rng.randint(1, 4)):
        if g.chance(0.25):
            g.pod(requests={"cpu": "100m"}, volumes=[inline_volume(j) for j in range(g.rng.randint(1, 2))])
            continue
        names = g.rng.sample(claims, g.rng.randint(1, min(3, len(claims))))
        if g.chance(0.04):
            names.append("missing-claim")
        vols = [{"name": f"v{j}", "persistentVolumeClaim": {"claimName": c}} for j, c in enumerate(names)]
        g.pod(requests={"cpu": "100m"}, volumes=vols)
    if g.chance(0.2):
        _driver_required(g, driver)


def _service_account_tokens(g: _Gen) -> None:
    """What the ServiceAccount admission plugin adds to a pod that does not opt out
    (``mountServiceAccountToken``), as a cluster's pods hold it: a projected volume
    ``kube-api-access-<5 random characters>`` appended to ``spec.volumes`` and a read-only mount of
    it appended to every init container's and container's mounts. Most pods, bound and incoming;
    drawn from an RNG of its own after the rest of the scenario, so the class's other draws stay
    as they were."""
    rng = random.Random(f"{g.cls}:{g.seed}:service-account-token")
    for m in (*g.pods, *g.incoming):
        if rng.random() < 0.15:  # automountServiceAccountToken: false
            continue
        add_service_account_token(m, rng)


def _controller_fields(g: _Gen) -> None:
    """The fields the StatefulSet and Indexed Job controllers write per pod, on some pods: a
    ``spec.hostname`` and ``spec.subdomain`` (a StatefulSet's pod, or an Indexed Job's with a
    subdomain), or a completion index annotation with ``generateName: <name>-`` (an Indexed
    Job's). The scheduler reads none of them; fastsched's loader takes them as per-pod fields of a
    template (``fastsched.api.templates``), so the differential covers pods stamped with their own.
    Drawn from an RNG of its own after the rest (and after the token volumes), so the class's other
    draws stay as they were."""
    rng = random.Random(f"{g.cls}:{g.seed}:controller-fields")
    for i, m in enumerate((*g.pods, *g.incoming)):
        roll = rng.random()
        if roll < 0.3:
            m["spec"]["hostname"] = f"host-{i}"
            m["spec"]["subdomain"] = "svc"
        elif roll < 0.5:
            meta = m["metadata"]
            meta.setdefault("annotations", {})["batch.kubernetes.io/job-completion-index"] = str(i)
            if meta.get("name"):
                meta["generateName"] = f"{meta['name']}-"
            if rng.random() < 0.5:
                m["spec"]["hostname"] = f"job-{i}"


def _driver_required(g: _Gen, driver: str) -> None:
    """VolumeLimitScaling (beta, on): the CSIDriver of the class's driver sets
    ``preventPodSchedulingIfMissing`` (or, rarely, false), and some nodes' CSINodes do not list
    it (NodeVolumeLimits then refuses them for the driver's volumes). Only this driver sets it:
    with two missing upstream's message would name either. Drawn after the rest of the scenario,
    so its other draws stay as they were."""
    csi_driver = next((o for o in g.objects if o["kind"] == "CSIDriver" and o["metadata"]["name"] == driver), None)
    if csi_driver is None:
        csi_driver = {"apiVersion": "storage.k8s.io/v1", "kind": "CSIDriver", "metadata": {"name": driver}, "spec": {}}
        g.objects.append(csi_driver)
    csi_driver["spec"]["preventPodSchedulingIfMissing"] = not g.chance(0.1)
    for o in g.objects:
        if o["kind"] == "CSINode" and g.chance(0.4):
            o["spec"]["drivers"] = [d for d in o["spec"]["drivers"] if d["name"] != driver]


DRA_DRIVER = "gpu.example.com"
_A = f'device.attributes["{"gpu.example.com"}"]'
_C = f'device.capacity["{"gpu.example.com"}"]'
#: claim selectors beyond equality: string and list functions, regexes, quantities, semver,
#: arithmetic, presence tests, conditionals, and CEL's error absorption by && and ||
CEL_SELECTORS = (
    f'{_A}.model.startsWith("a")', f'{_A}.model in ["a100", "h100"]', f'{_A}.model.matches("^h")',
    f'{_C}.memory.isGreaterThan(quantity("20Gi"))', f'{_C}.memory.compareTo(quantity("40Gi")) == 0',
    f'{_A}.index % 2 == 0', f'size({_A}.model) == 4', f'"numa" in {_A}', f'has({_A}.numa)',
    f'{_A}.driverVersion.isGreaterThan(semver("1.2.0"))', f'{_A}.driverVersion.major() >= 2',
    f'{_A}.missing == 1 || true', f'{_A}.missing == 1 && false', f'{_A}.index > 1 && {_A}.model == "t4"',
    f'{_A}.model == "a100" ? {_A}.index < 2 : true', f'{_A}.model.endsWith("00") && {_A}.numa == 1',
    f'{_C}.memory.asApproximateFloat() > 30e9', f'{_A}.model.contains("1")',
    f'{_A}.driverVersion.isLessThan(semver("2.0.0"))', f'{_A}.driverVersion.compareTo(semver("2.0.0-rc.1")) == 0',
    f'{_A}.driverVersion.minor() == 2', f'{_C}.memory.asInteger() > 40000000000',
    f'{_C}.memory.add(quantity("1Gi")).isGreaterThan(quantity("80Gi"))', f'sign({_C}.memory.sub(quantity("16Gi"))) == 0',
    f'[1, 2, 3].exists(x, x == {_A}.index)', f'{_A}.model.lowerAscii() == "a100"', f'{_A}.index / {_A}.numa > 0',
    f'{_A}.model < "b"', f'{_A}.index + {_A}.numa >= 3', f'{_C}.memory.isInteger()',
    f'size({_A}.label) == 5', f'{_A}.label.charAt(4) == "é"', f'{_A}.driverVersion == semver("2.1.0+other")',
    f'{_A}.index / 0 > 1', f'{_A}.index % 0 == 1', f'{_A}.index + 9223372036854775807 > 0',
    f'semver({_A}.model) == semver("1.0.0")', f'quantity({_A}.model).isInteger()', f'int({_A}.model) > 0',
    f'{_A}.label.matches("^gpu-\\\\pL$")', f'{_A}.label.indexOf("é") == 4',
)
NIC_DRIVER = "nic.example.com"


def gen_dra(g: _Gen) -> None:
    """Structured parameters: a DeviceClass, one ResourceSlice per node (GPUs with model, NUMA node
    and memory), and claims the pods name (some shared by two pods) asking for counts, models,
    memory, all of a node's devices, devices on one NUMA node, the first available of several
    subrequests, or admin access; incomplete and (rarely) invalid pools; a network-attached slice."""
    g.namespaces(("default",))
    g.objects[-1]["metadata"]["labels"]["resource.kubernetes.io/admin-access"] = "true"
    res = "resource.k8s.io/v1"
    classes: list[dict[str, Any]] = [{"apiVersion": res, "kind": "DeviceClass", "metadata": {"name": "gpu"},
                "spec": {"selectors": [{"cel": {"expression": f'device.driver == "{DRA_DRIVER}"'}}]}}]
    if g.chance(0.5):
        classes.append({"apiVersion": res, "kind": "DeviceClass", "metadata": {"name": "big-gpu"},
                        "spec": {"selectors": [{"cel": {"expression": f'device.driver == "{DRA_DRIVER}"'}},
                                               {"cel": {"expression": f'device.capacity["{DRA_DRIVER}"].memory'
                                                                      f'.compareTo(quantity("40Gi")) >= 0'}}]}})
    g.objects += classes
    fabric, invalid = g.chance(0.25), False
    for _ in range(g.rng.randint(1, 6)):
        node = g.node(cpu="16", memory="64Gi")
        name = node["metadata"]["name"]
        n = g.rng.choice((0, 1, 2, 4, 4, 8))
        if n == 0 and g.chance(0.5):
            continue  # no slice at all
        model = g.rng.choice(("a100", "h100", "t4"))
        mem = {"a100": "40Gi", "h100": "80Gi", "t4": "16Gi"}[model]
        version = g.rng.choice(("1.0.0", "1.2.3", "2.0.0-rc.1", "2.1.0", "2.1.0+build.7"))
        devices = [{"name": f"gpu-{i}", "attributes": {"model": {"string": model}, "numa": {"int": i * 2 // max(n, 1)},
                                                       "index": {"int": i}, "driverVersion": {"version": version},
                                                       "label": {"string": "gpu-é"}},
                    "capacity": {"memory": {"value": mem}}} for i in range(n)]
        # an invalid pool: two slices naming the same device. At most one, and not beside the
        # network-attached slice: upstream filters nodes in parallel and reports the first error
        # any node meets, so two nodes failing differently would make its message random
        if n >= 1 and not fabric and not invalid and g.chance(0.03):
            invalid = True
            for k in range(2):
                g.objects.append({"apiVersion": res, "kind": "ResourceSlice", "metadata": {"name": f"{name}-gpus-{k}"},
                                  "spec": {"driver": DRA_DRIVER, "nodeName": name,
                                           "pool": {"name": name, "generation": 1, "resourceSliceCount": 2},
                                           "devices": devices[:1]}})
            continue
        if n >= 2 and not fabric and g.chance(0.2):
            # an incomplete pool: one of its two slices published. (Not both: upstream lists a pool's
            # slices in informer order, so which slice's devices come first would be random.)
            g.objects.append({"apiVersion": res, "kind": "ResourceSlice", "metadata": {"name": f"{name}-gpus-0"},
                              "spec": {"driver": DRA_DRIVER, "nodeName": name,
                                       "pool": {"name": name, "generation": 1, "resourceSliceCount": 2},
                                       "devices": devices[: n // 2]}})
            continue
        g.objects.append({"apiVersion": res, "kind": "ResourceSlice", "metadata": {"name": f"{name}-gpus"},
                          "spec": {"driver": DRA_DRIVER, "nodeName": name,
                                   "pool": {"name": name, "generation": 1, "resourceSliceCount": 1},
                                   "devices": devices}})
    if fabric:
        # network-attached devices: a slice for the nodes a selector picks. Another driver and class:
        # with two pools a request could use, upstream's choice would follow Go map order (random)
        g.objects.append({"apiVersion": res, "kind": "DeviceClass", "metadata": {"name": "nic"},
                          "spec": {"selectors": [{"cel": {"expression": f'device.driver == "{NIC_DRIVER}"'}}]}})
        classes.append(g.objects[-1])
        g.objects.append({"apiVersion": res, "kind": "ResourceSlice", "metadata": {"name": "fabric"},
                          "spec": {"driver": NIC_DRIVER, "pool": {"name": "fabric", "generation": 1,
                                                                  "resourceSliceCount": 1},
                                   "nodeSelector": {"nodeSelectorTerms": [{"matchExpressions": [
                                       {"key": "topology.kubernetes.io/zone", "operator": "In",
                                        "values": [g.rng.choice(ZONES)]}]}]},
                                   "devices": [{"name": f"nic-{i}", "attributes": {"model": {"string": "nic"},
                                                                                   "index": {"int": i}}}
                                               for i in range(g.rng.randint(1, 3))]}})
    n_claims = g.rng.randint(1, 5)
    for i in range(n_claims):
        req: dict = {"deviceClassName": g.rng.choice([c["metadata"]["name"] for c in classes])}
        if not fabric and g.chance(0.15):
            # (not beside the network-attached slice: on one node, "All" over an incomplete pool and
            # a selector failing on the other driver's devices would be two errors, and upstream
            # meets first whichever pool Go's map order puts first)
            req["allocationMode"] = "All"
        else:
            req["allocationMode"] = "ExactCount"
            req["count"] = g.rng.choice((1, 1, 2, 3))
        sels = []
        if g.chance(0.3):
            sels.append(f'device.attributes["{DRA_DRIVER}"].model == "{g.rng.choice(("a100", "h100", "t4"))}"')
        if g.chance(0.15):
            sels.append(f'device.attributes["{DRA_DRIVER}"].index >= {g.rng.randint(0, 3)}')
        if g.chance(0.35):
            sels.append(g.rng.choice(CEL_SELECTORS))
        if sels:
            req["selectors"] = [{"cel": {"expression": e}} for e in sels]
        if g.chance(0.1):  # admin access: devices in use stay allocatable (namespace labelled for it)
            req["adminAccess"] = True
        claim_devices: dict = {"requests": [{"name": "gpus", "exactly": req}]}
        if g.chance(0.2):  # firstAvailable: the first subrequest that can be satisfied
            subs = []
            for j, model in enumerate(g.rng.sample(("h100", "a100", "t4", "nic"), g.rng.randint(2, 3))):
                subs.append({"name": f"s{j}", "deviceClassName": "gpu", "count": g.rng.choice((1, 2)),
                             "selectors": [{"cel": {"expression": f'device.attributes["{DRA_DRIVER}"].model == "{model}"'}}]})
            claim_devices = {"requests": [{"name": "gpus", "firstAvailable": subs}]}
        elif g.chance(0.25):
            claim_devices["constraints"] = [{"requests": ["gpus"], "matchAttribute": f"{DRA_DRIVER}/numa"}]
        g.objects.append({"apiVersion": res, "kind": "ResourceClaim",
                          "metadata": {"name": f"claim-{i}", "namespace": "default", "uid": f"uid-rc-{i}"},
                          "spec": {"devices": claim_devices}})
    users = list(range(n_claims)) + [g.rng.randrange(n_claims) for _ in range(g.rng.randint(0, 2))]
    g.rng.shuffle(users)
    for i in users:
        m = g.pod(requests={"cpu": "1"}, resourceClaims=[{"name": "gpus", "resourceClaimName": f"claim-{i}"}])
        m["spec"]["containers"][0]["resources"]["claims"] = [{"name": "gpus"}]
    for _ in range(g.rng.randint(0, 2)):
        g.pod(requests={"cpu": "1"})
    if g.chance(0.5):
        _dra_extended_resources(g, classes)
    if g.chance(0.35):
        _dra_device_taints(g)
    if g.chance(0.45):
        _dra_consumable_capacity(g)


def _dra_consumable_capacity(g: _Gen) -> None:
    """Consumable capacity (DRAConsumableCapacity, beta and on; DRAFractionalCapacityRange): some GPUs
    allow multiple allocations, their memory with a request policy (a range with a step, or valid
    values) and some with a fractional "cores" capacity; claims' requests (and subrequests) asking
    for memory or cores: within a device, shared with other claims, over what is left or over the
    device, unaligned (rounded up by the policy), outside the policy, naming a capacity the device
    lacks, or (on a cluster with one GPU slice, where upstream's abort names one device) negative
    or past int64.
    Drawn after the rest of the scenario, so its other draws stay as they were."""
    slices = [o for o in g.objects if o["kind"] == "ResourceSlice" and o["spec"]["driver"] == DRA_DRIVER]
    for sl in slices:
        for device in sl["spec"]["devices"]:
            if not g.chance(0.5):
                continue
            device["allowMultipleAllocations"] = True
            memory = device["capacity"]["memory"]
            mem = memory["value"]  # 16Gi, 40Gi or 80Gi
            kind = g.rng.random()
            if kind < 0.4:
                step = g.rng.choice(("1Gi", "2Gi", "4Gi"))
                rng: dict = {"min": step, "step": step}
                if g.chance(0.5):
                    rng["max"] = g.rng.choice(("8Gi", "16Gi"))
                memory["requestPolicy"] = {"default": step, "validRange": rng}
            elif kind < 0.7:
                values = sorted({"1Gi", "4Gi", g.rng.choice(("2Gi", "8Gi")), mem}, key=lambda v: int(v[:-2]))
                memory["requestPolicy"] = {"default": g.rng.choice(values[:2]), "validValues": values}
            if g.chance(0.3):
                device["capacity"]["cores"] = {"value": "4", "requestPolicy": {
                    "default": "500m", "validRange": {"min": "500m", "step": "250m", "max": "2"}}}
    negative_ok = len(slices) == 1
    memories = ("1Gi", "3Gi", "5Gi", "6Gi", "10Gi", "17Gi", "30Gi", "100Gi", "1536Mi", "0")
    cores = ("300m", "1", "1100m", "2", "3")

    def requests() -> dict:
        out: dict = {}
        if g.chance(0.85):
            out["memory"] = g.rng.choice(memories)
            if negative_ok and g.chance(0.3):
                # aborts the allocation: negative, or (on a device with a range step) past int64
                out["memory"] = g.rng.choice(("-1Gi", "20000000000000000000"))
        if g.chance(0.25):
            out["cores"] = g.rng.choice(cores)
        if g.chance(0.04):
            out["bandwidth"] = "1"  # no device has it
        return out

    for claim in (o for o in g.objects if o["kind"] == "ResourceClaim"):
        for request in claim["spec"]["devices"]["requests"]:
            if "exactly" in request:
                if request["exactly"].get("deviceClassName") != "nic" and g.chance(0.5):
                    request["exactly"]["capacity"] = {"requests": requests()}
            else:
                for sub in request["firstAvailable"]:
                    if g.chance(0.35):
                        sub["capacity"] = {"requests": requests()}


DEVICE_TAINT_KEY = "example.com/unhealthy"


def _dra_device_taints(g: _Gen) -> None:
    """Device taints (DRADeviceTaints, GA) on some GPUs, DeviceTaintRules (DRADeviceTaintRules,
    GA) tainting a pool, a device or a driver's devices, and tolerations in some claims' requests.
    Drawn after the rest of the scenario, so its other draws stay as they were."""
    res = "resource.k8s.io/v1"
    slices = [o for o in g.objects if o["kind"] == "ResourceSlice" and o["spec"]["driver"] == DRA_DRIVER]
    effects = ("NoSchedule", "NoExecute", "None")
    for sl in slices:
        for device in sl["spec"]["devices"]:
            if g.chance(0.15):
                device["taints"] = [{"key": DEVICE_TAINT_KEY, "value": g.rng.choice(("true", "maybe")),
                                     "effect": g.rng.choice(effects)}]
    for i in range(g.rng.randint(0, 2)):
        selector: dict = {"driver": DRA_DRIVER}
        if slices and g.chance(0.85):
            sl = g.rng.choice(slices)
            selector["pool"] = sl["spec"]["pool"]["name"]
            if sl["spec"]["devices"] and g.chance(0.5):
                selector["device"] = g.rng.choice(sl["spec"]["devices"])["name"]
        g.objects.append({"apiVersion": res, "kind": "DeviceTaintRule", "metadata": {"name": f"taint-{i}"},
                          "spec": {"deviceSelector": selector,
                                   "taint": {"key": g.rng.choice((DEVICE_TAINT_KEY, "example.com/maintenance")),
                                             "effect": g.rng.choice(effects)}}})
    for claim in (o for o in g.objects if o["kind"] == "ResourceClaim"):
        for request in claim["spec"]["devices"]["requests"]:
            if "exactly" in request and g.chance(0.4):
                toleration: dict = {"key": DEVICE_TAINT_KEY, "operator": "Exists"}
                if g.chance(0.3):
                    toleration = {"key": DEVICE_TAINT_KEY, "operator": "Equal", "value": "true"}
                if g.chance(0.3):
                    toleration["effect"] = g.rng.choice(effects[:2])
                request["exactly"]["tolerations"] = [toleration]


#: the extended resource a DeviceClass may map (DRAExtendedResource) and one nothing provides
DRA_EXTENDED_RESOURCE = "example.com/gpu"
UNPROVIDED_EXTENDED_RESOURCE = "example.com/fpga"


def _dra_extended_resources(g: _Gen, classes: list) -> None:
    """Extended resources backed by DRA (DRAExtendedResource, GA): the gpu class maps
    ``example.com/gpu`` (``spec.extendedResourceName``; always also its implicit
    ``deviceclass.resource.kubernetes.io/gpu``); some nodes offer ``example.com/gpu`` through a
    device plugin (allocatable, sometimes 0); incoming pods request either name from one or two
    containers and init containers (sidecar or not), a few also a resource nobody provides, or a
    claim of their own besides. Drawn after the rest of the scenario, so its other draws stay as
    they were."""
    gpu = next(c for c in classes if c["metadata"]["name"] == "gpu")
    explicit = g.chance(0.7)
    if explicit:
        gpu["spec"]["extendedResourceName"] = DRA_EXTENDED_RESOURCE
    for node in g.nodes:
        if g.chance(0.25):
            amount = g.rng.choice(("0", "1", "2", "4"))
            node["status"]["allocatable"][DRA_EXTENDED_RESOURCE] = amount
            node["status"]["capacity"][DRA_EXTENDED_RESOURCE] = amount
    names = ([DRA_EXTENDED_RESOURCE] if explicit else []) + ["deviceclass.resource.kubernetes.io/gpu"]
    claims = [o["metadata"]["name"] for o in g.objects if o["kind"] == "ResourceClaim"]
    if g.chance(0.3):
        # scoring over the DRA-backed resource: a node without it in its allocatable is scored
        # from its devices of the class (resource_allocation.go: calculateDRAResourceTotals)
        strategy = {"type": g.rng.choice(("LeastAllocated", "MostAllocated")),
                    "resources": [{"name": "cpu", "weight": 1}, {"name": g.rng.choice(names), "weight": 3}]}
        # (not NodeResourcesBalancedAllocation: with the gpu class's CEL selectors upstream panics
        # there, its scorer has no CEL cache; fastsched answers an Error status instead)
        g.profile(pluginConfig=[{"name": "NodeResourcesFit", "args": {"scoringStrategy": strategy}}])
    for _ in range(g.rng.randint(1, 3)):
        name = g.rng.choice(names)
        requests = {"cpu": "1", name: str(g.rng.choice((1, 1, 2, 3)))}
        if g.chance(0.08):
            requests[UNPROVIDED_EXTENDED_RESOURCE] = "1"
        spec: dict = {}
        init = None
        if g.chance(0.3):
            init = []
            for k in range(g.rng.randint(1, 2)):
                c: dict = {"name": f"init-{k}", "image": "busybox",
                           "resources": {"requests": {name: str(g.rng.randint(1, 3))},
                                         "limits": {name: "0"}}}
                c["resources"]["limits"][name] = c["resources"]["requests"][name]
                if g.chance(0.4):
                    c["restartPolicy"] = "Always"  # a sidecar: its devices are its own for the pod's life
                init.append(c)
        if claims and g.chance(0.2):
            spec["resourceClaims"] = [{"name": "gpus", "resourceClaimName": g.rng.choice(claims)}]
        m = g.pod(requests=requests, images=("busybox", "nginx") if g.chance(0.2) else ("busybox",),
                  init=init, **spec)
        if len(m["spec"]["containers"]) > 1:
            m["spec"]["containers"][1]["resources"] = {"requests": {name: "1"}, "limits": {name: "1"}}
        if spec:
            m["spec"]["containers"][0]["resources"]["claims"] = [{"name": "gpus"}]
        if g.chance(0.1):
            # the claim a prior cycle created for the pod's extended resources (its binding failed):
            # every node refuses the pod and PostFilter deletes the claim
            meta = m["metadata"]
            g.objects.append({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim", "metadata": {
                "name": f"{meta['name']}-extended-resources-abcde", "namespace": meta["namespace"],
                "uid": f"uid-ext-{meta['name']}",
                "annotations": {"resource.kubernetes.io/extended-resource-claim": "true"},
                "ownerReferences": [{"apiVersion": "v1", "kind": "Pod", "name": meta["name"], "uid": meta["uid"],
                                     "controller": True}]},
                "spec": {"devices": {"requests": [{"name": "container-0-request-0", "exactly": {
                    "deviceClassName": "gpu", "allocationMode": "ExactCount", "count": 1}}]}}})


def gen_mixed(g: _Gen) -> None:
    """Everything at once on a bigger cluster (10-40 nodes, sometimes 60-99; up to 60 running pods, 4-12 incoming):
    resources, taints, node labels and images on nodes; affinity, anti-affinity, spreading,
    tolerations, node affinity and host ports on pods; a Service for default spreading."""
    g.namespaces()
    n_nodes = g.rng.randint(60, 99) if g.chance(0.15) else g.rng.randint(10, 40)  # < 100: every node scored
    for _ in range(n_nodes):
        taints = [dict(t) for t in g.rng.sample(TAINTS + PREFER_TAINTS, g.rng.choice((0, 0, 0, 1, 2)))]
        imgs = [((n,), sz) for n, sz in g.rng.sample(IMAGES, g.rng.randint(0, 3))]
        g.node(cpu=g.rng.choice(("2", "4", "8", "16")), memory=g.rng.choice(("4Gi", "8Gi", "32Gi")),
               pods=g.rng.choice(("10", "110")), labels=_node_labels(g), taints=taints or None, images=imgs or None,
               zone=g.chance(0.9))
    for _ in range(g.rng.randint(0, 60)):
        spec: dict = {}
        if g.chance(0.15):
            aff = _pod_affinity(g)
            if aff:
                spec["affinity"] = aff
        if g.chance(0.1):
            spec["tolerations"] = [{"operator": "Exists"}]
        m = g.pod(node=g.rng.choice(g.nodes)["metadata"]["name"], ns=g.rng.choice(NAMESPACES), labels=_pod_labels(g),
                  requests=_requests(g, extended=False), ports=_ports(g) if g.chance(0.1) else None, **spec)
        if g.chance(0.05):  # terminating: on its node still
            m["metadata"]["deletionTimestamp"] = "2026-05-31T23:59:00Z"
            m["metadata"]["deletionGracePeriodSeconds"] = 30
    if g.chance(0.5):
        app = g.rng.choice(APPS)
        g.objects.append({"apiVersion": "v1", "kind": "Service", "metadata": {"name": f"svc-{app}", "namespace": "default"},
                          "spec": {"selector": {"app": app}, "ports": [{"port": 80}]}})
    for _ in range(g.rng.randint(4, 12)):
        spec = {}
        aff = {}
        if g.chance(0.4):
            aff.update(_pod_affinity(g))
        if g.chance(0.4):
            na: dict = {}
            if g.chance(0.5):
                na["requiredDuringSchedulingIgnoredDuringExecution"] = {"nodeSelectorTerms": [_node_selector_term(g, True)]}
            na["preferredDuringSchedulingIgnoredDuringExecution"] = [
                {"weight": g.rng.randint(1, 100), "preference": _node_selector_term(g, True)}]
            aff["nodeAffinity"] = na
        if aff:
            spec["affinity"] = aff
        if g.chance(0.4):
            pairs = g.rng.sample([(k, u) for k in TOPOLOGY_KEYS for u in ("DoNotSchedule", "ScheduleAnyway")],
                                 g.rng.randint(1, 2))
            spec["topologySpreadConstraints"] = [_spread_constraint(g, k, u) for k, u in pairs]
        if g.chance(0.4):
            spec["tolerations"] = [_toleration(g) for _ in range(g.rng.randint(1, 3))]
        images = [n for n, _ in g.rng.sample(IMAGES, g.rng.randint(1, 2))]
        g.pod(ns=g.rng.choice(NAMESPACES), labels=_pod_labels(g), requests=_requests(g, extended=False),
              images=images, ports=_ports(g) if g.chance(0.15) else None, **spec)


def gen_dra_alpha(g: _Gen) -> None:
    """The ``dra`` class's scenario (:func:`gen_dra`, same draws) with DRA's alpha gates on both
    sides (:data:`GATED_CLASSES`): upstream then runs its *experimental* allocator variant for every
    claim, so the whole ``dra`` mix is compared on it. Then, drawn after it
    (:func:`_dra_list_attributes`), list-valued device attributes and the claims that read them."""
    gen_dra(g)
    _dra_list_attributes(g)
    _dra_compatibility_groups(g)
    _dra_optional_node_operations(g)


def gen_dra_derived(g: _Gen) -> None:
    """The ``dra-alpha`` scenario (same draws) with DRADerivedAttributes on both sides too, and,
    drawn after it (:func:`_dra_derived_attributes`), claims with derived attributes. (A class of
    its own: with the gate off the API server drops them, which the oracle, given the claims
    directly, does not, so ``dra-alpha`` stays the gate-off comparison.)"""
    gen_dra_alpha(g)
    _dra_derived_attributes(g)


_N = f'device.attributes["{"nic.example.com"}"]'
#: derived attribute expressions on a GPU (attributes every GPU has, or guarded by has(): an
#: evaluation error on two nodes would make upstream's Filter error depend on which node it meets
#: first); scalars, lists (DRAListTypeAttributes is on), and a dyn() whose type differs by device
_GPU_DERIVED = (
    f"{_A}.numa", f"{_A}.numa / 2", f"{_A}.numa % 2", f"{_A}.index / 2", f"{_A}.index % 3", f"{_A}.model",
    f'{_A}.model + "-" + string({_A}.numa)', '"fixed"', "1", f"{_A}.index < 2", f"{_A}.index",
    f"has({_A}.numas) ? {_A}.numas : [{_A}.numa]", f'has({_A}.models) ? {_A}.models : [{_A}.model]',
    f'{_A}.index < 2 ? dyn("low") : dyn(1)', f"[{_A}.numa, {_A}.index]",
    f'has({_A}.zone) ? {_A}.zone : "none"', 'semver("1.2.3")',
)
#: on a NIC (fabric devices: model, index, and here a numaNode); NICs have no ``numa``, so the last
#: one fails, on the fabric's first NIC: the same device (and message) whichever node Filter is at
_NIC_DERIVED = (f"{_N}.numaNode", f"{_N}.index", f"{_N}.index / 2", '"fixed"', f"{_N}.numaNode % 2", f"{_N}.numa")


def _dra_derived_attributes(g: _Gen) -> None:
    """DRADerivedAttributes: some requests and subrequests of the claims get derived attributes
    (a name of their own, ``derived/...``, or a device attribute's name, which they then shadow for
    that request only) and each name a matchAttribute or distinctAttribute constraint on every
    request, on the request, or on one subrequest (validation wants every name referenced); the
    fabric's NICs get a ``numaNode``; and sometimes a claim pairing a GPU with a NIC or a second GPU
    through a derived NUMA node, used by a pod."""
    res = "resource.k8s.io/v1"
    for sl in (o for o in g.objects if o["kind"] == "ResourceSlice" and o["spec"]["driver"] == NIC_DRIVER):
        for device in sl["spec"]["devices"]:
            device.setdefault("attributes", {})["numaNode"] = {"int": g.rng.randint(0, 2)}
    fabric = any(o["kind"] == "DeviceClass" and o["metadata"]["name"] == "nic" for o in g.objects)
    claims = [o for o in g.objects if o["kind"] == "ResourceClaim" and o["metadata"]["name"].startswith("claim-")]
    if g.chance(0.6):
        i = sum(o["kind"] == "ResourceClaim" for o in g.objects)
        second = "nic" if fabric and g.chance(0.6) else "gpu"
        requests = [
            {"name": "a", "exactly": {"deviceClassName": "gpu", "allocationMode": "ExactCount",
                                      "count": g.rng.choice((1, 1, 2)),
                                      "derivedAttributes": [{"name": "derived/numa", "expression": f"{_A}.numa"}]}},
            {"name": "b", "exactly": {"deviceClassName": second, "allocationMode": "ExactCount", "count": 1,
                                      "derivedAttributes": [{"name": "derived/numa", "expression": (
                                          f"{_A}.numa" if second == "gpu" else
                                          f"{_N}.numa" if g.chance(0.15) else f"{_N}.numaNode")}]}}]
        g.objects.append({"apiVersion": res, "kind": "ResourceClaim",
                          "metadata": {"name": f"claim-{i}", "namespace": "default", "uid": f"uid-rc-{i}"},
                          "spec": {"devices": {"requests": requests, "constraints": [{"matchAttribute": "derived/numa"}]}}})
        m = g.pod(requests={"cpu": "1"}, resourceClaims=[{"name": "gpus", "resourceClaimName": f"claim-{i}"}])
        m["spec"]["containers"][0]["resources"]["claims"] = [{"name": "gpus"}]
    for claim in claims:
        if not g.chance(0.5):
            continue
        devices = claim["spec"]["devices"]
        # (body, its name for a constraint, its parent request's name or "")
        bodies: list[tuple[dict, str, str]] = []
        for r in devices["requests"]:
            if "exactly" in r:
                bodies.append((r["exactly"], r["name"], ""))
            for sub in r.get("firstAvailable", ()):
                bodies.append((sub, f"{r['name']}/{sub['name']}", r["name"]))
        for body, ref, parent in g.rng.sample(bodies, g.rng.randint(1, len(bodies))):
            pool = _NIC_DERIVED if body.get("deviceClassName") == "nic" else _GPU_DERIVED
            name = g.rng.choice(("derived/key", "derived/numa", f"{DRA_DRIVER}/numa", f"{DRA_DRIVER}/model",
                                 f"{DRA_DRIVER}/index"))
            attrs = body.setdefault("derivedAttributes", [])
            if any(a["name"] == name for a in attrs):
                continue
            attrs.append({"name": name, "expression": g.rng.choice(pool)})
            constraint: dict = {("matchAttribute" if g.chance(0.6) else "distinctAttribute"): name}
            target = g.rng.random()
            if target < 0.3:
                pass  # every request
            elif target < 0.6 and parent:
                constraint["requests"] = [parent]
            else:
                constraint["requests"] = [ref]
            # anywhere among the claim's constraints: they are checked in order, a device failing
            # an earlier one never evaluates the derived attribute
            constraints = devices.setdefault("constraints", [])
            constraints.insert(g.rng.randint(0, len(constraints)), constraint)


_LIST_SELECTORS = (
    f'has({_A}.models) && {_A}.models.includes("{{m}}")', f'"models" in {_A} && "{{m}}" in {_A}.models',
    f'has({_A}.numas) && {_A}.numas.exists(x, x >= {{n}})', f'has({_A}.numas) && {_A}.numas.all(x, x < {{n}})',
    f'has({_A}.numas) && size({_A}.numas) > 1', f'has({_A}.zone) && {_A}.zone.includes("z{{n}}")',
    f'has({_A}.flags) && {_A}.flags.includes(true)', f'{_A}.numa.includes({{n}})',
    f'has({_A}.versions) && {_A}.versions.exists(v, v.isGreaterThan(semver("1.5.0")))',
    f'has({_A}.versions) && {_A}.versions.includes(semver("2.0.0"))', f'{_A}.models.includes("{{m}}")',
)


def _dra_list_attributes(g: _Gen) -> None:
    """DRAListTypeAttributes: some GPUs get list-valued attributes (``numas`` ints, ``models``
    strings, ``versions``, ``flags`` bools) and a ``zone`` that is a string on some devices and a
    list on others; claims get matchAttribute / distinctAttribute constraints on them (set
    intersection, pairwise disjoint; the scalar ``numa`` and ``model`` as one-element sets) and
    selectors using CEL lists and ``includes()`` (guarded by ``has``, or not: then a device without
    the attribute is a CEL error); one or two claims more, with their pods."""
    res = "resource.k8s.io/v1"
    for sl in (o for o in g.objects if o["kind"] == "ResourceSlice" and o["spec"]["driver"] == DRA_DRIVER):
        for device in sl["spec"]["devices"]:
            attrs = device.setdefault("attributes", {})
            if g.chance(0.7):
                attrs["numas"] = {"ints": sorted(g.rng.sample(range(4), g.rng.randint(1, 3)))}
            if g.chance(0.6):
                attrs["models"] = {"strings": g.rng.sample(("a100", "h100", "t4", "l4"), g.rng.randint(1, 3))}
            if g.chance(0.3):
                attrs["versions"] = {"versions": g.rng.sample(("1.0.0", "1.5.0", "2.0.0", "2.1.0-rc.1"),
                                                               g.rng.randint(1, 2))}
            if g.chance(0.3):
                attrs["flags"] = {"bools": g.rng.sample((True, False), g.rng.randint(1, 2))}
            if g.chance(0.5):
                zones = g.rng.sample(("z1", "z2", "z3"), g.rng.randint(1, 2))
                attrs["zone"] = {"string": zones[0]} if g.chance(0.5) else {"strings": zones}
    names = ("numas", "models", "zone", "numa", "model", "versions", "flags")
    claims = [o for o in g.objects if o["kind"] == "ResourceClaim"]
    for k in range(g.rng.randint(0, 2)):
        i = len(claims)
        requests = [{"name": f"r{j}", "exactly": {"deviceClassName": "gpu", "allocationMode": "ExactCount",
                                                  "count": g.rng.choice((1, 2))}}
                    for j in range(g.rng.randint(1, 3))]
        claim: dict[str, Any] = {"apiVersion": res, "kind": "ResourceClaim",
                                 "metadata": {"name": f"claim-{i}", "namespace": "default", "uid": f"uid-rc-{i}"},
                                 "spec": {"devices": {"requests": requests}}}
        g.objects.append(claim)
        claims.append(claim)
        m = g.pod(requests={"cpu": "1"}, resourceClaims=[{"name": "gpus", "resourceClaimName": f"claim-{i}"}])
        m["spec"]["containers"][0]["resources"]["claims"] = [{"name": "gpus"}]
    for claim in claims:
        devices = claim["spec"]["devices"]
        request_names = [r["name"] for r in devices["requests"]]
        if g.chance(0.6):
            c: dict = {("matchAttribute" if g.chance(0.5) else "distinctAttribute"):
                       f"{DRA_DRIVER}/{g.rng.choice(names)}"}
            if len(request_names) > 1 and g.chance(0.5):
                c["requests"] = g.rng.sample(request_names, g.rng.randint(1, len(request_names)))
            devices.setdefault("constraints", []).append(c)
        for r in devices["requests"]:
            body = r.get("exactly")
            if body is None or body.get("deviceClassName") == "nic" or not g.chance(0.35):
                continue
            expression = g.rng.choice(_LIST_SELECTORS).format(m=g.rng.choice(("a100", "h100", "t4", "l4")),
                                                              n=g.rng.randint(0, 3))
            body.setdefault("selectors", []).append({"cel": {"expression": expression}})


def _dra_compatibility_groups(g: _Gen) -> None:
    """DRAPartitionableDevices with DRADeviceCompatibilityGroups: some nodes get a partitioned GPU,
    a pool of two slices (its counter sets, and devices consuming them: the whole GPU, halves,
    quarters, some also drawing from a second counter set), each consumption declaring up to two
    compatibility groups or none; claims asking for partitions by profile. Devices allocated to
    earlier pods then constrain later ones (the allocated peers' groups)."""
    res = "resource.k8s.io/v1"
    groups_pool = ("full", "half", "quarter", "mixed", "mig")
    partitioned = False
    for node in g.nodes:
        if not g.chance(0.5):
            continue
        partitioned = True
        name = node["metadata"]["name"]
        pool = {"name": f"{name}-parts", "generation": 1, "resourceSliceCount": 2}
        sets = [{"name": "gpu-mem", "counters": {"memory": {"value": "40Gi"}}}]
        second = g.chance(0.4)
        if second:
            sets.append({"name": "gpu-engines", "counters": {"engines": {"value": "4"}}})
        devices: list[dict[str, Any]] = []
        for profile, size, n in (("full", 40, 1), ("half", 20, 2), ("quarter", 10, 4)):
            for k in range(n):
                uses = [{"counterSet": "gpu-mem", "counters": {"memory": {"value": f"{size}Gi"}}}]
                if second and g.chance(0.5):
                    uses.append({"counterSet": "gpu-engines", "counters": {"engines": {"value": str(size // 10)}}})
                for u in uses:
                    if g.chance(0.75):
                        u["compatibilityGroups"] = g.rng.sample(groups_pool, g.rng.randint(1, 2))
                devices.append({"name": f"part-{profile}-{k}", "consumesCounters": uses,
                                "attributes": {"model": {"string": "a100"}, "numa": {"int": k % 2},
                                               "index": {"int": len(devices)}, "driverVersion": {"version": "2.1.0"},
                                               "label": {"string": "gpu-é"}, "profile": {"string": profile}},
                                "capacity": {"memory": {"value": f"{size}Gi"}}})
        g.objects.append({"apiVersion": res, "kind": "ResourceSlice", "metadata": {"name": f"{name}-parts-counters"},
                          "spec": {"driver": DRA_DRIVER, "nodeName": name, "pool": dict(pool), "sharedCounters": sets}})
        g.objects.append({"apiVersion": res, "kind": "ResourceSlice", "metadata": {"name": f"{name}-parts-devices"},
                          "spec": {"driver": DRA_DRIVER, "nodeName": name, "pool": dict(pool), "devices": devices}})
    if not partitioned:
        return
    claims = [o for o in g.objects if o["kind"] == "ResourceClaim"]
    for _ in range(g.rng.randint(1, 3)):
        i = len(claims)
        profile = g.rng.choice(("full", "half", "quarter"))
        claim = {"apiVersion": res, "kind": "ResourceClaim",
                 "metadata": {"name": f"claim-{i}", "namespace": "default", "uid": f"uid-rc-{i}"},
                 "spec": {"devices": {"requests": [{"name": "parts", "exactly": {
                     "deviceClassName": "gpu", "allocationMode": "ExactCount", "count": g.rng.choice((1, 1, 2)),
                     "selectors": [{"cel": {"expression": f'has({_A}.profile) && {_A}.profile == "{profile}"'}}]}}]}}}
        g.objects.append(claim)
        claims.append(claim)
        m = g.pod(requests={"cpu": "1"}, resourceClaims=[{"name": "gpus", "resourceClaimName": f"claim-{i}"}])
        m["spec"]["containers"][0]["resources"]["claims"] = [{"name": "gpus"}]


#: valid ``skipNodeOperations`` lists (NodePrepareResources only with NodeUnprepareResources or *)
_SKIP_NODE_OPERATIONS = (["*"], ["NodePrepareResources", "NodeUnprepareResources"], ["NodeUnprepareResources"],
                         ["*", "NodePrepareResources"])


def _dra_optional_node_operations(g: _Gen) -> None:
    """DRAOptionalNodeOperations: some GPU slices skip node operations (``spec.skipNodeOperations``),
    some nodes declare the feature (``status.declaredFeatures``), so the allocator takes those
    devices only there; sometimes a claim already allocated on such a device (its result carrying
    the operations, not reserved) that a pod uses, unavailable where the node does not declare the
    feature (PostFilter then deallocates it). Drawn after the rest of the scenario, so its other
    draws stay as they were."""
    res = "resource.k8s.io/v1"
    for node in g.nodes:
        if g.chance(0.5):
            status = node["status"]
            status["declaredFeatures"] = sorted({*status.get("declaredFeatures", ()), "DRAOptionalNodeOperations"})
    skipping = []
    for sl in (o for o in g.objects if o["kind"] == "ResourceSlice" and o["spec"]["driver"] == DRA_DRIVER):
        if sl["spec"].get("devices") and g.chance(0.4):
            sl["spec"]["skipNodeOperations"] = list(g.rng.choice(_SKIP_NODE_OPERATIONS))
            if sl["spec"].get("nodeName"):
                skipping.append(sl)
    if not skipping or not g.chance(0.4):
        return
    sl = g.rng.choice(skipping)
    device = g.rng.choice(sl["spec"]["devices"])
    i = sum(o["kind"] == "ResourceClaim" for o in g.objects)
    node_name = sl["spec"]["nodeName"]
    result = {"request": "gpus", "driver": DRA_DRIVER, "pool": sl["spec"]["pool"]["name"], "device": device["name"],
              "skipNodeOperations": list(sl["spec"]["skipNodeOperations"])}
    if device.get("allowMultipleAllocations"):
        return  # (a share would need its shareID and consumed capacity)
    g.objects.append({"apiVersion": res, "kind": "ResourceClaim",
                      "metadata": {"name": f"claim-{i}", "namespace": "default", "uid": f"uid-rc-{i}"},
                      "spec": {"devices": {"requests": [{"name": "gpus", "exactly": {
                          "deviceClassName": "gpu", "allocationMode": "ExactCount", "count": 1}}]}},
                      "status": {"allocation": {"devices": {"results": [result]}, "nodeSelector": {
                          "nodeSelectorTerms": [{"matchFields": [
                              {"key": "metadata.name", "operator": "In", "values": [node_name]}]}]}}}})
    m = g.pod(requests={"cpu": "1"}, resourceClaims=[{"name": "gpus", "resourceClaimName": f"claim-{i}"}])
    m["spec"]["containers"][0]["resources"]["claims"] = [{"name": "gpus"}]


def gen_dra_node_allocatable(g: _Gen) -> None:
    """The ``dra`` class's scenario (:func:`gen_dra`, same draws) with DRANodeAllocatableResources
    on both sides (:data:`GATED_CLASSES`), then, drawn after it: GPUs whose allocation takes cpu or
    memory from the node (``nodeAllocatableResources``: a mapping per device, a mapping from the
    consumed memory of shareable GPUs, per-pod and per-container overheads), pods of these claims
    asking for more cpu (so that the node's free cpu runs out), some with pod-level requests that
    may not cover the claims' amounts, and a second container referencing the claim."""
    gen_dra(g)
    for sl in (o for o in g.objects if o["kind"] == "ResourceSlice" and o["spec"]["driver"] == DRA_DRIVER):
        for device in sl["spec"]["devices"]:
            if not g.chance(0.7):
                continue
            nar: dict = {}
            kind = g.rng.random()
            if device.get("allowMultipleAllocations") and g.chance(0.6):
                nar["memory"] = {"mapping": {"capacityKey": "memory",
                                             "capacityMultiplier": g.rng.choice(("1", "250m", "500m"))}}
            elif kind < 0.5:
                nar["cpu"] = {"mapping": {"deviceMultiplier": g.rng.choice(("1", "2", "4", "6", "500m"))}}
            elif kind < 0.75:
                nar["memory"] = {"mapping": {"deviceMultiplier": g.rng.choice(("4Gi", "8Gi", "24Gi"))}}
            if g.chance(0.35):
                overhead = {}
                if g.chance(0.7):
                    overhead["perPod"] = g.rng.choice(("250m", "1", "0"))
                if not overhead or g.chance(0.5):
                    overhead["perContainer"] = g.rng.choice(("100m", "500m"))
                nar.setdefault("cpu", {})["overhead"] = overhead
            if nar:
                device["nodeAllocatableResources"] = nar
    for m in g.incoming:
        if not m["spec"].get("resourceClaims"):
            continue
        c0 = m["spec"]["containers"][0]
        if g.chance(0.4):
            c0.setdefault("resources", {}).setdefault("requests", {})["cpu"] = g.rng.choice(("4", "6", "8"))
        if g.chance(0.2):  # a second container referencing the claim (per-container overheads)
            m["spec"]["containers"].append({"name": "sidecar", "image": "busybox", "resources": {
                "requests": {"cpu": "500m"}, "claims": [{"name": "gpus"}]}})
        if g.chance(0.2):  # pod-level requests: they must cover the claims' amounts too
            cpus = [c.get("resources", {}).get("requests", {}).get("cpu", "0") for c in m["spec"]["containers"]]
            total = sum(int(v[:-1]) if v.endswith("m") else int(v) * 1000 for v in cpus)
            m["spec"]["resources"] = {"requests": {"cpu": f"{total + g.rng.choice((0, 500, 2000, 6000))}m"}}


def gen_preenqueue(g: _Gen) -> None:
    """Pods held before the queue by PreEnqueue, then let in: some incoming pods are created with
    ``spec.schedulingGates`` (SchedulingGates holds them) and a later entry of the same pod is its
    update with the gates removed (all: it is attempted then; or some: still held), some reference a
    ResourceClaim that does not exist (DynamicResources holds them), most of whose claims a later
    entry creates (a cluster event: the pod is let in and attempted; GPUs on some nodes). Full nodes and
    priorities as in class preemption, so earlier pods wait nominated while later ones are held; a
    bound claim pod can be a victim, and a last pod whose claim exists from the start then asks for
    GPUs (it sees the victim's devices the resourceclaim controller released). Some claims are
    owned by running pods (:func:`_claim_owners`): the garbage collector's part."""
    gen_preemption(g)
    for _ in range(g.rng.randint(1, 4)):  # more pods, so that holds and preemptors interleave
        pr = g.rng.choice((10, 100, 1000))
        g.pod(labels={"app": g.rng.choice(APPS)}, requests={"cpu": g.rng.choice(("250m", "1", "2")), "memory": "256Mi"},
              priority=pr, priorityClassName=f"prio-{pr}", terminationGracePeriodSeconds=0)
    out: list[dict] = []
    pending: list[tuple[int, dict]] = []  # (position to insert at, the update or object created)
    claims: list[str] = []
    for m in g.incoming:
        out.append(m)
        roll = g.rng.random()
        if roll < 0.45:
            gates = [f"example.com/gate-{c}" for c in g.rng.sample("abc", g.rng.randint(1, 3))]
            m["spec"]["schedulingGates"] = [{"name": n} for n in gates]
            upd = json.loads(json.dumps(m))
            if len(gates) > 1 and g.chance(0.3):  # one gate removed: still held, by the rest
                upd["spec"]["schedulingGates"] = [{"name": n} for n in gates[1:]]
                later = json.loads(json.dumps(upd))
                later["spec"].pop("schedulingGates")
                pending.append((len(out) + g.rng.randint(0, 3), upd))
                pending.append((len(out) + g.rng.randint(4, 6), later))
            elif g.chance(0.85):  # (else: gated for good)
                upd["spec"].pop("schedulingGates")
                pending.append((len(out) + g.rng.randint(0, 4), upd))
        elif roll < 0.65:
            name = f"missing-{m['metadata']['name']}"
            m["spec"]["resourceClaims"] = [{"name": "gpu", "resourceClaimName": name}]
            # (its priority as drawn: a bound claim pod can be a preemption victim, whose claim
            # the resourceclaim controller releases -- both sides model it)
            if g.chance(0.75):  # the claim is created later: a cluster event that lets the pod in
                claims.append(name)
                pending.append((len(out) + g.rng.randint(0, 4), {
                    "apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
                    "metadata": {"name": name, "namespace": m["metadata"].get("namespace", "default")},
                    "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {
                        "deviceClassName": "gpu", "count": g.rng.choice((1, 1, 2, 3))}}]}}}))
    if claims:  # the devices they ask for: a DeviceClass, and GPUs on some nodes (one pool each)
        res = "resource.k8s.io/v1"
        g.objects.append({"apiVersion": res, "kind": "DeviceClass", "metadata": {"name": "gpu"},
                          "spec": {"selectors": [{"cel": {"expression": f'device.driver == "{DRA_DRIVER}"'}}]}})
        for node in g.nodes:
            n = g.rng.choice((0, 1, 2, 4))
            if n == 0:
                continue
            name = node["metadata"]["name"]
            g.objects.append({"apiVersion": res, "kind": "ResourceSlice", "metadata": {"name": f"{name}-gpus"},
                              "spec": {"driver": DRA_DRIVER, "nodeName": name,
                                       "pool": {"name": name, "generation": 1, "resourceSliceCount": 1},
                                       "devices": [{"name": f"gpu-{i}"} for i in range(n)]}})
    merged: list[dict] = []
    for i, m in enumerate(out):
        merged.extend(u for pos, u in pending if pos == i)
        merged.append(m)
    merged.extend(u for pos, u in pending if pos >= len(out))
    # (an update comes after its pod's first entry, and of two updates of one pod the one removing
    # fewer gates first: the positions are drawn so)
    g.incoming = merged
    if claims and g.chance(0.7):
        # a last pod whose claim (there from the start) asks for GPUs after the preemptions: it
        # finds free the devices of a preempted claim pod, which the resourceclaim controller
        # released (else they would stay taken)
        name = "late-gpus"
        g.objects.append({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
                          "metadata": {"name": name, "namespace": "default"},
                          "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {
                              "deviceClassName": "gpu", "count": g.rng.choice((1, 2, 4))}}]}}})
        pr = g.rng.choice((10, 100, 1000))
        late = g.pod(labels={"app": g.rng.choice(APPS)}, requests={"cpu": "250m", "memory": "256Mi"},
                     priority=pr, priorityClassName=f"prio-{pr}", terminationGracePeriodSeconds=0)
        late["spec"]["resourceClaims"] = [{"name": "gpu", "resourceClaimName": name}]
    _claim_owners(g)


def _claim_owners(g: _Gen) -> None:
    """Owner references on some claims: running pods that do not name them (the likely victims),
    co-owners, an owner that does not exist (a ReplicaSet), one whose uid is another's, one of a
    kind fastsched does not model. A victim's deletion makes the garbage collector delete the
    claims whose every owner is gone (terminating while a pod still reserves one); a claim kept or
    deleted decides whether ``late-gpus`` is attempted or held (both sides model the GC). Only
    running pods own claims: the two sides' incoming pods differ in when they exist (fastsched
    adds each at its turn and deletes one not kept; the oracle's API holds them all).
    Drawn after the rest of the scenario, so its other draws stay as they were."""
    claims = [o for o in (*g.objects, *g.incoming) if o.get("kind") == "ResourceClaim"]
    running = sorted(g.pods, key=lambda p: p["spec"].get("priority", 0))[: max(1, len(g.pods) // 2)]
    if not claims or not running or not g.chance(0.6):
        return

    def ref(pod: dict, **extra: Any) -> dict:
        meta = pod["metadata"]
        return {"apiVersion": "v1", "kind": "Pod", "name": meta["name"], "uid": meta["uid"], **extra}

    for claim in claims:
        if not g.chance(0.6):
            continue
        first = g.rng.choice(running)
        kind = g.rng.choice(("alone", "controller", "co-owned", "dangling", "renewed", "unmodelled"))
        owners = [ref(first, controller=True) if kind == "controller" else ref(first)]
        if kind == "co-owned":
            owners.append(ref(g.rng.choice(running)))
        elif kind == "dangling":
            owners.append({"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "gone", "uid": "uid-gone"})
        elif kind == "renewed":
            owners.append(ref(g.rng.choice(running), uid="uid-before"))
        elif kind == "unmodelled":
            owners.append({"apiVersion": "kubeflow.org/v2beta1", "kind": "MPIJob", "name": "train",
                           "uid": "uid-mpi"})
        if len(owners) == 2 and owners[0]["uid"] == owners[1]["uid"]:
            owners.pop()  # (the same pod twice: no co-owner)
        claim["metadata"]["ownerReferences"] = owners


#: the percentageOfNodesToScore values class ``sampling`` draws (None: unset, the v1 default 0,
#: which is adaptive: 50 - nodes/125, at least 5, at least 100 nodes)
SAMPLING_PERCENTAGES = (None, 0, 0, 1, 5, 10, 20, 30, 50, 100)


def gen_sampling(g: _Gen) -> None:
    """Clusters of 100-600 nodes, where upstream samples: percentageOfNodesToScore set in the
    configuration (unset, 0 = adaptive, or 1-100) and, for some, in the profile (which overrides
    it), ``parallelism: 1`` (upstream's answer is then the sequential search the oracle retells, see
    ``sampling`` in oracle/main.go), and 4-14 incoming pods in sequence, so the start index
    (nextStartNodeIndex) carries from cycle to cycle. Nodes are cheap (few labels); some are
    infeasible for some pods (NoSchedule taints, unschedulable, small or filled with bound pods,
    ``pool`` labels the selectors ask for), so the search walks past rejections, and some pods fit
    nowhere (a FitError over every node, its reasons histogram). Zones: three, interleaved by the
    node tree, and some nodes with none. A high-priority pod may preempt on the few nodes of the
    ``pool: small`` label (fewer than 100 nodes fail with a resolvable status, so preemption's
    dry run examines them all: its random offset does not matter); it then waits nominated.
    No PreFilter node restriction (upstream lists PreFilter's node names in map order)."""
    n = g.rng.randint(100, 600)
    pct = g.rng.choice(SAMPLING_PERCENTAGES)
    g.config = {**CONFIG_V1, "parallelism": 1}
    if pct is not None:
        g.config["percentageOfNodesToScore"] = pct
    profile: dict = {"schedulerName": "default-scheduler"}
    if g.chance(0.3):  # a profile's own value overrides the configuration's (v1.37: KubeSchedulerProfile)
        profile["percentageOfNodesToScore"] = g.rng.choice(SAMPLING_PERCENTAGES[1:])
    if g.chance(0.35):  # no Score plugin: the search stops at the second feasible node (one to find)
        profile["plugins"] = {"score": {"disabled": [{"name": "*"}]}}
    g.config["profiles"] = [profile]
    for p in (0, 500, 1000, 2000):
        g.objects.append({"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass",
                          "metadata": {"name": f"prio-{p}"}, "value": p})
    tainted = g.rng.choice((0.0, 0.05, 0.15, 0.4))
    small = min(g.rng.randint(3, 40), n // 4)  # the "pool: small" nodes (resolvable failures only)
    for i in range(n):
        labels: dict = {}
        if i < small:
            labels["pool"] = "small"
        elif g.chance(0.3):
            labels["pool"] = g.rng.choice(("a", "b"))
        if g.chance(0.3):
            labels["disktype"] = g.rng.choice(("ssd", "hdd"))
        taints = [dict(g.rng.choice((TAINTS[0], TAINTS[4])))] if i >= small and g.chance(tainted) else None
        g.node(cpu="2" if i < small else g.rng.choice(("1", "2", "4", "8")), memory=g.rng.choice(("2Gi", "4Gi")),
               pods=g.rng.choice(("5", "110")), labels=labels, taints=taints,
               unschedulable=i >= small and g.chance(0.05), zone=g.chance(0.9))
    g.rng.shuffle(g.nodes)  # (the small pool spread among the others; names stay as drawn)
    for node in g.nodes:  # the small pool full of low-priority pods; some others busy
        name = node["metadata"]["name"]
        if node["metadata"]["labels"].get("pool") == "small":  # 400m left: a victim frees room for two
            for _ in range(2):
                g.pod(node=name, requests={"cpu": "800m", "memory": "256Mi"}, labels={"app": g.rng.choice(APPS)},
                      priority=0, priorityClassName="prio-0", terminationGracePeriodSeconds=0)
        elif g.chance(0.15):
            g.pod(node=name, requests={"cpu": g.rng.choice(("500m", "1", "2")), "memory": "1Gi"},
                  labels={"app": g.rng.choice(APPS)}, priority=0, priorityClassName="prio-0")
    for _ in range(g.rng.randint(4, 14)):
        roll = g.rng.random()
        spec: dict = {"priority": 0, "priorityClassName": "prio-0"}
        requests = {"cpu": g.rng.choice(("100m", "100m", "500m", "1", "1500m", "3")), "memory": g.rng.choice(("128Mi", "1Gi"))}
        if roll < 0.15:  # fits nowhere: a FitError over every node
            requests = {"cpu": g.rng.choice(("5", "64")), "memory": "1Gi"}
        elif roll < 0.4:  # preempts in the small pool (nothing else fits it)
            requests = {"cpu": "600m", "memory": "256Mi"}
            pr = g.rng.choice((500, 1000))  # (a pod of 1000 ignores the nomination of one of 500)
            spec = {"priority": pr, "priorityClassName": f"prio-{pr}", "nodeSelector": {"pool": "small"}}
        elif roll < 0.5:
            spec["nodeSelector"] = {g.rng.choice(("pool", "disktype")): g.rng.choice(("a", "b", "ssd", "hdd"))}
        if g.chance(0.3):
            spec["tolerations"] = [_toleration(g)]
        g.pod(requests=requests, labels={"app": g.rng.choice(APPS)}, **spec)
    # retries: a later entry of a preemptor is its next attempt, if it waits nominated then (both
    # harnesses; else a pod created anew, as a pod that failed was dropped). A pod of higher
    # priority may come in between and take the nominated node (it does not see the nomination
    # of a pod below it): the retry then finds its nominated node rejected
    out: list[dict] = []
    pending: list[tuple[int, dict]] = []
    for m in list(g.incoming):  # (g.pod appends to g.incoming: replaced below)
        out.append(m)
        if m["spec"].get("priority") in (500, 1000) and g.chance(0.8):
            pending.append((len(out) + g.rng.randint(0, 3), json.loads(json.dumps(m))))
            if g.chance(0.5):
                pending.append((len(out) + g.rng.randint(0, 2), g.pod(
                    requests={"cpu": "1000m", "memory": "256Mi"}, labels={"app": g.rng.choice(APPS)},
                    priority=2000, priorityClassName="prio-2000", nodeSelector={"pool": "small"})))
    merged: list[dict] = []
    for i, m in enumerate(out):
        merged.extend(u for pos, u in pending if pos == i)
        merged.append(m)
    merged.extend(u for pos, u in pending if pos >= len(out))
    g.incoming = merged
    g.scenario_extra = {"sampling": True}


#: classes run only when named, with the default gates: class -> generator
NAMED_CLASSES: dict[str, Callable[[_Gen], None]] = {"preenqueue": gen_preenqueue, "sampling": gen_sampling}

#: classes run with feature gates on both sides, only when named: class -> (generator, gates)
GATED_CLASSES: dict[str, tuple[Callable[[_Gen], None], str]] = {
    "dra-alpha": (gen_dra_alpha, "DRAListTypeAttributes=true,DRADeviceCompatibilityGroups=true,"
                                 "DRAOptionalNodeOperations=true"),
    "dra-derived": (gen_dra_derived, "DRAListTypeAttributes=true,DRADeviceCompatibilityGroups=true,"
                                     "DRAOptionalNodeOperations=true,DRADerivedAttributes=true"),
    "dra-nar": (gen_dra_node_allocatable, "DRANodeAllocatableResources=true"),
}

#: class name -> generator filling a _Gen
CLASSES: dict[str, Callable[[_Gen], None]] = {
    "resources": gen_resources, "taints": gen_taints, "affinity": gen_affinity, "podaffinity": gen_podaffinity,
    "spread": gen_spread, "ports": gen_ports, "images": gen_images, "volumes": gen_volumes,
    "preemption": gen_preemption, "preemption-ties": gen_preemption_ties, "profiles": gen_profiles, "dra": gen_dra,
    "mixed": gen_mixed,
}


#: the classes whose pods mostly hold the ServiceAccount admission's token volume and mounts
#: (:func:`_service_account_tokens`), as a cluster's pods do, and some the StatefulSet and Job
#: controllers' per-pod fields (:func:`_controller_fields`): those about volumes and the mixed one
SERVICE_ACCOUNT_TOKEN_CLASSES = frozenset({"volumes", "mixed"})


def generate(cls: str, seed: int, *, service_account_tokens: bool = True) -> dict:
    """The scenario of class ``cls`` for ``seed`` (deterministic). ``service_account_tokens=False``:
    without the token volumes and controller fields of :data:`SERVICE_ACCOUNT_TOKEN_CLASSES` (the
    scenario as drawn before they were added: the recorded hint scenarios' clusters)."""
    g = _Gen(cls, seed)
    (CLASSES[cls] if cls in CLASSES else NAMED_CLASSES[cls] if cls in NAMED_CLASSES else GATED_CLASSES[cls][0])(g)
    if service_account_tokens and cls in SERVICE_ACCOUNT_TOKEN_CLASSES:
        _service_account_tokens(g)
        _controller_fields(g)
    return _clean(g.scenario())


def _clean(x: Any) -> Any:
    """Drop None values (manifests as a client would send them)."""
    if isinstance(x, dict):
        return {k: _clean(v) for k, v in x.items() if v is not None}
    if isinstance(x, list):
        return [_clean(v) for v in x]
    return x
