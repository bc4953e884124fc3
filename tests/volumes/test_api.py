"""Storage objects: decoding, the API server's defaulting and validation messages, loading through
the Scheduler, and manifests showing bindings."""
from __future__ import annotations

import pytest

from fastsched import Scheduler
from fastsched.api import SUPPORTED_KINDS, objects_of
from fastsched.api.storage import claim_class, volume_class
from fastsched.framework.interface import ActionType, EventResource
from fastsched.sim.storage import (csi_driver_manifest, csi_node_manifest, csi_storage_capacity_manifest,
                                   pv_manifest, pvc_manifest, storage_class_manifest)


def test_kinds_are_loadable():
    for kind in ("PersistentVolume", "PersistentVolumeClaim", "StorageClass", "CSINode", "CSIDriver",
                 "CSIStorageCapacity"):
        assert kind in SUPPORTED_KINDS


def test_defaults():
    pv, pvc, sc, drv = objects_of([pv_manifest("pv"), pvc_manifest("c"), {
        "apiVersion": "storage.k8s.io/v1", "kind": "StorageClass", "metadata": {"name": "s"}, "provisioner": "p"},
        {"apiVersion": "storage.k8s.io/v1", "kind": "CSIDriver", "metadata": {"name": "d"}}])
    assert pv.volume_mode == "Filesystem" and pv.reclaim_policy == "Retain" and pv.source == "csi"
    assert pvc.volume_mode == "Filesystem" and pvc.phase == "Pending" and pvc.storage_class_name is None
    assert sc.volume_binding_mode == "Immediate" and sc.reclaim_policy == "Delete"
    assert drv.attach_required and not drv.storage_capacity


def test_classes_read_the_beta_annotation_first():
    pvc = objects_of([pvc_manifest("c", storage_class="spec",
                                   annotations={"volume.beta.kubernetes.io/storage-class": "beta"})])[0]
    assert claim_class(pvc) == "beta"
    pv = objects_of([pv_manifest("p", storage_class="x")])[0]
    assert volume_class(pv) == "x"


@pytest.mark.parametrize("manifest,message", [
    ({"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": "c"},
      "spec": {"resources": {"requests": {"storage": "-1Gi"}}}},
     'PersistentVolumeClaim "c" is invalid: [spec.accessModes: Required value: at least 1 access mode is required, '
     'spec.resources[storage]: Invalid value: "-1Gi": must be greater than zero]'),
    ({"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": "c"},
      "spec": {"accessModes": ["ReadWriteOnce"]}},
     'PersistentVolumeClaim "c" is invalid: spec.resources[storage]: Required value'),
    ({"apiVersion": "v1", "kind": "PersistentVolume", "metadata": {"name": "p"},
      "spec": {"capacity": {"storage": "1Gi"}, "accessModes": ["ReadWriteOnce"]}},
     'PersistentVolume "p" is invalid: spec: Required value: must specify a volume type'),
    ({"apiVersion": "v1", "kind": "PersistentVolume", "metadata": {"name": "p"},
      "spec": {"accessModes": ["Sometimes"], "capacity": {"storage": "1Gi"}, "hostPath": {"path": "/x"}}},
     'PersistentVolume "p" is invalid: spec.accessModes: Unsupported value: "Sometimes": supported values: '
     '"ReadOnlyMany", "ReadWriteMany", "ReadWriteOnce", "ReadWriteOncePod"'),
    ({"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass", "metadata": {"name": "s"}, "provisioner": "p",
      "volumeBindingMode": "Later"},
     'StorageClass.storage.k8s.io "s" is invalid: volumeBindingMode: Unsupported value: "Later": supported values: '
     '"Immediate", "WaitForFirstConsumer"'),
    ({"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass", "metadata": {"name": "s"}},
     'StorageClass.storage.k8s.io "s" is invalid: provisioner: Required value'),
])
def test_validation_messages(manifest, message):
    with pytest.raises(Exception) as err:
        objects_of([manifest])
    assert message in str(err.value)


def test_scheduler_loads_updates_and_deletes_storage_objects():
    sched = Scheduler()
    sched.add([storage_class_manifest("wait"), csi_driver_manifest("csi.example.com", storage_capacity=True),
               csi_node_manifest("n1", {"csi.example.com": 3}),
               csi_storage_capacity_manifest("cap", "wait", "10Gi", {"zone": "a"}),
               pv_manifest("pv-1", storage_class="wait"), pvc_manifest("c", storage_class="wait")])
    assert [o["metadata"]["name"] for o in sched.objects("PersistentVolume")] == ["pv-1"]
    assert sched.get_object("CSINode", "n1").drivers[0].count == 3
    before = sched.object_version("PersistentVolumeClaim")
    sched.update_object(pvc_manifest("c", storage_class="wait", request="2Gi"))
    assert str(sched.get_object("PersistentVolumeClaim", "c").request) == "2Gi"
    assert sched.object_version("PersistentVolumeClaim") == before + 1
    sched.delete_object("PersistentVolumeClaim", "c")
    assert sched.get_object("PersistentVolumeClaim", "c") is None
    with pytest.raises(Exception, match='already exists'):
        sched.add(pv_manifest("pv-1"))


def test_statefulset_claims_are_created_as_objects():
    sched = Scheduler()
    sched.add({"apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": {"name": "db"},
               "spec": {"replicas": 2, "serviceName": "db", "selector": {"matchLabels": {"app": "db"}},
                        "template": {"metadata": {"labels": {"app": "db"}},
                                     "spec": {"containers": [{"name": "c", "image": "i"}]}},
                        "volumeClaimTemplates": [{"metadata": {"name": "data"}, "spec": {
                            "accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}}]}})
    names = sorted(c["metadata"]["name"] for c in sched.objects("PersistentVolumeClaim"))
    assert names[:1] == ["data-db-0"]
    assert EventResource.PERSISTENT_VOLUME_CLAIM and ActionType.ADD
