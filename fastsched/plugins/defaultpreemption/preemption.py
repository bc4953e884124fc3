"""The preemption Evaluator (upstream ``pkg/scheduler/framework/preemption/preemption.go`` and
``executor.go``, v1.37).

``Evaluator.preempt`` re-reads the preemptor, checks eligibility, dry-runs preemption on the nodes
the filters found Unschedulable, lets preemption-capable extenders narrow the candidates, picks one
node, evicts its victims, and nominates the node, answering Success with ``found a potential
placement for pod on node N, preempting K victims`` (v1.37; v1.34's Success had no message).

Eviction follows the SchedulerAsyncPreemption gate (``Evaluator.enable_async_preemption``):

* off: upstream's ``prepareCandidate``, inside PostFilter: every victim is evicted (in importance
  order here), then the lower-priority pods nominated to the node lose their nomination;
* on (the default): upstream's ``prepareCandidateAsync`` (v1.37 ``executor.go``). PostFilter
  returns with the nomination; the preemptor is recorded as preempting (the plugin's PreEnqueue
  holds it back meanwhile) and the API calls land ``api_delay`` seconds of (virtual) time after the
  decision, as an event on the framework's clock: the lower-priority nominations are cleared, every
  victim but the last is evicted, the preemptor leaves the preempting set, and the last victim is
  evicted (its deletion event is what lets the preemptor back into the queue). With ``api_delay``
  0 (the default) the calls are instantaneous: they complete before the next scheduling cycle (at
  the end of PostFilter), so the cluster the next pods see is the synchronous path's. An API error
  stops the evictions (the last victim is then skipped) and activates the preemptor, as does a
  last victim preempted in memory (no deletion event follows). A victim deleted by someone else
  before the calls land is skipped without an error (v1.37; v1.34's status patch failed with
  NotFound and activated the preemptor). Victims whose deletion already started are never sent a
  call (in both modes); with none left nothing is scheduled.

A victim waiting at Permit is preempted in memory (v1.37 ``waitingPod.Preempt``): its binding cycle
fails with an Error, which sends it to backoffQ, and it is not deleted; one already allowed is
deleted as any other victim.

Determinism (upstream is parallel and map-ordered in places; fastsched fixes one order):

* the dry run walks the potential nodes sequentially from the random offset (what upstream does with
  parallelism 1), so the early stop after ``numCandidates`` candidates is exact;
* the potential nodes come in snapshot order (upstream's map order when the absent-nodes status is
  not Unschedulable is random);
* candidates keep dry-run order (non-violating first) where upstream builds a map, so the last
  tie-break of ``pick_one_node_for_preemption`` ("the first node") is the first in that order;
* victims are evicted one by one, in importance order; the first failure stops the eviction.

The dry run runs over all walked nodes at once (:mod:`.vectorized`) when the preemptor's remaining
filters allow it, with the per-node path's results; ``DefaultPreemption.vectorized = False`` keeps
the per-node path (:meth:`Evaluator.dry_run_preemption_per_node`, the reference).
"""
from __future__ import annotations

import collections.abc
import functools
import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable, Protocol, Sequence, cast

import numpy as np

from ..._kernels import _preemption
from ...errors import NotFoundError
from ...extender.extender import Victims
from ...framework import protocols as fwk
from ...framework.protocols import is_node_batch
from ...framework.status import Code, Status, StatusError
from ...framework.types import Diagnosis, FitError, NodeToStatus, PostFilterResult
from ...runtime.filter_results import ArrayNodeToStatus
from ...snapshot.snapshot import NodeBatch, NodeInfoView
from .util import earliest_pod_start_time, pod_priority

if TYPE_CHECKING:  # pragma: no cover
    from ...api import Pod
    from ...framework import types as _types
    from ...framework.cycle_state import CycleState
    from ...framework.protocols import NodeTable

