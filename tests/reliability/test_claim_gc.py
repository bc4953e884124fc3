"""A generated ResourceClaim whose owning pod is deleted while another pod (naming the claim)
still reserves it: upstream's resourceclaim controller (``syncClaim``) drops only the deleted
pod's reservation, and the garbage collector deletes the claim -- which its delete-protection
finalizer leaves terminating and allocated until the other pod goes too. Its device stays taken
until then; a new pod naming the claim is refused (``is being deleted``)."""
from __future__ import annotations

from fastsched import Scheduler
from fastsched.sim.gpu import GPUNodePool, gpu_claim, gpu_claim_template, gpu_cluster, gpu_pods


def _status(s: Scheduler, name: str) -> str:
    return s.results[s.get_pod("default", name).uid].status


def _scheduler() -> tuple[Scheduler, str]:
    s = Scheduler(seed=0)
    s.add(gpu_cluster([GPUNodePool(1, model="a100", gpus=1, cpu="100", pods=100)]))
    s.add(gpu_claim_template("one-gpu"))
    s.add(gpu_pods("owner", 1, template="one-gpu", cpu="100m", memory="1Mi"))
    s.run()
    assert _status(s, "owner-0") == "Scheduled"
    (claim,) = s.objects("ResourceClaim")
    name = claim["metadata"]["name"]
    s.add(gpu_pods("sharer", 1, claim=name, cpu="100m", memory="1Mi"))
    s.run()
    assert _status(s, "sharer-0") == "Scheduled"
    assert len(s.get_object("ResourceClaim", name).reserved_for) == 2
    return s, name


def test_the_claim_of_a_deleted_owner_stays_allocated_while_another_pod_reserves_it():
    s, name = _scheduler()
    s.delete_pod(s.get_pod("default", "owner-0"))
    claim = s.get_object("ResourceClaim", name)
    assert claim is not None and claim.deletion_timestamp is not None and claim.allocation is not None
    assert [r["name"] for r in claim.reserved_for] == ["sharer-0"]
    # the one GPU is still allocated: a pod with a claim of its own waits
    s.add(gpu_pods("waiting", 1, template="one-gpu", cpu="100m", memory="1Mi"))
    s.run()
    assert _status(s, "waiting-0") == "Unschedulable"
    # a new pod naming the terminating claim is refused
    s.add(gpu_pods("late", 1, claim=name, cpu="100m", memory="1Mi"))
    late = s.explain(s.get_pod("default", "late-0"))
    assert f'resourceclaim "{name}" is being deleted' in str(late.prefilter_status or late)
    # the last consumer gone, the claim is deallocated and removed; the waiting pod gets the GPU
    s.delete_pod(s.get_pod("default", "sharer-0"))
    assert s.get_object("ResourceClaim", name) is None
    s.run()
    assert _status(s, "waiting-0") == "Scheduled"


def test_explain_of_a_pod_waiting_for_a_device_forks_the_allocator_state():
    """explain's preemption part forks the Scheduler with the pod's cycle state, whose allocator
    holds live views (``dict.keys()``) of the allocated devices: the fork copies them as views of
    the copied mapping (it raised ``TypeError: object.__new__(dict_keys) is not safe``)."""
    s = Scheduler(seed=0)
    s.add(gpu_cluster([GPUNodePool(1, model="a100", gpus=1, cpu="100", pods=100)]))
    s.add(gpu_claim_template("one-gpu"))
    s.add(gpu_pods("first", 1, template="one-gpu", cpu="100m", memory="1Mi"))
    s.add(gpu_pods("second", 1, template="one-gpu", cpu="100m", memory="1Mi"))
    s.run()
    assert _status(s, "second-0") == "Unschedulable"
    e = s.explain(s.get_pod("default", "second-0"))
    assert e.feasible == [] and e.admission_error == ""
    assert _status(s, "first-0") == "Scheduled"


def _co_owned(owners: list[tuple[str, str, str]]) -> tuple[Scheduler, str]:
    """Two running pods, ``a-0`` and ``b-0`` (uids ``uid-a``, ``uid-b``), sharing a claim owned by
    ``owners`` ((kind, name, uid) each)."""
    s = Scheduler(seed=0)
    s.add(gpu_cluster([GPUNodePool(1, model="a100", gpus=1, cpu="100", pods=100)]))
    claim = gpu_claim("shared")
    claim["metadata"]["ownerReferences"] = [{"apiVersion": "apps/v1" if kind == "ReplicaSet" else "v1",
                                             "kind": kind, "name": name, "uid": uid} for kind, name, uid in owners]
    s.add(claim)
    for prefix in ("a", "b"):
        (pod,) = gpu_pods(prefix, 1, claim="shared", cpu="100m", memory="1Mi")
        pod["metadata"]["uid"] = f"uid-{prefix}"
        s.add(pod)
    s.run()
    assert _status(s, "a-0") == "Scheduled" and _status(s, "b-0") == "Scheduled"
    return s, "shared"


