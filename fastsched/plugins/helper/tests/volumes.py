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
