"""The differential oracle's recorded answers, replayed without Go.

``tests/oracle/recorded/<class>.jsonl.gz`` holds scenarios on which upstream kube-scheduler v1.37.2
(``oracle/``) and fastsched agreed when they were recorded (``fastsched differential --record``), with
the oracle's answer per attempt and fastsched's tie choices (the replay). Each scenario runs through
fastsched again and is compared field by field with the oracle's answer, as the live run compares.
"""
from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

from fastsched.testing import oracle

RECORDED = Path(__file__).parent / "recorded"


def _load() -> dict[str, list[dict]]:
    out: dict[str, list[dict]] = {}
    for path in sorted(RECORDED.glob("*.jsonl.gz")):
        out[path.name.removesuffix(".jsonl.gz")] = oracle.read_recorded(path)
    return out


RECORDS = _load()


def test_recorded_set_covers_every_class():
    assert set(RECORDS) == set(oracle.CLASSES), "a class without recorded scenarios (or a stray file)"
    counts = {cls: len(recs) for cls, recs in RECORDS.items()}
    assert min(counts.values()) >= 20, counts
    assert sum(counts.values()) >= 500, counts
    attempts = [a for recs in RECORDS.values() for r in recs for a in r["attempts"]]
    # the set exercises what it claims to: placements, failures, scores, ties, preemption, volume binding
    assert sum(bool(a.get("selected")) for a in attempts) > 500
    assert sum(bool(a.get("fit_error")) for a in attempts) > 100
    assert sum(bool(a.get("scores")) for a in attempts) > 300
    assert sum(len(a.get("best") or ()) > 1 for a in attempts) > 100
    assert sum(bool(a.get("victims")) for a in attempts) > 10
    assert sum(bool(a.get("volume_bindings")) for a in attempts) > 10
    assert sum(bool(a.get("claim_allocations")) for a in attempts) > 10


@pytest.mark.parametrize("cls", sorted(oracle.CLASSES))
def test_fastsched_agrees_with_recorded_oracle(cls):
    failures = []
    for rec in RECORDS.get(cls, ()):
        sc = rec["scenario"]
        mine = oracle.run_fastsched(sc, sc["replay"])
        diffs = oracle.compare(mine["attempts"], rec["attempts"])
        if diffs:
            failures.append(f"{sc['id']}: " + "; ".join(
                f"{d['pod']} {d['field']}: fastsched {json.dumps(d['fastsched'])[:300]} "
                f"oracle {json.dumps(d['oracle'])[:300]}" for d in diffs[:3]))
    assert RECORDS.get(cls), f"no recorded scenarios for {cls}"
    assert not failures, f"{len(failures)} of {len(RECORDS[cls])} {cls} scenarios differ from upstream:\n" + \
        "\n".join(failures[:10])


def _first_with(pred):
    for recs in RECORDS.values():
        for rec in recs:
            for i, a in enumerate(rec["attempts"]):
                if pred(a):
                    return rec, i
    raise AssertionError("no recorded attempt of that kind")


@pytest.mark.parametrize("mutate", ["score", "filter_reason", "best", "fit_error", "victims"])
def test_a_changed_answer_is_a_difference(mutate):
    """The comparison can fail: change one field of a recorded answer, fastsched now differs."""
    if mutate == "score":
        rec, i = _first_with(lambda a: a.get("scores"))
    elif mutate == "filter_reason":
        rec, i = _first_with(lambda a: a.get("filter"))
    elif mutate == "best":
        rec, i = _first_with(lambda a: len(a.get("best") or ()) > 1)
    elif mutate == "fit_error":
        rec, i = _first_with(lambda a: a.get("fit_error"))
    else:
        rec, i = _first_with(lambda a: a.get("victims"))
    theirs = copy.deepcopy(rec["attempts"])
    a = theirs[i]
    if mutate == "score":
        plugin = sorted(a["scores"])[0]
        node = sorted(a["scores"][plugin])[0]
        a["scores"][plugin][node][0] += 1
    elif mutate == "filter_reason":
        node = sorted(a["filter"])[0]
        a["filter"][node]["reasons"] = a["filter"][node]["reasons"] + ["something else"]
    elif mutate == "best":
        a["best"] = a["best"][:1]
    elif mutate == "fit_error":
        a["fit_error"] = a["fit_error"].replace("0/", "1/", 1)
    else:
        a["victims"] = []
    sc = rec["scenario"]
    mine = oracle.run_fastsched(sc, sc["replay"])
    assert oracle.compare(mine["attempts"], rec["attempts"]) == []
    diffs = oracle.compare(mine["attempts"], theirs)
    assert diffs and diffs[0]["pod"] == a["pod"], diffs
