"""Simulation scenarios: a cluster, a scheduler configuration, pod arrivals and node events.

A scenario is a YAML (or JSON) document, a dict, or a path to such a file::

    name: my-scenario
    seed: 1                       # every random draw derives from it
    until: 900                    # virtual seconds; arrivals and events after it are dropped
    config: {apiVersion: kubescheduler.config.k8s.io/v1, kind: KubeSchedulerConfiguration, ...}
                                  # or a path; absent = the default configuration
    cluster:                      # a ClusterSpec (see fastsched.sim.generators) ...
      nodes: 3000
      zones: 3
      shapes: [{cpu: 8, memory: 32Gi}]
    # ... or manifests:  cluster: {nodes: nodes.yaml, pods: running-pods.yaml}
    #     (``pods`` may also be a running-pods spec, generated onto the loaded nodes)
    priority_classes:             # optional; pods naming a class get its value (admission)
      - {name: high, value: 1000}
    arrivals:
      - name: web
        rate: 5                   # pods per second, Poisson (seeded) ...
        count: 3000               # ... at most this many pods (and/or end: <time>)
        template: pod-default     # an upstream template name (fastsched.sim.workloads.TEMPLATES),
                                  # a pod manifest (mapping) or a path to one
        duration: {distribution: exponential, mean: 300}   # or seconds; absent = runs forever
      - name: batch
        interval: 60              # one arrival every 60 s (the first at ``start``) ...
        batch: 20                 # ... of 20 pods each
        count: 200
        mix:                      # instead of template: weighted templates
          - {template: {spec: {containers: [{name: c, image: busybox,
                        resources: {requests: {cpu: "1"}}}]}}, weight: 3}
          - {template: pod-with-pod-anti-affinity, weight: 1, duration: 600}
      - trace: jobs.csv           # columns arrival_time, cpu, memory, duration and optionally
                                  # name, namespace, labels (k=v;k2=v2 or JSON), priority, gpu
        speedup: 10               # optional: divide times and durations
    pdbs:                         # PodDisruptionBudgets, their status kept current during the run
      - {name: web, selector: {app: web}, max_unavailable: 10%}
    scheduler_time: {model: per_node, scheduling: 0.002, per_node: 2e-6, binding: 0.001}
                                  # virtual time per attempt (none, measured, fixed, per_node)
    storage:                      # classes, CSI drivers (attach limits), static volumes, manifests
      drivers: [{name: ebs.csi.aws.com, attach_limit: 25}]
      classes: [{name: gp3, binding_mode: WaitForFirstConsumer, default: true}]
      volumes: [{storage_class: gp3, per: zone, count: 10, capacity: 100Gi}]
                                  # a stream's ``claims: [{name: data, size: 20Gi}]`` gives each
                                  # pod a claim data-<pod> (or ``ephemeral: true``)
    events:
      - {at: 300, drain: {count: 20, selector: {topology.kubernetes.io/zone: zone-2}}}
      - {at: 400, add: {count: 50, shape: {cpu: 16, memory: 64Gi}}}   # shape: a mapping or a
                                                                       # cluster shape's name
      - {at: 600, remove: {nodes: [node-00017]}}

docs/scenario.md describes every field. An optional ``apiVersion: fastsched.dev/v1alpha1`` /
``kind: Scenario`` header lets a scenario sit in a folder of manifests (readers skip it).

Stream options: ``start`` / ``end`` (seconds), ``namespace``, ``labels`` (merged over the
template's), ``priority``. Duration distributions: ``constant`` (value), ``exponential`` (mean),
``uniform`` (min, max), ``normal`` (mean, stddev; clipped at ``min``, default 0), ``lognormal``
(median, sigma), ``choice`` (values, probabilities).

Numbers may be written in any YAML notation (``900``, ``1_000``, ``1.5e3``, ``1e12``; YAML 1.1
reads the last as a string, it is a number here); a string that is no number is an error naming
the field.

Every problem is reported as :class:`ScenarioError` naming the field path
(``arrivals[1].rate: must be > 0, got 0``). :meth:`Scenario.timeline` returns the time-ordered,
deterministic :class:`Timeline` of :class:`PodArrival`, :class:`NodeAdd`, :class:`NodeDrain` and
:class:`NodeRemove` events; at equal times node events come first (adds, drains, removals, in file
order), then pod arrivals (by stream, then sequence). The timeline is lazy: arrivals are drawn a
chunk at a time while it is iterated, so an open-ended stream (``until: 1e12``) costs memory for
what is consumed, not for what it could make. The simulation loop that consumes them owns
what happens next: a drained node is cordoned and its pods evicted (use :func:`requeued` for the
copy that re-arrives), a removed node disappears with its pods (re-arriving when ``reschedule`` is
true, the default, as their controllers would recreate them), and an arrival's ``duration``
counts from when the pod is bound.

The arrival streams and their durations live in :mod:`fastsched.sim.streams`, the timeline and
node events in :mod:`fastsched.sim.events`; this module parses a scenario into them.
"""
from __future__ import annotations

import heapq
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator, Mapping

import numpy as np
import yaml

from ..api import (
    FrozenDict,
    KubeObject,
    ManifestError,
    Namespace,
    Node,
    Pod,
    PodDisruptionBudget,
    PriorityClass,
    load_objects,
)
from ..errors import NOT_UTF8_TEXT
# the timeline events and the streams are re-exported below (__all__): users import them from here
from .events import NodeAdd, NodeDrain, NodeEvent, NodeRemove, PodArrival, parse_event, requeued
from .generators import ClusterSpec, NodeShape, PodFactory, RunningPodsSpec, generate_nodes, generate_running_pods
from ..api.strategy import validate as validate_object
from ..api.util_validation import dns1123_subdomain_errors
from ..util.yamlsafe import checked
from .spec import MAX_GENERATED, Fields, SpecError, check_number, child, type_name, yaml_number
from .storage import ClaimSpec, StorageSpec, parse_claims
from .gangs import GangSpec, GangStream, workload_gates
from .streams import ArrivalStream, Duration, MixEntry, Priorities, TraceStream, read_trace
from .workloads import TEMPLATES, template_manifest

