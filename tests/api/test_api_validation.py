"""API-server validation (fastsched.api.validation) against upstream v1.34's messages and paths.

Expected strings follow upstream's sources: pkg/apis/core/validation/validation.go,
pkg/apis/scheduling/validation, pkg/apis/policy/validation, and apimachinery's api/validation,
apis/meta/v1/validation, util/validation and api/errors (NewInvalid). Objects are built with the
loader's parsers (defaulting included, validation not) or directly, then validated.
"""
import pickle

import pytest

from fastsched.api import (
    Container,
    LabelSelector,
    Namespace,
    Node,
    OwnerReference,
    Pod,
    PodAffinity,
    PodAffinityTerm,
    PodDisruptionBudget,
    PriorityClass,
    Taint,
    Toleration,
)
from fastsched.api.errors import ManifestError
from fastsched.api.decode import (
    parse_namespace,
    parse_node,
    parse_pod,
    parse_pod_disruption_budget,
    parse_priority_class,
)
from fastsched.api.objects import Affinity
from fastsched.api.validation import (
    HIGHEST_USER_DEFINABLE_PRIORITY,
    ValidationError,
    name_is_dns_label,
    name_is_path_segment,
    quantity_string,
    validate_label_selector,
    validate_object_meta,
    validate_pod_spec,
)
from fastsched.api.strategy import raise_if_invalid, validate
from fastsched.util.field import FieldError, FieldPath

# util/validation messages (RegexError keeps upstream's "',  or '" spacing)
QNAME = ("must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric "
         "character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is "
         "'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')")
LABEL_VALUE = ("a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and "
               "must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', "
               "regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')")
SUBDOMAIN = ("a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and "
             "must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is "
             "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')")
DNS_LABEL = ("a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start "
             "and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is "
             "'[a-z0-9]([-a-z0-9]*[a-z0-9])?')")


def messages(obj):
    return [str(error) for error in validate(obj)]


def container(name="app", image="registry.k8s.io/pause:3.10", **fields):
    return {"name": name, "image": image, **fields}


def pod(spec=None, name="web", **metadata):
    spec = {"containers": [container()]} if spec is None else spec
    return parse_pod({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, **metadata}, "spec": spec})


def pod_errors(spec=None, **kwargs):
    return messages(pod(spec, **kwargs))


def with_containers(*containers, **spec):
    return {"containers": list(containers), **spec}


def node(spec=None, status=None, name="node-1", **metadata):
    document = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, **metadata}}
    if spec is not None:
        document["spec"] = spec
    if status is not None:
        document["status"] = status
    return parse_node(document)


# --------------------------------------------------------------------------------------------
# Realistic objects are accepted
# --------------------------------------------------------------------------------------------
DAEMONSET_POD = {
    "apiVersion": "v1",
    "kind": "Pod",
    "metadata": {
        "name": "kube-proxy-7xk2p",
        "namespace": "kube-system",
        "generateName": "kube-proxy-",
        "uid": "0b3c1f5e-8a7e-4f8e-9d0c-2a5e6f7b8c9d",
        "labels": {"k8s-app": "kube-proxy", "controller-revision-hash": "6d8c9d8f5b", "pod-template-generation": "1"},
        "annotations": {"kubectl.kubernetes.io/restartedAt": "2024-05-01T10:00:00Z"},
        "ownerReferences": [{"apiVersion": "apps/v1", "kind": "DaemonSet", "name": "kube-proxy",
                             "uid": "a1b2c3d4-0000-4000-8000-000000000001", "controller": True,
                             "blockOwnerDeletion": True}],
    },
    "spec": {
        "hostNetwork": True,
        "priorityClassName": "system-node-critical",
        "priority": 2000001000,
        "preemptionPolicy": "PreemptLowerPriority",
        "nodeSelector": {"kubernetes.io/os": "linux"},
        "affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
            {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["node-1"]}]}]}}},
        "tolerations": [
            {"operator": "Exists"},
            {"key": "CriticalAddonsOnly", "operator": "Exists"},
            {"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute"},
            {"key": "node.kubernetes.io/unreachable", "operator": "Exists", "effect": "NoExecute",
             "tolerationSeconds": 300},
            {"key": "node.kubernetes.io/disk-pressure", "operator": "Exists", "effect": "NoSchedule"},
            {"key": "node.kubernetes.io/unschedulable", "operator": "Exists", "effect": "NoSchedule"},
            {"key": "dedicated", "operator": "Equal", "value": "infra", "effect": "PreferNoSchedule"},
        ],
        "containers": [{
            "name": "kube-proxy",
            "image": "registry.k8s.io/kube-proxy:v1.34.0",
            "command": ["/usr/local/bin/kube-proxy", "--config=/var/lib/kube-proxy/config.conf"],
            "resources": {"requests": {"cpu": "100m", "memory": "50Mi"}},
            "ports": [{"name": "metrics", "containerPort": 10249, "protocol": "TCP"}],
        }],
    },
}

GPU_POD = {
    "metadata": {"name": "trainer-0", "namespace": "ml", "labels": {"app": "trainer", "pod-template-hash": "5f9c"}},
    "spec": {
        "schedulerName": "default-scheduler",
        "initContainers": [
            {"name": "fetch-data", "image": "busybox:1.36", "resources": {"requests": {"cpu": "250m"}}},
            {"name": "log-shipper", "image": "fluent/fluent-bit:3.0", "restartPolicy": "Always",
             "resources": {"requests": {"cpu": "50m", "memory": "64Mi"}, "limits": {"memory": "128Mi"}}},
        ],
        "containers": [
            {"name": "trainer", "image": "nvcr.io/nvidia/pytorch:24.05-py3",
             "ports": [{"containerPort": 8080, "hostPort": 8080}, {"containerPort": 29500, "protocol": "TCP"}],
             "resources": {"requests": {"cpu": "7500m", "memory": "60Gi", "ephemeral-storage": "20Gi",
                                        "hugepages-2Mi": "1Gi"},
                           "limits": {"cpu": "8", "memory": "64Gi", "nvidia.com/gpu": "2", "hugepages-2Mi": "1Gi",
                                      "example.com/foo_bar": "1"}}},
            {"name": "metrics", "image": "prom/node-exporter:v1.8.0",
             "ports": [{"containerPort": 9100, "hostPort": 9100, "protocol": "UDP"}]},
        ],
        "overhead": {"cpu": "250m", "memory": "120Mi"},
        "affinity": {
            "nodeAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
                    {"matchExpressions": [{"key": "nvidia.com/gpu.count", "operator": "Gt", "values": ["1"]},
                                          {"key": "topology.kubernetes.io/zone", "operator": "In",
                                           "values": ["us-east-1a", "us-east-1b"]}]}]},
                "preferredDuringSchedulingIgnoredDuringExecution": [
                    {"weight": 100, "preference": {"matchExpressions": [
                        {"key": "node.kubernetes.io/instance-type", "operator": "In", "values": ["p4d.24xlarge"]}]}},
                    # upstream never checks preferred terms' label values
                    {"weight": 1, "preference": {"matchExpressions": [
                        {"key": "pool", "operator": "In", "values": ["not a label value!"]}]}}],
            },
            "podAntiAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
                {"weight": 50, "podAffinityTerm": {
                    "topologyKey": "kubernetes.io/hostname", "namespaces": ["ml", "ml-staging"],
                    "labelSelector": {"matchExpressions": [{"key": "app", "operator": "In", "values": ["trainer"]}]},
                    "matchLabelKeys": ["pod-template-hash"]}}]},
        },
        "topologySpreadConstraints": [
            {"maxSkew": 1, "topologyKey": "topology.kubernetes.io/zone", "whenUnsatisfiable": "DoNotSchedule",
             "minDomains": 2, "nodeAffinityPolicy": "Honor", "nodeTaintsPolicy": "Ignore",
             "labelSelector": {"matchLabels": {"app": "trainer"}}, "matchLabelKeys": ["pod-template-hash"]},
            {"maxSkew": 3, "topologyKey": "kubernetes.io/hostname", "whenUnsatisfiable": "ScheduleAnyway",
             "labelSelector": {"matchLabels": {"app": "trainer"}}},
        ],
        "tolerations": [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}],
        "schedulingGates": [{"name": "example.com/quota-check"}],
    },
}

CLUSTER_NODE = {
    "apiVersion": "v1",
    "kind": "Node",
    "metadata": {
        "name": "ip-10-0-1-23.ec2.internal",
        "uid": "7d6a0c3e-6a4f-4b7f-9f34-9f0f1f2e3d4c",
        "labels": {"kubernetes.io/hostname": "ip-10-0-1-23.ec2.internal", "kubernetes.io/os": "linux",
                   "topology.kubernetes.io/zone": "us-east-1a", "node.kubernetes.io/instance-type": "p4d.24xlarge",
                   "nvidia.com/gpu.count": "8", "node-role.kubernetes.io/worker": ""},
        "annotations": {"node.alpha.kubernetes.io/ttl": "0",
                        "volumes.kubernetes.io/controller-managed-attach-detach": "true"},
    },
    "spec": {"providerID": "aws:///us-east-1a/i-0abc", "taints": [
        {"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"},
        {"key": "nvidia.com/gpu", "value": "present", "effect": "NoExecute", "timeAdded": "2024-05-01T10:00:00Z"}]},
    "status": {
        "capacity": {"cpu": "96", "memory": "1176536048Ki", "pods": "110", "ephemeral-storage": "209702892Ki",
                     "hugepages-1Gi": "0", "hugepages-2Mi": "4Gi", "nvidia.com/gpu": "8",
                     "vpc.amazonaws.com/efa": "4"},
        "allocatable": {"cpu": "95690m", "memory": "1165108208Ki", "pods": "110", "ephemeral-storage": "192188443124",
                        "hugepages-1Gi": "0", "hugepages-2Mi": "4Gi", "nvidia.com/gpu": "8",
                        "vpc.amazonaws.com/efa": "4"},
    },
}


