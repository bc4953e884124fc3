"""Answers kept across cycles (``NodeShapes.answers``) are keyed without the names of the classes
a claim's requests name when those classes have no config (``NodeShapes.class_blind``): classes
selecting with the same CEL give the same devices on nodes of one shape, so the 25-50 classes of
scheduler_perf's DRA extended-resource cases share one search per shape (issue 27). Checked
against a fresh search on every node for every cycle, on seeded random clusters with classes of
equal selectors, one of them with config (copied into the allocation, so never shared), and one
selecting another driver."""
from __future__ import annotations

import random

import pytest

from fastsched.dra.allocator import Allocator, AllocatorError, Features, NodeShapes, relocated

from .builders import claim, device, device_class, node, opaque, request, slice_

#: name -> (driver its selector names, config)
CLASSES = {"gpu-0": ("driver-a", None), "gpu-1": ("driver-a", None), "gpu-2": ("driver-a", None),
           "gpu-cfg": ("driver-a", [{"opaque": opaque("driver-a", "mode")["opaque"]}]),
           "other": ("driver-b", None)}


def _classes():
    return {name: device_class(name, driver, config) for name, (driver, config) in CLASSES.items()}


def _cluster(seed: int):
    rng = random.Random(seed)
    nodes, slices = [], []
    for i in range(10):
        name = f"node-{i:02d}"
        nodes.append(node(name, "r1"))
        count = 4 if i < 8 else rng.randint(2, 5)  # most nodes of one shape, a few of their own
        slices.append(slice_(f"{name}-a", name, f"{name}-pa", "driver-a",
                             *[device(f"dev-{j}", attributes={"numa": {"int": j % 2}}) for j in range(count)]))
        slices.append(slice_(f"{name}-b", name, f"{name}-pb", "driver-b", device("dev-b0"), device("dev-b1")))
    return rng, nodes, slices


def _outcome(allocator, n, claims):
    try:
        answer = allocator.allocate(n, claims)
    except AllocatorError as e:
        return f"{type(e).__name__}: {e}"
    return relocated(answer) if isinstance(answer, list) else answer


@pytest.mark.parametrize("seed", range(30))
def test_answers_shared_across_classes_equal_a_search_of_their_own(seed):
    rng, nodes, slices = _cluster(seed)
    classes = _classes()
    by_node = {n.name: [s for s in slices if s.node_name == n.name] for n in nodes}
    shapes = NodeShapes()
    held: set = set()
    searched = plain_searched = 0
    for cycle in range(12):
        name = rng.choice(list(CLASSES))
        requests = [request("container-0-request-0", name, rng.randint(1, 2))]
        if rng.random() < 0.3:
            requests.append(request("container-1-request-0", rng.choice(list(CLASSES)), 1))
        claims = [claim("special", *requests)]
        plain = Allocator(Features(), held, classes.get, lambda n: by_node[n.name])
        kept = Allocator(Features(), held, classes.get, lambda n: by_node[n.name])
        kept.shapes, kept.memo_salt = shapes, ("class_version", 1)
        for n in nodes:
            want = _outcome(plain, n, claims)
            assert _outcome(kept, n, claims) == want, (cycle, n.name, name)
        searched += kept.num_allocate_one_invocations
        plain_searched += plain.num_allocate_one_invocations
        # a pod placed: the first node with an answer holds its devices (nodes change shape)
        for n in nodes:
            answer = _outcome(plain, n, claims)
            if isinstance(answer, list):
                # (the allocators here compute each node's key afresh, with its held devices)
                held |= {(r["driver"], r["pool"], r["device"]) for r in answer[0]["devices"]["results"]}
                break
    assert searched < plain_searched


def test_equal_class_blind_forms_are_one_object_and_config_or_selectors_keep_the_name():
    classes = _classes()
    shapes = NodeShapes()
    salt = ("class_version", 1)
    forms = {name: shapes.class_blind(claim("c", request("r", name)).requests, classes.get, salt) for name in CLASSES}
    assert forms["gpu-0"] is forms["gpu-1"] is forms["gpu-2"]  # interned: lookups by identity
    assert forms["other"] != forms["gpu-0"]  # another selector: another key
    cfg = claim("c", request("r", "gpu-cfg")).requests
    assert shapes.class_blind(cfg, classes.get, salt) is cfg  # config is copied into the answer: by name
    missing = claim("c", request("r", "no-such-class")).requests
    assert shapes.class_blind(missing, classes.get, salt) is missing


def test_class_blind_answers_serve_other_classes_across_cycles():
    """The perf cases' pattern: one shape, each cycle another class of the same selector: the
    first cycle's search serves them all."""
    classes = _classes()
    nodes = [node(f"n{i}", "r1") for i in range(3)]
    by_node = {n.name: [slice_(f"{n.name}-s", n.name, f"{n.name}-p", "driver-a",
                               *[device(f"dev-{j}") for j in range(4)])] for n in nodes}
    shapes = NodeShapes()
    searches = []
    for name in ("gpu-0", "gpu-1", "gpu-2", "gpu-0"):
        a = Allocator(Features(), set(), classes.get, lambda n: by_node[n.name])
        a.shapes, a.memo_salt = shapes, ("class_version", 1)
        answers = [relocated(a.allocate(n, [claim("special", request("container-0-request-0", name))])) for n in nodes]
        assert [r["devices"]["results"][0]["device"] for r in (x[0] for x in answers)] == ["dev-0"] * 3
        searches.append(a.num_allocate_one_invocations)
    assert [n > 0 for n in searches] == [True, False, False, False]


def test_salt_tokens_are_one_object_per_equal_salt_and_features():
    """The kept answers' keys hold ``(salt, features)`` as an interned token: equal pairs (equal
    Features objects or the same one, equal salts) give one object, any difference another, and
    after ``clear`` an equal pair gets a new one (the old keys then only miss)."""
    shapes = NodeShapes()
    features, same_features, other_features = Features(), Features(), Features(admin_access=not Features().admin_access)
    one = shapes.salt_token(("class_version", 1), features)
    assert shapes.salt_token(("class_version", 1), features) is one
    assert shapes.salt_token(("class_version", 1), same_features) is one  # equal, not the same object
    assert shapes.salt_token(("class_version", 2), features) is not one
    assert shapes.salt_token(("class_version", 1), other_features) is not one
    assert shapes.salt_token(("class_version", 1), features) is one  # (the last pair differed)
    assert one != shapes.salt_token(("class_version", 2), features) and hash(one) == hash(one)
    shapes.clear()
    assert shapes.salt_token(("class_version", 1), features) is not one
