"""Snapshot: the columnar node table in upstream's node order, as a SharedLister.

``NodeInfoView`` gives one-node-at-a-time plugins the NodeInfo interface on top of one table row;
``NodeBatch`` is the candidate-node list the runtime hands to plugins: a ``Sequence[NodeInfo]`` for
per-node plugins, and ``table`` + ``rows`` for batch plugins.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Iterable, Iterator, Sequence, overload

import numpy as np

from ..framework.interface import NodeInfoLister, SharedLister
from ..framework.types import (CPU, EPHEMERAL_STORAGE, MEMORY, HostPortInfo, ImageStateSummary, NodeInfo,
                               PodInfo, Resource)
from .table import NodeTable

if TYPE_CHECKING:  # pragma: no cover
    from ..api import Node, Pod

_EMPTY_PORTS = HostPortInfo()


class NodeInfoView:
    """The NodeInfo of one table row, read live from the columns (no copy).

    Exposes NodeInfo's read interface; :meth:`snapshot` returns a detached, mutable
    :class:`~fastsched.framework.types.NodeInfo` (used for nominated pods and preemption dry runs).
    """

    __slots__ = ("table", "row")

    def __init__(self, table: NodeTable, row: int):
        self.table = table
        self.row = row

    def node(self) -> "Node":
        return self.table.nodes[self.row]

    @property
    def name(self) -> str:
        return self.table.nodes[self.row].name

    @property
    def pods(self) -> list[PodInfo]:
        return self.table.pods[self.row]

    @property
    def pods_with_affinity(self) -> list[PodInfo]:
        if not self.table.pods_with_affinity[self.row]:
            return []
        return [pi for pi in self.table.pods[self.row] if pi.has_affinity]

    @property
    def pods_with_required_anti_affinity(self) -> list[PodInfo]:
        if not self.table.pods_with_req_anti[self.row]:
            return []
        return [pi for pi in self.table.pods[self.row] if pi.has_required_anti_affinity]

    @property
    def used_ports(self) -> HostPortInfo:
        return self.table.ports[self.row] or _EMPTY_PORTS

    def _resource(self, matrix: np.ndarray) -> Resource:
        t = self.table
        vals = matrix[self.row]
        r = Resource(milli_cpu=int(vals[0]), memory=int(vals[1]), ephemeral_storage=int(vals[2]))
        for name, idx in t.resource_index.items():
            if idx >= 3 and vals[idx]:
                r.scalar_resources[name] = int(vals[idx])
        return r

    @property
    def requested(self) -> Resource:
        return self._resource(self.table.requested)

    @property
    def allocatable(self) -> Resource:
        r = self._resource(self.table.alloc)
        r.allowed_pod_number = int(self.table.allowed_pods[self.row])
        node = self.node()
        for name, amount in node.allocatable.items():
            # keep explicit zero entries of scalar resources, as upstream's map has them
            if name not in (CPU, MEMORY, EPHEMERAL_STORAGE, "pods") and name not in r.scalar_resources:
                r.scalar_resources[name] = int(amount)
        return r

    @property
    def non_zero_requested(self) -> Resource:
        nz = self.table.nonzero_requested[self.row]
        return Resource(milli_cpu=int(nz[0]), memory=int(nz[1]))

    @property
    def image_states(self) -> dict[str, ImageStateSummary]:
        t = self.table
        out = {}
        for img in self.node().images:
            for name in img.names:
                out[name] = ImageStateSummary(int(img.size_bytes), t.image_num_nodes(name))
        return out

    @property
    def pvc_ref_counts(self) -> dict[str, int]:
        return {}

    @property
    def generation(self) -> int:
        return int(self.table.row_version[self.row])

    def snapshot(self) -> NodeInfo:
        """A detached NodeInfo copy of this row."""
        ni = NodeInfo(self.node())
        ni.image_states = self.image_states
        for pi in self.pods:
            ni.add_pod_info(pi)
        return ni

    clone = snapshot

    def __repr__(self) -> str:
        return f"NodeInfoView({self.name!r}, row={self.row})"


class NodeBatch(Sequence):
    """Candidate nodes: ``rows`` (int64 indices into ``table``) in evaluation order.

    As a Sequence it yields :class:`NodeInfoView` objects, so per-node plugins work unchanged;
    batch plugins read ``table`` columns at ``rows``.
    """

    __slots__ = ("table", "rows", "_names")

    def __init__(self, table: NodeTable, rows: np.ndarray):
        self.table = table
        self.rows = np.asarray(rows, dtype=np.int64)
        self._names: list[str] | None = None

    def __len__(self) -> int:
        return len(self.rows)

    @overload
    def __getitem__(self, i: int) -> NodeInfoView: ...

    @overload
    def __getitem__(self, i: slice) -> "NodeBatch": ...

    def __getitem__(self, i):
        if isinstance(i, slice):
            return NodeBatch(self.table, self.rows[i])
        return NodeInfoView(self.table, int(self.rows[i]))

    def __iter__(self) -> Iterator[NodeInfoView]:
        t = self.table
        return (NodeInfoView(t, r) for r in self.rows.tolist())

    def select(self, mask_or_index: np.ndarray) -> "NodeBatch":
        """The sub-batch at a boolean mask or index array over this batch's positions."""
        return NodeBatch(self.table, self.rows[mask_or_index])

    def window(self, start: int, begin: int, end: int) -> "NodeBatch":
        """Positions ``begin`` to ``end`` (exclusive) of this batch rotated to start at ``start``,
        i.e. the positions ``(start + i) % len(self)``, without materializing the whole rotation."""
        n = len(self.rows)
        lo, hi = start + begin, start + end
        if hi <= n:
            return NodeBatch(self.table, self.rows[lo:hi])
        if lo >= n:
            return NodeBatch(self.table, self.rows[lo - n:hi - n])
        return NodeBatch(self.table, np.concatenate((self.rows[lo:], self.rows[:hi - n])))

    def name_at(self, i: int) -> str:
        """The name of the node at position ``i`` (without building the whole name list)."""
        if self._names is not None:
            return self._names[i]
        return self.table.node_names[self.rows[i]]

    @property
    def names(self) -> list[str]:
        if self._names is None:
            self._names = self.table.node_names[self.rows].tolist()
        return self._names

    def __repr__(self) -> str:
        return f"NodeBatch({len(self.rows)} nodes)"


