"""The typed plugin contract: what a plugin may read and call (upstream ``k8s.io/kube-scheduler/framework``).

Upstream's plugins see interfaces, not the scheduler's structs: ``fwk.NodeInfo``, ``fwk.Handle``,
``fwk.SharedLister``. These :class:`typing.Protocol` classes are their Python counterparts, and the
in-tree plugins are annotated with them; import the module the way upstream imports the package::

    from fastsched.framework import protocols as fwk

    def filter(self, state: CycleState, pod: Pod, node_info: fwk.NodeInfo) -> Status | None: ...
    def filter_vectorized(self, state: CycleState, pod: Pod, nodes: fwk.NodeBatch) -> FilterVerdicts: ...
    def new(args: MyArgs | None, handle: fwk.Handle) -> MyPlugin: ...

Being protocols, they are satisfied structurally: the snapshot's ``NodeInfoView`` and
:class:`fastsched.framework.NodeInfo` are both a :class:`NodeInfo` (for a type checker the latter's
``node()`` is ``Node | None``, as a cache's NodeInfo may have lost its node), the snapshot's
``NodeBatch`` is a :class:`NodeBatch`, the snapshot's columnar table (and the runtime's
``ShadowTable`` over it) a :class:`NodeTable`, the runtime's ``Framework`` is a :class:`Handle`, the
scheduler's ``Cluster`` (``handle.client``) a :class:`Client`, and a test double with the same members
is one too (``tests/framework/test_check_plugin.py`` checks these with mypy). ``NodeInfo``, ``NodeBatch`` and ``Handle`` are ``runtime_checkable``; such an ``isinstance``
reads every member (on a view it builds the pod lists), so plugins should not do it per node:
:func:`is_node_batch` is the cheap test for a batch.

fastsched differences from upstream: properties instead of ``GetX()`` getters (``node_info.pods``,
``node_info.requested``), the batch of candidate nodes (:class:`NodeBatch`) beside the per-node view,
the Handle's ``client`` / ``event_recorder`` / ``namespaces`` / ``rng`` attributes in place of
upstream's ClientSet, EventRecorder and informers, and no ``context.Context`` arguments.
"""
from __future__ import annotations

import abc
from typing import (TYPE_CHECKING, Any, Callable, Iterator, Mapping, Protocol, Sequence, TypeGuard, TypeVar,
                    overload, runtime_checkable)

if TYPE_CHECKING:  # pragma: no cover - annotations only: no import cycle at run time
    import random

    import numpy as np

    from ..api import Namespace, Node, Pod
    from ..api.objects import KubeObject, PodDisruptionBudget
    from ..extender.extender import Extender
    from . import types as _types
    from .cycle_state import CycleState
    from .parallelize import Parallelizer
    from .status import Status
    from .types import HostPortInfo, ImageStateSummary, NodePluginScores, PodInfo, Resource, WaitingPod


@runtime_checkable
class NodeInfo(Protocol):
    """One node with what is on it, as a plugin reads it (upstream ``fwk.NodeInfo``, read side).

    Implemented by :class:`fastsched.framework.NodeInfo` (a detached, mutable copy: nominated pods,
    preemption dry runs, :class:`~fastsched.framework.NodeInfoSnapshot`) and by the snapshot's
    ``NodeInfoView`` (one row of the node table, read live). Treat every value as read-only: a view's
    lists and ``Resource`` objects are built on each access, a NodeInfo's are its own state.
    """

    def node(self) -> Node:
        """The Node. Never None for a NodeInfo handed to a plugin: a snapshot holds only nodes that
        exist (upstream's snapshot skips a NodeInfo whose node was deleted)."""
        ...

    @property
    def name(self) -> str:
        """The node's name (``node().name``, without building the Node on the columnar path)."""
        ...

    @property
    def pods(self) -> list[PodInfo]:
        """The pods on the node, assumed pods included."""
        ...

    @property
    def pods_with_affinity(self) -> list[PodInfo]:
        """The pods with pod affinity or anti-affinity terms."""
        ...

    @property
    def pods_with_required_anti_affinity(self) -> list[PodInfo]:
        """The pods with required pod anti-affinity terms."""
        ...

    @property
    def used_ports(self) -> HostPortInfo:
        """The host ports in use (upstream's wildcard-IP conflict rule in ``check_conflict``)."""
        ...

    @property
    def requested(self) -> Resource:
        """Sum of the pods' effective requests (with overhead; no non-zero defaults)."""
        ...

    @property
    def non_zero_requested(self) -> Resource:
        """cpu and memory requested, with upstream's non-zero defaults per container."""
        ...

    @property
    def allocatable(self) -> Resource:
        """``node.status.allocatable``; ``allowed_pod_number`` is its ``pods`` entry."""
        ...

    @property
    def image_states(self) -> dict[str, ImageStateSummary]:
        """Image name -> size on this node and the number of nodes in the snapshot holding it."""
        ...

    @property
    def pvc_ref_counts(self) -> dict[str, int]:
        """``namespace/name`` of a PersistentVolumeClaim -> pods on the node using it."""
        ...

    @property
    def generation(self) -> int:
        """Bumped whenever the node's information changes."""
        ...

    def snapshot(self) -> _types.NodeInfo:
        """A detached, mutable copy (what preemption's dry runs add pods to and remove them from)."""
        ...


