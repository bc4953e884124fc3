"""Framework data types (upstream ``pkg/scheduler/framework/types.go`` and the fwk interfaces).

``NodeInfo`` here is the per-node aggregate upstream keeps: the node, its pods and the sums the
plugins read. The columnar snapshot builds on it; one-node-at-a-time plugins read these fields.
"""
from __future__ import annotations

import dataclasses
import enum
import itertools
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Iterable, Iterator, Mapping

from ..errors import FastschedError
from .status import Code, Status

if TYPE_CHECKING:  # pragma: no cover
    from ..api import Node, Pod

CPU = "cpu"
MEMORY = "memory"
EPHEMERAL_STORAGE = "ephemeral-storage"
PODS = "pods"

_generation = itertools.count(1)


def next_generation() -> int:
    """A process-wide increasing counter (upstream ``nextGeneration``)."""
    return next(_generation)


# ------------------------------------------------------------------------------------------------
# Resource
# ------------------------------------------------------------------------------------------------
@dataclass
class Resource:
    """Compute resources (upstream ``framework.Resource``): cpu in millicores, the rest in units."""

    milli_cpu: int = 0
    memory: int = 0
    ephemeral_storage: int = 0
    allowed_pod_number: int = 0
    scalar_resources: dict[str, int] = field(default_factory=dict)

    @classmethod
    def from_dict(cls, amounts: Mapping[str, int]) -> "Resource":
        """From a resource-name -> amount map (``cpu`` already in millicores; ``pods`` is the pod cap)."""
        r = cls()
        r.add_dict(amounts)
        return r

    def add_dict(self, amounts: Mapping[str, int], sign: int = 1) -> None:
        for name, v in amounts.items():
            v = sign * int(v)
            if name == CPU:
                self.milli_cpu += v
            elif name == MEMORY:
                self.memory += v
            elif name == EPHEMERAL_STORAGE:
                self.ephemeral_storage += v
            elif name == PODS:
                self.allowed_pod_number += v
            else:
                self.scalar_resources[name] = self.scalar_resources.get(name, 0) + v

    def get(self, name: str) -> int:
        if name == CPU:
            return self.milli_cpu
        if name == MEMORY:
            return self.memory
        if name == EPHEMERAL_STORAGE:
            return self.ephemeral_storage
        if name == PODS:
            return self.allowed_pod_number
        return self.scalar_resources.get(name, 0)

    def to_dict(self) -> dict[str, int]:
        d = {CPU: self.milli_cpu, MEMORY: self.memory, EPHEMERAL_STORAGE: self.ephemeral_storage,
             PODS: self.allowed_pod_number}
        d.update(self.scalar_resources)
        return d

    def clone(self) -> "Resource":
        return dataclasses.replace(self, scalar_resources=dict(self.scalar_resources))


# ------------------------------------------------------------------------------------------------
# Pods
# ------------------------------------------------------------------------------------------------
class PodInfo:
    """A pod with the data the scheduler derives from it once (upstream ``PodInfo``)."""

    __slots__ = ("pod", "requests", "non_zero_requests")

    def __init__(self, pod: "Pod"):
        self._set(pod)

    def _set(self, pod: "Pod") -> None:
        self.pod = pod
        #: effective requests, no non-zero defaults, with overhead
        self.requests: Mapping[str, int] = pod.requests
        #: requests with upstream's non-zero cpu/memory defaults, with overhead
        self.non_zero_requests: Mapping[str, int] = pod.non_zero_requests

    def get_pod(self) -> "Pod":
        return self.pod

    def update(self, pod: "Pod") -> None:
        self._set(pod)

    @property
    def has_affinity(self) -> bool:
        a = self.pod.affinity
        return a is not None and (a.pod_affinity is not None or a.pod_anti_affinity is not None)

    @property
    def has_required_anti_affinity(self) -> bool:
        a = self.pod.affinity
        return a is not None and a.pod_anti_affinity is not None and bool(a.pod_anti_affinity.required)

    def __repr__(self) -> str:
        return f"PodInfo({self.pod.namespace}/{self.pod.name})"


