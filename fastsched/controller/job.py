"""The Job controller's sync (upstream ``pkg/controller/job/job_controller.go`` ``syncJob`` /
``manageJob``, ``indexed_job_utils.go``).

* Pods of the namespace are claimed by the Job's selector (orphans adopted with the
  ``batch.kubernetes.io/job-tracking`` finalizer added); active = not terminal, not terminating.
* Succeeded and failed counts: upstream adds the pods that still carry the tracking finalizer to
  ``status.succeeded``/``status.failed`` (finalizer-less ones were counted already). Here the
  finalizer-less terminal pods count as ``max(status counter, their number)``, so hand-written
  Succeeded pods count even without a status, and pods created here (which carry the finalizer)
  add up as upstream's do. Indexed Jobs use the set of completed indexes:
  ``status.completedIndexes`` plus the indexes of Succeeded pods.
* A Job that is finished (Complete/Failed condition), being deleted, or complete (completions
  reached; or, without completions, a success and no active pod) does nothing; one past its
  backoff limit (new failures beyond ``status.failed``, ``failed > backoffLimit`` and not exactly
  ``parallelism`` pods active) deletes its active pods; a suspended one deletes its active pods.
* ``manageJob``: wanted active pods = ``parallelism`` capped by the remaining completions (without
  completions: ``parallelism`` until the first success, then the active ones); excess pods are
  deleted (``ActivePods`` order; Indexed Jobs first drop pods without a valid index and duplicates);
  missing ones are created (minus terminating pods when ``podReplacementPolicy`` is Failed).
* Pods: the template (with the ``generateSelector`` labels: ``batch.kubernetes.io/controller-uid``,
  ``controller-uid``, ``batch.kubernetes.io/job-name``, ``job-name``), finalizer
  ``batch.kubernetes.io/job-tracking``, controller reference ``batch/v1 Job``. NonIndexed:
  ``generateName: <job>-``. Indexed: the lowest pending indexes, ``generateName:
  <job>-<index>-`` (job name cut so the suffix fits 58 characters), annotation and label
  ``batch.kubernetes.io/job-completion-index``, ``spec.hostname: <job>-<index>``, and the
  ``JOB_COMPLETION_INDEX`` env var (from the label, PodIndexLabel on) in every container.

With WorkloadWithJob on, a new Job without a controller owner also gets a Workload and a PodGroup
before its pods, and its pods join the group (:mod:`.jobscheduling`, done right after the pods
are claimed, as ``syncJob`` does before it manages pods; an error there ends the sync).

Not modelled: the exponential backoff before recreating failed pods, ``activeDeadlineSeconds``,
``podFailurePolicy`` rules, ``backoffLimitPerIndex``/``successPolicy``, and the 500 pods per sync
cap unless ``ControllerOptions.per_sync_limits``.
"""
from __future__ import annotations

import copy
from typing import Any

from ..api import Pod
from ..api.workloads import FAILED, LABEL_JOB_COMPLETION_INDEX, Job
from .common import (
    Changes,
    Context,
    claim,
    claim_candidates,
    is_pod_active,
    pod_from_template,
    pods_prefix,
    selector_match,
    sort_active_pods,
)
from .jobscheduling import ensure_workload_and_pod_group

__all__ = ["reconcile_job", "completion_index", "pod_generate_name_with_index", "MAX_POD_CREATE_DELETE_PER_SYNC",
           "JOB_TRACKING_FINALIZER"]

JOB_TRACKING_FINALIZER = "batch.kubernetes.io/job-tracking"
MAX_POD_CREATE_DELETE_PER_SYNC = 500
_COMPLETION_INDEX_ENV = "JOB_COMPLETION_INDEX"
_MAX_GENERATED_NAME_LENGTH = 58


def completion_index(pod: Pod) -> int:
    """``getCompletionIndex``: the annotation as a non-negative int, -1 otherwise."""
    value = pod.annotations.get(LABEL_JOB_COMPLETION_INDEX)
    if value is None:
        return -1
    try:
        index = int(value, 10)
    except ValueError:
        return -1
    return index if index >= 0 else -1


def pod_generate_name_with_index(job_name: str, index: int) -> str:
    """``podGenerateNameWithIndex``."""
    suffix = f"-{index}-"
    prefix = job_name + suffix
    if len(prefix) > _MAX_GENERATED_NAME_LENGTH:
        prefix = job_name[:_MAX_GENERATED_NAME_LENGTH - len(suffix)] + suffix
    return prefix


