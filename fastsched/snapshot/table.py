"""The columnar node table: the cluster as NumPy columns, one row per node.

Rows are stable: a removed node's row is freed and reused by a later node, so a row index held by a
plugin stays valid for the cycle. Every update touches only the rows it changes (amortized O(1)
growth when capacity or the resource set grows). :meth:`NodeTable.add_nodes` and
:meth:`NodeTable.add_pods` add many objects at once with the same result as one call per object.

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
``row_version``             (C,)            int64     ``version`` when the row last changed
``node_template``           (C,)            int32     the row's node template (-1: the Node object is kept)
``row_first``, ``row_last`` (C,)            int32     first / last pod record of the row's pod list, -1 none
==========================  ==============  ========  ==========================================================

Pods are also indexed by *label signature* and, with pod (anti-)affinity, by *affinity
signature*; per-row counts of the pods a predicate selects are kept up to date as *count
subscriptions* (:class:`CountSubscription`): :mod:`fastsched.snapshot.signatures`.

Resources are interned in ``resource_index`` (``cpu`` = 0, ``memory`` = 1, ``ephemeral-storage`` = 2,
then extended/scalar resources in order of first appearance). ``alloc`` and ``requested`` stay dense
(every reader indexes them by column); beside them ``extended_rows[col]`` is ``{row: allocatable}``
for the rows whose allocatable of extended column ``col`` (>= 3) is nonzero, so that a resource on
few nodes is found on them without reading its (C,) column: NodeResourcesFit's compiled Filter
rules out the other rows at once (``Fit.column_filter_rows``). ``negative_requests`` is True once
a pod with a negative request was accounted (only unvalidated test objects have them): then
``requested`` may be negative and that rule does not hold. Labels are dictionary-encoded per key:
``label_values[key][code]`` is the value string. Images: ``image_rows[name]`` maps row -> size for
each node listing the image.

**Pod records.** Each pod on the table has a record (``P`` = record capacity, ``S`` = number of
distinct request vectors, ``E`` = their nonzero requests in all):

==========================  ==============  ========  ==========================================================
``pod_row``                 (P,)            int32     the pod's row; -1 for a free record
``pod_next``, ``pod_prev``  (P,)            int32     the row's pod list, doubly linked (-1 at the ends)
``pod_shape``               (P,)            int32     the pod's request shape (``shape_offsets`` / ``shape_nonzero``)
``pod_flags``               (P,)            uint8     ``FLAG_AFFINITY`` | ``FLAG_REQUIRED_ANTI`` | ``FLAG_TERMINATING``
                                                      | ``FLAG_HOST_PORTS`` | ``FLAG_UID_STRING``
``pod_signature``           (P,)            int32     index into ``pod_signatures``
``pod_affinity_signature``  (P,)            int32     index into ``affinity_signatures``; -1 without affinity terms
``pod_template``            (P,)            int32     the pod's template (-1: its PodInfo is kept)
``pod_uid_hi``, ``_lo``     (P,)            uint64    the uid, a canonical UUID, as two words (see ``pod_uid``)
``shape_offsets``           (S + 1,)        int64     shape ``s``'s requests are entries ``shape_offsets[s]`` to
                                                      ``shape_offsets[s + 1]`` (exclusive) of the next two
``shape_cols``              (E,)            int64     an entry's resource column
``shape_amounts``           (E,)            int64     an entry's amount: effective request with overhead (> 0)
``shape_nonzero``           (S, 2)          int64     cpu, memory with the non-zero defaults
==========================  ==============  ========  ==========================================================

Request shapes are sparse (``shape_vector(s)`` is one as an (R,) vector): a pod requests a few of the
table's resources, and ``R`` may be in the thousands (upstream's SchedulingWithExtendedResource gives
each node its own extended resource), where an (S, R) matrix cost O(S * R) memory and copying on
each growth. The arrays have spare capacity (grown geometrically); only the first ``S + 1`` offsets
and the first ``shape_offsets[S]`` entries are meaningful.

``pod_names`` is a list indexed by record; a uid that is not a canonical UUID (``FLAG_UID_STRING``)
is kept as a string. Row accounting is compiled (``fastsched/_kernels/_table.pyx``): adding or
removing a pod adds or takes its shape's entries and the pod's flags to or from its row's sums in
one call.

**Forks: columns copy-on-write.** A fork of the table (``Scheduler.fork()``) shares its NumPy
columns and per-node containers, read-only in both tables, and each side copies one when it first
writes it: :mod:`fastsched.snapshot.cow`.

**Lazy objects.** The Python objects (a row's Node, its PodInfos, its HostPortInfo) are built on
demand, from a template shared by the objects added in bulk that differ only in name and uid:
:mod:`fastsched.snapshot.lazy`.
"""
from __future__ import annotations

import collections.abc
import itertools
from typing import TYPE_CHECKING, Any, Callable, Iterable, Sequence, cast

import numpy as np

from .._kernels import _table
from ..framework.types import (
    CPU,
    EPHEMERAL_STORAGE,
    MEMORY,
    PODS,
    HostPortInfo,
    PodInfo,
)
from .cow import (LABEL_PREFIX, RECORD_COLUMNS, ROW_COLUMNS, ROW_OF, SHAPE_COLUMNS, VALUES_PREFIX, CopyOnWriteColumns,
                  _Index, _Values)
from .lazy import (_NODE_OWN_FIELDS, _POD_OWN_FIELDS, LazyObjects, RowNodes, RowPods, RowPorts, _derived_key,
                   _labels_alone_differ, _NodeTemplate, _PodDerived, _PodTemplate, _template_getter, pooled_ints,
                   release_template)
from .signatures import CountSubscription, SignatureCounts

if TYPE_CHECKING:  # pragma: no cover
    from ..api import Node, Pod

#: The resources every table has, in column order.
BASE_RESOURCES = (CPU, MEMORY, EPHEMERAL_STORAGE)
_N_BASE = len(BASE_RESOURCES)
_INITIAL_CAPACITY = 64
_TABLE_UIDS = itertools.count()

#: ``pod_flags`` bits
FLAG_AFFINITY = _table.FLAG_AFFINITY
FLAG_REQUIRED_ANTI = _table.FLAG_REQUIRED_ANTI
FLAG_TERMINATING = _table.FLAG_TERMINATING
FLAG_HOST_PORTS = _table.FLAG_HOST_PORTS
FLAG_UID_STRING = _table.FLAG_UID_STRING


