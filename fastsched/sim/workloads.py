"""kube-scheduler's scheduler_perf workloads, rebuilt as fastsched objects.

Each :class:`Workload` mirrors one upstream test case of
``test/integration/scheduler_perf/*/performance-config.yaml`` (kubernetes v1.34 era layout): the
same node template and node labels (``labelNodePrepareStrategy``, given round-robin as upstream
does), the same pod templates (``templates/*.yaml``: labels, affinity terms, topology keys,
requests, priorities), the same namespaces (``sched-0`` / ``sched-1``, or ``namespace-<op index>``
when an op names none) and the same proportions of init and measured pods. Sizes are parameters;
the defaults are the case whose published throughput floor is recorded in
:attr:`Workload.upstream_floor_pods_per_second` (from ``shared/spec/upstream-perf.md``)::

    inst = WORKLOADS["SchedulingBasic"].build()            # 5000 nodes, 1000 init, 10000 measured
    inst = WORKLOADS["TopologySpreading"].build(nodes=500) # init/measured scaled with the nodes
    inst = WORKLOADS["PreemptionBasic"].build(prebind=True)

Init pods: upstream creates them through the scheduler before the measured phase starts. By
default :attr:`WorkloadInstance.init_pods` are unbound, to be scheduled first (the faithful
set-up). ``prebind=True`` (or ``"round-robin"``) instead binds them to nodes round-robin
(skipping nodes where the pod's requests no longer fit), ``prebind="random"`` to seeded random
nodes, for a fast benchmark set-up; these are what the default scheduler's spreading scores
produce for these templates, but inter-pod (anti-)affinity is not re-checked.
(SchedulingPodAntiAffinity and MixedSchedulingBasePod place at most one anti-affinity pod per
node as long as there are no more of them than nodes, which holds at upstream's sizes.)

Churn (Unschedulable, PreemptionAsync): upstream's ``churn`` op creates a pod from a template
every ``intervalMilliseconds`` while the measured pods are scheduled; :attr:`WorkloadInstance.churn`
describes it and makes those pods on demand (:meth:`Churn.arrivals`).

All upstream workloads run with the default KubeSchedulerConfiguration, so ``config`` is None,
and none uses PriorityClasses (templates set ``spec.priority`` directly).

Each workload is also an upstream-format test case (:meth:`Workload.perf_case`): ``fastsched
bench`` runs it through the same runner as ``fastsched perf`` runs upstream's own files
(:mod:`fastsched.perf`), with the templates above given in memory.
"""
from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import Any, Iterable, Mapping, Sequence

import numpy as np

from ..api import LABEL_ZONE, Namespace, Node, Pod, PriorityClass
from .generators import PodFactory, upstream_node, upstream_nodes

__all__ = [
    "TEMPLATES",
    "WORKLOADS",
    "Churn",
    "PodsOp",
    "Workload",
    "WorkloadInstance",
    "NODE_TEMPLATES",
    "prebind_pods",
    "template_manifest",
    "template_pod",
]

_PAUSE_IMAGE = "registry.k8s.io/pause:3.10.1"
_AFFINITY_NAMESPACES = ["sched-1", "sched-0"]
_HOSTNAME = "kubernetes.io/hostname"


def _pause_pod(generate_name: str, *, labels: Mapping[str, str] | None = None, cpu: str | None = "100m",
               memory: str | None = "500Mi", limits: bool = True, priority: int | None = None,
               port: bool = True, **spec: Any) -> dict:
    """A scheduler_perf template: one pause container (port 80) with the given requests."""
    container: dict = {"image": _PAUSE_IMAGE, "name": "pause"}
    if port:
        container["ports"] = [{"containerPort": 80}]
    requests = {k: v for k, v in (("cpu", cpu), ("memory", memory)) if v is not None}
    if requests:
        container["resources"] = {"requests": dict(requests)}
        if limits:
            container["resources"]["limits"] = dict(requests)
    body: dict = dict(spec)
    if priority is not None:
        body["priority"] = priority
    body["containers"] = [container]
    metadata: dict = {"generateName": generate_name}
    if labels:
        metadata["labels"] = dict(labels)
    return {"apiVersion": "v1", "kind": "Pod", "metadata": metadata, "spec": body}


