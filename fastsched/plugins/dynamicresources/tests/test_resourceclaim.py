"""``k8s.io/dynamic-resource-allocation/resourceclaim`` v0.37.2 ``resourceclaim_test.go``:
``TestResourceClaimIsFor`` (Pod and PodGroup), ``TestIsReservedForPod``, ``TestName``,
``TestNameFromPodGroup``, ``TestBindTo`` -- every row. (``TestBaseRequestRef`` and
``TestConfigForResult`` concern helpers fastsched writes inline in the allocator.)"""
from __future__ import annotations

from types import SimpleNamespace

import pytest

from fastsched.api import Pod
from fastsched.api.objects import PodSchedulingGroup
from fastsched.api.resource import parse_resource_claim
from fastsched.api.scheduling import PodGroupResourceClaim
from fastsched.plugins.dynamicresources.resourceclaim import (ClaimLookupError, bind_to, claim_name,
                                                              claim_name_from_pod_group, is_for_pod, is_for_pod_group,
                                                              is_reserved_for_pod)

NS = "kube-system"


def _pod(name, uid, namespace=NS, group=None, claims=(), statuses=None):
    manifest = {"metadata": {"name": name, "namespace": namespace, "uid": uid},
                "spec": {"containers": [{"name": "c", "image": "x"}], "resourceClaims": list(claims)}}
    if statuses is not None:
        manifest["status"] = {"resourceClaimStatuses": statuses}
    p = Pod.from_manifest(manifest, validate=False)
    return p.replace(scheduling_group=PodSchedulingGroup(group)) if group is not None else p


def _group(name, uid="", namespace=NS, claims=(), statuses=()):
    return SimpleNamespace(name=name, namespace=namespace, uid=uid, resource_claims=tuple(claims),
                           resource_claim_statuses=tuple(statuses))


def _claim(name, uid, namespace=NS, owner=None, reserved=()):
    meta = {"name": name, "namespace": namespace, "uid": uid}
    if owner is not None:
        meta["ownerReferences"] = [{"controller": True, **owner}]
    return parse_resource_claim({"metadata": meta, "spec": {"devices": {}},
                                 **({"status": {"reservedFor": list(reserved)}} if reserved else {})})


# -- TestResourceClaimIsFor -------------------------------------------------------------------------
POD_NOT_OWNER = _pod("podNotOwner", "1")
GROUP_NOT_OWNER = _group("podGroupNotOwner", "2")
POD_OWNER = _pod("podOwner", "3")
GROUP_OWNER = _group("podGroupOwner", "4")
CLAIM_NO_OWNER = _claim("claimNoOwner", "5")
CLAIM_WITH_OWNER = _claim("claimWithOwner", "6", owner={"uid": "3"})
CLAIM_WITH_GROUP_OWNER = _claim("claimWithPodGroupOwner", "7", owner={
    "apiVersion": "scheduling.k8s.io/v1beta1", "kind": "PodGroup", "name": "podGroupOwner", "uid": "4"})
CLAIM_WITH_OTHER_VERSION_GROUP_OWNER = _claim("claimWithPodGroupOwner", "8", owner={
    "apiVersion": "scheduling.k8s.io/v25", "kind": "PodGroup", "name": "podGroupOwner", "uid": "4"})
USER_CLAIM_WITH_OWNER = _claim("userClaimWithOwner", "9", namespace="user-namespace", owner={"uid": "3"})
USER_CLAIM_WITH_GROUP_OWNER = _claim("userClaimWithPodGroupOwner", "10", namespace="user-namespace",
                                     owner={"uid": "4"})


def _in_group(pod, group):
    return pod.replace(scheduling_group=PodSchedulingGroup(group))


