"""DynamicResources with DRAWorkloadResourceClaims (v1.37.2 ``dynamicresources.go``): claims named
by a PodGroup's ``spec.resourceClaims`` are reserved for the group, the group may own a claim a
member's template entry resolves to, PreBind writes the group's ``reservedFor`` entry, Unreserve
leaves it, and PodGroupPostFilter deallocates or unreserves the group's claims.

Transcribed from ``dynamicresources_test.go``: the ``TestPlugin`` rows
``podgroup-claim-reference(-feature-disabled-reserves-for-pod)``, ``podgroup-claim-template``,
``podgroup-with-resources(-feature-disabled-reserves-for-pod)``, ``bind-podgroup-failure``,
``postfilter-deallocate-reserved-podgroup``,
``postfilter-skip-deallocate-reserved-podgroup-feature-disabled``,
``postfilter-deallocate-unreserved-podgroup``,
``postfilter-skip-deallocate-reserved-podgroup-when-pods-active``, ``reserved-okay-podgroup``, and
the ``TestPodGroupPostFilter`` rows with the gate (``deallocate-pod-level-claim``,
``deallocate-podgroup-level-claim``, ``unreserve-podgroup-claim``,
``unreserve-podgroup-multiple-unscheduled-pods``, ``mixed-pod-level-and-podgroup-claims``,
``skip-deallocate-feature-disabled``, ``skip-deallocate-topology-aware-podgroup``).

Upstream's harness compares an expected ``Unschedulable`` without a message with
``ErrorContains(got, "")``, which any message passes; where the code answers a message, the
message is asserted here."""
from __future__ import annotations

from types import SimpleNamespace

import pytest

from fastsched.api.objects import PodSchedulingGroup
from fastsched.api.resource import parse_resource_claim
from fastsched.api.scheduling import (PodGroup, PodGroupResourceClaim, PodGroupSchedulingConstraints,
                                      TopologyConstraint)
from fastsched.config.args import DynamicResourcesArgs
from fastsched.framework.cycle_state import CycleState
from fastsched.framework.objects import ObjectStore
from fastsched.framework.podgroups import PodGroupObjects, PodGroupState, PodGroupStates, QueuedPodGroupInfo, pod_group_key
from fastsched.framework.status import Code
from fastsched.framework.types import PodInfo, QueuedPodInfo
from fastsched.plugins.dynamicresources import (POD_GROUP_CYCLE_KEY, STATE_KEY, DynamicResources, _PodGroupStateData,
                                                _StateData, pod_claims)
from fastsched.snapshot import build_snapshot
from fastsched.testing import make_node

from .test_dynamic_resources import CLAIM, UUA, allocation_on, device_class, pod, ref, tmpl, worker_slice

PG = "my-podgroup"
PG_UID = "5678"
POD_UID = "1234"
PG_RESERVATION = {"apiGroup": "scheduling.k8s.io", "resource": "podgroups", "name": PG, "uid": PG_UID}
POD_RESERVATION = {"resource": "pods", "name": "my-pod", "uid": POD_UID}
DONE = "deallocation and deletion of ResourceClaims completed"
PG_DEALLOCATED = "deallocation of PodGroup ResourceClaim completed"
PG_UNRESERVED = "ResourceClaim unreserved for PodGroup"
NOT_AVAILABLE = "resourceclaim not available on the node"
CLAIM_2 = "my-pod-my-resource-2"
#: allocatedPodGroupClaimWithWrongTopology's node selector: no node has the label
WRONG_TOPOLOGY = {"nodeSelector": {"nodeSelectorTerms": [{"matchExpressions": [
    {"key": "no-such-label", "operator": "In", "values": ["no-such-value"]}]}]}}


def grouped(p):
    return p.replace(scheduling_group=PodSchedulingGroup(PG))


def grouped_pod(name: str = "my-pod", uid: str = POD_UID, entry: dict | None = None, node: str = ""):
    """groupedPodWithClaimName (and its -2 / -podlevel siblings)."""
    p = grouped(pod(entry or ref(), name=name, uid=uid))
    return p.replace(node_name=node) if node else p