def _affinity_term(color: str, topology_key: str) -> dict:
    return {"labelSelector": {"matchLabels": {"color": color}}, "topologyKey": topology_key,
            "namespaces": list(_AFFINITY_NAMESPACES)}


def _spread(when: str) -> list:
    return [{"maxSkew": 5, "topologyKey": LABEL_ZONE, "whenUnsatisfiable": when,
             "labelSelector": {"matchLabels": {"color": "blue"}}}]


# Upstream pod templates by file name (templates/<name>.yaml), ported field by field.
TEMPLATES: dict[str, dict] = {
    # templates/pod-default.yaml; also what makeBasePod (testutils.MakePodSpec) gives when an op
    # names no template: 100m cpu / 500Mi memory requests = limits, containerPort 80.
    "pod-default": _pause_pod("pod-"),
    "pod-with-pod-anti-affinity": _pause_pod(
        "anti-affinity-pod-", labels={"color": "green"},
        affinity={"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
            _affinity_term("green", _HOSTNAME)]}}),
    "pod-with-pod-affinity": _pause_pod(
        "affinity-pod-", labels={"color": "blue"},
        affinity={"podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
            _affinity_term("blue", LABEL_ZONE)]}}),
    "pod-with-preferred-pod-affinity": _pause_pod(
        "preferred-affinity-pod-", labels={"color": "red"},
        affinity={"podAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
            {"podAffinityTerm": _affinity_term("red", _HOSTNAME), "weight": 1}]}}),
    "pod-with-preferred-pod-anti-affinity": _pause_pod(
        "preferred-anti-affinity-pod-", labels={"color": "yellow"},
        affinity={"podAntiAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
            {"podAffinityTerm": _affinity_term("yellow", _HOSTNAME), "weight": 1}]}}),
    "pod-with-topology-spreading": _pause_pod(
        "spreading-pod-", labels={"color": "blue"}, topologySpreadConstraints=_spread("DoNotSchedule")),
    "pod-with-preferred-topology-spreading": _pause_pod(
        "spreading-pod-", labels={"color": "blue"}, topologySpreadConstraints=_spread("ScheduleAnyway")),
    "pod-with-node-affinity": _pause_pod(
        "node-affinity-",
        affinity={"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
            {"matchExpressions": [{"key": LABEL_ZONE, "operator": "In", "values": ["zone1", "zone2"]}]}]}}}),
    "pod-low-priority": _pause_pod("pod-", cpu="900m", terminationGracePeriodSeconds=0),
    "pod-high-priority": _pause_pod("pod-", cpu="3000m", priority=10),
    "pod-high-priority-large-cpu": _pause_pod("pod-h-", cpu="9", limits=False, priority=10),
    "daemonset-pod": _pause_pod(
        "daemonset-", cpu=None, memory=None, port=False,
        affinity={"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
            {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["scheduler-perf-node"]}]}]}}}),
}


#: Upstream node templates by file name (templates/<name>.yaml): node-default (pods 110, cpu 4,
#: memory 32Gi; allocatable defaults to capacity) and node-with-name (SchedulingDaemonset's target).
NODE_TEMPLATES: dict[str, dict] = {
    "node-default": {"apiVersion": "v1", "kind": "Node", "metadata": {"generateName": "scheduler-perf-"},
                     "spec": {}, "status": {"capacity": {"pods": "110", "cpu": "4", "memory": "32Gi"},
                                            "conditions": [{"status": "True", "type": "Ready"}],
                                            "phase": "Running"}},
    "node-with-name": {"apiVersion": "v1", "kind": "Node",
                       "metadata": {"name": "scheduler-perf-node",
                                    "labels": {_HOSTNAME: "scheduler-perf-node"}},
                       "spec": {}, "status": {"capacity": {"pods": "90000", "cpu": "4", "memory": "32Gi"},
                                              "conditions": [{"status": "True", "type": "Ready"}],
                                              "phase": "Running"}},
}


def template_manifest(name: str, pod_name: str | None = None, namespace: str | None = None) -> dict:
    """A copy of template ``name`` with ``metadata.name`` set (default: generateName + "0")."""
    try:
        manifest = copy.deepcopy(TEMPLATES[name])
    except KeyError:
        raise KeyError(f"unknown template {name!r}; known: {', '.join(sorted(TEMPLATES))}") from None
    meta = manifest["metadata"]
    meta["name"] = pod_name or meta["generateName"] + "0"
    if namespace:
        meta["namespace"] = namespace
    return manifest


