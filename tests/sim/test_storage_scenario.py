"""Scenarios with storage: classes, CSI drivers with attach limits, static volume pools, manifests,
and arrival streams whose pods get claims; every claim of a running pod ends bound to a volume its
node can reach."""
from __future__ import annotations

import copy
from collections import Counter

import pytest
import yaml

from fastsched.api.storage import check_node_affinity
from fastsched.sim import simulate
from fastsched.sim.scenario import Scenario, ScenarioError
from fastsched.sim.storage import pv_manifest, pvc_manifest

ZONE = "topology.kubernetes.io/zone"

BASE = {
    "name": "storage",
    "seed": 5,
    "until": 400,
    "cluster": {"nodes": 15, "zones": ["zone-a", "zone-b", "zone-c"], "shapes": [{"cpu": 16, "memory": "64Gi"}],
                "labels": {"disktype": {"values": ["ssd", "hdd"], "probabilities": [0.6, 0.4]}}},
    "storage": {
        "drivers": [{"name": "ebs.csi.aws.com", "attach_limit": 4}],
        "classes": [
            {"name": "gp3", "provisioner": "ebs.csi.aws.com", "binding_mode": "WaitForFirstConsumer",
             "default": True, "capacity": "300Gi"},
            {"name": "local-ssd", "provisioner": "kubernetes.io/no-provisioner",
             "binding_mode": "WaitForFirstConsumer"},
            {"name": "zonal", "provisioner": "ebs.csi.aws.com", "binding_mode": "WaitForFirstConsumer",
             "reclaim_policy": "Retain", "capacity": "1Ti"},
        ],
        "volumes": [
            {"storage_class": "local-ssd", "per": "node", "nodes": {"disktype": "ssd"}, "count": 2,
             "capacity": ["100Gi", "200Gi"]},
            {"storage_class": "zonal", "per": "zone", "count": 3, "capacity": "50Gi", "name_prefix": "snap-"},
        ],
    },
    "arrivals": [
        {"name": "db", "rate": 0.1, "end": 300,
         "template": {"metadata": {"labels": {"app": "db"}},
                      "spec": {"containers": [{"name": "pg", "image": "postgres", "resources": {"requests": {"cpu": "1"}}}]}},
         "claims": [{"name": "data", "storage_class": "local-ssd", "size": "80Gi"},
                    {"name": "wal", "size": "20Gi"},
                    {"name": "backup", "storage_class": "zonal", "size": "40Gi", "when_deleted": "Retain"}],
         "duration": {"distribution": "uniform", "min": 100, "max": 300}},
        {"name": "scratch", "rate": 0.3, "end": 300,
         "template": {"spec": {"containers": [{"name": "c", "image": "busybox", "resources": {"requests": {"cpu": "500m"}}}]}},
         "claims": [{"name": "tmp", "ephemeral": True, "size": "10Gi"}],
         "duration": {"distribution": "exponential", "mean": 60}},
    ],
    "events": [{"at": 150, "drain": {"count": 2, "selector": {"disktype": "ssd"}}},
               {"at": 200, "add": {"count": 2, "shape": {"cpu": 16, "memory": "64Gi"}}}],
}


def scenario(**changes):
    raw = copy.deepcopy(BASE)
    raw.update(changes)
    return raw


def _claims_of(pod):
    for v in pod.volumes:
        if v.get("persistentVolumeClaim") is not None:
            yield v["persistentVolumeClaim"]["claimName"]
        elif v.get("ephemeral") is not None:
            yield f"{pod.name}-{v['name']}"


@pytest.fixture(scope="module")
def run():
    return simulate(scenario(), record=None)


def test_every_claim_of_a_running_pod_is_bound_to_a_volume_its_node_reaches(run):
    sched = run.scheduler
    running = [p for p in sched.pods.values() if p.node_name]
    with_claims = [p for p in running if any(True for _ in _claims_of(p))]
    assert len(with_claims) >= 10
    holders = Counter()
    for pod in with_claims:
        node = sched.cache.get_node(pod.node_name)
        for name in _claims_of(pod):
            claim = sched.get_object("PersistentVolumeClaim", name, pod.namespace)
            assert claim is not None and claim.phase == "Bound", (pod.key, name)
            pv = sched.get_object("PersistentVolume", claim.volume_name, "")
            assert pv is not None and pv.phase == "Bound"
            ref = pv.claim_ref
            assert (ref.namespace, ref.name, ref.uid) == (claim.namespace, claim.name, claim.uid)
            assert check_node_affinity(pv.node_affinity, node.labels), (pod.key, pv.name, node.name)
            assert pv.storage_class_name == claim.storage_class_name
            assert pv.capacity.nano_value() >= claim.request.nano_value()
            holders[pv.name] += 1
    assert max(holders.values()) == 1  # no volume serves two claims


