"""Template keys of pods of several templates in turn (issue 29: a watch, a listing by creation time
or node by node hands over Deployments' pods interleaved): ``PodTemplates.key`` finds the bytes of
a recent template by the compiled ``fingerprint`` and ``same_shared``, and every key is byte for
byte the one serializing the manifest gives (a cache that never saw another manifest)."""
from __future__ import annotations

import copy
import random

import pytest

from fastsched._kernels._manifest import fingerprint, same_shared
from fastsched.api import templates as templates_module
from fastsched.api.templates import RECENT_SHARED, PodTemplates

_SKIP = frozenset({"name", "uid", "resourceVersion", "creationTimestamp", "managedFields", "generation", "labels"})


def _deployment(i: int, *, owner: str | None = "own", affinity: bool = False, cpu: str | None = None) -> dict:
    """The pod template of Deployment ``i``: its own image and requests; ``owner``: its
    ReplicaSet's uid is its own ("own"), shared with every other Deployment ("lying") or absent (None)."""
    meta: dict = {"generateName": f"app{i}-7d9f-", "namespace": "team-a", "labels": {"app": f"app{i}"}}
    if owner is not None:
        uid = f"00000000-0000-4000-8000-{i:012d}" if owner == "own" else "00000000-0000-4000-8000-000000000000"
        meta["ownerReferences"] = [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": f"app{i}-7d9f",
                                    "uid": uid, "controller": True, "blockOwnerDeletion": True}]
    quantities = {"cpu": cpu or f"{100 + i}m", "memory": "64Mi"}
    spec: dict = {"containers": [{"name": "c", "image": f"registry.example.com/app{i}:1.{i}",
                                  "ports": [{"containerPort": 8080}],
                                  "resources": {"requests": dict(quantities), "limits": dict(quantities)}}]}
    if affinity:  # (labels are then the template's: part of the key)
        spec["affinity"] = {"podAntiAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
            {"weight": 1, "podAffinityTerm": {"topologyKey": "zone", "labelSelector": {"matchLabels": {"app": f"app{i}"}}}}]}}
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec}


def _pod_of(template: dict, rng: random.Random, n: int) -> dict:
    """A pod of ``template`` with per-pod fields of its own (some bound, some with a status)."""
    m = copy.deepcopy(template)
    meta = m["metadata"]
    meta["name"] = f"{meta['generateName']}{n:05d}"
    meta["uid"] = f"uid-{n}"
    if rng.random() < 0.5:
        meta["resourceVersion"] = str(1000 + n)
        meta["creationTimestamp"] = "2026-11-02T09:00:%02dZ" % (n % 60)
        m["status"] = {"phase": "Pending"}
    if rng.random() < 0.3:
        m["spec"]["nodeName"] = f"node-{n % 7}"
    if rng.random() < 0.2 and "affinity" not in m["spec"]:
        meta["labels"] = {**meta["labels"], "pod-template-hash": f"h{n % 3}"}  # (per pod: not in the key)
    return m


def _templates(rng: random.Random) -> list[dict]:
    """Templates of every kind the cache must tell apart or find: own, lying and missing owners,
    labels in the key, specs differing only deep down, a float (never found), equal templates."""
    out = [_deployment(i, owner=rng.choice(["own", "lying", None]), affinity=rng.random() < 0.25) for i in range(8)]
    out.append(_deployment(1, owner="lying", cpu="101m"))          # another Deployment, the same spec as 1's...
    out.append(_deployment(1, owner="lying", cpu="102m"))          # ... and one differing only in its requests
    float_priority = _deployment(3)
    float_priority["spec"]["priority"] = 1.0                      # a float: serialized every time
    out += [float_priority, copy.deepcopy(out[0])]
    return out


def _fresh_key(m: dict):
    """The key of the old path: serialized, with no manifest seen before."""
    return PodTemplates().key(copy.deepcopy(m))


@pytest.mark.parametrize("seed", range(12))
def test_keys_of_interleaved_templates_are_the_keys_serialization_gives(seed):
    """Pods of a dozen templates in a random order, some manifests changed in place and passed
    again: every key is the one a fresh cache gives, and pods of a template seen before take the
    bytes serialized then (the same object: found, not written again)."""
    rng = random.Random(seed)
    pool = _templates(rng)
    cache = PodTemplates()
    seen: dict[bytes, bytes] = {}
    found = 0
    passed: list[dict] = []
    for n in range(300):
        if passed and rng.random() < 0.1:
            # a caller's manifest changed in place (a builder reusing one dict) and passed again
            m = rng.choice(passed)
            m["spec"]["containers"][0]["image"] += "-patched"
        else:
            m = _pod_of(rng.choice(pool), rng, n)
        passed.append(m)
        key = cache.key(m)
        assert key == _fresh_key(m), (seed, n)
        text = key[-1]
        if text in seen:
            found += seen[text] is text
        else:
            seen[text] = text
    assert found > 150  # (most pods: their template's bytes found)