_T_co = TypeVar("_T_co", covariant=True)


class ByRow(Protocol[_T_co]):
    """A per-row lookup of the table (``table.nodes[row]``, ``table.pods[row]``, ``table.ports[row]``)."""

    def __getitem__(self, row: int, /) -> _T_co: ...


class CountSubscription(Protocol):
    """Per-row counts of a set of pods, kept up to date by the table (``NodeTable.matching_counts``)."""

    @property
    def key(self) -> Any:
        """The hashable key the subscription was asked for."""
        ...

    @property
    def rows(self) -> np.ndarray:
        """(C,) int64: the pods counted on each row. Read-only."""
        ...

    def domain_counts(self, table: Any, key: str) -> np.ndarray:
        """Per label code of ``key`` (topology domain): the sum of ``rows`` over the live rows.
        ``table`` is the table that handed the subscription out (typed Any: each implementation
        takes its own table class)."""
        ...

    def frozen_domain_counts(self, table: Any, key: str) -> tuple[np.ndarray, bool]:
        """(:meth:`domain_counts` as a read-only array that never changes, whether any count is
        nonzero): shared by callers until the counts move."""
        ...


class NodeTable(Protocol):
    """The columnar node table, as the plugins and the kernels read it (implemented by
    :class:`fastsched.snapshot.table.NodeTable`, and by the runtime's ``ShadowTable``, which
    overlays other pods on some rows).

    Rows index nodes; ``C`` is the row capacity (free rows are not ``live``), ``R`` the number of
    interned resources (:attr:`resource_names`). The columns and their dtypes are listed on
    :class:`NodeBatch`. Every member is read-only for plugins: the table is written by the cache.
    """

    # -- identity and versions -------------------------------------------------------------------
    @property
    def uid(self) -> int:
        """Unique for the process's lifetime: what plugins key per-table caches on."""
        ...

    @property
    def capacity(self) -> int:
        """``C``: the number of rows (live or free)."""
        ...

    @property
    def version(self) -> int:
        """Bumped on every change."""
        ...

    @property
    def node_version(self) -> int:
        """Bumped when a node is added, updated or removed (not when pods move)."""
        ...

    def __len__(self) -> int:
        """The number of live nodes."""
        ...

    # -- names, resources, labels, taints, images ------------------------------------------------
    @property
    def node_names(self) -> np.ndarray:
        """(C,) object: the node name of each row ("" for a free row)."""
        ...

    @property
    def row_of(self) -> Mapping[str, int]:
        """Node name -> row."""
        ...

    @property
    def resource_names(self) -> Sequence[str]:
        """The interned resources: the columns of ``alloc`` and ``requested``."""
        ...

    @property
    def resource_index(self) -> Mapping[str, int]:
        """Resource name -> column of ``alloc`` / ``requested`` (cpu 0, memory 1, ephemeral-storage 2)."""
        ...

    @property
    def label_codes(self) -> Mapping[str, np.ndarray]:
        """Label key -> (C,) int32 code of each row's value, -1 when the node has no such label."""
        ...

    @property
    def label_values(self) -> Mapping[str, Sequence[str]]:
        """Label key -> the value of each code."""
        ...

    def label_code(self, key: str, value: str, *, create: bool = False) -> int:
        """The code of ``value`` for label ``key`` (-1 when no node has it, unless ``create``)."""
        ...

    def label_column(self, key: str) -> np.ndarray | None:
        """``label_codes[key]``, or None when no node has label ``key``."""
        ...

    @property
    def taint_sets(self) -> Sequence[tuple[Any, ...]]:
        """The distinct taint tuples; ``taint_set[row]`` indexes them (0: no taints)."""
        ...

    @property
    def image_rows(self) -> Mapping[str, dict[int, int]]:
        """Image name -> {row: image size on that node}."""
        ...

    @property
    def extended_rows(self) -> Mapping[int, Mapping[int, int]]:
        """Extended resource column (>= 3) -> {row: allocatable} for the rows whose allocatable of
        it is nonzero: a resource on few nodes found without reading its (C,) column."""
        ...

    @property
    def negative_requests(self) -> bool:
        """Whether a pod with a negative request was accounted (unvalidated objects only): then
        ``requested`` may be negative."""
        ...

    # -- row columns -----------------------------------------------------------------------------
    @property
    def live(self) -> np.ndarray: ...

    @property
    def alloc(self) -> np.ndarray: ...

    @property
    def requested(self) -> np.ndarray: ...

    @property
    def nonzero_requested(self) -> np.ndarray: ...

    @property
    def allowed_pods(self) -> np.ndarray: ...

    @property
    def pod_count(self) -> np.ndarray: ...

    @property
    def unschedulable(self) -> np.ndarray: ...

    @property
    def taint_set(self) -> np.ndarray: ...

    @property
    def has_host_ports(self) -> np.ndarray: ...

    @property
    def pods_with_affinity(self) -> np.ndarray: ...

    @property
    def pods_with_req_anti(self) -> np.ndarray: ...

    @property
    def terminating_pods(self) -> np.ndarray: ...

    @property
    def row_version(self) -> np.ndarray:
        """(C,) int64: the table version when the row last changed."""
        ...

    @property
    def total_pods_with_affinity(self) -> int:
        """The sum of ``pods_with_affinity`` (O(1) Skip decisions)."""
        ...

    @property
    def total_pods_with_req_anti(self) -> int:
        """The sum of ``pods_with_req_anti``."""
        ...

    @property
    def total_terminating_pods(self) -> int:
        """The sum of ``terminating_pods``."""
        ...

    # -- per-row objects (built on first access) -------------------------------------------------
    @property
    def nodes(self) -> ByRow[Node | None]:
        """The Node of each row (None for a free row)."""
        ...

    @property
    def pods(self) -> ByRow[list[PodInfo]]:
        """The PodInfos on each row. Do not mutate the lists."""
        ...

    @property
    def ports(self) -> ByRow[HostPortInfo | None]:
        """The host ports in use on each row, None when no pod there uses one."""
        ...

    # -- pods by label signature and by affinity signature ---------------------------------------
    @property
    def pod_signatures(self) -> Sequence[tuple[str, tuple[tuple[str, str], ...]]]:
        """The distinct pod label signatures (namespace, sorted label items) seen so far; only grows."""
        ...

    @property
    def affinity_signatures(self) -> Sequence[tuple[Any, ...]]:
        """The distinct pod (anti-)affinity term signatures of the pods on the nodes."""
        ...

    @property
    def affinity_signature_rows(self) -> Sequence[dict[int, int]]:
        """Per affinity signature: {row: pods of that signature on the row}."""
        ...

    def count_matching_pods(self, matches: Callable[[str, dict[str, str]], bool]) -> np.ndarray:
        """(C,) int64: per row, the pods whose (namespace, labels) satisfy ``matches``."""
        ...

    def matching_counts(self, key: Any, matches: Callable[[str, dict[str, str]], bool]) -> CountSubscription:
        """The subscription ``key`` counting the pods that satisfy ``matches``, kept up to date."""
        ...

    def affinity_signature_counts(self, k: int) -> CountSubscription:
        """The subscription counting the pods of affinity signature ``k``."""
        ...

    def affinity_signature_set_counts(self, key: Any) -> tuple[CountSubscription, bool]:
        """``(subscription, created)``: the subscription ``key`` of the signatures attached to it."""
        ...

    def attach_affinity_signature(self, sub: Any, k: int) -> None:
        """Count affinity signature ``k``'s pods in ``sub`` (one from ``affinity_signature_set_counts``)."""
        ...

    def has_subscription(self, sub: Any) -> bool:
        """Whether ``sub`` is still kept up to date (not evicted or dropped)."""
        ...

    def drop_subscription(self, sub: Any) -> None:
        """Stop keeping ``sub`` up to date and forget it."""
        ...


