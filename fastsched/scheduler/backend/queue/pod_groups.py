"""The scheduling queue's pod groups (GenericWorkload): members queued as one entity per group.

Upstream ``pkg/scheduler/backend/queue``: ``pod_group_member_pods.go`` (the incomplete and pending
member sets), ``workload_forest.go`` (the PodGroup objects the queue has seen; with
CompositePodGroup off every group is its own root and only leaf: :class:`WorkloadForest`; with it
:class:`~.workload_forest.CompositeWorkloadForest`, a root CompositePodGroup's entity covering its
tree) and the pod group parts of ``scheduling_queue.go``: ``addPodGroupMember``,
``addToPodGroupIfExists``, ``deleteFromAnyQueue``, ``addUnschedulablePodGroupMember``,
``AddAttemptedPodGroupIfNeeded``, the member branches of ``Update``, ``Delete`` and ``Activate``,
``AddPodGroup`` / ``UpdatePodGroup`` / ``DeletePodGroup``, ``AddCompositePodGroup`` /
``UpdateCompositePodGroup`` / ``DeleteCompositePodGroup``, ``isEntityWorthRequeuing`` and
``runPreEnqueuePlugins`` over an entity's members.

A member pod (GenericWorkload on and ``spec.schedulingGroup`` set) is never queued alone: it
waits in ``incomplete_pod_group_pods`` until its PodGroup object is seen, joins its group's
:class:`~fastsched.framework.podgroups.QueuedPodGroupInfo` wherever that is queued, or waits in
``pending_pod_group_pods`` while the group is in its scheduling cycle (the last popped entity);
``add_attempted_pod_group_if_needed`` requeues the group with those pods after the cycle. A group
runs PreEnqueue on every member (one gated member gates the group), pops as one entity (one
scheduling cycle, every member in flight) and backs off as one (max backoff times ``sqrt(size)``,
see the backoff queue). :class:`PodGroupQueueMixin` is part of
:class:`~fastsched.scheduler.backend.queue.PriorityQueue`; nothing here runs with the gate off.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Iterable

from ....framework.events import EVENT_UNSCHEDULED_POD_ADD, EVENT_UNSCHEDULED_POD_UPDATE, SCHEDULE_ATTEMPT_FAILURE, \
    event_label
from ....framework.podgroups import POD_GROUP_KEY_TYPE, EntityKey, QueuedPodGroupInfo, entity_key_string, pod_group_key
from ....framework.status import Code
from .workload_forest import CompositeWorkloadForest

if TYPE_CHECKING:  # pragma: no cover
    from ....api import Pod
    from ....api.compositepodgroup import CompositePodGroup
    from ....api.scheduling import PodGroup
    from ....framework.interface import ClusterEvent
    from ....framework.status import Status
    from ....framework.types import QueuedPodInfo

__all__ = ["PodGroupMemberPods", "WorkloadForest", "PodGroupQueueMixin"]

_UNSCHEDULED_POD_ADD = event_label(EVENT_UNSCHEDULED_POD_ADD)
_UNSCHEDULED_POD_UPDATE = event_label(EVENT_UNSCHEDULED_POD_UPDATE)

# the queueing strategies (scheduling_queue.py's, repeated to keep this module below it)
_QUEUE_SKIP, _QUEUE_AFTER_BACKOFF, _QUEUE_IMMEDIATELY = 0, 1, 2


def _group_key_of(pod: "Pod") -> EntityKey:
    """``podGroupKeyForPod``."""
    return pod_group_key(pod.namespace, pod.scheduling_group.pod_group_name or "")  # type: ignore[union-attr]


class PodGroupMemberPods:
    """``podGroupMemberPods``: member pods by group, then by pod name (the incomplete or the
    pending ones)."""

    __slots__ = ("_by_group",)

    def __init__(self) -> None:
        self._by_group: dict[EntityKey, dict[str, "QueuedPodInfo"]] = {}

    def add(self, pinfo: "QueuedPodInfo") -> None:
        self._by_group.setdefault(_group_key_of(pinfo.pod), {})[pinfo.pod.name] = pinfo

    def has(self, pod: "Pod") -> bool:
        return pod.name in self._by_group.get(_group_key_of(pod), {})

    def get(self, pod: "Pod") -> "QueuedPodInfo | None":
        return self._by_group.get(_group_key_of(pod), {}).get(pod.name)

    def update(self, new_pod: "Pod") -> "QueuedPodInfo | None":
        pinfo = self.get(new_pod)
        if pinfo is not None:
            pinfo.pod_info.update(new_pod)
        return pinfo

    def delete(self, pod: "Pod") -> "QueuedPodInfo | None":
        key = _group_key_of(pod)
        pods = self._by_group.get(key)
        if pods is None or pod.name not in pods:
            return None
        pinfo = pods.pop(pod.name)
        if not pods:
            del self._by_group[key]
        return pinfo

    def clear(self, namespace: str, name: str) -> list["QueuedPodInfo"]:
        """Take every member of the group out."""
        return list(self._by_group.pop(pod_group_key(namespace, name), {}).values())

    def list(self) -> list["Pod"]:
        return [pinfo.pod for pods in self._by_group.values() for pinfo in pods.values()]

    def __len__(self) -> int:
        return sum(len(pods) for pods in self._by_group.values())


class WorkloadForest:
    """``workloadForest`` with CompositePodGroup off: the PodGroup objects the queue has seen; a
    group is its own root."""

    __slots__ = ("pod_groups",)

    def __init__(self) -> None:
        self.pod_groups: dict[EntityKey, "PodGroup"] = {}

    def add_pod_group(self, pod_group: "PodGroup") -> None:
        self.pod_groups[pod_group_key(pod_group.namespace, pod_group.name)] = pod_group

    update_pod_group = add_pod_group

    def delete_pod_group(self, pod_group: "PodGroup") -> None:
        self.pod_groups.pop(pod_group_key(pod_group.namespace, pod_group.name), None)

    def root_for_pod(self, pod: "Pod") -> EntityKey | None:
        """``getRootLookupInfoForPod``: the root's key, None until the PodGroup is seen."""
        key = _group_key_of(pod)
        return key if key in self.pod_groups else None

    def root_for_pod_group(self, pod_group: "PodGroup") -> EntityKey | None:
        key = pod_group_key(pod_group.namespace, pod_group.name)
        return key if key in self.pod_groups else None

    def leaf_pod_groups(self, root: EntityKey) -> list["PodGroup"]:
        pg = self.pod_groups.get(root)
        return [] if pg is None else [pg]

    def build_queued_pod_group_info(self, root: EntityKey) -> QueuedPodGroupInfo | None:
        """``buildQueuedPodGroupInfo``: a new, empty entity for the root (None: no such group)."""
        pg = self.pod_groups.get(root)
        return None if pg is None else QueuedPodGroupInfo(pg)


