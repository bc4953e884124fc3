"""Forks and transactions of a Scheduler: what-ifs that leave the original as it was.

:func:`fork_scheduler` (``Scheduler.fork()``) returns an independent Scheduler in the same state:
the same cluster, queue, pending results, clock, RNG states and plugin state, so that given the
same further inputs it places pods bit for bit as the original would. :class:`Transaction`
(``with sched.transaction() as tx: ...``) saves the state on entry and puts it back on exit unless
``tx.commit()`` was called (an exception inside the block reverts too).

How the state is copied. The Scheduler's state is walked once, as :func:`copy.deepcopy` walks it,
with these differences, which are what make a fork cheap next to a deep copy:

* the API objects (Pods, Nodes, their specs: everything of :mod:`fastsched.api`), the parsed
  configuration (:mod:`fastsched.config`), plugin registries and functions are **shared**: the
  scheduler never changes them in place (a change is a new object, ``pod.replace(...)``), so the
  fork and the original can hold the same ones. The one exception, an assumed pod waiting at
  Permit (its ``start_time`` is set at bind), is copied;
* PodInfos are shared too (the node table builds them and never changes them), except the
  queue's, which ``PodInfo.update`` changes: those are copied;
* the per-pod records the scheduler changes in place (``results``: a PodResult per pod; the
  cache's entry per pod) are held in :class:`SharedValueDict` objects: the fork's dict is a C-level
  copy whose values are shared, and a record is copied the first time the fork or the original
  reads it (the original keeps its objects: the PodResults ``run()`` returned stay live);
* the node table's NumPy columns are **shared copy-on-write**: both tables hold the same arrays,
  made read-only, and each table copies a column when it first writes it (``NodeTable.share_columns``
  and ``_own``, see :mod:`fastsched.snapshot.table`): a fork copies what changes after it (placing a
  pod copies the bookkeeping columns: requests, pod counts, pod lists; allocatable, labels, taints
  stay shared), and a write path that forgot to take ownership fails instead of changing the other
  side. Its per-node containers (``row_of``; per label key, the value -> code dict and the value
  list) are shared the same way: made read-only by a class swap, copied by the side that first
  writes one (a node added, removed or renamed copies ``row_of``; a new value of a key copies that
  key's two). The snapshot's node-order arrays (zone and sequence per row, the order) are shared
  likewise (``Snapshot.share_arrays``). Other NumPy arrays are copied as whole buffers. The fork's
  compiled bookkeeping
  (``_table.Accounts``) is bound to its table, and the fork's table gets a new ``uid`` so that
  caches keyed on the table (plugins' per-table caches, the compiled cycle's plans) never mix the two;
* caches that are pure functions of the state (the compiled cycle's plans and bound columns) are
  left empty in the fork: they are rebuilt on first use, with the same results;
* the cyclic collector is paused during the copy (its passes over the heap would cost as much).

A fork thus costs C-level copies of the per-pod dicts and lists (about 1 µs per pod the scheduler
placed itself; pods added in bulk are columns), a Python pass over the small containers and the
queue, and later a copy of each column or per-node container either side writes and one shallow
copy per pod record that either side touches: nothing per node (thread CPU: 1.3 ms for 5,000
nodes, 1.4 ms for 100,000, 1.8 ms for 1,000,000; 11 ms with 20,000 placed pods). The first node
added, removed or renamed on either side then copies ``row_of`` and the hostname label's
containers (about 0.7 ms at 100,000 nodes).

A fork starts without the original's ``bound_callbacks`` / ``preemption_callbacks`` (observers of
the original, e.g. a simulation's recorder); a transaction keeps them. While records are shared,
their lookups go through :class:`SharedValueDict`'s Python-level accessors (scheduling 20,000 pods
on 5,000 nodes took 11% longer with a fork alive); ``release(fork.__dict__)`` says a fork is
dropped, and once nothing is shared the dicts are plain dicts again (capacity and transactions do
it for theirs; a fork dropped without it is forgotten when the garbage collector frees it, but the
dicts stay SharedValueDicts).

On revert a transaction replaces the Scheduler's state by the saved one: objects reached through
the Scheduler before the revert (``sched.queue``, ``sched.snapshot.table``, PodResults returned by
``run()``) are the discarded ones afterwards: read them again from the Scheduler.
"""
from __future__ import annotations

