"""The resourceclaim controller's part for PodGroups (v1.37.2 ``pkg/controller/resourceclaim/
controller.go``: ``syncPodGroup``/``handlePodGroupClaim``, ``handleClaim`` for a member's entry equal
to one of its group's, ``getPodGroup``), in :mod:`fastsched.dra.controller`, over an ObjectStore."""
from __future__ import annotations

from fastsched.api import Pod
from fastsched.api.objects import PodSchedulingGroup
from fastsched.api.resource import claim_with_status, parse_resource_claim, parse_resource_claim_template
from fastsched.api.scheduling import parse_pod_group
from fastsched.dra import controller
from fastsched.framework.objects import ObjectStore

PG_UID = "pg-uid"


def template(name: str = "gpu-template") -> object:
    return parse_resource_claim_template({"metadata": {"name": name, "namespace": "default",
                                                       "labels": {"team": "a"}},
                                          "spec": {"metadata": {"labels": {"from": "template"}},
                                                   "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {
                                                       "deviceClassName": "gpu.example.com"}}]}}}})


def pod_group(*entries: dict, name: str = "pg") -> object:
    return parse_pod_group({"apiVersion": "scheduling.k8s.io/v1beta1", "kind": "PodGroup",
                            "metadata": {"name": name, "namespace": "default", "uid": PG_UID},
                            "spec": {"schedulingPolicy": {"gang": {"minCount": 2}},
                                     "resourceClaims": list(entries)}})


def member(*entries: dict, name: str = "p", group: str | None = "pg") -> Pod:
    spec: dict = {"containers": [{"name": "c", "image": "x"}], "resourceClaims": list(entries)}
    pod = Pod.from_manifest({"metadata": {"name": name, "namespace": "default", "uid": f"uid-{name}"},
                             "spec": spec}, validate=False)
    return pod if group is None else pod.replace(scheduling_group=PodSchedulingGroup(group))


SHARED = {"name": "shared", "resourceClaimTemplateName": "gpu-template"}
OWN = {"name": "own", "resourceClaimTemplateName": "gpu-template"}


def _claims(store):
    return {c.name: c for c in store.list_objects("ResourceClaim", "default")}


def test_pod_group_claim_from_template():
    """handlePodGroupClaim: the claim is created from the template, owned by the PodGroup,
    annotated with the group's entry name, named <podgroup>-<claim>-<suffix>; the status names it."""
    store = ObjectStore([template()])
    pg = controller.pod_group_added(store, pod_group(SHARED))
    (claim,) = _claims(store).values()
    assert claim.generate_name == "pg-shared-" and claim.name.startswith("pg-shared-")
    (owner,) = claim.owner_references
    assert (owner.api_version, owner.kind, owner.name, owner.uid, owner.controller) == (
        "scheduling.k8s.io/v1beta1", "PodGroup", "pg", PG_UID, True)
    assert claim.annotations == {"resource.kubernetes.io/pod-claim-name": "shared"}
    assert claim.labels == {"from": "template"}
    assert list(pg.resource_claim_statuses) == [{"name": "shared", "resourceClaimName": claim.name}]
    # a second sync (the status recorded) creates nothing
    assert controller.pod_group_added(store, pg) is pg and len(_claims(store)) == 1


def test_pod_group_claim_waits_for_its_template_and_reuses_an_orphan():
    store = ObjectStore([])
    pg = pod_group(SHARED)
    assert controller.pod_group_added(store, pg) is pg and not _claims(store)
    store.add_object(template())
    first = controller.pod_group_added(store, pg)
    # created before its status was written (findPodGroupResourceClaim): found, not created again
    again = controller.pod_group_added(store, pg)
    assert list(again.resource_claim_statuses) == list(first.resource_claim_statuses) and len(_claims(store)) == 1


def test_named_group_claims_are_not_created():
    store = ObjectStore([template()])
    pg = pod_group({"name": "shared", "resourceClaimName": "user-claim"})
    assert controller.pod_group_added(store, pg) is pg and not _claims(store)


def test_member_entry_resolves_to_the_groups_claim():
    """handleClaim: an entry equal to the group's (name and template) takes the group's claim;
    the member's other template entries get claims of their own."""
    store = ObjectStore([template()])
    pg = controller.pod_group_added(store, pod_group(SHARED))
    store.add_object(pg)
    group_claim = pg.resource_claim_statuses[0]["resourceClaimName"]
    pod = controller.pod_added(store, member(SHARED, OWN))
    statuses = {s["name"]: s["resourceClaimName"] for s in pod.resource_claim_statuses}
    assert statuses["shared"] == group_claim
    own = _claims(store)[statuses["own"]]
    assert own.owner_references[0].kind == "Pod" and statuses["own"].startswith("p-own-")
    assert len(_claims(store)) == 2


def test_entry_equal_in_name_only_is_the_pods():
    """BindTo compares name, claim name and template name: another template is the pod's own."""
    store = ObjectStore([template(), template("other")])
    pg = controller.pod_group_added(store, pod_group(SHARED))
    store.add_object(pg)
    pod = controller.pod_added(store, member({"name": "shared", "resourceClaimTemplateName": "other"}))
    (status,) = pod.resource_claim_statuses
    assert _claims(store)[status["resourceClaimName"]].owner_references[0].kind == "Pod"


def test_member_waits_for_its_pod_group():
    """getPodGroup fails while the PodGroup does not exist: none of the member's claims, not even
    its own, are created; once the group and its claim are there, the member gets both."""
    store = ObjectStore([template()])
    waiting = member(SHARED, OWN)
    assert controller.pod_added(store, waiting) is waiting and not _claims(store)
    assert controller.has_unresolved_templates(waiting)
    pg = controller.pod_group_added(store, pod_group(SHARED))
    store.add_object(pg)
    ((old, new),) = controller.pod_group_members_ready(store, pg, [waiting, member(OWN, name="q", group=None)])
    assert old is waiting and {s["name"] for s in new.resource_claim_statuses} == {"shared", "own"}
    assert not controller.has_unresolved_templates(new)


