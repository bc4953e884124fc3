"""scheduling.k8s.io/v1beta1 Workload and PodGroup, and a pod's spec.schedulingGroup, as the API
server creates them at v1.37.2 (GenericWorkload and the gates around it).

Transcribed: ``pkg/registry/scheduling/podgroup/strategy_test.go`` and
``pkg/registry/scheduling/workload/strategy_test.go`` (``TestStrategyCreate``: PrepareForCreate,
Validate, ValidateDeclaratively; the composite-template cases are in
test_api_composite_pod_group.py), ``pkg/apis/scheduling/validation/validation_test.go``
(``TestValidatePodGroup``, ``TestValidateWorkload``: the metadata cases; the tree cases are in
test_api_composite_pod_group.py), ``pkg/apis/core/validation/validation_test.go``
(``TestValidatePodSchedulingGroup``) and ``pkg/api/pod/util_test.go``
(``TestDisabledSchedulingGroup``, create half).
"""
from __future__ import annotations

import copy

import pytest

from fastsched.api import load_objects
from fastsched.api.objects import Pod
from fastsched.api.scheduling import (DISRUPTION_MODE_SINGLE, DisruptionMode, PodGroup, Workload,
                                      prepare_pod_group_for_create, validate_pod_group, validate_workload)
from fastsched.api.strategy import prepare_for_create, validate
from fastsched.api.validation import ValidationError

ON = {"GenericWorkload": True}

SUBDOMAIN = ("a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and "
             "must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is "
             "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')")

# podgroup/strategy_test.go's messages
MIN_COUNT_ERROR = "must be greater than or equal to 1"
ONE_OF_ERROR = "must specify one of: `basic`, `gang`"
MULTIPLE_FIELDS_SET_ERROR = "must specify exactly one of: `basic`, `gang`"
TOO_MANY_ITEMS_ERROR = "must have at most 1 item"
MAXIMUM_ERROR = "must be less than or equal to 1000000000"
SUBDOMAIN_NAME_ERROR = "lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters"
SUPPORTED_POLICIES_ERROR = 'supported values: "Never", "PreemptLowerPriority"'
REQUIRED_ERROR = "Required value"


def _pod_group_doc(**spec_changes) -> dict:
    doc = {"apiVersion": "scheduling.k8s.io/v1beta1", "kind": "PodGroup",
           "metadata": {"name": "foo", "namespace": "default"},
           "spec": {"workloadRef": {"workloadName": "w", "templateName": "t"},
                    "schedulingPolicy": {"gang": {"minCount": 5}},
                    "disruptionMode": {"single": {}}}}
    doc["spec"].update(spec_changes)
    return doc


def _constraints(*keys: str) -> dict:
    return {"topology": [{"key": k} for k in keys]}


def _create(doc: dict, gates: dict) -> list[str]:
    """PrepareForCreate, Validate, ValidateDeclaratively: the error texts (loaded without
    validation, then validated with the gates, as the strategy test calls them)."""
    (obj,) = load_objects([copy.deepcopy(doc)], validate=False, feature_gates=gates)
    obj = prepare_for_create(obj, gates)
    return [str(e) for e in validate(obj, gates)], obj


