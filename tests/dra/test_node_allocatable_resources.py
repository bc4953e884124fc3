"""DRANodeAllocatableResources (alpha, off at v1.37.2): the API side of devices'
``nodeAllocatableResources`` (the scheduler side: tests/dra/test_node_allocatable_scheduling.py),
what the API server does with the field at v1.37.2:

* ``pkg/apis/resource/validation/validation_resourceslice_test.go`` (``TestValidateResourceSlice``):
  the node-allocatable rows (``validateNodeAllocatableResources``), transcribed; fastsched's
  validation also runs the declarative rules, so a mapping without ``capacityKey`` and
  ``deviceMultiplier`` gets the union's error besides the hand-written one;
* ``pkg/registry/resource/resourceslice/strategy.go``: ``dropDisabledDRANodeAllocatableResourcesFields``
  (on create, without the gate, the field is dropped; with it, kept).
"""
from __future__ import annotations

import pytest

from fastsched import Scheduler
from fastsched.api.resource import (NodeAllocatableMapping, NodeAllocatableOverhead, NodeAllocatableResource,
                                    is_node_allocatable_resource_name, parse_resource_slice)
from fastsched.api.strategy import prepare_for_create, validate
from fastsched.features import FeatureGates

GOOD = "foo"
DRIVER = "driver.example.com"
GATE_ON = {"DRANodeAllocatableResources": True}
#: testResourceSliceWithNodeAllocatableResources' device: cpu and memory both mapped from dra.example.com/cpu
DEFAULT_NAR = {"cpu": {"mapping": {"capacityMultiplier": "1", "capacityKey": "dra.example.com/cpu"}},
               "memory": {"mapping": {"capacityKey": "dra.example.com/cpu", "capacityMultiplier": "1"}}}


def _slice(nar=DEFAULT_NAR, capacity=True):
    """``testResourceSliceWithNodeAllocatableResources`` (``capacity``) or ``testResourceSlice``
    with ``nodeAllocatableResources`` set (no capacities)."""
    device = {"name": "device-0", "attributes": {"driverVersion": {"version": "1.0.0"}}}
    if capacity:
        device["capacity"] = {"dra.example.com/cpu": {"value": "100"}, "dra.example.com/memory": {"value": "100Gi"}}
    if nar is not None:
        device["nodeAllocatableResources"] = nar
    return parse_resource_slice({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice",
                                 "metadata": {"name": GOOD},
                                 "spec": {"driver": DRIVER, "nodeName": GOOD,
                                          "pool": {"name": GOOD, "resourceSliceCount": 1}, "devices": [device]}})


def _errors(rs, gates=GATE_ON) -> list[str]:
    return [str(e) for e in validate(prepare_for_create(rs, gates), gates)]


P = "spec.devices[0].nodeAllocatableResources"
UNION_EMPTY = "Invalid value: \"\": must specify one of: `capacityKey`, `deviceMultiplier`"

