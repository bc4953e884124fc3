"""Every kube-scheduler v1.37.2 scheduler_perf config (vendored unchanged in data/upstream-v1.37.2)
loads, and every workload with a threshold resolves its parameters to ops the runner knows; each
test case that has such a workload runs its small integration-test workloads to the end.

This is issue 27's "every v1.37 scheduler_perf case with a threshold runs unchanged", at small scale
(no timing: the measured rates are in docs/dev/v1.37-perf.md).
"""
from __future__ import annotations

from pathlib import Path

import pytest

from fastsched.perf import load_perf_config, run_workload, select_workloads
from fastsched.perf.ops import WorkloadOps
from fastsched.perf.topics import topic_options

V137 = Path(__file__).parent / "data" / "upstream-v1.37.2"
CONFIGS = sorted(p.relative_to(V137).as_posix() for p in V137.rglob("performance-config.yaml"))

#: test cases that do not run yet, with why (strict xfail: when one runs, take it off the list)
NOT_RUNNING: dict[tuple[str, str], str] = {
    # (none: DRA-backed extended resources, the last gap, are ported)
}


def _threshold_workloads(rel):
    config = load_perf_config(V137 / rel)
    topic = config.base_dir.name
    return config, [(tc, w) for tc, w in select_workloads(config, label_filter="performance")
                    if w.threshold_for(topic) > 0]


def test_the_vendored_tree_is_v1_37_2_with_its_threshold_topics():
    assert len(CONFIGS) == 23
    with_thresholds = {rel for rel in CONFIGS if _threshold_workloads(rel)[1]}
    assert with_thresholds == {
        "affinity/performance-config.yaml", "default_preemption/performance-config.yaml",
        "dra/performance-config.yaml", "dra/extendedresource/performance-config.yaml",
        "dra/extendedresource/scoring/performance-config.yaml", "misc/performance-config.yaml",
        "nodedeclaredfeatures/performance-config.yaml", "topology_spreading/performance-config.yaml",
        "volumes/performance-config.yaml"}
    assert sum(len(_threshold_workloads(rel)[1]) for rel in CONFIGS) == 49


@pytest.mark.parametrize("rel", CONFIGS)
def test_every_config_loads_and_threshold_workloads_resolve_to_known_ops(rel):
    config, workloads = _threshold_workloads(rel)
    assert config.test_cases
    for tc, w in workloads:
        assert tc.not_modelled() is None, (tc.name, w.name)
        resolved = tc.ops_for(w)
        read = topic_options(config.base_dir.name).params_read   # the topic's test file reads these
        assert [p for p in resolved.unused_params if read is None or p not in read(w)] == [], (tc.name, w.name)
        for op in resolved.ops:
            assert op.not_modelled is None, (tc.name, w.name, op.opcode)
            assert callable(getattr(WorkloadOps, "_op_" + op.opcode, None)), (tc.name, w.name, op.opcode)


def _small_cases():
    out = []
    for rel in CONFIGS:
        config, workloads = _threshold_workloads(rel)
        for name in dict.fromkeys(tc.name for tc, _ in workloads):
            tc = config.test_case(name)
            small = [w.name for w in tc.workloads if "integration-test" in w.labels]
            # upstream's "short" marks the quick ones among them (ExtendedResourceScoring labels its
            # 2,000- and 5,000-pod workloads integration-test too): those, where a case has some
            short = [w.name for w in tc.workloads if "integration-test" in w.labels and "short" in w.labels]
            small = short or small
            marks = []
            if (rel, name) in NOT_RUNNING:
                marks = [pytest.mark.xfail(strict=True, reason=NOT_RUNNING[rel, name])]
            out.append(pytest.param(rel, name, small, id=f"{rel.rsplit('/', 1)[0]}:{name}", marks=marks))
    return out


@pytest.mark.parametrize("rel, name, small", _small_cases())
def test_test_cases_with_a_threshold_run_their_small_workloads(rel, name, small):
    assert small, f"{name} has no integration-test workload"
    config = load_perf_config(V137 / rel)
    for w in small:
        r = run_workload(config, name, w, topic=config.base_dir.name)
        assert r.status == "passed", (name, w, r.reason)
        assert r.pods_scheduled > 0 and r.phases, (name, w)