# podgroup/strategy_test.go TestStrategyCreate: (doc, TAS, PodGroupPreemptionPolicy, expected error, expected spec changes)
POD_GROUP_CREATE = {
    "simple": (_pod_group_doc(), False, False, "", {}),
    "negative min count": (_pod_group_doc(schedulingPolicy={"gang": {"minCount": -1}}), False, False,
                           MIN_COUNT_ERROR, None),
    "two scheduling policies": (_pod_group_doc(schedulingPolicy={"gang": {"minCount": 5}, "basic": {}}), False,
                                False, MULTIPLE_FIELDS_SET_ERROR, None),
    "no scheduling policy is set": (_pod_group_doc(schedulingPolicy={}), False, False, ONE_OF_ERROR, None),
    "drop status on creation": (
        {**_pod_group_doc(), "status": {"conditions": [{
            "type": "PodGroupInitiallyScheduled", "status": "False", "reason": "Unschedulable",
            "message": "Test status condition message", "lastTransitionTime": "2026-01-01T00:00:00Z"}]}},
        False, False, "", {}),
    "multiple topology constraints, topology aware scheduling enabled": (
        _pod_group_doc(schedulingConstraints=_constraints("foo", "bar")), True, False, TOO_MANY_ITEMS_ERROR, None),
    "multiple topology constraints, topology aware scheduling disabled": (
        _pod_group_doc(schedulingConstraints=_constraints("foo", "bar")), False, False, "", {}),
    "invalid topology key, topology aware scheduling enabled": (
        _pod_group_doc(schedulingConstraints=_constraints("foo-")), True, False, 'Invalid value: "foo-"', None),
    "invalid topology key, topology aware scheduling disabled": (
        _pod_group_doc(schedulingConstraints=_constraints("foo-")), False, False, "", {}),
    "with TAS feature gate disabled, drop scheduling constraints on creation": (
        _pod_group_doc(schedulingConstraints=_constraints("foo-")), False, False, "", {}),
    "disruption mode all": (_pod_group_doc(disruptionMode={"all": {}}), False, False, "",
                            {"disruption_mode": DisruptionMode(all=True)}),
    "both disruption modes set": (_pod_group_doc(disruptionMode={"single": {}, "all": {}}), False, False,
                                  "must specify exactly one of", None),
    "invalid priorityClassName": (_pod_group_doc(priorityClassName="invalid/priority/class/name"), False, False,
                                  SUBDOMAIN_NAME_ERROR, None),
    "priorityClassName set": (_pod_group_doc(priorityClassName="high-priority"), False, False, "",
                              {"priority_class_name": "high-priority"}),
    "priority set": (_pod_group_doc(priority=1000), False, False, "", {"priority": 1000}),
    "too high priority": (_pod_group_doc(priority=1_000_000_001), False, False, MAXIMUM_ERROR, None),
    "podgroup preemptionPolicy disabled - drop preemptionPolicy": (
        _pod_group_doc(preemptionPolicy="Never"), False, False, "", {}),
    "podgroup preemptionPolicy disabled - drop invalid preemptionPolicy": (
        _pod_group_doc(preemptionPolicy="Invalid"), False, False, "", {}),
    "podgroup preemptionPolicy enabled - preserve preemptionPolicy (Never)": (
        _pod_group_doc(preemptionPolicy="Never"), False, True, "", {"preemption_policy": "Never"}),
    "podgroup preemptionPolicy enabled - preserve preemptionPolicy (PreemptLowerPriority)": (
        _pod_group_doc(preemptionPolicy="PreemptLowerPriority"), False, True, "",
        {"preemption_policy": "PreemptLowerPriority"}),
    "podgroup preemptionPolicy enabled - invalid preemptionPolicy": (
        _pod_group_doc(preemptionPolicy="Invalid"), False, True, SUPPORTED_POLICIES_ERROR, None),
}


@pytest.mark.parametrize("name", list(POD_GROUP_CREATE))
def test_pod_group_strategy_create(name):
    doc, tas, policy, expected_error, expected_changes = POD_GROUP_CREATE[name]
    gates = {**ON, "TopologyAwareWorkloadScheduling": tas, "PodGroupPreemptionPolicy": policy}
    errors, obj = _create(doc, gates)
    if expected_error:
        assert len(errors) == 1 and expected_error in errors[0], errors
        return
    assert errors == []
    (simple,) = load_objects([_pod_group_doc()], validate=False)
    want = simple.replace(**expected_changes)
    if policy and "preemption_policy" not in expected_changes:  # SetDefaults_PodGroup
        want = want.replace(preemption_policy="PreemptLowerPriority")
    assert isinstance(obj, PodGroup)
    assert obj == want


def test_pod_group_defaults():
    """``SetObjectDefaults_PodGroup``: disruptionMode {single: {}}; ``SetDefaults_PodGroup``:
    preemptionPolicy PreemptLowerPriority only with PodGroupPreemptionPolicy."""
    doc = _pod_group_doc()
    del doc["spec"]["disruptionMode"]
    (pg,) = load_objects([doc])
    assert pg.disruption_mode == DISRUPTION_MODE_SINGLE and pg.preemption_policy is None
    assert prepare_pod_group_for_create(pg, {"PodGroupPreemptionPolicy": True}).preemption_policy == \
        "PreemptLowerPriority"
    assert pg.min_count == 5 and pg.is_gang
    basic = prepare_pod_group_for_create(pg.replace(scheduling_policy=pg.scheduling_policy.__class__(basic=True)))
    assert basic.min_count == 1 and not basic.is_gang


