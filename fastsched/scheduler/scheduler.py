"""The Scheduler: queue, cache, profiles, and the loop that drives pods through the cycles.

Everything runs on the calling thread in the scheduler's clock (virtual by default): binding cycles
run inline right after their scheduling cycle, except for pods waiting at Permit, whose binding
cycle runs once they are allowed or rejected (or time out, as virtual time advances). ``run()``
returns when no queued pod can make progress: every pod still queued has failed since the last
cluster change that could help it (a new attempt on the same cluster would fail the same way).
"""
from __future__ import annotations

import copy
import math
import random
import time
from dataclasses import dataclass, field
from typing import Any, Iterable

import numpy as np

from ..api import Namespace, Node, Pod, PodDisruptionBudget, PriorityClass, objects_of
from ..clock import RealClock, VirtualClock
from ..config import load_config
from ..config.types import KubeSchedulerConfiguration
from ..framework.cycle_state import CycleState
from ..framework.interface import ActionType, ClusterEvent, EventResource
from ..framework.types import FitError, NominatingMode, PodInfo, QueuedPodInfo
from ..runtime import MetricsRecorder, Registry, new_framework
from .cache import Cache
from .queue import PriorityQueue
from .schedule_one import PODS_TO_ACTIVATE_KEY, PodsToActivate, ScheduleOneMixin

NODE_ADD = ClusterEvent(EventResource.NODE, ActionType.ADD, "NodeAdd")
NODE_DELETE = ClusterEvent(EventResource.NODE, ActionType.DELETE, "NodeDelete")
ASSIGNED_POD_DELETE = ClusterEvent(EventResource.ASSIGNED_POD, ActionType.DELETE, "AssignedPodDelete")
NAMESPACE_ADD = ClusterEvent(EventResource.NAMESPACE, ActionType.ADD, "NamespaceAdd")
NAMESPACE_UPDATE = ClusterEvent(EventResource.NAMESPACE, ActionType.UPDATE, "NamespaceUpdate")
WILDCARD = ClusterEvent(EventResource.WILDCARD, ActionType.ALL, "WildCardEvent")

#: How often upstream's loops flush the unschedulable pool (seconds).
UNSCHEDULABLE_FLUSH_PERIOD = 30.0

SCHEDULED = "Scheduled"
UNSCHEDULABLE = "Unschedulable"
ERROR = "Error"
PENDING = "Pending"
GATED = "Gated"
DELETED = "Deleted"
NO_PROFILE = "NoProfile"


