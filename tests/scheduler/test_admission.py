"""The API server's admission of pods to schedule: DefaultTolerationSeconds (on by default in
kube-apiserver) gives a pod that does not tolerate them a 300 s NoExecute toleration of the
not-ready and unreachable taints, as pods created through a cluster have them."""
import pytest

from fastsched import Scheduler
from fastsched.api import Toleration
from fastsched.testing import make_node, make_pod

NOT_READY = Toleration("node.kubernetes.io/not-ready", "Exists", "", "NoExecute", 300)
UNREACHABLE = Toleration("node.kubernetes.io/unreachable", "Exists", "", "NoExecute", 300)


def admitted(tolerations=None, **kw):
    s = Scheduler()
    s.add_nodes([make_node("n0")])
    s.add_pod(make_pod("p", tolerations=tolerations, **kw) if tolerations is not None else make_pod("p", **kw))
    return s.get_pod("default", "p")


@pytest.mark.parametrize("given,added", [
    (None, [NOT_READY, UNREACHABLE]),
    ([{"operator": "Exists"}], []),                                   # empty key and effect: tolerates all
    ([{"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 5}],
     [UNREACHABLE]),
    ([{"key": "node.kubernetes.io/unreachable", "operator": "Exists"}], [NOT_READY]),  # no effect: any effect
    ([{"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoSchedule"}],
     [NOT_READY, UNREACHABLE]),                                       # another effect does not count
    ([{"operator": "Exists", "effect": "NoExecute"}], []),            # any key, NoExecute
])
def test_default_toleration_seconds(given, added):
    pod = admitted(given)
    kept = list(pod.tolerations[:len(given or ())])
    assert list(pod.tolerations[len(kept):]) == added


def test_a_bound_pod_is_left_as_it_came():
    pod = admitted(node_name="n0")
    assert pod.tolerations == ()


def test_a_pod_schedules_onto_a_node_tainted_unreachable_no_execute_but_not_no_schedule():
    s = Scheduler()
    s.add_nodes([make_node("gone", taints=[{"key": "node.kubernetes.io/unreachable", "effect": "NoExecute"}]),
                 make_node("cordoned", taints=[{"key": "node.kubernetes.io/unreachable", "effect": "NoSchedule"}])])
    s.add_pods([make_pod("a"), make_pod("b")])
    assert {r.pod.name: r.node_name for r in s.run()} == {"a": "gone", "b": "gone"}


_POD_TEMPLATES_SEEN: list = []


def _manifests(names, node_name=None, tolerations=None):
    out = []
    for name in names:
        spec = {"containers": [{"name": "c", "image": f"i{len(_POD_TEMPLATES_SEEN)}",
                                "resources": {"requests": {"cpu": "100m"}}}]}
        if node_name:
            spec["nodeName"] = node_name
        if tolerations is not None:
            spec["tolerations"] = tolerations
        out.append({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "default"},
                    "spec": spec})
    return out


@pytest.mark.parametrize("given", [None, [{"key": "node.kubernetes.io/unreachable", "operator": "Exists"}]])
def test_add_pods_of_manifests_admits_the_pods_stamped_from_a_template_in_place(given, monkeypatch):
    """``add_pods`` of manifests: the pods stamped from a template are admitted in the loader's copy
    (``on_stamped``), one Pod copy a pod instead of two; what each pod tolerates is what
    ``add_pod`` of each manifest gives, bound pods are left as they came, and the template the
    loader keeps is not changed (a later load stamps from it as before)."""
    from fastsched.api.objects import Pod
    copies = []
    with_tolerations = Pod.with_tolerations
    monkeypatch.setattr(Pod, "with_tolerations", lambda self, t: copies.append(self.name) or with_tolerations(self, t))
    names = [f"p{i}" for i in range(6)]
    _POD_TEMPLATES_SEEN.append(1)  # (a template of this run's own, by its image: no earlier test's)
    loads = []
    for run in range(2):  # the second load stamps every pod from the template the first one kept
        s = Scheduler()
        s.add_nodes([make_node("n0")])
        s.add_pods(_manifests(names, tolerations=given) + _manifests(["b0", "b1"], node_name="n0", tolerations=given))
        # the template's own pod (decoded on the first load) is copied by admission; the stamped ones are not
        assert copies == (["p0"] if run == 0 else []), copies
        copies.clear()
        loads.append(s)
    one_by_one = Scheduler()
    one_by_one.add_nodes([make_node("n0")])
    for m in _manifests(names, tolerations=given) + _manifests(["b0", "b1"], node_name="n0", tolerations=given):
        one_by_one.add_pod(m)
    for s in loads:
        for name in names + ["b0", "b1"]:
            assert s.get_pod("default", name).tolerations == one_by_one.get_pod("default", name).tolerations, name
        assert NOT_READY not in s.get_pod("default", "b1").tolerations  # bound: not admitted
        assert NOT_READY in s.get_pod("default", "p5").tolerations
    from fastsched.api.load import _POD_TEMPLATES
    kept = [t for t in _POD_TEMPLATES._templates.values() if t.name in names]
    assert kept and all(NOT_READY not in t.tolerations for t in kept)  # the template as decoded


# -- RuntimeClass admission (plugin/pkg/admission/runtimeclass, prepareObjects) -----------------
def _rc(name: str = "runtimeclassname", handler: str = "runc") -> dict:
    return {"apiVersion": "node.k8s.io/v1", "kind": "RuntimeClass", "metadata": {"name": name}, "handler": handler}


def _rc_pod(name: str, runtime_class: str | None, pc: str | None = None) -> dict:
    spec: dict = {"containers": [{"name": "c", "image": "busybox"}]}
    if runtime_class is not None:
        spec["runtimeClassName"] = runtime_class
    if pc is not None:
        spec["priorityClassName"] = pc
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "default"}, "spec": spec}


