"""Typed plugin args (upstream ``kubescheduler.config.k8s.io/v1`` ``*Args`` kinds), v1.37.2.

Each args class has:

* ``ARGS_KIND`` — its v1 kind (``"NodeResourcesFitArgs"``);
* ``from_dict(d, path="")`` — strict decoding of the v1 (camelCase) form; unknown fields and type
  errors raise :class:`ConfigError` with field paths. ``d`` may carry ``apiVersion``/``kind``;
* ``to_dict()`` — the v1 form back (with ``apiVersion``/``kind``);
* ``set_defaults()`` — upstream ``SetDefaults_<Kind>`` (``defaults.go``) for fields whose default
  depends on the value (empty lists, zero weights, ...). Fields upstream defaults when *unset*
  already hold that default as their dataclass default, so ``Kind()`` is the defaulted form, except
  for the defaults that depend on feature gates: the kinds with ``GATED_DEFAULTS`` (VolumeBinding's
  ``shape``, DynamicResources' ``bindingTimeout``) take ``set_defaults(feature_gates=...)``;
* ``validate(path="")`` — the ``validation_pluginargs.go`` checks, as a list of :class:`FieldError`.

Field names are the snake_case of upstream's; durations are float seconds.
"""

from __future__ import annotations

import abc
import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar, Self

from ._decode import (
    BOOL,
    DURATION,
    ERROR,
    INT32,
    INT64,
    STR,
    STR_LIST,
    Converter,
    Decoder,
    format_duration,
    list_of,
    string_of,
    struct_of,
    type_meta_error,
)
from ._names import is_qualified_name, is_valid_label_value, validate_label_name
from .errors import ConfigError
from ..util.field import FieldError, FieldPath, GoStruct, as_path, go_quote
from .types import API_VERSION

#: Upper bound of a RequestedToCapacityRatio / VolumeBinding shape score (``MaxCustomPriorityScore``).
MAX_CUSTOM_PRIORITY_SCORE = 10

LEAST_ALLOCATED = "LeastAllocated"
MOST_ALLOCATED = "MostAllocated"
REQUESTED_TO_CAPACITY_RATIO = "RequestedToCapacityRatio"
SCORING_STRATEGY_TYPES = (LEAST_ALLOCATED, MOST_ALLOCATED, REQUESTED_TO_CAPACITY_RATIO)

SYSTEM_DEFAULTING = "System"
LIST_DEFAULTING = "List"

DO_NOT_SCHEDULE = "DoNotSchedule"
SCHEDULE_ANYWAY = "ScheduleAnyway"


#: the group of the args kinds, and the kinds kube-scheduler's scheme registers under its v1
_GROUP = API_VERSION.partition("/")[0]
_V1_KINDS = frozenset(("KubeSchedulerConfiguration", "DefaultPreemptionArgs", "DynamicResourcesArgs",
                       "InterPodAffinityArgs", "NodeAffinityArgs", "NodeResourcesBalancedAllocationArgs",
                       "NodeResourcesFitArgs", "PodTopologySpreadArgs", "VolumeBindingArgs"))
#: the name of the scheme in apimachinery's NotRegisteredError (the caller of NewScheme)
_SCHEME_NAME = "pkg/runtime/scheme.go:111"


def _args_kind_error(args_kind: str, api_version: str, kind: str, path: FieldPath,
                     document: Any) -> tuple[str, str] | None:
    """Where and why upstream refuses a known plugin's args for their ``apiVersion``/``kind``
    (None when they are the plugin's or unset): the decoder defaults a missing group, version or
    kind to the plugin's (``gvkWithDefaults``), the scheme must know the result
    (``NotRegisteredError``), and it must be the plugin's kind (``PluginConfig.decodeNestedObjects``)."""
    if api_version in ("", "/"):
        group, version = "", ""
    elif api_version.count("/") == 0:
        group, version = "", api_version
    elif api_version.count("/") == 1:
        group, _, version = api_version.partition("/")
    else:  # schema.ParseGroupVersion, from SimpleMetaFactory.Interpret
        return str(path.child("apiVersion")), f"unexpected GroupVersion string: {api_version}"
    kind = kind or args_kind
    if not version and not group:
        group, version = _GROUP, "v1"
    elif not version and group == _GROUP:
        version = "v1"
    if not version:  # runtime.NewMissingVersionErr, quoting the args as sigs.k8s.io/yaml wrote them
        return str(path.child("apiVersion")), f"Object 'apiVersion' is missing in '{_go_json(document)}'"
    if (group, version) != (_GROUP, "v1") or kind not in _V1_KINDS:
        shown = f"{group}/{version}" if group else version
        at = path.child("kind" if (group, version) == (_GROUP, "v1") else "apiVersion")
        return str(at), f"no kind {go_quote(kind)} is registered for version {go_quote(shown)} " \
                        f"in scheme {go_quote(_SCHEME_NAME)}"
    if kind != args_kind:
        return str(path.child("kind")), (f"args for plugin {args_kind.removesuffix('Args')} were not of type "
                                         f"{args_kind}.{_GROUP}, got {kind}.{_GROUP}")
    return None


