"""Seeded synthetic clusters: nodes (shapes, zones, labels, taints, images) and running pods.

:class:`ClusterSpec` describes a cluster; :func:`generate_cluster` turns it into ``(nodes, pods)``.
The random draws are vectorized with NumPy and the API objects are built with their constructors
(no manifests: ``Node.manifest`` / ``Pod.manifest`` stay empty), so a million nodes take seconds.
The same spec and seed always give identical objects.

A spec can be written in code or read from a dict / the ``cluster:`` section of a scenario file
(:meth:`ClusterSpec.from_dict`; keys in snake_case, camelCase or kebab-case)::

    nodes: 3000
    name_prefix: node-
    regions: 1                 # a count ("region-1", ...) or a list of names
    zones: [zone-a, zone-b, zone-c]   # or a count; zone j belongs to region j % len(regions)
    zone_assignment: round-robin      # or random
    shapes:                    # node shapes, drawn in proportion to weight (exact counts)
      - {name: small, cpu: 8, memory: 32Gi, pods: 110, weight: 0.6}
      - {name: gpu, cpu: 32, memory: 128Gi, nvidia.com/gpu: 4, weight: 0.1,
         labels: {accelerator: a100}, taints: [{key: nvidia.com/gpu, effect: NoSchedule}]}
    labels:                    # extra labels: key -> values (uniform), or a map
      disktype: {values: [ssd, hdd], probabilities: [0.3, 0.7], fraction: 0.8}
      tier: [gold, silver]
    taints:                    # each on the given fraction of the nodes (exact count)
      - {key: spot, value: "true", effect: PreferNoSchedule, fraction: 0.2}
    unschedulable_fraction: 0.01
    images: {pool: [{name: "nginx:1.25", size: 60Mi}, ...], per_node: 3}
    pods:                      # running pods, bound to nodes
      count: 5000
      shapes: [{cpu: 500m, memory: 1Gi, weight: 3}, {cpu: 2, memory: 4Gi}]
      labels: {app: [web, db, cache]}
      namespaces: [default, prod]
      placement: random        # or round-robin
      respect_capacity: true   # only where requests fit (and taints / nodeSelector allow)
    seed: 7

Every node carries ``kubernetes.io/hostname`` = its name, plus ``topology.kubernetes.io/zone`` and
``.../region`` when zones / regions are given. Errors name the field path
(``cluster.shapes[1].cpu: ...``) through :class:`SpecError`.
"""
from __future__ import annotations

import dataclasses
import gc
from dataclasses import dataclass, field
from typing import Any, Mapping, Sequence

import numpy as np

from ..api import (
    LABEL_HOSTNAME,
    LABEL_REGION,
    LABEL_ZONE,
    ContainerImage,
    FrozenDict,
    ManifestError,
    Node,
    Pod,
    Taint,
)
from ..api.objects import EMPTY_MAP, _field_copier, _read_only, _stored_fields, deterministic_uid
from ..api.strategy import raise_if_invalid
# SpecError is re-exported (__all__): fastsched.sim.generators is a public import path for it
from .spec import (MAX_GENERATED, Fields, SpecError, amount, check_label_key, check_label_value, check_number,
                   check_string_map, child, type_name, yaml_number)

__all__ = [
    "SpecError",
    "NodeShape",
    "LabelSpec",
    "TaintSpec",
    "ImageSpec",
    "PodShape",
    "RunningPodsSpec",
    "ClusterSpec",
    "PodFactory",
    "generate_cluster",
    "generate_nodes",
    "generate_running_pods",
    "upstream_node",
    "upstream_nodes",
    "UPSTREAM_NODE_ALLOCATABLE",
    "UPSTREAM_NODE_NAME_PREFIX",
]

# scheduler_perf's default node (templates/node-default.yaml and makeBaseNode in util.go):
# capacity pods 110, cpu 4, memory 32Gi; the API server defaults allocatable to capacity, and the
# node preparer adds kubernetes.io/hostname = name. Names come from generateName "scheduler-perf-".
UPSTREAM_NODE_NAME_PREFIX = "scheduler-perf-"
UPSTREAM_NODE_ALLOCATABLE: Mapping[str, int] = FrozenDict(
    {"pods": 110, "cpu": 4000, "memory": 32 * 2**30})

_NO_SCHEDULE_EFFECTS = frozenset(("NoSchedule", "NoExecute"))
_TAINT_EFFECTS = ("NoSchedule", "PreferNoSchedule", "NoExecute")


def _is_resource_key(key: str) -> bool:
    # Extended resources are domain-prefixed (nvidia.com/gpu); hugepages-<size> is a native one.
    return "/" in key or key.startswith("hugepages-")


def exact_counts(weights: Sequence[float], total: int) -> list[int]:
    """Split ``total`` in proportion to ``weights`` (largest remainder; ties to the first)."""
    w = np.asarray(weights, dtype=float)
    quotas = w / w.sum() * total
    counts = np.floor(quotas).astype(np.int64)
    short = total - int(counts.sum())
    if short:
        order = np.argsort(-(quotas - counts), kind="stable")
        counts[order[:short]] += 1
    return counts.tolist()


