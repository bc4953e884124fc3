"""Workload objects: parsing, defaults and validation messages."""
from __future__ import annotations

import pytest

from fastsched.api import KubeObject, ManifestError
from fastsched.api.workloads import (
    WORKLOAD_PARSERS,
    WORKLOAD_VALIDATORS,
    CronJob,
    DaemonSet,
    Deployment,
    Job,
    ReplicaSet,
    ReplicationController,
    Service,
    StatefulSet,
)

from .helpers import template, workload

KINDS = ["Deployment", "ReplicaSet", "StatefulSet", "DaemonSet", "Job", "CronJob", "ReplicationController", "Service"]


def messages(obj: KubeObject) -> list[str]:
    return [str(error) for error in WORKLOAD_VALIDATORS[obj.KIND](obj)]


def test_registries_cover_every_kind():
    assert sorted(WORKLOAD_PARSERS) == sorted(KINDS) == sorted(WORKLOAD_VALIDATORS)
    for cls in (Deployment, ReplicaSet, StatefulSet, DaemonSet, Job, CronJob, ReplicationController, Service):
        assert issubclass(cls, KubeObject) and cls.KIND in KINDS


def test_from_manifest_yaml_and_kind_check():
    text = """
apiVersion: apps/v1
kind: ReplicaSet
metadata: {name: web, namespace: prod, labels: {app: web}}
spec:
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec: {containers: [{name: c, image: nginx}]}
"""
    rs = ReplicaSet.from_manifest(text)
    assert (rs.name, rs.namespace, rs.replicas) == ("web", "prod", 1)
    assert rs.selector.matches({"app": "web"}) and not rs.selector.matches({"app": "db"})
    assert rs.template["spec"]["containers"][0]["image"] == "nginx"
    assert ReplicaSet.from_manifest(rs) is rs
    with pytest.raises(ManifestError, match="expected kind 'Deployment'"):
        Deployment.from_manifest(text)


def test_manifest_errors_name_the_field():
    with pytest.raises(ManifestError, match=r"spec\.replicas: expected an integer"):
        workload("ReplicaSet", "x", {"replicas": "3"})
    with pytest.raises(ManifestError, match=r"spec\.selector\.matchExpressions\[0\]\.operator"):
        workload("Deployment", "x", {"selector": {"matchExpressions": [{"key": "a", "operator": "Near"}]}})
    with pytest.raises(ManifestError, match=r"spec\.template\.metadata\.labels"):
        workload("Deployment", "x", {"template": {"metadata": {"labels": {"a": 1}}}})


def test_service_and_rc_selectors_are_maps_or_none():
    assert workload("Service", "s", {}).selector is None
    assert workload("Service", "s", {"selector": {}}).selector is None
    assert workload("Service", "s", {"selector": {"app": "web"}}).selector == {"app": "web"}
    rc = workload("ReplicationController", "r", {"selector": {"a": "b"}, "template": template({"a": "b", "c": "d"})})
    assert rc.selector == {"a": "b"} and rc.replicas == 1
    assert workload("ReplicationController", "r", {}).template is None


def test_daemon_set_and_stateful_set_defaults():
    ds = workload("DaemonSet", "d", {"selector": {"matchLabels": {"a": "b"}}, "template": template({"a": "b"})})
    assert (ds.update_strategy_type, ds.max_unavailable, ds.max_surge, ds.template_generation) == (
        "RollingUpdate", 1, 0, 1)
    sts = workload("StatefulSet", "s", {"selector": {"matchLabels": {"a": "b"}}, "template": template({"a": "b"}),
                                        "ordinals": {"start": 3},
                                        "volumeClaimTemplates": [{"metadata": {"name": "v"}}]})
    assert (sts.replicas, sts.ordinals_start, sts.service_name) == (1, 3, "")
    assert sts.volume_claim_templates == ({"metadata": {"name": "v"}},)


def test_cron_job_defaults():
    cj = workload("CronJob", "c", {"schedule": "@hourly", "jobTemplate": {"spec": {}}})
    assert (cj.concurrency_policy, cj.suspend, cj.successful_jobs_history_limit, cj.failed_jobs_history_limit) == (
        "Allow", False, 3, 1)