#: TestValidateResourceSlice's node-allocatable rows: name -> (slice, wanted errors)
CASES = {
    "correct-node-allocatable-resource-mappings": (_slice(), []),
    "node-allocatable-resources-both-quantityfrom": (
        _slice({"cpu": {"mapping": {"capacityKey": "dra.example.com/cpu", "capacityMultiplier": "1"}}}), []),
    "bad-node-allocatable-resources-capacityKey-empty": (
        _slice({"cpu": {"mapping": {"capacityKey": "", "capacityMultiplier": "1"}}}),
        [f'{P}[cpu].mapping.capacityKey: Invalid value: "": capacityKey must not be an empty string']),
    "bad-node-allocatable-resources-capacity-key-not-found": (
        _slice({"cpu": {"mapping": {"capacityKey": "nonexistent", "capacityMultiplier": "1"}}}),
        [f'{P}[cpu].mapping.capacityKey: Not found: "nonexistent"']),
    "bad-node-allocatable-resources-invalid-device-multiplier-negative": (
        _slice({"cpu": {"mapping": {"deviceMultiplier": "-1"}}}, capacity=False),
        [f'{P}[cpu].mapping.deviceMultiplier: Invalid value: "-1": must be positive']),
    "bad-node-allocatable-resources-invalid-capacity-multiplier-negative": (
        _slice({"cpu": {"mapping": {"capacityKey": "dra.example.com/cpu", "capacityMultiplier": "-1"}}}),
        [f'{P}[cpu].mapping.capacityMultiplier: Invalid value: "-1": must be positive']),
    "bad-node-allocatable-resources-invalid-device-multiplier-zero": (
        _slice({"cpu": {"mapping": {"deviceMultiplier": "0"}}}, capacity=False),
        [f'{P}[cpu].mapping.deviceMultiplier: Invalid value: "0": must be positive']),
    "bad-node-allocatable-resources-invalid-capacity-multiplier-zero": (
        _slice({"cpu": {"mapping": {"capacityKey": "dra.example.com/cpu", "capacityMultiplier": "0"}}}),
        [f'{P}[cpu].mapping.capacityMultiplier: Invalid value: "0": must be positive']),
    "capacity key not in spec.devices[].capacity": (
        _slice({"memory": {"mapping": {"capacityKey": "dra.example.com/hugepages", "capacityMultiplier": "1"}}}),
        [f'{P}[memory].mapping.capacityKey: Not found: "dra.example.com/hugepages"']),
    "mapped resource is not a node allocatable resource": (
        _slice({"dra.example.com/gpu": {"mapping": {"capacityKey": "dra.example.com/cpu", "capacityMultiplier": "1"}}}),
        [f'{P}[dra.example.com/gpu]: Invalid value: "dra.example.com/gpu": must be a node allocatable resource name']),
    "non standard resource name": (
        _slice({"abc": {"overhead": {"perPod": "1"}}}),
        [f'{P}[abc]: Invalid value: "abc": must be a node allocatable resource name']),
    "kubernetes.io namespace is rejected": (
        _slice({"kubernetes.io/foo": {"overhead": {"perPod": "1"}}}),
        [f'{P}[kubernetes.io/foo]: Invalid value: "kubernetes.io/foo": must be a node allocatable resource name']),
    "ephemeral-storage is rejected": (
        _slice({"ephemeral-storage": {"overhead": {"perPod": "2Gi"}}}),
        [f'{P}[ephemeral-storage]: Invalid value: "ephemeral-storage": must be a node allocatable resource name']),
    "valid hugepages resource": (_slice({"hugepages-2Mi": {"overhead": {"perPod": "2Mi"}}}), []),
    "bad-node-allocatable-resources-overhead-neither-perpod-nor-percontainer-set": (
        _slice({"memory": {"overhead": {}}}),
        [f'{P}[memory].overhead: Invalid value: "": at least one of perPod or perContainer must be set']),
    "bad-node-allocatable-resources-overhead-negative-perpod": (
        _slice({"memory": {"overhead": {"perPod": "-1Gi"}}}),
        [f'{P}[memory].overhead.perPod: Invalid value: "-1Gi": must be non-negative']),
    "bad-node-allocatable-resources-overhead-negative-percontainer": (
        _slice({"memory": {"overhead": {"perContainer": "-500Mi"}}}),
        [f'{P}[memory].overhead.perContainer: Invalid value: "-500Mi": must be non-negative']),
    "good-node-allocatable-resources-overhead": (
        _slice({"memory": {"overhead": {"perPod": "1Gi", "perContainer": "500Mi"}}}), []),
    "good-node-allocatable-resources-both-mapping-and-overhead-set": (
        _slice({"cpu": {"mapping": {"capacityKey": "dra.example.com/cpu", "capacityMultiplier": "1"},
                        "overhead": {"perPod": "1Gi"}}}), []),
    "bad-node-allocatable-resources-neither-mapping-nor-overhead-set": (
        _slice({"cpu": {}}),
        [f"{P}[cpu]: Required value: at least one of mapping or overhead must be set"]),
    "bad-node-allocatable-resources-capacity-key-set-without-multiplier": (
        _slice({"cpu": {"mapping": {"capacityKey": "dra.example.com/cpu"}}}),
        [f"{P}[cpu].mapping.capacityMultiplier: Required value: capacityMultiplier is required when capacityKey "
         "is set"]),
    # the declarative union (exactly one of capacityKey and deviceMultiplier) reports the empty
    # mapping too; upstream's hand-written table does not run it
    "bad-node-allocatable-resources-multiplier-set-without-capacity-key": (
        _slice({"cpu": {"mapping": {"capacityMultiplier": "1"}}}),
        [f"{P}[cpu].mapping.capacityKey: Required value: capacityKey is required when capacityMultiplier is set",
         f"{P}[cpu].mapping: {UNION_EMPTY}"]),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_validate_resource_slice(name):
    rs, want = CASES[name]
    assert _errors(rs) == want


def test_union_of_capacity_key_and_device_multiplier():
    """``Validate_NodeAllocatableMapping``'s union: both members set is invalid."""
    rs = _slice({"cpu": {"mapping": {"capacityKey": "dra.example.com/cpu", "capacityMultiplier": "2",
                                     "deviceMultiplier": "1"}}})
    assert _errors(rs) == [f"{P}[cpu].mapping: Invalid value: \"{{capacityKey, deviceMultiplier}}\": must specify "
                           "exactly one of: `capacityKey`, `deviceMultiplier`"]


def test_decoded():
    d = _slice({"cpu": {"mapping": {"deviceMultiplier": "8"}},
                "memory": {"mapping": {"capacityKey": "dra.example.com/memory", "capacityMultiplier": "1"},
                           "overhead": {"perPod": "1Gi", "perContainer": "500Mi"}}}).devices[0]
    cpu, memory = d.node_allocatable_resources["cpu"], d.node_allocatable_resources["memory"]
    assert isinstance(cpu, NodeAllocatableResource) and cpu.overhead is None
    assert cpu.mapping == NodeAllocatableMapping(device_multiplier=cpu.mapping.device_multiplier)
    assert str(cpu.mapping.device_multiplier) == "8"
    assert memory.mapping.capacity_key == "dra.example.com/memory" and str(memory.mapping.capacity_multiplier) == "1"
    assert isinstance(memory.overhead, NodeAllocatableOverhead)
    assert (str(memory.overhead.per_pod), str(memory.overhead.per_container)) == ("1Gi", "500Mi")


def test_is_node_allocatable_resource_name():
    """``IsNodeAllocatableResourceName``: cpu, memory, hugepages; not ephemeral-storage or extended
    resources."""
    assert [n for n in ("cpu", "memory", "hugepages-1Gi", "ephemeral-storage", "example.com/gpu", "pods")
            if is_node_allocatable_resource_name(n)] == ["cpu", "memory", "hugepages-1Gi"]


def test_dropped_on_create_without_the_gate():
    """``dropDisabledDRANodeAllocatableResourcesFields``: off (v1.37.2's default), the field is
    gone from the object and its manifest, so its errors are not reported either; on, kept."""
    bad = _slice({"cpu": {}})
    dropped = prepare_for_create(bad, FeatureGates())
    assert dropped.devices[0].node_allocatable_resources == {}
    assert "nodeAllocatableResources" not in dropped.manifest["spec"]["devices"][0]
    assert bad.devices[0].node_allocatable_resources  # the original is not changed
    assert _errors(bad, FeatureGates()) == []
    kept = prepare_for_create(_slice(), GATE_ON)
    assert set(kept.devices[0].node_allocatable_resources) == {"cpu", "memory"}
    plain = _slice(None)
    assert prepare_for_create(plain, FeatureGates()) is plain


def test_scheduler_accepts_and_drops_the_field():
    """A known field of resource.k8s.io/v1 (no unknown-field warning), dropped as the API server
    does with the gate off."""
    import warnings

    sched = Scheduler(seed=0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        sched.add(_slice().manifest)
    (stored,) = sched.objects("ResourceSlice")
    assert "nodeAllocatableResources" not in stored["spec"]["devices"][0]


def test_gate_switchable():
    """Switchable since the scheduler side is ported (tests/dra/test_node_allocatable_scheduling.py);
    off by default, as upstream's alpha gate."""
    assert FeatureGates({"DRANodeAllocatableResources": True}).enabled("DRANodeAllocatableResources")
    assert not FeatureGates().enabled("DRANodeAllocatableResources")


# -- the pod's status.nodeAllocatableResourceClaimStatuses ------------------------------------------
CLAIM_STATUS = [{"resourceClaimName": "claim-0", "containers": ["c"],
                 "mapping": [{"name": "cpu", "quantity": "2"}],
                 "overhead": [{"name": "memory", "perPod": "1Gi", "perContainer": "100Mi"}]}]


def _pod(status=CLAIM_STATUS, node_name=None):
    from fastsched.api.decode import parse_pod

    manifest = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "default"},
                "spec": {"containers": [{"name": "c", "image": "i"}]}}
    if node_name is not None:
        manifest["spec"]["nodeName"] = node_name
    if status is not None:
        manifest["status"] = {"phase": "Pending", "nodeAllocatableResourceClaimStatuses": status}
    return parse_pod(manifest)