class PodGroupQueueMixin:
    """The PriorityQueue's pod group operations (see the module docstring)."""

    # -- provided by PriorityQueue ----------------------------------------------------------------
    clock: Any
    nominator: Any
    pop_from_backoff_q: bool
    _active_q: Any
    _backoff_q: Any
    _unschedulable_pods: Any
    _queue_error: type

    def _init_pod_groups(self, generic_workload: bool, composite_pod_group: bool = False) -> None:
        self.generic_workload = generic_workload
        # (the gate is the forest's kind, not an attribute of its own: one more instance attribute
        # takes the PriorityQueue past CPython's 30 shared dict keys, and every attribute read of
        # the hot paths gets slower, 10-15% of adding a gang's members)
        self.workload_forest: WorkloadForest | CompositeWorkloadForest = \
            CompositeWorkloadForest(True) if composite_pod_group else WorkloadForest()
        #: members whose PodGroup object the queue has not seen yet
        self.incomplete_pod_group_pods = PodGroupMemberPods()
        #: members that arrived (or failed) while their group was in its scheduling cycle
        self.pending_pod_group_pods = PodGroupMemberPods()
        #: ``activeQ.lastPoppedEntityKey``: the entity in its scheduling cycle (until it is requeued)
        self.last_popped_entity: str | None = None

    @property
    def composite_pod_group(self) -> bool:
        """``isCompositePodGroupEnabled``."""
        return isinstance(self.workload_forest, CompositeWorkloadForest)

    def is_pod_group_member(self, pod: "Pod") -> bool:
        """``isPodGroupMember`` (InPlacePodVerticalScalingSchedulerPreemption, which exempts
        deferred resizes, is off in fastsched)."""
        return self.generic_workload and pod.scheduling_group is not None

    # -- where an entity is ---------------------------------------------------------------------------
    def _get_entity(self, key: str) -> Any:
        """``getEntityFromAnyQueue``."""
        return self._active_q.get(key) or self._backoff_q.get(key) or self._unschedulable_pods.get(key)

    def _delete_from_any_queue(self, key: str) -> tuple[Any, int]:
        """``deleteFromAnyQueue``: the entity taken out, and the strategy that puts it back where it was."""
        entity = self._active_q.delete(key)
        if entity is not None:
            return entity, _QUEUE_IMMEDIATELY
        entity = self._backoff_q.get(key)
        if entity is not None:
            self._backoff_q.delete(key)
            return entity, _QUEUE_AFTER_BACKOFF
        entity = self._unschedulable_pods.pop(key, None)
        if entity is not None:
            return entity, _QUEUE_SKIP
        return None, _QUEUE_SKIP

    def get_pod_group(self, namespace: str, name: str, key_type: str = POD_GROUP_KEY_TYPE) -> QueuedPodGroupInfo | None:
        """``GetPodGroup``: the root group's entity (``key_type`` podgroup or
        compositepodgroup) in activeQ, backoffQ or the unschedulable pool."""
        return self._get_entity(entity_key_string(key_type, namespace, name))

    def pop_pod_group(self, namespace: str, name: str, key_type: str = POD_GROUP_KEY_TYPE) -> QueuedPodGroupInfo | None:
        """The group's entity taken from whichever queue holds it and put in flight as ``pop()``
        puts the head (attempts counted, members in flight, one scheduling cycle), wherever it
        stood: for ``explain``'s dry run of the group cycle on a fork. None when the group is not
        queued or is gated (its PreEnqueue plugins hold it: no cycle would run)."""
        key = entity_key_string(key_type, namespace, name)
        entity = self._get_entity(key)
        if entity is None or entity.gated:
            return None
        self._delete_from_any_queue(key)
        if not self._active_q._group_to_in_flight(entity):
            return None
        if entity.initial_attempt_timestamp is None:
            entity.initial_attempt_timestamp = self.clock.now()
        self.last_popped_entity = key
        return entity

    # -- adding members -------------------------------------------------------------------------------
    def _add_pod_group_member(self, pinfo: "QueuedPodInfo") -> None:
        """``addPodGroupMember``."""
        root = self.workload_forest.root_for_pod(pinfo.pod)
        if root is None:
            self.incomplete_pod_group_pods.add(pinfo)
            return
        if self._add_to_pod_group_if_exists(pinfo, root):
            return
        if self.last_popped_entity == entity_key_string(*root):
            self.pending_pod_group_pods.add(pinfo)
            return
        entity = self.workload_forest.build_queued_pod_group_info(root)
        assert entity is not None  # the root is in the forest
        entity.add_pod(pinfo)
        entity.timestamp = pinfo.timestamp
        entity.initial_attempt_timestamp = pinfo.initial_attempt_timestamp
        self._move_to_active_q(entity, _UNSCHEDULED_POD_ADD)  # type: ignore[attr-defined]

    def _add_to_pod_group_if_exists(self, pinfo: "QueuedPodInfo", root: EntityKey) -> bool:
        """``addToPodGroupIfExists``: join the queued entity and requeue it where it was."""
        entity, strategy = self._delete_from_any_queue(entity_key_string(*root))
        if entity is None:
            return False
        entity.add_pod(pinfo)
        self._requeue_pod_with_queueing_strategy(entity, strategy, _UNSCHEDULED_POD_ADD)  # type: ignore[attr-defined]
        return True

    def _add_unschedulable_pod_group_member(self, pinfo: "QueuedPodInfo") -> None:
        """``addUnschedulablePodGroupMember``: a member back from a failed attempt (its group is
        in flight: it waits with the pending pods for ``add_attempted_pod_group_if_needed``)."""
        self._add_pod_group_member(pinfo)

    def add_attempted_pod_group_if_needed(self, pg_info: QueuedPodGroupInfo, scheduling_cycle: int,
                                          status: "Status | None") -> Exception | None:
        """``AddAttemptedPodGroupIfNeeded``: after a group's cycle, requeue it with its pending
        members (none: nothing to do). Success -> activeQ without backoff and the failure counts
        reset (the timestamp kept when a pod of this attempt failed: it can preempt at once);
        rejected -> one more unschedulable failure; other -> one more error. Then backoffQ while
        backing off, else activeQ (through PreEnqueue: a gated group waits in the unschedulable
        pool). Returns an error (not raised) when the group is queued already."""
        QueueError = self._queue_error  # scheduling_queue's (that module imports this one)
        key = pg_info.key_string
        if key in self._unschedulable_pods:
            return QueueError(f"pod group {pg_info.namespace}/{pg_info.name} is already present in unschedulable queue")
        if key in self._active_q:
            return QueueError(f"pod group {pg_info.namespace}/{pg_info.name} is already present in the active queue")
        if self._backoff_q.has(key):
            return QueueError(f"pod group {pg_info.namespace}/{pg_info.name} is already present in the backoff queue")
        self.last_popped_entity = None
        pending: list = []
        for leaf in self.workload_forest.leaf_pod_groups(pg_info.key):
            pending.extend(self.pending_pod_group_pods.clear(leaf.namespace, leaf.name))
        if not pending:
            return None
        attempted = {m.pod.uid for m in pg_info.members}
        had_failed_pods = any(p.pod.uid in attempted for p in pending)
        root = self.workload_forest.build_queued_pod_group_info(pg_info.key)
        if root is None:
            for pinfo in pending:
                self.incomplete_pod_group_pods.add(pinfo)
            return None
        for pinfo in pending:
            root.add_pod(pinfo)
        root.copy_queueing_params(pg_info)
        requeue_without_backoff = preserve_timestamp = False
        if status is None or status.is_success():
            requeue_without_backoff = True
            preserve_timestamp = had_failed_pods
            root.consecutive_errors_count = 0
            root.unschedulable_count = 0
        elif status.is_rejected():
            root.unschedulable_count += 1
            root.consecutive_errors_count = 0
            root.backoff_expiration = None
        else:
            root.consecutive_errors_count += 1
            root.backoff_expiration = None
        if not preserve_timestamp:
            root.timestamp = self.clock.now()
        # back from an attempt: the flush's flag and time no longer apply (the group's own field, as
        # upstream: a failed member's was cleared by add_unschedulable_if_not_present)
        root._was_flushed_from_unschedulable = False
        root.flush_timestamp = None
        if not requeue_without_backoff and self._backoff_q.is_backing_off(root):
            self._move_to_backoff_q(root, SCHEDULE_ATTEMPT_FAILURE)  # type: ignore[attr-defined]
        else:
            self._move_to_active_q(root, SCHEDULE_ATTEMPT_FAILURE)  # type: ignore[attr-defined]
        return None

    def park_pod_group(self, entity: QueuedPodGroupInfo) -> None:
        """:meth:`park` for a pod group just popped: back into the unschedulable pool *without* a
        cycle (the pop's ``attempts`` increment undone, its timestamp now), out of flight. Not an
        upstream operation: ``Scheduler.run()`` without ``until`` parks a group whose members all
        failed twice on the committed cluster as it is (a gang whose bindings keep failing would
        otherwise be retried after each backoff forever). Events move it out as any unschedulable
        group."""
        entity.attempts -= 1
        entity.timestamp = self.clock.now()
        self.last_popped_entity = None
        key = entity.key_string
        if key not in self._unschedulable_pods and key not in self._active_q and not self._backoff_q.has(key):
            self._unschedulable_pods.add(entity, None)
        for member in entity.members:
            self.done(member.pod.uid)  # type: ignore[attr-defined]

    # -- PreEnqueue and hints over the members ------------------------------------------------------
    def _run_pre_enqueue_plugins_for_group(self, entity: QueuedPodGroupInfo) -> None:
        """``runPreEnqueuePlugins`` for a group: every member's plugins; one gated member gates
        the group (with that member's gating plugin and message)."""
        if entity.is_composite:
            self._run_pre_enqueue_plugins_for_tree(entity)
            return
        gated = None
        # the plugins that answer per pod group are asked once: the members are one group's
        # (a flat entity) and nothing changes the cache while they run
        group_memo: dict = {}
        # A member gated by a per-group plugin runs that plugin first and stops at its rejection:
        # when the group's answer still rejects, such a member only takes the answer (the loop
        # below, inlined: every added member of a gated gang runs this over all N members)
        held_by, message = "", ""
        if entity.members:
            first = entity.members[0]
            for name, pl, per_group, _ in self._pre_enqueue_entries.get(self._profile_of(first.pod), ()):  # type: ignore[attr-defined]
                if per_group and name == first.gating_plugin:
                    s = self._pre_enqueue_status(pl, first)  # type: ignore[attr-defined]
                    if s is None or s.code() == Code.SUCCESS:
                        group_memo[name] = (s, None)  # (asked once per pass, as below)
                    else:
                        held_by, message = name, s.message()
                        group_memo[name] = (s, message)
                    break
        # The memo (QueuedPodGroupInfo.held): when the members but the fresh ones are held by the
        # same answer already, the loop over them would write what they hold; only the fresh ones
        # run (a gang's N members arrive one by one: N passes of N members otherwise)
        memo = (held_by, message) if held_by else None
        use_memo = memo is not None and entity.held == memo
        all_held = True
        for member in entity.fresh if use_memo else entity.members:
            if held_by and member.gating_plugin == held_by:
                member.unschedulable_plugins.add(held_by)
                member.gated = True
                member.gating_message = message
                gated = member
                continue
            self._run_pre_enqueue_plugins(member, group_memo)  # type: ignore[attr-defined]
            if member.gating_plugin:
                gated = member
            if member.gating_plugin != held_by or member.gating_message != message:
                all_held = False
        entity.fresh = []
        entity.held = memo if all_held else None
        if use_memo:  # the last gated member in member order, as the full loop finds it
            members = entity.members
            gated = members[-1] if members and members[-1].gating_plugin else \
                next((m for m in reversed(members) if m.gating_plugin), None)
        plugin = "" if gated is None else gated.gating_plugin
        if entity.gating_plugin != plugin:
            entity.gating_plugin = plugin
            self._unschedulable_pods.regroup(entity)
        entity.gated = bool(plugin)
        entity.gating_message = "" if gated is None else gated.gating_message

    def _run_pre_enqueue_plugins_for_tree(self, entity: QueuedPodGroupInfo) -> None:
        """``runPreEnqueuePlugins`` for a composite entity: every member's plugins, no memo (the
        members belong to several PodGroups, whose per-group answers differ); the last gated
        member gates the entity."""
        gated = None
        for member in entity.members:
            self._run_pre_enqueue_plugins(member)  # type: ignore[attr-defined]
            if member.gating_plugin:
                gated = member
        entity.fresh = []
        entity.held = None
        plugin = "" if gated is None else gated.gating_plugin
        if entity.gating_plugin != plugin:
            entity.gating_plugin = plugin
            self._unschedulable_pods.regroup(entity)
        entity.gated = bool(plugin)
        entity.gating_message = "" if gated is None else gated.gating_message

    def _is_entity_worth_requeuing(self, entity: QueuedPodGroupInfo, event: "ClusterEvent", old_obj: Any,
                                   new_obj: Any) -> int:
        """``isEntityWorthRequeuing``: the best strategy among the members'.

        Only a member with pending plugins can answer QueueImmediately (``isPodWorthRequeuing``);
        once some member answered QueueAfterBackoff the others cannot change the answer, and they
        are not asked (the hint functions are pure: asking them changes nothing)."""
        best = _QUEUE_SKIP
        # (once an answer is in, only members with pending plugins are left to ask: none, when
        # the entity counts none, and the walk over a gang's N members for each of its N added
        # pods stops there)
        members_with_pending = entity.members_with_pending
        for member in entity.members:
            if best and not member.pending_plugins:
                if not members_with_pending:
                    break
                continue
            if member.pending_plugins:
                members_with_pending -= 1
            strategy = self._is_pod_worth_requeuing(member, event, old_obj, new_obj)  # type: ignore[attr-defined]
            if strategy > best:
                best = strategy
            if best == _QUEUE_IMMEDIATELY:
                break
        return best

    # -- moving group entities ------------------------------------------------------------------------
    def _move_group_to_active_q(self, entity: QueuedPodGroupInfo, event: str, moves_from_backoff_q: bool) -> bool:
        """``moveToActiveQ`` for a group."""
        if not (self.pop_from_backoff_q and moves_from_backoff_q):
            self._run_pre_enqueue_plugins_for_group(entity)
        key = entity.key_string
        if entity.gating_plugin:
            entity.was_flushed_from_unschedulable = False  # no attempt will clear it (and the members')
            if key in self._active_q or self._backoff_q.has(key) or key in self._unschedulable_pods:
                return False
            self._unschedulable_pods.add(entity, event)
            return False
        entity.set_initial_attempt_timestamp(self.clock.now())
        self._unschedulable_pods.pop(key, None)
        self._backoff_q.delete(key)
        self._active_q.add(entity, event)
        return True

    def _move_group_to_backoff_q(self, entity: QueuedPodGroupInfo, event: str) -> bool:
        """``moveToBackoffQ`` for a group."""
        key = entity.key_string
        if self.pop_from_backoff_q:
            self._run_pre_enqueue_plugins_for_group(entity)
            if entity.gating_plugin:
                entity.was_flushed_from_unschedulable = False  # as in _move_group_to_active_q
                if key not in self._unschedulable_pods:
                    self._unschedulable_pods.add(entity, event)
                return False
        self._unschedulable_pods.pop(key, None)
        self._backoff_q.add(entity, event)
        return True

    # -- updates and deletions of members -------------------------------------------------------------
    def _update_pod_group_member(self, old_pod: "Pod", new_pod: "Pod", events: list) -> None:
        """``Update`` for a member pod."""
        root = self.workload_forest.root_for_pod(old_pod)
        if root is None:
            pinfo = self.incomplete_pod_group_pods.update(new_pod)
            if pinfo is not None:
                self.nominator.update_nominated_pod(old_pod, pinfo.pod_info)
            return
        if self._active_q.add_events_if_pod_in_flight(old_pod, new_pod, events):
            return
        key = str(root)
        for container in (self._active_q, self._backoff_q):
            entity = container.get(key)
            if entity is not None:
                try:
                    pinfo = entity.update(new_pod)
                except KeyError:
                    continue
                self.nominator.update_nominated_pod(old_pod, pinfo.pod_info)
                return
        entity = self._unschedulable_pods.get(key)
        if entity is not None:
            try:
                pinfo = entity.update(new_pod)
            except KeyError:
                self.add(new_pod)  # type: ignore[attr-defined]
                return
            self.nominator.update_nominated_pod(old_pod, pinfo.pod_info)
            for evt in events:
                hint = self._is_entity_worth_requeuing(entity, evt, old_pod, new_pod)
                queue = self._requeue_pod_with_queueing_strategy(entity, hint, event_label(evt))  # type: ignore[attr-defined]
                if queue == "Active" or (self.pop_from_backoff_q and queue == "Backoff"):
                    break
            return
        pinfo = self.pending_pod_group_pods.update(new_pod)
        if pinfo is not None:
            self.nominator.update_nominated_pod(old_pod, pinfo.pod_info)
            return
        self.add(new_pod)  # type: ignore[attr-defined]

    def _delete_pod_group_member(self, pod: "Pod") -> None:
        """``deletePodGroupMember``."""
        root = self.workload_forest.root_for_pod(pod)
        if root is None:
            self.incomplete_pod_group_pods.delete(pod)
            return
        entity, strategy = self._delete_from_any_queue(str(root))
        if entity is None:
            self.pending_pod_group_pods.delete(pod)
            return
        entity.remove_pod(pod)
        if not entity.has_queued_pod_infos():
            return
        self._requeue_pod_with_queueing_strategy(entity, strategy, _UNSCHEDULED_POD_ADD)  # type: ignore[attr-defined]

    # -- PodGroup objects ---------------------------------------------------------------------------
    def add_pod_group(self, pod_group: "PodGroup") -> None:
        """``AddPodGroup``: the group seen; its incomplete members join the queue."""
        if not self.generic_workload:
            return
        self.workload_forest.add_pod_group(pod_group)
        root = self.workload_forest.root_for_pod_group(pod_group)
        if root is None:
            return
        entity = self._get_entity(str(root))
        if entity is not None:
            entity.add_pod_group(pod_group, self.composite_pod_group)
        pinfos: list = []
        for pg in self.workload_forest.leaf_pod_groups(root):
            pinfos.extend(self.incomplete_pod_group_pods.clear(pg.namespace, pg.name))
        for pinfo in pinfos:
            self._add_pod_group_member(pinfo)

    def update_pod_group(self, pod_group: "PodGroup") -> None:
        """``UpdatePodGroup``: the queued entity sees the new object."""
        if not self.generic_workload:
            return
        self.workload_forest.update_pod_group(pod_group)
        root = self.workload_forest.root_for_pod_group(pod_group)
        if root is None:
            return
        entity = self._get_entity(str(root))
        if entity is not None:
            entity.update_pod_group(pod_group)

    def delete_pod_group(self, pod_group: "PodGroup") -> None:
        """``DeletePodGroup``: the group's queued or pending members go back to the incomplete ones."""
        if not self.generic_workload:
            return
        root = self.workload_forest.root_for_pod_group(pod_group)
        self.workload_forest.delete_pod_group(pod_group)
        if root is None:
            return
        entity, strategy = self._delete_from_any_queue(str(root))
        if entity is None:
            if self.last_popped_entity != str(root):
                return
            for pinfo in self.pending_pod_group_pods.clear(pod_group.namespace, pod_group.name):
                self.incomplete_pod_group_pods.add(pinfo)
            return
        # RemovePodGroup: the group's node and its members (a flat root's: all of them)
        for pinfo in entity.remove_subtree(pod_group.name):
            self.incomplete_pod_group_pods.add(pinfo)
        if not entity.has_queued_pod_infos():
            return
        self._requeue_pod_with_queueing_strategy(entity, strategy, _UNSCHEDULED_POD_UPDATE)  # type: ignore[attr-defined]

    # -- CompositePodGroup objects ----------------------------------------------------------------
    def add_composite_pod_group(self, cpg: "CompositePodGroup") -> None:
        """``AddCompositePodGroup``: the object seen; its subtree joins a queued root entity, and
        the incomplete members of every leaf under its root join the queue."""
        if not self.composite_pod_group:
            return
        forest = self.workload_forest
        assert isinstance(forest, CompositeWorkloadForest)
        forest.add_composite_pod_group(cpg)
        root = forest.root_for_composite_pod_group(cpg)
        if root is None:
            return
        entity = self._get_entity(str(root))
        if entity is not None:
            subtree = forest.build_pod_group_info_for_composite(cpg, set())
            entity.add_composite_pod_group(cpg, subtree)
        pinfos: list = []
        for pg in forest.leaf_pod_groups(root):
            pinfos.extend(self.incomplete_pod_group_pods.clear(pg.namespace, pg.name))
        for pinfo in pinfos:
            self._add_pod_group_member(pinfo)

    def update_composite_pod_group(self, cpg: "CompositePodGroup") -> None:
        """``UpdateCompositePodGroup``: the queued root entity's node sees the new object."""
        if not self.composite_pod_group:
            return
        forest = self.workload_forest
        assert isinstance(forest, CompositeWorkloadForest)
        forest.update_composite_pod_group(cpg)
        root = forest.root_for_composite_pod_group(cpg)
        if root is None:
            return
        entity = self._get_entity(str(root))
        if entity is not None:
            entity.update_composite_pod_group(cpg)

    def delete_composite_pod_group(self, cpg: "CompositePodGroup") -> None:
        """``DeleteCompositePodGroup``: the members of the subtree go back to the incomplete ones
        (pending ones too, when the root is in its cycle, unless they still have a root)."""
        if not self.composite_pod_group:
            return
        forest = self.workload_forest
        assert isinstance(forest, CompositeWorkloadForest)
        root = forest.root_for_composite_pod_group(cpg)
        if root is None:
            forest.delete_composite_pod_group(cpg)
            return
        leaves = forest.leaf_pod_groups(root)
        forest.delete_composite_pod_group(cpg)
        entity, strategy = self._delete_from_any_queue(str(root))
        if entity is None:
            if self.last_popped_entity != str(root):
                return
            pending: list = []
            for pg in leaves:
                pending.extend(self.pending_pod_group_pods.clear(pg.namespace, pg.name))
            for pinfo in pending:
                if forest.root_for_pod(pinfo.pod) is not None:
                    self.pending_pod_group_pods.add(pinfo)
                else:
                    self.incomplete_pod_group_pods.add(pinfo)
            return
        for pinfo in entity.remove_subtree(cpg.name):
            self.incomplete_pod_group_pods.add(pinfo)
        if not entity.has_queued_pod_infos():
            return
        self._requeue_pod_with_queueing_strategy(entity, strategy, _UNSCHEDULED_POD_UPDATE)  # type: ignore[attr-defined]

    def queued_member(self, pod: "Pod") -> "QueuedPodInfo | None":
        """The QueuedPodInfo of a queued member pod, found through its group (a member is only ever
        in its own group's entity, or with its group's pending or incomplete pods): what
        ``get(pod.uid)`` answers for it, without scanning every group."""
        uid = pod.uid
        root = self.workload_forest.root_for_pod(pod)
        if root is not None:
            entity = self._get_entity(str(root))
            if entity is not None:
                for member in reversed(entity.members):  # (a member just added is the last, mostly)
                    if member.pod.uid == uid:
                        return member
        for pods in (self.pending_pod_group_pods, self.incomplete_pod_group_pods):
            pinfo = pods.get(pod)
            if pinfo is not None and pinfo.pod.uid == uid:
                return pinfo
        return None

    def queued_members(self, pods: "list[Pod]") -> "dict[str, QueuedPodInfo | None]":
        """:meth:`queued_member` of each of ``pods`` by uid, reading each group entity's members
        once: a released gang asks for all of its members, and a scan of the entity per member
        made that quadratic in the gang (~45% of a 5,000-member gang's run)."""
        by_root: dict[str, dict[str, QueuedPodInfo]] = {}
        out: dict[str, QueuedPodInfo | None] = {}
        for pod in pods:
            uid = pod.uid
            root = self.workload_forest.root_for_pod(pod)
            if root is not None:
                key = str(root)
                members = by_root.get(key)
                if members is None:
                    entity = self._get_entity(key)
                    # (the last of a uid's entries wins: queued_member scans from the end)
                    members = by_root[key] = {} if entity is None else {m.pod.uid: m for m in entity.members}
                found = members.get(uid)
                if found is not None:
                    out[uid] = found
                    continue
            hit = None
            for held in (self.pending_pod_group_pods, self.incomplete_pod_group_pods):
                pinfo = held.get(pod)
                if pinfo is not None and pinfo.pod.uid == uid:
                    hit = pinfo
                    break
            out[uid] = hit
        return out

    def _find_member(self, uid: str) -> tuple[Any, Any, str] | None:
        """(entity or None, the member's QueuedPodInfo, where) of a queued member pod, by uid."""
        for where, entities in (("active", self._active_q.raw_values()), ("backoff", self._backoff_q.raw_values()),
                                ("unschedulable", list(self._unschedulable_pods.values()))):
            for entity in entities:
                if entity.pod is None:
                    for member in entity.members:
                        if member.pod.uid == uid:
                            return entity, member, where
        for where, pods in (("pending", self.pending_pod_group_pods), ("incomplete", self.incomplete_pod_group_pods)):
            for group in pods._by_group.values():
                for member in group.values():
                    if member.pod.uid == uid:
                        return None, member, where
        return None

    # -- listing ------------------------------------------------------------------------------------
    @staticmethod
    def _entity_pods(entities: Iterable[Any]) -> list["Pod"]:
        """The pods of a list of entities (a group's members in member order)."""
        out: list = []
        for entity in entities:
            if entity.pod is None:
                out.extend(entity.unscheduled_pods())
            else:
                out.append(entity.pod)
        return out

    def pending_pod_group_pods_list(self) -> list["Pod"]:
        """``PendingPodGroupPods``."""
        return self.pending_pod_group_pods.list()

    def incomplete_pod_group_pods_list(self) -> list["Pod"]:
        """``IncompletePodGroupPodsPods``."""
        return self.incomplete_pod_group_pods.list()