def test_realistic_objects_are_valid():
    assert messages(parse_pod(DAEMONSET_POD)) == []
    assert messages(parse_pod(GPU_POD)) == []
    assert messages(parse_node(CLUSTER_NODE)) == []
    assert messages(parse_namespace({"metadata": {"name": "kube-system"}})) == []
    assert messages(parse_priority_class({"metadata": {"name": "high-priority"}, "value": 1000000,
                                          "preemptionPolicy": "Never", "description": "batch"})) == []
    assert messages(parse_priority_class({"metadata": {"name": "system-cluster-critical"},
                                          "value": 2000000000})) == []
    assert messages(parse_pod_disruption_budget({
        "metadata": {"name": "trainer-pdb", "namespace": "ml"},
        "spec": {"maxUnavailable": "25%", "selector": {"matchLabels": {"app": "trainer"}}}})) == []
    raise_if_invalid(parse_pod(GPU_POD))  # no exception


def test_objects_built_in_code_are_valid():
    web = Pod(name="web", containers=(Container(name="app", image="nginx", requests={"cpu": 500, "memory": 2**30},
                                                limits={"cpu": 1000, "memory": 2**30}),))
    assert validate(web) == []
    assert validate(Node(name="n1", allocatable={"cpu": 4000, "pods": 110},
                         taints=(Taint("dedicated", "gpu", "NoSchedule"),))) == []
    assert validate(Namespace(name="team-a")) == []
    assert validate(object()) == []  # unknown types: nothing to say


def test_testing_helpers_build_valid_objects():
    from fastsched import testing

    assert validate(testing.make_pod("p", cpu="1", memory="1Gi", host_ports=[80], priority=10)) == []
    assert validate(testing.make_node("n", cpu="4", memory="8Gi")) == []


# --------------------------------------------------------------------------------------------
# ValidationError: NewInvalid's text
# --------------------------------------------------------------------------------------------
def test_validation_error_text_for_one_error():
    bad = pod(with_containers(container(resources={"requests": {"cpu": "-1"}})))
    with pytest.raises(ValidationError) as caught:
        raise_if_invalid(bad)
    error = caught.value
    assert str(error) == ('Pod "web" is invalid: spec.containers[0].resources.requests[cpu]: Invalid value: "-1": '
                          "must be greater than or equal to 0")
    assert error.kind == "Pod" and error.name == "web"
    assert [e.path for e in error.errors] == ["spec.containers[0].resources.requests[cpu]"]
    assert isinstance(error, ManifestError) and isinstance(error, ValueError)


def test_validation_error_text_for_several_errors_is_bracketed():
    bad = pod(with_containers(container(resources={"requests": {"cpu": "2"}, "limits": {"cpu": "1"}})),
              name="Web")
    with pytest.raises(ValidationError) as caught:
        raise_if_invalid(bad)
    assert str(caught.value) == (
        f'Pod "Web" is invalid: [metadata.name: Invalid value: "Web": {SUBDOMAIN}, '
        'spec.containers[0].resources.requests: Invalid value: "2": must be less than or equal to cpu limit of 1]')


def test_validation_error_deduplicates_identical_messages_but_keeps_the_errors():
    error = ValidationError("Node", "n", [
        *validate(Node(name="n", taints=(Taint("a", "", "Bad"),))),
        *validate(Node(name="n", taints=(Taint("a", "", "Bad"),))),
    ])
    assert len(error.errors) == 2
    assert str(error) == ('Node "n" is invalid: metadata.taints[0].effect: Unsupported value: "Bad": supported '
                          'values: "NoSchedule", "PreferNoSchedule", "NoExecute"')


def test_validation_error_uses_group_qualified_kinds_and_survives_pickling():
    pc = PriorityClass(name="too-high", value=HIGHEST_USER_DEFINABLE_PRIORITY + 1)
    with pytest.raises(ValidationError) as caught:
        raise_if_invalid(pc)
    assert str(caught.value) == ('PriorityClass.scheduling.k8s.io "too-high" is invalid: value: Forbidden: '
                                 'maximum allowed value of a user defined priority is 1000000000')
    pdb = PodDisruptionBudget(name="p", min_available="150%")
    with pytest.raises(ValidationError) as caught:
        raise_if_invalid(pdb)
    assert str(caught.value) == ('PodDisruptionBudget.policy "p" is invalid: spec.minAvailable: Invalid value: '
                                 '"150%": must not be greater than 100%')
    clone = pickle.loads(pickle.dumps(caught.value.with_source("pdb.yaml")))
    assert str(clone) == "pdb.yaml: " + str(caught.value) and clone.errors == caught.value.errors


def test_validation_error_without_errors_and_with_an_empty_name():
    assert str(ValidationError("Pod", "", [])) == 'Pod "" is invalid'


# --------------------------------------------------------------------------------------------
# ObjectMeta
# --------------------------------------------------------------------------------------------
def test_name_is_required_unless_generate_name_is_set():
    assert pod_errors(name="") == ["metadata.name: Required value: name or generateName is required"]
    assert pod_errors(name="", generateName="web-") == []
    assert messages(Node(name="")) == ["metadata.name: Required value: name or generateName is required"]


def test_generate_name_may_end_with_a_dash_but_must_otherwise_be_a_valid_name():
    assert pod_errors(name="", generateName="Web-") == [
        f'metadata.generateName: Invalid value: "Web-": {SUBDOMAIN}']
    assert name_is_dns_label("team-", True) == [] and name_is_dns_label("team-", False) != []


def test_names_follow_each_kinds_rule():
    long_name = "a" * 254
    assert pod_errors(name="web_1") == [f'metadata.name: Invalid value: "web_1": {SUBDOMAIN}']
    assert pod_errors(name=long_name) == [
        f'metadata.name: Invalid value: "{long_name}": must be no more than 253 characters']
    assert messages(Node(name="Node-1")) == [f'metadata.name: Invalid value: "Node-1": {SUBDOMAIN}']
    assert messages(Namespace(name="team.a")) == ['metadata.name: Invalid value: "team.a": must not contain dots']
    # the kubernetes.io/metadata.name label carries the name too, but "Team" is a valid label value
    assert messages(Namespace(name="Team")) == [f'metadata.name: Invalid value: "Team": {DNS_LABEL}']
    assert messages(PriorityClass(name="High_Priority")) == [
        f'metadata.name: Invalid value: "High_Priority": {SUBDOMAIN}']


def test_namespace_of_namespaced_objects():
    assert pod_errors(namespace="Team.A") == [f'metadata.namespace: Invalid value: "Team.A": {DNS_LABEL}']
    assert messages(Pod(name="web", namespace="", containers=(Container(name="c", image="i"),))) == [
        "metadata.namespace: Required value"]
    assert messages(Node(name="n", namespace="default")) == [
        "metadata.namespace: Forbidden: not allowed on this type"]


def test_label_keys_and_values():
    assert pod_errors(labels={"app/": "web", "tier": "front end"}) == [
        'metadata.labels: Invalid value: "app/": name part must be non-empty',
        f'metadata.labels: Invalid value: "app/": name part {QNAME}',
        f'metadata.labels: Invalid value: "front end": {LABEL_VALUE}',
    ]
    assert pod_errors(labels={"Example.com/app": "x", "a/b/c": "y", "k": "v" * 64}) == [
        f'metadata.labels: Invalid value: "Example.com/app": prefix part {SUBDOMAIN}',
        # apimachinery v0.37: label keys and values are content.IsLabelKey / IsLabelValue (lengths in bytes)
        f'metadata.labels: Invalid value: "a/b/c": a valid label key {QNAME} with an optional DNS subdomain prefix '
        "and '/' (e.g. 'example.com/MyName')",
        f'metadata.labels: Invalid value: "{"v" * 64}": must be no more than 63 bytes',
    ]
    assert pod_errors(labels={"/app": "x", "a" * 64: ""}) == [
        'metadata.labels: Invalid value: "/app": prefix part must be non-empty',
        f'metadata.labels: Invalid value: "{"a" * 64}": name part must be no more than 63 bytes',
    ]


def test_annotation_keys_ignore_case_and_the_total_size_is_limited():
    assert pod_errors(annotations={"Example.COM/Owner": "me", "bad key": "x"}) == [
        f'metadata.annotations: Invalid value: "bad key": name part {QNAME}']
    big = {"a": "x" * (256 * 1024)}
    assert pod_errors(annotations=big) == ["metadata.annotations: Too long: may not be more than 262144 bytes"]
    assert pod_errors(annotations={"a": "x" * (256 * 1024 - 1)}) == []