class TableRows(Protocol):
    """Table rows: what the column helpers read of a batch (``table`` and ``rows`` only)."""

    @property
    def table(self) -> NodeTable:
        """The columnar node table the rows index."""
        ...

    @property
    def rows(self) -> np.ndarray:
        """(n,) int64: the table row of each position, in evaluation order."""
        ...


@runtime_checkable
class NodeBatch(TableRows, Protocol):
    """The candidate nodes of one extension point, as the vectorized methods read them.

    ``rows`` are indices into ``table``, the columnar node table, in evaluation order; position ``i``
    of the batch is node ``table.node_names[rows[i]]``. A vectorized method returns one value per
    position: verdicts of length ``len(nodes)``, scores as an int64 array of shape ``(len(nodes),)``.
    Indexing or iterating yields per-node :class:`NodeInfo` views, so code written one node at a
    time works on a batch too (slowly).

    The columns plugins read (``C`` = the table's row capacity, ``R`` = interned resources; the full
    list, pod records and signatures are documented in :mod:`fastsched.snapshot.table`)::

        column                        shape    dtype   meaning
        table.live                    (C,)     bool    the row holds a node
        table.alloc                   (C, R)   int64   allocatable per resource (cpu in millicores)
        table.requested               (C, R)   int64   sum of the pods' effective requests
        table.nonzero_requested       (C, 2)   int64   cpu, memory with upstream's non-zero defaults
        table.allowed_pods            (C,)     int64   allocatable ``pods``
        table.pod_count               (C,)     int64   pods on the node (assumed ones included)
        table.unschedulable           (C,)     bool    ``spec.unschedulable``
        table.taint_set               (C,)     int32   index into ``table.taint_sets`` (0: no taints)
        table.label_codes[key]        (C,)     int32   code of the node's value for ``key``, -1 absent;
                                                       ``table.label_values[key][code]`` is the string
        table.has_host_ports          (C,)     bool    some pod on the node uses a host port
        table.pods_with_affinity      (C,)     int32   pods with pod (anti-)affinity terms
        table.pods_with_req_anti      (C,)     int32   pods with required pod anti-affinity terms
        table.terminating_pods        (C,)     int32   pods with a deletionTimestamp
        table.row_version             (C,)     int64   table version when the row last changed

    ``table.resource_index`` maps a resource name to its column in ``alloc`` / ``requested`` (cpu 0,
    memory 1, ephemeral-storage 2, then scalar resources); ``table.row_of`` maps a node name to its
    row; ``table.image_rows[image]`` maps row -> image size.
    """

    @property
    def names(self) -> list[str]:
        """The node name at each position."""
        ...

    def name_at(self, i: int) -> str:
        """The node name at position ``i``, without building the whole name list."""
        ...

    def __len__(self) -> int: ...

    def __iter__(self) -> Iterator[NodeInfo]: ...

    @overload
    def __getitem__(self, i: int) -> NodeInfo: ...

    @overload
    def __getitem__(self, i: slice) -> NodeBatch: ...

    def select(self, mask_or_index: np.ndarray) -> NodeBatch:
        """The sub-batch at a boolean mask or an index array over this batch's positions."""
        ...

    def window(self, start: int, begin: int, end: int) -> NodeBatch:
        """Positions ``begin`` to ``end`` of this batch rotated to start at ``start``."""
        ...