@pytest.mark.parametrize("name,pod,claim,accept,want", [
    ("owned", POD_OWNER, CLAIM_WITH_OWNER, False, None),
    ("other-pod", POD_NOT_OWNER, CLAIM_WITH_OWNER, False,
     "ResourceClaim kube-system/claimWithOwner was not created for Pod kube-system/podNotOwner (Pod is not owner)"),
    ("no-owner", POD_OWNER, CLAIM_NO_OWNER, False,
     "ResourceClaim kube-system/claimNoOwner was not created for Pod kube-system/podOwner (Pod is not owner)"),
    ("accept-podgroup-without-podgroup", POD_OWNER, CLAIM_NO_OWNER, True,
     "ResourceClaim kube-system/claimNoOwner was not created for Pod kube-system/podOwner (Pod is not owner)"),
    ("different-namespace", POD_OWNER, USER_CLAIM_WITH_OWNER, False,
     "ResourceClaim user-namespace/userClaimWithOwner is not in the same namespace as Pod kube-system/podOwner"),
    ("owned-by-podgroup", _in_group(POD_OWNER, "podGroupOwner"), CLAIM_WITH_GROUP_OWNER, True, None),
    ("owned-by-podgroup-other-api-version", _in_group(POD_OWNER, "podGroupOwner"),
     CLAIM_WITH_OTHER_VERSION_GROUP_OWNER, True, None),
    ("other-podgroup", _in_group(POD_OWNER, "podGroupNotOwner"), CLAIM_WITH_GROUP_OWNER, True,
     "ResourceClaim kube-system/claimWithPodGroupOwner was not created for Pod kube-system/podOwner (neither Pod "
     "nor PodGroup podGroupNotOwner is the owner)"),
    ("no-podgroup-owner", _in_group(POD_OWNER, "podGroupOwner"), CLAIM_NO_OWNER, True,
     "ResourceClaim kube-system/claimNoOwner was not created for Pod kube-system/podOwner (neither Pod nor PodGroup "
     "podGroupOwner is the owner)"),
    ("different-podgroup-namespace", _in_group(POD_OWNER, "podGroupOwner"), USER_CLAIM_WITH_GROUP_OWNER, True,
     "ResourceClaim user-namespace/userClaimWithPodGroupOwner is not in the same namespace as Pod "
     "kube-system/podOwner"),
])
def test_is_for_pod(name, pod, claim, accept, want):
    assert is_for_pod(pod, claim, accept) == want


@pytest.mark.parametrize("name,group,claim,want", [
    ("owned", GROUP_OWNER, CLAIM_WITH_GROUP_OWNER, None),
    ("other-pod", GROUP_NOT_OWNER, CLAIM_WITH_GROUP_OWNER,
     "ResourceClaim kube-system/claimWithPodGroupOwner was not created for PodGroup kube-system/podGroupNotOwner "
     "(PodGroup is not owner)"),
    ("no-owner", GROUP_OWNER, CLAIM_NO_OWNER,
     "ResourceClaim kube-system/claimNoOwner was not created for PodGroup kube-system/podGroupOwner (PodGroup is "
     "not owner)"),
    ("different-namespace", GROUP_OWNER, USER_CLAIM_WITH_GROUP_OWNER,
     "ResourceClaim user-namespace/userClaimWithPodGroupOwner is not in the same namespace as PodGroup "
     "kube-system/podGroupOwner"),
])
def test_is_for_pod_group(name, group, claim, want):
    assert is_for_pod_group(group, claim) == want


# -- TestIsReservedForPod ---------------------------------------------------------------------------
POD_NOT_RESERVED, POD_RESERVED = _pod("podNotReserved", "r1"), _pod("podReserved", "r3")
GROUP_RESERVED = {"apiGroup": "scheduling.k8s.io", "resource": "podgroups", "name": "podGroupReserved", "uid": "r4"}
GROUP_OTHER_RESERVED = {"apiGroup": "scheduling.k8s.io", "resource": "podgroups", "name": "podGroupOtherReserved",
                        "uid": "r6"}
NO_RESERVATION = _claim("claimNoReservation", "r7")
WITH_RESERVATION = _claim("claimWithReservation", "r8", reserved=[{"uid": "r3"}])
WITH_GROUP_RESERVATION = _claim("claimWithPodGroupReservation", "r9", reserved=[GROUP_RESERVED])
WITH_MULTIPLE = _claim("claimWithMultipleReservations", "r10", reserved=[{"uid": "r3"}, {"uid": "r5"}])
WITH_MULTIPLE_GROUPS = _claim("claimWithMultiplePodGroupReservations", "r11",
                              reserved=[GROUP_RESERVED, GROUP_OTHER_RESERVED])
WITH_POD_AND_GROUP = _claim("claimWithReservationsForPodAndPodGroup", "r12", reserved=[{"uid": "r3"}, {"uid": "r4"}])


