"""Label selectors and node selectors.

* :class:`LabelSelector` is ``metav1.LabelSelector`` as converted by ``LabelSelectorAsSelector``:
  matchLabels and matchExpressions (In, NotIn, Exists, DoesNotExist) ANDed; an empty selector
  selects everything, and :data:`NOTHING` (what upstream uses for a nil selector) selects nothing.
  Invalid selectors raise :class:`ManifestError` when parsed.
* :class:`NodeSelector` is ``v1.NodeSelector`` as the scheduler evaluates it
  (``component-helpers/scheduling/corev1/nodeaffinity``): terms ORed, each term's matchExpressions
  (with Gt/Lt too) and matchFields ANDed. Like upstream's ``LazyErrorNodeSelector``, an invalid
  requirement does not raise: it is recorded in the term's ``parse_errors`` and the term then
  matches nothing. Only structural errors (a string where a list belongs) raise ManifestError.
"""
from __future__ import annotations

import functools
import re
from typing import Any, Iterable, Mapping, Protocol

from ._manifest import as_list, as_map, as_str, as_string_map, child_path, get_field, type_name
from .errors import ManifestError
from .quantity import parse_int64

__all__ = [
    "IN",
    "NOT_IN",
    "EXISTS",
    "DOES_NOT_EXIST",
    "GT",
    "LT",
    "LabelSelector",
    "NOTHING",
    "EVERYTHING",
    "NodeSelectorRequirement",
    "NodeSelectorTerm",
    "NodeSelector",
    "PreferredSchedulingTerm",
    "preferred_node_affinity_score",
    "required_node_affinity_matches",
    "label_key_error",
    "label_value_error",
]

IN = "In"
NOT_IN = "NotIn"
EXISTS = "Exists"
DOES_NOT_EXIST = "DoesNotExist"
GT = "Gt"
LT = "Lt"

_LABEL_SELECTOR_OPERATORS = (IN, NOT_IN, EXISTS, DOES_NOT_EXIST)
_NODE_SELECTOR_OPERATORS = (IN, NOT_IN, EXISTS, DOES_NOT_EXIST, GT, LT)
_NODE_NAME_FIELD = "metadata.name"

# --------------------------------------------------------------------------------------------
# Key and value syntax (k8s.io/apimachinery/pkg/util/validation)
# --------------------------------------------------------------------------------------------
_QUALIFIED_NAME_RE = re.compile(r"([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]")
_DNS1123_SUBDOMAIN_RE = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*")
_LABEL_VALUE_RE = re.compile(r"(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?")
_NAME_CHARSET_MESSAGE = ("must consist of alphanumeric characters, '-', '_' or '.', "
                         "and must start and end with an alphanumeric character")


@functools.lru_cache(maxsize=4096)
def label_key_error(key: str) -> str | None:
    """Why ``key`` is not a valid label key (upstream ``IsQualifiedName``), or None if it is."""
    parts = key.split("/")
    if len(parts) == 1:
        name = parts[0]
    elif len(parts) == 2:
        prefix, name = parts
        if not prefix:
            return f"invalid label key {key!r}: prefix part must be non-empty"
        if len(prefix) > 253:
            return f"invalid label key {key!r}: prefix part must be no more than 253 characters"
        if _DNS1123_SUBDOMAIN_RE.fullmatch(prefix) is None:
            return (f"invalid label key {key!r}: prefix part must be a lowercase RFC 1123 subdomain "
                    "(lowercase alphanumerics, '-' and '.')")
    else:
        return (f"invalid label key {key!r}: a qualified name is a name with an optional "
                "DNS subdomain prefix and '/'")
    if not name:
        return f"invalid label key {key!r}: name part must be non-empty"
    if len(name) > 63:
        return f"invalid label key {key!r}: name part must be no more than 63 characters"
    if _QUALIFIED_NAME_RE.fullmatch(name) is None:
        return f"invalid label key {key!r}: name part {_NAME_CHARSET_MESSAGE}"
    return None


@functools.lru_cache(maxsize=4096)
def label_value_error(value: str) -> str | None:
    """Why ``value`` is not a valid label value (upstream ``IsValidLabelValue``), or None."""
    if len(value) > 63:
        return f"invalid label value {value!r}: must be no more than 63 characters"
    if _LABEL_VALUE_RE.fullmatch(value) is None:
        return f"invalid label value {value!r}: a valid label value must be empty or {_NAME_CHARSET_MESSAGE}"
    return None