# TestAdmit's table: "runtimeClass found by lister" / "not found by lister nor client" (the client's
# live lookup is the same store here; the name lowercased: the API server validates it); plus a pod naming none
@pytest.mark.parametrize("classes,runtime_class,error", [
    ([_rc()], "runtimeclassname", ""),
    ([], "runtimeclassname", 'pod rejected: RuntimeClass "runtimeclassname" not found'),
    ([_rc("other")], "runtimeclassname", 'pod rejected: RuntimeClass "runtimeclassname" not found'),
    ([], None, ""),
])
def test_runtime_class_admission(classes, runtime_class, error):
    from fastsched.scheduler.result import ERROR, SCHEDULED

    s = Scheduler()
    s.add_nodes([make_node("n0")])
    s.add(classes)
    manifest = _rc_pod("p", runtime_class)
    assert s.explain(manifest).admission_error == error
    s.add(manifest)
    s.run()
    r = s.results[s.get_pod("default", "p").uid]
    assert (r.status, r.message if error else "") == ((ERROR, error) if error else (SCHEDULED, ""))
    if error:
        assert s.explain(s.get_pod("default", "p")).admission_error == error


def test_priority_admission_refuses_before_runtime_class():
    """kube-apiserver runs Priority before RuntimeClass: a pod both refuse gets Priority's error."""
    s = Scheduler()
    s.add_nodes([make_node("n0")])
    s.add(_rc_pod("p", "missing", pc="missing"))
    assert s.results[s.get_pod("default", "p").uid].message == "no PriorityClass with name missing was found"


@pytest.mark.parametrize("manifest,path", [
    (_rc(handler=""), "handler"),
    (_rc(handler="Not_A_Label"), "handler"),
    (_rc(name="Bad_Name"), "metadata.name"),
])
def test_runtime_class_validation(manifest, path):
    from fastsched.api.validation import ValidationError

    with pytest.raises(ValidationError) as info:
        Scheduler().add(manifest)
    assert path in str(info.value)


def _rc_overhead(pod_fixed: dict | None, name: str = "foo") -> dict:
    rc = {"apiVersion": "node.k8s.io/v1", "kind": "RuntimeClass", "metadata": {"name": name}, "handler": "bar"}
    if pod_fixed is not None:
        rc["overhead"] = {"podFixed": pod_fixed}
    return rc


def _overhead_pod(overhead: dict | None, requests: dict | None = None) -> dict:
    pod = _rc_pod("p", "foo")
    if overhead is not None:
        pod["spec"]["overhead"] = overhead
    if requests is not None:
        pod["spec"]["containers"][0]["resources"] = {"requests": requests, "limits": requests}
    return pod


# TestSetOverhead's table (newOverheadValidPod's overhead: cpu 100m, memory 1), then TestValidate's
# (validateOverhead): the pod's overhead after admission, or the refusal
@pytest.mark.parametrize("pod_fixed,overhead,requests,error", [
    ({"cpu": "100m", "memory": "1"}, None, None, ""),                               # no container requirements
    ({"cpu": "100m", "memory": "1"}, None, {"cpu": "1", "memory": "10"}, ""),     # guaranteed pod
    ({"cpu": "10", "memory": "10G"}, {"cpu": "100m", "memory": "1"}, None,       # differing overhead already set
     "pod rejected: Pod's Overhead doesn't match RuntimeClass's defined Overhead"),
    ({"cpu": "100m", "memory": "1"}, {"cpu": "100m", "memory": "1"}, None, ""),  # same overhead already set
    ({"cpu": "0.1", "memory": "1"}, {"cpu": "100m", "memory": "1"}, None, ""),   # the same quantity written otherwise
    (None, {"cpu": "100m", "memory": "1"}, None,                                 # no Overhead in the RuntimeClass
     "pod rejected: Pod Overhead set without corresponding RuntimeClass defined Overhead"),
    (None, None, None, ""),
])
def test_runtime_class_overhead(pod_fixed, overhead, requests, error):
    s = Scheduler()
    s.add_nodes([make_node("n0")])
    s.add(_rc_overhead(pod_fixed))
    manifest = _overhead_pod(overhead, requests)
    ex = s.explain(manifest)
    assert ex.admission_error == error
    s.add(manifest)
    pod = s.get_pod("default", "p")
    assert s.results[pod.uid].message == error if error else s.results[pod.uid].status != "Error"
    if not error:
        want = {"cpu": 100, "memory": 1} if pod_fixed else {}
        assert dict(pod.overhead) == want and dict(ex.pod.overhead) == want


