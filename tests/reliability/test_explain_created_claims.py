"""Claims controllers create from templates, in a fork."""
from __future__ import annotations

from fastsched import Scheduler
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