def group_claim(name: str = CLAIM, *, owner: str = "podgroup", allocation: dict | None = None,
                reserved_for: list | None = None):
    """pendingPodGroupClaim (owner the PodGroup), or a claim owned by a pod (owner "pod:<name>:<uid>")."""
    if owner == "podgroup":
        ref_ = {"apiVersion": "scheduling.k8s.io/v1beta1", "kind": "PodGroup", "name": PG, "uid": PG_UID,
                "controller": True}
    else:
        _, pod_name, pod_uid = owner.split(":")
        ref_ = {"apiVersion": "v1", "kind": "Pod", "name": pod_name, "uid": pod_uid, "controller": True}
    manifest: dict = {"metadata": {"name": name, "namespace": "default", "uid": f"uid-{name}", "ownerReferences": [ref_]},
                      "spec": {"devices": {"requests": [{"name": "req-1", "exactly": {
                          "deviceClassName": "my-resource-class", "count": 1}}]}}}
    status: dict = {}
    if allocation is not None:
        status["allocation"] = allocation
    if reserved_for is not None:
        status["reservedFor"] = reserved_for
    if status:
        manifest["status"] = status
    return parse_resource_claim(manifest)


def pod_group(template: bool = False, constraints: bool = False) -> PodGroup:
    """podGroupWithClaimName / podGroupWithClaimTemplate (the template is named like the claim, as
    upstream's) / podGroupWithClaimNameAndConstraints."""
    entry = (PodGroupResourceClaim("my-resource", resource_claim_template_name=CLAIM) if template
             else PodGroupResourceClaim("my-resource", resource_claim_name=CLAIM))
    return PodGroup(name=PG, namespace="default", uid=PG_UID, resource_claims=(entry,),
                    scheduling_constraints=(PodGroupSchedulingConstraints((TopologyConstraint("kubernetes.io/hostname"),))
                                            if constraints else None))


ALLOCATED = allocation_on("worker", "instance-1")
PENDING_PG_CLAIM = group_claim()
ALLOCATED_PG_CLAIM = group_claim(allocation=ALLOCATED)
IN_USE_BY_PG = group_claim(allocation=ALLOCATED, reserved_for=[PG_RESERVATION])
WRONG_TOPOLOGY_PG_CLAIM = group_claim(allocation=WRONG_TOPOLOGY, reserved_for=[PG_RESERVATION])
#: otherClaim: a claim nobody references
OTHER = group_claim("not-my-claim", owner="pod:other:9999")


def workload_setup(objects, pod_groups=(pod_group(),), members=(), gate: bool = True, topology_aware: bool = False):
    """The plugin with the gate as given, its client over ``objects`` and a PodGroup manager
    whose states hold ``pod_groups`` and the member pods ``members`` (bound ones are assigned)."""
    store = ObjectStore(list(objects))
    states: dict = {}
    for pg in pod_groups:
        state = PodGroupState()
        state.set_pod_group(pg)
        states[pod_group_key(pg.namespace, pg.name)] = state
    for m in members:
        states.setdefault(pod_group_key(m.namespace, m.pod_group_name), PodGroupState()).add_pod(m)
    manager = SimpleNamespace(pod_groups_lister=lambda: PodGroupObjects(states, True),
                              pod_group_states_lister=lambda: PodGroupStates(states, True))
    plugin = DynamicResources(DynamicResourcesArgs(), SimpleNamespace(client=store, pod_group_manager=manager),
                              workload_resource_claims=gate)
    plugin._topology_aware = topology_aware
    return plugin, store, build_snapshot([make_node("worker")]).batch()


def reasons(status):
    return None if status is None else (status.code(), status.reasons())


