"""The scheduling queue (upstream ``PriorityQueue`` in ``pkg/scheduler/backend/queue``, v1.34).

Three places hold pending pods:

- **activeQ**: a heap ordered by the profile's QueueSort ``less`` (ties by insertion order);
- **backoffQ**: two heaps ordered by backoff expiration. ``podBackoffQ`` holds pods rejected by
  plugins, ``podErrorBackoffQ`` pods that failed without a rejector plugin (errors). With
  SchedulerPopFromBackoffQ (beta, on by default in v1.33+, and the default here) expirations are
  truncated to 1-second ordering windows, pods in the same window are ordered by the QueueSort
  ``less``, and :meth:`PriorityQueue.pop` takes the head of ``podBackoffQ`` (not the error queue)
  when activeQ is empty;
- **unschedulablePods**: a map of pods waiting for a cluster event, including *gated* pods (a
  PreEnqueue plugin did not return Success).

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

Pods are keyed by UID (upstream keys its heaps by ``namespace/name``).
"""
from __future__ import annotations

import functools
import heapq
import itertools
import math
from collections import deque
from dataclasses import dataclass
from typing import Any, Callable, Iterable, Iterator, Mapping

from ..api.objects import Pod
from ..framework.interface import (ActionType, ClusterEvent, ClusterEventWithHint, EventResource, PodActivator,
                                   PodNominator, QueueingHint)
from ..framework.status import Code, Status
from ..framework.types import PodInfo, QueuedPodInfo
from .nominator import Nominator, PodLister

# ------------------------------------------------------------------------------------------------
# Constants (upstream scheduling_queue.go / backoff_queue.go / framework/events.go)
# ------------------------------------------------------------------------------------------------
DEFAULT_POD_INITIAL_BACKOFF = 1.0
DEFAULT_POD_MAX_BACKOFF = 10.0
DEFAULT_POD_MAX_IN_UNSCHEDULABLE_PODS_DURATION = 300.0
#: podBackoffQ ordering window (KEP-5142); also the backoffQ flush period
BACKOFF_Q_ORDERING_WINDOW = 1.0
BACKOFF_FLUSH_PERIOD = 1.0
UNSCHEDULABLE_FLUSH_PERIOD = 30.0

ACTIVE_Q = "Active"
BACKOFF_Q = "Backoff"
UNSCHEDULABLE_Q = "Unschedulable"

PRE_ENQUEUE = "PreEnqueue"
POD_TOPOLOGY_SPREAD = "PodTopologySpread"

# Special event labels
SCHEDULE_ATTEMPT_FAILURE = "ScheduleAttemptFailure"
BACKOFF_COMPLETE = "BackoffComplete"
POP_FROM_BACKOFF_Q = "PopFromBackoffQ"
FORCE_ACTIVATE = "ForceActivate"
UNSCHEDULABLE_TIMEOUT = "UnschedulableTimeout"

EVENT_ASSIGNED_POD_ADD = ClusterEvent(EventResource.ASSIGNED_POD, ActionType.ADD)
EVENT_ASSIGNED_POD_UPDATE = ClusterEvent(EventResource.ASSIGNED_POD, ActionType.UPDATE)
EVENT_ASSIGNED_POD_DELETE = ClusterEvent(EventResource.ASSIGNED_POD, ActionType.DELETE)
EVENT_UNSCHEDULED_POD_ADD = ClusterEvent(EventResource.UNSCHEDULED_POD, ActionType.ADD)
EVENT_UNSCHEDULED_POD_UPDATE = ClusterEvent(EventResource.UNSCHEDULED_POD, ActionType.UPDATE)
EVENT_UNSCHEDULED_POD_DELETE = ClusterEvent(EventResource.UNSCHEDULED_POD, ActionType.DELETE)
EVENT_UNSCHEDULABLE_TIMEOUT = ClusterEvent(EventResource.WILDCARD, ActionType.ALL, UNSCHEDULABLE_TIMEOUT)
EVENT_FORCE_ACTIVATE = ClusterEvent(EventResource.WILDCARD, ActionType.ALL, FORCE_ACTIVATE)

_NS = 1_000_000_000

# queueing strategies
QUEUE_SKIP = 0
QUEUE_AFTER_BACKOFF = 1
QUEUE_IMMEDIATELY = 2


class QueueError(ValueError):
    """What upstream returns as an ``error`` (returned, not raised, by the methods that can fail)."""


# ------------------------------------------------------------------------------------------------
# Cluster events
# ------------------------------------------------------------------------------------------------
def _resource(r: Any) -> str:
    return r.value if isinstance(r, EventResource) else str(r)


_ACTION_NAMES = {
    ActionType.ADD: "Add", ActionType.DELETE: "Delete", ActionType.UPDATE_NODE_ALLOCATABLE: "UpdateNodeAllocatable",
    ActionType.UPDATE_NODE_LABEL: "UpdateNodeLabel", ActionType.UPDATE_NODE_TAINT: "UpdateNodeTaint",
    ActionType.UPDATE_NODE_CONDITION: "UpdateNodeCondition",
    ActionType.UPDATE_NODE_ANNOTATION: "UpdateNodeAnnotation", ActionType.UPDATE_POD_LABEL: "UpdatePodLabel",
    ActionType.UPDATE_POD_SCALE_DOWN: "UpdatePodScaleDown",
    ActionType.UPDATE_POD_TOLERATIONS: "UpdatePodToleration",
    ActionType.UPDATE_POD_SCHEDULING_GATES_ELIMINATED: "UpdatePodSchedulingGatesEliminated",
    ActionType.UPDATE_POD_GENERATED_RESOURCE_CLAIM: "UpdatePodGeneratedResourceClaim",
    ActionType.UPDATE: "Update", ActionType.ALL: "All",
}


def event_label(event: ClusterEvent) -> str:
    """Upstream ``ClusterEvent.Label()``: the custom label, else resource + action."""
    if event.label:
        return event.label
    a = ActionType(event.action_type)
    name = _ACTION_NAMES.get(a)
    if name is None:
        name = "|".join(_ACTION_NAMES.get(m, str(int(m))) for m in ActionType if m in a and m in _ACTION_NAMES
                        and m not in (ActionType.UPDATE, ActionType.ALL))
    return f"{_resource(event.resource)}{name}"


