"""One pod through the scheduling and binding cycles (upstream ``pkg/scheduler/schedule_one.go``).

As upstream's file, this one holds ScheduleOne (:meth:`ScheduleOneMixin.schedule_one`), the
scheduling cycle, the binding cycle (resumed from a :class:`PendingBinding` when the pod waited at
Permit) and both failure handlers (``handleBindingCycleError``, ``handleSchedulingFailure``); the
Scheduler (``scheduler.py``) keeps the loop, the cache, the queue and the event handlers.

Determinism: upstream filters nodes in parallel and stops once enough are feasible, so which nodes it
examined varies. fastsched evaluates the filters over the nodes in upstream's order from the
round-robin start index and keeps the first ``numFeasibleNodesToFind`` feasible ones — what upstream
does with parallelism 1. The verdicts come from the batch path, so "examined" is a cut of one
vectorized evaluation. Ties in the total score are broken by the scheduler's seeded RNG.
"""
from __future__ import annotations

import hashlib
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Mapping

import numpy as np

from ..api.objects import KubeObject, _field_copier
from ..clock import VirtualClock
from ..errors import FastschedError
from .._kernels import _bind, _score
from ..extender.extender import weighted_extender_score
from ..framework.cycle_state import CycleState
from ..framework.status import Code, Status, StatusError
from ..framework.interface import ActionType, ClusterEvent, EventResource
from ..framework.types import (Diagnosis, FitError, NodeToStatus, NominatingInfo, NominatingMode, PodInfo,
                               QueuedPodInfo)
from ..runtime.batch import ScoredNode, SortedScoredNodes, heap_after_pop
from ..runtime.compiled_cycle import seeded_tie
from ..runtime.filter_results import ArrayNodeToStatus, FilterResults
from ..plugins.dynamicresources import assumed_with_claim_statuses
from ..plugins.defaultbinder import DefaultBinder
from ..framework.events import EVENT_ASSIGNED_POD_ADD
from ..runtime.framework import Framework as _Framework, _idle
from ..runtime.metrics import _GIL, FOLD_EVERY, DurationSeries
from ..snapshot import Snapshot
from ..snapshot.lazy import _derived_key, pooled_ints
from ..snapshot.table import FLAG_AFFINITY, FLAG_HOST_PORTS, FLAG_REQUIRED_ANTI, FLAG_TERMINATING, NodeTable
from .backend.queue.active_queue import ActiveQueue, InFlightEvent
from .backend.queue.nominator import Nominator
from .backend.queue.scheduling_queue import PriorityQueue
from .cache import IN_CACHE, BulkPods, Cache, UidMap, _PodState
from .cluster import Cluster
from .result import ERROR, SCHEDULED, TERMINATING, UNSCHEDULABLE, WAITING

if TYPE_CHECKING:  # pragma: no cover
    from ..api import Pod
    from ..runtime import Framework

MIN_FEASIBLE_NODES_TO_FIND = 100
MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND = 5
#: CycleState key of the pods a plugin wants activated after this cycle (upstream PodsToActivateKey)
PODS_TO_ACTIVATE_KEY = "kubernetes.io/pods-to-activate"
EXTENDER_NAME = "Extender"
#: The smallest node window the filters are evaluated on at a time (see _filter_until_enough).
FILTER_WINDOW_MIN = 256
_NO_POSITIONS = np.zeros(0, dtype=np.int64)
_PENDING = int(Code.PENDING)
ERR_NO_NODES_AVAILABLE = "no nodes available to schedule pods"
#: what the other pods hear when a failed binding forgets an assumed pod (upstream's
#: handleBindingCycleError moves them with framework.EventAssignedPodDelete)
ASSIGNED_POD_DELETE = ClusterEvent(EventResource.ASSIGNED_POD, ActionType.DELETE, "AssignedPodDelete")
_TERMINATING_MESSAGE = "not scheduled: the pod is being deleted (metadata.deletionTimestamp is set)"
_perf_counter = time.perf_counter
#: the stock binder's client call (DefaultBinder -> Cluster.bind), inlined by the compiled binding path
_CLUSTER_BIND = Cluster.bind
#: dict membership and read without a subclass's frame (PodMap's answer for what its dict holds)
_dict_contains = dict.__contains__
_dict_get = dict.get


def bind_commit(changed: Any, *, inline_calls: bool = True) -> Any:
    """The compiled commit of a collapsed binding (docs/dev/compiled-binding-path.md, step 4): it
    inlines these classes' methods, so it is taken only for objects of exactly these classes (or
    whose type has these very functions). ``changed``: ``EventHandlersMixin._changed`` (the
    Scheduler builds it: eventhandlers imports this module). ``inline_calls=False``: the commit
    calls ``BulkPods.has``, ``DurationSeries.observe`` and ``KubeObject.key`` as Python (what the
    inlined forms must match; tests compare the two)."""
    inline = inline_calls
    return _bind.BindCommit(
        cache_cls=Cache, queue_cls=PriorityQueue, active_q_cls=ActiveQueue, snapshot_add_pod=Snapshot.add_pod,
        table_cls=NodeTable, pod_info_cls=PodInfo, pod_state_cls=_PodState,
        nominator_delete=Nominator.delete_nominated_pod_if_exists, run_idle_points=_Framework.run_idle_points,
        observe_point=_Framework._observe_point, store_bound=Cluster.store_bound, changed=changed,
        pooled_ints=pooled_ints, event=EVENT_ASSIGNED_POD_ADD, scheduled=SCHEDULED, in_cache=IN_CACHE,
        bulk_has=BulkPods.has if inline else None, uid_map_cls=UidMap, series_cls=DurationSeries,
        series_observe=DurationSeries.observe if inline and _GIL else None, fold_every=FOLD_EVERY,
        key_prop=KubeObject.key if inline else None,
        clock_cls=VirtualClock if inline else None, clock_now=VirtualClock.now,
        pod_info_init=PodInfo.__init__ if inline else None, pod_info_set=PodInfo._set,
        pod_state_init=_PodState.__init__ if inline else None,
        derived_key=_derived_key if inline else None, table_derive=NodeTable._derive,
        flag_terminating=FLAG_TERMINATING, flag_affinity=FLAG_AFFINITY, flag_required_anti=FLAG_REQUIRED_ANTI,
        flag_host_ports=FLAG_HOST_PORTS)


class PodsToActivate:
    """CycleState value: pods (by ``namespace/name``) to move to activeQ after the cycle."""

    def __init__(self) -> None:
        self.map: dict[str, Any] = {}

    def clone(self) -> "PodsToActivate":
        return self


class NoNodesAvailableError(FastschedError):
    def __str__(self) -> str:
        return ERR_NO_NODES_AVAILABLE


def _pod_scheduled_false(conditions: tuple, reason: str, message: str) -> tuple | None:
    """``podutil.UpdatePodCondition`` with handleSchedulingFailure's PodScheduled=False condition:
    the pod's conditions with it set, or None when an equal one (status, reason, message) is there
    already (then upstream sends no patch, so no update event)."""
    for index, condition in enumerate(conditions):
        if condition.get("type") == "PodScheduled":
            if (condition.get("status"), condition.get("reason", ""), condition.get("message", "")) == \
                    ("False", reason, message):
                return None
            new = {"type": "PodScheduled", "status": "False", "reason": reason, "message": message}
            return conditions[:index] + (new,) + conditions[index + 1:]
    return tuple(conditions) + ({"type": "PodScheduled", "status": "False", "reason": reason, "message": message},)


def num_feasible_nodes_to_find(percentage: int | None, num_all_nodes: int) -> int:
    """Upstream ``numFeasibleNodesToFind`` (adaptive when the percentage is 0)."""
    if num_all_nodes < MIN_FEASIBLE_NODES_TO_FIND:
        return num_all_nodes
    p = percentage or 0
    if p == 0:
        p = 50 - num_all_nodes // 125
        if p < MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND:
            p = MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND
    k = num_all_nodes * p // 100
    return max(k, MIN_FEASIBLE_NODES_TO_FIND)


@dataclass
class PendingBinding:
    """A pod whose binding cycle waits for its Permit verdict (allowed, rejected, timed out):
    what that cycle resumes with (upstream keeps it on the goroutine blocked in WaitOnPermit)."""

    fw: "Framework"
    state: CycleState
    qpi: QueuedPodInfo
    assumed: "Pod"
    host: str
    #: perf_counter() at the start of the attempt (the attempt latency metric)
    started: float


@dataclass
class ScheduleResult:
    suggested_host: str = ""
    evaluated_nodes: int = 0
    feasible_nodes: int = 0
    nominating_info: NominatingInfo | None = None


