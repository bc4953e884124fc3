#!/usr/bin/env python3
"""Generate ``fastsched/api/_schema.json`` from the official ``kubernetes`` Python client models.

Developer script, not run by CI. The client is never a dependency of fastsched: install it into a
throwaway virtualenv and run this script with that interpreter::

    python3 -m venv /tmp/k8s34
    /tmp/k8s34/bin/pip install kubernetes==34.1.0
    /tmp/k8s34/bin/python tools/generate_api_schema.py          # writes fastsched/api/_schema.json
    /tmp/k8s34/bin/python tools/generate_api_schema.py --check  # exit 1 if the file is stale

Every generated model class of the client has ``openapi_types`` (python attribute -> type string
such as ``'str'``, ``'list[V1Container]'``, ``'dict(str, str)'``, ``'V1PodSpec'``) and
``attribute_map`` (python attribute -> JSON name). Starting from the root kinds below, the
script walks the transitive closure of referenced model classes and writes compact JSON::

    {
      "client": "34.1.0",                     # kubernetes client version the schema came from
      "kinds": {"Pod": "V1Pod", ...},         # root kind -> model name
      "apiVersions": {"Pod": "v1", ...},      # root kind -> the group/version the model describes
      "fragments": {"ObjectMeta": "V1ObjectMeta", ...},  # decodable non-kind entry points
      "types": {"V1Pod": {"apiVersion": "str", "metadata": "V1ObjectMeta", ...}, ...},
      "snake": {"apiVersion": "api_version", ...}  # JSON name -> client attribute name, where they differ
    }

``types`` is keyed by JSON field names, in the client's field order. ``snake`` is one global table:
the client derives attribute names from JSON names with a fixed rule (``hostIPs`` ->
``host_i_ps``, ``exec`` -> ``_exec``), so a JSON name has the same attribute name in every type;
the script asserts that.
"""
from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

CLIENT_VERSION = "34.1.0"

# kind -> (apiVersion, client model name)
ROOT_KINDS: dict[str, tuple[str, str]] = {
    # core/v1
    "Pod": ("v1", "V1Pod"),
    "Node": ("v1", "V1Node"),
    "Namespace": ("v1", "V1Namespace"),
    "Service": ("v1", "V1Service"),
    "ReplicationController": ("v1", "V1ReplicationController"),
    "PersistentVolume": ("v1", "V1PersistentVolume"),
    "PersistentVolumeClaim": ("v1", "V1PersistentVolumeClaim"),
    # scheduling.k8s.io/v1
    "PriorityClass": ("scheduling.k8s.io/v1", "V1PriorityClass"),
    # policy/v1
    "PodDisruptionBudget": ("policy/v1", "V1PodDisruptionBudget"),
    # apps/v1
    "Deployment": ("apps/v1", "V1Deployment"),
    "ReplicaSet": ("apps/v1", "V1ReplicaSet"),
    "StatefulSet": ("apps/v1", "V1StatefulSet"),
    "DaemonSet": ("apps/v1", "V1DaemonSet"),
    # batch/v1
    "Job": ("batch/v1", "V1Job"),
    "CronJob": ("batch/v1", "V1CronJob"),
    # storage.k8s.io/v1
    "StorageClass": ("storage.k8s.io/v1", "V1StorageClass"),
    "CSINode": ("storage.k8s.io/v1", "V1CSINode"),
    "CSIDriver": ("storage.k8s.io/v1", "V1CSIDriver"),
    "CSIStorageCapacity": ("storage.k8s.io/v1", "V1CSIStorageCapacity"),
    # node.k8s.io/v1 (read by the RuntimeClass admission plugin)
    "RuntimeClass": ("node.k8s.io/v1", "V1RuntimeClass"),
    # resource.k8s.io/v1 (GA in 1.34; the 34.1.0 client has the v1 models). The v1 ResourceClaim
    # model is named ResourceV1ResourceClaim because core/v1 also has a ResourceClaim (the pod's
    # spec.resourceClaims[].* / containers[].resources.claims[] entry, CoreV1ResourceClaim).
    "ResourceSlice": ("resource.k8s.io/v1", "V1ResourceSlice"),
    "DeviceClass": ("resource.k8s.io/v1", "V1DeviceClass"),
    "ResourceClaim": ("resource.k8s.io/v1", "ResourceV1ResourceClaim"),
    "ResourceClaimTemplate": ("resource.k8s.io/v1", "V1ResourceClaimTemplate"),
}

