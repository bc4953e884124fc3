"""The Job controller's Workload and PodGroup under WorkloadWithJob (fastsched.controller.jobscheduling).

Transcribed from kube-controller-manager v1.37.2 ``pkg/controller/job/job_scheduling_manager_test.go``
(TestShouldManageWorkloadForJob, TestGenerateWorkload, TestComputeWorkloadName,
TestComputePodGroupName, TestEnsureWorkloadAndPodGroup, TestCreateWorkloadForJob, TestCreatePodGroup,
TestSyncGangMinCount) and ``job_controller_test.go`` (TestSyncJobPodSchedulingGroup). The names
(``computeWorkloadName``, ``computePodGroupName``) were checked against the Go functions run on the
same inputs. The client's injected create errors (TestEnsureWorkloadAndPodGroup's "create error
propagates" cases) are the API server refusing an object here: see
tests/scheduler/test_job_workloads.py.
"""
from __future__ import annotations

import pytest

from fastsched.api import Pod
from fastsched.api.names import NameGenerator
from fastsched.api.scheduling import (DisruptionMode, GangSchedulingPolicy, PodGroup, PodGroupSchedulingPolicy,
                                      TopologyConstraint, parse_pod_group, parse_workload)
from fastsched.api.workloads import parse_cron_job, parse_job
from fastsched.controller import reconcile
from fastsched.controller.common import Changes, Context
from fastsched.controller.jobscheduling import (GROUP_TEMPLATE_NAME_ANNOTATION, MANAGE_BOTH, MANAGE_NONE,
                                                MANAGE_POD_GROUP_ONLY, compute_pod_group_name, compute_workload_name,
                                                ensure_workload_and_pod_group, generate_workload, management_mode,
                                                new_pod_group, pod_group_template_name)

from .helpers import ListView

NOW = 1_700_000_000.0
ON = {"GenericWorkload": True, "WorkloadWithJob": True}
OFF = {"GenericWorkload": False, "WorkloadWithJob": False}


def _job(name="test-job", parallelism=4, *, scheduling=None, owners=None, annotations=None, status=None,
         scheduling_group=None, priority_class_name=None, suspend=False, indexed=True, manual=True):
    """``newGangSchedulingJob`` (and variants): uid ``<name>-uid``, parallelism = completions,
    Indexed, selector ``job-name``."""
    meta = {"name": name, "namespace": "default", "uid": f"{name}-uid"}
    if owners:
        meta["ownerReferences"] = owners
    if annotations:
        meta["annotations"] = annotations
    pod_spec: dict = {"restartPolicy": "Never", "containers": [{"name": "c", "image": "test"}]}
    if scheduling_group:
        pod_spec["schedulingGroup"] = {"podGroupName": scheduling_group}
    if priority_class_name:
        pod_spec["priorityClassName"] = priority_class_name
    spec: dict = {"parallelism": parallelism, "completions": parallelism, "suspend": suspend,
                  "template": {"metadata": {"labels": {"job-name": name}}, "spec": pod_spec}}
    if indexed:
        spec["completionMode"] = "Indexed"
    if manual:
        spec.update(manualSelector=True, selector={"matchLabels": {"job-name": name}})
    if scheduling is not None:
        spec["scheduling"] = scheduling
    doc = {"apiVersion": "batch/v1", "kind": "Job", "metadata": meta, "spec": spec}
    if status:
        doc["status"] = status
    return parse_job(doc)


def _gang(min_count=None):
    return {"schedulingPolicy": {"gang": {} if min_count is None else {"minCount": min_count}}}


def _gang_job(name="test-job", parallelism=4, **kw):
    """``newGangSchedulingJob``: a gang with minCount = parallelism."""
    return _job(name, parallelism, scheduling=_gang(parallelism), **kw)


JOBSET_OWNER = [{"apiVersion": "jobset.x-k8s.io/v1alpha2", "kind": "JobSet", "name": "js", "uid": "js-uid",
                 "controller": True}]
CRONJOB_OWNER = [{"apiVersion": "batch/v1", "kind": "CronJob", "name": "cj", "uid": "cj-uid", "controller": True}]
DELEGATE = {GROUP_TEMPLATE_NAME_ANNOTATION: "workers"}