def test_pod_claim_statuses_dropped_on_create_without_the_gate():
    """``dropPodNodeAllocatableResourceStatus`` (called by ``DropDisabledPodFields`` on create,
    no old status): dropped without the gate, even an empty list; a bound pod's kept with it."""
    pod = _pod(node_name="n")
    dropped = prepare_for_create(pod, FeatureGates())
    assert dropped.manifest["status"] == {"phase": "Pending"}
    assert pod.manifest["status"]["nodeAllocatableResourceClaimStatuses"] == CLAIM_STATUS  # not changed
    assert prepare_for_create(_pod([]), FeatureGates()).manifest["status"] == {"phase": "Pending"}
    kept = prepare_for_create(pod, GATE_ON)
    assert kept.manifest["status"]["nodeAllocatableResourceClaimStatuses"] == CLAIM_STATUS
    assert kept.node_allocatable_claim_nanos
    plain = _pod(None)
    assert prepare_for_create(plain, FeatureGates()) is plain
    assert prepare_for_create(plain, GATE_ON) is plain


def test_pending_pod_claim_statuses_reset_on_create_with_the_gate():
    """The pod strategy's ``PrepareForCreate`` resets a new pod's status (``pod.Status =
    api.PodStatus{Phase: Pending}``): an unbound pod given with claim statuses is created without
    them, with the gate on too, so its requests do not count them."""
    pod = _pod()
    created = prepare_for_create(pod, GATE_ON)
    assert created.manifest["status"] == {"phase": "Pending"}
    assert not created.node_allocatable_claim_nanos
    assert "cpu" not in created.requests
    assert pod.node_allocatable_claim_nanos  # the original is not changed


