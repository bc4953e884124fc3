"""The Cluster: the API server's and the controllers' part of a simulated cluster.

A real scheduler watches an API server that other components write to: the API server validates
and admits what is created (names generated from ``generateName``, duplicates refused, the
Priority and DefaultTolerationSeconds admission plugins, the storage admission), the controllers
turn workloads into pods (Deployments, ReplicaSets, StatefulSets, DaemonSets, Jobs, CronJobs,
ReplicationControllers; the PV, ephemeral-volume and ResourceClaim controllers; the garbage
collector), and the scheduler's informers deliver each change to its event handlers. The Cluster
is that API server and those controllers: the object store, admission and the controllers, and
the pod store (every pod, the informer's view). The plugins reach it through ``handle.client``
(:class:`fastsched.framework.protocols.Client`: ``get_object``, ``list_objects``, ``update_object``,
``bind``, ``preempt_pod``, ...), the controllers through :class:`fastsched.controller.ClusterView`.

What the scheduler does with a change (the cache, the queue, the pods' results) is not here: each
committed change is delivered to the :class:`ClusterEventHandler` the Cluster was given (the
Scheduler, :mod:`fastsched.scheduler.eventhandlers`), as upstream's informers call the handlers
of ``pkg/scheduler/eventhandlers.go``.

One store is shared on purpose. The nodes and the bound pods added in bulk live once, in the
scheduler cache's columns (:class:`~fastsched.scheduler.cache.BulkPods`, the node table): at a
million nodes a second copy would cost as much as the cache. The Cluster reads nodes there
(``NodeStore``), its pod indexes are views over the bulk columns, and a bulk add of bound pods
is written there by the handler (``on_bound_pods_add``), which fills both sides at once.
"""
from __future__ import annotations

import copy
import dataclasses
import itertools
import math
from typing import Any, Callable, Iterable, Iterator, Mapping, Protocol, TypeVar

import numpy as np

from ..api import (SUPPORTED_KINDS, KubeObject, ManifestError, Namespace, Node, Pod, PodDisruptionBudget, PriorityClass,
                   Toleration, objects_of)
from ..api.load import check_decoded_gates, gate_overrides
from ..api.names import NameGenerator
from ..api.objects import SYSTEM_PRIORITY_CLASSES
from ..api.resource import ResourceClaim, validate_resource_claim_status_update
from ..api.runtimeclass import RuntimeClass, merge_tolerations, runtime_class_name
from ..api.scheduling import PodGroup
from ..api.storage import (PersistentVolume, PersistentVolumeClaim, StorageClass, ephemeral_claim_manifests,
                           synced_volume, with_creation_timestamp)
from ..api.strategy import prepare_for_create, raise_if_invalid
from ..api.util_validation import dns1123_subdomain_errors
from ..api.validation import ValidationError, group_resource, not_found
from ..controller import RECONCILERS, reconcile
from ..controller import persistentvolume as pv_controller
from ..controller.persistentvolume import bind_immediate_claims, claim_is_unbound
from ..dra import controller as dra_controller
from ..framework.interface import ActionType
from ..framework.objects import CLUSTER_SCOPED_KINDS, EVENT_RESOURCE_OF_KIND
from ..snapshot.lazy import pod_template_getter, uid_words
from ..util import heap
from ..util.collector import collector_paused
from ..util.field import FieldError
from .cache import Cache, ControlledIndex, KeyIndex, NamespaceIndex, OrderIndex, PodMap, pop_bulk_pod

__all__ = ["Cluster", "ClusterEventHandler", "TERMINAL_PHASES"]

#: Pod phases of pods whose containers have all ended: such pods hold nothing on their node and are
#: never scheduled (upstream's informers filter them out of the cache and the queue).
TERMINAL_PHASES = frozenset({"Succeeded", "Failed"})
#: the namespaces NamespaceLifecycle admission forbids deleting (k8s.io/apiserver's
#: pkg/admission/plugin/namespace/lifecycle: metav1.NamespaceDefault, NamespaceSystem, NamespacePublic)
_IMMORTAL_NAMESPACES = frozenset({"default", "kube-system", "kube-public"})
#: The order in which one ``add`` call applies the kinds it holds, so that what an object needs is
#: there first: namespaces and priority classes before pods (admission), nodes before the pods
#: bound to them, the pods before the controllers that count them.
_ADD_ORDER = {"Namespace": 0, "PriorityClass": 1, "Node": 2, "PodDisruptionBudget": 3, "Pod": 5}
_OTHER_KINDS_RANK = 4
_CONTROLLER_KINDS_RANK = 6
_POD_TEMPLATE_VALUES = pod_template_getter(Pod)
#: objects per vectorized batch of Cluster._add_nodes / _add_pods (bounds their transient sets)
_BULK_CHUNK = 1 << 17
#: the shortest run of unbound pods that Cluster._flush_unbound checks as a whole
_UNBOUND_RUN_MIN = 8
#: kinds whose changes the PV controller reacts to by binding claims that do not wait for a consumer
_PV_CONTROLLER_KINDS = frozenset({"PersistentVolumeClaim", "PersistentVolume", "StorageClass"})
_K = TypeVar("_K", bound=KubeObject)

#: kinds the storage admission touches on create (claims' default class, classes' creationTimestamp)
_PV_ADMISSION_KINDS = frozenset({"PersistentVolumeClaim", "StorageClass"})
#: ``<resource>.<group>`` as upstream's AlreadyExists errors name them
_RESOURCE_NAMES = {
    "Deployment": "deployments.apps", "ReplicaSet": "replicasets.apps", "StatefulSet": "statefulsets.apps",
    "DaemonSet": "daemonsets.apps", "Job": "jobs.batch", "CronJob": "cronjobs.batch",
    "ReplicationController": "replicationcontrollers", "Service": "services",
}


class ClusterEventHandler(Protocol):
    """What the Cluster tells its scheduler, change by change (upstream's informer event handlers,
    ``pkg/scheduler/eventhandlers.go``). Each call comes after the Cluster's store holds the change;
    ``on_*_add`` of many objects at once only when ``coalesce_adds()`` said the scheduler handles
    N adds as the last one."""

    def coalesce_adds(self) -> bool: ...
    def on_node_add(self, node: Node) -> None: ...
    def on_nodes_add(self, nodes: list[Node]) -> None: ...
    def on_node_update(self, old: Node, new: Node) -> None: ...
    def on_node_delete(self, old: Node) -> None: ...
    def on_namespace_add(self, ns: Namespace, existed: bool) -> None: ...
    def on_pdb_add(self, pdb: PodDisruptionBudget) -> None: ...
    def on_pod_add(self, pod: Pod, admission_error: str) -> None: ...
    def on_unbound_pods_add(self, run: Iterable[tuple[Pod, str]]) -> None: ...
    def on_bound_pods_add(self, pods: list[Pod], orders: np.ndarray, owners: list[str] | None,
                          uid_words: tuple) -> None: ...
    def on_pod_update(self, old: Pod, new: Pod) -> None: ...
    def on_pod_delete(self, old: Pod, reason: str) -> None: ...
    def on_object_event(self, kind: str, action: ActionType, old: KubeObject | None,
                        new: KubeObject | None) -> None: ...
    def on_pod_status_update(self, old: Pod | None, new: Pod) -> None: ...
    def on_preempting(self, victim: Pod, preemptor: Pod, node_name: str) -> None: ...
    def on_nomination_cleared(self, pod: Pod) -> None: ...


def _given_name(pod: Any) -> Any:
    """The name a pod (a Pod, or a manifest not decoded yet) comes with; falsy when the API
    server is to generate it (``generateName``). A manifest whose metadata is not a mapping
    answers None: its decoding reports the error."""
    if isinstance(pod, dict):
        md = pod.get("metadata")
        return md.get("name") if isinstance(md, dict) else None
    return getattr(pod, "name", "x")