def run_plugin(plugin, p, batch):
    """testPlugin's walk in a pod group cycle: PreEnqueue, PreFilter, Filter; then Reserve and
    PreBind on the worker when it fits. The statuses, the member's CycleState and the group's."""
    out = {"pre_enqueue": plugin.pre_enqueue(p)}
    group_state = CycleState()
    state = CycleState()
    state.write(POD_GROUP_CYCLE_KEY, group_state)
    _, out["pre_filter"] = plugin.pre_filter(state, p, list(batch))
    out["filter"] = {}
    if out["pre_filter"] is None or out["pre_filter"].is_success():
        for info in batch:
            out["filter"][info.node().name] = plugin.filter(state, p, info)
    if out["filter"].get("worker", "-") is None:
        out["reserve"] = plugin.reserve(state, p, "worker")
        if out["reserve"] is None:
            out["pre_bind"] = plugin.pre_bind(state, p, "worker")
    out["state"], out["group_state"] = state, group_state
    return out


def stored(store, name: str = CLAIM):
    return store.get_object("ResourceClaim", name, "default")


def group_info(*pods, pg: PodGroup | None = None) -> QueuedPodGroupInfo:
    entity = QueuedPodGroupInfo(pg or pod_group())
    for p in pods:
        entity.add_pod(QueuedPodInfo(PodInfo(p)))
    return entity


# -- testPlugin rows: PreFilter to PreBind ---------------------------------------------------------
@pytest.mark.parametrize("name,gate,the_pod,the_group,want_reserved", [
    ("podgroup-claim-reference-feature-disabled-reserves-for-pod", False, grouped_pod(), pod_group(), POD_RESERVATION),
    ("podgroup-claim-reference", True, grouped_pod(), pod_group(), PG_RESERVATION),
    ("podgroup-claim-template", True,
     grouped(pod(tmpl(template=CLAIM), statuses=[{"name": "my-resource", "resourceClaimName": CLAIM}])),
     pod_group(template=True), PG_RESERVATION),
])
def test_allocated_claim_reserved_at_prebind(name, gate, the_pod, the_group, want_reserved):
    """An allocated claim (the group's): PreBind reserves it for the PodGroup with the gate, for
    the pod without; otherClaim is left alone."""
    plugin, store, batch = workload_setup([device_class(), ALLOCATED_PG_CLAIM, OTHER], (the_group,), gate=gate)
    out = run_plugin(plugin, the_pod, batch)
    assert out["pre_enqueue"] is None and out["pre_filter"] is None
    assert out["filter"] == {"worker": None}
    assert out["reserve"] is None and out["pre_bind"] is None
    assert list(stored(store).reserved_for) == [want_reserved]
    assert stored(store).allocation == ALLOCATED
    assert not stored(store, "not-my-claim").reserved_for


def test_claim_template_of_the_group_needs_the_gate():
    """With the gate off, a template claim owned by the PodGroup is not the pod's (IsForPod)."""
    p = grouped(pod(tmpl(template=CLAIM), statuses=[{"name": "my-resource", "resourceClaimName": CLAIM}]))
    plugin, _, batch = workload_setup([device_class(), ALLOCATED_PG_CLAIM], (pod_group(template=True),), gate=False)
    out = run_plugin(plugin, p, batch)
    want = (UUA, [f"ResourceClaim default/{CLAIM} was not created for Pod default/my-pod (Pod is not owner)"])
    assert reasons(out["pre_enqueue"]) == want and reasons(out["pre_filter"]) == want


def test_claim_template_owned_by_another_group():
    """With the gate, an owner that is not the pod's PodGroup: upstream's text naming the group."""
    p = grouped(pod(tmpl(template=CLAIM), statuses=[{"name": "my-resource", "resourceClaimName": CLAIM}]))
    other = group_claim(allocation=ALLOCATED, owner="pod:someone:4321")
    plugin, _, batch = workload_setup([device_class(), other], (pod_group(template=True),))
    out = run_plugin(plugin, p, batch)
    want = (UUA, [f"ResourceClaim default/{CLAIM} was not created for Pod default/my-pod (neither Pod nor PodGroup "
                  f"{PG} is the owner)"])
    assert reasons(out["pre_enqueue"]) == want and reasons(out["pre_filter"]) == want


