"""Existing pods' terms, parsed once per affinity signature of a node table.

``table.affinity_signatures`` is append-only (an index never changes meaning), so the parsed terms of
signature ``k`` are computed once per table and reused by every scheduling cycle.
"""
from __future__ import annotations

import threading
import weakref
from typing import TYPE_CHECKING, Any

from .terms import AffinityTerm, affinity_terms, weighted_terms

if TYPE_CHECKING:  # pragma: no cover
    from ...api import PodAffinity, PodAntiAffinity
    from ...framework.protocols import NodeTable


class ParsedSignature:
    """The terms of the pods sharing one affinity signature (their namespace applied)."""

    __slots__ = ("required_affinity", "required_anti_affinity", "preferred_affinity", "preferred_anti_affinity")

    def __init__(self, namespace: str, pod_affinity: PodAffinity | None, pod_anti_affinity: PodAntiAffinity | None):
        self.required_affinity: list[AffinityTerm] = []
        self.preferred_affinity: list[tuple[AffinityTerm, int]] = []
        self.required_anti_affinity: list[AffinityTerm] = []
        self.preferred_anti_affinity: list[tuple[AffinityTerm, int]] = []
        if pod_affinity is not None:
            self.required_affinity = affinity_terms(pod_affinity.required, namespace)
            self.preferred_affinity = weighted_terms(pod_affinity.preferred, namespace)
        if pod_anti_affinity is not None:
            self.required_anti_affinity = affinity_terms(pod_anti_affinity.required, namespace)
            self.preferred_anti_affinity = weighted_terms(pod_anti_affinity.preferred, namespace)


    def scores_with(self, hard_weight: int) -> bool:
        """Whether a pod of this signature can add to an incoming pod's PreScore map (its required
        affinity terms count only with ``hardPodAffinityWeight`` > 0; required anti-affinity never)."""
        return bool((hard_weight > 0 and self.required_affinity) or self.preferred_affinity
                    or self.preferred_anti_affinity)


class _Parsed(list):
    """The parsed signatures of one table, and how many of them can score (by hard weight > 0)."""

    __slots__ = ("scoring", "__weakref__")

    def __init__(self) -> None:
        super().__init__()
        #: [without hard weight, with hard weight]: signatures that can score, ever seen (the
        #: table's signatures are append-only; their pods may have gone)
        self.scoring = [0, 0]


_parsed: "weakref.WeakKeyDictionary[Any, _Parsed]" = weakref.WeakKeyDictionary()
_lock = threading.Lock()


def parsed_signatures(table: NodeTable) -> "_Parsed":
    """``[ParsedSignature]`` aligned with ``table.affinity_signatures`` (a list, with ``scoring``)."""
    with _lock:
        parsed = _parsed.get(table)
        if parsed is None:
            parsed = _parsed[table] = _Parsed()
        signatures = table.affinity_signatures
        for k in range(len(parsed), len(signatures)):
            p = ParsedSignature(*signatures[k])
            parsed.append(p)
            parsed.scoring[0] += p.scores_with(0)
            parsed.scoring[1] += p.scores_with(1)
        return parsed


def may_score(table: NodeTable, hard_weight: int) -> bool:
    """False when no affinity signature the table has seen can add to a PreScore map: then no
    existing pod contributes and an incoming pod without preferred terms gets PreScore's Skip.
    (Conservative: a signature whose pods have all gone still counts.) O(1) once the table's
    signatures are parsed."""
    parsed = _parsed.get(table)
    if parsed is None or len(parsed) != len(table.affinity_signatures):
        parsed = parsed_signatures(table)
    return parsed.scoring[1 if hard_weight > 0 else 0] > 0