_FACTORIES: dict[str, PodFactory] = {}


def _factory(name: str) -> PodFactory:
    factory = _FACTORIES.get(name)
    if factory is None:
        factory = _FACTORIES[name] = PodFactory(Pod.from_manifest(template_manifest(name)))
    return factory


def template_pod(name: str, pod_name: str | None = None, namespace: str = "default") -> Pod:
    """One Pod of template ``name`` (with an empty manifest)."""
    factory = _factory(name)
    return factory.make(pod_name or TEMPLATES[name]["metadata"]["generateName"] + "0", namespace)


# --------------------------------------------------------------------------------------------
# workloads
# --------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class PodsOp:
    """A ``createPods`` op: ``template`` pods in ``namespace``; ``op_index`` is its position in
    upstream's workloadTemplate (it names the default namespace and our pod names)."""

    template: str
    namespace: str
    op_index: int


@dataclass(frozen=True)
class ChurnOp:
    template: str
    interval_seconds: float
    namespace: str
    op_index: int


@dataclass
class Churn:
    """Pods created from ``template`` every ``interval_seconds`` during the measured phase."""

    template: str
    interval_seconds: float
    namespace: str
    op_index: int

    def pods(self, count: int, start: int = 0) -> list[Pod]:
        factory = _factory(self.template)
        prefix = f"{TEMPLATES[self.template]['metadata']['generateName']}{self.op_index}-"
        return [factory.make(f"{prefix}{i:05d}", self.namespace) for i in range(start, start + count)]

    def arrivals(self, duration: float, start_time: float = 0.0) -> list[tuple[float, Pod]]:
        """``(time, pod)`` for every churn pod created within ``duration`` seconds (the first at
        ``start_time + interval``, as a ticker fires)."""
        count = int(duration / self.interval_seconds + 1e-9)  # 1.0 // 0.2 is 4.0 in floating point
        return [(round(start_time + (i + 1) * self.interval_seconds, 9), p) for i, p in enumerate(self.pods(count))]


@dataclass
class WorkloadInstance:
    """What :meth:`Workload.build` returns. Schedule ``init_pods`` first (unless ``prebound``),
    then time the scheduling of ``measured_pods``."""

    workload: "Workload"
    nodes: list[Node]
    init_pods: list[Pod]
    measured_pods: list[Pod]
    namespaces: list[Namespace]
    priority_classes: list[PriorityClass] = field(default_factory=list)
    config: str | None = None
    churn: Churn | None = None
    prebound: bool = False

    @property
    def pods(self) -> list[Pod]:
        return self.init_pods + self.measured_pods


