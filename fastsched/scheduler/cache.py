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

Bound pods added in bulk (:meth:`Cache.add_pods`) are kept as columns, not objects:
:class:`BulkPods` holds their names, uids, namespaces, owners and table records, and the Pod
objects are rebuilt from the table's templates when asked for. The Scheduler's per-pod indexes
(``pods``, ``_pod_uid_by_key``, ``_pod_uids_by_namespace``, ``_order_of``, ``_controlled``) are
views (:class:`PodMap`, :class:`KeyIndex`, :class:`NamespaceIndex`, :class:`OrderIndex`,
:class:`ControlledIndex`) over a plain dict of the other objects plus those columns, with the
dict operations the Scheduler uses and their results.
"""
from __future__ import annotations

import heapq
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Iterator, Sequence

import numpy as np

from .._kernels import _table
from ..errors import FastschedError
from ..framework.podgroups import PodGroupObjects, PodGroupState, PodGroupStates, pod_group_key
from .composite_cache import CompositeGroupStore
from ..framework.types import PodInfo
from ..snapshot import Snapshot
from ..snapshot.lazy import pooled_ints
from ..snapshot.lazy import uid_words as _uid_words  # (add_pods has a parameter of that name)

if TYPE_CHECKING:  # pragma: no cover
    from ..api import Node, Pod
    from ..api.scheduling import PodGroup
    from ..api.compositepodgroup import CompositePodGroup


class CacheError(FastschedError, RuntimeError):
    """An impossible cache transition (upstream logs these as errors or treats them as corruption)."""


@dataclass(slots=True)
class _PodState:
    pod: "Pod"
    node_name: str
    assumed: bool = False
    binding_finished: bool = False


#: :class:`BulkPods` membership bits: which index still holds the pod
IN_PODS = 1          # Scheduler.pods
IN_KEYS = 2          # Scheduler._pod_uid_by_key
IN_NAMESPACE = 4     # Scheduler._pod_uids_by_namespace
IN_ORDER = 8         # Scheduler._order_of
IN_CONTROLLED = 16   # Scheduler._controlled
IN_CACHE = 32        # the cache (a confirmed pod on its node, or a ghost)
IN_SCHEDULER = IN_PODS | IN_KEYS | IN_NAMESPACE | IN_ORDER | IN_CONTROLLED


class UidMap:
    """uid -> int: canonical UUIDs in a compiled hash index (``_table.UidIndex``), other uids in
    a dict. ``get`` answers -1 for a uid not there.

    ``_last`` is the last ``get``: (the uid string object, its answer), kept until the next change.
    A pod's deletion asks for the same uid object four or five times in a row (the client's
    lookup, ``Cluster.preempt_pod``'s check, ``pop_bulk_pod``, the cache's ``has``), each a parse
    of the 36-character uid and a probe otherwise."""

    __slots__ = ("_index", "_other", "_last")

    def __init__(self):
        self._index = _table.UidIndex()
        self._other: dict[str, int] = {}
        self._last: tuple[str | None, int] = (None, -1)

    def __len__(self) -> int:
        return len(self._index) + len(self._other)

    def get(self, uid: str) -> int:
        last = self._last
        if last[0] is uid:  # the same string object: the same answer while nothing changed
            return last[1]
        b = self._index.lookup(uid)
        if b < 0 and self._other:
            b = self._other.get(uid, -1)
        self._last = (uid, b)
        return b

    def put_many(self, uids: list[str], start: int, words: tuple | None = None) -> None:
        """``uids[i] -> start + i`` (``words``: the uids parsed, see ``uid_words``)."""
        n = len(uids)
        self._last = (None, -1)
        hi, lo, ok = words if words is not None else _uid_words(uids)
        self._index.put_many(hi, lo, ok, np.arange(start, start + n, dtype=np.int64))
        if not ok.all():
            for i in np.flatnonzero(ok == 0).tolist():
                self._other[uids[i]] = start + i

    def remove_if(self, uid: str, value: int) -> None:
        """``remove(uid)`` when ``uid`` maps to ``value`` (the uid parsed once, not by a ``get``
        and then a ``remove``)."""
        self._last = (None, -1)
        # (a canonical UUID is only ever in the compiled index, any other uid only in the dict)
        if not self._index.remove_if(uid, value) and self._other and self._other.get(uid, -1) == value:
            self._other.pop(uid, None)  # (value -1 with uid absent: as get, then remove)

    def remove(self, uid: str) -> None:
        self._last = (None, -1)
        parsed = _table.parse_uid(uid)
        if parsed is None:
            self._other.pop(uid, None)
        else:
            self._index.remove(*parsed)

    def any_of(self, uids: list[str], words: tuple | None = None) -> bool:
        """Whether one of ``uids`` is here (``words``: the uids parsed, see ``uid_words``)."""
        hi, lo, ok = words if words is not None else _uid_words(uids)
        if self._index.count_present(hi, lo, ok):
            return True
        return bool(self._other) and not self._other.keys().isdisjoint(uids)


class BulkPods:
    """Bound pods added in bulk, as columns (``B`` = capacity, ``b`` = a pod's bulk id).

    ``ns`` / ``owner`` (B,) int32 (indexes into ``namespaces`` / ``owners``,
    the controller uid or ""), ``order`` (B,) int64 (the Scheduler's ``_order_of``), ``flags`` (B,)
    uint8 (``IN_*``: the indexes that hold the pod; the entry is dropped when none does), ``rec``
    (B,) int32: the pod's table record, -1 once it left the table (a ghost, or a pod taken off its
    node; ``objects`` then holds the Pod). A pod's uid and name are its record's (or its object's):
    no list of names here beside the table's ``pod_names`` (8 MB at 1,000,000 pods).
    ``index`` maps uid -> b (canonical UUIDs in a compiled hash index: 48 bytes per pod instead of
    a dict entry and the uid string) and ``by_name`` namespace -> name -> b; ``n_live`` counts the
    entries.
    """

    def __init__(self, snapshot: Snapshot):
        self.snapshot = snapshot
        self.index = UidMap()
        self.n_live = 0
        self.by_name: dict[str, dict[str, int]] = {}
        self.namespaces: list[str] = []
        self._ns_ids: dict[str, int] = {}
        self.owners: list[str] = []
        self._owner_ids: dict[str, int] = {}
        cap = 64
        self.ns = np.zeros(cap, dtype=np.int32)
        self.owner = np.zeros(cap, dtype=np.int32)
        self.order = np.zeros(cap, dtype=np.int64)
        self.flags = np.zeros(cap, dtype=np.uint8)
        self.rec = np.full(cap, -1, dtype=np.int32)
        self.objects: dict[int, "Pod"] = {}   # pods of entries whose table record is gone
        self.n = 0

    def __len__(self) -> int:
        return self.n_live

    def reserve(self, need: int) -> None:
        """Make room for ``need`` entries in all."""
        cap = len(self.ns)
        if need <= cap:
            return
        new = cap
        while new < need:
            new *= 2
        for name, fill in (("ns", 0), ("owner", 0), ("order", 0), ("flags", 0), ("rec", -1)):
            old = getattr(self, name)
            arr = np.full(new, fill, dtype=old.dtype)
            arr[:cap] = old
            setattr(self, name, arr)

    def _id(self, ids: dict[str, int], values: list[str], value: str) -> int:
        i = ids.get(value)
        if i is None:
            i = ids[value] = len(values)
            values.append(value)
        return i

    def add(self, pods: Sequence["Pod"], recs: np.ndarray, flags: int, orders: Sequence[int] | None = None,
            owners: Sequence[str] | None = None, words: tuple | None = None) -> range:
        """Register ``pods`` (already on the table at ``recs``); returns their bulk ids (``words``:
        their uids parsed, see ``uid_words``)."""
        n = len(pods)
        start = self.n
        self.reserve(start + n)
        ids = pooled_ints(start + n)[start:start + n]
        owner_ids = np.zeros(n, dtype=np.int32)
        pod_names = [pod.name for pod in pods]
        self.index.put_many([pod.uid for pod in pods], start, words)
        self.n_live += n
        namespaces = [pod.namespace for pod in pods]
        first_ns = namespaces[0] if n else ""
        if namespaces.count(first_ns) == n:
            ns_ids = np.full(n, self._id(self._ns_ids, self.namespaces, first_ns), dtype=np.int32)
            self.by_name.setdefault(first_ns, {}).update(zip(pod_names, ids))
        else:
            ns_ids = np.empty(n, dtype=np.int32)
            for i, pod in enumerate(pods):
                ns_ids[i] = self._id(self._ns_ids, self.namespaces, pod.namespace)
                self.by_name.setdefault(pod.namespace, {})[pod_names[i]] = ids[i]
        if owners is not None:
            owner_ids[:] = [self._id(self._owner_ids, self.owners, o) for o in owners]
        else:
            owner_ids[:] = self._id(self._owner_ids, self.owners, "")
        sel = slice(start, start + n)
        self.ns[sel] = ns_ids
        self.owner[sel] = owner_ids
        if orders is not None:
            self.order[sel] = orders
        self.flags[sel] = flags
        self.rec[sel] = recs
        self.n = start + n
        return range(start, start + n)

    def has(self, uid: str, flag: int) -> int:
        """The bulk id of ``uid`` when ``flag`` is set on it, else -1."""
        b = self.index.get(uid)
        if b < 0 or not self.flags[b] & flag:
            return -1
        return b

    def clear(self, b: int, flag: int) -> None:
        """``flag``'s index no longer holds pod ``b``; the entry goes when no index does."""
        f = int(self.flags[b]) & ~flag
        self.flags[b] = f
        if f == 0:
            uid, name = self.uid(b), self.name(b)
            self.index.remove_if(uid, b)
            self.n_live -= 1
            names = self.by_name[self.namespaces[self.ns[b]]]
            if names.get(name) == b:
                del names[name]
            self.objects.pop(b, None)
            self.rec[b] = -1

    def drop(self, b: int, pod: "Pod") -> None:
        """Entry ``b``, whose Pod is ``pod`` (its record freed or about to be), goes as the cache,
        its only holder (``flags[b] == IN_CACHE``), lets it go: what :meth:`detach` then
        ``clear(b, IN_CACHE)`` do, without keeping the object only to read its uid and name back."""
        self.flags[b] = 0
        self.index.remove_if(pod.uid, b)
        self.n_live -= 1
        names = self.by_name[self.namespaces[self.ns[b]]]
        if names.get(pod.name) == b:
            del names[pod.name]
        self.objects.pop(b, None)
        self.rec[b] = -1

    def uid(self, b: int) -> str:
        """The uid of entry ``b``."""
        rec = self.rec[b]
        if rec >= 0:
            return self.snapshot.table.pod_uid(int(rec))
        return self.objects[b].uid

    def name(self, b: int) -> str:
        """The name of entry ``b``."""
        rec = self.rec[b]
        if rec >= 0:
            name = self.snapshot.table.pod_names[rec]
            assert name is not None  # a record in use
            return name
        return self.objects[b].name

    def pod(self, b: int) -> "Pod":
        """The Pod of entry ``b`` (rebuilt from its table record on first access, then kept)."""
        pod = self.objects.get(b)
        if pod is None:
            pod = self.snapshot.table.pod_info(int(self.rec[b])).pod
        return pod

    def detach(self, b: int, pod: "Pod | None" = None) -> None:
        """The pod leaves the table (its record is about to be freed): keep its object."""
        if pod is None:
            pod = self.pod(b)
        self.objects[b] = pod
        self.rec[b] = -1

    def node_name(self, b: int) -> str:
        rec = self.rec[b]
        if rec >= 0:
            return self.snapshot.table.node_names[self.snapshot.table.pod_row[rec]]
        return self.objects[b].node_name

    def ids(self, flag: int, ns: str | None = None, owner: str | None = None) -> list[int]:
        """Bulk ids (ascending: the order they were added) with ``flag``, optionally in namespace
        ``ns`` and controlled by ``owner`` ("" for none)."""
        if not self.n_live:
            return []
        n = self.n
        mask = (self.flags[:n] & flag) != 0
        if ns is not None:
            k = self._ns_ids.get(ns)
            if k is None:
                return []
            mask &= self.ns[:n] == k
        if owner is not None:
            k = self._owner_ids.get(owner)
            if k is None:
                return []
            mask &= self.owner[:n] == k
        return np.flatnonzero(mask).tolist()

    def count(self, flag: int) -> int:
        return int(np.count_nonzero(self.flags[:self.n] & flag)) if self.n_live else 0


_MISSING = object()


class OrderIndex:
    """``Scheduler._order_of`` (uid -> when the object was added): a dict plus the bulk pods."""

    __slots__ = ("_d", "_bulk")

    def __init__(self, bulk: BulkPods):
        self._d: dict[str, int] = {}
        self._bulk = bulk

    def __getitem__(self, uid: str) -> int:
        v = self._d.get(uid)
        if v is None:
            b = self._bulk.has(uid, IN_ORDER)
            if b < 0:
                raise KeyError(uid)
            return int(self._bulk.order[b])
        return v

    def get(self, uid: str, default: Any = None) -> Any:
        try:
            return self[uid]
        except KeyError:
            return default

    def __setitem__(self, uid: str, value: int) -> None:
        b = self._bulk.has(uid, IN_ORDER)
        if b >= 0:
            self._bulk.order[b] = value
        else:
            self._d[uid] = value

    def add_new(self, uid: str, value: int) -> None:
        """``self[uid] = value`` for a uid of no pod here, bulk pods included (the caller checked
        it: ``Cluster._pods_are_new``)."""
        self._d[uid] = value

    def __contains__(self, uid: object) -> bool:
        return uid in self._d or (isinstance(uid, str) and self._bulk.has(uid, IN_ORDER) >= 0)

    def pop(self, uid: str, *default: Any) -> Any:
        v = self._d.pop(uid, _MISSING)
        if v is not _MISSING:
            return v
        b = self._bulk.has(uid, IN_ORDER)
        if b >= 0:
            v = int(self._bulk.order[b])
            self._bulk.clear(b, IN_ORDER)
            return v
        if default:
            return default[0]
        raise KeyError(uid)

    def __len__(self) -> int:
        return len(self._d) + self._bulk.count(IN_ORDER)

    def __iter__(self) -> Iterator[str]:
        yield from list(self._d)
        for b in self._bulk.ids(IN_ORDER):
            yield self._bulk.uid(b)


class PodMap(dict):
    """``Scheduler.pods`` (uid -> Pod): a dict of the pods set one at a time, plus the bulk pods.

    Reads of pods set one at a time are plain dict reads; a bulk pod is looked up in
    :class:`BulkPods` (and its Pod rebuilt once). Setting a bulk pod's uid stores the new object in
    the dict, which takes precedence. Iteration is in the order the pods were added, as a dict's.
    """

    __slots__ = ("_bulk", "_order")

    def __init__(self, bulk: BulkPods, order: OrderIndex):
        super().__init__()
        self._bulk = bulk
        self._order = order

    def _bulk_pod(self, uid: str) -> "Pod | None":
        bulk = self._bulk
        b = bulk.index.get(uid)
        if b < 0 or not bulk.flags[b] & IN_PODS:
            return None
        pod = bulk.objects.get(b)  # (BulkPods.pod inline: a victim's lookups come here twice)
        return bulk.snapshot.table.pod_info(int(bulk.rec[b])).pod if pod is None else pod

    def __missing__(self, uid: str) -> "Pod":
        pod = self._bulk_pod(uid) if self._bulk.n_live else None
        if pod is None:
            raise KeyError(uid)
        return pod

    def get(self, uid: str, default: Any = None, _get=dict.get) -> Any:
        pod = _get(self, uid)
        if pod is None:
            if self._bulk.n_live:
                pod = self._bulk_pod(uid)
            if pod is None:
                return default
        return pod

    def __contains__(self, uid: object, _contains=dict.__contains__) -> bool:
        return _contains(self, uid) or (bool(self._bulk.n_live) and isinstance(uid, str)
                                        and self._bulk.has(uid, IN_PODS) >= 0)

    def pop(self, uid: str, *default: Any) -> Any:
        bulk = self._bulk
        b = bulk.has(uid, IN_PODS) if bulk.n_live else -1
        pod = dict.pop(self, uid, _MISSING)
        if b >= 0:
            if pod is _MISSING:
                pod = bulk.pod(b)
            bulk.clear(b, IN_PODS)
        if pod is _MISSING:
            if default:
                return default[0]
            raise KeyError(uid)
        return pod

    def setdefault(self, uid: str, default: Any = None) -> Any:
        pod = self.get(uid, _MISSING)
        if pod is _MISSING:
            self[uid] = pod = default
        return pod

    def _uids(self) -> list[str]:
        """Every uid, in the order the pods were added."""
        bulk = self._bulk
        if not bulk.n_live:
            return list(dict.keys(self))
        order = self._order
        mine = sorted(((order.get(uid, float("inf")), uid) for uid in dict.keys(self)), key=lambda e: e[0])
        theirs = ((int(bulk.order[b]), uid) for b, uid in ((b, bulk.uid(b)) for b in bulk.ids(IN_PODS))
                  if not dict.__contains__(self, uid))
        return [uid for _, uid in heapq.merge(mine, theirs, key=lambda e: e[0])]

    def __len__(self) -> int:
        bulk = self._bulk
        n = dict.__len__(self)
        if bulk.n_live:
            n += bulk.count(IN_PODS) - sum(1 for uid in dict.keys(self) if bulk.has(uid, IN_PODS) >= 0)
        return n

    def __iter__(self) -> Iterator[str]:
        return iter(self._uids())

    def keys(self) -> list[str]:  # type: ignore[override]
        return self._uids()

    def values(self) -> list["Pod"]:  # type: ignore[override]
        return [self[uid] for uid in self._uids()]

    def items(self) -> list[tuple[str, "Pod"]]:  # type: ignore[override]
        return [(uid, self[uid]) for uid in self._uids()]

    def __eq__(self, other: object) -> bool:
        return dict(self.items()) == other

    def __ne__(self, other: object) -> bool:
        return not self == other

    __hash__ = None

    def __repr__(self) -> str:
        return f"PodMap({len(self)} pods)"


class KeyIndex:
    """``Scheduler._pod_uid_by_key`` (``namespace/name`` -> uid): a dict plus the bulk pods."""

    __slots__ = ("_d", "_bulk")

    def __init__(self, bulk: BulkPods):
        self._d: dict[str, str] = {}
        self._bulk = bulk

    def _bulk_id(self, key: str) -> int:
        if not self._bulk.n_live:
            return -1
        ns, sep, name = key.partition("/")
        b = self._bulk.by_name.get(ns, {}).get(name) if sep else None
        if b is None or not self._bulk.flags[b] & IN_KEYS:
            return -1
        return b

    def get(self, key: str, default: Any = None) -> Any:
        uid = self._d.get(key)
        if uid is None:
            b = self._bulk_id(key)
            return default if b < 0 else self._bulk.uid(b)
        return uid

    def __getitem__(self, key: str) -> str:
        uid = self.get(key)
        if uid is None:
            raise KeyError(key)
        return uid

    def __contains__(self, key: object) -> bool:
        # (a key that is no string is in no index: namespace/name keys only)
        return key in self._d or (isinstance(key, str) and self._bulk_id(key) >= 0)

    def has_name(self, namespace: str, name: str) -> bool:
        """``f"{namespace}/{name}" in self`` without building the key."""
        if self._bulk.n_live:
            b = self._bulk.by_name.get(namespace, {}).get(name)
            if b is not None and self._bulk.flags[b] & IN_KEYS:
                return True
        return f"{namespace}/{name}" in self._d if self._d else False

    def any_taken(self, namespace: str, names: list[str]) -> bool:
        """Whether one of ``names`` is the name of a pod of ``namespace`` here."""
        bulk = self._bulk
        in_bulk = bulk.by_name.get(namespace)
        if in_bulk and not in_bulk.keys().isdisjoint(names):
            if any(bulk.flags[in_bulk[name]] & IN_KEYS for name in names if name in in_bulk):
                return True
        if not self._d:
            return False
        if len(self._d) < len(names):
            wanted = set(names)
            return any(ns == namespace and name in wanted
                       for ns, _, name in (key.partition("/") for key in self._d))
        return not self._d.keys().isdisjoint(f"{namespace}/{name}" for name in names)

    def __setitem__(self, key: str, uid: str) -> None:
        b = self._bulk_id(key)
        if b >= 0:
            self._bulk.clear(b, IN_KEYS)
        self._d[key] = uid

    def add_new(self, key: str, uid: str) -> None:
        """``self[key] = uid`` for a key of no pod here, bulk pods included (the caller checked
        it: ``Cluster._pods_are_new``)."""
        self._d[key] = uid

    def pop(self, key: str, *default: Any) -> Any:
        uid = self._d.pop(key, _MISSING)
        if uid is not _MISSING:
            return uid
        b = self._bulk_id(key)
        if b >= 0:
            uid = self._bulk.uid(b)
            self._bulk.clear(b, IN_KEYS)
            return uid
        if default:
            return default[0]
        raise KeyError(key)

    def __len__(self) -> int:
        return len(self._d) + self._bulk.count(IN_KEYS)


class _UidSet:
    """An ordered set of uids (a ``dict[str, None]``) plus the bulk pods of one namespace (and
    controller): the values of :class:`NamespaceIndex` and :class:`ControlledIndex`."""

    __slots__ = ("_d", "_bulk", "_flag", "_ns", "_owner", "_order")

    def __init__(self, d: dict[str, None], bulk: BulkPods, flag: int, ns: str, owner: str | None,
                 order: OrderIndex | None):
        self._d, self._bulk, self._flag, self._ns, self._owner, self._order = d, bulk, flag, ns, owner, order

    def _bulk_id(self, uid: str) -> int:
        b = self._bulk.has(uid, self._flag)
        if b < 0:
            return -1
        bulk = self._bulk
        if bulk.namespaces[bulk.ns[b]] != self._ns or (
                self._owner is not None and bulk.owners[bulk.owner[b]] != self._owner):
            return -1
        return b

    def __setitem__(self, uid: str, value: None) -> None:
        self._d[uid] = value

    def __contains__(self, uid: object) -> bool:
        return uid in self._d or (bool(self._bulk.n_live) and isinstance(uid, str) and self._bulk_id(uid) >= 0)

    def pop(self, uid: str, *default: Any) -> Any:
        if uid in self._d:
            return self._d.pop(uid)
        b = self._bulk_id(uid) if self._bulk.n_live else -1
        if b >= 0:
            self._bulk.clear(b, self._flag)
            return None
        if default:
            return default[0]
        raise KeyError(uid)

    def _bulk_uids(self) -> list[int]:
        return self._bulk.ids(self._flag, self._ns, self._owner)

    def __iter__(self) -> Iterator[str]:
        bulk = self._bulk
        mine = list(self._d)
        theirs = self._bulk_uids() if bulk.n_live else []
        if not theirs:
            return iter(mine)
        if self._order is None:  # the readers sort it themselves
            return iter(mine + [bulk.uid(b) for b in theirs])
        order = self._order
        merged = heapq.merge(((order.get(uid, float("inf")), uid) for uid in mine),
                             ((int(bulk.order[b]), bulk.uid(b)) for b in theirs), key=lambda e: e[0])
        return (uid for _, uid in merged)

    def __len__(self) -> int:
        return len(self._d) + (len(self._bulk_uids()) if self._bulk.n_live else 0)

    def __bool__(self) -> bool:
        return bool(self._d) or len(self) > 0


class NamespaceIndex:
    """``Scheduler._pod_uids_by_namespace`` (namespace -> ordered uids): dicts plus the bulk pods."""

    __slots__ = ("_d", "_bulk", "_order")

    def __init__(self, bulk: BulkPods, order: OrderIndex):
        self._d: dict[str, dict[str, None]] = {}
        self._bulk, self._order = bulk, order

    def _view(self, ns: str, d: dict[str, None]) -> _UidSet:
        return _UidSet(d, self._bulk, IN_NAMESPACE, ns, None, self._order)

    def get(self, ns: str, default: Any = None) -> Any:
        d = self._d.get(ns)
        if d is None and ns not in self._bulk.by_name:
            return default
        return self._view(ns, self._d.setdefault(ns, {}) if d is None else d)

    def setdefault(self, ns: str, default: dict[str, None]) -> _UidSet:
        return self._view(ns, self._d.setdefault(ns, default))

    def add_new(self, ns: str, uid: str) -> None:
        """``self.setdefault(ns, {})[uid] = None`` without the view (a _UidSet's ``__setitem__``
        writes its dict)."""
        d = self._d.get(ns)
        if d is None:
            d = self._d[ns] = {}
        d[uid] = None

    def __getitem__(self, ns: str) -> _UidSet:
        view = self.get(ns)
        if view is None:
            raise KeyError(ns)
        return view

    def __contains__(self, ns: object) -> bool:
        return ns in self._d or ns in self._bulk.by_name

    def __iter__(self) -> Iterator[str]:
        return iter(dict.fromkeys([*self._d, *self._bulk.by_name]))


class ControlledIndex:
    """``Scheduler._controlled`` ((kind, namespace, controller uid) -> uids): dicts plus the bulk
    pods (kind "Pod")."""

    __slots__ = ("_d", "_bulk")

    def __init__(self, bulk: BulkPods):
        self._d: dict[tuple[str, str, str], dict[str, None]] = {}
        self._bulk = bulk

    def get(self, key: tuple[str, str, str], default: Any = None) -> Any:
        d = self._d.get(key)
        if key[0] != "Pod" or not self._bulk.n_live:
            return default if d is None else d
        return _UidSet(self._d.setdefault(key, {}) if d is None else d, self._bulk, IN_CONTROLLED, key[1],
                       key[2], None)

    def setdefault(self, key: tuple[str, str, str], default: dict[str, None]) -> Any:
        d = self._d.setdefault(key, default)
        if key[0] != "Pod" or not self._bulk.n_live:
            return d
        return _UidSet(d, self._bulk, IN_CONTROLLED, key[1], key[2], None)

    def __getitem__(self, key: tuple[str, str, str]) -> Any:
        view = self.get(key)
        if view is None:
            raise KeyError(key)
        return view

    def __contains__(self, key: object) -> bool:
        return key in self._d


def pop_bulk_pod(uid: str, controller_of: Any, pods: PodMap, keys: KeyIndex, order: OrderIndex,
                 namespaces: NamespaceIndex, controlled: ControlledIndex) -> "Pod | None":
    """A deleted pod's removal from the Scheduler's five indexes in one step, for a bulk pod that
    each of them holds as the same bulk entry and none in its own dict (a preemption victim among
    the bound pods added in bulk): what ``pods.pop(uid)``, ``keys.pop(pod.key)``, the pod's
    ``controlled`` set's ``pop(uid)`` (``controller_of(pod)``: its controller's uid, "" for none),
    ``order.pop(uid)`` and its namespace set's ``pop(uid)`` do, with one uid lookup and one flag
    write instead of a lookup and a write each (and no uid string formatted). Returns the popped
    Pod, or None, having changed nothing those calls would not (the two sets' empty dicts, which
    their views create), when the pod is not such an entry: the caller then pops one by one."""
    bulk = pods._bulk
    if not bulk.n_live or dict.__contains__(pods, uid) or uid in order._d:
        return None
    b = bulk.index.get(uid)
    if b < 0 or bulk.flags[b] & IN_SCHEDULER != IN_SCHEDULER:
        return None
    pod = bulk.objects.get(b)  # (BulkPods.pod inline)
    if pod is None:
        pod = bulk.snapshot.table.pod_info(int(bulk.rec[b])).pod
    ns, name = pod.namespace, pod.name
    controller = controller_of(pod)
    names = bulk.by_name.get(ns)
    if (not ns or names is None or names.get(name) != b or bulk.namespaces[bulk.ns[b]] != ns
            or bulk.owners[bulk.owner[b]] != controller or f"{ns}/{name}" in keys._d):
        return None
    # (the views' get: an empty dict for the namespace and the controller key, kept)
    if uid in controlled._d.setdefault(("Pod", ns, controller), {}) or uid in namespaces._d.setdefault(ns, {}):
        return None
    bulk.clear(b, IN_SCHEDULER)
    return pod


class Cache:
    """Nodes and the pods assigned to them, with assumed pods; owns the :class:`Snapshot`."""

    def __init__(self, snapshot: Snapshot | None = None, *, generic_workload: bool = False,
                 composite_pod_group: bool = False):
        self.snapshot = snapshot if snapshot is not None else Snapshot()
        #: GenericWorkload: the cache tracks pod groups (``pod_group_states``, see the pod group
        #: section below); off, none of that runs
        self.generic_workload = generic_workload
        self.pod_group_states: dict = {}
        #: CompositePodGroup: the composite pod groups' states and links (off: nothing is linked)
        self.composite_groups = CompositeGroupStore(self.pod_group_states, composite_pod_group)
        self.snapshot.is_assumed_pod = self.is_assumed_pod  # (what the plugins may know of assumptions)
        self._pods: dict[str, _PodState] = {}
        self._ghost_pods: dict[str, dict[str, "Pod"]] = {}  # node name -> uid -> pod (node removed)
        #: bound pods added with :meth:`add_pods`, kept as columns (state: confirmed, not assumed)
        self.bulk = BulkPods(self.snapshot)
        #: XOR of hash(uid) over the assumed pods: which assumptions a scheduling attempt saw, in
        #: O(1). An assume followed by its forget leaves it as it was (no net change for anybody),
        #: which is what lets ``Scheduler.run()`` end when bindings keep failing (see scheduler.py)
        self.assumed_fingerprint = 0
        #: pods forgotten with :meth:`park_assumed` whose rows the node table still holds, by uid,
        #: in the order they were parked: uid -> (the assumed pod object, its node name)
        self._parked: dict[str, tuple["Pod", str]] = {}

    # -- nodes -------------------------------------------------------------------------------------
    def add_node(self, node: "Node") -> None:
        if node.name in self.snapshot.table.row_of:
            self.update_node(node)
            return
        self.snapshot.add_node(node)
        self._return_ghosts(node.name)

    def add_nodes(self, nodes: Sequence["Node"], *, new: bool = False) -> None:
        """Add many nodes: as :meth:`add_node` for each, in order (``new``: the caller checked that
        their names are distinct and not in the cache)."""
        if not new and (len({n.name for n in nodes}) != len(nodes)
                        or not self.snapshot.table.row_of.keys().isdisjoint(n.name for n in nodes)):
            for node in nodes:
                self.add_node(node)
            return
        self.snapshot.add_nodes(nodes, new=True)
        if self._ghost_pods:
            for node in nodes:
                self._return_ghosts(node.name)

    def _return_ghosts(self, name: str) -> None:
        for pod in self._ghost_pods.pop(name, {}).values():
            self.snapshot.add_pod(pod, name)  # a bulk pod among them stays an object (BulkPods.objects)

    def update_node(self, node: "Node") -> None:
        if node.name not in self.snapshot.table.row_of:
            self.add_node(node)
            return
        self.snapshot.update_node(node)

    def remove_node(self, name: str) -> None:
        if name not in self.snapshot.table.row_of:
            raise CacheError(f"node {name} is not found")
        pods = self.snapshot.remove_node(name)
        if pods:
            self._ghost_pods[name] = {pi.pod.uid: pi.pod for pi in pods}
            if self.bulk.n_live:
                for pi in pods:
                    b = self.bulk.has(pi.pod.uid, IN_CACHE)
                    if b >= 0:
                        self.bulk.detach(b, pi.pod)

    def has_node(self, name: str) -> bool:
        """Whether the cache has node ``name`` (without building its Node object)."""
        return name in self.snapshot.table.row_of

    def get_node(self, name: str) -> "Node | None":
        row = self.snapshot.table.row_of.get(name)
        return None if row is None else self.snapshot.table.nodes[row]

    def node_names(self) -> list[str]:
        """The names of the cache's nodes, in the order they were added."""
        return list(self.snapshot.table.row_of)

    def node_count(self) -> int:
        return len(self.snapshot.table)

    # -- pods --------------------------------------------------------------------------------------
    def _place(self, pod: "Pod", node_name: str) -> None:
        if node_name in self.snapshot.table.row_of:
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

    def _unplace_bulk(self, b: int) -> "Pod":
        """Take bulk pod ``b`` off its node (or out of the ghosts); the cache no longer holds it."""
        bulk = self.bulk
        rec = int(bulk.rec[b])
        pod = bulk.objects.get(b)  # (BulkPods.pod, with the record read once)
        if pod is None:
            pod = self.snapshot.table.pod_info(rec).pod
        if rec >= 0:
            # on the table at its record (a ghost's record is gone: ``remove_node`` detaches it),
            # so no ghost: the record goes as ``_unplace`` would find and remove it
            if bulk.flags[b] == IN_CACHE:  # (a deleted pod: the Scheduler's indexes let it go first)
                self.snapshot.table.remove_record(rec)
                bulk.drop(b, pod)
                return pod
            bulk.detach(b, pod)
            self.snapshot.table.remove_record(rec)
        else:
            bulk.detach(b, pod)
            self._unplace(pod, pod.node_name)
        bulk.clear(b, IN_CACHE)
        return pod

    def add_pods(self, pods: Sequence["Pod"], *, scheduler_views: bool = False,
                 orders: Sequence[int] | None = None, owners: Sequence[str] | None = None,
                 uid_words: tuple | None = None) -> range:
        """Add many bound pods (informer adds), each new to the cache and bound to a node of the
        cache: as :meth:`add_pod` for each, in order, with the pods kept as columns. With
        ``scheduler_views`` the Scheduler's indexes hold them too (``orders``: their ``_order_of``,
        ``owners``: their controller uids; ``uid_words``: their uids parsed, see ``uid_words``).
        Returns their bulk ids."""
        if uid_words is None:
            uid_words = _uid_words([pod.uid for pod in pods])
        recs = self.snapshot.add_pods(pods, uid_words=uid_words)
        flags = IN_CACHE | (IN_SCHEDULER if scheduler_views else 0)
        if self.generic_workload:
            for pod in pods:
                if pod.scheduling_group is not None:
                    self._add_member(pod)
        return self.bulk.add(pods, recs, flags, orders, owners, uid_words)

    def assume_pod(self, pod: "Pod") -> None:
        """Account a pod the scheduler just placed (``pod.node_name`` set) before it is bound. The
        last pod parked (:meth:`park_assumed`), assumed again as the same object on the same node,
        takes up the row it left in the node table; any other assume first drops the parked rows."""
        if pod.uid in self._pods or (self.bulk.n_live and self.bulk.has(pod.uid, IN_CACHE) >= 0):
            raise CacheError(f"pod {pod.uid}({pod.key}) is in the cache, so can't be assumed")
        if not pod.node_name:
            raise CacheError(f"pod {pod.key} has no node name, so can't be assumed")
        parked = self._parked
        if parked and next(reversed(parked)) == pod.uid and parked[pod.uid][0] is pod \
                and parked[pod.uid][1] == pod.node_name:
            del parked[pod.uid]  # its row is in the table already, as _place would write it
        else:
            if parked:
                self.drop_parked()
            self._place(pod, pod.node_name)
        self._pods[pod.uid] = _PodState(pod, pod.node_name, assumed=True)
        self.assumed_fingerprint ^= hash(pod.uid)
        if self.generic_workload and pod.scheduling_group is not None:
            self._assume_member(pod)

    def can_assume_run(self, pods: Sequence["Pod"]) -> bool:
        """Whether :meth:`assume_run` may take ``pods`` (not yet placed): no pod parked (an
        assume would drop the parked rows first) and none of them in the cache (its error is
        :meth:`assume_pod`'s, which the caller's single-pod path then raises)."""
        if self._parked:
            return False
        known, bulk = self._pods, self.bulk
        return not any(p.uid in known for p in pods) and not (
            bulk.n_live and any(bulk.has(p.uid, IN_CACHE) >= 0 for p in pods))

    def assume_run(self, pods: Sequence["Pod"]) -> None:
        """:meth:`assume_pod` for each of ``pods`` (``node_name`` set), in order, whose rows a
        gang run (``CompiledCycle.place_run``: ``FusedPlan.place_run`` and ``NodeTable.add_run``,
        docs/dev/gang-runs.md section 4) has already written into the node table: the cache's
        entries, the fingerprint and the pod group states' assumed sets, as the assumes would
        leave them. The caller checked :meth:`can_assume_run` before the placement."""
        known = self._pods
        members = self.generic_workload
        fingerprint = self.assumed_fingerprint
        for pod in pods:
            known[pod.uid] = _PodState(pod, pod.node_name, assumed=True)
            fingerprint ^= hash(pod.uid)
            if members and pod.scheduling_group is not None:
                self._assume_member(pod)
        self.assumed_fingerprint = fingerprint

    def finish_binding(self, pod: "Pod") -> None:
        st = self._pods.get(pod.uid)
        if st is not None and st.assumed:
            st.binding_finished = True

    def park_assumed(self, pod: "Pod") -> None:
        """:meth:`forget_pod`, but the pod's row stays in the node table until :meth:`assume_pod`
        takes it up or :meth:`drop_parked` removes it.

        Why: a pod group cycle assumes its members for the algorithm, forgets them all (in reverse
        order), then assumes them again in member order at submit (upstream's assume, revert,
        assume). Two node-table writes per member (about 4% of a 5,000-member gang's cycle) undo
        each other when the same objects come back on the same nodes, and nothing reads the table
        in between (the submit runs the members' Reserve and Permit; before a binding cycle or a
        failure's handling it drops the parked rows). The cache's own view (``_pods``, the pod group
        states, the fingerprint) is forgotten at once, as by ``forget_pod``: the plugins see the
        gradual re-assumption upstream's submit gives them. Dropping removes the rows in parking
        order; one taken up must be the last parked. A group's members are parked in reverse member
        order and taken up in member order, so the table's rows and records end as with
        ``forget_pod`` at parking and ``assume_pod`` again."""
        st = self._pods.get(pod.uid)
        if st is None or not st.assumed or st.pod is not pod or st.node_name not in self.snapshot.table.row_of:
            if self._parked:
                self.drop_parked()
            self.forget_pod(pod)  # (its checks and errors; a ghost pod has no row to keep)
            return
        del self._pods[pod.uid]
        self.assumed_fingerprint ^= hash(pod.uid)
        if self.generic_workload and pod.scheduling_group is not None:
            self._forget_member(pod)
        self._parked[pod.uid] = (pod, st.node_name)

    def drop_parked(self) -> None:
        """Remove the rows of the pods parked and not taken up, in the order they were parked."""
        parked, self._parked = self._parked, {}
        for pod, node_name in parked.values():
            self._unplace(pod, node_name)

    def parked_pod(self, uid: str) -> "Pod | None":
        """The object of the pod parked under ``uid`` (:meth:`park_assumed`), None when none is."""
        entry = self._parked.get(uid)
        return None if entry is None else entry[0]

    def forget_pod(self, pod: "Pod") -> None:
        """Drop an assumed pod (its binding failed)."""
        st = self._pods.get(pod.uid)
        if st is None:
            b = self.bulk.has(pod.uid, IN_CACHE) if self.bulk.n_live else -1
            if b < 0:
                return
            node_name = self.bulk.node_name(b)
            if node_name != pod.node_name and pod.node_name:
                raise CacheError(f"pod {pod.uid}({pod.key}) was assumed on {pod.node_name} but assigned to {node_name}")
            raise CacheError(f"pod {pod.uid}({pod.key}) is not assumed, so it cannot be removed or forgotten")
        if st.node_name != pod.node_name and pod.node_name:
            raise CacheError(f"pod {pod.uid}({pod.key}) was assumed on {pod.node_name} but assigned to {st.node_name}")
        if not st.assumed:
            raise CacheError(f"pod {pod.uid}({pod.key}) is not assumed, so it cannot be removed or forgotten")
        self._unplace(st.pod, st.node_name)
        del self._pods[pod.uid]
        self.assumed_fingerprint ^= hash(pod.uid)
        if self.generic_workload and st.pod.scheduling_group is not None:
            self._forget_member(st.pod)

    def add_pod(self, pod: "Pod") -> None:
        """A pod bound to a node (informer add): confirms an assumed pod or adds a new one. The
        insert of a new pod is inlined in ``_kernels/_bind.pyx`` (the compiled binding path)."""
        st = self._pods.get(pod.uid)
        if st is not None and st.assumed:
            if st.node_name != pod.node_name:
                # the pod was bound somewhere else than assumed: move it, as upstream does
                self._unplace(st.pod, st.node_name)
                self._place(pod, pod.node_name)
            elif st.pod is not pod:
                self._unplace(st.pod, st.node_name)
                self._place(pod, pod.node_name)
            assumed = st.pod
            # confirmed in place (every bound pod comes here: no new state object per binding)
            st.pod, st.node_name, st.assumed, st.binding_finished = pod, pod.node_name, False, False
            self.assumed_fingerprint ^= hash(pod.uid)
            if self.generic_workload:  # upstream's updatePod(assumed, pod): remove, then add
                self._replace_member(assumed, pod)
            return
        if st is not None or (self.bulk.n_live and self.bulk.has(pod.uid, IN_CACHE) >= 0):
            raise CacheError(f"pod {pod.uid}({pod.key}) was already in added state")
        self._place(pod, pod.node_name)
        self._pods[pod.uid] = _PodState(pod, pod.node_name)
        if self.generic_workload and pod.scheduling_group is not None:
            self._add_member(pod)

    def update_pod(self, old: "Pod", new: "Pod") -> None:
        st = self._pods.get(old.uid)
        if st is None and self.bulk.n_live:
            b = self.bulk.has(old.uid, IN_CACHE)
            if b >= 0:
                if self.bulk.node_name(b) != new.node_name:
                    raise CacheError(f"pod {old.key} updated on a different node than previously added to")
                stored = self._unplace_bulk(b)
                self._place(new, new.node_name)
                self._pods[new.uid] = _PodState(new, new.node_name)
                if self.generic_workload:
                    self._replace_member(stored, new)
                return
        if st is None or st.assumed:
            raise CacheError(f"pod {old.uid}({old.key}) is not added to scheduler cache, so cannot be updated")
        if st.node_name != new.node_name:
            raise CacheError(f"pod {old.key} updated on a different node than previously added to")
        self._unplace(st.pod, st.node_name)
        self._place(new, new.node_name)
        if self.generic_workload:
            self._replace_member(st.pod, new)
        st.pod = new

    def remove_pod(self, pod: "Pod") -> None:
        st = self._pods.get(pod.uid)
        if st is None:
            b = self.bulk.has(pod.uid, IN_CACHE) if self.bulk.n_live else -1
            if b < 0:
                raise CacheError(f"pod {pod.uid}({pod.key}) is not found in scheduler cache, so cannot be removed from it")
            self._remove_bulk(b)
            return
        self._remove_state(pod, st)

    def remove_confirmed_pod(self, pod: "Pod") -> None:
        """``remove_pod(get_pod(pod))`` when the cache holds ``pod`` and it is not assumed (a
        deleted pod leaving its node), else nothing: one lookup instead of three."""
        st = self._pods.get(pod.uid)
        if st is None:
            b = self.bulk.has(pod.uid, IN_CACHE) if self.bulk.n_live else -1
            if b >= 0:
                self._remove_bulk(b)
        elif not st.assumed:
            self._remove_state(st.pod, st)

    def _remove_bulk(self, b: int) -> None:
        stored = self._unplace_bulk(b)
        if self.generic_workload and stored.scheduling_group is not None:
            self._remove_member(stored)

    def _remove_state(self, pod: "Pod", st: _PodState) -> None:
        self._unplace(st.pod, st.node_name)
        del self._pods[pod.uid]
        if st.assumed:
            self.assumed_fingerprint ^= hash(pod.uid)
        if self.generic_workload and st.pod.scheduling_group is not None:
            self._remove_member(st.pod)

    def is_assumed_pod(self, pod: "Pod") -> bool:
        st = self._pods.get(pod.uid)
        return st is not None and st.assumed

    def get_pod(self, pod: "Pod") -> "Pod | None":
        st = self._pods.get(pod.uid)
        if st is None:
            b = self.bulk.has(pod.uid, IN_CACHE) if self.bulk.n_live else -1
            return None if b < 0 else self.bulk.pod(b)
        return st.pod

    def pod_count(self) -> int:
        return len(self._pods) + self.bulk.count(IN_CACHE)

    def pods_on_node(self, name: str) -> list[PodInfo]:
        row = self.snapshot.table.row_of.get(name)
        return [] if row is None else list(self.snapshot.table.pods[row])

    def update_snapshot(self) -> Snapshot:
        """The snapshot for the next cycle (already current: see the module docstring)."""
        return self.snapshot

    # -- pod groups (GenericWorkload; upstream cache.go's PodGroup methods) -------------------------
    def pod_group_states_lister(self) -> PodGroupStates:
        """``PodGroupStates()``: the states by group (an error without GenericWorkload). One
        lister is kept while it views this cache's states with its gate (GangScheduling asks for
        one per member at PreEnqueue and Permit)."""
        lister = getattr(self, "_pod_group_states_lister", None)
        if lister is None or lister._states is not self.pod_group_states or lister._enabled != self.generic_workload:
            lister = self._pod_group_states_lister = PodGroupStates(self.pod_group_states, self.generic_workload)
        return lister

    def pod_groups_lister(self) -> PodGroupObjects:
        """``PodGroups()``: the PodGroup objects seen (an error without GenericWorkload); kept as
        :meth:`pod_group_states_lister`'s."""
        lister = getattr(self, "_pod_groups_lister", None)
        if lister is None or lister._states is not self.pod_group_states or lister._enabled != self.generic_workload:
            lister = self._pod_groups_lister = PodGroupObjects(self.pod_group_states, self.generic_workload)
        return lister

    def add_pod_group_member(self, pod: "Pod") -> None:
        """``AddPodGroupMember``: an unscheduled member pod added (the queue's add event)."""
        if self.generic_workload and pod.scheduling_group is not None:
            self._add_member(pod)

    def update_pod_group_member(self, old: "Pod", new: "Pod") -> None:
        """``UpdatePodGroupMember``: an unscheduled member pod updated."""
        if not (self.generic_workload and new.scheduling_group is not None):
            return
        state = self.pod_group_states.get(self._member_key(new))
        if state is not None:  # upstream: "a missed add event", logged
            state.update_pod(old, new)

    def remove_pod_group_member(self, pod: "Pod") -> None:
        """``RemovePodGroupMember``: an unscheduled, not assumed member pod deleted."""
        if self.generic_workload and pod.scheduling_group is not None:
            self._remove_member(pod)

    def add_pod_group(self, pod_group: "PodGroup") -> None:
        """``AddPodGroup``: the PodGroup object into its state (made if none)."""
        if not self.generic_workload:
            return
        key = pod_group_key(pod_group.namespace, pod_group.name)
        state = self.pod_group_states.get(key)
        if state is None:
            state = self.pod_group_states[key] = PodGroupState()
        state.set_pod_group(pod_group)
        self.composite_groups.link_pod_group(pod_group)

    def update_pod_group(self, old: "PodGroup", new: "PodGroup") -> None:
        """``UpdatePodGroup``: the object replaced (no state: upstream logs a missed add event)."""
        if not self.generic_workload:
            return
        state = self.pod_group_states.get(pod_group_key(new.namespace, new.name))
        if state is not None:
            state.set_pod_group(new)

    def remove_pod_group(self, pod_group: "PodGroup") -> None:
        """``RemovePodGroup``: the object dropped; the state with it once it has no member."""
        if not self.generic_workload:
            return
        key = pod_group_key(pod_group.namespace, pod_group.name)
        state = self.pod_group_states.get(key)
        if state is None:
            return
        self.composite_groups.unlink_pod_group(pod_group)
        state.remove_pod_group()
        if state.empty():
            del self.pod_group_states[key]

    # CompositePodGroup (``AddCompositePodGroup`` ...): see fastsched.scheduler.composite_cache
    def add_composite_pod_group(self, cpg: "CompositePodGroup") -> None:
        self.composite_groups.add_composite_pod_group(cpg)

    def update_composite_pod_group(self, old: "CompositePodGroup", new: "CompositePodGroup") -> None:
        self.composite_groups.update_composite_pod_group(old, new)

    def remove_composite_pod_group(self, cpg: "CompositePodGroup") -> None:
        self.composite_groups.remove_composite_pod_group(cpg)

    @staticmethod
    def _member_key(pod: "Pod"):
        return pod_group_key(pod.namespace, pod.pod_group_name or "")

    def _add_member(self, pod: "Pod") -> None:
        key = self._member_key(pod)
        state = self.pod_group_states.get(key)
        if state is None:
            state = self.pod_group_states[key] = PodGroupState()
        state.add_pod(pod)

    def _remove_member(self, pod: "Pod") -> None:
        key = self._member_key(pod)
        state = self.pod_group_states.get(key)
        if state is None:
            return
        state.delete_pod(pod.uid)
        if state.empty():
            del self.pod_group_states[key]

    def _replace_member(self, old: "Pod", new: "Pod") -> None:
        """upstream's ``updatePod`` = ``removePod(old)`` + ``addPod(new)``, for the group parts."""
        if old.scheduling_group is not None:
            self._remove_member(old)
        if new.scheduling_group is not None:
            self._add_member(new)

    def _assume_member(self, pod: "Pod") -> None:
        key = self._member_key(pod)
        state = self.pod_group_states.get(key)
        if state is None:  # assumePodGroupMember: a state that knows the pod
            state = self.pod_group_states[key] = PodGroupState()
            state.all_pods[pod.uid] = pod
        state.assume_pod(pod)

    def _forget_member(self, pod: "Pod") -> None:
        state = self.pod_group_states.get(self._member_key(pod))
        if state is not None:  # upstream: "a missed add or assume event", logged
            state.forget_pod(pod.uid)
