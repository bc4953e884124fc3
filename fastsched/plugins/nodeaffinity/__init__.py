"""NodeAffinity (upstream ``plugins/nodeaffinity/node_affinity.go``, v1.34).

Filter: the scheduler-enforced ``addedAffinity`` (plugin args), then the pod's ``spec.nodeSelector``
and required node affinity. PreFilter narrows the nodes to the ``matchFields metadata.name In``
names when every required term has such a requirement. Score sums the weights of the matching
preferred terms (the pod's and the added ones), normalized to [0, 100].
"""
from .node_affinity import (ERR_REASON_CONFLICT, ERR_REASON_ENFORCED, ERR_REASON_POD, NAME, PRE_FILTER_STATE_KEY,
                            PRE_SCORE_STATE_KEY, NodeAffinity, RequiredNodeAffinity, new)

__all__ = ["NAME", "NodeAffinity", "RequiredNodeAffinity", "new", "ERR_REASON_POD", "ERR_REASON_ENFORCED",
           "ERR_REASON_CONFLICT", "PRE_FILTER_STATE_KEY", "PRE_SCORE_STATE_KEY"]
