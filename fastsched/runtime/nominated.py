"""RunFilterPluginsWithNominatedPods over many nodes, and the nominated pods as arrays.

Upstream's ``RunFilterPluginsWithNominatedPods`` (``pkg/scheduler/framework/runtime/framework.go``)
runs the Filter plugins on one node twice when pods of equal or higher priority are nominated to it:
once with them added (through the PreFilter extensions' AddPod), once without. The runtime's per-node
form is :meth:`fastsched.runtime.Framework.run_filter_plugins_with_nominated_pods`; this module gives
the same verdicts for a whole NodeBatch in one vectorized pass when the Filter plugins that can still
reject the pod allow it (:func:`filter_with_nominated_pods`):

* every Filter plugin outside the PreFilter skip set has a ``filter_vectorized`` and declares its
  *kind*, the class attribute ``filter_pod_dependence`` (:func:`filter_kind`): :data:`NODE_ONLY` (its
  verdict does not depend on the pods on the node: NodeUnschedulable, NodeName, TaintToleration,
  NodeAffinity, VolumeBinding, VolumeZone) or :data:`ADDITIVE` (it depends on them only through the
  table's ``requested``, ``pod_count`` and host-port columns, and more pods never pass where fewer
  fail: NodeResourcesFit, NodePorts), or :data:`PER_POD` when that depends on the pod
  (NodeVolumeLimits; :func:`pod_filters` asks the plugin);
* no PreFilter plugin outside the skip set has AddPod/RemovePod extensions (adding a pod then
  changes no CycleState).

Then upstream's first pass decides (its second pass runs on fewer pods, which these filters pass
whenever they pass the first), so each filter runs once per node, on a :class:`ShadowTable` of the
node table holding the nominated pods that count: upstream's verdicts and statuses, and the j-th of j
nominated preemptors no longer pays O(j) per-node passes.

Each plugin declares its kind in its own class (the runtime imports no plugin package). A plugin
that declares none keeps the runtime's per-node two-pass path for the nodes with nominated pods.

The nominated pods are kept as arrays per node table (:class:`NominationIndex`, rebuilt only when the
nominations change), shared with DefaultPreemption's vectorized dry run, which also uses the shadow
table and :class:`NominatedUsage`.
"""
from __future__ import annotations

import itertools
import operator
import weakref
from typing import TYPE_CHECKING, Any, cast

import numpy as np

from .._kernels import _preemption
from ..framework.interface import FILTER_ADDITIVE, FILTER_NODE_ONLY, FILTER_PER_POD, FILTER_POD_DEPENDENCES
from ..framework.types import HostPortInfo
from ..snapshot.snapshot import NodeBatch
from .capabilities import vectorized_method

if TYPE_CHECKING:  # pragma: no cover
    from ..api import Pod
    from ..framework.cycle_state import CycleState
    from ..framework import protocols as fwk
    from ..framework.protocols import NodeTable
    from .filter_results import FilterResults
    from .framework import Framework
    from ..snapshot.table import NodeTable as _SnapshotTable

#: the Filter plugins' pod dependences (declared by each plugin class, ``filter_pod_dependence``)
NODE_ONLY = FILTER_NODE_ONLY
ADDITIVE = FILTER_ADDITIVE
PER_POD = FILTER_PER_POD

_SHADOW_VERSIONS = itertools.count(1)


# ------------------------------------------------------------------------------------------------
# Filter kinds
# ------------------------------------------------------------------------------------------------
def filter_kind(plugin: Any) -> str | None:
    """How ``plugin``'s Filter verdict depends on the pods on the node: its class's
    ``filter_pod_dependence`` (:data:`NODE_ONLY` or :data:`ADDITIVE`), or None. A value that is
    neither is the plugin author's error, reported here rather than taken as None."""
    kind = getattr(type(plugin), "filter_pod_dependence", None)
    if kind is not None and kind not in FILTER_POD_DEPENDENCES:
        raise ValueError(f"{type(plugin).__name__}.filter_pod_dependence is {kind!r}: want one of "
                         f"{', '.join(map(repr, FILTER_POD_DEPENDENCES))} or None")
    return kind


#: Framework methods a subclass must not override for the vectorized form to give its results
#: (Framework.__init_subclass__ reads them to set ``nominated_filters_vectorizable``)
FRAMEWORK_METHODS = ("run_filter_plugins_with_nominated_pods", "run_filter_plugins", "_add_ge_nominated_pods",
                      "run_pre_filter_extension_add_pod", "run_pre_filter_extension_remove_pod",
                      "run_filter_plugins_vectorized", "nominated_pods_for_node")
#: (handle, skip set) -> the answer of nominated_filters (a few entries: one per profile and skip set)
_FILTERS: dict[tuple[int, frozenset], tuple[Any, Any]] = {}


def nominated_filters(handle: fwk.Handle, state: "CycleState") -> tuple[tuple[str, Any, str], ...] | None:
    """``(name, plugin, kind)`` of each Filter plugin of ``handle`` that can still reject the pod
    (outside ``state``'s PreFilter skip set), in profile order, when all are registered
    :data:`NODE_ONLY` or :data:`ADDITIVE` plugins with a ``filter_vectorized`` and no PreFilter
    plugin outside the skip set has AddPod/RemovePod extensions; else None.

    ``handle`` must be the runtime's :class:`~fastsched.runtime.Framework` (a subclass that
    overrides how Filter runs gets None).
    """
    skip = state.skip_filter_plugins
    key = (id(handle), skip)
    got = _FILTERS.get(key)
    if got is not None and got[0] is handle:
        return got[1]
    out = _nominated_filters(handle, skip)
    if len(_FILTERS) >= 64:
        _FILTERS.clear()
    _FILTERS[key] = (handle, out)
    return out