def is_node_batch(nodes: object) -> TypeGuard[NodeBatch]:
    """Whether ``nodes`` (a PreFilter's or PreScore's node list) is a batch with ``table`` and ``rows``.

    A cheap duck-typed test (two attribute lookups) for the hot path, where ``isinstance`` against a
    runtime-checkable protocol would look for every member.
    """
    return hasattr(nodes, "rows") and hasattr(nodes, "table")


class NodeInfoLister(Protocol):
    """Lists and gets NodeInfos of the snapshot (upstream ``fwk.NodeInfoLister``)."""

    @abc.abstractmethod
    def list(self) -> Sequence[NodeInfo]:
        """All nodes, in the snapshot's order (a NodeBatch for the columnar snapshot)."""

    @abc.abstractmethod
    def have_pods_with_affinity_list(self) -> Sequence[NodeInfo]:
        """The nodes with at least one pod with pod (anti-)affinity terms."""

    @abc.abstractmethod
    def have_pods_with_required_anti_affinity_list(self) -> Sequence[NodeInfo]:
        """The nodes with at least one pod with required pod anti-affinity terms."""

    @abc.abstractmethod
    def get(self, node_name: str) -> NodeInfo:
        """The node named ``node_name``; raises KeyError when absent."""


class SharedLister(Protocol):
    """The listers of a snapshot (upstream ``fwk.SharedLister``)."""

    @abc.abstractmethod
    def node_infos(self) -> NodeInfoLister:
        """The NodeInfo lister."""