def test_runtime_class_overhead_counts_on_the_node():
    """The overhead the RuntimeClass gives is the pod's: a node with room for the containers
    but not for the overhead too does not fit it."""
    s = Scheduler()
    s.add_nodes([make_node("n0", cpu="1")])
    s.add(_rc_overhead({"cpu": "250m"}))
    manifest = _overhead_pod(None, {"cpu": "900m"})
    ex = s.explain(manifest)
    assert ex.admission_error == "" and ex.feasible == []
    s.add(manifest)
    s.run()
    r = s.results[s.get_pod("default", "p").uid]
    assert r.status == "Unschedulable" and "Insufficient cpu" in r.message


def test_runtime_class_overhead_is_validated():
    from fastsched.api.validation import ValidationError

    with pytest.raises(ValidationError, match=r"overhead.limits\[cpu\]: Invalid value: \"-1\""):
        Scheduler().add(_rc_overhead({"cpu": "-1"}))


# pkg/util/tolerations TestMergeTolerations' tolerations and table
_TOL = {
    "all": {"operator": "Exists"},
    "foo-nosched": {"key": "foo", "operator": "Exists", "effect": "NoSchedule"},
    "foo-bar-nosched": {"key": "foo", "operator": "Equal", "value": "bar", "effect": "NoSchedule"},
    "foo-baz-nosched": {"key": "foo", "operator": "Equal", "value": "baz", "effect": "NoSchedule"},
    "faz-baz-nosched": {"key": "faz", "operator": "Equal", "value": "baz", "effect": "NoSchedule"},
    "foo-prefnosched": {"key": "foo", "operator": "Exists", "effect": "PreferNoSchedule"},
    "foo-noexec-10": {"key": "foo", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 10},
}


def _tols(names):
    return tuple(Toleration(t.get("key", ""), t["operator"], t.get("value", ""), t.get("effect", ""),
                            t.get("tolerationSeconds")) for t in (_TOL[n] for n in names))


@pytest.mark.parametrize("a,b,expected", [
    (["foo-bar-nosched", "faz-baz-nosched", "foo-noexec-10"], ["foo-prefnosched", "foo-baz-nosched"],
     ["foo-bar-nosched", "faz-baz-nosched", "foo-noexec-10", "foo-prefnosched", "foo-baz-nosched"]),  # disjoint
    (["foo-bar-nosched", "faz-baz-nosched", "foo-noexec-10"], ["foo-bar-nosched", "faz-baz-nosched", "foo-noexec-10"],
     ["foo-bar-nosched", "faz-baz-nosched", "foo-noexec-10"]),                                       # duplicate
    (["foo-bar-nosched", "foo-baz-nosched"], ["foo-nosched", "faz-baz-nosched"],
     ["foo-nosched", "faz-baz-nosched"]),                                                            # merge redundant
    (["foo-bar-nosched", "foo-baz-nosched", "foo-noexec-10"], ["all"], ["all"]),                     # merge all
    (["all"], ["foo-bar-nosched", "foo-baz-nosched", "foo-noexec-10"], ["all"]),                     # merge into all
])
def test_merge_tolerations(a, b, expected):
    from fastsched.api.runtimeclass import merge_tolerations

    assert merge_tolerations(_tols(a), _tols(b)) == _tols(expected)


def _rc_scheduling(node_selector=None, tolerations=None) -> dict:
    rc = {"apiVersion": "node.k8s.io/v1", "kind": "RuntimeClass", "metadata": {"name": "foo"}, "handler": "bar"}
    if node_selector is not None or tolerations is not None:
        rc["scheduling"] = {k: v for k, v in (("nodeSelector", node_selector), ("tolerations", tolerations)) if v is not None}
    return rc


_FOO_BAR = {"key": "foo", "operator": "Equal", "value": "bar", "effect": "NoSchedule"}
_FIZZ_BUZZ = {"key": "fizz", "operator": "Equal", "value": "buzz", "effect": "NoSchedule"}


