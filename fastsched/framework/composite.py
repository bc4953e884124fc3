"""Composite pod groups (CompositePodGroup, alpha): the entity key of a CompositePodGroup and the
tree of groups one queue entity covers.

Upstream: ``k8s.io/kube-scheduler@v0.37.2/framework/types.go`` (``CompositePodGroupKeyType``,
``CompositePodGroupKey``) and ``pkg/scheduler/framework/types.go`` (``PodGroupInfo``: namespace,
name, type, the PodGroup or the CompositePodGroup object, children). With CompositePodGroup off
every entity is one PodGroup, its own root and only leaf (:mod:`.podgroups`); with it, a root
CompositePodGroup's entity holds the whole tree below it, PodGroups as the leaves.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Iterator

from .podgroups import POD_GROUP_KEY_TYPE, EntityKey, PodGroupStateError, pod_group_key
from .podgroups import _generation  # nextPodGroupGeneration: one counter for both kinds of state

if TYPE_CHECKING:  # pragma: no cover
    from ..api.compositepodgroup import CompositePodGroup
    from ..api.scheduling import PodGroup

__all__ = ["COMPOSITE_POD_GROUP_KEY_TYPE", "composite_pod_group_key", "PodGroupInfo", "WORKLOAD_MAX_TREE_DEPTH",
           "CompositePodGroupState", "CompositePodGroupStates", "CompositePodGroupObjects", "get_pod_group_states"]

COMPOSITE_POD_GROUP_KEY_TYPE = "compositepodgroup"


def composite_pod_group_key(namespace: str, name: str) -> EntityKey:
    """``fwk.CompositePodGroupKey``."""
    return EntityKey(COMPOSITE_POD_GROUP_KEY_TYPE, namespace, name)


@dataclass(eq=False)
class PodGroupInfo:
    """``framework.PodGroupInfo``: one node of a queue entity's group tree — a PodGroup (a leaf,
    ``pod_group`` set) or a CompositePodGroup (``composite_pod_group`` set, ``children`` below it).
    Children are in the order the forest learnt of them (upstream iterates a set: any order)."""

    namespace: str
    name: str
    type: str
    pod_group: "PodGroup | None" = None
    composite_pod_group: "CompositePodGroup | None" = None
    children: list[PodGroupInfo] = field(default_factory=list)
    #: a leaf's queued members in member order, set by the group cycle from its entity
    #: (upstream's ``QueuedPodInfos[key]``; ``UnscheduledPods`` are their pods)
    members: list = field(default_factory=list, repr=False)

    @property
    def key(self) -> EntityKey:
        if self.type == POD_GROUP_KEY_TYPE:
            return pod_group_key(self.namespace, self.name)
        return composite_pod_group_key(self.namespace, self.name)

    def creation_timestamp(self) -> float:
        """``GetCreationTimestamp``: the object's (unset: Go's zero time, before any)."""
        obj = self.pod_group if self.pod_group is not None else self.composite_pod_group
        ts = None if obj is None else obj.creation_timestamp
        return float("-inf") if ts is None else ts

    def unscheduled_pods(self) -> list:
        """``GetUnscheduledPods``: a leaf's queued members' pods (what PlacementProgress counts)."""
        return [m.pod for m in self.members]

    def child_groups(self) -> list[PodGroupInfo]:
        """``GetChildGroups``: a CompositePodGroup's children by creation time, then name (a
        PodGroup has none)."""
        if self.composite_pod_group is None:
            return []
        return sorted(self.children, key=lambda c: (c.creation_timestamp(), c.name))

    def leaves(self) -> Iterator[PodGroupInfo]:
        """The PodGroup nodes of the tree, depth first."""
        if self.type == POD_GROUP_KEY_TYPE:
            yield self
            return
        for child in self.children:
            yield from child.leaves()

    def __eq__(self, other: object) -> bool:
        # the objects compared by identity (cmp.Diff of the same pointers in upstream's tables)
        if not isinstance(other, PodGroupInfo):
            return NotImplemented
        return (self.namespace, self.name, self.type) == (other.namespace, other.name, other.type) \
            and self.pod_group is other.pod_group and self.composite_pod_group is other.composite_pod_group \
            and self.children == other.children


# ------------------------------------------------------------------------------------------------
# The cache's view (upstream backend/cache/podgroupstate.go: compositePodGroupStateData; cache.go:
# CompositePodGroupStates(), CompositePodGroups(); framework/plugins/helper/podgroup.go)
# ------------------------------------------------------------------------------------------------
#: ``schedulingv1alpha3.WorkloadMaxTreeDepth``: a hierarchy's levels, the PodGroups included
WORKLOAD_MAX_TREE_DEPTH = 4


class CompositePodGroupState:
    """``compositePodGroupStateData``: a CompositePodGroup's object and its observed children
    (PodGroup and CompositePodGroup keys). It exists as soon as a child names the parent, before
    (or without) the parent's object. ``children`` is an ordered set (dict keys): upstream's is a
    set, so the order its ``GetChildren`` gives is Go's map order; here, the order children were
    linked. ``generation`` changes with every change (the snapshot copies changed states only)."""

    __slots__ = ("generation", "composite_pod_group", "children")

    def __init__(self) -> None:
        self.generation = 0
        self.composite_pod_group: "CompositePodGroup | None" = None
        self.children: dict[EntityKey, None] = {}

    def _touch(self) -> None:
        self.generation = next(_generation)

    def empty(self) -> bool:
        """No object and no children: the cache drops the state."""
        return self.composite_pod_group is None and not self.children

    def set_composite_pod_group(self, cpg: "CompositePodGroup") -> None:
        self._touch()
        self.composite_pod_group = cpg

    def remove_composite_pod_group(self) -> None:
        self._touch()
        self.composite_pod_group = None

    def add_child(self, child: EntityKey) -> None:
        self._touch()
        self.children[child] = None

    def remove_child(self, child: EntityKey) -> None:
        self._touch()
        self.children.pop(child, None)

    def get_children(self) -> list[EntityKey]:
        """``GetChildren``."""
        return list(self.children)

    def clone(self) -> CompositePodGroupState:
        """A snapshot's copy (the object shared: it is read-only)."""
        copy = CompositePodGroupState()
        copy.generation = self.generation
        copy.composite_pod_group = self.composite_pod_group
        copy.children = dict(self.children)
        return copy