def test_claims_get_the_classes_and_volumes_the_scenario_asks_for(run):
    sched = run.scheduler
    claims = {c.name: c for c in sched.list_objects("PersistentVolumeClaim")}
    wal = [c for n, c in claims.items() if n.startswith("wal-")]
    assert wal and all(c.storage_class_name == "gp3" for c in wal)   # no class: the default one
    for c in claims.values():
        if c.phase != "Bound":
            continue
        pv = sched.get_object("PersistentVolume", c.volume_name, "")
        if c.name.startswith("data-"):   # a local SSD volume of the pool, on an ssd node
            assert pv.source == "local" and pv.name.startswith("pv-")
            (term,) = pv.node_affinity.terms
            (req,) = term.match_expressions
            assert req.key == "kubernetes.io/hostname"
            assert sched.cache.get_node(req.values[0]).labels["disktype"] == "ssd"
        elif c.name.startswith("wal-") or c.name.endswith("-tmp"):   # provisioned in one zone
            assert pv.annotations["pv.kubernetes.io/provisioned-by"] == "ebs.csi.aws.com"
            (term,) = pv.node_affinity.terms
            assert [r.key for r in term.match_expressions] == [ZONE]
        elif c.name.startswith("backup-"):   # the static zonal pool first, then provisioned
            assert pv.storage_class_name == "zonal"


def test_attach_limits_and_tracked_capacity_hold(run):
    sched = run.scheduler
    per_node = Counter()
    for pod in sched.pods.values():
        if not pod.node_name:
            continue
        for name in _claims_of(pod):
            claim = sched.get_object("PersistentVolumeClaim", name, pod.namespace)
            pv = sched.get_object("PersistentVolume", claim.volume_name, "") if claim.volume_name else None
            if pv is not None and pv.csi_driver == "ebs.csi.aws.com":
                per_node[pod.node_name] += 1
    assert per_node and max(per_node.values()) <= 4
    capacities = {c.name: c for c in sched.list_objects("CSIStorageCapacity")}
    zones = ("zone-a", "zone-b", "zone-c")
    assert sorted(capacities) == sorted(f"{c}-{z}" for c in ("gp3", "zonal") for z in zones)
    used = Counter()
    for pv in sched.list_objects("PersistentVolume"):
        if pv.annotations.get("pv.kubernetes.io/provisioned-by") == "ebs.csi.aws.com":
            zone = pv.node_affinity.terms[0].match_expressions[0].values[0]
            used[pv.storage_class_name, zone] += pv.capacity.nano_value()
    assert used[("gp3", "zone-a")] > 0
    gi = (1 << 30) * 10**9
    for cls, total in (("gp3", 300 * gi), ("zonal", 1024 * gi)):
        for zone in zones:
            published = capacities[f"{cls}-{zone}"].capacity.nano_value()
            assert published == total - used[cls, zone]  # the provisioner republished what is left
            assert used[cls, zone] <= total


def test_claims_end_with_their_pods_as_their_policies_say(run):
    sched = run.scheduler
    completed = [r for r in run.records if r.status == "Completed"]
    db_done = [r for r in completed if r.stream == "db"]
    scratch_done = [r for r in completed if r.stream == "scratch"]
    assert db_done and scratch_done
    for r in db_done:
        assert sched.get_object("PersistentVolumeClaim", f"data-{r.name}", r.namespace) is None   # Delete
        assert sched.get_object("PersistentVolumeClaim", f"backup-{r.name}", r.namespace) is not None  # Retain
    for r in scratch_done:   # ephemeral: collected with the pod
        assert sched.get_object("PersistentVolumeClaim", f"{r.name}-tmp", r.namespace) is None
    # the local pool's volumes come back (the local static provisioner); released zonal ones stay released
    phases = Counter(pv.phase for pv in sched.list_objects("PersistentVolume") if pv.source == "local")
    assert set(phases) <= {"Available", "Bound"}
    assert run.summary["storage"]["claims"]["Bound"] >= 10
    assert run.summary["storage"]["csi_nodes"] == 17   # 15 nodes at time 0, 2 added