#: Upstream adds MaxInt32+1 to each victim priority before summing, so that all terms are >= 0.
PRIORITY_OFFSET = 2**31
NOT_HELPFUL_MSG = "Preemption is not helpful for scheduling"
NO_CANDIDATE_MSG = "no candidate node for preemption"
NO_CLIENT_MSG = "not possible without a cluster client (the framework handle has no client)"


@dataclass
class Candidate:
    """A node the preemptor could be nominated to, with the victims that make it fit."""

    name: str
    victims: Victims


class QuickVictimCheck(Protocol):
    """Optional beside :class:`PreemptionInterface`: an interface with ``has_potential_victims``
    also answers ``no_victims_status`` (what ``select_victims_on_node`` returns when it finds no
    victim), so the dry run can skip the node copies (DefaultPreemption offers both)."""

    def has_potential_victims(self, node_info: fwk.NodeInfo, preemptor: "Pod") -> bool: ...

    def no_victims_status(self) -> Status | None: ...


class PreemptionInterface(Protocol):
    """What a preemption plugin provides to the Evaluator (upstream ``preemption.Interface``)."""

    def get_offset_and_num_candidates(self, num_nodes: int) -> tuple[int, int]: ...

    def candidates_to_victims_map(self, candidates: Sequence[Candidate]) -> dict[str, Victims]: ...

    def pod_eligible_to_preempt_others(self, pod: "Pod", nominated_node_status: Status | None
                                       ) -> tuple[bool, str]: ...

    def select_victims_on_node(self, state: "CycleState", pod: "Pod", node_info: _types.NodeInfo, pdbs: Any
                               ) -> tuple[list["Pod"], int, Status | None]: ...

    def ordered_score_funcs(self, nodes_to_victims: dict[str, Victims]
                            ) -> list[Callable[[str], float]] | None: ...


class _CandidateList:
    """Upstream ``candidateList``: holds at most ``capacity`` candidates; later ones are dropped."""

    __slots__ = ("capacity", "items")

    def __init__(self, capacity: int):
        self.capacity = capacity
        self.items: list[Candidate] = []

    def add(self, c: Candidate) -> None:
        if len(self.items) < self.capacity:
            self.items.append(c)

    def size(self) -> int:
        return len(self.items)


def aggregate_error_message(messages: Sequence[str]) -> str:
    """Go's ``utilerrors.NewAggregate(errs).Error()``: one message as is; several de-duplicated in ``[a, b]``."""
    if len(messages) == 1:
        return messages[0]
    seen: dict[str, None] = dict.fromkeys(messages)
    if len(seen) == 1:
        return next(iter(seen))
    return "[" + ", ".join(seen) + "]"


def _is_success(status: Status | None) -> bool:
    return status is None or status.is_success()


def _error_status(msg: str) -> Status:
    return Status.from_error(StatusError(msg))


def _error_text(status: Status) -> str:
    err = status.as_error()
    return str(err) if err is not None else status.message()


