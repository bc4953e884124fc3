"""The Cluster sets ``metadata.creationTimestamp`` as the API server does: on create, from the
run's clock in whole seconds (unless the object, a cluster dump's, has one already), and keeps the
stored one on every update."""
from fastsched import Scheduler
from fastsched.clock import VirtualClock
from fastsched.dra.extended_resources import ExtendedResourceCache

START = 1_700_000_000.75  # 2023-11-14T22:13:20.75Z


def _cluster(start: float = START):
    clock = VirtualClock(start)
    return Scheduler(clock=clock, seed=1).cluster, clock


def _device_class(name: str, resource: str = "example.com/gpu", created: str | None = None) -> dict:
    meta: dict = {"name": name}
    if created is not None:
        meta["creationTimestamp"] = created
    return {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": meta,
            "spec": {"extendedResourceName": resource}}


def test_a_created_object_gets_the_clocks_second_and_keeps_a_given_one():
    cluster, _ = _cluster()
    cluster.add_object(_device_class("gpu"))
    cluster.add_object(_device_class("old", created="2020-01-01T00:00:00Z"))
    gpu, old = cluster.get_object("DeviceClass", "gpu", ""), cluster.get_object("DeviceClass", "old", "")
    assert gpu.creation_timestamp == 1_700_000_000.0
    assert gpu.manifest["metadata"]["creationTimestamp"] == "2023-11-14T22:13:20Z"
    assert old.creation_timestamp == 1_577_836_800.0


def test_an_update_keeps_the_stored_creation_timestamp():
    cluster, clock = _cluster()
    cluster.add_object(_device_class("gpu"))
    clock._now = START + 500  # (time moved by hand: nothing is pending)
    cluster.update_object(_device_class("gpu", resource="example.com/other"))  # none given
    cluster.update_object(_device_class("gpu", resource="example.com/other", created="2030-01-01T00:00:00Z"))
    gpu = cluster.get_object("DeviceClass", "gpu", "")
    assert gpu.extended_resource_name == "example.com/other"
    assert gpu.creation_timestamp == 1_700_000_000.0
    assert gpu.manifest["metadata"]["creationTimestamp"] == "2023-11-14T22:13:20Z"


def test_objects_a_controller_creates_get_the_clocks_time_and_workloads_of_a_batch_still_reconcile():
    cluster, _ = _cluster()
    deployment = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web", "namespace": "default"},
                  "spec": {"replicas": 2, "selector": {"matchLabels": {"app": "web"}},
                           "template": {"metadata": {"labels": {"app": "web"}},
                                        "spec": {"containers": [{"name": "c", "image": "nginx"}]}}}}
    cluster.add([deployment])
    (rs,) = cluster.list_objects("ReplicaSet")
    assert rs.creation_timestamp == 1_700_000_000.0
    assert cluster.get_object("Deployment", "web").creation_timestamp == 1_700_000_000.0
    assert len(cluster.pods_in_namespace("default")) == 2


def test_the_device_class_tie_break_reads_the_creation_times():
    """Two classes for one extended resource: the newer one takes it (here the later by name);
    created within one second (the API server's resolution), the first by name."""
    cluster, clock = _cluster()
    cluster.add_object(_device_class("a-gpu"))
    clock._now = START + 60
    cluster.add_object(_device_class("b-gpu"))
    cache = ExtendedResourceCache(cluster.list_objects("DeviceClass"))
    assert cache.get_device_class("example.com/gpu").name == "b-gpu"
    same, clock = _cluster()
    same.add_object(_device_class("a-gpu"))
    clock._now = START + 0.2
    same.add_object(_device_class("b-gpu"))
    assert ExtendedResourceCache(same.list_objects("DeviceClass")).get_device_class("example.com/gpu").name == "a-gpu"


def test_the_kept_timestamp_text_is_the_formatted_one_on_random_sequences():
    # with_creation_timestamp keeps the last timestamp's text: on sequences that repeat a
    # timestamp, move within a second, go back and unset it, every manifest's text must be what
    # _rfc3339 formats for that timestamp
    import random

    from fastsched.api.resource import parse_resource_claim
    from fastsched.api.storage import with_creation_timestamp
    from fastsched.api.validation import _rfc3339

    claim = parse_resource_claim({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
                                  "metadata": {"name": "c", "namespace": "default"},
                                  "spec": {"devices": {"requests": []}}})
    for seed in range(20):
        rng = random.Random(seed)
        t = float(rng.randrange(0, 2_000_000_000))
        for _ in range(60):
            step = rng.random()
            if step < 0.4:
                pass  # the same timestamp again
            elif step < 0.6:
                t = float(int(t) + rng.choice((0, 1, -1, 3600)))
            elif step < 0.8:
                t = float(rng.randrange(0, 2_000_000_000))
            timestamp = None if rng.random() < 0.1 else t
            stamped = with_creation_timestamp(claim, timestamp)
            assert stamped.creation_timestamp == timestamp
            assert stamped.manifest["metadata"].get("creationTimestamp") == _rfc3339(timestamp), (seed, timestamp)


def _replaced(obj, timestamp):
    """``with_creation_timestamp`` as it was written before the field copy: through ``replace``."""
    from fastsched.api import storage

    manifest = obj.manifest
    if manifest:
        meta = dict(manifest.get("metadata") or {})
        text = storage._rfc3339(timestamp)
        if text is None:
            meta.pop("creationTimestamp", None)
        else:
            meta["creationTimestamp"] = text
        manifest = {**manifest, "metadata": meta}
    new = obj.replace(manifest=manifest, creation_timestamp=timestamp)
    new.admitted = obj.admitted
    new.decoded_under = obj.decoded_under
    return new