class NodeTable(SignatureCounts, LazyObjects, CopyOnWriteColumns):
    """The columnar store of nodes and the pods assigned to them (see the module docstring)."""

    def _forked_identity(self) -> None:
        """A fork's table (CopyOnWriteColumns.__fork__) gets its own uid, so that per-table caches
        (keyed on ``uid``) never take one table for the other, and its own compiled bookkeeping."""
        self.uid = next(_TABLE_UIDS)
        self._new_change_log()
        self._acc = _table.Accounts(self)

    def _new_change_log(self) -> None:
        """A changed-rows log of this table's own (``_kernels/_table.pyx``'s module docstring): a
        reader holding another log's position (another table's, a fork's origin's) starts afresh."""
        #: the rows whose ``row_version`` was written, a ring of ``CHANGE_LOG_SIZE`` entries ...
        self._change_rows = np.zeros(_table.CHANGE_LOG_SIZE, dtype=np.int64)
        #: ... and the count of entries ever appended (its identity is the log's)
        self._change_pos = np.zeros(1, dtype=np.int64)

    def _log_rows(self, rows: np.ndarray) -> None:
        """Append ``rows`` to the changed-rows log (their ``row_version`` was just written)."""
        n = len(rows)
        pos = int(self._change_pos[0])
        size = len(self._change_rows)
        kept = rows[-size:]  # (more than the log holds: a reader that far behind refreshes everything)
        self._change_rows[(pos + n - len(kept) + np.arange(len(kept))) & (size - 1)] = kept
        self._change_pos[0] = pos + n

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
        self.node_template = np.full(cap, -1, dtype=np.int32)
        self.row_first = np.full(cap, -1, dtype=np.int32)
        self.row_last = np.full(cap, -1, dtype=np.int32)
        self.label_codes: dict[str, np.ndarray] = {}
        self.label_values: dict[str, _Values] = {}             # key -> [value by code]
        self._label_value_code: dict[str, _Index] = {}          # key -> value -> code
        self.taint_sets: list[tuple] = [()]
        self._taint_set_index: dict[tuple, int] = {(): 0}
        self.image_rows: dict[str, dict[int, int]] = {}
        #: extended column -> {row: allocatable}, rows with a nonzero allocatable (module docstring)
        self.extended_rows: dict[int, dict[int, int]] = {}
        #: a pod with a negative request was accounted (module docstring)
        self.negative_requests = False
        self.pod_signatures: list[tuple[str, tuple[tuple[str, str], ...]]] = []
        self.signature_rows: list[dict[int, int]] = []
        self._signature_index: dict[tuple, int] = {}
        self.affinity_signatures: list[tuple] = []
        self.affinity_signature_rows: list[dict[int, int]] = []
        self._affinity_signature_index: dict[tuple, int] = {}
        # count subscriptions (see CountSubscription): key -> subscription, least recently used first
        self._subs: dict[Any, CountSubscription] = {}
        self._sig_subs: dict[int, list[CountSubscription]] = {}    # label signature -> subscriptions
        self._asig_subs: dict[int, list[CountSubscription]] = {}   # affinity signature -> subscriptions

        #: (C,) object: node name per row ("" for free rows), for fast name gathers
        self.node_names = np.full(cap, "", dtype=object)
        #: the Node per row (lazy: see the module docstring)
        self.nodes = RowNodes(self)
        #: the PodInfo list per row (lazy)
        self.pods = RowPods(self)
        #: the HostPortInfo per row, None when no pod on the row uses a host port
        self.ports = RowPorts(self)
        self._ports: dict[int, HostPortInfo] = {}
        self.row_of: _Index = _Index()             # node name -> row
        self._node_objs: dict[int, "Node"] = {}    # kept or rebuilt Node per row
        # the uid of a templated row's node: a canonical UUID as two uint64, else a string
        self._node_uid_hi = np.zeros(cap, dtype=np.uint64)
        self._node_uid_lo = np.zeros(cap, dtype=np.uint64)
        self._node_uid_str: dict[int, str] = {}
        self._node_templates: list[_NodeTemplate | None] = []
        self._node_template_index: dict[tuple, int] = {}
        self._free_node_templates: list[int] = []
        self._row_lists: dict[int, list[PodInfo]] = {}        # built PodInfo lists (see RowPods)
        # free rows: rows below _next_row freed by remove_node (reused last-freed first), then
        # _next_row, _next_row + 1, ...: the order a free list [C-1, ..., 0] popped from its end gives
        self._freed_rows: list[int] = []
        self._next_row = 0
        #: bumped on every change; views and caches compare it
        self.version = 0
        #: per-row version, bumped when the row changes (lets a cache refresh only changed rows)
        self.row_version = np.zeros(cap, dtype=np.int64)
        #: bumped when a node is added, updated or removed (not when pods move): what depends only
        #: on the nodes (label masks, taint and image columns) stays valid while it is unchanged
        self.node_version = 0
        #: bumped when a node is removed (its row freed, to be reused by the next node added): a
        #: scheduling cycle checks it to know its chosen row still holds the node it filtered
        self.nodes_removed = 0
        #: table-wide sums of ``pods_with_affinity`` / ``pods_with_req_anti``: O(1) Skip decisions
        self.total_pods_with_affinity = 0
        self.total_pods_with_req_anti = 0
        #: the sum of ``terminating_pods``: PodTopologySpread's per-cycle "no pod terminates" check
        #: in O(1) (a count_nonzero over the (C,) column was ~3% of a PreferredTopologySpreading pod)
        self.total_terminating_pods = 0

        # pod records (see the module docstring)
        pcap = 64
        self.pod_capacity = pcap
        self.pod_row = np.full(pcap, -1, dtype=np.int32)
        self.pod_next = np.full(pcap, -1, dtype=np.int32)
        self.pod_prev = np.full(pcap, -1, dtype=np.int32)
        self.pod_shape = np.zeros(pcap, dtype=np.int32)
        self.pod_flags = np.zeros(pcap, dtype=np.uint8)
        self.pod_signature = np.zeros(pcap, dtype=np.int32)
        self.pod_affinity_signature = np.full(pcap, -1, dtype=np.int32)
        self.pod_template = np.full(pcap, -1, dtype=np.int32)
        self.pod_names: list[str | None] = [None] * pcap
        self.pod_uid_hi = np.zeros(pcap, dtype=np.uint64)
        self.pod_uid_lo = np.zeros(pcap, dtype=np.uint64)
        self._pod_uid_str: dict[int, str] = {}              # uids that are not canonical UUIDs
        self._pod_infos: dict[int, PodInfo] = {}            # kept or rebuilt PodInfo per record
        self._freed_records: list[int] = []
        self._next_record = 0
        self.shape_offsets = np.zeros(9, dtype=np.int64)
        self.shape_cols = np.zeros(8, dtype=np.int64)
        self.shape_amounts = np.zeros(8, dtype=np.int64)
        self.shape_nonzero = np.zeros((8, 2), dtype=np.int64)
        self._shape_index: dict[tuple, int] = {}
        self._pod_templates: list[_PodTemplate | None] = []
        self._pod_template_index: dict[tuple, int] = {}
        self._free_pod_templates: list[int] = []
        self._derived: dict[tuple, _PodDerived] = {}
        self._last_derived: _PodDerived | None = None
        #: the columns shared with a fork (read-only until this table takes ownership: see _own)
        self._shared: set[str] = set()
        self._new_change_log()
        self._acc = _table.Accounts(self)

    # ------------------------------------------------------------------------------------------
    # capacity
    # ------------------------------------------------------------------------------------------
    def __len__(self) -> int:
        return len(self.row_of)

    # ------------------------------------------------------------------------------------------
    # growth (the copy-on-write methods are CopyOnWriteColumns', in .cow)
    # ------------------------------------------------------------------------------------------
    def _grow_rows(self, need: int) -> None:
        new_cap = self.capacity
        while new_cap < need:
            new_cap *= 2
        if new_cap == self.capacity:
            return
        old = self.capacity

        def grow(a: np.ndarray, fill=0) -> np.ndarray:
            out = np.empty((new_cap,) + a.shape[1:], dtype=a.dtype)
            out[:old] = a
            out[old:] = fill
            return out

        for name in ("live", "alloc", "requested", "nonzero_requested", "allowed_pods", "pod_count",
                     "unschedulable", "taint_set", "has_host_ports", "pods_with_affinity",
                     "pods_with_req_anti", "terminating_pods", "row_version"):
            setattr(self, name, grow(getattr(self, name)))
        for name in ("node_template", "row_first", "row_last"):
            setattr(self, name, grow(getattr(self, name), -1))
        self._node_uid_hi = grow(self._node_uid_hi)
        self._node_uid_lo = grow(self._node_uid_lo)
        for key, col in self.label_codes.items():
            self.label_codes[key] = grow(col, -1)
        self.node_names = grow(self.node_names, "")
        for sub in self._subs.values():
            sub.rows = grow(sub.rows)
        self.capacity = new_cap
        if self._shared:  # every row column is a new array of this table's own
            self._shared.difference_update(ROW_COLUMNS)
            self._shared.difference_update([LABEL_PREFIX + key for key in self.label_codes])
        self._acc.bind(self)

    def _grow_records(self, need: int) -> None:
        new_cap = self.pod_capacity
        while new_cap < need:
            new_cap *= 2
        if new_cap == self.pod_capacity:
            return
        old = self.pod_capacity

        def grow(a: np.ndarray, fill) -> np.ndarray:
            out = np.empty(new_cap, dtype=a.dtype)
            out[:old] = a
            out[old:] = fill
            return out

        for name, fill in (("pod_row", -1), ("pod_next", -1), ("pod_prev", -1), ("pod_shape", 0),
                           ("pod_flags", 0), ("pod_signature", 0), ("pod_affinity_signature", -1),
                           ("pod_template", -1), ("pod_uid_hi", 0), ("pod_uid_lo", 0)):
            setattr(self, name, grow(getattr(self, name), fill))
        self.pod_names.extend([None] * (new_cap - old))
        self.pod_capacity = new_cap
        if self._shared:  # every record column is a new array of this table's own
            self._shared.difference_update(RECORD_COLUMNS)
        self._acc.bind(self)

    def _take_rows(self, n: int) -> list[int]:
        """``n`` free rows in the order single adds would take them (the table grows as needed)."""
        rows, self._next_row = _take_slots(self._freed_rows, self._next_row, n, self._grow_rows)
        return rows

    def _take_records(self, n: int) -> list[int]:
        """``n`` free pod records, as :meth:`_take_rows` takes rows."""
        recs, self._next_record = _take_slots(self._freed_records, self._next_record, n, self._grow_records)
        return recs

    def intern_resource(self, name: str) -> int:
        """The column of resource ``name``, adding a column when it is new."""
        idx = self.resource_index.get(name)
        if idx is not None:
            return idx
        self.intern_resources((name,))
        return self.resource_index[name]

    def intern_resources(self, names: Iterable[str]) -> None:
        """Add a column for each new resource of ``names``, in order, widening the (C, R) matrices
        once: a cluster whose every node offers its own extended resource (upstream's
        SchedulingWithExtendedResource) would otherwise copy them once per node."""
        new = [name for name in dict.fromkeys(names) if name not in self.resource_index]
        if not new:
            return
        for name in new:
            self.resource_index[name] = len(self.resource_names)
            self.resource_names.append(name)
        pad = np.zeros((self.capacity, len(new)), dtype=np.int64)
        self.alloc = np.hstack([self.alloc, pad])
        self.requested = np.hstack([self.requested, pad])
        if self._shared:  # new arrays of this table's own
            self._shared.difference_update(("alloc", "requested"))
        self._acc.bind(self)

    # ------------------------------------------------------------------------------------------
    # labels, taints, images
    # ------------------------------------------------------------------------------------------
    def label_code(self, key: str, value: str, *, create: bool = False) -> int:
        """The code of ``value`` under ``key`` (-1 when the table has never seen it)."""
        codes = self._label_value_code.get(key)
        if codes is None:
            if not create:
                return -1
            codes = self._label_value_code[key] = _Index()
            self.label_values[key] = _Values()
            self.label_codes[key] = np.full(self.capacity, -1, dtype=np.int32)
        code = codes.get(value)
        if code is None:
            if not create:
                return -1
            if self._shared:
                self._own(VALUES_PREFIX + key)
                codes = self._label_value_code[key]
            known = self.label_values[key]
            n = len(known)
            code = codes[value] = pooled_ints(n + 1)[n]
            known.append(value)
        return code

    def label_column(self, key: str) -> np.ndarray | None:
        """The (C,) int32 code column of ``key``, or None when no node ever had the key."""
        return self.label_codes.get(key)

    def _set_labels(self, row: int, old: "Node | None", node: "Node") -> None:
        if self._shared:
            self._own_labels([*(old.labels if old is not None else ()), *node.labels])
        if old is not None:
            for key in old.labels:
                if key not in node.labels:
                    self.label_codes[key][row] = -1
        for key, value in node.labels.items():
            code = self.label_code(key, value, create=True)
            self.label_codes[key][row] = code

    def _row_labels(self, row: int, keys: Iterable[str]) -> dict[str, str]:
        """The label values of ``row`` under ``keys``, read back from the label columns."""
        return {key: self.label_values[key][self.label_codes[key][row]] for key in keys}

    def _taint_set_id(self, taints: tuple) -> int:
        tid = self._taint_set_index.get(taints)
        if tid is None:
            tid = self._taint_set_index[taints] = len(self.taint_sets)
            self.taint_sets.append(taints)
        return tid

    def _set_images(self, row: int, old: "Node | None", node: "Node | _NoImages") -> None:
        if old is not None:
            for img in old.images:
                for name in img.names:
                    rows = self.image_rows.get(name)
                    if rows is not None:
                        rows.pop(row, None)
                        if not rows:
                            del self.image_rows[name]
        key = pooled_ints(row + 1)[row]
        for img in node.images:
            for name in img.names:
                self.image_rows.setdefault(name, {})[key] = int(img.size_bytes)

    # ------------------------------------------------------------------------------------------
    # nodes
    # ------------------------------------------------------------------------------------------
    def add_node(self, node: "Node") -> int:
        """Add ``node`` (or update it when a node of that name exists); returns its row."""
        row = self.row_of.get(node.name)
        if row is not None:
            self.update_node(node)
            return row
        row = self._take_rows(1)[0]
        self._claim_row(row, node.name)
        self._write_node(row, None, node)
        return row

    def _claim_row(self, row: int, name: str) -> None:
        if self._shared:
            self._own(ROW_OF, "node_names", "live", "requested", "nonzero_requested", "pod_count", "has_host_ports",
                      "pods_with_affinity", "pods_with_req_anti", "terminating_pods")
        self.row_of[name] = pooled_ints(row + 1)[row]
        self.node_names[row] = name
        self.live[row] = True
        self._ports.pop(row, None)
        self.requested[row] = 0
        self.nonzero_requested[row] = 0
        self.pod_count[row] = 0
        self.has_host_ports[row] = False
        self.pods_with_affinity[row] = 0
        self.pods_with_req_anti[row] = 0
        self.terminating_pods[row] = 0

    def update_node(self, node: "Node") -> int:
        """Replace the Node object of an existing row, keeping its pods; returns the row."""
        row = self.row_of[node.name]
        self._write_node(row, self.nodes[row], node)
        return row

    def _write_node(self, row: int, old: "Node | None", node: "Node") -> None:
        if self._shared:
            self._own("alloc", "allowed_pods", "unschedulable", "taint_set", "node_template", "row_version")
        self._node_objs[row] = node
        self._node_uid_str.pop(row, None)
        self._leave_node_template(row)
        self._unindex_extended(row)
        self.alloc[row] = 0
        for name, amount in node.allocatable.items():
            if name == PODS:
                continue
            col = self.intern_resource(name)  # may widen (replace) self.alloc
            self.alloc[row, col] = amount
            if amount and col >= _N_BASE:
                self._index_extended(col, (row,), amount)
        self.allowed_pods[row] = node.allocatable.get(PODS, 0)
        self.unschedulable[row] = bool(node.unschedulable)
        self.taint_set[row] = self._taint_set_id(tuple(node.taints))
        self._set_labels(row, old, node)
        self._set_images(row, old, node)
        self.node_version += 1
        self._touch(row)

    def _index_extended(self, col: int, rows: Iterable[int], amount: int) -> None:
        """Note ``amount`` (nonzero) as the allocatable of extended column ``col`` on ``rows``."""
        ints = pooled_ints(self.capacity)
        self.extended_rows.setdefault(col, {}).update(dict.fromkeys([ints[r] for r in rows], int(amount)))

    def _unindex_extended(self, row: int) -> None:
        """Take ``row`` out of ``extended_rows`` (before its allocatable is rewritten or cleared)."""
        for col in (np.flatnonzero(self.alloc[row, _N_BASE:]) + _N_BASE).tolist():
            rows = self.extended_rows.get(col)
            if rows is not None:
                rows.pop(row, None)
                if not rows:
                    del self.extended_rows[col]

    def reserve_rows(self, n: int) -> None:
        """Make room for ``n`` nodes in all (one reallocation instead of several)."""
        self._grow_rows(n)

    def reserve_records(self, n: int) -> None:
        """Make room for ``n`` pods in all."""
        self._grow_records(n)

    def pod_count_total(self) -> int:
        """The number of pods on the table (records in use)."""
        return self._next_record - len(self._freed_records)

    def add_nodes(self, nodes: Iterable["Node"], *, new: bool = False) -> np.ndarray:
        """Add many nodes; the same table as :meth:`add_node` for each, in order. Returns their
        rows, (N,) int64. ``new``: the caller checked that the names are distinct and not in the
        table.

        Nodes without a manifest that share everything but name, uid and label values are stored
        as one template (see the module docstring)."""
        nodes = list(nodes)
        n = len(nodes)
        if n == 0:
            return np.zeros(0, dtype=np.int64)
        names = [node.name for node in nodes]
        row_of = self.row_of
        if not new and (not row_of.keys().isdisjoint(names) or len(set(names)) != n):
            # updates of nodes already there (or added earlier in the batch): one at a time
            return np.array([self.add_node(node) for node in nodes], dtype=np.int64)
        rows_list = self._take_rows(n)
        rows = np.array(rows_list, dtype=np.int64)
        ints = pooled_ints(self.capacity)
        if self._shared:
            self._own(ROW_OF)
            row_of = self.row_of
        row_of.update(zip(names, [ints[row] for row in rows_list]))
        # runs of consecutive nodes of one template (a kept node is a run of its own), in order
        run_starts: list[int] = []
        run_templates: list[int] = []
        run_keys: list[tuple] = []
        last_values: tuple | None = None
        last_keys: tuple = ()
        last_cls = None
        getter: Callable[[Any], tuple]  # set with last_cls at the first templated node
        kept: list[tuple[int, list, int]] = []   # nodes kept as objects: (position, alloc, taint set)
        label_values: list[tuple] = []           # per node, its label values (in its label order)
        images = False
        self.intern_resources(self._new_resources(nodes))
        if self._shared:
            self._own("_node_uid_hi", "_node_uid_lo", "node_names", "live", "requested", "nonzero_requested",
                      "pod_count", "has_host_ports", "pods_with_affinity", "pods_with_req_anti", "terminating_pods",
                      "node_template", "alloc", "allowed_pods", "unschedulable", "taint_set", "row_version")
        for i, node in enumerate(nodes):
            label_values.append(tuple(node.labels.values()))
            if node.manifest:
                # interned now, in node order, as single adds would intern them
                kept.append((i, [(self.intern_resource(name), amount) for name, amount in node.allocatable.items()
                                 if name != PODS], self._taint_set_id(tuple(node.taints))))
                run_starts.append(i)
                run_templates.append(-1)
                run_keys.append(tuple(node.labels))
                last_values = None  # the next templated node starts a run
            else:
                cls = type(node)
                if cls is not last_cls:
                    last_values, last_cls, getter = None, cls, _template_getter(cls, _NODE_OWN_FIELDS)
                values = getter(node)
                keys = tuple(node.labels)
                # equal (in practice: the same objects) as the previous node's: the same template
                if values != last_values or keys != last_keys:
                    t = self._node_template_of(node, values, keys)
                    tmpl = self._node_templates[t]
                    assert tmpl is not None  # just made or found
                    last_values, last_keys = tmpl.values, tmpl.label_keys
                    run_starts.append(i)
                    run_templates.append(t)
                    run_keys.append(last_keys)
            if node.images:
                images = True
        run_lengths = np.diff(np.append(run_starts, n)).tolist()
        templates = np.repeat(np.asarray(run_templates, dtype=np.int32), run_lengths)
        for i, _, _ in kept:
            self._node_objs[rows_list[i]] = nodes[i]
        self._set_uids(self._node_uid_hi, self._node_uid_lo, self._node_uid_str, rows_list,
                       [node.uid for node in nodes], None)
        self.node_names[rows] = names
        self.live[rows] = True
        for name in ("requested", "nonzero_requested", "pod_count", "has_host_ports", "pods_with_affinity",
                     "pods_with_req_anti", "terminating_pods"):
            getattr(self, name)[rows] = 0
        for row in rows_list:
            self._ports.pop(row, None)
        self.node_template[rows] = templates
        # node-side columns: per template from its prototype, per kept node from the node
        for t in np.unique(templates[templates >= 0]).tolist():
            tmpl = self._node_templates[t]
            sel = rows[templates == t]
            tmpl.refs += len(sel)
            self.alloc[sel] = 0
            for col, amount in tmpl.alloc:
                self.alloc[sel, col] = amount
                if amount and col >= _N_BASE:
                    self._index_extended(col, sel.tolist(), amount)
            self.allowed_pods[sel] = tmpl.allowed_pods
            self.unschedulable[sel] = bool(tmpl.prototype.unschedulable)
            self.taint_set[sel] = tmpl.taint_set
        for i, alloc, taint_set in kept:
            node, row = nodes[i], rows_list[i]
            self.alloc[row] = 0
            for col, amount in alloc:
                self.alloc[row, col] = amount
                if amount and col >= _N_BASE:
                    self._index_extended(col, (row,), amount)
            self.allowed_pods[row] = node.allocatable.get(PODS, 0)
            self.unschedulable[row] = bool(node.unschedulable)
            self.taint_set[row] = taint_set
        # labels, one key at a time (keys in order of first appearance), its values in node order
        parts: dict[str, list[tuple[int, int, int]]] = {}   # key -> [(run start, run length, index)]
        for start, length, keys in zip(run_starts, run_lengths, run_keys):
            for j, key in enumerate(keys):
                parts.setdefault(key, []).append((start, length, j))
        columns_of_run: dict[int, list[tuple]] = {}          # run start -> its label values by key
        for key, spans in parts.items():
            pieces = []
            for start, length, j in spans:
                cols = columns_of_run.get(start)
                if cols is None:  # transposed once per run, in C
                    cols = columns_of_run[start] = list(zip(*label_values[start:start + length]))
                pieces.append((start, length, cols[j]))
            if len(pieces) == 1:
                start, length, run_values = pieces[0]
                positions = rows[start:start + length]
                key_values = list(run_values)
            else:
                pos = np.concatenate([np.arange(start, start + length) for start, length, _ in pieces])
                vals = [v for _, _, values in pieces for v in values]
                order = np.argsort(pos, kind="stable")
                positions = rows[pos[order]]
                key_values = [vals[k] for k in order.tolist()]
            column = self._owned_label_column(key)  # (first: the right-hand side is evaluated first)
            column[positions] = self._encode_labels(key, key_values)
        if images:
            for row, node in zip(rows_list, nodes):
                self._set_images(row, None, node)
        self.node_version += n
        self.row_version[rows] = np.arange(self.version + 1, self.version + n + 1, dtype=np.int64)
        self._log_rows(rows)
        self.version += n
        return rows

    def label_codes_for(self, key: str) -> np.ndarray:
        """The (C,) code column of ``key``, created (all -1) when the key is new."""
        col = self.label_codes.get(key)
        if col is None:
            self._label_value_code[key] = _Index()
            self.label_values[key] = _Values()
            col = self.label_codes[key] = np.full(self.capacity, -1, dtype=np.int32)
        return col

    def _encode_labels(self, key: str, values: list[str]) -> list[int]:
        """The codes of ``values`` under ``key``, new values coded in order of first appearance
        (as label_code(..., create=True) one value at a time would)."""
        codes = self._label_value_code[key]
        distinct = dict.fromkeys(values)
        new = [v for v in distinct if v not in codes] if codes else list(distinct)
        if new:
            if self._shared:
                self._own(VALUES_PREFIX + key)
                codes = self._label_value_code[key]
            known = self.label_values[key]
            start = len(known)
            fresh = pooled_ints(start + len(new))[start:start + len(new)]
            codes.update(zip(new, fresh))
            known.extend(new)
            if len(new) == len(values):  # every value new and distinct (hostnames): codes in order
                return fresh
        return list(map(codes.__getitem__, values))

    def _new_resources(self, nodes: list["Node"]) -> dict[str, None]:
        """The resources of ``nodes`` without a column yet, in the order single adds would
        intern them (node by node, each in its allocatable order)."""
        known = self.resource_index
        new: dict[str, None] = {}
        last = None
        for node in nodes:
            allocatable = node.allocatable
            if allocatable is last:  # templated nodes share one mapping
                continue
            last = allocatable
            for name in allocatable:
                if name not in known and name != PODS:
                    new[name] = None
        return new

    def remove_node(self, name: str) -> list[PodInfo]:
        """Free the node's row; returns the pods that were on it."""
        row = self.row_of[name]
        node = self._node_objs.get(row)
        if node is None:  # a templated row: its labels are in the columns, its images the template's
            tmpl = self._node_templates[self.node_template[row]]
            label_keys, images = tmpl.label_keys, tmpl.prototype
        else:
            label_keys, images = node.labels, node
        pods = list(self.pods[row])
        if self._shared:
            self._own_accounts()
            self._own_labels(label_keys)
            self._own(ROW_OF, "live", "node_names", "alloc", "allowed_pods", "unschedulable", "taint_set",
                      "has_host_ports", "node_template")
        del self.row_of[name]
        for rec in self._acc.records(row):  # the freed row must not keep counting these pods
            self._count_signature(row, int(self.pod_signature[rec]), -1)
            asig = int(self.pod_affinity_signature[rec])
            if asig >= 0:
                self._count_affinity_signature(row, asig, -1)
            self._free_record(rec)
        self._row_lists.pop(row, None)
        self.row_first[row] = -1
        self.row_last[row] = -1
        self._set_images(row, images, _NO_IMAGES)
        for key in label_keys:
            self.label_codes[key][row] = -1
        self.live[row] = False
        self._node_objs.pop(row, None)
        self._node_uid_str.pop(row, None)
        self._leave_node_template(row)
        self.node_names[row] = ""
        self._ports.pop(row, None)
        self._unindex_extended(row)
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
        self.total_terminating_pods -= int(self.terminating_pods[row])
        self.pods_with_affinity[row] = 0
        self.pods_with_req_anti[row] = 0
        self.terminating_pods[row] = 0
        self._freed_rows.append(row)
        self.node_version += 1
        self.nodes_removed += 1
        self._touch(row)
        return pods

    def _touch(self, row: int) -> None:
        if self._shared:
            self._own("row_version")
        self.version += 1
        self.row_version[row] = self.version
        self._log_rows(np.array((row,), dtype=np.int64))

    # ------------------------------------------------------------------------------------------
    # pods
    # ------------------------------------------------------------------------------------------
    def add_pod(self, node_name: str, pod: "Pod | PodInfo") -> PodInfo:
        """Account ``pod`` on ``node_name`` (requests, pod count, ports, affinity counters).
        ``_kernels/_bind.pyx`` (the compiled binding path's commit) does the same with this method's
        and :meth:`_after_add`'s steps inlined: a change here is a change there."""
        row = self.row_of[node_name]
        pi = pod if isinstance(pod, PodInfo) else PodInfo(pod)
        p = pi.pod
        d = self._derive(p)
        if self._shared:
            self._own_accounts()
        if self._freed_records:
            rec = self._freed_records.pop()
        else:
            rec = self._next_record
            self._next_record = rec + 1
            if rec >= self.pod_capacity:
                self._grow_records(rec + 1)
        flags = d.flags | (FLAG_TERMINATING if p.deletion_timestamp is not None else 0)
        self.pod_names[rec] = p.name
        self._pod_infos[rec] = pi
        self.version += 1
        # the record's columns, its place last on the row and the row's sums, in one call
        if not self._acc.add_pod(row, rec, p.uid, d.shape, flags, d.signature, d.affinity_signature, self.version):
            self._pod_uid_str[rec] = p.uid  # not a canonical UUID (flagged FLAG_UID_STRING)
        self._after_add(row, rec, d, flags)
        lst = self._row_lists.get(row)
        if lst is not None:
            lst.append(pi)
        return pi

    def _after_add(self, row: int, rec: int, d: _PodDerived, flags: int) -> None:
        """The Python-side indexes of an added pod (signatures, host ports, table-wide sums)."""
        self._count_signature(row, d.signature, 1)
        if flags & FLAG_AFFINITY:
            self.total_pods_with_affinity += 1
            self._count_affinity_signature(row, d.affinity_signature, 1)
        if flags & FLAG_REQUIRED_ANTI:
            self.total_pods_with_req_anti += 1
        if flags & FLAG_TERMINATING:
            self.total_terminating_pods += 1
        if flags & FLAG_HOST_PORTS:
            self._count_ports(row, d.host_ports, 1)

    def run_derived(self, pods: Sequence["Pod"]) -> tuple[_PodDerived | None, int]:
        """The accounting data the last :meth:`add_pod` derived and how many of ``pods``, from the
        first, derive the same (not being deleted, whose flag it does not hold): what a run of
        them (:meth:`add_run`) accounts each with. Nothing is derived or cached here (the caches
        stay as single adds leave them)."""
        d = self._last_derived
        if d is None:
            return None, 0
        keep = d.keep
        m = 0
        for pod in pods:
            if pod.deletion_timestamp is not None or _derived_key(pod) != keep:
                break
            m += 1
        return d, m

    def take_run_records(self, m: int) -> tuple[np.ndarray, int]:
        """The records ``m`` :meth:`add_pod` calls in a row would take, in that order (the most
        recently freed first, then new ones), for a run of pods placed and accounted in one kernel
        call (``FusedPlan.place_run``, docs/dev/gang-runs.md section 4); no more than the record
        columns hold without growing (:meth:`add_pod` would grow them at the first pod past them:
        that pod is left to it, so the columns grow exactly when single adds grow them). Returns
        ``(records, how many came from the freed stack)``; :meth:`add_run` takes up the first ones
        and gives the others back. The table owns its accounting columns after this call (a
        fork's shared columns are copied, as :meth:`add_pod` copies them)."""
        if self._shared:
            self._own_accounts()
        freed = self._freed_records
        m = max(0, min(m, len(freed) + self.pod_capacity - self._next_record))
        k = min(m, len(freed))
        recs = freed[len(freed) - k:][::-1]
        del freed[len(freed) - k:]
        recs.extend(range(self._next_record, self._next_record + m - k))
        self._next_record += m - k
        return np.array(recs, dtype=np.int64), k

    def add_run(self, rows: Sequence[int], recs: np.ndarray, from_freed: int, infos: Sequence[PodInfo],
                d: _PodDerived, flags: int, canonical: np.ndarray) -> None:
        """The Python side of :meth:`add_pod` for the first ``len(infos)`` pods of a run whose
        records (:meth:`take_run_records`) the kernel filled, linked and accounted (``_table.Accounts``,
        versions ``version + 1 + i``): names, PodInfos, non-canonical uids, :meth:`_after_add`'s
        indexes, the built row lists, the version; the records not used go back where they came
        from (the freed stack as it was, ``_next_record`` rewound), so the table is the one
        ``len(infos)`` :meth:`add_pod` calls leave. ``d`` / ``flags``: the pods' common
        :meth:`_derive` and flags (the caller checked every pod derives ``d``)."""
        names, pod_infos, row_lists = self.pod_names, self._pod_infos, self._row_lists
        used = len(infos)
        for i in range(used):
            pi = infos[i]
            rec = int(recs[i])
            row = int(rows[i])
            names[rec] = pi.pod.name
            pod_infos[rec] = pi
            if not canonical[i]:
                self._pod_uid_str[rec] = pi.pod.uid
            self._after_add(row, rec, d, flags)
            if row_lists:
                lst = row_lists.get(row)
                if lst is not None:
                    lst.append(pi)
        self.version += used
        # the unused records back, newest first: the new ones rewind _next_record, the freed ones
        # return to the stack in the order they left it
        n = len(recs)
        if n > used:
            self._next_record -= n - max(used, from_freed)
            freed = self._freed_records
            for i in range(from_freed - 1, used - 1, -1):
                freed.append(int(recs[i]))

    def add_pods(self, pods: Sequence["Pod | PodInfo"], node_names: Sequence[str] | None = None, *,
                 uid_words: tuple | None = None) -> np.ndarray:
        """Account many pods (on ``node_names``, default each pod's ``spec.nodeName``); the same
        table as :meth:`add_pod` for each, in order. Returns their records, (P,) int64.
        ``uid_words``: the pods' uids already parsed (:func:`uid_words`).

        Pods without a manifest that share everything but name and uid, with ``spec.nodeName``
        their node, are stored as records of one template (see the module docstring); KeyError
        (and nothing added) when a node is not in the table."""
        n = len(pods)
        infos_given = any(issubclass(t, PodInfo) for t in set(map(type, pods)))
        # (without PodInfos, every item is a Pod)
        plain = [p.pod if isinstance(p, PodInfo) else p for p in pods] if infos_given else cast("Sequence[Pod]", pods)
        if node_names is None:
            node_names = [p.node_name for p in plain]
        rows = np.array(list(map(self.row_of.__getitem__, node_names)), dtype=np.int64)
        if n == 0:
            return rows
        recs_list = self._take_records(n)
        recs = np.array(recs_list, dtype=np.int64)
        names, infos = self.pod_names, self._pod_infos
        tmpl_list = self._pod_templates
        last_values: tuple | None = None
        last_t, last_cls = -1, None
        getter: Callable[[Any], tuple]  # set with last_cls at the first templated pod
        tl: list[int] = []                                     # template per pod, -1 when kept
        kept: list[tuple[int, _PodDerived, int]] = []          # (position, derived, flags)
        for i, pod in enumerate(plain):
            if not pod.manifest and pod.node_name == node_names[i] and not (
                    infos_given and isinstance(pods[i], PodInfo)):
                cls = type(pod)
                if cls is not last_cls:
                    last_values, last_cls, getter = None, cls, _template_getter(cls, _POD_OWN_FIELDS)
                values = getter(pod)
                # equal (in practice: the same objects) as the previous pod's: the same template
                if values != last_values:
                    last_t = self._pod_template_of(pod, values)
                    tmpl = tmpl_list[last_t]
                    assert tmpl is not None  # just made or found
                    last_values = tmpl.values
                tl.append(last_t)
            else:
                d = self._derive(pod)
                kept.append((i, d, d.flags | (FLAG_TERMINATING if pod.deletion_timestamp is not None else 0)))
                given = pods[i]
                infos[recs_list[i]] = given if isinstance(given, PodInfo) else PodInfo(pod)
                tl.append(-1)
        lo = recs_list[0]
        if recs_list[-1] == lo + n - 1 and recs_list == list(range(lo, lo + n)):  # fresh records
            names[lo:lo + n] = [p.name for p in plain]
        else:
            for rec, p in zip(recs_list, plain):
                names[rec] = p.name
        templates = np.array(tl, dtype=np.int32)
        # per template: its accounting data, gathered for its pods; kept pods: their own
        used = templates >= 0
        n_t = max(len(tmpl_list), 1)
        t_shape = np.zeros(n_t, dtype=np.int32)
        t_flags = np.zeros(n_t, dtype=np.uint8)
        t_sig = np.zeros(n_t, dtype=np.int32)
        t_asig = np.full(n_t, -1, dtype=np.int32)
        if used.any():
            uses = np.bincount(templates[used], minlength=n_t)
            for t in np.flatnonzero(uses).tolist():
                tmpl = tmpl_list[t]
                assert tmpl is not None  # used by these pods
                tmpl.refs += int(uses[t])
                d = tmpl.derived
                t_shape[t], t_sig[t], t_asig[t] = d.shape, d.signature, d.affinity_signature
                t_flags[t] = d.flags | (FLAG_TERMINATING if tmpl.terminating else 0)
        safe = np.where(used, templates, 0)
        shapes, flags, sigs, asigs = t_shape[safe], t_flags[safe], t_sig[safe], t_asig[safe]
        for i, d, f in kept:
            shapes[i], flags[i], sigs[i], asigs[i] = d.shape, f, d.signature, d.affinity_signature
        ported = np.flatnonzero(flags & FLAG_HOST_PORTS).tolist()
        if self._shared:
            self._own_accounts()
        self.pod_flags[recs] = flags
        self._set_uids(self.pod_uid_hi, self.pod_uid_lo, self._pod_uid_str, recs_list, [p.uid for p in plain],
                       self.pod_flags, uid_words)
        self.pod_shape[recs] = shapes
        self.pod_signature[recs] = sigs
        self.pod_affinity_signature[recs] = asigs
        self.pod_template[recs] = templates
        self.version = self._acc.add_many(rows, recs, self.version)
        # the Python-side indexes, grouped: per signature, the pods per row
        self._count_signatures_many(self.signature_rows, sigs, rows)
        with_affinity = (flags & FLAG_AFFINITY) != 0
        if with_affinity.any():
            self.total_pods_with_affinity += int(with_affinity.sum())
            self._count_signatures_many(self.affinity_signature_rows, asigs[with_affinity], rows[with_affinity])
        self.total_pods_with_req_anti += int(np.count_nonzero(flags & FLAG_REQUIRED_ANTI))
        self.total_terminating_pods += int(np.count_nonzero(flags & FLAG_TERMINATING))
        for i in ported:
            self._count_ports(int(rows[i]), self._record_derived(recs_list[i]).host_ports, 1)
        if self._row_lists:
            for i, rec in enumerate(recs_list):
                lst = self._row_lists.get(int(rows[i]))
                if lst is not None:
                    lst.append(self.pod_info(rec))
        return recs

    def _derive(self, pod: "Pod") -> _PodDerived:
        """The accounting data of ``pod``'s spec (shape, signatures, flags, host ports), cached per
        spec: pods of one template share the field objects it depends on."""
        values = _derived_key(pod)
        d = self._last_derived
        if d is not None and values == d.keep:  # (in practice the same objects: fast)
            return d
        key = tuple(map(id, values))
        d = self._derived.get(key)
        if d is None:
            if len(self._derived) >= 4096:  # bounded: specs built one per pod pass by
                self._derived.clear()
            last = self._last_derived
            if last is not None and _labels_alone_differ(values, last.keep):
                # A StatefulSet's pods (a label of their own each): the labels enter only the
                # signature; the request shape, flags, affinity signature and ports are the last
                # spec's (a fifth of the derivation's cost on such pods, issue 29)
                d = _PodDerived(values, last.shape, self._signature_id(pod), last.affinity_signature, last.flags,
                                last.host_ports)
            else:
                d = self._compute_derived(pod, values)
            self._derived[key] = d
        self._last_derived = d
        return d

    def _compute_derived(self, pod: "Pod", values: tuple) -> _PodDerived:
        # (only ``signature`` depends on the labels: _derive's shortcut for pods differing from
        # the last one only in them relies on it; a new field read here from the labels breaks it)
        requests, nz = pod.requests, pod.non_zero_requests
        amounts = tuple((name, amount) for name, amount in requests.items() if amount)
        shape_key = (amounts, nz.get(CPU, 0), nz.get(MEMORY, 0))
        shape = self._shape_index.get(shape_key)
        if shape is None:
            cols = [(self.intern_resource(name), amount) for name, amount in amounts]
            shape = len(self._shape_index)
            self._append_shape(shape, cols, shape_key[1], shape_key[2])
            self._shape_index[shape_key] = shape
        flags = 0
        affinity_signature = -1
        a = pod.affinity
        if a is not None and (a.pod_affinity is not None or a.pod_anti_affinity is not None):
            flags |= FLAG_AFFINITY
            affinity_signature = self._affinity_signature_id(pod)
            if a.pod_anti_affinity is not None and a.pod_anti_affinity.required:
                flags |= FLAG_REQUIRED_ANTI
        ports = pod.host_ports
        if ports:
            flags |= FLAG_HOST_PORTS
        return _PodDerived(values, shape, self._signature_id(pod), affinity_signature, flags, ports)

    def _append_shape(self, shape: int, cols: list[tuple[int, int]], nonzero_cpu: int, nonzero_memory: int) -> None:
        """Write request shape ``shape`` (the next one): its (column, amount) entries and non-zero
        cpu / memory, growing the shape arrays geometrically (see the module docstring)."""
        if self._shared:
            self._own(*SHAPE_COLUMNS)
        start = int(self.shape_offsets[shape])
        end = start + len(cols)
        if any(amount < 0 for _, amount in cols):
            self.negative_requests = True
        rebind = False
        if shape >= len(self.shape_nonzero):
            cap = 2 * len(self.shape_nonzero)
            self.shape_nonzero = _grown(self.shape_nonzero, cap)
            self.shape_offsets = _grown(self.shape_offsets, cap + 1)
            rebind = True
        if end > len(self.shape_cols):
            cap = max(2 * len(self.shape_cols), end)
            self.shape_cols = _grown(self.shape_cols, cap)
            self.shape_amounts = _grown(self.shape_amounts, cap)
            rebind = True
        if rebind:
            self._acc.bind(self)
        for e, (col, amount) in enumerate(cols, start):
            self.shape_cols[e] = col
            self.shape_amounts[e] = amount
        self.shape_offsets[shape + 1] = end
        self.shape_nonzero[shape] = (nonzero_cpu, nonzero_memory)

    def shape_vector(self, shape: int) -> np.ndarray:
        """Request shape ``shape`` as an (R,) int64 vector (zero where it requests nothing)."""
        out = np.zeros(len(self.resource_names), dtype=np.int64)
        lo, hi = int(self.shape_offsets[shape]), int(self.shape_offsets[shape + 1])
        out[self.shape_cols[lo:hi]] = self.shape_amounts[lo:hi]
        return out

    def _record_derived(self, rec: int) -> _PodDerived:
        t = self.pod_template[rec]
        if t >= 0:
            return self._pod_templates[t].derived
        return self._derive(self._pod_infos[rec].pod)

    def pod_records(self, row: int) -> list[int]:
        """The records of the row's pods, in the order of ``pods[row]``."""
        return self._acc.records(row)

    def pod_records_many(self, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """:meth:`pod_records` of each of ``rows`` ((N,) int64), row after row: ((M,) int64 the
        records, (N,) int64 how many each row has), in one compiled pass."""
        return self._acc.records_many(rows)

    def built_pod_rows(self) -> "collections.abc.KeysView[int]":
        """The rows whose PodInfo list is built (``pods.built(row)`` is not None), as a live view."""
        return self._row_lists.keys()

    def row_pod_infos(self, row: int, flag: int) -> list[PodInfo]:
        """The PodInfos of the row's pods whose ``pod_flags`` have ``flag``, in pod order (only those
        are built)."""
        flags = self.pod_flags
        return [self.pod_info(rec) for rec in self._acc.records(row) if flags[rec] & flag]

    def find_pod(self, node_name: str, uid: str) -> int:
        """The record of the pod with ``uid`` on ``node_name``, or -1."""
        return self._acc.find(self.row_of[node_name], uid, self._pod_uid_str)

    def remove_pod(self, node_name: str, pod: "Pod") -> PodInfo:
        """Remove the pod with ``pod.uid`` from ``node_name``; KeyError when it is not there."""
        row = self.row_of[node_name]
        rec = self._acc.find(row, pod.uid, self._pod_uid_str)
        if rec < 0:
            raise KeyError(f"pod {pod.namespace}/{pod.name} is not on node {node_name}")
        return self.remove_record(rec, row)

    def remove_record(self, rec: int, row: int = -1) -> PodInfo:
        """:meth:`remove_pod` of the pod at live record ``rec`` (on ``row``, -1: the record's), for
        a caller that knows the record (a bulk pod's, see ``BulkPods.rec``): no node name to look
        up and no scan of the node's records for the uid. The record's own row is the one used
        (``row``, when given, is that row)."""
        if self._shared:
            self._own_accounts()
        pi = self.pod_info(rec)  # (before the release: built from the record's template)
        self.version += 1
        # the unlink, the row's sums and the freed record's columns in one compiled step; what it
        # read comes back for the Python-side counts (a victim's removal read and wrote them one
        # array element at a time)
        row, flags, signature, affinity_signature, t = self._acc.release(rec, self.version)
        lst = self._row_lists.get(row)
        if lst is not None:  # the list mirrors the records: the last one moves into the gap
            for i, other in enumerate(lst):
                if other is pi:
                    lst[i] = lst[-1]
                    lst.pop()
                    break
        self._count_signature(row, signature, -1)
        if flags & FLAG_AFFINITY:
            self.total_pods_with_affinity -= 1
            self._count_affinity_signature(row, affinity_signature, -1)
        if flags & FLAG_REQUIRED_ANTI:
            self.total_pods_with_req_anti -= 1
        if flags & FLAG_TERMINATING:
            self.total_terminating_pods -= 1
        if flags & FLAG_HOST_PORTS:  # (the template, which the release returned, is still live)
            derived = self._pod_templates[t].derived if t >= 0 else self._derive(pi.pod)
            self._count_ports(row, derived.host_ports, -1)
        # the rest of _free_record (the release cleared the columns)
        if t >= 0:
            self._release_template(t)
        self.pod_names[rec] = None
        self._pod_uid_str.pop(rec, None)
        self._pod_infos.pop(rec, None)
        self._freed_records.append(rec)
        return pi

    def _release_template(self, t: int) -> None:
        """A record no longer refers to pod template ``t``: forgotten (with its prototype) when
        nothing does."""
        release_template(self._pod_templates, self._pod_template_index, self._free_pod_templates, t)

    def _free_record(self, rec: int) -> None:
        if self._shared:
            self._own_accounts()
        t = int(self.pod_template[rec])
        if t >= 0:
            self._release_template(t)
        self.pod_template[rec] = -1
        self.pod_row[rec] = -1
        self.pod_names[rec] = None
        self._pod_uid_str.pop(rec, None)
        self.pod_flags[rec] = 0
        self._pod_infos.pop(rec, None)
        self._freed_records.append(rec)

    def _count_ports(self, row: int, ports: tuple, sign: int) -> None:
        hp = self._ports.get(row)
        if hp is None:
            hp = self._ports[row] = HostPortInfo()
        for ip, proto, port in ports:
            (hp.add if sign > 0 else hp.remove)(ip, proto, port)
        if self._shared:
            self._own("has_host_ports")
        self.has_host_ports[row] = len(hp) > 0

    # ------------------------------------------------------------------------------------------
    # helpers for plugins (count_matching_pods and the count subscriptions: SignatureCounts, in
    # .signatures)
    # ------------------------------------------------------------------------------------------
    def image_num_nodes(self, image: str) -> int:
        rows = self.image_rows.get(image)
        return len(rows) if rows else 0

    def resource_column(self, name: str) -> int | None:
        return self.resource_index.get(name)


def _grown(a: np.ndarray, n: int) -> np.ndarray:
    """A new array of ``n`` rows: ``a``'s rows, then zeros."""
    out = np.zeros((n,) + a.shape[1:], dtype=a.dtype)
    out[:len(a)] = a
    return out


def _take_slots(freed: list[int], next_free: int, n: int, grow) -> tuple[list[int], int]:
    """``n`` slots: the most recently freed first (as single adds reuse them), then new ones from
    ``next_free`` (``grow(end)`` makes room). Returns the slots and the new ``next_free``."""
    k = min(n, len(freed))
    slots = freed[len(freed) - k:][::-1]
    del freed[len(freed) - k:]
    if n > k:
        end = next_free + n - k
        grow(end)
        slots.extend(range(next_free, end))
        next_free = end
    return slots, next_free


class _NoImages:
    images = ()


_NO_IMAGES = _NoImages()


def rows_array(rows: Iterable[int]) -> np.ndarray:
    return np.fromiter(rows, dtype=np.int64)
