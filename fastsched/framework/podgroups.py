"""Pod groups as the scheduler tracks them (GenericWorkload): entity keys, ``PodGroupState`` and
its listers.

Upstream: ``k8s.io/kube-scheduler@v0.37.2/framework/types.go`` (``EntityKey``, ``PodGroupKey``),
``framework/interface.go`` (``PodGroupState``, ``PodGroupStateLister``, ``PodGroupLister``) and the
cache's implementation, ``pkg/scheduler/backend/cache/podgroupstate.go`` (``podGroupStateData``)
with ``cache.go``'s ``podGroupStateListerImpl`` / ``podGroupListerImpl``. The cache
(:mod:`fastsched.scheduler.cache`) keeps one :class:`PodGroupState` per group that has a known
member pod or a PodGroup object, and maintains it from the pod events (members only: pods with
``spec.schedulingGroup``), assume/forget, and the PodGroup events.

The state counts every member the scheduler knows: unscheduled (queued or in flight), assumed
(scheduled, binding) and assigned (bound). Upstream keeps the sets as Go maps and sets, whose
iteration order is random; they are insertion-ordered dicts here, which is one of upstream's
possible orders (only ``scheduled_pods()``'s order reaches a message, through ``validatePodGroup``'s
first mismatch, and the oracle compares that case as a set).
"""
from __future__ import annotations

import bisect
import itertools
from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, Any, Iterable, NamedTuple

from ..errors import FastschedError

if TYPE_CHECKING:  # pragma: no cover
    from ..api import Pod
    from ..api.scheduling import PodGroup

__all__ = ["POD_KEY_TYPE", "POD_GROUP_KEY_TYPE", "EntityKey", "pod_group_key", "PodGroupState",
           "PodGroupStateError", "UnscheduledPods", "PodGroupStates", "PodGroupObjects", "is_pod_group_member", "QueuedPodGroupInfo",
           "entity_key", "entity_priority", "member_order_key", "pod_group_priority"]

POD_KEY_TYPE = "pod"
POD_GROUP_KEY_TYPE = "podgroup"


class EntityKey(NamedTuple):
    """``fwk.EntityKey``: what the queue and the cache key a pod or a pod group by."""

    type: str
    namespace: str
    name: str

    def __str__(self) -> str:
        return f"{self.type}/{self.namespace}/{self.name}"


def pod_group_key(namespace: str, name: str) -> EntityKey:
    """``fwk.PodGroupKey``. The keys are kept (a bounded memo): the cache, the queue and
    GangScheduling ask for a member's key several times per member, and a NamedTuple costs more
    to build than to look up."""
    key = _KEYS.get((namespace, name))
    if key is None:
        key = EntityKey(POD_GROUP_KEY_TYPE, namespace, name)
        if len(_KEYS) >= _KEYS_MAX:
            _KEYS.clear()
        _KEYS[(namespace, name)] = key
    return key


#: (namespace, name) -> its EntityKey (pod_group_key's memo; equal keys either way)
_KEYS: dict[tuple[str, str], EntityKey] = {}
_KEYS_MAX = 4096


def entity_key_string(key_type: str, namespace: str, name: str) -> str:
    """``str(EntityKey(key_type, namespace, name))``: the key the queue's containers store a pod
    group entity under, kept as :func:`pod_group_key`'s (a bounded memo: every arrival of a
    member asks for its group's entity twice, and building the NamedTuple and its text costs
    more than the look-up)."""
    known = _KEY_STRINGS.get((key_type, namespace, name))
    if known is None:
        known = str(EntityKey(key_type, namespace, name))
        if len(_KEY_STRINGS) >= _KEYS_MAX:
            _KEY_STRINGS.clear()
        _KEY_STRINGS[(key_type, namespace, name)] = known
    return known


#: (type, namespace, name) -> its entity key string (entity_key_string's memo)
_KEY_STRINGS: dict[tuple[str, str, str], str] = {}


def is_pod_group_member(pod: "Pod", generic_workload: bool) -> bool:
    """The cache's and the queue's ``isPodGroupMember``: GenericWorkload on and
    ``spec.schedulingGroup`` set."""
    return generic_workload and pod.scheduling_group is not None


_generation = itertools.count(1)