# TestSetScheduling's table: the pod's nodeSelector and tolerations after admission, or the refusal
@pytest.mark.parametrize("rc_selector,rc_tolerations,pod_selector,pod_tolerations,want_selector,want_tolerations,error", [
    (None, None, {"foo": "bar"}, [_FOO_BAR], {"foo": "bar"}, [_FOO_BAR], ""),               # nil scheduling
    ({"foo": "conflict"}, None, {"foo": "bar"}, [], None, None,                            # conflict node selector
     "conflict: runtimeClass.scheduling.nodeSelector[foo] = conflict; pod.spec.nodeSelector[foo] = bar"),
    ({"foo": "bar"}, None, None, None, {"foo": "bar"}, [], ""),                              # nil node selector
    ({"foo": "bar"}, None, {"foo": "bar"}, [], {"foo": "bar"}, [], ""),                       # the same key value
    ({"fizz": "buzz"}, None, {"foo": "bar"}, [], {"foo": "bar", "fizz": "buzz"}, [], ""),     # another key
    (None, [_FOO_BAR, _FIZZ_BUZZ], {"foo": "bar"}, [_FOO_BAR], {"foo": "bar"}, [_FOO_BAR, _FIZZ_BUZZ], ""),  # tolerations
])
def test_runtime_class_scheduling(rc_selector, rc_tolerations, pod_selector, pod_tolerations, want_selector,
                                  want_tolerations, error):
    s = Scheduler()
    s.add_nodes([make_node("n0")])
    s.add(_rc_scheduling(rc_selector, rc_tolerations))
    manifest = _rc_pod("p", "foo")
    if pod_selector is not None:
        manifest["spec"]["nodeSelector"] = pod_selector
    if pod_tolerations is not None:
        manifest["spec"]["tolerations"] = pod_tolerations
    ex = s.explain(manifest)
    assert ex.admission_error == error
    s.add(manifest)
    pod = s.get_pod("default", "p")
    if error:
        assert s.results[pod.uid].message == error
        return
    for p in (pod, ex.pod):
        assert (None if p.node_selector is None else dict(p.node_selector)) == want_selector
        # (DefaultTolerationSeconds' two, added first as that plugin runs first, set aside)
        own = tuple(t for t in p.tolerations if t not in (NOT_READY, UNREACHABLE))
        assert own == _tols_of(want_tolerations) and len(p.tolerations) == len(own) + 2, p.tolerations


def _tols_of(dicts):
    return tuple(Toleration(t.get("key", ""), t["operator"], t.get("value", ""), t.get("effect", ""),
                            t.get("tolerationSeconds")) for t in dicts)


def test_runtime_class_node_selector_steers_the_pod():
    """The merged nodeSelector is the pod's: only the node with the RuntimeClass's label fits."""
    s = Scheduler()
    s.add_nodes([make_node("n0"), make_node("n1", labels={"runtime": "kata"})])
    s.add(_rc_scheduling({"runtime": "kata"}))
    manifest = _rc_pod("p", "foo")
    assert s.explain(manifest).best_nodes == ["n1"]
    s.add(manifest)
    s.run()
    assert s.results[s.get_pod("default", "p").uid].node_name == "n1"


@pytest.mark.parametrize("scheduling,message", [
    ({"nodeSelector": {"a b": "c"}}, 'scheduling.nodeSelector: Invalid value: "a b"'),
    ({"tolerations": [{"key": "k", "operator": "Exists"}, {"key": "k", "operator": "Exists"}]},
     "scheduling.tolerations[1]: Duplicate value"),
    ({"tolerations": [{"operator": "Equal", "value": "x"}]}, "scheduling.tolerations[0].operator: Invalid value"),
])
def test_runtime_class_scheduling_is_validated(scheduling, message):
    from fastsched.api.validation import ValidationError

    rc = {**_rc_scheduling(), "scheduling": scheduling}
    with pytest.raises(ValidationError) as info:
        Scheduler().add(rc)
    assert message in str(info.value)


# TestValidateOverhead's "No RunntimeClass, Overhead set in pod" (validateOverhead's else branch):
# an overhead on a pod naming no RuntimeClass is refused, an empty one too (``pod.Spec.Overhead !=
# nil``); a null one is unset
@pytest.mark.parametrize("overhead,error", [
    ({"cpu": "100m", "memory": "1"}, "pod rejected: Pod Overhead set without corresponding RuntimeClass defined Overhead"),
    ({}, "pod rejected: Pod Overhead set without corresponding RuntimeClass defined Overhead"),
    (None, ""),
])
def test_overhead_without_runtime_class_is_refused(overhead, error):
    s = Scheduler()
    s.add_nodes([make_node("n0")])
    manifest = _rc_pod("p", None)
    manifest["spec"]["overhead"] = overhead
    assert s.explain(manifest).admission_error == error
    s.add(manifest)
    s.run()
    r = s.results[s.get_pod("default", "p").uid]
    assert (r.status, r.message if error else "") == (("Error", error) if error else ("Scheduled", ""))


