"""Volumes through the Scheduler: a StatefulSet with volumeClaimTemplates on a multi-zone cluster
with a WaitForFirstConsumer class and static PVs; dynamic provisioning; claims created later
requeue the pod; ReadWriteOncePod preemption."""
from __future__ import annotations

import pytest

from fastsched import Scheduler
from fastsched.api.storage import check_node_affinity
from fastsched.sim.storage import (ZONE, csi_node_manifest, pod_with_claims, pv_manifest, pvc_manifest,
                                   storage_class_manifest)


def _node(name: str, zone: str, cpu: str = "4") -> dict:
    return {"apiVersion": "v1", "kind": "Node",
            "metadata": {"name": name, "labels": {ZONE: zone, "kubernetes.io/hostname": name}},
            "status": {"allocatable": {"cpu": cpu, "memory": "16Gi", "pods": "110"}}}


def _statefulset(replicas: int, storage_class: str, size: str = "1Gi") -> dict:
    return {"apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": {"name": "db", "namespace": "default"},
            "spec": {"replicas": replicas, "serviceName": "db", "podManagementPolicy": "Parallel",
                     "selector": {"matchLabels": {"app": "db"}},
                     "template": {"metadata": {"labels": {"app": "db"}},
                                  "spec": {"containers": [{"name": "db", "image": "db",
                                                           "resources": {"requests": {"cpu": "500m"}}}]}},
                     "volumeClaimTemplates": [{"metadata": {"name": "data"},
                                               "spec": {"accessModes": ["ReadWriteOnce"], "storageClassName": storage_class,
                                                        "resources": {"requests": {"storage": size}}}}]}}


def test_statefulset_claims_bind_to_reachable_static_pvs():
    sched = Scheduler(seed=1)
    zones = ["a", "b", "c"]
    sched.add([_node(f"n-{z}-{i}", f"zone-{z}") for z in zones for i in range(2)])
    # static PVs: zone a has two small ones and one big; zone b one; zone c none
    sched.add([storage_class_manifest("local", provisioner="kubernetes.io/no-provisioner"),
               pv_manifest("pv-a1", storage_class="local", capacity="1Gi", node_affinity={ZONE: ["zone-a"]}),
               pv_manifest("pv-a2", storage_class="local", capacity="10Gi", node_affinity={ZONE: ["zone-a"]}),
               pv_manifest("pv-b1", storage_class="local", capacity="2Gi", node_affinity={ZONE: ["zone-b"]}),
               pv_manifest("pv-c-small", storage_class="local", capacity="100Mi", node_affinity={ZONE: ["zone-c"]})])
    sched.add(_statefulset(3, "local"))
    results = {r.pod.name: r for r in sched.run()}
    assert sorted(results) == ["db-0", "db-1", "db-2"]
    assert all(r.status == "Scheduled" for r in results.values()), {n: r.message for n, r in results.items()}
    claims = {c["metadata"]["name"]: c for c in sched.objects("PersistentVolumeClaim")}
    assert sorted(claims) == ["data-db-0", "data-db-1", "data-db-2"]
    used = set()
    for name, r in results.items():
        claim = sched.get_object("PersistentVolumeClaim", f"data-{name}")
        assert claim.volume_name and claim.annotations.get("pv.kubernetes.io/bind-completed") == "yes"
        assert claims[f"data-{name}"]["spec"]["volumeName"] == claim.volume_name   # visible in the manifests
        pv = sched.get_object("PersistentVolume", claim.volume_name)
        assert pv.claim_ref.name == claim.name and pv.phase == "Bound"
        node = sched.get_object("Node", r.node_name)
        assert check_node_affinity(pv.node_affinity, node.labels), (name, r.node_name, pv.name)
        used.add(pv.name)
    assert "pv-c-small" not in used and len(used) == 3
    pvs = {p["metadata"]["name"]: p for p in sched.objects("PersistentVolume")}
    assert all(pvs[name]["spec"]["claimRef"]["name"].startswith("data-db-") for name in used)