__all__ = [
    "ScenarioError",
    "Scenario",
    "PodArrival",
    "NodeAdd",
    "NodeDrain",
    "NodeRemove",
    "Timeline",
    "Duration",
    "ArrivalStream",
    "TraceStream",
    "NodeEvent",
    "requeued",
    "SchedulerTime",
    "default_scenario",
    "DEFAULT_SCENARIO_YAML",
]

ScenarioError = SpecError
"""Raised for any problem in a scenario; ``str()`` is ``<field path>: <problem>``."""


# --------------------------------------------------------------------------------------------
# the scenario
# --------------------------------------------------------------------------------------------
_TOP_LEVEL = ("name", "description", "seed", "until", "config", "cluster", "priority_classes", "namespaces",
              "arrivals", "events", "pdbs", "scheduler_time", "storage")

#: Optional type header, so that a folder of manifests may hold a scenario: manifest loaders skip a
#: document of a kind they do not model (``fastsched --cluster DIR`` warns and goes on)
SCENARIO_API_VERSION = "fastsched.dev/v1alpha1"
SCENARIO_KIND = "Scenario"

#: ``scheduler_time.model`` values (see :class:`SchedulerTime`)
SCHEDULER_TIME_MODELS = ("none", "measured", "fixed", "per_node")


@dataclass(frozen=True)
class SchedulerTime:
    """How much virtual time each scheduling attempt costs in a simulation (``scheduler_time:``).

    * ``none`` (the default): attempts take no virtual time; every pod due at an instant is
      placed at that instant.
    * ``measured``: the attempt's measured wall-clock seconds (its scheduling and inline binding
      cycles) times ``scale``.
    * ``fixed``: ``scheduling`` seconds per attempt, plus ``binding`` seconds when it bound the pod.
    * ``per_node``: ``scheduling + per_node x (nodes in the cluster)`` per attempt, plus
      ``binding`` when it bound the pod (upstream's cycle grows with the nodes it filters and scores).

    While an attempt's time runs, the events due meanwhile (arrivals, completions, node events,
    queue flushes) happen at their times, so queueing delay and backlog show in virtual time.
    """

    model: str = "none"
    scheduling: float = 0.0
    binding: float = 0.0
    per_node: float = 0.0
    scale: float = 1.0

    @property
    def enabled(self) -> bool:
        return self.model != "none"

    def cost(self, wall_seconds: float, bound: bool, num_nodes: int = 0) -> float:
        """Virtual seconds one attempt costs."""
        if self.model == "measured":
            return wall_seconds * self.scale
        base = self.scheduling + (self.binding if bound else 0.0)
        if self.model == "per_node":
            return base + self.per_node * num_nodes
        if self.model == "fixed":
            return base
        return 0.0

    def as_dict(self) -> dict:
        return {"model": self.model, "scheduling": self.scheduling, "binding": self.binding,
                "per_node": self.per_node, "scale": self.scale}

    @classmethod
    def parse(cls, raw: Any, path: str) -> "SchedulerTime":
        if raw is None:
            return cls()
        if isinstance(raw, str):
            raw = {"model": raw}
        g = Fields(raw, path, ("model", "scheduling", "binding", "per_node", "scale"))
        model = g.string("model", "fixed", choices=SCHEDULER_TIME_MODELS)
        out = cls(model=model, scheduling=g.number("scheduling", 0.0, minimum=0),
                  binding=g.number("binding", 0.0, minimum=0), per_node=g.number("per_node", 0.0, minimum=0),
                  scale=g.number("scale", 1.0, above=0))
        if model == "measured" and ("scheduling" in g or "binding" in g or "per_node" in g):
            raise SpecError(path, "the measured model takes only scale")
        if model in ("fixed", "per_node") and "scale" in g:
            raise SpecError(g.at("scale"), f"only the measured model takes scale (model is {model})")
        if model == "per_node" and "per_node" not in g:
            raise SpecError(g.at("per_node"), "required by the per_node model (seconds per node)")
        return out