class PodGroupState:
    """``podGroupStateData``: the members of one pod group by state, and its PodGroup object.

    ``all_pods``: uid -> pod, every member known; ``unscheduled``, ``assigned``: uids;
    ``assumed``: uid -> the assumed pod (the copy with its node name). ``generation`` changes with
    every change (upstream's global counter: the snapshot copies a state only when it changed).
    ``additions`` changes (from the same counter) only when a pod joins ``unscheduled`` or an
    unscheduled pod's object is replaced: what the queue's :meth:`activate` memo is keyed by
    (a member leaving ``unscheduled`` cannot make an activation of the rest do anything new);
    ``activation_memo`` is that memo's slot (the queue's, opaque here).
    """

    __slots__ = ("generation", "additions", "activation_memo", "all_pods", "unscheduled", "assumed", "assigned",
                 "pod_group")

    def __init__(self) -> None:
        self.generation = 0
        self.additions = 0
        self.activation_memo: Any = None
        self.all_pods: dict[str, "Pod"] = {}
        self.unscheduled: dict[str, None] = {}
        self.assumed: dict[str, "Pod"] = {}
        self.assigned: dict[str, None] = {}
        self.pod_group: "PodGroup | None" = None

    def _touch(self) -> None:
        self.generation = next(_generation)

    # -- changes (podGroupStateData's methods) ----------------------------------------------------
    def add_pod(self, pod: "Pod") -> None:
        """A member pod added: assigned if bound, else unscheduled."""
        self._touch()
        self.all_pods[pod.uid] = pod
        if pod.node_name:
            self.assigned[pod.uid] = None
            self.unscheduled.pop(pod.uid, None)
            self.assumed.pop(pod.uid, None)
        else:
            self.unscheduled[pod.uid] = None
            self.additions = self.generation

    def update_pod(self, old: "Pod", new: "Pod") -> None:
        """A member pod updated: stored; bound by this update -> assigned."""
        self._touch()
        self.all_pods[new.uid] = new
        if not old.node_name and new.node_name:
            self.assigned[new.uid] = None
            self.unscheduled.pop(new.uid, None)
            self.assumed.pop(new.uid, None)
        elif new.uid in self.unscheduled:
            self.additions = self.generation

    def delete_pod(self, uid: str) -> None:
        self._touch()
        self.all_pods.pop(uid, None)
        self.unscheduled.pop(uid, None)
        self.assumed.pop(uid, None)
        self.assigned.pop(uid, None)

    def assume_pod(self, pod: "Pod") -> None:
        """A member assumed (``pod`` carries its node): unscheduled -> assumed (assigned if the
        stored pod is bound already). A pod the state does not know is ignored."""
        stored = self.all_pods.get(pod.uid)
        if stored is None:
            return
        self._touch()
        if stored.node_name:
            self.assigned[pod.uid] = None
        else:
            self.assumed[pod.uid] = pod
        self.unscheduled.pop(pod.uid, None)

    def forget_pod(self, uid: str) -> None:
        """An assumption undone: back to unscheduled (assigned if the stored pod is bound)."""
        pod = self.all_pods.get(uid)
        if pod is None:
            return
        self._touch()
        self.assumed.pop(uid, None)
        if pod.node_name:
            self.assigned[uid] = None
        else:
            self.unscheduled[uid] = None
            self.additions = self.generation

    def set_pod_group(self, pod_group: "PodGroup") -> None:
        self._touch()
        self.pod_group = pod_group

    def remove_pod_group(self) -> None:
        self._touch()
        self.pod_group = None

    # -- reading (fwk.PodGroupState) --------------------------------------------------------------
    def empty(self) -> bool:
        """No member and no PodGroup object: the cache drops the state."""
        return not self.all_pods and self.pod_group is None

    def all_pod_uids(self) -> list[str]:
        """``AllPods``."""
        return list(self.all_pods)

    def all_pods_count(self) -> int:
        """``AllPodsCount``: every member known (unscheduled, assumed and assigned)."""
        return len(self.all_pods)

    def unscheduled_pods(self) -> "UnscheduledPods":
        """``UnscheduledPods``: pod name -> pod, as a read-only view (see :class:`UnscheduledPods`)."""
        return UnscheduledPods(self)

    def assumed_pod_uids(self) -> list[str]:
        """``AssumedPods``."""
        return list(self.assumed)

    def assigned_pod_uids(self) -> list[str]:
        """``AssignedPods``."""
        return list(self.assigned)

    def scheduled_pods(self) -> list["Pod"]:
        """``ScheduledPods``: the assigned pods, then the assumed ones."""
        return [self.all_pods[uid] for uid in self.assigned] + list(self.assumed.values())

    def scheduled_pods_count(self) -> int:
        """``ScheduledPodsCount``: assumed + assigned."""
        return len(self.assumed) + len(self.assigned)

    def clone(self) -> "PodGroupState":
        """A copy (``podGroupStateData.clone``: the snapshot's, which a group cycle assumes into)."""
        copy = PodGroupState()
        copy.generation = self.generation
        copy.additions = self.additions
        copy.all_pods = dict(self.all_pods)
        copy.unscheduled = dict(self.unscheduled)
        copy.assumed = dict(self.assumed)
        copy.assigned = dict(self.assigned)
        copy.pod_group = self.pod_group
        return copy

    def __repr__(self) -> str:
        name = None if self.pod_group is None else self.pod_group.key
        return (f"PodGroupState({name}, all={len(self.all_pods)}, unscheduled={len(self.unscheduled)}, "
                f"assumed={len(self.assumed)}, assigned={len(self.assigned)})")


