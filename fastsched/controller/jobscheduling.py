"""The Job controller's Workload and PodGroup (kube-controller-manager v1.37.2,
``pkg/controller/job/job_scheduling_manager.go``, gate WorkloadWithJob, alpha, which needs
GenericWorkload).

* ``getManagementMode``: nothing with the gate off or when the pod template already names a
  PodGroup (``spec.schedulingGroup``); the Workload and the PodGroup for a Job without a
  controller owner; the PodGroup only for a Job whose controller owner delegates it (annotation
  ``scheduling.k8s.io/group-template-name``, the template of the parent's Workload); nothing for
  any other owned Job — a CronJob's Jobs included (upstream's table: "CronJob-owned Job is
  treated as parent-owned (not managed)").
* Objects are created only for a new Job (``isNewJob``: no pods, no ``status.startTime``, no
  succeeded or failed pod counted, no Suspended condition); a Job that has started only finds
  the ones it owns. Only objects controlled by the Job count (a user's Workload or PodGroup that
  merely names the Job is ignored); two of them fall back to pods scheduled alone.
* The Workload ``<job>-<hash>`` (``computeWorkloadName``: FNV-32a of the spew dump of the Job's
  UID, ``SafeEncodeString``, the name cut to fit 253 characters), owned by the Job (controller
  reference) with ``spec.controllerRef`` {batch, Job, name} and one template ``<job>-pgt-0``
  compiled from ``spec.scheduling`` (:func:`~fastsched.api.jobscheduling.pod_group_template_for_job`:
  Basic unless the Job asks for a gang, a gang's ``minCount`` defaulted to ``max(1,
  parallelism)``, the pod template's ``priorityClassName``). A found Workload with other than one
  template is an error: the sync stops there (upstream requeues the Job).
* The PodGroup ``<workload>-<template>-<hash>`` (``computePodGroupName``: FNV-32a of both names,
  each cut to its share of 253 characters) with ``spec.workloadRef``, the template's policy,
  constraints, disruption mode, claims, priority class and priority, owned by the Job (controller
  reference) and by the Workload (a plain reference; none to a parent's Workload).
* ``syncGangMinCount``: when the Job compiles to a gang whose ``minCount`` differs from the
  Workload's template or the PodGroup, both are patched (the delegated PodGroup follows its
  parent's template instead).
* Pods created while a PodGroup is managed carry ``spec.schedulingGroup.podGroupName``. The pod
  template also gets a non-controller owner reference to the PodGroup, but
  ``controller.GetPodFromTemplate`` builds the pod's metadata from the template's labels,
  annotations and finalizers only, so the pods the API server receives are owned by the Job alone
  (upstream's unit test reads the template, its integration test the pods' schedulingGroup).

Not modelled: the Events upstream records (WorkloadCreated, PodGroupCreated, ...).
"""
from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Any, Mapping

from ..api import KubeObject
from ..api.jobscheduling import pod_group_template_for_job, workload_with_job_enabled
from ..api.names import safe_encode_string
from ..api.objects import deterministic_uid
from ..api.scheduling import (SCHEDULING_API_VERSION, GangSchedulingPolicy, PodGroup, PodGroupSchedulingPolicy,
                              PodGroupTemplate, Workload, parse_pod_group, parse_workload)
from ..api.workloads import Job
from .common import Changes, Context, controller_of, controller_ref, fnv32a

__all__ = ["GROUP_TEMPLATE_NAME_ANNOTATION", "MANAGE_NONE", "MANAGE_BOTH", "MANAGE_POD_GROUP_ONLY",
           "management_mode", "is_new_job", "compute_workload_name", "compute_pod_group_name",
           "pod_group_template_name", "generate_workload", "new_pod_group", "ensure_workload_and_pod_group",
           "SchedulingObjects"]

#: ``apischeduling.GroupTemplateNameAnnotation``: a parent delegates the PodGroup to the Job controller
GROUP_TEMPLATE_NAME_ANNOTATION = "scheduling.k8s.io/group-template-name"
_DNS1123_SUBDOMAIN_MAX_LENGTH = 253

MANAGE_NONE = "none"
MANAGE_BOTH = "both"
MANAGE_POD_GROUP_ONLY = "podGroupOnly"