def test_statefulset_with_more_replicas_than_pvs_leaves_one_pending():
    sched = Scheduler(seed=2)
    sched.add([_node("n-a", "zone-a"), _node("n-b", "zone-b")])
    sched.add([storage_class_manifest("local", provisioner="kubernetes.io/no-provisioner"),
               pv_manifest("pv-a", storage_class="local", node_affinity={ZONE: ["zone-a"]}),
               pv_manifest("pv-b", storage_class="local", node_affinity={ZONE: ["zone-b"]})])
    sched.add(_statefulset(3, "local"))
    results = {r.pod.name: r for r in sched.run()}
    statuses = sorted(r.status for r in results.values())
    assert statuses == ["Scheduled", "Scheduled", "Unschedulable"]
    failed = next(r for r in results.values() if r.status == "Unschedulable")
    assert failed.message == ("0/2 nodes are available: 2 node(s) didn't find available persistent volumes to bind. "
                              "preemption: 0/2 nodes are available: 2 Preemption is not helpful for scheduling.")
    # a new PV for it makes the pod schedulable (PersistentVolume Add requeues it)
    sched.add(pv_manifest("pv-c", storage_class="local", node_affinity={ZONE: ["zone-b"]}))
    results = {r.pod.name: r for r in sched.run()}
    assert results[failed.pod.name].status == "Scheduled"


def test_dynamic_provisioning_through_allowed_topologies():
    sched = Scheduler(seed=3)
    sched.add([_node("n-a", "zone-a"), _node("n-b", "zone-b")])
    sched.add([storage_class_manifest("dyn", provisioner="csi.example.com", allowed_topologies={ZONE: ["zone-b"]}),
               csi_node_manifest("n-a", {"csi.example.com": 5}, topology_keys=[ZONE]),
               csi_node_manifest("n-b", {"csi.example.com": 5}, topology_keys=[ZONE])])
    sched.add(_statefulset(2, "dyn", size="3Gi"))
    results = list(sched.run())
    assert all(r.status == "Scheduled" and r.node_name == "n-b" for r in results)
    for r in results:
        claim = sched.get_object("PersistentVolumeClaim", f"data-{r.pod.name}")
        assert claim.annotations["volume.kubernetes.io/selected-node"] == "n-b"
        pv = sched.get_object("PersistentVolume", claim.volume_name)
        assert str(pv.capacity) == "3Gi" and check_node_affinity(pv.node_affinity, {ZONE: "zone-b"})
        assert not check_node_affinity(pv.node_affinity, {ZONE: "zone-a"})


def test_missing_claim_then_created_requeues_the_pod():
    sched = Scheduler(seed=4)
    sched.add([_node("n-a", "zone-a")])
    sched.add(pod_with_claims("p", ["late"]))
    (r,) = sched.run()
    assert r.status == "Unschedulable" and 'persistentvolumeclaim "late" not found' in r.message
    sched.add([storage_class_manifest("local", provisioner="kubernetes.io/no-provisioner"),
               pv_manifest("pv-1", storage_class="local")])
    sched.add(pvc_manifest("late", storage_class="local"))
    results = {x.pod.name: x for x in sched.run()}
    assert results["p"].status == "Scheduled"
    assert sched.get_object("PersistentVolumeClaim", "late").volume_name == "pv-1"


def test_read_write_once_pod_claim_preempts_its_holder():
    sched = Scheduler(seed=5)
    sched.add([_node("n-a", "zone-a"), _node("n-b", "zone-b")])
    sched.add([pvc_manifest("rwop", access_modes=["ReadWriteOncePod"], volume_name="pv-rwop", bound=True),
               pv_manifest("pv-rwop", access_modes=["ReadWriteOncePod"], claim=("default", "rwop"), phase="Bound")])
    low = pod_with_claims("low", ["rwop"], priority=1)
    low["spec"]["nodeName"] = "n-a"
    sched.add(low)
    sched.add(pod_with_claims("high", ["rwop"], priority=100))
    first = sched.run()
    results = {r.pod.name: r for r in first}
    # the holder is the only victim that helps (VolumeRestrictions' RemovePod frees the claim)
    assert results["high"].status == "Scheduled"
    assert sched.get_object("Pod", "low") is None


def test_read_write_once_pod_claim_in_use_without_preemption():
    sched = Scheduler(seed=6)
    sched.add([_node("n-a", "zone-a"), _node("n-b", "zone-b")])
    sched.add([pvc_manifest("rwop", access_modes=["ReadWriteOncePod"], volume_name="pv-rwop", bound=True),
               pv_manifest("pv-rwop", access_modes=["ReadWriteOncePod"], claim=("default", "rwop"), phase="Bound")])
    holder = pod_with_claims("holder", ["rwop"], priority=100)
    holder["spec"]["nodeName"] = "n-a"
    sched.add(holder)
    sched.add(pod_with_claims("second", ["rwop"], priority=1))
    (r,) = sched.run()
    assert r.status == "Unschedulable"
    assert r.message == ("0/2 nodes are available: 2 node(s) unavailable due to PersistentVolumeClaim with "
                         "ReadWriteOncePod access mode already in-use by another pod. "
                         "preemption: 0/2 nodes are available: 2 No preemption victims found for incoming pod.")


