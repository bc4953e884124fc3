"""CompositePodGroup at the API server (v1.37.2): the v1alpha3 kind, Workload's
``compositePodGroupTemplates`` and PodGroup's ``parentCompositePodGroupName``, created with the gate
on (validated as upstream: paths and messages) and with it off (dropped, or the kind refused).

Transcribed: ``pkg/registry/scheduling/compositepodgroup/strategy_test.go`` (``TestStrategyCreate``),
``pkg/apis/scheduling/validation/validation_test.go`` (``TestValidateCompositePodGroup``, the
composite cases of ``TestValidateWorkload``), ``pkg/registry/scheduling/workload/strategy_test.go``
(``TestStrategyCreate``'s cpg cases, ``TestDropCompositePodGroupTemplates`` and
``TestDropCompositePodGroupTemplatePreemptionPolicy``: the create rows, no old object),
``pkg/registry/scheduling/podgroup/strategy_test.go`` (``TestDropPodGroupParentCompositePodGroupNameField``:
the create rows). Gates are passed as plain dicts (the API server's), as the strategy tests set them.
"""
from __future__ import annotations

import copy

import pytest

from fastsched.api import load_objects
from fastsched.api.compositepodgroup import CompositePodGroup, validate_composite_pod_group
from fastsched.api.errors import ManifestError
from fastsched.api.scheduling import (DisruptionMode, Workload, prepare_workload_for_create, validate_workload,
                                      validate_workload_spec)
from fastsched.api.strategy import prepare_for_create, validate
from fastsched.api.validation import ValidationError

ON = {"GenericWorkload": True, "TopologyAwareWorkloadScheduling": True, "CompositePodGroup": True}
OFF = {"GenericWorkload": True, "TopologyAwareWorkloadScheduling": True, "CompositePodGroup": False}

SUBDOMAIN = ("a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and "
             "must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is "
             "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')")

# compositepodgroup/strategy_test.go's messages
MIN_COUNT_ERROR = "must be greater than or equal to 1"
SUBDOMAIN_NAME_ERROR = "lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters"
MAXIMUM_ERROR = "must be less than or equal to"
ONE_OF_ERROR = "must specify one of: `basic`, `gang`"
MULTIPLE_POLICIES_ERROR = "must specify exactly one of: `basic`, `gang`"
MULTIPLE_DISRUPTION_MODES_ERROR = "must specify exactly one of: `single`, `all`"
SUPPORTED_POLICIES_ERROR = 'supported values: "Never", "PreemptLowerPriority"'


def _create(doc: dict, gates: dict):
    """PrepareForCreate, Validate, ValidateDeclaratively (loaded without validation, then
    prepared and validated with the gates, as the strategy tests call them)."""
    (obj,) = load_objects([copy.deepcopy(doc)], validate=False, feature_gates=gates)
    obj = prepare_for_create(obj, gates)
    return [str(e) for e in validate(obj, gates)], obj


def _cpg_doc(**spec_changes) -> dict:
    doc = {"apiVersion": "scheduling.k8s.io/v1alpha3", "kind": "CompositePodGroup",
           "metadata": {"name": "foo", "namespace": "default"},
           "spec": {"workloadRef": {"workloadName": "workload1", "templateName": "cpg-template1"},
                    "schedulingPolicy": {"gang": {"minGroupCount": 5}},
                    "disruptionMode": {"single": {}}}}
    doc["spec"].update(spec_changes)
    return doc


def _constraints(*keys: str) -> dict:
    return {"topology": [{"key": k} for k in keys]}


