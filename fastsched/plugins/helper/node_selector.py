"""Node selectors evaluated over a whole :class:`~fastsched.snapshot.NodeBatch` at once.

These are the vectorized twins of the per-node matching in :mod:`fastsched.api.labels` and agree
with it exactly:

* :func:`node_selector_mask` — ``NodeSelector.matches`` (terms ORed; an empty term, or one with
  parse errors, matches nothing; no terms matches nothing);
* :func:`node_selector_term_mask` — ``NodeSelectorTerm.matches`` (matchExpressions AND matchFields);
* :func:`requirement_mask` — ``NodeSelectorRequirement.matches_labels`` (In, NotIn, Exists,
  DoesNotExist, Gt, Lt);
* :func:`match_labels_mask` — a pod's ``spec.nodeSelector`` map (every key equal);
* :func:`required_node_affinity_mask` — ``required_node_affinity_matches(pod, node)``;
* :func:`preferred_terms_score` — ``preferred_node_affinity_score(terms, node)``.

``nodes`` is anything with ``table`` (a :class:`~fastsched.snapshot.NodeTable`) and ``rows`` (an
int64 array of row indices), normally a NodeBatch. Every function returns an array of shape
``(len(nodes.rows),)`` in batch order: bool for masks, int64 for scores.

How labels are read: ``table.label_codes[key][rows]`` gives each node's dictionary code for ``key``
(int32, -1 when the node lacks the label) and ``table.label_values[key][code]`` the value string.
Set membership (In/NotIn) becomes a boolean lookup table over the codes; Gt/Lt parse each distinct
label value once (:func:`label_int_values`, cached per table and key). Lookup tables have one extra
last entry for "label absent", so a code column indexes them directly (-1 picks that entry).
"""
from __future__ import annotations

import weakref
from typing import TYPE_CHECKING, Any, Iterable, Mapping, Sequence

import numpy as np

from ...api.labels import (DOES_NOT_EXIST, EXISTS, GT, IN, LT, NOT_IN, NodeSelector,
                           NodeSelectorRequirement, NodeSelectorTerm, PreferredSchedulingTerm)
from ...api.quantity import parse_int64
from ...framework import protocols as fwk

if TYPE_CHECKING:  # pragma: no cover
    from ...api import Pod
    from ...framework.protocols import NodeTable

__all__ = [
    "label_int_values",
    "match_labels_mask",
    "node_selector_mask",
    "node_selector_term_mask",
    "preferred_terms_score",
    "required_node_affinity_mask",
    "requirement_mask",
    "field_requirement_mask",
]

#: The only node field the scheduler exposes to matchFields.
NODE_NAME_FIELD = "metadata.name"


# ------------------------------------------------------------------------------------------------
# label columns
# ------------------------------------------------------------------------------------------------
def _label_codes(table: "NodeTable", key: str, rows: np.ndarray) -> np.ndarray:
    """(n,) int32 codes of ``key`` at ``rows``; all -1 when no node ever had the key."""
    column = table.label_codes.get(key)
    if column is None:
        return np.full(len(rows), -1, dtype=np.int32)
    return column[rows]


def _value_lookup(table: "NodeTable", key: str, values: Iterable[str]) -> np.ndarray:
    """(V+1,) bool: True at the codes of ``values`` under ``key`` (last entry: label absent)."""
    n_values = len(table.label_values.get(key, ()))
    hit = np.zeros(n_values + 1, dtype=bool)
    for value in values:
        code = table.label_code(key, value)
        if code >= 0:
            hit[code] = True
    return hit


class _ParsedValues:
    """Integer parses of one key's distinct label values, extended as new values appear."""

    __slots__ = ("count", "numbers", "valid", "_numbers", "_valid")

    def __init__(self) -> None:
        self.count = 0
        self._numbers: list[int] = []
        self._valid: list[bool] = []
        self.numbers = np.zeros(1, dtype=np.int64)
        self.valid = np.zeros(1, dtype=bool)

    def refresh(self, values: Sequence[str]) -> None:
        if len(values) == self.count:
            return
        for text in values[self.count:]:
            number = parse_int64(text)
            self._numbers.append(0 if number is None else number)
            self._valid.append(number is not None)
        self.count = len(values)
        # The extra last entry stands for "label absent" (code -1): never a valid number.
        self.numbers = np.array(self._numbers + [0], dtype=np.int64)
        self.valid = np.array(self._valid + [False], dtype=bool)


#: table -> label key -> parsed values; entries die with their table.
_PARSED: "weakref.WeakKeyDictionary[Any, dict[str, _ParsedValues]]" = weakref.WeakKeyDictionary()


def label_int_values(table: "NodeTable", key: str) -> tuple[np.ndarray, np.ndarray]:
    """Go ``strconv.ParseInt(value, 10, 64)`` of each distinct value of label ``key``.

    Returns ``(numbers, valid)``, both of shape (V+1,) where V = ``len(table.label_values[key])``:
    int64 numbers (0 where invalid) and a bool validity mask, indexed by label code; the last entry
    (code -1, label absent) is invalid. Cached per table and key; only values added since the last
    call are parsed (codes are append-only, so growth of ``label_values[key]`` is the only change).
    """
    per_table = _PARSED.get(table)
    if per_table is None:
        per_table = _PARSED[table] = {}
    parsed = per_table.get(key)
    if parsed is None:
        parsed = per_table[key] = _ParsedValues()
    parsed.refresh(table.label_values.get(key, []))
    return parsed.numbers, parsed.valid