def _go_json(value: Any) -> str:
    """``value`` as encoding/json's Marshal writes it (sorted keys, compact, HTML characters escaped)."""
    text = json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)
    for ch, escaped in (("<", "\\u003c"), (">", "\\u003e"), ("&", "\\u0026"),
                        ("\u2028", "\\u2028"), ("\u2029", "\\u2029")):
        text = text.replace(ch, escaped)
    return text


class PluginArgs(abc.ABC):
    """Shared decoding for the args kinds; subclasses list their fields in ``_FIELDS``."""

    ARGS_KIND: ClassVar[str]
    _FIELDS: ClassVar[Sequence[tuple[str, str, Converter]]]

    @classmethod
    def from_dict(cls, d: Any, path: FieldPath | str = "") -> Self:
        """Decode the v1 form strictly; raise :class:`ConfigError` listing every problem."""
        dec = Decoder()
        dec.root = str(as_path(path))  # the args are the document's root, as upstream decodes them
        obj = cls.decode(dec, {} if d is None else d, as_path(path))
        if dec.errors:
            raise ConfigError(dec.errors)
        return obj

    @classmethod
    def decode(cls, dec: Decoder, value: Any, path: FieldPath) -> Self:
        """Decode into a new instance, recording problems in ``dec`` (see :class:`Decoder`)."""
        meta_error = type_meta_error(value, path, dec.prefix)
        if meta_error is not None:
            dec.error(meta_error)
            return cls()
        if dec.mapping(value, path) is ERROR:
            return cls()
        body = dict(value)
        api_version = body.pop("apiVersion", None)
        kind = body.pop("kind", None)
        kind_error = _args_kind_error(cls.ARGS_KIND, api_version or "", kind or "", path, value)
        if kind_error is not None:
            at, text = kind_error
            prefix = dec.prefix
            if text.startswith("args for plugin"):  # (decodeNestedObjects' own error: not the decoder's)
                prefix = prefix.replace(f"decoding args for plugin {cls.ARGS_KIND.removesuffix('Args')}: ", "")
            dec.error(FieldError.decoding(at, api_version if at.endswith("apiVersion") else kind, prefix + text))
            return cls()
        obj = cls()
        dec.fill(obj, body, path, cls._FIELDS, "v1." + cls.ARGS_KIND)
        return obj

    @abc.abstractmethod
    def to_dict(self) -> dict[str, Any]:
        """The v1 form, with ``apiVersion`` and ``kind``."""

    def _header(self) -> dict[str, Any]:
        return {"apiVersion": API_VERSION, "kind": self.ARGS_KIND}

    def set_defaults(self) -> None:  # noqa: B027 - a deliberate no-op for kinds without such defaults
        """Apply value-dependent defaults in place."""

    def validate(self, path: FieldPath | str = "") -> list[FieldError]:
        """Upstream's validation for this kind, as field errors under ``path``."""
        return []


# --------------------------------------------------------------------------------------------
# Shared pieces


@dataclass
class ResourceSpec:
    """A resource name with a scoring weight (``weight`` 0 is defaulted to 1)."""

    name: str = ""
    weight: int = 0

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {"name": self.name}
        if self.weight:
            d["weight"] = self.weight
        return d


@dataclass
class UtilizationShapePoint:
    """One point of a scoring shape: utilization 0–100 maps to score 0–10."""

    utilization: int = 0
    score: int = 0

    def to_dict(self) -> dict[str, Any]:
        return {"utilization": self.utilization, "score": self.score}


@dataclass
class RequestedToCapacityRatioParam:
    shape: list[UtilizationShapePoint] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {"shape": [p.to_dict() for p in self.shape]} if self.shape else {}


def _default_resources() -> list[ResourceSpec]:
    return [ResourceSpec("cpu", 1), ResourceSpec("memory", 1)]


@dataclass
class ScoringStrategy:
    """NodeResourcesFit's scoring strategy. A bare ``ScoringStrategy()`` has Go's zero values."""

    type: str = ""
    resources: list[ResourceSpec] = field(default_factory=list)
    requested_to_capacity_ratio: RequestedToCapacityRatioParam | None = None

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {}
        if self.type:
            d["type"] = self.type
        if self.resources:
            d["resources"] = [r.to_dict() for r in self.resources]
        if self.requested_to_capacity_ratio is not None:
            d["requestedToCapacityRatio"] = self.requested_to_capacity_ratio.to_dict()
        return d


@struct_of("v1.ResourceSpec")
def _decode_resource_spec(dec: Decoder, value: Any, path: FieldPath) -> Any:
    return dec.fill(ResourceSpec(), value, path, (("name", "name", STR), ("weight", "weight", INT64)),
                    "v1.ResourceSpec")


