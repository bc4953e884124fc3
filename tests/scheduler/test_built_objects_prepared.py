"""An object built in code and added gets what the API server's create strategy gives the same
object written as a manifest (``PrepareForCreate``: fields of disabled gates dropped, an unbound
pod's status reset), on every entry point that creates: ``add_pod``, ``add_pods`` (its shortcut
for pods stamped from one template included), ``add``, ``add_object``. Updates keep what they are
given (upstream's PrepareForUpdate keeps a field the old object already uses)."""
from __future__ import annotations

import copy

import pytest

from fastsched import Scheduler
from fastsched.api import Job, Pod
from fastsched.testing import make_node, pod_manifest

ON = {"GenericWorkload": True, "WorkloadWithJob": True}


def _grouped_pod(name: str) -> Pod:
    """A pod with spec.schedulingGroup, built in code (``replace``: not admitted by any loader)."""
    manifest = pod_manifest("template", cpu="100m")
    manifest["spec"]["schedulingGroup"] = {"podGroupName": "g"}
    pod = Pod.from_manifest(manifest, feature_gates=ON).replace(name=name, uid=f"uid-{name}", manifest={})
    assert pod.scheduling_group is not None and not pod.admitted
    return pod


def _scheduler() -> Scheduler:
    s = Scheduler()  # v1.37.2's default gates: GenericWorkload off
    s.add_node(make_node("n1", cpu="4"))
    return s


@pytest.mark.parametrize("entry", ["add_pod", "add_pods", "add"])
def test_a_built_pod_loses_the_scheduling_group_of_a_disabled_gate_as_its_manifest_does(entry):
    s = _scheduler()
    pods = [_grouped_pod("a"), _grouped_pod("b")]
    # b is a.replace(...)-alike with the same field objects: add_pods' template shortcut would mark it
    pods[1] = pods[0].replace(name="b", uid="uid-b")
    if entry == "add_pod":
        for pod in pods:
            s.add_pod(pod)
    else:
        getattr(s, entry)(pods)
    manifest = pod_manifest("m", cpu="100m")
    manifest["spec"]["schedulingGroup"] = {"podGroupName": "g"}
    s.add_pod(manifest)
    assert [s.get_pod("default", n).scheduling_group for n in ("a", "b", "m")] == [None, None, None]


def test_with_the_gate_on_a_built_pod_keeps_its_group():
    s = Scheduler(feature_gates=ON)
    s.add_pod(_grouped_pod("a"))
    assert s.get_pod("default", "a").scheduling_group is not None


def test_an_update_keeps_what_it_is_given():
    s = _scheduler()
    s.add_pod(pod_manifest("a", cpu="100m"))
    s.update_pod(s.get_pod("default", "a").replace(labels={"x": "y"}))
    assert s.get_pod("default", "a").labels == {"x": "y"}


def test_a_built_job_loses_spec_scheduling_without_workload_with_job():
    doc = {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "myjob", "namespace": "default"},
           "spec": {"parallelism": 1, "scheduling": {"schedulingPolicy": {"gang": {"minCount": 1}}},
                    "template": {"spec": {"restartPolicy": "Never", "containers": [{"name": "c", "image": "i"}]}}}}
    built = Job.from_manifest(copy.deepcopy(doc), feature_gates=ON).replace(name="built")
    assert built.scheduling is not None and not built.admitted
    s = _scheduler()
    s.add_object(built)
    s.add_object(doc)
    assert [s.get_object("Job", n).scheduling for n in ("built", "myjob")] == [None, None]


def test_a_built_pod_with_an_ephemeral_volume_is_validated_with_its_own_name():
    """The template shortcut of add_pods checks a built pod's name alone; an ephemeral volume's
    claims are named after the pod (``<pod>-<volume>``), so such a pod is validated whole: here
    its claim volume names the claim its own ephemeral volume creates."""
    from fastsched.api.validation import ValidationError
    manifest = pod_manifest("template", cpu="100m")
    manifest["spec"]["volumes"] = [{"name": "scratch", "ephemeral": {"volumeClaimTemplate": {"spec": {
        "accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}}}},
        {"name": "data", "persistentVolumeClaim": {"claimName": "web-scratch"}}]
    first = Pod.from_manifest(manifest).replace(name="a", uid="uid-a", manifest={})
    first.admitted = False
    second = first.replace(name="web", uid="uid-web")  # the same field objects
    s = _scheduler()
    with pytest.raises(ValidationError, match=r'spec\.volumes\[1\]\.persistentVolumeClaim\.claimName: Invalid value: '
                                              r'"web-scratch": must not reference a PVC that gets created'):
        s.add_pods([first, second])
    assert s.get_pod("default", "a") is not None