def test_scheduler_ignores_a_pending_pods_given_claim_statuses():
    """With the gate on, a pending pod given with claim statuses fits as its containers alone
    (upstream's NodeResourcesFit PreFilter would not count them either: ``computePodResourceRequest``
    without ``EnableDRANodeAllocatableResources``); a bound one's take from its node."""
    def run(bound_statuses):
        sched = Scheduler(seed=0, feature_gates=GATE_ON)
        sched.add({"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n"},
                   "status": {"allocatable": {"cpu": "1", "memory": "1Gi", "pods": "10"}}})
        if bound_statuses:
            sched.add({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "b", "namespace": "default"},
                       "spec": {"nodeName": "n", "containers": [{"name": "c", "image": "i"}],
                                "resourceClaims": [{"name": "gpu", "resourceClaimName": "c"}]},
                       "status": {"phase": "Running", "nodeAllocatableResourceClaimStatuses": [
                           _status("c", ["c"], [("cpu", "500m")])]}})
        sched.add({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "default"},
                   "spec": {"containers": [{"name": "c", "image": "i",
                                            "resources": {"requests": {"cpu": "700m"}}}]},
                   "status": {"phase": "Pending", "nodeAllocatableResourceClaimStatuses": [
                       _status("c", ["c"], [("cpu", "500m")])]}})
        (result,) = [r for r in sched.run() if r.pod.name == "p"]
        return result.node_name

    assert run(bound_statuses=False) == "n"  # 700m fits; with its own 500m it would not
    assert not run(bound_statuses=True)      # the bound pod's 500m and 700m do not