def test_member_waits_for_the_groups_claim():
    """The PodGroup is there but its claim is not (no template yet): the member's own claim is
    created, the group entry waits."""
    store = ObjectStore([])
    pg = pod_group(SHARED)
    store.add_object(pg)
    pod = controller.pod_added(store, member(SHARED))
    assert not pod.resource_claim_statuses and controller.has_unresolved_templates(pod)


def test_pod_group_removed_releases_its_reservations():
    """syncClaim for a deleted PodGroup: its reservedFor entry is removed; a claim left without
    consumers is deallocated; other claims and other consumers are left."""
    reservation = {"apiGroup": "scheduling.k8s.io", "resource": "podgroups", "name": "pg", "uid": PG_UID}
    other = {"resource": "pods", "name": "x", "uid": "x"}

    def claim(name, reserved):
        return claim_with_status(parse_resource_claim({"metadata": {"name": name, "namespace": "default",
                                                                    "finalizers": ["resource.kubernetes.io/delete-protection"]},
                                                       "spec": {"devices": {"requests": []}}}),
                                 allocation={"devices": {"results": []}}, reserved_for=reserved)
    store = ObjectStore([claim("alone", [reservation]), claim("shared-with-pod", [reservation, other]),
                         claim("not-named", [reservation])])
    pg = pod_group({"name": "a", "resourceClaimName": "alone"}, {"name": "b", "resourceClaimName": "shared-with-pod"})
    controller.pod_group_removed(store, pg)
    claims = _claims(store)
    assert claims["alone"].allocation is None and not claims["alone"].reserved_for
    assert not claims["alone"].finalizers
    assert claims["shared-with-pod"].allocation is not None and list(claims["shared-with-pod"].reserved_for) == [other]
    assert list(claims["not-named"].reserved_for) == [reservation]


# -- end to end: the Scheduler with the gate ---------------------------------------------------------
_CLUSTER = [
    {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"},
     "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "10"}}},
    {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": "gpu.example.com"},
     "spec": {"selectors": [{"cel": {"expression": 'device.driver == "gpu.example.com"'}}]}},
    {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": "n1-gpus"},
     "spec": {"driver": "gpu.example.com", "nodeName": "n1", "pool": {"name": "n1", "generation": 1,
                                                                       "resourceSliceCount": 1},
              "devices": [{"name": "gpu-0"}, {"name": "gpu-1"}]}},
]


def _member_manifest(name: str) -> dict:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name},
            "spec": {"schedulingGroup": {"podGroupName": "pg"},
                     "containers": [{"name": "c", "image": "x", "resources": {"claims": [{"name": "shared"}]}}],
                     "resourceClaims": [SHARED]}}


def _template_manifest() -> dict:
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
            "metadata": {"name": "gpu-template", "namespace": "default"},
            "spec": {"spec": {"devices": {"requests": [{"name": "gpu", "exactly": {
                "deviceClassName": "gpu.example.com"}}]}}}}


def _pod_group_manifest() -> dict:
    return {"apiVersion": "scheduling.k8s.io/v1beta1", "kind": "PodGroup", "metadata": {"name": "pg"},
            "spec": {"schedulingPolicy": {"gang": {"minCount": 2}}, "resourceClaims": [SHARED]}}


def _run(gate: bool, members_first: bool = False):
    from fastsched import Scheduler

    s = Scheduler(feature_gates={"GenericWorkload": True, "DRAWorkloadResourceClaims": gate})
    s.add([*_CLUSTER, _template_manifest()])
    members = [_member_manifest("a"), _member_manifest("b")]
    s.add(members if members_first else _pod_group_manifest())
    s.add(_pod_group_manifest() if members_first else members)
    results = {r.pod.name: (r.status, r.node_name) for r in s.run()}
    return s, results


def test_gang_shares_the_pod_groups_claim():
    """Gate on: one claim, owned by the PodGroup, allocated once and reserved for the group; both
    members resolve to it (also when they came before their PodGroup)."""
    for members_first in (False, True):
        s, results = _run(True, members_first)
        assert results == {"a": ("Scheduled", "n1"), "b": ("Scheduled", "n1")}
        (claim,) = s.cluster.list_objects("ResourceClaim", "default")
        pg = s.cluster.get_object("PodGroup", "pg", "default")
        assert claim.owner_references[0].kind == "PodGroup" and claim.allocation is not None
        assert list(claim.reserved_for) == [{"apiGroup": "scheduling.k8s.io", "resource": "podgroups", "name": "pg",
                                             "uid": pg.uid}]
        assert list(pg.resource_claim_statuses) == [{"name": "shared", "resourceClaimName": claim.name}]
        for name in ("a", "b"):
            assert list(s.cluster.get_pod("default", name).resource_claim_statuses) == [
                {"name": "shared", "resourceClaimName": claim.name}]


def test_gate_off_every_member_gets_its_own_claim():
    """Gate off: the PodGroup's spec.resourceClaims is dropped on create; each member's template
    entry makes a claim of its own, reserved for the pod."""
    s, results = _run(False)
    assert results == {"a": ("Scheduled", "n1"), "b": ("Scheduled", "n1")}
    claims = s.cluster.list_objects("ResourceClaim", "default")
    assert sorted(c.owner_references[0].name for c in claims) == ["a", "b"]
    assert all([r["resource"] for r in c.reserved_for] == ["pods"] for c in claims)
    assert not s.cluster.get_object("PodGroup", "pg", "default").resource_claims
