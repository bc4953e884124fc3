"""Claims shared by the members of one pod group scheduling cycle (v1.37.2, GenericWorkload):
``podGroupStateData.pendingAllocations`` in ``dynamicresources.go`` and the sharers of
``inFlightAllocation`` in ``dra_manager.go``.

Transcribed: ``dra_manager_test.go`` ``TestSignalClaimPendingAllocation``,
``TestGetPendingAllocation``, ``TestMaybeRemoveClaimPendingAllocation`` (every row), and
``dynamicresources_test.go`` ``TestPreFilterReusesPendingAllocationWithNilNodeSelector`` (upstream
writes it with a PodGroup claim, DRAWorkloadResourceClaims on; the reuse it tests is
GenericWorkload's, so here the member names the claim itself) and the testPlugin row
``bind-failure-preserves-inflight-until-unreserve`` (in ``test_dynamic_resources.py``).
``TestFilterReusesPendingAllocationRequiresDRAOptionalNodeOperations`` is in
``tests/dra/test_optional_node_operations.py``. The rest walks a group cycle through the plugin as the scheduler
calls it: PreFilter reusing, Filter appending the pending results after the fresh ones, Score and
Reserve pairing that list with the claims in order (the swap), Unreserve dropping one share,
PreBind of the second sharer failing."""
from __future__ import annotations

from types import SimpleNamespace

import pytest

from fastsched.api.resource import claim_with_status, parse_resource_claim
from fastsched.config.args import DynamicResourcesArgs
from fastsched.framework.cycle_state import CycleState
from fastsched.framework.objects import ObjectStore
from fastsched.framework.status import Code
from fastsched.plugins.dynamicresources import (POD_GROUP_CYCLE_KEY, STATE_KEY, DynamicResources, _node_score,
                                                _StateData)
from fastsched.plugins.dynamicresources.manager import DRAManager

from .test_dynamic_resources import (CLASS, DRIVER, UUA, allocation_on, claim, device_class, pod, ref, setup,
                                     worker_slice)

CLAIM_UID = "uid-claim"
OTHER_UID = "uid-other"
SHARED = "shared"
IN_PROCESS = "resource claim default/shared is in the process of being allocated"


def _allocated(name: str = "claim", device: str = "instance-0"):
    return claim(name, allocation=allocation_on("worker", device))


# -- dra_manager_test.go ----------------------------------------------------------------------------
def _tracker(cached=(), in_flight=None):
    store = ObjectStore(list(cached))
    manager = DRAManager(store)
    for uid, (c, sharers) in (in_flight or {}).items():
        manager.in_flight[uid] = c
        manager.in_flight_sharers[uid] = sharers
    return manager


def _in_flight(manager):
    return {uid: (c, manager.in_flight_sharers[uid]) for uid, c in manager.in_flight.items()}


ALLOCATED = claim_with_status(claim("claim"), allocation=allocation_on("worker"))
ALLOCATED_2 = claim_with_status(claim("claim-2"), allocation=allocation_on("worker", "instance-1"))
PENDING_CACHED = claim("claim")  # uid-claim, unallocated in the API


@pytest.mark.parametrize("name,in_flight,cached,allocated,want", [
    ("empty", None, [PENDING_CACHED], ALLOCATED, {CLAIM_UID: (ALLOCATED, 1)}),
    ("claim-already-allocated", None, [ALLOCATED], ALLOCATED, {}),
    ("extended-resource-claim-not-in-cache", None, [],
     ALLOCATED.replace(name="<extended-resources>"),
     {CLAIM_UID: (ALLOCATED.replace(name="<extended-resources>"), 1)}),
    ("already-exists", {CLAIM_UID: (ALLOCATED, 1), OTHER_UID: (ALLOCATED_2, 10)}, [], ALLOCATED,
     {CLAIM_UID: (ALLOCATED, 2), OTHER_UID: (ALLOCATED_2, 10)}),
    ("already-exists-ignores-different-claim-argument", {CLAIM_UID: (ALLOCATED, 1)}, [], ALLOCATED_2,
     {CLAIM_UID: (ALLOCATED, 2)}),
])
def test_signal_claim_pending_allocation(name, in_flight, cached, allocated, want):
    manager = _tracker(cached, in_flight)
    manager.signal_claim_pending_allocation(CLAIM_UID, allocated)
    assert _in_flight(manager) == want