def test_owner_references():
    ref = OwnerReference(kind="ReplicaSet", name="web-5f9c", uid="", api_version="apps/v1", controller=True)
    assert messages(Pod(name="web", owner_references=(ref,), containers=(Container(name="c", image="i"),))) == [
        'metadata.ownerReferences.uid: Invalid value: "": must not be empty']
    refs = (OwnerReference(kind="ReplicaSet", name="a", uid="1", api_version="apps/v1", controller=True),
            OwnerReference(kind="Event", name="b", uid="2", api_version="v1", controller=True))
    assert messages(Pod(name="web", owner_references=refs, containers=(Container(name="c", image="i"),))) == [
        'metadata.ownerReferences: Invalid value: {"apiVersion":"v1","kind":"Event","name":"b","uid":"2",'
        '"controller":true}: /v1, Kind=Event is disallowed from being an owner',
        'metadata.ownerReferences: Invalid value: [{"apiVersion":"apps/v1","kind":"ReplicaSet","name":"a","uid":"1",'
        '"controller":true},{"apiVersion":"v1","kind":"Event","name":"b","uid":"2","controller":true}]: Only one '
        'reference can have Controller set to true. Found "true" in references for ReplicaSet/a and Event/b',
    ]
    empty = OwnerReference(kind="", name="", uid="u", api_version="apps/")
    assert messages(Pod(name="web", owner_references=(empty,), containers=(Container(name="c", image="i"),))) == [
        'metadata.ownerReferences.apiVersion: Invalid value: "apps/": version must not be empty',
        'metadata.ownerReferences.kind: Invalid value: "": must not be empty',
        'metadata.ownerReferences.name: Invalid value: "": must not be empty',
    ]


def _reference_annotation_errors(annotations, path):
    """``ValidateAnnotations`` written out directly (a path per error, no shortcut)."""
    from fastsched.api.util_validation import byte_length, qualified_name_errors
    from fastsched.api.validation import TOTAL_ANNOTATION_SIZE_LIMIT, _too_long

    errors, total = [], 0
    for key, value in annotations.items():
        errors.extend(FieldError.invalid(path, key, msg) for msg in qualified_name_errors(key.lower()))
        total += byte_length(key) + byte_length(value)
    if total > TOTAL_ANNOTATION_SIZE_LIMIT:
        errors.append(_too_long(path, TOTAL_ANNOTATION_SIZE_LIMIT))
    return errors


def _reference_owner_reference_errors(refs, path):
    """``ValidateOwnerReferences`` written out directly (ParseGroupVersion, then each rule)."""
    from fastsched.api.validation import _owner_reference_json

    errors, first_controller = [], ""
    for ref in refs:
        if ref.api_version in ("", "/"):
            group, version = "", ""
        elif ref.api_version.count("/") == 0:
            group, version = "", ref.api_version
        elif ref.api_version.count("/") == 1:
            group, version = ref.api_version.split("/")
        else:
            group, version = "", ""
        if not version:
            errors.append(FieldError.invalid(path.child("apiVersion"), ref.api_version, "version must not be empty"))
        for name in ("kind", "name", "uid"):
            if not getattr(ref, name):
                errors.append(FieldError.invalid(path.child(name), getattr(ref, name), "must not be empty"))
        if (group, version, ref.kind) == ("", "v1", "Event"):
            errors.append(FieldError.invalid(path, _owner_reference_json(ref),
                                             "/v1, Kind=Event is disallowed from being an owner"))
        if ref.controller:
            if first_controller:
                errors.append(FieldError.invalid(
                    path, [_owner_reference_json(r) for r in refs],
                    'Only one reference can have Controller set to true. Found "true" in references for '
                    f"{first_controller} and {ref.kind}/{ref.name}"))
            else:
                first_controller = f"{ref.kind}/{ref.name}"
    return errors


def _as_rows(errors):
    return [(type(e), e.path, e.type, e.value, e.detail, str(e)) for e in errors]


def test_metadata_validators_build_the_same_errors_as_the_direct_rules():
    """validate_object_meta's annotation and owner-reference validators check each rule on the
    fields first and build the paths and errors only when one fails: on seeded random metadata
    their errors (paths, values, wording, order) equal the rules written out directly."""
    import random

    from fastsched.api.validation import _validate_annotations, _validate_owner_references

    rng = random.Random(27)
    meta = FieldPath("metadata")
    versions = ["v1", "/v1", "apps/v1", "apps/", "/", "", "a/b/c", "resource.k8s.io/v1", "x", "v1/"]
    kinds = ["Pod", "Event", "", "ReplicaSet"]
    keys = ["a", "Example.COM/Owner", "bad key", "/x", "k8s.io/", "resource.kubernetes.io/extended-resource-claim",
            "é", "a" * 64]
    failing = 0
    for _ in range(3000):
        refs = tuple(OwnerReference(kind=rng.choice(kinds), name=rng.choice(["", "n", "pod-1"]),
                                    uid=rng.choice(["", "u1", "u2"]), api_version=rng.choice(versions),
                                    controller=rng.random() < 0.4)
                     for _ in range(rng.randint(1, 4)))
        got: list = []
        _validate_owner_references(refs, meta, got)
        want = _reference_owner_reference_errors(refs, meta.child("ownerReferences"))
        assert _as_rows(got) == _as_rows(want), refs
        size = rng.choice([1, 10, 256 * 1024 - 2, 256 * 1024, 90 * 1024])
        annotations = {rng.choice(keys): rng.choice(["x", "é"]) * rng.randint(1, size) for _ in range(rng.randint(1, 3))}
        got = []
        _validate_annotations(annotations, meta, got)
        want = _reference_annotation_errors(annotations, meta.child("annotations"))
        assert _as_rows(got) == _as_rows(want), annotations
        failing += bool(got)
    assert 300 < failing < 2700  # both outcomes well covered


def test_validate_object_meta_is_reusable_with_other_name_rules():
    obj = Pod(name="a/b", namespace="ns")
    assert [str(e) for e in validate_object_meta(obj, namespaced=True, name_rule=name_is_path_segment)] == [
        "metadata.name: Invalid value: \"a/b\": may not contain '/'"]
    assert name_is_path_segment("..", False) == ["may not be '..'"]
    assert name_is_path_segment("50%", True) == ["may not contain '%'"]


# --------------------------------------------------------------------------------------------
# Containers
# --------------------------------------------------------------------------------------------
def test_at_least_one_container_is_required():
    assert pod_errors({"containers": []}) == ["spec.containers: Required value"]


def test_container_name_and_image():
    assert pod_errors(with_containers({"resources": {}})) == [
        "spec.containers[0].name: Required value", "spec.containers[0].image: Required value"]
    assert pod_errors(with_containers(container("App_1"))) == [
        f'spec.containers[0].name: Invalid value: "App_1": {DNS_LABEL}']
    assert pod_errors(with_containers(container(), container())) == [
        'spec.containers[1].name: Duplicate value: "app"']
    assert pod_errors(with_containers(container(image=" nginx"))) == [
        'spec.containers[0].image: Invalid value: " nginx": must not have leading or trailing whitespace']


def test_init_container_rules():
    spec = with_containers(container(), initContainers=[container("app"), container("init", restartPolicy="Sometimes")])
    assert pod_errors(spec) == [
        'spec.initContainers[0].name: Duplicate value: "app"',
        'spec.initContainers[1].restartPolicy: Unsupported value: "Sometimes": supported values: '
        '"Always", "Never", "OnFailure"',
    ]


RESTART_ALL = {"action": "RestartAllContainers", "exitCodes": {"operator": "In", "values": [42]}}


def test_container_restart_policy_and_rules():
    # ContainerRestartRules (beta, on since v1.35) and RestartAllContainersOnContainerExits (beta,
    # on since v1.36): a regular container may set restartPolicy and rules, an init container any policy
    assert pod_errors(with_containers(container(restartPolicy="Always"))) == []
    assert pod_errors(with_containers(container(restartPolicy="Never", restartPolicyRules=[RESTART_ALL]),
                                      initContainers=[container("init", restartPolicy="OnFailure",
                                                                restartPolicyRules=[RESTART_ALL]),
                                                      container("side", restartPolicy="Always",
                                                                restartPolicyRules=[RESTART_ALL])])) == []
    assert pod_errors(with_containers(container(restartPolicyRules=[RESTART_ALL]),
                                      initContainers=[container("init", restartPolicyRules=[RESTART_ALL])])) == [
        "spec.containers[0].restartPolicy: Required value: must specify restartPolicy when restart rules are used",
        "spec.initContainers[0].restartPolicy: Required value: must specify restartPolicy when restart rules are used"]
    bad = [{"action": "Stop", "exitCodes": {"operator": "Is", "values": [1]}}, {"action": "Restart"}]
    assert pod_errors(with_containers(container(restartPolicy="Sometimes", restartPolicyRules=bad))) == [
        'spec.containers[0].restartPolicy: Unsupported value: "Sometimes": supported values: '
        '"Always", "Never", "OnFailure"',
        'spec.containers[0].restartPolicyRules[0].action: Unsupported value: "Stop": supported values: '
        '"Restart", "RestartAllContainers"',
        'spec.containers[0].restartPolicyRules[0].exitCodes.operator: Unsupported value: "Is": supported values: '
        '"In", "NotIn"',
        "spec.containers[0].restartPolicyRules[1].exitCodes: Required value: must be specified"]
    # the limits are field.TooMany's ("Too many: <n>: ..."), not an invalid value
    many_codes = {"action": "Restart", "exitCodes": {"operator": "In", "values": list(range(256))}}
    assert pod_errors(with_containers(container(restartPolicy="Never",
                                                restartPolicyRules=[RESTART_ALL] * 20 + [many_codes]))) == [
        "spec.containers[0].restartPolicyRules: Too many: 21: must have at most 20 items",
        "spec.containers[0].restartPolicyRules[20].exitCodes.values: Too many: 256: must have at most 255 items"]


