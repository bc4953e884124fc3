"""PodResults and explain of pods a PreEnqueue plugin holds (DynamicResources waiting for a claim,
SchedulingGates) follow the events that gate or release them: after each event, the result and
explain say what the queue does with the pod now, not what it did when the pod was added."""
from __future__ import annotations

from fastsched import Scheduler
from fastsched.testing import node_manifest

NOT_FOUND = 'rejected by PreEnqueue plugin "DynamicResources": could not find ResourceClaim "default/claim"'
GATES = "waiting for scheduling gates: [example.com/hold]"


def _cluster() -> Scheduler:
    s = Scheduler()
    s.add(node_manifest("n1"))
    s.add({"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": "gpu"}, "spec": {}})
    s.add({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": "s"},
           "spec": {"driver": "dra.example.com", "nodeName": "n1",
                    "pool": {"name": "p", "generation": 1, "resourceSliceCount": 1}, "devices": [{"name": "d0"}]}})
    return s


def _pod(gates: bool = False) -> dict:
    spec = {"containers": [{"name": "c", "image": "busybox", "resources": {"claims": [{"name": "gpu"}]}}],
            "resourceClaims": [{"name": "gpu", "resourceClaimName": "claim"}]}
    if gates:
        spec["schedulingGates"] = [{"name": "example.com/hold"}]
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "default"}, "spec": spec}


CLAIM = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
         "metadata": {"name": "claim", "namespace": "default"},
         "spec": {"devices": {"requests": [{"name": "r", "exactly": {"deviceClassName": "gpu"}}]}}}


def _state(s: Scheduler) -> tuple[str, str, str]:
    (res,) = s.results.values()
    return res.status, res.message, s.explain(s.objects("Pod")[0]).gated


def test_a_claim_created_and_deleted():
    s = _cluster()
    s.add(_pod())
    assert _state(s) == ("Gated", NOT_FOUND, NOT_FOUND)
    s.add(CLAIM)  # DynamicResources' ResourceClaim/Add hint moves it: PreEnqueue lets it through
    assert _state(s) == ("Pending", "", "")
    assert s.explain(s.objects("Pod")[0]).best_nodes == ["n1"]
    s.delete_object("ResourceClaim", "claim")  # in activeQ: PreEnqueue does not run again until it moves
    assert _state(s) == ("Pending", "", "")
    s.add(CLAIM)
    s.run()
    assert _state(s)[0] == "Scheduled"


def test_a_claim_deleted_after_a_failed_attempt():
    """Unschedulable, then held: the queue moves the pod on the claim's re-creation only."""
    s = _cluster()
    s.add(CLAIM)
    s.add(_pod())
    s.delete_object("ResourceClaim", "claim")
    s.run()
    status, message, gated = _state(s)
    assert status == "Unschedulable" and gated == ""
    s.add(CLAIM)
    assert _state(s)[0] in ("Pending", "Unschedulable") and _state(s)[2] == ""
    s.run()
    assert _state(s)[0] == "Scheduled"


def test_scheduling_gates_then_a_missing_claim():
    """The gate removed, DynamicResources holds the pod: the reason changes with the plugin."""
    s = _cluster()
    s.add(_pod(gates=True))
    assert _state(s) == ("Gated", GATES, GATES)
    s.update_pod(_pod())  # the gate removed (the API allows only removing gates)
    assert _state(s) == ("Gated", NOT_FOUND, NOT_FOUND)
    s.add(CLAIM)
    assert _state(s) == ("Pending", "", "")
    s.run()
    assert _state(s)[0] == "Scheduled"