class Cluster:
    """The object store, admission, the controllers and the pod store of a simulated cluster (see
    the module docstring); ``store`` is the scheduler cache it shares the nodes and bulk pods with,
    ``handler`` hears every change. ``strict`` makes unknown manifest fields an error; ``seed``
    drives the generated names."""

    #: ``add_object`` / ``update_object`` give an object built in code (not yet admitted) the
    #: create strategy and validation a manifest gets from the loader: a writer may hand it the
    #: object instead of its manifest (DynamicResources' PreBind does)
    validates_built_objects = True

    def __init__(self, store: Cache, handler: ClusterEventHandler, *, clock: Any, seed: int = 0,
                 strict: bool = False):
        self._store = store
        self._handler = handler
        self.clock = clock
        self.strict = strict
        #: the API server's feature gates (fields of disabled gates dropped on create, gated
        #: validation): the Scheduler's; None, v1.37.2's defaults
        self.api_gates = None
        #: whether the Priority admission plugin runs (``--disable-admission-plugins=Priority``
        #: turns it off, as scheduler_perf's API server does: pods and PodGroups keep the
        #: priority they were created with, or none)
        self.priority_admission = True
        self.names = NameGenerator(seed)
        self.namespaces: dict[str, Namespace] = {}
        #: the names of the namespaces being deleted (status.phase Terminating): the
        #: NamespaceLifecycle admission refuses new pods there (see _admit)
        self._terminating_namespaces: set[str] = set()
        self.priority_classes: dict[str, PriorityClass] = {}
        #: (number of classes, the global default one) when last found (see _global_default_priority_class)
        self._global_default_pc: tuple[int, PriorityClass | None] | None = None
        self.pdbs: dict[str, PodDisruptionBudget] = {}
        # The per-pod indexes are dict-like views (fastsched.scheduler.cache) over plain dicts plus
        # the bound pods added in bulk, which the cache keeps as columns (see _add_pods).
        bulk = store.bulk
        self._order_of = OrderIndex(bulk)       # uid -> when it was added (the namespace order)
        self.pods = PodMap(bulk, self._order_of)  # every known pod by uid (the informer's view)
        self._pod_uid_by_key = KeyIndex(bulk)   # namespace/name -> uid
        self._pod_uids_by_namespace = NamespaceIndex(bulk, self._order_of)  # namespace -> uids (ordered set)
        #: (kind, namespace, controller uid, "" for none) -> uids of the pods or workloads it controls,
        #: so a controller reads only what it may claim (see controlled_or_orphans)
        self._controlled = ControlledIndex(bulk)
        #: (namespace, owner uid) -> uids of the ResourceClaims it owns without controlling them
        #: (the garbage collector deletes those too when every owner is gone: see _delete_pod)
        self._claims_owned_by: dict[tuple[str, str], dict[str, None]] = {}
        #: (namespace, PodGroup name) -> uids of unbound members with template claims still to
        #: resolve: their PodGroup, or its claim, did not exist yet (the resourceclaim controller
        #: retries them when the PodGroup comes or changes)
        self._claims_waiting_for_group: dict[tuple[str, str], dict[str, None]] = {}
        #: uid -> the admission error of each pod the API server refused (the pod's Error result
        #: says it; explain of the pod answers it)
        self.admission_errors: dict[str, str] = {}
        self._added = itertools.count()
        #: pod specs validated by _admitted_pod (key -> the field objects)
        self._validated_specs: dict[tuple, tuple] = {}
        self._last_validated_spec: tuple | None = None
        #: while _add_pods_batched names a pod from ``generateName``: the keys (namespace/name) of
        #: the pods of its pending batches, admitted but not stored yet, which name_taken counts as
        #: taken (the API server names a pod seeing every pod created before it); None otherwise
        self._pending_pod_keys: set[str] | None = None
        self._object_by_uid: dict[str, KubeObject] = {}
        #: objects of the other kinds (workloads, Services, ...): kind -> namespace/name -> object
        self._objects: dict[str, dict[str, KubeObject]] = {}
        #: manifests of kinds not modelled that controllers created (a StatefulSet's claims)
        self._unmodelled: dict[str, dict[str, dict]] = {}
        self._object_versions: dict[str, int] = {}  # kind -> object_version(kind)
        self._binding_claims = False  # inside _pv_controller_sync (its writes do not recurse)
        self._unbound_claims: dict[str, None] = {}  # keys of the claims not bound yet, in order
        #: called as listener(kind, old, new) on each event of a kind the plugins read (the DRA
        #: manager's indexes, fastsched.plugins.dynamicresources.manager)
        self.object_listeners: list[Callable[[str, Any, Any], None]] = []

    # ==========================================================================================
    # adding, updating, deleting
    # ==========================================================================================

    @property
    def api_gates(self) -> Any:
        """The API server's feature gates (fields of disabled gates dropped on create, gated
        validation): the Scheduler's; None, v1.37.2's defaults."""
        return self._api_gates

    @api_gates.setter
    def api_gates(self, gates: Any) -> None:
        self._api_gates = gates
        #: the gates away from the defaults, as objects record theirs (KubeObject.decoded_under)
        self.api_gate_overrides = gate_overrides(gates)

    def add(self, objects: Any, *, strict: bool | None = None) -> None:
        """Add any mix of objects: what :func:`~fastsched.api.load_objects` reads (files,
        directories, cluster dumps, manifests, API-client objects) or fastsched objects.

        Kinds are applied in dependency order (namespaces, priority classes, nodes, ..., pods, then
        the workload controllers, which count the pods already there and create the rest). Kinds
        fastsched does not model are skipped with one warning.
        """
        loaded = objects_of(objects, strict=self.strict if strict is None else strict, feature_gates=self.api_gates)
        # the PV controller binds the batch's claims at its end, when all its volumes are there
        outer = not self._binding_claims
        self._binding_claims = True
        try:
            self._add_loaded(loaded)
        finally:
            if outer:
                self._binding_claims = False
        if outer:
            self._bind_unbound_claims()

    def _add_loaded(self, loaded: list) -> None:
        ranked = sorted(range(len(loaded)), key=lambda i: (self._add_rank(loaded[i]), i))
        controlled = []
        i = 0
        while i < len(ranked):
            obj = loaded[ranked[i]]
            if isinstance(obj, (Node, Pod)):
                # the nodes (pods) of the batch are contiguous in this order: add them together
                cls = Node if isinstance(obj, Node) else Pod
                j = i + 1
                while j < len(ranked) and isinstance(loaded[ranked[j]], cls):
                    j += 1
                run = [loaded[k] for k in ranked[i:j]]
                if cls is Node:
                    self._add_nodes(run)
                else:
                    self._add_pods(run)
                i = j
                continue
            if obj.KIND in RECONCILERS:
                # every workload of the batch is stored before any reconciles: a Deployment must
                # find the ReplicaSet that the same dump holds instead of making a new one
                controlled.append(self._store_object(self._admitted_new_object(obj)))
            else:
                self._add_object(obj)
            i += 1
        for obj in controlled:
            if self._objects[obj.KIND].get(obj.key) is obj:  # not replaced by a parent's reconcile
                self._reconcile(obj)

    @staticmethod
    def _add_rank(obj: KubeObject) -> int:
        rank = _ADD_ORDER.get(obj.KIND)
        if rank is not None:
            return rank
        return _CONTROLLER_KINDS_RANK if obj.KIND in RECONCILERS else _OTHER_KINDS_RANK

    def _add_object(self, obj: KubeObject) -> None:
        if isinstance(obj, Node):
            self.add_node(obj)
        elif isinstance(obj, Pod):
            self.add_pod(obj)
        elif isinstance(obj, Namespace):
            self.add_namespace(obj)
        elif isinstance(obj, PriorityClass):
            self.add_priority_class(obj)
        elif isinstance(obj, PodDisruptionBudget):
            self.add_pdb(obj)
        else:
            self.add_object(obj)

    def add_nodes(self, nodes: Any) -> None:
        """Add many nodes: as :meth:`add_node` for each, in order (vectorized, see _add_nodes)."""
        self._add_nodes(_instances_of(nodes, Node) or objects_of(nodes, Node, strict=self.strict,
                                                                  feature_gates=self.api_gates))

    def _add_nodes(self, nodes: list) -> None:
        """:meth:`add_node` for each node, in order, the new ones added to the cache together
        (one vectorized table update) when nothing observes them one at a time: no DaemonSet to
        reconcile per node and a quiet queue (see _queue_quiet). Errors are raised where the
        one-by-one adds would raise them, with the nodes before added."""
        if len(nodes) < 2 or self._objects.get("DaemonSet") or not self._handler.coalesce_adds():
            for node in nodes:
                self.add_node(node)
            return
        table = self._store.snapshot.table
        table.reserve_rows(len(table) + len(nodes))  # one reallocation for all the chunks
        with collector_paused():
            self._add_nodes_batched(nodes)
        if len(nodes) >= heap.RELEASE_AFTER:  # the batch's transients and the table's old columns
            heap.release_free_heap()

    def _add_nodes_batched(self, nodes: list) -> None:
        batch: list[Node] = []
        try:
            for node in nodes:
                if type(node) is not Node or not node.admitted or not node.name or \
                        (node.decoded_under is not None and node.decoded_under[0] != self.api_gate_overrides):
                    if not getattr(node, "name", "x"):
                        # a generated name must see the nodes before
                        pending, batch = batch, []
                        self._flush_nodes(pending)
                    node = self._admitted(node, Node)
                if node.creation_timestamp is None:
                    node = self._created(node, None)
                batch.append(node)
                if len(batch) >= _BULK_CHUNK:
                    pending, batch = batch, []
                    self._flush_nodes(pending)
        except BaseException:
            self._flush_nodes(batch)  # the nodes before the error (not yet flushed)
            raise
        self._flush_nodes(batch)

    def _flush_nodes(self, batch: list[Node]) -> None:
        """What add_node does for each node of ``batch`` (admitted), at once; one at a time when
        a name is taken (so that the error comes after the nodes before it are added)."""
        if not batch:
            return
        names = [node.name for node in batch]
        if len(set(names)) != len(names) or not self._store.snapshot.table.row_of.keys().isdisjoint(names):
            for node in batch:
                self.add_node(node)
            return
        self._handler.on_nodes_add(batch)

    def add_node(self, node: Any) -> None:
        """Add a node; a node of the same name is an error (``update_node`` replaces one)."""
        node = self._admitted(node, Node)
        if self._store.has_node(node.name):
            raise ManifestError(f'nodes "{node.name}" already exists')
        self._handler.on_node_add(self._created(node, None))
        self._reconcile_kind("DaemonSet")

    def update_node(self, node: Any) -> None:
        node = self._admitted(node, Node, update=True)
        old = self._store.get_node(node.name)
        if old is None:
            raise not_found("Node", node.name)
        self._handler.on_node_update(old, self._created(node, old))
        self._reconcile_kind("DaemonSet")

    def delete_node(self, name: str) -> None:
        old = self._store.get_node(name)
        if old is None:
            raise not_found("Node", name)
        self._handler.on_node_delete(old)
        self._reconcile_kind("DaemonSet")

    def add_namespace(self, ns: Any) -> None:
        ns = self._admitted(ns, Namespace)
        existed = ns.name in self.namespaces
        ns = self._created(ns, self.namespaces.get(ns.name))
        self.namespaces[ns.name] = ns
        if _namespace_terminating(ns):
            self._terminating_namespaces.add(ns.name)
        else:
            self._terminating_namespaces.discard(ns.name)
        self._handler.on_namespace_add(ns, existed)

    def add_priority_class(self, pc: Any) -> None:
        """Create a PriorityClass, as the API server does: validated, then the Priority admission
        (a second ``globalDefault`` is forbidden, even under the default's own name), then a name
        already taken is AlreadyExists (``update_object`` changes a class; its ``value`` and
        ``preemptionPolicy`` cannot change). A system class given as kube-apiserver creates it
        (validation refuses any other) is taken once without complaint: cluster dumps hold them."""
        pc = self._admitted(pc, PriorityClass)
        if pc.global_default and self.priority_admission:
            # plugin/pkg/admission/priority validatePriorityClass: on Create, any default there
            # refuses another (it was taken, and pods got its value)
            default = self._global_default_priority_class()
            if default is not None:
                raise _second_default(pc, default)
        if pc.name in self.priority_classes:
            # the registry's create of a taken name (genericregistry.Store.Create)
            raise ManifestError(f'{group_resource("PriorityClass")} "{pc.name}" already exists',
                                source=f"PriorityClass {pc.name}")
        self.priority_classes[pc.name] = self._created(pc, None)
        self._global_default_pc = None

    def update_priority_class(self, pc: Any) -> None:
        """Replace a PriorityClass (an added one or a system one), as the API server's update:
        NotFound for a class that does not exist; ``value`` and ``preemptionPolicy`` are immutable
        (pkg/apis/scheduling/validation ValidatePriorityClassUpdate); the Priority admission
        forbids making it the default while another class is. Pods keep the priority they were
        admitted with."""
        pc = self._admitted(pc, PriorityClass, update=True)
        old = self.priority_class(pc.name)
        if old is None:
            raise not_found("PriorityClass", pc.name)
        errors = []
        if pc.value != old.value:
            errors.append(FieldError.forbidden("value", "may not be changed in an update."))
        if pc.preemption_policy != old.preemption_policy:
            errors.append(FieldError.invalid("preemptionPolicy", pc.preemption_policy, "field is immutable"))
        if errors:
            raise ValidationError("PriorityClass", pc.name, errors)
        if pc.global_default and self.priority_admission:
            default = self._global_default_priority_class()
            if default is not None and default.name != pc.name:
                raise _second_default(pc, default)
        self.priority_classes[pc.name] = self._created(pc, old)
        self._global_default_pc = None

    def add_pdb(self, pdb: Any) -> None:
        pdb = self._created(self._admitted(pdb, PodDisruptionBudget), None)
        self.pdbs[pdb.key] = pdb
        self._handler.on_pdb_add(pdb)

    def add_pods(self, pods: Any) -> None:
        """Add many pods: as :meth:`add_pod` for each, in order (vectorized, see _add_pods)."""
        self._add_pods(_instances_of(pods, Pod) or objects_of(pods, Pod, strict=self.strict,
                                                             feature_gates=self.api_gates,
                                                             on_stamped=_admit_tolerations_in_place))

    def _add_pods(self, pods: list) -> None:
        """:meth:`add_pod` for each pod, in order. Bound pods (``spec.nodeName`` a node of the
        cluster, not terminal, not a duplicate) are added to the cache in vectorized batches and
        kept as columns (the cache's BulkPods) while the queue is quiet (see _queue_quiet); the
        other pods take :meth:`add_pod` in their turn. Errors are raised where the one-by-one adds
        would raise them, with the pods before added."""
        bound = sum(1 for pod in pods if getattr(pod, "node_name", None))
        self._store.snapshot.table.reserve_records(self._store.snapshot.table.pod_count_total() + bound)  # one reallocation
        self._store.bulk.reserve(self._store.bulk.n + bound)
        with collector_paused():
            self._add_pods_batched(pods)
        if len(pods) >= heap.RELEASE_AFTER:  # the batch's transients and the table's old columns
            heap.release_free_heap()

    def _add_pods_batched(self, pods: list) -> None:
        row_of = self._store.snapshot.table.row_of
        quiet = self._handler.coalesce_adds()
        batch: list[Pod] = []
        # unbound pods that add_pod would add with nothing but its stores and the handler's call
        # (no claims or volumes for the controllers, not terminal): one duplicate check for the
        # run, then add_pod's steps pod by pod (_flush_unbound). At most one of the two batches
        # holds pods: each is flushed before a pod of the other kind, so the order is kept.
        unbound: list[Pod] = []
        # _admit changes only pods without a priority when a class name or a default class exists
        global_default = any(c.global_default for c in self.priority_classes.values())
        # the keys of the pods put in the two batches since the first pod named here from
        # generateName (None before one): a generated name must see the pods before it, and those
        # of the batches are not stored yet. (Flushing the batches before such a pod instead
        # added every pod of a generateName workload alone, through add_pod: 12 µs a pod more
        # than named pods.) The set keeps flushed pods' keys too: they are stored, so taken anyway.
        pending_keys: set[str] | None = None
        try:
            for pod in pods:
                if not quiet:
                    self.add_pod(pod)
                    continue
                if pending_keys is None and not _given_name(pod):
                    pending_keys = {p.key for p in batch}
                    pending_keys.update(p.key for p in unbound)
                if pending_keys is not None:
                    self._pending_pod_keys = pending_keys
                    try:
                        pod = self._admitted_pod(pod)
                    finally:
                        self._pending_pod_keys = None
                    if pod.name:  # (a pod refused before it is named is not stored: add_pod says why)
                        pending_keys.add(pod.key)
                else:
                    pod = self._admitted_pod(pod)
                if pod.node_name in row_of and pod.phase not in TERMINAL_PHASES:
                    if unbound:
                        pending, unbound = unbound, []
                        self._flush_unbound(pending)
                        quiet = self._handler.coalesce_adds()  # a gated pod waits in unschedulablePods
                        if not quiet:
                            self.add_pod(pod)
                            continue
                    if pod.priority is None and (global_default or pod.priority_class_name):
                        pod = self._admit(pod)[0]  # a bound pod: an admission error does not matter
                    batch.append(pod)
                    if len(batch) >= _BULK_CHUNK:
                        pending, batch = batch, []
                        self._flush_pods(pending)
                    continue
                pending, batch = batch, []
                self._flush_pods(pending)
                # (a generated name that fails its check leaves the pod not admitted: add_pod's
                # validation reports it)
                if (pod.admitted and not pod.node_name and not pod.volumes and not pod.resource_claims
                        and pod.phase not in TERMINAL_PHASES):
                    unbound.append(pod)
                    if len(unbound) >= _BULK_CHUNK:
                        pending, unbound = unbound, []
                        self._flush_unbound(pending)
                        quiet = self._handler.coalesce_adds()
                    continue
                pending, unbound = unbound, []
                self._flush_unbound(pending)
                self.add_pod(pod)
                quiet = self._handler.coalesce_adds()  # a gated pod waits in unschedulablePods
        except BaseException:
            # the pods before the error (not yet flushed; one of the two is empty)
            self._flush_pods(batch)
            self._flush_unbound(unbound)
            raise
        self._flush_pods(batch)
        self._flush_unbound(unbound)

    def _pods_are_new(self, batch: list[Pod], uids: list[str], words: tuple) -> bool:
        """Whether no pod of ``batch`` has the uid or the namespace/name of a known pod or of
        another pod of the batch (set operations, no per-pod Python work; ``words``: the uids
        parsed)."""
        if len(set(uids)) != len(uids) or not dict.keys(self.pods).isdisjoint(uids):
            return False
        if self._store.bulk.index.any_of(uids, words):
            return False
        names_by_ns: dict[str, list[str]] = {}
        namespaces = [p.namespace for p in batch]
        if namespaces.count(namespaces[0]) == len(namespaces):
            names_by_ns[namespaces[0]] = [p.name for p in batch]
        else:
            for p in batch:
                names_by_ns.setdefault(p.namespace, []).append(p.name)
        for ns, names in names_by_ns.items():
            if len(set(names)) != len(names) or self._pod_uid_by_key.any_taken(ns, names):
                return False
        return True

    def _admitted_pod(self, pod: Any) -> Pod:
        """``_admitted(pod, Pod)``, validating the shared part of pods stamped from one template
        once: a pod built in code (no manifest) whose fields but name, uid and ``spec.nodeName``
        are those of a pod validated before (the same objects) can only fail validation on its name
        or node name, so only those are checked (and any failure is reported by the full
        validation, with the API server's messages)."""
        # (claims from templates, and generic ephemeral volumes' claims, are validated with the
        # pod's name: such pods take the full path, as do pods that PrepareForCreate changes: the
        # shortcut below marks the pod as it is)
        if (pod.__class__ is not Pod or pod.admitted or not pod.name or pod.manifest or pod.resource_claims
                or (pod.volumes and any(v.get("ephemeral") is not None for v in pod.volumes))
                or prepare_for_create(pod, self.api_gates) is not pod):
            if isinstance(pod, Pod) and pod.admitted and pod.name and (
                    pod.decoded_under is None or pod.decoded_under[0] == self.api_gate_overrides):
                return pod
            return self._admitted(pod, Pod)
        values = _POD_TEMPLATE_VALUES(pod)
        node_name = pod.node_name
        last = self._last_validated_spec
        if last is None or last[0] is not type(pod) or last[1] != bool(node_name) or values != last[2]:
            key = (type(pod), bool(node_name), *map(id, values))
            last = self._validated_specs.get(key)
            if last is None:
                pod = self._admitted(pod, Pod)  # raises when invalid
                if len(self._validated_specs) >= 1024:  # bounded: one entry per distinct spec
                    self._validated_specs.clear()
                # the entry keeps the field objects, so their ids stay theirs
                self._validated_specs[key] = (type(pod), bool(node_name), values)
                return pod
            self._last_validated_spec = last
        if not dns1123_subdomain_errors(pod.name) and not (node_name and dns1123_subdomain_errors(node_name)):
            pod.admitted = True
            return pod
        return self._admitted(pod, Pod)  # the API server's errors for the name

    def _flush_pods(self, batch: list[Pod]) -> None:
        """What add_pod does for each pod of ``batch`` (admitted, bound to nodes of the cluster, not
        terminal), at once; one at a time when a uid or name is taken (so that the error comes
        after the pods before it are added)."""
        if not batch:
            return
        uids = [p.uid for p in batch]
        words = uid_words(uids)
        if not self._pods_are_new(batch, uids, words):
            for pod in batch:
                self.add_pod(pod)
            return
        n = len(batch)
        start = next(self._added)
        self._added = itertools.count(start + n)
        owners = None
        if any(p.owner_references for p in batch):
            owners = [_controller_uid(p) for p in batch]
        # the handler writes them to the cache's bulk columns, which this store's indexes view
        self._handler.on_bound_pods_add(batch, np.arange(start, start + n), owners, words)

    def _flush_unbound(self, batch: list[Pod]) -> None:
        """What add_pod does for each pod of ``batch`` (admitted, unbound, not terminal, no
        volumes or claims), in order: the duplicate checks once for the batch (set operations),
        then for each pod admission, the stores and the handler's call, as add_pod (the handler
        of pod i sees the cluster as add_pod leaves it: pods after i not yet stored). When a uid
        or name is taken, add_pod for each pod (so the error comes after the pods before it)."""
        if not batch:
            return
        uids = [p.uid for p in batch]
        # (a short run, e.g. between two pods named from generateName, which must see the pods
        # before them stored: the set operations' and the uid parsing's fixed cost is more than
        # add_pod's checks of a few pods)
        if len(batch) < _UNBOUND_RUN_MIN or not self._pods_are_new(batch, uids, uid_words(uids)):
            for pod in batch:
                self.add_pod(pod)
            return
        # the handler takes the run (its queue adds the pods to activeQ at once) and asks for
        # each pod in turn: the stores of pod i are made before its on_pod_add, after pod i-1's
        self._handler.on_unbound_pods_add(self._stored_unbound(batch))

    def _stored_unbound(self, batch: list[Pod]) -> Iterator[tuple[Pod, str]]:
        """Each pod of ``batch`` (checked new by _flush_unbound) admitted and stored, as add_pod
        stores it, when the consumer asks for it: ``(pod, admission error)``."""
        pods, by_key = self.pods, self._pod_uid_by_key
        by_namespace, order_of = self._pod_uids_by_namespace, self._order_of
        for pod in batch:
            pod, err = self._admit(pod)
            uid = pod.uid
            pods[uid] = pod
            # (the uids and keys are in neither the dicts nor the bulk pods: _pods_are_new)
            by_key.add_new(pod.key, uid)
            by_namespace.add_new(pod.namespace, uid)
            order_of.add_new(uid, next(self._added))
            self._index_controller(pod, True)
            if err:
                self.admission_errors[uid] = err
            yield pod, err

    def add_pod(self, pod: Any) -> None:
        """Add a pod: with ``spec.nodeName`` it is running; otherwise it is to be scheduled.

        A pod whose phase is Succeeded or Failed is kept (``objects``, controllers count it) but the
        scheduler never hears of it (upstream's informers filter terminated pods out).
        """
        pod = self._admitted(pod, Pod)
        if pod.key in self._pod_uid_by_key:
            raise ManifestError(f'pods "{pod.name}" already exists', source=f"Pod {pod.key}")
        if pod.uid in self.pods:
            other = self.pods[pod.uid]
            raise ManifestError(f"pod {pod.key} has the uid {pod.uid} of pod {other.key}", "metadata.uid")
        pod, err = self._admit(pod)
        # the ephemeral-volume controller: generic ephemeral volumes' claims (checked before any
        # object is created, so a refused pod leaves nothing behind)
        ephemeral = self._ephemeral_claims(pod) if pod.volumes and not pod.node_name else ()
        if pod.resource_claims and not pod.node_name:
            pod = dra_controller.pod_added(self, pod)  # the resourceclaim controller: claims from templates
            if pod.pod_group_name is not None and dra_controller.has_unresolved_templates(pod):
                self._claims_waiting_for_group.setdefault((pod.namespace, pod.pod_group_name), {})[pod.uid] = None
        for claim in ephemeral:
            self.add_object(claim)
        self.pods[pod.uid] = pod
        self._pod_uid_by_key[pod.key] = pod.uid
        self._pod_uids_by_namespace.setdefault(pod.namespace, {})[pod.uid] = None
        self._order_of[pod.uid] = next(self._added)
        self._index_controller(pod, True)
        if pod.phase in TERMINAL_PHASES:
            return
        if err and not pod.node_name:  # (a bound pod is counted on its node all the same)
            self.admission_errors[pod.uid] = err
        self._handler.on_pod_add(pod, err)

    def _admitted(self, obj: Any, cls: type[KubeObject], *, update: bool = False) -> Any:
        """``obj`` as a validated ``cls`` with a name: read from a manifest (validated by the
        loader) or, when built or changed in code, validated here; a name generated from
        ``generateName``. A built object that is created (not ``update``) first gets the create
        strategy's ``PrepareForCreate`` that the loader gives a manifest (fields of disabled
        gates dropped, an unbound pod's node-allocatable claim statuses reset), so that a pod
        built in code and the same pod written as a manifest are the same pod."""
        if not isinstance(obj, cls):
            obj = cls.from_manifest(obj, strict=self.strict, feature_gates=self.api_gates)
        elif obj.decoded_under is not None and obj.decoded_under[0] != self.api_gate_overrides:
            # decoded beforehand under other gates: taken as these decode it, or an error when it
            # lost fields at decoding that these keep
            obj = check_decoded_gates(obj, self.api_gates)
        if not obj.admitted:
            if not update:
                obj = prepare_for_create(obj, self.api_gates)
            raise_if_invalid(obj, self.api_gates)
            obj.admitted = True
        if not obj.name and obj.generate_name:
            obj = self._with_generated_name(obj)
        return obj

    def _with_generated_name(self, obj: KubeObject) -> KubeObject:
        """The API server's ``generateName``: a free name of ``base[:58]`` + 5 seeded characters."""
        while True:
            name = self.names.generate(obj.generate_name)
            if not self.name_taken(obj.KIND, obj.namespace, name):
                break
        manifest = obj.manifest
        if manifest:
            manifest = dict(manifest)
            manifest["metadata"] = {**(manifest.get("metadata") or {}), "name": name}
        if type(obj) is Pod and obj.admitted and not obj.resource_claims:
            # Validated without a name (its generateName checked), the pod's validation with the
            # name differs only by the name's own check (claims from templates, whose generated
            # names are checked with the pod's, aside): that check alone, and the full validation
            # only for its message. A field copy (replace would run __init__ and re-wrap every
            # field, ~a fifth of adding such a pod); the uid, when empty, is the new name's, as
            # __post_init__ makes it.
            named = obj.stamped(name=name, uid=obj.uid, node_name=obj.node_name,
                                creation_timestamp=obj.creation_timestamp, manifest=manifest)
            named.admitted = not dns1123_subdomain_errors(name)
            return named
        return obj.replace(name=name, uid=obj.uid, manifest=manifest)

    def _admit_pod_group(self, pg: Any) -> Any:
        """The Priority admission plugin's ``admitPodGroup`` (GenericWorkload only): ``spec.priority``
        and ``spec.priorityClassName`` from the named class, else the global default one (the
        lowest-valued), else 0; a class that does not exist, or a given priority that differs,
        refuses the PodGroup (upstream's Forbidden). With PodGroupPreemptionPolicy, ``spec.
        preemptionPolicy`` becomes the class's (PreemptLowerPriority without one); a policy in the
        spec that differs is refused. The spec's policy is the defaulted one by then
        (``SetDefaults_PodGroup`` runs before admission, as the API server decodes before it
        admits): a PodGroup of a ``Never`` class must say ``preemptionPolicy: Never``."""
        gates = self.api_gates
        if gates is None or not gates.get("GenericWorkload", False) or not self.priority_admission:
            return pg
        forbidden = f'podgroups.scheduling.k8s.io "{pg.name}" is forbidden: '
        if pg.priority_class_name:
            pc = self.priority_class(pg.priority_class_name)
            if pc is None:
                raise ManifestError(forbidden + f"no PriorityClass with name {pg.priority_class_name} was found",
                                    path="spec.priorityClassName", source=f"PodGroup {pg.key}")
        else:
            defaults = [c for c in self.priority_classes.values() if c.global_default]
            pc = min(defaults, key=lambda c: c.value) if defaults else None
        name, value = (pc.name, pc.value) if pc is not None else ("", 0)
        if pg.priority is not None and pg.priority != value:
            raise ManifestError(forbidden + f"priority set in the pod group ({pg.priority}) must match the priority "
                                f"computed ({value}) based on the priority class set in the spec",
                                path="spec.priority", source=f"PodGroup {pg.key}")
        changes: dict[str, Any] = {}
        if gates.get("PodGroupPreemptionPolicy", False):
            # getDefaultPriority: no class at all gives PreemptLowerPriority; a PriorityClass's policy
            # is never unset (defaulted), and validated to one of the two values the switch accepts
            policy = (pc.preemption_policy or "PreemptLowerPriority") if pc is not None else "PreemptLowerPriority"
            if pg.preemption_policy is not None and pg.preemption_policy != policy:
                raise ManifestError(forbidden + f"the string value of PreemptionPolicy ({pg.preemption_policy}) must "
                                    f"not be provided in pod group spec; priority admission controller computed "
                                    f"{policy} from the given PriorityClass name", path="spec.preemptionPolicy",
                                    source=f"PodGroup {pg.key}")
            if pg.preemption_policy != policy:
                changes["preemption_policy"] = policy
        if pg.priority == value and pg.priority_class_name == name and not changes:
            return pg
        admitted = pg.replace(priority=value, priority_class_name=name, **changes)
        admitted.admitted = True
        return admitted

    def _admit(self, pod: Pod) -> tuple[Pod, str]:
        """The API server's admission of a new pod: NamespaceLifecycle (first, as the API server
        orders them) for a pod to schedule, refused in a namespace being terminated (see
        _namespace_terminating_refusal); DefaultTolerationSeconds for a pod to schedule (a bound
        pod came from a cluster, through admission already; its tolerations change no
        decision, and bulk adds of bound pods skip the copy), then Priority (the class resolved),
        then RuntimeClass for a pod to schedule: a bound pod's overhead, nodeSelector and
        tolerations are what the admission made them when it was created (a dump need not hold
        the RuntimeClasses), and the bulk adds of bound pods agree."""
        if not pod.node_name:
            if pod.namespace in self._terminating_namespaces:
                return pod, _namespace_terminating_refusal(pod)
            pod = _with_default_tolerations(pod)
        pod, err = self._admit_priority(pod)
        if err or pod.node_name:
            return pod, err
        return self._admit_runtime_class(pod)

    def _admit_priority(self, pod: Pod) -> tuple[Pod, str]:
        """The Priority admission plugin (admitPod, Create) for a pod without a priority."""
        if pod.priority is not None or not self.priority_admission:
            return pod, ""
        pc = None
        if pod.priority_class_name:
            pc = self.priority_class(pod.priority_class_name)
            if pc is None:
                return pod, f"no PriorityClass with name {pod.priority_class_name} was found"
        else:
            pc = self._global_default_priority_class()
        if pc is None:
            return pod, ""
        changes: dict[str, Any] = {"priority": pc.value}
        if pc.preemption_policy:
            changes["preemption_policy"] = pc.preemption_policy
        return pod.replace(**changes), ""

    def _admit_runtime_class(self, pod: Pod) -> tuple[Pod, str]:
        """The RuntimeClass admission plugin (after Priority, as the API server orders them), for
        a pod naming a RuntimeClass: ``prepareObjects`` refuses it when the class does not exist;
        ``setOverhead`` makes the class's ``overhead.podFixed`` the pod's overhead (refusing a pod
        whose own overhead differs); ``setScheduling`` merges the class's nodeSelector (refusing a
        conflicting one) and tolerations into the pod's; ``validateOverhead`` refuses a pod with an
        overhead the class does not define. (validateOverhead is not applied to pods naming no
        RuntimeClass: see the deviations.)"""
        name = runtime_class_name(pod)  # ("" for a pod built in code: no spec.runtimeClassName)
        if not name:
            # validateOverhead without a class: an overhead set at all (``pod.Spec.Overhead !=
            # nil``, an empty map too) is refused; only the admission may write one
            if pod.overhead or _spec_has(pod, "overhead"):
                return pod, _OVERHEAD_WITHOUT_CLASS
            return pod, ""
        rc = self._objects.get("RuntimeClass", {}).get(name)
        if not isinstance(rc, RuntimeClass):
            return pod, f'pod rejected: RuntimeClass "{name}" not found'
        fixed = rc.overhead_pod_fixed_nanos
        if fixed is not None and rc.overhead_pod_fixed is not None:  # setOverhead
            # (apiequality.Semantic: the same names, each quantity equal by Cmp)
            if pod.overhead and dict(pod.overhead_nanos) != dict(fixed):
                return pod, "pod rejected: Pod's Overhead doesn't match RuntimeClass's defined Overhead"
            if dict(pod.overhead_nanos) != dict(fixed):
                pod = pod.replace(overhead=dict(rc.overhead_pod_fixed), exact_overhead_nanos=dict(fixed))
        if rc.has_scheduling:  # setScheduling
            selector = rc.scheduling_node_selector
            if pod.node_selector is not None:
                for key, value in (selector or {}).items():
                    if key in pod.node_selector and pod.node_selector[key] != value:
                        return pod, (f"conflict: runtimeClass.scheduling.nodeSelector[{key}] = {value}; "
                                     f"pod.spec.nodeSelector[{key}] = {pod.node_selector[key]}")
                selector = {**pod.node_selector, **(selector or {})}
            pod = pod.replace(node_selector=selector,
                              tolerations=merge_tolerations(tuple(pod.tolerations), rc.scheduling_tolerations))
        if fixed is None and (pod.overhead or _spec_has(pod, "overhead")):  # validateOverhead (last)
            return pod, _OVERHEAD_WITHOUT_CLASS
        return pod, ""

    def _admit_update(self, old: Pod, new: Pod) -> Pod:
        """The API server's admission of a pod update: DefaultTolerationSeconds handles Update as
        Create (a pod to schedule whose new version leaves out the two NoExecute tolerations gets
        them again: a gated pod's update removing its gates would otherwise sign and tolerate
        unlike the same pod created ungated), and Priority keeps the priority and preemption
        policy it set at creation when the new version does not say them (``admitPod``, Update)."""
        if not new.node_name:
            new = _with_default_tolerations(new)
        if self.priority_admission and old.priority is not None and new.priority is None:
            changes: dict[str, Any] = {"priority": old.priority}
            # (the field reads PreemptLowerPriority when unset: unset is the manifest's silence)
            if "preemptionPolicy" not in ((new.manifest or {}).get("spec") or {}):
                changes["preemption_policy"] = old.preemption_policy
            new = new.replace(**changes)
        return new

    def priority_class(self, name: str) -> PriorityClass | None:
        """The PriorityClass named ``name``: one added, else a system class (system-node-critical,
        system-cluster-critical), which kube-apiserver creates when it starts (its post-start hook
        AddSystemPriorityClasses), so that a pod naming one is admitted with its value where it
        was refused as naming no class. (They are not listed among the objects added.)"""
        pc = self.priority_classes.get(name)
        if pc is None and name in SYSTEM_PRIORITY_CLASSES:
            pc = SYSTEM_PRIORITY_CLASSES[name]
        return pc

    def _global_default_priority_class(self) -> PriorityClass | None:
        """The PriorityClass with ``globalDefault``, found once per change of the classes (each
        pod without a priority asks: a scan per pod was 5% of add_pods). Several can exist only
        with the Priority admission off (or by a race, upstream): then the one of the lowest value
        (the first added among equals), as upstream's getDefaultPriorityClass and the PodGroups'
        admission here pick it."""
        known = self._global_default_pc
        classes = self.priority_classes
        if known is None or known[0] != len(classes):
            defaults = [c for c in classes.values() if c.global_default]
            known = self._global_default_pc = (len(classes), min(defaults, key=lambda c: c.value) if defaults else None)
        return known[1]

    def update_pod(self, pod: Any) -> None:
        """Replace a known pod (same uid) with a new version; the scheduler hears the update.

        A pod whose phase becomes Succeeded or Failed is, for the scheduler, deleted (upstream's
        cache drops terminated pods); its controller (a Job) then reconciles."""
        new = self._admitted(pod, Pod, update=True)
        old = self.pods.get(new.uid)
        if old is None:
            raise not_found("Pod", new.name)
        new = self._admit_update(old, new)
        self.pods[new.uid] = new
        self._index_controller(old, False)
        self._index_controller(new, True)
        if old.phase in TERMINAL_PHASES:
            return
        self._handler.on_pod_update(old, new)
        if new.phase in TERMINAL_PHASES:
            self._reconcile_owner(new)

    def delete_pod(self, pod: Any, *, reason: str = "") -> None:
        """Delete a pod (running or queued); freed resources may let queued pods schedule. The
        pod's controller, if it is one of the added workload objects, reconciles (a ReplicaSet
        replaces a deleted pod, as in a cluster)."""
        self._reconcile_owner(self._delete_pod(pod, reason))

    def _delete_pod(self, pod: Any, reason: str) -> Pod:
        """Delete a pod without waking its controller; the deleted pod."""
        uid = pod.uid if isinstance(pod, Pod) else pod
        # a bound pod added in bulk (a preemption victim): out of every index in one step
        old = pop_bulk_pod(uid, _controller_uid, self.pods, self._pod_uid_by_key, self._order_of,
                           self._pod_uids_by_namespace, self._controlled)
        if old is None:
            old = self.pods.pop(uid, None)
            if old is None:  # named by its name when given as a Pod, by its uid when given one
                raise not_found("Pod", pod.name if isinstance(pod, Pod) else uid)
            self._pod_uid_by_key.pop(old.key, None)
            self._index_controller(old, False)
            self._order_of.pop(uid, None)
            namespace_uids = self._pod_uids_by_namespace.get(old.namespace)
            if namespace_uids is not None:
                namespace_uids.pop(uid, None)
        self.admission_errors.pop(uid, None)
        self._handler.on_pod_delete(old, reason)
        if old.resource_claims:
            dra_controller.pod_removed(self, old)  # the resourceclaim controller: reservedFor, generated claims
        for claim_uid in list(self._controlled.get(("PersistentVolumeClaim", old.namespace, uid), ())):
            claim = self._object_by_uid.get(claim_uid)  # the garbage collector: claims the pod controls
            if claim is not None:                       # (generic ephemeral volumes')
                self.delete_object(claim.KIND, claim.name, claim.namespace)
        for claim_uid in list(self._controlled.get(("ResourceClaim", old.namespace, uid), ())):
            claim = self._object_by_uid.get(claim_uid)  # the ResourceClaims the pod controls (DynamicResources'
            if isinstance(claim, ResourceClaim):        # claim for its DRA-backed extended resources; those
                dra_controller.owner_removed(self, claim, uid)  # from its templates, done above): as pod_removed
        for claim_uid in list(self._claims_owned_by.get((old.namespace, uid), ())):
            claim = self._object_by_uid.get(claim_uid)  # and those it owns without controlling them
            if isinstance(claim, ResourceClaim):        # (named by the pod or not)
                dra_controller.owner_removed(self, claim, uid)
        return old

    # ==========================================================================================
    # other kinds: workloads, Services, ... (the controllers' part)
    # ==========================================================================================
    def add_object(self, obj: Any) -> KubeObject:
        """Add an object of a kind other than Pod, Node, Namespace, PriorityClass or
        PodDisruptionBudget (those have their own ``add_*``). A workload object's controller
        creates its pods (and a Deployment its ReplicaSet, a CronJob its Job) at once. Returns
        the object as stored by the create (its generated name and uid), as the API server's
        create answers, before its controllers reconcile."""
        obj = self._admitted_new_object(obj)
        if obj.KIND in _PV_ADMISSION_KINDS:  # DefaultStorageClass admission; creationTimestamp
            classes = [sc for sc in self._objects.get("StorageClass", {}).values() if isinstance(sc, StorageClass)]
            obj = pv_controller.admitted(obj, classes, self.creation_time())
        if isinstance(obj, PodGroup):
            obj = self._admit_pod_group(obj)
            if obj.resource_claims:  # the resourceclaim controller: the group's claims from templates
                obj = dra_controller.pod_group_added(self, obj)
        obj = created = self._store_object(obj)
        self._reconcile(obj)
        if obj.KIND == "PodGroup":
            self._retry_group_members(obj)
        if obj.KIND == "ResourceClaimTemplate":  # the resourceclaim controller retries waiting pods
            for old, new in dra_controller.template_added(self, obj, [p for p in self.pods.values() if not p.node_name]):
                self.update_pod(new)
            for pg in list(self._objects.get("PodGroup", {}).values()):  # and PodGroups
                if isinstance(pg, PodGroup) and pg.namespace == obj.namespace and any(
                        e.resource_claim_template_name == obj.name for e in pg.resource_claims):
                    new_pg = dra_controller.pod_group_added(self, pg)
                    if new_pg is not pg:
                        self._store_object(new_pg)
                        self._retry_group_members(new_pg)
        return created

    def _retry_group_members(self, pod_group: Any) -> None:
        """The resourceclaim controller: members waiting for ``pod_group`` (or its claims) get
        their claims now that it is there."""
        waiting = self._claims_waiting_for_group.get((pod_group.namespace, pod_group.name))
        if not waiting:
            return
        pods = [self.pods[uid] for uid in waiting if uid in self.pods and not self.pods[uid].node_name]
        for old, new in dra_controller.pod_group_members_ready(self, pod_group, pods):
            self.update_pod(new)
        for uid in list(waiting):
            pod = self.pods.get(uid)
            if pod is None or pod.node_name or not dra_controller.has_unresolved_templates(pod):
                del waiting[uid]
        if not waiting:
            del self._claims_waiting_for_group[(pod_group.namespace, pod_group.name)]

    def _admitted_new_object(self, obj: Any) -> KubeObject:
        obj = self._admitted_any(obj)
        if obj.key in self._objects.get(obj.KIND, {}):
            raise ManifestError(f'{_resource_name(obj.KIND)} "{obj.name}" already exists',
                                source=f"{obj.KIND} {obj.key}")
        return obj

    def update_object(self, obj: Any) -> None:
        """Replace an object added with :meth:`add_object` (same kind, namespace and name); its
        controller reconciles (scaling a Deployment creates or deletes pods)."""
        obj = self._admitted_any(obj, update=True)
        if isinstance(obj, PriorityClass):
            self.update_priority_class(obj)
            return
        old = self._objects.get(obj.KIND, {}).get(obj.key)
        if old is None:
            raise not_found(obj.KIND, obj.name)
        if obj.KIND == "ResourceClaim":
            # a claim's status write (claim_with_status's copy counts as admitted, so the full
            # validation above did not run): the API server's ValidateResourceClaimStatusUpdate
            # refuses a reservedFor past 256 entries, which DynamicResources' PreBind relies on
            errors = validate_resource_claim_status_update(obj)
            if errors:
                raise ValidationError(obj.KIND, obj.name, errors)
        if obj.uid != old.uid and not (obj.manifest.get("metadata") or {}).get("uid"):
            obj = obj.replace(uid=old.uid)  # the same object, re-read without its uid
        self._reconcile(self._store_object(obj))

    def _store_object(self, obj: KubeObject) -> KubeObject:
        """Store ``obj`` (its add or update event sent); returns what was stored."""
        if obj.KIND == "PersistentVolume":
            obj = synced_volume(obj)  # the PV controller's part: a new unclaimed volume is Available
        store = self._objects.setdefault(obj.KIND, {})
        old = store.get(obj.key)
        obj = self._created(obj, old)
        if old is not None:
            self._index_controller(old, False)
            if isinstance(old, ResourceClaim):
                self._index_claim_owners(old, False)
            self._object_by_uid.pop(old.uid, None)
            self._order_of[obj.uid] = self._order_of.pop(old.uid)
        else:
            self._order_of[obj.uid] = next(self._added)
        store[obj.key] = obj
        self._object_by_uid[obj.uid] = obj
        self._index_controller(obj, True)
        if isinstance(obj, ResourceClaim):
            self._index_claim_owners(obj, True)
        self._object_event(obj.KIND, ActionType.UPDATE if old is not None else ActionType.ADD, old, obj)
        if obj.KIND in _PV_CONTROLLER_KINDS:
            self._pv_controller_sync(obj)
        return obj

    def _created(self, obj: _K, old: KubeObject | None) -> _K:
        """``obj`` with the API server's ``metadata.creationTimestamp``: set on create (``old``
        None) from its clock, and immutable (an update keeps ``old``'s, whatever it says). A create
        that gives one keeps it: a cluster dump's objects were created before, and their stored
        times are what readers see."""
        if old is None:
            if obj.creation_timestamp is None:
                return with_creation_timestamp(obj, self.creation_time())
        elif obj.creation_timestamp != old.creation_timestamp:
            return with_creation_timestamp(obj, old.creation_timestamp)
        return obj

    def creation_time(self) -> float:
        """The ``metadata.creationTimestamp`` the API server gives an object created now: the
        run's clock (virtual time in a simulation, deterministic) in whole seconds, as the API
        server stores it (RFC 3339, no fraction) and its watchers read it."""
        return float(math.floor(self.clock.now()))

    def _pv_controller_sync(self, obj: KubeObject) -> None:
        """The PV controller's part: claims that do not wait for a consumer are bound (or
        provisioned) as soon as they can be (:mod:`fastsched.controller.persistentvolume`). The
        unbound claims are indexed, so a cluster of bound claims costs nothing here."""
        if isinstance(obj, PersistentVolumeClaim):
            if claim_is_unbound(obj):
                self._unbound_claims[obj.key] = None
            else:
                self._unbound_claims.pop(obj.key, None)
        if isinstance(obj, PersistentVolume) and obj.phase != "Available" and obj.claim_ref is None:
            return  # a volume no claim can take
        self._bind_unbound_claims()

    def _bind_unbound_claims(self) -> None:
        if not self._unbound_claims or self._binding_claims:
            return  # nothing to bind, or inside a binding (or an add() batch, which binds at its end)
        self._binding_claims = True
        try:
            store = self._objects.get("PersistentVolumeClaim", {})
            bind_immediate_claims(self, [claim for key in self._unbound_claims
                                         if isinstance(claim := store.get(key), PersistentVolumeClaim)])
        finally:
            self._binding_claims = False

    def _ephemeral_claims(self, pod: Pod) -> list[KubeObject]:
        """The claims of ``pod``'s generic ephemeral volumes that do not exist yet, validated. An
        invalid claim template makes the pod invalid, as the API server's pod validation checks
        each ``spec.volumes[i].ephemeral.volumeClaimTemplate``."""
        claims: list[KubeObject] = []
        errors: list[FieldError] = []
        indices = [i for i, v in enumerate(pod.volumes) if v.get("ephemeral") is not None]
        if not indices:  # (every pod of the volume cases: claims of their own, no template)
            return claims
        for i, manifest in zip(indices, ephemeral_claim_manifests(pod)):
            if self.get_object("PersistentVolumeClaim", manifest["metadata"]["name"], pod.namespace) is not None:
                continue
            try:
                claims.append(self._admitted_any(manifest))
            except ValidationError as e:
                prefix = f"spec.volumes[{i}].ephemeral.volumeClaimTemplate."
                errors.extend(dataclasses.replace(err, path=prefix + err.path) for err in e.errors)
        if errors:
            raise ValidationError("Pod", pod.name, errors)
        return claims

    def object_version(self, kind: str) -> int:
        """A counter bumped by every add, update and delete of an object of ``kind`` (a kind the
        plugins read: volumes, claims, DRA objects), for the plugins' caches."""
        return self._object_versions.get(kind, 0)

    def _object_event(self, kind: str, action: ActionType, old: KubeObject | None, new: KubeObject | None) -> None:
        """An object of another kind changed: for a kind the plugins read (volumes, claims, DRA
        objects), its version counter and the listeners first (the plugins' indexes are current
        when the scheduler hears the event), then the scheduler's handler, for every kind."""
        if kind in EVENT_RESOURCE_OF_KIND:
            self._object_versions[kind] = self._object_versions.get(kind, 0) + 1
            for listener in self.object_listeners:
                listener(kind, old, new)
        self._handler.on_object_event(kind, action, old, new)

    def delete_object(self, kind: str, name: str, namespace: str = "default") -> None:
        """Delete an object added with :meth:`add_object`; what it controls goes with it
        (cascading deletion by owner references: a Deployment's ReplicaSets and their pods)."""
        if kind == "PriorityClass":
            self._delete_priority_class(name)
            return
        if kind == "Namespace":
            self._delete_namespace(name)
            return
        store = self._objects.get(kind, {})
        key = name if _is_cluster_scoped(kind) else f"{namespace}/{name}"
        obj = store.pop(key, None)
        if obj is None:
            raise not_found(kind, name)
        self._index_controller(obj, False)
        if isinstance(obj, ResourceClaim):
            self._index_claim_owners(obj, False)
        self._object_by_uid.pop(obj.uid, None)
        self._order_of.pop(obj.uid, None)
        if kind == "PersistentVolumeClaim":
            self._unbound_claims.pop(obj.key, None)
        self._object_event(kind, ActionType.DELETE, obj, None)
        if isinstance(obj, PodGroup) and obj.resource_claims:
            dra_controller.pod_group_removed(self, obj)  # the resourceclaim controller: its reservations
        self._delete_dependents(obj)
        if isinstance(obj, PersistentVolumeClaim):
            pv_controller.reclaim_volumes(self, obj)  # its volume released, deleted or recycled

    def _delete_priority_class(self, name: str) -> None:
        """Delete a PriorityClass: the pods admitted with its value keep it (as upstream, where
        the priority is written into the pod). A system class cannot be deleted, added or not
        (pkg/registry/scheduling/priorityclass/storage REST.Delete)."""
        if name in SYSTEM_PRIORITY_CLASSES:
            raise ManifestError(f'{group_resource("PriorityClass")} "{name}" is forbidden: this is a system '
                                "priority class and cannot be deleted", source=f"PriorityClass {name}")
        if self.priority_classes.pop(name, None) is None:
            raise not_found("PriorityClass", name)
        self._global_default_pc = None

    def _delete_namespace(self, name: str) -> None:
        """Delete a namespace as the API server and the namespace controller do, at once:
        NamespaceLifecycle forbids deleting ``default``, ``kube-system`` and ``kube-public``
        (k8s.io/apiserver's lifecycle admission); the namespace turns Terminating (new pods there
        are refused), the namespace controller deletes its content (pkg/controller/namespace
        deletion: every namespaced kind; the workloads first here, so that no controller replaces
        what goes, then the pods, each a pod deletion the scheduler hears, then the other
        objects, each with its delete event), and the Namespace is gone. Upstream a bound pod
        terminates gracefully (the kubelet ends it) and the namespace stays Terminating until the
        last one is gone; fastsched deletes them at once, as :meth:`delete_pod`. A namespace
        fastsched admitted pods or objects into without its Namespace object counts as existing
        (see ``_namespace_terminating_refusal``); one with neither is NotFound."""
        if name in _IMMORTAL_NAMESPACES:
            raise ManifestError(f'namespaces "{name}" is forbidden: this namespace may not be deleted',
                                source=f"Namespace {name}")
        if (name not in self.namespaces and not self._pod_uids_by_namespace.get(name)
                and not self._namespace_content(name)):
            raise not_found("Namespace", name)
        self._terminating_namespaces.add(name)
        reason = f"deleted with its namespace {name}"
        for obj in self._namespace_content(name, controllers_only=True):
            if self._objects.get(obj.KIND, {}).get(obj.key) is obj:  # (not gone with an owner)
                self.delete_object(obj.KIND, obj.name, name)
        for pod in self.pods_in_namespace(name):
            if pod.uid in self.pods:
                self._delete_pod(pod, reason)
        for obj in self._namespace_content(name):
            if self._objects.get(obj.KIND, {}).get(obj.key) is obj:
                self.delete_object(obj.KIND, obj.name, name)
        for key in [k for k, pdb in self.pdbs.items() if pdb.namespace == name]:
            del self.pdbs[key]
        for manifests in self._unmodelled.values():
            for key in [k for k in manifests if k.startswith(name + "/")]:
                del manifests[key]
        self.namespaces.pop(name, None)
        self._terminating_namespaces.discard(name)

    def _namespace_content(self, namespace: str, *, controllers_only: bool = False) -> list[KubeObject]:
        """The objects of the general store in ``namespace`` (the workload controllers' kinds
        only, with ``controllers_only``), in the order added."""
        return [obj for kind, store in self._objects.items()
                if not _is_cluster_scoped(kind) and (kind in RECONCILERS or not controllers_only)
                for obj in store.values() if obj.namespace == namespace]

    def _delete_dependents(self, owner: KubeObject) -> None:
        if owner.namespace and not any(self._controlled.get((kind, owner.namespace, owner.uid))
                                       for kind in (*self._objects, "Pod")):
            # nothing is controlled by it (the index answers without scanning every object; a
            # namespaced owner's dependents are in its namespace, a cluster-scoped one's anywhere)
            return
        for kind, store in list(self._objects.items()):
            for child in [o for o in store.values() if _controlled_by(o, owner)]:
                if isinstance(child, ResourceClaim) and child.finalizers:
                    dra_controller.collect(self, child)  # (a PodGroup's: terminating while reserved)
                else:
                    self.delete_object(kind, child.name, child.namespace)
        for uid in list(self._pod_uids_by_namespace.get(owner.namespace, ())):
            pod = self.pods.get(uid)
            if pod is not None and _controlled_by(pod, owner):
                self._delete_pod(pod, f"deleted with its owner {owner.KIND} {owner.key}")

    def scale(self, kind: str, name: str, replicas: int, namespace: str = "default") -> None:
        """Set ``spec.replicas`` of a Deployment, ReplicaSet, StatefulSet or ReplicationController
        (``spec.parallelism`` of a Job); its controller creates or deletes pods to match."""
        key = f"{namespace}/{name}"
        obj = self._objects.get(kind, {}).get(key)
        if obj is None:
            raise not_found(kind, name)
        field_name = "parallelism" if kind == "Job" else "replicas"
        manifest = copy.deepcopy(dict(obj.manifest))
        manifest.setdefault("spec", {})[field_name] = replicas
        manifest.setdefault("metadata", {})["uid"] = obj.uid
        self.update_object(manifest)

    @property
    def object_stores(self) -> Mapping[str, Mapping[str, KubeObject]]:
        """The objects :meth:`get_object` finds in its general store (every kind but Pod, Node,
        Namespace, PriorityClass and PodDisruptionBudget): kind -> key (``name`` for a
        cluster-scoped kind, else ``namespace/name``) -> object. Live and read-only: the storage
        listers' lookups (a dozen per pod of the volume cases) without get_object's dispatch."""
        return self._objects

    def get_object(self, kind: str, name: str, namespace: str = "default") -> KubeObject | None:
        """The current object of ``kind`` (any kind) named ``name``, or None."""
        if kind == "Pod":
            return self.get_pod(namespace, name)
        if kind == "Node":
            return self._store.get_node(name)
        if kind == "Namespace":
            return self.namespaces.get(name)
        if kind == "PriorityClass":
            return self.priority_class(name)
        if kind == "PodDisruptionBudget":
            return self.pdbs.get(f"{namespace}/{name}")
        key = name if _is_cluster_scoped(kind) else f"{namespace}/{name}"
        return self._objects.get(kind, {}).get(key)

    def objects(self, kind: str) -> list[dict]:
        """The current objects of ``kind`` as manifests (new dicts), e.g. after a run: pods with
        ``spec.nodeName`` and ``status.nominatedNodeName``, the pods and ReplicaSets that
        controllers created. Objects built in code (no manifest) show their metadata."""
        if kind in self._unmodelled:
            return [copy.deepcopy(m) for m in self._unmodelled[kind].values()]
        return [_manifest_of(obj) for obj in self._objects_of_kind(kind)]

    def _objects_of_kind(self, kind: str) -> Iterable[KubeObject]:
        if kind == "Pod":
            return list(self.pods.values())
        if kind == "Node":
            return self.nodes()
        if kind == "Namespace":
            return list(self.namespaces.values())
        if kind == "PriorityClass":
            # the system classes first (kube-apiserver creates them as it starts), as added when a
            # dump holds them too, then the added ones
            added = self.priority_classes
            return [*(added.get(name, pc) for name, pc in SYSTEM_PRIORITY_CLASSES.items()),
                    *(pc for name, pc in added.items() if name not in SYSTEM_PRIORITY_CLASSES)]
        if kind == "PodDisruptionBudget":
            return list(self.pdbs.values())
        return list(self._objects.get(kind, {}).values())

    def list_objects(self, kind: str, namespace: str | None = None) -> list[KubeObject]:
        """The current objects of ``kind`` (in ``namespace`` when given), in the order added: the
        lister plugins read through ``handle.client`` (see :mod:`fastsched.framework.objects`)."""
        objs = self._objects_of_kind(kind)
        return list(objs) if namespace is None else [o for o in objs if o.namespace == namespace]

    def _admitted_any(self, obj: Any, *, update: bool = False) -> KubeObject:
        if not isinstance(obj, KubeObject):
            loaded = objects_of(obj, strict=self.strict, feature_gates=self.api_gates)
            if len(loaded) != 1:
                raise ManifestError(f"expected one object, got {len(loaded)}")
            obj = loaded[0]
        return self._admitted(obj, type(obj), update=update)

    # -- the controllers' view of the cluster (fastsched.controller.ClusterView) ------------------
    def pods_in_namespace(self, namespace: str) -> list[Pod]:
        """Every pod of ``namespace`` (terminal ones included), in the order they were added."""
        return [self.pods[uid] for uid in self._pod_uids_by_namespace.get(namespace, ())]

    def nodes(self) -> list[Node]:
        """Every node, in the order they were added."""
        # (every name the cache lists has its node)
        return [node for name in self._store.node_names() if (node := self._store.get_node(name)) is not None]

    def objects_in_namespace(self, kind: str, namespace: str) -> list[KubeObject]:
        """The objects of ``kind`` in ``namespace``."""
        return [o for o in self._objects.get(kind, {}).values() if o.namespace == namespace]

    def controlled_or_orphans(self, kind: str, namespace: str, owner_uid: str) -> list[KubeObject]:
        """The pods (``kind`` "Pod") or workloads of ``kind`` in ``namespace`` that ``owner_uid``
        controls or that no controller owns, in the order they were added: what a controller
        may claim, from the ownership index."""
        uids = [*self._controlled.get((kind, namespace, owner_uid), ()), *self._controlled.get((kind, namespace, ""), ())]
        uids.sort(key=self._order_of.__getitem__)
        lookup = self.pods if kind == "Pod" else self._object_by_uid
        return [lookup[uid] for uid in uids]

    def _index_controller(self, obj: KubeObject, add: bool) -> None:
        key = (obj.KIND, obj.namespace, _controller_uid(obj))
        if add:
            self._controlled.setdefault(key, {})[obj.uid] = None
        else:
            self._controlled.get(key, {}).pop(obj.uid, None)

    def _index_claim_owners(self, claim: ResourceClaim, add: bool) -> None:
        for ref in claim.owner_references:
            if ref.controller:
                continue  # (in _controlled)
            key = (claim.namespace, ref.uid)
            if add:
                self._claims_owned_by.setdefault(key, {})[claim.uid] = None
            else:
                owned = self._claims_owned_by.get(key)
                if owned is not None:
                    owned.pop(claim.uid, None)
                    if not owned:
                        del self._claims_owned_by[key]

    def name_taken(self, kind: str, namespace: str, name: str) -> bool:
        """Whether an object of ``kind`` already has that name (in that namespace)."""
        if f"{namespace}/{name}" in self._unmodelled.get(kind, ()):
            return True
        if self._pending_pod_keys is not None and kind == "Pod" and f"{namespace}/{name}" in self._pending_pod_keys:
            return True
        return self.get_object(kind, name, namespace) is not None

    def _reconcile(self, obj: KubeObject) -> None:
        """Run ``obj``'s controller once and apply what it decides: one pass covers the cascade
        (a Deployment's ReplicaSet and that ReplicaSet's pods), so nothing applied here is
        reconciled again."""
        if obj.KIND not in RECONCILERS:
            return
        changes = reconcile(obj, _ControllerView(self), self.names, self.clock.now(), feature_gates=self.api_gates)
        for child in changes.delete_objects:
            if self.get_object(child.KIND, child.name, child.namespace) is not None:
                self.delete_object(child.KIND, child.name, child.namespace)
        refused: set[tuple[str, str]] = set()
        created = [admitted for child in changes.create_objects
                   if (admitted := self._created_scheduling_object(child, refused)) is not None]
        for child in (*changes.update_objects, *created):
            self._store_object(child)
        for pod in (*changes.adopt_pods, *changes.release_pods):
            self.update_pod(pod)
        for pod in changes.delete_pods:
            if pod.uid in self.pods:
                self._delete_pod(pod, f"deleted by the {obj.KIND} controller of {obj.key}")
        for manifest in changes.create_manifests:  # objects of kinds without a controller here (claims)
            kind, meta = manifest.get("kind", ""), manifest.get("metadata") or {}
            if kind in SUPPORTED_KINDS:
                self.add_object(manifest)
                continue
            key = f"{meta.get('namespace', 'default')}/{meta.get('name', '')}"
            self._unmodelled.setdefault(kind, {})[key] = manifest
        for manifest in changes.create_pods:
            group = (manifest.get("spec") or {}).get("schedulingGroup") or {}
            if refused and ("PodGroup", group.get("podGroupName")) in refused:
                continue  # the Job's sync failed creating its PodGroup: no pods this time
            self.add_pod(manifest)

    def _created_scheduling_object(self, child: KubeObject, refused: set[tuple[str, str]]) -> KubeObject | None:
        """A Workload or PodGroup the Job controller creates, as the API server takes it: its
        create strategy (fields of disabled gates dropped), validation, the Priority admission of
        a PodGroup. None when it is refused (or its Workload was): ``refused`` collects them.
        Other kinds are returned as they are."""
        if child.KIND not in ("Workload", "PodGroup"):
            return child
        workload_ref = getattr(child, "workload_ref", None)
        if workload_ref is not None and ("Workload", workload_ref.workload_name) in refused:
            refused.add((child.KIND, child.name))
            return None
        try:
            admitted = self._admitted_any(dict(child.manifest))
            return self._admit_pod_group(admitted) if admitted.KIND == "PodGroup" else admitted
        except (ManifestError, ValidationError):
            refused.add((child.KIND, child.name))
            return None

    def _reconcile_kind(self, kind: str) -> None:
        for obj in list(self._objects.get(kind, {}).values()):
            self._reconcile(obj)

    def _reconcile_owner(self, pod: Pod) -> None:
        """Reconcile the controller of a pod that was deleted or ended, if it is known."""
        for owner in pod.owner_references:  # (a loop, not a generator: every victim comes here)
            if owner.controller:
                break
        else:
            return
        obj = self._objects.get(owner.kind, {}).get(f"{pod.namespace}/{owner.name}")
        if obj is not None and obj.uid == owner.uid:
            self._reconcile(obj)

    # -- the client plugins reach through their handle (upstream's clientset) --------------------
    def bind(self, pod: Pod, node_name: str) -> None:
        """DefaultBinder's API call: recorded; the binding cycle confirms it in the cache."""
        if pod.uid not in self.pods:
            raise not_found("Pod", pod.name)

    def get_pod(self, namespace: str, name: str) -> Pod | None:
        """The pod ``namespace/name`` (terminal ones included), or None: the key index, not a scan
        of every pod (the bound pods added in bulk live in the cache's columns, which the index
        and ``pods`` both read)."""
        uid = self._pod_uid_by_key.get(f"{namespace}/{name}")
        return None if uid is None else self.pods[uid]

    def get_pod_by_uid(self, uid: str) -> Pod | None:
        return self.pods.get(uid)

    def list_pdbs(self) -> list[PodDisruptionBudget]:
        return list(self.pdbs.values())

    def preempt_pod(self, victim: Pod, preemptor: Pod, node_name: str) -> None:
        """Delete a preemption victim (upstream patches DisruptionTarget then deletes it). A
        victim already gone answers NotFound before anything else: not counted in
        ``metrics.preemption_victims`` (the pods deleted by preemption) nor told to the
        preemption callbacks (a simulation would end its record twice and count its PDB twice)."""
        if victim.uid not in self.pods:
            raise not_found("Pod", victim.name)
        self._handler.on_preempting(victim, preemptor, node_name)
        # (delete_pod's two steps, without its frame: three victims a preemptor in PreemptionBasic)
        self._reconcile_owner(self._delete_pod(victim, f"preempted by {preemptor.key} on node {node_name}"))

    def clear_nominated_node_name(self, pod: Pod) -> None:
        """Clear a pod's ``status.nominatedNodeName`` (preemption's lower-priority nominees)."""
        cur = self.pods.get(pod.uid)
        if cur is not None and cur.nominated_node_name:
            self.set_pod_status(cur.replace(nominated_node_name=""))
            self._handler.on_nomination_cleared(cur)

    def set_pod_status(self, pod: Pod) -> None:
        """The scheduler's status patch of a known pod (``status.nominatedNodeName``): stored,
        and heard back as a status update (not a spec update: no controller reacts)."""
        old = self.pods.get(pod.uid)
        self.pods[pod.uid] = pod
        self._handler.on_pod_status_update(old, pod)

    def store_bound(self, pod: Pod) -> None:
        """A binding the scheduler made, confirmed: the pod as bound (``spec.nodeName`` set)."""
        self.pods[pod.uid] = pod