def test_generic_ephemeral_volume_gets_its_claim():
    sched = Scheduler(seed=7)
    sched.add([_node("n-a", "zone-a")])
    sched.add([storage_class_manifest("dyn", provisioner="csi.example.com")])
    pod = pod_with_claims("web", extra_volumes=[{"name": "scratch", "ephemeral": {"volumeClaimTemplate": {
        "metadata": {"labels": {"kind": "scratch"}},
        "spec": {"accessModes": ["ReadWriteOnce"], "storageClassName": "dyn",
                 "resources": {"requests": {"storage": "1Gi"}}}}}}])
    sched.add(pod)
    (r,) = sched.run()
    assert r.status == "Scheduled", r.message
    claim = sched.get_object("PersistentVolumeClaim", "web-scratch")
    assert claim.labels["kind"] == "scratch"
    assert claim.owner_references[0].uid == r.pod.uid and claim.owner_references[0].controller
    assert claim.volume_name and claim.annotations["volume.kubernetes.io/selected-node"] == "n-a"


def test_an_invalid_ephemeral_claim_template_refuses_the_pod_and_creates_nothing():
    import pytest

    from fastsched.api.validation import ValidationError

    sched = Scheduler(seed=7)
    sched.add([_node("n-a", "zone-a")])
    template = {"spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}}
    bad = {"spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "-1Gi"}}}}
    pod = pod_with_claims("web", extra_volumes=[{"name": "ok", "ephemeral": {"volumeClaimTemplate": template}},
                                                {"name": "bad", "ephemeral": {"volumeClaimTemplate": bad}}])
    with pytest.raises(ValidationError) as info:
        sched.add(pod)
    assert str(info.value) == ('Pod "web" is invalid: spec.volumes[1].ephemeral.volumeClaimTemplate.spec'
                               '.resources[storage]: Invalid value: "-1Gi": must be greater than zero')
    assert sched.objects("PersistentVolumeClaim") == [] and sched.objects("Pod") == []


def test_a_volume_written_without_status_is_available_as_the_pv_controller_makes_it():
    """A hand-written PV has no status.phase (the API server stores Pending); the PV controller
    makes an unclaimed one Available at once, and only Available volumes are matched."""
    from fastsched import explain

    pv = pv_manifest("pv-b", storage_class="local", capacity="10Gi", node_affinity={ZONE: ["zone-b"]})
    pv.pop("status", None)
    objects = [storage_class_manifest("local", provisioner="kubernetes.io/no-provisioner"), pv,
               pvc_manifest("data", storage_class="local", request="5Gi")]
    nodes = [_node("n-a", "zone-a"), _node("n-b", "zone-b")]
    sched = Scheduler(seed=7)
    sched.add(nodes)
    sched.add(objects)
    assert sched.get_object("PersistentVolume", "pv-b").phase == "Available"
    sched.add(pod_with_claims("db", ["data"]))
    (r,) = sched.run()
    assert (r.status, r.node_name) == ("Scheduled", "n-b")
    assert sched.get_object("PersistentVolumeClaim", "data").volume_name == "pv-b"
    e = explain(pod_with_claims("db", ["data"]), nodes, objects=objects)
    assert e.best_nodes == ["n-b"]


def test_preemption_frees_a_csi_attach_slot():
    sched = Scheduler(seed=8)
    sched.add([_node("n-a", "zone-a")])
    sched.add([csi_node_manifest("n-a", {"csi.example.com": 1}),
               pv_manifest("pv-1", claim=("default", "c1"), phase="Bound"),
               pvc_manifest("c1", volume_name="pv-1", bound=True),
               pv_manifest("pv-2", claim=("default", "c2"), phase="Bound"),
               pvc_manifest("c2", volume_name="pv-2", bound=True)])
    low = pod_with_claims("low", ["c1"], priority=1)
    low["spec"]["nodeName"] = "n-a"
    sched.add(low)
    sched.add(pod_with_claims("high", ["c2"], priority=100))
    results = {r.pod.name: r for r in sched.run()}
    assert results["high"].status == "Scheduled" and results["high"].node_name == "n-a"
    assert sched.get_object("Pod", "low") is None


def test_attach_limit_without_preemption_message():
    sched = Scheduler(seed=9)
    sched.add([_node("n-a", "zone-a")])
    sched.add([csi_node_manifest("n-a", {"csi.example.com": 1}),
               pv_manifest("pv-1", claim=("default", "c1"), phase="Bound"),
               pvc_manifest("c1", volume_name="pv-1", bound=True),
               pv_manifest("pv-2", claim=("default", "c2"), phase="Bound"),
               pvc_manifest("c2", volume_name="pv-2", bound=True)])
    holder = pod_with_claims("holder", ["c1"], priority=100)
    holder["spec"]["nodeName"] = "n-a"
    sched.add(holder)
    sched.add(pod_with_claims("p", ["c2"]))
    (r,) = sched.run()
    assert r.message == ("0/1 nodes are available: 1 node(s) exceed max volume count. "
                         "preemption: 0/1 nodes are available: 1 No preemption victims found for incoming pod.")


def test_statefulset_pods_share_one_compiled_plan():
    """A StatefulSet's pods differ in their claims, which only the volume plugins read, and those
    judge the pods each cycle: the pods share one compiled plan (not one compile per pod), and
    place as the plugin-call path places them."""
    placements = []
    for compiled in (True, False):
        sched = Scheduler(seed=3)
        sched.use_compiled_cycle = compiled
        sched.add([_node(f"n-{z}-{i}", f"zone-{z}", cpu="8") for z in "abc" for i in range(4)])
        sched.add([storage_class_manifest("local", provisioner="kubernetes.io/no-provisioner")]
                  + [pv_manifest(f"pv-{z}{i}", storage_class="local", capacity="5Gi", node_affinity={ZONE: [f"zone-{z}"]})
                     for z in "abc" for i in range(6)])
        sched.add(_statefulset(12, "local"))
        results = sched.run()
        assert all(r.status == "Scheduled" for r in results)
        placements.append([(r.pod.name, r.node_name) for r in results]
                          + sorted((c["metadata"]["name"], c["spec"]["volumeName"])
                                   for c in sched.objects("PersistentVolumeClaim")))
        if compiled:
            (fw,) = sched.profiles.values()
            engine = fw.compiled_cycle
            assert engine.fused_cycles == 12
            assert len({id(plan) for plan in engine._plans.values()}) == 1
    assert placements[0] == placements[1]


@pytest.mark.parametrize("claim", ["unbound-immediate", "bound"])
def test_volume_binding_enabled_at_prefilter_but_not_filter(claim):
    """A profile may disable VolumeBinding's Filter and keep its PreFilter, Reserve and PreBind: its
    PreFilter still runs each cycle on the compiled path (its rejection counts, and Reserve finds
    its state), as on the plugin-call path."""
    from fastsched import load_config

    cfg = {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
           "profiles": [{"schedulerName": "default-scheduler", "plugins": {
               "multiPoint": {"disabled": [{"name": "VolumeZone"}, {"name": "VolumeRestrictions"},
                                           {"name": "NodeVolumeLimits"}]},
               "filter": {"disabled": [{"name": "VolumeBinding"}]}}}]}
    outcomes = []
    for compiled in (True, False):
        sched = Scheduler(load_config(cfg), seed=1)
        sched.use_compiled_cycle = compiled
        sched.add([_node("n1", "zone-a"), _node("n2", "zone-a")])
        if claim == "unbound-immediate":
            sched.add([storage_class_manifest("fast", binding_mode="Immediate", provisioner="kubernetes.io/no-provisioner"),
                       pvc_manifest("c1", storage_class="fast")])
        else:
            sched.add([storage_class_manifest("local", provisioner="kubernetes.io/no-provisioner"),
                       pv_manifest("pv1", storage_class="local", claim=("default", "c1"), phase="Bound"),
                       pvc_manifest("c1", storage_class="local", volume_name="pv1", bound=True)])
        sched.add(pod_with_claims("p", ["c1"]))
        outcomes.append([(r.pod.name, r.node_name, r.status, r.message) for r in sched.run()])
    assert outcomes[0] == outcomes[1]
    expected = "Unschedulable" if claim == "unbound-immediate" else "Scheduled"
    assert outcomes[0][0][2] == expected, outcomes[0]