# compositepodgroup/strategy_test.go TestStrategyCreate: (doc, PodGroupPreemptionPolicy, expected error,
# expected changes to the simple object)
CPG_CREATE = {
    "simple": (_cpg_doc(), False, "", {}),
    "simple with basic scheduling policy": (_cpg_doc(schedulingPolicy={"basic": {}}), False, "", "basic"),
    "validation error - both basic and gang specified": (
        _cpg_doc(schedulingPolicy={"basic": {}, "gang": {"minGroupCount": 5}}), False, MULTIPLE_POLICIES_ERROR, None),
    "validation error - neither basic nor gang specified": (_cpg_doc(schedulingPolicy={}), False, ONE_OF_ERROR, None),
    "failed validation": (_cpg_doc(schedulingPolicy={"gang": {"minGroupCount": -1}}), False, MIN_COUNT_ERROR, None),
    "invalid priorityClassName": (_cpg_doc(priorityClassName="invalid/priority/class/name"), False,
                                  SUBDOMAIN_NAME_ERROR, None),
    "preserve priorityClassName": (_cpg_doc(priorityClassName="high-priority"), False, "",
                                   {"priority_class_name": "high-priority"}),
    "preserve priority": (_cpg_doc(priority=1000), False, "", {"priority": 1000}),
    "too high priority": (_cpg_doc(priority=1_000_000_001), False, MAXIMUM_ERROR, None),
    "multiple topology constraints": (_cpg_doc(schedulingConstraints=_constraints("foo", "bar")), False,
                                      "must have at most 1 item", None),
    "invalid topology key": (_cpg_doc(schedulingConstraints=_constraints("foo-")), False, 'Invalid value: "foo-"',
                             None),
    "disruption mode all": (_cpg_doc(disruptionMode={"all": {}}), False, "",
                            {"disruption_mode": DisruptionMode(all=True)}),
    "both disruption modes set": (_cpg_doc(disruptionMode={"single": {}, "all": {}}), False,
                                  MULTIPLE_DISRUPTION_MODES_ERROR, None),
    "podgroup preemptionPolicy disabled - drop preemptionPolicy": (_cpg_doc(preemptionPolicy="Never"), False, "",
                                                                    {}),
    "podgroup preemptionPolicy disabled - drop invalid preemptionPolicy": (
        _cpg_doc(preemptionPolicy="Invalid"), False, "", {}),
    "podgroup preemptionPolicy enabled - preserve preemptionPolicy (Never)": (
        _cpg_doc(preemptionPolicy="Never"), True, "", {"preemption_policy": "Never"}),
    "podgroup preemptionPolicy enabled - preserve preemptionPolicy (PreemptLowerPriority)": (
        _cpg_doc(preemptionPolicy="PreemptLowerPriority"), True, "", {"preemption_policy": "PreemptLowerPriority"}),
    "podgroup preemptionPolicy enabled - invalid preemptionPolicy": (
        _cpg_doc(preemptionPolicy="Invalid"), True, SUPPORTED_POLICIES_ERROR, None),
}


@pytest.mark.parametrize("name", list(CPG_CREATE))
def test_composite_pod_group_strategy_create(name):
    doc, policy, expected_error, expected = CPG_CREATE[name]
    gates = {**ON, "PodGroupPreemptionPolicy": policy}
    errors, obj = _create(doc, gates)
    if expected_error:
        assert len(errors) == 1 and expected_error in errors[0], errors
        return
    assert errors == []
    assert isinstance(obj, CompositePodGroup)
    (simple,) = load_objects([_cpg_doc()], validate=False, feature_gates=ON)
    if expected == "basic":
        assert obj.scheduling_policy.basic and obj.scheduling_policy.gang is None
        assert not obj.is_gang and obj.min_group_count == 1
        return
    assert obj == simple.replace(**expected)
    assert obj.is_gang and obj.min_group_count == 5


def test_composite_pod_group_defaults_and_status():
    """``SetObjectDefaults_CompositePodGroup``: disruptionMode {single: {}}; ``SetDefaults_CompositePodGroup``:
    preemptionPolicy PreemptLowerPriority with PodGroupPreemptionPolicy; PrepareForCreate clears the status."""
    doc = _cpg_doc()
    del doc["spec"]["disruptionMode"]
    doc["status"] = {"conditions": [{"type": "CompositePodGroupInitiallyScheduled", "status": "True",
                                     "reason": "Scheduled", "message": "", "lastTransitionTime": "2026-01-01T00:00:00Z"}]}
    (cpg,) = load_objects([copy.deepcopy(doc)], feature_gates=ON)
    assert cpg.disruption_mode == DisruptionMode(single=True)
    assert cpg.preemption_policy is None and cpg.conditions == ()
    (cpg,) = load_objects([doc], feature_gates={**ON, "PodGroupPreemptionPolicy": True})
    assert cpg.preemption_policy == "PreemptLowerPriority"


