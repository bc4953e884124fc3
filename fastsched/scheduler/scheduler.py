"""The Scheduler: queue, cache, profiles, and the loop that drives pods through the cycles.

The cluster it schedules is its :class:`~fastsched.scheduler.cluster.Cluster` (the API server's
and the controllers' part); each change the Cluster commits reaches the Scheduler's event handlers
(:mod:`fastsched.scheduler.eventhandlers`), and one pod's attempt is
:mod:`fastsched.scheduler.schedule_one`'s ``schedule_one``.

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
which is what makes the loop end when many pods' bindings keep failing; nor are object writes
that leave every object they touch as it was (a PreBind that allocated and reserved a claim, then
an Unreserve that wrote it back), which the Scheduler tells from other changes by its journal of
object writes (``_same_committed``). A pod is settled when its
last attempt failed on the cluster as it is now, as Unschedulable or as the second Error there (a
transient error gets its retry after backoff; a permanent one does not make the loop spin), or
when it has failed twice on the committed cluster as it is, whatever the assumptions: such a pod
is parked (back to unschedulablePods without an attempt) when popped, so N pods failing each
other's assumptions make at most two attempts each per committed change. A pod whose Permit wait
was rejected (timed out) is the exception: a wait's outcome is no function of the cluster (the
plugin waited for something the cluster does not show), so such a pod is not settled until
``permit_wait_retries`` of its failures in a row were such rejections; it is retried as upstream
retries it meanwhile. Pods whose failing attempts write (a plugin that creates an object, then
fails) change the committed cluster on every attempt: a pod is settled too once
``own_write_retries`` of its failures in a row had nothing committed before them but failed
attempts' writes, while nothing else is committed. ``run(until=T)`` parks nobody: pods are retried
as upstream retries them until T.
"""
from __future__ import annotations

import copy
import gc
import math
import numbers
import random
import time
from dataclasses import dataclass, field
from typing import Any, Iterable, Mapping, NamedTuple

import numpy as np

from ..api import KubeObject, Node, Pod
from ..api.load import check_decoded_gates
from ..clock import PRIORITY_QUEUE, VirtualClock
from ..config import load_config
from ..config.types import KubeSchedulerConfiguration
from ..features import (COMPOSITE_POD_GROUP, DEFAULTS as DEFAULT_FEATURE_GATES, DRA_NODE_ALLOCATABLE_RESOURCES,
                        GENERIC_WORKLOAD, SCHEDULER_POP_FROM_BACKOFF_Q, FeatureGates)
from ..framework.types import QueuedPodInfo
from ..plugins.podtopologyspread import NAME as POD_TOPOLOGY_SPREAD
from ..plugins.podtopologyspread import WorkloadObjects
from ..runtime import MetricsRecorder
from .backend.queue import UNSCHEDULABLE_FLUSH_PERIOD, PriorityQueue
from .cache import Cache
from .cluster import TERMINAL_PHASES, Cluster  # noqa: F401 - TERMINAL_PHASES importable from here as before
from .eventhandlers import EventHandlersMixin, _gate_message, net_unchanged
from .mutable_snapshot import MutableSnapshot
from .profile import build_profiles, profile_or_error, queueing_hints
from .records import AttemptRecord, record_mode
# the statuses are importable from here too, as before the cycle moved to schedule_one.py
from .result import (DELETED, ERROR, GATED, NO_PROFILE, PENDING, SCHEDULED, TERMINATING, UNSCHEDULABLE,  # noqa: F401
                     WAITING, PodResult)
from .schedule_one import PendingBinding, ScheduleOneMixin, bind_commit
from .schedule_one_composite import CompositeCycleMixin
from .schedule_one_podgroup import PodGroupCycleMixin
from ..util.collector import FULL_COLLECTION_EVERY, full_collections_deferred



@dataclass
class SchedulerMetrics:
    """Counters a user can read after ``run()``; extension-point and plugin durations are in ``framework``."""

    attempts: dict[str, int] = field(default_factory=lambda: {"scheduled": 0, "unschedulable": 0, "error": 0})
    #: wall-clock seconds of each scheduling attempt (scheduling cycle + inline binding cycle)
    attempt_latencies: list[float] = field(default_factory=list)
    framework: MetricsRecorder = field(default_factory=MetricsRecorder)
    preemption_victims: int = 0
    #: pods bound whose last move to activeQ was the unschedulable timeout's flush
    #: (``scheduler_pod_scheduled_after_flush_total``: hints that missed the event that helped them)
    pod_scheduled_after_flush: int = 0
    #: GenericWorkload: pod group attempts by result (``scheduler_podgroup_schedule_attempts_total``;
    #: ``waiting_on_preemption``: rejected, and PodGroupPostFilter nominated victims for it)
    pod_group_attempts: dict[str, int] = field(default_factory=lambda: {
        "scheduled": 0, "unschedulable": 0, "waiting_on_preemption": 0, "error": 0})
    #: (result, seconds) of each pod group attempt, from the group's pop to its members' bindings
    #: or failures (``scheduler_podgroup_scheduling_attempt_duration_seconds``)
    pod_group_attempt_latencies: list[tuple[str, float]] = field(default_factory=list)
    #: seconds from a group attempt's start to the end of its algorithm (before PodGroupPostFilter)
    #: (``scheduler_podgroup_scheduling_algorithm_duration_seconds``)
    pod_group_algorithm_latencies: list[float] = field(default_factory=list)
    #: TopologyAwareWorkloadScheduling: placements the PlacementGenerate plugins proposed
    #: (``scheduler_generated_placements_total``)
    generated_placements: int = 0
    #: (result, seconds) of each placement evaluated, ``feasible`` or ``infeasible`` (an Error ends
    #: the algorithm unobserved) (``scheduler_placement_evaluations_total`` and
    #: ``scheduler_placement_evaluation_duration_seconds``)
    placement_evaluations: list[tuple[str, float]] = field(default_factory=list)

    def latency_percentiles(self, qs: Iterable[float] = (50, 90, 99)) -> dict[str, float]:
        if not self.attempt_latencies:
            return {}
        a = np.array(self.attempt_latencies)
        return {f"p{q:g}": float(np.percentile(a, q)) for q in qs}

    def as_dict(self) -> dict:
        out = {"attempts": dict(self.attempts), "latency_seconds": self.latency_percentiles(),
               "preemption_victims": self.preemption_victims,
               "pod_scheduled_after_flush": self.pod_scheduled_after_flush, **self.framework.snapshot()}
        if self.pod_group_attempt_latencies:
            out["pod_group_attempts"] = dict(self.pod_group_attempts)
        if self.generated_placements:
            feasible = sum(1 for result, _ in self.placement_evaluations if result == "feasible")
            out["placements"] = {"generated": self.generated_placements, "feasible": feasible,
                                 "infeasible": len(self.placement_evaluations) - feasible}
        return out