@pytest.mark.parametrize("name,gate,want_reserved", [
    ("podgroup-with-resources", True, PG_RESERVATION),
    ("podgroup-with-resources-feature-disabled-reserves-for-pod", False, POD_RESERVATION),
])
def test_pending_claim_allocated_and_reserved(name, gate, want_reserved):
    """A pending claim of the group: Reserve puts the allocation in flight (and in the group
    cycle's pending allocations), PreBind writes it with the finalizer and the reservation."""
    plugin, store, batch = workload_setup([device_class(), PENDING_PG_CLAIM, worker_slice(devices=2)], gate=gate)
    out = run_plugin(plugin, grouped_pod(), batch)
    assert out["filter"] == {"worker": None} and out["reserve"] is None and out["pre_bind"] is None
    claim = stored(store)
    assert list(claim.reserved_for) == [want_reserved]
    assert claim.allocation is not None and "resource.kubernetes.io/delete-protection" in claim.finalizers
    assert not plugin.manager.claim_has_pending_allocation(claim.uid)  # out of flight once PreBind succeeded


def test_bind_podgroup_failure_unreserve_keeps_the_group():
    """"bind-podgroup-failure": after PreBind reserved the claim for the group, Unreserve (the
    binding failed later) leaves the group's entry: other members may still need the claim."""
    plugin, store, batch = workload_setup([device_class(), ALLOCATED_PG_CLAIM])
    p = grouped_pod()
    out = run_plugin(plugin, p, batch)
    assert out["pre_bind"] is None
    assert list(stored(store).reserved_for) == [PG_RESERVATION]
    plugin.unreserve(out["state"], p, "worker")
    assert list(stored(store).reserved_for) == [PG_RESERVATION]


def test_unreserve_removes_the_pods_own_reservation():
    """The same walk with the gate off: the pod's entry is removed by Unreserve (its counterpart)."""
    plugin, store, batch = workload_setup([device_class(), ALLOCATED_PG_CLAIM], gate=False)
    p = grouped_pod()
    out = run_plugin(plugin, p, batch)
    assert list(stored(store).reserved_for) == [POD_RESERVATION]
    plugin.unreserve(out["state"], p, "worker")
    assert list(stored(store).reserved_for) == []


def test_reserved_okay_podgroup():
    """"reserved-okay-podgroup": a claim reserved for the pod's group is its own: nothing to
    write at PreBind."""
    plugin, store, batch = workload_setup([device_class(), IN_USE_BY_PG])
    before = stored(store)
    out = run_plugin(plugin, grouped_pod(), batch)
    assert out["pre_filter"] is None and out["filter"] == {"worker": None}
    assert out["reserve"] is None and out["pre_bind"] is None
    assert stored(store) is before


@pytest.mark.parametrize("name,gate,claim_,members,want_status,want_deallocated", [
    ("postfilter-deallocate-reserved-podgroup", True, WRONG_TOPOLOGY_PG_CLAIM, (), PG_DEALLOCATED, True),
    ("postfilter-skip-deallocate-reserved-podgroup-feature-disabled", False, WRONG_TOPOLOGY_PG_CLAIM, (), DONE, False),
    ("postfilter-deallocate-unreserved-podgroup", True,
     group_claim(allocation=WRONG_TOPOLOGY, reserved_for=[]), (), DONE, True),
    ("postfilter-skip-deallocate-reserved-podgroup-when-pods-active", True, WRONG_TOPOLOGY_PG_CLAIM,
     (grouped_pod("my-pod-2", "1234-2", node="worker"),), DONE, False),
])
def test_pod_group_post_filter_rows_of_test_plugin(name, gate, claim_, members, want_status, want_deallocated):
    p = grouped_pod()
    plugin, store, batch = workload_setup([device_class(), claim_], members=(p, *members), gate=gate)
    out = run_plugin(plugin, p, batch)
    assert reasons(out["filter"]["worker"]) == (UUA, [NOT_AVAILABLE])
    _, status = plugin.pod_group_post_filter(out["group_state"], group_info(p), None)
    assert reasons(status) == (Code.UNSCHEDULABLE, [want_status])
    claim = stored(store)
    if want_deallocated:
        assert claim.allocation is None and not claim.reserved_for
    else:
        assert claim is claim_ or claim == claim_


