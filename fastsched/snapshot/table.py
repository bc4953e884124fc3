"""The columnar node table: the cluster as NumPy columns, one row per node.

Rows are stable: a removed node's row is freed and reused by a later node, so a row index held by a
plugin stays valid for the cycle. Every update touches only the rows it changes (amortized O(1)
growth when capacity or the resource set grows).

Columns (``C`` = row capacity >= number of live nodes, ``R`` = number of interned resources):

==========================  ==============  ========  ==========================================================
column                      shape           dtype     meaning
==========================  ==============  ========  ==========================================================
``live``                    (C,)            bool      the row holds a node
``alloc``                   (C, R)          int64     allocatable per resource (cpu in millicores)
``requested``               (C, R)          int64     sum of the pods' effective requests (with overhead)
``nonzero_requested``       (C, 2)          int64     cpu, memory sums with upstream's non-zero defaults
``allowed_pods``            (C,)            int64     ``allocatable.pods``
``pod_count``               (C,)            int64     pods on the node (assumed pods included)
``unschedulable``           (C,)            bool      ``spec.unschedulable``
``taint_set``               (C,)            int32     index into ``taint_sets`` (0 = no taints)
``label_codes[key]``        (C,)            int32     dictionary code of the node's value for ``key``; -1 absent
``has_host_ports``          (C,)            bool      some pod on the node uses a host port
``pods_with_affinity``      (C,)            int32     pods with pod (anti-)affinity terms
``pods_with_req_anti``      (C,)            int32     pods with required pod anti-affinity terms
``terminating_pods``        (C,)            int32     pods with a ``metadata.deletionTimestamp`` (terminating)
==========================  ==============  ========  ==========================================================

Pods are also indexed by *label signature* (namespace + full label set): ``pod_signatures[k]`` is
``(namespace, labels)`` and ``signature_rows[k]`` maps row -> number of pods with that signature on
the row. Pods of one workload share a signature, so counting the pods that match a selector per node
(PodTopologySpread, InterPodAffinity) is a loop over distinct signatures plus array work over rows:
see :meth:`NodeTable.count_matching_pods`.

Pods with pod (anti-)affinity (``PodInfo.has_affinity``) are also indexed by *affinity signature*
(namespace + ``spec.affinity.podAffinity`` + ``spec.affinity.podAntiAffinity``):
``affinity_signatures[k]`` is ``(namespace, pod_affinity, pod_anti_affinity)`` and
``affinity_signature_rows[k]`` maps row -> number of such pods on the row. A workload's pods share one
signature, so InterPodAffinity evaluates an existing pod's terms once per signature, not once per pod.

Resources are interned in ``resource_index`` (``cpu`` = 0, ``memory`` = 1, ``ephemeral-storage`` = 2,
then extended/scalar resources in order of first appearance). Labels are dictionary-encoded per key:
``label_values[key][code]`` is the value string. Images: ``image_rows[name]`` maps row -> size for
each node listing the image. Per-row Python objects (the Node, its PodInfos, host ports) live in
plain lists indexed by row; they serve the one-node-at-a-time path and the incremental updates.
"""
from __future__ import annotations

import itertools
from typing import TYPE_CHECKING, Iterable

import numpy as np

from ..framework.types import CPU, EPHEMERAL_STORAGE, MEMORY, PODS, HostPortInfo, PodInfo

if TYPE_CHECKING:  # pragma: no cover
    from ..api import Node, Pod

#: The resources every table has, in column order.
BASE_RESOURCES = (CPU, MEMORY, EPHEMERAL_STORAGE)
_INITIAL_CAPACITY = 64
_TABLE_UIDS = itertools.count()