# TestShouldManageWorkloadForJob: name -> (gates on, job, mode)
SHOULD_MANAGE = {
    "gate enabled, standalone Job -> managed (Universal Representation)": (True, _job(parallelism=4), MANAGE_BOTH),
    "gate enabled, basic single-pod Job -> still managed": (True, _job(parallelism=1), MANAGE_BOTH),
    "feature gate disabled -> not managed": (False, _job(parallelism=4), MANAGE_NONE),
    "BYO PodGroup via pod template schedulingGroup -> not managed": (
        True, _job(scheduling_group="existing-pg"), MANAGE_NONE),
    "BYO schedulingGroup takes precedence over delegation annotation -> not managed": (
        True, _job(scheduling_group="existing-pg", owners=JOBSET_OWNER, annotations=DELEGATE), MANAGE_NONE),
    "parent-owned Workload without delegation annotation -> not managed": (
        True, _job(owners=JOBSET_OWNER), MANAGE_NONE),
    "parent-owned Workload with delegation annotation -> managed (delegated PodGroup)": (
        True, _job(owners=JOBSET_OWNER, annotations=DELEGATE), MANAGE_POD_GROUP_ONLY),
    "CronJob-owned Job is treated as parent-owned (not managed)": (True, _job(owners=CRONJOB_OWNER), MANAGE_NONE),
}


@pytest.mark.parametrize("name", SHOULD_MANAGE)
def test_should_manage_workload_for_job(name):
    enabled, job, mode = SHOULD_MANAGE[name]
    assert management_mode(job, ON if enabled else OFF) == mode


# TestGenerateWorkload: name -> (job, (basic, gang minCount), topology key, all disruption, claim names, priority class)
GENERATE = {
    "nil scheduling defaults to Basic": (_job("basic-default", 4, manual=False), None, None, False, [], ""),
    "scheduling set but policy nil defaults to Basic": (_job("basic-nil-policy", 4, scheduling={}), None, None, False,
                                                        [], ""),
    "explicit basic policy": (_job("basic-explicit", 4, scheduling={"schedulingPolicy": {"basic": {}}}), None, None,
                              False, [], ""),
    "gang with explicit minCount": (_job("gang", 4, scheduling=_gang(3)), 3, None, False, [], ""),
    "gang without minCount defaults to parallelism": (_job("gang-zero", 4, scheduling=_gang()), 4, None, False, [],
                                                      ""),
    "gang without minCount and zero parallelism clamps to 1": (
        _job("gang-zero-parallelism", 0, scheduling=_gang(), indexed=False), 1, None, False, [], ""),
    "gang, topology, disruption, and claims passthrough": (
        _job("full", 4, scheduling={**_gang(4), "schedulingConstraints": {
            "topology": [{"key": "topology.kubernetes.io/zone"}]}, "disruptionMode": {"all": {}},
            "resourceClaims": [{"name": "gpu", "resourceClaimName": "my-claim"}]}),
        4, "topology.kubernetes.io/zone", True, ["gpu"], ""),
    "priorityClassName copied from pod template": (_job("prio", 4, priority_class_name="high-priority"), None, None,
                                                    False, [], "high-priority"),
}


@pytest.mark.parametrize("name", GENERATE)
def test_generate_workload(name):
    job, gang, topology, all_disrupt, claims, priority_class_name = GENERATE[name]
    wl = generate_workload(job)
    (tpl,) = wl.pod_group_templates
    assert tpl.name == pod_group_template_name(job) == f"{job.name}-pgt-0"
    if gang is None:
        assert tpl.scheduling_policy == PodGroupSchedulingPolicy(basic=True)
    else:
        assert tpl.scheduling_policy == PodGroupSchedulingPolicy(gang=GangSchedulingPolicy(gang))
    if topology:
        assert tpl.scheduling_constraints.topology == (TopologyConstraint(topology),)
    if all_disrupt:
        assert tpl.disruption_mode == DisruptionMode(all=True)
    assert [c.name for c in tpl.resource_claims] == claims
    assert tpl.priority_class_name == priority_class_name
    assert wl.controller_ref is not None and wl.controller_ref.name == job.name


