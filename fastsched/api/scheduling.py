"""``scheduling.k8s.io/v1beta1`` Workload and PodGroup: objects, defaulting, the registry's
create strategy and validation, as kube-apiserver v1.37.2 has them (workload-aware scheduling,
KEP-4671; the kinds are served whatever the gates, the scheduler uses them with GenericWorkload).

Upstream: ``k8s.io/api@v0.37.2/scheduling/v1beta1/types.go`` (the fields),
``pkg/apis/scheduling/v1beta1/zz_generated.defaults.go`` and ``defaults.go`` (defaulting),
``pkg/registry/scheduling/{podgroup,workload}/strategy.go`` (``PrepareForCreate``: status
cleared, fields of disabled gates dropped), the hand-written ``pkg/apis/scheduling/validation/
validation.go`` (``ValidatePodGroup``, ``ValidateWorkload``) and the declarative
``pkg/apis/scheduling/v1beta1/zz_generated.validations.go`` with the messages of
``k8s.io/apimachinery@v0.37.2/pkg/api/validate``. The API server returns the hand-written errors
first, then the enforced declarative ones (``rest.ValidateDeclarativelyWithMigrationChecks``;
those marked alpha, e.g. ``dependentRequired`` and the conditions' rules, are shadowed).

Gates: the functions taking ``gates`` read a mapping of gate names to bools (a
:class:`~fastsched.features.FeatureGates`, or a plain dict; a missing gate has its v1.37.2
default). With a gate off, its fields are dropped on create (``dropDisabledPodGroupFields``,
``dropDisabledWorkloadSpecFields``) before validation, so the declarative ``IfOption(gate,
false, Forbidden*)`` rules only fire for objects built in code with the field set.
``compositePodGroupTemplates`` (a tree of :class:`CompositePodGroupTemplate`) and
``parentCompositePodGroupName`` need CompositePodGroup (alpha; the v1alpha3 kind itself is
:mod:`.compositepodgroup`): with it the template tree is validated as the API server does
(:func:`validate_workload_spec`'s hand-written rules, then the declarative ones).

Created objects only: fastsched has no updates of these kinds, so the ``Immutable`` and
``UpdatePointer`` rules (and the status-update validation) have nothing to check.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, ClassVar, Mapping

from ..features import (COMPOSITE_POD_GROUP, DRA_WORKLOAD_RESOURCE_CLAIMS, KNOWN_GATES, POD_GROUP_PREEMPTION_POLICY,
                        TOPOLOGY_AWARE_WORKLOAD_SCHEDULING)
from ..util.field import FieldError, FieldPath, GoStruct, Rendered, go_json
from ._manifest import as_int, as_list, as_map, as_optional_str, as_str, get_field
from ._meta import list_of, nested, object_meta
from .objects import KubeObject
from .util_validation import dns1123_label_errors, dns1123_subdomain_errors, qualified_name_errors

__all__ = [
    "SCHEDULING_API_VERSION", "POD_GROUP_INITIALLY_SCHEDULED", "DISRUPTION_TARGET", "REASON_UNSCHEDULABLE",
    "REASON_SCHEDULER_ERROR", "REASON_PREEMPTION_BY_SCHEDULER", "WORKLOAD_MAX_POD_GROUP_TEMPLATES",
    "MAX_POD_GROUP_RESOURCE_CLAIMS", "TypedLocalObjectReference", "GangSchedulingPolicy", "PodGroupSchedulingPolicy",
    "TopologyConstraint", "PodGroupSchedulingConstraints", "PodGroupResourceClaim", "DisruptionMode",
    "PodGroupTemplate", "CompositeGangSchedulingPolicy", "CompositePodGroupSchedulingPolicy",
    "CompositePodGroupTemplate", "WORKLOAD_MAX_TEMPLATE_DEPTH", "WorkloadReference", "Workload", "PodGroup",
    "parse_workload", "parse_pod_group", "validate_workload_spec",
    "prepare_pod_group_for_create", "prepare_workload_for_create", "validate_pod_group", "validate_workload",
    "SCHEDULING_PARSERS", "SCHEDULING_VALIDATORS",
]

SCHEDULING_API_VERSION = "scheduling.k8s.io/v1beta1"

#: PodGroup condition types and reasons (types.go); only PodGroupInitiallyScheduled is written at v1.37.2
POD_GROUP_INITIALLY_SCHEDULED = "PodGroupInitiallyScheduled"
DISRUPTION_TARGET = "DisruptionTarget"
REASON_UNSCHEDULABLE = "Unschedulable"
REASON_SCHEDULER_ERROR = "SchedulerError"
REASON_PREEMPTION_BY_SCHEDULER = "PreemptionByScheduler"

WORKLOAD_MAX_POD_GROUP_TEMPLATES = 8
MAX_POD_GROUP_RESOURCE_CLAIMS = 4
_MAX_TOPOLOGY_CONSTRAINTS = 1
_MAX_PRIORITY = 1_000_000_000  # +k8s:maximum=1000000000 on priority
_PREEMPTION_POLICIES = ("Never", "PreemptLowerPriority")  # sorted, as validate.Enum lists them


# --------------------------------------------------------------------------------------------
# Objects
# --------------------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class TypedLocalObjectReference:
    """``spec.controllerRef`` of a Workload."""

    kind: str
    name: str
    api_group: str = ""

    def to_json(self) -> GoStruct:
        out = GoStruct()
        if self.api_group:
            out["apiGroup"] = self.api_group
        out["kind"] = self.kind
        out["name"] = self.name
        return out


@dataclass(frozen=True, slots=True)
class GangSchedulingPolicy:
    min_count: int = 0

    def to_json(self) -> GoStruct:
        return GoStruct(minCount=self.min_count)


@dataclass(frozen=True, slots=True)
class PodGroupSchedulingPolicy:
    """A union of ``basic: {}`` and ``gang: {minCount}`` (exactly one, by validation)."""

    basic: bool = False
    gang: GangSchedulingPolicy | None = None

    def to_json(self) -> GoStruct:
        out = GoStruct()
        if self.basic:
            out["basic"] = GoStruct()
        if self.gang is not None:
            out["gang"] = self.gang.to_json()
        return out


@dataclass(frozen=True, slots=True)
class TopologyConstraint:
    key: str

    def to_json(self) -> GoStruct:
        return GoStruct(key=self.key)


@dataclass(frozen=True, slots=True)
class PodGroupSchedulingConstraints:
    """TopologyAwareWorkloadScheduling's constraints (at most one topology key)."""

    topology: tuple[TopologyConstraint, ...] = ()

    def to_json(self) -> GoStruct:
        return GoStruct(topology=[t.to_json() for t in self.topology]) if self.topology else GoStruct()


