"""The differential oracle live: upstream kube-scheduler (``oracle/``, built with Go) against fastsched.

Skipped, with the reason, where ``go`` is not on PATH (the recorded set, test_recorded.py, checks the
same things without it). ``.ci/run`` builds the oracle first and runs a larger pass with a fresh seed.
"""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from fastsched.testing import oracle
from fastsched.testing.oracle_scenarios import NAMED_CLASSES

#: the oracle's Go module, in the checkout beside tests/ (oracle.ORACLE_DIR is found from the
#: package's location, which is not a checkout when the suite runs against an installed wheel)
ORACLE_DIR = Path(__file__).resolve().parents[2] / "oracle"

pytestmark = pytest.mark.skipif(shutil.which("go") is None,
                                reason="the oracle needs Go (`go` not on PATH); test_recorded.py replays its answers")


@pytest.fixture(scope="module")
def live_oracle():
    with pytest.MonkeyPatch.context() as mp:  # for the build and the pinned release (oracle/go.mod)
        mp.setattr(oracle, "ORACLE_DIR", ORACLE_DIR)
        try:
            binary = oracle.build_oracle()
        except RuntimeError as exc:  # e.g. no network for a cold module cache
            pytest.skip(f"the oracle did not build: {str(exc)[:500]}")
        with oracle.Oracle(binary) as o:
            yield o


@pytest.mark.parametrize("cls", sorted(oracle.CLASSES) + sorted(NAMED_CLASSES))
def test_live_scenarios_agree(live_oracle, cls):
    skew = oracle.version_skew(live_oracle.version)
    if skew is not None:  # a port in progress (docs/dev/v1.37-port.md): the releases differ
        pytest.xfail(skew)
    seen = 0
    for seed in range(4):
        sc = oracle.generate(cls, 900_000 + seed)
        diffs, mine, theirs = oracle.check(sc, live_oracle)
        assert not diffs, f"{sc['id']}: {json.dumps(diffs)[:2000]}"
        seen += len(theirs["attempts"])
    assert seen > 0


def test_live_oracle_sees_a_changed_cluster(live_oracle):
    """The oracle answers from the scenario: a node too small for the pod changes its answer."""
    sc = oracle.generate("resources", 1)
    small = json.loads(json.dumps(sc))
    for n in small["nodes"]:
        n["status"]["allocatable"]["cpu"] = n["status"]["capacity"]["cpu"] = "1m"
    small["incoming"] = [p for p in small["incoming"]
                         if p["spec"]["containers"][0].get("resources", {}).get("requests", {}).get("cpu", "0") != "0"][:1]
    assert small["incoming"]
    answer = live_oracle.ask(small, [""])
    (at,) = answer["attempts"]
    assert at["selected"] == "" and "Insufficient cpu" in at["fit_error"]
    skew = oracle.version_skew(live_oracle.version)
    if skew is not None:  # a port in progress (docs/dev/v1.37-port.md): the releases differ
        pytest.xfail(skew)
    diffs, _, _ = oracle.check(small, live_oracle)
    assert diffs == []
