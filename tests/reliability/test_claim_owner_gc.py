"""The garbage collector's part for ResourceClaims, drawn by hypothesis: 50..60 running pods and
claims each owned by a few of them (as controller or not, naming them or not), some owner
references dangling from the start (another uid, a ReplicaSet that does not exist), some to a kind
fastsched does not model (an MPIJob: never dangling, see ``dra/controller.py`` ``_owner_absent``).
The pods are deleted one by one in a drawn order, part of them in a fork. After each deletion a
claim is there (not deleted: one deleted while a pod reserves it stays, terminating) exactly
when no deleted pod owned it or one of its owners is still there: upstream's
garbage collector revisits the dependents of a deleted owner and deletes those whose every owner
is dangling. The fork's deletions leave the original as it was, and no pod is lost (every pod but
the deleted ones stays bound)."""
from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fastsched import Scheduler
from fastsched.testing import make_node

#: an owner reference drawn: ("pod", index, controller) a running pod; ("renewed", index) its name
#: under another uid; ("rs",) a ReplicaSet that does not exist; ("mpi",) an unmodelled kind
OWNER = st.one_of(st.tuples(st.just("pod"), st.integers(0, 59), st.booleans()),
                  st.tuples(st.just("renewed"), st.integers(0, 59)), st.just(("rs",)), st.just(("mpi",)))


@st.composite
def cases(draw):
    n = draw(st.integers(50, 60))
    claims = draw(st.lists(st.lists(OWNER, min_size=1, max_size=3), min_size=1, max_size=20))
    order = draw(st.permutations(range(n)))
    deleted = draw(st.integers(0, n))
    fork_at = draw(st.integers(0, deleted))
    return n, claims, list(order[:deleted]), fork_at


def _refs(owners: list[tuple], n: int) -> list[dict]:
    refs: list[dict] = []
    uids: set[str] = set()
    controller = False
    for o in owners:
        if o[0] == "pod":
            i = o[1] % n
            ref = {"apiVersion": "v1", "kind": "Pod", "name": f"p-{i}", "uid": f"uid-{i}"}
            if o[2] and not controller:  # (at most one controller)
                ref["controller"] = controller = True
        elif o[0] == "renewed":
            ref = {"apiVersion": "v1", "kind": "Pod", "name": f"p-{o[1] % n}", "uid": f"uid-before-{o[1] % n}"}
        elif o[0] == "rs":
            ref = {"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "gone", "uid": "uid-rs"}
        else:
            ref = {"apiVersion": "kubeflow.org/v2beta1", "kind": "MPIJob", "name": "train", "uid": "uid-mpi"}
        if ref["uid"] not in uids:
            uids.add(ref["uid"])
            refs.append(ref)
    return refs


def _namers(k: int, n: int, n_claims: int) -> set[str]:
    """The uids of the pods that name claim ``c-<k>`` (see the test)."""
    return {f"uid-{i}" for i in range(0, n, 3) if i % n_claims == k}


def _expected(claims: list[list[dict]], gone: set[str], n: int) -> set[str]:
    """The claims left once the pods of uids ``gone`` were deleted. (The deletion of a pod that
    names a claim whose owners are all dangling from the start deletes it too: upstream's GC
    would have deleted it when it was created, which fastsched does not model.)"""
    def dangling(ref: dict) -> bool:
        if ref["kind"] == "MPIJob":
            return False
        return ref["kind"] == "ReplicaSet" or ref["uid"].startswith("uid-before") or ref["uid"] in gone
    return {f"c-{k}" for k, refs in enumerate(claims)
            if not ((any(r["uid"] in gone for r in refs) or _namers(k, n, len(claims)) & gone)
                    and all(dangling(r) for r in refs))}


def _claims(s: Scheduler) -> set[str]:
    """The claims not deleted (one the GC deleted while another pod reserves it stays, terminating)."""
    return {c["metadata"]["name"] for c in s.objects("ResourceClaim") if not c["metadata"].get("deletionTimestamp")}


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(cases())
def test_a_claim_goes_with_its_last_owner(case):
    n, owners, order, fork_at = case
    s = Scheduler(seed=0)
    for i in range(4):
        s.add(make_node(f"n{i}", cpu="100", memory="100Gi", pods=100))
    claims = [_refs(o, n) for o in owners]
    for k, refs in enumerate(claims):
        s.add({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
               "metadata": {"name": f"c-{k}", "namespace": "default", "ownerReferences": refs},
               "spec": {"devices": {"requests": []}}})
    for i in range(n):
        spec: dict = {"containers": [{"name": "c", "image": "x", "resources": {"requests": {"cpu": "100m"}}}]}
        if i % 3 == 0:  # some pods name one of the claims (the GC does not look at that)
            spec["resourceClaims"] = [{"name": "r", "resourceClaimName": f"c-{i % len(claims)}"}]
        s.add({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": f"p-{i}", "namespace": "default",
                                                                "uid": f"uid-{i}"}, "spec": spec})
    s.run()
    bound = {p.name for p in s.pods.values() if p.node_name}
    assert bound == {f"p-{i}" for i in range(n)}, "a pod was lost or left unbound"
    gone: set[str] = set()
    current, before_fork = s, None
    for step, i in enumerate(order):
        if step == fork_at:
            before_fork, current = (_claims(s), {p.name for p in s.pods.values()}), s.fork()
        current.delete_pod(current.get_pod("default", f"p-{i}"))
        gone.add(f"uid-{i}")
        assert _claims(current) == _expected(claims, gone, n), f"after deleting p-{i}"
    assert {p.name for p in current.pods.values()} == {f"p-{i}" for i in range(n)} - {f"p-{i}" for i in order}
    if before_fork is not None:
        assert (_claims(s), {p.name for p in s.pods.values()}) == before_fork