def test_composite_pod_group_spec_paths():
    """Validate_CompositePodGroupSpec: every rule at its path, in the struct's order."""
    doc = _cpg_doc(parentCompositePodGroupName="Bad_Parent", workloadRef={"workloadName": "", "templateName": "a.b"},
                   schedulingPolicy={"gang": {}}, schedulingConstraints=_constraints(""),
                   disruptionMode={}, priority=1_000_000_001)
    errors, _ = _create(doc, ON)
    assert errors == [
        f'spec.parentCompositePodGroupName: Invalid value: "Bad_Parent": {SUBDOMAIN}',
        "spec.workloadRef.workloadName: Required value",
        'spec.workloadRef.templateName: Invalid value: "a.b": must not contain dots',  # content.IsDNS1123Label
        "spec.schedulingPolicy.gang.minGroupCount: Required value",
        "spec.schedulingConstraints.topology[0].key: Required value",
        'spec.disruptionMode: Invalid value: "": must specify one of: `single`, `all`',
        "spec.priority: Invalid value: 1000000001: must be less than or equal to 1000000000",
    ]
    no_ref = _cpg_doc()
    del no_ref["spec"]["workloadRef"]
    errors, _ = _create(no_ref, ON)
    assert errors == ["spec.workloadRef: Required value"]


# validation_test.go TestValidateCompositePodGroup (ValidateCompositePodGroup: the metadata)
CPG_METADATA_FAILURES = {
    "no name": ({"name": ""}, "metadata.name: Required value: name or generateName is required"),
    "invalid name": ({"name": ".cpg"}, f'metadata.name: Invalid value: ".cpg": {SUBDOMAIN}'),
    "too long name": ({"name": "w" * 254}, 'metadata.name: Invalid value: "' + "w" * 254
                      + '": must be no more than 253 characters'),
    "no namespace": ({"namespace": ""}, "metadata.namespace: Required value"),
    "invalid namespace": ({"namespace": ".ns"}, 'metadata.namespace: Invalid value: ".ns"'),
    "too long namespace": ({"namespace": "n" * 64}, 'metadata.namespace: Invalid value: "' + "n" * 64 + '"'),
}


def _mk_composite_pod_group(**changes) -> CompositePodGroup:
    doc = _cpg_doc(schedulingConstraints=_constraints("foo"))
    doc["spec"]["workloadRef"] = {"workloadName": "w", "templateName": "t1"}
    doc["metadata"] = {"name": "workload", "namespace": "ns"}
    (cpg,) = load_objects([doc], validate=False, feature_gates=ON)
    return cpg.replace(**changes)


@pytest.mark.parametrize("name", ["gang policy", "basic policy", "no scheduling constraints"])
def test_validate_composite_pod_group_success(name):
    from fastsched.api.scheduling import CompositePodGroupSchedulingPolicy
    changes = {"gang policy": {},
               "basic policy": {"scheduling_policy": CompositePodGroupSchedulingPolicy(basic=True)},
               "no scheduling constraints": {"scheduling_constraints": None}}[name]
    assert validate_composite_pod_group(_mk_composite_pod_group(**changes), ON) == []


@pytest.mark.parametrize("name", list(CPG_METADATA_FAILURES))
def test_validate_composite_pod_group_metadata(name):
    change, expected = CPG_METADATA_FAILURES[name]
    errors = [str(e) for e in validate_composite_pod_group(_mk_composite_pod_group(**change), ON)]
    assert len(errors) == 1 and errors[0].startswith(expected), errors


