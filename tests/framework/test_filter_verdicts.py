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