def test_a_rescheduled_pod_keeps_its_claim_and_returns_to_its_local_volume():
    raw = scenario(arrivals=[{
        "name": "db", "interval": 1, "count": 6,
        "template": {"spec": {"containers": [{"name": "pg", "image": "postgres", "resources": {"requests": {"cpu": "1"}}}]}},
        "claims": [{"name": "data", "storage_class": "zonal", "size": "10Gi"}]}],
        events=[{"at": 50, "drain": {"count": 3, "selector": {}, "reschedule": True}}])
    raw["storage"]["classes"][2]["provisioner"] = "kubernetes.io/no-provisioner"  # static zonal volumes only
    raw["storage"]["classes"][2].pop("capacity")
    raw["storage"]["volumes"] = [{"storage_class": "zonal", "per": "zone", "count": 2, "capacity": "50Gi",
                                  "driver": "ebs.csi.aws.com"}]
    raw["storage"]["classes"][0].pop("capacity")
    result = simulate(raw, record=None)
    sched = result.scheduler
    again = [r for r in result.records if r.incarnation == 1]
    first = {r.name: r for r in result.records if r.incarnation == 0}
    assert again and any(r.node for r in again)
    for r in again:
        claim = sched.get_object("PersistentVolumeClaim", f"data-{r.name}", r.namespace)
        assert claim is not None and claim.phase == "Bound"   # kept through the eviction
        pv = sched.get_object("PersistentVolume", claim.volume_name, "")
        zone = pv.node_affinity.terms[0].match_expressions[0].values[0]
        assert sched.cache.get_node(first[r.name].node).labels[ZONE] == zone   # where it ran first
        if r.node:  # and back in that zone, on another node (its own is cordoned)
            assert sched.cache.get_node(r.node).labels[ZONE] == zone and r.node != first[r.name].node


def test_storage_objects_from_a_file_and_template_claims_by_name(tmp_path):
    objects = [pv_manifest("shared-0", storage_class="manual", capacity="5Gi", access_modes=("ReadWriteMany",)),
               pvc_manifest("shared", storage_class="manual", request="1Gi", access_modes=("ReadWriteMany",)),
               {"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass", "metadata": {"name": "manual"},
                "provisioner": "kubernetes.io/no-provisioner"}]
    (tmp_path / "storage.yaml").write_text(yaml.safe_dump_all(objects))
    raw = {"cluster": {"nodes": 3}, "until": 20, "storage": {"objects": "storage.yaml"},
           "arrivals": [{"name": "reader", "interval": 1, "count": 4, "template": {"spec": {
               "containers": [{"name": "c", "image": "busybox"}],
               "volumes": [{"name": "shared", "persistentVolumeClaim": {"claimName": "shared"}}]}}}]}
    (tmp_path / "sc.yaml").write_text(yaml.safe_dump(raw))
    result = simulate(tmp_path / "sc.yaml", record=None)
    assert Counter(r.status for r in result.records) == {"Running": 4}
    claim = result.scheduler.get_object("PersistentVolumeClaim", "shared", "default")
    assert claim.phase == "Bound" and claim.volume_name == "shared-0"   # Immediate: bound at time 0


def test_the_example_scenario_gives_databases_local_and_default_class_volumes():
    from pathlib import Path
    result = simulate(Path(__file__).resolve().parents[2] / "examples" / "scenario.yaml", record=None)
    sched = result.scheduler
    db = [p for p in sched.pods.values() if p.labels.get("app") == "db" and p.node_name]
    assert db
    for pod in db:
        data = sched.get_object("PersistentVolumeClaim", f"data-{pod.name}", "shop")
        wal = sched.get_object("PersistentVolumeClaim", f"wal-{pod.name}", "shop")
        assert data.phase == wal.phase == "Bound" and wal.storage_class_name == "gp3"
        node = sched.cache.get_node(pod.node_name)
        assert node.labels["disktype"] == "ssd"
        for claim in (data, wal):
            pv = sched.get_object("PersistentVolume", claim.volume_name, "")
            assert check_node_affinity(pv.node_affinity, node.labels)