def management_mode(job: Job, gates: Mapping[str, bool] | None) -> str:
    """``getManagementMode``."""
    if not workload_with_job_enabled(gates):
        return MANAGE_NONE
    if ((job.template.get("spec") or {}).get("schedulingGroup")) is not None:
        return MANAGE_NONE
    if controller_of(job) is None:
        return MANAGE_BOTH
    if GROUP_TEMPLATE_NAME_ANNOTATION in job.annotations:
        return MANAGE_POD_GROUP_ONLY
    return MANAGE_NONE


def is_new_job(job: Job, pods: list) -> bool:
    """``isNewJob``: no pods, never started, nothing counted, never suspended."""
    if pods or job.start_time is not None or job.succeeded != 0 or job.failed != 0:
        return False
    return not job.suspended_condition


def compute_workload_name(job_name: str, job_uid: str) -> str:
    """``computeWorkloadName``: ``hashutil.DeepHashObject(fnv32a, job.UID)`` hashes spew's
    ``%#v`` of the UID, ``(types.UID)<uid>``."""
    digest = safe_encode_string(str(fnv32a(f"(types.UID){job_uid}".encode())))
    prefix = job_name[:_DNS1123_SUBDOMAIN_MAX_LENGTH - len(digest) - 1]
    return f"{prefix}-{digest}"


def compute_pod_group_name(workload_name: str, template_name: str) -> str:
    """``computePodGroupName``: each name keeps its share of what the hash leaves."""
    digest = safe_encode_string(str(fnv32a((workload_name + template_name).encode())))
    available = _DNS1123_SUBDOMAIN_MAX_LENGTH - len(digest) - 2
    wl, tpl = workload_name, template_name
    if len(wl) + len(tpl) > available:
        half = available // 2
        if len(wl) <= half:
            tpl = tpl[:available - len(wl)]
        elif len(tpl) <= half:
            wl = wl[:available - len(tpl)]
        else:
            wl, tpl = wl[:available - half], tpl[:half]
    return f"{wl}-{tpl}-{digest}"


def pod_group_template_name(job: Job) -> str:
    """``podGroupTemplateName``: one template per Job, ``<job>-pgt-0``."""
    return f"{job.name}-pgt-0"


def _priority_class_name(job: Job) -> str:
    return str((job.template.get("spec") or {}).get("priorityClassName") or "")


def generate_workload(job: Job) -> Workload:
    """``generateWorkload``: the Workload the Job compiles to (``workloadbuilder.BuildWorkload``)."""
    template = pod_group_template_for_job(pod_group_template_name(job), _priority_class_name(job), job.parallelism,
                                          job.scheduling)
    name = compute_workload_name(job.name, job.uid)
    manifest = {"apiVersion": SCHEDULING_API_VERSION, "kind": "Workload",
                "metadata": {"name": name, "namespace": job.namespace,
                             "uid": deterministic_uid("Workload", job.namespace, name),
                             "ownerReferences": [controller_ref(job)]},
                "spec": {"controllerRef": {"apiGroup": "batch", "kind": "Job", "name": job.name},
                         "podGroupTemplates": [_plain(template.to_json())]}}
    return parse_workload(manifest)


def new_pod_group(job: Job, workload: Workload, template: PodGroupTemplate, link_workload_owner: bool) -> PodGroup:
    """``createPodGroup`` (``workloadbuilder.newPodGroup``): the PodGroup of ``template``, owned by
    the Job, and by the Workload when ``link_workload_owner`` (a root Job's own Workload)."""
    name = compute_pod_group_name(workload.name, template.name)
    owners: list[dict[str, Any]] = [controller_ref(job)]
    if link_workload_owner:
        owners.append({"apiVersion": SCHEDULING_API_VERSION, "kind": "Workload", "name": workload.name,
                       "uid": workload.uid})
    spec: dict[str, Any] = {"workloadRef": {"workloadName": workload.name, "templateName": template.name},
                            "schedulingPolicy": _plain(template.scheduling_policy.to_json())}
    if template.scheduling_constraints is not None:
        spec["schedulingConstraints"] = _plain(template.scheduling_constraints.to_json())
    if template.resource_claims:
        spec["resourceClaims"] = [_plain(c.to_json()) for c in template.resource_claims]
    if template.disruption_mode is not None:
        spec["disruptionMode"] = _plain(template.disruption_mode.to_json())
    if template.priority_class_name:
        spec["priorityClassName"] = template.priority_class_name
    if template.priority is not None:
        spec["priority"] = template.priority
    manifest = {"apiVersion": SCHEDULING_API_VERSION, "kind": "PodGroup",
                "metadata": {"name": name, "namespace": workload.namespace,
                             "uid": deterministic_uid("PodGroup", workload.namespace, name),
                             "ownerReferences": owners},
                "spec": spec}
    return parse_pod_group(manifest)


