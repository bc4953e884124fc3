"""The ReplicationController controller (upstream ``pkg/controller/replication``): the ReplicaSet
controller run on ``v1`` ReplicationControllers through a conversion adapter. Pods get the
controller reference ``{apiVersion: v1, kind: ReplicationController, ...}``; the selector is the
RC's label map (defaulted to the template labels), an empty map selecting every pod."""
from __future__ import annotations

from .replicaset import reconcile_replication_controller

__all__ = ["reconcile_replication_controller"]