def cluster_event_is_wildcard(event: ClusterEvent) -> bool:
    """Upstream ``ClusterEventIsWildCard``: resource ``*`` and action All (any label)."""
    return _resource(event.resource) == "*" and int(event.action_type) == int(ActionType.ALL)


def _match_event_resources(registered: str, incoming: str) -> bool:
    return (registered == "*" or registered == incoming
            or (registered == "Pod" and incoming in ("AssignedPod", "UnschedulablePod")))


def match_cluster_events(registered: ClusterEvent, incoming: ClusterEvent) -> bool:
    """Upstream ``MatchClusterEvents``: ``incoming`` is the same as or more specific than ``registered``.

    A wildcard registration matches everything. Otherwise the resources must match (``*`` matches
    any resource; ``Pod`` matches ``AssignedPod`` and ``UnschedulablePod``), the action bits must
    intersect, and ``incoming.action_type <= registered.action_type`` (so an incoming generic
    Update does not match a registration for one specific update). An incoming wildcard event only
    matches a wildcard registration.
    """
    if cluster_event_is_wildcard(registered):
        return True
    r_act, i_act = int(registered.action_type), int(incoming.action_type)
    return (_match_event_resources(_resource(registered.resource), _resource(incoming.resource))
            and (r_act & i_act) != 0 and i_act <= r_act)


def match_any_cluster_event(incoming: ClusterEvent, registered: Iterable[ClusterEvent]) -> bool:
    """Upstream ``MatchAnyClusterEvent``."""
    return any(match_cluster_events(e, incoming) for e in registered)


def pod_scheduling_properties_change(new_pod: Pod, old_pod: Pod) -> list[ClusterEvent]:
    """Upstream ``PodSchedulingPropertiesChange``: the specific Pod update events, else a generic Update.

    The resource is ``AssignedPod`` when the new pod has a node, else ``UnschedulablePod``. Checked
    in order: labels changed, a request scaled down (or removed), scheduling gates all removed,
    tolerations count changed. (DRA's UpdatePodGeneratedResourceClaim is not detected: the Pod
    model carries no ``status.resourceClaimStatuses``.)
    """
    r = EventResource.ASSIGNED_POD if new_pod.node_name else EventResource.UNSCHEDULED_POD
    actions = []
    if dict(new_pod.labels) != dict(old_pod.labels):
        actions.append(ActionType.UPDATE_POD_LABEL)
    new_req, old_req = new_pod.requests, old_pod.requests
    for name, old_v in old_req.items():
        if name not in new_req or old_v > new_req[name]:
            actions.append(ActionType.UPDATE_POD_SCALE_DOWN)
            break
    if not new_pod.scheduling_gates and old_pod.scheduling_gates:
        actions.append(ActionType.UPDATE_POD_SCHEDULING_GATES_ELIMINATED)
    if len(new_pod.tolerations) != len(old_pod.tolerations):
        actions.append(ActionType.UPDATE_POD_TOLERATIONS)
    if not actions:
        actions.append(ActionType.UPDATE)
    return [ClusterEvent(r, a) for a in actions]


_UNSCHEDULED_POD_ADD_OR_UPDATE = (event_label(EVENT_UNSCHEDULED_POD_ADD), event_label(EVENT_UNSCHEDULED_POD_UPDATE))


@dataclass(frozen=True)
class InFlightEvent:
    """A cluster event received while some pod was in flight (upstream ``clusterEvent``)."""

    event: ClusterEvent
    old_obj: Any = None
    new_obj: Any = None


# ------------------------------------------------------------------------------------------------
# Keyed heap (upstream backend/heap): add-or-update, delete and get by key
# ------------------------------------------------------------------------------------------------
class _Heap:
    """A binary heap of values keyed by string, ordered by ``less``; ties by insertion order."""

    __slots__ = ("_less", "_items", "_index", "_seq")

    def __init__(self, less: Callable[[Any, Any], bool]):
        self._less = less
        self._items: list[list] = []       # [key, value, seq]
        self._index: dict[str, int] = {}
        self._seq = itertools.count()

    def _lt(self, a: list, b: list) -> bool:
        if self._less(a[1], b[1]):
            return True
        if self._less(b[1], a[1]):
            return False
        return a[2] < b[2]

    def __len__(self) -> int:
        return len(self._items)

    def __contains__(self, key: object) -> bool:
        return key in self._index

    def get(self, key: str) -> Any | None:
        i = self._index.get(key)
        return None if i is None else self._items[i][1]

    def peek(self) -> Any | None:
        return self._items[0][1] if self._items else None

    def add_or_update(self, key: str, value: Any) -> None:
        i = self._index.get(key)
        if i is not None:
            self._items[i][1] = value
            self._fix(i)
            return
        self._items.append([key, value, next(self._seq)])
        i = len(self._items) - 1
        self._index[key] = i
        self._up(i)

    def fix(self, key: str) -> None:
        i = self._index.get(key)
        if i is not None:
            self._fix(i)

    def delete(self, key: str) -> Any | None:
        i = self._index.get(key)
        if i is None:
            return None
        return self._remove_at(i)

    def pop(self) -> Any | None:
        if not self._items:
            return None
        return self._remove_at(0)

    def values(self) -> list:
        """The values in pop order (sorted copy)."""
        entries = sorted(self._items, key=functools.cmp_to_key(lambda a, b: -1 if self._lt(a, b) else
                                                                  (1 if self._lt(b, a) else 0)))
        return [e[1] for e in entries]

    def raw_values(self) -> Iterator[Any]:
        return (e[1] for e in self._items)

    # -- internals -----------------------------------------------------------------------------
    def _remove_at(self, i: int) -> Any:
        items = self._items
        last = len(items) - 1
        if i != last:
            self._swap(i, last)
        key, value, _ = items.pop()
        del self._index[key]
        if i < len(items):
            self._fix(i)
        return value

    def _swap(self, i: int, j: int) -> None:
        items = self._items
        items[i], items[j] = items[j], items[i]
        self._index[items[i][0]] = i
        self._index[items[j][0]] = j

    def _fix(self, i: int) -> None:
        if not self._down(i):
            self._up(i)

    def _up(self, i: int) -> None:
        items = self._items
        while i > 0:
            parent = (i - 1) // 2
            if not self._lt(items[i], items[parent]):
                break
            self._swap(i, parent)
            i = parent

    def _down(self, i0: int) -> bool:
        items = self._items
        n = len(items)
        i = i0
        while True:
            left = 2 * i + 1
            if left >= n:
                break
            j = left
            right = left + 1
            if right < n and self._lt(items[right], items[left]):
                j = right
            if not self._lt(items[j], items[i]):
                break
            self._swap(i, j)
            i = j
        return i > i0


