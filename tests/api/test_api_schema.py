"""Schema-driven manifest decoding (fastsched.api.schema): exact, snake_case and case-folded
field matching, unknown-field paths, free-form values and repeated keys."""
import copy
import datetime
import json
from importlib import resources

import pytest
import yaml

from fastsched.api.errors import ManifestError
from fastsched.api.schema import Decoded, decode, schema_api_version, schema_client_version, schema_kinds

ROOT_KINDS = {
    "Pod": "v1", "Node": "v1", "Namespace": "v1", "Service": "v1", "ReplicationController": "v1",
    "PersistentVolume": "v1", "PersistentVolumeClaim": "v1",
    "PriorityClass": "scheduling.k8s.io/v1",
    "PodDisruptionBudget": "policy/v1",
    "Deployment": "apps/v1", "ReplicaSet": "apps/v1", "StatefulSet": "apps/v1", "DaemonSet": "apps/v1",
    "Job": "batch/v1", "CronJob": "batch/v1",
    "StorageClass": "storage.k8s.io/v1", "CSINode": "storage.k8s.io/v1",
    "CSIDriver": "storage.k8s.io/v1", "CSIStorageCapacity": "storage.k8s.io/v1",
    "ResourceSlice": "resource.k8s.io/v1", "DeviceClass": "resource.k8s.io/v1",
    "ResourceClaim": "resource.k8s.io/v1", "ResourceClaimTemplate": "resource.k8s.io/v1",
}

POD_SPEC = {
    "containers": [
        {
            "name": "web",
            "image": "nginx:1.27",
            "imagePullPolicy": "IfNotPresent",
            "command": ["nginx"],
            "args": ["-g", "daemon off;"],
            "ports": [{"name": "http", "containerPort": 8080, "protocol": "TCP"}],
            "env": [
                {"name": "MODE", "value": "prod"},
                {"name": "POD_IP", "valueFrom": {"fieldRef": {"apiVersion": "v1", "fieldPath": "status.podIP"}}},
                {"name": "LIMIT", "valueFrom": {"resourceFieldRef": {"resource": "limits.memory", "divisor": "1Mi"}}},
            ],
            "envFrom": [{"configMapRef": {"name": "web-config", "optional": True}}],
            "resources": {
                "requests": {"cpu": "250m", "memory": "256Mi", "nvidia.com/gpu": "1"},
                "limits": {"cpu": "1", "memory": "512Mi", "nvidia.com/gpu": "1"},
                "claims": [{"name": "gpu", "request": "gpu-0"}],
            },
            "volumeMounts": [{"name": "data", "mountPath": "/data", "readOnly": True},
                             {"name": "kube-api-access-abcde",
                              "mountPath": "/var/run/secrets/kubernetes.io/serviceaccount"}],
            "livenessProbe": {"httpGet": {"path": "/healthz", "port": "http", "scheme": "HTTP"},
                              "initialDelaySeconds": 10, "periodSeconds": 5, "failureThreshold": 3},
            "readinessProbe": {"tcpSocket": {"port": 8080}, "timeoutSeconds": 1},
            "startupProbe": {"exec": {"command": ["cat", "/tmp/ready"]}},
            "lifecycle": {"preStop": {"sleep": {"seconds": 5}}},
            "securityContext": {"runAsNonRoot": True, "capabilities": {"drop": ["ALL"]},
                                "seccompProfile": {"type": "RuntimeDefault"}},
            "terminationMessagePath": "/dev/termination-log",
            "terminationMessagePolicy": "File",
        },
        {"name": "sidecar", "image": "busybox", "resources": {"requests": {"cpu": "10m"}}},
    ],
    "initContainers": [{"name": "init", "image": "busybox", "restartPolicy": "Always"}],
    "volumes": [
        {"name": "data", "persistentVolumeClaim": {"claimName": "data-web-0"}},
        {"name": "kube-api-access-abcde", "projected": {"defaultMode": 420, "sources": [
            {"serviceAccountToken": {"expirationSeconds": 3607, "path": "token"}},
            {"configMap": {"name": "kube-root-ca.crt", "items": [{"key": "ca.crt", "path": "ca.crt"}]}},
            {"downwardAPI": {"items": [{"path": "namespace",
                                        "fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.namespace"}}]}},
        ]}},
    ],
    "nodeSelector": {"disktype": "ssd", "Kubernetes.io/Arch": "amd64"},
    "nodeName": "node-1",
    "schedulerName": "default-scheduler",
    "priorityClassName": "high",
    "priority": 1000,
    "preemptionPolicy": "PreemptLowerPriority",
    "serviceAccountName": "default",
    "restartPolicy": "Always",
    "terminationGracePeriodSeconds": 30,
    "dnsPolicy": "ClusterFirst",
    "enableServiceLinks": True,
    "hostNetwork": False,
    "overhead": {"cpu": "100m"},
    "resources": {"limits": {"cpu": "2"}},
    "resourceClaims": [{"name": "gpu", "resourceClaimTemplateName": "gpu-template"}],
    "tolerations": [
        {"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300},
        {"key": "dedicated", "operator": "Equal", "value": "web", "effect": "NoSchedule"},
    ],
    "affinity": {
        "nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
                {"matchExpressions": [{"key": "topology.kubernetes.io/zone", "operator": "In", "values": ["a", "b"]}]},
            ]},
            "preferredDuringSchedulingIgnoredDuringExecution": [
                {"weight": 10, "preference": {"matchFields": [
                    {"key": "metadata.name", "operator": "NotIn", "values": ["n9"]}]}},
            ],
        },
        "podAntiAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": [
                {"labelSelector": {"matchLabels": {"app": "web"}}, "topologyKey": "kubernetes.io/hostname",
                 "matchLabelKeys": ["pod-template-hash"]},
            ],
            "preferredDuringSchedulingIgnoredDuringExecution": [
                {"weight": 50, "podAffinityTerm": {"labelSelector": {"matchExpressions": [
                    {"key": "tier", "operator": "Exists"}]}, "namespaces": ["shop"], "topologyKey": "zone"}},
            ],
        },
    },
    "topologySpreadConstraints": [
        {"maxSkew": 1, "topologyKey": "topology.kubernetes.io/zone", "whenUnsatisfiable": "DoNotSchedule",
         "labelSelector": {"matchLabels": {"app": "web"}}, "minDomains": 2,
         "nodeAffinityPolicy": "Honor", "nodeTaintsPolicy": "Ignore", "matchLabelKeys": ["pod-template-hash"]},
    ],
    "readinessGates": [{"conditionType": "example.com/ready"}],
    "schedulingGates": [{"name": "example.com/wait"}],
    "securityContext": {"fsGroup": 2000, "sysctls": [{"name": "net.core.somaxconn", "value": "1024"}]},
}

