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


class _Parsed(list):
    """The parsed signatures of one table (a list that a weak reference can name)."""

    __slots__ = ("__weakref__",)


_parsed: "weakref.WeakKeyDictionary[Any, _Parsed]" = weakref.WeakKeyDictionary()
_lock = threading.Lock()


def parsed_signatures(table: NodeTable) -> "_Parsed":
    """``[ParsedSignature]`` aligned with ``table.affinity_signatures``."""
    with _lock:
        parsed = _parsed.get(table)
        if parsed is None:
            parsed = _parsed[table] = _Parsed()
        signatures = table.affinity_signatures
        for k in range(len(parsed), len(signatures)):
            parsed.append(ParsedSignature(*signatures[k]))
        return parsed

