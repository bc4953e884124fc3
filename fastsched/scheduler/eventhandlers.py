"""The Scheduler's event handlers: what it does with each change the Cluster commits.

Upstream's ``pkg/scheduler/eventhandlers.go``: the informers call ``addNodeToCache``,
``addPodToSchedulingQueue``, ``updatePodInCache``, ``deletePodFromSchedulingQueue``, ... and the
handlers of the other kinds the plugins registered for; each updates the cache and tells the
queue which event happened, so that the pods waiting for it are requeued. Here the Cluster
(:mod:`fastsched.scheduler.cluster`) calls the methods of :class:`EventHandlersMixin` (the
Scheduler's), in the order of its changes, after its store holds each one.

Every handler of a *committed* change also counts it (``_changed``): what a pod's attempt saw is
that count plus the cache's assumed fingerprint (see :mod:`fastsched.scheduler.scheduler`), and
``run()`` ends when nothing changed since the pending pods failed.
"""
from __future__ import annotations

import bisect
from typing import TYPE_CHECKING, Any, Iterable

import numpy as np

from ..api import KubeObject, Namespace, Node, Pod, PodDisruptionBudget
from ..api.errors import warn_manifest
from ..api.workloads import ReplicaSet, ReplicationController, Service, StatefulSet
from ..framework.events import EVENT_UNSCHEDULED_POD_ADD, node_scheduling_properties_change
from ..framework.interface import ActionType, ClusterEvent, EventResource
from ..framework.objects import EVENT_RESOURCE_OF_KIND
from ..framework.podgroups import PodGroupState, pod_group_key
from ..framework.types import QueuedPodInfo
from .cluster import TERMINAL_PHASES
from .result import DELETED, ERROR, GATED, NO_PROFILE, PENDING, TERMINATING, PodResult
from .schedule_one import _TERMINATING_MESSAGE, ASSIGNED_POD_DELETE

if TYPE_CHECKING:  # (scheduler.py imports this module)
    from .scheduler import _SpecObjects

__all__ = ["EventHandlersMixin", "JOURNAL_LENGTH", "net_unchanged"]

NODE_ADD = ClusterEvent(EventResource.NODE, ActionType.ADD, "NodeAdd")
NODE_DELETE = ClusterEvent(EventResource.NODE, ActionType.DELETE, "NodeDelete")
NAMESPACE_ADD = ClusterEvent(EventResource.NAMESPACE, ActionType.ADD, "NamespaceAdd")
NAMESPACE_UPDATE = ClusterEvent(EventResource.NAMESPACE, ActionType.UPDATE, "NamespaceUpdate")
#: the (resource, action) events of the objects the plugins read, one instance each: equal events
#: (frozen) are interchangeable, and the queue keeps its per-event answers by the event's identity
#: (a new instance per PV or claim added missed them all: ~1/5 of the volume cases' object creation;
#: a DRA extended-resource pod's PreBind brings two claim events: issue 27)
_OBJECT_EVENTS: dict[tuple[Any, ActionType], ClusterEvent] = {}
#: the kinds PodTopologySpread's DefaultSelector reads (see _spreading_object_changed)
_SPREADING_KINDS = frozenset({"Service", "ReplicationController", "ReplicaSet", "StatefulSet"})
#: the spec fields Scheduler._interned shares between equal queued pods (the compiled cycle's
#: plan key reads these; the others are shared already, or not hashable). The namespace too: a
#: string parsed from JSON or YAML is a new object per pod, and the gang runs (``place_run``)
#: take only members whose spec objects, the namespace included, are the previous member's
_INTERNED_FIELDS = ("namespace", "labels", "containers", "init_containers", "node_selector", "affinity",
                    "tolerations", "topology_spread_constraints")
_CONTAINER_FIELDS = frozenset({"containers", "init_containers"})
_SPEC_OBJECTS_MAX = 1 << 16
_SPEC_ALIASES_MAX = 1 << 10
_NO_STATE = PodGroupState()
#: how many object writes Scheduler._journal keeps: enough for the writes of a few failing binding
#: cycles (two per claim or volume of each pod), small for forks, which copy it
JOURNAL_LENGTH = 256