def pod_filters(handle: fwk.Handle, state: "CycleState", pod: "Pod", table: "NodeTable"
                ) -> tuple[tuple[str, Any, str], ...] | None:
    """:func:`nominated_filters` for one pod's cycle: a :data:`PER_POD` plugin's kind is its
    ``filter_pod_dependence_of(state, pod, table)``, and None when that is neither
    :data:`NODE_ONLY` nor :data:`ADDITIVE` (the per-node path then runs)."""
    filters = nominated_filters(handle, state)
    if filters is None:
        return None
    for _name, _pl, kind in filters:
        if kind == PER_POD:
            break
    else:
        return filters
    out = []
    for name, pl, kind in filters:
        if kind == PER_POD:
            kind = pl.filter_pod_dependence_of(state, pod, table)
            if kind != NODE_ONLY and kind != ADDITIVE:
                return None
        out.append((name, pl, kind))
    return tuple(out)


def _nominated_filters(handle: fwk.Handle, skip: frozenset) -> tuple[tuple[str, Any, str], ...] | None:
    # the Framework class says whether it is one the vectorized form reproduces (it overrides none
    # of FRAMEWORK_METHODS); any other handle is not
    if not getattr(type(handle), "nominated_filters_vectorizable", False):
        return None
    fw = cast("Framework", handle)  # the runtime's Framework (its class said so above)
    for pre in fw.pre_filter_plugins:
        if pre.name() in skip:
            continue
        try:
            if pre.pre_filter_extensions() is not None:
                return None  # AddPod/RemovePod would change the state per added or removed pod
        except Exception:  # noqa: BLE001 - the per-node path reports it
            return None
    out = []
    for pl in fw.filter_plugins:
        name = pl.name()
        if name in skip:
            continue
        kind = filter_kind(pl)
        if kind is None or vectorized_method(pl, "filter_vectorized") is None:
            return None
        out.append((name, pl, kind))
    return tuple(out)


# ------------------------------------------------------------------------------------------------
# the shadow table
# ------------------------------------------------------------------------------------------------
def new_shadow_version() -> int:
    """A fresh (negative) table version for a shadow, which no cache keyed on versions has seen."""
    return -next(_SHADOW_VERSIONS)


class PortsByRow(dict):
    """Host ports by row: the rows set here, else ``fallback[row]`` (None without a fallback)."""

    def __init__(self, fallback: Any = None):
        super().__init__()
        self.fallback = fallback

    def __missing__(self, row: int) -> Any:
        return None if self.fallback is None else self.fallback[row]


class ShadowTable:
    """The node table with other pods on some rows: ``requested``, ``pod_count``,
    ``has_host_ports`` and ``ports`` are the shadow's own; every other attribute reads the real
    table. ``version`` is unique, so no plugin cache keyed on it mistakes this for the table."""

    def __init__(self, base: "NodeTable"):
        self._base = base
        self.requested = np.zeros_like(base.requested)
        self.pod_count = np.zeros_like(base.pod_count)
        self.has_host_ports = np.zeros_like(base.has_host_ports)
        self.ports = PortsByRow()
        self.version = new_shadow_version()
        #: (table, its changed-rows log position array, the position, the rows the nominated pods
        #: were added to) when the columns were last made the table's plus those pods, else None
        #: (see ``_sync_shadow``)
        self.synced: tuple | None = None

    def fits(self, base: "NodeTable") -> bool:
        """Whether this shadow's columns have ``base``'s shapes (it can shadow it)."""
        return (self._base is base and self.requested.shape == base.requested.shape
                and self.pod_count.shape == base.pod_count.shape)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._base, name)


def add_ports(shadow: ShadowTable, table: "NodeTable", extra: dict[int, list]) -> None:
    """The shadow's host ports in use on the rows of ``extra``: the table's with ``extra``'s
    ``(ip, protocol, port)`` added."""
    for row, more in extra.items():
        base = table.ports[row]
        hp = base.clone() if base is not None else HostPortInfo()
        for ip, proto, port in more:
            hp.add(ip, proto, port)
        shadow.ports[row] = hp
        shadow.has_host_ports[row] = len(hp) > 0


# ------------------------------------------------------------------------------------------------
# the nominated pods as arrays
# ------------------------------------------------------------------------------------------------
def nominations_by_node(nominator: Any) -> Any:
    """The nominator's read-only ``node name -> nominated PodInfos`` mapping
    (``nominated_pods_by_node()``, which the in-tree Nominator offers), or None.

    It gives, per node, what ``nominated_pods_for_node`` gives, without a call and a copy per node
    (the dry run and the Filter correction read every nominated node).
    """
    if nominator is None:
        return None
    fn = getattr(nominator, "nominated_pods_by_node", None)
    return fn() if fn is not None else None


def _priority(pod: "Pod") -> int:
    p = pod.priority
    return 0 if p is None else int(p)


_POD_OF = operator.attrgetter("pod")
#: most pods :meth:`NominationIndex._append` writes element by element (more: a slice per array)
_SCALAR_ADDS = 4