class Client(Protocol):
    """What plugins call on ``handle.client``: the cluster's API (upstream's ClientSet and informer
    listers). The :class:`~fastsched.Scheduler` implements it; the methods and signatures are its.

    The API objects plugins read and write besides nodes and pods (volumes, claims, DRA objects; see
    :mod:`fastsched.framework.objects`), DefaultBinder's ``bind`` and DefaultPreemption's pod
    lookups, PDB listing, evictions and nomination clearing. A framework built without a Scheduler
    has an :class:`~fastsched.framework.objects.ObjectStore` (the object methods only: a plugin
    that needs the rest fails in the call, as it would against an API server without them) or no
    client at all (``handle.client is None``: plugins then skip what needs it).
    """

    def get_object(self, kind: str, name: str, namespace: str = "default") -> KubeObject | None:
        """The current object of ``kind`` named ``name`` (in ``namespace``), or None."""
        ...

    def list_objects(self, kind: str, namespace: str | None = None) -> list[KubeObject]:
        """The current objects of ``kind`` (in ``namespace`` when given), in the order added."""
        ...

    def add_object(self, obj: Any) -> KubeObject:
        """Create an object (an error when one of the same kind and key exists); returns the
        object as stored (a ``generateName`` resolved to its name), as the API's create does."""
        ...

    def update_object(self, obj: Any) -> None:
        """Replace the object of the same kind and key."""
        ...

    @property
    def object_listeners(self) -> list[Callable[[str, Any, Any], None]]:
        """Called with ``(kind, old, new)`` on every object write; plugins append to it (optional,
        read with ``getattr``: DynamicResources' manager keeps its device index up to date)."""
        ...

    def object_version(self, kind: str) -> int:
        """A counter bumped by every add, update and delete of an object of ``kind``, for caches.
        Optional: plugins read it with ``getattr`` and fall back to the objects' identities."""
        ...

    def bind(self, pod: Pod, node_name: str) -> None:
        """DefaultBinder's API call: bind ``pod`` to ``node_name``."""
        ...

    def get_pod_by_uid(self, uid: str) -> Pod | None:
        """The current version of the pod with this UID, or None when it is gone."""
        ...

    def list_pdbs(self) -> list[PodDisruptionBudget]:
        """The PodDisruptionBudgets (preemption's victim selection)."""
        ...

    def preempt_pod(self, victim: Pod, preemptor: Pod, node_name: str) -> None:
        """Evict a preemption victim."""
        ...

    def clear_nominated_node_name(self, pod: Pod) -> None:
        """Clear the pod's ``status.nominatedNodeName``."""
        ...


