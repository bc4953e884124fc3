"""The node table's Python objects: templates, the lazy row views, uids as words, pooled ints.

**Lazy objects.** The Python objects of the one-node-at-a-time path are built on demand:
``nodes[row]`` (the Node), ``pods[row]`` (the row's PodInfos, in the order pods were added, a
removal moving the last pod into the freed place, as list[i] = list[-1]; list.pop() does) and
``ports[row]`` (the row's HostPortInfo, None without host ports). Objects added in bulk that differ
only in name and uid (pods stamped from one template, nodes from one node shape) share a *template*,
the first such object; a row's Node or a record's Pod is then rebuilt from its template, its name
and uid (and for nodes the label columns) when first asked for, and kept from then on (equal to the
object added, not the same object). Objects with a manifest, objects added one at a time and pods
whose ``spec.nodeName`` is not their row's node are kept as they are. Built objects stay in step
with later updates.

:class:`LazyObjects` holds the :class:`~fastsched.snapshot.table.NodeTable` methods that make and
leave templates and rebuild objects from them (a mixin of the table); :class:`RowNodes`,
:class:`RowPods` and :class:`RowPorts` are ``table.nodes``, ``.pods`` and ``.ports``. Uids are
stored as two uint64 words (:func:`uid_words`), and the dicts of row, record and code numbers
share one int object per value (:func:`pooled_ints`). These are apart from the table because they
are how the table saves memory on objects, not how it keeps its columns (moved here from the
table, as they were). ``fastsched.snapshot.table`` re-exports :func:`pooled_ints`,
:func:`uid_words` and :func:`pod_template_getter`, which :mod:`fastsched.scheduler` imports from it.
"""
from __future__ import annotations

import dataclasses
import functools
import operator
from typing import TYPE_CHECKING, Any, Callable, Iterable, Iterator, NoReturn, Sequence, overload

import numpy as np

from .._kernels import _table
from .._kernels._getters import tuple_getter
from .._kernels._table import FLAG_UID_STRING
from ..api.objects import Pod as _Pod
from ..api.objects import _make_field_copier
from ..framework.types import PODS, HostPortInfo, PodInfo

if TYPE_CHECKING:  # pragma: no cover
    from ..api import Node, Pod
    from .table import NodeTable

__all__ = ["pooled_ints", "uid_words", "pod_template_getter", "RowNodes", "RowPorts", "RowPods", "LazyObjects"]


# One Python int object per value, shared by every dict that stores row, record or code numbers as
# keys or values: a million-node table would otherwise hold several int objects (32 bytes) per row.
_INTS: list[int] = list(range(1024))


def pooled_ints(n: int) -> list[int]:
    """The shared int objects 0..n-1 (and possibly more), indexable by value."""
    if len(_INTS) < n:
        _INTS.extend(range(len(_INTS), max(n, 2 * len(_INTS))))
    return _INTS


@functools.lru_cache(maxsize=None)
def _field_names(cls: type) -> tuple[str, ...]:
    return tuple(f.name for f in dataclasses.fields(cls))


@functools.lru_cache(maxsize=None)
def _make_copier(cls: type) -> Callable[[Any], Any]:
    """A field-for-field copy of a ``cls`` instance without ``__init__``: the API objects' own
    copier (``fastsched.api.objects._make_field_copier``: the compiled slot copy for a class whose
    layout is its fields' slots, Pod and Node; else straight-line code). A victim's Pod built from
    its template (``pod_info``) took ~1.6 µs in the generated lines' 42 attribute copies."""
    return _make_field_copier(cls)


# the caches keyed by class, typed as taking any class: mypy checks a class object against
# lru_cache's Hashable by the class's own (unbound) ``__hash__`` and refuses Pod and Node
_copier: Callable[[type], Callable[[Any], Any]] = _make_copier


# What a pod's row accounting depends on (see _PodDerived); a tuple of the field objects.
_DERIVED_FIELDS = ("namespace", "labels", "containers", "init_containers", "overhead", "_overhead_nanos",
                   "resources", "affinity", "node_allocatable_claim_nanos")
#: (compiled: the Pod's slot fields read by offset, ~9 getattr calls a derivation saved)
_derived_key = tuple_getter(_Pod, _DERIVED_FIELDS)
_LABELS_AT = _DERIVED_FIELDS.index("labels")


def _labels_alone_differ(values: tuple, keep: tuple) -> bool:
    """Whether two ``_derived_key`` tuples are equal in every field but the labels (which then
    may or may not differ): the fields compared by value, the objects in practice the same."""
    return values[:_LABELS_AT] == keep[:_LABELS_AT] and values[_LABELS_AT + 1:] == keep[_LABELS_AT + 1:]