# The Go functions' answers on the same inputs (computeWorkloadName, computePodGroupName of v1.37.2)
GO_WORKLOAD_NAMES = [
    ("my-job", "uid-123", "my-job-795ddf89fd"),
    ("a" * 300, "uid-long", "a" * 242 + "-799bb5c8bd"),
    ("my-job", "different-uid", "my-job-5746bf8447"),
    ("test-job", "test-job-uid", "test-job-6ff4fbf9db"),
]
GO_POD_GROUP_NAMES = [
    ("my-workload", "my-template", "my-workload-my-template-67bd6bbcc4"),
    ("w" * 250, "tpl", "w" * 239 + "-tpl-5598d65b5"),
    ("wl", "t" * 250, "wl-" + "t" * 239 + "-5c9dbd8778"),
    ("w" * 200, "t" * 200, "w" * 121 + "-" + "t" * 120 + "-6f9f45db49"),
    ("my-workload", "other-template", "my-workload-other-template-59b4bd9f44"),
    ("parent-workload", "workers", "parent-workload-workers-5cfd5c5556"),
]


@pytest.mark.parametrize("job_name, uid, want", GO_WORKLOAD_NAMES)
def test_compute_workload_name_matches_go(job_name, uid, want):
    assert compute_workload_name(job_name, uid) == want


@pytest.mark.parametrize("workload_name, template_name, want", GO_POD_GROUP_NAMES)
def test_compute_pod_group_name_matches_go(workload_name, template_name, want):
    assert compute_pod_group_name(workload_name, template_name) == want


@pytest.mark.parametrize("job_name, uid", [("my-job", "uid-123"), ("a" * 300, "uid-long")])
def test_compute_workload_name(job_name, uid):
    """TestComputeWorkloadName: fits a DNS subdomain, prefix-hash, deterministic, per UID."""
    result = compute_workload_name(job_name, uid)
    assert len(result) <= 253 and len(result.split("-")) >= 2
    assert compute_workload_name(job_name, uid) == result
    assert compute_workload_name(job_name, "different-uid") != result


@pytest.mark.parametrize("workload_name, template_name", [
    ("my-workload", "my-template"), ("w" * 250, "tpl"), ("wl", "t" * 250), ("w" * 200, "t" * 200)])
def test_compute_pod_group_name(workload_name, template_name):
    """TestComputePodGroupName."""
    result = compute_pod_group_name(workload_name, template_name)
    assert len(result) <= 253 and len(result.split("-")) >= 3
    assert compute_pod_group_name(workload_name, template_name) == result
    assert compute_pod_group_name(workload_name, "other-template") != result


def test_compute_pod_group_name_truncation():
    result = compute_pod_group_name("w" * 200, "t" * 200)
    prefix = result[:result.rindex("-")]
    assert "www" in prefix and "ttt" in prefix  # truncation preserves both parts
    assert compute_pod_group_name("wl", "t" * 250).startswith("wl-")  # a short name is not truncated


# -- TestEnsureWorkloadAndPodGroup ----------------------------------------------------------------
BASE = _gang_job("test-job", 4)
WORKLOAD_NAME = compute_workload_name(BASE.name, BASE.uid)
TEMPLATE_NAME = "test-job-pgt-0"
POD_GROUP_NAME = compute_pod_group_name(WORKLOAD_NAME, TEMPLATE_NAME)
JOB_REF = {"apiVersion": "batch/v1", "kind": "Job", "name": BASE.name, "uid": BASE.uid, "controller": True,
           "blockOwnerDeletion": True}


def _workload(name, job_name="test-job", *, owned=True, templates=None, controller_ref=None):
    meta: dict = {"name": name, "namespace": "default", "uid": f"{name}-uid"}
    if owned:
        meta["ownerReferences"] = [JOB_REF]
    spec = {"controllerRef": controller_ref or {"apiGroup": "batch", "kind": "Job", "name": job_name},
            "podGroupTemplates": templates if templates is not None else [
                {"name": TEMPLATE_NAME, "schedulingPolicy": {"gang": {"minCount": 4}}}]}
    return parse_workload({"apiVersion": "scheduling.k8s.io/v1beta1", "kind": "Workload", "metadata": meta,
                           "spec": spec})