@dataclass(frozen=True)
class Workload:
    """One scheduler_perf test case (see the module docstring)."""

    name: str
    description: str
    upstream_file: str
    upstream_case: str
    node_template: str
    init_ops: tuple[PodsOp, ...]
    measured_op: PodsOp
    default_nodes: int
    default_init_pods: int
    default_measured_pods: int
    upstream_floor_pods_per_second: float | None
    floor_2024: float | None = None
    floor_2026: float | None = None
    node_label: tuple[str, tuple[str, ...]] | None = None
    named_node: bool = False
    churn: ChurnOp | None = None
    created_namespaces: tuple[str, ...] = ()
    config: str | None = None
    notes: str = ""

    @property
    def templates(self) -> tuple[str, ...]:
        """Upstream pod template names used (init ops, then measured, then churn)."""
        names = [op.template for op in self.init_ops] + [self.measured_op.template]
        if self.churn:
            names.append(self.churn.template)
        return tuple(dict.fromkeys(names))

    def build(self, nodes: int | None = None, init_pods: int | None = None, measured_pods: int | None = None,
              seed: int = 0, prebind: bool | str = False) -> WorkloadInstance:
        """Nodes and pods for this workload.

        ``nodes`` defaults to upstream's size for the recorded case (5000 for most); when only
        ``nodes`` is given, init and measured counts are scaled in proportion to it. ``init_pods``
        is upstream's ``$initPods``: the count per init op (MixedSchedulingBasePod has five).
        ``prebind``: False (init pods unbound), True / "round-robin", or "random" (seeded by
        ``seed``).
        """
        n, n_init, n_measured = self.sizes(nodes, init_pods, measured_pods)
        if prebind not in (False, True, "round-robin", "random"):
            raise ValueError(f"prebind must be False, True, 'round-robin' or 'random', got {prebind!r}")

        node_list: list[Node] = []
        if self.named_node:
            # templates/node-with-name.yaml: the one node every daemonset pod targets
            node_list.append(upstream_node("scheduler-perf-node", pods=90000))
        if self.node_label is None:
            node_list.extend(upstream_nodes(n))
        else:
            node_list.extend(upstream_nodes(n, label_key=self.node_label[0], label_values=self.node_label[1]))

        init: list[Pod] = []
        for op in self.init_ops:
            init.extend(_make_pods(op, n_init))
        measured = _make_pods(self.measured_op, n_measured)
        if prebind and init:
            init = _prebind(init, node_list, "random" if prebind == "random" else "round-robin", seed)

        ops: list[PodsOp | ChurnOp] = [*self.init_ops, self.measured_op, *([self.churn] if self.churn else [])]
        ops = sorted(ops,
                     key=lambda op: op.op_index)
        namespaces = list(self.created_namespaces) + [op.namespace for op in ops]  # in op order
        ns_objects = [Namespace(name=ns) for ns in dict.fromkeys(namespaces)]
        churn = Churn(self.churn.template, self.churn.interval_seconds, self.churn.namespace,
                      self.churn.op_index) if self.churn else None
        return WorkloadInstance(self, node_list, init, measured, ns_objects, [], self.config, churn,
                                bool(prebind) and bool(init))


    def sizes(self, nodes: int | None = None, init_pods: int | None = None,
              measured_pods: int | None = None) -> tuple[int, int, int]:
        """``(nodes, init pods per init op, measured pods)`` as :meth:`build` sizes them."""
        n = self.default_nodes if nodes is None else int(nodes)
        scale = n / self.default_nodes
        n_init = round(self.default_init_pods * scale) if init_pods is None else int(init_pods)
        n_measured = max(1, round(self.default_measured_pods * scale)) if measured_pods is None \
            else int(measured_pods)
        if n < 0 or n_init < 0 or n_measured < 0:
            raise ValueError("nodes, init_pods and measured_pods must not be negative")
        return n, n_init, n_measured

    def perf_case(self, nodes: int | None = None, init_pods: int | None = None,
                  measured_pods: int | None = None, workload_name: str | None = None) -> tuple[dict, dict]:
        """This workload as an upstream-format test case: ``(case, templates)``, the case as
        scheduler_perf's performance-config holds it (the ops of upstream's workloadTemplate, in
        upstream's order, ``$initNodes`` / ``$initPods`` / ``$measurePods`` set to the sizes
        :meth:`build` would use, upstream's floor as the threshold) and its templates by path, for
        :func:`fastsched.perf.config.parse_perf_config` (``parse_perf_config([case],
        templates=templates)``)."""
        n, n_init, n_measured = self.sizes(nodes, init_pods, measured_pods)
        templates = {f"templates/{name}.yaml": _yaml(TEMPLATES[name]) for name in self.templates}
        ops: list[tuple[int, dict]] = []
        if self.named_node:
            templates["templates/node-with-name.yaml"] = _yaml(NODE_TEMPLATES["node-with-name"])
            ops.append((-2, {"opcode": "createNodes", "count": 1,
                             "nodeTemplatePath": "templates/node-with-name.yaml"}))
        create_nodes: dict = {"opcode": "createNodes", "countParam": "$initNodes"}
        if self.node_template.startswith(_NODE_DEFAULT):
            templates["templates/node-default.yaml"] = _yaml(NODE_TEMPLATES["node-default"])
            create_nodes["nodeTemplatePath"] = "templates/node-default.yaml"
        if self.node_label is not None:
            create_nodes["labelNodePrepareStrategy"] = {"labelKey": self.node_label[0],
                                                        "labelValues": list(self.node_label[1])}
        ops.append((-1, create_nodes))
        if self.created_namespaces:
            prefix = self.created_namespaces[0].rsplit("-", 1)[0]
            ops.append((-1, {"opcode": "createNamespaces", "prefix": prefix, "count": len(self.created_namespaces)}))
        for op in self.init_ops:
            ops.append((op.op_index, {"opcode": "createPods", "countParam": "$initPods", "namespace": op.namespace,
                                      "podTemplatePath": f"templates/{op.template}.yaml"}))
        if self.churn is not None:
            ops.append((self.churn.op_index, {
                "opcode": "churn", "mode": "create", "namespace": self.churn.namespace,
                "templatePaths": [f"templates/{self.churn.template}.yaml"],
                "intervalMilliseconds": int(round(self.churn.interval_seconds * 1000))}))
        m = self.measured_op
        ops.append((m.op_index, {"opcode": "createPods", "countParam": "$measurePods", "namespace": m.namespace,
                                 "podTemplatePath": f"templates/{m.template}.yaml", "collectMetrics": True}))
        ops.sort(key=lambda item: item[0])
        params = {"initNodes": n, "measurePods": n_measured}
        if self.init_ops:
            params["initPods"] = n_init
        workload: dict = {"name": workload_name or f"{n}Nodes_{n_measured}Pods", "labels": ["performance"],
                          "params": params}
        if self.upstream_floor_pods_per_second:
            workload["threshold"] = self.upstream_floor_pods_per_second
        case = {"name": self.name, "workloadTemplate": [op for _, op in ops], "workloads": [workload]}
        return case, templates


