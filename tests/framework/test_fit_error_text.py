"""FitError's message (upstream FitError.Error) kept per distinct diagnosis: the same text as
building it every time, on seeded random diagnoses over plain and array-backed NodeToStatus."""
from __future__ import annotations

import numpy as np
import pytest

from fastsched.framework import types as fw_types
from fastsched.framework.status import Code, Status
from fastsched.framework.types import NO_NODE_AVAILABLE_MSG, Diagnosis, FitError, NodeToStatus
from fastsched.framework.vectorized import FilterVerdicts
from fastsched.runtime.filter_results import ArrayNodeToStatus, FilterResults

REASONS = ["Insufficient cpu", "Insufficient memory", "node(s) had untolerated taint {a: b}",
           "node(s) didn't match Pod's node affinity/selector", "Too many pods"]


def _built(fe: FitError) -> str:
    """The message assembled from scratch (no memo): upstream's FitError.Error."""
    msg = NO_NODE_AVAILABLE_MSG.format(fe.num_all_nodes) + ":"
    d = fe.diagnosis
    if d.pre_filter_msg:
        msg += f" {d.pre_filter_msg}."
    else:
        counts: dict[str, int] = {}
        for _, s in d.node_to_status.items():
            for r in s.reasons():
                counts[r] = counts.get(r, 0) + 1
        missing = fe.num_all_nodes - d.node_to_status.len()
        if missing > 0:
            for r in d.node_to_status.absent_nodes_status().reasons():
                counts[r] = counts.get(r, 0) + missing
        parts = sorted(f"{v} {k}" for k, v in counts.items())
        if parts:
            msg += f" {', '.join(parts)}."
    if d.post_filter_msg:
        msg += f" {d.post_filter_msg}"
    return msg


def _random_status(rng) -> Status | None:
    k = int(rng.integers(0, 4))
    if k == 0:
        return None  # feasible
    picked = [REASONS[i] for i in rng.choice(len(REASONS), size=k - 1 or 1, replace=False)]
    code = Code.UNSCHEDULABLE if rng.random() < 0.7 else Code.UNSCHEDULABLE_AND_UNRESOLVABLE
    return Status(code, *picked)


def _random_fit_error(rng) -> FitError:
    n = int(rng.integers(1, 30))
    names = [f"n{i}" for i in range(n)]
    statuses = [_random_status(rng) for _ in names]
    absent = None if rng.random() < 0.5 else Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, "absent reason")
    if rng.random() < 0.5:
        nts: NodeToStatus = NodeToStatus({a: s for a, s in zip(names, statuses) if s is not None}, absent=absent)
    else:
        res = FilterResults(n, ["P"])
        res.record(0, "P", np.arange(n, dtype=np.int64), FilterVerdicts.from_statuses(statuses))
        nts = ArrayNodeToStatus(res, names, np.flatnonzero(~res.feasible()), absent=absent)
    if rng.random() < 0.3:  # a status set by name over the arrays (an extender's)
        nts.set(names[int(rng.integers(0, n))], Status(Code.UNSCHEDULABLE, REASONS[int(rng.integers(0, 5))]))
    d = Diagnosis(node_to_status=nts)
    if rng.random() < 0.2:
        d.pre_filter_msg = rng.choice(["node(s) didn't satisfy plugin(s) [X]", "no PersistentVolumeClaim"])
    if rng.random() < 0.5:
        d.post_filter_msg = rng.choice(["preemption: not eligible due to preemptionPolicy=Never.",
                                        "preemption: 0/3 nodes are available: 3 No preemption victims found."])
    return FitError(None, n + int(rng.integers(0, 3)), d)


@pytest.mark.parametrize("seed", range(6))
def test_fit_error_text_as_built_from_scratch(seed, monkeypatch):
    """Every message equals the one built anew, asked twice (the second from the memo), also
    across the memo's bound (cleared when full)."""
    monkeypatch.setattr(fw_types, "_FIT_TEXTS", {})
    monkeypatch.setattr(fw_types, "_FIT_TEXTS_MAX", 7)
    rng = np.random.default_rng(seed)
    errors = [_random_fit_error(rng) for _ in range(60)]
    for fe in errors + errors[::-1]:
        want = _built(fe)
        assert str(fe) == want and str(fe) == want
    assert len(fw_types._FIT_TEXTS) <= 7


def test_array_node_to_status_counts_as_its_statuses():
    """ArrayNodeToStatus' len and reason_histogram (plain dicts) agree with counting its items."""
    rng = np.random.default_rng(7)
    for _ in range(40):
        fe = _random_fit_error(rng)
        nts = fe.diagnosis.node_to_status
        want: dict[str, int] = {}
        for _, s in nts.items():
            for r in s.reasons():
                want[r] = want.get(r, 0) + 1
        assert nts.reason_histogram() == want
        assert nts.len() == len(list(nts.items()))