#: kube-apiserver's DefaultTolerationSeconds admission plugin (on by default): a pod that does not
#: tolerate these NoExecute taints gets a 300 s toleration of each
#: (plugin/pkg/admission/defaulttolerationseconds/admission.go)
_DEFAULT_TOLERATIONS = tuple(Toleration(key=key, operator="Exists", effect="NoExecute", toleration_seconds=300)
                             for key in ("node.kubernetes.io/not-ready", "node.kubernetes.io/unreachable"))


def _second_default(pc: PriorityClass, default: PriorityClass) -> ManifestError:
    """The Priority admission's refusal of a second ``globalDefault`` class."""
    return ManifestError(f'{group_resource("PriorityClass")} "{pc.name}" is forbidden: PriorityClass '
                         f'{default.name} is already marked as default. Only one default can exist',
                         path="globalDefault", source=f"PriorityClass {pc.name}")


def _namespace_terminating(ns: Namespace) -> bool:
    """Whether a namespace is being deleted: ``status.phase`` Terminating, which the namespace's
    registry sets with its ``deletionTimestamp`` (one built in code with a deletion timestamp
    counts: it has no status to say it)."""
    status = (ns.manifest or {}).get("status")
    return (isinstance(status, Mapping) and status.get("phase") == "Terminating") or ns.deletion_timestamp is not None


