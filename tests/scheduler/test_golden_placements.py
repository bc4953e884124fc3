"""A regression check, not an independent expectation: the scheduler's decisions on a fixed set of
seeded workloads equal those it made itself before the compiled cycle engine (issue 13): node,
status, message and attempts of every pod, the round-robin start index and both RNG states.

``tools/record_placements.py`` recorded the fixture by running fastsched, so it holds whatever
fastsched decided then, right or wrong. A failure says a decision moved; whether the old or the new
one is upstream's must be settled elsewhere (the per-plugin tests ported from upstream, the
oracle). Passing says nothing about agreement with kube-scheduler."""
import importlib.util
import json
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
GOLDEN = json.loads((Path(__file__).parent / "data" / "golden_placements.json").read_text())


def _recorder():
    spec = importlib.util.spec_from_file_location("record_placements", ROOT / "tools" / "record_placements.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


RECORDER = _recorder()
CASES = ([(name, "workload", args) for name, *args in RECORDER.WORKLOAD_CASES]
         + [(name, "random", args) for name, *args in RECORDER.RANDOM_CASES])


def test_every_case_is_recorded():
    assert sorted(GOLDEN) == sorted(name for name, _, _ in CASES)


@pytest.mark.parametrize("name,kind,args", CASES, ids=[c[0] for c in CASES])
def test_decisions_unchanged(name, kind, args):
    run = RECORDER.run_workload_case if kind == "workload" else RECORDER.run_random_case
    got = json.loads(json.dumps(run(*args)))
    want = GOLDEN[name]
    for g, w in zip(got["pods"], want["pods"]):
        assert g == w, f"{name}: first differing pod"
    assert len(got["pods"]) == len(want["pods"])
    assert got["next_start_node_index"] == want["next_start_node_index"]
    assert got["rng"] == want["rng"], "tie-break RNG state differs"
    assert got["plugin_rng"] == want["plugin_rng"], "plugin RNG state differs"
