"""Plugin interfaces, one abstract class per extension point (upstream ``k8s.io/kube-scheduler/framework``).

Method names are upstream's in snake_case, with Go's ``context.Context`` argument dropped. As in
Go, where a type satisfies an interface by having its methods, a class that defines an extension
point's required methods counts as that plugin kind even without subclassing (``isinstance`` checks
the methods); subclassing the ABC is the documented way and gives the optional methods' defaults.

Return conventions: a ``Status`` or ``None`` (Success). Methods returning two values upstream return
a tuple here: ``pre_filter -> (PreFilterResult | None, Status | None)``, ``score -> (int, Status | None)``,
``post_filter -> (PostFilterResult | None, Status | None)``, ``permit -> (Status | None, timeout_seconds)``.
"""
from __future__ import annotations

import abc
import enum
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable, Sequence

from .cycle_state import CycleState
from .status import Status
from .types import (NodeInfo, NodeScore, NodeToStatus, PodInfo, PostFilterResult, PreFilterResult,
                    QueuedPodInfo, WaitingPod)

if TYPE_CHECKING:  # pragma: no cover
    from ..api import Pod
    from .parallelize import Parallelizer


class _Interface(abc.ABC):
    """Base for plugin interfaces: structural ``isinstance`` on the interface's required methods."""

    _required: tuple[str, ...] = ()

    @classmethod
    def __subclasshook__(cls, sub):
        req = cls.__dict__.get("_required")
        if not req:
            return NotImplemented
        for name in req + ("name",):
            if not any(name in B.__dict__ and B.__dict__[name] is not None for B in sub.__mro__):
                return NotImplemented
        return True


class Plugin(_Interface):
    """The parent of every plugin: it has a name."""

    _required = ("name",)

    @abc.abstractmethod
    def name(self) -> str:
        """The plugin's name, as used in the configuration."""


class PreEnqueuePlugin(Plugin):
    _required = ("pre_enqueue",)

    @abc.abstractmethod
    def pre_enqueue(self, pod: "Pod") -> Status | None:
        """Success lets the pod into activeQ; anything else keeps it gated."""


class QueueSortPlugin(Plugin):
    _required = ("less",)

    @abc.abstractmethod
    def less(self, a: QueuedPodInfo, b: QueuedPodInfo) -> bool:
        """Whether ``a`` goes before ``b`` in activeQ."""

    # fastsched extension, optional: ``sort_key(info)`` returning a key with
    # ``less(a, b) == (sort_key(a) < sort_key(b))`` lets the queue order activeQ with C heapq instead
    # of calling ``less`` at every heap step. A plugin without it is ordered by ``less``.


class PreFilterExtensions(_Interface):
    """Incremental updates of a PreFilter plugin's cycle state (used by preemption, nominated pods)."""

    _required = ("add_pod", "remove_pod")

    @classmethod
    def __subclasshook__(cls, sub):
        if cls is not PreFilterExtensions:
            return NotImplemented
        if all(any(m in B.__dict__ for B in sub.__mro__) for m in cls._required):
            return True
        return NotImplemented

    @abc.abstractmethod
    def add_pod(self, state: CycleState, pod_to_schedule: "Pod", pod_info_to_add: PodInfo,
                node_info: NodeInfo) -> Status | None: ...

    @abc.abstractmethod
    def remove_pod(self, state: CycleState, pod_to_schedule: "Pod", pod_info_to_remove: PodInfo,
                   node_info: NodeInfo) -> Status | None: ...


class PreFilterPlugin(Plugin):
    _required = ("pre_filter",)

    @abc.abstractmethod
    def pre_filter(self, state: CycleState, pod: "Pod",
                   nodes: Sequence[NodeInfo]) -> tuple[PreFilterResult | None, Status | None]:
        """Pre-process the pod; Skip disables the coupled Filter for this cycle."""

    def pre_filter_extensions(self) -> PreFilterExtensions | None:
        """The AddPod/RemovePod extensions, or None."""
        return None


class FilterPlugin(Plugin):
    _required = ("filter",)

    @abc.abstractmethod
    def filter(self, state: CycleState, pod: "Pod", node_info: NodeInfo) -> Status | None:
        """Whether the pod fits the node: Success, Unschedulable or UnschedulableAndUnresolvable."""


class PostFilterPlugin(Plugin):
    _required = ("post_filter",)

    @abc.abstractmethod
    def post_filter(self, state: CycleState, pod: "Pod",
                    filtered_node_status_map: NodeToStatus) -> tuple[PostFilterResult | None, Status | None]:
        """Called when no node fits (e.g. preemption)."""


class PreScorePlugin(Plugin):
    _required = ("pre_score",)

    @abc.abstractmethod
    def pre_score(self, state: CycleState, pod: "Pod", nodes: Sequence[NodeInfo]) -> Status | None:
        """Pre-process the feasible nodes; Skip disables the coupled Score for this cycle."""


