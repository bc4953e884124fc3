"""Workload objects: what the controllers read to decide which pods to create.

Typed views of ``apps/v1`` Deployment, ReplicaSet, StatefulSet and DaemonSet, ``batch/v1`` Job and
CronJob, and ``v1`` ReplicationController and Service, with the API server's defaulting applied
(``pkg/apis/apps/v1/defaults.go``, ``pkg/apis/batch/v1/defaults.go``,
``pkg/apis/core/v1/defaults.go``) and the validation that matters for pod creation, with upstream's
messages and field paths (``pkg/apis/apps/validation``, ``pkg/apis/batch/validation``,
``pkg/apis/core/validation``).

Pod templates are kept as manifest dicts (camelCase, as given; ``template`` is a private deep copy
that the controllers copy again before changing anything). Selectors of the apps/v1 kinds and Jobs
are parsed :class:`~fastsched.api.labels.LabelSelector` objects (None when unset) plus the raw
``selector_spec`` dict the controllers clone into child objects; ReplicationController and Service
selectors are plain maps (None when unset).

Things the API server does on create that are modelled here:

* Jobs without ``manualSelector: true`` get ``generateSelector``: the template labels
  ``batch.kubernetes.io/controller-uid``, ``controller-uid``, ``batch.kubernetes.io/job-name`` and
  ``job-name`` (unless already set) and the selector ``batch.kubernetes.io/controller-uid: <uid>``.
  The uid is ``metadata.uid`` or :func:`~fastsched.api.objects.deterministic_uid`.
* A DaemonSet without the ``deprecated.daemonset.template.generation`` annotation gets template
  generation 1 (what the API server stores on create).

Parsers: ``parse_<kind>(manifest)``, also in :data:`WORKLOAD_PARSERS`; validators
``validate_<kind>(obj) -> list[FieldError]``, also in :data:`WORKLOAD_VALIDATORS`.
"""
from __future__ import annotations

import copy
import re
from dataclasses import dataclass, field
from typing import Any, Callable, ClassVar, Mapping

from ..util.field import FieldError, FieldPath, GoStruct
from ._manifest import (
    FrozenDict,
    as_bool,
    as_int,
    as_list,
    as_map,
    as_optional_str,
    as_str,
    as_string_map,
    as_timestamp,
    get_field,
)
from ._meta import int_or_string, object_meta
from .jobscheduling import JobSchedulingConfiguration, job_scheduling_errors, parse_job_scheduling
from .labels import LabelSelector
from .objects import KubeObject, deterministic_uid

__all__ = [
    "Deployment",
    "ReplicaSet",
    "StatefulSet",
    "DaemonSet",
    "Job",
    "CronJob",
    "ReplicationController",
    "Service",
    "parse_deployment",
    "parse_replica_set",
    "parse_stateful_set",
    "parse_daemon_set",
    "parse_job",
    "parse_cron_job",
    "parse_replication_controller",
    "parse_service",
    "validate_deployment",
    "validate_replica_set",
    "validate_stateful_set",
    "validate_daemon_set",
    "validate_job",
    "validate_cron_job",
    "validate_replication_controller",
    "validate_service",
    "WORKLOAD_PARSERS",
    "WORKLOAD_VALIDATORS",
    "WORKLOAD_API_VERSIONS",
    "LABEL_POD_TEMPLATE_HASH",
    "LABEL_CONTROLLER_REVISION_HASH",
    "LABEL_POD_TEMPLATE_GENERATION",
    "LABEL_STATEFULSET_POD_NAME",
    "LABEL_POD_INDEX",
    "LABEL_JOB_COMPLETION_INDEX",
    "LABEL_CONTROLLER_UID",
    "LABEL_LEGACY_CONTROLLER_UID",
    "LABEL_JOB_NAME",
    "LABEL_LEGACY_JOB_NAME",
    "ANNOTATION_TEMPLATE_GENERATION",
]

#: ``apps.DefaultDeploymentUniqueLabelKey``.
LABEL_POD_TEMPLATE_HASH = "pod-template-hash"
#: ``apps.ControllerRevisionHashLabelKey`` / ``DefaultDaemonSetUniqueLabelKey`` / ``StatefulSetRevisionLabel``.
LABEL_CONTROLLER_REVISION_HASH = "controller-revision-hash"
#: ``extensions.DaemonSetTemplateGenerationKey``.
LABEL_POD_TEMPLATE_GENERATION = "pod-template-generation"
#: ``apps.StatefulSetPodNameLabel``.
LABEL_STATEFULSET_POD_NAME = "statefulset.kubernetes.io/pod-name"
#: ``apps.PodIndexLabel`` (StatefulSet ordinal).
LABEL_POD_INDEX = "apps.kubernetes.io/pod-index"
#: ``batch.JobCompletionIndexAnnotation`` (used as annotation and, with PodIndexLabel, as label).
LABEL_JOB_COMPLETION_INDEX = "batch.kubernetes.io/job-completion-index"
LABEL_CONTROLLER_UID = "batch.kubernetes.io/controller-uid"
LABEL_LEGACY_CONTROLLER_UID = "controller-uid"
LABEL_JOB_NAME = "batch.kubernetes.io/job-name"
LABEL_LEGACY_JOB_NAME = "job-name"
#: ``apps.DeprecatedTemplateGeneration``.
ANNOTATION_TEMPLATE_GENERATION = "deprecated.daemonset.template.generation"

ROLLING_UPDATE = "RollingUpdate"
RECREATE = "Recreate"
ON_DELETE = "OnDelete"
ORDERED_READY = "OrderedReady"
PARALLEL = "Parallel"
NON_INDEXED = "NonIndexed"
INDEXED = "Indexed"
RETAIN = "Retain"
DELETE = "Delete"
TERMINATING_OR_FAILED = "TerminatingOrFailed"
FAILED = "Failed"
CONCURRENCY_ALLOW = "Allow"
CONCURRENCY_FORBID = "Forbid"
CONCURRENCY_REPLACE = "Replace"

_MAX_INT32 = 2**31 - 1
#: ``maxParallelismForIndexedJob``.
_MAX_PARALLELISM_FOR_INDEXED_JOB = 100000