@struct_of("v1.UtilizationShapePoint")
def _decode_shape_point(dec: Decoder, value: Any, path: FieldPath) -> Any:
    return dec.fill(
        UtilizationShapePoint(), value, path, (("utilization", "utilization", INT32), ("score", "score", INT32)),
        "v1.UtilizationShapePoint",
    )


_SHAPE = list_of(_decode_shape_point)
_RESOURCES = list_of(_decode_resource_spec)


@struct_of("v1.RequestedToCapacityRatioParam")
def _decode_rtcr(dec: Decoder, value: Any, path: FieldPath) -> Any:
    return dec.fill(RequestedToCapacityRatioParam(), value, path, (("shape", "shape", _SHAPE),),
                    "v1.RequestedToCapacityRatioParam")


@struct_of("v1.ScoringStrategy")
def _decode_scoring_strategy(dec: Decoder, value: Any, path: FieldPath) -> Any:
    fields = (
        ("type", "type", string_of("v1.ScoringStrategyType")),
        ("resources", "resources", _RESOURCES),
        ("requestedToCapacityRatio", "requested_to_capacity_ratio", _decode_rtcr),
    )
    return dec.fill(ScoringStrategy(), value, path, fields, "v1.ScoringStrategy")


def _shape_value(shape: list[UtilizationShapePoint]) -> list[GoStruct]:
    # Upstream renders the internal type, which has no JSON tags: Go field names.
    return [GoStruct(Utilization=p.utilization, Score=p.score) for p in shape]


def validate_function_shape(shape: list[UtilizationShapePoint], path: FieldPath) -> list[FieldError]:
    """Upstream ``validateFunctionShape``: ≥1 point, increasing utilization, ranges."""
    if not shape:
        return [FieldError.required(path, "at least one point must be specified")]
    errs = []
    for i in range(1, len(shape)):
        if shape[i - 1].utilization >= shape[i].utilization:
            errs.append(
                FieldError.invalid(
                    path.index(i).child("utilization"),
                    shape[i].utilization,
                    "values must be sorted in increasing order",
                )
            )
            break
    for i, point in enumerate(shape):
        if not 0 <= point.utilization <= 100:
            errs.append(
                FieldError.invalid(path.index(i).child("utilization"), point.utilization, "not in valid range [0, 100]")
            )
        if not 0 <= point.score <= MAX_CUSTOM_PRIORITY_SCORE:
            errs.append(
                FieldError.invalid(
                    path.index(i).child("score"), point.score, f"not in valid range [0, {MAX_CUSTOM_PRIORITY_SCORE}]"
                )
            )
    return errs


def _validate_resource_weights(resources: list[ResourceSpec], path: FieldPath) -> list[FieldError]:
    return [
        FieldError.invalid(
            path.index(i).child("weight"), r.weight, f"resource weight of {r.name} not in valid range (0, 100]"
        )
        for i, r in enumerate(resources)
        if not 0 < r.weight <= 100
    ]


# --------------------------------------------------------------------------------------------
# Args kinds


@dataclass
class DefaultPreemptionArgs(PluginArgs):
    ARGS_KIND: ClassVar[str] = "DefaultPreemptionArgs"
    _FIELDS: ClassVar = (
        ("minCandidateNodesPercentage", "min_candidate_nodes_percentage", INT32),
        ("minCandidateNodesAbsolute", "min_candidate_nodes_absolute", INT32),
    )

    min_candidate_nodes_percentage: int = 10
    min_candidate_nodes_absolute: int = 100

    def to_dict(self) -> dict[str, Any]:
        return {
            **self._header(),
            "minCandidateNodesPercentage": self.min_candidate_nodes_percentage,
            "minCandidateNodesAbsolute": self.min_candidate_nodes_absolute,
        }

    def validate(self, path: FieldPath | str = "") -> list[FieldError]:
        path = as_path(path)
        pct_path = path.child("minCandidateNodesPercentage")
        abs_path = path.child("minCandidateNodesAbsolute")
        pct, absolute = self.min_candidate_nodes_percentage, self.min_candidate_nodes_absolute
        errs = []
        if not 0 <= pct <= 100:
            errs.append(FieldError.invalid(pct_path, pct, "not in valid range [0, 100]"))
        if absolute < 0:
            errs.append(FieldError.invalid(abs_path, absolute, "not in valid range [0, inf)"))
        if pct == 0 and absolute == 0:
            errs.append(
                FieldError.invalid(pct_path, pct, "cannot be zero at the same time as minCandidateNodesAbsolute")
            )
            errs.append(
                FieldError.invalid(abs_path, absolute, "cannot be zero at the same time as minCandidateNodesPercentage")
            )
        return errs