import copyreg
import gc
import itertools
import re
import threading
import types
import weakref
from collections import OrderedDict, defaultdict
from enum import Enum
from typing import TYPE_CHECKING, Any, Callable, Literal, Mapping

import numpy as np

from ..framework.types import PodInfo, QueuedPodInfo
from ..util.collector import collector_paused

if TYPE_CHECKING:  # pragma: no cover
    from .scheduler import Scheduler

#: modules whose classes are values: never changed in place once built, so forks share them
_SHARED_MODULE_PREFIXES = ("fastsched.api", "fastsched.config", "fastsched.features")
_ATOMIC = (type(None), int, float, bool, complex, str, bytes, type, range, slice, types.FunctionType,
           types.BuiltinFunctionType, types.BuiltinMethodType, types.ModuleType, types.MethodDescriptorType,
           types.WrapperDescriptorType, property, weakref.ref, re.Pattern, type(Ellipsis), type(NotImplemented),
           np.dtype, np.generic, frozenset, types.CodeType)
#: lock type -> how to make a new one (a fork gets its own, unlocked)
_LOCK_TYPES = {type(threading.Lock()): threading.Lock, type(threading.RLock()): threading.RLock}


class SharedValueDict(dict):
    """A dict whose values (mutable per-pod records: a PodResult, a cache entry) may be shared with
    the dicts of forks of its scheduler, and are copied on first access instead of at the fork.

    The dicts forked from one another form a family; a key's value object may be held by several
    members. The first time a member reads a key it does not own, the value becomes private: the
    oldest member holding the object keeps it (so the original scheduler keeps the very objects it
    handed out, e.g. the PodResults ``run()`` returned) and gives every younger holder a shallow
    copy; a younger member takes a copy for itself. A fork thus copies these records for the pods
    it (or its original) touches afterwards, not for every pod. Writes (``d[k] = v``) make the key
    owned; ``values()`` and ``items()`` return lists (each value made private).
    """

    __slots__ = ("_family", "_rank", "_owned", "_home", "__weakref__")

    def __init__(self, *args: Any, **kwargs: Any):
        super().__init__(*args, **kwargs)
        # the members (weak references, shared by all of them), None until the first fork
        self._family: list[weakref.ref] | None = None
        self._rank = 0                                 # lower = older
        self._owned: set = set()
        #: (weak reference to the object holding this dict, its attribute name), see become_plain
        self._home: tuple[weakref.ref, str] | None = None

    def set_home(self, owner: Any, attr: str) -> None:
        self._home = (weakref.ref(owner), attr)

    def become_plain(self) -> None:
        """Once no other member shares its values: put a plain dict with the same items in its
        place (its holder reads it through the attribute), sparing the scheduler the Python-level
        accessors of this class."""
        self._family = None
        home = self._home
        owner = home[0]() if home is not None else None
        if home is not None and owner is not None and getattr(owner, home[1], None) is self:
            setattr(owner, home[1], dict(self))  # a C-level copy of the items

    def forked(self) -> "SharedValueDict":
        """A new member of this dict's family with the same items (all values shared)."""
        if self._family is None:
            self._family = [weakref.ref(self)]
            self._rank = next(_RANKS)
        family = self._family
        family[:] = [r for r in family if r() is not None]  # forget members that are gone
        clone = SharedValueDict(self)
        clone._family = family
        clone._rank = next(_RANKS)
        family.append(weakref.ref(clone))
        self._owned = set()  # from now on every value is shared with the clone
        return clone

    def detach(self) -> None:
        """Leave the family: the others stop copying records for this dict (which keeps sharing
        its values with them until it reads them: call it on a dict about to be dropped)."""
        if self._family is not None:
            self._family[:] = [r for r in self._family if r() is not None and r() is not self]

    def _private(self, key: Any, value: Any) -> Any:
        holders = [d for d in map(_deref, self._family or ())
                   if d is not None and d is not self and dict.get(d, key, _UNSET) is value]
        self._owned.add(key)
        if not holders:
            return value
        if all(self._rank < d._rank for d in holders):
            for d in holders:  # the oldest holder keeps the object; the younger ones get copies
                dict.__setitem__(d, key, _record_copy(value))
                d._owned.add(key)
            return value
        mine = _record_copy(value)
        dict.__setitem__(self, key, mine)
        return mine

    def __getitem__(self, key: Any) -> Any:
        value = dict.__getitem__(self, key)
        if self._family is None or key in self._owned:
            return value
        return self._private(key, value)

    def get(self, key: Any, default: Any = None) -> Any:
        value = dict.get(self, key, _UNSET)
        if value is _UNSET:
            return default
        if self._family is None or key in self._owned:
            return value
        return self._private(key, value)

    def __setitem__(self, key: Any, value: Any) -> None:
        dict.__setitem__(self, key, value)
        if self._family is not None:
            self._owned.add(key)

    def __delitem__(self, key: Any) -> None:
        dict.__delitem__(self, key)
        self._owned.discard(key)

    def pop(self, key: Any, *default: Any) -> Any:
        if key in self:
            value = self[key]
            dict.__delitem__(self, key)
            self._owned.discard(key)
            return value
        if default:
            return default[0]
        raise KeyError(key)

    def popitem(self) -> tuple:
        key = next(reversed(self))
        return key, self.pop(key)

    def setdefault(self, key: Any, default: Any = None) -> Any:
        if key in self:
            return self[key]
        self[key] = default
        return default

    def update(self, *args: Any, **kwargs: Any) -> None:
        for key, value in dict(*args, **kwargs).items():
            self[key] = value

    def clear(self) -> None:
        dict.clear(self)
        self._owned.clear()

    def values(self) -> list:  # type: ignore[override]
        return [self[key] for key in self]

    def items(self) -> list:  # type: ignore[override]
        return [(key, self[key]) for key in self]

    def copy(self) -> dict:
        return dict(self.items())

    def __reduce__(self):  # pickles (and deep-copies) as a plain dict of private values
        return (dict, (self.items(),))