class NominationIndex:
    """Every nominated pod as arrays: its node's row, priority, requests, uid and host ports.

    Rebuilt only when the nominations changed: the nominator's node -> pods mapping is compared
    with the one the arrays were built from (same nodes in the same order, the same PodInfo and Pod
    objects), which costs a few C-level list comparisons instead of a Python step per pod.
    """

    def __init__(self) -> None:
        self._key: tuple | None = None
        self._entries: dict[int, tuple] = {}
        self.arrays: tuple | None = None
        self._cycle: tuple | None = None
        #: (nominator, version, table, node_version, width) the arrays were last found current for
        self._built: tuple | None = None
        #: (arrays, priority, uid, selection) of the last NominatedUsage.counted
        self.selection: tuple | None = None
        #: (C,) int64 scratch, -1 outside a call: row -> position in the rows asked about
        self.pos_of: np.ndarray | None = None
        #: (buffers, arrays) of the last _append: the arrays are views of the buffers' filled part
        self._grow: tuple | None = None

    def get(self, handle: Framework, table: "NodeTable", width: int, state: Any = None) -> tuple | None:
        """(rows (Q,), priorities (Q,), requests (Q, R), uids (Q,), [(index, host ports)], node
        names (Q,)), or None when the nominator cannot list its nodes.

        ``state``: the scheduling cycle's CycleState. Nothing changes the nominations during a
        cycle's Filter and PostFilter (the scheduler is single-threaded), so within one cycle the
        arrays are checked against the nominator's ``version`` only (its counts when it has none).
        """
        nominator = getattr(handle, "pod_nominator", None)
        mapping = nominations_by_node(nominator)
        if mapping is not None and self.arrays is not None:
            # across cycles: the nominator's version moves on every change of the nominations,
            # including the replacement of a nominated pod's PodInfo (update_nominated_pod), and
            # no path changes a stored PodInfo in place without re-filing it (the queue's updates
            # and the failure handler's; the failure handler's last update after its status patch
            # changes status fields only, which nothing here reads), so an equal version and node
            # set mean equal arrays
            version = getattr(nominator, "version", None)
            built = self._built
            if (version is not None and built is not None and built[0] is nominator and built[2] is table
                    and built[3] == table.node_version and built[4] == width):
                if built[1] == version:
                    cycle = self._cycle
                    if not (state is not None and cycle is not None and cycle[0][-1] is state
                            and cycle[1] is nominator and cycle[2] is table and cycle[4] == width
                            and cycle[3] == ("version", version)):
                        # (a cycle asks several times, the walk, diagnose, the dry run: the state
                        # remembered last at this version needs no second stamp)
                        self._remember_cycle(state, nominator, table, mapping, width)
                    return self.arrays
                arrays = self._follow(nominator, mapping, table, width, built[1])
                if arrays is not None:
                    self.arrays = arrays
                    self._key = None  # (the full key below is not kept up to date by _follow)
                    self._remember_cycle(state, nominator, table, mapping, width)
                    self._remember_built(nominator, table, width)
                    return arrays
        if state is not None and mapping is not None and self.arrays is not None:
            cycle = self._cycle
            if (cycle is not None and any(s is state for s in cycle[0]) and cycle[1] is nominator and cycle[2] is table
                    and cycle[3] == _nominations_stamp(nominator, mapping) and cycle[4] == width):
                return self.arrays
        if mapping is not None:
            names = list(mapping)
            lists = list(mapping.values())
        else:
            names_fn = getattr(nominator, "nominated_node_names", None)
            if names_fn is None:
                return None  # the caller asks node by node
            names = list(names_fn())
            lists = [handle.nominated_pods_for_node(n) for n in names]
        flat = list(itertools.chain.from_iterable(lists))
        # a PodInfo's requests follow its Pod (PodInfo.update replaces both)
        # (the node set's version: a node added later may hold pods nominated to it before it came)
        key = (nominator, (table.uid, table.node_version), width, names, list(map(len, lists)), flat,
               list(map(_POD_OF, flat)))
        arrays = self.arrays
        if arrays is not None and self._key is not None and _same_key(self._key, key):
            rows = arrays[0]
            if not len(rows) or (table.node_names[rows] == arrays[5]).all():
                self._remember_cycle(state, nominator, table, mapping, width)
                self._remember_built(nominator, table, width)
                return arrays
        prev, prev_arrays = self._key, arrays
        self._key = key
        if prev is not None and prev_arrays is not None and _extends(prev, key):
            # new nominations on nodes after the known ones (the common case: one preemption)
            n0 = len(prev[3])
            more = self._build(table, width, names[n0:], lists[n0:], keep=True)
            self.arrays = arrays = _concat_arrays(prev_arrays, more)
        else:
            self.arrays = arrays = self._build(table, width, names, lists)
        self._remember_cycle(state, nominator, table, mapping, width)
        self._remember_built(nominator, table, width)
        return arrays

    def _follow(self, nominator: Any, mapping: Any, table: "NodeTable", width: int, since: int) -> tuple | None:
        """The arrays brought up to the nominator's version from those built at version ``since``
        by redoing the nodes its journal says changed (``nodes_changed_since``), or None when that
        cannot keep the mapping's order cheaply (then the caller rebuilds in full).

        The arrays follow the mapping's order (node insertion order, then nomination order). The
        nodes that did not change keep their pods and their relative order; a changed node that
        still holds nominations either kept its place (pods added to or removed from its list) or
        moved to the end (its last pod left, then a pod came: a new key). When the changed nodes
        still present are exactly the mapping's last ones, the new arrays are the old ones without
        the changed nodes' pods followed by those nodes' pods as the mapping has them now (one
        preemption, a bind, a re-filed nomination); otherwise None."""
        changes_of = getattr(nominator, "nodes_changed_since", None)
        changed = changes_of(since) if changes_of is not None else None
        if changed is None or len(changed) > 64:
            return None
        touched = dict.fromkeys(changed)
        present = [n for n in touched if n in mapping]
        k = len(present)
        tail = list(itertools.islice(reversed(mapping), k))[::-1] if k else []
        if set(tail) != set(present):
            return None
        old = self.arrays
        assert old is not None
        row_of = table.row_of
        gone_rows = [row_of[n] for n in touched if n in row_of]
        n_entries = len(self._entries)
        gathered = self._gather(table, width, tail, [mapping[n] for n in tail], keep=True) if k else None
        old_rows = old[0]
        if gathered is not None and gathered[0] and not any(np.count_nonzero(old_rows == g) for g in gone_rows):
            # no old pod is on a changed node (the common case: a preemption nominated its pod to
            # a node that held none): the changed nodes' pods appended, in place when the arrays
            # end where their buffers are filled (amortized, instead of a copy of every array),
            # written from the gathered lists (no arrays of their own: a pod or two, where each
            # array made cost about what writing it into the buffers costs)
            return self._append(old, gathered)
        add = _as_arrays(gathered, width) if gathered is not None else _no_nominations(width)
        self._grow = None
        # the old pods off the changed nodes, then those nodes' pods now: one compiled pass per array
        gone = np.array(gone_rows, dtype=np.int64)
        spliced = _preemption.splice_nominations(old[0], old[1], old[2], old[3], old[5], gone,
                                                 add[0], add[1], add[2], add[3], add[5])
        if spliced is None:  # nothing dropped, nothing added
            return old
        rows, prios, vectors, uids, names, new_pos = spliced
        kept = len(rows) - len(add[0])
        if kept < len(old[0]):
            # forget the entries of the pods no longer listed (the full rebuild's pruning)
            if n_entries > 2 * kept + 256:
                return None
        ports = old[4]
        if ports and kept < len(old[0]):
            at = new_pos.tolist()
            ports = [(at[q], p) for q, p in ports if at[q] >= 0]
        if add[4]:
            ports = ports + [(i + kept, p) for i, p in add[4]]
        return rows, prios, vectors, uids, ports, names

    def _append(self, old: tuple, add: tuple) -> tuple:
        """The arrays ``old`` followed by ``add``'s pods (``add``'s port indices shifted), as views
        of growing buffers: when ``old`` is the last answer of this method (the buffers are filled
        up to its end) ``add`` is written after it, else the buffers are made anew (twice the room).
        Nothing before an answer's end is written again, so earlier answers stay as they were.
        ``add``: the arrays' six parts as arrays, or as :meth:`_gather`'s lists."""
        q, q2 = len(old[0]), len(add[0])
        n = q + q2
        grow = self._grow
        if grow is None or grow[1] is not old or len(grow[0][0]) < n:
            cap = max(64, 2 * n)
            width = old[2].shape[1]
            bufs = (np.empty(cap, dtype=np.int64), np.empty(cap, dtype=np.int64),
                    np.empty((cap, width), dtype=np.int64), np.empty(cap, dtype=object), np.empty(cap, dtype=object))
            for buf, i in zip(bufs, (0, 1, 2, 3, 5)):
                buf[:q] = old[i]
        else:
            bufs = grow[0]
        if q2 <= _SCALAR_ADDS:
            # a pod or two (one preemption's nomination): element by element, where a slice
            # assignment from a list converts it to an array first
            rows, prios, vectors, uids, names = bufs
            for j in range(q2):
                rows[q + j] = add[0][j]
                prios[q + j] = add[1][j]
                vectors[q + j] = add[2][j]
                uids[q + j] = add[3][j]
                names[q + j] = add[5][j]
        else:
            for buf, i in zip(bufs, (0, 1, 2, 3, 5)):
                buf[q:n] = add[i]
        ports = old[4] + [(i + q, p) for i, p in add[4]] if add[4] else old[4]
        arrays = (bufs[0][:n], bufs[1][:n], bufs[2][:n], bufs[3][:n], ports, bufs[4][:n])
        self._grow = (bufs, arrays)
        return arrays

    def _remember_built(self, nominator: Any, table: "NodeTable", width: int) -> None:
        """Remember which nominator version and node set the arrays are current for (None when
        the nominator has no version: then only the full key says the arrays are current)."""
        version = getattr(nominator, "version", None)
        self._built = None if version is None else (nominator, version, table, table.node_version, width)

    def _remember_cycle(self, state: Any, nominator: Any, table: "NodeTable", mapping: Any, width: int) -> None:
        """Remember that ``state``'s cycle found the arrays current. The states checked while the
        stamp stays are kept together (a few): the compiled cycle's first pass runs on a
        CycleState of its own before the plugin-call path's Filter and PostFilter run on the
        cycle's, and each would otherwise check the whole key again."""
        last, self._cycle = self._cycle, None
        if state is not None and mapping is not None:
            stamp = _nominations_stamp(nominator, mapping)
            states: tuple = (state,)
            if (last is not None and last[1] is nominator and last[2] is table and last[3] == stamp
                    and last[4] == width):
                states = (*last[0][-3:], state)
            self._cycle = (states, nominator, table, stamp, width)

    def _build(self, table: "NodeTable", width: int, names: list[str], lists: list[list], keep: bool = False
               ) -> tuple:
        """The arrays of the nominated pods of ``names`` (``keep``: add to the known entries)."""
        return _as_arrays(self._gather(table, width, names, lists, keep), width)

    def _gather(self, table: "NodeTable", width: int, names: list[str], lists: list[list], keep: bool = False
                ) -> tuple:
        """:meth:`_build`'s parts as lists: (rows, priorities, request vectors ((width,) int64
        each), uids, [(index, host ports)], node names) (``keep``: add to the known entries)."""
        row_of = table.row_of
        index = table.resource_index
        old = self._entries
        entries = old if keep else {}
        rows: list[int] = []
        prios: list[int] = []
        vectors: list[np.ndarray] = []
        uids: list[str] = []
        ports: list[tuple[int, tuple]] = []
        node_names: list[str] = []
        for name, pis in zip(names, lists):
            row = row_of.get(name)
            if row is None:
                continue
            for pi in pis:
                pod = pi.pod
                got = old.get(id(pi))
                if got is None or got[0] is not pod or got[1] is not pi.requests or len(got[3]) != width:
                    vec = np.zeros(width, dtype=np.int64)
                    for res, amount in pi.requests.items():
                        col = index.get(res)
                        # a resource no node has: the preemptor's request for it fails anyway
                        if amount and col is not None and col < width:
                            vec[col] = amount
                    p = pod.priority
                    got = (pod, pi.requests, 0 if p is None else p, vec, pod.host_ports, pi)
                entries[id(pi)] = got
                q = len(rows)
                rows.append(row)
                prios.append(got[2])
                vectors.append(got[3])
                uids.append(pod.uid)
                node_names.append(name)
                if got[4]:
                    ports.append((q, got[4]))
        self._entries = entries
        return rows, prios, vectors, uids, ports, node_names