def _yaml(manifest: dict) -> str:
    import yaml

    return yaml.safe_dump(manifest, sort_keys=False)


def _make_pods(op: PodsOp, count: int) -> list[Pod]:
    factory = _factory(op.template)
    prefix = f"{TEMPLATES[op.template]['metadata']['generateName']}{op.op_index}-"
    width = max(5, len(str(max(count - 1, 0))))
    return [factory.make(f"{prefix}{i:0{width}d}", op.namespace) for i in range(count)]


def _prebind(pods: Sequence[Pod], nodes: Sequence[Node], mode: str, seed: int) -> list[Pod]:
    return prebind_pods(pods, nodes, mode=mode, seed=seed)


def prebind_pods(pods: Sequence[Pod], nodes: Sequence[Node], *, occupied: Iterable[Pod] = (),
                 mode: str = "round-robin", seed: int = 0) -> list[Pod]:
    """Bind pods to nodes (phase Running): round-robin (or a seeded random start per pod with
    ``mode="random"``), moving on to the next node while cpu, memory or pod count would not fit
    next to the ``occupied`` pods (those already bound) and the pods placed before."""
    n = len(nodes)
    if pods and not n:
        raise ValueError("prebind: there are no nodes to bind pods to")
    row = {node.name: i for i, node in enumerate(nodes)}
    free = {r: [node.allocatable.get(r, 0) for node in nodes] for r in ("cpu", "memory", "pods")}
    for pod in occupied:
        i = row.get(pod.node_name) if pod.node_name else None
        if i is not None:
            req = pod.requests
            free["cpu"][i] -= req.get("cpu", 0)
            free["memory"][i] -= req.get("memory", 0)
            free["pods"][i] -= 1
    starts = np.random.default_rng([int(seed), 7]).integers(0, n, size=len(pods)).tolist() \
        if mode == "random" else None
    out = []
    cursor = 0
    for j, pod in enumerate(pods):
        req = pod.requests
        need = ((free["cpu"], req.get("cpu", 0)), (free["memory"], req.get("memory", 0)), (free["pods"], 1))
        begin = starts[j] if starts is not None else cursor
        for step in range(n):
            i = (begin + step) % n
            if all(lst[i] >= amt for lst, amt in need):
                break
        else:
            raise ValueError(f"prebind: pod {pod.key or pod.generate_name + '*'} fits on no node; use fewer "
                             "init pods or schedule them")
        for lst, amt in need:
            lst[i] -= amt
        if starts is None:
            cursor = i + 1
        bound = pod.replace(node_name=nodes[i].name, phase="Running")
        # a validated pod stays valid bound to a known node: the Scheduler need not validate it again
        bound.admitted = pod.admitted
        out.append(bound)
    return out