def test_pod_group_dropped_resource_claims():
    """podgroup TestDropPodGroupTemplateResourceClaims (create: no old object): claims kept only
    with DRAWorkloadResourceClaims."""
    doc = _pod_group_doc(resourceClaims=[{"name": "my-claim", "resourceClaimName": "resource-claim"}])
    errors, obj = _create(doc, ON)
    assert errors == [] and obj.resource_claims == ()
    errors, obj = _create(doc, {**ON, "DRAWorkloadResourceClaims": True})
    assert errors == [] and [c.name for c in obj.resource_claims] == ["my-claim"]


def test_pod_group_resource_claim_rules():
    """Validate_PodGroupResourceClaim and the list rules (DRAWorkloadResourceClaims on)."""
    gates = {**ON, "DRAWorkloadResourceClaims": True}
    claims = [{"name": "a", "resourceClaimName": "x", "resourceClaimTemplateName": "y"},
              {"name": "a"}, {"name": "B_", "resourceClaimName": "ok"}]
    errors, _ = _create(_pod_group_doc(resourceClaims=claims), gates)
    assert errors == [
        'spec.resourceClaims[1]: Duplicate value: {"name":"a"}',
        'spec.resourceClaims[0]: Invalid value: "{resourceClaimName, resourceClaimTemplateName}": must specify '
        'exactly one of: `resourceClaimName`, `resourceClaimTemplateName`',
        'spec.resourceClaims[1]: Invalid value: "": must specify one of: `resourceClaimName`, '
        '`resourceClaimTemplateName`',
        "spec.resourceClaims[2].name: Invalid value: \"B_\": a lowercase RFC 1123 label must consist of lower case "
        "alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  "
        "or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')",
    ]
    errors, _ = _create(_pod_group_doc(resourceClaims=[{"name": f"c{i}", "resourceClaimName": "x"}
                                                       for i in range(5)]), gates)
    assert errors == ["spec.resourceClaims: Too many: 5: must have at most 4 items"]


def test_pod_group_field_paths_and_messages():
    """Whole messages of the declarative rules, in Validate_PodGroupSpec's field order."""
    doc = _pod_group_doc(workloadRef={"workloadName": "", "templateName": "T.x"},
                         schedulingPolicy={"gang": {"minCount": 0}}, disruptionMode={},
                         priority=2_000_000_000)
    errors, _ = _create(doc, ON)
    assert errors == [
        "spec.workloadRef.workloadName: Required value",
        "spec.workloadRef.templateName: Invalid value: \"T.x\": a lowercase RFC 1123 label must consist of lower "
        "case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. "
        "'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')",
        "spec.schedulingPolicy.gang.minCount: Required value",
        'spec.disruptionMode: Invalid value: "": must specify one of: `single`, `all`',
        "spec.priority: Invalid value: 2000000000: must be less than or equal to 1000000000",
    ]


def test_pod_group_gated_fields_set_in_code_are_forbidden():
    """An object built in code (no PrepareForCreate) with a gated field: IfOption(gate, false,
    ForbiddenPointer)."""
    kept = {"CompositePodGroup": True, "PodGroupPreemptionPolicy": True}
    (pg,) = load_objects([_pod_group_doc(preemptionPolicy="Never", parentCompositePodGroupName="p")],
                         validate=False, feature_gates=kept)
    assert [str(e) for e in validate_pod_group(pg, ON)] == [
        "spec.parentCompositePodGroupName: Forbidden",
        "spec.preemptionPolicy: Forbidden",
    ]
    assert validate_pod_group(prepare_pod_group_for_create(pg, ON), ON) == []


# test/declarative_validation/scheduling/podgroup: the preemptionPolicy rows of the create test (the
# object validated as given, no PrepareForCreate): (policy, PodGroupPreemptionPolicy, errors)
DECLARATIVE_POLICY = {
    "preemption policy set, pod group preemptionPolicy disabled": (
        "Never", False, ["spec.preemptionPolicy: Forbidden"]),
    "valid preemption policy (Never), pod group preemptionPolicy enabled": ("Never", True, []),
    "invalid preemption policy, pod group preemptionPolicy enabled": (
        "Invalid", True, ['spec.preemptionPolicy: Unsupported value: "Invalid": supported values: "Never", '
                          '"PreemptLowerPriority"']),
    "pod group without preemption policy, pod group preemptionPolicy enabled": (None, True, []),
}