def _as_arrays(parts: tuple, width: int) -> tuple:
    """The nomination arrays of :meth:`NominationIndex._gather`'s lists."""
    rows, prios, vectors, uids, ports, node_names = parts
    q = len(rows)
    return (np.array(rows, dtype=np.int64), np.array(prios, dtype=np.int64),
            np.array(vectors, dtype=np.int64).reshape(q, width), _objects(uids), ports, _objects(node_names))


def _nominations_stamp(nominator: Any, mapping: Any) -> Any:
    """What tells, within a cycle, that the nominations did not change: the nominator's version
    counter, or (without one) the numbers of nominated nodes and pods."""
    version = getattr(nominator, "version", None)
    if version is not None:
        return ("version", version)
    return (len(mapping), len(nominator))


def _extends(a: tuple, b: tuple) -> bool:
    """Whether nomination key ``b`` is ``a`` with more nodes after ``a``'s (same objects before)."""
    if a[0] is not b[0] or a[1] != b[1] or a[2] != b[2]:
        return False
    n0, f0 = len(a[3]), len(a[5])
    if len(b[3]) <= n0 or b[3][:n0] != a[3] or b[4][:n0] != a[4]:
        return False
    for x, y in zip(a[5:], b[5:]):
        if not all(map(operator.is_, x, y[:f0])):
            return False
    return True