class QueuedPodInfo:
    """A pod in the scheduling queue with its queueing bookkeeping (upstream ``QueuedPodInfo``)."""

    __slots__ = ("pod_info", "timestamp", "attempts", "initial_attempt_timestamp",
                 "unschedulable_plugins", "pending_plugins", "gated", "gating_plugin", "gating_message",
                 "unschedulable_count", "consecutive_errors_count", "backoff_expiration", "pod_signature",
                 "flush_timestamp", "was_flushed_from_unschedulable", "pod_only_passed")

    def __init__(self, pod_info: PodInfo, timestamp: float = 0.0):
        self.pod_info = pod_info
        self.timestamp = timestamp
        self.attempts = 0
        self.initial_attempt_timestamp: float | None = None
        self.unschedulable_plugins: set[str] = set()
        self.pending_plugins: set[str] = set()
        self.gated = False
        self.gating_plugin = ""
        #: the message of the PreEnqueue status that gates the pod ("" when not gated)
        self.gating_message = ""
        self.unschedulable_count = 0
        self.consecutive_errors_count = 0
        self.backoff_expiration: float | None = None
        #: the pod's signature for opportunistic batching (``Framework.sign_pod``), computed by the
        #: queue when the pod is added or updated; None: not signable (or batching off)
        self.pod_signature: Any = None
        #: the last time the unschedulable-timeout flush moved the pod (None: never since its last
        #: attempt); a gated pod the flush re-checked is flushed again only
        #: podMaxInUnschedulablePodsDuration later (upstream ``FlushTimestamp``)
        self.flush_timestamp: float | None = None
        #: whether the pod's latest move to activeQ/backoffQ was that flush (upstream
        #: ``WasFlushedFromUnschedulable``: set by the flush, cleared by a failure or a gating)
        self.was_flushed_from_unschedulable = False
        #: the pod object the profile's PreEnqueue plugin that answers from the pod object alone
        #: (``pre_enqueue_pod_only``) last let through: the queue does not ask it again for the
        #: same object (a gang's release pass runs every member's plugins; None: not known)
        self.pod_only_passed: Any = None

    @property
    def pod(self) -> "Pod":
        return self.pod_info.pod

    def get_pod_info(self) -> PodInfo:
        return self.pod_info

    def __repr__(self) -> str:
        return f"QueuedPodInfo({self.pod.namespace}/{self.pod.name}, attempts={self.attempts})"


# ------------------------------------------------------------------------------------------------
# NodeInfo
# ------------------------------------------------------------------------------------------------
@dataclass
class ImageStateSummary:
    """An image on a node: its size and how many nodes in the snapshot have it."""

    size: int
    num_nodes: int = 1


#: (ip, protocol, port) with upstream's defaults applied ("0.0.0.0", "TCP")
HostPort = tuple


class HostPortInfo:
    """Host ports in use on a node, with upstream's wildcard-IP conflict rule."""

    __slots__ = ("_ports",)

    _ANY = "0.0.0.0"

    def __init__(self) -> None:
        # ip -> {(protocol, port): count}
        self._ports: dict[str, dict[tuple[str, int], int]] = {}

    def add(self, ip: str, protocol: str, port: int) -> None:
        if port <= 0:
            return
        ip, protocol = ip or self._ANY, protocol or "TCP"
        d = self._ports.setdefault(ip, {})
        d[(protocol, port)] = d.get((protocol, port), 0) + 1

    def remove(self, ip: str, protocol: str, port: int) -> None:
        if port <= 0:
            return
        ip, protocol = ip or self._ANY, protocol or "TCP"
        d = self._ports.get(ip)
        if not d or (protocol, port) not in d:
            return
        d[(protocol, port)] -= 1
        if d[(protocol, port)] <= 0:
            del d[(protocol, port)]
        if not d:
            del self._ports[ip]

    def check_conflict(self, ip: str, protocol: str, port: int) -> bool:
        """True when (ip, protocol, port) collides with a port in use (upstream ``CheckConflict``)."""
        if port <= 0:
            return False
        ip, protocol = ip or self._ANY, protocol or "TCP"
        key = (protocol, port)
        if ip == self._ANY:
            return any(key in d for d in self._ports.values())
        return key in self._ports.get(ip, ()) or key in self._ports.get(self._ANY, ())

    def __len__(self) -> int:
        return sum(len(d) for d in self._ports.values())

    def items(self) -> Iterator[tuple[str, str, int]]:
        for ip, d in self._ports.items():
            for (proto, port) in d:
                yield ip, proto, port

    def clone(self) -> "HostPortInfo":
        c = HostPortInfo()
        c._ports = {ip: dict(d) for ip, d in self._ports.items()}
        return c


