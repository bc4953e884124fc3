"""Which validation each kind gets when it is created: the API server's create strategies.

kube-apiserver validates a new object through its resource's registry strategy
(``pkg/registry/<group>/<resource>/strategy.go``), which calls that group's validation: core
kinds :mod:`.validation` (``pkg/apis/core/validation``, ``policy``, ``scheduling``), the
workloads :mod:`.workloads`, storage :mod:`.storage`, DRA :mod:`.resource`. :func:`validate`
dispatches the same way. It sits above all of them (and above :mod:`.decode`, to parse a
workload's pod template), so that the validation modules never import each other in a circle.
"""
from __future__ import annotations

from typing import Any, Callable, Mapping, TypeVar, cast

from ..features import (DRA_DERIVED_ATTRIBUTES, DRA_DEVICE_COMPATIBILITY_GROUPS, DRA_FRACTIONAL_CAPACITY_RANGE,
                        DRA_LIST_TYPE_ATTRIBUTES,
                        DRA_NODE_ALLOCATABLE_RESOURCES, DRA_OPTIONAL_NODE_OPERATIONS, GENERIC_WORKLOAD,
                        KNOWN_GATES)
from ..util.field import FieldError, FieldPath
from .compositepodgroup import (COMPOSITE_POD_GROUP_VALIDATORS, CompositePodGroup,
                                prepare_composite_pod_group_for_create)
from .decode import parse_pod
from .errors import ManifestError
from .jobscheduling import job_scheduling_declarative_errors, workload_with_job_enabled
from .objects import KubeObject, Namespace, Node, Pod, PodDisruptionBudget, PriorityClass
from .resource import (RESOURCE_VALIDATORS, ResourceClaim, ResourceClaimTemplate, ResourceSlice,
                       drop_claim_skip_node_operations, drop_compatibility_groups, drop_derived_attributes,
                       drop_list_attributes, drop_node_allocatable_resources, drop_skip_node_operations,
                       validate_resource_slice)
from .scheduling import (SCHEDULING_VALIDATORS, PodGroup, Workload, prepare_pod_group_for_create,
                         prepare_workload_for_create)
from .runtimeclass import RUNTIME_CLASS_VALIDATORS
from .storage import STORAGE_VALIDATORS
from .validation import (
    ValidationError,
    validate_labels,
    validate_namespace,
    validate_node,
    validate_object_meta,
    validate_pod,
    validate_pod_disruption_budget,
    validate_pod_spec,
    validate_priority_class,
)
from .workloads import WORKLOAD_VALIDATORS, CronJob, Job, cron_job_scheduling

__all__ = ["prepare_for_create", "raise_if_invalid", "validate"]

_VALIDATORS: dict[type, Callable[[Any], list[FieldError]]] = {
    Pod: validate_pod,
    Node: validate_node,
    Namespace: validate_namespace,
    PriorityClass: validate_priority_class,
    PodDisruptionBudget: validate_pod_disruption_budget,
}


_K = TypeVar("_K", bound=KubeObject)


def prepare_for_create(obj: _K, gates: Mapping[str, bool] | None = None) -> _K:
    """The create strategy's ``PrepareForCreate`` where it changes what fastsched reads: fields of
    disabled gates dropped (a pod's ``spec.schedulingGroup`` without GenericWorkload:
    ``dropDisabledSchedulingGroup``; PodGroup and Workload fields, :mod:`.scheduling`), a PodGroup's
    status cleared; a ResourceSlice's list-valued attributes without DRAListTypeAttributes
    (``dropDisableDRAListTypeAttributesFields``), counter consumptions' ``compatibilityGroups``
    without DRADeviceCompatibilityGroups, ``spec.skipNodeOperations`` without
    DRAOptionalNodeOperations (and a given ResourceClaim status's results' ``skipNodeOperations``,
    as its status update would: ``dropDisabledDRAOptionalNodeOperationsStatusFields``), devices'
    ``nodeAllocatableResources`` without DRANodeAllocatableResources
    (``dropDisabledDRANodeAllocatableResourcesFields``), and without it too a pod's
    ``status.nodeAllocatableResourceClaimStatuses``; with it, an unbound pod's too (the pod
    strategy's ``PrepareForCreate`` resets a new pod's status, and only the scheduler's PreBind
    writes them; a bound pod given with them is an existing one, a cluster dump's, and keeps them,
    as fastsched keeps the rest of a given pod's status: a dump's pending pods keep the
    ``resourceClaimStatuses`` and ``nominatedNodeName`` the controller and the scheduler wrote);
    claims' and claim templates' requests' ``derivedAttributes`` without DRADerivedAttributes
    (``dropDisabledDRADerivedAttributesFields``).
    ``gates``: gate names to bools (missing ones:
    v1.37.2's defaults). Returns ``obj`` itself when nothing changes."""
    # every kind's branch gives back an object of the kind it was given
    return cast(_K, _prepared_for_create(obj, gates))