def test_apps_validation_messages():
    rs = workload("ReplicaSet", "web", {"replicas": -1, "selector": {"matchLabels": {"app": "web"}},
                                        "template": template({"app": "x"}, spec={"restartPolicy": "Never"})})
    assert messages(rs) == [
        "spec.replicas: Invalid value: -1: must be greater than or equal to 0",
        'spec.template.metadata.labels: Invalid value: {"app":"x"}: `selector` does not match template `labels`',
        'spec.template.spec.restartPolicy: Unsupported value: "Never": supported values: "Always"',
    ]
    assert messages(workload("ReplicaSet", "web", {"template": template({"app": "x"})})) == [
        "spec.selector: Required value",
        'spec.template.metadata.labels: Invalid value: {"app":"x"}: `selector` does not match template `labels`',
    ]
    assert messages(workload("Deployment", "d", {"selector": {}, "template": template({"app": "x"})})) == [
        "spec.selector: Invalid value: {}: empty selector is invalid for deployment"]
    ok = workload("Deployment", "d", {"selector": {"matchLabels": {"app": "x"}}, "template": template({"app": "x"})})
    assert messages(ok) == []
    zero = workload("Deployment", "d", {"selector": {"matchLabels": {"a": "b"}}, "template": template({"a": "b"}),
                                        "strategy": {"rollingUpdate": {"maxSurge": 0, "maxUnavailable": "0%"}}})
    assert messages(zero) == [
        'spec.strategy.rollingUpdate.maxUnavailable: Invalid value: "0%": may not be 0 when `maxSurge` is 0']


def test_stateful_set_and_daemon_set_validation_messages():
    sts = workload("StatefulSet", "db", {"podManagementPolicy": "Burst", "ordinals": {"start": -1},
                                         "selector": {"matchLabels": {"a": "b"}}, "template": template({"a": "b"})})
    assert messages(sts) == [
        "spec.podManagementPolicy: Invalid value: \"Burst\": must be 'OrderedReady' or 'Parallel'",
        "spec.ordinals.start: Invalid value: -1: must be greater than or equal to 0",
    ]
    assert messages(workload("StatefulSet", "db", {"selector": {}, "template": template({"a": "b"})})) == [
        "spec.selector: Invalid value: {}: empty selector is invalid for statefulset"]
    assert messages(workload("DaemonSet", "d", {"template": template({"a": "b"})})) == [
        'spec.template.metadata.labels: Invalid value: {"a":"b"}: `selector` does not match template `labels`']
    assert messages(workload("DaemonSet", "d", {"selector": {}, "template": template({"a": "b"})})) == [
        "spec.selector: Invalid value: {}: empty selector is invalid for daemonset"]


def test_job_and_cron_job_validation_messages():
    job = workload("Job", "j", {"parallelism": -2, "completions": -1, "completionMode": "Sometimes",
                                "template": template({"a": "b"})})
    assert messages(job) == [
        "spec.parallelism: Invalid value: -2: must be greater than or equal to 0",
        "spec.completions: Invalid value: -1: must be greater than or equal to 0",
        'spec.completionMode: Unsupported value: "Sometimes": supported values: "NonIndexed", "Indexed"',
        'spec.template.spec.restartPolicy: Required value: valid values: "OnFailure", "Never"',
    ]
    indexed = workload("Job", "j", {"completionMode": "Indexed", "parallelism": 2,
                                    "template": template({"a": "b"}, spec={"restartPolicy": "Never"})})
    assert messages(indexed) == ["spec.completions: Required value: when completion mode is Indexed"]
    manual = workload("Job", "j", {"manualSelector": True, "template": template({"a": "b"},
                                                                                 spec={"restartPolicy": "Never"})})
    assert messages(manual) == ["spec.selector: Required value"]
    wrong = workload("Job", "j", {"selector": {"matchLabels": {"a": "b"}},
                                  "template": template({"a": "b"}, spec={"restartPolicy": "Never"})})
    assert messages(wrong) == ['spec.selector: Invalid value: {"matchLabels":{"a":"b",'
                               f'"batch.kubernetes.io/controller-uid":"{wrong.uid}"}}}}: `selector` not auto-generated']
    cj = workload("CronJob", "c" * 53, {"jobTemplate": {"spec": {"template": template({"a": "b"})}}})
    assert messages(cj) == [
        f'metadata.name: Invalid value: "{"c" * 53}": must be no more than 52 characters',
        "spec.schedule: Required value",
        'spec.jobTemplate.spec.template.spec.restartPolicy: Required value: valid values: "OnFailure", "Never"',
    ]


def test_replication_controller_validation_messages():
    rc = workload("ReplicationController", "r", {"selector": {"a": "c"}, "template": template({"a": "b"})})
    assert messages(rc) == [
        'spec.template.metadata.labels: Invalid value: {"a":"b"}: `selector` does not match template `labels`']
    assert messages(workload("ReplicationController", "r", {})) == ["spec.selector: Required value",
                                                                      "spec.template: Required value"]
