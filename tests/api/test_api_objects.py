"""Object semantics: tolerations, pod and node properties, copies, UIDs."""
import uuid

import pytest

from fastsched.api import (
    LABEL_METADATA_NAME,
    Container,
    ContainerPort,
    Namespace,
    Node,
    Pod,
    Taint,
    Toleration,
    deterministic_uid,
    find_untolerated_taint,
    tolerations_tolerate_taint,
)
from fastsched.api.objects import _UID_NAMESPACE_BYTES

TAINT = Taint(key="dedicated", value="gpu", effect="NoSchedule")


@pytest.mark.parametrize(
    "toleration, expected",
    [
        (Toleration(key="dedicated", operator="Equal", value="gpu", effect="NoSchedule"), True),
        (Toleration(key="dedicated", value="gpu", effect="NoSchedule"), True),  # Equal is the default
        (Toleration(key="dedicated", operator="", value="gpu"), True),  # "" means Equal
        (Toleration(key="dedicated", operator="Equal", value="cpu", effect="NoSchedule"), False),
        (Toleration(key="dedicated", operator="Equal", value="", effect="NoSchedule"), False),
        (Toleration(key="dedicated", operator="Exists", effect="NoSchedule"), True),  # any value
        (Toleration(key="dedicated", operator="Exists"), True),  # empty effect: all effects
        (Toleration(key="dedicated", operator="Exists", effect="NoExecute"), False),
        (Toleration(key="other", operator="Exists"), False),
        (Toleration(operator="Exists"), True),  # empty key with Exists: every taint
        (Toleration(operator="Exists", effect="PreferNoSchedule"), False),
        # upstream only checks that a non-empty key matches; an empty key with Equal compares values
        (Toleration(operator="Equal", value="gpu"), True),
        (Toleration(key="dedicated", operator="Gt", value="1"), False),  # unknown in v1.34
    ],
)
def test_toleration_table(toleration, expected):
    assert toleration.tolerates(TAINT) is expected


def test_find_untolerated_taint_returns_the_first_in_node_order():
    taints = [
        Taint(key="soft", effect="PreferNoSchedule"),
        Taint(key="tolerated", value="yes", effect="NoSchedule"),
        Taint(key="hard", value="x", effect="NoExecute"),
        Taint(key="hard2", effect="NoSchedule"),
    ]
    tolerations = [Toleration(key="tolerated", value="yes")]
    effects = ("NoSchedule", "NoExecute")
    assert find_untolerated_taint(taints, tolerations, effects) == taints[2]
    assert find_untolerated_taint(taints, tolerations) == taints[0]  # every effect considered
    everything = [Toleration(operator="Exists")]
    assert find_untolerated_taint(taints, everything, effects) is None
    assert find_untolerated_taint([], tolerations, effects) is None
    assert tolerations_tolerate_taint(tolerations, taints[1])
    assert not tolerations_tolerate_taint([], taints[1])


def test_value_types_are_hashable_and_comparable():
    assert Toleration(key="a") == Toleration(key="a", operator="Equal")
    assert len({Taint(key="a"), Taint(key="a"), Taint(key="b")}) == 2
    assert hash(ContainerPort(80)) == hash(ContainerPort(80))


def test_pod_defaults_and_key():
    pod = Pod(name="web")
    assert pod.namespace == "default"
    assert pod.key == "default/web"
    assert pod.scheduler_name == "default-scheduler"
    assert pod.preemption_policy == "PreemptLowerPriority"
    assert pod.priority is None and pod.effective_priority == 0
    assert Pod(name="web", priority=-5).effective_priority == -5
    assert pod.node_selector is None
    assert Node(name="n1").key == "n1"