# --------------------------------------------------------------------------------------------
# spec dataclasses
# --------------------------------------------------------------------------------------------
@dataclass
class NodeShape:
    """One kind of node: allocatable (== capacity) plus labels and taints of its own.

    ``extended`` holds other resources (``{"nvidia.com/gpu": 4, "hugepages-2Mi": "1Gi"}``).
    ``weight`` is its share of the nodes (weights are normalized; ``fraction`` is an alias).
    """

    cpu: Any = "4"
    memory: Any = "32Gi"
    pods: int = 110
    ephemeral_storage: Any = None
    extended: dict[str, Any] = field(default_factory=dict)
    weight: float = 1.0
    name: str = ""
    labels: dict[str, str] = field(default_factory=dict)
    taints: list["TaintSpec"] = field(default_factory=list)

    def allocatable(self, path: str = "shape") -> dict[str, int]:
        """Integer amounts by resource name (SpecError naming ``path`` on a bad quantity)."""
        out = {"cpu": amount("cpu", self.cpu, child(path, "cpu")),
               "memory": amount("memory", self.memory, child(path, "memory")),
               "pods": amount("pods", self.pods, child(path, "pods"))}
        if self.ephemeral_storage is not None:
            out["ephemeral-storage"] = amount("ephemeral-storage", self.ephemeral_storage,
                                              child(path, "ephemeral-storage"))
        for name, value in self.extended.items():
            out[name] = amount(name, value, child(path, name))
        return out

    @classmethod
    def from_dict(cls, raw: Any, path: str = "shape") -> "NodeShape":
        if isinstance(raw, NodeShape):
            return raw
        f = Fields(raw, path, ("cpu", "memory", "pods", "ephemeral_storage", "extended", "weight",
                               "fraction", "name", "labels", "taints"), extra=_is_resource_key)
        if "weight" in f and "fraction" in f:
            raise SpecError(f.at("fraction"), "give weight or fraction, not both")
        weight = f.number("weight", None, minimum=0) if "weight" in f else f.number("fraction", 1.0, minimum=0)
        extended = {}
        if "extended" in f:
            extended.update(check_string_map(f.get("extended"), f.at("extended")))
        extended.update(f.extras)
        shape = cls(cpu=f.get("cpu", "4"), memory=f.get("memory", "32Gi"), pods=f.get("pods", 110),
                    ephemeral_storage=f.get("ephemeral_storage"), extended=extended, weight=weight,
                    name=f.string("name", ""), labels=f.label_map("labels"),
                    taints=[TaintSpec.from_dict(t, child(f.at("taints"), i), default_fraction=1.0)
                            for i, t in enumerate(f.list("taints"))])
        shape.allocatable(path)  # validate quantities now, with their paths
        return shape


@dataclass
class LabelSpec:
    """A label put on ``fraction`` of the objects, its value drawn from ``values``
    (uniformly, or with ``probabilities``)."""

    key: str
    values: list[str]
    probabilities: list[float] | None = None
    fraction: float = 1.0

    @classmethod
    def from_dict(cls, key: str, raw: Any, path: str) -> "LabelSpec":
        if isinstance(raw, LabelSpec):
            return raw
        if isinstance(raw, (str, int, float)) and not isinstance(raw, bool):
            return cls(key, [str(raw)])
        if isinstance(raw, (list, tuple)):
            values, probabilities, fraction = raw, None, 1.0
            vpath = path
        else:
            f = Fields(raw, path, ("values", "probabilities", "weights", "fraction"))
            if "values" not in f:
                raise SpecError(f.at("values"), "required")
            values, vpath = f.get("values"), f.at("values")
            if not isinstance(values, (list, tuple)):
                raise SpecError(vpath, f"must be a list, got {type_name(values)}")
            probabilities = f.get("probabilities", f.get("weights"))
            fraction = f.number("fraction", 1.0, minimum=0, maximum=1)
            if probabilities is not None:
                ppath = f.at("probabilities" if "probabilities" in f else "weights")
                if not isinstance(probabilities, (list, tuple)) or len(probabilities) != len(values):
                    raise SpecError(ppath, f"must be a list of {len(values)} numbers (one per value)")
                probabilities = [check_number(p, child(ppath, i), minimum=0) for i, p in enumerate(probabilities)]
                if sum(probabilities) <= 0:
                    raise SpecError(ppath, "must not all be zero")
        if not values:
            raise SpecError(vpath, "must not be empty")
        for i, v in enumerate(values):
            if isinstance(v, bool) or not isinstance(v, (str, int, float)):
                raise SpecError(child(vpath, i), f"must be a string, got {type_name(v)}")
        return cls(key, [str(v) for v in values], probabilities, fraction)

    def draw(self, rng: np.random.Generator, n: int) -> np.ndarray:
        """Per object: the index of its value, or -1 where the label is absent."""
        if len(self.values) == 1:
            idx = np.zeros(n, dtype=np.int64)
        else:
            p = None
            if self.probabilities is not None:
                p = np.asarray(self.probabilities, dtype=float)
                p = p / p.sum()
            idx = rng.choice(len(self.values), size=n, p=p)
        if self.fraction < 1.0:
            idx = np.where(exact_mask(rng, n, self.fraction), idx, -1)
        return idx


def exact_mask(rng: np.random.Generator, n: int, fraction: float) -> np.ndarray:
    """A boolean mask with exactly round(fraction * n) True entries at random positions."""
    mask = np.zeros(n, dtype=bool)
    k = int(round(fraction * n))
    if k >= n:
        mask[:] = True
    elif k > 0:
        mask[rng.choice(n, size=k, replace=False)] = True
    return mask


