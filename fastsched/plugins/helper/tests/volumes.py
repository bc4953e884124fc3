"""Helpers for the volume plugins' tests (VolumeBinding, VolumeZone, VolumeRestrictions,
NodeVolumeLimits, and tests/volumes): frameworks over an ObjectStore, typed builders. In the package
(not tests/), so that the plugins' own tests run from an installed package too."""
from __future__ import annotations

from typing import Any, Iterable, Sequence, cast

from fastsched.api import Node, Pod, objects_of
from fastsched.config import load_config
from fastsched.framework.cycle_state import CycleState
from fastsched.framework.objects import ObjectStore
from fastsched.framework.protocols import Client
from fastsched.framework.types import NodeInfo
from fastsched.plugins import in_tree_registry
from fastsched.runtime import new_framework
from fastsched.snapshot import build_snapshot
from fastsched.sim.storage import (csi_node_manifest, pod_with_claims, pv_manifest, pvc_manifest,  # noqa: F401
                                   storage_class_manifest)
from fastsched.testing import single_plugin_profile


class Handle:
    """The least a volume plugin reads of its handle: ``client`` (an ObjectStore) and ``rng``."""

    def __init__(self, objects: Iterable[Any] = ()):
        import random
        self.client = ObjectStore(test_objects(objects))
        self.rng = random.Random(0)


def test_objects(objects: Iterable[Any]) -> list:
    """Manifests read without the API server's validation (upstream's tables use names such as
    ``Vol_1``); typed objects kept as they are."""
    from fastsched.api import KubeObject
    from fastsched.api.load import load_objects
    out = []
    for obj in objects:
        out.extend([obj] if isinstance(obj, KubeObject) else load_objects([obj], validate=False))
    return out


def one(manifest: Any) -> Any:
    return objects_of([manifest])[0]


def node(name: str, labels: dict | None = None) -> Node:
    return one({"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": labels or {}},
                "status": {"allocatable": {"cpu": "8", "memory": "32Gi", "pods": "110"}}})


def pod(name: str = "p", claims: Sequence[str] = (), extra: Sequence[dict] = (), namespace: str = "default",
        node_name: str = "") -> Pod:
    m = pod_with_claims(name, claims, extra_volumes=extra, namespace=namespace)
    if node_name:
        m["spec"]["nodeName"] = node_name
    return one(m)


def node_info(n: Node, pods: Iterable[Pod] = ()) -> NodeInfo:
    return NodeInfo(n, [p.with_node_name(n.name) if not p.node_name else p for p in pods])


def framework(plugin: str, nodes: list[Node], pods: list[Pod], objects: Iterable[Any]):
    """A framework with only ``plugin`` (MultiPoint) over a snapshot and an ObjectStore."""
    snapshot = build_snapshot(nodes, pods)
    cfg = load_config(None)
    # an ObjectStore holds the objects the volume plugins list and get; it is not a whole Client
    # (no bind, no preemption), which these single-plugin frameworks never call
    client = cast("Client", ObjectStore(test_objects(objects)))
    fw = new_framework(in_tree_registry(), single_plugin_profile(plugin), snapshot_shared_lister=snapshot,
                       client=client)
    del cfg
    return fw, snapshot


def run_filter(plugin: Any, p: Pod, ni: NodeInfo, nodes: Sequence[NodeInfo] = ()) -> Any:
    state = CycleState()
    _, status = plugin.pre_filter(state, p, list(nodes) or [ni])
    if status is not None and status.code().name == "SKIP":
        return None
    if status is not None and not status.is_success():
        return status
    return plugin.filter(state, p, ni)


def assert_window_mask_agrees(plugin: Any, state: Any, p: Pod, batch: Any, verdicts: Any, seed: int = 0) -> bool:
    """``plugin.filter_window_mask`` (the compiled cycle's pass mask) against the plugin's
    ``filter_vectorized`` answer ``verdicts`` on ``batch``: with ``first`` the mask holds codes ==
    0 at the batch's rows, else those ANDed into what it held; rows outside the batch untouched;
    nothing written where it answers False (a Status answer, an Error verdict). Asks on a fresh
    copy of ``state`` each time (VolumeBinding keeps its Filter groups there). Returns whether it wrote."""
    import numpy as np

    from fastsched.framework.status import Code, Status

    rows = np.asarray(batch.rows, dtype=np.int64)
    capacity = batch.table.capacity
    ok = None if isinstance(verdicts, Status) else np.asarray(verdicts.codes) == 0
    wrote = False
    rng = np.random.default_rng(seed)
    for first in (True, False):
        before = rng.integers(0, 2, capacity).astype(np.uint8)
        mask = before.copy()
        done = plugin.filter_window_mask(state.clone(), p, batch, mask, first)
        outside = np.ones(capacity, dtype=bool)
        outside[rows] = False
        assert (mask[outside] == before[outside]).all()
        if not done:
            assert (mask == before).all()
            assert ok is None or (np.asarray(verdicts.codes) == int(Code.ERROR)).any(), "a verdict the mask takes"
            continue
        assert ok is not None, "a Status answer written into the mask"
        assert not (np.asarray(verdicts.codes) == int(Code.ERROR)).any(), "an Error verdict written into the mask"
        want = ok if first else (before[rows] != 0) & ok
        assert ((mask[rows] != 0) == want).all(), (first, mask[rows].tolist(), want.tolist())
        wrote = True
    return wrote