@dataclass
class InterPodAffinityArgs(PluginArgs):
    ARGS_KIND: ClassVar[str] = "InterPodAffinityArgs"
    _FIELDS: ClassVar = (
        ("hardPodAffinityWeight", "hard_pod_affinity_weight", INT32),
        ("ignorePreferredTermsOfExistingPods", "ignore_preferred_terms_of_existing_pods", BOOL),
    )

    hard_pod_affinity_weight: int = 1
    ignore_preferred_terms_of_existing_pods: bool = False

    def to_dict(self) -> dict[str, Any]:
        return {
            **self._header(),
            "hardPodAffinityWeight": self.hard_pod_affinity_weight,
            "ignorePreferredTermsOfExistingPods": self.ignore_preferred_terms_of_existing_pods,
        }

    def validate(self, path: FieldPath | str = "") -> list[FieldError]:
        w = self.hard_pod_affinity_weight
        if not 0 <= w <= 100:
            return [FieldError.invalid(as_path(path).child("hardPodAffinityWeight"), w, "not in valid range [0, 100]")]
        return []


@dataclass
class NodeResourcesFitArgs(PluginArgs):
    """NodeResourcesFit args.

    Note: config validation never runs :meth:`validate` for these args (upstream keys the
    validator as ``"NodeResourcesFitArgs"``); the plugin's constructor must call it.
    """

    ARGS_KIND: ClassVar[str] = "NodeResourcesFitArgs"
    _FIELDS: ClassVar = (
        ("ignoredResources", "ignored_resources", STR_LIST),
        ("ignoredResourceGroups", "ignored_resource_groups", STR_LIST),
        ("scoringStrategy", "scoring_strategy", _decode_scoring_strategy),
    )

    ignored_resources: list[str] = field(default_factory=list)
    ignored_resource_groups: list[str] = field(default_factory=list)
    scoring_strategy: ScoringStrategy | None = field(
        default_factory=lambda: ScoringStrategy(LEAST_ALLOCATED, _default_resources())
    )

    def to_dict(self) -> dict[str, Any]:
        d = self._header()
        if self.ignored_resources:
            d["ignoredResources"] = list(self.ignored_resources)
        if self.ignored_resource_groups:
            d["ignoredResourceGroups"] = list(self.ignored_resource_groups)
        if self.scoring_strategy is not None:
            d["scoringStrategy"] = self.scoring_strategy.to_dict()
        return d

    def set_defaults(self) -> None:
        if self.scoring_strategy is None:
            self.scoring_strategy = ScoringStrategy(LEAST_ALLOCATED, _default_resources())
        if not self.scoring_strategy.resources:
            self.scoring_strategy.resources = _default_resources()
        for r in self.scoring_strategy.resources:
            if r.weight == 0:
                r.weight = 1

    def validate(self, path: FieldPath | str = "") -> list[FieldError]:
        path = as_path(path)
        errs: list[FieldError] = []
        for i, res in enumerate(self.ignored_resources):
            errs.extend(validate_label_name(res, path.child("ignoredResources").index(i)))
        for i, group in enumerate(self.ignored_resource_groups):
            p = path.child("ignoredResourceGroups").index(i)
            if "/" in group:
                errs.append(FieldError.invalid(p, group, "resource group name can't contain '/'"))
            errs.extend(validate_label_name(group, p))
        strategy = self.scoring_strategy
        sp = path.child("scoringStrategy")
        if strategy is not None:
            if strategy.type not in SCORING_STRATEGY_TYPES:
                errs.append(FieldError.not_supported(sp.child("type"), strategy.type, sorted(SCORING_STRATEGY_TYPES)))
            errs.extend(_validate_resource_weights(strategy.resources, sp.child("resources")))
            # v1.37 (validation_pluginargs.go: ValidateNodeResourcesFitArgs): the ratio goes with
            # its type only, and its shape is reported where it is (1.34: scoringStrategy.shape)
            rtcr = sp.child("requestedToCapacityRatio")
            if strategy.type == REQUESTED_TO_CAPACITY_RATIO:
                if strategy.requested_to_capacity_ratio is None:
                    errs.append(FieldError.required(rtcr, "must be specified when type is RequestedToCapacityRatio"))
                else:
                    errs.extend(validate_function_shape(strategy.requested_to_capacity_ratio.shape, rtcr.child("shape")))
            elif strategy.requested_to_capacity_ratio is not None:
                errs.append(FieldError.forbidden(rtcr, "must be nil when type is not RequestedToCapacityRatio"))
        else:
            errs.append(FieldError.required(sp, "ScoringStrategy field is required"))
        return errs


@dataclass
class NodeResourcesBalancedAllocationArgs(PluginArgs):
    ARGS_KIND: ClassVar[str] = "NodeResourcesBalancedAllocationArgs"
    _FIELDS: ClassVar = (("resources", "resources", _RESOURCES),)

    resources: list[ResourceSpec] = field(default_factory=_default_resources)

    def to_dict(self) -> dict[str, Any]:
        return {**self._header(), "resources": [r.to_dict() for r in self.resources]}

    def set_defaults(self) -> None:
        if not self.resources:
            self.resources = _default_resources()
            return
        for r in self.resources:
            if r.weight == 0:
                r.weight = 1

    def validate(self, path: FieldPath | str = "") -> list[FieldError]:
        rp = as_path(path).child("resources")
        errs = []
        seen: set[str] = set()
        for i, r in enumerate(self.resources):
            if r.name in seen:
                errs.append(FieldError.duplicate(rp.index(i).child("name"), r.name))
            seen.add(r.name)
            if r.weight != 1:
                errs.append(FieldError.invalid(rp.index(i).child("weight"), r.weight, "must be 1"))
        return errs


