"""The Scheduler: queue, cache, profiles, and the loop that drives pods through the cycles.

Everything runs on the calling thread, on the scheduler's clock (virtual by default), which is the
one discrete-event core of :mod:`fastsched.clock`: the queue's flushes (backoff completions, the
unschedulable pods' timeout), Permit timeouts and whatever a simulation schedules are events on it.
Binding cycles run inline right after their scheduling cycle, except for pods waiting at Permit,
whose binding cycle runs once they are allowed, rejected or timed out.

``run(until=T)`` does what upstream's loops do until time T: it schedules every pod activeQ
holds, then steps the clock to its next event, and so on; failed pods are retried after their
backoff (Error) or when an event may help them, or after podMaxInUnschedulablePodsDuration.
``run()`` without ``until`` ends when nothing can make progress any more: no event is pending
but the queue's own flushes (a Permit wait's timeout is pending until it fires), and every queued
pod is *settled*. "The cluster" a pod's attempt saw is the committed cluster (binds, adds,
updates, deletes, counted by ``_change_seq``) plus the assumptions of other pods then in flight
(the cache's assumed fingerprint). An assume followed by its forget is no change for anybody,
which is what makes the loop end when many pods' bindings keep failing. A pod is settled when its
last attempt failed on the cluster as it is now, as Unschedulable or as the second Error there (a
transient error gets its retry after backoff; a permanent one does not make the loop spin), or
when it has failed twice on the committed cluster as it is, whatever the assumptions: such a pod
is parked (back to unschedulablePods without an attempt) when popped, so N pods failing each
other's assumptions make at most two attempts each per committed change. ``run(until=T)`` parks
nobody: pods are retried as upstream retries them until T.
"""
from __future__ import annotations

import contextlib
import copy
import dataclasses
import gc
import itertools
import random
import re
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable

import numpy as np

from ..api import (SUPPORTED_KINDS, KubeObject, ManifestError, Namespace, Node, Pod, PodDisruptionBudget, PriorityClass,
                   Toleration,
                   objects_of)
from ..api.errors import warn_manifest
from ..api.names import NameGenerator
from ..api.validation import ValidationError, raise_if_invalid
from ..clock import PRIORITY_QUEUE, VirtualClock
from ..config import load_config
from ..controller import RECONCILERS, reconcile
from ..controller import persistentvolume as pv_controller
from ..controller.persistentvolume import bind_immediate_claims, claim_is_unbound
from ..dra import controller as dra_controller
from ..config.types import KubeSchedulerConfiguration
from ..framework.interface import ActionType, ClusterEvent, EventResource
from ..framework.objects import CLUSTER_SCOPED_KINDS, EVENT_RESOURCE_OF_KIND
from ..framework.types import QueuedPodInfo
from ..plugins.podtopologyspread import NAME as POD_TOPOLOGY_SPREAD
from ..plugins.podtopologyspread import WorkloadObjects
from ..runtime import MetricsRecorder, Registry
from ..snapshot.table import pod_template_getter, uid_words
from ..features import DEFAULTS as DEFAULT_FEATURE_GATES, FeatureGates
from .cache import Cache, ControlledIndex, KeyIndex, NamespaceIndex, OrderIndex, PodMap
from .backend.queue import UNSCHEDULABLE_FLUSH_PERIOD, PriorityQueue
from .records import AttemptRecord, record_mode
from .profile import build_profiles, profile_or_error
# the statuses are importable from here too, as before the cycle moved to schedule_one.py
from .result import (DELETED, ERROR, GATED, NO_PROFILE, PENDING, SCHEDULED, TERMINATING, UNSCHEDULABLE,  # noqa: F401
                     WAITING, PodResult)
from .schedule_one import _TERMINATING_MESSAGE, ASSIGNED_POD_DELETE, PendingBinding, ScheduleOneMixin
from ..api.storage import ephemeral_claim_manifests, synced_volume

NODE_ADD = ClusterEvent(EventResource.NODE, ActionType.ADD, "NodeAdd")
NODE_DELETE = ClusterEvent(EventResource.NODE, ActionType.DELETE, "NodeDelete")
NAMESPACE_ADD = ClusterEvent(EventResource.NAMESPACE, ActionType.ADD, "NamespaceAdd")
NAMESPACE_UPDATE = ClusterEvent(EventResource.NAMESPACE, ActionType.UPDATE, "NamespaceUpdate")
WILDCARD = ClusterEvent(EventResource.WILDCARD, ActionType.ALL, "WildCardEvent")

#: Pod phases of pods whose containers have all ended: such pods hold nothing on their node and are
#: never scheduled (upstream's informers filter them out of the cache and the queue).
TERMINAL_PHASES = frozenset({"Succeeded", "Failed"})
#: The order in which one ``add`` call applies the kinds it holds, so that what an object needs is
#: there first: namespaces and priority classes before pods (admission), nodes before the pods
#: bound to them, the pods before the controllers that count them.
_ADD_ORDER = {"Namespace": 0, "PriorityClass": 1, "Node": 2, "PodDisruptionBudget": 3, "Pod": 5}
_OTHER_KINDS_RANK = 4
_POD_TEMPLATE_VALUES = pod_template_getter(Pod)
#: objects per vectorized batch of Scheduler._add_nodes / _add_pods (bounds their transient sets)
_BULK_CHUNK = 1 << 17
#: a valid DNS-1123 subdomain (upstream's IsDNS1123Subdomain, with the 253-character limit checked
#: apart); a name it does not match goes through the full validation for the API server's message
_DNS1123_SUBDOMAIN = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*")
_CONTROLLER_KINDS_RANK = 6
#: the spec fields Scheduler._interned shares between equal queued pods (the compiled cycle's
#: plan key reads these; the others are shared already, or not hashable)
_INTERNED_FIELDS = ("labels", "containers", "init_containers", "node_selector", "affinity", "tolerations",
                    "topology_spread_constraints")
_CONTAINER_FIELDS = frozenset({"containers", "init_containers"})
_SPEC_OBJECTS_MAX = 1 << 16


@dataclass
class SchedulerMetrics:
    """Counters a user can read after ``run()``; extension-point and plugin durations are in ``framework``."""

    attempts: dict[str, int] = field(default_factory=lambda: {"scheduled": 0, "unschedulable": 0, "error": 0})
    #: wall-clock seconds of each scheduling attempt (scheduling cycle + inline binding cycle)
    attempt_latencies: list[float] = field(default_factory=list)
    framework: MetricsRecorder = field(default_factory=MetricsRecorder)
    preemption_victims: int = 0

    def latency_percentiles(self, qs: Iterable[float] = (50, 90, 99)) -> dict[str, float]:
        if not self.attempt_latencies:
            return {}
        a = np.array(self.attempt_latencies)
        return {f"p{q:g}": float(np.percentile(a, q)) for q in qs}

    def as_dict(self) -> dict:
        return {"attempts": dict(self.attempts), "latency_seconds": self.latency_percentiles(),
                "preemption_victims": self.preemption_victims, **self.framework.snapshot()}