def _no_nominations(width: int) -> tuple:
    """The nomination arrays of no pod (``width`` resource columns)."""
    return (np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64), np.zeros((0, width), dtype=np.int64),
            _objects([]), [], _objects([]))


def _concat_arrays(a: tuple, b: tuple) -> tuple:
    """The nomination arrays of ``a`` followed by those of ``b`` (``b``'s indices shifted)."""
    q = len(a[0])
    return (np.concatenate((a[0], b[0])), np.concatenate((a[1], b[1])), np.concatenate((a[2], b[2])),
            np.concatenate((a[3], b[3])), a[4] + [(i + q, ports) for i, ports in b[4]], np.concatenate((a[5], b[5])))


def _objects(items: list) -> np.ndarray:
    """A 1-D object array of ``items`` (strings are not turned into a fixed-width dtype)."""
    out = np.empty(len(items), dtype=object)
    out[:] = items
    return out


def _same_key(a: tuple, b: tuple) -> bool:
    """Whether two nomination keys are equal, comparing objects by identity."""
    if a[0] is not b[0] or a[1] != b[1] or a[2] != b[2] or a[3] != b[3] or a[4] != b[4]:
        return False
    for x, y in zip(a[5:], b[5:]):
        if len(x) != len(y) or not all(map(operator.is_, x, y)):
            return False
    return True