# Entry points that are not kinds: pieces of manifests (pod templates in workload generators).
FRAGMENTS: dict[str, str] = {
    "PodTemplateSpec": "V1PodTemplateSpec",
    "ObjectMeta": "V1ObjectMeta",
}

# Fields of k8s.io/api@v0.37.2 the scheduler reads that the 34.1.0 client models lack (model ->
# JSON name -> client type string, attribute name), added after the walk. Drop an entry when the
# client is moved to a release that has it.
FIELDS_AFTER_CLIENT: dict[str, dict[str, tuple[str, str]]] = {
    # core/v1 types.go: NodeStatus.DeclaredFeatures (NodeDeclaredFeatures, GA in 1.37)
    "V1NodeStatus": {"declaredFeatures": ("list[str]", "declared_features")},
    # core/v1 types.go: VolumeMount.BindMountOptions (VolumeBindMountOptions, alpha; read by
    # NodeDeclaredFeatures' inference)
    "V1VolumeMount": {"bindMountOptions": ("list[str]", "bind_mount_options")},
    # storage/v1 types.go: CSIDriverSpec.PreventPodSchedulingIfMissing (VolumeLimitScaling, beta in
    # 1.37; read by NodeVolumeLimits' Filter)
    "V1CSIDriverSpec": {"preventPodSchedulingIfMissing": ("bool", "prevent_pod_scheduling_if_missing")},
    # core/v1 types.go: PodSpec.SchedulingGroup (GenericWorkload, beta in 1.37)
    "V1PodSpec": {"schedulingGroup": ("V1PodSchedulingGroup", "scheduling_group")},
    # batch/v1 types.go: JobSpec.Scheduling (WorkloadWithJob, alpha; read by the Job controller)
    "V1JobSpec": {"scheduling": ("V1JobSchedulingConfiguration", "scheduling")},
    # resource/v1 types.go: DeviceAttribute's list values (DRAListTypeAttributes, alpha; read by the
    # DRA allocator and CEL)
    "V1DeviceAttribute": {"bools": ("list[bool]", "bools"), "ints": ("list[int]", "ints"),
                          "strings": ("list[str]", "strings"), "versions": ("list[str]", "versions")},
    # resource/v1 types.go: DeviceCounterConsumption.CompatibilityGroups (DRADeviceCompatibilityGroups,
    # alpha; read by the DRA allocator)
    "V1DeviceCounterConsumption": {"compatibilityGroups": ("list[str]", "compatibility_groups")},
    # resource/v1 types.go: ExactDeviceRequest.DerivedAttributes and DeviceSubRequest.DerivedAttributes
    # (DRADerivedAttributes, alpha; dropped on create without the gate)
    "V1ExactDeviceRequest": {"derivedAttributes": ("list[V1DeviceDerivedAttribute]", "derived_attributes")},
    "V1DeviceSubRequest": {"derivedAttributes": ("list[V1DeviceDerivedAttribute]", "derived_attributes")},
    # resource/v1 types.go: ResourceSliceSpec.SkipNodeOperations and
    # DeviceRequestAllocationResult.SkipNodeOperations (DRAOptionalNodeOperations, alpha; read by the
    # DRA allocator and DynamicResources' Filter)
    "V1ResourceSliceSpec": {"skipNodeOperations": ("list[str]", "skip_node_operations")},
    "V1DeviceRequestAllocationResult": {"skipNodeOperations": ("list[str]", "skip_node_operations")},
    # resource/v1 types.go: Device.NodeAllocatableResources (DRANodeAllocatableResources, alpha;
    # dropped on create without the gate, validated with it)
    "V1Device": {"nodeAllocatableResources": ("dict(str, V1NodeAllocatableResource)", "node_allocatable_resources")},
    # core/v1 types.go: PodStatus.NodeAllocatableResourceClaimStatuses (DRANodeAllocatableResources,
    # alpha; written by DynamicResources' PreBind, dropped on create without the gate)
    "V1PodStatus": {"nodeAllocatableResourceClaimStatuses": ("list[V1NodeAllocatableResourceClaimStatus]",
                                                             "node_allocatable_resource_claim_statuses")},
}