_RANKS = itertools.count()
# copyreg's private helpers (what copy and pickle use), which typeshed does not declare
_slotnames: Callable[[type], list[str]] = getattr(copyreg, "_slotnames")
_NEWOBJ: Callable[..., Any] = getattr(copyreg, "__newobj__")
#: classes found to be shared (values, atomics, ...), kept across forks; a weak set: classes
#: defined at run time (a test's, a user's) may go away
_SHARED_CLASSES: "weakref.WeakSet[type]" = weakref.WeakSet()
#: per plain class: (its slots, whether it has a __dict__)
_PLAIN_LAYOUTS: "weakref.WeakKeyDictionary[type, tuple]" = weakref.WeakKeyDictionary()


def _deref(ref: weakref.ref) -> Any:
    return ref()


def _record_copy(value: Any) -> Any:
    """A copy of a per-pod record by the fork's rules: its API objects shared, what it holds that
    changes in place copied (a PodResult's decision records: the scheduler appends to its history
    and to a kept record's victims)."""
    cls = type(value)
    if _is_plain(cls) and hasattr(value, "__dict__") and not _slotnames(cls):
        clone = object.__new__(cls)
        clone.__dict__.update(value.__dict__)
    else:
        import copy

        clone = copy.copy(value)
    fields = getattr(clone, "__dict__", None)
    if fields:
        for name, field_value in fields.items():
            if type(field_value) in (list, dict, set):
                # usually empty; else (decision records) copied by the fork's rules, records and
                # their lists included, the API objects in them shared
                fields[name] = (_StateCopier({}, pod_infos_seeded=False).copy(field_value) if field_value
                                else type(field_value)())
    return clone