def test_overhead_of_a_pod_built_in_code_without_runtime_class_is_refused():
    """make_pod writes a manifest; a pod built in code names no RuntimeClass: its overhead too."""
    s = Scheduler()
    s.add_nodes([make_node("n0")])
    s.add_pod(make_pod("p", overhead={"cpu": "100m"}))
    assert s.results[s.get_pod("default", "p").uid].message == (
        "pod rejected: Pod Overhead set without corresponding RuntimeClass defined Overhead")


# ValidatePodSpec: ``spec.runtimeClassName``, when set (even ""), is a DNS subdomain
# (ValidateRuntimeClassName, NameIsDNSSubdomain)
@pytest.mark.parametrize("name,message", [
    ("Bad_Name", 'spec.runtimeClassName: Invalid value: "Bad_Name": a lowercase RFC 1123 subdomain must consist of'),
    ("", 'spec.runtimeClassName: Invalid value: "": a lowercase RFC 1123 subdomain must consist of'),
    ("a" * 254, "spec.runtimeClassName: Invalid value: \"" + "a" * 254 + "\": must be no more than 253 characters"),
])
def test_runtime_class_name_is_validated(name, message):
    from fastsched.api import Pod
    from fastsched.api.validation import ValidationError

    with pytest.raises(ValidationError) as info:
        Pod.from_manifest(_rc_pod("p", name))
    assert message in str(info.value)
    with pytest.raises(ValidationError):
        Scheduler().add(_rc_pod("p", name))


def test_null_runtime_class_name_is_unset():
    s = Scheduler()
    s.add_nodes([make_node("n0")])
    manifest = _rc_pod("p", None)
    manifest["spec"]["runtimeClassName"] = None
    s.add(manifest)
    assert s.run()[0].node_name == "n0"


# A bound pod came from a cluster: the API server admitted it when it was created (RuntimeClass's
# Handler admits Create only), so its overhead, nodeSelector and tolerations are what it says,
# whether added one by one or in bulk (a dump's pods need not come with the RuntimeClasses)
@pytest.mark.parametrize("classes", [[], [_rc_overhead({"cpu": "250m"})], [_rc_overhead(None)]])
@pytest.mark.parametrize("overhead", [None, {"cpu": "250m"}, {"cpu": "1"}])
@pytest.mark.parametrize("bulk", [False, True])
def test_a_bound_pod_is_not_admitted_again(classes, overhead, bulk):
    s = Scheduler()
    s.add_nodes([make_node("n0", cpu="2")])
    s.add(classes)
    manifest = _overhead_pod(overhead, {"cpu": "500m"})
    manifest["spec"]["nodeName"] = "n0"
    if bulk:
        s.add_pods([manifest])
    else:
        s.add_pod(manifest)
    pod = s.get_pod("default", "p")
    assert dict(pod.overhead) == ({"cpu": int(overhead["cpu"].rstrip("m")) if overhead["cpu"].endswith("m")
                                   else 1000 * int(overhead["cpu"])} if overhead else {})
    assert pod.uid not in s.cluster.admission_errors
    # the node counts the pod as written: 2 cpu minus 500m and its own overhead
    incoming = make_pod("q", requests={"cpu": "1500m"})
    s.add_pod(incoming)
    placed = {r.pod.name: r.node_name for r in s.run()}
    assert placed["q"] == (None if overhead else "n0")


def _pc_pod(name: str, pc: str, **spec) -> dict:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name},
            "spec": {"priorityClassName": pc, "containers": [{"name": "c", "image": "i"}], **spec}}


@pytest.mark.parametrize("name,value", [("system-node-critical", 2000001000),
                                        ("system-cluster-critical", 2000000000)])
def test_the_system_priority_classes_exist_without_being_added(name, value):
    """kube-apiserver creates system-node-critical and system-cluster-critical at start
    (pkg/registry/scheduling/rest AddSystemPriorityClasses, from pkg/apis/scheduling/v1
    systemPriorityClasses), so a pod naming one (a DaemonSet's, kube-proxy's) is admitted with its
    value; it was refused (``no PriorityClass with name system-node-critical was found``)."""
    s = Scheduler()
    s.add_nodes([make_node("n0")])
    s.add(_pc_pod("p", name))
    pod = s.get_pod("default", "p")
    assert pod.priority == value and pod.preemption_policy == "PreemptLowerPriority"
    [r] = s.run()
    assert r.status == "Scheduled", r.message
    pc = s.get_object("PriorityClass", name)
    assert pc is not None and pc.value == value and not pc.global_default