def _all_fields(obj):
    import dataclasses

    return type(obj), [(f.name, getattr(obj, f.name)) for f in dataclasses.fields(obj)], \
        [(f.name, type(getattr(obj, f.name))) for f in dataclasses.fields(obj)]


def test_the_field_copy_of_a_creation_timestamp_is_replaces_object_on_random_objects():
    """``with_creation_timestamp``'s field copy (classes whose only ``__post_init__`` is
    KubeObject's: PVs, claims, storage classes, CSINodes, ...) against ``replace``: every field
    equal, of the same type, the compare=False ones (manifest, admitted, decoded_under) included;
    on random storage clusters' objects and nodes and pods (``replace`` kept for them), with
    random timestamps (None too), admission states, uids cleared after a rename and labels set
    to plain dicts. The copy is taken for PVs and claims."""
    import random

    from fastsched.api import storage
    from fastsched.api.objects import Node, Pod
    from fastsched.testing import storage_check_scenario

    copied = 0
    for seed in range(6):
        rng = random.Random(seed)
        sc = storage_check_scenario(seed, nodes=6, claims=20, pvs=16)
        for obj in list(sc.objects) + list(sc.nodes) + list(sc.running)[:5]:
            copied += storage._replace_copier(type(obj)) is not None
            if isinstance(obj, (Node, Pod)):  # (their own __post_init__)
                assert storage._replace_copier(type(obj)) is None
            for _ in range(3):
                obj.admitted = rng.random() < 0.5
                obj.decoded_under = rng.choice((None, (frozenset(), True), (frozenset({("G", True)}), False)))
                if rng.random() < 0.2:
                    obj.name, obj.uid = obj.name + "-renamed", ""
                if rng.random() < 0.2:
                    obj.labels = dict(obj.labels, extra="x")
                timestamp = rng.choice((None, 1e9, float(rng.randint(0, 2_000_000_000))))
                assert _all_fields(storage.with_creation_timestamp(obj, timestamp)) == \
                    _all_fields(_replaced(obj, timestamp)), type(obj).__name__
    assert copied > 50
    assert storage._replace_copier(storage.PersistentVolume) is not None
    assert storage._replace_copier(storage.PersistentVolumeClaim) is not None


def _meta(name: str, created: str | None, **more) -> dict:
    meta = {"name": name, **more}
    if created is not None:
        meta["creationTimestamp"] = created
    return meta


def _node(name: str, created: str | None = None, cpu: str = "4") -> dict:
    return {"apiVersion": "v1", "kind": "Node", "metadata": _meta(name, created),
            "status": {"allocatable": {"cpu": cpu, "memory": "8Gi", "pods": "110"}}}


def _stored(cluster) -> dict:
    """The creation times the cluster holds of the nodes, namespaces, PriorityClasses and PDBs."""
    return {**{("Node", n.name): n.creation_timestamp for n in cluster.nodes()},
            **{("Namespace", k): v.creation_timestamp for k, v in cluster.namespaces.items()},
            **{("PriorityClass", k): v.creation_timestamp for k, v in cluster.priority_classes.items()},
            **{("PodDisruptionBudget", k): v.creation_timestamp for k, v in cluster.pdbs.items()}}


def test_nodes_namespaces_priority_classes_and_pdbs_are_stamped_on_create_and_keep_it_on_update():
    cluster, clock = _cluster()
    cluster.add([_node("a"), _node("old", created="2020-01-01T00:00:00Z"),
                 {"apiVersion": "v1", "kind": "Namespace", "metadata": _meta("team", None)},
                 {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": _meta("high", None),
                  "value": 100},
                 {"apiVersion": "policy/v1", "kind": "PodDisruptionBudget",
                  "metadata": _meta("pdb", None, namespace="team"),
                  "spec": {"minAvailable": 1, "selector": {"matchLabels": {"app": "x"}}}}])
    # (many nodes at once take the batched path)
    cluster.add_nodes([_node(f"bulk-{i}") for i in range(40)])
    stored = _stored(cluster)
    assert stored[("Node", "old")] == 1_577_836_800.0
    for key in [("Node", "a"), ("Node", "bulk-0"), ("Node", "bulk-39"), ("Namespace", "team"),
                ("PriorityClass", "high"), ("PodDisruptionBudget", "team/pdb")]:
        assert stored[key] == 1_700_000_000.0, key
    node = {n.name: n for n in cluster.nodes()}["a"]
    assert node.manifest["metadata"]["creationTimestamp"] == "2023-11-14T22:13:20Z"
    clock._now = START + 500
    cluster.update_node(_node("a", cpu="8"))
    cluster.update_node(_node("old", created="2030-01-01T00:00:00Z"))
    cluster.add_namespace({"apiVersion": "v1", "kind": "Namespace", "metadata": _meta("team", None, labels={"x": "y"})})
    cluster.update_priority_class({"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass",
                                   "metadata": _meta("high", "2031-01-01T00:00:00Z"), "value": 100,
                                   "description": "changed"})
    after = _stored(cluster)
    assert after == stored
    assert {n.name: n for n in cluster.nodes()}["a"].allocatable["cpu"] == 8000
    assert cluster.namespaces["team"].labels["x"] == "y"
    assert cluster.priority_classes["high"].description == "changed"