def _namespace_terminating_refusal(pod: Pod) -> str:
    """The NamespaceLifecycle admission's refusal of a new pod in a namespace being deleted
    (k8s.io/apiserver admission/plugin/namespace/lifecycle Lifecycle.Admit, Create).

    Only for pods to schedule: a bound pod (a dump's) was created before its namespace began
    terminating, as were the pods a dump shows being deleted (those are Terminating anyway). A pod
    whose namespace was not added is admitted, where the API server answers ``namespaces "x" not
    found``: cluster dumps and scheduler_perf configs seldom hold their Namespace objects, and
    the rest of fastsched reads a namespace not added as one without labels (namespaceSelector,
    PodAffinity, the controllers) rather than as missing."""
    return (f'pods "{pod.name}" is forbidden: unable to create new content in namespace {pod.namespace} '
            "because it is being terminated")


#: the RuntimeClass admission's refusal of an overhead no RuntimeClass defines (validateOverhead)
_OVERHEAD_WITHOUT_CLASS = "pod rejected: Pod Overhead set without corresponding RuntimeClass defined Overhead"


def _spec_has(pod: Pod, name: str) -> bool:
    """Whether the pod's manifest sets ``spec.<name>`` (not null): what a Go pointer or map field
    being non-nil says, where the typed pod reads an empty value as unset."""
    spec = (pod.manifest or {}).get("spec")
    return isinstance(spec, dict) and spec.get(name) is not None