def test_a_system_priority_class_given_in_a_dump_is_the_one_used():
    """A cluster dump lists the system classes too (validated: their values are fixed)."""
    s = Scheduler()
    s.add_nodes([make_node("n0")])
    s.add({"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass",
           "metadata": {"name": "system-cluster-critical"}, "value": 2000000000, "preemptionPolicy": "Never"})
    s.add(_pc_pod("p", "system-cluster-critical"))
    pod = s.get_pod("default", "p")
    assert pod.priority == 2000000000 and pod.preemption_policy == "Never"


def test_a_scenario_pod_may_name_a_system_priority_class():
    """The simulator's scenarios admit the pods they create with the same classes."""
    from fastsched.sim.streams import Priorities

    pod = Priorities([]).admit(make_pod("p").replace(priority_class_name="system-node-critical"), "arrivals[0]")
    assert pod.priority == 2000001000


def _pc(name: str, value: int, default: bool = False) -> dict:
    return {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": name},
            "value": value, "globalDefault": default}


def test_a_second_global_default_priority_class_is_refused():
    """The Priority admission plugin's validatePriorityClass: `PriorityClass low is already marked
    as default. Only one default can exist` (it was taken, and pods got the first one's value)."""
    from fastsched.api import ManifestError

    s = Scheduler()
    s.add(_pc("low", 10, default=True))
    with pytest.raises(ManifestError) as err:
        s.add(_pc("high", 20, default=True))
    assert str(err.value) == ('PriorityClass high: globalDefault: priorityclasses.scheduling.k8s.io "high" is '
                              'forbidden: PriorityClass low is already marked as default. Only one default can exist')
    # the default itself created again: the admission runs before the registry's AlreadyExists,
    # and on Create any default refuses (reliab11); updating it is no conflict
    with pytest.raises(ManifestError, match='"low" is forbidden: PriorityClass low is already marked as default'):
        s.add(_pc("low", 10, default=True))
    s.update_object(_pc("low", 10, default=True))
    s.add(_pc("other", 30))
    s.add_pod(make_pod("p"))
    assert s.get_pod("default", "p").priority == 10


def test_with_priority_admission_off_several_defaults_give_the_lowest_value():
    """upstream's getDefaultPriorityClass (several defaults by a race): the lowest value, as the
    PodGroups' admission here already picked; pods took the first added."""
    s = Scheduler()
    s.cluster.priority_admission = False
    s.add([_pc("high", 20, default=True), _pc("low", 10, default=True)])
    s.cluster.priority_admission = True
    s.add_pod(make_pod("p"))
    assert s.get_pod("default", "p").priority == 10


# -- the system PriorityClasses as the API server lists them (reliab10) ------------------------------
SYSTEM_CLASSES = {"system-node-critical": 2000001000, "system-cluster-critical": 2000000000}


def test_the_system_priority_classes_are_listed_as_the_api_server_lists_them():
    """``kubectl get priorityclasses`` on any cluster shows the two system classes (created by
    kube-apiserver at start); ``objects("PriorityClass")`` listed only the added ones."""
    s = Scheduler()
    s.add(_pc("low", 10))
    listed = s.objects("PriorityClass")
    assert [m["metadata"]["name"] for m in listed] == ["system-node-critical", "system-cluster-critical", "low"]
    for m in listed[:2]:
        assert m["apiVersion"] == "scheduling.k8s.io/v1" and m["kind"] == "PriorityClass"
        assert m["value"] == SYSTEM_CLASSES[m["metadata"]["name"]]
        assert m["preemptionPolicy"] == "PreemptLowerPriority" and not m.get("globalDefault")
        assert m["description"].startswith("Used for system critical pods")
    assert [pc.name for pc in s.cluster.list_objects("PriorityClass")] == [m["metadata"]["name"] for m in listed]


def test_a_dump_holding_the_system_classes_lists_each_once_and_reloads():
    """A dump (``kubectl get priorityclasses -o yaml``) holds them: each is listed once, as
    given, and what objects() gives loads into a new Scheduler again."""
    s = Scheduler()
    s.add(_pc("system-cluster-critical", 2000000000))
    s.add(_pc("low", 10))
    listed = s.objects("PriorityClass")
    names = [m["metadata"]["name"] for m in listed]
    assert names == ["system-node-critical", "system-cluster-critical", "low"]
    again = Scheduler()
    for m in listed:
        again.add(m)
    assert [m["metadata"]["name"] for m in again.objects("PriorityClass")] == names
    assert {pc.name: pc.value for pc in again.cluster.list_objects("PriorityClass")} == {**SYSTEM_CLASSES, "low": 10}