def test_host_ports_follow_get_host_ports():
    pod = Pod(
        name="p",
        init_containers=(
            Container(name="sidecar", restart_policy="Always",
                      ports=(ContainerPort(9000, host_port=9000, host_ip="10.0.0.1", protocol="UDP"),)),
            Container(name="init", ports=(ContainerPort(7000, host_port=7000),)),  # not running later
        ),
        containers=(
            Container(name="app", ports=(ContainerPort(80, host_port=8080), ContainerPort(81),
                                         ContainerPort(82, host_port=8082, protocol=""))),
        ),
    )
    # sidecar first, normal init container skipped, hostPort 0 skipped, defaults filled in
    assert pod.host_ports == (("10.0.0.1", "UDP", 9000), ("0.0.0.0", "TCP", 8080), ("0.0.0.0", "TCP", 8082))


def test_images_list_init_containers_first():
    pod = Pod(name="p", init_containers=(Container(name="i", image="busybox"),),
              containers=(Container(name="a", image="nginx:1.25"), Container(name="b", image="redis")))
    assert pod.images == ("busybox", "nginx:1.25", "redis")


def test_pvc_or_ephemeral_volumes():
    assert not Pod(name="p", volumes=({"name": "v", "emptyDir": {}},)).has_pvc_or_ephemeral_volumes
    assert Pod(name="p", volumes=({"name": "v", "persistentVolumeClaim": {"claimName": "c"}},)
               ).has_pvc_or_ephemeral_volumes
    assert Pod(name="p", volumes=({"name": "v", "ephemeral": {"volumeClaimTemplate": {}}},)
               ).has_pvc_or_ephemeral_volumes
    assert Pod(name="p", volumes=({"name": "v", "persistent_volume_claim": {"claim_name": "c"}},)
               ).has_pvc_or_ephemeral_volumes


def test_with_node_name_copies_and_patches_the_manifest():
    manifest = {"kind": "Pod", "metadata": {"name": "p"}, "spec": {"containers": []}}
    pod = Pod.from_manifest(manifest, validate=False)
    bound = pod.with_node_name("node-7")
    assert bound.node_name == "node-7" and pod.node_name == ""
    assert bound.manifest["spec"]["nodeName"] == "node-7"
    assert "nodeName" not in manifest["spec"]  # the original manifest is untouched
    assert bound.uid == pod.uid and bound.name == "p"
    assert bound != pod


def test_with_node_name_shares_every_other_field_including_caches():
    import dataclasses

    pod = Pod(name="p", labels={"a": "b"}, containers=(Container(name="a", requests={"cpu": 100}),),
              priority=5, start_time=None)
    assert pod.requests == {"cpu": 100}  # fills the cached totals, which the copy shares
    pod.admitted = True
    bound = pod.with_node_name("n1")
    for f in dataclasses.fields(Pod):
        if f.name not in ("node_name", "manifest"):
            assert getattr(bound, f.name) is getattr(pod, f.name), f.name
    assert type(bound) is Pod and bound.node_name == "n1" and pod.node_name == ""
    bound.start_time = 3.0  # the copy is the scheduler's own: changing it leaves the original alone
    assert pod.start_time is None


def test_with_status_is_replace_of_the_patched_status_fields():
    import random

    from fastsched.testing import random_pod

    rng = random.Random(11)
    for i in range(60):
        pod = random_pod(rng, i)
        if rng.random() < 0.5:
            assert pod.requests is not None  # some with the cached totals filled
        changes = {}
        if rng.random() < 0.7:
            changes["nominated_node_name"] = rng.choice(["", "n1", "node-7"])
        if rng.random() < 0.7 or not changes:
            changes["conditions"] = ({"type": "PodScheduled", "status": "False", "reason": "Unschedulable",
                                      "message": f"m{i}"},)
        fast, slow = pod.with_status(**changes), pod.replace(**changes)
        assert fast is not pod and type(fast) is type(slow)
        for name in _all_field_names(Pod):
            if name not in ("_requests", "_non_zero_requests", "_scoring_requests"):  # caches: below
                assert getattr(fast, name) == getattr(slow, name), name
        assert (fast.requests, fast.non_zero_requests, fast.scoring_requests) == \
            (slow.requests, slow.non_zero_requests, slow.scoring_requests) and fast.manifest is pod.manifest
        assert fast.decoded_under is slow.decoded_under and fast.overhead_nanos == slow.overhead_nanos
        for name, value in changes.items():
            assert getattr(pod, name) != value or getattr(pod, name) is getattr(fast, name)
    # any other field: replace (its __init__ normalizes it)
    pod = Pod(name="p")
    assert pod.with_status(labels={"a": "b"}, conditions=()).labels == {"a": "b"}
    assert type(pod.with_status(labels={"a": "b"}).labels) is type(pod.replace(labels={"a": "b"}).labels)


