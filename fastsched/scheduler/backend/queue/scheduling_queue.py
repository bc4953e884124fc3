"""The scheduling queue (upstream ``PriorityQueue`` in ``pkg/scheduler/backend/queue/scheduling_queue.go``, v1.34).

Three places hold pending pods:

- **activeQ** (:mod:`.active_queue`): a heap ordered by the profile's QueueSort ``less`` (ties by
  insertion order), with the in-flight pods and the events received while they are in flight;
- **backoffQ** (:mod:`.backoff_queue`): two heaps ordered by backoff expiration. ``podBackoffQ``
  holds pods rejected by plugins, ``podErrorBackoffQ`` pods that failed without a rejector plugin
  (errors). With SchedulerPopFromBackoffQ (beta, on by default in v1.33+, and the default here)
  expirations are truncated to 1-second ordering windows, pods in the same window are ordered by
  the QueueSort ``less``, and :meth:`PriorityQueue.pop` takes the head of ``podBackoffQ`` (not the
  error queue) when activeQ is empty;
- **unschedulablePods** (:class:`UnschedulablePods`, here as upstream): a map of pods waiting for a
  cluster event, including *gated* pods (a PreEnqueue plugin did not return Success).

Queueing hints (SchedulerQueueingHints, on by default) decide what a cluster event does to an
unschedulable pod: the hint functions of the plugins that rejected it are asked; ``Queue`` from a
Pending plugin moves it straight to activeQ, ``Queue`` from another rejector moves it to backoffQ
while it is still backing off (else activeQ). Events received while a pod is being scheduled
("in flight") are recorded and replayed when the pod comes back through
:meth:`PriorityQueue.add_unschedulable_if_not_present`.

The queue is single-threaded and does nothing by itself over time: the caller runs
:meth:`PriorityQueue.flush_backoff_q_completed` (upstream: every second, aligned to whole seconds)
and :meth:`PriorityQueue.flush_unschedulable_pods_leftover` (every 30 s);
:meth:`PriorityQueue.next_wakeup` tells a simulation when a flush would next move a pod.

Pods are keyed by UID (upstream keys its heaps by ``namespace/name``). The cluster events and their
matching are in :mod:`fastsched.framework.events`, the nominator in :mod:`.nominator`.
"""
from __future__ import annotations

import math
from typing import Any, Callable, Iterable, Mapping, TypeVar

from ....errors import FastschedError
from ....api.objects import Pod
from ....framework.events import (BACKOFF_COMPLETE, EVENT_ASSIGNED_POD_ADD,
                                  EVENT_UNSCHEDULABLE_TIMEOUT, EVENT_UNSCHEDULED_POD_ADD,
                                  EVENT_TARGET_POD_UPDATE, FORCE_ACTIVATE,
                                  SCHEDULE_ATTEMPT_FAILURE,
                                  cluster_event_is_wildcard, event_label, match_any_cluster_event,
                                  match_cluster_events, pod_scheduling_properties_change)
from ....framework.interface import (ClusterEvent, ClusterEventWithHint, PodActivator,
                                     PodNominator, QueueingHint)
from ....framework.status import Code, Status
from ....framework.podgroups import PodGroupState, UnscheduledPods, entity_key
from ....framework.types import PodInfo, QueuedPodInfo
from ..heap import Heap, KeyedHeap
from .active_queue import ActiveQueue, InFlightEvent
from .backoff_queue import BackoffQueue
from .nominator import Nominator, PodLister
from .pod_groups import PodGroupQueueMixin

# ------------------------------------------------------------------------------------------------
# Constants
# ------------------------------------------------------------------------------------------------
DEFAULT_POD_INITIAL_BACKOFF = 1.0
DEFAULT_POD_MAX_BACKOFF = 10.0
DEFAULT_POD_MAX_IN_UNSCHEDULABLE_PODS_DURATION = 300.0
#: the backoffQ flush period (upstream ``Run``: every second; the ordering window's length)
BACKOFF_FLUSH_PERIOD = 1.0
#: the unschedulablePods flush period (upstream ``Run``: every 30 s)
UNSCHEDULABLE_FLUSH_PERIOD = 30.0

ACTIVE_Q = "Active"
BACKOFF_Q = "Backoff"
UNSCHEDULABLE_Q = "Unschedulable"

PRE_ENQUEUE = "PreEnqueue"

#: UnschedulablePods' rejector keys of a pod with no unschedulable or pending plugin (any event
#: queues it) and of a pod group entity (its members' plugins decide)
NO_REJECTOR = "<no rejector>"
ENTITY = "<pod group entity>"

# queueing strategies
QUEUE_SKIP = 0
QUEUE_AFTER_BACKOFF = 1
QUEUE_IMMEDIATELY = 2

_UNSCHEDULED_POD_ADD = event_label(EVENT_UNSCHEDULED_POD_ADD)

T = TypeVar("T")


def _kept_per_event(memo: dict, event: ClusterEvent, compute: Callable[[ClusterEvent], T]) -> T:
    """``compute(event)``, kept in ``memo`` by the event's identity; the entry keeps the event so
    that its id cannot be reused while the entry stands. Bounded: events built per call pass by."""
    known = memo.get(id(event))
    if known is not None and known[0] is event:
        return known[1]
    value = compute(event)
    if len(memo) < 1024:
        memo[id(event)] = (event, value)
    return value

class QueueError(FastschedError, ValueError):
    """What upstream returns as an ``error`` (returned, not raised, by the methods that can fail)."""


