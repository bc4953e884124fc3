"""CronJob controller: the Job for the current minute and its pods."""
from __future__ import annotations

from fastsched.api import deterministic_uid
from fastsched.api.names import NameGenerator
from fastsched.api.workloads import Job
from fastsched.controller import reconcile
from fastsched.controller.cronjob import job_name

from .helpers import ListView, template, workload

NOW = 1_700_000_123.7  # 2023-11-14T22:15:23.7Z
MINUTE = 1_700_000_123 // 60


def cron(**spec):
    job_template = {"metadata": {"labels": {"team": "a"}, "annotations": {"note": "x"}},
                    "spec": {"parallelism": 2, "completions": 2,
                             "template": template({"app": "cron"}, spec={"restartPolicy": "OnFailure"})}}
    return workload("CronJob", "report", {"schedule": "*/5 * * * *", "jobTemplate": job_template, **spec})


def test_job_named_by_scheduled_minute_with_owner_and_annotation():
    cj = cron()
    changes = reconcile(cj, ListView(), NameGenerator(1), NOW)
    [job] = changes.create_objects
    assert isinstance(job, Job)
    assert job.name == f"report-{MINUTE}" == job_name("report", NOW)
    assert job.uid == deterministic_uid("Job", "default", job.name)
    assert job.labels == {"team": "a"}
    assert job.annotations == {"note": "x", "batch.kubernetes.io/cronjob-scheduled-timestamp": "2023-11-14T22:15:00Z"}
    [ref] = job.owner_references
    assert (ref.api_version, ref.kind, ref.name, ref.uid, ref.controller) == ("batch/v1", "CronJob", "report",
                                                                              cj.uid, True)
    assert job.selector_spec == {"matchLabels": {"batch.kubernetes.io/controller-uid": job.uid}}
    assert job.manifest["spec"]["template"]["metadata"]["labels"]["job-name"] == job.name
    # the Job's pods come in the same pass
    names = [m["metadata"]["name"] for m in changes.create_pods]
    assert names == [f"report-{MINUTE}-k8pzw", f"report-{MINUTE}-fg5kp"]
    assert changes.create_pods[0]["metadata"]["ownerReferences"][0]["uid"] == job.uid
    assert changes.create_pods[0]["metadata"]["labels"]["batch.kubernetes.io/controller-uid"] == job.uid


def test_time_zone_in_annotation():
    cj = cron(timeZone="Asia/Kolkata")
    [job] = reconcile(cj, ListView(), NameGenerator(0), NOW).create_objects
    assert job.annotations["batch.kubernetes.io/cronjob-scheduled-timestamp"] == "2023-11-15T03:45:00+05:30"


def test_suspended_or_existing_job_does_nothing():
    assert reconcile(cron(suspend=True), ListView(), NameGenerator(0), NOW).is_empty()
    cj = cron()
    view = ListView(objects=[cj])
    view.apply(reconcile(cj, view, NameGenerator(0), NOW))
    assert reconcile(cj, view, NameGenerator(0), NOW).is_empty()
    [job] = view.objects("Job", "default")
    assert reconcile(job, view, NameGenerator(0), NOW).is_empty()


def test_concurrency_policies():
    view = ListView()
    cj = cron(concurrencyPolicy="Forbid")
    view.apply(reconcile(cj, view, NameGenerator(0), NOW))
    assert reconcile(cj, view, NameGenerator(0), NOW + 60).is_empty()  # previous Job unfinished
    replace = cron(concurrencyPolicy="Replace")
    changes = reconcile(replace, view, NameGenerator(0), NOW + 60)
    assert [o.name for o in changes.delete_objects] == [f"report-{MINUTE}"]
    assert len(changes.delete_pods) == 2
    assert [o.name for o in changes.create_objects] == [f"report-{MINUTE + 1}"]
    allow = reconcile(cron(), view, NameGenerator(0), NOW + 60)
    assert not allow.delete_objects and len(allow.create_objects) == 1


def test_other_cronjobs_jobs_do_not_block():
    cj = cron(concurrencyPolicy="Forbid")
    other = workload("Job", "elsewhere", {"template": template({"x": "y"}, spec={"restartPolicy": "Never"})})
    assert len(reconcile(cj, ListView(objects=[other]), NameGenerator(0), NOW).create_objects) == 1
