"""Gang jobs in simulations: the ``gang`` arrival stream and the gang metrics of a run.

A stream with a ``gang:`` block makes *gangs* instead of single pods (docs/scenario.md)::

    arrivals:
      - name: train
        interval: 120               # one gang every 120 s (or rate: gangs per second, Poisson)
        count: 10                   # gangs (not pods)
        gang:
          pods: 4                   # members per gang
          min_count: 4              # the PodGroup's gang minCount (default: pods)
          gpus: 8                   # added to each member's first container (requests = limits)
          gpu_resource: nvidia.com/gpu   # the extended resource (default nvidia.com/gpu)
        template: {...}             # the member pod (one template; ``mix`` is refused)
        duration: 600               # drawn once per gang; each member runs it from its bind

Each gang is a ``scheduling.k8s.io/v1beta1`` PodGroup ``<stream>-<k>`` (``schedulingPolicy.gang.
minCount``, the template's ``priorityClassName``) created with its first member, and ``pods``
member pods ``<stream>-<k>-<m>`` with ``spec.schedulingGroup.podGroupName`` set, all arriving at
the same instant. ``gang.topology: {key: <node label>}`` gives each PodGroup that topology
constraint (``spec.schedulingConstraints.topology``: the whole gang on nodes sharing one value of
the label, TopologyAwareWorkloadScheduling's placements).

**Feature gates.** A gang stream needs GenericWorkload (off by default at v1.37.2): a scenario with
a gang stream runs its scheduler (and loads its configuration: GangScheduling joins the default
plugins) with the gates of :func:`workload_gates`, v1.37.2's defaults with GenericWorkload on, and
TopologyAwareWorkloadScheduling (alpha, off by default) when a gang stream has ``topology``
(TopologyPlacementGenerator and PodGroupPodsCount join them).

Metrics (:class:`GangTracker`, :data:`GANG_SUMMARY_DOC`, :data:`GANGS_CSV_DOC`):

* **gang wait**: ``started - created``: ``created`` is when its first member was created,
  ``started`` when the ``min_count``-th member was bound (the job can run);
* **never started**: gangs with no ``started`` at the end;
* **GPUs held at Permit**: per sample, the GPUs requested by gang members assumed on a node and
  waiting at Permit (GangScheduling holds them until ``minCount`` members are assumed, up to 5
  minutes; another Permit plugin may hold one too). At v1.37.2 the group cycle places a whole gang
  (its Reserve included) before any member reaches Permit, and GangScheduling releases the waiting
  members with the last one in the same instant, so this is 0 unless another Permit plugin holds a
  member (a quota or admission check: see ``tests/sim/test_gangs.py``);
* **GPU fragmentation**: per sample, over live, uncordoned nodes, the free GPUs on nodes that
  cannot host one whole member of any gang stream (free GPUs, cpu or memory below the member's
  request, or no pod slot left), over all free GPUs (0 when none is free). Taints and affinity are
  ignored, as in the cpu fragmentation.
"""
from __future__ import annotations

import copy
import math
from dataclasses import dataclass, field
from typing import Any, Iterator, Mapping

import numpy as np

from ..api.objects import PodSchedulingGroup, deterministic_uid
from ..api.util_validation import qualified_name_errors
from .events import PodArrival
from .fragmentation import stranded
from .spec import MAX_GENERATED, Fields, SpecError, amount, child, type_name
from .streams import ArrivalStream, Priorities

__all__ = ["GangSpec", "GangStream", "GangTracker", "GangRecord", "workload_gates", "pod_group_manifest",
           "GANG_SUMMARY_DOC", "GANGS_CSV_DOC", "GPU_FRAGMENTATION_DOC", "DEFAULT_GPU_RESOURCE"]

DEFAULT_GPU_RESOURCE = "nvidia.com/gpu"