@dataclass(frozen=True, slots=True)
class PodGroupResourceClaim:
    """A claim shared by the group (DRAWorkloadResourceClaims): a union of a claim name and a
    claim template name."""

    name: str
    resource_claim_name: str | None = None
    resource_claim_template_name: str | None = None

    def to_json(self) -> GoStruct:
        out = GoStruct(name=self.name)
        if self.resource_claim_name is not None:
            out["resourceClaimName"] = self.resource_claim_name
        if self.resource_claim_template_name is not None:
            out["resourceClaimTemplateName"] = self.resource_claim_template_name
        return out


@dataclass(frozen=True, slots=True)
class DisruptionMode:
    """A union of ``single: {}`` and ``all: {}``."""

    single: bool = False
    all: bool = False

    def to_json(self) -> GoStruct:
        out = GoStruct()
        if self.single:
            out["single"] = GoStruct()
        if self.all:
            out["all"] = GoStruct()
        return out


#: PodGroup's default (``SetObjectDefaults_PodGroup``: ``{"single": {}}``)
DISRUPTION_MODE_SINGLE = DisruptionMode(single=True)


@dataclass(frozen=True, slots=True)
class PodGroupTemplate:
    """One ``spec.podGroupTemplates[]`` entry of a Workload."""

    name: str
    scheduling_policy: PodGroupSchedulingPolicy = field(default_factory=PodGroupSchedulingPolicy)
    scheduling_constraints: PodGroupSchedulingConstraints | None = None
    resource_claims: tuple[PodGroupResourceClaim, ...] = ()
    disruption_mode: DisruptionMode | None = None
    priority_class_name: str = ""
    priority: int | None = None
    preemption_policy: str | None = None

    def to_json(self) -> GoStruct:
        """The v1beta1 JSON (``omitempty`` as in types.go: ``schedulingConstraints`` has none, so
        a missing one is ``null``), as ``field.Duplicate`` renders the whole item."""
        out = GoStruct(name=self.name, schedulingPolicy=self.scheduling_policy.to_json(),
                       schedulingConstraints=None if self.scheduling_constraints is None
                       else self.scheduling_constraints.to_json())
        if self.resource_claims:
            out["resourceClaims"] = [c.to_json() for c in self.resource_claims]
        if self.disruption_mode is not None:
            out["disruptionMode"] = self.disruption_mode.to_json()
        if self.priority_class_name:
            out["priorityClassName"] = self.priority_class_name
        if self.priority is not None:
            out["priority"] = self.priority
        if self.preemption_policy is not None:
            out["preemptionPolicy"] = self.preemption_policy
        return out


@dataclass(frozen=True, slots=True)
class WorkloadReference:
    """``spec.workloadRef`` of a PodGroup: the Workload and the template it was made from."""

    workload_name: str
    template_name: str


@dataclass(frozen=True, slots=True)
class CompositeGangSchedulingPolicy:
    """``gang: {minGroupCount}`` of a composite group: how many child groups must be schedulable."""

    min_group_count: int = 0

    def to_json(self) -> GoStruct:
        return GoStruct(minGroupCount=self.min_group_count)


@dataclass(frozen=True, slots=True)
class CompositePodGroupSchedulingPolicy:
    """A union of ``basic: {}`` and ``gang: {minGroupCount}`` (CompositePodGroup)."""

    basic: bool = False
    gang: CompositeGangSchedulingPolicy | None = None

    def to_json(self) -> GoStruct:
        out = GoStruct()
        if self.basic:
            out["basic"] = GoStruct()
        if self.gang is not None:
            out["gang"] = self.gang.to_json()
        return out


@dataclass(frozen=True, slots=True)
class CompositePodGroupTemplate:
    """One ``compositePodGroupTemplates[]`` entry of a Workload (CompositePodGroup, alpha): a
    group of groups, with child pod group templates and child composite templates (at most 4
    levels). ``schedulingConstraints`` and ``disruptionMode`` have the shapes of a PodGroup's
    (:class:`PodGroupSchedulingConstraints`, :class:`DisruptionMode`)."""

    name: str
    scheduling_policy: CompositePodGroupSchedulingPolicy = field(default_factory=CompositePodGroupSchedulingPolicy)
    scheduling_constraints: PodGroupSchedulingConstraints | None = None
    disruption_mode: DisruptionMode | None = None
    priority_class_name: str = ""
    priority: int | None = None
    preemption_policy: str | None = None
    pod_group_templates: tuple[PodGroupTemplate, ...] = ()
    composite_pod_group_templates: tuple[CompositePodGroupTemplate, ...] = ()

    def replace(self, **changes: Any) -> CompositePodGroupTemplate:
        values = {name: getattr(self, name) for name in CompositePodGroupTemplate.__dataclass_fields__}
        values.update(changes)
        return CompositePodGroupTemplate(**values)

    def to_json(self) -> GoStruct:
        """The v1beta1 JSON (every field but ``name`` and ``schedulingPolicy`` ``omitempty``), as
        ``field.Duplicate`` renders the whole item."""
        out = GoStruct(name=self.name, schedulingPolicy=self.scheduling_policy.to_json())
        if self.scheduling_constraints is not None:
            out["schedulingConstraints"] = self.scheduling_constraints.to_json()
        if self.disruption_mode is not None:
            out["disruptionMode"] = self.disruption_mode.to_json()
        if self.priority_class_name:
            out["priorityClassName"] = self.priority_class_name
        if self.priority is not None:
            out["priority"] = self.priority
        if self.preemption_policy is not None:
            out["preemptionPolicy"] = self.preemption_policy
        if self.pod_group_templates:
            out["podGroupTemplates"] = [t.to_json() for t in self.pod_group_templates]
        if self.composite_pod_group_templates:
            out["compositePodGroupTemplates"] = [t.to_json() for t in self.composite_pod_group_templates]
        return out


def _internal_union(single: bool, all_: bool, names: tuple[str, str]) -> GoStruct:
    return GoStruct({names[0]: GoStruct() if single else None, names[1]: GoStruct() if all_ else None})


def _internal_constraints(constraints: PodGroupSchedulingConstraints | None) -> GoStruct | None:
    if constraints is None:
        return None
    return GoStruct(Topology=[GoStruct(Key=t.key) for t in constraints.topology] if constraints.topology else None)