@pytest.mark.parametrize("added", [False, True], ids=["built-in", "from-a-dump"])
@pytest.mark.parametrize("name", sorted(SYSTEM_CLASSES))
def test_a_system_priority_class_cannot_be_deleted(name, added):
    """pkg/registry/scheduling/priorityclass/storage REST.Delete: Forbidden, by name, whether the
    dump held it or not; the class stays, and pods naming it are still admitted."""
    from fastsched.api import ManifestError

    s = Scheduler()
    s.add_nodes([make_node("n0")])
    if added:
        s.add(_pc(name, SYSTEM_CLASSES[name]))
    with pytest.raises(ManifestError) as err:
        s.delete_object("PriorityClass", name)
    assert str(err.value).endswith(f'priorityclasses.scheduling.k8s.io "{name}" is forbidden: this is a system '
                                   "priority class and cannot be deleted")
    assert s.get_object("PriorityClass", name) is not None
    s.add(_pc_pod("p", name))
    assert s.get_pod("default", "p").priority == SYSTEM_CLASSES[name]


def test_an_added_priority_class_can_be_deleted():
    """Deleting an added class worked nowhere (``priorityclasses.scheduling.k8s.io "low" not
    found``); now it goes: pods admitted with it keep their priority, later ones are refused as
    naming no class, and a global default deleted is no longer given."""
    from fastsched.errors import NotFoundError

    s = Scheduler()
    s.add_nodes([make_node("n0")])
    s.add(_pc("low", 10, default=True))
    s.add(_pc_pod("a", "low"))
    s.delete_object("PriorityClass", "low")
    assert s.get_object("PriorityClass", "low") is None
    assert "low" not in [m["metadata"]["name"] for m in s.objects("PriorityClass")]
    assert s.get_pod("default", "a").priority == 10
    s.add(_pc_pod("b", "low"))
    s.add_pod(make_pod("c"))
    assert s.get_pod("default", "c").priority is None  # the default went with it
    results = {r.pod.name: r for r in s.run()}
    assert results["b"].status == "Error" and results["b"].message == "no PriorityClass with name low was found"
    assert results["a"].status == results["c"].status == "Scheduled"
    with pytest.raises(NotFoundError, match='priorityclasses.scheduling.k8s.io "low" not found'):
        s.delete_object("PriorityClass", "low")


# -- NamespaceLifecycle (reliab10) -----------------------------------------------------------------------
TERMINATING = "unable to create new content in namespace {ns} because it is being terminated"


def _ns(name: str, terminating: bool = False, *, by: str = "phase") -> dict:
    m: dict = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}}
    if terminating and by == "phase":
        m["status"] = {"phase": "Terminating"}
    elif terminating:
        m["metadata"]["deletionTimestamp"] = "2026-01-01T00:00:00Z"
    return m


def _ns_pod(name: str, ns: str, **spec) -> dict:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": ns},
            "spec": {"containers": [{"name": "c", "image": "i", "resources": {"requests": {"cpu": "10m"}}}], **spec}}


@pytest.mark.parametrize("by", ["phase", "deletionTimestamp"])
def test_a_new_pod_in_a_terminating_namespace_is_refused(by):
    """The NamespaceLifecycle admission (k8s.io/apiserver lifecycle.Admit, Create): a pod created
    in a namespace being terminated is refused in its words; many pods, in several namespaces,
    through run() and explain alike; the pods of live namespaces, of namespaces never added and
    the bound pods of the terminating one (created before it began terminating) are unaffected."""
    s = Scheduler()
    s.add_nodes([make_node(f"n{i}", cpu="4") for i in range(3)])
    s.add([_ns("live"), _ns("gone", True, by=by)])
    s.add(_ns_pod("old", "gone", nodeName="n0"))
    s.add([_ns_pod(f"p{i}", ("live", "gone", "never-added", "default")[i % 4]) for i in range(60)])
    results = {r.pod.name: r for r in s.run()}
    for i in range(60):
        r = results[f"p{i}"]
        if i % 4 == 1:
            want = f'pods "p{i}" is forbidden: ' + TERMINATING.format(ns="gone")
            assert r.status == "Error" and r.message == want
            assert s.explain(r.pod).admission_error == want
            ex = s.explain(_ns_pod(f"new{i}", "gone"))  # not created yet: the same refusal, no verdict
            assert ex.admission_error == f'pods "new{i}" is forbidden: ' + TERMINATING.format(ns="gone")
            assert ex.feasible == [] and ex.filter == {}
        else:
            assert r.status == "Scheduled", r.message
    assert s.get_pod("gone", "old").node_name == "n0"


