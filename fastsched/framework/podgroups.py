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

import itertools
from typing import TYPE_CHECKING, Iterable, NamedTuple

from ..errors import FastschedError

if TYPE_CHECKING:  # pragma: no cover
    from ..api import Pod
    from ..api.scheduling import PodGroup

__all__ = ["POD_KEY_TYPE", "POD_GROUP_KEY_TYPE", "EntityKey", "pod_group_key", "PodGroupState",
           "PodGroupStateError", "PodGroupStates", "PodGroupObjects", "is_pod_group_member"]

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
    """``fwk.PodGroupKey``."""
    return EntityKey(POD_GROUP_KEY_TYPE, namespace, name)


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
    """

    __slots__ = ("generation", "all_pods", "unscheduled", "assumed", "assigned", "pod_group")

    def __init__(self) -> None:
        self.generation = 0
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

    def update_pod(self, old: "Pod", new: "Pod") -> None:
        """A member pod updated: stored; bound by this update -> assigned."""
        self._touch()
        self.all_pods[new.uid] = new
        if not old.node_name and new.node_name:
            self.assigned[new.uid] = None
            self.unscheduled.pop(new.uid, None)
            self.assumed.pop(new.uid, None)

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

    def unscheduled_pods(self) -> dict[str, "Pod"]:
        """``UnscheduledPods``: pod name -> pod."""
        return {self.all_pods[uid].name: self.all_pods[uid] for uid in self.unscheduled}

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
