"""Job controller: defaults, generated selector, NonIndexed and Indexed pods, completions."""
from __future__ import annotations

import re

from fastsched.api import Pod, deterministic_uid
from fastsched.api.names import NameGenerator
from fastsched.controller import reconcile
from fastsched.controller.job import pod_generate_name_with_index

from .helpers import ListView, owned_pod, template, workload

NOW = 1_700_000_000.0
NEVER = {"restartPolicy": "Never"}


def job(name="batch", **spec):
    return workload("Job", name, {"template": template({"app": "batch"}, spec=NEVER), **spec})


def job_pod(j, name, phase=None, index=None, node="n", deleting=False, finalizer=True):
    labels = dict(j.template["metadata"]["labels"])
    annotations = {}
    if index is not None:
        annotations["batch.kubernetes.io/job-completion-index"] = str(index)
    pod = owned_pod(name, j, labels, phase=phase, node=node, annotations=annotations, deleting=deleting)
    if finalizer:
        manifest = dict(pod.manifest)
        manifest["metadata"] = {**manifest["metadata"], "finalizers": ["batch.kubernetes.io/job-tracking"]}
        pod = Pod.from_manifest(manifest)
    return pod


def test_defaults_and_generated_selector():
    j = job()
    assert (j.parallelism, j.completions, j.completion_mode, j.suspend, j.backoff_limit) == (1, 1, "NonIndexed",
                                                                                          False, 6)
    assert j.uid == deterministic_uid("Job", "default", "batch")
    assert j.template["metadata"]["labels"] == {"app": "batch", "job-name": "batch",
                                                 "batch.kubernetes.io/job-name": "batch", "controller-uid": j.uid,
                                                 "batch.kubernetes.io/controller-uid": j.uid}
    assert j.selector_spec == {"matchLabels": {"batch.kubernetes.io/controller-uid": j.uid}}
    assert job(parallelism=3).completions is None  # only parallelism set: completions stays unset
    assert job(completions=4).parallelism == 1
    assert job(podFailurePolicy={"rules": []}).pod_replacement_policy == "Failed"


def test_manual_selector_keeps_user_labels():
    j = workload("Job", "m", {"manualSelector": True, "selector": {"matchLabels": {"app": "batch"}},
                              "template": template({"app": "batch"}, spec=NEVER)})
    assert j.template["metadata"]["labels"] == {"app": "batch"}
    assert j.selector_spec == {"matchLabels": {"app": "batch"}}


def test_non_indexed_pods():
    j = job(parallelism=3, completions=5)
    changes = reconcile(j, ListView(), NameGenerator(1), NOW)
    assert [m["metadata"]["name"] for m in changes.create_pods] == ["batch-k8pzw", "batch-fg5kp", "batch-4927t"]
    meta = changes.create_pods[0]["metadata"]
    assert meta["generateName"] == "batch-"
    assert meta["labels"] == j.template["metadata"]["labels"]
    assert meta["finalizers"] == ["batch.kubernetes.io/job-tracking"]
    assert meta["ownerReferences"] == [{"apiVersion": "batch/v1", "kind": "Job", "name": "batch", "uid": j.uid,
                                        "controller": True, "blockOwnerDeletion": True}]
    assert "hostname" not in changes.create_pods[0]["spec"]
    Pod.from_manifest(changes.create_pods[0])


def test_completions_count_succeeded_pods():
    j = job(parallelism=3, completions=5)
    pods = [job_pod(j, f"s{i}", "Succeeded") for i in range(3)] + [job_pod(j, "r", "Running")]
    changes = reconcile(j, ListView(pods), NameGenerator(0), NOW)
    assert len(changes.create_pods) == 1  # min(parallelism 3, 5 - 3 remaining) = 2 active wanted, 1 running
    done = [job_pod(j, f"s{i}", "Succeeded") for i in range(5)]
    assert reconcile(j, ListView(done), NameGenerator(0), NOW).is_empty()


def test_succeeded_pods_without_finalizer_count_once_with_status():
    j = workload("Job", "batch", {"completions": 3, "parallelism": 3,
                                  "template": template({"app": "batch"}, spec=NEVER)})
    counted = [job_pod(j, f"s{i}", "Succeeded", finalizer=False) for i in range(2)]
    assert len(reconcile(j, ListView(counted), NameGenerator(0), NOW).create_pods) == 1
    with_status = workload("Job", "batch", {"completions": 3, "parallelism": 3,
                                            "template": template({"app": "batch"}, spec=NEVER)})
    manifest = dict(with_status.manifest, status={"succeeded": 2})
    with_status = type(with_status).from_manifest(manifest)
    assert len(reconcile(with_status, ListView(counted), NameGenerator(0), NOW).create_pods) == 1
    assert len(reconcile(with_status, ListView(), NameGenerator(0), NOW).create_pods) == 1


def test_too_many_active_pods_deleted():
    j = job(parallelism=1, completions=1)
    pods = [job_pod(j, "a", "Running", node="n"), job_pod(j, "b", "Pending", node="")]
    changes = reconcile(j, ListView(pods), NameGenerator(0), NOW)
    assert [p.name for p in changes.delete_pods] == ["b"]


