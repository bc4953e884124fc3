"""A plain NodeInfo snapshot implementing SharedLister (upstream ``cache.NewSnapshot``).

The scheduler uses the columnar snapshot; this one is for plugin tests and small embeddings where a
list of NodeInfo objects is all there is.
"""
from __future__ import annotations

import builtins
from typing import TYPE_CHECKING, Iterable

from .interface import NodeInfoLister, SharedLister
from .types import ImageStateSummary, NodeInfo

if TYPE_CHECKING:  # pragma: no cover
    from ..api import Node, Pod


class NodeInfoSnapshot(SharedLister, NodeInfoLister):
    """Nodes in a fixed order with upstream's image spread counts (``ImageStateSummary.num_nodes``)."""

    def __init__(self, node_infos: Iterable[NodeInfo]):
        self._list = list(node_infos)
        self._by_name = {ni.name: ni for ni in self._list}
        counts: dict[str, int] = {}
        for ni in self._list:
            for image in ni.image_states:
                counts[image] = counts.get(image, 0) + 1
        for ni in self._list:
            ni.image_states = {img: ImageStateSummary(st.size, counts[img]) for img, st in ni.image_states.items()}

    def node_infos(self) -> NodeInfoLister:
        return self

    def list(self) -> list[NodeInfo]:
        return self._list

    # (builtins.list: ``list`` in this class body is the method above)
    def have_pods_with_affinity_list(self) -> builtins.list[NodeInfo]:
        return [ni for ni in self._list if ni.pods_with_affinity]

    def have_pods_with_required_anti_affinity_list(self) -> builtins.list[NodeInfo]:
        return [ni for ni in self._list if ni.pods_with_required_anti_affinity]

    def get(self, node_name: str) -> NodeInfo:
        try:
            return self._by_name[node_name]
        except KeyError:
            raise KeyError(f"nodeinfo not found for node name {node_name!r}") from None

    def __len__(self) -> int:
        return len(self._list)


def new_snapshot(pods: Iterable["Pod"], nodes: Iterable["Node"]) -> NodeInfoSnapshot:
    """A snapshot of ``nodes`` with each pod placed on its ``spec.nodeName`` (others are ignored)."""
    infos = {n.name: NodeInfo(n) for n in nodes}
    for p in pods:
        ni = infos.get(p.node_name or "")
        if ni is not None:
            ni.add_pod(p)
    return NodeInfoSnapshot(infos.values())