def _all_field_names(cls):
    import dataclasses
    return [f.name for f in dataclasses.fields(cls)]


def test_replace_returns_a_new_object_with_fresh_caches():
    pod = Pod(name="p", containers=(Container(name="a", requests={"cpu": 100}),))
    assert pod.requests == {"cpu": 100}
    bigger = pod.replace(containers=(Container(name="a", requests={"cpu": 300}),))
    assert bigger.requests == {"cpu": 300}
    assert pod.requests == {"cpu": 100}


def test_equality_ignores_manifest_and_hash_uses_uid():
    a = Pod.from_manifest({"metadata": {"name": "p", "uid": "u1"}, "spec": {}}, validate=False)
    b = Pod(name="p", uid="u1")
    assert a == b and hash(a) == hash(b)
    assert a != Pod(name="p", uid="u2")
    assert a != Node(name="p", uid="u1")


def test_deterministic_uid_is_a_uuid5():
    expected = str(uuid.uuid5(uuid.UUID(bytes=_UID_NAMESPACE_BYTES), "Pod/default/web"))
    assert deterministic_uid("Pod", "default", "web") == expected
    assert Pod(name="web").uid == expected
    assert Pod(name="web").uid == Pod.from_manifest({"metadata": {"name": "web"}}, validate=False).uid
    assert Pod(name="web", namespace="other").uid != expected
    assert Node(name="web").uid != expected
    assert Pod(name="web", uid="given").uid == "given"


def test_collections_are_read_only():
    pod = Pod(name="p", labels={"a": "1"}, node_selector={"zone": "a"})
    with pytest.raises(TypeError):
        pod.labels["b"] = "2"  # type: ignore[index]
    with pytest.raises(TypeError):
        pod.node_selector["zone"] = "b"  # type: ignore[index]
    node = Node(name="n", allocatable={"cpu": 1000})
    with pytest.raises(TypeError):
        node.allocatable["cpu"] = 0  # type: ignore[index]


def test_node_helpers():
    node = Node(name="n", labels={"topology.kubernetes.io/zone": "z1",
                                  "failure-domain.beta.kubernetes.io/region": "r1"},
                allocatable={"pods": 110})
    assert node.zone == "z1" and node.region == "r1"
    assert node.allowed_pod_number == 110
    assert Node(name="m").zone == ""


def test_namespace_always_has_its_metadata_name_label():
    namespace = Namespace(name="team-a", labels={"env": "prod"})
    assert namespace.labels == {"env": "prod", LABEL_METADATA_NAME: "team-a"}
    assert namespace.namespace == ""


def test_container_is_sidecar():
    assert Container(name="s", restart_policy="Always").is_sidecar
    assert not Container(name="s").is_sidecar
    assert not Container(name="s", restart_policy="OnFailure").is_sidecar