def _pod_group(name, workload_name, *, owned=True, owner=None, template=TEMPLATE_NAME, min_count=None):
    meta: dict = {"name": name, "namespace": "default", "uid": f"{name}-uid"}
    if owned:
        meta["ownerReferences"] = [owner or JOB_REF]
    spec: dict = {"workloadRef": {"workloadName": workload_name, "templateName": template}}
    spec["schedulingPolicy"] = {"gang": {"minCount": min_count}} if min_count else {"basic": {}}
    return parse_pod_group({"apiVersion": "scheduling.k8s.io/v1beta1", "kind": "PodGroup", "metadata": meta,
                            "spec": spec})


DELEGATED = _gang_job("test-job", 4, owners=[{"apiVersion": "jobset.x-k8s.io/v1alpha2", "kind": "JobSet",
                                              "name": "parent-js", "uid": "parent-js-uid", "controller": True}],
                      annotations=DELEGATE)
DELEGATED_REF = {"apiVersion": "batch/v1", "kind": "Job", "name": "test-job", "uid": DELEGATED.uid,
                 "controller": True}
DELEGATED_PG_NAME = compute_pod_group_name("parent-workload", "workers")


def _parent_workload(min_count):
    return _workload("parent-workload", owned=False, controller_ref={"apiGroup": "jobset.x-k8s.io", "kind": "JobSet",
                                                                      "name": "parent-js"},
                     templates=[{"name": "workers", "schedulingPolicy": {"gang": {"minCount": min_count}}}])


def _delegated_pod_group(min_count):
    return _pod_group(DELEGATED_PG_NAME, "parent-workload", owner=DELEGATED_REF, template="workers",
                      min_count=min_count)


POD_0 = Pod.from_manifest({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "pod-0"},
                           "spec": {"containers": [{"name": "c", "image": "i"}]}})


def _status_job(**status):
    return _gang_job("test-job", 4, status=status)


# name -> (job, pods, existing objects, want PodGroup name ("" any, None none), want PodGroup minCount, want error)
ENSURE = {
    "creates both Workload and PodGroup when no pods exist": (BASE, [], [], POD_GROUP_NAME, None, False),
    "skips creation when Job has pods but no Workload": (BASE, [POD_0], [], None, None, False),
    "skips creation when Job has StartTime set": (_status_job(startTime="2024-01-01T00:00:00Z"), [], [], None, None,
                                                  False),
    "skips creation when Job has succeeded pods": (_status_job(succeeded=1), [], [], None, None, False),
    "skips creation when Job has failed pods": (_status_job(failed=1), [], [], None, None, False),
    "skips creating Workload/PodGroup when Job was previously suspended": (
        _status_job(conditions=[{"type": "Suspended", "status": "True"}]), [], [], None, None, False),
    "discovers existing Workload and PodGroup": (
        BASE, [], [_workload(WORKLOAD_NAME), _pod_group(POD_GROUP_NAME, WORKLOAD_NAME)], POD_GROUP_NAME, None, False),
    "discovers existing objects even when pods exist": (
        BASE, [POD_0], [_workload(WORKLOAD_NAME), _pod_group(POD_GROUP_NAME, WORKLOAD_NAME)], POD_GROUP_NAME, None,
        False),
    "workload found but no PodGroup creates one": (BASE, [], [_workload("user-workload")], "", None, False),
    "BYO Workload (no controller ownerRef) is ignored; controller creates its own": (
        BASE, [], [_workload("user-created-workload", owned=False)], POD_GROUP_NAME, None, False),
    "ambiguous Workloads fall back": (BASE, [], [_workload("workload-1"), _workload("workload-2")], None, None, False),
    "BYO PodGroup (no controller ownerRef) is ignored; controller creates its own": (
        BASE, [], [_workload(WORKLOAD_NAME), _pod_group("external-pg", WORKLOAD_NAME, owned=False)], POD_GROUP_NAME,
        None, False),
    "ambiguous PodGroups fall back": (
        BASE, [], [_workload(WORKLOAD_NAME), _pod_group("pg-1", WORKLOAD_NAME), _pod_group("pg-2", WORKLOAD_NAME)],
        None, None, False),
    "unsupported PodGroupTemplate count returns an error": (
        BASE, [], [_workload(WORKLOAD_NAME, templates=[{"name": "group-a", "schedulingPolicy": {"basic": {}}},
                                                       {"name": "group-b", "schedulingPolicy": {"basic": {}}}])],
        None, None, True),
    "delegated Job creates the PodGroup from the parent's template": (
        DELEGATED, [], [_parent_workload(4)], DELEGATED_PG_NAME, 4, False),
    "delegated PodGroup follows a parent Workload minCount change": (
        DELEGATED, [], [_parent_workload(7), _delegated_pod_group(4)], DELEGATED_PG_NAME, 7, False),
    "delegated PodGroup already matching the parent template is left unchanged": (
        DELEGATED, [], [_parent_workload(4), _delegated_pod_group(4)], DELEGATED_PG_NAME, 4, False),
}


