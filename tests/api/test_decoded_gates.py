"""Objects decoded beforehand under other feature gates than the Scheduler's: the Scheduler's API
server takes them when its gates decode their manifest to the same object, and refuses them
otherwise with an error naming the fields and the gates (never a silent change: a pod decoded
without GenericWorkload has lost its ``spec.schedulingGroup``, and would be a loose pod)."""
from __future__ import annotations

import copy

import pytest

from fastsched import Scheduler
from fastsched.api import ManifestError, Node, Pod, load_objects
from fastsched.api.load import check_decoded_gates
from fastsched.testing import node_manifest

GW = {"GenericWorkload": True}
TAS = {"GenericWorkload": True, "TopologyAwareWorkloadScheduling": True}


def _pod_doc(group: bool = True) -> dict:
    spec = {"containers": [{"name": "c", "image": "busybox"}]}
    if group:
        spec["schedulingGroup"] = {"podGroupName": "pg"}
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "default"}, "spec": spec}


def _pod_group_doc(constraints: bool = True) -> dict:
    spec = {"schedulingPolicy": {"gang": {"minCount": 2}}}
    if constraints:
        spec["schedulingConstraints"] = {"topology": [{"key": "topology.kubernetes.io/zone"}]}
    return {"apiVersion": "scheduling.k8s.io/v1beta1", "kind": "PodGroup",
            "metadata": {"name": "pg", "namespace": "default"}, "spec": spec}


def _workload_doc() -> dict:
    template = {"name": "t", "schedulingPolicy": {"gang": {"minCount": 2}},
                "schedulingConstraints": {"topology": [{"key": "topology.kubernetes.io/zone"}]}}
    return {"apiVersion": "scheduling.k8s.io/v1beta1", "kind": "Workload",
            "metadata": {"name": "w", "namespace": "default"}, "spec": {"podGroupTemplates": [template]}}


def _slice_doc(attributes: dict) -> dict:
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": "s"},
            "spec": {"driver": "dra.example.com", "nodeName": "n", "pool": {"name": "p", "generation": 1,
                                                                          "resourceSliceCount": 1},
                     "devices": [{"name": "d", "attributes": attributes}]}}


def _one(doc: dict, gates=None):
    (obj,) = load_objects([copy.deepcopy(doc)], feature_gates=gates)
    return obj


def test_pod_decoded_without_generic_workload_is_refused_by_a_scheduler_with_it():
    pod = Pod.from_manifest(_pod_doc())  # v1.37.2's defaults: GenericWorkload off drops the group
    assert pod.scheduling_group is None
    sched = Scheduler(feature_gates=GW)
    with pytest.raises(ManifestError) as e:
        sched.add(pod)
    assert str(e.value) == (
        "Pod default/p: spec.schedulingGroup: decoded with feature gate GenericWorkload=false, but this "
        "Scheduler's API server has GenericWorkload=true and keeps what that dropped: decode it with the "
        "Scheduler's feature gates (Pod.from_manifest(..., feature_gates=scheduler.feature_gates)) or add its "
        "manifest")
    # a copy changed in code is still that manifest's pod
    with pytest.raises(ManifestError, match="spec.schedulingGroup"):
        sched.add(pod.replace(labels={"x": "y"}))
    with pytest.raises(ManifestError, match="spec.schedulingGroup"):
        sched.explain(pod)
    # several bound pods at once (the batch path, which skips what was admitted already)
    bound = [Pod.from_manifest({**doc, "metadata": {"name": name, "namespace": "default"},
                                "spec": {**doc["spec"], "nodeName": "n0"}})
             for name, doc in (("r", _pod_doc(group=False)), ("q", _pod_doc()))]
    other = Scheduler(feature_gates=GW)
    other.add(Node.from_manifest(node_manifest("n0")))
    with pytest.raises(ManifestError, match="^Pod default/q: spec.schedulingGroup"):
        other.add(bound)
    assert sched.objects("Pod") == []
    # decoded with the Scheduler's gates: a member of its group
    sched.add(Pod.from_manifest(_pod_doc(), feature_gates=sched.feature_gates))
    assert sched.objects("Pod")[0]["spec"]["schedulingGroup"] == {"podGroupName": "pg"}