def test_bound_pods_of_one_template_count_their_own_claim_statuses():
    """Bound pods added together from one spec, one of them with claim statuses: each counts its
    own requests on the node (the statuses' 500m on b1 only). Claim statuses need the pod's
    ``resourceClaims`` (validation refuses them otherwise), and pods with claims are never stamped
    from a shared template (``PodTemplates.key``), whose requests they would share; should that
    rule be relaxed, ``stamp``'s own claim-status check is what keeps this true."""
    def bound(name, statuses=None):
        manifest = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "default"},
                    "spec": {"nodeName": "n", "containers": [{"name": "c", "image": "i",
                                                               "resources": {"requests": {"cpu": "100m"}}}],
                             "resourceClaims": [{"name": "gpu", "resourceClaimName": "c"}]}}
        if statuses:
            manifest["status"] = {"phase": "Running", "nodeAllocatableResourceClaimStatuses": statuses}
        return manifest

    sched = Scheduler(seed=0, feature_gates=GATE_ON)
    sched.add({"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n"},
               "status": {"allocatable": {"cpu": "1", "memory": "1Gi", "pods": "10"}}})
    sched.add_pods([bound("b0"), bound("b1", [_status("c", ["c"], [("cpu", "500m")])]), bound("b2")])
    assert {p.name: p.requests.get("cpu") for p in sched.cluster.pods.values()} == {"b0": 100, "b1": 600, "b2": 100}
    sched.add_pods([{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "default"},
                     "spec": {"containers": [{"name": "c", "image": "i", "resources": {"requests": {"cpu": "300m"}}}]}}])
    (result,) = sched.run()
    assert result.status == "Unschedulable"  # 100m + 600m + 100m used: 300m does not fit in 1

def test_scheduler_accepts_and_drops_the_pod_claim_statuses():
    """A known field of core/v1 PodStatus (no unknown-field warning), dropped with the gate off."""
    import warnings

    sched = Scheduler(seed=0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        sched.add(_pod().manifest)
    (stored,) = sched.objects("Pod")
    assert "nodeAllocatableResourceClaimStatuses" not in (stored.get("status") or {})


# -- component-helpers resource.PodRequests with UseDRANodeAllocatableResourceClaimStatus -----------
def _requests_pod(containers, statuses, init_containers=(), pod_resources=None, claims=()):
    """A pod of TestPodRequestsAndLimitsWithDRA: containers as (name, requests, claim names)."""
    from fastsched.api.decode import parse_pod

    def container(c):
        name, requests, claim_names = c
        return {"name": name, "image": "i", "resources": {"requests": requests,
                                                          "claims": [{"name": n} for n in claim_names]}}

    spec = {"containers": [container(c) for c in containers],
            "initContainers": [container(c) for c in init_containers],
            "resourceClaims": [{"name": n, "resourceClaimName": f"node-allocatable-{n}"} for n in claims]}
    if pod_resources is not None:
        spec["resources"] = pod_resources
    spec["nodeName"] = "n"  # bound: an existing pod keeps its status on load (a pending one does not)
    return parse_pod({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "default"},
                      "spec": spec, "status": {"nodeAllocatableResourceClaimStatuses": statuses}})


def _status(claim, containers, mapping=(), overhead=()):
    return {"resourceClaimName": claim, "containers": list(containers),
            "mapping": [{"name": n, "quantity": q} for n, q in mapping],
            "overhead": [dict(name=n, **o) for n, o in overhead]}