POD = {
    "apiVersion": "v1",
    "kind": "Pod",
    "metadata": {
        "name": "web-5d4f8c7b9-x2k4q",
        "generateName": "web-5d4f8c7b9-",
        "namespace": "shop",
        "uid": "1f0c9a5e-0000-4000-8000-000000000001",
        "resourceVersion": "12345",
        "creationTimestamp": "2024-05-01T12:00:00Z",
        "labels": {"app": "web", "pod-template-hash": "5d4f8c7b9", "Foo": "Bar", "app.kubernetes.io/part-of": "shop"},
        "annotations": {"kubectl.kubernetes.io/restartedAt": "2024-05-01T11:00:00Z"},
        "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "web-5d4f8c7b9",
                             "uid": "rs-1", "controller": True, "blockOwnerDeletion": True}],
        "finalizers": ["example.com/keep"],
        "managedFields": [{"manager": "kube-controller-manager", "operation": "Update", "apiVersion": "v1",
                           "time": "2024-05-01T12:00:00Z", "fieldsType": "FieldsV1",
                           "fieldsV1": {"f:metadata": {"f:labels": {".": {}, "f:app": {}}}}}],
    },
    "spec": POD_SPEC,
    "status": {
        "phase": "Running",
        "hostIP": "10.0.0.1",
        "hostIPs": [{"ip": "10.0.0.1"}],
        "podIP": "10.1.0.5",
        "podIPs": [{"ip": "10.1.0.5"}, {"ip": "fd00::5"}],
        "qosClass": "Burstable",
        "startTime": "2024-05-01T12:00:01Z",
        "nominatedNodeName": "node-1",
        "conditions": [{"type": "Ready", "status": "True", "lastTransitionTime": "2024-05-01T12:00:05Z"}],
        "containerStatuses": [{"name": "web", "ready": True, "restartCount": 0, "image": "nginx:1.27",
                               "imageID": "docker.io/library/nginx@sha256:abc", "started": True,
                               "state": {"running": {"startedAt": "2024-05-01T12:00:03Z"}},
                               "allocatedResources": {"cpu": "250m"}}],
        "resourceClaimStatuses": [{"name": "gpu", "resourceClaimName": "web-gpu-abc"}],
    },
}

NODE = {
    "apiVersion": "v1",
    "kind": "Node",
    "metadata": {"name": "node-1", "labels": {"kubernetes.io/hostname": "node-1",
                                               "topology.kubernetes.io/zone": "a", "Node-Role": "worker"}},
    "spec": {"podCIDR": "10.1.0.0/24", "podCIDRs": ["10.1.0.0/24"], "providerID": "kind://node-1",
             "unschedulable": False,
             "taints": [{"key": "dedicated", "value": "web", "effect": "NoSchedule"},
                        {"key": "node.kubernetes.io/unreachable", "effect": "NoExecute",
                         "timeAdded": "2024-05-01T12:00:00Z"}]},
    "status": {
        "capacity": {"cpu": "8", "memory": "32Gi", "pods": "110", "ephemeral-storage": "100Gi", "hugepages-2Mi": "0"},
        "allocatable": {"cpu": "7800m", "memory": "31Gi", "pods": "110"},
        "conditions": [{"type": "Ready", "status": "True", "reason": "KubeletReady",
                        "lastHeartbeatTime": "2024-05-01T12:00:00Z"}],
        "addresses": [{"type": "InternalIP", "address": "10.0.0.1"}, {"type": "Hostname", "address": "node-1"}],
        "daemonEndpoints": {"kubeletEndpoint": {"Port": 10250}},
        "nodeInfo": {"machineID": "m", "systemUUID": "s", "bootID": "b", "kernelVersion": "6.1",
                     "osImage": "Debian", "containerRuntimeVersion": "containerd://1.7", "kubeletVersion": "v1.34.0",
                     "kubeProxyVersion": "", "operatingSystem": "linux", "architecture": "amd64",
                     "swap": {"capacity": 0}},
        "images": [{"names": ["nginx:1.27"], "sizeBytes": 70000000}],
        "volumesAttached": [{"name": "kubernetes.io/csi/ebs^vol-1", "devicePath": ""}],
        "volumesInUse": ["kubernetes.io/csi/ebs^vol-1"],
    },
}