class Evaluator:
    """Upstream ``preemption.Evaluator`` for one plugin."""

    def __init__(self, plugin_name: str, handle: fwk.Handle, interface: PreemptionInterface,
                 enable_async_preemption: bool = False):
        self.plugin_name = plugin_name
        self.handle = handle
        self.interface = interface
        #: SchedulerAsyncPreemption: evict the victims after PostFilter returned (see the module doc)
        self.enable_async_preemption = enable_async_preemption
        #: seconds (on the framework's clock) the asynchronous API calls take: the victims but the
        #: last, and then the last one, go this long after the preemption was decided
        self.api_delay = 0.0
        #: UIDs of the pods whose asynchronous preemption is under way (upstream ``preempting``)
        self.preempting: set[str] = set()

    def is_pod_running_preemption(self, uid: str) -> bool:
        """Upstream ``IsPodRunningPreemption``: whether the pod's asynchronous preemption is still
        evicting its victims (all but the last one)."""
        return uid in self.preempting

    # ------------------------------------------------------------------------------------------
    # Preempt
    # ------------------------------------------------------------------------------------------
    def preempt(self, state: "CycleState", pod: "Pod", m: NodeToStatus
                ) -> tuple[PostFilterResult | None, Status | None]:
        """Upstream ``Preempt``; the caller (the plugin) adds the ``preemption: `` prefix."""
        client = getattr(self.handle, "client", None)
        if client is None:
            return None, Status(Code.UNSCHEDULABLE, NO_CLIENT_MSG)

        # 0) the latest version of the preemptor
        fresh = client.get_pod_by_uid(pod.uid)
        if fresh is None:
            return None, _error_status(f'pod "{pod.name}" not found')
        # m holds this pod's own Filter verdicts only when no newer version came since
        screened = fresh is pod
        pod = fresh

        # 1) eligibility
        # only read for a nominated pod (a lookup of "" would index every node's status)
        nominated_node_status = m.get(pod.nominated_node_name) if pod.nominated_node_name else None
        ok, msg = self.interface.pod_eligible_to_preempt_others(pod, nominated_node_status)
        if not ok:
            return None, Status(Code.UNSCHEDULABLE, msg)

        # 2) candidates
        lister = node_infos_of(self.handle)
        all_nodes = lister.list()
        candidates, node_to_status, err = self.find_candidates(state, all_nodes, pod, m, screened=screened)
        if err is not None and not candidates:
            return None, _error_status(err)
        if not candidates:
            diagnosis = Diagnosis(node_to_status=node_to_status)
            diagnosis.node_to_status.set_absent_nodes_status(
                Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, NOT_HELPFUL_MSG))
            fit_error = FitError(pod, len(all_nodes), diagnosis)
            # a nomination to "" clears the pod's nominatedNodeName
            return PostFilterResult.nominating(""), Status(Code.UNSCHEDULABLE, str(fit_error))

        # 3) extenders
        candidates, status = self.call_extenders(pod, candidates)
        if not _is_success(status):
            return None, status

        # 4) the best candidate
        best = self.select_candidate(candidates)
        if best is None or not best.name:
            return None, Status(Code.UNSCHEDULABLE, NO_CANDIDATE_MSG)

        # 5) evict the victims: now, or asynchronously (SchedulerAsyncPreemption)
        if self.enable_async_preemption:
            self.prepare_candidate_async(best, pod, self.plugin_name)
        else:
            status = self.prepare_candidate(best, pod, self.plugin_name)
            if not _is_success(status):
                return None, status
        # v1.37 preemption.go Preempt: a Success with a message, which the plugin prefixes with
        # "preemption: " and schedulePod keeps as the FitError's PostFilterMsg (framework/types.go
        # FitError.Error); every victim counts, also those whose deletion had already started
        return PostFilterResult.nominating(best.name), Status(
            Code.SUCCESS, f"found a potential placement for pod on node {best.name}, "
                          f"preempting {len(best.victims.pods)} victims")

    # ------------------------------------------------------------------------------------------
    # candidates
    # ------------------------------------------------------------------------------------------
    def find_candidates(self, state: "CycleState", all_nodes: Sequence[Any], pod: "Pod", m: NodeToStatus,
                        *, screened: bool = False) -> tuple[list[Candidate], NodeToStatus, str | None]:
        """Upstream ``findCandidates``: (candidates, per-node dry-run statuses, error message).

        ``screened``: ``m`` is this very pod's Filter result in this cycle (``state``'s), so a
        node it found Unschedulable passed every Filter plugin before the one that rejected it
        (upstream's RunFilterPlugins stops at the first failure); the vectorized dry run then
        skips the node-only filters where that proves they pass (:class:`_ScreenedBatch`)."""
        if len(all_nodes) == 0:
            return [], NodeToStatus(), "no nodes available"
        vectorized = getattr(self.interface, "vectorized_dry_run", None)
        table = getattr(self.handle.snapshot_shared_lister(), "table", None)
        if vectorized is not None and table is not None and vectorized(state, pod) is not None:
            # the same nodes as below, without building name lists
            rows = self._potential_rows(all_nodes, m, table)
            if rows is not None:
                if len(rows) == 0:
                    return [], NodeToStatus(), None
                batch = _ScreenedBatch(table, rows) if screened else NodeBatch(table, rows)
                return self._dry_run_potential(state, pod, batch)
        all_names = all_nodes.names if hasattr(all_nodes, "names") else [ni.node().name for ni in all_nodes]
        potential_names = m.nodes_for_status_code(all_names, Code.UNSCHEDULABLE)
        if not potential_names:
            return [], NodeToStatus(), None
        # Snapshot order, whatever order the status map listed them in (upstream: map order).
        position = {name: i for i, name in enumerate(all_names)}
        lister = node_infos_of(self.handle)
        missing = [n for n in potential_names if n not in position]
        if missing:
            return [], NodeToStatus(), f"nodeinfo not found for node name {missing[0]!r}"
        potential = _NodesByName(lister, sorted(potential_names, key=position.__getitem__))
        return self._dry_run_potential(state, pod, potential)

    def _potential_rows(self, all_nodes: Sequence[fwk.NodeInfo] | fwk.NodeBatch, m: NodeToStatus,
                        table: NodeTable) -> np.ndarray | None:
        """The potential nodes as table rows in snapshot order, read off the Filter results' arrays
        (what ``find_candidates`` computes by names), or None when ``m`` cannot give them."""
        if not isinstance(m, ArrayNodeToStatus) or not is_node_batch(all_nodes) or all_nodes.table is not table:
            return None
        got = m.rows_for_status_code(Code.UNSCHEDULABLE)
        if got is None or got[0] is not table:
            return None
        rows = got[1]
        live = table.live
        if live.dtype != np.bool_:  # (the kernel reads the live flags as bytes)
            if not live[rows].all():
                return None
            return rows[np.argsort(_snapshot_rank(all_nodes.rows, table)[rows], kind="stable")]
        # None when a row is not live; else the rows stably sorted by their snapshot rank
        return _preemption.rows_by_rank(np.ascontiguousarray(rows, dtype=np.int64),
                                        _snapshot_rank(all_nodes.rows, table), live.view(np.uint8))

    def _dry_run_potential(self, state: "CycleState", pod: "Pod", potential: Sequence[Any]
                           ) -> tuple[list[Candidate], NodeToStatus, str | None]:
        """List the PDBs, draw the offset, and dry-run the potential nodes (upstream order)."""
        list_pdbs = getattr(self.handle.client, "list_pdbs", None)
        pdbs = list(list_pdbs()) if list_pdbs is not None else []
        offset, num_candidates = self.interface.get_offset_and_num_candidates(len(potential))
        return self.dry_run_preemption(state, pod, potential, pdbs, offset, num_candidates)

    def dry_run_preemption(self, state: "CycleState", pod: "Pod", potential_nodes: Sequence[Any],
                           pdbs: Any, offset: int, num_candidates: int
                           ) -> tuple[list[Candidate], NodeToStatus, str | None]:
        """Upstream ``DryRunPreemption``, sequentially from ``offset`` (upstream parallelism 1).

        Each node is tried on a copy of its NodeInfo and of ``state``. Returns the non-violating
        candidates followed by the violating ones (each list capped at ``num_candidates``), the
        statuses of the nodes that are no candidate, and the aggregated Error messages (or None).

        When the plugin offers ``vectorized_dry_run`` and it applies to this pod (see
        :mod:`.vectorized`), all nodes are dry-run at once with the same results; otherwise
        :meth:`dry_run_preemption_per_node` runs.
        """
        vectorized = getattr(self.interface, "vectorized_dry_run", None)
        found = vectorized(state, pod) if vectorized is not None else None
        if found is not None:
            runner, plan, table = found
            rows = _rows_of(potential_nodes, table)
            if rows is not None:
                return runner.run(state, pod, table, rows, pdbs or [], offset, num_candidates, plan,
                                  screened=isinstance(potential_nodes, _ScreenedBatch))
        return self.dry_run_preemption_per_node(state, pod, potential_nodes, pdbs, offset, num_candidates)

    def dry_run_preemption_per_node(self, state: "CycleState", pod: "Pod", potential_nodes: Sequence[Any],
                                    pdbs: Any, offset: int, num_candidates: int
                                    ) -> tuple[list[Candidate], NodeToStatus, str | None]:
        """The per-node DryRunPreemption: ``select_victims_on_node`` on copies, node after node.
        The reference for the vectorized dry run, and its fallback."""
        non_violating = _CandidateList(num_candidates)
        violating = _CandidateList(num_candidates)
        node_statuses = NodeToStatus()
        errors: list[str] = []
        interface = self.interface
        quick_check = getattr(interface, "has_potential_victims", None)
        n = len(potential_nodes)
        for i in range(n):
            node = potential_nodes[(offset + i) % n]
            name = node.node().name
            if quick_check is not None and not quick_check(node, pod):
                # what select_victims_on_node returns without removing anything; skips the copies
                victims: list[Pod] = []
                num_violations, status = 0, cast(QuickVictimCheck, interface).no_victims_status()
            else:
                victims, num_violations, status = interface.select_victims_on_node(
                    state.clone(), pod, node.snapshot(), pdbs)
            if _is_success(status) and victims:
                c = Candidate(name, Victims(list(victims), num_violations))
                (non_violating if num_violations == 0 else violating).add(c)
                nv, v = non_violating.size(), violating.size()
                if nv > 0 and nv + v >= num_candidates:
                    break
                continue
            if status is None or _is_success(status):
                status = _error_status(f'expected at least one victim pod on node "{name}"')
            if status.code() == Code.ERROR:
                errors.append(_error_text(status))
            node_statuses.set(name, status)
        err = aggregate_error_message(errors) if errors else None
        return non_violating.items + violating.items, node_statuses, err

    # ------------------------------------------------------------------------------------------
    # extenders
    # ------------------------------------------------------------------------------------------
    def call_extenders(self, pod: "Pod", candidates: list[Candidate]) -> tuple[list[Candidate], Status | None]:
        """Upstream ``callExtenders``: each interested preemption extender narrows the victims map."""
        extenders = self.handle.extenders() if callable(getattr(self.handle, "extenders", None)) else []
        if not extenders:
            return candidates, None
        victims_map = self.interface.candidates_to_victims_map(candidates)
        if not victims_map:
            return candidates, None
        for extender in extenders:
            if not extender.supports_preemption() or not extender.is_interested(pod):
                continue
            try:
                node_to_victims = extender.process_preemption(
                    pod, victims_map, node_infos_of(self.handle))
            except Exception as e:  # noqa: BLE001 - transport errors, bad answers
                if extender.is_ignorable():
                    continue
                return [], Status.from_error(e)
            node_to_victims = dict(node_to_victims or {})
            for node_name, victims in list(node_to_victims.items()):
                if victims is None or not victims.pods:
                    if extender.is_ignorable():
                        del node_to_victims[node_name]
                        continue
                    return [], _error_status(f'expected at least one victim pod on node "{node_name}"')
            victims_map = node_to_victims
            if not victims_map:
                break
        return [Candidate(name, victims) for name, victims in victims_map.items()], None

    # ------------------------------------------------------------------------------------------
    # selection
    # ------------------------------------------------------------------------------------------
    def select_candidate(self, candidates: Sequence[Candidate]) -> Candidate | None:
        """Upstream ``SelectCandidate``."""
        if not candidates:
            return None
        if len(candidates) == 1:
            return candidates[0]
        pick = getattr(candidates, "pick", None)
        if pick is not None and getattr(self.interface, "default_score_funcs", False):
            # the vectorized dry run's candidates: the default criteria over arrays
            return candidates[pick()]
        victims_map = self.interface.candidates_to_victims_map(candidates)
        score_funcs = self.interface.ordered_score_funcs(victims_map)
        node = pick_one_node_for_preemption(victims_map, score_funcs)
        victims = victims_map.get(node)
        if victims is not None:
            return Candidate(node, victims)
        return candidates[0]  # unreachable upstream too; it falls back to the first candidate

    # ------------------------------------------------------------------------------------------
    # eviction
    # ------------------------------------------------------------------------------------------
    def prepare_candidate(self, c: Candidate, pod: "Pod", plugin_name: str) -> Status | None:
        """Upstream ``prepareCandidate``: evict the victims, then clear lower-priority nominations."""
        for victim in c.victims.pods:
            if victim.deletion_timestamp is not None:
                continue  # graceful deletion already started
            try:
                self.preempt_pod(c, pod, victim, plugin_name)
            except Exception as e:  # noqa: BLE001 - an API error stops the preemption
                return Status.from_error(e)
        self._clear_lower_priority_nominations(pod, c.name)  # upstream logs a failure and goes on
        return None

    def _clear_lower_priority_nominations(self, pod: "Pod", node_name: str) -> bool:
        """Clear the nomination of the lower-priority pods nominated to ``node_name`` (they may no
        longer fit there; clearing moves them to activeQ). Returns whether any call failed."""
        failed = False
        for nominated in lower_priority_nominated_pods(self.handle, pod, node_name):
            if not nominated.nominated_node_name:
                continue  # upstream's status patch has nothing to clear
            try:
                client_of(self.handle).clear_nominated_node_name(nominated)
            except Exception:  # noqa: BLE001 - upstream logs it and goes on
                failed = True
        return failed

    def prepare_candidate_async(self, c: Candidate, pod: "Pod", plugin_name: str) -> None:
        """Upstream ``prepareCandidateAsync``: mark the preemptor as preempting and make the API
        calls ``api_delay`` seconds later on the framework's clock (see the module docstring).

        With ``api_delay`` 0 (the default) the calls complete before the scheduler's next cycle:
        they run here, at the end of PostFilter, in upstream's order (the scheduler runs clock
        events only once activeQ is empty, which would make instantaneous calls land after every
        pod queued at that time). Without a clock on the handle they run here too.
        """
        victims = [v for v in c.victims.pods if v.deletion_timestamp is None]
        if not victims:
            return  # graceful deletion already started for every victim: no call to make
        self.preempting.add(pod.uid)
        run = functools.partial(self._preempt_async, c, pod, victims, plugin_name)
        clock = getattr(self.handle, "clock", None)
        delay = float(self.api_delay)
        if clock is None or delay <= 0:
            run()
        else:
            clock.after_func(delay, run)

    def _preempt_async(self, c: Candidate, pod: "Pod", victims: list["Pod"], plugin_name: str) -> None:
        """The goroutine of upstream's ``prepareCandidateAsync``, when its API calls land."""
        # a failed clear marks the run failed (upstream), which re-activates the preemptor below
        failed = self._clear_lower_priority_nominations(pod, c.name)
        # Every victim but the last (upstream: in parallel; an error cancels the calls' context)...
        cancelled = False
        for victim in victims[:-1]:
            try:
                self._preempt_victim_async(c, pod, victim, plugin_name)
            except Exception:  # noqa: BLE001
                failed = cancelled = True
                break
        # ...then the last one (skipped after a failure, to requeue the preemptor sooner); its
        # deletion requeues the preemptor. (v1.37 keeps the preemptor in the preempting set until
        # the last call returns but PreEnqueue lets it through once that victim is gone or
        # terminating: the same, the calls being instantaneous here.)
        self.preempting.discard(pod.uid)
        last_in_memory = False
        if not cancelled:
            try:
                last_in_memory = self._preempt_victim_async(c, pod, victims[-1], plugin_name)
            except Exception:  # noqa: BLE001
                failed = True
        if failed or last_in_memory:
            # the preemptor may otherwise wait in the unschedulable pool for an event that never
            # comes (a failed call, or a last victim preempted in memory, which deletes nothing)
            activate = getattr(self.handle, "activate", None)
            if callable(activate):
                activate({pod.name: pod})

    def _preempt_victim_async(self, c: Candidate, preemptor: "Pod", victim: "Pod", plugin_name: str) -> bool:
        """``preempt_pod`` when the calls land. A victim gone by then is skipped without an error
        (v1.37 executor.go PreemptPod: the DisruptionTarget patch answers NotFound, "Victim Pod is
        already deleted"; v1.34 returned that error and so activated the preemptor)."""
        get = getattr(self.handle.client, "get_pod_by_uid", None)
        if get is not None and get(victim.uid) is None:
            return False
        return self.preempt_pod(c, preemptor, victim, plugin_name)

    def preempt_pod(self, c: Candidate, preemptor: "Pod", victim: "Pod", plugin_name: str) -> bool:
        """Upstream ``PreemptPod`` (v1.37 executor.go): a victim waiting at Permit is preempted in
        the scheduler's memory (it goes back to backoffQ, not deleted) unless it was already
        allowed or stopped; any other victim is deleted. Returns whether it was preempted in memory.
        (fastsched binds in the scheduling loop, so no victim is ever in PreBind, upstream's other
        in-memory case.)"""
        get_waiting_pod = getattr(self.handle, "get_waiting_pod", None)
        waiting = get_waiting_pod(victim.uid) if get_waiting_pod is not None else None
        in_memory = bool(waiting.preempt(plugin_name, "preempted")) if waiting is not None else False
        if not in_memory:
            try:
                client_of(self.handle).preempt_pod(victim, preemptor, c.name)
            except NotFoundError:
                # v1.37 executor.go PreemptPod: a victim whose status patch or deletion answers
                # NotFound is "already deleted": no error and no Preempted event (upstream
                # TestPrepareCandidate "one victim, but victim is already deleted")
                return False
        recorder = getattr(self.handle, "event_recorder", None)
        eventf = getattr(recorder, "eventf", None)
        if callable(eventf):
            message = f"Preempted by pod {preemptor.uid} on node {c.name}"
            eventf(victim, preemptor, "Normal", "Preempted", "Preempting",
                   message + " (in kube-scheduler memory)." if in_memory else message)
        return in_memory