def test_negative_requests_and_limits_show_the_quantity_as_written():
    spec = with_containers(container(resources={
        "requests": {"cpu": "-1", "memory": "-1Gi", "ephemeral-storage": "-0.5"}, "limits": {"memory": "-1Gi"}}))
    assert pod_errors(spec) == [
        'spec.containers[0].resources.limits[memory]: Invalid value: "-1Gi": must be greater than or equal to 0',
        'spec.containers[0].resources.requests[cpu]: Invalid value: "-1": must be greater than or equal to 0',
        'spec.containers[0].resources.requests[memory]: Invalid value: "-1Gi": must be greater than or equal to 0',
        'spec.containers[0].resources.requests[ephemeral-storage]: Invalid value: "-500m": must be greater than or '
        'equal to 0',
    ]


def test_requests_must_not_exceed_limits():
    spec = with_containers(container(resources={"requests": {"cpu": "1500m", "memory": "2Gi"},
                                                "limits": {"cpu": "1", "memory": "1Gi"}}))
    assert pod_errors(spec) == [
        'spec.containers[0].resources.requests: Invalid value: "1500m": must be less than or equal to cpu limit of 1',
        'spec.containers[0].resources.requests: Invalid value: "2Gi": must be less than or equal to memory limit of '
        '1Gi',
    ]


def test_quantities_are_compared_exactly_not_as_rounded_amounts():
    # 0.6 and 0.5 (bytes) both round up to 1 in the scheduler's integer amounts
    spec = with_containers(container(resources={"requests": {"memory": "0.6"}, "limits": {"memory": "0.5"}}))
    assert pod_errors(spec) == [
        'spec.containers[0].resources.requests: Invalid value: "600m": must be less than or equal to memory limit '
        'of 500m']


def test_resource_names():
    spec = with_containers(container(resources={"requests": {"cpus": "1", "pods": "1", "nvidia.com/gpu!": "1"}}))
    assert pod_errors(spec) == [
        'spec.containers[0].resources.requests[cpus]: Invalid value: "cpus": must be a standard resource type or '
        'fully qualified',
        'spec.containers[0].resources.requests[cpus]: Invalid value: "cpus": must be a standard resource for '
        'containers',
        'spec.containers[0].resources.requests[pods]: Invalid value: "pods": must be a standard resource for '
        'containers',
        f'spec.containers[0].resources.requests[nvidia.com/gpu!]: Invalid value: "nvidia.com/gpu!": name part {QNAME}',
        'spec.containers[0].resources.requests[nvidia.com/gpu!]: Invalid value: "nvidia.com/gpu!": doesn\'t follow '
        'extended resource name standard',
        'spec.containers[0].resources.limits: Required value: Limit must be set for non overcommitable resources',
    ]
    too_long_prefix = "a" * 250 + "/x"  # "requests." + name is no longer a qualified name
    spec = with_containers(container(resources={"limits": {too_long_prefix: "1"}}))
    assert pod_errors(spec) == [
        f'spec.containers[0].resources.limits[{too_long_prefix}]: Invalid value: "{too_long_prefix}": doesn\'t '
        'follow extended resource name standard',
        f'spec.containers[0].resources.requests[{too_long_prefix}]: Invalid value: "{too_long_prefix}": doesn\'t '
        'follow extended resource name standard',
    ]


def test_extended_resources_need_equal_integer_requests_and_limits():
    assert pod_errors(with_containers(container(resources={"requests": {"nvidia.com/gpu": "1"}}))) == [
        "spec.containers[0].resources.limits: Required value: Limit must be set for non overcommitable resources"]
    spec = with_containers(container(resources={"requests": {"nvidia.com/gpu": "1"},
                                                "limits": {"nvidia.com/gpu": "2"}}))
    assert pod_errors(spec) == [
        'spec.containers[0].resources.requests: Invalid value: "1": must be equal to nvidia.com/gpu limit of 2']
    assert pod_errors(with_containers(container(resources={"limits": {"nvidia.com/gpu": "0.5"}}))) == [
        'spec.containers[0].resources.limits[nvidia.com/gpu]: Invalid value: "500m": must be an integer',
        'spec.containers[0].resources.requests[nvidia.com/gpu]: Invalid value: "500m": must be an integer',
    ]
    # a limit alone defaults the request (SetDefaults_Pod), so it is accepted
    assert pod_errors(with_containers(container(resources={"limits": {"nvidia.com/gpu": 4}}))) == []


def test_hugepages():
    spec = with_containers(container(resources={"limits": {"hugepages-2Mi": "3Mi", "memory": "1Gi"}}))
    assert pod_errors(spec) == [
        'spec.containers[0].resources.limits[hugepages-2Mi]: Invalid value: "3Mi": 3Mi is not positive integer '
        'multiple of hugepages-2Mi',
        'spec.containers[0].resources.requests[hugepages-2Mi]: Invalid value: "3Mi": 3Mi is not positive integer '
        'multiple of hugepages-2Mi',
    ]
    spec = with_containers(container(resources={"limits": {"hugepages-1Gi": "2Gi"}}))
    assert pod_errors(spec) == ["spec.containers[0].resources: Forbidden: HugePages require cpu or memory"]
    spec = with_containers(container(resources={"requests": {"hugepages-2Mi": "2Mi", "cpu": "1"},
                                                "limits": {"hugepages-2Mi": "4Mi"}}))
    assert pod_errors(spec) == [
        'spec.containers[0].resources.requests: Invalid value: "2Mi": must be equal to hugepages-2Mi limit of 4Mi']


def test_container_ports():
    spec = with_containers(container(ports=[
        {"containerPort": 0},
        {"containerPort": 70000, "hostPort": 99999, "protocol": "HTTP"},
        {"name": "Http", "containerPort": 80},
        {"name": "web", "containerPort": 81},
        {"name": "web", "containerPort": 82},
    ]))
    assert pod_errors(spec) == [
        "spec.containers[0].ports[0].containerPort: Required value",
        "spec.containers[0].ports[1].containerPort: Invalid value: 70000: must be between 1 and 65535, inclusive",
        "spec.containers[0].ports[1].hostPort: Invalid value: 99999: must be between 1 and 65535, inclusive",
        'spec.containers[0].ports[1].protocol: Unsupported value: "HTTP": supported values: "SCTP", "TCP", "UDP"',
        'spec.containers[0].ports[2].name: Invalid value: "Http": must contain only alpha-numeric characters (a-z, '
        '0-9), and hyphens (-)',
        'spec.containers[0].ports[4].name: Duplicate value: "web"',
    ]


def test_host_ports_are_unique_per_protocol_and_ip_across_regular_containers():
    spec = with_containers(
        container("a", ports=[{"containerPort": 80, "hostPort": 8080}]),
        container("b", ports=[{"containerPort": 81, "hostPort": 8080},
                              {"containerPort": 82, "hostPort": 8080, "protocol": "UDP"},
                              {"containerPort": 83, "hostPort": 8080, "hostIP": "10.0.0.1"}]),
        initContainers=[container("init", ports=[{"containerPort": 1, "hostPort": 8080},
                                                 {"containerPort": 2, "hostPort": 9090},
                                                 {"containerPort": 3, "hostPort": 9090}])])
    assert pod_errors(spec) == [
        'spec.containers[1].ports[0].hostPort: Duplicate value: "TCP//8080"',
        # each init container is checked alone, and upstream indexes it as [0]
        'spec.initContainers[0].ports[2].hostPort: Duplicate value: "TCP//9090"',
    ]


def test_host_network_pods_need_host_port_equal_to_container_port():
    spec = with_containers(container(ports=[{"containerPort": 53, "protocol": "UDP"},
                                            {"containerPort": 80, "hostPort": 8080}]), hostNetwork=True)
    assert pod_errors(spec) == [
        "spec.containers[0].ports[1].hostPort: Invalid value: 8080: must match `containerPort` when `hostNetwork` "
        "is true"]


# --------------------------------------------------------------------------------------------
# Volumes, hostname and subdomain (ValidateVolumes, validateVolumeSource, ValidatePodSpec)
# --------------------------------------------------------------------------------------------
def volumes(*entries, **spec):
    return with_containers(container(), volumes=list(entries), **spec)