@dataclass
class TopologySpreadConstraint:
    """A PodTopologySpread default constraint (``v1.TopologySpreadConstraint``).

    ``label_selector`` is kept as the raw v1 dict; upstream forbids it in default constraints.
    """

    max_skew: int = 0
    topology_key: str = ""
    when_unsatisfiable: str = ""
    label_selector: dict[str, Any] | None = None
    min_domains: int | None = None
    node_affinity_policy: str | None = None
    node_taints_policy: str | None = None
    match_label_keys: list[str] = field(default_factory=list)

    _FIELDS: ClassVar = (
        ("maxSkew", "max_skew", INT32),
        ("topologyKey", "topology_key", STR),
        ("whenUnsatisfiable", "when_unsatisfiable", string_of("v1.UnsatisfiableConstraintAction")),
        ("labelSelector", "label_selector",
         lambda dec, value, path: dec.mapping(value, path, "v1.LabelSelector")),
        ("minDomains", "min_domains", INT32),
        ("nodeAffinityPolicy", "node_affinity_policy", string_of("v1.NodeInclusionPolicy")),
        ("nodeTaintsPolicy", "node_taints_policy", string_of("v1.NodeInclusionPolicy")),
        ("matchLabelKeys", "match_label_keys", STR_LIST),
    )

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {
            "maxSkew": self.max_skew,
            "topologyKey": self.topology_key,
            "whenUnsatisfiable": self.when_unsatisfiable,
        }
        optional = (
            ("labelSelector", self.label_selector),
            ("minDomains", self.min_domains),
            ("nodeAffinityPolicy", self.node_affinity_policy),
            ("nodeTaintsPolicy", self.node_taints_policy),
            ("matchLabelKeys", list(self.match_label_keys) or None),
        )
        d.update((k, v) for k, v in optional if v is not None)
        return d


@struct_of("v1.TopologySpreadConstraint")
def _decode_constraint(dec: Decoder, value: Any, path: FieldPath) -> Any:
    return dec.fill(TopologySpreadConstraint(), value, path, TopologySpreadConstraint._FIELDS,
                    "v1.TopologySpreadConstraint")


@dataclass
class PodTopologySpreadArgs(PluginArgs):
    ARGS_KIND: ClassVar[str] = "PodTopologySpreadArgs"
    _FIELDS: ClassVar = (
        ("defaultConstraints", "default_constraints", list_of(_decode_constraint)),
        ("defaultingType", "defaulting_type", string_of("v1.PodTopologySpreadConstraintsDefaulting")),
    )

    default_constraints: list[TopologySpreadConstraint] = field(default_factory=list)
    defaulting_type: str = SYSTEM_DEFAULTING

    def to_dict(self) -> dict[str, Any]:
        d = self._header()
        if self.default_constraints:
            d["defaultConstraints"] = [c.to_dict() for c in self.default_constraints]
        if self.defaulting_type:
            d["defaultingType"] = self.defaulting_type
        return d

    def set_defaults(self) -> None:
        if not self.defaulting_type:
            self.defaulting_type = SYSTEM_DEFAULTING

    def validate(self, path: FieldPath | str = "") -> list[FieldError]:
        path = as_path(path)
        errs: list[FieldError] = []
        dt_path = path.child("defaultingType")
        if self.defaulting_type not in (SYSTEM_DEFAULTING, LIST_DEFAULTING):
            errs.append(FieldError.not_supported(dt_path, self.defaulting_type, [SYSTEM_DEFAULTING, LIST_DEFAULTING]))
        elif self.defaulting_type == SYSTEM_DEFAULTING and self.default_constraints:
            errs.append(FieldError.invalid(dt_path, self.defaulting_type, "when .defaultConstraints are not empty"))
        cp = path.child("defaultConstraints")
        for i, c in enumerate(self.default_constraints):
            p = cp.index(i)
            if c.max_skew <= 0:
                errs.append(FieldError.invalid(p.child("maxSkew"), c.max_skew, "not in valid range (0, inf)"))
            if not c.topology_key:
                errs.append(FieldError.required(p.child("topologyKey"), "can not be empty"))
            else:
                errs.extend(validate_label_name(c.topology_key, p.child("topologyKey")))
            wp = p.child("whenUnsatisfiable")
            if not c.when_unsatisfiable:
                errs.append(FieldError.required(wp, "can not be empty"))
            elif c.when_unsatisfiable not in (DO_NOT_SCHEDULE, SCHEDULE_ANYWAY):
                errs.append(FieldError.not_supported(wp, c.when_unsatisfiable, [DO_NOT_SCHEDULE, SCHEDULE_ANYWAY]))
            if c.label_selector is not None:
                errs.append(
                    FieldError.forbidden(
                        p.child("labelSelector"), "constraint must not define a selector, as they deduced for each pod"
                    )
                )
            for other in self.default_constraints[:i]:
                if (other.topology_key, other.when_unsatisfiable) == (c.topology_key, c.when_unsatisfiable):
                    errs.append(FieldError.duplicate(p, f"{{{c.topology_key}, {c.when_unsatisfiable}}}"))
                    break
        return errs