POD_TEMPLATE = {"metadata": {"labels": {"app": "web"}}, "spec": {"containers": POD_SPEC["containers"]}}

DEPLOYMENT = {
    "apiVersion": "apps/v1",
    "kind": "Deployment",
    "metadata": {"name": "web", "namespace": "shop", "labels": {"app": "web"}},
    "spec": {
        "replicas": 3,
        "selector": {"matchLabels": {"app": "web"}},
        "strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": "25%", "maxUnavailable": 1}},
        "revisionHistoryLimit": 10,
        "progressDeadlineSeconds": 600,
        "minReadySeconds": 5,
        "template": POD_TEMPLATE,
    },
    "status": {"replicas": 3, "readyReplicas": 3, "availableReplicas": 3, "observedGeneration": 2,
               "conditions": [{"type": "Available", "status": "True"}]},
}

STATEFULSET = {
    "apiVersion": "apps/v1",
    "kind": "StatefulSet",
    "metadata": {"name": "db", "namespace": "shop"},
    "spec": {
        "serviceName": "db",
        "replicas": 3,
        "podManagementPolicy": "Parallel",
        "selector": {"matchLabels": {"app": "db"}},
        "updateStrategy": {"type": "RollingUpdate", "rollingUpdate": {"partition": 0, "maxUnavailable": "50%"}},
        "persistentVolumeClaimRetentionPolicy": {"whenDeleted": "Delete", "whenScaled": "Retain"},
        "ordinals": {"start": 1},
        "template": POD_TEMPLATE,
        "volumeClaimTemplates": [{
            "metadata": {"name": "data"},
            "spec": {"accessModes": ["ReadWriteOnce"], "storageClassName": "fast",
                     "resources": {"requests": {"storage": "10Gi"}}},
        }],
    },
}

SERVICE = {
    "apiVersion": "v1",
    "kind": "Service",
    "metadata": {"name": "web", "namespace": "shop"},
    "spec": {"type": "ClusterIP", "selector": {"app": "web"}, "clusterIP": "10.96.0.10",
             "clusterIPs": ["10.96.0.10"], "ipFamilies": ["IPv4"], "ipFamilyPolicy": "SingleStack",
             "externalIPs": ["1.2.3.4"], "sessionAffinity": "None",
             "ports": [{"name": "http", "port": 80, "targetPort": "http", "protocol": "TCP"},
                       {"name": "metrics", "port": 9090, "targetPort": 9090}],
             "trafficDistribution": "PreferClose"},
}

PVC = {
    "apiVersion": "v1",
    "kind": "PersistentVolumeClaim",
    "metadata": {"name": "data-web-0", "namespace": "shop",
                 "annotations": {"volume.kubernetes.io/selected-node": "node-1"}},
    "spec": {"accessModes": ["ReadWriteOnce"], "storageClassName": "fast", "volumeMode": "Filesystem",
             "resources": {"requests": {"storage": "10Gi"}}, "volumeName": "pv-1",
             "selector": {"matchExpressions": [{"key": "tier", "operator": "In", "values": ["gold"]}]},
             "dataSourceRef": {"apiGroup": "snapshot.storage.k8s.io", "kind": "VolumeSnapshot", "name": "snap"}},
    "status": {"phase": "Bound", "accessModes": ["ReadWriteOnce"], "capacity": {"storage": "10Gi"}},
}

RESOURCE_CLAIM = {
    "apiVersion": "resource.k8s.io/v1",
    "kind": "ResourceClaim",
    "metadata": {"name": "gpu-claim", "namespace": "shop"},
    "spec": {"devices": {
        "requests": [
            {"name": "gpu", "exactly": {"deviceClassName": "gpu.example.com", "allocationMode": "ExactCount",
                                        "count": 2,
                                        "selectors": [{"cel": {
                                            "expression": "device.attributes['gpu.example.com'].model == 'a100'"}}],
                                        "tolerations": [{"key": "maintenance", "operator": "Exists",
                                                         "effect": "NoSchedule"}]}},
            {"name": "nic", "firstAvailable": [{"name": "fast", "deviceClassName": "nic.example.com"}]},
        ],
        "constraints": [{"requests": ["gpu"], "matchAttribute": "gpu.example.com/numa"}],
        "config": [{"requests": ["gpu"], "opaque": {"driver": "gpu.example.com",
                                                    "parameters": {"apiVersion": "gpu.example.com/v1", "kind": "Config",
                                                                   "Sharing": {"Strategy": "TimeSlicing"}}}}],
    }},
    "status": {"allocation": {"devices": {"results": [
        {"request": "gpu", "driver": "gpu.example.com", "pool": "node-1", "device": "gpu-0"}]},
        "nodeSelector": {"nodeSelectorTerms": [{"matchFields": [
            {"key": "metadata.name", "operator": "In", "values": ["node-1"]}]}]}},
        "reservedFor": [{"resource": "pods", "name": "web", "uid": "u1"}]},
}

RESOURCE_SLICE = {
    "apiVersion": "resource.k8s.io/v1",
    "kind": "ResourceSlice",
    "metadata": {"name": "node-1-gpu"},
    "spec": {"driver": "gpu.example.com", "nodeName": "node-1",
             "pool": {"name": "node-1", "generation": 1, "resourceSliceCount": 1},
             "devices": [{"name": "gpu-0",
                          "attributes": {"gpu.example.com/model": {"string": "a100"}, "index": {"int": 0}},
                          "capacity": {"memory": {"value": "40Gi"}}}]},
}