def _read_values(expression: Mapping[str, Any], path: str) -> tuple[str, ...]:
    values = as_list(get_field(expression, "values"), f"{path}.values")
    for index, value in enumerate(values):
        if type(value) is not str:
            raise ManifestError(f"expected a string, got {type_name(value)} {value!r}", f"{path}.values[{index}]")
    return tuple(values)


# --------------------------------------------------------------------------------------------
# LabelSelector
# --------------------------------------------------------------------------------------------
class LabelSelector:
    """A parsed ``metav1.LabelSelector``; immutable.

    Build it with :meth:`from_dict`, :meth:`from_match_labels`, or use :data:`NOTHING` /
    :data:`EVERYTHING`. matchLabels entries become ``(key, "In", {value})`` requirements.
    """

    __slots__ = ("_requirements", "_selects_nothing")

    def __init__(self, requirements: Iterable[tuple[str, str, Iterable[str]]] = (), *,
                 selects_nothing: bool = False):
        """Build from ``(key, operator, values)`` triples, which must already be valid."""
        normalized = [(key, operator, frozenset(values)) for key, operator, values in requirements]
        normalized.sort(key=lambda requirement: requirement[0])  # upstream sorts by key
        self._requirements: tuple[tuple[str, str, frozenset[str]], ...] = tuple(normalized)
        self._selects_nothing = selects_nothing

    @classmethod
    def from_dict(cls, value: Any, path: str = "") -> "LabelSelector":
        """Parse a LabelSelector map; None gives :data:`NOTHING` (upstream's nil-selector meaning).

        Raises ManifestError naming the path for unknown operators, In/NotIn without values,
        Exists/DoesNotExist with values, and invalid label keys or values.
        """
        if value is None:
            return NOTHING
        selector = as_map(value, path)
        match_labels_path = child_path(path, "matchLabels")
        match_labels = as_string_map(get_field(selector, "matchLabels"), match_labels_path)
        expressions_path = child_path(path, "matchExpressions")
        expressions = as_list(get_field(selector, "matchExpressions"), expressions_path)
        if not match_labels and not expressions:
            return EVERYTHING
        requirements: list[tuple[str, str, tuple[str, ...]]] = []
        for key, label_value in match_labels.items():
            error = label_key_error(key) or label_value_error(label_value)
            if error:
                raise ManifestError(error, child_path(match_labels_path, key))
            requirements.append((key, IN, (label_value,)))
        for index, raw in enumerate(expressions):
            expression_path = f"{expressions_path}[{index}]"
            expression = as_map(raw, expression_path)
            key = as_str(get_field(expression, "key"), f"{expression_path}.key")
            operator = as_str(get_field(expression, "operator"), f"{expression_path}.operator")
            values = _read_values(expression, expression_path)
            error = label_key_error(key)
            if error:
                raise ManifestError(error, f"{expression_path}.key")
            if operator not in _LABEL_SELECTOR_OPERATORS:
                raise ManifestError(f"{operator!r} is not a valid label selector operator "
                                    f"(want one of {', '.join(_LABEL_SELECTOR_OPERATORS)})",
                                    f"{expression_path}.operator")
            if operator in (IN, NOT_IN) and not values:
                raise ManifestError("values must be non-empty for the In and NotIn operators",
                                    f"{expression_path}.values")
            if operator in (EXISTS, DOES_NOT_EXIST) and values:
                raise ManifestError("values must be empty for the Exists and DoesNotExist operators",
                                    f"{expression_path}.values")
            for value_index, label_value in enumerate(values):
                error = label_value_error(label_value)
                if error:
                    raise ManifestError(error, f"{expression_path}.values[{value_index}]")
            requirements.append((key, operator, values))
        return cls(requirements)

    @classmethod
    def from_match_labels(cls, labels: Mapping[str, str]) -> "LabelSelector":
        """A selector requiring every key to have exactly the given value (``SelectorFromSet``).

        Not validated, like upstream's ``SelectorFromSet``. An empty mapping selects everything.
        """
        return cls((key, IN, (value,)) for key, value in labels.items()) if labels else EVERYTHING

    @classmethod
    def nothing(cls) -> "LabelSelector":
        """The selector that selects nothing (upstream ``labels.Nothing()``)."""
        return NOTHING

    @classmethod
    def everything(cls) -> "LabelSelector":
        """The selector that selects everything (upstream ``labels.Everything()``)."""
        return EVERYTHING

    def matches(self, labels: Mapping[str, str]) -> bool:
        """Whether the labels satisfy every requirement (NotIn also holds for an absent label)."""
        if self._selects_nothing:
            return False
        for key, operator, values in self._requirements:
            value = labels.get(key)
            if operator == IN:
                if value is None or value not in values:
                    return False
            elif operator == NOT_IN:
                if value is not None and value in values:
                    return False
            elif operator == EXISTS:
                if value is None:
                    return False
            elif value is not None:  # DoesNotExist
                return False
        return True

    def is_empty(self) -> bool:
        """True for a selector with no requirements, which selects everything (upstream ``Empty()``)."""
        return not self._requirements and not self._selects_nothing

    def selects_nothing(self) -> bool:
        """True only for :data:`NOTHING` (upstream ``MatchesNothing``)."""
        return self._selects_nothing

    def requirements(self) -> tuple[tuple[str, str, frozenset[str]], ...]:
        """The requirements as ``(key, operator, frozenset(values))``, sorted by key."""
        return self._requirements

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, LabelSelector):
            return NotImplemented
        return (self._selects_nothing == other._selects_nothing
                and self._requirements == other._requirements)

    def __hash__(self) -> int:
        return hash((self._selects_nothing, self._requirements))

    def __repr__(self) -> str:
        if self._selects_nothing:
            return "LabelSelector.nothing()"
        if not self._requirements:
            return "LabelSelector.everything()"
        return f"LabelSelector({[(k, op, sorted(v)) for k, op, v in self._requirements]!r})"


