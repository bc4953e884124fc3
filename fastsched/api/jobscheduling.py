"""A Job's ``spec.scheduling`` (``batch/v1`` ``JobSchedulingConfiguration``, WorkloadWithJob, alpha
in v1.37.2): decoding, the API server's validation, and the pod group template it compiles to.

Upstream: ``k8s.io/api@v0.37.2/batch/v1/types.go`` (``JobSpec.Scheduling``: the
``scheduling/v1alpha3`` building blocks ``WorkloadPodGroupSchedulingPolicy`` (``basic: {}`` or
``gang: {minCount}``, minCount optional), ``WorkloadPodGroupSchedulingConstraints``,
``WorkloadPodGroupDisruptionMode`` and ``WorkloadPodGroupResourceClaim``);
``pkg/api/job/util.go`` (``DropDisabledFields``: the field dropped on create without the gate;
``WorkloadItemForJob`` and ``defaultMinCountForJob``, shared by validation and the Job
controller); ``component-helpers/scheduling/schedulingv1/workloadbuilder`` (the item resolved:
the Job's blocks over the default Basic policy, then the callbacks; the leaf template built);
``pkg/apis/batch/validation/validation.go`` (``validateGangMinCount``, ``validateJobScheduling``:
hand-written) and ``pkg/apis/batch/v1/zz_generated.validations.go`` with
``pkg/apis/scheduling/v1alpha3/zz_generated.validations.go`` (declarative, enforced: returned after
the hand-written errors).

Only creation is modelled (fastsched has no Job updates through an API): the ``NoSet``/``NoUnset``
and ``Immutable`` update rules and ``validateJobSchedulingUpdate`` have nothing to check.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping

from ..features import KNOWN_GATES, WORKLOAD_WITH_JOB
from ..util.field import FieldError, FieldPath
from ._manifest import as_int, as_map, get_field
from ._meta import list_of, nested
from .scheduling import (
    DisruptionMode,
    GangSchedulingPolicy,
    PodGroupResourceClaim,
    PodGroupSchedulingConstraints,
    PodGroupSchedulingPolicy,
    PodGroupTemplate,
    _disruption_mode,
    _disruption_mode_errors,
    _present,
    _resource_claim,
    _resource_claims_errors,
    _scheduling_constraints,
    _topology_errors,
    _union,
)

__all__ = ["JobGangSchedulingPolicy", "JobSchedulingPolicy", "JobSchedulingConfiguration", "parse_job_scheduling",
           "job_scheduling_errors", "job_scheduling_declarative_errors", "pod_group_template_for_job",
           "workload_with_job_enabled"]


@dataclass(frozen=True, slots=True)
class JobGangSchedulingPolicy:
    """``WorkloadPodGroupGangSchedulingPolicy``: ``minCount`` optional (None: the Job's parallelism)."""

    min_count: int | None = None


@dataclass(frozen=True, slots=True)
class JobSchedulingPolicy:
    """``WorkloadPodGroupSchedulingPolicy``: a union of ``basic: {}`` and ``gang: {}``."""

    basic: bool = False
    gang: JobGangSchedulingPolicy | None = None


@dataclass(frozen=True, slots=True)
class JobSchedulingConfiguration:
    """``spec.scheduling`` of a Job: each block optional."""

    scheduling_policy: JobSchedulingPolicy | None = None
    scheduling_constraints: PodGroupSchedulingConstraints | None = None
    disruption_mode: DisruptionMode | None = None
    resource_claims: tuple[PodGroupResourceClaim, ...] = ()


def workload_with_job_enabled(gates: Mapping[str, bool] | None) -> bool:
    """WorkloadWithJob in ``gates`` (a missing gate: v1.37.2's default, off)."""
    if gates is not None and WORKLOAD_WITH_JOB in gates:
        return bool(gates[WORKLOAD_WITH_JOB])
    return KNOWN_GATES[WORKLOAD_WITH_JOB].default


# --------------------------------------------------------------------------------------------
# Decoding
# --------------------------------------------------------------------------------------------
def _policy(value: Any) -> JobSchedulingPolicy:
    policy = as_map(value, "")
    gang = get_field(policy, "gang")
    return JobSchedulingPolicy(
        basic=_present(policy, "basic", "basic"),
        gang=None if gang is None else JobGangSchedulingPolicy(
            as_int(get_field(as_map(gang, "gang"), "minCount"), "gang.minCount")))


def _configuration(value: Any) -> JobSchedulingConfiguration:
    config = as_map(value, "")
    policy = get_field(config, "schedulingPolicy")
    constraints = get_field(config, "schedulingConstraints")
    mode = get_field(config, "disruptionMode")
    return JobSchedulingConfiguration(
        scheduling_policy=None if policy is None else nested("schedulingPolicy", _policy, policy),
        scheduling_constraints=None if constraints is None else nested("schedulingConstraints",
                                                                       _scheduling_constraints, constraints),
        disruption_mode=None if mode is None else nested("disruptionMode", _disruption_mode, mode),
        resource_claims=list_of(get_field(config, "resourceClaims"), "resourceClaims", _resource_claim))


def parse_job_scheduling(value: Any, path: str = "spec.scheduling") -> JobSchedulingConfiguration | None:
    """``spec.scheduling`` of a JobSpec manifest dict (None when absent or null); errors name
    their path under ``path``."""
    if value is None:
        return None
    return nested(path, _configuration, value)


# --------------------------------------------------------------------------------------------
# Validation
# --------------------------------------------------------------------------------------------
def _resolved(scheduling: JobSchedulingConfiguration | None, parallelism: int | None
              ) -> tuple[JobSchedulingPolicy, DisruptionMode | None]:
    """``resolveSchedulingConfig`` of ``WorkloadItemForJob``: the default Basic policy unless the
    Job's policy is ``basic`` or ``gang`` (``mapSchedulingPolicy``: an empty policy maps to none),
    then ``defaultMinCountForJob``: a gang without ``minCount`` gets ``max(1, parallelism)``
    (parallelism unset: 1)."""
    policy = JobSchedulingPolicy(basic=True)
    mode = None
    if scheduling is not None:
        user = scheduling.scheduling_policy
        if user is not None and user.basic:
            policy = JobSchedulingPolicy(basic=True)
        elif user is not None and user.gang is not None:
            policy = JobSchedulingPolicy(gang=user.gang)
        user_mode = scheduling.disruption_mode
        if user_mode is not None and user_mode.single:
            mode = DisruptionMode(single=True)
        elif user_mode is not None and user_mode.all:
            mode = DisruptionMode(all=True)
    if policy.gang is not None and policy.gang.min_count is None:
        policy = JobSchedulingPolicy(gang=JobGangSchedulingPolicy(max(1, 1 if parallelism is None else parallelism)))
    return policy, mode


def job_scheduling_errors(scheduling: JobSchedulingConfiguration | None, parallelism: int | None,
                          path: FieldPath) -> list[FieldError]:
    """The hand-written checks of ``ValidateJobSpec`` (``path`` is ``spec.scheduling``):
    ``validateGangMinCount`` (an explicit gang ``minCount`` above parallelism, unset: 1), then
    ``validateJobScheduling`` (the workload builder's policy checks on the resolved item: the Job
    allows both policies and both disruption modes, so only Basic with disruption mode ``all``
    is refused)."""
    if scheduling is None:
        return []
    errors: list[FieldError] = []
    user = scheduling.scheduling_policy
    if user is not None and user.gang is not None and user.gang.min_count is not None:
        limit = 1 if parallelism is None else parallelism
        if user.gang.min_count > limit:
            errors.append(FieldError.invalid(path.child("schedulingPolicy", "gang", "minCount"), user.gang.min_count,
                                             f"must not be greater than parallelism ({limit})"))
    policy, mode = _resolved(scheduling, parallelism)
    if policy.basic and mode is not None and mode.all:
        errors.append(FieldError.invalid(path.child("disruptionMode"), "",
                                         "the disruptionMode `all` is not supported with the Basic scheduling policy"))
    return errors


def job_scheduling_declarative_errors(scheduling: JobSchedulingConfiguration | None, path: FieldPath,
                                      gates: Mapping[str, bool] | None) -> list[FieldError]:
    """``Validate_JobSpec``'s rules for ``spec.scheduling`` (``path``) on create: forbidden
    without WorkloadWithJob (``IfOption(..., false, ForbiddenPointer)``: reached only by objects
    built in code, the create strategy drops the field first), then
    ``Validate_JobSchedulingConfiguration`` block by block: the policy a union of ``basic`` and
    ``gang`` with ``minCount`` at least 1 when set; at most one topology constraint, each key a
    label key; the disruption mode a union of ``single`` and ``all``; at most 4 resource claims,
    unique by name, each a union of ``resourceClaimName`` and ``resourceClaimTemplateName`` with a
    DNS-label name."""
    if scheduling is None:
        return []
    if not workload_with_job_enabled(gates):
        return [FieldError.forbidden(path, "")]
    errors: list[FieldError] = []
    policy = scheduling.scheduling_policy
    if policy is not None:
        policy_path = path.child("schedulingPolicy")
        errors.extend(_union(policy_path, ("basic", "gang"),
                             [name for name, is_set in (("basic", policy.basic), ("gang", policy.gang is not None))
                              if is_set]))
        if policy.gang is not None and policy.gang.min_count is not None and policy.gang.min_count < 1:
            errors.append(FieldError.invalid(policy_path.child("gang", "minCount"), policy.gang.min_count,
                                             "must be greater than or equal to 1"))
    if scheduling.scheduling_constraints is not None:
        errors.extend(_topology_errors(scheduling.scheduling_constraints, path.child("schedulingConstraints")))
    if scheduling.disruption_mode is not None:
        errors.extend(_disruption_mode_errors(scheduling.disruption_mode, path.child("disruptionMode")))
    if scheduling.resource_claims:
        errors.extend(_resource_claims_errors(scheduling.resource_claims, path.child("resourceClaims")))
    return errors


# --------------------------------------------------------------------------------------------
# The pod group template a Job compiles to
# --------------------------------------------------------------------------------------------
def pod_group_template_for_job(name: str, priority_class_name: str, parallelism: int | None,
                               scheduling: JobSchedulingConfiguration | None) -> PodGroupTemplate:
    """``WorkloadItemForJob`` compiled by the workload builder (``compilePodGroupTemplate``): the
    template ``name``, the resolved policy (Basic unless the Job says gang; a gang's ``minCount``
    defaulted to ``max(1, parallelism)``), the topology constraints (keys only), the disruption
    mode, the resource claims, and the pod template's ``priorityClassName``."""
    policy, mode = _resolved(scheduling, parallelism)
    if policy.gang is not None:
        compiled = PodGroupSchedulingPolicy(gang=GangSchedulingPolicy(policy.gang.min_count or 0))
    else:
        compiled = PodGroupSchedulingPolicy(basic=True)
    constraints = None
    claims: tuple[PodGroupResourceClaim, ...] = ()
    if scheduling is not None:
        if scheduling.scheduling_constraints is not None and scheduling.scheduling_constraints.topology:
            constraints = PodGroupSchedulingConstraints(scheduling.scheduling_constraints.topology)
        claims = scheduling.resource_claims
    return PodGroupTemplate(name=name, scheduling_policy=compiled, scheduling_constraints=constraints,
                            resource_claims=claims, disruption_mode=mode, priority_class_name=priority_class_name)