# ------------------------------------------------------------------------------------------------
# unschedulablePods
# ------------------------------------------------------------------------------------------------
class UnschedulablePods(dict):
    """Upstream ``unschedulablePods``: the pods waiting for a cluster event (gated ones included),
    ``uid -> QueuedPodInfo`` (upstream's ``podInfoMap``), counting incoming pods on :meth:`add`.

    Beside the map it keeps two indexes, so that an event's candidates are found without visiting
    every stored pod (thousands of them, once per bound pod):

    - by the PreEnqueue plugin gating a pod (``""`` for pods that are not gated): only its gating
      plugin registering an event can ungate a gated pod (upstream's SchedulingWhileGated case);
    - the pods not gated, by *rejector key*: ``(profile, plugin)`` for each plugin of the pod's
      unschedulable and pending plugins, :data:`NO_REJECTOR` for a pod with none (upstream's
      ``isPodWorthRequeuing`` queues it for any event) and :data:`ENTITY` for a pod group entity
      (its members' plugins decide, and change as members come and go). ``isPodWorthRequeuing``
      only asks the hints of the pod's rejectors whose registered event matches: a pod none of
      whose keys is interested in an event would be skipped by it, so leaving it out changes
      nothing.

    Candidates are returned in the map's order (a sequence number per pod, kept while the pod
    stays, as a Go map update keeps a key), so a move is the same with or without the indexes.
    Add and remove pods with :meth:`add` and :meth:`pop` only; a stored pod's gating plugin changes
    through :meth:`regroup`.
    """

    __slots__ = ("_record", "_profile_of", "_groups", "_group_of", "_by_key", "_keys_of", "_seq", "_next_seq")

    def __init__(self, record: Callable[[str, str], None], profile_of: Callable[[Pod], str] | None = None):
        super().__init__()
        self._record = record
        self._profile_of = profile_of or (lambda pod: pod.scheduler_name)
        #: gating plugin ("" for none) -> uid -> pinfo, each group in the order of the map
        self._groups: dict[str, dict[str, QueuedPodInfo]] = {"": {}}
        #: uid -> the group it is stored in (the gating plugin when it was added or regrouped)
        self._group_of: dict[str, str] = {}
        #: rejector key -> uid -> pinfo, for the pods not gated (any order: see candidates)
        self._by_key: dict[Any, dict[str, QueuedPodInfo]] = {}
        #: uid -> the rejector keys it is indexed under (pods not gated only)
        self._keys_of: dict[str, tuple] = {}
        #: uid -> its place in the map's order
        self._seq: dict[str, int] = {}
        self._next_seq = 0

    def add(self, pinfo: QueuedPodInfo, event: str | None) -> None:
        """Add or replace the pod; ``event`` names what brought a new one (for the metric; None:
        not counted, for a pod put back without an attempt, see ``PriorityQueue.park``)."""
        uid = entity_key(pinfo)
        if uid not in self:
            if event is not None:
                self._record("unschedulable", event)
            dict.__setitem__(self, uid, pinfo)
            self._seq[uid] = self._next_seq
            self._next_seq += 1
            self._group_of[uid] = pinfo.gating_plugin
            self._groups.setdefault(pinfo.gating_plugin, {})[uid] = pinfo
            if not pinfo.gating_plugin:
                self._index(uid, pinfo)
            return
        dict.__setitem__(self, uid, pinfo)  # keeps its place in the map, as a Go map update
        self.regroup(pinfo)
        if not pinfo.gating_plugin:
            self._index(uid, pinfo)  # its rejectors may differ from the replaced one's

    def pop(self, uid: str, default: Any = None) -> Any:
        """Remove and return the pod ``uid`` (``default`` when absent)."""
        pinfo = dict.pop(self, uid, None)
        if pinfo is None:
            return default
        del self._groups[self._group_of.pop(uid)][uid]
        del self._seq[uid]
        self._unindex(uid)
        return pinfo

    def _rejector_keys(self, pinfo: QueuedPodInfo) -> tuple:
        if pinfo.pod is None:
            return (ENTITY,)
        plugins = pinfo.unschedulable_plugins | pinfo.pending_plugins
        if not plugins:
            return (NO_REJECTOR,)
        profile = self._profile_of(pinfo.pod)
        return tuple((profile, plugin) for plugin in plugins)

    def _index(self, uid: str, pinfo: QueuedPodInfo) -> None:
        keys = self._rejector_keys(pinfo)
        old = self._keys_of.get(uid)
        if old == keys:
            for key in keys:
                self._by_key[key][uid] = pinfo
            return
        if old is not None:
            self._unindex(uid)
        self._keys_of[uid] = keys
        by_key = self._by_key
        for key in keys:
            bucket = by_key.get(key)
            if bucket is None:
                bucket = by_key[key] = {}
            bucket[uid] = pinfo

    def _unindex(self, uid: str) -> None:
        keys = self._keys_of.pop(uid, None)
        if keys is None:
            return
        by_key = self._by_key
        for key in keys:
            bucket = by_key[key]
            del bucket[uid]
            if not bucket:
                del by_key[key]

    def regroup(self, pinfo: QueuedPodInfo) -> None:
        """Re-index a stored pod whose gating plugin may have changed (a no-op otherwise)."""
        uid = entity_key(pinfo)
        old = self._group_of.get(uid)
        if old is None or dict.get(self, uid) is not pinfo:
            return
        group = self._groups[old]
        if old == pinfo.gating_plugin:
            group[uid] = pinfo
            return
        del group[uid]
        self._group_of[uid] = plugin = pinfo.gating_plugin
        if plugin:
            self._unindex(uid)
        else:
            self._index(uid, pinfo)
        target = self._groups.setdefault(plugin, {})
        target[uid] = pinfo
        if next(reversed(self)) != uid:
            # the group's order must stay the map's: rebuild it in that order (rare)
            self._groups[plugin] = {u: p for u, p in self.items() if self._group_of[u] == plugin}

    def candidates(self, gating_plugin_interested: Callable[[str], bool],
                   rejector_interested: Callable[[Any], bool] | None = None) -> list[QueuedPodInfo]:
        """The pods an event may move, in the map's order: the pods not gated (only those with a
        rejector key ``rejector_interested(key)`` says is interested, when given), and the gated
        pods whose gating plugin is interested (``gating_plugin_interested(plugin)``)."""
        interested = [plugin for plugin, group in self._groups.items()
                      if plugin and group and gating_plugin_interested(plugin)]
        if rejector_interested is None:
            if not interested:
                return list(self._groups[""].values())
            if len(interested) == sum(1 for plugin, group in self._groups.items() if plugin and group):
                return list(self.values())
            wanted = {"", *interested}
            group_of = self._group_of
            return [p for uid, p in self.items() if group_of[uid] in wanted]
        found: dict[str, QueuedPodInfo] = {}
        for key, bucket in self._by_key.items():
            if rejector_interested(key):
                found.update(bucket)
        for plugin in interested:
            found.update(self._groups[plugin])
        if len(found) == len(self):
            return list(self.values())
        if not interested and len(found) == len(self._groups[""]):
            return list(self._groups[""].values())  # every pod not gated (e.g. all rejected by one plugin)
        seq = self._seq
        return [found[uid] for uid in sorted(found, key=seq.__getitem__)]

    def num_gated(self) -> int:
        """How many of the pods are gated."""
        return len(self) - len(self._groups[""])

    def __setitem__(self, uid: str, pinfo: QueuedPodInfo) -> None:
        raise TypeError("UnschedulablePods: use add(pinfo, event)")

    def __delitem__(self, uid: str) -> None:
        raise TypeError("UnschedulablePods: use pop(uid)")


# ------------------------------------------------------------------------------------------------
# PriorityQueue
# ------------------------------------------------------------------------------------------------
def _pre_enqueue_entries(plugins: list[Any]) -> list[tuple[str, Any, bool, bool]]:
    """A profile's PreEnqueue plugins as the queue runs them: (name, plugin, whether it answers
    per pod group, whether it answers from the pod object alone). One mark per queued pod records
    the object the pod-only plugin let through, so only a profile with one such plugin uses it."""
    pod_only = [bool(getattr(pl, "pod_only", False)) for pl in plugins]
    one = sum(pod_only) == 1
    return [(pl.name(), pl, bool(getattr(pl, "per_pod_group", False)), one and only)
            for pl, only in zip(plugins, pod_only)]