@pytest.mark.parametrize("name", ENSURE)
def test_ensure_workload_and_pod_group(name):
    job, pods, existing, want_name, want_min_count, want_error = ENSURE[name]
    view = ListView(objects=existing)
    changes = Changes()
    got = ensure_workload_and_pod_group(job, pods, Context(view, NameGenerator(0), NOW, feature_gates=ON), changes)
    assert bool(got.error) == want_error, got.error
    if want_error:
        return
    if want_name is None:
        assert got.pod_group is None
    else:
        assert got.pod_group is not None
        if want_name:
            assert got.pod_group.name == want_name
    if want_min_count is not None:
        view.apply(changes)
        (stored,) = [o for o in view.objects("PodGroup", "default") if o.name == want_name]
        assert stored.scheduling_policy.gang.min_count == want_min_count


def test_ensure_unsupported_template_count_message():
    _, _, existing, *_ = ENSURE["unsupported PodGroupTemplate count returns an error"]
    got = ensure_workload_and_pod_group(BASE, [], Context(ListView(objects=existing), NameGenerator(0), NOW,
                                                          feature_gates=ON), Changes())
    assert got.error == (f"workload default/{WORKLOAD_NAME} for job default/test-job has 2 PodGroupTemplates, "
                         f"want exactly 1")


def test_create_workload_for_job():
    """TestCreateWorkloadForJob."""
    job = _gang_job("my-job", 8)
    changes = Changes()
    got = ensure_workload_and_pod_group(job, [], Context(ListView(), NameGenerator(0), NOW, feature_gates=ON), changes)
    wl = got.workload
    assert [o.KIND for o in changes.create_objects] == ["Workload", "PodGroup"]
    assert (wl.name, wl.namespace) == (compute_workload_name("my-job", "my-job-uid"), "default")
    assert (wl.controller_ref.api_group, wl.controller_ref.kind, wl.controller_ref.name) == ("batch", "Job", "my-job")
    (tpl,) = wl.pod_group_templates
    assert tpl.scheduling_policy.gang == GangSchedulingPolicy(8)
    assert [(r.kind, r.name, r.controller) for r in wl.owner_references] == [("Job", "my-job", True)]
    assert wl.manifest["metadata"]["ownerReferences"] == [{
        "apiVersion": "batch/v1", "kind": "Job", "name": "my-job", "uid": "my-job-uid", "controller": True,
        "blockOwnerDeletion": True}]


@pytest.mark.parametrize("link, want_owners", [(True, 2), (False, 1)])
def test_create_pod_group(link, want_owners):
    """TestCreatePodGroup: a root Job's PodGroup also names its Workload as a (non-controller)
    owner, a delegated Job's does not; the spec copies the template."""
    job = _gang_job("my-job", 4)
    workload = parse_workload({
        "apiVersion": "scheduling.k8s.io/v1beta1", "kind": "Workload",
        "metadata": {"name": "root-workload" if link else "delegated-workload", "uid": "wl-uid"},
        "spec": {"podGroupTemplates": [{"name": "my-job-pgt-0", "schedulingPolicy": {"gang": {"minCount": 4}},
                                        "priorityClassName": "high-priority", "priority": 1000}]}})
    pg = new_pod_group(job, workload, workload.pod_group_templates[0], link)
    assert pg.name == compute_pod_group_name(workload.name, "my-job-pgt-0")
    assert len(pg.owner_references) == want_owners
    if link:
        assert pg.manifest["metadata"]["ownerReferences"][1] == {
            "apiVersion": "scheduling.k8s.io/v1beta1", "kind": "Workload", "name": "root-workload", "uid": "wl-uid"}
    assert pg.manifest["spec"] == {
        "workloadRef": {"workloadName": workload.name, "templateName": "my-job-pgt-0"},
        "schedulingPolicy": {"gang": {"minCount": 4}}, "priorityClassName": "high-priority", "priority": 1000}