#: a cluster-scoped object of each modelled kind a claim's owner reference can name (fastsched.api
#: load's _CLUSTER_SCOPED_KINDS), with the uid the references below use
CLUSTER_SCOPED_OWNERS = [
    {"apiVersion": "node.k8s.io/v1", "kind": "RuntimeClass", "metadata": {"name": "kata", "uid": "uid-owner"},
     "handler": "kata"},
    {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": "high", "uid": "uid-owner"},
     "value": 1000},
    {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": "gpu", "uid": "uid-owner"},
     "spec": {}},
    {"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass", "metadata": {"name": "fast", "uid": "uid-owner"},
     "provisioner": "example.com/fast"},
]


def test_a_cluster_scoped_owner_is_found_by_its_name_alone():
    """An owner of a cluster-scoped kind is looked up without the claim's namespace (upstream's GC:
    ``isDangling`` gets it cluster-wide): one that exists keeps its claims when the pod co-owning
    them goes, one under another uid does not. A RuntimeClass was looked up under the claim's
    namespace (``Scheduler.get_object`` keyed it ``default/kata`` while the store holds ``kata``),
    so it was never found and its claims went with the pod; the differential oracle, once it looked
    every modelled kind up, differed on it (preenqueue scenarios 71023, 71029, 72250238 with a
    RuntimeClass co-owning ``late-gpus``)."""
    s = Scheduler(seed=0)
    s.add(make_node("n0", cpu="8", memory="8Gi"))
    s.add(CLUSTER_SCOPED_OWNERS)
    for owner in CLUSTER_SCOPED_OWNERS:
        kind, name = owner["kind"], owner["metadata"]["name"]
        assert s.get_object(kind, name) is not None, kind  # (the namespace argument is ignored)
        for uid in ("uid-owner", "uid-other"):
            s.add({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
                   "metadata": {"name": f"{kind.lower()}-{uid}", "namespace": "default", "ownerReferences": [
                       {"apiVersion": "v1", "kind": "Pod", "name": "p", "uid": "uid-p"},
                       {"apiVersion": owner["apiVersion"], "kind": kind, "name": name, "uid": uid}]},
                   "spec": {"devices": {"requests": []}}})
    s.add({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "default", "uid": "uid-p"},
           "spec": {"containers": [{"name": "c", "image": "x"}]}})
    s.run()
    s.delete_pod(s.get_pod("default", "p"))
    assert _claims(s) == {f"{o['kind'].lower()}-uid-owner" for o in CLUSTER_SCOPED_OWNERS}