def test_each_template_is_serialized_once_whatever_the_order(monkeypatch):
    """Pods of three templates in turn (with their own per-pod fields): three serializations."""
    calls = []
    real_dumps = templates_module.marshal.dumps

    class _Counting:
        loads = staticmethod(templates_module.marshal.loads)

        @staticmethod
        def dumps(value, version):
            calls.append(value)
            return real_dumps(value, version)

    monkeypatch.setattr(templates_module, "marshal", _Counting)
    cache = PodTemplates()
    rng = random.Random(0)
    pool = [_deployment(i) for i in range(3)]
    keys = [cache.key(_pod_of(pool[n % 3], rng, n)) for n in range(30)]
    assert len(calls) == 3
    assert all(keys[n][-1] is keys[n % 3][-1] for n in range(30))


def test_a_fingerprint_is_never_taken_for_proof(monkeypatch):
    """With every manifest's fingerprint the same (all collide), keys are still the old path's."""
    monkeypatch.setattr(templates_module, "fingerprint", lambda *args: 0)
    rng = random.Random(1)
    pool = _templates(rng)
    cache = PodTemplates()
    for n in range(120):
        m = _pod_of(rng.choice(pool), rng, n)
        assert cache.key(m) == _fresh_key(m), n


def test_more_templates_in_turn_than_are_kept():
    """Templates beyond ``RECENT_SHARED`` in turn: the oldest are dropped (serialized again), the
    keys stay the old path's."""
    cache = PodTemplates()
    rng = random.Random(2)
    pool = [_deployment(i) for i in range(RECENT_SHARED + 5)]
    for n in range(3 * len(pool)):
        m = _pod_of(pool[n % len(pool)], rng, n)
        assert cache.key(m) == _fresh_key(m), n
    assert len(cache._recent) == RECENT_SHARED


def _fp(meta: dict, spec: dict, *, skip=_SKIP, bound: bool = False):
    return fingerprint("v1", "Pod", meta, skip, spec, bound)


def test_equal_shared_parts_have_equal_fingerprints():
    """What ``same_shared`` takes as equal has one fingerprint: per-pod metadata and a bound pod's
    ``nodeName`` skipped wherever they are, equal values in distinct objects."""
    template = _deployment(4)
    a, b = copy.deepcopy(template), copy.deepcopy(template)
    b["metadata"] = {"uid": "u", "name": "x", **b["metadata"], "resourceVersion": "9"}
    b["spec"] = {"nodeName": "n1", **b["spec"]}
    assert same_shared("v1", "Pod", b["metadata"], _SKIP, b["spec"], True,
                       ("v1", "Pod", {k: v for k, v in a["metadata"].items() if k not in _SKIP}, a["spec"]))
    assert _fp(a["metadata"], a["spec"]) == _fp(b["metadata"], b["spec"], bound=True) is not None
    assert _fp(a["metadata"], a["spec"]) != _fp(b["metadata"], b["spec"])  # (nodeName kept: another part)


@pytest.mark.parametrize("left,right", [
    (1, True), (0, False), (1, "1"), (None, False), ([1], (1,)), ([1, 2], [2, 1]), ({"a": 1, "b": 2}, {"b": 2, "a": 1}),
    ({"a": []}, {"a": {}}), ("ab", "ba"), ("a" * 9, "a" * 8), ("é", "e"), ([[]], [[], []]), ({"a": 1}, {"a": 1, "b": None}),
])
def test_different_values_have_different_fingerprints(left, right):
    """Values marshal writes differently (types, order, lengths) hash differently (not a proof the
    cache relies on: a collision only costs a serialization; this checks the hash discriminates)."""
    assert _fp({}, {"x": left}) != _fp({}, {"x": right})


@pytest.mark.parametrize("value", [1.0, float("nan"), b"x", {1.5: 1}, object()])
def test_values_same_values_never_takes_have_no_fingerprint(value):
    assert _fp({}, {"x": [value]}) is None


def test_a_cyclic_or_very_deep_value_has_no_fingerprint():
    cyclic: list = []
    cyclic.append(cyclic)
    deep: list = []
    for _ in range(200):
        deep = [deep]
    assert _fp({}, {"x": cyclic}) is None and _fp({}, {"x": deep}) is None
    assert _fp({1: "x"}, {}) is None  # (a top-level key that is not a string, as same_shared)
    cache = PodTemplates()
    m = _deployment(0)
    m["spec"]["x"] = deep
    assert cache.key(m) == _fresh_key(m)  # (marshal writes it: the key as before)
