"""Keyed heaps (upstream ``pkg/scheduler/backend/heap/heap.go``): add-or-update, delete and get by key.

:class:`Heap` is upstream's ``Heap``: a binary heap ordered by a ``less`` function, each entry
knowing its position (upstream's ``keyIndex``). :class:`KeyedHeap` keeps the same total order when
``less`` is given as a sort key, with C ``heapq`` doing the comparisons. Both break ties by insertion
order (upstream's Go heap leaves ties unspecified); the key is passed in rather than computed by a
``keyFunc``.

Every entry is a list whose last two items are the key and the value; :class:`_HeapBase` holds the
map from key to live entry, the accessors over it, and ``peek``/``pop``/``fix``/``delete`` on top
of each heap's hooks.
"""
from __future__ import annotations

import collections
import functools
import heapq
import itertools
from typing import Any, Callable, Iterable, Iterator

_KEY, _VALUE = -2, -1  # the last two items of every entry
_heappop = heapq.heappop


class _HeapBase:
    """What both heaps share: ``key -> entry`` for the live values, the accessors over it, and
    ``peek``/``pop``/``fix``/``delete`` in terms of the subclass's hooks."""

    __slots__ = ("_live", "_seq")

    def __init__(self):
        self._live: dict[str, list] = {}   # key -> its live entry
        self._seq = itertools.count()      # insertion rank (tie-break)

    def __len__(self) -> int:
        return len(self._live)

    def __contains__(self, key: object) -> bool:
        return key in self._live

    def get(self, key: str) -> Any | None:
        e = self._live.get(key)
        return None if e is None else e[_VALUE]

    def peek(self) -> Any | None:
        e = self._head()
        return None if e is None else e[_VALUE]

    def pop(self) -> Any | None:
        e = self._head()
        if e is None:
            return None
        del self._live[e[_KEY]]
        self._pop_head(e)
        return e[_VALUE]

    def fix(self, key: str) -> None:
        """Restore the order after the value stored under ``key`` changed in place."""
        e = self._live.get(key)
        if e is not None:
            self._fix_entry(e)

    def delete(self, key: str) -> Any | None:
        e = self._live.pop(key, None)
        if e is None:
            return None
        self._discard(e)
        return e[_VALUE]

    def values(self) -> list:
        """The values in pop order (sorted copy)."""
        return [e[_VALUE] for e in sorted(self._entries_view(), key=self._entry_order())]

    def raw_values(self) -> Iterator[Any]:
        """The values in storage order (upstream ``List``)."""
        return (e[_VALUE] for e in self._entries_view())

    # -- hooks ---------------------------------------------------------------------------------
    def _head(self) -> list | None:
        """The entry that pops next, or None when empty."""
        raise NotImplementedError

    def _pop_head(self, e: list) -> None:
        """Remove the head entry ``e`` (already out of ``_live``)."""
        raise NotImplementedError

    def _discard(self, e: list) -> None:
        """Remove the entry ``e`` (already out of ``_live``) wherever it is."""
        raise NotImplementedError

    def _fix_entry(self, e: list) -> None:
        raise NotImplementedError

    def _entries_view(self) -> Iterable[list]:
        """The live entries, in storage order."""
        raise NotImplementedError

    def _entry_order(self) -> Callable[[list], Any]:
        """A sort key over entries giving the pop order."""
        raise NotImplementedError


class Heap(_HeapBase):
    """A binary heap of values keyed by string, ordered by ``less``; ties by insertion order."""

    __slots__ = ("_less", "_items")

    def __init__(self, less: Callable[[Any, Any], bool]):
        super().__init__()
        self._less = less
        self._items: list[list] = []       # heap order; entries [seq, position, key, value]

    def _lt(self, a: list, b: list) -> bool:
        if self._less(a[3], b[3]):
            return True
        if self._less(b[3], a[3]):
            return False
        return a[0] < b[0]

    def add_or_update(self, key: str, value: Any) -> None:
        e = self._live.get(key)
        if e is not None:
            e[3] = value
            self._fix(e[1])
            return
        i = len(self._items)
        e = [next(self._seq), i, key, value]
        self._items.append(e)
        self._live[key] = e
        self._up(i)

    def add_or_update_many(self, items: list[tuple[str, Any]]) -> None:
        """``add_or_update`` of each ``(key, value)``, in order."""
        for key, value in items:
            self.add_or_update(key, value)

    # -- hooks ---------------------------------------------------------------------------------
    def _head(self) -> list | None:
        return self._items[0] if self._items else None

    def _discard(self, e: list) -> None:
        items = self._items
        i = e[1]
        last = len(items) - 1
        if i != last:
            self._swap(i, last)
        items.pop()
        if i < len(items):
            self._fix(i)

    _pop_head = _discard

    def _fix_entry(self, e: list) -> None:
        self._fix(e[1])

    def _entries_view(self) -> Iterable[list]:
        return self._items

    def _entry_order(self) -> Callable[[list], Any]:
        return functools.cmp_to_key(lambda a, b: -1 if self._lt(a, b) else (1 if self._lt(b, a) else 0))

    # -- internals -----------------------------------------------------------------------------
    def _swap(self, i: int, j: int) -> None:
        items = self._items
        items[i], items[j] = items[j], items[i]
        items[i][1] = i
        items[j][1] = j

    def _fix(self, i: int) -> None:
        if not self._down(i):
            self._up(i)

    def _up(self, i: int) -> None:
        items = self._items
        while i > 0:
            parent = (i - 1) // 2
            if not self._lt(items[i], items[parent]):
                break
            self._swap(i, parent)
            i = parent

    def _down(self, i0: int) -> bool:
        items = self._items
        n = len(items)
        i = i0
        while True:
            left = 2 * i + 1
            if left >= n:
                break
            j = left
            right = left + 1
            if right < n and self._lt(items[right], items[left]):
                j = right
            if not self._lt(items[j], items[i]):
                break
            self._swap(i, j)
            i = j
        return i > i0