_MISC = "test/integration/scheduler_perf/misc/performance-config.yaml"
_AFFINITY = "test/integration/scheduler_perf/affinity/performance-config.yaml"
_SPREADING = "test/integration/scheduler_perf/topology_spreading/performance-config.yaml"
_NODE_DEFAULT = "templates/node-default.yaml"
_BASE_NODE = "makeBaseNode (util.go; same as templates/node-default.yaml)"
_ZONE1 = (LABEL_ZONE, ("zone1",))
_MOONS = (LABEL_ZONE, ("moon-1", "moon-2", "moon-3"))


def _affinity_workload(name: str, template: str, floor: float, init: int, measured: int,
                       case: str, node_label=None, description: str = "") -> Workload:
    # createNodes, createNamespaces(sched, 2), init pods in sched-0, measured pods in sched-1.
    return Workload(
        name=name, description=description, upstream_file=_AFFINITY, upstream_case=case,
        node_template=_NODE_DEFAULT if node_label else _BASE_NODE,
        init_ops=(PodsOp(template, "sched-0", 2),), measured_op=PodsOp(template, "sched-1", 3),
        default_nodes=5000, default_init_pods=init, default_measured_pods=measured,
        upstream_floor_pods_per_second=floor, floor_2024=floor, node_label=node_label,
        created_namespaces=("sched-0", "sched-1"), notes="2026 floor not confirmed as raised (upstream-perf.md)")