def zone_key(node: "Node") -> str:
    """Upstream ``utilnode.GetZoneKey``: ``region:\\x00:zone`` (beta labels first), "" when unset."""
    labels = node.labels
    zone = labels.get("failure-domain.beta.kubernetes.io/zone") or labels.get("topology.kubernetes.io/zone", "")
    region = (labels.get("failure-domain.beta.kubernetes.io/region")
              or labels.get("topology.kubernetes.io/region", ""))
    if not zone and not region:
        return ""
    return f"{region}:\x00:{zone}"


class Snapshot(SharedLister, NodeInfoLister):
    """The node table with upstream's node order (the cache's nodeTree: zones interleaved).

    Nodes are listed zone-round-robin: the first node of each zone (zones in order of first
    appearance), then the second of each, and so on. The order is recomputed lazily, once per change
    of the node set, with one vectorized sort.
    """

    def __init__(self, table: NodeTable | None = None):
        self.table = table if table is not None else NodeTable()
        self._zone_of: dict[str, str] = {}
        self._zones: dict[str, dict[str, None]] = {}  # zone -> ordered node names
        self._order: np.ndarray | None = None
        self._views: list[NodeInfoView] | None = None
        self._views_version = -1
        for name in list(self.table.row_of):
            self._tree_add(self.table.nodes[self.table.row_of[name]])

    # -- node tree -----------------------------------------------------------------------------
    def _tree_add(self, node: "Node") -> None:
        z = zone_key(node)
        old = self._zone_of.get(node.name)
        if old == z:
            return
        if old is not None:
            self._tree_remove(node.name)
        self._zone_of[node.name] = z
        self._zones.setdefault(z, {})[node.name] = None
        self._order = None

    def _tree_remove(self, name: str) -> None:
        z = self._zone_of.pop(name, None)
        if z is None:
            return
        members = self._zones[z]
        members.pop(name, None)
        if not members:
            del self._zones[z]
        self._order = None

    def order(self) -> np.ndarray:
        """Live rows in upstream's node order, (N,) int64."""
        if self._order is None:
            row_of = self.table.row_of
            rows, ranks, zone_ids = [], [], []
            for zi, members in enumerate(self._zones.values()):
                r = np.fromiter((row_of[n] for n in members), dtype=np.int64, count=len(members))
                rows.append(r)
                ranks.append(np.arange(len(members), dtype=np.int64))
                zone_ids.append(np.full(len(members), zi, dtype=np.int64))
            if rows:
                rows_a, ranks_a, zones_a = np.concatenate(rows), np.concatenate(ranks), np.concatenate(zone_ids)
                self._order = rows_a[np.lexsort((zones_a, ranks_a))]
            else:
                self._order = np.zeros(0, dtype=np.int64)
        return self._order

    # -- updates -------------------------------------------------------------------------------
    def add_node(self, node: "Node") -> int:
        row = self.table.add_node(node)
        self._tree_add(node)
        return row

    update_node = add_node

    def remove_node(self, name: str) -> list[PodInfo]:
        pods = self.table.remove_node(name)
        self._tree_remove(name)
        return pods

    def add_pod(self, pod: "Pod", node_name: str | None = None) -> PodInfo:
        return self.table.add_pod(node_name or pod.node_name, pod)

    def remove_pod(self, pod: "Pod", node_name: str | None = None) -> PodInfo:
        return self.table.remove_pod(node_name or pod.node_name, pod)

    # -- SharedLister / NodeInfoLister -----------------------------------------------------------
    def node_infos(self) -> "Snapshot":
        return self

    def batch(self) -> NodeBatch:
        """All nodes, in order, as a NodeBatch."""
        return NodeBatch(self.table, self.order())

    def list(self) -> NodeBatch:
        return self.batch()

    def have_pods_with_affinity_list(self) -> list[NodeInfoView]:
        order = self.order()
        return list(NodeBatch(self.table, order[self.table.pods_with_affinity[order] > 0]))

    def have_pods_with_required_anti_affinity_list(self) -> list[NodeInfoView]:
        order = self.order()
        return list(NodeBatch(self.table, order[self.table.pods_with_req_anti[order] > 0]))

    def get(self, node_name: str) -> NodeInfoView:
        row = self.table.row_of.get(node_name)
        if row is None:
            raise KeyError(f"nodeinfo not found for node name {node_name!r}")
        return NodeInfoView(self.table, row)

    def __len__(self) -> int:
        return len(self.table)

    def num_nodes(self) -> int:
        return len(self.table)


def build_snapshot(nodes: Iterable["Node"], pods: Iterable["Pod"] = ()) -> Snapshot:
    """A snapshot of ``nodes`` with every pod that has a ``spec.nodeName`` of one of them."""
    snap = Snapshot()
    for n in nodes:
        snap.add_node(n)
    row_of = snap.table.row_of
    for p in pods:
        if p.node_name and p.node_name in row_of:
            snap.add_pod(p)
    return snap