# -- TestPodGroupPostFilter -------------------------------------------------------------------------
IN_USE_BY_POD = group_claim(owner=f"pod:my-pod:{POD_UID}", allocation=ALLOCATED, reserved_for=[POD_RESERVATION])
PODLEVEL_POD = grouped_pod("my-pod-podlevel", "1234-podlevel", entry=ref("my-resource-2", CLAIM_2))
IN_USE_FOR_PODLEVEL = group_claim(CLAIM_2, owner="pod:my-pod-podlevel:1234-podlevel", allocation=ALLOCATED,
                                  reserved_for=[{"resource": "pods", "name": "my-pod-podlevel", "uid": "1234-podlevel"}])


def post_filter_state(plugin, pods, unavailable: tuple[str, ...]):
    """The group CycleState TestPodGroupPostFilter builds: each member's claims, those named
    unavailable on every node."""
    data = _PodGroupStateData()
    for p in pods:
        s = _StateData()
        s.claims = pod_claims(plugin.manager, p, plugin.workload_claims)
        s.num_user_claims = len(s.claims)
        s.unavailable_claims = {i for i, c in enumerate(s.claims) if c.name in unavailable}
        data.pods_state_data[(p.namespace, p.name)] = s
    state = CycleState()
    state.write(STATE_KEY, data)
    return state


@pytest.mark.parametrize("name,gate,topology,claims,pods,unavailable,want_status,check", [
    ("deallocate-pod-level-claim", True, False, (IN_USE_BY_POD,), (grouped_pod(),), (CLAIM,), DONE,
     {CLAIM: (False, [])}),
    ("deallocate-podgroup-level-claim", True, False, (IN_USE_BY_PG,), (grouped_pod(),), (CLAIM,), PG_DEALLOCATED,
     {CLAIM: (False, [])}),
    ("unreserve-podgroup-claim", True, False, (IN_USE_BY_PG,), (grouped_pod(),), (), PG_UNRESERVED,
     {CLAIM: (True, [])}),
    ("unreserve-podgroup-multiple-unscheduled-pods", True, False, (IN_USE_BY_PG,),
     (grouped_pod(), grouped_pod("my-pod-2", "1234-2")), (), PG_UNRESERVED, {CLAIM: (True, [])}),
    ("mixed-pod-level-and-podgroup-claims", True, False, (IN_USE_BY_PG, IN_USE_FOR_PODLEVEL),
     (grouped_pod(), PODLEVEL_POD), (CLAIM_2,), PG_UNRESERVED, {CLAIM: (True, []), CLAIM_2: (False, [])}),
    ("skip-deallocate-feature-disabled", False, False, (IN_USE_BY_PG,), (grouped_pod(),), (), DONE,
     {CLAIM: (True, [PG_RESERVATION])}),
    ("skip-deallocate-topology-aware-podgroup", True, True, (IN_USE_BY_PG,), (grouped_pod(),), (), None,
     {CLAIM: (True, [PG_RESERVATION])}),
])
def test_pod_group_post_filter(name, gate, topology, claims, pods, unavailable, want_status, check):
    pg = pod_group(constraints=topology)
    plugin, store, _ = workload_setup([device_class(), *claims], (pg,), members=pods, gate=gate,
                                      topology_aware=topology)
    state = post_filter_state(plugin, pods, unavailable)
    _, status = plugin.pod_group_post_filter(state, group_info(*pods, pg=pg), None)
    # (upstream's row writes Unschedulable for the unreserve message, which statusUnschedulable
    # makes UnschedulableAndUnresolvable: its ErrorContains compares the text only)
    code = UUA if want_status == PG_UNRESERVED else Code.UNSCHEDULABLE
    assert reasons(status) == (code, [want_status] if want_status else [])
    for claim_name, (allocated, reserved) in check.items():
        claim = stored(store, claim_name)
        assert (claim.allocation is not None, list(claim.reserved_for)) == (allocated, reserved)