@pytest.mark.parametrize("name", list(DECLARATIVE_POLICY))
def test_pod_group_declarative_preemption_policy(name):
    policy, gate, want = DECLARATIVE_POLICY[name]
    doc = _pod_group_doc() if policy is None else _pod_group_doc(preemptionPolicy=policy)
    (pg,) = load_objects([doc], validate=False, feature_gates={**ON, "PodGroupPreemptionPolicy": True})
    assert [str(e) for e in validate_pod_group(pg, {**ON, "PodGroupPreemptionPolicy": gate})] == want


# v1beta1/defaults_test.go TestSetDefaultsPodGroup, through load and PrepareForCreate (fastsched applies
# SetDefaults_PodGroup there; with the gate off the create strategy then drops a written policy, which
# the defaults test, calling the defaulter alone, keeps): (policy, gate, after defaulting)
DEFAULTS_POLICY = {
    "feature gate disabled, policy is nil": (None, False, None),
    "feature gate enabled, policy is nil": (None, True, "PreemptLowerPriority"),
    "feature gate enabled, policy is set": ("Never", True, "Never"),
}


@pytest.mark.parametrize("name", list(DEFAULTS_POLICY))
def test_set_defaults_pod_group(name):
    policy, gate, want = DEFAULTS_POLICY[name]
    gates = {**ON, "PodGroupPreemptionPolicy": gate}
    doc = _pod_group_doc() if policy is None else _pod_group_doc(preemptionPolicy=policy)
    (pg,) = load_objects([doc], feature_gates=gates)
    assert pg.preemption_policy == want


def test_pod_group_parent_needs_workload_ref():
    """ValidatePodGroup: parentCompositePodGroupName needs workloadRef (hand-written, kept: its
    declarative twin is alpha)."""
    doc = _pod_group_doc(parentCompositePodGroupName="p")
    del doc["spec"]["workloadRef"]
    (pg,) = load_objects([doc], validate=False, feature_gates={"CompositePodGroup": True})
    assert [str(e) for e in validate_pod_group(pg, ON)][0] == \
        "spec.workloadRef: Required value: must be set when parentCompositePodGroupName is set"


# validation_test.go TestValidatePodGroup / TestValidateWorkload: the metadata failures
METADATA_FAILURES = {
    "no name": ({"name": ""}, "metadata.name: Required value: name or generateName is required"),
    "invalid name": ({"name": ".podGroup"}, f'metadata.name: Invalid value: ".podGroup": {SUBDOMAIN}'),
    "too long name": ({"name": "w" * 254}, "metadata.name: Invalid value: \"" + "w" * 254
                      + "\": must be no more than 253 characters"),
    "no namespace": ({"namespace": ""}, None),
    "invalid namespace": ({"namespace": ".ns"}, "metadata.namespace: Invalid value: \".ns\""),
    "too long namespace": ({"namespace": "n" * 64}, "metadata.namespace: Invalid value: \"" + "n" * 64 + "\""),
}


@pytest.mark.parametrize("kind", ["PodGroup", "Workload"])
@pytest.mark.parametrize("name", list(METADATA_FAILURES))
def test_metadata_failures(kind, name):
    change, expected = METADATA_FAILURES[name]
    doc = _pod_group_doc() if kind == "PodGroup" else _workload_doc()
    obj = load_objects([doc], validate=False)[0].replace(**change)
    errors = [str(e) for e in validate(obj, ON)]
    if name == "no namespace":
        # the loader defaults a missing namespace; set to "" in code, it is required
        assert errors == ["metadata.namespace: Required value"]
        return
    assert len(errors) >= 1 and errors[0].startswith(expected), errors


def _workload_doc(**template_changes) -> dict:
    template = {"name": "bar", "schedulingPolicy": {"gang": {"minCount": 5}}}
    template.update(template_changes)
    return {"apiVersion": "scheduling.k8s.io/v1beta1", "kind": "Workload",
            "metadata": {"name": "foo", "namespace": "default"}, "spec": {"podGroupTemplates": [template]}}


