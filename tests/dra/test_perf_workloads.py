"""Upstream's DRA scheduler_perf workloads (vendored in tests/perf/data/upstream/dra): the
integration-test workloads run, and the DRA ops do what upstream's do."""
from __future__ import annotations

import warnings
from pathlib import Path

from fastsched.perf import load_perf_config, run_perf, run_workload

CONFIG = Path(__file__).resolve().parents[1] / "perf" / "data" / "upstream" / "dra" / "performance-config.yaml"


def test_integration_workloads_pass():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        report = run_perf(load_perf_config(CONFIG), label_filter="integration-test")
    assert len(report.results) == 8
    for r in report.results:
        assert r.status == "passed", (r.name, r.reason)
        assert r.pods_scheduled > 0


def test_alloc_resource_claims_and_shared_claims():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        r = run_workload(load_perf_config(CONFIG), "SchedulingWithResourceClaim", "fast", keep_scheduler=True)
    assert r.status == "passed", r.reason
    sched = r.scheduler
    claims = {c.name: c for c in sched.list_objects("ResourceClaim", "test")}
    assert sorted(claims) == ["test-claim-0", "test-claim-1"]
    for claim in claims.values():
        assert len(claim.reserved_for) == 5  # five pods share each claim
        assert len(claim.allocation["devices"]["results"]) == 1
    (slice_,) = [s for s in sched.list_objects("ResourceSlice")]
    assert slice_.node_name == "scheduler-perf-dra-0" and len(slice_.devices) == 2
