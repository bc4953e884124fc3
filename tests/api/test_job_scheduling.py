"""A Job's ``spec.scheduling`` (WorkloadWithJob): decoding, dropped on create without the gate,
the API server's validation, and the pod group template it compiles to.

Upstream tables: ``pkg/apis/batch/validation/validation_test.go`` (TestValidateJobSchedulingGangMinCount,
TestValidateCronJobCreateGangMinCount), ``test/declarative_validation/batch/job/
declarative_validation_test.go`` (TestDeclarativeValidate, create cases), ``pkg/api/job/util_test.go``
(TestDropDisabledFieldsScheduling, TestWorkloadItemForJob, TestWorkloadItemForJobMinCountDefaulting).
Update-only rules are not modelled (fastsched creates Jobs, it does not update them through an API).
"""
from __future__ import annotations

import copy

import pytest

from fastsched.api import load_objects
from fastsched.api.jobscheduling import (JobGangSchedulingPolicy, JobSchedulingConfiguration, JobSchedulingPolicy,
                                         job_scheduling_declarative_errors, job_scheduling_errors,
                                         pod_group_template_for_job)
from fastsched.api.errors import ManifestError
from fastsched.api.scheduling import (DisruptionMode, GangSchedulingPolicy, PodGroupResourceClaim,
                                      PodGroupSchedulingConstraints, PodGroupSchedulingPolicy, TopologyConstraint)
from fastsched.api.strategy import prepare_for_create, validate
from fastsched.util.field import FieldPath

ON = {"GenericWorkload": True, "WorkloadWithJob": True}
OFF: dict = {}
SCHEDULING = FieldPath("spec").child("scheduling")


def _job_doc(scheduling=None, parallelism=4, **spec) -> dict:
    doc = {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "myjob", "namespace": "default"},
           "spec": {"parallelism": parallelism, **spec,
                    "template": {"spec": {"restartPolicy": "Never", "containers": [{"name": "c", "image": "i"}]}}}}
    if scheduling is not None:
        doc["spec"]["scheduling"] = scheduling
    return doc


def _create(doc: dict, gates: dict):
    (obj,) = load_objects([copy.deepcopy(doc)], validate=False, feature_gates=gates)
    obj = prepare_for_create(obj, gates)
    return [str(e) for e in validate(obj, gates)], obj


def _gang(min_count=None) -> dict:
    return {"schedulingPolicy": {"gang": {} if min_count is None else {"minCount": min_count}}}


# -- decoding and the create strategy -------------------------------------------------------------
def test_decoded_with_every_block():
    doc = _job_doc({"schedulingPolicy": {"gang": {"minCount": 3}},
                    "schedulingConstraints": {"topology": [{"key": "topology.kubernetes.io/zone"}]},
                    "disruptionMode": {"all": {}},
                    "resourceClaims": [{"name": "gpu", "resourceClaimName": "my-claim"}]})
    errors, job = _create(doc, ON)
    assert errors == []
    assert job.scheduling == JobSchedulingConfiguration(
        scheduling_policy=JobSchedulingPolicy(gang=JobGangSchedulingPolicy(3)),
        scheduling_constraints=PodGroupSchedulingConstraints((TopologyConstraint("topology.kubernetes.io/zone"),)),
        disruption_mode=DisruptionMode(all=True),
        resource_claims=(PodGroupResourceClaim("gpu", resource_claim_name="my-claim"),))
    (strict,) = load_objects([doc], strict=True, feature_gates=ON)  # a known field to the strict decoder
    assert strict.scheduling == job.scheduling


def test_decoding_errors_name_the_field():
    with pytest.raises(ManifestError, match=r"json: cannot unmarshal string into Go struct field "
                                            r"WorkloadPodGroupGangSchedulingPolicy\.spec\.scheduling\.schedulingPolicy"
                                            r"\.gang\.minCount of type int32"):
        load_objects([_job_doc({"schedulingPolicy": {"gang": {"minCount": "x"}}})], feature_gates=ON)
    with pytest.raises(ManifestError, match=r'unknown field "spec\.scheduling\.policy"'):
        load_objects([_job_doc({"policy": {}})], strict=True, feature_gates=ON)


# util_test.go TestDropDisabledFieldsScheduling (create: no old spec)
@pytest.mark.parametrize("enabled, scheduling, kept", [
    (True, _gang(4), True),
    (True, None, False),
    (False, _gang(4), False),
    (False, None, False),
])
def test_drop_disabled_fields_on_create(enabled, scheduling, kept):
    gates = ON if enabled else OFF
    errors, job = _create(_job_doc(scheduling), gates)
    assert errors == []
    assert (job.scheduling is not None) is kept
    assert ("scheduling" in job.manifest["spec"]) is kept