class NominatedUsage:
    """The nominated pods a Filter pass (or a preemption dry run) adds to each node
    (``addGENominatedPods``): those of equal or higher priority than the pod, other than itself."""

    def __init__(self, handle: Framework, index: NominationIndex, pod: "Pod", table: "NodeTable", width: int,
                 state: Any = None):
        self.handle = handle
        self.index = index
        self.state = state
        self.uid = pod.uid
        self.priority = _priority(pod)
        self.table = table
        self.width = width
        self._selected: tuple | None = None
        self._none = getattr(handle, "pod_nominator", None) is None

    def counted(self) -> tuple | None:
        """(rows, requests, indices, host ports by index) of the nominated pods that count for
        this pod (the same for every window of one pod: kept on the index); None when the
        nominator cannot list its nodes."""
        if self._selected is None:
            arrays = self.index.get(self.handle, self.table, self.width, self.state)
            if arrays is None:
                return None
            last = self.index.selection
            if last is not None and last[0] is arrays and last[1] == self.priority and last[2] == self.uid:
                self._selected = last[3]
                return self._selected
            rows, prios, vectors, uids, ports, _ = arrays
            keep = prios >= self.priority
            # the pod's own nomination is left out; the arrays are current with the nominator
            # (get), so when it holds none for this uid no entry has it and the comparison of
            # every uid (strings, one Python compare each) is not needed
            node_for = getattr(getattr(self.handle, "pod_nominator", None), "nominated_node_for", None)
            if node_for is None:
                keep &= uids != self.uid
            else:
                node = node_for(self.uid)
                row = None if node is None else self.table.row_of.get(node)
                if row is not None:
                    # the nominator holds one nomination per pod: its entry can only be on the row of
                    # the node it is nominated to (the arrays list the rows of nodes in the table),
                    # so only the uids there are compared (not every entry's, one Python string
                    # compare each: the pods bound after their preemption, up to hundreds queued)
                    for q in np.flatnonzero(rows == row).tolist():
                        if uids[q] == self.uid:
                            keep[q] = False
            if keep.all():  # (the arrays are never written in place: shared, not copied)
                self._selected = (rows, vectors, np.arange(len(rows)), {int(q): p for q, p in ports} if ports else {})
            else:
                kept_ports = {int(q): p for q, p in ports if keep[q]} if ports else {}
                self._selected = (rows[keep], vectors[keep], np.flatnonzero(keep), kept_ports)
            self.index.selection = (arrays, self.priority, self.uid, self._selected)
        return self._selected

    @property
    def none(self) -> bool:
        """Whether the handle has no nominator (no nominated pod counts anywhere)."""
        return self._none

    def scratch_positions(self) -> np.ndarray:
        """The index's (C,) int64 scratch (C: the table's capacity), -1 everywhere outside a call
        that maps the rows it asks about to their positions (and sets them back)."""
        pos_of = self.index.pos_of
        if pos_of is None or len(pos_of) != self.table.capacity:
            pos_of = self.index.pos_of = np.full(self.table.capacity, -1, dtype=np.int64)
        return pos_of

    def usage(self, rows: np.ndarray) -> tuple[np.ndarray | None, np.ndarray | None, dict[int, list] | None]:
        """(requests (W, R), pod counts (W,), host ports by row) of the nominated pods on ``rows``;
        (None, None, None) when there are none."""
        if self._none:
            return None, None, None
        req = np.zeros((len(rows), self.width), dtype=np.int64)
        count = np.zeros(len(rows), dtype=np.int64)
        added, by_row = self.add_to(rows, req, count)
        if not added:
            return None, None, None
        return req, count, by_row

    def add_to(self, rows: np.ndarray, req: np.ndarray, count: np.ndarray) -> tuple[bool, dict[int, list] | None]:
        """Add the nominated pods on ``rows`` to ``req`` (W, R) and ``count`` (W,) in place (what
        :meth:`usage` returns, without its arrays): (whether any pod was added, their host ports
        by row or None)."""
        if self._none:
            return False, None
        counted = self.counted()
        if counted is None:
            nom_req, nom_count, nom_ports = self._usage_node_by_node(rows)
            if nom_req is None:
                return False, None
            req += nom_req
            count += nom_count
            return True, nom_ports
        nom_rows, vectors, indices, ports = counted
        if not len(nom_rows):
            return False, None
        pos_of = self.scratch_positions()
        pos_of[rows] = np.arange(len(rows), dtype=np.int64)
        try:
            added = _preemption.add_rows(req, count, nom_rows, vectors, pos_of)
        finally:
            pos_of[rows] = -1
        if not added:
            return False, None
        by_row: dict[int, list] = {}
        if ports:
            for k in np.flatnonzero(np.isin(nom_rows, rows)).tolist():  # the pods on ``rows``
                extra = ports.get(int(indices[k]))
                if extra:
                    by_row.setdefault(int(nom_rows[k]), []).extend(extra)
        return True, by_row or None

    def _usage_node_by_node(self, rows: np.ndarray) -> tuple:
        """``usage`` through ``nominated_pods_for_node`` on each row (a nominator that cannot list
        its nodes)."""
        names = self.table.node_names[rows].tolist()
        index = self.table.resource_index
        req = np.zeros((len(rows), self.width), dtype=np.int64)
        count = np.zeros(len(rows), dtype=np.int64)
        by_row: dict[int, list] = {}
        for i, name in enumerate(names):
            for pi in self.handle.nominated_pods_for_node(name):
                p = pi.pod.priority
                if (0 if p is None else p) < self.priority or pi.pod.uid == self.uid:
                    continue
                for res, amount in pi.requests.items():
                    col = index.get(res)
                    if amount and col is not None and col < self.width:
                        req[i, col] += amount
                count[i] += 1
                if pi.pod.host_ports:
                    by_row.setdefault(int(rows[i]), []).extend(pi.pod.host_ports)
        if not count.any():
            return None, None, None
        return req, count, by_row or None


# ------------------------------------------------------------------------------------------------
# per node table
# ------------------------------------------------------------------------------------------------
class TableState:
    """Per node table: the nominated pods' arrays (shared by the preemption dry runs and the
    Filter pass) and the shadow of :func:`filter_with_nominated_pods`."""

    def __init__(self, table: "NodeTable") -> None:
        self.table = table
        self.shadow: ShadowTable | None = None
        self.nominations = NominationIndex()
        #: (the NominationIndex selection, the table, its version) the shadow was built for
        self.shadow_for: tuple | None = None
        #: (state, pod, framework, table version, table, shadow) of the last Filter pass
        self.filter_for: tuple | None = None

    def __fork__(self, copier: Any) -> None:
        """A fork's table starts without one (:func:`table_state` makes it its own on first use):
        the shadow, the index and the last cycle's CycleStates belong to this table's scheduler."""
        return None


