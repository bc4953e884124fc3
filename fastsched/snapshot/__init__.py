"""The columnar cluster snapshot: NodeTable (columns), Snapshot (node order, lister), views."""
from .snapshot import NodeBatch, NodeInfoView, Snapshot, build_snapshot, zone_key
from .table import BASE_RESOURCES, NodeTable

__all__ = ["BASE_RESOURCES", "NodeBatch", "NodeInfoView", "NodeTable", "Snapshot", "build_snapshot", "zone_key"]
