"""The DRA manager's claim listener (its indexes kept by every claim write): the status-write fast
paths (a write that keeps the allocation object, one that keeps the name, annotations and owner
references) leave the same indexes as building the manager afresh over the store, on seeded
random sequences of creates, status writes and deletes."""
from __future__ import annotations

import random

import pytest

from fastsched.api.resource import claim_with_status, parse_resource_claim
from fastsched.dra.extended_resources import EXTENDED_RESOURCE_CLAIM_ANNOTATION
from fastsched.plugins.dynamicresources.manager import DRAManager

from .test_vectorized import ListeningStore

DRIVER = "gpu.example.com"


def _claim(rng: random.Random, i: int):
    meta = {"name": f"c{i}", "namespace": "default"}
    if rng.random() < 0.7:
        meta["annotations"] = {EXTENDED_RESOURCE_CLAIM_ANNOTATION: rng.choice(["true", "true", "false"])}
    if rng.random() < 0.8:
        meta["ownerReferences"] = [{"apiVersion": "v1", "kind": "Pod", "name": f"p{rng.randrange(4)}",
                                    "uid": f"u{rng.randrange(4)}", "controller": rng.random() < 0.8}]
    return parse_resource_claim({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim", "metadata": meta,
                                 "spec": {"devices": {"requests": []}}})


def _allocation(rng: random.Random):
    results = []
    for k in range(rng.randrange(1, 4)):
        r = {"request": f"r{k}", "driver": DRIVER, "pool": f"n{rng.randrange(3)}", "device": f"d{rng.randrange(5)}"}
        if rng.random() < 0.2:
            r["adminAccess"] = True
        if rng.random() < 0.3:
            r["shareID"] = f"s{rng.randrange(100)}"
            if rng.random() < 0.5:
                r["consumedCapacity"] = {"memory": f"{rng.randrange(1, 4)}Gi"}
        results.append(r)
    return {"devices": {"results": results}}


def _state(m: DRAManager):
    extended = {owner: {key: id(c) for key, c in claims.items()} for owner, claims in m._extended_claims.items()}
    return dict(m._held), dict(m._shared), extended


@pytest.mark.parametrize("seed", range(30))
def test_listener_keeps_the_indexes_a_fresh_manager_builds(seed):
    rng = random.Random(seed)
    store = ListeningStore()
    manager = DRAManager(store)
    assert manager.incremental
    n = 0
    for _ in range(60):
        claims = store.list_objects("ResourceClaim")
        op = rng.random()
        if not claims or op < 0.25:
            store.add_object(_claim(rng, n))
            n += 1
        elif op < 0.85:
            c = rng.choice(claims)
            which = rng.random()
            if which < 0.3:  # the allocation kept (shared), the reservations changed
                store.update_object(claim_with_status(c, reserved_for=[{"resource": "pods", "name": "x",
                                                                        "uid": str(rng.random())}]))
            elif which < 0.6:
                store.update_object(claim_with_status(c, allocation=_allocation(rng)))
            elif which < 0.8:
                store.update_object(claim_with_status(c, allocation=None, reserved_for=[]))
            else:  # a write that changes the claim's metadata (a new owner, annotations)
                changed = _claim(rng, int(c.name[1:]))
                store.update_object(claim_with_status(changed, allocation=c.allocation))
        else:
            c = rng.choice(claims)
            store.delete_object("ResourceClaim", c.name, c.namespace)
        fresh = DRAManager(store)
        store.object_listeners.remove(fresh._object_changed)  # (a snapshot: it hears no more writes)
        assert _state(manager) == _state(fresh), seed


def _counted(claims) -> tuple[dict, dict]:
    """The held and shared device counts of ``claims`` (stored and in flight), from scratch."""
    from fastsched.plugins.dynamicresources.manager import _claim_held
    held: dict = {}
    shared: dict = {}
    for c in claims:
        devices, shares = _claim_held(c)
        for d in devices:
            held[d] = held.get(d, 0) + 1
        for d, _ in shares:
            shared[d] = shared.get(d, 0) + 1
    return held, shared


@pytest.mark.parametrize("seed", range(30))
def test_in_flight_allocations_and_writes_hold_what_a_count_from_scratch_holds(seed):
    # Reserve's in-flight copy, the status write and PreBind's end of the flight read one
    # allocation object in turn (the manager keeps the last one's devices): allocation objects
    # are reused across claims and writes here, interleaved with others, and the held counts
    # must stay those counted afresh from the stored and in-flight claims
    rng = random.Random(1000 + seed)
    store = ListeningStore()
    manager = DRAManager(store)
    pool = [_allocation(rng) for _ in range(4)]
    n = 0
    for _ in range(80):
        claims = store.list_objects("ResourceClaim")
        op = rng.random()
        allocation = rng.choice(pool) if rng.random() < 0.7 else _allocation(rng)
        if rng.random() < 0.2:
            pool[rng.randrange(len(pool))] = allocation
        if not claims or op < 0.2:
            store.add_object(_claim(rng, n))
            n += 1
        elif op < 0.45:
            c = rng.choice(claims)
            if c.uid not in manager.in_flight:
                manager.signal_claim_pending_allocation(c.uid, c.replace(allocation=allocation))
        elif op < 0.6:
            if manager.in_flight:
                manager.remove_claim_pending_allocation(rng.choice(sorted(manager.in_flight)))
        elif op < 0.9:
            c = rng.choice(claims)
            pending = manager.in_flight.get(c.uid)
            if pending is not None and rng.random() < 0.6:
                allocation = pending.allocation  # PreBind writes the allocation Reserve put in flight
            store.update_object(claim_with_status(c, allocation=allocation if rng.random() < 0.8 else None))
        else:
            c = rng.choice(claims)
            store.delete_object("ResourceClaim", c.name, c.namespace)
        expected = _counted([*store.list_objects("ResourceClaim"), *manager.in_flight.values()])
        assert (dict(manager._held), dict(manager._shared)) == expected, seed