class _Failure(NamedTuple):
    """A pod's last failed attempt, as ``run()`` without ``until`` needs it to tell when another
    attempt is pointless (:meth:`Scheduler._settle` writes it; ``_is_settled``,
    ``_failed_twice_on``, ``_waits_again`` and ``_park_if_settled`` read it: the settling rules of
    ``docs/reference/deviations.md``)."""

    #: the cluster the attempt saw: (committed change seq, assumed fingerprint)
    seen: tuple[int, int]
    #: whether the pod may settle on that very cluster: always for Unschedulable, for an Error
    #: from the second one on the same cluster
    may_settle: bool
    #: how many failures in a row saw that committed cluster (two settle the pod whatever the
    #: assumptions around it: the loop ends by construction)
    on_committed: int
    #: its unschedulable and pending plugins: a parked pod gets them back (``PriorityQueue.park``)
    unschedulable_plugins: frozenset[str]
    pending_plugins: frozenset[str]
    #: how many of its last failures in a row were rejections of a Permit wait (see
    #: ``permit_wait_retries``); 0 when this one was not
    wait_rejections: int
    #: the committed change seq when the attempt ended
    ended_seq: int
    #: the scheduler's ``_failed_writes`` (committed changes made by failed attempts) when it ended
    failed_writes: int
    #: how many of its failures in a row had nothing but failed attempts' writes committed since
    #: the one before (see ``own_write_retries``: reliab8's rule for pods whose failing attempts
    #: write, tests/reliability/test_failed_writes_spin.py)
    spinning: int