@pytest.mark.parametrize("name,in_flight,want", [
    ("empty", None, None),
    ("nil-claim", {CLAIM_UID: (None, 0)}, None),
    ("claim", {CLAIM_UID: (ALLOCATED, 1), OTHER_UID: (ALLOCATED_2, 10)}, ALLOCATED.allocation),
])
def test_get_pending_allocation(name, in_flight, want):
    manager = _tracker((), in_flight)
    before = _in_flight(manager)
    assert manager.get_pending_allocation(CLAIM_UID) == want
    assert _in_flight(manager) == before  # strictly read-only


@pytest.mark.parametrize("name,in_flight,force,want,want_in_flight", [
    ("empty", None, True, False, {}),
    ("delete-last-sharer", {CLAIM_UID: (ALLOCATED, 1), OTHER_UID: (ALLOCATED_2, 10)}, False, True,
     {OTHER_UID: (ALLOCATED_2, 10)}),
    ("force-delete-last-sharer", {CLAIM_UID: (ALLOCATED, 1), OTHER_UID: (ALLOCATED_2, 10)}, True, True,
     {OTHER_UID: (ALLOCATED_2, 10)}),
    ("decrement-remaining-sharers", {CLAIM_UID: (ALLOCATED, 2), OTHER_UID: (ALLOCATED_2, 10)}, False, False,
     {CLAIM_UID: (ALLOCATED, 1), OTHER_UID: (ALLOCATED_2, 10)}),
    ("force-delete-remaining-sharers", {CLAIM_UID: (ALLOCATED, 2), OTHER_UID: (ALLOCATED_2, 10)}, True, True,
     {OTHER_UID: (ALLOCATED_2, 10)}),
])
def test_maybe_remove_claim_pending_allocation(name, in_flight, force, want, want_in_flight):
    manager = _tracker((), in_flight)
    assert manager.remove_claim_pending_allocation(CLAIM_UID, force=force) is want
    assert _in_flight(manager) == want_in_flight


def test_shares_hold_the_devices_once():
    """The indexed manager holds an in-flight allocation's devices once, whatever its sharers,
    and frees them with the allocation."""
    store = ObjectStore([PENDING_CACHED])
    store.object_listeners = []
    manager = DRAManager(store)
    assert manager.incremental
    manager.signal_claim_pending_allocation(CLAIM_UID, ALLOCATED)
    manager.signal_claim_pending_allocation(CLAIM_UID, ALLOCATED)
    device = (DRIVER, "worker", "instance-0")
    assert manager._held == {device: 1}
    assert not manager.remove_claim_pending_allocation(CLAIM_UID, force=False)
    assert manager._held == {device: 1}
    assert manager.remove_claim_pending_allocation(CLAIM_UID, force=False)
    assert device not in manager._held


# -- dynamicresources_test.go ------------------------------------------------------------------------
def test_prefilter_reuses_pending_allocation_with_nil_node_selector():
    """TestPreFilterReusesPendingAllocationWithNilNodeSelector: a pending allocation without a
    node selector is reused as it is (the same object), no node restriction."""
    plugin, _, batch = setup([device_class(), claim(SHARED), worker_slice()], nodes=("worker",))
    allocation = {**allocation_on("worker")}
    del allocation["nodeSelector"]
    pending = claim_with_status(claim(SHARED), allocation=allocation)
    plugin.manager.signal_claim_pending_allocation(pending.uid, pending)
    group_state = CycleState()
    p = pod(ref(claim=SHARED))
    state = _member_state(group_state)
    from fastsched.plugins.dynamicresources import _get_or_create_pod_group_state

    _get_or_create_pod_group_state(group_state).pending_allocations[pending.uid] = {p.uid}
    _, status = plugin.pre_filter(state, p, list(batch))
    assert status is None
    s = state.read(STATE_KEY)
    assert s.allocations[0] is pending.allocation
    assert s.available_on_nodes[0] is None
    assert s.allocator is not None and s.to_allocate == [0] and s.reused == [0]


# -- a group cycle through the plugin -------------------------------------------------------------
def _member_state(group_state: CycleState) -> CycleState:
    state = CycleState()
    state.write(POD_GROUP_CYCLE_KEY, group_state)
    return state


def _member(name: str, *claims: str):
    return pod(*(ref(name=f"r-{c}", claim=c) for c in claims), name=name, uid=f"uid-{name}")


def _cycle(plugin, batch, state, p):
    _, status = plugin.pre_filter(state, p, list(batch))
    if status is not None:
        return status, {}
    return None, {info.node().name: plugin.filter(state, p, info) for info in batch}


