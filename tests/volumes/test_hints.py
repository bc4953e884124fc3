"""The volume plugins' queueing hints (upstream's ``isSchedulableAfter...`` functions) and the
plugins' conformance checks (``fastsched.testing.check_plugin``)."""
from __future__ import annotations

import pytest

from fastsched.framework.interface import EventResource, QueueingHint
from fastsched.plugins import nodevolumelimits, volumebinding, volumerestrictions, volumezone
from fastsched.testing import check_plugin, storage_check_scenario
from fastsched.plugins.helper.tests.volumes import Handle, one, pod, pv_manifest, pvc_manifest, storage_class_manifest

Q, SKIP = QueueingHint.QUEUE, QueueingHint.QUEUE_SKIP


def _hint(plugin, resource, p, old, new):
    for ev in plugin.events_to_register():
        if ev.event.resource == resource and ev.queueing_hint_fn is not None:
            return ev.queueing_hint_fn(p, old, new)[0]
    return Q


def test_volume_binding_hints():
    pl = volumebinding.VolumeBinding(handle=Handle())
    p = pod("p", ["c"])
    assert _hint(pl, EventResource.PERSISTENT_VOLUME_CLAIM, p, None, one(pvc_manifest("c"))) == Q
    assert _hint(pl, EventResource.PERSISTENT_VOLUME_CLAIM, p, None, one(pvc_manifest("other"))) == SKIP
    assert _hint(pl, EventResource.PERSISTENT_VOLUME_CLAIM, p, None, one(pvc_manifest("c", namespace="x"))) == SKIP
    sc = one(storage_class_manifest("s"))
    assert _hint(pl, EventResource.STORAGE_CLASS, p, None, sc) == Q
    assert _hint(pl, EventResource.STORAGE_CLASS, p, sc, sc) == SKIP
    topo = one(storage_class_manifest("s", allowed_topologies={"zone": ["a"]}))
    assert _hint(pl, EventResource.STORAGE_CLASS, p, sc, topo) == Q


def test_volume_zone_hints():
    pl = volumezone.VolumeZone(Handle())
    p = pod("p", ["c"])
    wait = one(storage_class_manifest("w"))
    immediate = one(storage_class_manifest("i", binding_mode="Immediate"))
    assert _hint(pl, EventResource.STORAGE_CLASS, p, None, wait) == Q
    assert _hint(pl, EventResource.STORAGE_CLASS, p, None, immediate) == SKIP
    a = one(pv_manifest("pv", labels={"topology.kubernetes.io/zone": "a"}))
    b = one(pv_manifest("pv", labels={"topology.kubernetes.io/zone": "b"}))
    assert _hint(pl, EventResource.PERSISTENT_VOLUME, p, a, b) == Q
    assert _hint(pl, EventResource.PERSISTENT_VOLUME, p, a, a) == SKIP


def test_restrictions_and_limits_pod_delete_hints():
    vr = volumerestrictions.VolumeRestrictions(Handle())  # v1.37: AssignedPod/Delete
    p = pod("p", ["c"])
    assert _hint(vr, EventResource.ASSIGNED_POD, p, pod("d", ["c"], node_name="n"), None) == Q
    assert _hint(vr, EventResource.ASSIGNED_POD, p, pod("d", ["other"], node_name="n"), None) == SKIP
    assert _hint(vr, EventResource.ASSIGNED_POD, p, pod("d", ["c"], namespace="x", node_name="n"), None) == SKIP
    nvl = nodevolumelimits.NodeVolumeLimits(Handle())  # v1.37: registered as AssignedPod/Delete
    assert _hint(nvl, EventResource.ASSIGNED_POD, p, pod("d", ["x"], node_name="n"), None) == Q
    assert _hint(nvl, EventResource.ASSIGNED_POD, p, pod("d", ["x"]), None) == SKIP
    assert _hint(nvl, EventResource.ASSIGNED_POD, p, pod("d", node_name="n"), None) == SKIP


@pytest.mark.parametrize("module", [volumebinding, volumezone, nodevolumelimits, volumerestrictions])
def test_conformance(module):
    """On clusters with volumes, so that Filter (and VolumeBinding's capacity Score) run rather than
    PreFilter's Skip."""
    gates = {"StorageCapacityScoring": True} if module is volumebinding else None
    summary = check_plugin(module.new, name=module.NAME, scenario=storage_check_scenario, feature_gates=gates)
    assert summary["pods"] >= 30 and summary["filtered"] > 0, summary
    assert summary["fused_cycles"] > 0, summary
    if module is volumebinding:
        assert summary["scored"] > 0, summary
