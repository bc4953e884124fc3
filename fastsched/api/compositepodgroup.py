"""``scheduling.k8s.io/v1alpha3`` CompositePodGroup: a group of pod groups (KEP-4671's
hierarchies, the CompositePodGroup gate, alpha in 1.37), as kube-apiserver v1.37.2 creates it.

Upstream: ``k8s.io/api@v0.37.2/scheduling/v1alpha3/types.go`` (the fields),
``pkg/apis/scheduling/v1alpha3/zz_generated.defaults.go`` and ``defaults.go``
(``disruptionMode: {single: {}}``; ``preemptionPolicy`` PreemptLowerPriority with
PodGroupPreemptionPolicy), ``pkg/registry/scheduling/compositepodgroup/strategy.go``
(``PrepareForCreate``: status cleared, ``preemptionPolicy`` dropped without
PodGroupPreemptionPolicy), ``pkg/apis/scheduling/validation/validation.go``
(``ValidateCompositePodGroup``: the metadata) and the declarative
``pkg/apis/scheduling/v1alpha3/zz_generated.validations.go`` (``Validate_CompositePodGroupSpec``).

Without the CompositePodGroup gate the API server does not serve the resource at all
(``pkg/registry/scheduling/rest/storage_scheduling.go``: ``v1alpha3Storage`` adds
``compositepodgroups`` only with the gate), so creating one is refused: :func:`prepare_composite_pod_group_for_create`
raises the client's "no matches for kind" error. Created objects only, as for PodGroups (the
``Immutable`` rules and the status update have nothing to check in fastsched).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, ClassVar, Mapping

from ..features import COMPOSITE_POD_GROUP, POD_GROUP_PREEMPTION_POLICY
from ..util.field import FieldError, FieldPath
from ._manifest import as_int, as_list, as_map, as_optional_str, as_str, get_field
from ._meta import nested, object_meta
from .errors import ManifestError
from .objects import KubeObject
from .scheduling import (DISRUPTION_MODE_SINGLE, CompositePodGroupSchedulingPolicy, DisruptionMode,
                         PodGroupSchedulingConstraints, WorkloadReference, _composite_scheduling_policy_errors,
                         _disruption_mode, _disruption_mode_errors, _enabled, _long_name, _optional,
                         _priority_errors, _scheduling_constraints, _short_name, _topology_errors,
                         _workload_reference, _composite_scheduling_policy)

__all__ = ["COMPOSITE_POD_GROUP_API_VERSION", "COMPOSITE_POD_GROUP_INITIALLY_SCHEDULED", "CompositePodGroup",
           "parse_composite_pod_group", "prepare_composite_pod_group_for_create", "validate_composite_pod_group",
           "COMPOSITE_POD_GROUP_PARSERS", "COMPOSITE_POD_GROUP_VALIDATORS"]

COMPOSITE_POD_GROUP_API_VERSION = "scheduling.k8s.io/v1alpha3"

#: the condition type the scheduler writes on a CompositePodGroup (types.go)
COMPOSITE_POD_GROUP_INITIALLY_SCHEDULED = "CompositePodGroupInitiallyScheduled"


@dataclass(slots=True, kw_only=True, eq=False)
class CompositePodGroup(KubeObject):
    """A ``scheduling.k8s.io/v1alpha3`` CompositePodGroup: the parent of PodGroups (their
    ``spec.parentCompositePodGroupName``) and of other CompositePodGroups, basic or gang
    (``minGroupCount`` children ready)."""

    KIND: ClassVar[str] = "CompositePodGroup"

    namespace: str = "default"
    #: ``metadata.generation`` (the condition's ``observedGeneration``)
    generation: int = 0
    parent_composite_pod_group_name: str | None = None
    workload_ref: WorkloadReference | None = None
    scheduling_policy: CompositePodGroupSchedulingPolicy = field(default_factory=CompositePodGroupSchedulingPolicy)
    scheduling_constraints: PodGroupSchedulingConstraints | None = None
    disruption_mode: DisruptionMode | None = DISRUPTION_MODE_SINGLE
    priority_class_name: str = ""
    priority: int | None = None
    preemption_policy: str | None = None
    # status
    conditions: tuple[Mapping[str, Any], ...] = ()

    @property
    def is_gang(self) -> bool:
        """Whether the policy is gang (else basic)."""
        return self.scheduling_policy.gang is not None

    @property
    def min_group_count(self) -> int:
        """The gang's ``minGroupCount``; 1 for a basic composite group (``getMinCount``'s reading)."""
        gang = self.scheduling_policy.gang
        return 1 if gang is None else gang.min_group_count


def parse_composite_pod_group(obj: Mapping[str, Any]) -> CompositePodGroup:
    """Build a CompositePodGroup from a manifest dict, with ``SetObjectDefaults_CompositePodGroup``'s
    ungated default (``disruptionMode: {single: {}}``)."""
    spec = as_map(obj.get("spec"), "spec")
    status = as_map(obj.get("status"), "status")
    meta = as_map(obj.get("metadata"), "metadata")
    disruption_mode = nested("spec", lambda s: _optional(s, "disruptionMode", _disruption_mode), spec)
    return CompositePodGroup(
        **object_meta(obj, namespaced=True),
        generation=as_int(meta.get("generation"), "metadata.generation") or 0,
        parent_composite_pod_group_name=as_optional_str(get_field(spec, "parentCompositePodGroupName"),
                                                        "spec.parentCompositePodGroupName"),
        workload_ref=nested("spec", lambda s: _optional(s, "workloadRef", _workload_reference), spec),
        scheduling_policy=nested("spec.schedulingPolicy", _composite_scheduling_policy,
                                 get_field(spec, "schedulingPolicy") or {}),
        scheduling_constraints=nested("spec", lambda s: _optional(s, "schedulingConstraints",
                                                                  _scheduling_constraints), spec),
        disruption_mode=DISRUPTION_MODE_SINGLE if disruption_mode is None else disruption_mode,
        priority_class_name=as_str(get_field(spec, "priorityClassName"), "spec.priorityClassName"),
        priority=as_int(spec.get("priority"), "spec.priority"),
        preemption_policy=as_optional_str(get_field(spec, "preemptionPolicy"), "spec.preemptionPolicy"),
        conditions=tuple(as_map(c, "status.conditions") for c in as_list(status.get("conditions") or [],
                                                                          "status.conditions")))


def prepare_composite_pod_group_for_create(cpg: CompositePodGroup,
                                           gates: Mapping[str, bool] | None = None) -> CompositePodGroup:
    """Refused without CompositePodGroup (the resource is not served); else the gated default
    (``SetDefaults_CompositePodGroup``) and ``PrepareForCreate``: the status cleared,
    ``preemptionPolicy`` dropped without PodGroupPreemptionPolicy."""
    if not _enabled(gates, COMPOSITE_POD_GROUP):
        # kubectl's words for a kind the server does not serve (the v1alpha3 version may be served
        # for its other kinds; compositepodgroups is not, without the gate)
        raise ManifestError(f'no matches for kind "CompositePodGroup" in version "{COMPOSITE_POD_GROUP_API_VERSION}" '
                            "(kube-apiserver serves compositepodgroups only with the CompositePodGroup feature gate)",
                            "kind")
    changes: dict[str, Any] = {}
    if cpg.conditions:
        changes["conditions"] = ()
    if _enabled(gates, POD_GROUP_PREEMPTION_POLICY):
        if cpg.preemption_policy is None:
            changes["preemption_policy"] = "PreemptLowerPriority"
    elif cpg.preemption_policy is not None:
        changes["preemption_policy"] = None
    return cpg.replace(**changes) if changes else cpg


def _spec_errors(cpg: CompositePodGroup, path: FieldPath, gates: Mapping[str, bool] | None) -> list[FieldError]:
    """``Validate_CompositePodGroupSpec`` (declarative), field by field in the struct's order."""
    errors: list[FieldError] = []
    if cpg.parent_composite_pod_group_name is not None:
        errors.extend(_long_name(cpg.parent_composite_pod_group_name, path.child("parentCompositePodGroupName")))
    ref_path = path.child("workloadRef")
    if cpg.workload_ref is None:  # +k8s:required
        errors.append(FieldError.required(ref_path))
    else:
        if not cpg.workload_ref.workload_name:
            errors.append(FieldError.required(ref_path.child("workloadName")))
        else:
            errors.extend(_long_name(cpg.workload_ref.workload_name, ref_path.child("workloadName")))
        if not cpg.workload_ref.template_name:
            errors.append(FieldError.required(ref_path.child("templateName")))
        else:
            errors.extend(_short_name(cpg.workload_ref.template_name, ref_path.child("templateName")))
    errors.extend(_composite_scheduling_policy_errors(cpg.scheduling_policy, path.child("schedulingPolicy")))
    if cpg.scheduling_constraints is not None:  # not gated: the kind itself is
        errors.extend(_topology_errors(cpg.scheduling_constraints, path.child("schedulingConstraints")))
    if cpg.disruption_mode is None:  # defaulted, so required
        errors.append(FieldError.required(path.child("disruptionMode")))
    else:
        errors.extend(_disruption_mode_errors(cpg.disruption_mode, path.child("disruptionMode")))
    errors.extend(_priority_errors(cpg.priority_class_name, cpg.priority, cpg.preemption_policy, path, gates))
    return errors


def validate_composite_pod_group(cpg: CompositePodGroup, gates: Mapping[str, bool] | None = None) -> list[FieldError]:
    """What the API server reports creating ``cpg`` (after :func:`prepare_composite_pod_group_for_create`):
    ``ValidateCompositePodGroup`` (the metadata, a DNS-subdomain name), then the enforced
    declarative rules of the spec (the status conditions' rules are alpha, shadowed)."""
    from .validation import name_is_dns_subdomain, validate_object_meta
    errors = validate_object_meta(cpg, namespaced=True, name_rule=name_is_dns_subdomain)
    errors.extend(_spec_errors(cpg, FieldPath("spec"), gates))
    return errors


COMPOSITE_POD_GROUP_PARSERS: dict[str, Callable[[Mapping[str, Any]], KubeObject]] = {
    "CompositePodGroup": parse_composite_pod_group,
}

COMPOSITE_POD_GROUP_VALIDATORS: dict[str, Callable[..., list[FieldError]]] = {
    "CompositePodGroup": validate_composite_pod_group,
}