def test_hostname_and_subdomain_are_dns_labels():
    assert pod_errors(with_containers(container(), hostname="Db_1", subdomain="a.b")) == [
        f'spec.hostname: Invalid value: "Db_1": {DNS_LABEL}',
        'spec.subdomain: Invalid value: "a.b": must not contain dots']
    assert pod_errors(with_containers(container(), hostname="x" * 64)) == [
        f'spec.hostname: Invalid value: "{"x" * 64}": must be no more than 63 characters']
    assert pod_errors(with_containers(container(), hostname="db-0", subdomain="")) == []


def test_volume_names_are_required_dns_labels_and_unique():
    assert pod_errors(volumes({"emptyDir": {}}, {"name": "Data", "emptyDir": {}}, {"name": "a", "emptyDir": {}},
                              {"name": "a", "configMap": {"name": "c"}})) == [
        "spec.volumes[0].name: Required value",
        f'spec.volumes[1].name: Invalid value: "Data": {DNS_LABEL}',
        'spec.volumes[3].name: Duplicate value: "a"']


def test_a_volume_has_exactly_one_source():
    assert pod_errors(volumes({"name": "v"})) == ["spec.volumes[0]: Required value: must specify a volume type"]
    # (counted in upstream's order, with its spellings of two paths; the first source's checks run)
    assert pod_errors(volumes({"name": "v", "persistentVolumeClaim": {"claimName": "c"}, "gcePersistentDisk": {},
                               "downwardAPI": {}, "cephfs": {"monitors": ["m"]}})) == [
        "spec.volumes[0].persistentDisk.pdName: Required value",
        "spec.volumes[0].persistentVolumeClaim: Forbidden: may not specify more than 1 volume type",
        "spec.volumes[0].cephFS: Forbidden: may not specify more than 1 volume type",
        "spec.volumes[0].downwarAPI: Forbidden: may not specify more than 1 volume type"]


def test_required_fields_of_the_sources_the_scheduler_reads():
    assert pod_errors(volumes(
        {"name": "a", "persistentVolumeClaim": {}}, {"name": "b", "awsElasticBlockStore": {"partition": 256}},
        {"name": "c", "rbd": {"monitors": []}}, {"name": "d", "cinder": {"secretRef": {}}},
        {"name": "e", "azureFile": {}}, {"name": "f", "vsphereVolume": {}}, {"name": "g", "portworxVolume": {}},
        {"name": "h", "csi": {"driver": "Bad_Driver", "nodePublishSecretRef": {"name": "S"}}},
        {"name": "i", "ephemeral": {}}, {"name": "j", "gcePersistentDisk": {"pdName": "d", "partition": -1}},
    )) == [
        "spec.volumes[0].persistentVolumeClaim.claimName: Required value",
        "spec.volumes[1].awsElasticBlockStore.volumeID: Required value",
        "spec.volumes[1].awsElasticBlockStore.partition: Invalid value: 256: must be between 1 and 255, inclusive",
        "spec.volumes[2].rbd.monitors: Required value",
        "spec.volumes[2].rbd.image: Required value",
        "spec.volumes[3].cinder.volumeID: Required value",
        "spec.volumes[3].cinder.secretRef.name: Required value",
        "spec.volumes[4].azureFile.secretName: Required value",
        "spec.volumes[4].azureFile.shareName: Required value",
        "spec.volumes[5].vsphereVolume.volumePath: Required value",
        "spec.volumes[6].portworxVolume.volumeID: Required value",
        f'spec.volumes[7].csi.driver: Invalid value: "Bad_Driver": {SUBDOMAIN}',
        f'spec.volumes[7].csi.name: Invalid value: "S": {SUBDOMAIN}',
        "spec.volumes[8].ephemeral.volumeClaimTemplate: Required value",
        "spec.volumes[9].persistentDisk.partition: Invalid value: -1: must be between 1 and 255, inclusive",
    ]
    assert pod_errors(volumes({"name": "h", "csi": {"driver": "x" * 64 + ".io"}})) == [
        "spec.volumes[0].csi.driver: Too long: may not be more than 63 bytes"]
    # (a CSI driver name is checked lower-cased; the sources the scheduler does not read are not checked)
    assert pod_errors(volumes({"name": "h", "csi": {"driver": "Example.COM"}}, {"name": "p", "hostPath": {}},
                              {"name": "n", "nfs": {}})) == []


def test_iscsi_and_azure_disk_volumes():
    assert pod_errors(volumes(
        {"name": "a", "iscsi": {"iqn": "bogus", "lun": 300, "chapAuthSession": True}},
        {"name": "b", "iscsi": {"targetPortal": "10.0.0.1:3260", "iqn": "iqn.2001-04.com.example",
                                "initiatorName": "eui.12"}},
        {"name": "c" * 40, "iscsi": {"targetPortal": "10.0.0.1:3260" * 2, "iqn": "naa." + "a" * 32,
                                     "initiatorName": "iqn.2001-04.com.example:node"}},
        {"name": "d", "azureDisk": {"diskName": "d", "diskURI": "d", "kind": "Managed", "cachingMode": "Any"}},
        {"name": "e", "azureDisk": {"kind": "Blob"}},
    )) == [
        "spec.volumes[0].iscsi.targetPortal: Required value",
        'spec.volumes[0].iscsi.iqn: Invalid value: "bogus": must be valid format starting with iqn, eui, or naa',
        "spec.volumes[0].iscsi.lun: Invalid value: 300: must be between 0 and 255, inclusive",
        "spec.volumes[0].iscsi.secretRef: Required value",
        'spec.volumes[1].iscsi.iqn: Invalid value: "iqn.2001-04.com.example": must be valid format',
        'spec.volumes[1].iscsi.initiatorname: Invalid value: "eui.12": must be valid format',
        f'spec.volumes[2].name: Invalid value: "{"c" * 40}": Total length of <volume name>:<iscsi.targetPortal> '
        "must be under 64 characters if iscsi.initiatorName is specified.",
        'spec.volumes[3].azureDisk.cachingMode: Unsupported value: "Any": supported values: "None", "ReadOnly", '
        '"ReadWrite"',
        'spec.volumes[3].azureDisk.diskURI: Unsupported value: "d": supported values: '
        '"/subscriptions/{sub-id}/resourcegroups/{group-name}/providers/microsoft.compute/disks/{disk-id}"',
        "spec.volumes[4].azureDisk.diskName: Required value",
        "spec.volumes[4].azureDisk.diskURI: Required value",
        'spec.volumes[4].azureDisk.kind: Unsupported value: "Blob": supported values: "Dedicated", "Managed", '
        '"Shared"',
        'spec.volumes[4].azureDisk.diskURI: Unsupported value: "": supported values: '
        '"https://{account-name}.blob.core.windows.net/{container-name}/{disk-name}.vhd"',
    ]


def test_ephemeral_volumes_and_the_claims_they_create():
    ephemeral = {"name": "scratch", "ephemeral": {"volumeClaimTemplate": {"spec": {}}}}
    assert pod_errors(volumes(ephemeral, {"name": "x", "persistentVolumeClaim": {"claimName": "web-scratch"}})) == [
        'spec.volumes[1].persistentVolumeClaim.claimName: Invalid value: "web-scratch": must not reference a PVC '
        "that gets created for an ephemeral volume"]
    long_name = "w" * 250
    assert pod_errors(volumes(ephemeral), name=long_name) == [
        f'spec.volumes[0].name: Invalid value: "scratch": PVC name "{long_name}-scratch": must be no more than 253 '
        "characters"]


def test_a_pod_templates_volumes_are_validated_without_a_pod_name():
    """A workload's template (``ValidatePodTemplateSpec``: no pod metadata): the source checks, not
    those of the claims named after the pod."""
    from fastsched.api import load_objects
    deployment = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "w" * 250},
                  "spec": {"selector": {"matchLabels": {"app": "w"}}, "template": {
                      "metadata": {"labels": {"app": "w"}},
                      "spec": {"containers": [container()], "hostname": "H",
                               "volumes": [{"name": "scratch", "ephemeral": {"volumeClaimTemplate": {"spec": {}}}},
                                           {"name": "data", "persistentVolumeClaim": {"claimName": ""}}]}}}}
    with pytest.raises(ValidationError) as info:
        load_objects([deployment])
    text = str(info.value)
    assert "spec.template.spec.volumes[1].persistentVolumeClaim.claimName: Required value" in text
    assert 'spec.template.spec.hostname: Invalid value: "H"' in text and "PVC name" not in text


# --------------------------------------------------------------------------------------------
# Pod-level resources and overhead
# --------------------------------------------------------------------------------------------
def test_overhead_is_validated_as_limits():
    assert pod_errors(with_containers(container(), overhead={"cpu": "-1", "memory": "120Mi"})) == [
        'spec.overhead.limits[cpu]: Invalid value: "-1": must be greater than or equal to 0']
    assert pod_errors(with_containers(container(), overhead={"cpus": "1", "memory": "1Mi"})) == [
        'spec.overhead.limits[cpus]: Invalid value: "cpus": must be a standard resource type or fully qualified',
        'spec.overhead.limits[cpus]: Invalid value: "cpus": must be a standard resource for containers',
    ]