class UnscheduledPods(Mapping):
    """``PodGroupState.UnscheduledPods()``: the unscheduled members, pod name -> pod, read-only.

    A view rather than a copy: GangScheduling's Permit hands it to ``Activate`` on every member's
    Permit, N times for a gang of N, and the queue recognises it (``state``) to activate the group
    without walking its members again when nothing was added since (a dict built per call made
    that O(N^2) for a gang). ``values()`` and ``items()`` are lists taken when called (callers may
    change the state while they go through them); a lookup by name walks the members."""

    __slots__ = ("state",)

    def __init__(self, state: PodGroupState):
        self.state = state

    def __len__(self) -> int:
        return len(self.state.unscheduled)

    def __iter__(self) -> Iterator[str]:
        all_pods = self.state.all_pods
        return iter([all_pods[uid].name for uid in self.state.unscheduled])

    def __getitem__(self, name: str) -> "Pod":
        all_pods = self.state.all_pods
        for uid in self.state.unscheduled:
            if all_pods[uid].name == name:
                return all_pods[uid]
        raise KeyError(name)

    def values(self) -> list["Pod"]:  # type: ignore[override]
        all_pods = self.state.all_pods
        return [all_pods[uid] for uid in self.state.unscheduled]

    def items(self) -> list[tuple[str, "Pod"]]:  # type: ignore[override]
        return [(pod.name, pod) for pod in self.values()]


class PodGroupStateError(FastschedError, LookupError):
    """A lister's error (upstream returns it as an ``error``): the text is upstream's."""


class PodGroupStates:
    """``PodGroupStateLister`` over the cache's states (``Cache.PodGroupStates()``)."""

    __slots__ = ("_states", "_enabled")

    def __init__(self, states: dict[EntityKey, PodGroupState], generic_workload: bool):
        self._states = states
        self._enabled = generic_workload

    def get(self, namespace: str, name: str) -> PodGroupState:
        if not self._enabled:
            raise PodGroupStateError("generic workload feature gate is disabled")
        state = self._states.get(pod_group_key(namespace, name))
        if state is None:
            raise PodGroupStateError(f"pod group state not found for pod group {namespace}/{name}")
        return state


class PodGroupObjects:
    """``PodGroupLister`` over the cache's states (``Cache.PodGroups()``): the PodGroup objects
    the scheduler has seen."""

    __slots__ = ("_states", "_enabled")

    def __init__(self, states: dict[EntityKey, PodGroupState], generic_workload: bool):
        self._states = states
        self._enabled = generic_workload

    def get(self, namespace: str, name: str) -> "PodGroup":
        if not self._enabled:
            raise PodGroupStateError("generic workload feature gate is disabled")
        key = pod_group_key(namespace, name)
        state = self._states.get(key)
        if state is None:
            raise PodGroupStateError(f"pod group state not found for pod group {key}")
        if state.pod_group is None:
            raise PodGroupStateError(f"pod group object not found for pod group {key}")
        return state.pod_group

    def list(self) -> Iterable["PodGroup"]:
        return [s.pod_group for s in self._states.values() if s.pod_group is not None]