class _KeyedHeap:
    """:class:`_Heap` for an order given as a sort key (``less(a, b)`` iff ``key(a) < key(b)``).

    The same total order (key, then insertion order), so the same pops, with C ``heapq`` doing the
    comparisons instead of a Python ``less`` per step. Updates and deletes mark the old entry dead
    and leave it in the list until it surfaces (lazy deletion); an update keeps the insertion rank.
    """

    __slots__ = ("_key", "_entries", "_live", "_seq", "_pushes")

    def __init__(self, key: Callable[[Any], Any]):
        self._key = key
        # [sort key, insertion rank, push number (unique: entries never compare further), key, value, alive]
        self._entries: list[list] = []
        self._live: dict[str, list] = {}   # key -> its live entry
        self._seq = itertools.count()
        self._pushes = itertools.count()

    def __len__(self) -> int:
        return len(self._live)

    def __contains__(self, key: object) -> bool:
        return key in self._live

    def get(self, key: str) -> Any | None:
        e = self._live.get(key)
        return None if e is None else e[4]

    def _push(self, key: str, value: Any, seq: int) -> None:
        e = [self._key(value), seq, next(self._pushes), key, value, True]
        self._live[key] = e
        heapq.heappush(self._entries, e)

    def _drop_dead_top(self) -> None:
        entries = self._entries
        while entries and not entries[0][5]:
            heapq.heappop(entries)

    def peek(self) -> Any | None:
        self._drop_dead_top()
        return self._entries[0][4] if self._entries else None

    def add_or_update(self, key: str, value: Any) -> None:
        old = self._live.get(key)
        if old is not None:
            old[5] = False
            self._push(key, value, old[1])
        else:
            self._push(key, value, next(self._seq))
        self._compact_if_sparse()

    def fix(self, key: str) -> None:
        old = self._live.get(key)
        if old is not None:
            self.add_or_update(key, old[4])

    def delete(self, key: str) -> Any | None:
        e = self._live.pop(key, None)
        if e is None:
            return None
        e[5] = False
        self._compact_if_sparse()
        return e[4]

    def pop(self) -> Any | None:
        self._drop_dead_top()
        if not self._entries:
            return None
        e = heapq.heappop(self._entries)
        del self._live[e[3]]
        return e[4]

    def values(self) -> list:
        """The values in pop order (sorted copy)."""
        return [e[4] for e in sorted(self._live.values(), key=lambda e: (e[0], e[1]))]

    def raw_values(self) -> Iterator[Any]:
        return (e[4] for e in self._live.values())

    def _compact_if_sparse(self) -> None:
        # dead entries are bounded by the live ones (and a small constant)
        if len(self._entries) > 2 * len(self._live) + 64:
            self._entries = [e for e in self._entries if e[5]]
            heapq.heapify(self._entries)


# ------------------------------------------------------------------------------------------------
# Affinity terms (for the assigned-pod events' pre-filter)
# ------------------------------------------------------------------------------------------------
def _required_affinity_terms(pod: Pod) -> list[tuple[frozenset, Any, Any]]:
    """The pod's required pod-affinity terms as ``(namespaces, selector, namespace_selector)``.

    Upstream ``PodInfo.RequiredAffinityTerms``: namespaces default to the pod's own when the term
    lists none and has no namespace selector; a nil selector selects nothing.
    """
    a = pod.affinity
    if a is None or a.pod_affinity is None:
        return []
    out = []
    for t in a.pod_affinity.required:
        if not t.namespaces and t.namespace_selector is None:
            namespaces = frozenset((pod.namespace,))
        else:
            namespaces = frozenset(t.namespaces)
        out.append((namespaces, t.label_selector, t.namespace_selector))
    return out


def _term_matches(term: tuple[frozenset, Any, Any], pod: Pod, ns_labels: Mapping[str, str]) -> bool:
    namespaces, selector, ns_selector = term
    if pod.namespace not in namespaces and not (ns_selector is not None and ns_selector.matches(ns_labels)):
        return False
    return selector is not None and selector.matches(pod.labels)