# ------------------------------------------------------------------------------------------------
# requirements and terms
# ------------------------------------------------------------------------------------------------
def requirement_mask(requirement: NodeSelectorRequirement, nodes: fwk.TableRows) -> np.ndarray:
    """(n,) bool: ``requirement.matches_labels(node.labels)`` for every node of ``nodes``.

    The requirement is taken as valid (callers check the term's ``parse_errors``); like the
    per-node code, an unknown operator or an unparsable Gt/Lt bound matches nothing, NotIn holds for
    nodes without the label, and Gt/Lt never match a label that is not an integer.
    """
    table, rows = nodes.table, nodes.rows
    key, operator = requirement.key, requirement.operator
    codes = _label_codes(table, key, rows)
    if operator == IN or operator == NOT_IN:
        in_set = _value_lookup(table, key, requirement.values)[codes]
        return in_set if operator == IN else ~in_set
    if operator == EXISTS:
        return codes >= 0
    if operator == DOES_NOT_EXIST:
        return codes < 0
    if operator == GT or operator == LT:
        bound = parse_int64(requirement.values[0]) if len(requirement.values) == 1 else None
        if bound is None:
            return np.zeros(len(rows), dtype=bool)
        numbers, valid = label_int_values(table, key)
        node_numbers = numbers[codes]
        compared = node_numbers > bound if operator == GT else node_numbers < bound
        return valid[codes] & compared
    return np.zeros(len(rows), dtype=bool)


def field_requirement_mask(requirement: NodeSelectorRequirement, nodes: fwk.TableRows) -> np.ndarray:
    """(n,) bool: ``requirement.matches_field(node.name)`` for every node (In/NotIn, one value).

    Only ``metadata.name`` is a node field; any other key reads as "" (upstream ``fields.Set``).
    """
    table, rows = nodes.table, nodes.rows
    wanted = requirement.values[0]
    if requirement.key == NODE_NAME_FIELD:
        row = table.row_of.get(wanted)
        equal = np.zeros(len(rows), dtype=bool) if row is None else rows == row
    else:
        equal = np.full(len(rows), wanted == "", dtype=bool)
    return equal if requirement.operator == IN else ~equal


def node_selector_term_mask(term: NodeSelectorTerm, nodes: fwk.TableRows) -> np.ndarray:
    """(n,) bool: ``term.matches(node)`` — matchExpressions AND matchFields.

    An empty term, or one with parse errors, matches no node. matchFields are not checked for a node
    without a name (upstream builds no field set for it).
    """
    rows = nodes.rows
    if term.parse_errors or term.is_empty:
        return np.zeros(len(rows), dtype=bool)
    matched = np.ones(len(rows), dtype=bool)
    for requirement in term.match_expressions:
        matched &= requirement_mask(requirement, nodes)
    if term.match_fields:
        fields_matched = np.ones(len(rows), dtype=bool)
        for requirement in term.match_fields:
            fields_matched &= field_requirement_mask(requirement, nodes)
        unnamed_row = nodes.table.row_of.get("")
        if unnamed_row is not None:
            fields_matched |= rows == unnamed_row
        matched &= fields_matched
    return matched


def node_selector_mask(selector: NodeSelector, nodes: fwk.TableRows) -> np.ndarray:
    """(n,) bool: ``selector.matches(node)`` — any term matches; no usable term matches nothing."""
    matched = np.zeros(len(nodes.rows), dtype=bool)
    for term in selector.terms:
        matched |= node_selector_term_mask(term, nodes)
    return matched


# ------------------------------------------------------------------------------------------------
# pod-level helpers
# ------------------------------------------------------------------------------------------------
def match_labels_mask(match_labels: Mapping[str, str] | None, nodes: fwk.TableRows) -> np.ndarray:
    """(n,) bool: every ``key: value`` of ``match_labels`` equals the node's label (a pod's
    ``spec.nodeSelector``); None or an empty map matches every node."""
    table, rows = nodes.table, nodes.rows
    matched = np.ones(len(rows), dtype=bool)
    for key, value in (match_labels or {}).items():
        code = table.label_code(key, value)
        if code < 0:  # no node has this value: nothing matches
            return np.zeros(len(rows), dtype=bool)
        matched &= _label_codes(table, key, rows) == code
    return matched


def required_node_affinity_mask(pod: Pod, nodes: fwk.TableRows) -> np.ndarray:
    """(n,) bool: ``required_node_affinity_matches(pod, node)`` — the pod's nodeSelector map AND,
    when set, its requiredDuringSchedulingIgnoredDuringExecution node selector (parse errors make
    a term match nothing, as upstream's lazy-error selector does)."""
    matched = match_labels_mask(pod.node_selector, nodes)
    affinity = pod.affinity
    if affinity is not None and affinity.node_affinity is not None and affinity.node_affinity.required is not None:
        matched &= node_selector_mask(affinity.node_affinity.required, nodes)
    return matched


def preferred_terms_score(terms: Iterable[PreferredSchedulingTerm], nodes: fwk.TableRows) -> np.ndarray:
    """(n,) int64: the sum of the weights of the terms matching each node
    (``preferred_node_affinity_score``); weight-0, empty and unparsable terms add nothing."""
    scores = np.zeros(len(nodes.rows), dtype=np.int64)
    for term in terms:
        if term.weight != 0:
            scores += np.where(node_selector_term_mask(term.preference, nodes), np.int64(term.weight), np.int64(0))
    return scores