# Fields that differ between pods of one template, or that are derived caches.
_POD_OWN_FIELDS = frozenset({"name", "uid", "node_name", "manifest", "_requests", "_non_zero_requests",
                             "_scoring_requests"})
_NODE_OWN_FIELDS = frozenset({"name", "uid", "labels", "manifest"})


@functools.lru_cache(maxsize=None)
def _template_fields(cls: type, own: frozenset) -> tuple[str, ...]:
    """The fields pods (nodes) of one template share: all but their own (name, uid, ...)."""
    return tuple(name for name in _field_names(cls) if name not in own)


@functools.lru_cache(maxsize=None)
def _make_template_getter(cls: type, own: frozenset) -> Callable[[Any], tuple]:
    return operator.attrgetter(*_template_fields(cls, own))


_template_getter: Callable[[type, frozenset], Callable[[Any], tuple]] = _make_template_getter


def uid_words(uids: list[str]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(hi, lo, ok)``: each uid parsed as a canonical UUID into two uint64 words, ``ok`` (uint8)
    0 where it is not one (such uids are kept as strings)."""
    n = len(uids)
    hi = np.empty(n, dtype=np.uint64)
    lo = np.empty(n, dtype=np.uint64)
    ok = np.empty(n, dtype=np.uint8)
    _table.parse_uids(uids, hi, lo, ok)
    return hi, lo, ok


def pod_template_getter(cls: type):
    """A function returning the field objects pods (of class ``cls``) of one template share: every
    field but name, uid, ``spec.nodeName``, manifest and the cached request totals."""
    return _template_getter(cls, _POD_OWN_FIELDS)


class _PodDerived:
    """What the row accounting needs from a pod spec, computed once per distinct spec."""

    __slots__ = ("keep", "shape", "signature", "affinity_signature", "flags", "host_ports")

    def __init__(self, keep: tuple, shape: int, signature: int, affinity_signature: int, flags: int,
                 host_ports: tuple):
        self.keep = keep  # the field objects of the key: their ids stay valid while kept
        self.shape = shape
        self.signature = signature
        self.affinity_signature = affinity_signature
        self.flags = flags
        self.host_ports = host_ports


def release_template(templates: list, index: dict, free: list[int], t: int) -> None:
    """One user fewer of template ``t`` of ``templates`` (a pod template's record or a node
    template's row): at zero the template is forgotten, its key dropped from ``index`` and its
    slot put on ``free`` for the next template interned (slots, not list removals: records and
    rows hold the template's position)."""
    tmpl = templates[t]
    assert tmpl is not None  # a user's template is live
    tmpl.refs -= 1
    if tmpl.refs == 0:
        del index[tmpl.key]
        templates[t] = None
        free.append(t)


class _PodTemplate:
    """Pods identical but for name and uid (``spec.nodeName`` being their row's node)."""

    __slots__ = ("key", "values", "prototype", "derived", "terminating", "refs")

    def __init__(self, key: tuple, values: tuple, prototype: "Pod", derived: _PodDerived):
        self.key = key
        self.values = values          # the shared field objects (the key holds their ids)
        self.prototype = prototype    # request totals computed: every rebuilt pod shares them
        self.derived = derived
        self.terminating = prototype.deletion_timestamp is not None
        self.refs = 0                 # records using it; freed at zero


class _NodeTemplate:
    """Nodes identical but for name, uid and label values (same label keys, in the same order)."""

    __slots__ = ("key", "cls", "values", "prototype", "label_keys", "alloc", "allowed_pods", "taint_set", "refs")

    def __init__(self, key: tuple, values: tuple, prototype: "Node", label_keys: tuple):
        self.key = key
        self.cls = type(prototype)
        self.values = values
        self.prototype = prototype
        self.label_keys = label_keys
        self.alloc: list[tuple[int, int]] = []   # (column, amount) of allocatable, in order
        self.allowed_pods = 0
        self.taint_set = 0
        self.refs = 0                 # rows using it; freed at zero


class RowNodes(Sequence):
    """``table.nodes``: the Node of each row (None for a free row), rebuilt on first access."""

    __slots__ = ("_table",)

    def __init__(self, table: "NodeTable"):
        self._table = table

    def __getitem__(self, row):
        t = self._table
        node = t._node_objs.get(row)
        if node is None and t.node_template[row] >= 0:
            node = t._build_node(int(row))
        return node

    def __len__(self) -> int:
        return self._table.capacity

    def __iter__(self) -> Iterator["Node | None"]:
        return (self[row] for row in range(self._table.capacity))


class RowPorts(Sequence):
    """``table.ports``: each row's HostPortInfo, None when no pod on the row uses a host port."""

    __slots__ = ("_table",)

    def __init__(self, table: "NodeTable"):
        self._table = table

    @overload
    def __getitem__(self, row: int) -> HostPortInfo | None: ...
    @overload
    def __getitem__(self, row: slice) -> NoReturn: ...  # (rows only: a slice is no dict key)

    def __getitem__(self, row: Any) -> HostPortInfo | None:
        return self._table._ports.get(row)

    def __len__(self) -> int:
        return self._table.capacity

    def __iter__(self) -> Iterator[HostPortInfo | None]:
        return (self[row] for row in range(self._table.capacity))


class RowPods(Sequence):
    """``table.pods``: each row's PodInfo list (in the table's pod order), built on first access and
    kept in step with the row afterwards. Do not mutate the lists."""

    __slots__ = ("_table",)

    def __init__(self, table: "NodeTable"):
        self._table = table

    def __getitem__(self, row) -> list[PodInfo]:
        t = self._table
        lst = t._row_lists.get(row)
        if lst is None:
            if t.row_first[row] < 0:
                return []
            row = int(row)
            lst = t._row_lists[row] = [t.pod_info(rec) for rec in t._acc.records(row)]
        return lst

    def __len__(self) -> int:
        return self._table.capacity

    def built(self, row: int) -> list[PodInfo] | None:
        """The row's PodInfo list when it was built already, else None (nothing is built)."""
        return self._table._row_lists.get(row)

    def __iter__(self) -> Iterator[list[PodInfo]]:
        return (self[row] for row in range(self._table.capacity))


class LazyObjects:
    """The template and lazy-object methods of :class:`~fastsched.snapshot.table.NodeTable` (a
    mixin: they work on the table's columns and its template and object dicts)."""

    if TYPE_CHECKING:  # what the mixin uses of NodeTable (declared there)
        _shared: set[str]
        node_names: np.ndarray
        node_template: np.ndarray
        _node_uid_hi: np.ndarray
        _node_uid_lo: np.ndarray
        _node_uid_str: dict[int, str]
        _node_objs: dict[int, Node]
        _node_templates: list[_NodeTemplate | None]
        _node_template_index: dict[tuple, int]
        _free_node_templates: list[int]
        pod_row: np.ndarray
        pod_flags: np.ndarray
        pod_template: np.ndarray
        pod_uid_hi: np.ndarray
        pod_uid_lo: np.ndarray
        pod_names: list[str | None]
        _pod_uid_str: dict[int, str]
        _pod_infos: dict[int, PodInfo]
        _pod_templates: list[_PodTemplate | None]
        _pod_template_index: dict[tuple, int]
        _free_pod_templates: list[int]

        def _own(self, *names: str) -> None: ...
        def intern_resource(self, name: str) -> int: ...
        def _taint_set_id(self, taints: tuple) -> int: ...
        def _row_labels(self, row: int, keys: Iterable[str]) -> dict[str, str]: ...
        def _derive(self, pod: Pod) -> _PodDerived: ...

    def _node_template_of(self, node: "Node", values: tuple, label_keys: tuple) -> int:
        """The template of ``node`` (created when new: its node-side columns are computed here,
        in the order single adds would intern resources and taint sets)."""
        key = (type(node), label_keys, *map(id, values))
        t = self._node_template_index.get(key)
        if t is not None:
            return t
        tmpl = _NodeTemplate(key, values, node, label_keys)
        for name, amount in node.allocatable.items():
            if name != PODS:
                tmpl.alloc.append((self.intern_resource(name), amount))
        tmpl.allowed_pods = node.allocatable.get(PODS, 0)
        tmpl.taint_set = self._taint_set_id(tuple(node.taints))
        if self._free_node_templates:
            t = self._free_node_templates.pop()
            self._node_templates[t] = tmpl
        else:
            t = len(self._node_templates)
            self._node_templates.append(tmpl)
        self._node_template_index[key] = t
        return t

    def _leave_node_template(self, row: int) -> None:
        """The row no longer uses its template (if it had one): forget the template when no row does."""
        t = int(self.node_template[row])
        if t < 0:
            return
        if self._shared:
            self._own("node_template")
        self.node_template[row] = -1
        release_template(self._node_templates, self._node_template_index, self._free_node_templates, t)

    def _build_node(self, row: int) -> "Node":
        """The Node of a templated row, rebuilt and kept."""
        tmpl = self._node_templates[self.node_template[row]]
        assert tmpl is not None  # a row's template is live
        proto = tmpl.prototype
        node = _copier(type(proto))(proto)
        node.name = self.node_names[row]
        node.uid = self._node_uid_str.pop(row, None) or _table.format_uid(self._node_uid_hi[row], self._node_uid_lo[row])
        node.labels = type(proto.labels)(self._row_labels(row, tmpl.label_keys))
        self._node_objs[row] = node
        self._leave_node_template(row)
        return node

    def node_allocatable(self, row: int):
        """The allocatable mapping of the row's node (without building a templated Node)."""
        node = self._node_objs.get(row)
        if node is None:
            node = self._node_templates[self.node_template[row]].prototype
        return node.allocatable

    def node_images(self, row: int) -> tuple:
        """The images of the row's node (without building a templated Node)."""
        node = self._node_objs.get(row)
        if node is None:
            node = self._node_templates[self.node_template[row]].prototype
        return node.images

    def _pod_template_of(self, pod: "Pod", values: tuple) -> int:
        cls = type(pod)
        key = (cls, *map(id, values))
        t = self._pod_template_index.get(key)
        if t is not None:
            return t
        derived = self._derive(pod)
        proto = _copier(cls)(pod)
        proto.requests, proto.non_zero_requests  # computed once, shared by every rebuilt pod  # noqa: B018
        tmpl = _PodTemplate(key, values, proto, derived)
        if self._free_pod_templates:
            t = self._free_pod_templates.pop()
            self._pod_templates[t] = tmpl
        else:
            t = len(self._pod_templates)
            self._pod_templates.append(tmpl)
        self._pod_template_index[key] = t
        return t

    def pod_uid(self, rec: int) -> str:
        """The uid of record ``rec``'s pod."""
        if self.pod_flags[rec] & FLAG_UID_STRING:
            return self._pod_uid_str[rec]
        return _table.format_uid(self.pod_uid_hi[rec], self.pod_uid_lo[rec])

    @staticmethod
    def _set_uids(hi: np.ndarray, lo: np.ndarray, strings: dict[int, str], at: list[int], uids: list[str],
                  flags: np.ndarray | None, words: tuple | None = None) -> None:
        """Store ``uids`` at positions ``at``: canonical UUIDs in ``hi`` / ``lo`` (16 bytes), the
        others in ``strings`` (with ``FLAG_UID_STRING`` in ``flags`` when given). ``words``: the
        uids already parsed (:func:`uid_words`)."""
        h, l, ok = words if words is not None else uid_words(uids)
        idx = np.asarray(at, dtype=np.int64)
        hi[idx] = h
        lo[idx] = l
        if flags is not None:
            flags[idx] &= ~np.uint8(FLAG_UID_STRING)
        if not ok.all():
            for k in np.flatnonzero(ok == 0).tolist():
                strings[at[k]] = uids[k]
            if flags is not None:
                flags[idx[ok == 0]] |= np.uint8(FLAG_UID_STRING)

    def pod_prototype(self, rec: int) -> "Pod | None":
        """Record ``rec``'s template prototype while its PodInfo is not built, else None: every
        field of the pod :meth:`pod_info` would build but name, uid, ``spec.nodeName`` and manifest
        (requests included). Readers that need no more skip building the PodInfo. No Pod object of
        such a record exists yet, so nothing can have changed one of its fields in place."""
        if rec in self._pod_infos:
            return None
        tmpl = self._pod_templates[self.pod_template[rec]]
        assert tmpl is not None  # a record without a PodInfo has a live template
        return tmpl.prototype

    def prototype_ids(self, recs: np.ndarray) -> np.ndarray:
        """:meth:`pod_prototype` for many records: (n,) int64, per record of ``recs`` ((n,) int64)
        the id of its template while its PodInfo is not built, else -1 (where ``pod_prototype``
        answers None); :meth:`template_prototype` gives an id's prototype."""
        ids = self.pod_template[recs].astype(np.int64)
        infos = self._pod_infos
        if infos:
            built = [k for k, rec in enumerate(recs.tolist()) if rec in infos]
            if built:
                ids[built] = -1
        return ids

    def template_prototype(self, t: int) -> "Pod":
        """The prototype of the live pod template ``t`` (an id :meth:`prototype_ids` gave)."""
        tmpl = self._pod_templates[t]
        assert tmpl is not None  # ids come from live records
        return tmpl.prototype

    def pod_info(self, rec: int) -> PodInfo:
        """The PodInfo of record ``rec`` (rebuilt from its template on first access, then kept)."""
        pi = self._pod_infos.get(rec)
        if pi is None:
            tmpl = self._pod_templates[self.pod_template[rec]]
            assert tmpl is not None  # a record's template is live
            proto = tmpl.prototype
            pod = _copier(type(proto))(proto)
            pod.name = self.pod_names[rec]
            pod.uid = self.pod_uid(rec)
            pod.node_name = self.node_names[self.pod_row[rec]]
            pi = self._pod_infos[rec] = PodInfo(pod)
        return pi
