"""NodePorts (upstream ``plugins/nodeports/node_ports.go``, v1.34).

PreFilter collects the pod's host ports (``Pod.host_ports``: regular containers and sidecar init
containers, hostPort > 0) and returns Skip when there are none; Filter rejects nodes where one of
them conflicts with a port in use (``HostPortInfo.check_conflict``: wildcard 0.0.0.0 rules).
"""
from .node_ports import ERR_REASON, NAME, PRE_FILTER_STATE_KEY, NodePorts, fits, fits_ports, new

__all__ = ["NAME", "NodePorts", "new", "fits", "fits_ports", "ERR_REASON", "PRE_FILTER_STATE_KEY"]