def test_a_namespace_becoming_terminating_refuses_later_pods_only():
    """A namespace re-added as terminating refuses the pods created after; re-added active (a
    dump of a later time: the name reused) admits them again."""
    s = Scheduler()
    s.add_nodes([make_node("n0", cpu="4")])
    s.add(_ns("team"))
    s.add(_ns_pod("before", "team"))
    s.add(_ns("team", True))
    s.add(_ns_pod("during", "team"))
    s.add(_ns("team"))
    s.add(_ns_pod("after", "team"))
    results = {r.pod.name: r for r in s.run()}
    assert results["before"].status == results["after"].status == "Scheduled"
    assert results["during"].status == "Error"
    assert results["during"].message.endswith(TERMINATING.format(ns="team"))


def test_a_controllers_pods_in_a_terminating_namespace_are_refused():
    """The ReplicaSet controller's creates go through the same admission."""
    s = Scheduler()
    s.add_nodes([make_node("n0", cpu="4")])
    s.add(_ns("gone", True))
    s.add({"apiVersion": "apps/v1", "kind": "ReplicaSet", "metadata": {"name": "rs", "namespace": "gone"},
           "spec": {"replicas": 3, "selector": {"matchLabels": {"a": "b"}},
                    "template": {"metadata": {"labels": {"a": "b"}},
                                 "spec": {"containers": [{"name": "c", "image": "i"}]}}}})
    results = s.run()
    assert len(results) == 3
    assert all(r.status == "Error" and r.message.endswith(TERMINATING.format(ns="gone")) for r in results)
    assert s.cache.pod_count() == 0


def test_a_forks_terminating_namespaces_are_its_own_and_a_transaction_reverts_them():
    s = Scheduler()
    s.add_nodes([make_node("n0", cpu="4")])
    s.add(_ns("a"))
    f = s.fork()
    f.add(_ns("a", True))
    s.add(_ns_pod("x", "a"))
    f.add(_ns_pod("x", "a"))
    assert [r.status for r in s.run()] == ["Scheduled"]
    assert [r.status for r in f.run()] == ["Error"]
    with s.transaction():
        s.add(_ns("c", True))
    s.add(_ns_pod("z", "c"))
    assert {r.pod.name: r.status for r in s.run()} == {"x": "Scheduled", "z": "Scheduled"}


# -- a PriorityClass created twice or updated (reliab11) ---------------------------------------------
def test_a_priority_class_created_again_is_already_exists_and_keeps_its_value():
    """The registry refuses a create of a taken name (AlreadyExists); the class replaced itself,
    so a later pod got the new value while the ones before kept the old."""
    from fastsched.api import ManifestError

    s = Scheduler()
    s.add(_pc("high", 100))
    for again in (_pc("high", 5), _pc("high", 100)):
        with pytest.raises(ManifestError) as err:
            s.add(again)
        assert str(err.value) == 'PriorityClass high: priorityclasses.scheduling.k8s.io "high" already exists'
    s.add(_pc_pod("p", "high"))
    assert s.get_pod("default", "p").priority == 100
    assert [(m["metadata"]["name"], m["value"]) for m in s.objects("PriorityClass")][-1] == ("high", 100)


def test_a_priority_class_update_may_not_change_its_value_or_preemption_policy():
    """pkg/apis/scheduling/validation ValidatePriorityClassUpdate: ``value`` is Forbidden to
    change, ``preemptionPolicy`` immutable; the rest (description, globalDefault) updates. There
    was no update path for a PriorityClass (NotFound)."""
    from fastsched.api.validation import ValidationError
    from fastsched.errors import NotFoundError

    s = Scheduler()
    s.add(_pc("high", 100))
    with pytest.raises(ValidationError) as err:
        s.update_object(_pc("high", 7))
    assert str(err.value) == ('PriorityClass.scheduling.k8s.io "high" is invalid: value: Forbidden: may not be '
                              'changed in an update.')
    never = {**_pc("high", 7), "preemptionPolicy": "Never"}
    with pytest.raises(ValidationError) as err:
        s.update_object(never)
    assert str(err.value) == ('PriorityClass.scheduling.k8s.io "high" is invalid: [value: Forbidden: may not be '
                              'changed in an update., preemptionPolicy: Invalid value: "Never": field is immutable]')
    with pytest.raises(NotFoundError, match='priorityclasses.scheduling.k8s.io "nope" not found'):
        s.update_object(_pc("nope", 1))
    s.update_object({**_pc("high", 100, default=True), "description": "now the default"})
    assert s.get_object("PriorityClass", "high").description == "now the default"
    s.add(make_pod("p"))  # the default's value, once it is the default
    assert s.get_pod("default", "p").priority == 100
    # a second default by update is the admission's refusal, as on create
    s.add(_pc("low", 1))
    with pytest.raises(Exception, match="PriorityClass high is already marked as default"):
        s.update_object(_pc("low", 1, default=True))