# workload/strategy_test.go TestStrategyCreate (without the composite-template cases)
WORKLOAD_CREATE = {
    "simple": (_workload_doc(), False, False, "", None),
    "failed validation": (_workload_doc(schedulingPolicy={"gang": {"minCount": -1}}), False, False,
                          MIN_COUNT_ERROR, None),
    "drops field with SchedulingConstraints set and TAS disabled": (
        _workload_doc(schedulingConstraints=_constraints("foo")), False, False, "", "no-constraints"),
    "valid with SchedulingConstraints set and TAS enabled": (
        _workload_doc(schedulingConstraints=_constraints("foo")), True, False, "", "constraints"),
    "invalid with multiple topology constraints": (
        _workload_doc(schedulingConstraints=_constraints("foo", "bar")), True, False, TOO_MANY_ITEMS_ERROR, None),
    "invalid with invalid topology key": (
        _workload_doc(schedulingConstraints=_constraints("")), True, False, REQUIRED_ERROR, None),
    "disruption mode single": (_workload_doc(disruptionMode={"single": {}}), False, False, "", None),
    "disruption mode all": (_workload_doc(disruptionMode={"all": {}}), False, False, "", None),
    "both disruption modes set": (_workload_doc(disruptionMode={"single": {}, "all": {}}), False, False,
                                  "must specify exactly one of", None),
    "priorityClassName set": (_workload_doc(priorityClassName="high-priority"), False, False, "", None),
    "invalid priorityClassName": (_workload_doc(priorityClassName="invalid/priority/class/name"), False, False,
                                  SUBDOMAIN_NAME_ERROR, None),
    "drop preemptionPolicy with PodGroupPreemptionPolicy disabled": (
        _workload_doc(preemptionPolicy="Never"), False, False, "", "no-policy"),
    "drop invalid preemptionPolicy with PodGroupPreemptionPolicy disabled": (
        _workload_doc(preemptionPolicy="Invalid"), False, False, "", "no-policy"),
    "preemptionPolicy set (Never) with PodGroupPreemptionPolicy enabled": (
        _workload_doc(preemptionPolicy="Never"), False, True, "", "policy"),
    "preemptionPolicy set (PreemptLowerPriority) with PodGroupPreemptionPolicy enabled": (
        _workload_doc(preemptionPolicy="PreemptLowerPriority"), False, True, "", "policy"),
    "invalid preemptionPolicy with PodGroupPreemptionPolicy enabled": (
        _workload_doc(preemptionPolicy="Invalid"), False, True, SUPPORTED_POLICIES_ERROR, None),
}


@pytest.mark.parametrize("name", list(WORKLOAD_CREATE))
def test_workload_strategy_create(name):
    doc, tas, policy, expected_error, check = WORKLOAD_CREATE[name]
    gates = {**ON, "TopologyAwareWorkloadScheduling": tas, "PodGroupPreemptionPolicy": policy}
    errors, obj = _create(doc, gates)
    if expected_error:
        assert len(errors) == 1 and expected_error in errors[0], errors
        return
    assert errors == []
    assert isinstance(obj, Workload)
    (template,) = obj.pod_group_templates
    given = doc["spec"]["podGroupTemplates"][0]
    if check == "no-constraints":
        assert template.scheduling_constraints is None
    elif check == "constraints":
        assert [t.key for t in template.scheduling_constraints.topology] == ["foo"]
    elif check == "no-policy":
        assert template.preemption_policy is None
    elif check == "policy":
        assert template.preemption_policy == given["preemptionPolicy"]
    assert template.name == "bar" and template.scheduling_policy.gang.min_count == 5


def test_workload_rules():
    """Validate_WorkloadSpec: the union, controllerRef, max 8 templates, unique names (the whole
    item rendered), and ValidateWorkloadSpec's one priority configuration (hand-written, first)."""
    doc = _workload_doc(priority=1)
    doc["spec"]["podGroupTemplates"].append({"name": "bar", "schedulingPolicy": {"basic": {}}})
    doc["spec"]["controllerRef"] = {"kind": "a/b", "name": ""}
    errors, _ = _create(doc, ON)
    assert errors == [
        "spec: Invalid value: null: detected multiple priority configurations",
        "spec.controllerRef.kind: Invalid value: \"a/b\": may not contain '/'",
        "spec.controllerRef.name: Required value",
        'spec.podGroupTemplates[1]: Duplicate value: {"name":"bar","schedulingPolicy":{"basic":{}},'
        '"schedulingConstraints":null}',
    ]
    empty = _workload_doc()
    empty["spec"]["podGroupTemplates"] = []
    errors, _ = _create(empty, ON)
    assert errors == ['spec: Invalid value: "": must specify one of: `podGroupTemplates`, '
                      '`compositePodGroupTemplates`']
    many = _workload_doc()
    many["spec"]["podGroupTemplates"] = [{"name": f"t{i}", "schedulingPolicy": {"basic": {}}} for i in range(9)]
    errors, _ = _create(many, ON)
    assert errors == ["spec.podGroupTemplates: Too many: 9: must have at most 8 items"]