#: the per-pod record dicts a fork shares copy-on-access: (their owner from the Scheduler, attribute)
_SHARED_VALUE_DICTS: tuple[tuple[Callable[[Any], Any], str], ...] = (
    (lambda scheduler: scheduler, "results"),                          # PodResult per pod
    (lambda scheduler: getattr(scheduler, "cache", None), "_pods"),    # the cache's entry per pod
)


def release(state: Mapping[str, Any]) -> None:
    """Detach the per-pod record dicts of a scheduler state about to be dropped (a fork done with,
    a transaction's discarded side), so that the others no longer copy records for it. Optional:
    a dropped fork is forgotten anyway once the garbage collector frees it."""
    for owner_of, attr in _SHARED_VALUE_DICTS:
        owner = owner_of(_StateView(state))
        current = getattr(owner, attr, None) if owner is not None else None
        if isinstance(current, SharedValueDict) and current._family is not None:
            family = current._family
            current.detach()
            survivors = [d for d in map(_deref, family) if d is not None]
            if len(survivors) == 1:  # nothing shared any more: back to a plain dict
                survivors[0].become_plain()


class _StateView:
    """A scheduler's state dict read as the scheduler (for the owner getters above)."""

    def __init__(self, state: Mapping[str, Any]):
        self.__dict__.update(state)


def _install_shared_value_dicts(scheduler: "Scheduler") -> None:
    """Make the per-pod record dicts SharedValueDicts (once; same items), so that forks share them.
    The scheduler and its cache reach them through the attribute on every use, so replacing the
    dict object is safe."""
    for owner_of, attr in _SHARED_VALUE_DICTS:
        owner = owner_of(scheduler)
        current = getattr(owner, attr, None) if owner is not None else None
        if type(current) is dict:
            current = SharedValueDict(current)
            setattr(owner, attr, current)
        if isinstance(current, SharedValueDict):
            current.set_home(owner, attr)


def _set_homes(state: Mapping[str, Any], scheduler: "Scheduler") -> None:
    """Record where the copied state's SharedValueDicts live (``scheduler`` holds the state)."""
    view = _StateView(state)
    for owner_of, attr in _SHARED_VALUE_DICTS:
        owner = owner_of(view)
        current = getattr(owner, attr, None) if owner is not None else None
        if isinstance(current, SharedValueDict):
            current.set_home(scheduler if owner is view else owner, attr)


_DICT_KEYS: type = type({}.keys())
_DICT_VALUES: type = type({}.values())
_DICT_ITEMS: type = type({}.items())