GI, MI = 1024**3, 1024**2
HP = "hugepages-1Gi"
#: TestPodRequestsAndLimitsWithDRA's rows without UseStatusResources (fastsched models no resize),
#: requests only (the scheduler reads no limits): description -> (pod, expected requests). cpu in
#: millicores, the rest in units, as Pod.requests has them.
REQUEST_CASES = {
    "No claims": (_requests_pod([("c1", {"cpu": "100m", "memory": "1Gi"}, ())], []),
                  {"cpu": 100, "memory": GI}),
    "Single claim on one container": (
        _requests_pod([("c1", {"cpu": "100m", "memory": "1Gi", HP: "2"}, ("claim-1",))],
                      [_status("node-allocatable-claim-1", ["c1"], [("cpu", "50m"), (HP, "1")])], claims=("claim-1",)),
        {"cpu": 150, "memory": GI, HP: 3}),
    "Multiple claims on one container": (
        _requests_pod([("c1", {"cpu": "100m", "memory": "1Gi"}, ("claim-1", "claim-2"))],
                      [_status("node-allocatable-claim-1", ["c1"], [("cpu", "50m")]),
                       _status("node-allocatable-claim-2", ["c1"], [("cpu", "25m"), ("memory", "512Mi")])],
                      claims=("claim-1", "claim-2")),
        {"cpu": 175, "memory": GI + 512 * MI}),
    "Same claim referenced in multiple containers": (
        _requests_pod([("c1", {"cpu": "100m"}, ("claim-1",)), ("c2", {"cpu": "200m"}, ("claim-1",))],
                      [_status("node-allocatable-claim-1", ["c1", "c2"], [("cpu", "50m")])], claims=("claim-1",)),
        {"cpu": 350}),
    "Different claims on multiple containers": (
        _requests_pod([("c1", {"cpu": "100m", HP: "1"}, ("claim-1",)),
                       ("c2", {"cpu": "200m", "memory": "1Gi", HP: "2"}, ("claim-2",))],
                      [_status("node-allocatable-claim-1", ["c1"], [("cpu", "50m"), (HP, "1")]),
                       _status("node-allocatable-claim-2", ["c2"], [("cpu", "25m"), ("memory", "512Mi"), (HP, "2")])],
                      claims=("claim-1", "claim-2")),
        {"cpu": 375, "memory": GI + 512 * MI, HP: 6}),
    "Claim on init container": (
        _requests_pod([("c1", {"cpu": "50m"}, ())],
                      [_status("node-allocatable-claim", ["ic1"], [("cpu", "25m")])],
                      init_containers=[("ic1", {"cpu": "100m"}, ("claim-1",))], claims=("claim-1",)),
        {"cpu": 125}),
    "Pod Level Resources overrides the claim request/limit": (
        _requests_pod([("c1", {"cpu": "1", "memory": "1Gi"}, ())],
                      [_status("node-allocatable-claim", ["c1"], [("cpu", "3")])],
                      pod_resources={"requests": {"cpu": "2"}, "limits": {"cpu": "2"}}),
        {"cpu": 2000, "memory": GI}),
    "Pod with DRA claim specifying Overhead mapping": (
        _requests_pod([("c1", {"cpu": "100m", "memory": "1Gi"}, ()), ("c2", {"cpu": "100m", "memory": "1Gi"}, ())],
                      [_status("node-allocatable-claim", ["c1", "c2"],
                               overhead=[("memory", {"perPod": "1Gi", "perContainer": "500Mi"})])]),
        {"cpu": 200, "memory": 4072 * MI}),
    "Pod with DRA claim specifying both Mapping and Overhead mapping": (
        _requests_pod([("c1", {"memory": "1Gi"}, ("claim-1",)), ("c2", {"memory": "1Gi"}, ("claim-1",))],
                      [_status("node-allocatable-claim-1", ["c1", "c2"], [("memory", "2Gi")],
                               [("memory", {"perPod": "1Gi", "perContainer": "500Mi"})])], claims=("claim-1",)),
        {"memory": 6120 * MI}),
    "Pod with DRA claim specifying Overhead mapping, PerPod only": (
        _requests_pod([("c1", {"memory": "1Gi"}, ())],
                      [_status("node-allocatable-claim", ["c1"], overhead=[("memory", {"perPod": "1Gi"})])]),
        {"memory": 2 * GI}),
    "Pod with DRA claim specifying Overhead mapping, PerContainer only": (
        _requests_pod([("c1", {"memory": "1Gi"}, ())],
                      [_status("node-allocatable-claim", ["c1"], overhead=[("memory", {"perContainer": "500Mi"})])]),
        {"memory": 1524 * MI}),
    "Pod with unreferenced DRA claim specifying Mapping": (
        _requests_pod([("c1", {"memory": "1Gi"}, ())], [_status("unref-direct-claim", [], [("memory", "2Gi")])]),
        {"memory": 3 * GI}),
    "Pod with unreferenced DRA claim specifying Overhead mapping": (
        _requests_pod([("c1", {"memory": "1Gi"}, ())],
                      [_status("unref-overhead-claim", [],
                               overhead=[("memory", {"perPod": "1Gi", "perContainer": "500Mi"})])]),
        {"memory": 2 * GI}),
    "Pod with unreferenced DRA claim specifying Overhead mapping, PerContainer only": (
        _requests_pod([("c1", {"memory": "1Gi"}, ())],
                      [_status("unref-overhead-percontainer-claim", [],
                               overhead=[("memory", {"perContainer": "500Mi"})])]),
        {"memory": GI}),
    "DRA cpu/memory not added to limits when container limits are omitted": (
        _requests_pod([("c1", {"cpu": "100m", "memory": "1Gi"}, ("claim-1",))],
                      [_status("node-allocatable-claim-1", ["c1"], [("cpu", "50m"), ("memory", "512Mi")])],
                      claims=("claim-1",)),
        {"cpu": 150, "memory": 1536 * MI}),
    "DRA hugepages added to limits even when container limits are omitted": (
        _requests_pod([("c1", {"cpu": "100m"}, ("claim-1",))],
                      [_status("node-allocatable-claim-1", ["c1"], [(HP, "1")])], claims=("claim-1",)),
        {"cpu": 100, HP: 1}),
}