def workload_gates(topology: bool = False) -> Any:
    """The feature gates of a scenario with gang streams: v1.37.2's defaults with GenericWorkload on
    (a gang stream is the scenario's request for workload-aware scheduling: nothing else needs to be
    written in it; ``fastsched capacity --gang-size`` runs with the same gates), and
    TopologyAwareWorkloadScheduling with ``topology`` (a gang stream's topology constraint)."""
    from ..features import GENERIC_WORKLOAD, TOPOLOGY_AWARE_WORKLOAD_SCHEDULING, FeatureGates

    return FeatureGates({GENERIC_WORKLOAD: True, **({TOPOLOGY_AWARE_WORKLOAD_SCHEDULING: True} if topology else {})})


GPU_FRAGMENTATION_DOC = ("share of the free GPUs (over live, uncordoned nodes) on nodes that cannot host one "
                         "whole member of any gang stream (free GPUs, cpu or memory below the member's request, "
                         "or no pod slot left); 0 when no GPU is free")

GANG_SUMMARY_DOC = {
    "total": "gangs created (PodGroups of the gang streams)",
    "started": "gangs whose min_count-th member was bound",
    "never_started": "gangs not started by the end (fewer than min_count member bindings)",
    "wait_seconds": "gang wait = started - created (first member created) over started gangs, virtual "
                    "seconds: count, p50, p90, p99, mean, max",
    "gpus_held_at_permit": "GPUs requested by gang members waiting at Permit, over the samples: max, mean, final",
    "gpu_fragmentation": GPU_FRAGMENTATION_DOC + ": final, mean, max over the samples",
    "gpu_resource": "the extended resource counted as GPUs",
    "never_started_gangs": "the first 20 gangs never started (namespace/name)",
}

GANGS_CSV_DOC = {
    "name": "the PodGroup (namespace/name)",
    "stream": "the gang stream that made it",
    "pods": "member pods",
    "min_count": "the gang's minCount",
    "gpus_per_pod": "GPUs requested by each member",
    "created": "virtual second its first member was created",
    "started": "virtual second its min_count-th member was bound (empty: never started)",
    "wait": "started - created (empty: never started)",
    "bound": "member bindings by the end (members that ended since count; a member bound again after an eviction counts again)",
}


# --------------------------------------------------------------------------------------------
# the stream
# --------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class GangSpec:
    """A stream's ``gang:`` block."""

    pods: int
    min_count: int
    gpus: int = 0
    gpu_resource: str = DEFAULT_GPU_RESOURCE
    #: the PodGroup's topology constraint key (TopologyAwareWorkloadScheduling), None without
    topology: str | None = None

    @classmethod
    def parse(cls, raw: Any, path: str) -> "GangSpec":
        f = Fields(raw, path, ("pods", "min_count", "gpus", "gpu_resource", "topology"))
        topology = None
        if "topology" in f:
            t = Fields(f.get("topology"), f.at("topology"), ("key",))
            if "key" not in t:
                raise SpecError(t.at("key"), "required: the node label the gang is kept within "
                                             "(e.g. topology.kubernetes.io/zone)")
            topology = t.string("key")
            errors = qualified_name_errors(topology)
            if errors:
                raise SpecError(t.at("key"), f"invalid label key {topology!r}: {errors[0]}")
        if "pods" not in f:
            raise SpecError(f.at("pods"), "required: member pods per gang")
        pods = f.number("pods", minimum=1, maximum=MAX_GENERATED, integer=True)
        min_count = f.number("min_count", pods, minimum=1, integer=True)
        if min_count > pods:
            raise SpecError(f.at("min_count"), f"must be <= pods ({pods}), got {min_count}: such a gang never starts")
        resource = f.string("gpu_resource", DEFAULT_GPU_RESOURCE)
        if "/" not in resource or resource.startswith(("kubernetes.io/", "requests.")):
            raise SpecError(f.at("gpu_resource"), f"must be an extended resource name such as "
                                                  f"{DEFAULT_GPU_RESOURCE}, got {resource!r}")
        gpus = f.number("gpus", 0, minimum=0, maximum=MAX_GENERATED, integer=True)
        amount(resource, gpus, f.at("gpus"))
        return cls(pods=int(pods), min_count=int(min_count), gpus=int(gpus), gpu_resource=resource,
                   topology=topology)

    def with_gpus(self, manifest: Mapping[str, Any], path: str) -> dict:
        """The member manifest with ``gpus`` of ``gpu_resource`` in its first container's requests
        and limits (the API server requires them equal for an extended resource)."""
        out = copy.deepcopy(dict(manifest))
        if isinstance(out.get("spec"), Mapping) and "schedulingGroup" in out["spec"]:
            raise SpecError(child(child(path, "spec"), "schedulingGroup"),
                            "set by the gang stream (each member names its gang's PodGroup): remove it")
        if not self.gpus:
            return out
        spec = out.get("spec") or {}
        if not isinstance(spec, Mapping):
            raise SpecError(child(path, "spec"), f"must be a mapping, got {type_name(spec)}")
        containers = spec.get("containers")
        if not isinstance(containers, list) or not containers or not isinstance(containers[0], Mapping):
            raise SpecError(child(child(path, "spec"), "containers"), "required: gang.gpus goes to the first container")
        first = dict(containers[0])
        first_path = child(child(child(path, "spec"), "containers"), 0)
        resources = first.get("resources") or {}
        if not isinstance(resources, Mapping):
            raise SpecError(child(first_path, "resources"), f"must be a mapping, got {type_name(resources)}")
        resources = dict(resources)
        for part in ("requests", "limits"):
            values = resources.get(part) or {}
            if not isinstance(values, Mapping):
                raise SpecError(child(child(first_path, "resources"), part), f"must be a mapping, got {type_name(values)}")
            values = dict(values)
            if self.gpu_resource in values:
                raise SpecError(child(child(child(child(child(path, "spec"), "containers"), 0), "resources"), part),
                                f"gives {self.gpu_resource} already: set it there or in gang.gpus, not both")
            values[self.gpu_resource] = str(self.gpus)
            resources[part] = values
        first["resources"] = resources
        out["spec"] = {**out["spec"], "containers": [first] + list(containers[1:])}
        return out