def _copy(document):
    return copy.deepcopy(document)


# --------------------------------------------------------------------------------------------
# Schema file and kinds
# --------------------------------------------------------------------------------------------
def test_schema_file_ships_with_the_package_and_is_compact():
    text = resources.files("fastsched.api").joinpath("_schema.json").read_text()
    assert len(text.encode()) < 300_000
    assert "\n  " not in text  # no indentation
    raw = json.loads(text)
    assert raw["client"] == "34.1.0"
    assert raw["types"]["V1PodSpec"]["nodeName"] == "str"
    assert raw["types"]["V1PodSpec"]["containers"] == "list[V1Container]"


def test_every_root_kind_is_known_with_its_api_version():
    assert set(ROOT_KINDS) <= schema_kinds()
    for kind, api_version in ROOT_KINDS.items():
        assert schema_api_version(kind) == api_version
    assert schema_client_version() == "34.1.0"
    assert isinstance(schema_kinds(), frozenset)


def test_unknown_kind_raises_key_error():
    with pytest.raises(KeyError):
        decode({"apiVersion": "v1", "kind": "Gizmo"}, "Gizmo")
    with pytest.raises(KeyError):
        decode({"apiVersion": "v1", "kind": "PodList", "items": []}, "PodList")
    with pytest.raises(KeyError):
        decode({}, "pod")  # kinds are case-sensitive


def test_non_mapping_document_is_a_type_error():
    with pytest.raises(TypeError):
        decode(["not", "a", "pod"], "Pod")


# --------------------------------------------------------------------------------------------
# Exact fields pass through unchanged
# --------------------------------------------------------------------------------------------
@pytest.mark.parametrize("kind, document", [
    ("Pod", POD), ("Node", NODE), ("Deployment", DEPLOYMENT), ("StatefulSet", STATEFULSET),
    ("Service", SERVICE), ("PersistentVolumeClaim", PVC), ("ResourceClaim", RESOURCE_CLAIM),
    ("ResourceSlice", RESOURCE_SLICE),
])
def test_exact_fields_pass_through_unchanged(kind, document):
    original = _copy(document)
    decoded = decode(document, kind)
    assert isinstance(decoded, Decoded)
    assert decoded.unknown == ()
    assert decoded.case_folded == ()
    assert decoded.document == original
    assert document == original  # the input is not modified
    assert decoded.document is document  # already canonical: returned as is, nothing copied


def test_field_order_follows_the_document():
    decoded = decode({"spec": {"nodeName": "n"}, "kind": "Pod", "apiVersion": "v1"}, "Pod")
    assert list(decoded.document) == ["spec", "kind", "apiVersion"]


def test_kinds_without_spec_keep_their_top_level_fields():
    priority_class = {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": "high"},
                      "value": 1000, "globalDefault": False, "preemptionPolicy": "Never", "description": "d"}
    assert decode(priority_class, "PriorityClass") == Decoded(priority_class, (), ())
    storage_class = {"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass", "metadata": {"name": "fast"},
                     "provisioner": "ebs.csi.aws.com", "parameters": {"type": "gp3", "Iops": "3000"},
                     "volumeBindingMode": "WaitForFirstConsumer", "allowVolumeExpansion": True,
                     "allowedTopologies": [{"matchLabelExpressions": [{"key": "zone", "values": ["a"]}]}]}
    assert decode(storage_class, "StorageClass") == Decoded(storage_class, (), ())
    capacity = {"apiVersion": "storage.k8s.io/v1", "kind": "CSIStorageCapacity",
                "metadata": {"name": "c", "namespace": "kube-system"}, "storageClassName": "fast",
                "capacity": "100Gi", "maximumVolumeSize": "10Gi",
                "nodeTopology": {"matchLabels": {"topology.ebs.csi.aws.com/zone": "a"}}}
    assert decode(capacity, "CSIStorageCapacity") == Decoded(capacity, (), ())
    result = decode({"kind": "PriorityClass", "valeu": 5}, "PriorityClass")
    assert result.unknown == ("valeu",)


# --------------------------------------------------------------------------------------------
# Unknown fields
# --------------------------------------------------------------------------------------------
def test_misspelled_fields_are_reported_with_paths_and_dropped():
    pod = _copy(POD)
    pod["spec"]["nodeSelecter"] = {"disktype": "ssd"}
    pod["spec"]["containers"][0]["resources"]["requets"] = {"cpu": "1"}
    pod["spec"]["containers"][1]["imagePullPolicyy"] = "Always"
    pod["spec"]["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"][
        "nodeSelectorTerms"][0]["matchExpressions"][0]["value"] = ["a"]
    pod["spec"]["tolerations"][1]["tolerationSecond"] = 5
    pod["metadata"]["label"] = {"a": "b"}
    pod["metadata"]["ownerReferences"][0]["controler"] = True
    pod["specs"] = {}
    decoded = decode(pod, "Pod")
    assert decoded.unknown == (
        "metadata.ownerReferences[0].controler",
        "metadata.label",  # document order: added after ownerReferences
        "spec.containers[0].resources.requets",
        "spec.containers[1].imagePullPolicyy",
        "spec.tolerations[1].tolerationSecond",
        "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution"
        ".nodeSelectorTerms[0].matchExpressions[0].value",
        "spec.nodeSelecter",
        "specs",
    )
    assert decoded.case_folded == ()
    assert decoded.document == POD  # everything else kept, the misspelled keys dropped