WORKLOADS: dict[str, Workload] = {w.name: w for w in (
    Workload(
        name="SchedulingBasic", description="plain 100m/500Mi pods",
        upstream_file=_MISC, upstream_case="5000Nodes_10000Pods", node_template=_BASE_NODE,
        init_ops=(PodsOp("pod-default", "namespace-1", 1),), measured_op=PodsOp("pod-default", "namespace-2", 2),
        default_nodes=5000, default_init_pods=1000, default_measured_pods=10000,
        upstream_floor_pods_per_second=680, floor_2024=270, floor_2026=680),
    _affinity_workload("SchedulingPodAntiAffinity", "pod-with-pod-anti-affinity", 60, 1000, 2000,
                       "5000Nodes_2000Pods", description="required anti-affinity color=green per hostname"),
    _affinity_workload("SchedulingPodAffinity", "pod-with-pod-affinity", 35, 5000, 5000, "5000Nodes_5000Pods",
                       node_label=_ZONE1, description="required affinity color=blue per zone (all nodes zone1)"),
    _affinity_workload("SchedulingPreferredPodAffinity", "pod-with-preferred-pod-affinity", 90, 5000, 5000,
                       "5000Nodes_5000Pods", description="preferred affinity color=red per hostname, weight 1"),
    _affinity_workload("SchedulingPreferredPodAntiAffinity", "pod-with-preferred-pod-anti-affinity", 90, 5000,
                       5000, "5000Nodes_5000Pods",
                       description="preferred anti-affinity color=yellow per hostname, weight 1"),
    Workload(
        name="SchedulingNodeAffinity", description="required node affinity zone In [zone1, zone2]",
        upstream_file=_AFFINITY, upstream_case="5000Nodes_10000Pods", node_template=_NODE_DEFAULT,
        init_ops=(PodsOp("pod-with-node-affinity", "namespace-1", 1),),
        measured_op=PodsOp("pod-with-node-affinity", "namespace-2", 2),
        default_nodes=5000, default_init_pods=5000, default_measured_pods=10000,
        upstream_floor_pods_per_second=220, floor_2024=220, node_label=_ZONE1,
        notes="2026 floor not confirmed as raised (upstream-perf.md)"),
    Workload(
        name="MixedSchedulingBasePod",
        description="init: default, affinity, anti-affinity, preferred affinity and preferred anti-affinity pods "
                    "($initPods each, in sched-0); measured: default pods",
        upstream_file=_AFFINITY, upstream_case="5000Nodes_5000Pods", node_template=_NODE_DEFAULT,
        init_ops=(PodsOp("pod-default", "sched-0", 2), PodsOp("pod-with-pod-affinity", "sched-0", 3),
                  PodsOp("pod-with-pod-anti-affinity", "sched-0", 4),
                  PodsOp("pod-with-preferred-pod-affinity", "sched-0", 5),
                  PodsOp("pod-with-preferred-pod-anti-affinity", "sched-0", 6)),
        measured_op=PodsOp("pod-default", "namespace-7", 7),
        default_nodes=5000, default_init_pods=2000, default_measured_pods=5000,
        upstream_floor_pods_per_second=140, floor_2024=140, node_label=_ZONE1, created_namespaces=("sched-0",),
        notes="only sched-0 exists (the affinity terms also name sched-1, which upstream never creates); "
              "2026 floor not confirmed as raised"),
    Workload(
        name="TopologySpreading", description="DoNotSchedule spread (maxSkew 5) of color=blue over 3 zones",
        upstream_file=_SPREADING, upstream_case="5000Nodes_5000Pods", node_template=_NODE_DEFAULT,
        init_ops=(PodsOp("pod-default", "namespace-1", 1),),
        measured_op=PodsOp("pod-with-topology-spreading", "namespace-2", 2),
        default_nodes=5000, default_init_pods=5000, default_measured_pods=5000,
        upstream_floor_pods_per_second=460, floor_2024=85, floor_2026=460, node_label=_MOONS),
    Workload(
        name="PreferredTopologySpreading", description="ScheduleAnyway spread (maxSkew 5) of color=blue over 3 zones",
        upstream_file=_SPREADING, upstream_case="5000Nodes_5000Pods", node_template=_NODE_DEFAULT,
        init_ops=(PodsOp("pod-default", "namespace-1", 1),),
        measured_op=PodsOp("pod-with-preferred-topology-spreading", "namespace-2", 2),
        default_nodes=5000, default_init_pods=5000, default_measured_pods=5000,
        upstream_floor_pods_per_second=340, floor_2024=125, floor_2026=340, node_label=_MOONS),
    Workload(
        name="Unschedulable",
        description="default pods measured while an unschedulable 9-cpu priority-10 pod arrives every 200ms",
        upstream_file=_MISC, upstream_case="5kNodes/100Init/10kPods", node_template=_BASE_NODE,
        init_ops=(PodsOp("pod-default", "namespace-1", 1),), measured_op=PodsOp("pod-default", "namespace-3", 3),
        churn=ChurnOp("pod-high-priority-large-cpu", 0.2, "namespace-2", 2),
        default_nodes=5000, default_init_pods=100, default_measured_pods=10000,
        upstream_floor_pods_per_second=590, floor_2024=140, floor_2026=590,
        notes="init pods use makeBasePod (no template), identical in requests to pod-default; 2024 floor was "
              "140-170 depending on the variant"),
    Workload(
        name="PreemptionBasic",
        description="4 low-priority 900m pods per node, then 3000m priority-10 pods that must preempt",
        upstream_file=_MISC, upstream_case="500Nodes", node_template=_BASE_NODE,
        init_ops=(PodsOp("pod-low-priority", "namespace-1", 1),),
        measured_op=PodsOp("pod-high-priority", "namespace-2", 2),
        default_nodes=500, default_init_pods=2000, default_measured_pods=500,
        upstream_floor_pods_per_second=18, floor_2024=18, floor_2026=None,
        notes="the 500Nodes case carries no floor in the 2026 config (1000Nodes/4000/1000 is the current "
              "performance case; 5000Nodes is disabled upstream)"),
    Workload(
        name="PreemptionAsync",
        description="default pods measured while a 3000m priority-10 pod that must preempt arrives every 200ms",
        upstream_file=_MISC, upstream_case="5000Nodes", node_template=_BASE_NODE,
        init_ops=(PodsOp("pod-low-priority", "namespace-1", 1),), measured_op=PodsOp("pod-default", "namespace-3", 3),
        churn=ChurnOp("pod-high-priority", 0.2, "namespace-2", 2),
        default_nodes=5000, default_init_pods=20000, default_measured_pods=5000,
        upstream_floor_pods_per_second=570, floor_2024=160, floor_2026=570),
    Workload(
        name="SchedulingDaemonset",
        description="daemonset-like pods pinned by matchFields metadata.name to one named node among many",
        upstream_file=_MISC, upstream_case="15000Nodes", node_template=_NODE_DEFAULT + " + templates/node-with-name.yaml",
        init_ops=(), measured_op=PodsOp("daemonset-pod", "namespace-2", 2), named_node=True,
        default_nodes=15000, default_init_pods=0, default_measured_pods=30000,
        upstream_floor_pods_per_second=1100, floor_2024=390, floor_2026=1100,
        notes="nodes = $initNodes default nodes plus the named node (15,001 in all)"),
)}