# --- NodeAffinity: the added affinity stays a raw v1 dict --------------------------------------

_SELECTOR_OPERATORS = ("In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt")
_FIELD_SELECTOR_OPERATORS = ("In", "NotIn")


def _raw_struct(go_type: str, fields: Sequence[tuple[str, Converter]]) -> Converter:
    """A converter checking an object strictly (as Go struct ``go_type`` of k8s.io/api's core
    v1) and returning it as a plain dict (nulls dropped)."""
    return struct_of(go_type)(lambda dec, value, path: dec.fields(value, path, fields, go_type))


_REQUIREMENT = _raw_struct("v1.NodeSelectorRequirement", (
    ("key", STR), ("operator", string_of("v1.NodeSelectorOperator")), ("values", STR_LIST)))
_TERM = _raw_struct("v1.NodeSelectorTerm", (
    ("matchExpressions", list_of(_REQUIREMENT)), ("matchFields", list_of(_REQUIREMENT))))
_NODE_SELECTOR = _raw_struct("v1.NodeSelector", (("nodeSelectorTerms", list_of(_TERM)),))
_PREFERRED_TERM = _raw_struct("v1.PreferredSchedulingTerm", (("weight", INT32), ("preference", _TERM)))
_NODE_AFFINITY = _raw_struct(
    "v1.NodeAffinity",
    (
        ("requiredDuringSchedulingIgnoredDuringExecution", _NODE_SELECTOR),
        ("preferredDuringSchedulingIgnoredDuringExecution", list_of(_PREFERRED_TERM)),
    )
)


def _validate_requirement(expr: dict[str, Any], path: FieldPath) -> list[FieldError]:
    """``labels.NewRequirement`` checks for one node-selector match expression."""
    key, op, values = expr.get("key", ""), expr.get("operator", ""), expr.get("values")
    vals = values or []
    errs = []
    key_problems = is_qualified_name(key)
    if key_problems:
        errs.append(FieldError.invalid(path.child("key"), key, "; ".join(key_problems)))
    vp = path.child("values")
    if op in ("In", "NotIn") and not vals:
        errs.append(FieldError.invalid(vp, values, "for 'in', 'notin' operators, values set can't be empty"))
    elif op in ("Exists", "DoesNotExist") and vals:
        errs.append(FieldError.invalid(vp, values, "values set must be empty for exists and does not exist"))
    elif op in ("Gt", "Lt"):
        if len(vals) != 1:
            errs.append(FieldError.invalid(vp, values, "for 'Gt', 'Lt' operators, exactly one value is required"))
        for i, v in enumerate(vals):
            if not _is_go_int64(v):
                errs.append(
                    FieldError.invalid(vp.index(i), v, "for 'Gt', 'Lt' operators, the value must be an integer")
                )
    for i, v in enumerate(vals):
        problems = is_valid_label_value(v)
        if problems:
            errs.append(FieldError.invalid(vp.index(i).key(key), v, "; ".join(problems)))
    return errs


def _is_go_int64(text: str) -> bool:
    """``strconv.ParseInt(text, 10, 64)`` succeeds."""
    body = text[1:] if text[:1] in ("+", "-") else text
    return body.isascii() and body.isdigit() and -(2**63) <= int(text) <= 2**63 - 1


def _validate_term(term: dict[str, Any], path: FieldPath) -> list[FieldError]:
    errs = []
    for i, expr in enumerate(term.get("matchExpressions") or []):
        p = path.child("matchExpressions").index(i)
        op = expr.get("operator", "")
        if op not in _SELECTOR_OPERATORS:
            errs.append(FieldError.not_supported(p.child("operator"), op, _SELECTOR_OPERATORS))
        else:
            errs.extend(_validate_requirement(expr, p))
    for i, expr in enumerate(term.get("matchFields") or []):
        p = path.child("matchFields").index(i)
        op = expr.get("operator", "")
        if op not in _FIELD_SELECTOR_OPERATORS:
            errs.append(FieldError.not_supported(p.child("operator"), op, _FIELD_SELECTOR_OPERATORS))
        elif len(expr.get("values") or []) != 1:
            errs.append(FieldError.invalid(p.child("values"), expr.get("values"), "must have one element"))
    return errs