@dataclass
class PodResult:
    """What became of one pod handed to the scheduler."""

    pod: Pod
    node_name: str | None = None
    message: str = ""
    attempts: int = 0
    nominated_node_name: str | None = None
    #: Scheduled, Unschedulable, Error, Pending (queued, not yet tried), Gated, Deleted, NoProfile
    status: str = PENDING
    #: scheduler clock time when the pod was added and when it was bound (None if not bound)
    queued_at: float = 0.0
    bound_at: float | None = None

    @property
    def scheduled(self) -> bool:
        return self.status == SCHEDULED


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
    random choice (host ties, preemption); ``clock`` is a VirtualClock unless given.
    """

    def __init__(self, config: Any = None, *, registry: Registry | None = None, seed: int = 0,
                 clock: Any = None, extenders: list | None = None):
        from ..plugins import in_tree_registry

        self.config: KubeSchedulerConfiguration = (
            copy.deepcopy(config) if isinstance(config, KubeSchedulerConfiguration)  # never mutate the caller's
            else load_config(config, registry_names=list(registry or ())))
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
        self.pods: dict[str, Pod] = {}  # every known pod by uid (the informer's view)
        self.results: dict[str, PodResult] = {}
        self.next_start_node_index = 0
        self.extenders = list(extenders) if extenders is not None else self._build_extenders()
        self._ignore_extender_managed_resources()

        reg = in_tree_registry()
        if registry is not None:
            reg.merge(registry)
        self.registry = reg
        self.profiles = {}
        for prof in self.config.profiles:
            self.profiles[prof.scheduler_name] = new_framework(
                reg, prof, snapshot_shared_lister=self.snapshot, parallelism=self.config.parallelism,
                client=self, clock=self.clock, namespaces=self.namespaces, extenders=self.extenders,
                metrics_recorder=self.metrics.framework, rng=self.plugin_rng, pod_activator=self)
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
        self._change_seq = 0          # bumped by every cluster change
        self._tried_at_seq: dict[str, int] = {}  # uid -> change seq its last attempt saw
        self._waiting: dict[str, tuple] = {}     # uid -> binding cycle to finish after Permit
        self._cycles = 0
        self._last_leftover_flush = self.clock.now()
        self._order: list[str] = []   # uids of pods to schedule, in arrival order
        #: called with the PodResult of each pod once it is bound (simulations observe binds here)
        self.bound_callbacks: list = []
        #: called as ``cb(victim, preemptor, node_name)`` before a preemption victim is deleted
        self.preemption_callbacks: list = []

    def _ignore_extender_managed_resources(self) -> None:
        """Resources an extender manages with ``ignoredByScheduler`` become NodeResourcesFit's
        ``ignoredResources`` in every profile (upstream's scheduler.New does the same)."""
        ignored = [r.name for e in self.config.extenders for r in e.managed_resources if r.ignored_by_scheduler]
        if not ignored:
            return
        from ..config.args import NodeResourcesFitArgs

        for prof in self.config.profiles:
            pc = next((c for c in prof.plugin_config if c.name == "NodeResourcesFit"), None)
            if pc is None:
                raise ValueError("can't find NodeResourcesFitArgs in plugin config")
            if pc.args is None:
                pc.args = NodeResourcesFitArgs()
            pc.args.ignored_resources = list(ignored)

    def _build_extenders(self) -> list:
        if not self.config.extenders:
            return []
        from ..extender import new_http_extenders  # the extender issue provides the HTTP client

        return new_http_extenders(self.config.extenders)

    # ==========================================================================================
    # cluster state
    # ==========================================================================================
    def _changed(self) -> None:
        self._change_seq += 1

    def add(self, objects: Any) -> None:
        """Add any mix of Node, Pod, Namespace, PriorityClass and PodDisruptionBudget objects or manifests."""
        for obj in objects_of(objects):
            if isinstance(obj, Node):
                self.add_node(obj)
            elif isinstance(obj, Pod):
                self.add_pod(obj)
            elif isinstance(obj, Namespace):
                self.add_namespace(obj)
            elif isinstance(obj, PriorityClass):
                self.priority_classes[obj.name] = obj
            elif isinstance(obj, PodDisruptionBudget):
                self.add_pdb(obj)
            else:
                raise TypeError(f"cannot add a {type(obj).__name__}")

    def add_nodes(self, nodes: Any) -> None:
        for n in objects_of(nodes, Node):
            self.add_node(n)

    def add_node(self, node: Any) -> None:
        node = node if isinstance(node, Node) else Node.from_manifest(node)
        existed = self.cache.get_node(node.name) is not None
        self.cache.add_node(node)
        self._changed()
        event = ClusterEvent(EventResource.NODE, ActionType.UPDATE if existed else ActionType.ADD,
                             "NodeUpdate" if existed else "NodeAdd")
        self.queue.move_all_to_active_or_backoff_queue(event, None, node)

    def update_node(self, node: Any) -> None:
        node = node if isinstance(node, Node) else Node.from_manifest(node)
        old = self.cache.get_node(node.name)
        if old is None:
            raise KeyError(f"node {node.name} is not known")
        self.cache.update_node(node)
        self._changed()
        self.queue.move_all_to_active_or_backoff_queue(_node_update_event(old, node), old, node)

    def delete_node(self, name: str) -> None:
        old = self.cache.get_node(name)
        if old is None:
            raise KeyError(f"node {name} is not known")
        self.cache.remove_node(name)
        self._changed()
        self.queue.move_all_to_active_or_backoff_queue(NODE_DELETE, old, None)

    def add_namespace(self, ns: Any) -> None:
        ns = ns if isinstance(ns, Namespace) else Namespace.from_manifest(ns)
        existed = ns.name in self.namespaces
        self.namespaces[ns.name] = ns
        self._changed()
        self.queue.move_all_to_active_or_backoff_queue(NAMESPACE_UPDATE if existed else NAMESPACE_ADD, None, ns)

    def add_pdb(self, pdb: Any) -> None:
        pdb = pdb if isinstance(pdb, PodDisruptionBudget) else PodDisruptionBudget.from_manifest(pdb)
        self.pdbs[pdb.key] = pdb
        self._changed()

    def add_pods(self, pods: Any) -> None:
        for p in objects_of(pods, Pod):
            self.add_pod(p)

    def add_pod(self, pod: Any) -> None:
        """Add a pod: with ``spec.nodeName`` it is running; otherwise it is queued for scheduling."""
        pod = pod if isinstance(pod, Pod) else Pod.from_manifest(pod)
        if pod.uid in self.pods:
            raise ValueError(f"pod {pod.key} (uid {pod.uid}) was already added")
        pod, err = self._admit(pod)
        self.pods[pod.uid] = pod
        if pod.node_name:
            self.cache.add_pod(pod)
            self._changed()
            self.queue.assigned_pod_added(pod)
            return
        self._order.append(pod.uid)
        res = PodResult(pod, queued_at=self.clock.now())
        self.results[pod.uid] = res
        if err:
            res.status, res.message = ERROR, err
            return
        if pod.scheduler_name not in self.profiles:
            res.status = NO_PROFILE
            res.message = f'profile not found for scheduler name "{pod.scheduler_name}"'
            return
        self.queue.add(pod)
        qpi = self.queue.get(pod.uid)
        if qpi is not None and qpi.gated:
            res.status = GATED
            res.message = _gate_message(pod)

    def _admit(self, pod: Pod) -> tuple[Pod, str]:
        """Resolve the priority class as the API server's admission does."""
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
        """Replace a known pod (same uid) with a new version; the queue and cache react."""
        new = pod if isinstance(pod, Pod) else Pod.from_manifest(pod)
        old = self.pods.get(new.uid)
        if old is None:
            raise KeyError(f"pod {new.key} is not known")
        self.pods[new.uid] = new
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
        """Delete a pod (running or queued); freed resources may let queued pods schedule."""
        uid = pod.uid if isinstance(pod, Pod) else pod
        old = self.pods.pop(uid, None)
        if old is None:
            raise KeyError(f"pod with uid {uid} is not known")
        res = self.results.get(uid)
        if old.node_name or self.cache.get_pod(old) is not None:
            fw = self.profiles.get(old.scheduler_name)
            if fw is not None:
                fw.reject_waiting_pod(uid)
            if self.cache.get_pod(old) is not None and not self.cache.is_assumed_pod(old):
                self.cache.remove_pod(self.cache.get_pod(old))
            self._changed()
            self.queue.move_all_to_active_or_backoff_queue(ASSIGNED_POD_DELETE, old, None)
        else:
            self.queue.delete(old)
        self.queue.nominator.delete_nominated_pod_if_exists(old)
        if res is not None:
            res.status = DELETED
            res.message = reason or "deleted"

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
        """Schedule until no queued pod can make progress (or virtual time ``until``).

        Returns one :class:`PodResult` per pod handed to the scheduler, in arrival order (an empty
        list with ``results=False``, for callers that run often and read ``bound_callbacks``).
        """
        attempts = 0
        stalled = 0
        while True:
            if until is not None and self.clock.now() > until:
                break
            self._finish_permitted_bindings()
            self.queue.flush_backoff_q_completed()
            if self.clock.now() - self._last_leftover_flush >= UNSCHEDULABLE_FLUSH_PERIOD:
                self.queue.flush_unschedulable_pods_leftover()
                self._last_leftover_flush = self.clock.now()
            qpi = self.queue.pop()
            if qpi is not None:
                self.schedule_one(qpi)
                attempts += 1
                if max_attempts is not None and attempts >= max_attempts:
                    break
                continue
            wake = self._next_useful_time()
            if wake is not None and wake <= self.clock.now():
                # a flush was due now but moved nothing that can be popped: nothing else will
                stalled += 1
                if stalled > 1:
                    wake = None
            else:
                stalled = 0
            if wake is None:
                if until is not None and not isinstance(self.clock, RealClock):
                    self.clock.advance_to(max(until, self.clock.now()))
                break
            if until is not None and wake > until:
                self.clock.advance_to(until)
                break
            if isinstance(self.clock, RealClock):
                self.clock.sleep(max(0.0, wake - self.clock.now()))
            else:
                self.clock.advance_to(wake)
        return self.pod_results() if results else []

    def pod_results(self) -> list[PodResult]:
        """One result per pod handed to the scheduler, in arrival order."""
        return [self.results[uid] for uid in self._order]

    def _next_useful_time(self) -> float | None:
        """The earliest time at which waiting could change an outcome, or None when nothing can."""
        times = []
        if self._waiting:
            d = self.clock.next_deadline()
            if d is not None:
                times.append(d)
        for qpi, where in self.queue.queued_pod_infos():
            if self._tried_at_seq.get(qpi.pod.uid, -1) >= self._change_seq and qpi.attempts > 0:
                continue  # failed on this very cluster: another attempt would fail the same way
            if where == "backoff":
                times.append(self.queue.backoff_expiration(qpi))
            elif where == "unschedulable" and not qpi.gated:
                # the first periodic flush at which it has been unschedulable for longer than the limit
                deadline = qpi.timestamp + self.queue.pod_max_in_unschedulable_pods_duration
                ticks = math.floor((deadline - self._last_leftover_flush) / UNSCHEDULABLE_FLUSH_PERIOD) + 1
                times.append(self._last_leftover_flush + max(ticks, 1) * UNSCHEDULABLE_FLUSH_PERIOD)
        return min(times) if times else None

    def schedule_one(self, qpi: QueuedPodInfo) -> None:
        """One scheduling attempt for a popped pod (upstream ``ScheduleOne``)."""
        started = time.perf_counter()
        pod = self.pods.get(qpi.pod.uid)
        uid = qpi.pod.uid
        res = self.results.get(uid)
        fw = self.profiles.get(qpi.pod.scheduler_name)
        if fw is None or pod is None or pod.node_name or self.cache.is_assumed_pod(qpi.pod):
            self.queue.done(uid)
            return
        self._cycles += 1
        self._tried_at_seq[uid] = self._change_seq
        if res is not None:
            res.attempts = qpi.attempts
        state = CycleState()
        state.set_record_plugin_metrics(self._cycles % 10 == 0)  # upstream samples 10% of cycles
        state.write(PODS_TO_ACTIVATE_KEY, PodsToActivate())
        result, assumed, status, err = self._scheduling_cycle(fw, state, qpi)
        if status is not None:
            self._handle_failure(fw, qpi, status, err, result.nominating_info, started)
            return
        host = result.suggested_host
        if fw.will_wait_on_permit(assumed):
            self._waiting[uid] = (fw, state, qpi, assumed, host, started)
            return
        self._run_binding_cycle(fw, state, qpi, assumed, host, started)

    def _finish_permitted_bindings(self) -> None:
        if not self._waiting:
            return
        for uid in list(self._waiting):
            fw, state, qpi, assumed, host, started = self._waiting[uid]
            wp = fw.get_waiting_pod(uid)
            if wp is not None and not wp.signalled:
                continue
            del self._waiting[uid]
            self._run_binding_cycle(fw, state, qpi, assumed, host, started)

    def _run_binding_cycle(self, fw, state, qpi, assumed, host, started) -> None:
        status, err = self._binding_cycle(fw, state, qpi, assumed, host)
        if status is not None:
            fw.run_reserve_plugins_unreserve(state, assumed, host)
            try:
                self.cache.forget_pod(assumed)
                self._changed()
                self.queue.move_all_to_active_or_backoff_queue(ASSIGNED_POD_DELETE, assumed, None)
            except Exception:  # noqa: BLE001 - upstream logs a failed forget and goes on
                pass
            from ..framework.types import NominatingInfo
            self._handle_failure(fw, qpi, status, err, NominatingInfo("", NominatingMode.OVERRIDE), started)
            return
        # the informer sees the bound pod: confirm it in the cache, tell the queue. The kubelet
        # would set status.startTime when the pod starts; a simulation starts it at bind time.
        if assumed.start_time is None:
            # the assumed pod is the scheduler's own copy (made at assume time): set it in place
            assumed.start_time = self.clock.now()
        self.pods[assumed.uid] = assumed
        self.cache.add_pod(assumed)
        self._changed()
        self.queue.assigned_pod_added(assumed)
        res = self.results.get(assumed.uid)
        if res is not None:
            res.pod, res.node_name, res.status = assumed, host, SCHEDULED
            res.message = f"Successfully assigned {assumed.key} to {host}"
            res.bound_at = self.clock.now()
            res.nominated_node_name = None
        self.metrics.attempts["scheduled"] += 1
        self.metrics.attempt_latencies.append(time.perf_counter() - started)
        fw.run_post_bind_plugins(state, assumed, host)
        if res is not None:
            for cb in self.bound_callbacks:
                cb(res)
        pta = state.get(PODS_TO_ACTIVATE_KEY)
        if pta is not None and pta.map:
            self.activate(dict(pta.map))

    def _handle_failure(self, fw, qpi: QueuedPodInfo, status, err, nominating_info, started) -> None:
        """Upstream ``handleSchedulingFailure``: record, requeue, nominate."""
        rejected = status.is_rejected() if hasattr(status, "is_rejected") else False
        if isinstance(err, FitError):
            qpi.unschedulable_plugins = set(err.diagnosis.unschedulable_plugins)
            qpi.pending_plugins = set(err.diagnosis.pending_plugins)
        else:
            qpi.unschedulable_plugins = set()
            qpi.pending_plugins = set()
        message = str(err) if isinstance(err, FitError) else status.message()
        self.metrics.attempts["unschedulable" if rejected else "error"] += 1
        self.metrics.attempt_latencies.append(time.perf_counter() - started)
        fresh = self.pods.get(qpi.pod.uid)
        if fresh is None or fresh.node_name:
            self.queue.done(qpi.pod.uid)
        else:
            qpi.pod_info.update(fresh)
            self.queue.add_unschedulable_if_not_present(qpi, self.queue.scheduling_cycle())
        res = self.results.get(qpi.pod.uid)
        if fresh is not None and nominating_info is not None:
            if nominating_info.nominating_mode == NominatingMode.OVERRIDE:
                nnn = nominating_info.nominated_node_name
                if fresh.nominated_node_name != nnn:
                    fresh = fresh.replace(nominated_node_name=nnn)
                    self._set_pod(fresh)
                    qpi.pod_info.update(fresh)
            self.queue.nominator.add_nominated_pod(PodInfo(fresh), nominating_info)
        if res is not None and fresh is not None:
            res.pod = fresh
            res.status = UNSCHEDULABLE if rejected else ERROR
            res.message = message
            res.nominated_node_name = fresh.nominated_node_name or None

    # ==========================================================================================
    # explain
    # ==========================================================================================
    def explain(self, pod: Any, profile: str | None = None):
        """Every plugin's verdict and score for ``pod`` on the current cluster (see fastsched.explain)."""
        from ..explanation import explain_with_framework

        p = pod if isinstance(pod, Pod) else Pod.from_manifest(pod)
        fw = self.profiles[profile or p.scheduler_name]
        return explain_with_framework(fw, self.snapshot, p)


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


def _gate_message(pod: Pod) -> str:
    """SchedulingGates' PreEnqueue message (the gated pod's status reason)."""
    gates = " ".join(pod.scheduling_gates)
    return f"waiting for scheduling gates: [{gates}]"
