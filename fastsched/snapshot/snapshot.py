"""Snapshot: the columnar node table in upstream's node order, as a SharedLister.

``NodeInfoView`` gives one-node-at-a-time plugins the NodeInfo interface on top of one table row;
``NodeBatch`` is the candidate-node list the runtime hands to plugins: a ``Sequence[NodeInfo]`` for
per-node plugins, and ``table`` + ``rows`` for batch plugins.
"""
from __future__ import annotations

import builtins
from typing import TYPE_CHECKING, Any, Callable, Iterable, Iterator, Sequence, overload

import numpy as np

from ..framework.interface import NodeInfoLister, SharedLister
from ..util.forking import ForkCopier
from ..framework.types import (
    CPU,
    EPHEMERAL_STORAGE,
    MEMORY,
    HostPortInfo,
    ImageStateSummary,
    NodeInfo,
    PodInfo,
    Resource,
)
from .table import FLAG_AFFINITY, FLAG_REQUIRED_ANTI, NodeTable
from ..errors import FastschedError

if TYPE_CHECKING:  # pragma: no cover
    from ..api import Node, Pod

_EMPTY_PORTS = HostPortInfo()


class PlacementError(FastschedError, LookupError):
    """``AssumePlacement`` refused a placement (a node the snapshot does not have)."""


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
        return self.table.node_names[self.row]

    @property
    def pods(self) -> list[PodInfo]:
        return self.table.pods[self.row]

    @property
    def pods_with_affinity(self) -> list[PodInfo]:
        if not self.table.pods_with_affinity[self.row]:
            return []
        return self.table.row_pod_infos(self.row, FLAG_AFFINITY)

    @property
    def pods_with_required_anti_affinity(self) -> list[PodInfo]:
        if not self.table.pods_with_req_anti[self.row]:
            return []
        return self.table.row_pod_infos(self.row, FLAG_REQUIRED_ANTI)

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
        for name, amount in self.table.node_allocatable(self.row).items():
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
        for img in t.node_images(self.row):
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


_ZONE_LABELS = ("failure-domain.beta.kubernetes.io/zone", "topology.kubernetes.io/zone",
                "failure-domain.beta.kubernetes.io/region", "topology.kubernetes.io/region")


def zone_key(node: "Node") -> str:
    """Upstream ``utilnode.GetZoneKey``: ``region:\\x00:zone`` (beta labels first), "" when unset."""
    return _zone_key_of(node.labels)


def _zone_key_of(labels) -> str:
    zone = labels.get(_ZONE_LABELS[0]) or labels.get(_ZONE_LABELS[1], "")
    region = labels.get(_ZONE_LABELS[2]) or labels.get(_ZONE_LABELS[3], "")
    if not zone and not region:
        return ""
    return f"{region}:\x00:{zone}"