class _StateCopier:  # implements fastsched.util.forking.ForkCopier
    """A deep copy of a Scheduler's state with the sharing rules of the module docstring.

    ``memo`` maps ``id(original) -> copy`` (as copy.deepcopy's memo); seed it to redirect
    references (the Scheduler itself, objects to copy differently). ``_keep`` holds the originals
    so their ids stay valid during the walk.
    """

    def __init__(self, memo: dict[int, Any], *, pod_infos_seeded: bool = True):
        self.memo = memo
        self._keep: list[Any] = []
        #: whether some PodInfos are in the memo as copies (see _seed_queue_pod_infos)
        self.pod_infos_seeded = pod_infos_seeded
        # learned per class (the methods are bound to this copier and its memo)
        self._how: dict[type, Callable[[Any], Any]] = {}
        self._shared_signatures: dict[tuple, bool] = {}
        #: the classes found to be shared (an inline ``type(v) in shared`` test skips the call)
        self._shared: set[type] = set()

    # -- dispatch ----------------------------------------------------------------------------
    def copy(self, x: Any) -> Any:
        memo = self.memo
        y = memo.get(id(x), memo)
        if y is not memo:
            return y
        cls = type(x)
        how = self._how.get(cls)
        if how is None:
            how = self._learn(cls)
        return how(x)

    def _learn(self, cls: type) -> Callable[[Any], Any]:
        how: Callable[[Any], Any]
        if cls in _SHARED_CLASSES:  # learned by an earlier copier (a class's kind never changes)
            how = self._how[cls] = _same
        else:
            how = self._how[cls] = self._method_for(cls)
            if how is _same and not issubclass(cls, PodInfo):  # (PodInfo's depends on the copier)
                _SHARED_CLASSES.add(cls)
        if how is _same:
            self._shared.add(cls)
        return how

    def _method_for(self, cls: type) -> Callable[[Any], Any]:
        if issubclass(cls, _ATOMIC) or issubclass(cls, Enum):
            return _same
        if cls.__module__.startswith(_SHARED_MODULE_PREFIXES):
            return _same
        if issubclass(cls, PodInfo):
            # never changed once built, but for the queue's (PodInfo.update): those are seeded in
            # the memo with copies (see _seed_queue_pod_infos), and then PodInfos stay out of the
            # shared set so that every reference consults the memo; with none seeded (an empty
            # queue), containers of PodInfos are copied at C speed
            return _share_pod_info if self.pod_infos_seeded else _same
        if getattr(cls, "__fork__", None) is not None:
            # the class's own rule (fastsched.util.forking): the node table, its containers, the
            # snapshot, the compiled cycle, the registry
            return lambda x: x.__fork__(self)
        specials: dict[type, Callable[[Any], Any]] = {
            list: self._list, dict: self._dict, set: self._set, tuple: self._tuple,
            OrderedDict: self._generic, np.ndarray: self._array, types.MethodType: self._method,
            types.MappingProxyType: self._mapping_proxy, SharedValueDict: self._shared_value_dict,
            _DICT_KEYS: self._dict_view, _DICT_VALUES: self._dict_view, _DICT_ITEMS: self._dict_view}
        special = specials.get(cls)
        if special is not None:
            return special
        if cls in _LOCK_TYPES:
            new_lock = _LOCK_TYPES[cls]
            return lambda x: self.remember(x, new_lock())
        if issubclass(cls, np.ndarray):
            return self._array
        if getattr(cls, "__deepcopy__", None) is not None:
            return lambda x: self.remember(x, x.__deepcopy__(self.memo))
        if issubclass(cls, dict) and not issubclass(cls, (OrderedDict, defaultdict)):
            # a dict subclass may refuse item assignment (the queue's UnschedulablePods): fill
            # the copy through dict's own methods, then copy its attributes
            return self._dict_subclass_copier(cls)
        if _is_plain(cls):
            return self._plain_copier(cls)
        return self._generic

    def copy_fields(self, x: Any) -> Any:
        """The default copy of ``x`` (its fields copied by the rules), for ``__fork__`` hooks."""
        cls = type(x)
        return (self._plain_copier(cls) if _is_plain(cls) else self._generic)(x)

    def remember(self, x: Any, y: Any) -> Any:
        self.memo[id(x)] = y
        self._keep.append(x)
        return y

    # -- containers ---------------------------------------------------------------------------
    def _all_shared(self, values: Any) -> bool:
        """Whether every value is of a type that is shared, not copied (checked per distinct
        type: a dict of a million uid -> Pod entries costs one C-level pass, not a million calls)."""
        if len(values) <= 16:
            # an object's fields: the same few type signatures recur, one dict lookup each
            signature = tuple(map(type, values))
            known = self._shared_signatures.get(signature)
            if known is None:
                known = self._shared_signatures[signature] = self._all_shared_types(set(signature))
            return known
        return self._all_shared_types(set(map(type, values)))

    def _all_shared_types(self, classes: set) -> bool:
        how = self._how
        for cls in classes:
            method = how.get(cls)
            if method is None:
                method = self._learn(cls)
            if method is not _same:
                return False
        return True

    def _list(self, x: list) -> list:
        if self._all_shared(x):
            return self.remember(x, x.copy())
        y: list = []
        self.remember(x, y)
        copy = self.copy
        y.extend([copy(v) for v in x])
        return y

    def _dict(self, x: dict) -> dict:
        if self._all_shared(x.values()) and self._all_shared(x.keys()):
            return self.remember(x, x.copy())
        y: dict = {}
        self.remember(x, y)
        copy, shared = self.copy, self._shared
        y.update({(k if type(k) in shared else copy(k)): (v if type(v) in shared else copy(v))
                  for k, v in x.items()})
        return y

    def _set(self, x: set) -> set:
        if self._all_shared(x):
            return self.remember(x, x.copy())
        y: set = set()
        self.remember(x, y)
        y.update(self.copy(v) for v in x)
        return y

    def _tuple(self, x: tuple) -> tuple:
        if not x or self._all_shared(x):
            return x
        items = [self.copy(v) for v in x]
        if all(a is b for a, b in zip(items, x)):
            return x
        y = tuple(items)
        return self.remember(x, y)

    def _array(self, x: np.ndarray) -> np.ndarray:
        y = x.copy()
        if x.dtype.hasobject:  # elements are Python objects: copy those that are not shared
            elements = x.reshape(-1).tolist()
            if not self._all_shared(elements):  # (node names are strings: shared)
                flat = y.reshape(-1)
                for i, v in enumerate(elements):
                    flat[i] = self.copy(v)
        y.flags.writeable = x.flags.writeable
        return self.remember(x, y)

    def _shared_value_dict(self, x: SharedValueDict) -> SharedValueDict:
        # the values are shared (copied on first access, see SharedValueDict); keys are strings
        return self.remember(x, x.forked())

    def _mapping_proxy(self, x: types.MappingProxyType) -> types.MappingProxyType:
        # a read-only view of its owner's dict (the nominator's): a view of the copied dict
        (mapping,) = gc.get_referents(x)
        return self.remember(x, types.MappingProxyType(self.copy(mapping)))

    def _dict_view(self, x: Any) -> Any:
        # a live view of a dict (DRA's allocator reads the manager's held devices through
        # dict.keys()): the same view of the copied dict
        (mapping,) = gc.get_referents(x)
        view = {_DICT_KEYS: dict.keys, _DICT_VALUES: dict.values, _DICT_ITEMS: dict.items}[type(x)]
        return self.remember(x, view(self.copy(mapping)))

    def _method(self, x: types.MethodType) -> types.MethodType:
        return self.remember(x, types.MethodType(x.__func__, self.copy(x.__self__)))

    # -- objects ------------------------------------------------------------------------------
    def _plain_copier(self, cls: type) -> Callable[[Any], Any]:
        """Copy an instance of a class without custom copy or pickle hooks: its ``__dict__`` and
        slots, field by field (what the generic reduce path does, without building the state)."""
        layout = _PLAIN_LAYOUTS.get(cls)
        if layout is None:
            layout = _PLAIN_LAYOUTS[cls] = (
                tuple(name for name in _slotnames(cls) if name not in ("__dict__", "__weakref__")),
                "__dict__" in dir(cls))
        slots, has_dict = layout
        new = object.__new__
        setattr_ = object.__setattr__
        copy = self.copy
        remember = self.remember

        shared = self._shared

        def plain(x: Any) -> Any:
            y: object = new(cls)
            remember(x, y)
            if has_dict:
                d = x.__dict__
                if d:
                    # most fields (of a pod's result, its PodInfo) are shared: no call for those
                    y.__dict__.update({k: v if type(v) in shared else copy(v) for k, v in d.items()})
            for name in slots:
                v = getattr(x, name, _UNSET)
                if v is not _UNSET:  # an unset slot stays unset
                    setattr_(y, name, v if type(v) in shared else copy(v))
            return y

        return plain

    def _dict_subclass_copier(self, cls: type) -> Callable[[Any], Any]:
        slots = tuple(name for name in _slotnames(cls) if name not in ("__dict__", "__weakref__"))
        copy = self.copy

        all_shared, shared = self._all_shared, self._shared

        def dict_subclass(x: Any) -> Any:
            y: dict = dict.__new__(cls)
            self.remember(x, y)
            # dict's own views: the subclass may define its own (PodMap's include bulk pods)
            if all_shared(dict.values(x)) and all_shared(dict.keys(x)):
                dict.update(y, dict(dict.items(x)))  # one C-level copy (uid -> Pod: both shared)
            else:
                dict.update(y, {(k if type(k) in shared else copy(k)): (v if type(v) in shared else copy(v))
                                for k, v in dict.items(x)})
            d = getattr(x, "__dict__", None)
            if d:
                y.__dict__.update({k: copy(v) for k, v in d.items()})
            for name in slots:
                try:
                    v = getattr(x, name)
                except AttributeError:
                    continue
                object.__setattr__(y, name, copy(v))
            return y

        return dict_subclass

    def _generic(self, x: Any) -> Any:
        cls = type(x)
        reductor = getattr(cls, "__reduce_ex__")  # (object's, when the class has none of its own)
        try:
            rv = reductor(x, 4)
        except TypeError as exc:
            raise TypeError(f"cannot fork a Scheduler holding a {cls.__module__}.{cls.__qualname__}: {exc}") from None
        if isinstance(rv, str):  # a global
            return x
        func, args, state, listiter, dictiter = (tuple(rv) + (None,) * 5)[:5]
        if func is _NEWOBJ:
            y = args[0].__new__(args[0], *[self.copy(a) for a in args[1:]])
        else:
            y = func(*[self.copy(a) for a in args])
        self.remember(x, y)
        if state is not None:
            state = self.copy(state)
            if hasattr(y, "__setstate__") and type(y).__setstate__ is not object.__dict__.get("__setstate__"):
                y.__setstate__(state)
            else:
                slots = None
                if isinstance(state, tuple) and len(state) == 2:
                    state, slots = state
                if state:
                    y.__dict__.update(state)
                if slots:
                    for k, v in slots.items():
                        object.__setattr__(y, k, v)
        if listiter is not None:
            for item in listiter:
                y.append(self.copy(item))
        if dictiter is not None:
            for k, v in dictiter:
                y[self.copy(k)] = self.copy(v)
        return y


