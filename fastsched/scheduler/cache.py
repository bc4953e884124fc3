"""The scheduler cache (upstream ``pkg/scheduler/backend/cache``), over the columnar snapshot.

Upstream keeps NodeInfos in a cache and copies the changed ones into a snapshot at the start of each
cycle. fastsched runs scheduling and binding cycles on one thread, so nothing changes the cluster
during a cycle: the cache updates the columnar table in place (only the changed rows) and the
snapshot *is* that table. ``update_snapshot()`` is therefore free; its result is the same as
upstream's incremental snapshot.

Pods are tracked with upstream's state machine: assumed (scheduled, binding in progress or done but
not yet confirmed), then confirmed by ``add_pod`` (the informer's add event); ``forget_pod`` drops an
assumed pod after a failed binding. A removed node keeps its pods as a "ghost" until they are
deleted or the node returns, as upstream's cache does.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..errors import FastschedError
from ..framework.types import PodInfo
from ..snapshot import Snapshot

if TYPE_CHECKING:  # pragma: no cover
    from ..api import Node, Pod


class CacheError(FastschedError, RuntimeError):
    """An impossible cache transition (upstream logs these as errors or treats them as corruption)."""


@dataclass
class _PodState:
    pod: "Pod"
    node_name: str
    assumed: bool = False
    binding_finished: bool = False


class Cache:
    """Nodes and the pods assigned to them, with assumed pods; owns the :class:`Snapshot`."""

    def __init__(self, snapshot: Snapshot | None = None):
        self.snapshot = snapshot if snapshot is not None else Snapshot()
        self._pods: dict[str, _PodState] = {}
        self._ghost_pods: dict[str, dict[str, "Pod"]] = {}  # node name -> uid -> pod (node removed)
        self._nodes: dict[str, "Node"] = {}

    # -- nodes -------------------------------------------------------------------------------------
    def add_node(self, node: "Node") -> None:
        if node.name in self._nodes:
            self.update_node(node)
            return
        self._nodes[node.name] = node
        self.snapshot.add_node(node)
        for pod in self._ghost_pods.pop(node.name, {}).values():
            self.snapshot.add_pod(pod, node.name)

    def update_node(self, node: "Node") -> None:
        if node.name not in self._nodes:
            self.add_node(node)
            return
        self._nodes[node.name] = node
        self.snapshot.update_node(node)

    def remove_node(self, name: str) -> None:
        if name not in self._nodes:
            raise CacheError(f"node {name} is not found")
        del self._nodes[name]
        pods = self.snapshot.remove_node(name)
        if pods:
            self._ghost_pods[name] = {pi.pod.uid: pi.pod for pi in pods}

    def get_node(self, name: str) -> "Node | None":
        return self._nodes.get(name)

    def node_names(self) -> list[str]:
        """The names of the cache's nodes, in the order they were added."""
        return list(self._nodes)

    def node_count(self) -> int:
        return len(self._nodes)

    # -- pods --------------------------------------------------------------------------------------
    def _place(self, pod: "Pod", node_name: str) -> None:
        if node_name in self._nodes:
            self.snapshot.add_pod(pod, node_name)
        else:
            self._ghost_pods.setdefault(node_name, {})[pod.uid] = pod

    def _unplace(self, pod: "Pod", node_name: str) -> None:
        ghosts = self._ghost_pods.get(node_name)
        if ghosts is not None and pod.uid in ghosts:
            del ghosts[pod.uid]
            if not ghosts:
                del self._ghost_pods[node_name]
            return
        self.snapshot.remove_pod(pod, node_name)

    def assume_pod(self, pod: "Pod") -> None:
        """Account a pod the scheduler just placed (``pod.node_name`` set) before it is bound."""
        if pod.uid in self._pods:
            raise CacheError(f"pod {pod.uid}({pod.key}) is in the cache, so can't be assumed")
        if not pod.node_name:
            raise CacheError(f"pod {pod.key} has no node name, so can't be assumed")
        self._place(pod, pod.node_name)
        self._pods[pod.uid] = _PodState(pod, pod.node_name, assumed=True)

    def finish_binding(self, pod: "Pod") -> None:
        st = self._pods.get(pod.uid)
        if st is not None and st.assumed:
            st.binding_finished = True

    def forget_pod(self, pod: "Pod") -> None:
        """Drop an assumed pod (its binding failed)."""
        st = self._pods.get(pod.uid)
        if st is None:
            return
        if st.node_name != pod.node_name and pod.node_name:
            raise CacheError(f"pod {pod.uid}({pod.key}) was assumed on {pod.node_name} but assigned to {st.node_name}")
        if not st.assumed:
            raise CacheError(f"pod {pod.uid}({pod.key}) is not assumed, so it cannot be removed or forgotten")
        self._unplace(st.pod, st.node_name)
        del self._pods[pod.uid]

    def add_pod(self, pod: "Pod") -> None:
        """A pod bound to a node (informer add): confirms an assumed pod or adds a new one."""
        st = self._pods.get(pod.uid)
        if st is not None and st.assumed:
            if st.node_name != pod.node_name:
                # the pod was bound somewhere else than assumed: move it, as upstream does
                self._unplace(st.pod, st.node_name)
                self._place(pod, pod.node_name)
            elif st.pod is not pod:
                self._unplace(st.pod, st.node_name)
                self._place(pod, pod.node_name)
            self._pods[pod.uid] = _PodState(pod, pod.node_name)
            return
        if st is not None:
            raise CacheError(f"pod {pod.uid}({pod.key}) was already in added state")
        self._place(pod, pod.node_name)
        self._pods[pod.uid] = _PodState(pod, pod.node_name)

    def update_pod(self, old: "Pod", new: "Pod") -> None:
        st = self._pods.get(old.uid)
        if st is None or st.assumed:
            raise CacheError(f"pod {old.uid}({old.key}) is not added to scheduler cache, so cannot be updated")
        if st.node_name != new.node_name:
            raise CacheError(f"pod {old.key} updated on a different node than previously added to")
        self._unplace(st.pod, st.node_name)
        self._place(new, new.node_name)
        st.pod = new

    def remove_pod(self, pod: "Pod") -> None:
        st = self._pods.get(pod.uid)
        if st is None:
            raise CacheError(f"pod {pod.uid}({pod.key}) is not found in scheduler cache, so cannot be removed from it")
        self._unplace(st.pod, st.node_name)
        del self._pods[pod.uid]

    def is_assumed_pod(self, pod: "Pod") -> bool:
        st = self._pods.get(pod.uid)
        return st is not None and st.assumed

    def get_pod(self, pod: "Pod") -> "Pod | None":
        st = self._pods.get(pod.uid)
        return None if st is None else st.pod

    def pod_count(self) -> int:
        return len(self._pods)

    def pods_on_node(self, name: str) -> list[PodInfo]:
        row = self.snapshot.table.row_of.get(name)
        return [] if row is None else list(self.snapshot.table.pods[row])

    def update_snapshot(self) -> Snapshot:
        """The snapshot for the next cycle (already current: see the module docstring)."""
        return self.snapshot