class Scheduler(EventHandlersMixin, ScheduleOneMixin, CompositeCycleMixin, PodGroupCycleMixin):
    """A kube-scheduler: profiles built from a configuration, a queue, a cache, and ``run()``.

    ``config`` takes what :func:`~fastsched.load_config` takes (default configuration when None);
    ``registry`` is merged into the in-tree registry (out-of-tree plugins); ``seed`` drives every
    random choice (host ties, preemption, generated names); ``clock`` is a VirtualClock unless
    given; ``strict`` makes unknown manifest fields an error instead of a warning (per ``add`` call
    too). ``record`` keeps decision records of the attempts (``"all"``, ``"failures"``; None, the
    default, keeps none): ``PodResult.history`` (see :mod:`fastsched.scheduler.records`).
    ``feature_gates`` (a mapping or upstream's ``"Gate=false,..."`` syntax) sets the kube-scheduler
    feature gates fastsched models (:mod:`fastsched.features`; v1.37.2's defaults otherwise; an
    unknown gate is an error).

    Its :class:`~fastsched.scheduler.cluster.Cluster` (``sched.cluster``, written to through the
    Scheduler's ``add*`` / ``update*`` / ``delete*`` methods) plays the API server's and the
    controllers' part: objects are validated as the API server validates them, names are
    generated from ``generateName``, duplicates are refused, and workload objects (Deployments,
    ReplicaSets, StatefulSets, DaemonSets, Jobs, CronJobs, ReplicationControllers) create the pods
    their controllers would create. The Scheduler hears each change through its event handlers
    (:mod:`fastsched.scheduler.eventhandlers`); the plugins' ``handle.client`` is the Cluster.
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
    #: ``run()`` without ``until``: how many times in a row a pod whose Permit wait is rejected
    #: (timed out, or rejected by a plugin) is tried before the cluster rule may settle it (see
    #: ``_waits_again``); upstream retries it forever, and ``run(until=T)`` as upstream until T
    permit_wait_retries: int = 10
    #: ``run()`` without ``until``: how many failures in a row of a pod, with nothing committed
    #: meanwhile but the writes of failed attempts (a plugin that creates an object, then fails:
    #: every attempt then sees a cluster changed, by the attempts themselves), settle it while
    #: nothing else is committed (see ``_spins_on_failed_writes``); upstream retries it forever,
    #: and ``run(until=T)`` as upstream until T
    own_write_retries: int = 10
    #: the compiled binding path's commit (ScheduleOneMixin._collapsed_binding_cycle)
    _bind_commit = bind_commit(EventHandlersMixin._changed)

    def __init__(self, config: Any = None, *, registry: Mapping[str, Any] | None = None, seed: int = 0,
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
        self._pre_flights = self.feature_gates.enabled("NominatedNodeNameForExpectation")
        #: DRANodeAllocatableResources: the assume copies DynamicResources' claim statuses
        self._node_allocatable_resources = self.feature_gates.enabled(DRA_NODE_ALLOCATABLE_RESOURCES)
        self._clear_nomination_on_bind = self.feature_gates.enabled("ClearingNominatedNodeNameAfterBinding")
        self.seed = seed
        self.rng = np.random.default_rng(seed)
        self.plugin_rng = random.Random(seed)
        self.cache = Cache(generic_workload=self.feature_gates.enabled(GENERIC_WORKLOAD),
                           composite_pod_group=self.feature_gates.enabled(COMPOSITE_POD_GROUP))
        self.snapshot = self.cache.snapshot
        self.metrics = SchedulerMetrics()
        #: the API server's and the controllers' part (fastsched.scheduler.cluster): the object
        #: store, admission, the controllers, the pod store; it calls this Scheduler's event
        #: handlers (fastsched.scheduler.eventhandlers) with each change, and is the plugins' client
        self.cluster = Cluster(self.cache, self, clock=self.clock, seed=seed, strict=strict)
        self.cluster.api_gates = self.feature_gates
        #: (field, value, exact requests) -> the one object of that value the queued pods share
        #: (see _interned); bounded, cleared when full
        self._spec_objects = _SpecObjects()
        self.results: dict[str, PodResult] = {}
        self.next_start_node_index = 0
        built = build_profiles(
            self.config, registry, extenders=extenders, snapshot_shared_lister=self.snapshot, client=self.cluster,
            clock=self.clock, namespaces=self.cluster.namespaces, metrics_recorder=self.metrics.framework,
            rng=self.plugin_rng, pod_activator=self, feature_gates=self.feature_gates)
        #: the configuration as built: a copy of the caller's, with the extenders' ignored
        #: resources in NodeResourcesFit's args (see fastsched.scheduler.profile)
        self.config = built.config
        self.extenders = built.extenders
        self.registry = built.registry
        self.profiles = built.frameworks
        first = next(iter(self.profiles.values()))
        self.queue = PriorityQueue(
            first.queue_sort_func(), self.clock, sort_key=first.queue_sort_key_func(),
            # SchedulerPopFromBackoffQ (beta, on): with activeQ empty Pop takes podBackoffQ's head
            # (upstream NewPriorityQueue reads the gate the same way)
            pop_from_backoff_q=self.feature_gates.enabled(SCHEDULER_POP_FROM_BACKOFF_Q),
            pod_initial_backoff=float(self.config.pod_initial_backoff_seconds),
            pod_max_backoff=float(self.config.pod_max_backoff_seconds),
            pre_enqueue_plugins={n: fw.pre_enqueue_plugins() for n, fw in self.profiles.items()},
            queueing_hints=queueing_hints(built),
            # OpportunisticBatching: the queue signs each pod by its profile (upstream WithPodSigners);
            # a profile that cannot sign (e.g. PodTopologySpread's system defaults) signs nothing
            pod_signers={n: fw.sign_pod for n, fw in self.profiles.items() if fw.batch is not None} or None,
            generic_workload=self.cache.generic_workload, composite_pod_group=self.cache.composite_groups.enabled)
        self.queue.on_gating_change = self._gating_changed  # PodResults follow PreEnqueue's verdicts
        for fw in self.profiles.values():
            fw.set_pod_nominator(self.queue.nominator)
            fw.pod_group_manager = self.cache  # upstream's WithPodGroupManager: GangScheduling reads it
            fw.mutable_snapshot = MutableSnapshot(self.cache)  # WithMutableSnapshotLister (pod group preemption)
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
        #: the latest committed changes that were writes of API objects other than pods and nodes
        #: (a claim's status, a volume's binding): (change seq, kind, old, new), at most
        #: eventhandlers.JOURNAL_LENGTH of them. A pod's binding cycle that fails after its PreBind wrote such
        #: objects, and whose Unreserve writes them back, commits changes on every attempt while
        #: the cluster stays as it was: _same_committed tells the two apart, so such a pod settles
        #: as any other (without it run() never returned)
        self._journal: list[tuple[int, str, Any, Any]] = []
        self._same_memo: dict[tuple[int, int], bool] = {}
        #: uid -> the cluster its current attempt saw: (committed change seq, assumed fingerprint)
        self._seq_seen: dict[str, tuple[int, int]] = {}
        #: uid -> the pod's last failure (see _Failure)
        self._failures: dict[str, _Failure] = {}
        #: the committed changes made by pods' failed attempts (a pod's scheduling and binding
        #: cycles when it failed inline, a binding cycle after a Permit wait or a group's cycle),
        #: in change seqs; the pod of the attempt started last (its failure is inline when it is
        #: still the one); the pod whose binding cycle failed last, with the seq it started on
        self._failed_writes = 0
        self._attempt_uid: str | None = None
        self._binding_failed_from: tuple[str, int] | None = None
        #: uids whose binding cycle just ended in the rejection of their Permit wait (timeout or a
        #: plugin's reject): _settle counts them
        self._rejected_at_permit_wait: set[str] = set()
        #: uid -> (the instant of its last failure, failures at that instant): see _park_group_if_looping
        self._failed_at: dict[str, tuple[float, int]] = {}
        self._waiting: dict[str, PendingBinding] = {}  # uid -> binding cycle to finish after Permit
        self._cycles = 0
        self._queue_timer = None                 # the clock event of the queue's next flush
        #: the modelled end of an attempt that ``run(until=T)`` stopped at T (its cost ran past T):
        #: the scheduler is busy until then, and the next run() resumes there, so stopping at T
        #: changes no decision (see _charge)
        self._busy_until: float | None = None
        self._order: list[str] = []   # uids of pods to schedule, in arrival order
        #: called with the PodResult of each pod once it is bound (simulations observe binds here)
        self.bound_callbacks: list = []
        #: called as ``cb(victim, preemptor, node_name)`` before a preemption victim is deleted
        self.preemption_callbacks: list = []

    # ==========================================================================================
    # the cluster (fastsched/scheduler/cluster.py): what users and simulations write to it
    # ==========================================================================================
    # The Scheduler is also the front of its Cluster: the calls below are the Cluster's (objects
    # validated and admitted as the API server does, controllers run), and the Scheduler hears
    # each change through its event handlers (fastsched/scheduler/eventhandlers.py).
    def add(self, objects: Any, *, strict: bool | None = None) -> None:
        """Add any mix of objects: what :func:`~fastsched.api.load_objects` reads (files,
        directories, cluster dumps, manifests, API-client objects) or fastsched objects.

        Kinds are applied in dependency order (namespaces, priority classes, nodes, ..., pods, then
        the workload controllers, which count the pods already there and create the rest). Kinds
        fastsched does not model are skipped with one warning.
        """
        self.cluster.add(objects, strict=strict)

    def add_nodes(self, nodes: Any) -> None:
        """Add many nodes: as :meth:`add_node` for each, in order (vectorized)."""
        self.cluster.add_nodes(nodes)

    def add_node(self, node: Any) -> None:
        """Add a node; a node of the same name is an error (``update_node`` replaces one)."""
        self.cluster.add_node(node)

    def update_node(self, node: Any) -> None:
        self.cluster.update_node(node)

    def delete_node(self, name: str) -> None:
        self.cluster.delete_node(name)

    def add_namespace(self, ns: Any) -> None:
        self.cluster.add_namespace(ns)

    def add_priority_class(self, pc: Any) -> None:
        self.cluster.add_priority_class(pc)

    def add_pdb(self, pdb: Any) -> None:
        self.cluster.add_pdb(pdb)

    def add_pods(self, pods: Any) -> None:
        """Add many pods: as :meth:`add_pod` for each, in order (bound pods vectorized)."""
        self.cluster.add_pods(pods)

    def add_pod(self, pod: Any) -> None:
        """Add a pod: with ``spec.nodeName`` it is running; otherwise it is queued for scheduling.

        As upstream's informers: a pod whose phase is Succeeded or Failed is kept (``objects``,
        controllers count it) but holds nothing on its node and is never queued; a pod with a
        deletionTimestamp still counts on its node until deleted, and is never scheduled.
        """
        self.cluster.add_pod(pod)

    def update_pod(self, pod: Any) -> None:
        """Replace a known pod (same uid) with a new version; the queue and cache react.

        A bound pod whose phase becomes Succeeded or Failed leaves its node, as upstream's cache
        drops terminated pods; its controller (a Job) then reconciles."""
        self.cluster.update_pod(pod)

    def delete_pod(self, pod: Any, *, reason: str = "") -> None:
        """Delete a pod (running or queued); freed resources may let queued pods schedule. The
        pod's controller, if it is one of the added workload objects, reconciles (a ReplicaSet
        replaces a deleted pod, as in a cluster)."""
        self.cluster.delete_pod(pod, reason=reason)

    def add_object(self, obj: Any) -> KubeObject:
        """Add an object of a kind other than Pod, Node, Namespace, PriorityClass or
        PodDisruptionBudget (those have their own ``add_*``). A workload object's controller
        creates its pods (and a Deployment its ReplicaSet, a CronJob its Job) at once. Returns
        the object as created (its generated name and uid)."""
        return self.cluster.add_object(obj)

    def update_object(self, obj: Any) -> None:
        """Replace an object added with :meth:`add_object` (same kind, namespace and name); its
        controller reconciles (scaling a Deployment creates or deletes pods). A PriorityClass too,
        as the API server updates one (its ``value`` and ``preemptionPolicy`` cannot change)."""
        self.cluster.update_object(obj)

    def delete_object(self, kind: str, name: str, namespace: str = "default") -> None:
        """Delete an object added with :meth:`add_object`; what it controls goes with it
        (cascading deletion by owner references: a Deployment's ReplicaSets and their pods). A
        PriorityClass (not a system one), or a Namespace with everything in it (as the namespace
        controller deletes it; not ``default``, ``kube-system`` or ``kube-public``)."""
        self.cluster.delete_object(kind, name, namespace)

    def scale(self, kind: str, name: str, replicas: int, namespace: str = "default") -> None:
        """Set ``spec.replicas`` of a Deployment, ReplicaSet, StatefulSet or ReplicationController
        (``spec.parallelism`` of a Job); its controller creates or deletes pods to match."""
        self.cluster.scale(kind, name, replicas, namespace)

    def get_object(self, kind: str, name: str, namespace: str = "default") -> KubeObject | None:
        """The current object of ``kind`` (any kind) named ``name``, or None."""
        return self.cluster.get_object(kind, name, namespace)

    def objects(self, kind: str) -> list[dict]:
        """The current objects of ``kind`` as manifests (new dicts), e.g. after a run: pods with
        ``spec.nodeName`` and ``status.nominatedNodeName``, the pods and ReplicaSets that
        controllers created. Objects built in code (no manifest) show their metadata."""
        return self.cluster.objects(kind)

    def list_objects(self, kind: str, namespace: str | None = None) -> list[KubeObject]:
        """The current objects of ``kind`` (in ``namespace`` when given), in the order added."""
        return self.cluster.list_objects(kind, namespace)

    def object_version(self, kind: str) -> int:
        """A counter bumped by every add, update and delete of an object of ``kind``."""
        return self.cluster.object_version(kind)

    def nodes(self) -> list[Node]:
        """Every node, in the order they were added."""
        return self.cluster.nodes()

    def pods_in_namespace(self, namespace: str) -> list[Pod]:
        """Every pod of ``namespace`` (terminal ones included), in the order they were added."""
        return self.cluster.pods_in_namespace(namespace)

    def name_taken(self, kind: str, namespace: str, name: str) -> bool:
        """Whether an object of ``kind`` already has that name (in that namespace)."""
        return self.cluster.name_taken(kind, namespace, name)

    def get_pod(self, namespace: str, name: str) -> Pod | None:
        return self.cluster.get_pod(namespace, name)

    def get_pod_by_uid(self, uid: str) -> Pod | None:
        return self.cluster.get_pod_by_uid(uid)

    # the Cluster's stores, read through the Scheduler as before the split
    pods = property(lambda self: self.cluster.pods, doc="Every known pod by uid (the informer's view).")
    namespaces = property(lambda self: self.cluster.namespaces, doc="Namespace objects by name.")
    priority_classes = property(lambda self: self.cluster.priority_classes, doc="PriorityClasses by name.")
    pdbs = property(lambda self: self.cluster.pdbs, doc="PodDisruptionBudgets by namespace/name.")
    names = property(lambda self: self.cluster.names, doc="The API server's generated names (seeded).")
    object_listeners = property(lambda self: self.cluster.object_listeners,
                                doc="Called as listener(kind, old, new) on each event of a kind the plugins read.")

    @property
    def strict(self) -> bool:
        """Whether unknown manifest fields are an error (else a warning)."""
        return self.cluster.strict

    @strict.setter
    def strict(self, value: bool) -> None:
        self.cluster.strict = value

    # -- PodActivator (the framework's handle) ----------------------------------------------------
    def activate(self, pods: Mapping[str, Pod]) -> None:
        """PodActivator: move the named pods (values are Pods) to activeQ. (The mapping goes to the
        queue as it is: GangScheduling's is a view the queue recognises.)"""
        self.queue.activate(pods)

    # ==========================================================================================
    # the loop
    # ==========================================================================================
    def run(self, until: float | None = None, max_attempts: int | None = None, *,
            results: bool = True) -> list[PodResult]:
        """Schedule until virtual time ``until``, or (``until`` None) until nothing can make
        progress (see the module docstring); ``max_attempts`` bounds the attempts of this call.

        Returns one :class:`PodResult` per pod handed to the scheduler, in arrival order (an empty
        list with ``results=False``, for callers that run often and read ``bound_callbacks``).

        The garbage collector's full passes are deferred while the loop runs, and run every
        :data:`~fastsched.util.collector.FULL_COLLECTION_EVERY` attempts instead (see
        :func:`~fastsched.util.collector.full_collections_deferred`).
        """
        if until is not None:
            until = _checked_until(until)
        if max_attempts is not None:
            max_attempts = _checked_max_attempts(max_attempts)
            if max_attempts == 0:  # (the loop checks its bound after an attempt)
                return self.pod_results() if results else []
        with full_collections_deferred():
            return self._run(until, max_attempts, results)

    def _run(self, until: float | None, max_attempts: int | None, results: bool) -> list[PodResult]:
        clock = self.clock
        attempts = 0
        full_collection_at = FULL_COLLECTION_EVERY
        pop, schedule_one = self.queue.pop, self.schedule_one  # once, not per cycle
        cycle_cost = self.cycle_cost
        while True:
            busy = self._busy_until
            if busy is not None:  # an attempt charged past the last run's ``until`` ends first
                if until is not None and busy > until:
                    clock.advance_to(max(until, clock.now()))
                    break
                self._busy_until = None
                clock.advance_to(busy)
            if self._waiting:
                self._finish_permitted_bindings()
            if attempts >= full_collection_at:
                if gc.isenabled():  # (a caller who turned the collector off wants no pass)
                    gc.collect()
                full_collection_at += FULL_COLLECTION_EVERY
            qpi = pop()
            if qpi is not None and qpi.pod is None:  # a pod group (GenericWorkload): scheduleOnePodGroup
                if self._failures and (self._park_group_if_settled(qpi) if until is None
                                       else self._park_group_if_looping(qpi)):
                    continue
                if cycle_cost is None:
                    self.schedule_one_pod_group(qpi)
                else:
                    self._schedule_pod_group_charged(qpi, cycle_cost, until)
                attempts += 1
                if max_attempts is not None and attempts >= max_attempts:
                    break
                continue
            if qpi is not None:
                if self._failures and (self._park_if_settled(qpi) if until is None
                                       else self._park_if_waits_no_time(qpi)):
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
            self._charge(self.clock.now() + seconds, until)

    def _schedule_pod_group_charged(self, pg_info: Any, cycle_cost: Any, until: float | None) -> None:
        """:meth:`schedule_one_pod_group` and the bindings it released at Permit, then the clock
        moves on by the modelled cost of one attempt per member in the cycle (the group algorithm
        runs each member's; each gets an equal share of the cycle's wall time, and the binding cost
        when it was bound), not past ``until``."""
        members = [m.pod.uid for m in pg_info.members]
        before = {uid: (r.bound_at if (r := self.results.get(uid)) is not None else None) for uid in members}
        started = _perf_counter()
        self.schedule_one_pod_group(pg_info)
        if self._waiting:  # the members Permit released with the last one bind now, as the loop would
            self._finish_permitted_bindings()
        wall = (_perf_counter() - started) / max(len(members), 1)
        seconds = 0.0
        for uid in members:
            res = self.results.get(uid)
            bound = (res is not None and res.status == SCHEDULED and res.bound_at is not None
                     and res.bound_at != before[uid])
            seconds += float(cycle_cost(wall, bound))
        if seconds > 0 and self.clock.virtual:
            self._charge(self.clock.now() + seconds, until)

    def _charge(self, end: float, until: float | None) -> None:
        """Move the clock to an attempt's modelled ``end``, running the events due meanwhile; when
        ``end`` is past ``until``, only to ``until``, and the rest stays owed (``_busy_until``):
        the next run() starts there, as one run() would have, instead of dropping the remainder
        and starting the next attempt early."""
        if until is not None and end > until:
            self.clock.advance_to(max(until, self.clock.now()))
            self._busy_until = end
        else:
            self.clock.advance_to(end)

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
            if qpi.pod is None:  # a pod group: settled when every member is
                if not all(self._is_settled(m.pod.uid, now) for m in qpi.members):
                    return True
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
        same_committed = last is not None and self._same_committed(last.seen[0], seen[0])
        may_settle = rejected or (same_committed and last.seen[1] == seen[1])  # type: ignore[union-attr]
        on_committed = last.on_committed + 1 if same_committed else 1  # type: ignore[union-attr]
        if uid in self._rejected_at_permit_wait:
            self._rejected_at_permit_wait.discard(uid)
            wait_rejections = last.wait_rejections + 1 if last is not None else 1
        else:
            wait_rejections = 0
        end = self._change_seq
        bound_from = self._binding_failed_from
        if self._attempt_uid == uid and not wait_rejections:  # an inline failure: its writes are its own
            self._failed_writes += end - seen[0]
        elif bound_from is not None and bound_from[0] == uid:  # a binding cycle after a wait: its own
            self._failed_writes += end - bound_from[1]
        self._binding_failed_from = None
        failed_writes = self._failed_writes
        spinning = (last.spinning + 1 if last is not None and end - last.ended_seq == failed_writes - last.failed_writes
                    else 1)
        self._failures[uid] = _Failure(seen, may_settle, on_committed, frozenset(qpi.unschedulable_plugins),
                                       frozenset(qpi.pending_plugins), wait_rejections, end, failed_writes, spinning)
        now = self.clock.now()
        at = self._failed_at.get(uid)
        self._failed_at[uid] = (now, at[1] + 1 if at is not None and at[0] == now else 1)

    def _failed_twice_on(self, uid: str, committed: int) -> bool:
        """Whether pod ``uid``'s last two failures both saw the committed cluster of change seq
        ``committed`` (see :meth:`_same_committed`), or its failures spin on failed attempts'
        writes up to it (:meth:`_spins_on_failed_writes`)."""
        last = self._failures.get(uid)
        if last is None:
            return False
        return ((last.on_committed >= 2 and self._same_committed(last.seen[0], committed))
                or self._spins_on_failed_writes(last, committed))

    def _spins_on_failed_writes(self, last: _Failure, committed: int) -> bool:
        """Whether a pod's last failure (``last``, its ``_failures`` entry) ended
        :attr:`own_write_retries` failures in a row with nothing committed before each but the
        writes of failed attempts (its own, other pods'), and nothing else was committed since
        (up to change seq ``committed``). Pods whose failing attempts write (a plugin that creates
        an object, then fails) change the cluster every attempt: the rule above would never see
        them fail twice on one cluster, and ``run()`` would retry them forever (their backoff
        advancing the virtual clock). A pod may need a few of those writes (a volume bound in
        PreBind, victims evicted in PostFilter), not that many in a row with nothing else."""
        return (last.spinning >= self.own_write_retries
                and committed - last.ended_seq == self._failed_writes - last.failed_writes)

    def _same_committed(self, seq_a: int, seq_b: int) -> bool:
        """Whether the committed cluster at change seq ``seq_b`` is the one at ``seq_a``: the same
        seq, or every change between them a journaled object write and each object written ending
        as it began (:func:`~.eventhandlers.net_unchanged`: manifest and typed fields equal; an
        object built in code, without a manifest, only when it is the very object). Memoized per
        pair."""
        if seq_a == seq_b:
            return True
        if seq_a > seq_b:
            seq_a, seq_b = seq_b, seq_a
        memo = self._same_memo
        known = memo.get((seq_a, seq_b))
        if known is not None:
            return known
        if len(memo) > 4096:
            memo.clear()
        memo[(seq_a, seq_b)] = same = net_unchanged(self._journal, seq_a, seq_b)
        return same

    def _park_if_settled(self, qpi: QueuedPodInfo) -> bool:
        """In ``run()`` without ``until``: a popped pod that already failed twice on the committed
        cluster as it is goes back to unschedulablePods without an attempt (see
        ``PriorityQueue.park``); another attempt could only fail again or succeed by the grace of
        other pods' passing assumptions, and it would make its own (a Permit wait, a failed
        binding's release) that start the others again."""
        uid = qpi.pod.uid
        if not self._failed_twice_on(uid, self._change_seq) or self._waits_again(uid):
            return False
        last = self._failures[uid]
        self.queue.park(qpi, last.unschedulable_plugins, last.pending_plugins)
        return True

    def _park_group_if_settled(self, entity: Any) -> bool:
        """:meth:`_park_if_settled` for a popped pod group: parked when every member already
        failed twice on the committed cluster as it is."""
        members = entity.members
        if not members or not all(self._failed_twice_on(m.pod.uid, self._change_seq)
                                  and not self._waits_again(m.pod.uid) for m in members):
            return False
        self.queue.park_pod_group(entity)
        return True

    def _waits_again(self, uid: str) -> bool:
        """Whether pod ``uid``'s last failure was the rejection of a Permit wait and it has had
        fewer than :attr:`permit_wait_retries` of them in a row: such a pod is not settled, whatever
        the cluster. A wait's outcome is not a function of the cluster: the plugin that asked to
        wait was waiting for something the cluster does not show (another pod's Permit, an
        outside approval, its own state), and upstream retries the pod after its rejection
        (unschedulablePods, then the flush) forever; ``run()`` without ``until`` retries it as
        upstream does, that many times, and then lets the cluster rule settle it."""
        last = self._failures.get(uid)
        return last is not None and 0 < last.wait_rejections < self.permit_wait_retries

    def _park_group_if_looping(self, entity: Any) -> bool:
        """In ``run(until=...)``: a popped pod group parked (as :meth:`_park_group_if_settled`)
        when every member already failed twice on the committed cluster as it is *at this very
        instant*. That is a group whose algorithm succeeds while a member keeps failing after it
        (a Permit or Reserve plugin rejecting it): upstream requeues such a group without backoff
        (``AddAttemptedPodGroupIfNeeded``: the attempt succeeded) and retries it in a loop as fast
        as its cycles run; on a virtual clock the loop takes no time and ``run`` would never reach
        ``until``. Parked, it waits for an event or the unschedulable timeout. Groups that fail
        go through their backoff, at later instants, and are never parked here."""
        members = entity.members
        if not members or not all(self._failed_twice_now(m.pod.uid) for m in members):
            return False
        self.queue.park_pod_group(entity)
        return True

    def _park_if_waits_no_time(self, qpi: QueuedPodInfo) -> bool:
        """In ``run(until=...)``: a popped pod parked (as :meth:`_park_if_settled`) when its last
        two attempts ended at this very instant, on the committed cluster as it is, in Permit
        waits rejected at once (a Permit plugin answering Wait with a timeout of 0 or less, which
        upstream's timer fires at once). The rejection clears the pod's Permit-time nomination,
        which requeues it to be popped at once (see the v1.37 port notes): upstream retries it in
        a loop as fast as its cycles run; on a virtual clock the loop takes no time and ``run``
        would never reach ``until``. Parked, it waits for an event or the unschedulable timeout,
        as :meth:`_park_group_if_looping` does for pod groups. A wait that takes time moves the
        clock between attempts and is never parked here."""
        uid = qpi.pod.uid
        last = self._failures.get(uid)
        if last is None or last.wait_rejections < 2 or not self._failed_twice_now(uid):
            return False
        self.queue.park(qpi, last.unschedulable_plugins, last.pending_plugins)
        return True

    def _failed_twice_now(self, uid: str) -> bool:
        """Whether pod ``uid`` failed twice at this instant on the committed cluster as it is."""
        at = self._failed_at.get(uid)
        return (at is not None and at[0] == self.clock.now() and at[1] >= 2
                and self._failed_twice_on(uid, self._change_seq))

    def _is_settled(self, uid: str, now: tuple[int, int]) -> bool:
        """Whether another attempt of pod ``uid`` on the cluster as it is (``now``) is pointless
        for ``run()`` without ``until``: its last failure may settle and saw this very cluster,
        or it failed twice on the committed cluster as it is. The second rule is what bounds the
        loop: assumptions made and rolled back by other pods' failing bindings or Permit waits
        change what each attempt sees, but not what is committed, so N pods that keep failing
        make at most two attempts each per committed change."""
        last = self._failures.get(uid)
        if last is not None and 0 < last.wait_rejections < self.permit_wait_retries:
            return False  # (_waits_again)
        if (last is not None and last.may_settle and last.seen[1] == now[1]
                and self._same_committed(last.seen[0], now[0])):
            return True
        return self._failed_twice_on(uid, now[0])

    # ==========================================================================================
    # explain
    # ==========================================================================================
    def explain(self, pod: Any, profile: str | None = None):
        """Every plugin's and extender's verdict and score for ``pod`` on the current cluster
        (see :func:`fastsched.explain`). A pod already bound is explained as a pod being
        rescheduled: as if it were not on its node. An unknown profile is a ConfigError."""
        from .explain import Explanation, explain_with_framework

        # a manifest is read as the API server reads it, with this scheduler's gates (GenericWorkload
        # keeps spec.schedulingGroup)
        p = check_decoded_gates(pod, self.cluster.api_gates) if isinstance(pod, Pod) \
            else Pod.from_manifest(pod, feature_gates=self.cluster.api_gates)
        refused = ""
        given = p
        if p.uid not in self.cluster.pods:
            # a pod not created yet: the one the API server would create (DefaultTolerationSeconds'
            # tolerations, its PriorityClass's priority), as add() admits it
            p, refused = self.cluster._admit(p)
            if p.node_name:  # (add() counts a bound pod on its node whatever admission says)
                refused = ""
        else:
            refused = self.cluster.admission_errors.get(p.uid, "")
        if not refused and p.uid not in self.cluster.pods and not p.node_name and _claims_from_templates(p):
            # the ephemeral-volume and resourceclaim controllers create its claims when it is
            # added, before its first attempt: asked on a fork where it is added, the answer is
            # run()'s, with the claims it would get (their names too), and nothing is created here
            fork = self.fork()
            fork.add_pod(given)
            return fork.explain(next(reversed(fork.cluster.pods.values())), profile)
        name = profile or p.scheduler_name
        fw = profile_or_error(self.profiles, name)
        if refused:
            # the API server refuses the pod: no scheduler ever sees it, as add() says with the
            # pod's Error result; no verdicts that would read as if it could schedule
            return Explanation(pod=p, profile=fw.profile_name(), node_names=list(self.snapshot.batch().names),
                               admission_error=refused)
        placed = self.cache.get_pod(p)
        if placed is None or self.cache.is_assumed_pod(p):
            e = explain_with_framework(fw, self.snapshot, p.replace(node_name="") if p.node_name else p,
                                       self.extenders)
        else:
            self.cache.remove_pod(placed)  # out of its node for the question, back right after
            try:
                e = explain_with_framework(fw, self.snapshot, p.replace(node_name=""), self.extenders)
            finally:
                self.cache.add_pod(placed)
        queued = self.queue.get_pod(p) if placed is None else None
        if queued is not None and queued.gated:
            e.gated = _gate_message(p, queued)
        if p.scheduling_group is not None and self.feature_gates.enabled("GenericWorkload") and placed is None:
            e.pod_group = self._explain_pod_group(p)
        elif placed is None and not e.best_nodes and e.error is None and name == p.scheduler_name:
            e.preemption = self._explain_preemption(p)
        return e

    def _explain_preemption(self, pod: Pod):
        """What one attempt would do for ``pod``, which fits no node now, PostFilter included: a
        dry run on a fork (see :class:`~fastsched.scheduler.explain.PreemptionExplanation`). A pod
        the scheduler does not know is added to the fork, as if created now; one it knows is
        activated there. The fork's other queued pods are popped without an attempt: the question
        is this pod's attempt, now."""
        from .explain import PreemptionExplanation

        fork = self.fork()
        victims: list[tuple[str, str]] = []
        fork.preemption_callbacks.append(lambda victim, preemptor, node: victims.append((victim.key, node)))
        if pod.uid not in fork.results:
            fork.add_pod(pod)
        else:
            fork.activate({pod.name: fork.cluster.pods.get(pod.uid, pod)})
        while True:
            qpi = fork.queue.pop()
            if qpi is None:
                return PreemptionExplanation(reason="the pod is not in the active queue: PreEnqueue holds it"
                                             if fork.queue.where(pod.uid) is not None else "the pod is not queued")
            if qpi.pod is not None and qpi.pod.uid == pod.uid:
                break
        fork.schedule_one(qpi)
        if fork._waiting:
            fork._finish_permitted_bindings()
        res = fork.results[pod.uid]
        return PreemptionExplanation(attempted=True, status=res.status, message=res.message,
                                     nominated_node=res.nominated_node_name, victims=victims)

    def _explain_pod_group(self, pod: Pod):
        """The group cycle's verdict for ``pod``'s PodGroup, from a dry run on a fork (see
        :class:`~fastsched.scheduler.explain.PodGroupExplanation`). A pod the scheduler does not
        know joins the group in the fork, as if created now."""
        from .explain import PodGroupExplanation

        group_name = pod.pod_group_name or ""  # (the cache's key for a group without a name)
        pg = self.cluster.get_object("PodGroup", group_name, pod.namespace)
        if pg is None:
            return PodGroupExplanation(pod.namespace, group_name, None, 0,
                                       reason=f'pod group "{group_name}" does not exist: its members wait for it')
        out = PodGroupExplanation(pod.namespace, group_name, "gang" if pg.is_gang else "basic", pg.min_count)
        fork = self.fork()
        if pod.uid not in fork.results:
            fork.add_pod(pod)
        entity = fork.queue.pop_pod_group(pod.namespace, group_name)
        if entity is None:
            held = fork.queue.get_pod_group(pod.namespace, group_name)
            out.reason = (f"PreEnqueue holds the group: {held.gating_plugin}: {held.gating_message}"
                          if held is not None and held.gated else "no member of the group is queued")
            return out
        members = [m.pod for m in entity.members]
        fork.schedule_one_pod_group(entity)
        if fork._waiting:
            fork._finish_permitted_bindings()
        out.cycle_ran = True
        for member in members:
            res = fork.results.get(member.uid)
            status = "Pending" if res is None else res.status
            out.members[member.key] = (status, (res.node_name or "") if res is not None else "",
                                       res.message if res is not None else "")
        return out

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


class _SpecObjects(dict):
    """``Scheduler._interned``'s map, (field, value, exact requests) -> the shared object. A fork
    shares it with its origin instead of copying it (a copy per fork would cost up to
    ``_SPEC_OBJECTS_MAX`` entries): it only ever maps a value to an equal immutable object, so an
    entry either side adds is right for both."""

    __slots__ = ("by_id", "aliases")

    def __init__(self) -> None:
        super().__init__()
        #: id(shared object) -> that object: a pod whose field already is a shared object (pods
        #: stamped from one template) is recognized without hashing the value
        self.by_id: dict[int, Any] = {}
        #: id(value) -> (that value, the shared object equal to it) for values met after an equal
        #: one was shared: pods stamped from a second template with equal containers (light-pod
        #: after pod-with-finalizer or gated-pod in scheduler_perf) are recognized without hashing
        #: (the entry holds the value, so its id stays its own while the entry lives)
        self.aliases: dict[int, tuple[Any, Any]] = {}

    def clear(self) -> None:
        super().clear()
        self.by_id.clear()
        self.aliases.clear()

    def __deepcopy__(self, memo: dict) -> "_SpecObjects":
        return self


_perf_counter = time.perf_counter


def _claims_from_templates(pod: Pod) -> bool:
    """Whether controllers create claims for ``pod`` when it is added: a generic ephemeral volume
    (the ephemeral-volume controller's PersistentVolumeClaim) or a ``resourceClaimTemplateName``
    entry (the resourceclaim controller's ResourceClaim)."""
    return (any(isinstance(v, Mapping) and v.get("ephemeral") is not None for v in pod.volumes or ())
            or any(isinstance(e, Mapping) and (e.get("resourceClaimTemplateName") or e.get("resource_claim_template_name"))
                   for e in pod.resource_claims or ()))


def _checked_until(until: Any) -> float:
    """``run()``'s ``until`` as a float: a NaN compared False with every event time and an
    infinite horizon retried failing pods for ever (both looped without end); a string failed
    deep in the loop."""
    if isinstance(until, bool) or not isinstance(until, numbers.Real):
        raise TypeError(f"run(until={until!r}): must be a number of seconds (virtual time), "
                        f"got {type(until).__name__}")
    value = float(until)
    if not math.isfinite(value):
        raise ValueError(f"run(until={until!r}): must be a finite number of seconds (run() without until "
                         f"ends when no pod can make progress)")
    return value


def _checked_max_attempts(max_attempts: Any) -> int:
    """``run()``'s ``max_attempts``: a non-negative integer (0 made one attempt, as did -1)."""
    if isinstance(max_attempts, bool) or not isinstance(max_attempts, numbers.Integral):
        raise TypeError(f"run(max_attempts={max_attempts!r}): must be a non-negative integer, "
                        f"got {type(max_attempts).__name__}")
    if max_attempts < 0:
        raise ValueError(f"run(max_attempts={max_attempts!r}): must be a non-negative integer")
    return int(max_attempts)