class ScheduleOneMixin:
    """ScheduleOne and its cycles, as methods of :class:`~fastsched.scheduler.Scheduler`: they read
    and write the scheduler's cache, queue, results and metrics, as upstream's methods on sched."""

    # -- attributes provided by Scheduler ------------------------------------------------------
    snapshot: Any
    cache: Any
    cluster: Any
    queue: Any
    extenders: list
    config: Any
    next_start_node_index: int
    rng: Any
    #: DRANodeAllocatableResources: the assumed copy carries the claim statuses (Scheduler)
    _node_allocatable_resources: bool
    #: run the fused compiled cycle where the profile and pod allow it (tests switch it off to
    #: compare with the plugin-call path)
    use_compiled_cycle: bool = True
    #: with ``use_compiled_cycle``, diagnose a pod that fits nowhere from the compiled plan's arrays
    #: (``CompiledCycle.diagnose``) instead of each Filter plugin's windows, recorded attempts too
    #: (tests switch it off to compare with the plugin-call path: docs/dev/failing-cycle.md)
    use_compiled_diagnosis: bool = True
    #: take the idle binding path (``_idle_binding_cycle``) for pods whose Reserve, Permit and
    #: PreBind plugins have nothing to do (tests switch it off to compare with the generic path)
    use_idle_binding: bool = True
    #: take the compiled binding path (``_collapsed_binding_cycle``: no assume and confirm, one
    #: bound insert) for the idle binding path's pods when ``_collapsed_idle`` allows it (tests
    #: switch it off to compare with the idle and generic paths: tests/scheduler/test_compiled_binding.py)
    use_compiled_binding: bool = True
    #: commit such a pod's binding in one compiled call (``_kernels/_bind.pyx``; tests switch it
    #: off to compare with ``_collapsed_binding_cycle``'s Python steps)
    use_bind_commit: bool = True
    #: with ``use_bind_commit``, make that call from the placement (``CompiledCycle.schedule``'s
    #: ``commit``: :meth:`_commit_placed`, step 5) when the path's conditions hold before it
    #: (tests switch it off to compare with the commit from ``_collapsed_binding_cycle``)
    use_placed_commit: bool = True
    #: bind the pods released at Permit (a gang's members) in one compiled call per
    #: :meth:`_finish_permitted_bindings` (``BindCommit.commit_run``; tests switch it off to
    #: compare with the per-pod ``_run_binding_cycle``: tests/scheduler/test_podgroup_bind_run.py)
    use_gang_bind_run: bool = True
    #: the compiled commit (:func:`bind_commit`, built by the Scheduler class)
    _bind_commit: Any
    #: NominatedNodeNameForExpectation: the binding cycle runs the PreBind pre-flights first
    _pre_flights: bool = True
    #: ClearingNominatedNodeNameAfterBinding: a bound pod's status.nominatedNodeName is cleared
    _clear_nomination_on_bind: bool = True
    #: the decision record (records.AttemptRecord) of the attempt in progress when the Scheduler
    #: records it (``Scheduler(record=...)``), else None: every recording step below tests it
    _recording: Any = None
    #: the decision records of attempts in progress, by pod uid (Scheduler)
    _open_records: dict
    profiles: dict
    results: dict
    clock: Any
    metrics: Any
    record_mode: Any
    bound_callbacks: list
    #: uid -> PendingBinding of the pods waiting at Permit
    _waiting: dict
    _cycles: int
    _seq_seen: dict
    _attempt_uid: str | None
    _binding_failed_from: tuple[str, int] | None
    _change_seq: int
    _failures: dict
    _failed_at: dict
    _rejected_at_permit_wait: set

    if TYPE_CHECKING:  # methods provided by Scheduler (and EventHandlersMixin)
        def activate(self, pods: Mapping[str, "Pod"]) -> None: ...
        def _begin_record(self, fw: Any, qpi: QueuedPodInfo) -> None: ...
        def _finish_record(self, fw: Any, uid: str, outcome: str, message: str) -> None: ...
        def _settle(self, qpi: QueuedPodInfo, rejected: bool) -> None: ...
        def _cluster_seen(self) -> tuple[int, int]: ...
        def _changed(self) -> None: ...

    # ==========================================================================================
    # ScheduleOne: one pod, both cycles, both failure handlers
    # ==========================================================================================
    def schedule_one(self, qpi: QueuedPodInfo) -> None:
        """One scheduling attempt for a popped pod (upstream ``ScheduleOne``)."""
        started = _perf_counter()
        qpod = qpi.pod_info.pod
        uid = qpod.uid
        pods = self.cluster.pods
        pod = _dict_get(pods, uid)  # (PodMap.get's first step, without its frame)
        if pod is None:
            pod = pods.get(uid)
        res = self.results.get(uid)
        fw = self.profiles.get(qpod.scheduler_name)
        if fw is None or pod is None or pod.node_name or self.cache.is_assumed_pod(qpod):
            self.queue.done(uid)
            return
        if pod.deletion_timestamp is not None:  # upstream skipPodSchedule: being deleted
            self.queue.done(uid)
            if res is not None:
                res.status, res.message = TERMINATING, _TERMINATING_MESSAGE
            return
        self._cycles += 1
        self._seq_seen[uid] = self._cluster_seen()
        self._attempt_uid = uid
        if res is not None:
            res.attempts = qpi.attempts
        state = CycleState()
        # (CycleState.set_record_plugin_metrics and write, without their two frames per attempt:
        # the PodsToActivate write on CycleState.storage)
        state.record_plugin_metrics = self._cycles % 10 == 0  # upstream samples 10% of cycles
        state.storage[PODS_TO_ACTIVATE_KEY] = PodsToActivate()
        if self.record_mode is not None:
            self._begin_record(fw, qpi)
        result, assumed, status, err = self._scheduling_cycle(fw, state, qpi, (started, res))
        if status is not None:
            self._handle_failure(fw, qpi, status, err, result.nominating_info, started)
            return
        assert assumed is not None  # every outcome but a failure (returned above) has its pod
        if err is _COMMITTED:  # bound from the placement (_commit_placed): what follows the commit
            if qpi.was_flushed_from_unschedulable:  # (_count_bound_after_flush)
                self.metrics.pod_scheduled_after_flush += 1
            self._after_commit(fw, state, assumed, None, res)
            return
        host = result.suggested_host
        if err is not None:  # the scheduling cycle found the binding idle: err is the IdleBinding
            if type(err) is _Collapsed:  # ... and did not assume the pod
                self._collapsed_binding_cycle(fw, state, qpi, assumed, host, started, err.idle, res)
            else:
                self._idle_binding_cycle(fw, state, qpi, assumed, host, started, err, res)
            return
        # upstream's bindingCycle starts with the PreBind pre-flights, before WaitOnPermit: a pod
        # that waits at Permit is nominated to its node while it waits
        waits = fw.will_wait_on_permit(assumed)
        pre_flight = self._pre_bind_pre_flight(fw, state, assumed, host, waits) if self._pre_flights else None
        if pre_flight is not None and (pre_flight.code() == Code.ERROR or pre_flight.is_rejected()):
            if waits:  # its binding cycle ends here: nothing will wait on its Permit verdict
                fw.waiting_pods.remove(uid)
            self._handle_binding_cycle_error(fw, state, qpi, assumed, host, pre_flight, None, started)
            return
        if waits:
            self._waiting[uid] = PendingBinding(fw, state, qpi, assumed, host, started)
            if self._recording is not None:  # the binding cycle resumes it once Permit is decided
                self._recording = fw.decision_sink = None
            if res is not None:
                res.status, res.node_name = WAITING, host
                res.message = f"waiting at Permit on node {host}"
                if self._pre_flights:  # nominated to its node while it waits (_pre_bind_pre_flight)
                    res.nominated_node_name = host
            return
        self._run_binding_cycle(fw, state, qpi, assumed, host, started)

    def _pre_bind_pre_flight(self, fw, state, assumed, host, waits: bool) -> Status | None:
        """The start of upstream's bindingCycle with NominatedNodeNameForExpectation (beta, on):
        ``RunPreBindPreFlights`` (its Skip set read by RunPreBindPlugins), and when a PreBind
        plugin will work or the pod waits at Permit, the pod nominated to ``host`` through the API
        (``updatePod`` with ModeOverride), so that other components see where it is going. An
        Error or a rejection is returned: the binding cycle fails with it."""
        st = fw.run_pre_bind_pre_flights(state, assumed, host)
        if st is not None and (st.code() == Code.ERROR or st.is_rejected()):
            return st
        if st is None or st.is_success() or waits:
            current = self.cluster.pods.get(assumed.uid)
            if current is not None and current.nominated_node_name != host:
                # a field copy of the API's pod with nominatedNodeName set: Pod.replace re-runs the
                # constructor (several times the cost, for every member of a gang held at Permit);
                # only ``admitted`` differs from the replace's copy, and a status patch keeps it
                cls: Any = type(current)
                patched = _field_copier(cls)(current)
                patched.nominated_node_name = host
                self.cluster.set_pod_status(patched)
        return st

    def _finish_permitted_bindings(self) -> None:
        if not self._waiting:
            return
        if self.use_gang_bind_run and self._gang_bind_run_ok():
            # the same loop in one compiled call (the released members of a gang: thousands)
            self._bind_commit.commit_run(self, list(self._waiting), _GANG_BIND_RUN_CTX)
            return
        for uid in list(self._waiting):
            pending = self._waiting[uid]
            wp = pending.fw.get_waiting_pod(uid)
            if wp is not None and not wp.signalled:
                continue
            del self._waiting[uid]
            self._run_binding_cycle(pending.fw, pending.state, pending.qpi, pending.assumed, pending.host,
                                    pending.started)

    def _gang_bind_run_ok(self) -> bool:
        """Whether ``BindCommit.commit_run`` may bind the pods released at Permit: no decision
        record (the Python path writes its steps), no extender (a binder extender binds instead of
        the plugins), and none of the methods it inlines replaced on this scheduler or its cache,
        queue or cluster (tests and subclasses do; the commit checks the objects' classes and each
        framework's own methods per pod)."""
        if self._recording is not None or self._open_records or self.extenders:
            return False
        cls = type(self)
        if any(getattr(cls, name) is not _MIXIN_METHODS[name] for name in _MIXIN_METHODS) \
                or not _GANG_BIND_RUN_UNPATCHED.isdisjoint(self.__dict__):
            return False
        return _CACHE_UNPATCHED.isdisjoint(self.cache.__dict__) and \
            _QUEUE_UNPATCHED.isdisjoint(getattr(self.queue, "__dict__", ())) and \
            _QUEUE_UNPATCHED.isdisjoint(getattr(self.queue._active_q, "__dict__", ()))

    def _run_binding_cycle(self, fw, state, qpi, assumed, host, started) -> None:
        if self._open_records:
            self._recording = fw.decision_sink = self._open_records.get(assumed.uid)
        seq = self._change_seq
        status, err = self._binding_cycle(fw, state, qpi, assumed, host)
        if status is not None:
            self._binding_failed_from = (assumed.uid, seq)  # (its writes are its own: Scheduler._settle)
            self._handle_binding_cycle_error(fw, state, qpi, assumed, host, status, err, started)
            return
        self._count_bound_after_flush(qpi)
        self._pod_bound(fw, state, assumed, host, started, self.results.get(assumed.uid))

    def _count_bound_after_flush(self, qpi) -> None:
        """Upstream bindingCycle's ``PodScheduledAfterFlush``: the pod bound came back from the
        unschedulable pool through the timeout's flush (its rejectors' hints never requeued it)."""
        if qpi.was_flushed_from_unschedulable:
            self.metrics.pod_scheduled_after_flush += 1

    def _idle_binding_cycle(self, fw, state, qpi, assumed, host, started, idle, res) -> None:
        """The binding cycle of a pod whose Reserve, Permit and PreBind plugins have nothing to do
        (``idle``: :meth:`Framework.idle_binding`'s answer; no extender, no decision record; what
        the pre-flights and PreBind leave was left with Reserve's, ``Framework.run_idle_points``):
        what :meth:`_pre_bind_pre_flight` (every pre-flight Skip: no nomination),
        :meth:`_binding_cycle` (nothing waits at Permit) and :meth:`_run_binding_cycle` do, without
        the calls that would find nothing to do, and on success :meth:`_pod_bound`'s bookkeeping
        (every pod the compiled cycle places comes here).
        ``tests/scheduler/test_idle_binding.py`` compares the two paths."""
        self.queue.done(assumed.uid)
        try:
            st = fw.run_bind_plugins(state, assumed, host)
            if st is not None and st.is_skip():
                st = Status(Code.ERROR, f"no Bind plugin bound pod {assumed.key}: every Bind plugin returned Skip")
        finally:
            self.cache.finish_binding(assumed)
        if st is not None and not st.is_success():
            self._handle_binding_cycle_error(fw, state, qpi, assumed, host, st, None, started)
            return
        self._count_bound_after_flush(qpi)
        self._pod_bound(fw, state, assumed, host, started, res)

    def _collapsed_binding_cycle(self, fw, state, qpi, assumed, host, started, idle, res) -> None:
        """:meth:`_idle_binding_cycle` for a pod the scheduling cycle did not assume
        (:meth:`_collapsed_idle`): fastsched binds inline, so upstream's assume, then the informer's
        confirm, come to one insert of the bound pod (``Cache.add_pod`` in :meth:`_pod_bound`) when
        nothing between them reads the cache or the node table: the nominator, the idle points'
        metrics, ``queue.done`` and the stock binder (``Cluster.bind`` reads ``cluster.pods``) do
        not, and no table record is allocated between, so the insert allocates the record the
        assume would have. A failed Bind fails as on the idle path: the pod is assumed first (what
        it undoes), then ``handleBindingCycleError``. docs/dev/compiled-binding-path.md, step 2.

        The stock binder is inlined when its client is the Scheduler's own Cluster (step 3):
        ``Cluster.bind``'s check, then what ``Framework.run_bind_plugins`` leaves for its Success
        (the Bind point's observation; on sampled cycles DefaultBinder's plugin series); when the
        check fails (or the client is another object) the runner is called, for its error.

        It starts with what the scheduling cycle's end leaves on the idle path after the assume
        (nothing runs between): the pod's nomination deleted, the idle Reserve, Permit and PreBind
        points' metrics.

        With ``use_bind_commit`` the success goes through one compiled call
        (``_kernels/_bind.pyx`` ``BindCommit.commit``, step 4): the nomination, the idle points,
        ``queue.done``, the Bind observations and :meth:`_pod_bound` up to PostBind, as below; it
        refuses (writing nothing) for objects whose classes it does not inline, and this code runs."""
        cluster = self.cluster
        binder = fw.bind_plugins[0]  # (_collapsed_idle: DefaultBinder alone)
        stock = assumed.uid in cluster.pods and type(cluster).bind is _CLUSTER_BIND \
            and "bind" not in cluster.__dict__ and getattr(binder._handle, "client", None) is cluster
        if stock and self.use_bind_commit and self._bind_commit.commit(
                self, fw, state, assumed, host, started, res, binder, idle):
            self._count_bound_after_flush(qpi)
            self._after_commit(fw, state, assumed, host, res)
            return
        self.queue.nominator.delete_nominated_pod_if_exists(assumed)
        fw.run_idle_points(state, idle, self._pre_flights)
        self.queue.done(assumed.uid)
        if stock:
            start = _perf_counter()
            if state.record_plugin_metrics:
                fw.metrics.observe_plugin("Bind", binder.name(), "Success", _perf_counter() - start)
            fw._observe_point("Bind", None, _perf_counter() - start)
            self._count_bound_after_flush(qpi)
            self._pod_bound(fw, state, assumed, host, started, res)
            return
        st = fw.run_bind_plugins(state, assumed, host)
        if st is not None and not st.is_success():
            if st.is_skip():
                st = Status(Code.ERROR, f"no Bind plugin bound pod {assumed.key}: every Bind plugin returned Skip")
            self.cache.assume_pod(assumed)
            self.cache.finish_binding(assumed)
            self._handle_binding_cycle_error(fw, state, qpi, assumed, host, st, None, started)
            return
        self._count_bound_after_flush(qpi)
        self._pod_bound(fw, state, assumed, host, started, res)

    def _after_commit(self, fw, state, assumed, host, res) -> None:
        """The end of :meth:`_pod_bound` (which calls it), and what follows ``BindCommit.commit``:
        the record, PostBind, the bound callbacks, the pods to activate. ``host`` None: the pod's
        node."""
        if host is None:
            host = assumed.node_name
        if self._open_records:
            self._finish_record(fw, assumed.uid, SCHEDULED, res.message if res is not None else "")
        if fw.post_bind_plugins:  # (none in most profiles: no call)
            fw.run_post_bind_plugins(state, assumed, host)
        if res is not None:
            for cb in self.bound_callbacks:
                cb(res)
        pta = state.storage.get(PODS_TO_ACTIVATE_KEY)
        if pta is not None and pta.map:
            self.activate(dict(pta.map))

    def _commit_placed(self, ctx: tuple, placed: tuple, idle: Any) -> Any:
        """``CompiledCycle.schedule``'s ``commit`` (docs/dev/compiled-binding-path.md, step 5): the
        pod just placed by the kernel with an idle binding (``idle``: its IdleBinding, the plan's or
        ``Framework.idle_binding_at``'s for the chosen node, which has then left in the state what
        the judging plugins' Reserve would, for their Unreserve on a later failure) bound in the
        same call, when ``_schedule_pod`` found the compiled binding path's scheduler-wide and
        per-pod conditions true before the placement (``ctx``: the framework, the state, the pod,
        the attempt's start and result, the node count, the batching cycle). Here what
        :meth:`_collapsed_idle` and ``_collapsed_binding_cycle`` check after it: no pods to
        activate, the stock binder's check (the pod still in ``cluster.pods``); then the assumed
        copy as ``_scheduling_cycle`` makes it, and the commit, which first makes the rest of
        ``_schedule_pod`` (the next start index, batching's store). Returns the bound pod, or None
        when nothing was written (the caller then goes on as without it: the copy is dropped)."""
        fw, state, pod, started, res, num_nodes, bc = ctx
        pta = state.storage.get(PODS_TO_ACTIVATE_KEY)
        if pta is not None and pta.map:
            return None
        pods = self.cluster.pods
        uid = pod.uid
        # (PodMap.__contains__ answers True for a uid in its dict without its frame: the pod is
        # nearly always there, set one at a time by add_pods)
        if not (_dict_contains(pods, uid) or uid in pods):
            return None
        host, examined, found = placed
        assumed = pod.with_node_name(host)
        if self._node_allocatable_resources:
            assumed = assumed_with_claim_statuses(assumed, state, host)
        if self._bind_commit.commit(self, fw, state, assumed, host, started, res, fw.bind_plugins[0], idle,
                                    (self.next_start_node_index + examined) % num_nodes, bc, found):
            return assumed
        return None

    def _placed_commit_ok(self, fw, pod) -> bool:
        """Whether the compiled binding path's conditions known before the placement hold for
        ``pod`` (:meth:`_collapsed_idle`'s, without the ones the placement decides: the plan's
        idleness, the pods to activate, the cache's refusals, which the commit makes): the
        scheduler's switches, no record, no extender, no decision sink, the stock binder alone
        with the Scheduler's Cluster as its client (``Cluster.bind`` not overridden), no parked
        rows, no GenericWorkload member. The caller checks that no TAS placement is assumed."""
        if not (self.use_placed_commit and self.use_bind_commit and self.use_compiled_binding
                and self.use_idle_binding and self._recording is None and not self._open_records
                and not self.extenders and fw.decision_sink is None):
            return False
        binders = fw.bind_plugins
        if len(binders) != 1 or type(binders[0]) is not DefaultBinder:
            return False
        cluster, cache = self.cluster, self.cache
        return (type(cluster).bind is _CLUSTER_BIND and getattr(binders[0]._handle, "client", None) is cluster
                and "bind" not in cluster.__dict__ and not cache._parked
                and not (cache.generic_workload and pod.scheduling_group is not None))

    def _collapsed_idle(self, fw, state, assumed) -> Any:
        """The IdleBinding of a placed pod the compiled binding path serves (the scheduling cycle
        then does not assume it: :meth:`_collapsed_binding_cycle`), else None: the idle binding
        path's conditions; the stock binder alone at Bind (a custom Bind plugin may read the cache
        or the table, which would not hold the pod yet); no parked rows (an assume would drop them
        first), no GenericWorkload member (its assume and confirm keep the pod group states), no
        TopologyAwareWorkloadScheduling placement; no pods to activate (activating between assume
        and Bind reads the queue, not the cache, but none is ever written here: checked anyway);
        and the pod not in the cache (``assume_pod``'s refusal, which today's path then reports)."""
        if not (self.use_compiled_binding and self.use_idle_binding and self._recording is None
                and not self._open_records and not self.extenders and fw.decision_sink is None):
            return None
        binders = fw.bind_plugins
        if len(binders) != 1 or type(binders[0]) is not DefaultBinder:
            return None
        # (Reserve's place: a plugin that judges its own idleness, VolumeBinding with every claim
        # bound, leaves what its Reserve would in the state, see Framework.idle_binding_at)
        idle = fw.idle_binding_at(state, assumed, assumed.node_name)
        if idle is None:
            return None
        cache = self.cache
        if cache._parked or (cache.generic_workload and assumed.scheduling_group is not None) \
                or cache.snapshot.get_placement() is not None:
            return None
        pta = state.get(PODS_TO_ACTIVATE_KEY)
        if pta is not None and pta.map:
            return None
        uid = assumed.uid
        if uid in cache._pods or (cache.bulk.n_live and cache.bulk.has(uid, IN_CACHE) >= 0):
            return None
        return idle

    def _pod_bound(self, fw, state, assumed, host, started, res) -> None:
        """The bookkeeping once Bind succeeded, for both binding paths: the informer sees the
        bound pod (confirmed in the cache, the queue told), its result, metrics and record, the
        PostBind plugins, the callbacks and the pods to activate. The kubelet would set
        status.startTime when the pod starts; a simulation starts it at bind time. Its first half
        (to the attempt metrics) is also compiled, for the compiled binding path's pods:
        ``_kernels/_bind.pyx`` ``BindCommit.commit``; a change here is a change there
        (tests/scheduler/test_compiled_binding.py compares the two)."""
        now = self.clock.now()  # nothing between here and the end advances the clock
        if assumed.start_time is None:
            # the assumed pod is the scheduler's own copy (made at assume time): set it in place
            assumed.start_time = now
        uid = assumed.uid
        if assumed.nominated_node_name and self._clear_nomination_on_bind:
            # ClearingNominatedNodeNameAfterBinding (beta, on): the API server's binding clears it
            assumed.nominated_node_name = ""
        self.cluster.store_bound(assumed)
        self.cache.add_pod(assumed)
        self._changed()
        if self._failures:  # a pod that failed before: its failures no longer matter
            self._failures.pop(uid, None)
            self._failed_at.pop(uid, None)
        self.queue.assigned_pod_added(assumed)
        if res is not None:
            res.pod, res.node_name, res.status = assumed, host, SCHEDULED
            res.message = f"Successfully assigned {assumed.key} to {host}"
            res.bound_at = now
            res.nominated_node_name = None
        metrics = self.metrics
        metrics.attempts["scheduled"] += 1
        metrics.attempt_latencies.append(_perf_counter() - started)
        self._after_commit(fw, state, assumed, host, res)

    def _handle_binding_cycle_error(self, fw, state, qpi, assumed, host, status, err, started) -> None:
        """Upstream ``handleBindingCycleError``: Unreserve, forget the assumed pod (for the other
        pods a deletion of an assigned pod), then the failure handler. When the pod was rejected
        (at Permit) the requeue of the others comes after its own failure handling and skips it:
        it must land in unschedulablePods, not be moved to backoffQ by its own release."""
        from ..framework.types import NominatingInfo

        fw.run_reserve_plugins_unreserve(state, assumed, host)
        released = False
        try:
            self.cache.forget_pod(assumed)
            released = True
        except Exception:  # noqa: BLE001 - upstream logs a failed forget and goes on
            pass
        if released:
            # no committed change (the assume it undoes was none either): the other pods see the
            # assumed fingerprint go back, and the queue hears an AssignedPodDelete as upstream's
            if not status.is_rejected():
                self.queue.move_all_to_active_or_backoff_queue(ASSIGNED_POD_DELETE, assumed, None)
        self._handle_failure(fw, qpi, status, err, NominatingInfo("", NominatingMode.OVERRIDE), started)
        if released and status.is_rejected():
            self.queue.move_all_to_active_or_backoff_queue(ASSIGNED_POD_DELETE, assumed, None,
                                                           pre_check=lambda pod: pod.uid != assumed.uid)

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
        self._settle(qpi, rejected)
        self.metrics.attempts["unschedulable" if rejected else "error"] += 1
        self.metrics.attempt_latencies.append(_perf_counter() - started)
        fresh = self.cluster.pods.get(qpi.pod.uid)
        if fresh is None or fresh.node_name:
            self.queue.done(qpi.pod.uid)
            # AddNominatedPod's pod lister refuses a pod gone or bound: only its nomination goes
            self.queue.nominator.delete_nominated_pod_if_exists(qpi.pod)
        else:
            # (PodInfo.update only sets the pod and what follows from it: the same pod, nothing to do)
            if qpi.pod_info.pod is not fresh:
                qpi.pod_info.update(fresh)
            self.queue.add_unschedulable_if_not_present(qpi, self.queue.scheduling_cycle())
            # Upstream's AddNominatedPod(podInfo.PodInfo, nominatingInfo), whatever the info: a nil
            # one is mode Noop, the fresh pod's own status.nominatedNodeName. The nominator may hold
            # this very PodInfo (the queue shares it), just changed in place above: re-filing it
            # moves the nominator's version and drops a nomination the pod no longer carries (one
            # withdrawn through the API while the pod was in flight would otherwise stay, and
            # keep its node's room from every pod of lower or equal priority).
            self.queue.nominator.add_nominated_pod(qpi.pod_info, nominating_info)
        res = self.results.get(qpi.pod.uid)
        if fresh is not None:
            # updatePod: one status patch with the nominated node (when overridden and different)
            # and the PodScheduled=False condition (when it changed: podutil.UpdatePodCondition
            # compares status, reason and message). Heard back as an update of the queued pod
            # (on_pod_status_update -> PriorityQueue.update), whose hints may requeue it (upstream:
            # a TargetPod/Update event; a plugin without EnqueueExtensions takes every event).
            # An assigned pod's patch (an extender's timed-out binding) is left out.
            changes: dict[str, Any] = {}  # (one replace: a Pod copy costs about 2 us per field)
            if nominating_info is not None and nominating_info.nominating_mode == NominatingMode.OVERRIDE:
                nnn = nominating_info.nominated_node_name
                if fresh.nominated_node_name != nnn:
                    changes["nominated_node_name"] = nnn
            if not fresh.node_name:
                conditions = _pod_scheduled_false(fresh.conditions, "Unschedulable" if rejected else "SchedulerError",
                                                  message)
                if conditions is not None:
                    changes["conditions"] = conditions
            if changes:
                fresh = fresh.with_status(**changes)
                # heard back as an update: the queue's update_nominated_pod re-files the nomination
                self.cluster.set_pod_status(fresh)
                # the echo (PriorityQueue.update) updated the PodInfo already unless the pod is in
                # flight or in no sub-queue (then the events are only recorded): done here once
                if qpi.pod_info.pod is not fresh:
                    qpi.pod_info.update(fresh)
        if res is not None and fresh is not None:
            res.pod = fresh
            res.status = UNSCHEDULABLE if rejected else ERROR
            res.message = message
            res.nominated_node_name = fresh.nominated_node_name or None
        if self._open_records:
            self._finish_record(fw, qpi.pod.uid, UNSCHEDULABLE if rejected else ERROR, message)

    # ==========================================================================================
    # scheduling cycle
    # ==========================================================================================
    def _scheduling_cycle(self, fw: "Framework", state: CycleState, qpi: QueuedPodInfo, attempt: Any = None
                          ) -> tuple[Any, "Pod | None", Status | None, Any]:
        """Returns (result, assumed pod, failure status, failure error (FitError or other)); for a
        pod bound from its placement (``attempt``: (start, result) of schedule_one's attempt, see
        :meth:`_commit_placed`) (None, the bound pod, None, ``_COMMITTED``)."""
        pod = qpi.pod
        st: Status | None
        try:
            result = self._schedule_pod(fw, state, pod, qpi.pod_signature, attempt)
        except NoNodesAvailableError as e:
            st = Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, str(e))
            return ScheduleResult(nominating_info=_clear_nomination()), None, st, e
        except FitError as fe:
            if not fw.has_post_filter_plugins():
                st = Status(Code.UNSCHEDULABLE).with_error(fe)
                return ScheduleResult(nominating_info=_clear_nomination()), None, st, fe
            pf_result, pf_status = fw.run_post_filter_plugins(state, pod, fe.diagnosis.node_to_status)
            msg = pf_status.message() if pf_status is not None else ""
            fe.diagnosis.post_filter_msg = msg
            nominating = pf_result.nominating_info if pf_result is not None else None
            if self._recording is not None and nominating is not None:
                self._recording.nominated_node_name = nominating.nominated_node_name
            st = Status(Code.UNSCHEDULABLE).with_error(fe)
            return ScheduleResult(nominating_info=nominating), None, st, fe
        except _CycleError as e:
            st = e.status
            return ScheduleResult(nominating_info=_clear_nomination()), None, st, e
        if type(result) is not ScheduleResult:  # bound from the placement: the bound pod
            return None, result, None, _COMMITTED

        host = result.suggested_host
        if self._recording is not None:
            self._recording.selected_node = host
        assumed = pod.with_node_name(host)
        if self._node_allocatable_resources:
            assumed = assumed_with_claim_statuses(assumed, state, host)
        idle = self._collapsed_idle(fw, state, assumed) if self.use_compiled_binding else None
        if idle is not None:  # the compiled binding path: no assume (see _collapsed_binding_cycle,
            # which deletes the pod's nomination and leaves the idle points' metrics first)
            return result, assumed, None, _Collapsed(idle)
        try:
            self.cache.assume_pod(assumed)
        except Exception as e:  # noqa: BLE001
            return result, None, Status.from_error(StatusError(str(e))), e
        self.queue.nominator.delete_nominated_pod_if_exists(pod)

        if (self.use_idle_binding and self._recording is None and not self._open_records and not self.extenders
                and fw.decision_sink is None):
            idle = fw.idle_binding_at(state, assumed, host)
            if idle is not None:
                # Reserve and Permit call no plugin and end in Success (Framework.idle_binding_at)
                fw.run_idle_points(state, idle, self._pre_flights)
                pta = state.get(PODS_TO_ACTIVATE_KEY)
                if pta is not None and pta.map:
                    self.activate(dict(pta.map))
                    pta.map.clear()
                return result, assumed, None, idle

        st = fw.run_reserve_plugins_reserve(state, assumed, host)
        if st is not None and not st.is_success():
            return self._undo_cycle(fw, state, assumed, host, st, result)

        st = fw.run_permit_plugins(state, assumed, host)
        if st is not None and not st.is_success() and not st.is_wait():
            return self._undo_cycle(fw, state, assumed, host, st, result)

        pta = state.get(PODS_TO_ACTIVATE_KEY)
        if pta is not None and pta.map:
            self.activate(dict(pta.map))
            pta.map.clear()
        return result, assumed, None, None

    def _undo_cycle(self, fw, state, assumed, host, st, result):
        fw.run_reserve_plugins_unreserve(state, assumed, host)
        try:
            self.cache.forget_pod(assumed)
        except Exception:  # noqa: BLE001 - upstream logs and carries on
            pass
        if st.is_rejected():
            d = Diagnosis(node_to_status=NodeToStatus({host: st}), unschedulable_plugins={st.plugin()} - {""})
            fe = FitError(assumed, 1, d)
            return result, None, Status(st.code()).with_error(fe), fe
        return result, None, st, StatusError(st.message())

    def _schedule_pod(self, fw: "Framework", state: CycleState, pod: "Pod", signature: Any = None,
                      attempt: Any = None) -> Any:
        """Upstream ``schedulePod``; ``signature`` is the queued pod's (opportunistic batching).
        With ``attempt`` (schedule_one's (start, result)) a pod the compiled binding path serves
        may be bound from its placement: the bound pod is returned then (:meth:`_commit_placed`)."""
        snapshot = self.cache.update_snapshot()
        # NumNodesInPlacement: a TAS pod group cycle may limit the candidates to a placement
        if type(snapshot) is Snapshot and type(snapshot.table) is NodeTable:
            # (get_placement and len(), Snapshot's and NodeTable's, without their three frames: the
            # exact types, so that no override of either is skipped)
            placed_in = snapshot.assumed_placement
            num_nodes = len(snapshot.table.row_of) if placed_in is None else snapshot.num_nodes_in_placement()
        else:
            placed_in = snapshot.get_placement()
            num_nodes = len(snapshot) if placed_in is None else snapshot.num_nodes_in_placement()
        if num_nodes == 0:
            raise NoNodesAvailableError()
        engine = fw.compiled_cycle
        rec = self._recording
        if rec is not None:
            rec.nodes_total = num_nodes
        # OpportunisticBatching: the profile's batch state and this cycle's number (the queue's)
        bc = None if fw.batch is None else _BatchCycle(fw.batch, signature, self.queue.scheduling_cycle(), rec)
        nnn = pod.nominated_node_name
        if (nnn and engine is not None and engine.enabled and self.use_compiled_cycle and not self.extenders
                and rec is None and bc is None and placed_in is None):
            # A pod nominated by an earlier preemption (upstream findNodesThatFitPod, after
            # PreFilter): its nominated node alone first (evaluateNominatedNode), on the kernel.
            # Passing, it is the one feasible node: EvaluatedNodes 1 + no status, no scoring, the
            # next start index unmoved (upstream moves it only after the full search). Else the
            # plugin-call path below judges it again, then searches every node.
            row = snapshot.table.row_of.get(nnn)
            if row is not None:
                host = engine.evaluate_row(state, pod, snapshot, row, self.rng)
                if host is not None:
                    return ScheduleResult(host, 1, 1)
        # a recorded attempt takes the plugin calls: the fused cycle has no per-plugin verdicts; a
        # pod that may get a batching hint, or whose scores the batch keeps, takes them too
        if (engine is not None and engine.enabled and self.use_compiled_cycle and not self.extenders
                and rec is None and (bc is None or bc.compiled_cycle_can_run())
                and not nnn):
            pct = fw.percentage_of_nodes_to_score()
            if pct is None:
                pct = self.config.percentage_of_nodes_to_score
            k = num_feasible_nodes_to_find(pct, num_nodes)
            if attempt is not None and placed_in is None and self._placed_commit_ok(fw, pod):
                placed = engine.schedule(state, pod, snapshot, self.next_start_node_index, k, self.rng,
                                         lambda n: num_feasible_nodes_to_find(pct, n), None, self._commit_placed,
                                         (fw, state, pod, attempt[0], attempt[1], num_nodes, bc))
                if type(placed) is not tuple and placed is not None:
                    return placed  # bound (the next start index and batching's store done)
            else:
                placed = engine.schedule(state, pod, snapshot, self.next_start_node_index, k, self.rng,
                                         lambda n: num_feasible_nodes_to_find(pct, n),
                                         None if placed_in is None else snapshot.placement_batch().rows)
            if placed is not None:
                host, examined, found = placed
                self.next_start_node_index = (self.next_start_node_index + examined) % num_nodes
                if bc is not None:
                    bc.store_unsigned(host, found)
                return ScheduleResult(host, examined, found)
        # the node table is live, not a copy: a plugin or extender that deletes a node during the
        # cycle frees its row, and one that adds a node may take that row (see _check_host)
        table = getattr(snapshot, "table", None)
        table_version, nodes_removed = getattr(table, "version", 0), getattr(table, "nodes_removed", 0)
        feasible, diagnosis = self._find_nodes_that_fit_pod(fw, state, pod, bc)
        if len(feasible) == 0:
            raise FitError(pod, num_nodes, diagnosis)
        if len(feasible) == 1:
            host = feasible.name_at(0)
            _check_host(table, table_version, nodes_removed, host, pod)
            if bc is not None:
                bc.store_one(host)
            return ScheduleResult(host, 1 + diagnosis.node_to_status.len(), 1)
        totals, matrix = self._prioritize_nodes_matrix(fw, state, pod, feasible)
        if rec is not None:
            rec.total_scores = np.array(totals, dtype=np.int64)
        host = self._select_host(feasible, totals)
        _check_host(table, table_version, nodes_removed, host, pod)
        if bc is not None:
            bc.store_scored(host, feasible, totals, matrix)
        return ScheduleResult(host, len(feasible) + diagnosis.node_to_status.len(), len(feasible))

    def _find_nodes_that_fit_pod(self, fw: "Framework", state: CycleState, pod: "Pod",
                                 bc: "_BatchCycle | None" = None):
        diagnosis = Diagnosis()
        all_nodes = self.snapshot.batch()  # PreFilter sees every node (NodeInfos().List())
        # the candidates: ListNodesInPlacement (all nodes unless a TAS placement is assumed)
        placement = self.snapshot.get_placement()
        candidates = all_nodes if placement is None else self.snapshot.placement_batch()
        rec = self._recording
        pre_filter_statuses: dict | None = None if rec is None else {}
        pre_res, s, plugins_with_nodes = fw.run_pre_filter_plugins(state, pod, all_nodes, record=pre_filter_statuses)
        if rec is not None:
            rec.record_pre_filter(pre_filter_statuses)
        diagnosis.unschedulable_plugins = set(plugins_with_nodes)
        if s is not None and not s.is_success():
            if not s.is_rejected():
                raise _CycleError(s)
            diagnosis.node_to_status.set_absent_nodes_status(s)
            diagnosis.pre_filter_msg = s.message()
            if s.plugin():
                diagnosis.unschedulable_plugins.add(s.plugin())
            return candidates.select(np.zeros(0, dtype=np.int64)), diagnosis

        # OpportunisticBatching: the node hinted from the previous cycle's scores (asked for every
        # pod, a nominated one too: it gets none)
        hint = ""
        # the statuses the nominated (or hinted) node's evaluation set (see _keep_first_statuses)
        first: dict[str, Status] = {}
        if bc is not None:
            hint = bc.hint = bc.batch.get_node_hint(state, pod, bc.signature, bc.cycle, self.snapshot)
            if rec is not None:
                rec.batch_hint = hint
                rec.batch_flush = bc.batch.flushes_of(bc.cycle)
        # A pod nominated by an earlier preemption tries its nominated node first; a hinted pod
        # its hint (upstream evaluateNominatedNode).
        nnn = pod.nominated_node_name or hint
        # (a node of the cluster outside the placement is no error: the full search follows)
        if nnn and nnn in self.snapshot.table.row_of and (placement is None or self.snapshot.in_placement(nnn)):
            view = self.snapshot.get(nnn)
            st = fw.run_filter_plugins_with_nominated_pods(state, pod, view)
            if rec is not None:
                if pod.nominated_node_name:
                    rec.nominated_node, rec.nominated_node_status = nnn, st
                else:
                    rec.batch_hinted = st is None or st.is_success()
            if st is not None and st.is_rejected():
                # (findNodesThatPassFilters over the one node: its status, and its plugin in the
                # diagnosis' UnschedulablePlugins, a set shared with the caller's; PendingPlugins,
                # nil there, is the copy's own, and lost)
                first[nnn] = st
                if st.plugin():
                    diagnosis.unschedulable_plugins.add(st.plugin())
            if st is None or st.is_success():
                one = candidates.select(np.flatnonzero(candidates.rows == view.row))
                nts = NodeToStatus()
                try:
                    one = self._find_nodes_that_pass_extenders(pod, one, nts)
                except _CycleError:  # evaluateNominatedNode's error: logged, the full search follows
                    one = None
                first.update(nts.items())  # an extender's rejections, set in the shared map too
                if one is not None and len(one):
                    if rec is not None:
                        rec.record_filter_all_pass(one, 1, [name for name, _ in fw._filter_named],
                                                   state.skip_filter_plugins)
                    return one, diagnosis

        nodes = candidates
        if pre_res is not None and pre_res.node_names is not None:
            row_of = self.snapshot.table.row_of
            keep = np.zeros(self.snapshot.table.capacity, dtype=bool)   # a row mask: np.isin sorts
            keep[[row_of[n] for n in pre_res.node_names if n in row_of]] = True
            nodes = candidates.select(np.flatnonzero(keep[candidates.rows]))
            plugins = " ".join(sorted(plugins_with_nodes))
            diagnosis.node_to_status.set_absent_nodes_status(
                Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, f"node(s) didn't satisfy plugin(s) [{plugins}]"))

        try:
            feasible = self._find_nodes_that_pass_filters(fw, state, pod, diagnosis, nodes, len(candidates))
        finally:  # (upstream counts processedNodes before it returns the search's error)
            if first:
                self._keep_first_statuses(diagnosis, first, len(candidates))
        before = len(feasible)
        feasible = self._find_nodes_that_pass_extenders(pod, feasible, diagnosis.node_to_status)
        if len(feasible) < before:
            diagnosis.unschedulable_plugins.add(EXTENDER_NAME)
        return feasible, diagnosis

    def _keep_first_statuses(self, diagnosis, first: dict, num_all_nodes: int) -> None:
        """Upstream's side effect of a rejected nominated (or batching-hinted) node: evaluateNominatedNode
        judges it through findNodesThatPassFilters (and the extenders) with the diagnosis'
        NodeToStatus, which the full search shares. The full search sets a status only for the
        nodes it rejects, so unless it rejected that node again (this cycle's search stopped before
        it: percentageOfNodesToScore; PreFilter's node names left it out; its filters now passed
        it, after an extender's rejection) the entry stays: one more processed node for
        nextStartNodeIndex (findNodesThatFitPod's ``len(feasibleNodes) + NodeToStatus.Len()``),
        one more for EvaluatedNodes, and its status in the FitError's diagnosis, which the
        PostFilter reads (PodEligibleToPreemptOthers asks the nominated node's status)."""
        nts = diagnosis.node_to_status
        absent = nts.absent_nodes_status()
        kept = 0
        for name, status in first.items():
            if nts.get(name) is absent:  # the full search did not reject it: the first status stays
                nts.set(name, status)
                kept += 1
        if kept:
            self.next_start_node_index = (self.next_start_node_index + kept) % max(num_all_nodes, 1)

    def _find_nodes_that_pass_filters(self, fw, state, pod, diagnosis, nodes, num_all_nodes):
        n = len(nodes)
        pct = fw.percentage_of_nodes_to_score()
        if pct is None:
            pct = self.config.percentage_of_nodes_to_score
        k = num_feasible_nodes_to_find(pct, n)
        if not self.extenders and not fw.has_score_plugins():
            k = 1
        if n == 0:
            return nodes
        start = self.next_start_node_index % n
        if not fw.has_filter_plugins():
            feasible = nodes.window(start, 0, min(k, n))
            if self._recording is not None:
                self._recording.record_filter_all_pass(feasible, len(feasible), [], state.skip_filter_plugins)
            self.next_start_node_index = (self.next_start_node_index + len(feasible)) % num_all_nodes
            return feasible
        got = None
        engine = fw.compiled_cycle
        if (engine is not None and engine.enabled and self.use_compiled_cycle and self.use_compiled_diagnosis
                and not self.extenders):
            got = engine.diagnose(state, pod, self.snapshot, nodes, start)
        res, evaluated = got if got is not None else self._filter_until_enough(fw, state, pod, nodes, start, k)
        m = len(res)
        absent = diagnosis.node_to_status.absent_nodes_status()
        if res.all_feasible():
            # Nothing rejected: no error, no statuses. Upstream stops at the (k+1)-th feasible node.
            examined_end = k if m > k else m
            self.next_start_node_index = (self.next_start_node_index + examined_end) % max(num_all_nodes, 1)
            if self._recording is not None:
                self._recording.record_filter(res, evaluated, examined_end, state.skip_filter_plugins)
            diagnosis.node_to_status = ArrayNodeToStatus(res, evaluated, _NO_POSITIONS, absent)
            return evaluated[:examined_end]
        ok = res.feasible()
        feasible_pos = ok.nonzero()[0]
        if len(feasible_pos) > k:
            # Upstream keeps checking after the k-th feasible node until one more is feasible; that
            # one cancels the rest and is neither kept nor counted.
            examined_end = int(feasible_pos[k])
            feasible_pos = feasible_pos[:k]
        else:
            examined_end = m
        self.next_start_node_index = (self.next_start_node_index + examined_end) % max(num_all_nodes, 1)
        if self._recording is not None:
            self._recording.record_filter(res, evaluated, examined_end, state.skip_filter_plugins)
        every_rejected = len(feasible_pos) == 0
        if every_rejected:  # (every examined node rejected: examined_end is m)
            processed_rejected = np.arange(m, dtype=np.int64)
        else:
            processed_rejected = np.flatnonzero(~ok[:examined_end])
        # (before an error too: the nominated node's first status stays unless rejected here)
        diagnosis.node_to_status = ArrayNodeToStatus(res, evaluated, processed_rejected, absent)
        # (every node examined, the common failure: the positions are all of them, no index array)
        err = res.first_error() if examined_end == m else res.first_error(np.arange(examined_end))
        if err >= 0:
            raise _CycleError(res.status(err))
        if every_rejected or self.extenders:
            # The plugin sets matter only to a FitError (the pod's queueing hints): built when no
            # node is left, or may be left once the extenders have filtered (issue 14).
            # (a rejection with Pending counts its plugin as pending, any other as unschedulable;
            # every node examined and rejected, the common failure: no index array)
            unschedulable, pending = res.rejecting_plugins(None if every_rejected else processed_rejected,
                                                           _PENDING)
            diagnosis.unschedulable_plugins |= unschedulable
            diagnosis.pending_plugins |= pending
        return evaluated.select(feasible_pos)

    @staticmethod
    def _filter_until_enough(fw, state, pod, nodes, start: int, k: int):
        """Filter verdicts for a prefix of ``nodes`` rotated to ``start`` that holds more than ``k``
        feasible nodes (or all of it): upstream stops there, so the nodes after it need no evaluation.

        Windows double from ``2(k+1)`` nodes, so a cluster where most nodes fit pays for about
        ``2k`` nodes instead of all of them. A window that would leave fewer nodes than it holds
        takes them too: one more pass over that remainder would cost each filter's per-call work
        again for little (a pod that fits nowhere, the simulations' common failure, reaches the
        end of every node list). Returns (FilterResults over the evaluated prefix, the prefix as a
        NodeBatch).
        """
        n = len(nodes)
        window = max(2 * (k + 1), FILTER_WINDOW_MIN)
        parts, begin, feasible = [], 0, 0
        while begin < n:
            end = begin + window
            if n - end <= window:
                end = n
            part = fw.run_filter_plugins_with_nominated_pods_vectorized(state, pod, nodes.window(start, begin, end))
            parts.append(part)
            feasible += part.num_feasible()
            begin = end
            if feasible > k or part.first_error() >= 0:
                break
            window *= 2
        return FilterResults.concat(parts), nodes.window(start, 0, begin)

    def _find_nodes_that_pass_extenders(self, pod, feasible, node_to_status):
        """Filter ``feasible`` through the interested filtering extenders, in order."""
        rec = self._recording
        for ext in self.extenders:
            if len(feasible) == 0:
                break
            if not ext.is_interested(pod) or not getattr(ext, "filter_verb", ""):
                continue
            try:
                kept, failed, failed_unresolvable = ext.filter(pod, feasible)
            except Exception as e:  # noqa: BLE001 - transport errors, timeouts, garbage answers
                if rec is not None:
                    rec.record_extender_filter(ext.name(), None, {}, {}, error=str(e) or type(e).__name__)
                if ext.is_ignorable():
                    continue
                text = str(e)
                if ext.name() not in text:  # the extender's own error text: say whose it is
                    text = f"extender {ext.name()!r}: {text}"
                raise _CycleError(Status.from_error(StatusError(text)))
            if rec is not None:
                rec.record_extender_filter(ext.name(), kept, failed, failed_unresolvable)
            for name, msg in failed_unresolvable.items():
                node_to_status.set(name, Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, msg))
            for name, msg in failed.items():
                if name not in failed_unresolvable:
                    node_to_status.set(name, Status(Code.UNSCHEDULABLE, msg))
            feasible = kept
        return feasible

    def _prioritize_nodes(self, fw, state, pod, feasible) -> np.ndarray:
        """Total score per feasible node (int64), plugins and extenders."""
        return self._prioritize_nodes_matrix(fw, state, pod, feasible)[0]

    def _prioritize_nodes_matrix(self, fw, state, pod, feasible):
        """(total score per feasible node, the Score plugins' ScoreMatrix or None when no plugin scored)."""
        if not self.extenders and not fw.has_score_plugins():
            return np.ones(len(feasible), dtype=np.int64), None
        rec = self._recording
        st = fw.run_pre_score_plugins(state, pod, feasible, record=None if rec is None else rec.pre_score)
        if st is not None and not st.is_success():
            raise _CycleError(st)
        m, st = fw.run_score_plugins_matrix(state, pod, feasible)
        if m is None:
            raise _CycleError(st)
        if rec is not None:
            rec.record_scores(m, fw.score_plugin_weight)
        totals = m.totals.copy()
        extra: dict[int, int] = {}
        for ext in self.extenders:
            if not getattr(ext, "prioritize_verb", "") or not ext.is_interested(pod):
                continue
            try:
                scores, weight = ext.prioritize(pod, feasible)
                position = {n: i for i, n in enumerate(feasible.names)}
                weighted = {position[host]: weighted_extender_score(ext.name(), host, score, weight)
                            for host, score in scores.items() if host in position}
            except Exception as e:  # noqa: BLE001 - upstream ignores prioritize errors, this extender's scores too
                if rec is not None:
                    rec.record_extender_prioritize(ext.name(), {}, 0, error=str(e) or type(e).__name__)
                continue
            if rec is not None:
                rec.record_extender_prioritize(ext.name(), scores, weight)
            for i, value in weighted.items():
                extra[i] = extra.get(i, 0) + value
        for i, value in extra.items():  # Python ints: several extenders near the limit cannot wrap
            totals[i] = max(min(int(totals[i]) + value, _INT64_MAX), _INT64_MIN)
        return totals, m

    def _select_host(self, feasible, totals: np.ndarray) -> str:
        """A node with the highest total; ties broken uniformly by the seeded RNG."""
        totals = np.ascontiguousarray(totals, dtype=np.int64)
        best, count, pick = _score.max_ties(totals)
        if count > 1:
            pick = seeded_tie(totals, len(totals), best, count, self.rng)
        return feasible.name_at(pick)

    # ==========================================================================================
    # binding cycle
    # ==========================================================================================
    def _binding_cycle(self, fw: "Framework", state: CycleState, qpi: QueuedPodInfo, assumed: "Pod",
                       host: str) -> tuple[Status | None, Any]:
        st = fw.wait_on_permit(assumed)
        if self._recording is not None and self._recording.permit_timeouts:
            self._recording.permit_wait = "allowed" if st is None or st.is_success() else st.message()
        if st is not None and not st.is_success():
            if st.is_rejected():
                # a wait's outcome is no function of the cluster: run() retries it (_waits_again)
                self._rejected_at_permit_wait.add(assumed.uid)
                d = Diagnosis(node_to_status=NodeToStatus({host: st}),
                              unschedulable_plugins={st.plugin()} - {""})
                fe = FitError(assumed, 1, d)
                return Status(st.code()).with_error(fe), fe
            return st, None
        self.queue.done(assumed.uid)
        st = fw.run_pre_bind_plugins(state, assumed, host)
        if st is not None and not st.is_success():
            return st, None
        st = self._bind(fw, state, assumed, host)
        if st is not None and not st.is_success():
            return st, None
        return None, None

    def _bind(self, fw, state, assumed, host) -> Status | None:
        try:
            for ext in self.extenders:
                if not ext.is_binder() or not ext.is_interested(assumed):
                    continue
                try:
                    ext.bind(assumed, host)
                except Exception as e:  # noqa: BLE001
                    if self._recording is not None:
                        self._recording.bind[f"extender:{ext.name()}"] = Status.from_error(StatusError(str(e)))
                    if ext.is_ignorable():
                        continue
                    return Status.from_error(StatusError(str(e)))
                if self._recording is not None:
                    self._recording.bind[f"extender:{ext.name()}"] = None
                return None
            status = fw.run_bind_plugins(state, assumed, host)
            if status is not None and status.is_skip():
                # every Bind plugin skipped: upstream fails the binding with that Skip status and
                # an empty message; say what happened
                return Status(Code.ERROR, f"no Bind plugin bound pod {assumed.key}: every Bind plugin returned Skip")
            return status
        finally:
            self.cache.finish_binding(assumed)