def test_composite_pod_group_refused_without_the_gate():
    """storage_scheduling.go v1alpha3Storage: no compositepodgroups without the gate; the
    default gates (off) refuse the kind, also for an object built in code, also unvalidated."""
    for gates in (None, OFF):
        with pytest.raises(ManifestError, match=r'CompositePodGroup default/foo: kind: no matches for kind '
                                                r'"CompositePodGroup" in version "scheduling.k8s.io/v1alpha3"'):
            load_objects([_cpg_doc()], feature_gates=gates)
        with pytest.raises(ManifestError, match="no matches for kind"):
            load_objects([_cpg_doc()], validate=False, feature_gates=gates)
    with pytest.raises(ManifestError, match="no matches for kind"):
        prepare_for_create(CompositePodGroup(name="c"))


def test_composite_pod_group_other_version_and_unknown_field():
    doc = _cpg_doc()
    doc["apiVersion"] = "scheduling.k8s.io/v1beta1"
    with pytest.raises(ManifestError, match='no kind "CompositePodGroup" is registered for version '
                                            '"scheduling.k8s.io/v1beta1"'):
        load_objects([doc], feature_gates=ON)
    with pytest.warns(UserWarning, match=r'unknown field "spec.schedulingPolicy.gang.minCount"'):
        load_objects([_cpg_doc(schedulingPolicy={"gang": {"minGroupCount": 2, "minCount": 3}})], feature_gates=ON)


# --- Workload.spec.compositePodGroupTemplates -------------------------------------------------
def _mk_workload_doc() -> dict:
    """validation_test.go mkWorkload: two pod group templates and two composite ones (which the
    declarative union refuses together; the hand-written rules do not look)."""
    leaf = {"schedulingPolicy": {"basic": {}}, "schedulingConstraints": _constraints("foo")}
    return {"apiVersion": "scheduling.k8s.io/v1beta1", "kind": "Workload",
            "metadata": {"name": "workload", "namespace": "ns"},
            "spec": {"controllerRef": {"apiGroup": "group", "kind": "foo", "name": "baz"},
                     "podGroupTemplates": [
                         {"name": "group1", **leaf},
                         {"name": "group2", "schedulingPolicy": {"gang": {"minCount": 2}},
                          "schedulingConstraints": _constraints("foo")}],
                     "compositePodGroupTemplates": [
                         {"name": "compositegroup1", "schedulingPolicy": {"basic": {}},
                          "schedulingConstraints": _constraints("foo"),
                          "podGroupTemplates": [{"name": "childgroup1", **leaf}]},
                         {"name": "compositegroup2", "schedulingPolicy": {"gang": {"minGroupCount": 2}},
                          "schedulingConstraints": _constraints("foo"),
                          "podGroupTemplates": [{"name": "childgroup2", **leaf}]}]}}


def _mk_workload(tweak=None) -> Workload:
    doc = _mk_workload_doc()
    if tweak is not None:
        tweak(doc["spec"])
    (wl,) = load_objects([doc], validate=False, feature_gates=ON)
    return wl


def _no_pg_templates(spec: dict, composites: list) -> None:
    spec.pop("podGroupTemplates")
    spec["compositePodGroupTemplates"] = composites


WORKLOAD_SUCCESS = {
    "basic and gang policies": None,
    "no controllerRef": lambda s: s.pop("controllerRef"),
    "no pod group scheduling constraints": lambda s: s["podGroupTemplates"][1].pop("schedulingConstraints"),
    "no composite pod group scheduling constraints":
        lambda s: s["compositePodGroupTemplates"][1].pop("schedulingConstraints"),
}


@pytest.mark.parametrize("name", list(WORKLOAD_SUCCESS))
def test_validate_workload_spec_success(name):
    """TestValidateWorkload's success cases (ValidateWorkload: the hand-written rules)."""
    assert validate_workload_spec(_mk_workload(WORKLOAD_SUCCESS[name])) == []