def _plain(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return value


def _controlled_by(obj: KubeObject, job: Job) -> bool:
    """``metav1.IsControlledBy`` (by UID)."""
    reference = controller_of(obj)
    return reference is not None and reference.uid == job.uid


def _with_min_count(obj: KubeObject, min_count: int) -> KubeObject:
    """The strategic merge patch of ``patchWorkloadMinCount`` / ``patchPodGroupMinCount``."""
    manifest = copy.deepcopy(dict(obj.manifest)) if obj.manifest else {}
    spec = manifest.setdefault("spec", {})
    if isinstance(obj, Workload):
        templates = list(obj.pod_group_templates)
        values = {name: getattr(templates[0], name) for name in PodGroupTemplate.__dataclass_fields__}
        values["scheduling_policy"] = PodGroupSchedulingPolicy(gang=GangSchedulingPolicy(min_count))
        templates[0] = PodGroupTemplate(**values)
        if spec.get("podGroupTemplates"):
            spec["podGroupTemplates"][0].setdefault("schedulingPolicy", {})["gang"] = {"minCount": min_count}
        return obj.replace(pod_group_templates=tuple(templates), manifest=manifest)
    spec.setdefault("schedulingPolicy", {})["gang"] = {"minCount": min_count}
    # (the PodGroup strategy leaves metadata.generation as it is)
    return obj.replace(scheduling_policy=PodGroupSchedulingPolicy(gang=GangSchedulingPolicy(min_count)),
                       manifest=manifest)


class SchedulingError(Exception):
    """What makes upstream's ``syncJob`` return an error before it manages pods."""


@dataclass
class SchedulingObjects:
    """What :func:`ensure_workload_and_pod_group` found or made: the Workload (None when a parent
    owns it, or when the Job falls back to pods scheduled alone), the PodGroup its pods join
    (None: they are scheduled alone), and whether the sync stopped on an error."""

    workload: Workload | None = None
    pod_group: PodGroup | None = None
    error: str = ""


def ensure_workload_and_pod_group(job: Job, pods: list, ctx: Context, changes: Changes) -> SchedulingObjects:
    """``ensureWorkloadAndPodGroup``: the objects created or patched are appended to ``changes``
    (``create_objects``, ``update_objects``)."""
    mode = management_mode(job, ctx.feature_gates)
    if mode == MANAGE_NONE:
        return SchedulingObjects()
    new_job = is_new_job(job, pods)
    try:
        if mode == MANAGE_POD_GROUP_ONLY:
            return SchedulingObjects(pod_group=_delegated_pod_group(job, new_job, ctx, changes))
        workload = _get_or_create_workload(job, new_job, ctx, changes)
        if workload is None:
            return SchedulingObjects()
        pod_group = _get_or_create_pod_group(job, workload, new_job, ctx, changes)
        workload, pod_group = _sync_gang_min_count(job, workload, pod_group, changes)
        return SchedulingObjects(workload, pod_group)
    except SchedulingError as error:
        return SchedulingObjects(error=str(error))


def _get_or_create_workload(job: Job, new_job: bool, ctx: Context, changes: Changes) -> Workload | None:
    matched = [wl for wl in ctx.view.objects("Workload", job.namespace)
               if isinstance(wl, Workload) and wl.controller_ref is not None and wl.controller_ref.api_group == "batch"
               and wl.controller_ref.kind == "Job" and wl.controller_ref.name == job.name and _controlled_by(wl, job)]
    if not matched:
        if not new_job:
            return None
        workload = generate_workload(job)
        ctx.reserve("Workload", job.namespace, workload.name)
        changes.create_objects.append(workload)
        return workload
    if len(matched) > 1:
        return None  # "found N Workloads referencing Job ..., falling back to default scheduling"
    workload = matched[0]
    if len(workload.pod_group_templates) != 1:  # validateWorkloadStructure
        raise SchedulingError(f"workload {workload.namespace}/{workload.name} for job {job.namespace}/{job.name} has "
                              f"{len(workload.pod_group_templates)} PodGroupTemplates, want exactly 1")
    return workload


def _pod_groups_of(workload: Workload, ctx: Context) -> list[PodGroup]:
    return [pg for pg in ctx.view.objects("PodGroup", workload.namespace)
            if isinstance(pg, PodGroup) and pg.workload_ref is not None
            and pg.workload_ref.workload_name == workload.name]


def _get_or_create_pod_group(job: Job, workload: Workload, new_job: bool, ctx: Context,
                             changes: Changes) -> PodGroup | None:
    matched = [pg for pg in _pod_groups_of(workload, ctx) if _controlled_by(pg, job)]
    if not matched:
        if not new_job:
            return None
        if not workload.pod_group_templates:
            raise SchedulingError(f"workload {workload.namespace}/{workload.name} has no PodGroupTemplates")
        pod_group = new_pod_group(job, workload, workload.pod_group_templates[0], link_workload_owner=True)
        ctx.reserve("PodGroup", job.namespace, pod_group.name)
        changes.create_objects.append(pod_group)
        return pod_group
    if len(matched) > 1:
        return None  # "found N PodGroups referencing Workload ..., falling back to default scheduling"
    return matched[0]


def _sync_gang_min_count(job: Job, workload: Workload, pod_group: PodGroup | None,
                         changes: Changes) -> tuple[Workload, PodGroup | None]:
    """``syncGangMinCount``: the desired minCount from the Job's spec now; Basic: nothing."""
    desired = generate_workload(job).pod_group_templates[0].scheduling_policy.gang
    if desired is None:
        return workload, pod_group
    templates = workload.pod_group_templates
    if len(templates) == 1 and templates[0].scheduling_policy.gang is not None \
            and templates[0].scheduling_policy.gang.min_count != desired.min_count:
        workload = _with_min_count(workload, desired.min_count)  # type: ignore[assignment]
        _replace_or_update(changes, workload)
    if pod_group is not None and pod_group.scheduling_policy.gang is not None \
            and pod_group.scheduling_policy.gang.min_count != desired.min_count:
        pod_group = _with_min_count(pod_group, desired.min_count)  # type: ignore[assignment]
        _replace_or_update(changes, pod_group)
    return workload, pod_group


def _replace_or_update(changes: Changes, obj: KubeObject) -> None:
    """An object created in this pass is created as patched; an existing one is updated."""
    for index, created in enumerate(changes.create_objects):
        if created.KIND == obj.KIND and created.key == obj.key:
            changes.create_objects[index] = obj
            return
    changes.update_objects.append(obj)


def _delegated_pod_group(job: Job, new_job: bool, ctx: Context, changes: Changes) -> PodGroup | None:
    """``getOrCreateDelegatedPodGroup``: the parent's Workload (its ``spec.controllerRef`` names
    the Job's controller), the template the annotation names, the PodGroup the Job controls (made
    for a new Job, without an owner reference to the parent's Workload), its minCount following
    the template (``syncDelegatedPodGroupMinCount``)."""
    parent = controller_of(job)
    if parent is None:
        return None
    group = parent.api_version.split("/")[0] if "/" in parent.api_version else ""
    workload = next((wl for wl in ctx.view.objects("Workload", job.namespace)
                     if isinstance(wl, Workload) and wl.controller_ref is not None
                     and wl.controller_ref.api_group == group and wl.controller_ref.kind == parent.kind
                     and wl.controller_ref.name == parent.name), None)
    if workload is None:
        return None  # the parent's Workload is not there yet: retried later
    template_name = job.annotations[GROUP_TEMPLATE_NAME_ANNOTATION]
    template = next((t for t in workload.pod_group_templates if t.name == template_name), None)
    if template_name == "" and workload.pod_group_templates:
        template = workload.pod_group_templates[0]
    if template is None:
        return None  # "Delegated PodGroupTemplate not found in parent Workload, skipping"
    pod_group = next((pg for pg in _pod_groups_of(workload, ctx) if _controlled_by(pg, job)), None)
    if pod_group is None and new_job:
        pod_group = new_pod_group(job, workload, template, link_workload_owner=False)
        ctx.reserve("PodGroup", job.namespace, pod_group.name)
        changes.create_objects.append(pod_group)
    if pod_group is None or template.scheduling_policy.gang is None or pod_group.scheduling_policy.gang is None:
        return pod_group
    if pod_group.scheduling_policy.gang.min_count != template.scheduling_policy.gang.min_count:
        pod_group = _with_min_count(pod_group, template.scheduling_policy.gang.min_count)  # type: ignore[assignment]
        _replace_or_update(changes, pod_group)
    return pod_group
