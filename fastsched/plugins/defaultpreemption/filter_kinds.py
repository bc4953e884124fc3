"""The in-tree Filter plugins' kinds, declared to the runtime.

The runtime's RunFilterPluginsWithNominatedPods over many nodes
(:func:`fastsched.runtime.nominated.filter_with_nominated_pods`) and the vectorized dry run
(:mod:`.vectorized`) need to know how a Filter plugin's verdict depends on the pods on a node. The
runtime imports no plugin package, so the plugins' side declares it (imported with this package,
which the in-tree registry imports):

* node-only (the verdict does not depend on the pods on the node): NodeUnschedulable, NodeName,
  TaintToleration, NodeAffinity;
* additive (it depends on them only through requested resources, pod counts and host ports, and
  more pods never pass where fewer fail): NodeResourcesFit, NodePorts.
"""
from __future__ import annotations

from ...runtime.nominated import ADDITIVE, NODE_ONLY, register_filter_kind
from ..nodeaffinity.node_affinity import NodeAffinity
from ..nodename import NodeName
from ..noderesources.fit import Fit
from ..nodeports import NodePorts
from ..nodeunschedulable import NodeUnschedulable
from ..tainttoleration import TaintToleration

#: plugin name -> (in-tree class, kind)
IN_TREE_FILTER_KINDS: dict[str, tuple[type, str]] = {
    "NodeUnschedulable": (NodeUnschedulable, NODE_ONLY),
    "NodeName": (NodeName, NODE_ONLY),
    "TaintToleration": (TaintToleration, NODE_ONLY),
    "NodeAffinity": (NodeAffinity, NODE_ONLY),
    "NodeResourcesFit": (Fit, ADDITIVE),
    "NodePorts": (NodePorts, ADDITIVE),
}
#: plugin name -> in-tree class
IN_TREE_FILTERS: dict[str, type] = {name: cls for name, (cls, _) in IN_TREE_FILTER_KINDS.items()}

for _cls, _kind in IN_TREE_FILTER_KINDS.values():
    register_filter_kind(_cls, _kind)

__all__ = ["IN_TREE_FILTERS", "IN_TREE_FILTER_KINDS"]