NOTHING = LabelSelector(selects_nothing=True)
EVERYTHING = LabelSelector()


# --------------------------------------------------------------------------------------------
# NodeSelector
# --------------------------------------------------------------------------------------------
class NodeLike(Protocol):
    name: str
    labels: Mapping[str, str]


class NodeSelectorRequirement:
    """One ``NodeSelectorRequirement`` (key, operator, values) of matchExpressions or matchFields."""

    __slots__ = ("key", "operator", "values", "_value_set", "_bound")

    def __init__(self, key: str, operator: str, values: Iterable[str] = ()):
        self.key = key
        self.operator = operator
        self.values: tuple[str, ...] = tuple(values)
        self._value_set = frozenset(self.values)
        # Gt/Lt bound, parsed once; None if invalid (then the term carries a parse error).
        self._bound = parse_int64(self.values[0]) if operator in (GT, LT) and len(self.values) == 1 else None

    def matches_labels(self, labels: Mapping[str, str]) -> bool:
        """Evaluate as a label requirement (the requirement is assumed valid)."""
        value = labels.get(self.key)
        operator = self.operator
        if operator == IN:
            return value is not None and value in self._value_set
        if operator == NOT_IN:
            return value is None or value not in self._value_set
        if operator == EXISTS:
            return value is not None
        if operator == DOES_NOT_EXIST:
            return value is None
        if value is None or self._bound is None:
            return False
        number = parse_int64(value)  # a label that is not an integer never matches Gt/Lt
        if number is None:
            return False
        return number > self._bound if operator == GT else number < self._bound

    def label_errors(self, path: str) -> list[str]:
        """Why this requirement is invalid in matchExpressions (upstream ``NewRequirement``)."""
        errors = []
        key_error = label_key_error(self.key)
        if key_error:
            errors.append(f"{path}.key: {key_error}")
        operator, values = self.operator, self.values
        if operator in (IN, NOT_IN):
            if not values:
                errors.append(f"{path}.values: values must be non-empty for the In and NotIn operators")
        elif operator in (EXISTS, DOES_NOT_EXIST):
            if values:
                errors.append(f"{path}.values: values must be empty for the Exists and DoesNotExist operators")
        elif operator in (GT, LT):
            if len(values) != 1:
                errors.append(f"{path}.values: exactly one value is required for the Gt and Lt operators")
            for index, value in enumerate(values):
                if parse_int64(value) is None:
                    errors.append(f"{path}.values[{index}]: {value!r} is not an integer, "
                                  "as the Gt and Lt operators require")
        else:
            errors.append(f"{path}.operator: unsupported operator {operator!r} "
                          f"(want one of {', '.join(_NODE_SELECTOR_OPERATORS)})")
        for index, value in enumerate(values):
            value_error = label_value_error(value)
            if value_error:
                errors.append(f"{path}.values[{index}]: {value_error}")
        return errors

    def field_errors(self, path: str) -> list[str]:
        """Why this requirement is invalid in matchFields (only In/NotIn with one value)."""
        if self.operator not in (IN, NOT_IN):
            return [f"{path}.operator: unsupported operator {self.operator!r} for matchFields (want In or NotIn)"]
        if len(self.values) != 1:
            return [f"{path}.values: must have exactly one element"]
        return []

    def matches_field(self, node_name: str) -> bool:
        """Evaluate as a field requirement against the node's fields.

        The scheduler exposes only ``metadata.name``; any other field reads as "" (as upstream's
        ``fields.Set`` lookup does), so In on another field never matches and NotIn always does.
        """
        value = node_name if self.key == _NODE_NAME_FIELD else ""
        return (value == self.values[0]) == (self.operator == IN)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, NodeSelectorRequirement):
            return NotImplemented
        return (self.key, self.operator, self.values) == (other.key, other.operator, other.values)

    def __hash__(self) -> int:
        return hash((self.key, self.operator, self.values))

    def __repr__(self) -> str:
        return f"NodeSelectorRequirement({self.key!r}, {self.operator!r}, {list(self.values)!r})"

    @classmethod
    def from_dict(cls, value: Any, path: str) -> "NodeSelectorRequirement":
        requirement = as_map(value, path)
        key = as_str(get_field(requirement, "key"), f"{path}.key")
        operator = as_str(get_field(requirement, "operator"), f"{path}.operator")
        return cls(key, operator, _read_values(requirement, path))