def test_unknown_fields_under_template_and_map_of_structs():
    deployment = _copy(DEPLOYMENT)
    deployment["spec"]["template"]["spec"]["containers"][0]["resources"]["limts"] = {"cpu": "1"}
    deployment["spec"]["strategy"]["rollingUpdate"]["maxSurg"] = 1
    decoded = decode(deployment, "Deployment")
    assert decoded.unknown == ("spec.strategy.rollingUpdate.maxSurg",
                               "spec.template.spec.containers[0].resources.limts")
    assert decoded.document == DEPLOYMENT

    slice_ = _copy(RESOURCE_SLICE)
    slice_["spec"]["devices"][0]["attributes"]["gpu.example.com/model"]["strng"] = "x"
    slice_["spec"]["devices"][0]["attributes"]["index"]["integer"] = 1
    decoded = decode(slice_, "ResourceSlice")
    assert decoded.unknown == ("spec.devices[0].attributes[gpu.example.com/model].strng",
                               "spec.devices[0].attributes.index.integer")
    assert decoded.document == RESOURCE_SLICE


def test_unknown_non_string_keys_are_reported():
    decoded = decode({"kind": "Pod", "spec": {True: 1, 3: "x", "nodeName": "n"}}, "Pod")
    assert decoded.unknown == ("spec.true", "spec.3")
    assert decoded.document == {"kind": "Pod", "spec": {"nodeName": "n"}}


# --------------------------------------------------------------------------------------------
# snake_case (kubernetes client to_dict()) form
# --------------------------------------------------------------------------------------------
def test_snake_case_client_form_is_canonicalized():
    client_form = {
        "api_version": "v1",
        "kind": "Pod",
        "metadata": {"name": "p", "namespace": "default", "owner_references": [
            {"api_version": "apps/v1", "kind": "ReplicaSet", "name": "rs", "uid": "u", "controller": True,
             "block_owner_deletion": None}],
            "labels": {"app_name": "x"}, "creation_timestamp": None},
        "spec": {
            "node_name": "n1",
            "containers": [{"name": "c", "image": "busybox", "image_pull_policy": "Always",
                            "resources": {"requests": {"cpu": "1"}},
                            "liveness_probe": {"_exec": {"command": ["true"]}, "period_seconds": 5},
                            "volume_mounts": [{"name": "v", "mount_path": "/v"}]}],
            "node_selector": {"disk_type": "ssd"},
            "topology_spread_constraints": [{"max_skew": 1, "topology_key": "zone",
                                             "when_unsatisfiable": "DoNotSchedule",
                                             "node_taints_policy": "Honor"}],
            "termination_grace_period_seconds": 30,
        },
        "status": {"host_ip": "10.0.0.1", "host_i_ps": [{"ip": "10.0.0.1"}], "pod_i_ps": [{"ip": "10.1.0.1"}],
                   "qos_class": "BestEffort"},
    }
    decoded = decode(client_form, "Pod")
    assert decoded.unknown == ()
    assert decoded.case_folded == ()
    assert decoded.document == {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "p", "namespace": "default", "ownerReferences": [
            {"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "rs", "uid": "u", "controller": True,
             "blockOwnerDeletion": None}],
            "labels": {"app_name": "x"}, "creationTimestamp": None},
        "spec": {
            "nodeName": "n1",
            "containers": [{"name": "c", "image": "busybox", "imagePullPolicy": "Always",
                            "resources": {"requests": {"cpu": "1"}},
                            "livenessProbe": {"exec": {"command": ["true"]}, "periodSeconds": 5},
                            "volumeMounts": [{"name": "v", "mountPath": "/v"}]}],
            "nodeSelector": {"disk_type": "ssd"},
            "topologySpreadConstraints": [{"maxSkew": 1, "topologyKey": "zone",
                                           "whenUnsatisfiable": "DoNotSchedule", "nodeTaintsPolicy": "Honor"}],
            "terminationGracePeriodSeconds": 30,
        },
        "status": {"hostIP": "10.0.0.1", "hostIPs": [{"ip": "10.0.0.1"}], "podIPs": [{"ip": "10.1.0.1"}],
                   "qosClass": "BestEffort"},
    }


def test_snake_case_names_come_from_the_client_not_a_guess():
    # The client's attribute for hostIPs is host_i_ps; "host_ips" is no field name at all.
    decoded = decode({"status": {"host_ips": [{"ip": "1.2.3.4"}]}, "spec": {"pod_cidrs": []}}, "Pod")
    assert decoded.unknown == ("status.host_ips", "spec.pod_cidrs")
    node = decode({"spec": {"pod_cid_rs": ["10.0.0.0/24"]}, "status": {"daemon_endpoints": {
        "kubelet_endpoint": {"port": 10250}}}}, "Node")
    assert node.unknown == ()
    assert node.document == {"spec": {"podCIDRs": ["10.0.0.0/24"]},
                             "status": {"daemonEndpoints": {"kubeletEndpoint": {"Port": 10250}}}}