def _same(x: Any) -> Any:
    return x


def _share_pod_info(x: Any) -> Any:
    return x


_UNSET = object()


def _is_plain(cls: type) -> bool:
    """Whether instances copy as their fields: object's own construction and pickling hooks."""
    return (cls.__new__ is object.__new__ and cls.__reduce_ex__ is object.__reduce_ex__
            and cls.__reduce__ is object.__reduce__ and cls.__getstate__ is object.__getstate__
            and getattr(cls, "__setstate__", None) is None and getattr(cls, "__copy__", None) is None)


def copy_state(scheduler: "Scheduler", owner: "Scheduler", *, keep_callbacks: bool) -> dict:
    """A copy of ``scheduler.__dict__`` whose references to the scheduler point to ``owner``."""
    # the cyclic collector paused: the copy makes no garbage, but its passes over the growing heap
    # (triggered by the allocations) would cost as much as the copy itself
    with collector_paused():
        return _copy_state(scheduler, owner, keep_callbacks)


def _copy_state(scheduler: "Scheduler", owner: "Scheduler", keep_callbacks: bool) -> dict:
    _install_shared_value_dicts(scheduler)
    memo: dict[int, Any] = {id(scheduler): owner}
    seeded = _seed_queue_pod_infos(scheduler.__dict__, memo)
    # an assumed pod waiting at Permit gets its start_time set in place when it is bound
    for pending in getattr(scheduler, "_waiting", {}).values():
        memo[id(pending.assumed)] = _shallow_copy(pending.assumed)
    if keep_callbacks:
        for name in ("bound_callbacks", "preemption_callbacks"):
            lst = scheduler.__dict__.get(name)
            if lst is not None:
                memo[id(lst)] = list(lst)
    copier = _StateCopier(memo, pod_infos_seeded=seeded)
    state: dict[str, Any] = {}
    for k, v in scheduler.__dict__.items():
        if not keep_callbacks and k in ("bound_callbacks", "preemption_callbacks"):
            state[k] = []
        else:
            state[k] = copier.copy(v)
    _set_homes(state, owner)
    return state