class Scenario:
    """A loaded, validated scenario (see the module docstring)."""

    def __init__(self, data: Mapping[str, Any], base_dir: str | os.PathLike | None = None):
        self.base_dir = Path(base_dir) if base_dir is not None else Path.cwd()
        f = Fields(data, "", _TOP_LEVEL + ("api_version", "kind"))
        if "kind" in f and f.get("kind") != SCENARIO_KIND:
            raise SpecError(f.at("kind"), f"must be {SCENARIO_KIND} (or absent), got {f.get('kind')!r}")
        if "api_version" in f and f.get("api_version") != SCENARIO_API_VERSION:
            raise SpecError(f.at("api_version"), f"must be {SCENARIO_API_VERSION} (or absent), got {f.get('api_version')!r}")
        self.name: str = f.string("name", "scenario")
        self.description: str = f.string("description", "")
        self.seed: int = f.number("seed", 0, minimum=0, integer=True)
        self.until: float | None = f.number("until", None, above=0)
        self.config_source: Any = f.get("config")
        #: a stream makes gangs: GenericWorkload on, for the configuration and the scheduler
        self._has_gangs = any(isinstance(a, Mapping) and "gang" in a for a in f.list("arrivals"))
        #: a gang stream has a topology constraint: TopologyAwareWorkloadScheduling on too
        self._has_topology = any(isinstance(a, Mapping) and isinstance(a.get("gang"), Mapping)
                                 and "topology" in a["gang"] for a in f.list("arrivals"))
        self.config = self._load_config(f)
        self.cluster: ClusterSpec | None = None
        self.node_manifests: Path | None = None
        self.pod_manifests: Path | None = None
        self.running_pods: RunningPodsSpec | None = None
        self._parse_cluster(f)
        self.priority_classes: list[PriorityClass] = self._parse_priority_classes(f)
        self._priorities = Priorities(self.priority_classes)
        self.extra_namespaces: list[Namespace] = self._parse_namespaces(f)
        self.pdbs: list[PodDisruptionBudget] = self._parse_pdbs(f)
        self.scheduler_time: SchedulerTime = SchedulerTime.parse(f.get("scheduler_time"), f.at("scheduler_time"))
        self.storage: StorageSpec = StorageSpec.parse(f.get("storage"), f.at("storage"), self._path, self.seed)
        self.arrivals: list[ArrivalStream | TraceStream] = [
            self._parse_stream(raw, child(f.at("arrivals"), i), i) for i, raw in enumerate(f.list("arrivals"))]
        names = [s.name for s in self.arrivals]
        for i, s in enumerate(self.arrivals):
            if names.index(s.name) != i:
                raise SpecError(child(s.path, "name"), f"duplicate stream name {s.name!r}")
        shapes: list[NodeShape] = self.cluster.shapes if self.cluster else []
        self.events: list[NodeEvent] = [
            parse_event(raw, child(f.at("events"), i), i, shapes, self.cluster is not None)
            for i, raw in enumerate(f.list("events"))]
        self._initial: tuple[list[Node], list[Pod]] | None = None

    # -- loading ---------------------------------------------------------------------------
    @classmethod
    def load(cls, source: Any, *, base_dir: str | os.PathLike | None = None) -> "Scenario":
        """From a dict, YAML/JSON text, or a path (relative paths inside resolve against the
        file's directory, else ``base_dir`` or the working directory)."""
        if isinstance(source, Scenario):
            return source
        if isinstance(source, Mapping):
            return cls(source, base_dir)
        if isinstance(source, bytes):
            try:
                source = source.decode("utf-8")
            except UnicodeDecodeError:
                raise SpecError("", f"cannot read the scenario: {NOT_UTF8_TEXT}") from None
        if isinstance(source, os.PathLike) or (isinstance(source, str) and _looks_like_path(source)):
            file = Path(source)
            try:
                text = file.read_text(encoding="utf-8")
            except OSError as exc:
                raise SpecError("", f"cannot read scenario {str(file)!r}: {exc.strerror or exc}") from None
            except UnicodeDecodeError:
                raise SpecError("", f"cannot read scenario {str(file)!r}: {NOT_UTF8_TEXT}") from None
            return cls(_parse_yaml(text, file.name), base_dir if base_dir is not None else file.parent)
        if isinstance(source, str):
            return cls(_parse_yaml(source, "scenario"), base_dir)
        raise SpecError("", f"cannot load a scenario from {type(source).__name__}")

    def _path(self, value: Any, path: str) -> Path:
        if not isinstance(value, (str, os.PathLike)) or not str(value):
            raise SpecError(path, f"must be a file path, got {type_name(value)}")
        p = Path(value)
        return p if p.is_absolute() else self.base_dir / p

    def _load_config(self, f: Fields) -> Any:
        from ..config import ConfigError
        from ..scheduler.config_check import check_config

        if "config" not in f:
            return None
        raw = f.get("config")
        if isinstance(raw, str) and "\n" not in raw:
            file = self._path(raw, f.at("config"))
            if not file.is_file():
                raise SpecError(f.at("config"), f"no such file {str(file)!r}")
            raw = str(file)
        elif not isinstance(raw, (Mapping, str)):
            raise SpecError(f.at("config"), f"must be a KubeSchedulerConfiguration mapping or a path, "
                                            f"got {type_name(raw)}")
        try:  # validated and built as the Scheduler will build it
            return check_config(dict(raw) if isinstance(raw, Mapping) else raw, feature_gates=self.feature_gates)
        except ConfigError as exc:
            raise SpecError(f.at("config"), str(exc)) from None

    def _parse_cluster(self, f: Fields) -> None:
        if "cluster" not in f:
            raise SpecError(f.at("cluster"), "required")
        raw = f.get("cluster")
        path = f.at("cluster")
        if isinstance(raw, Mapping) and isinstance(yaml_number(raw.get("nodes")), str):
            g = Fields(raw, path, ("nodes", "pods"))
            self.node_manifests = self._existing(g.get("nodes"), g.at("nodes"))
            pods = g.get("pods")
            if isinstance(pods, str):
                self.pod_manifests = self._existing(pods, g.at("pods"))
            elif pods is not None:
                self.running_pods = RunningPodsSpec.from_dict(pods, g.at("pods"))
            return
        raw = dict(raw) if isinstance(raw, Mapping) else raw
        if isinstance(raw, dict) and "seed" not in raw:
            raw["seed"] = self.seed
        self.cluster = ClusterSpec.from_dict(raw, path)

    def _existing(self, value: Any, path: str) -> Path:
        file = self._path(value, path)
        if not file.is_file():
            raise SpecError(path, f"no such file {str(file)!r}")
        return file

    def _parse_priority_classes(self, f: Fields) -> list[PriorityClass]:
        out = []
        for i, raw in enumerate(f.list("priority_classes")):
            path = child(f.at("priority_classes"), i)
            if isinstance(raw, Mapping) and "kind" in raw:
                try:
                    out.append(PriorityClass.from_manifest(dict(raw)))
                except ManifestError as exc:
                    raise SpecError(path, str(exc)) from None
                continue
            g = Fields(raw, path, ("name", "value", "global_default", "preemption_policy", "description"))
            if "name" not in g:
                raise SpecError(g.at("name"), "required")
            if "value" not in g:
                raise SpecError(g.at("value"), "required")
            pc = PriorityClass(name=g.string("name"), value=g.number("value", integer=True),
                               global_default=g.boolean("global_default", False),
                               preemption_policy=g.string("preemption_policy", "PreemptLowerPriority",
                                                          choices=("PreemptLowerPriority", "Never")),
                               description=g.string("description", ""))
            # validated here, so that the error names this document's field (the API server's
            # would name the PriorityClass's: `value: Forbidden: maximum allowed value ...`)
            problems = validate_object(pc)
            if problems:
                first = problems[0]
                field = {"value": "value", "metadata.name": "name", "description": "description",
                         "preemptionPolicy": "preemption_policy"}.get(first.path)
                raise SpecError(g.at(field) if field else path, first.body() if field else str(first))
            out.append(pc)
        names = [pc.name for pc in out]
        if len(set(names)) != len(names):
            raise SpecError(f.at("priority_classes"), "names must be distinct")
        if sum(pc.global_default for pc in out) > 1:
            raise SpecError(f.at("priority_classes"), "at most one may be global_default")
        return out

    def _parse_pdbs(self, f: Fields) -> list[PodDisruptionBudget]:
        """PodDisruptionBudgets: a manifest (with ``kind``) or ``{name, namespace, selector,
        min_available | max_unavailable}`` (numbers or percentages such as "20%")."""
        out = []
        for i, raw in enumerate(f.list("pdbs")):
            path = child(f.at("pdbs"), i)
            if isinstance(raw, Mapping) and "kind" in raw:
                manifest = dict(raw)
            else:
                g = Fields(raw, path, ("name", "namespace", "selector", "min_available", "max_unavailable"))
                if "name" not in g:
                    raise SpecError(g.at("name"), "required")
                if ("min_available" in g) == ("max_unavailable" in g):
                    raise SpecError(path, "give exactly one of min_available and max_unavailable")
                key, field_name = (("min_available", "minAvailable") if "min_available" in g
                                   else ("max_unavailable", "maxUnavailable"))
                value = g.get(key)
                if not isinstance(value, str):
                    value = check_number(value, g.at(key), minimum=0, integer=True)
                manifest = {"apiVersion": "policy/v1", "kind": "PodDisruptionBudget",
                            "metadata": {"name": g.string("name"), "namespace": g.string("namespace", "default")},
                            "spec": {"selector": {"matchLabels": g.label_map("selector")}, field_name: value}}
            try:
                out.append(PodDisruptionBudget.from_manifest(manifest))
            except ManifestError as exc:
                raise SpecError(path, str(exc)) from None
        return out

    def _parse_namespaces(self, f: Fields) -> list[Namespace]:
        out = []
        for i, raw in enumerate(f.list("namespaces")):
            path = child(f.at("namespaces"), i)
            if isinstance(raw, str):
                ns, name_path = Namespace(name=raw), path
            else:
                g = Fields(raw, path, ("name", "labels"))
                if "name" not in g:
                    raise SpecError(g.at("name"), "required")
                ns, name_path = Namespace(name=g.string("name"), labels=g.label_map("labels")), g.at("name")
            problems = validate_object(ns)
            if problems:  # named at this document's field, not the Namespace's metadata.name
                raise SpecError(name_path if problems[0].path == "metadata.name" else path, problems[0].body())
            out.append(ns)
        return out

    def _template(self, raw: Any, path: str) -> PodFactory:
        if isinstance(raw, str):
            if raw in TEMPLATES:
                return PodFactory.from_manifest(template_manifest(raw), path)
            if _looks_like_path(raw):
                file = self._existing(raw, path)
                try:
                    return PodFactory(Pod.from_manifest(file))
                except ManifestError as exc:
                    raise SpecError(path, str(exc)) from None
            raise SpecError(path, f"unknown template {raw!r}: give a pod manifest, a file, or one of "
                                  f"{', '.join(sorted(TEMPLATES))}")
        if not isinstance(raw, Mapping):
            raise SpecError(path, f"must be a template name or a pod manifest, got {type_name(raw)}")
        manifest = dict(raw)
        manifest.setdefault("apiVersion", "v1")
        manifest.setdefault("kind", "Pod")
        metadata = manifest.get("metadata") or {}
        if not isinstance(metadata, Mapping):
            raise SpecError(child(path, "metadata"), f"must be a mapping, got {type_name(metadata)}")
        metadata = dict(metadata)
        metadata.setdefault("name", "template")
        manifest["metadata"] = metadata
        if not isinstance(manifest.get("spec"), Mapping):
            raise SpecError(child(path, "spec"), "required: the pod spec (with containers)")
        return PodFactory.from_manifest(manifest, path)

    def _parse_stream(self, raw: Any, path: str, index: int) -> ArrivalStream | TraceStream:
        if isinstance(raw, Mapping) and "trace" in raw:
            return self._parse_trace(raw, path, index)
        f = Fields(raw, path, ("name", "rate", "interval", "count", "start", "end", "batch", "template", "mix",
                               "duration", "namespace", "labels", "priority", "claims", "gang"))
        gang = GangSpec.parse(f.get("gang"), f.at("gang")) if "gang" in f else None
        if gang is not None:
            if "mix" in f:
                raise SpecError(f.at("mix"), "a gang stream takes one template (every member of a gang is alike)")
            if "batch" in f:
                raise SpecError(f.at("batch"), "a gang stream's members per arrival are gang.pods")
        name = f.string("name", f"stream-{index}")
        # the stream's pods are named <name>-<number>: refused here, at the stream's name, rather
        # than at the first pod's metadata.name
        problems = dns1123_subdomain_errors(f"{name}-00000")
        if problems:
            raise SpecError(f.at("name"), f"Invalid value: {name!r}: the stream's pods are named "
                                          f"<name>-<number>, which must be valid pod names: {'; '.join(problems)}")
        if ("rate" in f) == ("interval" in f):
            raise SpecError(path, "needs exactly one of rate (pods per second, Poisson), interval (seconds) "
                                  "or trace (a file)")
        # times and rates as floats: a YAML integer beyond int64 (2**63) overflowed NumPy's arange
        rate = _float_or_none(f.number("rate", None, above=0))
        interval = _float_or_none(f.number("interval", None, above=0))
        count = f.number("count", None, minimum=0, integer=True)
        start = float(f.number("start", 0.0, minimum=0))
        end = _float_or_none(f.number("end", None, minimum=0))
        if end is not None and end < start:
            raise SpecError(f.at("end"), f"must be >= start ({start:g})")
        if count is None and end is None and self.until is None:
            raise SpecError(path, "needs count or end (or a scenario-level until) to be finite")
        stream_labels = f.label_map("labels") if "labels" in f else None
        priority = f.number("priority", None, integer=True)
        if ("template" in f) == ("mix" in f):
            raise SpecError(path, "needs exactly one of template, mix")
        mix: list[MixEntry] = []
        if "template" in f:
            template = f.get("template")
            if gang is not None:
                template = gang.with_gpus(self._manifest_of(template, f.at("template")), f.at("template"))
            mix.append(MixEntry(self._template(template, f.at("template")), 1.0, None,
                                 None, priority))
        else:
            entries = f.list("mix")
            if not entries:
                raise SpecError(f.at("mix"), "must not be empty")
            for i, e in enumerate(entries):
                epath = child(f.at("mix"), i)
                g = Fields(e, epath, ("template", "weight", "duration", "labels", "priority"))
                if "template" not in g:
                    raise SpecError(g.at("template"), "required")
                mix.append(MixEntry(self._template(g.get("template"), g.at("template")),
                                     g.number("weight", 1.0, minimum=0),
                                     Duration.parse(g.get("duration"), g.at("duration")) if "duration" in g else None,
                                     g.label_map("labels") if "labels" in g else None,
                                     g.number("priority", priority, integer=True)))
            if sum(m.weight for m in mix) <= 0:
                raise SpecError(f.at("mix"), "weights must not all be zero")
        for m, where in zip(mix, [f.at("template")] if "template" in f else
                            [child(child(f.at("mix"), i), "template") for i in range(len(mix))]):
            class_name = m.factory.template.priority_class_name
            if class_name and class_name not in self._priorities.by_name:
                raise SpecError(child(child(where, "spec"), "priorityClassName"),
                                f"no PriorityClass named {class_name!r} (declare it under priority_classes)")
            labels = {**m.factory.template.labels, **(stream_labels or {}), **(m.labels or {})}
            m.labels = FrozenDict(labels) if (stream_labels or m.labels) else None
        claims = parse_claims(f.get("claims"), f.at("claims"), self._class_names()) if "claims" in f else []
        if claims:
            for m, where in zip(mix, [f.at("template")] if "template" in f else
                                [child(child(f.at("mix"), i), "template") for i in range(len(mix))]):
                m.factory = _with_claim_volumes(m.factory, claims, where, f.at("claims"))
        duration = Duration.parse(f.get("duration"), f.at("duration"))
        namespace = f.string("namespace", None)
        if gang is not None:  # count is gangs; each arrival is one gang of gang.pods members
            return GangStream(name=name, path=path, index=index, mix=mix, claims=claims, duration=duration,
                              rate=rate, interval=interval, count=None if count is None else count * gang.pods,
                              start=start, end=end, batch=gang.pods, namespace=namespace, gang=gang)
        return ArrivalStream(name=name, path=path, index=index, mix=mix, claims=claims, duration=duration,
                             rate=rate, interval=interval, count=count, start=start, end=end,
                             batch=f.number("batch", 1, minimum=1, maximum=MAX_GENERATED, integer=True),
                             namespace=namespace)

    def _manifest_of(self, raw: Any, path: str) -> dict:
        """A template given by name, path or mapping, as a pod manifest (to add a gang's GPUs to)."""
        if isinstance(raw, str) and raw in TEMPLATES:
            return dict(template_manifest(raw))
        if isinstance(raw, str) and _looks_like_path(raw):
            file = self._existing(raw, path)
            try:
                data = checked(lambda: yaml.safe_load(file.read_text(encoding="utf-8")))
            except (OSError, UnicodeDecodeError, yaml.YAMLError) as exc:
                raise SpecError(path, f"cannot read {str(file)!r}: {exc}") from None
            if not isinstance(data, Mapping):
                raise SpecError(path, f"{file.name}: expected one pod manifest")
            return dict(data)
        if not isinstance(raw, Mapping):
            raise SpecError(path, f"must be a template name or a pod manifest, got {type_name(raw)}")
        return dict(raw)

    @property
    def gang_streams(self) -> list[GangStream]:
        """The streams of gang jobs (:mod:`fastsched.sim.gangs`)."""
        return [s for s in self.arrivals if isinstance(s, GangStream)]

    @property
    def feature_gates(self) -> Any:
        """The scheduler's feature gates for this scenario: None (v1.37.2's defaults), or with
        GenericWorkload on when a stream makes gangs, and TopologyAwareWorkloadScheduling too when a
        gang stream has ``topology`` (:func:`fastsched.sim.gangs.workload_gates`)."""
        return workload_gates(topology=self._has_topology) if self._has_gangs else None

    def _class_names(self) -> set[str] | None:
        """The StorageClasses the scenario declares (None: unknown, the cluster's manifests are
        not read for them, so claims' classes are not checked)."""
        return self.storage.class_names

    def storage_objects(self) -> list:
        """The storage objects at time 0 (``storage``; empty without it), for the initial nodes."""
        return [] if self.storage.empty else self.storage.initial_objects(self.nodes)

    def _parse_trace(self, raw: Mapping, path: str, index: int) -> TraceStream:
        f = Fields(raw, path, ("name", "trace", "format", "speedup", "start", "namespace", "template"))
        file = self._existing(f.get("trace"), f.at("trace"))
        fmt = f.string("format", None, choices=("csv", "json"))
        if fmt is None:
            suffix = file.suffix.lower()
            if suffix not in (".csv", ".json"):
                raise SpecError(f.at("format"), f"required for a trace file named {file.name!r} (csv or json)")
            fmt = suffix[1:]
        base = self._template(f.get("template"), f.at("template")) if "template" in f else \
            PodFactory.from_manifest({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "trace"},
                                      "spec": {"containers": [{"name": "main",
                                                               "image": "registry.k8s.io/pause:3.10.1"}]}})
        class_name = base.template.priority_class_name
        if class_name and class_name not in self._priorities.by_name:
            raise SpecError(child(child(f.at("template"), "spec"), "priorityClassName"),
                            f"no PriorityClass named {class_name!r} (declare it under priority_classes)")
        rows = read_trace(file, fmt, f.at("trace"))
        return TraceStream(name=f.string("name", f"trace-{index}"), path=path, index=index, rows=rows, base=base,
                           speedup=f.number("speedup", 1.0, above=0), start=f.number("start", 0.0, minimum=0),
                           namespace=f.string("namespace", None))

    # -- products --------------------------------------------------------------------------
    def initial_cluster(self) -> tuple[list[Node], list[Pod]]:
        """The nodes and running pods at time 0 (built once, then cached)."""
        if self._initial is None:
            if self.cluster is not None:
                nodes = generate_nodes(self.cluster)
                pods = generate_running_pods(self.cluster.pods, nodes, seed=self.cluster.seed, path="cluster.pods")
            else:
                nodes = self._load_kind(self.node_manifests, Node, "cluster.nodes")
                if self.pod_manifests is not None:
                    pods = self._load_kind(self.pod_manifests, Pod, "cluster.pods")
                elif self.running_pods is not None:
                    pods = generate_running_pods(self.running_pods, nodes, seed=self.seed, path="cluster.pods")
                else:
                    pods = []
            pods = [self._priorities.admit(p, "cluster.pods") for p in pods]
            self._initial = (nodes, pods)
        return self._initial

    @staticmethod
    def _load_kind(file: Path | None, kind: type[KubeObject], path: str) -> list:
        try:
            objects = load_objects(file)
        except (ManifestError, OSError, ValueError) as exc:
            raise SpecError(path, str(exc)) from None
        wrong = [o for o in objects if not isinstance(o, kind)]
        if wrong:
            raise SpecError(path, f"expected only {kind.KIND} objects, found a {wrong[0].KIND}")
        return objects

    @property
    def nodes(self) -> list[Node]:
        return self.initial_cluster()[0]

    @property
    def pods(self) -> list[Pod]:
        return self.initial_cluster()[1]

    def namespaces(self) -> list[Namespace]:
        """The declared namespaces plus every one a pod of the scenario uses (sorted by name)."""
        seen = {ns.name: ns for ns in self.extra_namespaces}
        names = {p.namespace for p in self.pods} | {pdb.namespace for pdb in self.pdbs}
        for stream in self.arrivals:
            if stream.namespace:
                names.add(stream.namespace)
            if isinstance(stream, ArrivalStream):
                names.update(m.factory.template.namespace for m in stream.mix if not stream.namespace)
            else:
                names.update(r["namespace"] for r in stream.rows if r.get("namespace"))
                if not stream.namespace:
                    names.add(stream.base.template.namespace)
        for name in names:
            seen.setdefault(name, Namespace(name=name))
        return [seen[n] for n in sorted(seen)]

    def timeline(self) -> Timeline:
        """Every arrival and node event in time order (deterministic in the seed), as a lazy
        :class:`Timeline`: node events are resolved now (a ScenarioError for a drain of absent
        nodes is raised here), pods are made while it is iterated."""
        return Timeline(self)

    def _node_events(self) -> list[tuple[tuple, Any]]:
        if not self.events:
            return []
        nodes = self.nodes
        alive: dict[str, Node] = {n.name: n for n in nodes}
        drained: set[str] = set()
        next_index = len(nodes) if self.cluster is not None else 0
        prefix = self.cluster.name_prefix if self.cluster is not None else "added-node-"
        ordered = sorted(self.events, key=lambda e: (e.time, {"add": 0, "drain": 1, "remove": 2}[e.action], e.index))
        out: list[tuple[tuple, Any]] = []
        for ev in ordered:
            if self.until is not None and ev.time > self.until:
                continue
            rng = np.random.default_rng([int(self.seed), 200, ev.index])
            if ev.action == "add":
                assert ev.count is not None  # parse_event defaults an add's count to 1
                spec = self.cluster if self.cluster is not None else ClusterSpec(nodes=0, seed=self.seed)
                new = generate_nodes(spec, ev.count, start=next_index, rng=rng, name_prefix=prefix,
                                     shapes=[ev.shape] if ev.shape is not None else None)
                next_index += ev.count
                clash = [n.name for n in new if n.name in alive]
                if clash:
                    raise SpecError(ev.path, f"added node {clash[0]!r} already exists")
                alive.update((n.name, n) for n in new)
                out.append(((ev.time, NodeAdd.ORDER, ev.index), NodeAdd(ev.time, tuple(new))))
                continue
            candidates = [name for name, node in alive.items()
                          if not (ev.action == "drain" and name in drained)
                          and all(node.labels.get(k) == v for k, v in ev.selector.items())]
            if ev.nodes:
                missing = [n for n in ev.nodes if n not in alive]
                if missing:
                    raise SpecError(child(child(ev.path, ev.action), "nodes"),
                                    f"no node {missing[0]!r} at t={ev.time:g}")
                chosen = tuple(ev.nodes)
            else:
                assert ev.count is not None  # parse_event: exactly one of count, nodes
                if ev.count > len(candidates):
                    raise SpecError(child(child(ev.path, ev.action), "count"),
                                    f"{ev.count} requested but only {len(candidates)} eligible nodes at t={ev.time:g}")
                picks = np.sort(rng.choice(len(candidates), size=ev.count, replace=False))
                chosen = tuple(candidates[i] for i in picks.tolist())
            if ev.action == "drain":
                drained.update(chosen)
                out.append(((ev.time, NodeDrain.ORDER, ev.index), NodeDrain(ev.time, chosen, ev.reschedule)))
            else:
                for name in chosen:
                    alive.pop(name, None)
                    drained.discard(name)
                out.append(((ev.time, NodeRemove.ORDER, ev.index), NodeRemove(ev.time, chosen, ev.reschedule)))
        return out

    def summary(self) -> dict[str, Any]:
        """Counts for display: nodes, running pods, arrivals per stream, node events (one pass
        over the timeline: its length is the number of arrivals)."""
        timeline = self.timeline()
        per_stream: dict[str, int] = {}
        node_events, last = 0, 0.0
        for e in timeline:
            if isinstance(e, PodArrival):
                per_stream[e.stream] = per_stream.get(e.stream, 0) + 1
            else:
                node_events += 1
            last = e.time
        return {"name": self.name, "nodes": len(self.nodes), "running_pods": len(self.pods),
                "arrivals": sum(per_stream.values()), "arrivals_per_stream": per_stream,
                "node_events": node_events, "last_event_time": last}