def test_cron_job_template_scheduling_dropped_without_the_gate():
    doc = {"apiVersion": "batch/v1", "kind": "CronJob", "metadata": {"name": "cj"},
           "spec": {"schedule": "* * * * *", "jobTemplate": {"spec": _job_doc(_gang(2))["spec"]}}}
    errors, cj = _create(doc, OFF)
    assert errors == [] and "scheduling" not in cj.job_template["spec"]
    assert "scheduling" not in cj.manifest["spec"]["jobTemplate"]["spec"]
    errors, cj = _create(doc, ON)
    assert errors == [] and cj.job_template["spec"]["scheduling"] == _gang(2)


# -- validation.go: the hand-written rules ----------------------------------------------------------
def _config(policy=None, mode=None) -> JobSchedulingConfiguration:
    return JobSchedulingConfiguration(scheduling_policy=policy, disruption_mode=mode)


BASIC = JobSchedulingPolicy(basic=True)


def _gang_policy(min_count):
    return JobSchedulingPolicy(gang=JobGangSchedulingPolicy(min_count))


MIN_COUNT_PATH = "spec.scheduling.schedulingPolicy.gang.minCount"
MODE_PATH = "spec.scheduling.disruptionMode"

# TestValidateJobSchedulingGangMinCount: name -> (parallelism, scheduling, the path of the one error)
GANG_MIN_COUNT = {
    "no scheduling": (4, None, None),
    "basic policy is not subject to the minCount rule": (1, _config(BASIC), None),
    "gang minCount below parallelism": (4, _config(_gang_policy(2)), None),
    "gang minCount equal to parallelism": (4, _config(_gang_policy(4)), None),
    "gang minCount above parallelism is rejected": (2, _config(_gang_policy(4)), MIN_COUNT_PATH),
    "gang minCount unset (zero) is allowed": (2, _config(_gang_policy(0)), None),
    "gang minCount unset (nil) defaults to parallelism and is accepted": (4, _config(_gang_policy(None)), None),
    "nil parallelism defaults to 1, minCount 1 is allowed": (None, _config(_gang_policy(1)), None),
    "nil parallelism defaults to 1, minCount 2 is rejected": (None, _config(_gang_policy(2)), MIN_COUNT_PATH),
    "basic policy with single disruption is allowed": (1, _config(BASIC, DisruptionMode(single=True)), None),
    "gang policy with all disruption is allowed": (4, _config(_gang_policy(2), DisruptionMode(all=True)), None),
    "basic policy with all disruption is rejected": (1, _config(BASIC, DisruptionMode(all=True)), MODE_PATH),
}


@pytest.mark.parametrize("name", GANG_MIN_COUNT)
def test_validate_job_scheduling_gang_min_count(name):
    parallelism, scheduling, path = GANG_MIN_COUNT[name]
    errors = job_scheduling_errors(scheduling, parallelism, SCHEDULING)
    assert [e.path for e in errors] == ([path] if path else [])


def test_hand_written_messages():
    errors, _ = _create(_job_doc(_gang(4), parallelism=2), ON)
    assert errors == ['spec.scheduling.schedulingPolicy.gang.minCount: Invalid value: 4: must not be greater than '
                      'parallelism (2)']
    errors, _ = _create(_job_doc({"schedulingPolicy": {"basic": {}}, "disruptionMode": {"all": {}}}, parallelism=1),
                        ON)
    assert errors == ['spec.scheduling.disruptionMode: Invalid value: "": the disruptionMode `all` is not supported '
                      'with the Basic scheduling policy']
    # no policy resolves to the default Basic policy: `all` is refused as well
    errors, _ = _create(_job_doc({"disruptionMode": {"all": {}}}, parallelism=1), ON)
    assert errors == ['spec.scheduling.disruptionMode: Invalid value: "": the disruptionMode `all` is not supported '
                      'with the Basic scheduling policy']


# TestValidateCronJobCreateGangMinCount: name -> (parallelism, minCount, rejected)
CRON_GANG_MIN_COUNT = {
    "gang minCount below parallelism": (4, 2, False),
    "gang minCount above parallelism is rejected": (2, 4, True),
    "nil parallelism defaults to 1, minCount 2 is rejected": (None, 2, True),
}