def labels_from_dict(raw: Any, path: str) -> list[LabelSpec]:
    if raw is None:
        return []
    if isinstance(raw, (list, tuple)) and all(isinstance(x, LabelSpec) for x in raw):
        return list(raw)
    if not isinstance(raw, Mapping):
        raise SpecError(path, f"must be a mapping of label key to values, got {type_name(raw)}")
    out = []
    for k, v in raw.items():
        if not isinstance(k, str):
            raise SpecError(path, f"keys must be strings, got {k!r}")
        spec = LabelSpec.from_dict(k, v, child(path, k))
        # checked as the API server checks labels, here at the spec's path (not the generated object's)
        check_label_key(k, child(path, k))
        many = not isinstance(v, (str, int, float)) or isinstance(v, bool)
        values_path = child(path, k) if isinstance(v, (list, tuple)) else child(child(path, k), "values")
        for i, value in enumerate(spec.values):
            check_label_value(value, child(values_path, i) if many else child(path, k))
        out.append(spec)
    return out


@dataclass
class TaintSpec:
    key: str
    value: str = ""
    effect: str = "NoSchedule"
    fraction: float = 1.0

    def taint(self) -> Taint:
        return Taint(key=self.key, value=self.value, effect=self.effect)

    @classmethod
    def from_dict(cls, raw: Any, path: str, default_fraction: float = 1.0) -> "TaintSpec":
        if isinstance(raw, TaintSpec):
            return raw
        f = Fields(raw, path, ("key", "value", "effect", "fraction"))
        if "key" not in f:
            raise SpecError(f.at("key"), "required")
        value = f.get("value", "")
        if isinstance(value, bool) or not isinstance(value, (str, int, float)):
            raise SpecError(f.at("value"), f"must be a string, got {type_name(value)}")
        check_label_key(f.string("key"), f.at("key"))
        if value != "":
            check_label_value(str(value), f.at("value"))  # (a taint's value is checked as a label's)
        return cls(key=f.string("key"), value=str(value),
                   effect=f.string("effect", "NoSchedule", choices=_TAINT_EFFECTS),
                   fraction=f.number("fraction", default_fraction, minimum=0, maximum=1))


@dataclass
class ImageSpec:
    name: str
    size_bytes: int = 0
    weight: float = 1.0

    @classmethod
    def from_dict(cls, raw: Any, path: str) -> "ImageSpec":
        if isinstance(raw, ImageSpec):
            return raw
        if isinstance(raw, str):
            return cls(raw)
        f = Fields(raw, path, ("name", "size", "size_bytes", "weight"))
        if "name" not in f:
            raise SpecError(f.at("name"), "required")
        size = f.get("size", f.get("size_bytes", 0))
        size_path = f.at("size" if "size" in f else "size_bytes")
        return cls(f.string("name"), amount("memory", size, size_path), f.number("weight", 1.0, above=0))


@dataclass
class PodShape:
    """Requests (and optional scheduling constraints) of a kind of running pod."""

    cpu: Any = "100m"
    memory: Any = "500Mi"
    extended: dict[str, Any] = field(default_factory=dict)
    weight: float = 1.0
    labels: dict[str, str] = field(default_factory=dict)
    priority: int | None = None
    tolerations: list[dict] = field(default_factory=list)
    node_selector: dict[str, str] | None = None
    image: str = "registry.k8s.io/pause:3.10.1"

    def requests(self, path: str = "shape") -> dict[str, int]:
        out = {}
        if self.cpu is not None:
            out["cpu"] = amount("cpu", self.cpu, child(path, "cpu"))
        if self.memory is not None:
            out["memory"] = amount("memory", self.memory, child(path, "memory"))
        for name, value in self.extended.items():
            out[name] = amount(name, value, child(path, name))
        return out

    def manifest(self, path: str = "shape") -> dict:
        reqs = {}
        if self.cpu is not None:
            reqs["cpu"] = str(self.cpu)
        if self.memory is not None:
            reqs["memory"] = str(self.memory)
        reqs.update({k: str(v) for k, v in self.extended.items()})
        self.requests(path)  # validates with paths
        spec: dict = {"containers": [{"name": "main", "image": self.image,
                                      "resources": {"requests": reqs} if reqs else {}}]}
        if self.priority is not None:
            spec["priority"] = self.priority
        if self.tolerations:
            spec["tolerations"] = list(self.tolerations)
        if self.node_selector is not None:
            spec["nodeSelector"] = dict(self.node_selector)
        return {"apiVersion": "v1", "kind": "Pod",
                "metadata": {"name": "template", "labels": dict(self.labels)}, "spec": spec}

    @classmethod
    def from_dict(cls, raw: Any, path: str = "shape") -> "PodShape":
        if isinstance(raw, PodShape):
            return raw
        f = Fields(raw, path, ("cpu", "memory", "extended", "weight", "fraction", "labels", "priority",
                               "tolerations", "node_selector", "image"), extra=_is_resource_key)
        extended = {}
        if "extended" in f:
            extended.update(check_string_map(f.get("extended"), f.at("extended")))
        extended.update(f.extras)
        weight = f.number("weight", None, minimum=0) if "weight" in f else f.number("fraction", 1.0, minimum=0)
        shape = cls(cpu=f.get("cpu"), memory=f.get("memory"), extended=extended, weight=weight,
                    labels=f.label_map("labels"), priority=f.number("priority", None, integer=True),
                    tolerations=f.list("tolerations"),
                    node_selector=f.label_map("node_selector") if "node_selector" in f else None,
                    image=f.string("image", "registry.k8s.io/pause:3.10.1"))
        if "cpu" not in f and "memory" not in f and not extended:
            shape.cpu, shape.memory = "100m", "500Mi"
        shape.requests(path)
        return shape