def pod_group_manifest(name: str, namespace: str, min_count: int, priority_class_name: str = "",
                       topology: str | None = None) -> dict:
    """A gang's PodGroup (``scheduling.k8s.io/v1beta1``), with a topology constraint on ``topology``."""
    spec: dict[str, Any] = {"schedulingPolicy": {"gang": {"minCount": int(min_count)}}}
    if priority_class_name:
        spec["priorityClassName"] = priority_class_name
    if topology:
        spec["schedulingConstraints"] = {"topology": [{"key": topology}]}
    return {"apiVersion": "scheduling.k8s.io/v1beta1", "kind": "PodGroup",
            "metadata": {"name": name, "namespace": namespace}, "spec": spec}


@dataclass
class GangStream(ArrivalStream):
    """An :class:`ArrivalStream` whose arrivals are gangs (``batch`` = members per gang, ``count``
    = gangs x members): see the module docstring."""

    gang: GangSpec = field(default_factory=lambda: GangSpec(1, 1))

    def _name_width(self, until: float | None) -> int:
        n = self.pod_bound(until) / max(self.batch, 1)
        return max(5, len(str(int(n) - 1))) if n != math.inf and n >= 1 else 5

    def arrivals(self, seed: int, until: float | None, priorities: Priorities) -> Iterator[PodArrival]:
        per = self.gang.pods
        width = self._name_width(until)
        duration = None
        for j, arrival in enumerate(super().arrivals(seed, until, priorities)):
            k, m = divmod(j, per)
            group = f"{self.name}-{k:0{width}d}"
            pod = arrival.pod
            manifest = None
            if m == 0:
                duration = arrival.duration  # drawn once per gang: the first member's
                manifest = pod_group_manifest(group, pod.namespace, self.gang.min_count, pod.priority_class_name,
                                              self.gang.topology)
            name = f"{group}-{m}"
            pod = pod.replace(name=name, uid=deterministic_uid("Pod", pod.namespace, name),
                              scheduling_group=PodSchedulingGroup(group))
            pod.admitted = arrival.pod.admitted
            yield PodArrival(arrival.time, pod, duration, self.name, arrival.claims, arrival.delete_claims,
                             group=manifest, gang=group)


