"""Forks' copy-on-write of the node table's columns and per-node containers.

**Forks: columns copy-on-write.** A fork of the table (``Scheduler.fork()``, a transaction:
:mod:`fastsched.scheduler.fork`) does not copy the NumPy columns:
:meth:`CopyOnWriteColumns.share_columns` makes them read-only (``flags.writeable`` False) and both
tables hold the same arrays, names listed in ``_shared``. Every write path first takes ownership of
the columns it writes (:meth:`CopyOnWriteColumns._own`: a copy, which only that table holds,
writable), so a column is copied by the side that writes it, when it first does; a fork costs what
changes after it, not the cluster. The compiled bookkeeping (``_table.Accounts``) binds its writing
views only while all the columns it writes are owned (:meth:`CopyOnWriteColumns._own_accounts` owns
them together); its reading methods work on shared columns. A write that missed taking ownership
fails (NumPy refuses to write into a read-only array, Accounts raises) instead of changing the other
table. With no fork alive ``_shared`` is empty and a write path's whole cost is one test of it.

The per-node containers are shared the same way: ``row_of`` (ownership name :data:`ROW_OF`) and, per
label key, ``_label_value_code[key]`` and ``label_values[key]`` (owned together, as ``VALUES_PREFIX
+ key``; the key dicts around them are the fork's own copies, O(label keys)). They are instances of
small dict / list subclasses (:class:`_Index`, :class:`_Values`) that override nothing, so reads are
plain C-level lookups; sharing swaps their class in place to a read-only sibling of the same layout
(:class:`_SharedIndex`, :class:`_SharedValues`) whose mutating methods raise
:class:`SharedWriteError`, and :meth:`CopyOnWriteColumns._own` replaces one by a writable copy. They
pickle and copy (``copy.copy``, ``copy.deepcopy``) as writable containers.

This module holds the pieces: the names of the shared columns, the containers and
:class:`CopyOnWriteColumns`, the table's methods that share columns and take them back (a mixin
of :class:`~fastsched.snapshot.table.NodeTable`). They are apart from the table because they are
one mechanism, read and checked on its own, that every write path of the table only calls into
(moved here from the table, as they were). :meth:`CopyOnWriteColumns.__fork__` is the table's
``__fork__`` hook (:mod:`fastsched.util.forking`): what a fork of the table shares and copies.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Iterable

import numpy as np

from ..util.forking import ForkCopier

__all__ = ["ROW_COLUMNS", "RECORD_COLUMNS", "SHAPE_COLUMNS", "SHARED_COLUMNS", "LABEL_PREFIX", "ACCOUNTS_COLUMNS",
           "ROW_OF", "VALUES_PREFIX", "SharedWriteError", "SHARED_CONTAINER_TYPES", "CopyOnWriteColumns"]

#: the columns forks share copy-on-write (see the module docstring), by attribute: per row ...
ROW_COLUMNS = ("live", "alloc", "requested", "nonzero_requested", "allowed_pods", "pod_count", "unschedulable",
               "taint_set", "has_host_ports", "pods_with_affinity", "pods_with_req_anti", "terminating_pods",
               "row_version", "node_template", "row_first", "row_last", "node_names", "_node_uid_hi", "_node_uid_lo")
#: ... per pod record ...
RECORD_COLUMNS = ("pod_row", "pod_next", "pod_prev", "pod_shape", "pod_flags", "pod_signature",
                  "pod_affinity_signature", "pod_template", "pod_uid_hi", "pod_uid_lo")
#: ... per request shape; and the label code columns, as ``LABEL_PREFIX + key``
SHAPE_COLUMNS = ("shape_offsets", "shape_cols", "shape_amounts", "shape_nonzero")
SHARED_COLUMNS = ROW_COLUMNS + RECORD_COLUMNS + SHAPE_COLUMNS
LABEL_PREFIX = "label:"
#: the columns ``_table.Accounts`` writes (owned together before it writes)
ACCOUNTS_COLUMNS = ("requested", "nonzero_requested", "pod_count", "pods_with_affinity", "pods_with_req_anti",
                    "terminating_pods", "row_version", "row_first", "row_last") + RECORD_COLUMNS
#: the columns it binds (it reads the shape columns): replacing one of them rebinds it
_ACCOUNTS_BOUND = frozenset(ACCOUNTS_COLUMNS + SHAPE_COLUMNS)
#: the per-node containers forks share copy-on-write, by ownership name: ``row_of`` (node name ->
#: row), and per label key ``VALUES_PREFIX + key`` (``_label_value_code[key]``, value -> code, and
#: ``label_values[key]``, value by code, owned together)
ROW_OF = "row_of"
VALUES_PREFIX = "values:"


class SharedWriteError(ValueError):
    """A write into a container shared with a fork (read-only until its table takes ownership)."""


def _read_only(self: Any, *args: Any, **kwargs: Any) -> Any:
    raise SharedWriteError(f"this {type(self).__name__} is read-only: shared with a fork (a write path must "
                           "take ownership first: NodeTable._own)")


class _Index(dict):
    """A node-table dict of immutable keys and values that forks share copy-on-write (``row_of``,
    ``_label_value_code[key]``). A plain dict to its readers: no method overridden, lookups at C
    speed. Sharing swaps its class to :class:`_SharedIndex` (same layout) in place."""

    __slots__ = ()

    def __reduce__(self):  # pickles, copies and deep-copies as a writable _Index (shared or not)
        return (_Index, (dict(self),))

    def __fork__(self, copier: ForkCopier) -> "_Index":
        # reached outside its table (NodeTable.__fork__ shares the table's own): a writable copy
        return copier.remember(self, _Index(self))


class _SharedIndex(_Index):
    """An :class:`_Index` shared with a fork: every mutating method raises :class:`SharedWriteError`."""

    __slots__ = ()
    __setitem__ = __delitem__ = pop = popitem = setdefault = update = clear = __ior__ = _read_only


class _Values(list):
    """A node-table list of immutable items that forks share copy-on-write (``label_values[key]``),
    as :class:`_Index`; read-only sibling :class:`_SharedValues`."""

    __slots__ = ()

    def __reduce__(self):
        return (_Values, (list(self),))

    def __fork__(self, copier: ForkCopier) -> "_Values":
        return copier.remember(self, _Values(self))


class _SharedValues(_Values):
    """A :class:`_Values` shared with a fork: every mutating method raises :class:`SharedWriteError`."""

    __slots__ = ()
    __setitem__ = __delitem__ = append = extend = insert = pop = remove = sort = reverse = clear = _read_only
    __iadd__ = __imul__ = _read_only


#: the read-only classes of shared containers
SHARED_CONTAINER_TYPES = (_SharedIndex, _SharedValues)


def _shared_container(obj: Any, writable: type, shared: type) -> Any:
    """``obj`` made read-only in place (its class swapped); a plain container (from an older pickle)
    becomes a read-only copy."""
    cls = type(obj)
    if cls is writable:
        obj.__class__ = shared
        return obj
    if cls is shared:
        return obj
    return shared(obj)


class CopyOnWriteColumns:
    """The copy-on-write methods of :class:`~fastsched.snapshot.table.NodeTable` (a mixin: they
    work on the table's columns, containers, ``_shared`` set and compiled ``_acc``)."""

    if TYPE_CHECKING:  # what the mixin uses of NodeTable (declared there)
        _shared: set[str]
        _acc: Any  # the compiled _table.Accounts (the kernels have no stubs)
        label_codes: dict[str, np.ndarray]
        label_values: dict[str, _Values]
        _label_value_code: dict[str, _Index]
        row_of: dict[str, int]

        def label_codes_for(self, key: str) -> np.ndarray: ...
        def _forked_identity(self) -> None: ...

    def share_columns(self) -> list[str]:
        """Make every column and per-node container read-only, to be shared with a fork (which
        holds the same objects); returns the names shared (:data:`SHARED_COLUMNS`, ``LABEL_PREFIX +
        key``, :data:`ROW_OF`, ``VALUES_PREFIX + key``). From now on this table copies a column or
        container before it first writes it (:meth:`_own`)."""
        for name in SHARED_COLUMNS:
            self.__dict__[name].flags.writeable = False
        for col in self.label_codes.values():
            col.flags.writeable = False
        self._shared = set(SHARED_COLUMNS)
        self._shared.update(LABEL_PREFIX + key for key in self.label_codes)
        # the containers: their class swapped in place (O(1) each; O(label keys) in all)
        self.row_of = _shared_container(self.row_of, _Index, _SharedIndex)
        codes, values = self._label_value_code, self.label_values
        for key in codes:
            codes[key] = _shared_container(codes[key], _Index, _SharedIndex)
            values[key] = _shared_container(values[key], _Values, _SharedValues)
        self._shared.add(ROW_OF)
        self._shared.update(VALUES_PREFIX + key for key in codes)
        self._acc.bind(self)  # its writing views go (they would write into the shared arrays)
        return sorted(self._shared)

    def shared_columns(self) -> frozenset[str]:
        """The names of the columns this table still shares with a fork (read-only here)."""
        return frozenset(name for name in self._shared if name != ROW_OF and not name.startswith(VALUES_PREFIX))

    def shared_containers(self) -> frozenset[str]:
        """The names of the per-node containers this table still shares with a fork (:data:`ROW_OF`,
        ``VALUES_PREFIX + key``; read-only here)."""
        return frozenset(name for name in self._shared if name == ROW_OF or name.startswith(VALUES_PREFIX))

    def _own(self, *names: str) -> None:
        """Take ownership of the shared columns and containers among ``names`` (a private, writable
        copy) before writing them. Call sites test ``self._shared`` first: without forks this
        costs nothing."""
        shared = self._shared
        rebind = False
        for name in names:
            if name not in shared:
                continue
            shared.discard(name)
            if name.startswith(LABEL_PREFIX):
                key = name[len(LABEL_PREFIX):]
                self.label_codes[key] = self.label_codes[key].copy()
            elif name == ROW_OF:
                self.row_of = _Index(self.row_of)  # a C-level copy
            elif name.startswith(VALUES_PREFIX):
                key = name[len(VALUES_PREFIX):]
                self._label_value_code[key] = _Index(self._label_value_code[key])
                self.label_values[key] = _Values(self.label_values[key])
            else:
                setattr(self, name, self.__dict__[name].copy())
                rebind = rebind or name in _ACCOUNTS_BOUND
        if rebind:
            self._acc.bind(self)

    def _own_accounts(self) -> None:
        """Own every column ``_table.Accounts`` writes, so that it binds its writing views."""
        self._own(*ACCOUNTS_COLUMNS)

    def _own_labels(self, keys: Iterable[str]) -> None:
        self._own(*[LABEL_PREFIX + key for key in keys])

    def _owned_label_column(self, key: str) -> np.ndarray:
        """The code column of ``key`` (created when new), owned: for writing."""
        if self._shared:
            self._own(LABEL_PREFIX + key)
        return self.label_codes_for(key)

    def __fork__(self, copier: ForkCopier) -> Any:
        """The fork's table (fastsched.util.forking): the columns and per-node containers shared
        copy-on-write (see the module docstring), the rest copied."""

        table = self
        clone = object.__new__(type(table))
        copier.remember(table, clone)
        memo = copier.memo
        # the columns and per-node containers: shared, read-only in both tables, each copied by the
        # side that first writes it (NodeTable.share_columns / _own); one some other part of the
        # state reached first (and copied) stays that copy, the fork's own
        copied_before = {name for name in SHARED_COLUMNS if id(table.__dict__[name]) in memo}
        copied_before.update(LABEL_PREFIX + key for key, col in table.label_codes.items() if id(col) in memo)
        # (the containers' objects before sharing: a plain one is replaced by a read-only copy)
        containers_before = (table.row_of, dict(table._label_value_code), dict(table.label_values))
        table.share_columns()
        shared = set(table.shared_columns()) - copied_before
        labels = {}
        for key, col in table.label_codes.items():
            labels[key] = memo[id(col)] if LABEL_PREFIX + key in copied_before else copier.remember(col, col)
        # (such a copy of a column that was already shared is read-only: the fork takes ownership too)
        shared.update(name for name in copied_before
                      if not (labels[name[len(LABEL_PREFIX):]] if name.startswith(LABEL_PREFIX)
                              else memo[id(table.__dict__[name])]).flags.writeable)

        # the containers: the same objects (now read-only), or the copies made before; the fork
        # shares a name while its object is of a read-only class
        def same_or_copy(before: Any, now: Any) -> Any:
            copied = memo.get(id(before), memo)
            return copier.remember(now, now) if copied is memo else copied

        row_of = same_or_copy(containers_before[0], table.row_of)
        if type(row_of) in SHARED_CONTAINER_TYPES:
            shared.add(ROW_OF)
        codes_before, values_before = containers_before[1], containers_before[2]
        value_codes, values = {}, {}
        for key, codes in table._label_value_code.items():
            value_codes[key] = same_or_copy(codes_before[key], codes)
            values[key] = same_or_copy(values_before[key], table.label_values[key])
            if type(value_codes[key]) in SHARED_CONTAINER_TYPES or type(values[key]) in SHARED_CONTAINER_TYPES:
                shared.add(VALUES_PREFIX + key)
        for k, v in table.__dict__.items():
            if k in ("_acc", "_change_rows", "_change_pos"):  # (the fork's own: _forked_identity)
                continue
            if k in SHARED_COLUMNS:
                clone.__dict__[k] = memo[id(v)] if k in copied_before else copier.remember(v, v)
            elif k == "label_codes":
                clone.__dict__[k] = labels
            elif k == "_shared":
                clone.__dict__[k] = shared
            elif k == ROW_OF:
                clone.__dict__[k] = row_of
            elif k == "_label_value_code" and id(v) not in memo:  # (their key dicts: O(label keys))
                clone.__dict__[k] = copier.remember(v, value_codes)
            elif k == "label_values" and id(v) not in memo:
                clone.__dict__[k] = copier.remember(v, values)
            else:
                clone.__dict__[k] = copier.copy(v)
        clone._forked_identity()
        return clone