def test_a_claim_co_owned_by_two_pods_goes_with_the_second():
    """Upstream's garbage collector looks each owner up (``classifyReferences``): an owner
    reference to an object that does not exist is dangling, so the claim goes when the last
    existing owner does -- not only when every reference names the pod just deleted."""
    s, name = _co_owned([("Pod", "a-0", "uid-a"), ("Pod", "b-0", "uid-b")])
    s.delete_pod(s.get_pod("default", "a-0"))
    claim = s.get_object("ResourceClaim", name)  # b-0 still owns (and reserves) it
    assert claim is not None and claim.deletion_timestamp is None and claim.allocation is not None
    assert [r["name"] for r in claim.reserved_for] == ["b-0"]
    s.delete_pod(s.get_pod("default", "b-0"))
    assert s.get_object("ResourceClaim", name) is None
    # its device is free again
    s.add(gpu_claim_template("one-gpu"))
    s.add(gpu_pods("next", 1, template="one-gpu", cpu="100m", memory="1Mi"))
    s.run()
    assert _status(s, "next-0") == "Scheduled"


def test_a_claim_co_owned_by_an_object_that_does_not_exist_goes_with_the_pod():
    s, name = _co_owned([("Pod", "a-0", "uid-a"), ("ReplicaSet", "gone", "uid-gone")])
    s.delete_pod(s.get_pod("default", "b-0"))  # (not an owner: only its reservation goes)
    assert s.get_object("ResourceClaim", name) is not None
    s.delete_pod(s.get_pod("default", "a-0"))
    assert s.get_object("ResourceClaim", name) is None


def test_an_owner_reference_with_another_uid_is_dangling():
    """The GC looks an owner up by name and compares uids: ``b-0`` exists, but not as the object
    the reference names, so deleting ``a-0`` deletes the claim -- terminating while ``b-0``
    still reserves it."""
    s, name = _co_owned([("Pod", "a-0", "uid-a"), ("Pod", "b-0", "uid-other")])
    s.delete_pod(s.get_pod("default", "a-0"))
    claim = s.get_object("ResourceClaim", name)
    assert claim is not None and claim.deletion_timestamp is not None and claim.allocation is not None
    s.delete_pod(s.get_pod("default", "b-0"))
    assert s.get_object("ResourceClaim", name) is None


def _plain_pod(name: str, uid: str) -> dict:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "default", "uid": uid},
            "spec": {"containers": [{"name": "c", "image": "busybox",
                                     "resources": {"requests": {"cpu": "100m"}}}]}}


def test_a_claim_a_pod_owns_without_naming_it_goes_with_the_pod():
    """The garbage collector deletes the dependents of a deleted owner whether or not the owner
    uses them: a claim owned (not controlled) by a pod that does not name it in
    ``spec.resourceClaims`` goes with that pod -- terminating while ``a-0`` still reserves it."""
    s, name = _co_owned([("Pod", "x-0", "uid-x")])
    s.add(_plain_pod("x-0", "uid-x"))
    s.run()
    s.delete_pod(s.get_pod("default", "x-0"))
    claim = s.get_object("ResourceClaim", name)
    assert claim is not None and claim.deletion_timestamp is not None and claim.allocation is not None
    s.delete_pod(s.get_pod("default", "a-0"))
    s.delete_pod(s.get_pod("default", "b-0"))
    assert s.get_object("ResourceClaim", name) is None


def test_an_unreserved_claim_a_pod_owns_without_naming_it_goes_at_once():
    s = Scheduler(seed=0)
    s.add(gpu_cluster([GPUNodePool(1, model="a100", gpus=1, cpu="100", pods=100)]))
    claim = gpu_claim("spare")
    claim["metadata"]["ownerReferences"] = [{"apiVersion": "v1", "kind": "Pod", "name": "x-0", "uid": "uid-x"}]
    s.add(claim)
    s.add(_plain_pod("x-0", "uid-x"))
    s.run()
    s.delete_pod(s.get_pod("default", "x-0"))
    assert s.get_object("ResourceClaim", "spare") is None


def test_an_owner_of_a_kind_fastsched_does_not_model_keeps_the_claim():
    """The garbage collector resolves an owner's kind through the API's discovery and looks the
    owner up (``isDangling``): a kind the API server does not serve is an error (the claim is
    retried, not deleted) and one it serves may well exist -- fastsched skips objects of such
    kinds when loading, so it cannot call the owner gone: the claim stays."""
    s, name = _co_owned([("Pod", "a-0", "uid-a"), ("MPIJob", "train", "uid-mpi")])
    s.delete_pod(s.get_pod("default", "a-0"))
    s.delete_pod(s.get_pod("default", "b-0"))
    claim = s.get_object("ResourceClaim", name)
    assert claim is not None and claim.deletion_timestamp is None
    assert not claim.reserved_for and claim.allocation is None  # (released by both pods)