#: what ``BindCommit.commit_run`` inlines of the scheduler (``_gang_bind_run_ok`` checks that the
#: scheduler's class has these very functions and that none is replaced on the instance)
_MIXIN_METHODS = {name: getattr(ScheduleOneMixin, name) for name in (
    "_run_binding_cycle", "_binding_cycle", "_bind", "_pod_bound", "_after_commit", "_count_bound_after_flush")}
_GANG_BIND_RUN_UNPATCHED = frozenset(_MIXIN_METHODS) | {"_changed"}
_CACHE_UNPATCHED = frozenset({"add_pod", "finish_binding", "_replace_member", "_remove_member", "_add_member"})
_QUEUE_UNPATCHED = frozenset({"done", "assigned_pod_added", "_move_all_to_active_or_backoff_queue",
                              "add_event_if_any_in_flight"})
#: the classes and functions ``commit_run`` tests per pod (see its docstring)
_GANG_BIND_RUN_CTX = (DefaultBinder, _CLUSTER_BIND, _idle, InFlightEvent, _Framework.wait_on_permit,
                      _Framework.run_pre_bind_plugins, _Framework.run_bind_plugins, PODS_TO_ACTIVATE_KEY)


_INT64_MAX = 2**63 - 1
_INT64_MIN = -(2**63)