class Scheduler(ScheduleOneMixin):
    """A kube-scheduler: profiles built from a configuration, a queue, a cache, and ``run()``.

    ``config`` takes what :func:`~fastsched.load_config` takes (default configuration when None);
    ``registry`` is merged into the in-tree registry (out-of-tree plugins); ``seed`` drives every
    random choice (host ties, preemption, generated names); ``clock`` is a VirtualClock unless
    given; ``strict`` makes unknown manifest fields an error instead of a warning (per ``add`` call
    too). ``record`` keeps decision records of the attempts (``"all"``, ``"failures"``; None, the
    default, keeps none): ``PodResult.history`` (see :mod:`fastsched.scheduler.records`).
    ``feature_gates`` (a mapping or upstream's ``"Gate=false,..."`` syntax) sets the kube-scheduler
    feature gates fastsched models (:mod:`fastsched.features`; v1.34's defaults otherwise; an
    unknown gate is an error).

    The Scheduler also plays the API server's and the controllers' part: objects are validated as
    the API server validates them, names are generated from ``generateName``, duplicates are
    refused, and workload objects (Deployments, ReplicaSets, StatefulSets, DaemonSets, Jobs,
    CronJobs, ReplicationControllers) create the pods their controllers would create.
    """

    #: modelled scheduler time (simulations): None, or ``cost(wall_seconds, bound) -> seconds``
    #: called after each attempt ``run()`` makes with the attempt's measured wall seconds and
    #: whether it bound the pod; the virtual clock then moves on by that many seconds, running the
    #: events due meanwhile (arrivals, completions, flushes), as a busy scheduler would see them.
    cycle_cost: Any = None
    #: decision records' bounds (None: unbounded): keep a pod's first attempt and its latest ones,
    #: at most this many; and only the best ``record_top_scores`` scored nodes of each attempt
    record_max_attempts: int | None = None
    record_top_scores: int | None = None

    def __init__(self, config: Any = None, *, registry: Registry | None = None, seed: int = 0,
                 clock: Any = None, extenders: list | None = None, strict: bool = False,
                 feature_gates: Any = None, record: Any = None):
        #: decision records: "all", "failures" or None (see fastsched.scheduler.records)
        self.record_mode = record_mode(record)
        #: uid -> the decision record of its attempt in flight (recording only)
        self._open_records: dict[str, AttemptRecord] = {}

        #: the feature gates every profile's plugins see (fastsched.features.FeatureGates)
        self.feature_gates = (DEFAULT_FEATURE_GATES if feature_gates is None
                              else feature_gates if isinstance(feature_gates, FeatureGates)
                              else FeatureGates(feature_gates))

        self.config: KubeSchedulerConfiguration = (
            copy.deepcopy(config) if isinstance(config, KubeSchedulerConfiguration)  # never mutate the caller's
            else load_config(config, registry_names=list(registry or ()), feature_gates=self.feature_gates))
        self.clock = clock if clock is not None else VirtualClock()
        self.seed = seed
        self.rng = np.random.default_rng(seed)
        self.plugin_rng = random.Random(seed)
        self.cache = Cache()
        self.snapshot = self.cache.snapshot
        self.metrics = SchedulerMetrics()
        self.namespaces: dict[str, Namespace] = {}
        self.priority_classes: dict[str, PriorityClass] = {}
        self.pdbs: dict[str, PodDisruptionBudget] = {}
        # The per-pod indexes are dict-like views (fastsched.scheduler.cache) over plain dicts plus
        # the bound pods added in bulk, which the cache keeps as columns (see _add_pods).
        bulk = self.cache.bulk
        self._order_of = OrderIndex(bulk)       # uid -> when it was added (the namespace order)
        self.pods = PodMap(bulk, self._order_of)  # every known pod by uid (the informer's view)
        self._pod_uid_by_key = KeyIndex(bulk)   # namespace/name -> uid
        self._pod_uids_by_namespace = NamespaceIndex(bulk, self._order_of)  # namespace -> uids (ordered set)
        #: (kind, namespace, controller uid, "" for none) -> uids of the pods or workloads it controls,
        #: so a controller reads only what it may claim (see controlled_or_orphans)
        self._controlled = ControlledIndex(bulk)
        self._added = itertools.count()
        #: pod specs validated by _admitted_pod (key -> the field objects)
        self._validated_specs: dict[tuple, tuple] = {}
        #: (field, value, exact requests) -> the one object of that value the queued pods share
        #: (see _interned); bounded, cleared when full
        self._spec_objects = _SpecObjects()
        self._last_validated_spec: tuple | None = None
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
        self.strict = strict
        self.names = NameGenerator(seed)
        self.results: dict[str, PodResult] = {}
        self.next_start_node_index = 0
        built = build_profiles(
            self.config, registry, extenders=extenders, snapshot_shared_lister=self.snapshot, client=self,
            clock=self.clock, namespaces=self.namespaces, metrics_recorder=self.metrics.framework,
            rng=self.plugin_rng, pod_activator=self, feature_gates=self.feature_gates)
        #: the configuration as built: a copy of the caller's, with the extenders' ignored
        #: resources in NodeResourcesFit's args (see fastsched.scheduler.profile)
        self.config = built.config
        self.extenders = built.extenders
        self.registry = built.registry
        self.profiles = built.frameworks
        first = next(iter(self.profiles.values()))
        self.queue = PriorityQueue(
            first.queue_sort_func(), self.clock, pop_from_backoff_q=False, sort_key=first.queue_sort_key_func(),
            pod_initial_backoff=float(self.config.pod_initial_backoff_seconds),
            pod_max_backoff=float(self.config.pod_max_backoff_seconds),
            pre_enqueue_plugins={n: fw.pre_enqueue_plugins() for n, fw in self.profiles.items()},
            queueing_hints={n: {ext.name(): ext.events_to_register() for ext in fw.enqueue_extensions()}
                            for n, fw in self.profiles.items()})
        for fw in self.profiles.values():
            fw.set_pod_nominator(self.queue.nominator)
        #: the Services, ReplicationControllers, ReplicaSets and StatefulSets PodTopologySpread's
        #: DefaultSelector reads, shared by every profile's plugin and kept current by add/delete
        self._workload_objects = WorkloadObjects(services={}, replication_controllers={}, replica_sets={},
                                                 stateful_sets={})
        self._service_selectors: dict[str, dict[str, Any]] = {}  # namespace -> Service name -> selector
        for fw in self.profiles.values():
            spread = fw.plugins_map.get(POD_TOPOLOGY_SPREAD)
            if spread is not None and hasattr(spread, "workload_objects"):
                spread.workload_objects = self._workload_objects
        #: bumped by every committed change (a bind, an add, an update, a delete); not by an assume
        #: or a forget, which are the scheduler's own bookkeeping (see the module docstring)
        self._change_seq = 0
        #: uid -> the cluster its current attempt saw: (committed change seq, assumed fingerprint)
        self._seq_seen: dict[str, tuple[int, int]] = {}
        #: uid -> the pod's last failure: (the cluster it saw, whether it may settle there (always
        #: for Unschedulable, from the second Error on the same cluster), how many failures in a
        #: row saw that committed change seq (two settle the pod whatever the assumptions around
        #: it: termination by construction), its unschedulable and pending plugins (a parked pod
        #: gets them back))
        self._failures: dict[str, tuple[tuple[int, int], bool, int, frozenset[str], frozenset[str]]] = {}
        self._waiting: dict[str, PendingBinding] = {}  # uid -> binding cycle to finish after Permit
        self._cycles = 0
        self._queue_timer = None                 # the clock event of the queue's next flush
        self._order: list[str] = []   # uids of pods to schedule, in arrival order
        #: called with the PodResult of each pod once it is bound (simulations observe binds here)
        self.bound_callbacks: list = []
        #: called as ``cb(victim, preemptor, node_name)`` before a preemption victim is deleted
        self.preemption_callbacks: list = []

    # ==========================================================================================
    # cluster state
    # ==========================================================================================
    def _changed(self) -> None:
        self._change_seq += 1

    def add(self, objects: Any, *, strict: bool | None = None) -> None:
        """Add any mix of objects: what :func:`~fastsched.api.load_objects` reads (files,
        directories, cluster dumps, manifests, API-client objects) or fastsched objects.

        Kinds are applied in dependency order (namespaces, priority classes, nodes, ..., pods, then
        the workload controllers, which count the pods already there and create the rest). Kinds
        fastsched does not model are skipped with one warning.
        """
        loaded = objects_of(objects, strict=self.strict if strict is None else strict)
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
                controlled.append(self._admitted_new_object(obj))
                self._store_object(controlled[-1])
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
        self._add_nodes(_instances_of(nodes, Node) or objects_of(nodes, Node, strict=self.strict))

    def _queue_quiet(self) -> bool:
        """Whether no queued pod can react to a cluster event: no pod waits in unschedulablePods
        and none is in flight. Then the queue's handling of N add events is that of the last one
        (each only records the move-request cycle), so a batch of adds needs one call."""
        return self.queue.num_unschedulable() == 0 and not self.queue.in_flight_pods()

    def _add_nodes(self, nodes: list) -> None:
        """:meth:`add_node` for each node, in order, the new ones added to the cache together
        (one vectorized table update) when nothing observes them one at a time: no DaemonSet to
        reconcile per node and a quiet queue (see _queue_quiet). Errors are raised where the
        one-by-one adds would raise them, with the nodes before added."""
        if len(nodes) < 2 or self._objects.get("DaemonSet") or not self._queue_quiet():
            for node in nodes:
                self.add_node(node)
            return
        table = self.snapshot.table
        table.reserve_rows(len(table) + len(nodes))  # one reallocation for all the chunks
        with _collector_paused():
            self._add_nodes_batched(nodes)

    def _add_nodes_batched(self, nodes: list) -> None:
        batch: list[Node] = []
        try:
            for node in nodes:
                if type(node) is not Node or not node.admitted or not node.name:
                    if not getattr(node, "name", "x"):
                        # a generated name must see the nodes before
                        pending, batch = batch, []
                        self._flush_nodes(pending)
                    node = self._admitted(node, Node)
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
        if len(set(names)) != len(names) or not self.snapshot.table.row_of.keys().isdisjoint(names):
            for node in batch:
                self.add_node(node)
            return
        self.cache.add_nodes(batch, new=True)
        self._change_seq += len(batch)  # one _changed() per node
        self.queue.move_all_to_active_or_backoff_queue(NODE_ADD, None, batch[-1])

    def add_node(self, node: Any) -> None:
        """Add a node; a node of the same name is an error (``update_node`` replaces one)."""
        node = self._admitted(node, Node)
        if self.cache.has_node(node.name):
            raise ManifestError(f'nodes "{node.name}" already exists')
        self.cache.add_node(node)
        self._changed()
        self.queue.move_all_to_active_or_backoff_queue(NODE_ADD, None, node)
        self._reconcile_kind("DaemonSet")

    def update_node(self, node: Any) -> None:
        node = self._admitted(node, Node)
        old = self.cache.get_node(node.name)
        if old is None:
            raise KeyError(f"node {node.name} is not known")
        self.cache.update_node(node)
        self._changed()
        self.queue.move_all_to_active_or_backoff_queue(_node_update_event(old, node), old, node)
        self._reconcile_kind("DaemonSet")

    def delete_node(self, name: str) -> None:
        old = self.cache.get_node(name)
        if old is None:
            raise KeyError(f"node {name} is not known")
        self.cache.remove_node(name)
        self._changed()
        self.queue.move_all_to_active_or_backoff_queue(NODE_DELETE, old, None)
        self._reconcile_kind("DaemonSet")

    def add_namespace(self, ns: Any) -> None:
        ns = self._admitted(ns, Namespace)
        existed = ns.name in self.namespaces
        self.namespaces[ns.name] = ns
        self._changed()
        self.queue.move_all_to_active_or_backoff_queue(NAMESPACE_UPDATE if existed else NAMESPACE_ADD, None, ns)

    def add_priority_class(self, pc: Any) -> None:
        pc = self._admitted(pc, PriorityClass)
        self.priority_classes[pc.name] = pc

    def add_pdb(self, pdb: Any) -> None:
        pdb = self._admitted(pdb, PodDisruptionBudget)
        self.pdbs[pdb.key] = pdb
        self._changed()

    def add_pods(self, pods: Any) -> None:
        """Add many pods: as :meth:`add_pod` for each, in order (vectorized, see _add_pods)."""
        self._add_pods(_instances_of(pods, Pod) or objects_of(pods, Pod, strict=self.strict))

    def _add_pods(self, pods: list) -> None:
        """:meth:`add_pod` for each pod, in order. Bound pods (``spec.nodeName`` a node of the
        cluster, not terminal, not a duplicate) are added to the cache in vectorized batches and
        kept as columns (the cache's BulkPods) while the queue is quiet (see _queue_quiet); the
        other pods take :meth:`add_pod` in their turn. Errors are raised where the one-by-one adds
        would raise them, with the pods before added."""
        bound = sum(1 for pod in pods if getattr(pod, "node_name", None))
        self.snapshot.table.reserve_records(self.snapshot.table.pod_count_total() + bound)  # one reallocation
        self.cache.bulk.reserve(self.cache.bulk.n + bound)
        with _collector_paused():
            self._add_pods_batched(pods)

    def _add_pods_batched(self, pods: list) -> None:
        row_of = self.snapshot.table.row_of
        quiet = self._queue_quiet()
        batch: list[Pod] = []
        # _admit changes only pods without a priority when a class name or a default class exists
        global_default = any(c.global_default for c in self.priority_classes.values())
        try:
            for pod in pods:
                if not quiet:
                    self.add_pod(pod)
                    continue
                if not getattr(pod, "name", "x"):
                    # a generated name must see the pods before
                    pending, batch = batch, []
                    self._flush_pods(pending)
                pod = self._admitted_pod(pod)
                if pod.node_name in row_of and pod.phase not in TERMINAL_PHASES:
                    if pod.priority is None and (global_default or pod.priority_class_name):
                        pod = self._admit(pod)[0]  # a bound pod: an admission error does not matter
                    batch.append(pod)
                    if len(batch) >= _BULK_CHUNK:
                        pending, batch = batch, []
                        self._flush_pods(pending)
                    continue
                pending, batch = batch, []
                self._flush_pods(pending)
                self.add_pod(pod)
                quiet = self._queue_quiet()  # a gated pod waits in unschedulablePods
        except BaseException:
            self._flush_pods(batch)  # the pods before the error (not yet flushed)
            raise
        self._flush_pods(batch)

    def _pods_are_new(self, batch: list[Pod], uids: list[str], words: tuple) -> bool:
        """Whether no pod of ``batch`` has the uid or the namespace/name of a known pod or of
        another pod of the batch (set operations, no per-pod Python work; ``words``: the uids
        parsed)."""
        if len(set(uids)) != len(uids) or not dict.keys(self.pods).isdisjoint(uids):
            return False
        if self.cache.bulk.index.any_of(uids, words):
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
        if pod.__class__ is not Pod or pod.admitted or not pod.name or pod.manifest:
            return pod if isinstance(pod, Pod) and pod.admitted and pod.name else self._admitted(pod, Pod)
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
        if (len(pod.name) <= 253 and _DNS1123_SUBDOMAIN.fullmatch(pod.name)
                and (not node_name or len(node_name) <= 253 and _DNS1123_SUBDOMAIN.fullmatch(node_name))):
            pod.admitted = True
            return pod
        return self._admitted(pod, Pod)  # the API server's errors for the name

    def _interned(self, pod: Pod) -> Pod:
        """The pod, its spec fields made the very objects of an equal pod queued before.

        Pods parsed one manifest each (a dump, a workload file, scheduler_perf templates rendered
        per pod) hold equal but distinct spec objects. The compiled cycle finds a pod's plan by the
        identity of its spec objects first, and by value otherwise, hashing every field it reads
        each cycle (a third of ``run()`` on such pods). Made identical once, here, equal pods find
        their plan at once. Only hashable values are shared, and the containers only with the same
        exact (nano-unit) requests: their equality compares the rounded amounts alone."""
        objects = self._spec_objects
        if len(objects) > _SPEC_OBJECTS_MAX:
            objects.clear()
        for name in _INTERNED_FIELDS:
            value = getattr(pod, name)
            if not value:
                continue
            key = (name, value, tuple(tuple(c.request_nanos.items()) for c in value)) if name in _CONTAINER_FIELDS \
                else (name, value)
            try:
                shared = objects.setdefault(key, value)
            except TypeError:  # an unhashable value (raw manifest parts): left as it is
                continue
            if shared is not value:
                setattr(pod, name, shared)
        return pod

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
        self.cache.add_pods(batch, scheduler_views=True, orders=np.arange(start, start + n), owners=owners,
                            uid_words=words)
        self._change_seq += n  # one _changed() per pod
        self.queue.assigned_pod_added(batch[-1])

    def add_pod(self, pod: Any) -> None:
        """Add a pod: with ``spec.nodeName`` it is running; otherwise it is queued for scheduling.

        As upstream's informers: a pod whose phase is Succeeded or Failed is kept (``objects``,
        controllers count it) but holds nothing on its node and is never queued; a pod with a
        deletionTimestamp still counts on its node until deleted, and is never scheduled.
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
        for claim in ephemeral:
            self.add_object(claim)
        self.pods[pod.uid] = pod
        self._pod_uid_by_key[pod.key] = pod.uid
        self._pod_uids_by_namespace.setdefault(pod.namespace, {})[pod.uid] = None
        self._order_of[pod.uid] = next(self._added)
        self._index_controller(pod, True)
        if pod.phase in TERMINAL_PHASES:
            return
        if pod.node_name:
            if not self.cache.has_node(pod.node_name):
                warn_manifest(
                    f'pod {pod.key} is bound to node "{pod.node_name}", which is not in the cluster: it is '
                    "counted there as upstream's cache counts it, and no pod can be scheduled to that node "
                    "until the node is added")
            self.cache.add_pod(pod)
            self._changed()
            self.queue.assigned_pod_added(pod)
            return
        self._order.append(pod.uid)
        res = PodResult(pod, queued_at=self.clock.now())
        self.results[pod.uid] = res
        if pod.deletion_timestamp is not None:
            res.status, res.message = TERMINATING, _TERMINATING_MESSAGE
            return
        if err:
            res.status, res.message = ERROR, err
            return
        if pod.scheduler_name not in self.profiles:
            res.status = NO_PROFILE
            res.message = f'profile not found for scheduler name "{pod.scheduler_name}"'
            return
        self.queue.add(self._interned(pod))
        qpi = self.queue.get(pod.uid)
        if qpi is not None and qpi.gated:
            res.status = GATED
            res.message = _gate_message(pod, qpi)

    def _admitted(self, obj: Any, cls: type) -> Any:
        """``obj`` as a validated ``cls`` with a name: read from a manifest (validated by the
        loader) or, when built or changed in code, validated here; a name generated from
        ``generateName``."""
        if not isinstance(obj, cls):
            obj = cls.from_manifest(obj, strict=self.strict)
        elif not obj.admitted:
            raise_if_invalid(obj)
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
        return obj.replace(name=name, uid=obj.uid, manifest=manifest)

    def _admit(self, pod: Pod) -> tuple[Pod, str]:
        """The API server's admission of a new pod: DefaultTolerationSeconds for a pod to schedule
        (a bound pod came from a cluster, through admission already; its tolerations change no
        decision, and bulk adds of bound pods skip the copy), then Priority (the class resolved)."""
        if not pod.node_name:
            pod = _with_default_tolerations(pod)
        if pod.priority is not None:
            return pod, ""
        pc = None
        if pod.priority_class_name:
            pc = self.priority_classes.get(pod.priority_class_name)
            if pc is None:
                return pod, f"no PriorityClass with name {pod.priority_class_name} was found"
        else:
            pc = next((c for c in self.priority_classes.values() if c.global_default), None)
        if pc is None:
            return pod, ""
        changes: dict[str, Any] = {"priority": pc.value}
        if pc.preemption_policy:
            changes["preemption_policy"] = pc.preemption_policy
        return pod.replace(**changes), ""

    def update_pod(self, pod: Any) -> None:
        """Replace a known pod (same uid) with a new version; the queue and cache react.

        A bound pod whose phase becomes Succeeded or Failed leaves its node, as upstream's cache
        drops terminated pods; its controller (a Job) then reconciles."""
        new = self._admitted(pod, Pod)
        old = self.pods.get(new.uid)
        if old is None:
            raise KeyError(f"pod {new.key} is not known")
        self.pods[new.uid] = new
        self._index_controller(old, False)
        self._index_controller(new, True)
        if old.phase in TERMINAL_PHASES:
            return
        if new.phase in TERMINAL_PHASES:
            self._forget_pod(old)
            self._reconcile_owner(new)
            return
        if old.node_name and new.node_name:
            self.cache.update_pod(old, new)
            self._changed()
            self.queue.assigned_pod_updated(old, new, ClusterEvent(EventResource.ASSIGNED_POD, ActionType.UPDATE))
        elif not new.node_name:
            self.queue.update(old, new)
            res = self.results.get(new.uid)
            if res is not None:
                res.pod = new
                qpi = self.queue.get(new.uid)
                if res.status == GATED and qpi is not None and not qpi.gated:
                    res.status, res.message = PENDING, ""

    def delete_pod(self, pod: Any, *, reason: str = "") -> None:
        """Delete a pod (running or queued); freed resources may let queued pods schedule. The
        pod's controller, if it is one of the added workload objects, reconciles (a ReplicaSet
        replaces a deleted pod, as in a cluster)."""
        self._reconcile_owner(self._delete_pod(pod, reason))

    def _delete_pod(self, pod: Any, reason: str) -> Pod:
        """Delete a pod without waking its controller; the deleted pod."""
        uid = pod.uid if isinstance(pod, Pod) else pod
        old = self.pods.pop(uid, None)
        if old is None:
            raise KeyError(f"pod with uid {uid} is not known")
        self._pod_uid_by_key.pop(old.key, None)
        self._index_controller(old, False)
        self._order_of.pop(uid, None)
        namespace_uids = self._pod_uids_by_namespace.get(old.namespace)
        if namespace_uids is not None:
            namespace_uids.pop(uid, None)
        res = self.results.get(uid)
        if old.phase not in TERMINAL_PHASES:
            self._forget_pod(old)
        if old.resource_claims:
            dra_controller.pod_removed(self, old)  # the resourceclaim controller: reservedFor, generated claims
        for claim_uid in list(self._controlled.get(("PersistentVolumeClaim", old.namespace, uid), ())):
            claim = self._object_by_uid.get(claim_uid)  # the garbage collector: claims the pod controls
            if claim is not None:                       # (generic ephemeral volumes')
                self.delete_object(claim.KIND, claim.name, claim.namespace)
        if res is not None:
            res.status = DELETED
            res.message = reason or "deleted"
        return old

    def _forget_pod(self, old: Pod) -> None:
        """Take a pod out of the queue, or off its node (a deleted or terminated pod)."""
        if old.node_name or self.cache.get_pod(old) is not None:
            fw = self.profiles.get(old.scheduler_name)
            if fw is not None:
                fw.reject_waiting_pod(old.uid)
            if self.cache.get_pod(old) is not None and not self.cache.is_assumed_pod(old):
                self.cache.remove_pod(self.cache.get_pod(old))
            self._changed()
            self.queue.move_all_to_active_or_backoff_queue(ASSIGNED_POD_DELETE, old, None)
        else:
            self.queue.delete(old)
        self.queue.nominator.delete_nominated_pod_if_exists(old)

    # ==========================================================================================
    # other kinds: workloads, Services, ... (the controllers' part)
    # ==========================================================================================
    def add_object(self, obj: Any) -> None:
        """Add an object of a kind other than Pod, Node, Namespace, PriorityClass or
        PodDisruptionBudget (those have their own ``add_*``). A workload object's controller
        creates its pods (and a Deployment its ReplicaSet, a CronJob its Job) at once."""
        obj = self._admitted_new_object(obj)
        if obj.KIND in _PV_ADMISSION_KINDS:  # DefaultStorageClass admission; creationTimestamp
            obj = pv_controller.admitted(obj, self._objects.get("StorageClass", {}).values(), self.clock.now())
        self._store_object(obj)
        self._reconcile(obj)
        if obj.KIND == "ResourceClaimTemplate":  # the resourceclaim controller retries waiting pods
            for old, new in dra_controller.template_added(self, obj, [p for p in self.pods.values() if not p.node_name]):
                self.update_pod(new)

    def _admitted_new_object(self, obj: Any) -> KubeObject:
        obj = self._admitted_any(obj)
        if obj.key in self._objects.get(obj.KIND, {}):
            raise ManifestError(f'{_resource_name(obj.KIND)} "{obj.name}" already exists',
                                source=f"{obj.KIND} {obj.key}")
        return obj

    def update_object(self, obj: Any) -> None:
        """Replace an object added with :meth:`add_object` (same kind, namespace and name); its
        controller reconciles (scaling a Deployment creates or deletes pods)."""
        obj = self._admitted_any(obj)
        old = self._objects.get(obj.KIND, {}).get(obj.key)
        if old is None:
            raise KeyError(f"{obj.KIND} {obj.key} is not known")
        if obj.uid != old.uid and not (obj.manifest.get("metadata") or {}).get("uid"):
            obj = obj.replace(uid=old.uid)  # the same object, re-read without its uid
        self._store_object(obj)
        self._reconcile(obj)

    def _store_object(self, obj: KubeObject) -> None:
        if obj.KIND == "PersistentVolume":
            obj = synced_volume(obj)  # the PV controller's part: a new unclaimed volume is Available
        store = self._objects.setdefault(obj.KIND, {})
        old = store.get(obj.key)
        if old is not None:
            self._index_controller(old, False)
            self._object_by_uid.pop(old.uid, None)
            self._order_of[obj.uid] = self._order_of.pop(old.uid)
        else:
            self._order_of[obj.uid] = next(self._added)
        store[obj.key] = obj
        self._object_by_uid[obj.uid] = obj
        self._index_controller(obj, True)
        self._spreading_object_changed(obj)
        self._object_event(obj.KIND, ActionType.UPDATE if old is not None else ActionType.ADD, old, obj)
        if obj.KIND in _PV_CONTROLLER_KINDS:
            self._pv_controller_sync(obj)

    def _pv_controller_sync(self, obj: KubeObject) -> None:
        """The PV controller's part: claims that do not wait for a consumer are bound (or
        provisioned) as soon as they can be (:mod:`fastsched.controller.persistentvolume`). The
        unbound claims are indexed, so a cluster of bound claims costs nothing here."""
        if obj.KIND == "PersistentVolumeClaim":
            if claim_is_unbound(obj):
                self._unbound_claims[obj.key] = None
            else:
                self._unbound_claims.pop(obj.key, None)
        if obj.KIND == "PersistentVolume" and obj.phase != "Available" and obj.claim_ref is None:
            return  # a volume no claim can take
        self._bind_unbound_claims()

    def _bind_unbound_claims(self) -> None:
        if not self._unbound_claims or self._binding_claims:
            return  # nothing to bind, or inside a binding (or an add() batch, which binds at its end)
        self._binding_claims = True
        try:
            store = self._objects.get("PersistentVolumeClaim", {})
            bind_immediate_claims(self, [store[key] for key in self._unbound_claims if key in store])
        finally:
            self._binding_claims = False

    def _ephemeral_claims(self, pod: Pod) -> list[KubeObject]:
        """The claims of ``pod``'s generic ephemeral volumes that do not exist yet, validated. An
        invalid claim template makes the pod invalid, as the API server's pod validation checks
        each ``spec.volumes[i].ephemeral.volumeClaimTemplate``."""
        claims, errors = [], []
        indices = [i for i, v in enumerate(pod.volumes) if v.get("ephemeral") is not None]
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
        """What the informer of a kind the plugins read (volumes, claims, DRA objects) reports:
        a cluster change, and the event that requeues the pods whose plugins registered for it."""
        resource = EVENT_RESOURCE_OF_KIND.get(kind)
        if resource is None:
            return
        self._object_versions[kind] = self._object_versions.get(kind, 0) + 1
        for listener in self.object_listeners:
            listener(kind, old, new)
        self._changed()
        self.queue.move_all_to_active_or_backoff_queue(ClusterEvent(resource, action), old, new)

    def delete_object(self, kind: str, name: str, namespace: str = "default") -> None:
        """Delete an object added with :meth:`add_object`; what it controls goes with it
        (cascading deletion by owner references: a Deployment's ReplicaSets and their pods)."""
        store = self._objects.get(kind, {})
        key = name if _is_cluster_scoped(kind) else f"{namespace}/{name}"
        obj = store.pop(key, None)
        if obj is None:
            raise KeyError(f"{kind} {key} is not known")
        self._index_controller(obj, False)
        self._object_by_uid.pop(obj.uid, None)
        self._order_of.pop(obj.uid, None)
        self._spreading_object_changed(obj, removed=True)
        if kind == "PersistentVolumeClaim":
            self._unbound_claims.pop(obj.key, None)
        self._object_event(kind, ActionType.DELETE, obj, None)
        self._delete_dependents(obj)
        if kind == "PersistentVolumeClaim":
            pv_controller.reclaim_volumes(self, obj)  # its volume released, deleted or recycled

    def _delete_dependents(self, owner: KubeObject) -> None:
        if owner.namespace and not any(self._controlled.get((kind, owner.namespace, owner.uid))
                                       for kind in (*self._objects, "Pod")):
            # nothing is controlled by it (the index answers without scanning every object; a
            # namespaced owner's dependents are in its namespace, a cluster-scoped one's anywhere)
            return
        for kind, store in list(self._objects.items()):
            for child in [o for o in store.values() if _controlled_by(o, owner)]:
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
            raise KeyError(f"{kind} {key} is not known")
        field_name = "parallelism" if kind == "Job" else "replicas"
        manifest = copy.deepcopy(dict(obj.manifest))
        manifest.setdefault("spec", {})[field_name] = replicas
        manifest.setdefault("metadata", {})["uid"] = obj.uid
        self.update_object(manifest)

    def get_object(self, kind: str, name: str, namespace: str = "default") -> KubeObject | None:
        """The current object of ``kind`` (any kind) named ``name``, or None."""
        if kind == "Pod":
            uid = self._pod_uid_by_key.get(f"{namespace}/{name}")
            return None if uid is None else self.pods[uid]
        if kind == "Node":
            return self.cache.get_node(name)
        if kind == "Namespace":
            return self.namespaces.get(name)
        if kind == "PriorityClass":
            return self.priority_classes.get(name)
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
            return [self.cache.get_node(name) for name in self.cache.node_names()]
        if kind == "Namespace":
            return list(self.namespaces.values())
        if kind == "PriorityClass":
            return list(self.priority_classes.values())
        if kind == "PodDisruptionBudget":
            return list(self.pdbs.values())
        return list(self._objects.get(kind, {}).values())

    def list_objects(self, kind: str, namespace: str | None = None) -> list[KubeObject]:
        """The current objects of ``kind`` (in ``namespace`` when given), in the order added: the
        lister plugins read through ``handle.client`` (see :mod:`fastsched.framework.objects`)."""
        objs = self._objects_of_kind(kind)
        return list(objs) if namespace is None else [o for o in objs if o.namespace == namespace]

    def _admitted_any(self, obj: Any) -> KubeObject:
        if not isinstance(obj, KubeObject):
            loaded = objects_of(obj, strict=self.strict)
            if len(loaded) != 1:
                raise ManifestError(f"expected one object, got {len(loaded)}")
            obj = loaded[0]
        return self._admitted(obj, type(obj))

    # -- the controllers' view of the cluster (fastsched.controller.ClusterView) ------------------
    def pods_in_namespace(self, namespace: str) -> list[Pod]:
        """Every pod of ``namespace`` (terminal ones included), in the order they were added."""
        return [self.pods[uid] for uid in self._pod_uids_by_namespace.get(namespace, ())]

    def nodes(self) -> list[Node]:
        """Every node, in the order they were added."""
        return [self.cache.get_node(name) for name in self.cache.node_names()]

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
        reference = next((ref for ref in obj.owner_references if ref.controller), None)
        key = (obj.KIND, obj.namespace, reference.uid if reference is not None else "")
        if add:
            self._controlled.setdefault(key, {})[obj.uid] = None
        else:
            self._controlled.get(key, {}).pop(obj.uid, None)

    def name_taken(self, kind: str, namespace: str, name: str) -> bool:
        """Whether an object of ``kind`` already has that name (in that namespace)."""
        if f"{namespace}/{name}" in self._unmodelled.get(kind, ()):
            return True
        return self.get_object(kind, name, namespace) is not None

    def _reconcile(self, obj: KubeObject) -> None:
        """Run ``obj``'s controller once and apply what it decides: one pass covers the cascade
        (a Deployment's ReplicaSet and that ReplicaSet's pods), so nothing applied here is
        reconciled again."""
        if obj.KIND not in RECONCILERS:
            return
        changes = reconcile(obj, _ControllerView(self), self.names, self.clock.now())
        for child in changes.delete_objects:
            if self.get_object(child.KIND, child.name, child.namespace) is not None:
                self.delete_object(child.KIND, child.name, child.namespace)
        for child in (*changes.update_objects, *changes.create_objects):
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
            self.add_pod(manifest)

    def _reconcile_kind(self, kind: str) -> None:
        for obj in list(self._objects.get(kind, {}).values()):
            self._reconcile(obj)

    def _reconcile_owner(self, pod: Pod) -> None:
        """Reconcile the controller of a pod that was deleted or ended, if it is known."""
        owner = next((ref for ref in pod.owner_references if ref.controller), None)
        if owner is None:
            return
        obj = self._objects.get(owner.kind, {}).get(f"{pod.namespace}/{owner.name}")
        if obj is not None and obj.uid == owner.uid:
            self._reconcile(obj)

    def _spreading_object_changed(self, obj: KubeObject, removed: bool = False) -> None:
        """Keep PodTopologySpread's view of Services, ReplicationControllers, ReplicaSets and
        StatefulSets (what upstream's DefaultSelector reads) current, one object at a time."""
        kind = obj.KIND
        if kind not in _SPREADING_KINDS:
            return
        seen = self._workload_objects
        if kind == "Service":
            selectors = self._service_selectors.setdefault(obj.namespace, {})
            if removed:
                selectors.pop(obj.name, None)
            else:
                selectors[obj.name] = obj.selector
            services = dict(seen.services)
            services[obj.namespace] = list(selectors.values())
            seen.services = services
            return
        table = {"ReplicationController": seen.replication_controllers, "ReplicaSet": seen.replica_sets,
                 "StatefulSet": seen.stateful_sets}[kind]
        if removed:
            table.pop((obj.namespace, obj.name), None)
        else:
            table[(obj.namespace, obj.name)] = obj.selector

    # -- the client plugins reach through their handle (upstream's clientset) --------------------
    def bind(self, pod: Pod, node_name: str) -> None:
        """DefaultBinder's API call: recorded; the binding cycle confirms it in the cache."""
        if pod.uid not in self.pods:
            raise KeyError(f'pods "{pod.name}" not found')

    def get_pod(self, namespace: str, name: str) -> Pod | None:
        for p in self.pods.values():
            if p.namespace == namespace and p.name == name:
                return p
        return None

    def get_pod_by_uid(self, uid: str) -> Pod | None:
        return self.pods.get(uid)

    def list_pdbs(self) -> list[PodDisruptionBudget]:
        return list(self.pdbs.values())

    def preempt_pod(self, victim: Pod, preemptor: Pod, node_name: str) -> None:
        """Delete a preemption victim (upstream patches DisruptionTarget then deletes it)."""
        self.metrics.preemption_victims += 1
        if self.record_mode is not None:
            self._record_victim(victim, preemptor, node_name)
        for cb in self.preemption_callbacks:
            cb(victim, preemptor, node_name)
        self.delete_pod(victim, reason=f"preempted by {preemptor.key} on node {node_name}")

    def clear_nominated_node_name(self, pod: Pod) -> None:
        cur = self.pods.get(pod.uid)
        if cur is not None and cur.nominated_node_name:
            self._set_pod(cur.replace(nominated_node_name=""))
            self.queue.nominator.delete_nominated_pod_if_exists(cur)

    def activate(self, pods: dict) -> None:
        """PodActivator: move the named pods (values are Pods) to activeQ."""
        self.queue.activate(list(pods.values()))

    def _set_pod(self, pod: Pod) -> None:
        old = self.pods.get(pod.uid)
        self.pods[pod.uid] = pod
        if old is not None and not pod.node_name:
            self.queue.update(old, pod)
        res = self.results.get(pod.uid)
        if res is not None:
            res.pod = pod

    # ==========================================================================================
    # the loop
    # ==========================================================================================
    def run(self, until: float | None = None, max_attempts: int | None = None, *,
            results: bool = True) -> list[PodResult]:
        """Schedule until virtual time ``until``, or (``until`` None) until nothing can make
        progress (see the module docstring); ``max_attempts`` bounds the attempts of this call.

        Returns one :class:`PodResult` per pod handed to the scheduler, in arrival order (an empty
        list with ``results=False``, for callers that run often and read ``bound_callbacks``).
        """
        clock = self.clock
        attempts = 0
        pop, schedule_one = self.queue.pop, self.schedule_one  # once, not per cycle
        cycle_cost = self.cycle_cost
        while True:
            if self._waiting:
                self._finish_permitted_bindings()
            qpi = pop()
            if qpi is not None:
                if until is None and self._failures and self._park_if_settled(qpi):
                    continue
                if cycle_cost is None:
                    schedule_one(qpi)
                else:
                    self._schedule_one_charged(qpi, cycle_cost, until)
                attempts += 1
                if max_attempts is not None and attempts >= max_attempts:
                    break
                continue
            self._arm_queue_timer()
            upcoming = clock.peek()
            if upcoming is None or (until is not None and upcoming > until):
                break
            if until is None and not self._may_progress():
                break
            clock.step()
        if until is not None and clock.virtual and not (max_attempts is not None and attempts >= max_attempts):
            clock.advance_to(until)
        return self.pod_results() if results else []

    def _schedule_one_charged(self, qpi: QueuedPodInfo, cycle_cost: Any, until: float | None) -> None:
        """:meth:`schedule_one`, then the clock moves on by the attempt's modelled cost (see
        ``cycle_cost``), not past ``until``; the events due meanwhile run at their times."""
        uid = qpi.pod.uid
        res = self.results.get(uid)
        bound_before = res.bound_at if res is not None else None
        started = _perf_counter()
        self.schedule_one(qpi)
        wall = _perf_counter() - started
        bound = res is not None and res.status == SCHEDULED and res.bound_at is not None and res.bound_at != bound_before
        seconds = float(cycle_cost(wall, bound))
        if seconds > 0 and self.clock.virtual:
            end = self.clock.now() + seconds
            self.clock.advance_to(end if until is None else min(end, max(until, self.clock.now())))

    def pod_results(self) -> list[PodResult]:
        """One result per pod handed to the scheduler, in arrival order."""
        return [self.results[uid] for uid in self._order]

    # -- the queue's flushes as events on the clock -----------------------------------------------
    def _arm_queue_timer(self) -> None:
        """Keep one clock event at the queue's next flush that would move a pod (backoff
        completions on their 1 s ticks, the unschedulable pods' timeout on its 30 s ticks)."""
        wake = self.queue.next_wakeup()
        timer = self._queue_timer
        if timer is not None and timer.active:
            if wake is not None and timer.deadline == max(wake, self.clock.now()):
                return
            timer.stop()
        self._queue_timer = None if wake is None else self.clock.schedule(wake, self._flush_queue, PRIORITY_QUEUE)

    def _flush_queue(self) -> None:
        self._queue_timer = None
        self.queue.flush_backoff_q_completed()
        elapsed = (self.clock.now() - self.queue.flush_origin) / UNSCHEDULABLE_FLUSH_PERIOD
        if abs(elapsed - round(elapsed)) < 1e-9:  # upstream flushes the unschedulable pool on 30 s ticks
            self.queue.flush_unschedulable_pods_leftover()

    def _may_progress(self) -> bool:
        """For ``run()`` without ``until``: whether stepping the clock can change an outcome: an
        event other than the queue's own flush is pending (a Permit timeout, a completion), or a
        queued pod is not settled."""
        own = 1 if self._queue_timer is not None and self._queue_timer.active else 0
        if self.clock.pending() > own:
            return True
        now = self._cluster_seen()
        for qpi, where in self.queue.queued_pod_infos():
            if qpi.gated:
                continue
            if not self._is_settled(qpi.pod.uid, now):
                return True
        return False

    # -- decision records (Scheduler(record=...)); see fastsched.scheduler.records ----------------
    def _begin_record(self, fw, qpi: QueuedPodInfo) -> None:
        pod = qpi.pod
        rec = AttemptRecord(pod.key, pod.uid, qpi.attempts, self.clock.now(), fw.profile_name())
        self._open_records[pod.uid] = rec
        self._recording = fw.decision_sink = rec

    def _finish_record(self, fw, uid: str, outcome: str, message: str) -> None:
        """Close the attempt's record and keep it as the mode says: every attempt ("all"), or the
        failed ones and every attempt after a pod's first failure ("failures")."""
        self._recording = fw.decision_sink = None
        rec = self._open_records.pop(uid, None)
        if rec is None:
            return
        rec.finish(outcome, message)
        res = self.results.get(uid)
        if res is None:
            return
        if self.record_mode == "all" or outcome != SCHEDULED or res.history:
            if self.record_top_scores is not None:
                rec.trim_scores(self.record_top_scores)
            if not isinstance(res.history, list):
                res.history = []
            res.history.append(rec)
            limit = self.record_max_attempts
            if limit is not None and len(res.history) > max(limit, 1):
                del res.history[1 if limit > 1 else 0]  # the first attempt stays, with the latest

    def _record_victim(self, victim: Pod, preemptor: Pod, node_name: str) -> None:
        """A preemption victim goes to the preemptor's attempt that chose it (in flight, or the
        last kept one when the deletion lands after the attempt ended)."""
        rec = self._open_records.get(preemptor.uid)
        if rec is None:
            res = self.results.get(preemptor.uid)
            rec = res.history[-1] if res is not None and res.history else None
        if rec is not None:
            rec.victims.append((victim.key, node_name))

    def _cluster_seen(self) -> tuple[int, int]:
        """The cluster an attempt starting now would see: committed changes and assumptions."""
        return (self._change_seq, self.cache.assumed_fingerprint)

    def _settle(self, qpi: QueuedPodInfo, rejected: bool) -> None:
        """Record a failed attempt for :meth:`_is_settled`: Unschedulable may settle at once on
        the cluster it saw; an Error from the second time on that same cluster (whatever its
        message: an error that changes from one attempt to the next must not keep the loop going
        either); and any failure that is the second on one committed cluster settles the pod."""
        uid = qpi.pod.uid
        seen = self._seq_seen.pop(uid, None) or self._cluster_seen()
        last = self._failures.get(uid)
        may_settle = rejected or (last is not None and last[0] == seen)
        on_committed = last[2] + 1 if last is not None and last[0][0] == seen[0] else 1
        self._failures[uid] = (seen, may_settle, on_committed, frozenset(qpi.unschedulable_plugins),
                               frozenset(qpi.pending_plugins))

    def _failed_twice_on(self, uid: str, committed: int) -> bool:
        """Whether pod ``uid``'s last two failures both saw committed change seq ``committed``."""
        last = self._failures.get(uid)
        return last is not None and last[0][0] == committed and last[2] >= 2

    def _park_if_settled(self, qpi: QueuedPodInfo) -> bool:
        """In ``run()`` without ``until``: a popped pod that already failed twice on the committed
        cluster as it is goes back to unschedulablePods without an attempt (see
        ``PriorityQueue.park``); another attempt could only fail again or succeed by the grace of
        other pods' passing assumptions, and it would make its own (a Permit wait, a failed
        binding's release) that start the others again."""
        uid = qpi.pod.uid
        if not self._failed_twice_on(uid, self._change_seq):
            return False
        last = self._failures[uid]
        self.queue.park(qpi, last[3], last[4])
        return True

    def _is_settled(self, uid: str, now: tuple[int, int]) -> bool:
        """Whether another attempt of pod ``uid`` on the cluster as it is (``now``) is pointless
        for ``run()`` without ``until``: its last failure may settle and saw this very cluster,
        or it failed twice on the committed cluster as it is. The second rule is what bounds the
        loop: assumptions made and rolled back by other pods' failing bindings or Permit waits
        change what each attempt sees, but not what is committed, so N pods that keep failing
        make at most two attempts each per committed change."""
        last = self._failures.get(uid)
        if last is not None and last[1] and last[0] == now:
            return True
        return self._failed_twice_on(uid, now[0])

    # ==========================================================================================
    # explain
    # ==========================================================================================
    def explain(self, pod: Any, profile: str | None = None):
        """Every plugin's and extender's verdict and score for ``pod`` on the current cluster
        (see :func:`fastsched.explain`). A pod already bound is explained as a pod being
        rescheduled: as if it were not on its node. An unknown profile is a ConfigError."""
        from .explain import explain_with_framework

        p = pod if isinstance(pod, Pod) else Pod.from_manifest(pod)
        name = profile or p.scheduler_name
        fw = profile_or_error(self.profiles, name)
        placed = self.cache.get_pod(p)
        if placed is None or self.cache.is_assumed_pod(p):
            return explain_with_framework(fw, self.snapshot, p.replace(node_name="") if p.node_name else p,
                                          self.extenders)
        self.cache.remove_pod(placed)  # out of its node for the question, back right after
        try:
            return explain_with_framework(fw, self.snapshot, p.replace(node_name=""), self.extenders)
        finally:
            self.cache.add_pod(placed)

    # ==========================================================================================
    # forks and transactions (fastsched/scheduler/fork.py)
    # ==========================================================================================
    def fork(self) -> "Scheduler":
        """An independent Scheduler in this one's state (cluster, queue, results, clock, RNG
        states): given the same further inputs it places pods exactly as this one would, and
        neither sees the other's changes. API objects are shared (never changed in place), the
        per-pod records are shared until either side touches them, the rest is copied (see
        fastsched/scheduler/fork.py); the fork starts without ``bound_callbacks`` /
        ``preemption_callbacks``."""
        from .fork import fork_scheduler

        return fork_scheduler(self)

    def transaction(self):
        """``with sched.transaction() as tx: ...``: everything the block does is reverted at its
        end (or on an exception) unless ``tx.commit()`` was called; ``tx.rollback()`` reverts at
        once. After a revert, re-read objects reached through the Scheduler (``queue``,
        ``snapshot``, PodResults): the state is the one saved at entry."""
        from .fork import Transaction

        return Transaction(self)


#: kube-apiserver's DefaultTolerationSeconds admission plugin (on by default): a pod that does not
#: tolerate these NoExecute taints gets a 300 s toleration of each
#: (plugin/pkg/admission/defaulttolerationseconds/admission.go)
_DEFAULT_TOLERATIONS = tuple(Toleration(key=key, operator="Exists", effect="NoExecute", toleration_seconds=300)
                             for key in ("node.kubernetes.io/not-ready", "node.kubernetes.io/unreachable"))


def _with_default_tolerations(pod: Pod) -> Pod:
    """The pod as DefaultTolerationSeconds admits it: a toleration whose key is the taint's (or
    empty) and whose effect is NoExecute (or empty) counts as tolerating it; the missing ones are
    appended, not-ready first. Pods built without the API server (``make_pod``) meet it here too,
    as pods created through a cluster's API server do."""
    tolerations = pod.tolerations
    missing = tuple(d for d in _DEFAULT_TOLERATIONS
                    if not any((t.key == d.key or not t.key) and (t.effect == "NoExecute" or not t.effect)
                               for t in tolerations))
    # a field copy keeps what the loader read exactly (overhead's nano-units, the request totals
    # already summed); the caller's pod is never changed
    return pod.with_tolerations((*tolerations, *missing)) if missing else pod


class _SpecObjects(dict):
    """``Scheduler._interned``'s map, (field, value, exact requests) -> the shared object. A fork
    shares it with its origin instead of copying it (a copy per fork would cost up to
    ``_SPEC_OBJECTS_MAX`` entries): it only ever maps a value to an equal immutable object, so an
    entry either side adds is right for both."""

    __slots__ = ()

    def __deepcopy__(self, memo: dict) -> "_SpecObjects":
        return self


def _node_update_event(old: Node, new: Node) -> ClusterEvent:
    action = ActionType(0)
    if dict(old.allocatable) != dict(new.allocatable):
        action |= ActionType.UPDATE_NODE_ALLOCATABLE
    if dict(old.labels) != dict(new.labels):
        action |= ActionType.UPDATE_NODE_LABEL
    if old.taints != new.taints or old.unschedulable != new.unschedulable:
        action |= ActionType.UPDATE_NODE_TAINT
    if dict(old.annotations) != dict(new.annotations):
        action |= ActionType.UPDATE_NODE_ANNOTATION
    if not action:
        action = ActionType.UPDATE_NODE_CONDITION
    return ClusterEvent(EventResource.NODE, action, "NodeUpdate")


_perf_counter = time.perf_counter
_SPREADING_KINDS = frozenset({"Service", "ReplicationController", "ReplicaSet", "StatefulSet"})
_CLUSTER_SCOPED = CLUSTER_SCOPED_KINDS
#: kinds whose changes the PV controller reacts to by binding claims that do not wait for a consumer
_PV_CONTROLLER_KINDS = frozenset({"PersistentVolumeClaim", "PersistentVolume", "StorageClass"})
#: kinds the storage admission touches on create (claims' default class, classes' creationTimestamp)
_PV_ADMISSION_KINDS = frozenset({"PersistentVolumeClaim", "StorageClass"})
#: ``<resource>.<group>`` as upstream's AlreadyExists errors name them
_RESOURCE_NAMES = {
    "Deployment": "deployments.apps", "ReplicaSet": "replicasets.apps", "StatefulSet": "statefulsets.apps",
    "DaemonSet": "daemonsets.apps", "Job": "jobs.batch", "CronJob": "cronjobs.batch",
    "ReplicationController": "replicationcontrollers", "Service": "services",
}


def _is_cluster_scoped(kind: str) -> bool:
    return kind in _CLUSTER_SCOPED


def _resource_name(kind: str) -> str:
    return _RESOURCE_NAMES.get(kind, kind.lower() + "s")


def _instances_of(objects: Any, cls: type) -> list | None:
    """``objects`` as a list when it is a list or tuple of ``cls`` instances (what objects_of
    would return, without its per-object dispatch), else None."""
    if isinstance(objects, (list, tuple)) and objects and all(issubclass(t, cls) for t in set(map(type, objects))):
        return list(objects)
    return None


@contextlib.contextmanager
def _collector_paused():
    """The cyclic garbage collector paused (as the loader pauses it): adding a million objects
    creates no reference cycles, but the collector's passes over the growing heap would take
    about as long as the adds."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def _controller_uid(obj: KubeObject) -> str:
    """The uid of ``obj``'s controller ("" for none): its key in Scheduler._controlled."""
    reference = next((ref for ref in obj.owner_references if ref.controller), None)
    return reference.uid if reference is not None else ""


def _controlled_by(obj: KubeObject, owner: KubeObject) -> bool:
    return any(ref.controller and ref.uid == owner.uid for ref in obj.owner_references)


def _manifest_of(obj: KubeObject) -> dict:
    """A new manifest dict of ``obj``, with the metadata the API server would have filled in."""
    manifest = copy.deepcopy(dict(obj.manifest)) if obj.manifest else {"kind": obj.KIND}
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
    """The Scheduler as the controllers' :class:`~fastsched.controller.ClusterView`."""

    __slots__ = ("_scheduler",)

    def __init__(self, scheduler: Scheduler):
        self._scheduler = scheduler

    def pods(self, namespace: str) -> list[Pod]:
        return self._scheduler.pods_in_namespace(namespace)

    def nodes(self) -> list[Node]:
        return self._scheduler.nodes()

    def objects(self, kind: str, namespace: str) -> list[KubeObject]:
        return self._scheduler.objects_in_namespace(kind, namespace)

    def name_taken(self, kind: str, namespace: str, name: str) -> bool:
        return self._scheduler.name_taken(kind, namespace, name)

    def controlled_or_orphans(self, kind: str, namespace: str, owner_uid: str) -> list[KubeObject]:
        return self._scheduler.controlled_or_orphans(kind, namespace, owner_uid)


def _gate_message(pod: Pod, qpi: QueuedPodInfo) -> str:
    """Why a pod is held before the queue: SchedulingGates' own text, or the gating PreEnqueue
    plugin and its status message."""
    if qpi.gating_plugin == "SchedulingGates" or not qpi.gating_plugin:
        gates = " ".join(pod.scheduling_gates)
        return f"waiting for scheduling gates: [{gates}]"
    detail = f": {qpi.gating_message}" if qpi.gating_message else ""
    return f'rejected by PreEnqueue plugin "{qpi.gating_plugin}"{detail}'