def _is_empty_term(term: dict[str, Any] | None) -> bool:
    return not term or (not term.get("matchExpressions") and not term.get("matchFields"))


@dataclass
class NodeAffinityArgs(PluginArgs):
    """NodeAffinity args.

    ``added_affinity`` is the raw v1 ``NodeAffinity`` dict with its camelCase keys (e.g.
    ``{"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [...]}}``), checked
    strictly when decoded and validated like upstream's node-selector parsing. It stays a dict so
    this package does not depend on ``fastsched.api``; the plugin parses it into the api's
    ``NodeSelector`` when it is built.
    """

    ARGS_KIND: ClassVar[str] = "NodeAffinityArgs"
    _FIELDS: ClassVar = (("addedAffinity", "added_affinity", _NODE_AFFINITY),)

    added_affinity: dict[str, Any] | None = None

    def to_dict(self) -> dict[str, Any]:
        d = self._header()
        if self.added_affinity is not None:
            d["addedAffinity"] = self.added_affinity
        return d

    def validate(self, path: FieldPath | str = "") -> list[FieldError]:
        affinity = self.added_affinity
        if affinity is None:
            return []
        ap = as_path(path).child("addedAffinity")
        errs: list[FieldError] = []
        required = affinity.get("requiredDuringSchedulingIgnoredDuringExecution")
        if required is not None:
            tp = ap.child("requiredDuringSchedulingIgnoredDuringExecution", "nodeSelectorTerms")
            for i, term in enumerate(required.get("nodeSelectorTerms") or []):
                if not _is_empty_term(term):
                    errs.extend(_validate_term(term, tp.index(i)))
        pp = ap.child("preferredDuringSchedulingIgnoredDuringExecution")
        for i, term in enumerate(affinity.get("preferredDuringSchedulingIgnoredDuringExecution") or []):
            if term.get("weight", 0) == 0 or _is_empty_term(term.get("preference")):
                continue
            # Upstream reports preferred-term problems without a ".preference" segment.
            errs.extend(_validate_term(term["preference"], pp.index(i)))
        return errs


#: ``SetDefaults_VolumeBindingArgs``' shape with StorageCapacityScoring on (beta, on since 1.37): score 10 at 0%
#: utilization, 0 at 100% (nodes with more free capacity first)
DEFAULT_VOLUME_BINDING_SHAPE = (UtilizationShapePoint(0, MAX_CUSTOM_PRIORITY_SCORE), UtilizationShapePoint(100, 0))


@dataclass
class VolumeBindingArgs(PluginArgs):
    """VolumeBinding args.

    ``shape`` belongs to the StorageCapacityScoring feature gate, beta and on by default since
    v1.37; with the gate off upstream rejects any ``shape``, and so does :meth:`validate`; with it
    on an empty ``shape`` defaults to :data:`DEFAULT_VOLUME_BINDING_SHAPE` (favouring nodes whose
    storage is least used; ``set_defaults``) and a given one is checked as RequestedToCapacityRatio's
    is.
    """

    ARGS_KIND: ClassVar[str] = "VolumeBindingArgs"
    GATED_DEFAULTS: ClassVar[bool] = True
    _FIELDS: ClassVar = (
        ("bindTimeoutSeconds", "bind_timeout_seconds", INT64),
        ("shape", "shape", _SHAPE),
    )
    bind_timeout_seconds: int = 600
    shape: list[UtilizationShapePoint] | None = None

    def to_dict(self) -> dict[str, Any]:
        d = {**self._header(), "bindTimeoutSeconds": self.bind_timeout_seconds}
        if self.shape is not None:
            d["shape"] = [p.to_dict() for p in self.shape]
        return d

    def set_defaults(self, feature_gates: Any = None) -> None:
        """``SetDefaults_VolumeBindingArgs``: with StorageCapacityScoring on (``feature_gates``,
        default v1.37.2's: on), an empty or absent shape becomes the default one."""
        if not self.shape and _as_gates(feature_gates).enabled("StorageCapacityScoring"):
            self.shape = [UtilizationShapePoint(p.utilization, p.score) for p in DEFAULT_VOLUME_BINDING_SHAPE]

    def effective_shape(self, storage_capacity_scoring: bool) -> list[UtilizationShapePoint] | None:
        """``shape`` as ``SetDefaults_VolumeBindingArgs`` leaves it: with the gate on, an empty or
        absent shape is the default one."""
        if storage_capacity_scoring and not self.shape:
            return [UtilizationShapePoint(p.utilization, p.score) for p in DEFAULT_VOLUME_BINDING_SHAPE]
        return self.shape

    def validate(self, path: FieldPath | str = "", *, storage_capacity_scoring: bool = False) -> list[FieldError]:
        """``ValidateVolumeBindingArgsWithOptions`` (``AllowStorageCapacityScoring`` is the
        StorageCapacityScoring gate)."""
        path = as_path(path)
        errs = []
        if self.bind_timeout_seconds < 0:
            errs.append(
                FieldError.invalid(
                    path.child("bindTimeoutSeconds"),
                    self.bind_timeout_seconds,
                    "invalid BindTimeoutSeconds, should not be a negative value",
                )
            )
        if storage_capacity_scoring:
            shape = self.effective_shape(True)
            assert shape is not None  # with the gate on an absent shape is the default one
            errs += validate_function_shape(shape, path.child("shape"))
        elif self.shape is not None:
            errs.append(
                FieldError.invalid(
                    path.child("shape"),
                    _shape_value(self.shape),
                    "unexpected field `shape`, remove it or turn on the feature gate StorageCapacityScoring",
                )
            )
        return errs