class NodeTable:
    """The columnar store of nodes and the pods assigned to them (see the module docstring)."""

    def __init__(self, capacity: int = _INITIAL_CAPACITY):
        cap = max(int(capacity), 1)
        #: unique for the process's lifetime (unlike ``id()``): plugins key per-table caches on it
        self.uid = next(_TABLE_UIDS)
        self.capacity = cap
        self.resource_names: list[str] = list(BASE_RESOURCES)
        self.resource_index: dict[str, int] = {r: i for i, r in enumerate(self.resource_names)}
        r = len(self.resource_names)
        self.live = np.zeros(cap, dtype=bool)
        self.alloc = np.zeros((cap, r), dtype=np.int64)
        self.requested = np.zeros((cap, r), dtype=np.int64)
        self.nonzero_requested = np.zeros((cap, 2), dtype=np.int64)
        self.allowed_pods = np.zeros(cap, dtype=np.int64)
        self.pod_count = np.zeros(cap, dtype=np.int64)
        self.unschedulable = np.zeros(cap, dtype=bool)
        self.taint_set = np.zeros(cap, dtype=np.int32)
        self.has_host_ports = np.zeros(cap, dtype=bool)
        self.pods_with_affinity = np.zeros(cap, dtype=np.int32)
        self.pods_with_req_anti = np.zeros(cap, dtype=np.int32)
        self.terminating_pods = np.zeros(cap, dtype=np.int32)
        self.label_codes: dict[str, np.ndarray] = {}
        self.label_values: dict[str, list[str]] = {}
        self._label_value_code: dict[str, dict[str, int]] = {}
        self.taint_sets: list[tuple] = [()]
        self._taint_set_index: dict[tuple, int] = {(): 0}
        self.image_rows: dict[str, dict[int, int]] = {}
        self.pod_signatures: list[tuple[str, tuple[tuple[str, str], ...]]] = []
        self.signature_rows: list[dict[int, int]] = []
        self._signature_index: dict[tuple, int] = {}
        self.affinity_signatures: list[tuple] = []
        self.affinity_signature_rows: list[dict[int, int]] = []
        self._affinity_signature_index: dict[tuple, int] = {}

        self.nodes: list["Node | None"] = [None] * cap
        #: (C,) object: node name per row ("" for free rows), for fast name gathers
        self.node_names = np.full(cap, "", dtype=object)
        self.pods: list[list[PodInfo]] = [[] for _ in range(cap)]
        self.ports: list[HostPortInfo | None] = [None] * cap
        self.row_of: dict[str, int] = {}
        self._free: list[int] = list(range(cap - 1, -1, -1))
        #: bumped on every change; views and caches compare it
        self.version = 0
        #: per-row version, bumped when the row changes (lets a cache refresh only changed rows)
        self.row_version = np.zeros(cap, dtype=np.int64)
        #: bumped when a node is added, updated or removed (not when pods move): what depends only
        #: on the nodes (label masks, taint and image columns) stays valid while it is unchanged
        self.node_version = 0
        #: table-wide sums of ``pods_with_affinity`` / ``pods_with_req_anti``: O(1) Skip decisions
        self.total_pods_with_affinity = 0
        self.total_pods_with_req_anti = 0

    # ------------------------------------------------------------------------------------------
    # capacity
    # ------------------------------------------------------------------------------------------
    def __len__(self) -> int:
        return len(self.row_of)

    def _grow_rows(self, need: int) -> None:
        new_cap = self.capacity
        while new_cap < need:
            new_cap *= 2
        if new_cap == self.capacity:
            return
        old = self.capacity

        def grow(a: np.ndarray, fill=0) -> np.ndarray:
            out = np.full((new_cap,) + a.shape[1:], fill, dtype=a.dtype)
            out[:old] = a
            return out

        for name in ("live", "alloc", "requested", "nonzero_requested", "allowed_pods", "pod_count",
                     "unschedulable", "taint_set", "has_host_ports", "pods_with_affinity",
                     "pods_with_req_anti", "terminating_pods", "row_version"):
            setattr(self, name, grow(getattr(self, name)))
        for key, col in self.label_codes.items():
            self.label_codes[key] = grow(col, -1)
        self.node_names = grow(self.node_names, "")
        self.nodes.extend([None] * (new_cap - old))
        self.pods.extend([] for _ in range(new_cap - old))
        self.ports.extend([None] * (new_cap - old))
        self._free = list(range(new_cap - 1, old - 1, -1)) + self._free
        self.capacity = new_cap

    def intern_resource(self, name: str) -> int:
        """The column of resource ``name``, adding a column when it is new."""
        idx = self.resource_index.get(name)
        if idx is not None:
            return idx
        idx = len(self.resource_names)
        self.resource_names.append(name)
        self.resource_index[name] = idx
        pad = np.zeros((self.capacity, 1), dtype=np.int64)
        self.alloc = np.hstack([self.alloc, pad])
        self.requested = np.hstack([self.requested, pad])
        return idx

    # ------------------------------------------------------------------------------------------
    # labels, taints, images
    # ------------------------------------------------------------------------------------------
    def label_code(self, key: str, value: str, *, create: bool = False) -> int:
        """The code of ``value`` under ``key`` (-1 when the table has never seen it)."""
        codes = self._label_value_code.get(key)
        if codes is None:
            if not create:
                return -1
            codes = self._label_value_code[key] = {}
            self.label_values[key] = []
            self.label_codes[key] = np.full(self.capacity, -1, dtype=np.int32)
        code = codes.get(value)
        if code is None:
            if not create:
                return -1
            code = codes[value] = len(self.label_values[key])
            self.label_values[key].append(value)
        return code

    def label_column(self, key: str) -> np.ndarray | None:
        """The (C,) int32 code column of ``key``, or None when no node ever had the key."""
        return self.label_codes.get(key)

    def _set_labels(self, row: int, old: "Node | None", node: "Node") -> None:
        if old is not None:
            for key in old.labels:
                if key not in node.labels:
                    self.label_codes[key][row] = -1
        for key, value in node.labels.items():
            code = self.label_code(key, value, create=True)
            self.label_codes[key][row] = code

    def _taint_set_id(self, taints: tuple) -> int:
        tid = self._taint_set_index.get(taints)
        if tid is None:
            tid = self._taint_set_index[taints] = len(self.taint_sets)
            self.taint_sets.append(taints)
        return tid

    def _set_images(self, row: int, old: "Node | None", node: "Node") -> None:
        if old is not None:
            for img in old.images:
                for name in img.names:
                    rows = self.image_rows.get(name)
                    if rows is not None:
                        rows.pop(row, None)
                        if not rows:
                            del self.image_rows[name]
        for img in node.images:
            for name in img.names:
                self.image_rows.setdefault(name, {})[row] = int(img.size_bytes)

    # ------------------------------------------------------------------------------------------
    # nodes
    # ------------------------------------------------------------------------------------------
    def add_node(self, node: "Node") -> int:
        """Add ``node`` (or update it when a node of that name exists); returns its row."""
        row = self.row_of.get(node.name)
        if row is not None:
            self.update_node(node)
            return row
        if not self._free:
            self._grow_rows(self.capacity + 1)
        row = self._free.pop()
        self.row_of[node.name] = row
        self.node_names[row] = node.name
        self.live[row] = True
        self.pods[row] = []
        self.ports[row] = None
        self.requested[row] = 0
        self.nonzero_requested[row] = 0
        self.pod_count[row] = 0
        self.has_host_ports[row] = False
        self.pods_with_affinity[row] = 0
        self.pods_with_req_anti[row] = 0
        self.terminating_pods[row] = 0
        self._write_node(row, None, node)
        return row

    def update_node(self, node: "Node") -> int:
        """Replace the Node object of an existing row, keeping its pods; returns the row."""
        row = self.row_of[node.name]
        self._write_node(row, self.nodes[row], node)
        return row

    def _write_node(self, row: int, old: "Node | None", node: "Node") -> None:
        self.nodes[row] = node
        self.alloc[row] = 0
        for name, amount in node.allocatable.items():
            if name == PODS:
                continue
            col = self.intern_resource(name)  # may widen (replace) self.alloc
            self.alloc[row, col] = amount
        self.allowed_pods[row] = node.allocatable.get(PODS, 0)
        self.unschedulable[row] = bool(node.unschedulable)
        self.taint_set[row] = self._taint_set_id(tuple(node.taints))
        self._set_labels(row, old, node)
        self._set_images(row, old, node)
        self.node_version += 1
        self._touch(row)

    def remove_node(self, name: str) -> list[PodInfo]:
        """Free the node's row; returns the pods that were on it."""
        row = self.row_of.pop(name)
        pods = self.pods[row]
        node = self.nodes[row]
        for pi in pods:  # the freed row must not keep counting these pods in the signature indexes
            self._count_signature(row, pi.pod, -1)
            if pi.has_affinity:
                self._count_affinity_signature(row, pi.pod, -1)
        self._set_images(row, node, _NO_IMAGES)
        for key in node.labels:
            self.label_codes[key][row] = -1
        self.live[row] = False
        self.nodes[row] = None
        self.node_names[row] = ""
        self.pods[row] = []
        self.ports[row] = None
        self.alloc[row] = 0
        self.requested[row] = 0
        self.nonzero_requested[row] = 0
        self.allowed_pods[row] = 0
        self.pod_count[row] = 0
        self.unschedulable[row] = False
        self.taint_set[row] = 0
        self.has_host_ports[row] = False
        self.total_pods_with_affinity -= int(self.pods_with_affinity[row])
        self.total_pods_with_req_anti -= int(self.pods_with_req_anti[row])
        self.pods_with_affinity[row] = 0
        self.pods_with_req_anti[row] = 0
        self.terminating_pods[row] = 0
        self._free.append(row)
        self.node_version += 1
        self._touch(row)
        return pods

    def _touch(self, row: int) -> None:
        self.version += 1
        self.row_version[row] = self.version

    # ------------------------------------------------------------------------------------------
    # pods
    # ------------------------------------------------------------------------------------------
    def add_pod(self, node_name: str, pod: "Pod | PodInfo") -> PodInfo:
        """Account ``pod`` on ``node_name`` (requests, pod count, ports, affinity counters)."""
        row = self.row_of[node_name]
        pi = pod if isinstance(pod, PodInfo) else PodInfo(pod)
        self.pods[row].append(pi)
        self._account(row, pi, +1)
        return pi

    def remove_pod(self, node_name: str, pod: "Pod") -> PodInfo:
        """Remove the pod with ``pod.uid`` from ``node_name``; KeyError when it is not there."""
        row = self.row_of[node_name]
        lst = self.pods[row]
        for i, pi in enumerate(lst):
            if pi.pod.uid == pod.uid:
                lst[i] = lst[-1]
                lst.pop()
                self._account(row, pi, -1)
                return pi
        raise KeyError(f"pod {pod.namespace}/{pod.name} is not on node {node_name}")

    def _account(self, row: int, pi: PodInfo, sign: int) -> None:
        for name, amount in pi.requests.items():
            if amount:
                col = self.intern_resource(name)  # may widen (replace) self.requested
                self.requested[row, col] += sign * amount
        nz = pi.non_zero_requests
        self.nonzero_requested[row, 0] += sign * nz.get(CPU, 0)
        self.nonzero_requested[row, 1] += sign * nz.get(MEMORY, 0)
        self.pod_count[row] += sign
        ports = pi.pod.host_ports
        if ports:
            hp = self.ports[row]
            if hp is None:
                hp = self.ports[row] = HostPortInfo()
            for ip, proto, port in ports:
                (hp.add if sign > 0 else hp.remove)(ip, proto, port)
            self.has_host_ports[row] = len(hp) > 0
        self._count_signature(row, pi.pod, sign)
        if pi.has_affinity:
            self.pods_with_affinity[row] += sign
            self.total_pods_with_affinity += sign
            self._count_affinity_signature(row, pi.pod, sign)
        if pi.has_required_anti_affinity:
            self.pods_with_req_anti[row] += sign
            self.total_pods_with_req_anti += sign
        if pi.pod.deletion_timestamp is not None:
            self.terminating_pods[row] += sign
        self._touch(row)

    def _count_signature(self, row: int, pod: "Pod", sign: int) -> None:
        key = (pod.namespace, tuple(sorted(pod.labels.items())))
        k = self._signature_index.get(key)
        if k is None:
            k = self._signature_index[key] = len(self.pod_signatures)
            self.pod_signatures.append(key)
            self.signature_rows.append({})
        rows = self.signature_rows[k]
        c = rows.get(row, 0) + sign
        if c:
            rows[row] = c
        else:
            rows.pop(row, None)

    def _count_affinity_signature(self, row: int, pod: "Pod", sign: int) -> None:
        affinity = pod.affinity
        key = (pod.namespace, affinity.pod_affinity, affinity.pod_anti_affinity)
        k = self._affinity_signature_index.get(key)
        if k is None:
            k = self._affinity_signature_index[key] = len(self.affinity_signatures)
            self.affinity_signatures.append(key)
            self.affinity_signature_rows.append({})
        rows = self.affinity_signature_rows[k]
        c = rows.get(row, 0) + sign
        if c:
            rows[row] = c
        else:
            rows.pop(row, None)

    # ------------------------------------------------------------------------------------------
    # helpers for plugins
    # ------------------------------------------------------------------------------------------
    def count_matching_pods(self, matches) -> np.ndarray:
        """(C,) int64: per row, the pods whose signature satisfies ``matches(namespace, labels)``.

        ``labels`` is a dict. ``matches`` is called once per distinct signature, not per pod.
        Terminating pods are counted like the others; callers that exclude them (PodTopologySpread)
        subtract them by walking the pods of the rows where ``terminating_pods`` is non-zero.
        """
        counts = np.zeros(self.capacity, dtype=np.int64)
        for (ns, items), rows in zip(self.pod_signatures, self.signature_rows):
            if rows and matches(ns, dict(items)):
                idx = np.fromiter(rows.keys(), dtype=np.int64, count=len(rows))
                val = np.fromiter(rows.values(), dtype=np.int64, count=len(rows))
                np.add.at(counts, idx, val)
        return counts

    def image_num_nodes(self, image: str) -> int:
        rows = self.image_rows.get(image)
        return len(rows) if rows else 0

    def resource_column(self, name: str) -> int | None:
        return self.resource_index.get(name)


class _NoImages:
    images = ()


_NO_IMAGES = _NoImages()


def rows_array(rows: Iterable[int]) -> np.ndarray:
    return np.fromiter(rows, dtype=np.int64)