#: apiVersion of each kind (what ownerReferences carry).
WORKLOAD_API_VERSIONS: dict[str, str] = {
    "Deployment": "apps/v1",
    "ReplicaSet": "apps/v1",
    "StatefulSet": "apps/v1",
    "DaemonSet": "apps/v1",
    "Job": "batch/v1",
    "CronJob": "batch/v1",
    "ReplicationController": "v1",
    "Service": "v1",
}


# --------------------------------------------------------------------------------------------
# Objects
# --------------------------------------------------------------------------------------------
@dataclass(slots=True, kw_only=True, eq=False)
class Deployment(KubeObject):
    """An ``apps/v1`` Deployment (defaults: replicas 1, RollingUpdate 25%/25%, revisionHistoryLimit
    10, progressDeadlineSeconds 600). ``collision_count`` is ``status.collisionCount``."""

    KIND: ClassVar[str] = "Deployment"

    namespace: str = "default"
    replicas: int = 1
    selector: LabelSelector | None = None
    selector_spec: Mapping[str, Any] | None = None
    template: Mapping[str, Any] = field(default_factory=dict)
    strategy_type: str = ROLLING_UPDATE
    max_surge: int | str | None = "25%"
    max_unavailable: int | str | None = "25%"
    min_ready_seconds: int = 0
    revision_history_limit: int = 10
    progress_deadline_seconds: int | None = 600
    paused: bool = False
    collision_count: int | None = None


@dataclass(slots=True, kw_only=True, eq=False)
class ReplicaSet(KubeObject):
    """An ``apps/v1`` ReplicaSet (default replicas 1)."""

    KIND: ClassVar[str] = "ReplicaSet"

    namespace: str = "default"
    replicas: int = 1
    selector: LabelSelector | None = None
    selector_spec: Mapping[str, Any] | None = None
    template: Mapping[str, Any] = field(default_factory=dict)
    min_ready_seconds: int = 0


@dataclass(slots=True, kw_only=True, eq=False)
class ReplicationController(KubeObject):
    """A ``v1`` ReplicationController. ``SetDefaults_ReplicationController``: an empty selector
    defaults to the template labels (so do empty object labels), replicas to 1. ``template`` is
    None when the manifest has none."""

    KIND: ClassVar[str] = "ReplicationController"

    namespace: str = "default"
    replicas: int = 1
    selector: Mapping[str, str] | None = None
    template: Mapping[str, Any] | None = None
    min_ready_seconds: int = 0


@dataclass(slots=True, kw_only=True, eq=False)
class StatefulSet(KubeObject):
    """An ``apps/v1`` StatefulSet (defaults: replicas 1, OrderedReady, RollingUpdate with partition
    0, PVC retention Retain/Retain, ordinals start 0). ``volume_claim_templates`` are the raw
    PersistentVolumeClaim dicts."""

    KIND: ClassVar[str] = "StatefulSet"

    namespace: str = "default"
    replicas: int = 1
    selector: LabelSelector | None = None
    selector_spec: Mapping[str, Any] | None = None
    template: Mapping[str, Any] = field(default_factory=dict)
    service_name: str = ""
    pod_management_policy: str = ORDERED_READY
    update_strategy_type: str = ROLLING_UPDATE
    partition: int = 0
    ordinals_start: int = 0
    volume_claim_templates: tuple[Mapping[str, Any], ...] = ()
    min_ready_seconds: int = 0
    revision_history_limit: int = 10
    pvc_retention_when_deleted: str = RETAIN
    pvc_retention_when_scaled: str = RETAIN
    collision_count: int | None = None


@dataclass(slots=True, kw_only=True, eq=False)
class DaemonSet(KubeObject):
    """An ``apps/v1`` DaemonSet (defaults: RollingUpdate with maxUnavailable 1, maxSurge 0,
    revisionHistoryLimit 10). ``template_generation`` is the
    ``deprecated.daemonset.template.generation`` annotation (1 when absent, as stored on create)."""

    KIND: ClassVar[str] = "DaemonSet"

    namespace: str = "default"
    selector: LabelSelector | None = None
    selector_spec: Mapping[str, Any] | None = None
    template: Mapping[str, Any] = field(default_factory=dict)
    update_strategy_type: str = ROLLING_UPDATE
    max_unavailable: int | str | None = 1
    max_surge: int | str | None = 0
    min_ready_seconds: int = 0
    revision_history_limit: int = 10
    template_generation: int | None = 1
    collision_count: int | None = None


@dataclass(slots=True, kw_only=True, eq=False)
class Job(KubeObject):
    """A ``batch/v1`` Job with ``SetDefaults_Job`` applied: both parallelism and completions unset
    -> both 1; parallelism unset -> 1 (completions stays None: "any one success completes");
    completionMode NonIndexed, suspend false, backoffLimit 6 (MaxInt32 with backoffLimitPerIndex),
    podReplacementPolicy TerminatingOrFailed (Failed with a podFailurePolicy).

    ``selector``/``template`` include what ``generateSelector`` adds unless ``manual_selector``.
    ``scheduling``: ``spec.scheduling`` (WorkloadWithJob; dropped on create with the gate off).
    Status: ``succeeded``, ``failed`` (counters), ``completed_indexes`` (interval string),
    ``finished`` (a Complete or Failed condition is True), ``start_time`` (``status.startTime``),
    ``suspended_condition`` (a ``Suspended`` condition, whatever its status: ``isNewJob`` reads it).
    """

    KIND: ClassVar[str] = "Job"

    namespace: str = "default"
    parallelism: int = 1
    completions: int | None = 1
    completion_mode: str = NON_INDEXED
    suspend: bool = False
    manual_selector: bool = False
    selector: LabelSelector | None = None
    selector_spec: Mapping[str, Any] | None = None
    template: Mapping[str, Any] = field(default_factory=dict)
    backoff_limit: int = 6
    backoff_limit_per_index: int | None = None
    max_failed_indexes: int | None = None
    active_deadline_seconds: int | None = None
    pod_failure_policy: Mapping[str, Any] | None = None
    pod_replacement_policy: str = TERMINATING_OR_FAILED
    scheduling: JobSchedulingConfiguration | None = None
    succeeded: int = 0
    failed: int = 0
    completed_indexes: str = ""
    finished: bool = False
    start_time: float | None = None
    suspended_condition: bool = False

    @property
    def is_indexed(self) -> bool:
        return self.completion_mode == INDEXED