def test_pod_level_resources():
    spec = with_containers(
        container("a", resources={"requests": {"cpu": "1", "memory": "1Gi", "nvidia.com/gpu": "1"},
                                  "limits": {"cpu": "3", "nvidia.com/gpu": "1"}}),
        container("b", resources={"requests": {"cpu": "500m", "memory": "1Gi"}}),
        resources={"requests": {"cpu": "1", "memory": "4Gi"}, "limits": {"cpu": "2"}})
    assert pod_errors(spec) == [
        'spec.resources.requests[cpu]: Invalid value: "1": must be greater than or equal to aggregate container '
        'requests of 1500m',
        'spec.resources.containers[0][cpu].limits: Invalid value: "3": must be less than or equal to pod limits of 2',
    ]
    spec = with_containers(container(), resources={"requests": {"nvidia.com/gpu": "1", "ephemeral-storage": "1Gi"}})
    assert pod_errors(spec) == [
        'spec.resources.requests[nvidia.com/gpu]: Unsupported value: "nvidia.com/gpu": supported values: "cpu", '
        '"hugepages-", "memory"',
        "spec.resources.limits: Required value: Limit must be set for non overcommitable resources",
        'spec.resources.requests[ephemeral-storage]: Unsupported value: "ephemeral-storage": supported values: '
        '"cpu", "hugepages-", "memory"',
    ]
    spec = with_containers(container(), resources={"requests": {"cpu": "2"}, "limits": {"cpu": "1"},
                                                   "claims": [{"name": "gpu"}]})
    assert pod_errors(spec) == [
        "spec.resources.claims: Forbidden: claims cannot be set for Resources at pod-level",
        'spec.resources.requests: Invalid value: "2": must be less than or equal to cpu limit of 1',
    ]


# --------------------------------------------------------------------------------------------
# Node selection: nodeSelector, node affinity
# --------------------------------------------------------------------------------------------
def test_node_selector_labels():
    assert pod_errors(with_containers(container(), nodeSelector={"disk type": "ssd", "zone": "us east"})) == [
        f'spec.nodeSelector: Invalid value: "disk type": name part {QNAME}',
        f'spec.nodeSelector: Invalid value: "us east": {LABEL_VALUE}',
    ]


def required_node_affinity(*terms):
    return {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": list(terms)}}}


NA = "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution"


def test_required_node_affinity():
    assert pod_errors(with_containers(container(), affinity=required_node_affinity())) == [
        f"{NA}.nodeSelectorTerms: Required value: must have at least one node selector term"]
    affinity = required_node_affinity({"matchExpressions": [
        {"key": "zone", "operator": "Near", "values": ["a"]},
        {"key": "zone", "operator": "In"},
        {"key": "zone", "operator": "Exists", "values": ["a"]},
        {"key": "gpus", "operator": "Gt", "values": ["1", "2"]},
        {"key": "bad key", "operator": "In", "values": ["not valid!"]},
        {"key": "gpus", "operator": "Lt", "values": ["abc"]},  # not an integer: upstream does not check
    ]})
    t = f"{NA}.nodeSelectorTerms[0]"
    assert pod_errors(with_containers(container(), affinity=affinity)) == [
        f'{t}.matchExpressions[0].operator: Invalid value: "Near": not a valid selector operator',
        f"{t}.matchExpressions[1].values: Required value: must be specified when `operator` is 'In' or 'NotIn'",
        f"{t}.matchExpressions[2].values: Forbidden: may not be specified when `operator` is 'Exists' or "
        "'DoesNotExist'",
        f"{t}.matchExpressions[3].values: Required value: must be specified single value when `operator` is 'Lt' or "
        "'Gt'",
        f'{t}.matchExpressions[4].key: Invalid value: "bad key": name part {QNAME}',
        f'{t}.matchExpressions[4].values[0]: Invalid value: "not valid!": {LABEL_VALUE}',
    ]


def test_node_affinity_match_fields():
    affinity = required_node_affinity({"matchFields": [
        {"key": "metadata.name", "operator": "In", "values": ["a", "b"]},
        {"key": "metadata.labels", "operator": "NotIn", "values": ["a"]},
        {"key": "metadata.name", "operator": "Exists"},
        {"key": "metadata.name", "operator": "In", "values": ["Node_1"]},
    ]})
    t = f"{NA}.nodeSelectorTerms[0]"
    assert pod_errors(with_containers(container(), affinity=affinity)) == [
        f"{t}.matchFields[0].values: Required value: must be only one value when `operator` is 'In' or 'NotIn' for "
        "node field selector",
        f'{t}.matchFields[1].key: Invalid value: "metadata.labels": not a valid field selector key',
        f'{t}.matchFields[2].operator: Invalid value: "Exists": not a valid selector operator',
        f'{t}.matchFields[3].values[0]: Invalid value: "Node_1": {SUBDOMAIN}',
    ]


def test_preferred_node_affinity_weights_and_keys():
    affinity = {"nodeAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
        {"weight": 0, "preference": {"matchExpressions": [{"key": "a", "operator": "Exists"}]}},
        {"weight": 101, "preference": {"matchExpressions": [{"key": "b c", "operator": "In", "values": ["x y"]}]}},
    ]}}
    p = "spec.affinity.nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution"
    assert pod_errors(with_containers(container(), affinity=affinity)) == [
        f"{p}[0].weight: Invalid value: 0: must be in the range 1-100",
        f"{p}[1].weight: Invalid value: 101: must be in the range 1-100",
        f'{p}[1].preference.matchExpressions[0].key: Invalid value: "b c": name part {QNAME}',
    ]


# --------------------------------------------------------------------------------------------
# Pod (anti-)affinity and label selectors
# --------------------------------------------------------------------------------------------
PA = "spec.affinity.podAffinity.requiredDuringSchedulingIgnoredDuringExecution"


def test_pod_affinity_term_needs_a_topology_key():
    affinity = {"podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
        {"labelSelector": {"matchLabels": {"app": "db"}}},
        {"labelSelector": {"matchLabels": {"app": "db"}}, "topologyKey": "zone/"},
    ]}}
    assert pod_errors(with_containers(container(), affinity=affinity)) == [
        f"{PA}[0].topologyKey: Required value: can not be empty",
        f'{PA}[0].topologyKey: Invalid value: "": name part must be non-empty',
        f'{PA}[0].topologyKey: Invalid value: "": name part {QNAME}',
        f'{PA}[1].topologyKey: Invalid value: "zone/": name part must be non-empty',
        f'{PA}[1].topologyKey: Invalid value: "zone/": name part {QNAME}',
    ]


def test_pod_affinity_namespaces_and_weights():
    affinity = {"podAntiAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
        {"weight": 0, "podAffinityTerm": {"topologyKey": "zone", "namespaces": ["Team"],
                                          "labelSelector": {"matchLabels": {"app": "db"}}}}]}}
    p = "spec.affinity.podAntiAffinity.preferredDuringSchedulingIgnoredDuringExecution[0]"
    assert pod_errors(with_containers(container(), affinity=affinity)) == [
        f"{p}.weight: Invalid value: 0: must be in the range 1-100",
        # upstream names the field "namespace"
        f'{p}.podAffinityTerm.namespace: Invalid value: "Team": {DNS_LABEL}',
    ]


def test_invalid_selectors_in_typed_terms_are_reported_with_upstream_paths():
    term = PodAffinityTerm(topology_key="zone",
                           label_selector=LabelSelector([("app", "Near", ("a",)), ("tier", "In", ())]),
                           namespace_selector=LabelSelector([("team", "Exists", ("x",))]))
    web = Pod(name="web", containers=(Container(name="c", image="i"),),
              affinity=Affinity(pod_affinity=PodAffinity(required=(term,))))
    assert messages(web) == [
        f'{PA}[0].labelSelector.matchExpressions[0].operator: Invalid value: "Near": not a valid selector operator',
        f"{PA}[0].labelSelector.matchExpressions[1].values: Required value: must be specified when `operator` is "
        "'In' or 'NotIn'",
        f"{PA}[0].namespaceSelector.matchExpressions[0].values: Forbidden: may not be specified when `operator` is "
        "'Exists' or 'DoesNotExist'",
    ]


def test_validate_label_selector_on_raw_maps():
    raw = {"matchLabels": {"app": "web", "bad key": "v", "ok": "bad value!"},
           "matchExpressions": [{"key": "tier", "operator": "NotIn"},
                                {"key": "tier", "operator": "In", "values": ["front end"]},
                                {"key": "env", "operator": "Gt", "values": ["1"]}]}
    assert [str(e) for e in validate_label_selector(raw, "spec.selector")] == [
        f'spec.selector.matchLabels: Invalid value: "bad key": name part {QNAME}',
        f'spec.selector.matchLabels: Invalid value: "bad value!": {LABEL_VALUE}',
        "spec.selector.matchExpressions[0].values: Required value: must be specified when `operator` is 'In' or "
        "'NotIn'",
        f'spec.selector.matchExpressions[1].values[0]: Invalid value: "front end": {LABEL_VALUE}',
        'spec.selector.matchExpressions[2].operator: Invalid value: "Gt": not a valid selector operator',
    ]
    assert validate_label_selector({"match_labels": {"app": "web"}}, FieldPath("s")) == []  # snake_case too
    assert validate_label_selector(None, "s") == []


