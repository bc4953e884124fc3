"""The pods nominated to run on nodes (upstream ``pkg/scheduler/backend/queue/nominator.go``, v1.34).

A pod gets a nomination when preemption picks a node for it (``NominatingInfo`` with mode
Override), or when it reaches the queue carrying ``status.nominatedNodeName`` (``nominating_info``
None, which reads as mode Noop: the pod's own field). The nominator keeps, per node, the
nominated pods in nomination order, so that Filter can account for them
(``RunFilterPluginsWithNominatedPods``).

Upstream keeps ``podRef`` (name, namespace, uid) per node and resolves them to the queue's current
``PodInfo`` on read; here the ``PodInfo`` handed in is kept. The scheduling queue shares its
``QueuedPodInfo.pod_info`` objects with the nominator, so in-place updates are seen by both;
:meth:`fastsched.scheduler.backend.queue.PriorityQueue.nominated_pods_for_node` resolves through
the queue like upstream.
"""
from __future__ import annotations

import types
from typing import TYPE_CHECKING, Any, Callable, Mapping

from ....framework.interface import PodNominator
from ....framework.types import NominatingInfo, NominatingMode, PodInfo

if TYPE_CHECKING:  # pragma: no cover
    from ....api import Pod

#: ``(namespace, name) -> Pod | None``: the live version of a pod (upstream's pod lister).
PodLister = Callable[[str, str], "Pod | None"]


def nominating_mode(nominating_info: Any | None) -> NominatingMode:
    """Upstream ``(*NominatingInfo).Mode()``: Noop for a nil info.

    Accepts a :class:`~fastsched.framework.types.NominatingInfo` or a ``PostFilterResult``-like
    object with ``mode()``.
    """
    if nominating_info is None:
        return NominatingMode.NOOP
    mode = getattr(nominating_info, "nominating_mode", None)
    if mode is None:
        getter = getattr(nominating_info, "mode", None)
        mode = getter() if callable(getter) else NominatingMode.NOOP
    # (a member already, as every caller's: the Enum call costs more than the rest here)
    return mode if type(mode) is NominatingMode else NominatingMode(mode)


def _nominated_node_name_of(nominating_info: Any) -> str:
    inner = getattr(nominating_info, "nominating_info", None)  # a PostFilterResult
    if inner is not None:
        nominating_info = inner
    return getattr(nominating_info, "nominated_node_name", "") or ""


#: version steps the journal keeps (a reader further behind rebuilds in full)
_JOURNAL_SIZE = 4096