@pytest.mark.parametrize("description", sorted(REQUEST_CASES))
def test_pod_requests_with_dra(description):
    """The gate on (the pod as decoded, its claim statuses kept): ``Pod.requests`` is
    ``PodRequests`` with ``UseDRANodeAllocatableResourceClaimStatus``."""
    pod, want = REQUEST_CASES[description]
    assert dict(prepare_for_create(pod, GATE_ON).requests) == want


def test_pod_requests_flag_disabled():
    """"UseDRANodeAllocatableResourceClaimStatus flag disabled": with the gate off the status is
    dropped on create, so the requests are the containers' alone."""
    pod = _requests_pod([("c1", {"cpu": "100m"}, ("claim-1",))],
                        [_status("node-allocatable-claim", ["c1"], [("cpu", "50m")])], claims=("claim-1",))
    assert dict(prepare_for_create(pod, FeatureGates()).requests) == {"cpu": 100}
    assert dict(prepare_for_create(pod, GATE_ON).requests) == {"cpu": 150}


def test_non_zero_requests_count_dra():
    """``PodInfo.CalculateResource``'s non-zero requests use the same options: the defaults for
    containers without cpu/memory, then the claims' amounts."""
    pod = _requests_pod([("c1", {}, ("claim-1",))],
                        [_status("c", ["c1"], [("cpu", "1")], [("memory", {"perPod": "1Gi"})])], claims=("claim-1",))
    assert dict(prepare_for_create(pod, GATE_ON).non_zero_requests) == {"cpu": 1100, "memory": 200 * MI + GI}
    assert dict(prepare_for_create(pod, FeatureGates()).non_zero_requests) == {"cpu": 100, "memory": 200 * MI}


def test_bound_pod_claim_statuses_not_accounted_with_the_gate_off():
    """NodeInfo with the gate off: a bound pod's claim statuses (dropped on create) take nothing
    from its node, on the template path too (pods of one manifest shape)."""
    sched = Scheduler(seed=0)
    sched.add({"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n"},
               "status": {"allocatable": {"cpu": "1", "memory": "1Gi", "pods": "10"}}})
    for i in range(3):
        sched.add({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": f"b{i}", "namespace": "default"},
                   "spec": {"nodeName": "n", "containers": [{"name": "c", "image": "i",
                                                             "resources": {"requests": {"cpu": "100m"}}}]},
                   "status": {"phase": "Running", "nodeAllocatableResourceClaimStatuses": [
                       _status("c", ["c"], [("cpu", "200m")])]}})
    sched.add({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "default"},
               "spec": {"containers": [{"name": "c", "image": "i", "resources": {"requests": {"cpu": "700m"}}}]}})
    (result,) = [r for r in sched.run() if r.pod.name == "p"]
    assert result.node_name == "n"  # 3 x 100m + 700m fits; with the claims' 3 x 200m it would not


# -- TestValidateNodeAllocatableResourceClaimStatus (apis/core/validation) ----------------------------
# (ValidatePodStatusUpdate's check, run on a pod given with the statuses: they are there only with
# the gate on)
from fastsched.api.decode import parse_pod  # noqa: E402

_st = _status
def _validated(statuses, claims=(("claim1", "my-claim1"),), claim_statuses=()):
    from fastsched.api.validation import validate_pod
    obj = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "default"},
           "spec": {"containers": [{"name": "c1", "image": "image"}],
                    "resourceClaims": [{"name": n, "resourceClaimName": c} for n, c in claims]},
           "status": {"nodeAllocatableResourceClaimStatuses": statuses}}
    if claim_statuses:
        obj["status"]["resourceClaimStatuses"] = [{"name": n, "resourceClaimName": c} for n, c in claim_statuses]
    return [str(e) for e in validate_pod(parse_pod(obj)) if str(e).startswith("status.")]