def _with_default_tolerations(pod: Pod) -> Pod:
    """The pod as DefaultTolerationSeconds admits it: a toleration whose key is the taint's (or
    empty) and whose effect is NoExecute (or empty) counts as tolerating it; the missing ones are
    appended, not-ready first. Pods built without the API server (``make_pod``) meet it here too,
    as pods created through a cluster's API server do."""
    admitted = _admitted_tolerations(pod.tolerations)
    # a field copy keeps what the loader read exactly (overhead's nano-units, the request totals
    # already summed); the caller's pod is never changed
    return pod if admitted is pod.tolerations else pod.with_tolerations(admitted)


def _admit_tolerations_in_place(pod: Pod) -> None:
    """:func:`_with_default_tolerations` on a pod nothing else holds yet (the loader's copy of its
    template, see ``objects_of``'s ``on_stamped``), in place: ``add_pods`` of manifests then makes
    one copy of each pod's template instead of two. ``_admit`` finds the tolerations admitted
    already (nothing missing: the same tuple). Only unbound pods, as ``_admit``."""
    if not pod.node_name:
        pod.tolerations = _admitted_tolerations(pod.tolerations)


def _admitted_tolerations(tolerations: tuple) -> tuple:
    # pods stamped from one template share their tolerations tuple: its answer is computed once
    known = _ADMITTED_TOLERATIONS.get(id(tolerations))
    if known is not None and known[0] is tolerations:
        admitted = known[1]
    else:
        missing = tuple(d for d in _DEFAULT_TOLERATIONS
                        if not any((t.key == d.key or not t.key) and (t.effect == "NoExecute" or not t.effect)
                                   for t in tolerations))
        admitted = (*tolerations, *missing) if missing else tolerations
        if len(_ADMITTED_TOLERATIONS) >= 1024:
            _ADMITTED_TOLERATIONS.clear()
        # (the entry holds the tuple, so its id stays its own while the entry lives)
        _ADMITTED_TOLERATIONS[id(tolerations)] = (tolerations, admitted)
    return admitted