@pytest.mark.parametrize("current, want", [(2, 5), (5, 5)])
def test_sync_gang_min_count(current, want):
    """TestSyncGangMinCount: the controller-owned objects follow the Job's minCount."""
    job = _gang_job("scale-job", 5)
    wl_name = compute_workload_name(job.name, job.uid)
    ref = {"apiVersion": "batch/v1", "kind": "Job", "name": job.name, "uid": job.uid, "controller": True}
    workload = parse_workload({
        "apiVersion": "scheduling.k8s.io/v1beta1", "kind": "Workload",
        "metadata": {"name": wl_name, "uid": "wl-uid", "ownerReferences": [ref]},
        "spec": {"controllerRef": {"apiGroup": "batch", "kind": "Job", "name": job.name},
                 "podGroupTemplates": [{"name": "scale-job-pgt-0", "schedulingPolicy": {"gang": {"minCount": current}}}]}})
    pg = _pod_group(compute_pod_group_name(wl_name, "scale-job-pgt-0"), wl_name, owner=ref,
                    template="scale-job-pgt-0", min_count=current)
    view = ListView(pods=[POD_0], objects=[workload, pg])
    changes = Changes()
    got = ensure_workload_and_pod_group(job, [POD_0], Context(view, NameGenerator(0), NOW, feature_gates=ON), changes)
    assert got.pod_group.scheduling_policy.gang.min_count == want
    assert len(changes.update_objects) == (2 if current != want else 0)
    view.apply(changes)
    (stored_wl,) = view.objects("Workload", "default")
    (stored_pg,) = view.objects("PodGroup", "default")
    assert stored_wl.pod_group_templates[0].scheduling_policy.gang.min_count == want
    assert stored_pg.scheduling_policy.gang.min_count == want
    assert stored_pg.manifest["spec"]["schedulingPolicy"] == {"gang": {"minCount": want}}


def test_parallelism_change_resizes_a_gang_without_min_count():
    """Elastic scaling: a gang whose minCount defaults to parallelism follows a parallelism change."""
    job = _job("elastic", 4, scheduling=_gang())
    view = ListView()
    changes = reconcile(job, view, NameGenerator(0), NOW, feature_gates=ON)
    view.apply(changes)
    assert [pg.min_count for pg in view.objects("PodGroup", "default")] == [4]
    created = list(changes.create_pods)
    scaled = _job("elastic", 6, scheduling=_gang())
    changes = reconcile(scaled, view, NameGenerator(1), NOW, feature_gates=ON)
    assert sorted(o.KIND for o in changes.update_objects) == ["PodGroup", "Workload"]
    view.apply(changes)
    assert [pg.min_count for pg in view.objects("PodGroup", "default")] == [6]
    (wl,) = view.objects("Workload", "default")
    assert wl.pod_group_templates[0].scheduling_policy.gang.min_count == 6
    # the two new pods join the same group
    created += changes.create_pods
    assert len(created) == 6
    assert {m["spec"]["schedulingGroup"]["podGroupName"] for m in created} == {
        view.objects("PodGroup", "default")[0].name}


# -- job_controller_test.go TestSyncJobPodSchedulingGroup ------------------------------------------
def _controller_objects(job):
    wl = _workload(compute_workload_name(job.name, job.uid), job.name,
                   templates=[{"name": f"{job.name}-pgt-0", "schedulingPolicy": {"basic": {}}}])
    ref = {"apiVersion": "batch/v1", "kind": "Job", "name": job.name, "uid": job.uid, "controller": True}
    wl = parse_workload({**wl.manifest, "metadata": {**wl.manifest["metadata"], "ownerReferences": [ref]}})
    pg = _pod_group(compute_pod_group_name(wl.name, f"{job.name}-pgt-0"), wl.name, owner=ref,
                    template=f"{job.name}-pgt-0")
    return [wl, pg]