@dataclass(slots=True, kw_only=True, eq=False)
class CronJob(KubeObject):
    """A ``batch/v1`` CronJob (defaults: concurrencyPolicy Allow, suspend false, history limits 3
    and 1). ``job_template`` is the raw ``spec.jobTemplate`` dict (``metadata`` and ``spec``)."""

    KIND: ClassVar[str] = "CronJob"

    namespace: str = "default"
    schedule: str = ""
    time_zone: str | None = None
    concurrency_policy: str = CONCURRENCY_ALLOW
    suspend: bool = False
    starting_deadline_seconds: int | None = None
    successful_jobs_history_limit: int = 3
    failed_jobs_history_limit: int = 1
    job_template: Mapping[str, Any] = field(default_factory=dict)
    last_schedule_time: float | None = None


@dataclass(slots=True, kw_only=True, eq=False)
class Service(KubeObject):
    """A ``v1`` Service; only its selector matters here (None: no selector, selects no pod)."""

    KIND: ClassVar[str] = "Service"

    namespace: str = "default"
    selector: Mapping[str, str] | None = None


# --------------------------------------------------------------------------------------------
# Parsing
# --------------------------------------------------------------------------------------------
def _plain(value: Any) -> Any:
    """A deep, mutable copy of a manifest fragment (read-only mappings become dicts)."""
    if isinstance(value, Mapping):
        return {key: _plain(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(item) for item in value]
    return copy.copy(value)


def _template(value: Any, path: str) -> dict[str, Any]:
    """A pod template (``{metadata, spec}``) as a private plain dict; labels and annotations checked."""
    template = _plain(as_map(value, path))
    metadata = as_map(template.get("metadata"), f"{path}.metadata")
    as_string_map(metadata.get("labels"), f"{path}.metadata.labels")
    as_string_map(metadata.get("annotations"), f"{path}.metadata.annotations")
    as_map(template.get("spec"), f"{path}.spec")
    return template


def _selector(spec: Mapping[str, Any], path: str = "spec.selector") -> tuple[LabelSelector | None, dict | None]:
    raw = spec.get("selector")
    if raw is None:
        return None, None
    return LabelSelector.from_dict(raw, path), _plain(as_map(raw, path))


def _int(spec: Mapping[str, Any], key: str, path: str, default: int) -> int:
    value = as_int(get_field(spec, key), f"{path}.{key}")
    return default if value is None else value


def _collision_count(obj: Mapping[str, Any]) -> int | None:
    status = as_map(obj.get("status"), "status")
    return as_int(get_field(status, "collisionCount"), "status.collisionCount")


def parse_deployment(obj: Mapping[str, Any]) -> Deployment:
    """Build a Deployment from a manifest dict, with ``SetDefaults_Deployment`` applied."""
    meta = object_meta(obj, namespaced=True)
    spec = as_map(obj.get("spec"), "spec")
    selector, selector_spec = _selector(spec)
    strategy = as_map(spec.get("strategy"), "spec.strategy")
    strategy_type = as_str(strategy.get("type"), "spec.strategy.type") or ROLLING_UPDATE
    max_surge: int | str | None = None
    max_unavailable: int | str | None = None
    if strategy_type == ROLLING_UPDATE:
        rolling = as_map(get_field(strategy, "rollingUpdate"), "spec.strategy.rollingUpdate")
        max_surge = int_or_string(get_field(rolling, "maxSurge"), "spec.strategy.rollingUpdate.maxSurge")
        max_unavailable = int_or_string(get_field(rolling, "maxUnavailable"),
                                          "spec.strategy.rollingUpdate.maxUnavailable")
        max_surge = "25%" if max_surge is None else max_surge
        max_unavailable = "25%" if max_unavailable is None else max_unavailable
    progress = as_int(get_field(spec, "progressDeadlineSeconds"), "spec.progressDeadlineSeconds")
    return Deployment(
        **meta,
        replicas=_int(spec, "replicas", "spec", 1),
        selector=selector,
        selector_spec=selector_spec,
        template=_template(spec.get("template"), "spec.template"),
        strategy_type=strategy_type,
        max_surge=max_surge,
        max_unavailable=max_unavailable,
        min_ready_seconds=_int(spec, "minReadySeconds", "spec", 0),
        revision_history_limit=_int(spec, "revisionHistoryLimit", "spec", 10),
        progress_deadline_seconds=600 if progress is None else progress,
        paused=as_bool(spec.get("paused"), "spec.paused"),
        collision_count=_collision_count(obj),
    )


def parse_replica_set(obj: Mapping[str, Any]) -> ReplicaSet:
    """Build a ReplicaSet from a manifest dict (default replicas 1)."""
    meta = object_meta(obj, namespaced=True)
    spec = as_map(obj.get("spec"), "spec")
    selector, selector_spec = _selector(spec)
    return ReplicaSet(
        **meta,
        replicas=_int(spec, "replicas", "spec", 1),
        selector=selector,
        selector_spec=selector_spec,
        template=_template(spec.get("template"), "spec.template"),
        min_ready_seconds=_int(spec, "minReadySeconds", "spec", 0),
    )


def parse_replication_controller(obj: Mapping[str, Any]) -> ReplicationController:
    """Build a ReplicationController from a manifest dict (``SetDefaults_ReplicationController``)."""
    meta = object_meta(obj, namespaced=True)
    spec = as_map(obj.get("spec"), "spec")
    raw_template = spec.get("template")
    template = None if raw_template is None else _template(raw_template, "spec.template")
    selector_value = spec.get("selector")
    selector = None if selector_value is None else as_string_map(selector_value, "spec.selector")
    template_labels = None if template is None else (template.get("metadata") or {}).get("labels")
    if template_labels is not None:
        template_labels = as_string_map(template_labels, "spec.template.metadata.labels")
        if not selector:
            selector = FrozenDict(template_labels)
        if not meta["labels"]:
            meta["labels"] = FrozenDict(template_labels)
    return ReplicationController(
        **meta,
        replicas=_int(spec, "replicas", "spec", 1),
        selector=selector,
        template=template,
        min_ready_seconds=_int(spec, "minReadySeconds", "spec", 0),
    )


def parse_stateful_set(obj: Mapping[str, Any]) -> StatefulSet:
    """Build a StatefulSet from a manifest dict, with ``SetDefaults_StatefulSet`` applied."""
    meta = object_meta(obj, namespaced=True)
    spec = as_map(obj.get("spec"), "spec")
    selector, selector_spec = _selector(spec)
    strategy = as_map(get_field(spec, "updateStrategy"), "spec.updateStrategy")
    strategy_type = as_str(strategy.get("type"), "spec.updateStrategy.type") or ROLLING_UPDATE
    rolling = as_map(get_field(strategy, "rollingUpdate"), "spec.updateStrategy.rollingUpdate")
    ordinals = as_map(spec.get("ordinals"), "spec.ordinals")
    retention = as_map(get_field(spec, "persistentVolumeClaimRetentionPolicy"),
                       "spec.persistentVolumeClaimRetentionPolicy")
    claims_path = "spec.volumeClaimTemplates"
    claims = tuple(_plain(as_map(item, f"{claims_path}[{index}]"))
                   for index, item in enumerate(as_list(get_field(spec, "volumeClaimTemplates"), claims_path)))
    return StatefulSet(
        **meta,
        replicas=_int(spec, "replicas", "spec", 1),
        selector=selector,
        selector_spec=selector_spec,
        template=_template(spec.get("template"), "spec.template"),
        service_name=as_str(get_field(spec, "serviceName"), "spec.serviceName"),
        pod_management_policy=as_str(get_field(spec, "podManagementPolicy"), "spec.podManagementPolicy")
        or ORDERED_READY,
        update_strategy_type=strategy_type,
        partition=_int(rolling, "partition", "spec.updateStrategy.rollingUpdate", 0),
        ordinals_start=_int(ordinals, "start", "spec.ordinals", 0),
        volume_claim_templates=claims,
        min_ready_seconds=_int(spec, "minReadySeconds", "spec", 0),
        revision_history_limit=_int(spec, "revisionHistoryLimit", "spec", 10),
        pvc_retention_when_deleted=as_str(get_field(retention, "whenDeleted"),
                                          "spec.persistentVolumeClaimRetentionPolicy.whenDeleted") or RETAIN,
        pvc_retention_when_scaled=as_str(get_field(retention, "whenScaled"),
                                         "spec.persistentVolumeClaimRetentionPolicy.whenScaled") or RETAIN,
        collision_count=_collision_count(obj),
    )


def parse_daemon_set(obj: Mapping[str, Any]) -> DaemonSet:
    """Build a DaemonSet from a manifest dict, with ``SetDefaults_DaemonSet`` applied."""
    meta = object_meta(obj, namespaced=True)
    spec = as_map(obj.get("spec"), "spec")
    selector, selector_spec = _selector(spec)
    strategy = as_map(get_field(spec, "updateStrategy"), "spec.updateStrategy")
    strategy_type = as_str(strategy.get("type"), "spec.updateStrategy.type") or ROLLING_UPDATE
    max_unavailable: int | str | None = None
    max_surge: int | str | None = None
    if strategy_type == ROLLING_UPDATE:
        rolling = as_map(get_field(strategy, "rollingUpdate"), "spec.updateStrategy.rollingUpdate")
        max_unavailable = int_or_string(get_field(rolling, "maxUnavailable"),
                                          "spec.updateStrategy.rollingUpdate.maxUnavailable")
        max_surge = int_or_string(get_field(rolling, "maxSurge"), "spec.updateStrategy.rollingUpdate.maxSurge")
        max_unavailable = 1 if max_unavailable is None else max_unavailable
        max_surge = 0 if max_surge is None else max_surge
    generation_text = meta["annotations"].get(ANNOTATION_TEMPLATE_GENERATION)
    if generation_text is None:
        template_generation: int | None = 1
    else:
        try:  # GetTemplateGeneration: a parse error gives nil (no generation label)
            template_generation = int(generation_text, 10)
        except ValueError:
            template_generation = None
    return DaemonSet(
        **meta,
        selector=selector,
        selector_spec=selector_spec,
        template=_template(spec.get("template"), "spec.template"),
        update_strategy_type=strategy_type,
        max_unavailable=max_unavailable,
        max_surge=max_surge,
        min_ready_seconds=_int(spec, "minReadySeconds", "spec", 0),
        revision_history_limit=_int(spec, "revisionHistoryLimit", "spec", 10),
        template_generation=template_generation,
        collision_count=_collision_count(obj),
    )


def _condition_true(status: Mapping[str, Any], types: tuple[str, ...]) -> bool:
    for index, raw in enumerate(as_list(status.get("conditions"), "status.conditions")):
        condition = as_map(raw, f"status.conditions[{index}]")
        if condition.get("type") in types and condition.get("status") == "True":
            return True
    return False


def parse_job(obj: Mapping[str, Any]) -> Job:
    """Build a Job from a manifest dict: ``SetDefaults_Job`` and, unless ``manualSelector`` is
    true, the API server's ``generateSelector`` (labels and selector keyed on the job's uid)."""
    meta = object_meta(obj, namespaced=True)
    if not meta["uid"] and meta["name"]:
        meta["uid"] = deterministic_uid(Job.KIND, meta["namespace"], meta["name"])
    spec = as_map(obj.get("spec"), "spec")
    status = as_map(obj.get("status"), "status")
    parallelism = as_int(spec.get("parallelism"), "spec.parallelism")
    completions = as_int(spec.get("completions"), "spec.completions")
    if parallelism is None and completions is None:
        parallelism, completions = 1, 1
    if parallelism is None:
        parallelism = 1
    backoff_limit_per_index = as_int(get_field(spec, "backoffLimitPerIndex"), "spec.backoffLimitPerIndex")
    backoff_limit = as_int(get_field(spec, "backoffLimit"), "spec.backoffLimit")
    if backoff_limit is None:
        backoff_limit = _MAX_INT32 if backoff_limit_per_index is not None else 6
    pod_failure_policy = get_field(spec, "podFailurePolicy")
    if pod_failure_policy is not None:
        pod_failure_policy = _plain(as_map(pod_failure_policy, "spec.podFailurePolicy"))
    replacement = as_optional_str(get_field(spec, "podReplacementPolicy"), "spec.podReplacementPolicy")
    if replacement is None:
        replacement = FAILED if pod_failure_policy is not None else TERMINATING_OR_FAILED
    manual_selector = as_bool(get_field(spec, "manualSelector"), "spec.manualSelector")
    template = _template(spec.get("template"), "spec.template")
    selector_raw = spec.get("selector")
    selector_spec = None if selector_raw is None else _plain(as_map(selector_raw, "spec.selector"))
    if not manual_selector:
        selector_spec = _generate_selector(template, selector_spec, meta["name"], meta["uid"])
    selector = None if selector_spec is None else LabelSelector.from_dict(selector_spec, "spec.selector")
    return Job(
        **meta,
        parallelism=parallelism,
        completions=completions,
        completion_mode=as_str(get_field(spec, "completionMode"), "spec.completionMode") or NON_INDEXED,
        suspend=as_bool(spec.get("suspend"), "spec.suspend"),
        manual_selector=manual_selector,
        selector=selector,
        selector_spec=selector_spec,
        template=template,
        backoff_limit=backoff_limit,
        backoff_limit_per_index=backoff_limit_per_index,
        max_failed_indexes=as_int(get_field(spec, "maxFailedIndexes"), "spec.maxFailedIndexes"),
        active_deadline_seconds=as_int(get_field(spec, "activeDeadlineSeconds"), "spec.activeDeadlineSeconds"),
        pod_failure_policy=pod_failure_policy,
        pod_replacement_policy=replacement,
        scheduling=parse_job_scheduling(get_field(spec, "scheduling")),
        succeeded=as_int(status.get("succeeded"), "status.succeeded") or 0,
        failed=as_int(status.get("failed"), "status.failed") or 0,
        completed_indexes=as_str(get_field(status, "completedIndexes"), "status.completedIndexes"),
        finished=_condition_true(status, ("Complete", "Failed")),
        start_time=as_timestamp(get_field(status, "startTime"), "status.startTime"),
        suspended_condition=any(as_map(c, "status.conditions").get("type") == "Suspended"
                                for c in as_list(status.get("conditions"), "status.conditions")),
    )


def _generate_selector(template: dict, selector: dict | None, name: str, uid: str) -> dict:
    """The job strategy's ``generateSelector`` on plain dicts (``template`` is changed in place)."""
    metadata = template.get("metadata")
    if metadata is None:  # absent or null: Go's zero ObjectMeta
        metadata = template["metadata"] = {}
    if metadata.get("labels") is None:
        metadata["labels"] = {}
    labels = metadata["labels"]
    for key in (LABEL_LEGACY_JOB_NAME, LABEL_JOB_NAME):
        labels.setdefault(key, name)
    for key in (LABEL_LEGACY_CONTROLLER_UID, LABEL_CONTROLLER_UID):
        labels.setdefault(key, uid)
    selector = {} if selector is None else selector
    if selector.get("matchLabels") is None:
        selector["matchLabels"] = {}
    selector["matchLabels"].setdefault(LABEL_CONTROLLER_UID, uid)
    return selector


def parse_cron_job(obj: Mapping[str, Any]) -> CronJob:
    """Build a CronJob from a manifest dict (``SetDefaults_CronJob``)."""
    meta = object_meta(obj, namespaced=True)
    spec = as_map(obj.get("spec"), "spec")
    status = as_map(obj.get("status"), "status")
    job_template = _plain(as_map(get_field(spec, "jobTemplate"), "spec.jobTemplate"))
    parse_job_scheduling(get_field(as_map(job_template.get("spec"), "spec.jobTemplate.spec"), "scheduling"),
                         "spec.jobTemplate.spec.scheduling")  # decoded as the API server decodes it
    return CronJob(
        **meta,
        schedule=as_str(spec.get("schedule"), "spec.schedule"),
        time_zone=as_optional_str(get_field(spec, "timeZone"), "spec.timeZone"),
        concurrency_policy=as_str(get_field(spec, "concurrencyPolicy"), "spec.concurrencyPolicy")
        or CONCURRENCY_ALLOW,
        suspend=as_bool(spec.get("suspend"), "spec.suspend"),
        starting_deadline_seconds=as_int(get_field(spec, "startingDeadlineSeconds"), "spec.startingDeadlineSeconds"),
        successful_jobs_history_limit=_int(spec, "successfulJobsHistoryLimit", "spec", 3),
        failed_jobs_history_limit=_int(spec, "failedJobsHistoryLimit", "spec", 1),
        job_template=job_template,
        last_schedule_time=as_timestamp(get_field(status, "lastScheduleTime"), "status.lastScheduleTime"),
    )


def parse_service(obj: Mapping[str, Any]) -> Service:
    """Build a Service from a manifest dict (only the selector is read).

    An empty ``selector: {}`` is read as None: it does not survive the API server's storage
    round trip, and merging an empty map would change nothing anyway."""
    meta = object_meta(obj, namespaced=True)
    spec = as_map(obj.get("spec"), "spec")
    value = spec.get("selector")
    selector = None if value is None else as_string_map(value, "spec.selector")
    return Service(**meta, selector=selector or None)


WORKLOAD_PARSERS: dict[str, Callable[[Mapping[str, Any]], KubeObject]] = {
    "Deployment": parse_deployment,
    "ReplicaSet": parse_replica_set,
    "StatefulSet": parse_stateful_set,
    "DaemonSet": parse_daemon_set,
    "Job": parse_job,
    "CronJob": parse_cron_job,
    "ReplicationController": parse_replication_controller,
    "Service": parse_service,
}


# --------------------------------------------------------------------------------------------
# Validation
# --------------------------------------------------------------------------------------------
_NEGATIVE = "must be greater than or equal to 0"
_SELECTOR_MISMATCH = "`selector` does not match template `labels`"
_DNS1123_LABEL_RE = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?")


def _nonnegative(value: int | None, path: FieldPath) -> list[FieldError]:
    if value is not None and value < 0:
        return [FieldError.invalid(path, value, _NEGATIVE)]
    return []


def _template_labels(template: Mapping[str, Any] | None) -> Mapping[str, str] | None:
    if template is None:
        return None
    metadata = template.get("metadata") or {}
    return metadata.get("labels")


def _restart_policy(template: Mapping[str, Any] | None) -> str:
    """``spec.restartPolicy`` after pod defaulting (Always when unset)."""
    if template is None:
        return "Always"
    spec = template.get("spec") or {}
    return get_field(spec, "restartPolicy") or "Always"


def _selector_value(selector_spec: Mapping[str, Any] | None) -> Any:
    """A LabelSelector as field.Error renders it (Go struct order: matchLabels, matchExpressions)."""
    if selector_spec is None:
        return None
    rendered = GoStruct()
    for key in ("matchLabels", "matchExpressions"):
        if selector_spec.get(key):
            rendered[key] = selector_spec[key]
    return rendered


def _apps_selector(obj: Any, spec: FieldPath, kind_word: str) -> list[FieldError]:
    """The selector checks shared by Deployment/ReplicaSet/StatefulSet: required, non-empty."""
    if obj.selector is None:
        return [FieldError.required(spec.child("selector"))]
    if obj.selector.is_empty():
        return [FieldError.invalid(spec.child("selector"), _selector_value(obj.selector_spec),
                                   f"empty selector is invalid for {kind_word}")]
    return []


def _template_matches(obj: Any, path: FieldPath) -> list[FieldError]:
    """``ValidatePodTemplateSpecFor*``: unless the selector is empty, it must match the template
    labels. A nil selector is ``LabelSelectorAsSelector(nil) = Nothing()``: not Empty(), matches
    nothing, so it fails this check too (besides being Required)."""
    selector = obj.selector
    if selector is not None and selector.is_empty():
        return []
    labels = _template_labels(obj.template)
    if selector is None or not selector.matches(labels or {}):
        return [FieldError.invalid(path.child("metadata", "labels"), dict(labels) if labels is not None else None,
                                   _SELECTOR_MISMATCH)]
    return []


def _restart_always(obj: Any, path: FieldPath) -> list[FieldError]:
    policy = _restart_policy(obj.template)
    if policy != "Always":
        return [FieldError.not_supported(path, policy, ["Always"])]
    return []


def validate_replica_set(rs: ReplicaSet) -> list[FieldError]:
    """``ValidateReplicaSetSpec`` (the parts that matter for pod creation)."""
    spec = FieldPath("spec")
    errors = _nonnegative(rs.replicas, spec.child("replicas"))
    errors += _nonnegative(rs.min_ready_seconds, spec.child("minReadySeconds"))
    errors += _apps_selector(rs, spec, "deployment")  # sic: upstream's ReplicaSet message says deployment
    errors += _template_matches(rs, spec.child("template"))
    errors += _restart_always(rs, spec.child("template", "spec", "restartPolicy"))
    return errors


def validate_deployment(d: Deployment) -> list[FieldError]:
    """``ValidateDeploymentSpec`` (the parts that matter for pod creation)."""
    spec = FieldPath("spec")
    errors = _nonnegative(d.replicas, spec.child("replicas"))
    errors += _apps_selector(d, spec, "deployment")
    errors += _template_matches(d, spec.child("template"))
    errors += _restart_always(d, spec.child("template", "spec", "restartPolicy"))
    strategy = spec.child("strategy")
    if d.strategy_type == ROLLING_UPDATE:
        rolling = strategy.child("rollingUpdate")
        errors += _int_or_percent_errors(d.max_unavailable, rolling.child("maxUnavailable"))
        errors += _int_or_percent_errors(d.max_surge, rolling.child("maxSurge"))
        if _int_or_percent_value(d.max_unavailable) == 0 and _int_or_percent_value(d.max_surge) == 0:
            errors.append(FieldError.invalid(rolling.child("maxUnavailable"), d.max_unavailable,
                                             "may not be 0 when `maxSurge` is 0"))
        if isinstance(d.max_unavailable, str) and _percent(d.max_unavailable) is not None \
                and _percent(d.max_unavailable) > 100:  # type: ignore[operator]
            errors.append(FieldError.invalid(rolling.child("maxUnavailable"), d.max_unavailable,
                                             "must not be greater than 100%"))
    elif d.strategy_type != RECREATE:
        errors.append(FieldError.not_supported(strategy, GoStruct(type=d.strategy_type), [RECREATE, ROLLING_UPDATE]))
    errors += _nonnegative(d.min_ready_seconds, spec.child("minReadySeconds"))
    errors += _nonnegative(d.revision_history_limit, spec.child("revisionHistoryLimit"))
    if d.progress_deadline_seconds is not None:
        errors += _nonnegative(d.progress_deadline_seconds, spec.child("progressDeadlineSeconds"))
        if d.progress_deadline_seconds <= d.min_ready_seconds:
            errors.append(FieldError.invalid(spec.child("progressDeadlineSeconds"), d.progress_deadline_seconds,
                                             "must be greater than minReadySeconds"))
    return errors


_PERCENT_RE = re.compile(r"[0-9]+%")


def _percent(value: str) -> int | None:
    return int(value[:-1]) if _PERCENT_RE.fullmatch(value) else None


def _int_or_percent_value(value: int | str | None) -> int:
    """``getIntOrPercentValue`` (an invalid string counts as 0)."""
    if value is None:
        return 0
    if isinstance(value, int):
        return value
    percent = _percent(value)
    return 0 if percent is None else percent


def _int_or_percent_errors(value: int | str | None, path: FieldPath) -> list[FieldError]:
    """``ValidatePositiveIntOrPercent``."""
    if isinstance(value, str):
        if _percent(value) is None:
            return [FieldError.invalid(path, value, "a valid percent string must be a numeric string followed "
                                                    "by an ending '%' (e.g. '1%',  or '93%', regex used for "
                                                    "validation is '[0-9]+%')")]
        return []
    return _nonnegative(value, path)


def validate_stateful_set(sts: StatefulSet) -> list[FieldError]:
    """``ValidateStatefulSetSpec`` (the parts that matter for pod creation)."""
    spec = FieldPath("spec")
    errors: list[FieldError] = []
    policy = sts.pod_management_policy
    if policy not in (ORDERED_READY, PARALLEL):
        errors.append(FieldError.invalid(spec.child("podManagementPolicy"), policy,
                                         f"must be '{ORDERED_READY}' or '{PARALLEL}'"))
    if sts.update_strategy_type == ROLLING_UPDATE:
        errors += _nonnegative(sts.partition, spec.child("updateStrategy", "rollingUpdate", "partition"))
    elif sts.update_strategy_type != ON_DELETE:
        errors.append(FieldError.invalid(spec.child("updateStrategy"), GoStruct(type=sts.update_strategy_type),
                                         f"must be '{ROLLING_UPDATE}' or '{ON_DELETE}'"))
    retention = spec.child("persistentVolumeClaimRetentionPolicy")
    for name, value in (("whenDeleted", sts.pvc_retention_when_deleted), ("whenScaled", sts.pvc_retention_when_scaled)):
        if value not in (RETAIN, DELETE):
            errors.append(FieldError.not_supported(retention.child(name), value, [RETAIN, DELETE]))
    errors += _nonnegative(sts.replicas, spec.child("replicas"))
    errors += _nonnegative(sts.min_ready_seconds, spec.child("minReadySeconds"))
    errors += _nonnegative(sts.ordinals_start, spec.child("ordinals.start"))
    errors += _apps_selector(sts, spec, "statefulset")
    errors += _template_matches(sts, spec.child("template"))
    errors += _restart_always(sts, spec.child("template", "spec", "restartPolicy"))
    return errors


def validate_daemon_set(ds: DaemonSet) -> list[FieldError]:
    """``ValidateDaemonSetSpec`` (the parts that matter for pod creation). A nil selector has no
    Required error upstream: it only fails the template-label match."""
    spec = FieldPath("spec")
    errors: list[FieldError] = []
    labels = _template_labels(ds.template)
    selector = ds.selector
    if selector is None or not selector.matches(labels or {}):
        errors.append(FieldError.invalid(spec.child("template", "metadata", "labels"),
                                         dict(labels) if labels is not None else None, _SELECTOR_MISMATCH))
    if selector is not None and selector.is_empty():
        errors.append(FieldError.invalid(spec.child("selector"), _selector_value(ds.selector_spec),
                                         "empty selector is invalid for daemonset"))
    errors += _restart_always(ds, spec.child("template", "spec", "restartPolicy"))
    errors += _nonnegative(ds.min_ready_seconds, spec.child("minReadySeconds"))
    strategy = spec.child("updateStrategy")
    if ds.update_strategy_type == ROLLING_UPDATE:
        rolling = strategy.child("rollingUpdate")
        errors += _int_or_percent_errors(ds.max_unavailable, rolling.child("maxUnavailable"))
        errors += _int_or_percent_errors(ds.max_surge, rolling.child("maxSurge"))
        has_unavailable = _int_or_percent_value(ds.max_unavailable) != 0
        has_surge = _int_or_percent_value(ds.max_surge) != 0
        if has_unavailable and has_surge:
            errors.append(FieldError.invalid(rolling.child("maxSurge"), ds.max_surge,
                                             "may not be set when maxUnavailable is non-zero"))
        elif not has_unavailable and not has_surge:
            errors.append(FieldError.required(rolling.child("maxUnavailable"), "cannot be 0 when maxSurge is 0"))
    elif ds.update_strategy_type != ON_DELETE:
        errors.append(FieldError.not_supported(strategy, GoStruct(type=ds.update_strategy_type),
                                               [ROLLING_UPDATE, ON_DELETE]))
    return errors


def validate_replication_controller(rc: ReplicationController) -> list[FieldError]:
    """``ValidateReplicationControllerSpec`` (the parts that matter for pod creation)."""
    spec = FieldPath("spec")
    errors = _nonnegative(rc.min_ready_seconds, spec.child("minReadySeconds"))
    if not rc.selector:
        errors.append(FieldError.required(spec.child("selector")))
    errors += _nonnegative(rc.replicas, spec.child("replicas"))
    template_path = spec.child("template")
    if rc.template is None:
        errors.append(FieldError.required(template_path))
        return errors
    if rc.selector:
        labels = _template_labels(rc.template)
        if not all((labels or {}).get(key) == value for key, value in rc.selector.items()):
            errors.append(FieldError.invalid(template_path.child("metadata", "labels"),
                                             dict(labels) if labels is not None else None, _SELECTOR_MISMATCH))
    policy = _restart_policy(rc.template)
    if policy != "Always":
        errors.append(FieldError.not_supported(template_path.child("spec", "restartPolicy"), policy, ["Always"]))
    return errors


def _job_spec_errors(job_spec: Mapping[str, Any], path: FieldPath) -> list[FieldError]:
    """``validateJobSpec`` on a raw (or defaulted) JobSpec dict: counts, completion mode and the
    template's restart policy."""
    errors: list[FieldError] = []
    parallelism = job_spec.get("parallelism")
    completions = job_spec.get("completions")
    for key in ("parallelism", "completions", "activeDeadlineSeconds", "backoffLimit", "ttlSecondsAfterFinished",
                "backoffLimitPerIndex", "maxFailedIndexes"):
        value = get_field(job_spec, key)
        if type(value) is int:
            errors += _nonnegative(value, path.child(key))
    mode = get_field(job_spec, "completionMode")
    if mode is not None:
        if mode not in (NON_INDEXED, INDEXED):
            errors.append(FieldError.not_supported(path.child("completionMode"), mode, [NON_INDEXED, INDEXED]))
        if mode == INDEXED:
            if completions is None:
                errors.append(FieldError.required(path.child("completions"), f"when completion mode is {INDEXED}"))
            if type(parallelism) is int and parallelism > _MAX_PARALLELISM_FOR_INDEXED_JOB:
                errors.append(FieldError.invalid(
                    path.child("parallelism"), parallelism,
                    f"must be less than or equal to {_MAX_PARALLELISM_FOR_INDEXED_JOB} "
                    f"when completion mode is {INDEXED}"))
    template = job_spec.get("template") or {}
    policy = get_field(template.get("spec") or {}, "restartPolicy") or ""
    restart_path = path.child("template", "spec", "restartPolicy")
    if policy in ("Always", ""):
        errors.append(FieldError.required(restart_path, 'valid values: "OnFailure", "Never"'))
    elif policy not in ("OnFailure", "Never"):
        errors.append(FieldError.not_supported(restart_path, policy, ["OnFailure", "Never"]))
    elif get_field(job_spec, "podFailurePolicy") is not None and policy != "Never":
        errors.append(FieldError.invalid(restart_path, policy, 'only "Never" is supported when podFailurePolicy '
                                                               'is specified'))
    return errors


def _job_spec_dict(job: Job) -> dict[str, Any]:
    """The defaulted JobSpec fields validation reads, as a camelCase dict."""
    spec: dict[str, Any] = {
        "parallelism": job.parallelism,
        "completions": job.completions,
        "completionMode": job.completion_mode,
        "backoffLimit": job.backoff_limit,
        "template": job.template,
    }
    for key, value in (("activeDeadlineSeconds", job.active_deadline_seconds),
                       ("backoffLimitPerIndex", job.backoff_limit_per_index),
                       ("maxFailedIndexes", job.max_failed_indexes),
                       ("podFailurePolicy", job.pod_failure_policy)):
        if value is not None:
            spec[key] = value
    return spec


def validate_job(job: Job) -> list[FieldError]:
    """``ValidateJob`` (the parts that matter for pod creation): the generated selector, counts,
    completion mode, selector/template labels and the restart policy."""
    errors: list[FieldError] = []
    if not job.manual_selector and job.selector is not None:  # validateGeneratedSelector
        expected = {LABEL_LEGACY_CONTROLLER_UID: job.uid, LABEL_LEGACY_JOB_NAME: job.name,
                    LABEL_CONTROLLER_UID: job.uid, LABEL_JOB_NAME: job.name}
        if not job.selector.matches(expected):
            errors.append(FieldError.invalid(FieldPath("spec.selector"), _selector_value(job.selector_spec),
                                             "`selector` not auto-generated"))
    spec = FieldPath("spec")
    errors += _job_spec_errors(_job_spec_dict(job), spec)
    if job.selector is None:
        errors.append(FieldError.required(spec.child("selector")))
    else:
        labels = _template_labels(job.template)
        if not job.selector.matches(labels or {}):
            errors.append(FieldError.invalid(spec.child("template", "metadata", "labels"),
                                             dict(labels) if labels is not None else None, _SELECTOR_MISMATCH))
    # validateGangMinCount, validateJobScheduling (the declarative rules need the gates:
    # fastsched.api.strategy)
    errors += job_scheduling_errors(job.scheduling, job.parallelism, spec.child("scheduling"))
    if job.is_indexed and job.completions is not None and job.completions > 0:
        hostname = f"{job.name}-{job.completions - 1}"
        if len(hostname) > 63 or _DNS1123_LABEL_RE.fullmatch(hostname) is None:
            errors.append(FieldError.invalid(FieldPath("metadata.name"), job.name,
                                             f"will not able to create pod with invalid DNS label: {hostname}"))
    return errors


def validate_cron_job(cj: CronJob) -> list[FieldError]:
    """``ValidateCronJobCreate`` (the parts that matter for job and pod creation)."""
    errors: list[FieldError] = []
    if len(cj.name) > 52:
        errors.append(FieldError.invalid(FieldPath("metadata.name"), cj.name, "must be no more than 52 characters"))
    spec = FieldPath("spec")
    if not cj.schedule:
        errors.append(FieldError.required(spec.child("schedule")))
    if cj.concurrency_policy not in (CONCURRENCY_ALLOW, CONCURRENCY_FORBID, CONCURRENCY_REPLACE):
        errors.append(FieldError.not_supported(spec.child("concurrencyPolicy"), cj.concurrency_policy,
                                               [CONCURRENCY_ALLOW, CONCURRENCY_FORBID, CONCURRENCY_REPLACE]))
    errors += _nonnegative(cj.starting_deadline_seconds, spec.child("startingDeadlineSeconds"))
    errors += _nonnegative(cj.successful_jobs_history_limit, spec.child("successfulJobsHistoryLimit"))
    errors += _nonnegative(cj.failed_jobs_history_limit, spec.child("failedJobsHistoryLimit"))
    job_spec = cj.job_template.get("spec") or {}
    errors += _job_spec_errors(job_spec, spec.child("jobTemplate", "spec"))
    parallelism = get_field(job_spec, "parallelism")
    errors += job_scheduling_errors(cron_job_scheduling(cj), parallelism if type(parallelism) is int else None,
                                    spec.child("jobTemplate", "spec", "scheduling"))
    return errors


def cron_job_scheduling(cj: CronJob) -> JobSchedulingConfiguration | None:
    """``spec.jobTemplate.spec.scheduling`` of a CronJob (checked when the CronJob was parsed)."""
    return parse_job_scheduling(get_field(cj.job_template.get("spec") or {}, "scheduling"),
                                "spec.jobTemplate.spec.scheduling")


def validate_service(service: Service) -> list[FieldError]:
    """Services are read for their selector only; nothing here constrains pod creation."""
    return []


WORKLOAD_VALIDATORS: dict[str, Callable[[Any], list[FieldError]]] = {
    "Deployment": validate_deployment,
    "ReplicaSet": validate_replica_set,
    "StatefulSet": validate_stateful_set,
    "DaemonSet": validate_daemon_set,
    "Job": validate_job,
    "CronJob": validate_cron_job,
    "ReplicationController": validate_replication_controller,
    "Service": validate_service,
}

