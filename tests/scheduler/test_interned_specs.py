"""Pods parsed one manifest each share their spec objects once queued (Scheduler._interned), so the
compiled cycle finds their plan by identity, and nothing about a pod changes but the identity of
its equal field values."""
import copy

from fastsched import Scheduler
from fastsched.testing import make_node, pod_manifest


def manifest(name: str, cpu: str = "100m") -> dict:
    m = pod_manifest(name, cpu=cpu, memory="128Mi", labels={"app": "web", "tier": "front"},
                     tolerations=[{"key": "k", "operator": "Exists", "effect": "NoSchedule"}],
                     nodeSelector={"kubernetes.io/os": "linux"})
    return copy.deepcopy(m)  # nothing shared between the manifests: each parsed on its own


def nodes(n: int):
    return [make_node(f"n{i}", cpu="8", labels={"kubernetes.io/os": "linux"}) for i in range(n)]


def test_equal_manifests_share_their_spec_objects_and_their_plan():
    s = Scheduler(seed=3)
    s.add_nodes(nodes(20))
    s.add_pods([manifest(f"web-{i}") for i in range(30)])
    pods = [s.pods[uid] for uid in s._order]
    first = pods[0]
    for p in pods[1:]:
        assert p.labels is first.labels and p.containers is first.containers
        assert p.node_selector is first.node_selector and p.tolerations is first.tolerations
    engine = s.profiles["default-scheduler"].compiled_cycle
    by_value = []
    original = engine._shared_key
    engine._shared_key = lambda *args: by_value.append(1) or original(*args)
    results = s.run()
    assert all(r.status == "Scheduled" for r in results) and engine.fused_cycles == 30
    # the first pod's plan is compiled and filed under its values too; every later pod's plan is
    # found by the identity of its spec objects
    assert len(by_value) == 1


def test_manifests_parsed_from_json_share_their_namespace_and_plan():
    """A namespace parsed from JSON (or YAML) is a new string object per pod; the plan key reads
    its identity (SPEC_FIELDS), and a gang's run (``place_run``) takes a member only when every
    spec object is the previous member's, so it is shared as the other fields are. (Pods the
    template cache stamps share their template's namespace already; a pod with
    ``spec.schedulingGroup`` or ``spec.resourceClaims`` is parsed in full: a gang's members.)"""
    import json

    from fastsched.features import FeatureGates

    gates = FeatureGates({"GenericWorkload": True})
    pod_group = {"apiVersion": "scheduling.k8s.io/v1beta1", "kind": "PodGroup",
                 "metadata": {"name": "g", "namespace": "team-a"}, "spec": {"schedulingPolicy": {"basic": {}}}}
    text = json.dumps({**manifest("x"), "metadata": {"name": "x", "namespace": "team-a"}})
    parsed = []
    for i in range(5):
        m = json.loads(text)
        m["metadata"]["name"] = f"web-{i}"
        m["spec"]["schedulingGroup"] = {"podGroupName": "g"}
        parsed.append(m)
    assert parsed[0]["metadata"]["namespace"] is not parsed[1]["metadata"]["namespace"]
    s = Scheduler(seed=3, feature_gates=gates)
    s.add_nodes(nodes(4))
    s.add([pod_group])
    s.add_pods(parsed)
    pods = [s.pods[uid] for uid in s._order]
    assert len(pods) == 5 and all(p.namespace is pods[0].namespace == "team-a" for p in pods)
    engine = s.profiles["default-scheduler"].compiled_cycle
    by_value = []
    original = engine._shared_key
    engine._shared_key = lambda *args: by_value.append(1) or original(*args)
    assert all(r.status == "Scheduled" for r in s.run())
    assert len(by_value) == 1  # found by identity after the first


def test_containers_with_other_exact_requests_are_not_shared():
    """0.1Gi (107374182.4 bytes) and 107374183 round to the same byte count, which is what
    Container equality compares, but their exact nano-unit amounts differ, and a pod's totals are
    summed from the exact amounts, as upstream sums quantities (2 x 0.1Gi = 214748365 bytes,
    2 x 107374183 = 214748366: one fits a 214748365-byte node, the other does not)."""
    def two_containers(name, memory):
        m = manifest(name)
        m["spec"]["containers"] = [{"name": c, "image": "img", "resources": {"requests": {"memory": memory}}}
                                   for c in ("a", "b")]
        return m

    s = Scheduler(seed=3)
    s.add_nodes([make_node("n0", cpu="4", memory="214748365", labels={"kubernetes.io/os": "linux"})])
    # b first: shared with b's containers, a would ask 214748366 bytes too, and not fit
    s.add_pods([two_containers("b", "107374183"), two_containers("a", "0.1Gi"), two_containers("c", "0.1Gi")])
    b, a, c = (s.pods[uid] for uid in s._order)
    assert a.containers == b.containers and a.containers is not b.containers
    assert a.containers is c.containers and a.requests != b.requests
    results = {r.pod.name: r for r in s.run()}
    assert results["a"].status == "Scheduled"
    assert results["b"].status == "Unschedulable" and "Insufficient memory" in results["b"].message