def _devices(allocation):
    return [r["device"] for r in allocation["devices"]["results"]]


def test_members_share_a_pending_allocation():
    plugin, _, batch = setup([device_class(), claim(SHARED), worker_slice(devices=2)])
    group_state = CycleState()
    a, b = _member("a", SHARED), _member("b", SHARED)
    sa, sb = _member_state(group_state), _member_state(group_state)
    status, filtered = _cycle(plugin, batch, sa, a)
    assert status is None and filtered["worker"] is None
    assert plugin.reserve(sa, a, "worker") is None
    group = group_state.read(STATE_KEY)
    uid = "uid-" + SHARED
    assert group.pending_allocations == {uid: {"uid-a"}}
    assert plugin.manager.in_flight_sharers == {uid: 1}

    status, filtered = _cycle(plugin, batch, sb, b)
    assert status is None
    s = sb.read(STATE_KEY)
    assert s.reused == [0] and s.allocator is not None
    assert _devices(s.allocations[0]) == ["instance-0"]
    # the pending allocation's node selector: only its node
    assert filtered["worker"] is None
    assert (filtered["worker-2"].code(), filtered["worker-2"].reasons()) == (UUA, ["resourceclaim not available on "
                                                                                   "the node"])
    assert s.node_allocations["worker"] == [plugin.manager.get_pending_allocation(uid)]
    assert plugin.reserve(sb, b, "worker") is None
    assert group.pending_allocations == {uid: {"uid-a", "uid-b"}}
    assert plugin.manager.in_flight_sharers == {uid: 2}

    # the group fails: Unreserve drops one share each; the last one ends the pending allocation
    plugin.unreserve(sb, b, "worker")
    assert plugin.manager.in_flight_sharers == {uid: 1} and group.pending_allocations == {uid: {"uid-a", "uid-b"}}
    plugin.unreserve(sa, a, "worker")
    assert not plugin.manager.in_flight and group.pending_allocations == {}


def test_a_pending_allocation_of_another_cycle_is_waited_for():
    """Only this group cycle's pending allocations are shared: a pod outside a group cycle, and a
    member of another group cycle, answer as before."""
    plugin, _, batch = setup([device_class(), claim(SHARED), worker_slice(devices=2)])
    a = _member("a", SHARED)
    sa = _member_state(CycleState())
    _cycle(plugin, batch, sa, a)
    assert plugin.reserve(sa, a, "worker") is None
    for state in (CycleState(), _member_state(CycleState())):
        status, _ = _cycle(plugin, batch, state, _member("b", SHARED))
        assert (status.code(), status.reasons()) == (UUA, [IN_PROCESS])


def test_a_released_pending_allocation_is_no_longer_reused():
    """Unreserve of the last sharer removes the claim from the group's pending allocations: the
    next member allocates it anew."""
    plugin, _, batch = setup([device_class(), claim(SHARED), worker_slice(devices=2)])
    group_state = CycleState()
    a, b = _member("a", SHARED), _member("b", SHARED)
    sa, sb = _member_state(group_state), _member_state(group_state)
    _cycle(plugin, batch, sa, a)
    plugin.reserve(sa, a, "worker")
    plugin.unreserve(sa, a, "worker")
    status, filtered = _cycle(plugin, batch, sb, b)
    assert status is None and sb.read(STATE_KEY).reused == []
    assert filtered["worker"] is None


def _two_claims(order: str):
    """Members a and b, each with the shared claim and one of its own (``order``: which first)."""
    plugin, store, batch = setup([device_class(), claim(SHARED), claim("own-a"), claim("own-b"),
                                  worker_slice(devices=3)], nodes=("worker",))
    group_state = CycleState()
    claims = {"shared-first": ((SHARED, "own-a"), (SHARED, "own-b")),
              "shared-last": (("own-a", SHARED), ("own-b", SHARED))}[order]
    a, b = _member("a", *claims[0]), _member("b", *claims[1])
    sa, sb = _member_state(group_state), _member_state(group_state)
    _cycle(plugin, batch, sa, a)
    assert plugin.reserve(sa, a, "worker") is None
    status, filtered = _cycle(plugin, batch, sb, b)
    assert status is None and filtered == {"worker": None}
    return plugin, store, (a, sa), (b, sb)