class NodeInfo:
    """Node-level aggregated information (upstream ``NodeInfo``).

    ``requested`` sums the pods' effective requests; ``non_zero_requested`` the same with upstream's
    non-zero cpu/memory defaults; ``allocatable`` comes from ``node.status.allocatable``
    (``allocatable.allowed_pod_number`` is the ``pods`` entry).
    """

    __slots__ = ("_node", "pods", "pods_with_affinity", "pods_with_required_anti_affinity",
                 "used_ports", "requested", "non_zero_requested", "allocatable", "image_states",
                 "pvc_ref_counts", "generation")

    def __init__(self, node: "Node | None" = None, pods: Iterable["Pod | PodInfo"] = ()):
        self._node: Node | None = None
        self.pods: list[PodInfo] = []
        self.pods_with_affinity: list[PodInfo] = []
        self.pods_with_required_anti_affinity: list[PodInfo] = []
        self.used_ports = HostPortInfo()
        self.requested = Resource()
        self.non_zero_requested = Resource()
        self.allocatable = Resource()
        self.image_states: dict[str, ImageStateSummary] = {}
        self.pvc_ref_counts: dict[str, int] = {}
        self.generation = next_generation()
        if node is not None:
            self.set_node(node)
        for p in pods:
            self.add_pod(p)

    # -- node ----------------------------------------------------------------------------------
    def node(self) -> "Node":
        """The Node. A NodeInfo is handed to plugins only once it has one (upstream's snapshot skips
        a NodeInfo whose node was deleted), which is what ``protocols.NodeInfo`` promises them; it
        is None only for a NodeInfo built without a node or after :meth:`remove_node`."""
        # the attribute is "Node | None" for those two states; no NodeInfo in either is read
        # through node() (an assert here would cost every plugin call)
        return self._node  # type: ignore[return-value]

    @property
    def name(self) -> str:
        return self._node.name if self._node is not None else ""

    def set_node(self, node: "Node") -> None:
        self._node = node
        self.allocatable = Resource.from_dict(node.allocatable)
        self.image_states = {}
        for img in getattr(node, "images", ()) or ():
            for name in img.names:
                self.image_states[name] = ImageStateSummary(size=img.size_bytes, num_nodes=1)
        self.generation = next_generation()

    def remove_node(self) -> None:
        self._node = None
        self.generation = next_generation()

    # -- pods ----------------------------------------------------------------------------------
    def add_pod(self, pod: "Pod | PodInfo") -> None:
        self.add_pod_info(pod if isinstance(pod, PodInfo) else PodInfo(pod))

    def add_pod_info(self, pi: PodInfo) -> None:
        self.pods.append(pi)
        if pi.has_affinity:
            self.pods_with_affinity.append(pi)
        if pi.has_required_anti_affinity:
            self.pods_with_required_anti_affinity.append(pi)
        self._update(pi, +1)

    def remove_pod(self, pod: "Pod") -> None:
        """Remove the pod with ``pod``'s UID; raises KeyError when it is not on this node."""
        uid = pod.uid
        for lst in (self.pods_with_affinity, self.pods_with_required_anti_affinity):
            for i, pi in enumerate(lst):
                if pi.pod.uid == uid:
                    lst[i] = lst[-1]
                    lst.pop()
                    break
        for i, pi in enumerate(self.pods):
            if pi.pod.uid == uid:
                self.pods[i] = self.pods[-1]
                self.pods.pop()
                self._update(pi, -1)
                return
        raise KeyError(f"no corresponding pod {pod.name} in pods of node {self.name}")

    def _update(self, pi: PodInfo, sign: int) -> None:
        self.requested.add_dict(pi.requests, sign)
        nz = pi.non_zero_requests
        self.non_zero_requested.milli_cpu += sign * nz.get(CPU, 0)
        self.non_zero_requested.memory += sign * nz.get(MEMORY, 0)
        for ip, proto, port in pi.pod.host_ports:
            if sign > 0:
                self.used_ports.add(ip, proto, port)
            else:
                self.used_ports.remove(ip, proto, port)
        self.generation = next_generation()

    # -- copies ------------------------------------------------------------------------------------
    def snapshot(self) -> "NodeInfo":
        """A copy whose pod lists and sums are independent of this one (upstream ``Snapshot``)."""
        c = NodeInfo.__new__(NodeInfo)
        c._node = self._node
        c.pods = list(self.pods)
        c.pods_with_affinity = list(self.pods_with_affinity)
        c.pods_with_required_anti_affinity = list(self.pods_with_required_anti_affinity)
        c.used_ports = self.used_ports.clone()
        c.requested = self.requested.clone()
        c.non_zero_requested = self.non_zero_requested.clone()
        c.allocatable = self.allocatable.clone()
        c.image_states = dict(self.image_states)
        c.pvc_ref_counts = dict(self.pvc_ref_counts)
        c.generation = self.generation
        return c

    clone = snapshot

    def __repr__(self) -> str:
        return f"NodeInfo({self.name!r}, pods={len(self.pods)})"