def test_pod_group_claim_reserved_with_others_is_not_deallocated():
    """A group claim unavailable everywhere but reserved for the group *and* a pod: neither
    deallocated nor (not reserved for the group alone) -- the group's entry is removed instead."""
    pod_entry = {"resource": "pods", "name": "x", "uid": "x"}
    claim = group_claim(allocation=WRONG_TOPOLOGY, reserved_for=[PG_RESERVATION, pod_entry])
    p = grouped_pod()
    plugin, store, _ = workload_setup([device_class(), claim], members=(p,))
    state = post_filter_state(plugin, (p,), (CLAIM,))
    _, status = plugin.pod_group_post_filter(state, group_info(p), None)
    assert reasons(status) == (UUA, [PG_UNRESERVED])
    assert (stored(store).allocation, list(stored(store).reserved_for)) == (WRONG_TOPOLOGY, [pod_entry])


# -- PreFilter: the bindings -----------------------------------------------------------------------
def test_member_of_an_unknown_pod_group_is_unschedulable():
    """podResourceClaimBindings asks the snapshot for the PodGroup, claims or not."""
    plugin, _, batch = workload_setup([device_class(), ALLOCATED_PG_CLAIM], pod_groups=())
    for p in (grouped_pod(), grouped(pod())):
        _, status = plugin.pre_filter(CycleState(), p, list(batch))
        assert reasons(status) == (UUA, [f"pod group state not found for pod group podgroup/default/{PG}"])
    _, status = plugin.pre_filter(CycleState(), pod(), list(batch))  # (not a member: no lookup)
    assert status.code() == Code.SKIP
    plugin, _, batch = workload_setup([device_class(), ALLOCATED_PG_CLAIM], pod_groups=(), gate=False)
    assert plugin.pre_filter(CycleState(), grouped_pod(), list(batch))[1] is None


def test_group_claim_without_source_is_unschedulable():
    """BindTo's ErrAPIUnsupported for a group entry naming neither a claim nor a template."""
    pg = PodGroup(name=PG, namespace="default", uid=PG_UID, resource_claims=(PodGroupResourceClaim("x"),))
    plugin, _, batch = workload_setup([device_class(), ALLOCATED_PG_CLAIM], (pg,))
    _, status = plugin.pre_filter(CycleState(), grouped_pod(), list(batch))
    assert reasons(status) == (UUA, [f"PodGroup default/{PG} claim x: none of the supported fields are set"])


def test_entry_equal_in_name_only_binds_to_the_pod():
    """A pod entry naming the group's claim under another entry name is the pod's own."""
    p = grouped_pod(entry=ref("other-name", CLAIM))
    plugin, store, batch = workload_setup([device_class(), ALLOCATED_PG_CLAIM])
    out = run_plugin(plugin, p, batch)
    assert out["pre_bind"] is None
    assert list(stored(store).reserved_for) == [POD_RESERVATION]


def test_binding_index_counts_the_pods_entries():
    """claimStore.getBinding indexes the bindings by spec entry, the claims by the ones found: an
    entry whose claim was not needed shifts the next claim onto its binding (upstream's)."""
    p = grouped(pod(tmpl("skipped", "t"), ref(), statuses=[{"name": "skipped"}]))
    plugin, store, batch = workload_setup([device_class(), ALLOCATED_PG_CLAIM])
    out = run_plugin(plugin, p, batch)
    assert out["pre_bind"] is None
    # the found claim (index 0) takes the binding of entry 0, "skipped": the pod's
    assert list(stored(store).reserved_for) == [POD_RESERVATION]
    assert out["state"].read(STATE_KEY).bindings == [POD_RESERVATION, PG_RESERVATION]