_RANK: list = [None]


def _snapshot_rank(order: np.ndarray, table: NodeTable) -> np.ndarray:
    """(C,) int64: each row's position in the snapshot order ``order`` (kept while the order is)."""
    cached = _RANK[0]
    if cached is not None and cached[0] is order and cached[1] is table and len(cached[2]) == table.capacity:
        return cached[2]
    rank = np.zeros(table.capacity, dtype=np.int64)
    rank[order] = np.arange(len(order), dtype=np.int64)
    _RANK[0] = (order, table, rank)
    return rank


def _rows_of(nodes: Sequence[fwk.NodeInfo], table: NodeTable) -> np.ndarray | None:
    """The table rows of ``nodes`` (a NodeBatch, the lister's nodes by name, or NodeInfoViews of
    ``table``), or None when some node is not a row of ``table`` (e.g. a detached NodeInfo)."""
    if is_node_batch(nodes) and nodes.table is table:
        return nodes.rows
    if isinstance(nodes, _NodesByName):
        row_of = table.row_of
        rows = [row_of.get(name) for name in nodes.names]
        return None if None in rows else np.array(rows, dtype=np.int64)
    rows = []
    for ni in nodes:
        if not isinstance(ni, NodeInfoView) or ni.table is not table:
            return None
        rows.append(ni.row)
    return np.array(rows, dtype=np.int64)