def _internal_pod_group_template(t: PodGroupTemplate) -> GoStruct:
    """``scheduling.PodGroupTemplate`` (the internal type, no JSON tags) as encoding/json writes it."""
    gang = t.scheduling_policy.gang
    return GoStruct(
        Name=t.name,
        SchedulingPolicy=GoStruct(Basic=GoStruct() if t.scheduling_policy.basic else None,
                                  Gang=None if gang is None else GoStruct(MinCount=gang.min_count)),
        SchedulingConstraints=_internal_constraints(t.scheduling_constraints),
        ResourceClaims=[GoStruct(Name=c.name, ResourceClaimName=c.resource_claim_name,
                                 ResourceClaimTemplateName=c.resource_claim_template_name)
                        for c in t.resource_claims] if t.resource_claims else None,
        DisruptionMode=None if t.disruption_mode is None
        else _internal_union(t.disruption_mode.single, t.disruption_mode.all, ("Single", "All")),
        PriorityClassName=t.priority_class_name, Priority=t.priority, PreemptionPolicy=t.preemption_policy)


def _internal_composite_template(t: CompositePodGroupTemplate) -> GoStruct:
    """``scheduling.CompositePodGroupTemplate`` as encoding/json writes it: the value
    ``validateWorkloadTemplatesDepth``'s error renders (the hand-written rules see internal types)."""
    gang = t.scheduling_policy.gang
    return GoStruct(
        Name=t.name,
        SchedulingPolicy=GoStruct(Basic=GoStruct() if t.scheduling_policy.basic else None,
                                  Gang=None if gang is None else GoStruct(MinGroupCount=gang.min_group_count)),
        SchedulingConstraints=_internal_constraints(t.scheduling_constraints),
        DisruptionMode=None if t.disruption_mode is None
        else _internal_union(t.disruption_mode.single, t.disruption_mode.all, ("Single", "All")),
        PriorityClassName=t.priority_class_name, Priority=t.priority, PreemptionPolicy=t.preemption_policy,
        PodGroupTemplates=[_internal_pod_group_template(c) for c in t.pod_group_templates]
        if t.pod_group_templates else None,
        CompositePodGroupTemplates=[_internal_composite_template(c) for c in t.composite_pod_group_templates]
        if t.composite_pod_group_templates else None)


@dataclass(slots=True, kw_only=True, eq=False)
class Workload(KubeObject):
    """A ``scheduling.k8s.io/v1beta1`` Workload: the pod group templates of an application."""

    KIND: ClassVar[str] = "Workload"

    namespace: str = "default"
    controller_ref: TypedLocalObjectReference | None = None
    pod_group_templates: tuple[PodGroupTemplate, ...] = ()
    #: CompositePodGroup only: dropped on create with the gate off
    composite_pod_group_templates: tuple[CompositePodGroupTemplate, ...] = ()


@dataclass(slots=True, kw_only=True, eq=False)
class PodGroup(KubeObject):
    """A ``scheduling.k8s.io/v1beta1`` PodGroup: pods scheduled together (``spec.schedulingGroup.
    podGroupName`` of each pod names it), basic or gang (``minCount``)."""

    KIND: ClassVar[str] = "PodGroup"

    namespace: str = "default"
    #: ``metadata.generation`` (the condition's ``observedGeneration``)
    generation: int = 0
    parent_composite_pod_group_name: str | None = None
    workload_ref: WorkloadReference | None = None
    scheduling_policy: PodGroupSchedulingPolicy = field(default_factory=PodGroupSchedulingPolicy)
    scheduling_constraints: PodGroupSchedulingConstraints | None = None
    resource_claims: tuple[PodGroupResourceClaim, ...] = ()
    disruption_mode: DisruptionMode | None = DISRUPTION_MODE_SINGLE
    priority_class_name: str = ""
    priority: int | None = None
    preemption_policy: str | None = None
    # status
    conditions: tuple[Mapping[str, Any], ...] = ()
    resource_claim_statuses: tuple[Mapping[str, Any], ...] = ()

    @property
    def is_gang(self) -> bool:
        """Whether the policy is gang (else basic)."""
        return self.scheduling_policy.gang is not None

    @property
    def min_count(self) -> int:
        """GangScheduling's ``getMinCount``: the gang's ``minCount``, 1 for a basic group."""
        gang = self.scheduling_policy.gang
        return 1 if gang is None else gang.min_count


# --------------------------------------------------------------------------------------------
# Decoding and defaulting
# --------------------------------------------------------------------------------------------
def _present(mapping: Mapping[str, Any], key: str, path: str) -> bool:
    """Whether an empty-struct union member (``basic: {}``) is set: present and not null."""
    value = get_field(mapping, key)
    if value is None:
        return False
    as_map(value, path)
    return True


def _scheduling_policy(value: Any) -> PodGroupSchedulingPolicy:
    policy = as_map(value, "")
    gang = get_field(policy, "gang")
    return PodGroupSchedulingPolicy(
        basic=_present(policy, "basic", "basic"),
        gang=None if gang is None else GangSchedulingPolicy(
            as_int(get_field(as_map(gang, "gang"), "minCount"), "gang.minCount") or 0))


def _topology_constraint(value: Any) -> TopologyConstraint:
    return TopologyConstraint(as_str(as_map(value, "").get("key"), "key"))


def _scheduling_constraints(value: Any) -> PodGroupSchedulingConstraints:
    return PodGroupSchedulingConstraints(list_of(as_map(value, "").get("topology"), "topology", _topology_constraint))


def _resource_claim(value: Any) -> PodGroupResourceClaim:
    claim = as_map(value, "")
    return PodGroupResourceClaim(
        name=as_str(claim.get("name"), "name"),
        resource_claim_name=as_optional_str(get_field(claim, "resourceClaimName"), "resourceClaimName"),
        resource_claim_template_name=as_optional_str(get_field(claim, "resourceClaimTemplateName"),
                                                     "resourceClaimTemplateName"))


def _disruption_mode(value: Any) -> DisruptionMode:
    mode = as_map(value, "")
    return DisruptionMode(single=_present(mode, "single", "single"), all=_present(mode, "all", "all"))


def _optional(mapping: Mapping[str, Any], key: str, parse: Callable[[Any], Any]) -> Any:
    value = get_field(mapping, key)
    return None if value is None else nested(key, parse, value)


