"""The gated DRA classes' recorded answers, replayed without Go, with each class's gates.

``tests/oracle/recorded_gated/<class>.jsonl.gz`` holds scenarios of the classes run only when named
with feature gates on both sides (:data:`~fastsched.testing.oracle_scenarios.GATED_CLASSES`:
``dra-alpha``, ``dra-derived``, ``dra-nar``) on which kube-scheduler v1.37.2 and fastsched agreed
(``fastsched differential --class C --record DIR``, seed 16180001, 40 each). Each runs through
fastsched again with the class's gates and is compared with the oracle's answer, as the live run
compares; the default-gate set (``test_recorded.py``) does not reach these code paths.
"""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from fastsched.errors import FastschedError
from fastsched.testing import oracle
from fastsched.testing.oracle_scenarios import GATED_CLASSES

RECORDED = Path(__file__).parent / "recorded_gated"
RECORDS = {cls: oracle.read_recorded(RECORDED / f"{cls}.jsonl.gz") for cls in sorted(GATED_CLASSES)}


def _differences(rec: dict, gates: str) -> list:
    sc = rec["scenario"]
    return oracle.compare(oracle.run_fastsched(sc, sc["replay"], gates)["attempts"], rec["attempts"])


@pytest.mark.parametrize("cls", sorted(GATED_CLASSES))
def test_fastsched_agrees_with_the_recorded_oracle_with_the_class_gates(cls):
    recs = RECORDS[cls]
    assert len(recs) >= 30, f"{cls}: {len(recs)} recorded scenarios"
    attempts = [a for r in recs for a in r["attempts"]]
    assert sum(bool(a.get("claim_allocations")) for a in attempts) > 20  # DRA allocations compared
    gates = GATED_CLASSES[cls][1]
    failures = [f"{r['scenario']['id']}: {json.dumps(d[:2])[:600]}" for r in recs if (d := _differences(r, gates))]
    assert not failures, f"{len(failures)} of {len(recs)} {cls} scenarios differ:\n" + "\n".join(failures[:10])


@pytest.mark.parametrize("cls", sorted(GATED_CLASSES))
def test_the_gates_matter_to_the_recorded_answers(cls):
    """Replayed with v1.37's default gates instead, some scenarios differ: the set checks the gated
    paths, not only what the default gates answer the same way."""
    differing = 0
    for rec in RECORDS[cls][:15]:
        try:
            differing += bool(_differences(rec, ""))
        except FastschedError:  # a field the default gates drop or refuse (the API server's part)
            differing += 1
    assert differing >= 3, f"{cls}: only {differing} of 15 scenarios depend on the class's gates"
