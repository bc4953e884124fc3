"""NodeName (upstream ``plugins/nodename/node_name.go``, v1.34).

A pod with ``spec.nodeName`` set fits only the node of that name.
"""
from .node_name import ERR_REASON, NAME, NodeName, fits, new

__all__ = ["NAME", "NodeName", "new", "fits", "ERR_REASON"]