class Timeline:
    """The time-ordered events of a scenario, made lazily.

    Iterating yields :class:`NodeAdd`, :class:`NodeDrain`, :class:`NodeRemove` and
    :class:`PodArrival` events in time order (at equal times node events first, then arrivals by
    stream, then sequence), the same ones on every iteration. The node events are resolved when the
    timeline is made; arrivals are drawn chunk by chunk (:data:`CHUNK` instants per stream) and
    merged, so memory stays bounded whatever the number of arrivals: a consumer keeps what it needs.

    :meth:`last_time` and :meth:`reference_requests` answer what a consumer needs up front without
    making any pod.
    """

    def __init__(self, scenario: Scenario):
        self.scenario = scenario
        self.seed = scenario.seed
        self.until = scenario.until
        self.streams = list(scenario.arrivals)
        self._node_items = scenario._node_events()
        #: the node events, resolved (in time order)
        self.node_events: list[NodeAdd | NodeDrain | NodeRemove] = [e for _, e in self._node_items]

    def __iter__(self) -> Iterator[PodArrival | NodeAdd | NodeDrain | NodeRemove]:
        sources: list[Iterator[tuple[tuple, Any]]] = [iter(self._node_items)]
        sources += [self._keyed(stream) for stream in self.streams]
        for _, event in heapq.merge(*sources, key=_item_key):
            yield event

    def _keyed(self, stream: ArrivalStream | TraceStream) -> Iterator[tuple[tuple, PodArrival]]:
        for j, arrival in enumerate(stream.arrivals(self.seed, self.until, self.scenario._priorities)):
            yield (arrival.time, PodArrival.ORDER, stream.index, j), arrival

    def arrivals(self) -> Iterator[PodArrival]:
        """The pod arrivals only, in time order."""
        return (e for e in self if isinstance(e, PodArrival))

    def last_time(self) -> float:
        """The time of the last event (0.0 when there is none). Streams of more than
        :data:`EXACT_REPLAY_LIMIT` pods give a bound (their end) rather than an exact time."""
        times = [e.time for e in self.node_events]
        for stream in self.streams:
            t = stream.last_time(self.seed, self.until)
            if t is not None:
                times.append(t)
        return max(times) if times else 0.0

    def reference_requests(self) -> tuple[float, float]:
        """The median cpu (millicores) and median memory (bytes) request of the arriving pods
        (0 for none), without making them: each mix entry of a stream counts as many times as it
        arrives (replayed exactly up to :data:`EXACT_REPLAY_LIMIT` pods per stream, its expected
        share beyond), trace pods one by one."""
        cpu: dict[float, float] = {}
        memory: dict[float, float] = {}

        def add(requests: Mapping[str, int], weight: float) -> None:
            if weight > 0:
                c, m = requests.get("cpu", 0), requests.get("memory", 0)
                cpu[c] = cpu.get(c, 0.0) + weight
                memory[m] = memory.get(m, 0.0) + weight

        for stream in self.streams:
            if isinstance(stream, TraceStream):
                for arrival in stream.arrivals(self.seed, self.until, self.scenario._priorities):
                    add(arrival.pod.requests, 1.0)
                continue
            for entry, count in zip(stream.mix, stream.entry_counts(self.seed, self.until)):
                add(entry.factory.template.requests, count)
        return _weighted_median(cpu), _weighted_median(memory)