def test_workload_composite_templates_dropped_without_the_gate():
    """workload TestDropCompositePodGroupTemplates (create): dropped with CompositePodGroup off;
    then the union wants podGroupTemplates."""
    doc = _workload_doc()
    doc["spec"] = {"compositePodGroupTemplates": [{"name": "c", "schedulingPolicy": {"basic": {}},
                                                   "podGroupTemplates": [{"name": "x",
                                                                          "schedulingPolicy": {"basic": {}}}]}]}
    errors, obj = _create(doc, ON)
    assert obj.composite_pod_group_templates == ()
    assert errors == ['spec: Invalid value: "": must specify one of: `podGroupTemplates`, '
                      '`compositePodGroupTemplates`']


# core validation_test.go TestValidatePodSchedulingGroup
def _pod_doc(scheduling_group) -> dict:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "ns"},
            "spec": {"containers": [{"name": "c", "image": "i"}], "schedulingGroup": scheduling_group}}


def test_pod_scheduling_group_valid():
    (pod,) = load_objects([_pod_doc({"podGroupName": "group"})], feature_gates=ON)
    assert pod.pod_group_name == "group"


@pytest.mark.parametrize("group,expected", [
    ({}, "spec.schedulingGroup.podGroupName: Invalid value: null: must specify one of: `podGroupName`"),
    ({"podGroupName": ""}, 'spec.schedulingGroup.podGroupName: Invalid value: ""'),
    ({"podGroupName": ".podGroup"}, f'spec.schedulingGroup.podGroupName: Invalid value: ".podGroup": {SUBDOMAIN}'),
    ({"podGroupName": "w" * 254}, 'spec.schedulingGroup.podGroupName: Invalid value: "' + "w" * 254
     + '": must be no more than 253 characters'),
], ids=["nil pod group name", "empty pod group name", "incorrect pod group name", "too long pod group name"])
def test_pod_scheduling_group_invalid(group, expected):
    with pytest.raises(ValidationError) as info:
        load_objects([_pod_doc(group)], feature_gates=ON)
    assert expected in str(info.value)


def test_scheduling_group_dropped_with_the_gate_off():
    """util_test.go TestDisabledSchedulingGroup (create: no old pod): with GenericWorkload off
    (v1.37.2's default) the field is dropped before validation, so even an invalid one is accepted;
    with it on the field is kept. Pod templates of workloads lose it the same way."""
    (pod,) = load_objects([_pod_doc({"podGroupName": "group"})])
    assert pod.scheduling_group is None
    (pod,) = load_objects([_pod_doc({})])
    assert pod.scheduling_group is None
    assert prepare_for_create(Pod(name="p", scheduling_group=pod.scheduling_group), ON).scheduling_group is None
    job = {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "j"},
           "spec": {"template": {"spec": {"restartPolicy": "Never", "schedulingGroup": {},
                                          "containers": [{"name": "c", "image": "i"}]}}}}
    assert load_objects([job])[0].name == "j"
    with pytest.raises(ValidationError, match=r"spec\.template\.spec\.schedulingGroup\.podGroupName"):
        load_objects([job], feature_gates=ON)


def test_stamped_pods_follow_the_gates():
    """Pods with a schedulingGroup are not stamped from the template cache: a load with the gate
    on after one with it off keeps the field."""
    docs = [_pod_doc({"podGroupName": "g"}) for _ in range(2)]
    docs[1]["metadata"] = {"name": "q", "namespace": "ns"}
    assert [p.scheduling_group for p in load_objects(copy.deepcopy(docs))] == [None, None]
    assert [p.pod_group_name for p in load_objects(copy.deepcopy(docs), feature_gates=ON)] == ["g", "g"]


def test_unknown_field_of_the_new_kinds():
    with pytest.warns(UserWarning, match=r'unknown field "spec.schedulingPolicy.gang.minCnt"'):
        load_objects([_pod_group_doc(schedulingPolicy={"gang": {"minCount": 2, "minCnt": 3}})])


def test_validate_workload_direct():
    (wl,) = load_objects([_workload_doc()])
    assert validate_workload(wl) == []