def _pod_group_template(value: Any) -> PodGroupTemplate:
    template = as_map(value, "")
    return PodGroupTemplate(
        name=as_str(template.get("name"), "name"),
        scheduling_policy=nested("schedulingPolicy", _scheduling_policy,
                                 get_field(template, "schedulingPolicy") or {}),
        scheduling_constraints=_optional(template, "schedulingConstraints", _scheduling_constraints),
        resource_claims=list_of(get_field(template, "resourceClaims"), "resourceClaims", _resource_claim),
        disruption_mode=_optional(template, "disruptionMode", _disruption_mode),
        priority_class_name=as_str(get_field(template, "priorityClassName"), "priorityClassName"),
        priority=as_int(template.get("priority"), "priority"),
        preemption_policy=as_optional_str(get_field(template, "preemptionPolicy"), "preemptionPolicy"))


def _composite_scheduling_policy(value: Any) -> CompositePodGroupSchedulingPolicy:
    policy = as_map(value, "")
    gang = get_field(policy, "gang")
    return CompositePodGroupSchedulingPolicy(
        basic=_present(policy, "basic", "basic"),
        gang=None if gang is None else CompositeGangSchedulingPolicy(
            as_int(get_field(as_map(gang, "gang"), "minGroupCount"), "gang.minGroupCount") or 0))


def _composite_pod_group_template(value: Any) -> CompositePodGroupTemplate:
    template = as_map(value, "")
    return CompositePodGroupTemplate(
        name=as_str(template.get("name"), "name"),
        scheduling_policy=nested("schedulingPolicy", _composite_scheduling_policy,
                                 get_field(template, "schedulingPolicy") or {}),
        scheduling_constraints=_optional(template, "schedulingConstraints", _scheduling_constraints),
        disruption_mode=_optional(template, "disruptionMode", _disruption_mode),
        priority_class_name=as_str(get_field(template, "priorityClassName"), "priorityClassName"),
        priority=as_int(template.get("priority"), "priority"),
        preemption_policy=as_optional_str(get_field(template, "preemptionPolicy"), "preemptionPolicy"),
        pod_group_templates=list_of(get_field(template, "podGroupTemplates"), "podGroupTemplates",
                                    _pod_group_template),
        composite_pod_group_templates=list_of(get_field(template, "compositePodGroupTemplates"),
                                              "compositePodGroupTemplates", _composite_pod_group_template))


def _typed_reference(value: Any) -> TypedLocalObjectReference:
    ref = as_map(value, "")
    return TypedLocalObjectReference(kind=as_str(ref.get("kind"), "kind"), name=as_str(ref.get("name"), "name"),
                                     api_group=as_str(get_field(ref, "apiGroup"), "apiGroup"))


def _workload_reference(value: Any) -> WorkloadReference:
    ref = as_map(value, "")
    return WorkloadReference(workload_name=as_str(get_field(ref, "workloadName"), "workloadName"),
                             template_name=as_str(get_field(ref, "templateName"), "templateName"))


def parse_workload(obj: Mapping[str, Any]) -> Workload:
    """Build a Workload from a manifest dict (no defaulting: Workload has none)."""
    spec = as_map(obj.get("spec"), "spec")
    return Workload(
        **object_meta(obj, namespaced=True),
        controller_ref=_optional(spec, "controllerRef", _typed_reference) if spec else None,
        pod_group_templates=list_of(get_field(spec, "podGroupTemplates"), "spec.podGroupTemplates",
                                    _pod_group_template),
        composite_pod_group_templates=list_of(get_field(spec, "compositePodGroupTemplates"),
                                              "spec.compositePodGroupTemplates", _composite_pod_group_template))


def parse_pod_group(obj: Mapping[str, Any]) -> PodGroup:
    """Build a PodGroup from a manifest dict, with ``SetObjectDefaults_PodGroup``'s ungated
    default (``disruptionMode: {single: {}}``); the gated one is :func:`prepare_pod_group_for_create`'s."""
    spec = as_map(obj.get("spec"), "spec")
    status = as_map(obj.get("status"), "status")
    meta = as_map(obj.get("metadata"), "metadata")
    disruption_mode = _optional(spec, "disruptionMode", _disruption_mode)
    return PodGroup(
        **object_meta(obj, namespaced=True),
        generation=as_int(meta.get("generation"), "metadata.generation") or 0,
        parent_composite_pod_group_name=as_optional_str(get_field(spec, "parentCompositePodGroupName"),
                                                        "spec.parentCompositePodGroupName"),
        workload_ref=nested("spec", lambda s: _optional(s, "workloadRef", _workload_reference), spec),
        scheduling_policy=nested("spec.schedulingPolicy", _scheduling_policy,
                                 get_field(spec, "schedulingPolicy") or {}),
        scheduling_constraints=nested("spec", lambda s: _optional(s, "schedulingConstraints",
                                                                  _scheduling_constraints), spec),
        resource_claims=list_of(get_field(spec, "resourceClaims"), "spec.resourceClaims", _resource_claim),
        disruption_mode=DISRUPTION_MODE_SINGLE if disruption_mode is None else disruption_mode,
        priority_class_name=as_str(get_field(spec, "priorityClassName"), "spec.priorityClassName"),
        priority=as_int(spec.get("priority"), "spec.priority"),
        preemption_policy=as_optional_str(get_field(spec, "preemptionPolicy"), "spec.preemptionPolicy"),
        conditions=tuple(as_map(c, "status.conditions") for c in as_list(status.get("conditions") or [],
                                                                          "status.conditions")),
        resource_claim_statuses=tuple(
            as_map(c, "status.resourceClaimStatuses")
            for c in as_list(get_field(status, "resourceClaimStatuses") or [], "status.resourceClaimStatuses")))


# --------------------------------------------------------------------------------------------
# Create strategies
# --------------------------------------------------------------------------------------------
def _enabled(gates: Mapping[str, bool] | None, name: str) -> bool:
    if gates is not None and name in gates:
        return bool(gates[name])
    return KNOWN_GATES[name].default


def prepare_pod_group_for_create(pod_group: PodGroup, gates: Mapping[str, bool] | None = None) -> PodGroup:
    """Defaulting that depends on gates (``SetDefaults_PodGroup``: ``preemptionPolicy``
    PreemptLowerPriority with PodGroupPreemptionPolicy) and ``PrepareForCreate``: the status
    cleared, the fields of disabled gates dropped."""
    changes: dict[str, Any] = {}
    if pod_group.conditions or pod_group.resource_claim_statuses:
        changes.update(conditions=(), resource_claim_statuses=())
    if not _enabled(gates, TOPOLOGY_AWARE_WORKLOAD_SCHEDULING) and pod_group.scheduling_constraints is not None:
        changes["scheduling_constraints"] = None
    if not _enabled(gates, DRA_WORKLOAD_RESOURCE_CLAIMS) and pod_group.resource_claims:
        changes["resource_claims"] = ()
    if _enabled(gates, POD_GROUP_PREEMPTION_POLICY):
        if pod_group.preemption_policy is None:
            changes["preemption_policy"] = "PreemptLowerPriority"
    elif pod_group.preemption_policy is not None:
        changes["preemption_policy"] = None
    if not _enabled(gates, COMPOSITE_POD_GROUP) and pod_group.parent_composite_pod_group_name is not None:
        changes["parent_composite_pod_group_name"] = None
    return pod_group.replace(**changes) if changes else pod_group