def test_pod_decoded_with_generic_workload_loses_its_group_in_a_scheduler_without_it():
    """The other way round the Scheduler's API server drops the field, as from the manifest (and
    from an object built in code): the pod is a loose pod there, as its manifest would be."""
    pod = Pod.from_manifest(_pod_doc(), feature_gates=GW)
    assert pod.scheduling_group is not None
    sched = Scheduler()
    sched.add(Node.from_manifest(node_manifest("n0")))
    sched.add(pod)
    assert sched.cluster.pods[pod.uid].scheduling_group is None
    assert pod.scheduling_group is not None  # the caller's object is left as it is
    sched.run()
    assert [(r.status, r.node_name) for r in sched.results.values()] == [("Scheduled", "n0")]


def test_objects_the_gates_do_not_change_are_taken():
    """No false alarm: a pod without a group, and nodes (one by one and in a batch), decoded with
    the defaults, go to a Scheduler with GenericWorkload as they are."""
    sched = Scheduler(feature_gates=GW)
    loose = Pod.from_manifest(_pod_doc(group=False))
    sched.add(loose)
    nodes = [Node.from_manifest(node_manifest(f"n{i}")) for i in range(3)]
    sched.add(nodes[0])
    sched.add(nodes[1:])
    assert [p["metadata"]["name"] for p in sched.objects("Pod")] == ["p"]
    assert len(sched.objects("Node")) == 3
    # the check recorded the Scheduler's gates on it: its copies are not decoded again
    assert check_decoded_gates(loose, sched.feature_gates) is loose


@pytest.mark.parametrize("doc,field", [(_pod_group_doc(), "spec.schedulingConstraints"),
                                       (_workload_doc(), "spec.podGroupTemplates")],
                         ids=["PodGroup", "Workload"])
def test_pod_groups_and_workloads_decoded_without_topology_aware_scheduling(doc, field):
    obj = _one(doc, GW)  # TopologyAwareWorkloadScheduling off: the constraints dropped
    with pytest.raises(ManifestError) as e:
        Scheduler(feature_gates=TAS).add(obj)
    kind, name = doc["kind"], doc["metadata"]["name"]
    assert str(e.value).startswith(f"{kind} default/{name}: {field}: decoded with feature gate "
                                   "TopologyAwareWorkloadScheduling=false, but this Scheduler's API server has "
                                   "TopologyAwareWorkloadScheduling=true")
    Scheduler(feature_gates=TAS).add(_one(doc, TAS))  # the Scheduler's gates: taken
    Scheduler(feature_gates=TAS).add(_one(_pod_group_doc(constraints=False), GW))  # nothing dropped: taken


def test_resource_slices_decoded_without_list_type_attributes():
    """The drop rewrites the slice's manifest: the check reads the document it was decoded from.
    (Loaded without validation: a list attribute is invalid once dropped, a scalar beside it
    invalid with the gate, so no slice valid under both decodes differently.)"""
    doc = _slice_doc({"a": {"ints": [1, 2]}})
    (obj,) = load_objects([doc], validate=False)
    assert "ints" not in obj.manifest["spec"]["devices"][0]["attributes"]["a"]
    gates = {"DRAListTypeAttributes": True}
    with pytest.raises(ManifestError, match=r"^ResourceSlice s: spec.devices: decoded with feature gate "
                                            r"DRAListTypeAttributes=false, but this Scheduler's API server has "
                                            r"DRAListTypeAttributes=true"):
        Scheduler(feature_gates=gates).add(obj)
    Scheduler(feature_gates=gates).add(_one(_slice_doc({"a": {"int": 3}})))  # nothing dropped: taken


def test_an_object_the_schedulers_api_server_refuses():
    """Decoded (and valid) under the gate, invalid under the Scheduler's: its validation error."""
    from fastsched.api.validation import ValidationError
    obj = _one(_slice_doc({"a": {"ints": [1, 2]}}), {"DRAListTypeAttributes": True})
    with pytest.raises(ValidationError, match="exactly one value must be specified"):
        Scheduler().add(obj)


def test_a_pod_stamped_from_a_template_records_its_own_load():
    """Pods of one template after the first are stamped from it: the record is the later load's."""
    doc = _pod_doc(group=False)
    first = _one(doc)
    second = _one({**doc, "metadata": {"name": "p2", "namespace": "default"}}, GW)
    assert first.decoded_under[0] == frozenset()
    assert second.decoded_under[0] == frozenset({("GenericWorkload", True)})