def test_objects_pickle_and_deep_copy():
    import copy
    import dataclasses
    import pickle

    from fastsched.api import FrozenDict

    pod = Pod.from_manifest({
        "metadata": {"name": "p", "labels": {"app": "web"}},
        "spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": "250m"}}}],
                 "affinity": {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
                     {"labelSelector": {"matchLabels": {"app": "web"}}, "topologyKey": "zone"}]}}}}, validate=False)
    restored = pickle.loads(pickle.dumps(pod))
    assert restored == pod and restored.requests == {"cpu": 250}
    assert restored.affinity.pod_anti_affinity.required[0].label_selector.matches({"app": "web"})
    assert copy.deepcopy(pod) == pod
    assert dataclasses.asdict(Node(name="n", allocatable={"cpu": 1}))["allocatable"] == {"cpu": 1}
    frozen = FrozenDict({"a": "1"})
    assert hash(frozen) == hash(FrozenDict({"a": "1"})) and frozen == {"a": "1"}
    for mutate in (lambda: frozen.update(b="2"), lambda: frozen.pop("a"), lambda: frozen.setdefault("c", "3")):
        with pytest.raises(TypeError):
            mutate()


def test_the_compiled_slot_copy_equals_the_generated_field_copy():
    """``_make_field_copier`` hands ``Pod`` (its layout: its fields' slots alone) the compiled slot
    copy, and a class with more than its fields' slots (a ``__dict__``) the generated lines; both
    copies share every field, hold their own references, and refuse an unset field alike."""
    import dataclasses
    import gc
    import sys

    from fastsched._kernels import _bind
    from fastsched.api.objects import _layout_is_fields, _make_field_copier, _stored_fields

    assert _make_field_copier(Pod) is _bind.copy_slots

    @dataclasses.dataclass(slots=True, kw_only=True, eq=False)
    class SlottedPod(Pod):
        extra: object = None

    @dataclasses.dataclass(kw_only=True, eq=False)
    class DictPod(Pod):  # no slots: ``extra`` lives in the instance's __dict__
        extra: object = None

    assert _layout_is_fields(SlottedPod, _stored_fields(SlottedPod))
    assert not _layout_is_fields(DictPod, _stored_fields(DictPod))
    assert _make_field_copier(DictPod) is not _bind.copy_slots
    marker = object()
    for cls in (Pod, SlottedPod):
        kw = {} if cls is Pod else {"extra": marker}
        pod = cls(name="p", labels={"a": "b"}, containers=(Container(name="a", requests={"cpu": 100}),), **kw)
        assert pod.requests == {"cpu": 100}
        generated = _make_field_copier.__wrapped__(cls)
        labels = pod.labels
        refs = sys.getrefcount(labels)
        fast = _make_field_copier(cls)(pod)
        assert sys.getrefcount(labels) == refs + 1  # its own reference
        slow = generated(pod)
        assert sys.getrefcount(labels) == refs + 2
        del labels
        for copy in (fast, slow):
            assert type(copy) is cls and copy is not pod and gc.is_tracked(copy)
            for f in dataclasses.fields(cls):
                assert getattr(copy, f.name) is getattr(pod, f.name), (cls, f.name)
        if cls is SlottedPod:
            assert fast.extra is marker
        fast.name = "q"  # the copy's slots are its own
        assert pod.name == "p"
        del pod, slow
        gc.collect()
        assert fast.labels == {"a": "b"} and fast.requests == {"cpu": 100}  # still held by the copy
    unset = object.__new__(Pod)
    with pytest.raises(AttributeError):
        _bind.copy_slots(unset)
    with pytest.raises(AttributeError):
        _make_field_copier.__wrapped__(Pod)(unset)


def test_container_hash_tells_mount_names_apart():
    """Containers that differ only in their mounts' names (the ServiceAccount admission's
    ``kube-api-access-<random>``, one per pod) hash apart: the scheduler interns equal specs in a
    dict, and equal hashes made that quadratic. Equal containers hash equal; a mount name that is
    not a string hashes as None rather than failing."""
    def container(*names):
        return Container(name="c", image="i", volume_mounts=tuple({"name": n, "mountPath": "/m"} for n in names))
    a, b = container("kube-api-access-abcde"), container("kube-api-access-fghjk")
    assert a != b and hash(a) != hash(b)
    assert hash(a) == hash(container("kube-api-access-abcde")) and a == container("kube-api-access-abcde")
    assert hash(container("x", "y")) != hash(container("x"))
    assert hash(container(["not", "a", "string"])) == hash(container(None))
