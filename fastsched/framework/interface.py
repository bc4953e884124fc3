"""Plugin interfaces, one abstract class per extension point (upstream ``k8s.io/kube-scheduler/framework``).

Method names are upstream's in snake_case, with Go's ``context.Context`` argument dropped. As in
Go, where a type satisfies an interface by having its methods, a class that defines an extension
point's required methods counts as that plugin kind even without subclassing (``isinstance`` checks
the methods); subclassing the ABC is the documented way and gives the optional methods' defaults.

What a plugin is handed (``node_info``, the node list, the factory's ``handle``) is typed with the
Protocols of :mod:`fastsched.framework.protocols`, upstream's staging interfaces; the listers and the
Handle are defined there and re-exported here.

Return conventions: a ``Status`` or ``None`` (Success). Methods returning two values upstream return
a tuple here: ``pre_filter -> (PreFilterResult | None, Status | None)``, ``score -> (int, Status | None)``,
``post_filter -> (PostFilterResult | None, Status | None)``, ``permit -> (Status | None, timeout_seconds)``.
"""
from __future__ import annotations

import abc
import enum
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable, ClassVar, Sequence

from . import protocols as fwk
from .cycle_state import CycleState
# The staging interfaces a plugin sees are Protocols (fastsched.framework.protocols); they are
# re-exported here, where they were abstract classes before, so existing imports keep working.
from .protocols import Handle, NodeInfoLister, SharedLister  # noqa: F401 - re-exported
from .status import Status
from .types import (NodeScore, NodeToStatus, NominatingInfo, PodInfo, PostFilterResult, PreFilterResult,
                    QueuedPodInfo)

if TYPE_CHECKING:  # pragma: no cover
    from ..api import Pod


class _Interface(abc.ABC):
    """Base for plugin interfaces: structural ``isinstance`` on the interface's required methods."""

    # the methods that make a class this interface; read from the interface class itself only
    _required: ClassVar[tuple[str, ...]] = ()

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

    _required: ClassVar[tuple[str, ...]] = ("name",)

    @abc.abstractmethod
    def name(self) -> str:
        """The plugin's name, as used in the configuration."""


class PreEnqueuePlugin(Plugin):
    _required: ClassVar[tuple[str, ...]] = ("pre_enqueue",)

    @abc.abstractmethod
    def pre_enqueue(self, pod: "Pod") -> Status | None:
        """Success lets the pod into activeQ; anything else keeps it gated."""


class QueueSortPlugin(Plugin):
    _required: ClassVar[tuple[str, ...]] = ("less",)

    @abc.abstractmethod
    def less(self, a: QueuedPodInfo, b: QueuedPodInfo) -> bool:
        """Whether ``a`` goes before ``b`` in activeQ."""

    # fastsched extension, optional: ``sort_key(info)`` returning a key with
    # ``less(a, b) == (sort_key(a) < sort_key(b))`` lets the queue order activeQ with C heapq instead
    # of calling ``less`` at every heap step. A plugin without it is ordered by ``less``.


class PreFilterExtensions(_Interface):
    """Incremental updates of a PreFilter plugin's cycle state (used by preemption, nominated pods)."""

    _required: ClassVar[tuple[str, ...]] = ("add_pod", "remove_pod")

    @classmethod
    def __subclasshook__(cls, sub):
        if cls is not PreFilterExtensions:
            return NotImplemented
        if all(any(m in B.__dict__ for B in sub.__mro__) for m in cls._required):
            return True
        return NotImplemented

    @abc.abstractmethod
    def add_pod(self, state: CycleState, pod_to_schedule: "Pod", pod_info_to_add: PodInfo,
                node_info: fwk.NodeInfo) -> Status | None: ...

    @abc.abstractmethod
    def remove_pod(self, state: CycleState, pod_to_schedule: "Pod", pod_info_to_remove: PodInfo,
                   node_info: fwk.NodeInfo) -> Status | None: ...


