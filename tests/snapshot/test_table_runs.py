"""A run of pods accounted by ``take_run_records`` + the kernel's writer + ``add_run`` leaves the
node table exactly as the same pods added one by one (docs/dev/gang-runs.md section 9: record
allocation order).

The kernel (``FusedPlan.place_run``) fills, links and accounts each record through
``Accounts.add_pod`` with versions ``version + 1 + i``: the loop below makes those calls. Runs
that place fewer pods than records were taken give the others back: the freed stack must be as
before (LIFO) and ``_next_record`` rewound, whatever mix of freed and new records was taken; a run
never takes records past the columns' capacity (single adds grow them at the first one past).
"""
from __future__ import annotations

import random

import numpy as np
import pytest

from fastsched.snapshot import build_snapshot
from fastsched.testing import make_node, make_pod


def _table(seed: int):
    rng = random.Random(seed)
    nodes = [make_node(f"n{i}", cpu="64", memory="256Gi", pods=500) for i in range(6)]
    pods = [make_pod(f"old-{i}", uid=f"00000000-0000-4000-8000-{i:012d}", cpu="100m",
                      node_name=f"n{rng.randrange(6)}")
            for i in range(rng.randint(5, 40))]
    snap = build_snapshot(nodes, pods)
    table = snap.table
    for p in rng.sample(pods, rng.randint(0, len(pods))):  # freed records, in a random order
        table.remove_pod(p.node_name, p)
    template = make_pod("member", cpu="250m", memory="1Gi")
    table.add_pod("n0", template.replace(name="first", uid="10000000-0000-4000-8000-000000000000", node_name="n0"))
    return table, template, rng


def _state(table) -> tuple:
    rows = tuple(tuple((rec, table.pod_names[rec], table.pod_info(rec).pod.uid) for rec in table.pod_records(row))
                 for row in range(len(table)))
    cols = tuple(np.asarray(getattr(table, name)).tobytes() for name in (
        "requested", "nonzero_requested", "pod_count", "row_version", "pod_row", "pod_next", "pod_prev",
        "pod_shape", "pod_flags", "pod_uid_hi", "pod_uid_lo", "pod_signature"))
    return rows, cols, table.version, tuple(table._freed_records), table._next_record, table.pod_capacity, \
        dict(table._pod_uid_str)


@pytest.mark.parametrize("seed", range(12))
def test_a_run_ends_as_single_adds(seed):
    a, template, rng = _table(seed)
    b, _, _ = _table(seed)
    m = rng.randint(1, 80)  # may pass the record capacity
    used = rng.randint(0, m)
    pods = [template.replace(name=f"m{i}", uid=(f"20000000-0000-4000-8000-{i:012d}" if i % 5 else f"odd-uid-{i}"))
            for i in range(m)]
    rows = [rng.randrange(len(a)) for _ in range(m)]
    recs, from_freed = b.take_run_records(m)
    used = min(used, len(recs))
    d, same = b.run_derived(pods)
    assert same == m
    for i in range(used):
        a.add_pod(a.node_names[rows[i]], pods[i].with_node_name(a.node_names[rows[i]]))
    canonical = np.zeros(len(recs), dtype=np.uint8)
    for i in range(used):  # what FusedPlan.place_run does after placing pod i
        canonical[i] = b._acc.add_pod(rows[i], int(recs[i]), pods[i].uid, d.shape, d.flags, d.signature,
                                      d.affinity_signature, b.version + 1 + i)
    from fastsched.framework.types import PodInfo
    b.add_run(rows[:used], recs, from_freed, [PodInfo(p.with_node_name(b.node_names[r]))
                                             for p, r in zip(pods[:used], rows)], d, d.flags, canonical)
    assert _state(b) == _state(a)


def test_runs_take_no_records_past_the_capacity():
    table, template, _ = _table(3)
    free = len(table._freed_records) + table.pod_capacity - table._next_record
    recs, from_freed = table.take_run_records(free + 10)
    assert len(recs) == free and from_freed == len([r for r in recs if r < table._next_record - (free - from_freed)])