# ------------------------------------------------------------------------------------------------
# Results exchanged with the runtime
# ------------------------------------------------------------------------------------------------
class PreFilterResult:
    """The nodes a PreFilter plugin narrows scheduling to; ``node_names=None`` means all nodes."""

    __slots__ = ("node_names",)

    def __init__(self, node_names: Iterable[str] | None = None):
        self.node_names: frozenset[str] | None = None if node_names is None else frozenset(node_names)

    def all_nodes(self) -> bool:
        return self.node_names is None

    def merge(self, other: "PreFilterResult | None") -> "PreFilterResult | None":
        """Upstream ``Merge``: both all -> all (None); one all -> the other; else the intersection."""
        return merge_pre_filter_results(self, other)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, PreFilterResult) and self.node_names == other.node_names

    def __repr__(self) -> str:
        return "PreFilterResult(all)" if self.node_names is None else f"PreFilterResult({sorted(self.node_names)})"


def merge_pre_filter_results(a: PreFilterResult | None, b: PreFilterResult | None) -> PreFilterResult | None:
    a_names = None if a is None else a.node_names  # None: all nodes
    b_names = None if b is None else b.node_names
    if a_names is None and b_names is None:
        return None
    if a_names is None:
        return PreFilterResult(b_names)
    if b_names is None:
        return PreFilterResult(a_names)
    return PreFilterResult(a_names & b_names)


class NominatingMode(enum.IntEnum):
    NOOP = 0
    OVERRIDE = 1


@dataclass
class NominatingInfo:
    nominated_node_name: str = ""
    nominating_mode: NominatingMode = NominatingMode.NOOP

    def mode(self) -> NominatingMode:
        return self.nominating_mode


@dataclass
class PostFilterResult:
    nominating_info: NominatingInfo | None = None

    @classmethod
    def nominating(cls, node_name: str, mode: NominatingMode = NominatingMode.OVERRIDE) -> "PostFilterResult":
        return cls(NominatingInfo(node_name, mode))

    def mode(self) -> NominatingMode:
        return NominatingMode.NOOP if self.nominating_info is None else self.nominating_info.nominating_mode


@dataclass
class NodeScore:
    """One node's score from one plugin; NormalizeScore mutates ``score`` in place."""

    name: str
    score: int


NodeScoreList = list  # list[NodeScore]


@dataclass
class PluginScore:
    name: str
    score: int


@dataclass
class NodePluginScores:
    """A node's weighted score per plugin and their total (upstream ``NodePluginScores``)."""

    name: str
    scores: list[PluginScore] = field(default_factory=list)
    total_score: int = 0


class NodeToStatus:
    """Per-node filter statuses plus the status of nodes absent from the map (upstream ``NodeToStatus``)."""

    def __init__(self, statuses: Mapping[str, Status] | None = None, absent: Status | None = None):
        self._map: dict[str, Status] = dict(statuses or {})
        self._absent = absent if absent is not None else Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE)

    def get(self, node_name: str) -> Status:
        return self._map.get(node_name, self._absent)

    def set(self, node_name: str, status: Status) -> None:
        self._map[node_name] = status

    def len(self) -> int:
        return len(self._map)

    __len__ = len

    def absent_nodes_status(self) -> Status:
        return self._absent

    def set_absent_nodes_status(self, status: Status) -> None:
        self._absent = status

    def items(self):
        return self._map.items()

    def reason_histogram(self) -> dict[str, int]:
        """reason -> how many explicit entries carry it (each of a status's reasons counts once
        per entry): the FitError message's counts, absent nodes aside. Subclasses that keep
        their statuses as arrays count them there."""
        counts: dict[str, int] = {}
        for _, status in self.items():
            for r in status.reasons():
                counts[r] = counts.get(r, 0) + 1
        return counts

    def for_each_explicit_node(self, fn) -> None:
        for name, s in self._map.items():
            fn(name, s)

    def nodes_for_status_code(self, node_names: Iterable[str], code: Code) -> list[str]:
        """Names (from ``node_names``, in order) whose status, explicit or absent, has ``code``."""
        if self._absent.code() == code:
            return [n for n in node_names if self.get(n).code() == code]
        return [n for n, s in self._map.items() if s.code() == code]