#: table uid -> its TableState. The table itself holds the state (in its ``__dict__``), so the state,
#: and the nominator and CycleStates it remembers, go with the table: a plain dict here kept the
#: last eight schedulers alive, all their objects with them, once every compiled cycle asked for
#: its table's state (tests/dra/test_e2e.py checks that a scheduler is freed with its last
#: reference). Looked up by uid, as a ShadowTable reads as the table it shadows.
_TABLE_STATES: "weakref.WeakValueDictionary[int, TableState]" = weakref.WeakValueDictionary()
_STATE_ATTR = "_fastsched_nominated_state"


def table_state(table: "NodeTable") -> TableState:
    """The :class:`TableState` of ``table`` (a new one for a table not seen before)."""
    st = _TABLE_STATES.get(table.uid)
    if st is None or st.table is not table:
        st = TableState(table)
        try:
            vars(table)[_STATE_ATTR] = st  # (a ShadowTable's own dict: the shadow keeps it)
        except TypeError:  # no __dict__: nothing would keep it; not remembered
            return st
        _TABLE_STATES[table.uid] = st
    return st


# ------------------------------------------------------------------------------------------------
# RunFilterPluginsWithNominatedPods over many nodes
# ------------------------------------------------------------------------------------------------
def filter_with_nominated_pods(fw: Framework, state: "CycleState", pod: "Pod", nodes: fwk.NodeBatch
                               ) -> FilterResults | None:
    """``RunFilterPluginsWithNominatedPods`` on every node of the NodeBatch ``nodes`` in one
    vectorized pass, or None when the pod's filters do not allow it (see :func:`nominated_filters`;
    the caller then runs its per-node path).

    Returns the FilterResults ``fw.run_filter_plugins_vectorized`` gives, evaluated where a node has
    nominated pods of equal or higher priority (not the pod itself) on a shadow table holding them:
    upstream's first pass. Its second pass (without them) cannot fail where the first passed, for
    node-only and additive filters, so the verdicts and statuses are upstream's, and every filter
    runs once per node.
    """
    table = getattr(nodes, "table", None)
    if table is None or getattr(nodes, "rows", None) is None:
        return None
    st = _TABLE_STATES.get(table.uid)
    ready = st.filter_for if st is not None else None
    if (ready is not None and ready[0] is state and ready[1] is pod and ready[2] is fw
            and ready[3] == table.version and ready[4] is table and isinstance(ready[5], ShadowTable)):
        # the next window of this cycle's Filter (see below)
        return fw.run_filter_plugins_vectorized(state, pod, table_batch(ready[5], nodes.rows))
    nominator = getattr(fw, "pod_nominator", None)
    if nominator is None:
        return fw.run_filter_plugins_vectorized(state, pod, nodes)
    mapping = nominations_by_node(nominator)
    if mapping is not None:
        if not mapping:
            return fw.run_filter_plugins_vectorized(state, pod, nodes)
    else:
        names_fn = getattr(nominator, "nominated_node_names", None)
        if names_fn is not None and not names_fn():
            return fw.run_filter_plugins_vectorized(state, pod, nodes)
    if pod_filters(fw, state, pod, table) is None:
        return None
    st = table_state(table)
    # One shadow per scheduling cycle: the table and the nominations do not change between the
    # windows the scheduler filters (_filter_until_enough).
    ready = st.filter_for
    if not (ready is not None and ready[0] is state and ready[1] is pod and ready[2] is fw
            and ready[3] == table.version and ready[4] is table):
        shadow = _nominated_shadow(st, fw, state, pod, table)
        st.filter_for = ready = (state, pod, fw, table.version, table, shadow)
    shadow = ready[5]
    if shadow is None:  # no nominated pod counts for this pod
        return fw.run_filter_plugins_vectorized(state, pod, nodes)
    if shadow is _NODE_BY_NODE:
        return _filter_node_by_node(st, fw, state, pod, nodes)
    return fw.run_filter_plugins_vectorized(state, pod, table_batch(shadow, nodes.rows))


#: the nominator cannot list its nodes: each batch asks for its own nodes' nominated pods
_NODE_BY_NODE = object()


def filter_shadow(fw: Framework, state: "CycleState", pod: "Pod", table: "NodeTable") -> tuple[bool, Any]:
    """``(usable, shadow)``: the shadow table :func:`filter_with_nominated_pods` filters this
    cycle's nodes on (the table with the nominated pods that count for ``pod`` added; None when
    none counts), built or found as it finds it (so a later call of it in the same cycle finds
    this one). ``usable`` is False when the pod's filters do not allow that one vectorized pass
    or the nominator cannot list its nodes (its per-node path then runs). For the compiled
    diagnosis (``CompiledCycle.diagnose``), which judges the nominated rows on this shadow."""
    st = table_state(table)
    ready = st.filter_for
    if not (ready is not None and ready[0] is state and ready[1] is pod and ready[2] is fw
            and ready[3] == table.version and ready[4] is table):
        if pod_filters(fw, state, pod, table) is None:
            return False, None
        shadow = _nominated_shadow(st, fw, state, pod, table)
        st.filter_for = ready = (state, pod, fw, table.version, table, shadow)
    shadow = ready[5]
    if shadow is _NODE_BY_NODE:
        return False, None
    return True, shadow