# --------------------------------------------------------------------------------------------
# Case folding (Go encoding/json, as sigs.k8s.io/yaml decodes)
# --------------------------------------------------------------------------------------------
def test_case_folded_fields_are_matched_and_reported():
    manifest = yaml.safe_load("""
apiVersion: v1
kind: Pod
metadata:
  name: p
  labels: {Foo: Bar}
Spec:
  containers:
  - name: c
    Resources: {requests: {CPU: "1"}}
  topologySpreadConstraints:
  - maxSkew: 1
    topologyKey: zone
    whenUnsatisfiable: DoNotSchedule
    NodeTaintsPolicy: Honor
    nodeaffinitypolicy: Ignore
""")
    decoded = decode(manifest, "Pod")
    assert decoded.unknown == ()
    assert decoded.case_folded == (
        "Spec",
        "spec.containers[0].Resources",
        "spec.topologySpreadConstraints[0].NodeTaintsPolicy",
        "spec.topologySpreadConstraints[0].nodeaffinitypolicy",
    )
    assert decoded.document == {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "p", "labels": {"Foo": "Bar"}},
        "spec": {
            # resource names are map keys: never folded
            "containers": [{"name": "c", "resources": {"requests": {"CPU": "1"}}}],
            "topologySpreadConstraints": [{"maxSkew": 1, "topologyKey": "zone",
                                           "whenUnsatisfiable": "DoNotSchedule",
                                           "nodeTaintsPolicy": "Honor", "nodeAffinityPolicy": "Ignore"}],
        },
    }


def test_go_folds_kelvin_sign_and_long_s_but_not_other_unicode():
    decoded = decode({"\u212aind": "Pod", "\u017fpec": {"nodeName": "n"}}, "Pod")
    assert decoded.document == {"kind": "Pod", "spec": {"nodeName": "n"}}
    assert decoded.case_folded == ("\u212aind", "\u017fpec")
    # U+0131 DOTLESS I upper-cases to I in Python, but Go does not fold it with i.
    decoded = decode({"spec": {"nodeName": "n", "hostIPC": True, "host\u0131pc": True}}, "Pod")
    assert decoded.unknown == ("spec.host\u0131pc",)


def test_snake_case_keys_are_not_case_folded():
    decoded = decode({"spec": {"Node_Name": "n"}}, "Pod")
    assert decoded.unknown == ("spec.Node_Name",)
    assert decoded.document == {"spec": {}}


def test_map_keys_are_never_touched():
    pod = {"metadata": {"labels": {"Foo": "1", "foo": "2", "node_name": "3"},
                        "annotations": {"Spec": "x"}},
           "spec": {"nodeSelector": {"NodeName": "y"}, "overhead": {"CPU": "1"}}}
    decoded = decode(pod, "Pod")
    assert decoded.document == pod
    assert decoded.unknown == decoded.case_folded == ()


# --------------------------------------------------------------------------------------------
# Free-form and mistyped values
# --------------------------------------------------------------------------------------------
def test_free_form_object_fields_are_untouched():
    # fieldsV1, RawExtension-like opaque parameters and IntOrString are `object` in the schema.
    decoded = decode(RESOURCE_CLAIM, "ResourceClaim")
    parameters = decoded.document["spec"]["devices"]["config"][0]["opaque"]["parameters"]
    assert parameters == {"apiVersion": "gpu.example.com/v1", "kind": "Config", "Sharing": {"Strategy": "TimeSlicing"}}
    fields_v1 = decode(POD, "Pod").document["metadata"]["managedFields"][0]["fieldsV1"]
    assert fields_v1 == {"f:metadata": {"f:labels": {".": {}, "f:app": {}}}}
    deployment = decode(DEPLOYMENT, "Deployment").document
    assert deployment["spec"]["strategy"]["rollingUpdate"] == {"maxSurge": "25%", "maxUnavailable": 1}