def _prepared_for_create(obj: KubeObject, gates: Mapping[str, bool] | None) -> KubeObject:
    if isinstance(obj, ResourceSlice):
        if not _enabled(gates, DRA_LIST_TYPE_ATTRIBUTES):
            obj = drop_list_attributes(obj)
        if not _enabled(gates, DRA_DEVICE_COMPATIBILITY_GROUPS):
            obj = drop_compatibility_groups(obj)
        if not _enabled(gates, DRA_OPTIONAL_NODE_OPERATIONS):
            obj = drop_skip_node_operations(obj)
        if not _enabled(gates, DRA_NODE_ALLOCATABLE_RESOURCES):
            obj = drop_node_allocatable_resources(obj)
        return obj
    if isinstance(obj, ResourceClaim):
        if not _enabled(gates, DRA_DERIVED_ATTRIBUTES):
            obj = drop_derived_attributes(obj)
        return obj if _enabled(gates, DRA_OPTIONAL_NODE_OPERATIONS) else drop_claim_skip_node_operations(obj)
    if isinstance(obj, ResourceClaimTemplate):
        return obj if _enabled(gates, DRA_DERIVED_ATTRIBUTES) else drop_derived_attributes(obj)
    if isinstance(obj, Pod):
        if obj.scheduling_group is not None and not _enabled(gates, GENERIC_WORKLOAD):
            obj = obj.replace(scheduling_group=None)
        if not obj.node_name or not _enabled(gates, DRA_NODE_ALLOCATABLE_RESOURCES):
            obj = _drop_node_allocatable_claim_statuses(obj)
        return obj
    if isinstance(obj, PodGroup):
        return prepare_pod_group_for_create(obj, gates)
    if isinstance(obj, Workload):
        return prepare_workload_for_create(obj, gates)
    if isinstance(obj, CompositePodGroup):  # refused without its gate (not served)
        return prepare_composite_pod_group_for_create(obj, gates)
    if isinstance(obj, (Job, CronJob)):
        return _drop_disabled_job_fields(obj, gates)
    return obj


def _drop_disabled_job_fields(obj: Job | CronJob, gates: Mapping[str, bool] | None) -> KubeObject:
    """``job.DropDisabledFields`` on create (the Job and CronJob strategies): ``spec.scheduling``
    (a CronJob's ``spec.jobTemplate.spec.scheduling``) dropped without WorkloadWithJob, from the
    object and its manifest."""
    if workload_with_job_enabled(gates):
        return obj
    manifest = dict(obj.manifest) if obj.manifest else {}
    spec = dict(manifest.get("spec") or {})
    if isinstance(obj, Job):
        if obj.scheduling is None and "scheduling" not in spec:
            return obj
        spec.pop("scheduling", None)
        manifest["spec"] = spec
        return obj.replace(scheduling=None, manifest=manifest)
    job_spec = dict(obj.job_template.get("spec") or {})
    if "scheduling" not in job_spec:
        return obj
    job_spec.pop("scheduling")
    job_template = {**obj.job_template, "spec": job_spec}
    manifest["spec"] = {**spec, "jobTemplate": job_template}
    return obj.replace(job_template=job_template, manifest=manifest)


def _drop_node_allocatable_claim_statuses(pod: Pod) -> Pod:
    """``dropPodNodeAllocatableResourceStatus`` on create (no old status), or the status reset of
    an unbound pod's create: the pod's
    ``status.nodeAllocatableResourceClaimStatuses`` removed from its manifest, and the amounts
    read from it (``Pod.node_allocatable_claim_nanos``, which its requests count); ``pod`` when
    it has neither."""
    status = (pod.manifest or {}).get("status")
    if not isinstance(status, dict) or "nodeAllocatableResourceClaimStatuses" not in status:
        return pod if not pod.node_allocatable_claim_nanos else pod.replace(node_allocatable_claim_nanos={})
    manifest = dict(pod.manifest)
    manifest["status"] = {k: v for k, v in status.items() if k != "nodeAllocatableResourceClaimStatuses"}
    return pod.replace(manifest=manifest, node_allocatable_claim_nanos={})


