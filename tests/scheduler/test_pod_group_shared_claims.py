"""End to end: members of a PodGroup sharing a ResourceClaim (v1.37.2, GenericWorkload), through
``Scheduler.run``.

In the group's cycle the members after the first reuse the allocation the first one's Reserve put
in flight (``podGroupStateData.pendingAllocations``), so the group is feasible; then the binding
cycles race upstream (goroutines GangScheduling's Permit releases together), and every member's
PreBind but the first writer's fails: its claim object is PreFilter's, the API server answers a
resourceVersion Conflict, the re-read claim is allocated: ``claim ... got allocated elsewhere in
the meantime`` (kubernetes/kubernetes#140053). fastsched runs the member whose Permit completes the
quorum first, then the waiting ones in order.
"""
from __future__ import annotations

from fastsched import Scheduler
from fastsched.testing import make_node

DRIVER = "gpu.example.com"


def _objects(gpus: int, members: int, min_count: int, own: bool) -> list[dict]:
    res = "resource.k8s.io/v1"
    out: list[dict] = [
        {"apiVersion": res, "kind": "DeviceClass", "metadata": {"name": "gpu"},
         "spec": {"selectors": [{"cel": {"expression": f'device.driver == "{DRIVER}"'}}]}},
        {"apiVersion": res, "kind": "ResourceSlice", "metadata": {"name": "n0-gpus"},
         "spec": {"driver": DRIVER, "nodeName": "n0", "pool": {"name": "n0", "generation": 1, "resourceSliceCount": 1},
                  "devices": [{"name": f"gpu-{i}"} for i in range(gpus)]}},
        {"apiVersion": "scheduling.k8s.io/v1beta1", "kind": "PodGroup", "metadata": {"name": "pg"},
         "spec": {"schedulingPolicy": {"gang": {"minCount": min_count}}}},
    ]
    names = ["shared", *([f"own-{i}" for i in range(members)] if own else [])]
    for name in names:
        out.append({"apiVersion": res, "kind": "ResourceClaim", "metadata": {"name": name, "namespace": "default"},
                    "spec": {"devices": {"requests": [{"name": "g", "exactly": {"deviceClassName": "gpu"}}]}}})
    for i in range(members):
        claims = [{"name": "shared", "resourceClaimName": "shared"}]
        if own:
            claims.append({"name": "own", "resourceClaimName": f"own-{i}"})
        out.append({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": f"m{i}"},
                    "spec": {"schedulingGroup": {"podGroupName": "pg"}, "resourceClaims": claims,
                             "containers": [{"name": "c", "image": "i",
                                             "resources": {"claims": [{"name": c["name"]} for c in claims]}}]}})
    return out


def _run(objects):
    s = Scheduler(feature_gates="GenericWorkload=true", record="all")
    s.add_nodes([make_node("n0", cpu="8")])
    s.add(objects)
    list(s.run(until=s.clock.now() + 1))
    return s, {r.pod.name: r for r in s.results.values()}


def _claim(s, name):
    claim = s.cluster.get_object("ResourceClaim", name, "default")
    devices = [r["device"] for r in claim.allocation["devices"]["results"]] if claim.allocation else None
    return [r["name"] for r in claim.reserved_for], devices


PREBIND_FAILED = ('running PreBind plugin "DynamicResources": claim default/shared got allocated elsewhere in the '
                  'meantime')


def test_members_share_the_pending_allocation_and_the_second_prebind_fails():
    s, results = _run(_objects(gpus=1, members=2, min_count=2, own=False))
    # one GPU: the group is feasible only because m1 reuses m0's pending allocation; m1 completed
    # the quorum, so its binding ran first and wrote the claim; m0's PreBind failed, and its retry
    # (a cycle of its own, the claim allocated now) reserved the claim for it too
    assert [(h.outcome, h.message) for h in results["m1"].history] == [("Scheduled", "Successfully assigned "
                                                                                      "default/m1 to n0")]
    assert [(h.outcome, h.message) for h in results["m0"].history] == [
        ("Error", PREBIND_FAILED), ("Scheduled", "Successfully assigned default/m0 to n0")]
    assert _claim(s, "shared") == (["m1", "m0"], ["gpu-0"])


def test_shared_claim_first_swaps_the_allocations():
    """[shared, own]: the member binding first writes its shared claim with its own claim's fresh
    devices and its own claim with the shared claim's pending ones (Filter's fresh-then-pending
    list paired with the claims in order, as upstream's)."""
    s, results = _run(_objects(gpus=3, members=2, min_count=2, own=True))
    # m0's Reserve: shared gpu-0, own-0 gpu-1; m1's Filter: own-1 fresh gpu-2, then shared's gpu-0
    assert _claim(s, "shared") == (["m1", "m0"], ["gpu-2"])
    assert _claim(s, "own-1") == (["m1"], ["gpu-0"])
    assert results["m0"].history[0].message == PREBIND_FAILED
    assert _claim(s, "own-0") == (["m0"], ["gpu-1"])  # m0's retry


def test_without_a_group_the_second_pod_waits_for_the_allocation():
    """GenericWorkload off: the pods are scheduled one by one and the claim is shared the ordinary
    way (allocated by the first pod's binding, reserved for both)."""
    s = Scheduler()
    s.add_nodes([make_node("n0", cpu="8")])
    objects = [o for o in _objects(gpus=1, members=2, min_count=2, own=False) if o["kind"] != "PodGroup"]
    s.add(objects)
    results = {r.pod.name: r for r in s.run()}
    assert all(r.status == "Scheduled" for r in results.values())
    claim = s.cluster.get_object("ResourceClaim", "shared", "default")
    assert sorted(r["name"] for r in claim.reserved_for) == ["m0", "m1"]