def _item_key(item: tuple[tuple, Any]) -> tuple:
    return item[0]


def _weighted_median(weights: Mapping[float, float]) -> float:
    """The median of a multiset given as value -> multiplicity, as ``numpy.median`` computes it
    for whole multiplicities (the mean of the two middle values when they differ)."""
    total = sum(weights.values())
    if total <= 0:
        return 0.0
    values = sorted(weights)
    cumulative = 0.0
    for i, v in enumerate(values):
        cumulative += weights[v]
        if cumulative > total / 2:
            return float(v)
        if cumulative == total / 2:
            return (float(v) + float(values[i + 1])) / 2 if i + 1 < len(values) else float(v)
    return float(values[-1])


def _with_claim_volumes(factory: PodFactory, claims: list[ClaimSpec], template_path: str,
                        claims_path: str) -> PodFactory:
    """The template with the claims' volumes (for a placeholder pod name), validated as a pod;
    pods then differ from it only in their claims' names."""
    import copy

    names = {v.get("name") for v in factory.template.volumes}
    for i, c in enumerate(claims):
        if c.name in names:
            raise SpecError(child(child(claims_path, i), "name"),
                            f"the template already has a volume named {c.name!r}")
    manifest = copy.deepcopy(dict(factory.template.manifest)) if factory.template.manifest else None
    if not manifest:
        raise SpecError(template_path, "claims need a template given as a manifest")
    spec = manifest.setdefault("spec", {})
    spec["volumes"] = list(spec.get("volumes") or []) + [c.volume("template") for c in claims]
    PodFactory.from_manifest(manifest, template_path)  # validated (SpecError at the template's path)
    return factory