@dataclass
class RunningPodsSpec:
    """Pods already running when the simulation starts (bound to nodes, phase Running)."""

    count: int = 0
    shapes: list[PodShape] = field(default_factory=lambda: [PodShape()])
    labels: list[LabelSpec] = field(default_factory=list)
    namespaces: list[str] = field(default_factory=lambda: ["default"])
    placement: str = "random"
    respect_capacity: bool = True
    on_unplaceable: str = "error"
    name_prefix: str = "running-"

    @classmethod
    def from_dict(cls, raw: Any, path: str = "pods") -> "RunningPodsSpec":
        if isinstance(raw, RunningPodsSpec):
            return raw
        raw = yaml_number(raw)
        if isinstance(raw, (int, float)) and not isinstance(raw, bool):
            return cls(count=check_number(raw, path, minimum=0, maximum=MAX_GENERATED, integer=True))
        f = Fields(raw, path, ("count", "shapes", "labels", "namespaces", "placement", "respect_capacity",
                               "on_unplaceable", "name_prefix"))
        shapes = [PodShape.from_dict(s, child(f.at("shapes"), i)) for i, s in enumerate(f.list("shapes"))]
        if "shapes" in f and not shapes:
            raise SpecError(f.at("shapes"), "must not be empty")
        if shapes and sum(s.weight for s in shapes) <= 0:
            raise SpecError(f.at("shapes"), "weights must not all be zero")
        namespaces = f.list("namespaces") or ["default"]
        for i, ns in enumerate(namespaces):
            if not isinstance(ns, str) or not ns:
                raise SpecError(child(f.at("namespaces"), i), "must be a non-empty string")
        return cls(count=f.number("count", 0, minimum=0, maximum=MAX_GENERATED, integer=True),
                   shapes=shapes or [PodShape()],
                   labels=labels_from_dict(f.get("labels"), f.at("labels")), namespaces=namespaces,
                   placement=f.string("placement", "random", choices=("random", "round-robin")),
                   respect_capacity=f.boolean("respect_capacity", True),
                   on_unplaceable=f.string("on_unplaceable", "error", choices=("error", "skip")),
                   name_prefix=f.string("name_prefix", "running-"))


@dataclass
class ClusterSpec:
    """A synthetic cluster (see the module docstring for the dict form)."""

    nodes: int = 100
    shapes: list[NodeShape] = field(default_factory=lambda: [NodeShape()])
    regions: list[str] = field(default_factory=list)
    zones: list[str] = field(default_factory=list)
    zone_assignment: str = "round-robin"
    labels: list[LabelSpec] = field(default_factory=list)
    taints: list[TaintSpec] = field(default_factory=list)
    unschedulable_fraction: float = 0.0
    images: list[ImageSpec] = field(default_factory=list)
    images_per_node: int = 0
    pods: RunningPodsSpec = field(default_factory=RunningPodsSpec)
    name_prefix: str = "node-"
    seed: int = 0

    MAX_NODES = 1_000_000

    def __post_init__(self) -> None:
        # Accept plain dicts / counts in code too.
        if isinstance(self.regions, int):
            self.regions = [f"region-{i + 1}" for i in range(self.regions)]
        if isinstance(self.zones, int):
            self.zones = [f"zone-{i + 1}" for i in range(self.zones)]
        self.shapes = [NodeShape.from_dict(s, f"shapes[{i}]") for i, s in enumerate(self.shapes)]
        if isinstance(self.labels, Mapping):
            self.labels = labels_from_dict(self.labels, "labels")
        self.taints = [TaintSpec.from_dict(t, f"taints[{i}]") for i, t in enumerate(self.taints)]
        self.images = [ImageSpec.from_dict(m, f"images[{i}]") for i, m in enumerate(self.images)]
        if not isinstance(self.pods, RunningPodsSpec):
            self.pods = RunningPodsSpec.from_dict(self.pods, "pods")

    @classmethod
    def from_dict(cls, raw: Any, path: str = "cluster") -> "ClusterSpec":
        """Read the dict / YAML form; SpecError names the offending field under ``path``."""
        if isinstance(raw, ClusterSpec):
            return raw
        f = Fields(raw, path, ("nodes", "shapes", "regions", "zones", "zone_assignment", "labels", "taints",
                               "unschedulable_fraction", "images", "images_per_node", "pods", "name_prefix",
                               "seed"))
        nodes = f.number("nodes", 100, minimum=0, maximum=cls.MAX_NODES, integer=True)
        shapes = [NodeShape.from_dict(s, child(f.at("shapes"), i)) for i, s in enumerate(f.list("shapes"))]
        if "shapes" in f and not shapes:
            raise SpecError(f.at("shapes"), "must not be empty")
        if shapes and sum(s.weight for s in shapes) <= 0:
            raise SpecError(f.at("shapes"), "weights must not all be zero")
        regions = _names(f, "regions", "region")
        zones = _names(f, "zones", "zone")
        if regions and not zones:
            raise SpecError(f.at("zones"), "required when regions are given (zone j is in region j % regions)")
        images_raw = f.get("images")
        images: list[ImageSpec] = []
        per_node = 0
        if images_raw is not None:
            if isinstance(images_raw, Mapping):
                g = Fields(images_raw, f.at("images"), ("pool", "per_node"))
                pool = g.list("pool")
                images = [ImageSpec.from_dict(m, child(g.at("pool"), i)) for i, m in enumerate(pool)]
                per_node = g.number("per_node", min(3, len(images)), minimum=0, maximum=len(images), integer=True)
            else:
                images = [ImageSpec.from_dict(m, child(f.at("images"), i))
                          for i, m in enumerate(f.list("images"))]
                per_node = min(3, len(images))
        if "images_per_node" in f:
            per_node = f.number("images_per_node", 0, minimum=0, maximum=len(images), integer=True)
        seed = f.number("seed", 0, minimum=0, integer=True)
        return cls(nodes=nodes, shapes=shapes or [NodeShape()], regions=regions, zones=zones,
                   zone_assignment=f.string("zone_assignment", "round-robin", choices=("round-robin", "random")),
                   labels=labels_from_dict(f.get("labels"), f.at("labels")),
                   taints=[TaintSpec.from_dict(t, child(f.at("taints"), i)) for i, t in enumerate(f.list("taints"))],
                   unschedulable_fraction=f.number("unschedulable_fraction", 0.0, minimum=0, maximum=1),
                   images=images, images_per_node=per_node,
                   pods=RunningPodsSpec.from_dict(f.get("pods", {}), f.at("pods")),
                   name_prefix=f.string("name_prefix", "node-"), seed=seed)

    @classmethod
    def upstream(cls, nodes: int, zones: Sequence[str] = (), seed: int = 0) -> "ClusterSpec":
        """scheduler_perf's default nodes (4 cpu, 32Gi, 110 pods), zones given round-robin."""
        return cls(nodes=nodes, shapes=[NodeShape()], zones=list(zones), name_prefix=UPSTREAM_NODE_NAME_PREFIX,
                   seed=seed)