class Snapshot(SharedLister, NodeInfoLister):
    """The node table with upstream's node order (the cache's nodeTree: zones interleaved).

    Nodes are listed zone-round-robin: the first node of each zone (zones in order of first
    appearance), then the second of each, and so on. The order is recomputed lazily, once per change
    of the node set, with one vectorized sort.

    The tree is kept as columns: ``_row_zone`` (C,) int32, the zone id of the row's node (-1 for a
    row not in the tree) and ``_row_seq`` (C,) int64, when the node joined that zone; per zone id,
    its member count and when it last became non-empty (a zone emptied and refilled goes last, as
    upstream's nodeTree appends it again).

    Forks share these arrays copy-on-write, as the table's columns (:meth:`share_arrays`): read-only
    in both snapshots, each copies them before it first writes them (:meth:`_own_tree`). The order
    (``_order``, which :meth:`order` and :meth:`batch` hand out) is never written in place: it is
    read-only from the start, and shared as it is.
    """

    _tree_shared = False  # (see __init__)

    def __init__(self, table: NodeTable | None = None):
        self.table = table if table is not None else NodeTable()
        self._zone_ids: dict[str, int] = {}
        self._zone_members: list[int] = []
        self._zone_born: list[int] = []
        self._row_zone = np.full(self.table.capacity, -1, dtype=np.int32)
        self._row_seq = np.zeros(self.table.capacity, dtype=np.int64)
        self._seq = 0
        self._order: np.ndarray | None = None
        #: the assumed placement (TopologyAwareWorkloadScheduling's pod group cycle), None when
        #: none is: what ``get_placement`` (upstream's accessor) returns, public for the per-pod
        #: read in ``schedule_one`` (no method frame); read-only outside this class:
        #: ``assume_placement`` / ``forget_placement`` set it with its rows and names below
        self.assumed_placement: Any = None
        #: the placement's rows in order and its node names; None / empty when none is
        self._placement_rows: np.ndarray | None = None
        self._placement_names: frozenset[str] = frozenset()
        #: whether ``_row_zone`` / ``_row_seq`` are shared with a fork (read-only until _own_tree)
        self._tree_shared = False
        #: ``is_assumed_pod(pod)``: whether a pod on the table is only assumed (its binding cycle
        #: may still set its start time); the scheduler cache that owns this snapshot sets it, None
        #: for a snapshot built alone (every pod is then as good as bound). DefaultPreemption's
        #: vectorized dry run reads it to know which not-started pods' start times can still move.
        self.is_assumed_pod: Callable[[Pod], bool] | None = None
        if self.table.row_of:  # an existing table: its nodes in the order they were added
            self._tree_add_rows(np.fromiter(self.table.row_of.values(), dtype=np.int64, count=len(self.table)))

    # -- sharing with forks ----------------------------------------------------------------------
    def __fork__(self, copier: ForkCopier) -> "Snapshot":
        """The fork's snapshot (fastsched.util.forking): its node-order arrays (one entry per row)
        shared copy-on-write, as the table's columns; the rest copied."""
        for arr in self.share_arrays():
            if id(arr) not in copier.memo:
                copier.remember(arr, arr)
        return copier.copy_fields(self)

    def share_arrays(self) -> list[np.ndarray]:
        """Make the node-tree arrays read-only, to be shared with a fork (which holds the same
        arrays); returns them (with the order, when built). From now on this snapshot copies them
        before it first writes them."""
        self._row_zone.flags.writeable = False
        self._row_seq.flags.writeable = False
        self._tree_shared = True
        arrays: list[np.ndarray] = [self._row_zone, self._row_seq]
        if self._order is not None:
            self._order.flags.writeable = False
            arrays.append(self._order)
        return arrays

    def _own_tree(self) -> None:
        """Take ownership of the node-tree arrays (private, writable copies) before writing them."""
        if self._tree_shared:
            self._row_zone = self._row_zone.copy()
            self._row_seq = self._row_seq.copy()
            self._tree_shared = False

    # -- node tree -----------------------------------------------------------------------------
    def _fit_rows(self) -> None:
        cap = self.table.capacity
        old = len(self._row_zone)
        if old < cap:
            zone = np.full(cap, -1, dtype=np.int32)
            zone[:old] = self._row_zone
            seq = np.zeros(cap, dtype=np.int64)
            seq[:old] = self._row_seq
            self._row_zone, self._row_seq = zone, seq
            self._tree_shared = False  # new arrays of this snapshot's own

    def _zone_id(self, key: str) -> int:
        z = self._zone_ids.get(key)
        if z is None:
            z = self._zone_ids[key] = len(self._zone_members)
            self._zone_members.append(0)
            self._zone_born.append(0)
        return z

    def _tree_add_row(self, row: int, z: int) -> None:
        old = self._row_zone[row]
        if old == z:
            return
        if self._tree_shared:
            self._own_tree()
        if old >= 0:
            self._zone_members[old] -= 1
        self._seq += 1
        if self._zone_members[z] == 0:
            self._zone_born[z] = self._seq
        self._zone_members[z] += 1
        self._row_zone[row] = z
        self._row_seq[row] = self._seq
        self._order = None

    def _tree_remove_row(self, row: int) -> None:
        if row >= len(self._row_zone):  # a row added to the table behind the snapshot's back
            return
        z = self._row_zone[row]
        if z < 0:
            return
        if self._tree_shared:
            self._own_tree()
        self._zone_members[z] -= 1
        self._row_zone[row] = -1
        self._order = None

    def _zone_ids_of_rows(self, rows: np.ndarray) -> np.ndarray:
        """(N,) int32: the zone id of each row's node, from the label columns (no Node objects)."""
        t = self.table
        cols, keys = [], []
        for key in _ZONE_LABELS:
            col = t.label_codes.get(key)
            if col is not None:
                codes = col[rows]
                if (codes >= 0).any():
                    cols.append(codes.astype(np.int64))
                    keys.append(key)
        if not cols:
            return np.full(len(rows), self._zone_id(""), dtype=np.int32)
        stacked = np.stack(cols, axis=1)
        combos, inverse = np.unique(stacked, axis=0, return_inverse=True)
        ids = np.empty(len(combos), dtype=np.int32)
        for i, combo in enumerate(combos.tolist()):
            labels = {key: t.label_values[key][c] for key, c in zip(keys, combo) if c >= 0}
            ids[i] = self._zone_id(_zone_key_of(labels))
        return ids[inverse.ravel()]

    def _tree_add_rows(self, rows: np.ndarray) -> None:
        self._fit_rows()
        if len(rows) == 0:
            return
        zones = self._zone_ids_of_rows(rows)
        seen = np.zeros(len(self._row_zone), dtype=bool)
        seen[rows] = True
        if (self._row_zone[rows] >= 0).any() or np.count_nonzero(seen) != len(rows):
            for row, z in zip(rows.tolist(), zones.tolist()):  # some nodes were already there
                self._tree_add_row(row, z)
            return
        if self._tree_shared:
            self._own_tree()
        n = len(rows)
        seqs = np.arange(self._seq + 1, self._seq + n + 1, dtype=np.int64)
        n_zones = len(self._zone_members)
        first = np.full(n_zones, n, dtype=np.int64)  # per zone, the position of its first node
        np.minimum.at(first, zones, np.arange(n))
        counts = np.bincount(zones, minlength=n_zones)
        members = self._zone_members
        for z in np.flatnonzero(counts).tolist():
            if members[z] == 0:
                self._zone_born[z] = int(seqs[first[z]])
            members[z] += int(counts[z])
        self._row_zone[rows] = zones
        self._row_seq[rows] = seqs
        self._seq += len(rows)
        self._order = None

    def order(self) -> np.ndarray:
        """Live rows in upstream's node order, (N,) int64."""
        if self._order is None:
            rows = np.flatnonzero(self._row_zone >= 0)
            if len(rows):
                born = np.asarray(self._zone_born, dtype=np.int64)[self._row_zone[rows]]
                idx = np.lexsort((self._row_seq[rows], born))  # by zone, then by arrival in it
                rows, born = rows[idx], born[idx]
                starts = np.flatnonzero(np.concatenate(([True], born[1:] != born[:-1])))
                rank = np.arange(len(rows)) - np.repeat(starts, np.diff(np.append(starts, len(rows))))
                self._order = rows[np.lexsort((born, rank))].astype(np.int64)
            else:
                self._order = np.zeros(0, dtype=np.int64)
            self._order.flags.writeable = False  # handed out (and shared with forks): never written
        return self._order

    # -- updates -------------------------------------------------------------------------------
    def add_node(self, node: "Node") -> int:
        row = self.table.add_node(node)
        self._fit_rows()
        self._tree_add_row(row, self._zone_id(zone_key(node)))
        return row

    update_node = add_node

    def add_nodes(self, nodes: Iterable["Node"], *, new: bool = False) -> np.ndarray:
        """Add (or update) many nodes: the same as :meth:`add_node` for each, in order (``new``:
        see :meth:`NodeTable.add_nodes`)."""
        rows = self.table.add_nodes(nodes, new=new)
        self._tree_add_rows(rows)
        return rows

    def remove_node(self, name: str) -> list[PodInfo]:
        row = self.table.row_of[name]
        pods = self.table.remove_node(name)
        self._tree_remove_row(row)
        return pods

    def add_pod(self, pod: "Pod", node_name: str | None = None) -> PodInfo:
        return self.table.add_pod(node_name or pod.node_name, pod)

    def add_pods(self, pods: Sequence["Pod"], node_names: Sequence[str] | None = None, *,
                 uid_words: tuple | None = None) -> np.ndarray:
        """Add many pods (on ``node_names``, default their ``spec.nodeName``): the same as
        :meth:`add_pod` for each, in order; returns their table records (``uid_words``: see
        :meth:`NodeTable.add_pods`)."""
        return self.table.add_pods(pods, node_names, uid_words=uid_words)

    def remove_pod(self, pod: "Pod", node_name: str | None = None) -> PodInfo:
        return self.table.remove_pod(node_name or pod.node_name, pod)

    # -- placements (TopologyAwareWorkloadScheduling; upstream snapshot.go placementNodes) -------
    def get_placement(self) -> Any:
        """``GetPlacement``: the assumed placement, None when none is."""
        return self.assumed_placement

    def assume_placement(self, placement: Any) -> None:
        """``AssumePlacement``: limit the pod group cycle's candidate nodes to ``placement``'s (in
        its order). None, or every node of the snapshot, is no placement. A node the snapshot
        does not have is upstream's error (and no placement is left assumed)."""
        if placement is None or len(placement.nodes) == len(self.table):
            self.forget_placement()
            return
        nodes = placement.nodes
        if isinstance(nodes, NodeBatch) and nodes.table is self.table:
            rows = np.asarray(nodes.rows, dtype=np.int64)
        else:
            row_of = self.table.row_of
            out = []
            for info in nodes:
                name = info.node().name
                row = row_of.get(name)
                if row is None:
                    self.forget_placement()
                    raise PlacementError(f"node {name} in placement is not present in snapshot")
                out.append(row)
            rows = np.asarray(out, dtype=np.int64)
        self.assumed_placement = placement
        self._placement_rows = rows
        self._placement_names = frozenset(self.table.node_names[rows].tolist())

    def forget_placement(self) -> None:
        """``ForgetPlacement``."""
        self.assumed_placement = None
        self._placement_rows = None
        self._placement_names = frozenset()

    def placement_batch(self) -> NodeBatch:
        """``ListNodesInPlacement``: the placement's nodes, or all nodes without one."""
        if self._placement_rows is None:
            return self.batch()
        return NodeBatch(self.table, self._placement_rows)

    def num_nodes_in_placement(self) -> int:
        """``NumNodesInPlacement``."""
        return len(self.table) if self._placement_rows is None else len(self._placement_rows)

    def in_placement(self, node_name: str) -> bool:
        """Whether ``GetNodeInPlacement`` finds the node (any node of the snapshot without a placement)."""
        if self._placement_rows is None:
            return node_name in self.table.row_of
        return node_name in self._placement_names

    # -- SharedLister / NodeInfoLister -----------------------------------------------------------
    def node_infos(self) -> "Snapshot":
        return self

    def batch(self) -> NodeBatch:
        """All nodes, in order, as a NodeBatch."""
        return NodeBatch(self.table, self.order())

    def list(self) -> NodeBatch:
        return self.batch()

    def listed_extent(self) -> tuple[NodeTable, int]:
        """``(table, n)``: the table :meth:`list`'s NodeBatch is over and its number of rows, without
        building the batch (a plugin asking only whether a batch it was handed is every listed row
        pays for the NodeBatch each cycle otherwise: InterPodAffinity's PreFilter and PreScore)."""
        return self.table, len(self.order())

    def have_pods_with_affinity_list(self) -> builtins.list[NodeInfoView]:  # (``list`` is the method above)
        order = self.order()
        return list(NodeBatch(self.table, order[self.table.pods_with_affinity[order] > 0]))

    def have_pods_with_required_anti_affinity_list(self) -> builtins.list[NodeInfoView]:
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
    snap.add_nodes(nodes)
    row_of = snap.table.row_of
    snap.add_pods([p for p in pods if p.node_name and p.node_name in row_of])
    return snap
