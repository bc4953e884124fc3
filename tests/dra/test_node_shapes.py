"""The allocator's node-shape cache (``NodeShapes``): nodes whose slices agree in everything but
names share one search per allocator, and each node still gets exactly the answer a search of its
own finds (its pools, its node selector). Checked on seeded random clusters with a few node shapes,
devices partly allocated, constraints, selectors, several pools and slices per node."""
from __future__ import annotations

import random

import pytest

from fastsched.dra.allocator import (Allocator, AllocatorError, Features, GroupAnswer, NodeShapes, SameShapeAnswer,
                                     relocated)

from .builders import claim, device, device_class, node, request, slice_

DRIVERS = ("driver-a", "driver-b")


def _devices(rng: random.Random, count: int) -> list[dict]:
    return [device(f"dev-{i}", capacity={"memory": rng.choice(["1Gi", "2Gi", "4Gi"])},
                   attributes={"numa": {"int": rng.randrange(2)}, "model": {"string": rng.choice("xy")}})
            for i in range(count)]


def _cluster(seed: int):
    """Nodes built from 3 random shapes (same device lists, own names), one shape with two pools
    of one driver or two slices in one pool; some nodes with a device of their own."""
    rng = random.Random(seed)
    shapes = []
    for _ in range(3):
        layout = rng.choice(["one", "two-pools", "two-slices", "two-drivers"])
        shapes.append((layout, _devices(rng, rng.randint(2, 6)), _devices(rng, rng.randint(1, 4))))
    nodes, slices = [], []
    for i in range(12):
        name = f"node-{i:02d}"
        nodes.append(node(name, "r1"))
        layout, first, second = shapes[i % 3] if i < 10 else (rng.choice(shapes)[0], _devices(rng, 3), _devices(rng, 2))
        if layout == "one":
            slices.append(slice_(f"{name}-s", name, f"{name}-p", "driver-a", *first))
        elif layout == "two-pools":
            slices.append(slice_(f"{name}-s1", name, f"{name}-p1", "driver-a", *first))
            slices.append(slice_(f"{name}-s2", name, f"{name}-p2", "driver-a", *second))
        elif layout == "two-slices":
            slices.append(slice_(f"{name}-s1", name, f"{name}-p", "driver-a", *first, count=2))
            slices.append(slice_(f"{name}-s2", name, f"{name}-p", "driver-a",
                                 *[dict(d, name=f"other-{j}") for j, d in enumerate(second)], count=2))
        else:
            slices.append(slice_(f"{name}-s1", name, f"{name}-p", "driver-a", *first))
            slices.append(slice_(f"{name}-s2", name, f"{name}-p", "driver-b", *second))
    held = {(s.driver, s.pool_name, d.name) for s in slices for d in s.devices if rng.random() < 0.05}
    return rng, nodes, slices, held


def _outcome(allocator, n, claims):
    try:
        return allocator.allocate(n, claims)
    except AllocatorError as e:  # (a CEL runtime error naming the node's own pool: never shared)
        return f"{type(e).__name__}: {e}"


def _claims(rng: random.Random):
    requests = [request(f"r{i}", rng.choice(["class-a", "class-b"]), rng.randint(1, 2),
                        *(['device.capacity["driver-a"].memory.compareTo(quantity("2Gi")) >= 0']
                          if rng.random() < 0.3 else []))
                for i in range(rng.randint(1, 3))]
    constraints = None
    if len(requests) > 1 and rng.random() < 0.6:
        constraints = [{"matchAttribute": "driver-a/numa"}]
    return [claim("c", *requests, constraints=constraints)]