def table_batch(table: NodeTable, rows: np.ndarray) -> NodeBatch:
    """A NodeBatch over ``table``: the snapshot's table, or a :class:`ShadowTable` (which reads as
    the NodeTable it shadows)."""
    # the snapshot's NodeBatch is annotated with the snapshot's table class; it reads only what
    # protocols.NodeTable declares (snapshot/ is outside the plugin contract's annotations)
    return NodeBatch(cast("_SnapshotTable", table), rows)


def _nominated_shadow(st: TableState, fw: Framework, state: "CycleState", pod: "Pod", table: "NodeTable") -> Any:
    """A shadow of the whole table with the nominated pods that count for ``pod`` added (None when
    none counts; ``_NODE_BY_NODE`` when the nominator cannot list its nodes)."""
    nominated = NominatedUsage(fw, st.nominations, pod, table, len(table.resource_names), state)
    counted = nominated.counted()
    if counted is None:
        return _NODE_BY_NODE
    nom_rows, vectors, indices, ports = counted
    if not len(nom_rows):
        return None
    shadow = st.shadow
    built = st.shadow_for
    if (shadow is not None and built is not None and built[0] is counted and built[1] is table
            and built[2] == table.version):
        # the same nominated pods counted (the index's selection is one object while the
        # nominations, the pod's priority and uid stay) on the table as it was: the shadow holds
        # them already. The compiled cycle's first pass and the plugin-call path's Filter of one
        # cycle (each with its own CycleState) build it once.
        return shadow
    if shadow is None or not shadow.fits(table):
        shadow = st.shadow = ShadowTable(table)
    st.shadow_for = None
    shadow.version = new_shadow_version()
    shadow.ports = PortsByRow(table.ports)
    _sync_shadow(shadow, table)
    shadow.synced = None  # (until the nominated pods are in: a failure below leaves a full copy next)
    _preemption.add_rows(shadow.requested, shadow.pod_count, nom_rows, vectors)
    if ports:
        extra: dict[int, list] = {}
        for k, q in enumerate(indices.tolist()):
            if q in ports:
                extra.setdefault(int(nom_rows[k]), []).extend(ports[q])
        add_ports(shadow, table, extra)
    # the rows that differ from the table's now (the ports' rows are nominated rows too), copied:
    # the index's arrays may be written in place by later nominations
    log_pos = getattr(table, "_change_pos", None)  # (a NodeTable without the log: copied whole each time)
    if log_pos is not None:
        shadow.synced = (table, log_pos, int(log_pos[0]), np.array(nom_rows, dtype=np.int64))
    st.shadow_for = (counted, table, table.version)
    return shadow


def _sync_shadow(shadow: ShadowTable, table: "NodeTable") -> None:
    """Make the shadow's ``requested``, ``pod_count`` and ``has_host_ports`` the table's again.

    Only the rows that can differ are copied: the nominated rows the last build added to, and the
    rows the table's changed-rows log (``_kernels/_table.pyx``) holds since that build (every write
    of those columns writes the row's ``row_version``, which logs the row). A failing preemption
    cycle builds the shadow once and between two builds a preemption changes a few rows, where
    copying the whole columns cost a pass over (C, R) each cycle at 5,000 nodes. The whole columns
    are copied for a new shadow, another table or log (a fork's, a restored one), a table whose
    columns changed shape, or a log that wrapped past the last build's position."""
    synced = shadow.synced
    log_pos = getattr(table, "_change_pos", None)
    if synced is not None and log_pos is not None and synced[0] is table and synced[1] is log_pos:
        end = int(log_pos[0])
        start = synced[2]
        log = table._change_rows
        if 0 <= end - start <= len(log):
            _preemption.refresh_rows(shadow.requested, shadow.pod_count, shadow.has_host_ports, table.requested,
                                     table.pod_count, table.has_host_ports, synced[3], log, start, end)
            return
    np.copyto(shadow.requested, table.requested)
    np.copyto(shadow.pod_count, table.pod_count)
    np.copyto(shadow.has_host_ports, table.has_host_ports)


def _filter_node_by_node(st: TableState, fw: Framework, state: "CycleState", pod: "Pod", nodes: fwk.NodeBatch
                         ) -> FilterResults:
    """:func:`filter_with_nominated_pods` asking the nominator for each node of ``nodes``."""
    table = nodes.table
    rows = nodes.rows
    nom_req, nom_count, nom_ports = NominatedUsage(fw, st.nominations, pod, table, len(table.resource_names),
                                                   state).usage(rows)
    if nom_req is None:
        return fw.run_filter_plugins_vectorized(state, pod, nodes)
    shadow = ShadowTable(table)
    shadow.ports = PortsByRow(table.ports)
    shadow.requested[rows] = table.requested[rows] + nom_req
    shadow.pod_count[rows] = table.pod_count[rows] + nom_count
    shadow.has_host_ports[rows] = table.has_host_ports[rows]
    add_ports(shadow, table, nom_ports or {})
    return fw.run_filter_plugins_vectorized(state, pod, table_batch(shadow, rows))


__all__ = ["ADDITIVE", "NODE_ONLY", "PER_POD", "NominatedUsage", "NominationIndex", "PortsByRow", "ShadowTable", "TableState",
           "add_ports", "filter_kind", "filter_shadow", "filter_with_nominated_pods", "new_shadow_version",
           "nominated_filters", "pod_filters",
           "nominations_by_node", "table_state"]