def _float_or_none(value: Any) -> float | None:
    return None if value is None else float(value)


def _looks_like_path(text: str) -> bool:
    if "\n" in text or ": " in text or text.lstrip().startswith(("{", "[")):
        return False
    return text.endswith((".yaml", ".yml", ".json", ".csv")) or os.sep in text or os.path.exists(text)


class _NumbersLoader(yaml.SafeLoader):
    """YAML 1.1 (PyYAML's) plus YAML 1.2's number notation: ``1e12`` and ``1.0e9`` are floats here
    (YAML 1.1 reads them as strings: its floats need a dot and a signed exponent)."""


_NumbersLoader.add_implicit_resolver(
    "tag:yaml.org,2002:float",
    re.compile(r"^[-+]?(?:[0-9][0-9_]*(?:\.[0-9_]*)?|\.[0-9][0-9_]*)[eE][-+]?[0-9]+$"),
    list("-+0123456789."))


def _parse_yaml(text: str, where: str) -> Any:
    try:
        data = checked(lambda: yaml.load(text, Loader=_NumbersLoader))
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = f" at line {mark.line + 1}" if mark is not None else ""
        raise SpecError("", f"invalid YAML{line}: {getattr(exc, 'problem', None) or exc}", source=where) from None
    if not isinstance(data, Mapping):
        raise SpecError("", f"a scenario must be a mapping, got {type_name(data)}", source=where)
    return data