def test_filter_appends_pending_results_and_reserve_swaps_them():
    """Claims [shared, own]: Filter's list is [own's fresh result, shared's pending one], which
    Reserve pairs with the claims in order -- the shared claim gets the fresh devices (ignored:
    its allocation is already in flight, one more sharer), the own claim goes in flight with the
    shared claim's devices -- as upstream's running index does."""
    plugin, _, (a, sa), (b, sb) = _two_claims("shared-first")
    s = sb.read(STATE_KEY)
    assert s.reused == [0] and s.to_allocate == [0, 1]
    assert [_devices(x) for x in s.node_allocations["worker"]] == [["instance-2"], ["instance-0"]]
    assert plugin.reserve(sb, b, "worker") is None
    assert [_devices(x) for x in s.allocations] == [["instance-2"], ["instance-0"]]
    manager = plugin.manager
    assert _devices(manager.get_pending_allocation("uid-" + SHARED)) == ["instance-0"]
    assert _devices(manager.get_pending_allocation("uid-own-b")) == ["instance-0"]
    assert manager.in_flight_sharers == {"uid-" + SHARED: 2, "uid-own-a": 1, "uid-own-b": 1}


def test_filter_appends_pending_results_in_claim_order_without_swap():
    plugin, _, (a, sa), (b, sb) = _two_claims("shared-last")
    s = sb.read(STATE_KEY)
    assert s.reused == [1]
    assert [_devices(x) for x in s.node_allocations["worker"]] == [["instance-2"], ["instance-1"]]
    assert plugin.reserve(sb, b, "worker") is None
    assert _devices(plugin.manager.get_pending_allocation("uid-own-b")) == ["instance-2"]


def test_second_sharer_fails_prebind_allocated_elsewhere():
    """The binding cycles: the first member's PreBind writes the shared claim and ends its
    pending allocation (forced, whatever the sharers); the second member's PreBind finds the
    claim allocated (upstream: a resourceVersion Conflict on the claim read in PreFilter, then the
    re-read one; kubernetes/kubernetes#140053); its own claim stays in flight until Unreserve."""
    plugin, store, (a, sa), (b, sb) = _two_claims("shared-first")
    assert plugin.reserve(sb, b, "worker") is None
    for state in (sa, sb):
        state.delete(POD_GROUP_CYCLE_KEY)  # SetPodGroupSchedulingCycle(nil) before binding
    assert plugin.pre_bind(sa, a, "worker") is None
    shared = store.get_object("ResourceClaim", SHARED, "default")
    assert _devices(shared.allocation) == ["instance-0"]
    assert [r["uid"] for r in shared.reserved_for] == ["uid-a"]
    assert set(plugin.manager.in_flight) == {"uid-own-b"}
    status = plugin.pre_bind(sb, b, "worker")
    assert (status.code(), status.message()) == (Code.ERROR, "claim default/shared got allocated elsewhere in "
                                                             "the meantime")
    assert [r["uid"] for r in store.get_object("ResourceClaim", SHARED, "default").reserved_for] == ["uid-a"]
    assert store.get_object("ResourceClaim", "own-b", "default").allocation is None
    assert set(plugin.manager.in_flight) == {"uid-own-b"}
    plugin.unreserve(sb, b, "worker")
    assert not plugin.manager.in_flight


def test_score_walks_the_combined_list_in_claim_order():
    """computeScore with one running index over Filter's list: with the reused claim first, the
    prioritized-list claim is scored against the other claim's fresh result (upstream's order)."""
    first_available = parse_resource_claim({
        "metadata": {"name": SHARED, "namespace": "default", "uid": "uid-" + SHARED},
        "spec": {"devices": {"requests": [{"name": "req", "firstAvailable": [
            {"name": "big", "deviceClassName": CLASS}, {"name": "small", "deviceClassName": CLASS}]}]}}})
    own = claim("own")
    pending = {"devices": {"results": [{"request": "req/small", "driver": DRIVER, "pool": "worker",
                                        "device": "instance-0"}]}}
    fresh = {"devices": {"results": [{"request": "req-1", "driver": DRIVER, "pool": "worker",
                                      "device": "instance-1"}]}}
    s = _StateData()
    s.allocator = object()  # (any allocator: Score reads Filter's results only)
    s.claims = [first_available, own]
    s.node_allocations["worker"] = [fresh, pending]  # Filter: fresh results, then the pending ones
    assert _node_score(s, "worker") == 0  # the subrequest's result is paired with the own claim
    s.claims = [own, first_available]
    assert _node_score(s, "worker") == 7  # in order: "small", the second subrequest, 8 - 1


