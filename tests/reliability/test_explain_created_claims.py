"""``explain`` of a pod not created yet whose volumes or claims controllers create from templates
(a generic ephemeral volume's PersistentVolumeClaim, a ResourceClaim from a
``resourceClaimTemplateName``): the answer is the one ``run()`` gets after ``add()``, where the
ephemeral-volume and resourceclaim controllers have made the claims, not a wait for them; and
asking leaves the cluster as it was."""
from __future__ import annotations

import pytest

from fastsched import Scheduler
from fastsched.sim.gpu import GPUNodePool, gpu_claim_template, gpu_cluster, gpu_pods
from fastsched.sim.storage import pod_with_claims, storage_class_manifest
from fastsched.testing import make_node


def _ephemeral_pod(name: str, size: str = "1Gi") -> dict:
    m = pod_with_claims(name)
    m["spec"]["volumes"] = [{"name": "scratch", "ephemeral": {"volumeClaimTemplate": {"spec": {
        "accessModes": ["ReadWriteOnce"], "storageClassName": "standard",
        "resources": {"requests": {"storage": size}}}}}}]
    return m


def _volumes() -> Scheduler:
    s = Scheduler(seed=0)
    s.add([make_node("n1"), make_node("n2"),
           storage_class_manifest("standard", binding_mode="WaitForFirstConsumer", provisioner="csi.example.com")])
    return s


def _gpus(gpus: int) -> Scheduler:
    s = Scheduler(seed=0)
    s.add(gpu_cluster([GPUNodePool(2, model="a100", gpus=gpus, cpu="100", pods=100)]))
    s.add(gpu_claim_template("one-gpu"))
    return s


@pytest.mark.parametrize("build,manifest", [
    (_volumes, lambda: _ephemeral_pod("job")),
    (lambda: _gpus(1), lambda: gpu_pods("trainer", 1, template="one-gpu", cpu="100m", memory="1Mi")[0]),
    (lambda: _gpus(0), lambda: gpu_pods("trainer", 1, template="one-gpu", cpu="100m", memory="1Mi")[0]),
])
def test_explain_before_add_answers_as_run(build, manifest):
    s = build()
    before = {kind: len(s.objects(kind)) for kind in ("PersistentVolumeClaim", "ResourceClaim")}
    e = s.explain(manifest())
    assert {kind: len(s.objects(kind)) for kind in before} == before  # nothing created by asking
    assert e.error is None, e.error
    s.add(manifest())
    s.run()
    pod = s.get_pod("default", manifest()["metadata"]["name"])
    result = s.results[pod.uid]
    assert sorted(e.feasible) == sorted(s.explain(pod).feasible) or result.status == "Scheduled"
    if result.status == "Scheduled":
        assert result.node_name in e.best_nodes
    else:
        assert e.best_nodes == [] and e.feasible == []
        assert e.prefilter_status is None or "waiting for" not in str(e.prefilter_status)
        assert "not created yet" not in str(e.prefilter_status)


def test_a_fork_binds_the_claims_created_in_it():
    """A fork's VolumeBinding reads the fork's claims (its binder asked the original Scheduler's
    client through a closure over the original plugin): a pod added to the fork with an
    ephemeral volume schedules there, and the original is untouched."""
    s = _volumes()
    fork = s.fork()
    fork.add(_ephemeral_pod("job"))
    (result,) = fork.run()
    assert result.status == "Scheduled", result.message
    assert fork.get_object("PersistentVolumeClaim", "job-scratch").volume_name or result.node_name
    assert s.objects("PersistentVolumeClaim") == [] and s.run() == []