class PriorityQueue(PodGroupQueueMixin, PodNominator, PodActivator):
    """Upstream ``PriorityQueue`` (``SchedulingQueue``), single-threaded, with queueing hints.

    ``less_fn(a, b)`` is the QueueSort ``less`` over :class:`QueuedPodInfo` (one for all profiles).
    ``pre_enqueue_plugins`` maps a profile name to its PreEnqueue plugins (in order);
    ``queueing_hints`` maps a profile name to ``{plugin name: [ClusterEventWithHint, ...]}`` (a
    plugin's ``events_to_register()``; a ``None`` hint function means Queue). ``profile_of(pod)``
    names the pod's profile (default ``pod.scheduler_name``). ``metrics(name, labels)`` is called
    for the queue's incoming-pods counter (``"queue_incoming_pods"``, ``{"queue", "event"}``).
    ``pod_lister`` is handed to the :class:`~fastsched.scheduler.backend.queue.nominator.Nominator`.
    ``pop_from_backoff_q=False`` gives the pre-1.33 behaviour (no ordering windows, no popping
    from backoffQ, PreEnqueue run when leaving backoffQ). ``sort_key``, when given, must order as
    ``less_fn`` (``less_fn(a, b) == (sort_key(a) < sort_key(b))``); activeQ then sorts by it.
    ``generic_workload``: GenericWorkload, member pods queued as pod group entities
    (:mod:`.pod_groups`); ``composite_pod_group``: CompositePodGroup, an entity per root
    CompositePodGroup covering its tree (:mod:`.workload_forest`).
    """

    _queue_error = QueueError

    def __init__(self, less_fn: Callable[[QueuedPodInfo, QueuedPodInfo], bool], clock: Any = None, *,
                 pod_initial_backoff: float = DEFAULT_POD_INITIAL_BACKOFF,
                 pod_max_backoff: float = DEFAULT_POD_MAX_BACKOFF,
                 pod_max_in_unschedulable_pods_duration: float = DEFAULT_POD_MAX_IN_UNSCHEDULABLE_PODS_DURATION,
                 pre_enqueue_plugins: Mapping[str, Iterable[Any]] | None = None,
                 queueing_hints: Mapping[str, Mapping[str, Iterable[Any]]] | None = None,
                 profile_of: Callable[[Pod], str] | None = None,
                 metrics: Callable[[str, dict], None] | None = None,
                 pod_lister: PodLister | None = None,
                 pop_from_backoff_q: bool = True,
                 sort_key: Callable[[QueuedPodInfo], Any] | None = None,
                 pod_signers: Mapping[str, Callable[[Pod], Any]] | None = None, generic_workload: bool = False,
                 composite_pod_group: bool = False):
        if clock is None:
            from ....clock import VirtualClock
            clock = VirtualClock()
        self.clock = clock
        self.less_fn = less_fn
        self.pod_max_in_unschedulable_pods_duration = float(pod_max_in_unschedulable_pods_duration)
        self.pop_from_backoff_q = bool(pop_from_backoff_q)
        self._profile_of = profile_of or (lambda pod: pod.scheduler_name)
        #: scheduler name -> its profile's Framework.sign_pod (upstream WithPodSigners): None when
        #: OpportunisticBatching is off
        self._pod_signers = dict(pod_signers) if pod_signers is not None else None
        self._metrics = metrics
        #: the run of adds begin_add_run started: their QueuedPodInfos for activeQ, in order
        self._deferred_adds: list[QueuedPodInfo] | None = None
        #: called with a pod's QueuedPodInfo when PreEnqueue gates it, releases it, or gates it for
        #: another reason (the Scheduler keeps the pod's PodResult current with it)
        self.on_gating_change: Callable[[QueuedPodInfo], None] | None = None

        self._pre_enqueue: dict[str, list[Any]] = {p: list(pls) for p, pls in (pre_enqueue_plugins or {}).items()}
        #: profile -> [(name, plugin, answers per pod group, answers from the pod object alone)] of
        #: its PreEnqueue plugins: a gang's members each run them on every member added (upstream's
        #: loop, N^2/2 runs for a gang of N) and all of them again at the gang's release
        self._pre_enqueue_entries: dict[str, list[tuple[str, Any, bool, bool]]] = {
            p: _pre_enqueue_entries(pls) for p, pls in self._pre_enqueue.items()}
        # profile -> {registered event: [(plugin name, hint fn)]}, and plugin -> registered events
        self._hint_map: dict[str, dict[ClusterEvent, list[tuple[str, Any]]]] = {}
        self._plugin_to_events: dict[str, list[ClusterEvent]] = {}
        for profile, per_plugin in (queueing_hints or {}).items():
            m: dict[ClusterEvent, list[tuple[str, Any]]] = {}
            for plugin_name, registrations in per_plugin.items():
                for reg in registrations or ():
                    if isinstance(reg, ClusterEventWithHint):
                        event, fn = reg.event, reg.queueing_hint_fn
                    else:  # a bare ClusterEvent
                        event, fn = reg, None
                    m.setdefault(event, []).append((plugin_name, fn))
                    self._plugin_to_events.setdefault(plugin_name, []).append(event)
            self._hint_map[profile] = m
        self._event_of_interest: dict[ClusterEvent, bool] = {}
        self._event_of_interest_by_id: dict[int, tuple[ClusterEvent, bool]] = {}
        #: (gating plugin, id(event)) -> (event, whether the plugin registered it): _gating_interested
        self._gating_known: dict[tuple[str, int], tuple[ClusterEvent, bool]] = {}
        #: id(event) -> (event, its label): _event_label
        self._labels_by_id: dict[int, tuple[ClusterEvent, str]] = {}
        #: id(event) -> (event, cluster_event_is_wildcard(event)): _is_wildcard
        self._wildcard_by_id: dict[int, tuple[ClusterEvent, bool]] = {}
        #: (profile, id(event)) -> _matching_entry's answer for the event
        self._matching: dict[tuple[str, int], tuple] = {}
        #: (rejector key, id(event)) -> (event, whether a plugin of the key registered it): _key_interested
        self._key_interest: dict[tuple[Any, int], tuple[ClusterEvent, bool]] = {}

        self._backoff_q = BackoffQueue(clock, pod_initial_backoff, pod_max_backoff, less_fn, self.pop_from_backoff_q,
                                       self._record, sort_key)
        self.pod_initial_backoff = self._backoff_q.pod_initial_backoff
        self.pod_max_backoff = self._backoff_q.pod_max_backoff
        self._active_q = ActiveQueue(Heap(self._less_active) if sort_key is None else KeyedHeap(sort_key),
                                     self._record, self._backoff_q if self.pop_from_backoff_q else None)
        self._unschedulable_pods = UnschedulablePods(self._record, self._profile_of)

        self.nominator = Nominator(pod_lister)
        self._init_pod_groups(generic_workload, composite_pod_group)
        #: the time the periodic flushes are counted from (used by :meth:`next_wakeup`)
        self.flush_origin = float(clock.now())

    # ==========================================================================================
    # less function (activeQ)
    # ==========================================================================================
    def _less_active(self, a: QueuedPodInfo, b: QueuedPodInfo) -> bool:
        return self.less_fn(a, b)

    # ==========================================================================================
    # Backoff (the rules are backoffQ's)
    # ==========================================================================================
    def backoff_duration(self, pinfo: QueuedPodInfo) -> float:
        """The backoff the pod gets for its failures (:meth:`.BackoffQueue.backoff_duration`)."""
        return self._backoff_q.backoff_duration(pinfo)

    def is_backing_off(self, pinfo: QueuedPodInfo) -> bool:
        """Upstream ``isPodBackingoff`` (:meth:`.BackoffQueue.is_backing_off`)."""
        return self._backoff_q.is_backing_off(pinfo)

    def backoff_expiration(self, pinfo: QueuedPodInfo) -> float:
        """The earliest time at which ``pinfo`` no longer backs off (:meth:`.BackoffQueue.backoff_expiration`)."""
        return self._backoff_q.backoff_expiration(pinfo)

    # ==========================================================================================
    # PreEnqueue
    # ==========================================================================================
    def _set_gating(self, pinfo: QueuedPodInfo, plugin: str) -> None:
        if pinfo.gating_plugin != plugin:
            pinfo.gating_plugin = plugin
            self._unschedulable_pods.regroup(pinfo)  # when PreEnqueue re-runs for a stored pod
        pinfo.gated = bool(plugin)
        if not plugin:
            pinfo.gating_message = ""

    def _run_pre_enqueue_plugins(self, pinfo: QueuedPodInfo, group_memo: dict | None = None) -> None:
        """Upstream ``runPreEnqueuePlugins``: the gating plugin first, then the others in order.
        ``group_memo`` (one pass over a pod group's members): the answers of the plugins that
        declare them per pod group (``per_pod_group``), asked once for the group."""
        before = (pinfo.gated, pinfo.gating_plugin, pinfo.gating_message)
        self._run_pre_enqueue_in_order(pinfo, group_memo)
        if self.on_gating_change is not None and pinfo.pod is not None and \
                (pinfo.gated, pinfo.gating_plugin, pinfo.gating_message) != before:
            self.on_gating_change(pinfo)

    def _run_pre_enqueue_in_order(self, pinfo: QueuedPodInfo, group_memo: dict | None) -> None:
        entries = self._pre_enqueue_entries.get(self._profile_of(pinfo.pod), ())
        gating = pinfo.gating_plugin
        if not gating and group_memo is None:
            # (the common case, a pod no plugin gates, e.g. every new pod: _run_pre_enqueue_plugin's
            # per-pod branch inlined, one frame fewer per plugin; the same calls and writes)
            pod = pinfo.pod
            for name, pl, _, pod_only in entries:
                if pod_only and pinfo.pod_only_passed is pod:
                    continue
                try:
                    s = pl.pre_enqueue(pod)
                except Exception as e:  # noqa: BLE001 - as _pre_enqueue_status
                    s = Status.from_error(e)
                if s is None or s.code() == Code.SUCCESS:
                    if pod_only:
                        pinfo.pod_only_passed = pod
                    continue
                pinfo.unschedulable_plugins.add(name)
                self._set_gating(pinfo, name)
                pinfo.gating_message = s.message()
                return
            pinfo.gated = False  # _set_gating(pinfo, ""): no plugin gated it before either
            pinfo.gating_message = ""
            return
        if gating:
            for entry in entries:
                if entry[0] == gating:
                    if not self._run_pre_enqueue_plugin(entry, pinfo, group_memo):
                        return
                    break
        for entry in entries:
            if gating and entry[0] == gating:
                continue
            if not self._run_pre_enqueue_plugin(entry, pinfo, group_memo):
                return
        self._set_gating(pinfo, "")

    def _run_pre_enqueue_plugin(self, entry: tuple[str, Any, bool, bool], pinfo: QueuedPodInfo,
                                group_memo: dict | None = None) -> bool:
        """``runPreEnqueuePlugin`` for ``entry`` (name, plugin, per pod group, pod object only)."""
        name, pl, per_group, pod_only = entry
        if group_memo is not None and per_group:
            known = group_memo.get(name)
            if known is None:
                s = self._pre_enqueue_status(pl, pinfo)
                # (the message too: every gated member of the group gets it)
                known = group_memo[name] = (s, None if s is None or s.code() == Code.SUCCESS else s.message())
            s, message = known
        else:
            # (_pre_enqueue_status inlined: every member of a gang runs its per-pod plugins here
            # at its arrival and again at the gang's release)
            pod = pinfo.pod
            if pod_only:
                # the answer is a function of the pod object, which let it through already: the
                # same Success again (a gang's release pass asks every member)
                if pinfo.pod_only_passed is pod:
                    return True
                try:
                    s = pl.pre_enqueue(pod)
                except Exception as e:  # noqa: BLE001 - as _pre_enqueue_status
                    s = Status.from_error(e)
                if s is None or s.code() == Code.SUCCESS:
                    pinfo.pod_only_passed = pod
                    return True
            else:
                try:
                    s = pl.pre_enqueue(pod)
                except Exception as e:  # noqa: BLE001 - as _pre_enqueue_status
                    s = Status.from_error(e)
            message = None
        if s is None or s.code() == Code.SUCCESS:
            return True
        pinfo.unschedulable_plugins.add(name)
        self._set_gating(pinfo, name)
        pinfo.gating_message = s.message() if message is None else message
        return False

    @staticmethod
    def _pre_enqueue_status(pl: Any, pinfo: QueuedPodInfo) -> Status | None:
        try:
            return pl.pre_enqueue(pinfo.pod)
        except Exception as e:  # noqa: BLE001 - a crashing plugin gates the pod, like an Error status
            return Status.from_error(e)

    def _gating_interested(self, plugin: str, event: ClusterEvent, memo: dict[str, bool]) -> bool:
        """Whether the gating plugin ``plugin`` registered ``event`` (could ungate its pods);
        ``memo`` keeps the answer per plugin for one event."""
        interested = memo.get(plugin)
        if interested is None:
            # The registrations are fixed at construction: the answer is kept per (plugin, event),
            # keyed by the event's identity as _is_event_of_interest's (a gang's members each
            # bring an UnscheduledPodAdd, asked about the same gating plugin twice)
            known = self._gating_known.get((plugin, id(event)))
            if known is not None and known[0] is event:
                interested = known[1]
            else:
                interested = match_any_cluster_event(event, self._plugin_to_events.get(plugin, []))
                if len(self._gating_known) < 1024:  # bounded: events built per call pass by
                    self._gating_known[(plugin, id(event))] = (event, interested)
            memo[plugin] = interested
        return interested

    def _event_candidates(self, event: ClusterEvent) -> list[QueuedPodInfo]:
        """The unschedulable pods ``event`` may move (upstream's MoveAll considers them all): the
        gated ones whose gating plugin registered ``event`` (the others stay gated whatever their
        hints say), and the ones not gated that ``isPodWorthRequeuing`` would not skip without
        asking a hint: a pod with no rejector plugin, a pod group entity, a pod of a profile
        without hints, or a pod with a rejector plugin that registered an event ``event`` matches.
        For a wildcard event, every pod, gated or not (upstream re-checks gated entities on a
        wildcard event so that incomplete hints cannot keep a pod gated forever)."""
        if self._is_wildcard(event):
            return list(self._unschedulable_pods.values())
        memo: dict[str, bool] = {}
        gating = lambda plugin: self._gating_interested(plugin, event, memo)  # noqa: E731
        return self._unschedulable_pods.candidates(gating, lambda key: self._key_interested(key, event))

    def _key_interested(self, key: Any, event: ClusterEvent) -> bool:
        """Whether a pod indexed under the rejector ``key`` (:class:`UnschedulablePods`) may be
        queued by the (not wildcard) ``event``: see :meth:`_event_candidates`."""
        if key == NO_REJECTOR or key == ENTITY:
            return True
        known = self._key_interest.get((key, id(event)))
        if known is not None and known[0] is event:
            return known[1]
        profile, plugin = key
        entry = self._matching.get((profile, id(event)))
        if entry is None or entry[0] is not event:
            entry = self._matching_entry(profile, event)
        matching = entry[2]
        interested = matching is None or any(name == plugin for name, _ in matching)
        if len(self._key_interest) < 4096:  # bounded: events built per call pass by
            self._key_interest[(key, id(event))] = (event, interested)
        return interested

    # ==========================================================================================
    # moving pods between the sub-queues
    # ==========================================================================================
    def _record(self, queue: str, event: str) -> None:
        if self._metrics is not None:
            self._metrics("queue_incoming_pods", {"queue": queue, "event": event})

    def _move_to_active_q(self, pinfo: QueuedPodInfo, event: str, moves_from_backoff_q: bool = False) -> bool:
        """Upstream ``moveToActiveQ``: PreEnqueue, then activeQ, or unschedulablePods when gated."""
        if pinfo.pod is None:  # a pod group entity
            return self._move_group_to_active_q(pinfo, event, moves_from_backoff_q)
        if not (self.pop_from_backoff_q and moves_from_backoff_q):
            self._run_pre_enqueue_plugins(pinfo)
        uid = pinfo.pod.uid
        if pinfo.gating_plugin:
            return self._move_to_active_q_gated(pinfo, event)
        if pinfo.initial_attempt_timestamp is None:
            pinfo.initial_attempt_timestamp = self.clock.now()
        self._unschedulable_pods.pop(uid, None)
        self._backoff_q.delete(uid)
        self._active_q.add(pinfo, event)
        return True

    def _move_to_active_q_gated(self, pinfo: QueuedPodInfo, event: str) -> bool:
        """:meth:`_move_to_active_q` of a pod PreEnqueue gates: to unschedulablePods (False)."""
        # A gated pod makes no attempt (whose failure would clear the flag): clear it here, so
        # that a later move by another event does not count as the flush's.
        pinfo.was_flushed_from_unschedulable = False
        uid = pinfo.pod.uid
        if uid in self._active_q or self._backoff_q.has(uid) or uid in self._unschedulable_pods:
            return False
        self._unschedulable_pods.add(pinfo, event)
        return False

    def _move_to_backoff_q(self, pinfo: QueuedPodInfo, event: str) -> bool:
        """Upstream ``moveToBackoffQ``: with PopFromBackoffQ, PreEnqueue runs here (gated -> unschedulable)."""
        if pinfo.pod is None:  # a pod group entity
            return self._move_group_to_backoff_q(pinfo, event)
        uid = pinfo.pod.uid
        if self.pop_from_backoff_q:
            self._run_pre_enqueue_plugins(pinfo)
            if pinfo.gating_plugin:
                pinfo.was_flushed_from_unschedulable = False  # as in _move_to_active_q
                if uid not in self._unschedulable_pods:
                    self._unschedulable_pods.add(pinfo, event)
                return False
        self._unschedulable_pods.pop(uid, None)
        self._backoff_q.add(pinfo, event)
        return True

    def _requeue_pod_with_queueing_strategy(self, pinfo: QueuedPodInfo, strategy: int, event: str) -> str:
        """Upstream ``requeuePodWithQueueingStrategy``; returns the queue the pod went to."""
        if strategy == QUEUE_SKIP:
            self._unschedulable_pods.add(pinfo, event)
            return UNSCHEDULABLE_Q
        if strategy == QUEUE_AFTER_BACKOFF and self._backoff_q.is_backing_off(pinfo):
            return BACKOFF_Q if self._move_to_backoff_q(pinfo, event) else UNSCHEDULABLE_Q
        return ACTIVE_Q if self._move_to_active_q(pinfo, event) else UNSCHEDULABLE_Q

    def _new_queued_pod_info(self, pod: Pod) -> QueuedPodInfo:
        qpi = QueuedPodInfo(PodInfo(pod), self.clock.now())
        if self._pod_signers is not None:
            qpi.pod_signature = self._sign_pod(pod)
        return qpi

    def _sign_pod(self, pod: Pod) -> Any:
        """Upstream ``signPod``: the pod's signature by its profile (None without signers, or when
        no profile has the pod's scheduler name)."""
        if self._pod_signers is None:
            return None
        signer = self._pod_signers.get(pod.scheduler_name)
        return signer(pod) if signer is not None else None

    # ==========================================================================================
    # SchedulingQueue API
    # ==========================================================================================
    def add(self, pod: Pod) -> QueuedPodInfo:
        """A new unscheduled pod: PreEnqueue, then activeQ (or unschedulablePods when gated); a
        pod group member joins its group instead (:mod:`.pod_groups`). Returns the pod's
        QueuedPodInfo (what :meth:`get_pod` finds for it until it is popped)."""
        pinfo = self._new_queued_pod_info(pod)
        # upstream addPod: the nomination is recorded first, also for a pod PreEnqueue gates (it
        # never reaches activeQ), and only here: a later move to activeQ does not renominate
        self.nominator.add_nominated_pod(pinfo.pod_info, None)
        if self.generic_workload and pod.scheduling_group is not None:
            self._add_pod_group_member(pinfo)
            return pinfo
        deferred = self._deferred_adds
        if deferred is None:
            self._move_to_active_q(pinfo, _UNSCHEDULED_POD_ADD)
            return pinfo
        # _move_to_active_q with activeQ's add kept for end_add_run (see begin_add_run)
        self._run_pre_enqueue_plugins(pinfo)
        if pinfo.gating_plugin:
            self._move_to_active_q_gated(pinfo, _UNSCHEDULED_POD_ADD)
            return pinfo
        if pinfo.initial_attempt_timestamp is None:
            pinfo.initial_attempt_timestamp = self.clock.now()
        uid = pod.uid
        self._unschedulable_pods.pop(uid, None)
        self._backoff_q.delete(uid)
        deferred.append(pinfo)
        return pinfo

    def begin_add_run(self) -> bool:
        """Start a run of :meth:`add` calls whose activeQ adds are made at once by
        :meth:`end_add_run` (one heap call; the QueuedPodInfos, PreEnqueue calls, nominations and
        the other sub-queues' changes are made by each ``add`` as before). activeQ is not read by
        ``add`` of a pod (a gated pod asks whether activeQ holds its own uid, which no earlier pod
        of the run has: the Cluster's run holds new uids), so the pods after ``end_add_run`` are
        where one ``add`` each leaves them, in the same order. Not with GenericWorkload (a new
        member may complete a gang, and the handler then moves pods by reading the queue):
        returns False and ``add`` is as before."""
        if self.generic_workload or self._deferred_adds is not None:
            return False
        self._deferred_adds = []
        return True

    def end_add_run(self) -> None:
        """activeQ's adds of the run :meth:`begin_add_run` started, in the order of the adds."""
        deferred, self._deferred_adds = self._deferred_adds, None
        if deferred:
            self._active_q.add_pods(deferred, _UNSCHEDULED_POD_ADD, record=self._metrics is not None)

    def activate(self, pods: Mapping[str, Pod] | Iterable[Pod]) -> None:
        """Move the given pods from unschedulablePods/backoffQ to activeQ (PodActivator).

        A pod found in neither but in flight gets a ForceActivate event recorded, so it is
        requeued when it comes back; unknown pods are ignored.
        """
        if isinstance(pods, UnscheduledPods) and self.generic_workload:
            self._activate_unscheduled_members(pods.state)
            return
        items = pods.values() if isinstance(pods, Mapping) else pods
        # the pod groups looked up by this call (whether the PodGroup is known): GangScheduling's
        # Permit activates every other member of its gang, N of them for each of N members. A
        # second activation of a root in one call finds nothing to move (the first moved it to
        # activeQ, or it is not waiting, or it is still gated: the same PreEnqueue answers, nothing
        # having changed in between), so it is not tried again: the member is only remembered if
        # in flight, as after a failed activation.
        groups: dict[tuple[str, str], bool] | None = None
        generic_workload = self.generic_workload
        force_activated = self._active_q.force_activated
        for pod in list(items):
            if generic_workload and pod.scheduling_group is not None:
                group = (pod.namespace, pod.scheduling_group.pod_group_name or "")
                if groups is None:
                    groups = {}
                has_root = groups.get(group)
                if has_root is None:
                    root = self.workload_forest.root_for_pod(pod)
                    groups[group] = has_root = root is not None
                    if not has_root:  # upstream: no root, nothing to activate or remember
                        continue
                    if self._activate_entity(str(root)):
                        continue
                elif not has_root:
                    continue
            elif self._activate_entity(pod.uid):
                continue
            force_activated(pod)  # (its ForceActivate event, when in flight)

    def _activate_unscheduled_members(self, state: PodGroupState) -> None:
        """:meth:`activate` of one group's unscheduled members (``state.unscheduled_pods()``, what
        GangScheduling's Permit activates on each member's Permit): the same as the loop above
        for those pods, which are one group's, without walking them when the walk cannot record
        anything new. It records a ForceActivate mark for each member in flight; a later walk
        over the same state finds every such member marked already (with the same pod object)
        unless a member joined the unscheduled set or was replaced (``state.additions``) or a pod
        went in flight (``last_in_flight_seq``) since: a mark only goes with its pod's ``done()``,
        which takes the pod out of flight. So a gang of N costs O(N) here, not O(N^2)."""
        unscheduled = state.unscheduled
        if not unscheduled:
            return
        all_pods = state.all_pods
        root = self.workload_forest.root_for_pod(all_pods[next(iter(unscheduled))])
        if root is None:  # upstream: no root, nothing to activate or remember
            return
        activated = self._activate_entity(str(root))
        if activated and len(unscheduled) == 1:
            return
        active_q = self._active_q
        memo = (active_q, state.additions, active_q.last_in_flight_seq)
        if state.activation_memo != memo:
            force_activated = active_q.force_activated
            members = iter(list(unscheduled))
            if activated:  # (the loop above: the member whose root it moved gets no mark)
                next(members)
            for uid in members:
                force_activated(all_pods[uid])
            if not activated:
                state.activation_memo = memo

    def _activate_entity(self, uid: str) -> bool:
        moves_from_backoff_q = False
        pinfo = self._unschedulable_pods.get(uid)
        if pinfo is None:
            pinfo = self._backoff_q.get(uid)
            if pinfo is None:
                return False
            self._backoff_q.delete(uid)
            moves_from_backoff_q = True
        return self._move_to_active_q(pinfo, FORCE_ACTIVATE, moves_from_backoff_q)

    def scheduling_cycle(self) -> int:
        """The number of pods popped so far."""
        return self._active_q.scheduling_cycle()

    def pop(self) -> QueuedPodInfo | None:
        """Take the head of activeQ, or (PopFromBackoffQ) of podBackoffQ when activeQ is empty.

        Increments ``attempts`` and the scheduling cycle, marks the pod in flight (events received
        from now on are recorded for it) and clears its rejector plugins for the next attempt.
        Returns None when there is nothing to pop (upstream blocks instead).
        """
        pinfo = self._active_q.pop()
        if pinfo is not None and pinfo.initial_attempt_timestamp is None:
            pinfo.initial_attempt_timestamp = self.clock.now()
        if pinfo is not None and self.generic_workload:
            self.last_popped_entity = entity_key(pinfo)
        return pinfo

    def done(self, uid: str) -> None:
        """The pod's scheduling attempt is over: stop recording events for it."""
        self._active_q.done(uid)

    def in_flight(self, uid: str) -> bool:
        return self._active_q.in_flight(uid)

    def in_flight_pods(self) -> list[Pod]:
        return self._active_q.in_flight_pods()

    def in_flight_events(self) -> list[InFlightEvent]:
        return self._active_q.in_flight_events()

    def _determine_scheduling_hint_for_in_flight_pod(self, pinfo: QueuedPodInfo) -> int:
        if not pinfo.unschedulable_plugins and not pinfo.pending_plugins:
            # No rejector: an error (e.g. an API failure) brought the pod back; retry after backoff.
            return QUEUE_AFTER_BACKOFF
        events = self._active_q.cluster_events_for_pod(pinfo)
        if events is None:
            return QUEUE_AFTER_BACKOFF
        strategy = QUEUE_SKIP
        for e in events:
            s = self._is_pod_worth_requeuing(pinfo, e.event, e.old_obj, e.new_obj)
            if s == QUEUE_SKIP:
                continue
            if s == QUEUE_IMMEDIATELY:
                return QUEUE_IMMEDIATELY
            strategy = QUEUE_AFTER_BACKOFF
            if not pinfo.pending_plugins:
                return QUEUE_AFTER_BACKOFF
        return strategy

    def add_unschedulable_if_not_present(self, pinfo: QueuedPodInfo, scheduling_cycle: int) -> QueueError | None:
        """Put back a pod whose scheduling attempt failed (always ends its in-flight state).

        Counts the failure (``consecutive_errors_count`` when it has no rejector plugin, else
        ``unschedulable_count`` with the error count reset), restarts its timestamp, then replays
        the events received while it was in flight through its rejectors' hints: Queue from a
        Pending plugin -> activeQ; other Queue -> backoffQ (activeQ once backed off); all Skip ->
        unschedulablePods. No rejector plugin -> backoffQ (the error queue). Returns a
        :class:`QueueError` (not raised) when the pod is already queued.
        """
        uid = pinfo.pod.uid
        try:
            if uid in self._unschedulable_pods:
                return QueueError(f"Pod {pinfo.pod.key} is already present in unschedulable queue")
            if uid in self._active_q:
                return QueueError(f"Pod {pinfo.pod.key} is already present in the active queue")
            if self._backoff_q.has(uid):
                return QueueError(f"Pod {pinfo.pod.key} is already present in the backoff queue")
            if not pinfo.unschedulable_plugins and not pinfo.pending_plugins:
                pinfo.consecutive_errors_count += 1
            else:
                pinfo.unschedulable_count += 1
                pinfo.consecutive_errors_count = 0
            pinfo.timestamp = self.clock.now()
            pinfo.backoff_expiration = None
            # back from an attempt: the flush's flag and time no longer apply
            pinfo.was_flushed_from_unschedulable = False
            pinfo.flush_timestamp = None
            if self.generic_workload:
                if pinfo.pod.scheduling_group is not None:  # addUnschedulablePodGroupMember
                    self.done(uid)
                    self._add_unschedulable_pod_group_member(pinfo)
                    return None
                self.last_popped_entity = None  # clearPoppedEntity
            hint = self._determine_scheduling_hint_for_in_flight_pod(pinfo)
            self._requeue_pod_with_queueing_strategy(pinfo, hint, SCHEDULE_ATTEMPT_FAILURE)
            return None
        finally:
            self.done(uid)

    def park(self, pinfo: QueuedPodInfo, unschedulable_plugins: Iterable[str], pending_plugins: Iterable[str]) -> None:
        """Put a pod just popped back into unschedulablePods *without* a scheduling attempt, as it
        was after its last failure (its rejector plugins and counts; the pop's ``attempts``
        increment undone), its timestamp now: parked with its old one, a pod the unschedulable
        timeout moved would be due again at once, and the flush would move it back at the same
        instant forever. Not an upstream operation: ``Scheduler.run()`` without ``until`` parks a
        pod that already failed twice on the committed cluster as it is, so that pods whose
        bindings keep failing cannot keep each other going forever. Events move it out again
        through its rejectors' hints, as any unschedulable pod."""
        uid = pinfo.pod.uid
        try:
            pinfo.attempts -= 1
            pinfo.timestamp = self.clock.now()
            pinfo.unschedulable_plugins = set(unschedulable_plugins)
            pinfo.pending_plugins = set(pending_plugins)
            if uid not in self._unschedulable_pods and uid not in self._active_q and not self._backoff_q.has(uid):
                self._unschedulable_pods.add(pinfo, None)
        finally:
            self.done(uid)

    def flush_backoff_q_completed(self) -> int:
        """Move every pod whose backoff completed from backoffQ to activeQ; returns how many moved."""
        moved = 0
        for pinfo in self._backoff_q.pop_all_backoff_completed():
            if self._move_to_active_q(pinfo, BACKOFF_COMPLETE, True):
                moved += 1
        return moved

    def flush_unschedulable_pods_leftover(self) -> None:
        """Upstream ``flushUnschedulableEntitiesLeftover``: move the entities unschedulable (or
        flushed) for longer than podMaxInUnschedulablePodsDuration (a wildcard event: gated ones
        too, which rerun PreEnqueue). Each one moved gets the flush's time and flag: a gated pod
        that stays gated is due again a whole duration after the flush, not at every tick."""
        now = self.clock.now()
        limit = self.pod_max_in_unschedulable_pods_duration
        to_move = []
        for p in self._unschedulable_pods.values():
            last = p.timestamp
            if p.flush_timestamp is not None and p.flush_timestamp > last:
                last = p.flush_timestamp
            if now - last > limit:
                p.was_flushed_from_unschedulable = True
                p.flush_timestamp = now
                to_move.append(p)
        if to_move:
            self._move_pods_to_active_or_backoff_queue(to_move, EVENT_UNSCHEDULABLE_TIMEOUT, None, None)

    def update(self, old_pod: Pod | None, new_pod: Pod) -> None:
        """An unscheduled pod changed.

        In flight: the update events are recorded for the pod. In activeQ/backoffQ: updated in
        place. In unschedulablePods: updated, then each update event is checked against its
        rejectors' hints (a gate removal re-runs PreEnqueue on the way out). Unknown: added to
        activeQ like :meth:`add`.
        """
        # the pod itself is updated: upstream labels the events TargetPod (isTargetPod=true)
        events = pod_scheduling_properties_change(new_pod, old_pod, True) if old_pod is not None else \
            [EVENT_TARGET_POD_UPDATE]
        if self.generic_workload and (old_pod or new_pod).scheduling_group is not None:
            self._update_pod_group_member(old_pod or new_pod, new_pod, events)
            return
        if self._active_q.add_events_if_pod_in_flight(old_pod, new_pod, events):
            return
        if old_pod is not None:
            uid = old_pod.uid
            pinfo = self._active_q.update(uid, new_pod)
            if pinfo is None:
                pinfo = self._backoff_q.update(uid, new_pod)
            if pinfo is not None:
                pinfo.pod_signature = self._sign_pod(new_pod)
                self.nominator.update_nominated_pod(old_pod, pinfo.pod_info)
                return
        pinfo = self._unschedulable_pods.get(new_pod.uid)
        if pinfo is not None:
            pinfo.pod_info.update(new_pod)
            pinfo.pod_signature = self._sign_pod(new_pod)
            self.nominator.update_nominated_pod(old_pod if old_pod is not None else new_pod, pinfo.pod_info)
            for evt in events:
                hint = self._is_pod_worth_requeuing(pinfo, evt, old_pod, new_pod)
                queue = self._requeue_pod_with_queueing_strategy(pinfo, hint, event_label(evt))
                if queue == ACTIVE_Q or (self.pop_from_backoff_q and queue == BACKOFF_Q):
                    break
            return
        # in no queue: upstream's addPod, so the move is labelled UnscheduledPodAdd (not Update)
        self.add(new_pod)

    def delete(self, pod: Pod) -> None:
        """Remove the pod from whichever sub-queue holds it, and its nomination."""
        self.nominator.delete_nominated_pod_if_exists(pod)
        if self.generic_workload and pod.scheduling_group is not None:
            self._delete_pod_group_member(pod)
            return
        uid = pod.uid
        if self._active_q.delete(uid) is not None:
            return
        if self._backoff_q.delete(uid):
            return
        self._unschedulable_pods.pop(uid, None)

    def assigned_pod_added(self, pod: Pod) -> None:
        """A bound pod appeared (upstream ``addAssignedPodToCache``): ``MoveAllToActiveOrBackoffQueue``
        with AssignedPodAdd; the rejectors' hints decide."""
        self._move_all_to_active_or_backoff_queue(EVENT_ASSIGNED_POD_ADD, None, pod, None)

    def assigned_pod_updated(self, old_pod: Pod, new_pod: Pod, event: ClusterEvent | None = None) -> None:
        """A bound pod changed (upstream ``updateAssignedPodInCache``): ``MoveAllToActiveOrBackoffQueue``
        with each event of :func:`pod_scheduling_properties_change` in turn (``event``: that one only)."""
        events = pod_scheduling_properties_change(new_pod, old_pod) if event is None else (event,)
        for evt in events:
            self._move_all_to_active_or_backoff_queue(evt, old_pod, new_pod, None)

    def move_all_to_active_or_backoff_queue(self, event: ClusterEvent, old_obj: Any = None, new_obj: Any = None,
                                            pre_check: Callable[[Pod], bool] | None = None) -> None:
        """A cluster event: requeue the unschedulable pods it may help (per queueing hints).

        ``pre_check(pod)`` False keeps a pod out of consideration.
        """
        self._move_all_to_active_or_backoff_queue(event, old_obj, new_obj, pre_check)

    def _move_all_to_active_or_backoff_queue(self, event: ClusterEvent, old_obj: Any, new_obj: Any,
                                             pre_check: Callable[[Pod], bool] | None) -> None:
        if not self._is_event_of_interest(event):
            return
        if not self._unschedulable_pods:
            # nothing to move: only the in-flight pods hear the event (what the call below does
            # with no pods)
            self._active_q.add_event_if_any_in_flight(old_obj, new_obj, event)
            return
        pods = self._event_candidates(event)
        if pre_check is not None:
            pods = [p for p in pods if (pre_check(p.pod) if p.pod is not None
                                        else any(pre_check(pod) for pod in p.unscheduled_pods()))]
        self._move_pods_to_active_or_backoff_queue(pods, event, old_obj, new_obj)

    def _move_pods_to_active_or_backoff_queue(self, pinfos: list[QueuedPodInfo], event: ClusterEvent,
                                              old_obj: Any, new_obj: Any) -> None:
        if not self._is_event_of_interest(event):
            return
        label = self._event_label(event) if pinfos else ""
        gating_interested: dict[str, bool] = {}  # per gating plugin, for this event
        # a wildcard event (the unschedulable timeout) re-checks gated pods whatever their gating
        # plugin registered, so that incomplete hints cannot keep a pod gated forever
        check_gating = not self._is_wildcard(event)
        for pinfo in pinfos:
            if check_gating and pinfo.gating_plugin and \
                    not self._gating_interested(pinfo.gating_plugin, event, gating_interested):
                continue  # the gating plugin is not interested in this event: it cannot ungate the pod
            if pinfo.pod is None:  # a pod group entity: isEntityWorthRequeuing
                hint = self._is_entity_worth_requeuing(pinfo, event, old_obj, new_obj)
            else:
                hint = self._is_pod_worth_requeuing(pinfo, event, old_obj, new_obj)
            if hint == QUEUE_SKIP:
                continue
            self._unschedulable_pods.pop(entity_key(pinfo), None)
            self._requeue_pod_with_queueing_strategy(pinfo, hint, label)
        # Pods in flight may be rejected for reasons this event resolves: remember it for them.
        self._active_q.add_event_if_any_in_flight(old_obj, new_obj, event)

    def _event_label(self, event: ClusterEvent) -> str:
        """``event_label(event)``, kept by the event's identity (the events are mostly module
        constants, and every member of a gang brings one)."""
        return _kept_per_event(self._labels_by_id, event, event_label)

    def _is_wildcard(self, event: ClusterEvent) -> bool:
        """``cluster_event_is_wildcard(event)``, kept by the event's identity as :meth:`_event_label`
        (asked twice for every MoveAll: a gang's members each bring an UnscheduledPodAdd)."""
        return _kept_per_event(self._wildcard_by_id, event, cluster_event_is_wildcard)

    def _is_event_of_interest(self, event: ClusterEvent) -> bool:
        # The registrations are fixed at construction, so the answer per event is memoized. The
        # events are mostly module constants: look them up by identity first (hashing the
        # dataclass costs more), keeping the event in the entry so that its id cannot be reused.
        by_id = self._event_of_interest_by_id.get(id(event))
        if by_id is not None and by_id[0] is event:
            return by_id[1]
        known = self._event_of_interest.get(event)
        if known is not None:
            if len(self._event_of_interest_by_id) < 1024:  # bounded: events built per call pass by
                self._event_of_interest_by_id[id(event)] = (event, known)
            return known
        interesting = cluster_event_is_wildcard(event) or any(
            match_cluster_events(registered, event)
            for hint_map in self._hint_map.values() for registered in hint_map)
        self._event_of_interest[event] = interesting
        return interesting

    def _is_pod_worth_requeuing(self, pinfo: QueuedPodInfo, event: ClusterEvent, old_obj: Any,
                                new_obj: Any) -> int:
        """Upstream ``isPodWorthRequeuing``: ask the hint functions of the pod's rejector plugins."""
        unschedulable, pending = pinfo.unschedulable_plugins, pinfo.pending_plugins
        if not unschedulable and not pending:
            return QUEUE_AFTER_BACKOFF
        pod = pinfo.pod
        profile = self._profile_of(pod)
        entry = self._matching.get((profile, id(event)))
        if entry is None or entry[0] is not event:
            entry = self._matching_entry(profile, event)
        if entry[1]:  # a wildcard event
            # A wildcard event with a Pod in new_obj (ForceActivate) is for that pod only.
            if new_obj is not None and (not isinstance(new_obj, Pod) or new_obj.uid != pod.uid):
                return QUEUE_SKIP
            return QUEUE_AFTER_BACKOFF
        matching = entry[2]
        if matching is None:  # no hint map for the profile
            return QUEUE_AFTER_BACKOFF
        strategy = QUEUE_SKIP
        for plugin_name, fn in matching:
            if plugin_name not in unschedulable and plugin_name not in pending:
                continue
            if self._call_hint(fn, pod, old_obj, new_obj) == QueueingHint.QUEUE_SKIP:
                continue
            if plugin_name in pending:
                return QUEUE_IMMEDIATELY
            if not pending:
                return QUEUE_AFTER_BACKOFF
            strategy = QUEUE_AFTER_BACKOFF
        return strategy

    def _matching_entry(self, profile: str, event: ClusterEvent) -> tuple:
        """``(event, whether it is a wildcard, the (plugin name, hint fn) pairs of ``profile`` whose
        registered event matches it in the hint map's order, or None without a hint map)``,
        remembered per (profile, event): the registrations are fixed at construction, and a pod
        group's members ask once per member and event. Keyed by the event's identity (the events
        are mostly module constants; the entry keeps the event so that its id cannot be reused)."""
        hint_map = self._hint_map.get(profile)
        matching = None if hint_map is None else [
            pair for registered, fns in hint_map.items() if match_cluster_events(registered, event) for pair in fns]
        entry = (event, cluster_event_is_wildcard(event), matching)
        if len(self._matching) < 1024:  # bounded: events built per call pass by
            self._matching[(profile, id(event))] = entry
        return entry

    @staticmethod
    def _call_hint(fn: Any, pod: Pod, old_obj: Any, new_obj: Any) -> QueueingHint:
        """Run a hint function; None (no function), an error or an exception all mean Queue."""
        if fn is None:
            return QueueingHint.QUEUE
        try:
            result = fn(pod, old_obj, new_obj)
        except Exception:  # noqa: BLE001 - a failing hint must not strand the pod
            return QueueingHint.QUEUE
        if isinstance(result, tuple):
            hint, err = (result + (None,))[:2]
            if err is not None:
                return QueueingHint.QUEUE
        else:
            hint = result
        return QueueingHint.QUEUE_SKIP if hint == QueueingHint.QUEUE_SKIP else QueueingHint.QUEUE

    # ==========================================================================================
    # PodNominator (the queue resolves nominated pods to its current PodInfo, like upstream)
    # ==========================================================================================
    def add_nominated_pod(self, pod_info: PodInfo, nominating_info: Any | None = None) -> None:
        self.nominator.add_nominated_pod(pod_info, nominating_info)

    def delete_nominated_pod_if_exists(self, pod: Pod) -> None:
        self.nominator.delete_nominated_pod_if_exists(pod)

    def update_nominated_pod(self, old_pod: Pod, new_pod_info: PodInfo) -> None:
        self.nominator.update_nominated_pod(old_pod, new_pod_info)

    def nominated_pods_for_node(self, node_name: str) -> list[PodInfo]:
        out = []
        for pi in self.nominator.nominated_pods_for_node(node_name):
            uid = pi.pod.uid
            q = self._active_q.get(uid) or self._unschedulable_pods.get(uid) or self._backoff_q.get(uid)
            out.append(q.pod_info if q is not None else pi)
        return out

    def nominated_node_names(self) -> set[str]:
        return self.nominator.nominated_node_names()

    # ==========================================================================================
    # Introspection
    # ==========================================================================================
    def has(self, uid: str) -> bool:
        """Whether a sub-queue (active, backoff, unschedulable) holds the pod."""
        return uid in self._active_q or self._backoff_q.has(uid) or uid in self._unschedulable_pods

    def get(self, uid: str) -> QueuedPodInfo | None:
        """The pod's QueuedPodInfo from whichever sub-queue holds it (None when in flight or absent;
        a pod group member: its own, inside its group's entity)."""
        pinfo = self._backoff_q.get(uid) or self._unschedulable_pods.get(uid) or self._active_q.get(uid)
        if pinfo is None and self.generic_workload:
            found = self._find_member(uid)
            if found is not None:
                return found[1]
        return pinfo

    def get_pod(self, pod: Pod) -> QueuedPodInfo | None:
        """:meth:`get` for ``pod``: a pod group member's found through its group
        (:meth:`queued_member`), not by scanning every queued group."""
        if self.generic_workload and pod.scheduling_group is not None:
            return self.queued_member(pod)
        return self.get(pod.uid)

    def where(self, uid: str) -> str | None:
        """``"active"``, ``"backoff"``, ``"unschedulable"``, ``"in_flight"`` or None (a pod group
        member: where its group is; ``"pending"`` / ``"incomplete"`` for the members waiting for
        their group's cycle to end or for their PodGroup)."""
        if uid in self._active_q:
            return "active"
        if self._backoff_q.has(uid):
            return "backoff"
        if uid in self._unschedulable_pods:
            return "unschedulable"
        if self._active_q.in_flight(uid):
            return "in_flight"
        if self.generic_workload:
            found = self._find_member(uid)
            if found is not None:
                return found[2]
        return None

    def pods_in_active_q(self) -> list[Pod]:
        if self.generic_workload:
            return self._entity_pods(self._active_q.queue.values())
        return self._active_q.list()

    def pods_in_backoff_q(self) -> list[Pod]:
        return self._entity_pods(self._backoff_q.list())

    def unschedulable_pods(self) -> list[Pod]:
        return self._entity_pods(self._unschedulable_pods.values())

    def queued_pod_infos(self) -> list[tuple[QueuedPodInfo, str]]:
        """Every queued pod with where it is: ``"active"``, ``"backoff"`` or ``"unschedulable"`` (heap order)."""
        out = [(p, "active") for p in self._active_q.raw_values()]
        out += [(p, "backoff") for p in self._backoff_q.raw_values()]
        out += [(p, "unschedulable") for p in self._unschedulable_pods.values()]
        return out

    def pending_pods(self) -> tuple[list[Pod], str]:
        """All queued pods and upstream's summary ``activeQ:%v; backoffQ:%v; unschedulablePods:%v``."""
        active = self.pods_in_active_q()
        backoff = self.pods_in_backoff_q()
        unsched = self.unschedulable_pods()
        summary = f"activeQ:{len(active)}; backoffQ:{len(backoff)}; unschedulablePods:{len(unsched)}"
        return active + backoff + unsched, summary

    def num_active(self) -> int:
        return len(self._active_q)

    def num_backoff(self) -> int:
        return len(self._backoff_q)

    def num_error_backoff(self) -> int:
        return len(self._backoff_q.pod_error_backoff_q)

    def num_unschedulable(self) -> int:
        return len(self._unschedulable_pods)

    def num_gated(self) -> int:
        return self._unschedulable_pods.num_gated()

    def __len__(self) -> int:
        return self.num_active() + self.num_backoff() + self.num_unschedulable()

    # ==========================================================================================
    # Time
    # ==========================================================================================
    def next_wakeup(self) -> float | None:
        """The earliest time at which a periodic flush would move a pod, or None.

        Backoff: the first backoffQ flush tick (whole seconds with ordering windows, else every
        second from :attr:`flush_origin`) at which the head of either backoff heap has completed
        its backoff. Unschedulable: the first 30 s tick after :attr:`flush_origin` at which some
        pod, gated or not, has been unschedulable (or, since its last flush, left there) for
        longer than the limit. Never earlier than the tick at or before
        which ``now()`` falls due; a value ``<= now()`` means "flush now". Pops from backoffQ
        (which need no flush) are not considered.
        """
        now = self.clock.now()
        cands = []
        origin = 0.0 if self.pop_from_backoff_q else self.flush_origin
        backoff_q = self._backoff_q
        for head in backoff_q.heads():
            cands.append(self._next_tick(backoff_q.backoff_expiration(head), now, BACKOFF_FLUSH_PERIOD, origin,
                                         lambda t: not backoff_q.is_backing_off(head, t)))  # (called at once)
        limit = self.pod_max_in_unschedulable_pods_duration
        earliest_ts = min((p.timestamp if p.flush_timestamp is None or p.flush_timestamp <= p.timestamp
                           else p.flush_timestamp for p in self._unschedulable_pods.values()), default=None)
        if earliest_ts is not None:
            cands.append(self._next_tick(earliest_ts + limit, now, UNSCHEDULABLE_FLUSH_PERIOD, self.flush_origin,
                                         lambda t: t - earliest_ts > limit))
        return min(cands) if cands else None

    @staticmethod
    def _next_tick(due: float, now: float, period: float, origin: float,
                   moves: Callable[[float], bool] | None) -> float:
        """The first tick ``origin + k*period`` not before the tick due at ``now`` at which ``moves``."""
        k = max(math.ceil((due - origin) / period - 1e-9), math.ceil((now - origin) / period - 1e-9))
        tick = origin + k * period
        if moves is not None:
            while not moves(tick):
                k += 1
                tick = origin + k * period
        return tick

    def __repr__(self) -> str:
        return f"PriorityQueue({self.pending_pods()[1]}; inFlight:{len(self._active_q.in_flight_pods())})"