def _prepare_template(template: PodGroupTemplate, gates: Mapping[str, bool] | None) -> PodGroupTemplate:
    changes: dict[str, Any] = {}
    if not _enabled(gates, TOPOLOGY_AWARE_WORKLOAD_SCHEDULING) and template.scheduling_constraints is not None:
        changes["scheduling_constraints"] = None
    if not _enabled(gates, DRA_WORKLOAD_RESOURCE_CLAIMS) and template.resource_claims:
        changes["resource_claims"] = ()
    if not _enabled(gates, POD_GROUP_PREEMPTION_POLICY) and template.preemption_policy is not None:
        changes["preemption_policy"] = None
    if not changes:
        return template
    values = {name: getattr(template, name) for name in PodGroupTemplate.__dataclass_fields__}
    values.update(changes)
    return PodGroupTemplate(**values)


def _prepare_composite_template(template: CompositePodGroupTemplate,
                                gates: Mapping[str, bool] | None) -> CompositePodGroupTemplate:
    """``dropDisabledCompositePodGroupTemplatesFields`` for one template (create: no old one): its
    ``preemptionPolicy`` without PodGroupPreemptionPolicy, its child composite templates without
    CompositePodGroup, and the same drops below, in child pod group templates too."""
    changes: dict[str, Any] = {}
    if not _enabled(gates, POD_GROUP_PREEMPTION_POLICY) and template.preemption_policy is not None:
        changes["preemption_policy"] = None
    if not _enabled(gates, COMPOSITE_POD_GROUP):
        if template.composite_pod_group_templates:
            changes["composite_pod_group_templates"] = ()
    else:
        children = tuple(_prepare_composite_template(t, gates) for t in template.composite_pod_group_templates)
        if any(new is not old for new, old in zip(children, template.composite_pod_group_templates)):
            changes["composite_pod_group_templates"] = children
    leaves = tuple(_prepare_template(t, gates) for t in template.pod_group_templates)
    if any(new is not old for new, old in zip(leaves, template.pod_group_templates)):
        changes["pod_group_templates"] = leaves
    return template.replace(**changes) if changes else template


def prepare_workload_for_create(workload: Workload, gates: Mapping[str, bool] | None = None) -> Workload:
    """``PrepareForCreate`` (``dropDisabledWorkloadSpecFields``): the fields of disabled gates
    dropped from every pod group template, composite templates dropped without CompositePodGroup
    (with it, the drops go down the template tree: ``dropDisabledCompositePodGroupTemplatesFields``)."""
    templates = tuple(_prepare_template(t, gates) for t in workload.pod_group_templates)
    changes: dict[str, Any] = {}
    if any(new is not old for new, old in zip(templates, workload.pod_group_templates)):
        changes["pod_group_templates"] = templates
    if not _enabled(gates, COMPOSITE_POD_GROUP):
        if workload.composite_pod_group_templates:
            changes["composite_pod_group_templates"] = ()
    else:
        composites = tuple(_prepare_composite_template(t, gates) for t in workload.composite_pod_group_templates)
        if any(new is not old for new, old in zip(composites, workload.composite_pod_group_templates)):
            changes["composite_pod_group_templates"] = composites
    return workload.replace(**changes) if changes else workload


# --------------------------------------------------------------------------------------------
# Validation: apimachinery's validate package (declarative rules)
# --------------------------------------------------------------------------------------------
def _content(messages: tuple[str, ...], max_length: int) -> list[str]:
    # the content package (ShortName, LongName) says "bytes" where util/validation says "characters"
    old = f"must be no more than {max_length} characters"
    return [m.replace(old, f"must be no more than {max_length} bytes") for m in messages]


def _short_name(value: str, path: FieldPath) -> list[FieldError]:
    """``validate.ShortName`` (a DNS label)."""
    return [FieldError.invalid(path, value, m) for m in _content(dns1123_label_errors(value), 63)]


def _long_name(value: str, path: FieldPath) -> list[FieldError]:
    """``validate.LongName`` (a DNS subdomain)."""
    return [FieldError.invalid(path, value, m) for m in _content(dns1123_subdomain_errors(value), 253)]


def _path_segment_name(value: str, path: FieldPath) -> list[FieldError]:
    """``validate.PathSegmentName`` (``content.IsPathSegmentName``)."""
    if value in (".", ".."):
        return [FieldError.invalid(path, value, f"may not be '{value}'")]
    return [FieldError.invalid(path, value, f"may not contain '{bad}'") for bad in ("/", "%") if bad in value]


def _union(path: FieldPath, members: tuple[str, ...], set_members: list[str]) -> list[FieldError]:
    """``validate.Union``: exactly one member set."""
    all_fields = ", ".join(f"`{m}`" for m in members)
    if len(set_members) > 1:
        return [FieldError.invalid(path, "{" + ", ".join(set_members) + "}", f"must specify exactly one of: {all_fields}")]
    if not set_members:
        return [FieldError.invalid(path, "", f"must specify one of: {all_fields}")]
    return []


def _duplicates(items: tuple, key: Callable[[Any], Any], path: FieldPath,
                render: Callable[[Any], Any]) -> list[FieldError]:
    """``validate.ValSliceUnique``: every later item equal (by key) to an earlier one, by index."""
    dups = sorted({j for i in range(len(items)) for j in range(i + 1, len(items)) if key(items[i]) == key(items[j])})
    return [FieldError.duplicate(path.index(j), Rendered(go_json(render(items[j])))) for j in dups]


def _scheduling_policy_errors(policy: PodGroupSchedulingPolicy, path: FieldPath) -> list[FieldError]:
    """``Validate_PodGroupSchedulingPolicy`` and ``Validate_GangSchedulingPolicy``."""
    set_members = [name for name, is_set in (("basic", policy.basic), ("gang", policy.gang is not None)) if is_set]
    errors = _union(path, ("basic", "gang"), set_members)
    if policy.gang is not None:
        min_path = path.child("gang", "minCount")
        if policy.gang.min_count == 0:
            errors.append(FieldError.required(min_path))
        elif policy.gang.min_count < 1:
            errors.append(FieldError.invalid(min_path, policy.gang.min_count, "must be greater than or equal to 1"))
    return errors


