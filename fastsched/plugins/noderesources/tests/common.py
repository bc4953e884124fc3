"""Helpers for the noderesources tests: small clusters, both plugin paths at once, pod generators."""
from __future__ import annotations

import random
from typing import Any, Sequence

import numpy as np

from fastsched.framework import CycleState
from fastsched.framework.status import Code, Status
from fastsched.snapshot import build_snapshot
from fastsched.testing import make_node, make_pod


def node(name: str, cpu_milli: int, memory: int, pods: int = 32, extra: dict[str, int] | None = None) -> Any:
    """A node with allocatable cpu (millicores), memory (bytes), pods and ``extra`` resources."""
    resources = {k: str(v) for k, v in (extra or {}).items()}
    return make_node(name, cpu=f"{cpu_milli}m", memory=str(memory), pods=str(pods), extra=resources)


def requests(cpu_milli: int | None = None, memory: int | None = None, extra: dict[str, int] | None = None
             ) -> dict[str, str]:
    """A container's requests: cpu in millicores, memory in bytes, ``extra`` as plain integers."""
    out: dict[str, str] = {}
    if cpu_milli is not None:
        out["cpu"] = f"{cpu_milli}m"
    if memory is not None:
        out["memory"] = str(memory)
    out.update({k: str(v) for k, v in (extra or {}).items()})
    return out


def pod(name: str = "p", req: dict[str, str] | None = None, *, node_name: str | None = None,
        init: Sequence[dict[str, str]] = (), more: Sequence[dict[str, str]] = (), **spec: Any) -> Any:
    """A pod whose first container requests ``req``; ``more`` adds containers, ``init`` init containers."""
    if init:
        spec["initContainers"] = [{"name": f"init{i}", "image": "busybox", "resources": {"requests": dict(r)}}
                                  for i, r in enumerate(init)]
    images = ("busybox",) * (1 + len(more))
    p = make_pod(name, requests=dict(req or {}), node_name=node_name, images=images, **spec)
    if more:
        manifest = p.manifest
        containers = list(manifest["spec"]["containers"])
        for i, r in enumerate(more, start=1):
            containers[i] = {**containers[i], "resources": {"requests": dict(r)}}
        manifest = {**manifest, "spec": {**manifest["spec"], "containers": containers}}
        p = type(p).from_manifest(manifest, validate=False)
    return p


def status_tuple(s: Status | None) -> tuple[Code, tuple[str, ...]]:
    if s is None:
        return Code.SUCCESS, ()
    return s.code(), tuple(s.reasons())


def run_filter(plugin: Any, nodes: Sequence[Any], existing: Sequence[Any], incoming: Any,
               *, pre_filter: bool = True) -> dict[str, tuple[Code, tuple[str, ...]]]:
    """Filter verdicts by node name; asserts the per-node and batch paths agree."""
    snapshot = build_snapshot(nodes, existing)
    batch = snapshot.batch()
    state = CycleState()
    if pre_filter:
        result, status = plugin.pre_filter(state, incoming, batch)
        assert result is None and status is None
    per_node = {view.name: status_tuple(plugin.filter(state, incoming, view)) for view in batch}
    batched = plugin.filter_vectorized(state, incoming, batch)
    if isinstance(batched, Status):
        got = {view.name: status_tuple(batched) for view in batch}
    else:
        got = {view.name: status_tuple(batched.status(i)) for i, view in enumerate(batch)}
    assert got == per_node
    return per_node


def run_score(plugin: Any, nodes: Sequence[Any], existing: Sequence[Any], incoming: Any,
              *, pre_score: bool = True) -> tuple[dict[str, int], Status | None]:
    """Raw scores by node name (and the PreScore status); asserts both paths agree."""
    snapshot = build_snapshot(nodes, existing)
    batch = snapshot.batch()
    state = CycleState()
    pre_status = plugin.pre_score(state, incoming, batch) if pre_score else None
    if pre_status is not None:
        return {}, pre_status
    per_node = {}
    per_node_status = None
    for view in batch:
        score, status = plugin.score(state, incoming, view)
        per_node[view.name] = score
        per_node_status = per_node_status or status
    scores, batch_status = plugin.score_vectorized(state, incoming, batch)
    assert isinstance(scores, np.ndarray) and scores.dtype == np.int64 and scores.shape == (len(batch),)
    assert status_tuple(batch_status) == status_tuple(per_node_status)
    if batch_status is None:
        assert dict(zip(batch.names, scores.tolist())) == per_node
    return per_node, batch_status


# ------------------------------------------------------------------------------------------------
# Random pods that exercise resources harder than fastsched.testing.random_pod
# ------------------------------------------------------------------------------------------------
_CPU = ("0", "1m", "100m", "250m", "999m", "1", "3", "7", "16")
_MEMORY = ("0", "1", "100Mi", "512Mi", "1Gi", "5Gi", "15Gi", "63Gi")
_SCALARS = (("nvidia.com/gpu", ("0", "1", "2", "3", "8")), ("ephemeral-storage", ("1", "1Gi", "10Gi", "80Gi")),
            ("example.com/foo", ("1", "2")), ("hugepages-2Mi", ("2Mi", "1Gi", "2Gi")),
            ("example.com/absent", ("1",)))


def _random_requests(rng: random.Random) -> dict[str, str]:
    req: dict[str, str] = {}
    if rng.random() < 0.75:
        req["cpu"] = rng.choice(_CPU)
    if rng.random() < 0.75:
        req["memory"] = rng.choice(_MEMORY)
    for name, values in _SCALARS:
        if rng.random() < (0.05 if name == "example.com/absent" else 0.25):
            req[name] = rng.choice(values)
    return req


def random_resource_pod(rng: random.Random, i: int) -> Any:
    """An incoming pod with varied requests: extra containers, init containers, overhead, none."""
    spec: dict[str, Any] = {}
    more = [_random_requests(rng) for _ in range(rng.choice((0, 0, 1, 2)))]
    init = [_random_requests(rng) for _ in range(rng.choice((0, 0, 0, 1)))]
    if rng.random() < 0.15:
        spec["overhead"] = {"cpu": rng.choice(("10m", "250m")), "memory": rng.choice(("1Mi", "120Mi"))}
    req = {} if rng.random() < 0.1 else _random_requests(rng)
    return pod(f"incoming-{i}", req, init=init, more=more, **spec)