class Nominator(PodNominator):
    """Pods nominated to nodes, by node (in nomination order) and by pod UID.

    ``pod_lister`` (optional) is consulted before adding a nomination, as upstream does with its
    informer lister: a pod it does not know, or one already bound (``node_name`` set), is not
    nominated.
    """

    __slots__ = ("_pod_lister", "_nominated_pods", "_nominated_pod_to_node", "_view", "_version", "_journal",
                 "_journal_base")

    def __init__(self, pod_lister: PodLister | None = None):
        self._pod_lister = pod_lister
        #: node name -> the nominated pods' PodInfo, in nomination order
        self._nominated_pods: dict[str, list[PodInfo]] = {}
        #: pod UID -> node name
        self._nominated_pod_to_node: dict[str, str] = {}
        self._view = types.MappingProxyType(self._nominated_pods)
        self._version = 0
        #: the node each version step touched: ``_journal[v - _journal_base]`` is the node whose
        #: nominated pods changed from version v to v + 1 (see :meth:`nodes_changed_since`)
        self._journal: list[str] = []
        self._journal_base = 0

    # -- PodNominator --------------------------------------------------------------------------
    def add_nominated_pod(self, pod_info: PodInfo, nominating_info: Any | None = None) -> None:
        """Nominate ``pod_info``'s pod (replacing any earlier nomination of it).

        Mode Override takes the node from ``nominating_info``; mode Noop (and ``None``) takes the
        pod's ``status.nominatedNodeName``. An empty node name only clears the nomination.
        """
        pod = pod_info.pod
        # Never keep more than one instance of the pod.
        self._delete(pod.uid)
        mode = nominating_mode(nominating_info)
        if mode == NominatingMode.OVERRIDE:
            node_name = _nominated_node_name_of(nominating_info)
        else:
            node_name = pod.nominated_node_name or ""
        if not node_name:
            return
        if self._pod_lister is not None:
            live = self._pod_lister(pod.namespace, pod.name)
            if live is None or live.node_name:
                # Removed, or already scheduled: nothing to nominate.
                return
        self._nominated_pod_to_node[pod.uid] = node_name
        pods = self._nominated_pods.setdefault(node_name, [])
        for existing in pods:
            if existing.pod.uid == pod.uid:  # pragma: no cover - _delete removed it above
                return
        pods.append(pod_info)
        self._step(node_name)

    def delete_nominated_pod_if_exists(self, pod: "Pod") -> None:
        uid = pod.uid
        if uid in self._nominated_pod_to_node:  # every assumed pod comes here; few are nominated
            self._delete(uid)

    def update_nominated_pod(self, old_pod: "Pod", new_pod_info: PodInfo) -> None:
        """Replace ``old_pod`` with ``new_pod_info``, keeping an in-memory nomination.

        When neither version carries ``status.nominatedNodeName`` but the nominator holds a
        nomination for the pod (set by preemption before the API update landed), the nomination
        is kept (mode Override to the same node). Otherwise the new version's own field decides.
        """
        nominating_info = None
        if not old_pod.nominated_node_name and not new_pod_info.pod.nominated_node_name:
            node = self._nominated_pod_to_node.get(old_pod.uid)
            if node is not None:
                nominating_info = NominatingInfo(node, NominatingMode.OVERRIDE)
        # Update even when the node did not change, so that the stored PodInfo is the new one.
        self._delete(old_pod.uid)
        self.add_nominated_pod(new_pod_info, nominating_info)

    def nominated_pods_for_node(self, node_name: str) -> list[PodInfo]:
        """The pods nominated to ``node_name``, in nomination order (a copy of the list)."""
        return list(self._nominated_pods.get(node_name, ()))

    # -- extras ----------------------------------------------------------------------------------
    def nominated_node_names(self) -> set[str]:
        """The names of the nodes that have at least one nominated pod."""
        return set(self._nominated_pods)

    def nominated_pods_by_node(self) -> Mapping[str, list[PodInfo]]:
        """A live, read-only view of ``node name -> nominated PodInfos`` (nomination order), with
        what :meth:`nominated_pods_for_node` copies for each node. Its lists are the nominator's
        own: read them, never change them (the runtime reads every nominated node per cycle without
        a copy; see :mod:`fastsched.runtime.nominated`)."""
        return self._view

    @property
    def version(self) -> int:
        """A counter that moves on every change of the nominations (a pod nominated, moved or
        removed; an update that replaces a nominated pod's PodInfo). Equal values mean the
        nominations are the same, as long as nobody changes a stored PodInfo in place."""
        return self._version

    def nodes_changed_since(self, version: int) -> list[str] | None:
        """The nodes whose nominated pods changed since ``version`` (one entry per version step,
        repeats kept), or None when that version is older than the journal kept. Lets a reader that
        built something from :meth:`nominated_pods_by_node` at ``version`` redo only those nodes."""
        k = version - self._journal_base
        if k < 0 or version > self._version:
            return None
        return self._journal[k:]

    def _step(self, node: str) -> None:
        """One change of ``node``'s nominated pods: the version moves and the journal notes it."""
        self._version += 1
        journal = self._journal
        if len(journal) >= _JOURNAL_SIZE:  # older readers rebuild in full
            del journal[:_JOURNAL_SIZE // 2]
            self._journal_base += _JOURNAL_SIZE // 2
        journal.append(node)

    def nominated_node_for(self, uid: str) -> str | None:
        """The node the pod with ``uid`` is nominated to, or None."""
        return self._nominated_pod_to_node.get(uid)

    def __len__(self) -> int:
        return len(self._nominated_pod_to_node)

    def __contains__(self, uid: object) -> bool:
        return uid in self._nominated_pod_to_node

    # -- internals -------------------------------------------------------------------------------
    def _delete(self, uid: str) -> None:
        node = self._nominated_pod_to_node.pop(uid, None)
        if node is None:
            return
        self._step(node)
        pods = self._nominated_pods.get(node)
        if pods is None:  # pragma: no cover - maps are kept consistent
            return
        for i, pi in enumerate(pods):
            if pi.pod.uid == uid:
                del pods[i]
                break
        if not pods:
            del self._nominated_pods[node]

    def __repr__(self) -> str:
        return f"Nominator({ {n: [pi.pod.key for pi in ps] for n, ps in self._nominated_pods.items()} })"