class _BatchCycle:
    """One scheduling cycle's part in opportunistic batching (``fastsched.runtime.batch``): the
    profile's batch, the pod's signature, the cycle number, and the hint the cycle got."""

    __slots__ = ("batch", "signature", "cycle", "hint", "rec")

    def __init__(self, batch: Any, signature: Any, cycle: int, rec: Any = None):
        self.batch = batch
        self.signature = signature
        self.cycle = cycle
        self.hint = ""
        #: the attempt's decision record (None when not recording): the signature's digest and
        #: the flushes of the cycle go to it
        self.rec = rec
        if rec is not None:
            rec.batch_signature = signature_digest(signature)

    def _stored(self) -> None:
        if self.rec is not None:
            self.rec.batch_flush = self.batch.flushes_of(self.cycle)

    def compiled_cycle_can_run(self) -> bool:
        """The fused cycle neither asks for hints nor exports raw scores: it runs the pods whose
        cycle can get no hint and whose scores the batch would not keep (unsigned pods while no
        candidates are kept)."""
        return self.signature is None and not self.batch.has_state()

    def store_unsigned(self, host: str, found: int) -> None:
        """StoreScheduleResults after a full cycle of an unsigned pod (nothing is kept)."""
        batch = self.batch
        if found > 1:  # upstream passes the other scored nodes; without a signature they are dropped
            batch.store_schedule_results(None, self.hint, host, SortedScoredNodes([ScoredNode(host)]), self.cycle)
        else:
            batch.store_schedule_results(None, self.hint, host, None, self.cycle)
        self._stored()

    def store_one(self, host: str) -> None:
        """StoreScheduleResults when one node was feasible (or the hint fitted): nothing new to keep."""
        self.batch.store_schedule_results(self.signature, self.hint, host, None, self.cycle)
        self._stored()

    def store_scored(self, host: str, feasible: Any, totals: np.ndarray, matrix: Any) -> None:
        """StoreScheduleResults after a full cycle: upstream pops the host from a heap of the scored
        nodes and keeps the rest of it. The heap is built over the scored nodes in node-table order
        with the host first, so that it pops the host (the node chosen among the tied best) and
        leaves the others in an order the oracle rebuilds (upstream's order is its parallel
        filter's). The cycle keeps copies of its arrays; the heap is built if a hint needs it."""
        if self.signature is None:
            self.store_unsigned(host, len(feasible))
            return
        names = feasible.names
        order = np.argsort(np.asarray(feasible.rows), kind="stable")
        totals = np.array(totals, dtype=np.int64)
        plugin_names = list(matrix.plugin_names) if matrix is not None else []
        raw = matrix.raw.copy() if matrix is not None else None

        def build() -> list[ScoredNode]:
            first = None
            others = []
            for i in order.tolist():
                node_raw = (tuple(zip(plugin_names, raw[:, i].tolist())) if raw is not None else ())
                sn = ScoredNode(names[i], node_raw, int(totals[i]))
                if first is None and sn.name == host:
                    first = sn
                else:
                    others.append(sn)
            return heap_after_pop(first, others) if first is not None else _heap_of(others)

        kept = SortedScoredNodes.deferred(len(names) - 1, build)
        self.batch.store_schedule_results(self.signature, self.hint, host, kept, self.cycle)
        self._stored()


