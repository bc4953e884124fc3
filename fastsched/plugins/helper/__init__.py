"""Helpers shared by the in-tree plugins (upstream ``pkg/scheduler/framework/plugins/helper``).

* :mod:`.normalize_score` — ``DefaultNormalizeScore`` for NodeScore lists and int64 arrays.
* :mod:`.node_selector` — node selectors, nodeSelector maps, required node affinity and preferred
  scheduling terms evaluated over a :class:`~fastsched.snapshot.NodeBatch` at once.
"""
from .node_selector import (
    field_requirement_mask,
    label_int_values,
    match_labels_mask,
    node_selector_mask,
    node_selector_term_mask,
    preferred_terms_score,
    required_node_affinity_mask,
    requirement_mask,
)
from .normalize_score import default_normalize_score

__all__ = [
    "default_normalize_score",
    "field_requirement_mask",
    "label_int_values",
    "match_labels_mask",
    "node_selector_mask",
    "node_selector_term_mask",
    "preferred_terms_score",
    "required_node_affinity_mask",
    "requirement_mask",
]
