"""The Scheduler plays the API server's part: names, duplicates, validation, pod lifecycle."""
import re
import warnings

import pytest

from fastsched import Scheduler
from fastsched.api import ManifestError, ManifestWarning, Pod
from fastsched.api.names import NAME_ALPHABET
from fastsched.api.validation import ValidationError, group_resource
from fastsched.errors import FastschedError, NotFoundError
from fastsched.scheduler.scheduler import SCHEDULED, TERMINATING
from fastsched.testing import node_manifest, pod_manifest


def one_node_scheduler(cpu: str = "4", **kwargs) -> Scheduler:
    s = Scheduler(seed=3, **kwargs)
    s.add_node(node_manifest("n1", cpu=cpu))
    return s


def template(generate_name: str = "web-", cpu: str = "100m") -> dict:
    manifest = pod_manifest("x", cpu=cpu)
    del manifest["metadata"]["name"]
    manifest["metadata"]["generateName"] = generate_name
    return manifest


def test_generate_name_gives_seeded_distinct_names_and_uids():
    s = one_node_scheduler()
    s.add([template(), template(), template()])
    names = [p.name for p in s.pods.values()]
    assert len(set(names)) == 3
    suffix = f"[{NAME_ALPHABET}]{{5}}"
    assert all(re.fullmatch(f"web-{suffix}", n) for n in names)
    assert len({p.uid for p in s.pods.values()}) == 3
    again = one_node_scheduler()
    again.add([template(), template(), template()])
    assert [p.name for p in again.pods.values()] == names  # same seed, same names
    manifests = s.objects("Pod")
    assert [m["metadata"]["name"] for m in manifests] == names


def test_generate_name_is_cut_to_58_characters():
    s = one_node_scheduler()
    s.add(template("a" * 70 + "-"))
    (pod,) = s.pods.values()
    assert len(pod.name) == 63 and pod.name.startswith("a" * 58)


def test_a_pod_without_name_or_generate_name_is_refused():
    manifest = pod_manifest("x")
    del manifest["metadata"]["name"]
    with pytest.raises(ValidationError, match=r"metadata.name: Required value: name or generateName is required"):
        one_node_scheduler().add(manifest)


def test_duplicate_nodes_and_pods_are_errors_unless_updated():
    s = one_node_scheduler()
    with pytest.raises(ManifestError, match='nodes "n1" already exists'):
        s.add_node(node_manifest("n1", cpu="8"))
    s.update_node(node_manifest("n1", cpu="8"))
    assert s.cache.get_node("n1").allocatable["cpu"] == 8000
    s.add_pod(pod_manifest("p"))
    with pytest.raises(ManifestError, match='pods "p" already exists'):
        s.add_pod(pod_manifest("p", cpu="1"))
    s.add_pod(pod_manifest("p", namespace="other"))  # same name, other namespace: fine
    with pytest.raises(ManifestError, match="has the uid"):
        s.add_pod(pod_manifest("q", uid=s.get_object("Pod", "p").uid))


def test_objects_built_in_code_are_validated_too():
    bad = Pod(name="p", node_name="Not A Node Name!")
    with pytest.raises(ValidationError, match=r'spec.nodeName: Invalid value: "Not A Node Name!"'):
        one_node_scheduler().add_pod(bad)


def test_api_server_messages_for_what_it_refuses():
    cases = {
        "cpu": ({"containers": [{"name": "c", "image": "i", "resources": {"requests": {"cpu": "-1"}}}]},
                'spec.containers[0].resources.requests[cpu]: Invalid value: "-1": must be greater than or equal to 0'),
        "effect": ({"tolerations": [{"key": "k", "operator": "Exists", "effect": "Sometimes"}]},
                   'spec.tolerations[0].effect: Unsupported value: "Sometimes"'),
        "skew": ({"topologySpreadConstraints": [{"maxSkew": 0, "topologyKey": "zone",
                                                 "whenUnsatisfiable": "DoNotSchedule"}]},
                 "spec.topologySpreadConstraints[0].maxSkew: Invalid value: 0: must be greater than zero"),
        "port": ({"containers": [{"name": "c", "image": "i", "ports": [{"containerPort": 80, "hostPort": 99999}]}]},
                 "spec.containers[0].ports[0].hostPort: Invalid value: 99999: must be between 1 and 65535, inclusive"),
    }
    for name, (spec, message) in cases.items():
        manifest = pod_manifest(f"p-{name}")
        manifest["spec"].update(spec)
        with pytest.raises(ValidationError) as info:
            one_node_scheduler().add(manifest)
        assert message in str(info.value), name


