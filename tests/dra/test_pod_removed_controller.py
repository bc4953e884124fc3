"""The resourceclaim controller's handling of a deleted pod (v1.37.2 ``pkg/controller/resourceclaim/
controller.go``: ``enqueuePod`` with ``deleted``, ``syncClaim``) and the garbage collector's for the
claims the pod owns, in :func:`fastsched.dra.controller.pod_removed`, over an ObjectStore. The cases
transcribe ``TestSyncHandler``'s claim rows (``clear-reserved-structured``: with the finalizer;
``clear-reserved-when-done``: without it; ``dont-clear-reserved-structured``; ``remove-pod-
reservation-with-non-pod-reservation-present``), for a pod that is gone rather than done."""
from __future__ import annotations

from fastsched.api import Pod
from fastsched.api.resource import FINALIZER, claim_with_status, parse_resource_claim
from fastsched.dra import controller
from fastsched.framework.objects import ObjectStore

POD_UID = "uid-p"
MINE = {"resource": "pods", "name": "p", "uid": POD_UID}
OTHER_POD = {"resource": "pods", "name": "other", "uid": "uid-other"}
#: a consumer of another kind whose uid is the pod's: not the pod's entry
NON_POD = {"apiGroup": "foo.com", "resource": "foo", "name": "foo", "uid": POD_UID}
#: the same, in the core group; and "pods" of another group
CORE_NON_POD = {"resource": "foo", "name": "foo", "uid": POD_UID}
GROUP_PODS = {"apiGroup": "foo.com", "resource": "pods", "name": "p", "uid": POD_UID}
ALLOCATION = {"devices": {"results": [{"request": "gpu", "driver": "gpu.example.com", "pool": "n1",
                                       "device": "gpu-0"}]}}


def claim(name: str, reserved: list, *, finalizer: bool = True, owners: list | None = None) -> object:
    meta: dict = {"name": name, "namespace": "default"}
    if finalizer:
        meta["finalizers"] = [FINALIZER]
    if owners:
        meta["ownerReferences"] = owners
    return claim_with_status(parse_resource_claim({"metadata": meta, "spec": {"devices": {"requests": []}}}),
                             allocation=ALLOCATION, reserved_for=reserved)


def pod(*names: str) -> Pod:
    return Pod.from_manifest({"metadata": {"name": "p", "namespace": "default", "uid": POD_UID},
                              "spec": {"containers": [{"name": "c", "image": "x"}],
                                       "resourceClaims": [{"name": n, "resourceClaimName": n} for n in names]}},
                             validate=False)


def _removed(*claims: object, names: tuple[str, ...] | None = None, extra: tuple = ()) -> dict:
    store = ObjectStore([*claims, *extra])
    controller.pod_removed(store, pod(*(names if names is not None else [c.name for c in claims])))
    return {c.name: c for c in store.list_objects("ResourceClaim", "default")}


def test_last_consumer_gone_deallocates_and_drops_the_finalizer():
    """clear-reserved-structured: the claim is left unallocated, unreserved, without finalizer."""
    got = _removed(claim("c", [MINE]))["c"]
    assert got.allocation is None and not got.reserved_for and FINALIZER not in got.finalizers


def test_without_the_finalizer_the_allocation_stays():
    """clear-reserved-when-done: a claim without the controller's finalizer keeps its allocation
    (syncClaim's sanity check); only the reservation goes."""
    got = _removed(claim("c", [MINE], finalizer=False))["c"]
    assert got.allocation is not None and not got.reserved_for


def test_other_consumers_keep_the_claim_allocated():
    """dont-clear-reserved-structured: another pod still uses it."""
    got = _removed(claim("c", [MINE, OTHER_POD]))["c"]
    assert got.allocation is not None and list(got.reserved_for) == [OTHER_POD]
    assert FINALIZER in got.finalizers


def test_a_non_pod_consumer_is_kept():
    """remove-pod-reservation-with-non-pod-reservation-present: the pod's entry goes, the other
    kind's stays (even with the same uid), so the claim stays allocated."""
    got = _removed(claim("c", [MINE, NON_POD]), claim("core", [MINE, CORE_NON_POD]),
                   claim("group", [MINE, GROUP_PODS]))
    assert got["group"].allocation is not None and list(got["group"].reserved_for) == [GROUP_PODS]
    assert got["c"].allocation is not None and list(got["c"].reserved_for) == [NON_POD]
    assert got["core"].allocation is not None and list(got["core"].reserved_for) == [CORE_NON_POD]