S = "status.nodeAllocatableResourceClaimStatuses[0]"
#: name -> (statuses, pod claims, status claims, wanted error (field and detail) or None)
STATUS_CASES = {
    "Valid NodeAllocatableResourceClaimStatus": ([_st("my-claim1", ["c1"], [("cpu", "1"), ("memory", "1Gi")])],
                                                 None, (), None),
    "Valid Multiple NodeAllocatableResourceClaimStatus": (
        [_st("my-claim1", ["c1"], [("cpu", "1")]), _st("my-claim2", ["c1"], [("memory", "2Gi")])],
        (("claim1", "my-claim1"), ("claim2", "my-claim2")), (), None),
    "Invalid Resource Name": ([_st("my-claim1", ["c1"], [("example.com/foo", "1")])], None, (),
                              f'{S}.mapping[0].name: Invalid value: "example.com/foo": must be a node allocatable resource name'),
    "Non-standard resource name": ([_st("my-claim1", ["c1"], [("abc", "1")])], None, (),
                                   f'{S}.mapping[0].name: Invalid value: "abc": must be a node allocatable resource name'),
    "kubernetes.io prefixed resource name": (
        [_st("my-claim1", ["c1"], overhead=[("kubernetes.io/foo", {"perPod": "1Gi"})])], None, (),
        f'{S}.overhead[0].name: Invalid value: "kubernetes.io/foo": must be a node allocatable resource name'),
    "Ephemeral Storage resource name is rejected": (
        [_st("my-claim1", ["c1"], [("ephemeral-storage", "10Gi")])], None, (),
        f'{S}.mapping[0].name: Invalid value: "ephemeral-storage": must be a node allocatable resource name'),
    "Valid hugepages resource name": ([_st("my-claim1", ["c1"], [("hugepages-2Mi", "2Mi")])], None, (), None),
    "Negative Quantity": ([_st("my-claim1", ["c1"], [("cpu", "-1")])], None, (),
                          f'{S}.mapping[0].quantity: Invalid value: "-1": must be non-negative'),
    "Valid NodeAllocatableResourceClaimStatus with empty containers": ([_st("my-claim1", [], [("cpu", "1")])],
                                                                        None, (), None),
    "Valid ResourceClaimName from PodStatus": ([_st("generated-claim1", ["c1"], [("cpu", "1")])], (),
                                               (("claim1", "generated-claim1"),), None),
    "Invalid ResourceClaimName not found": (
        [_st("non-existent-claim", ["c1"], [("cpu", "1")])], None, (("claim2", "generated-claim2"),),
        f'{S}.resourceClaimName: Invalid value: "non-existent-claim": no mapping found in pod reference'),
    "Invalid NodeAllocatableResourceClaimStatus overhead neither perPod nor perContainer set": (
        [_st("my-claim1", ["c1"], overhead=[("memory", {})])], None, (),
        f'{S}.overhead[0]: Invalid value: "": at least one of perPod or perContainer must be set'),
    "Invalid NodeAllocatableResourceClaimStatus overhead negative perPod": (
        [_st("my-claim1", ["c1"], overhead=[("memory", {"perPod": "-1Gi"})])], None, (),
        f'{S}.overhead[0].perPod: Invalid value: "-1Gi": must be non-negative'),
    "Invalid NodeAllocatableResourceClaimStatus overhead negative perContainer": (
        [_st("my-claim1", ["c1"], overhead=[("memory", {"perContainer": "-500Mi"})])], None, (),
        f'{S}.overhead[0].perContainer: Invalid value: "-500Mi": must be non-negative'),
    "Valid NodeAllocatableResourceClaimStatus overhead both set": (
        [_st("my-claim1", ["c1"], overhead=[("memory", {"perPod": "1Gi", "perContainer": "500Mi"})])], None, (), None),
    "Invalid Resource Name in Overhead": (
        [_st("my-claim1", ["c1"], overhead=[("example.com/foo", {"perPod": "1Gi"})])], None, (),
        f'{S}.overhead[0].name: Invalid value: "example.com/foo": must be a node allocatable resource name'),
}


@pytest.mark.parametrize("name", list(STATUS_CASES))
def test_validate_node_allocatable_resource_claim_status(name):
    statuses, claims, claim_statuses, want = STATUS_CASES[name]
    kw = {} if claims is None else {"claims": claims}
    errors = _validated(statuses, claim_statuses=claim_statuses, **kw)
    assert errors == ([] if want is None else [want])
