"""storage_view.RowCache: rows recomputed when their version moves, the owner's delta called only
for a changed value, its aggregate always equal to one built from scratch."""
from __future__ import annotations

import random
from collections import Counter

import numpy as np
import pytest

from fastsched.plugins.volumebinding.storage_view import RowCache


class _Table:
    """What RowCache reads of a NodeTable: ``row_version``, ``live`` and (here) each row's items."""

    def __init__(self, n: int):
        self.row_version = np.zeros(n, dtype=np.int64)
        self.live = np.ones(n, dtype=bool)
        self.items: list[tuple[str, ...]] = [() for _ in range(n)]
        self.version = 0

    def touch(self, row: int) -> None:
        self.version += 1
        self.row_version[row] = self.version


@pytest.mark.parametrize("seed", range(3))
def test_delta_owner_stays_equal_to_a_recount_and_sees_only_changes(seed):
    rng = random.Random(seed)
    table = _Table(12)
    counts: Counter = Counter()
    calls: list[tuple] = []

    def on_change(row, old, new):
        calls.append((row, old, new))
        counts.subtract(old or ())
        counts.update(new or ())

    cache = RowCache(lambda t, row: tuple(t.items[row]), on_change)
    equal_reloads = 0
    for step in range(200):
        row = rng.randrange(12)
        if rng.random() < 0.4:
            equal_reloads += 1  # the row moves but its value stays (an assumed pod bound)
        else:
            table.items[row] = tuple(rng.choice("abc") for _ in range(rng.randrange(3)))
        table.touch(row)
        rows = np.arange(12) if rng.random() < 0.5 else np.array(sorted(rng.sample(range(12), 4)))
        calls.clear()
        cache.sync(table, rows, version=1)
        assert all(old != new for _, old, new in calls), step
        want: Counter = Counter()
        for r, value in cache.items():
            want.update(value or ())
        assert +counts == +want, step
        for r in rows.tolist():
            assert cache.get(r) == tuple(table.items[r])
    assert equal_reloads > 20