class KeyedHeap(_HeapBase):
    """:class:`Heap` for an order given as a sort key (``less(a, b)`` iff ``key(a) < key(b)``).

    The same total order (key, then insertion order), so the same pops, with C ``heapq`` doing the
    comparisons instead of a Python ``less`` per step. Updates and deletes mark the old entry dead
    and leave it in the list until it surfaces (lazy deletion); an update keeps the insertion rank.

    Entries pushed in increasing order (pods queued one after another at one priority: nearly
    every push) go to a sorted run (a deque) instead of the heap: each pop takes the smaller of the
    run's head and the heap's, so it costs a comparison instead of a sift through log(n) levels.
    Entries are totally ordered (the push number is unique), so which of the two holds an entry
    does not change the pops.
    """

    __slots__ = ("_key", "_entries", "_run", "_pushes", "_shared_keys")

    def __init__(self, key: Callable[[Any], Any]):
        super().__init__()
        self._key = key
        # [sort key, insertion rank, push number (unique: entries never compare further), alive, key, value]
        self._entries: list[list] = []
        #: entries in increasing order (a prefix of the pop order of the entries it holds)
        self._run: collections.deque[list] = collections.deque()
        self._pushes = itertools.count()
        # Equal sort keys share one object: entries compare item by item, and the comparison of
        # two identical objects stops at the identity check (pods queued together at one priority
        # all have the same key), so a heap step costs two int comparisons instead of a tuple one.
        self._shared_keys: dict[Any, Any] = {}

    def _push(self, key: str, value: Any, seq: int) -> None:
        sort_key = self._key(value)
        shared = self._shared_keys
        try:
            sort_key = shared.setdefault(sort_key, sort_key)
        except TypeError:  # an unhashable key: compared by value, as it is
            pass
        else:
            if len(shared) > 2 * len(self._live) + 64:  # bounded; forgetting only costs sharing
                shared.clear()
        e = [sort_key, seq, next(self._pushes), True, key, value]
        self._live[key] = e
        run = self._run
        if not run or run[-1] < e:
            run.append(e)
        else:
            heapq.heappush(self._entries, e)

    def add_or_update(self, key: str, value: Any) -> None:
        old = self._live.get(key)
        if old is not None:
            old[3] = False
            self._push(key, value, old[1])
        else:
            self._push(key, value, next(self._seq))
        self._compact_if_sparse()

    def add_or_update_many(self, items: list[tuple[str, Any]]) -> None:
        """``add_or_update`` of each ``(key, value)`` in order, the sparse check once at the end
        (a run of new pods queued at once: the same entries, ranks and pushes, so the same pops;
        the dead entries it could have dropped on the way are dropped at the end)."""
        live, seq, push = self._live, self._seq, self._push
        for key, value in items:
            old = live.get(key)
            if old is not None:
                old[3] = False
                push(key, value, old[1])
            else:
                push(key, value, next(seq))
        self._compact_if_sparse()

    def pop(self) -> Any | None:
        # the smaller live head of the run and the heap; dead entries met on the way are dropped,
        # as _head does
        run, entries = self._run, self._entries
        while run and not run[0][3]:
            run.popleft()
        while entries and not entries[0][3]:
            _heappop(entries)
        if run:
            e = run.popleft() if not entries or run[0] < entries[0] else _heappop(entries)
        elif entries:
            e = _heappop(entries)
        else:
            return None
        del self._live[e[4]]
        return e[5]

    # -- hooks ---------------------------------------------------------------------------------
    def _head(self) -> list | None:
        run, entries = self._run, self._entries
        while run and not run[0][3]:
            run.popleft()
        while entries and not entries[0][3]:
            heapq.heappop(entries)
        if run:
            return run[0] if not entries or run[0] < entries[0] else entries[0]
        return entries[0] if entries else None

    def _pop_head(self, e: list) -> None:
        if self._run and self._run[0] is e:
            self._run.popleft()
        else:
            heapq.heappop(self._entries)

    def _discard(self, e: list) -> None:
        e[3] = False
        self._compact_if_sparse()

    def _fix_entry(self, e: list) -> None:
        self.add_or_update(e[_KEY], e[_VALUE])

    def _entries_view(self) -> Iterable[list]:
        return self._live.values()

    def _entry_order(self) -> Callable[[list], Any]:
        return lambda e: (e[0], e[1])

    def _compact_if_sparse(self) -> None:
        # dead entries are bounded by the live ones (and a small constant)
        if len(self._entries) + len(self._run) > 2 * len(self._live) + 64:
            self._entries = [e for e in self._entries if e[3]]
            heapq.heapify(self._entries)
            self._run = collections.deque(e for e in self._run if e[3])