@pytest.mark.parametrize("name", CRON_GANG_MIN_COUNT)
def test_validate_cron_job_create_gang_min_count(name):
    parallelism, min_count, rejected = CRON_GANG_MIN_COUNT[name]
    job_spec = _job_doc(_gang(min_count))["spec"]
    if parallelism is None:
        del job_spec["parallelism"]
    else:
        job_spec["parallelism"] = parallelism
    doc = {"apiVersion": "batch/v1", "kind": "CronJob", "metadata": {"name": "mycronjob"},
           "spec": {"schedule": "* * * * ?", "jobTemplate": {"spec": job_spec}}}
    errors, _ = _create(doc, ON)
    limit = 1 if parallelism is None else parallelism
    assert errors == ([f"spec.jobTemplate.spec.scheduling.schedulingPolicy.gang.minCount: Invalid value: "
                       f"{min_count}: must not be greater than parallelism ({limit})"] if rejected else [])


# -- the declarative rules (declarative_validation_test.go TestDeclarativeValidate, create) --------
# name -> (scheduling, gates, expected "path: type" list)
DECLARATIVE = {
    "valid with basic scheduling policy": ({"schedulingPolicy": {"basic": {}}}, ON, []),
    "valid with gang scheduling policy": (_gang(4), ON, []),
    "scheduling policy with neither basic nor gang": ({"schedulingPolicy": {}}, ON, [
        "spec.scheduling.schedulingPolicy: Invalid value: \"\": must specify one of: `basic`, `gang`"]),
    "scheduling policy with both basic and gang": ({"schedulingPolicy": {"basic": {}, "gang": {"minCount": 1}}}, ON, [
        "spec.scheduling.schedulingPolicy: Invalid value: \"{basic, gang}\": must specify exactly one of: "
        "`basic`, `gang`"]),
    "gang minCount zero": (_gang(0), ON, [
        "spec.scheduling.schedulingPolicy.gang.minCount: Invalid value: 0: must be greater than or equal to 1"]),
    "gang minCount negative": (_gang(-1), ON, [
        "spec.scheduling.schedulingPolicy.gang.minCount: Invalid value: -1: must be greater than or equal to 1"]),
    "valid with topology constraints": ({**_gang(4), "schedulingConstraints": {
        "topology": [{"key": "topology.kubernetes.io/zone"}]}}, ON, []),
    "topology constraints with too many entries": ({**_gang(4), "schedulingConstraints": {
        "topology": [{"key": "foo"}, {"key": "bar"}]}}, ON, [
        "spec.scheduling.schedulingConstraints.topology: Too many: 2: must have at most 1 item"]),
    "topology constraint with empty key": ({**_gang(4), "schedulingConstraints": {"topology": [{"key": ""}]}}, ON, [
        "spec.scheduling.schedulingConstraints.topology[0].key: Required value"]),
    "valid with disruption mode": ({**_gang(4), "disruptionMode": {"single": {}}}, ON, []),
    "disruption mode with neither single nor all": ({**_gang(4), "disruptionMode": {}}, ON, [
        "spec.scheduling.disruptionMode: Invalid value: \"\": must specify one of: `single`, `all`"]),
    "resource claims exceeding max items": ({**_gang(4), "resourceClaims": [
        {"name": f"c{i}", "resourceClaimName": f"rc{i}"} for i in range(1, 6)]}, ON, [
        "spec.scheduling.resourceClaims: Too many: 5: must have at most 4 items"]),
    "duplicate resource claim names": ({**_gang(4), "resourceClaims": [
        {"name": "claim", "resourceClaimName": "rc-1"}, {"name": "claim", "resourceClaimName": "rc-2"}]}, ON, [
        'spec.scheduling.resourceClaims[1]: Duplicate value: {"name":"claim","resourceClaimName":"rc-2"}']),
    "resource claim with neither name nor template": ({**_gang(4), "resourceClaims": [{"name": "claim"}]}, ON, [
        "spec.scheduling.resourceClaims[0]: Invalid value: \"\": must specify one of: `resourceClaimName`, "
        "`resourceClaimTemplateName`"]),
    "resource claim with an invalid name": ({**_gang(4), "resourceClaims": [
        {"name": "../my-claim", "resourceClaimName": "rc"}]}, ON, ["spec.scheduling.resourceClaims[0].name: Invalid"]),
    "resource claim with an empty name": ({**_gang(4), "resourceClaims": [{"name": "", "resourceClaimName": "rc"}]},
                                          ON, ["spec.scheduling.resourceClaims[0].name: Required value"]),
    "resource claim with an invalid claim name": ({**_gang(4), "resourceClaims": [
        {"name": "claim", "resourceClaimName": ".foo_bar"}]}, ON,
        ["spec.scheduling.resourceClaims[0].resourceClaimName: Invalid"]),
    "resource claim with an invalid template name": ({**_gang(4), "resourceClaims": [
        {"name": "claim", "resourceClaimTemplateName": ".foo_bar"}]}, ON,
        ["spec.scheduling.resourceClaims[0].resourceClaimTemplateName: Invalid"]),
}


