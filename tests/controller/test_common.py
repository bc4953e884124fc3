"""Shared controller pieces: hashes, name prefixes, deletion orderings, dispatch."""
from __future__ import annotations

import struct

from fastsched.api.names import NameGenerator, safe_encode_string
from fastsched.controller import Changes, reconcile
from fastsched.controller.common import (
    canonical_json,
    compute_hash,
    fnv32,
    fnv32a,
    pods_prefix,
    scaled_value,
    sort_active_pods,
    sort_active_pods_with_ranks,
)

from .helpers import ListView, owned_pod, workload


def test_fnv_vectors():
    assert fnv32a(b"") == 0x811C9DC5
    assert fnv32a(b"a") == 0xE40C292C
    assert fnv32a(b"foobar") == 0xBF9CF968
    assert fnv32(b"a") == 0x050C5D7E
    assert fnv32(b"foobar") == 0x31F0B262


def test_compute_hash_definition():
    template = {"spec": {"containers": [{"name": "c", "image": "x"}]}, "metadata": {"labels": {"b": "1", "a": "2"}}}
    data = canonical_json(template)
    assert data == b'{"metadata":{"labels":{"a":"2","b":"1"}},"spec":{"containers":[{"image":"x","name":"c"}]}}'
    assert compute_hash(template, None) == safe_encode_string(str(fnv32a(data)))
    with_count = data + struct.pack("<I", 3) + b"\0\0\0\0"
    assert compute_hash(template, 3) == safe_encode_string(str(fnv32a(with_count)))
    assert set(compute_hash(template, None)) <= set("456789bcdf")


def test_pods_prefix():
    assert pods_prefix("web") == "web-"
    assert pods_prefix("Web") == "Web"  # "Web-" is not a valid name prefix
    assert pods_prefix("a" * 253) == "a" * 253 + "-"  # upstream's maskTrailingDash drops two characters
    assert pods_prefix("a" * 254) == "a" * 254


def test_scaled_value():
    assert scaled_value("25%", 3, True) == 1
    assert scaled_value("25%", 3, False) == 0
    assert scaled_value(2, 10, True) == 2
    assert scaled_value("bad%", 10, True) == 0


def test_active_pods_order_restarts_and_creation():
    owner = workload("ReplicaSet", "r", {"selector": {"matchLabels": {"a": "b"}}})
    old = owned_pod("old", owner, {}, phase="Running", node="n", created="2023-01-01T00:00:00Z")
    new = owned_pod("new", owner, {}, phase="Running", node="n", created="2023-06-01T00:00:00Z")
    no_time = owned_pod("zero", owner, {}, phase="Running", node="n")
    assert [p.name for p in sort_active_pods([old, new, no_time])] == ["zero", "new", "old"]
    restarted = owned_pod("restarted", owner, {}, phase="Running", node="n", created="2023-01-01T00:00:00Z")
    manifest = dict(restarted.manifest, status={"phase": "Running", "containerStatuses": [
        {"name": "c", "restartCount": 4}]})
    restarted = type(restarted).from_manifest(manifest)
    assert [p.name for p in sort_active_pods([new, restarted])] == ["restarted", "new"]


def test_ranked_order_uses_logarithmic_age_buckets():
    owner = workload("ReplicaSet", "r", {"selector": {"matchLabels": {"a": "b"}}})
    now = 1_700_000_000.0
    # created 70 s and 100 s before now: same log2 bucket (2^36 ns) -> tie broken by uid; 10 s: newer
    a = owned_pod("a", owner, {}, phase="Running", node="n", created="2023-11-14T22:12:10Z")
    b = owned_pod("b", owner, {}, phase="Running", node="n", created="2023-11-14T22:11:40Z")
    c = owned_pod("c", owner, {}, phase="Running", node="n", created="2023-11-14T22:13:10Z")
    ordered = sort_active_pods_with_ranks([a, b, c], [0, 0, 0], now)
    assert ordered[0].name == "c"
    assert [p.name for p in ordered[1:]] == sorted(["a", "b"], key=lambda n: {"a": a.uid, "b": b.uid}[n])
    older = owned_pod("older", owner, {}, phase="Running", node="n", created="2023-11-14T22:11:00Z")  # 140 s
    assert [p.name for p in sort_active_pods_with_ranks([older, a], [0, 0], now)] == ["a", "older"]
    # rank (colocated pods) beats age
    assert sort_active_pods_with_ranks([c, a], [1, 3], now)[0].name == "a"


def test_kinds_without_controller_give_empty_changes():
    service = workload("Service", "s", {"selector": {"a": "b"}})
    assert reconcile(service, ListView(), NameGenerator(0), 0.0) == Changes()


def test_changes_extend_and_is_empty():
    a = Changes(create_pods=[{"x": 1}])
    b = Changes(create_manifests=[{"y": 2}])
    assert not a.extend(b).is_empty() and a.create_manifests == [{"y": 2}]
    assert Changes().is_empty()