class CompositePodGroupStates:
    """``CompositePodGroupStateLister`` (``Cache.CompositePodGroupStates()``), upstream's errors."""

    __slots__ = ("_states", "_enabled")

    def __init__(self, states: dict[EntityKey, CompositePodGroupState], composite_pod_group: bool):
        self._states = states
        self._enabled = composite_pod_group

    def get(self, namespace: str, name: str) -> CompositePodGroupState:
        if not self._enabled:
            raise PodGroupStateError("composite pod group feature gate is disabled")
        key = composite_pod_group_key(namespace, name)
        state = self._states.get(key)
        if state is None:
            raise PodGroupStateError(f"composite pod group state not found for composite pod group {key}")
        return state


class CompositePodGroupObjects:
    """``CompositePodGroupLister`` (``Cache.CompositePodGroups()``): the objects the scheduler has seen."""

    __slots__ = ("_states", "_enabled")

    def __init__(self, states: dict[EntityKey, CompositePodGroupState], composite_pod_group: bool):
        self._states = states
        self._enabled = composite_pod_group

    def get(self, namespace: str, name: str) -> "CompositePodGroup":
        if not self._enabled:
            raise PodGroupStateError("composite pod group feature gate is disabled")
        key = composite_pod_group_key(namespace, name)
        state = self._states.get(key)
        if state is None:
            raise PodGroupStateError(f"composite pod group state not found for composite pod group {key}")
        if state.composite_pod_group is None:
            raise PodGroupStateError(f"composite pod group object not found for composite pod group {key}")
        return state.composite_pod_group


def get_pod_group_states(pod_group_states: Any, composite_states: Any,
                         root: EntityKey) -> Iterator[tuple[Any, Exception | None]]:
    """``helper.GetPodGroupStates``: ``(state, None)`` for every leaf PodGroup's state under
    ``root`` (depth first, in children order), or ``(None, error)`` where a lookup fails or the
    walk reaches depth 4 (``exceeded maximum hierarchy depth at <key>``); the walk goes on after
    an error (upstream's ``yield`` returns true), so the caller decides: most stop at the first,
    ``searchCrossNodesVictimPods`` logs it and goes on. ``pod_group_states`` / ``composite_states``: the
    listers (:class:`~fastsched.framework.podgroups.PodGroupStates`, :class:`CompositePodGroupStates`)."""
    def walk(key: EntityKey, depth: int) -> Iterator[tuple[Any, Exception | None]]:
        if depth >= WORKLOAD_MAX_TREE_DEPTH:
            yield None, PodGroupStateError(f"exceeded maximum hierarchy depth at {key}")
            return
        if key.type == COMPOSITE_POD_GROUP_KEY_TYPE:
            try:
                state = composite_states.get(key.namespace, key.name)
            except PodGroupStateError as err:
                yield None, err
                return
            for child in state.get_children():
                yield from walk(child, depth + 1)
            return
        try:
            yield pod_group_states.get(key.namespace, key.name), None
        except PodGroupStateError as err:
            yield None, err

    yield from walk(root, 0)