def _seed_queue_pod_infos(state: Mapping[str, Any], memo: dict[int, Any]) -> bool:
    """PodInfos are shared, not copied (the node table's: one per placed pod), except the queue's:
    ``PodInfo.update`` changes those in place (the queued pods' and the pods waiting at Permit;
    the nominator may hold the same objects, and gets the same copies through the memo)."""
    queue = state.get("queue")
    qpis: list[QueuedPodInfo] = []
    if queue is not None:
        for qpi, _ in queue.queued_pod_infos():
            qpis.extend(qpi.members if qpi.pod is None else (qpi,))  # a pod group: its members'
        for members in (queue.pending_pod_group_pods, queue.incomplete_pod_group_pods):
            qpis.extend(m for group in members._by_group.values() for m in group.values())
    qpis += [pending.qpi for pending in (state.get("_waiting") or {}).values()]
    for qpi in qpis:
        pi = qpi.pod_info
        if id(pi) not in memo:
            clone = object.__new__(type(pi))
            for name in _slotnames(type(pi)):
                if name not in ("__dict__", "__weakref__") and hasattr(pi, name):
                    object.__setattr__(clone, name, getattr(pi, name))
            if hasattr(pi, "__dict__"):
                clone.__dict__.update(pi.__dict__)
            memo[id(pi)] = clone
    return bool(qpis)


