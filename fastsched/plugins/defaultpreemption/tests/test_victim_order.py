"""Preemption's victim order is Go's ``sort.Slice`` (pdqsort), not a stable sort.

Upstream's ``SelectVictimsOnNode`` sorts the potential victims with ``sort.Slice(potentialVictims,
MoreImportantVictim)`` and re-sorts the victims the same way when both PDB groups are non-empty.
Beyond 12 elements pdqsort moves equally important victims, so which of them are reprieved, and
which a PDB counts as violating, is pdqsort's choice. The case below was run through the oracle
(upstream v1.37.2): 16 pods of one app on one full node, started at one of two times, a PDB allowing
2 disruptions, a preemptor needing 4 pods' room. Upstream evicts p01, p09, p14 and p15 (2 PDB
violations); a stable sort would evict p02, p09, p11 and p14. Both the per-node path and the
vectorized dry run (the compiled kernel) must give upstream's answer.
"""
from __future__ import annotations

import random

import numpy as np
import pytest

from fastsched._kernels import _preemption
from fastsched.plugins.defaultpreemption.vectorized import VectorizedDryRun
from fastsched.util.gosort import go_sort_slice

from .support import HIGH, LOW, Setup, node, pdb, pod

#: the start second of p00..p15 (one of two times: ties beyond pdqsort's insertion-sort length)
STARTS = (1, 1, 0, 1, 1, 1, 1, 1, 1, 0, 0, 1, 0, 0, 1, 0)


def setup(vectorized: bool) -> Setup:
    running = [pod(f"p{i:02d}", node_name="node-0", priority=LOW, req={"cpu": "250m", "memory": "64Mi"},
                   labels={"app": "web"}, start=float(s)) for i, s in enumerate(STARTS)]
    s = Setup([node("node-0", cpu="4", memory="64Gi")], running,
              pod("preemptor", priority=HIGH, req={"cpu": "1", "memory": "64Mi"}),
              pdbs=[pdb("pdb-web", {"app": "web"}, allowed=2)])
    s.plugin.vectorized = vectorized
    return s


@pytest.mark.parametrize("vectorized", [False, True], ids=["per-node", "vectorized"])
def test_tied_victims_follow_go_sort_slice(monkeypatch, vectorized):
    runs = []
    original = VectorizedDryRun.run
    monkeypatch.setattr(VectorizedDryRun, "run", lambda this, *a, **k: runs.append(1) or original(this, *a, **k))
    s = setup(vectorized)
    got, _, _ = s.dry_run(pdbs=s.client.list_pdbs())
    assert len(runs) == vectorized  # the path named is the path taken
    # pdqsort's order puts p09 and p15 first (the PDB's 2 disruptions: not violating), then 12 of
    # the 14 violating ones fit back; p14 and p01 do not. The final re-sort (both groups non-empty)
    # puts the earlier start first: [p09, p15] then [p14, p01].
    assert [(c.name, [p.name for p in c.victims.pods], c.victims.num_pdb_violations) for c in got] == \
        [("node-0", ["p09", "p15", "p14", "p01"], 2)]


@pytest.mark.parametrize("vectorized", [False, True], ids=["per-node", "vectorized"])
def test_tied_victims_evicted_by_post_filter(vectorized):
    s = setup(vectorized)
    _, status = s.post_filter()
    assert status is not None and status.is_success(), status
    assert sorted(v for v, _, _ in s.client.preempted) == ["p01", "p09", "p14", "p15"]  # the oracle's answer


def test_kernel_sort_is_go_sort_slice():
    """The kernel's pdqsort against :func:`go_sort_slice` (itself checked against Go's output in
    tests/util/test_gosort.py) on seeded lists of pool entries with many ties: few priorities, few
    start times, some not started (+inf: ordered by entry, the order their victims were made)."""
    rng = random.Random(11)
    moved = 0
    for _ in range(400):
        n = rng.choice((0, 1, 5, 12, 13, 20, 33, 50, 51, 80, 200))
        prio = np.array([rng.choice((0, 10, 10, 1000)) for _ in range(n)], dtype=np.int64)
        start = np.array([rng.choice((1.0, 2.0, 2.0, np.inf)) for _ in range(n)], dtype=np.float64)
        items = np.array(rng.sample(range(n), n), dtype=np.int64)  # a node's entries, any order

        def less(a: int, b: int) -> bool:
            if prio[a] != prio[b]:
                return bool(prio[a] > prio[b])
            if start[a] == start[b] == np.inf:
                return a < b
            return bool(start[a] < start[b])

        want = items.tolist()
        go_sort_slice(want, less)
        got = items.copy()
        _preemption.go_sort_entries(got, prio, start)
        assert got.tolist() == want, n
        stable = sorted(items.tolist(), key=lambda e: (-prio[e], start[e], e if start[e] == np.inf else 0))
        moved += want != stable
    assert moved > 50, "the lists must be ones where Go's order is not a stable sort's"