def _finalizers(pod: Pod) -> list[str]:
    metadata = pod.manifest.get("metadata") if pod.manifest else None
    return list((metadata or {}).get("finalizers") or ())


def _has_finalizer(pod: Pod) -> bool:
    return JOB_TRACKING_FINALIZER in _finalizers(pod)


def _with_finalizer(pod: Pod) -> Pod:
    """An adopted pod also gets the tracking finalizer (the adoption patch adds it)."""
    if not pod.manifest or _has_finalizer(pod):
        return pod
    manifest = dict(pod.manifest)
    metadata = dict(manifest.get("metadata") or {})
    metadata["finalizers"] = _finalizers(pod) + [JOB_TRACKING_FINALIZER]
    manifest["metadata"] = metadata
    return pod.replace(manifest=manifest)


def _count(status_count: int, pods: list[Pod]) -> int:
    tracked = sum(1 for pod in pods if _has_finalizer(pod))
    return max(status_count, len(pods) - tracked) + tracked


def _parse_intervals(text: str, completions: int) -> set[int]:
    """``parseIndexesFromString`` as a set (indexes >= completions dropped)."""
    indexes: set[int] = set()
    if not text:
        return indexes
    for part in text.split(","):
        bounds = part.split("-")
        try:
            first = int(bounds[0])
            last = int(bounds[1]) if len(bounds) > 1 else first
        except ValueError:
            continue
        if first >= completions:
            break
        indexes.update(range(first, min(last, completions - 1) + 1))
    return indexes


def reconcile_job(job: Job, ctx: Context) -> Changes:
    """What ``syncJob`` does for ``job`` now; see the module docstring."""
    changes = Changes()
    if job.deletion_timestamp is not None or job.finished:
        return changes
    claimed, adopted, released = claim(job, selector_match(job.selector), claim_candidates(ctx.view, "Pod", job))
    adopted = [_with_finalizer(pod) for pod in adopted]
    adopted_uids = {pod.uid: pod for pod in adopted}
    pods: list[Pod] = [adopted_uids.get(pod.uid, pod) for pod in claimed]
    changes.adopt_pods.extend(adopted)
    changes.release_pods.extend(released)
    # ensureWorkloadAndPodGroup: before pod management, so that new pods can name the PodGroup
    scheduling = ensure_workload_and_pod_group(job, pods, ctx, changes)
    if scheduling.error:
        return changes
    active_pods = [pod for pod in pods if is_pod_active(pod)]
    active = len(active_pods)
    succeeded_pods = [pod for pod in pods if pod.phase == "Succeeded"]
    failed_pods = [pod for pod in pods if pod.phase == "Failed"]
    succeeded_indexes: set[int] = set()
    if job.is_indexed:
        completions = job.completions or 0
        succeeded_indexes = _parse_intervals(job.completed_indexes, completions)
        succeeded_indexes.update(ix for ix in map(completion_index, succeeded_pods) if 0 <= ix < completions)
        succeeded = len(succeeded_indexes)
    else:
        succeeded = _count(job.succeeded, succeeded_pods)
    failed = _count(job.failed, failed_pods)
    limit = MAX_POD_CREATE_DELETE_PER_SYNC if ctx.options.per_sync_limits else None

    exceeds_backoff_limit = (job.backoff_limit_per_index is None and failed > job.failed
                             and active != job.parallelism and failed > job.backoff_limit)
    if exceeds_backoff_limit:
        changes.delete_pods.extend(active_pods)  # deleteActivePods
        return changes
    if job.completions is None:
        complete = succeeded > 0 and active == 0
    else:
        complete = succeeded >= job.completions and active == 0
    if complete:
        return changes
    if job.suspend:
        changes.delete_pods.extend(active_pods[:limit] if limit else active_pods)
        return changes

    parallelism = job.parallelism
    if job.completions is None:
        want_active = active if succeeded > 0 else parallelism
    else:
        want_active = max(0, min(job.completions - succeeded, parallelism))
    rm_at_least = max(0, active - want_active)
    to_delete = _active_pods_for_removal(job, active_pods, rm_at_least)
    if limit is not None:
        to_delete = to_delete[:limit]
    if to_delete:
        changes.delete_pods.extend(to_delete)
        return changes

    terminating = 0
    if job.pod_replacement_policy == FAILED:
        terminating = sum(1 for pod in pods if pod.deletion_timestamp is not None
                          and pod.phase not in ("Succeeded", "Failed"))
    diff = want_active - terminating - active
    if diff <= 0:
        return changes
    if limit is not None:
        diff = min(diff, limit)
    indexes: list[int | None]
    if job.is_indexed:
        non_pending = set(succeeded_indexes)
        non_pending.update(ix for ix in map(completion_index, active_pods) if ix >= 0)
        if job.pod_replacement_policy == FAILED:
            non_pending.update(completion_index(pod) for pod in pods
                               if pod.deletion_timestamp is not None and pod.phase not in ("Succeeded", "Failed")
                               and completion_index(pod) >= 0)
        pending: list[int | None] = [ix for ix in range(job.completions or 0) if ix not in non_pending]
        indexes = pending[:diff]
    else:
        indexes = [None] * diff
    template = copy.deepcopy(dict(job.template))
    template_metadata = dict(template.get("metadata") or {})
    finalizers = list(template_metadata.get("finalizers") or ())
    if JOB_TRACKING_FINALIZER not in finalizers:
        finalizers.append(JOB_TRACKING_FINALIZER)
    template_metadata["finalizers"] = finalizers
    template["metadata"] = template_metadata
    if job.is_indexed:
        _add_completion_index_env(template)
    pod_group = scheduling.pod_group
    if pod_group is not None:
        # the PodGroup's name in the pods' spec. Upstream also appends an owner reference to the
        # PodGroup to the template's metadata, which GetPodFromTemplate (pod_from_template) does
        # not copy: the pods are owned by the Job alone (see .jobscheduling)
        template["spec"] = {**(template.get("spec") or {}), "schedulingGroup": {"podGroupName": pod_group.name}}
    if not template_metadata.get("labels"):
        return changes  # "unable to create pods, no labels"
    for index in indexes:
        if index is None:
            manifest = pod_from_template(template, job, generate_name=pods_prefix(job.name))
        else:
            manifest = pod_from_template(template, job, generate_name=pod_generate_name_with_index(job.name, index))
            metadata = manifest["metadata"]
            metadata["annotations"][LABEL_JOB_COMPLETION_INDEX] = str(index)
            metadata["labels"][LABEL_JOB_COMPLETION_INDEX] = str(index)
            manifest["spec"]["hostname"] = f"{job.name}-{index}"
        metadata = manifest["metadata"]
        metadata["name"] = ctx.generate("Pod", job.namespace, metadata["generateName"])
        changes.create_pods.append(manifest)
    return changes