@pytest.mark.parametrize("name,pod,claim,accept,want", [
    ("not-reserved", POD_NOT_RESERVED, NO_RESERVATION, False, False),
    ("reserved-for-pod", POD_RESERVED, WITH_RESERVATION, False, True),
    ("reserved-for-other-pod", POD_NOT_RESERVED, WITH_RESERVATION, False, False),
    ("multiple-reservations-including-pod", POD_RESERVED, WITH_MULTIPLE, False, True),
    ("multiple-reservations-excluding-pod", POD_NOT_RESERVED, WITH_MULTIPLE, False, False),
    ("reserved-for-podgroup", _in_group(POD_NOT_RESERVED, "podGroupReserved"), WITH_GROUP_RESERVATION, True, True),
    ("podgroup-disabled", _in_group(POD_NOT_RESERVED, "podGroupReserved"), WITH_GROUP_RESERVATION, False, False),
    ("reserved-for-pod-and-podgroup", _in_group(POD_RESERVED, "podGroupReserved"), WITH_POD_AND_GROUP, True, True),
    ("reserved-for-other-podgroup", _in_group(POD_NOT_RESERVED, "podGroupNotReserved"), WITH_RESERVATION, True,
     False),
    ("multiple-reservations-including-podgroup", _in_group(POD_NOT_RESERVED, "podGroupReserved"),
     WITH_MULTIPLE_GROUPS, True, True),
    ("multiple-reservations-excluding-podgroup", _in_group(POD_NOT_RESERVED, "podGroupNotReserved"),
     WITH_MULTIPLE_GROUPS, True, False),
])
def test_is_reserved_for_pod(name, pod, claim, accept, want):
    assert is_reserved_for_pod(pod, claim, accept) is want


# -- TestName / TestNameFromPodGroup ----------------------------------------------------------------
@pytest.mark.parametrize("name,entry,statuses,want", [
    ("resource-claim-name-set", {"name": "claim", "resourceClaimName": "existing-claim"}, None,
     ("existing-claim", False)),
    ("resource-claim-template-name-set-and-status-found",
     {"name": "template-claim", "resourceClaimTemplateName": "template-claim-template"},
     [{"name": "template-claim", "resourceClaimName": "created-claim"}], ("created-claim", True)),
    ("resource-claim-template-name-set-but-status-not-found",
     {"name": "template-claim", "resourceClaimTemplateName": "template-claim-template"},
     [{"name": "other-claim", "resourceClaimName": "other-created-claim"}],
     'pod "default/test-pod": ResourceClaim not created yet'),
    ("neither-resource-claim-name-nor-template-name-set", {"name": "invalid-claim"}, None,
     'pod "default/test-pod", spec.resourceClaim "invalid-claim": none of the supported fields are set'),
])
def test_name(name, entry, statuses, want):
    pod = _pod("test-pod", "p", namespace="default", claims=[entry], statuses=statuses)
    if isinstance(want, str):
        with pytest.raises(ClaimLookupError) as e:
            claim_name(pod, pod.resource_claims[0])
        assert str(e.value) == want
    else:
        assert claim_name(pod, pod.resource_claims[0]) == want


@pytest.mark.parametrize("name,entry,statuses,want", [
    ("resource-claim-name-set", PodGroupResourceClaim("", resource_claim_name="existing-claim"), (),
     ("existing-claim", False)),
    ("resource-claim-template-name-set-and-status-found",
     PodGroupResourceClaim("template-claim", resource_claim_template_name="template-claim-template"),
     ({"name": "template-claim", "resourceClaimName": "created-claim"},), ("created-claim", True)),
    ("resource-claim-template-name-set-but-status-not-found",
     PodGroupResourceClaim("template-claim", resource_claim_template_name="template-claim-template"),
     ({"name": "other-claim", "resourceClaimName": "other-created-claim"},),
     "PodGroup default/test-podgroup: ResourceClaim not created yet"),
    ("neither-resource-claim-name-nor-template-name-set", PodGroupResourceClaim("invalid-claim"), (),
     "PodGroup default/test-podgroup, spec.resourceClaim invalid-claim: none of the supported fields are set"),
])
def test_name_from_pod_group(name, entry, statuses, want):
    group = _group("test-podgroup", namespace="default", statuses=statuses)
    if isinstance(want, str):
        with pytest.raises(ClaimLookupError) as e:
            claim_name_from_pod_group(group, entry)
        assert str(e.value) == want
    else:
        assert claim_name_from_pod_group(group, entry) == want


