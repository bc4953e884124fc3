"""NodeUnschedulable (upstream ``plugins/nodeunschedulable/node_unschedulable.go``, v1.34).

Filters out nodes with ``spec.unschedulable: true`` unless the pod tolerates the taint
``node.kubernetes.io/unschedulable:NoSchedule``.
"""
from .node_unschedulable import (ERR_REASON_UNKNOWN_CONDITION, ERR_REASON_UNSCHEDULABLE, NAME, UNSCHEDULABLE_TAINT,
                                 NodeUnschedulable, new, tolerates_unschedulable)

__all__ = ["NAME", "NodeUnschedulable", "new", "tolerates_unschedulable", "UNSCHEDULABLE_TAINT",
           "ERR_REASON_UNSCHEDULABLE", "ERR_REASON_UNKNOWN_CONDITION"]
