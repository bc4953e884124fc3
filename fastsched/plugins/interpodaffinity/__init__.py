"""InterPodAffinity (upstream ``plugins/interpodaffinity``, v1.34).

PreFilter/Filter enforce required pod affinity (with the first-pod-of-a-group exception), required
anti-affinity, and existing pods' required anti-affinity; PreScore/Score/NormalizeScore rank nodes
by preferred terms both ways plus existing pods' required affinity (``hardPodAffinityWeight``).
Batch methods work on the node table: terms are evaluated once per distinct pod label signature or
affinity signature, and counts are aggregated per topology domain with ``np.bincount``.
"""
from .filtering import (ERR_REASON_AFFINITY_RULES_NOT_MATCH, ERR_REASON_ANTI_AFFINITY_RULES_NOT_MATCH,
                        ERR_REASON_EXISTING_ANTI_AFFINITY_RULES_NOT_MATCH, PRE_FILTER_STATE_KEY, PreFilterState)
from .plugin import NAME, InterPodAffinity, new
from .scoring import PRE_SCORE_STATE_KEY, PreScoreState
from .terms import AffinityTerm
from .topology import TopologyCounts, TopologyScores

__all__ = ["NAME", "InterPodAffinity", "new", "PRE_FILTER_STATE_KEY", "PRE_SCORE_STATE_KEY", "PreFilterState",
           "PreScoreState", "AffinityTerm", "TopologyCounts", "TopologyScores",
           "ERR_REASON_AFFINITY_RULES_NOT_MATCH", "ERR_REASON_ANTI_AFFINITY_RULES_NOT_MATCH",
           "ERR_REASON_EXISTING_ANTI_AFFINITY_RULES_NOT_MATCH"]