def _leaf(name: str) -> dict:
    return {"name": name, "schedulingPolicy": {"basic": {}}}


def _depth_tree(spec):
    _no_pg_templates(spec, [{"name": "cpg1", "compositePodGroupTemplates": [
        {"name": "cpg2", "compositePodGroupTemplates": [
            {"name": "cpg3", "compositePodGroupTemplates": [
                {"name": "cpg4", "podGroupTemplates": [{"name": "leaf"}]}]}]}]}])


WORKLOAD_FAILURES = {
    "composite pod group template has no children": (
        lambda s: s["compositePodGroupTemplates"][0].pop("podGroupTemplates"),
        ['spec.compositePodGroupTemplates[0]: Invalid value: "compositegroup1": must have at least one child '
         'PodGroupTemplate or CompositePodGroupTemplate']),
    "composite pod group template nested child has no children": (
        lambda s: s["compositePodGroupTemplates"][0].update(
            podGroupTemplates=[], compositePodGroupTemplates=[{"name": "sub", "schedulingPolicy": {
                "gang": {"minGroupCount": 1}}}]),
        ['spec.compositePodGroupTemplates[0].compositePodGroupTemplates[0]: Invalid value: "sub": must have at least '
         'one child PodGroupTemplate or CompositePodGroupTemplate']),
    "duplicate names deep in tree": (
        lambda s: _no_pg_templates(s, [{"name": "main", "compositePodGroupTemplates": [
            {"name": "main", "podGroupTemplates": [{"name": "leaf"}]}]}]),
        ['spec.compositePodGroupTemplates[0].compositePodGroupTemplates[0].name: Duplicate value: "main"']),
    "duplicate names in tree": (
        lambda s: _no_pg_templates(s, [{"name": "cpg1", "compositePodGroupTemplates": [
            {"name": "cpg2", "podGroupTemplates": [{"name": "group1"}]}], "podGroupTemplates": [{"name": "group1"}]}]),
        ['spec.compositePodGroupTemplates[0].compositePodGroupTemplates[0].podGroupTemplates[0].name: '
         'Duplicate value: "group1"']),
    "exceeds max tree height": (
        _depth_tree,
        ['spec.compositePodGroupTemplates[0]: Invalid value: [{"Name":"cpg2","SchedulingPolicy":{"Basic":null,'
         '"Gang":null},"SchedulingConstraints":null,"DisruptionMode":null,"PriorityClassName":"","Priority":null,'
         '"PreemptionPolicy":null,"PodGroupTemplates":null,"CompositePodGroupTemplates":[{"Name":"cpg3",'
         '"SchedulingPolicy":{"Basic":null,"Gang":null},"SchedulingConstraints":null,"DisruptionMode":null,'
         '"PriorityClassName":"","Priority":null,"PreemptionPolicy":null,"PodGroupTemplates":null,'
         '"CompositePodGroupTemplates":[{"Name":"cpg4","SchedulingPolicy":{"Basic":null,"Gang":null},'
         '"SchedulingConstraints":null,"DisruptionMode":null,"PriorityClassName":"","Priority":null,'
         '"PreemptionPolicy":null,"PodGroupTemplates":[{"Name":"leaf","SchedulingPolicy":{"Basic":null,'
         '"Gang":null},"SchedulingConstraints":null,"ResourceClaims":null,"DisruptionMode":null,'
         '"PriorityClassName":"","Priority":null,"PreemptionPolicy":null}],"CompositePodGroupTemplates":null}]}]}]: '
         'maximum template hierarchy depth is 4']),
}


@pytest.mark.parametrize("name", list(WORKLOAD_FAILURES))
def test_validate_workload_spec_failures(name):
    """TestValidateWorkload's tree cases (the metadata ones are in test_api_scheduling.py)."""
    tweak, expected = WORKLOAD_FAILURES[name]
    assert [str(e) for e in validate_workload_spec(_mk_workload(tweak))] == expected