class _ScreenedBatch(NodeBatch):
    """The potential nodes read off the Filter codes of this cycle for this very pod (see
    ``Evaluator.find_candidates``'s ``screened``): each was found Unschedulable by its first
    failing Filter plugin, so every plugin before that one passed it."""

    __slots__ = ()


class _NodesByName(collections.abc.Sequence):
    """The lister's NodeInfo for each name, looked up on access (the dry run often stops early)."""

    __slots__ = ("_lister", "_names")

    def __init__(self, lister: Any, names: list[str]):
        self._lister = lister
        self._names = names

    def __len__(self) -> int:
        return len(self._names)

    # by position only (no slices: the dry run indexes it), hence narrower than Sequence's
    def __getitem__(self, i: int) -> Any:  # type: ignore[override]
        return self._lister.get(self._names[i])

    @property
    def names(self) -> list[str]:
        return self._names


def node_infos_of(handle: fwk.Handle) -> fwk.NodeInfoLister:
    """The snapshot's NodeInfo lister (the framework has a snapshot whenever preemption runs;
    without one this raises the AttributeError the call on None raised)."""
    lister = handle.snapshot_shared_lister()
    if lister is None:
        raise AttributeError("'NoneType' object has no attribute 'node_infos'")
    return lister.node_infos()