class WaitingPod:
    """The view of a pod waiting at Permit that plugins get (upstream ``WaitingPod`` interface)."""

    def get_pod(self) -> "Pod":  # pragma: no cover - interface
        raise NotImplementedError

    def get_pending_plugins(self) -> list[str]:  # pragma: no cover - interface
        raise NotImplementedError

    def allow(self, plugin_name: str) -> None:  # pragma: no cover - interface
        raise NotImplementedError

    def reject(self, plugin_name: str, msg: str) -> bool:  # pragma: no cover - interface
        raise NotImplementedError

    def preempt(self, plugin_name: str, msg: str) -> bool:  # pragma: no cover - interface
        """Stop the pod as a preemption victim (v1.37): it goes back to the queue's backoffQ."""
        raise NotImplementedError


def pod_key(pod: Any) -> str:
    return f"{pod.namespace}/{pod.name}"


# ------------------------------------------------------------------------------------------------
# Scheduling failure diagnosis (upstream FitError / Diagnosis)
# ------------------------------------------------------------------------------------------------
NO_NODE_AVAILABLE_MSG = "0/{} nodes are available"


@dataclass
class Diagnosis:
    """Why a pod did not fit: per-node statuses and the plugins that rejected it."""

    node_to_status: NodeToStatus = field(default_factory=NodeToStatus)
    unschedulable_plugins: set[str] = field(default_factory=set)
    pending_plugins: set[str] = field(default_factory=set)
    pre_filter_msg: str = ""
    post_filter_msg: str = ""


class FitError(FastschedError):
    """No node fits the pod; ``str()`` is upstream's ``0/N nodes are available: ...`` message."""

    def __init__(self, pod: Any, num_all_nodes: int, diagnosis: Diagnosis):
        super().__init__()
        self.pod = pod
        self.num_all_nodes = num_all_nodes
        self.diagnosis = diagnosis

    def reason_histogram(self) -> dict[str, int]:
        """reason -> number of nodes giving it (explicit statuses plus the absent nodes' status)."""
        nts = self.diagnosis.node_to_status
        counts: dict[str, int] = {}
        # (a map of another class, holding items() alone, is counted as NodeToStatus counts)
        hist = getattr(nts, "reason_histogram", None)
        counts.update(hist() if hist is not None else NodeToStatus.reason_histogram(nts))
        missing = self.num_all_nodes - nts.len()
        if missing > 0:
            for r in nts.absent_nodes_status().reasons():
                counts[r] = counts.get(r, 0) + missing
        return counts

    def __str__(self) -> str:
        d = self.diagnosis
        # the text up to the PostFilter message follows from the node count, the PreFilter
        # message and the histogram alone: built once per distinct one (every preemptor of a wave
        # fails alike, only its PostFilter message names its own node; the formatting and sort of
        # the histogram's parts were a part of each failure's handling: issue 29)
        hist = None if d.pre_filter_msg else tuple(self.reason_histogram().items())
        key = (self.num_all_nodes, d.pre_filter_msg, hist)
        msg = _FIT_TEXTS.get(key)
        if msg is None:
            msg = NO_NODE_AVAILABLE_MSG.format(self.num_all_nodes) + ":"
            if d.pre_filter_msg:
                msg += f" {d.pre_filter_msg}."
            else:
                parts = sorted(f"{v} {k}" for k, v in hist)  # type: ignore[union-attr]
                if parts:
                    msg += f" {', '.join(parts)}."
            if len(_FIT_TEXTS) >= _FIT_TEXTS_MAX:
                _FIT_TEXTS.clear()  # (a bound: many distinct diagnoses only rebuild their texts)
            _FIT_TEXTS[key] = msg
        if d.post_filter_msg:
            msg += f" {d.post_filter_msg}"
        return msg


#: FitError texts before the PostFilter message, by (node count, PreFilter message, histogram
#: items or None)
_FIT_TEXTS: dict[tuple, str] = {}
_FIT_TEXTS_MAX = 1024