def test_workload_priority_through_the_tree():
    """validateWorkloadPriority: pod group templates first (their own message), then each composite
    template, its composite children, then its pod group children (the other message)."""
    def composite(priority_leaf=None, priority_child=None) -> list:
        child = {"name": "c2", "priority": priority_child, "podGroupTemplates": [_leaf("l2")]}
        leaf = {**_leaf("l1"), "priority": priority_leaf}
        return [{"name": "c1", "compositePodGroupTemplates": [child], "podGroupTemplates": [leaf]}]
    all_same = "all priority and priorityClassName values must be identical, detected multiple values"
    assert validate_workload_spec(_mk_workload(lambda s: _no_pg_templates(s, composite()))) == []
    for leaf, child in ((5, None), (None, 5)):
        errors = validate_workload_spec(_mk_workload(lambda s: _no_pg_templates(s, composite(leaf, child))))
        assert [str(e) for e in errors] == [f"spec: Invalid value: null: {all_same}"]
    # a pod group template sets the reference for the composite ones
    def mixed(spec):
        spec["podGroupTemplates"] = [{**_leaf("p"), "priorityClassName": "high"}]
        spec["compositePodGroupTemplates"] = [{"name": "c", "priorityClassName": "high",
                                               "podGroupTemplates": [_leaf("l")]}]
    assert [str(e) for e in validate_workload_spec(_mk_workload(mixed))] == [f"spec: Invalid value: null: {all_same}"]


def _workload_doc(composites: list) -> dict:
    return {"apiVersion": "scheduling.k8s.io/v1beta1", "kind": "Workload",
            "metadata": {"name": "foo", "namespace": "default"}, "spec": {"compositePodGroupTemplates": composites}}


def _cpg_template(policy: str | None = None) -> dict:
    template = {"name": "cpg-template", "schedulingPolicy": {"gang": {"minGroupCount": 5}},
                "podGroupTemplates": [{"name": "pg-template", "schedulingPolicy": {"gang": {"minCount": 5}}}]}
    if policy is not None:
        template["preemptionPolicy"] = policy
    return template


# workload/strategy_test.go TestStrategyCreate: the cpg cases (CompositePodGroup and TAS on)
WORKLOAD_CPG_CREATE = {
    "drop cpg preemptionPolicy with PodGroupPreemptionPolicy disabled": ("Never", False, "", None),
    "drop invalid cpg preemptionPolicy with PodGroupPreemptionPolicy disabled": ("Invalid", False, "", None),
    "cpg preemptionPolicy set (Never) with PodGroupPreemptionPolicy enabled": ("Never", True, "", "Never"),
    "invalid cpg preemptionPolicy with PodGroupPreemptionPolicy enabled": ("Invalid", True, SUPPORTED_POLICIES_ERROR,
                                                                            None),
}


@pytest.mark.parametrize("name", list(WORKLOAD_CPG_CREATE))
def test_workload_strategy_create_composite(name):
    policy, policy_gate, expected_error, expected_policy = WORKLOAD_CPG_CREATE[name]
    errors, wl = _create(_workload_doc([_cpg_template(policy)]), {**ON, "PodGroupPreemptionPolicy": policy_gate})
    if expected_error:
        assert len(errors) == 1 and expected_error in errors[0], errors
        assert errors[0].startswith("spec.compositePodGroupTemplates[0].preemptionPolicy: Unsupported value: ")
        return
    assert errors == []
    (template,) = wl.composite_pod_group_templates
    assert template.preemption_policy == expected_policy
    assert template.scheduling_policy.gang.min_group_count == 5
    assert [t.name for t in template.pod_group_templates] == ["pg-template"]