@pytest.mark.parametrize("document, path, message", [
    ({"metadata": "not-a-map"}, "metadata",
     "json: cannot unmarshal string into Go struct field Pod.metadata of type v1.ObjectMeta"),
    ({"spec": {"containers": {"name": "c"}}}, "spec.containers",
     "json: cannot unmarshal object into Go struct field PodSpec.spec.containers of type []v1.Container"),
    ({"spec": {"tolerations": [{"key": "k"}, "bad"]}}, "spec.tolerations[1]",
     "json: cannot unmarshal string into Go struct field PodSpec.spec.tolerations of type v1.Toleration"),
    ({"spec": {"nodeName": 5}}, "spec.nodeName",
     "json: cannot unmarshal number into Go struct field PodSpec.spec.nodeName of type string"),
    ({"spec": {"priority": "high"}}, "spec.priority",
     "json: cannot unmarshal string into Go struct field PodSpec.spec.priority of type int32"),
    ({"spec": {"priority": 2 ** 31}}, "spec.priority",
     "json: cannot unmarshal number 2147483648 into Go struct field PodSpec.spec.priority of type int32"),
    ({"spec": {"activeDeadlineSeconds": 2 ** 63}}, "spec.activeDeadlineSeconds",
     "json: cannot unmarshal number 9223372036854775808 into Go struct field PodSpec.spec.activeDeadlineSeconds "
     "of type int64"),
    ({"spec": {"volumes": [{"name": "v", "persistentVolumeClaim": "100m"}]}}, "spec.volumes[0].persistentVolumeClaim",
     "json: cannot unmarshal string into Go struct field Volume.spec.volumes.VolumeSource.persistentVolumeClaim of type "
     "v1.PersistentVolumeClaimVolumeSource"),
    ({"spec": {"volumes": [{"name": "v", "persistentVolumeClaim": float("inf")}]}},
     "spec.volumes[0].persistentVolumeClaim",
     "json: cannot unmarshal number into Go struct field Volume.spec.volumes.VolumeSource.persistentVolumeClaim of type "
     "v1.PersistentVolumeClaimVolumeSource"),
    ({"spec": {"restartPolicy": ["Always"]}}, "spec.restartPolicy",  # a named string type
     "json: cannot unmarshal array into Go struct field PodSpec.spec.restartPolicy of type v1.RestartPolicy"),
    ({"spec": {"containers": [{"name": "c", "args": ["a", 1]}]}}, "spec.containers[0].args[1]",
     "json: cannot unmarshal number into Go struct field Container.spec.containers.args of type string"),
    ({"metadata": {"labels": {"app/name": True}}}, "metadata.labels[app/name]",
     "json: cannot unmarshal bool into Go struct field ObjectMeta.metadata.labels of type string"),
    ({"spec": {"overhead": {"cpu": {"m": 1}}}}, "spec.overhead.cpu",
     "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"),
    ({"status": {"startTime": 17}}, "status.startTime", "json: cannot unmarshal number into Go value of type string"),
    # times and quantities are parsed, as their UnmarshalJSON methods do, in fields no reader reads
    ({"status": {"conditions": [{"type": "Ready", "lastTransitionTime": "yesterday"}]}},
     "status.conditions[0].lastTransitionTime", "invalid RFC 3339 timestamp 'yesterday'"),
    ({"spec": {"volumes": [{"name": "v", "emptyDir": {"sizeLimit": "lots"}}]}}, "spec.volumes[0].emptyDir.sizeLimit",
     "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"),
    ({"spec": {"hostNetwork": "true"}}, "spec.hostNetwork",
     "json: cannot unmarshal string into Go struct field PodSpec.spec.hostNetwork of type bool"),
    # the snake_case and case-folded spellings are refused under the field's own name
    ({"spec": {"node_name": []}}, "spec.nodeName",
     "json: cannot unmarshal array into Go struct field PodSpec.spec.nodeName of type string"),
    ({"spec": {"NodeName": {}, "bogus": 1}}, "spec.nodeName",
     "json: cannot unmarshal object into Go struct field PodSpec.spec.nodeName of type string"),
    # a field of an embedded struct: the error context names the embedded struct (these texts are
    # apimachinery v0.37.2's strict JSON serializer's, run on the same documents)
    ({"spec": {"volumes": [{"name": "v", "hostPath": 5}]}}, "spec.volumes[0].hostPath",
     "json: cannot unmarshal number into Go struct field Volume.spec.volumes.VolumeSource.hostPath of type "
     "v1.HostPathVolumeSource"),
    ({"spec": {"volumes": [{"name": "v", "configMap": {"name": 5}}]}}, "spec.volumes[0].configMap.name",
     "json: cannot unmarshal number into Go struct field "
     "ConfigMapVolumeSource.spec.volumes.VolumeSource.configMap.LocalObjectReference.name of type string"),
    ({"spec": {"containers": [{"name": "c", "livenessProbe": {"exec": 5}}]}}, "spec.containers[0].livenessProbe.exec",
     "json: cannot unmarshal number into Go struct field Probe.spec.containers.livenessProbe.ProbeHandler.exec of "
     "type v1.ExecAction"),
    ({"spec": {"ephemeralContainers": [{"name": "c", "image": 5}]}}, "spec.ephemeralContainers[0].image",
     "json: cannot unmarshal number into Go struct field EphemeralContainer.spec.ephemeralContainers."
     "EphemeralContainerCommon.image of type string"),
    # (a field that is the struct's own, beside the embedded ones: no embedded name)
    ({"spec": {"volumes": [{"name": 5}]}}, "spec.volumes[0].name",
     "json: cannot unmarshal number into Go struct field Volume.spec.volumes.name of type string"),
    # a kind's apiVersion, as scheduler_perf's typed decoding of a template reports it
    # (sigs.k8s.io/yaml UnmarshalStrict; the API server reads apiVersion and kind first)
    ({"apiVersion": 5}, "apiVersion",
     "json: cannot unmarshal number into Go struct field Pod.TypeMeta.apiVersion of type string"),
])
def test_values_of_the_wrong_json_type_are_refused_as_go_refuses_them(document, path, message):
    with pytest.raises(ManifestError) as info:
        decode(document, "Pod")
    assert info.value.path == path
    assert info.value.reason == message


@pytest.mark.parametrize("kind, document, path, message", [
    ("PodDisruptionBudget", {"spec": {"minAvailable": True}}, "spec.minAvailable",
     "json: cannot unmarshal bool into Go value of type int32"),
    ("PodDisruptionBudget", {"spec": {"maxUnavailable": 1.5}}, "spec.maxUnavailable",
     "json: cannot unmarshal number 1.5 into Go value of type int32"),
    ("StatefulSet", {"spec": {"volumeClaimTemplates": [{"metadata": {"name": [1, 2]}}]}},
     "spec.volumeClaimTemplates[0].metadata.name",
     "json: cannot unmarshal array into Go struct field ObjectMeta.spec.volumeClaimTemplates.metadata.name "
     "of type string"),
    ("StatefulSet", {"spec": {"volumeClaimTemplates": [{"spec": "text"}]}}, "spec.volumeClaimTemplates[0].spec",
     "json: cannot unmarshal string into Go struct field PersistentVolumeClaim.spec.volumeClaimTemplates.spec "
     "of type v1.PersistentVolumeClaimSpec"),
    ("ResourceSlice", {"spec": {"devices": [{"name": "d", "attributes": {"model": {"int": "7"}}}]}},
     "spec.devices[0].attributes.model.int",
     "json: cannot unmarshal string into Go struct field DeviceAttribute.spec.devices.attributes.int of type int64"),
    ("CSIStorageCapacity", {"capacity": True}, "capacity",
     "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"),
    ("PriorityClass", {"value": "1000"}, "value",
     "json: cannot unmarshal string into Go struct field PriorityClass.value of type int32"),
])
def test_every_kind_refuses_values_of_the_wrong_json_type(kind, document, path, message):
    with pytest.raises(ManifestError) as info:
        decode(document, kind)
    assert (info.value.path, info.value.reason) == (path, message)