#: ``DynamicResourcesBindingTimeoutDefault`` (kube-scheduler config/v1 types.go, v1.35+), seconds.
DEFAULT_DRA_BINDING_TIMEOUT = 600.0


@dataclass
class DynamicResourcesArgs(PluginArgs):
    """DynamicResources args: ``filterTimeout`` and, since v1.35, ``bindingTimeout`` (how long
    PreBind waits for devices' binding conditions; None is unset).

    ``bindingTimeout`` defaults to 600 s when DRADeviceBindingConditions and
    DRAResourceClaimDeviceStatus are on (both are at v1.37.2) and is forbidden otherwise
    (``SetDefaults_DynamicResourcesArgs``, ``ValidateDynamicResourcesArgs``).
    """

    ARGS_KIND: ClassVar[str] = "DynamicResourcesArgs"
    GATED_DEFAULTS: ClassVar[bool] = True
    _FIELDS: ClassVar = (("filterTimeout", "filter_timeout", DURATION),
                         ("bindingTimeout", "binding_timeout", DURATION))

    #: seconds; 0 disables the timeout. Upstream default 10 s (DRASchedulerFilterTimeout, beta, on).
    filter_timeout: float = 10.0
    #: seconds; None when unset (``set_defaults`` gives 600 with the binding-conditions gates on)
    binding_timeout: float | None = None

    def to_dict(self) -> dict[str, Any]:
        d = {**self._header(), "filterTimeout": format_duration(self.filter_timeout)}
        if self.binding_timeout is not None:
            d["bindingTimeout"] = format_duration(self.binding_timeout)
        return d

    def set_defaults(self, feature_gates: Any = None) -> None:
        if self.binding_timeout is None and _binding_conditions(feature_gates):
            self.binding_timeout = DEFAULT_DRA_BINDING_TIMEOUT

    def validate(self, path: FieldPath | str = "", *, feature_gates: Any = None) -> list[FieldError]:
        """``ValidateDynamicResourcesArgs`` for ``feature_gates`` (default: v1.37.2's).

        (DRASchedulerFilterTimeout is fixed on here, so an explicit ``filterTimeout`` is never
        forbidden; ``filter_timeout`` is no optional field.)"""
        path = as_path(path)
        errs: list[FieldError] = []
        if self.filter_timeout < 0:
            errs.append(FieldError.invalid(path.child("filterTimeout"), format_duration(self.filter_timeout),
                                           "must be zero or positive"))
        if _binding_conditions(feature_gates):
            if self.binding_timeout is not None and self.binding_timeout < 1.0:
                errs.append(FieldError.invalid(path.child("bindingTimeout"), format_duration(self.binding_timeout),
                                               "must be at least 1 second"))
        elif self.binding_timeout is not None:
            errs.append(FieldError.forbidden(
                path.child("bindingTimeout"),
                "DRADeviceBindingConditions or DRAResourceClaimDeviceStatus feature gate is disabled"))
        return errs


def _as_gates(feature_gates: Any) -> Any:
    """The gates to read: v1.37.2's defaults for None, anything with ``enabled(name)`` as it is, a
    mapping or ``"A=true"`` string as :class:`~fastsched.features.FeatureGates`."""
    from ..features import DEFAULTS, FeatureGates

    if feature_gates is None:
        return DEFAULTS
    if callable(getattr(feature_gates, "enabled", None)):
        return feature_gates
    return FeatureGates(feature_gates)


def _binding_conditions(feature_gates: Any) -> bool:
    gates = _as_gates(feature_gates)
    return gates.enabled("DRADeviceBindingConditions") and gates.enabled("DRAResourceClaimDeviceStatus")


#: In-tree plugin name → args type (the v1 kinds registered as ``<Plugin>Args``).
ARGS_TYPES: dict[str, type[PluginArgs]] = {
    "DefaultPreemption": DefaultPreemptionArgs,
    "DynamicResources": DynamicResourcesArgs,
    "InterPodAffinity": InterPodAffinityArgs,
    "NodeAffinity": NodeAffinityArgs,
    "NodeResourcesBalancedAllocation": NodeResourcesBalancedAllocationArgs,
    "NodeResourcesFit": NodeResourcesFitArgs,
    "PodTopologySpread": PodTopologySpreadArgs,
    "VolumeBinding": VolumeBindingArgs,
}