def _active_pods_for_removal(job: Job, pods: list[Pod], rm_at_least: int) -> list[Pod]:
    """``activePodsForRemoval``."""
    remove: list[Pod] = []
    left: list[Pod] = list(pods)
    if job.is_indexed:
        remove, left = _duplicated_index_pods_for_removal(pods, job.completions or 0)
    if len(remove) < rm_at_least:
        left = sort_active_pods(left)
        remove.extend(left[:rm_at_least - len(remove)])
    return remove


def _duplicated_index_pods_for_removal(pods: list[Pod], completions: int) -> tuple[list[Pod], list[Pod]]:
    """``appendDuplicatedIndexPodsForRemoval``: pods without a valid index or with an index out of
    range go; of several pods with one index, all but the last in ``ActivePods`` order go."""
    remove: list[Pod] = []
    left: list[Pod] = []
    by_index: dict[int, list[Pod]] = {}
    for pod in sorted(pods, key=completion_index):
        index = completion_index(pod)
        if index < 0 or index >= completions:
            remove.append(pod)
        else:
            by_index.setdefault(index, []).append(pod)
    for index in sorted(by_index):
        group = by_index[index]
        if len(group) == 1:
            left.append(group[0])
            continue
        group = sort_active_pods(group)
        remove.extend(group[:-1])
        left.append(group[-1])
    return remove, left


def _add_completion_index_env(template: dict[str, Any]) -> None:
    """``addCompletionIndexEnvVariables`` (PodIndexLabel on: the value comes from the label)."""
    spec = template.get("spec")
    if not spec:
        return
    for key in ("initContainers", "containers"):
        containers = spec.get(key)
        if not containers:
            continue
        updated = []
        for container in containers:
            container = dict(container)
            env = list(container.get("env") or ())
            if not any(entry.get("name") == _COMPLETION_INDEX_ENV for entry in env):
                env.append({"name": _COMPLETION_INDEX_ENV, "valueFrom": {"fieldRef": {
                    "fieldPath": f"metadata.labels['{LABEL_JOB_COMPLETION_INDEX}']"}}})
            container["env"] = env
            updated.append(container)
        spec[key] = updated