# Kinds of k8s.io/api@v0.37.2 the 34.1.0 client has no models for, written here in the client's
# form (model -> JSON name -> (client type string, Go type as encoding/json names it)): the
# scheduling.k8s.io/v1beta1 Workload and PodGroup (GenericWorkload, beta in 1.37;
# api/scheduling/v1beta1/types.go) and core/v1's PodSchedulingGroup. tools/generate_go_types.py
# takes the Go types from here too. Drop them when the client is moved to a release that has them.
ROOT_KINDS_AFTER_CLIENT: dict[str, tuple[str, str]] = {
    "Workload": ("scheduling.k8s.io/v1beta1", "V1beta1Workload"),
    "PodGroup": ("scheduling.k8s.io/v1beta1", "V1beta1PodGroup"),
    # scheduling.k8s.io/v1alpha3 only (CompositePodGroup, alpha in 1.37; api/scheduling/v1alpha3/types.go)
    "CompositePodGroup": ("scheduling.k8s.io/v1alpha3", "V1alpha3CompositePodGroup"),
    # resource.k8s.io/v1 since 1.37 (api/resource/v1/types.go); the client's V1ObjectMeta,
    # V1DeviceTaint and V1Condition are referenced, not repeated
    "DeviceTaintRule": ("resource.k8s.io/v1", "V1DeviceTaintRule"),
}
MODELS_AFTER_CLIENT: dict[str, dict[str, tuple[str, str]]] = {
    # resource/v1 types.go: DeviceDerivedAttribute (DRADerivedAttributes, alpha)
    "V1DeviceDerivedAttribute": {"name": ("str", "v1.FullyQualifiedName"), "expression": ("str", "string")},
    "V1PodSchedulingGroup": {"podGroupName": ("str", "string")},
    "V1beta1Workload": {"apiVersion": ("str", "string"), "kind": ("str", "string"),
                        "metadata": ("V1ObjectMeta", "v1.ObjectMeta"), "spec": ("V1beta1WorkloadSpec", "v1beta1.WorkloadSpec")},
    "V1beta1WorkloadSpec": {
        "controllerRef": ("V1beta1TypedLocalObjectReference", "v1beta1.TypedLocalObjectReference"),
        "podGroupTemplates": ("list[V1beta1PodGroupTemplate]", "[]v1beta1.PodGroupTemplate"),
        "compositePodGroupTemplates": ("list[V1beta1CompositePodGroupTemplate]", "[]v1beta1.CompositePodGroupTemplate")},
    "V1beta1TypedLocalObjectReference": {"apiGroup": ("str", "string"), "kind": ("str", "string"),
                                         "name": ("str", "string")},
    "V1beta1PodGroupTemplate": {
        "name": ("str", "string"),
        "schedulingPolicy": ("V1beta1PodGroupSchedulingPolicy", "v1beta1.PodGroupSchedulingPolicy"),
        "schedulingConstraints": ("V1beta1PodGroupSchedulingConstraints", "v1beta1.PodGroupSchedulingConstraints"),
        "resourceClaims": ("list[V1beta1PodGroupResourceClaim]", "[]v1beta1.PodGroupResourceClaim"),
        "disruptionMode": ("V1beta1DisruptionMode", "v1beta1.DisruptionMode"),
        "priorityClassName": ("str", "string"), "priority": ("int", "int32"),
        "preemptionPolicy": ("str", "v1beta1.PreemptionPolicy")},
    "V1beta1CompositePodGroupTemplate": {
        "name": ("str", "string"),
        "schedulingPolicy": ("V1beta1CompositePodGroupSchedulingPolicy", "v1beta1.CompositePodGroupSchedulingPolicy"),
        "schedulingConstraints": ("V1beta1CompositePodGroupSchedulingConstraints",
                                  "v1beta1.CompositePodGroupSchedulingConstraints"),
        "disruptionMode": ("V1beta1CompositeDisruptionMode", "v1beta1.CompositeDisruptionMode"),
        "priorityClassName": ("str", "string"), "priority": ("int", "int32"),
        "preemptionPolicy": ("str", "v1beta1.PreemptionPolicy"),
        "podGroupTemplates": ("list[V1beta1PodGroupTemplate]", "[]v1beta1.PodGroupTemplate"),
        "compositePodGroupTemplates": ("list[V1beta1CompositePodGroupTemplate]", "[]v1beta1.CompositePodGroupTemplate")},
    "V1beta1PodGroupSchedulingPolicy": {
        "basic": ("V1beta1BasicSchedulingPolicy", "v1beta1.BasicSchedulingPolicy"),
        "gang": ("V1beta1GangSchedulingPolicy", "v1beta1.GangSchedulingPolicy")},
    "V1beta1BasicSchedulingPolicy": {},
    "V1beta1GangSchedulingPolicy": {"minCount": ("int", "int32")},
    "V1beta1CompositePodGroupSchedulingPolicy": {
        "basic": ("V1beta1CompositeBasicSchedulingPolicy", "v1beta1.CompositeBasicSchedulingPolicy"),
        "gang": ("V1beta1CompositeGangSchedulingPolicy", "v1beta1.CompositeGangSchedulingPolicy")},
    "V1beta1CompositeBasicSchedulingPolicy": {},
    "V1beta1CompositeGangSchedulingPolicy": {"minGroupCount": ("int", "int32")},
    "V1beta1PodGroupSchedulingConstraints": {
        "topology": ("list[V1beta1TopologyConstraint]", "[]v1beta1.TopologyConstraint")},
    "V1beta1CompositePodGroupSchedulingConstraints": {
        "topology": ("list[V1beta1TopologyConstraint]", "[]v1beta1.TopologyConstraint")},
    "V1beta1TopologyConstraint": {"key": ("str", "string")},
    "V1beta1PodGroupResourceClaim": {"name": ("str", "string"), "resourceClaimName": ("str", "string"),
                                     "resourceClaimTemplateName": ("str", "string")},
    "V1beta1DisruptionMode": {"single": ("V1beta1SingleDisruptionMode", "v1beta1.SingleDisruptionMode"),
                              "all": ("V1beta1AllDisruptionMode", "v1beta1.AllDisruptionMode")},
    "V1beta1SingleDisruptionMode": {},
    "V1beta1AllDisruptionMode": {},
    "V1beta1CompositeDisruptionMode": {
        "single": ("V1beta1SingleCompositeDisruptionMode", "v1beta1.SingleCompositeDisruptionMode"),
        "all": ("V1beta1AllCompositeDisruptionMode", "v1beta1.AllCompositeDisruptionMode")},
    "V1beta1SingleCompositeDisruptionMode": {},
    "V1beta1AllCompositeDisruptionMode": {},
    "V1beta1PodGroup": {"apiVersion": ("str", "string"), "kind": ("str", "string"),
                        "metadata": ("V1ObjectMeta", "v1.ObjectMeta"), "spec": ("V1beta1PodGroupSpec", "v1beta1.PodGroupSpec"),
                        "status": ("V1beta1PodGroupStatus", "v1beta1.PodGroupStatus")},
    "V1beta1PodGroupSpec": {
        "parentCompositePodGroupName": ("str", "string"),
        "workloadRef": ("V1beta1WorkloadReference", "v1beta1.WorkloadReference"),
        "schedulingPolicy": ("V1beta1PodGroupSchedulingPolicy", "v1beta1.PodGroupSchedulingPolicy"),
        "schedulingConstraints": ("V1beta1PodGroupSchedulingConstraints", "v1beta1.PodGroupSchedulingConstraints"),
        "resourceClaims": ("list[V1beta1PodGroupResourceClaim]", "[]v1beta1.PodGroupResourceClaim"),
        "disruptionMode": ("V1beta1DisruptionMode", "v1beta1.DisruptionMode"),
        "priorityClassName": ("str", "string"), "priority": ("int", "int32"),
        "preemptionPolicy": ("str", "v1beta1.PreemptionPolicy")},
    "V1beta1WorkloadReference": {"workloadName": ("str", "string"), "templateName": ("str", "string")},
    "V1beta1PodGroupStatus": {
        "conditions": ("list[V1Condition]", "[]v1.Condition"),
        "resourceClaimStatuses": ("list[V1beta1PodGroupResourceClaimStatus]", "[]v1beta1.PodGroupResourceClaimStatus")},
    "V1beta1PodGroupResourceClaimStatus": {"name": ("str", "string"), "resourceClaimName": ("str", "string")},
    # batch/v1 JobSchedulingConfiguration and its scheduling/v1alpha3 building blocks (api/batch/v1,
    # api/scheduling/v1alpha3 types.go)
    "V1JobSchedulingConfiguration": {
        "schedulingPolicy": ("V1alpha3WorkloadPodGroupSchedulingPolicy", "v1alpha3.WorkloadPodGroupSchedulingPolicy"),
        "schedulingConstraints": ("V1alpha3WorkloadPodGroupSchedulingConstraints",
                                  "v1alpha3.WorkloadPodGroupSchedulingConstraints"),
        "disruptionMode": ("V1alpha3WorkloadPodGroupDisruptionMode", "v1alpha3.WorkloadPodGroupDisruptionMode"),
        "resourceClaims": ("list[V1alpha3WorkloadPodGroupResourceClaim]", "[]v1alpha3.WorkloadPodGroupResourceClaim")},
    "V1alpha3WorkloadPodGroupSchedulingPolicy": {
        "basic": ("V1alpha3WorkloadPodGroupBasicSchedulingPolicy", "v1alpha3.WorkloadPodGroupBasicSchedulingPolicy"),
        "gang": ("V1alpha3WorkloadPodGroupGangSchedulingPolicy", "v1alpha3.WorkloadPodGroupGangSchedulingPolicy")},
    "V1alpha3WorkloadPodGroupBasicSchedulingPolicy": {},
    "V1alpha3WorkloadPodGroupGangSchedulingPolicy": {"minCount": ("int", "int32")},
    "V1alpha3WorkloadPodGroupSchedulingConstraints": {
        "topology": ("list[V1alpha3TopologyConstraint]", "[]v1alpha3.TopologyConstraint")},
    "V1alpha3TopologyConstraint": {"key": ("str", "string")},
    "V1alpha3WorkloadPodGroupDisruptionMode": {
        "single": ("V1alpha3WorkloadPodGroupSingleDisruptionMode", "v1alpha3.WorkloadPodGroupSingleDisruptionMode"),
        "all": ("V1alpha3WorkloadPodGroupAllDisruptionMode", "v1alpha3.WorkloadPodGroupAllDisruptionMode")},
    "V1alpha3WorkloadPodGroupSingleDisruptionMode": {},
    "V1alpha3WorkloadPodGroupAllDisruptionMode": {},
    "V1alpha3WorkloadPodGroupResourceClaim": {"name": ("str", "string"), "resourceClaimName": ("str", "string"),
                                              "resourceClaimTemplateName": ("str", "string")},
    # scheduling/v1alpha3 CompositePodGroup (its TopologyConstraint is the one above)
    "V1alpha3CompositePodGroup": {"apiVersion": ("str", "string"), "kind": ("str", "string"),
                                  "metadata": ("V1ObjectMeta", "v1.ObjectMeta"),
                                  "spec": ("V1alpha3CompositePodGroupSpec", "v1alpha3.CompositePodGroupSpec"),
                                  "status": ("V1alpha3CompositePodGroupStatus", "v1alpha3.CompositePodGroupStatus")},
    "V1alpha3CompositePodGroupSpec": {
        "parentCompositePodGroupName": ("str", "string"),
        "workloadRef": ("V1alpha3WorkloadReference", "v1alpha3.WorkloadReference"),
        "schedulingPolicy": ("V1alpha3CompositePodGroupSchedulingPolicy", "v1alpha3.CompositePodGroupSchedulingPolicy"),
        "schedulingConstraints": ("V1alpha3CompositePodGroupSchedulingConstraints",
                                  "v1alpha3.CompositePodGroupSchedulingConstraints"),
        "disruptionMode": ("V1alpha3CompositeDisruptionMode", "v1alpha3.CompositeDisruptionMode"),
        "priorityClassName": ("str", "string"), "priority": ("int", "int32"),
        "preemptionPolicy": ("str", "v1alpha3.PreemptionPolicy")},
    "V1alpha3WorkloadReference": {"workloadName": ("str", "string"), "templateName": ("str", "string")},
    "V1alpha3CompositePodGroupSchedulingPolicy": {
        "basic": ("V1alpha3CompositeBasicSchedulingPolicy", "v1alpha3.CompositeBasicSchedulingPolicy"),
        "gang": ("V1alpha3CompositeGangSchedulingPolicy", "v1alpha3.CompositeGangSchedulingPolicy")},
    "V1alpha3CompositeBasicSchedulingPolicy": {},
    "V1alpha3CompositeGangSchedulingPolicy": {"minGroupCount": ("int", "int32")},
    "V1alpha3CompositePodGroupSchedulingConstraints": {
        "topology": ("list[V1alpha3TopologyConstraint]", "[]v1alpha3.TopologyConstraint")},
    "V1alpha3CompositeDisruptionMode": {
        "single": ("V1alpha3SingleCompositeDisruptionMode", "v1alpha3.SingleCompositeDisruptionMode"),
        "all": ("V1alpha3AllCompositeDisruptionMode", "v1alpha3.AllCompositeDisruptionMode")},
    "V1alpha3SingleCompositeDisruptionMode": {},
    "V1alpha3AllCompositeDisruptionMode": {},
    "V1alpha3CompositePodGroupStatus": {"conditions": ("list[V1Condition]", "[]v1.Condition")},
    # resource/v1 NodeAllocatableResource and its parts (Device.nodeAllocatableResources' values)
    "V1NodeAllocatableResource": {"mapping": ("V1NodeAllocatableMapping", "v1.NodeAllocatableMapping"),
                                  "overhead": ("V1NodeAllocatableOverhead", "v1.NodeAllocatableOverhead")},
    "V1NodeAllocatableMapping": {"capacityKey": ("str", "v1.QualifiedName"),
                                 "capacityMultiplier": ("str", "resource.Quantity"),
                                 "deviceMultiplier": ("str", "resource.Quantity")},
    "V1NodeAllocatableOverhead": {"perPod": ("str", "resource.Quantity"),
                                  "perContainer": ("str", "resource.Quantity")},
    # core/v1 NodeAllocatableResourceClaimStatus and its parts (PodStatus.nodeAllocatableResourceClaimStatuses)
    "V1NodeAllocatableResourceClaimStatus": {
        "resourceClaimName": ("str", "string"), "containers": ("list[str]", "[]string"),
        "mapping": ("list[V1NodeAllocatableMappedResources]", "[]v1.NodeAllocatableMappedResources"),
        "overhead": ("list[V1NodeAllocatableOverheadResources]", "[]v1.NodeAllocatableOverheadResources")},
    "V1NodeAllocatableMappedResources": {"name": ("str", "v1.ResourceName"), "quantity": ("str", "resource.Quantity")},
    "V1NodeAllocatableOverheadResources": {"name": ("str", "v1.ResourceName"), "perPod": ("str", "resource.Quantity"),
                                           "perContainer": ("str", "resource.Quantity")},
    "V1DeviceTaintRule": {"apiVersion": ("str", "string"), "kind": ("str", "string"),
                          "metadata": ("V1ObjectMeta", "v1.ObjectMeta"),
                          "spec": ("V1DeviceTaintRuleSpec", "v1.DeviceTaintRuleSpec"),
                          "status": ("V1DeviceTaintRuleStatus", "v1.DeviceTaintRuleStatus")},
    "V1DeviceTaintRuleSpec": {"deviceSelector": ("V1DeviceTaintSelector", "*v1.DeviceTaintSelector"),
                              "taint": ("V1DeviceTaint", "v1.DeviceTaint")},
    "V1DeviceTaintSelector": {"device": ("str", "*string"), "driver": ("str", "*string"), "pool": ("str", "*string")},
    "V1DeviceTaintRuleStatus": {"conditions": ("list[V1Condition]", "[]v1.Condition")},
}
#: named non-struct Go types of the models above (for tools/generate_go_types.py's ``kinds``)
GO_KINDS_AFTER_CLIENT: dict[str, str] = {"v1beta1.PreemptionPolicy": "string", "v1alpha3.PreemptionPolicy": "string"}