def test_only_the_named_claims_reserved_for_the_pod_change():
    got = _removed(claim("named", [OTHER_POD]), claim("not-named", [MINE]), names=("named",))
    assert list(got["named"].reserved_for) == [OTHER_POD]
    assert list(got["not-named"].reserved_for) == [MINE] and got["not-named"].allocation is not None


def test_a_claim_the_pod_owns_is_deleted():
    """The garbage collector: a claim whose only owner is the pod (generated from its template)
    goes with it; one with another owner that exists too is only released; one whose other owner
    does not exist (``isDangling``: nothing of that kind and name, or another uid) goes too. One
    whose other owner is of a kind fastsched does not model (a ConfigMap: skipped when loading,
    so it may exist) stays, released."""
    ref = {"apiVersion": "v1", "kind": "Pod", "name": "p", "uid": POD_UID, "controller": True,
           "blockOwnerDeletion": True}
    other = {"apiVersion": "v1", "kind": "Pod", "name": "other", "uid": "uid-other"}
    missing = {"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "rs", "uid": "uid-rs"}
    renewed = {"apiVersion": "v1", "kind": "Pod", "name": "other", "uid": "uid-before"}
    unmodelled = {"apiVersion": "v1", "kind": "ConfigMap", "name": "cm", "uid": "uid-cm"}
    got = _removed(claim("generated", [MINE], owners=[ref]), claim("co-owned", [MINE], owners=[ref, other]),
                   claim("dangling", [MINE], owners=[ref, missing]), claim("renewed", [MINE], owners=[ref, renewed]),
                   claim("unmodelled", [MINE], owners=[ref, unmodelled]), extra=(_other_pod(),))
    assert "generated" not in got and "dangling" not in got and "renewed" not in got
    assert got["co-owned"].allocation is None and not got["co-owned"].reserved_for
    assert got["unmodelled"].allocation is None and not got["unmodelled"].reserved_for


_MY_REF = {"apiVersion": "v1", "kind": "Pod", "name": "p", "uid": POD_UID, "controller": True,
           "blockOwnerDeletion": True}


def _other_pod(*names: str) -> Pod:
    return Pod.from_manifest({"metadata": {"name": "other", "namespace": "default", "uid": "uid-other"},
                              "spec": {"containers": [{"name": "c", "image": "x"}],
                                       "resourceClaims": [{"name": n, "resourceClaimName": n} for n in names]}},
                             validate=False)


def test_a_generated_claim_another_pod_reserves_stays_allocated_until_it_goes():
    """The pod that owns a generated claim goes while another pod (naming the claim) still
    reserves it: syncClaim drops only the pod's entry (one consumer remains: no deallocation, the
    finalizer stays), the garbage collector deletes the claim, whose finalizer leaves it
    terminating (deletionTimestamp) and allocated; when the other pod goes, syncClaim deallocates
    it and drops the finalizer, and the API server removes it."""
    store = ObjectStore([claim("generated", [MINE, OTHER_POD], owners=[_MY_REF])])
    controller.pod_removed(store, pod("generated"))
    got = store.get_object("ResourceClaim", "generated")
    assert got is not None and got.deletion_timestamp is not None
    assert got.allocation is not None and list(got.reserved_for) == [OTHER_POD] and FINALIZER in got.finalizers
    controller.pod_removed(store, _other_pod("generated"))
    assert store.get_object("ResourceClaim", "generated") is None


def test_a_generated_claim_without_consumers_or_finalizer_goes_at_once():
    """Deleted by the garbage collector with nothing holding it: removed, reserved or not."""
    got = _removed(claim("a", [MINE], owners=[_MY_REF]), claim("b", [], finalizer=False, owners=[_MY_REF]))
    assert got == {}


def test_a_terminating_claim_another_finalizer_holds_stays_deallocated():
    """Another controller's finalizer keeps the deleted claim (terminating), deallocated and
    without the resourceclaim controller's finalizer."""
    c = claim("a", [MINE], owners=[_MY_REF])
    c = claim_with_status(c, finalizers=[FINALIZER, "example.com/keep"])
    store = ObjectStore([c])
    controller.pod_removed(store, pod("a"))
    got = store.get_object("ResourceClaim", "a")
    assert got is not None and got.deletion_timestamp is not None and got.allocation is None
    assert list(got.finalizers) == ["example.com/keep"]