def _scheduling_constraints_errors(constraints: PodGroupSchedulingConstraints | None, path: FieldPath,
                                   gates: Mapping[str, bool] | None) -> list[FieldError]:
    if constraints is None:
        return []
    if not _enabled(gates, TOPOLOGY_AWARE_WORKLOAD_SCHEDULING):
        return [FieldError.forbidden(path, "")]
    return _topology_errors(constraints, path)


def _topology_errors(constraints: PodGroupSchedulingConstraints, path: FieldPath) -> list[FieldError]:
    """``Validate_*SchedulingConstraints``: at most one topology constraint, each key a label key
    (also the v1alpha3 blocks of a Job's ``spec.scheduling``)."""
    topology_path = path.child("topology")
    if len(constraints.topology) > _MAX_TOPOLOGY_CONSTRAINTS:
        return [FieldError.too_many(topology_path, len(constraints.topology), _MAX_TOPOLOGY_CONSTRAINTS)]
    errors: list[FieldError] = []
    for index, constraint in enumerate(constraints.topology):
        key_path = topology_path.index(index).child("key")
        if not constraint.key:
            errors.append(FieldError.required(key_path))
        else:
            errors.extend(FieldError.invalid(key_path, constraint.key, m) for m in qualified_name_errors(constraint.key))
    return errors


def _resource_claims_errors(claims: tuple[PodGroupResourceClaim, ...], path: FieldPath) -> list[FieldError]:
    if len(claims) > MAX_POD_GROUP_RESOURCE_CLAIMS:
        return [FieldError.too_many(path, len(claims), MAX_POD_GROUP_RESOURCE_CLAIMS)]
    errors = _duplicates(claims, lambda c: c.name, path, lambda c: c.to_json())
    for index, claim in enumerate(claims):
        item = path.index(index)
        errors.extend(_union(item, ("resourceClaimName", "resourceClaimTemplateName"),
                             [name for name, value in (("resourceClaimName", claim.resource_claim_name),
                                                       ("resourceClaimTemplateName",
                                                        claim.resource_claim_template_name))
                              if value is not None]))
        if not claim.name:
            errors.append(FieldError.required(item.child("name")))
        else:
            errors.extend(_short_name(claim.name, item.child("name")))
        if claim.resource_claim_name is not None:
            errors.extend(_long_name(claim.resource_claim_name, item.child("resourceClaimName")))
        if claim.resource_claim_template_name is not None:
            errors.extend(_long_name(claim.resource_claim_template_name, item.child("resourceClaimTemplateName")))
    return errors


def _disruption_mode_errors(mode: DisruptionMode, path: FieldPath) -> list[FieldError]:
    return _union(path, ("single", "all"), [name for name, is_set in (("single", mode.single), ("all", mode.all))
                                            if is_set])


def _priority_errors(priority_class_name: str, priority: int | None, preemption_policy: str | None,
                     path: FieldPath, gates: Mapping[str, bool] | None) -> list[FieldError]:
    """``priorityClassName`` (LongName), ``priority`` (maximum) and ``preemptionPolicy`` (gated enum)."""
    errors: list[FieldError] = []
    if priority_class_name:
        errors.extend(_long_name(priority_class_name, path.child("priorityClassName")))
    if priority is not None and priority > _MAX_PRIORITY:
        errors.append(FieldError.invalid(path.child("priority"), priority,
                                         f"must be less than or equal to {_MAX_PRIORITY}"))
    if preemption_policy is not None:
        policy_path = path.child("preemptionPolicy")
        if not _enabled(gates, POD_GROUP_PREEMPTION_POLICY):
            errors.append(FieldError.forbidden(policy_path, ""))
        elif preemption_policy not in _PREEMPTION_POLICIES:
            # a named string type: field.Error renders it with json.Marshal
            errors.append(FieldError.not_supported(policy_path, Rendered(go_json(preemption_policy)),
                                                   _PREEMPTION_POLICIES))
    return errors


def _pod_group_spec_errors(pg: PodGroup, path: FieldPath, gates: Mapping[str, bool] | None) -> list[FieldError]:
    """``Validate_PodGroupSpec`` (declarative), field by field in the struct's order."""
    errors: list[FieldError] = []
    if pg.parent_composite_pod_group_name is not None:
        parent_path = path.child("parentCompositePodGroupName")
        if not _enabled(gates, COMPOSITE_POD_GROUP):
            errors.append(FieldError.forbidden(parent_path, ""))
        else:
            errors.extend(_long_name(pg.parent_composite_pod_group_name, parent_path))
    if pg.workload_ref is not None:
        ref_path = path.child("workloadRef")
        if not pg.workload_ref.workload_name:
            errors.append(FieldError.required(ref_path.child("workloadName")))
        else:
            errors.extend(_long_name(pg.workload_ref.workload_name, ref_path.child("workloadName")))
        if not pg.workload_ref.template_name:
            errors.append(FieldError.required(ref_path.child("templateName")))
        else:
            errors.extend(_short_name(pg.workload_ref.template_name, ref_path.child("templateName")))
    errors.extend(_scheduling_policy_errors(pg.scheduling_policy, path.child("schedulingPolicy")))
    errors.extend(_scheduling_constraints_errors(pg.scheduling_constraints, path.child("schedulingConstraints"), gates))
    if pg.resource_claims:
        errors.extend(_resource_claims_errors(pg.resource_claims, path.child("resourceClaims")))
    if pg.disruption_mode is None:  # optional with a default: effectively required
        errors.append(FieldError.required(path.child("disruptionMode")))
    else:
        errors.extend(_disruption_mode_errors(pg.disruption_mode, path.child("disruptionMode")))
    errors.extend(_priority_errors(pg.priority_class_name, pg.priority, pg.preemption_policy, path, gates))
    return errors


def _pod_group_template_errors(template: PodGroupTemplate, path: FieldPath,
                               gates: Mapping[str, bool] | None) -> list[FieldError]:
    """``Validate_PodGroupTemplate``."""
    errors: list[FieldError] = []
    if not template.name:
        errors.append(FieldError.required(path.child("name")))
    else:
        errors.extend(_short_name(template.name, path.child("name")))
    errors.extend(_scheduling_policy_errors(template.scheduling_policy, path.child("schedulingPolicy")))
    errors.extend(_scheduling_constraints_errors(template.scheduling_constraints, path.child("schedulingConstraints"),
                                                 gates))
    if template.resource_claims:
        errors.extend(_resource_claims_errors(template.resource_claims, path.child("resourceClaims")))
    if template.disruption_mode is not None:
        errors.extend(_disruption_mode_errors(template.disruption_mode, path.child("disruptionMode")))
    errors.extend(_priority_errors(template.priority_class_name, template.priority, template.preemption_policy,
                                   path, gates))
    return errors