#: id(tolerations tuple) -> (that tuple, it with DefaultTolerationSeconds' additions), bounded
_ADMITTED_TOLERATIONS: dict[int, tuple[tuple, tuple]] = {}


def _is_cluster_scoped(kind: str) -> bool:
    return kind in CLUSTER_SCOPED_KINDS


def _resource_name(kind: str) -> str:
    return _RESOURCE_NAMES.get(kind, kind.lower() + "s")


def _instances_of(objects: Any, cls: type) -> list | None:
    """``objects`` as a list when it is a list or tuple of ``cls`` instances (what objects_of
    would return, without its per-object dispatch), else None."""
    if isinstance(objects, (list, tuple)) and objects and all(issubclass(t, cls) for t in set(map(type, objects))):
        return list(objects)
    return None


def _controller_uid(obj: KubeObject) -> str:
    """The uid of ``obj``'s controller ("" for none): its key in Cluster._controlled."""
    for ref in obj.owner_references:  # (a loop, not a generator: each claim a PreBind creates and
        if ref.controller:            # writes passes here 3 times, see _index_controller)
            return ref.uid
    return ""


def _controlled_by(obj: KubeObject, owner: KubeObject) -> bool:
    return any(ref.controller and ref.uid == owner.uid for ref in obj.owner_references)