def _conditions_only(old: Any, new: Any) -> bool:
    """Whether PodGroup ``new`` differs from ``old`` in ``status.conditions`` only."""
    return old is not None and new is not None and old.replace(conditions=new.conditions) == new


class EventHandlersMixin:
    """The Cluster's :class:`~fastsched.scheduler.cluster.ClusterEventHandler`, as methods of the
    :class:`~fastsched.scheduler.Scheduler` (they update its cache, queue and results)."""

    # -- attributes provided by Scheduler ------------------------------------------------------
    cache: Any
    queue: Any
    profiles: dict
    results: dict[str, PodResult]
    clock: Any
    metrics: Any
    record_mode: Any
    preemption_callbacks: list
    _record_victim: Any  # (victim, preemptor, node_name) -> None: the Scheduler's decision records
    _order: list[str]
    _change_seq: int
    _journal: list
    _spec_objects: _SpecObjects
    _workload_objects: Any
    _service_selectors: dict[str, dict[str, Any]]

    def _changed(self) -> None:
        self._change_seq += 1

    def coalesce_adds(self) -> bool:
        """Whether no queued pod can react to a cluster event: no pod waits in unschedulablePods
        and none is in flight. Then the queue's handling of N add events is that of the last one
        (each only records the move-request cycle), so a batch of adds needs one call."""
        return self.queue.num_unschedulable() == 0 and not self.queue.in_flight_pods()

    # -- nodes ---------------------------------------------------------------------------------
    def on_node_add(self, node: Node) -> None:
        self.cache.add_node(node)
        self._changed()
        self.queue.move_all_to_active_or_backoff_queue(NODE_ADD, None, node)

    def on_nodes_add(self, nodes: list[Node]) -> None:
        """Many new nodes at once (the Cluster asked ``coalesce_adds`` first): one table update."""
        self.cache.add_nodes(nodes, new=True)
        self._change_seq += len(nodes)  # one _changed() per node
        self.queue.move_all_to_active_or_backoff_queue(NODE_ADD, None, nodes[-1])

    def on_node_update(self, old: Node, new: Node) -> None:
        """``updateNodeInCache``: the cache, then one move per event of the change (a label and a
        taint changed at once are two events, each matching its own registrations; no event when
        nothing a plugin reads changed)."""
        self.cache.update_node(new)
        self._changed()
        for event in node_scheduling_properties_change(new, old):
            self.queue.move_all_to_active_or_backoff_queue(event, old, new)

    def on_node_delete(self, old: Node) -> None:
        """``deleteNodeFromCache``: the move first, then the cache (upstream's order)."""
        self.queue.move_all_to_active_or_backoff_queue(NODE_DELETE, old, None)
        self.cache.remove_node(old.name)
        self._changed()

    # -- other kinds ---------------------------------------------------------------------------
    def on_namespace_add(self, ns: Namespace, existed: bool) -> None:
        self._changed()
        self.queue.move_all_to_active_or_backoff_queue(NAMESPACE_UPDATE if existed else NAMESPACE_ADD, None, ns)

    def on_pdb_add(self, pdb: PodDisruptionBudget) -> None:
        self._changed()  # preemption reads the PDBs: a pod that failed may now preempt

    def on_object_event(self, kind: str, action: ActionType, old: KubeObject | None,
                        new: KubeObject | None) -> None:
        """An object of another kind changed: PodTopologySpread's view of the workloads kept
        current; for a kind the plugins read (volumes, claims, DRA objects), the event that
        requeues the pods whose plugins registered for it."""
        if kind in _SPREADING_KINDS:
            if new is None:
                assert old is not None
                self._spreading_object_changed(old, removed=True)
            else:
                self._spreading_object_changed(new)
        if kind == "PodGroup":
            self._pod_group_event(action, old, new)
            return
        if kind == "CompositePodGroup":
            self._composite_pod_group_event(action, old, new)
            return
        resource = EVENT_RESOURCE_OF_KIND.get(kind)
        if resource is None:
            return
        self._change_seq += 1
        journal = self._journal  # for run()'s settling: see Scheduler._same_committed
        journal.append((self._change_seq, kind, old, new))
        if len(journal) > JOURNAL_LENGTH:
            del journal[:len(journal) - JOURNAL_LENGTH // 2]
        event = _OBJECT_EVENTS.get((resource, action))
        if event is None:
            event = _OBJECT_EVENTS[(resource, action)] = ClusterEvent(resource, action)
        self.queue.move_all_to_active_or_backoff_queue(event, old, new)

    def _pod_group_event(self, action: ActionType, old: KubeObject | None, new: KubeObject | None) -> None:
        """``addPodGroup`` / ``updatePodGroup`` / ``deletePodGroup``: the cache's PodGroupState,
        the queue's pod group entities, then the event. Upstream registers the PodGroup informer only with GenericWorkload: off,
        nothing happens."""
        if not self.cache.generic_workload:
            return
        if action == ActionType.ADD:
            self.cache.add_pod_group(new)
            self.queue.add_pod_group(new)
        elif action == ActionType.DELETE:
            self.cache.remove_pod_group(old)
            self.queue.delete_pod_group(old)
        else:
            self.cache.update_pod_group(old, new)
            self.queue.update_pod_group(new)
        if not (action == ActionType.UPDATE and _conditions_only(old, new)):
            # A change of the status conditions alone (the scheduler's own updatePodGroupCondition
            # after each group cycle) is read by no plugin, so for run()'s settling it is no change
            # of the cluster: a group whose verdict alternates (an Error, then Unschedulable) rewrote
            # its condition every cycle and, counted, never settled (run() never returned).
            self._changed()
        self.queue.move_all_to_active_or_backoff_queue(ClusterEvent(EventResource.POD_GROUP, action), old, new)
        if new is not None:  # members that joined the queue with the group: gated ones say so
            self._mark_gated_members([new])

    def _mark_gated_members(self, pod_groups: list) -> None:
        """The PodResults of the PodGroups' unscheduled members that wait gated in the queue say so."""
        for pg in pod_groups:
            for pod in self.cache.pod_group_states.get(pod_group_key(pg.namespace, pg.name),
                                                       _NO_STATE).unscheduled_pods().values():
                res, qpi = self.results.get(pod.uid), self.queue.get_pod(pod)
                if res is not None and res.status == PENDING and qpi is not None and qpi.gated:
                    res.status, res.message = GATED, _gate_message(pod, qpi)

    def _composite_pod_group_event(self, action: ActionType, old: KubeObject | None, new: KubeObject | None) -> None:
        """``addCompositePodGroup`` / ``updateCompositePodGroup`` / ``deleteCompositePodGroup``: the
        cache's composite states and links, the queue's trees, then the event. Upstream registers
        the informer only with CompositePodGroup: off, nothing happens (and the kind is not served)."""
        if not self.cache.composite_groups.enabled:
            return
        if action == ActionType.ADD:
            self.cache.add_composite_pod_group(new)
            self.queue.add_composite_pod_group(new)
        elif action == ActionType.DELETE:
            self.cache.remove_composite_pod_group(old)
            self.queue.delete_composite_pod_group(old)
        else:
            self.cache.update_composite_pod_group(old, new)
            self.queue.update_composite_pod_group(new)
        if not (action == ActionType.UPDATE and _conditions_only(old, new)):
            # (as for PodGroups: the scheduler's own condition updates are no change of the cluster)
            self._changed()
        self.queue.move_all_to_active_or_backoff_queue(ClusterEvent(EventResource.COMPOSITE_POD_GROUP, action),
                                                       old, new)
        if new is not None:  # members of the tree that joined the queue with it: gated ones say so
            forest = self.queue.workload_forest
            root = forest.root_for_composite_pod_group(new)
            if root is not None:
                self._mark_gated_members(forest.leaf_pod_groups(root))

    def _spreading_object_changed(self, obj: KubeObject, removed: bool = False) -> None:
        """Keep PodTopologySpread's view of Services, ReplicationControllers, ReplicaSets and
        StatefulSets (what upstream's DefaultSelector reads) current, one object at a time."""
        kind = obj.KIND
        seen = self._workload_objects
        if isinstance(obj, Service):
            selectors = self._service_selectors.setdefault(obj.namespace, {})
            if removed:
                selectors.pop(obj.name, None)
            else:
                selectors[obj.name] = obj.selector
            services = dict(seen.services)
            services[obj.namespace] = list(selectors.values())
            seen.services = services
            return
        assert isinstance(obj, (ReplicationController, ReplicaSet, StatefulSet))  # _SPREADING_KINDS
        table = {"ReplicationController": seen.replication_controllers, "ReplicaSet": seen.replica_sets,
                 "StatefulSet": seen.stateful_sets}[kind]
        if removed:
            table.pop((obj.namespace, obj.name), None)
        else:
            table[(obj.namespace, obj.name)] = obj.selector

    # -- pods ----------------------------------------------------------------------------------
    def on_pod_add(self, pod: Pod, admission_error: str) -> None:
        """A new pod, not terminated: a bound one goes to the cache; another is queued (with its
        PodResult), unless it is being deleted, was refused by admission or names no profile."""
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
        if admission_error:
            res.status, res.message = ERROR, admission_error
            return
        if pod.scheduler_name not in self.profiles:
            res.status = NO_PROFILE
            res.message = f'profile not found for scheduler name "{pod.scheduler_name}"'
            return
        self.cache.add_pod_group_member(pod)
        was = self._group_gated(pod)
        qpi = self.queue.add(self._interned(pod))
        if self.cache.generic_workload:  # a new member may complete a gang waiting at PreEnqueue
            self.queue.move_all_to_active_or_backoff_queue(EVENT_UNSCHEDULED_POD_ADD, None, pod)
        if qpi.gated:
            res.status = GATED
            res.message = _gate_message(pod, qpi)
        self._follow_group_gating(pod, was)

    def on_unbound_pods_add(self, run: Iterable[tuple[Pod, str]]) -> None:
        """:meth:`on_pod_add` of each ``(pod, admission error)`` of ``run`` (unbound pods, not
        terminated), the Cluster storing each pod as the iteration reaches it (so each call sees
        the cluster as ``add_pod`` leaves it), with the queue's activeQ adds made at once at the
        end of the run (``PriorityQueue.begin_add_run``); also when the run stops on an error."""
        queue = self.queue
        if not queue.begin_add_run():
            for pod, err in run:
                self.on_pod_add(pod, err)
            return
        try:
            for pod, err in run:
                self.on_pod_add(pod, err)
        finally:
            queue.end_add_run()

    def _gating_changed(self, qpi: QueuedPodInfo) -> None:
        """The queue's PreEnqueue verdict on a pod changed (a claim DynamicResources waited for was
        created or deleted, a scheduling gate removed, another plugin now holds it): the pod's
        PodResult says Gated with the current reason, or Pending once released. Results of pods
        that are scheduled, waiting at Permit or gone are left as they are."""
        pod = qpi.pod
        res = self.results.get(pod.uid)
        if res is None or res.pod.uid != pod.uid:
            return
        if qpi.gated:
            if res.status in _GATEABLE:
                res.status, res.message = GATED, _gate_message(pod, qpi)
        elif res.status == GATED:
            res.status, res.message = PENDING, ""

    def _group_gated(self, pod: Pod) -> bool | None:
        """Whether the queue holds ``pod``'s PodGroup gated by PreEnqueue (None: not a member of a
        PodGroup the queue holds as an entity)."""
        if not self.cache.generic_workload or pod.scheduling_group is None:
            return None
        entity = self.queue.get_pod_group(pod.namespace, pod.scheduling_group.pod_group_name)
        return None if entity is None else entity.gated

    def _follow_group_gating(self, pod: Pod, was: bool | None) -> None:
        """When a change of ``pod`` (added, deleted, updated) gated or released its PodGroup in
        the queue (``was``: :meth:`_group_gated` before it), the group's unscheduled members'
        PodResults say so: Gated with the reason, or Pending again. (A gang's last member
        releases the members that said Gated; deleting members can hold the rest again, whose
        results said Pending with no reason.) Only on a change, so adding a gang of N member by
        member walks its members once, not N times."""
        now = self._group_gated(pod)
        if now is None or now == was:
            return
        state = self.cache.pod_group_states.get(pod_group_key(pod.namespace, pod.pod_group_name or ""),
                                                _NO_STATE)
        asked = [(member, res) for member in state.unscheduled_pods().values()
                 if (res := self.results.get(member.uid)) is not None
                 and res.status == (PENDING if now else GATED)]
        if not asked:
            return
        # (one pass over the group's queued members, not a search per member: a gang's last
        # member releases them all)
        queued = (self.queue.queued_members([member for member, _ in asked]) if self.queue.generic_workload
                  else {member.uid: self.queue.get(member.uid) for member, _ in asked})
        for member, res in asked:
            qpi = queued.get(member.uid)
            if qpi is None:
                continue
            if now and qpi.gated:
                res.status, res.message = GATED, _gate_message(member, qpi)
            elif not now and not qpi.gated:
                res.status, res.message = PENDING, ""

    def on_bound_pods_add(self, pods: list[Pod], orders: np.ndarray, owners: list[str] | None,
                          uid_words: tuple) -> None:
        """Many new bound pods at once (the Cluster asked ``coalesce_adds`` first): written to the
        cache's bulk columns, which the Cluster's pod indexes view (``scheduler_views``)."""
        self.cache.add_pods(pods, scheduler_views=True, orders=orders, owners=owners, uid_words=uid_words)
        self._change_seq += len(pods)  # one _changed() per pod
        self.queue.assigned_pod_added(pods[-1])

    def on_pod_update(self, old: Pod, new: Pod) -> None:
        """A known pod (not terminated before) changed (upstream ``updatePod``). Terminated now:
        for the scheduler it is deleted. Bound before: the cache's copy is replaced and each event
        of the change moves the pods its hints accept (``updateAssignedPodInCache``). Bound now
        (by another component): added to the cache as a bound pod, taken out of the queue. Not
        bound, of one of the profiles: ``updatePodInSchedulingQueue``."""
        if new.phase in TERMINAL_PHASES:
            self._forget_pod(old)
            return
        if old.node_name:
            self.cache.update_pod(old, new)
            self._changed()
            self.queue.assigned_pod_updated(old, new)
        elif new.node_name:
            self.cache.add_pod(new)
            self._changed()
            self.queue.assigned_pod_added(new)
            if old.scheduler_name in self.profiles:
                # deletePodFromSchedulingQueue(inBinding=true): the queue only
                self.queue.delete(old)
            res = self.results.get(new.uid)
            if res is not None:
                res.pod = new
        else:
            if old.scheduler_name in self.profiles:  # responsibleForPod
                self.cache.update_pod_group_member(old, new)
                # upstream returns for an assumed pod: its binding cycle owns it
                if not self.cache.is_assumed_pod(new):
                    was = self._group_gated(new)
                    self.queue.update(old, new)
                    self._nomination_moved(old, new)
                    self._follow_group_gating(new, was)
                elif new.deletion_timestamp is not None and old.deletion_timestamp is None:
                    self._handle_assumed_pod_deletion(new)
            res = self.results.get(new.uid)
            if res is not None:
                res.pod = new
                qpi = self.queue.get_pod(new)
                if res.status == GATED and qpi is not None and not qpi.gated:
                    res.status, res.message = PENDING, ""

    def _handle_assumed_pod_deletion(self, pod: Pod) -> None:
        """Upstream ``handleAssumedPodDeletion``: the deletion of an assumed pod started. Waiting
        at Permit, it is rejected (``RejectWaitingPod``: ``removed``), and its binding cycle
        forgets it through ``handleBindingCycleError``; otherwise (in PreBind or Bind) the cache
        drops it here (``RemoveAssumedPod``) to free what it holds. Either way the pods waiting
        for room hear an AssignedPodDelete of the cache's copy (the one with the node)."""
        assumed = self.cache.get_pod(pod)
        if assumed is None:  # its binding cycle already ended
            return
        fw = self.profiles.get(assumed.scheduler_name)
        if fw is None:
            return
        if not fw.reject_waiting_pod(assumed.uid):
            try:
                self.cache.forget_pod(assumed)
            except Exception:  # noqa: BLE001 - upstream logs a failed RemoveAssumedPod and goes on
                pass
        self.queue.move_all_to_active_or_backoff_queue(ASSIGNED_POD_DELETE, assumed, None)

    def on_pod_status_update(self, old: Pod | None, new: Pod) -> None:
        """The scheduler's own status patch (a nomination) heard back: ``updatePodInSchedulingQueue``.
        An assumed pod's (the binding cycle nominating it to its node) is not the queue's:
        upstream returns for assumed pods."""
        if old is not None and not new.node_name and not self.cache.is_assumed_pod(new):
            self.queue.update(old, new)
            self._nomination_moved(old, new)
        res = self.results.get(new.uid)
        if res is not None:
            res.pod = new

    def _nomination_moved(self, old: Pod, new: Pod) -> None:
        """``hasNominatedNodeNameChanged``: a pod that had a nominated node and now has another
        or none counts, for the pods of lower or equal priority, as a pod deleted from that node
        (they treat a nominated pod as assigned there)."""
        if old.nominated_node_name and old.nominated_node_name != new.nominated_node_name:
            self.queue.move_all_to_active_or_backoff_queue(ASSIGNED_POD_DELETE, old, None,
                                                           _le_priority(old.effective_priority))

    def on_pod_delete(self, old: Pod, reason: str) -> None:
        if old.phase not in TERMINAL_PHASES:
            self._forget_pod(old)
        res = self.results.get(old.uid)
        if res is not None:
            res.status = DELETED
            res.message = reason or "deleted"

    def _forget_pod(self, old: Pod) -> None:
        """Take a pod out of the queue, or off its node (a deleted or terminated pod)."""
        if old.node_name or self.cache.get_pod(old) is not None:
            fw = self.profiles.get(old.scheduler_name)
            if fw is not None:
                fw.reject_waiting_pod(old.uid)
            self.cache.remove_confirmed_pod(old)  # (an assumed pod's copy is its binding cycle's)
            self._changed()
            self.queue.move_all_to_active_or_backoff_queue(ASSIGNED_POD_DELETE, old, None)
        else:
            was = self._group_gated(old)
            self.queue.delete(old)
            self.cache.remove_pod_group_member(old)  # not assumed: the group state drops it here
            self._follow_group_gating(old, was)
            if old.nominated_node_name and old.scheduler_name in self.profiles:
                # deletePodFromSchedulingQueue (for the scheduler's own pods): the lower or equal
                # priority pods treated it as assigned to its nominated node
                self.queue.move_all_to_active_or_backoff_queue(ASSIGNED_POD_DELETE, old, None,
                                                               _le_priority(old.effective_priority))
        self.queue.nominator.delete_nominated_pod_if_exists(old)

    def on_preempting(self, victim: Pod, preemptor: Pod, node_name: str) -> None:
        """Before a preemption victim is deleted: counted, recorded, and the observers told."""
        self.metrics.preemption_victims += 1
        if self.record_mode is not None:
            self._record_victim(victim, preemptor, node_name)
        for cb in self.preemption_callbacks:
            cb(victim, preemptor, node_name)

    def on_nomination_cleared(self, pod: Pod) -> None:
        self.queue.nominator.delete_nominated_pod_if_exists(pod)

    # -- the queue's copies of equal specs -----------------------------------------------------
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
        canonical, aliases = objects.by_id, objects.aliases
        for name in _INTERNED_FIELDS:
            value = getattr(pod, name)
            if not value or canonical.get(id(value)) is value:  # already the shared object (stamped pods)
                continue
            alias = aliases.get(id(value))
            if alias is not None and alias[0] is value:  # equal to a shared object, met before
                setattr(pod, name, alias[1])
                continue
            key = (name, value, tuple(tuple(c.request_nanos.items()) for c in value)) if name in _CONTAINER_FIELDS \
                else (name, value)
            try:
                shared = objects.setdefault(key, value)
            except TypeError:  # an unhashable value (raw manifest parts): left as it is
                continue
            if shared is not value:
                setattr(pod, name, shared)
                if len(aliases) >= _SPEC_ALIASES_MAX:  # pods parsed one manifest each add one apiece
                    aliases.clear()
                aliases[id(value)] = (value, shared)
            else:
                canonical[id(value)] = value
        return pod


def net_unchanged(journal: list[tuple[int, str, Any, Any]], seq_a: int, seq_b: int) -> bool:
    """Whether the changes ``seq_a`` (exclusive) to ``seq_b`` (inclusive), ``seq_a < seq_b``, are
    all in ``journal`` (object writes, change seq ascending) and leave every object they write as
    it was: present or absent as before, with an equal ``manifest`` and equal typed fields (an
    object without a manifest, built in code, counts only as the very same object). A change
    missing from the journal (a bind, a node, a pod, a write older than the journal keeps)
    answers False."""
    if not journal or journal[0][0] > seq_a + 1 or journal[-1][0] < seq_b:
        return False
    start = bisect.bisect_right(journal, seq_a, key=_journal_seq)
    entries = journal[start:start + (seq_b - seq_a)]
    if len(entries) != seq_b - seq_a or entries[-1][0] != seq_b:
        return False  # a gap: a change that is not an object write
    first: dict[tuple[str, str], Any] = {}
    last: dict[tuple[str, str], Any] = {}
    for _, kind, old, new in entries:
        key = (kind, (old if old is not None else new).key)
        if key not in first:
            first[key] = old
        last[key] = new
    for key, before in first.items():
        after = last[key]
        if before is after:
            continue
        if before is None or after is None or type(before) is not type(after):
            return False
        # both views: the API's (the manifest, which writes keep current) and the typed fields
        # (KubeObject's __eq__), so a copy made with replace() and an unchanged manifest is a change
        if not before.manifest or before.manifest != after.manifest or before != after:
            return False
    return True


def _journal_seq(entry: tuple[int, str, Any, Any]) -> int:
    return entry[0]


def _le_priority(priority: int) -> Any:
    """Upstream ``getLEPriorityPreCheck``: the pods of lower or equal priority."""
    return lambda pod: pod.effective_priority <= priority


#: the PodResult statuses a pod held by PreEnqueue replaces: queued or held. A pod whose attempt
#: failed keeps its Unschedulable/Error result (upstream's PodScheduled condition keeps the failure
#: while PreEnqueue holds the pod: DefaultPreemption's PreEnqueue during an async preemption, a
#: claim deleted meanwhile); explain().gated says what holds it now
_GATEABLE = frozenset((PENDING, GATED))


def _gate_message(pod: Pod, qpi: QueuedPodInfo) -> str:
    """Why a pod is held before the queue: SchedulingGates' own text, or the gating PreEnqueue
    plugin and its status message."""
    if qpi.gating_plugin == "SchedulingGates" or not qpi.gating_plugin:
        gates = " ".join(pod.scheduling_gates)
        return f"waiting for scheduling gates: [{gates}]"
    detail = f": {qpi.gating_message}" if qpi.gating_message else ""
    return f'rejected by PreEnqueue plugin "{qpi.gating_plugin}"{detail}'