# ------------------------------------------------------------------------------------------------
# Queue entities (upstream framework/types.go: QueuedPodGroupInfo, PodGroupInfo)
# ------------------------------------------------------------------------------------------------
def pod_group_priority(pod_group: "PodGroup | None") -> int:
    """``util.PodGroupPriority``: ``spec.priority``, 0 when unset (or no object)."""
    if pod_group is None or pod_group.priority is None:
        return 0
    return pod_group.priority


def _pod_priority(pod: "Pod") -> int:
    return 0 if pod.priority is None else pod.priority


def member_order_key(pinfo: Any) -> tuple:
    """``PodGroupMemberPodsOrderingFunc`` as a sort key: priority descending, attempts
    descending, timestamp ascending, name ascending (the order a group cycle tries its pods in)."""
    pod = pinfo.pod
    return (-_pod_priority(pod), -pinfo.attempts, pinfo.timestamp, pod.name)


def entity_key(info: Any) -> str:
    """The key the scheduling queue's containers store an entity under: a pod's uid, or a pod
    group's ``podgroup/<namespace>/<name>`` (no uid has a ``/``)."""
    pod = info.pod
    return info.key_string if pod is None else pod.uid


def entity_priority(info: Any) -> int:
    """``QueuedEntityInfo.GetPriority``: a pod's priority, or its group's."""
    pod = info.pod
    return info.priority if pod is None else _pod_priority(pod)