class NodeSelectorTerm:
    """A ``NodeSelectorTerm``: matchExpressions AND matchFields.

    ``parse_errors`` lists why the term is invalid; an invalid term, and a term with neither
    expressions nor fields, matches no node.
    """

    __slots__ = ("match_expressions", "match_fields", "parse_errors")

    def __init__(self, match_expressions: Iterable[NodeSelectorRequirement] = (),
                 match_fields: Iterable[NodeSelectorRequirement] = (), path: str = ""):
        self.match_expressions: tuple[NodeSelectorRequirement, ...] = tuple(match_expressions)
        self.match_fields: tuple[NodeSelectorRequirement, ...] = tuple(match_fields)
        prefix = f"{path}." if path else ""
        errors: list[str] = []
        for index, requirement in enumerate(self.match_expressions):
            errors.extend(requirement.label_errors(f"{prefix}matchExpressions[{index}]"))
        for index, requirement in enumerate(self.match_fields):
            errors.extend(requirement.field_errors(f"{prefix}matchFields[{index}]"))
        self.parse_errors: tuple[str, ...] = tuple(errors)

    @classmethod
    def from_dict(cls, value: Any, path: str) -> "NodeSelectorTerm":
        term = as_map(value, path)
        expressions_path = f"{path}.matchExpressions"
        fields_path = f"{path}.matchFields"
        expressions = [NodeSelectorRequirement.from_dict(item, f"{expressions_path}[{index}]")
                       for index, item in enumerate(as_list(get_field(term, "matchExpressions"), expressions_path))]
        fields = [NodeSelectorRequirement.from_dict(item, f"{fields_path}[{index}]")
                  for index, item in enumerate(as_list(get_field(term, "matchFields"), fields_path))]
        return cls(expressions, fields, path)

    @property
    def is_empty(self) -> bool:
        """True when the term has neither matchExpressions nor matchFields (it selects nothing)."""
        return not self.match_expressions and not self.match_fields

    def matches(self, node: NodeLike) -> bool:
        """Whether the node satisfies the term; False for empty or invalid terms."""
        if self.parse_errors or (not self.match_expressions and not self.match_fields):
            return False
        labels = node.labels
        for requirement in self.match_expressions:
            if not requirement.matches_labels(labels):
                return False
        node_name = node.name
        if node_name:  # upstream skips matchFields for a node without a name
            for requirement in self.match_fields:
                if not requirement.matches_field(node_name):
                    return False
        return True

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, NodeSelectorTerm):
            return NotImplemented
        return (self.match_expressions, self.match_fields) == (other.match_expressions, other.match_fields)

    def __hash__(self) -> int:
        return hash((self.match_expressions, self.match_fields))

    def __repr__(self) -> str:
        return f"NodeSelectorTerm(match_expressions={list(self.match_expressions)!r}, " \
               f"match_fields={list(self.match_fields)!r})"