def _enabled(gates: Mapping[str, bool] | None, name: str) -> bool:
    if gates is not None and name in gates:
        return bool(gates[name])
    return KNOWN_GATES[name].default


def validate(obj: KubeObject, gates: Mapping[str, bool] | None = None) -> list[FieldError]:
    """Every problem the API server would report when creating ``obj`` (``[]`` when it would
    accept it, and for kinds this module does not know). ``gates`` (gate names to bools, missing
    ones at v1.37.2's defaults) drive the gated rules: the scheduling kinds' and the fields a pod
    template loses without its gate."""
    kind: str = getattr(obj, "KIND", "")
    scheduling_validator = SCHEDULING_VALIDATORS.get(kind) or COMPOSITE_POD_GROUP_VALIDATORS.get(kind)
    if scheduling_validator is not None:
        return scheduling_validator(obj, gates)
    for cls in type(obj).__mro__:
        validator = _VALIDATORS.get(cls)
        if validator is not None:
            return validator(obj)
    resource_validator = RESOURCE_VALIDATORS.get(kind)
    if resource_validator is not None:
        if obj.KIND == "ResourceSlice":  # requestPolicy: DRAFractionalCapacityRange
            return validate_resource_slice(obj, _enabled(gates, DRA_FRACTIONAL_CAPACITY_RANGE))  # type: ignore[arg-type]
        if obj.KIND in ("DeviceClass", "ResourceClaim", "ResourceClaimTemplate"):  # CEL's environment
            return resource_validator(obj, _enabled(gates, DRA_LIST_TYPE_ATTRIBUTES))  # type: ignore[call-arg]
        return resource_validator(obj)
    storage_validator = STORAGE_VALIDATORS.get(kind) or RUNTIME_CLASS_VALIDATORS.get(kind)
    if storage_validator is not None:  # ObjectMeta included
        return storage_validator(obj)
    workload_validator = WORKLOAD_VALIDATORS.get(kind)
    if workload_validator is None:
        return []
    errors = validate_object_meta(obj, namespaced=True) + workload_validator(obj) + _validate_pod_template(obj, gates)
    # the enforced declarative rules come after the hand-written ones (ValidateDeclaratively...)
    if isinstance(obj, Job):
        errors += job_scheduling_declarative_errors(obj.scheduling, FieldPath("spec").child("scheduling"), gates)
    elif isinstance(obj, CronJob):
        errors += job_scheduling_declarative_errors(
            cron_job_scheduling(obj), FieldPath("spec").child("jobTemplate", "spec", "scheduling"), gates)
    return errors


def _validate_pod_template(obj: KubeObject, gates: Mapping[str, bool] | None = None) -> list[FieldError]:
    """``ValidatePodTemplateSpec`` of a workload's pod template (``spec.template``, or a CronJob's
    ``spec.jobTemplate.spec.template``): its labels and the pod spec, as for a pod that is not
    yet a Pod (``ResourceIsPod`` false)."""
    path = FieldPath("spec").child("template")
    template = getattr(obj, "template", None)
    if obj.KIND == "CronJob":
        path = FieldPath("spec").child("jobTemplate", "spec", "template")
        template = ((getattr(obj, "job_template", None) or {}).get("spec") or {}).get("template")
    if not isinstance(template, Mapping):
        return []
    metadata = template.get("metadata") or {}
    document = {"apiVersion": "v1", "kind": "Pod",
                "metadata": {"name": obj.name or "template", "namespace": obj.namespace,
                             "labels": metadata.get("labels") or {}, "annotations": metadata.get("annotations") or {}},
                "spec": template.get("spec") or {}}
    try:
        pod = parse_pod(document)
    except ManifestError as error:
        return [FieldError.invalid(path.child(*(error.path or "spec").split(".")), None, error.reason)]
    pod = prepare_for_create(pod, gates)  # DropDisabledTemplateFields
    errors = validate_labels(pod.labels, path.child("metadata", "labels"))
    errors += validate_pod_spec(pod, path.child("spec"))
    return errors


def raise_if_invalid(obj: KubeObject, gates: Mapping[str, bool] | None = None) -> None:
    """Raise :class:`ValidationError` when :func:`validate` finds problems."""
    errors = validate(obj, gates)
    if errors:
        raise ValidationError(obj.KIND, obj.name, errors)