class QueuedPodGroupInfo:
    """A pod group in the scheduling queue: its members waiting to be scheduled together, with
    the group's own queueing bookkeeping (``QueuedPodGroupInfo`` = ``PodGroupInfo`` +
    ``QueueingParams`` + ``QueuedPodInfos``, CompositePodGroup off: one leaf, the root itself).

    The members are :class:`~fastsched.framework.types.QueuedPodInfo` kept in
    :func:`member_order_key` order; ``unscheduled_pods()`` lists their pods in that order. The
    queueing fields have the names :class:`~fastsched.framework.types.QueuedPodInfo` gives them, so
    the queue's containers handle either; ``pod`` is None (a group has no pod of its own: see
    :func:`entity_key`, :func:`entity_priority`). The group's ``backoff_expiration`` is the one
    that counts: its members' stay unset.

    ``held`` and ``fresh`` are the queue's PreEnqueue memo (:meth:`PodGroupQueueMixin.
    _run_pre_enqueue_plugins_for_group`): ``held`` = (plugin, message) when every member not in
    ``fresh`` is gated by that per-group plugin with that message; ``fresh`` = the members added
    or updated since. Removing a member or taking the group in flight (whose pop clears the
    members' rejector plugins) drops the memo. ``members_with_pending`` counts the members with
    pending plugins (a queued member's are set before it joins and cleared only by the pop, which
    zeroes the count): ``isEntityWorthRequeuing`` stops early when none is left to ask.

    With CompositePodGroup a root CompositePodGroup's entity (:meth:`from_tree`) holds the whole
    tree below it (``tree``, a :class:`~fastsched.framework.composite.PodGroupInfo`; ``pod_group``
    None, ``composite_pod_group`` the root's object, ``type`` ``compositepodgroup``) and the
    members of every leaf PodGroup. ``members`` stays one list in member order over all leaves
    (upstream: one sorted list per leaf, ``QueuedPodInfos``; a leaf's list is the members of that
    leaf, :meth:`leaf_members`, in the same order). ``_leaves`` = the names of the tree's nodes a
    pod may name (None for a flat entity: the group's own name), kept as the tree changes.
    """

    __slots__ = ("namespace", "name", "pod_group", "members", "timestamp", "attempts",
                 "initial_attempt_timestamp", "unschedulable_plugins", "pending_plugins", "gated", "gating_plugin",
                 "gating_message", "unschedulable_count", "consecutive_errors_count", "backoff_expiration", "held",
                 "fresh", "members_with_pending", "type", "tree", "composite_pod_group", "_leaves",
                 "flush_timestamp", "_was_flushed_from_unschedulable", "_members_clear")

    #: a group entity has no pod of its own
    pod = None
    pod_info = None

    def __init__(self, pod_group: "PodGroup"):
        self.namespace = pod_group.namespace
        self.name = pod_group.name
        self.pod_group: "PodGroup | None" = pod_group
        self.members: list = []
        self.timestamp = 0.0
        self.attempts = 0
        self.initial_attempt_timestamp: float | None = None
        self.unschedulable_plugins: set[str] = set()
        self.pending_plugins: set[str] = set()
        self.gated = False
        self.gating_plugin = ""
        self.gating_message = ""
        self.unschedulable_count = 0
        self.consecutive_errors_count = 0
        self.backoff_expiration: float | None = None
        self.held: tuple[str, str] | None = None
        self.fresh: list = []
        self.members_with_pending = 0
        self.type = POD_GROUP_KEY_TYPE
        #: the group tree (composite entities only: a flat entity is its one PodGroup)
        self.tree: Any = None
        self.composite_pod_group: Any = None
        self._leaves: set[str] | None = None
        #: upstream ``FlushTimestamp``, kept on the entity only (the flush reads the root's)
        self.flush_timestamp: float | None = None
        self._was_flushed_from_unschedulable = False
        #: every member's ``was_flushed_from_unschedulable`` is False (the members only take the
        #: group's setter; a pod that joins with its flag set clears this: see add_pod)
        self._members_clear = True

    @property
    def was_flushed_from_unschedulable(self) -> bool:
        return self._was_flushed_from_unschedulable

    @was_flushed_from_unschedulable.setter
    def was_flushed_from_unschedulable(self, flushed: bool) -> None:
        """``SetWasFlushedFromUnschedulable``: the group's flag and every member's. Clearing it
        skips the members while every one of them is known clear (``_members_clear``): a gated
        gang clears it at each member's arrival, which was a walk over the gang per member."""
        self._was_flushed_from_unschedulable = flushed
        if not flushed and self._members_clear:
            return
        for member in self.members:
            member.was_flushed_from_unschedulable = flushed
        self._members_clear = not flushed

    @classmethod
    def from_tree(cls, tree: Any) -> "QueuedPodGroupInfo":
        """``buildQueuedPodGroupInfo``'s entity for a root node (a PodGroup root gives the flat
        entity)."""
        if tree.pod_group is not None and tree.composite_pod_group is None:
            return cls(tree.pod_group)
        self = cls.__new__(cls)
        cls.__init__(self, tree.composite_pod_group)
        self.pod_group = None
        self.type = tree.type
        self.tree = tree
        self.composite_pod_group = tree.composite_pod_group
        self._reindex()
        return self

    def _reindex(self) -> None:
        """``_leaves`` from the tree: every node's name (``findNodeAndParent`` matches a pod's
        group name against any node of the tree)."""
        names: set[str] = set()
        stack = [self.tree]
        while stack:
            node = stack.pop()
            names.add(node.name)
            stack.extend(node.children)
        self._leaves = names

    @property
    def is_composite(self) -> bool:
        return self.tree is not None

    # -- identity ------------------------------------------------------------------------------------
    @property
    def key(self) -> EntityKey:
        if self.tree is not None:
            return EntityKey(self.type, self.namespace, self.name)
        return pod_group_key(self.namespace, self.name)

    @property
    def key_string(self) -> str:
        """``GetKey``: ``<type>/<namespace>/<name>`` (``podgroup`` or ``compositepodgroup``)."""
        return f"{self.type}/{self.namespace}/{self.name}"

    @property
    def priority(self) -> int:
        """``GetPriority``: the PodGroup's priority, or the root CompositePodGroup's."""
        if self.pod_group is None and self.composite_pod_group is not None:
            p = self.composite_pod_group.priority
            return 0 if p is None else p
        return pod_group_priority(self.pod_group)

    def size(self) -> int:
        """``Size``: the queued members."""
        return len(self.members)

    # -- members -------------------------------------------------------------------------------------
    def _is_member(self, pod: "Pod") -> bool:
        if pod.namespace != self.namespace or pod.scheduling_group is None:
            return False
        leaves = self._leaves
        if leaves is None:
            return pod.scheduling_group.pod_group_name == self.name
        return pod.scheduling_group.pod_group_name in leaves

    def add_pod(self, pinfo: Any) -> None:
        """``AddPod``: inserted in member order (a pod of another group, one whose group is not
        in the tree, or with no PodGroup/CompositePodGroup object here, is ignored)."""
        if (self.pod_group is None and self.composite_pod_group is None) or not self._is_member(pinfo.pod):
            return
        # (keys of the O(log n) members the search visits: a gang's members arrive one by one,
        # mostly in member order: after the last member, bisect_left's answer is the end)
        members = self.members
        key = member_order_key(pinfo)
        if not members or member_order_key(members[-1]) < key:
            members.append(pinfo)
        else:
            members.insert(bisect.bisect_left(members, key, key=member_order_key), pinfo)
        if self.held is not None:
            self.fresh.append(pinfo)
        if pinfo.pending_plugins:
            self.members_with_pending += 1
        if pinfo.was_flushed_from_unschedulable:
            self._members_clear = False

    def remove_pod(self, pod: "Pod") -> Any:
        """``RemovePod``: the removed member (by namespace and name), or None."""
        if not self._is_member(pod):
            return None
        # (a composite entity's members are looked for in the pod's own leaf, as upstream's
        # per-leaf lists: two leaves may hold pods of one name)
        group = pod.scheduling_group.pod_group_name if self.tree is not None else None  # type: ignore[union-attr]
        for i, member in enumerate(self.members):
            if member.pod.name == pod.name and (group is None or member.pod.scheduling_group.pod_group_name == group):
                self.held = None
                if member.pending_plugins:
                    self.members_with_pending -= 1
                return self.members.pop(i)
        return None

    def set_members(self, members: list) -> None:
        """The members replaced by ``members`` (a subset, in member order)."""
        self.members = members
        self.held = None
        self.members_with_pending = sum(1 for m in members if m.pending_plugins)

    def update(self, pod: "Pod") -> Any:
        """``Update``: the member's pod replaced in place (its position kept, as upstream's);
        returns the member. Raises ``KeyError`` with upstream's text when it is not here."""
        if self._is_member(pod):
            group = pod.scheduling_group.pod_group_name if self.tree is not None else None  # type: ignore[union-attr]
            for member in self.members:
                if member.pod.name == pod.name and (group is None or member.pod.scheduling_group.pod_group_name == group):
                    member.pod_info.update(pod)
                    if self.held is not None:
                        self.fresh.append(member)
                    return member
        raise KeyError(f"pod {pod.namespace}/{pod.name} to update not found in the queued group info")

    def has_queued_pod_infos(self) -> bool:
        return bool(self.members)

    def pod_infos(self) -> list:
        """``ForEachPodInfo``'s members, in member order."""
        return list(self.members)

    def unscheduled_pods(self) -> list["Pod"]:
        """``GetUnscheduledPods``: the members' pods, in member order (a composite entity's:
        leaf by leaf, in the tree's child order, each leaf's in member order)."""
        if self.tree is None:
            return [m.pod for m in self.members]
        return [m.pod for leaf in self.tree.leaves() for m in self.leaf_members(leaf.name)]

    def leaf_members(self, leaf: str) -> list:
        """``QueuedPodInfos[PodGroupKey(namespace, leaf)]``: the members of one leaf PodGroup, in
        member order."""
        return [m for m in self.members if m.pod.scheduling_group.pod_group_name == leaf]

    # -- the tree (AddPodGroup ... RemoveCompositePodGroup) -----------------------------------------
    def _find(self, name: str) -> tuple[Any, Any]:
        """``findNodeAndParent`` over a composite entity's tree: (node, parent) of the first node
        named ``name`` depth first (the root's parent is None; (None, None) when absent)."""
        def walk(curr: Any, parent: Any) -> tuple[Any, Any]:
            if curr.name == name:
                return curr, parent
            if curr.composite_pod_group is not None:
                for child in curr.children:
                    node, par = walk(child, curr)
                    if node is not None:
                        return node, par
            return None, None
        return walk(self.tree, None)

    def add_pod_group(self, pod_group: "PodGroup", composite_enabled: bool) -> None:
        """``AddPodGroup``: a child PodGroup joins its parent's node (gate on, parent named and
        in the tree, not there yet)."""
        parent_name = pod_group.parent_composite_pod_group_name
        if not composite_enabled or parent_name is None or self.tree is None:
            return
        parent, _ = self._find(parent_name)
        if parent is None or parent.composite_pod_group is None:
            return
        if any(child.name == pod_group.name for child in parent.children):
            return
        # a leaf node of the tree's own class (framework.composite.PodGroupInfo, which imports
        # this module: the layers forbid the import back)
        parent.children.append(type(parent)(pod_group.namespace, pod_group.name, POD_GROUP_KEY_TYPE,
                                            pod_group=pod_group))
        self._reindex()

    def update_pod_group(self, pod_group: "PodGroup") -> None:
        """``UpdatePodGroup``: the node of that name gets the new object."""
        if self.tree is None:
            if self.name == pod_group.name and self.pod_group is not None:
                self.pod_group = pod_group
            return
        node, _ = self._find(pod_group.name)
        if node is not None and node.pod_group is not None:
            node.pod_group = pod_group

    def add_composite_pod_group(self, cpg: Any, subtree: Any) -> None:
        """``AddCompositePodGroup``: the CompositePodGroup's subtree joins its parent's node."""
        if cpg.parent_composite_pod_group_name is None or self.tree is None:
            return
        parent, _ = self._find(cpg.parent_composite_pod_group_name)
        if parent is None or parent.composite_pod_group is None:
            return
        if any(child.name == cpg.name for child in parent.children):
            return
        parent.children.append(subtree)
        self._reindex()

    def update_composite_pod_group(self, cpg: Any) -> None:
        """``UpdateCompositePodGroup``."""
        if self.tree is None:
            return
        node, _ = self._find(cpg.name)
        if node is not None and node.composite_pod_group is not None:
            node.composite_pod_group = cpg
            if node is self.tree:
                self.composite_pod_group = cpg

    def remove_subtree(self, name: str) -> list:
        """``RemovePodGroup`` / ``RemoveCompositePodGroup``: the node of that name taken out of
        its parent's children, and the members of every PodGroup under it (itself included)
        removed and returned. A flat entity's only node is its PodGroup: all its members."""
        if self.tree is None:
            if name != self.name:
                return []
            removed = self.members
            self.set_members([])
            return removed
        node, parent = self._find(name)
        if node is None:
            return []
        if parent is not None:
            for i, child in enumerate(parent.children):
                if child.name == name:
                    del parent.children[i]
                    break
        # (``deleteSubtreePods``' order: the leaves depth first, each leaf's members in order)
        leaves = [leaf.name for leaf in node.leaves()]
        gone = set(leaves)
        removed = [m for leaf in leaves for m in self.leaf_members(leaf)]
        if removed:
            self.set_members([m for m in self.members if m.pod.scheduling_group.pod_group_name not in gone])
        self._reindex()
        return removed

    # -- queueing params (QueuedEntityInfo's setters: a group's apply to its members too) ----------
    def inc_attempts(self) -> None:
        self.attempts += 1
        for member in self.members:
            member.attempts += 1

    def set_initial_attempt_timestamp(self, t: float) -> None:
        if self.initial_attempt_timestamp is None:
            self.initial_attempt_timestamp = t
        for member in self.members:
            if member.initial_attempt_timestamp is None:
                member.initial_attempt_timestamp = t

    def copy_queueing_params(self, other: "QueuedPodGroupInfo") -> None:
        """``rootInfo.QueueingParams = pgInfo.QueueingParams``."""
        for name in ("timestamp", "attempts", "initial_attempt_timestamp", "gated", "gating_plugin",
                     "gating_message", "unschedulable_count", "consecutive_errors_count", "backoff_expiration",
                     "flush_timestamp"):
            setattr(self, name, getattr(other, name))
        self._was_flushed_from_unschedulable = other._was_flushed_from_unschedulable
        self.unschedulable_plugins = other.unschedulable_plugins
        self.pending_plugins = other.pending_plugins

    def __repr__(self) -> str:
        return f"QueuedPodGroupInfo({self.namespace}/{self.name}, members={len(self.members)}, attempts={self.attempts})"