def _manifest_of(obj: KubeObject) -> dict:
    """A new manifest dict of ``obj``, with the metadata the API server would have filled in."""
    manifest: dict[str, Any] = copy.deepcopy(dict(obj.manifest)) if obj.manifest else {"kind": obj.KIND}
    metadata = manifest.setdefault("metadata", {})
    metadata["name"] = obj.name
    if obj.namespace:
        metadata["namespace"] = obj.namespace
    metadata["uid"] = obj.uid
    if isinstance(obj, Pod):
        spec = manifest.setdefault("spec", {})
        if obj.node_name:
            spec["nodeName"] = obj.node_name
        if obj.nominated_node_name:
            manifest.setdefault("status", {})["nominatedNodeName"] = obj.nominated_node_name
    return manifest


class _ControllerView:
    """The Cluster as the controllers' :class:`~fastsched.controller.ClusterView`."""

    __slots__ = ("_cluster",)

    def __init__(self, cluster: Cluster):
        self._cluster = cluster

    def pods(self, namespace: str) -> list[Pod]:
        return self._cluster.pods_in_namespace(namespace)

    def nodes(self) -> list[Node]:
        return self._cluster.nodes()

    def objects(self, kind: str, namespace: str) -> list[KubeObject]:
        return self._cluster.objects_in_namespace(kind, namespace)

    def name_taken(self, kind: str, namespace: str, name: str) -> bool:
        return self._cluster.name_taken(kind, namespace, name)

    def controlled_or_orphans(self, kind: str, namespace: str, owner_uid: str) -> list[KubeObject]:
        return self._cluster.controlled_or_orphans(kind, namespace, owner_uid)