# --------------------------------------------------------------------------------------------
# the metrics of a run
# --------------------------------------------------------------------------------------------
@dataclass
class GangRecord:
    """One gang of a run."""

    name: str  # namespace/name of its PodGroup
    stream: str
    pods: int
    min_count: int
    gpus_per_pod: int
    created: float
    started: float | None = None
    bound: int = 0

    @property
    def wait(self) -> float | None:
        return None if self.started is None else self.started - self.created

    CSV_FIELDS = ("name", "stream", "pods", "min_count", "gpus_per_pod", "created", "started", "wait", "bound")

    def as_row(self) -> dict:
        return {k: getattr(self, k) for k in self.CSV_FIELDS}


class GangTracker:
    """Follows a run's gangs: members created and bound, the GPUs held at Permit and the GPU
    fragmentation at each sample (see the module docstring)."""

    def __init__(self, streams: list[GangStream]):
        self.streams = streams
        self.gpu_resource = streams[0].gang.gpu_resource if streams else DEFAULT_GPU_RESOURCE
        self.gangs: dict[str, GangRecord] = {}
        self.member_of: dict[str, GangRecord] = {}  # pod uid -> its gang
        #: (cpu millis, memory bytes, gpus) of one member of each gang stream
        self.shapes: list[tuple[int, int, int]] = []
        for s in streams:
            req = s.mix[0].factory.template.requests
            self.shapes.append((int(req.get("cpu", 0)), int(req.get("memory", 0)),
                                int(s.gang.gpus or req.get(s.gang.gpu_resource, 0))))

    def arrived(self, event: PodArrival, uid: str, now: float) -> None:
        key = f"{event.pod.namespace}/{event.gang}"
        rec = self.gangs.get(key)
        if rec is None:
            stream = next(s for s in self.streams if s.name == event.stream)
            rec = self.gangs[key] = GangRecord(key, event.stream, stream.gang.pods, stream.gang.min_count,
                                               int(event.pod.requests.get(self.gpu_resource, 0)), now)
        self.member_of[uid] = rec

    def bound(self, uid: str, now: float) -> None:
        rec = self.member_of.get(uid)
        if rec is None:
            return
        rec.bound += 1
        if rec.started is None and rec.bound >= rec.min_count:
            rec.started = now

    def held_at_permit(self, waiting: Mapping[str, Any]) -> int:
        """GPUs requested by gang members waiting at Permit (``waiting``: the scheduler's uid ->
        pending binding, each with its ``assumed`` pod)."""
        total = 0
        for uid, pending in waiting.items():
            if uid in self.member_of:
                total += int(pending.assumed.requests.get(self.gpu_resource, 0))
        return total

    def fragmentation(self, table: Any) -> tuple[float, int, int]:
        """(GPU fragmentation, free GPUs, stranded free GPUs) over live, uncordoned nodes."""
        col = table.resource_index.get(self.gpu_resource)
        if col is None or col >= table.alloc.shape[1]:
            return 0.0, 0, 0
        return stranded(table, col, self.shapes)

    def waiting(self) -> int:
        """Gangs created and not started."""
        return sum(1 for g in self.gangs.values() if g.started is None)

    def summary(self, samples: list[dict], percentiles: Any) -> dict:
        """The summary's ``gangs`` (``percentiles``: the simulation's percentile summary of a list)."""
        gangs = list(self.gangs.values())
        held = [s.get("gang_gpus_held_at_permit", 0) for s in samples]
        frag = [s.get("gpu_fragmentation", 0.0) for s in samples]
        never = [g.name for g in gangs if g.started is None]
        return {
            "total": len(gangs),
            "started": len(gangs) - len(never),
            "never_started": len(never),
            "wait_seconds": percentiles([g.wait for g in gangs if g.wait is not None]),
            "gpus_held_at_permit": {"max": max(held, default=0), "mean": float(np.mean(held)) if held else 0.0,
                                    "final": held[-1] if held else 0},
            "gpu_fragmentation": {"final": frag[-1] if frag else 0.0, "mean": float(np.mean(frag)) if frag else 0.0,
                                  "max": float(np.max(frag)) if frag else 0.0, "definition": GPU_FRAGMENTATION_DOC},
            "gpu_resource": self.gpu_resource,
            "never_started_gangs": never[:20],
        }