#: most zones or regions a cluster spec may count (as many as nodes fastsched is benchmarked with)
_MAX_DOMAINS = 1_000_000



def _names(f: Fields, name: str, singular: str) -> list[str]:
    if name not in f:
        return []
    value = yaml_number(f.get(name))
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        # (a count far beyond any cluster, 2**63, would build its names for ever)
        count = check_number(value, f.at(name), minimum=1, maximum=_MAX_DOMAINS, integer=True)
        return [f"{singular}-{i + 1}" for i in range(count)]
    if not isinstance(value, (list, tuple)) or not value:
        raise SpecError(f.at(name), f"must be a count or a non-empty list of names, got {type_name(value)}")
    out = []
    for i, v in enumerate(value):
        if not isinstance(v, str) or not v:
            raise SpecError(child(f.at(name), i), "must be a non-empty string")
        out.append(v)
    if len(set(out)) != len(out):
        raise SpecError(f.at(name), "names must be distinct")
    return out


# --------------------------------------------------------------------------------------------
# nodes
# --------------------------------------------------------------------------------------------
def _rng(seed: int, stream: int) -> np.random.Generator:
    # Independent streams per purpose, so that e.g. adding running pods leaves the nodes unchanged.
    return np.random.default_rng([int(seed), stream])


def node_names(prefix: str, start: int, count: int, total: int | None = None) -> list[str]:
    """Names ``start`` to ``start + count - 1``, zero-padded to the width of a cluster of ``total``
    nodes (default ``start + count``): a cluster built a chunk at a time gets the names it would get
    built at once."""
    last = (start + count if total is None else max(total, start + count)) - 1
    width = max(5, len(str(max(last, 0))))
    return [f"{prefix}{i:0{width}d}" for i in range(start, start + count)]


def generate_nodes(spec: ClusterSpec, count: int | None = None, *, start: int = 0,
                   shapes: Sequence[NodeShape] | None = None, rng: np.random.Generator | None = None,
                   name_prefix: str | None = None) -> list[Node]:
    """``count`` nodes (default ``spec.nodes``) of ``spec``, named from index ``start``.

    ``shapes`` overrides the spec's shape mix (used for nodes added during a scenario); ``rng``
    overrides the spec's seeded stream.
    """
    n = spec.nodes if count is None else int(count)
    if n < 0 or n > ClusterSpec.MAX_NODES:
        raise SpecError("nodes", f"must be between 0 and {ClusterSpec.MAX_NODES}, got {n}")
    if n == 0:
        return []
    rng = _rng(spec.seed, 0) if rng is None else rng
    shapes = list(spec.shapes if shapes is None else shapes)
    prefix = spec.name_prefix if name_prefix is None else name_prefix

    # shapes: exact proportions, shuffled
    counts = exact_counts([s.weight for s in shapes], n)
    shape_idx = rng.permutation(np.repeat(np.arange(len(shapes)), counts))
    allocs = [FrozenDict(s.allocatable(f"shapes[{i}]")) for i, s in enumerate(shapes)]

    # zones (and their regions)
    zones, regions = spec.zones, spec.regions
    if zones:
        if spec.zone_assignment == "random":
            zone_idx = rng.integers(0, len(zones), size=n)
        else:
            zone_idx = (np.arange(start, start + n) % len(zones))
        zone_list = zone_idx.tolist()
    else:
        zone_list = [0] * n
    base_labels: dict[tuple[int, int], dict[str, str]] = {}
    for s, shape in enumerate(shapes):
        for z in range(max(1, len(zones))):
            labels = dict(shape.labels)
            if zones:
                labels[LABEL_ZONE] = zones[z]
                if regions:
                    labels[LABEL_REGION] = regions[z % len(regions)]
            base_labels[(s, z)] = labels

    label_cols = [(ls.key, ls.values, ls.draw(rng, n).tolist()) for ls in spec.labels]

    # taints: a bit per cluster-level taint, on an exact fraction of the nodes
    taint_bits = np.zeros(n, dtype=np.int64)
    for b, ts in enumerate(spec.taints):
        taint_bits |= exact_mask(rng, n, ts.fraction).astype(np.int64) << b
    taint_list = taint_bits.tolist()
    shape_taints = [tuple(t.taint() for t in s.taints) for s in shapes]
    cluster_taints = [t.taint() for t in spec.taints]
    taint_cache: dict[tuple[int, int], tuple[Taint, ...]] = {}

    unschedulable = exact_mask(rng, n, spec.unschedulable_fraction).tolist() if spec.unschedulable_fraction else None

    # images: k distinct images per node, weighted sampling without replacement
    # (Efraimidis-Spirakis keys u**(1/w), largest k), in chunks to bound memory.
    image_rows: list | None = None
    k = spec.images_per_node
    if spec.images and k > 0:
        objs = [ContainerImage(names=(im.name,), size_bytes=im.size_bytes) for im in spec.images]
        inv_w = 1.0 / np.asarray([im.weight for im in spec.images], dtype=float)
        image_rows = []
        cache: dict[tuple, tuple[ContainerImage, ...]] = {}
        for lo in range(0, n, 65536):
            m = min(65536, n - lo)
            keys = rng.random((m, len(objs))) ** inv_w
            top = np.sort(np.argpartition(-keys, k - 1, axis=1)[:, :k], axis=1) if k < len(objs) \
                else np.broadcast_to(np.arange(len(objs)), (m, len(objs)))
            for row in map(tuple, top.tolist()):
                t = cache.get(row)
                if t is None:
                    t = cache[row] = tuple(objs[j] for j in row)
                image_rows.append(t)

    names = node_names(prefix, start, n)
    shape_list = shape_idx.tolist()
    nodes: list[Node] = []
    append = nodes.append
    validated: set[tuple] = set()
    collector_was_enabled = gc.isenabled()
    gc.disable()  # nothing built here is cyclic; the collector's passes would dominate the cost
    try:
        for i in range(n):
            name = names[i]
            s = shape_list[i]
            labels = base_labels[(s, zone_list[i])].copy()
            labels[LABEL_HOSTNAME] = name
            for key, values, col in label_cols:
                v = col[i]
                if v >= 0:
                    labels[key] = values[v]
            bits = taint_list[i]
            taints = taint_cache.get((s, bits))
            if taints is None:
                taints = taint_cache[(s, bits)] = shape_taints[s] + tuple(
                    t for b, t in enumerate(cluster_taints) if bits >> b & 1)
            alloc = allocs[s]
            node = Node(name=name, labels=FrozenDict(labels), allocatable=alloc, capacity=alloc, taints=taints,
                        unschedulable=unschedulable[i] if unschedulable is not None else False,
                        images=image_rows[i] if image_rows is not None else ())
            # the API server's validation, once per combination of what the spec decides (shape,
            # zone, taints, label values); names and the rest are the generator's own making
            combination = (s, zone_list[i], bits, tuple(col[i] for _, _, col in label_cols))
            if combination not in validated:
                raise_if_invalid(node)
                validated.add(combination)
            node.admitted = True
            append(node)
    finally:
        if collector_was_enabled:
            gc.enable()
    return nodes