class NodeSelector:
    """A ``v1.NodeSelector``: its terms are ORed; no (non-empty, valid) term means no match."""

    __slots__ = ("terms",)

    def __init__(self, terms: Iterable[NodeSelectorTerm] = ()):
        self.terms: tuple[NodeSelectorTerm, ...] = tuple(terms)

    @classmethod
    def from_dict(cls, value: Any, path: str = "") -> "NodeSelector":
        selector = as_map(value, path)
        terms_path = child_path(path, "nodeSelectorTerms")
        return cls(NodeSelectorTerm.from_dict(item, f"{terms_path}[{index}]")
                   for index, item in enumerate(as_list(get_field(selector, "nodeSelectorTerms"), terms_path)))

    @property
    def parse_errors(self) -> tuple[str, ...]:
        """Parse errors of all non-empty terms (upstream ``NewNodeSelector`` would reject these)."""
        return tuple(error for term in self.terms for error in term.parse_errors)

    def matches(self, node: NodeLike) -> bool:
        """Whether any term matches the node."""
        for term in self.terms:
            if term.matches(node):
                return True
        return False

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, NodeSelector):
            return NotImplemented
        return self.terms == other.terms

    def __hash__(self) -> int:
        return hash(self.terms)

    def __repr__(self) -> str:
        return f"NodeSelector({list(self.terms)!r})"


class PreferredSchedulingTerm:
    """A ``PreferredSchedulingTerm``: a weight (1-100) and a preference term."""

    __slots__ = ("weight", "preference")

    def __init__(self, weight: int, preference: NodeSelectorTerm):
        self.weight = weight
        self.preference = preference

    @classmethod
    def from_dict(cls, value: Any, path: str) -> "PreferredSchedulingTerm":
        term = as_map(value, path)
        weight = get_field(term, "weight")
        if weight is None:
            weight = 0
        elif type(weight) is not int:
            raise ManifestError(f"expected an integer, got {type_name(weight)} {weight!r}", f"{path}.weight")
        return cls(weight, NodeSelectorTerm.from_dict(get_field(term, "preference"), f"{path}.preference"))

    @property
    def counts(self) -> bool:
        """Whether upstream keeps this term for scoring (non-zero weight and non-empty preference)."""
        return self.weight != 0 and not self.preference.is_empty

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, PreferredSchedulingTerm):
            return NotImplemented
        return (self.weight, self.preference) == (other.weight, other.preference)

    def __hash__(self) -> int:
        return hash((self.weight, self.preference))

    def __repr__(self) -> str:
        return f"PreferredSchedulingTerm(weight={self.weight!r}, preference={self.preference!r})"


def preferred_node_affinity_score(terms: Iterable[PreferredSchedulingTerm], node: NodeLike) -> int:
    """Sum of the weights of the preferred terms that match the node (upstream ``Score``).

    Terms with weight 0 or an empty preference are dropped, as in ``NewPreferredSchedulingTerms``;
    upstream refuses to score at all when a kept term has parse errors, so callers should check
    ``term.preference.parse_errors`` first; here such a term simply never matches.
    """
    score = 0
    for term in terms:
        if term.weight != 0 and term.preference.matches(node):
            score += term.weight
    return score


class _PodWithNodeConstraints(Protocol):
    node_selector: Mapping[str, str] | None
    affinity: Any


def required_node_affinity_matches(pod: _PodWithNodeConstraints, node: NodeLike) -> bool:
    """Upstream ``GetRequiredNodeAffinity(pod).Match(node)``.

    Every ``spec.nodeSelector`` entry must equal the node's label, and when the pod has
    ``requiredDuringSchedulingIgnoredDuringExecution`` node affinity one of its terms must match.
    """
    node_selector = pod.node_selector
    if node_selector:
        labels = node.labels
        for key, value in node_selector.items():
            if labels.get(key) != value:
                return False
    affinity = pod.affinity
    if affinity is not None:
        node_affinity = affinity.node_affinity
        if node_affinity is not None and node_affinity.required is not None:
            return node_affinity.required.matches(node)
    return True