def test_interning_changes_no_decision():
    """The same pods, parsed one manifest each or built once and copied as objects, land on the
    same nodes in the same order."""
    def run(pod_list):
        s = Scheduler(seed=11)
        s.add_nodes(nodes(50))
        s.add_pods(pod_list)
        return [(r.pod.name, r.node_name, r.status) for r in s.run()]

    manifests = [manifest(f"p{i}", cpu=["100m", "250m", "1"][i % 3]) for i in range(60)]
    fresh = run(manifests)
    again = run([copy.deepcopy(m) for m in manifests])
    assert fresh == again and all(status == "Scheduled" for _, _, status in fresh)


def test_a_fork_shares_the_map_instead_of_copying_it():
    s = Scheduler()
    s.add_nodes(nodes(1))
    s.add_pods([manifest("a"), manifest("b")])
    f = s.fork()
    assert f._spec_objects is s._spec_objects
    f.add_pods([manifest("c")])
    (c,) = [f.pods[uid] for uid in f._order if f.pods[uid].name == "c"]
    assert c.labels is s.pods[s._order[0]].labels


def test_a_second_template_with_equal_values_is_hashed_once(monkeypatch):
    """Pods stamped from a second template whose containers equal a first one's (scheduler_perf's
    light-pod after pod-with-finalizer) take the first one's objects; only the first such pod
    hashes them, the others are recognized by the identity of their own (alias) objects."""
    from fastsched.api import Pod
    from fastsched.scheduler.scheduler import _SpecObjects
    from fastsched.sim.generators import PodFactory

    import dataclasses

    def template(name):  # equal containers, distinct objects (the loader may share decoded ones)
        pod = Pod.from_manifest(manifest(name))
        return pod.replace(containers=tuple(dataclasses.replace(c) for c in pod.containers))

    first, second = PodFactory(template("t1")), PodFactory(template("t2"))
    assert first.template.containers == second.template.containers
    assert first.template.containers is not second.template.containers
    s = Scheduler(seed=3)
    s.add_nodes(nodes(4))
    s.add_pods([first.make(f"a{i}", "default") for i in range(3)])
    hashed = []
    original = _SpecObjects.setdefault
    monkeypatch.setattr(_SpecObjects, "setdefault", lambda self, key, value: hashed.append(key[0]) or
                        original(self, key, value))
    s.add_pods([second.make(f"b{i}", "default") for i in range(5)])
    pods = [s.pods[uid] for uid in s._order]
    for p in pods[3:]:
        assert p.containers is pods[0].containers and p.labels is pods[0].labels
        assert p.node_selector is pods[0].node_selector and p.tolerations is pods[0].tolerations
    assert sorted(hashed) == sorted(set(hashed)) and "containers" in hashed  # each field once, at b0
    assert [r.node_name for r in s.run()] and all(p.node_name for p in s.pods.values())


def test_interning_pods_that_differ_only_in_mount_names_is_linear(monkeypatch):
    """Pods each with a mount of its own name (a dump's ``kube-api-access-<random>``): interning
    compares a pod's containers with those of the pods whose hash they share, so each pod's
    containers are compared with a bounded number of others (every earlier pod's, when the hash
    left the mounts out: quadratic, ~1.5 ms a pod of a 3,000-pod dump)."""
    from fastsched.api import objects

    compared = []
    original = objects.Container.__eq__
    monkeypatch.setattr(objects.Container, "__eq__", lambda a, b: compared.append(1) or original(a, b))
    docs = []
    for i in range(200):
        m = manifest(f"web-{i}")
        m["spec"]["containers"][0]["volumeMounts"] = [{"mountPath": "/var/run/secrets/kubernetes.io/serviceaccount",
                                                       "name": f"kube-api-access-{i:05d}", "readOnly": True}]
        m["spec"]["volumes"] = [{"name": f"kube-api-access-{i:05d}", "projected": {"sources": []}}]
        docs.append(m)
    s = Scheduler(seed=3)
    s.add_nodes(nodes(4))
    s.add_pods(docs)
    assert len(compared) < 2 * len(docs)