def test_unknown_fields_warn_by_default_and_fail_when_strict():
    manifest = pod_manifest("p")
    manifest["spec"]["nodeSelecter"] = {"disk": "ssd"}
    s = one_node_scheduler()
    with pytest.warns(ManifestWarning, match=r'unknown field "spec.nodeSelecter" in Pod default/p'):
        s.add(manifest)
    assert s.run()[0].status == SCHEDULED  # the misspelled selector did not apply, as in a cluster
    with pytest.raises(ManifestError, match=r'strict decoding error: unknown field "spec.nodeSelecter"'):
        one_node_scheduler(strict=True).add(manifest)
    with pytest.raises(ManifestError, match="strict decoding error"):
        one_node_scheduler().add(manifest, strict=True)


def test_completed_pods_hold_nothing_and_are_not_scheduled():
    s = one_node_scheduler(cpu="2")
    done = pod_manifest("job-1", cpu="2", node_name="n1")
    done["status"] = {"phase": "Succeeded"}
    pending_failed = pod_manifest("job-2", cpu="1")
    pending_failed["status"] = {"phase": "Failed"}
    s.add([done, pending_failed, pod_manifest("new", cpu="2")])
    results = {r.pod.name: r for r in s.run()}
    assert set(results) == {"new"}                    # terminal pods are never queued
    assert results["new"].status == SCHEDULED         # and the Succeeded pod's 2 cpus are free
    assert {m["metadata"]["name"] for m in s.objects("Pod")} == {"job-1", "job-2", "new"}


def test_a_running_pod_that_succeeds_frees_its_node():
    s = one_node_scheduler(cpu="2")
    s.add(pod_manifest("batch", cpu="2", node_name="n1"))
    s.add(pod_manifest("next", cpu="2"))
    assert s.run()[0].status != SCHEDULED
    finished = pod_manifest("batch", cpu="2", node_name="n1")
    finished["status"] = {"phase": "Succeeded"}
    s.update_pod(finished)
    assert {r.pod.name: r.status for r in s.run()}["next"] == SCHEDULED


def test_terminating_pods_count_on_their_node_and_are_never_scheduled():
    s = one_node_scheduler(cpu="2")
    leaving = pod_manifest("leaving", cpu="2", node_name="n1")
    leaving["metadata"]["deletionTimestamp"] = "2026-11-25T10:00:00Z"
    unbound = pod_manifest("unbound", cpu="100m")
    unbound["metadata"]["deletionTimestamp"] = "2026-11-25T10:00:00Z"
    s.add([leaving, unbound, pod_manifest("new", cpu="1")])
    results = {r.pod.name: r for r in s.run()}
    assert results["unbound"].status == TERMINATING and "deletionTimestamp" in results["unbound"].message
    assert results["unbound"].attempts == 0
    assert results["new"].status != SCHEDULED and "Insufficient cpu" in results["new"].message


def test_a_pod_on_a_missing_node_is_counted_there_with_a_warning():
    s = one_node_scheduler(cpu="2")
    with pytest.warns(ManifestWarning, match='bound to node "gone", which is not in the cluster'):
        s.add(pod_manifest("orphan", cpu="2", node_name="gone"))
    s.add(pod_manifest("new", cpu="2"))
    assert s.run()[0].node_name == "n1"
    s.add_node(node_manifest("gone", cpu="2"))        # the node arrives: the pod is already on it
    s.add(pod_manifest("third", cpu="2"))
    third = [r for r in s.run() if r.pod.name == "third"][0]
    assert third.status != SCHEDULED and "Insufficient cpu" in third.message