class PreFilterPlugin(Plugin):
    _required: ClassVar[tuple[str, ...]] = ("pre_filter",)

    @abc.abstractmethod
    def pre_filter(self, state: CycleState, pod: "Pod",
                   nodes: Sequence[fwk.NodeInfo]) -> tuple[PreFilterResult | None, Status | None]:
        """Pre-process the pod; Skip disables the coupled Filter for this cycle."""

    def pre_filter_extensions(self) -> PreFilterExtensions | None:
        """The AddPod/RemovePod extensions, or None."""
        return None


#: ``FilterPlugin.filter_pod_dependence``: the verdict does not depend on the pods on the node
FILTER_NODE_ONLY = "node-only"
#: ``FilterPlugin.filter_pod_dependence``: the verdict depends on the node's pods only through the
#: node table's ``requested``, ``pod_count`` and host-port columns, monotonically (more pods never
#: pass where fewer fail)
FILTER_ADDITIVE = "additive"
#: ``FilterPlugin.filter_pod_dependence``: it depends on the pod; the plugin's
#: ``filter_pod_dependence_of(state, pod, table)`` answers :data:`FILTER_NODE_ONLY`,
#: :data:`FILTER_ADDITIVE` or None for one pod's cycle (NodeVolumeLimits: node-only while no node
#: the pod's new volumes could attach to has a CSINode limit, which is when it counts attached volumes)
FILTER_PER_POD = "per-pod"
FILTER_POD_DEPENDENCES = (FILTER_NODE_ONLY, FILTER_ADDITIVE, FILTER_PER_POD)


class FilterPlugin(Plugin):
    _required: ClassVar[tuple[str, ...]] = ("filter",)
    #: How the plugin's Filter verdict depends on the pods on the node, declared by the plugin
    #: class itself: :data:`FILTER_NODE_ONLY`, :data:`FILTER_ADDITIVE`, or None (any other way, or
    #: not declared). It lets RunFilterPluginsWithNominatedPods run over many nodes in one
    #: vectorized pass (``fastsched.runtime.nominated``) and DefaultPreemption's dry run remove
    #: victims as arrays; a subclass inherits its base's declaration.
    filter_pod_dependence: ClassVar[str | None] = None

    @abc.abstractmethod
    def filter(self, state: CycleState, pod: "Pod", node_info: fwk.NodeInfo) -> Status | None:
        """Whether the pod fits the node: Success, Unschedulable or UnschedulableAndUnresolvable."""


class PostFilterPlugin(Plugin):
    _required: ClassVar[tuple[str, ...]] = ("post_filter",)

    @abc.abstractmethod
    def post_filter(self, state: CycleState, pod: "Pod",
                    filtered_node_status_map: NodeToStatus) -> tuple[PostFilterResult | None, Status | None]:
        """Called when no node fits (e.g. preemption)."""


class PreScorePlugin(Plugin):
    _required: ClassVar[tuple[str, ...]] = ("pre_score",)

    @abc.abstractmethod
    def pre_score(self, state: CycleState, pod: "Pod", nodes: Sequence[fwk.NodeInfo]) -> Status | None:
        """Pre-process the feasible nodes; Skip disables the coupled Score for this cycle."""


class ScoreExtensions(_Interface):
    _required: ClassVar[tuple[str, ...]] = ("normalize_score",)

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
    _required: ClassVar[tuple[str, ...]] = ("score",)

    @abc.abstractmethod
    def score(self, state: CycleState, pod: "Pod", node_info: fwk.NodeInfo) -> tuple[int, Status | None]:
        """The node's raw score."""

    def score_extensions(self) -> ScoreExtensions | None:
        """The NormalizeScore extension, or None."""
        return None