def test_no_completions_runs_parallelism_until_first_success():
    j = job(parallelism=2)
    assert len(reconcile(j, ListView(), NameGenerator(0), NOW).create_pods) == 2
    pods = [job_pod(j, "done", "Succeeded"), job_pod(j, "r", "Running")]
    assert reconcile(j, ListView(pods), NameGenerator(0), NOW).is_empty()
    assert reconcile(j, ListView(pods[:1]), NameGenerator(0), NOW).is_empty()  # complete


def test_indexed_pods():
    j = job(parallelism=2, completions=4, completionMode="Indexed")
    pods = [job_pod(j, "batch-0-xxxxx", "Succeeded", index=0)]
    changes = reconcile(j, ListView(pods), NameGenerator(1), NOW)
    names = [m["metadata"]["name"] for m in changes.create_pods]
    assert names == ["batch-1-k8pzw", "batch-2-fg5kp"]
    for index, manifest in zip((1, 2), changes.create_pods):
        meta = manifest["metadata"]
        assert meta["generateName"] == f"batch-{index}-"
        assert meta["annotations"]["batch.kubernetes.io/job-completion-index"] == str(index)
        assert meta["labels"]["batch.kubernetes.io/job-completion-index"] == str(index)
        assert manifest["spec"]["hostname"] == f"batch-{index}"
        assert manifest["spec"]["containers"][0]["env"] == [{"name": "JOB_COMPLETION_INDEX", "valueFrom": {
            "fieldRef": {"fieldPath": "metadata.labels['batch.kubernetes.io/job-completion-index']"}}}]
        Pod.from_manifest(manifest)


def test_indexed_duplicates_and_out_of_range_removed():
    j = job(parallelism=2, completions=2, completionMode="Indexed")
    pods = [job_pod(j, "a", "Running", index=0), job_pod(j, "b", "Pending", index=0, node=""),
            job_pod(j, "c", "Running", index=7)]
    changes = reconcile(j, ListView(pods), NameGenerator(0), NOW)
    assert sorted(p.name for p in changes.delete_pods) == ["b", "c"]
    assert changes.create_pods == []


def test_indexed_generate_name_cut():
    long_name = "j" * 60
    prefix = pod_generate_name_with_index(long_name, 12)
    assert prefix == "j" * (58 - 4) + "-12-" and len(prefix) == 58


def test_suspended_job_creates_nothing_and_deletes_active():
    j = job(parallelism=2, completions=2, suspend=True)
    assert reconcile(j, ListView(), NameGenerator(0), NOW).is_empty()
    running = job_pod(j, "r", "Running")
    assert [p.name for p in reconcile(j, ListView([running]), NameGenerator(0), NOW).delete_pods] == ["r"]


def test_backoff_limit_exceeded_deletes_active_pods():
    j = job(parallelism=2, completions=5, backoffLimit=1)
    pods = [job_pod(j, "f1", "Failed"), job_pod(j, "f2", "Failed"), job_pod(j, "r", "Running")]
    changes = reconcile(j, ListView(pods), NameGenerator(0), NOW)
    assert [p.name for p in changes.delete_pods] == ["r"] and not changes.create_pods


def test_finished_job_does_nothing():
    j = job()
    finished = type(j).from_manifest(dict(j.manifest, status={"conditions": [{"type": "Complete", "status": "True"}]}))
    assert finished.finished
    assert reconcile(finished, ListView(), NameGenerator(0), NOW).is_empty()


def test_orphan_adopted_with_finalizer():
    j = job(parallelism=1, completions=1)
    orphan = owned_pod("loose", None, dict(j.template["metadata"]["labels"]), phase="Running")
    changes = reconcile(j, ListView([orphan]), NameGenerator(0), NOW)
    [adopted] = changes.adopt_pods
    assert adopted.manifest["metadata"]["finalizers"] == ["batch.kubernetes.io/job-tracking"]
    assert not changes.create_pods


def test_terminating_pods_replaced_only_when_policy_terminating_or_failed():
    j = job(parallelism=1, completions=1)
    terminating = job_pod(j, "t", "Running", deleting=True)
    assert len(reconcile(j, ListView([terminating]), NameGenerator(0), NOW).create_pods) == 1
    j2 = job(parallelism=1, completions=1, podReplacementPolicy="Failed")
    assert reconcile(j2, ListView([job_pod(j2, "t", "Running", deleting=True)]), NameGenerator(0), NOW).is_empty()


def test_idempotent_after_apply():
    j = job(parallelism=3, completions=3, completionMode="Indexed")
    view = ListView(objects=[j])
    view.apply(reconcile(j, view, NameGenerator(0), NOW))
    assert sorted(re.sub(r"-[a-z0-9]{5}$", "", p.name) for p in view.pods("default")) == [
        "batch-0", "batch-1", "batch-2"]
    assert reconcile(j, view, NameGenerator(0), NOW).is_empty()