@runtime_checkable
class Handle(Protocol):
    """What a plugin factory receives as ``handle`` and may keep (upstream ``fwk.Handle``).

    The methods are upstream's (PluginsRunner, PodNominator's lookup, PodActivator, waiting pods,
    snapshot, parallelizer, extenders, profile name). fastsched's stand-ins for upstream's clients are
    attributes: ``client`` (a :class:`Client`: what binding and preemption go through, and the API
    objects plugins read and write; the Scheduler, an ObjectStore for ``explain``, or None in a
    framework built without one), ``event_recorder`` (None: events are not recorded), ``namespaces``
    (name -> Namespace, what namespaceSelectors match) and ``rng`` (the scheduler's seeded
    ``random.Random``, for what upstream draws at random).
    """

    client: Client | None
    event_recorder: Any
    namespaces: Mapping[str, Namespace]
    rng: random.Random

    @abc.abstractmethod
    def snapshot_shared_lister(self) -> SharedLister | None:
        """The snapshot of the current cycle (None before the framework has one)."""

    @abc.abstractmethod
    def parallelizer(self) -> Parallelizer:
        """The parallelizer holding the scheduler's parallelism."""

    @abc.abstractmethod
    def extenders(self) -> list[Extender]:
        """The configured extenders."""

    @abc.abstractmethod
    def nominated_pods_for_node(self, node_name: str) -> list[PodInfo]:
        """The pods nominated to ``node_name``."""

    def activate(self, pods: dict[str, Pod]) -> None:
        """Move these pods (keyed ``namespace/name``) to activeQ."""
        ...

    def get_namespace(self, name: str) -> Namespace | None:
        """The Namespace called ``name``, or None."""
        ...

    def profile_name(self) -> str:
        """The scheduler name of this framework's profile."""
        ...

    @abc.abstractmethod
    def iterate_over_waiting_pods(self, callback: Callable[[WaitingPod], None]) -> None:
        """Call ``callback`` on every pod waiting at Permit."""

    @abc.abstractmethod
    def get_waiting_pod(self, uid: str) -> WaitingPod | None:
        """The waiting pod with this UID, or None."""

    @abc.abstractmethod
    def reject_waiting_pod(self, uid: str) -> bool:
        """Reject the waiting pod with this UID; whether there was one."""

    def run_filter_plugins(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        """The profile's Filter plugins on one node (upstream ``RunFilterPlugins``)."""
        ...

    @abc.abstractmethod
    def run_filter_plugins_with_nominated_pods(self, state: CycleState, pod: Pod,
                                               node_info: NodeInfo) -> Status | None:
        """Filter with the node's nominated pods of equal or higher priority added, then without."""

    @abc.abstractmethod
    def run_pre_filter_extension_add_pod(self, state: CycleState, pod_to_schedule: Pod,
                                         pod_info_to_add: PodInfo, node_info: NodeInfo) -> Status | None:
        """Every PreFilter plugin's AddPod extension."""

    @abc.abstractmethod
    def run_pre_filter_extension_remove_pod(self, state: CycleState, pod_to_schedule: Pod,
                                            pod_info_to_remove: PodInfo, node_info: NodeInfo) -> Status | None:
        """Every PreFilter plugin's RemovePod extension."""

    def run_pre_score_plugins(self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]) -> Status | None:
        """The profile's PreScore plugins (upstream ``RunPreScorePlugins``)."""
        ...

    def run_score_plugins(self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]
                          ) -> tuple[list[NodePluginScores] | None, Status | None]:
        """The profile's Score plugins: each node's weighted scores and total."""
        ...


#: What a Registry holds: ``factory(args, handle) -> plugin`` (``args`` None when not configured).
PluginFactory = Callable[[Any, Handle], Any]

__all__ = ["Client", "CountSubscription", "Handle", "NodeBatch", "NodeInfo", "NodeInfoLister", "NodeTable",
           "PluginFactory", "SharedLister", "TableRows", "is_node_batch"]