def test_drop_composite_pod_group_templates():
    """TestDropCompositePodGroupTemplates, the rows without an old Workload ("nil old" and "old
    without cpg", which a create is): dropped with the gate off, kept with it on; a Workload
    without composite templates unchanged either way."""
    doc = _workload_doc([{"name": "cpg-template", "compositePodGroupTemplates": [{"name": "child-cpg-template"}],
                          "podGroupTemplates": [{"name": "pg-template"}]}])
    for enabled in (False, True):
        gates = {"GenericWorkload": True, "CompositePodGroup": enabled, "TopologyAwareWorkloadScheduling": enabled}
        (wl,) = load_objects([copy.deepcopy(doc)], validate=False, feature_gates={**gates, "CompositePodGroup": True})
        got = prepare_workload_for_create(wl, gates)
        if enabled:
            assert got is wl
            assert [t.name for t in got.composite_pod_group_templates[0].composite_pod_group_templates] == \
                ["child-cpg-template"]
        else:
            assert got.composite_pod_group_templates == ()
        plain = load_objects([{**doc, "spec": {"podGroupTemplates": [_leaf("a")]}}], validate=False)[0]
        assert prepare_workload_for_create(plain, gates) is plain


def test_drop_composite_pod_group_template_preemption_policy():
    """TestDropCompositePodGroupTemplatePreemptionPolicy, the create rows: the composite template's
    policy dropped without PodGroupPreemptionPolicy, kept with it; none stays none."""
    for enabled in (False, True):
        gates = {**ON, "PodGroupPreemptionPolicy": enabled}
        for policy in ("Never", None):
            (wl,) = load_objects([_workload_doc([_cpg_template(policy)])], validate=False,
                                 feature_gates={**ON, "PodGroupPreemptionPolicy": True})
            got = prepare_workload_for_create(wl, gates)
            assert got.composite_pod_group_templates[0].preemption_policy == (policy if enabled else None)


def test_nested_pod_group_templates_lose_gated_fields():
    """dropDisabledCompositePodGroupTemplatesFields goes down the tree: a nested pod group template
    loses schedulingConstraints without TAS (dropDisabledPodGroupTemplatesFields), a composite
    template keeps its own (not gated)."""
    composite = {"name": "c", "schedulingConstraints": _constraints("zone"), "schedulingPolicy": {"basic": {}},
                 "compositePodGroupTemplates": [{
                     "name": "d", "schedulingPolicy": {"basic": {}},
                     "podGroupTemplates": [{**_leaf("l"), "schedulingConstraints": _constraints("rack"),
                                            "preemptionPolicy": "Never"}]}]}
    gates = {"GenericWorkload": True, "CompositePodGroup": True, "TopologyAwareWorkloadScheduling": False}
    errors, wl = _create(_workload_doc([composite]), gates)
    assert errors == []
    (top,) = wl.composite_pod_group_templates
    assert [t.key for t in top.scheduling_constraints.topology] == ["zone"]
    (leaf,) = top.composite_pod_group_templates[0].pod_group_templates
    assert leaf.scheduling_constraints is None and leaf.preemption_policy is None