def upstream_node(name: str, *, labels: Mapping[str, str] | None = None, pods: int = 110, cpu: str = "4",
                  memory: str = "32Gi") -> Node:
    """A node as scheduler_perf creates it from ``templates/node-default.yaml`` (allocatable ==
    capacity: pods 110, cpu 4, memory 32Gi) with ``kubernetes.io/hostname`` = name."""
    alloc = FrozenDict({"pods": pods, "cpu": amount("cpu", cpu, "cpu"), "memory": amount("memory", memory, "memory")})
    return Node(name=name, labels=FrozenDict({**(labels or {}), LABEL_HOSTNAME: name}),
                allocatable=alloc, capacity=alloc)


def upstream_nodes(count: int, *, prefix: str = UPSTREAM_NODE_NAME_PREFIX, label_key: str | None = None,
                   label_values: Sequence[str] = (), start: int = 0, total: int | None = None) -> list[Node]:
    """``count`` default scheduler_perf nodes; with ``label_key``, its values are given round-robin
    like scheduler_perf's ``labelNodePrepareStrategy``. ``start`` / ``total``: nodes ``start`` to
    ``start + count - 1`` of a cluster of ``total``, named as ``upstream_nodes(total)`` names them
    (to build a large cluster a chunk at a time)."""
    names = node_names(prefix, start, count, total)
    out = []
    collector_was_enabled = gc.isenabled()
    gc.disable()
    try:
        for i, name in enumerate(names):
            labels = {LABEL_HOSTNAME: name}
            if label_key:
                labels[label_key] = label_values[(start + i) % len(label_values)]
            node = Node(name=name, labels=FrozenDict(labels), allocatable=UPSTREAM_NODE_ALLOCATABLE,
                        capacity=UPSTREAM_NODE_ALLOCATABLE)
            if i == 0 or (label_key and i < len(label_values)):  # each of the caller's label values once
                raise_if_invalid(node)
            node.admitted = True
            out.append(node)
    finally:
        if collector_was_enabled:
            gc.enable()
    return out


# --------------------------------------------------------------------------------------------
# pods
# --------------------------------------------------------------------------------------------
_POD_COPIED_FIELDS = tuple(f.name for f in dataclasses.fields(Pod)  # admitted is not an init field
                           if f.init and f.name not in ("name", "namespace", "uid", "labels", "manifest",
                                                        "node_name", "annotations"))


_copy_pod = _field_copier(Pod)

#: the fields :meth:`PodFactory._copy` sets itself (every other one is the template's)
_STAMPED_FIELDS = ("name", "namespace", "uid", "labels", "node_name", "manifest", "admitted", "decoded_under",
                   "_requests", "_non_zero_requests", "_scoring_requests")