def client_of(handle: fwk.Handle) -> fwk.Client:
    """``handle.client`` for an API call (Preempt returns early without one; were it gone by the
    time the calls land, this raises an AttributeError, as the call on None did, which the callers
    count as a failed call)."""
    client = handle.client
    if client is None:
        raise AttributeError("the framework handle has no client")
    return client


def lower_priority_nominated_pods(handle: fwk.Handle, pod: "Pod", node_name: str) -> list["Pod"]:
    """Upstream ``getLowerPriorityNominatedPods``: pods nominated to ``node_name`` with lower priority."""
    pod_infos = handle.nominated_pods_for_node(node_name)
    if not pod_infos:
        return []
    priority = pod_priority(pod)
    return [pi.pod for pi in pod_infos if pod_priority(pi.pod) < priority]


def pick_one_node_for_preemption(nodes_to_victims: dict[str, Victims],
                                 score_funcs: list[Callable[[str], float]] | None = None) -> str:
    """Upstream ``pickOneNodeForPreemption``: keep the nodes with the best score of each function
    in turn; return as soon as one node is left, else the first remaining node.

    The default functions, in order: fewest PDB violations; lowest highest-victim priority;
    lowest sum of (priority + 2^31); fewest victims; latest earliest-start-time among the
    highest-priority victims. Victims must be sorted most important first.
    """
    if not nodes_to_victims:
        return ""
    candidates = list(nodes_to_victims)
    if not score_funcs:
        def min_pdb_violations(node: str) -> float:
            return -nodes_to_victims[node].num_pdb_violations

        def min_highest_priority(node: str) -> float:
            return -pod_priority(nodes_to_victims[node].pods[0])

        def min_sum_priorities(node: str) -> float:
            return -sum(pod_priority(p) + PRIORITY_OFFSET for p in nodes_to_victims[node].pods)

        def min_num_pods(node: str) -> float:
            return -len(nodes_to_victims[node].pods)

        def latest_start_time(node: str) -> float:
            earliest = earliest_pod_start_time(nodes_to_victims[node].pods)
            return -math.inf if earliest is None else earliest

        score_funcs = [min_pdb_violations, min_highest_priority, min_sum_priorities, min_num_pods,
                       latest_start_time]
    for f in score_funcs:
        selected: list[str] = []
        best = -math.inf
        for node in candidates:
            score = f(node)
            if score > best:
                best = score
                selected = []
            if score == best:
                selected.append(node)
        if len(selected) == 1:
            return selected[0]
        candidates = selected
    return candidates[0]


__all__ = ["Candidate", "Evaluator", "NOT_HELPFUL_MSG", "NO_CANDIDATE_MSG", "NO_CLIENT_MSG", "PRIORITY_OFFSET",
           "PreemptionInterface", "Victims", "aggregate_error_message", "lower_priority_nominated_pods",
           "pick_one_node_for_preemption"]