class ReservePlugin(Plugin):
    _required: ClassVar[tuple[str, ...]] = ("reserve", "unreserve")

    #: fastsched extension, optional (also read on PreBind plugins): True declares that when this
    #: plugin's PreFilter answered Skip for the pod (it is in ``state.skip_filter_plugins``), its
    #: Reserve answers Success and changes nothing, its Unreserve and PreBind do nothing and its
    #: PreBindPreFlight answers Skip. The framework then does not call them, in any cycle (Reserve
    #: and PreBind must agree: a plugin's PreBind may rely on what its Reserve wrote), and reports
    #: the Success a call would give to decision records and sampled plugin metrics (duration 0):
    #: the answers are the same, without a call per plugin per pod. VolumeBinding (no claims) and
    #: DynamicResources (no claims) declare it; ``tests/runtime/test_binding_idle.py`` checks each
    #: declaration.
    binding_idle_on_pre_filter_skip: ClassVar[bool] = False

    #: fastsched extension, optional (also read on PreBind plugins): a method
    #: ``binding_idle(state, pod, node_name) -> bool`` answering, where Reserve would be called for
    #: ``pod`` on ``node_name``, whether its Reserve would answer Success and, leaving in
    #: ``state`` what it would, make its Unreserve and PreBind do nothing and its PreBindPreFlight
    #: answer Skip (a True answer leaves that in ``state``; a False one may leave only what
    #: Reserve leaves too). When every Reserve and PreBind plugin is idle by the declaration
    #: above or by this answer and no Permit plugin runs, the framework calls none of them for the
    #: pod (``Framework.idle_binding_at``). VolumeBinding defines it (every claim bound: upstream's
    #: AllBound); ``tests/runtime/test_binding_idle.py`` checks it against the plugin's calls.
    binding_idle: ClassVar[Any] = None

    @abc.abstractmethod
    def reserve(self, state: CycleState, pod: "Pod", node_name: str) -> Status | None: ...

    @abc.abstractmethod
    def unreserve(self, state: CycleState, pod: "Pod", node_name: str) -> None: ...


class PreBindPlugin(Plugin):
    _required: ClassVar[tuple[str, ...]] = ("pre_bind",)

    def pre_bind_pre_flight(self, state: CycleState, pod: "Pod", node_name: str) -> Status | None:
        """Success when PreBind will do work, Skip when it has nothing to do (default: Success)."""
        return None

    @abc.abstractmethod
    def pre_bind(self, state: CycleState, pod: "Pod", node_name: str) -> Status | None: ...


class PostBindPlugin(Plugin):
    _required: ClassVar[tuple[str, ...]] = ("post_bind",)

    @abc.abstractmethod
    def post_bind(self, state: CycleState, pod: "Pod", node_name: str) -> None: ...


class PermitPlugin(Plugin):
    _required: ClassVar[tuple[str, ...]] = ("permit",)

    @abc.abstractmethod
    def permit(self, state: CycleState, pod: "Pod", node_name: str) -> tuple[Status | None, float]:
        """Success, a rejection, or Wait with a timeout in seconds (capped at 15 minutes)."""


class BindPlugin(Plugin):
    _required: ClassVar[tuple[str, ...]] = ("bind",)

    @abc.abstractmethod
    def bind(self, state: CycleState, pod: "Pod", node_name: str) -> Status | None:
        """Bind the pod; Skip hands it to the next Bind plugin."""


# ------------------------------------------------------------------------------------------------
# Cluster events and queueing hints (EnqueueExtensions)
# ------------------------------------------------------------------------------------------------
class ActionType(enum.IntFlag):
    # upstream's bits in upstream's order (kube-scheduler v0.37.2 framework/types.go):
    # MatchClusterEvents compares the values (incoming <= registered), so the order matters
    ADD = 1
    DELETE = 2
    UPDATE_NODE_ALLOCATABLE = 4
    UPDATE_NODE_LABEL = 8
    UPDATE_NODE_TAINT = 16
    UPDATE_NODE_CONDITION = 32
    UPDATE_NODE_ANNOTATION = 64
    UPDATE_NODE_DECLARED_FEATURE = 128
    UPDATE_NODE_PREEMPTION_POLICY = 256
    UPDATE_POD_LABEL = 512
    UPDATE_POD_SCALE_DOWN = 1024
    UPDATE_POD_SCALE_UP = 2048
    UPDATE_POD_TOLERATIONS = 4096
    UPDATE_POD_SCHEDULING_GATES_ELIMINATED = 8192
    UPDATE_POD_GENERATED_RESOURCE_CLAIM = 16384
    UPDATE = (UPDATE_NODE_ALLOCATABLE | UPDATE_NODE_LABEL | UPDATE_NODE_TAINT | UPDATE_NODE_CONDITION
              | UPDATE_NODE_ANNOTATION | UPDATE_NODE_DECLARED_FEATURE | UPDATE_NODE_PREEMPTION_POLICY
              | UPDATE_POD_LABEL | UPDATE_POD_SCALE_DOWN | UPDATE_POD_SCALE_UP | UPDATE_POD_TOLERATIONS
              | UPDATE_POD_SCHEDULING_GATES_ELIMINATED | UPDATE_POD_GENERATED_RESOURCE_CLAIM)
    ALL = ADD | DELETE | UPDATE