# -- TestBindTo -------------------------------------------------------------------------------------
BIND_POD = _pod("my-pod", "pod-uid", namespace="my-namespace", group="my-podgroup")
POD_RESERVATION = {"resource": "pods", "name": "my-pod", "uid": "pod-uid"}
GROUP_RESERVATION = {"apiGroup": "scheduling.k8s.io", "resource": "podgroups", "name": "my-podgroup",
                     "uid": "podgroup-uid"}
BY_NAME = {"name": "my-claim", "resourceClaimName": "my-resource-claim"}
BY_TEMPLATE = {"name": "my-claim", "resourceClaimTemplateName": "my-resource-claim"}


def _bind_group(*claims):
    return _group("my-podgroup", "podgroup-uid", namespace="my-namespace", claims=claims)


def _pgc(name, claim=None, template=None):
    return PodGroupResourceClaim(name, resource_claim_name=claim, resource_claim_template_name=template)


@pytest.mark.parametrize("name,group,entry,want", [
    ("unsupported API in Pod", None, {"name": "my-claim"},
     "Pod my-namespace/my-pod claim my-claim: none of the supported fields are set"),
    ("Pod claim with ResourceClaimName", None, BY_NAME, POD_RESERVATION),
    ("Pod claim with ResourceClaimTemplateName", None, BY_TEMPLATE, POD_RESERVATION),
    ("Pod claim with ResourceClaimName matching PodGroup", _bind_group(_pgc("my-claim", "my-resource-claim")),
     BY_NAME, GROUP_RESERVATION),
    ("Pod claim with ResourceClaimTemplateName matching PodGroup",
     _bind_group(_pgc("my-claim", template="my-resource-claim")), BY_TEMPLATE, GROUP_RESERVATION),
    ("Wrong PodGroup namespace for Pod", _group("my-podgroup", namespace="not-my-namespace"), BY_NAME,
     "Pod my-namespace/my-pod belongs to PodGroup my-namespace/my-podgroup, not PodGroup "
     "not-my-namespace/my-podgroup"),
    ("Wrong PodGroup name for Pod", _group("not-my-podgroup", namespace="my-namespace"), BY_NAME,
     "Pod my-namespace/my-pod belongs to PodGroup my-namespace/my-podgroup, not PodGroup "
     "my-namespace/not-my-podgroup"),
    ("No matching claim in PodGroup", _bind_group(_pgc("not-my-claim", "my-resource-claim"),
                                                  _pgc("nor-my-claim", "my-resource-claim")), BY_NAME,
     POD_RESERVATION),
    ("Find matching claim in PodGroup", _bind_group(_pgc("not-my-claim", "my-resource-claim"),
                                                    _pgc("nor-my-claim", "my-resource-claim"),
                                                    _pgc("my-claim", "my-resource-claim")), BY_NAME,
     GROUP_RESERVATION),
    ("Claim name mismatch", _bind_group(_pgc("not-my-claim", "my-resource-claim")), BY_NAME, POD_RESERVATION),
    ("Claim resourceClaimName mismatch", _bind_group(_pgc("my-claim", "not-my-resource-claim")), BY_NAME,
     POD_RESERVATION),
    ("Claim resourceClaimTemplateName mismatch", _bind_group(_pgc("my-claim", template="not-my-resource-claim")),
     BY_TEMPLATE, POD_RESERVATION),
])
def test_bind_to(name, group, entry, want):
    if isinstance(want, str):
        with pytest.raises(ValueError) as e:
            bind_to(BIND_POD, group, entry)
        assert str(e.value) == want
    else:
        assert bind_to(BIND_POD, group, entry) == want


def test_a_pod_outside_any_group_cannot_bind_to_one():
    """``podMatchesPodGroup``'s first error (no row upstream reaches it)."""
    with pytest.raises(ValueError) as e:
        bind_to(_pod("my-pod", "pod-uid", namespace="my-namespace"), _bind_group(), BY_NAME)
    assert str(e.value) == "Pod my-namespace/my-pod does not belong to a PodGroup"