def test_values_of_the_right_type_and_nulls_are_kept():
    document = {"spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": 1, "memory": 0.5}}}],
                         "tolerations": [None, {"key": "k", "Effect": "NoSchedule"}], "nodeName": None},
                "metadata": {"labels": None, "creationTimestamp": datetime.datetime(2024, 1, 1)},
                "status": None}
    decoded = decode(document, "Pod")
    assert decoded.document == {
        "spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": 1, "memory": 0.5}}}],
                 "tolerations": [None, {"key": "k", "effect": "NoSchedule"}], "nodeName": None},
        "metadata": {"labels": None, "creationTimestamp": datetime.datetime(2024, 1, 1)}, "status": None}
    assert decoded.case_folded == ("spec.tolerations[1].Effect",)
    # IntOrString takes an int32 or a string
    assert decode({"spec": {"minAvailable": 2, "maxUnavailable": "50%"}}, "PodDisruptionBudget").document == {
        "spec": {"minAvailable": 2, "maxUnavailable": "50%"}}


def test_tuples_and_non_dict_mappings_are_decoded():
    from fastsched.api import FrozenDict

    document = FrozenDict({"spec": FrozenDict({"containers": ({"name": "c", "Image": "i"},),
                                               "node_name": "n"})})
    decoded = decode(document, "Pod")
    assert decoded.document == {"spec": {"containers": [{"name": "c", "image": "i"}], "nodeName": "n"}}
    assert type(decoded.document) is dict and type(decoded.document["spec"]["containers"]) is list


# --------------------------------------------------------------------------------------------
# Repeated keys (two spellings of one field)
# --------------------------------------------------------------------------------------------
def test_later_duplicate_wins():
    decoded = decode({"spec": {"nodeName": "first", "node_name": "second", "NodeName": "third"}}, "Pod")
    assert decoded.document == {"spec": {"nodeName": "third"}}
    assert decoded.case_folded == ("spec.NodeName",)
    decoded = decode({"spec": {"NodeName": "first", "nodeName": "second"}}, "Pod")
    assert decoded.document == {"spec": {"nodeName": "second"}}
    decoded = decode({"spec": {"node_name": "first", "nodeName": "second"}}, "Pod")
    assert decoded.document == {"spec": {"nodeName": "second"}}
    # lists are replaced
    decoded = decode({"spec": {"tolerations": [{"key": "a"}], "Tolerations": [{"key": "b"}]}}, "Pod")
    assert decoded.document == {"spec": {"tolerations": [{"key": "b"}]}}
    # null replaces
    decoded = decode({"spec": {"affinity": {"nodeAffinity": {}}, "Affinity": None}}, "Pod")
    assert decoded.document == {"spec": {"affinity": None}}


def test_later_duplicate_struct_or_map_merges_into_the_earlier_one_as_in_go():
    decoded = decode({"metadata": {"name": "a", "labels": {"x": "1", "y": "1"}},
                      "Metadata": {"namespace": "ns", "Labels": {"y": "2"}}}, "Pod")
    assert decoded.document == {"metadata": {"name": "a", "labels": {"x": "1", "y": "2"}, "namespace": "ns"}}
    assert decoded.case_folded == ("Metadata", "metadata.Labels")


# --------------------------------------------------------------------------------------------
# Fragments
# --------------------------------------------------------------------------------------------
def test_fragments_decode_but_are_not_kinds():
    decoded = decode({"metadata": {"labels": {"a": "b"}}, "spec": {"containers": [{"name": "c", "imag": "x"}]}},
                     "PodTemplateSpec")
    assert decoded.unknown == ("spec.containers[0].imag",)
    assert "PodTemplateSpec" not in schema_kinds()
    assert decode({"name": "x", "generate_name": "y"}, "ObjectMeta").document == {"name": "x", "generateName": "y"}


def test_null_unknown_fields_are_dropped_silently():
    """A newer kubernetes client's to_dict() lists every field of its own API version, most of
    them None: a null field that this version does not know carries nothing to report."""
    decoded = decode({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"},
                      "spec": {"eviction_responders": None, "containers": [{"name": "c", "futureField": None}],
                               "nodeSelecter": {"a": "b"}}}, "Pod")
    assert decoded.unknown == ("spec.nodeSelecter",)
    assert decoded.document["spec"] == {"containers": [{"name": "c"}]}


def test_a_document_must_be_a_mapping_of_any_kind():
    """``decode`` takes a dict or any other Mapping (a read-only view of one) and refuses the rest
    with a TypeError naming the kind."""
    import types

    document = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}, "spec": {"containers": []}}
    assert decode(types.MappingProxyType(document), "Pod").document == document
    for value in ([document], "p", None):
        with pytest.raises(TypeError, match="a Pod manifest must be a mapping, not"):
            decode(value, "Pod")