def test_pod_affinity_match_label_keys():
    def affinity(term):
        return {"podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [{"topologyKey": "zone", **term}]}}

    labels = {"app": "web", "pod-template-hash": "abc"}
    no_selector = affinity({"matchLabelKeys": ["pod-template-hash"], "mismatchLabelKeys": ["app"]})
    assert pod_errors(with_containers(container(), affinity=no_selector), labels=labels) == [
        f"{PA}[0].matchLabelKeys: Forbidden: must not be specified when labelSelector is not set",
        f"{PA}[0].mismatchLabelKeys: Forbidden: must not be specified when labelSelector is not set",
    ]
    both = affinity({"labelSelector": {"matchLabels": {"pod-template-hash": "abc"}},
                     "matchLabelKeys": ["bad key", "pod-template-hash"], "mismatchLabelKeys": ["bad key"]})
    assert pod_errors(with_containers(container(), affinity=both), labels=labels) == [
        f'{PA}[0].matchLabelKeys[0]: Invalid value: "bad key": name part {QNAME}',
        f'{PA}[0].mismatchLabelKeys[0]: Invalid value: "bad key": name part {QNAME}',
        # after the API server merged the key into the selector, it is there twice (upstream's path)
        f'{PA}[0][1]: Invalid value: "pod-template-hash": exists in both matchLabelKeys and labelSelector',
        f'{PA}[0].matchLabelKeys[0]: Invalid value: "bad key": exists in both matchLabelKeys and mismatchLabelKeys',
    ]
    # a key the pod has no label for merges nothing, so it does not clash
    absent = affinity({"labelSelector": {"matchLabels": {"track": "x"}}, "matchLabelKeys": ["track"]})
    assert pod_errors(with_containers(container(), affinity=absent), labels=labels) == []


# --------------------------------------------------------------------------------------------
# Tolerations and taints
# --------------------------------------------------------------------------------------------
def test_tolerations():
    spec = with_containers(container(), tolerations=[
        {"effect": "NoSchedule"},
        {"key": "a", "operator": "Maybe"},
        {"key": "a", "operator": "Exists", "value": "x"},
        {"key": "a", "value": "not valid!"},
        {"key": "a", "operator": "Equal", "value": "v", "effect": "Sometimes"},
        {"key": "a", "operator": "Exists", "effect": "NoSchedule", "tolerationSeconds": 60},
        {"key": "bad key", "operator": "Exists"},
    ])
    t = "spec.tolerations"
    assert pod_errors(spec) == [
        f'{t}[0].operator: Invalid value: "": operator must be Exists when `key` is empty, which means "match all '
        'values and all keys"',
        f'{t}[1].operator: Unsupported value: "Maybe": supported values: "Equal", "Exists"',
        f"{t}[2].operator: Invalid value: \"x\": value must be empty when `operator` is 'Exists'",
        f'{t}[3].operator: Invalid value: "not valid!": {LABEL_VALUE}',
        f'{t}[4].effect: Unsupported value: "Sometimes": supported values: "NoSchedule", "PreferNoSchedule", '
        '"NoExecute"',
        f"{t}[5].effect: Invalid value: \"NoSchedule\": effect must be 'NoExecute' when `tolerationSeconds` is set",
        f'{t}[6].key: Invalid value: "bad key": name part {QNAME}',
    ]
    # built in code, the operator is "Equal" (what the loader stores for an empty one)
    assert messages(Pod(name="w", containers=(Container(name="c", image="i"),), tolerations=(Toleration(),))) == [
        f'{t}[0].operator: Invalid value: "Equal": operator must be Exists when `key` is empty, which means "match '
        'all values and all keys"']


def test_node_taints_are_reported_under_metadata_as_upstream_does():
    spec = {"taints": [
        {"key": "dedicated", "value": "gpu", "effect": "NoSchedule"},
        {"key": "", "effect": ""},
        {"key": "dedicated", "value": "other", "effect": "NoSchedule"},
        {"key": "spot", "value": "yes please", "effect": "Sometimes"},
        {"key": "dedicated", "value": "gpu", "effect": "NoExecute", "timeAdded": "2024-05-01T10:00:00Z"},
    ]}
    t = "metadata.taints"
    assert messages(node(spec)) == [
        f'{t}[1].key: Invalid value: "": name part must be non-empty',
        f'{t}[1].key: Invalid value: "": name part {QNAME}',
        f"{t}[1].effect: Required value",
        f'{t}[2]: Duplicate value: {{"Key":"dedicated","Value":"other","Effect":"NoSchedule","TimeAdded":null}}: '
        "taints must be unique by key and effect pair",
        f'{t}[3].value: Invalid value: "yes please": {LABEL_VALUE}',
        f'{t}[3].effect: Unsupported value: "Sometimes": supported values: "NoSchedule", "PreferNoSchedule", '
        '"NoExecute"',
    ]


# --------------------------------------------------------------------------------------------
# Topology spread constraints
# --------------------------------------------------------------------------------------------
TSC = "spec.topologySpreadConstraints"


def test_topology_spread_constraint_fields():
    constraints = [
        {"maxSkew": 0, "topologyKey": "zone", "whenUnsatisfiable": "Never"},
        {"maxSkew": 1, "topologyKey": "", "whenUnsatisfiable": "DoNotSchedule", "minDomains": 0},
        {"maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": "ScheduleAnyway", "minDomains": 2,
         "nodeAffinityPolicy": "Sometimes", "nodeTaintsPolicy": "Always"},
        {"maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": "ScheduleAnyway"},
    ]
    assert pod_errors(with_containers(container(), topologySpreadConstraints=constraints)) == [
        f"{TSC}[0].maxSkew: Invalid value: 0: must be greater than zero",
        f'{TSC}[0].whenUnsatisfiable: Unsupported value: "Never": supported values: "DoNotSchedule", "ScheduleAnyway"',
        f"{TSC}[1].topologyKey: Required value: can not be empty",
        f"{TSC}[1].minDomains: Invalid value: 0: must be greater than zero",
        f'{TSC}[2].{{topologyKey, whenUnsatisfiable}}: Duplicate value: "{{zone, ScheduleAnyway}}"',
        f"{TSC}[2].minDomains: Invalid value: 2: can only use minDomains if whenUnsatisfiable=DoNotSchedule, not "
        "ScheduleAnyway",
        f'{TSC}[2].nodeAffinityPolicy: Unsupported value: "Sometimes": supported values: "Honor", "Ignore"',
        f'{TSC}[2].nodeTaintsPolicy: Unsupported value: "Always": supported values: "Honor", "Ignore"',
    ]


def test_topology_spread_match_label_keys_and_selector():
    labels = {"app": "web", "pod-template-hash": "abc"}
    constraints = [
        {"maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": "DoNotSchedule",
         "matchLabelKeys": ["pod-template-hash"]},
        {"maxSkew": 1, "topologyKey": "host", "whenUnsatisfiable": "DoNotSchedule",
         "labelSelector": {"matchLabels": {"app": "web", "pod-template-hash": "abc"}},
         "matchLabelKeys": ["pod-template-hash", "bad key"]},
        {"maxSkew": 1, "topologyKey": "rack", "whenUnsatisfiable": "DoNotSchedule",
         "labelSelector": {"matchLabels": {"app": "web"}}, "matchLabelKeys": ["pod-template-hash"]},
    ]
    assert pod_errors(with_containers(container(), topologySpreadConstraints=constraints), labels=labels) == [
        f"{TSC}[0].matchLabelKeys: Forbidden: must not be specified when labelSelector is not set",
        f'{TSC}[1].matchLabelKeys[1]: Invalid value: "bad key": name part {QNAME}',
        f'{TSC}[1][0]: Invalid value: "pod-template-hash": exists in both matchLabelKeys and labelSelector',
    ]


# --------------------------------------------------------------------------------------------
# Other pod spec fields
# --------------------------------------------------------------------------------------------
def test_scheduling_gates_and_node_name():
    spec = with_containers(container(), schedulingGates=[{"name": "example.com/gate"}, {"name": "bad gate"},
                                                         {"name": "example.com/gate"}], nodeName="node-1")
    assert pod_errors(spec) == [
        f'spec.schedulingGates[1]: Invalid value: "bad gate": name part {QNAME}',
        'spec.schedulingGates[2]: Duplicate value: "example.com/gate"',
        "spec.nodeName: Forbidden: cannot be set until all schedulingGates have been cleared",
    ]
    assert pod_errors(with_containers(container(), nodeName="Node_1")) == [
        f'spec.nodeName: Invalid value: "Node_1": {SUBDOMAIN}']


def test_priority_class_name_and_preemption_policy():
    spec = with_containers(container(), priorityClassName="High", preemptionPolicy="Sometimes")
    assert pod_errors(spec) == [
        f'spec.priorityClassName: Invalid value: "High": {SUBDOMAIN}',
        'spec.preemptionPolicy: Unsupported value: "Sometimes": supported values: "PreemptLowerPriority", "Never"',
    ]


def test_validate_pod_spec_for_templates():
    template = pod(with_containers(container(ports=[{"containerPort": 80, "hostPort": 0}]), hostNetwork=True,
                                   nodeSelector={"a": "b c"}))
    # templates may leave hostPort unset (it is defaulted when the pod is created); the loader defaults it
    assert [str(e) for e in validate_pod_spec(template, "spec.template.spec")] == [
        f'spec.template.spec.nodeSelector: Invalid value: "b c": {LABEL_VALUE}']


# --------------------------------------------------------------------------------------------
# Nodes, namespaces, priority classes, PDBs
# --------------------------------------------------------------------------------------------
def test_node_capacity_and_allocatable():
    status = {"capacity": {"cpu": "-4", "memory": "-8Gi", "pods": "110.5", "example.com/dongle": "1.5",
                           "cpus": "2"},
              "allocatable": {"cpu": "3500m", "memory": "7Gi", "pods": "-1"}}
    assert messages(node(status=status)) == [
        'status.capacity.cpu: Invalid value: "-4": must be greater than or equal to 0',
        'status.capacity.memory: Invalid value: "-8Gi": must be greater than or equal to 0',
        'status.capacity.pods: Invalid value: "110500m": must be an integer',
        'status.capacity.example.com/dongle: Invalid value: "1500m": must be an integer',
        'status.allocatable.pods: Invalid value: "-1": must be greater than or equal to 0',
    ]
    # allocatable defaults to capacity, and is then validated too
    assert messages(node(status={"capacity": {"cpu": "-1"}})) == [
        'status.capacity.cpu: Invalid value: "-1": must be greater than or equal to 0',
        'status.allocatable.cpu: Invalid value: "-1": must be greater than or equal to 0',
    ]


def test_node_labels_and_name():
    assert messages(node(name="", labels={"kubernetes.io/hostname": "Not Valid"})) == [
        "metadata.name: Required value: name or generateName is required",
        f'metadata.labels: Invalid value: "Not Valid": {LABEL_VALUE}',
    ]


def test_namespaces():
    long_name = "a" * 64
    assert messages(parse_namespace({"metadata": {"name": long_name}})) == [
        f'metadata.name: Invalid value: "{long_name}": must be no more than 63 characters',
        # the kubernetes.io/metadata.name label carries the name (a label value: content.IsLabelValue, bytes)
        f'metadata.labels: Invalid value: "{long_name}": must be no more than 63 bytes',
    ]


def test_priority_classes():
    def pc(name, value, **fields):
        return messages(parse_priority_class({"metadata": {"name": name}, "value": value, **fields}))

    prefix = "metadata.name: Forbidden: priority class names with 'system-' prefix are reserved for system use only."
    assert pc("system-mine", 10) == [f"{prefix} error: system-mine is not a known system priority class"]
    assert pc("system-node-critical", 2000000000) == [
        f"{prefix} error: value of system-node-critical PriorityClass must be 2000001000"]
    assert pc("system-cluster-critical", 2000000000, globalDefault=True) == [
        f"{prefix} error: globalDefault of system-cluster-critical PriorityClass must be false"]
    assert pc("huge", 1000000001) == [
        "value: Forbidden: maximum allowed value of a user defined priority is 1000000000"]
    assert pc("ok", 1000000000) == [] and pc("negative", -5) == []
    assert pc("p", 1, preemptionPolicy="Sometimes") == [
        'preemptionPolicy: Unsupported value: "Sometimes": supported values: "PreemptLowerPriority", "Never"']


def test_pod_disruption_budgets():
    def pdb(spec, name="web-pdb"):
        return messages(parse_pod_disruption_budget({"metadata": {"name": name, "namespace": "prod"}, "spec": spec}))

    assert pdb({"minAvailable": 2, "maxUnavailable": "10%", "selector": {"matchLabels": {"app": "web"}}}) == [
        'spec: Invalid value: {"MinAvailable":2,"Selector":{"matchLabels":{"app":"web"}},"MaxUnavailable":"10%",'
        '"UnhealthyPodEvictionPolicy":null}: minAvailable and maxUnavailable cannot be both set']
    assert pdb({"minAvailable": -1}) == [
        "spec.minAvailable: Invalid value: -1: must be greater than or equal to 0"]
    assert pdb({"maxUnavailable": "half"}) == [
        "spec.maxUnavailable: Invalid value: \"half\": a valid percent string must be a numeric string followed by "
        "an ending '%' (e.g. '1%',  or '93%', regex used for validation is '[0-9]+%')"]
    assert pdb({"maxUnavailable": "101%"}) == [
        'spec.maxUnavailable: Invalid value: "101%": must not be greater than 100%']
    # only the path-segment rule applies to PDB names, and only once the spec is valid
    assert pdb({"minAvailable": 1}, name="Web_PDB") == []
    assert pdb({"minAvailable": 1}, name="web/pdb") == [
        "metadata.name: Invalid value: \"web/pdb\": may not contain '/'"]
    assert pdb({"minAvailable": -1}, name="web/pdb") == [
        "spec.minAvailable: Invalid value: -1: must be greater than or equal to 0"]
    typed = PodDisruptionBudget(name="p", selector=LabelSelector([("app", "Near", ("x",))]))
    assert messages(typed) == [
        'spec.selector.matchExpressions[0].operator: Invalid value: "Near": not a valid selector operator']


# --------------------------------------------------------------------------------------------
# Quantities: upstream's canonical strings
# --------------------------------------------------------------------------------------------
@pytest.mark.parametrize(("nanos", "fmt", "expected"), [
    (0, "BinarySI", "0"),
    (-10**9, "DecimalSI", "-1"),
    (5 * 10**8, "DecimalSI", "500m"),
    (15 * 10**8, "DecimalSI", "1500m"),
    (10**12, "DecimalSI", "1k"),
    (10**12, "DecimalExponent", "1e3"),
    (2**30 * 10**9, "BinarySI", "1Gi"),
    (1000 * 2**20 * 10**9, "BinarySI", "1000Mi"),
    (512 * 10**9, "BinarySI", "512"),  # below 1024: shown decimal
    (3 * 2**19 * 10**9 + 5 * 10**8, "BinarySI", "1572864500m"),  # not whole: shown decimal
    (-(2**29) * 10**9, "BinarySI", "-512Mi"),
    (110_500 * 10**6, "DecimalSI", "110500m"),
])
def test_quantity_string(nanos, fmt, expected):
    assert quantity_string(nanos, fmt) == expected


def test_quantities_in_messages_keep_their_format():
    spec = with_containers(container(resources={"requests": {"memory": "-1.5Gi", "cpu": "-1e3",
                                                             "ephemeral-storage": "-0.5Gi"}}))
    assert pod_errors(spec) == [
        'spec.containers[0].resources.requests[memory]: Invalid value: "-1536Mi": must be greater than or equal to 0',
        'spec.containers[0].resources.requests[cpu]: Invalid value: "-1e3": must be greater than or equal to 0',
        'spec.containers[0].resources.requests[ephemeral-storage]: Invalid value: "-512Mi": must be greater than or '
        'equal to 0',
    ]


def test_huge_quantities_are_accepted_as_upstream_accepts_them():
    # ParseQuantity caps binary-suffixed values at 2^63-1 and keeps decimal ones (no error);
    # fastsched clamps them at 10^100 and saturates the integer amounts.
    spec = with_containers(container(resources={"requests": {"memory": "1e400", "cpu": "9Ei"}}))
    assert pod_errors(spec) == []


# --------------------------------------------------------------------------------------------
# Manifest spellings and entry points
# --------------------------------------------------------------------------------------------
def test_kubernetes_client_snake_case_manifests():
    client_pod = parse_pod({
        "api_version": "v1", "kind": "Pod", "metadata": {"name": "web", "namespace": "default"},
        "spec": {"containers": [{"name": "app", "image": "nginx",
                                 "resources": {"requests": {"memory": "-1Gi"}, "limits": None}}],
                 "node_selector": {"disk": "ssd"},
                 "tolerations": [{"key": None, "operator": None, "value": None, "effect": "NoSchedule"}]},
    })
    assert messages(client_pod) == [
        'spec.containers[0].resources.requests[memory]: Invalid value: "-1Gi": must be greater than or equal to 0',
        'spec.tolerations[0].operator: Invalid value: "": operator must be Exists when `key` is empty, which means '
        '"match all values and all keys"',
    ]
    client_node = parse_node({"metadata": {"name": "n"}, "status": {"capacity": {"cpu": "4", "memory": "-1Ki"},
                                                                    "allocatable": {"cpu": "4", "memory": "1Ki"}}})
    assert messages(client_node) == ['status.capacity.memory: Invalid value: "-1Ki": must be greater than or equal to 0']


def test_too_long_errors_render_without_a_value():
    error = validate(pod(annotations={"k": "v" * 300000}))[0]
    assert error.path == "metadata.annotations" and error.body() == "Too long: may not be more than 262144 bytes"


def test_validate_pod_spec_takes_a_string_path_and_reports_template_paths():
    template = pod(with_containers(container(image="", resources={"limits": {"cpu": "-1"}})))
    assert [str(e) for e in validate_pod_spec(template, "spec.template.spec")] == [
        "spec.template.spec.containers[0].image: Required value",
        'spec.template.spec.containers[0].resources.limits[cpu]: Invalid value: "-1": must be greater than or '
        'equal to 0',
        'spec.template.spec.containers[0].resources.requests[cpu]: Invalid value: "-1": must be greater than or '
        'equal to 0',
    ]
