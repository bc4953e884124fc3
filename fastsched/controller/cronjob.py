"""The CronJob controller (upstream ``pkg/controller/cronjob/cronjob_controllerv2.go``,
``utils.go``), with ``now`` as the scheduled time.

A CronJob that is suspended or being deleted does nothing. Otherwise the scheduled time is ``now``
floored to the minute and the Job ``<cronjob>-<scheduledTime.Unix() / 60>`` is made from
``spec.jobTemplate`` (``getJobFromTemplate2``): the template's labels, its annotations plus
``batch.kubernetes.io/cronjob-scheduled-timestamp`` (RFC 3339 in ``spec.timeZone``, UTC when
unset), ``creationTimestamp`` = the scheduled time, controller reference ``batch/v1 CronJob``, the
template's spec. Nothing happens when a Job of that name exists, or, with ``concurrencyPolicy:
Forbid``, while one of the CronJob's Jobs is unfinished; with ``Replace`` the unfinished ones (and
their active pods) are deleted first. The new Job is built as the API server stores it (defaults
and generated selector, uid :func:`~fastsched.api.objects.deterministic_uid`) and reconciled in the
same pass, so its pods are in the result too.

Deviation: upstream creates a Job only at a time the ``schedule`` names (the most recent one
since the last schedule or the CronJob's creation, within ``startingDeadlineSeconds``); a freshly
added CronJob gets its first Job at the next tick of its schedule. Here every reconcile is taken as
a tick, so the caller decides when the schedule fires.
"""
from __future__ import annotations

import copy
import datetime
import math
from typing import Any

from ..api.workloads import (
    CONCURRENCY_FORBID,
    CONCURRENCY_REPLACE,
    CronJob,
    Job,
    parse_job,
)
from .common import Changes, Context, controller_of, controller_ref, is_pod_active
from .job import reconcile_job

__all__ = ["reconcile_cron_job", "job_name", "ANNOTATION_SCHEDULED_TIMESTAMP"]

#: ``batchv1.CronJobScheduledTimestampAnnotation`` (CronJobsScheduledAnnotation, on in v1.34).
ANNOTATION_SCHEDULED_TIMESTAMP = "batch.kubernetes.io/cronjob-scheduled-timestamp"


def job_name(cron_job_name: str, scheduled_time: float) -> str:
    """``getJobName``: ``<cronjob>-<scheduledTime.Unix() / 60>``."""
    return f"{cron_job_name}-{int(math.floor(scheduled_time)) // 60}"


def _rfc3339(seconds: float, time_zone: str | None) -> str:
    """Go's ``time.RFC3339`` of the instant in the zone ("Z" for UTC)."""
    zone: datetime.tzinfo = datetime.timezone.utc
    if time_zone:
        try:
            from zoneinfo import ZoneInfo

            zone = ZoneInfo(time_zone)
        except Exception:  # unknown zone: upstream fails to create the Job; use UTC here
            zone = datetime.timezone.utc
    moment = datetime.datetime.fromtimestamp(int(seconds), tz=zone)
    offset = moment.utcoffset() or datetime.timedelta(0)
    text = moment.strftime("%Y-%m-%dT%H:%M:%S")
    if offset == datetime.timedelta(0):
        return text + "Z"
    total = int(offset.total_seconds())
    sign = "+" if total >= 0 else "-"
    total = abs(total)
    return f"{text}{sign}{total // 3600:02d}:{total % 3600 // 60:02d}"


def reconcile_cron_job(cj: CronJob, ctx: Context) -> Changes:
    """The Job ``cj`` would start now, with its pods; see the module docstring."""
    changes = Changes()
    if cj.deletion_timestamp is not None or cj.suspend:
        return changes
    scheduled = math.floor(ctx.now / 60) * 60
    name = job_name(cj.name, scheduled)
    if ctx.taken(Job.KIND, cj.namespace, name):
        return changes
    jobs = [job for job in ctx.view.objects(Job.KIND, cj.namespace)
            if (reference := controller_of(job)) is not None and reference.uid == cj.uid]
    unfinished = [job for job in jobs if isinstance(job, Job) and not job.finished]
    if unfinished and cj.concurrency_policy == CONCURRENCY_FORBID:
        return changes
    if unfinished and cj.concurrency_policy == CONCURRENCY_REPLACE:
        changes.delete_objects.extend(unfinished)
        owned = {job.uid for job in unfinished}
        changes.delete_pods.extend(
            pod for pod in ctx.view.pods(cj.namespace)
            if is_pod_active(pod) and (reference := controller_of(pod)) is not None and reference.uid in owned)
    template = cj.job_template
    template_metadata = template.get("metadata") or {}
    annotations = dict(template_metadata.get("annotations") or {})
    annotations[ANNOTATION_SCHEDULED_TIMESTAMP] = _rfc3339(scheduled, cj.time_zone)
    metadata: dict[str, Any] = {
        "name": name,
        "namespace": cj.namespace,
        "labels": dict(template_metadata.get("labels") or {}),
        "annotations": annotations,
        "creationTimestamp": _rfc3339(scheduled, None),
        "ownerReferences": [controller_ref(cj)],
    }
    manifest: dict[str, Any] = {"apiVersion": "batch/v1", "kind": "Job", "metadata": metadata,
                "spec": copy.deepcopy(dict(template.get("spec") or {}))}
    job = parse_job(manifest)
    # store it as the API server would: uid, generated selector and template labels written back
    metadata["uid"] = job.uid
    spec = manifest["spec"]
    spec["selector"] = copy.deepcopy(job.selector_spec) if job.selector_spec is not None else None
    spec["template"] = copy.deepcopy(dict(job.template))
    if spec["selector"] is None:
        del spec["selector"]
    job = parse_job(manifest)
    ctx.reserve(Job.KIND, cj.namespace, name)
    changes.create_objects.append(job)
    changes.extend(reconcile_job(job, ctx))
    return changes