def _make_pod_stamper() -> Any:
    """``stamp(t, name, namespace, uid, labels, node_name)``: :func:`_copy_pod` of ``t`` followed
    by the assignments of :meth:`PodFactory._copy`, as one straight-line function that writes each
    field once (the copy wrote the eleven stamped fields only to have them overwritten: a fifth of
    the factory's per-pod cost, with its call overhead)."""
    names = _stored_fields(Pod)
    if not set(_STAMPED_FIELDS) <= set(names):  # pragma: no cover - a renamed Pod field
        raise TypeError("Pod lacks a stamped field")
    lines = ["def stamp(t, name, namespace, uid, labels, node_name):", "    pod = new(cls)"]
    lines += [f"    pod.{n} = t.{n}" for n in names if n not in _STAMPED_FIELDS]
    lines += ["    pod.name = name", "    pod.namespace = namespace", "    pod.uid = uid", "    pod.labels = labels",
              "    pod.node_name = node_name", "    pod.manifest = EMPTY_MAP", "    pod.admitted = t.admitted",
              "    pod.decoded_under = None",
              "    pod._requests, pod._non_zero_requests, pod._scoring_requests = "
              "t.requests, t.non_zero_requests, t.scoring_requests",
              "    return pod"]
    namespace: dict[str, Any] = {"new": object.__new__, "cls": Pod, "EMPTY_MAP": EMPTY_MAP}
    exec("\n".join(lines), namespace)  # noqa: S102 - the source is built from field names only
    return namespace["stamp"]


_stamp_pod = _make_pod_stamper()

#: the Pod fields its request totals (requests, non_zero_requests, scoring_requests) are computed from
_REQUEST_FIELDS = frozenset({"containers", "init_containers", "overhead", "exact_overhead_nanos", "resources",
                             "node_allocatable_claim_nanos"})


class PodFactory:
    """Stamps out pods from a template Pod (parsed once from a manifest), fast: the per-pod work
    is one constructor call. Generated pods have an empty ``manifest``; they are admitted as their
    validated template was (only names, namespaces, labels and node names differ, all of the
    generator's making)."""

    def __init__(self, template: Pod):
        self.template = template
        self._base = {name: getattr(template, name) for name in _POD_COPIED_FIELDS}
        self._base["exact_overhead_nanos"] = template.overhead_nanos
        self._base["annotations"] = template.annotations
        #: whether ``make`` without overrides may copy the template field for field instead of
        #: calling the constructor (False for :meth:`with_fields` clones: their extra fields go
        #: through ``__init__``)
        self._copyable = type(template) is Pod

    @classmethod
    def from_manifest(cls, manifest: Any, path: str = "template") -> "PodFactory":
        try:
            return cls(Pod.from_manifest(manifest))
        except ManifestError as exc:
            raise SpecError(path, str(exc)) from None

    def with_fields(self, **fields: Any):
        """A ``make`` whose pods also get ``fields`` (e.g. ``phase="Running"``)."""
        clone = PodFactory.__new__(PodFactory)
        clone.template = self.template
        clone._base = {**self._base, **fields}
        clone._copyable = False
        return clone.make

    def make(self, name: str, namespace: str | None = None, *, labels: Mapping[str, str] | None = None,
             node_name: str = "", **overrides: Any) -> Pod:
        if self._copyable and not overrides:
            return self._copy(name, namespace, labels, node_name)
        kwargs = self._base if not overrides else {**self._base, **overrides}
        pod = Pod(name=name, namespace=namespace or self.template.namespace,
                  labels=self.template.labels if labels is None else labels, node_name=node_name, **kwargs)
        pod.admitted = self.template.admitted
        if not overrides or overrides.keys().isdisjoint(_REQUEST_FIELDS):
            # the request totals are the template's: they read only the fields shared with it
            t = self.template
            pod._requests, pod._non_zero_requests, pod._scoring_requests = \
                t.requests, t.non_zero_requests, t.scoring_requests
        return pod

    def _copy(self, name: str, namespace: str | None, labels: Mapping[str, str] | None, node_name: str) -> Pod:
        """``make`` without overrides as a field copy of the template (the pattern of
        :meth:`Pod.stamped`): the constructor's result, field for field, at about a third of its
        cost (``Pod.__init__`` and ``__post_init__`` over every field were most of creating a
        scheduler_perf pod). What the constructor would make differently from the template's
        fields is set here: the identity (name, namespace, the deterministic uid of the new name,
        as ``__post_init__`` makes it), the labels (read-only), the node name, an empty manifest,
        and what ``make`` gives the constructed pod (admitted and the request totals; the overhead
        in nano-units is the template's, cached by ``__init__``, as the constructor is given it).
        Every other field is the template's own object, as the constructor's
        keyword arguments from ``_base`` are, and ``__post_init__``'s read-only wrapping leaves
        them as they are (the template's went through it)."""
        t = self.template
        ns = namespace or t.namespace
        # (decoded_under None: no manifest of its own, as a constructed pod; see _make_pod_stamper)
        return _stamp_pod(t, name, ns, deterministic_uid(Pod.KIND, ns, name) if name else "",
                          t.labels if labels is None else _read_only(labels), node_name)


def _selector_matches(selector: Mapping[str, str] | None, labels: Mapping[str, str]) -> bool:
    if not selector:
        return True
    for k, v in selector.items():
        if labels.get(k) != v:
            return False
    return True


def _tolerates_node(pod: Pod, node: Node) -> bool:
    for taint in node.taints:
        if taint.effect in _NO_SCHEDULE_EFFECTS and not any(t.tolerates(taint) for t in pod.tolerations):
            return False
    return True