PRIMITIVES = frozenset({"str", "int", "float", "bool", "datetime", "date", "object"})
_LIST_RE = re.compile(r"^list\[(.*)\]$")
_DICT_RE = re.compile(r"^dict\(([^,]*), (.*)\)$")

DEFAULT_OUTPUT = Path(__file__).resolve().parent.parent / "fastsched" / "api" / "_schema.json"


def referenced_models(type_string: str) -> list[str]:
    """Model class names a client type string refers to."""
    match = _LIST_RE.match(type_string)
    if match:
        return referenced_models(match.group(1))
    match = _DICT_RE.match(type_string)
    if match:
        if match.group(1) != "str":
            raise ValueError(f"unexpected map key type in {type_string!r}")
        return referenced_models(match.group(2))
    if type_string in PRIMITIVES:
        return []
    return [type_string]


def build_schema() -> dict:
    import kubernetes
    import kubernetes.client.models as models

    version = kubernetes.__version__
    if version != CLIENT_VERSION:
        raise SystemExit(f"expected kubernetes client {CLIENT_VERSION}, found {version}")

    types: dict[str, dict[str, str]] = {}
    snake: dict[str, str] = {}
    pending = [model for _, model in ROOT_KINDS.values()] + list(FRAGMENTS.values())
    while pending:
        name = pending.pop()
        if name in types:
            continue
        cls = getattr(models, name, None)
        if cls is None:
            raise SystemExit(f"kubernetes {version} has no model {name}")
        fields: dict[str, str] = {}
        folded: dict[str, str] = {}
        for attr, type_string in cls.openapi_types.items():
            json_name = cls.attribute_map[attr]
            if json_name in fields:
                raise SystemExit(f"{name}: duplicate JSON name {json_name}")
            # Go's encoding/json folds case when no exact match: two fields that differ only in
            # case would make the fallback ambiguous. None exist today; fail loudly if one appears.
            other = folded.setdefault(json_name.lower(), json_name)
            if other != json_name:
                raise SystemExit(f"{name}: fields {other} and {json_name} differ only in case")
            fields[json_name] = type_string
            if attr != json_name:
                previous = snake.setdefault(json_name, attr)
                if previous != attr:
                    raise SystemExit(f"JSON name {json_name} has attribute names {previous} and {attr}")
            pending.extend(referenced_models(type_string))
        types[name] = fields

    for name, extra in FIELDS_AFTER_CLIENT.items():
        for json_name, (type_string, attr) in extra.items():
            if json_name in types[name]:
                raise SystemExit(f"{name}.{json_name} is in the client now: drop it from FIELDS_AFTER_CLIENT")
            types[name][json_name] = type_string
            if attr != json_name:  # as for the client's own fields
                snake.setdefault(json_name, attr)

    for name, fields in MODELS_AFTER_CLIENT.items():
        if getattr(models, name, None) is not None:
            raise SystemExit(f"the client has {name} now: drop it from MODELS_AFTER_CLIENT")
        types[name] = {json_name: client_type for json_name, (client_type, _) in fields.items()}
        for json_name in fields:
            attr = re.sub(r"(?<!^)(?=[A-Z])", "_", json_name).lower()
            if attr != json_name:
                snake.setdefault(json_name, attr)

    # An attribute name that is another field's JSON name in the same type would be ambiguous.
    for name, fields in types.items():
        for json_name in fields:
            attr = snake.get(json_name)
            if attr is not None and attr in fields:
                raise SystemExit(f"{name}: attribute {attr} of {json_name} is also a JSON name")

    every_kind = {**ROOT_KINDS, **ROOT_KINDS_AFTER_CLIENT}
    kinds = {kind: model for kind, (_, model) in every_kind.items()}
    api_versions = {kind: v for kind, (v, _) in every_kind.items()}
    return {
        "client": version,
        "kinds": kinds,
        "apiVersions": api_versions,
        "fragments": dict(FRAGMENTS),
        "types": {name: types[name] for name in sorted(types)},
        "snake": {json_name: snake[json_name] for json_name in sorted(snake)},
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--output", type=Path, default=DEFAULT_OUTPUT)
    parser.add_argument("--check", action="store_true", help="exit 1 if the output file is stale")
    args = parser.parse_args(argv)

    text = json.dumps(build_schema(), separators=(",", ":"), ensure_ascii=True) + "\n"
    if args.check:
        current = args.output.read_text() if args.output.exists() else ""
        if current != text:
            print(f"{args.output} is stale: rerun {sys.argv[0]}", file=sys.stderr)
            return 1
        return 0
    args.output.write_text(text)
    schema = json.loads(text)
    print(f"wrote {args.output}: {len(text)} bytes, {len(schema['types'])} types, "
          f"{len(schema['kinds'])} kinds, kubernetes client {schema['client']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