@pytest.mark.parametrize("seed", range(40))
def test_nodes_of_one_shape_get_the_answer_of_their_own_search(seed):
    rng, nodes, slices, held = _cluster(seed)
    classes = {c.name: c for c in (device_class("class-a", "driver-a"), device_class("class-b", "driver-b"))}
    by_node = {n.name: [s for s in slices if s.node_name == n.name] for n in nodes}
    shared = NodeShapes()
    total_hits = 0
    for _ in range(4):  # several cycles over one NodeShapes, as the manager keeps it
        claims = _claims(rng)
        plain = Allocator(Features(), held, classes.get, lambda n: by_node[n.name])
        cached = Allocator(Features(), held, classes.get, lambda n: by_node[n.name])
        cached.shapes = shared
        hits = 0
        for n in nodes:
            want = _outcome(plain, n, claims)
            searched = cached.num_allocate_one_invocations
            got = _outcome(cached, n, claims)
            hits += cached.num_allocate_one_invocations == searched  # another node's search answered
            assert (relocated(got) if isinstance(got, list) else got) == want, n.name
            if isinstance(got, list):  # Score reads the request names of the unrelocated answer
                assert [[r["request"] for r in a["devices"]["results"]] for a in got] == \
                       [[r["request"] for r in a["devices"]["results"]] for a in want]
        assert cached.num_allocate_one_invocations <= plain.num_allocate_one_invocations
        if hits:
            assert cached.num_allocate_one_invocations < plain.num_allocate_one_invocations
        total_hits += hits
    assert total_hits > 0  # the clusters do have nodes of one shape


def test_one_search_per_shape_and_allocation_state():
    classes = {"class-a": device_class("class-a", "driver-a")}
    devices = [device(f"dev-{i}", attributes={"numa": {"int": i % 2}}) for i in range(4)]
    nodes = [node(f"n{i}", "r1") for i in range(5)]
    by_node = {n.name: [slice_(f"{n.name}-s", n.name, f"{n.name}-pool", "driver-a", *devices)] for n in nodes}
    held = {("driver-a", "n3-pool", "dev-0")}
    claims = [claim("c", request("r0", "class-a"), request("r1", "class-a"),
                    constraints=[{"matchAttribute": "driver-a/numa"}])]
    allocator = Allocator(Features(), held, classes.get, lambda n: by_node[n.name])
    allocator.shapes = NodeShapes()
    answers = [allocator.allocate(n, claims) for n in nodes]
    # n0 searched, n1 n2 n4 reuse it, n3 (dev-0 held) searched on its own
    assert [isinstance(a, SameShapeAnswer) for a in answers] == [False, True, True, False, True]
    picked = [[(r["pool"], r["device"]) for r in relocated(a)[0]["devices"]["results"]] for a in answers]
    assert picked[1] == [("n1-pool", "dev-0"), ("n1-pool", "dev-2")]
    assert picked[3] == [("n3-pool", "dev-1"), ("n3-pool", "dev-3")]
    assert relocated(answers[4])[0]["nodeSelector"]["nodeSelectorTerms"][0]["matchFields"][0]["values"] == ["n4"]


def test_group_answer_at_a_node_is_that_nodes_own_answer():
    """A batch Filter hands one GroupAnswer to every node of a shape group; ``at`` must give each
    node the answer its own search finds (its pools, its node selector), and ``relocated``, which
    cannot know the node's pools, must refuse it."""
    classes = {"class-a": device_class("class-a", "driver-a")}
    devices = [device(f"dev-{i}", attributes={"numa": {"int": i % 2}}) for i in range(4)]
    nodes = [node(f"n{i}", "r1") for i in range(3)]
    by_node = {n.name: [slice_(f"{n.name}-s", n.name, f"{n.name}-pool", "driver-a", *devices)] for n in nodes}
    claims = [claim("c", request("r0", "class-a"), request("r1", "class-a"),
                    constraints=[{"matchAttribute": "driver-a/numa"}])]
    own = [Allocator(Features(), set(), classes.get, lambda n: by_node[n.name]).allocate(n, claims) for n in nodes]
    group = GroupAnswer(own[0], "n0", (("driver-a", "n0-pool"),))
    for n, want in zip(nodes, own):
        assert group.at(n.name, (("driver-a", f"{n.name}-pool"),)) == want
    assert list(group) == own[0]  # what Score reads: the first node's results, request names alike
    with pytest.raises(TypeError):
        relocated(group)


def test_slices_not_bound_to_the_node_take_no_shape():
    classes = {"class-a": device_class("class-a", "driver-a")}
    shared = slice_("all", "ALL", "shared-pool", "driver-a", device("d0"))
    nodes = [node(f"n{i}", "r1") for i in range(3)]
    allocator = Allocator(Features(), set(), classes.get, lambda n: [shared])
    allocator.shapes = NodeShapes()
    answers = [allocator.allocate(n, [claim("c", request("r0", "class-a"))]) for n in nodes]
    assert not any(isinstance(a, SameShapeAnswer) for a in answers)
    assert all(a[0]["devices"]["results"][0]["pool"] == "shared-pool" for a in answers)


