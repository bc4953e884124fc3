"""Upstream's scheduler_perf volumes config (vendored): every integration-test workload runs."""
from pathlib import Path

import pytest

from fastsched.perf import load_perf_config, run_perf

CONFIG = Path(__file__).resolve().parent.parent / "perf/data/upstream/volumes/performance-config.yaml"


@pytest.mark.parametrize("name", ["SchedulingSecrets", "SchedulingInTreePVs", "SchedulingMigratedInTreePVs",
                                  "SchedulingCSIPVs", "PreemptionPVs"])
def test_integration_workloads_pass(name):
    report = run_perf(load_perf_config(CONFIG), name=name, label_filter="integration-test")
    assert report.results
    for r in report.results:
        assert r.status == "passed", (r.name, r.status)
        assert r.pods_scheduled == r.pods_created or name == "PreemptionPVs"


def test_csi_pvs_count_attached_volumes():
    from fastsched.perf import run_workload
    cfg = load_perf_config(CONFIG)
    r = run_workload(cfg, "SchedulingCSIPVs", "5Nodes", keep_scheduler=True)
    sched = r.scheduler
    assert len(sched.objects("CSINode")) == 5
    assert sched.get_object("CSINode", sched.nodes()[0].name).drivers[0].count == 39
    assert len(sched.objects("PersistentVolume")) == 15 and len(sched.objects("PersistentVolumeClaim")) == 15