class EventResource(str, enum.Enum):
    POD = "Pod"
    ASSIGNED_POD = "AssignedPod"
    UNSCHEDULED_POD = "UnscheduledPod"
    #: an unscheduled pod's own update (``PriorityQueue.update``), asked of that pod's rejectors only
    TARGET_POD = "TargetPod"
    NODE = "Node"
    PERSISTENT_VOLUME = "PersistentVolume"
    PERSISTENT_VOLUME_CLAIM = "PersistentVolumeClaim"
    CSI_NODE = "storage.k8s.io/CSINode"
    STORAGE_CLASS = "storage.k8s.io/StorageClass"
    CSI_DRIVER = "storage.k8s.io/CSIDriver"
    CSI_STORAGE_CAPACITY = "storage.k8s.io/CSIStorageCapacity"
    VOLUME_ATTACHMENT = "storage.k8s.io/VolumeAttachment"
    RESOURCE_CLAIM = "resource.k8s.io/ResourceClaim"
    RESOURCE_SLICE = "resource.k8s.io/ResourceSlice"
    DEVICE_CLASS = "resource.k8s.io/DeviceClass"
    POD_GROUP = "scheduling.k8s.io/PodGroup"
    COMPOSITE_POD_GROUP = "scheduling.k8s.io/CompositePodGroup"
    NAMESPACE = "Namespace"
    WILDCARD = "*"


@dataclass(frozen=True)
class ClusterEvent:
    #: an EventResource, or another resource's name (upstream's EventResource is any string)
    resource: EventResource | str
    action_type: ActionType
    label: str = ""

    def is_wildcard(self) -> bool:
        return self.resource == EventResource.WILDCARD and self.action_type == ActionType.ALL


class QueueingHint(enum.IntEnum):
    QUEUE_SKIP = 0
    QUEUE = 1


#: ``hint_fn(pod, old_obj, new_obj) -> (QueueingHint, error or None)``; old_obj is None for an Add,
#: new_obj None for a Delete.
QueueingHintFn = Callable[["Pod", Any, Any], tuple[QueueingHint, Any]]


@dataclass(frozen=True)
class ClusterEventWithHint:
    event: ClusterEvent
    queueing_hint_fn: QueueingHintFn | None = None


class EnqueueExtensions(_Interface):
    _required: ClassVar[tuple[str, ...]] = ("events_to_register",)

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
# Workload-aware extension points (v1.36/1.37: k8s.io/kube-scheduler@v0.37.2/framework/interface.go)
# ------------------------------------------------------------------------------------------------
# A PodGroup's scheduling cycle runs these (GenericWorkload; the placement points with
# TopologyAwareWorkloadScheduling too: ``podGroupSchedulingPlacementAlgorithm``).
@dataclass(eq=False)
class Placement:
    """``fwk.Placement``: a named set of nodes a pod group's cycle may be restricted to. ``nodes``
    is a sequence of NodeInfos (a NodeBatch of the snapshot's rows in the scheduler). Compared by
    identity, as upstream's pointers."""

    name: str = ""
    nodes: Any = ()


@dataclass
class GeneratePlacementsResult:
    """``fwk.GeneratePlacementsResult``."""

    placements: list = field(default_factory=list)


@dataclass(frozen=True)
class ProposedAssignment:
    """``fwk.ProposedAssignment``: a member the placement's algorithm run put on a node."""

    pod: Any
    node_name: str
    cycle_state: Any = None