# ------------------------------------------------------------------------------------------------
# PriorityQueue
# ------------------------------------------------------------------------------------------------
class PriorityQueue(PodNominator, PodActivator):
    """Upstream ``PriorityQueue`` (``SchedulingQueue``), single-threaded, with queueing hints.

    ``less_fn(a, b)`` is the QueueSort ``less`` over :class:`QueuedPodInfo` (one for all profiles).
    ``pre_enqueue_plugins`` maps a profile name to its PreEnqueue plugins (in order);
    ``queueing_hints`` maps a profile name to ``{plugin name: [ClusterEventWithHint, ...]}`` (a
    plugin's ``events_to_register()``; a ``None`` hint function means Queue). ``profile_of(pod)``
    names the pod's profile (default ``pod.scheduler_name``). ``metrics(name, labels)`` is called
    for the queue's incoming-pods counter (``"queue_incoming_pods"``, ``{"queue", "event"}``).
    ``namespace_labels(namespace)`` gives a namespace's labels for affinity namespace selectors;
    ``pod_lister`` is handed to the :class:`~fastsched.scheduler.nominator.Nominator`.
    ``pop_from_backoff_q=False`` gives the pre-1.33 behaviour (no ordering windows, no popping
    from backoffQ, PreEnqueue run when leaving backoffQ). ``sort_key``, when given, must order as
    ``less_fn`` (``less_fn(a, b) == (sort_key(a) < sort_key(b))``); activeQ then sorts by it.
    """

    def __init__(self, less_fn: Callable[[QueuedPodInfo, QueuedPodInfo], bool], clock: Any = None, *,
                 pod_initial_backoff: float = DEFAULT_POD_INITIAL_BACKOFF,
                 pod_max_backoff: float = DEFAULT_POD_MAX_BACKOFF,
                 pod_max_in_unschedulable_pods_duration: float = DEFAULT_POD_MAX_IN_UNSCHEDULABLE_PODS_DURATION,
                 pre_enqueue_plugins: Mapping[str, Iterable[Any]] | None = None,
                 queueing_hints: Mapping[str, Mapping[str, Iterable[Any]]] | None = None,
                 profile_of: Callable[[Pod], str] | None = None,
                 metrics: Callable[[str, dict], None] | None = None,
                 namespace_labels: Callable[[str], Mapping[str, str] | None] | None = None,
                 pod_lister: PodLister | None = None,
                 pop_from_backoff_q: bool = True,
                 sort_key: Callable[[QueuedPodInfo], Any] | None = None):
        if clock is None:
            from ..clock import VirtualClock
            clock = VirtualClock()
        self.clock = clock
        self.less_fn = less_fn
        self.pod_initial_backoff = float(pod_initial_backoff)
        self.pod_max_backoff = float(pod_max_backoff)
        self.pod_max_in_unschedulable_pods_duration = float(pod_max_in_unschedulable_pods_duration)
        self._initial_ns = round(self.pod_initial_backoff * _NS)
        self._max_ns = round(self.pod_max_backoff * _NS)
        self.pop_from_backoff_q = bool(pop_from_backoff_q)
        self._profile_of = profile_of or (lambda pod: pod.scheduler_name)
        self._metrics = metrics
        self._namespace_labels = namespace_labels

        self._pre_enqueue: dict[str, list[Any]] = {p: list(pls) for p, pls in (pre_enqueue_plugins or {}).items()}
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

        self._active = _Heap(self._less_active) if sort_key is None else _KeyedHeap(sort_key)
        self._pod_backoff = _Heap(self._less_backoff_with_priority if self.pop_from_backoff_q
                                  else self._less_backoff)
        self._pod_error_backoff = _Heap(self._less_backoff)
        self._unschedulable: dict[str, QueuedPodInfo] = {}

        # in-flight pods and the events received since each was popped
        self._seq = itertools.count()
        self._in_flight: dict[str, int] = {}          # uid -> sequence number at pop
        self._in_flight_pods: dict[str, Pod] = {}
        self._in_flight_events: deque[tuple[int, InFlightEvent]] = deque()

        self._sched_cycle = 0
        self._move_request_cycle = -1
        self.nominator = Nominator(pod_lister)
        #: the time the periodic flushes are counted from (used by :meth:`next_wakeup`)
        self.flush_origin = float(clock.now())

    # ==========================================================================================
    # less functions
    # ==========================================================================================
    def _less_active(self, a: QueuedPodInfo, b: QueuedPodInfo) -> bool:
        return self.less_fn(a, b)

    def _less_backoff(self, a: QueuedPodInfo, b: QueuedPodInfo) -> bool:
        return self._backoff_time(a) < self._backoff_time(b)

    def _less_backoff_with_priority(self, a: QueuedPodInfo, b: QueuedPodInfo) -> bool:
        ba, bb = self._backoff_time(a), self._backoff_time(b)
        if ba != bb:
            return ba < bb
        return self.less_fn(a, b)

    # ==========================================================================================
    # Backoff
    # ==========================================================================================
    def _align_ns(self, t_ns: int) -> int:
        if not self.pop_from_backoff_q:
            return t_ns
        return t_ns - t_ns % _NS  # Truncate to the 1 s window

    @staticmethod
    def _failure_count(pinfo: QueuedPodInfo) -> int:
        if pinfo.consecutive_errors_count > 0:
            return pinfo.consecutive_errors_count
        return pinfo.unschedulable_count

    def _duration_ns(self, count: int) -> int:
        if count <= 0:
            return 0
        shift = count - 1
        if self._initial_ns > (self._max_ns >> shift):
            return self._max_ns
        return self._initial_ns << shift

    def backoff_duration(self, pinfo: QueuedPodInfo) -> float:
        """The backoff the pod gets for its failures: ``initial * 2**(n-1)`` capped at the max.

        ``n`` is ``consecutive_errors_count`` when positive, else ``unschedulable_count`` (v1.34
        no longer counts ``attempts``); 0 when ``n`` is 0 or the max backoff is 0.
        """
        if self._max_ns == 0:
            return 0.0
        return self._duration_ns(self._failure_count(pinfo)) / _NS

    def _backoff_time(self, pinfo: QueuedPodInfo) -> float:
        """Upstream ``getBackoffTime`` (cached in ``backoff_expiration``); ``-inf`` for no backoff."""
        if self._max_ns == 0:
            return -math.inf
        count = self._failure_count(pinfo)
        if count == 0:
            return -math.inf
        if pinfo.backoff_expiration is None:
            t_ns = round(pinfo.timestamp * _NS) + self._duration_ns(count)
            pinfo.backoff_expiration = self._align_ns(t_ns) / _NS
        return pinfo.backoff_expiration

    def is_backing_off(self, pinfo: QueuedPodInfo) -> bool:
        """Upstream ``isPodBackingoff``.

        With ordering windows the pod backs off while its (window-aligned) expiration is not
        before the current window, i.e. until the window after its expiration's window starts.
        """
        bo = self._backoff_time(pinfo)
        if bo == -math.inf:
            return False
        now = self.clock.now()
        if self.pop_from_backoff_q:
            return not bo < self._align_ns(round(now * _NS)) / _NS
        return bo > now

    def backoff_expiration(self, pinfo: QueuedPodInfo) -> float:
        """The earliest time at which ``pinfo`` no longer backs off (its timestamp when it never did)."""
        bo = self._backoff_time(pinfo)
        if bo == -math.inf:
            return pinfo.timestamp
        return bo + BACKOFF_Q_ORDERING_WINDOW if self.pop_from_backoff_q else bo

    # ==========================================================================================
    # PreEnqueue
    # ==========================================================================================
    def _set_gating(self, pinfo: QueuedPodInfo, plugin: str) -> None:
        pinfo.gating_plugin = plugin
        pinfo.gated = bool(plugin)

    def _run_pre_enqueue_plugins(self, pinfo: QueuedPodInfo) -> None:
        """Upstream ``runPreEnqueuePlugins``: the gating plugin first, then the others in order."""
        plugins = self._pre_enqueue.get(self._profile_of(pinfo.pod), ())
        gating = pinfo.gating_plugin
        if gating:
            for pl in plugins:
                if pl.name() == gating:
                    if not self._run_pre_enqueue_plugin(pl, pinfo):
                        return
                    break
        for pl in plugins:
            if gating and pl.name() == gating:
                continue
            if not self._run_pre_enqueue_plugin(pl, pinfo):
                return
        self._set_gating(pinfo, "")

    def _run_pre_enqueue_plugin(self, pl: Any, pinfo: QueuedPodInfo) -> bool:
        try:
            s = pl.pre_enqueue(pinfo.pod)
        except Exception as e:  # noqa: BLE001 - a crashing plugin gates the pod, like an Error status
            s = Status.from_error(e)
        if s is None or s.code() == Code.SUCCESS:
            return True
        name = pl.name()
        pinfo.unschedulable_plugins.add(name)
        self._set_gating(pinfo, name)
        return False

    def _gating_plugin_events(self, pinfo: QueuedPodInfo) -> list[ClusterEvent]:
        return self._plugin_to_events.get(pinfo.gating_plugin, [])

    # ==========================================================================================
    # moving pods between the sub-queues
    # ==========================================================================================
    def _record(self, queue: str, event: str) -> None:
        if self._metrics is not None:
            self._metrics("queue_incoming_pods", {"queue": queue, "event": event})

    def _backoff_has(self, uid: str) -> bool:
        return uid in self._pod_backoff or uid in self._pod_error_backoff

    def _backoff_get(self, uid: str) -> QueuedPodInfo | None:
        p = self._pod_backoff.get(uid)
        return p if p is not None else self._pod_error_backoff.get(uid)

    def _backoff_delete(self, uid: str) -> bool:
        if self._pod_backoff.delete(uid) is not None:
            return True
        return self._pod_error_backoff.delete(uid) is not None

    def _unschedulable_add_or_update(self, pinfo: QueuedPodInfo, event: str) -> None:
        uid = pinfo.pod.uid
        if uid not in self._unschedulable:
            self._record("unschedulable", event)
        self._unschedulable[uid] = pinfo

    def _move_to_active_q(self, pinfo: QueuedPodInfo, event: str, moves_from_backoff_q: bool = False) -> bool:
        """Upstream ``moveToActiveQ``: PreEnqueue, then activeQ, or unschedulablePods when gated."""
        if not (self.pop_from_backoff_q and moves_from_backoff_q):
            self._run_pre_enqueue_plugins(pinfo)
        uid = pinfo.pod.uid
        if pinfo.gating_plugin:
            if uid in self._active or self._backoff_has(uid) or uid in self._unschedulable:
                return False
            self._unschedulable_add_or_update(pinfo, event)
            return False
        if pinfo.initial_attempt_timestamp is None:
            pinfo.initial_attempt_timestamp = self.clock.now()
        self._unschedulable.pop(uid, None)
        self._backoff_delete(uid)
        self._active.add_or_update(uid, pinfo)
        self._record("active", event)
        if event in _UNSCHEDULED_POD_ADD_OR_UPDATE:
            self.nominator.add_nominated_pod(pinfo.pod_info, None)
        return True

    def _move_to_backoff_q(self, pinfo: QueuedPodInfo, event: str) -> bool:
        """Upstream ``moveToBackoffQ``: with PopFromBackoffQ, PreEnqueue runs here (gated -> unschedulable)."""
        uid = pinfo.pod.uid
        if self.pop_from_backoff_q:
            self._run_pre_enqueue_plugins(pinfo)
            if pinfo.gating_plugin:
                if uid not in self._unschedulable:
                    self._unschedulable_add_or_update(pinfo, event)
                return False
        self._unschedulable.pop(uid, None)
        if not pinfo.unschedulable_plugins and not pinfo.pending_plugins:
            self._pod_error_backoff.add_or_update(uid, pinfo)
            self._pod_backoff.delete(uid)
        else:
            self._pod_backoff.add_or_update(uid, pinfo)
            self._pod_error_backoff.delete(uid)
        self._record("backoff", event)
        return True

    def _requeue_pod_with_queueing_strategy(self, pinfo: QueuedPodInfo, strategy: int, event: str) -> str:
        """Upstream ``requeuePodWithQueueingStrategy``; returns the queue the pod went to."""
        if strategy == QUEUE_SKIP:
            self._unschedulable_add_or_update(pinfo, event)
            return UNSCHEDULABLE_Q
        if strategy == QUEUE_AFTER_BACKOFF and self.is_backing_off(pinfo):
            return BACKOFF_Q if self._move_to_backoff_q(pinfo, event) else UNSCHEDULABLE_Q
        return ACTIVE_Q if self._move_to_active_q(pinfo, event) else UNSCHEDULABLE_Q

    def _new_queued_pod_info(self, pod: Pod) -> QueuedPodInfo:
        return QueuedPodInfo(PodInfo(pod), self.clock.now())

    # ==========================================================================================
    # SchedulingQueue API
    # ==========================================================================================
    def add(self, pod: Pod) -> None:
        """A new unscheduled pod: PreEnqueue, then activeQ (or unschedulablePods when gated)."""
        self._move_to_active_q(self._new_queued_pod_info(pod), _UNSCHEDULED_POD_ADD_OR_UPDATE[0])

    def activate(self, pods: Mapping[str, Pod] | Iterable[Pod]) -> None:
        """Move the given pods from unschedulablePods/backoffQ to activeQ (PodActivator).

        A pod found in neither but in flight gets a ForceActivate event recorded, so it is
        requeued when it comes back; unknown pods are ignored.
        """
        items = pods.values() if isinstance(pods, Mapping) else pods
        for pod in list(items):
            if self._activate(pod):
                continue
            self._add_events_if_pod_in_flight(None, pod, [EVENT_FORCE_ACTIVATE])
            self._move_request_cycle = self._sched_cycle

    def _activate(self, pod: Pod) -> bool:
        uid = pod.uid
        moves_from_backoff_q = False
        pinfo = self._unschedulable.get(uid)
        if pinfo is None:
            pinfo = self._backoff_get(uid)
            if pinfo is None:
                return False
            self._backoff_delete(uid)
            moves_from_backoff_q = True
        return self._move_to_active_q(pinfo, FORCE_ACTIVATE, moves_from_backoff_q)

    def scheduling_cycle(self) -> int:
        """The number of pods popped so far."""
        return self._sched_cycle

    def pop(self) -> QueuedPodInfo | None:
        """Take the head of activeQ, or (PopFromBackoffQ) of podBackoffQ when activeQ is empty.

        Increments ``attempts`` and the scheduling cycle, marks the pod in flight (events received
        from now on are recorded for it) and clears its rejector plugins for the next attempt.
        Returns None when there is nothing to pop (upstream blocks instead).
        """
        while True:
            pinfo = self._active.pop()
            if pinfo is None:
                if not self.pop_from_backoff_q:
                    return None
                pinfo = self._pod_backoff.pop()
                if pinfo is None:
                    return None
                self._record("active", POP_FROM_BACKOFF_Q)
            pinfo.attempts += 1
            pinfo.backoff_expiration = None
            uid = pinfo.pod.uid
            if uid in self._in_flight:
                # The same pod is tracked twice: discard this copy and pop the next one.
                continue
            self._in_flight[uid] = next(self._seq)
            self._in_flight_pods[uid] = pinfo.pod
            self._sched_cycle += 1
            pinfo.unschedulable_plugins.clear()
            pinfo.pending_plugins.clear()
            if pinfo.initial_attempt_timestamp is None:
                pinfo.initial_attempt_timestamp = self.clock.now()
            return pinfo

    def done(self, uid: str) -> None:
        """The pod's scheduling attempt is over: stop recording events for it."""
        if self._in_flight.pop(uid, None) is None:
            return
        self._in_flight_pods.pop(uid, None)
        if not self._in_flight:
            self._in_flight_events.clear()
            return
        # Events older than the oldest pod still in flight are no longer needed.
        oldest = next(iter(self._in_flight.values()))
        events = self._in_flight_events
        while events and events[0][0] < oldest:
            events.popleft()

    def in_flight(self, uid: str) -> bool:
        return uid in self._in_flight

    def in_flight_pods(self) -> list[Pod]:
        return list(self._in_flight_pods.values())

    def in_flight_events(self) -> list[InFlightEvent]:
        return [e for _, e in self._in_flight_events]

    def _cluster_events_for_pod(self, pinfo: QueuedPodInfo) -> list[InFlightEvent] | None:
        seq = self._in_flight.get(pinfo.pod.uid)
        if seq is None:
            return None
        return [e for s, e in self._in_flight_events if s > seq]

    def _add_events_if_pod_in_flight(self, old_pod: Pod | None, new_pod: Pod,
                                     events: Iterable[ClusterEvent]) -> bool:
        if new_pod.uid not in self._in_flight:
            return False
        for event in events:
            self._in_flight_events.append((next(self._seq), InFlightEvent(event, old_pod, new_pod)))
        return True

    def _add_event_if_any_in_flight(self, old_obj: Any, new_obj: Any, event: ClusterEvent) -> bool:
        if not self._in_flight:
            return False
        self._in_flight_events.append((next(self._seq), InFlightEvent(event, old_obj, new_obj)))
        return True

    def _determine_scheduling_hint_for_in_flight_pod(self, pinfo: QueuedPodInfo) -> int:
        if not pinfo.unschedulable_plugins and not pinfo.pending_plugins:
            # No rejector: an error (e.g. an API failure) brought the pod back; retry after backoff.
            return QUEUE_AFTER_BACKOFF
        events = self._cluster_events_for_pod(pinfo)
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
            if uid in self._unschedulable:
                return QueueError(f"Pod {pinfo.pod.key} is already present in unschedulable queue")
            if uid in self._active:
                return QueueError(f"Pod {pinfo.pod.key} is already present in the active queue")
            if self._backoff_has(uid):
                return QueueError(f"Pod {pinfo.pod.key} is already present in the backoff queue")
            if not pinfo.unschedulable_plugins and not pinfo.pending_plugins:
                pinfo.consecutive_errors_count += 1
            else:
                pinfo.unschedulable_count += 1
                pinfo.consecutive_errors_count = 0
            pinfo.timestamp = self.clock.now()
            pinfo.backoff_expiration = None
            hint = self._determine_scheduling_hint_for_in_flight_pod(pinfo)
            self._requeue_pod_with_queueing_strategy(pinfo, hint, SCHEDULE_ATTEMPT_FAILURE)
            return None
        finally:
            self.done(uid)

    def flush_backoff_q_completed(self) -> int:
        """Move every pod whose backoff completed from backoffQ to activeQ; returns how many moved."""
        completed = []
        for heap in (self._pod_backoff, self._pod_error_backoff):
            while True:
                head = heap.peek()
                if head is None or self.is_backing_off(head):
                    break
                heap.pop()
                completed.append(head)
        moved = 0
        for pinfo in completed:
            if self._move_to_active_q(pinfo, BACKOFF_COMPLETE, True):
                moved += 1
        return moved

    def flush_unschedulable_pods_leftover(self) -> None:
        """Move pods unschedulable for longer than podMaxInUnschedulablePodsDuration (wildcard event)."""
        now = self.clock.now()
        limit = self.pod_max_in_unschedulable_pods_duration
        to_move = [p for p in self._unschedulable.values() if now - p.timestamp > limit]
        if to_move:
            self._move_pods_to_active_or_backoff_queue(to_move, EVENT_UNSCHEDULABLE_TIMEOUT, None, None)

    def update(self, old_pod: Pod | None, new_pod: Pod) -> None:
        """An unscheduled pod changed.

        In flight: the update events are recorded for the pod. In activeQ/backoffQ: updated in
        place. In unschedulablePods: updated, then each update event is checked against its
        rejectors' hints (a gate removal re-runs PreEnqueue on the way out). Unknown: added to
        activeQ like :meth:`add`.
        """
        events = pod_scheduling_properties_change(new_pod, old_pod) if old_pod is not None else \
            [EVENT_UNSCHEDULED_POD_UPDATE]
        if self._add_events_if_pod_in_flight(old_pod, new_pod, events):
            return
        if old_pod is not None:
            uid = old_pod.uid
            for heap in (self._active, self._pod_backoff, self._pod_error_backoff):
                pinfo = heap.get(uid)
                if pinfo is not None:
                    pinfo.pod_info.update(new_pod)
                    heap.fix(uid)
                    self.nominator.update_nominated_pod(old_pod, pinfo.pod_info)
                    return
        pinfo = self._unschedulable.get(new_pod.uid)
        if pinfo is not None:
            pinfo.pod_info.update(new_pod)
            self.nominator.update_nominated_pod(old_pod if old_pod is not None else new_pod, pinfo.pod_info)
            for evt in events:
                hint = self._is_pod_worth_requeuing(pinfo, evt, old_pod, new_pod)
                queue = self._requeue_pod_with_queueing_strategy(pinfo, hint, event_label(evt))
                if queue == ACTIVE_Q or (self.pop_from_backoff_q and queue == BACKOFF_Q):
                    break
            return
        self._move_to_active_q(self._new_queued_pod_info(new_pod), _UNSCHEDULED_POD_ADD_OR_UPDATE[1])

    def delete(self, pod: Pod) -> None:
        """Remove the pod from whichever sub-queue holds it, and its nomination."""
        self.nominator.delete_nominated_pod_if_exists(pod)
        uid = pod.uid
        if self._active.delete(uid) is not None:
            return
        if self._backoff_delete(uid):
            return
        self._unschedulable.pop(uid, None)

    def assigned_pod_added(self, pod: Pod) -> None:
        """A bound pod appeared: requeue unschedulable pods it may help (cross-topology terms only)."""
        self._move_pods_to_active_or_backoff_queue(self._unschedulable_pods_with_cross_topology_term(pod),
                                                   EVENT_ASSIGNED_POD_ADD, None, pod)

    def assigned_pod_updated(self, old_pod: Pod, new_pod: Pod, event: ClusterEvent | None = None) -> None:
        """A bound pod changed (``event`` is one of :func:`pod_scheduling_properties_change`'s events).

        A scale-down considers every unschedulable pod (it may free resources); other updates
        only the pods rejected by PodTopologySpread in the pod's namespace or whose required pod
        affinity matches the pod. ``event=None`` handles each event of the change in turn, as
        upstream's informer handler does.
        """
        if event is None:
            for evt in pod_scheduling_properties_change(new_pod, old_pod):
                self.assigned_pod_updated(old_pod, new_pod, evt)
            return
        if match_cluster_events(ClusterEvent(EventResource.POD, ActionType.UPDATE_POD_SCALE_DOWN), event):
            self._move_all_to_active_or_backoff_queue(event, old_pod, new_pod, None)
        else:
            self._move_pods_to_active_or_backoff_queue(
                self._unschedulable_pods_with_cross_topology_term(new_pod), event, old_pod, new_pod)

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
        pods = [p for p in self._unschedulable.values() if pre_check is None or pre_check(p.pod)]
        self._move_pods_to_active_or_backoff_queue(pods, event, old_obj, new_obj)

    def _move_pods_to_active_or_backoff_queue(self, pinfos: list[QueuedPodInfo], event: ClusterEvent,
                                              old_obj: Any, new_obj: Any) -> None:
        if not self._is_event_of_interest(event):
            return
        label = event_label(event)
        for pinfo in pinfos:
            if pinfo.gating_plugin and not match_any_cluster_event(event, self._gating_plugin_events(pinfo)):
                # The gating plugin is not interested in this event: it cannot ungate the pod.
                continue
            hint = self._is_pod_worth_requeuing(pinfo, event, old_obj, new_obj)
            if hint == QUEUE_SKIP:
                continue
            self._unschedulable.pop(pinfo.pod.uid, None)
            self._requeue_pod_with_queueing_strategy(pinfo, hint, label)
        self._move_request_cycle = self._sched_cycle
        # Pods in flight may be rejected for reasons this event resolves: remember it for them.
        self._add_event_if_any_in_flight(old_obj, new_obj, event)

    def _is_event_of_interest(self, event: ClusterEvent) -> bool:
        # The registrations are fixed at construction, so the answer per event is memoized.
        known = self._event_of_interest.get(event)
        if known is not None:
            return known
        interesting = cluster_event_is_wildcard(event) or any(
            match_cluster_events(registered, event)
            for hint_map in self._hint_map.values() for registered in hint_map)
        self._event_of_interest[event] = interesting
        return interesting

    def _is_pod_worth_requeuing(self, pinfo: QueuedPodInfo, event: ClusterEvent, old_obj: Any,
                                new_obj: Any) -> int:
        """Upstream ``isPodWorthRequeuing``: ask the hint functions of the pod's rejector plugins."""
        rejectors = pinfo.unschedulable_plugins | pinfo.pending_plugins
        if not rejectors:
            return QUEUE_AFTER_BACKOFF
        if cluster_event_is_wildcard(event):
            # A wildcard event with a Pod in new_obj (ForceActivate) is for that pod only.
            if new_obj is not None and (not isinstance(new_obj, Pod) or new_obj.uid != pinfo.pod.uid):
                return QUEUE_SKIP
            return QUEUE_AFTER_BACKOFF
        hint_map = self._hint_map.get(self._profile_of(pinfo.pod))
        if hint_map is None:
            return QUEUE_AFTER_BACKOFF
        pod = pinfo.pod
        strategy = QUEUE_SKIP
        for registered, fns in hint_map.items():
            if not match_cluster_events(registered, event):
                continue
            for plugin_name, fn in fns:
                if plugin_name not in rejectors:
                    continue
                if self._call_hint(fn, pod, old_obj, new_obj) == QueueingHint.QUEUE_SKIP:
                    continue
                if plugin_name in pinfo.pending_plugins:
                    return QUEUE_IMMEDIATELY
                if not pinfo.pending_plugins:
                    return QUEUE_AFTER_BACKOFF
                strategy = QUEUE_AFTER_BACKOFF
        return strategy

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

    def _unschedulable_pods_with_cross_topology_term(self, pod: Pod) -> list[QueuedPodInfo]:
        """Unschedulable pods rejected by PodTopologySpread in ``pod``'s namespace, or whose required
        pod-affinity terms match ``pod``."""
        ns_labels: Mapping[str, str] = {}
        if self._namespace_labels is not None:
            ns_labels = self._namespace_labels(pod.namespace) or {}
        out = []
        for pinfo in self._unschedulable.values():
            if POD_TOPOLOGY_SPREAD in pinfo.unschedulable_plugins and pod.namespace == pinfo.pod.namespace:
                out.append(pinfo)
                continue
            for term in _required_affinity_terms(pinfo.pod):
                if _term_matches(term, pod, ns_labels):
                    out.append(pinfo)
                    break
        return out

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
            q = self._active.get(uid) or self._unschedulable.get(uid) or self._backoff_get(uid)
            out.append(q.pod_info if q is not None else pi)
        return out

    def nominated_node_names(self) -> set[str]:
        return self.nominator.nominated_node_names()

    # ==========================================================================================
    # Introspection
    # ==========================================================================================
    def has(self, uid: str) -> bool:
        """Whether a sub-queue (active, backoff, unschedulable) holds the pod."""
        return uid in self._active or self._backoff_has(uid) or uid in self._unschedulable

    def get(self, uid: str) -> QueuedPodInfo | None:
        """The pod's QueuedPodInfo from whichever sub-queue holds it (None when in flight or absent)."""
        return self._backoff_get(uid) or self._unschedulable.get(uid) or self._active.get(uid)

    def where(self, uid: str) -> str | None:
        """``"active"``, ``"backoff"``, ``"unschedulable"``, ``"in_flight"`` or None."""
        if uid in self._active:
            return "active"
        if self._backoff_has(uid):
            return "backoff"
        if uid in self._unschedulable:
            return "unschedulable"
        if uid in self._in_flight:
            return "in_flight"
        return None

    def pods_in_active_q(self) -> list[Pod]:
        return [p.pod for p in self._active.values()]

    def pods_in_backoff_q(self) -> list[Pod]:
        return [p.pod for p in self._pod_backoff.values()] + [p.pod for p in self._pod_error_backoff.values()]

    def unschedulable_pods(self) -> list[Pod]:
        return [p.pod for p in self._unschedulable.values()]

    def queued_pod_infos(self) -> list[tuple[QueuedPodInfo, str]]:
        """Every queued pod with where it is: ``"active"``, ``"backoff"`` or ``"unschedulable"`` (heap order)."""
        out = [(p, "active") for p in self._active.raw_values()]
        out += [(p, "backoff") for p in self._pod_backoff.raw_values()]
        out += [(p, "backoff") for p in self._pod_error_backoff.raw_values()]
        out += [(p, "unschedulable") for p in self._unschedulable.values()]
        return out

    def pending_pods(self) -> tuple[list[Pod], str]:
        """All queued pods and upstream's summary ``activeQ:%v; backoffQ:%v; unschedulablePods:%v``."""
        active = self.pods_in_active_q()
        backoff = self.pods_in_backoff_q()
        unsched = self.unschedulable_pods()
        summary = f"activeQ:{len(active)}; backoffQ:{len(backoff)}; unschedulablePods:{len(unsched)}"
        return active + backoff + unsched, summary

    def num_active(self) -> int:
        return len(self._active)

    def num_backoff(self) -> int:
        return len(self._pod_backoff) + len(self._pod_error_backoff)

    def num_error_backoff(self) -> int:
        return len(self._pod_error_backoff)

    def num_unschedulable(self) -> int:
        return len(self._unschedulable)

    def num_gated(self) -> int:
        return sum(1 for p in self._unschedulable.values() if p.gating_plugin)

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
        pod has been unschedulable for longer than the limit (gated pods count only when their
        gating plugin registered the wildcard event). Never earlier than the tick at or before
        which ``now()`` falls due; a value ``<= now()`` means "flush now". Pops from backoffQ
        (which need no flush) are not considered.
        """
        now = self.clock.now()
        cands = []
        origin = 0.0 if self.pop_from_backoff_q else self.flush_origin
        for heap in (self._pod_backoff, self._pod_error_backoff):
            head = heap.peek()
            if head is not None:
                bo = self._backoff_time(head)
                if bo == -math.inf:
                    moves = None
                elif self.pop_from_backoff_q:
                    moves = (lambda t, bo=bo: bo < self._align_ns(round(t * _NS)) / _NS)
                else:
                    moves = (lambda t, bo=bo: not bo > t)
                cands.append(self._next_tick(self.backoff_expiration(head), now, BACKOFF_FLUSH_PERIOD, origin, moves))
        limit = self.pod_max_in_unschedulable_pods_duration
        earliest_ts = None
        for p in self._unschedulable.values():
            if p.gating_plugin and not match_any_cluster_event(EVENT_UNSCHEDULABLE_TIMEOUT,
                                                               self._gating_plugin_events(p)):
                continue
            if earliest_ts is None or p.timestamp < earliest_ts:
                earliest_ts = p.timestamp
        if earliest_ts is not None:
            cands.append(self._next_tick(earliest_ts + limit, now, UNSCHEDULABLE_FLUSH_PERIOD, self.flush_origin,
                                         lambda t, ts=earliest_ts: t - ts > limit))
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
        return f"PriorityQueue({self.pending_pods()[1]}; inFlight:{len(self._in_flight)})"