def signature_digest(signature: Any) -> str:
    """A stable digest of a pod signature for decision records ("" when the pod is unsigned):
    equal digests, equal signatures."""
    if signature is None:
        return ""
    return hashlib.sha256(repr(signature).encode()).hexdigest()


def _heap_of(nodes: list) -> list:
    return SortedScoredNodes(nodes).unordered()


class _Collapsed:
    """``_scheduling_cycle``'s answer for a pod the compiled binding path serves: its IdleBinding,
    the pod not assumed."""

    __slots__ = ("idle",)

    def __init__(self, idle: Any):
        self.idle = idle


#: ``_scheduling_cycle``'s error slot for a pod bound from its placement (:meth:`_commit_placed`)
_COMMITTED = object()


class _CycleError(Exception):
    """A non-rejection failure of the scheduling cycle, carrying its Status."""

    def __init__(self, status: Status | None):
        self.status = status if status is not None else Status(Code.ERROR, "unknown error")
        super().__init__(self.status.message())


def _check_host(table: Any, version: int, nodes_removed: int, host: str, pod: "Pod") -> None:
    """Refuse a host whose node row was freed or taken by another node since the cycle began
    (``version`` and ``nodes_removed``: the table's then). Upstream's cycle reads a snapshot that
    nothing changes mid-cycle, but fastsched's node table is live: a node a plugin or extender
    deleted during the cycle read as "" (the pod was reported Scheduled on no node, and counted in
    the cache), and a node added into the freed row was taken instead, never filtered (a pod bound
    where it does not fit). Such an attempt fails with an Error (the pod is retried on the nodes as
    they are); with no node removed during the cycle no row can have changed hands."""
    if getattr(table, "nodes_removed", nodes_removed) == nodes_removed:  # every cycle but such rare ones
        return
    row = table.row_of.get(host) if host else None
    if row is None or int(table.row_version[row]) > version:
        raise _CycleError(Status(Code.ERROR, f"the node chosen for pod {pod.namespace}/{pod.name}"
                                             f"{' (' + host + ')' if host else ''} was deleted or replaced "
                                             f"during its scheduling cycle"))


def _clear_nomination() -> NominatingInfo:
    return NominatingInfo("", NominatingMode.OVERRIDE)