def _shallow_copy(obj: Any) -> Any:
    import copy

    return copy.copy(obj)


def fork_scheduler(scheduler: "Scheduler") -> "Scheduler":
    """An independent Scheduler in ``scheduler``'s state (see the module docstring)."""
    clone = object.__new__(type(scheduler))
    clone.__dict__.update(copy_state(scheduler, clone, keep_callbacks=False))
    return clone


class Transaction:
    """``with sched.transaction() as tx:`` — the state at entry comes back at exit unless
    :meth:`commit` was called. :meth:`rollback` reverts at once (and the block may go on from the
    entry state); nested transactions revert independently."""

    def __init__(self, scheduler: "Scheduler"):
        self.scheduler = scheduler
        self._saved: dict | None = None
        self.committed = False
        self.reverted = False

    def __enter__(self) -> "Transaction":
        self._saved = copy_state(self.scheduler, self.scheduler, keep_callbacks=True)
        return self

    def commit(self) -> None:
        """Keep what the block changed."""
        self.committed = True

    def rollback(self) -> None:
        """Put the entry state back now; the transaction stays open (a later rollback or the exit
        reverts to the same entry state)."""
        if self._saved is None:
            raise RuntimeError("the transaction has not started")
        saved = self._saved
        # keep a fresh copy of the entry state for a later revert before handing this one over
        self._saved = copy_state_from(saved, self.scheduler)
        self._swap_in(saved)

    def __exit__(self, exc_type, exc, tb) -> Literal[False]:
        if self._saved is not None and (exc_type is not None or not self.committed):
            self._swap_in(self._saved)
        elif self._saved is not None:
            release(self._saved)  # the entry state is dropped
        self._saved = None
        return False

    def _swap_in(self, state: dict) -> None:
        """Make ``state`` the scheduler's; the state it had is dropped."""
        dropped = dict(self.scheduler.__dict__)
        self.scheduler.__dict__.clear()
        self.scheduler.__dict__.update(state)
        release(dropped)
        self.reverted = True


def copy_state_from(state: dict, owner: "Scheduler") -> dict:
    """A copy of a saved state dict (whose back references already point to ``owner``)."""
    with collector_paused():  # (as copy_state)
        return _copy_state_from(state, owner)


def _copy_state_from(state: dict, owner: "Scheduler") -> dict:
    memo: dict[int, Any] = {id(owner): owner}
    seeded = _seed_queue_pod_infos(state, memo)
    for pending in (state.get("_waiting") or {}).values():
        memo[id(pending.assumed)] = _shallow_copy(pending.assumed)
    for name in ("bound_callbacks", "preemption_callbacks"):
        lst = state.get(name)
        if lst is not None:
            memo[id(lst)] = list(lst)
    copier = _StateCopier(memo, pod_infos_seeded=seeded)
    copied = {k: copier.copy(v) for k, v in state.items()}
    _set_homes(copied, owner)
    return copied