@pytest.mark.parametrize("seed", range(12))
def test_kept_node_keys_follow_devices_held_and_freed(seed):
    """``device_changed`` with the new held state updates the node's kept key in place (Reserve
    holds a device of the node it picked every cycle); each kept key must equal the key computed
    afresh, be one object with equal kept shapes, and a device listed on several nodes or twice on
    one (two slices of a pool naming it) must not leave a stale bit."""
    rng, nodes, slices, held = _cluster(seed)
    by_node: dict[str, list] = {}
    for s in slices:
        by_node.setdefault(s.node_name, []).append(s)
    if seed % 3 == 0:  # a device id listed twice on one node: its bit is not at one place
        by_node["node-00"] = [slice_("node-00-a", "node-00", "node-00-p", "driver-a", device("dup"), device("x"), count=2),
                              slice_("node-00-b", "node-00", "node-00-p", "driver-a", device("dup"), count=2)]
    shapes = NodeShapes()
    slices_for = lambda n: by_node.get(n.name, [])  # noqa: E731
    devices = sorted({(s.driver, s.pool_name, d.name) for ss in by_node.values() for s in ss for d in s.devices})
    for step in range(60):
        if step % 4:
            d = rng.choice(devices)
            now = d not in held
            (held.add if now else held.discard)(d)
            shapes.device_changed(d, now)
        for n in rng.sample(nodes, 6):
            kept = shapes.node_key(n, slices_for, lambda: held)
            assert kept == shapes.key(n, slices_for(n), held), (step, n.name)
        keys = [shapes.node_key(n, slices_for, lambda: held) for n in nodes]
        firsts: dict = {}
        for k in keys:
            if k is not None:
                assert firsts.setdefault(k[0], k[0]) is k[0]  # interned: equal shapes one object


class _Table:
    """What ``NodeShapes.columns`` reads of a node table: ``row_of``, ``live`` and
    ``node_version`` (rows freed by a removed node are taken again, as the node table does)."""

    def __init__(self, names):
        self.row_of = {name: i for i, name in enumerate(names)}
        self.live = [True] * len(names)
        self.node_version = 0


@pytest.mark.parametrize("seed", range(20))
def test_kept_shape_columns_agree_with_keys_computed_afresh(seed):
    """``NodeShapes.columns`` (the batch Filter groups nodes by these numbers and reads a node's
    pools there): after devices held, freed and dropped (``device_changed`` with None), nodes
    removed and added on the table (a freed row taken by another node), and slices changed
    (``clear``), every row whose number is kept has a fresh key with that shape and pools, -2
    only where the fresh key is None, and equal numbers only for equal fresh shapes."""
    rng, nodes, slices, held = _cluster(seed)
    by_node: dict[str, list] = {}
    for s in slices:
        by_node.setdefault(s.node_name, []).append(s)
    by_node["node-11"] = []  # a node without slices: no shape (-2 once asked)
    shapes = NodeShapes()
    slices_for = lambda n: by_node.get(n.name, [])  # noqa: E731
    devices = sorted({(s.driver, s.pool_name, d.name) for ss in by_node.values() for s in ss for d in s.devices})
    table = _Table([n.name for n in nodes])
    on_table = {n.name: n for n in nodes}
    off_table: list = []
    checked = 0
    for step in range(80):
        action = rng.random()
        if action < 0.5:
            d = rng.choice(devices)
            now = d not in held
            (held.add if now else held.discard)(d)
            shapes.device_changed(d, now)
        elif action < 0.6:
            shapes.device_changed(rng.choice(devices), None)  # (dropped: computed again when asked)
        elif action < 0.7 and len(on_table) > 4:
            name = rng.choice(sorted(on_table))  # removed; its row taken by an absent node or kept free
            off_table.append(on_table.pop(name))
            row = table.row_of.pop(name)
            table.node_version += 1
            if off_table and rng.random() < 0.7:
                back = off_table.pop(rng.randrange(len(off_table)))
                table.row_of[back.name] = row
                on_table[back.name] = back
                table.node_version += 1
        elif action < 0.73:
            shapes.clear()
        for n in rng.sample(sorted(on_table.values(), key=lambda x: x.name), min(5, len(on_table))):
            shapes.node_key(n, slices_for, lambda: held)
        numbers, pools = shapes.columns(table)
        assert len(numbers) == len(table.live)
        by_number: dict[int, tuple] = {}
        for name, row in table.row_of.items():
            number = int(numbers[row])
            fresh = shapes.key(on_table[name], slices_for(on_table[name]), held)
            if number == -2:
                assert fresh is None, (step, name)
            elif number >= 0:
                assert fresh is not None, (step, name)
                assert pools[row] == fresh[1], (step, name)
                assert by_number.setdefault(number, fresh[0]) == fresh[0], (step, name)
                checked += 1
            else:
                assert number == -1
        rows_on = set(table.row_of.values())
        assert all(int(numbers[r]) == -1 for r in range(len(numbers)) if r not in rows_on)
    assert checked > 100