class ScoreExtensions(_Interface):
    _required = ("normalize_score",)

    @classmethod
    def __subclasshook__(cls, sub):
        if cls is not ScoreExtensions:
            return NotImplemented
        if any("normalize_score" in B.__dict__ for B in sub.__mro__):
            return True
        return NotImplemented

    @abc.abstractmethod
    def normalize_score(self, state: CycleState, pod: "Pod", scores: list[NodeScore]) -> Status | None:
        """Rewrite ``scores[i].score`` in place into [MIN_NODE_SCORE, MAX_NODE_SCORE]."""


class ScorePlugin(Plugin):
    _required = ("score",)

    @abc.abstractmethod
    def score(self, state: CycleState, pod: "Pod", node_info: NodeInfo) -> tuple[int, Status | None]:
        """The node's raw score."""

    def score_extensions(self) -> ScoreExtensions | None:
        """The NormalizeScore extension, or None."""
        return None


class ReservePlugin(Plugin):
    _required = ("reserve", "unreserve")

    @abc.abstractmethod
    def reserve(self, state: CycleState, pod: "Pod", node_name: str) -> Status | None: ...

    @abc.abstractmethod
    def unreserve(self, state: CycleState, pod: "Pod", node_name: str) -> None: ...


class PreBindPlugin(Plugin):
    _required = ("pre_bind",)

    def pre_bind_pre_flight(self, state: CycleState, pod: "Pod", node_name: str) -> Status | None:
        """Success when PreBind will do work, Skip when it has nothing to do (default: Success)."""
        return None

    @abc.abstractmethod
    def pre_bind(self, state: CycleState, pod: "Pod", node_name: str) -> Status | None: ...


class PostBindPlugin(Plugin):
    _required = ("post_bind",)

    @abc.abstractmethod
    def post_bind(self, state: CycleState, pod: "Pod", node_name: str) -> None: ...


class PermitPlugin(Plugin):
    _required = ("permit",)

    @abc.abstractmethod
    def permit(self, state: CycleState, pod: "Pod", node_name: str) -> tuple[Status | None, float]:
        """Success, a rejection, or Wait with a timeout in seconds (capped at 15 minutes)."""


class BindPlugin(Plugin):
    _required = ("bind",)

    @abc.abstractmethod
    def bind(self, state: CycleState, pod: "Pod", node_name: str) -> Status | None:
        """Bind the pod; Skip hands it to the next Bind plugin."""


# ------------------------------------------------------------------------------------------------
# Cluster events and queueing hints (EnqueueExtensions)
# ------------------------------------------------------------------------------------------------
class ActionType(enum.IntFlag):
    ADD = 1
    DELETE = 2
    UPDATE_NODE_ALLOCATABLE = 4
    UPDATE_NODE_LABEL = 8
    UPDATE_NODE_TAINT = 16
    UPDATE_NODE_CONDITION = 32
    UPDATE_NODE_ANNOTATION = 64
    UPDATE_POD_LABEL = 128
    UPDATE_POD_SCALE_DOWN = 256
    UPDATE_POD_TOLERATIONS = 512
    UPDATE_POD_SCHEDULING_GATES_ELIMINATED = 1024
    UPDATE_POD_GENERATED_RESOURCE_CLAIM = 2048
    UPDATE_NODE_DECLARED_FEATURE = 4096
    UPDATE = (UPDATE_NODE_ALLOCATABLE | UPDATE_NODE_LABEL | UPDATE_NODE_TAINT | UPDATE_NODE_CONDITION
              | UPDATE_NODE_ANNOTATION | UPDATE_POD_LABEL | UPDATE_POD_SCALE_DOWN | UPDATE_POD_TOLERATIONS
              | UPDATE_POD_SCHEDULING_GATES_ELIMINATED | UPDATE_POD_GENERATED_RESOURCE_CLAIM
              | UPDATE_NODE_DECLARED_FEATURE)
    ALL = ADD | DELETE | UPDATE


class EventResource(str, enum.Enum):
    POD = "Pod"
    ASSIGNED_POD = "AssignedPod"
    UNSCHEDULED_POD = "UnschedulablePod"
    NODE = "Node"
    PERSISTENT_VOLUME = "PersistentVolume"
    PERSISTENT_VOLUME_CLAIM = "PersistentVolumeClaim"
    CSI_NODE = "storage.k8s.io/CSINode"
    STORAGE_CLASS = "storage.k8s.io/StorageClass"
    NAMESPACE = "Namespace"
    WILDCARD = "*"


@dataclass(frozen=True)
class ClusterEvent:
    resource: EventResource
    action_type: ActionType
    label: str = ""

    def is_wildcard(self) -> bool:
        return self.resource == EventResource.WILDCARD and self.action_type == ActionType.ALL


class QueueingHint(enum.IntEnum):
    QUEUE_SKIP = 0
    QUEUE = 1