GANG = _gang_job("test-job", 4)
BASIC_JOB = _job("basic", 2, indexed=False, manual=False)
SUSPENDED = _gang_job("suspended-job", 4, suspend=True)

# name -> (job, gates on, existing objects, wanted schedulingGroup ("" none), pods created)
SYNC_POD_SCHEDULING_GROUP = {
    "gang-eligible job with PodGroup: pods get schedulingGroup and ownerRef": (
        GANG, True, _controller_objects(GANG), _controller_objects(GANG)[1].name, 4),
    "basic job: Workload/PodGroup materialized and pods get schedulingGroup": (
        BASIC_JOB, True, [], compute_pod_group_name(compute_workload_name("basic", BASIC_JOB.uid), "basic-pgt-0"), 2),
    "job with pre-existing schedulingGroup: preserved without PodGroup ownerRef": (
        _gang_job("opt-out-job", 4, scheduling_group="external-pg"), True, [], "external-pg", 4),
    "suspended gang-eligible job: discovers scheduling objects but creates no pods": (
        SUSPENDED, True, _controller_objects(SUSPENDED), "", 0),
    "feature gate disabled: gang-eligible job creates pods without scheduling objects": (
        _gang_job("gang-job", 4), False, [], "", 4),
}


@pytest.mark.parametrize("name", SYNC_POD_SCHEDULING_GROUP)
def test_sync_job_pod_scheduling_group(name):
    job, enabled, existing, want_group, want_creations = SYNC_POD_SCHEDULING_GROUP[name]
    changes = reconcile(job, ListView(objects=existing), NameGenerator(0), NOW, feature_gates=ON if enabled else OFF)
    assert len(changes.create_pods) == want_creations
    for manifest in changes.create_pods:
        group = (manifest["spec"].get("schedulingGroup") or {}).get("podGroupName", "")
        assert group == want_group
        # the pods the API server receives: GetPodFromTemplate copies no owner reference of the
        # template (upstream's unit test reads the template, which has one to the PodGroup)
        assert [ref["kind"] for ref in manifest["metadata"]["ownerReferences"]] == ["Job"]
    if not enabled:
        assert changes.create_objects == [] and changes.update_objects == []


def test_basic_job_objects():
    """The basic Job's Workload and PodGroup as created: names, references, Basic policy."""
    changes = reconcile(BASIC_JOB, ListView(), NameGenerator(0), NOW, feature_gates=ON)
    wl, pg = changes.create_objects
    assert (wl.KIND, pg.KIND) == ("Workload", "PodGroup")
    assert isinstance(pg, PodGroup) and pg.scheduling_policy == PodGroupSchedulingPolicy(basic=True)
    assert (pg.workload_ref.workload_name, pg.workload_ref.template_name) == (wl.name, "basic-pgt-0")
    assert [(r.kind, r.controller) for r in pg.owner_references] == [("Job", True), ("Workload", False)]
    assert pg.owner_references[1].uid == wl.uid


def test_cron_job_jobs_are_not_managed():
    """A CronJob's Job has a controller owner and no delegation: pods scheduled alone, no objects."""
    cj = parse_cron_job({"apiVersion": "batch/v1", "kind": "CronJob", "metadata": {"name": "nightly", "uid": "cj-uid"},
                         "spec": {"schedule": "* * * * *", "jobTemplate": {"spec": {
                             "parallelism": 2, "scheduling": _gang(),
                             "template": {"spec": {"restartPolicy": "Never",
                                                   "containers": [{"name": "c", "image": "i"}]}}}}}})
    changes = reconcile(cj, ListView(), NameGenerator(0), NOW, feature_gates=ON)
    assert [o.KIND for o in changes.create_objects] == ["Job"]
    assert len(changes.create_pods) == 2
    assert all("schedulingGroup" not in m["spec"] for m in changes.create_pods)