def test_directories_and_unknown_kinds(tmp_path):
    (tmp_path / "nodes").mkdir()
    (tmp_path / "nodes" / "n.yaml").write_text("apiVersion: v1\nkind: Node\nmetadata: {name: n2}\n"
                                               "status: {allocatable: {cpu: '4', memory: 4Gi, pods: '10'}}\n")
    (tmp_path / "app.json").write_text('{"apiVersion": "v1", "kind": "List", "items": ['
                                       '{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}},'
                                       '{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"},'
                                       ' "spec": {"containers": [{"name": "c", "image": "i"}]}}]}')
    (tmp_path / "README.md").write_text("not a manifest")
    s = one_node_scheduler()
    with pytest.warns(ManifestWarning, match=r"skipped 1 object of kinds fastsched does not model: ConfigMap \(1\)"):
        s.add(tmp_path)
    assert s.get_object("Node", "n2") is not None and s.get_object("Pod", "p") is not None


def test_client_objects_are_accepted_as_dicts_are():
    class Kr8sLike:
        def __init__(self, raw):
            self.raw = raw

    class PydanticLike:
        def __init__(self, document):
            self.document = document

        def model_dump(self, by_alias=False, exclude_none=False, mode="python"):
            assert by_alias and exclude_none
            return self.document

    s = one_node_scheduler()
    s.add([Kr8sLike(pod_manifest("a")), PydanticLike(pod_manifest("b"))])
    assert {p.name for p in s.pods.values()} == {"a", "b"}


def test_warnings_can_be_made_errors():
    manifest = pod_manifest("p")
    manifest["spec"]["requets"] = {}
    with warnings.catch_warnings():
        warnings.simplefilter("error", ManifestWarning)
        with pytest.raises(ManifestWarning):
            one_node_scheduler().add(manifest)


def test_pods_stamped_in_code_with_claim_templates_are_validated_with_their_own_names():
    """A generated claim is named ``<pod>-<claim>``: a long pod name makes it invalid even though the
    rest of the pod is the template's (the template fast path must not skip that check)."""
    from fastsched.api.validation import ValidationError
    from fastsched.testing import make_pod

    # bound pods: added in bulk, through the template fast path of pods built in code
    base = make_pod("a", cpu="1", node_name="n1").replace(
        manifest={}, resource_claims=({"name": "gpu", "resourceClaimTemplateName": "t"},))
    long_name = base.replace(name="p" * 250, uid="")
    s = Scheduler()
    s.add_node(node_manifest("n1"))
    with pytest.raises(ValidationError, match="final ResourceClaim name"):
        s.add_pods([base, long_name])


@pytest.mark.parametrize("call, message", [
    (lambda s: s.delete_pod(Pod.from_manifest(pod_manifest("ghost"))), 'pods "ghost" not found'),
    (lambda s: s.update_pod(pod_manifest("ghost")), 'pods "ghost" not found'),
    (lambda s: s.delete_node("n9"), 'nodes "n9" not found'),
    (lambda s: s.update_node(node_manifest("n9")), 'nodes "n9" not found'),
    (lambda s: s.delete_object("StorageClass", "fast"), 'storageclasses.storage.k8s.io "fast" not found'),
    (lambda s: s.delete_object("PersistentVolumeClaim", "data", "default"), 'persistentvolumeclaims "data" not found'),
    (lambda s: s.scale("Deployment", "web", 3), 'deployments.apps "web" not found'),
])
def test_an_object_that_is_not_there_is_the_api_servers_not_found(call, message):
    """Updating or deleting what is not there is the API's NotFound, in its words (plural resource,
    group): a FastschedError, and the KeyError it was before."""
    s = one_node_scheduler()
    with pytest.raises(NotFoundError) as info:
        call(s)
    assert str(info.value) == message
    assert isinstance(info.value, KeyError) and isinstance(info.value, FastschedError)


def test_group_resources_are_apimachinerys_plurals():
    assert [group_resource(k) for k in ("Pod", "Node", "Service", "PriorityClass", "PodDisruptionBudget",
                                        "CSIStorageCapacity", "ResourceClaim", "Namespace", "Job")] == [
        "pods", "nodes", "services", "priorityclasses.scheduling.k8s.io", "poddisruptionbudgets.policy",
        "csistoragecapacities.storage.k8s.io", "resourceclaims.resource.k8s.io", "namespaces", "jobs.batch"]