@dataclass
class PodGroupAssignments:
    """``fwk.PodGroupAssignments``: a placement (its name and nodes) and the members proposed in it."""

    placement: Placement
    proposed_assignments: list = field(default_factory=list)

    @property
    def name(self) -> str:
        return self.placement.name

    @property
    def nodes(self) -> Any:
        return self.placement.nodes


@dataclass
class PlacementScore:
    """``fwk.PlacementScore``: one plugin's score of one placement (normalized in place)."""

    placement: Placement
    score: int = 0


@dataclass
class PlacementPluginScores:
    """``fwk.PlacementPluginScores``: a placement's weighted scores, their total and the random
    tie-breaker ``findBestPlacement`` draws."""

    placement: Placement
    scores: list = field(default_factory=list)
    total_score: int = 0
    randomizer: int = 0


class PlacementGeneratePlugin(Plugin):
    """Generates a PodGroup's candidate placements (upstream ``PlacementGeneratePlugin``)."""

    _required: ClassVar[tuple[str, ...]] = ("generate_placements",)

    @abc.abstractmethod
    def generate_placements(self, state: Any, pod_group: Any, parent_placement: Placement
                            ) -> tuple[GeneratePlacementsResult | None, Status | None]:
        """The placements (sets of nodes within ``parent_placement``) the PodGroup may be scheduled in."""


class PlacementScoreExtensions(abc.ABC):
    """``fwk.PlacementScoreExtensions``."""

    @abc.abstractmethod
    def normalize_placement_score(self, state: Any, pod_group: Any, scores: list) -> Status | None:
        """Rewrite ``scores[i].score`` in place into [MIN_NODE_SCORE, MAX_NODE_SCORE]."""


class PlacementScorePlugin(Plugin):
    """Scores a PodGroup's placements (upstream ``PlacementScorePlugin``); weighted like Score."""

    _required: ClassVar[tuple[str, ...]] = ("score_placement",)

    @abc.abstractmethod
    def score_placement(self, state: Any, pod_group: Any, assignments: PodGroupAssignments
                        ) -> tuple[int, Status | None]:
        """The score of one placement of the PodGroup (its proposed assignments)."""

    def placement_score_extensions(self) -> PlacementScoreExtensions | None:
        """The normalizer, if any (upstream ``PlacementScoreExtensions``)."""
        return None


class PodGroupPostFilterPlugin(Plugin):
    """Runs when a PodGroup cannot be scheduled (upstream ``PodGroupPostFilterPlugin``)."""

    _required: ClassVar[tuple[str, ...]] = ("pod_group_post_filter",)

    @abc.abstractmethod
    def pod_group_post_filter(self, state: Any, pod_group: Any, scheduling_func: Any) -> tuple[Any, Status | None]:
        """Try to make the PodGroup schedulable (workload-aware preemption)."""


# ------------------------------------------------------------------------------------------------
# Nominator, activator (the listers and the Handle are Protocols: see protocols.py)
# ------------------------------------------------------------------------------------------------
class PodNominator(abc.ABC):
    """Keeps the pods nominated to run on nodes (upstream ``PodNominator``)."""

    @abc.abstractmethod
    def add_nominated_pod(self, pod_info: PodInfo, nominating_info: NominatingInfo | None) -> None: ...

    @abc.abstractmethod
    def delete_nominated_pod_if_exists(self, pod: "Pod") -> None: ...

    @abc.abstractmethod
    def update_nominated_pod(self, old_pod: "Pod", new_pod_info: PodInfo) -> None: ...

    @abc.abstractmethod
    def nominated_pods_for_node(self, node_name: str) -> list[PodInfo]: ...


class PodActivator(abc.ABC):
    @abc.abstractmethod
    def activate(self, pods: dict[str, "Pod"]) -> None: ...


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
    "placement_generate": (PlacementGeneratePlugin, "PlacementGeneratePlugin"),
    "placement_score": (PlacementScorePlugin, "PlacementScorePlugin"),
    "pod_group_post_filter": (PodGroupPostFilterPlugin, "PodGroupPostFilterPlugin"),
}