def _workload_spec_errors(wl: Workload, path: FieldPath, gates: Mapping[str, bool] | None) -> list[FieldError]:
    """``Validate_WorkloadSpec`` (declarative)."""
    errors = _union(path, ("podGroupTemplates", "compositePodGroupTemplates"),
                    [name for name, items in (("podGroupTemplates", wl.pod_group_templates),
                                              ("compositePodGroupTemplates", wl.composite_pod_group_templates))
                     if items])
    ref = wl.controller_ref
    if ref is not None:
        ref_path = path.child("controllerRef")
        if ref.api_group:
            errors.extend(_long_name(ref.api_group, ref_path.child("apiGroup")))
        for name, value in (("kind", ref.kind), ("name", ref.name)):
            if not value:
                errors.append(FieldError.required(ref_path.child(name)))
            else:
                errors.extend(_path_segment_name(value, ref_path.child(name)))
    templates_path = path.child("podGroupTemplates")
    if len(wl.pod_group_templates) > WORKLOAD_MAX_POD_GROUP_TEMPLATES:
        errors.append(FieldError.too_many(templates_path, len(wl.pod_group_templates),
                                          WORKLOAD_MAX_POD_GROUP_TEMPLATES))
    elif wl.pod_group_templates:
        errors.extend(_duplicates(wl.pod_group_templates, lambda t: t.name, templates_path, lambda t: t.to_json()))
        for index, template in enumerate(wl.pod_group_templates):
            errors.extend(_pod_group_template_errors(template, templates_path.index(index), gates))
    if wl.composite_pod_group_templates:
        errors.extend(_composite_templates_errors(wl.composite_pod_group_templates,
                                                  path.child("compositePodGroupTemplates"), gates,
                                                  gated=True))
    return errors


def _pod_group_templates_errors(templates: tuple[PodGroupTemplate, ...], path: FieldPath,
                                gates: Mapping[str, bool] | None) -> list[FieldError]:
    """A ``podGroupTemplates`` list of a composite template: at most 8, unique names, each
    ``Validate_PodGroupTemplate``."""
    if len(templates) > WORKLOAD_MAX_POD_GROUP_TEMPLATES:
        return [FieldError.too_many(path, len(templates), WORKLOAD_MAX_POD_GROUP_TEMPLATES)]
    errors = _duplicates(templates, lambda t: t.name, path, lambda t: t.to_json())
    for index, template in enumerate(templates):
        errors.extend(_pod_group_template_errors(template, path.index(index), gates))
    return errors


def _composite_templates_errors(templates: tuple[CompositePodGroupTemplate, ...], path: FieldPath,
                                gates: Mapping[str, bool] | None, gated: bool = False) -> list[FieldError]:
    """A ``compositePodGroupTemplates`` list: ``IfOption("CompositePodGroup", false,
    ForbiddenSlice)`` on the Workload's own list (``gated``; the nested lists have no gate rule),
    at most 8 (``WorkloadMaxCompositePodGroupTemplates``), unique names (the whole item rendered),
    each ``Validate_CompositePodGroupTemplate``."""
    if gated and not _enabled(gates, COMPOSITE_POD_GROUP):
        return [FieldError.forbidden(path, "")]
    if len(templates) > WORKLOAD_MAX_POD_GROUP_TEMPLATES:
        return [FieldError.too_many(path, len(templates), WORKLOAD_MAX_POD_GROUP_TEMPLATES)]
    errors = _duplicates(templates, lambda t: t.name, path, lambda t: t.to_json())
    for index, template in enumerate(templates):
        errors.extend(_composite_template_errors(template, path.index(index), gates))
    return errors


def _composite_scheduling_policy_errors(policy: CompositePodGroupSchedulingPolicy,
                                        path: FieldPath) -> list[FieldError]:
    """``Validate_CompositePodGroupSchedulingPolicy`` and ``Validate_CompositeGangSchedulingPolicy``
    (``minGroupCount``: required, then minimum 1)."""
    set_members = [name for name, is_set in (("basic", policy.basic), ("gang", policy.gang is not None)) if is_set]
    errors = _union(path, ("basic", "gang"), set_members)
    if policy.gang is not None:
        min_path = path.child("gang", "minGroupCount")
        if policy.gang.min_group_count == 0:
            errors.append(FieldError.required(min_path))
        elif policy.gang.min_group_count < 1:
            errors.append(FieldError.invalid(min_path, policy.gang.min_group_count,
                                             "must be greater than or equal to 1"))
    return errors


def _composite_template_errors(template: CompositePodGroupTemplate, path: FieldPath,
                               gates: Mapping[str, bool] | None) -> list[FieldError]:
    """``Validate_CompositePodGroupTemplate``, field by field in the struct's order (its
    ``schedulingConstraints`` are not gated, unlike a pod group template's)."""
    errors: list[FieldError] = []
    if not template.name:
        errors.append(FieldError.required(path.child("name")))
    else:
        errors.extend(_short_name(template.name, path.child("name")))
    errors.extend(_composite_scheduling_policy_errors(template.scheduling_policy, path.child("schedulingPolicy")))
    if template.scheduling_constraints is not None:
        errors.extend(_topology_errors(template.scheduling_constraints, path.child("schedulingConstraints")))
    if template.disruption_mode is not None:
        errors.extend(_disruption_mode_errors(template.disruption_mode, path.child("disruptionMode")))
    errors.extend(_priority_errors(template.priority_class_name, template.priority, template.preemption_policy,
                                   path, gates))
    if template.pod_group_templates:
        errors.extend(_pod_group_templates_errors(template.pod_group_templates, path.child("podGroupTemplates"),
                                                  gates))
    if template.composite_pod_group_templates:
        errors.extend(_composite_templates_errors(template.composite_pod_group_templates,
                                                  path.child("compositePodGroupTemplates"), gates))
    return errors


#: ``scheduling.WorkloadMaxTemplateDepth``
WORKLOAD_MAX_TEMPLATE_DEPTH = 4