QueueingHintFn = Callable[[Any, Any, Any], tuple[QueueingHint, Any]]


@dataclass(frozen=True)
class ClusterEventWithHint:
    event: ClusterEvent
    queueing_hint_fn: QueueingHintFn | None = None


class EnqueueExtensions(_Interface):
    _required = ("events_to_register",)

    @classmethod
    def __subclasshook__(cls, sub):
        if cls is not EnqueueExtensions:
            return NotImplemented
        if any("events_to_register" in B.__dict__ for B in sub.__mro__):
            return True
        return NotImplemented

    @abc.abstractmethod
    def events_to_register(self) -> list[ClusterEventWithHint]:
        """The cluster events that may make a pod this plugin rejected schedulable."""


# ------------------------------------------------------------------------------------------------
# Listers, nominator, handle
# ------------------------------------------------------------------------------------------------
class NodeInfoLister(abc.ABC):
    @abc.abstractmethod
    def list(self) -> list[NodeInfo]:
        """All nodes, in the snapshot's order."""

    @abc.abstractmethod
    def have_pods_with_affinity_list(self) -> list[NodeInfo]: ...

    @abc.abstractmethod
    def have_pods_with_required_anti_affinity_list(self) -> list[NodeInfo]: ...

    @abc.abstractmethod
    def get(self, node_name: str) -> NodeInfo:
        """The node named ``node_name``; raises KeyError when absent."""


class SharedLister(abc.ABC):
    @abc.abstractmethod
    def node_infos(self) -> NodeInfoLister: ...


class PodNominator(abc.ABC):
    """Keeps the pods nominated to run on nodes (upstream ``PodNominator``)."""

    @abc.abstractmethod
    def add_nominated_pod(self, pod_info: PodInfo, nominating_info: Any | None) -> None: ...

    @abc.abstractmethod
    def delete_nominated_pod_if_exists(self, pod: "Pod") -> None: ...

    @abc.abstractmethod
    def update_nominated_pod(self, old_pod: "Pod", new_pod_info: PodInfo) -> None: ...

    @abc.abstractmethod
    def nominated_pods_for_node(self, node_name: str) -> list[PodInfo]: ...


class PodActivator(abc.ABC):
    @abc.abstractmethod
    def activate(self, pods: dict[str, "Pod"]) -> None: ...


class Handle(abc.ABC):
    """What a plugin factory receives as ``handle``: the framework's services (upstream ``Handle``)."""

    @abc.abstractmethod
    def snapshot_shared_lister(self) -> SharedLister | None: ...

    @abc.abstractmethod
    def iterate_over_waiting_pods(self, callback: Callable[[WaitingPod], None]) -> None: ...

    @abc.abstractmethod
    def get_waiting_pod(self, uid: str) -> WaitingPod | None: ...

    @abc.abstractmethod
    def reject_waiting_pod(self, uid: str) -> bool: ...

    @abc.abstractmethod
    def nominated_pods_for_node(self, node_name: str) -> list[PodInfo]: ...

    @abc.abstractmethod
    def run_filter_plugins_with_nominated_pods(self, state: CycleState, pod: "Pod",
                                               node_info: NodeInfo) -> Status | None: ...

    @abc.abstractmethod
    def run_pre_filter_extension_add_pod(self, state: CycleState, pod_to_schedule: "Pod",
                                         pod_info_to_add: PodInfo, node_info: NodeInfo) -> Status | None: ...

    @abc.abstractmethod
    def run_pre_filter_extension_remove_pod(self, state: CycleState, pod_to_schedule: "Pod",
                                            pod_info_to_remove: PodInfo, node_info: NodeInfo) -> Status | None: ...

    @abc.abstractmethod
    def extenders(self) -> list: ...

    @abc.abstractmethod
    def parallelizer(self) -> "Parallelizer": ...


#: The plugin interfaces per extension point, keyed by the config's snake_case extension point name,
#: with upstream's Go interface name (used in error messages).
EXTENSION_POINT_INTERFACES: dict[str, tuple[type, str]] = {
    "pre_filter": (PreFilterPlugin, "PreFilterPlugin"),
    "filter": (FilterPlugin, "FilterPlugin"),
    "post_filter": (PostFilterPlugin, "PostFilterPlugin"),
    "reserve": (ReservePlugin, "ReservePlugin"),
    "pre_score": (PreScorePlugin, "PreScorePlugin"),
    "score": (ScorePlugin, "ScorePlugin"),
    "pre_bind": (PreBindPlugin, "PreBindPlugin"),
    "bind": (BindPlugin, "BindPlugin"),
    "post_bind": (PostBindPlugin, "PostBindPlugin"),
    "permit": (PermitPlugin, "PermitPlugin"),
    "pre_enqueue": (PreEnqueuePlugin, "PreEnqueuePlugin"),
    "queue_sort": (QueueSortPlugin, "QueueSortPlugin"),
}