@pytest.mark.parametrize("change,path,message", [
    (lambda r: r["arrivals"][0]["claims"][0].update(storage_class="nope"), "arrivals[0].claims[0].storage_class",
     "no StorageClass named 'nope'"),
    (lambda r: r["arrivals"][0]["claims"][1].update(name="data"), "arrivals[0].claims[1].name", "duplicate claim name"),
    (lambda r: r["arrivals"][0]["claims"][0].update(size="lots"), "arrivals[0].claims[0].size", "lots"),
    (lambda r: r["arrivals"][0]["claims"][0].update(sise="1Gi"), "arrivals[0].claims[0].sise", "unknown field"),
    (lambda r: r["arrivals"][1]["claims"][0].update(when_deleted="Retain"), "arrivals[1].claims[0].when_deleted",
     "always deleted with its pod"),
    (lambda r: r["arrivals"][0]["claims"][0].update(access_modes=["ReadWriteSometimes"]), "arrivals[0].claims[0]",
     "ReadWriteSometimes"),
    (lambda r: r["arrivals"][0]["template"]["spec"].update(volumes=[{"name": "data", "emptyDir": {}}]),
     "arrivals[0].claims[0].name", "already has a volume named 'data'"),
    (lambda r: r["storage"]["classes"][0].update(binding_mode="Later"), "storage.classes[0].binding_mode",
     "must be one of Immediate, WaitForFirstConsumer"),
    (lambda r: r["storage"]["classes"][1].update(name="gp3"), "storage.classes[1].name", "duplicate class name"),
    (lambda r: r["storage"]["classes"][1].update(capacity="1Ti"), "storage.classes[1].capacity", "provisions nothing"),
    (lambda r: r["storage"]["classes"][0].update(allowed_topologies={ZONE: []}),
     "storage.classes[0].allowed_topologies[topology.kubernetes.io/zone]", "non-empty list"),
    (lambda r: r["storage"]["classes"][2].pop("capacity"), "storage.classes[2]", "tracks capacity"),
    (lambda r: r["storage"]["drivers"][0].update(attach_limit=-1), "storage.drivers[0].attach_limit", ">= 0"),
    (lambda r: r["storage"]["drivers"][0].pop("name"), "storage.drivers[0].name", "required"),
    (lambda r: r["storage"]["volumes"][0].update(per="rack"), "storage.volumes[0].per", "must be one of"),
    (lambda r: r["storage"]["volumes"][0].update(per="cluster", nodes=None), "storage.volumes[0].driver",
     "required unless per: node"),
    (lambda r: r["storage"]["volumes"][1].update(storage_class="gold"), "storage.volumes[1].storage_class",
     "no StorageClass named 'gold'"),
    (lambda r: r["storage"]["volumes"][1].update(capacity="-5Gi"), "storage.volumes[1]", "-5Gi"),
    (lambda r: r["storage"]["volumes"][0].pop("count"), "storage.volumes[0].count", "required"),
    (lambda r: r["storage"].update(objects=[{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "x"}}]),
     "storage.objects[0]", "storage.objects holds only"),
    (lambda r: r["storage"].update(objects="missing.yaml"), "storage.objects", "missing.yaml"),
    (lambda r: r["storage"].update(disks=[]), "storage.disks", "unknown field"),
])
def test_problems_are_reported_at_their_field_paths(change, path, message):
    raw = scenario()
    change(raw)
    with pytest.raises(ScenarioError) as info:
        Scenario.load(raw).storage_objects()
    assert info.value.path == path or str(info.value).startswith(path), str(info.value)
    assert message in str(info.value), str(info.value)


def test_a_zonal_pool_needs_zones():
    raw = scenario(cluster={"nodes": 3})
    raw["storage"]["volumes"] = [raw["storage"]["volumes"][1]]
    for cls in raw["storage"]["classes"]:
        cls.pop("capacity", None)
    with pytest.raises(ScenarioError, match=r"^storage.volumes\[0\].per: the cluster's nodes have no "):
        Scenario.load(raw).storage_objects()