def _template_names_errors(wl: Workload, path: FieldPath) -> list[FieldError]:
    """``validateWorkloadTemplateNamesUniqueness``: a name used twice anywhere in the template
    tree (one ``names`` set shared by the whole walk; each list's names join it after the list)."""
    names = {t.name for t in wl.pod_group_templates}
    errors: list[FieldError] = []

    def composite_list(list_path: FieldPath, templates: tuple[CompositePodGroupTemplate, ...]) -> None:
        seen = []
        for index, child in enumerate(templates):
            if child.name in names:
                errors.append(FieldError.duplicate(list_path.child("compositePodGroupTemplates").index(index)
                                                   .child("name"), child.name))
            seen.append(child.name)
        names.update(seen)
        for index, child in enumerate(templates):
            composite(child, list_path.child("compositePodGroupTemplates").index(index))

    def composite(template: CompositePodGroupTemplate, template_path: FieldPath) -> None:
        seen = []
        for index, child in enumerate(template.pod_group_templates):
            if child.name in names:
                errors.append(FieldError.duplicate(template_path.child("podGroupTemplates").index(index)
                                                   .child("name"), child.name))
            seen.append(child.name)
        names.update(seen)
        composite_list(template_path, template.composite_pod_group_templates)

    composite_list(path, wl.composite_pod_group_templates)
    return errors


def _template_depth_errors(wl: Workload, path: FieldPath) -> list[FieldError]:
    """``validateWorkloadTemplatesDepth``: a top-level composite template with a descendant at
    depth 4 (itself at 1); the value is its children as the internal type."""
    def fits(template: CompositePodGroupTemplate, depth: int) -> bool:
        if depth == WORKLOAD_MAX_TEMPLATE_DEPTH:
            return False
        return all(fits(child, depth + 1) for child in template.composite_pod_group_templates)

    return [FieldError.invalid(path.index(index),
                               Rendered(go_json([_internal_composite_template(c)
                                                 for c in template.composite_pod_group_templates])
                                        if template.composite_pod_group_templates else "null"),
                               f"maximum template hierarchy depth is {WORKLOAD_MAX_TEMPLATE_DEPTH}")
            for index, template in enumerate(wl.composite_pod_group_templates) if not fits(template, 1)]


def _workload_priority_errors(wl: Workload, path: FieldPath) -> list[FieldError]:
    """``validateWorkloadPriority``: every template of the tree the same ``priorityClassName`` and
    ``priority`` (the first seen is the reference: the first pod group template, else the first
    composite one); one error at most, worded by the list where the difference shows."""
    first: list[tuple[str, int | None]] = []

    def same(template: PodGroupTemplate | CompositePodGroupTemplate) -> bool:
        value = (template.priority_class_name, template.priority)
        if not first:
            first.append(value)
            return True
        return value == first[0]

    for template in wl.pod_group_templates:
        if not same(template):
            return [FieldError.invalid(path, None, "detected multiple priority configurations")]

    def composite(template: CompositePodGroupTemplate) -> bool:
        # itself, then its composite children (depth first), then its pod group children
        return (same(template) and all(composite(c) for c in template.composite_pod_group_templates)
                and all(same(c) for c in template.pod_group_templates))

    for composite_template in wl.composite_pod_group_templates:
        if not composite(composite_template):
            return [FieldError.invalid(path, None, "all priority and priorityClassName values must be identical, "
                                                   "detected multiple values")]
    return []


def _at_least_one_child_errors(template: CompositePodGroupTemplate, path: FieldPath) -> list[FieldError]:
    """``validateCompositePodGroupTemplateHasAtLeastOneChild``, down the composite children."""
    errors: list[FieldError] = []
    if not template.pod_group_templates and not template.composite_pod_group_templates:
        errors.append(FieldError.invalid(path, template.name,
                                         "must have at least one child PodGroupTemplate or CompositePodGroupTemplate"))
    for index, child in enumerate(template.composite_pod_group_templates):
        errors.extend(_at_least_one_child_errors(child, path.child("compositePodGroupTemplates").index(index)))
    return errors


def validate_workload_spec(wl: Workload, path: FieldPath | None = None) -> list[FieldError]:
    """The hand-written ``ValidateWorkloadSpec``: names unique across the template tree, the tree at
    most 4 deep, one priority configuration, every composite template with a child."""
    path = FieldPath("spec") if path is None else path
    composites = path.child("compositePodGroupTemplates")
    errors = _template_names_errors(wl, path)
    errors.extend(_template_depth_errors(wl, composites))
    errors.extend(_workload_priority_errors(wl, path))
    for index, template in enumerate(wl.composite_pod_group_templates):
        errors.extend(_at_least_one_child_errors(template, composites.index(index)))
    return errors


def validate_pod_group(pod_group: PodGroup, gates: Mapping[str, bool] | None = None) -> list[FieldError]:
    """What the API server reports creating ``pod_group`` (after :func:`prepare_pod_group_for_create`):
    ``ValidatePodGroup`` (metadata, ``workloadRef`` needed by ``parentCompositePodGroupName``),
    then ``Validate_PodGroup``'s enforced rules."""
    # deferred import: validation imports the objects module this package's loader registers
    from .validation import name_is_dns_subdomain, validate_object_meta
    errors = validate_object_meta(pod_group, namespaced=True, name_rule=name_is_dns_subdomain)
    if pod_group.parent_composite_pod_group_name is not None and pod_group.workload_ref is None:
        errors.append(FieldError.required(FieldPath("spec").child("workloadRef"),
                                          "must be set when parentCompositePodGroupName is set"))
    errors.extend(_pod_group_spec_errors(pod_group, FieldPath("spec"), gates))
    return errors


def validate_workload(workload: Workload, gates: Mapping[str, bool] | None = None) -> list[FieldError]:
    """What the API server reports creating ``workload`` (after :func:`prepare_workload_for_create`):
    ``ValidateWorkload`` (metadata, :func:`validate_workload_spec`), then ``Validate_Workload``'s
    enforced rules."""
    from .validation import name_is_dns_subdomain, validate_object_meta
    spec = FieldPath("spec")
    errors = validate_object_meta(workload, namespaced=True, name_rule=name_is_dns_subdomain)
    errors.extend(validate_workload_spec(workload, spec))
    errors.extend(_workload_spec_errors(workload, spec, gates))
    return errors


SCHEDULING_PARSERS: dict[str, Callable[[Mapping[str, Any]], KubeObject]] = {
    "Workload": parse_workload,
    "PodGroup": parse_pod_group,
}

SCHEDULING_VALIDATORS: dict[str, Callable[..., list[FieldError]]] = {
    "Workload": validate_workload,
    "PodGroup": validate_pod_group,
}