def test_plugin_is_built_with_the_manager_sharers():
    plugin = DynamicResources(DynamicResourcesArgs(), SimpleNamespace(client=ObjectStore([])))
    assert plugin.manager.in_flight_sharers == {}


def _setup_indexed(objects, indexed):
    """``setup`` on one node; ``indexed``: the manager the scheduler builds (its allocator reads the
    live held devices, so devices going in flight after PreFilter are seen by a later Filter)."""
    from fastsched.snapshot import build_snapshot
    from fastsched.testing import make_node

    store = ObjectStore(objects)
    if indexed:
        store.object_listeners = []
    plugin = DynamicResources(DynamicResourcesArgs(), SimpleNamespace(client=store))
    assert plugin.manager.incremental is indexed
    return plugin, build_snapshot([make_node("worker")]).batch()


@pytest.mark.parametrize("indexed", [True, False])
def test_filter_after_reserve_reuses_the_states_allocations(indexed):
    """Workload-aware preemption's reprieve (podgrouppreemption.go reprieveVictim) runs Filter and
    Reserve again on the members' states of the group algorithm's run, after that run's Unreserve.
    Upstream's Reserve left ``informationsForClaim[index].allocation`` set on every claim it
    allocated, and Filter takes each such claim as a pending allocation, out of the allocator: the
    members fit again, however often the reprieve is tried. From differential scenario
    gangs-policy-78700199 (four members, each with a shared claim and an own one, on a node of four
    GPUs): fastsched allocated the own claims afresh, the devices drifted from one reprieve to the
    next (Reserve's swapped pairing), the fourth member no longer fit in the second reprieve and all
    four victims were preempted where upstream preempts none."""
    own = [f"own-{i}" for i in range(4)]
    plugin, batch = _setup_indexed([device_class(), claim(SHARED), *(claim(c) for c in own),
                                    worker_slice(devices=4)], indexed)
    group_state = CycleState()
    members = [(_member(f"m{i}", SHARED, c), _member_state(group_state)) for i, c in enumerate(own)]
    for p, state in members:  # the group algorithm: each member filtered and reserved in turn
        status, filtered = _cycle(plugin, batch, state, p)
        assert status is None and filtered == {"worker": None}
        assert plugin.reserve(state, p, "worker") is None
    for p, state in reversed(members):  # ... then reverted
        plugin.unreserve(state, p, "worker")
    assert not plugin.manager.in_flight
    (worker,) = list(batch)
    for _ in range(3):  # one reprieve per victim: Filter and Reserve on the same states, then Unreserve
        for p, state in members:
            assert plugin.filter(state, p, worker) is None, p.name
            assert plugin.reserve(state, p, "worker") is None
        for p, state in reversed(members):
            plugin.unreserve(state, p, "worker")
        assert not plugin.manager.in_flight
    s = members[0][1].read(STATE_KEY)
    assert s.after_reserve == s.to_allocate == [0, 1]  # every claim Reserve allocated is pending now


@pytest.mark.parametrize("indexed", [True, False])
def test_filter_after_reserve_does_not_ask_the_allocator(indexed):
    """The smallest case: after Reserve and Unreserve, another claim takes the node's only device
    (in flight); Filter on the reserved state still passes -- the claim's allocation is the
    state's, not the allocator's -- as upstream's does. A new cycle's state finds the device taken."""
    plugin, batch = _setup_indexed([device_class(), claim("mine"), claim("theirs"), worker_slice(devices=1)],
                                   indexed)
    p, state = _member("a", "mine"), CycleState()
    status, filtered = _cycle(plugin, batch, state, p)
    assert status is None and filtered == {"worker": None}
    assert plugin.reserve(state, p, "worker") is None
    plugin.unreserve(state, p, "worker")
    other = claim_with_status(claim("theirs"), allocation=allocation_on("worker"))
    plugin.manager.signal_claim_pending_allocation(other.uid, other)
    (worker,) = list(batch)
    _, filtered = _cycle(plugin, batch, CycleState(), _member("b", "mine"))
    assert filtered["worker"].reasons() == ["cannot allocate all claims"]
    assert plugin.filter(state, p, worker) is None
    assert plugin.reserve(state, p, "worker") is None
    assert _devices(plugin.manager.get_pending_allocation("uid-mine")) == ["instance-0"]