@pytest.mark.parametrize("seed", range(16))
def test_devices_changed_at_once_leaves_what_one_by_one_leaves(seed):
    """``devices_changed`` (the manager tells a claim's devices held or freed at once) leaves the
    kept keys and columns the calls of ``device_changed`` one by one leave: same keys by node,
    the same pools and the same grouping of rows by number, and keys equal to those computed
    afresh. Batches of devices of one node (a claim's allocation), of several nodes, with a
    device listed twice on a node (its key dropped mid-batch), devices flipped back and forth."""
    rng, nodes, slices, held = _cluster(seed)
    by_node: dict[str, list] = {}
    for s in slices:
        by_node.setdefault(s.node_name, []).append(s)
    if seed % 4 == 0:  # a device id listed twice on one node
        by_node["node-00"] = [slice_("node-00-a", "node-00", "node-00-p", "driver-a", device("dup"), device("x"), count=2),
                              slice_("node-00-b", "node-00", "node-00-p", "driver-a", device("dup"), count=2)]
    slices_for = lambda n: by_node.get(n.name, [])  # noqa: E731
    devices = sorted({(s.driver, s.pool_name, d.name) for ss in by_node.values() for s in ss for d in s.devices})
    on_node: dict[str, list] = {}
    for ss in by_node.values():
        for s in ss:
            on_node.setdefault(s.node_name, []).extend((s.driver, s.pool_name, d.name) for d in s.devices)
    one, batched = NodeShapes(), NodeShapes()
    table = _Table([n.name for n in nodes])
    held_one, held_batch = set(held), set(held)
    for step in range(60):
        if rng.random() < 0.5:  # a claim's devices: several of one node
            pool = sorted(set(on_node[rng.choice(sorted(on_node))]))
            chosen = rng.sample(pool, min(len(pool), rng.randint(1, 5)))
        else:
            chosen = rng.sample(devices, rng.randint(1, 6))
        changes = []
        for d in chosen:
            now = d not in held_one
            (held_one.add if now else held_one.discard)(d)
            one.device_changed(d, now)
            changes.append((d, now))
        if rng.random() < 0.2:
            changes.append(changes[0])  # the same device again, same state: nothing more changes
        for d, now in changes:
            (held_batch.add if now else held_batch.discard)(d)
        batched.devices_changed(changes)
        if rng.random() < 0.1:
            d = rng.choice(devices)
            one.device_changed(d, None)
            batched.device_changed(d, None)
        assert held_one == held_batch
        for n in rng.sample(nodes, 6):
            assert one.node_key(n, slices_for, lambda: held_one) == batched.node_key(n, slices_for, lambda: held_batch)
        assert one._node_keys == batched._node_keys, step
        for name, key in batched._node_keys.items():
            assert key == batched.key(next(n for n in nodes if n.name == name), slices_for(
                next(n for n in nodes if n.name == name)), held_batch), (step, name)
        (n1, p1), (n2, p2) = one.columns(table), batched.columns(table)
        assert list(p1) == list(p2)
        assert [a < 0 and a for a in n1] == [b < 0 and b for b in n2]
        groups1 = {r: [s for s in range(len(n1)) if n1[s] == n1[r]] for r in range(len(n1)) if n1[r] >= 0}
        groups2 = {r: [s for s in range(len(n2)) if n2[s] == n2[r]] for r in range(len(n2)) if n2[r] >= 0}
        assert groups1 == groups2, step