def test_composite_templates_declarative_rules():
    """Validate_WorkloadSpec / Validate_CompositePodGroupTemplate: the union with podGroupTemplates,
    at most 8 per list, unique names (the whole v1beta1 item rendered), each field's rule at its
    path, nested pod group templates validated as the Workload's own."""
    errors, _ = _create(_mk_workload_doc(), ON)
    assert errors == ['spec: Invalid value: "{podGroupTemplates, compositePodGroupTemplates}": must specify exactly '
                      'one of: `podGroupTemplates`, `compositePodGroupTemplates`']
    many = _workload_doc([{"name": f"c{i}", "schedulingPolicy": {"basic": {}}, "podGroupTemplates": [_leaf(f"l{i}")]}
                          for i in range(9)])
    errors, _ = _create(many, ON)
    assert errors == ["spec.compositePodGroupTemplates: Too many: 9: must have at most 8 items"]
    twice = {"name": "c", "schedulingPolicy": {"basic": {}}, "podGroupTemplates": [_leaf("l")]}
    errors, _ = _create(_workload_doc([twice, {**twice, "podGroupTemplates": [_leaf("m")]}]), ON)
    # (the hand-written uniqueness leaves a duplicate within one list to the declarative rule)
    assert errors == [
        'spec.compositePodGroupTemplates[1]: Duplicate value: {"name":"c","schedulingPolicy":{"basic":{}},'
        '"podGroupTemplates":[{"name":"m","schedulingPolicy":{"basic":{}},"schedulingConstraints":null}]}',
    ]
    bad = {"name": "Bad", "schedulingPolicy": {"gang": {"minGroupCount": -2}},
           "schedulingConstraints": _constraints("a", "b"), "disruptionMode": {"single": {}, "all": {}},
           "priorityClassName": "x/y", "preemptionPolicy": "Never",
           "podGroupTemplates": [{"name": "l", "schedulingPolicy": {}}] * 9,
           "compositePodGroupTemplates": [{"name": "n", "schedulingPolicy": {"gang": {}},
                                           "podGroupTemplates": [_leaf("k")]}]}
    errors, _ = _create(_workload_doc([bad]), ON)
    path = "spec.compositePodGroupTemplates[0]"
    assert errors == [  # the hand-written rule first (x/y against the children's ""); policy dropped
        "spec: Invalid value: null: all priority and priorityClassName values must be identical, detected multiple "
        "values",
        f'{path}.name: Invalid value: "Bad": a lowercase RFC 1123 label must consist of lower case alphanumeric '
        "characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', "
        "regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')",
        f"{path}.schedulingPolicy.gang.minGroupCount: Invalid value: -2: must be greater than or equal to 1",
        f"{path}.schedulingConstraints.topology: Too many: 2: must have at most 1 item",
        f'{path}.disruptionMode: Invalid value: "{{single, all}}": must specify exactly one of: `single`, `all`',
        f'{path}.priorityClassName: Invalid value: "x/y": {SUBDOMAIN}',
        f"{path}.podGroupTemplates: Too many: 9: must have at most 8 items",
        f"{path}.compositePodGroupTemplates[0].schedulingPolicy.gang.minGroupCount: Required value",
    ]


def test_composite_templates_forbidden_when_set_in_code_without_the_gate():
    """IfOption("CompositePodGroup", false, ForbiddenSlice): only reachable for an object built in
    code (the strategy drops the list first)."""
    (wl,) = load_objects([_workload_doc([_cpg_template()])], validate=False, feature_gates=ON)
    errors = [str(e) for e in validate_workload(wl, OFF)]
    assert errors == ["spec.compositePodGroupTemplates: Forbidden"]
    with pytest.raises(ValidationError, match="must specify one of: `podGroupTemplates`, `compositePodGroupTemplates`"):
        load_objects([_workload_doc([_cpg_template()])], feature_gates=OFF)


# podgroup/strategy_test.go TestDropPodGroupParentCompositePodGroupNameField, the create rows
@pytest.mark.parametrize("enabled", [False, True])
def test_drop_pod_group_parent_composite_pod_group_name(enabled):
    doc = {"apiVersion": "scheduling.k8s.io/v1beta1", "kind": "PodGroup",
           "metadata": {"name": "pg", "namespace": "default"},
           "spec": {"parentCompositePodGroupName": "parent",
                    "workloadRef": {"workloadName": "w", "templateName": "t"},
                    "schedulingPolicy": {"gang": {"minCount": 2}}}}
    gates = {"GenericWorkload": True, "TopologyAwareWorkloadScheduling": enabled, "CompositePodGroup": enabled}
    (pg,) = load_objects([doc], feature_gates=gates)
    assert pg.parent_composite_pod_group_name == ("parent" if enabled else None)
    bad = copy.deepcopy(doc)
    bad["spec"]["parentCompositePodGroupName"] = "Parent"
    if enabled:
        with pytest.raises(ValidationError, match=r'spec\.parentCompositePodGroupName: Invalid value: "Parent"'):
            load_objects([bad], feature_gates=gates)
    else:
        assert load_objects([bad], feature_gates=gates)[0].parent_composite_pod_group_name is None