# --------------------------------------------------------------------------------------------
# the built-in scenario
# --------------------------------------------------------------------------------------------
DEFAULT_SCENARIO_YAML = """\
name: default
description: >-
  1,000 nodes in 3 zones (general-purpose, large and GPU nodes; the non-GPU ones ~35% full at the
  start), 15 minutes of mixed arrivals: web pods, zone-spread API pods, hostname anti-affine caches,
  zone-pinned SSD databases, bursts of low-priority batch pods, more GPU inference jobs than there are
  GPUs (they wait for GPUs to free up), high-priority GPU trainings that preempt inference jobs (a
  PodDisruptionBudget guards them), a few pods too big for any node; one zone partly drained, new
  nodes added, a few nodes removed; every attempt costs modelled scheduler time.
seed: 1
until: 900
scheduler_time: {model: per_node, scheduling: 0.002, per_node: 0.000002, binding: 0.001}
cluster:
  nodes: 1000
  regions: [region-1]
  zones: [zone-a, zone-b, zone-c]
  shapes:
    - {name: general, cpu: 8, memory: 32Gi, pods: 110, ephemeral-storage: 100Gi, weight: 0.62}
    - {name: large, cpu: 16, memory: 64Gi, pods: 110, ephemeral-storage: 200Gi, weight: 0.33}
    - name: gpu
      cpu: 32
      memory: 128Gi
      pods: 110
      nvidia.com/gpu: 4
      weight: 0.05
      labels: {accelerator: nvidia-a100}
      taints: [{key: nvidia.com/gpu, value: present, effect: NoSchedule}]
  labels:
    disktype: {values: [ssd, hdd], probabilities: [0.4, 0.6]}
  taints:
    - {key: spot, value: "true", effect: PreferNoSchedule, fraction: 0.1}
  images:
    pool:
      - {name: "registry.k8s.io/pause:3.10.1", size: 700Ki, weight: 4}
      - {name: "nginx:1.27", size: 70Mi, weight: 3}
      - {name: "redis:7.4", size: 120Mi}
      - {name: "postgres:16", size: 400Mi}
      - {name: "python:3.12-slim", size: 150Mi, weight: 2}
      - {name: "nvcr.io/nvidia/pytorch:24.08", size: 9Gi, weight: 0.5}
    per_node: 3
  pods:
    count: 3000
    shapes:
      - {cpu: 500m, memory: 1Gi, weight: 5}
      - {cpu: "2", memory: 4Gi, weight: 3}
      - {cpu: "4", memory: 16Gi, weight: 1}
    labels:
      app: {values: [billing, search, ledger, queue], probabilities: [0.3, 0.3, 0.2, 0.2]}
    namespaces: [default, prod]
priority_classes:
  - {name: high-priority, value: 1000000, description: critical training jobs}
  - {name: batch-low, value: -10, preemption_policy: Never}
pdbs:
  - {name: inference, selector: {app: inference}, max_unavailable: 10%}
arrivals:
  - name: web
    rate: 4
    end: 600
    template:
      metadata: {labels: {app: web}}
      spec:
        containers:
          - {name: web, image: "nginx:1.27", resources: {requests: {cpu: 250m, memory: 512Mi}}}
    duration: {distribution: exponential, mean: 240}
  - name: api
    rate: 0.5
    end: 600
    template:
      metadata: {labels: {app: api}}
      spec:
        topologySpreadConstraints:
          - {maxSkew: 1, topologyKey: topology.kubernetes.io/zone, whenUnsatisfiable: DoNotSchedule,
             labelSelector: {matchLabels: {app: api}}}
        containers:
          - {name: api, image: "python:3.12-slim", resources: {requests: {cpu: "1", memory: 2Gi}}}
    duration: {distribution: uniform, min: 200, max: 500}
  - name: cache
    rate: 0.2
    end: 600
    template:
      metadata: {labels: {app: cache}}
      spec:
        affinity:
          podAntiAffinity:
            requiredDuringSchedulingIgnoredDuringExecution:
              - {topologyKey: kubernetes.io/hostname, labelSelector: {matchLabels: {app: cache}}}
        containers:
          - {name: redis, image: "redis:7.4", resources: {requests: {cpu: "2", memory: 8Gi}}}
  - name: ssd-db
    rate: 0.2
    end: 600
    template:
      metadata: {labels: {app: db}}
      spec:
        affinity:
          nodeAffinity:
            requiredDuringSchedulingIgnoredDuringExecution:
              nodeSelectorTerms:
                - matchExpressions:
                    - {key: disktype, operator: In, values: [ssd]}
                    - {key: topology.kubernetes.io/zone, operator: In, values: [zone-a, zone-b]}
        containers:
          - {name: postgres, image: "postgres:16", resources: {requests: {cpu: "2", memory: 8Gi}}}
    duration: {distribution: lognormal, median: 300, sigma: 0.5}
  - name: batch
    interval: 60
    batch: 150
    end: 540
    template:
      metadata: {labels: {app: batch}}
      spec:
        priorityClassName: batch-low
        containers:
          - {name: job, image: "python:3.12-slim", resources: {requests: {cpu: 500m, memory: 1Gi}}}
    duration: {distribution: uniform, min: 30, max: 180}
  - name: gpu-jobs
    rate: 0.8
    end: 600
    template:
      metadata: {labels: {app: inference}}
      spec:
        tolerations: [{key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}]
        containers:
          - name: infer
            image: "nvcr.io/nvidia/pytorch:24.08"
            resources: {requests: {cpu: "4", memory: 16Gi, nvidia.com/gpu: "1"}, limits: {nvidia.com/gpu: "1"}}
    duration: {distribution: exponential, mean: 400}
  - name: training
    rate: 0.02
    start: 120
    end: 600
    template:
      metadata: {labels: {app: training}}
      spec:
        priorityClassName: high-priority
        tolerations: [{key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}]
        containers:
          - name: train
            image: "nvcr.io/nvidia/pytorch:24.08"
            resources: {requests: {cpu: "16", memory: 64Gi, nvidia.com/gpu: "4"}, limits: {nvidia.com/gpu: "4"}}
    duration: 300
  - name: oversized
    interval: 200
    batch: 2
    start: 50
    end: 600
    template:
      metadata: {labels: {app: etl}}
      spec:
        containers:
          - {name: etl, image: "python:3.12-slim", resources: {requests: {cpu: "48", memory: 96Gi}}}
    duration: 600
events:
  - {at: 300, drain: {count: 40, selector: {topology.kubernetes.io/zone: zone-b}}}
  - {at: 420, add: {count: 40, shape: general}}
  - {at: 480, remove: {count: 10, selector: {topology.kubernetes.io/zone: zone-c}}}
"""


def default_scenario() -> Scenario:
    """The built-in scenario of ``fastsched simulate`` (see :data:`DEFAULT_SCENARIO_YAML`)."""
    return Scenario.load(DEFAULT_SCENARIO_YAML)
