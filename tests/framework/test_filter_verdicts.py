"""FilterVerdicts.all_pass and the shortcut it allows (``passes_every_node``)."""
from __future__ import annotations

import numpy as np
import pytest

from fastsched.framework import vectorized
from fastsched.framework.vectorized import FilterVerdicts, passes_every_node


@pytest.mark.parametrize("n", [0, 1, 7, 4096, 5000, 9000])
def test_all_pass_is_what_init_makes_of_every_node_passing(n):
    res = FilterVerdicts.all_pass(n)
    made = FilterVerdicts(np.zeros(n, dtype=np.int8), np.full(n, -1, dtype=np.int32))
    assert type(res) is FilterVerdicts
    assert res.codes.dtype == np.int8 and res.reason_ids.dtype == np.int32 and res.reasons == []
    assert res.codes.tolist() == made.codes.tolist() and res.reason_ids.tolist() == made.reason_ids.tolist()
    assert not res.codes.flags.writeable and not res.reason_ids.flags.writeable
    assert passes_every_node(res) and not passes_every_node(made)
    assert all(res.status(i) is None for i in range(min(n, 3)))


def test_all_pass_of_a_subclass_is_the_subclass():
    class Verdicts(FilterVerdicts):
        __slots__ = ()

    res = Verdicts.all_pass(3)
    assert type(res) is Verdicts and res.codes.tolist() == [0, 0, 0] and res.reasons == []


def test_verdicts_not_from_all_pass_are_not_taken_for_it():
    """Other verdicts, a failing node among them or codes replaced after all_pass, never take the
    shortcut (even those passing every node: the shortcut is all_pass's buffer, not the values)."""
    res = FilterVerdicts.all_pass(4)
    res.codes = np.array([0, 2, 0, 0], dtype=np.int8)
    assert not passes_every_node(res)
    assert not passes_every_node(FilterVerdicts.from_mask(np.array([False, True]), vectorized.Code.UNSCHEDULABLE, "x"))
    assert not passes_every_node(FilterVerdicts.from_statuses([None, None]))


@pytest.mark.parametrize("seed", range(40))
def test_from_statuses_at_the_given_positions_is_the_full_pass(seed):
    """``from_statuses(statuses, at)`` (the positions that may hold a Status, ascending) against
    the pass over every position: the same codes, reason ids and reasons in the same order. The
    positions include None and Success entries, as a caller's decided nodes do."""
    import random

    from fastsched.framework.status import Code, Status

    rng = random.Random(4400 + seed)
    n = rng.randint(0, 60)
    kinds = [Status(Code.UNSCHEDULABLE, "a"), Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, "b"),
             Status(Code.UNSCHEDULABLE, "a", "c"), Status(Code.ERROR, "boom"), Status(Code.SUCCESS)]
    statuses = [rng.choice(kinds) if rng.random() < 0.3 else None for _ in range(n)]
    at = [i for i in range(n) if statuses[i] is not None or rng.random() < 0.2]
    full = FilterVerdicts.from_statuses(statuses)
    given = FilterVerdicts.from_statuses(statuses, at)
    assert given.codes.tolist() == full.codes.tolist()
    assert given.reason_ids.tolist() == full.reason_ids.tolist()
    assert given.reasons == full.reasons
    assert given.codes.dtype == np.int8 and given.reason_ids.dtype == np.int32


@pytest.mark.parametrize("seed", range(20))
def test_from_mask_is_the_statuses_it_stands_for(seed):
    """``from_mask`` against ``from_statuses`` of the same per-node statuses (one Status with the
    code and reasons where the mask is set), for every failing code, over masks of any density,
    strided ones included."""
    import random

    from fastsched.framework.status import Code, Status

    rng = random.Random(4500 + seed)
    n = rng.randint(0, 80)
    code = rng.choice([Code.UNSCHEDULABLE, Code.UNSCHEDULABLE_AND_UNRESOLVABLE, Code.ERROR])
    mask = np.array([rng.random() < rng.random() for _ in range(2 * n)], dtype=bool)[::2]
    got = FilterVerdicts.from_mask(mask, code, "r1", "r2")
    want = FilterVerdicts.from_statuses([Status(code, "r1", "r2") if m else None for m in mask.tolist()])
    assert got.codes.dtype == np.int8 and got.reason_ids.dtype == np.int32
    assert got.codes.tolist() == want.codes.tolist()
    assert got.reason_ids.tolist() == want.reason_ids.tolist()
    assert got.reasons == [("r1", "r2")]
    assert [got.status(i) is None for i in range(len(mask))] == [not m for m in mask.tolist()]
