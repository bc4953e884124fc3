"""scheduler_perf's ``batching`` topic (v1.37.2, vendored in data/upstream/batching): the
``signature`` label createPods stamps (upstream ``podTemplateWithParams.GetPodTemplate``:
``signature-label-<index / signatureBatchSize>``) and opportunistic batching on its profile
(PodTopologySpread ``defaultingType: List`` with no default constraints): in HostPortConflict and
ResourceSaturation every pod fits one node only, so every pod after the first of each signature
batch is placed on a hint."""
import dataclasses

import pytest

from fastsched.perf import load_perf_config, run_workload

from .conftest import UPSTREAM


def _run(test_case: str, batch_size: int | None = None, gate: bool = True, pods: int = 10):
    config = load_perf_config(UPSTREAM / "batching" / "performance-config.yaml")
    tc = config.test_case(test_case)
    w = next(x for x in tc.workloads if x.name == "10Nodes_10Pods_10BatchSize")
    if batch_size is not None:
        w = dataclasses.replace(w, name=f"{w.name}-{batch_size}", feature_gates={"OpportunisticBatching": gate},
                                params={**w.params, "signatureBatchSize": batch_size, "initNodes": pods,
                                        "measurePods": pods})
    r = run_workload(config, tc, w, keep_scheduler=True)
    assert r.status == "passed", r.reason
    return r


@pytest.mark.parametrize("test_case", ["HostPortConflict", "ResourceSaturation"])
def test_every_pod_after_the_first_of_a_batch_is_hinted(test_case):
    r = _run(test_case)
    sched = r.scheduler
    pods = [p for p in sched.pods.values() if p.namespace != "default" or p.labels.get("signature")]
    assert len(pods) == 10 and all(p.node_name for p in pods)
    assert len({p.node_name for p in pods}) == 10  # one pod per node
    assert {p.labels["signature"] for p in pods} == {"signature-label-0"}
    assert sched.profiles["default-scheduler"].batch.batched_pods == 9


@pytest.mark.parametrize("batch_size, batched", [(1, 0), (3, 8), (5, 9), (20, 11)])
def test_signature_batch_size_sets_the_batches(batch_size, batched):
    # 12 pods: ceil(12 / size) batches, each with one full cycle and the rest on hints
    r = _run("HostPortConflict", batch_size, pods=12)
    sched = r.scheduler
    pods = sorted((p for p in sched.pods.values() if "signature" in p.labels), key=lambda p: p.name)
    assert len(pods) == 12
    labels = sorted(p.labels["signature"] for p in pods)
    assert labels == sorted(f"signature-label-{i // batch_size}" for i in range(12))
    assert sched.profiles["default-scheduler"].batch.batched_pods == batched


def test_batching_disabled_stamps_no_label_and_batches_nothing():
    r = _run("HostPortConflict", 1, gate=False, pods=6)
    sched = r.scheduler
    assert sched.profiles["default-scheduler"].batch is None
    pods = [p for p in sched.pods.values() if p.node_name]
    assert len(pods) == 6 and not any("signature" in p.labels for p in pods)