@pytest.mark.parametrize("name", DECLARATIVE)
def test_declarative_validate(name):
    scheduling, gates, expected = DECLARATIVE[name]
    errors, _ = _create(_job_doc(scheduling), gates)
    assert len(errors) == len(expected), errors
    for got, want in zip(errors, expected):
        assert got.startswith(want), (got, want)


def test_topology_constraint_with_an_invalid_key():
    errors, _ = _create(_job_doc({**_gang(4), "schedulingConstraints": {
        "topology": [{"key": "a" * 254 + "/foo"}]}}), ON)
    assert len(errors) == 1 and errors[0].startswith("spec.scheduling.schedulingConstraints.topology[0].key: "
                                                     "Invalid value: ")


def test_scheduling_forbidden_when_the_gate_is_off():
    """Built in code with the field set (the create strategy drops it from manifests first)."""
    assert [str(e) for e in job_scheduling_declarative_errors(_config(BASIC), SCHEDULING, OFF)] == [
        "spec.scheduling: Forbidden"]


# -- pkg/api/job/util.go: WorkloadItemForJob compiled ---------------------------------------------
# TestWorkloadItemForJobMinCountDefaulting: name -> (parallelism, the Job's gang minCount, the template's)
MIN_COUNT_DEFAULTING = {
    "gang unset minCount defaults to parallelism": (5, None, 5),
    "gang unset minCount with nil parallelism clamps to 1": (None, None, 1),
    "gang unset minCount with zero parallelism clamps to 1": (0, None, 1),
    "gang minCount already set is preserved": (5, 2, 2),
}


@pytest.mark.parametrize("name", MIN_COUNT_DEFAULTING)
def test_workload_item_for_job_min_count_defaulting(name):
    parallelism, min_count, want = MIN_COUNT_DEFAULTING[name]
    template = pod_group_template_for_job("job", "", parallelism, _config(_gang_policy(min_count)))
    assert template.scheduling_policy == PodGroupSchedulingPolicy(gang=GangSchedulingPolicy(want))


def test_basic_policy_is_not_defaulted():
    """The callback leaves a basic policy alone (TestWorkloadItemForJobMinCountDefaulting's last check)."""
    assert pod_group_template_for_job("job", "", 5, _config(BASIC)).scheduling_policy == PodGroupSchedulingPolicy(
        basic=True)


@pytest.mark.parametrize("name, priority_class_name, parallelism", [
    ("job", "high", 4),   # name and priority class carried onto the item
    ("job", "", None),    # empty priority class and nil parallelism
])
def test_workload_item_for_job(name, priority_class_name, parallelism):
    """TestWorkloadItemForJob, compiled: the name, the default Basic policy, the priority class name."""
    template = pod_group_template_for_job(name, priority_class_name, parallelism, None)
    assert (template.name, template.scheduling_policy, template.priority_class_name, template.disruption_mode) == (
        name, PodGroupSchedulingPolicy(basic=True), priority_class_name, None)


def test_the_blocks_pass_through():
    # an empty policy maps to none: the default Basic policy stays
    assert pod_group_template_for_job("t", "", 3, _config(JobSchedulingPolicy())).scheduling_policy.basic
    full = pod_group_template_for_job("t", "", 4, JobSchedulingConfiguration(
        scheduling_policy=_gang_policy(4),
        scheduling_constraints=PodGroupSchedulingConstraints((TopologyConstraint("topology.kubernetes.io/zone"),)),
        disruption_mode=DisruptionMode(all=True),
        resource_claims=(PodGroupResourceClaim("gpu", resource_claim_name="my-claim"),)))
    assert full.scheduling_constraints.topology == (TopologyConstraint("topology.kubernetes.io/zone"),)
    assert full.disruption_mode == DisruptionMode(all=True)
    assert [c.name for c in full.resource_claims] == ["gpu"]
    # constraints without a topology key compile to none
    assert pod_group_template_for_job("t", "", 4, JobSchedulingConfiguration(
        scheduling_constraints=PodGroupSchedulingConstraints())).scheduling_constraints is None