def generate_running_pods(spec: RunningPodsSpec, nodes: Sequence[Node], *, seed: int = 0,
                          rng: np.random.Generator | None = None, path: str = "pods") -> list[Pod]:
    """Running pods bound to ``nodes`` (which may come from manifests as well as the generator).

    With ``respect_capacity`` a pod only goes where its requests fit next to the pods already
    placed (cpu, memory, pod count, extended resources), where its NoSchedule/NoExecute taints
    are tolerated, its nodeSelector matches and the node is not cordoned: up to 8 random tries,
    then a scan. ``on_unplaceable: error`` raises SpecError when some pod fits nowhere; ``skip``
    leaves it out. Without ``respect_capacity`` pods are spread without any check.
    """
    collector_was_enabled = gc.isenabled()
    gc.disable()  # the bookkeeping lists and the pods hold no cycles
    try:
        return _generate_running_pods(spec, nodes, seed, rng, path)
    finally:
        if collector_was_enabled:
            gc.enable()


def _generate_running_pods(spec: RunningPodsSpec, nodes: Sequence[Node], seed: int,
                           rng: np.random.Generator | None, path: str) -> list[Pod]:
    count = spec.count
    if count == 0:
        return []
    if not nodes:
        raise SpecError(child(path, "count"), f"{count} running pods requested but the cluster has no nodes")
    rng = _rng(seed, 1) if rng is None else rng
    factories = [PodFactory.from_manifest(s.manifest(child(child(path, "shapes"), i)), child(child(path, "shapes"), i))
                 for i, s in enumerate(spec.shapes)]
    counts = exact_counts([s.weight for s in spec.shapes], count)
    shape_of = rng.permutation(np.repeat(np.arange(len(spec.shapes)), counts)).tolist()
    ns_of = rng.integers(0, len(spec.namespaces), size=count).tolist() if len(spec.namespaces) > 1 else None
    label_cols = [(ls.key, ls.values, ls.draw(rng, count).tolist()) for ls in spec.labels]

    # eligible node indices per shape (taints cached by identity: generated nodes share tuples)
    eligible: list[list[int]] = []
    for f in factories:
        pod = f.template
        tol_cache: dict[int, bool] = {}
        idx = []
        for i, node in enumerate(nodes):
            if node.unschedulable:
                continue
            if node.taints:
                key = id(node.taints)
                ok = tol_cache.get(key)
                if ok is None:
                    ok = tol_cache[key] = _tolerates_node(pod, node)
                if not ok:
                    continue
            if pod.node_selector and not _selector_matches(pod.node_selector, node.labels):
                continue
            idx.append(i)
        eligible.append(idx)

    assigned = [-1] * count
    if spec.respect_capacity:
        resources = sorted({r for f in factories for r in f.template.requests} | {"pods"})
        free = {r: [node.allocatable.get(r, 0) for node in nodes] for r in resources}
        reqs = []
        for f in factories:
            r = dict(f.template.requests)
            r["pods"] = 1
            reqs.append([(free[name], amt) for name, amt in r.items() if amt > 0])
        rr = [0] * len(factories)
        attempts = 8
        chunk = 65536
        draws: list = []
        for j in range(count):
            if j % chunk == 0:
                draws = rng.random((min(chunk, count - j), attempts)).tolist()
            s = shape_of[j]
            elig = eligible[s]
            m = len(elig)
            if m == 0:
                continue
            req = reqs[s]
            chosen = -1
            if spec.placement == "random":
                for u in draws[j % chunk]:
                    i = elig[int(u * m)]
                    for lst, amt in req:
                        if lst[i] < amt:
                            break
                    else:
                        chosen = i
                        break
                begin = int(draws[j % chunk][0] * m)
            else:
                begin = rr[s] % m
                rr[s] += 1
            if chosen < 0:
                for step in range(m):
                    i = elig[(begin + step) % m]
                    for lst, amt in req:
                        if lst[i] < amt:
                            break
                    else:
                        chosen = i
                        break
            if chosen >= 0:
                for lst, amt in req:
                    lst[chosen] -= amt
                assigned[j] = chosen
    else:
        rr = [0] * len(factories)
        u = rng.random(count).tolist()
        for j in range(count):
            s = shape_of[j]
            elig = eligible[s]
            if not elig:
                continue
            if spec.placement == "random":
                assigned[j] = elig[int(u[j] * len(elig))]
            else:
                assigned[j] = elig[rr[s] % len(elig)]
                rr[s] += 1

    missing = assigned.count(-1)
    if missing and spec.on_unplaceable == "error":
        raise SpecError(child(path, "count"),
                        f"{missing} of {count} running pods fit on no node (capacity, taints, nodeSelector or "
                        "cordoned nodes); lower the count, or set on_unplaceable: skip")

    names = node_names(spec.name_prefix, 0, count)
    pods: list[Pod] = []
    append = pods.append
    makers = [(f.template.labels, f.with_fields(phase="Running")) for f in factories]
    for j in range(count):
        i = assigned[j]
        if i < 0:
            continue
        base_labels, make = makers[shape_of[j]]
        if label_cols:
            labels = dict(base_labels)
            for label_key, values, col in label_cols:
                v = col[j]
                if v >= 0:
                    labels[label_key] = values[v]
            labels = FrozenDict(labels)
        else:
            labels = None
        ns = spec.namespaces[ns_of[j]] if ns_of is not None else spec.namespaces[0]
        append(make(names[j], ns, labels=labels, node_name=nodes[i].name))
    return pods


def generate_cluster(spec: ClusterSpec | Mapping[str, Any]) -> tuple[list[Node], list[Pod]]:
    """The nodes and running pods of ``spec`` (a ClusterSpec or its dict form); deterministic in
    ``spec.seed``."""
    if not isinstance(spec, ClusterSpec):
        spec = ClusterSpec.from_dict(spec)
    nodes = generate_nodes(spec)
    pods = generate_running_pods(spec.pods, nodes, seed=spec.seed)
    return nodes, pods
